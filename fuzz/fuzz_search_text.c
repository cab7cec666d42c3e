/*
 * libFuzzer target: the search text code that sees user input and stored
 * transcripts, in the C the PostgreSQL backend runs without a server:
 * the query syntax (store_query_term, shared by both backends), its
 * tsquery, the tsvector of a text, and the snippet cut from that text.
 * Input: QUERY, a newline, TEXT. Nothing may read out of bounds, and a
 * snippet is never longer than its text plus the marks of 24 tokens.
 * The query with repeated terms dropped (store_query_normalize, what
 * both backends receive) is normalized already: a second pass changes
 * nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t qlen = nl ? (size_t)(nl - data) : size;
    size_t tlen = nl ? size - qlen - 1 : 0;
    char *query = malloc(qlen + 1), *text = malloc(tlen + 1);
    if (query == NULL || text == NULL)
        goto out;
    memcpy(query, data, qlen);
    query[qlen] = '\0';
    if (tlen)
        memcpy(text, nl + 1, tlen);
    text[tlen] = '\0';
    /* The shared syntax: terms lie inside the query, in order. */
    const char *p = query, *start, *end;
    int prefix;
    const char *last = query;
    while (store_query_term(&p, &start, &end, &prefix)) {
        if (start < last || end < start || end > query + qlen || p > query + qlen)
            abort();
        last = end;
    }
    static char once[2 * STORE_QUERY_MAX + 8], twice[2 * STORE_QUERY_MAX + 8];
    if (store_query_normalize(NULL, query, once, sizeof once) == 0 &&
        (store_query_normalize(NULL, once, twice, sizeof twice) != 0 || strcmp(once, twice) != 0))
        abort();
    pg_query q;
    char err[256];
    char *tsq = NULL, *tsv = NULL, *snip = NULL;
    if (store_pg_query_parse(query, &q, err, sizeof err) == 0) {
        (void)store_pg_query_tsquery(&q, &tsq);
        if (store_pg_snippet(text, &q, &snip) == 0 && snip &&
            strlen(snip) > strlen(text) + 24 * (strlen(STORE_HIT_OPEN) + strlen(STORE_HIT_CLOSE)) +
                               2 * strlen("…"))
            abort();
        store_pg_query_free(&q);
    }
    (void)store_pg_tsvector(text, &tsv);
    free(tsq);
    free(tsv);
    free(snip);
out:
    free(query);
    free(text);
    return 0;
}
