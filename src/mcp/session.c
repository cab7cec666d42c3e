/*
 * A session: one client's conversation with the server. It parses each
 * message, answers JSON-RPC envelope errors, runs the lifecycle
 * (initialize, ping, logging/setLevel, cancellation) and the synchronous
 * methods on the caller's thread, and hands tools/call, resources/read
 * and prompts/get to the worker pool.
 *
 * Error choices (documented in docs/runtime.md):
 * - unparseable JSON: -32700 with id null;
 * - a too large or too deep message, a batch (JSON array: batching was
 *   removed in revision 2025-06-18), a wrong envelope: -32600;
 * - a request other than initialize or ping before initialize, a second
 *   initialize, a request id already in flight: -32600;
 * - too many calls in flight on the server: -32000 "Server busy".
 */
#include <mcpage/server.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcp/jsonin.h"
#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/invariant.h"

static const char *const level_names[] = {"debug", "info",     "notice", "warning",
                                          "error", "critical", "alert",  "emergency"};

const char *mcp_level_name(mcpage_log_level l)
{
    if ((int)l < 0 || (int)l > (int)MCPAGE_LOG_EMERGENCY)
        return "info";
    return level_names[l];
}

int mcp_level_parse(const char *name, mcpage_log_level *out)
{
    for (int i = 0; i <= (int)MCPAGE_LOG_EMERGENCY; i++) {
        if (strcmp(level_names[i], name) == 0) {
            *out = (mcpage_log_level)i;
            return 0;
        }
    }
    return MCPAGE_EINVAL;
}

/* ------------------------------------------------------------ output */

/* The compact JSON text of a request id, in `out` (at least MCP_ID_TEXT_MAX bytes), or NULL. */
static const char *id_text(const json_t *id, char *out)
{
    if (json_is_integer(id)) {
        (void)snprintf(out, MCP_ID_TEXT_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        return out;
    }
    if (!json_is_string(id))
        return NULL;
    jw w;
    jw_init(&w, MCP_ID_TEXT_MAX - 1);
    jw_json(&w, id);
    const char *r = NULL;
    if (w.err == 0) {
        memcpy(out, w.buf, w.len + 1);
        r = out;
    }
    jw_free(&w);
    return r;
}

static void send_bytes(mcpage_session *s, const char *buf, size_t len, const json_t *related)
{
    char idbuf[MCP_ID_TEXT_MAX];
    const char *rel = related ? id_text(related, idbuf) : NULL;
    pthread_mutex_lock(&s->send_lock);
    if (s->send && !s->peer_gone && s->send(s->send_ud, buf, len, rel) != 0)
        s->peer_gone = true;
    pthread_mutex_unlock(&s->send_lock);
}

void mcp_write_head(jw *w, const json_t *id)
{
    jw_object_begin(w);
    jw_kv_string(w, "jsonrpc", "2.0");
    jw_key(w, "id");
    jw_json(w, id);
    jw_key(w, "result");
}

void mcp_write_server_meta(jw *w, const mcpage_server *srv)
{
    jw_key(w, "_meta");
    jw_object_begin(w);
    jw_key(w, MCP_META_SERVER_INFO);
    jw_object_begin(w);
    jw_kv_string(w, "name", srv->cfg.name);
    if (srv->cfg.title)
        jw_kv_string(w, "title", srv->cfg.title);
    jw_kv_string(w, "version", srv->cfg.version);
    jw_object_end(w);
    jw_object_end(w);
}

/* Adds what every modern result carries to the result object just closed in `w`. */
static void decorate_modern(const mcpage_server *srv, jw *w, const mcp_cache *cache)
{
    jw_object_reopen(w);
    jw_kv_string(w, "resultType", "complete");
    mcp_write_server_meta(w, srv);
    if (cache) {
        jw_kv_int(w, "ttlMs", cache->ttl_ms);
        jw_kv_string(w, "cacheScope", cache->public_scope ? "public" : "private");
    }
    jw_object_end(w);
}

void mcp_send_result(mcpage_session *s, const mcp_era *era, jw *w, const json_t *id,
                     const mcp_cache *cache)
{
    if (era && era->rev && era->rev->modern)
        decorate_modern(s->srv, w, cache);
    jw_object_end(w);
    if (w->err == 0 && w->depth == 0) {
        send_bytes(s, w->buf, w->len, id);
        jw_free(w);
        return;
    }
    int err = w->err;
    jw_free(w);
    /* The response could not be built: say so instead of sending nothing. */
    char msg[160];
    (void)snprintf(msg, sizeof msg, "Internal error: the response could not be serialized (%s)",
                   mcpage_strerror(err ? err : MCPAGE_EINVAL));
    (void)fprintf(stderr, "mcpage: %s\n", msg);
    mcp_send_error(s, id, RPC_INTERNAL_ERROR, msg, NULL);
}

void mcp_send_finish(mcpage_session *s, jw *w, const json_t *id, const mcp_cache *cache)
{
    mcp_send_result(s, s->req, w, id, cache);
}

void mcp_send_error(mcpage_session *s, const json_t *id, int code, const char *message,
                    json_t *data)
{
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_key(&w, "id");
    if (id)
        jw_json(&w, id);
    else
        jw_null(&w);
    jw_key(&w, "error");
    jw_object_begin(&w);
    jw_kv_int(&w, "code", code);
    jw_kv_string(&w, "message", message);
    if (data) {
        jw_key(&w, "data");
        jw_json(&w, data);
    }
    jw_object_end(&w);
    jw_object_end(&w);
    if (w.err == 0)
        send_bytes(s, w.buf, w.len, id);
    jw_free(&w);
    json_decref(data);
}

void mcp_send_errorf(mcpage_session *s, const json_t *id, int code, json_t *data, const char *fmt,
                     ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mcp_send_error(s, id, code, msg, data);
}

void mcp_send_empty(mcpage_session *s, const json_t *id)
{
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_object_end(&w);
    mcp_send_finish(s, &w, id, NULL);
}

static void send_notification(mcpage_session *s, jw *w, const json_t *related)
{
    if (w->err == 0)
        send_bytes(s, w->buf, w->len, related);
    jw_free(w);
}

/* ------------------------------------------------------------ lifetime */

int mcpage_session_new(mcpage_server *srv, mcpage_send_fn send, void *ud, mcpage_session **out)
{
    *out = NULL;
    if (srv == NULL || send == NULL)
        return MCPAGE_EINVAL;
    int rc = mcp_server_freeze(srv);
    if (rc != 0)
        return rc;
    mcpage_session *s = mcpage__calloc(1, sizeof *s);
    if (s == NULL)
        return MCPAGE_ENOMEM;
    s->srv = srv;
    s->send = send;
    s->send_ud = ud;
    s->level = srv->cfg.log_level;
    s->refs = 1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->send_lock, NULL);
    pthread_cond_init(&s->idle_cv, NULL);
    pthread_cond_init(&s->reply_cv, NULL);
    s->next_out_id = 1;
    pthread_mutex_lock(&srv->sessions_lock);
    s->srv_next = srv->sessions;
    if (srv->sessions)
        srv->sessions->srv_prev = s;
    srv->sessions = s;
    pthread_mutex_unlock(&srv->sessions_lock);
    *out = s;
    return 0;
}

static void listen_free(mcp_listen *l)
{
    for (size_t i = 0; i < l->nuris; i++)
        mcpage__free(l->uris[i]);
    mcpage__free(l->uris);
    json_decref(l->id);
    mcpage__free(l);
}

static void session_destroy(mcpage_session *s)
{
    while (s->listens) {
        mcp_listen *l = s->listens;
        s->listens = l->next;
        listen_free(l);
    }
    for (size_t i = 0; i < s->nsubs; i++)
        mcpage__free(s->subs[i]);
    mcpage__free(s->subs);
    json_decref(s->client_caps);
    pthread_cond_destroy(&s->reply_cv);
    pthread_cond_destroy(&s->idle_cv);
    pthread_mutex_destroy(&s->send_lock);
    pthread_mutex_destroy(&s->lock);
    mcpage__free(s);
}

void mcpage_session_free(mcpage_session *s)
{
    if (s == NULL)
        return;
    mcpage_server *srv = s->srv;
    pthread_mutex_lock(&srv->sessions_lock);
    if (s->srv_prev)
        s->srv_prev->srv_next = s->srv_next;
    else if (srv->sessions == s)
        srv->sessions = s->srv_next;
    if (s->srv_next)
        s->srv_next->srv_prev = s->srv_prev;
    s->srv_next = s->srv_prev = NULL;
    pthread_mutex_unlock(&srv->sessions_lock);
    pthread_mutex_lock(&s->send_lock);
    s->send = NULL;
    pthread_mutex_unlock(&s->send_lock);
    pthread_mutex_lock(&s->lock);
    s->detached = true;
    pthread_cond_broadcast(&s->reply_cv); /* calls waiting on the client give up */
    bool dead = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (dead)
        session_destroy(s);
}

void mcpage_session_set_close_stream(mcpage_session *s, mcpage_close_stream_fn fn)
{
    pthread_mutex_lock(&s->send_lock);
    s->close_stream = fn;
    pthread_mutex_unlock(&s->send_lock);
}

/* Unlinks a call from its session's list (lock held). */
static void unlink_call(mcpage_session *s, mcpage_call *call)
{
    MCPAGE_ASSERT_LOCKED(&s->lock);
    if (call->sprev)
        call->sprev->snext = call->snext;
    else
        s->calls = call->snext;
    if (call->snext)
        call->snext->sprev = call->sprev;
    call->snext = call->sprev = NULL;
    s->ncalls--;
}

void mcp_call_finish(mcpage_call *call)
{
    mcpage_session *s = call->s;
    if (s == NULL) { /* a task's call: no session holds it */
        mcp_call_free(call);
        return;
    }
    pthread_mutex_lock(&s->lock);
    unlink_call(s, call);
    bool dead = --s->refs == 0;
    pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->lock);
    mcp_call_free(call);
    if (dead)
        session_destroy(s);
}

void mcp_call_became_task(mcpage_call *call, struct mcp_task *task)
{
    pthread_mutex_lock(&call->s->lock);
    call->task = task; /* from now on cancel_all and notifications/cancelled pass it by */
    pthread_mutex_unlock(&call->s->lock);
}

void mcp_call_detach(mcpage_call *call)
{
    mcpage_session *s = call->s;
    pthread_mutex_lock(&s->lock);
    unlink_call(s, call);
    pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->lock);
}

void mcp_session_release(mcpage_session *s)
{
    pthread_mutex_lock(&s->lock);
    bool dead = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (dead)
        session_destroy(s);
}

void mcpage_session_cancel_all(mcpage_session *s)
{
    pthread_mutex_lock(&s->lock);
    for (mcpage_call *c = s->calls; c; c = c->snext)
        if (c->task == NULL) /* a task outlives its request: only tasks/cancel ends it */
            atomic_store(&c->cancelled, true);
    pthread_cond_broadcast(&s->reply_cv);
    pthread_mutex_unlock(&s->lock);
}

int mcpage_session_drain(mcpage_session *s, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    if (timeout_ms >= 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&s->lock);
    while (s->ncalls > 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->idle_cv, &s->lock);
        } else if (pthread_cond_timedwait(&s->idle_cv, &s->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    bool idle = s->ncalls == 0;
    pthread_mutex_unlock(&s->lock);
    return idle ? 0 : MCPAGE_ESTATE;
}

bool mcpage_session_initialized(const mcpage_session *s)
{
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    bool init = s->rev != NULL;
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return init;
}

const char *mcpage_session_protocol_version(const mcpage_session *s)
{
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    const char *v = s->rev ? s->rev->name : NULL;
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return v;
}

const json_t *mcpage_session_client_capabilities(const mcpage_session *s)
{
    pthread_mutex_lock((pthread_mutex_t *)&s->lock);
    const json_t *caps = s->client_caps; /* written once, never replaced */
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    return caps;
}

int mcpage_session_restore(mcpage_session *s, const char *protocol_version,
                           const json_t *client_caps)
{
    const mcp_revision *rev = mcp_version_find(protocol_version);
    if (s == NULL || rev == NULL || rev->modern || (client_caps && !json_is_object(client_caps)))
        return MCPAGE_EINVAL;
    json_t *caps = client_caps ? json_deep_copy(client_caps) : NULL;
    if (client_caps && caps == NULL)
        return MCPAGE_ENOMEM;
    pthread_mutex_lock(&s->lock);
    bool again = s->rev != NULL;
    if (!again) {
        s->rev = rev;
        s->client_caps = caps;
        s->client_ready = true;
    }
    pthread_mutex_unlock(&s->lock);
    if (again) {
        json_decref(caps);
        return MCPAGE_ESTATE;
    }
    return MCPAGE_OK;
}

/* ------------------------------------------------------------ notifications out */

/*
 * Sends notifications/message; `related` is the request it belongs to, or
 * NULL; `era` is that request's (NULL: the session's threshold).
 */
static int session_log(mcpage_session *s, const mcp_era *era, mcpage_log_level level,
                       const char *logger, const char *text, const json_t *related)
{
    if (text == NULL || (int)level < 0 || (int)level > (int)MCPAGE_LOG_EMERGENCY)
        return MCPAGE_EINVAL;
    bool pass;
    if (era && era->rev && era->rev->modern) {
        /* Modern: only when the request named a level in its _meta. */
        pass = era->log_level != MCP_LOG_OFF && (int)level >= era->log_level;
    } else {
        pthread_mutex_lock(&s->lock);
        pass = s->rev != NULL && level >= s->level;
        pthread_mutex_unlock(&s->lock);
    }
    if (!pass)
        return 0;
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", "notifications/message");
    jw_key(&w, "params");
    jw_object_begin(&w);
    jw_kv_string(&w, "level", mcp_level_name(level));
    if (logger)
        jw_kv_string(&w, "logger", logger);
    jw_kv_string(&w, "data", text);
    jw_object_end(&w);
    jw_object_end(&w);
    int rc = w.err;
    send_notification(s, &w, related);
    return rc;
}

int mcpage_session_log(mcpage_session *s, mcpage_log_level level, const char *logger,
                       const char *text)
{
    return session_log(s, NULL, level, logger, text, NULL);
}

int mcpage_session_resource_updated(mcpage_session *s, const char *uri)
{
    if (uri == NULL)
        return MCPAGE_EINVAL;
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nsubs && !found; i++)
        found = strcmp(s->subs[i], uri) == 0;
    pthread_mutex_unlock(&s->lock);
    if (!found)
        return 0;
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", "notifications/resources/updated");
    jw_key(&w, "params");
    jw_object_begin(&w);
    jw_kv_string(&w, "uri", uri);
    jw_object_end(&w);
    jw_object_end(&w);
    int rc = w.err;
    send_notification(s, &w, NULL);
    return rc;
}

/* ------------------------------------------------------------ change notifications */

/* The live sessions, each with a reference (release with mcp_session_release). */
static mcpage_session **sessions_held(mcpage_server *srv, size_t *n)
{
    *n = 0;
    pthread_mutex_lock(&srv->sessions_lock);
    size_t count = 0;
    for (mcpage_session *s = srv->sessions; s; s = s->srv_next)
        count++;
    mcpage_session **v = count ? mcpage__calloc(count, sizeof *v) : NULL;
    for (mcpage_session *s = srv->sessions; v && s; s = s->srv_next) {
        pthread_mutex_lock(&s->lock);
        s->refs++;
        pthread_mutex_unlock(&s->lock);
        v[(*n)++] = s;
    }
    pthread_mutex_unlock(&srv->sessions_lock);
    return v;
}

/* One change notification: `method` with {uri} when given, on a listen when `listen_id`. */
static void send_change(mcpage_session *s, const char *method, const char *uri,
                        const json_t *listen_id)
{
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", method);
    jw_key(&w, "params");
    jw_object_begin(&w);
    if (listen_id) {
        jw_key(&w, "_meta");
        jw_object_begin(&w);
        jw_key(&w, MCP_META_SUBSCRIPTION_ID);
        jw_json(&w, listen_id);
        jw_object_end(&w);
    }
    if (uri)
        jw_kv_string(&w, "uri", uri);
    jw_object_end(&w);
    jw_object_end(&w);
    send_notification(s, &w, listen_id);
}

/* True when the listen's filter asked for this change (uri NULL: the list changed). */
static bool listen_wants(const mcp_listen *l, const char *uri)
{
    if (!l->ready)
        return false; /* its acknowledgement is not out yet: nothing may precede it */
    if (uri == NULL)
        return l->list_changed;
    for (size_t i = 0; i < l->nuris; i++)
        if (strcmp(l->uris[i], uri) == 0)
            return true;
    return false;
}

/*
 * Sends one change to one session: on its 2025-11-25 side when it asked
 * (a subscription to `uri`, or any initialized session for the list), and
 * on each open subscriptions/listen whose filter asked. The number sent.
 */
static int notify_session(mcpage_session *s, const char *method, const char *uri)
{
    json_t *ids[MCP_MAX_LISTENS];
    size_t k = 0;
    bool legacy = false;
    pthread_mutex_lock(&s->lock);
    if (!s->detached) {
        if (uri == NULL) {
            legacy =
                s->client_ready && s->rev && !s->rev->modern && s->srv->cfg.resources_list_changed;
        } else {
            for (size_t i = 0; i < s->nsubs && !legacy; i++)
                legacy = strcmp(s->subs[i], uri) == 0;
        }
        for (mcp_listen *l = s->listens; l && k < MCP_MAX_LISTENS; l = l->next)
            if (listen_wants(l, uri))
                ids[k++] = json_incref(l->id);
    }
    pthread_mutex_unlock(&s->lock);
    int sent = 0;
    if (legacy) {
        send_change(s, method, uri, NULL);
        sent++;
    }
    for (size_t i = 0; i < k; i++) {
        send_change(s, method, uri, ids[i]);
        json_decref(ids[i]);
        sent++;
    }
    return sent;
}

/* Sends `method` (for `uri`, or the list when NULL) to every session that asked for it. */
static int notify_all(mcpage_server *srv, const char *method, const char *uri)
{
    size_t n;
    mcpage_session **v = sessions_held(srv, &n);
    int sent = 0;
    for (size_t i = 0; i < n; i++) {
        sent += notify_session(v[i], method, uri);
        mcp_session_release(v[i]);
    }
    mcpage__free(v);
    return sent;
}

int mcpage_server_resources_list_changed(mcpage_server *srv)
{
    if (srv == NULL)
        return MCPAGE_EINVAL;
    if (!srv->cfg.resources_list_changed)
        return 0; /* not offered: nobody was told it would come */
    return notify_all(srv, "notifications/resources/list_changed", NULL);
}

int mcpage_server_resource_updated(mcpage_server *srv, const char *uri)
{
    if (srv == NULL || uri == NULL)
        return MCPAGE_EINVAL;
    return notify_all(srv, "notifications/resources/updated", uri);
}

/* Adds `uri` to the set (unless there); false when out of memory. */
static bool set_add(char ***v, size_t *n, size_t *cap, const char *uri)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], uri) == 0)
            return true;
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **g = mcpage__realloc(*v, c * sizeof *g);
        if (g == NULL)
            return false;
        *v = g;
        *cap = c;
    }
    if (((*v)[*n] = mcpage__strdup(uri)) == NULL)
        return false;
    ++*n;
    return true;
}

int mcpage_server_subscriptions(mcpage_server *srv, char ***uris, size_t *count)
{
    if (uris == NULL || count == NULL)
        return MCPAGE_EINVAL;
    *uris = NULL;
    *count = 0;
    if (srv == NULL)
        return MCPAGE_EINVAL;
    size_t n, cap = 0;
    mcpage_session **v = sessions_held(srv, &n);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        mcpage_session *s = v[i];
        pthread_mutex_lock(&s->lock);
        for (size_t k = 0; ok && !s->detached && k < s->nsubs; k++)
            ok = set_add(uris, count, &cap, s->subs[k]);
        for (mcp_listen *l = s->listens; ok && !s->detached && l; l = l->next)
            for (size_t k = 0; ok && k < l->nuris; k++)
                ok = set_add(uris, count, &cap, l->uris[k]);
        pthread_mutex_unlock(&s->lock);
        mcp_session_release(s);
    }
    mcpage__free(v);
    if (!ok) {
        mcpage_server_subscriptions_free(*uris, *count);
        *uris = NULL;
        *count = 0;
        return MCPAGE_ENOMEM;
    }
    return 0;
}

void mcpage_server_subscriptions_free(char **uris, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mcpage__free(uris[i]);
    mcpage__free(uris);
}

/* A listen filter's flag: absent is false; anything but a boolean is an error (NULL). */
static bool filter_flag(const json_t *filter, const char *name, bool *bad)
{
    const json_t *v = json_object_get(filter, name);
    if (v && !json_is_boolean(v))
        *bad = true;
    return json_is_true(v);
}

/* The listen a filter describes, or NULL after answering the error. */
static mcp_listen *listen_parse(mcpage_session *s, const json_t *id, const json_t *params)
{
    const json_t *f = json_object_get(params, "notifications");
    const json_t *subs = json_object_get(f, "resourceSubscriptions");
    bool bad = !json_is_object(f) || (subs && !json_is_array(subs));
    (void)filter_flag(f, "toolsListChanged", &bad);
    (void)filter_flag(f, "promptsListChanged", &bad);
    bool lc = filter_flag(f, "resourcesListChanged", &bad);
    if (bad) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: subscriptions/listen takes params.notifications, an "
                        "object of booleans toolsListChanged, promptsListChanged, "
                        "resourcesListChanged and an array resourceSubscriptions, such as "
                        "{\"resourcesListChanged\": true, \"resourceSubscriptions\": "
                        "[\"mcpage://sessions/ID\"]}");
        return NULL;
    }
    size_t nuris = json_array_size(subs);
    if (nuris > MCP_MAX_SUBSCRIPTIONS) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: at most %d resourceSubscriptions per listen",
                        MCP_MAX_SUBSCRIPTIONS);
        return NULL;
    }
    for (size_t i = 0; i < nuris; i++) {
        const json_t *u = json_array_get(subs, i);
        if (!json_is_string(u) || json_string_length(u) == 0 ||
            strlen(json_string_value(u)) != json_string_length(u)) {
            mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                            "Invalid params: resourceSubscriptions[%zu] must be a resource uri "
                            "(a non-empty string)",
                            i);
            return NULL;
        }
    }
    const mcpage_server *srv = s->srv;
    bool resources = srv->nresources || srv->nproviders || srv->ntemplates;
    mcp_listen *l = mcpage__calloc(1, sizeof *l);
    bool ok = l != NULL;
    if (ok && resources && nuris)
        ok = (l->uris = mcpage__calloc(nuris, sizeof *l->uris)) != NULL;
    for (size_t i = 0; ok && resources && i < nuris; i++) {
        const char *u = json_string_value(json_array_get(subs, i));
        bool dup = false;
        for (size_t j = 0; j < l->nuris && !dup; j++)
            dup = strcmp(l->uris[j], u) == 0;
        if (!dup && (ok = (l->uris[l->nuris] = mcpage__strdup(u)) != NULL))
            l->nuris++;
    }
    if (ok)
        ok = (l->id = json_deep_copy(id)) != NULL;
    if (!ok) {
        if (l)
            listen_free(l);
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return NULL;
    }
    l->list_changed = lc && resources && srv->cfg.resources_list_changed;
    return l;
}

/* notifications/subscriptions/acknowledged: what the listen will carry, nothing else. */
static void listen_acknowledge(mcpage_session *s, const mcp_listen *l)
{
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", "notifications/subscriptions/acknowledged");
    jw_key(&w, "params");
    jw_object_begin(&w);
    jw_key(&w, "_meta");
    jw_object_begin(&w);
    jw_key(&w, MCP_META_SUBSCRIPTION_ID);
    jw_json(&w, l->id);
    jw_object_end(&w);
    /* Tools and prompts never change while a server runs: never acknowledged. */
    jw_key(&w, "notifications");
    jw_object_begin(&w);
    if (l->list_changed)
        jw_kv_bool(&w, "resourcesListChanged", true);
    if (l->nuris) {
        jw_key(&w, "resourceSubscriptions");
        jw_array_begin(&w);
        for (size_t i = 0; i < l->nuris; i++)
            jw_string(&w, l->uris[i]);
        jw_array_end(&w);
    }
    jw_object_end(&w);
    jw_object_end(&w);
    jw_object_end(&w);
    send_notification(s, &w, l->id);
}

/*
 * subscriptions/listen (2026-07-28): the request stays open, never
 * answered while the server runs; its acknowledgement comes first, then
 * the changes its filter asked for, each with the subscriptionId (the
 * request id). It ends with notifications/cancelled (stdio) or the
 * stream's close (HTTP: the transport's session ends).
 */
static void m_listen(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcp_listen *l = listen_parse(s, id, params);
    if (l == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    bool room = s->nlistens < MCP_MAX_LISTENS, dup = false;
    for (mcp_listen *o = s->listens; o && !dup; o = o->next)
        dup = json_equal(o->id, id);
    for (mcpage_call *c = s->calls; c && !dup; c = c->snext)
        dup = json_equal(c->id, id);
    if (room && !dup) {
        l->next = s->listens;
        s->listens = l;
        s->nlistens++;
    }
    pthread_mutex_unlock(&s->lock);
    if (dup) {
        listen_free(l);
        mcp_send_errorf(s, id, RPC_INVALID_REQUEST, NULL,
                        "Invalid Request: a request with this id is still open; use a new id "
                        "for every request");
        return;
    }
    if (!room) {
        listen_free(l);
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: at most %d subscriptions/listen requests open at once "
                        "on one connection; cancel one first",
                        MCP_MAX_LISTENS);
        return;
    }
    /* Listed but not ready: a change that comes meanwhile is not sent before the
       acknowledgement (the listen is still this thread's: cancellation is read here too). */
    listen_acknowledge(s, l);
    pthread_mutex_lock(&s->lock);
    l->ready = true;
    pthread_mutex_unlock(&s->lock);
}

/* Ends the listen `rid` names (notifications/cancelled); true when there was one. */
static bool listen_cancel(mcpage_session *s, const json_t *rid)
{
    MCPAGE_ASSERT_LOCKED(&s->lock);
    for (mcp_listen **p = &s->listens; *p; p = &(*p)->next)
        if (json_equal((*p)->id, rid)) {
            mcp_listen *l = *p;
            *p = l->next;
            s->nlistens--;
            listen_free(l);
            return true;
        }
    return false;
}

/* ------------------------------------------------------------ the call API */

const json_t *mcpage_call_args(const mcpage_call *call)
{
    return call->args;
}

void *mcpage_call_data(const mcpage_call *call)
{
    return call->item_ud;
}

const mcpage_pager *mcpage_call_pager(const mcpage_call *call)
{
    return call->srv->pager;
}

void *mcpage_call_server_data(const mcpage_call *call)
{
    return call->srv->cfg.user_data;
}

int mcpage_call_fail(mcpage_call *call, int code, const char *message)
{
    if (call == NULL || message == NULL || code == 0)
        return MCPAGE_EINVAL;
    char *copy = mcpage__strdup(message);
    if (copy == NULL)
        return MCPAGE_ENOMEM;
    mcpage__free(call->fail_message);
    call->fail_message = copy;
    call->fail_code = code;
    return 0;
}

bool mcpage_call_cancelled(const mcpage_call *call)
{
    return atomic_load(&((mcpage_call *)call)->cancelled);
}

const json_t *mcpage_call_client_capabilities(const mcpage_call *call)
{
    /* The request's own (modern) or the session's, written once at initialize. */
    return call->era.caps;
}

bool mcpage_call_is_modern(const mcpage_call *call)
{
    return call->era.rev != NULL && call->era.rev->modern;
}

int mcpage_call_round(const mcpage_call *call)
{
    return call->round > 0 ? call->round : 1;
}

int mcpage_call_require(mcpage_call *call, const char *capability)
{
    if (call == NULL || capability == NULL || capability[0] == '\0')
        return MCPAGE_EINVAL;
    if (json_object_get(call->era.caps, capability) != NULL)
        return 0;
    if (call->missing_caps == NULL && (call->missing_caps = json_object()) == NULL)
        return MCPAGE_ENOMEM;
    if (json_object_set_new(call->missing_caps, capability, json_object()) != 0)
        return MCPAGE_ENOMEM;
    return MCPAGE_ENOTSUP;
}

/* The client capability a request to the client needs, or NULL for other methods. */
static const char *input_capability(const char *method)
{
    if (strcmp(method, "sampling/createMessage") == 0)
        return "sampling";
    if (strcmp(method, "elicitation/create") == 0)
        return "elicitation";
    if (strcmp(method, "roots/list") == 0)
        return "roots";
    return NULL;
}

/* Longest key of an input request. */
#define MCP_INPUT_KEY_MAX 64

int mcpage_call_input(mcpage_call *call, const char *key, const char *method, const json_t *params,
                      int timeout_ms, json_t **result)
{
    if (call == NULL || key == NULL || method == NULL || result == NULL ||
        (params && !json_is_object(params)))
        return MCPAGE_EINVAL;
    *result = NULL;
    size_t klen = strlen(key);
    const char *cap = input_capability(method);
    if (klen == 0 || klen > MCP_INPUT_KEY_MAX)
        return MCPAGE_EINVAL;
    if (!mcpage_call_is_modern(call)) {
        if (cap && json_object_get(call->era.caps, cap) == NULL)
            return MCPAGE_ENOTSUP;
        return mcpage_call_request(call, method, params, timeout_ms, result);
    }
    if (cap == NULL)
        return MCPAGE_EINVAL; /* the modern era asks the client only these three things */
    const json_t *answer = json_object_get(call->answers, key);
    if (answer) {
        *result = json_deep_copy(answer);
        return *result ? 0 : MCPAGE_ENOMEM;
    }
    if (json_object_get(call->era.caps, cap) == NULL)
        return MCPAGE_ENOTSUP;
    if (call->asks == NULL && (call->asks = json_object()) == NULL)
        return MCPAGE_ENOMEM;
    json_t *copy = params ? json_deep_copy(params) : json_object();
    json_t *ask = copy ? json_pack("{s:s, s:o}", "method", method, "params", copy) : NULL;
    if (ask == NULL || json_object_set_new(call->asks, key, ask) != 0)
        return MCPAGE_ENOMEM;
    return MCPAGE_EINPUT;
}

int mcpage_call_close_stream(mcpage_call *call)
{
    mcpage_session *s = call->s;
    char idbuf[MCP_ID_TEXT_MAX];
    const char *rel = id_text(call->id, idbuf);
    pthread_mutex_lock(&s->send_lock);
    if (s->close_stream && s->send && rel)
        s->close_stream(s->send_ud, rel);
    pthread_mutex_unlock(&s->send_lock);
    return 0;
}

/* Unlinks `r` from the session's list (lock held). */
static void outreq_unlink(mcpage_session *s, mcp_outreq *r)
{
    MCPAGE_ASSERT_LOCKED(&s->lock);
    for (mcp_outreq **pp = &s->outreqs; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            return;
        }
    }
}

int mcpage_call_request(mcpage_call *call, const char *method, const json_t *params, int timeout_ms,
                        json_t **result)
{
    if (call == NULL || method == NULL || result == NULL || timeout_ms < 1 ||
        timeout_ms > MCPAGE_REQUEST_MAX_TIMEOUT_MS || (params && !json_is_object(params)))
        return MCPAGE_EINVAL;
    *result = NULL;
    mcpage_session *s = call->s;
    mcp_outreq *r = mcpage__calloc(1, sizeof *r);
    if (r == NULL)
        return MCPAGE_ENOMEM;
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (mcp_outreq *o = s->outreqs; o; o = o->next)
        n++;
    if (n >= MCP_MAX_OUTREQS || s->detached) {
        pthread_mutex_unlock(&s->lock);
        mcpage__free(r);
        return n >= MCP_MAX_OUTREQS ? MCPAGE_ERANGE : MCPAGE_ECANCELED;
    }
    r->id = s->next_out_id++;
    r->next = s->outreqs;
    s->outreqs = r;
    pthread_mutex_unlock(&s->lock);

    /* "method" before "id": transports tell our requests from our responses by it. */
    jw w;
    jw_init(&w, s->srv->cfg.max_message);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", method);
    jw_kv_int(&w, "id", r->id);
    if (params) {
        jw_key(&w, "params");
        jw_json(&w, params);
    }
    jw_object_end(&w);
    int rc = w.err;
    if (rc == 0)
        send_bytes(s, w.buf, w.len, call->id);
    jw_free(&w);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    while (rc == 0 && !r->done) {
        if (s->detached || atomic_load(&call->cancelled))
            rc = MCPAGE_ECANCELED;
        else if (pthread_cond_timedwait(&s->reply_cv, &s->lock, &deadline) == ETIMEDOUT && !r->done)
            rc = MCPAGE_ESTATE;
    }
    outreq_unlink(s, r);
    pthread_mutex_unlock(&s->lock);
    if (rc == 0) {
        if (r->result) {
            *result = r->result;
        } else {
            *result = r->error ? r->error : json_object();
            rc = MCPAGE_EIO;
        }
    } else {
        json_decref(r->result);
        json_decref(r->error);
    }
    mcpage__free(r);
    return rc;
}

static void write_number(jw *w, double v)
{
    if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
        jw_int(w, (int64_t)v);
    else
        jw_double(w, v);
}

int mcpage_call_progress(mcpage_call *call, double progress, double total, const char *message)
{
    if (call->progress_token == NULL || call->s == NULL || mcpage_call_cancelled(call))
        return 0; /* no token, or a task: the request it belonged to is answered */
    if (!(progress == progress) || (call->sent_progress && progress <= call->last_progress))
        return MCPAGE_EINVAL; /* the spec requires progress to increase */
    call->sent_progress = true;
    call->last_progress = progress;
    jw w;
    jw_init(&w, 1 << 20);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_kv_string(&w, "method", "notifications/progress");
    jw_key(&w, "params");
    jw_object_begin(&w);
    jw_key(&w, "progressToken");
    jw_json(&w, call->progress_token);
    jw_key(&w, "progress");
    write_number(&w, progress);
    if (total > 0) {
        jw_key(&w, "total");
        write_number(&w, total);
    }
    if (message)
        jw_kv_string(&w, "message", message);
    jw_object_end(&w);
    jw_object_end(&w);
    int rc = w.err;
    send_notification(call->s, &w, call->id);
    return rc;
}

int mcpage_call_log(mcpage_call *call, mcpage_log_level level, const char *logger, const char *fmt,
                    ...)
{
    if (call->s == NULL)
        return 0; /* a task: the request it belonged to is answered */
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCPAGE_EINVAL;
    if ((size_t)n < sizeof small)
        return session_log(call->s, &call->era, level, logger, small, call->id);
    char *big = mcpage__malloc((size_t)n + 1);
    if (big == NULL)
        return MCPAGE_ENOMEM;
    va_start(ap, fmt);
    (void)vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = session_log(call->s, &call->era, level, logger, big, call->id);
    mcpage__free(big);
    return rc;
}

/* ------------------------------------------------------------ methods */

typedef void (*method_fn)(mcpage_session *s, const json_t *id, const json_t *params);

/*
 * The client capabilities a session keeps: the ones MCP defines, each at
 * most MCP_CAPS_ENTRY_MAX bytes of JSON (a larger one keeps only its
 * presence, as {}), so an initialize cannot make a session hold megabytes.
 */
static json_t *caps_kept(const json_t *caps)
{
    static const char *const names[] = {"roots",        "sampling",   "elicitation",
                                        "experimental", "extensions", "tasks"};
    json_t *kept = json_object();
    for (size_t i = 0; kept && i < sizeof names / sizeof names[0]; i++) {
        const json_t *v = json_object_get(caps, names[i]);
        if (v == NULL)
            continue;
        size_t n = json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
        json_t *copy = n <= MCP_CAPS_ENTRY_MAX ? json_deep_copy(v) : json_object();
        if (json_object_set_new(kept, names[i], copy) != 0) {
            json_decref(kept);
            kept = NULL;
        }
    }
    return kept;
}

static void m_initialize(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    const json_t *pv = json_object_get(params, "protocolVersion");
    if (!json_is_string(pv)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "initialize requires params.protocolVersion, a string such as \"%s\"",
                        mcpage_protocol_latest());
        return;
    }
    const json_t *caps = json_object_get(params, "capabilities");
    const json_t *info = json_object_get(params, "clientInfo");
    if ((caps && !json_is_object(caps)) || (info && !json_is_object(info))) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "initialize: capabilities and clientInfo must be objects");
        return;
    }
    pthread_mutex_lock(&s->lock);
    bool again = s->rev != NULL;
    if (!again) {
        s->rev = mcp_version_negotiate(json_string_value(pv));
        s->client_caps = caps ? caps_kept(caps) : NULL;
    }
    const mcp_revision *rev = s->rev;
    pthread_mutex_unlock(&s->lock);
    if (again) {
        mcp_send_errorf(s, id, RPC_INVALID_REQUEST, NULL,
                        "Invalid Request: the session is already initialized; initialize may be "
                        "sent once per session");
        return;
    }
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_kv_string(&w, "protocolVersion", rev->name);
    jw_key(&w, "capabilities");
    mcp_write_capabilities(&w, srv, false);
    jw_key(&w, "serverInfo");
    jw_object_begin(&w);
    jw_kv_string(&w, "name", srv->cfg.name);
    if (srv->cfg.title && rev->titles)
        jw_kv_string(&w, "title", srv->cfg.title);
    jw_kv_string(&w, "version", srv->cfg.version);
    jw_object_end(&w);
    if (srv->cfg.instructions)
        jw_kv_string(&w, "instructions", srv->cfg.instructions);
    jw_object_end(&w);
    mcp_send_finish(s, &w, id, NULL);
}

/* True when the server registered an MCP App view (a resource of MCPAGE_APP_MIME_TYPE). */
static bool apps_offered(const mcpage_server *srv)
{
    for (size_t i = 0; i < srv->nresources; i++)
        if (srv->resources[i].mime_type &&
            strcmp(srv->resources[i].mime_type, MCPAGE_APP_MIME_TYPE) == 0)
            return true;
    return false;
}

void mcp_write_capabilities(jw *w, const mcpage_server *srv, bool modern)
{
    jw_object_begin(w);
    jw_key(w, "tools");
    jw_object_begin(w);
    jw_kv_bool(w, "listChanged", false);
    jw_object_end(w);
    if (srv->nresources || srv->nproviders || srv->ntemplates) {
        /* Modern: resources/subscribe is gone; subscribe means subscriptions/listen honours
           resourceSubscriptions, listChanged that it honours resourcesListChanged. */
        jw_key(w, "resources");
        jw_object_begin(w);
        jw_kv_bool(w, "subscribe", true);
        jw_kv_bool(w, "listChanged", srv->cfg.resources_list_changed);
        jw_object_end(w);
    }
    if (srv->nprompts) {
        jw_key(w, "prompts");
        jw_object_begin(w);
        jw_kv_bool(w, "listChanged", false);
        jw_object_end(w);
    }
    jw_key(w, "logging");
    jw_object_begin(w);
    jw_object_end(w);
    if (srv->complete) {
        jw_key(w, "completions");
        jw_object_begin(w);
        jw_object_end(w);
    }
    bool tasks = modern && mcp_tasks_offered(srv);
    bool apps = apps_offered(srv);
    if (tasks || apps) {
        jw_key(w, "extensions");
        jw_object_begin(w);
        if (tasks) {
            jw_key(w, MCP_TASKS_EXTENSION);
            jw_object_begin(w);
            jw_object_end(w);
        }
        if (apps) {
            /* SEP-1865 through SEP-1724's extensions: in both eras, as the SDKs accept it. */
            jw_key(w, MCPAGE_APP_EXTENSION);
            jw_object_begin(w);
            jw_object_end(w);
        }
        jw_object_end(w);
    }
    jw_object_end(w);
}

static void m_ping(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcp_send_empty(s, id);
}

static void m_set_level(mcpage_session *s, const json_t *id, const json_t *params)
{
    const json_t *lv = json_object_get(params, "level");
    mcpage_log_level level;
    if (!json_is_string(lv) || mcp_level_parse(json_string_value(lv), &level) != 0) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "logging/setLevel: params.level must be one of debug, info, notice, "
                        "warning, error, critical, alert, emergency");
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->level = level;
    pthread_mutex_unlock(&s->lock);
    mcp_send_empty(s, id);
}

static const char *uri_param(mcpage_session *s, const json_t *id, const json_t *params,
                             const char *method)
{
    const json_t *uri = json_object_get(params, "uri");
    if (!json_is_string(uri) || json_string_length(uri) == 0) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL, "%s requires params.uri, a string",
                        method);
        return NULL;
    }
    return json_string_value(uri);
}

static void m_subscribe(mcpage_session *s, const json_t *id, const json_t *params)
{
    const char *uri = uri_param(s, id, params, "resources/subscribe");
    if (uri == NULL)
        return;
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    bool found = false;
    for (size_t i = 0; i < s->nsubs && !found; i++)
        found = strcmp(s->subs[i], uri) == 0;
    if (!found) {
        char **subs = NULL;
        char *copy = NULL;
        if (s->nsubs >= MCP_MAX_SUBSCRIPTIONS)
            rc = MCPAGE_ERANGE;
        else if ((subs = mcpage__realloc(s->subs, (s->nsubs + 1) * sizeof *subs)) == NULL ||
                 (copy = mcpage__strdup(uri)) == NULL)
            rc = MCPAGE_ENOMEM;
        if (subs)
            s->subs = subs;
        if (copy)
            s->subs[s->nsubs++] = copy;
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == MCPAGE_ERANGE)
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "resources/subscribe: at most %d subscriptions per session; unsubscribe "
                        "from one first",
                        MCP_MAX_SUBSCRIPTIONS);
    else if (rc != 0)
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    else
        mcp_send_empty(s, id);
}

static void m_unsubscribe(mcpage_session *s, const json_t *id, const json_t *params)
{
    const char *uri = uri_param(s, id, params, "resources/unsubscribe");
    if (uri == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nsubs; i++) {
        if (strcmp(s->subs[i], uri) == 0) {
            mcpage__free(s->subs[i]);
            s->subs[i] = s->subs[--s->nsubs];
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    mcp_send_empty(s, id);
}

/* Registers a call in the session and queues it; answers errors itself. */
static void start_call(mcpage_session *s, mcpage_call *call)
{
    pthread_mutex_lock(&s->lock);
    for (mcpage_call *c = s->calls; c; c = c->snext) {
        if (json_equal(c->id, call->id)) {
            pthread_mutex_unlock(&s->lock);
            json_t *data = json_pack("{s:O}", "id", call->id);
            mcp_send_error(s, call->id, RPC_INVALID_REQUEST,
                           "Invalid Request: a request with this id is still in flight; use a "
                           "new id for every request",
                           data);
            mcp_call_free(call);
            return;
        }
    }
    call->s = s;
    call->snext = s->calls;
    call->sprev = NULL;
    if (s->calls)
        s->calls->sprev = call;
    s->calls = call;
    s->ncalls++;
    s->refs++;
    pthread_mutex_unlock(&s->lock);
    if (mcp_server_submit(s->srv, call) != 0) {
        json_t *id = json_incref(call->id);
        mcp_call_finish(call);
        mcp_send_errorf(s, id, RPC_SERVER_BUSY, NULL,
                        "Server busy: %zu calls are already in flight (the limit); retry when one "
                        "finishes",
                        s->srv->cfg.max_inflight);
        json_decref(id);
    }
}

/*
 * A call for the request being answered (s->req): a modern request's
 * capabilities are copied, since the call outlives the message.
 */
static mcpage_call *new_call(mcpage_session *s, mcp_call_kind kind, const json_t *id,
                             const json_t *params)
{
    mcpage_call *call = mcpage__calloc(1, sizeof *call);
    if (call == NULL)
        return NULL;
    call->kind = kind;
    call->srv = s->srv;
    call->id = json_deep_copy(id);
    call->round = 1;
    atomic_init(&call->cancelled, false);
    const json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (json_is_string(tok) || json_is_integer(tok))
        call->progress_token = json_deep_copy(tok);
    call->era = *s->req;
    call->caller.all = s->caller.all;
    if ((s->caller.subject && !(call->caller.subject = mcpage__strdup(s->caller.subject))) ||
        (s->caller.scopes && !(call->caller.scopes = mcpage__strdup(s->caller.scopes))) ||
        (s->caller.groups && !(call->caller.groups = mcpage__strdup(s->caller.groups)))) {
        mcp_call_free(call);
        return NULL;
    }
    if (call->era.rev && call->era.rev->modern) {
        call->caps = caps_kept(s->req->caps); /* a call may live long: keep what is used */
        call->era.caps = call->caps;
        if (call->caps == NULL) {
            mcp_call_free(call);
            return NULL;
        }
    }
    if (call->id == NULL) {
        mcp_call_free(call);
        return NULL;
    }
    return call;
}

/* Binds a modern call to its request and reads its answers; false after answering an error. */
static bool prepare_input(mcpage_session *s, mcpage_call *call, const char *method,
                          const char *name, const json_t *params)
{
    if (!mcpage_call_is_modern(call))
        return true;
    if (mcp_call_prepare_input(s, call, method, name, params) == 0)
        return true;
    mcp_call_free(call);
    return false;
}

static void m_tools_call(mcpage_session *s, const json_t *id, const json_t *params)
{
    const json_t *name = json_object_get(params, "name");
    if (!json_is_string(name)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "tools/call requires params.name, the name of a tool from tools/list");
        return;
    }
    const mcp_tool *tool = NULL;
    for (size_t i = 0; i < s->srv->ntools && !tool; i++)
        if (strcmp(s->srv->tools[i].name, json_string_value(name)) == 0)
            tool = &s->srv->tools[i];
    if (tool == NULL) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, json_pack("{s:O}", "tool", name),
                        "Unknown tool: '%.200s'; tools/list names the tools of this server",
                        json_string_value(name));
        return;
    }
    const json_t *args = json_object_get(params, "arguments");
    if (args != NULL && !json_is_object(args) && !json_is_null(args)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "tools/call: params.arguments must be an object of the tool's parameters");
        return;
    }
    if (tool->tasks == MCPAGE_TASKS_REQUIRED &&
        !(s->req->rev && s->req->rev->modern && mcp_tasks_declared(s->req->caps))) {
        mcp_tasks_required(s, id); /* it only runs as a task */
        return;
    }
    mcpage_call *call = new_call(s, CALL_TOOL, id, params);
    if (call == NULL)
        goto oom;
    call->tool = tool;
    call->item_ud = tool->ud;
    call->args = json_is_object(args) ? json_deep_copy(args) : json_object();
    if (call->args == NULL) {
        mcp_call_free(call);
        goto oom;
    }
    if (prepare_input(s, call, "tools/call", tool->name, params))
        start_call(s, call);
    return;
oom:
    mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
}

static void m_resources_read(mcpage_session *s, const json_t *id, const json_t *params)
{
    const char *uri = uri_param(s, id, params, "resources/read");
    if (uri == NULL)
        return;
    mcpage_call *call = new_call(s, CALL_READ, id, params);
    if (call == NULL || (call->uri = mcpage__strdup(uri)) == NULL ||
        (call->args = json_object()) == NULL) {
        mcp_call_free(call);
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    if (prepare_input(s, call, "resources/read", uri, params))
        start_call(s, call);
}

static void m_prompts_get(mcpage_session *s, const json_t *id, const json_t *params)
{
    const json_t *name = json_object_get(params, "name");
    if (!json_is_string(name)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "prompts/get requires params.name, the name of a prompt from prompts/list");
        return;
    }
    const mcp_prompt *p = NULL;
    for (size_t i = 0; i < s->srv->nprompts && !p; i++)
        if (strcmp(s->srv->prompts[i].name, json_string_value(name)) == 0)
            p = &s->srv->prompts[i];
    if (p == NULL) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, json_pack("{s:O}", "prompt", name),
                        "Unknown prompt: '%.200s'; prompts/list names the prompts of this server",
                        json_string_value(name));
        return;
    }
    const json_t *args = json_object_get(params, "arguments");
    if (args && !json_is_object(args) && !json_is_null(args)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "prompts/get: params.arguments must be an object of strings");
        return;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)args, key, v)
    {
        if (!json_is_string(v)) {
            mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                            "prompts/get: argument '%.100s' must be a string", key);
            return;
        }
    }
    for (int i = 0; i < p->nargs; i++) {
        if (p->args[i].required && json_object_get(args, p->args[i].name) == NULL) {
            mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                            "prompts/get: prompt '%s' requires the argument '%s'", p->name,
                            p->args[i].name);
            return;
        }
    }
    mcpage_call *call = new_call(s, CALL_PROMPT, id, params);
    if (call == NULL ||
        (call->args = json_is_object(args) ? json_deep_copy(args) : json_object()) == NULL) {
        mcp_call_free(call);
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    call->prompt = p;
    call->item_ud = p->ud;
    if (prepare_input(s, call, "prompts/get", p->name, params))
        start_call(s, call);
}

/* Which capability a method needs; methods of absent capabilities are unknown. */
typedef enum need { NEED_NONE, NEED_RESOURCES, NEED_PROMPTS, NEED_COMPLETIONS, NEED_TASKS } need;

/* Which era a method belongs to. */
typedef enum era_mask { ERA_LEGACY = 1, ERA_MODERN = 2, ERA_BOTH = 3 } era_mask;

typedef struct method_entry {
    const char *name; /* JSON-RPC method */
    method_fn fn;     /* its handler */
    bool before_init; /* legacy: allowed before initialize */
    need needs;       /* capability it belongs to */
    era_mask eras;    /* the eras that have it */
} method_entry;

static const method_entry methods[] = {
    {"initialize", m_initialize, true, NEED_NONE, ERA_LEGACY},
    {"ping", m_ping, true, NEED_NONE, ERA_LEGACY},
    {"logging/setLevel", m_set_level, false, NEED_NONE, ERA_LEGACY},
    {"server/discover", mcp_discover, true, NEED_NONE, ERA_MODERN},
    {"tools/list", mcp_list_tools, false, NEED_NONE, ERA_BOTH},
    {"tools/call", m_tools_call, false, NEED_NONE, ERA_BOTH},
    {"resources/list", mcp_list_resources, false, NEED_RESOURCES, ERA_BOTH},
    {"resources/templates/list", mcp_list_templates, false, NEED_RESOURCES, ERA_BOTH},
    {"resources/read", m_resources_read, false, NEED_RESOURCES, ERA_BOTH},
    {"resources/subscribe", m_subscribe, false, NEED_RESOURCES, ERA_LEGACY},
    {"resources/unsubscribe", m_unsubscribe, false, NEED_RESOURCES, ERA_LEGACY},
    {"prompts/list", mcp_list_prompts, false, NEED_PROMPTS, ERA_BOTH},
    {"prompts/get", m_prompts_get, false, NEED_PROMPTS, ERA_BOTH},
    {"completion/complete", mcp_complete, false, NEED_COMPLETIONS, ERA_BOTH},
    {"tasks/get", mcp_tasks_get, false, NEED_TASKS, ERA_MODERN},
    {"tasks/update", mcp_tasks_update, false, NEED_TASKS, ERA_MODERN},
    {"tasks/cancel", mcp_tasks_cancel, false, NEED_TASKS, ERA_MODERN},
    {"subscriptions/listen", m_listen, false, NEED_NONE, ERA_MODERN},
};

static bool capability_present(const mcpage_server *srv, need n)
{
    switch (n) {
    case NEED_RESOURCES:
        return srv->nresources || srv->nproviders || srv->ntemplates;
    case NEED_PROMPTS:
        return srv->nprompts > 0;
    case NEED_COMPLETIONS:
        return srv->complete != NULL;
    case NEED_TASKS:
        return mcp_tasks_offered(srv);
    default:
        return true;
    }
}

/*
 * True when a request speaks the modern era: its _meta names a protocol
 * version, or it is server/discover (which exists only there). Decided per
 * message, so one process serves both eras, and a client that probes with
 * server/discover and then sends initialize anyway is still served.
 */
static bool is_modern_request(const char *method, const json_t *params)
{
    return strcmp(method, "server/discover") == 0 ||
           json_object_get(json_object_get(params, "_meta"), MCP_META_VERSION) != NULL;
}

static const method_entry *find_method(const mcpage_server *srv, const char *method, era_mask era)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, method) == 0)
            return (methods[i].eras & era) && capability_present(srv, methods[i].needs)
                       ? &methods[i]
                       : NULL;
    return NULL;
}

static void handle_request(mcpage_session *s, const json_t *id, const char *method,
                           const json_t *params)
{
    bool modern = is_modern_request(method, params);
    const method_entry *m = find_method(s->srv, method, modern ? ERA_MODERN : ERA_LEGACY);
    if (json_is_array(params)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: %.100s takes its params as an object, not an array",
                        method);
        return;
    }
    mcp_era era = {0};
    if (modern) {
        if (mcp_modern_era(s, id, params, &era) != 0)
            return;
    } else {
        pthread_mutex_lock(&s->lock);
        era.rev = s->rev;
        era.caps = s->client_caps;
        era.log_level = (int)s->level;
        pthread_mutex_unlock(&s->lock);
    }
    if (m == NULL) {
        mcp_send_errorf(s, id, RPC_METHOD_NOT_FOUND, json_pack("{s:s}", "method", method),
                        modern && find_method(s->srv, method, ERA_LEGACY)
                            ? "Method not found: '%.100s' does not exist in protocol revision "
                              "2026-07-28 (sessions, ping and logging/setLevel were removed)"
                            : "Method not found: '%.100s'",
                        method);
        return;
    }
    if (!modern && !m->before_init && era.rev == NULL) {
        mcp_send_errorf(s, id, RPC_INVALID_REQUEST, NULL,
                        "Invalid Request: the session is not initialized; send initialize first "
                        "(only ping is allowed before it), or speak revision %s: put "
                        "_meta[\"%s\"] in every request",
                        mcpage_protocol_modern(), MCP_META_VERSION);
        return;
    }
    s->req = &era;
    m->fn(s, id, params);
    s->req = NULL;
}

static void handle_notification(mcpage_session *s, const char *method, const json_t *params)
{
    if (strcmp(method, "notifications/initialized") == 0) {
        pthread_mutex_lock(&s->lock);
        s->client_ready = s->rev != NULL;
        pthread_mutex_unlock(&s->lock);
    } else if (strcmp(method, "notifications/cancelled") == 0) {
        const json_t *rid = json_object_get(params, "requestId");
        if (rid == NULL)
            return;
        pthread_mutex_lock(&s->lock);
        (void)listen_cancel(s, rid);
        for (mcpage_call *c = s->calls; c; c = c->snext)
            if (c->task == NULL && json_equal(c->id, rid))
                atomic_store(&c->cancelled, true);
        pthread_cond_broadcast(&s->reply_cv);
        pthread_mutex_unlock(&s->lock);
    }
    /* Other notifications (progress, roots/list_changed, ...) need no action. */
}

/* Hands a client's response to the call waiting for it in mcpage_call_request(). */
static void take_response(mcpage_session *s, const json_t *msg)
{
    const json_t *id = json_object_get(msg, "id");
    if (!json_is_integer(id))
        return;
    pthread_mutex_lock(&s->lock);
    for (mcp_outreq *r = s->outreqs; r; r = r->next) {
        if (r->id == json_integer_value(id) && !r->done) {
            const json_t *res = json_object_get(msg, "result");
            if (res)
                r->result = json_deep_copy(res);
            else
                r->error = json_deep_copy(json_object_get(msg, "error"));
            r->done = true;
            pthread_cond_broadcast(&s->reply_cv);
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static bool valid_id(const json_t *id)
{
    return json_is_integer(id) ||
           (json_is_string(id) && json_string_length(id) <= MCP_MAX_ID_BYTES);
}

static mcpage_received handle_message(mcpage_session *s, const json_t *msg)
{
    const json_t *jsonrpc = json_object_get(msg, "jsonrpc");
    const json_t *id = json_object_get(msg, "id");
    const json_t *method = json_object_get(msg, "method");
    const json_t *params = json_object_get(msg, "params");
    const json_t *reply_id = valid_id(id) ? id : NULL;
    if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0) {
        mcp_send_error(s, reply_id, RPC_INVALID_REQUEST,
                       "Invalid Request: \"jsonrpc\" must be the string \"2.0\"", NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    if (method == NULL) {
        bool response =
            (json_object_get(msg, "result") || json_object_get(msg, "error")) && id != NULL;
        if (response) {
            take_response(s, msg); /* to a request of ours; unknown or late ids are ignored */
            return MCPAGE_RECEIVED_NOTIFICATION;
        }
        mcp_send_error(s, reply_id, RPC_INVALID_REQUEST,
                       "Invalid Request: a message needs a \"method\" (request or "
                       "notification) or a \"result\"/\"error\" (response)",
                       NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    if (!json_is_string(method)) {
        mcp_send_error(s, reply_id, RPC_INVALID_REQUEST,
                       "Invalid Request: \"method\" must be a string", NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    if (params != NULL && !json_is_object(params) && !json_is_array(params)) {
        mcp_send_error(s, reply_id, RPC_INVALID_REQUEST,
                       "Invalid Request: \"params\" must be an object", NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    if (id == NULL) {
        handle_notification(s, json_string_value(method), json_is_object(params) ? params : NULL);
        return MCPAGE_RECEIVED_NOTIFICATION;
    }
    if (reply_id == NULL) {
        mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                       "Invalid Request: \"id\" must be a string (at most 256 bytes) or an "
                       "integer; null is not allowed",
                       NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    handle_request(s, id, json_string_value(method), params);
    return MCPAGE_RECEIVED_REQUEST;
}

void mcpage_session_set_caller(mcpage_session *s, const mcpage_caller *who)
{
    if (s == NULL)
        return;
    if (who)
        s->caller = *who;
    else
        memset(&s->caller, 0, sizeof s->caller);
}

mcpage_received mcp_session_receive_json(mcpage_session *s, const json_t *msg)
{
    if (json_is_array(msg)) {
        mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                       "Invalid Request: JSON-RPC batches are not supported (MCP removed "
                       "batching in revision 2025-06-18); send one message at a time",
                       NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    if (!json_is_object(msg)) {
        mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                       "Invalid Request: a message must be a JSON object", NULL);
        return MCPAGE_RECEIVED_INVALID;
    }
    return handle_message(s, msg);
}

mcpage_received mcpage_session_receive(mcpage_session *s, const char *msg, size_t len)
{
    char why[256];
    json_t *v = NULL;
    switch (jsonin_parse(msg, len, s->srv->cfg.max_message, s->srv->cfg.max_depth, &v, why,
                         sizeof why)) {
    case JSONIN_OK:
        break;
    case JSONIN_SYNTAX:
        mcp_send_errorf(s, NULL, RPC_PARSE_ERROR, NULL, "Parse error: %s", why);
        return MCPAGE_RECEIVED_INVALID;
    case JSONIN_TOO_LARGE:
    case JSONIN_TOO_DEEP:
        mcp_send_errorf(s, NULL, RPC_INVALID_REQUEST, NULL, "Invalid Request: %s", why);
        return MCPAGE_RECEIVED_INVALID;
    }
    mcpage_received what = mcp_session_receive_json(s, v);
    json_decref(v);
    return what;
}
