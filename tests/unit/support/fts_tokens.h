/*
 * The FTS5 table's tokenizer (sqlite_tokenize.c) beside the built-in
 * unicode61 with the same arguments, for test_fts_tokens and
 * fuzz_fts_tokens: the tokens each gives of the same bytes.
 */
#ifndef MCPAGE_TEST_FTS_TOKENS_H
#define MCPAGE_TEST_FTS_TOKENS_H

#include <stddef.h>

#include "store/sqlite/sqlite_internal.h"

typedef struct fts_tokens_pair {
    fts5_tokenizer builtin;
    Fts5Tokenizer *plain; /* the built-in */
    sq_u61 fast;          /* sqlite_tokenize.c's */
} fts_tokens_pair;

/* Both with the table's arguments, from db's FTS5 (before anything registers another
 * unicode61 on it); an SQLite result code. */
int fts_tokens_pair_open(fts_tokens_pair *p, sqlite3 *db);
void fts_tokens_pair_close(fts_tokens_pair *p);
/*
 * 0 when both give s[0..n) the same tokens (text, offsets, flags) and
 * result, for every kind of tokenizing and when the callback stops them
 * (SQLITE_DONE or an error after a few tokens); else 1, with the first
 * difference in why.
 */
int fts_tokens_differ(fts_tokens_pair *p, const char *s, int n, char *why, size_t whylen);

#endif
