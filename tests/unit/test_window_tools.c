/*
 * Tools declared with their window in one call (mcpage_server_add_list_tool
 * and its siblings): the inputSchema is the tool's own plus the generated
 * window parameters, and a window the runtime's schema check rejects is
 * answered with the page builder's remedy (the parameter, the expected
 * range, one valid example call), the same answer mcpage_list_begin gives,
 * before the handler runs. The runtime runs the page around the handler:
 * it begins it (a window the builder rejects never reaches the handler),
 * hands it over with mcpage_call_list(), and finishes or drops it after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage.h>

#include "support/tool_contract.h"

static const char *const item_fields[] = {"id", "name", NULL};
static const char *const item_ids[] = {"id", NULL};

static const mcpage_list_spec list_spec = {
    .tool = "list_items",
    .unit = "items",
    .default_limit = 20,
    .max_limit = 100,
    .fields = item_fields,
    .id_fields = item_ids,
};
static const mcpage_lines_spec lines_spec = {
    .tool = "read_text", .default_max_lines = 50, .max_max_lines = 500};
static const mcpage_bytes_spec bytes_spec = {
    .tool = "read_blob", .default_max_bytes = 1024, .max_max_bytes = 8192};
static const mcpage_grid_spec grid_spec = {
    .tool = "read_grid", .default_rows = 10, .max_rows = 100, .default_cols = 5, .max_cols = 50};

static atomic_int handler_runs; /* a rejected window must never reach a handler */

static int not_reached(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    atomic_fetch_add(&handler_runs, 1);
    return mcpage_result_add_text(res, "handler ran", 11);
}

/* A LIST tool on the runtime-run page: the numbers 1 to 50; "fail" and "refuse" misbehave. */
static const mcpage_list_spec count_spec = {
    .tool = "count", .unit = "numbers", .default_limit = 10, .max_limit = 20};

static int count(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    atomic_fetch_add(&handler_runs, 1);
    mcpage_list *pg = mcpage_call_list(call);
    if (pg == NULL || mcpage_call_lines(call) != NULL || mcpage_call_grid(call) != NULL)
        return MCPAGE_ESTATE;
    if (json_is_true(json_object_get(args, "fail")))
        return MCPAGE_EIO; /* the page is dropped: the result names the status */
    if (json_is_true(json_object_get(args, "refuse")))
        return mcpage_result_errorf(res, "refused"); /* an error result of its own */
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    mcpage_list_set_total(pg, 50, MCPAGE_GENERATION_NONE);
    int rc = 0;
    for (int64_t n = w->resume ? w->after[0].i + 1 : w->offset + 1; n <= 50 && rc == 0; n++) {
        mcpage_keypart pos = {.i = n};
        rc = mcpage_list_add(pg, json_pack("{s:I}", "n", (json_int_t)n), &pos, 1);
    }
    return rc; /* MCPAGE_PAGE_FULL is success */
}

static int no_window(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    bool none = mcpage_call_list(call) == NULL && mcpage_call_bytes(call) == NULL;
    return mcpage_result_add_text(res, none ? "none" : "page", 4);
}

static int setup(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "window-tools", "1.0.0");
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool t = {.handler = not_reached};
    t.name = "list_items";
    assert_int_equal(mcpage_server_add_list_tool(srv, &t, &list_spec), 0);
    t.name = "read_text";
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
                     "\"required\":[\"name\"]}";
    assert_int_equal(mcpage_server_add_lines_tool(srv, &t, &lines_spec), 0);
    t.input_schema = NULL;
    t.name = "read_blob";
    assert_int_equal(mcpage_server_add_bytes_tool(srv, &t, &bytes_spec), 0);
    t.name = "read_grid";
    assert_int_equal(mcpage_server_add_grid_tool(srv, &t, &grid_spec), 0);
    t.name = "count";
    t.handler = count;
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"fail\":{\"type\":\"boolean\"},"
                     "\"refuse\":{\"type\":\"boolean\"}}}";
    assert_int_equal(mcpage_server_add_list_tool(srv, &t, &count_spec), 0);
    mcpage_tool plain = {.name = "plain", .handler = no_window};
    assert_int_equal(mcpage_server_add_tool(srv, &plain), 0);
    /* The older way: mcpage_server_add_tool with the properties mcpage_*_schema generated,
       merged by hand into the tool's own schema (the spec a local copy that goes away). */
    {
        mcpage_list_spec hand = list_spec;
        hand.tool = "hand_list";
        json_t *props = mcpage_list_schema(mcpage_server_pager(srv), &hand);
        hand.tool = "gone";
        mcpage_lines_spec hand_lines = lines_spec;
        hand_lines.tool = "hand_lines";
        json_t *lprops = mcpage_lines_schema(mcpage_server_pager(srv), &hand_lines);
        assert_non_null(props);
        assert_non_null(lprops);
        json_object_set_new(props, "q", json_pack("{s:s}", "type", "string"));
        json_t *schema = json_pack("{s:s, s:o}", "type", "object", "properties", props);
        char *text = json_dumps(schema, JSON_COMPACT);
        mcpage_tool h = {.name = "hand_list", .handler = not_reached, .input_schema = text};
        assert_int_equal(mcpage_server_add_tool(srv, &h), 0);
        /* The same properties under another tool's name: its spec names hand_list, not it. */
        h.name = "other_list";
        assert_int_equal(mcpage_server_add_tool(srv, &h), 0);
        free(text);
        json_decref(schema);
        schema = json_pack("{s:s, s:o}", "type", "object", "properties", lprops);
        text = json_dumps(schema, JSON_COMPACT);
        h.name = "hand_lines";
        h.input_schema = text;
        assert_int_equal(mcpage_server_add_tool(srv, &h), 0);
        free(text);
        json_decref(schema);
    }
    *state = srv;
    return 0;
}

static int teardown(void **state)
{
    mcpage_server_free(*state);
    return 0;
}

/* Calls `tool` with `args_text` and requires the builder's remedy for `param`. */
static void expect_remedy(mcpage_server *srv, const char *tool, const char *args_text,
                          const char *param, const char *range)
{
    json_t *args = json_loads(args_text, 0, NULL);
    assert_non_null(args);
    int before = atomic_load(&handler_runs);
    json_t *res = tool_contract_call(srv, tool, args);
    assert_non_null(res);
    const json_t *err = json_object_get(json_object_get(res, "structuredContent"), "error");
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    const char *expected = json_string_value(json_object_get(err, "expected"));
    const char *example = json_string_value(json_object_get(err, "example"));
    if (!json_is_true(json_object_get(res, "isError")) || expected == NULL || example == NULL ||
        strstr(expected, range) == NULL || strncmp(example, tool, strlen(tool)) != 0 ||
        strcmp(json_string_value(json_object_get(err, "param")), param) != 0 ||
        strstr(text, example) == NULL)
        fail_msg("%s %s: no builder remedy naming %s with range '%s': %s", tool, args_text, param,
                 range, json_dumps(res, JSON_COMPACT));
    assert_int_equal(atomic_load(&handler_runs), before); /* the runtime answered */
    json_decref(res);
}

static void bad_list_windows_get_the_builders_remedy(void **state)
{
    mcpage_server *srv = *state;
    expect_remedy(srv, "list_items", "{\"limit\":-1}", "limit", "1 to 100");
    expect_remedy(srv, "list_items", "{\"limit\":0}", "limit", "1 to 100");
    expect_remedy(srv, "list_items", "{\"limit\":\"ten\"}", "limit", "1 to 100");
    expect_remedy(srv, "list_items", "{\"limit\":2.5}", "limit", "1 to 100");
    expect_remedy(srv, "list_items", "{\"offset\":-3}", "offset", "0");
    expect_remedy(srv, "list_items", "{\"max_tokens\":10}", "max_tokens", "500");
    expect_remedy(srv, "list_items", "{\"max_tokens\":\"many\"}", "max_tokens", "500");
    expect_remedy(srv, "list_items", "{\"cursor\":7}", "cursor", "next_cursor");
    expect_remedy(srv, "list_items", "{\"fields\":[\"colour\"]}", "fields", "id");
    expect_remedy(srv, "list_items", "{\"fields\":\"name\"}", "fields", "id");
}

static void bad_content_windows_get_the_builders_remedy(void **state)
{
    mcpage_server *srv = *state;
    expect_remedy(srv, "read_text", "{\"name\":\"a\",\"start_line\":0}", "start_line", "1");
    expect_remedy(srv, "read_text", "{\"name\":\"a\",\"start_column\":-1}", "start_column", "1");
    expect_remedy(srv, "read_text", "{\"name\":\"a\",\"max_lines\":0}", "max_lines", "1 to 500");
    expect_remedy(srv, "read_blob", "{\"offset\":-1}", "offset", "0");
    expect_remedy(srv, "read_blob", "{\"max_bytes\":0}", "max_bytes", "1 to 8,192");
    expect_remedy(srv, "read_blob", "{\"max_bytes\":[1]}", "max_bytes", "1 to 8,192");
}

static void bad_grid_windows_get_the_builders_remedy(void **state)
{
    mcpage_server *srv = *state;
    expect_remedy(srv, "read_grid", "{\"region\":{\"rows\":0}}", "region.rows", "1 to 100");
    expect_remedy(srv, "read_grid", "{\"region\":{\"col\":-2}}", "region.col", "0");
    expect_remedy(srv, "read_grid", "{\"region\":\"A1:B2\"}", "region", "row");
}

/*
 * A tool registered with mcpage_server_add_tool whose schema holds the
 * window parameters mcpage_*_schema generated gets the builder's remedy
 * too (one answer to a bad window, however the tool was declared); the
 * same properties under a tool the spec does not name keep the schema's.
 */
static void generated_windows_added_by_hand_get_the_remedy(void **state)
{
    mcpage_server *srv = *state;
    expect_remedy(srv, "hand_list", "{\"limit\":-1}", "limit", "1 to 100");
    expect_remedy(srv, "hand_list", "{\"limit\":0,\"q\":\"x\"}", "limit", "1 to 100");
    expect_remedy(srv, "hand_list", "{\"max_tokens\":10}", "max_tokens", "500");
    expect_remedy(srv, "hand_list", "{\"fields\":[\"colour\"]}", "fields", "id");
    expect_remedy(srv, "hand_lines", "{\"max_lines\":0}", "max_lines", "1 to 500");
    json_t *res = tool_contract_call(srv, "other_list", json_pack("{s:i}", "limit", -1));
    const json_t *err = json_object_get(json_object_get(res, "structuredContent"), "error");
    assert_true(json_is_true(json_object_get(res, "isError")));
    assert_null(json_object_get(err, "example"));
    json_decref(res);
}

/* The tool's own parameters keep the schema's answer: the builder accepts the window. */
static void a_bad_own_parameter_keeps_the_schema_answer(void **state)
{
    mcpage_server *srv = *state;
    int before = atomic_load(&handler_runs);
    json_t *res = tool_contract_call(srv, "read_text", json_pack("{s:i}", "max_lines", 5));
    assert_true(json_is_true(json_object_get(res, "isError")));
    const json_t *err = json_object_get(json_object_get(res, "structuredContent"), "error");
    assert_string_equal(json_string_value(json_object_get(err, "param")), "name");
    assert_int_equal(atomic_load(&handler_runs), before);
    json_decref(res);
    /* A valid window reaches the handler. */
    res = tool_contract_call(srv, "list_items", json_pack("{s:i}", "limit", 5));
    assert_int_equal(atomic_load(&handler_runs), before + 1);
    json_decref(res);
}

/* The runtime begins, hands over and finishes the page; a walk by cursor sees every number once. */
static void the_runtime_runs_the_page_around_the_handler(void **state)
{
    mcpage_server *srv = *state;
    int seen = 0, pages = 0;
    json_t *args = json_pack("{s:i}", "limit", 20);
    for (;;) {
        json_t *res = tool_contract_call(srv, "count", args);
        const json_t *sc = json_object_get(res, "structuredContent");
        assert_false(json_is_true(json_object_get(res, "isError")));
        assert_int_equal(json_integer_value(json_object_get(sc, "total_numbers")), 50);
        const json_t *nums = json_object_get(sc, "numbers");
        for (size_t i = 0; i < json_array_size(nums); i++)
            assert_int_equal(json_integer_value(json_object_get(json_array_get(nums, i), "n")),
                             ++seen);
        pages++;
        const char *next = json_string_value(json_object_get(sc, "next_cursor"));
        args = next ? json_pack("{s:i, s:s}", "limit", 20, "cursor", next) : NULL;
        json_decref(res);
        if (args == NULL)
            break;
    }
    assert_int_equal(seen, 50);
    assert_int_equal(pages, 3);
    /* A cursor the builder refuses (the schema accepts any string): the handler never runs. */
    int before = atomic_load(&handler_runs);
    expect_remedy(srv, "count", "{\"cursor\":\"c1.forged\"}", "cursor", "next_cursor");
    assert_int_equal(atomic_load(&handler_runs), before);
    /* A failing handler: the page is dropped, the status named. */
    json_t *res = tool_contract_call(srv, "count", json_pack("{s:b}", "fail", 1));
    assert_true(json_is_true(json_object_get(res, "isError")));
    assert_null(json_object_get(res, "structuredContent"));
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    assert_non_null(strstr(text, mcpage_strerror(MCPAGE_EIO)));
    json_decref(res);
    /* An error result of the handler's own is kept, without a page. */
    res = tool_contract_call(srv, "count", json_pack("{s:b}", "refuse", 1));
    assert_true(json_is_true(json_object_get(res, "isError")));
    text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    assert_string_equal(text, "refused");
    json_decref(res);
    /* A tool without a window gets no page. */
    res = tool_contract_call(srv, "plain", NULL);
    text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    assert_string_equal(text, "none");
    json_decref(res);
}

/* The declared schema: the tool's own properties, the window's, no others. */
static void the_schema_joins_the_tools_and_the_windows(void **state)
{
    (void)state;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "window-tools", "1.0.0");
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool t = {.name = "read_text", .handler = not_reached};
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"max_lines\":{\"type\":\"integer\"}}}";
    assert_int_equal(mcpage_server_add_lines_tool(srv, &t, &lines_spec), MCPAGE_EINVAL);
    t.input_schema = NULL;
    t.name = "read_other";
    assert_int_equal(mcpage_server_add_lines_tool(srv, &t, &lines_spec), MCPAGE_EINVAL);
    t.name = "read_text";
    assert_int_equal(mcpage_server_add_lines_tool(srv, &t, &lines_spec), 0);
    assert_int_equal(mcpage_server_add_lines_tool(srv, &t, &lines_spec), MCPAGE_EEXIST);
    /* Unknown arguments are refused by the schema's additionalProperties. */
    json_t *res = tool_contract_call(srv, "read_text", json_pack("{s:i}", "colour", 1));
    assert_true(json_is_true(json_object_get(res, "isError")));
    json_decref(res);
    mcpage_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(bad_list_windows_get_the_builders_remedy, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_content_windows_get_the_builders_remedy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(generated_windows_added_by_hand_get_the_remedy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_grid_windows_get_the_builders_remedy, setup, teardown),
        cmocka_unit_test_setup_teardown(a_bad_own_parameter_keeps_the_schema_answer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_runtime_runs_the_page_around_the_handler, setup,
                                        teardown),
        cmocka_unit_test(the_schema_joins_the_tools_and_the_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
