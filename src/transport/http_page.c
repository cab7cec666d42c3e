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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

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

static const char *page_arg(const mcpage_http_page_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* The cookie's value: hex SHA-256 of a label and the token's hash. */
static void cookie_value(const mcpage_http *h, char out[2 * SHA256_DIGEST_LENGTH + 1])
{
    static const char label[] = "mcpage browser view cookie v1";
    uint8_t buf[sizeof label + SHA256_DIGEST_LENGTH], d[SHA256_DIGEST_LENGTH];
    memcpy(buf, label, sizeof label);
    memcpy(buf + sizeof label, h->token_hash, SHA256_DIGEST_LENGTH);
    SHA256(buf, sizeof buf, d);
    for (size_t i = 0; i < sizeof d; i++)
        (void)snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static bool cookie_ok(const mcpage_http *h, struct MHD_Connection *c)
{
    const char *got = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, PAGE_COOKIE);
    char want[2 * SHA256_DIGEST_LENGTH + 1];
    cookie_value(h, want);
    return got && strlen(got) == strlen(want) && CRYPTO_memcmp(got, want, strlen(want)) == 0;
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
static bool page_auth(mcpage_http *h, struct MHD_Connection *c, const char *url,
                      enum MHD_Result *ret)
{
    if (!h->auth)
        return true;
    const char *tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (tok && http_token_matches(h, tok)) {
        char value[2 * SHA256_DIGEST_LENGTH + 1], headers[600];
        cookie_value(h, value);
        /* back to the same path, without the token in the address */
        (void)snprintf(headers, sizeof headers,
                       "Set-Cookie: " PAGE_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict\n"
                       "Location: %s\n",
                       value, url[0] == '/' && url[1] != '/' && !strpbrk(url, "\r\n") ? url : "/");
        *ret = page_queue(c, MHD_HTTP_SEE_OTHER, "text/plain", "", 0, headers);
        return false;
    }
    if (tok == NULL &&
        (cookie_ok(h, c) ||
         http_auth_header_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))))
        return true;
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

enum MHD_Result http_page(mcpage_http *h, struct MHD_Connection *c, const char *url,
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
    if (!page_auth(h, c, url, &ret))
        return ret;
    mcpage_http_page_req req = {.method = method, .path = url, .arg = page_arg, .conn = c};
    mcpage_http_page out;
    memset(&out, 0, sizeof out);
    int rc = h->cfg.page(h->cfg.page_ud, &req, &out);
    if (rc != 0) {
        page_release(&out);
        return page_queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                          "Internal Server Error\n", strlen("Internal Server Error\n"), NULL);
    }
    ret = page_queue(c, out.status ? out.status : MHD_HTTP_OK, out.content_type,
                     out.body ? out.body : "", out.body ? out.len : 0, out.headers);
    page_release(&out); /* libmicrohttpd copied the body */
    return ret;
}
