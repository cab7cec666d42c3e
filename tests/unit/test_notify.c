/*
 * Change notifications of the runtime (docs/runtime.md, "Change
 * notifications"), message by message: mcpage_server_resources_list_changed
 * and mcpage_server_resource_updated reach the 2025-11-25 sessions that
 * subscribed and the 2026-07-28 subscriptions/listen requests whose filter
 * asked, and nobody else; a listen is acknowledged first with the filter it
 * honours, carries its id on every notification, ends with
 * notifications/cancelled, and is refused when malformed, duplicated or one
 * too many. A thread notifying while sessions come and go (ASan, TSan).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/server.h>

#include "support/mcp_capture.h"

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define SUB_ID "io.modelcontextprotocol/subscriptionId"
#define URI_A  "notes://a"
#define URI_B  "notes://b"

static int read_note(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    return mcpage_contents_add_text(out, uri, "text/plain", "note", 4);
}

static mcpage_server *server(bool list_changed)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "notify-test", "1.0.0");
    cfg.resources_list_changed = list_changed;
    mcpage_server *srv = NULL;
    assert_int_equal(mcpage_server_new(&cfg, &srv), 0);
    mcpage_resource_template t = {
        .uri_template = "notes://{id}", .name = "note", .read = read_note};
    assert_int_equal(mcpage_server_add_resource_template(srv, &t), 0);
    return srv;
}

/*
 * Opens a listen with `id` (JSON text) and `filter`; returns the
 * acknowledgement, which comes first (and alone, unless another thread
 * notifies: `busy`).
 */
static json_t *listen_open(capture *c, const char *id, const char *filter, bool busy)
{
    char msg[1024];
    (void)snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"subscriptions/listen\","
                   "\"params\":{" META ",\"notifications\":%s}}",
                   id, filter);
    capture_send(c, msg);
    json_t *ack = capture_take(c);
    assert_non_null(ack);
    assert_string_equal(json_string_value(json_object_get(ack, "method")),
                        "notifications/subscriptions/acknowledged");
    assert_null(json_object_get(ack, "id")); /* a notification: the request stays open */
    if (!busy)
        assert_null(capture_take(c));
    return ack;
}

static json_t *listen_on(capture *c, const char *id, const char *filter)
{
    return listen_open(c, id, filter, false);
}

static const json_t *params_of(const json_t *m)
{
    return json_object_get(m, "params");
}

static void the_2025_side_hears_what_it_subscribed_to(void **state)
{
    (void)state;
    mcpage_server *srv = server(true);
    capture *sub = capture_on(srv), *quiet = capture_on(srv), *early = capture_on(srv);
    capture_init(sub);
    capture_init(quiet);
    capture_send(sub, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\","
                      "\"params\":{\"uri\":\"" URI_A "\"}}");
    json_decref(capture_take(sub));

    assert_int_equal(mcpage_server_resource_updated(srv, URI_A), 1);
    json_t *m = capture_take(sub);
    assert_string_equal(json_string_value(json_object_get(m, "method")),
                        "notifications/resources/updated");
    assert_string_equal(json_string_value(json_object_get(params_of(m), "uri")), URI_A);
    assert_null(json_object_get(params_of(m), "_meta"));
    json_decref(m);
    assert_int_equal(mcpage_server_resource_updated(srv, URI_B), 0);
    assert_null(capture_take(sub));
    assert_null(capture_take(quiet));

    /* The list: every initialized session, not one before initialize. */
    assert_int_equal(mcpage_server_resources_list_changed(srv), 2);
    m = capture_take(quiet);
    assert_string_equal(json_string_value(json_object_get(m, "method")),
                        "notifications/resources/list_changed");
    json_decref(m);
    json_decref(capture_take(sub));
    assert_null(capture_take(early));

    capture_send(sub, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/unsubscribe\","
                      "\"params\":{\"uri\":\"" URI_A "\"}}");
    json_decref(capture_take(sub));
    assert_int_equal(mcpage_server_resource_updated(srv, URI_A), 0);
    capture_free(early);
    capture_free(quiet);
    capture_free(sub);
    mcpage_server_free(srv);
}

static void a_listen_is_acknowledged_first_and_carries_its_id(void **state)
{
    (void)state;
    mcpage_server *srv = server(true);
    capture *c = capture_on(srv), *other = capture_on(srv);
    json_t *ack = listen_on(c, "\"L1\"",
                            "{\"toolsListChanged\":true,\"promptsListChanged\":true,"
                            "\"resourcesListChanged\":true,\"resourceSubscriptions\":"
                            "[\"" URI_A "\",\"" URI_A "\"]}");
    const json_t *p = params_of(ack);
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "_meta"), SUB_ID)),
                        "L1");
    /* Honoured: the resources (deduplicated), never tools or prompts. */
    json_t *want = json_loads("{\"resourcesListChanged\":true,\"resourceSubscriptions\":"
                              "[\"" URI_A "\"]}",
                              0, NULL);
    assert_true(json_equal(json_object_get(p, "notifications"), want));
    json_decref(want);
    json_decref(ack);
    json_decref(listen_on(other, "7", "{\"resourceSubscriptions\":[\"" URI_B "\"]}"));

    assert_int_equal(mcpage_server_resource_updated(srv, URI_A), 1);
    char *related = NULL;
    json_t *m = capture_take_related(c, &related);
    assert_string_equal(related, "\"L1\""); /* on HTTP: the listen's own stream */
    free(related);
    assert_string_equal(json_string_value(json_object_get(params_of(m), "uri")), URI_A);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(params_of(m), "_meta"), SUB_ID)), "L1");
    json_decref(m);
    assert_null(capture_take(other));

    assert_int_equal(mcpage_server_resource_updated(srv, URI_B), 1);
    m = capture_take(other);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(params_of(m), "_meta"), SUB_ID)), 7);
    json_decref(m);

    /* The list: only the listen that asked. */
    assert_int_equal(mcpage_server_resources_list_changed(srv), 1);
    m = capture_take(c);
    assert_string_equal(json_string_value(json_object_get(m, "method")),
                        "notifications/resources/list_changed");
    json_decref(m);
    assert_null(capture_take(other));

    /* notifications/cancelled ends it, with no answer. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                    "\"params\":{\"requestId\":\"L1\"}}");
    assert_null(capture_take(c));
    assert_int_equal(mcpage_server_resource_updated(srv, URI_A), 0);
    assert_int_equal(mcpage_server_resources_list_changed(srv), 0);
    /* Its id is free again. */
    json_decref(listen_on(c, "\"L1\"", "{}"));
    /* What is subscribed now, either way, once each. */
    capture *legacy = capture_on(srv);
    capture_init(legacy);
    capture_send(legacy, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\","
                         "\"params\":{\"uri\":\"" URI_B "\"}}");
    json_decref(capture_take(legacy));
    json_decref(
        listen_on(c, "\"L2\"", "{\"resourceSubscriptions\":[\"" URI_A "\",\"" URI_B "\"]}"));
    char **uris = NULL;
    size_t n = 0;
    assert_int_equal(mcpage_server_subscriptions(srv, &uris, &n), 0);
    assert_int_equal(n, 2);
    assert_true((strcmp(uris[0], URI_A) == 0 && strcmp(uris[1], URI_B) == 0) ||
                (strcmp(uris[0], URI_B) == 0 && strcmp(uris[1], URI_A) == 0));
    mcpage_server_subscriptions_free(uris, n);
    assert_int_equal(mcpage_server_subscriptions(NULL, &uris, &n), MCPAGE_EINVAL);
    capture_free(legacy);
    capture_free(other);
    capture_free(c);
    mcpage_server_free(srv);
}

static void bad_duplicate_and_excess_listens_are_refused(void **state)
{
    (void)state;
    mcpage_server *srv = server(false);
    capture *c = capture_on(srv);
    const char *bad[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META "}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META
        ",\"notifications\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META
        ",\"notifications\":{\"resourcesListChanged\":\"yes\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META
        ",\"notifications\":{\"resourceSubscriptions\":\"" URI_A "\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META
        ",\"notifications\":{\"resourceSubscriptions\":[\"\"]}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{" META
        ",\"notifications\":{\"resourceSubscriptions\":[3]}}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        capture_send(c, bad[i]);
        json_decref(capture_take_error(c, -32602));
    }
    /* Without cfg.resources_list_changed the list is not acknowledged, nor sent. */
    json_t *ack = listen_on(c, "1", "{\"resourcesListChanged\":true}");
    assert_int_equal(json_object_size(json_object_get(params_of(ack), "notifications")), 0);
    json_decref(ack);
    assert_int_equal(mcpage_server_resources_list_changed(srv), 0);
    /* The same id again, while open. */
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\","
                    "\"params\":{" META ",\"notifications\":{}}}");
    json_decref(capture_take_error(c, -32600));
    /* 16 open at once, the 17th refused. */
    for (int i = 2; i <= 16; i++) {
        char id[16];
        (void)snprintf(id, sizeof id, "%d", i);
        json_decref(listen_on(c, id, "{\"resourceSubscriptions\":[\"" URI_A "\"]}"));
    }
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"subscriptions/listen\","
                    "\"params\":{" META ",\"notifications\":{}}}");
    json_decref(capture_take_error(c, -32602));
    assert_int_equal(mcpage_server_resource_updated(srv, URI_A), 15);
    capture_clear(c);
    /* The 2025-11-25 era has no such method. */
    capture_init(c);
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"subscriptions/listen\","
                    "\"params\":{\"notifications\":{}}}");
    json_decref(capture_take_error(c, -32601));
    assert_int_equal(mcpage_server_resource_updated(NULL, URI_A), MCPAGE_EINVAL);
    assert_int_equal(mcpage_server_resource_updated(srv, NULL), MCPAGE_EINVAL);
    assert_int_equal(mcpage_server_resources_list_changed(NULL), MCPAGE_EINVAL);
    capture_free(c); /* frees its 15 open listens */
    mcpage_server_free(srv);
}

typedef struct churn {
    mcpage_server *srv;
    int stop;
    long sent;
    pthread_mutex_t mu;
} churn;

static void *notifier(void *arg)
{
    churn *ch = arg;
    for (;;) {
        pthread_mutex_lock(&ch->mu);
        int stop = ch->stop;
        pthread_mutex_unlock(&ch->mu);
        if (stop)
            break;
        int a = mcpage_server_resource_updated(ch->srv, URI_A);
        int b = mcpage_server_resources_list_changed(ch->srv);
        assert_true(a >= 0 && b >= 0);
        pthread_mutex_lock(&ch->mu);
        ch->sent += a + b;
        pthread_mutex_unlock(&ch->mu);
    }
    return NULL;
}

static void notifying_while_sessions_come_and_go(void **state)
{
    (void)state;
    churn ch = {.srv = server(true)};
    pthread_mutex_init(&ch.mu, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, notifier, &ch), 0);
    for (int i = 0; i < 200; i++) {
        capture *c = capture_on(ch.srv);
        if (i % 2) {
            json_decref(listen_open(c, "\"x\"",
                                    "{\"resourcesListChanged\":true,\"resourceSubscriptions\":"
                                    "[\"" URI_A "\"]}",
                                    true));
        } else {
            capture_init(c);
            capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\","
                            "\"params\":{\"uri\":\"" URI_A "\"}}");
        }
        capture_free(c); /* while the notifier may be sending to it */
    }
    pthread_mutex_lock(&ch.mu);
    ch.stop = 1;
    pthread_mutex_unlock(&ch.mu);
    pthread_join(t, NULL);
    pthread_mutex_destroy(&ch.mu);
    /* Nobody left: nothing sent. */
    assert_int_equal(mcpage_server_resource_updated(ch.srv, URI_A), 0);
    mcpage_server_free(ch.srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_2025_side_hears_what_it_subscribed_to),
        cmocka_unit_test(a_listen_is_acknowledged_first_and_carries_its_id),
        cmocka_unit_test(bad_duplicate_and_excess_listens_are_refused),
        cmocka_unit_test(notifying_while_sessions_come_and_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
