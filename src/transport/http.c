/*
 * The Streamable HTTP transport (MCP 2025-11-25) on libmicrohttpd.
 *
 * One endpoint, /mcp. A POST carries one JSON-RPC message: notifications
 * and responses get 202; a request is answered either with one JSON body
 * (the connection is suspended until the runtime answers) or with an SSE
 * stream carrying the request's notifications, the server's requests to
 * the client and finally the response. GET opens the session's standalone
 * stream (messages tied to no request), or resumes any stream with
 * Last-Event-ID. DELETE ends the session.
 *
 * Session ids are signed (session_id.h): the table below is a cache of
 * runtime sessions, and an id it does not hold is verified and rebuilt
 * (session_lookup), so a session outlives an idle expiry, a restart or
 * the instance that opened it. Streams stay per process.
 *
 * Threads: libmicrohttpd runs `threads` epoll threads; SSE connections
 * with nothing to send are suspended (no thread, no timeout) and resumed
 * when an event arrives, for a heartbeat, or to be closed. A housekeeping
 * thread sends heartbeats and expires idle sessions.
 *
 * Locks, in order: h->lock (session table) before hs->lock (one session's
 * streams). The runtime calls hs_send() under its send lock, so no
 * runtime function is ever called while holding hs->lock.
 *
 * Every message goes to exactly one stream: the SSE stream of the POST it
 * belongs to, else the standalone stream. Each stream keeps its events in
 * a bounded buffer (stream_buffer bytes): undelivered ones and, for
 * replay, recently delivered ones; a consumer so slow that undelivered
 * events must be dropped has its connection closed.
 */
#include <mcpage/http.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <poll.h>
#include <sys/signalfd.h>
#endif

#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "mcp/jsonin.h"
#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/base64.h"
#include "page/jw.h"
#include "transport/session_id.h"

/* Ended session ids remembered so that this instance refuses them (at least). */
#define HTTP_TOMBSTONES_MIN 256
/* Most request streams (SSE or waiting JSON) one session may have open. */
#define HTTP_MAX_STREAMS 256
/* Per-connection memory for headers and buffers (bounds header size). */
#define HTTP_CONN_MEMORY ((size_t)32 << 10)
/* Bytes libmicrohttpd asks an SSE reader for at once. */
#define HTTP_SSE_BLOCK 4096
/* Housekeeping period in milliseconds (also how often ends elsewhere are polled). */
#define HTTP_TICK_MS 500
/* Longest wait between polls of an unreachable record of ended sessions. */
#define HTTP_ENDED_BACKOFF_MS 30000

typedef struct http_session http_session;
typedef struct http_conn http_conn;

/* A session ended by DELETE: its id stays refused here until it would expire anyway. */
typedef struct http_tombstone {
    uint8_t nonce[SESSION_ID_NONCE_LEN]; /* the ended id's random part */
    int64_t until;                       /* unix seconds; 0 = free slot */
} http_tombstone;

/* One SSE event, kept formatted. */
typedef struct http_event {
    struct http_event *next; /* newer event */
    uint64_t seq;            /* position in its stream, from 1 */
    size_t len;              /* bytes of text */
    char text[];             /* "id: S_N\ndata: MSG\n\n" */
} http_event;

/* A stream: the standalone one (no 0) or one POSTed request's. */
typedef struct http_stream {
    struct http_stream *next;       /* session list link */
    uint64_t no;                    /* stream number; 0 = standalone */
    char *req_id;                   /* related request id text; NULL for the standalone stream */
    bool json;                      /* answered with one JSON body instead of SSE */
    http_event *head, *tail;        /* events kept, oldest first */
    size_t bytes;                   /* their total size */
    uint64_t next_seq;              /* seq of the next event */
    uint64_t sent_seq;              /* last seq handed to a connection */
    uint64_t done_seq;              /* seq of the response event; 0 until it came */
    http_conn *conn;                /* SSE connection draining it, or NULL */
    char *body;                     /* json: the response */
    size_t body_len;                /* its length */
    bool answered;                  /* json: the response came */
    struct MHD_Connection *waiting; /* json: the POST connection waiting for it */
    bool suspended;                 /* json: `waiting` is suspended */
    bool warned;                    /* the dropped-event warning went out */
} http_stream;

/* An SSE connection (the reader callback's state). */
struct http_conn {
    http_session *hs;          /* owning session (holds a reference) */
    http_stream *st;           /* stream drained; NULL once detached */
    struct MHD_Connection *mc; /* the connection */
    char *out;                 /* bytes being written */
    size_t out_len, out_off;   /* their length and how much went out */
    size_t out_cap;            /* allocated size of out */
    bool primed;               /* the opening event went out */
    bool resumed;              /* opened by Last-Event-ID (no priming event) */
    bool suspended;            /* MHD_suspend_connection in effect */
    bool kill;                 /* end the response at the next chance */
    bool heartbeat;            /* write a comment at the next chance */
    int64_t last_write;        /* monotonic ms of the last bytes out */
};

struct http_session {
    http_session *next;          /* table link */
    mcpage_http *h;              /* the endpoint */
    char id[SESSION_ID_MAX + 1]; /* Mcp-Session-Id (signed: session_id.h); "" until initialized */
    char label[12];              /* short hex of the id's nonce, for log lines */
    uint8_t nonce[SESSION_ID_NONCE_LEN]; /* the id's random part */
    int64_t issued_at;                   /* when the id was minted (unix seconds) */
    mcpage_session *s;                   /* the runtime session; NULL once ended */
    pthread_mutex_t lock;                /* guards the streams and connections */
    pthread_mutex_t recv_lock;           /* one mcpage_session_receive at a time; guards s */
    http_stream *streams;                /* open streams */
    size_t nstreams;                     /* request streams among them */
    uint64_t next_no;                    /* next request stream number */
    atomic_int refs;                     /* 1 for the table + 1 per request or connection */
    bool closed;                         /* ended: streams close, waiters answer 404 */
    _Atomic int64_t last_active;         /* monotonic ms of the last request */
};

struct mcpage_http {
    mcpage_server *srv;                       /* served (borrowed) */
    mcpage_http_config cfg;                   /* copy; pointers below own the strings */
    char *host;                               /* bind address */
    char **origins;                           /* allowed Origin values */
    size_t norigins;                          /* their count */
    bool any_origin;                          /* "*" was allowed */
    bool auth;                                /* a bearer token is required */
    uint8_t token_hash[SHA256_DIGEST_LENGTH]; /* SHA-256 of the token */
    bool loopback;                            /* bound to a loopback address */
    uint16_t port;                            /* bound port */
    size_t max_body;                          /* effective body limit */
    struct MHD_Daemon *d;                     /* libmicrohttpd */
    pthread_mutex_t lock;                     /* guards the table and stopping */
    pthread_cond_t cv;                        /* wakes the housekeeper */
    http_session *sessions;                   /* live sessions */
    size_t nsessions;                         /* their count */
    struct http_tombstone *tombs;             /* ids ended here by DELETE (a ring) */
    size_t ntombs, tomb_next;                 /* ring size and the slot written next */
    atomic_bool stopping;                     /* mcpage_http_stop began (read without the lock) */
    pthread_t keeper;                         /* housekeeping thread */
    bool keeper_started;                      /* it runs */
    pthread_t poller;                         /* learns of ids ended elsewhere (cfg.ended) */
    bool poller_started;                      /* it runs */
    atomic_bool ended_down;                   /* the shared record failed last time */
};

/* The per-request state libmicrohttpd keeps for us (con_cls). */
typedef struct http_req {
    bool started;     /* the headers were checked */
    bool waiting;     /* a JSON response is awaited (connection suspended) */
    char *body;       /* POST body so far */
    size_t len, cap;  /* its length and allocation */
    bool too_big;     /* the body passed max_body: discard, answer 413 */
    http_session *hs; /* session referenced, or NULL */
    http_stream *st;  /* json stream awaited, or NULL */
    bool new_session; /* this request created hs (initialize) */
} http_req;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ sessions */

static void session_ref(http_session *hs)
{
    atomic_fetch_add(&hs->refs, 1);
}

static void event_free_all(http_stream *st)
{
    for (http_event *e = st->head, *n; e; e = n) {
        n = e->next;
        mcpage__free(e);
    }
    st->head = st->tail = NULL;
    st->bytes = 0;
}

static void stream_free(http_stream *st)
{
    event_free_all(st);
    mcpage__free(st->req_id);
    mcpage__free(st->body);
    mcpage__free(st);
}

/* Unlinks and frees a stream (hs->lock held). */
static void stream_remove(http_session *hs, http_stream *st)
{
    for (http_stream **pp = &hs->streams; *pp; pp = &(*pp)->next) {
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    }
    if (st->no != 0)
        hs->nstreams--;
    stream_free(st);
}

static void session_unref(http_session *hs)
{
    if (atomic_fetch_sub(&hs->refs, 1) != 1)
        return;
    /* Last reference: no request, connection or runtime send can reach hs. */
    for (http_stream *st = hs->streams, *n; st; st = n) {
        n = st->next;
        stream_free(st);
    }
    pthread_mutex_destroy(&hs->lock);
    pthread_mutex_destroy(&hs->recv_lock);
    mcpage__free(hs);
}

/* Resumes a suspended SSE connection so its reader runs (hs->lock held). */
static void conn_wake(http_conn *cn)
{
    if (cn->suspended) {
        cn->suspended = false;
        MHD_resume_connection(cn->mc);
    }
}

/*
 * Ends a session taken out of the table: closes its streams, answers its
 * waiting POSTs, detaches and frees the runtime session (cancelling its
 * calls), and drops the table's reference.
 */
static void session_end(http_session *hs)
{
    pthread_mutex_lock(&hs->lock);
    hs->closed = true;
    for (http_stream *st = hs->streams; st; st = st->next) {
        if (st->conn) {
            st->conn->kill = true;
            conn_wake(st->conn);
        }
        if (st->json && st->suspended) {
            st->suspended = false;
            MHD_resume_connection(st->waiting);
        }
    }
    pthread_mutex_unlock(&hs->lock);
    pthread_mutex_lock(&hs->recv_lock);
    if (hs->s) {
        mcpage_session_cancel_all(hs->s);
        mcpage_session_free(hs->s);
        hs->s = NULL;
    }
    pthread_mutex_unlock(&hs->recv_lock);
    if (hs->h->cfg.verbose)
        (void)fprintf(stderr, "mcpage: session %s ended\n", hs->label);
    session_unref(hs);
}

/* Takes hs out of the table (h->lock held); false when already out. */
static bool table_unlink(mcpage_http *h, http_session *hs)
{
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
    for (http_session *hs = h->sessions; hs; hs = hs->next) {
        /* Constant time: ids are bearer secrets too. */
        if (strlen(hs->id) == len && CRYPTO_memcmp(hs->id, sid, len) == 0) {
            session_ref(hs);
            return hs;
        }
    }
    return NULL;
}

/* True when DELETE ended the session with this nonce here (h->lock held). */
static bool tombstoned(const mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN])
{
    for (size_t i = 0; i < h->ntombs; i++)
        if (h->tombs[i].until && memcmp(h->tombs[i].nonce, nonce, SESSION_ID_NONCE_LEN) == 0)
            return true;
    return false;
}

/* When a session's id is refused anyway: its maximum age. */
static int64_t id_until(const mcpage_http *h, int64_t issued_at)
{
    return issued_at +
           (h->cfg.session_max_age_s ? (int64_t)h->cfg.session_max_age_s : INT64_MAX / 4);
}

/* Remembers an ended id until `until` (h->lock held); once per id. */
static void tombstone_add(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN], int64_t until)
{
    if (h->ntombs == 0 || tombstoned(h, nonce))
        return;
    http_tombstone *t = &h->tombs[h->tomb_next];
    h->tomb_next = (h->tomb_next + 1) % h->ntombs; /* a full ring forgets the oldest */
    memcpy(t->nonce, nonce, SESSION_ID_NONCE_LEN);
    t->until = until;
}

static void tombstones_expire(mcpage_http *h, int64_t now)
{
    for (size_t i = 0; i < h->ntombs; i++)
        if (h->tombs[i].until && h->tombs[i].until < now)
            h->tombs[i].until = 0;
}

/* Sets the id, its nonce, issue time and log label of a session. */
static void session_set_id(http_session *hs, const char *id, const session_id_info *info)
{
    (void)snprintf(hs->id, sizeof hs->id, "%s", id);
    memcpy(hs->nonce, info->nonce, SESSION_ID_NONCE_LEN);
    hs->issued_at = info->issued_at;
    (void)snprintf(hs->label, sizeof hs->label, "%02x%02x%02x%02x%02x", info->nonce[0],
                   info->nonce[1], info->nonce[2], info->nonce[3], info->nonce[4]);
}

static http_session *session_alloc(mcpage_http *h);
static bool ended_lookup(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN]);
static void ended_record(mcpage_http *h, const http_session *hs);
static int table_insert(mcpage_http *h, http_session *hs, http_session **existing);
static void session_discard(http_session *hs);

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
    bool shared_end = ended_lookup(h, info.nonce);
    pthread_mutex_lock(&h->lock);
    if (shared_end)
        tombstone_add(h, info.nonce, id_until(h, info.issued_at));
    bool ended = tombstoned(h, info.nonce);
    int rc = ended ? MCPAGE_ENOTFOUND : table_insert(h, hs, &found);
    pthread_mutex_unlock(&h->lock);
    if (rc != MCPAGE_OK || found) {
        session_discard(hs); /* refused, or another request restored it first */
        if (ended)
            *why = "Session not found: it was ended with DELETE; send initialize without "
                   "Mcp-Session-Id to start a new one";
        else if (rc == MCPAGE_ERANGE) {
            *status = MHD_HTTP_SERVICE_UNAVAILABLE;
            *why = "Service Unavailable: this instance holds its maximum of sessions; retry "
                   "later or on another instance";
        }
        return found;
    }
    if (h->cfg.verbose)
        (void)fprintf(stderr, "mcpage: session %s resumed from its signed id\n", hs->label);
    return hs;
}

/* ------------------------------------------------------------ streams */

/* The open request stream for a request id, or NULL (hs->lock held). */
static http_stream *stream_by_req(http_session *hs, const char *req_id)
{
    for (http_stream *st = hs->streams; st; st = st->next)
        if (st->req_id && !st->done_seq && !st->answered && strcmp(st->req_id, req_id) == 0)
            return st;
    return NULL;
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
 * Appends one message as an event (hs->lock held). Trims the buffer to
 * stream_buffer bytes, oldest first, never the newest event; dropping an
 * undelivered event closes the slow connection.
 */
static void event_append(http_session *hs, http_stream *st, const char *msg, size_t len, bool final)
{
    char head[64];
    uint64_t seq = st->next_seq;
    int hl = snprintf(head, sizeof head, "id: %" PRIu64 "_%" PRIu64 "\ndata: ", st->no, seq);
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
                conn_wake(st->conn);
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
        conn_wake(st->conn);
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

/* The runtime's output: routes one message to its stream. */
static int hs_send(void *ud, const char *msg, size_t len, const char *related)
{
    http_session *hs = ud;
    bool response = is_response(msg, len);
    pthread_mutex_lock(&hs->lock);
    http_stream *st = related ? stream_by_req(hs, related) : NULL;
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

/* The runtime asks to close the connection of a call's stream (SEP-1699 polling). */
static void hs_close_stream(void *ud, const char *related)
{
    http_session *hs = ud;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = stream_by_req(hs, related);
    if (st && st->conn) {
        st->conn->kill = true;
        conn_wake(st->conn);
    }
    pthread_mutex_unlock(&hs->lock);
}

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
        if (st == NULL || hs->closed || hs->h->stopping) {
            n = MHD_CONTENT_READER_END_OF_STREAM;
            break;
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
        if (st->done_seq && st->sent_seq >= st->done_seq) {
            n = MHD_CONTENT_READER_END_OF_STREAM;
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
        /* Nothing to send: park the connection until hs_send or the housekeeper wakes it. */
        cn->suspended = true;
        MHD_suspend_connection(cn->mc);
        n = 0;
        break;
    }
    if (n > 0)
        cn->last_write = now_ms();
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
        if (st->no != 0 && st->done_seq && st->sent_seq >= st->done_seq)
            stream_remove(hs, st); /* delivered in full: nothing left to resume */
    }
    pthread_mutex_unlock(&hs->lock);
    mcpage__free(cn->out);
    mcpage__free(cn);
    atomic_store(&hs->last_active, now_ms());
    session_unref(hs);
}

/* ------------------------------------------------------------ responses */

/* Adds the CORS headers an allowed browser Origin needs. */
static void add_cors(struct MHD_Connection *c, struct MHD_Response *r)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) {
        MHD_add_response_header(r, "Access-Control-Allow-Origin", origin);
        MHD_add_response_header(r, "Access-Control-Expose-Headers", "Mcp-Session-Id");
        MHD_add_response_header(r, "Vary", "Origin");
    }
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, const char *ctype,
                             const char *body, size_t len, const char *sid)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(r, "Content-Type", ctype);
    if (sid)
        MHD_add_response_header(r, "Mcp-Session-Id", sid);
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"mcp\"");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, POST, DELETE");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(r, "Retry-After", "5");
    if (status != MHD_HTTP_FORBIDDEN) /* a refused Origin gets no CORS grant */
        add_cors(c, r);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Answers an HTTP error with a JSON-RPC error body (id null) naming the fix. */
static enum MHD_Result fail(struct MHD_Connection *c, unsigned status, int code,
                            const char *message)
{
    jw w;
    jw_init(&w, 4096);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_key(&w, "id");
    jw_null(&w);
    jw_key(&w, "error");
    jw_object_begin(&w);
    jw_kv_int(&w, "code", code);
    jw_kv_string(&w, "message", message);
    jw_object_end(&w);
    jw_object_end(&w);
    enum MHD_Result ok =
        queue(c, status, "application/json", w.err ? "" : w.buf, w.err ? 0 : w.len, NULL);
    jw_free(&w);
    return ok;
}

/* ------------------------------------------------------------ header checks */

/* True when the comma-separated Accept value admits `type` ("text/event-stream"). */
static bool accepts(const char *accept, const char *type)
{
    if (accept == NULL)
        return true; /* no Accept header: anything goes */
    const char *slash = strchr(type, '/');
    size_t major = (size_t)(slash - type);
    const char *p = accept;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ';' && *e != ' ')
            e++;
        size_t n = (size_t)(e - p);
        if ((n == strlen(type) && strncasecmp(p, type, n) == 0) ||
            (n == 3 && memcmp(p, "*/*", 3) == 0) ||
            (n == major + 2 && strncasecmp(p, type, major + 1) == 0 && p[major + 1] == '*'))
            return true;
        while (*e && *e != ',')
            e++;
        p = e;
    }
    return false;
}

/* Is `name` (host part only, brackets kept for IPv6) a loopback name? */
static bool loopback_name(const char *name, size_t n)
{
    return (n == 9 && strncasecmp(name, "localhost", 9) == 0) ||
           (n == 9 && memcmp(name, "127.0.0.1", 9) == 0) ||
           (n == 5 && memcmp(name, "[::1]", 5) == 0);
}

/* Splits "host[:port]" (host may be "[v6]"); returns the host length and the port or -1. */
static size_t split_host(const char *hp, long *port)
{
    const char *colon = NULL;
    if (hp[0] == '[') {
        const char *rb = strchr(hp, ']');
        if (rb == NULL)
            return 0;
        colon = rb[1] == ':' ? rb + 1 : NULL;
        if (rb[1] != '\0' && rb[1] != ':')
            return 0;
    } else {
        colon = strchr(hp, ':');
    }
    *port = -1;
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end != '\0' || colon[1] == '\0' || p < 0 || p > 65535)
            return 0;
        *port = p;
        return (size_t)(colon - hp);
    }
    return strlen(hp);
}

/* DNS rebinding: bound to loopback, the Host must name loopback and our port. */
static bool host_ok(const mcpage_http *h, const char *host)
{
    if (!h->loopback)
        return true;
    if (host == NULL)
        return false;
    long port;
    size_t n = split_host(host, &port);
    return n > 0 && loopback_name(host, n) && (port < 0 || port == h->port);
}

static bool origin_ok(const mcpage_http *h, const char *origin)
{
    if (origin == NULL || h->any_origin)
        return true;
    for (size_t i = 0; i < h->norigins; i++)
        if (strcasecmp(h->origins[i], origin) == 0)
            return true;
    if (!h->loopback)
        return false;
    /* Bound to loopback: pages served from loopback itself are allowed. */
    const char *rest = NULL;
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    if (rest == NULL)
        return false;
    long port;
    size_t n = split_host(rest, &port);
    return n > 0 && loopback_name(rest, n);
}

static bool auth_ok(const mcpage_http *h, const char *authz)
{
    if (!h->auth)
        return true;
    if (authz == NULL || strncasecmp(authz, "Bearer ", 7) != 0)
        return false;
    const char *tok = authz + 7;
    while (*tok == ' ')
        tok++;
    /* Hash both sides so the comparison takes the same time whatever the length. */
    uint8_t got[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)tok, strlen(tok), got);
    return CRYPTO_memcmp(got, h->token_hash, sizeof got) == 0;
}

/* The compact JSON text of a request id (as the runtime spells related_id), or NULL. */
static char *id_text(const json_t *id)
{
    if (!(json_is_integer(id) ||
          (json_is_string(id) && json_string_length(id) <= MCP_MAX_ID_BYTES)))
        return NULL;
    jw w;
    jw_init(&w, MCP_ID_TEXT_MAX);
    if (json_is_integer(id))
        jw_int(&w, json_integer_value(id));
    else
        jw_json(&w, id);
    char *r = w.err == 0 ? mcpage__strndup(w.buf, w.len) : NULL;
    jw_free(&w);
    return r;
}

/* ------------------------------------------------------------ SSE responses */

/* Opens an SSE response draining `st` (hs->lock NOT held). */
static enum MHD_Result open_sse(struct MHD_Connection *c, http_session *hs, http_stream *st,
                                bool resumed, const char *sid_header)
{
    http_conn *cn = mcpage__calloc(1, sizeof *cn);
    if (cn == NULL)
        return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR, "out of memory");
    session_ref(hs);
    cn->hs = hs;
    cn->mc = c;
    cn->resumed = resumed;
    cn->last_write = now_ms();
    pthread_mutex_lock(&hs->lock);
    if (st->conn) {
        /* A newer connection takes the stream over; the old one ends. */
        st->conn->st = NULL;
        st->conn->kill = true;
        conn_wake(st->conn);
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
    add_cors(c, r);
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r); /* frees cn through sse_free when the connection is done */
    return ok;
}

/* ------------------------------------------------------------ methods */

/* A new session with a fresh runtime session and no id, not in the table; NULL without memory. */
static http_session *session_alloc(mcpage_http *h)
{
    http_session *hs = mcpage__calloc(1, sizeof *hs);
    if (hs == NULL)
        return NULL;
    hs->h = h;
    hs->next_no = 1;
    atomic_init(&hs->refs, 2); /* the table and the creating request */
    atomic_init(&hs->last_active, now_ms());
    pthread_mutex_init(&hs->lock, NULL);
    pthread_mutex_init(&hs->recv_lock, NULL);
    if (mcpage_session_new(h->srv, hs_send, hs, &hs->s) != 0) {
        pthread_mutex_destroy(&hs->lock);
        pthread_mutex_destroy(&hs->recv_lock);
        mcpage__free(hs);
        return NULL;
    }
    mcpage_session_set_close_stream(hs->s, hs_close_stream);
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
 * Adds hs to the table (h->lock held). When a session with the same id is
 * there already, returns it in *existing with a new reference instead.
 * MCPAGE_ERANGE when the table is full or the endpoint is stopping.
 */
static int table_insert(mcpage_http *h, http_session *hs, http_session **existing)
{
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
 * negotiated version and the client's capabilities go inside.
 */
static int session_mint_id(mcpage_http *h, http_session *hs)
{
    char id[SESSION_ID_MAX + 1];
    int n = session_id_mint(h->srv->keyring, mcpage_session_protocol_version(hs->s),
                            mcpage_session_client_capabilities(hs->s), (int64_t)time(NULL), id);
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
        tombstone_add(h, hs->nonce, id_until(h, hs->issued_at));
    pthread_mutex_unlock(&h->lock);
    if (mine)
        session_end(hs);
    if (bury && hs->id[0])
        ended_record(h, hs);
}

static void receive(http_session *hs, const char *msg, size_t len)
{
    pthread_mutex_lock(&hs->recv_lock);
    if (hs->s)
        mcpage_session_receive(hs->s, msg, len);
    pthread_mutex_unlock(&hs->recv_lock);
}

/* Checks the MCP-Protocol-Version header; false after queueing a 400. */
static bool version_ok(struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *pv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (pv == NULL || mcpage_protocol_supported(pv))
        return true;
    char msg[200];
    (void)snprintf(msg, sizeof msg,
                   "Bad Request: unsupported MCP-Protocol-Version '%.40s'; this server speaks %s, "
                   "2025-06-18 and 2025-03-26",
                   pv, mcpage_protocol_latest());
    *ret = fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, msg);
    return false;
}

/* Looks the session up for GET/DELETE/non-initialize POST; NULL after queueing 400/404. */
static http_session *need_session(mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
    if (sid == NULL) {
        *ret = fail(c, MHD_HTTP_BAD_REQUEST, -32000,
                    "Bad Request: Mcp-Session-Id header required; send initialize first and "
                    "repeat the Mcp-Session-Id it returned on every request");
        return NULL;
    }
    unsigned status = 0;
    const char *why = NULL;
    http_session *hs = session_lookup(h, sid, &status, &why);
    if (hs == NULL)
        *ret = fail(c, status, status == MHD_HTTP_NOT_FOUND ? -32001 : -32000, why);
    return hs;
}

static enum MHD_Result handle_delete(mcpage_http *h, struct MHD_Connection *c)
{
    enum MHD_Result ret = MHD_NO;
    if (!version_ok(c, &ret))
        return ret;
    http_session *hs = need_session(h, c, &ret);
    if (hs == NULL)
        return ret;
    session_close(h, hs, true);
    session_unref(hs);
    return queue(c, MHD_HTTP_NO_CONTENT, NULL, "", 0, NULL);
}

static enum MHD_Result handle_get(mcpage_http *h, struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    if (accept && !accepts(accept, "text/event-stream"))
        return fail(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
                    "Not Acceptable: GET opens a server-sent event stream; send Accept: "
                    "text/event-stream");
    enum MHD_Result ret = MHD_NO;
    if (!version_ok(c, &ret))
        return ret;
    http_session *hs = need_session(h, c, &ret);
    if (hs == NULL)
        return ret;
    atomic_store(&hs->last_active, now_ms());
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    pthread_mutex_lock(&hs->lock);
    http_stream *st = NULL;
    unsigned status = 0;
    const char *why = NULL;
    uint64_t no = 0, seq = 0;
    if (hs->closed) {
        status = MHD_HTTP_NOT_FOUND;
        why = "Session not found: it was ended";
    } else if (last) {
        char *e1 = NULL, *e2 = NULL;
        errno = 0;
        no = strtoull(last, &e1, 10);
        seq = *e1 == '_' ? strtoull(e1 + 1, &e2, 10) : 0;
        if (*e1 != '_' || *e2 != '\0' || errno || !isdigit((unsigned char)last[0]) ||
            !isdigit((unsigned char)e1[1])) {
            status = MHD_HTTP_BAD_REQUEST;
            why = "Bad Request: Last-Event-ID is not an event id of this server";
        } else if ((st = stream_by_no(hs, no)) == NULL) {
            status = MHD_HTTP_NOT_FOUND;
            why = "Stream not found: it finished and was delivered, or the session was "
                  "restarted; nothing is left to resume";
        } else if (seq >= st->next_seq) {
            status = MHD_HTTP_BAD_REQUEST;
            why = "Bad Request: Last-Event-ID names an event this stream has not sent";
            st = NULL;
        } else {
            st->sent_seq = seq; /* replay what follows, as far as the buffer still holds it */
        }
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
    if (st == NULL) {
        ret = fail(c, status, RPC_INVALID_REQUEST, why);
    } else {
        ret = open_sse(c, hs, st, last != NULL, NULL);
    }
    session_unref(hs);
    return ret;
}

/*
 * Frees the oldest request stream that finished while nobody listened and
 * was never resumed (hs->lock held); false when there is none.
 */
static bool evict_abandoned(http_session *hs)
{
    http_stream *victim = NULL;
    for (http_stream *st = hs->streams; st; st = st->next)
        if (st->no != 0 && !st->json && st->conn == NULL && st->done_seq)
            victim = st; /* the list is newest first: the last match is the oldest */
    if (victim)
        stream_remove(hs, victim);
    return victim != NULL;
}

/* Handles a complete POST body. */
static enum MHD_Result handle_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq)
{
    char why[256];
    json_t *v = NULL;
    switch (jsonin_parse(rq->body ? rq->body : "", rq->len, h->max_body, h->srv->cfg.max_depth, &v,
                         why, sizeof why)) {
    case JSONIN_OK:
        break;
    case JSONIN_SYNTAX: {
        char msg[320];
        (void)snprintf(msg, sizeof msg, "Parse error: %s", why);
        return fail(c, MHD_HTTP_BAD_REQUEST, RPC_PARSE_ERROR, msg);
    }
    case JSONIN_TOO_LARGE:
    case JSONIN_TOO_DEEP: {
        char msg[320];
        (void)snprintf(msg, sizeof msg, "Invalid Request: %s", why);
        return fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, msg);
    }
    }
    enum MHD_Result ret = MHD_NO;
    char *req_id = NULL;
    if (!json_is_object(v)) {
        ret = fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                   json_is_array(v) ? "Invalid Request: JSON-RPC batches are not supported "
                                      "(removed in 2025-06-18); POST one message at a time"
                                    : "Invalid Request: the body must be one JSON-RPC message "
                                      "(a JSON object)");
        goto done;
    }
    const json_t *jsonrpc = json_object_get(v, "jsonrpc");
    if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0) {
        ret = fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                   "Invalid Request: \"jsonrpc\" must be the string \"2.0\"");
        goto done;
    }
    const json_t *method = json_object_get(v, "method");
    const json_t *id = json_object_get(v, "id");
    bool request = json_is_string(method) && id != NULL;
    bool notification = json_is_string(method) && id == NULL;
    bool response = method == NULL && id != NULL &&
                    (json_object_get(v, "result") || json_object_get(v, "error"));
    if (!request && !notification && !response) {
        ret = fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                   "Invalid Request: a message needs a string \"method\" (request or "
                   "notification) or an \"id\" with \"result\"/\"error\" (response)");
        goto done;
    }
    bool init = request && strcmp(json_string_value(method), "initialize") == 0;
    const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
    if (init && sid == NULL) {
        unsigned status = 0;
        rq->hs = session_create(h, &status);
        if (rq->hs == NULL) {
            ret = fail(c, status,
                       status == MHD_HTTP_SERVICE_UNAVAILABLE ? -32000 : RPC_INTERNAL_ERROR,
                       status == MHD_HTTP_SERVICE_UNAVAILABLE
                           ? "Service Unavailable: the server holds its maximum of sessions; "
                             "retry later or end an unused session with DELETE"
                           : "Internal error: the session could not be created");
            goto done;
        }
        rq->new_session = true;
    } else {
        if (!version_ok(c, &ret))
            goto done;
        rq->hs = need_session(h, c, &ret);
        if (rq->hs == NULL)
            goto done;
    }
    http_session *hs = rq->hs;
    atomic_store(&hs->last_active, now_ms());
    if (!request) {
        receive(hs, rq->body, rq->len);
        ret = queue(c, MHD_HTTP_ACCEPTED, NULL, "", 0, NULL);
        goto done;
    }
    req_id = id_text(id);
    if (req_id == NULL) {
        ret = fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                   "Invalid Request: \"id\" must be a string (at most 256 bytes) or an integer");
        goto done;
    }
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    bool sse_ok = accepts(accept, "text/event-stream"),
         json_ok = accepts(accept, "application/json");
    /* Calls may log, report progress or ask the client before answering: stream them. */
    bool may_talk = strcmp(json_string_value(method), "tools/call") == 0 ||
                    strcmp(json_string_value(method), "prompts/get") == 0 ||
                    strcmp(json_string_value(method), "resources/read") == 0;
    bool sse = sse_ok && (!json_ok || may_talk);
    pthread_mutex_lock(&hs->lock);
    http_stream *st = NULL;
    unsigned status = 0;
    const char *msg = NULL;
    if (hs->closed) {
        status = MHD_HTTP_NOT_FOUND;
        msg = "Session not found: it was ended";
    } else if (stream_by_req(hs, req_id)) {
        status = MHD_HTTP_CONFLICT;
        msg = "Invalid Request: a request with this id is still in flight in this session; use "
              "a new id for every request";
    } else if (hs->nstreams >= HTTP_MAX_STREAMS && !evict_abandoned(hs)) {
        status = MHD_HTTP_TOO_MANY_REQUESTS;
        msg = "Too Many Requests: this session has 256 requests open; wait for some to finish";
    } else if ((st = mcpage__calloc(1, sizeof *st)) == NULL) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        msg = "out of memory";
    } else {
        st->no = hs->next_no++;
        st->req_id = req_id;
        req_id = NULL;
        st->json = !sse;
        st->next_seq = 1;
        st->next = hs->streams;
        hs->streams = st;
        hs->nstreams++;
        if (st->json) {
            st->waiting = c;
            rq->st = st;
        }
    }
    pthread_mutex_unlock(&hs->lock);
    if (st == NULL) {
        ret = fail(c, status, RPC_INVALID_REQUEST, msg);
        goto done;
    }
    receive(hs, rq->body, rq->len);
    if (rq->new_session &&
        (!mcpage_session_initialized(hs->s) || session_mint_id(h, hs) != MCPAGE_OK)) {
        /* A failed initialize leaves no session behind. */
        rq->new_session = false;
        session_close(h, hs, false);
    }
    const char *sid_out = rq->new_session ? hs->id : NULL;
    if (sse) {
        ret = open_sse(c, hs, st, false, sid_out);
        goto done;
    }
    pthread_mutex_lock(&hs->lock);
    bool answered = st->answered || hs->closed;
    if (!answered) {
        /* The runtime answers from a worker: park the connection until hs_send resumes it. */
        st->suspended = true;
        rq->waiting = true;
        MHD_suspend_connection(c);
    }
    pthread_mutex_unlock(&hs->lock);
    if (answered)
        ret = queue(c, MHD_HTTP_OK, "application/json", st->body ? st->body : "",
                    st->body ? st->body_len : 0, sid_out);
    else
        ret = MHD_YES;
done:
    mcpage__free(req_id);
    json_decref(v);
    return ret;
}

/* A POST whose JSON answer was awaited is resumed: send it. */
static enum MHD_Result finish_wait(struct MHD_Connection *c, http_req *rq)
{
    http_session *hs = rq->hs;
    pthread_mutex_lock(&hs->lock);
    http_stream *st = rq->st;
    bool answered = st->answered && st->body;
    char *body = st->body;
    size_t len = st->body_len;
    st->body = NULL;
    pthread_mutex_unlock(&hs->lock);
    rq->waiting = false;
    if (!answered) {
        mcpage__free(body);
        return fail(c, MHD_HTTP_NOT_FOUND, -32001,
                    "Session not found: it ended before the request was answered");
    }
    enum MHD_Result ret =
        queue(c, MHD_HTTP_OK, "application/json", body, len, rq->new_session ? hs->id : NULL);
    mcpage__free(body);
    return ret;
}

/*
 * GET /health: 200 {"status":"ok"} while the server can serve, else 503
 * with the reason the embedder's check gave (a load balancer's probe;
 * no session, no token needed, nothing secret in it).
 */
static enum MHD_Result handle_health(mcpage_http *h, struct MHD_Connection *c, const char *method)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
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
    enum MHD_Result ret = w.err ? MHD_NO
                                : queue(c, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                                        "application/json", w.buf, w.len, NULL);
    jw_free(&w);
    return ret;
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
    }
    if (rq->waiting)
        return finish_wait(c, rq);
    if (!rq->started) {
        rq->started = true;
        if (strcmp(url, "/health") == 0)
            return handle_health(h, c, method);
        if (strcmp(url, "/mcp") != 0)
            return fail(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
                        "Not Found: the MCP endpoint is /mcp");
        if (!host_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
            return fail(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
                        "Forbidden: the Host header must name this loopback server "
                        "(localhost, 127.0.0.1 or [::1] with its port); DNS rebinding protection");
        if (!origin_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin")))
            return fail(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
                        "Forbidden: Origin not allowed; start the server with --allow-origin "
                        "ORIGIN to admit it");
        if (strcmp(method, "OPTIONS") == 0) {
            /* CORS preflight for an allowed browser origin. */
            struct MHD_Response *r =
                MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
            if (r == NULL)
                return MHD_NO;
            add_cors(c, r);
            MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE");
            MHD_add_response_header(r, "Access-Control-Allow-Headers",
                                    "Content-Type, Accept, Authorization, Mcp-Session-Id, "
                                    "MCP-Protocol-Version, Last-Event-ID");
            MHD_add_response_header(r, "Allow", "GET, POST, DELETE");
            enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
            MHD_destroy_response(r);
            return ok;
        }
        bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0,
             del = strcmp(method, "DELETE") == 0;
        if (!get && !post && !del)
            return fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
                        "Method Not Allowed: /mcp takes POST, GET and DELETE");
        if (!auth_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
            return fail(c, MHD_HTTP_UNAUTHORIZED, RPC_INVALID_REQUEST,
                        "Unauthorized: send Authorization: Bearer TOKEN with the server's token");
        if (get)
            return handle_get(h, c);
        if (del)
            return handle_delete(h, c);
        const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0)
            return fail(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_REQUEST,
                        "Unsupported Media Type: POST a JSON-RPC message with Content-Type: "
                        "application/json");
        const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
        if (!accepts(accept, "application/json") && !accepts(accept, "text/event-stream"))
            return fail(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
                        "Not Acceptable: the client must accept application/json and "
                        "text/event-stream");
        const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (clen && strtoull(clen, NULL, 10) > h->max_body) {
            char msg[160];
            (void)snprintf(msg, sizeof msg, "Content Too Large: the body limit is %zu bytes",
                           h->max_body);
            return fail(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST, msg);
        }
        return MHD_YES; /* the body follows */
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (rq->too_big || n > h->max_body - rq->len) {
            rq->too_big = true; /* discard the rest, answer 413 at the end */
            return MHD_YES;
        }
        if (rq->len + n > rq->cap) {
            size_t cap = rq->cap ? rq->cap : 4096;
            while (cap < rq->len + n)
                cap *= 2;
            if (cap > h->max_body)
                cap = h->max_body;
            char *b = mcpage__realloc(rq->body, cap);
            if (b == NULL)
                return MHD_NO;
            rq->body = b;
            rq->cap = cap;
        }
        memcpy(rq->body + rq->len, upload_data, n);
        rq->len += n;
        return MHD_YES;
    }
    if (rq->too_big) {
        char msg[160];
        (void)snprintf(msg, sizeof msg, "Content Too Large: the body limit is %zu bytes",
                       h->max_body);
        return fail(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST, msg);
    }
    return handle_post(h, c, rq);
}

/* libmicrohttpd is done with a request: release its state. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    http_req *rq = *con_cls;
    if (rq == NULL)
        return;
    *con_cls = NULL;
    if (rq->hs) {
        if (rq->st) {
            pthread_mutex_lock(&rq->hs->lock);
            stream_remove(rq->hs, rq->st);
            pthread_mutex_unlock(&rq->hs->lock);
        }
        atomic_store(&rq->hs->last_active, now_ms());
        session_unref(rq->hs);
    }
    mcpage__free(rq->body);
    mcpage__free(rq);
}

/* Waits `ms` on h->cv (h->lock held); false when the endpoint is stopping. */
static bool wait_tick(mcpage_http *h, long ms)
{
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

/* ------------------------------------------------------------ shared ends */

/*
 * The shared record of ended sessions (cfg.ended, optional): DELETE
 * publishes the id's key, an id this instance does not hold is checked
 * before it is accepted, and a poller ends the sessions held here that
 * another instance ended. A record that cannot be reached costs only
 * that reach: the instance goes on with what it knows, and says so once.
 */
static void ended_health(mcpage_http *h, bool ok, const char *what)
{
    bool was_down = atomic_exchange(&h->ended_down, !ok);
    if (!ok && !was_down)
        (void)fprintf(stderr,
                      "mcpage: the shared record of ended sessions cannot be reached (%s); "
                      "sessions ended with DELETE stay accepted by other instances until it "
                      "answers again\n",
                      what);
    else if (ok && was_down)
        (void)fprintf(stderr, "mcpage: the shared record of ended sessions answers again\n");
}

/* True when another instance ended the session with this key. */
static bool ended_lookup(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN])
{
    const mcpage_http_ended *e = &h->cfg.ended;
    if (e->lookup == NULL)
        return false;
    bool ended = false;
    int rc = e->lookup(e->ud, nonce, &ended);
    ended_health(h, rc == 0, "lookup");
    return rc == 0 && ended;
}

/* Tells the other instances that `hs` ended here. */
static void ended_record(mcpage_http *h, const http_session *hs)
{
    const mcpage_http_ended *e = &h->cfg.ended;
    if (e->record == NULL)
        return;
    int rc = e->record(e->ud, hs->nonce, id_until(h, hs->issued_at));
    ended_health(h, rc == 0, "record");
    if (rc != 0)
        (void)fprintf(stderr, "mcpage: session %s ended here only\n", hs->label);
}

/* Ends reported by one poll. */
typedef struct ended_batch {
    struct ended_key {
        uint8_t nonce[SESSION_ID_NONCE_LEN];
        int64_t until;
    } * keys;
    size_t n, cap;
} ended_batch;

static void ended_collect(void *ctx, const uint8_t *key, int64_t until)
{
    ended_batch *b = ctx;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        void *k = mcpage__realloc(b->keys, cap * sizeof *b->keys);
        if (k == NULL)
            return; /* reported again by the next poll */
        b->keys = k;
        b->cap = cap;
    }
    memcpy(b->keys[b->n].nonce, key, SESSION_ID_NONCE_LEN);
    b->keys[b->n++].until = until;
}

/* Buries the reported ids; returns the live sessions among them, taken
 * out of the table (h->lock held). */
static http_session *ended_apply(mcpage_http *h, const ended_batch *b)
{
    http_session *gone = NULL;
    for (size_t i = 0; i < b->n; i++) {
        if (tombstoned(h, b->keys[i].nonce))
            continue;
        tombstone_add(h, b->keys[i].nonce, b->keys[i].until);
        for (http_session **pp = &h->sessions; *pp; pp = &(*pp)->next) {
            http_session *hs = *pp;
            if (hs->id[0] && memcmp(hs->nonce, b->keys[i].nonce, SESSION_ID_NONCE_LEN) == 0) {
                *pp = hs->next;
                h->nsessions--;
                hs->next = gone;
                gone = hs;
                break;
            }
        }
    }
    return gone;
}

static void *poller_main(void *arg)
{
    mcpage_http *h = arg;
    const mcpage_http_ended *e = &h->cfg.ended;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    int64_t mark = 0;
    long wait_ms = 0; /* the first poll sets the position at once */
    ended_batch b = {0};
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        if (wait_ms > 0 && !wait_tick(h, wait_ms))
            break;
        pthread_mutex_unlock(&h->lock);
        b.n = 0;
        int rc = e->since(e->ud, &mark, ended_collect, &b);
        ended_health(h, rc == 0, "poll");
        /* Unreachable: back off, doubling up to HTTP_ENDED_BACKOFF_MS. */
        if (rc == 0 || wait_ms < HTTP_TICK_MS)
            wait_ms = HTTP_TICK_MS;
        else if ((wait_ms *= 2) > HTTP_ENDED_BACKOFF_MS)
            wait_ms = HTTP_ENDED_BACKOFF_MS;
        pthread_mutex_lock(&h->lock);
        http_session *gone = rc == 0 ? ended_apply(h, &b) : NULL;
        pthread_mutex_unlock(&h->lock);
        for (http_session *hs = gone, *n; hs; hs = n) {
            n = hs->next;
            if (h->cfg.verbose)
                (void)fprintf(stderr, "mcpage: session %s ended with DELETE on another instance\n",
                              hs->label);
            session_end(hs);
        }
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    mcpage__free(b.keys);
    return NULL;
}

/* ------------------------------------------------------------ housekeeping */

static void *keeper_main(void *arg)
{
    mcpage_http *h = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        if (!wait_tick(h, HTTP_TICK_MS))
            break;
        int64_t now = now_ms();
        tombstones_expire(h, (int64_t)time(NULL));
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
            for (http_stream *st = hs->streams; st; st = st->next) {
                http_conn *cn = st->conn;
                if (cn && cn->suspended && now - cn->last_write >= (int64_t)h->cfg.heartbeat_ms) {
                    cn->heartbeat = true;
                    cn->last_write = now;
                    conn_wake(cn);
                }
            }
            pthread_mutex_unlock(&hs->lock);
            pp = &hs->next;
        }
        pthread_mutex_unlock(&h->lock);
        for (http_session *hs = expired, *n; hs; hs = n) {
            n = hs->next;
            if (h->cfg.verbose)
                (void)fprintf(stderr, "mcpage: session %s expired after %u s idle\n", hs->label,
                              h->cfg.session_idle_s);
            session_end(hs);
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
}

static void http_free(mcpage_http *h)
{
    for (size_t i = 0; i < h->norigins; i++)
        mcpage__free(h->origins[i]);
    mcpage__free(h->origins);
    mcpage__free(h->host);
    mcpage__free(h->tombs);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->lock);
    mcpage__free(h);
}

int mcpage_http_start(mcpage_server *srv, const mcpage_http_config *cfg, mcpage_http **out)
{
    if (out)
        *out = NULL;
    if (srv == NULL || cfg == NULL || out == NULL || cfg->max_connections == 0 ||
        cfg->max_sessions == 0 || cfg->session_idle_s == 0 || cfg->heartbeat_ms < 10 ||
        cfg->threads == 0 || cfg->threads > 64 || cfg->stream_buffer < 1024 ||
        (cfg->auth_token && cfg->auth_token[0] == '\0'))
        return MCPAGE_EINVAL;
    mcpage_http *h = mcpage__calloc(1, sizeof *h);
    if (h == NULL)
        return MCPAGE_ENOMEM;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->srv = srv;
    h->cfg = *cfg;
    h->host = mcpage__strdup(cfg->host ? cfg->host : "127.0.0.1");
    h->max_body = cfg->max_body ? cfg->max_body : srv->cfg.max_message;
    h->ntombs = cfg->max_sessions > HTTP_TOMBSTONES_MIN ? cfg->max_sessions : HTTP_TOMBSTONES_MIN;
    h->tombs = mcpage__calloc(h->ntombs, sizeof *h->tombs);
    int rc = MCPAGE_ENOMEM;
    if (h->host == NULL || h->tombs == NULL)
        goto fail;
    h->cfg.host = h->host;
    h->cfg.allow_origins = NULL;
    h->cfg.auth_token = NULL;
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
        SHA256((const unsigned char *)cfg->auth_token, strlen(cfg->auth_token), h->token_hash);
    }
    /* The address: numeric only, so what is checked is what is bound. */
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME;
#ifdef __linux__
    flags |= MHD_USE_EPOLL;
#endif
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
    /* MHD: one connection is handled by one thread; suspended connections cost none. */
    h->d = MHD_start_daemon(
        flags, cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(cfg->threads > 1 ? cfg->threads : 0),
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->connection_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONN_MEMORY,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_END);
    rc = MCPAGE_EIO;
    if (h->d == NULL)
        goto fail;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : cfg->port;
    if (pthread_create(&h->keeper, NULL, keeper_main, h) != 0) {
        MHD_stop_daemon(h->d);
        goto fail;
    }
    h->keeper_started = true;
    if (h->cfg.ended.since) {
        if (pthread_create(&h->poller, NULL, poller_main, h) != 0) {
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
    MHD_socket ls = MHD_quiesce_daemon(h->d); /* no new connections */
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lock);
    if (h->keeper_started)
        pthread_join(h->keeper, NULL);
    if (h->poller_started)
        pthread_join(h->poller, NULL);
    /* Running calls get grace_ms to answer before the sessions end. */
    int64_t deadline = now_ms() + (grace_ms > 0 ? grace_ms : 0);
    pthread_mutex_lock(&h->lock);
    for (http_session *hs = h->sessions; hs; hs = hs->next) {
        pthread_mutex_lock(&hs->recv_lock);
        if (hs->s) {
            int64_t left = deadline - now_ms();
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
        session_end(hs); /* wakes every suspended connection: they end */
    }
    /* Let the polling threads process the resumptions before the daemon stops. */
    usleep(50 * 1000);
    MHD_stop_daemon(h->d);
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
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
