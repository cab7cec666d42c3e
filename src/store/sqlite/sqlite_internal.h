/*
 * Internals shared by the SQLite backend's files: the connection state,
 * the prepared-statement cache and the schema functions.
 */
#ifndef MCPAGE_STORE_SQLITE_INTERNAL_H
#define MCPAGE_STORE_SQLITE_INTERNAL_H

#include <sqlite3.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store_backend.h"
#include "store/store_sql.h"

#define SQ_CACHE_MAX 48   /* prepared statements kept per connection */
#define SQ_PATH_MAX  4097 /* bytes of a store path, NUL included */
/* Virtual machine steps between two budget checks (store_budget_set):
 * about 10-50 us of work, so a stop lands within a millisecond. */
#define SQ_PROGRESS_OPS 1000

typedef struct sq_cached {
    char *sql;        /* the statement text, the cache key */
    sqlite3_stmt *st; /* prepared once, reset after each use */
} sq_cached;

/* A session's count, time span and messages per day as message inserts
 * add them up (sqlite_write.c): written by one UPDATE per session and
 * batch, not one per message, before any other statement of the
 * connection runs and before the commit. */
#define SQ_PEND_TS_MAX 64 /* bytes of a timestamp kept (longer: written at once) */
#define SQ_PEND_DAYS   8  /* distinct days kept for one session */

typedef struct sq_pending {
    int64_t sid;                            /* the session, or 0 when nothing is pending */
    int64_t count;                          /* messages added */
    char first[SQ_PEND_TS_MAX];             /* the smallest non-empty timestamp, or "" */
    char last[SQ_PEND_TS_MAX];              /* the largest timestamp, or "" */
    char day[SQ_PEND_DAYS][SQ_PEND_TS_MAX]; /* session_days keys (the first 10 characters) */
    int64_t day_n[SQ_PEND_DAYS];            /* messages of each */
    int ndays;
} sq_pending;

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
    sq_pending pend;               /* session counters not written yet */
    int pend_hold;                 /* statements that leave them pending are running */
    char *add_session;             /* the session id of the last message added (owned) */
    int64_t add_sid;               /* its row id (rows of sessions are never deleted) */
    int64_t checked_at;            /* a writer: when quick_check last passed, else 0 */
    int64_t cache_kib;             /* a reader: its page cache's bound now (sq_cache_fit) */
} sq_conn;

#define CONN(s) ((sq_conn *)(s)->impl)

/* ---- shared by the backend's files (sqlite_store.c) ------------------ */

/* The failure of the statement that just failed: the budget's, a damaged
 * or read-only store's, else MCPAGE_ESTORE with "what: SQLite's message". */
int sq_err(store *s, const char *what);
/* The same for a search statement: MCPAGE_EPARSE "search query rejected". */
int sq_search_err(store *s);
/* A cached statement for `sql`, reset and with its bindings cleared;
 * writes the pending session counters first (sq_pending). */
int sq_prep(store *s, const char *sql, sqlite3_stmt **out);
/* Writes the pending session counters (sqlite_write.c). */
int sq_pending_flush(store *s);
/* Runs SQL text without parameters or rows (sqlite3_exec). */
int sq_exec(store *s, const char *sql);
/* Bounds a reader's page cache by what the process keeps and `building`,
 * the bytes a list's walk holds now (sqlite_store.c); the writer's is left. */
void sq_cache_fit(store *s, int64_t building);
/* sq_cache_fit's `building` for a statement that reads every match once. */
#define SQ_FIT_SCAN (-1)
void sq_cache_fit_ud(void *s, int64_t building);
/* The budget sq_cache_fit shares (KiB; tests lower it). */
extern int64_t store_sqlite__read_budget_kib;
/* Bytes of the row lengths kept (sqlite_rank.c) and of the impact lists
 * kept in the process's cache (sqlite_impact.c). */
int64_t store_sqlite__lengths_bytes(void);
int64_t store_sqlite__impact_bytes(void);
/* Runs a statement that returns no rows. */
int sq_done(store *s, sqlite3_stmt *st, const char *what);
/* Binds text, or NULL for a NULL `v`. */
void sq_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Column i as a malloc'd string; NULL for NULL, and for '' when `opt`. */
int sq_col_dup(sqlite3_stmt *st, int i, int opt, char **out);
/* Grows a row array by one zeroed row; `cap` tracks its capacity. */
void *sq_rows_grow(void *rows, size_t count, size_t *cap, size_t elem);
/* Integer keys to the indices of an array the caller keeps (open
 * addressing, at most half full; zeroed: empty). */
typedef struct sq_keymap {
    struct sq_keyslot {
        int64_t key, at; /* at: the index + 1, 0 free */
    } * slot;
    int64_t nslot, n;
} sq_keymap;
/* The index kept for `key`, or -1. */
int64_t sq_keymap_get(const sq_keymap *m, int64_t key);
/* Keeps `at` for a `key` it does not hold; SQLITE_OK or SQLITE_NOMEM. */
int sq_keymap_put(sq_keymap *m, int64_t key, int64_t at);
void sq_keymap_free(sq_keymap *m);
/* A damaged store takes no more writes: the failure, or 0. */
int sq_refuse_damaged(store *s);

/* The SQLite spelling of the shared SQL (store_sql.h). */
extern const store_sql_dialect sq_dialect;
/* The cached statement of q with its parameters bound. */
int sq_sql_prepare(store *s, store_sql *q, sqlite3_stmt **st);
/* store_ops.sql_rows */
int sqlite_sql_rows(store *s, const store_sql *q, store_sql_each_fn each, void *ctx);
/* A statement's current row as the shared row decoders read it. */
store_sql_row sq_row(sqlite3_stmt *st);
/* Runs a count(*) built in q: *n, or the failure (`status_on_error`
 * MCPAGE_EPARSE: a search the engine rejected). */
int sq_count_query(store *s, store_sql *q, int64_t *n, int status_on_error);

/* ---- the operations of store_ops ------------------------------------- */

/* Reads (sqlite_read.c). */
int sqlite_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                         store_projects *out);
int sqlite_projects_count(store *s, const store_project_filter *f, int64_t *n);
int sqlite_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                         store_sessions *out);
int sqlite_sessions_count(store *s, const store_session_filter *f, int64_t *n);
int sqlite_session_get(store *s, const char *id, store_session *out);
int sqlite_messages_from(store *s, const char *id, int64_t from, int64_t limit,
                         store_messages *out);
int sqlite_text_lines(store *s, const char *id, int64_t before, store_text_lines *out);
int sqlite_message_get(store *s, int64_t id, store_message *out);
int sqlite_raw_read(store *s, const char *id, int64_t offset, int64_t length, unsigned char **buf,
                    size_t *n, int64_t *total);
int sqlite_session_summary(store *s, const char *id, store_session_summary *out);
int sqlite_activity(store *s, const store_activity_filter *f, size_t max_rows, store_activity *out);
int sqlite_generation(store *s, int64_t *gen);
int sqlite_stats(store *s, store_stats *out);
/* A session's row id and raw size (raw_size may be NULL); MCPAGE_ENOTFOUND. */
int sq_session_sid(store *s, const char *id, int64_t *sid, int64_t *raw_size);

/* Search (sqlite_search.c). */
int sqlite_search(store *s, const store_search_filter *f, const store_page *pg, store_hits *out);
int sqlite_search_count(store *s, const store_search_filter *f, int64_t *n);

/* Writes (sqlite_write.c). */
int sqlite_begin(store *s);
int sqlite_commit(store *s);
int sqlite_rollback(store *s);
int sqlite_project_ensure(store *s, const char *path, const char *name, int64_t *id);
int sqlite_session_put(store *s, const store_session_meta *m);
int sqlite_session_state(store *s, const char *id, store_session_state *out);
int sqlite_session_reset(store *s, const char *id);
int sqlite_message_add(store *s, const store_message *m, const store_text_packed *packed,
                       int64_t *id);
int sqlite_raw_append(store *s, const char *id, const store_raw_packed *v, size_t nv,
                      int64_t lines);
int sqlite_session_refresh(store *s, const char *id);
int sqlite_tool_call_name(store *s, const char *id, const char *call_id, char **name);
int sqlite_source_get(store *s, const char *hostname, const char *path, store_source *out);
int sqlite_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out);
int sqlite_source_put(store *s, const store_source *src);
int sqlite_session_lock(store *s, const char *id);
int sqlite_session_unlock(store *s, const char *id);
int sqlite_session_trylock(store *s, const char *id);

int store_sqlite_schema_latest(void);
int store_sqlite_schema_version(sqlite3 *db, int *version);
int store_sqlite_migrate(sqlite3 *db, char *err, size_t errlen);
/*
 * Tests set this to force a newest/oldest search plan where one applies:
 * 1 collect and sort, 2 probe per row, 3 test rows against the matches;
 * 0 (the default) lets the cost model choose (sqlite_search.c).
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
 * The seal ("<db>-checked", sqlite_check.c): what a handle that found the
 * file whole saw of it and of its write-ahead log (a writer when it
 * closed, a reader before its check), and when quick_check last passed.
 * seal_fresh: 1 and that time in *checked_at when the seal matches the
 * files as they are now and the check is younger than
 * STORE_SQLITE_RECHECK seconds (nothing but mcpage wrote them since),
 * else 0; a writer consumes it (removes it either way), so a writer that
 * does not close leaves none. seal_look: the files as they are now (an
 * empty log as none). seal_write: the seal of the files as `as` saw them
 * (NULL: as they are now).
 */
#define STORE_SQLITE_RECHECK (24 * 3600)
typedef struct sq_seen_file {
    long long size, ino, sec, nsec; /* -1s: not there */
} sq_seen_file;
typedef struct sq_seen {
    sq_seen_file db, wal;
} sq_seen;
void store_sqlite__seal_look(const char *path, sq_seen *out);
int store_sqlite__seal_fresh(const char *path, int consume, int64_t *checked_at);
void store_sqlite__seal_write(const char *path, int64_t checked_at, const sq_seen *as);

/* The FTS5 API of a connection (the documented "SELECT fts5(?1)" handshake), or NULL. */
fts5_api *store_sqlite__fts5_api(sqlite3 *db);
/*
 * Registers mcpage_snippet(), mcpage_tokmap(text) and mcpage_bm25()
 * (sqlite_snippet.c, sqlite_rank.c) on db; 0 or -1. mcpage_tokmap() gives
 * a long text's token map for `message_tokmap` (NULL for a short text).
 * *snip (when snip is not NULL) gets the state store_sqlite_tokmap() takes,
 * owned by the connection; the snippets then keep a statement prepared,
 * which store_sqlite_snippet_close(*snip) finalizes before db is closed.
 */
int store_sqlite_snippet_register(sqlite3 *db, const int64_t *rank_nhit, void **snip);
/* Finalizes the statement the snippets keep (before the connection closes). */
void store_sqlite_snippet_close(void *snip);
/*
 * The token map of text[0..n) (sqlite3_malloc'd into *map), or *map NULL
 * for a text under a thousand tokens; an SQLite result code. After
 * store_sqlite_tokmap_watch(), the map of the next text FTS5 indexes on
 * the connection is caught from its tokens (sqlite_snippet.c), and this
 * call gives that one when it is of n bytes, instead of scanning the text.
 */
int store_sqlite_tokmap(void *snip, const char *text, size_t n, unsigned char **map, int *len);
void store_sqlite_tokmap_watch(void *snip);
/* Token maps caught while FTS5 indexed their texts (tests). */
extern int64_t store_sqlite__tokmap_caught;
/* Documents mcpage's tokenizer has indexed in this process (the re-index
 * migration's progress). */
extern int64_t store_sqlite__docs_indexed;
/* Of those, documents whose tokens were made ahead (store_sqlite_tokens_arm). */
extern int64_t store_sqlite__docs_replayed;
/* The next document FTS5 indexes on the connection takes tokens made
 * ahead, if they are its text's (k NULL: none). */
void store_sqlite_tokens_arm(void *snip, const store_tokens *k);
/* store_tokenizer_new's tokenizer (the connection's snippet state gives
 * the built-in unicode61), and its tokens of a text. */
void *store_sqlite_tokenizer_new(void *snip);
void store_sqlite_tokenizer_free(void *t);
int store_sqlite_text_tokens(void *t, const char *text, size_t n, store_tokens *out);
/* Query terms of an own-stem class (`~render`) asked for as the word
 * alone, their class having no postings (sqlite_snippet.c, tests); tests
 * set the knob to 1 to ask for the class with its word as a synonym. */
extern int64_t store_sqlite__class_alone;
extern int store_sqlite__class_alone_off;
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
/* Tests set this to 1 to make mcpage_bm25() ignore the lengths the store keeps. */
extern int store_sqlite__rank_kept_off;
/* Row lengths read from the store's kept ones so far (tests). */
extern int64_t store_sqlite__rank_rows_kept;
/*
 * The writer's part (sqlite_rank.c), in each commit's transaction: the
 * lengths of the rows added since the last commit appended to the kept
 * ones (`message_lengths`), or all of them again after a text was changed
 * or deleted. A failure is the commit's.
 */
int store_sqlite__lengths_save(store *s);
/* Which store file, and which state of it, a connection reads (cache keys). */
typedef struct sq_version {
    dev_t dev; /* the file */
    ino_t ino;
    int64_t id;      /* meta 'store_id': tells apart files that reused an inode */
    int64_t gen;     /* meta 'generation' */
    int64_t deletes; /* meta 'text_deletes': rows are only appended while it stays */
} sq_version;
/* The connection's file and its versions as its snapshot sees them; an SQLite result code. */
int store_sqlite__version(sqlite3 *db, sq_version *v);
/* bm25()'s inverse document frequency of a phrase in `nhit` of `nrow` rows. */
double store_sqlite__bm25_idf(int64_t nrow, int64_t nhit);
/* One phrase's share of bm25() (weights 1): the same double mcpage_bm25() adds up. */
double store_sqlite__bm25_term(double idf, double freq, double d, double avgdl);
/* The rank of a row whose phrases' shares sum to `score`: -score, times
 * STORE_RANK_TOOL_WEIGHT for a tool's output (lower is better). */
double store_sqlite__bm25_rank(double score, int tool);
/* A kept row length's top bit: the row is a tool's output (role 'tool');
 * SQ_LEN() is its length in tokens. */
#define SQ_LEN_TOOL 0x80000000u
#define SQ_LEN(w)   ((w)&0x7fffffffu)
/* SQL: 1 when the message of FTS5's docsize row `d` is a tool's output. */
#define SQ_ROLE_TOOL "(SELECT role = 'tool' FROM messages WHERE message_id = d.id)"
/* The row lengths mcpage_bm25() keeps (sqlite_rank.c), shared, with a
 * reference for the caller, or NULL; a query of `matches` rows loads a
 * slice from store_sqlite__rank_load_matches, the kept lengths below. */
typedef struct dl_snap dl_snap;
dl_snap *store_sqlite__lengths(sqlite3 *db, int64_t matches);
void store_sqlite__lengths_release(dl_snap *d);
/* The length word of `row` (its length in tokens, SQ_LEN_TOOL for a
 * tool's output), or 0 when `d` does not hold it. */
uint32_t store_sqlite__length(const dl_snap *d, int64_t row);
/* The length word of a row whose docsize column is `sz` (nsz bytes). */
uint32_t store_sqlite__len_word(const unsigned char *sz, int nsz, int tool);
/* A varint as SQLite and FTS5's docsize write it (n bytes available). */
uint64_t store_sqlite__varint(const unsigned char *p, int n);
/*
 * Registers mcpage_impact() and mcpage_tf() (sqlite_impact.c): relevance
 * pages of one-phrase queries read from impact-ordered match lists kept
 * per store generation instead of scoring every match. 0 or -1.
 */
int store_sqlite_impact_register(fts5_api *api, sqlite3 *db, int (*stop)(void *), void *stop_ud,
                                 void (*fit)(void *, int64_t));
/* Registers them again on db with the call's budget: a walk of a phrase's
 * matches calls stop(stop_ud) every few thousand rows and ends with
 * SQLITE_INTERRUPT when it returns non-zero. 0 or -1. */
int store_sqlite__impact_budget(sqlite3 *db, int (*stop)(void *), void *stop_ud);
/* The inner query of a relevance page from an impact list; binds the FTS5
 * query, the rows wanted, has_key, the key's rank and id, the query again. */
#define SQ_IMPACT_PAGE                                                                             \
    "SELECT id, rk FROM (SELECT json_extract(value, '$[0]') AS id, "                               \
    "mcpage_f64(json_extract(value, '$[1]')) AS rk FROM json_each((SELECT "                        \
    "mcpage_impact(messages_fts, ?, ?, ?, ?, ?) FROM messages_fts WHERE messages_fts MATCH ? "     \
    "LIMIT 1))) WHERE 1"
/* The matches of a query of one phrase from its impact list; binds the FTS5 query twice (no
 * row: none). */
#define SQ_IMPACT_COUNT                                                                            \
    "SELECT mcpage_impact_count(messages_fts, ?) FROM messages_fts WHERE messages_fts MATCH ? "    \
    "LIMIT 1"
/* Phrases of a query that impact lists serve at most (an AND of them); more score every match. */
#define SQ_IMPACT_PHRASES_MAX 4
/* Rows before the end of a page (offset + limit) past which an offset page scores every match. */
#define SQ_IMPACT_WANT_MAX 10000
/* Tests and benchmarks set this to 1 to rank every query by scoring every match. */
extern int store_sqlite__impact_off;
/* Impact lists built or extended so far (tests: built once, then extended by new rows). */
extern int64_t store_sqlite__impact_walked;
/* Search pages whose rows' matches came from one pass over the matches (tests). */
extern int64_t store_sqlite__snippet_passes;
/* Entries of impact lists read from the store's kept ones so far (tests). */
extern int64_t store_sqlite__impact_loaded;
/* Matches from which a list is kept in the store (4096; tests lower it). */
extern int64_t store_sqlite__impact_save_min;
/*
 * The writer's part (sqlite_impact.c), in each commit's transaction: the
 * impact lists this process built for the store, new or grown by an
 * eighth, kept in `impact_lists` for the next process. A failure is the
 * commit's.
 */
int store_sqlite__impact_save(store *s);
/*
 * The writer's other part (sqlite_impact_keep.c), outside any transaction:
 * keeps the heads of the words in store_sqlite__impact_heads_min rows or
 * more (`impact_heads`), chosen again when the rows doubled, extended when
 * a sixteenth of the rows are new. 0 or a negative status.
 */
int store_sqlite__impact_tidy(store *s);
/* The FTS5 query of a one-word search for the index term `term`
 * (sqlite3_malloc'd), or NULL when no one-word search asks for it. */
char *store_sqlite__vocab_query(const unsigned char *term);
/* Compresses the raw chunks a store kept before schema version 9, a few
 * a transaction from meta raw_pack_at to raw_pack_until, until done or
 * the budget's stop (sqlite_write.c). */
int store_sqlite__raw_pack(store *s);
/* Compresses the message texts a store kept before schema version 13
 * likewise, from meta text_pack_at to text_pack_until (sqlite_write.c). */
int store_sqlite__text_pack(store *s);
/* Gives the free pages of a store made with auto_vacuum incremental back
 * to the file system when more than a sixteenth of its pages are free
 * (sqlite_write.c). */
int store_sqlite__free_pages(store *s);
/* store_ops.tidy: the raw chunks, the message texts, the heads of common
 * words, then the free pages. */
int store_sqlite__tidy(store *s);
/* Rows a word must be in for its heads to be kept (32768; tests lower it). */
extern int64_t store_sqlite__impact_heads_min;
/* Entries of each tf run a word's kept heads hold (64; tests lower it). */
extern int64_t store_sqlite__impact_heads_run;
/* Non-zero: a word's heads are taken from its whole list, walked and
 * sorted, as before heads were walked alone (tests compare the two). */
extern int store_sqlite__heads_by_list;
/* Drops every list the process holds, as a fresh process has none (tests). */
void store_sqlite__impact_forget(void);
/* How mcpage_text's error for a row that does not decode begins. */
#define SQ_TEXT_DAMAGED "message text damaged: "
/* Registers mcpage_text(message_id, codec, stored) on a connection, the
 * decoder the view message_text reads through (sqlite_text.c). 0 or -1. */
int store_sqlite_text_register(sqlite3 *db);
/* Registers mcpage_groups(sid, key, id, ordinal, flags) and mcpage_f64(bits)
 * (sqlite_search.c) on db: 0, or -1. */
int store_sqlite_search_register(sqlite3 *db);
/* mcpage_f64(bits), an SQL function: the double whose IEEE 754 bits are `bits`. */
void store_sqlite__f64(sqlite3_context *ctx, int nval, sqlite3_value **val);
/* Texts past this are kept as frames (store_codec.h). */
#define SQ_TEXT_PACK_MAX STORE_CODEC_TEXT_WHOLE_MAX
/* A message's text as message_body keeps it: *codec and the bytes to
 * store (the text itself, or a frame valid until the next pack). */
int store_sqlite__text_encode(store *s, const char *text, size_t n, int *codec,
                              const unsigned char **out, size_t *outn);
/* Texts shorter than this many bytes never have a token map. */
#define SQ_TOKMAP_MIN_BYTES 2047
/* Tests set this to 1 to cut every snippet from the whole text (no token map). */
extern int store_sqlite__snippet_whole;
/* Snippets cut from a window of their text, and the frames of long texts
 * those windows decoded, in this process (tests). */
extern int64_t store_sqlite__snippet_windows;
extern int64_t store_sqlite__snippet_frames;

#endif
