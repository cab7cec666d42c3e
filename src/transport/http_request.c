/*
 * One HTTP request to /mcp, before it reaches a session: the header
 * checks (Host against DNS rebinding, Origin, the bearer token, media
 * types, the protocol version), the POST body and its limit, the body
 * parsed once into a JSON-RPC message whose envelope is checked here
 * (in the runtime's words), and the error answers, each a JSON-RPC error
 * body whose message says what to fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "mcp/jsonin.h"
#include "page/alloc.h"
#include "page/jw.h"
#include "transport/http_internal.h"
#include "transport/jwt.h"

/* ------------------------------------------------------------ answers */

void http_add_cors(struct MHD_Connection *c, struct MHD_Response *r)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) {
        MHD_add_response_header(r, "Access-Control-Allow-Origin", origin);
        MHD_add_response_header(r, "Access-Control-Expose-Headers", "Mcp-Session-Id");
        MHD_add_response_header(r, "Vary", "Origin");
    }
}

/* http_queue with Retry-After: `retry_after` seconds (0: the default for 503 and 429). */
static enum MHD_Result queue_retry(struct MHD_Connection *c, unsigned status, const char *ctype,
                                   const char *body, size_t len, const char *sid,
                                   unsigned retry_after)
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
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status == MHD_HTTP_TOO_MANY_REQUESTS) {
        char secs[16];
        (void)snprintf(secs, sizeof secs, "%u", retry_after ? retry_after : 5);
        MHD_add_response_header(r, "Retry-After", secs);
    }
    if (status != MHD_HTTP_FORBIDDEN) /* a refused Origin gets no CORS grant */
        http_add_cors(c, r);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

enum MHD_Result http_queue(struct MHD_Connection *c, unsigned status, const char *ctype,
                           const char *body, size_t len, const char *sid)
{
    return queue_retry(c, status, ctype, body, len, sid, 0);
}

/* The JSON-RPC error body of a refusal made before any request is read (id null). */
static void rpc_error_body(jw *w, int code, const char *message)
{
    jw_init(w, 4096);
    jw_object_begin(w);
    jw_kv_string(w, "jsonrpc", "2.0");
    jw_key(w, "id");
    jw_null(w);
    jw_key(w, "error");
    jw_object_begin(w);
    jw_kv_int(w, "code", code);
    jw_kv_string(w, "message", message);
    jw_object_end(w);
    jw_object_end(w);
}

/* A JSON-RPC error body (id null) with `status`, and Retry-After when it is 429 or 503. */
static enum MHD_Result fail_retry(struct MHD_Connection *c, unsigned status, int code,
                                  const char *message, unsigned retry_after)
{
    jw w;
    rpc_error_body(&w, code, message);
    enum MHD_Result ok = queue_retry(c, status, "application/json", w.err ? "" : w.buf,
                                     w.err ? 0 : w.len, NULL, retry_after);
    jw_free(&w);
    return ok;
}

enum MHD_Result http_fail(struct MHD_Connection *c, unsigned status, int code, const char *message)
{
    return fail_retry(c, status, code, message, 0);
}

enum MHD_Result http_preflight(struct MHD_Connection *c)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    http_add_cors(c, r);
    MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE");
    MHD_add_response_header(r, "Access-Control-Allow-Headers",
                            "Content-Type, Accept, Authorization, Mcp-Session-Id, "
                            "MCP-Protocol-Version, Last-Event-ID");
    MHD_add_response_header(r, "Allow", "GET, POST, DELETE");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
    MHD_destroy_response(r);
    return ok;
}

/* ------------------------------------------------------------ header checks */

/* True when the comma-separated Accept value admits `type` ("text/event-stream"). */
bool http_accepts(const char *accept, const char *type)
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

/* The address we are bound to, as a Host names it ("127.0.0.2", "[::1]"). */
static bool bound_name(const mcpage_http *h, const char *name, size_t n)
{
    size_t b = strlen(h->host);
    if (name[0] == '[')
        return n == b + 2 && strncasecmp(name + 1, h->host, b) == 0 && name[n - 1] == ']';
    return n == b && strncasecmp(name, h->host, b) == 0;
}

/* DNS rebinding: bound to loopback, the Host must name loopback (or our address) and our port. */
static bool host_ok(const mcpage_http *h, const char *host)
{
    if (!h->loopback)
        return true;
    if (host == NULL)
        return false;
    long port;
    size_t n = split_host(host, &port);
    return n > 0 && (loopback_name(host, n) || bound_name(h, host, n)) &&
           (port < 0 || port == h->port);
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
    return n > 0 && (loopback_name(rest, n) || bound_name(h, rest, n));
}

bool http_token_matches(const mcpage_http *h, const char *tok)
{
    /* Hash both sides so the comparison takes the same time whatever the length. */
    uint8_t got[SHA256_LEN];
    sha256(tok, strlen(tok), got);
    return mcpage__bytes_equal(got, h->token_hash, sizeof got);
}

bool http_auth_header_ok(const mcpage_http *h, const char *authz)
{
    if (!h->auth)
        return true;
    if (authz == NULL || strncasecmp(authz, "Bearer ", 7) != 0)
        return false;
    const char *tok = authz + 7;
    while (*tok == ' ')
        tok++;
    return http_token_matches(h, tok);
}

/* Headers that must come once: libmicrohttpd's lookup returns the first, so a second must not
   slip by (Host: DNS rebinding; the MCP headers: a session, a version, a method). */
typedef struct single_headers {
    const char *seen[32]; /* names met so far among those that must be single */
    size_t nseen;         /* their count */
    const char *dup;      /* the first name met twice, or NULL */
} single_headers;

static bool must_be_single(const char *key)
{
    return strcasecmp(key, "Host") == 0 || strcasecmp(key, "Origin") == 0 ||
           strcasecmp(key, "Authorization") == 0 || strcasecmp(key, "Content-Type") == 0 ||
           strcasecmp(key, "Last-Event-ID") == 0 || strncasecmp(key, "Mcp-", 4) == 0;
}

static enum MHD_Result find_duplicate(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    (void)value;
    single_headers *sh = cls;
    if (key == NULL || sh->dup || !must_be_single(key))
        return MHD_YES;
    for (size_t i = 0; i < sh->nseen; i++) {
        if (strcasecmp(sh->seen[i], key) == 0) {
            sh->dup = key;
            return MHD_YES;
        }
    }
    if (sh->nseen < sizeof sh->seen / sizeof sh->seen[0])
        sh->seen[sh->nseen++] = key;
    else
        sh->dup = key; /* more than 32 such headers: no client sends that */
    return MHD_YES;
}

bool http_check_origin(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
    single_headers sh = {.nseen = 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, find_duplicate, &sh);
    if (sh.dup) {
        char msg[200];
        (void)snprintf(msg, sizeof msg, "Bad Request: more than one %.40s header; send exactly one",
                       sh.dup);
        *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, msg);
        return false;
    }
    if (!origin_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))) {
        *ret = http_fail(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
                         "Forbidden: Origin not allowed; start the server with --allow-origin "
                         "ORIGIN to admit it");
        return false;
    }
    return true;
}

bool http_check_host(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
    if (host_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
        return true;
    *ret = http_fail(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
                     "Forbidden: the Host header must name this loopback server "
                     "(localhost, 127.0.0.1 or [::1] with its port); DNS rebinding protection");
    return false;
}

/* The client's address as 16 bytes (IPv4 mapped); zeros when unknown (a socketpair). */
static void client_addr(struct MHD_Connection *c, uint8_t out[16])
{
    memset(out, 0, 16);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    }
}

/* The client's slot (h->auth_lock held), its failures leaked down to now; a new one if needed. */
static http_auth_client *auth_client(mcpage_http *h, const uint8_t addr[16], int64_t now)
{
    http_auth_client *slot = NULL;
    for (size_t i = 0; i < HTTP_AUTH_CLIENTS && slot == NULL; i++)
        if (h->auth_clients[i].used && memcmp(h->auth_clients[i].addr, addr, 16) == 0)
            slot = &h->auth_clients[i];
    if (slot == NULL) { /* past HTTP_AUTH_CLIENTS, the oldest newcomer's slot is reused */
        slot = &h->auth_clients[h->auth_next];
        h->auth_next = (h->auth_next + 1) % HTTP_AUTH_CLIENTS;
        memset(slot, 0, sizeof *slot);
        memcpy(slot->addr, addr, 16);
        slot->used = true;
        slot->at_ms = now;
    }
    double leaked = (double)(now - slot->at_ms) / (1000.0 * HTTP_AUTH_DECAY_S);
    slot->fails = slot->fails > leaked ? slot->fails - leaked : 0;
    slot->at_ms = now;
    return slot;
}

unsigned http_auth_wait(mcpage_http *h, struct MHD_Connection *c, bool failed)
{
    uint8_t addr[16];
    client_addr(c, addr);
    int64_t now = http_now_ms();
    pthread_mutex_lock(&h->auth_lock);
    http_auth_client *cl = auth_client(h, addr, now);
    unsigned wait = 0;
    double over = cl->fails - (HTTP_AUTH_BURST - 1); /* > 0: its burst is spent */
    if (over > 0)                                    /* wait until one failure has leaked away */
        wait = (unsigned)(over * HTTP_AUTH_DECAY_S + 0.999);
    else if (failed)
        cl->fails += 1;
    pthread_mutex_unlock(&h->auth_lock);
    return wait;
}

enum MHD_Result http_fail_throttled(struct MHD_Connection *c, unsigned wait)
{
    char msg[200];
    (void)snprintf(msg, sizeof msg,
                   "Too Many Requests: too many failed authentications from this address; "
                   "retry in %u s with the server's token",
                   wait);
    return fail_retry(c, MHD_HTTP_TOO_MANY_REQUESTS, RPC_INVALID_REQUEST, msg, wait);
}

/* A refusal of credentials: `status` with the WWW-Authenticate challenge and a JSON-RPC body. */
static enum MHD_Result fail_challenge(struct MHD_Connection *c, unsigned status,
                                      const char *challenge, const char *message)
{
    jw w;
    rpc_error_body(&w, RPC_INVALID_REQUEST, message);
    enum MHD_Result ok = MHD_NO;
    struct MHD_Response *r =
        w.err ? NULL : MHD_create_response_from_buffer(w.len, (void *)w.buf, MHD_RESPMEM_MUST_COPY);
    if (r) {
        MHD_add_response_header(r, "Content-Type", "application/json");
        if (challenge)
            MHD_add_response_header(r, "WWW-Authenticate", challenge);
        if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
            MHD_add_response_header(r, "Retry-After", "5");
        http_add_cors(c, r);
        MHD_add_response_header(r, "Access-Control-Expose-Headers",
                                "Mcp-Session-Id, WWW-Authenticate");
        ok = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
    }
    jw_free(&w);
    return ok;
}

/* An OAuth refusal: the verdict's status, challenge and message. */
static enum MHD_Result fail_oauth(mcpage_http *h, struct MHD_Connection *c, oauth_verdict v,
                                  const char *why, const char *need)
{
    char msg[700];
    unsigned status = MHD_HTTP_UNAUTHORIZED;
    char *challenge = NULL;
    switch (v) {
    case OAUTH_NO_TOKEN:
        (void)snprintf(msg, sizeof msg, "Unauthorized: %s", why);
        challenge = http_oauth_challenge(h->oauth, NULL, NULL, http_oauth_base_scope(h->oauth));
        break;
    case OAUTH_BAD_TOKEN:
        (void)snprintf(msg, sizeof msg, "Unauthorized: invalid access token: %s", why);
        challenge = http_oauth_challenge(h->oauth, "invalid_token", why, NULL);
        break;
    case OAUTH_SCOPE:
        status = MHD_HTTP_FORBIDDEN;
        (void)snprintf(msg, sizeof msg,
                       "Forbidden: insufficient_scope: %s; ask the authorization server for a "
                       "token with scope \"%.200s\"",
                       why, need);
        challenge = http_oauth_challenge(h->oauth, "insufficient_scope", why, need);
        break;
    case OAUTH_UNAVAILABLE:
    case OAUTH_PASS:
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
        (void)snprintf(msg, sizeof msg, "Service Unavailable: %s", why);
        break;
    }
    enum MHD_Result ret = fail_challenge(c, status, challenge, msg);
    mcpage__free(challenge);
    return ret;
}

bool http_check_auth(mcpage_http *h, struct MHD_Connection *c, http_req *rq, enum MHD_Result *ret)
{
    if (!h->auth && h->oauth == NULL)
        return true;
    /* A throttled client is refused before its token is compared: the answer must not tell
       a right guess from a wrong one. */
    unsigned wait = http_auth_wait(h, c, false);
    if (wait) {
        *ret = http_fail_throttled(c, wait);
        return false;
    }
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (h->auth && authz && http_auth_header_ok(h, authz)) {
        rq->who.all = true; /* the static token: its one user may do anything */
        return true;
    }
    if (h->oauth == NULL) {
        (void)http_auth_wait(h, c, true);
        *ret = http_fail(c, MHD_HTTP_UNAUTHORIZED, RPC_INVALID_REQUEST,
                         "Unauthorized: send Authorization: Bearer TOKEN with the server's token");
        return false;
    }
    char why[600] = "";
    oauth_verdict v = http_oauth_check(h->oauth, authz, &rq->who, why, sizeof why);
    if (v == OAUTH_PASS)
        return true;
    if (v == OAUTH_BAD_TOKEN || (v == OAUTH_NO_TOKEN && authz))
        (void)http_auth_wait(h, c, true);
    *ret = fail_oauth(h, c, v, why, http_oauth_base_scope(h->oauth));
    return false;
}

bool http_check_tool_scope(mcpage_http *h, struct MHD_Connection *c, const http_req *rq,
                           const char *tool, enum MHD_Result *ret)
{
    if (h->oauth == NULL || rq->who.all || tool == NULL)
        return true;
    const char *need = http_oauth_tool_scope(h->oauth, tool);
    if (need == NULL || jwt_scopes_cover(rq->who.scopes, need))
        return true;
    char why[300];
    (void)snprintf(why, sizeof why, "the tool %.64s needs the scope %.150s", tool, need);
    *ret = fail_oauth(h, c, OAUTH_SCOPE, why, need);
    return false;
}

enum MHD_Result http_oauth_metadata_answer(mcpage_http *h, struct MHD_Connection *c,
                                           const char *method)
{
    if (strcmp(method, "OPTIONS") == 0) {
        struct MHD_Response *r =
            MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (r == NULL)
            return MHD_NO;
        MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
        MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET");
        MHD_add_response_header(r, "Access-Control-Allow-Headers", "MCP-Protocol-Version");
        enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
        MHD_destroy_response(r);
        return ok;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return http_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
                         "Method Not Allowed: the resource metadata takes GET");
    size_t len;
    const char *doc = http_oauth_metadata(h->oauth, &len);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)doc, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Cache-Control", "max-age=3600");
    /* Public by design (RFC 9728): browser clients on any origin read it. */
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

bool http_check_version(struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *pv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (pv == NULL || mcpage_protocol_supported(pv))
        return true;
    char msg[200];
    (void)snprintf(msg, sizeof msg,
                   "Bad Request: unsupported MCP-Protocol-Version '%.40s'; this server speaks %s, "
                   "2025-06-18 and 2025-03-26",
                   pv, mcpage_protocol_latest());
    *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, msg);
    return false;
}

enum MHD_Result http_fail_too_big(const mcpage_http *h, struct MHD_Connection *c)
{
    char msg[160];
    (void)snprintf(msg, sizeof msg, "Content Too Large: the body limit is %zu bytes", h->max_body);
    return http_fail(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST, msg);
}

/* The media type is application/json, maybe with parameters (";charset=utf-8"). */
static bool json_media_type(const char *ctype)
{
    if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0)
        return false;
    const char *p = ctype + 16;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\0' || *p == ';';
}

bool http_check_post_headers(const mcpage_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    if (!json_media_type(ctype)) {
        *ret = http_fail(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_REQUEST,
                         "Unsupported Media Type: POST a JSON-RPC message with Content-Type: "
                         "application/json");
        return false;
    }
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    if (!http_accepts(accept, "application/json") && !http_accepts(accept, "text/event-stream")) {
        *ret = http_fail(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
                         "Not Acceptable: the client must accept application/json and "
                         "text/event-stream");
        return false;
    }
    const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (clen && strtoull(clen, NULL, 10) > h->max_body) {
        *ret = http_fail_too_big(h, c);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ the body */

/* Reserves n bytes of the budget all connections share; false when it has no room. */
static bool budget_take(mcpage_http *h, size_t n)
{
    size_t cur = atomic_load(&h->buffered);
    do {
        if (cur > h->cfg.max_buffered || n > h->cfg.max_buffered - cur)
            return false;
    } while (!atomic_compare_exchange_weak(&h->buffered, &cur, cur + n));
    return true;
}

/* The connection closes when silent until the body's deadline (or its own timeout, if sooner). */
static void body_timer(const mcpage_http *h, struct MHD_Connection *c, const http_req *rq,
                       int64_t now)
{
    int64_t left_s = (rq->body_deadline - now + 999) / 1000;
    unsigned secs = left_s < 1 ? 1u : (unsigned)left_s;
    if (h->cfg.connection_timeout_s && h->cfg.connection_timeout_s < secs)
        secs = h->cfg.connection_timeout_s;
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, secs);
}

bool http_body_begin(mcpage_http *h, struct MHD_Connection *c, http_req *rq, enum MHD_Result *ret)
{
    const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    size_t declared = clen ? (size_t)strtoull(clen, NULL, 10) : 0; /* at most max_body here */
    if (declared > 0 && !budget_take(h, declared)) {
        char msg[200];
        (void)snprintf(msg, sizeof msg,
                       "Service Unavailable: the server holds its maximum of request bodies "
                       "being received (%zu bytes); retry later",
                       h->cfg.max_buffered);
        *ret = http_fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, HTTP_RPC_TRANSPORT, msg);
        return false;
    }
    rq->reserved = declared;
    int64_t now = http_now_ms();
    rq->body_deadline = now + (int64_t)h->cfg.body_timeout_s * 1000;
    body_timer(h, c, rq, now);
    return true;
}

bool http_body_append(mcpage_http *h, struct MHD_Connection *c, http_req *rq, const char *data,
                      size_t n)
{
    int64_t now = http_now_ms();
    if (now >= rq->body_deadline)
        return false; /* a trickling body: close the connection */
    body_timer(h, c, rq, now);
    if (rq->too_big || n > h->max_body - rq->len) {
        rq->too_big = true; /* discard the rest, answer 413 at the end */
        return true;
    }
    if (rq->len + n > rq->cap) {
        /* A declared length was reserved whole: allocate it at once (pages fill as bytes come). */
        size_t cap = rq->reserved >= rq->len + n ? rq->reserved : (rq->cap ? rq->cap : 4096);
        while (cap < rq->len + n)
            cap *= 2;
        if (cap > h->max_body)
            cap = h->max_body;
        if (cap > rq->reserved) {
            if (!budget_take(h, cap - rq->reserved))
                return false; /* a chunked body past the budget: refused */
            rq->reserved = cap;
        }
        char *b = mcpage__realloc(rq->body, cap);
        if (b == NULL)
            return false;
        rq->body = b;
        rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, n);
    rq->len += n;
    return true;
}

void http_body_end(const mcpage_http *h, struct MHD_Connection *c)
{
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, h->cfg.connection_timeout_s);
}

void http_body_release(mcpage_http *h, http_req *rq)
{
    mcpage__free(rq->body);
    rq->body = NULL;
    rq->len = rq->cap = 0;
    atomic_fetch_sub(&h->buffered, rq->reserved);
    rq->reserved = 0;
}

/* ------------------------------------------------------------ the message */

char *http_id_text(const json_t *id)
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

/*
 * The envelope: what the transport must know before a message reaches a
 * session (its kind, method and id). The sentences are the runtime's own
 * (session.c), so a client reads the same words on stdio and HTTP.
 */
static const char *envelope_check(http_message *m)
{
    const json_t *v = m->v;
    if (json_is_array(v))
        return "Invalid Request: JSON-RPC batches are not supported (MCP removed batching in "
               "revision 2025-06-18); send one message at a time";
    if (!json_is_object(v))
        return "Invalid Request: a message must be a JSON object";
    const json_t *jsonrpc = json_object_get(v, "jsonrpc");
    if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0)
        return "Invalid Request: \"jsonrpc\" must be the string \"2.0\"";
    const json_t *method = json_object_get(v, "method");
    const json_t *id = json_object_get(v, "id");
    if (method == NULL) {
        if (id == NULL || !(json_object_get(v, "result") || json_object_get(v, "error")))
            return "Invalid Request: a message needs a \"method\" (request or notification) or "
                   "a \"result\"/\"error\" (response)";
        m->response = true;
        m->id = id;
        return NULL;
    }
    if (!json_is_string(method))
        return "Invalid Request: \"method\" must be a string";
    m->method = json_string_value(method);
    m->request = id != NULL;
    m->notification = id == NULL;
    m->id = id;
    return NULL;
}

bool http_message_parse(const mcpage_http *h, struct MHD_Connection *c, const http_req *rq,
                        http_message *m, enum MHD_Result *ret)
{
    memset(m, 0, sizeof *m);
    char why[256];
    char msg[320];
    switch (jsonin_parse(rq->body ? rq->body : "", rq->len, h->max_body, h->srv->cfg.max_depth,
                         &m->v, why, sizeof why)) {
    case JSONIN_OK:
        break;
    case JSONIN_SYNTAX:
        (void)snprintf(msg, sizeof msg, "Parse error: %s", why);
        *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_PARSE_ERROR, msg);
        return false;
    case JSONIN_TOO_LARGE:
    case JSONIN_TOO_DEEP:
        (void)snprintf(msg, sizeof msg, "Invalid Request: %s", why);
        *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, msg);
        return false;
    }
    const char *bad = envelope_check(m);
    if (bad) {
        *ret = http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, bad);
        http_message_clear(m);
        return false;
    }
    return true;
}

void http_message_clear(http_message *m)
{
    json_decref(m->v);
    memset(m, 0, sizeof *m);
}
