/*
 * Tests for server-to-client requests (mcpage_call_request): a tool asks
 * the client (sampling/createMessage) and the client's response, error,
 * silence or cancellation reaches the waiting handler; the request travels
 * with the call's id as related id; the client's capabilities are visible
 * to the handler; the close-stream hook reaches the transport.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "support/mcp_capture.h"

/* Asks the client; reports "rc=<status> result=<json>" as its text. */
static int ask(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    int timeout = (int)json_integer_value(json_object_get(args, "timeout_ms"));
    json_t *params = json_pack("{s:[{s:s,s:{s:s,s:s}}],s:i}", "messages", "role", "user", "content",
                               "type", "text", "text", "hi", "maxTokens", 10);
    json_t *out = NULL;
    int rc = mcpage_call_request(call, "sampling/createMessage", params, timeout, &out);
    json_decref(params);
    char *dump = out ? json_dumps(out, JSON_COMPACT) : NULL;
    char text[1024];
    int n = snprintf(text, sizeof text, "rc=%d result=%s", rc, dump ? dump : "null");
    free(dump);
    json_decref(out);
    return mcpage_result_add_text(res, text, (size_t)n);
}

static int caps(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    const json_t *c = mcpage_call_client_capabilities(call);
    char *dump = c ? json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    int rc = mcpage_result_add_text(res, dump ? dump : "none", dump ? strlen(dump) : 4);
    free(dump);
    return rc;
}

static int closer(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    mcpage_call_close_stream(call);
    return mcpage_result_add_text(res, "closed", 6);
}

static char closed_for[64]; /* related id the close-stream hook saw */

static void on_close(void *ud, const char *related)
{
    (void)ud;
    snprintf(closed_for, sizeof closed_for, "%s", related);
}

static capture *setup(void)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "t", "1");
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool t = {.name = "ask",
                     .input_schema = "{\"type\":\"object\",\"properties\":{\"timeout_ms\":"
                                     "{\"type\":\"integer\"}},\"required\":[\"timeout_ms\"]}",
                     .handler = ask};
    assert_int_equal(mcpage_server_add_tool(srv, &t), 0);
    mcpage_tool t2 = {.name = "caps", .handler = caps};
    assert_int_equal(mcpage_server_add_tool(srv, &t2), 0);
    mcpage_tool t3 = {.name = "closer", .handler = closer};
    assert_int_equal(mcpage_server_add_tool(srv, &t3), 0);
    capture *c = capture_on(srv);
    assert_non_null(c);
    c->srv = srv; /* freed with the capture */
    mcpage_session_set_close_stream(c->s, on_close);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"sampling\":{},"
                    "\"elicitation\":{}},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
    capture_clear(c);
    return c;
}

/* Waits up to 2 s for the next captured message. */
static json_t *next(capture *c, char **related)
{
    for (int i = 0; i < 400; i++) {
        char *rel = NULL;
        json_t *m = capture_take_related(c, &rel);
        if (m) {
            if (related)
                *related = rel;
            else
                free(rel);
            return m;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void start_ask(capture *c, int id, int timeout_ms)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"ask\",\"arguments\":{\"timeout_ms\":%d}}}",
                     id, timeout_ms);
    mcpage_session_receive(c->s, msg, (size_t)n);
}

static const char *text_of(const json_t *r)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text"));
}

static void the_client_response_reaches_the_waiting_tool(void **state)
{
    (void)state;
    capture *c = setup();
    start_ask(c, 7, 5000);
    char *rel = NULL;
    json_t *req = next(c, &rel);
    assert_non_null(req);
    assert_string_equal(json_string_value(json_object_get(req, "method")),
                        "sampling/createMessage");
    assert_true(json_is_integer(json_object_get(req, "id")));
    assert_string_equal(rel, "7"); /* travels with the call: on HTTP, the call's stream */
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(req, "params"), "messages"), 0),
            "role")),
        "user");
    char reply[256];
    int n = snprintf(reply, sizeof reply,
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"role\":\"assistant\","
                     "\"content\":{\"type\":\"text\",\"text\":\"hello\"},\"model\":\"m\"}}",
                     (long long)json_integer_value(json_object_get(req, "id")));
    mcpage_session_receive(c->s, reply, (size_t)n);
    assert_int_equal(mcpage_session_drain(c->s, 2000), 0);
    json_t *r = capture_take(c);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 7);
    assert_string_equal(text_of(r), "rc=0 result={\"role\":\"assistant\",\"content\":{\"type\":"
                                    "\"text\",\"text\":\"hello\"},\"model\":\"m\"}");
    json_decref(r);
    json_decref(req);
    free(rel);
    capture_free(c);
}

static void a_client_error_is_eio_with_the_error_object(void **state)
{
    (void)state;
    capture *c = setup();
    start_ask(c, 8, 5000);
    json_t *req = next(c, NULL);
    assert_non_null(req);
    char reply[256];
    int n = snprintf(reply, sizeof reply,
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-1,\"message\":"
                     "\"User rejected sampling request\"}}",
                     (long long)json_integer_value(json_object_get(req, "id")));
    mcpage_session_receive(c->s, reply, (size_t)n);
    assert_int_equal(mcpage_session_drain(c->s, 2000), 0);
    json_t *r = capture_take(c);
    char want[200];
    snprintf(want, sizeof want,
             "rc=%d result={\"code\":-1,\"message\":\"User rejected sampling request\"}",
             MCPAGE_EIO);
    assert_string_equal(text_of(r), want);
    json_decref(r);
    json_decref(req);
    capture_free(c);
}

static void silence_times_out_and_a_late_answer_is_ignored(void **state)
{
    (void)state;
    capture *c = setup();
    start_ask(c, 9, 50);
    json_t *req = next(c, NULL);
    assert_non_null(req);
    assert_int_equal(mcpage_session_drain(c->s, 2000), 0);
    json_t *r = capture_take(c);
    char want[64];
    snprintf(want, sizeof want, "rc=%d result=null", MCPAGE_ESTATE);
    assert_string_equal(text_of(r), want);
    char reply[128];
    int n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
                     (long long)json_integer_value(json_object_get(req, "id")));
    mcpage_session_receive(c->s, reply, (size_t)n);
    assert_null(capture_take(c)); /* nothing waits for it: no reply, no error */
    json_decref(r);
    json_decref(req);
    capture_free(c);
}

static void cancelling_the_call_ends_the_wait(void **state)
{
    (void)state;
    capture *c = setup();
    start_ask(c, 10, 60000);
    json_t *req = next(c, NULL);
    assert_non_null(req);
    const char *cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                         "\"params\":{\"requestId\":10}}";
    mcpage_session_receive(c->s, cancel, strlen(cancel));
    assert_int_equal(mcpage_session_drain(c->s, 2000), 0); /* not 60 s */
    assert_null(capture_take(c)); /* a cancelled call's response is dropped */
    json_decref(req);
    capture_free(c);
}

static void bad_arguments_are_einval(void **state)
{
    (void)state;
    json_t *out = NULL;
    assert_int_equal(mcpage_call_request(NULL, "x", NULL, 10, &out), MCPAGE_EINVAL);
    assert_null(out);
}

static void the_handler_sees_the_client_capabilities(void **state)
{
    (void)state;
    capture *c = setup();
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"caps\",\"arguments\":{}}}");
    json_t *r = capture_take(c);
    assert_string_equal(text_of(r), "{\"elicitation\":{},\"sampling\":{}}");
    json_decref(r);
    capture_free(c);
}

static void close_stream_reaches_the_transport_hook_with_the_call_id(void **state)
{
    (void)state;
    capture *c = setup();
    closed_for[0] = '\0';
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/call\",\"params\":{"
                    "\"name\":\"closer\",\"arguments\":{}}}");
    assert_string_equal(closed_for, "\"abc\"");
    json_t *r = capture_take(c);
    assert_string_equal(text_of(r), "closed");
    json_decref(r);
    capture_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_client_response_reaches_the_waiting_tool),
        cmocka_unit_test(a_client_error_is_eio_with_the_error_object),
        cmocka_unit_test(silence_times_out_and_a_late_answer_is_ignored),
        cmocka_unit_test(cancelling_the_call_ends_the_wait),
        cmocka_unit_test(bad_arguments_are_einval),
        cmocka_unit_test(the_handler_sees_the_client_capabilities),
        cmocka_unit_test(close_stream_reaches_the_transport_hook_with_the_call_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
