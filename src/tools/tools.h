/*
 * The archive tools: what users and their agents touch. Every paginating
 * tool goes through the shared page builder of <mcpage/page.h>; no tool
 * writes an envelope field itself. The tools talk to the archive only
 * through src/store/store.h.
 *
 * Threads: tool handlers run on the runtime's worker threads, and a store
 * handle belongs to one thread at a time, so the context keeps a small
 * pool of read-only handles guarded by a mutex: a call takes one, uses it
 * and gives it back.
 */
#ifndef MCPAGE_TOOLS_TOOLS_H
#define MCPAGE_TOOLS_TOOLS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/http.h>
#include <mcpage/page.h>
#include <mcpage/server.h>

#include "page/fmt.h"
#include "page/page_internal.h"
#include "store/store.h"

/* Idle read-only handles kept for reuse; more are opened and closed on demand. */
#define TOOLS_POOL_MAX 16
/* Bytes of a store path. */
#define TOOLS_PATH_MAX 4096

/* Totals remembered per process (tools_list_run). */
#define TOOLS_COUNT_CACHE 256

/* One remembered total: exact for its walk at its generation. */
typedef struct tools_count {
    const void *spec;                   /* the walk's mcpage_list_spec (the tool) */
    uint8_t fp[MCPAGE_FINGERPRINT_LEN]; /* its arguments' fingerprint */
    int64_t generation;                 /* the store generation counted at */
    int64_t total;                      /* the count */
    uint64_t used;                      /* clock of the last use, for eviction */
} tools_count;

/* What every tool call shares: the store, the pager and remembered totals. */
typedef struct tools_ctx {
    char db[TOOLS_PATH_MAX];               /* the store spec (a file path) */
    const mcpage_pager *pager;             /* the contract's settings and keys (borrowed) */
    pthread_mutex_t mu;                    /* guards pool, npool, counts and clock */
    store *pool[TOOLS_POOL_MAX];           /* idle read-only handles */
    int npool;                             /* entries in pool */
    tools_count counts[TOOLS_COUNT_CACHE]; /* totals of recent first pages */
    uint64_t clock;                        /* ticks once per cache use */
    int64_t query_budget_ms;               /* work one list call may do (tests lower it) */
    const char *export_dir; /* export_session's folder (borrowed), or NULL: no tool */
    int64_t checked_ms;     /* monotonic ms of the last thorough check by /health; 0: none */
    const struct tools_policy *policy; /* who sees what (serve --policy; borrowed), or NULL */
    bool owners_apply; /* callers may be restricted (OAuth): call-less listings show nothing */
} tools_ctx;

/* How often GET /health reads every page of the store (tools_check) at most. */
#define TOOLS_HEALTH_CHECK_MS 60000

/* Sets up `ctx` for the store `db`; `pager` is borrowed. */
int tools_ctx_init(tools_ctx *ctx, const char *db, const mcpage_pager *pager);
/* Closes the pooled handles. */
void tools_ctx_free(tools_ctx *ctx);

/*
 * A health check for the HTTP transport's GET /health (its signature is
 * mcpage_http_config.health; `ud` is the tools_ctx): 0 when the store
 * answers, else its error with the reason in `why`.
 */
int tools_health(void *ud, char *why, size_t cap);
/*
 * A thorough check of the store now (store_check: SQLite reads every page,
 * seconds on a large store): 0 when sound, else its error with what is
 * wrong and the remedy ("mcpage sync --rebuild") in `why`. GET /health
 * runs it at most every TOOLS_HEALTH_CHECK_MS; `serve` once at start;
 * `call` before its call. Damage found is remembered by the process, so
 * every later check and write reports it.
 */
int tools_check(tools_ctx *ctx, char *why, size_t cap);

/*
 * The HTTP transport's shared record of sessions ended with DELETE
 * (mcpage_http_config.ended), kept in the store: on PostgreSQL every
 * instance sees every end. mcpage serve installs it for a store URL
 * only; on an SQLite file the hooks would do nothing.
 */
mcpage_http_ended tools_ended_sessions(tools_ctx *ctx);

/*
 * Registers every archive tool, the session resources (provider and
 * template). `ctx` must outlive the server.
 */
int tools_register_all(mcpage_server *srv, tools_ctx *ctx);

/* ---- shared by the tool files (internal to src/tools) -------------- */

/* ---- who sees what (policy.c; docs/security.md, "Owners") ---------- */

typedef struct tools_policy tools_policy;
/* Reads a policy file (JSON: admin_scope, owners, shares); MCPAGE_EINVAL
 * with what is wrong in `err`. */
int tools_policy_load(const char *path, tools_policy **out, char *err, size_t cap);
void tools_policy_free(tools_policy *p);
/*
 * Sets the store viewer of `call`'s caller on `s`: nobody (local, the
 * static token) or the admin scope sees everything; a token's subject sees
 * its owners' sessions and the projects shared with its groups. A subject
 * that names no owner: MCPAGE_ESTATE with what the operator should do.
 */
int tools_viewer_apply(const tools_ctx *ctx, const mcpage_call *call, store *s, char *err,
                       size_t cap);
/* Mixes the caller into a walk's fingerprint, so remembered totals are per viewer. */
void tools_viewer_mix(const mcpage_call *call, const store *s, uint8_t fp[MCPAGE_FINGERPRINT_LEN]);

/*
 * Takes a read-only store handle for this call, reading as its caller
 * (tools_viewer_apply). On failure fills `res` with an error result naming
 * the cause and returns NULL.
 */
store *tools_store_get(tools_ctx *ctx, const mcpage_call *call, mcpage_result *res);
/* Gives the handle back (NULL is fine); its budget and viewer are cleared. */
void tools_store_put(tools_ctx *ctx, store *s);
/* Makes `res` an error result for a store failure, with store_errmsg(). */
int tools_store_error(mcpage_result *res, store *s, int rc, const char *what);

/* A string argument, or NULL when absent, null or empty. */
const char *tools_arg_str(const json_t *args, const char *name);
/*
 * Checks a date argument (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS[.fff]][Z],
 * UTC). Returns true when absent or valid; otherwise writes the
 * invalid_argument result into `res` and returns false.
 */
/* True for YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS[.fff]][Z]. */
bool tools_date_ok(const char *s);
bool tools_check_date(const char *tool, const json_t *args, const char *name, mcpage_result *res);

/* Copies a store row position into cursor key parts (reals as their bits). */
int tools_key_to_parts(const store_key *k, mcpage_keypart *parts);
/*
 * Rebuilds a store position from a LIST window's cursor parts, with the
 * part types the order uses. false when they do not match (a cursor of
 * another order: cannot happen with a valid fingerprint).
 */
bool tools_key_from_window(const mcpage_list_window *w, const store_key_type *types, int ntypes,
                           store_key *out);

/*
 * One LIST walk over the store: what a LIST tool differs in. The tool
 * is registered with mcpage_server_add_list_tool(), so the runtime
 * begins the page from the call's window and finishes it; the shared run
 * (tools_list_run) does the rest the same way for every such tool: store
 * handle, keyset position from the cursor, the exact total counted once
 * per (arguments, generation), the records.
 */
typedef struct tools_list_walk {
    const mcpage_list_spec *spec;    /* the tool's LIST spec */
    const store_key_type *key_types; /* part types of this order's positions */
    int nkeys;                       /* parts in a position */
    const char *what;                /* plural noun for store errors, e.g. "sessions" */
    /* Counts every row of the walk into *total. */
    int (*count)(store *s, void *ud, int64_t *total);
    /* Reads one page of rows and adds each with tools_list_add() until it
       answers MCPAGE_PAGE_FULL; returns 0 or a negative status. */
    int (*fetch)(store *s, void *ud, const store_page *page, mcpage_list *pg);
    /* Optional: writes the result for a failed store call (true when it did). */
    bool (*on_error)(store *s, void *ud, int rc, mcpage_result *res);
    void *ud; /* the tool's filter, passed to the callbacks */
    /* The call: its open page (mcpage_call_list), and its cancellation,
       which with ctx->query_budget_ms bounds the store's work. */
    mcpage_call *call;
    /* Optional: a field the call's filter fixes, said once per page
       (mcpage_list_share), e.g. "project" when filtered by project. */
    const char *share;
} tools_list_walk;

/*
 * Fills the call's page; 0 (a store failure is an error result in `res`,
 * and the runtime then drops the page), or a negative status the runtime
 * reports.
 */
int tools_list_run(tools_ctx *ctx, const tools_list_walk *walk, mcpage_result *res);
/* Adds a record (reference stolen) at its store position; mcpage_list_add's result. */
int tools_list_add(mcpage_list *pg, json_t *rec, const store_key *key);
/* tools_list_add of a record given as cells (mcpage__list_add_cells). */
int tools_list_add_cells(mcpage_list *pg, const list_cell *cells, size_t n, const store_key *key);

/*
 * Looks up the session named by the call's `session_id` argument. Returns
 * 0 with *out filled (clear it with store_session_clear), or a negative
 * status after writing the error result: an unknown id is an invalid
 * argument naming where ids come from; anything else is a store error.
 */
int tools_session_find(store *s, const char *tool, const json_t *args, store_session *out,
                       mcpage_result *res);

/*
 * Writes the invalid-argument result for a message_id that names no
 * archived message (`got`: the argument as given).
 */
int tools_reject_message_id(mcpage_result *res, const char *tool, const json_t *got);

/* Adds a resource_link block for a session after the paged data. */
int tools_session_link(mcpage_result *res, const store_session *ses);
/* "mcpage://sessions/<id>" (percent-encoded id) into buf. */
void tools_session_uri(const char *session_id, char *buf, size_t cap);

/* json_string of s, or json_null when s is NULL. */
json_t *tools_jstr(const char *s);
/*
 * A stored UTC timestamp at the precision people read, to the minute:
 * "2025-09-27T02:00:00.000Z" becomes "2025-09-27T02:00Z" (still a valid
 * after=/before= value); anything else as it is; NULL as null.
 */
json_t *tools_jtime(const char *ts);
/*
 * The same values as cells of a record (mcpage__list_add_cells), appended
 * at cells[*n]: NULL as null; a string that is not UTF-8 is left out by
 * the page, as the object would not have it. tools_cell_time keeps its
 * text in buf.
 */
void tools_cell_str(list_cell *cells, size_t *n, const char *name, const char *s);
void tools_cell_time(list_cell *cells, size_t *n, const char *name, const char *ts, char buf[18]);
void tools_cell_int(list_cell *cells, size_t *n, const char *name, int64_t v);

/* read_with for LIST records carrying a message_id: read_message with it. */
json_t *tools_read_with_message(const json_t *record, const char *field, void *ud);

/* ---- descriptions and schemas from the window specs ------------------- */
/* A description states a spec's numbers with page_fmt_int (page/fmt.h),
   the form the builders' clamp clauses use. */

/*
 * The token budget in a tool description's words, from the pager the
 * builders clamp with: "a 4,000-token budget (max_tokens up to 20,000)".
 */
const char *tools_budget_words(const mcpage_pager *p, char *buf, size_t cap);
/*
 * Registers a tool that begins its own page (it reshapes the window's
 * arguments, adds a block after the page, or keeps what the page borrows
 * past its handler, which the runtime's one-call registration cannot):
 * t->input_schema, the tool's own object schema, with the window's
 * properties `window` (stolen; as mcpage_lines_schema() and its
 * siblings write them) merged in. MCPAGE_ENOMEM when `window` is NULL or
 * memory ran out, MCPAGE_EPARSE for an own schema without properties;
 * else as mcpage_server_add_tool().
 */
int tools_add_windowed(mcpage_server *srv, const mcpage_tool *t, json_t *window);

/*
 * outputSchema of a LIST tool's page: the contract's invariants, typed.
 * An invalid call's structuredContent is {"error": {...}} instead, and
 * clients (the official SDK) check error results against the outputSchema
 * too, hence the anyOf.
 */
#define TOOLS_LIST_OUTPUT(U)                                                                       \
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"" U "\",\"returned\",\"total_" U             \
    "\",\"has_more\"]},{\"required\":[\"error\"]}],"                                               \
    "\"properties\":{\"error\":{\"type\":\"object\"},\"" U                                         \
    "\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"                                     \
    "\"returned\":{\"type\":\"integer\",\"minimum\":0},\"total_" U "\":{\"type\":\"integer\","     \
    "\"minimum\":0},\"has_more\":{\"type\":\"boolean\"},\"offset\":{\"type\":\"integer\"},"        \
    "\"limit\":{\"type\":\"integer\"},\"stopped_by\":{\"type\":\"string\"},\"next_offset\":"       \
    "{\"type\":\"integer\"},\"next_cursor\":{\"type\":\"string\"},\"hint\":{\"type\":"             \
    "\"string\"}}}"

/*
 * outputSchema of a LIST tool in the column layout (MCPAGE_LIST_COLUMNS):
 * "columns" names the values of each record array under U, in order.
 * SHARED: property fragments (each ending in a comma) for the fields a
 * page may say once instead of per record, or "".
 */
#define TOOLS_LIST_COLUMNS_OUTPUT(U, SHARED)                                                       \
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"columns\",\"" U "\",\"returned\","           \
    "\"total_" U "\",\"has_more\"]},{\"required\":[\"error\"]}],"                                  \
    "\"properties\":{\"error\":{\"type\":\"object\"},\"columns\":{\"type\":\"array\","             \
    "\"items\":{\"type\":\"string\"},\"description\":\"The field of each value of a record, in "   \
    "order.\"},\"" U "\":{\"type\":\"array\",\"items\":{\"type\":\"array\"},\"description\":"      \
    "\"One array of values per record, in the order of columns.\"}," SHARED                        \
    "\"_truncated\":{\"description\":\"The first record's cut fields and the call that reads "     \
    "each whole.\"},"                                                                              \
    "\"returned\":{\"type\":\"integer\",\"minimum\":0},\"total_" U "\":{\"type\":\"integer\","     \
    "\"minimum\":0},\"has_more\":{\"type\":\"boolean\"},\"offset\":{\"type\":\"integer\"},"        \
    "\"limit\":{\"type\":\"integer\"},\"stopped_by\":{\"type\":\"string\"},\"next_offset\":"       \
    "{\"type\":\"integer\"},\"next_cursor\":{\"type\":\"string\"},\"hint\":{\"type\":"             \
    "\"string\"}}}"

/*
 * The outputSchema of a CONTENT-line page (read_session, read_message),
 * a CONTENT-byte page (read_raw) and a SPATIAL page (activity_map): the
 * envelope the builders write (docs/contract.md), or the error of a
 * rejected call. Extra fields are allowed (a clamp's <param>_clamped).
 */
#define TOOLS_WINDOW_OUTPUT_COMMON                                                                 \
    "\"error\":{\"type\":\"object\"},\"returned\":{\"type\":\"integer\",\"minimum\":0},"           \
    "\"has_more\":{\"type\":\"boolean\"},\"stopped_by\":{\"type\":\"string\"},"                    \
    "\"hint\":{\"type\":\"string\"}"
#define TOOLS_LINES_OUTPUT                                                                         \
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"lines\",\"returned\",\"total_lines\","       \
    "\"has_more\"]},{\"required\":[\"error\"]}],\"properties\":{" TOOLS_WINDOW_OUTPUT_COMMON       \
    ",\"lines\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"The "        \
    "window's lines, in order.\"},\"total_lines\":{\"type\":\"integer\",\"minimum\":0},"           \
    "\"start_line\":{\"type\":\"integer\"},\"end_line\":{\"type\":\"integer\"},\"start_column\":"  \
    "{\"type\":\"integer\"},\"max_lines\":{\"type\":\"integer\"},\"next_start_line\":{\"type\":"   \
    "\"integer\"},\"next_start_column\":{\"type\":\"integer\"}}}"
#define TOOLS_BYTES_OUTPUT                                                                         \
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"returned\",\"total_bytes\",\"has_more\"]},"  \
    "{\"required\":[\"error\"]}],\"properties\":{" TOOLS_WINDOW_OUTPUT_COMMON                      \
    ",\"text\":{\"type\":\"string\",\"description\":\"The window's bytes as UTF-8 text (encoding " \
    "utf-8), or base64 (encoding base64) where they are not text.\"},\"encoding\":{\"type\":"      \
    "\"string\",\"enum\":[\"utf-8\",\"base64\"]},\"total_bytes\":{\"type\":\"integer\","           \
    "\"minimum\":0},\"offset\":{\"type\":\"integer\"},\"max_bytes\":{\"type\":\"integer\"},"       \
    "\"next_offset\":{\"type\":\"integer\"}}}"
#define TOOLS_GRID_OUTPUT                                                                          \
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"cells\",\"returned\",\"total_cells\","       \
    "\"has_more\",\"region\",\"bounds\"]},{\"required\":[\"error\"]}],\"properties\":"             \
    "{" TOOLS_WINDOW_OUTPUT_COMMON                                                                 \
    ",\"cells\":{\"type\":\"array\",\"items\":{\"type\":\"array\"},"                               \
    "\"description\":\"One array of counts per row of the region.\"},\"row_labels\":{\"type\":"    \
    "\"array\",\"items\":{\"type\":\"string\"}},\"col_labels\":{\"type\":\"array\",\"items\":"     \
    "{\"type\":\"string\"}},\"total_cells\":{\"type\":\"integer\",\"minimum\":0},\"region\":"      \
    "{\"type\":\"object\"},\"bounds\":{\"type\":\"object\"},\"next_regions\":{\"type\":"           \
    "\"object\"}}}"

/* The agents the archive holds (the store's session source names), as a
 * JSON-schema enum, and in words for descriptions. sync_fold.c and sync.c
 * write these names. */
#define TOOLS_SOURCE_ENUM                                                                          \
    "\"enum\":[\"claude\",\"codex\",\"gemini\",\"copilot\",\"opencode\",\"cursor\"]"
#define TOOLS_SOURCE_LIST "claude|codex|gemini|copilot|opencode|cursor"
/* 1 when `name` is one of the source names above. */
int tools_source_known(const char *name);

/* The tool registrations, one per file. */
int tools_list_projects_register(mcpage_server *srv, tools_ctx *ctx);
int tools_list_sessions_register(mcpage_server *srv, tools_ctx *ctx);
int tools_search_conversations_register(mcpage_server *srv, tools_ctx *ctx);
int tools_read_session_register(mcpage_server *srv, tools_ctx *ctx);
int tools_read_message_register(mcpage_server *srv, tools_ctx *ctx);
int tools_read_raw_register(mcpage_server *srv, tools_ctx *ctx);
int tools_activity_map_register(mcpage_server *srv, tools_ctx *ctx);
int tools_get_session_summary_register(mcpage_server *srv, tools_ctx *ctx);
int tools_export_session_register(mcpage_server *srv, tools_ctx *ctx);
int tools_resources_register(mcpage_server *srv, tools_ctx *ctx);
int tools_usage_report_register(mcpage_server *srv, tools_ctx *ctx);
int tools_file_history_register(mcpage_server *srv, tools_ctx *ctx);
int tools_app_register(mcpage_server *srv, tools_ctx *ctx);

/* The archive's MCP App view (src/tools/app.c, docs/app.md). */
#define TOOLS_APP_URI "ui://mcpage/archive.html"
/* The _meta of the tools the view shows: hosts that render apps open it beside their results. */
#define TOOLS_APP_TOOL_META "{\"ui\":{\"resourceUri\":\"" TOOLS_APP_URI "\"}}"
/* The view's _meta: an empty policy (no origin for connections, scripts, styles or frames). */
#define TOOLS_APP_RESOURCE_META "{\"ui\":{\"csp\":{},\"prefersBorder\":true}}"

/* The shell command that resumes a session in its agent and `cwd` (NULL:
 * no cd), shell-quoted, malloc'd; NULL for an agent without one
 * (resume.c). */
char *tools_resume_command(const char *source, const char *session_id, const char *cwd);

#endif
