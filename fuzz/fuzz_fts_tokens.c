/*
 * libFuzzer target for the FTS5 table's tokenizer (sqlite_tokenize.c):
 * any bytes, read no further than n (ASan checks the exact-size buffer
 * libFuzzer passes), give the tokens, offsets, flags and result of the
 * built-in unicode61 with the same arguments, for every kind of
 * tokenizing and when the callback stops it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../tests/unit/support/fts_tokens.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sqlite3 *db;
    static fts_tokens_pair pair;
    if (db == NULL && (sqlite3_open(":memory:", &db) != SQLITE_OK ||
                       fts_tokens_pair_open(&pair, db) != SQLITE_OK))
        __builtin_trap();
    if (size > 1 << 20)
        return 0;
    char why[256];
    if (fts_tokens_differ(&pair, (const char *)data, (int)size, why, sizeof why))
        __builtin_trap();
    return 0;
}
