/*
 * Tests for JSON-RPC message parsing and the malformed-input corpus:
 * truncated JSON, invalid UTF-8, lone surrogates, NUL escapes, huge and
 * deeply nested messages, out-of-range numbers, every field with the
 * wrong type. Each input gets exactly one error with the right code, and
 * the session keeps serving afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcp/jsonin.h"
#include "support/mcp_capture.h"

static void depth_scan_counts_containers_outside_strings(void **state)
{
    const char *s = "{\"a\":[1,{\"b\":\"[[[{{{\"}],\"c\":\"\\\"[\"}";
    assert_int_equal(jsonin_depth(s, strlen(s), 100), 3);
    assert_int_equal(jsonin_depth("[]", 2, 100), 1);
    assert_int_equal(jsonin_depth("1", 1, 100), 0);
    /* The scan stops as soon as the limit is passed. */
    char deep[2000];
    memset(deep, '[', sizeof deep);
    assert_int_equal(jsonin_depth(deep, sizeof deep, 64), 65);
}

static void parse_reports_size_depth_and_syntax(void **state)
{
    char why[256];
    json_t *v;
    assert_int_equal(jsonin_parse("{\"a\":1}", 7, 100, 64, &v, why, sizeof why), JSONIN_OK);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 1);
    json_decref(v);
    assert_int_equal(jsonin_parse("{\"a\":1}", 7, 6, 64, &v, why, sizeof why), JSONIN_TOO_LARGE);
    assert_string_equal(why, "message of 7 bytes exceeds the limit of 6 bytes");
    assert_null(v);
    assert_int_equal(jsonin_parse("[[[]]]", 6, 100, 2, &v, why, sizeof why), JSONIN_TOO_DEEP);
    assert_int_equal(jsonin_parse("[[]]", 4, 100, 2, &v, why, sizeof why), JSONIN_OK);
    json_decref(v);
    assert_int_equal(jsonin_parse("{\"a\":1,\"a\":2}", 13, 100, 64, &v, why, sizeof why),
                     JSONIN_SYNTAX);
    assert_non_null(strstr(why, "duplicate"));
}

/* Sends `msg` and expects one error `code` with id null, then a working ping. */
static void expect_error_then_serving(capture *c, const char *msg, size_t len, int code)
{
    capture_sendn(c, msg, len);
    json_t *e = capture_take_error(c, code);
    if (e == NULL)
        fail_msg("wrong reply to %.80s", msg);
    assert_true(json_is_null(json_object_get(e, "id")));
    json_decref(e);
    assert_null(capture_take(c));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"alive\",\"method\":\"ping\"}");
    json_t *p = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(p, "id")), "alive");
    json_decref(p);
}

static void every_truncation_of_a_request_is_a_parse_error(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    const char *full = "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{"
                       "\"name\":\"echo\",\"arguments\":{\"text\":\"h\\u00e9llo\"}}}";
    size_t n = strlen(full);
    for (size_t len = 1; len < n; len++)
        expect_error_then_serving(c, full, len, -32700);
    capture_free(c);
}

static void bad_text_encodings_are_parse_errors(void **state)
{
    static const char *const cases[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}",       /* overlong */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"ping\"}",   /* UTF-8 surrogate */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"ping\"}",       /* cut sequence */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"ping\"}",        /* lone high */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00\",\"method\":\"ping\"}",        /* lone low */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\\u0041\",\"method\":\"ping\"}", /* high + not low */
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"ping\"}",      /* NUL */
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":1e999}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":-1e999}}",
        "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":NaN}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
        "{'jsonrpc':'2.0'}",
        "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", /* BOM */
    };
    capture *c = capture_new(100);
    capture_init(c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error_then_serving(c, cases[i], strlen(cases[i]), -32700);
    /* A NUL byte inside the message. */
    const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\0\"method\":\"ping\"}";
    expect_error_then_serving(c, nul, sizeof nul - 1, -32700);
    /* A valid surrogate pair is fine. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"method\":\"ping\"}");
    json_t *p = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(p, "id")), "\xf0\x9f\x98\x80");
    json_decref(p);
    capture_free(c);
}

static void huge_and_deep_messages_are_invalid_requests(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    /* 10 MB: one string parameter. */
    size_t big = 10u << 20;
    char *msg = malloc(big + 100);
    int head = snprintf(msg, 100,
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"");
    memset(msg + head, 'a', big);
    memcpy(msg + head + big, "\"}}", 4);
    expect_error_then_serving(c, msg, strlen(msg), -32600);
    /* 10,000-deep nesting, as the message and inside params. */
    size_t d = 10000;
    char *deep = malloc(2 * d + 100);
    memset(deep, '[', d);
    memset(deep + d, ']', d);
    expect_error_then_serving(c, deep, 2 * d, -32600);
    head =
        snprintf(deep, 100, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":");
    memset(deep + head, '[', d);
    memset(deep + head + d, ']', d);
    memcpy(deep + head + 2 * d, "}}", 3);
    expect_error_then_serving(c, deep, strlen(deep), -32600);
    /* Nesting at the limit (64) is accepted. */
    head =
        snprintf(deep, 100, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":");
    memset(deep + head, '[', 62);
    memset(deep + head + 62, ']', 62);
    memcpy(deep + head + 124, "}}", 3);
    capture_send(c, deep);
    json_t *p = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(p, "id")), 5);
    assert_non_null(json_object_get(p, "result"));
    json_decref(p);
    free(deep);
    free(msg);
    capture_free(c);
}

static void wrong_field_types_get_errors_with_the_id(void **state)
{
    static const struct {
        const char *msg;
        int code;
    } cases[] = {
        {"{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}", -32600},
        {"{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"ping\"]}", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":5}", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":null}", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":5}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
         "\"arguments\":\"x\"}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":[]}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\",\"params\":{\"cursor\":{}}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":5}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\",\"params\":{}}", -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":[]}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"simple\","
         "\"arguments\":[]}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":5}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\"}", -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\",\"params\":{\"ref\":"
         "\"x\"}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\",\"params\":{\"ref\":{"
         "\"type\":\"ref/other\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}}",
         -32602},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
         "\"2025-11-25\"}}",
         -32600},
    };
    capture *c = capture_new(100);
    capture_init(c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_send(c, cases[i].msg);
        json_t *e = capture_take_error(c, cases[i].code);
        if (e == NULL)
            fail_msg("case %zu: %s", i, cases[i].msg);
        assert_int_equal(json_integer_value(json_object_get(e, "id")), 1);
        json_decref(e);
        assert_null(capture_take(c));
    }
    /* A _meta.progressToken of the wrong type is ignored, not an error. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"slow\",\"arguments\":{\"steps\":1,\"step_ms\":0},\"_meta\":{"
                    "\"progressToken\":{}}}}");
    json_t *r = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    json_decref(r);
    assert_null(capture_take(c));
    capture_free(c);
}

static void message_limit_is_configurable(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "small", "1");
    cfg.max_message = 1024;
    cfg.max_depth = 4;
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    capture *c = capture_on(srv);
    char msg[1100];
    int head = snprintf(msg, sizeof msg,
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
                        "\"params\":{\"x\":\"");
    memset(msg + head, 'a', 1000);
    memcpy(msg + head + 1000, "\"}}", 4);
    expect_error_then_serving(c, msg, strlen(msg), -32600);
    const char *deep =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":[[[1]]]}}";
    expect_error_then_serving(c, deep, strlen(deep), -32600);
    capture_free(c);
    mcpage_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(depth_scan_counts_containers_outside_strings),
        cmocka_unit_test(parse_reports_size_depth_and_syntax),
        cmocka_unit_test(every_truncation_of_a_request_is_a_parse_error),
        cmocka_unit_test(bad_text_encodings_are_parse_errors),
        cmocka_unit_test(huge_and_deep_messages_are_invalid_requests),
        cmocka_unit_test(wrong_field_types_get_errors_with_the_id),
        cmocka_unit_test(message_limit_is_configurable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
