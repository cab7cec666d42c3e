/*
 * The one way every reader of an agent's folder opens what it reads
 * (docs/security.md, "Agent folders"). Other programs, synced dotfiles, a
 * restored backup or a copied home can fill those folders, so a path is
 * refused unless it resolves inside the agent's home (or a folder the user
 * named), only regular files are read (a FIFO, device or socket is named
 * and skipped, never opened for blocking), each file has a size budget,
 * and a database is opened read-only with a busy timeout, a bound on the
 * work of any one statement, and its queried objects checked to be real
 * tables with the columns the reader expects. Refusals go to the report as
 * named warnings (sync_warn), their control bytes escaped.
 *
 * Every reader of src/sync (the built-in ones and the data-driven engine)
 * goes through these; none calls open(), fopen() or sqlite3_open*() on a
 * source path itself. Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_SOURCE_H
#define MCPAGE_SYNC_SOURCE_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "sync/sync.h"

/* Waits for another process's lock on a source database this long. */
#define SYNC_SOURCE_BUSY_MS 5000
/* VM steps any one statement on a source database may take: a base plus
 * so many per byte of the database and its WAL, so the work follows what
 * the file can hold. A real OpenCode or Cursor query takes a few steps per
 * byte at most (each row is read a few times, some tens of steps a row);
 * a recursive view that never ends is stopped after about a second
 * (100 million steps took 1.6 s of CPU here). */
#define SYNC_SOURCE_DB_STEPS_BASE     (10LL * 1000 * 1000)
#define SYNC_SOURCE_DB_STEPS_PER_BYTE 100
/* Largest text or blob value a source database may hand back. */
#define SYNC_SOURCE_DB_VALUE_MAX (128 << 20)

/* Tests set these (a locked database, a runaway statement) so a test
 * takes milliseconds: the busy wait in ms, the step budget of every
 * statement; 0 = the defaults above. */
extern int sync__source_busy_ms;
extern int64_t sync__source_db_steps;

/* Opens `path` for reading only when it resolves (realpath) inside the resolved `home`
 * (an agent's folder or one the user named), with O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC
 * on the resolved path, then fstat: regular files only (FIFOs, devices, sockets refused,
 * named in `why`), at most max_bytes (0 = no limit). Returns the fd (O_NONBLOCK cleared) and
 * fills *sb, or a negative MCPAGE_* code with a one-line reason in `why`:
 * MCPAGE_ENOTFOUND (gone), MCPAGE_EINVAL (outside home / not a regular file), MCPAGE_ERANGE
 * (too large), MCPAGE_EIO. */
int sync_source_open(const char *home, const char *path, int64_t max_bytes, struct stat *sb,
                     char *why, size_t whylen);
/* A folder under `home` opened for listing, only when it resolves inside the resolved home
 * (O_DIRECTORY|O_NOFOLLOW on the resolved path). A link out of it, or a folder that cannot
 * be listed, is named in a warning of `source` (when rep is not NULL); NULL then, and
 * silently when the folder does not exist. */
DIR *sync_source_opendir(const char *home, const char *path, sync_report *rep, const char *source);
/* The whole file through sync_source_open (malloc'd, NUL-terminated, *len bytes). */
int sync_source_read(const char *home, const char *path, int64_t max_bytes, char **out, size_t *len,
                     char *why, size_t whylen);
/* Opens a SQLite database read-only (SQLITE_OPEN_READONLY, after the same containment and
 * regular-file checks as sync_source_open, on the db and any -wal beside it), busy timeout,
 * and a progress handler that interrupts any one statement past a fixed budget of VM steps
 * (SYNC_SOURCE_DB_STEPS_BASE plus SYNC_SOURCE_DB_STEPS_PER_BYTE per byte of the db and WAL).
 * A locked/busy database returns MCPAGE_ESTATE with why "busy, skipped, retried on the next
 * sync". A file that is not a database (or a damaged one) is MCPAGE_EPARSE. The schema is
 * not trusted (SQLITE_DBCONFIG_TRUSTED_SCHEMA off, defensive mode on), and values larger
 * than SYNC_SOURCE_DB_VALUE_MAX fail their statement. Close it with sqlite3_close(). */
int sync_source_db_open(const char *home, const char *path, sqlite3 **db, char *why, size_t whylen);
/* 0 when `table` is a real table (not a view, not virtual) having every column of the
 * NULL-terminated `columns`; MCPAGE_EINVAL with a reason naming the missing thing otherwise. */
int sync_source_db_table(sqlite3 *db, const char *table, const char *const *columns, char *why,
                         size_t whylen);
/* A statement's failure in words: "busy, skipped, retried on the next sync" for a lock,
 * "a query ran past its budget of N steps" for one the progress handler stopped, else
 * SQLite's message. */
const char *sync_source_db_error(sqlite3 *db, int sqlite_rc);
/* MCPAGE_ESTATE for a busy or locked database, else MCPAGE_EIO. */
int sync_source_db_status(int sqlite_rc);

/* One named per-source warning: source name (e.g. "opencode"), path, line or row (0 = none),
 * reason; control bytes in path and reason are escaped before they are kept. Counted in the
 * report. */
void sync_warn(sync_report *rep, const char *source, const char *path, int64_t line,
               const char *why);

/* A path escaped for a terminal (text_term_escape, page/term.h), cut at its start (with "...") when
 * it does not fit in cap bytes, so the file's name stays. */
void sync_escape_path(char *dst, size_t cap, const char *path);

/*
 * A set of ids (strings) to a value: the folds' index from a record id to
 * its message, and the visited sets of graph walks. Open addressing over
 * 64-bit FNV-1a hashes with the keys kept, so a lookup is O(1) whatever
 * the number of ids and two ids never meet by their hash.
 */
typedef struct sync_idmap {
    struct sync_idmap_slot *v; /* cap slots (private) */
    size_t n, cap;             /* ids held, slots */
} sync_idmap;

/* The value `id` maps to (0 or more), or -1 when absent. */
long sync_idmap_get(const sync_idmap *m, const char *id);
/* Maps `id` to `value` (>= 0), replacing any value; MCPAGE_ENOMEM. */
int sync_idmap_put(sync_idmap *m, const char *id, long value);
/* 1 when `id` was added now, 0 when it was there already; MCPAGE_ENOMEM. */
int sync_idmap_add(sync_idmap *m, const char *id);
void sync_idmap_free(sync_idmap *m);

#endif
