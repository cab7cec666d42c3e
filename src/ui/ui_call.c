/*
 * In-process tool calls through a runtime session (ui_call.h).
 */
#include "ui/ui_call.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one reply a call's session waits for. */
typedef struct ui_reply {
    pthread_mutex_t mu; /* the runtime sends from a worker thread */
    json_t *msg;        /* the JSON-RPC response, once it came */
} ui_reply;

static int on_send(void *ud, const char *msg, size_t len, const char *related_id)
{
    (void)related_id;
    ui_reply *r = ud;
    if (len > UI_CALL_REPLY_MAX)
        return 0;
    json_t *v = json_loadb(msg, len, 0, NULL);
    /* only the response to our request (id 1); notifications are not kept */
    if (v && json_integer_value(json_object_get(v, "id")) == 1 &&
        (json_object_get(v, "result") || json_object_get(v, "error"))) {
        pthread_mutex_lock(&r->mu);
        json_decref(r->msg);
        r->msg = v;
        v = NULL;
        pthread_mutex_unlock(&r->mu);
    }
    json_decref(v);
    return 0;
}

json_t *ui_call_tool(mcpage_server *srv, const mcpage_caller *caller, const char *name,
                     const json_t *args, char *err, size_t errcap)
{
    ui_reply r = {.msg = NULL};
    pthread_mutex_init(&r.mu, NULL);
    mcpage_session *s = NULL;
    json_t *result = NULL;
    int rc = mcpage_session_new(srv, on_send, &r, &s);
    if (rc == 0)
        rc = mcpage_session_restore(s, mcpage_protocol_latest(), NULL);
    if (rc == 0)
        mcpage_session_set_caller(s, caller); /* the page's reader reads as itself */
    if (rc != 0) {
        (void)snprintf(err, errcap, "cannot open a session: %s", mcpage_strerror(rc));
        goto done;
    }
    json_t *a = args ? json_incref((json_t *)args) : json_object();
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", 1, "method",
                            "tools/call", "params", "name", name, "arguments", a);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (text == NULL) {
        (void)snprintf(err, errcap, "out of memory");
        goto done;
    }
    mcpage_session_receive(s, text, strlen(text));
    free(text);
    if (mcpage_session_drain(s, UI_CALL_TIMEOUT_MS) != 0) {
        mcpage_session_cancel_all(s);
        (void)snprintf(err, errcap, "%s took longer than %d s and was cancelled", name,
                       UI_CALL_TIMEOUT_MS / 1000);
        goto done;
    }
    pthread_mutex_lock(&r.mu);
    json_t *msg = r.msg;
    r.msg = NULL;
    pthread_mutex_unlock(&r.mu);
    result = json_incref(json_object_get(msg, "result"));
    if (result == NULL) {
        const char *m = ui_str(json_object_get(msg, "error"), "message", "no answer");
        (void)snprintf(err, errcap, "%s", m);
    }
    json_decref(msg);
done:
    mcpage_session_free(s);
    json_decref(r.msg);
    pthread_mutex_destroy(&r.mu);
    return result;
}

json_t *ui_records(const json_t *structured, const char *noun)
{
    const json_t *rows = json_object_get(structured, noun);
    if (!json_is_array(rows))
        return NULL;
    const json_t *cols = json_object_get(structured, "columns");
    json_t *out = json_array();
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (json_is_object(row)) {
            json_array_append(out, (json_t *)row);
        } else if (json_is_array(row) && json_is_array(cols)) {
            json_t *o = json_object();
            size_t k;
            const json_t *col;
            json_array_foreach(cols, k, col)
            {
                json_t *v = json_array_get(row, k);
                if (json_is_string(col) && v)
                    json_object_set(o, json_string_value(col), v);
            }
            json_array_append_new(out, o);
        }
    }
    return out;
}

const char *ui_rec_str(const json_t *rec, const json_t *page, const char *key, const char *dflt)
{
    return ui_str(rec, key, ui_str(page, key, dflt));
}

const char *ui_str(const json_t *obj, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(obj, key));
    return v ? v : dflt;
}

long long ui_int(const json_t *obj, const char *key, long long dflt)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}
