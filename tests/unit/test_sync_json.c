/* Tests for sync_json_loadb (src/sync/sync_json.c): long strings decoded
 * outside jansson give exactly json_loadb's value, and a line jansson
 * rejects gets jansson's error; and the UTF-8 repair's ASCII fast path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sync/sync_json.h"
#include "sync/sync_parse.h"

/* A line with `body` as a string value SYNC_JSON_LONG bytes or more long. */
static char *line_with(const char *pre, const char *body, const char *post)
{
    size_t n = strlen(pre) + strlen(body) * 4 + strlen(post) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s%s%s%s%s%s", pre, body, body, body, body, post);
    return s;
}

static void assert_same_as_jansson(const char *text, size_t flags)
{
    json_error_t ea, eb;
    json_t *a = json_loadb(text, strlen(text), flags, &ea);
    json_t *b = sync_json_loadb(text, strlen(text), flags, &eb);
    assert_true(!a == !b);
    if (a) {
        size_t f = JSON_COMPACT | JSON_ENCODE_ANY;
        char *da = json_dumps(a, f), *db = json_dumps(b, f);
        assert_string_equal(da, db);
        assert_true(json_equal(a, b));
        free(da);
        free(db);
    } else {
        assert_string_equal(ea.text, eb.text);
        assert_int_equal(ea.position, eb.position);
    }
    json_decref(a);
    json_decref(b);
}

static void long_strings_read_as_jansson_reads_them(void **state)
{
    (void)state;
    const char *bodies[] = {
        "plain words and more plain words ",
        "escapes \\n \\t \\\" \\\\ \\/ \\b \\f \\r done ",
        "unicode \\u00e9 \\u65e5 \\ud83d\\ude42 and raw \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82 ",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char *s =
            line_with("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\","
                      "\"content\":\"",
                      bodies[i], "\"}]},\"n\":[1,-2.5e3,true,null]}");
        assert_same_as_jansson(s, 0);
        json_t *v = sync_json_loadb(s, strlen(s), 0, NULL);
        json_t *c = json_array_get(json_object_get(json_object_get(v, "message"), "content"), 0);
        assert_true(json_string_length(json_object_get(c, "content")) >= SYNC_JSON_LONG / 2);
        json_decref(v);
        free(s);
    }
    /* a long key stays a key; duplicate keys keep the last value */
    char *s = line_with("{\"", "kkkkkkkkkkkkkkkkkkkkkkkkk",
                        "\" : 1, \"a\":\"first\", \"a\": \""
                        "the last value wins over the first one, as jansson has it\"}");
    assert_same_as_jansson(s, 0);
    free(s);
    /* the whole document one long string */
    s = line_with("\"", "a whole document that is one string ", "\"");
    assert_same_as_jansson(s, JSON_DECODE_ANY);
    assert_same_as_jansson(s, 0); /* rejected: not an object or array */
    free(s);
}

/* The scan copies printable ASCII eight bytes at a time: a quote, an
 * escape, a byte from 0x80 or a control character at every position of
 * those eight, in strings of every length around them, reads as jansson
 * reads it (or is rejected as jansson rejects it). */
static void every_position_of_a_run_end(void **state)
{
    (void)state;
    static const char *const ends[] = {"\\\"", "\\n", "\xc3\xa9", "\x01", "\xff", "\""};
    char body[200], line[400];
    for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
        for (int before = 0; before < 20; before++) {
            for (int after = 0; after < 12; after++) {
                int k =
                    snprintf(body, sizeof body, "%.*s%s%.*s", before, "abcdefghijklmnopqrstuvwxyz",
                             ends[e], after, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                assert_true(k > 0);
                snprintf(line, sizeof line,
                         "{\"type\":\"user\",\"pad\":\"%s\",\"content\":\"%s%s\"}",
                         "0123456789012345678901234567890123456789012345678901234567890123",
                         "0123456789012345678901234567890123456789012345678901234567890123", body);
                assert_same_as_jansson(line, 0);
            }
        }
    }
}

static void rejected_lines_keep_janssons_error(void **state)
{
    (void)state;
    const char *bad[][3] = {
        {"{\"t\":\"", "a long string before a NUL escape ", "\\u0000\"}"},
        {"{\"t\":\"", "a long string before a lone surrogate ", "\\ud83d x\"}"},
        {"{\"t\":\"", "a long string before a bad escape ", "\\x\"}"},
        {"{\"t\":\"", "a long string before a control character ", "\x01\"}"},
        {"{\"t\":\"", "a long string that never ends ", ""},
        {"{\"t\" \"", "a long string where a colon should be ", "\"}"},
        {"{\"t\":\"", "a long string, then trailing text ", "\"} x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *s = line_with(bad[i][0], bad[i][1], bad[i][2]);
        json_error_t err;
        json_t *v = sync_json_loadb(s, strlen(s), 0, &err);
        assert_null(v);
        assert_true(err.text[0] != 0);
        assert_same_as_jansson(s, 0);
        free(s);
    }
}

static void utf8_repair_finds_a_bad_byte_after_long_ascii(void **state)
{
    (void)state;
    for (size_t at = 0; at < 24; at++) {
        char in[40];
        memset(in, 'a', sizeof in);
        in[at] = (char)0xff;
        char *out = NULL;
        size_t n = 0;
        assert_int_equal(sync_utf8_repair(in, sizeof in, &out, &n), 0);
        assert_non_null(out);
        assert_int_equal(n, sizeof in + 2);
        assert_memory_equal(out + at, "\xEF\xBF\xBD", 3);
        free(out);
    }
    char ok[40];
    memset(ok, 'b', sizeof ok);
    memcpy(ok + 17, "\xc3\xa9", 2);
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(sync_utf8_repair(ok, sizeof ok, &out, &n), 0);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_strings_read_as_jansson_reads_them),
        cmocka_unit_test(every_position_of_a_run_end),
        cmocka_unit_test(rejected_lines_keep_janssons_error),
        cmocka_unit_test(utf8_repair_finds_a_bad_byte_after_long_ascii),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
