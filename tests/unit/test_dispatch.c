/*
 * Tests for the runtime's dispatch: lifecycle and version negotiation,
 * JSON-RPC envelope errors, tools/call (validation, defaults, errors,
 * content types, output schemas), the four paged lists, resources,
 * prompts, completion, logging, progress, cancellation, duplicate ids
 * and the in-flight bound. Each test drives a real session over the
 * fixture registry and reads back what it sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "fixture_registry.h"
#include "support/mcp_capture.h"

static const char *text_of(const json_t *response, size_t block)
{
    const json_t *content = json_object_get(json_object_get(response, "result"), "content");
    return json_string_value(json_object_get(json_array_get(content, block), "text"));
}

static bool is_error_result(const json_t *response)
{
    return json_is_true(json_object_get(json_object_get(response, "result"), "isError"));
}

static void sendf(capture *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sendf(capture *c, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    capture_send(c, buf);
}

static json_t *call_tool(capture *c, int id, const char *name, const char *args)
{
    sendf(c,
          "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
          "\"arguments\":%s}}",
          id, name, args);
    json_t *r = capture_take(c);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), id);
    return r;
}

/* ------------------------------------------------------------ lifecycle */

static void initialize_answers_a_supported_version_and_latest_otherwise(void **state)
{
    static const struct {
        const char *asked;
        const char *answered;
    } cases[] = {{"2025-11-25", "2025-11-25"},
                 {"2025-06-18", "2025-06-18"},
                 {"2025-03-26", "2025-03-26"},
                 {"2024-11-05", "2025-11-25"},
                 {"1999-01-01", "2025-11-25"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture *c = capture_new(100);
        assert_false(mcpage_session_initialized(c->s));
        assert_null(mcpage_session_protocol_version(c->s));
        sendf(c,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
              "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
              "\"version\":\"1\"}}}",
              cases[i].asked);
        json_t *r = capture_take(c);
        json_t *res = json_object_get(r, "result");
        assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")),
                            cases[i].answered);
        assert_string_equal(mcpage_session_protocol_version(c->s), cases[i].answered);
        json_t *info = json_object_get(res, "serverInfo");
        assert_string_equal(json_string_value(json_object_get(info, "name")), "fixture");
        assert_string_equal(json_string_value(json_object_get(info, "version")), "1.0.0");
        /* Titles arrived in 2025-06-18; the older revision does not get one. */
        bool old = strcmp(cases[i].answered, "2025-03-26") == 0;
        assert_int_equal(json_object_get(info, "title") == NULL, old);
        assert_string_equal(json_string_value(json_object_get(res, "instructions")),
                            "Use it for tests.");
        json_t *caps = json_object_get(res, "capabilities");
        assert_non_null(json_object_get(caps, "tools"));
        assert_true(json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")));
        assert_non_null(json_object_get(caps, "prompts"));
        assert_non_null(json_object_get(caps, "logging"));
        assert_non_null(json_object_get(caps, "completions"));
        json_decref(r);
        capture_free(c);
    }
}

static void requests_before_initialize_are_refused_but_ping_works(void **state)
{
    capture *c = capture_new(100);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    json_t *e = capture_take_error(c, -32600);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "id")), 1);
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(e, "error"), "message")), "initialize"));
    json_decref(e);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
    json_t *p = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(p, "id")), "p");
    assert_true(json_is_object(json_object_get(p, "result")));
    assert_int_equal(json_object_size(json_object_get(p, "result")), 0);
    json_decref(p);
    capture_free(c);
}

static void second_initialize_is_an_error(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-06-18\"}}");
    json_decref(capture_take_error(c, -32600));
    assert_string_equal(mcpage_session_protocol_version(c->s), "2025-11-25");
    capture_free(c);
}

static void initialize_without_protocol_version_is_invalid_params(void **state)
{
    capture *c = capture_new(100);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
    json_decref(capture_take_error(c, -32602));
    assert_false(mcpage_session_initialized(c->s));
    capture_free(c);
}

/* ------------------------------------------------------------ envelope */

static void envelope_errors_get_their_codes(void **state)
{
    static const struct {
        const char *msg;
        int code;
        int id; /* expected id, or -1 for null */
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", -32601, 1},
        {"{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", -32600, 2},
        {"{\"id\":3,\"method\":\"ping\"}", -32600, 3},
        {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":5}", -32600, 4},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":\"x\"}", -32600, 5},
        {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":[]}", -32602, 6},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", -32600, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":7}", -32600, 7},
        {"[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]", -32600, -1},
        {"[]", -32600, -1},
        {"42", -32600, -1},
        {"\"ping\"", -32600, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"", -32700, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":9,\"id\":10,\"method\":\"ping\"}", -32700, -1},
        {"", -32700, -1},
        {"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{}}", -32602, 11},
        {"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}",
         -32602, 12},
        {"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
         "\"arguments\":[1]}}",
         -32602, 13},
        {"{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}",
         -32602, 14},
        {"{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
         "\"loud\"}}",
         -32602, 15},
        {"{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"resources/read\",\"params\":{}}", -32602, 16},
        {"{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"prompts/get\",\"params\":{\"name\":\"zz\"}}",
         -32602, 17},
    };
    capture *c = capture_new(100);
    capture_init(c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_send(c, cases[i].msg);
        json_t *e = capture_take_error(c, cases[i].code);
        if (e == NULL)
            fail_msg("case %zu: %s", i, cases[i].msg);
        json_t *id = json_object_get(e, "id");
        if (cases[i].id < 0)
            assert_true(json_is_null(id));
        else
            assert_int_equal(json_integer_value(id), cases[i].id);
        assert_true(json_is_string(json_object_get(json_object_get(e, "error"), "message")));
        assert_null(capture_take(c)); /* exactly one reply */
        json_decref(e);
    }
    /* Still serving. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}");
    json_t *p = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(p, "id")), 99);
    json_decref(p);
    assert_int_equal(c->raw_bad, 0);
    capture_free(c);
}

static void notifications_and_responses_get_no_reply(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                    "{\"requestId\":12345}}");
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}");
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"s2\",\"error\":{\"code\":1,\"message\":\"x\"}}");
    assert_null(capture_take(c));
    capture_free(c);
}

/* ------------------------------------------------------------ tools/call */

static void tool_arguments_get_defaults_and_validation(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    json_t *r = call_tool(c, 1, "echo", "{\"text\":\"hi\"}");
    assert_false(is_error_result(r));
    assert_string_equal(text_of(r, 0), "hi");
    assert_null(text_of(r, 1)); /* repeat defaulted to 1 */
    json_decref(r);

    r = call_tool(c, 2, "echo", "{\"text\":\"hi\",\"repeat\":2.0}");
    assert_string_equal(text_of(r, 1), "hi"); /* 2.0 accepted as the integer 2 */
    json_decref(r);

    static const struct {
        const char *tool, *args, *needle;
    } bad[] = {
        {"echo", "{}", "missing required parameter 'text'"},
        {"echo", "{\"text\":5}", "parameter 'text' must be of type string, got an integer (5)"},
        {"echo", "{\"text\":\"a\",\"repeat\":9}", "parameter 'repeat' must be <= 5, got 9"},
        {"echo", "{\"text\":\"a\",\"repeat\":0}", "parameter 'repeat' must be >= 1, got 0"},
        {"echo", "{\"text\":\"a\",\"repeat\":1.5}", "parameter 'repeat' must be of type integer"},
        {"echo", "{\"text\":\"a\",\"loud\":true}",
         "unknown parameter 'loud'; accepted parameters: text, repeat"},
        {"fail", "{\"mode\":\"other\"}", "parameter 'mode' must be one of [\"status\",\"result\"]"},
        {"stats", "{\"label\":\"\"}", "parameter 'label' must be at least 1 characters long"},
        {"types", "{\"tags\":[]}", "parameter 'tags' must have at least 1 items, got 0"},
        {"types", "{\"tags\":[\"a\",2]}", "parameter 'tags[1]' must be of type string"},
        {"types", "{\"obj\":{\"k\":\"x\"}}", "parameter 'obj.k' must be of type integer"},
        {"types", "{\"obj\":{\"q\":1}}", "unknown parameter 'obj.q'"},
        {"types", "{\"opt\":3}", "parameter 'opt' must be of type string or null"},
        {"types", "{\"z\":0}", "parameter 'z' must be of type null"},
        {"types", "{\"b\":\"true\"}", "parameter 'b' must be of type boolean"},
        {"types", "{\"n\":\"1\"}", "parameter 'n' must be of type number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = call_tool(c, (int)(10 + i), bad[i].tool, bad[i].args);
        assert_true(is_error_result(r));
        const char *t = text_of(r, 0);
        if (t == NULL || strstr(t, bad[i].needle) == NULL)
            fail_msg("case %zu: wanted '%s' in '%s'", i, bad[i].needle, t ? t : "(null)");
        assert_non_null(strstr(t, "Fix this argument"));
        json_decref(r);
    }
    r = call_tool(c, 40, "types",
                  "{\"s\":\"x\",\"i\":3,\"n\":1.5,\"b\":false,\"z\":null,\"opt\":null,"
                  "\"tags\":[\"a\"],\"obj\":{}}");
    assert_false(is_error_result(r));
    assert_string_equal(text_of(r, 0), "{\"b\":false,\"i\":3,\"n\":1.5,\"obj\":{\"k\":7},"
                                       "\"opt\":null,\"s\":\"x\",\"tags\":[\"a\"],\"z\":null}");
    json_decref(r);
    capture_free(c);
}

static void handler_failures_are_error_results(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    json_t *r = call_tool(c, 1, "fail", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(text_of(r, 0), "Tool 'fail' failed: input/output error");
    json_decref(r);
    r = call_tool(c, 2, "fail", "{\"mode\":\"result\"}");
    assert_true(is_error_result(r));
    assert_string_equal(text_of(r, 0), "the fixture failed on purpose (mode result)");
    json_decref(r);
    capture_free(c);
}

static void every_content_type_is_serialized(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    json_t *r = call_tool(c, 1, "media", "{}");
    json_t *content = json_object_get(json_object_get(r, "result"), "content");
    assert_int_equal(json_array_size(content), 6);
    static const char *const types[] = {"text",          "image",    "audio",
                                        "resource_link", "resource", "resource"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(content, i), "type")),
                            types[i]);
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 1), "data")),
                        "iVBORw0KGgo=");
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 2), "mimeType")),
                        "audio/wav");
    json_t *link = json_array_get(content, 3);
    assert_string_equal(json_string_value(json_object_get(link, "uri")), "fixture://readme");
    assert_int_equal(json_integer_value(json_object_get(link, "size")), 23);
    json_t *emb = json_object_get(json_array_get(content, 4), "resource");
    assert_string_equal(json_string_value(json_object_get(emb, "text")), "fixture read-me text.\n");
    json_t *blob = json_object_get(json_array_get(content, 5), "resource");
    assert_string_equal(json_string_value(json_object_get(blob, "blob")), "iVBORw0KGgo=");
    json_decref(r);
    capture_free(c);
}

/* Output validation is on by default only in builds without NDEBUG: the
 * test turns it on itself, so a release build checks the same thing. */
static void structured_content_is_checked_against_output_schema(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fixture", "1.0.0");
    cfg.validate_output = true;
    mcpage_server *srv = NULL;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    assert_int_equal(fixture_register(srv), 0);
    capture *c = capture_on(srv);
    assert_non_null(c);
    capture_init(c);
    json_t *r = call_tool(c, 1, "stats", "{\"label\":\"x\"}");
    assert_false(is_error_result(r));
    json_t *sc = json_object_get(json_object_get(r, "result"), "structuredContent");
    assert_int_equal(json_integer_value(json_object_get(sc, "count")), 3);
    assert_string_equal(json_string_value(json_object_get(sc, "label")), "x");
    json_decref(r);
    r = call_tool(c, 2, "bad_output", "{}");
    assert_true(is_error_result(r));
    assert_non_null(strstr(text_of(r, 0), "does not match its outputSchema"));
    assert_null(json_object_get(json_object_get(r, "result"), "structuredContent"));
    json_decref(r);
    capture_free(c);
    mcpage_server_free(srv);
}

/* ------------------------------------------------------------ lists */

/* Walks a list to its end; returns every item and checks page sizes. */
static json_t *walk(capture *c, const char *method, const char *field, size_t page, size_t *pages)
{
    json_t *all = json_array();
    char cursor[1024] = "";
    *pages = 0;
    for (;;) {
        if (cursor[0])
            sendf(c,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{\"cursor\":\"%s\"}}",
                  method, cursor);
        else
            sendf(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{}}", method);
        json_t *r = capture_take(c);
        json_t *res = json_object_get(r, "result");
        assert_non_null(res);
        json_t *items = json_object_get(res, field);
        assert_true(json_array_size(items) <= page);
        json_array_extend(all, items);
        (*pages)++;
        json_t *next = json_object_get(res, "nextCursor");
        if (next == NULL) {
            json_decref(r);
            break;
        }
        assert_int_equal(json_array_size(items), page); /* only the last page is short */
        snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
        json_decref(r);
        assert_true(*pages < 10000);
    }
    return all;
}

static void lists_page_to_the_end_without_repeats(void **state)
{
    capture *c = capture_new(3);
    capture_init(c);
    size_t pages;
    json_t *tools = walk(c, "tools/list", "tools", 3, &pages);
    assert_int_equal(json_array_size(tools), 8);
    assert_int_equal(pages, 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
                        "echo");
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 7), "name")),
                        "types");
    json_t *echo = json_array_get(tools, 0);
    assert_true(
        json_is_true(json_object_get(json_object_get(echo, "annotations"), "readOnlyHint")));
    assert_non_null(json_object_get(json_array_get(tools, 5), "outputSchema"));
    json_decref(tools);

    json_t *prompts = walk(c, "prompts/list", "prompts", 3, &pages);
    assert_int_equal(json_array_size(prompts), 3);
    assert_int_equal(pages, 1);
    json_t *greet_args = json_object_get(json_array_get(prompts, 0), "arguments");
    assert_true(json_is_true(json_object_get(json_array_get(greet_args, 0), "required")));
    assert_true(json_is_false(json_object_get(json_array_get(greet_args, 1), "required")));
    json_decref(prompts);

    json_t *templates = walk(c, "resources/templates/list", "resourceTemplates", 3, &pages);
    assert_int_equal(json_array_size(templates), 2);
    json_decref(templates);
    capture_free(c);
}

static void resources_walk_covers_static_and_provider_resources(void **state)
{
    const size_t sizes[] = {1, 7, 100, 2502, 5000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        capture *c = capture_new(sizes[k]);
        capture_init(c);
        size_t pages;
        json_t *all = walk(c, "resources/list", "resources", sizes[k], &pages);
        assert_int_equal(json_array_size(all), 2 + FIXTURE_PROVIDER_RESOURCES);
        assert_string_equal(json_string_value(json_object_get(json_array_get(all, 0), "uri")),
                            "fixture://readme");
        for (size_t i = 0; i < FIXTURE_PROVIDER_RESOURCES; i++) {
            char want[64];
            snprintf(want, sizeof want, "fixture://items/%04zu", i);
            assert_string_equal(
                json_string_value(json_object_get(json_array_get(all, i + 2), "uri")), want);
        }
        json_decref(all);
        capture_free(c);
    }
}

static void bad_cursors_are_invalid_params(void **state)
{
    capture *c = capture_new(3);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
                    "\"cursor\":\"garbage\"}}");
    json_t *e = capture_take_error(c, -32602);
    assert_non_null(e);
    json_t *err = json_object_get(e, "error");
    const char *msg = json_string_value(json_object_get(err, "message"));
    assert_non_null(strstr(msg, "Invalid cursor for tools/list: "));
    assert_null(strstr(msg, "next_cursor")); /* the lists' field is nextCursor */
    assert_string_equal(json_string_value(json_object_get(json_object_get(err, "data"), "reason")),
                        "malformed");
    json_decref(e);
    /* A prompts/list cursor is not a tools/list cursor. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    json_t *r = capture_take(c);
    char cursor[1024];
    snprintf(cursor, sizeof cursor, "%s",
             json_string_value(json_object_get(json_object_get(r, "result"), "nextCursor")));
    json_decref(r);
    sendf(c,
          "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\",\"params\":{\"cursor\":"
          "\"%s\"}}",
          cursor);
    e = capture_take_error(c, -32602);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(e, "error"), "data"), "reason")),
                        "other_tool");
    json_decref(e);
    capture_free(c);
}

/* ------------------------------------------------------------ resources, prompts */

static void resources_read_static_provider_template_and_missing(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    static const struct {
        const char *uri, *key, *value;
    } ok[] = {{"fixture://readme", "text", "fixture read-me text.\n"},
              {"fixture://logo", "blob", "iVBORw0KGgo="},
              {"fixture://items/0042", "text", "item 42"},
              {"fixture://notes/a%2Fb", "text", "note a/b"},
              {"fixture://pairs/x/y", "text", "note (null)"}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (i == 4)
            break; /* pairs has no "id" variable: covered by the match test */
        sendf(c,
              "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"resources/read\",\"params\":{\"uri\":"
              "\"%s\"}}",
              i, ok[i].uri);
        json_t *r = capture_take(c);
        json_t *item = json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0);
        assert_string_equal(json_string_value(json_object_get(item, "uri")), ok[i].uri);
        assert_string_equal(json_string_value(json_object_get(item, ok[i].key)), ok[i].value);
        json_decref(r);
    }
    const char *missing[] = {"fixture://nothing", "fixture://items/2500", "fixture://notes/missing",
                             "fixture://notes/a/b"};
    for (size_t i = 0; i < 4; i++) {
        sendf(c,
              "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":{\"uri\":"
              "\"%s\"}}",
              missing[i]);
        json_t *e = capture_take_error(c, -32002);
        assert_non_null(e);
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_object_get(e, "error"), "data"), "uri")),
                            missing[i]);
        json_decref(e);
    }
    capture_free(c);
}

static void subscriptions_gate_updated_notifications(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    assert_int_equal(mcpage_session_resource_updated(c->s, "fixture://readme"), 0);
    assert_null(capture_take(c));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\",\"params\":"
                    "{\"uri\":\"fixture://readme\"}}");
    json_decref(capture_take(c));
    assert_int_equal(mcpage_session_resource_updated(c->s, "fixture://readme"), 0);
    json_t *n = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(n, "method")),
                        "notifications/resources/updated");
    json_decref(n);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/unsubscribe\","
                    "\"params\":{\"uri\":\"fixture://readme\"}}");
    json_decref(capture_take(c));
    mcpage_session_resource_updated(c->s, "fixture://readme");
    assert_null(capture_take(c));
    capture_free(c);
}

static void prompts_get_checks_required_arguments(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{"
                    "\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\",\"style\":\"formal\"}}}");
    json_t *r = capture_take(c);
    json_t *res = json_object_get(r, "result");
    assert_string_equal(json_string_value(json_object_get(res, "description")), "A greeting");
    json_t *msg = json_array_get(json_object_get(res, "messages"), 0);
    assert_string_equal(json_string_value(json_object_get(msg, "role")), "user");
    assert_string_equal(json_string_value(json_object_get(json_object_get(msg, "content"), "text")),
                        "Greet Ada in a formal style.");
    json_decref(r);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{"
                    "\"name\":\"greet\"}}");
    json_t *e = capture_take_error(c, -32602);
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(e, "error"), "message")), "'name'"));
    json_decref(e);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{"
                    "\"name\":\"greet\",\"arguments\":{\"name\":1}}}");
    json_decref(capture_take_error(c, -32602));
    capture_free(c);
}

static void completion_caps_values_at_100(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\",\"params\":{"
                    "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"fixture://notes/{id}\"},"
                    "\"argument\":{\"name\":\"id\",\"value\":\"n\"}}}");
    json_t *r = capture_take(c);
    json_t *comp = json_object_get(json_object_get(r, "result"), "completion");
    assert_int_equal(json_array_size(json_object_get(comp, "values")), 100);
    assert_int_equal(json_integer_value(json_object_get(comp, "total")), 150);
    assert_true(json_is_true(json_object_get(comp, "hasMore")));
    json_decref(r);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"completion/complete\",\"params\":{"
                    "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},"
                    "\"argument\":{\"name\":\"style\",\"value\":\"f\"}}}");
    r = capture_take(c);
    comp = json_object_get(json_object_get(r, "result"), "completion");
    json_t *want = json_pack("[s,s]", "formal", "friendly");
    assert_true(json_equal(json_object_get(comp, "values"), want));
    assert_true(json_is_false(json_object_get(comp, "hasMore")));
    json_decref(want);
    json_decref(r);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"completion/complete\",\"params\":{"
                    "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"},"
                    "\"argument\":{\"name\":\"style\",\"value\":\"f\"}}}");
    json_decref(capture_take_error(c, -32602));
    capture_free(c);
}

/* ------------------------------------------------------------ notifications */

static void log_level_filters_messages(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    json_t *r;
    /* Default threshold info: info, warning, error pass; debug does not. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"log\",\"arguments\":{\"message\":\"m\"}}}");
    const char *want1[] = {"info", "warning", "error"};
    for (int i = 0; i < 3; i++) {
        r = capture_take(c);
        assert_string_equal(json_string_value(json_object_get(r, "method")),
                            "notifications/message");
        json_t *p = json_object_get(r, "params");
        assert_string_equal(json_string_value(json_object_get(p, "level")), want1[i]);
        assert_string_equal(json_string_value(json_object_get(p, "logger")), "fixture");
        json_decref(r);
    }
    json_decref(capture_take(c)); /* the result */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{"
                    "\"level\":\"error\"}}");
    json_decref(capture_take(c));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"log\",\"arguments\":{\"message\":\"m\"}}}");
    r = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "params"), "data")),
                        "error: m");
    json_decref(r);
    r = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 3);
    json_decref(r);
    capture_free(c);
}

static void progress_is_sent_only_with_a_token(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"slow\",\"arguments\":{\"steps\":4,\"step_ms\":1},\"_meta\":{"
                    "\"progressToken\":77}}}");
    for (int i = 1; i <= 4; i++) {
        json_t *n = capture_take(c);
        json_t *p = json_object_get(n, "params");
        assert_string_equal(json_string_value(json_object_get(n, "method")),
                            "notifications/progress");
        assert_int_equal(json_integer_value(json_object_get(p, "progressToken")), 77);
        assert_int_equal(json_integer_value(json_object_get(p, "progress")), i);
        assert_int_equal(json_integer_value(json_object_get(p, "total")), 4);
        json_decref(n);
    }
    json_t *r = capture_take(c);
    assert_string_equal(text_of(r, 0), "completed 4 steps");
    json_decref(r);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"slow\",\"arguments\":{\"steps\":2,\"step_ms\":1}}}");
    r = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    json_decref(r);
    assert_null(capture_take(c));
    capture_free(c);
}

static void cancelled_calls_send_no_response(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"slow\",\"arguments\":{\"steps\":500,\"step_ms\":10}}}";
    mcpage_session_receive(c->s, call, strlen(call));
    /* Ping is answered while the call runs. */
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}";
    mcpage_session_receive(c->s, ping, strlen(ping));
    json_t *p = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(p, "id")), "p");
    json_decref(p);
    assert_int_equal(mcpage_session_drain(c->s, 50), MCPAGE_ESTATE); /* still running */
    const char *cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                         "\"params\":{\"requestId\":\"long\",\"reason\":\"test\"}}";
    mcpage_session_receive(c->s, cancel, strlen(cancel));
    assert_int_equal(mcpage_session_drain(c->s, 5000), 0);
    assert_null(capture_take(c));
    capture_free(c);
}

static void duplicate_in_flight_ids_are_refused(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"slow\",\"arguments\":{\"steps\":20,\"step_ms\":10}}}";
    mcpage_session_receive(c->s, call, strlen(call));
    mcpage_session_receive(c->s, call, strlen(call));
    json_t *e = capture_take_error(c, -32600);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "id")), 7);
    json_decref(e);
    mcpage_session_drain(c->s, -1);
    json_t *r = capture_take(c);
    assert_string_equal(text_of(r, 0), "completed 20 steps");
    json_decref(r);
    assert_null(capture_take(c));
    /* Once finished, the id may be used again. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"echo\",\"arguments\":{\"text\":\"again\"}}}");
    r = capture_take(c);
    assert_string_equal(text_of(r, 0), "again");
    json_decref(r);
    capture_free(c);
}

static void calls_past_the_inflight_bound_get_server_busy(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "busy", "1");
    cfg.workers = 1;
    cfg.max_inflight = 2;
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    assert_int_equal(fixture_register(srv), 0);
    capture *c = capture_on(srv);
    capture_init(c);
    for (int i = 1; i <= 3; i++) {
        char call[256];
        snprintf(call, sizeof call,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"slow\",\"arguments\":{\"steps\":5,\"step_ms\":20}}}",
                 i);
        mcpage_session_receive(c->s, call, strlen(call));
    }
    json_t *e = capture_take_error(c, -32000);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "id")), 3);
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(e, "error"), "message")), "busy"));
    json_decref(e);
    mcpage_session_drain(c->s, -1);
    int done = 0;
    for (json_t *r; (r = capture_take(c)) != NULL; json_decref(r))
        done += text_of(r, 0) != NULL;
    assert_int_equal(done, 2);
    capture_free(c);
    mcpage_server_free(srv);
}

static void freeing_a_session_with_running_calls_is_safe(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"slow\",\"arguments\":{\"steps\":5,\"step_ms\":10}}}";
    mcpage_session_receive(c->s, call, strlen(call));
    mcpage_session *s = c->s;
    mcpage_session_free(s); /* detached: the call finishes and sends nothing */
    mcpage_server *srv = c->srv;
    capture_clear(c);
    mcpage_server_free(srv); /* joins the worker after the call */
    assert_null(capture_take(c));
    free(c->lock);
    free(c);
}

static int noop_tool(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    return 0;
}

static void registration_is_frozen_once_a_session_exists(void **state)
{
    capture *c = capture_new(100);
    mcpage_tool t = {.name = "late", .handler = noop_tool};
    assert_int_equal(mcpage_server_add_tool(c->srv, &t), MCPAGE_ESTATE);
    capture_free(c);
}

static void registration_checks_names_and_schemas(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "reg", "1");
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool t = {.name = "ok_name-1.x", .handler = noop_tool};
    assert_int_equal(mcpage_server_add_tool(srv, &t), 0);
    assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EEXIST);
    t.name = "bad name";
    assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EINVAL);
    t.name = "s1";
    t.input_schema = "{\"type\":\"array\"}";
    assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EPARSE);
    t.input_schema = "{\"type\":\"object\",";
    assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EPARSE);
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"minimum\":\"x\"}}}";
    assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EPARSE);
    mcpage_server_config bad = cfg;
    bad.workers = 0;
    mcpage_server *none;
    assert_int_equal(mcpage_server_new(&bad, &none), MCPAGE_EINVAL);
    mcpage_server_free(srv);
}

static void messages_name_the_request_they_belong_to(void **state)
{
    capture *c = capture_new(100);
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"q\\\"1\",\"method\":\"tools/call\","
                    "\"params\":{\"name\":\"log\",\"arguments\":{\"message\":\"m\"}}}");
    char *rel;
    for (int i = 0; i < 4; i++) { /* three log messages and the response */
        json_t *m = capture_take_related(c, &rel);
        assert_non_null(m);
        assert_string_equal(rel, "\"q\\\"1\"");
        free(rel);
        json_decref(m);
    }
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\"}");
    json_decref(capture_take_related(c, &rel));
    assert_string_equal(rel, "42");
    free(rel);
    capture_send(c, "nonsense");
    json_decref(capture_take_related(c, &rel));
    assert_null(rel);
    mcpage_session_log(c->s, MCPAGE_LOG_ERROR, NULL, "unrelated");
    json_t *m = capture_take_related(c, &rel);
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "params"), "data")),
                        "unrelated");
    assert_null(rel);
    json_decref(m);
    capture_free(c);
}

static void receive_says_what_the_message_was(void **state)
{
    capture *c = capture_new(100);
    static const struct {
        const char *msg;
        mcpage_received want;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", MCPAGE_RECEIVED_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}", MCPAGE_RECEIVED_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
         MCPAGE_RECEIVED_NOTIFICATION},
        {"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", MCPAGE_RECEIVED_NOTIFICATION},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCPAGE_RECEIVED_INVALID},
        {"[1]", MCPAGE_RECEIVED_INVALID},
        {"{", MCPAGE_RECEIVED_INVALID},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(mcpage_session_receive(c->s, cases[i].msg, strlen(cases[i].msg)),
                         cases[i].want);
    capture_free(c);
}

/* ------------------------------------------------------------ uri templates */

static void uri_templates_match_and_expand(void **state)
{
    json_t *vars;
    assert_int_equal(mcpage_uri_template_match("notes://{id}/text", "notes://42/text", &vars), 0);
    assert_string_equal(json_string_value(json_object_get(vars, "id")), "42");
    json_decref(vars);
    assert_int_equal(mcpage_uri_template_match("a://{x}/{y}", "a://1/two%20words", &vars), 0);
    assert_string_equal(json_string_value(json_object_get(vars, "y")), "two words");
    json_decref(vars);
    assert_int_equal(mcpage_uri_template_match("a://{x}", "a://1/2", &vars), MCPAGE_ENOTFOUND);
    assert_int_equal(mcpage_uri_template_match("a://{x}", "a://", &vars), MCPAGE_ENOTFOUND);
    assert_int_equal(mcpage_uri_template_match("a://{x}", "b://1", &vars), MCPAGE_ENOTFOUND);
    assert_int_equal(mcpage_uri_template_match("a://{x}", "a://%zz", &vars), MCPAGE_ENOTFOUND);
    assert_int_equal(mcpage_uri_template_match("a://{x}", "a://%00", &vars), MCPAGE_ENOTFOUND);
    assert_int_equal(mcpage_uri_template_match("a://{x}.txt", "a://f.txt", &vars), 0);
    assert_string_equal(json_string_value(json_object_get(vars, "x")), "f");
    json_decref(vars);
    json_t *v = json_pack("{s:s, s:s}", "x", "a b/c", "y", "z");
    char *e = mcpage_uri_template_expand("a://{x}/{y}", v);
    assert_string_equal(e, "a://a%20b%2Fc/z");
    mcpage_free(e);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(initialize_answers_a_supported_version_and_latest_otherwise),
        cmocka_unit_test(requests_before_initialize_are_refused_but_ping_works),
        cmocka_unit_test(second_initialize_is_an_error),
        cmocka_unit_test(initialize_without_protocol_version_is_invalid_params),
        cmocka_unit_test(envelope_errors_get_their_codes),
        cmocka_unit_test(notifications_and_responses_get_no_reply),
        cmocka_unit_test(tool_arguments_get_defaults_and_validation),
        cmocka_unit_test(handler_failures_are_error_results),
        cmocka_unit_test(every_content_type_is_serialized),
        cmocka_unit_test(structured_content_is_checked_against_output_schema),
        cmocka_unit_test(lists_page_to_the_end_without_repeats),
        cmocka_unit_test(resources_walk_covers_static_and_provider_resources),
        cmocka_unit_test(bad_cursors_are_invalid_params),
        cmocka_unit_test(resources_read_static_provider_template_and_missing),
        cmocka_unit_test(subscriptions_gate_updated_notifications),
        cmocka_unit_test(prompts_get_checks_required_arguments),
        cmocka_unit_test(completion_caps_values_at_100),
        cmocka_unit_test(log_level_filters_messages),
        cmocka_unit_test(progress_is_sent_only_with_a_token),
        cmocka_unit_test(cancelled_calls_send_no_response),
        cmocka_unit_test(duplicate_in_flight_ids_are_refused),
        cmocka_unit_test(calls_past_the_inflight_bound_get_server_busy),
        cmocka_unit_test(freeing_a_session_with_running_calls_is_safe),
        cmocka_unit_test(registration_is_frozen_once_a_session_exists),
        cmocka_unit_test(registration_checks_names_and_schemas),
        cmocka_unit_test(messages_name_the_request_they_belong_to),
        cmocka_unit_test(receive_says_what_the_message_was),
        cmocka_unit_test(uri_templates_match_and_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
