/*
 * Opening what an agent's folder holds: see sync_source.h. The checks, in
 * order: the path resolves (realpath) inside the resolved home; the
 * resolved path opens with O_NOFOLLOW|O_NONBLOCK (so a link swapped in
 * since, or a FIFO without a writer, never blocks or leads out); the file
 * the descriptor names is still inside the home (/proc/self/fd, when
 * mounted: a folder on the way swapped for a link is caught too); fstat
 * says a regular file within the size budget.
 */
#define _GNU_SOURCE /* O_NOFOLLOW, strnlen */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "page/term.h"
#include "sync/sync_internal.h"
#include "sync/sync_source.h"
#include "sync/sync_walk.h"

int sync__source_busy_ms;
int64_t sync__source_db_steps;

/* ---- escaping ----------------------------------------------------------- */

void sync_escape_path(char *dst, size_t cap, const char *path)
{
    static _Thread_local char all[SYNC_PATH_MAX * 4 + 16];
    size_t n = text_term_escape_line(all, sizeof all, path ? path : "", path ? strlen(path) : 0);
    if (n < cap) {
        memcpy(dst, all, n + 1);
        return;
    }
    /* too long: its end, which names the file */
    const char *tail = all + n - (cap - 4);
    while ((unsigned char)*tail >= 0x80 && (unsigned char)*tail < 0xc0)
        tail++;
    snprintf(dst, cap, "...%s", tail);
}

void sync_warn(sync_report *rep, const char *source, const char *path, int64_t line,
               const char *why)
{
    rep->warnings++;
    char epath[240];
    sync_escape_path(epath, sizeof epath, path);
    sync_source_report *r = sync__source(rep, source ? source : "sync");
    if (r) {
        /* the source's own count and first warning (`mcpage sources`, --json) */
        r->warnings++;
        if (!r->warning[0]) {
            int m = line > 0 ? snprintf(r->warning, sizeof r->warning, "%s:%lld: ", epath,
                                        (long long)line)
                             : snprintf(r->warning, sizeof r->warning, "%s: ", epath);
            if (m > 0 && (size_t)m < sizeof r->warning)
                text_term_escape_line(r->warning + m, sizeof r->warning - (size_t)m, why ? why : "",
                                      why ? strlen(why) : 0);
        }
    }
    if (rep->nwarnings >= SYNC_WARNINGS_MAX)
        return;
    char *w = rep->warning_list[rep->nwarnings++];
    int k = line > 0
                ? snprintf(w, SYNC_WARNING_LEN, "%.40s: %s:%lld: ", source ? source : "sync", epath,
                           (long long)line)
                : snprintf(w, SYNC_WARNING_LEN, "%.40s: %s: ", source ? source : "sync", epath);
    if (k > 0 && k < SYNC_WARNING_LEN)
        text_term_escape_line(w + k, (size_t)(SYNC_WARNING_LEN - k), why ? why : "",
                              why ? strlen(why) : 0);
}

/* ---- files ---------------------------------------------------------------- */

static int inside(const char *root, const char *real)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return 1;
    return strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == 0);
}

static const char *kind_name(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a directory"
                         : "not a regular file";
}

/* The resolved home and path: 0, or a refusal with its reason. */
static int resolve(const char *home, const char *path, char **rhome, char **rpath, char *why,
                   size_t whylen)
{
    *rhome = *rpath = NULL;
    if (!home || !path) {
        snprintf(why, whylen, "no path");
        return MCPAGE_EINVAL;
    }
    if (!(*rhome = realpath(home, NULL))) {
        snprintf(why, whylen, "the agent's folder cannot be resolved: %s", strerror(errno));
        return errno == ENOENT ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
    }
    if (!(*rpath = realpath(path, NULL))) {
        int e = errno;
        snprintf(why, whylen, "%s", e == ENOENT ? "gone" : strerror(e));
        free(*rhome);
        *rhome = NULL;
        return e == ENOENT || e == ENOTDIR ? MCPAGE_ENOTFOUND
               : e == ELOOP                ? MCPAGE_EINVAL
                                           : MCPAGE_EIO;
    }
    if (!inside(*rhome, *rpath)) {
        snprintf(why, whylen, "resolves to %.200s, outside %.200s: not read", *rpath, *rhome);
        free(*rhome);
        free(*rpath);
        *rhome = *rpath = NULL;
        return MCPAGE_EINVAL;
    }
    return 0;
}

/* 0 when the open descriptor still names a file inside the home. */
static int fd_inside(int fd, const char *rhome)
{
    char link[64], target[PATH_MAX + 1];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k < 0)
        return 0; /* no /proc: the realpath check stands alone */
    target[k] = 0;
    return inside(rhome, target) ? 0 : -1;
}

int sync_source_open(const char *home, const char *path, int64_t max_bytes, struct stat *sb,
                     char *why, size_t whylen)
{
    char *rhome = NULL, *rpath = NULL;
    int rc = resolve(home, path, &rhome, &rpath, why, whylen);
    if (rc < 0)
        return rc;
    int fd = open(rpath, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "%s", e == ELOOP ? "a link swapped in: not followed" : strerror(e));
        rc = e == ENOENT ? MCPAGE_ENOTFOUND : e == ELOOP ? MCPAGE_EINVAL : MCPAGE_EIO;
        free(rhome);
        free(rpath);
        errno = e; /* for a caller that names the system's reason */
        return rc;
    }
    if (fd_inside(fd, rhome) < 0) {
        snprintf(why, whylen, "moved outside %.200s while opened: not read", rhome);
        rc = MCPAGE_EINVAL;
        goto out;
    }
    if (fstat(fd, sb) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        rc = MCPAGE_EIO;
        goto out;
    }
    if (!S_ISREG(sb->st_mode)) {
        snprintf(why, whylen, "%s, not a regular file: skipped", kind_name(sb->st_mode));
        rc = MCPAGE_EINVAL;
        goto out;
    }
    if (max_bytes > 0 && (int64_t)sb->st_size > max_bytes) {
        snprintf(why, whylen, "%lld bytes, over the %lld read limit: skipped",
                 (long long)sb->st_size, (long long)max_bytes);
        rc = MCPAGE_ERANGE;
        goto out;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        rc = MCPAGE_EIO;
        goto out;
    }
    rc = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    free(rhome);
    free(rpath);
    return rc;
}

DIR *sync_source_opendir(const char *home, const char *path, sync_report *rep, const char *source)
{
    char why[SYNC_WARNING_LEN] = "";
    char *rhome = NULL, *rpath = NULL;
    int rc = resolve(home, path, &rhome, &rpath, why, sizeof why);
    DIR *d = NULL;
    if (rc == 0) {
        int fd = open(rpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && fd_inside(fd, rhome) < 0) {
            snprintf(why, sizeof why, "moved outside %.200s while opened: not read", rhome);
            rc = MCPAGE_EINVAL;
        } else if (fd >= 0 && !(d = fdopendir(fd))) {
            rc = MCPAGE_ENOMEM;
        } else if (fd < 0) {
            rc = errno == ENOENT || errno == ENOTDIR ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
            snprintf(why, sizeof why, "cannot list this folder: %s", strerror(errno));
        }
        if (!d && fd >= 0)
            close(fd);
    }
    if (rc < 0 && rc != MCPAGE_ENOTFOUND && rep)
        sync_warn(rep, source, path, 0, why);
    free(rhome);
    free(rpath);
    return d;
}

int sync_source_read(const char *home, const char *path, int64_t max_bytes, char **out, size_t *len,
                     char *why, size_t whylen)
{
    *out = NULL;
    *len = 0;
    struct stat sb;
    int fd = sync_source_open(home, path, max_bytes, &sb, why, whylen);
    if (fd < 0)
        return fd;
    size_t n = (size_t)sb.st_size;
    char *b = malloc(n + 1);
    if (!b) {
        close(fd);
        snprintf(why, whylen, "out of memory");
        return MCPAGE_ENOMEM;
    }
    /* the bytes the file held when it was opened (a file that grows is
       read on by the next sync; one that shrank gives what is left) */
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, b + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            snprintf(why, whylen, "%s", strerror(errno));
            free(b);
            close(fd);
            return MCPAGE_EIO;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    b[got] = 0;
    *out = b;
    *len = got;
    return 0;
}

/* ---- databases ------------------------------------------------------------ */

/* The step budget of one connection: reset when a statement starts. */
typedef struct db_budget {
    int64_t ticks; /* progress calls of the running statement */
    int64_t max;   /* calls allowed */
} db_budget;

#define BUDGET_TICK 1000 /* VM steps between progress calls */

/* The budget for a database of `bytes` (with its WAL). */
static int64_t steps_for(int64_t bytes)
{
    if (sync__source_db_steps > 0)
        return sync__source_db_steps;
    if (bytes > INT64_MAX / 2 / SYNC_SOURCE_DB_STEPS_PER_BYTE)
        bytes = INT64_MAX / 2 / SYNC_SOURCE_DB_STEPS_PER_BYTE;
    return SYNC_SOURCE_DB_STEPS_BASE + bytes * SYNC_SOURCE_DB_STEPS_PER_BYTE;
}

static int budget_tick(void *ud)
{
    db_budget *b = ud;
    return ++b->ticks > b->max;
}

static int budget_trace(unsigned type, void *ud, void *p, void *x)
{
    (void)p, (void)x;
    if (type == SQLITE_TRACE_STMT)
        ((db_budget *)ud)->ticks = 0;
    return 0;
}

/* A function no query calls: it ties the budget's lifetime to the
 * connection (its destructor frees the budget when the connection closes). */
static void budget_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc, (void)argv;
    sqlite3_result_null(ctx);
}

int sync_source_db_status(int sqlite_rc)
{
    int primary = sqlite_rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        return MCPAGE_ESTATE;
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
        return MCPAGE_EPARSE;
    if (primary == SQLITE_INTERRUPT || primary == SQLITE_TOOBIG || primary == SQLITE_NOMEM)
        return MCPAGE_ERANGE;
    return MCPAGE_EIO;
}

const char *sync_source_db_error(sqlite3 *db, int sqlite_rc)
{
    int primary = sqlite_rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        return "busy, skipped, retried on the next sync";
    if (primary == SQLITE_INTERRUPT) {
        /* only the budget interrupts a source database */
        return "a query ran past its step budget (more work than the file can hold): skipped";
    }
    if (primary == SQLITE_NOTADB)
        return "not a SQLite database";
    const char *m = db ? sqlite3_errmsg(db) : NULL;
    return m && *m ? m : sqlite3_errstr(sqlite_rc);
}

/* The files SQLite opens beside a database: refused like the database
 * when they are links out of the home, FIFOs or devices. */
static int check_beside(const char *home, const char *rpath, int64_t *bytes, char *why,
                        size_t whylen)
{
    static const char *const suffix[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        char p[SYNC_PATH_MAX + 16];
        int k = snprintf(p, sizeof p, "%s%s", rpath, suffix[i]);
        struct stat lsb;
        if (k < 0 || (size_t)k >= sizeof p || lstat(p, &lsb) < 0)
            continue;
        char sub[300] = "";
        struct stat sb;
        int fd = sync_source_open(home, p, 0, &sb, sub, sizeof sub);
        if (fd == MCPAGE_ENOTFOUND && !S_ISLNK(lsb.st_mode))
            continue; /* removed since: SQLite makes a new one or reads without */
        if (fd < 0) {
            snprintf(why, whylen, "its %s file: %s", suffix[i] + 1, sub);
            return MCPAGE_EINVAL;
        }
        if (i == 0)
            *bytes += (int64_t)sb.st_size;
        close(fd);
    }
    return 0;
}

/* Read-only, untrusted schema, bounded values and work. */
static int db_harden(sqlite3 *db, int64_t bytes)
{
    db_budget *b = calloc(1, sizeof *b);
    if (!b)
        return MCPAGE_ENOMEM;
    b->max = steps_for(bytes) / BUDGET_TICK;
    if (sqlite3_create_function_v2(db, "mcpage_source_budget", 0, SQLITE_UTF8, b, budget_fn, NULL,
                                   NULL, free) != SQLITE_OK)
        return MCPAGE_ENOMEM; /* the destructor freed b */
    sqlite3_progress_handler(db, BUDGET_TICK, budget_tick, b);
    sqlite3_trace_v2(db, SQLITE_TRACE_STMT, budget_trace, b);
    sqlite3_busy_timeout(db, sync__source_busy_ms > 0 ? sync__source_busy_ms : SYNC_SOURCE_BUSY_MS);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, SYNC_SOURCE_DB_VALUE_MAX);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
    sqlite3_exec(db, "PRAGMA query_only=1; PRAGMA cell_size_check=1; PRAGMA mmap_size=0", NULL,
                 NULL, NULL);
    return 0;
}

int sync_source_db_open(const char *home, const char *path, sqlite3 **db, char *why, size_t whylen)
{
    *db = NULL;
    struct stat sb;
    int fd = sync_source_open(home, path, 0, &sb, why, whylen);
    if (fd < 0)
        return fd;
    close(fd);
    char *rpath = realpath(path, NULL);
    if (!rpath) {
        int e = errno;
        snprintf(why, whylen, "%s", e == ENOENT ? "gone" : strerror(e));
        return e == ENOENT ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
    }
    int64_t bytes = (int64_t)sb.st_size;
    int rc = check_beside(home, rpath, &bytes, why, whylen);
    sqlite3 *conn = NULL;
    if (rc == 0) {
        int src = sqlite3_open_v2(
            rpath, &conn, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
        if (src != SQLITE_OK) {
            snprintf(why, whylen, "cannot open the database read-only: %s",
                     sync_source_db_error(conn, src));
            rc = sync_source_db_status(src);
        }
    }
    free(rpath);
    if (rc == 0 && (rc = db_harden(conn, bytes)) < 0)
        snprintf(why, whylen, "out of memory");
    if (rc == 0) {
        /* the first read: a lock, or a file that is no database, shows here */
        sqlite3_stmt *st = NULL;
        int src = sqlite3_prepare_v2(conn, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
        if (src == SQLITE_OK)
            src = sqlite3_step(st);
        if (src != SQLITE_ROW) {
            snprintf(why, whylen, "%s", sync_source_db_error(conn, src));
            rc = sync_source_db_status(src);
        }
        sqlite3_finalize(st);
    }
    if (rc < 0) {
        sqlite3_close(conn);
        return rc;
    }
    *db = conn;
    return 0;
}

int sync_source_db_table(sqlite3 *db, const char *table, const char *const *columns, char *why,
                         size_t whylen)
{
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db,
                                 "SELECT type, sql FROM sqlite_master WHERE name = ?1 COLLATE "
                                 "NOCASE AND type IN ('table', 'view')",
                                 -1, &st, NULL);
    if (src != SQLITE_OK) {
        snprintf(why, whylen, "%s", sync_source_db_error(db, src));
        return sync_source_db_status(src);
    }
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    int rc = 0;
    if (src == SQLITE_DONE) {
        snprintf(why, whylen, "no table \"%s\"", table);
        rc = MCPAGE_EINVAL;
    } else if (src != SQLITE_ROW) {
        snprintf(why, whylen, "%s", sync_source_db_error(db, src));
        rc = sync_source_db_status(src);
    } else {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *sql = (const char *)sqlite3_column_text(st, 1);
        if (!type || strcmp(type, "table") != 0) {
            snprintf(why, whylen, "\"%s\" is a view, not a table: not read", table);
            rc = MCPAGE_EINVAL;
        } else if (sql && strncasecmp(sql + strspn(sql, " \t\r\n"), "CREATE VIRTUAL", 14) == 0) {
            snprintf(why, whylen, "\"%s\" is a virtual table: not read", table);
            rc = MCPAGE_EINVAL;
        }
    }
    sqlite3_finalize(st);
    if (rc < 0 || !columns)
        return rc;
    /* its columns: table_xinfo lists generated ones too, which are
       expressions, not stored values (refused like a view) */
    src = sqlite3_prepare_v2(db, "SELECT name, hidden FROM pragma_table_xinfo(?1)", -1, &st, NULL);
    if (src != SQLITE_OK) {
        snprintf(why, whylen, "%s", sync_source_db_error(db, src));
        return sync_source_db_status(src);
    }
    for (size_t i = 0; rc == 0 && columns[i]; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        int found = 0;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 0);
            if (name && strcasecmp(name, columns[i]) == 0) {
                found = sqlite3_column_int(st, 1) == 0 ? 1 : -1;
                break;
            }
        }
        if (src != SQLITE_ROW && src != SQLITE_DONE) {
            snprintf(why, whylen, "%s", sync_source_db_error(db, src));
            rc = sync_source_db_status(src);
        } else if (found == 0) {
            snprintf(why, whylen, "table \"%s\" has no column \"%s\"", table, columns[i]);
            rc = MCPAGE_EINVAL;
        } else if (found < 0) {
            snprintf(why, whylen, "column \"%s\" of \"%s\" is generated or hidden: not read",
                     columns[i], table);
            rc = MCPAGE_EINVAL;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- id maps -------------------------------------------------------------- */

struct sync_idmap_slot {
    uint64_t hash; /* 0 = free */
    char *id;      /* owned */
    long value;
};

static uint64_t id_hash(const char *id)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static struct sync_idmap_slot *slot_of(const sync_idmap *m, const char *id, uint64_t h)
{
    size_t i = (size_t)h & (m->cap - 1);
    while (m->v[i].hash && (m->v[i].hash != h || strcmp(m->v[i].id, id) != 0))
        i = (i + 1) & (m->cap - 1);
    return &m->v[i];
}

long sync_idmap_get(const sync_idmap *m, const char *id)
{
    if (!m->cap || !id)
        return -1;
    struct sync_idmap_slot *s = slot_of(m, id, id_hash(id));
    return s->hash ? s->value : -1;
}

static int idmap_grow(sync_idmap *m)
{
    if ((m->n + 1) * 2 <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap * 2 : 64;
    sync_idmap old = *m;
    m->v = calloc(cap, sizeof *m->v);
    if (!m->v) {
        *m = old;
        return MCPAGE_ENOMEM;
    }
    m->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.v[i].hash)
            *slot_of(m, old.v[i].id, old.v[i].hash) = old.v[i];
    free(old.v);
    return 0;
}

int sync_idmap_put(sync_idmap *m, const char *id, long value)
{
    if (!id || idmap_grow(m) < 0)
        return id ? MCPAGE_ENOMEM : MCPAGE_EINVAL;
    uint64_t h = id_hash(id);
    struct sync_idmap_slot *s = slot_of(m, id, h);
    if (!s->hash) {
        if (!(s->id = sync_dup(id)))
            return MCPAGE_ENOMEM;
        s->hash = h;
        m->n++;
    }
    s->value = value;
    return 0;
}

int sync_idmap_add(sync_idmap *m, const char *id)
{
    if (sync_idmap_get(m, id) >= 0)
        return 0;
    int rc = sync_idmap_put(m, id, 0);
    return rc < 0 ? rc : 1;
}

void sync_idmap_free(sync_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->v[i].id);
    free(m->v);
    memset(m, 0, sizeof *m);
}
