/*
 * Pages beside /mcp (mcpage_http_config.page) are rendered on a worker
 * of the server's pool, not on libmicrohttpd's polling thread: with ONE
 * polling thread, a page held in its handler delays neither a concurrent
 * /mcp initialize + ping nor a second page beyond a bound; pages whose
 * handlers call tools through in-process sessions (as the browser view
 * does) all finish even when they outnumber the workers; the handler
 * reads copies of the path and the query arguments; stopping the
 * endpoint while a page is still rendering answers it 503 and waits for
 * the worker. On raw loopback sockets (support/http_client.h).
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

#include <pthread.h>
#include <unistd.h>

#include <mcpage/http.h>
#include <mcpage/server.h>

#include "support/http_client.h"

/* How long a request may take while another page is held (the machine is shared and loaded). */
#define BOUND_MS 2000
/* How long the slow page is held at most (the test releases it sooner). */
#define HOLD_MS 20000
/* Workers of the test server: fewer than the nested pages sent at once. */
#define WORKERS      2
#define NESTED_PAGES 8

static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static bool held;            /* the slow page's handler is running (hold_mu) */
static bool released;        /* it may return (hold_mu) */
static mcpage_server *g_srv; /* the server, for the nested calls */

static void hold_reset(void)
{
    pthread_mutex_lock(&hold_mu);
    held = released = false;
    pthread_mutex_unlock(&hold_mu);
}

static void hold_release(void)
{
    pthread_mutex_lock(&hold_mu);
    released = true;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
}

/* Waits until the slow page's handler runs; false after timeout_ms. */
static bool hold_wait_started(int timeout_ms)
{
    double until = hc_now_ms() + timeout_ms;
    pthread_mutex_lock(&hold_mu);
    while (!held && hc_now_ms() < until) {
        pthread_mutex_unlock(&hold_mu);
        usleep(5000);
        pthread_mutex_lock(&hold_mu);
    }
    bool ok = held;
    pthread_mutex_unlock(&hold_mu);
    return ok;
}

/* The slow page: holds its worker until released. */
static void slow_render(void)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HOLD_MS / 1000;
    pthread_mutex_lock(&hold_mu);
    held = true;
    while (!released)
        if (pthread_cond_timedwait(&hold_cv, &hold_mu, &dl) != 0)
            break;
    pthread_mutex_unlock(&hold_mu);
}

static int quick(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    return mcpage_result_add_text(res, "ok", 2);
}

typedef struct reply {
    pthread_mutex_t mu; /* the runtime sends from a worker */
    bool got;           /* the response came */
} reply;

static int on_reply(void *ud, const char *msg, size_t len, const char *related)
{
    (void)related;
    reply *r = ud;
    if (memmem(msg, len, "\"id\":1", 6) && memmem(msg, len, "\"ok\"", 4)) {
        pthread_mutex_lock(&r->mu);
        r->got = true;
        pthread_mutex_unlock(&r->mu);
    }
    return 0;
}

/* A tool call through an in-process session from the page's worker, as the browser view makes. */
static bool call_quick(void)
{
    reply r = {.got = false};
    pthread_mutex_init(&r.mu, NULL);
    mcpage_session *s = NULL;
    assert_int_equal(mcpage_session_new(g_srv, on_reply, &r, &s), 0);
    assert_int_equal(mcpage_session_restore(s, mcpage_protocol_latest(), NULL), 0);
    static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                              "\"params\":{\"name\":\"quick\",\"arguments\":{}}}";
    mcpage_session_receive(s, req, strlen(req));
    bool ok = mcpage_session_drain(s, HOLD_MS) == 0;
    mcpage_session_free(s);
    pthread_mutex_lock(&r.mu);
    ok = ok && r.got;
    pthread_mutex_unlock(&r.mu);
    pthread_mutex_destroy(&r.mu);
    return ok;
}

static int test_page(void *ud, const mcpage_http_page_req *req, mcpage_http_page *out)
{
    (void)ud;
    char body[512];
    if (strcmp(req->path, "/slow") == 0) {
        slow_render();
        snprintf(body, sizeof body, "slow");
    } else if (strcmp(req->path, "/nested") == 0) {
        snprintf(body, sizeof body, "nested:%s", call_quick() ? "ok" : "no answer");
    } else {
        const char *q = req->arg(req, "q");
        snprintf(body, sizeof body, "%s %s q=%s", req->method, req->path, q ? q : "(none)");
    }
    out->content_type = "text/plain; charset=utf-8";
    out->body = strdup(body);
    out->len = strlen(body);
    out->release = free;
    return 0;
}

typedef struct fixture {
    mcpage_http *h; /* the endpoint */
    int port;       /* its port */
} fixture;

static fixture *start(void)
{
    fixture *f = calloc(1, sizeof *f);
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "t", "1");
    cfg.workers = WORKERS;
    assert_int_equal(mcpage_server_new(&cfg, &g_srv), 0);
    mcpage_tool t = {.name = "quick", .handler = quick};
    assert_int_equal(mcpage_server_add_tool(g_srv, &t), 0);
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    hc.threads = 1; /* one polling thread: whatever holds it holds every connection */
    hc.page = test_page;
    assert_int_equal(mcpage_http_start(g_srv, &hc, &f->h), 0);
    f->port = mcpage_http_port(f->h);
    hold_reset();
    return f;
}

static void stop(fixture *f)
{
    mcpage_http_stop(f->h, 200);
    mcpage_server_free(g_srv);
    g_srv = NULL;
    free(f);
}

/* Sends GET path on a new connection; returns the socket (read it with hc_read_all). */
static int get_send(int port, const char *path)
{
    int fd = hc_dial(port);
    char req[512];
    int n =
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path, port);
    assert_int_equal(write(fd, req, (size_t)n), n);
    return fd;
}

static char *get(int port, const char *path)
{
    return hc_read_all(get_send(port, path), 1 << 16, NULL, HOLD_MS);
}

/* With one polling thread, a page held in its handler delays neither /mcp nor another page. */
static void test_a_slow_page_holds_no_polling_thread(void **state)
{
    (void)state;
    fixture *f = start();
    int slow = get_send(f->port, "/slow");
    assert_true(hold_wait_started(HOLD_MS));

    double t0 = hc_now_ms();
    char sid[SID_MAX];
    hc_init(f->port, HC_INIT, sid, sizeof sid);
    char *pong = hc_post(f->port, sid, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
    double t_mcp = hc_now_ms() - t0;
    assert_non_null(strstr(pong, "HTTP/1.1 200"));
    assert_non_null(strstr(pong, "\"id\":7,\"result\":{}"));
    free(pong);

    t0 = hc_now_ms();
    char *fast = get(f->port, "/fast");
    double t_page = hc_now_ms() - t0;
    assert_non_null(strstr(fast, "HTTP/1.1 200"));
    assert_non_null(strstr(fast, "GET /fast q=(none)"));
    free(fast);
    fprintf(stderr, "while a page is held: initialize + ping %.1f ms, another page %.1f ms\n",
            t_mcp, t_page);
    assert_true(t_mcp < BOUND_MS);
    assert_true(t_page < BOUND_MS);

    pthread_mutex_lock(&hold_mu);
    bool still_held = !released;
    pthread_mutex_unlock(&hold_mu);
    assert_true(still_held); /* both answered while the slow page was still rendering */
    hold_release();
    char *r = hc_read_all(slow, 1 << 16, NULL, HOLD_MS);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "Content-Security-Policy: default-src 'none'"));
    assert_non_null(strstr(r, "\r\n\r\nslow"));
    free(r);
    stop(f);
}

/* Pages calling tools from their workers all finish, though they outnumber the workers. */
static void test_pages_calling_tools_do_not_starve_the_pool(void **state)
{
    (void)state;
    fixture *f = start();
    int fds[NESTED_PAGES];
    double t0 = hc_now_ms();
    for (int i = 0; i < NESTED_PAGES; i++)
        fds[i] = get_send(f->port, "/nested");
    for (int i = 0; i < NESTED_PAGES; i++) {
        char *r = hc_read_all(fds[i], 1 << 16, NULL, HOLD_MS);
        assert_non_null(strstr(r, "HTTP/1.1 200"));
        assert_non_null(strstr(r, "\r\n\r\nnested:ok"));
        free(r);
    }
    double took = hc_now_ms() - t0;
    fprintf(stderr, "%d pages, each calling a tool, on %d workers: %.1f ms\n", NESTED_PAGES,
            WORKERS, took);
    assert_true(took < 5 * BOUND_MS);
    stop(f);
}

/* The handler reads the path and the decoded arguments (the first of a name), HEAD as HEAD. */
static void test_the_handler_reads_copies_of_the_request(void **state)
{
    (void)state;
    fixture *f = start();
    char *r = get(f->port, "/echo?q=a%20b%26c&q=second&flag");
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "\r\n\r\nGET /echo q=a b&c"));
    free(r);
    int fd = hc_dial(f->port);
    char req[256];
    int n =
        snprintf(req, sizeof req,
                 "HEAD /echo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", f->port);
    assert_int_equal(write(fd, req, (size_t)n), n);
    r = hc_read_all(fd, 1 << 16, NULL, HOLD_MS);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_null(strstr(r, "\r\n\r\nHEAD")); /* no body for HEAD */
    free(r);
    stop(f);
}

static void *release_later(void *arg)
{
    (void)arg;
    usleep(500 * 1000);
    hold_release();
    return NULL;
}

/* Stopping while a page renders: the page is answered 503, and stop waits for its worker. */
static void test_stop_answers_a_page_still_rendering(void **state)
{
    (void)state;
    fixture *f = start();
    int slow = get_send(f->port, "/slow");
    assert_true(hold_wait_started(HOLD_MS));
    pthread_t t;
    pthread_create(&t, NULL, release_later, NULL);
    double t0 = hc_now_ms();
    mcpage_http_stop(f->h, 100); /* gives the page 100 ms, then lets go of its connection */
    double took = hc_now_ms() - t0;
    char *r = hc_read_all(slow, 1 << 16, NULL, 2000);
    fprintf(stderr, "stop with a page rendering: %.1f ms; the page got: %.40s\n", took, r);
    assert_non_null(strstr(r, "HTTP/1.1 503"));
    assert_non_null(strstr(r, "the server is stopping"));
    assert_true(took >= 400); /* the worker still held the page: stop waited for it */
    free(r);
    pthread_join(t, NULL);
    mcpage_server_free(g_srv);
    g_srv = NULL;
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_slow_page_holds_no_polling_thread),
        cmocka_unit_test(test_pages_calling_tools_do_not_starve_the_pool),
        cmocka_unit_test(test_the_handler_reads_copies_of_the_request),
        cmocka_unit_test(test_stop_answers_a_page_still_rendering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
