/*
 * Streams of a session: where the runtime's output goes, and how it
 * leaves as server-sent events.
 *
 * Every message goes to exactly one stream: the stream of the POST it
 * belongs to (the runtime's related_id), else the session's standalone
 * stream (GET). A request answered as one JSON body has a stream too,
 * holding only its response. Each SSE stream keeps its events, with ids
 * "<stream>_<seq>", in a buffer of stream_buffer bytes: undelivered ones
 * and, for Last-Event-ID replay, recently delivered ones; a consumer so
 * slow that undelivered events must be dropped has its connection closed.
 *
 * An SSE connection with nothing to send is suspended (no thread, no
 * timeout) and resumed when an event arrives, for a heartbeat, or to be
 * closed.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page/alloc.h"
#include "page/invariant.h"
#include "transport/http_internal.h"

/* ------------------------------------------------------------ streams */

static void event_free_all(http_stream *st)
{
    for (http_event *e = st->head, *n; e; e = n) {
        n = e->next;
        mcpage__free(e);
    }
    st->head = st->tail = NULL;
    st->bytes = 0;
}

void http_stream_free(http_stream *st)
{
    event_free_all(st);
    mcpage__free(st->req_id);
    mcpage__free(st->body);
    mcpage__free(st);
}

void http_stream_remove(http_session *hs, http_stream *st)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    for (http_stream **pp = &hs->streams; *pp; pp = &(*pp)->next) {
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    }
    if (st->no != 0)
        hs->nstreams--;
    http_stream_free(st);
}

void http_conn_wake(http_conn *cn)
{
    if (cn->suspended) {
        cn->suspended = false;
        MHD_resume_connection(cn->mc);
    }
}

/* A request stream still waiting for its answer. */
static bool unanswered(const http_stream *st)
{
    return st->req_id && !st->done_seq && !st->answered;
}

http_stream *http_stream_by_req(http_session *hs, const char *req_id)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    for (http_stream *st = hs->streams; st; st = st->next)
        if (unanswered(st) && !st->cancelled && strcmp(st->req_id, req_id) == 0)
            return st;
    return NULL;
}

/* True when a request with this id was cancelled and its stream is still held (hs->lock held). */
static bool cancelled_req(http_session *hs, const char *req_id)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    for (http_stream *st = hs->streams; st; st = st->next)
        if (unanswered(st) && st->cancelled && strcmp(st->req_id, req_id) == 0)
            return true;
    return false;
}

static http_stream *stream_by_no(http_session *hs, uint64_t no)
{
    for (http_stream *st = hs->streams; st; st = st->next)
        if (st->no == no && !st->json)
            return st;
    return NULL;
}

/* The standalone stream, created on first use; NULL when out of memory (hs->lock held). */
static http_stream *standalone(http_session *hs)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    http_stream *st = stream_by_no(hs, 0);
    if (st)
        return st;
    st = mcpage__calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    st->next_seq = 1;
    st->next = hs->streams;
    hs->streams = st;
    return st;
}

/*
 * Frees the oldest request stream that finished (or was cancelled) while
 * nobody listened and was never resumed (hs->lock held); false when there
 * is none.
 */
static bool evict_abandoned(http_session *hs)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    http_stream *victim = NULL;
    for (http_stream *st = hs->streams; st; st = st->next)
        if (st->no != 0 && !st->json && st->conn == NULL && (st->done_seq || st->cancelled))
            victim = st; /* the list is newest first: the last match is the oldest */
    if (victim)
        http_stream_remove(hs, victim);
    return victim != NULL;
}

http_stream *http_stream_open(http_session *hs, char **req_id, bool json, unsigned *status,
                              const char **why)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    http_stream *st = NULL;
    if (hs->closed && hs->h->stopping) {
        *status = MHD_HTTP_SERVICE_UNAVAILABLE;
        *why = HTTP_STOPPING_TEXT;
    } else if (hs->closed) {
        *status = MHD_HTTP_NOT_FOUND;
        *why = "Session not found: it was ended";
    } else if (http_stream_by_req(hs, *req_id)) {
        *status = MHD_HTTP_CONFLICT;
        *why = "Invalid Request: a request with this id is still in flight in this session; use "
               "a new id for every request";
    } else if (hs->nstreams >= HTTP_MAX_STREAMS && !evict_abandoned(hs)) {
        *status = MHD_HTTP_TOO_MANY_REQUESTS;
        *why = "Too Many Requests: this session has 256 requests open; wait for some to finish";
    } else if ((st = mcpage__calloc(1, sizeof *st)) == NULL) {
        *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        *why = "out of memory";
    } else {
        st->no = hs->next_no++;
        st->req_id = *req_id;
        *req_id = NULL;
        st->json = json;
        st->next_seq = 1;
        if (hs->h->cfg.request_timeout_s)
            st->deadline = http_now_ms() + (int64_t)hs->h->cfg.request_timeout_s * 1000;
        st->next = hs->streams;
        hs->streams = st;
        hs->nstreams++;
    }
    return st;
}

/*
 * Appends one message as an event (hs->lock held). Trims the buffer to
 * stream_buffer bytes, oldest first, never the newest event; dropping an
 * undelivered event closes the slow connection.
 */
static void event_append(http_session *hs, http_stream *st, const char *msg, size_t len, bool final)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    char head[64];
    uint64_t seq = st->next_seq;
    /* Modern streams are not resumable: no event ids. */
    int hl = hs->modern
                 ? snprintf(head, sizeof head, "data: ")
                 : snprintf(head, sizeof head, "id: %" PRIu64 "_%" PRIu64 "\ndata: ", st->no, seq);
    size_t total = (size_t)hl + len + 2;
    http_event *ev = mcpage__malloc(sizeof *ev + total);
    if (ev == NULL) {
        (void)fprintf(stderr, "mcpage: out of memory: an SSE event was dropped\n");
        return;
    }
    st->next_seq++;
    ev->next = NULL;
    ev->seq = seq;
    ev->len = total;
    memcpy(ev->text, head, (size_t)hl);
    memcpy(ev->text + hl, msg, len);
    memcpy(ev->text + (size_t)hl + len, "\n\n", 2);
    if (st->tail)
        st->tail->next = ev;
    else
        st->head = ev;
    st->tail = ev;
    st->bytes += total;
    if (final)
        st->done_seq = seq;
    while (st->bytes > hs->h->cfg.stream_buffer && st->head != st->tail) {
        http_event *old = st->head;
        if (old->seq > st->sent_seq) {
            /* Undelivered: the consumer is too slow (or gone); close it, lose the event. */
            if (st->conn) {
                st->conn->kill = true;
                http_conn_wake(st->conn);
            }
            st->sent_seq = old->seq;
            if (!st->warned)
                (void)fprintf(stderr,
                              "mcpage: session %s: stream %" PRIu64 " passed its %zu-byte buffer; "
                              "undelivered events were dropped and the slow connection closed\n",
                              hs->label, st->no, hs->h->cfg.stream_buffer);
            st->warned = true;
        }
        st->head = old->next;
        st->bytes -= old->len;
        mcpage__free(old);
    }
    if (st->conn)
        http_conn_wake(st->conn);
}

/*
 * Our runtime writes "jsonrpc" first and then "id" for a response, but
 * "method" before "id" for requests and notifications: a response is
 * recognized without parsing it.
 */
static bool is_response(const char *msg, size_t len)
{
    static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";
    return len >= sizeof prefix - 1 && memcmp(msg, prefix, sizeof prefix - 1) == 0;
}

int http_send(void *ud, const char *msg, size_t len, const char *related)
{
    http_session *hs = ud;
    bool response = is_response(msg, len);
    pthread_mutex_lock(&hs->lock);
    http_stream *st = related ? http_stream_by_req(hs, related) : NULL;
    if (st == NULL && related && (response || cancelled_req(hs, related))) {
        /* Its request was cancelled, timed out or left by its client: nobody waits for it. */
        pthread_mutex_unlock(&hs->lock);
        return 0;
    }
    if (st && st->json) {
        if (response) {
            st->body = mcpage__malloc(len ? len : 1);
            if (st->body) {
                memcpy(st->body, msg, len);
                st->body_len = len;
            }
            st->answered = true;
            if (st->suspended) {
                st->suspended = false;
                MHD_resume_connection(st->waiting);
            }
            pthread_mutex_unlock(&hs->lock);
            return 0;
        }
        st = NULL; /* a JSON answer has no room for notifications: the standalone stream */
    }
    bool final = response && st != NULL;
    if (st == NULL)
        st = standalone(hs);
    if (st)
        event_append(hs, st, msg, len, final);
    pthread_mutex_unlock(&hs->lock);
    return 0;
}

void http_close_stream(void *ud, const char *related)
{
    http_session *hs = ud;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = http_stream_by_req(hs, related);
    if (st && st->conn) {
        st->conn->kill = true;
        http_conn_wake(st->conn);
    }
    pthread_mutex_unlock(&hs->lock);
}

/* Ends the exchange of a request that will get no answer (hs->lock held). */
static void stream_abandon(http_stream *st)
{
    st->cancelled = true;
    if (st->json) {
        if (st->suspended) { /* http_session_finish_wait answers it */
            st->suspended = false;
            MHD_resume_connection(st->waiting);
        }
    } else if (st->conn) {
        http_conn_wake(st->conn); /* sse_read ends it after what it holds */
    }
    /*
     * A stream with no connection is kept: its POST may be about to attach
     * one (http_sse_open), or a resumption may come; either ends at once,
     * and evict_abandoned or the session's end frees it otherwise.
     */
}

bool http_stream_cancel(http_session *hs, const char *req_id)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    http_stream *st = http_stream_by_req(hs, req_id);
    if (st)
        stream_abandon(st);
    return st != NULL;
}

/* Queues the cancellation of a request's call in the runtime (done after the locks). */
static void cancel_later(http_session *hs, const http_stream *st, http_cancel **cancels)
{
    http_cancel *k = mcpage__calloc(1, sizeof *k);
    if (k == NULL || (k->req_id = mcpage__strdup(st->req_id)) == NULL) {
        mcpage__free(k);
        return; /* the call runs to its end; its answer is dropped */
    }
    http_session_ref(hs);
    k->hs = hs;
    k->next = *cancels;
    *cancels = k;
}

/* Answers a request the server gave up on with an error, as its response (hs->lock held). */
static void stream_time_out(http_session *hs, http_stream *st)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":"
                     "\"Request timed out: no answer within %u s (the server's request timeout); "
                     "the call was cancelled\"}}",
                     st->req_id, HTTP_RPC_TIMEOUT, hs->h->cfg.request_timeout_s);
    size_t len = n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0;
    if (!st->json) {
        event_append(hs, st, msg, len, true);
        return;
    }
    st->body = mcpage__malloc(len ? len : 1);
    if (st->body) {
        memcpy(st->body, msg, len);
        st->body_len = len;
    }
    st->answered = true;
    if (st->suspended) {
        st->suspended = false;
        MHD_resume_connection(st->waiting);
    }
}

/* True when the peer of a suspended connection hung up (nothing reads its socket meanwhile). */
static bool peer_gone(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci == NULL)
        return false;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void http_streams_tick(http_session *hs, int64_t now, http_cancel **cancels)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    for (http_stream *st = hs->streams, *next; st; st = next) {
        next = st->next; /* st may be removed */
        http_conn *cn = st->conn;
        if (cn && cn->suspended && now - cn->last_write >= (int64_t)hs->h->cfg.heartbeat_ms) {
            cn->heartbeat = true;
            cn->last_write = now;
            http_conn_wake(cn);
        }
        if (!unanswered(st) || st->cancelled)
            continue;
        if (st->deadline && now >= st->deadline) {
            stream_time_out(hs, st);
            cancel_later(hs, st, cancels);
        } else if (st->json && st->suspended && peer_gone(st->waiting)) {
            cancel_later(hs, st, cancels);
            stream_abandon(st);
        }
    }
}

/* ------------------------------------------------------------ SSE connections */

/* Makes room for n bytes in the connection's out buffer. */
static bool out_reserve(http_conn *cn, size_t n)
{
    if (n <= cn->out_cap)
        return true;
    char *p = mcpage__realloc(cn->out, n);
    if (p == NULL)
        return false;
    cn->out = p;
    cn->out_cap = n;
    return true;
}

static bool out_set(http_conn *cn, const char *text, size_t n)
{
    if (!out_reserve(cn, n))
        return false;
    memcpy(cn->out, text, n);
    cn->out_len = n;
    cn->out_off = 0;
    return true;
}

/* libmicrohttpd's content reader for an SSE response. */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    http_conn *cn = cls;
    http_session *hs = cn->hs;
    ssize_t n = 0;
    pthread_mutex_lock(&hs->lock);
    for (;;) {
        if (cn->out_off < cn->out_len) {
            size_t k = cn->out_len - cn->out_off;
            if (k > max)
                k = max;
            memcpy(buf, cn->out + cn->out_off, k);
            cn->out_off += k;
            n = (ssize_t)k;
            break;
        }
        cn->out_len = cn->out_off = 0;
        http_stream *st = cn->st;
        if (st && st->listen && hs->h->stopping && !cn->closing && cn->primed) {
            /* The server ends the subscription: its result says it ended gracefully. */
            char end[2 * MCP_ID_TEXT_MAX + 200];
            int k = snprintf(end, sizeof end,
                             "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{"
                             "\"resultType\":\"complete\",\"_meta\":{"
                             "\"io.modelcontextprotocol/subscriptionId\":%s}}}\n\n",
                             st->req_id, st->req_id);
            cn->closing = true;
            if (k > 0 && (size_t)k < sizeof end && out_set(cn, end, (size_t)k))
                continue;
        }
        if (st == NULL || hs->closed || hs->h->stopping) {
            n = MHD_CONTENT_READER_END_OF_STREAM;
            break;
        }
        if (!cn->primed && hs->modern) {
            cn->primed = true; /* nothing to resume from: no priming event */
            continue;
        }
        if (!cn->primed) {
            /* The priming event: an id to resume from and the reconnect delay. */
            char p[96];
            int k = cn->resumed ? snprintf(p, sizeof p, "retry: %u\n\n", hs->h->cfg.retry_ms)
                                : snprintf(p, sizeof p,
                                           "id: %" PRIu64 "_%" PRIu64 "\nretry: %u\ndata: \n\n",
                                           st->no, st->sent_seq, hs->h->cfg.retry_ms);
            cn->primed = true;
            if (!out_set(cn, p, (size_t)k)) {
                n = MHD_CONTENT_READER_END_WITH_ERROR;
                break;
            }
            continue;
        }
        /* Killed (closed for polling, or too slow) only after priming: the client can resume. */
        if (cn->kill) {
            n = MHD_CONTENT_READER_END_OF_STREAM;
            break;
        }
        http_event *ev = st->head;
        while (ev && ev->seq <= st->sent_seq)
            ev = ev->next;
        if (ev) {
            if (!out_set(cn, ev->text, ev->len)) {
                n = MHD_CONTENT_READER_END_WITH_ERROR;
                break;
            }
            st->sent_seq = ev->seq;
            continue;
        }
        if ((st->done_seq && st->sent_seq >= st->done_seq) || st->cancelled) {
            n = MHD_CONTENT_READER_END_OF_STREAM; /* answered, or no answer will come */
            break;
        }
        if (cn->heartbeat) {
            cn->heartbeat = false;
            if (!out_set(cn, ": keepalive\n\n", 13)) {
                n = MHD_CONTENT_READER_END_WITH_ERROR;
                break;
            }
            continue;
        }
        /* Nothing to send: park the connection until http_send or the housekeeper wakes it. */
        cn->suspended = true;
        MHD_suspend_connection(cn->mc);
        n = 0;
        break;
    }
    if (n > 0)
        cn->last_write = http_now_ms();
    pthread_mutex_unlock(&hs->lock);
    return n;
}

/* The SSE response is gone (connection closed): detach and maybe free its stream. */
static void sse_free(void *cls)
{
    http_conn *cn = cls;
    http_session *hs = cn->hs;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = cn->st;
    if (st && st->conn == cn) {
        st->conn = NULL;
        if (st->no != 0 && ((st->done_seq && st->sent_seq >= st->done_seq) || st->cancelled))
            http_stream_remove(hs, st); /* delivered in full, or cancelled: nothing to resume */
    }
    pthread_mutex_unlock(&hs->lock);
    mcpage__free(cn->out);
    mcpage__free(cn);
    atomic_store(&hs->last_active, http_now_ms());
    http_session_unref(hs);
}

enum MHD_Result http_sse_open(struct MHD_Connection *c, http_session *hs, http_stream *st,
                              bool resumed, const char *sid_header)
{
    http_conn *cn = mcpage__calloc(1, sizeof *cn);
    if (cn == NULL)
        return http_fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR, "out of memory");
    http_session_ref(hs);
    cn->hs = hs;
    cn->mc = c;
    cn->resumed = resumed;
    cn->last_write = http_now_ms();
    pthread_mutex_lock(&hs->lock);
    if (st->conn) {
        /* A newer connection takes the stream over; the old one ends. */
        st->conn->st = NULL;
        st->conn->kill = true;
        http_conn_wake(st->conn);
    }
    st->conn = cn;
    cn->st = st;
    pthread_mutex_unlock(&hs->lock);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, HTTP_SSE_BLOCK, sse_read, cn, sse_free);
    if (r == NULL) {
        sse_free(cn);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache, no-transform");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    if (sid_header)
        MHD_add_response_header(r, "Mcp-Session-Id", sid_header);
    http_add_cors(c, r);
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r); /* frees cn through sse_free when the connection is done */
    return ok;
}

/* ------------------------------------------------------------ GET */

/*
 * The stream a Last-Event-ID resumes, set to replay what follows it
 * (hs->lock held); NULL with the status and a sentence.
 */
static http_stream *stream_resume(http_session *hs, const char *last, unsigned *status,
                                  const char **why)
{
    MCPAGE_ASSERT_LOCKED(&hs->lock);
    char *e1 = NULL, *e2 = NULL;
    errno = 0;
    uint64_t no = strtoull(last, &e1, 10);
    uint64_t seq = *e1 == '_' ? strtoull(e1 + 1, &e2, 10) : 0;
    if (*e1 != '_' || *e2 != '\0' || errno || !isdigit((unsigned char)last[0]) ||
        !isdigit((unsigned char)e1[1])) {
        *status = MHD_HTTP_BAD_REQUEST;
        *why = "Bad Request: Last-Event-ID is not an event id of this server";
        return NULL;
    }
    http_stream *st = stream_by_no(hs, no);
    if (st == NULL) {
        *status = MHD_HTTP_NOT_FOUND;
        *why = "Stream not found: it finished and was delivered, or the session was "
               "restarted; nothing is left to resume";
        return NULL;
    }
    if (seq >= st->next_seq) {
        *status = MHD_HTTP_BAD_REQUEST;
        *why = "Bad Request: Last-Event-ID names an event this stream has not sent";
        return NULL;
    }
    st->sent_seq = seq; /* replay what follows, as far as the buffer still holds it */
    return st;
}

enum MHD_Result http_sse_get(mcpage_http *h, struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    if (accept && !http_accepts(accept, "text/event-stream"))
        return http_fail(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
                         "Not Acceptable: GET opens a server-sent event stream; send Accept: "
                         "text/event-stream");
    enum MHD_Result ret = MHD_NO;
    if (!http_check_version(c, &ret))
        return ret;
    http_session *hs = http_need_session(h, c, &ret);
    if (hs == NULL)
        return ret;
    atomic_store(&hs->last_active, http_now_ms());
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    pthread_mutex_lock(&hs->lock);
    http_stream *st = NULL;
    unsigned status = 0;
    const char *why = NULL;
    if (hs->closed) {
        status = MHD_HTTP_NOT_FOUND;
        why = "Session not found: it was ended";
    } else if (last) {
        st = stream_resume(hs, last, &status, &why);
    } else {
        st = standalone(hs);
        if (st == NULL) {
            status = MHD_HTTP_INTERNAL_SERVER_ERROR;
            why = "out of memory";
        } else if (st->conn && !st->conn->kill) {
            status = MHD_HTTP_CONFLICT;
            why = "Conflict: this session's GET stream is already open; one at a time";
            st = NULL;
        }
    }
    pthread_mutex_unlock(&hs->lock);
    if (st == NULL)
        ret = http_fail(c, status, RPC_INVALID_REQUEST, why);
    else
        ret = http_sse_open(c, hs, st, last != NULL, NULL);
    http_session_unref(hs);
    return ret;
}
