/*
 * Cursor's agent CLI (cursor-agent) chats: one SQLite database per chat,
 * CURSOR_HOME/chats/<md5 of the workspace path>/<chat id>/store.db, read
 * through the folded sync of sync_fold.c, one job per database:
 *
 * - `meta`: the row with key "0" holds the chat's facts as hex-encoded
 *   JSON {agentId, latestRootBlobId, name, mode, createdAt (ms),
 *   lastUsedModel};
 * - `blobs` (id = SHA-256 hex of data): content-addressed. A message is a
 *   JSON blob {role: system | user | assistant | tool, content: a string or
 *   blocks text, reasoning, tool-call {toolCallId, toolName, args},
 *   tool-result {toolCallId, toolName, result, isError}}; the others are
 *   protobuf nodes whose field 1 (32 bytes) names a child blob, in the
 *   conversation's order, and (on the root) field 9 the workspace's
 *   file:// URI. The meta row's latestRootBlobId names the root.
 *
 * The database is opened read-only and read in one read transaction, so
 * Cursor's writer (WAL mode) is never blocked and sync sees a committed
 * tree. The chat is rendered as JSON Lines, its raw copy: first
 * {"table": "meta", "row": the meta JSON without latestRootBlobId (it
 * changes with every message) plus "workspace"}, then one line per
 * message blob in tree order, {"table": "blobs", "row": {"id", "time_created":
 * the chat's createdAt (messages carry no time of their own), "data": the
 * blob's JSON text}}. A new message appends a line; anything else stores
 * the chat again (its messages keep their ids, see sync_fold.c).
 *
 * User messages wrap what was typed in <user_query>...</user_query> after
 * context Cursor adds (<user_info>, attached files): the query is the
 * prompt; a user message without a query whose text starts with a tag is
 * context, stored as a system message (never dropped). Format from public
 * parsers' notes: see docs/transcripts.md. Cursor's editor (state.vscdb)
 * is read by sync_cursor_ide.c, under its own source name.
 */
#define _GNU_SOURCE /* open_memstream, d_type */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "page/base64.h"
#include "sync/sync_fold.h"
#include "sync/sync_source.h"

#define CURSOR_BUSY_MS   5000    /* waits for a writer's checkpoint at most this long */
#define CURSOR_DEPTH_MAX 64      /* levels of the blob tree followed */
#define CURSOR_NODES_MAX 1000000 /* blobs of one chat visited */

int sync_default_cursor_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_CURSOR_HOME");
    int k = e && *e ? snprintf(buf, n, "%s", e) : snprintf(buf, n, "%s/.cursor", sync_home_dir());
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

/* ---- reading the database -------------------------------------------- */

/* Hex text as bytes (*out malloc'd, NUL-terminated); NULL when not hex. */
static char *unhex(const char *s, size_t n, size_t *outlen)
{
    if (n % 2)
        return NULL;
    char *b = malloc(n / 2 + 1);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i += 2) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[i + (size_t)k];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) {
                free(b);
                return NULL;
            }
            v = v * 16 + d;
        }
        b[i / 2] = (char)v;
    }
    b[n / 2] = 0;
    *outlen = n / 2;
    return b;
}

/* A file:// URI's path, %XX decoded (owned), or NULL. */
static char *uri_path(const char *uri, size_t n)
{
    if (n < 8 || strncmp(uri, "file:///", 8) != 0)
        return NULL;
    char *p = malloc(n);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t i = 7; i < n; i++) {
        size_t hl = 0;
        char *hx = uri[i] == '%' && i + 2 < n ? unhex(uri + i + 1, 2, &hl) : NULL;
        if (hx && hx[0]) {
            p[k++] = hx[0];
            i += 2;
        } else {
            p[k++] = uri[i];
        }
        free(hx);
    }
    p[k] = 0;
    return p;
}

static int read_varint(const unsigned char *p, size_t n, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *at < n; shift += 7) {
        unsigned char c = p[(*at)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* One chat being rendered. */
typedef struct chat chat;
struct chat {
    sqlite3 *db;
    sqlite3_stmt *get; /* SELECT data FROM blobs WHERE id = ? */
    int db_rc;         /* SQLite's code of a failed fetch, or 0 */
    /* a blob's bytes (*data malloc'd), MCPAGE_ENOTFOUND, or an error */
    int (*fetch)(chat *c, const char *id, unsigned char **data, size_t *n);
    FILE *w; /* the rendering */
    json_int_t created;
    char *workspace;   /* the root's workspace path (owned), or NULL */
    size_t nodes;      /* blobs fetched */
    sync_idmap walked; /* tree nodes walked: each once, so a cycle or a
                          node named twice at every level stays linear */
};

static int emit_message(chat *c, const char *id, const unsigned char *data, size_t n)
{
    json_t *row = json_pack("{s:s,s:I}", "id", id, "time_created", c->created);
    if (row) /* bytes that are not UTF-8 become U+FFFD */
        json_object_set_new(row, "data", sync_json_text((const char *)data, n));
    json_t *line = row ? json_pack("{s:s,s:o}", "table", "blobs", "row", row) : NULL;
    int ok = line && json_dumpf(line, c->w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', c->w) != EOF;
    json_decref(line);
    if (ok && ftell(c->w) > SYNC_FOLD_READ_MAX)
        return MCPAGE_ERANGE; /* a blob named over and over: stop at the read limit */
    return ok ? 0 : MCPAGE_ENOMEM;
}

/* A blob the tree names but the database lacks: a line sync counts. The
 * id may be the meta row's (any text): written as a JSON string. */
static int emit_missing(chat *c, const char *id)
{
    json_t *line = json_pack("{s:s,s:{s:o,s:b}}", "table", "blobs", "row", "id",
                             sync_json_text(id, strlen(id)), "missing", 1);
    int ok = line && json_dumpf(line, c->w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', c->w) != EOF;
    json_decref(line);
    return ok ? 0 : MCPAGE_ENOMEM;
}

static int walk_blob(chat *c, const char *id, int depth);

/* A tree node: its children in order, the workspace, embedded messages. */
static int walk_node(chat *c, const char *id, const unsigned char *p, size_t n, int depth)
{
    size_t at = 0;
    int rc = 0, inline_no = 0;
    while (rc == 0 && at < n) {
        uint64_t tag = 0, len = 0;
        if (read_varint(p, n, &at, &tag) < 0)
            break;
        unsigned wt = (unsigned)(tag & 7);
        if (wt == 0) {
            if (read_varint(p, n, &at, &len) < 0)
                break;
            continue;
        }
        if (wt == 1 || wt == 5) {
            at += wt == 1 ? 8 : 4;
            continue;
        }
        if (wt != 2 || read_varint(p, n, &at, &len) < 0 || len > n - at)
            break; /* not a node we can read: the rest is left */
        const unsigned char *v = p + at;
        at += (size_t)len;
        uint64_t field = tag >> 3;
        if (field == 1 && len == 32) {
            char child[65];
            hex_encode(v, 32, child);
            rc = walk_blob(c, child, depth + 1);
        } else if (len > 0 && v[0] == '{') {
            char sub[100];
            snprintf(sub, sizeof sub, "%.64s:%d", id, inline_no++);
            rc = emit_message(c, sub, v, (size_t)len);
        } else if (!c->workspace && depth == 0) {
            c->workspace = uri_path((const char *)v, (size_t)len);
        }
    }
    return rc;
}

/* A blob from the database (a copy: the statement is reused below). */
static int db_fetch(chat *c, const char *id, unsigned char **data, size_t *n)
{
    sqlite3_reset(c->get);
    sqlite3_bind_text(c->get, 1, id, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(c->get);
    if (step != SQLITE_ROW) {
        if (step != SQLITE_DONE)
            c->db_rc = step;
        return step == SQLITE_DONE ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
    }
    *n = (size_t)sqlite3_column_bytes(c->get, 0);
    const unsigned char *d = sqlite3_column_blob(c->get, 0);
    if (!d || *n == 0)
        return MCPAGE_ENOTFOUND;
    if (!(*data = malloc(*n)))
        return MCPAGE_ENOMEM;
    memcpy(*data, d, *n);
    return 0;
}

static int walk_blob(chat *c, const char *id, int depth)
{
    if (depth > CURSOR_DEPTH_MAX || ++c->nodes > CURSOR_NODES_MAX)
        return 0;
    unsigned char *d = NULL;
    size_t n = 0;
    int rc = c->fetch(c, id, &d, &n);
    if (rc == MCPAGE_ENOTFOUND)
        return emit_missing(c, id);
    if (rc < 0)
        return rc;
    if (d[0] == '{') {
        rc = emit_message(c, id, d, n);
    } else {
        /* a node: walked once (a second reference adds nothing: the
           messages under it are in the rendering already) */
        rc = sync_idmap_add(&c->walked, id);
        if (rc > 0)
            rc = walk_node(c, id, d, n, depth);
    }
    free(d);
    return rc;
}

static int none_fetch(chat *c, const char *id, unsigned char **data, size_t *n)
{
    (void)c, (void)id, (void)data, (void)n;
    return MCPAGE_ENOTFOUND;
}

int sync__cursor_render_node(const unsigned char *p, size_t n, FILE *w, char **workspace)
{
    chat c = {.fetch = none_fetch, .w = w};
    int rc = walk_node(&c, "root", p, n, 0);
    *workspace = c.workspace;
    sync_idmap_free(&c.walked);
    return rc;
}

/* The meta row's JSON (owned): key "0" hex-encoded (or plain) JSON, other
   keys (older stores: name, cwd) as strings. */
static json_t *read_meta(sqlite3 *db)
{
    json_t *meta = json_object();
    sqlite3_stmt *st = NULL;
    if (!meta || sqlite3_prepare_v2(db, "SELECT key, value FROM meta ORDER BY key", -1, &st,
                                    NULL) != SQLITE_OK) {
        json_decref(meta);
        return NULL;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        if (!key || !v)
            continue;
        if (strcmp(key, "0") == 0) {
            size_t jl = 0;
            char *j = unhex(v, n, &jl);
            json_t *o = json_loadb(j ? j : v, j ? jl : n, 0, NULL);
            free(j);
            if (json_is_object(o))
                json_object_update(meta, o);
            json_decref(o);
        } else if (!json_object_get(meta, key)) {
            json_object_set_new(meta, key, sync_json_text(v, n));
        }
    }
    sqlite3_finalize(st);
    return meta;
}

static int cursor_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen)
{
    *out = NULL;
    *len = 0;
    chat c = {.fetch = db_fetch};
    int rc = sync_source_db_open(job->home ? job->home : "/", job->db, &c.db, why, whylen);
    static const char *const meta_cols[] = {"key", "value", NULL};
    static const char *const blob_cols[] = {"id", "data", NULL};
    if (rc == 0 && (rc = sync_source_db_table(c.db, "meta", meta_cols, why, whylen)) == 0)
        rc = sync_source_db_table(c.db, "blobs", blob_cols, why, whylen);
    if (rc < 0) {
        sqlite3_close(c.db);
        return rc == MCPAGE_EPARSE ? MCPAGE_EINVAL : rc;
    }
    char *buf = NULL;
    size_t n = 0;
    c.w = open_memstream(&buf, &n);
    rc = c.w ? 0 : MCPAGE_ENOMEM;
    json_t *meta = NULL;
    /* one read transaction: one committed tree */
    if (rc == 0 && sqlite3_exec(c.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        rc = MCPAGE_EIO;
    if (rc == 0 && !(meta = read_meta(c.db))) {
        snprintf(why, whylen, "not a Cursor chat database: %s", sqlite3_errmsg(c.db));
        rc = MCPAGE_EPARSE;
    }
    if (rc == 0 && sqlite3_prepare_v2(c.db, "SELECT data FROM blobs WHERE id = ?1", -1, &c.get,
                                      NULL) != SQLITE_OK) {
        snprintf(why, whylen, "not a Cursor chat database: %s", sqlite3_errmsg(c.db));
        rc = MCPAGE_EPARSE;
    }
    const char *root = sync_json_str(meta, "latestRootBlobId");
    json_t *created = json_object_get(meta, "createdAt");
    c.created = json_is_integer(created) ? json_integer_value(created)
                : json_is_string(created)
                    ? (json_int_t)strtoll(json_string_value(created), NULL, 10)
                    : 0;
    /* messages to a scratch rendering first: the root names the workspace */
    char *msgs = NULL;
    size_t nm = 0;
    FILE *head = c.w;
    c.w = rc == 0 ? open_memstream(&msgs, &nm) : NULL;
    if (rc == 0 && !c.w)
        rc = MCPAGE_ENOMEM;
    if (rc == 0 && root && *root)
        rc = walk_blob(&c, root, 0);
    if (c.w && fclose(c.w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    c.w = head;
    if (rc == 0) {
        json_t *row = json_deep_copy(meta);
        json_object_del(row, "latestRootBlobId");
        if (c.workspace)
            json_object_set_new(row, "workspace", json_string(c.workspace));
        json_t *line = json_pack("{s:s,s:o}", "table", "meta", "row", row);
        if (!line || json_dumpf(line, c.w, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0 ||
            fputc('\n', c.w) == EOF || (nm && fwrite(msgs, 1, nm, c.w) != nm))
            rc = MCPAGE_ENOMEM;
        json_decref(line);
    }
    if (rc == MCPAGE_ERANGE)
        snprintf(why, whylen, "the chat's messages pass the %d MiB read limit: skipped",
                 SYNC_FOLD_READ_MAX >> 20);
    if (rc == MCPAGE_EIO && c.db_rc) {
        snprintf(why, whylen, "%s", sync_source_db_error(c.db, c.db_rc));
        rc = sync_source_db_status(c.db_rc);
    } else if (rc == MCPAGE_EIO) {
        snprintf(why, whylen, "%s", sqlite3_errmsg(c.db));
    }
    free(msgs);
    free(c.workspace);
    sync_idmap_free(&c.walked);
    json_decref(meta);
    sqlite3_finalize(c.get);
    sqlite3_exec(c.db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(c.db);
    if (c.w && fclose(c.w) != 0 && rc == 0)
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

static int cursor_fold_line(sync_fold *f, const char *line, size_t len, int64_t off,
                            int64_t line_no, char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = json_loadb(line, len, 0, &err);
    const char *table = sync_json_str(root, "table");
    json_t *row = json_object_get(root, "row");
    int rc = 0;
    if (!table || !json_is_object(row)) {
        snprintf(why, whylen, "%s", root ? "not a rendered row" : err.text);
        rc = MCPAGE_EPARSE;
    } else if (strcmp(table, "meta") == 0) {
        sync_fold_set(&f->cwd, sync_json_str(row, "workspace"));
        sync_fold_set(&f->model, sync_json_str(row, "lastUsedModel"));
        const char *name = sync_json_str(row, "name");
        if (name && *name) {
            free(f->title);
            f->title = sync_short_copy(name, SYNC_TITLE_MAX);
        }
    } else if (json_is_true(json_object_get(row, "missing"))) {
        snprintf(why, whylen, "blobs %.64s: named by the chat's tree but missing",
                 sync_json_str(row, "id") ? sync_json_str(row, "id") : "?");
        rc = MCPAGE_EPARSE;
    } else {
        rc = sync_fold_push(f, sync_json_str(row, "id"), off, (int64_t)len, line_no, -1);
    }
    json_decref(root);
    return rc;
}

static void set_message(sync_record *r, const char *role, sync_text *t, const char *ts)
{
    r->kind = SYNC_MESSAGE;
    r->role = role;
    r->text = sync_text_finish(t);
    r->timestamp = ts ? sync_short_copy(ts, 64) : NULL;
}

/* A user message: the query typed, or (none) the context Cursor added. */
static size_t expand_user(json_t *content, const char *ts, sync_record *r)
{
    sync_text all = {0};
    sync_text_content(&all, content);
    char *text = sync_text_finish(&all);
    if (!text)
        return 0;
    const char *q = strstr(text, "<user_query>");
    const char *qe = q ? strstr(q, "</user_query>") : NULL;
    sync_text t = {0};
    const char *role = "user";
    if (q && qe) {
        q += strlen("<user_query>");
        while (q < qe && (*q == '\n' || *q == ' ' || *q == '\r'))
            q++;
        while (qe > q && (qe[-1] == '\n' || qe[-1] == ' ' || qe[-1] == '\r'))
            qe--;
        sync_text_add(&t, q, (size_t)(qe - q));
    } else {
        const char *p = text + strspn(text, " \t\r\n");
        role = *p == '<' ? "system" : "user";
        sync_text_adds(&t, text);
    }
    free(text);
    set_message(r, role, &t, ts);
    r->is_prompt = strcmp(role, "user") == 0 && r->text && *r->text;
    return 1;
}

static size_t expand_assistant(json_t *content, const char *ts, sync_record *r, size_t max)
{
    size_t k = 0;
    sync_text t = {0};
    if (json_is_string(content))
        sync_text_adds(&t, json_string_value(content));
    size_t i;
    json_t *b;
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (!type)
            continue;
        if (strcmp(type, "reasoning") == 0 || strcmp(type, "redacted-reasoning") == 0) {
            sync_text_sep(&t);
            const char *th = sync_json_str(b, "text");
            sync_text_adds(&t, th && *th ? "[thinking] " : "[thinking redacted]");
            sync_text_adds(&t, th);
        } else if (strcmp(type, "text") == 0) {
            sync_text_sep(&t);
            sync_text_adds(&t, sync_json_str(b, "text"));
        }
    }
    if (t.len > 0)
        set_message(&r[k++], "assistant", &t, ts);
    free(t.buf);
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (k >= max || !type || strcmp(type, "tool-call") != 0)
            continue;
        sync_record_call(&r[k++], "assistant", sync_json_str(b, "toolName"),
                         sync_json_str(b, "toolCallId"), json_object_get(b, "args"), ts);
    }
    return k;
}

static size_t expand_tool(json_t *content, const char *ts, sync_record *r, size_t max)
{
    size_t k = 0, i;
    json_t *b;
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (k >= max || !type || strcmp(type, "tool-result") != 0)
            continue;
        sync_text t = {0};
        json_t *res = json_object_get(b, "result");
        if (json_is_string(res) || json_is_array(res)) {
            sync_text_content(&t, res);
        } else if (res && !json_is_null(res)) {
            char *dump = json_dumps(res, JSON_COMPACT);
            sync_text_adds(&t, dump);
            free(dump);
        }
        set_message(&r[k], "tool", &t, ts);
        r[k].is_error = json_is_true(json_object_get(b, "isError"));
        const char *call = sync_json_str(b, "toolCallId");
        const char *name = sync_json_str(b, "toolName");
        r[k].call_id = call ? sync_short_copy(call, 100) : NULL;
        r[k].tool_name = name ? sync_short_copy(name, 100) : NULL;
        k++;
    }
    return k;
}

static int cursor_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    (void)sub;
    *out = NULL;
    *n = 0;
    json_t *root = json_loadb(line, len, 0, NULL);
    json_t *row = json_object_get(root, "row");
    const char *table = sync_json_str(root, "table");
    if (!table || !json_is_object(row)) {
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    const char *data = sync_json_str(row, "data");
    json_t *msg = data ? json_loads(data, 0, NULL) : NULL;
    const char *role = sync_json_str(msg, "role");
    json_t *content = json_object_get(msg, "content");
    size_t max = 1 + (json_is_array(content) ? json_array_size(content) : 0);
    if (max > 10000)
        max = 10000;
    sync_record *r = strcmp(table, "blobs") == 0 && role ? calloc(max, sizeof *r) : NULL;
    if (!r) {
        int rc = strcmp(table, "blobs") == 0 && role ? MCPAGE_ENOMEM : 0;
        json_decref(msg);
        json_decref(root);
        /* the meta row holds no message; a blob that is no message is
           kept in the raw copy only */
        return rc;
    }
    json_t *created = json_object_get(row, "time_created");
    char ts_buf[40] = "";
    char *iso = sync_iso_ms(json_is_integer(created) ? (double)json_integer_value(created) : 0);
    if (iso)
        snprintf(ts_buf, sizeof ts_buf, "%s", iso);
    free(iso);
    const char *ts = ts_buf[0] ? ts_buf : NULL;
    size_t k = 0;
    if (strcmp(role, "user") == 0) {
        k = expand_user(content, ts, r);
    } else if (strcmp(role, "assistant") == 0) {
        k = expand_assistant(content, ts, r, max);
    } else if (strcmp(role, "tool") == 0) {
        k = expand_tool(content, ts, r, max);
    } else {
        sync_text t = {0};
        sync_text_content(&t, content);
        set_message(&r[k++], "system", &t, ts);
    }
    json_decref(msg);
    json_decref(root);
    return sync__records_finish(r, k, out, n);
}

const sync_fold_format sync__cursor_format = {
    .source = "cursor",
    .fold_line = cursor_fold_line,
    .expand = cursor_expand,
    .convert = NULL,
    .load = cursor_load,
};

/* ---- discovery ------------------------------------------------------- */

/* Where chat folders go. */
typedef struct cursor_at {
    sync_fold_jobs *js;
    const char *home; /* CURSOR_HOME */
    sync_report *rep;
} cursor_at;

/* chats/<workspace hash>/<chat id>/store.db: one job, changed when the
   database or its WAL is. Anything there but a regular file (a link, a
   FIFO) is looked at when it is opened: refused there, and named. */
static int chat_entry(void *ud, const struct dirent *e, char *dir)
{
    const cursor_at *at = ud;
    char path[SYNC_PATH_MAX], wal[SYNC_PATH_MAX + 8];
    int k = snprintf(path, sizeof path, "%s/store.db", dir);
    free(dir);
    struct stat sb, wb;
    if (strlen(e->d_name) > STORE_ID_MAX || k < 0 || (size_t)k >= sizeof path ||
        lstat(path, &sb) < 0)
        return 0;
    if (S_ISLNK(sb.st_mode) && stat(path, &sb) < 0)
        memset(&sb, 0, sizeof sb);
    sync_fold_job j = {.fmt = &sync__cursor_format, .home = sync_dup(at->home)};
    j.path = sync_short_copy(path, SYNC_PATH_MAX);
    j.db = sync_short_copy(path, SYNC_PATH_MAX);
    j.session_id = sync_short_copy(e->d_name, STORE_ID_MAX);
    j.size = (int64_t)sb.st_size;
    j.inode = (int64_t)sb.st_ino;
    j.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &wb) == 0 && wb.st_size > 0) { /* an empty one: a reader made it */
        int64_t m = (int64_t)wb.st_mtim.tv_sec * 1000000000 + wb.st_mtim.tv_nsec;
        j.size += (int64_t)wb.st_size;
        j.mtime_ns = m > j.mtime_ns ? m : j.mtime_ns;
    }
    if (!j.path || !j.db || !j.session_id) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(at->js, &j);
}

static int workspace_entry(void *ud, const struct dirent *e, char *dir)
{
    (void)e;
    const cursor_at *at = ud;
    DIR *d = sync_source_opendir(at->home, dir, at->rep, "cursor");
    int rc = d ? sync_dir_each(d, dir, chat_entry, ud) : 0;
    free(dir);
    return rc;
}

int sync__cursor_discover(sync_fold_jobs *js, const char *home, sync_report *rep)
{
    char root[SYNC_PATH_MAX];
    int k = snprintf(root, sizeof root, "%s/chats", home);
    if (k < 0 || (size_t)k >= sizeof root)
        return MCPAGE_ERANGE;
    cursor_at at = {.js = js, .home = home, .rep = rep};
    DIR *d = sync_source_opendir(home, root, rep, "cursor");
    return d ? sync_dir_each(d, root, workspace_entry, &at) : 0;
}
