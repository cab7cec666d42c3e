/*
 * The checker's Streamable HTTP transport (libcurl): every message is a
 * POST to the endpoint, answered with one JSON body or a text/event-stream
 * whose events carry the reply. Headers follow the era of the message:
 * 2026-07-28 requests carry MCP-Protocol-Version (from their _meta),
 * Mcp-Method and, for tools/call, prompts/get and resources/read,
 * Mcp-Name; 2025-11-25 requests carry the version initialize agreed and
 * the Mcp-Session-Id the server gave, which is DELETEd at the end. Bodies
 * are bounded by CHECK_MESSAGE_MAX and every request by the timeout.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mcpage/mcpage.h>

#include "check/check.h"
#include "check/check_curl.h"
#include "page/dbuf.h"

struct check_http {
    CURL *curl;               /* one handle, reused (keep-alive) */
    char *url;                /* the endpoint */
    struct curl_slist *extra; /* --header lines */
    char session[256];        /* Mcp-Session-Id (2025-11-25), or "" */
    char version[32];         /* the version initialize agreed, or "" */
};

/* The response headers the checker reads. */
typedef struct heads {
    char content_type[128]; /* Content-Type */
    char session[256];      /* Mcp-Session-Id */
} heads;

int check_http_start(const char *url, const char *const *headers, size_t n_headers,
                     check_http **out, char *why, size_t why_len)
{
    int rc = check_curl_load(why, why_len);
    if (rc < 0)
        return rc;
    check_http *h = calloc(1, sizeof *h);
    if (h == NULL)
        return MCPAGE_ENOMEM;
    h->curl = curl_easy_init();
    h->url = strdup(url);
    for (size_t i = 0; i < n_headers; i++) {
        struct curl_slist *l = curl_slist_append(h->extra, headers[i]);
        if (l == NULL)
            break;
        h->extra = l;
    }
    if (h->curl == NULL || h->url == NULL) {
        snprintf(why, why_len, "cannot start libcurl");
        check_http_stop(h);
        return MCPAGE_ENOMEM;
    }
    *out = h;
    return 0;
}

void check_http_stop(check_http *h)
{
    if (h == NULL)
        return;
    if (h->curl && h->session[0]) { /* end the session, as a polite client does */
        char line[300];
        snprintf(line, sizeof line, "Mcp-Session-Id: %s", h->session);
        struct curl_slist *l = curl_slist_append(NULL, line);
        curl_easy_reset(h->curl);
        curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
        curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, "DELETE");
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, l);
        curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, 2000L);
        curl_easy_setopt(h->curl, CURLOPT_NOBODY, 1L);
        (void)curl_easy_perform(h->curl);
        curl_slist_free_all(l);
    }
    if (h->curl)
        curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->extra);
    free(h->url);
    free(h);
}

/* Appends to the response body (a dbuf of at most CHECK_MESSAGE_MAX bytes). */
static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    dbuf *b = ud;
    size_t len = size * n;
    dbuf_put(b, data, len);
    return b->err ? 0 : len; /* 0 stops the transfer: too long, or out of memory */
}

/* Copies a header's value (trimmed) into dst when its name matches. */
static void header_value(const char *line, size_t len, const char *name, char *dst, size_t cap)
{
    size_t nl = strlen(name);
    if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return;
    const char *v = line + nl + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    snprintf(dst, cap, "%.*s", (int)(end - v), v);
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    heads *h = ud;
    size_t len = size * n;
    header_value(data, len, "Content-Type", h->content_type, sizeof h->content_type);
    header_value(data, len, "Mcp-Session-Id", h->session, sizeof h->session);
    return len;
}

/* The reply with `id` among the events of an SSE body (a new reference), or NULL. */
static json_t *reply_from_sse(const dbuf *b, const json_t *id)
{
    json_t *found = NULL;
    char *data = malloc(b->len + 1);
    size_t dl = 0;
    if (data == NULL)
        return NULL;
    const char *p = b->buf, *end = b->buf + b->len;
    while (p < end && found == NULL) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t ll = (size_t)(le - p);
        if (ll > 0 && p[ll - 1] == '\r')
            ll--;
        if (ll == 0) { /* the end of an event */
            json_t *v = dl ? json_loadb(data, dl, 0, NULL) : NULL;
            if (v && json_equal(json_object_get(v, "id"), id) && !json_object_get(v, "method"))
                found = v;
            else
                json_decref(v);
            dl = 0;
        } else if (ll >= 5 && strncmp(p, "data:", 5) == 0) {
            size_t skip = ll > 5 && p[5] == ' ' ? 6 : 5;
            if (dl)
                data[dl++] = '\n';
            memcpy(data + dl, p + skip, ll - skip);
            dl += ll - skip;
        }
        p = nl ? nl + 1 : end;
    }
    if (found == NULL && dl) { /* a last event without its blank line */
        json_t *v = json_loadb(data, dl, 0, NULL);
        if (v && json_equal(json_object_get(v, "id"), id))
            found = v;
        else
            json_decref(v);
    }
    free(data);
    return found;
}

/* The request headers of one message. */
static struct curl_slist *headers_for(const check_http *h, const json_t *msg)
{
    struct curl_slist *l = NULL;
    for (const struct curl_slist *e = h->extra; e; e = e->next)
        l = curl_slist_append(l, e->data);
    l = curl_slist_append(l, "Content-Type: application/json");
    l = curl_slist_append(l, "Accept: application/json, text/event-stream");
    const json_t *params = json_object_get(msg, "params");
    const char *modern = json_string_value(json_object_get(
        json_object_get(params, "_meta"), "io.modelcontextprotocol/protocolVersion"));
    const char *method = json_string_value(json_object_get(msg, "method"));
    char line[1200];
    if (modern) {
        snprintf(line, sizeof line, "MCP-Protocol-Version: %s", modern);
        l = curl_slist_append(l, line);
        snprintf(line, sizeof line, "Mcp-Method: %s", method ? method : "");
        l = curl_slist_append(l, line);
        const char *name = NULL;
        if (method && (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0))
            name = json_string_value(json_object_get(params, "name"));
        else if (method && strcmp(method, "resources/read") == 0)
            name = json_string_value(json_object_get(params, "uri"));
        if (name) {
            snprintf(line, sizeof line, "Mcp-Name: %s", name);
            l = curl_slist_append(l, line);
        }
    } else {
        if (h->version[0]) {
            snprintf(line, sizeof line, "MCP-Protocol-Version: %s", h->version);
            l = curl_slist_append(l, line);
        }
        if (h->session[0]) {
            snprintf(line, sizeof line, "Mcp-Session-Id: %s", h->session);
            l = curl_slist_append(l, line);
        }
    }
    return l;
}

static int http_exchange(void *ud, const json_t *msg, int timeout_ms, json_t **reply, char *why,
                         size_t why_len)
{
    check_http *h = ud;
    *reply = NULL;
    char *txt = json_dumps(msg, JSON_COMPACT);
    if (txt == NULL)
        return MCPAGE_ENOMEM;
    dbuf b;
    dbuf_init(&b, CHECK_MESSAGE_MAX);
    heads hd = {{0}, {0}};
    struct curl_slist *l = headers_for(h, msg);
    CURL *c = h->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, h->url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, txt);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(txt));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, l);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hd);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(l);
    free(txt);
    int rc = 0;
    const json_t *id = json_object_get(msg, "id");
    if (b.err == MCPAGE_ERANGE) {
        snprintf(why, why_len, "a response longer than %zu bytes", CHECK_MESSAGE_MAX);
        rc = MCPAGE_ERANGE;
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(why, why_len, "no reply within the timeout");
        rc = MCPAGE_ECANCELED;
    } else if (cc != CURLE_OK) {
        snprintf(why, why_len, "%s", curl_easy_strerror(cc));
        rc = MCPAGE_EIO;
    } else if (hd.session[0] && h->session[0] == '\0') {
        snprintf(h->session, sizeof h->session, "%s", hd.session);
    }
    if (rc == 0 && id) {
        if (strncasecmp(hd.content_type, "text/event-stream", 17) == 0)
            *reply = reply_from_sse(&b, id);
        else if (b.len)
            *reply = json_loadb(b.buf, b.len, 0, NULL);
        /* An HTTP error without a JSON-RPC body is the transport's failure. */
        if (!json_is_object(*reply)) {
            json_decref(*reply);
            *reply = NULL;
            snprintf(why, why_len, "HTTP %ld without a JSON-RPC reply", status);
            rc = MCPAGE_EIO;
        }
    }
    /* Remember what initialize agreed, for the headers of the 2025-11-25 era. */
    const char *method = json_string_value(json_object_get(msg, "method"));
    const char *v =
        json_string_value(json_object_get(json_object_get(*reply, "result"), "protocolVersion"));
    if (method && strcmp(method, "initialize") == 0 && v)
        snprintf(h->version, sizeof h->version, "%s", v);
    dbuf_free(&b);
    return rc;
}

void check_http_transport(check_http *h, check_transport *t)
{
    t->exchange = http_exchange;
    t->ud = h;
    t->garbage = NULL;
}
