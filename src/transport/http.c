/*
 * The Streamable HTTP transport (MCP 2025-11-25) on libmicrohttpd: the
 * daemon's callbacks, routing by path and method, the housekeeping
 * thread, start and stop. What each file of the transport holds is
 * listed in http_internal.h.
 *
 * One endpoint, /mcp. A POST carries one JSON-RPC message: notifications
 * and responses get 202; a request is answered either with one JSON body
 * (the connection is suspended until the runtime answers) or with an SSE
 * stream carrying the request's notifications, the server's requests to
 * the client and finally the response. GET opens the session's standalone
 * stream (messages tied to no request), or resumes any stream with
 * Last-Event-ID. DELETE ends the session.
 *
 * Threads: libmicrohttpd runs `threads` epoll threads; connections with
 * nothing to send are suspended (no thread, no timeout) and resumed when
 * there is. A housekeeping thread sends heartbeats and expires idle
 * sessions.
 */
#include <mcpage/http.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/signalfd.h>
#endif

#include "page/alloc.h"
#include "page/invariant.h"
#include "page/jw.h"
#include "transport/http_internal.h"

int64_t http_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ routing */

/*
 * Counts a request in h->answering, or not while its body is awaited: a
 * stop waits for the counted ones to complete (their answer or stream end
 * sent) before the daemon closes their connections.
 */
static void set_answering(mcpage_http *h, http_req *rq, bool on)
{
    if (rq->answering == on)
        return;
    rq->answering = on;
    if (on) {
        atomic_fetch_add(&h->answering, 1);
    } else if (atomic_fetch_sub(&h->answering, 1) == 1 && h->stopping) {
        pthread_mutex_lock(&h->lock); /* the stop may be waiting for the last one */
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->lock);
    }
}

/*
 * GET /health: 200 {"status":"ok"} while the server can serve, else 503
 * with the reason the embedder's check gave (a load balancer's probe;
 * no session, no token needed, nothing secret in it).
 */
static enum MHD_Result handle_health(mcpage_http *h, struct MHD_Connection *c, const char *method)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return http_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
                         "Method Not Allowed: /health takes GET");
    char why[256] = "";
    int rc = h->cfg.health ? h->cfg.health(h->cfg.health_ud, why, sizeof why) : 0;
    jw w;
    jw_init(&w, 1024);
    jw_object_begin(&w);
    jw_kv_string(&w, "status", rc == 0 ? "ok" : "unavailable");
    if (rc != 0)
        jw_kv_string(&w, "reason", why[0] ? why : "the server's health check failed");
    jw_kv_int(&w, "sessions", (int64_t)mcpage_http_session_count(h));
    jw_object_end(&w);
    enum MHD_Result ret = w.err
                              ? MHD_NO
                              : http_queue(c, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                                           "application/json", w.buf, w.len, NULL);
    jw_free(&w);
    return ret;
}

/* The tool a tools/call names, or NULL. */
static const char *tool_name(const http_message *m)
{
    return json_string_value(json_object_get(json_object_get(m->v, "params"), "name"));
}

/*
 * The one place a complete POST body is dispatched: parsed once into a
 * message (http_request.c), then handed to the era that serves it. Today
 * that is the 2025-11-25 session path (http_session.c), or the stateless
 * path of revision 2026-07-28 (http_stateless.c).
 */
static enum MHD_Result route_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq)
{
    http_message m;
    enum MHD_Result ret = MHD_NO;
    bool parsed = http_message_parse(h, c, rq, &m, &ret);
    http_body_release(h, rq); /* the text is not needed once parsed */
    if (!parsed)
        return ret;
    if (m.request && strcmp(m.method, "tools/call") == 0 &&
        !http_check_tool_scope(h, c, rq, tool_name(&m), &ret)) {
        http_message_clear(&m);
        return ret;
    }
    if (http_is_modern(c, &m)) {
        if (rq->hs) { /* looked up with the headers, but the body is of the stateless era */
            http_session_unref(rq->hs);
            rq->hs = NULL;
        }
        ret = http_stateless_post(h, c, rq, &m);
    } else {
        ret = http_session_post(h, c, rq, &m);
    }
    http_message_clear(&m);
    return ret;
}

/*
 * A POST's headers passed: before any of its body is kept, the session
 * it names must exist (initialize without one makes one later; the
 * stateless era names none), and its declared length must fit the budget
 * of buffered bodies.
 */
static enum MHD_Result admit_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq)
{
    enum MHD_Result ret = MHD_NO;
    if (!http_check_post_headers(h, c, &ret))
        return ret;
    if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id") &&
        !http_is_modern(c, NULL)) {
        if (!http_check_version(c, &ret))
            return ret;
        rq->hs = http_need_session(h, c, &ret);
        if (rq->hs == NULL)
            return ret;
    }
    if (!http_body_begin(h, c, rq, &ret))
        return ret;
    set_answering(h, rq, false); /* until the body is in: a client may never send it */
    return MHD_YES;              /* the body follows */
}

/* The first call for a request: its headers are complete; check and route them. */
static enum MHD_Result route_headers(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                     const char *url, const char *method)
{
    enum MHD_Result ret = MHD_NO;
    if (h->oauth && http_oauth_is_metadata_path(h->oauth, url))
        return http_oauth_metadata_answer(h, c, method); /* public: no Origin, Host or token */
    if (!http_check_origin(h, c, &ret))
        return ret;
    if (strcmp(url, "/health") == 0)
        return handle_health(h, c, method);
    if (strcmp(url, "/mcp") != 0 && h->cfg.page)
        return http_page(h, c, rq, url, method); /* pages beside /mcp (http_page.c) */
    if (strcmp(url, "/mcp") != 0)
        return http_fail(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
                         "Not Found: the MCP endpoint is /mcp");
    if (!http_check_host(h, c, &ret))
        return ret;
    if (strcmp(method, "OPTIONS") == 0)
        return http_preflight(c); /* CORS preflight for an allowed browser origin */
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0,
         del = strcmp(method, "DELETE") == 0;
    if (!get && !post && !del)
        return http_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
                         "Method Not Allowed: /mcp takes POST, GET and DELETE");
    if (!http_check_auth(h, c, rq, &ret))
        return ret;
    if ((get || del) && http_is_modern(c, NULL))
        return http_stateless_refuse(c, method);
    if (get)
        return http_sse_get(h, c);
    if (del)
        return http_session_delete(h, c);
    return admit_post(h, c, rq);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    mcpage_http *h = cls;
    http_req *rq = *con_cls;
    if (rq == NULL) {
        rq = mcpage__calloc(1, sizeof *rq);
        if (rq == NULL)
            return MHD_NO;
        *con_cls = rq;
        set_answering(h, rq, true);
    }
    if (rq->page) /* resumed: its page was rendered on a worker */
        return http_page_finish(c, rq);
    if (rq->waiting)
        return http_session_finish_wait(c, rq);
    if (!rq->started) {
        rq->started = true;
        return route_headers(h, c, rq, url, method);
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return http_body_append(h, c, rq, upload_data, n) ? MHD_YES : MHD_NO;
    }
    http_body_end(h, c);
    set_answering(h, rq, true);
    if (rq->too_big)
        return http_fail_too_big(h, c);
    return route_post(h, c, rq);
}

/* libmicrohttpd is done with a request: release its state. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    http_req *rq = *con_cls;
    if (rq == NULL)
        return;
    *con_cls = NULL;
    if (rq->hs) {
        if (rq->st) {
            pthread_mutex_lock(&rq->hs->lock);
            http_stream_remove(rq->hs, rq->st);
            pthread_mutex_unlock(&rq->hs->lock);
        }
        atomic_store(&rq->hs->last_active, http_now_ms());
        if (rq->hs->modern) /* its one request is over: answered, or abandoned */
            http_transient_done(cls, rq->hs);
        http_session_unref(rq->hs);
    }
    set_answering(cls, rq, false);
    http_page_release(cls, rq);
    http_body_release(cls, rq);
    oauth_principal_clear(&rq->who);
    mcpage__free(rq);
}

/*
 * libmicrohttpd's accept policy: once the stop began, a new connection is
 * closed as soon as it is accepted. (Not MHD_quiesce_daemon: on an epoll
 * daemon with a thread pool it races the polling threads for the listening
 * socket's removal from their epoll sets, and the loser calls abort() with
 * "Failed to remove listen FD from epoll set"; libmicrohttpd 0.9.75.)
 */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr;
    (void)addrlen;
    const mcpage_http *h = cls;
    return h->stopping ? MHD_NO : MHD_YES;
}

/* ------------------------------------------------------------ housekeeping */

bool http_wait_tick(mcpage_http *h, long ms)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&h->cv, &h->lock, &dl);
    return !h->stopping;
}

/*
 * Every HTTP_TICK_MS: expire tombstones and idle sessions, send
 * heartbeats, time out requests, notice clients gone from a waiting POST.
 */
static void *keeper_main(void *arg)
{
    mcpage_http *h = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        if (!http_wait_tick(h, HTTP_TICK_MS))
            break;
        http_tombstones_expire(h, (int64_t)time(NULL));
        http_cancel *cancels = NULL;
        http_session *expired = http_sessions_tick(h, http_now_ms(), &cancels);
        pthread_mutex_unlock(&h->lock);
        http_cancels_run(cancels);
        for (http_session *hs = expired, *n; hs; hs = n) {
            n = hs->next;
            if (h->cfg.verbose)
                (void)fprintf(stderr, "mcpage: session %s expired after %u s idle\n", hs->label,
                              h->cfg.session_idle_s);
            http_session_end(hs);
        }
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* ------------------------------------------------------------ lifetime */

void mcpage_http_config_init(mcpage_http_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = "127.0.0.1";
    cfg->max_connections = 2048;
    cfg->max_sessions = 1024;
    cfg->session_idle_s = 1800;
    cfg->session_max_age_s = 86400;
    cfg->connection_timeout_s = 60;
    cfg->heartbeat_ms = 15000;
    cfg->retry_ms = 1000;
    cfg->threads = 2;
    cfg->stream_buffer = (size_t)256 << 10;
    cfg->max_buffered = HTTP_MAX_BUFFERED_DEFAULT;
    cfg->body_timeout_s = HTTP_BODY_TIMEOUT_DEFAULT;
    cfg->request_timeout_s = HTTP_REQUEST_TIMEOUT_DEFAULT;
}

static void http_free(mcpage_http *h)
{
    for (size_t i = 0; i < h->norigins; i++)
        mcpage__free(h->origins[i]);
    mcpage__free(h->origins);
    mcpage__free(h->host);
    mcpage__free(h->tombs);
    http_oauth_free(h->oauth);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->auth_lock);
    pthread_mutex_destroy(&h->lock);
    mcpage__free(h);
}

/*
 * The OAuth resource server, once the port is known: the resource
 * defaults to this server's own /mcp URL, which only means something to
 * clients when bound to a definite address.
 */
static int oauth_start(mcpage_http *h, const mcpage_http_oauth *o)
{
    char resource[300];
    bool v6 = strchr(h->host, ':') != NULL;
    bool wildcard = strcmp(h->host, "0.0.0.0") == 0 || strcmp(h->host, "::") == 0;
    if (o->resource == NULL && wildcard) {
        (void)fprintf(stderr,
                      "mcpage: oauth: bound to %s, the server cannot name its own URL: "
                      "give the resource (--oauth-resource https://HOST/mcp)\n",
                      h->host);
        return MCPAGE_EINVAL;
    }
    (void)snprintf(resource, sizeof resource, "http://%s%s%s:%u/mcp", v6 ? "[" : "", h->host,
                   v6 ? "]" : "", (unsigned)h->port);
    return http_oauth_new(o, resource, &h->oauth);
}

int http_start(mcpage_server *srv, const mcpage_http_config *cfg, bool external, mcpage_http **out)
{
    if (out)
        *out = NULL;
    if (srv == NULL || cfg == NULL || out == NULL || cfg->max_connections == 0 ||
        cfg->max_sessions == 0 || cfg->session_idle_s == 0 || cfg->heartbeat_ms < 10 ||
        cfg->threads == 0 || cfg->threads > 64 || cfg->stream_buffer < 1024 ||
        cfg->body_timeout_s == 0 || (cfg->auth_token && strlen(cfg->auth_token) < HTTP_TOKEN_MIN))
        return MCPAGE_EINVAL;
    char why[400];
    int lrc = http_mhd_load(why, sizeof why);
    if (lrc < 0) {
        (void)fprintf(stderr, "mcpage: %s\n", why);
        return lrc;
    }
    mcpage_http *h = mcpage__calloc(1, sizeof *h);
    if (h == NULL)
        return MCPAGE_ENOMEM;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->auth_lock, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->srv = srv;
    h->cfg = *cfg;
    h->external = external;
    h->host = mcpage__strdup(cfg->host ? cfg->host : "127.0.0.1");
    h->max_body = cfg->max_body ? cfg->max_body : srv->cfg.max_message;
    if (h->cfg.max_buffered < h->max_body)
        h->cfg.max_buffered = h->max_body; /* one largest body always fits */
    h->ntombs = cfg->max_sessions > HTTP_TOMBSTONES_MIN ? cfg->max_sessions : HTTP_TOMBSTONES_MIN;
    h->tombs = mcpage__calloc(h->ntombs, sizeof *h->tombs);
    int rc = MCPAGE_ENOMEM;
    if (h->host == NULL || h->tombs == NULL)
        goto fail;
    h->cfg.host = h->host;
    h->cfg.allow_origins = NULL;
    h->cfg.auth_token = NULL;
    h->cfg.oauth = NULL;
    size_t n = 0;
    while (cfg->allow_origins && cfg->allow_origins[n])
        n++;
    rc = MCPAGE_EINVAL;
    if (n > MCPAGE_HTTP_MAX_ORIGINS)
        goto fail;
    rc = MCPAGE_ENOMEM;
    if (n && (h->origins = mcpage__calloc(n, sizeof *h->origins)) == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cfg->allow_origins[i], "*") == 0)
            h->any_origin = true;
        if ((h->origins[h->norigins] = mcpage__strdup(cfg->allow_origins[i])) == NULL)
            goto fail;
        h->norigins++;
    }
    if (cfg->auth_token) {
        h->auth = true;
        sha256(cfg->auth_token, strlen(cfg->auth_token), h->token_hash);
    }
    /* The address: numeric only, so what is checked is what is bound. */
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME;
#ifdef __linux__
    flags |= MHD_USE_EPOLL;
#endif
    if (external) /* no socket, no thread: the caller adds connections and runs the daemon */
        flags = MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME;
    const char *host = strcmp(h->host, "localhost") == 0 ? "127.0.0.1" : h->host;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    rc = MCPAGE_EINVAL;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(cfg->port);
        h->loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(cfg->port);
        h->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        flags |= MHD_USE_IPv6;
    } else {
        goto fail;
    }
    if (h->cfg.ended.since)
        http_ended_mark(h); /* before the first request can adopt a session */
    /* MHD: one connection is handled by one thread; suspended connections cost none. */
    h->d = MHD_start_daemon(
        flags, cfg->port, on_accept, h, on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(cfg->threads > 1 && !external ? cfg->threads : 0),
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->connection_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONN_MEMORY,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_END);
    rc = MCPAGE_EIO;
    if (h->d == NULL)
        goto fail;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : cfg->port;
    if (cfg->oauth && (rc = oauth_start(h, cfg->oauth)) != 0) {
        MHD_stop_daemon(h->d);
        goto fail;
    }
    if (pthread_create(&h->keeper, NULL, keeper_main, h) != 0) {
        MHD_stop_daemon(h->d);
        goto fail;
    }
    h->keeper_started = true;
    if (h->cfg.ended.since) {
        if (pthread_create(&h->poller, NULL, http_ended_poller, h) != 0) {
            mcpage_http_stop(h, 0);
            return MCPAGE_ENOMEM;
        }
        h->poller_started = true;
    }
    *out = h;
    return 0;
fail:
    http_free(h);
    return rc;
}

int mcpage_http_start(mcpage_server *srv, const mcpage_http_config *cfg, mcpage_http **out)
{
    return http_start(srv, cfg, false, out);
}

uint16_t mcpage_http_port(const mcpage_http *h)
{
    return h->port;
}

size_t mcpage_http_session_count(mcpage_http *h)
{
    pthread_mutex_lock(&h->lock);
    size_t n = h->nsessions;
    pthread_mutex_unlock(&h->lock);
    return n;
}

void mcpage_http_stop(mcpage_http *h, int grace_ms)
{
    if (h == NULL)
        return;
    /* No new connections (on_accept closes them) and no new sessions. */
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lock);
    if (h->keeper_started)
        pthread_join(h->keeper, NULL);
    if (h->poller_started)
        pthread_join(h->poller, NULL);
    /* Running calls get grace_ms to answer before the sessions end, modern requests' too. */
    int64_t deadline = http_now_ms() + (grace_ms > 0 ? grace_ms : 0);
    pthread_mutex_lock(&h->lock);
    for (int modern = 0; modern < 2; modern++)
        for (http_session *hs = modern ? h->transients : h->sessions; hs; hs = hs->next) {
            pthread_mutex_lock(&hs->recv_lock);
            if (hs->s) {
                int64_t left = deadline - http_now_ms();
                mcpage_session_drain(hs->s, left > 0 ? (int)left : 0);
            }
            pthread_mutex_unlock(&hs->recv_lock);
        }
    http_session *all = h->sessions;
    h->sessions = NULL;
    h->nsessions = 0;
    pthread_mutex_unlock(&h->lock);
    for (http_session *hs = all, *n; hs; hs = n) {
        n = hs->next;
        http_session_end(hs); /* wakes every suspended connection: they end */
    }
    /*
     * Modern requests' exchanges close too: streams end (a listen after its closing
     * result), parked JSON POSTs answer 503 unless their answer came. Their sessions end
     * when libmicrohttpd completes the requests. No connection may stay parked (suspended):
     * MHD_stop_daemon aborts the process when one is. Requests that list a session later
     * are refused (http_session_post_transient reads `stopping` under h->lock).
     */
    pthread_mutex_lock(&h->lock);
    for (http_session *hs = h->transients; hs; hs = hs->next)
        http_session_close(hs);
    pthread_mutex_unlock(&h->lock);
    http_pages_stop(h, deadline);
    /* The polling threads answer the resumed requests and end the streams; let those bytes
       go out before the daemon closes the connections (a client that reads nothing gets
       HTTP_STOP_FLUSH_MS). Waiting or not, no connection is suspended any more. */
    int64_t flushed = http_now_ms() + HTTP_STOP_FLUSH_MS;
    pthread_mutex_lock(&h->lock);
    while (atomic_load(&h->answering) > 0 && http_now_ms() < flushed)
        (void)http_wait_tick(h, (long)(flushed - http_now_ms()));
    pthread_mutex_unlock(&h->lock);
    MHD_stop_daemon(h->d);
    http_pages_wait(h);
    http_free(h);
}

int mcpage_serve_http(mcpage_server *srv, const mcpage_http_config *cfg)
{
#ifdef __linux__
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigset_t block = stop;
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old); /* inherited by every thread started below */
    int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
    if (sfd < 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return MCPAGE_EIO;
    }
    mcpage_http *h = NULL;
    int rc = mcpage_http_start(srv, cfg, &h);
    if (rc == 0) {
        const char *host = cfg->host ? cfg->host : "127.0.0.1";
        bool v6 = strchr(host, ':') != NULL;
        (void)fprintf(stderr, "mcpage: listening on http://%s%s%s:%u/mcp\n", v6 ? "[" : "", host,
                      v6 ? "]" : "", (unsigned)mcpage_http_port(h));
        (void)fflush(stderr);
        struct signalfd_siginfo info;
        while (read(sfd, &info, sizeof info) < 0 && errno == EINTR)
            ;
        mcpage_http_stop(h, 500);
    }
    close(sfd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
#else
    (void)srv;
    (void)cfg;
    return MCPAGE_EINVAL;
#endif
}
