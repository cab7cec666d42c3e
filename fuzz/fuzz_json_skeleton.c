/*
 * libFuzzer target for sync_json_loadb (src/sync/sync_json.c), against
 * jansson itself: the first input byte picks the flags (0 or
 * JSON_DECODE_ANY), the rest is the text. Both must accept or reject it
 * alike; accepted, the values must be equal and dump to the same bytes
 * (keys in their order); rejected, the error must read the same (text and
 * position). Seeds hold transcript lines with long strings, escapes,
 * surrogate pairs, long keys and a long string as the whole document.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_dump(json_t *a, json_t *b)
{
    size_t f = JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER;
    char *da = json_dumps(a, f), *db = json_dumps(b, f);
    int same = da && db && strcmp(da, db) == 0;
    free(da);
    free(db);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t flags = (data[0] & 1) ? JSON_DECODE_ANY : 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    json_error_t ea, eb;
    json_t *a = json_loadb(text, len, flags, &ea);
    json_t *b = sync_json_loadb(text, len, flags, &eb);
    if (!a != !b)
        abort();
    if (a && (!json_equal(a, b) || !same_dump(a, b)))
        abort();
    if (!a && (strcmp(ea.text, eb.text) != 0 || ea.position != eb.position))
        abort();
    json_decref(a);
    json_decref(b);
    return 0;
}
