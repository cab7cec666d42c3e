/*
 * Internals shared by the PostgreSQL backend's files: the connection
 * state, the per-process connection pool, the statement runner (retries,
 * reconnects, error mapping), the schema, and the text functions that give
 * PostgreSQL the same tokens, queries and snippets as the SQLite backend.
 */
#ifndef MCPAGE_STORE_PG_INTERNAL_H
#define MCPAGE_STORE_PG_INTERNAL_H

#include "store/postgres/pg_lib.h"

#include "store/store_backend.h"
#include "store/store_sql.h"

#define PG_URL_MAX         2048         /* bytes of a postgres:// URL */
#define PG_POOL_URLS       16           /* distinct URLs one process pools */
#define PG_POOL_IDLE       16           /* idle connections kept per URL */
#define PG_RETRIES         3            /* attempts of one statement outside a transaction */
#define PG_TSV_TOKENS      65535        /* tokens of one message indexed */
#define PG_TSV_BYTES       (512 * 1024) /* token bytes of one message indexed */
#define PG_LEXEME_MAX      2000         /* bytes of one indexed token (PG allows 2047) */
#define PG_TIMEOUT_DEFAULT 30000        /* statement_timeout (ms) of readers */
#define PG_POLL_MS         5            /* ms between budget checks of a running statement */
#define PG_LOCK_CLASS      1836016741   /* advisory lock class of session locks ('mcpe') */
#define PG_MIGRATE_LOCK    1836016742   /* advisory lock key of migrations */

typedef struct pg_pool pg_pool;

#define PG_MSG_COLS   15                /* columns of one buffered message row */
#define PG_PEND_ROWS  100               /* message rows buffered before a flush */
#define PG_PEND_BYTES (4 * 1024 * 1024) /* bytes of buffered rows before a flush */
#define PG_ID_BLOCK   256               /* message ids reserved per round trip */

/* Relevance heads (schema version 12, docs/store.md "Relevance heads"). */
#define PG_RANK_TERMS 256   /* words with heads at most */
#define PG_RANK_READ  4096  /* offset + limit of a page the heads answer at most */
#define PG_RANK_BATCH 20000 /* messages a tidy adds to the heads a transaction */
/* Words whose matches PostgreSQL's statistics estimate at this many or more
 * get heads (tests lower it). */
extern int64_t store_pg__rank_min;
/* Matches kept per word and rank when its heads are built (tests lower it). */
extern int64_t store_pg__rank_head;
/* Relevance pages the heads answered in this process (tests). */
extern int64_t store_pg__rank_read;
/* 1: searches never read the heads (tests, benchmarks). */
extern int store_pg__rank_off;

/* A message row waiting for the next multi-row INSERT. */
typedef struct pg_row {
    char *v[PG_MSG_COLS]; /* column values (malloc'd; NULL = SQL NULL) */
} pg_row;

typedef struct pg_conn {
    PGconn *db;       /* the connection; may be bad after an outage */
    pg_pool *pool;    /* where close returns it */
    int in_tx;        /* a transaction is open */
    int dirty;        /* rows changed in this transaction */
    int locks;        /* session advisory locks held */
    int64_t sid_hit;  /* cached session row id ... */
    char sid_of[256]; /* ... of this session id (one entry; sync writes one session at a time) */
    pg_row pend[PG_PEND_ROWS]; /* message rows not yet sent */
    int npend;                 /* rows in pend */
    size_t pend_bytes;         /* their text bytes */
    int flushing;              /* the flush itself is running */
    int64_t ids[PG_ID_BLOCK];  /* reserved message ids not yet used */
    int nids, idpos;           /* ids reserved, next to use */
    int64_t pend_sid;          /* the session of the buffered rows */
    char pend_first[64];       /* earliest non-empty timestamp among them */
    char pend_last[64];        /* latest timestamp among them */
} pg_conn;

/* Sends buffered message rows (one INSERT); runs before any other
 * statement so reads and the commit see them. 0 or the failure. */
int store_pg_flush(store *s);
/* Drops buffered rows and reserved ids (rollback, close). */
void store_pg_discard(pg_conn *c);

/* ---- connections (pg_conn.c) ---------------------------------------- */

/* Takes a connection for `url` from the pool or opens one; checks or
 * migrates the schema the first time a URL is seen by this process. */
int store_pg_connect(store *s, const char *url, int writer, pg_conn **out);
/* Returns a healthy connection to its pool (or closes it). */
void store_pg_release(pg_conn *c);

/* Runs one statement with text parameters (NULL = SQL NULL); `formats`
 * may be NULL (all text) and `binary` asks for binary results. Returns
 * the result (PQclear it), or NULL with the failure recorded on `s`.
 * Outside a transaction it retries serialization failures and deadlocks,
 * and reconnects (with backoff) when the connection was lost. */
PGresult *store_pg_exec(store *s, const char *sql, int n, const char *const *vals, const int *lens,
                        const int *formats, int binary);
/* The same for a statement with no parameters; 0 or the failure. */
int store_pg_simple(store *s, const char *sql);
/* 0 when the server answers; MCPAGE_ESTORE with the unavailable message. */
int store_pg_ping(store *s);

/* ---- schema (pg_schema.c) -------------------------------------------- */

int store_pg_schema_latest(void);
/* *version = 0 when the store has no schema yet. */
int store_pg_schema_version(PGconn *db, int *version, char *err, size_t errlen);
int store_pg_migrate(PGconn *db, char *err, size_t errlen);

/* ---- text (pg_text.c) ------------------------------------------------ */

/* The tsvector literal of `text` (malloc'd): tokens as SQLite's
 * unicode61 tokenizer with tokenchars '_' cuts them, folded to lower
 * case without Latin diacritics, with positions. */
int store_pg_tsvector(const char *text, char **out);

/* A parsed search query: terms of folded tokens. */
#define PG_QUERY_TERMS  64  /* terms of one query */
#define PG_QUERY_TOKENS 256 /* tokens of all terms together */

typedef struct pg_query {
    int nterms;                 /* terms, all required */
    int first[PG_QUERY_TERMS];  /* index of each term's first token */
    int count[PG_QUERY_TERMS];  /* tokens in each term (a phrase when > 1) */
    int prefix[PG_QUERY_TERMS]; /* the last token is a prefix */
    int ntokens;                /* tokens in `tok` */
    char *tok[PG_QUERY_TOKENS]; /* folded tokens, malloc'd */
} pg_query;

/* Parses user syntax (store.h) into terms; MCPAGE_EPARSE with a message
 * in `err` when nothing is left to search for. */
int store_pg_query_parse(const char *in, pg_query *q, char *err, size_t errlen);
/* The tsquery literal of a parsed query (malloc'd). */
int store_pg_query_tsquery(const pg_query *q, char **out);
/* A snippet of `text` around the query's hits, marked [..], cut ends "…". */
int store_pg_snippet(const char *text, const pg_query *q, char **out);
void store_pg_query_free(pg_query *q);

/* The PostgreSQL spelling of the shared SQL (store_sql.h; pg_store.c). */
extern const store_sql_dialect pg_dialect;

/* Backend entry (pg_store.c). */
int store_pg_open(store *s, const char *url, int flags);

#endif
