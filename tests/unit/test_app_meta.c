/*
 * Tests for the registry's _meta (what an MCP App needs of the library):
 * a tool's _meta in tools/list (merged with maxResultSizeChars), a
 * resource's _meta in resources/list and on its own resources/read items,
 * the io.modelcontextprotocol/ui extension declared in both eras when a
 * view is registered (and not otherwise), and a _meta that is not a JSON
 * object refused at registration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "support/mcp_capture.h"

static const char VIEW[] = "<!DOCTYPE html><html><body>view</body></html>";

static int noop(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    return mcpage_result_add_text(res, "ok", 2);
}

/* Reads the view and, beside it, an item of another uri (which must not get the view's _meta). */
static int read_view(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    int rc = mcpage_contents_add_text(out, uri, MCPAGE_APP_MIME_TYPE, VIEW, strlen(VIEW));
    return rc ? rc : mcpage_contents_add_text(out, "ui://t/other.css", "text/css", "b{}", 3);
}

static mcpage_server *app_server(bool with_view)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "app-test", "1.0.0");
    mcpage_server *srv = NULL;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool shown = {.name = "shown",
                         .handler = noop,
                         .max_result_chars = 1234,
                         .meta = "{\"ui\":{\"resourceUri\":\"ui://t/view.html\"}}"};
    assert_int_equal(mcpage_server_add_tool(srv, &shown), 0);
    mcpage_tool app_only = {.name = "app_only",
                            .handler = noop,
                            .meta = "{\"ui\":{\"resourceUri\":\"ui://t/view.html\","
                                    "\"visibility\":[\"app\"]}}"};
    assert_int_equal(mcpage_server_add_tool(srv, &app_only), 0);
    mcpage_tool plain = {.name = "plain", .handler = noop};
    assert_int_equal(mcpage_server_add_tool(srv, &plain), 0);
    mcpage_resource r = {.uri = "ui://t/view.html",
                         .name = "view",
                         .mime_type = with_view ? MCPAGE_APP_MIME_TYPE : "text/html",
                         .size = -1,
                         .read = read_view,
                         .meta = "{\"ui\":{\"csp\":{},\"prefersBorder\":true}}"};
    assert_int_equal(mcpage_server_add_resource(srv, &r), 0);
    return srv;
}

static json_t *request(capture *c, const char *msg)
{
    capture_send(c, msg);
    json_t *r = capture_take(c);
    assert_non_null(r);
    assert_non_null(json_object_get(r, "result"));
    return r;
}

static void tool_meta_is_listed_and_merged(void **state)
{
    (void)state;
    mcpage_server *srv = app_server(true);
    capture *c = capture_on(srv);
    capture_init(c);
    json_t *r = request(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    const json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
    assert_int_equal(json_array_size(tools), 3);
    const json_t *m0 = json_object_get(json_array_get(tools, 0), "_meta");
    assert_int_equal(json_integer_value(json_object_get(m0, "anthropic/maxResultSizeChars")), 1234);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(m0, "ui"), "resourceUri")),
        "ui://t/view.html");
    const json_t *m1 = json_object_get(json_array_get(tools, 1), "_meta");
    assert_null(json_object_get(m1, "anthropic/maxResultSizeChars"));
    const json_t *vis = json_object_get(json_object_get(m1, "ui"), "visibility");
    assert_int_equal(json_array_size(vis), 1);
    assert_string_equal(json_string_value(json_array_get(vis, 0)), "app");
    assert_null(json_object_get(json_array_get(tools, 2), "_meta"));
    json_decref(r);
    capture_free(c);
    mcpage_server_free(srv);
}

static void resource_meta_is_listed_and_read_on_its_own_items(void **state)
{
    (void)state;
    mcpage_server *srv = app_server(true);
    capture *c = capture_on(srv);
    capture_init(c);
    json_t *r = request(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}");
    const json_t *res =
        json_array_get(json_object_get(json_object_get(r, "result"), "resources"), 0);
    assert_string_equal(json_string_value(json_object_get(res, "mimeType")), MCPAGE_APP_MIME_TYPE);
    const json_t *ui = json_object_get(json_object_get(res, "_meta"), "ui");
    assert_true(json_is_object(json_object_get(ui, "csp")));
    assert_int_equal(json_object_size(json_object_get(ui, "csp")), 0);
    assert_true(json_is_true(json_object_get(ui, "prefersBorder")));
    json_decref(r);

    r = request(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
                   "\"params\":{\"uri\":\"ui://t/view.html\"}}");
    const json_t *items = json_object_get(json_object_get(r, "result"), "contents");
    assert_int_equal(json_array_size(items), 2);
    const json_t *view = json_array_get(items, 0);
    assert_string_equal(json_string_value(json_object_get(view, "text")), VIEW);
    ui = json_object_get(json_object_get(view, "_meta"), "ui");
    assert_int_equal(json_object_size(json_object_get(ui, "csp")), 0);
    assert_true(json_is_object(json_object_get(ui, "csp")));
    assert_null(json_object_get(json_array_get(items, 1), "_meta"));
    json_decref(r);
    capture_free(c);
    mcpage_server_free(srv);
}

/* The initialize result's capabilities.extensions (NULL when absent). */
static json_t *initialize_extensions(mcpage_server *srv)
{
    capture *c = capture_on(srv);
    json_t *r = request(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                           "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    json_t *ext = json_object_get(json_object_get(json_object_get(r, "result"), "capabilities"),
                                  "extensions");
    json_incref(ext);
    json_decref(r);
    capture_free(c);
    return ext;
}

static void the_extension_is_declared_only_with_a_view(void **state)
{
    (void)state;
    mcpage_server *srv = app_server(true);
    json_t *ext = initialize_extensions(srv);
    assert_true(json_is_object(json_object_get(ext, MCPAGE_APP_EXTENSION)));
    json_decref(ext);
    /* The modern era's server/discover says the same. */
    capture *c = capture_on(srv);
    json_t *r = request(
        c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{"
           "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
           "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    const json_t *caps = json_object_get(json_object_get(r, "result"), "capabilities");
    assert_true(
        json_is_object(json_object_get(json_object_get(caps, "extensions"), MCPAGE_APP_EXTENSION)));
    json_decref(r);
    capture_free(c);
    mcpage_server_free(srv);

    srv = app_server(false);
    ext = initialize_extensions(srv);
    assert_null(ext);
    mcpage_server_free(srv);
}

static void meta_that_is_not_an_object_is_refused(void **state)
{
    (void)state;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "app-test", "1.0.0");
    mcpage_server *srv = NULL;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    const char *bad[] = {"[\"ui\"]", "{\"ui\":", "\"ui\"", "{\"a\":1,\"a\":2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mcpage_tool t = {.name = "t", .handler = noop, .meta = bad[i]};
        assert_int_equal(mcpage_server_add_tool(srv, &t), MCPAGE_EPARSE);
        mcpage_resource r = {.uri = "ui://t/v", .name = "v", .read = read_view, .meta = bad[i]};
        assert_int_equal(mcpage_server_add_resource(srv, &r), MCPAGE_EPARSE);
    }
    /* Nothing half-registered: the names are still free. */
    mcpage_tool t = {.name = "t", .handler = noop, .meta = "{}"};
    assert_int_equal(mcpage_server_add_tool(srv, &t), 0);
    mcpage_resource r = {.uri = "ui://t/v", .name = "v", .read = read_view};
    assert_int_equal(mcpage_server_add_resource(srv, &r), 0);
    mcpage_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tool_meta_is_listed_and_merged),
        cmocka_unit_test(resource_meta_is_listed_and_read_on_its_own_items),
        cmocka_unit_test(the_extension_is_declared_only_with_a_view),
        cmocka_unit_test(meta_that_is_not_an_object_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
