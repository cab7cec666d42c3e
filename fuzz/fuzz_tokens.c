/*
 * libFuzzer target for the token estimator: any bytes, read no further
 * than n (ASan checks the exact-size buffer libFuzzer passes), give an
 * estimate within plain bounds: at least one token for non-empty text and
 * at most two per byte plus the per-call allowance. Read as a text line of
 * tab-separated values, with the JSON array of the same values quoted
 * beside it, the parts mcpage__tokens_columns gives from one scan (when it
 * takes the record) are those of each copy scanned apart.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    /* The JSON copy: [ "v1","v2",... ] with the tabs as "," (exact size, for ASan). */
    size_t tabs = 0;
    for (size_t i = 0; i < size; i++)
        tabs += data[i] == '\t';
    size_t jn = size + 2 * tabs + 4;
    char *json = malloc(jn);
    if (json == NULL)
        return 0;
    size_t k = 0;
    json[k++] = '[';
    json[k++] = '"';
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\t') {
            memcpy(json + k, "\",\"", 3);
            k += 3;
        } else {
            json[k++] = s[i];
        }
    }
    json[k++] = '"';
    json[k++] = ']';
    tokens_part jp, tp, jp2, tp2;
    size_t jt, tt;
    if (mcpage__tokens_columns(json, jn, s, size, &jp, &jt, &tp, &tt)) {
        CHECK(jt == mcpage__tokens_part(json, jn, &jp2) &&
              tt == mcpage__tokens_part(s, size, &tp2));
        CHECK(memcmp(&jp, &jp2, sizeof jp) == 0 && memcmp(&tp, &tp2, sizeof tp) == 0);
    }
    free(json);
    return 0;
}
