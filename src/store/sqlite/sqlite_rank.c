/*
 * mcpage_bm25(): FTS5's bm25() (weights 1), the same double for every
 * row, at a fraction of its cost per match.
 *
 * Relevance order scores every match, so on a common word the cost per
 * match is the query's cost: 311,149 matches of "the" at a million
 * messages took 212 ms. FTS5's bm25() spends most of it on two things:
 * the row's length, which FTS5 reads with an SQL statement on
 * `messages_fts_docsize` per row (a statement reset, a b-tree descent,
 * mutexes), and xInstCount(), which builds an array of every match in the
 * row. Here the row's length comes from an array of every row's length,
 * loaded once per store generation and shared by the process's
 * connections to the file (a sync appends messages: the next query loads
 * only the new rows; deleted texts, counted by the store in meta
 * 'text_deletes', make it load all), and the matches are counted with
 * the phrase iterators. The arithmetic is bm25()'s, in its order, so the
 * ranks, the order and the keyset cursors are bm25()'s (the store test
 * compares them on every row).
 *
 *   mcpage_bm25(fts_table)
 *
 * A connection at an older snapshot than the loaded array (a reader that
 * began before a sync committed) reads lengths through FTS5 as bm25() does.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "store/sqlite/sqlite_internal.h"
#include "store/store_sql.h"

/* What the store tells the function about the query being ranked (user data). */
typedef struct rank_conn {
    sqlite3 *db;
    const int64_t *nhit; /* the query's bare match count, or -1 */
} rank_conn;

/*
 * Row lengths by rowid, read at one generation of one file. Valid for any
 * snapshot with the same text-delete count (rows are only appended in
 * between), for the rows it covers. Immutable once published; freed when
 * the last query using it lets go.
 */
struct dl_snap {
    int refs;  /* the cache's reference and each query's */
    dev_t dev; /* the file */
    ino_t ino;
    int64_t id;      /* meta 'store_id' */
    int64_t gen;     /* meta 'generation' it was read at */
    int64_t deletes; /* meta 'text_deletes' it was read at */
    int64_t max_id;  /* largest rowid read: rows past it are asked of FTS5 */
    int complete;    /* every row of generation `gen` was read */
    uint32_t *len;   /* len[rowid]: tokens of the row, SQ_LEN_TOOL for a tool's (0: no row) */
    int64_t cap;     /* entries of len */
};

/* Matches from which a query loads (or updates) the lengths array: under
 * it, FTS5's per-row length statement costs less than reading every row's. */
int store_sqlite__rank_load_matches = 4096;
/* Rows one query reads into the array at most: a fresh process's first
 * queries each read a slice (about 0.5G instructions, 170 ms at idle, for
 * 2^19), so no one call pays for a million rows under its budget. */
int64_t store_sqlite__rank_load_slice = (int64_t)1 << 19;
int store_sqlite__rank_fts5_lengths;
int64_t store_sqlite__rank_rows_loaded;

static pthread_mutex_t dl_mu = PTHREAD_MUTEX_INITIALIZER;
static dl_snap *dl_latest; /* the newest loaded, or NULL */

int64_t store_sqlite__lengths_bytes(void)
{
    pthread_mutex_lock(&dl_mu);
    int64_t b = dl_latest ? dl_latest->cap * (int64_t)sizeof *dl_latest->len : 0;
    pthread_mutex_unlock(&dl_mu);
    return b;
}

static void dl_release(void *p)
{
    dl_snap *d = p;
    if (d == NULL)
        return;
    pthread_mutex_lock(&dl_mu);
    int last = --d->refs == 0;
    pthread_mutex_unlock(&dl_mu);
    if (last) {
        sqlite3_free(d->len);
        sqlite3_free(d);
    }
}

/* The store's id, generation and text-delete count as this connection sees them. */
static int dl_versions(sqlite3 *db, int64_t *id, int64_t *gen, int64_t *deletes)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT (SELECT value FROM meta WHERE key = 'store_id'), "
                                "(SELECT value FROM meta WHERE key = 'generation'), "
                                "(SELECT value FROM meta WHERE key = 'text_deletes')",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        *gen = sqlite3_column_int64(st, 1);
        *deletes = sqlite3_column_int64(st, 2);
        rc = sqlite3_column_type(st, 0) == SQLITE_NULL ||
                     sqlite3_column_type(st, 1) == SQLITE_NULL ||
                     sqlite3_column_type(st, 2) == SQLITE_NULL
                 ? SQLITE_ERROR
                 : SQLITE_OK;
    } else if (rc == SQLITE_OK) {
        rc = SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    return rc;
}

/* A varint as SQLite (and FTS5's docsize) writes it. */
uint64_t store_sqlite__varint(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n && i < 9; i++) {
        if (i == 8)
            return (v << 8) | p[i];
        v = (v << 7) | (p[i] & 0x7f);
        if (!(p[i] & 0x80))
            break;
    }
    return v;
}

uint32_t store_sqlite__len_word(const unsigned char *sz, int nsz, int tool)
{
    uint64_t n = sz ? store_sqlite__varint(sz, nsz) : 0;
    return (n > SQ_LEN(UINT32_MAX) ? SQ_LEN(UINT32_MAX) : (uint32_t)n) | (tool ? SQ_LEN_TOOL : 0);
}

/* The length word of the docsize row `st` steps on (columns 1 sz, 2 SQ_ROLE_TOOL). */
static uint32_t len_word_of(sqlite3_stmt *st)
{
    return store_sqlite__len_word(sqlite3_column_blob(st, 1), sqlite3_column_bytes(st, 1),
                                  sqlite3_column_int(st, 2));
}

/* ---- the row lengths kept in the store ------------------------------ */

/*
 * The writer keeps every row's length word in `message_lengths` (chunks of
 * DL_CHUNK_ROWS little-endian uint32s by rowid: the length, SQ_LEN_TOOL
 * for a tool's output; schema version 15 dropped the older lengths), with meta
 * 'lengths_max_id' (every row up to it is there) and 'lengths_deletes'
 * (the text-delete count they were read at), so that a fresh process
 * reads four bytes a row instead of stepping through
 * `messages_fts_docsize` (about 1,100 instructions a row: 1.1G at a
 * million messages, most of a first relevance query). The table is a
 * cache derived from the index: a store without it (an older writer), or
 * with lengths of another text-delete count, is read as before.
 */
#define DL_CHUNK_SHIFT 10
#define DL_CHUNK_ROWS  (1 << DL_CHUNK_SHIFT)
#define DL_CHUNK_BYTES (DL_CHUNK_ROWS * 4)

int store_sqlite__rank_kept_off;
int64_t store_sqlite__rank_rows_kept;

static void le32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t le32_get(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Writes chunk `c` (DL_CHUNK_BYTES at `buf`). */
static int kept_put(store *s, int64_t c, const unsigned char *buf)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "INSERT OR REPLACE INTO message_lengths VALUES(?, ?)", &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, c);
    sqlite3_bind_blob(st, 2, buf, DL_CHUNK_BYTES, SQLITE_STATIC);
    return sq_done(s, st, "keeping row lengths");
}

/* Reads chunk `c` into `buf` (zeros where the store has none). */
static int kept_get(store *s, int64_t c, unsigned char *buf)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT lens FROM message_lengths WHERE chunk = ?", &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, c);
    memset(buf, 0, DL_CHUNK_BYTES);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) == DL_CHUNK_BYTES)
        memcpy(buf, sqlite3_column_blob(st, 0), DL_CHUNK_BYTES);
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sq_err(s, "reading kept row lengths");
}

int store_sqlite__lengths_save(store *s)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "SELECT (SELECT value FROM meta WHERE key = 'text_deletes'), "
                     "(SELECT value FROM meta WHERE key = 'lengths_deletes'), "
                     "(SELECT value FROM meta WHERE key = 'lengths_max_id'), "
                     "(SELECT coalesce(max(id), 0) FROM messages_fts_docsize)",
                     &st);
    if (rc < 0)
        return rc;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return sq_err(s, "reading the kept row lengths' state");
    }
    int64_t deletes = sqlite3_column_int64(st, 0);
    int fresh = sqlite3_column_type(st, 2) == SQLITE_NULL;
    /* (kept past the index's last row: not this writer's, read all again) */
    int stale = fresh || sqlite3_column_int64(st, 1) != deletes ||
                sqlite3_column_int64(st, 2) > sqlite3_column_int64(st, 3);
    int64_t max_id = stale ? 0 : sqlite3_column_int64(st, 2);
    sqlite3_reset(st);

    if (fresh && (rc = sq_exec(s, "CREATE TABLE IF NOT EXISTS message_lengths(chunk INTEGER "
                                  "PRIMARY KEY, lens BLOB NOT NULL)")) < 0)
        return rc;
    /* A changed or deleted text: every row is read again. */
    if (stale && (rc = sq_exec(s, "DELETE FROM message_lengths")) < 0)
        return rc;

    /* The rows added since: the last chunk is completed, new ones written. */
    unsigned char buf[DL_CHUNK_BYTES];
    int64_t cur = -1;
    if ((rc = sq_prep(s,
                      "SELECT d.id, d.sz, " SQ_ROLE_TOOL
                      " FROM messages_fts_docsize d WHERE d.id > ? ORDER BY d.id",
                      &st)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, max_id);
    int step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id >> DL_CHUNK_SHIFT != cur) {
            if (cur >= 0)
                rc = kept_put(s, cur, buf);
            cur = id >> DL_CHUNK_SHIFT;
            if (rc == 0)
                rc = kept_get(s, cur, buf);
        }
        le32_put(buf + 4 * (id & (DL_CHUNK_ROWS - 1)), len_word_of(st));
        max_id = id;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sq_err(s, "reading row lengths");
    sqlite3_reset(st);
    if (rc == 0 && cur >= 0)
        rc = kept_put(s, cur, buf);
    if (rc < 0 || (cur < 0 && !stale))
        return rc;

    if ((rc = sq_prep(s,
                      "INSERT OR REPLACE INTO meta VALUES('lengths_max_id', ?), "
                      "('lengths_deletes', ?)",
                      &st)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, max_id);
    sqlite3_bind_int64(st, 2, deletes);
    return sq_done(s, st, "keeping row lengths");
}

/*
 * Copies the kept lengths of the rows after d->max_id into d (whose
 * text-delete count they must have been read at) and moves d->max_id to
 * the last row they cover. Does nothing when the store keeps none.
 */
static void dl_load_kept(sqlite3 *db, dl_snap *d)
{
    sqlite3_stmt *st = NULL;
    if (store_sqlite__rank_kept_off ||
        sqlite3_prepare_v2(db,
                           "SELECT (SELECT value FROM meta WHERE key = 'lengths_deletes'), "
                           "(SELECT value FROM meta WHERE key = 'lengths_max_id'), chunk, lens "
                           "FROM message_lengths WHERE chunk >= ? ORDER BY chunk",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return;
    }
    int64_t from = d->max_id + 1, upto = -1;
    sqlite3_bind_int64(st, 1, from >> DL_CHUNK_SHIFT);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_int64(st, 0) != d->deletes)
            break;
        /* never past the array, whatever the file says */
        upto = sqlite3_column_int64(st, 1) < d->cap - 1 ? sqlite3_column_int64(st, 1) : d->cap - 1;
        int64_t base = sqlite3_column_int64(st, 2) << DL_CHUNK_SHIFT;
        const unsigned char *lens = sqlite3_column_blob(st, 3);
        if (base < 0 || base > upto || sqlite3_column_bytes(st, 3) != DL_CHUNK_BYTES)
            break;
        for (int64_t row = base > from ? base : from; row <= upto && row < base + DL_CHUNK_ROWS;
             row++) {
            d->len[row] = le32_get(lens + 4 * (row - base));
            store_sqlite__rank_rows_kept++;
        }
    }
    sqlite3_finalize(st);
    /* Rows of no chunk up to `upto` have no text: 0, asked of FTS5 if ever matched. */
    if (upto > d->max_id)
        d->max_id = upto;
}

/* Reads up to a slice of rows after `from->max_id` (from the first when
 * from is NULL) into a new snapshot: the store's kept lengths, then
 * FTS5's docsize. */
static dl_snap *dl_load(sqlite3 *db, const dl_snap *from, const struct stat *file, int64_t id,
                        int64_t gen, int64_t deletes, int64_t slice)
{
    dl_snap *d = sqlite3_malloc(sizeof *d);
    if (d == NULL)
        return NULL;
    *d = (dl_snap){.refs = 1,
                   .dev = file->st_dev,
                   .ino = file->st_ino,
                   .id = id,
                   .gen = gen,
                   .deletes = deletes};
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT max(id) FROM messages_fts_docsize", -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        d->cap = sqlite3_column_int64(st, 0) + 1;
    sqlite3_finalize(st);
    if (rc != SQLITE_OK || d->cap < 1 || d->cap > ((int64_t)1 << 32))
        goto fail;
    d->len = sqlite3_malloc64((sqlite3_uint64)d->cap * sizeof *d->len);
    if (d->len == NULL)
        goto fail;
    int64_t kept = from ? (from->max_id + 1 < d->cap ? from->max_id + 1 : d->cap) : 0;
    if (kept > 0)
        memcpy(d->len, from->len, (size_t)kept * sizeof *d->len);
    memset(d->len + kept, 0, (size_t)(d->cap - kept) * sizeof *d->len);
    d->max_id = from ? from->max_id : 0;
    dl_load_kept(db, d);
    rc = sqlite3_prepare_v2(db,
                            "SELECT d.id, d.sz, " SQ_ROLE_TOOL
                            " FROM messages_fts_docsize d WHERE d.id > ? ORDER BY d.id LIMIT ?",
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, d->max_id > 0 ? d->max_id : INT64_MIN);
    sqlite3_bind_int64(st, 2, slice);
    int64_t read = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        read++;
        int64_t row = sqlite3_column_int64(st, 0);
        if (row < 0 || row >= d->cap)
            break;
        d->len[row] = len_word_of(st);
        d->max_id = row > d->max_id ? row : d->max_id;
        store_sqlite__rank_rows_loaded++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        goto fail;
    d->complete = read < slice;
    return d;
fail:
    sqlite3_free(d->len);
    sqlite3_free(d);
    return NULL;
}

int store_sqlite__version(sqlite3 *db, sq_version *v)
{
    const char *path = sqlite3_db_filename(db, "main");
    struct stat file;
    if (path == NULL || *path == '\0' || stat(path, &file) != 0)
        return SQLITE_ERROR;
    v->dev = file.st_dev;
    v->ino = file.st_ino;
    return dl_versions(db, &v->id, &v->gen, &v->deletes);
}

/*
 * A query of few matches reads each row's length through FTS5 and its
 * role with a statement (about 3,500 instructions a row); the kept
 * lengths cost 4 bytes a row of the store. So it loads them (and at most
 * DL_KEPT_SLICE rows of docsize past them) when it has a match in
 * DL_KEPT_SHARE rows or more and the store keeps them current: "000050",
 * 3,478 matches of 38,607 messages, 12.3M instructions of role lookups
 * a fresh process, else.
 */
#define DL_KEPT_SHARE 256
#define DL_KEPT_SLICE 4096

static int dl_kept_worth(sqlite3 *db, int64_t matches, int64_t deletes)
{
    sqlite3_stmt *st = NULL;
    int worth = 0;
    if (!store_sqlite__rank_kept_off &&
        sqlite3_prepare_v2(db,
                           "SELECT (SELECT value FROM meta WHERE key = 'lengths_deletes'), "
                           "(SELECT value FROM meta WHERE key = 'lengths_max_id'), "
                           "(SELECT coalesce(max(id), 0) FROM messages_fts_docsize)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 1) != SQLITE_NULL) {
        int64_t rows = sqlite3_column_int64(st, 2);
        worth = sqlite3_column_int64(st, 0) == deletes && matches * DL_KEPT_SHARE >= rows &&
                rows - sqlite3_column_int64(st, 1) <= DL_KEPT_SLICE;
    }
    sqlite3_finalize(st);
    return worth;
}

/*
 * The row lengths at this connection's snapshot, with a reference for the
 * caller, or NULL (then lengths come from FTS5). A query of `matches`
 * (rows holding its rarest phrase) loads them from
 * store_sqlite__rank_load_matches on, the kept ones only below
 * (dl_kept_worth); the loaded ones serve any query.
 */
static dl_snap *dl_get(sqlite3 *db, int64_t matches)
{
    int may_load = matches >= store_sqlite__rank_load_matches;
    sq_version v;
    if (store_sqlite__version(db, &v) != SQLITE_OK)
        return NULL;
    int64_t id = v.id, gen = v.gen, deletes = v.deletes;
    struct stat file = {.st_dev = v.dev, .st_ino = v.ino};
    pthread_mutex_lock(&dl_mu);
    dl_snap *d = dl_latest;
    int usable =
        d && d->dev == file.st_dev && d->ino == file.st_ino && d->id == id && d->deletes == deletes;
    /* Every row this snapshot holds is there, or the query may not load more. */
    if (usable && ((d->complete && d->gen >= gen) || !may_load)) {
        d->refs++;
        pthread_mutex_unlock(&dl_mu);
        return d;
    }
    if (!may_load && !dl_kept_worth(db, matches, deletes)) {
        pthread_mutex_unlock(&dl_mu);
        return NULL;
    }
    /* Loaded under the lock: readers of one file would all load the same rows. */
    dl_snap *n = dl_load(db, usable ? d : NULL, &file, id, gen, deletes,
                         may_load ? store_sqlite__rank_load_slice : DL_KEPT_SLICE);
    if (n) {
        n->refs++; /* the caller's */
        dl_latest = n;
    }
    pthread_mutex_unlock(&dl_mu);
    if (n && d)
        dl_release(d); /* the cache's reference to the one replaced */
    return n;
}

double store_sqlite__bm25_idf(int64_t nrow, int64_t nhit)
{
    double idf = log(((double)(nrow - nhit) + 0.5) / ((double)nhit + 0.5));
    return idf <= 0.0 ? 1e-6 : idf;
}

double store_sqlite__bm25_term(double idf, double freq, double d, double avgdl)
{
    const double k1 = 1.2, bb = 0.75;
    return idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - bb + bb * d / avgdl)));
}

double store_sqlite__bm25_rank(double score, int tool)
{
    return -1.0 * (tool ? score * STORE_RANK_TOOL_WEIGHT : score);
}

dl_snap *store_sqlite__lengths(sqlite3 *db, int64_t matches)
{
    return dl_get(db, matches);
}

void store_sqlite__lengths_release(dl_snap *d)
{
    dl_release(d);
}

uint32_t store_sqlite__length(const dl_snap *d, int64_t row)
{
    return d && row >= 0 && row <= d->max_id ? d->len[row] : 0;
}

/* Per query: bm25()'s constants and the row lengths. */
typedef struct bm25_data {
    int nphrase;
    double avgdl;
    dl_snap *dl;        /* NULL: ask FTS5 */
    sqlite3_stmt *role; /* a row's role when dl does not hold it, or NULL */
    double idf[];
} bm25_data;

static void bm25_data_free(void *p)
{
    bm25_data *b = p;
    dl_release(b->dl);
    sqlite3_finalize(b->role);
    sqlite3_free(b);
}

static int count_cb(const Fts5ExtensionApi *api, Fts5Context *fts, void *ud)
{
    (void)api;
    (void)fts;
    (*(sqlite3_int64 *)ud)++;
    return SQLITE_OK;
}

/* bm25()'s per-query data (fts5Bm25GetData), plus the lengths. */
static bm25_data *bm25_setup(const Fts5ExtensionApi *api, Fts5Context *fts, int *rc)
{
    bm25_data *b = api->xGetAuxdata(fts, 0);
    if (b)
        return b;
    int nphrase = api->xPhraseCount(fts);
    b = sqlite3_malloc64(sizeof *b + (size_t)nphrase * sizeof(double));
    if (b == NULL) {
        *rc = SQLITE_NOMEM;
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->nphrase = nphrase;
    sqlite3_int64 nrow = 0, ntoken = 0;
    *rc = api->xRowCount(fts, &nrow);
    if (*rc == SQLITE_OK)
        *rc = api->xColumnTotalSize(fts, -1, &ntoken);
    if (*rc == SQLITE_OK)
        b->avgdl = (double)ntoken / (double)nrow;
    const rank_conn *rcn = api->xUserData(fts);
    sqlite3_int64 fewest = nrow; /* rows holding the rarest phrase: at least the matches */
    for (int i = 0; *rc == SQLITE_OK && i < nphrase; i++) {
        sqlite3_int64 nhit = 0;
        /* One phrase: the rows holding it are the query's matches, which
         * the store has counted already when it passes the count. */
        if (nphrase == 1 && *rcn->nhit >= 0)
            nhit = *rcn->nhit;
        else
            *rc = api->xQueryPhrase(fts, i, &nhit, count_cb);
        if (*rc == SQLITE_OK) {
            b->idf[i] = store_sqlite__bm25_idf(nrow, nhit);
            fewest = nhit < fewest ? nhit : fewest;
        }
    }
    /* Few matches read their lengths through FTS5 rather than load every
     * row's (but the kept ones when worth it: dl_get). */
    if (*rc == SQLITE_OK && !store_sqlite__rank_fts5_lengths)
        b->dl = dl_get(rcn->db, fewest);
    if (*rc == SQLITE_OK)
        *rc = api->xSetAuxdata(fts, b, bm25_data_free);
    else
        bm25_data_free(b);
    return *rc == SQLITE_OK ? b : NULL;
}

static void bm25_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                    sqlite3_value **val)
{
    (void)nval;
    (void)val;
    int rc = SQLITE_OK;
    bm25_data *b = bm25_setup(api, fts, &rc);
    double d = 0.0;
    int tool = 0;
    if (rc == SQLITE_OK) {
        sqlite3_int64 id = api->xRowid(fts);
        if (b->dl && id >= 0 && id <= b->dl->max_id && b->dl->len[id] > 0) {
            d = (double)SQ_LEN(b->dl->len[id]);
            tool = (b->dl->len[id] & SQ_LEN_TOOL) != 0;
        } else {
            int ntok = 0;
            rc = api->xColumnSize(fts, -1, &ntok);
            d = (double)ntok;
            if (rc == SQLITE_OK && b->role == NULL)
                rc = sqlite3_prepare_v2(((const rank_conn *)api->xUserData(fts))->db,
                                        "SELECT role = 'tool' FROM messages WHERE message_id = ?",
                                        -1, &b->role, NULL);
            if (rc == SQLITE_OK) {
                sqlite3_bind_int64(b->role, 1, id);
                tool = sqlite3_step(b->role) == SQLITE_ROW && sqlite3_column_int(b->role, 0);
                rc = sqlite3_reset(b->role);
            }
        }
    }
    double score = 0.0;
    for (int i = 0; rc == SQLITE_OK && i < b->nphrase; i++) {
        Fts5PhraseIter it;
        int col = 0, off = 0;
        double freq = 0.0;
        rc = api->xPhraseFirst(fts, i, &it, &col, &off);
        for (; rc == SQLITE_OK && col >= 0; api->xPhraseNext(fts, &it, &col, &off))
            freq += 1.0;
        score += store_sqlite__bm25_term(b->idf[i], freq, d, b->avgdl);
    }
    if (rc == SQLITE_OK)
        sqlite3_result_double(ctx, store_sqlite__bm25_rank(score, tool));
    else
        sqlite3_result_error_code(ctx, rc);
}

int store_sqlite_rank_register(fts5_api *api, sqlite3 *db, const int64_t *nhit)
{
    rank_conn *rc = sqlite3_malloc(sizeof *rc);
    if (rc == NULL)
        return -1;
    *rc = (rank_conn){db, nhit};
    if (api->xCreateFunction(api, "mcpage_bm25", rc, bm25_fn, sqlite3_free) != SQLITE_OK) {
        sqlite3_free(rc);
        return -1;
    }
    return store_sqlite_impact_register(api, db, NULL, NULL, NULL);
}
