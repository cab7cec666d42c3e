/*
 * The SQL both store backends share (store_sql.c): a statement builder,
 * the list filters, the column lists and row layouts of projects,
 * sessions, messages and search hits, keyset orders, and the assembly of
 * raw chunks into a window. A backend describes how its engine spells
 * what differs (store_sql_dialect) and reads its result rows through
 * store_sql_row; everything else is written once, so a new filter or a
 * third backend is written once too. No database header here.
 * Internal to src/store/.
 */
#ifndef MCPAGE_STORE_SQL_H
#define MCPAGE_STORE_SQL_H

#include "store/store_backend.h"

/*
 * Relevance by role (issue 34): a tool's output (role "tool": command
 * output, file reads, grep hits) scores this share of what the same
 * words score in a user's or an assistant's message, so for equal
 * relevance the people's words come first. The SQLite backend multiplies
 * its bm25 by it, the PostgreSQL backend its ts_rank (mcpage_rank(tsv, q,
 * role), pg_schema.c); measured with the
 * search-quality suite (tests/quality, docs/performance.md). The SQL
 * spelling is the same number.
 */
#define STORE_RANK_TOOL_WEIGHT     0.1
#define STORE_RANK_TOOL_WEIGHT_SQL "0.1"

#define STORE_SQL_MAX    4096 /* bytes of one generated statement */
#define STORE_SQL_PARAMS 16   /* parameters of one generated statement */

/*
 * How one engine spells what the shared SQL needs. Shared SQL text is
 * written with `?` for each parameter and identifiers that are keywords
 * in some engine between backquotes (m.`timestamp`); the builder turns
 * both into the engine's spelling as it appends.
 */
typedef struct store_sql_dialect {
    int numbered;         /* parameters are $1, $2, ... (PostgreSQL); else `?` */
    char quote;           /* quotes a backquoted identifier ('"'), or 0: left bare */
    const char *true_sql; /* a condition that always holds: "1", "true" */
    const char *find;     /* find(haystack, needle) > 0 when it holds it: "instr", "strpos" */
    /* An aggregate groups(sid, key, id, ordinal, flags) over every match,
     * without GROUP BY: JSON [[sid, key, id, n, first ordinal, last
     * ordinal], ...], a session's id the first of its rows in (key, id)
     * order (flags: 1 key descending, 2 id descending), a number key as
     * its IEEE bits (mcpage_f64); NULL when the backend has none (window
     * functions pick instead). */
    const char *groups;
} store_sql_dialect;

/* One parameter of a generated statement. */
typedef struct store_sql_param {
    store_key_type type; /* STORE_KEY_INT, _REAL or _TEXT */
    int64_t i;           /* the value of an INT */
    double r;            /* of a REAL */
    const char *s;       /* of a TEXT (borrowed: it outlives the statement) */
} store_sql_param;

/*
 * A statement built piece by piece with its parameters, fixed size: past
 * STORE_SQL_MAX bytes or STORE_SQL_PARAMS parameters it overflows, and
 * the backend refuses to run it (MCPAGE_ERANGE). Start one with
 * `store_sql q = {.d = &dialect};`.
 */
typedef struct store_sql {
    const store_sql_dialect *d;               /* the engine's spelling */
    char text[STORE_SQL_MAX];                 /* the statement so far */
    size_t len;                               /* bytes in text */
    int overflow;                             /* text or parameters ran out of room */
    store_sql_param params[STORE_SQL_PARAMS]; /* parameters in order */
    int nparams;                              /* parameters bound */
    int placeholders;                         /* `?` appended so far (numbered dialects) */
    int keeps_pending; /* reads no session's message count or time span: counts a backend
                          keeps pending for the messages being added stay pending */
} store_sql;

/* Appends SQL text in the shared spelling (above). */
void store_sql_add(store_sql *q, const char *part);
/* Binds the next parameter. */
void store_sql_text(store_sql *q, const char *v);
void store_sql_int(store_sql *q, int64_t v);
void store_sql_real(store_sql *q, double v);
/* Binds one part of a keyset position as its type. */
void store_sql_key(store_sql *q, const store_key_part *p);
/* Adds " WHERE <true>", to which the filters append " AND ..." conditions. */
void store_sql_where(store_sql *q);
/* Adds " AND <cond>" binding one text value, when `v` is set. */
void store_sql_where_text(store_sql *q, const char *cond, const char *v);
/*
 * Drops a " WHERE <true>" added at `mark` (the length before it) that no
 * condition followed, so a bare count(*) keeps SQLite's count
 * optimization (it counts b-tree cells instead of visiting rows: 0.009 ms
 * against 0.095 ms for 9,780 sessions).
 */
void store_sql_where_end(store_sql *q, size_t mark);
/* Adds ORDER BY, the page's LIMIT and its OFFSET (when not keyset). */
void store_sql_page(store_sql *q, const char *order, const store_page *pg);
/*
 * When the page resumes after a keyset position: checks that its parts
 * have `types`, then appends `cmp` (a row comparison with two `?`) and
 * binds them. 0, or MCPAGE_EINVAL for a position of another list.
 */
int store_sql_after(store *s, store_sql *q, const store_page *pg, const char *cmp,
                    const store_key_type types[2]);

/* ---- the lists' filters and orders ---------------------------------- */

/*
 * The viewer's rule (store_viewer_set) on the sessions aliased `alias`:
 * " AND (alias.owner = ? OR alias.project_id IN (ids))"; nothing when
 * `v` is NULL. Every read that reaches sessions applies it.
 */
void store_sql_visible(store_sql *q, const struct store_view *v, const char *alias);
/* The projects a list reads, aliased p: the table itself, or for a viewer
 * each project of which it sees a session, with what those add up to. */
void store_sql_projects_from(store_sql *q, const struct store_view *v);
/* Projects (p): name_contains, source. Adds WHERE. */
void store_sql_project_where(store_sql *q, const store_project_filter *f);
/* Sessions (s): project (name or path), source, after, before, model,
 * branch, without_project. Adds WHERE. */
void store_sql_session_where(store_sql *q, const store_session_filter *f);
/* Search hits (m messages, s sessions): project, source, role, tool,
 * after, before, has_error, each as " AND ..." after the backend's match
 * condition. */
void store_sql_search_and(store_sql *q, const store_search_filter *f);
/*
 * The projects list's total order: the ORDER BY clause, the keyset
 * comparison to append after WHERE (two `?`), and the part types of a
 * position.
 */
void store_project_order(store_project_sort sort, const char **order, const char **cmp,
                         store_key_type types[2]);
/* The sessions list's: by (started_at, session_id), newest or oldest first. */
void store_session_order(int newest, const char **order, const char **cmp, store_key_type types[2]);

/* ---- columns and rows ----------------------------------------------- */

/* A project row: read by store_sql_project_row. */
#define STORE_SQL_PROJECT_COLS                                                                     \
    "p.id, p.name, p.path, p.sources, p.session_count, p.message_count, p.first_activity, "        \
    "p.last_activity"
/* A session row (s sessions, p its project): read by store_sql_session_row. */
#define STORE_SQL_SESSION_COLS                                                                     \
    "s.session_id, s.source, s.project_id, p.name, s.title, s.started_at, s.ended_at, s.model, "   \
    "s.git_branch, s.message_count, s.parent_session_id, s.source_path, s.hostname, s.raw_size"
/* The sessions with their projects, for STORE_SQL_SESSION_COLS. */
#define STORE_SQL_SESSION_FROM "sessions s LEFT JOIN projects p ON p.id = s.project_id"

/*
 * A result row as the shared decoders read it: the backend's accessors
 * over its own result (`res`: a statement, a result and row number).
 * Columns count from 0. text() is NULL for SQL NULL; int64() and real()
 * are 0 for it.
 */
typedef struct store_sql_row {
    const char *(*text)(void *res, int col);
    int64_t (*int64)(void *res, int col);
    double (*real)(void *res, int col);
    void *res;
} store_sql_row;

/* Column `col` as a malloc'd string into *out; NULL for NULL, and for ''
 * when `opt`. 0 or MCPAGE_ENOMEM. */
int store_sql_col_dup(const store_sql_row *r, int col, int opt, char **out);
/* A row of STORE_SQL_PROJECT_COLS with its position in `sort` order. */
int store_sql_project_row(const store_sql_row *r, store_project_sort sort, store_project *p);
/* A row of STORE_SQL_SESSION_COLS with its position. */
int store_sql_session_row(const store_sql_row *r, store_session *out);
/*
 * A message row: message_id, session_id, ordinal, role, timestamp, text,
 * tool_name, tool_input, is_error, line_no, byte_offset, byte_length,
 * tool_call_id (each backend's MESSAGE_COLS, which spell the text's
 * table apart).
 */
int store_sql_message_row(const store_sql_row *r, store_message *m);
/*
 * A search hit's columns message_id, session_id, project, role,
 * timestamp (0-4), ordinal (6) and rank (7), and its position in `sort`
 * order; the snippet (from column 5) and what precedes the hit are the
 * backend's.
 */
int store_sql_hit_row(const store_sql_row *r, store_search_sort sort, store_hit *h);
/*
 * A search grouped by session (store_search_filter.by_session), after the
 * backend's `WITH h AS [MATERIALIZED] (SELECT id, sid, ordinal, ts, rk ...)`
 * of every match: closes it, picks each session's representative match
 * (`g`: id, sid, ordinal, ts, rk, with n, fid, lid), applies the page's
 * keyset and order on `g.rk, g.id` (RELEVANCE) or `g.ts, g.id` (NEWEST,
 * OLDEST) and its limit. With the dialect's `groups`, one pass over the
 * matches (no sort, memory per session); without, window functions over
 * them (two sorts). The backend selects from `g` (joined as it likes) after.
 */
int store_sql_search_groups(store *s, store_sql *q, const store_search_filter *f,
                            const store_page *pg);
/* The same order, for the select that wraps the page (`g.` columns). */
const char *store_sql_search_groups_order(const store_search_filter *f);

/*
 * Raw bytes: copies the part of one stored chunk (`data`, `len` bytes
 * from session offset `at`; chunks come in offset order) that continues
 * a window [*filled, end) of `out`, whose first byte is session offset
 * `offset`, and advances *filled. 1 while the window wants the next
 * chunk, 0 when it is full or this chunk leaves a gap (stored chunks
 * have none: what is contiguous is kept).
 */
int store_raw_take(unsigned char *out, int64_t offset, int64_t end, int64_t *filled, int64_t at,
                   const unsigned char *data, int64_t len);

/*
 * One stored chunk of session `id` (session offset `at`, stored as
 * `codec`) decoded through the handle's codec (store_codec.h): *plain
 * (valid until the next call on s) and *plen. 0, MCPAGE_ENOMEM, or
 * MCPAGE_ESTORE with "raw bytes damaged: session ..., chunk at offset
 * ..." and the fix in store_errmsg(): a damaged chunk is never read as
 * other bytes.
 */
int store_raw_chunk(store *s, const char *id, int64_t at, int64_t codec, const unsigned char *data,
                    int64_t len, const unsigned char **plain, int64_t *plen);

#endif
