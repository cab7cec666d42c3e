/*
 * json_loadb with long strings decoded outside jansson (sync_json.h says
 * why). The scan copies the line into a skeleton: bytes outside strings
 * as they are, short strings and object keys as they are, each long
 * string value as "\u0000<n>" (a string no accepted line holds: the scan
 * hands any line with a \u0000 to json_loadb) with its decoded bytes kept
 * as the n-th long string. jansson parses the skeleton with
 * JSON_ALLOW_NUL, and each placeholder is replaced by its string.
 *
 * The skeleton parses exactly when the line does: a '"' outside a string
 * starts a string token for jansson as for the scan, and each replaced
 * token was a valid string (checked as jansson checks it: no control
 * character, known escapes, paired surrogates, UTF-8).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_json.h"
#include "sync/sync_parse.h"

typedef struct long_str {
    size_t at, len; /* the decoded bytes in scan.dec */
} long_str;

typedef struct scan {
    const unsigned char *in; /* the line */
    size_t len;
    char *sk; /* the skeleton (len + 1 bytes: never longer than the line) */
    size_t sklen;
    char *dec; /* the long strings' decoded bytes (len bytes: never more than the line's) */
    size_t declen;
    long_str *v; /* the long strings, by placeholder number */
    size_t n, cap;
} scan;

static int hex4(const unsigned char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        *v = (*v << 4) | d;
    }
    return 0;
}

static size_t utf8_put(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The escape at in[*p] (a backslash) decoded into o: its length, or 0
 * when jansson would reject it or it is \u0000. */
static size_t unescape(const unsigned char *in, size_t len, size_t *p, char *o)
{
    size_t i = *p;
    if (i + 1 >= len)
        return 0;
    static const char simple[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'b', '\b'},
                                     {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++) {
        if (in[i + 1] == (unsigned char)simple[k][0]) {
            *o = simple[k][1];
            *p = i + 2;
            return 1;
        }
    }
    uint32_t v, lo;
    if (in[i + 1] != 'u' || i + 6 > len || hex4(in + i + 2, &v) < 0)
        return 0;
    i += 6;
    if (v >= 0xD800 && v <= 0xDBFF) {
        if (i + 6 > len || in[i] != '\\' || in[i + 1] != 'u' || hex4(in + i + 2, &lo) < 0 ||
            lo < 0xDC00 || lo > 0xDFFF)
            return 0;
        v = ((v - 0xD800) << 10) + (lo - 0xDC00) + 0x10000;
        i += 6;
    } else if ((v >= 0xDC00 && v <= 0xDFFF) || v == 0) {
        return 0;
    }
    *p = i;
    return utf8_put(v, o);
}

/*
 * The bytes of `w` (eight bytes of the line, the first in the lowest
 * byte) that end a run copied as it is: a quote, a backslash, a control
 * character or a byte from 0x80, as the high bit of each such byte; 0
 * when there is none. The zero-byte test of "Bit Twiddling Hacks": a
 * borrow may flag a byte above a flagged one, never one below, so the
 * lowest flag is exact.
 */
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_RUNS 1
#else
#define SWAR_RUNS 0 /* byte by byte: the first byte is not the lowest */
#endif
static uint64_t run_ends(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t zero_q = (q - ones) & ~q, zero_b = (b - ones) & ~b, below = w - ones * 0x20;
    return (zero_q | zero_b | below | w) & high;
}

/*
 * The string token that starts at sc->in[start] (its opening quote),
 * decoded at sc->dec + sc->declen (not yet counted): its decoded length in
 * *n and the offset of its closing quote in *end. -1 when jansson would
 * reject it, it holds \u0000, or it does not end.
 */
static int string_token(scan *sc, size_t start, size_t *end, size_t *n)
{
    const unsigned char *in = sc->in;
    size_t len = sc->len;
    char *o = sc->dec + sc->declen;
    size_t w = 0;
    size_t p = start + 1;
    while (p < len) {
        /* Printable ASCII eight bytes at a time: most of a tool output.
         * The decoded bytes never run ahead of the line's, so the eight
         * written stay inside sc->dec (len bytes). */
        while (SWAR_RUNS && len - p >= 8) {
            uint64_t w8, ends;
            memcpy(&w8, in + p, 8);
            memcpy(o + w, in + p, 8);
            ends = run_ends(w8);
            size_t plain = ends ? (size_t)__builtin_ctzll(ends) / 8 : 8;
            w += plain;
            p += plain;
            if (ends)
                break;
        }
        if (p == len)
            break;
        unsigned char c = in[p];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            o[w++] = (char)c;
            p++;
        } else if (c == '"') {
            *end = p;
            *n = w;
            return 0;
        } else if (c == '\\') {
            size_t k = unescape(in, len, &p, o + w);
            if (!k)
                return -1;
            w += k;
        } else if (c >= 0x80) {
            size_t k = sync_utf8_seq(in + p, len - p);
            if (!k)
                return -1;
            memcpy(o + w, in + p, k);
            w += k;
            p += k;
        } else {
            return -1; /* a control character */
        }
    }
    return -1;
}

/* 1 when the token that ended before in[at] is an object key. */
static int is_key(const scan *sc, size_t at)
{
    while (at < sc->len &&
           (sc->in[at] == ' ' || sc->in[at] == '\t' || sc->in[at] == '\n' || sc->in[at] == '\r'))
        at++;
    return at < sc->len && sc->in[at] == ':';
}

static int long_add(scan *sc, size_t n)
{
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? sc->cap * 2 : 16;
        long_str *v = realloc(sc->v, cap * sizeof *v);
        if (!v)
            return -1;
        sc->v = v;
        sc->cap = cap;
    }
    sc->v[sc->n++] = (long_str){sc->declen, n};
    sc->declen += n;
    return 0;
}

/* Writes the placeholder of long string number k, "\u0000<k>" with its
 * quotes, at o: its length (at most 8 + 20 bytes, no longer than the
 * token it stands for: SYNC_JSON_LONG bytes or more and fewer than
 * 10^(SYNC_JSON_LONG - 8) tokens in a line). */
static size_t placeholder(char *o, size_t k)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + k % 10);
        k /= 10;
    } while (k);
    memcpy(o, "\"\\u0000", 7);
    for (size_t i = 0; i < n; i++)
        o[7 + i] = digits[n - 1 - i];
    o[7 + n] = '"';
    return 8 + n;
}

/* Builds the skeleton: 0, or -1 when the line is json_loadb's to parse. */
static int skeleton(scan *sc)
{
    size_t i = 0;
    while (i < sc->len) {
        const unsigned char *q = memchr(sc->in + i, '"', sc->len - i);
        size_t run = q ? (size_t)(q - (sc->in + i)) : sc->len - i;
        memcpy(sc->sk + sc->sklen, sc->in + i, run);
        sc->sklen += run;
        i += run;
        if (!q)
            break;
        size_t end = 0, n = 0;
        if (string_token(sc, i, &end, &n) < 0)
            return -1;
        size_t tlen = end + 1 - i;
        if (tlen < SYNC_JSON_LONG || is_key(sc, end + 1)) {
            memcpy(sc->sk + sc->sklen, sc->in + i, tlen);
            sc->sklen += tlen;
        } else {
            size_t k = placeholder(sc->sk + sc->sklen, sc->n);
            if (long_add(sc, n) < 0)
                return -1;
            sc->sklen += k;
        }
        i = end + 1;
    }
    sc->sk[sc->sklen] = 0;
    return 0;
}

/* The long string a placeholder value stands for, or NULL when `v` is
 * not a placeholder; *bad when it cannot be made. */
static json_t *long_value(const scan *sc, json_t *v, int *bad)
{
    if (!json_is_string(v) || json_string_length(v) < 2 || json_string_value(v)[0] != 0)
        return NULL;
    size_t k = (size_t)strtoull(json_string_value(v) + 1, NULL, 10);
    json_t *s = k < sc->n ? json_stringn_nocheck(sc->dec + sc->v[k].at, sc->v[k].len) : NULL;
    if (!s)
        *bad = 1;
    return s;
}

/* Replaces every placeholder under `v` by its string: 0 or -1. */
static int restore(const scan *sc, json_t *v)
{
    int bad = 0;
    if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it && !bad; it = json_object_iter_next(v, it)) {
            json_t *val = json_object_iter_value(it);
            json_t *s = long_value(sc, val, &bad);
            if (s)
                bad = json_object_iter_set_new(v, it, s) < 0;
            else if (!bad && restore(sc, val) < 0)
                bad = 1;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && !bad; i++) {
            json_t *val = json_array_get(v, i);
            json_t *s = long_value(sc, val, &bad);
            if (s)
                bad = json_array_set_new(v, i, s) < 0;
            else if (!bad && restore(sc, val) < 0)
                bad = 1;
        }
    }
    return bad ? -1 : 0;
}

json_t *sync_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
    if ((flags & ~(size_t)JSON_DECODE_ANY) || len < 2 * SYNC_JSON_LONG)
        return json_loadb(buf, len, flags, err);
    scan sc = {.in = (const unsigned char *)buf, .len = len};
    sc.sk = malloc(len + 1);
    sc.dec = malloc(len);
    json_t *root = NULL;
    if (sc.sk && sc.dec && skeleton(&sc) == 0)
        root = json_loadb(sc.sk, sc.sklen, flags | JSON_ALLOW_NUL, err);
    if (root && sc.n > 0) {
        int bad = 0;
        json_t *s = long_value(&sc, root, &bad); /* a JSON_DECODE_ANY string */
        if (s || bad) {
            json_decref(root);
            root = s;
        } else if (restore(&sc, root) < 0) {
            json_decref(root);
            root = NULL;
        }
    }
    free(sc.sk);
    free(sc.dec);
    free(sc.v);
    return root ? root : json_loadb(buf, len, flags, err);
}
