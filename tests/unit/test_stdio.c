/*
 * Tests for the stdio transport over real pipes: framing (split writes,
 * CRLF, blank lines, a last line without newline), a 10 MB line that is
 * answered and skipped without stopping the session, end of input that
 * waits for running calls, a call run on the reading thread that still
 * lets a ping and its cancellation through, and a stop request that cancels after the
 * grace period yet flushes every response already computed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "fixture_registry.h"

typedef struct harness {
    mcpage_server *srv;         /* fixture server */
    int in[2], out[2], stop[2]; /* pipes: to server, from server, stop */
    pthread_t server, reader;   /* threads */
    int rc;                     /* serve's return */
    char *output;               /* everything the server wrote */
    size_t len, cap;            /* of output */
    pthread_mutex_t lock;       /* guards output while the reader appends */
    int grace_ms;               /* stop grace */
} harness;

static void *server_main(void *arg)
{
    harness *h = arg;
    mcpage_stdio_options o = {
        .stop_fd = h->stop[0], .handle_signals = false, .grace_ms = h->grace_ms};
    h->rc = mcpage_serve_stdio_ex(h->srv, h->in[0], h->out[1], &o);
    close(h->out[1]);
    return NULL;
}

static void *reader_main(void *arg)
{
    harness *h = arg;
    char buf[65536];
    ssize_t n;
    while ((n = read(h->out[0], buf, sizeof buf)) > 0) {
        pthread_mutex_lock(&h->lock);
        if (h->len + (size_t)n + 1 > h->cap) {
            h->cap = (h->len + (size_t)n + 1) * 2;
            h->output = realloc(h->output, h->cap);
        }
        memcpy(h->output + h->len, buf, (size_t)n);
        h->len += (size_t)n;
        h->output[h->len] = '\0';
        pthread_mutex_unlock(&h->lock);
    }
    return NULL;
}

static harness *start(int grace_ms)
{
    harness *h = calloc(1, sizeof *h);
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "stdio-test", "1");
    assert_int_equal(mcpage_server_new(&cfg, &h->srv), 0);
    assert_int_equal(fixture_register(h->srv), 0);
    assert_int_equal(pipe(h->in), 0);
    assert_int_equal(pipe(h->out), 0);
    assert_int_equal(pipe(h->stop), 0);
    h->grace_ms = grace_ms;
    h->output = calloc(1, 1);
    h->cap = 1;
    pthread_mutex_init(&h->lock, NULL);
    pthread_create(&h->reader, NULL, reader_main, h);
    pthread_create(&h->server, NULL, server_main, h);
    return h;
}

static void put(harness *h, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(h->in[1], s, n);
        assert_true(w > 0);
        s += w;
        n -= (size_t)w;
    }
}

/* Waits (up to 30 s) until the server has written `needle`: tests wait for
   an event, not a clock, so a loaded machine slows them without failing them. */
static bool wait_for(harness *h, const char *needle)
{
    for (int i = 0; i < 3000; i++) {
        pthread_mutex_lock(&h->lock);
        bool seen = strstr(h->output, needle) != NULL;
        pthread_mutex_unlock(&h->lock);
        if (seen)
            return true;
        usleep(10000);
    }
    return false;
}

/* Closes input (or signals stop), waits for the server; returns elapsed ms. */
static long finish(harness *h, bool stop)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (stop)
        assert_int_equal(write(h->stop[1], "x", 1), 1);
    else
        close(h->in[1]);
    pthread_join(h->server, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(h->reader, NULL);
    return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

static void cleanup(harness *h)
{
    if (h->rc != MCPAGE_ESTATE)
        mcpage_server_free(h->srv);
    close(h->in[0]);
    close(h->out[0]);
    close(h->stop[0]);
    close(h->stop[1]);
    free(h->output);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

/* The output lines, parsed; every line must be one JSON object. */
static json_t *lines(harness *h)
{
    json_t *all = json_array();
    char *p = h->output;
    while (*p) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl); /* every message ends with a newline */
        json_error_t err;
        json_t *v = json_loadb(p, (size_t)(nl - p), 0, &err);
        if (!json_is_object(v))
            fail_msg("not a JSON object line: %.100s", p);
        json_array_append_new(all, v);
        p = nl + 1;
    }
    return all;
}

/* The message answering `id`, or NULL. */
static json_t *reply(json_t *all, json_int_t id)
{
    size_t i;
    json_t *v;
    json_array_foreach(all, i, v)
    {
        json_t *vid = json_object_get(v, "id");
        if (json_is_integer(vid) && json_integer_value(vid) == id)
            return v;
    }
    return NULL;
}

#define INIT                                                                                       \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"

static void framing_tolerates_split_writes_crlf_and_blank_lines(void **state)
{
    harness *h = start(800);
    put(h, "{\"jsonrpc\":\"2.0\",");
    usleep(20000);
    put(h, "\"id\":2,\"method\":\"ping\"}\r\n\n   \n");
    put(h, INIT);
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"); /* no newline before EOF */
    finish(h, false);
    assert_int_equal(h->rc, 0);
    json_t *all = lines(h);
    assert_int_equal(json_array_size(all), 3);
    assert_non_null(json_object_get(reply(all, 2), "result"));
    assert_non_null(json_object_get(reply(all, 1), "result"));
    assert_non_null(json_object_get(reply(all, 3), "result"));
    json_decref(all);
    cleanup(h);
}

static void *write_huge(void *arg)
{
    harness *h = arg;
    put(h, INIT);
    size_t big = 10u << 20;
    char *line = malloc(big + 2);
    memset(line, 'x', big);
    line[0] = '{';
    line[big] = '\n';
    line[big + 1] = '\0';
    put(h, line);
    free(line);
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
    return NULL;
}

static void a_10mb_line_is_refused_and_skipped(void **state)
{
    harness *h = start(800);
    pthread_t w;
    pthread_create(&w, NULL, write_huge, h);
    pthread_join(w, NULL);
    finish(h, false);
    assert_int_equal(h->rc, 0);
    json_t *all = lines(h);
    assert_int_equal(json_array_size(all), 3);
    json_t *err = json_array_get(all, 1);
    assert_true(json_is_null(json_object_get(err, "id")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(err, "error"), "code")),
                     -32600);
    assert_non_null(json_object_get(reply(all, 4), "result"));
    json_decref(all);
    cleanup(h);
}

static void end_of_input_waits_for_running_calls(void **state)
{
    harness *h = start(800);
    put(h, INIT);
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
           "\"arguments\":{\"steps\":5,\"step_ms\":40}}}\n");
    long ms = finish(h, false);
    assert_int_equal(h->rc, 0);
    assert_true(ms >= 150);
    json_t *all = lines(h);
    json_t *r = reply(all, 5);
    assert_non_null(r);
    json_t *text = json_object_get(
        json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text");
    assert_string_equal(json_string_value(text), "completed 5 steps");
    json_decref(all);
    cleanup(h);
}

/*
 * A call whose line was the last one read runs on the reading thread; the
 * other thread must take over the reading, so that a ping is answered and
 * a cancellation reaches the call while it runs (it would take 2 s).
 */
static void a_call_run_by_the_reader_still_lets_ping_and_cancel_through(void **state)
{
    harness *h = start(800);
    put(h, INIT);
    usleep(20000);
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
           "\"arguments\":{\"steps\":100,\"step_ms\":20}}}\n");
    usleep(30000);
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
    usleep(30000);
    put(h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
           "\"requestId\":8}}\n");
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":"
           "\"echo\",\"arguments\":{\"text\":\"after\"}}}\n");
    long ms = finish(h, false);
    assert_int_equal(h->rc, 0);
    assert_true(ms < 1000); /* the slow call was cancelled, not run out */
    json_t *all = lines(h);
    assert_non_null(json_object_get(reply(all, 9), "result"));
    assert_null(reply(all, 8)); /* cancelled: no response */
    json_t *text = json_object_get(
        json_array_get(json_object_get(json_object_get(reply(all, 10), "result"), "content"), 0),
        "text");
    assert_string_equal(json_string_value(text), "after");
    json_decref(all);
    cleanup(h);
}

static void stop_flushes_finished_calls_and_cancels_the_rest_within_a_second(void **state)
{
    /* Both calls report their first step before the stop: call 6 is then
       running (and must be cancelled), call 7 has one 50 ms step left, well
       inside the 700 ms grace, so its response must be flushed. Waiting for
       the progress notifications, not a clock, keeps this true under load. */
    harness *h = start(700);
    put(h, INIT);
    put(h,
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
        "\"arguments\":{\"steps\":1000,\"step_ms\":20},\"_meta\":{\"progressToken\":\"t6\"}}}\n");
    put(h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
           "\"arguments\":{\"steps\":2,\"step_ms\":50},\"_meta\":{\"progressToken\":\"t7\"}}}\n");
    assert_true(wait_for(h, "\"t6\""));
    assert_true(wait_for(h, "\"t7\""));
    long ms = finish(h, true);
    assert_int_equal(h->rc, 0);
    assert_true(ms < 1000);
    json_t *all = lines(h);
    assert_null(reply(all, 6));     /* cancelled: no response */
    assert_non_null(reply(all, 7)); /* finished within the grace period: flushed */
    json_decref(all);
    cleanup(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(framing_tolerates_split_writes_crlf_and_blank_lines),
        cmocka_unit_test(a_10mb_line_is_refused_and_skipped),
        cmocka_unit_test(end_of_input_waits_for_running_calls),
        cmocka_unit_test(a_call_run_by_the_reader_still_lets_ping_and_cancel_through),
        cmocka_unit_test(stop_flushes_finished_calls_and_cancels_the_rest_within_a_second),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
