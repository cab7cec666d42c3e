/*
 * The SQLite backend's writes (what sync calls): transactions and the
 * generation, projects, sessions, messages with their text, FTS rows and
 * token maps, raw chunks, source files, and session claims (byte locks
 * on "<db>-sync.lock").
 */
#define _GNU_SOURCE /* F_OFD_SETLKW */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_internal.h"

/* ---- transactions --------------------------------------------------- */

int sqlite_begin(store *s)
{
    sq_conn *c = CONN(s);
    if (c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "a transaction is already open");
    int rc = sq_refuse_damaged(s);
    if (rc < 0)
        return rc;
    rc = sq_exec(s, "BEGIN IMMEDIATE");
    if (rc < 0)
        return rc;
    c->in_tx = 1;
    c->dirty = 0;
    return 0;
}

int sqlite_commit(store *s)
{
    sq_conn *c = CONN(s);
    if (!c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "no transaction is open");
    int prc = sq_pending_flush(s);
    if (prc < 0)
        return prc;
    if (c->dirty) {
        int rc = sq_exec(s, "UPDATE meta SET value = value + 1 WHERE key = 'generation'");
        if (rc < 0)
            return rc;
    }
    /* the new rows' lengths and the impact lists this process built, for
     * relevance in a fresh process (sqlite_rank.c, sqlite_impact.c) */
    int rc = store_sqlite__lengths_save(s);
    if (rc < 0 || (rc = store_sqlite__impact_save(s)) < 0)
        return rc;
    rc = sq_exec(s, "COMMIT");
    if (rc < 0)
        return rc;
    c->in_tx = 0;
    c->dirty = 0;
    return 0;
}

int sqlite_rollback(store *s)
{
    sq_conn *c = CONN(s);
    if (!c->in_tx)
        return 0;
    c->in_tx = 0;
    c->dirty = 0;
    /* the counters belong to rows rolled back; a session created in the
     * transaction may give its row id to another */
    c->pend.sid = 0;
    free(c->add_session);
    c->add_session = NULL;
    /* SQLite ends a transaction itself on some errors (a full disk): a ROLLBACK then fails
       with "no transaction is active", which would hide the error that ended it */
    if (sqlite3_get_autocommit(c->db))
        return 0;
    return sq_exec(s, "ROLLBACK");
}

#define NEED_TX()                                                                                  \
    do {                                                                                           \
        if (!CONN(s)->in_tx)                                                                       \
            return store_fail(s, MCPAGE_ESTATE, "writes need a transaction");                      \
    } while (0)

/* ---- writes --------------------------------------------------------- */

int sqlite_project_ensure(store *s, const char *path, const char *name, int64_t *id)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT id FROM projects WHERE path = ?", &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, path);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return sq_err(s, "project");
    /* a name no other project holds, so that it selects this one */
    char unique[1024];
    for (int attempt = 0;; attempt++) {
        if (attempt == STORE_PROJECT_NAME_TRIES)
            return store_fail(s, MCPAGE_ESTORE, "no free display name for the project at %s", path);
        store_project_name_try(path, name, attempt, unique, sizeof unique);
        rc = sq_prep(s, "SELECT 1 FROM projects WHERE name = ?", &st);
        if (rc < 0)
            return rc;
        sq_bind_text(st, 1, unique);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW)
            return sq_err(s, "project name");
    }
    rc = sq_prep(s, "INSERT INTO projects(path, name) VALUES(?, ?)", &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, path);
    sq_bind_text(st, 2, unique);
    rc = sq_done(s, st, "project insert");
    if (rc < 0)
        return rc;
    *id = sqlite3_last_insert_rowid(CONN(s)->db);
    CONN(s)->dirty = 1;
    return 0;
}

int sqlite_session_put(store *s, const store_session_meta *m)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "INSERT INTO sessions(session_id, source, project_id, title, model, "
                     "git_branch, parent_session_id, source_path, hostname, head_hash, head_len, "
                     "owner) VALUES(?1, coalesce(?2, ''), coalesce(?3, 0), ?4, ?5, ?6, ?7, ?8, "
                     "?9, coalesce(?10, 0), coalesce(?11, 0), ?12) "
                     "ON CONFLICT(session_id) DO UPDATE SET owner = coalesce(owner, ?12), "
                     "source = coalesce(?2, source), project_id = coalesce(?3, project_id), "
                     "title = coalesce(?4, title), model = coalesce(?5, model), "
                     "git_branch = coalesce(?6, git_branch), "
                     "parent_session_id = coalesce(?7, parent_session_id), "
                     "source_path = coalesce(?8, source_path), hostname = coalesce(?9, hostname), "
                     "head_hash = coalesce(?10, head_hash), head_len = coalesce(?11, head_len)",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, m->session_id);
    sq_bind_text(st, 2, m->source);
    if (m->project_id > 0)
        sqlite3_bind_int64(st, 3, m->project_id);
    sq_bind_text(st, 4, m->title);
    sq_bind_text(st, 5, m->model);
    sq_bind_text(st, 6, m->git_branch);
    sq_bind_text(st, 7, m->parent_session_id);
    sq_bind_text(st, 8, m->source_path);
    sq_bind_text(st, 9, m->hostname);
    if (m->head_len > 0) {
        sqlite3_bind_int64(st, 10, (int64_t)m->head_hash);
        sqlite3_bind_int64(st, 11, m->head_len);
    }
    sq_bind_text(st, 12, m->owner);
    rc = sq_done(s, st, "session upsert");
    if (rc == 0)
        CONN(s)->dirty = 1;
    return rc;
}

int sqlite_session_state(store *s, const char *id, store_session_state *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT raw_size, raw_lines, head_hash, head_len, message_count, project_id, "
                     "coalesce(title, '') <> '' FROM sessions WHERE session_id = ?",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, id);
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

int sqlite_session_reset(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = sq_session_sid(s, id, &sid, NULL);
    if (rc == MCPAGE_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    static const char *const sqls[] = {
        "DELETE FROM message_body WHERE message_id IN (SELECT message_id FROM messages WHERE "
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

/* ---- session counters, added up per batch (sq_pending) -------------- */

int sq_pending_flush(store *s)
{
    sq_conn *c = CONN(s);
    sq_pending *p = &c->pend;
    if (!p->sid)
        return 0;
    c->pend_hold++;
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "UPDATE sessions SET message_count = message_count + ?3, "
                     "started_at = CASE WHEN ?1 <> '' AND (started_at = '' OR ?1 < started_at) "
                     "THEN ?1 ELSE started_at END, "
                     "ended_at = CASE WHEN ?2 > ended_at THEN ?2 ELSE ended_at END WHERE sid = ?4",
                     &st);
    if (rc == 0) {
        sqlite3_bind_text(st, 1, p->first, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, p->last, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, p->count);
        sqlite3_bind_int64(st, 4, p->sid);
        rc = sq_done(s, st, "session counts");
    }
    for (int i = 0; i < p->ndays && rc == 0; i++) {
        rc = sq_prep(s,
                     "INSERT INTO session_days(sid, day, messages) VALUES(?, ?, ?) "
                     "ON CONFLICT(sid, day) DO UPDATE SET messages = messages + excluded.messages",
                     &st);
        if (rc < 0)
            break;
        sqlite3_bind_int64(st, 1, p->sid);
        sqlite3_bind_text(st, 2, p->day[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, p->day_n[i]);
        rc = sq_done(s, st, "session days");
    }
    c->pend_hold--;
    p->sid = 0;
    return rc;
}

/* Bytes of the first 10 characters of a UTF-8 timestamp (SQL's
 * substr(ts, 1, 10)): the session_days key. */
static size_t day_bytes(const char *ts)
{
    size_t i = 0;
    for (int chars = 0; ts[i]; i++) {
        if (((unsigned char)ts[i] & 0xC0) != 0x80 && ++chars > 10)
            break;
    }
    return i;
}

/* Adds one message of session `sid` at `ts` to the pending counters: 0,
 * or 1 when it does not fit them (a long timestamp, many days) and must
 * be written at once (after the pending ones). */
static int pend_add(store *s, int64_t sid, const char *ts)
{
    sq_conn *c = CONN(s);
    sq_pending *p = &c->pend;
    size_t tlen = strlen(ts), dlen = tlen >= 10 ? day_bytes(ts) : 0;
    int day = -1;
    if (p->sid == sid)
        for (int i = 0; i < p->ndays && day < 0; i++)
            if (strncmp(p->day[i], ts, dlen) == 0 && p->day[i][dlen] == 0)
                day = i;
    int fits = tlen < SQ_PEND_TS_MAX &&
               (dlen == 0 || day >= 0 || p->sid != sid || p->ndays < SQ_PEND_DAYS);
    if (p->sid && (p->sid != sid || !fits)) {
        int rc = sq_pending_flush(s);
        if (rc < 0)
            return rc;
        day = -1;
    }
    if (!fits)
        return 1;
    if (!p->sid) {
        memset(p, 0, sizeof *p);
        p->sid = sid;
    }
    p->count++;
    if (ts[0] && (!p->first[0] || strcmp(ts, p->first) < 0))
        memcpy(p->first, ts, tlen + 1);
    if (strcmp(ts, p->last) > 0)
        memcpy(p->last, ts, tlen + 1);
    if (dlen && day < 0) {
        day = p->ndays++;
        memcpy(p->day[day], ts, dlen);
        p->day[day][dlen] = 0;
    }
    if (dlen)
        p->day_n[day]++;
    return 0;
}

/* The session's row id: the last message's when it is the same session
 * (a pass adds a file's messages one after the other). */
static int add_sid(store *s, const char *id, int64_t *sid)
{
    sq_conn *c = CONN(s);
    if (c->add_session && strcmp(c->add_session, id) == 0) {
        *sid = c->add_sid;
        return 0;
    }
    int rc = sq_session_sid(s, id, sid, NULL);
    if (rc < 0)
        return rc;
    free(c->add_session);
    c->add_session = store_strdup(id);
    c->add_sid = *sid;
    return 0;
}

static int message_add(store *s, const store_message *m, const store_text_packed *packed,
                       int64_t *id);

int sqlite_message_add(store *s, const store_message *m, const store_text_packed *packed,
                       int64_t *id)
{
    NEED_TX();
    CONN(s)->pend_hold++;
    int rc = message_add(s, m, packed, id);
    CONN(s)->pend_hold--;
    return rc;
}

/* The message's rows; its session's counters wait in sq_pending. */
static int message_add(store *s, const store_message *m, const store_text_packed *packed,
                       int64_t *id)
{
    int64_t sid = 0;
    int rc = add_sid(s, m->session_id, &sid);
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
    sq_bind_text(st, 3, m->role);
    sq_bind_text(st, 4, m->timestamp);
    sq_bind_text(st, 6, m->tool_name);
    sq_bind_text(st, 7, m->tool_input);
    sqlite3_bind_int(st, 8, m->is_error ? 1 : 0);
    sqlite3_bind_int64(st, 9, m->line_no);
    sqlite3_bind_int64(st, 10, m->byte_offset);
    sqlite3_bind_int64(st, 11, m->byte_length);
    sq_bind_text(st, 12, m->tool_call_id);
    /* Lines of the text as store_message_text_lines() defines them. */
    size_t tlen = m->text ? strlen(m->text) : 0;
    int64_t lines = 0;
    if (tlen) {
        lines = 1;
        for (const char *p = memchr(m->text, '\n', tlen); p;
             p = memchr(p + 1, '\n', tlen - (size_t)(p + 1 - m->text)))
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
    /* The text kept compressed when that is smaller (sqlite_text.c); the
     * index is given the text itself. */
    int codec = STORE_CODEC_PLAIN;
    const unsigned char *kept = NULL;
    size_t keptn = 0;
    if (packed) {
        codec = packed->codec;
        kept = packed->bytes ? packed->bytes : (const unsigned char *)"";
        keptn = packed->n;
    } else if ((rc = store_sqlite__text_encode(s, m->text ? m->text : "", tlen, &codec, &kept,
                                               &keptn)) < 0) {
        return rc;
    }
    if ((rc = sq_prep(s, "INSERT INTO message_body(message_id, codec, text) VALUES(?, ?, ?)",
                      &st)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, *id);
    sqlite3_bind_int(st, 2, codec);
    /* the bytes outlive the step (sq_done resets the statement): no copy */
    if (codec == STORE_CODEC_PLAIN)
        sqlite3_bind_text64(st, 3, (const char *)kept, keptn, SQLITE_STATIC, SQLITE_UTF8);
    else
        sqlite3_bind_blob64(st, 3, kept, keptn, SQLITE_STATIC);
    if ((rc = sq_done(s, st, "text insert")) < 0 ||
        (rc = sq_prep(s, "INSERT INTO messages_fts(rowid, text) VALUES(?, coalesce(?, ''))", &st)) <
            0)
        return rc;
    sqlite3_bind_int64(st, 1, *id);
    if (m->text)
        sqlite3_bind_text64(st, 2, m->text, tlen, SQLITE_STATIC, SQLITE_UTF8);
    if (tlen >= SQ_TOKMAP_MIN_BYTES && CONN(s)->snip)
        store_sqlite_tokmap_watch(CONN(s)->snip); /* the map from FTS5's tokens */
    if (packed && packed->tokens && CONN(s)->snip)
        store_sqlite_tokens_arm(CONN(s)->snip, packed->tokens);
    rc = sq_done(s, st, "text insert");
    if (CONN(s)->snip)
        store_sqlite_tokens_arm(CONN(s)->snip, NULL);
    if (rc < 0)
        return rc;
    /* A long text's token map, for its snippets (sqlite_snippet.c). One
     * row of VALUES: a statement that may need a statement journal (an
     * INSERT ... SELECT) would make FTS5 flush its pending terms. */
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
    /* The session's count and time span follow each insert (added up in
     * sq_pending), so a sync of one new line does not rescan a long
     * session. */
    rc = pend_add(s, sid, m->timestamp ? m->timestamp : "");
    if (rc <= 0)
        return rc;
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
        sq_bind_text(st, 2, m->timestamp);
        rc = sq_done(s, st, "session days");
        if (rc < 0)
            return rc;
    }
    return 0;
}

int sqlite_raw_append(store *s, const char *id, const store_raw_packed *v, size_t nv, int64_t lines)
{
    NEED_TX();
    int64_t sid = 0;
    int64_t size = 0;
    int rc = sq_session_sid(s, id, &sid, &size);
    if (rc < 0)
        return rc;
    int64_t n = 0; /* raw bytes appended */
    for (size_t i = 0; i < nv; i++) {
        sqlite3_stmt *st = NULL;
        rc = sq_prep(s, "INSERT INTO raw_chunks(sid, offset, data, codec) VALUES(?, ?, ?, ?)", &st);
        if (rc < 0)
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, size + n);
        sqlite3_bind_blob(st, 3, v[i].bytes, (int)v[i].n, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, v[i].codec);
        rc = sq_done(s, st, "raw insert");
        if (rc < 0)
            return rc;
        n += (int64_t)v[i].raw_n;
    }
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s,
                 "UPDATE sessions SET raw_size = raw_size + ?, raw_lines = raw_lines + ? "
                 "WHERE sid = ?",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, n);
    sqlite3_bind_int64(st, 2, lines);
    sqlite3_bind_int64(st, 3, sid);
    rc = sq_done(s, st, "raw size");
    if (rc == 0 && n)
        CONN(s)->dirty = 1;
    return rc;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "b,a,c" in place as "a,b,c" (a project's sources: a handful). */
static int sort_names(char *list)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    char **v = malloc(n * sizeof *v), *copy = strdup(list);
    if (!v || !copy) {
        free(v);
        free(copy);
        return MCPAGE_ENOMEM;
    }
    n = 0;
    for (char *p = copy, *end; p; p = end ? end + 1 : NULL) {
        end = strchr(p, ',');
        if (end)
            *end = 0;
        v[n++] = p;
    }
    qsort(v, n, sizeof *v, name_cmp);
    char *out = list;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(v[i]);
        if (i)
            *out++ = ',';
        memcpy(out, v[i], k);
        out += k;
    }
    *out = 0;
    free(v);
    free(copy);
    return 0;
}

int sqlite_session_refresh(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = sq_session_sid(s, id, &sid, NULL);
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
    /* one pass over the project's sessions (five subqueries read them five
       times: 38 ms at 6,000 sessions, paid by every file a sync reads) */
    rc = sq_prep(s,
                 "SELECT count(*), coalesce(sum(message_count), 0), "
                 "coalesce(min(nullif(started_at, '')), ''), "
                 "coalesce(max(nullif(ended_at, '')), ''), group_concat(DISTINCT source) "
                 "FROM sessions WHERE project_id = ?",
                 &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, project);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return sq_err(s, "project refresh");
    }
    int64_t sessions = sqlite3_column_int64(st, 0), messages = sqlite3_column_int64(st, 1);
    char *first = NULL, *last = NULL, *sources = NULL;
    rc = 0;
    if (sq_col_dup(st, 2, 0, &first) || sq_col_dup(st, 3, 0, &last) ||
        sq_col_dup(st, 4, 0, &sources))
        rc = MCPAGE_ENOMEM;
    sqlite3_reset(st);
    if (rc == 0)
        rc = sort_names(sources);
    if (rc == 0)
        rc = sq_prep(s,
                     "UPDATE projects SET session_count = ?, message_count = ?, "
                     "first_activity = ?, last_activity = ?, sources = ? WHERE id = ?",
                     &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, sessions);
        sqlite3_bind_int64(st, 2, messages);
        sq_bind_text(st, 3, first);
        sq_bind_text(st, 4, last);
        sq_bind_text(st, 5, sources);
        sqlite3_bind_int64(st, 6, project);
        rc = sq_done(s, st, "project refresh");
    }
    free(first);
    free(last);
    free(sources);
    return rc;
}

int sqlite_tool_call_name(store *s, const char *id, const char *call_id, char **name)
{
    int64_t sid = 0;
    int rc = sq_session_sid(s, id, &sid, NULL);
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
    sq_bind_text(st, 2, call_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        rc = sq_col_dup(st, 0, 0, name);
        sqlite3_reset(st);
        return rc;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? MCPAGE_ENOTFOUND : sq_err(s, "tool call");
}

int sqlite_source_get(store *s, const char *hostname, const char *path, store_source *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT hostname, path, session_id, size, inode, mtime_ns, consumed FROM "
                     "source_files WHERE hostname = ? AND path = ?",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, hostname);
    sq_bind_text(st, 2, path);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (sq_col_dup(st, 0, 0, &out->hostname) || sq_col_dup(st, 1, 0, &out->path) ||
            sq_col_dup(st, 2, 0, &out->session_id)) {
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

/* Where the rows' strings go: blocks of SOURCES_BLOCK bytes (or one
 * string's), each beginning with the address of the one made before. */
#define SOURCES_BLOCK (256 * 1024)
typedef struct text_blocks {
    char *at;    /* free room in the newest block */
    size_t room; /* its bytes */
} text_blocks;

/* A copy of column i's text in out's blocks, or NULL (out of memory, or
 * the value is NULL). */
static char *col_packed(sqlite3_stmt *st, int i, store_sources *out, text_blocks *tb)
{
    const unsigned char *v = sqlite3_column_text(st, i);
    if (!v)
        return NULL;
    size_t n = (size_t)sqlite3_column_bytes(st, i) + 1;
    if (n > tb->room) {
        size_t size = sizeof(void *) + (n > SOURCES_BLOCK ? n : SOURCES_BLOCK);
        char *b = malloc(size);
        if (!b)
            return NULL;
        memcpy(b, &out->text, sizeof out->text);
        out->text = b;
        tb->at = b + sizeof(void *);
        tb->room = size - sizeof(void *);
    }
    char *copy = tb->at;
    memcpy(copy, v, n);
    tb->at += n;
    tb->room -= n;
    return copy;
}

int sqlite_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT path, session_id, size, inode, mtime_ns, consumed FROM source_files "
                     "WHERE hostname = ? ORDER BY path",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, hostname);
    size_t cap = 0;
    text_blocks tb = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->count >= max_rows) {
            sqlite3_reset(st);
            store_sources_free(out);
            return store_fail(s, MCPAGE_ERANGE, "more than %zu source files", max_rows);
        }
        store_source *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_source *r = &rows[out->count++];
        if (!(r->path = col_packed(st, 0, out, &tb)) ||
            !(r->session_id = col_packed(st, 1, out, &tb)))
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

int sqlite_source_put(store *s, const store_source *src)
{
    NEED_TX();
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "INSERT OR REPLACE INTO source_files(hostname, path, session_id, size, "
                     "inode, mtime_ns, consumed) VALUES(?, ?, ?, ?, ?, ?, ?)",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, src->hostname ? src->hostname : "");
    sq_bind_text(st, 2, src->path);
    sq_bind_text(st, 3, src->session_id);
    sqlite3_bind_int64(st, 4, src->size);
    sqlite3_bind_int64(st, 5, src->inode);
    sqlite3_bind_int64(st, 6, src->mtime_ns);
    sqlite3_bind_int64(st, 7, src->consumed);
    return sq_done(s, st, "source put");
}

/* ---- session locks, ping --------------------------------------------- */

/* Session claims are byte-range locks on "<db>-sync.lock", one byte per
 * session (by hash), open-file-description locks so two handles of one
 * process exclude each other as two processes do. With `wait` 0 a claim
 * another handle holds answers 1 instead of waiting. */
static int session_lock_op(store *s, const char *id, short type, int wait)
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
    while (fcntl(c->lock_fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0) {
        if (!wait && (errno == EAGAIN || errno == EACCES))
            return 1;
        if (errno != EINTR)
            return store_fail(s, MCPAGE_EIO, "session lock failed");
    }
    return 0;
}

int sqlite_session_lock(store *s, const char *id)
{
    return session_lock_op(s, id, F_WRLCK, 1);
}

int sqlite_session_trylock(store *s, const char *id)
{
    int rc = session_lock_op(s, id, F_WRLCK, 0);
    return rc < 0 ? rc : rc == 0;
}

int sqlite_session_unlock(store *s, const char *id)
{
    return session_lock_op(s, id, F_UNLCK, 1);
}

/* ---- compressing the rows of older stores (issue 35) --------------- */

#define SQ_PACK_ROWS      32         /* rows compressed in one transaction */
#define SQ_PACK_SAY_BYTES (64 << 20) /* stored bytes from which progress is said */
#define SQ_PACK_SAY_EVERY 5.0        /* seconds between two lines */

/* What one kind of row is packed from: raw chunks (version 11) or
 * message texts (version 13). */
typedef struct sq_pack_kind {
    const char *next;   /* SQL: id, data, codec of the next row after ?1 up to ?2 */
    const char *update; /* SQL: ?1 data, ?2 codec, ?3 id */
    const char *total;  /* SQL: plain bytes after ?1 up to ?2 */
    const char *at;     /* meta key: the last row done */
    const char *until;  /* meta key: the last row to do */
    const char *what;   /* said on stderr: "raw bytes", "message text" */
    int text;           /* packed as texts are (store_sqlite__text_encode), else one frame */
} sq_pack_kind;

static const sq_pack_kind pack_raw = {
    "SELECT id, data, codec FROM raw_chunks WHERE id > ? AND id <= ? ORDER BY id LIMIT 1",
    "UPDATE raw_chunks SET data = ?, codec = ? WHERE id = ?",
    "SELECT coalesce(sum(length(data)), 0) FROM raw_chunks WHERE id > ? AND id <= ? AND codec = 0",
    "raw_pack_at",
    "raw_pack_until",
    "raw bytes",
    0,
};

static const sq_pack_kind pack_text = {
    "SELECT message_id, text, codec FROM message_body WHERE message_id > ? AND message_id <= ? "
    "ORDER BY message_id LIMIT 1",
    "UPDATE message_body SET text = ?, codec = ? WHERE message_id = ?",
    "SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM message_body WHERE message_id > ? "
    "AND message_id <= ? AND codec = 0",
    "text_pack_at",
    "text_pack_until",
    "message text",
    1,
};

static int meta_get(store *s, const char *key, int64_t *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT value FROM meta WHERE key = ?", &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sq_err(s, "packing state");
}

/*
 * One row compressed in place when it is plain and a frame is smaller;
 * the frame is decoded and compared with the plain bytes before it
 * replaces them. *id gets the row, 0 when none is left.
 */
static int pack_next(store *s, const sq_pack_kind *k, int64_t after, int64_t until, int64_t *id,
                     int64_t *bytes)
{
    sqlite3_stmt *st = NULL;
    *id = 0;
    int rc = sq_prep(s, k->next, &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, after);
    sqlite3_bind_int64(st, 2, until);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? 0 : sq_err(s, "reading a row to compress");
    }
    *id = sqlite3_column_int64(st, 0);
    int64_t codec = sqlite3_column_int64(st, 2);
    size_t n = (size_t)sqlite3_column_bytes(st, 1);
    *bytes += (int64_t)n;
    unsigned char *plain = NULL;
    if (codec == STORE_CODEC_PLAIN && n > 0 && n <= STORE_CODEC_OUT_MAX) {
        plain = malloc(n);
        if (!plain) {
            sqlite3_reset(st);
            return MCPAGE_ENOMEM;
        }
        memcpy(plain, sqlite3_column_blob(st, 1), n);
    }
    sqlite3_reset(st);
    if (!plain)
        return 0;
    int packed_codec = 0;
    const unsigned char *packed = NULL;
    size_t packed_n = 0;
    rc = k->text ? store_sqlite__text_encode(s, (const char *)plain, n, &packed_codec, &packed,
                                             &packed_n)
                 : store_codec_pack(&s->codec, plain, n, &packed_codec, &packed, &packed_n);
    if (rc == 0 && packed_codec != STORE_CODEC_PLAIN) {
        /* the frame must give the bytes back before they are replaced */
        store_codec check = {0};
        const unsigned char *back = NULL;
        size_t back_n = 0;
        const char *why = "";
        int ok = store_codec_unpack(&check, packed_codec, packed, packed_n, STORE_CODEC_OUT_MAX,
                                    &back, &back_n, &why) == 0 &&
                 back_n == n && memcmp(back, plain, n) == 0;
        store_codec_free(&check);
        if (!ok)
            rc = store_fail(s, MCPAGE_ESTORE, "compressed %s did not read back", k->what);
        else if ((rc = sq_prep(s, k->update, &st)) == 0) {
            sqlite3_bind_blob(st, 1, packed, (int)packed_n, SQLITE_STATIC);
            sqlite3_bind_int(st, 2, packed_codec);
            sqlite3_bind_int64(st, 3, *id);
            rc = sq_done(s, st, "compressing a row");
        }
    } else if (rc < 0) {
        rc = store_fail(s, rc, "out of memory compressing %s", k->what);
    }
    free(plain);
    return rc;
}

/* The rows of kind k a store kept plain, compressed a few a transaction
 * from meta k->at to k->until, until done or the budget's stop. */
static int pack_rows(store *s, const sq_pack_kind *k)
{
    sq_conn *c = CONN(s);
    if (c->in_tx)
        return 0;
    int rc = sq_refuse_damaged(s);
    if (rc < 0)
        return rc;
    int64_t at = 0, until = 0, total = -1, done = 0;
    /* nothing left to pack (every sync after the first): learnt without
       taking the write lock */
    if ((rc = meta_get(s, k->at, &at)) < 0 || (rc = meta_get(s, k->until, &until)) < 0)
        return rc;
    if (at >= until)
        return 0;
    double began = store_now_us(), said = began;
    for (;;) {
        if ((rc = store_budget_check(s)) < 0)
            return store_budget_fail(s, s->stopped = rc);
        if ((rc = sq_exec(s, "BEGIN IMMEDIATE")) < 0)
            return rc;
        c->in_tx = 1;
        if ((rc = meta_get(s, k->at, &at)) < 0 || (rc = meta_get(s, k->until, &until)) < 0)
            goto fail;
        if (at >= until) {
            c->in_tx = 0;
            return sq_exec(s, "COMMIT");
        }
        if (total < 0) {
            sqlite3_stmt *st = NULL;
            if ((rc = sq_prep(s, k->total, &st)) < 0)
                goto fail;
            sqlite3_bind_int64(st, 1, at);
            sqlite3_bind_int64(st, 2, until);
            total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
            sqlite3_reset(st);
            if (total >= SQ_PACK_SAY_BYTES)
                fprintf(stderr,
                        "mcpage: compressing the %.0f MiB of %s this store kept "
                        "uncompressed; once, for this version. Interrupting it keeps what is "
                        "done; the next sync goes on.\n",
                        (double)total / 1048576.0, k->what);
        }
        int64_t last = at, id = 0;
        for (int i = 0; i < SQ_PACK_ROWS; i++) {
            if ((rc = pack_next(s, k, last, until, &id, &done)) < 0)
                goto fail;
            if (!id) {
                last = until;
                break;
            }
            last = id;
        }
        sqlite3_stmt *st = NULL;
        if ((rc = sq_prep(s, "UPDATE meta SET value = ? WHERE key = ?", &st)) < 0)
            goto fail;
        sqlite3_bind_int64(st, 1, last);
        sqlite3_bind_text(st, 2, k->at, -1, SQLITE_STATIC);
        if ((rc = sq_done(s, st, "packing state")) < 0)
            goto fail;
        c->in_tx = 0;
        if ((rc = sq_exec(s, "COMMIT")) < 0)
            goto fail;
        double now = store_now_us();
        if (total >= SQ_PACK_SAY_BYTES && now - said >= SQ_PACK_SAY_EVERY * 1e6) {
            said = now;
            fprintf(stderr, "mcpage: compressed %.0f of %.0f MiB of %s (%.0f s)\n",
                    (double)done / 1048576.0, (double)total / 1048576.0, k->what,
                    (now - began) / 1e6);
        }
    }
fail:
    c->in_tx = 0;
    (void)sq_exec(s, "ROLLBACK");
    return rc;
}

int store_sqlite__raw_pack(store *s)
{
    return pack_rows(s, &pack_raw);
}

int store_sqlite__text_pack(store *s)
{
    return pack_rows(s, &pack_text);
}

/* Free pages are given back once more than 1 / SQ_FREE_SHARE of the file. */
#define SQ_FREE_SHARE 16

int store_sqlite__free_pages(store *s)
{
    if (CONN(s)->in_tx)
        return 0;
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(
        s, "SELECT * FROM pragma_auto_vacuum, pragma_freelist_count, pragma_page_count", &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    int vacuum = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == 2 &&
                 sqlite3_column_int64(st, 1) * SQ_FREE_SHARE > sqlite3_column_int64(st, 2);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_err(s, "free pages");
    return vacuum ? sq_exec(s, "PRAGMA incremental_vacuum") : 0;
}

int store_sqlite__tidy(store *s)
{
    int rc = store_sqlite__raw_pack(s);
    if (rc >= 0)
        rc = store_sqlite__text_pack(s);
    if (rc >= 0)
        rc = store_sqlite__impact_tidy(s);
    return rc < 0 ? rc : store_sqlite__free_pages(s);
}
