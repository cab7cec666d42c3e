/*
 * The engine's SQLite side (sync_desc.h, "database"): agents that keep
 * their sessions in a SQLite database (Goose, Hermes, Devin, Forge, ...).
 *
 * Discovery opens each database the description's globs find through the
 * shared source layer (read-only, busy timeout, a step budget per
 * statement, the tables checked to be real tables with the columns the
 * description names) and makes one job per session row. Whether a
 * session changed is its rows' count and the bytes of their JSON columns
 * (and the session row's `changed` column), from one grouped query per
 * database: an unchanged session costs a row of that query, never a
 * rendering.
 *
 * A changed session is rendered as JSON Lines, in one read transaction
 * (one consistent snapshot, never blocking the agent's writer in WAL
 * mode): a first line {"$document": the session row}, then one line per
 * message row in the description's order, every column as SQLite holds it
 * (integers, reals, text; a blob as "[blob N bytes]"), the columns the
 * description lists as JSON embedded as JSON values. That rendering is the
 * session's raw copy. Without a messages table, the session row is the
 * document and "records" points at its messages inside it.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <sqlite3.h>
#include <zstd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_internal.h"
#include "sync/sync_parse.h"
#include "sync/sync_source.h"

#define DB_SQL_MAX  4096
#define DB_ZSTD_MAX (64 << 20) /* bytes a compressed JSON value may inflate to */

/*
 * A zstd frame (Zed's thread rows) inflated, DB_ZSTD_MAX bytes at most so
 * a small crafted blob cannot exhaust memory: the text (malloc'd, *n
 * bytes), or NULL when it is no zstd, damaged or too large.
 */
static char *inflate_zstd(const void *p, size_t n, size_t *outn)
{
    static const unsigned char magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    *outn = 0;
    if (n < 4 || memcmp(p, magic, 4) != 0)
        return NULL;
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ZSTD_inBuffer in = {p, n, 0};
    int ok = buf != NULL && !ZSTD_isError(ZSTD_initDStream(z));
    while (ok) {
        if (len == cap) {
            char *g = cap < DB_ZSTD_MAX ? realloc(buf, cap * 2) : NULL;
            if (!g) {
                ok = 0;
                break;
            }
            buf = g;
            cap *= 2;
        }
        ZSTD_outBuffer out = {buf + len, cap - len, 0};
        size_t r = ZSTD_decompressStream(z, &out, &in);
        len += out.pos;
        if (ZSTD_isError(r))
            ok = 0;
        else if (r == 0 && in.pos == in.size)
            break; /* the frame is done */
        else if (in.pos == in.size && out.pos == 0)
            ok = 0; /* truncated */
    }
    ZSTD_freeDStream(z);
    if (!ok) {
        free(buf);
        return NULL;
    }
    *outn = len;
    return buf;
}

static int listed(char **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0)
            return 1;
    return 0;
}

/* One column of the current row as JSON (a JSON column parsed when it
 * holds JSON, else kept as text). */
static json_t *column_json(sqlite3_stmt *st, int i, int is_json, int *refused)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL:
        return json_null();
    case SQLITE_BLOB: {
        const void *p = sqlite3_column_blob(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        static const unsigned char zmagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
        int zstd = p && n >= 4 && memcmp(p, zmagic, 4) == 0;
        if (is_json && p) {
            /* JSON kept as a blob: zstd-compressed (Zed) or plain */
            size_t tn = 0;
            char *text = inflate_zstd(p, n, &tn);
            json_t *v = json_loadb(text ? text : p, text ? tn : n, JSON_DECODE_ANY, NULL);
            free(text);
            if (v)
                return v;
        }
        char b[120];
        if (is_json && zstd)
            *refused = 1;
        if (is_json && zstd)
            (void)snprintf(b, sizeof b,
                           "[zstd blob %zu bytes: not read (damaged, not JSON, or past %d MiB)]", n,
                           DB_ZSTD_MAX >> 20);
        else
            (void)snprintf(b, sizeof b, "[blob %zu bytes]", n);
        return json_string(b);
    }
    default: {
        const char *t = (const char *)sqlite3_column_text(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        if (is_json && t) {
            json_t *v = json_loadb(t, n, JSON_DECODE_ANY, NULL);
            if (v)
                return v;
        }
        return sync_json_text(t ? t : "", t ? n : 0);
    }
    }
}

static json_t *row_json(sqlite3_stmt *st, char **json_cols, size_t njson, int *refused)
{
    json_t *row = json_object();
    for (int i = 0; row && i < sqlite3_column_count(st); i++) {
        const char *name = sqlite3_column_name(st, i);
        json_t *v = column_json(st, i, name && listed(json_cols, njson, name), refused);
        if (!name || !v || json_object_set_new(row, name, v) < 0) {
            json_decref(row);
            row = NULL;
        }
    }
    return row;
}

static int put_line(FILE *w, json_t *line)
{
    int ok = line && json_dumpf(line, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
    json_decref(line);
    return ok ? 0 : MCPAGE_ENOMEM;
}

/* Checks the tables the description names: real tables with those columns. */
static int check_tables(sqlite3 *db, const sd_db *b, char *why, size_t whylen)
{
    const char *scols[8];
    size_t k = 0;
    scols[k++] = b->s_id;
    const char *opt[] = {b->s_cwd, b->s_title, b->s_parent, b->s_time, b->s_changed};
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++)
        if (opt[i])
            scols[k++] = opt[i];
    scols[k] = NULL;
    int rc = sync_source_db_table(db, b->s_table, scols, why, whylen);
    if (rc < 0 || !b->m_table)
        return rc;
    const char *mcols[20];
    k = 0;
    mcols[k++] = b->m_session;
    for (size_t i = 0; i < b->nm_order && k < 16; i++)
        mcols[k++] = b->m_order[i];
    mcols[k] = NULL;
    return sync_source_db_table(db, b->m_table, mcols, why, whylen);
}

static uint64_t text_hash(const char *p)
{
    uint64_t h = 1469598103934665603ull;
    for (; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ull;
    }
    return h;
}

/* "length(a) + length(b)" of the JSON columns, or "0". */
static void lengths(char *out, size_t n, const char *alias, char **cols, size_t ncols)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < ncols && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%scoalesce(length(%s.\"%s\"), 0)", i ? " + " : "",
                              alias, cols[i]);
    if (!ncols)
        (void)snprintf(out, n, "0");
}

int sync__desc_db_discover(const sync_desc *d, const char *root, const char *path, const char *dcwd,
                           sync_fold_jobs *js, sync_report *rep)
{
    const sd_db *b = d->db;
    sqlite3 *db = NULL;
    char why[300] = "";
    int rc = sync_source_db_open(root, path, &db, why, sizeof why);
    if (rc < 0) {
        sync_warn(rep, d->name, path, 0, why[0] ? why : "cannot open the database");
        return rc == MCPAGE_ENOMEM ? rc : 0;
    }
    if (check_tables(db, b, why, sizeof why) < 0) {
        sync_warn(rep, d->name, path, 0, why);
        sqlite3_close(db);
        return 0;
    }
    struct stat sb;
    if (stat(path, &sb) < 0)
        memset(&sb, 0, sizeof sb);
    char slen[600], mlen[600], sql[DB_SQL_MAX];
    lengths(slen, sizeof slen, "s", b->s_json, b->ns_json);
    lengths(mlen, sizeof mlen, "m", b->m_json, b->nm_json);
    int k;
    /* per session: its facts, and its change identity (rows, bytes, the changed column) */
    if (b->m_table)
        k = snprintf(
            sql, sizeof sql,
            "SELECT s.\"%s\", %s%s%s, %s%s%s, %s%s%s, %s%s%s, "
            " coalesce(a.n, 0), coalesce(a.bytes, 0) + %s, %s%s%s "
            "FROM \"%s\" s LEFT JOIN (SELECT m.\"%s\" AS sid, count(*) AS n, "
            " total(%s) AS bytes FROM \"%s\" m GROUP BY m.\"%s\") a ON a.sid = s.\"%s\" "
            "ORDER BY s.\"%s\"",
            b->s_id, b->s_cwd ? "s.\"" : "NULL", b->s_cwd ? b->s_cwd : "", b->s_cwd ? "\"" : "",
            b->s_title ? "s.\"" : "NULL", b->s_title ? b->s_title : "", b->s_title ? "\"" : "",
            b->s_parent ? "s.\"" : "NULL", b->s_parent ? b->s_parent : "", b->s_parent ? "\"" : "",
            b->s_time ? "s.\"" : "NULL", b->s_time ? b->s_time : "", b->s_time ? "\"" : "", slen,
            b->s_changed ? "s.\"" : "0", b->s_changed ? b->s_changed : "", b->s_changed ? "\"" : "",
            b->s_table, b->m_session, mlen, b->m_table, b->m_session, b->s_id, b->s_id);
    else
        k = snprintf(
            sql, sizeof sql,
            "SELECT s.\"%s\", %s%s%s, %s%s%s, %s%s%s, %s%s%s, 1, %s, %s%s%s "
            "FROM \"%s\" s ORDER BY s.\"%s\"",
            b->s_id, b->s_cwd ? "s.\"" : "NULL", b->s_cwd ? b->s_cwd : "", b->s_cwd ? "\"" : "",
            b->s_title ? "s.\"" : "NULL", b->s_title ? b->s_title : "", b->s_title ? "\"" : "",
            b->s_parent ? "s.\"" : "NULL", b->s_parent ? b->s_parent : "", b->s_parent ? "\"" : "",
            b->s_time ? "s.\"" : "NULL", b->s_time ? b->s_time : "", b->s_time ? "\"" : "", slen,
            b->s_changed ? "s.\"" : "0", b->s_changed ? b->s_changed : "", b->s_changed ? "\"" : "",
            b->s_table, b->s_id);
    sqlite3_stmt *st = NULL;
    if (k < 0 || (size_t)k >= sizeof sql ||
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        (void)snprintf(why, sizeof why, "cannot list its sessions: %s", sqlite3_errmsg(db));
        sync_warn(rep, d->name, path, 0, why);
        sqlite3_close(db);
        return 0;
    }
    rc = 0;
    int step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        if (!id || !*id || strlen(id) > STORE_ID_MAX - 40)
            continue;
        const char *cwd = (const char *)sqlite3_column_text(st, 1);
        if (!cwd || !*cwd)
            cwd = dcwd; /* the project of the folder the database is in */
        char first[SYNC_PATH_MAX];
        const char *nl = cwd ? strchr(cwd, '\n') : NULL;
        if (nl) {
            /* folders one per line (Zed's folder_paths): the first is the project */
            (void)snprintf(first, sizeof first, "%.*s", (int)(nl - cwd), cwd);
            cwd = first;
        }
        const char *title = (const char *)sqlite3_column_text(st, 2);
        const char *parent = (const char *)sqlite3_column_text(st, 3);
        char vpath[SYNC_PATH_MAX];
        k = snprintf(vpath, sizeof vpath, "%s#%s", path, id);
        if (k < 0 || (size_t)k >= sizeof vpath)
            continue;
        char sid[STORE_ID_MAX + 1], pid[STORE_ID_MAX + 1];
        (void)snprintf(sid, sizeof sid, "%s%s", d->id_prefix, id);
        (void)snprintf(pid, sizeof pid, "%s%.150s", d->id_prefix, parent ? parent : "");
        sync_fold_job j = {.fmt = &d->fmt};
        j.path = sync_dup(vpath);
        j.db = sync_dup(path);
        j.home = sync_dup(root);
        j.session_id = sync_dup(sid);
        j.parent = parent && *parent ? sync_dup(pid) : NULL;
        j.cwd = cwd && *cwd ? sync_short_copy(cwd, SYNC_PATH_MAX) : NULL;
        j.title = title && *title ? sync_short_copy(title, SYNC_TITLE_MAX) : NULL;
        j.convert = b->m_table == NULL;
        /* the change identity, compared like a file's size, inode and time */
        j.size = sqlite3_column_int64(st, 5);
        j.inode = (int64_t)sb.st_ino;
        const unsigned char *changed = sqlite3_column_text(st, 7);
        j.mtime_ns = (int64_t)sqlite3_column_double(st, 6) * 1000 +
                     (int64_t)(text_hash((const char *)changed) & 0xffffffffffffull);
        if (!j.path || !j.db || !j.home || !j.session_id) {
            sync__fold_job_free(&j);
            rc = MCPAGE_ENOMEM;
            break;
        }
        rc = sync__fold_jobs_add(js, &j);
    }
    if (rc == 0 && step != SQLITE_DONE && step != SQLITE_ROW) {
        (void)snprintf(why, sizeof why, "reading its sessions: %s", sync_source_db_error(db, step));
        sync_warn(rep, d->name, path, 0, why);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* Renders the rows a statement yields, each as a line (wrapped in
 * {"$document": row} when `doc`). */
static int render(sqlite3 *db, FILE *w, const char *sql, const char *id, char **json_cols,
                  size_t njson, int doc, char *why, size_t whylen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        (void)snprintf(why, whylen, "%s", sqlite3_errmsg(db));
        return MCPAGE_EIO;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int refused = 0;
        json_t *row = row_json(st, json_cols, njson, &refused);
        if (refused) {
            /* a compressed column that would not inflate within its limit */
            (void)snprintf(why, whylen,
                           "a zstd-compressed column is damaged, not JSON or inflates past %d "
                           "MiB: skipped",
                           DB_ZSTD_MAX >> 20);
            json_decref(row);
            rc = MCPAGE_ERANGE;
            break;
        }
        rc = put_line(w, doc && row ? json_pack("{so}", "$document", row) : row);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        (void)snprintf(why, whylen, "%s", sync_source_db_error(db, step));
        rc = sync_source_db_status(step);
    }
    sqlite3_finalize(st);
    return rc;
}

int sync__desc_db_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen)
{
    const sync_desc *d = job->fmt->desc;
    const sd_db *b = d->db;
    *out = NULL;
    *len = 0;
    /* the session's own id: the job's, its prefix taken off */
    const char *id = job->session_id + strlen(d->id_prefix);
    sqlite3 *db = NULL;
    int rc = sync_source_db_open(job->home, job->db, &db, why, whylen);
    if (rc < 0)
        return rc;
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    rc = w ? 0 : MCPAGE_ENOMEM;
    /* one read transaction: one consistent snapshot of the session */
    if (rc == 0 && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        (void)snprintf(why, whylen, "%s", sqlite3_errmsg(db));
        rc = MCPAGE_EIO;
    }
    char sql[DB_SQL_MAX];
    if (rc == 0) {
        (void)snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" WHERE \"%s\" = ?1", b->s_table,
                       b->s_id);
        rc = render(db, w, sql, id, b->s_json, b->ns_json, 1, why, whylen);
    }
    if (rc == 0 && b->m_table) {
        int k = snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" WHERE \"%s\" = ?1 ORDER BY ",
                         b->m_table, b->m_session);
        for (size_t i = 0; i < b->nm_order && k > 0 && (size_t)k < sizeof sql; i++)
            k += snprintf(sql + k, sizeof sql - (size_t)k, "\"%s\", ", b->m_order[i]);
        if (k > 0 && (size_t)k < sizeof sql)
            (void)snprintf(sql + k, sizeof sql - (size_t)k, "rowid");
        rc = render(db, w, sql, id, b->m_json, b->nm_json, 0, why, whylen);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    if (w && fclose(w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc == 0 && n > SYNC_FOLD_READ_MAX) {
        (void)snprintf(why, whylen, "its rows render past %d bytes", SYNC_FOLD_READ_MAX);
        rc = MCPAGE_ERANGE;
    }
    if (rc == 0 && job->convert) {
        /* the session row is the document: its records become the lines */
        char *conv = NULL;
        size_t clen = 0;
        char *nl = memchr(buf, '\n', n);
        json_t *line = buf ? json_loadb(buf, nl ? (size_t)(nl - buf) : n, 0, NULL) : NULL;
        char *doc = json_dumps(json_object_get(line, "$document"), JSON_COMPACT);
        json_decref(line);
        rc = doc ? sync__desc_convert(d, doc, strlen(doc), &conv, &clen, why, whylen)
                 : MCPAGE_EPARSE;
        if (!doc)
            (void)snprintf(why, whylen, "the session row is gone");
        free(doc);
        free(buf);
        buf = conv;
        n = clen;
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}
