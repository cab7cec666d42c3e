/*
 * The archive store: a backend-neutral interface to the conversations the
 * sync module collects and the tools serve.
 *
 * A `store` is an opaque handle over one backend connection, chosen by the
 * spec given to store_open(): a file path opens SQLite (store/sqlite/);
 * a "postgres://..." or "postgresql://..." URL opens PostgreSQL
 * (store/postgres/; opening is cheap there: connections are pooled per
 * process). Nothing here names SQL or a database library: tools and sync
 * see only these types.
 *
 * Threads: one handle per thread. Readers open their own handle with
 * STORE_OPEN_READONLY; one writer (sync) and many readers may work at once.
 *
 * Lists. Every list query takes a store_page: either a keyset position
 * (`after`, the key of the last row already seen; the page starts strictly
 * after it, in a total order that ends in a unique key, so a page costs the
 * same at any depth) or an `offset`. Each returned row carries its own key,
 * which a tool can put in a cursor. The matching *_count function returns
 * the exact number of rows for the same filter.
 *
 * Ownership: result structs own their strings (malloc'd, NUL-terminated);
 * free them with the matching *_free function. Optional strings are NULL
 * when unknown. Timestamps are ISO 8601 UTC text ("2025-01-02T03:04:05Z"
 * style, as the agents write them); date filters take "YYYY-MM-DD" or a
 * full timestamp: `after` is inclusive, `before` exclusive.
 *
 * Errors: 0 or a negative MCPAGE_E* code. store_errmsg() gives a human
 * message for the last failure on that handle. A search query the engine
 * rejects is MCPAGE_EPARSE (never MCPAGE_ESTORE), with a message fit to
 * show a user.
 */
#ifndef MCPAGE_STORE_STORE_H
#define MCPAGE_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mcpage/mcpage.h>

typedef struct store store;

/* Limits every caller can rely on. */
#define STORE_KEY_PARTS    3                     /* parts of a keyset position */
#define STORE_KEY_TEXT_MAX 255                   /* bytes of one text key part (ids are shorter) */
#define STORE_ID_MAX       200                   /* bytes of a session id */
#define STORE_LIMIT_MAX    1000                  /* rows of one page */
#define STORE_QUERY_MAX    4096                  /* bytes of a search query */
#define STORE_RAW_READ_MAX (16u * 1024u * 1024u) /* bytes of one raw read */

/*
 * What one search may ask of the engine (docs/store.md, "Bounded work").
 * Repeated terms count once (`c* c* c*` is `c*`). Each prefix term
 * makes the engine merge the index entries of every word it expands to,
 * on every probe, so prefixes have their own, smaller cap. Past either
 * cap, store_search and store_search_count answer MCPAGE_EINVAL with a
 * message saying what to drop.
 */
#define STORE_QUERY_TERMS_MAX    16 /* distinct words and phrases of a search query */
#define STORE_QUERY_PREFIXES_MAX 4  /* distinct prefix terms (`word*`) among them */
/* Milliseconds of work the tools allow one search call (store_budget_set). */
#define STORE_QUERY_BUDGET_MS 5000

/* ---- keyset positions ---------------------------------------------- */

typedef enum store_key_type {
    STORE_KEY_NONE = 0,
    STORE_KEY_INT,  /* i */
    STORE_KEY_REAL, /* r (relevance scores) */
    STORE_KEY_TEXT  /* s */
} store_key_type;

typedef struct store_key_part {
    store_key_type type;            /* which of the fields below is set */
    int64_t i;                      /* STORE_KEY_INT */
    double r;                       /* STORE_KEY_REAL */
    char s[STORE_KEY_TEXT_MAX + 1]; /* STORE_KEY_TEXT, NUL-terminated */
} store_key_part;

/*
 * A position in one list's order: a plain value, copy it freely. The
 * parts, by list (the store checks them and rejects a mismatch):
 *   projects RECENT (last_activity TEXT, id INT)   NAME (name TEXT, id INT)
 *            SIZE (message_count INT, id INT)
 *   sessions NEWEST/OLDEST (started_at TEXT, session_id TEXT)
 *   search   RELEVANCE (rank REAL, -message_id INT: equal ranks go newest
 *            stored first; a second part above 0 is a position in the
 *            order before 0.2.0, oldest first: store_key_relevance_old)
 *            NEWEST/OLDEST (timestamp TEXT, message_id INT)
 */
typedef struct store_key {
    int nparts;                           /* 0 = no position (start) */
    store_key_part part[STORE_KEY_PARTS]; /* in the list's sort order */
} store_key;

/* One page request. `after` with nparts > 0 wins over `offset`. */
typedef struct store_page {
    const store_key *after; /* keyset: start after this row, or NULL */
    int64_t offset;         /* rows to skip when `after` is NULL */
    int64_t limit;          /* 1..STORE_LIMIT_MAX rows */
    /* Rows the caller shows, when fewer than limit: the rows past them
     * only say that more exist (a page's limit + 1), so a search cuts
     * them no snippet and counts no line (SQLite). 0: every row. */
    int64_t shown;
} store_page;

/* ---- opening ------------------------------------------------------- */

enum store_open_flags {
    STORE_OPEN_READONLY = 0, /* a reader: the store must exist */
    STORE_OPEN_WRITE = 1     /* the writer: created and migrated if needed */
};

/* Opens the store named by `spec` (a file path, or "postgres://..."). */
int store_open(const char *spec, int flags, store **out);
/* The same, with a human message in `err` (up to errlen bytes) on failure. */
int store_open_msg(const char *spec, int flags, store **out, char *err, size_t errlen);
void store_close(store *s);
/* The message for the last failure on `s`; "" when none. Never NULL. */
const char *store_errmsg(const store *s);
/* The backend's name: "sqlite" or "postgres". */
const char *store_backend_name(const store *s);
/* 1 when `spec` names a server store (a postgres:// URL), not a file. */
int store_spec_is_url(const char *spec);
/* `spec` fit to print or log: a URL's password becomes "***". */
void store_spec_display(const char *spec, char *out, size_t n);
/* 0 when the store answers (a health check; reconnects if it can), else
 * MCPAGE_ESTORE with "the store is unavailable (...); retry shortly". */
int store_ping(store *s);
/*
 * A thorough check of the store's own files, for `mcpage stats`: SQLite
 * reads every page (PRAGMA quick_check; seconds on a large store); a
 * server store has nothing to check here. 0 when sound, else
 * MCPAGE_ESTORE with what is wrong and how to recover in store_errmsg().
 * A store found damaged (here or by any call that met the damage) takes
 * no more writes: store_begin fails the same way.
 */
int store_check(store *s);
/*
 * A writer's work for later readers, done when it has time (after a sync,
 * outside its transactions): SQLite keeps the first relevance rows of its
 * commonest words, so a fresh process reads them instead of walking every
 * match (docs/store.md). Stops early when the budget's stop function
 * answers non-zero (store_budget_set). 0 or a negative status; a server
 * store has nothing to do.
 */
int store_tidy(store *s);
/*
 * Whether long work (a sync's parsing, a tidy) may take a second thread:
 * MCPAGE_SYNC_THREADS=1 says no, =2 yes (even on one core, for tests),
 * else when the machine has two cores or more.
 */
int store_second_thread(void);
/* Closes the idle connections pooled for server stores (tests, shutdown);
 * handles still open are not affected. */
void store_pool_drain(void);

/* ---- bounded work --------------------------------------------------- */

/* Answers non-zero when the caller no longer wants the result (a
 * cancelled request). Called from the thread running the statement. */
typedef int (*store_stop_fn)(void *ud);

/*
 * Bounds every later statement on `s` until store_budget_clear(): one
 * running past `budget_ms` milliseconds from now (0: no deadline) stops
 * with MCPAGE_ERANGE, and one whose `stop(ud)` answers non-zero (NULL: no
 * such check) stops with MCPAGE_ECANCELED; store_errmsg() says which.
 * SQLite checks both from a progress handler, PostgreSQL cancels the
 * running statement (it is polled every few milliseconds).
 */
void store_budget_set(store *s, int64_t budget_ms, store_stop_fn stop, void *ud);
void store_budget_clear(store *s);

/* ---- who reads: owners on a shared store --------------------------- */

/* Longest owner name ("user@machine"), and most owners and shared
 * projects one viewer holds. */
#define STORE_OWNER_MAX         128
#define STORE_VIEW_OWNERS_MAX   8
#define STORE_VIEW_PROJECTS_MAX 32

/* A handle's viewer as the store applies it (store_backend.h). */
struct store_view;

/*
 * Who reads through a handle: the sessions whose owner is one of
 * `owners`, plus every session of the projects in `projects` (each a
 * project name or path, as the tools' `project` filter takes it; one
 * that names no project is skipped). Sessions without an owner (synced
 * before owners were kept) are seen by no viewer.
 */
typedef struct store_viewer {
    const char *const *owners; /* 1..STORE_VIEW_OWNERS_MAX owner names */
    size_t nowners;
    const char *const *projects; /* 0..STORE_VIEW_PROJECTS_MAX */
    size_t nprojects;
} store_viewer;

/*
 * Restricts every later read of `s` to what `v` may see, in the SQL of
 * each list, count, read and total; NULL lifts it (everything, as a local
 * user or an admin sees). A hidden session reads as a missing one.
 * MCPAGE_EINVAL for an owner that is not a valid name
 * (store_owner_valid), or too many owners or projects.
 */
int store_viewer_set(store *s, const store_viewer *v);
/* True for 1..STORE_OWNER_MAX bytes of letters, digits and . _ - + @. */
int store_owner_valid(const char *owner);
/* This machine's default owner, "login@hostname" (invalid bytes become
 * '_'), into buf. */
void store_owner_default(char *buf, size_t cap);
/*
 * The id under which a sync by `owner` stores its agent's session `id`
 * (into out, STORE_ID_MAX + 1 bytes): `id` itself, unless a session `id`
 * of another owner is stored (two machines' agents gave the same id: a
 * copied folder, a synced home); then `id@owner` (an id too long for it
 * keeps its first bytes and a hash of the rest). Sessions without an
 * owner are anyone's, as is every id when `owner` is NULL. MCPAGE_EINVAL
 * when `id@owner` too is held by another owner (only a crafted store).
 */
int store_session_key(store *s, const char *owner, const char *id, char *out);

/* ---- projects ------------------------------------------------------ */

typedef enum store_project_sort {
    STORE_PROJECTS_RECENT = 0, /* last activity, newest first (default) */
    STORE_PROJECTS_NAME,       /* name A-Z */
    STORE_PROJECTS_SIZE        /* message count, largest first */
} store_project_sort;

typedef struct store_project_filter {
    const char *name_contains; /* substring of the name, or NULL */
    const char *source;        /* "claude" | "codex" | NULL */
    store_project_sort sort;
    const struct store_view *view; /* set by the store: the handle's viewer (store_viewer_set) */
} store_project_filter;

typedef struct store_project {
    int64_t id;    /* stable row id */
    char *name;    /* basename of the path */
    char *path;    /* the agent's working directory */
    char *sources; /* "claude", "codex" or "claude,codex" */
    int64_t session_count;
    int64_t message_count;
    char *first_activity; /* earliest session start, or NULL */
    char *last_activity;  /* latest session end, or NULL */
    store_key key;        /* this row's position */
} store_project;

typedef struct store_projects {
    store_project *rows;
    size_t count;
} store_projects;

int store_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                        store_projects *out);
int store_projects_count(store *s, const store_project_filter *f, int64_t *n);
void store_projects_free(store_projects *l);

/* ---- sessions ------------------------------------------------------ */

typedef enum store_order {
    STORE_NEWEST = 0, /* default */
    STORE_OLDEST
} store_order;

typedef struct store_session_filter {
    const char *project;           /* project name or path, or NULL */
    const char *source;            /* "claude" | "codex" | NULL */
    const char *after;             /* started_at >= after */
    const char *before;            /* started_at < before */
    const char *model;             /* exact model name */
    const char *branch;            /* exact git branch */
    int without_project;           /* only sessions not yet in a project (sync) */
    store_order order;             /* by started_at then session_id */
    const struct store_view *view; /* set by the store: the handle's viewer (store_viewer_set) */
} store_session_filter;

typedef struct store_session {
    char *session_id;   /* globally unique */
    char *source;       /* "claude" | "codex" */
    int64_t project_id; /* 0 when unknown */
    char *project;      /* project name, or NULL */
    char *title;        /* first real prompt or summary, or NULL */
    char *started_at;   /* first message timestamp, or NULL */
    char *ended_at;     /* last message timestamp, or NULL */
    char *model;        /* last model seen, or NULL */
    char *git_branch;   /* or NULL */
    int64_t message_count;
    char *parent_session_id; /* for sub-agents, or NULL */
    char *source_path;       /* the transcript file it was read from */
    char *hostname;          /* the machine it was read on */
    int64_t raw_size;        /* bytes of original source kept */
    store_key key;           /* this row's position */
    char *strings_;          /* private: when set, one allocation holding every string above */
} store_session;

typedef struct store_sessions {
    store_session *rows;
    size_t count;
} store_sessions;

int store_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                        store_sessions *out);
int store_sessions_count(store *s, const store_session_filter *f, int64_t *n);
void store_sessions_free(store_sessions *l);
/* One session by id; MCPAGE_ENOTFOUND when absent. Free with store_session_clear. */
int store_session_get(store *s, const char *session_id, store_session *out);
void store_session_clear(store_session *row);

/* ---- messages ------------------------------------------------------ */

typedef struct store_message {
    int64_t message_id; /* stable row id */
    char *session_id;
    int64_t ordinal;     /* 0-based position in the session */
    char *role;          /* "user" | "assistant" | "system" | "tool" */
    char *timestamp;     /* or NULL */
    char *text;          /* the searchable text (see docs/sync.md for caps) */
    char *tool_name;     /* tool called or answered, or NULL */
    char *tool_input;    /* a short summary of the call's input, or NULL */
    char *tool_call_id;  /* links a tool call and its result, or NULL */
    int is_error;        /* a tool result flagged as an error */
    int64_t line_no;     /* 1-based line in the source file */
    int64_t byte_offset; /* of that line in the session's raw bytes */
    int64_t byte_length; /* of that line, newline excluded */
} store_message;

typedef struct store_messages {
    store_message *rows;
    size_t count;
} store_messages;

/* Messages of a session with ordinal >= from_ordinal, in ordinal order. */
int store_messages_from(store *s, const char *session_id, int64_t from_ordinal, int64_t limit,
                        store_messages *out);
int store_message_get(store *s, int64_t message_id, store_message *out);
void store_message_clear(store_message *m);
void store_messages_free(store_messages *l);

/*
 * How many lines the text of each message spans, so a transcript
 * rendering can map a message to its line number without reading the
 * texts: for each message of the session with ordinal < before_ordinal
 * (INT64_MAX: all), in ordinal order, its ordinal and the lines of its
 * text: 0 when empty, else the number of '\n' + 1 (the text as
 * store_message.text holds it, up to a NUL). Reads every such text in
 * the store, so it costs about the session's size, never a transfer.
 */
typedef struct store_text_lines {
    int64_t *ordinal; /* message ordinals, ascending */
    int64_t *lines;   /* lines of each message's text */
    size_t count;     /* entries in both arrays */
} store_text_lines;

int store_message_text_lines(store *s, const char *session_id, int64_t before_ordinal,
                             store_text_lines *out);
void store_text_lines_free(store_text_lines *l);

/* Up to `length` (<= STORE_RAW_READ_MAX) raw bytes of a session from
 * `offset` into a malloc'd buffer (*buf, *n; free it); *total gets the
 * session's raw size. Reading at or past the end gives *n = 0. */
int store_raw_read(store *s, const char *session_id, int64_t offset, int64_t length,
                   unsigned char **buf, size_t *n, int64_t *total);

/* ---- per-session summary ------------------------------------------- */

typedef struct store_count {
    char *name; /* role or tool name */
    int64_t count;
} store_count;

typedef struct store_session_summary {
    store_session session; /* the session row itself */
    store_count *roles;    /* messages per role, by role name */
    size_t role_count;
    store_count *tools; /* tool calls per tool, most used first */
    size_t tool_count;
    char *first_prompt;  /* text of the first user message, or NULL */
    int64_t error_count; /* tool results flagged as errors */
} store_session_summary;

int store_session_summary_get(store *s, const char *session_id, store_session_summary *out);
void store_session_summary_clear(store_session_summary *sum);

/* ---- search -------------------------------------------------------- */

typedef enum store_search_sort {
    STORE_SEARCH_RELEVANCE = 0, /* bm25, best first, then newest stored (message_id
                                   descending); keyset on (rank, -message_id) */
    STORE_SEARCH_NEWEST,        /* keyset on (timestamp, message_id) */
    STORE_SEARCH_OLDEST
} store_search_sort;

/*
 * `query`: words and "quoted phrases", all required (AND). Each word is
 * quoted before it reaches the engine, so `foo-bar`, `c++` and
 * `path/to/file.c` match the text they spell (as a phrase of their word
 * parts). A trailing `*` on a word makes it a prefix. Snippets mark hits
 * as 【..】 (STORE_HIT_OPEN / STORE_HIT_CLOSE: U+3010 and U+3011, black
 * lenticular brackets, which English transcripts hardly ever hold, where
 * "[COMPILE ERROR]" and "[1]" are common; o200k counts them as [ and ],
 * one token each, where ⟦ ⟧ cost three) with "…" at cut ends.
 */
#define STORE_HIT_OPEN  "\xE3\x80\x90"
#define STORE_HIT_CLOSE "\xE3\x80\x91"

typedef struct store_search_filter {
    const char *query;   /* required */
    const char *project; /* name or path */
    const char *source;  /* "claude" | "codex" */
    const char *role;    /* "user" | "assistant" | "system" | "tool" */
    const char *tool;    /* tool name */
    const char *after;   /* timestamp >= after */
    const char *before;  /* timestamp < before */
    int has_error;       /* 0 any, 1 only errors, -1 only non-errors */
    store_search_sort sort;
    /* 1: one row per session holding a match (store_search), its
     * representative match with the session's hit count and first and last
     * hit: the best-ranked (RELEVANCE), the latest (NEWEST) or the earliest
     * (OLDEST), ordered and keyed as a match of that sort; store_search_count
     * counts the sessions. */
    int by_session;
    const struct store_view *view; /* set by the store: the handle's viewer (store_viewer_set) */
} store_search_filter;

typedef struct store_hit {
    int64_t message_id;
    char *session_id;
    char *project; /* or NULL */
    char *role;
    char *timestamp; /* or NULL */
    char *snippet;   /* text around the hits, hits marked */
    int64_t ordinal;
    int64_t before_count; /* messages before this one in its session */
    int64_t before_lines; /* their text lines (store_message_text_lines counts) */
    double rank;          /* bm25 (lower is better) */
    store_key key;        /* this row's position */
    /* by_session only: the session's matches, and its first and last match
     * in the session's order (message ids) */
    int64_t hits;
    int64_t first_id;
    int64_t last_id;
} store_hit;

typedef struct store_hits {
    store_hit *rows;
    size_t count;
} store_hits;

int store_search(store *s, const store_search_filter *f, const store_page *pg, store_hits *out);
/*
 * Whether `k` is a relevance position of the order before 0.2.0 (equal
 * ranks oldest stored first, the message id itself as its second part):
 * store_search refuses it (MCPAGE_EINVAL), since in today's order it
 * would skip rows; a caller with a cursor says to start the walk again.
 */
int store_key_relevance_old(const store_key *k);
int store_search_count(store *s, const store_search_filter *f, int64_t *n);
void store_hits_free(store_hits *l);

/* ---- activity ------------------------------------------------------ */

typedef enum store_bucket {
    STORE_BUCKET_DAY = 0, /* "YYYY-MM-DD" */
    STORE_BUCKET_WEEK,    /* the Monday starting the week, "YYYY-MM-DD" */
    STORE_BUCKET_MONTH    /* "YYYY-MM-01" */
} store_bucket;

/* Activity works in whole days (UTC dates of message timestamps):
 * `after` and `before` compare with their date part. */
typedef struct store_activity_filter {
    const char *project; /* or NULL */
    const char *source;  /* or NULL */
    const char *after;   /* day >= date of after */
    const char *before;  /* day < date of before */
    store_bucket bucket;
    const struct store_view *view; /* set by the store: the handle's viewer (store_viewer_set) */
} store_activity_filter;

typedef struct store_activity_row {
    char *project; /* project name */
    int64_t project_id;
    char *bucket; /* start date of the bucket */
    int64_t messages;
} store_activity_row;

typedef struct store_activity {
    store_activity_row *rows; /* ordered by bucket, then project id */
    size_t count;
} store_activity;

/* At most `max_rows` rows (<= 100000); MCPAGE_ERANGE past it. */
int store_activity_get(store *s, const store_activity_filter *f, size_t max_rows,
                       store_activity *out);
void store_activity_free(store_activity *a);

/* ---- usage: what model calls cost (docs/usage.md) ------------------ */

/*
 * One model call as a transcript line records it. Calls that share a
 * `call_key` are one call written several times (Claude Code writes a
 * response once per content block): the store keeps every copy and
 * counts one, the winner of store_usage_add's rule, so a report never
 * counts a call twice whatever order files arrive in.
 */
typedef struct store_usage {
    const char *session_id;
    int64_t message_id;    /* the message stored from the same line, or 0 */
    const char *timestamp; /* ISO 8601; its minute buckets reports */
    const char *call_key;  /* or NULL: never a copy of another call */
    const char *model;     /* or NULL */
    int sidechain;         /* loses to a main-chain copy (Claude) */
    int64_t input, output, cache_creation, cache_creation_1h, cache_read, reasoning;
    double cost_usd; /* with cost_given: the agent's own figure */
    int cost_given;
} store_usage;

/*
 * Adds one call. With a key another counted call has, the counted one
 * is the copy with the larger sum of input, output, cache creation and
 * cache read; a main-chain copy beats a sidechain one before sums are
 * compared (and a sidechain copy matches its message id alone, as
 * ccusage does); on a tie the earlier stays.
 */
int store_usage_add(store *s, const store_usage *u);
/* Takes a session's calls away (as store_session_reset does first). */
int store_usage_reset(store *s, const char *session_id);
/*
 * The backfill of a store made before calls were kept: *pending is 1
 * until store_usage_backfill_done (in a transaction). Sessions are listed
 * with their source (ids[i], sources[i], malloc'd; free with
 * store_usage_sessions_free).
 */
int store_usage_backfill_pending(store *s, int *pending);
int store_usage_backfill_done(store *s);
int store_usage_sessions(store *s, char ***ids, char ***sources, size_t *n);
void store_usage_sessions_free(char **ids, char **sources, size_t n);
/* Unix minutes (UTC) of an ISO 8601 time ("Z" or an offset; date alone =
 * midnight UTC), or INT64_MIN when it is not one. */
int64_t store_usage_minute(const char *ts);

typedef enum store_usage_group {
    STORE_USAGE_BY_HOUR = 0, /* `bucket`: unix hour (UTC), per agent */
    STORE_USAGE_BY_MINUTE,   /* `bucket`: unix minute, per agent: zones not whole hours from UTC */
    STORE_USAGE_BY_SESSION,  /* `name`: session id, with its project and agent */
    STORE_USAGE_BY_PROJECT,  /* `name`: project name ("" when none) */
    STORE_USAGE_BY_AGENT,    /* `name`: the session's source */
    STORE_USAGE_BY_MODEL     /* by model only */
} store_usage_group;

typedef struct store_usage_filter {
    store_usage_group group;
    const char *source;     /* or NULL */
    const char *project;    /* name or path, or NULL */
    const char *session_id; /* or NULL */
    int64_t from_minute;    /* calls at or after (unix minutes); INT64_MIN = open */
    int64_t to_minute;      /* calls before; INT64_MAX = open */
} store_usage_filter;

/* Tokens of a call past this count are priced at a vendor's long-context
 * rate where it has one (per call and per kind, as LiteLLM's
 * *_above_200k_tokens fields mean). */
#define STORE_USAGE_TIER 200000

/* Counted calls of one group and model, priced or given. */
typedef struct store_usage_sum {
    int64_t bucket; /* the time groups: unix hour or minute */
    char *name;     /* the other groups' key (owned) */
    char *project;  /* BY_SESSION: the session's project name, or NULL */
    char *source;   /* BY_SESSION: its agent */
    char *model;    /* or NULL when the calls named none */
    int cost_given; /* these calls carry their agent's cost (cost_usd) */
    int64_t calls;
    int64_t input, output, cache_creation, cache_creation_1h, cache_read, reasoning;
    /* of each kind, the tokens of a call past STORE_USAGE_TIER */
    int64_t over_input, over_output, over_cache_5m, over_cache_1h, over_cache_read;
    double cost_usd;    /* sum of the given costs */
    char *first, *last; /* earliest and latest call time (owned); empty from the hourly sums */
} store_usage_sum;

typedef struct store_usage_sums {
    store_usage_sum *rows;
    size_t count;
} store_usage_sums;

/* Every group of the filter, one row per (group, model, cost_given). At
 * most `max_rows`; MCPAGE_ERANGE past it. */
int store_usage_sums_get(store *s, const store_usage_filter *f, size_t max_rows,
                         store_usage_sums *out);
void store_usage_sums_free(store_usage_sums *l);

/* ---- file edits: which session changed a file (docs/store.md) ------- */

/*
 * One file a tool call wrote or edited (Claude Code's Edit, Codex's
 * apply_patch, ...), as sync reads it from the call's arguments. The
 * strings are borrowed for the call.
 */
typedef struct store_edit {
    const char *session_id;
    int64_t message_id;    /* the message holding the call, or 0 */
    const char *timestamp; /* ISO 8601, or NULL */
    const char *path;      /* absolute (resolved against the session's cwd) */
    const char *tool;      /* the tool's name as the agent wrote it */
    int64_t added;         /* lines added, or -1 when the call does not show them */
    int64_t removed;       /* lines removed, or -1 */
    const char *summary;   /* one short line on the change, or NULL */
} store_edit;

#define STORE_EDIT_PATH_MAX    4096 /* bytes of a stored path (longer ones are not stored) */
#define STORE_EDIT_SUMMARY_MAX 200  /* bytes of a summary */

/* Adds one edit (in the writer's transaction). */
int store_edit_add(store *s, const store_edit *e);
/* Takes a session's edits away (a backfill does it first). */
int store_edit_reset(store *s, const char *session_id);
/* The backfill of a store made before edits were kept (as for usage:
 * *pending is 1 until store_edit_backfill_done, in a transaction). */
int store_edit_backfill_pending(store *s, int *pending);
int store_edit_backfill_done(store *s);
/* The message a backfilled call belongs to: the session's message whose
 * raw line starts at `byte_offset`, the one with `call_id` first when
 * several do (a line holding several calls). *message_id 0 when none. */
int store_edit_message_at(store *s, const char *session_id, int64_t byte_offset,
                          const char *call_id, int64_t *message_id);
/* The working directory of a session: its project's path (*cwd malloc'd),
 * or NULL when the session has no project. */
int store_session_cwd(store *s, const char *session_id, char **cwd);

/*
 * Which edits a list holds. `path`: a path starting with "/" matches
 * exactly; one without matches a whole trailing part ("src/foo.c" matches
 * "/w/app/src/foo.c", not "/w/app/xsrc/foo.c"); one holding `*` or `?`
 * is a glob (`*` any run of characters, "/" included, `?` one), anchored
 * at the end and, unless it starts with "/", at a "/" or the start.
 */
typedef struct store_edit_filter {
    const char *path;       /* or NULL: every file */
    const char *project;    /* name or path, or NULL */
    const char *source;     /* the agent, or NULL */
    const char *session_id; /* or NULL */
    const char *after;      /* timestamp >= after */
    const char *before;     /* timestamp < before */
} store_edit_filter;

/* Position parts: (timestamp TEXT, edit id INT), newest first. */
typedef struct store_edit_row {
    int64_t id;         /* stable row id */
    char *path;         /* absolute */
    char *session_id;   /* the session that made the edit */
    int64_t message_id; /* its message, or 0 */
    int64_t ordinal;    /* that message's place in its session, or -1 */
    char *timestamp;    /* or NULL */
    char *source;       /* the agent */
    char *project;      /* project name, or NULL */
    char *tool;         /* the tool's name */
    int64_t added;      /* or -1 */
    int64_t removed;    /* or -1 */
    char *summary;      /* or NULL */
    store_key key;      /* this row's position */
} store_edit_row;

typedef struct store_edits {
    store_edit_row *rows;
    size_t count;
} store_edits;

/* MCPAGE_EINVAL (with a message) for a path pattern past
 * STORE_EDIT_PATH_MAX bytes or an empty one. */
int store_edits_list(store *s, const store_edit_filter *f, const store_page *pg, store_edits *out);
int store_edits_count(store *s, const store_edit_filter *f, int64_t *n);
void store_edits_free(store_edits *l);

/* ---- stats --------------------------------------------------------- */

typedef struct store_stats {
    int64_t projects;
    int64_t sessions;
    int64_t messages;
    int64_t sources;    /* source files tracked */
    int64_t size_bytes; /* on-disk size of the store */
    int64_t raw_bytes;  /* original transcript bytes kept */
    int64_t generation; /* bumped by every change that adds or removes rows */
    int schema_version;
} store_stats;

int store_stats_get(store *s, store_stats *out);
/* The generation alone (cheap): tools put it in cursors to detect change. */
int store_generation(store *s, int64_t *gen);

/* ---- writing (sync) ------------------------------------------------ */

/* A transaction. Every write below must happen inside one; the
 * generation is bumped in the same transaction when rows changed. */
int store_begin(store *s);
int store_commit(store *s);
int store_rollback(store *s);

/* Finds or creates the project for a working directory; *id gets its id. */
int store_project_ensure(store *s, const char *path, const char *name, int64_t *id);

/* What sync writes about a session (strings may be NULL = keep). */
typedef struct store_session_meta {
    const char *session_id;
    const char *source;
    int64_t project_id; /* 0 = keep */
    const char *title;
    const char *model;
    const char *git_branch;
    const char *parent_session_id;
    const char *source_path;
    const char *hostname;
    const char *owner;  /* who synced it (user@machine): set when the session has none yet */
    uint64_t head_hash; /* hash of the first raw bytes (sync's) */
    int64_t head_len;   /* how many bytes head_hash covers */
} store_session_meta;

/* Creates the session or updates the given fields. */
int store_session_put(store *s, const store_session_meta *m);
/* What incremental sync needs to know about a session it continues. */
typedef struct store_session_state {
    int64_t raw_size;   /* bytes of source consumed and kept */
    int64_t raw_lines;  /* complete lines in those bytes */
    uint64_t head_hash; /* hash of the first head_len bytes */
    int64_t head_len;
    int64_t message_count; /* messages stored (the next ordinal) */
    int64_t project_id;    /* 0 when not known yet */
    int has_title;         /* a title is set */
} store_session_state;

/* MCPAGE_ENOTFOUND (and *st zeroed) when the session does not exist. */
int store_session_state_get(store *s, const char *session_id, store_session_state *st);
/* Deletes a session's messages and raw bytes (before a re-parse). */
int store_session_reset(store *s, const char *session_id);
/* Appends one message (m->session_id names the session). *id gets its
 * id: m->message_id when > 0 (a message stored again after
 * store_session_reset keeps the id it had, so a walk by id does not see
 * it twice; the id must be free), else a new one from the store. */
int store_message_add(store *s, const store_message *m, int64_t *id);
/* A text's index tokens, made ahead on another thread (store_text_tokens). */
typedef struct store_tokens store_tokens;
/* A message's text packed ahead (store_codec_pack_text), for a store
 * that keeps texts packed (store_packs_texts): its rows take these bytes
 * and do not pack the text again. `tokens`, when not NULL, are its index
 * tokens made ahead (store_text_tokens): the index takes them instead of
 * tokenizing the text again. */
typedef struct store_text_packed {
    int codec;
    const unsigned char *bytes;
    size_t n;
    const store_tokens *tokens;
} store_text_packed;
/* 1 when `s` keeps message texts as store_text_pack packs them. */
int store_packs_texts(store *s);
/* Packs texts as such a store keeps them, needing no store: one packer
 * a thread (a sync packs on its parse thread, docs/sync.md). */
typedef struct store_packer store_packer;
store_packer *store_packer_new(void); /* NULL: out of memory */
void store_packer_free(store_packer *p);
/* out->bytes: `text` itself (codec plain) or bytes valid until the
 * packer's next call. 0 or MCPAGE_ENOMEM. */
int store_text_pack(store_packer *p, const char *text, size_t n, store_text_packed *out);
/*
 * The index's tokens of texts, made as `s` makes them but on another
 * thread (a sync tokenizes on its parse thread, docs/sync.md): one
 * tokenizer a thread, made on the thread that owns `s` (it reads the
 * store's tokenizer). NULL when the backend makes no tokens ahead
 * (PostgreSQL) or there is no memory.
 */
typedef struct store_tokenizer store_tokenizer;
store_tokenizer *store_tokenizer_new(store *s);
void store_tokenizer_free(store_tokenizer *t);
/* The tokens of text[0..n) (*out, freed by store_tokens_free): 0 or
 * MCPAGE_ENOMEM. They belong to those bytes: a store given them with
 * another text tokenizes that text itself. */
int store_text_tokens(store_tokenizer *t, const char *text, size_t n, store_tokens **out);
void store_tokens_free(store_tokens *k);
/* store_message_add with m->text already packed (NULL: as store_message_add). */
int store_message_add_packed(store *s, const store_message *m, const store_text_packed *packed,
                             int64_t *id);
/* Appends raw bytes (holding `lines` complete lines) at the session's
 * current raw size, one stored chunk per STORE_RAW_CHUNK bytes. */
int store_raw_append(store *s, const char *session_id, const unsigned char *data, size_t n,
                     int64_t lines);
#define STORE_RAW_CHUNK (1024 * 1024) /* raw bytes of one stored chunk, both backends */
/* One raw chunk packed as the store keeps it (store_raw_pack). */
typedef struct store_raw_packed {
    int codec;
    const unsigned char *bytes; /* what the row holds */
    size_t n;                   /* its length */
    size_t raw_n;               /* the raw bytes it stands for (at most STORE_RAW_CHUNK) */
} store_raw_packed;
/* Packs raw bytes (at most STORE_RAW_CHUNK) as store_raw_append keeps
 * them, needing no store (a sync packs them on a thread of their own):
 * out->bytes is `data` itself (kept plain) or bytes valid until the
 * packer's next call. 0, MCPAGE_EINVAL or MCPAGE_ENOMEM. */
int store_raw_pack(store_packer *p, const unsigned char *data, size_t n, store_raw_packed *out);
/* store_raw_append of chunks packed ahead: v[0..nv) in order, one row
 * each, at the session's current raw size; `lines` complete lines in all. */
int store_raw_append_packed(store *s, const char *session_id, const store_raw_packed *v, size_t nv,
                            int64_t lines);
/* The tool named by the call `call_id` in a session (*name malloc'd), or
 * MCPAGE_ENOTFOUND. Sees the writer's own uncommitted rows. */
int store_tool_call_name(store *s, const char *session_id, const char *call_id, char **name);
/* Recomputes the aggregates of the session's project (counts, activity,
 * sources). A session's own count and time span follow store_message_add. */
int store_session_refresh(store *s, const char *session_id);

/* The incremental-sync record of one source file, keyed by the machine
 * it was read on and its path there (two machines' identical paths are
 * two records). */
typedef struct store_source {
    char *hostname; /* the machine; NULL or "" = unknown */
    char *path;
    char *session_id;
    int64_t size; /* file size when last synced */
    int64_t inode;
    int64_t mtime_ns;
    int64_t consumed; /* bytes of complete lines read */
} store_source;

typedef struct store_sources {
    store_source *rows; /* ordered by path (bytewise, as strcmp) */
    size_t count;
    void *text; /* the rows' strings, packed in blocks (SQLite: one malloc per 256 KiB instead of
                   two per row), or NULL when each row owns its own */
} store_sources;

/* MCPAGE_ENOTFOUND when the path was never synced on that machine. */
int store_source_get(store *s, const char *hostname, const char *path, store_source *out);
/* Every source record of one machine, ordered by path: one scan instead of
 * one lookup per file. At most `max_rows`; MCPAGE_ERANGE past it. */
int store_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out);
void store_sources_free(store_sources *l);
int store_source_put(store *s, const store_source *src);
void store_source_clear(store_source *src);

/* An exclusive claim on one session across transactions: two writers
 * (sync processes on several machines, one shared store) that reach the
 * same session take turns, so neither reads state the other is about to
 * change. Blocks until the claim is free; held until unlocked or the
 * handle closes. A no-op where there is one writer at a time anyway. */
int store_session_lock(store *s, const char *session_id);
int store_session_unlock(store *s, const char *session_id);
/* The claim without waiting: 1 when taken, 0 when another writer holds
 * it (or the backend cannot take one without waiting), or a failure.
 * A writer holding an open transaction claims this way, and commits
 * before it waits: waiting then could hold up the writer it waits for. */
int store_session_trylock(store *s, const char *session_id);

/* ---- HTTP sessions ended with DELETE --------------------------------
 * A signed session id is accepted by every server instance holding the
 * key; only a record they share makes DELETE on one instance end the
 * session on all (mcpage_http_config.ended). Stores that many instances
 * share (PostgreSQL) keep that record; SQLite, one machine's file opened
 * read-only by servers, keeps none: there record and since do nothing and
 * lookup answers "not ended". Allowed on read-only handles: the record
 * is the servers' own, not the archive. */

/* Bytes of a session key (the id's random part). */
#define STORE_ENDED_KEY_LEN 16

/* Called by store_ended_since for each end: the key and its expiry. */
typedef void (*store_ended_fn)(void *ctx, const uint8_t *key, int64_t until);

/* Records that the session `key` ended; it matters until `until` (unix
 * seconds), after which the id is refused anyway and the row is dropped. */
int store_ended_record(store *s, const uint8_t *key, int64_t until);
/* *ended is true when `key` is recorded and not yet expired. */
int store_ended_lookup(store *s, const uint8_t *key, bool *ended);
/* Calls `each` for the ends recorded since the position *mark (0: none,
 * it only sets the position) and advances *mark, an opaque position in
 * the store's own clock. An end may be reported twice; never missed. */
int store_ended_since(store *s, int64_t *mark, store_ended_fn each, void *ctx);

#endif
