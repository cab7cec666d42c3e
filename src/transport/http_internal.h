/*
 * The Streamable HTTP transport's internals, shared by its files:
 *
 *   http.c          libmicrohttpd's callbacks, routing by method, the
 *                   housekeeping thread, start and stop
 *   http_request.c  one request: header checks (Host, Origin, token,
 *                   media types, protocol version), the body with its
 *                   budget and deadline, the parsed JSON-RPC message, and
 *                   error answers
 *   http_session.c  sessions of the 2025-11-25 era: the table, signed ids,
 *                   restore, idle expiry, POST/DELETE within a session, and
 *                   telling the runtime of requests the transport ended
 *   http_ended.c    ended sessions: ids refused here (tombstones) and the
 *                   record shared with other instances, with its poller
 *   http_sse.c      streams: the runtime's output routed to them, SSE
 *                   events and ids, Last-Event-ID replay, GET, and the end
 *                   of an exchange no answer will come to (cancelled, timed
 *                   out, its client gone)
 *   http_stateless.c the 2026-07-28 era: which POSTs are modern, their
 *                   header checks, one runtime session per request
 *
 * Locks, in order: h->lock (session table) before hs->lock (one session's
 * streams). The runtime calls http_send() under its send lock, so no
 * runtime function is ever called while holding hs->lock.
 */
#ifndef MCPAGE_TRANSPORT_HTTP_INTERNAL_H
#define MCPAGE_TRANSPORT_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "transport/http_lib.h"

#include <mcpage/http.h>

#include "mcp/server_internal.h"
#include "page/digest.h"
#include "transport/oauth.h"
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
/* Longest a stop waits, once every exchange is closed, for their last bytes to go out. */
#define HTTP_STOP_FLUSH_MS 500
/* Longest wait between polls of an unreachable record of ended sessions. */
#define HTTP_ENDED_BACKOFF_MS 30000
/* Default bytes of request bodies held across all connections (mcpage_http_config). */
#define HTTP_MAX_BUFFERED_DEFAULT ((size_t)32 << 20)
/* Default seconds a POST body may take to arrive after its headers. */
#define HTTP_BODY_TIMEOUT_DEFAULT 30
/* Default seconds a POSTed request may wait for its answer. */
#define HTTP_REQUEST_TIMEOUT_DEFAULT 300
/* JSON-RPC error code of a request the server timed out (as the TypeScript SDK's). */
#define HTTP_RPC_TIMEOUT (-32001)
/* JSON-RPC error code of a missing or ended session (as the TypeScript SDK's). */
#define HTTP_RPC_NO_SESSION (-32001)
/* JSON-RPC error code of a refusal by the transport itself: no session id, no room. */
#define HTTP_RPC_TRANSPORT (-32000)

/* The answer to a request the server will not serve because it is stopping (503). */
#define HTTP_STOPPING_TEXT                                                                         \
    "Service Unavailable: the server is stopping; send the request again once it is back, or "     \
    "to another instance"

/* Shortest bearer token accepted (mcpage_http_config.auth_token). */
#define HTTP_TOKEN_MIN 16
/* Clients whose failed authentications are remembered (a ring of addresses). */
#define HTTP_AUTH_CLIENTS 256
/* Failed authentications a client may make before it must wait. */
#define HTTP_AUTH_BURST 10
/* Seconds one failure is held against its client. */
#define HTTP_AUTH_DECAY_S 6

/* A client's failed authentications: a leaky bucket per address. */
typedef struct http_auth_client {
    uint8_t addr[16]; /* IPv4 (mapped) or IPv6 address */
    bool used;        /* the slot holds a client */
    double fails;     /* failures not yet leaked away */
    int64_t at_ms;    /* monotonic ms of the last update */
} http_auth_client;

typedef struct http_session http_session;
typedef struct http_conn http_conn;
typedef struct http_page_job http_page_job; /* a page rendered on a worker (http_page.c) */

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
    bool cancelled;                 /* no answer will come (cancelled, or its client left) */
    int64_t deadline; /* monotonic ms when an unanswered request times out; 0 = never */
    bool listen;      /* a subscriptions/listen: open until its client leaves or we stop */
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
    bool closing;              /* a listen's closing result went out (the server stops) */
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
    pthread_mutex_t recv_lock;           /* one message into the runtime at a time; guards s */
    http_stream *streams;                /* open streams */
    size_t nstreams;                     /* request streams among them */
    uint64_t next_no;                    /* next request stream number */
    atomic_int refs;                     /* 1 for the table + 1 per request or connection */
    bool closed;                         /* ended: streams close, waiters answer 404 */
    bool modern;                         /* one 2026-07-28 request: not in the table, no ids */
    _Atomic int64_t last_active;         /* monotonic ms of the last request */
};

struct mcpage_http {
    mcpage_server *srv;             /* served (borrowed) */
    mcpage_http_config cfg;         /* copy; pointers below own the strings */
    char *host;                     /* bind address */
    char **origins;                 /* allowed Origin values */
    size_t norigins;                /* their count */
    bool any_origin;                /* "*" was allowed */
    bool auth;                      /* a bearer token is required */
    uint8_t token_hash[SHA256_LEN]; /* SHA-256 of the token */
    bool loopback;                  /* bound to a loopback address */
    _Atomic uint16_t port;    /* bound port (polling threads may read it before start returns) */
    size_t max_body;          /* effective body limit */
    struct MHD_Daemon *d;     /* libmicrohttpd */
    pthread_mutex_t lock;     /* guards the table and stopping */
    pthread_cond_t cv;        /* wakes the housekeeper */
    http_session *sessions;   /* live sessions */
    http_session *transients; /* modern requests' sessions (never in the table) */
    size_t nsessions;         /* their count */
    struct http_tombstone *tombs; /* ids ended here by DELETE (a ring) */
    size_t ntombs, tomb_next;     /* ring size and the slot written next */
    atomic_bool stopping;         /* mcpage_http_stop began (read without the lock) */
    pthread_t keeper;             /* housekeeping thread */
    bool keeper_started;          /* it runs */
    pthread_t poller;             /* learns of ids ended elsewhere (cfg.ended) */
    bool poller_started;          /* it runs */
    int64_t ended_mark;           /* its position in cfg.ended (0: not set yet) */
    atomic_bool ended_down;       /* the shared record failed last time */
    _Atomic size_t buffered;      /* body bytes reserved by requests right now */
    bool external;                /* the caller runs the daemon (MHD_run): fuzzing */
    http_page_job *pages;         /* pages being rendered or answered (h->lock) */
    atomic_long answering;        /* requests not in their body, not completed */
    pthread_mutex_t auth_lock;    /* guards auth_clients */
    http_auth_client auth_clients[HTTP_AUTH_CLIENTS]; /* failed authentications by client */
    size_t auth_next;                                 /* the slot a new client takes */
    struct http_oauth *oauth; /* the OAuth resource server (oauth.h), or NULL */
};

/* The per-request state libmicrohttpd keeps for us (con_cls). */
typedef struct http_req {
    bool started;          /* the headers were checked */
    bool waiting;          /* a JSON response is awaited (connection suspended) */
    char *body;            /* POST body so far */
    size_t len, cap;       /* its length and allocation */
    bool too_big;          /* the body passed max_body: discard, answer 413 */
    size_t reserved;       /* bytes of h->buffered this body holds */
    int64_t body_deadline; /* monotonic ms by which the body must have arrived */
    http_session *hs;      /* session referenced, or NULL */
    http_stream *st;       /* json stream awaited, or NULL */
    bool new_session;      /* this request created hs (initialize) */
    http_page_job *page;   /* a page: rendered on a worker while the connection waits */
    oauth_principal who;   /* who sent it (OAuth: the token's subject and scopes) */
    bool answering;        /* counted in h->answering: not waiting for its body */
} http_req;

/* A POSTed JSON-RPC message, parsed once and checked as an envelope. */
typedef struct http_message {
    json_t *v;          /* the message (owned; an object) */
    const char *method; /* "method" of a request or notification, else NULL */
    const json_t *id;   /* "id" of a request or response, else NULL */
    bool request;       /* method and id */
    bool notification;  /* method, no id */
    bool response;      /* id with result or error, no method */
} http_message;

/* http.c */
int64_t http_now_ms(void);
/*
 * mcpage_http_start(), or with `external` a daemon with no listening
 * socket and no thread of its own: the caller adds connections
 * (MHD_add_connection) and runs it (MHD_run). The fuzz target does.
 */
int http_start(mcpage_server *srv, const mcpage_http_config *cfg, bool external, mcpage_http **out);
/* Waits `ms` on h->cv (h->lock held); false when the endpoint is stopping. */
bool http_wait_tick(mcpage_http *h, long ms);

/* http_request.c: answers. */
enum MHD_Result http_queue(struct MHD_Connection *c, unsigned status, const char *ctype,
                           const char *body, size_t len, const char *sid);
/* Answers an HTTP error with a JSON-RPC error body (id null) naming the fix. */
enum MHD_Result http_fail(struct MHD_Connection *c, unsigned status, int code, const char *message);
/* Adds the CORS headers an allowed browser Origin needs. */
void http_add_cors(struct MHD_Connection *c, struct MHD_Response *r);
/* Answers a CORS preflight (OPTIONS). */
enum MHD_Result http_preflight(struct MHD_Connection *c);

/* http_request.c: checks; each returns false after queueing the answer in *ret. */
bool http_accepts(const char *accept, const char *type);
/* Every path: one Host header, and an Origin we allow (so no CORS grant goes to another). */
bool http_check_origin(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret);
/* The MCP endpoint: the Host names this server (DNS rebinding). */
bool http_check_host(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret);
/*
 * The credentials: the static token, or an OAuth access token (then
 * rq->who is filled); unless the client is throttled for failed ones
 * (429 with Retry-After). A refusal is 401 (or 403 insufficient_scope,
 * 503 when the issuer's keys cannot be had) with its WWW-Authenticate.
 */
bool http_check_auth(mcpage_http *h, struct MHD_Connection *c, http_req *rq, enum MHD_Result *ret);
/*
 * OAuth: a tools/call of `tool` needs scopes rq->who lacks; answers 403
 * insufficient_scope naming them and returns false.
 */
bool http_check_tool_scope(mcpage_http *h, struct MHD_Connection *c, const http_req *rq,
                           const char *tool, enum MHD_Result *ret);
/* GET /.well-known/oauth-protected-resource[/PATH]: the resource's metadata (RFC 9728). */
enum MHD_Result http_oauth_metadata_answer(mcpage_http *h, struct MHD_Connection *c,
                                           const char *method);
/*
 * Throttling of failed authentication per client address: a leaky bucket
 * of HTTP_AUTH_BURST failures, one leaking away every HTTP_AUTH_DECAY_S.
 * Records a failure when `failed` (and the client is not throttled yet);
 * returns the seconds the client must wait, or 0.
 */
unsigned http_auth_wait(mcpage_http *h, struct MHD_Connection *c, bool failed);
/* 429 with Retry-After: `wait` seconds and a message saying why. */
enum MHD_Result http_fail_throttled(struct MHD_Connection *c, unsigned wait);
/* The bearer token `tok` is the server's (constant time). */
bool http_token_matches(const mcpage_http *h, const char *tok);
/* An Authorization header value carries the token, or none is required. */
bool http_auth_header_ok(const mcpage_http *h, const char *authz);
/*
 * http_page.c: a GET or HEAD to a path other than /mcp and /health, with
 * cfg.page set. The checks run here; the handler runs on a worker of the
 * server's pool (mcp_server_run) while the connection is suspended, as a
 * POST waits for its answer, so a slow page holds no polling thread.
 */
enum MHD_Result http_page(mcpage_http *h, struct MHD_Connection *c, http_req *rq, const char *url,
                          const char *method);
/* The connection of a page was resumed: sends what the handler answered. */
enum MHD_Result http_page_finish(struct MHD_Connection *c, http_req *rq);
/* The request is over (libmicrohttpd completed it): lets go of its page. */
void http_page_release(mcpage_http *h, http_req *rq);
/*
 * mcpage_http_stop, before the daemon stops: waits until `deadline`
 * (monotonic ms) for the pages being rendered, then resumes every page
 * connection still suspended (answered 503), since the daemon must not
 * stop with suspended connections.
 */
void http_pages_stop(mcpage_http *h, int64_t deadline);
/* After the daemon stopped: waits until no worker holds a page (they need h). */
void http_pages_wait(mcpage_http *h);
bool http_check_version(struct MHD_Connection *c, enum MHD_Result *ret);
bool http_check_post_headers(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret);

/* http_request.c: the body and the message. */
/*
 * Admits a POST body once the headers passed: reserves its declared
 * length in the budget shared by all connections (max_buffered) and
 * starts its deadline; false after queueing 503 in *ret.
 */
bool http_body_begin(mcpage_http *h, struct MHD_Connection *c, http_req *rq, enum MHD_Result *ret);
/*
 * Adds n bytes of body; false when the connection must close (past its
 * deadline, over the budget, out of memory). Past max_body marks
 * rq->too_big and keeps nothing more.
 */
bool http_body_append(mcpage_http *h, struct MHD_Connection *c, http_req *rq, const char *data,
                      size_t n);
/* The body arrived: the connection's own timeout applies again. */
void http_body_end(const mcpage_http *h, struct MHD_Connection *c);
/* Frees the body and gives its bytes back to the budget. */
void http_body_release(mcpage_http *h, http_req *rq);
/* Answers 413 for a body that passed max_body. */
enum MHD_Result http_fail_too_big(const mcpage_http *h, struct MHD_Connection *c);
/* Parses and checks a complete body; false after queueing a 400 in *ret. */
bool http_message_parse(const mcpage_http *h, struct MHD_Connection *c, const http_req *rq,
                        http_message *m, enum MHD_Result *ret);
void http_message_clear(http_message *m);
/* The compact JSON text of a request id (as the runtime spells related_id), or NULL. */
char *http_id_text(const json_t *id);

/* http_session.c */
void http_session_ref(http_session *hs);
void http_session_unref(http_session *hs);
/*
 * Closes a session's exchanges (hs->lock NOT held): marks it closed, ends
 * its SSE connections and resumes its parked POSTs, which then answer
 * with what came or a refusal. Nothing of it parks a connection again.
 */
void http_session_close(http_session *hs);
/* Ends a session taken out of the table (streams closed, calls cancelled). */
void http_session_end(http_session *hs);
/* A request the transport ended (timed out, its client left): the runtime cancels its call. */
typedef struct http_cancel {
    struct http_cancel *next; /* list link */
    http_session *hs;         /* its session (holds a reference) */
    char *req_id;             /* the request id's JSON text */
} http_cancel;

/* Looks the session up for GET/DELETE/POST; NULL after queueing 400/404 in *ret. */
http_session *http_need_session(mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret);
/* A POST of the 2025-11-25 era (a session, or initialize making one). */
enum MHD_Result http_session_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                  const http_message *m);
/* A modern POST: a session of its own for this one request (ended when the request is). */
enum MHD_Result http_session_post_transient(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                            const http_message *m);
/* A POST whose JSON answer was awaited is resumed: send it. */
enum MHD_Result http_session_finish_wait(struct MHD_Connection *c, http_req *rq);
enum MHD_Result http_session_delete(mcpage_http *h, struct MHD_Connection *c);
/*
 * One housekeeping tick over the table (h->lock held): takes idle
 * sessions out and returns them linked by next; sends heartbeats, times
 * out requests and notices clients that left, adding the requests whose
 * calls must be cancelled to *cancels.
 */
http_session *http_sessions_tick(mcpage_http *h, int64_t now, http_cancel **cancels);
/* The request of a modern session is over: out of the ticked list, and ended. */
void http_transient_done(mcpage_http *h, http_session *hs);
/* Tells the runtime to cancel the calls in `cancels` and frees the list. */
void http_cancels_run(http_cancel *cancels);

/* http_ended.c */
/* When a session's id is refused anyway: its maximum age. */
int64_t http_id_until(const mcpage_http *h, int64_t issued_at);
/* True when DELETE ended the session with this nonce here (h->lock held). */
bool http_tombstoned(const mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN]);
/* Remembers an ended id until `until` (h->lock held); once per id. */
void http_tombstone_add(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN], int64_t until);
void http_tombstones_expire(mcpage_http *h, int64_t now);
/* True when another instance ended the session with this key. */
bool http_ended_lookup(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN]);
/* Tells the other instances that `hs` ended here. */
void http_ended_record(mcpage_http *h, const http_session *hs);
/* Sets the poller's position in the shared record before anything is
 * served, so no session held here can end unseen before its first poll. */
void http_ended_mark(mcpage_http *h);
/* The poller thread (started when cfg.ended.since is set). */
void *http_ended_poller(void *arg);

/* http_stateless.c */
/* True when a POST speaks a modern revision (by its MCP-Protocol-Version or its _meta). */
bool http_is_modern(struct MHD_Connection *c, const http_message *m);
/* A modern POST: header checks against the body, then one request on its own session. */
enum MHD_Result http_stateless_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                    const http_message *m);
/* GET or DELETE from a modern client: 405. */
enum MHD_Result http_stateless_refuse(struct MHD_Connection *c, const char *method);
/* The HTTP status of a modern JSON answer: 404 for -32601, 400 for malformed requests. */
unsigned http_stateless_status(const char *body, size_t len);

/* http_sse.c */
void http_stream_free(http_stream *st);
/* Unlinks and frees a stream (hs->lock held). */
void http_stream_remove(http_session *hs, http_stream *st);
/* Resumes a suspended SSE connection so its reader runs (hs->lock held). */
void http_conn_wake(http_conn *cn);
/* The open request stream for a request id, or NULL (hs->lock held). */
http_stream *http_stream_by_req(http_session *hs, const char *req_id);
/*
 * Opens the stream of a POSTed request (hs->lock held): takes req_id on
 * success; else NULL with the HTTP status and a sentence.
 */
http_stream *http_stream_open(http_session *hs, char **req_id, bool json, unsigned *status,
                              const char **why);
/* The runtime's output (mcpage_send_fn): routes one message to its stream. */
int http_send(void *ud, const char *msg, size_t len, const char *related);
/* The runtime asks to close the connection of a call's stream (mcpage_close_stream_fn). */
void http_close_stream(void *ud, const char *related);
/* Opens an SSE response draining `st` (hs->lock NOT held). */
enum MHD_Result http_sse_open(struct MHD_Connection *c, http_session *hs, http_stream *st,
                              bool resumed, const char *sid_header);
/* GET: the standalone stream, or a stream resumed with Last-Event-ID. */
enum MHD_Result http_sse_get(mcpage_http *h, struct MHD_Connection *c);
/*
 * The client cancelled the request (hs->lock held): no answer will come,
 * so its exchange ends now (a JSON POST gets 202 with no body, an SSE
 * stream ends after what it holds) and its id leaves the in-flight set.
 * False when the request is not in flight.
 */
bool http_stream_cancel(http_session *hs, const char *req_id);
/*
 * One tick over a session's streams (hs->lock held): heartbeats on quiet
 * SSE connections, the request timeout, and clients gone from a waiting
 * JSON POST. Requests ended here are added to *cancels.
 */
void http_streams_tick(http_session *hs, int64_t now, http_cancel **cancels);

#endif
