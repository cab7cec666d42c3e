/*
 * Relevance pages of one-phrase queries without scoring every match.
 *
 * For a query of one phrase, bm25's idf is the same for every match, so
 * the order of bm25 (then rowid) is the order of the phrase's term share
 * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)). That order depends on
 * avgdl, which every sync moves; but among matches with the same tf the
 * share only falls as dl grows, whatever avgdl is. So an impact list
 * keeps a phrase's matches grouped by tf (largest first), each group by
 * (dl, rowid): a page merges the heads of the groups (a few hundred on
 * the commonest word) instead of scoring every match, and is exact for
 * any avgdl and row count. Each candidate gets the double mcpage_bm25()
 * gives (the same function computes both); candidates of equal rank are
 * put in descending rowid order (newest stored first), so pages and
 * keyset cursors are those of ORDER BY bm25, rowid DESC. The lists keep
 * each run's equal lengths by ascending rowid: a page takes all the
 * entries of one rank at once, so their order there does not matter.
 *
 *   mcpage_impact(messages_fts, fts_query, want, has_key, key_rank, key_id)
 *
 * answers, from the first match of `fts_query`, the `want` rows that
 * follow the row (key_rank, key_id) (a message id; or the first `want`
 * rows) as JSON
 * [[rowid, rank bits], ...]; mcpage_f64(bits) gives the rank back.
 *
 * A list is built by one walk of the phrase's matches (rowid and tf,
 * then each row's length) and kept per store file, shared by the
 * process's connections, like mcpage_bm25()'s row lengths: a sync's new
 * rows are walked and merged in (rows are only appended while meta
 * 'text_deletes' stays), a changed or deleted text makes the next query
 * build it again, and a connection at an older snapshot skips the rows
 * it cannot see. The first query of a phrase in a process costs one walk
 * of its matches; the next ones read the group heads and the page.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impact.h"

/* Phrases of one query at most (an AND of them). */
#define IMP_PHRASES_MAX SQ_IMPACT_PHRASES_MAX

int store_sqlite__impact_off;
int64_t store_sqlite__impact_walked;
int64_t store_sqlite__impact_loaded;
int64_t store_sqlite__impact_save_min = 4096;
int store_sqlite__heads_by_list;

/* What the functions know of their connection (user data). */
typedef struct imp_conn {
    sqlite3 *db;
    int (*stop)(void *); /* the call's budget: non-zero stops a walk, or NULL */
    void *stop_ud;
    void (*fit)(void *, int64_t); /* bounds the reader's page cache (stop_ud, bytes a walk holds) */
} imp_conn;

/* Rows a walk through FTS5 takes between two looks at the budget. */
#define IMP_STOP_ROWS 4096

pthread_mutex_t sq_imp_mu = PTHREAD_MUTEX_INITIALIZER;
imp_list *sq_imp_cache[IMP_SLOTS];
static uint64_t imp_tick;

void sq_imp_free(imp_list *l)
{
    if (l == NULL)
        return;
    sqlite3_free(l->fts);
    sqlite3_free(l->e);
    sqlite3_free(l->byid);
    sqlite3_free(l->narrow);
    sqlite3_free(l->order);
    sqlite3_free(l->group);
    sqlite3_free(l->cut);
    sqlite3_free(l);
}

void sq_imp_release(imp_list *l)
{
    if (l == NULL)
        return;
    pthread_mutex_lock(&sq_imp_mu);
    int last = --l->refs == 0;
    pthread_mutex_unlock(&sq_imp_mu);
    if (last)
        sq_imp_free(l);
}

/* The occurrences of the first phrase in the current row. */
static int imp_phrase_tf(const Fts5ExtensionApi *api, Fts5Context *fts, int64_t *tf)
{
    Fts5PhraseIter it;
    int col = 0, off = 0;
    int64_t n = 0;
    int rc = api->xPhraseFirst(fts, 0, &it, &col, &off);
    for (; rc == SQLITE_OK && col >= 0; api->xPhraseNext(fts, &it, &col, &off))
        n++;
    *tf = n;
    return rc;
}

/* mcpage_tf(messages_fts): the occurrences of the query's one phrase in the row. */
static void tf_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                  sqlite3_value **val)
{
    (void)nval;
    (void)val;
    int64_t tf = 0;
    int rc = imp_phrase_tf(api, fts, &tf);
    if (rc == SQLITE_OK)
        sqlite3_result_int64(ctx, tf);
    else
        sqlite3_result_error_code(ctx, rc);
}

/* mcpage_f64(bits): the double whose IEEE 754 bits are `bits`. */
void store_sqlite__f64(sqlite3_context *ctx, int nval, sqlite3_value **val)
{
    (void)nval;
    sqlite3_int64 bits = sqlite3_value_int64(val[0]);
    double d;
    memcpy(&d, &bits, sizeof d);
    sqlite3_result_double(ctx, d);
}

/* Grows *e (cap entries) to hold one more, by half: a walk's slack is a
 * third of its entries at most (a list is built at a query's peak). */
static int imp_grow(imp_entry **e, int64_t n, int64_t *cap)
{
    if (n < *cap)
        return SQLITE_OK;
    int64_t want = *cap ? *cap + *cap / 2 : 1024;
    imp_entry *g = sqlite3_realloc64(*e, (sqlite3_uint64)want * sizeof **e);
    if (g == NULL)
        return SQLITE_NOMEM;
    *e = g;
    *cap = want;
    return SQLITE_OK;
}

/* Appends the matches of `fts` with rowid above `after` to *e (n entries, cap). */
static int imp_walk(sqlite3 *db, const char *fts, int64_t after, imp_entry **e, int64_t *n,
                    int64_t *cap)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT rowid, mcpage_tf(messages_fts) FROM messages_fts WHERE "
                                "messages_fts MATCH ?1 AND rowid > ?2 ORDER BY rowid",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    sqlite3_bind_text(st, 1, fts, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = imp_grow(e, *n, cap)) != SQLITE_OK)
            break;
        sqlite3_int64 tf = sqlite3_column_int64(st, 1);
        (*e)[(*n)++] = (imp_entry){.id = sqlite3_column_int64(st, 0),
                                   .tf = tf > UINT32_MAX ? UINT32_MAX : (uint32_t)tf};
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Where imp_walk_phrase() appends. */
typedef struct imp_walk_to {
    const imp_conn *ic;
    imp_entry **e;
    int64_t *n, *cap;
} imp_walk_to;

/* In xQueryPhrase's callback: the row's rowid and the phrase's occurrences in it. */
static int imp_row_entry(const Fts5ExtensionApi *api, Fts5Context *fts, imp_entry *e)
{
    int64_t tf = 0;
    int rc = imp_phrase_tf(api, fts, &tf);
    *e = (imp_entry){.id = api->xRowid(fts), .tf = tf > UINT32_MAX ? UINT32_MAX : (uint32_t)tf};
    return rc;
}

/* xQueryPhrase's callback: the row's entry appended. */
static int imp_walk_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *ud)
{
    imp_walk_to *to = ud;
    /* No statement steps here, so the budget's progress handler is not
     * called: the walk asks it itself. */
    if (*to->n % IMP_STOP_ROWS == 0 && to->ic->stop && to->ic->stop(to->ic->stop_ud))
        return SQLITE_INTERRUPT;
    int64_t had = *to->cap;
    int rc = imp_grow(to->e, *to->n, to->cap);
    if (rc == SQLITE_OK && *to->cap != had && to->ic->fit)
        to->ic->fit(to->ic->stop_ud, *to->cap * (int64_t)sizeof **to->e);
    if (rc == SQLITE_OK)
        rc = imp_row_entry(api, fts, &(*to->e)[*to->n]);
    *to->n += rc == SQLITE_OK;
    return rc;
}

/* Appends every match of the query's phrase `phrase` to *e, in rowid order: FTS5
 * walks its doclist and calls back per row, with no statement stepped per
 * row (at a million messages, "the": 410M instructions by SQL). */
static int imp_walk_phrase(const Fts5ExtensionApi *api, Fts5Context *fts, int phrase, imp_entry **e,
                           int64_t *n, int64_t *cap)
{
    imp_walk_to to = {api->xUserData(fts), e, n, cap};
    return api->xQueryPhrase(fts, phrase, &to, imp_walk_row);
}

/* Row `id`'s length word (its length, and SQ_LEN_TOOL for a tool's
 * output): from mcpage_bm25()'s array, else from FTS5's docsize and the
 * message (*st prepared on first use, for the caller to finalize). */
static int imp_length_of(sqlite3 *db, const dl_snap *d, sqlite3_stmt **st, int64_t id, uint32_t *w)
{
    if ((*w = store_sqlite__length(d, id)) != 0)
        return SQLITE_OK;
    int rc = SQLITE_OK;
    if (*st == NULL && (rc = sqlite3_prepare_v2(db,
                                                "SELECT d.id, d.sz, " SQ_ROLE_TOOL
                                                " FROM messages_fts_docsize d WHERE d.id = ?",
                                                -1, st, NULL)) != SQLITE_OK)
        return rc;
    sqlite3_bind_int64(*st, 1, id);
    if ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
        *w = store_sqlite__len_word(sqlite3_column_blob(*st, 1), sqlite3_column_bytes(*st, 1),
                                    sqlite3_column_int(*st, 2));
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_CORRUPT; /* a match without a length */
    }
    sqlite3_reset(*st);
    return rc;
}

/* Entry e (its tf the phrase's occurrences) made (tf, role) and length
 * from its length word: IMP_TF. */
static void imp_entry_len(imp_entry *e, uint32_t w)
{
    uint32_t tf = e->tf > SQ_LEN(UINT32_MAX) ? SQ_LEN(UINT32_MAX) : e->tf;
    e->dl = SQ_LEN(w);
    e->tf = tf << 1 | ((w & SQ_LEN_TOOL) ? 0u : 1u);
}

/* Each entry's row length and role (its tf field made (tf, role): IMP_TF). */
static int imp_lengths(sqlite3 *db, imp_entry *e, int64_t n)
{
    dl_snap *d = store_sqlite__lengths(db, n);
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_OK;
    for (int64_t i = 0; rc == SQLITE_OK && i < n; i++) {
        uint32_t w = 0;
        if ((rc = imp_length_of(db, d, &st, e[i].id, &w)) == SQLITE_OK)
            imp_entry_len(&e[i], w);
    }
    sqlite3_finalize(st);
    store_sqlite__lengths_release(d);
    return rc;
}

/* tf field descending, then dl, then rowid: each (tf, role) run falls in rank order. */
static int imp_cmp(const void *pa, const void *pb)
{
    const imp_entry *a = pa, *b = pb;
    if (a->tf != b->tf)
        return a->tf > b->tf ? -1 : 1;
    if (a->dl != b->dl)
        return a->dl < b->dl ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* An entry in the rank sort: imp_cmp()'s key but the rowid, and where it is. */
typedef struct imp_sort_item {
    uint32_t tf_inv; /* UINT32_MAX - tf: larger tf first */
    uint32_t dl;
    uint32_t idx; /* its place in rowid order */
} imp_sort_item;

static uint64_t imp_key(const imp_sort_item *x)
{
    return ((uint64_t)x->tf_inv << 32) | x->dl;
}

/*
 * The imp_cmp() order of n entries that are in rowid order, as indices
 * into them (*order, sqlite3_malloc'd): a stable radix sort on (tf
 * descending, dl), a byte a pass, passes over bytes every entry shares
 * skipped (a walk of "the" at a million messages: glibc's qsort took
 * 298M instructions). 24 bytes a match while it runs.
 */
int sq_imp_sort(const imp_entry *byid, int64_t n, uint32_t **order)
{
    size_t bytes = (size_t)(n ? n : 1) * sizeof(imp_sort_item);
    imp_sort_item *from = sqlite3_malloc64(bytes), *to = sqlite3_malloc64(bytes);
    *order = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof **order);
    if (from == NULL || to == NULL || *order == NULL) {
        sqlite3_free(from);
        sqlite3_free(to);
        sqlite3_free(*order);
        *order = NULL;
        return SQLITE_NOMEM;
    }
    for (int64_t i = 0; i < n; i++)
        from[i] = (imp_sort_item){UINT32_MAX - byid[i].tf, byid[i].dl, (uint32_t)i};
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++)
            count[((imp_key(&from[i]) >> shift) & 0xff) + 1]++;
        int same = 0;
        for (int b = 1; b <= 256; b++)
            same |= count[b] == n;
        if (same)
            continue;
        for (int b = 1; b <= 256; b++)
            count[b] += count[b - 1];
        for (int64_t i = 0; i < n; i++)
            to[count[(imp_key(&from[i]) >> shift) & 0xff]++] = from[i];
        imp_sort_item *t = from;
        from = to;
        to = t;
    }
    for (int64_t i = 0; i < n; i++)
        (*order)[i] = from[i].idx;
    sqlite3_free(from);
    sqlite3_free(to);
    return SQLITE_OK;
}

/* Finds the runs of one tf in the rank order. */
int sq_imp_groups(imp_list *l)
{
    l->ngroups = 0;
    if (IMP_UNRANKED(l))
        return SQLITE_OK; /* no rank order, no runs */
    for (int64_t k = 0; k < l->n; k++)
        l->ngroups += k == 0 || imp_at(l, k)->tf != imp_at(l, k - 1)->tf;
    l->group = sqlite3_malloc64((sqlite3_uint64)(l->ngroups + 1) * sizeof *l->group);
    if (l->group == NULL)
        return SQLITE_NOMEM;
    int64_t g = 0;
    for (int64_t k = 0; k < l->n; k++)
        if (k == 0 || imp_at(l, k)->tf != imp_at(l, k - 1)->tf)
            l->group[g++] = k;
    l->group[g] = l->n;
    return SQLITE_OK;
}

/*
 * Drops the entries of `l` (merged from heads `base` and new rows) that
 * rank after the last kept entry of a cut run of `base`: unknown entries
 * lie between them. What stays of each run is a true prefix of it.
 */
static void imp_cut_after(imp_list *l, const imp_list *base)
{
    int64_t o = 0, g = 0;
    for (int64_t k = 0; k < l->n; k++) {
        const imp_entry *x = &l->e[k];
        while (g < base->ngroups && base->e[base->group[g]].tf > x->tf)
            g++;
        int in_cut = g < base->ngroups && base->e[base->group[g]].tf == x->tf && base->cut[g];
        if (!in_cut || imp_cmp(x, &base->e[base->group[g + 1] - 1]) <= 0)
            l->e[o++] = *x;
    }
    l->n = o;
}

/* Marks the runs of heads `l` that the runs of `base` of the same tf cut. */
static int imp_cut_runs(imp_list *l, const imp_list *base)
{
    l->cut = sqlite3_malloc64((sqlite3_uint64)(l->ngroups ? l->ngroups : 1));
    if (l->cut == NULL)
        return SQLITE_NOMEM;
    int64_t b = 0;
    for (int64_t g = 0; g < l->ngroups; g++) {
        uint32_t tf = l->e[l->group[g]].tf;
        while (b < base->ngroups && base->e[base->group[b]].tf > tf)
            b++;
        l->cut[g] = b < base->ngroups && base->e[base->group[b]].tf == tf && base->cut[b];
    }
    return SQLITE_OK;
}

/* Heads: `base`'s merged with the new rows (`add` in rowid order,
 * `add_order` their rank order), cut where base's runs were cut. */
static int imp_merge_heads(imp_list *l, const imp_list *base, const imp_entry *add,
                           const uint32_t *add_order, int64_t nadd)
{
    l->e = sqlite3_malloc64((sqlite3_uint64)(l->n ? l->n : 1) * sizeof *l->e);
    if (l->e == NULL)
        return SQLITE_NOMEM;
    int64_t i = 0, j = 0, o = 0;
    while (i < base->n && j < nadd)
        l->e[o++] =
            imp_cmp(&base->e[i], &add[add_order[j]]) <= 0 ? base->e[i++] : add[add_order[j++]];
    while (i < base->n)
        l->e[o++] = base->e[i++];
    while (j < nadd)
        l->e[o++] = add[add_order[j++]];
    imp_cut_after(l, base);
    int rc = sq_imp_groups(l);
    return rc == SQLITE_OK ? imp_cut_runs(l, base) : rc;
}

/* Bits to write v in (0 for 0). */
static int imp_bits(uint32_t v)
{
    int b = 0;
    while (b < 32 && (v >> b) != 0)
        b++;
    return b;
}

/* An unranked list's 16-byte entries without the walk's slack. */
static int imp_fit(imp_list *l)
{
    imp_entry *fit = sqlite3_realloc64(l->byid, (sqlite3_uint64)(l->n ? l->n : 1) * sizeof *fit);
    l->byid = fit ? fit : l->byid;
    return SQLITE_OK;
}

/* An unranked list in 8 bytes an entry (l->narrow, imp_row()) when every
 * entry fits (an AND of common words keeps half the memory), else in 16
 * without the walk's slack. */
static int imp_narrow(imp_list *l)
{
    uint32_t tf = 0, dl = 0;
    for (int64_t k = 0; k < l->n; k++) {
        if (l->byid[k].id < 0 || (uint64_t)l->byid[k].id > UINT32_MAX)
            return imp_fit(l);
        tf |= l->byid[k].tf;
        dl |= l->byid[k].dl;
    }
    int dl_bits = imp_bits(dl);
    if (dl_bits + imp_bits(tf) > 32)
        return imp_fit(l);
    /* In place: entry k's 8 bytes go where entry k/2 was, already read. */
    unsigned char *p = (unsigned char *)l->byid;
    for (int64_t k = 0; k < l->n; k++) {
        imp_entry e;
        memcpy(&e, p + k * (int64_t)sizeof e, sizeof e);
        uint64_t x = (uint64_t)e.id << 32 | (uint32_t)((uint64_t)e.tf << dl_bits | e.dl);
        memcpy(p + k * (int64_t)sizeof x, &x, sizeof x);
    }
    void *fit = sqlite3_realloc64(p, (sqlite3_uint64)(l->n ? l->n : 1) * sizeof(uint64_t));
    l->narrow = fit ? fit : (void *)p;
    l->byid = NULL;
    l->dl_bits = dl_bits;
    return SQLITE_OK;
}

/* A whole list: `base`'s rows (or none) then the new ones, the two rank
 * orders merged; the new rows' arrays are taken over when there is no base. */
static int imp_merge_whole(imp_list *l, const imp_list *base, imp_entry **add, uint32_t **add_order,
                           int64_t nadd)
{
    if (base == NULL) {
        l->byid = *add;
        l->order = *add_order;
        *add = NULL;
        *add_order = NULL;
        return l->order || l->byid == NULL ? sq_imp_groups(l) : imp_narrow(l);
    }
    l->byid = sqlite3_malloc64((sqlite3_uint64)(l->n ? l->n : 1) * sizeof *l->byid);
    if (l->byid == NULL)
        return SQLITE_NOMEM;
    int64_t nbase = base->n;
    if (base->narrow)
        for (int64_t k = 0; k < nbase; k++)
            l->byid[k] = imp_row(base, k);
    else
        memcpy(l->byid, base->byid, (size_t)nbase * sizeof *l->byid);
    if (nadd > 0)
        memcpy(l->byid + nbase, *add, (size_t)nadd * sizeof *l->byid);
    if (*add_order == NULL) /* unranked, like base */
        return imp_narrow(l);
    l->order = sqlite3_malloc64((sqlite3_uint64)(l->n ? l->n : 1) * sizeof *l->order);
    if (l->order == NULL)
        return SQLITE_NOMEM;
    const uint32_t *bo = base->order, *ao = *add_order;
    int64_t i = 0, j = 0, o = 0;
    while (i < nbase && j < nadd)
        l->order[o++] = imp_cmp(&base->byid[bo[i]], &(*add)[ao[j]]) <= 0
                            ? bo[i++]
                            : (uint32_t)(nbase + ao[j++]);
    while (i < nbase)
        l->order[o++] = bo[i++];
    while (j < nadd)
        l->order[o++] = (uint32_t)(nbase + ao[j++]);
    return sq_imp_groups(l);
}

/*
 * A new list of `base`'s entries (if any) and the new rows (`*add` in
 * rowid order, all past base's rows; `*add_order` their rank order), with
 * its tf runs. Heads and new rows make heads.
 */
static imp_list *imp_merge(const imp_list *base, imp_entry **add, uint32_t **add_order,
                           int64_t nadd)
{
    imp_list *l = sqlite3_malloc(sizeof *l);
    if (l == NULL)
        return NULL;
    memset(l, 0, sizeof *l);
    l->refs = 1;
    l->n = (base ? base->n : 0) + nadd;
    l->total = (base ? base->total : 0) + nadd;
    int rc = base && base->cut ? imp_merge_heads(l, base, *add, *add_order, nadd)
                               : imp_merge_whole(l, base, add, add_order, nadd);
    if (rc == SQLITE_OK)
        return l;
    sq_imp_free(l);
    return NULL;
}

int sq_imp_same_store(const sq_version *a, const sq_version *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->id == b->id && a->deletes == b->deletes;
}

/* Keeps `l` in the cache (replacing the list of its query, else the
 * least recently used) within IMP_ENTRIES_MAX; under sq_imp_mu. Returns the
 * lists let go, for the caller to release outside the lock. */
static void imp_keep(imp_list *l, imp_list **gone, int *ngone)
{
    *ngone = 0;
    if (l->n > IMP_ENTRIES_MAX)
        return;
    int slot = -1;
    for (int i = 0; i < IMP_SLOTS && slot < 0; i++)
        if (sq_imp_cache[i] && strcmp(sq_imp_cache[i]->fts, l->fts) == 0)
            slot = i;
    for (int i = 0; i < IMP_SLOTS && slot < 0; i++)
        if (sq_imp_cache[i] == NULL)
            slot = i;
    if (slot < 0) {
        slot = 0;
        for (int i = 1; i < IMP_SLOTS; i++)
            if (sq_imp_cache[i]->used < sq_imp_cache[slot]->used)
                slot = i;
    }
    if (sq_imp_cache[slot])
        gone[(*ngone)++] = sq_imp_cache[slot];
    l->refs++;
    sq_imp_cache[slot] = l;
    for (;;) { /* the oldest others go while the lists hold too many matches */
        int64_t total = 0;
        int old = -1;
        for (int i = 0; i < IMP_SLOTS; i++) {
            if (sq_imp_cache[i] == NULL)
                continue;
            total += sq_imp_cache[i]->n;
            if (i != slot && (old < 0 || sq_imp_cache[i]->used < sq_imp_cache[old]->used))
                old = i;
        }
        if (total <= IMP_ENTRIES_MAX || old < 0)
            break;
        gone[(*ngone)++] = sq_imp_cache[old];
        sq_imp_cache[old] = NULL;
    }
}

int64_t store_sqlite__impact_bytes(void)
{
    int64_t b = 0;
    pthread_mutex_lock(&sq_imp_mu);
    for (int i = 0; i < IMP_SLOTS; i++) {
        const imp_list *l = sq_imp_cache[i];
        if (l == NULL)
            continue;
        b += l->n * (int64_t)(l->narrow ? sizeof *l->narrow : sizeof *l->byid);
        b += l->order ? l->n * (int64_t)sizeof *l->order : 0;
        b += l->group ? l->ngroups * (int64_t)sizeof *l->group : 0;
    }
    pthread_mutex_unlock(&sq_imp_mu);
    return b;
}

void store_sqlite__impact_forget(void)
{
    imp_list *gone[IMP_SLOTS];
    pthread_mutex_lock(&sq_imp_mu);
    for (int i = 0; i < IMP_SLOTS; i++) {
        gone[i] = sq_imp_cache[i];
        sq_imp_cache[i] = NULL;
    }
    pthread_mutex_unlock(&sq_imp_mu);
    for (int i = 0; i < IMP_SLOTS; i++)
        sq_imp_release(gone[i]);
}

/* What imp_get() may answer and keep. */
enum {
    IMP_WHOLE = 1,    /* a whole list, not heads (several phrases, a page past the heads) */
    IMP_UNCACHED = 2, /* not from the process's cache nor into it (the writer's heads) */
    IMP_AND = 4,      /* one phrase of several: its rows by rowid suffice (IMP_UNRANKED) */
    IMP_COUNT = 8,    /* a count: a cached list without rank order will do */
    IMP_HEADS = 16    /* only the heads are wanted: a walk keeps them alone (heads_walk_phrase) */
};

/* The process's list of `fts` for snapshot `v`, or NULL; a reference for the caller. */
static imp_list *imp_cached(const char *fts, const sq_version *v, int64_t vmax, int flags)
{
    imp_list *l = NULL;
    pthread_mutex_lock(&sq_imp_mu);
    for (int i = 0; i < IMP_SLOTS && l == NULL; i++) {
        imp_list *c = sq_imp_cache[i];
        /* heads count their matches only up to their last row */
        if (c && sq_imp_same_store(&c->v, v) && strcmp(c->fts, fts) == 0 &&
            (c->cut == NULL || ((flags & IMP_WHOLE) == 0 && c->max_id <= vmax)) &&
            (!IMP_UNRANKED(c) || (flags & (IMP_AND | IMP_COUNT))))
            l = c;
    }
    if (l) {
        l->refs++;
        l->used = ++imp_tick;
    }
    pthread_mutex_unlock(&sq_imp_mu);
    return l;
}

/* The list the store keeps of `fts` (its heads first, unless a whole list
 * is needed), kept in the process's cache unless IMP_UNCACHED; or NULL. */
static imp_list *imp_kept(sqlite3 *db, const char *fts, const sq_version *v, int64_t vmax,
                          int flags)
{
    imp_list *l = (flags & IMP_WHOLE) ? NULL : sq_imp_load_heads(db, fts, v, vmax);
    if (l == NULL)
        l = sq_imp_load(db, fts, v, vmax);
    if (l == NULL)
        return NULL;
    imp_list *gone[IMP_SLOTS + 1];
    int ngone = 0;
    pthread_mutex_lock(&sq_imp_mu);
    store_sqlite__impact_loaded += l->n;
    l->used = ++imp_tick;
    if ((flags & IMP_UNCACHED) == 0)
        imp_keep(l, gone, &ngone);
    pthread_mutex_unlock(&sq_imp_mu);
    for (int i = 0; i < ngone; i++)
        sq_imp_release(gone[i]);
    return l;
}

/*
 * A word's heads in one walk, without its list: each run of one tf field
 * keeps its count and, in a max-heap by (dl, rowid), its first
 * store_sqlite__impact_heads_run entries. A walk of the whole list held
 * 16 bytes a match while it grew and 28 more while it was sorted: at
 * 10 GB 2.5M matches of one word, 150-200 MB, for the few thousand
 * entries the heads keep.
 */
typedef struct heads_run {
    uint32_t tf; /* its tf field */
    int kept;    /* entries in the heap */
    int64_t n;   /* its matches */
    imp_entry *e;
} heads_run;

typedef struct heads_walk {
    const imp_conn *ic;
    sqlite3 *db;
    dl_snap *d;
    sqlite3_stmt *len; /* a row's length that d lacks */
    int cap;           /* entries a run keeps */
    int64_t total;     /* matches */
    heads_run *run;
    int64_t nrun, caprun;
    sq_keymap at; /* a tf field to its run */
} heads_walk;

static void heads_sift(imp_entry *h, int n, int i)
{
    for (;;) {
        int big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && imp_cmp(&h[l], &h[big]) > 0)
            big = l;
        if (r < n && imp_cmp(&h[r], &h[big]) > 0)
            big = r;
        if (big == i)
            return;
        imp_entry t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

/* The run of tf field `tf`, made when new; NULL without memory. */
static heads_run *heads_run_of(heads_walk *w, uint32_t tf)
{
    int64_t i = sq_keymap_get(&w->at, tf);
    if (i >= 0)
        return &w->run[i];
    if (w->nrun == w->caprun) {
        int64_t cap = w->caprun ? 2 * w->caprun : 16;
        heads_run *g = sqlite3_realloc64(w->run, (sqlite3_uint64)cap * sizeof *g);
        if (g == NULL)
            return NULL;
        w->run = g;
        w->caprun = cap;
    }
    imp_entry *e = sqlite3_malloc64((sqlite3_uint64)w->cap * sizeof *e);
    if (e == NULL || sq_keymap_put(&w->at, tf, w->nrun) != SQLITE_OK) {
        sqlite3_free(e);
        return NULL;
    }
    w->run[w->nrun] = (heads_run){.tf = tf, .e = e};
    return &w->run[w->nrun++];
}

/* xQueryPhrase's callback: the row's entry counted in its run, and kept
 * while it is among the run's first. */
static int heads_walk_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *ud)
{
    heads_walk *w = ud;
    if (w->total % IMP_STOP_ROWS == 0 && w->ic->stop && w->ic->stop(w->ic->stop_ud))
        return SQLITE_INTERRUPT;
    imp_entry x;
    uint32_t len = 0;
    int rc = imp_row_entry(api, fts, &x);
    if (rc == SQLITE_OK)
        rc = imp_length_of(w->db, w->d, &w->len, x.id, &len);
    if (rc != SQLITE_OK)
        return rc;
    imp_entry_len(&x, len);
    heads_run *r = heads_run_of(w, x.tf);
    if (r == NULL)
        return SQLITE_NOMEM;
    w->total++;
    r->n++;
    if (r->kept < w->cap) { /* sift up */
        int i = r->kept++;
        r->e[i] = x;
        while (i > 0 && imp_cmp(&r->e[(i - 1) / 2], &r->e[i]) < 0) {
            imp_entry t = r->e[i];
            r->e[i] = r->e[(i - 1) / 2];
            r->e[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (imp_cmp(&x, &r->e[0]) < 0) {
        r->e[0] = x;
        heads_sift(r->e, r->kept, 0);
    }
    return SQLITE_OK;
}

/* Runs by tf field, descending: the rank order of runs. */
static int heads_run_cmp(const void *pa, const void *pb)
{
    const heads_run *a = pa, *b = pb;
    return (a->tf < b->tf) - (a->tf > b->tf);
}

/* The heads of phrase `phrase` at snapshot `v` (rows up to vmax) by one
 * walk, as the list sq_imp_heads_result() writes: each run's first
 * entries in rank order, cut where the run holds more. */
static int heads_walk_phrase(const Fts5ExtensionApi *api, Fts5Context *fts, int phrase,
                             const char *query, const sq_version *v, int64_t vmax, imp_list **out)
{
    const imp_conn *ic = api->xUserData(fts);
    heads_walk w = {.ic = ic,
                    .db = ic->db,
                    .cap = store_sqlite__impact_heads_run > 0 &&
                                   store_sqlite__impact_heads_run < IMP_ENTRIES_MAX
                               ? (int)store_sqlite__impact_heads_run
                               : 1};
    if (ic->fit)
        ic->fit(ic->stop_ud, 0);
    w.d = store_sqlite__lengths(w.db, IMP_ENTRIES_MAX); /* a common word's: all are loaded */
    int rc = api->xQueryPhrase(fts, phrase, &w, heads_walk_row);
    sqlite3_finalize(w.len);
    store_sqlite__lengths_release(w.d);
    imp_list *l = NULL;
    int64_t kept = 0;
    for (int64_t r = 0; r < w.nrun; r++)
        kept += w.run[r].kept;
    if (rc == SQLITE_OK && (l = sqlite3_malloc(sizeof *l)) == NULL)
        rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        *l = (imp_list){
            .refs = 1, .v = *v, .max_id = vmax, .n = kept, .total = w.total, .ngroups = w.nrun};
        l->fts = sqlite3_mprintf("%s", query);
        l->e = sqlite3_malloc64((sqlite3_uint64)(kept ? kept : 1) * sizeof *l->e);
        l->group = sqlite3_malloc64((sqlite3_uint64)(w.nrun + 1) * sizeof *l->group);
        l->cut = sqlite3_malloc64((sqlite3_uint64)(w.nrun ? w.nrun : 1));
        if (l->fts == NULL || l->e == NULL || l->group == NULL || l->cut == NULL)
            rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) {
        qsort(w.run, (size_t)w.nrun, sizeof *w.run, heads_run_cmp);
        int64_t k = 0;
        for (int64_t r = 0; r < w.nrun; r++) {
            qsort(w.run[r].e, (size_t)w.run[r].kept, sizeof *w.run[r].e, imp_cmp);
            l->group[r] = k;
            memcpy(l->e + k, w.run[r].e, (size_t)w.run[r].kept * sizeof *l->e);
            k += w.run[r].kept;
            l->cut[r] = w.run[r].n > w.run[r].kept;
        }
        l->group[w.nrun] = k;
        pthread_mutex_lock(&sq_imp_mu);
        store_sqlite__impact_walked += w.total;
        pthread_mutex_unlock(&sq_imp_mu);
        *out = l;
    } else {
        sq_imp_free(l);
    }
    for (int64_t r = 0; r < w.nrun; r++)
        sqlite3_free(w.run[r].e);
    sqlite3_free(w.run);
    sq_keymap_free(&w.at);
    return rc;
}

/*
 * The list of `fts` covering every row up to `vmax` at this connection's
 * snapshot `v`, with a reference for the caller: the cached one or the
 * kept one, that one with the rows appended since walked and merged in,
 * or a new one. Heads unless `flags` asks for IMP_WHOLE.
 */
static int imp_get(const Fts5ExtensionApi *api, Fts5Context *ctx, int phrase, sqlite3 *db,
                   const char *fts, const sq_version *v, int64_t vmax, int flags, imp_list **out)
{
    *out = NULL;
    imp_list *base = (flags & IMP_UNCACHED) ? NULL : imp_cached(fts, v, vmax, flags);
    if (base == NULL)
        base = imp_kept(db, fts, v, vmax, flags);
    if (base && base->max_id >= vmax) {
        *out = base;
        return SQLITE_OK;
    }
    if (base == NULL && api && (flags & IMP_HEADS) && !store_sqlite__heads_by_list)
        return heads_walk_phrase(api, ctx, phrase, fts, v, vmax, out);

    imp_entry *add = NULL;
    uint32_t *add_order = NULL;
    int64_t nadd = 0, cap = 0;
    const imp_conn *ic = api ? api->xUserData(ctx) : NULL;
    if (ic && ic->fit)
        ic->fit(ic->stop_ud, 0);
    /* New rows only (a sync's) by rowid; all of them through FTS5 itself. */
    int rc = base ? imp_walk(db, fts, base->max_id, &add, &nadd, &cap)
                  : imp_walk_phrase(api, ctx, phrase, &add, &nadd, &cap);
    /* One phrase of several is looked up by rowid only: no rank order
     * (28 bytes a match while it is sorted, 4 kept). A list extended
     * keeps its kind; a page of the phrase alone builds a ranked one. */
    int unranked = base ? IMP_UNRANKED(base) : (flags & IMP_AND) != 0;
    if (rc == SQLITE_OK && nadd < cap && !unranked) { /* the growth's slack goes */
        imp_entry *fit = sqlite3_realloc64(add, (sqlite3_uint64)(nadd ? nadd : 1) * sizeof *add);
        add = fit ? fit : add;
    }
    if (rc == SQLITE_OK)
        rc = imp_lengths(db, add, nadd);
    if (rc == SQLITE_OK && !unranked)
        rc = sq_imp_sort(add, nadd, &add_order);
    imp_list *l = NULL;
    if (rc == SQLITE_OK) {
        l = imp_merge(base, &add, &add_order, nadd);
        rc = l ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_free(add);
    sqlite3_free(add_order);
    if (l) {
        l->v = *v;
        l->max_id = vmax;
        l->saved = base ? base->saved : 0;
        l->fts = sqlite3_mprintf("%s", fts);
        rc = l->fts ? SQLITE_OK : SQLITE_NOMEM;
    }
    imp_list *gone[IMP_SLOTS + 1];
    int ngone = 0;
    if (rc == SQLITE_OK) {
        pthread_mutex_lock(&sq_imp_mu);
        store_sqlite__impact_walked += nadd;
        l->used = ++imp_tick;
        if ((flags & IMP_UNCACHED) == 0)
            imp_keep(l, gone, &ngone);
        pthread_mutex_unlock(&sq_imp_mu);
        *out = l;
    } else {
        sq_imp_free(l);
    }
    for (int i = 0; i < ngone; i++)
        sq_imp_release(gone[i]);
    sq_imp_release(base);
    return rc;
}

/* What a page is ranked with, at the connection's snapshot. */
typedef struct imp_rank {
    const imp_list *l;
    int64_t vmax; /* rows above it are not in the snapshot */
    int64_t nhit; /* the matches at the snapshot */
    double idf;
    double avgdl;
} imp_rank;

/* The rank mcpage_bm25() gives entry k (one phrase: -(0 + its share)). */
static double imp_score(const imp_rank *r, int64_t k)
{
    const imp_entry *e = imp_at(r->l, k);
    double score = 0.0;
    score += store_sqlite__bm25_term(r->idf, (double)IMP_TF(e), (double)e->dl, r->avgdl);
    return store_sqlite__bm25_rank(score, IMP_TOOL(e));
}

/* The first entry of group g from `k` on that the snapshot holds (or the group's end). */
static int64_t imp_visible(const imp_rank *r, int64_t g, int64_t k)
{
    int64_t end = r->l->group[g + 1];
    while (k < end && imp_at(r->l, k)->id > r->vmax)
        k++;
    return k;
}

/* A group's next candidate in the merge: its rank and position. */
typedef struct imp_head {
    double score;
    int64_t k;
    int64_t g;
} imp_head;

static void heap_push(imp_head *h, int64_t *n, imp_head x)
{
    int64_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].score > x.score) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static imp_head heap_pop(imp_head *h, int64_t *n)
{
    imp_head top = h[0], x = h[--*n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].score < h[c].score)
            c++;
        if (h[c].score >= x.score)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = x;
    return top;
}

/* Descending rowid: equal ranks go newest stored first. */
static int cmp_id_desc(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

/* The first entry of group g whose rank is at least `key` (ranks rise along a group). */
static int64_t imp_seek(const imp_rank *r, int64_t g, double key)
{
    int64_t lo = r->l->group[g], hi = r->l->group[g + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (imp_score(r, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* imp_page() of heads: the page reaches past the kept entries of a cut run. */
#define IMP_PAST_HEADS (-1)

/* Whether position k of run g is past the entries heads keep of a cut run. */
static int imp_past_heads(const imp_list *l, int64_t g, int64_t k)
{
    return l->cut && l->cut[g] && k >= l->group[g + 1];
}

/*
 * Writes the `want` rows after (key_rank, key_id) (all when !has_key) in
 * (rank, rowid descending) order to `out` as [[rowid, rank bits], ...].
 * The groups' heads are merged by rank; all candidates of one rank are
 * taken together and put in descending rowid order, since ranks may tie
 * across lengths and groups.
 * From heads: IMP_PAST_HEADS once a batch takes the last kept entry of a
 * cut run (an unknown entry may tie with it) or a key lies past one.
 */
static int imp_page(const imp_rank *r, int64_t want, int has_key, double key_rank, int64_t key_id,
                    sqlite3_str *out)
{
    const imp_list *l = r->l;
    imp_head *heap = sqlite3_malloc64((sqlite3_uint64)(l->ngroups ? l->ngroups : 1) * sizeof *heap);
    int64_t nheap = 0, nbatch = 0, batch_cap = 64, emitted = 0;
    int64_t *batch = sqlite3_malloc64((sqlite3_uint64)batch_cap * sizeof *batch);
    int rc = heap && batch ? SQLITE_OK : SQLITE_NOMEM;
    for (int64_t g = 0; rc == SQLITE_OK && g < l->ngroups; g++) {
        int64_t k = imp_visible(r, g, has_key ? imp_seek(r, g, key_rank) : l->group[g]);
        if (k < l->group[g + 1])
            heap_push(heap, &nheap, (imp_head){imp_score(r, k), k, g});
        else if (imp_past_heads(l, g, k))
            rc = IMP_PAST_HEADS;
    }
    sqlite3_str_appendchar(out, 1, '[');
    while (rc == SQLITE_OK && emitted < want && nheap > 0) {
        double rank = heap[0].score;
        nbatch = 0;
        while (rc == SQLITE_OK && nheap > 0 && heap[0].score == rank) {
            imp_head h = heap_pop(heap, &nheap);
            int64_t end = l->group[h.g + 1];
            while (h.k < end) {
                if (nbatch == batch_cap) {
                    int64_t *b =
                        sqlite3_realloc64(batch, (sqlite3_uint64)batch_cap * 2 * sizeof *batch);
                    if (b == NULL) {
                        rc = SQLITE_NOMEM;
                        break;
                    }
                    batch = b;
                    batch_cap *= 2;
                }
                batch[nbatch++] = imp_at(l, h.k)->id;
                h.k = imp_visible(r, h.g, h.k + 1);
                if (imp_past_heads(l, h.g, h.k)) {
                    rc = IMP_PAST_HEADS;
                    break;
                }
                if (h.k < end && (h.score = imp_score(r, h.k)) != rank) {
                    heap_push(heap, &nheap, h);
                    break;
                }
            }
        }
        qsort(batch, (size_t)nbatch, sizeof *batch, cmp_id_desc);
        sqlite3_int64 bits;
        memcpy(&bits, &rank, sizeof bits);
        for (int64_t i = 0; i < nbatch && emitted < want; i++) {
            if (has_key && rank == key_rank && batch[i] >= key_id)
                continue;
            sqlite3_str_appendf(out, "%s[%lld,%lld]", emitted ? "," : "", (long long)batch[i],
                                (long long)bits);
            emitted++;
        }
    }
    sqlite3_str_appendchar(out, 1, ']');
    sqlite3_free(heap);
    sqlite3_free(batch);
    return rc != SQLITE_OK ? rc : sqlite3_str_errcode(out);
}

/* The largest rowid in the index at this snapshot (0 when empty). */
static int index_max_id(sqlite3 *db, int64_t *max)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM messages_fts_docsize", -1,
                                &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *max = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/*
 * The list of the query's phrase `phrase` (whose own FTS5 query is
 * `query`) at the connection's snapshot (built, extended or reused), with
 * what bm25 ranks it with: r->l holds a reference for the caller.
 */
static int imp_open(const Fts5ExtensionApi *api, Fts5Context *fts, int phrase, const char *query,
                    int flags, imp_rank *r)
{
    sqlite3 *db = ((const imp_conn *)api->xUserData(fts))->db;
    sqlite3_int64 nrow = 0, ntoken = 0;
    int64_t vmax = 0;
    sq_version v;
    int rc = api->xRowCount(fts, &nrow);
    if (rc == SQLITE_OK)
        rc = api->xColumnTotalSize(fts, -1, &ntoken);
    if (rc == SQLITE_OK)
        rc = index_max_id(db, &vmax);
    if (rc == SQLITE_OK)
        rc = store_sqlite__version(db, &v);
    imp_list *l = NULL;
    if (rc == SQLITE_OK)
        rc = imp_get(api, fts, phrase, db, query, &v, vmax, flags, &l);
    if (rc != SQLITE_OK)
        return rc;

    /* The rows holding the phrase at this snapshot: bm25's idf (heads
     * are never newer than the snapshot, imp_cached). */
    int64_t nhit = l->total;
    if (l->max_id > vmax) { /* a whole list: its rows up to vmax, by rowid */
        int64_t lo = 0, hi = l->n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (imp_row_id(l, mid) <= vmax)
                lo = mid + 1;
            else
                hi = mid;
        }
        nhit = lo;
    }
    *r = (imp_rank){.l = l,
                    .vmax = vmax,
                    .nhit = nhit,
                    .idf = store_sqlite__bm25_idf(nrow, nhit),
                    .avgdl = (double)ntoken / (double)nrow};
    return SQLITE_OK;
}

/* A query's phrases, each with its list (several phrases: an AND of them). */
typedef struct imp_query {
    int n;                       /* phrases */
    imp_rank r[IMP_PHRASES_MAX]; /* each phrase's list and idf, in the query's order */
} imp_query;

static void imp_query_release(imp_query *q)
{
    for (int i = 0; i < q->n; i++)
        sq_imp_release((imp_list *)q->r[i].l);
    q->n = 0;
}

/*
 * The next term of an FTS5 query written as fts_query_build() writes it
 * ("a" "b c" "d"*: each term a quoted string, quotes doubled inside, then
 * an optional star), from *p: its text as its own query in term[0..cap).
 * 0 at the end of the query, -1 for anything else.
 */
static int imp_next_term(const char **p, char *term, size_t cap)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (*s == '\0')
        return 0;
    if (*s != '"')
        return -1;
    const char *t = s + 1;
    for (;; t++) {
        if (*t == '\0')
            return -1;
        if (*t == '"' && t[1] == '"')
            t++;
        else if (*t == '"')
            break;
    }
    t += 1 + (t[1] == '*');
    if ((size_t)(t - s) >= cap || (*t != ' ' && *t != '\0'))
        return -1;
    memcpy(term, s, (size_t)(t - s));
    term[t - s] = '\0';
    *p = t;
    return 1;
}

/* The lists of every phrase of `query` at the connection's snapshot:
 * whole lists for several phrases, heads allowed for one unless `flags`
 * asks for IMP_WHOLE. */
static int imp_query_open(const Fts5ExtensionApi *api, Fts5Context *fts, const char *query,
                          int flags, imp_query *q)
{
    q->n = 0;
    int nphrase = api->xPhraseCount(fts);
    if (nphrase == 1) /* any one phrase: the query is its text */
        return imp_open(api, fts, 0, query, flags, &q->r[q->n++]);
    if (nphrase < 1 || nphrase > IMP_PHRASES_MAX)
        return SQLITE_ERROR;
    char term[2 * STORE_QUERY_MAX + 16];
    const char *p = query;
    int rc = SQLITE_OK, more;
    while (rc == SQLITE_OK && (more = imp_next_term(&p, term, sizeof term)) == 1) {
        rc = q->n < nphrase ? imp_open(api, fts, q->n, term, IMP_WHOLE | IMP_AND, &q->r[q->n])
                            : SQLITE_ERROR;
        q->n += rc == SQLITE_OK;
    }
    if (rc == SQLITE_OK && (more != 0 || q->n != nphrase))
        rc = SQLITE_ERROR; /* not a query of quoted terms, one per phrase */
    if (rc != SQLITE_OK)
        imp_query_release(q);
    return rc;
}

/* The first entry of `l->byid` from `k` on whose rowid is at least `id` (galloping). */
static int64_t imp_find(const imp_list *l, int64_t k, int64_t id)
{
    int64_t step = 1, hi = k;
    while (hi < l->n && imp_row_id(l, hi) < id) {
        k = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > l->n)
        hi = l->n;
    while (k < hi) {
        int64_t mid = k + (hi - k) / 2;
        if (imp_row_id(l, mid) < id)
            k = mid + 1;
        else
            hi = mid;
    }
    return k;
}

/* A row of the page being chosen: its rank and rowid. */
typedef struct imp_hit {
    double rank;
    int64_t id;
} imp_hit;

/* (rank, rowid descending) order: a before b. */
static int hit_before(imp_hit a, imp_hit b)
{
    return a.rank < b.rank || (a.rank == b.rank && a.id > b.id);
}

/* The page so far as a heap whose top is its last row (sift down from i). */
static void hit_sift(imp_hit *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && hit_before(h[c], h[c + 1]))
            c++;
        if (!hit_before(h[i], h[c]))
            return;
        imp_hit t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

static int cmp_hit(const void *pa, const void *pb)
{
    imp_hit a = *(const imp_hit *)pa, b = *(const imp_hit *)pb;
    return hit_before(a, b) ? -1 : hit_before(b, a);
}

/*
 * Several phrases: the rows holding all of them (the rarest phrase's rows
 * in rowid order, looked up in the others' by galloping), each ranked
 * with the double mcpage_bm25() gives (the phrases' shares summed in the
 * query's order), keeping the `want` first after the key. Every row of
 * the AND is scored, from memory: no FTS5 walk, no statement. *count gets
 * the rows of the AND at the snapshot; `out` may be NULL (a count only).
 */
static int imp_multi_page(const imp_query *q, int64_t want, int has_key, double key_rank,
                          int64_t key_id, sqlite3_str *out, int64_t *count)
{
    int drive = 0;
    for (int i = 1; i < q->n; i++)
        if (q->r[i].l->n < q->r[drive].l->n)
            drive = i;
    const imp_list *dl = q->r[drive].l;
    int64_t at[IMP_PHRASES_MAX] = {0};
    uint32_t tf[IMP_PHRASES_MAX];
    int64_t cap = out && want > 0 ? want : 1, nheap = 0;
    imp_hit *heap = sqlite3_malloc64((sqlite3_uint64)cap * sizeof *heap);
    if (heap == NULL)
        return SQLITE_NOMEM;
    imp_hit key = {key_rank, key_id};
    *count = 0;
    for (int64_t k = 0; k < dl->n && imp_row_id(dl, k) <= q->r[drive].vmax; k++) {
        imp_entry row = imp_row(dl, k);
        int64_t id = row.id;
        int all = 1;
        for (int i = 0; i < q->n && all; i++) {
            at[i] = imp_find(q->r[i].l, at[i], id);
            all = at[i] < q->r[i].l->n && imp_row_id(q->r[i].l, at[i]) == id;
            if (all) {
                imp_entry e = imp_row(q->r[i].l, at[i]);
                tf[i] = IMP_TF(&e);
            }
        }
        if (!all)
            continue;
        ++*count;
        if (out == NULL || want <= 0)
            continue;
        double score = 0.0, d = (double)row.dl;
        for (int i = 0; i < q->n; i++)
            score += store_sqlite__bm25_term(q->r[i].idf, (double)tf[i], d, q->r[i].avgdl);
        imp_hit h = {store_sqlite__bm25_rank(score, IMP_TOOL(&row)), id};
        if (has_key && !hit_before(key, h))
            continue;
        if (nheap < want) { /* sift up */
            int64_t c = nheap++;
            heap[c] = h;
            while (c > 0 && hit_before(heap[(c - 1) / 2], heap[c])) {
                imp_hit t = heap[c];
                heap[c] = heap[(c - 1) / 2];
                heap[(c - 1) / 2] = t;
                c = (c - 1) / 2;
            }
        } else if (hit_before(h, heap[0])) {
            heap[0] = h;
            hit_sift(heap, nheap, 0);
        }
    }
    if (out) {
        qsort(heap, (size_t)nheap, sizeof *heap, cmp_hit);
        sqlite3_str_appendchar(out, 1, '[');
        for (int64_t i = 0; i < nheap; i++) {
            sqlite3_int64 bits;
            memcpy(&bits, &heap[i].rank, sizeof bits);
            sqlite3_str_appendf(out, "%s[%lld,%lld]", i ? "," : "", (long long)heap[i].id,
                                (long long)bits);
        }
        sqlite3_str_appendchar(out, 1, ']');
    }
    sqlite3_free(heap);
    return out ? sqlite3_str_errcode(out) : SQLITE_OK;
}

static void impact_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                      sqlite3_value **val)
{
    if (nval != 5 || sqlite3_value_text(val[0]) == NULL) {
        sqlite3_result_error(ctx, "mcpage_impact: five arguments", -1);
        return;
    }
    const char *query = (const char *)sqlite3_value_text(val[0]);
    int64_t want = sqlite3_value_int64(val[1]);
    int has_key = sqlite3_value_int(val[2]);
    double key_rank = sqlite3_value_double(val[3]);
    int64_t key_id = sqlite3_value_int64(val[4]);

    imp_query q;
    sqlite3_str *out = NULL;
    int rc = SQLITE_OK;
    for (int flags = 0; flags <= IMP_WHOLE; flags += IMP_WHOLE) { /* heads first */
        if ((rc = imp_query_open(api, fts, query, flags, &q)) != SQLITE_OK)
            break;
        sqlite3_free(sqlite3_str_finish(out));
        out = sqlite3_str_new(((const imp_conn *)api->xUserData(fts))->db);
        int64_t count = 0;
        rc = q.n == 1 ? imp_page(&q.r[0], want, has_key, key_rank, key_id, out)
                      : imp_multi_page(&q, want, has_key, key_rank, key_id, out, &count);
        imp_query_release(&q);
        if (rc != IMP_PAST_HEADS)
            break;
    }
    if (rc != SQLITE_OK) {
        sqlite3_free(sqlite3_str_finish(out));
        sqlite3_result_error_code(ctx, rc == IMP_PAST_HEADS ? SQLITE_ERROR : rc);
        return;
    }
    int len = sqlite3_str_length(out);
    char *json = sqlite3_str_finish(out);
    if (rc == SQLITE_OK && json)
        sqlite3_result_text(ctx, json, len, sqlite3_free);
    else {
        sqlite3_free(json);
        sqlite3_result_error_code(ctx, rc != SQLITE_OK ? rc : SQLITE_NOMEM);
    }
}

/* mcpage_impact_count(messages_fts, fts_query): the matches, from the lists
 * (which the page that follows the count then reads). */
static void impact_count_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                            int nval, sqlite3_value **val)
{
    if (nval != 1 || sqlite3_value_text(val[0]) == NULL) {
        sqlite3_result_error(ctx, "mcpage_impact_count: one argument", -1);
        return;
    }
    imp_query q;
    int rc = imp_query_open(api, fts, (const char *)sqlite3_value_text(val[0]), IMP_COUNT, &q);
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    int64_t count = q.r[0].nhit;
    if (q.n > 1)
        rc = imp_multi_page(&q, 0, 0, 0.0, 0, NULL, &count);
    imp_query_release(&q);
    if (rc == SQLITE_OK)
        sqlite3_result_int64(ctx, count);
    else
        sqlite3_result_error_code(ctx, rc);
}

/* mcpage_impact_heads(messages_fts, fts_query): the heads of the query's
 * one phrase at this snapshot for the writer to keep (sq_imp_heads_result):
 * the kept heads extended by the rows since, else one walk that keeps
 * only the heads (heads_walk_phrase). The process's cache is left alone,
 * so the writer's process does not hold the lists. */
static void impact_heads_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                            int nval, sqlite3_value **val)
{
    if (nval != 1 || sqlite3_value_text(val[0]) == NULL || api->xPhraseCount(fts) != 1) {
        sqlite3_result_error(ctx, "mcpage_impact_heads: one argument, one phrase", -1);
        return;
    }
    imp_rank r;
    int rc = imp_open(api, fts, 0, (const char *)sqlite3_value_text(val[0]),
                      IMP_UNCACHED | IMP_HEADS, &r);
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    sq_imp_heads_result(ctx, r.l);
    sq_imp_release((imp_list *)r.l);
}

int store_sqlite_impact_register(fts5_api *api, sqlite3 *db, int (*stop)(void *), void *stop_ud,
                                 void (*fit)(void *, int64_t))
{
    imp_conn *ic = sqlite3_malloc(sizeof *ic);
    if (ic == NULL)
        return -1;
    *ic = (imp_conn){db, stop, stop_ud, fit};
    /* Both functions share ic; the first owns it (freed with the
     * connection, or when it is registered again). */
    if (api->xCreateFunction(api, "mcpage_impact", ic, impact_fn, sqlite3_free) != SQLITE_OK) {
        sqlite3_free(ic);
        return -1;
    }
    if (api->xCreateFunction(api, "mcpage_impact_count", ic, impact_count_fn, NULL) != SQLITE_OK ||
        api->xCreateFunction(api, "mcpage_impact_heads", ic, impact_heads_fn, NULL) != SQLITE_OK ||
        api->xCreateFunction(api, "mcpage_tf", NULL, tf_fn, NULL) != SQLITE_OK ||
        sqlite3_create_function(db, "mcpage_f64", 1,
                                SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                store_sqlite__f64, NULL, NULL) != SQLITE_OK)
        return -1;
    return 0;
}

int store_sqlite__impact_budget(sqlite3 *db, int (*stop)(void *), void *stop_ud)
{
    fts5_api *api = store_sqlite__fts5_api(db);
    return api && api->iVersion >= 2
               ? store_sqlite_impact_register(api, db, stop, stop_ud, sq_cache_fit_ud)
               : -1;
}
