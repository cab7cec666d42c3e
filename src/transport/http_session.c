/*
 * Sessions of the 2025-11-25 era over HTTP: the table of live sessions,
 * their signed ids, restoring a session from its id, idle expiry, and the
 * POST and DELETE that act within a session.
 *
 * Session ids are signed (session_id.h): the table is a cache of runtime
 * sessions, and an id it does not hold is verified and rebuilt
 * (session_lookup), so a session outlives an idle expiry, a restart or
 * the instance that opened it. Streams stay per process (http_sse.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "page/alloc.h"
#include "page/invariant.h"
#include "page/digest.h"
#include "transport/http_internal.h"

/* ------------------------------------------------------------ references */

void http_session_ref(http_session *hs)
{
    atomic_fetch_add(&hs->refs, 1);
}

void http_session_unref(http_session *hs)
{
    if (atomic_fetch_sub(&hs->refs, 1) != 1)
        return;
    /* Last reference: no request, connection or runtime send can reach hs. */
    for (http_stream *st = hs->streams, *n; st; st = n) {
        n = st->next;
        http_stream_free(st);
    }
    pthread_mutex_destroy(&hs->lock);
    pthread_mutex_destroy(&hs->recv_lock);
    mcpage__free(hs);
}

void http_session_close(http_session *hs)
{
    pthread_mutex_lock(&hs->lock);
    hs->closed = true;
    for (http_stream *st = hs->streams; st; st = st->next) {
        if (st->conn) {
            st->conn->kill = true;
            http_conn_wake(st->conn);
        }
        if (st->json && st->suspended) {
            st->suspended = false;
            MHD_resume_connection(st->waiting);
        }
    }
    pthread_mutex_unlock(&hs->lock);
}

/*
 * Ends a session taken out of the table: closes its streams, answers its
 * waiting POSTs, detaches and frees the runtime session (cancelling its
 * calls), and drops the table's reference.
 */
void http_session_end(http_session *hs)
{
    http_session_close(hs);
    pthread_mutex_lock(&hs->recv_lock);
    if (hs->s) {
        mcpage_session_cancel_all(hs->s);
        mcpage_session_free(hs->s);
        hs->s = NULL;
    }
    pthread_mutex_unlock(&hs->recv_lock);
    if (hs->h->cfg.verbose)
        (void)fprintf(stderr, "mcpage: session %s ended\n", hs->label);
    http_session_unref(hs);
}

/* ------------------------------------------------------------ the table */

/* Takes hs out of the table (h->lock held); false when already out. */
static bool table_unlink(mcpage_http *h, http_session *hs)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    for (http_session **pp = &h->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == hs) {
            *pp = hs->next;
            h->nsessions--;
            return true;
        }
    }
    return false;
}

/* The table's session with this id, with a new reference, or NULL (h->lock held). */
static http_session *table_find(mcpage_http *h, const char *sid, size_t len)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    for (http_session *hs = h->sessions; hs; hs = hs->next) {
        /* Constant time: ids are bearer secrets too. */
        if (strlen(hs->id) == len && mcpage__bytes_equal(hs->id, sid, len)) {
            http_session_ref(hs);
            return hs;
        }
    }
    return NULL;
}

/*
 * Adds hs to the table (h->lock held). When a session with the same id is
 * there already, returns it in *existing with a new reference instead.
 * MCPAGE_ERANGE when the table is full or the endpoint is stopping.
 */
static int table_insert(mcpage_http *h, http_session *hs, http_session **existing)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    *existing = hs->id[0] ? table_find(h, hs->id, strlen(hs->id)) : NULL;
    if (*existing)
        return MCPAGE_OK;
    if (h->stopping || h->nsessions >= h->cfg.max_sessions)
        return MCPAGE_ERANGE;
    hs->next = h->sessions;
    h->sessions = hs;
    h->nsessions++;
    return MCPAGE_OK;
}

http_session *http_sessions_tick(mcpage_http *h, int64_t now, http_cancel **cancels)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    http_session *expired = NULL;
    for (http_session **pp = &h->sessions; *pp;) {
        http_session *hs = *pp;
        /* Idle: no request or connection holds it, and quiet for session_idle_s. */
        if (atomic_load(&hs->refs) == 1 &&
            now - atomic_load(&hs->last_active) > (int64_t)h->cfg.session_idle_s * 1000) {
            *pp = hs->next;
            h->nsessions--;
            hs->next = expired;
            expired = hs;
            continue;
        }
        pthread_mutex_lock(&hs->lock);
        http_streams_tick(hs, now, cancels);
        pthread_mutex_unlock(&hs->lock);
        pp = &hs->next;
    }
    /* A modern request's session never idles out, but its request times out like any. */
    for (http_session *hs = h->transients; hs; hs = hs->next) {
        pthread_mutex_lock(&hs->lock);
        http_streams_tick(hs, now, cancels);
        pthread_mutex_unlock(&hs->lock);
    }
    return expired;
}

void http_transient_done(mcpage_http *h, http_session *hs)
{
    pthread_mutex_lock(&h->lock);
    for (http_session **pp = &h->transients; *pp; pp = &(*pp)->next) {
        if (*pp == hs) {
            *pp = hs->next;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    http_session_end(hs);
}

/* ------------------------------------------------------------ one session */

/* Sets the id, its nonce, issue time and log label of a session. */
static void session_set_id(http_session *hs, const char *id, const session_id_info *info)
{
    (void)snprintf(hs->id, sizeof hs->id, "%s", id);
    memcpy(hs->nonce, info->nonce, SESSION_ID_NONCE_LEN);
    hs->issued_at = info->issued_at;
    (void)snprintf(hs->label, sizeof hs->label, "%02x%02x%02x%02x%02x", info->nonce[0],
                   info->nonce[1], info->nonce[2], info->nonce[3], info->nonce[4]);
}

/* A new session with a fresh runtime session and no id, not in the table; NULL without memory. */
static http_session *session_alloc(mcpage_http *h)
{
    http_session *hs = mcpage__calloc(1, sizeof *hs);
    if (hs == NULL)
        return NULL;
    hs->h = h;
    hs->next_no = 1;
    atomic_init(&hs->refs, 2); /* the table and the creating request */
    atomic_init(&hs->last_active, http_now_ms());
    pthread_mutex_init(&hs->lock, NULL);
    pthread_mutex_init(&hs->recv_lock, NULL);
    if (mcpage_session_new(h->srv, http_send, hs, &hs->s) != 0) {
        pthread_mutex_destroy(&hs->lock);
        pthread_mutex_destroy(&hs->recv_lock);
        mcpage__free(hs);
        return NULL;
    }
    mcpage_session_set_close_stream(hs->s, http_close_stream);
    return hs;
}

/* Frees a session that never entered the table. */
static void session_discard(http_session *hs)
{
    mcpage_session_free(hs->s);
    pthread_mutex_destroy(&hs->lock);
    pthread_mutex_destroy(&hs->recv_lock);
    mcpage__free(hs);
}

/*
 * Finds the session an Mcp-Session-Id names and returns it with a new
 * reference. This is the one place that interprets session ids: one that
 * is not in the table but carries a valid signature (another instance
 * opened it, or this one before a restart or an idle expiry) is rebuilt
 * from the protocol version and client capabilities it carries. On
 * failure sets the HTTP status and a sentence for the client.
 */
static http_session *session_lookup(mcpage_http *h, const char *sid, unsigned *status,
                                    const char **why)
{
    *status = MHD_HTTP_NOT_FOUND;
    *why = session_id_status_text(SESSION_ID_MALFORMED);
    size_t len = sid ? strnlen(sid, SESSION_ID_MAX + 1) : 0;
    if (len == 0 || len > SESSION_ID_MAX)
        return NULL;
    pthread_mutex_lock(&h->lock);
    http_session *found = table_find(h, sid, len);
    pthread_mutex_unlock(&h->lock);
    if (found)
        return found;

    session_id_info info;
    session_id_status st =
        session_id_open(h->srv->keyring, sid, h->cfg.session_max_age_s, (int64_t)time(NULL), &info);
    if (st != SESSION_ID_VALID) {
        *why = session_id_status_text(st);
        return NULL;
    }
    http_session *hs = session_alloc(h);
    if (hs == NULL ||
        mcpage_session_restore(hs->s, info.protocol_version, info.client_caps) != MCPAGE_OK) {
        json_decref(info.client_caps);
        if (hs)
            session_discard(hs);
        *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        *why = "Internal error: the session could not be restored";
        return NULL;
    }
    json_decref(info.client_caps);
    session_set_id(hs, sid, &info);
    bool shared_end = http_ended_lookup(h, info.nonce);
    pthread_mutex_lock(&h->lock);
    if (shared_end)
        http_tombstone_add(h, info.nonce, http_id_until(h, info.issued_at));
    bool ended = http_tombstoned(h, info.nonce);
    int rc = ended ? MCPAGE_ENOTFOUND : table_insert(h, hs, &found);
    pthread_mutex_unlock(&h->lock);
    if (rc != MCPAGE_OK || found) {
        session_discard(hs); /* refused, or another request restored it first */
        if (ended)
            *why = "Session not found: it was ended with DELETE; send initialize without "
                   "Mcp-Session-Id to start a new one";
        else if (rc == MCPAGE_ERANGE) {
            *status = MHD_HTTP_SERVICE_UNAVAILABLE;
            *why = h->stopping ? HTTP_STOPPING_TEXT
                               : "Service Unavailable: this instance holds its maximum of "
                                 "sessions; retry later or on another instance";
        }
        return found;
    }
    if (h->cfg.verbose)
        (void)fprintf(stderr, "mcpage: session %s resumed from its signed id\n", hs->label);
    return hs;
}

/* A session for an initialize request: in the table, its id minted once initialize succeeds. */
static http_session *session_create(mcpage_http *h, unsigned *status)
{
    http_session *hs = session_alloc(h);
    if (hs == NULL) {
        *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        return NULL;
    }
    http_session *existing = NULL;
    pthread_mutex_lock(&h->lock);
    int rc = table_insert(h, hs, &existing); /* no id yet: never finds one */
    pthread_mutex_unlock(&h->lock);
    if (rc != MCPAGE_OK) {
        session_discard(hs);
        *status = MHD_HTTP_SERVICE_UNAVAILABLE;
        return NULL;
    }
    return hs;
}

/*
 * Mints the signed id of a session whose initialize just succeeded: the
 * negotiated version and the client's capabilities go inside. MCPAGE_ESTATE
 * when it did not succeed, or a stop ended the session meanwhile (which
 * frees the runtime session, hence recv_lock around what is read of it).
 */
static int session_mint_id(mcpage_http *h, http_session *hs)
{
    char id[SESSION_ID_MAX + 1];
    pthread_mutex_lock(&hs->recv_lock);
    int n =
        hs->s && mcpage_session_initialized(hs->s)
            ? session_id_mint(h->srv->keyring, mcpage_session_protocol_version(hs->s),
                              mcpage_session_client_capabilities(hs->s), (int64_t)time(NULL), id)
            : MCPAGE_ESTATE;
    pthread_mutex_unlock(&hs->recv_lock);
    if (n < 0)
        return n;
    session_id_info info;
    session_id_status st = session_id_open(h->srv->keyring, id, 0, (int64_t)time(NULL), &info);
    if (st != SESSION_ID_VALID)
        return MCPAGE_ECRYPTO;
    json_decref(info.client_caps);
    pthread_mutex_lock(&h->lock); /* lookups read ids under this lock */
    session_set_id(hs, id, &info);
    pthread_mutex_unlock(&h->lock);
    if (h->cfg.verbose)
        (void)fprintf(stderr, "mcpage: session %s started\n", hs->label);
    return MCPAGE_OK;
}

/*
 * Removes a session from the table and ends it (DELETE, failed
 * initialize); a DELETEd id stays refused here (`bury`).
 */
static void session_close(mcpage_http *h, http_session *hs, bool bury)
{
    pthread_mutex_lock(&h->lock);
    bool mine = table_unlink(h, hs);
    if (bury && hs->id[0])
        http_tombstone_add(h, hs->nonce, http_id_until(h, hs->issued_at));
    pthread_mutex_unlock(&h->lock);
    if (mine)
        http_session_end(hs);
    if (bury && hs->id[0])
        http_ended_record(h, hs);
}

/* Hands a parsed message to the runtime session (one at a time per session). */
static void receive_as(http_session *hs, const json_t *msg, const oauth_principal *who)
{
    pthread_mutex_lock(&hs->recv_lock);
    if (hs->s) {
        mcpage_caller c = {0};
        if (who) {
            c.subject = who->subject;
            c.scopes = who->scopes;
            c.groups = who->groups;
            c.all = who->all;
        }
        mcpage_session_set_caller(hs->s, who ? &c : NULL);
        mcp_session_receive_json(hs->s, msg);
        mcpage_session_set_caller(hs->s, NULL);
    }
    pthread_mutex_unlock(&hs->recv_lock);
}

static void receive(http_session *hs, const json_t *msg)
{
    receive_as(hs, msg, NULL);
}

/*
 * Tells the runtime a request was cancelled, as the client would have:
 * a notifications/cancelled it handles like any other.
 */
static void cancel_call(http_session *hs, const char *req_id, const char *reason)
{
    json_t *id = json_loads(req_id, JSON_DECODE_ANY, NULL);
    json_t *msg =
        id ? json_pack("{s:s, s:s, s:{s:o, s:s}}", "jsonrpc", "2.0", "method",
                       "notifications/cancelled", "params", "requestId", id, "reason", reason)
           : NULL;
    if (msg)
        receive(hs, msg);
    json_decref(msg);
}

void http_cancels_run(http_cancel *cancels)
{
    for (http_cancel *k = cancels, *n; k; k = n) {
        n = k->next;
        cancel_call(k->hs, k->req_id,
                    "the server ended the request (timed out, or its client left)");
        http_session_unref(k->hs);
        mcpage__free(k->req_id);
        mcpage__free(k);
    }
}

/*
 * A client's notifications/cancelled, after the runtime saw it: the
 * runtime sends no response to a cancelled request, so the exchange
 * that waits for one ends here.
 */
static void cancel_exchange(http_session *hs, const http_message *m)
{
    const json_t *rid = json_object_get(json_object_get(m->v, "params"), "requestId");
    char *req_id = rid ? http_id_text(rid) : NULL;
    if (req_id == NULL)
        return;
    pthread_mutex_lock(&hs->lock);
    http_stream_cancel(hs, req_id);
    pthread_mutex_unlock(&hs->lock);
    mcpage__free(req_id);
}

/* ------------------------------------------------------------ requests */

http_session *http_need_session(mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
    if (sid == NULL) {
        *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, HTTP_RPC_TRANSPORT,
                         "Bad Request: Mcp-Session-Id header required; send initialize first and "
                         "repeat the Mcp-Session-Id it returned on every request");
        return NULL;
    }
    unsigned status = 0;
    const char *why = NULL;
    http_session *hs = session_lookup(h, sid, &status, &why);
    if (hs == NULL)
        *ret =
            http_fail(c, status,
                      status == MHD_HTTP_NOT_FOUND ? HTTP_RPC_NO_SESSION : HTTP_RPC_TRANSPORT, why);
    return hs;
}

enum MHD_Result http_session_delete(mcpage_http *h, struct MHD_Connection *c)
{
    enum MHD_Result ret = MHD_NO;
    if (!http_check_version(c, &ret))
        return ret;
    http_session *hs = http_need_session(h, c, &ret);
    if (hs == NULL)
        return ret;
    session_close(h, hs, true);
    http_session_unref(hs);
    return http_queue(c, MHD_HTTP_NO_CONTENT, NULL, "", 0, NULL);
}

/* The session a POST acts in: a new one for initialize without an id; NULL after an answer. */
static http_session *post_session(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                  const http_message *m, enum MHD_Result *ret)
{
    bool init = m->request && strcmp(m->method, "initialize") == 0;
    const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
    if (!init || sid != NULL) {
        if (!http_check_version(c, ret))
            return NULL;
        return http_need_session(h, c, ret);
    }
    unsigned status = 0;
    http_session *hs = session_create(h, &status);
    if (hs == NULL) {
        const char *why = "Internal error: the session could not be created";
        if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
            why = h->stopping ? HTTP_STOPPING_TEXT
                              : "Service Unavailable: the server holds its maximum of sessions; "
                                "retry later or end an unused session with DELETE";
        *ret = http_fail(
            c, status,
            status == MHD_HTTP_SERVICE_UNAVAILABLE ? HTTP_RPC_TRANSPORT : RPC_INTERNAL_ERROR, why);
        return NULL;
    }
    rq->new_session = true;
    return hs;
}

/*
 * The request part of a POST, once its session is known (rq->hs): opens
 * its stream, hands the message to the runtime and answers with JSON or
 * SSE.
 */
static enum MHD_Result post_request(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                    const http_message *m)
{
    http_session *hs = rq->hs;
    atomic_store(&hs->last_active, http_now_ms());
    if (!m->request) {
        receive_as(hs, m->v, &rq->who);
        if (m->notification && strcmp(m->method, "notifications/cancelled") == 0)
            cancel_exchange(hs, m);
        return http_queue(c, MHD_HTTP_ACCEPTED, NULL, "", 0, NULL);
    }
    char *req_id = http_id_text(m->id);
    if (req_id == NULL)
        return http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                         "Invalid Request: \"id\" must be a string (at most 256 bytes) or an "
                         "integer; null is not allowed");

    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    bool sse_ok = http_accepts(accept, "text/event-stream"),
         json_ok = http_accepts(accept, "application/json");
    /* Calls may log, report progress or ask the client before answering: stream them. */
    bool may_talk = strcmp(m->method, "tools/call") == 0 || strcmp(m->method, "prompts/get") == 0 ||
                    strcmp(m->method, "resources/read") == 0;
    if (hs->modern) {
        /* Modern calls ask the client through their result and talk only when asked to (a
           progressToken or a logLevel): otherwise one JSON answer, whose HTTP status can
           then follow its error code. */
        const json_t *meta = json_object_get(json_object_get(m->v, "params"), "_meta");
        may_talk = may_talk && (json_object_get(meta, "progressToken") ||
                                json_object_get(meta, "io.modelcontextprotocol/logLevel"));
    }
    /* subscriptions/listen is a stream by nature: notifications until the client closes it
       (or the server stops: then its closing result). */
    bool listen = hs->modern && strcmp(m->method, "subscriptions/listen") == 0;
    if (listen && !sse_ok) {
        mcpage__free(req_id);
        return http_fail(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
                         "Not Acceptable: subscriptions/listen answers with a stream of "
                         "server-sent events that stays open; send Accept: application/json, "
                         "text/event-stream");
    }
    bool sse = sse_ok && (!json_ok || may_talk || listen);
    unsigned status = 0;
    const char *why = NULL;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = http_stream_open(hs, &req_id, !sse, &status, &why);
    if (st && listen) {
        st->deadline = 0; /* no request timeout: it ends when the client closes it */
        st->listen = true;
    }
    if (st && st->json) {
        st->waiting = c;
        rq->st = st;
    }
    pthread_mutex_unlock(&hs->lock);
    mcpage__free(req_id);
    if (st == NULL)
        return http_fail(c, status, RPC_INVALID_REQUEST, why);

    receive_as(hs, m->v, &rq->who);
    if (rq->new_session && session_mint_id(h, hs) != MCPAGE_OK) {
        /* A failed initialize leaves no session behind. */
        rq->new_session = false;
        session_close(h, hs, false);
    }
    const char *sid_out = rq->new_session ? hs->id : NULL;
    if (sse)
        return http_sse_open(c, hs, st, hs->modern, sid_out);

    pthread_mutex_lock(&hs->lock);
    bool answered = st->answered || hs->closed || (st->cancelled && !st->answered);
    if (!answered) {
        /* The runtime answers from a worker: park the connection until http_send resumes it. */
        st->suspended = true;
        rq->waiting = true;
        MHD_suspend_connection(c);
    }
    pthread_mutex_unlock(&hs->lock);
    if (!answered)
        return MHD_YES;
    return http_session_finish_wait(c, rq); /* as if parked and resumed at once */
}

enum MHD_Result http_session_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                  const http_message *m)
{
    enum MHD_Result ret = MHD_NO;
    if (rq->hs == NULL) /* else it was looked up with the headers */
        rq->hs = post_session(h, c, rq, m, &ret);
    if (rq->hs == NULL)
        return ret;
    return post_request(h, c, rq, m);
}

enum MHD_Result http_session_post_transient(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                            const http_message *m)
{
    http_session *hs = session_alloc(h); /* never in the table: on_completed ends it */
    if (hs == NULL)
        return http_fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
                         "Internal error: out of memory");
    hs->modern = true;
    /* Listed, it is ticked (the request timeout, a client gone) and closed by a stop; once
       the stop has closed the listed ones (under this lock), none may join. */
    pthread_mutex_lock(&h->lock);
    bool stopping = h->stopping;
    if (!stopping) {
        hs->next = h->transients;
        h->transients = hs;
    }
    pthread_mutex_unlock(&h->lock);
    if (stopping) {
        session_discard(hs);
        return http_fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, HTTP_RPC_TRANSPORT, HTTP_STOPPING_TEXT);
    }
    rq->hs = hs;
    return post_request(h, c, rq, m);
}

enum MHD_Result http_session_finish_wait(struct MHD_Connection *c, http_req *rq)
{
    http_session *hs = rq->hs;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = rq->st;
    bool answered = st->answered && st->body;
    bool cancelled = st->cancelled && !st->answered && !hs->closed;
    char *body = st->body;
    size_t len = st->body_len;
    st->body = NULL;
    pthread_mutex_unlock(&hs->lock);
    rq->waiting = false;
    const char *sid_out = rq->new_session ? hs->id : NULL;
    if (cancelled) /* no JSON-RPC response to a cancelled request: an empty 202 */
        return http_queue(c, MHD_HTTP_ACCEPTED, NULL, "", 0, sid_out);
    if (!answered) {
        mcpage__free(body);
        if (hs->h->stopping) /* the stop closed it: not a session the client lost */
            return http_fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, HTTP_RPC_TRANSPORT,
                             HTTP_STOPPING_TEXT);
        return http_fail(c, MHD_HTTP_NOT_FOUND, HTTP_RPC_NO_SESSION,
                         "Session not found: it ended before the request was answered");
    }
    unsigned status = hs->modern ? http_stateless_status(body, len) : MHD_HTTP_OK;
    enum MHD_Result ret = http_queue(c, status, "application/json", body, len, sid_out);
    mcpage__free(body);
    return ret;
}
