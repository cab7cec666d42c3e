/*
 * libFuzzer target for the token estimator: any bytes, read no further
 * than n (ASan checks the exact-size buffer libFuzzer passes), give an
 * estimate within plain bounds: at least one token for non-empty text and
 * at most two per byte plus the per-call allowance.
 */
#include <stddef.h>
#include <stdint.h>

#include "page/tokens.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t all = mcpage__tokens_estimate(s, size);
    CHECK(size == 0 ? all == 0 : all >= 1);
    CHECK(all <= 2 * size + 3);
    return 0;
}
