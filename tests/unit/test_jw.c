/*
 * The JSON writer: exact escapes, invalid UTF-8 repair, exact byte / code
 * point / UTF-16 counts (checked against a separate count of the output),
 * sticky state errors, the byte limit, jw_utf8_floor, and round trips of
 * jansson values through jw_json back through jansson's strict parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include <jansson.h>
#include <mcpage/mcpage.h>

#include "page/alloc.h"
#include "page/jw.h"
#include "page/utf8.h"

/* xorshift64*: deterministic test data. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Du) >> 32) % n;
}

/* Independent counts of UTF-8 text known to be valid. */
static void count_valid_utf8(const char *s, size_t n, size_t *cps, size_t *units)
{
    *cps = *units = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80)
            (*cps)++, (*units)++;
        if (c >= 0xF0)
            (*units)++; /* a surrogate pair */
    }
}

/* Writes one string value and returns the writer (caller frees). */
static jw write_string(const char *s, size_t n)
{
    jw w;
    jw_init(&w, 0);
    jw_stringn(&w, s, n);
    assert_int_equal(w.err, 0);
    return w;
}

/* Asserts the writer's counts match an independent count of its output. */
static void assert_counts_exact(const jw *w)
{
    size_t cps, units;
    count_valid_utf8(w->buf, w->len, &cps, &units);
    assert_int_equal(w->len, strlen(w->buf));
    assert_int_equal(w->codepoints, cps);
    assert_int_equal(w->utf16, units);
}

static void every_control_character_is_escaped(void **state)
{
    (void)state;
    static const char *const expect[32] = {
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
        "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
        "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f"};
    for (int c = 0; c < 32; c++) {
        char in[3] = {'a', (char)c, 'z'};
        char want[16];
        snprintf(want, sizeof want, "\"a%sz\"", expect[c]);
        jw w = write_string(in, 3);
        assert_string_equal(w.buf, want);
        assert_counts_exact(&w);
        /* It decodes to the same three characters. */
        json_error_t err;
        json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        assert_non_null(v);
        assert_int_equal(json_string_length(v), 3);
        assert_memory_equal(json_string_value(v), in, 3);
        json_decref(v);
        jw_free(&w);
    }
    jw w = write_string("q\"b\\s/\x7f", 7);
    /* Quote and backslash escaped; slash and DEL are legal as they are. */
    assert_string_equal(w.buf, "\"q\\\"b\\\\s/\x7f\"");
    assert_counts_exact(&w);
    jw_free(&w);
}

static void line_and_paragraph_separators_are_escaped(void **state)
{
    (void)state;
    const char in[] = "a\xE2\x80\xA8"
                      "b\xE2\x80\xA9"
                      "c\xE2\x80\xA7";
    jw w = write_string(in, sizeof in - 1);
    /* U+2027 is an ordinary character and stays raw. */
    assert_string_equal(w.buf, "\"a\\u2028b\\u2029c\xE2\x80\xA7\"");
    assert_counts_exact(&w);
    json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    assert_string_equal(json_string_value(v), in);
    json_decref(v);
    jw_free(&w);
}

static void invalid_utf8_becomes_replacement_characters(void **state)
{
    (void)state;
    static const struct {
        const char *in;  /* bytes to write */
        size_t bad;      /* bytes that are not part of a valid character */
        const char *out; /* expected string body; R = U+FFFD */
    } cases[] = {
        {"\xC0\xAF", 2, "RR"},                /* overlong '/' */
        {"\xE0\x80\xAF", 3, "RRR"},           /* overlong, 3 bytes */
        {"\xF0\x80\x80\xAF", 4, "RRRR"},      /* overlong, 4 bytes */
        {"\xC1\xBF", 2, "RR"},                /* overlong DEL */
        {"\xED\xA0\x80", 3, "RRR"},           /* U+D800, a surrogate */
        {"\xED\xBF\xBF", 3, "RRR"},           /* U+DFFF */
        {"\xF4\x90\x80\x80", 4, "RRRR"},      /* U+110000 */
        {"\xF7\xBF\xBF\xBF", 4, "RRRR"},      /* past U+10FFFF */
        {"\xF8\x88\x80\x80\x80", 5, "RRRRR"}, /* old 5-byte form */
        {"x\xE2\x82", 2, "xRR"},              /* truncated at the end */
        {"\xE2\x82y", 2, "RRy"},              /* truncated before ASCII */
        {"\x80", 1, "R"},                     /* lone continuation */
        {"a\xBF\xBF"
         "b",
         2, "aRRb"},                             /* lone continuations */
        {"\xFE\xFF", 2, "RR"},                   /* never valid */
        {"\xC3", 1, "R"},                        /* lead byte alone */
        {"\xF0\x9F\x98", 3, "RRR"},              /* emoji cut short */
        {"ok\xE2\x82\xAC", 0, "ok\xE2\x82\xAC"}, /* valid euro sign for contrast */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].in);
        jw w = write_string(cases[i].in, n);
        char want[64] = "\"";
        for (const char *o = cases[i].out; *o; o++)
            strcat(want, *o == 'R' ? "\xEF\xBF\xBD" : (char[2]){*o, 0});
        strcat(want, "\"");
        assert_string_equal(w.buf, want);
        assert_int_equal(w.repaired, cases[i].bad);
        assert_counts_exact(&w);
        /* jw_measure_utf8 counts the input as it will be written. */
        size_t cps, units;
        jw_measure_utf8(cases[i].in, n, &cps, &units);
        assert_int_equal(cps + 2, w.codepoints);
        assert_int_equal(units + 2, w.utf16);
        /* jansson accepts the repaired output (it rejects invalid UTF-8). */
        json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        json_decref(v);
        jw_free(&w);
    }
}

/* Appends the UTF-8 form of cp to buf at *n. */
static void put_utf8(char *buf, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        buf[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        buf[(*n)++] = (char)(0xC0 | cp >> 6);
        buf[(*n)++] = (char)(0x80 | (cp & 63));
    } else if (cp < 0x10000) {
        buf[(*n)++] = (char)(0xE0 | cp >> 12);
        buf[(*n)++] = (char)(0x80 | (cp >> 6 & 63));
        buf[(*n)++] = (char)(0x80 | (cp & 63));
    } else {
        buf[(*n)++] = (char)(0xF0 | cp >> 18);
        buf[(*n)++] = (char)(0x80 | (cp >> 12 & 63));
        buf[(*n)++] = (char)(0x80 | (cp >> 6 & 63));
        buf[(*n)++] = (char)(0x80 | (cp & 63));
    }
}

/* A random scalar value from every range: ASCII, controls, 2-, 3-, 4-byte. */
static uint32_t random_scalar(void)
{
    switch (rnd(6)) {
    case 0:
        return rnd(0x20);
    case 1:
        return 0x20 + rnd(0x60);
    case 2:
        return 0x80 + rnd(0x780);
    case 3: {
        uint32_t cp = 0x800 + rnd(0xF800);
        return cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp;
    }
    case 4:
        return 0x10000 + rnd(0x100000);
    default:
        return rnd(2) ? 0x2028 : 0x10FFFF;
    }
}

static void counts_match_an_independent_count_for_random_text(void **state)
{
    (void)state;
    char in[4 * 200];
    for (int round = 0; round < 2000; round++) {
        size_t n = 0, chars = rnd(200);
        size_t cps_in = 0, units_in = 0;
        for (size_t k = 0; k < chars; k++) {
            uint32_t cp = random_scalar();
            put_utf8(in, &n, cp);
            cps_in++;
            units_in += cp >= 0x10000 ? 2 : 1;
        }
        size_t cps, units;
        jw_measure_utf8(in, n, &cps, &units);
        assert_int_equal(cps, cps_in);
        assert_int_equal(units, units_in);
        jw w = write_string(in, n);
        assert_int_equal(w.repaired, 0);
        assert_counts_exact(&w);
        json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        assert_non_null(v);
        assert_int_equal(json_string_length(v), n);
        assert_memory_equal(json_string_value(v), in, n);
        json_decref(v);
        jw_free(&w);
    }
}

/*
 * Long strings are escaped in chunks reserved for their worst case; a
 * writer limited to the exact output length cannot reserve that and
 * escapes piece by piece. Both must write the same bytes and counts,
 * wherever a chunk's edge falls (inside a character, on an invalid byte).
 */
static void long_strings_escape_the_same_in_chunks_and_pieces(void **state)
{
    (void)state;
    static char in[4 * 6000];
    for (int round = 0; round < 200; round++) {
        size_t n = 0, chars = 1000 + rnd(5000);
        for (size_t k = 0; k < chars; k++) {
            if (rnd(50) == 0)
                in[n++] = (char)(rnd(2) ? 0xFF : 0x80 + rnd(0x40)); /* not UTF-8 */
            else if (rnd(3) == 0)
                put_utf8(in, &n, (uint32_t)('a' + rnd(26)));
            else
                put_utf8(in, &n, random_scalar());
        }
        jw chunks = write_string(in, n);
        assert_counts_exact(&chunks);
        jw pieces;
        jw_init(&pieces, chunks.len);
        jw_stringn(&pieces, in, n);
        assert_int_equal(pieces.err, 0);
        assert_int_equal(pieces.len, chunks.len);
        assert_memory_equal(pieces.buf, chunks.buf, chunks.len);
        assert_int_equal(pieces.codepoints, chunks.codepoints);
        assert_int_equal(pieces.utf16, chunks.utf16);
        assert_int_equal(pieces.repaired, chunks.repaired);
        jw_free(&chunks);
        jw_free(&pieces);
    }
}

static void state_errors_are_sticky(void **state)
{
    (void)state;
    jw w;
    jw_init(&w, 0);
    jw_object_begin(&w);
    jw_int(&w, 1); /* a value where a key is due */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    size_t len = w.len;
    jw_key(&w, "k");
    jw_int(&w, 2);
    jw_object_end(&w);
    assert_int_equal(w.err, MCPAGE_ESTATE);
    assert_int_equal(w.len, len); /* nothing more was written */
    jw_reset(&w);
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 0);

    /* Each misuse on its own. */
    jw_key(&w, "top"); /* a key outside an object */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_array_begin(&w);
    jw_object_end(&w); /* the wrong closer */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_object_begin(&w);
    jw_key(&w, "a");
    jw_object_end(&w); /* the key's value is missing */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_object_begin(&w);
    jw_key(&w, "a");
    jw_key(&w, "b"); /* two keys in a row */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_array_end(&w); /* nothing open */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_null(&w);
    jw_null(&w); /* a second top-level value */
    assert_int_equal(w.err, MCPAGE_ESTATE);
    jw_reset(&w);
    jw_json(&w, NULL);
    assert_int_equal(w.err, MCPAGE_EINVAL);

    /* JW_MAX_DEPTH levels fit; one more is a range error. */
    jw_reset(&w);
    for (int i = 0; i < JW_MAX_DEPTH; i++)
        jw_array_begin(&w);
    assert_int_equal(w.err, 0);
    jw_array_begin(&w);
    assert_int_equal(w.err, MCPAGE_ERANGE);
    jw_reset(&w);
    for (int i = 0; i < JW_MAX_DEPTH; i++)
        jw_array_begin(&w);
    for (int i = 0; i < JW_MAX_DEPTH; i++)
        jw_array_end(&w);
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 2 * JW_MAX_DEPTH);
    jw_free(&w);
}

static void byte_limit_is_enforced_exactly(void **state)
{
    (void)state;
    jw w;
    /* ["abcdef"] is 10 bytes: it fits a 10-byte limit ... */
    jw_init(&w, 10);
    jw_array_begin(&w);
    jw_string(&w, "abcdef");
    jw_array_end(&w);
    assert_int_equal(w.err, 0);
    assert_string_equal(w.buf, "[\"abcdef\"]");
    jw_free(&w);
    /* ... and not a 9-byte one, which is never exceeded. */
    jw_init(&w, 9);
    jw_array_begin(&w);
    jw_string(&w, "abcdef");
    jw_array_end(&w);
    assert_int_equal(w.err, MCPAGE_ERANGE);
    assert_true(w.len <= 9);
    jw_free(&w);
    /* Escapes and replacement characters count at their written size. */
    for (size_t max = 1; max < 40; max++) {
        jw_init(&w, max);
        jw_stringn(&w, "\x01\xFF\xE2\x80\xA8\"", 6);
        assert_true(w.len <= max);
        /* "\u0001" + U+FFFD (3) + "\u2028" + "\"" (2) + quotes = 19. */
        assert_int_equal(w.err, max >= 19 ? 0 : MCPAGE_ERANGE);
        jw_free(&w);
    }
}

static size_t fail_after;
static void *failing_malloc(size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? malloc(n) : NULL;
}
static void *failing_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static void out_of_memory_is_a_sticky_error(void **state)
{
    (void)state;
    mcpage_allocator a = {failing_malloc, failing_realloc, plain_free, NULL};
    assert_int_equal(mcpage_set_allocator(&a), 0);
    jw w;
    jw_init(&w, 0);
    fail_after = 1; /* the first buffer, then nothing */
    jw_array_begin(&w);
    for (int i = 0; i < 100; i++)
        jw_string(&w, "a string long enough to outgrow the first buffer of 256 bytes");
    assert_int_equal(w.err, MCPAGE_ENOMEM);
    assert_true(w.len <= w.cap);
    jw_free(&w);
    assert_int_equal(mcpage_set_allocator(NULL), 0);
}

/* Decodes like the writer does, one U+FFFD per invalid byte, into cps. */
static size_t decode_repaired(const char *s, size_t n, uint32_t *cps)
{
    jw w = write_string(s, n);
    json_t *v = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(v);
    const unsigned char *p = (const unsigned char *)json_string_value(v);
    size_t len = json_string_length(v), count = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = p[i];
        size_t k = cp < 0x80 ? 1 : cp < 0xE0 ? 2 : cp < 0xF0 ? 3 : 4;
        cp = k == 1 ? cp : k == 2 ? cp & 31 : k == 3 ? cp & 15 : cp & 7;
        for (size_t j = 1; j < k; j++)
            cp = cp << 6 | (p[i + j] & 63u);
        cps[count++] = cp;
        i += k;
    }
    json_decref(v);
    jw_free(&w);
    return count;
}

static void utf8_floor_never_cuts_a_character(void **state)
{
    (void)state;
    /* Mixed valid characters of every length and invalid bytes. */
    static const char text[] = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xFF"
                               "b\xE2\x82"
                               "c\x80\xED\xA0\x80\xF0\x9F\x98\x80";
    size_t n = sizeof text - 1;
    uint32_t full[64], part[64];
    size_t nfull = decode_repaired(text, n, full);
    for (size_t cut = 0; cut <= n; cut++) {
        size_t k = jw_utf8_floor(text, cut);
        assert_true(k <= cut);
        assert_true(cut - k < 4);
        /* The kept prefix decodes to a prefix of the whole text. */
        size_t npart = decode_repaired(text, k, part);
        assert_true(npart <= nfull);
        assert_memory_equal(part, full, npart * sizeof part[0]);
    }
    /* Exact values at the interesting cuts. */
    assert_int_equal(jw_utf8_floor(text, 2), 1);   /* inside U+00E9 */
    assert_int_equal(jw_utf8_floor(text, 5), 3);   /* inside the euro sign */
    assert_int_equal(jw_utf8_floor(text, 9), 6);   /* inside the emoji */
    assert_int_equal(jw_utf8_floor(text, 11), 11); /* after the invalid 0xFF */
    assert_int_equal(jw_utf8_floor(text, 14), 12); /* truncated E2 82 at the end */
    assert_int_equal(jw_utf8_floor(text, 15), 15); /* E2 82 then 'c': invalid, kept */
    assert_int_equal(jw_utf8_floor("\xE2"
                                   "A",
                                   2),
                     2);
    assert_int_equal(jw_utf8_floor("", 0), 0);
}

/* A random jansson value (depth-limited) for round trips. */
static json_t *random_value(int depth)
{
    uint32_t kind = depth > 4 ? 2 + rnd(6) : rnd(8);
    switch (kind) {
    case 0: {
        json_t *o = json_object();
        for (uint32_t i = rnd(5); i > 0; i--) {
            char key[64];
            size_t n = 0, len = rnd(8);
            /* No U+0000 in keys: jw writes it, but jansson's parser refuses
             * it there, so the round trip could not be checked. */
            for (size_t k = 0; k < len; k++) {
                uint32_t cp = random_scalar();
                put_utf8(key, &n, cp ? cp : 1);
            }
            json_object_setn_new(o, key, n, random_value(depth + 1));
        }
        return o;
    }
    case 1: {
        json_t *a = json_array();
        for (uint32_t i = rnd(5); i > 0; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    case 2: {
        char s[4 * 40];
        size_t n = 0, len = rnd(40);
        for (size_t k = 0; k < len; k++)
            put_utf8(s, &n, random_scalar());
        return json_stringn(s, n);
    }
    case 3: {
        static const json_int_t ints[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1000000007};
        return json_integer(rnd(2) ? ints[rnd(6)] : (json_int_t)rnd(UINT32_MAX) - INT32_MAX);
    }
    case 4: {
        static const double reals[] = {
            0.1, -2.5, 1e300, 5e-324, 1.7976931348623157e308, 123456789012345678.0, 3.0, -0.0};
        return json_real(rnd(2) ? reals[rnd(8)] : (double)rnd(UINT32_MAX) / 7.0);
    }
    case 5:
        return json_true();
    case 6:
        return json_false();
    default:
        return json_null();
    }
}

static void jansson_values_round_trip_through_jw_json(void **state)
{
    (void)state;
    for (int round = 0; round < 3000; round++) {
        json_t *v = random_value(0);
        jw w;
        jw_init(&w, 0);
        jw_json(&w, v);
        assert_int_equal(w.err, 0);
        assert_counts_exact(&w);
        json_error_t err;
        json_t *back = json_loadb(w.buf, w.len,
                                  JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
        if (back == NULL)
            fail_msg("jansson rejected jw output: %s in %s", err.text, w.buf);
        if (!json_equal(v, back))
            fail_msg("round trip changed the value: %s", w.buf);
        json_decref(back);
        json_decref(v);
        jw_free(&w);
    }
}

static void numbers_are_written_as_json_numbers(void **state)
{
    (void)state;
    jw w;
    jw_init(&w, 0);
    jw_array_begin(&w);
    jw_int(&w, INT64_MIN);
    jw_double(&w, 2.0);
    jw_double(&w, NAN);
    jw_double(&w, -INFINITY);
    jw_double(&w, 0.5);
    jw_bool(&w, true);
    jw_array_end(&w);
    assert_string_equal(w.buf, "[-9223372036854775808,2.0,null,null,0.5,true]");
    jw_free(&w);
}

static void take_hands_over_the_buffer(void **state)
{
    (void)state;
    jw w;
    jw_init(&w, 0);
    size_t len = 99;
    char *empty = jw_take(&w, &len);
    assert_string_equal(empty, "");
    assert_int_equal(len, 0);
    mcpage__free(empty);
    jw_object_begin(&w);
    jw_kv_string(&w, "k", "v");
    jw_kv_int(&w, "n", 7);
    jw_kv_bool(&w, "b", false);
    jw_key(&w, "raw");
    jw_raw_value(&w, "[1,\"\xC3\xA9\"]", 8);
    jw_object_end(&w);
    assert_counts_exact(&w);
    char *out = jw_take(&w, &len);
    assert_string_equal(out, "{\"k\":\"v\",\"n\":7,\"b\":false,\"raw\":[1,\"\xC3\xA9\"]}");
    assert_int_equal(len, strlen(out));
    assert_null(w.buf); /* the writer no longer owns it */
    mcpage__free(out);
    jw_free(&w);
}

/* ------------------------------------------ validation without decoding */

/* An independent RFC 3629 check: decode, then reject overlong forms,
   surrogates and code points past U+10FFFF. */
static size_t reference_seq_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (len == 0 || s[0] >= 0xF8 || len > n)
        return 0;
    uint32_t cp = s[0] & (0x7Fu >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3Fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static void utf8_seq_len_accepts_exactly_rfc3629(void **state)
{
    (void)state;
    unsigned char s[4];
    /* Every lead byte with every second and third byte, and the fourth
       byte at the edges of its range. */
    static const unsigned char fourth[] = {0x00, 0x41, 0x7F, 0x80, 0x9F, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0x80; a < 0x100; a++)
        for (unsigned b = 0; b < 0x100; b++)
            for (unsigned c = 0; c < 0x100; c++)
                for (size_t d = 0; d < (a >= 0xF0 ? sizeof fourth : 1); d++) {
                    s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = (unsigned char)c;
                    s[3] = fourth[d];
                    for (size_t n = 1; n <= 4; n++)
                        if (utf8_seq_len(s, n) != reference_seq_len(s, n))
                            fail_msg("%02x %02x %02x %02x (n %zu): %zu, expected %zu", a, b, c,
                                     s[3], n, utf8_seq_len(s, n), reference_seq_len(s, n));
                }
}

static void utf8_wide_run_stops_at_ascii_invalid_bytes_and_line_separators(void **state)
{
    (void)state;
    size_t chars = 0, astral = 0;
    /* é, 日, 🙂 then 'a' */
    const char *s = "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82"
                    "a\xC3\xA9";
    assert_int_equal(utf8_wide_run((const unsigned char *)s, strlen(s), &chars, &astral), 9);
    assert_int_equal(chars, 3);
    assert_int_equal(astral, 1);
    chars = astral = 0;
    assert_int_equal(
        utf8_wide_run((const unsigned char *)"\xC3\xA9\xE2\x80\xA8", 5, &chars, &astral),
        2); /* U+2028 is escaped in JSON: not part of a run */
    assert_int_equal(utf8_wide_run((const unsigned char *)"\xE2\x80\xA9", 3, &chars, &astral), 0);
    assert_int_equal(utf8_wide_run((const unsigned char *)"\xE2\x80\xAA", 3, &chars, &astral), 3);
    assert_int_equal(utf8_wide_run((const unsigned char *)"\xC3\xA9\xC3", 3, &chars, &astral), 2);
    assert_int_equal(utf8_wide_run((const unsigned char *)"\xED\xA0\x80", 3, &chars, &astral), 0);
    assert_int_equal(chars, 3); /* é, U+202A, é */
}

/* The JSON of s[0..n) written byte by byte, as the writer must write it. */
static size_t reference_escape(const unsigned char *s, size_t n, char *out)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            o += (size_t)sprintf(out + o, "\\%c", c);
            i++;
        } else if (c < 0x20) {
            const char *named = c == '\n'   ? "\\n"
                                : c == '\r' ? "\\r"
                                : c == '\t' ? "\\t"
                                : c == '\b' ? "\\b"
                                : c == '\f' ? "\\f"
                                            : NULL;
            o += named ? (size_t)sprintf(out + o, "%s", named)
                       : (size_t)sprintf(out + o, "\\u%04x", c);
            i++;
        } else if (c < 0x80) {
            out[o++] = (char)c;
            i++;
        } else {
            size_t len = reference_seq_len(s + i, n - i);
            if (len == 0) {
                memcpy(out + o, "\xEF\xBF\xBD", 3);
                o += 3;
                i++;
            } else if (len == 3 && s[i] == 0xE2 && s[i + 1] == 0x80 &&
                       (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
                o += (size_t)sprintf(out + o, "\\u%s", s[i + 2] == 0xA8 ? "2028" : "2029");
                i += 3;
            } else {
                memcpy(out + o, s + i, len);
                o += len;
                i += len;
            }
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    return o;
}

/*
 * Fills in[0..cap) with pieces drawn at random from pieces[0..np) until
 * it holds about `target` bytes; returns its length. With cuts, notes
 * up to *ncuts (in: the room) offsets between two pieces in it.
 */
static size_t random_pieces(char *in, size_t cap, size_t target, const char *const *pieces,
                            size_t np, size_t *cuts, size_t *ncuts)
{
    size_t n = 0, room = cuts ? *ncuts : 0;
    if (cuts)
        *ncuts = 0;
    while (n < target) {
        const char *piece = pieces[rnd((uint32_t)np)];
        size_t len = strlen(piece);
        if (n + len > cap)
            break;
        if (cuts && *ncuts < room && rnd(4) == 0)
            cuts[(*ncuts)++] = n;
        memcpy(in + n, piece, len);
        n += len;
    }
    return n;
}

/*
 * Strings of every kind of piece (plain runs, escapes, characters of each
 * length, U+2028, invalid and cut sequences), written into writers with
 * room of every size (fresh, nearly full, limited to the exact output),
 * come out as the byte-by-byte reference says, with exact counts.
 */
static void escaping_matches_a_reference_whatever_the_room(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a",
                                         "plain words ",
                                         "0123456789abcdef",
                                         "\t",
                                         "\n",
                                         "\r",
                                         "\"",
                                         "\\",
                                         "\x01",
                                         "\x1F",
                                         "\x7F",
                                         "\xC3\xA9",
                                         "\xD0\xBF\xD1\x80",
                                         "\xE6\x97\xA5",
                                         "\xF0\x9F\x99\x82",
                                         "\xE2\x80\xA8",
                                         "\xE2\x80\xA9",
                                         "\xFF",
                                         "\x80",
                                         "\xC3",
                                         "\xE2\x80",
                                         "\xED\xA0\x80",
                                         "\xF4\x90\x80\x80",
                                         "\xC0\xAF",
                                         "\xE0\x80\xAF",
                                         "\xF0\x80\x80\xAF"};
    static unsigned char in[9000];
    static char want[6 * 9000 + 3];
    for (int round = 0; round < 3000; round++) {
        size_t target = round < 2900 ? rnd(300) : 4000 + rnd(4900);
        size_t n = random_pieces((char *)in, sizeof in, target, pieces,
                                 sizeof pieces / sizeof *pieces, NULL, NULL);
        size_t wlen = reference_escape(in, n, want);
        for (int room = 0; room < 4; room++) {
            jw w;
            /* 3: limited to the exact output, so it cannot take the chunks' room. */
            jw_init(&w, room == 3 ? wlen : 0);
            if (room == 1)
                (void)jw_reserve(&w, 1 + rnd(64)); /* a little room, then growth */
            if (room == 2)
                (void)jw_reserve(&w, wlen + 2); /* room for all of it */
            jw_stringn(&w, (const char *)in, n);
            assert_int_equal(w.err, 0);
            assert_int_equal(w.len, wlen);
            assert_memory_equal(w.buf, want, wlen);
            assert_counts_exact(&w);
            jw_free(&w);
        }
    }
}

/*
 * A string written in pieces cut between characters (some given already
 * escaped, with their counts) is the string jw_stringn writes whole, to
 * the byte and the count.
 */
static void a_string_in_pieces_is_the_string_whole(void **state)
{
    (void)state;
    static const char *const pieces[] = {"plain words ",
                                         "\t",
                                         "\n",
                                         "\"",
                                         "\\",
                                         "\x01",
                                         "\xC3\xA9",
                                         "\xF0\x9F\x99\x82",
                                         "\xE2\x80\xA8",
                                         "\xFF",
                                         "0123456789abcdefghij"};
    static char in[4000];
    for (int round = 0; round < 2000; round++) {
        /* Cuts between two pieces: between two characters, as none of
           these pieces runs into the next. */
        size_t cuts[64], ncuts = 64;
        size_t n = random_pieces(in, sizeof in, rnd(1500), pieces, sizeof pieces / sizeof *pieces,
                                 cuts, &ncuts);
        jw whole = write_string(in, n);
        jw parts;
        jw_init(&parts, 0);
        jw_string_begin(&parts);
        size_t from = 0;
        for (size_t k = 0; k <= ncuts; k++) {
            size_t to = k < ncuts ? cuts[k] : n;
            if (k % 2) {
                jw_string_piece(&parts, in + from, to - from);
            } else {
                /* Given escaped: the writer's own escape of the piece, quotes off. */
                jw e = write_string(in + from, to - from);
                jw_string_piece_escaped(&parts, e.buf + 1, e.len - 2, e.codepoints - 2,
                                        e.utf16 - 2);
                jw_free(&e);
            }
            from = to;
        }
        jw_string_end(&parts);
        assert_int_equal(parts.err, 0);
        assert_int_equal(parts.len, whole.len);
        assert_memory_equal(parts.buf, whole.buf, whole.len);
        assert_int_equal(parts.codepoints, whole.codepoints);
        assert_int_equal(parts.utf16, whole.utf16);
        assert_int_equal(parts.buf[parts.len], '\0');
        jw_free(&parts);
        jw_free(&whole);
    }
}

/* What follows a mark is taken back, commas and counts with it. */
static void rewind_takes_back_what_followed_the_mark(void **state)
{
    (void)state;
    for (int first = 0; first < 2; first++) {
        jw w, want;
        jw_init(&w, 0);
        jw_init(&want, 0);
        jw_array_begin(&w);
        jw_array_begin(&want);
        if (!first) {
            jw_int(&w, 7);
            jw_int(&want, 7);
        }
        jw_mark m = jw_mark_get(&w);
        jw_stringn(&w, "caf\xC3\xA9 \xFF", 7); /* repaired: counts and the repair go back */
        jw_rewind(&w, &m);
        jw_null(&w);
        jw_null(&want);
        jw_array_end(&w);
        jw_array_end(&want);
        assert_int_equal(w.err, 0);
        assert_string_equal(w.buf, want.buf);
        assert_int_equal(w.codepoints, want.codepoints);
        assert_int_equal(w.utf16, want.utf16);
        assert_int_equal(w.repaired, 0);
        jw_free(&w);
        jw_free(&want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_control_character_is_escaped),
        cmocka_unit_test(line_and_paragraph_separators_are_escaped),
        cmocka_unit_test(invalid_utf8_becomes_replacement_characters),
        cmocka_unit_test(counts_match_an_independent_count_for_random_text),
        cmocka_unit_test(long_strings_escape_the_same_in_chunks_and_pieces),
        cmocka_unit_test(utf8_seq_len_accepts_exactly_rfc3629),
        cmocka_unit_test(utf8_wide_run_stops_at_ascii_invalid_bytes_and_line_separators),
        cmocka_unit_test(escaping_matches_a_reference_whatever_the_room),
        cmocka_unit_test(a_string_in_pieces_is_the_string_whole),
        cmocka_unit_test(rewind_takes_back_what_followed_the_mark),
        cmocka_unit_test(state_errors_are_sticky),
        cmocka_unit_test(byte_limit_is_enforced_exactly),
        cmocka_unit_test(out_of_memory_is_a_sticky_error),
        cmocka_unit_test(utf8_floor_never_cuts_a_character),
        cmocka_unit_test(jansson_values_round_trip_through_jw_json),
        cmocka_unit_test(numbers_are_written_as_json_numbers),
        cmocka_unit_test(take_hands_over_the_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
