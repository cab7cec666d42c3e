/*
 * The modern era (revision 2026-07-28) of the runtime, message by
 * message: _meta checks, server/discover, what every modern result
 * carries, removed methods, both eras on one session, and multi
 * round-trip requests (mcpage_call_input, the signed requestState,
 * mcpage_call_require).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "support/mcp_capture.h"

#define META_CAPS(caps)                                                                            \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
#define META META_CAPS("{\"elicitation\":{},\"sampling\":{}}")

/* Asks a name, then a colour, and greets; counts how often it ran. */
static int tool_two_questions(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *q1 = json_pack("{s:s}", "message", "Your name?");
    json_t *a1 = NULL;
    int rc = mcpage_call_input(call, "name", "elicitation/create", q1, 1000, &a1);
    json_decref(q1);
    if (rc != 0)
        return rc;
    json_t *a2 = NULL;
    rc = mcpage_call_input(call, "colour", "elicitation/create", NULL, 1000, &a2);
    if (rc != 0) {
        json_decref(a1);
        return rc;
    }
    char text[200];
    (void)snprintf(text, sizeof text, "%s likes %s (round %d)",
                   json_string_value(json_object_get(json_object_get(a1, "content"), "name")),
                   json_string_value(json_object_get(json_object_get(a2, "content"), "c")),
                   mcpage_call_round(call));
    json_decref(a1);
    json_decref(a2);
    return mcpage_result_add_text(res, text, strlen(text));
}

/* Needs sampling, or the client gets -32021. */
static int tool_needs_sampling(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    int rc = mcpage_call_require(call, "sampling");
    if (rc != 0)
        return rc;
    return mcpage_result_add_text(res, "ok", 2);
}

/* Logs at info and answers. */
static int tool_logs(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    mcpage_call_log(call, MCPAGE_LOG_INFO, "t", "hello");
    return mcpage_result_add_text(res, "done", 4);
}

/* A task that asks for a word, then answers with it. */
static int tool_task_word(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    int rc = mcpage_call_task(call);
    if (rc != 0 && rc != MCPAGE_ENOTSUP)
        return rc;
    json_t *a = NULL;
    rc = mcpage_call_input(call, "word", "elicitation/create", NULL, 1000, &a);
    if (rc != 0)
        return rc;
    const char *w = json_string_value(json_object_get(json_object_get(a, "content"), "w"));
    char text[100];
    (void)snprintf(text, sizeof text, "word=%s round=%d", w ? w : "?", mcpage_call_round(call));
    json_decref(a);
    return mcpage_result_add_text(res, text, strlen(text));
}

/* A task that runs until cancelled. */
static int tool_task_forever(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    (void)res;
    if (mcpage_call_task(call) != 0)
        return MCPAGE_ENOTSUP;
    while (!mcpage_call_cancelled(call)) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return MCPAGE_ECANCELED;
}

static int setup(void **state)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "modern-test", "2.0.0");
    mcpage_server *srv = NULL;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool tools[] = {
        {.name = "two_questions", .handler = tool_two_questions},
        {.name = "needs_sampling", .handler = tool_needs_sampling},
        {.name = "logs", .handler = tool_logs},
        {.name = "task_word", .handler = tool_task_word, .tasks = MCPAGE_TASKS_OPTIONAL},
        {.name = "task_forever", .handler = tool_task_forever, .tasks = MCPAGE_TASKS_REQUIRED},
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        assert_int_equal(mcpage_server_add_tool(srv, &tools[i]), 0);
    *state = capture_on(srv);
    return 0;
}

static int teardown(void **state)
{
    capture *c = *state;
    mcpage_server *srv = c->srv;
    capture_free(c);
    mcpage_server_free(srv);
    return 0;
}

static const json_t *result_of(const json_t *msg)
{
    const json_t *r = json_object_get(msg, "result");
    assert_non_null(r);
    return r;
}

static void discover_names_both_eras_and_identifies_the_server(void **state)
{
    capture *c = *state;
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META
                    "}}");
    json_t *m = capture_take(c);
    const json_t *r = result_of(m);
    const json_t *v = json_object_get(r, "supportedVersions");
    assert_string_equal(json_string_value(json_array_get(v, 0)), "2026-07-28");
    assert_string_equal(json_string_value(json_array_get(v, 1)), "2025-11-25");
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "complete");
    const json_t *info =
        json_object_get(json_object_get(r, "_meta"), "io.modelcontextprotocol/serverInfo");
    assert_string_equal(json_string_value(json_object_get(info, "name")), "modern-test");
    assert_int_equal(json_integer_value(json_object_get(r, "ttlMs")),
                     MCPAGE_DEFAULT_CATALOG_TTL_MS);
    assert_string_equal(json_string_value(json_object_get(r, "cacheScope")), "public");
    assert_non_null(json_object_get(json_object_get(r, "capabilities"), "tools"));
    json_decref(m);
}

static void bad_meta_is_invalid_params_and_unknown_version_lists_ours(void **state)
{
    capture *c = *state;
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{}}");
    json_decref(capture_take_error(c, -32602));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                    "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
    json_decref(capture_take_error(c, -32602));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                    "{\"io.modelcontextprotocol/protocolVersion\":\"1999-01-01\","
                    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    json_t *e = capture_take_error(c, -32022);
    const json_t *data = json_object_get(json_object_get(e, "error"), "data");
    assert_string_equal(json_string_value(json_object_get(data, "requested")), "1999-01-01");
    assert_string_equal(json_string_value(json_array_get(json_object_get(data, "supported"), 0)),
                        "2026-07-28");
    assert_int_equal(json_integer_value(json_object_get(e, "id")), 4);
    json_decref(e);
}

static void removed_methods_are_not_found_in_the_modern_era(void **state)
{
    capture *c = *state;
    const char *removed[] = {"ping", "logging/setLevel", "initialize", "resources/subscribe"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        char msg[512];
        (void)snprintf(msg, sizeof msg,
                       "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"%s\",\"params\":{" META "}}",
                       removed[i]);
        capture_send(c, msg);
        json_decref(capture_take_error(c, -32601));
    }
}

static void tools_list_is_cacheable_and_legacy_session_still_works(void **state)
{
    capture *c = *state;
    capture_send(c,
                 "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{" META "}}");
    json_t *m = capture_take(c);
    const json_t *r = result_of(m);
    assert_int_equal(json_array_size(json_object_get(r, "tools")), 5);
    assert_non_null(json_object_get(r, "ttlMs"));
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "complete");
    json_decref(m);
    /* The same session, now legacy: initialize, and a plain tools/list has no modern fields. */
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}");
    m = capture_take(c);
    r = result_of(m);
    assert_int_equal(json_array_size(json_object_get(r, "tools")), 5);
    assert_null(json_object_get(r, "resultType"));
    assert_null(json_object_get(r, "ttlMs"));
    json_decref(m);
}

static json_t *call_tool(capture *c, int id, const char *name, const char *extra)
{
    char msg[8192 + 1024];
    (void)snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"%s\",\"arguments\":{}%s%s," META "}}",
                   id, name, extra ? "," : "", extra ? extra : "");
    capture_send(c, msg);
    return capture_take(c);
}

static void input_rounds_carry_answers_in_the_signed_state(void **state)
{
    capture *c = *state;
    json_t *m = call_tool(c, 10, "two_questions", NULL);
    const json_t *r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "input_required");
    const json_t *ask = json_object_get(json_object_get(r, "inputRequests"), "name");
    assert_string_equal(json_string_value(json_object_get(ask, "method")), "elicitation/create");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(ask, "params"), "message")),
        "Your name?");
    char st1[4096];
    (void)snprintf(st1, sizeof st1, "%s", json_string_value(json_object_get(r, "requestState")));
    json_decref(m);

    /* Round 2: the name answered; the colour is asked, the name rides in the new state. */
    char extra[8192];
    (void)snprintf(extra, sizeof extra,
                   "\"requestState\":\"%s\",\"inputResponses\":{\"name\":{\"action\":\"accept\","
                   "\"content\":{\"name\":\"Ada\"}}}",
                   st1);
    m = call_tool(c, 11, "two_questions", extra);
    r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "input_required");
    assert_non_null(json_object_get(json_object_get(r, "inputRequests"), "colour"));
    assert_null(json_object_get(json_object_get(r, "inputRequests"), "name"));
    char st2[4096];
    (void)snprintf(st2, sizeof st2, "%s", json_string_value(json_object_get(r, "requestState")));
    json_decref(m);

    /* Round 3: only the colour sent; the name comes from the state. */
    (void)snprintf(extra, sizeof extra,
                   "\"requestState\":\"%s\",\"inputResponses\":{\"colour\":{\"action\":"
                   "\"accept\",\"content\":{\"c\":\"teal\"}},\"unasked\":{\"x\":1}}",
                   st2);
    m = call_tool(c, 12, "two_questions", extra);
    r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "complete");
    const json_t *text = json_object_get(json_array_get(json_object_get(r, "content"), 0), "text");
    assert_string_equal(json_string_value(text), "Ada likes teal (round 3)");
    json_decref(m);

    /* A state altered by one character, or used on another tool, is refused. */
    st2[strlen(st2) - 3] = st2[strlen(st2) - 3] == 'A' ? 'B' : 'A';
    (void)snprintf(extra, sizeof extra, "\"requestState\":\"%s\"", st2);
    m = call_tool(c, 13, "two_questions", extra);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32602);
    json_decref(m);
    (void)snprintf(extra, sizeof extra, "\"requestState\":\"%s\"", st1);
    m = call_tool(c, 14, "logs", extra);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32602);
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(m, "error"), "message")), "another"));
    json_decref(m);
}

static void malformed_input_responses_are_invalid_params(void **state)
{
    capture *c = *state;
    json_t *m = call_tool(c, 20, "two_questions", "\"inputResponses\":{\"name\":12345}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32602);
    json_decref(m);
    m = call_tool(c, 21, "two_questions", "\"inputResponses\":null");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
                     -32602);
    json_decref(m);
}

static void a_missing_capability_is_32021_naming_it(void **state)
{
    capture *c = *state;
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"needs_sampling\"," META_CAPS("{}") "}}");
    json_t *e = capture_take_error(c, -32021);
    const json_t *need = json_object_get(json_object_get(json_object_get(e, "error"), "data"),
                                         "requiredCapabilities");
    assert_non_null(json_object_get(need, "sampling"));
    json_decref(e);
    json_t *m = call_tool(c, 31, "needs_sampling", NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(result_of(m), "content"), 0), "text")),
                        "ok");
    json_decref(m);
}

static void logs_only_when_the_request_names_a_level(void **state)
{
    capture *c = *state;
    json_t *m = call_tool(c, 40, "logs", NULL);
    assert_non_null(json_object_get(m, "result")); /* no notifications/message before it */
    json_decref(m);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"logs\",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
                    "\"io.modelcontextprotocol/logLevel\":\"debug\"}}}");
    m = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(m, "method")), "notifications/message");
    json_decref(m);
    m = capture_take(c);
    assert_non_null(json_object_get(m, "result"));
    json_decref(m);
}

#define META_TASKS                                                                                 \
    META_CAPS("{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}")

/* tasks/get of `task` until its status is not `while_status` (at most ~5 s); the result. */
static json_t *task_poll(capture *c, const char *task, const char *while_status)
{
    for (int i = 0; i < 500; i++) {
        char msg[512];
        (void)snprintf(msg, sizeof msg,
                       "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tasks/get\",\"params\":{"
                       "\"taskId\":\"%s\"," META_TASKS "}}",
                       task);
        capture_send(c, msg);
        json_t *m = capture_take(c);
        const char *st = json_string_value(json_object_get(result_of(m), "status"));
        if (st && strcmp(st, while_status) != 0)
            return m;
        json_decref(m);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fail_msg("task %s stayed %s", task, while_status);
    return NULL;
}

static void a_task_asks_through_tasks_update_and_completes(void **state)
{
    capture *c = *state;
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":50,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"task_word\"," META_TASKS "}}");
    json_t *m = capture_take(c);
    const json_t *r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "resultType")), "task");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "working");
    assert_int_equal(json_integer_value(json_object_get(r, "ttlMs")), MCPAGE_TASK_TTL_MS);
    assert_null(json_object_get(r, "requestState"));
    char task[64];
    (void)snprintf(task, sizeof task, "%s", json_string_value(json_object_get(r, "taskId")));
    json_decref(m);

    m = task_poll(c, task, "working");
    r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "input_required");
    assert_non_null(json_object_get(json_object_get(r, "inputRequests"), "word"));
    json_decref(m);

    char msg[1024];
    (void)snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":51,\"method\":\"tasks/update\",\"params\":{"
                   "\"taskId\":\"%s\",\"inputResponses\":{\"word\":{\"action\":\"accept\","
                   "\"content\":{\"w\":\"ok\"}},\"stale\":{}}," META_TASKS "}}",
                   task);
    capture_send(c, msg);
    m = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(result_of(m), "resultType")), "complete");
    json_decref(m);

    m = task_poll(c, task, "input_required");
    if (strcmp(json_string_value(json_object_get(result_of(m), "status")), "working") == 0) {
        json_decref(m);
        m = task_poll(c, task, "working");
    }
    r = result_of(m);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "completed");
    const json_t *text = json_object_get(
        json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text");
    assert_string_equal(json_string_value(text), "word=ok round=1");
    json_decref(m);
}

static void tasks_are_gated_cancelled_and_unknown_ids_refused(void **state)
{
    capture *c = *state;
    /* Without the extension: the required-task tool is -32021, tasks/get too. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":60,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"task_forever\"," META "}}");
    json_t *e = capture_take_error(c, -32021);
    assert_non_null(json_object_get(
        json_object_get(json_object_get(json_object_get(json_object_get(e, "error"), "data"),
                                        "requiredCapabilities"),
                        "extensions"),
        "io.modelcontextprotocol/tasks"));
    json_decref(e);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":61,\"method\":\"tasks/get\",\"params\":{"
                    "\"taskId\":\"x\"," META "}}");
    json_decref(capture_take_error(c, -32021));
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":62,\"method\":\"tasks/get\",\"params\":{"
                    "\"taskId\":\"nope\"," META_TASKS "}}");
    json_decref(capture_take_error(c, -32602));
    capture_send(
        c, "{\"jsonrpc\":\"2.0\",\"id\":63,\"method\":\"tasks/list\",\"params\":{" META_TASKS "}}");
    json_decref(capture_take_error(c, -32601));

    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":64,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"task_forever\"," META_TASKS "}}");
    json_t *m = capture_take(c);
    char task[64];
    (void)snprintf(task, sizeof task, "%s",
                   json_string_value(json_object_get(result_of(m), "taskId")));
    json_decref(m);
    char msg[512];
    (void)snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":65,\"method\":\"tasks/cancel\",\"params\":{"
                   "\"taskId\":\"%s\"," META_TASKS "}}",
                   task);
    capture_send(c, msg);
    m = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(result_of(m), "resultType")), "complete");
    json_decref(m);
    m = task_poll(c, task, "working");
    assert_string_equal(json_string_value(json_object_get(result_of(m), "status")), "cancelled");
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(discover_names_both_eras_and_identifies_the_server, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_meta_is_invalid_params_and_unknown_version_lists_ours,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(removed_methods_are_not_found_in_the_modern_era, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(tools_list_is_cacheable_and_legacy_session_still_works,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(input_rounds_carry_answers_in_the_signed_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(malformed_input_responses_are_invalid_params, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_missing_capability_is_32021_naming_it, setup, teardown),
        cmocka_unit_test_setup_teardown(logs_only_when_the_request_names_a_level, setup, teardown),
        cmocka_unit_test_setup_teardown(a_task_asks_through_tasks_update_and_completes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(tasks_are_gated_cancelled_and_unknown_ids_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
