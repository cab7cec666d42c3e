/*
 * What the two halves of the impact lists share: sqlite_impact.c builds
 * lists in memory, caches them per process and answers pages from them;
 * sqlite_impact_keep.c keeps them in the store for the next process (the
 * whole lists a process built, and the heads of the commonest words that
 * a writer chooses itself). The design is in docs/store.md.
 */
#ifndef MCPAGE_SQLITE_IMPACT_H
#define MCPAGE_SQLITE_IMPACT_H

#include <pthread.h>
#include <stdint.h>

#include "store/sqlite/sqlite_internal.h"

/* Matches of the lists a process holds, in all (20 bytes each: 40 MiB
 * at most). A phrase in more rows than that is walked and
 * sorted for each query, which costs more than scoring every match; at a
 * million messages no phrase has that many. */
#define IMP_ENTRIES_MAX ((int64_t)1 << 21)

/* One match of a phrase. Its memory is its kept form on a little-endian host. */
typedef struct imp_entry {
    int64_t id;  /* rowid */
    uint32_t tf; /* occurrences of the phrase in the row times 2, plus 1 unless a tool's output */
    uint32_t dl; /* the row's length in tokens */
} imp_entry;

/* The occurrences of entry e's phrase, and whether its row is a tool's
 * output (ranked at STORE_RANK_TOOL_WEIGHT). Runs of one tf field are
 * runs of one (tf, role): within each, rank rises with dl whatever avgdl
 * is, and a user's or assistant's run comes before the tool's of its tf. */
#define IMP_TF(e)   ((e)->tf >> 1)
#define IMP_TOOL(e) (((e)->tf & 1) == 0)

/*
 * A phrase's matches in rank order, (tf field descending, dl, rowid): entry k
 * is imp_at(l, k). Immutable once built. A whole list holds every match
 * in rowid order (`byid`, for several phrases) and the rank order as
 * 4-byte indices into it (`order`): 20 bytes a match. A list of heads
 * (`cut` set) holds only the first entries of each tf run, in rank order
 * (`e`; every run has at least one): the rest of a cut run ranks at or
 * after its last kept entry, so a page that never reaches that entry is
 * exact; one that does needs the whole list.
 */
typedef struct imp_list {
    int refs;           /* the cache's and each query's */
    sq_version v;       /* the file and versions it was walked at */
    char *fts;          /* the FTS5 query, the key */
    int64_t max_id;     /* every row up to this rowid was walked */
    int64_t n;          /* entries held */
    int64_t total;      /* matches up to max_id (n unless cut) */
    imp_entry *e;       /* heads: the kept matches in rank order; else NULL */
    imp_entry *byid;    /* whole: every match in rowid order; else NULL */
    uint64_t *narrow;   /* unranked, when every entry fits: byid's in 8 bytes (imp_row) */
    int dl_bits;        /* narrow: the bits of each entry's length */
    uint32_t *order;    /* whole: the rank order, as indices into byid; else NULL */
    int64_t ngroups;    /* runs of one tf */
    int64_t *group;     /* where each run starts; group[ngroups] == n */
    unsigned char *cut; /* heads only: 1 for a run holding more matches than kept; else NULL */
    uint64_t used;      /* when a query last took it (eviction) */
    int64_t saved;      /* entries the store keeps of it (impact_lists), under sq_imp_mu */
} imp_list;

/* A whole list built for one phrase of several (an AND): its rows by
 * rowid only, no rank order and no runs (imp_at() does not apply). */
#define IMP_UNRANKED(l)                                                                            \
    ((l)->order == NULL && (l)->e == NULL && ((l)->byid != NULL || (l)->narrow != NULL))

/* Entry k of a whole list in rowid order. An unranked list whose rowids
 * fit 32 bits and whose tf fields and lengths fit 32 bits together keeps
 * each entry in 8 bytes (`narrow`): rowid << 32 | tf << dl_bits | dl. */
static inline imp_entry imp_row(const imp_list *l, int64_t k)
{
    if (l->narrow == NULL)
        return l->byid[k];
    uint64_t x = l->narrow[k];
    uint32_t low = (uint32_t)x, mask = (uint32_t)((1ull << l->dl_bits) - 1);
    return (imp_entry){
        .id = (int64_t)(x >> 32), .tf = (uint32_t)((uint64_t)low >> l->dl_bits), .dl = low & mask};
}

/* The rowid of entry k of a whole list in rowid order. */
static inline int64_t imp_row_id(const imp_list *l, int64_t k)
{
    return l->narrow ? (int64_t)(l->narrow[k] >> 32) : l->byid[k].id;
}

/* Entry k of `l` in rank order. */
static inline const imp_entry *imp_at(const imp_list *l, int64_t k)
{
    return l->order ? &l->byid[l->order[k]] : &l->e[k];
}

/* The process's lists: the lock over the cache and every list's refs and saved. */
extern pthread_mutex_t sq_imp_mu;
#define IMP_SLOTS 16
extern imp_list *sq_imp_cache[IMP_SLOTS];

void sq_imp_free(imp_list *l);
void sq_imp_release(imp_list *l);
/* The rank order of n entries in rowid order, as indices into them
 * (*order, sqlite3_malloc'd); an SQLite result code. */
int sq_imp_sort(const imp_entry *byid, int64_t n, uint32_t **order);
/* Finds the runs of one tf in l->e (sorted); an SQLite result code. */
int sq_imp_groups(imp_list *l);
/* The same file at the same text-delete count (rows only appended since). */
int sq_imp_same_store(const sq_version *a, const sq_version *b);

/* The whole list of `fts` the store keeps for this snapshot (walked up to
 * a row it holds), or NULL. */
imp_list *sq_imp_load(sqlite3 *db, const char *fts, const sq_version *v, int64_t vmax);
/* The heads of `fts` the store keeps for this snapshot, or NULL. */
imp_list *sq_imp_load_heads(sqlite3 *db, const char *fts, const sq_version *v, int64_t vmax);
/* The heads of list `l` (at most store_sqlite__impact_heads_run a run) in their kept form, as
 * the result of mcpage_impact_heads(): a header of four little-endian
 * int64s (matches, max_id, text-delete count, entries kept), the entries,
 * then one byte a run (1: cut). */
void sq_imp_heads_result(sqlite3_context *ctx, const imp_list *l);

#endif
