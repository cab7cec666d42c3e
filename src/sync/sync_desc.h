/*
 * Described sources: an agent told as data, read by one engine
 * (sync_engine.c). A description (JSON, docs/sources.md) says where the
 * agent keeps its sessions (a home folder, environment variables, globs
 * under it), how a session's id, project, title and parent are found, and
 * how each record (a line of a JSON Lines file, or an element of a JSON
 * document's array) maps to a message: its role, text, time, tool call
 * and result, model and token usage. The built-in descriptions
 * (src/sync/sources.json) are compiled into the binary; a user adds or
 * overrides agents in ~/.config/mcpage/sources.json.
 *
 * Descriptions are checked when loaded: a bad one is refused with a
 * message that names the field (`sources[2].records[0].role.map: ...`).
 * Internal to src/sync/ and the CLI.
 */
#ifndef MCPAGE_SYNC_DESC_H
#define MCPAGE_SYNC_DESC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/sync_fold.h"

#define SYNC_DESC_NAME_MAX 32 /* bytes of a source name */
#define SYNC_DESC_MAX      64 /* descriptions loaded at most */
#define SYNC_DESC_DEPTH    8  /* folder levels a `**` glob walks */
#define SYNC_DESC_PATH_MAX 16 /* tokens of one JSON pointer */
#define SYNC_DESC_ALTS     8  /* alternatives of one value */
#define SYNC_DESC_SIDECARS 4  /* files beside a session file holding its facts */

/* A JSON pointer (RFC 6901), split into its tokens. */
typedef struct sd_path {
    char **tok;
    size_t n;
} sd_path;

/* Where a value is: the first of several pointers that holds one, or a
 * constant. Unset when n == 0 and konst == NULL. With `after`, the value
 * is text found inside what the pointers hold (a string, or the strings
 * in an array or object): what follows the first `after`, up to `until`
 * (which must follow; without `until`, to the end of its line). */
typedef struct sd_value {
    sd_path alt[SYNC_DESC_ALTS];
    size_t n;
    char *konst;
    char *after, *until; /* "find": text between two markers, or NULL */
} sd_value;

/* A test on a record: the value at `path` equals one of `want` (a JSON
 * array of scalars), or, with `present`, exists (1) or not (0). */
typedef struct sd_when {
    sd_path path;
    json_t *want; /* owned; NULL with present >= 0 */
    int present;  /* -1: compare with want */
} sd_when;

enum sd_kind { SD_MESSAGE = 0, SD_SESSION, SD_SKIP };

/* One rule: the first whose tests all pass decides what a record is. */
typedef struct sd_rule {
    sd_when *when;
    size_t nwhen;
    int kind;                  /* enum sd_kind */
    sd_path at;                /* the message inside the record (paths below are under it) */
    sd_value id;               /* the record's id: a record with a known id replaces it */
    sd_value role;             /* its role, through role_map */
    char **map_from, **map_to; /* role_map: source role -> user|assistant|system|tool|skip */
    size_t nmap;
    char *map_default;  /* role_map "*", or NULL */
    sd_value content;   /* a string, or blocks (text, thinking, tool calls, results) */
    sd_value thinking;  /* reasoning beside the content (a string or blocks) */
    sd_value calls;     /* an array of tool calls beside the content (OpenAI style) */
    sd_value call_id;   /* a tool result's call id */
    sd_value tool_name; /* a tool result's tool */
    sd_value is_error;  /* a tool result's error flag */
    sd_value timestamp; /* ISO 8601 text, or seconds / milliseconds since 1970 */
    sd_value model;
    sd_value usage_input, usage_output, usage_cache_read, usage_cache_creation, usage_reasoning;
    sd_value usage_input_total; /* input counting cache reads (OpenAI's prompt_tokens) */
    sd_value cost;              /* USD */
    sd_value rewind_to;         /* drops the message with this id and every later one */
    sd_value results;           /* tool results beside the calls: an array, or an object by id */
    /* session facts (any rule may carry them) */
    sd_value s_id, s_cwd, s_title, s_parent, s_model, s_branch;
    sd_value s_time; /* the session's start: the time of messages that have none */
    char *prefix;    /* text put before the message's text (e.g. "[compaction] ") */
    int join;        /* a stream fragment: joins the message of the fragments just before it */
} sd_rule;

enum sd_layout { SD_JSONL = 0, SD_JSON, SD_DB, SD_FOLDER };

/* One glob under the home: segments with `*`, `?`, `**` (any depth) and
 * captures `{id}`, `{parent}`, `{cwd}`, `{cwd:url}` (percent-decoded),
 * `{project}` that match like `*`. */
typedef struct sd_glob {
    char **seg;
    size_t n;
    int layout; /* enum sd_layout of the files it finds */
    /* with SD_FOLDER (the glob names a session's folder): its record
       files, one JSON document each, as folder names then a name pattern
       under the session's folder ("events/event-*.json"), read in name
       order (numbers in names compared as numbers) */
    char *each;
} sd_glob;

/* A SQLite store (the description's "database"): where the databases are,
 * the table of sessions and, unless each session row is a document holding
 * its messages ("records" points into it), the table of messages. Names
 * are checked identifiers; queries are built from them, never taken as
 * text. */
typedef struct sd_db {
    sd_glob *globs;
    size_t nglobs;
    char *s_table;                                                /* sessions */
    char *s_id, *s_cwd, *s_title, *s_parent, *s_time, *s_changed; /* its columns, or NULL */
    char **s_json;                                                /* columns holding JSON text */
    size_t ns_json;
    char *m_table;   /* messages, or NULL: the session row is the document */
    char *m_session; /* its column naming the session */
    char **m_order;  /* the columns it is ordered by */
    size_t nm_order;
    char **m_json;
    size_t nm_json;
} sd_db;

/* Folders outside the home that hold sessions too, as a file in the home
 * lists them (Crush: ~/.local/share/crush/projects.json names each
 * project's .crush folder): the globs are walked under each listed folder
 * as well, that folder its own root (links out of it are refused). */
typedef struct sd_roots {
    char *file;     /* the listing, a JSON file in the home */
    sd_path list;   /* the array of entries in it */
    sd_path folder; /* each entry's folder: an absolute path */
    sd_path cwd;    /* each entry's project directory (n == 0: none) */
} sd_roots;

#define SYNC_DESC_ROOTS_MAX 10000 /* folders one listing may name */

/* Project folders named by a hash of the project's path (Kimi CLI:
 * sessions/<md5 of the path>/), and a file in the home listing the paths:
 * a `{project}` capture equal to the hash of a listed path is that path. */
typedef struct sd_hashed {
    char *file;   /* the listing, a JSON file in the home */
    sd_path list; /* the array of entries in it */
    sd_path cwd;  /* each entry's path */
    char *hash;   /* "md5" or "sha256" (lowercase hex of the path's bytes) */
} sd_hashed;

typedef struct sync_desc {
    char *name;  /* the store's source name: [a-z0-9_-], 1..31 bytes */
    char *title; /* shown by `mcpage sources` */
    char *home;  /* default home: "~/" and "$VAR/" expanded; "${VAR:-~/x}" */
    char **env;  /* environment variables naming the home, in order */
    size_t nenv;
    char *writes;  /* "claude" | "codex" | "opencode" | "vscode-chat" | "aider": read by that
                      reader, under this name */
    char *db_file; /* with "opencode": the database's file name in the home (opencode.db) */
    sync_fold_format wfmt[3]; /* with "opencode", "vscode-chat" or "aider" (its first): its
                                 reader's formats under this name (bound) */
    char *id_prefix;          /* put before every session id ("<name>:" unless given) */
    sd_glob *globs;
    size_t nglobs;
    sd_path records; /* JSON documents: the array of records */
    sd_rule doc;     /* JSON documents: the facts of the document itself */
    /* JSON documents: the document's model calls by message id (Zed's
       request_token_usage): the object at this pointer maps the id of a
       message to its calls' counts (doc's usage values, read in each
       entry), stored on the first assistant message after that message;
       n == 0: none */
    sd_path usage_by;
    sd_rule *rules;
    size_t nrules;
    sd_db *db;         /* a SQLite store, or NULL */
    sd_roots *roots;   /* folders a file in the home lists, or NULL */
    sd_hashed *hashed; /* project folders named by a hash of their path, or NULL */
    /* files beside each session file holding facts ({stem}: the session
       file's name without its extension), each optional */
    char *sidecar[SYNC_DESC_SIDECARS];
    sd_rule side[SYNC_DESC_SIDECARS]; /* their facts */
    size_t nsidecar;
    char **call_types, **result_types, **text_types, **thinking_types; /* extra block types */
    size_t ncall_types, nresult_types, ntext_types, nthinking_types;
    char *provenance;     /* where the format knowledge came from (docs) */
    int unique_calls;     /* a tool call written again (same id) in a later record is stored once */
    int builtin;          /* shipped in the binary */
    sync_fold_format fmt; /* the engine's format for this description */
} sync_desc;

typedef struct sync_descs {
    sync_desc *v[SYNC_DESC_MAX];
    size_t n;
} sync_descs;

/* The built-in descriptions' JSON text (generated from src/sync/sources.json). */
extern const char sync__builtin_sources[];

/*
 * Parses the JSON text of a sources file: {"sources": [description, ...]}
 * (or the array alone). `origin` names it in errors. Entries whose name
 * is already in `out` replace it; an entry holding only "name" with
 * "home" and/or "enabled" changes the home of (or turns off) a known
 * one. 0, or MCPAGE_EPARSE with "origin: sources[i].field: reason" in
 * err (nothing added); MCPAGE_ENOMEM.
 */
int sync_descs_parse(sync_descs *out, const char *text, size_t len, const char *origin, char *err,
                     size_t errlen);
/* Loads the built-in descriptions, then the user's file (NULL: the
 * default path, $MCPAGE_SOURCES, else $XDG_CONFIG_HOME/mcpage/sources.json,
 * else ~/.config/mcpage/sources.json; a missing default file is no error). */
int sync_descs_load(sync_descs *out, const char *user_file, char *err, size_t errlen);
void sync_descs_free(sync_descs *d);
const sync_desc *sync_descs_find(const sync_descs *d, const char *name);
/* The user's sources file path (see sync_descs_load). */
int sync_descs_user_path(char *buf, size_t n);

/*
 * The home of a description: `given` (a flag), else the first of its
 * environment variables set (MCPAGE_<NAME>_HOME first), else its
 * default. *origin gets "flag", "env NAME" or "default".
 */
int sync_desc_home(const sync_desc *d, const char *given, char *buf, size_t n, char *origin,
                   size_t originlen);

/* A parsed description's tests turned off (for `enabled: false`). */
int sync_desc_disabled(const sync_desc *d);

/* ---- the engine (sync_engine.c) ---- */

/* Appends a job per session file under `home` (folders confined to it).
 * Discovery problems go to `rep` under the source's name. */
int sync__desc_discover(const sync_desc *d, const char *home, sync_fold_jobs *js, sync_report *rep);
/* 1 when the folder one of its globs starts in (its plain leading names)
 * exists under `home`: the agent is there, even with no session yet. */
int sync__desc_found(const sync_desc *d, const char *home);
int sync__desc_fold_line(const sync_desc *d, sync_fold *f, const char *line, size_t len,
                         int64_t off, int64_t line_no, char *why, size_t whylen);
int sync__desc_expand(const sync_desc *d, const char *line, size_t len, int32_t sub,
                      sync_record **out, size_t *n);
/* Points the description's format at the engine (after parsing). */
void sync__desc_bind(sync_desc *d);
/* The SQLite side (sync_engine_db.c): one job per session of each
 * database the description's globs find, and a session's rows rendered as
 * JSON Lines. */
int sync__desc_db_discover(const sync_desc *d, const char *root, const char *path, const char *cwd,
                           sync_fold_jobs *js, sync_report *rep);
int sync__desc_db_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen);
int sync__desc_convert(const sync_desc *d, const char *doc, size_t len, char **out, size_t *outlen,
                       char *why, size_t whylen);
/* The call a document's usage_by names for message `id` (f->doc_usage,
 * kept by fold_line from the $document line): 1 with *u filled (counts,
 * the key `id` within its session, `model`), 0 when the document names
 * none for it; MCPAGE_ENOMEM. */
int sync__desc_reply_usage(const sync_desc *d, const sync_fold *f, const char *id,
                           const char *model, sync_usage *u);

#endif
