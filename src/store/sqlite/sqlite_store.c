/*
 * The SQLite store backend on one SQLite connection (WAL, busy timeout,
 * cached prepared statements): what its other files share (the statement
 * cache, failures, the fixed-size SQL builder, row arrays), open, close,
 * ping, the schema check and the table of operations, whose entries live
 * in sqlite_read.c, sqlite_search.c and sqlite_write.c.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/sqlite/sqlite_internal.h"

/*
 * A reader's page cache (SQLite's default is 2 MB). SQLite reaches byte n
 * of a long text through its chain of overflow pages, one page read per
 * page before n (4 KB in stores made before SQ_NEW_PAGE_SIZE), so a
 * search page's snippets of matches 500 KB into tool outputs read about
 * 1,300 pages (5 MB) however few bytes they show; at 2 MB each call read
 * them all again (1,462 preads a call for '012345' on 1M messages). The
 * cache grows only with the pages read.
 */
#define SQ_READ_CACHE_KIB 8192
#define SQ_READ_CACHE     "PRAGMA cache_size = -8192"
/* The reader's cache, the kept lists and lengths and a walk's array together
 * (sq_cache_fit), and the cache's least between walks and during one. */
#define SQ_READ_BUDGET_KIB     9216
#define SQ_READ_FLOOR_KIB      6144
#define SQ_READ_WALK_FLOOR_KIB 2048

/*
 * The page size of a new store (SQLite's default is 4096; an existing
 * store keeps its own). A first sync writes every page to the write-ahead
 * log, reads it back at the checkpoint and writes it into the database:
 * at 4 KB pages that was about 930,000 pread/pwrite calls for the 268.7 MB
 * generated archive (651 MB of store), a quarter of the sync's CPU in the
 * kernel; at 16 KB about a quarter as many calls for the same bytes.
 * Texts and raw chunks also span a quarter as many overflow pages.
 * Queries of bench_store ran as fast (docs/performance.md); at 64 KB some
 * searches were slower (more bytes per page read).
 */
#define SQ_NEW_PAGE_SIZE "PRAGMA page_size = 16384"

/*
 * A new store gives its free pages back to the file system (issue 35):
 * `auto_vacuum = INCREMENTAL`, set before its first table like the page
 * size, and store_tidy runs `PRAGMA incremental_vacuum` once more than a
 * sixteenth of the pages are free (sqlite_write.c). A first sync of the
 * sample archive leaves 19 free pages of 174 (FTS5's merges, the writes
 * it rewrites). An existing store keeps its mode: only a VACUUM (or
 * `mcpage sync --rebuild`) changes it.
 */
#define SQ_NEW_AUTO_VACUUM "PRAGMA auto_vacuum = INCREMENTAL"

/* ---- the statement cache -------------------------------------------- */

/*
 * The failure of the statement that just failed on the connection: the
 * budget's when it stopped it; a damaged store (the file corrupt or not
 * a database: remembered, so nothing writes into it again) or a
 * read-only one with a message naming the fix; else `status` with
 * "what: SQLite's message".
 */
static int sq_fail(store *s, int status, const char *what)
{
    sq_conn *c = CONN(s);
    if (s->stopped)
        return store_budget_fail(s, s->stopped);
    int code = sqlite3_errcode(c->db) & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
        c->damaged = 1;
        store_sqlite__mark_damaged(c);
        return store_sqlite__damaged(s, c->path, sqlite3_errmsg(c->db));
    }
    if (code == SQLITE_READONLY)
        return store_sqlite__readonly(s, c->path, s->writable);
    /* one row whose text does not decode (mcpage_text, sqlite_text.c): the
     * store, not the query, and said as such, even under a search */
    if (strncmp(sqlite3_errmsg(c->db), SQ_TEXT_DAMAGED, strlen(SQ_TEXT_DAMAGED)) == 0)
        return store_fail(s, MCPAGE_ESTORE, "%s", sqlite3_errmsg(c->db));
    if (code == SQLITE_FULL) /* SQLite rolled the transaction back: what it held is not kept */
        return store_fail(s, MCPAGE_ESTORE,
                          "disk full: no room left for %s (%s); what was committed before "
                          "stays; free space on its disk, then run the command again",
                          c->path, what);
    return store_fail(s, status, "%s: %s", what, sqlite3_errmsg(c->db));
}

int sq_err(store *s, const char *what)
{
    return sq_fail(s, MCPAGE_ESTORE, what);
}

/* A search statement failed: stopped by the budget, a damaged store,
 * else the engine rejected the query. */
int sq_search_err(store *s)
{
    return sq_fail(s, MCPAGE_EPARSE, "search query rejected");
}

/*
 * SQLite calls this every SQ_PROGRESS_OPS virtual machine steps of any
 * statement on the connection, nested ones included (FTS5 reads its
 * index through statements of its own, so a prefix expansion is checked
 * too): non-zero stops the statement with SQLITE_INTERRUPT.
 */
/*
 * SQLite's process-wide settings, before its first connection: no
 * memory statistics (nothing here reads them), so an allocation takes no
 * global mutex: with a second thread (a sync's parse, docs/sync.md) every
 * mutex is a real lock. Too late when another part of the process opened
 * SQLite first (SQLITE_MISUSE): it then keeps its defaults.
 */
static pthread_once_t sq_config_once = PTHREAD_ONCE_INIT;
static void sq_config(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static int sq_progress(void *ud)
{
    store *s = ud;
    if (s->deadline_us <= 0 && s->stop == NULL)
        return 0;
    int rc = store_budget_check(s);
    if (rc < 0)
        s->stopped = rc;
    return rc < 0;
}

/*
 * A reader's page cache shares a budget with what the process keeps for
 * the next queries (the impact lists and the row lengths, sqlite_impact.c
 * and sqlite_rank.c) and with the array a list's walk fills: its bound is
 * what the budget leaves, at most SQ_READ_CACHE_KIB, at least
 * SQ_READ_FLOOR_KIB between walks (a rare word's newest page reads its
 * texts' overflow chains: 5 MB took it 3x slower, 6 MB as fast as 8 on
 * the 631 MB archive's store, docs/performance.md) and
 * SQ_READ_WALK_FLOOR_KIB while a walk runs (one per word per process).
 * When it falls, SQLite lets its least recently used pages go and
 * malloc_trim gives their memory back, which a stdio server's peak counts.
 */
int64_t store_sqlite__read_budget_kib = SQ_READ_BUDGET_KIB;

void sq_cache_fit(store *s, int64_t building)
{
    sq_conn *c = CONN(s);
    if (c->cache_kib <= 0)
        return; /* the writer's own */
    int64_t floor = building != 0 ? SQ_READ_WALK_FLOOR_KIB : SQ_READ_FLOOR_KIB, want = floor;
    if (building >= 0) { /* SQ_FIT_SCAN: the walk's floor */
        int64_t kept =
            (store_sqlite__impact_bytes() + store_sqlite__lengths_bytes() + building) / 1024;
        want = store_sqlite__read_budget_kib - kept;
        want = want < floor ? floor : want > SQ_READ_CACHE_KIB ? SQ_READ_CACHE_KIB : want;
    }
    /* a step of 256 KiB at least: a walk's growth asks often */
    if (want == c->cache_kib || (want > c->cache_kib - 256 && want < c->cache_kib + 256 &&
                                 want != SQ_READ_CACHE_KIB && want != floor))
        return;
    char sql[48];
    (void)snprintf(sql, sizeof sql, "PRAGMA cache_size = -%lld", (long long)want);
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return;
    int fell = want < c->cache_kib;
    c->cache_kib = want;
    if (fell)
        (void)malloc_trim(0);
}

void sq_cache_fit_ud(void *s, int64_t building)
{
    sq_cache_fit(s, building);
}

/* A cached statement for `sql`, reset and with its bindings cleared. */

int sq_prep(store *s, const char *sql, sqlite3_stmt **out)
{
    sq_conn *c = CONN(s);
    if (c->pend.sid && !c->pend_hold) {
        int rc = sq_pending_flush(s);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < c->ncache; i++) {
        if (strcmp(c->cache[i].sql, sql) == 0) {
            sqlite3_reset(c->cache[i].st);
            sqlite3_clear_bindings(c->cache[i].st);
            *out = c->cache[i].st;
            return 0;
        }
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return sq_err(s, "prepare");
    char *copy = store_strdup(sql);
    if (!copy) {
        sqlite3_finalize(st);
        return MCPAGE_ENOMEM;
    }
    size_t slot;
    if (c->ncache < SQ_CACHE_MAX) {
        slot = c->ncache++;
    } else {
        slot = c->evict;
        c->evict = (c->evict + 1) % SQ_CACHE_MAX;
        sqlite3_finalize(c->cache[slot].st);
        free(c->cache[slot].sql);
    }
    c->cache[slot].sql = copy;
    c->cache[slot].st = st;
    *out = st;
    return 0;
}

/* Runs a statement that returns no rows. */
int sq_done(store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sq_err(s, what);
    return 0;
}

void sq_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Column i as a malloc'd string; NULL for NULL, and for '' when `opt`. */
int sq_col_dup(sqlite3_stmt *st, int i, int opt, char **out)
{
    store_sql_row r = sq_row(st);
    return store_sql_col_dup(&r, i, opt, out);
}

/* ---- the shared SQL (store_sql.h) ---------------------------------- */

const store_sql_dialect sq_dialect = {
    .numbered = 0,             /* ? */
    .quote = 0,                /* timestamp, offset: SQLite takes them bare */
    .true_sql = "1",           /* WHERE 1 */
    .find = "instr",           /* instr(haystack, needle) */
    .groups = "mcpage_groups", /* sqlite_search.c */
};

int sq_sql_prepare(store *s, store_sql *q, sqlite3_stmt **st)
{
    if (q->overflow)
        return store_fail(s, MCPAGE_ERANGE, "generated statement too long");
    int rc = sq_prep(s, q->text, st);
    if (rc < 0)
        return rc;
    for (int i = 0; i < q->nparams; i++) {
        const store_sql_param *b = &q->params[i];
        if (b->type == STORE_KEY_INT)
            sqlite3_bind_int64(*st, i + 1, b->i);
        else if (b->type == STORE_KEY_REAL)
            sqlite3_bind_double(*st, i + 1, b->r);
        else
            sq_bind_text(*st, i + 1, b->s);
    }
    return 0;
}

static const char *row_text(void *res, int col)
{
    return (const char *)sqlite3_column_text(res, col);
}

static int64_t row_int64(void *res, int col)
{
    return sqlite3_column_int64(res, col);
}

static double row_real(void *res, int col)
{
    return sqlite3_column_double(res, col);
}

store_sql_row sq_row(sqlite3_stmt *st)
{
    return (store_sql_row){.text = row_text, .int64 = row_int64, .real = row_real, .res = st};
}

int sqlite_sql_rows(store *s, const store_sql *q, store_sql_each_fn each, void *ctx)
{
    sqlite3_stmt *st = NULL;
    CONN(s)->pend_hold += q->keeps_pending; /* sq_prep: not written first (sqlite_write.c) */
    int rc = sq_sql_prepare(s, (store_sql *)q, &st);
    CONN(s)->pend_hold -= q->keeps_pending;
    if (rc < 0)
        return rc;
    store_sql_row row = sq_row(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int r = each ? each(ctx, &row) : 0;
        if (r < 0) {
            sqlite3_reset(st);
            return r;
        }
    }
    if (rc != SQLITE_DONE) {
        rc = sq_err(s, "usage");
        sqlite3_reset(st);
        return rc;
    }
    sqlite3_reset(st);
    return 0;
}

/* Grows a row array by one zeroed row; `cap` tracks its capacity. */
void *sq_rows_grow(void *rows, size_t count, size_t *cap, size_t elem)
{
    if (count < *cap)
        return rows;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *n = realloc(rows, ncap * elem);
    if (!n)
        return NULL;
    memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
    *cap = ncap;
    return n;
}

static uint64_t keymap_hash(int64_t key, int64_t nslot)
{
    uint64_t x = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (x ^ (x >> 29)) & (uint64_t)(nslot - 1);
}

int64_t sq_keymap_get(const sq_keymap *m, int64_t key)
{
    if (m->nslot == 0)
        return -1;
    for (uint64_t h = keymap_hash(key, m->nslot); m->slot[h].at;
         h = (h + 1) & (uint64_t)(m->nslot - 1))
        if (m->slot[h].key == key)
            return m->slot[h].at - 1;
    return -1;
}

/* Puts a key it does not hold into slots with room. */
static void keymap_place(struct sq_keyslot *slot, int64_t nslot, int64_t key, int64_t at)
{
    uint64_t h = keymap_hash(key, nslot);
    while (slot[h].at)
        h = (h + 1) & (uint64_t)(nslot - 1);
    slot[h] = (struct sq_keyslot){key, at};
}

int sq_keymap_put(sq_keymap *m, int64_t key, int64_t at)
{
    if (2 * (m->n + 1) > m->nslot) {
        int64_t nslot = m->nslot ? 2 * m->nslot : 64;
        struct sq_keyslot *slot = sqlite3_malloc64((sqlite3_uint64)nslot * sizeof *slot);
        if (slot == NULL)
            return SQLITE_NOMEM;
        memset(slot, 0, (size_t)nslot * sizeof *slot);
        for (int64_t i = 0; i < m->nslot; i++)
            if (m->slot[i].at)
                keymap_place(slot, nslot, m->slot[i].key, m->slot[i].at);
        sqlite3_free(m->slot);
        m->slot = slot;
        m->nslot = nslot;
    }
    keymap_place(m->slot, m->nslot, key, at + 1);
    m->n++;
    return SQLITE_OK;
}

void sq_keymap_free(sq_keymap *m)
{
    sqlite3_free(m->slot);
    *m = (sq_keymap){0};
}

/* A count(*) statement built in q: *n, or the failure (`status_on_error`
 * MCPAGE_EPARSE: a search the engine rejected). */
int sq_count_query(store *s, store_sql *q, int64_t *n, int status_on_error)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_sql_prepare(s, q, &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (status_on_error == MCPAGE_EPARSE)
        return sq_search_err(s);
    return sq_err(s, "count");
}

/* ---- helpers of open, begin and check -------------------------------- */

int sq_exec(store *s, const char *sql)
{
    if (sqlite3_exec(CONN(s)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sq_err(s, sql);
    return 0;
}

/* A damaged store takes no more writes: the failure, or 0. */
int sq_refuse_damaged(store *s)
{
    sq_conn *c = CONN(s);
    if (c->damaged || store_sqlite__seen_damaged(c))
        return store_sqlite__damaged(s, c->path, "found damaged earlier in this process");
    return 0;
}

/*
 * PRAGMA quick_check: every page of the file read and its b-tree
 * structure checked (not the FTS index's contents), about 2 s of CPU on a
 * 540 MB store. 0 when it says "ok", else the damaged-store failure with
 * its first complaint.
 */
static int quick_check(store *s)
{
    sq_conn *c = CONN(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        return sq_err(s, "quick_check");
    int rc = sqlite3_step(st);
    char first[300] = "";
    if (rc == SQLITE_ROW) {
        /* "*** in database main ***\nOn tree page 694 ...": one line, the finding */
        const char *t = (const char *)sqlite3_column_text(st, 0);
        const char *nl = t ? strchr(t, '\n') : NULL;
        snprintf(first, sizeof first, "%s", t && strncmp(t, "***", 3) == 0 && nl ? nl + 1 : t);
        for (char *p = first; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
    sqlite3_finalize(st);
    /* the check's pages are not what the connection reads next */
    (void)sqlite3_db_release_memory(c->db);
    if (rc != SQLITE_ROW)
        return sq_err(s, "quick_check");
    if (strcmp(first, "ok") == 0)
        return 0;
    c->damaged = 1;
    store_sqlite__mark_damaged(c);
    char detail[340];
    snprintf(detail, sizeof detail, "integrity check: %s", first);
    return store_sqlite__damaged(s, c->path, detail);
}

/* ---- ping, schema check, open / close ---------------------------------- */

/* Cheap: damage seen in this process, the file's header and size, one
 * row read through the schema. */
static int sqlite_ping(store *s)
{
    sq_conn *c = CONN(s);
    int rc = sq_refuse_damaged(s);
    if (rc == 0)
        rc = store_sqlite__file_check(s, c->path, 0);
    if (rc == 0)
        rc = sq_exec(s, "SELECT value FROM meta WHERE key = 'generation'");
    return rc;
}

/*
 * The schema version a store file carries, against this build's: a
 * reader needs exactly this build's; a writer migrates an older one.
 * A database without the version table is not an mcpage store (a writer
 * accepts it only while it holds no tables: a new file).
 */
static int schema_check(store *s, int writer)
{
    sq_conn *c = CONN(s);
    int version = 0, latest = store_sqlite_schema_latest();
    if (store_sqlite_schema_version(c->db, &version) < 0)
        return sq_err(s, "reading the schema version");
    if (version == 0) {
        sqlite3_stmt *st = NULL;
        int tables = 0;
        if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            tables = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (tables == 0)
            return writer ? 0
                          : store_fail(s, MCPAGE_ENOTFOUND,
                                       "%s is empty, not an mcpage store yet: run 'mcpage sync' "
                                       "to fill it",
                                       c->path);
        return store_fail(s, MCPAGE_ENOTFOUND,
                          "%s is an SQLite database of something else, not an mcpage store: "
                          "check --db (or MCPAGE_DB); 'mcpage sync' creates a store at a path "
                          "that does not exist yet",
                          c->path);
    }
    if (version > latest)
        return store_fail(s, MCPAGE_ESTATE,
                          "the store %s has schema version %d, newer than this build of mcpage "
                          "reads (%d): upgrade mcpage",
                          c->path, version, latest);
    if (version < latest && !writer)
        return store_fail(s, MCPAGE_ESTATE,
                          "the store %s has schema version %d, older than this build reads "
                          "(%d): run 'mcpage sync' once to migrate it",
                          c->path, version, latest);
    return 0;
}

/*
 * A reader's check: nothing to read while the seal says the file was
 * found whole under a day ago and nothing has written it since (a
 * server's start, `mcpage call`, `mcpage stats` on a sealed 10 GB store
 * cost a stat, not a minute of reading); else every page, and a reader
 * that finds it whole seals the files as they were before it looked (a
 * write meanwhile leaves a seal that matches nothing).
 */
static int sqlite_check(store *s)
{
    int rc = sq_refuse_damaged(s);
    if (rc < 0)
        return rc;
    sq_conn *c = CONN(s);
    int64_t at = 0;
    if (store_sqlite__seal_fresh(c->path, 0, &at))
        return 0;
    sq_seen before;
    store_sqlite__seal_look(c->path, &before);
    at = (int64_t)time(NULL);
    if ((rc = quick_check(s)) == 0)
        store_sqlite__seal_write(c->path, at, &before);
    return rc;
}

/* ---- open / close --------------------------------------------------- */

static void sqlite_close(store *s)
{
    sq_conn *c = CONN(s);
    if (!c)
        return;
    if (c->in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t i = 0; i < c->ncache; i++) {
        sqlite3_finalize(c->cache[i].st);
        free(c->cache[i].sql);
    }
    store_sqlite_snippet_close(c->snip);
    int closed = sqlite3_close(c->db) == SQLITE_OK;
    /* a writer's file, whole when it opened, written only through SQLite */
    if (closed && c->checked_at > 0 && !c->damaged && !store_sqlite__seen_damaged(c))
        store_sqlite__seal_write(c->path, c->checked_at, NULL);
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    free(c->path);
    free(c->count_query);
    free(c->add_session);
    free(c);
    s->impl = NULL;
}

/* A tokenizer for another thread: the writer's own tokens (sqlite_snippet.c). */
static void *sq_tokenizer_new(store *s)
{
    return s->writable && CONN(s)->snip ? store_sqlite_tokenizer_new(CONN(s)->snip) : NULL;
}

static const store_ops sqlite_ops = {
    .name = "sqlite",
    .dialect = &sq_dialect,
    .sql_rows = sqlite_sql_rows,
    .close = sqlite_close,
    .projects_list = sqlite_projects_list,
    .projects_count = sqlite_projects_count,
    .sessions_list = sqlite_sessions_list,
    .sessions_count = sqlite_sessions_count,
    .session_get = sqlite_session_get,
    .messages_from = sqlite_messages_from,
    .message_get = sqlite_message_get,
    .text_lines = sqlite_text_lines,
    .raw_read = sqlite_raw_read,
    .session_summary = sqlite_session_summary,
    .search = sqlite_search,
    .search_count = sqlite_search_count,
    .activity = sqlite_activity,
    .stats = sqlite_stats,
    .generation = sqlite_generation,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .project_ensure = sqlite_project_ensure,
    .session_put = sqlite_session_put,
    .session_state = sqlite_session_state,
    .session_reset = sqlite_session_reset,
    .message_add = sqlite_message_add,
    .packs_texts = 1,
    .tokenizer_new = sq_tokenizer_new,
    .tokenizer_free = store_sqlite_tokenizer_free,
    .text_tokens = store_sqlite_text_tokens,
    .raw_append = sqlite_raw_append,
    .session_refresh = sqlite_session_refresh,
    .tool_call_name = sqlite_tool_call_name,
    .source_get = sqlite_source_get,
    .source_put = sqlite_source_put,
    .session_lock = sqlite_session_lock,
    .session_unlock = sqlite_session_unlock,
    .session_trylock = sqlite_session_trylock,
    .ping = sqlite_ping,
    .sources_all = sqlite_sources_all,
    .check = sqlite_check,
    .tidy = store_sqlite__tidy,
};

int store_sqlite_open(store *s, const char *path, int flags)
{
    if (strlen(path) > 4096)
        return store_fail(s, MCPAGE_ERANGE, "path too long");
    int64_t checked_at = 0; /* a writer: when the file was last found whole */
    sq_conn *c = calloc(1, sizeof *c);
    if (!c)
        return MCPAGE_ENOMEM;
    c->lock_fd = -1;
    c->path = store_strdup(path);
    if (!c->path) {
        free(c);
        return MCPAGE_ENOMEM;
    }
    int writer = (flags & STORE_OPEN_WRITE) != 0;
    int oflags = writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int rc = store_sqlite__file_check(s, path, writer);
    if (rc < 0)
        goto fail;
    struct stat before;
    int existed = stat(path, &before) == 0 && before.st_size > 0;
    pthread_once(&sq_config_once, sq_config);
    if (sqlite3_open_v2(path, &c->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int code = c->db ? sqlite3_errcode(c->db) : SQLITE_NOMEM;
        if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN)
            rc = store_sqlite__readonly(s, path, writer);
        else
            rc = store_fail(s, MCPAGE_EIO, "cannot open %s: %s", path,
                            c->db ? sqlite3_errmsg(c->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(c->db, 10000);
    sqlite3_extended_result_codes(c->db, 0);
    sqlite3_progress_handler(c->db, SQ_PROGRESS_OPS, sq_progress, s);
    c->rank_nhit = -1;
    if (store_sqlite_text_register(c->db) < 0) { /* every read of message text needs it */
        rc = store_fail(s, MCPAGE_ENOMEM, "cannot register mcpage_text on %s: %s", path,
                        sqlite3_errmsg(c->db));
        goto fail;
    }
    if (store_sqlite_search_register(c->db) < 0) { /* grouped searches need it */
        rc = store_fail(s, MCPAGE_ENOMEM, "cannot register mcpage_groups on %s: %s", path,
                        sqlite3_errmsg(c->db));
        goto fail;
    }
    c->own_snippet = store_sqlite_snippet_register(c->db, &c->rank_nhit, &c->snip) == 0;
    /* impact lists walk FTS5 without statement steps: they ask the budget themselves */
    if (c->own_snippet && store_sqlite__impact_budget(c->db, sq_progress, s) < 0)
        c->own_snippet = 0;
    s->impl = c;
    s->ops = &sqlite_ops;
    if (writer) {
        /* Nothing is written into a file that is damaged or not ours:
         * the whole file is checked first, unless its seal says a writer
         * found it whole, closed it, and nothing wrote it since (within
         * a day). A new file is whole. */
        checked_at = (int64_t)time(NULL);
        if (existed && (rc = sq_refuse_damaged(s)) < 0)
            goto fail_open;
        if (existed && !store_sqlite__seal_fresh(path, 1, &checked_at)) {
            checked_at = (int64_t)time(NULL);
            if ((rc = quick_check(s)) < 0)
                goto fail_open;
        }
        if (existed && (rc = schema_check(s, 1)) < 0)
            goto fail_open;
        /* Two writers opening a fresh file at once (concurrent syncs):
         * switching to WAL needs a lock the busy handler does not wait
         * for, so the loser retries for up to 5 s. */
        /* before anything is written: the first page fixes the size */
        if (!existed &&
            ((rc = sq_exec(s, SQ_NEW_PAGE_SIZE)) < 0 || (rc = sq_exec(s, SQ_NEW_AUTO_VACUUM)) < 0))
            goto fail_open;
        for (int tries = 0; tries < 50; tries++) {
            rc = sq_exec(s, "PRAGMA journal_mode = WAL");
            if (rc == 0 || sqlite3_errcode(c->db) != SQLITE_BUSY)
                break;
            usleep(100000);
        }
        if (rc < 0 || (rc = sq_exec(s, "PRAGMA synchronous = NORMAL")) < 0 ||
            (rc = sq_exec(s, "PRAGMA cache_size = -65536")) < 0)
            goto fail_open;
        char err[512] = "";
        rc = store_sqlite_migrate(c->db, err, sizeof err);
        sqlite3_progress_handler(c->db, SQ_PROGRESS_OPS, sq_progress, s); /* a step's own ended */
        if (rc < 0) {
            if (sqlite3_errcode(c->db) != SQLITE_OK && sq_fail(s, rc, err) != rc)
                rc = MCPAGE_ESTORE; /* damaged or read-only, said by sq_fail */
            else
                store_fail(s, rc, "%s", err);
            goto fail_open;
        }
    } else if ((rc = schema_check(s, 0)) < 0 || (rc = sq_exec(s, SQ_READ_CACHE)) < 0) {
        goto fail_open;
    } else {
        c->cache_kib = SQ_READ_CACHE_KIB;
    }
    c->checked_at = checked_at; /* a writer open: its close seals the file */
    return 0;
fail_open:
    sqlite_close(s);
    s->ops = NULL;
    return rc;
fail:
    sqlite3_close(c->db);
    free(c->path);
    free(c);
    return rc;
}
