/* Test support: a capturing session (see mcp_capture.h). */
#include "support/mcp_capture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_registry.h"

static int capture_sink(void *ud, const char *msg, size_t len, const char *related_id)
{
    capture *c = ud;
    pthread_mutex_lock(c->lock);
    json_t *v = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    if (v == NULL || !json_is_object(v) || memchr(msg, '\n', len) != NULL)
        c->raw_bad++;
    if (v && c->n < CAPTURE_MAX) {
        c->related[c->n] = related_id ? strdup(related_id) : NULL;
        c->msgs[c->n++] = v;
    } else
        json_decref(v);
    pthread_mutex_unlock(c->lock);
    return 0;
}

static capture *make(mcpage_server *srv)
{
    capture *c = calloc(1, sizeof *c);
    pthread_mutex_t *m = malloc(sizeof *m);
    if (c == NULL || m == NULL) {
        free(c);
        free(m);
        return NULL;
    }
    pthread_mutex_init(m, NULL);
    c->lock = m;
    c->srv = srv;
    if (mcpage_session_new(srv, capture_sink, c, &c->s) != 0) {
        free(m);
        free(c);
        return NULL;
    }
    return c;
}

capture *capture_new(size_t page_size)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fixture", "1.0.0");
    cfg.page_size = page_size;
    cfg.title = "Fixture";
    cfg.instructions = "Use it for tests.";
    mcpage_server *srv;
    if (mcpage_server_new(&cfg, &srv) != 0)
        return NULL;
    if (fixture_register(srv) != 0) {
        mcpage_server_free(srv);
        return NULL;
    }
    capture *c = make(srv);
    if (c == NULL) {
        mcpage_server_free(srv);
        return NULL;
    }
    return c;
}

capture *capture_on(mcpage_server *srv)
{
    capture *c = make(srv);
    if (c)
        c->srv = NULL; /* not ours */
    return c;
}

void capture_clear(capture *c)
{
    pthread_mutex_lock(c->lock);
    for (size_t i = 0; i < c->n; i++) {
        json_decref(c->msgs[i]);
        free(c->related[i]);
    }
    c->n = 0;
    pthread_mutex_unlock(c->lock);
}

void capture_free(capture *c)
{
    if (c == NULL)
        return;
    mcpage_session_drain(c->s, -1);
    mcpage_session_free(c->s);
    capture_clear(c);
    if (c->srv)
        mcpage_server_free(c->srv);
    pthread_mutex_destroy(c->lock);
    free(c->lock);
    free(c);
}

void capture_sendn(capture *c, const char *msg, size_t len)
{
    mcpage_session_receive(c->s, msg, len);
    mcpage_session_drain(c->s, -1);
}

void capture_send(capture *c, const char *msg)
{
    capture_sendn(c, msg, strlen(msg));
}

json_t *capture_take_related(capture *c, char **related)
{
    pthread_mutex_lock(c->lock);
    json_t *v = NULL;
    *related = NULL;
    if (c->n > 0) {
        v = c->msgs[0];
        *related = c->related[0];
        memmove(c->msgs, c->msgs + 1, (c->n - 1) * sizeof c->msgs[0]);
        memmove(c->related, c->related + 1, (c->n - 1) * sizeof c->related[0]);
        c->n--;
    }
    pthread_mutex_unlock(c->lock);
    return v;
}

json_t *capture_take(capture *c)
{
    char *related;
    json_t *v = capture_take_related(c, &related);
    free(related);
    return v;
}

json_t *capture_take_error(capture *c, int code)
{
    json_t *v = capture_take(c);
    json_t *err = json_object_get(v, "error");
    if (v == NULL || json_integer_value(json_object_get(err, "code")) != code) {
        char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
        fprintf(stderr, "expected error %d, got %s\n", code, s ? s : "(nothing)");
        free(s);
        json_decref(v);
        return NULL;
    }
    return v;
}

void capture_init(capture *c)
{
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                    "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
    capture_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    capture_clear(c);
}
