/*
 * The paging contract: window parsing and the page builders.
 *
 * A paginating tool describes itself once in a static spec, then for each
 * call: begin (parse and validate the window from the call's arguments),
 * query its store with the window, add units one at a time until the
 * builder says the page is full, and finish (write both copies of the page
 * into an mcpage_result: structuredContent and the text block). The
 * builder measures, stops, signs cursors and writes every envelope field,
 * so a tool cannot ship a half-formed page. See docs/contract.md.
 *
 *     mcpage_list *pg;
 *     int rc = mcpage_list_begin(pager, &spec, args, &pg);
 *     if (rc < 0)
 *         return rc;                      // out of memory or a bad spec
 *     if (rc == 0) {                      // MCPAGE_PAGE_REJECTED skips this
 *         const mcpage_list_window *w = mcpage_list_window_get(pg);
 *         ... SELECT ... WHERE (k, id) > (w->after...) LIMIT w->fetch ...
 *         while (row && mcpage_list_add(pg, record, pos, 2) == 0)
 *             row = next;
 *         mcpage_list_set_total(pg, total, generation);
 *     }
 *     return mcpage_list_finish(pg, res); // the page, or the isError result
 *
 * Families and their window parameters:
 *   LIST          limit, offset | cursor, max_tokens, fields
 *   CONTENT-line  start_line (1-based), start_column (1-based, in
 *                 characters), max_lines, max_tokens
 *   CONTENT-byte  offset, max_bytes, max_tokens
 *   SPATIAL       region {row, col, rows, cols} (0-based), max_tokens
 */
#ifndef MCPAGE_PAGE_H
#define MCPAGE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/cursor.h>
#include <mcpage/mcpage.h>
#include <mcpage/result.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Positive results of the builders (never errors):
 * MCPAGE_PAGE_REJECTED from a *_begin: the window arguments were invalid;
 *   skip the query and call *_finish, which writes the isError result.
 * MCPAGE_PAGE_FULL from an *_add: the page is complete; stop adding.
 */
#define MCPAGE_PAGE_REJECTED 1
#define MCPAGE_PAGE_FULL     2

/* Defaults and limits of a pager (see mcpage_pager_config). */
#define MCPAGE_DEFAULT_TOKENS 4000
#define MCPAGE_MAX_TOKENS     20000
#define MCPAGE_MIN_TOKENS     500
#define MCPAGE_MAX_CHARS      100000

/* How the text block (content[0]) of a page is written. */
typedef enum mcpage_text_mode {
    MCPAGE_TEXT_LINES = 0,     /* summary line, one unit per line, hint last (default) */
    MCPAGE_TEXT_STRUCTURED = 1 /* the serialized structuredContent, byte for byte */
} mcpage_text_mode;

/* Per-server settings of the contract. */
typedef struct mcpage_pager_config {
    int64_t default_tokens;     /* max_tokens when the caller omits it (4000) */
    int64_t max_tokens;         /* the largest max_tokens accepted; above it is clamped (20000) */
    int64_t min_tokens;         /* the smallest max_tokens accepted (500) */
    int64_t max_chars;          /* hard ceiling on each copy, in UTF-16 units (100000) */
    mcpage_text_mode text_mode; /* form of the text block */
} mcpage_pager_config;

/* Fills `cfg` with the defaults above. */
MCPAGE_API void mcpage_pager_config_init(mcpage_pager_config *cfg);

typedef struct mcpage_pager mcpage_pager; /* opaque: one per server */

/*
 * Creates a pager. `kr` signs and verifies cursors; it is borrowed and
 * must outlive the pager. `cfg` may be NULL for the defaults.
 */
MCPAGE_API int mcpage_pager_new(const mcpage_pager_config *cfg, const mcpage_keyring *kr,
                                mcpage_pager **out);
MCPAGE_API void mcpage_pager_free(mcpage_pager *p);
MCPAGE_API const mcpage_keyring *mcpage_pager_keyring(const mcpage_pager *p);
/*
 * The pager's settings, e.g. max_chars for a tool's
 * mcpage_tool.max_result_chars (no copy of a page is longer).
 */
MCPAGE_API const mcpage_pager_config *mcpage_pager_settings(const mcpage_pager *p);

/*
 * Writes an invalid-argument result in the contract's error shape for an
 * argument a tool checks itself (a date filter, an id): isError, a text
 * naming the parameter, the value received, what is expected and one
 * valid example call (`example` is written after "<tool> with "), and
 * structuredContent {"error": {"code": "invalid_argument", "param",
 * "got", "expected", "example", "message"}}. `got` may be NULL.
 */
MCPAGE_API int mcpage_reject_argument(mcpage_result *res, const char *tool, const char *param,
                                      const json_t *got, const char *expected, const char *example);

/* ------------------------------------------------------------------ LIST */

/*
 * How a LIST page carries its records (contract 1.1, docs/contract.md).
 * OBJECTS: each record a JSON object in structuredContent and one compact
 * JSON object per line in the text copy. COLUMNS: structuredContent has
 * "columns": [names] and each record as an array of its values in that
 * order; the text copy has a tab-separated header line of the names, then
 * one tab-separated line per record (tab, newline, carriage return and
 * backslash in a value written as \t, \n, \r and \\; null as nothing;
 * numbers, booleans, arrays and objects as compact JSON). The columns are
 * the selected fields in the order of the spec's `fields`, the same on
 * every page of a walk (`fields` is part of the cursor's fingerprint).
 */
typedef enum mcpage_list_layout {
    MCPAGE_LIST_OBJECTS = 0, /* one object per record (default) */
    MCPAGE_LIST_COLUMNS = 1  /* columns once, a value array per record; needs `fields` */
} mcpage_list_layout;

/*
 * A LIST tool, described once (usually a static const). All strings are
 * borrowed for the life of the pager's use of the spec.
 */
typedef struct mcpage_list_spec {
    const char *tool;          /* the tool's name, e.g. "list_sessions" */
    const char *unit;          /* plural noun: items key and total_<unit>, e.g. "sessions" */
    int64_t default_limit;     /* limit when omitted */
    int64_t max_limit;         /* larger limits are lowered to this and disclosed */
    const char *const *fields; /* valid names for `fields` (NULL-terminated), or NULL:
                                  the tool takes no `fields` and records are not projected */
    const char *const *default_fields; /* the concise default set, or NULL for all */
    const char *const *id_fields;      /* always kept, whatever `fields` says */
    const char *narrow_hint;           /* a sentence naming this tool's filters, with real syntax,
                                          e.g. "Narrow with project=... or after=YYYY-MM-DD." */
    bool relevance_order;              /* order depends on corpus statistics (full-text rank) */
    const char *stable_order_hint;     /* relevance walks: how to get a stable order,
                                          e.g. "Pass sort=\"newest\" for a stable order." */
    /* Extra arguments to leave out of the cursor fingerprint (NULL-terminated),
       beyond the window parameters, which are always left out. */
    const char *const *fingerprint_skip;
    /*
     * Builds the call that reads the full value of `field` of `record`
     * (the record before projection) in pages: a new JSON object
     * {"tool": "...", "arguments": {...}}, or NULL when there is none.
     * Called only for a record too large for the whole budget. May be NULL.
     */
    json_t *(*read_with)(const json_t *record, const char *field, void *ud);
    void *ud;                  /* passed to read_with */
    mcpage_list_layout layout; /* how records are written (default MCPAGE_LIST_OBJECTS) */
} mcpage_list_spec;

/* The window a LIST tool queries its store with. Read-only. */
typedef struct mcpage_list_window {
    /* Logical offset of the first record (from the cursor if any). When `resume` is set the
       query starts strictly after `after` and offset only numbers the records (offset,
       next_offset); otherwise the query skips offset records. */
    int64_t offset;
    int64_t limit;               /* records wanted, after clamping */
    int64_t fetch;               /* rows to fetch: limit + 1, so has_more needs no count */
    int64_t max_tokens;          /* the token budget, after clamping */
    bool resume;                 /* a cursor gave a keyset position: query strictly after it */
    int nparts;                  /* parts in `after` */
    const mcpage_keypart *after; /* the keyset position (sort key of the last record
                                    returned, ending in a unique key) */
    int64_t total;               /* the total carried by the cursor, or -1: count it */
    int64_t generation;          /* the store generation that total was counted at */
    const json_t *args;          /* the call's arguments, as given */
    /* Hash of the arguments the walk depends on (all but the window and
       fingerprint_skip): with the tool and the generation, what a total
       depends on, so a tool may key a cache of counts with it. */
    uint8_t fingerprint[MCPAGE_FINGERPRINT_LEN];
} mcpage_list_window;

typedef struct mcpage_list mcpage_list; /* opaque: one page being built */

/*
 * Parses the window from `args` (a JSON object, or NULL for none).
 * Returns 0 with *out open; MCPAGE_PAGE_REJECTED with *out open and the
 * rejection recorded (invalid window, bad cursor): call mcpage_list_finish
 * at once; or a negative status (*out NULL): out of memory, or a spec that
 * breaks its own rules (MCPAGE_EINVAL).
 */
MCPAGE_API int mcpage_list_begin(const mcpage_pager *p, const mcpage_list_spec *spec,
                                 const json_t *args, mcpage_list **out);
MCPAGE_API const mcpage_list_window *mcpage_list_window_get(const mcpage_list *pg);
/*
 * Adds the next record in walk order and its keyset position (`nparts`
 * parts, copied). Steals the reference to `record` (a JSON object), also
 * on failure. Returns 0 to ask for more, MCPAGE_PAGE_FULL when the page is
 * complete (the record may have been the one past the window: it is then
 * not on this page), or a negative status.
 */
MCPAGE_API int mcpage_list_add(mcpage_list *pg, json_t *record, const mcpage_keypart *pos,
                               int nparts);
/*
 * Says one field once per page instead of on every record, for a value
 * the walk's filter fixes (list_sessions with project=...: every record's
 * project is the same). Call after begin and before the first add; `field`
 * must be one of the spec's `fields` other than an identifier. The value
 * is the first record's; it is written at page level in structuredContent
 * (`"project": "api"`, next to the records) and as a line `project: api`
 * after the summary in the text copy, and left out of every record. A
 * record whose value differs ends the page before it (`stopped_by`
 * "limit", the walk goes on from it), so a page never hides a difference.
 * Returns 0, MCPAGE_EINVAL, or MCPAGE_ESTATE after the first add.
 */
MCPAGE_API int mcpage_list_share(mcpage_list *pg, const char *field);
/*
 * Whether the page shows `field` of its records (or says it once, as the
 * shared field): false for a field the `fields` argument, or the spec's
 * default_fields, leaves out. A tool may then leave it out of the records
 * it adds, saving the work of making it (read_with is handed the record
 * without it too). True for a name the spec does not list.
 */
MCPAGE_API bool mcpage_list_wants(const mcpage_list *pg, const char *field);
/*
 * A generation names the state of the data a total was counted on: a
 * number that changes whenever records may have been added or removed (a
 * store's write counter, a data file's modification time, a version
 * counter an in-memory source bumps on every change). The cursor carries
 * the total with its generation, so a later page may skip the count.
 *
 * MCPAGE_GENERATION_NONE: the source has no such number (a directory
 * walked afresh, data counted as cheaply as it is listed, a static table
 * compiled in). Pass it and count on every page; never reuse a cursor's
 * total then, since a cursor may come from another process or an
 * earlier run whose data differed.
 */
#define MCPAGE_GENERATION_NONE 0

/*
 * The exact total of the walk and the generation of the data it was
 * counted at (see MCPAGE_GENERATION_NONE). Required before finish (unless
 * rejected). A remembered total may be reused, instead of counting again,
 * only when window->total >= 0 and window->generation equals the data's
 * current generation (and that generation is not MCPAGE_GENERATION_NONE):
 * then pass window->total and the current generation.
 */
MCPAGE_API void mcpage_list_set_total(mcpage_list *pg, int64_t total, int64_t generation);
/*
 * The current generation of the store, when the tool reused the total
 * from the cursor (set_total sets it too). Relevance walks compare it with
 * the cursor's generation to disclose order_may_have_shifted.
 */
MCPAGE_API void mcpage_list_set_generation(mcpage_list *pg, int64_t generation);
/*
 * Writes the page (or the rejection) into `res` (cleared first) and frees
 * `pg` in every case. Returns 0 or a negative status.
 */
MCPAGE_API int mcpage_list_finish(mcpage_list *pg, mcpage_result *res);
/* Frees a page without writing it (e.g. the store failed). NULL is fine. */
MCPAGE_API void mcpage_list_abort(mcpage_list *pg);

/* ---------------------------------------------------------- CONTENT-line */

typedef struct mcpage_lines_spec {
    const char *tool;          /* the tool's name, e.g. "read_message" */
    int64_t default_max_lines; /* max_lines when omitted */
    int64_t max_max_lines;     /* larger max_lines are lowered to this and disclosed */
    const char *narrow_hint;   /* optional: a sentence on narrowing, with this tool's params */
} mcpage_lines_spec;

typedef struct mcpage_lines_window {
    int64_t start_line;   /* 1-based first line */
    int64_t start_column; /* 1-based character inside start_line where the page begins */
    int64_t max_lines;    /* lines wanted, after clamping */
    int64_t max_tokens;   /* the token budget, after clamping */
    const json_t *args;   /* the call's arguments, as given */
} mcpage_lines_window;

typedef struct mcpage_lines mcpage_lines; /* opaque */

/* As mcpage_list_begin, for a line window. */
MCPAGE_API int mcpage_lines_begin(const mcpage_pager *p, const mcpage_lines_spec *spec,
                                  const json_t *args, mcpage_lines **out);
MCPAGE_API const mcpage_lines_window *mcpage_lines_window_get(const mcpage_lines *pg);
/* The total number of lines of the document. Required before finish. */
MCPAGE_API void mcpage_lines_set_total(mcpage_lines *pg, int64_t total_lines);
/*
 * Adds the next line (without its newline), starting with line
 * window->start_line, whole: the builder skips to start_column itself.
 * Copies the bytes. Returns 0 for more, MCPAGE_PAGE_FULL, or a negative
 * status.
 */
MCPAGE_API int mcpage_lines_add(mcpage_lines *pg, const char *line, size_t len);
MCPAGE_API int mcpage_lines_finish(mcpage_lines *pg, mcpage_result *res);
MCPAGE_API void mcpage_lines_abort(mcpage_lines *pg);

/* ---------------------------------------------------------- CONTENT-byte */

typedef struct mcpage_bytes_spec {
    const char *tool;          /* the tool's name */
    int64_t default_max_bytes; /* max_bytes when omitted */
    int64_t max_max_bytes;     /* larger max_bytes are lowered to this and disclosed */
    const char *narrow_hint;   /* optional */
} mcpage_bytes_spec;

typedef struct mcpage_bytes_window {
    int64_t offset;     /* first byte */
    int64_t max_bytes;  /* bytes wanted, after clamping */
    int64_t max_tokens; /* the token budget, after clamping */
    const json_t *args; /* the call's arguments, as given */
} mcpage_bytes_window;

typedef struct mcpage_bytes mcpage_bytes; /* opaque */

/*
 * As mcpage_list_begin, for a byte window; the window (owned by the page,
 * valid until finish or abort) says which bytes to read.
 */
MCPAGE_API int mcpage_bytes_begin(const mcpage_pager *p, const mcpage_bytes_spec *spec,
                                  const json_t *args, mcpage_bytes **out);
MCPAGE_API const mcpage_bytes_window *mcpage_bytes_window_get(const mcpage_bytes *pg);
/*
 * Hands the bytes of the window: data[0..len) starts at window->offset
 * (len may be less than max_bytes near the end; extra bytes are ignored),
 * and the document is total_bytes long. Copies the bytes.
 */
MCPAGE_API int mcpage_bytes_set(mcpage_bytes *pg, const void *data, size_t len,
                                int64_t total_bytes);
MCPAGE_API int mcpage_bytes_finish(mcpage_bytes *pg, mcpage_result *res);
MCPAGE_API void mcpage_bytes_abort(mcpage_bytes *pg);

/* --------------------------------------------------------------- SPATIAL */

typedef struct mcpage_grid_spec {
    const char *tool;        /* the tool's name */
    int64_t default_rows;    /* region.rows when omitted */
    int64_t max_rows;        /* larger rows are lowered to this and disclosed */
    int64_t default_cols;    /* region.cols when omitted */
    int64_t max_cols;        /* larger cols are lowered to this and disclosed */
    const char *narrow_hint; /* optional */
    bool a1_labels;          /* label columns A, B, ... and rows 1, 2, ... (else 0-based numbers) */
} mcpage_grid_spec;

/* A rectangle of the grid: 0-based top-left corner and size. */
typedef struct mcpage_region {
    int64_t row;  /* first row, 0-based */
    int64_t col;  /* first column, 0-based */
    int64_t rows; /* number of rows */
    int64_t cols; /* number of columns */
} mcpage_region;

typedef struct mcpage_grid_window {
    mcpage_region region; /* as requested after clamping rows and cols to their maxima;
                             after set_bounds, also clipped to the grid */
    int64_t max_tokens;   /* the token budget, after clamping */
    const json_t *args;   /* the call's arguments, as given */
} mcpage_grid_window;

typedef struct mcpage_grid mcpage_grid; /* opaque */

/* As mcpage_list_begin, for a region of a grid. */
MCPAGE_API int mcpage_grid_begin(const mcpage_pager *p, const mcpage_grid_spec *spec,
                                 const json_t *args, mcpage_grid **out);
/*
 * The size of the whole grid. Required before adding cells: it clips the
 * region, which mcpage_grid_window_get then shows.
 */
MCPAGE_API void mcpage_grid_set_bounds(mcpage_grid *pg, int64_t rows, int64_t cols);
MCPAGE_API const mcpage_grid_window *mcpage_grid_window_get(const mcpage_grid *pg);
/*
 * A grid's own row and column names (project names, dates) in place of
 * numbers: `label` returns the label of row `index` (is_row) or column
 * `index`, or NULL for an index it does not know (the number is used). The
 * string must stay valid until finish. Call before adding cells. Labels go
 * to row_labels and col_labels, the text copy's header row and first
 * column, and the summary line; the page is measured with them.
 */
typedef const char *(*mcpage_grid_label_fn)(void *ud, bool is_row, int64_t index);
MCPAGE_API void mcpage_grid_set_labels(mcpage_grid *pg, mcpage_grid_label_fn label, void *ud);
/*
 * Adds the next cell of the (clipped) region in row-major order. Steals
 * `value` (any JSON value; NULL means null). Returns 0 for more,
 * MCPAGE_PAGE_FULL, or a negative status.
 */
MCPAGE_API int mcpage_grid_add(mcpage_grid *pg, json_t *value);
MCPAGE_API int mcpage_grid_finish(mcpage_grid *pg, mcpage_result *res);
MCPAGE_API void mcpage_grid_abort(mcpage_grid *pg);

/* ---------------------------------------------------------- inputSchema */

/*
 * The inputSchema "properties" of a family's window parameters, to merge
 * into the tool's own: each declares its type, minimum and default, and
 * states its maximum in the description, never as "maximum" (a schema
 * maximum makes hosts reject what the contract clamps). A new object, or
 * NULL when out of memory or the spec is invalid. What is generated is
 * remembered with a copy of the spec, so a tool registered with
 * mcpage_server_add_tool whose inputSchema holds these properties
 * unchanged (and whose name the spec gives) has a bad window answered
 * with the builder's remedy, as with mcpage_server_add_list_tool.
 */
MCPAGE_API json_t *mcpage_list_schema(const mcpage_pager *p, const mcpage_list_spec *spec);
MCPAGE_API json_t *mcpage_lines_schema(const mcpage_pager *p, const mcpage_lines_spec *spec);
MCPAGE_API json_t *mcpage_bytes_schema(const mcpage_pager *p, const mcpage_bytes_spec *spec);
MCPAGE_API json_t *mcpage_grid_schema(const mcpage_pager *p, const mcpage_grid_spec *spec);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_PAGE_H */
