/*
 * Pages beside /mcp (mcpage_http_config.page): what the transport does
 * for them before and after the embedder's handler. The same Host check
 * as /mcp (the Origin check ran for every path already); GET and HEAD
 * only (another method is 404, as any path but /mcp was before pages);
 * the same bearer token, which a browser cannot send as a header:
 * visiting any page with ?token=TOKEN once checks it and answers 303 to
 * the same path with an HttpOnly, SameSite=Strict cookie holding a value
 * derived from the token (never the token), accepted from then on.
 * Every answer carries nosniff, no-referrer, no framing and no-store,
 * and a Content-Security-Policy (default-src 'none' unless the handler
 * sends its own).
 *
 * The checks run on the polling thread; the handler does not. Like a
 * POST waiting for its answer, the connection is suspended and the page
 * is rendered on a worker of the server's pool (mcp_server_run), which
 * resumes the connection when done; libmicrohttpd then calls on_request
 * again and http_page_finish sends the page. So a slow page (a broad
 * relevance search) holds a worker, never a polling thread, and the
 * other connections of that thread go on. The handler gets a copy of
 * the path and the query arguments: it never touches the connection.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/invariant.h"
#include "transport/http_internal.h"

/* The cookie's name. */
#define PAGE_COOKIE "mcpage_ui"
/* Longest header line a handler may add. */
#define PAGE_HEADER_MAX 4096

static const char default_csp[] =
    "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

static const char login_page[] =
    "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
    "content=\"width=device-width, initial-scale=1\"><title>Token needed</title></head><body>"
    "<h1>This server needs its token</h1><p>Open this address once with <code>?token=TOKEN"
    "</code> added (TOKEN is the first line of the server's <code>--auth-token-file</code>). "
    "The browser then keeps an HttpOnly cookie for this server and the token leaves the "
    "address bar.</p><p>Programs send <code>Authorization: Bearer TOKEN</code> instead.</p>"
    "</body></html>";

/* A page handed to a worker; shared by the connection and the worker until both let go. */
struct http_page_job {
    http_page_job *next;      /* h->pages link */
    mcpage_http *h;           /* the endpoint */
    struct MHD_Connection *c; /* the connection waiting for the page */
    mcpage_http_page_req req; /* what the handler reads (req.conn points at this job) */
    char *path;               /* a copy of the path */
    json_t *args;             /* copies of the query arguments, the first of each name */
    mcpage_http_page out;     /* the handler's answer */
    oauth_principal who;      /* an OAuth token's principal (req.caller points at caller) */
    mcpage_caller caller;
    int rc;         /* the handler's status */
    bool done;      /* the handler returned (h->lock) */
    bool suspended; /* c is suspended until done (h->lock) */
    bool abandoned; /* the endpoint stops: no rendering, the connection answered */
    int refs;       /* the connection's and the worker's (h->lock) */
};

static const char *page_arg(const mcpage_http_page_req *req, const char *name)
{
    const http_page_job *job = req->conn;
    return json_string_value(json_object_get(job->args, name));
}

/* Copies one query argument (libmicrohttpd decoded it); the first of a name wins, as lookup. */
static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    json_t *args = cls;
    if (key && value && json_object_get(args, key) == NULL)
        json_object_set_new(args, key, json_stringn_nocheck(value, strlen(value)));
    return MHD_YES;
}

/* The cookie's value: hex SHA-256 of a label and the token's hash. */
static void cookie_value(const mcpage_http *h, char out[2 * SHA256_LEN + 1])
{
    static const char label[] = "mcpage browser view cookie v1";
    uint8_t buf[sizeof label + SHA256_LEN], d[SHA256_LEN];
    memcpy(buf, label, sizeof label);
    memcpy(buf + sizeof label, h->token_hash, SHA256_LEN);
    sha256(buf, sizeof buf, d);
    hex_encode(d, sizeof d, out);
}

static bool cookie_ok(const mcpage_http *h, struct MHD_Connection *c)
{
    const char *got = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, PAGE_COOKIE);
    char want[2 * SHA256_LEN + 1];
    cookie_value(h, want);
    return got && strlen(got) == strlen(want) && mcpage__bytes_equal(got, want, strlen(want));
}

/* Adds the handler's "Name: value\n" lines; false for a malformed one. */
static bool add_headers(struct MHD_Response *r, const char *lines, bool *csp)
{
    for (const char *p = lines; p && *p;) {
        size_t n = strcspn(p, "\n");
        const char *colon = memchr(p, ':', n);
        if (colon == NULL || colon == p || n >= PAGE_HEADER_MAX || memchr(p, '\r', n))
            return false;
        char line[PAGE_HEADER_MAX];
        memcpy(line, p, n);
        line[n] = '\0';
        line[colon - p] = '\0';
        const char *value = line + (colon - p) + 1;
        while (*value == ' ')
            value++;
        if (strcasecmp(line, "Content-Security-Policy") == 0)
            *csp = true;
        if (MHD_add_response_header(r, line, value) != MHD_YES)
            return false;
        p += n + (p[n] == '\n');
    }
    return true;
}

/* Queues a page answer with the security headers every page gets. */
static enum MHD_Result page_queue(struct MHD_Connection *c, unsigned status, const char *ctype,
                                  const char *body, size_t len, const char *headers)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    bool csp = false;
    if (!add_headers(r, headers, &csp)) {
        MHD_destroy_response(r);
        return http_fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
                         "Internal Server Error: the page's headers are malformed");
    }
    if (ctype)
        MHD_add_response_header(r, "Content-Type", ctype);
    if (!csp)
        MHD_add_response_header(r, "Content-Security-Policy", default_csp);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"mcp\"");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/*
 * The token for a page: the header, the cookie, or ?token= (then a 303
 * that sets the cookie). True when the handler may run; else *ret holds
 * the answer.
 */
/*
 * Where a login sends the browser back: the same path, as a relative
 * reference on this origin. libmicrohttpd hands us the path decoded, so
 * it is encoded again (every byte but unreserved characters and '/'):
 * "/%5C127.0.0.1:8080" decodes to "/\127.0.0.1:8080", which a browser
 * reads as "//127.0.0.1:8080", another origin. A path that would still
 * start with "//" is "/".
 */
static void login_location(const char *url, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)url; *p && o + 4 < cap; p++) {
        unsigned char ch = *p;
        bool plain = ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') || (ch >= '0' && ch <= '9') ||
                     ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/';
        if (plain) {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    if (out[0] != '/' || out[1] == '/' || o + 4 >= cap)
        (void)snprintf(out, cap, "/");
}

static bool page_auth(mcpage_http *h, struct MHD_Connection *c, const char *url,
                      oauth_principal *who, enum MHD_Result *ret)
{
    if (!h->auth && h->oauth == NULL)
        return true;
    unsigned wait = http_auth_wait(h, c, false);
    if (wait) { /* before any comparison: a throttled guess learns nothing */
        *ret = http_fail_throttled(c, wait);
        return false;
    }
    const char *tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (h->oauth && tok == NULL && authz) { /* an OAuth client reading pages: its token */
        char why[600];
        if (http_oauth_check(h->oauth, authz, who, why, sizeof why) == OAUTH_PASS)
            return true; /* the page reads as its principal (req.caller) */
    }
    if (h->auth && tok && http_token_matches(h, tok)) {
        char value[2 * SHA256_LEN + 1], where[1200], headers[1400];
        cookie_value(h, value);
        login_location(url, where, sizeof where);
        /* back to the same path, without the token in the address */
        (void)snprintf(headers, sizeof headers,
                       "Set-Cookie: " PAGE_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict\n"
                       "Location: %s\n",
                       value, where);
        *ret = page_queue(c, MHD_HTTP_SEE_OTHER, "text/plain", "", 0, headers);
        return false;
    }
    if (h->auth && tok == NULL && (cookie_ok(h, c) || http_auth_header_ok(h, authz)))
        return true;
    if (tok || MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization") ||
        MHD_lookup_connection_value(c, MHD_COOKIE_KIND, PAGE_COOKIE))
        (void)http_auth_wait(h, c, true); /* a wrong token or cookie, not a first visit */
    *ret = page_queue(c, MHD_HTTP_UNAUTHORIZED, "text/html; charset=utf-8", login_page,
                      sizeof login_page - 1, NULL);
    return false;
}

/* The handler's buffers go back to it. */
static void page_release(mcpage_http_page *out)
{
    if (out->release) {
        out->release(out->body);
        out->release(out->headers);
    }
}

static void page_job_free(http_page_job *job)
{
    page_release(&job->out);
    oauth_principal_clear(&job->who);
    json_decref(job->args);
    mcpage__free(job->path);
    mcpage__free(job);
}

/* Drops one reference (h->lock held); true when it was the last: unlinked, free it. */
static bool page_job_unref(mcpage_http *h, http_page_job *job)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    if (--job->refs > 0)
        return false;
    for (http_page_job **p = &h->pages; *p; p = &(*p)->next) {
        if (*p == job) {
            *p = job->next;
            break;
        }
    }
    pthread_cond_broadcast(&h->cv); /* http_pages_wait */
    return true;
}

/* On a worker: renders the page, then wakes its connection. */
static void page_job_run(void *ud)
{
    http_page_job *job = ud;
    mcpage_http *h = job->h;
    pthread_mutex_lock(&h->lock);
    bool skip = job->abandoned;
    pthread_mutex_unlock(&h->lock);
    int rc = skip ? MCPAGE_ECANCELED : h->cfg.page(h->cfg.page_ud, &job->req, &job->out);
    pthread_mutex_lock(&h->lock);
    job->rc = rc;
    job->done = true;
    if (job->suspended) {
        job->suspended = false;
        MHD_resume_connection(job->c);
    }
    bool last = page_job_unref(h, job);
    pthread_mutex_unlock(&h->lock);
    if (last)
        page_job_free(job);
}

/* Sends a rendered page (or the error its handler returned). */
static enum MHD_Result page_answer(struct MHD_Connection *c, http_page_job *job)
{
    pthread_mutex_lock(&job->h->lock); /* the worker may still be rendering an abandoned page */
    bool done = job->done;
    pthread_mutex_unlock(&job->h->lock);
    if (!done)
        return page_queue(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                          "Service Unavailable: the server is stopping\n",
                          strlen("Service Unavailable: the server is stopping\n"), NULL);
    if (job->rc != 0)
        return page_queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                          "Internal Server Error\n", strlen("Internal Server Error\n"), NULL);
    const mcpage_http_page *out = &job->out;
    return page_queue(c, out->status ? out->status : MHD_HTTP_OK, out->content_type,
                      out->body ? out->body : "", out->body ? out->len : 0, out->headers);
}

/* A page job for the request: copies of what the handler reads; it takes
 * *who (cleared on failure too). */
static http_page_job *page_job_new(mcpage_http *h, struct MHD_Connection *c, const char *url,
                                   const char *method, oauth_principal *who)
{
    http_page_job *job = mcpage__calloc(1, sizeof *job);
    if (job == NULL) {
        oauth_principal_clear(who);
        return NULL;
    }
    job->who = *who;
    memset(who, 0, sizeof *who);
    job->h = h;
    job->c = c;
    job->path = mcpage__strdup(url);
    job->args = json_object();
    if (job->path == NULL || job->args == NULL) {
        page_job_free(job);
        return NULL;
    }
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, job->args);
    job->req.method = strcmp(method, "HEAD") == 0 ? "HEAD" : "GET";
    job->req.path = job->path;
    job->req.arg = page_arg;
    job->req.conn = job;
    if (job->who.subject || job->who.all) {
        job->caller = (mcpage_caller){.subject = job->who.subject,
                                      .scopes = job->who.scopes,
                                      .groups = job->who.groups,
                                      .all = job->who.all};
        job->req.caller = &job->caller;
    }
    return job;
}

enum MHD_Result http_page(mcpage_http *h, struct MHD_Connection *c, http_req *rq, const char *url,
                          const char *method)
{
    enum MHD_Result ret = MHD_NO;
    if (!http_check_host(h, c, &ret))
        return ret;
    /* Pages are read only: another method is what it was before pages, a 404 for /mcp's
       clients (a POST to a wrong path) */
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return http_fail(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
                         "Not Found: the MCP endpoint is /mcp (the pages beside it take GET)");
    oauth_principal who = {0};
    if (!page_auth(h, c, url, &who, &ret))
        return ret;
    http_page_job *job = page_job_new(h, c, url, method, &who);
    if (job == NULL)
        return page_queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                          "Internal Server Error\n", strlen("Internal Server Error\n"), NULL);
    pthread_mutex_lock(&h->lock);
    job->refs = 2; /* the connection's (http_page_release) and the worker's */
    job->next = h->pages;
    h->pages = job;
    bool stopping = job->abandoned = h->stopping; /* a keep-alive request while stopping */
    pthread_mutex_unlock(&h->lock);
    rq->page = job;
    if (stopping || mcp_server_run(h->srv, page_job_run, job) != 0) {
        pthread_mutex_lock(&h->lock);
        job->refs--;           /* no worker will hold it */
        job->done = !stopping; /* nothing renders it: stop need not wait for it */
        pthread_mutex_unlock(&h->lock);
        if (stopping) /* 503: the server is stopping */
            return page_answer(c, job);
        return page_queue(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                          "Service Unavailable: every worker is busy; retry in a moment\n",
                          strlen("Service Unavailable: every worker is busy; retry in a moment\n"),
                          "Retry-After: 1\n");
    }
    pthread_mutex_lock(&h->lock);
    /* Answered now when already rendered, or when stopping began (the daemon must not stop
       with a suspended connection); else page_job_run or http_pages_stop resumes it. */
    bool now = job->done || job->abandoned;
    if (!now) {
        job->suspended = true;
        MHD_suspend_connection(c);
    }
    pthread_mutex_unlock(&h->lock);
    return now ? page_answer(c, job) : MHD_YES;
}

enum MHD_Result http_page_finish(struct MHD_Connection *c, http_req *rq)
{
    return page_answer(c, rq->page);
}

void http_page_release(mcpage_http *h, http_req *rq)
{
    http_page_job *job = rq->page;
    if (job == NULL)
        return;
    rq->page = NULL;
    pthread_mutex_lock(&h->lock);
    bool last = page_job_unref(h, job);
    pthread_mutex_unlock(&h->lock);
    if (last)
        page_job_free(job);
}

void http_pages_stop(mcpage_http *h, int64_t deadline)
{
    pthread_mutex_lock(&h->lock);
    for (;;) {
        bool rendering = false;
        for (http_page_job *job = h->pages; job; job = job->next)
            rendering = rendering || !job->done;
        long left = (long)(deadline - http_now_ms());
        if (!rendering || left <= 0)
            break;
        (void)http_wait_tick(h, left < 50 ? left : 50);
    }
    for (http_page_job *job = h->pages; job; job = job->next) {
        job->abandoned = true; /* a handler not yet started will not start */
        if (job->suspended) {  /* answered 503 by page_answer */
            job->suspended = false;
            MHD_resume_connection(job->c);
        }
    }
    pthread_mutex_unlock(&h->lock);
}

void http_pages_wait(mcpage_http *h)
{
    pthread_mutex_lock(&h->lock);
    while (h->pages)
        pthread_cond_wait(&h->cv, &h->lock);
    pthread_mutex_unlock(&h->lock);
}
