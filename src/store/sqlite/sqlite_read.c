/*
 * The SQLite backend's reads: projects, sessions, messages, raw bytes,
 * summaries, activity and stats. Lists are built with the SQL builder
 * (sqlite_store.c), so each filter combination is one cached statement,
 * and keyset positions become row-value comparisons that the indexes
 * created in sqlite_schema.c serve directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/sqlite/sqlite_internal.h"

/* ---- projects ------------------------------------------------------- */

static void project_where(sq_sql *q, const store_project_filter *f)
{
    sql_add(q, " WHERE 1");
    sql_where_text(q, "instr(lower(p.name), lower(?)) > 0", f->name_contains);
    sql_where_text(q, "instr(',' || p.sources || ',', ',' || ? || ',') > 0", f->source);
}

int sqlite_projects_list(store *s, const store_project_filter *f, const store_page *pg,
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
        sq_key_bind(&q, &pg->after->part[0]);
        sq_key_bind(&q, &pg->after->part[1]);
    }
    sql_page(&q, order, pg);
    int rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_project *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_project *p = &rows[out->count++];
        p->id = sqlite3_column_int64(st, 0);
        if (sq_col_dup(st, 1, 0, &p->name) || sq_col_dup(st, 2, 0, &p->path) ||
            sq_col_dup(st, 3, 0, &p->sources) || sq_col_dup(st, 6, 1, &p->first_activity) ||
            sq_col_dup(st, 7, 1, &p->last_activity))
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

int sqlite_projects_count(store *s, const store_project_filter *f, int64_t *n)
{
    sq_sql q = {0};
    sql_add(&q, "SELECT count(*) FROM projects p");
    project_where(&q, f);
    sql_where_end(&q, strlen("SELECT count(*) FROM projects p"));
    return sq_count_query(s, &q, n, MCPAGE_ESTORE);
}

/* ---- sessions ------------------------------------------------------- */

#define SESSION_COLS                                                                               \
    "s.session_id, s.source, s.project_id, p.name, s.title, s.started_at, s.ended_at, s.model, "   \
    "s.git_branch, s.message_count, s.parent_session_id, s.source_path, s.hostname, s.raw_size"

static int session_row(sqlite3_stmt *st, store_session *r)
{
    if (sq_col_dup(st, 0, 0, &r->session_id) || sq_col_dup(st, 1, 0, &r->source) ||
        sq_col_dup(st, 3, 1, &r->project) || sq_col_dup(st, 4, 1, &r->title) ||
        sq_col_dup(st, 5, 1, &r->started_at) || sq_col_dup(st, 6, 1, &r->ended_at) ||
        sq_col_dup(st, 7, 1, &r->model) || sq_col_dup(st, 8, 1, &r->git_branch) ||
        sq_col_dup(st, 10, 1, &r->parent_session_id) || sq_col_dup(st, 11, 1, &r->source_path) ||
        sq_col_dup(st, 12, 1, &r->hostname))
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

int sqlite_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
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
        sq_key_bind(&q, &pg->after->part[0]);
        sq_key_bind(&q, &pg->after->part[1]);
    }
    if (!deferred)
        sql_page(&q, order, pg);
    int rc = sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_session *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
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

int sqlite_sessions_count(store *s, const store_session_filter *f, int64_t *n)
{
    sq_sql q = {0};
    sql_add(&q, "SELECT count(*) FROM sessions s");
    session_where(&q, f);
    sql_where_end(&q, strlen("SELECT count(*) FROM sessions s"));
    return sq_count_query(s, &q, n, MCPAGE_ESTORE);
}

int sqlite_session_get(store *s, const char *id, store_session *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " SESSION_COLS " FROM sessions s LEFT JOIN projects p ON p.id = "
                     "s.project_id WHERE s.session_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
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
    if (sq_col_dup(st, 1, 0, &m->session_id) || sq_col_dup(st, 3, 0, &m->role) ||
        sq_col_dup(st, 4, 1, &m->timestamp) || sq_col_dup(st, 5, 0, &m->text) ||
        sq_col_dup(st, 6, 1, &m->tool_name) || sq_col_dup(st, 7, 1, &m->tool_input) ||
        sq_col_dup(st, 12, 1, &m->tool_call_id))
        return MCPAGE_ENOMEM;
    m->ordinal = sqlite3_column_int64(st, 2);
    m->is_error = sqlite3_column_int(st, 8);
    m->line_no = sqlite3_column_int64(st, 9);
    m->byte_offset = sqlite3_column_int64(st, 10);
    m->byte_length = sqlite3_column_int64(st, 11);
    return 0;
}

int sqlite_messages_from(store *s, const char *id, int64_t from, int64_t limit, store_messages *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " MESSAGE_COLS " FROM sessions s JOIN messages m ON m.sid = s.sid "
                     "LEFT JOIN message_text t ON t.message_id = m.message_id "
                     "WHERE s.session_id = ? AND m.ordinal >= ? ORDER BY m.ordinal LIMIT ?",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, limit);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_message *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
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
int sqlite_text_lines(store *s, const char *id, int64_t before, store_text_lines *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT m.ordinal, m.text_lines FROM sessions s "
                     "JOIN messages m INDEXED BY messages_lines ON m.sid = s.sid "
                     "WHERE s.session_id = ? AND m.ordinal < ? ORDER BY m.ordinal",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, before);
    size_t cap = 0, cap2 = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *o = sq_rows_grow(out->ordinal, out->count, &cap, sizeof *o);
        if (!o)
            goto nomem;
        out->ordinal = o;
        int64_t *l = sq_rows_grow(out->lines, out->count, &cap2, sizeof *l);
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

int sqlite_message_get(store *s, int64_t id, store_message *out)
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

int sq_session_sid(store *s, const char *id, int64_t *sid, int64_t *raw_size)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT sid, raw_size FROM sessions WHERE session_id = ?", &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
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

int sqlite_raw_read(store *s, const char *id, int64_t offset, int64_t length, unsigned char **buf,
                    size_t *n, int64_t *total)
{
    int64_t sid = 0;
    int rc = sq_session_sid(s, id, &sid, total);
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
        store_count *rows = sq_rows_grow(*out, *n, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        *out = rows;
        if (sq_col_dup(st, 0, 0, &rows[*n].name) < 0)
            goto nomem;
        rows[(*n)++].count = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sq_err(s, "summary");
nomem:
    sqlite3_reset(st);
    return MCPAGE_ENOMEM;
}

int sqlite_session_summary(store *s, const char *id, store_session_summary *out)
{
    int64_t sid = 0;
    int rc = sq_session_sid(s, id, &sid, NULL);
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
        rc = sq_col_dup(st, 0, 1, &out->first_prompt);
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

/* ---- activity ------------------------------------------------------- */

int sqlite_activity(store *s, const store_activity_filter *f, size_t max_rows, store_activity *out)
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
        store_activity_row *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_activity_row *r = &rows[out->count++];
        r->project_id = sqlite3_column_int64(st, 0);
        if (sq_col_dup(st, 1, 0, &r->project) || sq_col_dup(st, 2, 0, &r->bucket))
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

int sqlite_generation(store *s, int64_t *gen)
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

int sqlite_stats(store *s, store_stats *out)
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
