/*
 * OpenCode sessions: since OpenCode 1.2 one SQLite database,
 * DATA/opencode.db, tables session, message and part (each message and
 * part row keeps its content as JSON text in `data`). Read through the
 * folded sync of sync_fold.c, one job per session:
 *
 * - the database is opened read-only with a busy timeout, and each
 *   session is read in one short read transaction: in WAL mode (OpenCode's)
 *   a reader never blocks OpenCode's writer and sees only committed rows;
 * - a session's rows are rendered as JSON Lines, faithfully: one line per
 *   row, {"table": NAME, "row": {column: value}} with every column as
 *   SQLite stores it (JSON columns stay text): each message (by
 *   time_created, id) followed by its parts (by id). That rendering is the
 *   session's raw copy (read_raw says so); the session row itself gives
 *   the session's facts (directory, parent, title) at discovery;
 * - whether a session changed is the size of its rows' data and the sum
 *   of their time_updated, compared like a file's size and mtime, so
 *   unchanged sessions cost one aggregate query row and are never rendered. A changed one is
 * rendered and compared byte for byte with the rendering stored before: rows added after the stored
 * ones are appended, a changed or deleted row (a part that finished streaming, a reverted message)
 * stores the session again.
 *
 * Before 1.2, OpenCode kept one JSON file per record under DATA/storage:
 * session/<projectID>/<sessionID>.json, message/<sessionID>/<messageID>.json
 * and part/<messageID>/<partID>.json. Such a session is rendered the same
 * way (one line per file, {"table", "row": {id, ..., "file", "data": the
 * file's text}}; a part file has no time of its own, its row's
 * time_created is its message's) and read with the same rules; when the database holds
 * the same session (1.2 migrates the files into it), the database wins.
 * OpenCode's first storage (until mid-2025) kept them per project, under
 * DATA/project/<folder>/storage (or DATA/storage): session/info/<id>.json
 * (no directory: the project is the assistant messages' path.cwd, else
 * the folder's name), session/message/<id>/<msg>.json and
 * session/part/<id>/<msg>/<part>.json; its oldest messages (V1) hold their
 * parts inline, read as the V2 parts OpenCode migrates them to. A session
 * a newer layout also holds (OpenCode copies them on upgrade) is read
 * there.
 *
 * Column and JSON names from the opencode sources (session.sql.ts,
 * message-v2.ts): see docs/transcripts.md.
 */
#define _GNU_SOURCE /* open_memstream, d_type */
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_source.h"
#include "sync/sync_walk.h"

enum { ROLE_USER = 0, ROLE_ASSISTANT = 1, ROLE_OTHER = 2 };

int sync_default_opencode_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_OPENCODE_HOME");
    int k;
    if (e && *e) {
        k = snprintf(buf, n, "%s", e);
    } else if ((e = getenv("XDG_DATA_HOME")) && *e) {
        k = snprintf(buf, n, "%s/opencode", e);
    } else {
        k = snprintf(buf, n, "%s/.local/share/opencode", sync_home_dir());
    }
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

/* The tables and columns read: anything else (a view, a virtual table, a
 * column missing) is refused by name (sync_source_db_table). */
static const char *const session_cols[] = {"id",    "directory",    "parent_id",
                                           "title", "time_updated", NULL};
static const char *const message_cols[] = {"id",           "session_id", "time_created",
                                           "time_updated", "data",       NULL};
static const char *const part_cols[] = {"id",           "message_id", "session_id",
                                        "time_updated", "data",       NULL};

/* The database, opened as every source database is, with its tables checked. */
static int open_checked(const char *home, const char *path, sqlite3 **db, char *why, size_t whylen)
{
    int rc = sync_source_db_open(home ? home : "/", path, db, why, whylen);
    if (rc == 0 && (rc = sync_source_db_table(*db, "session", session_cols, why, whylen)) == 0 &&
        (rc = sync_source_db_table(*db, "message", message_cols, why, whylen)) == 0)
        rc = sync_source_db_table(*db, "part", part_cols, why, whylen);
    if (rc < 0) {
        sqlite3_close(*db);
        *db = NULL;
    }
    return rc == MCPAGE_EPARSE ? MCPAGE_EINVAL : rc;
}

/* ---- rendering ------------------------------------------------------- */

/* One row as {"table": t, "row": {...}}, every column as stored. */
static int render_row(FILE *w, const char *table, sqlite3_stmt *st)
{
    json_t *row = json_object();
    int ncol = sqlite3_column_count(st);
    for (int i = 0; row && i < ncol; i++) {
        const char *name = sqlite3_column_name(st, i);
        json_t *v;
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
            v = json_integer(sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            v = json_real(sqlite3_column_double(st, i));
            break;
        case SQLITE_NULL:
            v = json_null();
            break;
        default: /* text (and blobs, kept as their bytes' text) */
            v = sync_json_text((const char *)sqlite3_column_text(st, i),
                               (size_t)sqlite3_column_bytes(st, i));
            break;
        }
        if (!v || json_object_set_new(row, name, v) < 0) {
            json_decref(row);
            row = NULL;
        }
    }
    json_t *line = row ? json_pack("{s:s,s:o}", "table", table, "row", row) : NULL;
    int ok = line && json_dumpf(line, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
    json_decref(line);
    return ok ? 0 : MCPAGE_ENOMEM;
}

/* One session's rendering: rows by id, each id once. A database whose
 * rows repeat ids (no primary key) would otherwise render every part of a
 * message once per copy of the message: rows times rows. */
typedef struct render {
    sqlite3 *db;
    FILE *w;
    sync_idmap messages, parts; /* ids rendered */
    int db_rc;                  /* SQLite's code of a failed statement, or 0 */
    /* The session's parts, rendered by one query before its messages:
     * each message's rows are a chain in `rows` (a message id maps to its
     * index in `chains`), their bytes in pbuf. */
    char *pbuf;
    size_t plen;
    sync_idmap part_at;
    struct part_row {
        long from, to, next; /* bytes in pbuf; next row of the message or -1 */
    } * rows;
    struct part_chain {
        long head, tail;
    } * chains;
    size_t nrows, rows_cap, nchains, chains_cap;
} render;

/* The text of a row's `id` column, or NULL. */
/* The text of a row's column `name`, or NULL. */
static const char *row_text(sqlite3_stmt *st, const char *name)
{
    for (int i = 0; i < sqlite3_column_count(st); i++)
        if (strcmp(sqlite3_column_name(st, i), name) == 0)
            return (const char *)sqlite3_column_text(st, i);
    return NULL;
}

static const char *row_id(sqlite3_stmt *st)
{
    return row_text(st, "id");
}

static int render_query(render *r, const char *table, sync_idmap *seen, const char *sql,
                        const char *id, int (*each)(render *, const char *))
{
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
    if (src != SQLITE_OK) {
        r->db_rc = src;
        return MCPAGE_EIO;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = 0;
    while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *rid = row_id(st);
        int added = rid ? sync_idmap_add(seen, rid) : 0;
        if (added <= 0) {
            rc = added; /* no id, or one rendered already: 0 */
            continue;
        }
        rc = render_row(r->w, table, st);
        if (rc == 0 && ftell(r->w) > SYNC_FOLD_READ_MAX)
            rc = MCPAGE_ERANGE;
        if (rc == 0 && each)
            rc = each(r, rid);
    }
    if (rc == 0 && src != SQLITE_DONE) {
        r->db_rc = src;
        rc = MCPAGE_EIO;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Appends a part row (bytes from..to of pbuf) to its message's chain. */
static int chain_row(render *r, const char *message_id, long from, long to)
{
    long c = sync_idmap_get(&r->part_at, message_id);
    if (c < 0) {
        int grown =
            sync_grow((void **)&r->chains, &r->chains_cap, r->nchains, sizeof *r->chains, 64);
        if (grown < 0 || sync_idmap_put(&r->part_at, message_id, (long)r->nchains) < 0)
            return MCPAGE_ENOMEM;
        c = (long)r->nchains++;
        r->chains[c].head = r->chains[c].tail = -1;
    }
    if (sync_grow((void **)&r->rows, &r->rows_cap, r->nrows, sizeof *r->rows, 256) < 0)
        return MCPAGE_ENOMEM;
    long k = (long)r->nrows++;
    r->rows[k] = (struct part_row){from, to, -1};
    if (r->chains[c].tail >= 0)
        r->rows[r->chains[c].tail].next = k;
    else
        r->chains[c].head = k;
    r->chains[c].tail = k;
    return 0;
}

/* Every part of the session's messages in one query, each id once. One
 * query per message would scan the part table once per message in a
 * database without its indexes: messages times parts. A part whose id
 * repeats under two messages stays with the first in message_id order. */
static int session_parts(render *r, const char *session_id)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    if (!w)
        return MCPAGE_ENOMEM;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(r->db,
                                 "SELECT * FROM part WHERE message_id IN "
                                 "(SELECT id FROM message WHERE session_id = ?1) "
                                 "ORDER BY message_id, id",
                                 -1, &st, NULL);
    int rc = src == SQLITE_OK ? 0 : MCPAGE_EIO;
    if (rc == 0)
        sqlite3_bind_text(st, 1, session_id, -1, SQLITE_STATIC);
    while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *rid = row_id(st), *mid = row_text(st, "message_id");
        int added = rid && mid ? sync_idmap_add(&r->parts, rid) : 0;
        if (added <= 0) {
            rc = added; /* no id, or one rendered already: 0 */
            continue;
        }
        long from = ftell(w);
        rc = render_row(w, "part", st);
        long to = ftell(w);
        if (rc == 0 && to > SYNC_FOLD_READ_MAX)
            rc = MCPAGE_ERANGE;
        if (rc == 0)
            rc = chain_row(r, mid, from, to);
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = MCPAGE_EIO;
    if (rc == MCPAGE_EIO)
        r->db_rc = src;
    sqlite3_finalize(st);
    if (fclose(w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    r->pbuf = buf;
    r->plen = n;
    return 0;
}

/* After a message row: its parts, as session_parts rendered them. */
static int message_parts(render *r, const char *message_id)
{
    long c = sync_idmap_get(&r->part_at, message_id);
    for (long k = c < 0 ? -1 : r->chains[c].head; k >= 0; k = r->rows[k].next) {
        size_t len = (size_t)(r->rows[k].to - r->rows[k].from);
        if (fwrite(r->pbuf + r->rows[k].from, 1, len, r->w) != len)
            return MCPAGE_ENOMEM;
        if (ftell(r->w) > SYNC_FOLD_READ_MAX)
            return MCPAGE_ERANGE;
    }
    return 0;
}

static int opencode_load(const sync_fold_job *job, char **out, size_t *len, char *why,
                         size_t whylen)
{
    *out = NULL;
    *len = 0;
    render r = {0};
    int rc = open_checked(job->home, job->db, &r.db, why, whylen);
    if (rc < 0)
        return rc;
    char *buf = NULL;
    size_t n = 0;
    r.w = open_memstream(&buf, &n);
    rc = r.w ? 0 : MCPAGE_ENOMEM;
    /* one read transaction: one consistent snapshot of the session */
    if (rc == 0 && (r.db_rc = sqlite3_exec(r.db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
        rc = MCPAGE_EIO;
    const char *sid = job->row_id ? job->row_id : job->session_id;
    if (rc == 0)
        rc = session_parts(&r, sid);
    if (rc == 0)
        rc = render_query(&r, "message", &r.messages,
                          "SELECT * FROM message WHERE session_id = ?1 "
                          "ORDER BY time_created, id",
                          sid, message_parts);
    if (rc == MCPAGE_ERANGE) {
        snprintf(why, whylen, "the session's rows pass the %d MiB read limit: skipped",
                 SYNC_FOLD_READ_MAX >> 20);
    } else if (rc == MCPAGE_EIO && r.db_rc) {
        snprintf(why, whylen, "%s", sync_source_db_error(r.db, r.db_rc));
        rc = sync_source_db_status(r.db_rc);
    } else if (rc < 0) {
        snprintf(why, whylen, "%s", sqlite3_errmsg(r.db));
    }
    sqlite3_exec(r.db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(r.db);
    sync_idmap_free(&r.messages);
    sync_idmap_free(&r.parts);
    sync_idmap_free(&r.part_at);
    free(r.pbuf);
    free(r.rows);
    free(r.chains);
    if (r.w && fclose(r.w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0 || n > SYNC_FOLD_READ_MAX) {
        free(buf);
        return rc < 0 ? rc : MCPAGE_ERANGE;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* ---- records --------------------------------------------------------- */

/* The row of a rendered line, and its `data` column parsed (owned). */
static json_t *row_data(json_t *row)
{
    const char *data = sync_json_str(row, "data");
    return data ? json_loads(data, 0, NULL) : NULL;
}

static int role_code(const char *role)
{
    if (role && strcmp(role, "user") == 0)
        return ROLE_USER;
    if (role && strcmp(role, "assistant") == 0)
        return ROLE_ASSISTANT;
    return ROLE_OTHER;
}

static int opencode_fold_line(sync_fold *f, const char *line, size_t len, int64_t off,
                              int64_t line_no, char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = json_loadb(line, len, 0, &err);
    const char *table = sync_json_str(root, "table");
    json_t *row = json_object_get(root, "row");
    if (!table || !json_is_object(row)) {
        snprintf(why, whylen, "%s", root ? "not a rendered row" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = 0;
    int is_message = strcmp(table, "message") == 0;
    json_t *data = NULL;
    if (is_message || strcmp(table, "part") == 0) {
        data = row_data(row);
        if (!json_is_object(data)) {
            /* the line (the row) stays in the raw copy; no message from it */
            snprintf(why, whylen, "%s %s: data is not a JSON object", table,
                     sync_json_str(row, "id") ? sync_json_str(row, "id") : "?");
            json_decref(data);
            json_decref(root);
            return MCPAGE_EPARSE;
        }
    }
    if (is_message) {
        const char *role = sync_json_str(data, "role");
        /* V1 messages (before mid-2025) keep these under metadata.assistant */
        json_t *v1 = json_object_get(json_object_get(data, "metadata"), "assistant");
        const char *model = sync_json_str(data, "modelID");
        sync_fold_set(&f->model, model ? model : sync_json_str(v1, "modelID"));
        /* the project, for sessions whose record names no directory */
        json_t *where = json_object_get(data, "path");
        if (!json_is_object(where))
            where = json_object_get(v1, "path");
        const char *cwd = sync_json_str(where, "cwd");
        if (!f->cwd)
            sync_fold_set(&f->cwd, cwd && *cwd ? cwd : sync_json_str(where, "root"));
        rc = sync_fold_push(f, sync_json_str(row, "id"), off, (int64_t)len, line_no,
                            role_code(role));
    } else if (data) {
        /* a part speaks with its message's role (the line before it) */
        long at = sync_fold_find(f, sync_json_str(row, "message_id"));
        rc = sync_fold_push(f, sync_json_str(row, "id"), off, (int64_t)len, line_no,
                            at >= 0 ? f->v[at].sub : ROLE_OTHER);
    }
    json_decref(data);
    json_decref(root);
    return rc;
}

/* A JSON number of milliseconds since the epoch as ISO 8601 (owned). */
static char *iso_ms(json_t *v)
{
    return json_is_number(v) ? sync_iso_ms(json_number_value(v)) : NULL;
}

static void message_record(sync_record *r, const char *role, sync_text *t, char *ts)
{
    r->kind = SYNC_MESSAGE;
    r->role = role;
    r->text = sync_text_finish(t);
    r->timestamp = ts;
}

static const char *role_name(int32_t sub)
{
    return sub == ROLE_USER ? "user" : sub == ROLE_ASSISTANT ? "assistant" : "system";
}

/* A tool part: the call, and its result once it has one. */
static size_t expand_tool(json_t *data, char *ts, sync_record *r)
{
    const char *tool = sync_json_str(data, "tool");
    const char *call = sync_json_str(data, "callID");
    json_t *state = json_object_get(data, "state");
    const char *status = sync_json_str(state, "status");
    sync_record_call(&r[0], "assistant", tool, call, json_object_get(state, "input"), ts);
    free(ts);
    sync_text t = {0};
    int done = status && (strcmp(status, "completed") == 0 || strcmp(status, "error") == 0);
    if (!done)
        return 1;
    int failed = strcmp(status, "error") == 0;
    sync_text_adds(&t, sync_json_str(state, failed ? "error" : "output"));
    /* a call of a tool that does not exist is recorded as OpenCode's own
       tool "invalid", completed: the call failed */
    failed |= tool && strcmp(tool, "invalid") == 0;
    json_t *time = json_object_get(state, "time");
    char *end = iso_ms(json_object_get(time, "end"));
    message_record(&r[1], "tool", &t, end ? end : sync_short_copy(r[0].timestamp, 64));
    r[1].tool_name = sync_short_copy(tool ? tool : "?", 100);
    r[1].call_id = call ? sync_short_copy(call, 100) : NULL;
    r[1].is_error = failed;
    return 2;
}

static size_t expand_part(json_t *data, int32_t sub, char *ts, sync_record *r)
{
    const char *type = sync_json_str(data, "type");
    sync_text t = {0};
    if (!type) {
        free(ts);
        return 0;
    }
    if (strcmp(type, "tool") == 0)
        return expand_tool(data, ts, r);
    const char *role = role_name(sub);
    if (strcmp(type, "text") == 0) {
        sync_text_adds(&t, sync_json_str(data, "text"));
        int synthetic = json_is_true(json_object_get(data, "synthetic"));
        message_record(r, synthetic ? "system" : role, &t, ts);
        r->is_prompt = sub == ROLE_USER && !synthetic && r->text && *r->text;
        return 1;
    }
    if (strcmp(type, "reasoning") == 0) {
        sync_text_adds(&t, "[thinking] ");
        sync_text_adds(&t, sync_json_str(data, "text"));
        message_record(r, "assistant", &t, ts);
        return 1;
    }
    if (strcmp(type, "file") == 0) {
        const char *mime = sync_json_str(data, "mime");
        const char *name = sync_json_str(data, "filename");
        int image = mime && strncmp(mime, "image/", 6) == 0;
        sync_text_adds(&t, image ? "[image: " : "[file: ");
        sync_text_adds(&t, image ? mime : name ? name : sync_json_str(data, "url"));
        sync_text_adds(&t, "]");
        message_record(r, role, &t, ts);
        return 1;
    }
    if (strcmp(type, "subtask") == 0) {
        sync_text_adds(&t, "[subtask ");
        sync_text_adds(&t, sync_json_str(data, "agent"));
        sync_text_adds(&t, "] ");
        sync_text_adds(&t, sync_json_str(data, "prompt"));
        message_record(r, "assistant", &t, ts);
        return 1;
    }
    if (strcmp(type, "compaction") == 0) {
        sync_text_adds(&t, "[compaction]");
        message_record(r, "system", &t, ts);
        return 1;
    }
    free(ts); /* step-start/-finish, snapshot, patch, agent, retry: bookkeeping */
    return 0;
}

/* An assistant turn that failed: the error is its message. */
static size_t error_record(json_t *e, char *ts, sync_record *r)
{
    json_t *ed = json_object_get(e, "data");
    sync_text t = {0};
    sync_text_adds(&t, "[error] ");
    sync_text_adds(&t, sync_json_str(e, "name"));
    if (sync_json_str(ed, "message")) {
        sync_text_adds(&t, ": ");
        sync_text_adds(&t, sync_json_str(ed, "message"));
    }
    message_record(r, "system", &t, ts);
    r->is_error = 1;
    return 1;
}

/*
 * A V1 message's inline part (OpenCode before mid-2025: the AI SDK's
 * UIMessage parts) as the V2 part it migrates to (message-v2.ts fromV1):
 * text, reasoning, file {mediaType, filename, url} and tool-invocation
 * {toolInvocation {state, toolCallId, toolName, args, result}}, whose
 * times are in the message's metadata.tool[callId].
 */
static json_t *v1_part(json_t *part, json_t *metadata)
{
    const char *type = sync_json_str(part, "type");
    if (!type)
        return NULL;
    if (strcmp(type, "text") == 0)
        return json_pack("{s:s,s:O*}", "type", "text", "text", json_object_get(part, "text"));
    if (strcmp(type, "reasoning") == 0) {
        json_t *t = json_object_get(part, "reasoning");
        return json_pack("{s:s,s:O*}", "type", "reasoning", "text",
                         json_is_string(t) ? t : json_object_get(part, "text"));
    }
    if (strcmp(type, "file") == 0)
        return json_pack("{s:s,s:O*,s:O*,s:O*}", "type", "file", "mime",
                         json_object_get(part, "mediaType"), "filename",
                         json_object_get(part, "filename"), "url", json_object_get(part, "url"));
    if (strcmp(type, "tool-invocation") != 0)
        return NULL; /* step-start, source: bookkeeping */
    json_t *inv = json_object_get(part, "toolInvocation");
    const char *call = sync_json_str(inv, "toolCallId");
    const char *state = sync_json_str(inv, "state");
    json_t *result = json_object_get(inv, "result");
    json_t *meta = call ? json_object_get(json_object_get(metadata, "tool"), call) : NULL;
    char *out = json_is_string(result) || !result ? NULL : json_dumps(result, JSON_COMPACT);
    json_t *st = json_pack("{s:s,s:O*,s:O*,s:O*}", "status",
                           state && strcmp(state, "result") == 0 ? "completed" : "running", "input",
                           json_object_get(inv, "args"), "output", out ? json_string(out) : result,
                           "time", json_object_get(meta, "time"));
    free(out);
    return json_pack("{s:s,s:O*,s:O*,s:o*}", "type", "tool", "tool",
                     json_object_get(inv, "toolName"), "callID", json_object_get(inv, "toolCallId"),
                     "state", st);
}

/*
 * An assistant message's usage: tokens {input, output, reasoning, cache
 * {read, write}} and cost (USD, what OpenCode priced it at), in the
 * message itself or, before mid-2025, under metadata.assistant. input
 * excludes the cache reads and writes; reasoning is billed as output. A
 * cost above 0 is used as given; 0 (a subscription, an unknown price)
 * leaves the call to the price table. Keyed by the message id within its
 * session. A record of its own (no text), which sync_fold stores as a
 * call only.
 */
static size_t opencode_usage(json_t *row, json_t *data, const char *ts, sync_record *r)
{
    json_t *v1 = json_object_get(json_object_get(data, "metadata"), "assistant");
    json_t *src = json_object_get(data, "tokens") ? data : v1;
    const char *role = sync_json_str(data, "role");
    json_t *tok = json_object_get(src, "tokens");
    if (!json_is_object(tok) || (role && strcmp(role, "assistant") != 0))
        return 0;
    sync_usage *u = &r->usage;
    json_t *cache = json_object_get(tok, "cache");
    u->input = sync_json_count(json_object_get(tok, "input"));
    u->reasoning = sync_json_count(json_object_get(tok, "reasoning"));
    u->output = sync_json_count(json_object_get(tok, "output")) + u->reasoning;
    u->cache_read = sync_json_count(json_object_get(cache, "read"));
    u->cache_creation = sync_json_count(json_object_get(cache, "write"));
    json_t *cost = json_object_get(src, "cost");
    if (json_is_number(cost) && json_number_value(cost) > 0) {
        u->cost_usd = json_number_value(cost);
        u->cost_given = 1;
    }
    if (u->input + u->output + u->cache_read + u->cache_creation == 0 && !u->cost_given)
        return 0;
    const char *model = sync_json_str(src, "modelID");
    u->model = model && *model ? sync_short_copy(model, 150) : NULL;
    u->model_from_session = u->model == NULL;
    const char *id = sync_json_str(row, "id");
    if (id && *id) {
        u->key = sync_short_copy(id, 100);
        u->key_per_session = 1;
    }
    u->timestamp = ts && *ts ? sync_short_copy(ts, 64) : NULL;
    u->present = 1;
    r->kind = SYNC_SKIP;
    r->text = calloc(1, 1);
    return 1;
}

static int opencode_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_t *root = json_loadb(line, len, 0, NULL);
    const char *table = sync_json_str(root, "table");
    json_t *row = json_object_get(root, "row");
    if (!table || !json_is_object(row)) {
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    json_t *data = row_data(row);
    json_t *inline_parts = json_object_get(data, "parts"); /* a V1 message */
    size_t nparts = json_is_array(inline_parts) ? json_array_size(inline_parts) : 0;
    if (nparts > 10000)
        nparts = 10000;
    sync_record *r = calloc(3 + 2 * nparts, sizeof *r);
    if (!r) {
        json_decref(data);
        json_decref(root);
        return MCPAGE_ENOMEM;
    }
    char *ts = iso_ms(json_object_get(row, "time_created"));
    size_t k = 0;
    if (!json_is_object(data)) {
        free(ts); /* a row whose data is not JSON: its raw line keeps it */
    } else if (strcmp(table, "part") == 0) {
        k = expand_part(data, sub, ts, r);
    } else if (strcmp(table, "message") == 0 && nparts > 0) {
        json_t *metadata = json_object_get(data, "metadata");
        for (size_t i = 0; i < nparts; i++) {
            json_t *p2 = v1_part(json_array_get(inline_parts, i), metadata);
            if (p2)
                k += expand_part(p2, sub, ts ? sync_short_copy(ts, 64) : NULL, r + k);
            json_decref(p2);
        }
        json_t *e = json_object_get(metadata, "error");
        if (json_is_object(e))
            k += error_record(e, sync_short_copy(ts, 64), r + k);
        k += opencode_usage(row, data, ts, r + k);
        free(ts);
    } else if (strcmp(table, "message") == 0 && json_is_object(json_object_get(data, "error"))) {
        k = opencode_usage(row, data, ts, r);
        k += error_record(json_object_get(data, "error"), ts, r + k);
    } else {
        if (strcmp(table, "message") == 0)
            k = opencode_usage(row, data, ts, r);
        free(ts);
    }
    json_decref(data);
    json_decref(root);
    return sync__records_finish(r, k, out, n);
}

const sync_fold_format sync__opencode_format = {
    .source = "opencode",
    .fold_line = opencode_fold_line,
    .expand = opencode_expand,
    .convert = NULL,
    .load = opencode_load,
};

/* ---- discovery ------------------------------------------------------- */

static const sync_fold_format opencode_oldest_format;

/* OpenCode itself: its name, opencode.db and its three formats. */
static const sync_opencode_as opencode_self = {
    .source = "opencode",
    .db_file = "opencode.db",
    .fmt = {&sync__opencode_format, &sync__opencode_json_format, &opencode_oldest_format},
};

static int db_discover(sync_fold_jobs *js, const char *data_dir, sync_report *rep,
                       const sync_opencode_as *as)
{
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/%s", data_dir, as->db_file);
    struct stat sb;
    if (k < 0 || (size_t)k >= sizeof path || lstat(path, &sb) < 0)
        return 0; /* no OpenCode database */
    sqlite3 *db = NULL;
    char why[SYNC_WARNING_LEN] = "";
    int orc = open_checked(data_dir, path, &db, why, sizeof why);
    if (orc < 0) {
        /* busy (retried on the next sync), refused, or no OpenCode database */
        sync_warn(rep, as->source, path, 0, why);
        return 0;
    }
    if (stat(path, &sb) < 0)
        memset(&sb, 0, sizeof sb);
    /* per session, its change identity: the bytes of its rows' data and
       the sum of their update times (OpenCode sets time_updated on every
       update), the session row's included */
    static const char sql[] =
        "SELECT s.id, s.directory, s.parent_id, s.title, "
        " length(s.title) + 1"
        "   + coalesce((SELECT sum(length(data)) + count(*) FROM message m"
        "               WHERE m.session_id = s.id), 0)"
        "   + coalesce((SELECT sum(length(data)) + count(*) FROM part p"
        "               WHERE p.session_id = s.id), 0), "
        " s.time_updated"
        "   + coalesce((SELECT sum(time_updated) FROM message m WHERE m.session_id = s.id), 0)"
        "   + coalesce((SELECT sum(time_updated) FROM part p WHERE p.session_id = s.id), 0) "
        "FROM session s ORDER BY s.id";
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (src != SQLITE_OK) {
        snprintf(why, sizeof why, "not an OpenCode database: %s", sync_source_db_error(db, src));
        sync_warn(rep, as->source, path, 0, why);
        sqlite3_close(db);
        return 0;
    }
    int rc = 0, step;
    sync_idmap ids = {0}; /* a session row whose id repeats is one session */
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *dir = (const char *)sqlite3_column_text(st, 1);
        const char *parent = (const char *)sqlite3_column_text(st, 2);
        const char *title = (const char *)sqlite3_column_text(st, 3);
        if (!id || !*id || strlen(id) > STORE_ID_MAX)
            continue;
        int added = sync_idmap_add(&ids, id);
        if (added <= 0) {
            rc = added;
            continue;
        }
        char vpath[SYNC_PATH_MAX];
        k = snprintf(vpath, sizeof vpath, "%s#%s", path, id);
        if (k < 0 || (size_t)k >= sizeof vpath)
            continue;
        sync_fold_job j = {.fmt = as->fmt[0], .home = sync_dup(data_dir)};
        j.path = sync_short_copy(vpath, SYNC_PATH_MAX);
        j.db = sync_short_copy(path, SYNC_PATH_MAX);
        j.session_id = sync_short_copy(id, STORE_ID_MAX);
        j.parent = parent && *parent ? sync_short_copy(parent, STORE_ID_MAX) : NULL;
        j.cwd = dir && *dir ? sync_short_copy(dir, SYNC_PATH_MAX) : NULL;
        j.title = title && *title ? sync_short_copy(title, SYNC_TITLE_MAX) : NULL;
        j.size = sqlite3_column_int64(st, 4);
        j.inode = (int64_t)sb.st_ino;
        j.mtime_ns = sqlite3_column_int64(st, 5);
        if (!j.path || !j.db || !j.session_id) {
            sync__fold_job_free(&j);
            rc = MCPAGE_ENOMEM;
            break;
        }
        rc = sync__fold_jobs_add(js, &j);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        snprintf(why, sizeof why, "reading sessions: %s", sync_source_db_error(db, step));
        sync_warn(rep, as->source, path, 0, why);
    }
    sync_idmap_free(&ids);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* ---- the JSON storage tree (before 1.2) ------------------------------ */

#define OPENCODE_FILE_MAX  (64 << 20) /* largest record file read */
#define OPENCODE_FILES_MAX 1000000    /* record files of one session */

typedef struct rec_file {
    char *name;      /* file name (the record id + .json) */
    int64_t created; /* time.created of a message, for the order */
} rec_file;

static int rec_cmp(const void *a, const void *b)
{
    const rec_file *x = a, *y = b;
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Where the tree's files are read from and refusals go. */
typedef struct tree_src {
    const char *home;           /* OPENCODE_HOME: every file must resolve inside it */
    sync_report *rep;           /* at discovery: refusals are warnings here */
    char *why;                  /* at a session's load: the first refusal, "path: why" */
    size_t whylen;              /* its size */
    sync_idmap *known;          /* sessions found before: the database's and the newer
                                   layouts' win over a later copy */
    const sync_opencode_as *as; /* whose files (OpenCode's, or an agent writing its format) */
} tree_src;

/* A refused file: a warning at discovery, named in the load's `why` after. */
static void tree_refused(const tree_src *t, const char *path, const char *why)
{
    if (t->rep)
        sync_warn(t->rep, t->as ? t->as->source : "opencode", path, 0, why);
    else if (t->why && !t->why[0])
        snprintf(t->why, t->whylen, "%.200s: %s", path, why);
}

/* The *.json files of a folder (names malloc'd), sorted by name. */
static int list_json(const tree_src *t, const char *dir, rec_file **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = sync_source_opendir(t->home, dir, t->rep, t->as ? t->as->source : "opencode");
    if (!d)
        return 0;
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (*n >= OPENCODE_FILES_MAX) {
            rc = MCPAGE_ERANGE;
            break;
        }
        if (sync_grow((void **)out, &cap, *n, sizeof **out, 16) < 0) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        (*out)[*n].name = sync_short_copy(e->d_name, 255);
        (*out)[*n].created = 0;
        if (!(*out)[*n].name) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc == 0 && *n > 1)
        qsort(*out, *n, sizeof **out, rec_cmp);
    return rc;
}

static void rec_free(rec_file *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

/* A whole record file (malloc'd, NUL-terminated), or NULL: gone, or
 * refused (a link out of OPENCODE_HOME, a FIFO, over OPENCODE_FILE_MAX). */
static char *read_small(const tree_src *t, const char *path, size_t *len)
{
    char *b = NULL, why[SYNC_WARNING_LEN] = "";
    int rc = sync_source_read(t->home, path, OPENCODE_FILE_MAX, &b, len, why, sizeof why);
    if (rc < 0 && rc != MCPAGE_ENOTFOUND && rc != MCPAGE_ENOMEM)
        tree_refused(t, path, why);
    return rc < 0 ? NULL : b;
}

/* One record file as a rendered row: its ids, its file and its text. */
static int render_file(FILE *w, const char *table, const char *id, const char *owner_key,
                       const char *owner, const char *sid, const char *file, const char *text,
                       size_t len, int64_t created)
{
    json_t *row = json_object();
    json_object_set_new(row, "id", json_string(id));
    if (owner_key)
        json_object_set_new(row, owner_key, json_string(owner));
    json_object_set_new(row, "session_id", json_string(sid));
    if (created > 0)
        json_object_set_new(row, "time_created", json_integer(created));
    json_object_set_new(row, "file", json_string(file));
    json_object_set_new(row, "data", sync_json_text(text, len));
    json_t *line = json_pack("{s:s,s:o}", "table", table, "row", row);
    int ok = line && json_dumpf(line, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
    json_decref(line);
    return ok ? 0 : MCPAGE_ENOMEM;
}

/* The id a record file names: its file name without .json. */
static char *file_id(const char *name)
{
    char *id = sync_short_copy(name, 255);
    if (id && strlen(id) > 5)
        id[strlen(id) - 5] = 0;
    return id;
}

/*
 * Where a session's record files are, by layout: since mid-2025
 * message/<sessionID>/ and part/<messageID>/ under DATA/storage; before
 * that (OpenCode's first storage, per project) session/message/<sessionID>/
 * and session/part/<sessionID>/<messageID>/ under
 * DATA/project/<folder>/storage (or DATA/storage).
 */
typedef enum { TREE_V2 = 0, TREE_OLDEST } tree_layout;

static int message_dir(char *buf, size_t n, const char *storage, tree_layout lay, const char *sid)
{
    int k = snprintf(buf, n, lay == TREE_OLDEST ? "%s/session/message/%s" : "%s/message/%s",
                     storage, sid);
    return k < 0 || (size_t)k >= n ? MCPAGE_ERANGE : 0;
}

static int part_dir(char *buf, size_t n, const char *storage, tree_layout lay, const char *sid,
                    const char *mid)
{
    int k = lay == TREE_OLDEST ? snprintf(buf, n, "%s/session/part/%s/%s", storage, sid, mid)
                               : snprintf(buf, n, "%s/part/%s", storage, mid);
    return k < 0 || (size_t)k >= n ? MCPAGE_ERANGE : 0;
}

static int render_parts(const tree_src *t, FILE *w, const char *storage, tree_layout lay,
                        const char *msg_id, const char *sid, int64_t created)
{
    char dir[SYNC_PATH_MAX];
    if (part_dir(dir, sizeof dir, storage, lay, sid, msg_id) < 0)
        return MCPAGE_ERANGE;
    rec_file *parts = NULL;
    size_t n = 0;
    int rc = list_json(t, dir, &parts, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char path[SYNC_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, parts[i].name);
        size_t len = 0;
        char *text = read_small(t, path, &len);
        char *id = file_id(parts[i].name);
        if (text && id)
            rc = render_file(w, "part", id, "message_id", msg_id, sid, path + strlen(storage) + 1,
                             text, len, created);
        free(id);
        free(text);
    }
    rec_free(parts, n);
    return rc;
}

/* time.created of a message (V1 messages keep it in metadata), or 0. */
static int64_t message_created(json_t *m)
{
    json_t *c = json_object_get(json_object_get(m, "time"), "created");
    if (!json_is_integer(c))
        c = json_object_get(json_object_get(json_object_get(m, "metadata"), "time"), "created");
    return json_is_integer(c) ? json_integer_value(c) : 0;
}

static int order_cmp(const void *a, const void *b, void *ud)
{
    const rec_file *v = ud;
    int c = rec_cmp(&v[*(const size_t *)a], &v[*(const size_t *)b]);
    /* ties keep the listing's order */
    return c ? c
             : (*(const size_t *)a > *(const size_t *)b) -
                   (*(const size_t *)a < *(const size_t *)b);
}

/* Sorts msgs by rec_cmp, texts and lens moving with them. */
static int sort_with_texts(rec_file *msgs, char **texts, size_t *lens, size_t n)
{
    size_t *ord = malloc(n * sizeof *ord);
    rec_file *m2 = malloc(n * sizeof *m2);
    char **t2 = malloc(n * sizeof *t2);
    size_t *l2 = malloc(n * sizeof *l2);
    int rc = ord && m2 && t2 && l2 ? 0 : MCPAGE_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            ord[i] = i;
        qsort_r(ord, n, sizeof *ord, order_cmp, msgs);
        for (size_t i = 0; i < n; i++) {
            m2[i] = msgs[ord[i]];
            t2[i] = texts[ord[i]];
            l2[i] = lens[ord[i]];
        }
        memcpy(msgs, m2, n * sizeof *m2);
        memcpy(texts, t2, n * sizeof *t2);
        memcpy(lens, l2, n * sizeof *l2);
    }
    free(ord);
    free(m2);
    free(t2);
    free(l2);
    return rc;
}

static int tree_load(const sync_fold_job *job, tree_layout lay, char **out, size_t *len, char *why,
                     size_t whylen)
{
    *out = NULL;
    *len = 0;
    const char *storage = job->db; /* the storage folder */
    tree_src t = {.home = job->home ? job->home : "/", .why = why, .whylen = whylen};
    why[0] = 0;
    char dir[SYNC_PATH_MAX];
    const char *sid = job->row_id ? job->row_id : job->session_id;
    if (message_dir(dir, sizeof dir, storage, lay, sid) < 0)
        return MCPAGE_ERANGE;
    rec_file *msgs = NULL;
    size_t n = 0;
    int rc = list_json(&t, dir, &msgs, &n);
    char **texts = rc == 0 && n ? calloc(n, sizeof *texts) : NULL;
    size_t *lens = rc == 0 && n ? calloc(n, sizeof *lens) : NULL;
    if (rc == 0 && n && (!texts || !lens))
        rc = MCPAGE_ENOMEM;
    /* messages in the order they were created */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char path[SYNC_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, msgs[i].name);
        texts[i] = read_small(&t, path, &lens[i]);
        json_t *m = texts[i] ? json_loads(texts[i], 0, NULL) : NULL;
        msgs[i].created = message_created(m);
        json_decref(m);
    }
    /* sort the texts with their files: O(n log n), a session may hold
       100,000 message files in any order */
    if (rc == 0 && n > 1)
        rc = sort_with_texts(msgs, texts, lens, n);
    char *buf = NULL;
    size_t blen = 0;
    FILE *w = rc == 0 ? open_memstream(&buf, &blen) : NULL;
    if (rc == 0 && !w)
        rc = MCPAGE_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!texts[i])
            continue; /* vanished or too large: the next sync sees it changed */
        char *id = file_id(msgs[i].name);
        char file[SYNC_PATH_MAX + 300];
        snprintf(file, sizeof file, "%s/%s", dir + strlen(storage) + 1, msgs[i].name);
        rc = id ? render_file(w, "message", id, NULL, NULL, sid, file, texts[i], lens[i],
                              msgs[i].created)
                : MCPAGE_ENOMEM;
        if (rc == 0)
            rc = render_parts(&t, w, storage, lay, id, sid, msgs[i].created);
        free(id);
    }
    for (size_t i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
    free(lens);
    rec_free(msgs, n);
    if (w && fclose(w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0 || blen > SYNC_FOLD_READ_MAX) {
        snprintf(why, whylen, "the session's record files could not be read");
        free(buf);
        return rc < 0 ? rc : MCPAGE_ERANGE;
    }
    *out = buf;
    *len = blen;
    return 0;
}

static int opencode_json_load(const sync_fold_job *job, char **out, size_t *len, char *why,
                              size_t whylen)
{
    return tree_load(job, TREE_V2, out, len, why, whylen);
}

static int opencode_oldest_load(const sync_fold_job *job, char **out, size_t *len, char *why,
                                size_t whylen)
{
    return tree_load(job, TREE_OLDEST, out, len, why, whylen);
}

const sync_fold_format sync__opencode_json_format = {
    .source = "opencode",
    .fold_line = opencode_fold_line,
    .expand = opencode_expand,
    .convert = NULL,
    .load = opencode_json_load,
};

/* OpenCode's first storage: the same records in other folders. */
static const sync_fold_format opencode_oldest_format = {
    .source = "opencode",
    .fold_line = opencode_fold_line,
    .expand = opencode_expand,
    .convert = NULL,
    .load = opencode_oldest_load,
};

/* A folder's record files: their bytes plus count, and the newest mtime. */
static void tree_identity(const tree_src *t, const char *dir, int64_t *size, int64_t *mtime,
                          rec_file **names, size_t *n)
{
    *names = NULL;
    *n = 0;
    if (list_json(t, dir, names, n) < 0)
        return;
    for (size_t i = 0; i < *n; i++) {
        char path[SYNC_PATH_MAX + 300];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, (*names)[i].name);
        if (stat(path, &sb) < 0)
            continue;
        *size += (int64_t)sb.st_size + 1;
        int64_t m = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        if (m > *mtime)
            *mtime = m;
    }
}

/*
 * One session file of a JSON tree as a job: its facts, and as its change
 * identity the session file, its message files and their part files.
 * `fallback_cwd`: a project name when the session names no directory.
 */
static int tree_session(const tree_src *t, sync_fold_jobs *js, const char *storage, tree_layout lay,
                        const char *path, const char *fallback_cwd)
{
    struct stat sb;
    size_t len = 0;
    char *text = stat(path, &sb) == 0 ? read_small(t, path, &len) : NULL;
    json_t *info = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    const char *id = sync_json_str(info, "id");
    if (!id || strlen(id) > STORE_ID_MAX || sync_idmap_get(t->known, id) >= 0) {
        json_decref(info);
        return 0;
    }
    sync_fold_job j = {.fmt = lay == TREE_OLDEST ? t->as->fmt[2] : t->as->fmt[1],
                       .home = sync_dup(t->home)};
    j.path = sync_short_copy(path, SYNC_PATH_MAX + 600);
    j.db = sync_short_copy(storage, SYNC_PATH_MAX);
    j.session_id = sync_short_copy(id, STORE_ID_MAX);
    const char *v = sync_json_str(info, "directory");
    if (!v || !*v)
        v = fallback_cwd;
    j.cwd = v && *v ? sync_short_copy(v, SYNC_PATH_MAX) : NULL;
    v = sync_json_str(info, "parentID");
    j.parent = v && *v ? sync_short_copy(v, STORE_ID_MAX) : NULL;
    v = sync_json_str(info, "title");
    j.title = v && *v ? sync_short_copy(v, SYNC_TITLE_MAX) : NULL;
    json_decref(info);
    j.size = (int64_t)sb.st_size + 1;
    j.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    j.inode = (int64_t)sb.st_ino;
    char dir[SYNC_PATH_MAX + 300];
    rec_file *msgs = NULL;
    size_t nm = 0;
    if (j.session_id && message_dir(dir, sizeof dir, storage, lay, j.session_id) == 0)
        tree_identity(t, dir, &j.size, &j.mtime_ns, &msgs, &nm);
    for (size_t m = 0; m < nm; m++) {
        rec_file *parts = NULL;
        size_t np = 0;
        char *mid = file_id(msgs[m].name);
        if (mid && part_dir(dir, sizeof dir, storage, lay, j.session_id, mid) == 0)
            tree_identity(t, dir, &j.size, &j.mtime_ns, &parts, &np);
        free(mid);
        rec_free(parts, np);
    }
    rec_free(msgs, nm);
    if (!j.path || !j.db || !j.session_id) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    if (sync_idmap_put(t->known, j.session_id, 0) < 0) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(js, &j);
}

/* The session files of one folder. */
static int tree_sessions(const tree_src *t, sync_fold_jobs *js, const char *storage,
                         tree_layout lay, const char *folder, const char *fallback_cwd)
{
    rec_file *files = NULL;
    size_t nf = 0;
    if (list_json(t, folder, &files, &nf) < 0)
        return 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        char path[SYNC_PATH_MAX + 600];
        snprintf(path, sizeof path, "%s/%s", folder, files[i].name);
        rc = tree_session(t, js, storage, lay, path, fallback_cwd);
    }
    rec_free(files, nf);
    return rc;
}

/* Where a folder's entries go. */
typedef struct tree_at {
    sync_fold_jobs *js;
    const tree_src *t;
    const char *data_dir;
} tree_at;

/* storage/session/<projectID>/: its session files (the oldest layout's
   session/info, session/message and session/part folders aside). */
static int project_entry(void *ud, const struct dirent *e, char *path)
{
    const tree_at *at = ud;
    int rc = 0;
    if (strcmp(e->d_name, "info") != 0 && strcmp(e->d_name, "message") != 0 &&
        strcmp(e->d_name, "part") != 0) {
        char storage[SYNC_PATH_MAX];
        snprintf(storage, sizeof storage, "%s/storage", at->data_dir);
        rc = tree_sessions(at->t, at->js, storage, TREE_V2, path, NULL);
    }
    free(path);
    return rc;
}

/* DATA/project/<folder>/storage/session/info/: OpenCode's first storage. */
static int first_storage_entry(void *ud, const struct dirent *e, char *path)
{
    const tree_at *at = ud;
    char storage[SYNC_PATH_MAX], info[SYNC_PATH_MAX + 40];
    int k = snprintf(storage, sizeof storage, "%s/storage", path);
    free(path);
    if (k < 0 || (size_t)k >= sizeof storage)
        return 0;
    snprintf(info, sizeof info, "%s/session/info", storage);
    return tree_sessions(at->t, at->js, storage, TREE_OLDEST, info, e->d_name);
}

static int json_discover(sync_fold_jobs *js, const char *data_dir, size_t db_from, sync_report *rep,
                         const sync_opencode_as *as)
{
    char storage[SYNC_PATH_MAX], dir[SYNC_PATH_MAX + 40];
    int k = snprintf(storage, sizeof storage, "%s/storage", data_dir);
    if (k < 0 || (size_t)k >= sizeof storage)
        return 0;
    /* the database's sessions, by id: one lookup per session file */
    sync_idmap db_ids = {0};
    for (size_t i = db_from; i < js->n; i++)
        if (js->v[i].session_id && sync_idmap_put(&db_ids, js->v[i].session_id, 0) < 0) {
            sync_idmap_free(&db_ids);
            return MCPAGE_ENOMEM;
        }
    tree_src t = {.home = data_dir, .rep = rep, .known = &db_ids, .as = as};
    tree_at at = {.js = js, .t = &t, .data_dir = data_dir};
    snprintf(dir, sizeof dir, "%s/session", storage);
    DIR *d = sync_source_opendir(data_dir, dir, rep, as->source);
    int rc = d ? sync_dir_each(d, dir, project_entry, &at) : 0;
    /* OpenCode's first storage (sessions the layouts above hold too, as
       OpenCode copies them on upgrade, are skipped): DATA/storage, and
       per project DATA/project/<folder>/storage, the folder naming the
       project when no message names its directory */
    snprintf(dir, sizeof dir, "%s/session/info", storage);
    if (rc == 0)
        rc = tree_sessions(&t, js, storage, TREE_OLDEST, dir, NULL);
    snprintf(dir, sizeof dir, "%s/project", data_dir);
    d = rc == 0 ? sync_source_opendir(data_dir, dir, rep, as->source) : NULL;
    if (d)
        rc = sync_dir_each(d, dir, first_storage_entry, &at);
    sync_idmap_free(&db_ids);
    return rc;
}

int sync__opencode_discover_as(sync_fold_jobs *js, const char *data_dir, sync_report *rep,
                               const sync_opencode_as *as)
{
    size_t from = js->n;
    int rc = db_discover(js, data_dir, rep, as);
    if (rc == 0)
        rc = json_discover(js, data_dir, from, rep, as);
    return rc;
}

int sync__opencode_discover(sync_fold_jobs *js, const char *data_dir, sync_report *rep)
{
    return sync__opencode_discover_as(js, data_dir, rep, &opencode_self);
}

void sync__opencode_formats(sync_fold_format fmt[3], const char *source)
{
    fmt[0] = sync__opencode_format;
    fmt[1] = sync__opencode_json_format;
    fmt[2] = opencode_oldest_format;
    for (int i = 0; i < 3; i++)
        fmt[i].source = source;
}
