/*
 * One parsed transcript line, as both format parsers produce it, and the
 * helpers they share (UTF-8 repair, bounded text, tool-input summaries).
 * Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_PARSE_H
#define MCPAGE_SYNC_PARSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SYNC_TEXT_MAX       (1024u * 1024u) /* bytes of message text stored */
#define SYNC_TOOL_INPUT_MAX 200             /* bytes of a tool-input summary */
#define SYNC_TITLE_MAX      200             /* bytes of a session title */
#define SYNC_TOOL_IDS       64              /* tool call ids remembered per file */

/* Where a session title came from; a higher rank replaces a lower one,
 * the same rank the earlier one (the newest title of a kind wins). */
enum sync_title_rank {
    SYNC_TITLE_PROMPT = 0,  /* the first user prompt */
    SYNC_TITLE_SUMMARY = 1, /* a summary line (Claude) */
    SYNC_TITLE_AI = 2,      /* a title the agent generated (Claude ai-title) */
    SYNC_TITLE_CUSTOM = 3   /* a title the user set (Claude /rename: custom-title) */
};

enum sync_record_kind {
    SYNC_SKIP = 0, /* nothing to store (bookkeeping, unknown type) */
    SYNC_MESSAGE,  /* a message, plus any session facts */
    SYNC_META      /* session facts only */
};

/*
 * What one model call cost, as a transcript line records it (docs/usage.md
 * says where each source keeps it and how calls are counted once).
 * Token counts are >= 0; `present` is 0 when the line records no usage.
 */
typedef struct sync_usage {
    int present;
    int64_t input, output, cache_creation, cache_read, reasoning;
    double cost_usd; /* with cost_given: the cost the agent itself reported */
    int cost_given;
    char *key;   /* dedupe key: message id + request id, owned or NULL */
    char *model; /* owned or NULL */
    /* beyond the brief's names */
    int64_t cache_creation_1h; /* of cache_creation: 1-hour cache writes (Anthropic) */
    int sidechain;             /* a Claude sidechain line: loses to a main-chain copy */
    char *timestamp;           /* owned: the call's time when the line has its own, or NULL */
    int key_per_session;       /* the key names a call within its session only (Codex) */
    int model_from_session;    /* the line names no model: the session's latest is the call's */
    /* the counts are the session's running totals for `model` (Copilot
       CLI's session.shutdown), not one call: what they grew by since the
       session's calls of that model so far is stored, as `requests`
       calls (the requests made in between; at least 1) */
    int cumulative;
    int64_t requests; /* with cumulative: the running count of requests, or 0 */
} sync_usage;

typedef struct sync_record {
    int kind;
    /* the message (SYNC_MESSAGE) */
    const char *role; /* static: "user", "assistant", "system", "tool" */
    char *text;       /* owned, capped at SYNC_TEXT_MAX */
    char *tool_name;  /* owned or NULL */
    char *tool_input; /* owned summary or NULL */
    char *call_id;    /* owned: the tool call id (calls and results) or NULL */
    int is_error;
    char *timestamp; /* owned or NULL */
    int is_prompt;   /* a real user prompt: a title candidate */
    /* session facts seen on this line (owned, NULL = not seen) */
    char *cwd;
    char *model;
    char *git_branch;
    char *summary;  /* a title line: wins over prompts (see title_rank) */
    int title_rank; /* with summary: SYNC_TITLE_SUMMARY, _AI or _CUSTOM */
    char *parent_session_id;
    char *meta_session_id; /* the session a facts line describes, when it names one */
    int from_event;        /* a Codex UI event (user_message, agent_message) */
    int side;              /* enum sync_side: whose words a Codex message holds */
    uint64_t words;        /* with side: hash of the words typed or said (images and
                              separators aside), to pair an item with its event */
    char *git_origin;      /* the repository URL a Codex session_meta names */
    sync_usage usage;      /* the model call this line records (any kind, SYNC_SKIP too) */
    json_t *calls;         /* the tool calls of the line, whole: [{"name","id","args"}, ...] (a
                              reference, for sync_edits_put), or NULL */
} sync_record;

/* Whose words a Codex message carries, for finding UI-event copies. */
enum sync_side {
    SYNC_SIDE_NONE = 0, /* not a conversation message (tool traffic, developer text) */
    SYNC_SIDE_USER,     /* a user message item or a user_message event */
    SYNC_SIDE_AGENT     /* an assistant message item or an agent_message event */
};

/*
 * Codex writes a message twice in some versions (a response item and a UI
 * event with the same text), once in others (Codex Desktop 0.128 writes the
 * user's prompts only as user_message events, events-only threads write
 * events only). This memory decides per message: a message is a copy when
 * the same turn already holds the same words from the other kind (item vs
 * event) on the same side, not yet paired. A user-side entry lives until
 * the agent answers (an assistant or tool message); an agent-side entry
 * until the user speaks. The check reads only lines before the message, so
 * a sync that stops between the two finds the same answer when it resumes
 * (see codex_copies_replay in sync.c).
 */
#define SYNC_COPIES_MAX 8 /* unpaired messages remembered per side */

typedef struct sync_copy {
    uint64_t hash;  /* sync_record.words */
    int from_event; /* which kind wrote it */
} sync_copy;

typedef struct sync_copies {
    sync_copy user[SYNC_COPIES_MAX], agent[SYNC_COPIES_MAX];
    int nuser, nagent;
    int64_t user_clears, agent_clears; /* times each side was emptied */
} sync_copies;

/* 1 when `r` (a parsed Codex line) is a copy of a message already kept;
 * else 0, and `r` is remembered when it is a message. */
int sync_codex_is_copy(sync_copies *c, const sync_record *r);

/* Remembers tool call ids to name the tool in its result. */
typedef struct sync_tool_ids {
    char id[SYNC_TOOL_IDS][64];
    char name[SYNC_TOOL_IDS][64];
    unsigned next;
} sync_tool_ids;

void sync_record_clear(sync_record *r);
/* Keeps a tool call's arguments whole on the record (r->calls), for the
 * file edits index (sync_edits.c); `args` gains a reference. Out of
 * memory, the call is not kept. */
void sync_record_keep_call(sync_record *r, const char *name, const char *call_id, json_t *args);
void sync_usage_clear(sync_usage *u);
/* A count from a JSON value: a non-negative integer (or a whole real), or
 * 0 for anything else (absent, negative, a string, past 2^53). */
int64_t sync_json_count(json_t *v);

/* Each parser: 0 (r filled, maybe SYNC_SKIP) or MCPAGE_EPARSE with a
 * short reason in `why`. `line` is valid UTF-8 (see sync_utf8_repair). */
int sync_claude_parse_line(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                           char *why, size_t whylen);
int sync_codex_parse_line(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                          char *why, size_t whylen);

/* Length of the valid UTF-8 sequence at p (1..4, avail bytes there), or
 * 0 when invalid (overlong, a surrogate, past U+10FFFF, cut short). */
size_t sync_utf8_seq(const unsigned char *p, size_t avail);
/* When `in` is not valid UTF-8, a malloc'd copy with each bad sequence
 * replaced by U+FFFD (in *out, length *outlen); else *out = NULL. */
int sync_utf8_repair(const char *in, size_t len, char **out, size_t *outlen);

/* Growable text bounded by SYNC_TEXT_MAX (cut at a UTF-8 boundary). */
typedef struct sync_text {
    char *buf;
    size_t len, cap;
    size_t dropped; /* bytes not kept past the cap */
    int oom;
} sync_text;

void sync_text_add(sync_text *t, const char *s, size_t n);
void sync_text_adds(sync_text *t, const char *s);
/* Adds a separator when the text is not empty. */
void sync_text_sep(sync_text *t);
/* The finished string (owned by the caller), with a truncation note. */
char *sync_text_finish(sync_text *t);

/* A copy of at most `max` bytes, cut at a UTF-8 boundary, newlines and
 * tabs turned into spaces, trimmed. */
char *sync_short_copy(const char *s, size_t max);
/*
 * The session title a user message gives, or NULL when it is no real
 * request: text an agent injects on the user's side (Claude Code's
 * compaction prompt "Your task is to create a detailed summary ...", its
 * continuation summary, a sub-agent's "Warmup", Codex's environment and
 * AGENTS.md blocks, Gemini's session context, ...). Codex Desktop's
 * "# Files mentioned by the user:" preamble gives the request after its
 * "## My request...:" heading. At most SYNC_TITLE_MAX bytes, malloc'd.
 */
char *sync_title_of_prompt(const char *text);
/* A one-line summary of a tool's input (object or JSON string). */
char *sync_tool_summary(json_t *input);
/* A tool call as a message: text `[tool_use NAME] summary`, its tool
 * name, input summary (of `args`) and call id, role `role`, time a copy
 * of `ts` (NULL or "" = none). */
void sync_record_call(sync_record *r, const char *role, const char *name, const char *call_id,
                      json_t *args, const char *ts);
/* Adds the text of a content value: a string, or its blocks (strings,
 * objects with `text`, images as `[image]`), one after another. */
void sync_text_content(sync_text *t, json_t *content);
/* Milliseconds since the epoch as ISO 8601 UTC with milliseconds
 * (malloc'd), or NULL when not after 1970 and before 10000. */
char *sync_iso_ms(double ms);
/* A JSON string of n bytes, those that are not UTF-8 and NULs as U+FFFD
 * (jansson cannot write the first, readers reject the second); NULL when
 * out of memory. */
json_t *sync_json_text(const char *p, size_t n);
/* String value of a key, or NULL. */
const char *sync_json_str(json_t *obj, const char *key);
void sync_tool_ids_put(sync_tool_ids *ids, const char *id, const char *name);
const char *sync_tool_ids_get(const sync_tool_ids *ids, const char *id);
/* 1 when `text` starts with `prefix` after leading whitespace. */
int sync_starts_with(const char *text, const char *prefix);

#endif
