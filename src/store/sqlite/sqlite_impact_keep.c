/*
 * Impact lists kept in the store, for the next process (sqlite_impact.c
 * builds them in memory; the design is in docs/store.md).
 *
 * Readers open the store read-only, so only a writer keeps lists, in two
 * tables beside the index (caches, like `message_lengths`: no migration,
 * and a store without them is read as before):
 *
 * - `impact_lists`: the whole lists a process with a writer (the sync of
 *   `mcpage serve`) built for its own queries, kept in each commit's
 *   transaction (store_sqlite__impact_save). They serve every page and
 *   several words.
 * - `impact_heads`: the first entries of each tf run of the commonest
 *   words (fts5vocab, by rows), chosen and walked by the writer when it
 *   has time (store_sqlite__impact_tidy: `mcpage sync` after its pass,
 *   `mcpage serve` after each pass of its sync thread), so the first page
 *   of any common word is read, not walked, in a fresh process, whether
 *   or not anyone searched it before. A few hundred entries a word.
 *
 * A reader without a list of a phrase loads the kept one of its
 * snapshot's text-delete count, then walks only the rows past it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impact.h"
#include "store/store_words.h"

/*
 * A list a process built is worth keeping for the next process: a server
 * started per session otherwise walks the phrase again on its first
 * query. Readers open the store read-only, so the process's own writer
 * (the sync of `mcpage serve`) keeps them, in each commit's transaction:
 * the lists of IMP_SAVE_MIN matches or more that it holds for this store,
 * new or grown, in `impact_lists` (the phrase's FTS5 text, the
 * text-delete count and last rowid it was walked at, its entries in
 * rowid order then its rank order as 4-byte indices: 20 bytes a match), at
 * most IMP_SAVED lists, the most recently saved. A reader that has no
 * list of a phrase loads the kept one of its text-delete count, then
 * walks only the rows past it. Like `message_lengths`, a cache beside
 * the index: no migration, and a store without it is read as before.
 */
#define IMP_SAVED      8
#define IMP_ENTRY_SIZE 16 /* bytes of a kept entry: rowid, tf, dl, little-endian */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* On a little-endian host an entry's memory is its kept form: copied whole. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define IMP_LE_HOST 1
#else
#define IMP_LE_HOST 0
#endif
_Static_assert(sizeof(imp_entry) == IMP_ENTRY_SIZE, "an entry is its kept form");

/* Writes n entries in their kept form. */
static void entries_put(unsigned char *p, const imp_entry *e, int64_t n)
{
    if (IMP_LE_HOST) {
        memcpy(p, e, (size_t)n * IMP_ENTRY_SIZE);
        return;
    }
    for (int64_t k = 0; k < n; k++, p += IMP_ENTRY_SIZE) {
        put_le(p, (uint64_t)e[k].id, 8);
        put_le(p + 8, e[k].tf, 4);
        put_le(p + 12, e[k].dl, 4);
    }
}

/* Writes n indices of the rank order in their kept form (little-endian). */
static void order_put(unsigned char *p, const uint32_t *o, int64_t n)
{
    if (IMP_LE_HOST) {
        memcpy(p, o, (size_t)n * sizeof *o);
        return;
    }
    for (int64_t k = 0; k < n; k++)
        put_le(p + 4 * k, o[k], 4);
}

/* Turns n indices read in their kept form into indices, in place; 0 when
 * one points past the list (a damaged blob is not loaded). */
static int order_decode(uint32_t *o, int64_t n)
{
    uint32_t bad = 0;
    for (int64_t k = 0; k < n; k++) {
        if (!IMP_LE_HOST) {
            unsigned char p[4];
            memcpy(p, &o[k], sizeof p);
            o[k] = (uint32_t)get_le(p, 4);
        }
        bad |= o[k] >= (uint64_t)n;
    }
    return !bad;
}

/* Turns n entries read in their kept form into entries, in place. */
static void entries_decode(imp_entry *e, int64_t n)
{
    for (int64_t k = 0; !IMP_LE_HOST && k < n; k++) {
        unsigned char p[IMP_ENTRY_SIZE];
        memcpy(p, &e[k], sizeof p);
        e[k] = (imp_entry){.id = (int64_t)get_le(p, 8),
                           .tf = (uint32_t)get_le(p + 8, 4),
                           .dl = (uint32_t)get_le(p + 12, 4)};
    }
}

/*
 * The row a table of kept lists (`sql`: WHERE fts = ?1 AND deletes = ?2
 * AND max_id <= ?3) holds of `key` for this snapshot's text-delete count,
 * walked up to a row this snapshot holds: the statement stepped to it,
 * for the caller to finalize; NULL when there is none.
 */
static sqlite3_stmt *kept_row(sqlite3 *db, const char *sql, const char *key, const sq_version *v,
                              int64_t vmax)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, v->deletes);
        sqlite3_bind_int64(st, 3, vmax);
        if (sqlite3_step(st) == SQLITE_ROW)
            return st;
    }
    sqlite3_finalize(st);
    return NULL;
}

/*
 * The list of `fts` the store keeps for this snapshot, or NULL. Its
 * entries are taken as they are (a damaged blob can misorder a page, not
 * read past the list): the blob must hold n entries and n indices below n.
 */
imp_list *sq_imp_load(sqlite3 *db, const char *fts, const sq_version *v, int64_t vmax)
{
    sqlite3_stmt *st = kept_row(db,
                                "SELECT rowid, max_id, n, length(entries) FROM impact_lists "
                                "WHERE fts = ?1 AND deletes = ?2 AND max_id <= ?3",
                                fts, v, vmax);
    int64_t row = 0, max_id = 0, n = 0, bytes = 0;
    int found = st != NULL;
    if (found) {
        row = sqlite3_column_int64(st, 0);
        max_id = sqlite3_column_int64(st, 1);
        n = sqlite3_column_int64(st, 2);
        bytes = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    if (!found || n < 1 || n > IMP_ENTRIES_MAX || bytes != n * (IMP_ENTRY_SIZE + 4))
        return NULL;

    /* Read straight into the list (incremental blob I/O): a blob of
     * 10 MB is not held twice. */
    imp_list *l = sqlite3_malloc(sizeof *l);
    if (l == NULL)
        return NULL;
    *l = (imp_list){.refs = 1, .v = *v, .max_id = max_id, .n = n, .total = n, .saved = n};
    l->byid = sqlite3_malloc64((sqlite3_uint64)n * sizeof *l->byid);
    l->order = sqlite3_malloc64((sqlite3_uint64)n * sizeof *l->order);
    l->fts = sqlite3_mprintf("%s", fts);
    sqlite3_blob *b = NULL;
    int rows = (int)(n * IMP_ENTRY_SIZE);
    if (l->order == NULL || l->byid == NULL || l->fts == NULL ||
        sqlite3_blob_open(db, "main", "impact_lists", "entries", row, 0, &b) != SQLITE_OK ||
        sqlite3_blob_read(b, l->byid, rows, 0) != SQLITE_OK ||
        sqlite3_blob_read(b, l->order, (int)(4 * n), rows) != SQLITE_OK) {
        sqlite3_blob_close(b);
        sq_imp_free(l);
        return NULL;
    }
    sqlite3_blob_close(b);
    entries_decode(l->byid, n);
    if (!order_decode(l->order, n) || sq_imp_groups(l) != SQLITE_OK) {
        sq_imp_free(l);
        return NULL;
    }
    return l;
}

/* Writes list `l` into `impact_lists` (the table exists). */
static int imp_save_one(store *s, const imp_list *l, int64_t deletes)
{
    size_t bytes = (size_t)(l->n * (IMP_ENTRY_SIZE + 4));
    uint32_t *sorted = NULL; /* an unranked list's order, made for the store */
    imp_entry *wide = NULL;  /* a narrow list's entries in their 16 bytes */
    const imp_entry *rows = l->byid;
    if (l->narrow) {
        wide = sqlite3_malloc64((sqlite3_uint64)(l->n ? l->n : 1) * sizeof *wide);
        if (wide == NULL)
            return MCPAGE_ENOMEM;
        for (int64_t k = 0; k < l->n; k++)
            wide[k] = imp_row(l, k);
        rows = wide;
    }
    unsigned char *blob = NULL;
    if ((IMP_UNRANKED(l) && sq_imp_sort(rows, l->n, &sorted) != SQLITE_OK) ||
        (blob = sqlite3_malloc64(bytes)) == NULL) {
        sqlite3_free(sorted);
        sqlite3_free(wide);
        return MCPAGE_ENOMEM;
    }
    entries_put(blob, rows, l->n);
    order_put(blob + l->n * IMP_ENTRY_SIZE, sorted ? sorted : l->order, l->n);
    sqlite3_free(sorted);
    sqlite3_free(wide);
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s,
                     "INSERT OR REPLACE INTO impact_lists VALUES(?, ?, ?, ?, (SELECT "
                     "coalesce(max(saved), 0) + 1 FROM impact_lists), ?)",
                     &st);
    if (rc == 0) {
        sqlite3_bind_text(st, 1, l->fts, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, deletes);
        sqlite3_bind_int64(st, 3, l->max_id);
        sqlite3_bind_int64(st, 4, l->n);
        sqlite3_bind_blob64(st, 5, blob, bytes, SQLITE_STATIC);
        rc = sq_done(s, st, "keeping impact lists");
        sqlite3_clear_bindings(st);
    }
    sqlite3_free(blob);
    return rc;
}

int store_sqlite__impact_save(store *s)
{
    sq_version v;
    if (store_sqlite__version(CONN(s)->db, &v) != SQLITE_OK)
        return sq_err(s, "reading the store's versions");
    imp_list *save[IMP_SLOTS];
    int nsave = 0;
    pthread_mutex_lock(&sq_imp_mu);
    for (int i = 0; i < IMP_SLOTS; i++) {
        imp_list *l = sq_imp_cache[i];
        if (l && l->cut == NULL && sq_imp_same_store(&l->v, &v) &&
            l->n >= store_sqlite__impact_save_min &&
            l->n >= l->saved + l->saved / 8 + (l->saved > 0)) { /* new, or grown by an eighth */
            l->refs++;
            save[nsave++] = l;
        }
    }
    pthread_mutex_unlock(&sq_imp_mu);
    if (nsave == 0)
        return 0;

    int rc = sq_exec(s, "CREATE TABLE IF NOT EXISTS impact_lists(fts TEXT PRIMARY KEY, deletes "
                        "INTEGER NOT NULL, max_id INTEGER NOT NULL, n INTEGER NOT NULL, saved "
                        "INTEGER NOT NULL, entries BLOB NOT NULL)");
    for (int i = 0; i < nsave && rc == 0; i++) {
        rc = imp_save_one(s, save[i], v.deletes);
        if (rc == 0) {
            pthread_mutex_lock(&sq_imp_mu);
            save[i]->saved = save[i]->n;
            pthread_mutex_unlock(&sq_imp_mu);
        }
    }
    /* lists of older text-delete counts, and all but the newest few, go */
    sqlite3_stmt *st = NULL;
    if (rc == 0 && (rc = sq_prep(s,
                                 "DELETE FROM impact_lists WHERE deletes != ? OR fts NOT IN "
                                 "(SELECT fts FROM impact_lists ORDER BY saved DESC LIMIT ?)",
                                 &st)) == 0) {
        sqlite3_bind_int64(st, 1, v.deletes);
        sqlite3_bind_int(st, 2, IMP_SAVED);
        rc = sq_done(s, st, "keeping impact lists");
    }
    for (int i = 0; i < nsave; i++)
        sq_imp_release(save[i]);
    return rc;
}

/* ---- the heads of the commonest words ------------------------------ */

/* Entries kept of each tf run: a first page of up to a few dozen rows
 * and the next pages by cursor read no further on the commonest words. */
int64_t store_sqlite__impact_heads_run = 64;
/* Rows a word must be in for the writer to keep its heads: below it a
 * fresh process walks the word in a few milliseconds. */
int64_t store_sqlite__impact_heads_min = 32768;
/* Words whose heads are kept at most (the most frequent first). */
#define IMP_HEADS_WORDS 256
/* Header of a heads result: matches, max_id, text-delete count, entries. */
#define IMP_HEADS_HEADER 32

void sq_imp_heads_result(sqlite3_context *ctx, const imp_list *l)
{
    int64_t kept = 0;
    for (int64_t g = 0; g < l->ngroups; g++) {
        int64_t run = l->group[g + 1] - l->group[g];
        kept += run < store_sqlite__impact_heads_run ? run : store_sqlite__impact_heads_run;
    }
    int64_t bytes = IMP_HEADS_HEADER + kept * IMP_ENTRY_SIZE + l->ngroups;
    unsigned char *p = sqlite3_malloc64((sqlite3_uint64)bytes);
    if (p == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    put_le(p, (uint64_t)l->total, 8);
    put_le(p + 8, (uint64_t)l->max_id, 8);
    put_le(p + 16, (uint64_t)l->v.deletes, 8);
    put_le(p + 24, (uint64_t)kept, 8);
    unsigned char *e = p + IMP_HEADS_HEADER, *cut = e + kept * IMP_ENTRY_SIZE;
    for (int64_t g = 0; g < l->ngroups; g++) {
        int64_t run = l->group[g + 1] - l->group[g];
        int64_t take = run < store_sqlite__impact_heads_run ? run : store_sqlite__impact_heads_run;
        for (int64_t k = l->group[g]; k < l->group[g] + take; k++, e += IMP_ENTRY_SIZE)
            entries_put(e, imp_at(l, k), 1);
        cut[g] = (unsigned char)(run > take || (l->cut && l->cut[g]));
    }
    sqlite3_result_blob64(ctx, p, (sqlite3_uint64)bytes, sqlite3_free);
}

/*
 * The heads of `fts` the store keeps for this snapshot, or NULL. The blob
 * is `kept` entries in rank order then one byte a tf run (1: cut); one of
 * any other size is not loaded.
 */
imp_list *sq_imp_load_heads(sqlite3 *db, const char *fts, const sq_version *v, int64_t vmax)
{
    /* The writer keeps the words as the tokenizer folds them: `The` is `the`. */
    char *folded = sqlite3_mprintf("%s", fts);
    for (char *c = folded; c && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    sqlite3_stmt *st = kept_row(db,
                                "SELECT max_id, n, kept, heads FROM impact_heads WHERE fts = ?1 "
                                "AND deletes = ?2 AND max_id <= ?3",
                                folded ? folded : fts, v, vmax);
    imp_list *l = NULL;
    if (st == NULL)
        goto done;
    int64_t kept = sqlite3_column_int64(st, 2);
    const unsigned char *blob = sqlite3_column_blob(st, 3);
    int64_t bytes = sqlite3_column_bytes(st, 3);
    if (blob == NULL || kept < 1 || kept > IMP_ENTRIES_MAX || bytes < kept * IMP_ENTRY_SIZE)
        goto done;
    if ((l = sqlite3_malloc(sizeof *l)) == NULL)
        goto done;
    *l = (imp_list){.refs = 1,
                    .v = *v,
                    .max_id = sqlite3_column_int64(st, 0),
                    .n = kept,
                    .total = sqlite3_column_int64(st, 1)};
    l->e = sqlite3_malloc64((sqlite3_uint64)kept * sizeof *l->e);
    l->fts = sqlite3_mprintf("%s", fts);
    if (l->e == NULL || l->fts == NULL)
        goto fail;
    memcpy(l->e, blob, (size_t)(kept * IMP_ENTRY_SIZE));
    entries_decode(l->e, kept);
    if (sq_imp_groups(l) != SQLITE_OK || bytes != kept * IMP_ENTRY_SIZE + l->ngroups ||
        (l->cut = sqlite3_malloc64((sqlite3_uint64)l->ngroups)) == NULL)
        goto fail;
    memcpy(l->cut, blob + kept * IMP_ENTRY_SIZE, (size_t)l->ngroups);
    goto done;
fail:
    sq_imp_free(l);
    l = NULL;
done:
    sqlite3_finalize(st);
    sqlite3_free(folded);
    return l;
}

/* One meta value as an integer, or `absent`. */
static int meta_int(store *s, const char *key, int64_t absent, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT value FROM meta WHERE key = ?", &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, key);
    int step = sqlite3_step(st);
    *out = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : absent;
    sqlite3_reset(st);
    return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : sq_err(s, "reading meta");
}

/* The heads of one word, walked (or extended) on `x`, in *copy
 * (sqlite3_malloc'd; NULL when no match is left or no memory). */
static int heads_walk(store *x, const char *fts, unsigned char **copy, int *bytes)
{
    sqlite3_stmt *st = NULL;
    *copy = NULL;
    *bytes = 0;
    int rc = sq_prep(x,
                     "SELECT mcpage_impact_heads(messages_fts, ?1) FROM messages_fts WHERE "
                     "messages_fts MATCH ?1 LIMIT 1",
                     &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, fts);
    int step = sqlite3_step(st);
    const unsigned char *p = step == SQLITE_ROW ? sqlite3_column_blob(st, 0) : NULL;
    int n = p ? sqlite3_column_bytes(st, 0) : 0;
    if (n > IMP_HEADS_HEADER && (*copy = sqlite3_malloc(n)) != NULL) {
        memcpy(*copy, p, (size_t)n);
        *bytes = n;
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = sq_err(x, "walking a common word");
    sqlite3_reset(st);
    return rc;
}

/* Keeps the heads heads_walk() gave of one word, in a short transaction
 * of its own. */
static int heads_put(store *s, const char *fts, const unsigned char *copy, int bytes)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_exec(s, "BEGIN IMMEDIATE");
    if (rc == 0 && (rc = sq_prep(s, "INSERT OR REPLACE INTO impact_heads VALUES(?, ?, ?, ?, ?, ?)",
                                 &st)) == 0) {
        sq_bind_text(st, 1, fts);
        sqlite3_bind_int64(st, 2, (int64_t)get_le(copy + 16, 8));
        sqlite3_bind_int64(st, 3, (int64_t)get_le(copy + 8, 8));
        sqlite3_bind_int64(st, 4, (int64_t)get_le(copy, 8));
        sqlite3_bind_int64(st, 5, (int64_t)get_le(copy + 24, 8));
        sqlite3_bind_blob(st, 6, copy + IMP_HEADS_HEADER, bytes - IMP_HEADS_HEADER, SQLITE_STATIC);
        rc = sq_done(s, st, "keeping the heads of a common word");
        sqlite3_clear_bindings(st);
    }
    rc = rc == 0 ? sq_exec(s, "COMMIT") : rc;
    if (rc < 0)
        (void)sq_exec(s, "ROLLBACK");
    return rc;
}

/* The FTS5 query of `word` as the store writes a one-word search. */
static char *word_query(const unsigned char *word)
{
    sqlite3_str *q = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(q, 1, '"');
    for (const unsigned char *c = word; *c; c++)
        sqlite3_str_appendchar(q, *c == '"' ? 2 : 1, (char)*c);
    sqlite3_str_appendchar(q, 1, '"');
    return sqlite3_str_finish(q);
}

/*
 * The FTS5 query of a search for the index term `term`, or NULL when no
 * one-word search asks for it. A word of letters only is asked for by its
 * class (`~render`, store_words.h), its exact form only when quoted; when
 * the word is its own stem its class is not indexed beside it, and the
 * search for it (`the`) asks for `"~the"`, which also matches `the`.
 */
char *store_sqlite__vocab_query(const unsigned char *term)
{
    size_t n = 0;
    while (term[n] >= 'a' && term[n] <= 'z')
        n++;
    if (term[n] != 0 || n == 0)
        return word_query(term);
    if (n > STORE_WORD_MAX) /* too long for a class: asked for as written */
        return word_query(term);
    char cls[STORE_WORD_CAP];
    cls[0] = STORE_WORD_CLASS;
    memcpy(cls + 1, term, n + 1);
    return store_word_query_self(cls, n + 1) ? word_query((const unsigned char *)cls) : NULL;
}

/*
 * The tidy's work on two connections. After a sync's pass a tidy walks
 * the whole vocabulary and the commonest words' matches, at 10 GB most
 * of a minute and a half on one core with nothing else to do. With a
 * second thread (store_second_thread) a reader connection of its own
 * takes half: ranges of the vocabulary, then words, each the next one
 * nobody took. What the writer keeps is the same as one thread's, in the
 * same order: the words are chosen from every range's counts as one
 * query orders them, and their heads are written in the words' order.
 * The reader stops when the writer's budget does.
 */
typedef struct vocab_row {
    char *term;
    int n;
    int64_t doc;
} vocab_row;

typedef struct tidy_work {
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a word's heads are done, or the reader ended */
    const char *path;     /* the store's file */
    store *r;             /* the second thread's reader; NULL: one thread */
    int r_tried;          /* it was opened, or could not be */
    pthread_t thread;
    int stop; /* the writer failed or its budget ran out (atomic) */
    /* the vocabulary, a range at a time */
    int range;       /* the next range nobody took */
    vocab_row *rows; /* the terms in store_sqlite__impact_heads_min rows or more */
    int nrows, caprows;
    /* the words, one at a time */
    char **words;
    int nwords;
    int word;              /* the next word nobody took */
    unsigned char **heads; /* each word's heads, NULL when none */
    int *bytes;            /* their sizes */
    int *state;            /* 0 not done, 1 done, else its failure */
    int reader_ended;      /* its thread took no more words */
    int reader_rc;         /* the reader's first failure, or 0 */
    char reader_err[256];  /* and what it said */
} tidy_work;

/* The vocabulary's ranges, split where the terms of a developer's text
 * fall about evenly: numbers and identifiers, words, the classes (`~`,
 * store_words.h), and every term past them (non-ASCII). */
static const char *const vocab_bounds[] = {"", "c", "g", "m", "s", "~", "~g", "~p", NULL};
#define VOCAB_RANGES ((int)(sizeof vocab_bounds / sizeof vocab_bounds[0]) - 1)

static int tidy_stopped(void *ud)
{
    return __atomic_load_n(&((tidy_work *)ud)->stop, __ATOMIC_RELAXED);
}

/* The reader's failure, said once, for the writer to report. */
static void reader_failed(tidy_work *w, store *x, int rc)
{
    if (x != w->r || rc >= 0)
        return;
    pthread_mutex_lock(&w->mu);
    if (w->reader_rc == 0) {
        w->reader_rc = rc;
        snprintf(w->reader_err, sizeof w->reader_err, "%s", store_errmsg(x));
    }
    pthread_mutex_unlock(&w->mu);
}

/* Takes ranges of the vocabulary on `x` until none is left, adding the
 * terms in enough rows to w->rows. */
static int vocab_scan(tidy_work *w, store *x)
{
    int rc = sq_exec(x, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.impact_vocab USING "
                        "fts5vocab(main, messages_fts, row)");
    sqlite3_stmt *st[2] = {NULL, NULL};
    if (rc == 0)
        rc = sq_prep(x,
                     "SELECT term, doc FROM temp.impact_vocab WHERE term >= ?2 AND term < ?3 "
                     "AND doc >= ?1",
                     &st[0]);
    if (rc == 0)
        rc = sq_prep(x, "SELECT term, doc FROM temp.impact_vocab WHERE term >= ?2 AND doc >= ?1",
                     &st[1]);
    while (rc == 0 && !tidy_stopped(w)) {
        pthread_mutex_lock(&w->mu);
        int k = w->range < VOCAB_RANGES ? w->range++ : -1;
        pthread_mutex_unlock(&w->mu);
        if (k < 0)
            break;
        sqlite3_stmt *q = st[vocab_bounds[k + 1] == NULL];
        sqlite3_bind_int64(q, 1, store_sqlite__impact_heads_min);
        sq_bind_text(q, 2, vocab_bounds[k]);
        if (vocab_bounds[k + 1])
            sq_bind_text(q, 3, vocab_bounds[k + 1]);
        int step;
        while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(q, 0);
            if (t == NULL)
                continue;
            int n = sqlite3_column_bytes(q, 0);
            char *term = sqlite3_malloc(n + 1);
            pthread_mutex_lock(&w->mu);
            if (term && w->nrows == w->caprows) {
                int cap = w->caprows ? 2 * w->caprows : 256;
                vocab_row *g = sqlite3_realloc64(w->rows, (sqlite3_uint64)cap * sizeof *g);
                if (g) {
                    w->rows = g;
                    w->caprows = cap;
                }
            }
            if (term && w->nrows < w->caprows) {
                memcpy(term, t, (size_t)n + 1);
                w->rows[w->nrows++] = (vocab_row){term, n, sqlite3_column_int64(q, 1)};
                term = NULL;
            } else {
                rc = MCPAGE_ENOMEM;
            }
            pthread_mutex_unlock(&w->mu);
            sqlite3_free(term);
        }
        if (rc == 0 && step != SQLITE_DONE)
            rc = sq_err(x, "reading the commonest words");
        sqlite3_reset(q);
    }
    sqlite3_reset(st[0]);
    sqlite3_reset(st[1]);
    reader_failed(w, x, rc);
    return rc;
}

/* The order of `SELECT term ... ORDER BY doc DESC, term`: BINARY terms. */
static int vocab_cmp(const void *pa, const void *pb)
{
    const vocab_row *a = pa, *b = pb;
    if (a->doc != b->doc)
        return a->doc > b->doc ? -1 : 1;
    int c = memcmp(a->term, b->term, (size_t)(a->n < b->n ? a->n : b->n));
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* The next word nobody took, or -1. */
static int word_take(tidy_work *w)
{
    pthread_mutex_lock(&w->mu);
    int i = w->word < w->nwords ? w->word++ : -1;
    pthread_mutex_unlock(&w->mu);
    return i;
}

/* Word i's heads (or its failure `rc`), for the writer to keep in order. */
static void word_done(tidy_work *w, int i, unsigned char *heads, int bytes, int rc)
{
    pthread_mutex_lock(&w->mu);
    w->heads[i] = heads;
    w->bytes[i] = bytes;
    w->state[i] = rc < 0 ? rc : 1;
    pthread_cond_broadcast(&w->ready);
    pthread_mutex_unlock(&w->mu);
}

/* Takes words on the reader until none is left: their heads for the
 * writer to keep. */
static int heads_take(tidy_work *w, store *x)
{
    int rc = 0;
    while (rc == 0 && !tidy_stopped(w)) {
        int i = word_take(w);
        if (i < 0)
            break;
        unsigned char *heads = NULL;
        int bytes = 0;
        rc = heads_walk(x, w->words[i], &heads, &bytes);
        reader_failed(w, x, rc);
        word_done(w, i, heads, bytes, rc);
    }
    return rc;
}

static void *vocab_main(void *arg)
{
    tidy_work *w = arg;
    (void)vocab_scan(w, w->r);
    return NULL;
}

static void *heads_main(void *arg)
{
    tidy_work *w = arg;
    (void)heads_take(w, w->r);
    pthread_mutex_lock(&w->mu);
    w->reader_ended = 1; /* the writer waits no more */
    pthread_cond_broadcast(&w->ready);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Runs `fn` on a second thread beside the writer's own share, on a
 * reader of its own (opened the first time; its page cache is not held to
 * a server's budget: a cold cache of 2 MiB walks through the file
 * system). 0 when there is no second thread: the writer does it all. */
static int reader_start(tidy_work *w, void *(*fn)(void *))
{
    if (w->r == NULL && !w->r_tried) {
        w->r_tried = 1;
        if (store_second_thread() && store_open(w->path, STORE_OPEN_READONLY, &w->r) == 0) {
            store_budget_set(w->r, 0, tidy_stopped, w);
            CONN(w->r)->cache_kib = 0;
            (void)sq_exec(w->r, "PRAGMA cache_size = -16384");
        } else {
            w->r = NULL;
        }
    }
    if (w->r == NULL)
        return 0;
    if (pthread_create(&w->thread, NULL, fn, w) == 0)
        return 1;
    store_close(w->r);
    w->r = NULL;
    return 0;
}

/* The reader's failure as the writer's, or 0 (a budget's stop is the
 * writer's own). */
static int reader_failure(tidy_work *w, store *s)
{
    pthread_mutex_lock(&w->mu);
    int rc = w->reader_rc < 0 ? store_fail(s, w->reader_rc, "%s", w->reader_err) : 0;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/*
 * The words whose heads are due, into w->words: when the rows doubled
 * since the last choice (or the text-delete count moved, or none was
 * made), the commonest words afresh (fts5vocab reads the whole index);
 * else the kept ones that fell behind by a sixteenth of the rows.
 */
static int heads_due(store *s, tidy_work *w, const sq_version *v, int64_t vmax, int *choose)
{
    int64_t at = 0, deletes = 0;
    int rc = meta_int(s, "impact_heads_max_id", 0, &at);
    if (rc == 0)
        rc = meta_int(s, "impact_heads_deletes", -1, &deletes);
    if (rc < 0)
        return rc;
    *choose = deletes != v->deletes || at <= 0 || vmax >= 2 * at;
    if ((w->words = sqlite3_malloc(IMP_HEADS_WORDS * (int)sizeof *w->words)) == NULL)
        return MCPAGE_ENOMEM;
    if (!*choose) {
        sqlite3_stmt *st = NULL;
        if ((rc = sq_prep(s,
                          "SELECT fts FROM impact_heads WHERE deletes = ?1 AND max_id < ?2 "
                          "ORDER BY n DESC LIMIT ?3",
                          &st)) < 0)
            return rc;
        sqlite3_bind_int64(st, 1, v->deletes);
        sqlite3_bind_int64(st, 2, vmax - vmax / 16);
        sqlite3_bind_int(st, 3, IMP_HEADS_WORDS);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW && w->nwords < IMP_HEADS_WORDS) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            if (t && (w->words[w->nwords] = sqlite3_mprintf("%s", t)) == NULL)
                rc = MCPAGE_ENOMEM;
            w->nwords += t && rc == 0;
        }
        sqlite3_reset(st);
        return rc;
    }

    int two = reader_start(w, vocab_main);
    rc = vocab_scan(w, s);
    if (rc < 0)
        __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
    if (two)
        pthread_join(w->thread, NULL);
    if (rc < 0 || (rc = reader_failure(w, s)) < 0)
        return rc;
    qsort(w->rows, (size_t)w->nrows, sizeof *w->rows, vocab_cmp);
    for (int k = 0; k < w->nrows && w->nwords < IMP_HEADS_WORDS; k++) {
        char *q = store_sqlite__vocab_query((const unsigned char *)w->rows[k].term);
        for (int i = 0; q && i < w->nwords; i++)
            if (strcmp(w->words[i], q) == 0) { /* `the` and `~the` both ask for "~the" */
                sqlite3_free(q);
                q = NULL;
            }
        if (q)
            w->words[w->nwords++] = q;
    }
    return 0;
}

/* Walks the due words on both connections and keeps their heads in the
 * words' order, each in a transaction of its own. */
static int heads_keep(store *s, tidy_work *w)
{
    size_t n = (size_t)(w->nwords ? w->nwords : 1);
    w->heads = sqlite3_malloc64(n * sizeof *w->heads);
    w->bytes = sqlite3_malloc64(n * sizeof *w->bytes);
    w->state = sqlite3_malloc64(n * sizeof *w->state);
    if (w->heads == NULL || w->bytes == NULL || w->state == NULL)
        return MCPAGE_ENOMEM;
    memset(w->heads, 0, n * sizeof *w->heads);
    memset(w->state, 0, n * sizeof *w->state);
    int two = w->nwords > 1 && reader_start(w, heads_main);
    int rc = 0, kept = 0;
    while (rc == 0 && kept < w->nwords) {
        int i = word_take(w);
        if (i >= 0) { /* the writer's own share */
            unsigned char *heads = NULL;
            int bytes = 0;
            if ((rc = store_budget_check(s)) < 0)
                rc = store_budget_fail(s, s->stopped = rc);
            else
                rc = heads_walk(s, w->words[i], &heads, &bytes);
            word_done(w, i, heads, bytes, rc);
        }
        /* what is done is kept, in order; else the writer waits for the reader */
        pthread_mutex_lock(&w->mu);
        int ended = 0;
        while (rc == 0 && i < 0 && kept < w->nwords && w->state[kept] == 0 &&
               !(ended = w->reader_ended))
            pthread_cond_wait(&w->ready, &w->mu);
        while (rc == 0 && kept < w->nwords && w->state[kept] != 0) {
            int state = w->state[kept];
            pthread_mutex_unlock(&w->mu);
            if (state < 0) /* the reader's: the writer's own ended the loop */
                rc = reader_failure(w, s);
            else if (w->heads[kept]) /* no match left, or no memory: nothing kept */
                rc = heads_put(s, w->words[kept], w->heads[kept], w->bytes[kept]);
            pthread_mutex_lock(&w->mu);
            kept++;
        }
        pthread_mutex_unlock(&w->mu);
        if (rc == 0 && ended && kept < w->nwords && (rc = reader_failure(w, s)) == 0)
            rc = store_fail(s, MCPAGE_ESTORE, "the tidy's second thread ended before its word");
    }
    if (rc < 0)
        __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
    if (two)
        pthread_join(w->thread, NULL);
    return rc;
}

static void tidy_work_free(tidy_work *w)
{
    for (int k = 0; k < w->nrows; k++)
        sqlite3_free(w->rows[k].term);
    sqlite3_free(w->rows);
    for (int i = 0; i < w->nwords; i++) {
        sqlite3_free(w->words[i]);
        if (w->heads)
            sqlite3_free(w->heads[i]);
    }
    sqlite3_free(w->words);
    sqlite3_free(w->heads);
    sqlite3_free(w->bytes);
    sqlite3_free(w->state);
    if (w->r)
        store_close(w->r);
    pthread_cond_destroy(&w->ready);
    pthread_mutex_destroy(&w->mu);
}

int store_sqlite__impact_tidy(store *s)
{
    sq_conn *c = CONN(s);
    sq_version v;
    int64_t vmax = 0;
    if (c->in_tx || !c->own_snippet)
        return 0; /* inside a sync's transaction, or without the store's functions */
    int rc = sq_refuse_damaged(s);
    if (rc < 0)
        return rc;
    if (store_sqlite__version(c->db, &v) != SQLITE_OK)
        return sq_err(s, "reading the store's versions");
    sqlite3_stmt *st = NULL;
    if ((rc = sq_prep(s, "SELECT coalesce(max(id), 0) FROM messages_fts_docsize", &st)) < 0)
        return rc;
    vmax = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (vmax < store_sqlite__impact_heads_min)
        return 0; /* no word is in that many rows yet */
    rc = sq_exec(s, "CREATE TABLE IF NOT EXISTS impact_heads(fts TEXT PRIMARY KEY, deletes "
                    "INTEGER NOT NULL, max_id INTEGER NOT NULL, n INTEGER NOT NULL, kept "
                    "INTEGER NOT NULL, heads BLOB NOT NULL)");
    if (rc < 0)
        return rc;

    tidy_work w = {
        .mu = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER, .path = c->path};
    /* a reader of its own for the second thread; without one the writer does it all */
    int choose = 0;
    rc = heads_due(s, &w, &v, vmax, &choose);
    if (rc == 0)
        rc = heads_keep(s, &w);
    tidy_work_free(&w);
    if (rc < 0 || !choose)
        return rc;
    /* the words chosen were kept at vmax or later; the others go */
    if ((rc = sq_exec(s, "BEGIN IMMEDIATE")) < 0)
        return rc;
    static const char *const done[] = {
        "DELETE FROM impact_heads WHERE deletes != ?1 OR max_id < ?2",
        "INSERT OR REPLACE INTO meta VALUES('impact_heads_max_id', ?2), "
        "('impact_heads_deletes', ?1)"};
    for (size_t i = 0; i < sizeof done / sizeof done[0] && rc == 0; i++) {
        if ((rc = sq_prep(s, done[i], &st)) < 0)
            break;
        sqlite3_bind_int64(st, 1, v.deletes);
        sqlite3_bind_int64(st, 2, vmax);
        rc = sq_done(s, st, "keeping the heads of common words");
    }
    rc = rc == 0 ? sq_exec(s, "COMMIT") : rc;
    if (rc < 0)
        (void)sq_exec(s, "ROLLBACK");
    return rc;
}
