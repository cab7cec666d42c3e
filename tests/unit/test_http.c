/*
 * Tests for the HTTP transport through its embedding API
 * (mcpage_http_start / _port / _session_count / _stop) on raw loopback
 * sockets: a JSON answer and an SSE answer with its priming event, a
 * consumer too slow for a flood of notifications has its stream closed
 * (the buffer stays bounded) and still gets the result by resuming with
 * Last-Event-ID, and stop ends held streams and waiting calls promptly.
 * Session ids are signed: another endpoint holding the same key continues
 * the session (with the client's capabilities), DELETE makes an endpoint
 * refuse the id, another key's endpoint refuses it; with a shared record
 * of ended sessions, DELETE on one endpoint ends the session on all. GET
 * /health reports the embedder's check.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mcpage/cursor.h>
#include <mcpage/http.h>
#include <mcpage/server.h>

#include "support/http_client.h"
#include "support/page_support.h"

/* Notifications the flood tool sends, and their size. */
#define FLOOD_N    16000 /* 16 MB: more than the kernel's socket buffers (4 MB) absorb */
#define FLOOD_SIZE 1000
/* The stream buffer of the test endpoint. */
#define TEST_BUFFER (64 << 10)

static atomic_bool flood_finished; /* the flood tool has sent everything */

static int flood(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    char pad[FLOOD_SIZE + 1];
    memset(pad, 'x', FLOOD_SIZE);
    pad[FLOOD_SIZE] = '\0';
    for (int i = 0; i < FLOOD_N; i++)
        mcpage_call_log(call, MCPAGE_LOG_INFO, "flood", "%d %s", i, pad);
    atomic_store(&flood_finished, true);
    return mcpage_result_add_text(res, "flood done", 10);
}

static atomic_int naps_begun; /* nap calls that started */

static int nap(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    atomic_fetch_add(&naps_begun, 1);
    for (int i = 0; i < 200 && !mcpage_call_cancelled(call); i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return mcpage_result_add_text(res, "woke", 4);
}

/* Answers with the client capabilities the session holds. */
static int caps(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    char *text = json_dumps(mcpage_call_client_capabilities(call), JSON_COMPACT | JSON_ENCODE_ANY);
    int rc = mcpage_result_add_text(res, text ? text : "null", text ? strlen(text) : 4);
    free(text);
    return rc;
}

static int sick(void *ud, char *why, size_t cap)
{
    (void)snprintf(why, cap, "%s", (const char *)ud);
    return -1;
}

typedef struct fixture {
    mcpage_server *srv; /* the server */
    mcpage_http *h;     /* the endpoint */
    int port;           /* its port */
} fixture;

/* An endpoint whose server signs with `kr` (NULL: its own key), reports
 * `health` and shares `ended` (NULL: none). */
static fixture *start_shared(mcpage_keyring *kr, int (*health)(void *, char *, size_t), void *ud,
                             const mcpage_http_ended *ended)
{
    fixture *f = calloc(1, sizeof *f);
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "t", "1");
    cfg.log_level = MCPAGE_LOG_DEBUG;
    cfg.keyring = kr;
    assert_int_equal(mcpage_server_new(&cfg, &f->srv), 0);
    mcpage_tool t3 = {.name = "caps", .handler = caps};
    assert_int_equal(mcpage_server_add_tool(f->srv, &t3), 0);
    mcpage_tool t = {.name = "flood", .handler = flood};
    assert_int_equal(mcpage_server_add_tool(f->srv, &t), 0);
    mcpage_tool t2 = {.name = "nap", .handler = nap};
    assert_int_equal(mcpage_server_add_tool(f->srv, &t2), 0);
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    hc.stream_buffer = TEST_BUFFER;
    hc.health = health;
    hc.health_ud = ud;
    if (ended)
        hc.ended = *ended;
    assert_int_equal(mcpage_http_start(f->srv, &hc, &f->h), 0);
    f->port = mcpage_http_port(f->h);
    assert_true(f->port > 0);
    return f;
}

static fixture *start_with(mcpage_keyring *kr, int (*health)(void *, char *, size_t), void *ud)
{
    return start_shared(kr, health, ud, NULL);
}

static fixture *start(void)
{
    return start_with(NULL, NULL, NULL);
}

static void stop(fixture *f)
{
    mcpage_http_stop(f->h, 200);
    mcpage_server_free(f->srv);
    free(f);
}

/* Initializes a session on f with `init`; copies its id. */
static void init_session_with(fixture *f, const char *init, char *sid, size_t max)
{
    hc_init(f->port, init, sid, max);
}

static void init_session(fixture *f, char *sid, size_t max)
{
    hc_init(f->port, HC_INIT, sid, max);
}

static char *post(fixture *f, const char *sid, const char *body)
{
    return hc_post(f->port, sid, body);
}

static const char CAPS_CALL[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"caps\",\"arguments\":{}}}";

static void a_session_continues_on_any_endpoint_holding_the_key(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(3, 0x5a), *other = tp_keyring(4, 0xa5);
    fixture *a = start_with(kr, NULL, NULL), *b = start_with(kr, NULL, NULL),
            *c = start_with(other, NULL, NULL);
    char sid[SID_MAX];
    init_session_with(a,
                      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"roots\":{"
                      "\"listChanged\":true}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                      sid, sizeof sid);
    stop(a); /* the instance that opened the session is gone */

    /* b never saw initialize: the id alone carries the session, capabilities included. */
    assert_int_equal(mcpage_http_session_count(b->h), 0);
    char *r = post(b, sid, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "{\\\"roots\\\":{\\\"listChanged\\\":true}}"));
    free(r);
    assert_int_equal(mcpage_http_session_count(b->h), 1);
    /* initialize again on a continued session is refused as on the first instance. */
    r = post(b, sid, HC_INIT);
    assert_non_null(strstr(r, "already initialized"));
    free(r);

    /* Another key: not this deployment's session. */
    r = post(c, sid, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    assert_non_null(strstr(r, "signed with a key this server does not hold"));
    free(r);

    /* DELETE ends it here, and here the id stays refused. */
    int fd = hc_dial(b->port);
    hc_send(fd, b->port, "DELETE", sid, "application/json", NULL, NULL);
    r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 204"));
    free(r);
    assert_int_equal(mcpage_http_session_count(b->h), 0);
    r = post(b, sid, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    assert_non_null(strstr(r, "ended with DELETE"));
    free(r);
    /* A damaged id is unknown. */
    sid[10] = sid[10] == 'A' ? 'B' : 'A';
    r = post(b, sid, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    assert_non_null(strstr(r, "not one this server issued"));
    free(r);
    stop(b);
    stop(c);
    mcpage_keyring_free(kr);
    mcpage_keyring_free(other);
}

/*
 * A record of ended sessions shared by endpoints, kept in memory: what a
 * store shared by instances keeps (tools_ended_sessions on PostgreSQL).
 * `down` makes every hook fail, as an unreachable store does.
 */
typedef struct ledger {
    pthread_mutex_t mu;
    struct {
        uint8_t key[MCPAGE_HTTP_SESSION_KEY_LEN];
        int64_t until;
    } ends[64];
    int n;
    atomic_bool down;
    atomic_int polls;
    int first_ms; /* a first poll (position 0) answers this late */
} ledger;

static int ledger_record(void *ud, const uint8_t *key, int64_t until)
{
    ledger *l = ud;
    if (atomic_load(&l->down))
        return -1;
    pthread_mutex_lock(&l->mu);
    assert_true(l->n < 64);
    memcpy(l->ends[l->n].key, key, MCPAGE_HTTP_SESSION_KEY_LEN);
    l->ends[l->n++].until = until;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static int ledger_lookup(void *ud, const uint8_t *key, bool *ended)
{
    ledger *l = ud;
    if (atomic_load(&l->down))
        return -1;
    pthread_mutex_lock(&l->mu);
    *ended = false;
    for (int i = 0; i < l->n; i++)
        if (memcmp(l->ends[i].key, key, MCPAGE_HTTP_SESSION_KEY_LEN) == 0)
            *ended = true;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static int ledger_since(void *ud, int64_t *mark,
                        void (*each)(void *ctx, const uint8_t *key, int64_t until), void *ctx)
{
    ledger *l = ud;
    atomic_fetch_add(&l->polls, 1);
    if (*mark == 0 && l->first_ms)
        usleep((useconds_t)l->first_ms * 1000);
    if (atomic_load(&l->down))
        return -1;
    pthread_mutex_lock(&l->mu);
    /* The position is 1 + the ends already seen; 0 sets it. */
    for (int i = *mark > 0 ? (int)*mark - 1 : l->n; i < l->n; i++)
        each(ctx, l->ends[i].key, l->ends[i].until);
    *mark = l->n + 1;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static void delete_session(fixture *f, const char *sid)
{
    int fd = hc_dial(f->port);
    hc_send(fd, f->port, "DELETE", sid, "application/json", NULL, NULL);
    char *r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 204"));
    free(r);
}

static void delete_on_one_endpoint_ends_the_session_on_all(void **state)
{
    (void)state;
    /* A first poll that answers late: the position must be set before an
       endpoint serves, or b's would be set past the DELETE below and b
       would never learn of it (seen under load before it was). */
    ledger l = {.mu = PTHREAD_MUTEX_INITIALIZER, .first_ms = 300};
    mcpage_http_ended shared = {
        .record = ledger_record, .lookup = ledger_lookup, .since = ledger_since, .ud = &l};
    mcpage_keyring *kr = tp_keyring(5, 0x3c);
    fixture *a = start_shared(kr, NULL, NULL, &shared), *b = start_shared(kr, NULL, NULL, &shared),
            *c = start_shared(kr, NULL, NULL, &shared);
    char s1[SID_MAX], s2[SID_MAX];
    init_session(a, s1, sizeof s1);
    init_session(a, s2, sizeof s2);
    char *r = post(b, s1, CAPS_CALL); /* b holds s1 too now */
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    free(r);
    assert_int_equal(mcpage_http_session_count(b->h), 1);

    delete_session(a, s1);
    assert_int_equal(l.n, 1);
    /* c never held s1: refused at once. */
    r = post(c, s1, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    assert_non_null(strstr(r, "ended with DELETE"));
    free(r);
    assert_int_equal(mcpage_http_session_count(c->h), 0);
    /* b held it: its poller ends it within a tick or two (10 s allowed
       for a loaded machine). */
    for (int i = 0; i < 200 && mcpage_http_session_count(b->h) > 0; i++)
        usleep(50 * 1000);
    assert_int_equal(mcpage_http_session_count(b->h), 0);
    r = post(b, s1, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    assert_non_null(strstr(r, "ended with DELETE"));
    free(r);

    /* The record unreachable: DELETE still ends the session where it was
       sent, the other endpoints go on with what they know, and keep trying. */
    atomic_store(&l.down, true);
    delete_session(a, s2);
    assert_int_equal(l.n, 1);
    r = post(a, s2, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    free(r);
    r = post(c, s2, CAPS_CALL);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    free(r);
    int before = atomic_load(&l.polls);
    usleep(1200 * 1000);
    assert_true(atomic_load(&l.polls) > before); /* retried, with backoff */
    atomic_store(&l.down, false);
    stop(a);
    stop(b);
    stop(c);
    mcpage_keyring_free(kr);
}

static void health_reports_the_embedders_check(void **state)
{
    (void)state;
    fixture *ok = start(), *bad = start_with(NULL, sick, "the store is unavailable (test)");
    char req[256];
    int fd = hc_dial(ok->port);
    int n = snprintf(req, sizeof req,
                     "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                     ok->port);
    assert_int_equal(write(fd, req, (size_t)n), n);
    char *r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "{\"status\":\"ok\",\"sessions\":0}"));
    free(r);
    fd = hc_dial(bad->port);
    n = snprintf(req, sizeof req,
                 "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                 bad->port);
    assert_int_equal(write(fd, req, (size_t)n), n);
    r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 503"));
    assert_non_null(
        strstr(r, "{\"status\":\"unavailable\",\"reason\":\"the store is unavailable (test)\""));
    free(r);
    stop(ok);
    stop(bad);
}

static void a_list_is_json_and_a_call_is_a_primed_sse_stream(void **state)
{
    (void)state;
    fixture *f = start();
    char sid[SID_MAX];
    init_session(f, sid, sizeof sid);
    assert_int_equal(mcpage_http_session_count(f->h), 1);

    int fd = hc_dial(f->port);
    hc_send(fd, f->port, "POST", sid, "application/json, text/event-stream", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    char *r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "Content-Type: application/json"));
    assert_non_null(strstr(r, "\"name\":\"flood\""));
    free(r);

    fd = hc_dial(f->port);
    hc_send(fd, f->port, "POST", sid, "application/json, text/event-stream", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"nap\",\"arguments\":{}}}");
    r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "Content-Type: text/event-stream"));
    char *prime = strstr(r, "id: ");
    assert_non_null(prime);
    assert_non_null(strstr(prime, "\nretry: 1000\ndata: \n\n")); /* the priming event */
    char *res = strstr(r, "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\"");
    assert_non_null(res);
    assert_true(res > prime);
    assert_non_null(strstr(res, "woke"));
    free(r);
    stop(f);
}

static void a_slow_consumer_is_cut_off_and_resumes_to_the_result(void **state)
{
    (void)state;
    fixture *f = start();
    char sid[SID_MAX];
    init_session(f, sid, sizeof sid);
    int fd = hc_dial(f->port);
    hc_send(fd, f->port, "POST", sid, "text/event-stream", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"flood\",\"arguments\":{}}}");
    /* Read nothing while the tool sends 16 MB: the server must not buffer it all for us. */
    sleep(2);
    size_t total = 0;
    char *r = hc_read_all(fd, 8 << 20, &total, 10000);
    assert_true(total < (size_t)FLOOD_N * FLOOD_SIZE / 2); /* cut off, not fed 2 MB */
    assert_null(strstr(r, "flood done"));
    /* The last event id we saw lets us resume; the result is still in the buffer. */
    char last[64] = "";
    for (char *p = strstr(r, "\nid: ") ? r : NULL; p && (p = strstr(p, "id: ")) != NULL; p += 4)
        if (p == r || p[-1] == '\n')
            sscanf(p + 4, "%63[0-9_]", last);
    assert_true(last[0] != '\0');
    free(r);
    /* Resume once the tool is done: what is left is the bounded buffer and the result. */
    for (int i = 0; i < 3000 && !atomic_load(&flood_finished); i++)
        usleep(10000);
    assert_true(atomic_load(&flood_finished));
    usleep(200000);
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Last-Event-ID: %s\r\n", last);
    fd = hc_dial(f->port);
    hc_send(fd, f->port, "GET", sid, "text/event-stream", hdr, NULL);
    r = hc_read_all(fd, 8 << 20, &total, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "flood done"));
    assert_true(total < 2 * TEST_BUFFER); /* replayed from the bounded buffer */
    free(r);
    stop(f);
}

static void stop_ends_held_streams_and_waiting_calls_promptly(void **state)
{
    (void)state;
    fixture *f = start();
    char sid[SID_MAX];
    init_session(f, sid, sizeof sid);
    int get = hc_dial(f->port);
    hc_send(get, f->port, "GET", sid, "text/event-stream", NULL, NULL);
    int call = hc_dial(f->port);
    hc_send(call, f->port, "POST", sid, "application/json", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"nap\",\"arguments\":{}}}");
    usleep(200000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    stop(f);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms < 1500);
    char *g = hc_read_all(get, 1 << 16, NULL, 10000); /* closed by the server, not by our timeout */
    assert_non_null(strstr(g, "id: 0_0\nretry: 1000\ndata: \n\n"));
    free(g);
    free(hc_read_all(call, 1 << 16, NULL, 10000));
}

/* A 2026-07-28 tools/call of nap (id 7), its answer awaited as JSON or as SSE. */
static void send_modern_nap(fixture *f, int fd, bool sse)
{
    hc_send(fd, f->port, "POST", NULL, "application/json, text/event-stream",
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: nap\r\n",
            sse ? "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"nap\",\"arguments\":{},\"_meta\":{\"progressToken\":1,"
                  "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                  "\"io.modelcontextprotocol/clientCapabilities\":{}}}}"
                : "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"nap\",\"arguments\":{},\"_meta\":{"
                  "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                  "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
}

/*
 * The stateless era: a call waiting for its JSON answer, and one on an SSE
 * stream, when the endpoint stops. libmicrohttpd aborts the process when
 * it is stopped with a connection still suspended, so both must be woken
 * and answered (or closed) first.
 */
static void stop_ends_waiting_stateless_calls(void **state)
{
    (void)state;
    for (int round = 0; round < 2; round++) {
        fixture *f = start();
        atomic_store(&naps_begun, 0);
        int json = hc_dial(f->port), sse = hc_dial(f->port);
        send_modern_nap(f, json, false);
        send_modern_nap(f, sse, true);
        while (atomic_load(&naps_begun) < 2)
            usleep(1000);
        if (round == 1)
            usleep(100 * 1000); /* the connections are parked by now, most likely */
        stop(f);
        char *j = hc_read_all(json, 1 << 16, NULL, 10000),
             *s = hc_read_all(sse, 1 << 16, NULL, 10000);
        /* Refused as stopping once the grace passed (nap takes 2 s), else answered. */
        assert_true((strstr(j, "HTTP/1.1 503") && strstr(j, "the server is stopping")) ||
                    (strstr(j, "HTTP/1.1 200") && strstr(j, "woke")));
        assert_non_null(strstr(s, "HTTP/1.1 200"));
        assert_non_null(strstr(s, "Content-Type: text/event-stream"));
        free(j);
        free(s);
    }
}

static void bad_configurations_are_refused(void **state)
{
    (void)state;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "t", "1");
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_http_config hc;
    mcpage_http *h = NULL;
    mcpage_http_config_init(&hc);
    hc.host = "example.com"; /* names are not resolved: what is checked is what is bound */
    assert_int_equal(mcpage_http_start(srv, &hc, &h), MCPAGE_EINVAL);
    mcpage_http_config_init(&hc);
    hc.auth_token = "";
    assert_int_equal(mcpage_http_start(srv, &hc, &h), MCPAGE_EINVAL);
    assert_null(h);
    mcpage_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_list_is_json_and_a_call_is_a_primed_sse_stream),
        cmocka_unit_test(a_slow_consumer_is_cut_off_and_resumes_to_the_result),
        cmocka_unit_test(stop_ends_held_streams_and_waiting_calls_promptly),
        cmocka_unit_test(stop_ends_waiting_stateless_calls),
        cmocka_unit_test(bad_configurations_are_refused),
        cmocka_unit_test(a_session_continues_on_any_endpoint_holding_the_key),
        cmocka_unit_test(health_reports_the_embedders_check),
        cmocka_unit_test(delete_on_one_endpoint_ends_the_session_on_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
