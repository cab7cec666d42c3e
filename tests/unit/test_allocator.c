/*
 * The allocator hook end to end, through the public API only: with a
 * counting allocator installed, a keyring, a pager, a LIST page, a server
 * with a session that initializes, lists and calls a tool (on a worker
 * thread) all allocate through the hook, and everything they took is
 * given back once each object is freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage.h>

static atomic_long live;  /* blocks taken through the hook and not yet freed */
static atomic_long taken; /* blocks taken in all */

static void *count_malloc(size_t n, void *ud)
{
    (void)ud;
    void *p = malloc(n);
    if (p) {
        atomic_fetch_add(&live, 1);
        atomic_fetch_add(&taken, 1);
    }
    return p;
}

static void *count_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    void *q = realloc(p, n);
    if (q && p == NULL) {
        atomic_fetch_add(&live, 1);
        atomic_fetch_add(&taken, 1);
    }
    return q;
}

static void count_free(void *p, void *ud)
{
    (void)ud;
    if (p)
        atomic_fetch_sub(&live, 1);
    free(p);
}

typedef struct sink {
    int messages;  /* messages sent by the session */
    char last[64]; /* the start of the last one */
} sink;

static int capture(void *ud, const char *msg, size_t len, const char *related_id)
{
    (void)related_id;
    sink *s = ud;
    s->messages++;
    snprintf(s->last, sizeof s->last, "%.*s", (int)(len < 63 ? len : 63), msg);
    return 0;
}

static int two_records(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    mcpage_pager *pager = mcpage_call_data(call);
    static const mcpage_list_spec spec = {
        .tool = "things", .unit = "things", .default_limit = 10, .max_limit = 100};
    mcpage_list *pg;
    int rc = mcpage_list_begin(pager, &spec, args, &pg);
    if (rc != 0)
        return rc < 0 ? rc : mcpage_list_finish(pg, res);
    mcpage_list_set_total(pg, 2, 0);
    for (int64_t i = 0; i < 2 && rc == 0; i++) {
        mcpage_keypart k = {.i = i};
        rc = mcpage_list_add(pg, json_pack("{s:I}", "id", (json_int_t)i), &k, 1);
    }
    return mcpage_list_finish(pg, res);
}

static void every_allocation_goes_through_the_hook_and_comes_back(void **state)
{
    (void)state;
    mcpage_allocator a = {count_malloc, count_realloc, count_free, NULL};
    assert_int_equal(mcpage_set_allocator(&a), 0);

    mcpage_keyring *kr;
    mcpage_pager *pager;
    assert_int_equal(mcpage_keyring_new(&kr), 0);
    assert_int_equal(mcpage_keyring_load(kr, NULL, NULL), 0);
    assert_int_equal(mcpage_pager_new(NULL, kr, &pager), 0);
    long after_setup = atomic_load(&taken);
    assert_true(after_setup >= 2);

    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "alloc-test", "1");
    cfg.keyring = kr;
    cfg.workers = 2;
    mcpage_server *srv;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_tool t = {.name = "things",
                     .handler = two_records,
                     .user_data = pager,
                     .input_schema = "{\"type\":\"object\"}"};
    assert_int_equal(mcpage_server_add_tool(srv, &t), 0);
    sink out = {0};
    mcpage_session *s;
    assert_int_equal(mcpage_session_new(srv, capture, &out, &s), 0);
    const char *msgs[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"things\","
        "\"arguments\":{\"limit\":1}}}",
    };
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++)
        mcpage_session_receive(s, msgs[i], strlen(msgs[i]));
    assert_int_equal(mcpage_session_drain(s, 5000), 0);
    assert_int_equal(out.messages, 3);
    assert_non_null(strstr(out.last, "\"id\":3"));
    mcpage_session_free(s);
    mcpage_server_free(srv);
    /* The session, the registry, the worker pool and the page all used the hook. */
    assert_true(atomic_load(&taken) > after_setup + 20);

    mcpage_pager_free(pager);
    mcpage_keyring_free(kr);
    assert_int_equal(atomic_load(&live), 0);
    assert_int_equal(mcpage_set_allocator(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_goes_through_the_hook_and_comes_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
