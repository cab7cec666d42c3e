/*
 * mcpage HTTP: the MCP Streamable HTTP transport (protocol revision
 * 2025-11-25) for an mcpage_server, on libmicrohttpd.
 *
 * One endpoint, /mcp: POST carries one JSON-RPC message (answered as
 * application/json or as a text/event-stream), GET opens the session's
 * stream for server-initiated messages (and resumes any stream with
 * Last-Event-ID), DELETE ends the session. See docs/http.md for the
 * design, the limits and the security defaults.
 *
 *     mcpage_http_config hc;
 *     mcpage_http_config_init(&hc);
 *     hc.port = 8080;
 *     int rc = mcpage_serve_http(srv, &hc);   // until SIGTERM or SIGINT
 *
 * or, embedded, mcpage_http_start() / mcpage_http_port() /
 * mcpage_http_stop().
 */
#ifndef MCPAGE_HTTP_H
#define MCPAGE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mcpage/mcpage.h>
#include <mcpage/server.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpage_http mcpage_http; /* opaque: a running HTTP endpoint */

/* Most entries of mcpage_http_config.allow_origins. */
#define MCPAGE_HTTP_MAX_ORIGINS 64
/* Bytes of the session key mcpage_http_ended passes (the id's random part). */
#define MCPAGE_HTTP_SESSION_KEY_LEN 16

/*
 * A record of sessions ended with DELETE that several instances share
 * (optional). Session ids are signed, so every instance holding the key
 * accepts any session; without a shared record, DELETE ends a session
 * only on the instance that received it. With one:
 *  - DELETE calls `record` (the id's key, and `until`: the unix time
 *    after which the id is refused anyway by its maximum age);
 *  - an id this instance does not hold is checked with `lookup` before
 *    it is accepted, so an ended session is refused at once everywhere;
 *  - mcpage_http_start calls `since` once before it serves, with a
 *    position of 0 (`*mark`: set it and report nothing); then a poller
 *    thread calls it every half second with that position, and `since`
 *    calls each(ctx, key, until) for every end recorded after it and
 *    advances it. Sessions live on this instance end within that half
 *    second.
 * Each returns 0, or non-zero when the record cannot be reached; the
 * instance then goes on with what it knows, logs once, and retries.
 * Called from the starting thread, libmicrohttpd threads and the
 * poller: thread-safe.
 */
typedef struct mcpage_http_ended {
    int (*record)(void *ud, const uint8_t *key, int64_t until);
    int (*lookup)(void *ud, const uint8_t *key, bool *ended);
    int (*since)(void *ud, int64_t *mark,
                 void (*each)(void *ctx, const uint8_t *key, int64_t until), void *ctx);
    void *ud; /* passed to each */
} mcpage_http_ended;

/*
 * A request for a page served beside /mcp (mcpage_http_config.page): a
 * GET or HEAD to any path but /mcp and /health that passed the Host,
 * Origin and token checks.
 */
typedef struct mcpage_http_page_req {
    const char *method; /* "GET" or "HEAD" */
    const char *path;   /* the path, percent-decoded: "/", "/session" */
    /* A query argument, percent-decoded, or NULL when absent. */
    const char *(*arg)(const struct mcpage_http_page_req *req, const char *name);
    void *conn; /* private: the transport's copy of the request, for arg */
    /* Who asked: an OAuth access token's subject, scopes and groups, or
       NULL (no authorization, or the static token's login: its one user).
       A page that reads what a caller may see reads as this caller. */
    const mcpage_caller *caller;
} mcpage_http_page_req;

/* The page's answer, filled by mcpage_http_config.page. */
typedef struct mcpage_http_page {
    unsigned status;          /* HTTP status; 0 = 200 */
    const char *content_type; /* e.g. "text/html; charset=utf-8" (kept until sent) */
    char *body;               /* the page's bytes, or NULL = empty */
    size_t len;               /* bytes of body */
    char *headers;            /* "Name: value\n" lines added to the answer, or NULL */
    void (*release)(void *p); /* frees body and headers once copied (e.g. free), or NULL */
} mcpage_http_page;

/*
 * OAuth 2.1 resource server (MCP authorization, revisions 2025-11-25 and
 * 2026-07-28; docs/http.md, "Authorization"). With it, /mcp (and the
 * pages beside it) need an access token from `issuer`: a JWT signed with
 * RS256, ES256 or EdDSA by a key of the issuer's JWKS, whose iss is the
 * issuer, whose aud holds `resource` (RFC 8707), inside its exp/nbf
 * window (give or take leeway_s), with the scopes asked for below.
 *  - GET /.well-known/oauth-protected-resource (and the same followed by
 *    the resource's path, RFC 9728) serves the resource's metadata;
 *  - a request without a valid token is 401 with WWW-Authenticate:
 *    Bearer resource_metadata="..." (and error="invalid_token" when it
 *    had one); a token without a scope asked for is 403 with
 *    error="insufficient_scope" and the scope it needs;
 *  - the token stops here: nothing of it is passed to tools or to any
 *    other server.
 * The keys: from `jwks` (a file, re-read when it changes, or an http(s)
 * URL), or else from the jwks_uri of the issuer's metadata (RFC 8414,
 * then OpenID discovery); fetched ones are kept as their Cache-Control
 * says (between 1 minute and 1 day) and fetched again, at most every 10
 * seconds, when a token names a kid the set lacks (key rotation).
 * A static auth_token, when set too, still opens everything (one user).
 */
typedef struct mcpage_http_oauth {
    const char *issuer;   /* required: the authorization server's issuer identifier, an https
                             URL (http only on loopback) */
    const char *jwks;     /* the issuer's keys: a JWKS file or an http(s) URL; NULL = the
                             jwks_uri of the issuer's metadata */
    const char *resource; /* this server's resource identifier, the audience its tokens name;
                             NULL = http://HOST:PORT/mcp as bound */
    const char *scope;    /* scopes (space-separated) every request needs, or NULL */
    /* NULL-terminated "TOOL=SCOPES" entries: the scopes a tools/call of TOOL needs besides
       `scope`; "*=SCOPES" for the tools not listed. NULL = none. */
    const char *const *tool_scopes;
    unsigned leeway_s; /* clock skew allowed on exp, nbf and iat (default 60, at most 300) */
    unsigned
        fetch_timeout_s; /* fetching the metadata or the keys gives up after this (default 5) */
} mcpage_http_oauth;

/* Fills `o` with the defaults above (issuer still to set). */
MCPAGE_API void mcpage_http_oauth_init(mcpage_http_oauth *o);

typedef struct mcpage_http_config {
    const char *host;                 /* numeric IPv4/IPv6 address to bind; default "127.0.0.1" */
    uint16_t port;                    /* 0 = any free port (mcpage_http_port() tells which) */
    const char *const *allow_origins; /* NULL-terminated Origin values also allowed ("*" = any) */
    const char *auth_token;        /* bearer token every request must carry (16 characters at least,
                                      else MCPAGE_EINVAL at start), or NULL; a client's failed
                                      tokens are throttled (429 with Retry-After) */
    size_t max_body;               /* largest POST body in bytes; 0 = the server's max_message */
    unsigned max_connections;      /* open TCP connections (default 2048) */
    unsigned max_sessions;         /* live sessions; one more initialize gets 503 (default 1024) */
    unsigned session_idle_s;       /* a session idle this long leaves memory (default 1800) */
    unsigned session_max_age_s;    /* a session id older than this is refused; 0 = never
                                      (default 86400) */
    unsigned connection_timeout_s; /* a connection silent this long is closed (default 60) */
    unsigned heartbeat_ms;         /* SSE comment heartbeat period (default 15000) */
    unsigned retry_ms;             /* SSE retry field: client reconnect delay (default 1000) */
    unsigned threads;              /* libmicrohttpd polling threads (default 2) */
    size_t stream_buffer; /* bytes of events kept per stream for replay (default 256 KiB) */
    bool verbose;         /* one line on stderr per session start and end */
    /*
     * GET /health asks this (from a libmicrohttpd thread): 0 when the
     * server can serve, else non-zero with a sentence in `why`, and the
     * probe gets 503. NULL = always healthy.
     */
    int (*health)(void *ud, char *why, size_t cap);
    void *health_ud;            /* passed to health */
    mcpage_http_ended ended;    /* sessions ended on any instance; zeroed = this one only */
    size_t max_buffered;        /* bytes of request bodies held across all connections at once
                                   (default 64 MiB, raised to max_body); past it 503 */
    unsigned body_timeout_s;    /* a POST body must arrive within this many seconds of its
                                   headers, else the connection is closed (default 30) */
    unsigned request_timeout_s; /* a POSTed request unanswered this long is cancelled and
                                   answered with an error (default 300; 0 = never) */
    /*
     * Optional pages beside /mcp (mcpage serve's browser view): a GET or
     * HEAD to another path is answered by `page` (called on a worker of
     * the server's pool, like a tool call, while the connection waits
     * without holding a polling thread) after the Host and Origin checks and the
     * bearer token, which a browser may also carry in the HttpOnly cookie
     * set by visiting any page with ?token=TOKEN once. Every answer gets
     * nosniff, no-referrer, no framing and no-store headers, and a
     * Content-Security-Policy of default-src 'none' unless `page` sends
     * its own. Return 0, or non-zero for a 500. NULL: other paths are 404.
     */
    int (*page)(void *ud, const mcpage_http_page_req *req, mcpage_http_page *out);
    void *page_ud;                  /* passed to page */
    const mcpage_http_oauth *oauth; /* OAuth resource server (copied at start), or NULL */
} mcpage_http_config;

/* Fills `cfg` with the defaults above. */
MCPAGE_API void mcpage_http_config_init(mcpage_http_config *cfg);

/*
 * Starts serving `srv` (borrowed: it must outlive the endpoint). The
 * configuration is copied. MCPAGE_EINVAL for a bad configuration (an
 * address that is not numeric, a token that is empty), MCPAGE_EIO when
 * the address cannot be bound.
 */
MCPAGE_API int mcpage_http_start(mcpage_server *srv, const mcpage_http_config *cfg,
                                 mcpage_http **out);
/* The port actually bound. */
MCPAGE_API uint16_t mcpage_http_port(const mcpage_http *h);
/* Live sessions right now. */
MCPAGE_API size_t mcpage_http_session_count(mcpage_http *h);
/*
 * Stops accepting, closes every stream, cancels running calls (waiting
 * up to `grace_ms` for them), ends every session, lets the answers this
 * ends go out (up to 500 ms more, for clients that read nothing) and
 * frees `h`. A request left unanswered gets 503 "the server is stopping".
 */
MCPAGE_API void mcpage_http_stop(mcpage_http *h, int grace_ms);

/*
 * Serves until SIGTERM or SIGINT (blocked in the calling thread and taken
 * through a signalfd), then stops with a 500 ms grace period. Prints
 * "mcpage: listening on http://HOST:PORT/mcp" on stderr once bound.
 */
MCPAGE_API int mcpage_serve_http(mcpage_server *srv, const mcpage_http_config *cfg);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_HTTP_H */
