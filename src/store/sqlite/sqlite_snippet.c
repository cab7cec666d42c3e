/*
 * mcpage_snippet(): FTS5's snippet() without reading the whole text.
 *
 * FTS5's own snippet() tokenizes the whole column (to score windows and
 * find sentence starts), which for a message of a megabyte (a long tool
 * output) is most of a search page's time. This one scores the windows
 * from the match positions the index already has (xInst): 1000 for each
 * phrase's first match in the window, 1 for each further one, the window
 * centred on its matches, the first best window winning; then it
 * tokenizes only up to that window's end and stops. A match near the top
 * of a large output now costs what a small message costs. What it gives
 * up is snippet()'s preference for starting at a sentence. The PostgreSQL
 * backend cuts its snippets by the same rule (pg_text.c), so both mark
 * the same spans. It takes snippet()'s arguments, so the query can fall
 * back to snippet() by name:
 *
 *   mcpage_snippet(fts_table, column, open, close, ellipsis, tokens)
 *
 * Overlapping matches are marked as one span; an ellipsis marks text left
 * out before and after; text between tokens is kept as it is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_internal.h"

#define SNIP_TOKENS_MAX  64
#define SNIP_MARK_MAX    16     /* bytes of an open/close/ellipsis string used */
#define SNIP_PHRASES_MAX 64     /* phrases told apart when scoring (more share a slot) */
#define SNIP_INST_MAX    100000 /* matches considered (a 1 MiB text has fewer tokens) */

/* One match: tokens [pos, pos + size) match phrase `phrase`. */
typedef struct snip_inst {
    int pos;    /* first token */
    int size;   /* tokens */
    int phrase; /* which phrase of the query */
} snip_inst;

/* The window being collected while the column is tokenized. */
typedef struct snip_window {
    int start;                 /* index of the window's first token */
    int end;                   /* one past its last */
    int next;                  /* index of the next token seen */
    int from[SNIP_TOKENS_MAX]; /* byte offset where each window token starts */
    int to[SNIP_TOKENS_MAX];   /* and where it ends */
    int got;                   /* window tokens collected */
    int stopped;               /* tokenizing stopped at the window's end: more text follows */
} snip_window;

static int snip_token(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    (void)tok;
    (void)ntok;
    snip_window *w = ud;
    if (flags & FTS5_TOKEN_COLOCATED)
        return SQLITE_OK; /* a synonym at the same position */
    int i = w->next++;
    if (i >= w->end) {
        w->stopped = 1;
        return SQLITE_DONE; /* stops xTokenize: the rest of the column is not read */
    }
    if (i >= w->start) {
        w->from[i - w->start] = from;
        w->to[i - w->start] = to;
        w->got = i - w->start + 1;
    }
    return SQLITE_OK;
}

/* A text argument, bounded; "" when NULL. */
static const char *snip_arg(sqlite3_value *v, int *n)
{
    const char *s = (const char *)sqlite3_value_text(v);
    *n = s ? sqlite3_value_bytes(v) : 0;
    if (*n > SNIP_MARK_MAX)
        *n = SNIP_MARK_MAX;
    return s ? s : "";
}

static void put(sqlite3_str *out, const char *s, int n)
{
    if (n > 0)
        sqlite3_str_append(out, s, n);
}

static int inst_cmp(const void *a, const void *b)
{
    const snip_inst *x = a, *y = b;
    return x->pos != y->pos ? (x->pos < y->pos ? -1 : 1)
                            : (x->size > y->size) - (x->size < y->size);
}

/* The matches in column `col`, by position; -1 without memory. */
static int snip_matches(const Fts5ExtensionApi *api, Fts5Context *fts, int col, snip_inst **out)
{
    int ninst = 0, n = 0;
    *out = NULL;
    if (api->xInstCount(fts, &ninst) != SQLITE_OK || ninst <= 0)
        return 0;
    if (ninst > SNIP_INST_MAX)
        ninst = SNIP_INST_MAX;
    snip_inst *in = sqlite3_malloc64((sqlite3_uint64)ninst * sizeof *in);
    if (in == NULL)
        return -1;
    for (int i = 0; i < ninst; i++) {
        int ph, c, off;
        if (api->xInst(fts, i, &ph, &c, &off) != SQLITE_OK || c != col)
            continue;
        int size = api->xPhraseSize(fts, ph);
        in[n++] = (snip_inst){off, size > 0 ? size : 1, ph};
    }
    qsort(in, (size_t)n, sizeof *in, inst_cmp);
    *out = in;
    return n;
}

/*
 * The first token of the best window of `want` tokens in a column of
 * `ntok` tokens (the rule of FTS5's fts5SnippetScore, without sentences).
 */
static int snip_best_start(const snip_inst *in, int n, int want, int ntok)
{
    int best = 0, best_score = -1;
    for (int i = 0; i < n; i++) {
        unsigned char seen[SNIP_PHRASES_MAX] = {0};
        int score = 0, first = in[i].pos, last = 0;
        for (int j = i; j < n && in[j].pos < in[i].pos + want; j++) {
            int slot = in[j].phrase % SNIP_PHRASES_MAX;
            score += seen[slot] ? 1 : 1000;
            seen[slot] = 1;
            last = in[j].pos + in[j].size;
        }
        if (score > best_score) {
            int a = first - (want - (last - first)) / 2;
            if (a + want > ntok)
                a = ntok - want;
            best_score = score;
            best = a > 0 ? a : 0;
        }
    }
    return best;
}

static void snippet_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                       int nval, sqlite3_value **val)
{
    if (nval != 5) {
        sqlite3_result_error(
            ctx, "mcpage_snippet takes (table, column, open, close, ellipsis, tokens)", -1);
        return;
    }
    int col = sqlite3_value_int(val[0]);
    int nopen, nclose, nell;
    const char *open = snip_arg(val[1], &nopen), *close = snip_arg(val[2], &nclose),
               *ell = snip_arg(val[3], &nell);
    int want = sqlite3_value_int(val[4]);
    want = want < 1 ? 1 : want > SNIP_TOKENS_MAX ? SNIP_TOKENS_MAX : want;
    const char *text = NULL;
    int n = 0, ntok = 0;
    int rc = api->xColumnText(fts, col, &text, &n);
    if (rc == SQLITE_OK && api->xColumnSize(fts, col, &ntok) != SQLITE_OK)
        ntok = 0;
    snip_inst *in = NULL;
    int nin = rc == SQLITE_OK ? snip_matches(api, fts, col, &in) : 0;
    if (rc != SQLITE_OK || nin < 0) {
        sqlite3_result_error_code(ctx, rc != SQLITE_OK ? rc : SQLITE_NOMEM);
        return;
    }
    snip_window w;
    memset(&w, 0, sizeof w);
    w.start = snip_best_start(in, nin, want, ntok);
    w.end = w.start + want;
    rc = text && n > 0 ? api->xTokenize(fts, text, n, &w, snip_token) : SQLITE_OK;
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        sqlite3_free(in);
        sqlite3_result_error_code(ctx, rc);
        return;
    }
    sqlite3_str *out = sqlite3_str_new(NULL);
    if (w.got > 0) {
        int end = w.start + w.got; /* one past the last token shown */
        int at = w.start > 0 ? w.from[0] : 0;
        if (w.start > 0)
            put(out, ell, nell);
        /* Marked spans: the matches inside the window, merged where they overlap. */
        for (int i = 0; i < nin; i++) {
            if (in[i].pos < w.start || in[i].pos >= end)
                continue;
            int last = in[i].pos + in[i].size - 1;
            while (i + 1 < nin && in[i + 1].pos <= last && in[i + 1].pos < end) {
                int l2 = in[i + 1].pos + in[i + 1].size - 1;
                last = l2 > last ? l2 : last;
                i++;
            }
            last = last >= end ? end - 1 : last;
            int s0 = w.from[in[i].pos - w.start], s1 = w.to[last - w.start];
            if (s0 < at)
                continue;
            put(out, text + at, s0 - at);
            put(out, open, nopen);
            put(out, text + s0, s1 - s0);
            put(out, close, nclose);
            at = s1;
        }
        int to = w.stopped ? w.to[w.got - 1] : n; /* the whole tail when the text ended */
        put(out, text + at, to - at);
        if (w.stopped)
            put(out, ell, nell);
    }
    sqlite3_free(in);
    int len = sqlite3_str_length(out);
    char *s = sqlite3_str_finish(out);
    if (s == NULL && len > 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, s ? s : "", len, s ? sqlite3_free : SQLITE_STATIC);
}

/* The FTS5 API of a connection (the documented "SELECT fts5(?1)" handshake). */
static fts5_api *fts5_api_of(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
        (void)sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return api;
}

int store_sqlite_snippet_register(sqlite3 *db)
{
    fts5_api *api = fts5_api_of(db);
    if (api == NULL || api->iVersion < 2)
        return -1;
    return api->xCreateFunction(api, "mcpage_snippet", NULL, snippet_fn, NULL) == SQLITE_OK ? 0
                                                                                            : -1;
}
