/*
 * The SQLite store backend: every operation of store_ops on one SQLite
 * connection (WAL, busy timeout, cached prepared statements). Lists are
 * built from a fixed-size SQL builder so each filter combination is one
 * cached statement; keyset positions become row-value comparisons that
 * the indexes created in sqlite_schema.c serve directly.
 */
#define _GNU_SOURCE /* F_OFD_SETLKW */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/sqlite/sqlite_internal.h"

#define CONN(s) ((sq_conn *)(s)->impl)

/* ---- the statement cache -------------------------------------------- */

/*
 * The failure of the statement that just failed on the connection: the
 * budget's when it stopped it; a damaged store (the file corrupt or not
 * a database: remembered, so nothing writes into it again) or a
 * read-only one with a message naming the fix; else `status` with
 * "what: SQLite's message".
 */
static int sq_fail(store *s, int status, const char *what)
{
    sq_conn *c = CONN(s);
    if (s->stopped)
        return store_budget_fail(s, s->stopped);
    int code = sqlite3_errcode(c->db) & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
        c->damaged = 1;
        store_sqlite__mark_damaged(c);
        return store_sqlite__damaged(s, c->path, sqlite3_errmsg(c->db));
    }
    if (code == SQLITE_READONLY)
        return store_sqlite__readonly(s, c->path, s->writable);
    return store_fail(s, status, "%s: %s", what, sqlite3_errmsg(c->db));
}

static int sq_err(store *s, const char *what)
{
    return sq_fail(s, MCPAGE_ESTORE, what);
}

/* A search statement failed: stopped by the budget, a damaged store,
 * else the engine rejected the query. */
static int sq_search_err(store *s)
{
    return sq_fail(s, MCPAGE_EPARSE, "search query rejected");
}

/*
 * SQLite calls this every SQ_PROGRESS_OPS virtual machine steps of any
 * statement on the connection, nested ones included (FTS5 reads its
 * index through statements of its own, so a prefix expansion is checked
 * too): non-zero stops the statement with SQLITE_INTERRUPT.
 */
static int sq_progress(void *ud)
{
    store *s = ud;
    if (s->deadline_us <= 0 && s->stop == NULL)
        return 0;
    int rc = store_budget_check(s);
    if (rc < 0)
        s->stopped = rc;
    return rc < 0;
}

/* A cached statement for `sql`, reset and with its bindings cleared. */
/* Relevance: bm25() of the match, lower is better (sqlite_rank.c). */
#define SQ_BM25 "mcpage_bm25(messages_fts)"

static int sq_prep(store *s, const char *sql, sqlite3_stmt **out)
{
    sq_conn *c = CONN(s);
    for (size_t i = 0; i < c->ncache; i++) {
        if (strcmp(c->cache[i].sql, sql) == 0) {
            sqlite3_reset(c->cache[i].st);
            sqlite3_clear_bindings(c->cache[i].st);
            *out = c->cache[i].st;
            return 0;
        }
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return sq_err(s, "prepare");
    char *copy = store_strdup(sql);
    if (!copy) {
        sqlite3_finalize(st);
        return MCPAGE_ENOMEM;
    }
    size_t slot;
    if (c->ncache < SQ_CACHE_MAX) {
        slot = c->ncache++;
    } else {
        slot = c->evict;
        c->evict = (c->evict + 1) % SQ_CACHE_MAX;
        sqlite3_finalize(c->cache[slot].st);
        free(c->cache[slot].sql);
    }
    c->cache[slot].sql = copy;
    c->cache[slot].st = st;
    *out = st;
    return 0;
}

/* Runs a statement that returns no rows. */
static int sq_done(store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sq_err(s, what);
    return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Column i as a malloc'd string; NULL for NULL, and for '' when `opt`. */
static int col_dup(sqlite3_stmt *st, int i, int opt, char **out)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    *out = NULL;
    if (!t)
        return opt ? 0 : ((*out = store_strdup("")) ? 0 : MCPAGE_ENOMEM);
    if (opt && !*t)
        return 0;
    *out = store_strdup((const char *)t);
    return *out ? 0 : MCPAGE_ENOMEM;
}

/* ---- the SQL builder ------------------------------------------------ */

typedef struct sq_bind {
    int type; /* STORE_KEY_INT, _REAL or _TEXT */
    int64_t i;
    double r;
    const char *s;
} sq_bind;

typedef struct sq_sql {
    char text[SQ_SQL_MAX];
    size_t len;
    int overflow;
    sq_bind binds[SQ_BIND_MAX];
    int nbind;
} sq_sql;

static void sql_add(sq_sql *q, const char *part)
{
    size_t n = strlen(part);
    if (q->len + n + 1 > sizeof q->text) {
        q->overflow = 1;
        return;
    }
    memcpy(q->text + q->len, part, n + 1);
    q->len += n;
}

/*
 * Ends a count's WHERE clause begun with " WHERE 1" at `mark` (the length
 * before it): when no condition followed, the clause goes, so that a bare
 * count(*) keeps SQLite's count optimization (it counts b-tree cells
 * instead of visiting rows: 0.009 ms against 0.095 ms for 9,780 sessions).
 */
static void sql_where_end(sq_sql *q, size_t mark)
{
    if (!q->overflow && q->len == mark + strlen(" WHERE 1")) {
        q->len = mark;
        q->text[mark] = '\0';
    }
}

static void sql_text(sq_sql *q, const char *v)
{
    if (q->nbind >= SQ_BIND_MAX) {
        q->overflow = 1;
        return;
    }
    q->binds[q->nbind++] = (sq_bind){.type = STORE_KEY_TEXT, .s = v};
}

static void sql_int(sq_sql *q, int64_t v)
{
    if (q->nbind >= SQ_BIND_MAX) {
        q->overflow = 1;
        return;
    }
    q->binds[q->nbind++] = (sq_bind){.type = STORE_KEY_INT, .i = v};
}

static void sql_real(sq_sql *q, double v)
{
    if (q->nbind >= SQ_BIND_MAX) {
        q->overflow = 1;
        return;
    }
    q->binds[q->nbind++] = (sq_bind){.type = STORE_KEY_REAL, .r = v};
}

/* Adds " AND <cond>" binding one text value when `v` is set. */
static void sql_where_text(sq_sql *q, const char *cond, const char *v)
{
    if (!v || !*v)
        return;
    sql_add(q, " AND ");
    sql_add(q, cond);
    sql_text(q, v);
}

static int sql_prepare(store *s, sq_sql *q, sqlite3_stmt **st)
{
    if (q->overflow)
        return store_fail(s, MCPAGE_ERANGE, "generated statement too long");
    int rc = sq_prep(s, q->text, st);
    if (rc < 0)
        return rc;
    for (int i = 0; i < q->nbind; i++) {
        const sq_bind *b = &q->binds[i];
        if (b->type == STORE_KEY_INT)
            sqlite3_bind_int64(*st, i + 1, b->i);
        else if (b->type == STORE_KEY_REAL)
            sqlite3_bind_double(*st, i + 1, b->r);
        else
            bind_text(*st, i + 1, b->s);
    }
    return 0;
}

static void key_bind(sq_sql *q, const store_key_part *p)
{
    if (p->type == STORE_KEY_INT)
        sql_int(q, p->i);
    else if (p->type == STORE_KEY_REAL)
        sql_real(q, p->r);
    else
        sql_text(q, p->s);
}

/* Adds ORDER BY, the page's LIMIT and its OFFSET (when not keyset). */
static void sql_page(sq_sql *q, const char *order, const store_page *pg)
{
    sql_add(q, " ORDER BY ");
    sql_add(q, order);
    sql_add(q, " LIMIT ?");
    sql_int(q, pg->limit);
    if (!store_page_keyset(pg)) {
        sql_add(q, " OFFSET ?");
        sql_int(q, pg->offset);
    }
}

/* Grows a row array by one zeroed row; `cap` tracks its capacity. */
static void *rows_grow(void *rows, size_t count, size_t *cap, size_t elem)
{
    if (count < *cap)
        return rows;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *n = realloc(rows, ncap * elem);
    if (!n)
        return NULL;
    memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
    *cap = ncap;
    return n;
}

/* ---- projects ------------------------------------------------------- */

static void project_where(sq_sql *q, const store_project_filter *f)
{
    sql_add(q, " WHERE 1");
    sql_where_text(q, "instr(lower(p.name), lower(?)) > 0", f->name_contains);
    sql_where_text(q, "instr(',' || p.sources || ',', ',' || ? || ',') > 0", f->source);
}

static int sqlite_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                                store_projects *out)
{
    sq_sql q = {0};
    sqlite3_stmt *st = NULL;
    sql_add(&q, "SELECT p.id, p.name, p.path, p.sources, p.session_count, p.message_count, "
                "p.first_activity, p.last_activity FROM projects p");
    project_where(&q, f);
    const char *order, *cmp;
    store_key_type types[2];
    store_project_order(f->sort, &order, &cmp, types);
    if (store_page_keyset(pg)) {
        int rc = store_key_check(s, pg->after, types, 2);
        if (rc < 0)
            return rc;
        sql_add(&q, cmp);
        key_bind(&q, &pg->after->part[0]);
        key_bind(&q, &pg->after->part[1]);
    }
    sql_page(&q, order, pg);
    int rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_project *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_project *p = &rows[out->count++];
        p->id = sqlite3_column_int64(st, 0);
        if (col_dup(st, 1, 0, &p->name) || col_dup(st, 2, 0, &p->path) ||
            col_dup(st, 3, 0, &p->sources) || col_dup(st, 6, 1, &p->first_activity) ||
            col_dup(st, 7, 1, &p->last_activity))
            goto nomem;
        p->session_count = sqlite3_column_int64(st, 4);
        p->message_count = sqlite3_column_int64(st, 5);
        p->key.nparts = 2;
        if (f->sort == STORE_PROJECTS_NAME)
            store_key_set_text(&p->key.part[0], p->name);
        else if (f->sort == STORE_PROJECTS_SIZE)
            store_key_set_int(&p->key.part[0], p->message_count);
        else
            store_key_set_text(&p->key.part[0], (const char *)sqlite3_column_text(st, 7));
        store_key_set_int(&p->key.part[1], p->id);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_projects_free(out);
        return sq_err(s, "projects");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_projects_free(out);
    return MCPAGE_ENOMEM;
}

static int count_query(store *s, sq_sql *q, int64_t *n, int status_on_error)
{
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(s, q, &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (status_on_error == MCPAGE_EPARSE)
        return sq_search_err(s);
    return sq_err(s, "count");
}

static int sqlite_projects_count(store *s, const store_project_filter *f, int64_t *n)
{
    sq_sql q = {0};
    sql_add(&q, "SELECT count(*) FROM projects p");
    project_where(&q, f);
    sql_where_end(&q, strlen("SELECT count(*) FROM projects p"));
    return count_query(s, &q, n, MCPAGE_ESTORE);
}

/* ---- sessions ------------------------------------------------------- */

#define SESSION_COLS                                                                               \
    "s.session_id, s.source, s.project_id, p.name, s.title, s.started_at, s.ended_at, s.model, "   \
    "s.git_branch, s.message_count, s.parent_session_id, s.source_path, s.hostname, s.raw_size"

static int session_row(sqlite3_stmt *st, store_session *r)
{
    if (col_dup(st, 0, 0, &r->session_id) || col_dup(st, 1, 0, &r->source) ||
        col_dup(st, 3, 1, &r->project) || col_dup(st, 4, 1, &r->title) ||
        col_dup(st, 5, 1, &r->started_at) || col_dup(st, 6, 1, &r->ended_at) ||
        col_dup(st, 7, 1, &r->model) || col_dup(st, 8, 1, &r->git_branch) ||
        col_dup(st, 10, 1, &r->parent_session_id) || col_dup(st, 11, 1, &r->source_path) ||
        col_dup(st, 12, 1, &r->hostname))
        return MCPAGE_ENOMEM;
    r->project_id = sqlite3_column_int64(st, 2);
    r->message_count = sqlite3_column_int64(st, 9);
    r->raw_size = sqlite3_column_int64(st, 13);
    r->key.nparts = 2;
    store_key_set_text(&r->key.part[0], (const char *)sqlite3_column_text(st, 5));
    store_key_set_text(&r->key.part[1], r->session_id);
    return 0;
}

static void session_where(sq_sql *q, const store_session_filter *f)
{
    sql_add(q, " WHERE 1");
    if (f->project && *f->project) {
        sql_add(q, " AND s.project_id IN (SELECT id FROM projects WHERE name = ? OR path = ?)");
        sql_text(q, f->project);
        sql_text(q, f->project);
    }
    sql_where_text(q, "s.source = ?", f->source);
    sql_where_text(q, "s.started_at >= ?", f->after);
    sql_where_text(q, "s.started_at < ?", f->before);
    sql_where_text(q, "s.model = ?", f->model);
    sql_where_text(q, "s.git_branch = ?", f->branch);
    if (f->without_project)
        sql_add(q, " AND s.project_id = 0");
}

static int sqlite_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                                store_sessions *out)
{
    sq_sql q = {0};
    sqlite3_stmt *st = NULL;
    int newest = f->order != STORE_OLDEST;
    const char *order =
        newest ? "s.started_at DESC, s.session_id DESC" : "s.started_at, s.session_id";
    /* An offset page skips rows of the index alone, then reads its own
     * rows: SQLite's OFFSET reads every skipped row with its columns and
     * project (9,760 sessions: 5.5 ms; the index alone: 0.07 ms). */
    int deferred = !store_page_keyset(pg) && pg->offset > 0;
    sql_add(&q, deferred ? "SELECT " SESSION_COLS " FROM (SELECT s.sid FROM sessions s"
                         : "SELECT " SESSION_COLS " FROM sessions s LEFT JOIN projects p ON p.id = "
                           "s.project_id");
    session_where(&q, f);
    if (deferred) {
        sql_page(&q, order, pg);
        sql_add(&q, ") k CROSS JOIN sessions s ON s.sid = k.sid LEFT JOIN projects p ON p.id = "
                    "s.project_id ORDER BY ");
        sql_add(&q, order);
    } else if (store_page_keyset(pg)) {
        static const store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_TEXT};
        int rc = store_key_check(s, pg->after, types, 2);
        if (rc < 0)
            return rc;
        sql_add(&q, newest ? " AND (s.started_at, s.session_id) < (?, ?)"
                           : " AND (s.started_at, s.session_id) > (?, ?)");
        key_bind(&q, &pg->after->part[0]);
        key_bind(&q, &pg->after->part[1]);
    }
    if (!deferred)
        sql_page(&q, order, pg);
    int rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_session *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        if (session_row(st, &rows[out->count++]) < 0)
            goto nomem;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_sessions_free(out);
        return sq_err(s, "sessions");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_sessions_free(out);
    return MCPAGE_ENOMEM;
}

static int sqlite_sessions_count(store *s, const store_session_filter *f, int64_t *n)
{
    sq_sql q = {0};
    sql_add(&q, "SELECT count(*) FROM sessions s");
    session_where(&q, f);
    sql_where_end(&q, strlen("SELECT count(*) FROM sessions s"));
    return count_query(s, &q, n, MCPAGE_ESTORE);
}

static int sqlite_session_get(store *s, const char *id, store_session *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " SESSION_COLS " FROM sessions s LEFT JOIN projects p ON p.id = "
                     "s.project_id WHERE s.session_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rc = session_row(st, out);
        sqlite3_reset(st);
        if (rc < 0)
            store_session_clear(out);
        return rc;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return store_fail(s, MCPAGE_ENOTFOUND, "no session '%s'", id);
    return sq_err(s, "session");
}

/* ---- messages ------------------------------------------------------- */

#define MESSAGE_COLS                                                                               \
    "m.message_id, s.session_id, m.ordinal, m.role, m.timestamp, t.text, m.tool_name, "            \
    "m.tool_input, m.is_error, m.line_no, m.byte_offset, m.byte_length, m.tool_call_id"

static int message_row(sqlite3_stmt *st, store_message *m)
{
    m->message_id = sqlite3_column_int64(st, 0);
    if (col_dup(st, 1, 0, &m->session_id) || col_dup(st, 3, 0, &m->role) ||
        col_dup(st, 4, 1, &m->timestamp) || col_dup(st, 5, 0, &m->text) ||
        col_dup(st, 6, 1, &m->tool_name) || col_dup(st, 7, 1, &m->tool_input) ||
        col_dup(st, 12, 1, &m->tool_call_id))
        return MCPAGE_ENOMEM;
    m->ordinal = sqlite3_column_int64(st, 2);
    m->is_error = sqlite3_column_int(st, 8);
    m->line_no = sqlite3_column_int64(st, 9);
    m->byte_offset = sqlite3_column_int64(st, 10);
    m->byte_length = sqlite3_column_int64(st, 11);
    return 0;
}

static int sqlite_messages_from(store *s, const char *id, int64_t from, int64_t limit,
                                store_messages *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " MESSAGE_COLS " FROM sessions s JOIN messages m ON m.sid = s.sid "
                     "LEFT JOIN message_text t ON t.message_id = m.message_id "
                     "WHERE s.session_id = ? AND m.ordinal >= ? ORDER BY m.ordinal LIMIT ?",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, limit);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_message *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        if (message_row(st, &rows[out->count++]) < 0)
            goto nomem;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_messages_free(out);
        return sq_err(s, "messages");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_messages_free(out);
    return MCPAGE_ENOMEM;
}

/* The counts come from the covering index messages_lines: no text is read. */
static int sqlite_text_lines(store *s, const char *id, int64_t before, store_text_lines *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT m.ordinal, m.text_lines FROM sessions s "
                     "JOIN messages m INDEXED BY messages_lines ON m.sid = s.sid "
                     "WHERE s.session_id = ? AND m.ordinal < ? ORDER BY m.ordinal",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, before);
    size_t cap = 0, cap2 = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *o = rows_grow(out->ordinal, out->count, &cap, sizeof *o);
        if (!o)
            goto nomem;
        out->ordinal = o;
        int64_t *l = rows_grow(out->lines, out->count, &cap2, sizeof *l);
        if (!l)
            goto nomem;
        out->lines = l;
        o[out->count] = sqlite3_column_int64(st, 0);
        l[out->count] = sqlite3_column_int64(st, 1);
        out->count++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_text_lines_free(out);
        return sq_err(s, "text lines");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_text_lines_free(out);
    return MCPAGE_ENOMEM;
}

static int sqlite_message_get(store *s, int64_t id, store_message *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " MESSAGE_COLS " FROM messages m JOIN sessions s ON s.sid = m.sid "
                     "LEFT JOIN message_text t ON t.message_id = m.message_id "
                     "WHERE m.message_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rc = message_row(st, out);
        sqlite3_reset(st);
        if (rc < 0)
            store_message_clear(out);
        return rc;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return store_fail(s, MCPAGE_ENOTFOUND, "no message %lld", (long long)id);
    return sq_err(s, "message");
}

static int session_sid(store *s, const char *id, int64_t *sid, int64_t *raw_size)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT sid, raw_size FROM sessions WHERE session_id = ?", &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *sid = sqlite3_column_int64(st, 0);
        if (raw_size)
            *raw_size = sqlite3_column_int64(st, 1);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return store_fail(s, MCPAGE_ENOTFOUND, "no session '%s'", id);
    return sq_err(s, "session");
}

static int sqlite_raw_read(store *s, const char *id, int64_t offset, int64_t length,
                           unsigned char **buf, size_t *n, int64_t *total)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, total);
    if (rc < 0)
        return rc;
    if (offset >= *total || length == 0)
        return 0;
    int64_t end = offset + length;
    if (end > *total)
        end = *total;
    unsigned char *out = malloc((size_t)(end - offset));
    if (!out)
        return MCPAGE_ENOMEM;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "SELECT offset, data FROM raw_chunks WHERE sid = ?1 AND offset >= "
                 "coalesce((SELECT max(offset) FROM raw_chunks WHERE sid = ?1 AND offset <= ?2), "
                 "0) AND offset < ?3 ORDER BY offset",
                 &st);
    if (rc < 0)
        goto fail;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, offset);
    sqlite3_bind_int64(st, 3, end);
    int64_t filled = offset;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t at = sqlite3_column_int64(st, 0);
        const unsigned char *data = sqlite3_column_blob(st, 1);
        int64_t len = sqlite3_column_bytes(st, 1);
        if (at > filled)
            break; /* a gap: should not happen, stop at what is contiguous */
        int64_t from = filled - at;
        if (from >= len)
            continue;
        int64_t take = len - from;
        if (filled + take > end)
            take = end - filled;
        memcpy(out + (filled - offset), data + from, (size_t)take);
        filled += take;
        if (filled >= end)
            break;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rc = sq_err(s, "raw read");
        goto fail;
    }
    *buf = out;
    *n = (size_t)(filled - offset);
    return 0;
fail:
    free(out);
    return rc;
}

/* ---- summary -------------------------------------------------------- */

static int counts_query(store *s, const char *sql, int64_t sid, store_count **out, size_t *n)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, sql, &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_count *rows = rows_grow(*out, *n, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        *out = rows;
        if (col_dup(st, 0, 0, &rows[*n].name) < 0)
            goto nomem;
        rows[(*n)++].count = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sq_err(s, "summary");
nomem:
    sqlite3_reset(st);
    return MCPAGE_ENOMEM;
}

static int sqlite_session_summary(store *s, const char *id, store_session_summary *out)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    rc = sqlite_session_get(s, id, &out->session);
    if (rc < 0)
        goto fail;
    rc = counts_query(s,
                      "SELECT role, count(*) FROM messages WHERE sid = ? GROUP BY role "
                      "ORDER BY role",
                      sid, &out->roles, &out->role_count);
    if (rc < 0)
        goto fail;
    rc = counts_query(s,
                      "SELECT tool_name, count(*) FROM messages WHERE sid = ? AND tool_name IS "
                      "NOT NULL AND role = 'assistant' GROUP BY tool_name ORDER BY 2 DESC, 1 "
                      "LIMIT 200",
                      sid, &out->tools, &out->tool_count);
    if (rc < 0)
        goto fail;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "SELECT (SELECT t.text FROM messages m JOIN message_text t ON t.message_id = "
                 "m.message_id WHERE m.sid = ?1 AND m.role = 'user' ORDER BY m.ordinal LIMIT 1), "
                 "(SELECT count(*) FROM messages WHERE sid = ?1 AND is_error)",
                 &st);
    if (rc < 0)
        goto fail;
    sqlite3_bind_int64(st, 1, sid);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        rc = col_dup(st, 0, 1, &out->first_prompt);
        out->error_count = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = sq_err(s, "summary");
    if (rc < 0)
        goto fail;
    return 0;
fail:
    store_session_summary_clear(out);
    return rc;
}

/* ---- search --------------------------------------------------------- */

static int is_word_byte(unsigned char c)
{
    return isalnum(c) || c == '_' || c >= 0x80;
}

/*
 * The cost model of newest/oldest search plans, in microseconds, fitted
 * on a million-message archive (docs/store.md has the figures): probing
 * the FTS index for one row costs SQ_PROBE_US per plain term (a phrase or
 * prefix term weighs SQ_PROBE_HEAVY terms); collecting the matches into
 * a set costs SQ_SET_US per match and testing a row against it
 * SQ_ROW_US; joining and sorting every match costs SQ_SORT_US per match.
 */
#define SQ_PROBE_US    120.0
#define SQ_PROBE_HEAVY 15
#define SQ_SET_US      0.25
#define SQ_ROW_US      3.0
#define SQ_SORT_US     1.5

/* How a newest/oldest search finds its page. */
typedef enum sq_plan {
    SQ_COLLECT = 0, /* join every match, sort by time, take the page */
    SQ_PROBE,       /* walk the time index, probe the FTS index per row */
    SQ_MEMBER       /* collect the matching rowids once, walk the time index testing them */
} sq_plan;

/*
 * Turns user syntax into an FTS5 query: every word and every "quoted
 * phrase" becomes one quoted FTS5 string (embedded quotes doubled), so
 * no user character can be read as FTS5 syntax; a trailing `*` on a word
 * becomes a prefix query. Terms without any word character (`++`) are
 * dropped; a query left with no terms is rejected.
 */
/* What a query's terms cost to evaluate (fts_query_build). */
typedef struct sq_terms {
    int weight;   /* probe cost in plain-token units (SQ_PROBE_HEAVY a phrase or prefix) */
    int prefixes; /* prefix terms (`axo*`) */
    int phrases;  /* terms of several tokens (`"a b"`, `foo-bar`) */
} sq_terms;

static int fts_query_build(store *s, const char *in, char *out, size_t cap, sq_terms *cost)
{
    size_t o = 0;
    int terms = 0;
    if (cost)
        memset(cost, 0, sizeof *cost);
    const char *p = in, *start, *end;
    int prefix;
    while (store_query_term(&p, &start, &end, &prefix)) {
        int wordy = 0;
        for (const char *c = start; c < end; c++)
            if (is_word_byte((unsigned char)*c))
                wordy = 1;
        if (!wordy)
            continue;
        if (cost) {
            /* A term of several tokens (a phrase: `"a b"`, `foo-bar`) or a
             * prefix makes FTS5 read position lists or expand terms on
             * every probe: it weighs far more than one plain token. */
            int tokens = 0, in_word = 0;
            for (const char *c = start; c < end; c++) {
                int w = is_word_byte((unsigned char)*c);
                tokens += w && !in_word;
                in_word = w;
            }
            cost->weight += (prefix || tokens > 1) ? SQ_PROBE_HEAVY : 1;
            cost->prefixes += prefix;
            cost->phrases += tokens > 1;
        }
        /* room for: space, quote, doubled content, quote, star, NUL */
        size_t need = 4 + 2 * (size_t)(end - start);
        if (o + need >= cap)
            return store_fail(s, MCPAGE_EPARSE, "search query too long");
        if (terms++)
            out[o++] = ' ';
        out[o++] = '"';
        for (const char *c = start; c < end; c++) {
            if (*c == '"')
                out[o++] = '"';
            out[o++] = *c;
        }
        out[o++] = '"';
        if (prefix)
            out[o++] = '*';
    }
    out[o] = 0;
    if (!terms)
        return store_fail(s, MCPAGE_EPARSE,
                          "search query has no words to search for; give words or "
                          "\"quoted phrases\"");
    return 0;
}

static void search_where(sq_sql *q, const store_search_filter *f, const char *fts)
{
    sql_add(q, " WHERE messages_fts MATCH ?");
    sql_text(q, fts);
    if (f->project && *f->project) {
        sql_add(q, " AND s.project_id IN (SELECT id FROM projects WHERE name = ? OR path = ?)");
        sql_text(q, f->project);
        sql_text(q, f->project);
    }
    sql_where_text(q, "s.source = ?", f->source);
    sql_where_text(q, "m.role = ?", f->role);
    sql_where_text(q, "m.tool_name = ?", f->tool);
    sql_where_text(q, "m.timestamp >= ?", f->after);
    sql_where_text(q, "m.timestamp < ?", f->before);
    if (f->has_error > 0)
        sql_add(q, " AND m.is_error = 1");
    else if (f->has_error < 0)
        sql_add(q, " AND m.is_error = 0");
}

/* A number that moves whenever the database may have changed: commits
 * by other connections (data_version) and this one's own changes. */
static int data_version(store *s, int64_t *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "PRAGMA data_version", &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    int64_t dv = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_err(s, "data version");
    *v = (dv << 32) ^ sqlite3_total_changes64(CONN(s)->db);
    return 0;
}

/* The bare match count of `fts` (remembered for the connection's last
 * query until the database changes), and in *us how long counting took:
 * one enumeration. */
static int fts_matches(store *s, const char *fts, int64_t *n, double *us)
{
    sq_conn *c = CONN(s);
    int64_t version = 0;
    int vrc = data_version(s, &version);
    if (vrc < 0)
        return vrc;
    if (c->count_query && strcmp(c->count_query, fts) == 0 && c->count_version == version) {
        *n = c->count_matches;
        if (us)
            *us = c->count_us;
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, fts);
    double t0 = store_now_us();
    rc = sqlite3_step(st);
    double took = store_now_us() - t0;
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_search_err(s);
    free(c->count_query);
    c->count_query = store_strdup(fts);
    c->count_matches = *n;
    c->count_us = took;
    c->count_version = version;
    if (us)
        *us = took;
    return 0;
}

/*
 * The cheapest plan for a newest/oldest page of `fts` (whose terms weigh
 * `weight`, fts_query_build). Walking the time index stops after the
 * page, so it reads about (offset + limit) x messages / matches rows; it
 * wins when matches are dense, probing per row when probes are cheap
 * (plain terms matching a large share of messages) and testing rows
 * against the collected matches when they are not (phrases, prefixes,
 * middling shares). Sparse matches are collected and sorted. Filters
 * other than dates thin the matches in ways the counts do not show: they
 * keep the collect plan.
 */
int store_sqlite__force_plan;
int store_sqlite__force_outer;

static int choose_plan(store *s, const store_search_filter *f, const store_page *pg,
                       const char *fts, const sq_terms *cost, sq_plan *plan, int64_t *nmatches)
{
    *plan = SQ_COLLECT;
    *nmatches = -1;
    if (f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST)
        return 0;
    if ((f->project && *f->project) || (f->source && *f->source) || (f->role && *f->role) ||
        (f->tool && *f->tool) || f->has_error)
        return 0;
    int64_t matches = 0;
    double enum_us = 0;
    int rc = fts_matches(s, fts, &matches, &enum_us);
    if (rc < 0)
        return rc;
    *nmatches = matches;
    if (store_sqlite__force_plan > 0 && store_sqlite__force_plan <= SQ_MEMBER + 1) {
        *plan = (sq_plan)(store_sqlite__force_plan - 1);
        return 0;
    }
    if (matches == 0)
        return 0;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s, "SELECT coalesce(max(message_id), 0) FROM messages", &st);
    if (rc < 0)
        return rc;
    int64_t total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    double want = (double)((store_page_keyset(pg) ? 0 : pg->offset) + pg->limit);
    double rows = want * (double)total / (double)matches; /* rows a time walk reads */
    /* FTS5 evaluates a prefix by merging the doclists of every term it
     * expands to, for each probe as for the count: a prefix probe costs
     * about one enumeration, which the count just timed ("pa*" on 1M
     * messages: 190 ms a probe, 230 ms the count). */
    double per_probe = SQ_PROBE_US * (cost->weight > 0 ? cost->weight : 1);
    if (cost->prefixes > 0 && enum_us > per_probe)
        per_probe = enum_us;
    double probe = rows * per_probe;
    double member = (double)matches * SQ_SET_US + rows * SQ_ROW_US;
    double collect = (double)matches * SQ_SORT_US;
    if (probe <= member && probe < collect)
        *plan = SQ_PROBE;
    else if (member < collect)
        *plan = SQ_MEMBER;
    return 0;
}

static int sqlite_search(store *s, const store_search_filter *f, const store_page *pg,
                         store_hits *out)
{
    char fts[2 * STORE_QUERY_MAX + 16];
    sq_terms cost;
    int rc = fts_query_build(s, f->query, fts, sizeof fts, &cost);
    if (rc < 0)
        return rc;
    /*
     * The inner query picks the page (filters, keyset, order, limit);
     * only its rows get a snippet, computed by the outer query. bm25 is
     * computed only for relevance order.
     */
    sq_sql q = {0};
    sqlite3_stmt *st = NULL;
    int relevance = f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST;
    int need_s = (f->project && *f->project) || (f->source && *f->source);
    int need_m = need_s || (f->role && *f->role) || (f->tool && *f->tool) ||
                 (f->after && *f->after) || (f->before && *f->before) || f->has_error;
    sq_plan plan = SQ_COLLECT;
    int64_t matches = -1;
    if ((rc = choose_plan(s, f, pg, fts, &cost, &plan, &matches)) < 0)
        return rc;
    /* The outer query gives the page's rows their snippets (below), one
     * FTS5 probe per row. A prefix probe costs about one enumeration of
     * the matches (choose_plan), so with a prefix, enumerating them once
     * and keeping the page's rows is cheaper (axo* on 1M messages, newest:
     * 100 to 30 ms). Not with a phrase: enumerating checks positions in
     * every row holding all its words, where a probe checks one row
     * ("kernel panic": 58 to 78-100 ms); bench_store query. */
    int fts_drives = cost.prefixes > 0 && cost.phrases == 0;
    if (store_sqlite__force_outer)
        fts_drives = store_sqlite__force_outer > 0;
    /* The snippet is cut around the first match (sqlite_snippet.c), not scored over the text. */
    sql_add(&q, CONN(s)->own_snippet ? "SELECT h.id, s.session_id, p.name, m.role, m.timestamp, "
                                       "mcpage_snippet("
                                     : "SELECT h.id, s.session_id, p.name, m.role, m.timestamp, "
                                       "snippet(");
    sql_add(&q, "messages_fts, 0, '" STORE_HIT_OPEN "', '" STORE_HIT_CLOSE "', '…', 24), "
                "m.ordinal, h.rk, "
                /* what precedes the hit in its session: its transcript line */
                "(SELECT count(*) FROM messages b INDEXED BY messages_lines WHERE b.sid = m.sid "
                "AND b.ordinal < m.ordinal), (SELECT coalesce(sum(b.text_lines), 0) FROM "
                "messages b INDEXED BY messages_lines WHERE b.sid = m.sid AND b.ordinal < "
                "m.ordinal) FROM ");
    sql_add(&q, fts_drives ? "messages_fts CROSS JOIN (" : "(");
    /* bm25 as mcpage_bm25() computes it (sqlite_rank.c), else FTS5's rank. */
    int own = CONN(s)->own_snippet;
    /* The inner query: which rows, in which order (four shapes). */
    const char *order, *outer, *cmp;
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    if (relevance && !need_m) {
        /* FTS5 alone: no join while every match is scored. */
        sql_add(&q, own ? "SELECT messages_fts.rowid AS id, " SQ_BM25 " AS rk FROM messages_fts "
                          "WHERE messages_fts MATCH ?"
                        : "SELECT messages_fts.rowid AS id, messages_fts.rank AS rk FROM "
                          "messages_fts WHERE messages_fts MATCH ?");
        sql_text(&q, fts);
        order = own ? SQ_BM25 ", messages_fts.rowid" : "messages_fts.rank, messages_fts.rowid";
        cmp = own ? " AND (" SQ_BM25 ", messages_fts.rowid) > (?, ?)"
                  : " AND (messages_fts.rank, messages_fts.rowid) > (?, ?)";
    } else if (plan != SQ_COLLECT) {
        sql_add(&q, plan == SQ_PROBE
                        ? "SELECT m.message_id AS id, 0.0 AS rk FROM messages m INDEXED BY "
                          "messages_time WHERE EXISTS (SELECT 1 FROM messages_fts WHERE "
                          "messages_fts MATCH ? AND messages_fts.rowid = m.message_id)"
                        : "SELECT m.message_id AS id, 0.0 AS rk FROM messages m INDEXED BY "
                          "messages_time WHERE m.message_id IN (SELECT rowid FROM messages_fts "
                          "WHERE messages_fts MATCH ?)");
        sql_text(&q, fts);
        sql_where_text(&q, "m.timestamp >= ?", f->after);
        sql_where_text(&q, "m.timestamp < ?", f->before);
        order = cmp = NULL;
    } else {
        sql_add(&q, !relevance ? "SELECT m.message_id AS id, 0.0 AS rk"
                    : own      ? "SELECT m.message_id AS id, " SQ_BM25 " AS rk"
                               : "SELECT m.message_id AS id, messages_fts.rank AS rk");
        sql_add(&q, " FROM messages_fts JOIN messages m ON m.message_id = messages_fts.rowid");
        if (need_s)
            sql_add(&q, " JOIN sessions s ON s.sid = m.sid");
        search_where(&q, f, fts);
        order = own ? SQ_BM25 ", m.message_id" : "messages_fts.rank, m.message_id";
        cmp = own ? " AND (" SQ_BM25 ", m.message_id) > (?, ?)"
                  : " AND (messages_fts.rank, m.message_id) > (?, ?)";
    }
    switch (f->sort) {
    case STORE_SEARCH_NEWEST:
        order = "m.timestamp DESC, m.message_id DESC";
        outer = "m.timestamp DESC, h.id DESC";
        cmp = " AND (m.timestamp, m.message_id) < (?, ?)";
        break;
    case STORE_SEARCH_OLDEST:
        order = "m.timestamp, m.message_id";
        outer = "m.timestamp, h.id";
        cmp = " AND (m.timestamp, m.message_id) > (?, ?)";
        break;
    default:
        outer = "h.rk, h.id";
        types[0] = STORE_KEY_REAL;
        break;
    }
    if (store_page_keyset(pg)) {
        rc = store_key_check(s, pg->after, types, 2);
        if (rc < 0)
            return rc;
        sql_add(&q, cmp);
        key_bind(&q, &pg->after->part[0]);
        key_bind(&q, &pg->after->part[1]);
    }
    sql_page(&q, order, pg);
    /* The outer query: the page's rows get their columns and a snippet.
     * CROSS JOIN fixes the loop order: the page outside (one index probe
     * per row), or the matches outside (fts_drives). */
    /* (With the matches outside, messages comes after the page too, or
     * every match would be looked up in it: "er*", 485k matches, 220 to
     * 60 ms.) */
    sql_add(&q, fts_drives ? ") h ON h.id = messages_fts.rowid CROSS JOIN messages m "
                           : ") h CROSS JOIN messages_fts ON messages_fts.rowid = h.id "
                             "JOIN messages m ");
    sql_add(&q, "ON m.message_id = h.id JOIN sessions s ON s.sid = m.sid "
                "LEFT JOIN projects p ON p.id = s.project_id WHERE messages_fts MATCH ? ORDER BY ");
    sql_text(&q, fts);
    sql_add(&q, outer);
    rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    /* bm25 needs the rows holding each phrase: for one phrase, the bare
     * count this connection may have just made for the page's total. */
    if (relevance && own) {
        int64_t version = 0;
        sq_conn *c = CONN(s);
        if (c->count_query && strcmp(c->count_query, fts) == 0 && data_version(s, &version) == 0 &&
            c->count_version == version)
            c->rank_nhit = c->count_matches;
    }
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_hit *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_hit *h = &rows[out->count++];
        h->message_id = sqlite3_column_int64(st, 0);
        if (col_dup(st, 1, 0, &h->session_id) || col_dup(st, 2, 1, &h->project) ||
            col_dup(st, 3, 0, &h->role) || col_dup(st, 4, 1, &h->timestamp) ||
            col_dup(st, 5, 0, &h->snippet))
            goto nomem;
        h->ordinal = sqlite3_column_int64(st, 6);
        h->rank = sqlite3_column_double(st, 7);
        h->before_count = sqlite3_column_int64(st, 8);
        h->before_lines = sqlite3_column_int64(st, 9);
        h->key.nparts = 2;
        if (f->sort == STORE_SEARCH_RELEVANCE) {
            h->key.part[0].type = STORE_KEY_REAL;
            h->key.part[0].r = h->rank;
        } else {
            store_key_set_text(&h->key.part[0], (const char *)sqlite3_column_text(st, 4));
        }
        store_key_set_int(&h->key.part[1], h->message_id);
    }
    sqlite3_reset(st);
    CONN(s)->rank_nhit = -1;
    if (rc != SQLITE_DONE) {
        store_hits_free(out);
        return sq_search_err(s);
    }
    return 0;
nomem:
    sqlite3_reset(st);
    CONN(s)->rank_nhit = -1;
    store_hits_free(out);
    return MCPAGE_ENOMEM;
}

static int sqlite_search_count(store *s, const store_search_filter *f, int64_t *n)
{
    char fts[2 * STORE_QUERY_MAX + 16];
    int rc = fts_query_build(s, f->query, fts, sizeof fts, NULL);
    if (rc < 0)
        return rc;
    /* Join only what the filters read: a bare count is a doclist scan. */
    int need_s = (f->project && *f->project) || (f->source && *f->source);
    int need_m = need_s || (f->role && *f->role) || (f->tool && *f->tool) ||
                 (f->after && *f->after) || (f->before && *f->before) || f->has_error;
    if (!need_m) /* the bare count the plan choice also needs: counted once */
        return fts_matches(s, fts, n, NULL);
    sq_sql q = {0};
    sql_add(&q, "SELECT count(*) FROM messages_fts");
    if (need_m)
        sql_add(&q, " JOIN messages m ON m.message_id = messages_fts.rowid");
    if (need_s)
        sql_add(&q, " JOIN sessions s ON s.sid = m.sid");
    search_where(&q, f, fts);
    return count_query(s, &q, n, MCPAGE_EPARSE);
}

/* ---- activity ------------------------------------------------------- */

static int sqlite_activity(store *s, const store_activity_filter *f, size_t max_rows,
                           store_activity *out)
{
    sq_sql q = {0};
    sqlite3_stmt *st = NULL;
    const char *bucket;
    switch (f->bucket) {
    case STORE_BUCKET_WEEK:
        bucket = "date(d.day, '-6 days', 'weekday 1')";
        break;
    case STORE_BUCKET_MONTH:
        bucket = "substr(d.day, 1, 7) || '-01'";
        break;
    default:
        bucket = "d.day";
        break;
    }
    /* Whole days: after and before compare with the date part. */
    sql_add(&q, "SELECT p.id, p.name, ");
    sql_add(&q, bucket);
    sql_add(&q, " AS b, sum(d.messages) FROM session_days d JOIN sessions s ON s.sid = d.sid "
                "JOIN projects p ON p.id = s.project_id WHERE 1");
    sql_where_text(&q, "d.day >= substr(?, 1, 10)", f->after);
    sql_where_text(&q, "d.day < substr(?, 1, 10)", f->before);
    if (f->project && *f->project) {
        sql_add(&q, " AND (p.name = ? OR p.path = ?)");
        sql_text(&q, f->project);
        sql_text(&q, f->project);
    }
    sql_where_text(&q, "s.source = ?", f->source);
    sql_add(&q, " GROUP BY b, p.id ORDER BY b, p.id LIMIT ?");
    sql_int(&q, (int64_t)max_rows + 1);
    int rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->count >= max_rows) {
            sqlite3_reset(st);
            store_activity_free(out);
            return store_fail(s, MCPAGE_ERANGE, "more than %zu activity rows; narrow the range",
                              max_rows);
        }
        store_activity_row *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_activity_row *r = &rows[out->count++];
        r->project_id = sqlite3_column_int64(st, 0);
        if (col_dup(st, 1, 0, &r->project) || col_dup(st, 2, 0, &r->bucket))
            goto nomem;
        r->messages = sqlite3_column_int64(st, 3);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_activity_free(out);
        return sq_err(s, "activity");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_activity_free(out);
    return MCPAGE_ENOMEM;
}

/* ---- stats ---------------------------------------------------------- */

static int sqlite_generation(store *s, int64_t *gen)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT value FROM meta WHERE key = 'generation'", &st);
    if (rc < 0)
        return rc;
    *gen = 0;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *gen = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sq_err(s, "generation");
}

static int sqlite_stats(store *s, store_stats *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT (SELECT count(*) FROM projects), (SELECT count(*) FROM sessions), "
                     "(SELECT count(*) FROM messages), (SELECT count(*) FROM source_files), "
                     "(SELECT coalesce(sum(raw_size), 0) FROM sessions), "
                     "(SELECT page_count * page_size FROM pragma_page_count, pragma_page_size)",
                     &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(st);
        return sq_err(s, "stats");
    }
    out->projects = sqlite3_column_int64(st, 0);
    out->sessions = sqlite3_column_int64(st, 1);
    out->messages = sqlite3_column_int64(st, 2);
    out->sources = sqlite3_column_int64(st, 3);
    out->raw_bytes = sqlite3_column_int64(st, 4);
    out->size_bytes = sqlite3_column_int64(st, 5);
    sqlite3_reset(st);
    char wal[4200];
    struct stat sb;
    snprintf(wal, sizeof wal, "%s-wal", CONN(s)->path);
    if (stat(wal, &sb) == 0)
        out->size_bytes += (int64_t)sb.st_size;
    out->schema_version = store_sqlite_schema_latest();
    return sqlite_generation(s, &out->generation);
}

/* ---- transactions --------------------------------------------------- */

static int exec_simple(store *s, const char *sql)
{
    if (sqlite3_exec(CONN(s)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sq_err(s, sql);
    return 0;
}

/* A damaged store takes no more writes: the failure, or 0. */
static int refuse_damaged(store *s)
{
    sq_conn *c = CONN(s);
    if (c->damaged || store_sqlite__seen_damaged(c))
        return store_sqlite__damaged(s, c->path, "found damaged earlier in this process");
    return 0;
}

/*
 * PRAGMA quick_check: every page of the file read and its b-tree
 * structure checked (not the FTS index's contents), about 2 s of CPU on a
 * 540 MB store. 0 when it says "ok", else the damaged-store failure with
 * its first complaint.
 */
static int quick_check(store *s)
{
    sq_conn *c = CONN(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        return sq_err(s, "quick_check");
    int rc = sqlite3_step(st);
    char first[300] = "";
    if (rc == SQLITE_ROW) {
        /* "*** in database main ***\nOn tree page 694 ...": one line, the finding */
        const char *t = (const char *)sqlite3_column_text(st, 0);
        const char *nl = t ? strchr(t, '\n') : NULL;
        snprintf(first, sizeof first, "%s", t && strncmp(t, "***", 3) == 0 && nl ? nl + 1 : t);
        for (char *p = first; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return sq_err(s, "quick_check");
    if (strcmp(first, "ok") == 0)
        return 0;
    c->damaged = 1;
    store_sqlite__mark_damaged(c);
    char detail[340];
    snprintf(detail, sizeof detail, "integrity check: %s", first);
    return store_sqlite__damaged(s, c->path, detail);
}

static int sqlite_begin(store *s)
{
    sq_conn *c = CONN(s);
    if (c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "a transaction is already open");
    int rc = refuse_damaged(s);
    if (rc < 0)
        return rc;
    rc = exec_simple(s, "BEGIN IMMEDIATE");
    if (rc < 0)
        return rc;
    c->in_tx = 1;
    c->dirty = 0;
    return 0;
}

static int sqlite_commit(store *s)
{
    sq_conn *c = CONN(s);
    if (!c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "no transaction is open");
    if (c->dirty) {
        int rc = exec_simple(s, "UPDATE meta SET value = value + 1 WHERE key = 'generation'");
        if (rc < 0)
            return rc;
    }
    int rc = exec_simple(s, "COMMIT");
    if (rc < 0)
        return rc;
    c->in_tx = 0;
    c->dirty = 0;
    return 0;
}

static int sqlite_rollback(store *s)
{
    sq_conn *c = CONN(s);
    if (!c->in_tx)
        return 0;
    c->in_tx = 0;
    c->dirty = 0;
    return exec_simple(s, "ROLLBACK");
}

#define NEED_TX()                                                                                  \
    do {                                                                                           \
        if (!CONN(s)->in_tx)                                                                       \
            return store_fail(s, MCPAGE_ESTATE, "writes need a transaction");                      \
    } while (0)

/* ---- writes --------------------------------------------------------- */

static int sqlite_project_ensure(store *s, const char *path, const char *name, int64_t *id)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT id FROM projects WHERE path = ?", &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, path);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return sq_err(s, "project");
    rc = sq_prep(s, "INSERT INTO projects(path, name) VALUES(?, ?)", &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, path);
    bind_text(st, 2, name);
    rc = sq_done(s, st, "project insert");
    if (rc < 0)
        return rc;
    *id = sqlite3_last_insert_rowid(CONN(s)->db);
    CONN(s)->dirty = 1;
    return 0;
}

static int sqlite_session_put(store *s, const store_session_meta *m)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "INSERT INTO sessions(session_id, source, project_id, title, model, "
                     "git_branch, parent_session_id, source_path, hostname, head_hash, head_len) "
                     "VALUES(?1, coalesce(?2, ''), coalesce(?3, 0), ?4, ?5, ?6, ?7, ?8, ?9, "
                     "coalesce(?10, 0), coalesce(?11, 0)) "
                     "ON CONFLICT(session_id) DO UPDATE SET "
                     "source = coalesce(?2, source), project_id = coalesce(?3, project_id), "
                     "title = coalesce(?4, title), model = coalesce(?5, model), "
                     "git_branch = coalesce(?6, git_branch), "
                     "parent_session_id = coalesce(?7, parent_session_id), "
                     "source_path = coalesce(?8, source_path), hostname = coalesce(?9, hostname), "
                     "head_hash = coalesce(?10, head_hash), head_len = coalesce(?11, head_len)",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, m->session_id);
    bind_text(st, 2, m->source);
    if (m->project_id > 0)
        sqlite3_bind_int64(st, 3, m->project_id);
    bind_text(st, 4, m->title);
    bind_text(st, 5, m->model);
    bind_text(st, 6, m->git_branch);
    bind_text(st, 7, m->parent_session_id);
    bind_text(st, 8, m->source_path);
    bind_text(st, 9, m->hostname);
    if (m->head_len > 0) {
        sqlite3_bind_int64(st, 10, (int64_t)m->head_hash);
        sqlite3_bind_int64(st, 11, m->head_len);
    }
    rc = sq_done(s, st, "session upsert");
    if (rc == 0)
        CONN(s)->dirty = 1;
    return rc;
}

static int sqlite_session_state(store *s, const char *id, store_session_state *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT raw_size, raw_lines, head_hash, head_len, message_count, project_id, "
                     "coalesce(title, '') <> '' FROM sessions WHERE session_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->raw_size = sqlite3_column_int64(st, 0);
        out->raw_lines = sqlite3_column_int64(st, 1);
        out->head_hash = (uint64_t)sqlite3_column_int64(st, 2);
        out->head_len = sqlite3_column_int64(st, 3);
        out->message_count = sqlite3_column_int64(st, 4);
        out->project_id = sqlite3_column_int64(st, 5);
        out->has_title = sqlite3_column_int(st, 6);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return MCPAGE_ENOTFOUND;
    return sq_err(s, "session state");
}

static int sqlite_session_reset(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc == MCPAGE_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    static const char *const sqls[] = {
        "DELETE FROM message_text WHERE message_id IN (SELECT message_id FROM messages WHERE "
        "sid = ?)",
        "DELETE FROM messages WHERE sid = ?",
        "DELETE FROM session_days WHERE sid = ?",
        "DELETE FROM raw_chunks WHERE sid = ?",
        ("UPDATE sessions SET raw_size = 0, raw_lines = 0, head_hash = 0, head_len = 0, "
         "message_count = 0, title = NULL, started_at = '', ended_at = '' WHERE sid = ?"),
    };
    for (size_t i = 0; i < sizeof sqls / sizeof sqls[0]; i++) {
        sqlite3_stmt *st = NULL;
        rc = sq_prep(s, sqls[i], &st);
        if (rc < 0)
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        rc = sq_done(s, st, "session reset");
        if (rc < 0)
            return rc;
    }
    CONN(s)->dirty = 1;
    return 0;
}

static int sqlite_message_add(store *s, const store_message *m, int64_t *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = session_sid(s, m->session_id, &sid, NULL);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "INSERT INTO messages(message_id, sid, ordinal, role, timestamp, tool_name, "
                 "tool_input, is_error, line_no, byte_offset, byte_length, tool_call_id, "
                 "text_lines) "
                 "VALUES(?14, ?1, ?2, ?3, coalesce(?4, ''), ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, m->ordinal);
    bind_text(st, 3, m->role);
    bind_text(st, 4, m->timestamp);
    bind_text(st, 6, m->tool_name);
    bind_text(st, 7, m->tool_input);
    sqlite3_bind_int(st, 8, m->is_error ? 1 : 0);
    sqlite3_bind_int64(st, 9, m->line_no);
    sqlite3_bind_int64(st, 10, m->byte_offset);
    sqlite3_bind_int64(st, 11, m->byte_length);
    bind_text(st, 12, m->tool_call_id);
    /* Lines of the text as store_message_text_lines() defines them. */
    int64_t lines = 0;
    if (m->text && m->text[0]) {
        lines = 1;
        for (const char *p = strchr(m->text, '\n'); p; p = strchr(p + 1, '\n'))
            lines++;
    }
    sqlite3_bind_int64(st, 13, lines);
    if (m->message_id > 0) /* a message stored again keeps its id */
        sqlite3_bind_int64(st, 14, m->message_id);
    else
        sqlite3_bind_null(st, 14);
    rc = sq_done(s, st, "message insert");
    if (rc < 0)
        return rc;
    *id = sqlite3_last_insert_rowid(CONN(s)->db);
    CONN(s)->dirty = 1;
    for (int k = 0; k < 2; k++) {
        rc =
            sq_prep(s,
                    k == 0 ? "INSERT INTO message_text(message_id, text) VALUES(?, coalesce(?, ''))"
                           : "INSERT INTO messages_fts(rowid, text) VALUES(?, coalesce(?, ''))",
                    &st);
        if (rc < 0)
            return rc;
        sqlite3_bind_int64(st, 1, *id);
        bind_text(st, 2, m->text);
        rc = sq_done(s, st, "text insert");
        if (rc < 0)
            return rc;
    }
    /* A long text's token map, for its snippets (sqlite_snippet.c). One
     * row of VALUES: a statement that may need a statement journal (an
     * INSERT ... SELECT) would make FTS5 flush its pending terms. */
    size_t tlen = m->text ? strlen(m->text) : 0;
    if (tlen >= SQ_TOKMAP_MIN_BYTES && CONN(s)->snip) {
        unsigned char *map = NULL;
        int maplen = 0;
        if (store_sqlite_tokmap(CONN(s)->snip, m->text, tlen, &map, &maplen) != SQLITE_OK)
            return store_fail(s, MCPAGE_ENOMEM, "out of memory mapping a text's tokens");
        if (map) {
            rc = sq_prep(s, "INSERT INTO message_tokmap(message_id, offsets) VALUES(?, ?)", &st);
            if (rc < 0) {
                sqlite3_free(map);
                return rc;
            }
            sqlite3_bind_int64(st, 1, *id);
            sqlite3_bind_blob(st, 2, map, maplen, sqlite3_free);
            rc = sq_done(s, st, "token map insert");
            if (rc < 0)
                return rc;
        }
    }
    /* The session's count and time span follow each insert, so a sync of
     * one new line does not rescan a long session. */
    rc = sq_prep(s,
                 "UPDATE sessions SET message_count = message_count + 1, "
                 "started_at = CASE WHEN ?1 <> '' AND (started_at = '' OR ?1 < started_at) "
                 "THEN ?1 ELSE started_at END, "
                 "ended_at = CASE WHEN ?1 > ended_at THEN ?1 ELSE ended_at END WHERE sid = ?2",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, m->timestamp ? m->timestamp : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, sid);
    rc = sq_done(s, st, "session counts");
    if (rc < 0)
        return rc;
    if (m->timestamp && strlen(m->timestamp) >= 10) {
        rc = sq_prep(s,
                     "INSERT INTO session_days(sid, day, messages) VALUES(?, substr(?, 1, 10), 1) "
                     "ON CONFLICT(sid, day) DO UPDATE SET messages = messages + 1",
                     &st);
        if (rc < 0)
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        bind_text(st, 2, m->timestamp);
        rc = sq_done(s, st, "session days");
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int sqlite_raw_append(store *s, const char *id, const unsigned char *data, size_t n,
                             int64_t lines)
{
    NEED_TX();
    int64_t sid = 0;
    int64_t size = 0;
    int rc = session_sid(s, id, &sid, &size);
    if (rc < 0)
        return rc;
    size_t done = 0;
    while (done < n) {
        size_t take = n - done;
        if (take > SQ_RAW_CHUNK)
            take = SQ_RAW_CHUNK;
        sqlite3_stmt *st = NULL;
        rc = sq_prep(s, "INSERT INTO raw_chunks(sid, offset, data) VALUES(?, ?, ?)", &st);
        if (rc < 0)
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, size + (int64_t)done);
        sqlite3_bind_blob(st, 3, data + done, (int)take, SQLITE_STATIC);
        rc = sq_done(s, st, "raw insert");
        if (rc < 0)
            return rc;
        done += take;
    }
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "UPDATE sessions SET raw_size = raw_size + ?, raw_lines = raw_lines + ? "
                 "WHERE sid = ?",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, (int64_t)n);
    sqlite3_bind_int64(st, 2, lines);
    sqlite3_bind_int64(st, 3, sid);
    rc = sq_done(s, st, "raw size");
    if (rc == 0 && n)
        CONN(s)->dirty = 1;
    return rc;
}

static int sqlite_session_refresh(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s, "SELECT project_id FROM sessions WHERE sid = ?", &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    int64_t project = 0;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        project = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_err(s, "session refresh");
    if (project <= 0)
        return 0;
    rc = sq_prep(s,
                 "UPDATE projects SET "
                 "session_count = (SELECT count(*) FROM sessions WHERE project_id = ?1), "
                 "message_count = (SELECT coalesce(sum(message_count), 0) FROM sessions WHERE "
                 "project_id = ?1), "
                 "first_activity = coalesce((SELECT min(started_at) FROM sessions WHERE "
                 "project_id = ?1 AND started_at <> ''), ''), "
                 "last_activity = coalesce((SELECT max(ended_at) FROM sessions WHERE "
                 "project_id = ?1 AND ended_at <> ''), ''), "
                 "sources = coalesce((SELECT group_concat(source, ',') FROM (SELECT DISTINCT "
                 "source FROM sessions WHERE project_id = ?1 ORDER BY source)), '') "
                 "WHERE id = ?1",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, project);
    return sq_done(s, st, "project refresh");
}

static int sqlite_tool_call_name(store *s, const char *id, const char *call_id, char **name)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "SELECT tool_name FROM messages WHERE sid = ? AND tool_call_id = ? AND "
                 "role = 'assistant' AND tool_name IS NOT NULL LIMIT 1",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    bind_text(st, 2, call_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rc = col_dup(st, 0, 0, name);
        sqlite3_reset(st);
        return rc;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? MCPAGE_ENOTFOUND : sq_err(s, "tool call");
}

static int sqlite_source_get(store *s, const char *hostname, const char *path, store_source *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT hostname, path, session_id, size, inode, mtime_ns, consumed FROM "
                     "source_files WHERE hostname = ? AND path = ?",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, hostname);
    bind_text(st, 2, path);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (col_dup(st, 0, 0, &out->hostname) || col_dup(st, 1, 0, &out->path) ||
            col_dup(st, 2, 0, &out->session_id)) {
            sqlite3_reset(st);
            store_source_clear(out);
            return MCPAGE_ENOMEM;
        }
        out->size = sqlite3_column_int64(st, 3);
        out->inode = sqlite3_column_int64(st, 4);
        out->mtime_ns = sqlite3_column_int64(st, 5);
        out->consumed = sqlite3_column_int64(st, 6);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return MCPAGE_ENOTFOUND;
    return sq_err(s, "source");
}

static int sqlite_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT path, session_id, size, inode, mtime_ns, consumed FROM source_files "
                     "WHERE hostname = ? ORDER BY path",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, hostname);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->count >= max_rows) {
            sqlite3_reset(st);
            store_sources_free(out);
            return store_fail(s, MCPAGE_ERANGE, "more than %zu source files", max_rows);
        }
        store_source *rows = rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_source *r = &rows[out->count++];
        if (col_dup(st, 0, 0, &r->path) || col_dup(st, 1, 0, &r->session_id))
            goto nomem;
        r->size = sqlite3_column_int64(st, 2);
        r->inode = sqlite3_column_int64(st, 3);
        r->mtime_ns = sqlite3_column_int64(st, 4);
        r->consumed = sqlite3_column_int64(st, 5);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_sources_free(out);
        return sq_err(s, "sources");
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_sources_free(out);
    return MCPAGE_ENOMEM;
}

static int sqlite_source_put(store *s, const store_source *src)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "INSERT OR REPLACE INTO source_files(hostname, path, session_id, size, "
                     "inode, mtime_ns, consumed) VALUES(?, ?, ?, ?, ?, ?, ?)",
                     &st);
    if (rc < 0)
        return rc;
    bind_text(st, 1, src->hostname ? src->hostname : "");
    bind_text(st, 2, src->path);
    bind_text(st, 3, src->session_id);
    sqlite3_bind_int64(st, 4, src->size);
    sqlite3_bind_int64(st, 5, src->inode);
    sqlite3_bind_int64(st, 6, src->mtime_ns);
    sqlite3_bind_int64(st, 7, src->consumed);
    return sq_done(s, st, "source put");
}

/* ---- session locks, ping --------------------------------------------- */

/* Session claims are byte-range locks on "<db>-sync.lock", one byte per
 * session (by hash), open-file-description locks so two handles of one
 * process exclude each other as two processes do. */
static int session_lock_op(store *s, const char *id, short type)
{
    sq_conn *c = CONN(s);
    if (c->lock_fd < 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s-sync.lock", c->path);
        c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (c->lock_fd < 0)
            return store_fail(s, MCPAGE_EIO, "cannot open %s", path);
    }
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 16777619u;
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)(h & 0x3FFFFFFF), .l_len = 1};
    while (fcntl(c->lock_fd, F_OFD_SETLKW, &fl) < 0) {
        if (errno != EINTR)
            return store_fail(s, MCPAGE_EIO, "session lock failed");
    }
    return 0;
}

static int sqlite_session_lock(store *s, const char *id)
{
    return session_lock_op(s, id, F_WRLCK);
}

static int sqlite_session_unlock(store *s, const char *id)
{
    return session_lock_op(s, id, F_UNLCK);
}

/* Cheap: damage seen in this process, the file's header and size, one
 * row read through the schema. */
static int sqlite_ping(store *s)
{
    sq_conn *c = CONN(s);
    int rc = refuse_damaged(s);
    if (rc == 0)
        rc = store_sqlite__file_check(s, c->path, 0);
    if (rc == 0)
        rc = exec_simple(s, "SELECT value FROM meta WHERE key = 'generation'");
    return rc;
}

/*
 * The schema version a store file carries, against this build's: a
 * reader needs exactly this build's; a writer migrates an older one.
 * A database without the version table is not an mcpage store (a writer
 * accepts it only while it holds no tables: a new file).
 */
static int schema_check(store *s, int writer)
{
    sq_conn *c = CONN(s);
    int version = 0, latest = store_sqlite_schema_latest();
    if (store_sqlite_schema_version(c->db, &version) < 0)
        return sq_err(s, "reading the schema version");
    if (version == 0) {
        sqlite3_stmt *st = NULL;
        int tables = 0;
        if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            tables = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (tables == 0)
            return writer ? 0
                          : store_fail(s, MCPAGE_ENOTFOUND,
                                       "%s is empty, not an mcpage store yet: run 'mcpage sync' "
                                       "to fill it",
                                       c->path);
        return store_fail(s, MCPAGE_ENOTFOUND,
                          "%s is an SQLite database of something else, not an mcpage store: "
                          "check --db (or MCPAGE_DB); 'mcpage sync' creates a store at a path "
                          "that does not exist yet",
                          c->path);
    }
    if (version > latest)
        return store_fail(s, MCPAGE_ESTATE,
                          "the store %s has schema version %d, newer than this build of mcpage "
                          "reads (%d): upgrade mcpage",
                          c->path, version, latest);
    if (version < latest && !writer)
        return store_fail(s, MCPAGE_ESTATE,
                          "the store %s has schema version %d, older than this build reads "
                          "(%d): run 'mcpage sync' once to migrate it",
                          c->path, version, latest);
    return 0;
}

static int sqlite_check(store *s)
{
    int rc = refuse_damaged(s);
    return rc < 0 ? rc : quick_check(s);
}

/* ---- open / close --------------------------------------------------- */

static void sqlite_close(store *s)
{
    sq_conn *c = CONN(s);
    if (!c)
        return;
    if (c->in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t i = 0; i < c->ncache; i++) {
        sqlite3_finalize(c->cache[i].st);
        free(c->cache[i].sql);
    }
    sqlite3_close(c->db);
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    free(c->path);
    free(c->count_query);
    free(c);
    s->impl = NULL;
}

static const store_ops sqlite_ops = {
    .name = "sqlite",
    .close = sqlite_close,
    .projects_list = sqlite_projects_list,
    .projects_count = sqlite_projects_count,
    .sessions_list = sqlite_sessions_list,
    .sessions_count = sqlite_sessions_count,
    .session_get = sqlite_session_get,
    .messages_from = sqlite_messages_from,
    .message_get = sqlite_message_get,
    .text_lines = sqlite_text_lines,
    .raw_read = sqlite_raw_read,
    .session_summary = sqlite_session_summary,
    .search = sqlite_search,
    .search_count = sqlite_search_count,
    .activity = sqlite_activity,
    .stats = sqlite_stats,
    .generation = sqlite_generation,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .project_ensure = sqlite_project_ensure,
    .session_put = sqlite_session_put,
    .session_state = sqlite_session_state,
    .session_reset = sqlite_session_reset,
    .message_add = sqlite_message_add,
    .raw_append = sqlite_raw_append,
    .session_refresh = sqlite_session_refresh,
    .tool_call_name = sqlite_tool_call_name,
    .source_get = sqlite_source_get,
    .source_put = sqlite_source_put,
    .session_lock = sqlite_session_lock,
    .session_unlock = sqlite_session_unlock,
    .ping = sqlite_ping,
    .sources_all = sqlite_sources_all,
    .check = sqlite_check,
};

int store_sqlite_open(store *s, const char *path, int flags)
{
    if (strlen(path) > 4096)
        return store_fail(s, MCPAGE_ERANGE, "path too long");
    sq_conn *c = calloc(1, sizeof *c);
    if (!c)
        return MCPAGE_ENOMEM;
    c->lock_fd = -1;
    c->path = store_strdup(path);
    if (!c->path) {
        free(c);
        return MCPAGE_ENOMEM;
    }
    int writer = (flags & STORE_OPEN_WRITE) != 0;
    int oflags = writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int rc = store_sqlite__file_check(s, path, writer);
    if (rc < 0)
        goto fail;
    struct stat before;
    int existed = stat(path, &before) == 0 && before.st_size > 0;
    if (sqlite3_open_v2(path, &c->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int code = c->db ? sqlite3_errcode(c->db) : SQLITE_NOMEM;
        if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN)
            rc = store_sqlite__readonly(s, path, writer);
        else
            rc = store_fail(s, MCPAGE_EIO, "cannot open %s: %s", path,
                            c->db ? sqlite3_errmsg(c->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(c->db, 10000);
    sqlite3_extended_result_codes(c->db, 0);
    sqlite3_progress_handler(c->db, SQ_PROGRESS_OPS, sq_progress, s);
    c->rank_nhit = -1;
    c->own_snippet = store_sqlite_snippet_register(c->db, &c->rank_nhit, &c->snip) == 0;
    s->impl = c;
    s->ops = &sqlite_ops;
    if (writer) {
        /* Nothing is written into a file that is damaged or not ours:
         * the whole file is checked first (a sync's one-time cost). */
        if (existed && ((rc = refuse_damaged(s)) < 0 || (rc = quick_check(s)) < 0 ||
                        (rc = schema_check(s, 1)) < 0))
            goto fail_open;
        /* Two writers opening a fresh file at once (concurrent syncs):
         * switching to WAL needs a lock the busy handler does not wait
         * for, so the loser retries for up to 5 s. */
        for (int tries = 0; tries < 50; tries++) {
            rc = exec_simple(s, "PRAGMA journal_mode = WAL");
            if (rc == 0 || sqlite3_errcode(c->db) != SQLITE_BUSY)
                break;
            usleep(100000);
        }
        if (rc < 0 || (rc = exec_simple(s, "PRAGMA synchronous = NORMAL")) < 0 ||
            (rc = exec_simple(s, "PRAGMA cache_size = -65536")) < 0)
            goto fail_open;
        char err[512] = "";
        rc = store_sqlite_migrate(c->db, err, sizeof err);
        if (rc < 0) {
            if (sqlite3_errcode(c->db) != SQLITE_OK && sq_fail(s, rc, err) != rc)
                rc = MCPAGE_ESTORE; /* damaged or read-only, said by sq_fail */
            else
                store_fail(s, rc, "%s", err);
            goto fail_open;
        }
    } else if ((rc = schema_check(s, 0)) < 0) {
        goto fail_open;
    }
    return 0;
fail_open:
    sqlite_close(s);
    s->ops = NULL;
    return rc;
fail:
    sqlite3_close(c->db);
    free(c->path);
    free(c);
    return rc;
}
