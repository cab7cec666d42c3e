/*
 * libFuzzer target for the JSON writer. Any bytes, written by jw as a
 * string, as an object key and inside a structure, must parse back with
 * jansson to exactly the input with each invalid UTF-8 byte replaced by
 * U+FFFD (checked against a separate decoder written from Unicode's table
 * of well-formed sequences), with exact counts and within the byte limit.
 * Input that jansson parses as JSON must survive jw_json unchanged.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mcpage/mcpage.h>

#include "page/jw.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Length of the well-formed sequence at s[0..n) (Unicode table 3-7), or 0. */
static size_t well_formed(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c <= 0x7F)
        return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c == 0xE0)
        len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        len = 3;
    else if (c == 0xED)
        len = 3, hi = 0x9F;
    else if (c == 0xF0)
        len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
        len = 4;
    else if (c == 0xF4)
        len = 4, hi = 0x8F;
    else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Writes the repaired form of s into out (3 * n bytes); returns its length. */
static size_t repair(const uint8_t *s, size_t n, uint8_t *out, size_t *bad)
{
    size_t o = 0;
    *bad = 0;
    for (size_t i = 0; i < n;) {
        size_t len = well_formed(s + i, n - i);
        if (len == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            (*bad)++;
            i++;
        } else {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        }
    }
    return o;
}

static void check_counts(const jw *w)
{
    size_t cps = 0, units = 0;
    for (size_t i = 0; i < w->len; i++) {
        uint8_t c = (uint8_t)w->buf[i];
        if ((c & 0xC0) != 0x80)
            cps++, units++;
        if (c >= 0xF0)
            units++;
    }
    CHECK(cps == w->codepoints && units == w->utf16);
}

static int depth_of(const json_t *v)
{
    int d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            int e = depth_of(x);
            d = e > d ? e : d;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            int e = depth_of(x);
            d = e > d ? e : d;
        }
        return d + 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fixed = malloc(3 * size + 1);
    CHECK(fixed != NULL);
    size_t bad;
    size_t flen = repair(data, size, fixed, &bad);

    /* 1. The whole input as one string. */
    jw w;
    jw_init(&w, 0);
    jw_stringn(&w, (const char *)data, size);
    CHECK(w.err == 0 && w.repaired == bad);
    check_counts(&w);
    json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    CHECK(v != NULL && json_is_string(v));
    CHECK(json_string_length(v) == flen && memcmp(json_string_value(v), fixed, flen) == 0);
    json_decref(v);
    size_t cps, units;
    jw_measure_utf8((const char *)data, size, &cps, &units);
    /* jw_measure_utf8 counts the decoded (repaired) text, not the escapes. */
    size_t want_cps = 0, want_units = 0;
    for (size_t i = 0; i < flen; i++) {
        if ((fixed[i] & 0xC0) != 0x80)
            want_cps++, want_units++;
        if (fixed[i] >= 0xF0)
            want_units++;
    }
    CHECK(cps == want_cps && units == want_units);

    /* 2. A structure: the first half as a key, the rest as a value. */
    size_t half = size / 2;
    size_t kbad;
    size_t klen = repair(data, half, fixed, &kbad);
    jw_reset(&w);
    jw_object_begin(&w);
    jw_keyn(&w, (const char *)data, half);
    jw_array_begin(&w);
    jw_stringn(&w, (const char *)data + half, size - half);
    jw_int(&w, (int64_t)size * (half % 2 ? -1 : 1));
    jw_double(&w, (double)size / 3.0);
    jw_null(&w);
    jw_array_end(&w);
    jw_object_end(&w);
    CHECK(w.err == 0 && w.depth == 0);
    check_counts(&w);
    v = json_loadb(w.buf, w.len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, NULL);
    /* jansson's parser refuses U+0000 in keys; jw may write one. */
    if (memchr(fixed, 0, klen) == NULL) {
        CHECK(v != NULL && json_object_size(v) == 1);
        json_t *arr = json_object_getn(v, (const char *)fixed, klen);
        CHECK(arr != NULL && json_array_size(arr) == 4);
        CHECK(json_integer_value(json_array_get(arr, 1)) == (json_int_t)size * (half % 2 ? -1 : 1));
        CHECK(json_real_value(json_array_get(arr, 2)) == (double)size / 3.0);
        size_t vlen = repair(data + half, size - half, fixed, &kbad);
        json_t *s = json_array_get(arr, 0);
        CHECK(json_string_length(s) == vlen && memcmp(json_string_value(s), fixed, vlen) == 0);
    }
    json_decref(v);

    /* 3. A byte limit is never exceeded. */
    size_t max = 1 + (size ? data[0] : 0u);
    jw_free(&w);
    jw_init(&w, max);
    jw_array_begin(&w);
    jw_stringn(&w, (const char *)data, size);
    jw_array_end(&w);
    CHECK(w.len <= max);
    CHECK(w.err == 0 || w.err == MCPAGE_ERANGE);

    /* 4. Input that is JSON survives jw_json. */
    v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (v != NULL) {
        jw_free(&w);
        jw_init(&w, 0);
        jw_json(&w, v);
        if (depth_of(v) > JW_MAX_DEPTH) {
            CHECK(w.err == MCPAGE_ERANGE);
        } else {
            CHECK(w.err == 0);
            check_counts(&w);
            json_t *back = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
            CHECK(back != NULL && json_equal(v, back));
            json_decref(back);
        }
        json_decref(v);
    }
    jw_free(&w);
    free(fixed);
    return 0;
}
