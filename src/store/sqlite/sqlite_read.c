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

int sqlite_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                         store_projects *out)
{
    store_sql q = {.d = &sq_dialect};
    sqlite3_stmt *st = NULL;
    store_sql_add(&q, "SELECT " STORE_SQL_PROJECT_COLS " FROM ");
    store_sql_projects_from(&q, f->view);
    store_sql_project_where(&q, f);
    const char *order, *cmp;
    store_key_type types[2];
    store_project_order(f->sort, &order, &cmp, types);
    int rc = store_sql_after(s, &q, pg, cmp, types);
    if (rc < 0)
        return rc;
    store_sql_page(&q, order, pg);
    rc = sq_sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_project *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_sql_row r = sq_row(st);
        if (store_sql_project_row(&r, f->sort, &rows[out->count++]) < 0)
            goto nomem;
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
    store_sql q = {.d = &sq_dialect};
    store_sql_add(&q, "SELECT count(*) FROM ");
    store_sql_projects_from(&q, f->view);
    size_t mark = q.len;
    store_sql_project_where(&q, f);
    store_sql_where_end(&q, mark);
    return sq_count_query(s, &q, n, MCPAGE_ESTORE);
}

/* ---- sessions ------------------------------------------------------- */

int sqlite_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                         store_sessions *out)
{
    store_sql q = {.d = &sq_dialect};
    sqlite3_stmt *st = NULL;
    const char *order, *cmp;
    store_key_type types[2];
    store_session_order(f->order != STORE_OLDEST, &order, &cmp, types);
    /* An offset page skips rows of the index alone, then reads its own
     * rows: SQLite's OFFSET reads every skipped row with its columns and
     * project (9,760 sessions: 5.5 ms; the index alone: 0.07 ms). */
    int deferred = !store_page_keyset(pg) && pg->offset > 0;
    store_sql_add(&q, deferred ? "SELECT " STORE_SQL_SESSION_COLS
                                 " FROM (SELECT s.sid FROM sessions s"
                               : "SELECT " STORE_SQL_SESSION_COLS " FROM " STORE_SQL_SESSION_FROM);
    store_sql_session_where(&q, f);
    if (deferred) {
        store_sql_page(&q, order, pg);
        store_sql_add(&q,
                      ") k CROSS JOIN sessions s ON s.sid = k.sid LEFT JOIN projects p ON p.id = "
                      "s.project_id ORDER BY ");
        store_sql_add(&q, order);
    } else {
        int rc = store_sql_after(s, &q, pg, cmp, types);
        if (rc < 0)
            return rc;
        store_sql_page(&q, order, pg);
    }
    int rc = sq_sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    /* Room for a tool's page at once: a row is about 1 KiB (its key), and
       growing from 16 to 32 rows for a page of 21 cost a tenth of the query.
       Not zeroed (that was 21 KiB a first page): store_sql_session_row
       sets every field a reader or store_sessions_free uses. */
    size_t cap = out->rows == NULL && pg->limit > 0 && pg->limit <= 128 ? (size_t)pg->limit : 0;
    if (cap && (out->rows = malloc(cap * sizeof *out->rows)) == NULL)
        cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_session *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_sql_row r = sq_row(st);
        if (store_sql_session_row(&r, &rows[out->count++]) < 0)
            goto nomem;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_sessions_free(out);
        return sq_err(s, "sessions");
    }
    if (out->count == 0) {
        free(out->rows); /* no rows, no array: as before it was made ahead */
        out->rows = NULL;
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_sessions_free(out);
    return MCPAGE_ENOMEM;
}

int sqlite_sessions_count(store *s, const store_session_filter *f, int64_t *n)
{
    store_sql q = {.d = &sq_dialect};
    store_sql_add(&q, "SELECT count(*) FROM sessions s");
    store_sql_session_where(&q, f);
    store_sql_where_end(&q, strlen("SELECT count(*) FROM sessions s"));
    return sq_count_query(s, &q, n, MCPAGE_ESTORE);
}

int sqlite_session_get(store *s, const char *id, store_session *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT " STORE_SQL_SESSION_COLS " FROM " STORE_SQL_SESSION_FROM
                     " WHERE s.session_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        store_sql_row r = sq_row(st);
        rc = store_sql_session_row(&r, out);
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
        store_sql_row r = sq_row(st);
        if (store_sql_message_row(&r, &rows[out->count++]) < 0)
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
        store_sql_row r = sq_row(st);
        rc = store_sql_message_row(&r, out);
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
                 "SELECT offset, data, codec FROM raw_chunks WHERE sid = ?1 AND offset >= "
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
        const unsigned char *plain = NULL;
        int64_t plen = 0;
        const unsigned char *data = sqlite3_column_blob(st, 1);
        int bad = store_raw_chunk(s, id, at, sqlite3_column_int64(st, 2), data,
                                  sqlite3_column_bytes(st, 1), &plain, &plen);
        if (bad < 0) {
            sqlite3_reset(st);
            rc = bad;
            goto fail;
        }
        if (!store_raw_take(out, offset, end, &filled, at, plain, plen))
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
    store_sql q = {.d = &sq_dialect};
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
    store_sql_add(&q, "SELECT p.id, p.name, ");
    store_sql_add(&q, bucket);
    store_sql_add(&q, " AS b, sum(d.messages) FROM session_days d JOIN sessions s ON s.sid = d.sid "
                      "JOIN projects p ON p.id = s.project_id WHERE 1");
    store_sql_where_text(&q, "d.day >= substr(?, 1, 10)", f->after);
    store_sql_where_text(&q, "d.day < substr(?, 1, 10)", f->before);
    if (f->project && *f->project) {
        store_sql_add(&q, " AND (p.name = ? OR p.path = ?)");
        store_sql_text(&q, f->project);
        store_sql_text(&q, f->project);
    }
    store_sql_where_text(&q, "s.source = ?", f->source);
    store_sql_visible(&q, f->view, "s");
    store_sql_add(&q, " GROUP BY b, p.id ORDER BY b, p.id LIMIT ?");
    store_sql_int(&q, (int64_t)max_rows + 1);
    int rc = sq_sql_prepare(s, &q, &st);
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
