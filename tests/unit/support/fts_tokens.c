/* The FTS5 table's tokenizer beside the built-in unicode61 (fts_tokens.h). */
#include "fts_tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fts_tokens_pair_open(fts_tokens_pair *p, sqlite3 *db)
{
    static const char *args[] = {"remove_diacritics", "2", "tokenchars", "_"};
    *p = (fts_tokens_pair){0};
    fts5_api *api = store_sqlite__fts5_api(db);
    void *ud = NULL;
    if (api == NULL || api->xFindTokenizer(api, "unicode61", &ud, &p->builtin) != SQLITE_OK)
        return SQLITE_ERROR;
    int rc = p->builtin.xCreate(ud, args, 4, &p->plain);
    if (rc != SQLITE_OK)
        return rc;
    return store_sqlite__u61_open(&p->fast, &p->builtin, ud, args, 4);
}

void fts_tokens_pair_close(fts_tokens_pair *p)
{
    if (p->plain)
        p->builtin.xDelete(p->plain);
    store_sqlite__u61_close(&p->fast);
}

/* The tokens one tokenizing gave, one record each, and where it was told to stop. */
typedef struct record {
    char *buf;
    size_t len, cap;
    int seen, stop_after, stop_rc;
} record;

static int record_token(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    record *r = ud;
    size_t need = r->len + 4 * sizeof(int) + (size_t)(ntok > 0 ? ntok : 0);
    if (need > r->cap) {
        size_t cap = need * 2;
        char *b = realloc(r->buf, cap);
        if (b == NULL)
            return SQLITE_NOMEM;
        r->buf = b;
        r->cap = cap;
    }
    int head[4] = {flags, ntok, from, to};
    memcpy(r->buf + r->len, head, sizeof head);
    r->len += sizeof head;
    if (ntok > 0) {
        memcpy(r->buf + r->len, tok, (size_t)ntok);
        r->len += (size_t)ntok;
    }
    return r->seen++ == r->stop_after ? r->stop_rc : SQLITE_OK;
}

int fts_tokens_differ(fts_tokens_pair *p, const char *s, int n, char *why, size_t whylen)
{
    static const int kinds[] = {FTS5_TOKENIZE_DOCUMENT, FTS5_TOKENIZE_QUERY,
                                FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, FTS5_TOKENIZE_AUX};
    static const int stops[][2] = {
        {-1, SQLITE_OK}, {0, SQLITE_DONE}, {2, SQLITE_DONE}, {0, SQLITE_NOMEM}, {3, SQLITE_ERROR}};
    int differ = 0;
    for (size_t k = 0; !differ && k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t st = 0; !differ && st < sizeof stops / sizeof stops[0]; st++) {
            record a = {.stop_after = stops[st][0], .stop_rc = stops[st][1]};
            record b = a;
            int rca = p->builtin.xTokenize(p->plain, &a, kinds[k], s, n, record_token);
            int rcb = store_sqlite__u61_tokenize(&p->fast, &b, kinds[k], s, n, record_token);
            if (rca != rcb)
                differ = snprintf(why, whylen, "kind %d, stop %zu: result %d, built-in %d",
                                  kinds[k], st, rcb, rca) > 0;
            else if (a.seen != b.seen || a.len != b.len || (a.len && memcmp(a.buf, b.buf, a.len)))
                differ =
                    snprintf(why, whylen, "kind %d, stop %zu: %d tokens, built-in %d%s", kinds[k],
                             st, b.seen, a.seen,
                             a.seen == b.seen ? " (their text, offsets or flags differ)" : "") > 0;
            free(a.buf);
            free(b.buf);
        }
    return differ;
}
