/*
 * What state an SQLite store file is in, and what to tell its user: a
 * missing, empty, truncated, foreign, read-only or damaged file each get
 * their own message naming the fix, where SQLite alone would say "unable
 * to open database file" or "database disk image is malformed", or open a
 * truncated file and fail later. The checks here are cheap (a stat and
 * the 100-byte header); PRAGMA quick_check, which reads every page, runs
 * before a writer writes (sqlite_store.c), unless the seal says a writer
 * found the file whole and closed it, nothing has written it since, and
 * that check is under a day old: a sync's cost stays that of what it
 * reads, not of the store's size.
 *
 * Damage seen by any handle is remembered for the process, keyed by the
 * file's device, inode and change time, so the health check reports it
 * and no writer in the process writes into that file again; a rebuilt
 * store (or a new file reusing a deleted one's inode) starts clean.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/sqlite/sqlite_internal.h"

/* How to recover a store that cannot be read as it is. */
#define REBUILD_HINT                                                                               \
    "rebuild it from the transcripts with 'mcpage sync --rebuild' (the damaged file is moved "     \
    "aside, not deleted; sessions whose transcripts are gone stay only in that file)"

/*
 * Files of this process found damaged: device, inode and the time of
 * their last change, so a new file that reuses the inode of a deleted
 * one (or a file changed since) is not taken for it.
 */
#define DAMAGED_MAX 16
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    struct timespec ctim;
} file_id;
static file_id damaged[DAMAGED_MAX];
static int ndamaged, next_slot;
static pthread_mutex_t damaged_mu = PTHREAD_MUTEX_INITIALIZER;

static int file_id_of(const char *path, file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->ctim = st.st_ctim;
    return 0;
}

static int file_id_equal(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->ctim.tv_sec == b->ctim.tv_sec &&
           a->ctim.tv_nsec == b->ctim.tv_nsec;
}

void store_sqlite__mark_damaged(const sq_conn *c)
{
    file_id id;
    if (file_id_of(c->path, &id) < 0)
        return;
    pthread_mutex_lock(&damaged_mu);
    int seen = 0;
    for (int i = 0; i < ndamaged && !seen; i++)
        seen = file_id_equal(&damaged[i], &id);
    if (!seen) { /* past DAMAGED_MAX, the oldest entry goes */
        damaged[next_slot] = id;
        next_slot = (next_slot + 1) % DAMAGED_MAX;
        if (ndamaged < DAMAGED_MAX)
            ndamaged++;
    }
    pthread_mutex_unlock(&damaged_mu);
}

int store_sqlite__seen_damaged(const sq_conn *c)
{
    file_id id;
    if (file_id_of(c->path, &id) < 0)
        return 0;
    pthread_mutex_lock(&damaged_mu);
    int seen = 0;
    for (int i = 0; i < ndamaged && !seen; i++)
        seen = file_id_equal(&damaged[i], &id);
    pthread_mutex_unlock(&damaged_mu);
    return seen;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Bytes of the write-ahead log beside `path` (0 when there is none). */
static long long wal_size(const char *path)
{
    char wal[SQ_PATH_MAX + 8];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    return stat(wal, &st) == 0 ? (long long)st.st_size : 0;
}

/* The directory part of `path` into dir ("." when it has none). */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, cap, ".");
    else if (slash == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

int store_sqlite__file_check(store *s, const char *path, int writer)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (writer)
            return 0; /* sync creates it */
        return store_fail(s, MCPAGE_ENOTFOUND,
                          "there is no store at %s yet: run 'mcpage sync' to create it, or "
                          "point --db at an existing one",
                          path);
    }
    if (fd < 0)
        return store_fail(s, MCPAGE_EIO,
                          "cannot read %s (%s): give this user read access to the file, or "
                          "point --db at a store it can read",
                          path, strerror(errno));
    struct stat st;
    unsigned char h[100];
    ssize_t n = fstat(fd, &st) == 0 ? pread(fd, h, sizeof h, 0) : -1;
    int err = errno;
    close(fd);
    if (n < 0)
        return store_fail(s, MCPAGE_EIO, "cannot read %s (%s)", path, strerror(err));
    if (S_ISDIR(st.st_mode))
        return store_fail(s, MCPAGE_EINVAL,
                          "%s is a directory, not a store file: point --db at a file", path);
    if (st.st_size == 0) {
        if (writer)
            return 0;
        return store_fail(s, MCPAGE_ENOTFOUND,
                          "%s is empty, not an mcpage store yet: run 'mcpage sync' to fill it",
                          path);
    }
    static const char magic[16] = "SQLite format 3";
    size_t have = (size_t)n < sizeof magic ? (size_t)n : sizeof magic;
    if (memcmp(h, magic, have) != 0)
        return store_fail(s, MCPAGE_ESTORE,
                          "%s is not an SQLite database, so not an mcpage store (its first "
                          "bytes are something else): check --db; 'mcpage sync --rebuild' moves "
                          "it aside and builds a store there",
                          path);
    if ((size_t)n < sizeof h)
        return store_fail(s, MCPAGE_ESTORE, "%s is truncated (%lld bytes, less than a header): %s",
                          path, (long long)st.st_size, REBUILD_HINT);
    unsigned page = (unsigned)h[16] << 8 | h[17];
    if (page == 1)
        page = 65536;
    if (page < 512 || (page & (page - 1)) != 0)
        return store_fail(s, MCPAGE_ESTORE, "%s is damaged (page size %u in its header): %s", path,
                          page, REBUILD_HINT);
    /* The header's page count is valid when its two change counters
     * agree. A checkpoint copying pages from the write-ahead log may
     * leave the file shorter for a moment: judge only without a log. */
    uint32_t pages = be32(h + 28);
    long long want = (long long)pages * page;
    if (pages > 0 && be32(h + 24) == be32(h + 92) && st.st_size < want && wal_size(path) == 0)
        return store_fail(s, MCPAGE_ESTORE, "%s is truncated (%lld of its %lld bytes): %s", path,
                          (long long)st.st_size, want, REBUILD_HINT);
    return 0;
}

/* "<db>-checked" and "<db>-wal" into the buffers; 0, or -1 when too long. */
static int seal_names(const char *path, char *seal, char *wal, size_t n)
{
    int a = snprintf(seal, n, "%s-checked", path), b = snprintf(wal, n, "%s-wal", path);
    return a < 0 || (size_t)a >= n || b < 0 || (size_t)b >= n ? -1 : 0;
}

int store_sqlite__damaged(store *s, const char *path, const char *detail)
{
    char seal[4200], wal[4200];
    if (seal_names(path, seal, wal, sizeof seal) == 0)
        (void)unlink(seal); /* whatever a check saw before, the file is not whole now */
    /* A file that ends early or is not a database says so itself. */
    if (store_sqlite__file_check(s, path, 1) < 0)
        return MCPAGE_ESTORE;
    return store_fail(s, MCPAGE_ESTORE, "the store %s is damaged (%s): %s", path,
                      detail && *detail ? detail : "database disk image is malformed",
                      REBUILD_HINT);
}

int store_sqlite__readonly(store *s, const char *path, int writer)
{
    char dir[SQ_PATH_MAX];
    dir_of(path, dir, sizeof dir);
    int file_ro = access(path, W_OK) != 0 && errno != ENOENT;
    int dir_ro = access(dir, W_OK) != 0;
    if (writer)
        return store_fail(s, MCPAGE_EIO,
                          "cannot write the store %s: %s is read-only for this user, and sync "
                          "writes the file and creates %s-wal beside it; fix the permissions or "
                          "point --db at a writable path",
                          path,
                          file_ro  ? "the file"
                          : dir_ro ? "its directory"
                                   : "it",
                          path);
    return store_fail(s, MCPAGE_EIO,
                      "cannot read the store %s: SQLite needs to create %s-shm beside it, and "
                      "%s is read-only for this user; make the directory writable for this "
                      "user, or copy the store into a writable directory",
                      path, path, dir_ro ? "the directory" : "the file");
}

/* ---- the seal -------------------------------------------------------------- */

static sq_seen_file seen(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return (sq_seen_file){-1, -1, -1, -1};
    return (sq_seen_file){(long long)st.st_size, (long long)st.st_ino, (long long)st.st_mtim.tv_sec,
                          (long long)st.st_mtim.tv_nsec};
}

void store_sqlite__seal_look(const char *path, sq_seen *out)
{
    char seal[4200], wal[4200];
    *out = (sq_seen){.db = {-1, -1, -1, -1}, .wal = {-1, -1, -1, -1}};
    if (seal_names(path, seal, wal, sizeof seal) < 0)
        return;
    out->db = seen(path);
    out->wal = seen(wal);
    /* An empty log holds no pages: a reader creates one, a writer's last close removes it. */
    if (out->wal.size <= 0)
        out->wal = (sq_seen_file){-1, -1, -1, -1};
}

#define SEAL_FORMAT "mcpage seal 1 %lld %lld %lld %lld %lld %lld %lld %lld %lld\n"

int store_sqlite__seal_fresh(const char *path, int consume, int64_t *checked_at)
{
    char seal[4200], wal[4200];
    if (seal_names(path, seal, wal, sizeof seal) < 0)
        return 0;
    char buf[400] = "";
    int fd = open(seal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (consume)
        (void)unlink(seal); /* a writer that does not close leaves no seal */
    if (r <= 0)
        return 0;
    buf[r] = 0;
    long long at;
    sq_seen was, now;
    if (sscanf(buf, SEAL_FORMAT, &at, &was.db.size, &was.db.ino, &was.db.sec, &was.db.nsec,
               &was.wal.size, &was.wal.ino, &was.wal.sec, &was.wal.nsec) != 9)
        return 0;
    if (was.wal.size <= 0) /* seals of 0.2.0 recorded an empty log as it was */
        was.wal = (sq_seen_file){-1, -1, -1, -1};
    store_sqlite__seal_look(path, &now);
    if (memcmp(&was, &now, sizeof was) != 0 || was.db.size < 0)
        return 0;
    long long t = (long long)time(NULL);
    if (at <= 0 || at > t || t - at >= STORE_SQLITE_RECHECK)
        return 0;
    *checked_at = at;
    return 1;
}

void store_sqlite__seal_write(const char *path, int64_t checked_at, const sq_seen *as)
{
    char seal[4200], wal[4200], tmp[4220];
    if (checked_at <= 0 || seal_names(path, seal, wal, sizeof seal) < 0)
        return;
    sq_seen now;
    if (as == NULL) {
        store_sqlite__seal_look(path, &now);
        as = &now;
    }
    if (as->db.size < 0)
        return;
    char buf[400];
    int n = snprintf(buf, sizeof buf, SEAL_FORMAT, (long long)checked_at, as->db.size, as->db.ino,
                     as->db.sec, as->db.nsec, as->wal.size, as->wal.ino, as->wal.sec, as->wal.nsec);
    (void)snprintf(tmp, sizeof tmp, "%s.%ld", seal, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return; /* no seal (a read-only folder): the next open checks the whole file */
    int ok = n > 0 && write(fd, buf, (size_t)n) == (ssize_t)n;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, seal) != 0)
        (void)unlink(tmp);
}
