/*
 * Internals shared by the SQLite backend's files: the connection state,
 * the prepared-statement cache and the schema functions.
 */
#ifndef MCPAGE_STORE_SQLITE_INTERNAL_H
#define MCPAGE_STORE_SQLITE_INTERNAL_H

#include <sqlite3.h>

#include "store/store_backend.h"

#define SQ_CACHE_MAX 48            /* prepared statements kept per connection */
#define SQ_SQL_MAX   4096          /* bytes of one generated statement */
#define SQ_BIND_MAX  16            /* parameters of one generated statement */
#define SQ_RAW_CHUNK (1024 * 1024) /* bytes of one stored raw chunk */
#define SQ_PATH_MAX  4097          /* bytes of a store path, NUL included */
/* Virtual machine steps between two budget checks (store_budget_set):
 * about 10-50 us of work, so a stop lands within a millisecond. */
#define SQ_PROGRESS_OPS 1000

typedef struct sq_cached {
    char *sql;        /* the statement text, the cache key */
    sqlite3_stmt *st; /* prepared once, reset after each use */
} sq_cached;

typedef struct sq_conn {
    sqlite3 *db;
    char *path;                    /* the database file */
    sq_cached cache[SQ_CACHE_MAX]; /* statement cache */
    size_t ncache;                 /* entries in use */
    size_t evict;                  /* next entry to replace when full */
    int in_tx;                     /* a transaction is open */
    char *count_query;             /* FTS query of the last match count */
    int64_t count_matches;         /* its bare match count (plan choice) */
    double count_us;               /* how long that count took: one enumeration */
    int64_t count_version;         /* data_version + own changes it was counted at */
    int dirty;                     /* rows changed in this transaction */
    int lock_fd;                   /* "<db>-sync.lock" for session locks, or -1 */
    int own_snippet;               /* mcpage_snippet() is registered (else FTS5's snippet()) */
    int64_t rank_nhit;             /* the ranked query's match count for mcpage_bm25(), or -1 */
    void *snip;                    /* the connection's token map state (store_sqlite_tokmap) */
    int damaged;                   /* SQLite reported the file corrupt: no more writes */
} sq_conn;

int store_sqlite_schema_latest(void);
int store_sqlite_schema_version(sqlite3 *db, int *version);
int store_sqlite_migrate(sqlite3 *db, char *err, size_t errlen);
/*
 * Tests set this to force a newest/oldest search plan where one applies:
 * 1 collect and sort, 2 probe per row, 3 test rows against the matches;
 * 0 (the default) lets the cost model choose (sqlite_store.c).
 */
extern int store_sqlite__force_plan;
/*
 * Tests and benchmarks set this to fix how a search page gets its
 * snippets: 1 enumerate the matches and keep the page's, -1 one FTS5
 * probe per row; 0 (the default) lets the cost model choose.
 */
extern int store_sqlite__force_outer;
/* ---- the state of a store file (sqlite_check.c) ---- */

/*
 * Cheap checks before SQLite opens `path` (a stat and the header): 0, or
 * a failure whose message names the state and the fix: missing or empty
 * (readers only), a directory, not an SQLite file, truncated.
 */
int store_sqlite__file_check(store *s, const char *path, int writer);
/* The failure for a file SQLite found corrupt (`detail`: its message). */
int store_sqlite__damaged(store *s, const char *path, const char *detail);
/* The failure for a file or directory this user cannot write. */
int store_sqlite__readonly(store *s, const char *path, int writer);
/* Remembers for the process that the connection's file is damaged. */
void store_sqlite__mark_damaged(const sq_conn *c);
/* 1 when a handle of this process found the connection's file damaged. */
int store_sqlite__seen_damaged(const sq_conn *c);

/*
 * Registers mcpage_snippet(), mcpage_tokmap(text) and mcpage_bm25()
 * (sqlite_snippet.c, sqlite_rank.c) on db; 0 or -1. mcpage_tokmap() gives
 * a long text's token map for `message_tokmap` (NULL for a short text).
 * *snip (when snip is not NULL) gets the state store_sqlite_tokmap() takes,
 * owned by the connection.
 */
int store_sqlite_snippet_register(sqlite3 *db, const int64_t *rank_nhit, void **snip);
/* The token map of text[0..n) (sqlite3_malloc'd into *map), or *map NULL
 * for a text under a thousand tokens; an SQLite result code. */
int store_sqlite_tokmap(void *snip, const char *text, size_t n, unsigned char **map, int *len);
/*
 * Registers mcpage_bm25() (sqlite_rank.c), bm25() with cached row lengths;
 * 0 or -1. *nhit is the bare match count of the query being ranked while
 * the store knows it, else -1 (it spares bm25 a count of its own).
 */
int store_sqlite_rank_register(fts5_api *api, sqlite3 *db, const int64_t *nhit);
/* Tests set this to 1 to make mcpage_bm25() read every row length through FTS5. */
extern int store_sqlite__rank_fts5_lengths;
/* Matches from which mcpage_bm25() loads the row lengths (4096; tests lower it). */
extern int store_sqlite__rank_load_matches;
/* Row lengths one query adds to the array at most (2^19; tests lower it). */
extern int64_t store_sqlite__rank_load_slice;
/* Row lengths mcpage_bm25() has read so far (tests: once per generation, new rows only). */
extern int64_t store_sqlite__rank_rows_loaded;
/* Texts shorter than this many bytes never have a token map. */
#define SQ_TOKMAP_MIN_BYTES 2047
/* Tests set this to 1 to cut every snippet from the whole text (no token map). */
extern int store_sqlite__snippet_whole;

#endif
