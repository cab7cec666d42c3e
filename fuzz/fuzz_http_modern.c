/*
 * libFuzzer target: a POST to a running Streamable HTTP endpoint on
 * loopback, for the modern era's request path on HTTP
 * (src/transport/http_stateless.c): the request metadata headers checked
 * against the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name,
 * Mcp-Param-* from x-mcp-header, the Base64 sentinel), the era decision,
 * the statuses and the one-request session.
 * The input is header lines ("Name: value"), an empty line, then the
 * body; the target adds the request line, Host, Content-Type, Accept and
 * Content-Length, and reads the whole answer. It must be one HTTP
 * response with a known status; a JSON answer must be one JSON object
 * (an error answer carrying "error"); and a request that names revision
 * 2026-07-28 in its MCP-Protocol-Version header is never given an
 * Mcp-Session-Id.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <mcpage/http.h>
#include <mcpage/server.h>

#define REQUEST_MAX  (128u << 10)
#define RESPONSE_MAX (1u << 20)

static mcpage_server *fuzz_server;
static mcpage_http *fuzz_http;
static uint16_t fuzz_port;
static int recv_errno;              /* of the last exchange, 0 when the server closed */
static unsigned long empty_retried; /* answers that were empty once, then sent again */

static void report_retries(void)
{
    fprintf(stderr, "fuzz_http_modern: %lu empty answer(s) retried\n", empty_retried);
}

/* Echoes its region and count (mirrored in Mcp-Param-Region and Mcp-Param-Count). */
static int tool_headers(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    const char *region = json_string_value(json_object_get(args, "region"));
    char text[160];
    int n = snprintf(text, sizeof text, "%.100s x%lld", region ? region : "-",
                     (long long)json_integer_value(json_object_get(args, "count")));
    return mcpage_result_add_text(res, text, (size_t)n);
}

/* Asks the client a question (an InputRequiredResult in the modern era). */
static int tool_ask(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a = NULL;
    int rc = mcpage_call_input(call, "q", "elicitation/create", NULL, 100, &a);
    json_decref(a);
    return rc != 0 ? rc : mcpage_result_add_text(res, "answered", 8);
}

/* Runs as a task when the client declared the extension. */
static int tool_task(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    (void)mcpage_call_task(call);
    return mcpage_result_add_text(res, "done", 4);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fuzz", "1");
    cfg.workers = 2;
    cfg.max_message = 65536;
    mcpage_tool tools[] = {
        {.name = "headers",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
                         "\"x-mcp-header\":\"Region\"},\"count\":{\"type\":\"integer\","
                         "\"x-mcp-header\":\"Count\"},\"where\":{\"type\":\"object\","
                         "\"properties\":{\"zone\":{\"type\":\"string\",\"x-mcp-header\":"
                         "\"Zone\"}}}}}",
         .handler = tool_headers},
        {.name = "ask", .handler = tool_ask},
        {.name = "task", .handler = tool_task, .tasks = MCPAGE_TASKS_OPTIONAL},
    };
    if (mcpage_server_new(&cfg, &fuzz_server) != 0)
        abort();
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (mcpage_server_add_tool(fuzz_server, &tools[i]) != 0)
            abort();
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    hc.port = 0;
    hc.heartbeat_ms = 60000;
    hc.session_idle_s = 2; /* old-era initializes would otherwise fill max_sessions */
    if (mcpage_http_start(fuzz_server, &hc, &fuzz_http) != 0)
        abort();
    fuzz_port = mcpage_http_port(fuzz_http);
    atexit(report_retries);
    return 0;
}

/* Builds the request from the input; its length, 0 when the input does not fit. */
static size_t build_request(const uint8_t *data, size_t size, char *out, bool *modern)
{
    const uint8_t *body = data;
    size_t body_len = size;
    const uint8_t *split = NULL;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == '\n' && data[i + 1] == '\n') {
            split = data + i;
            break;
        }
    char headers[8192];
    size_t hl = 0;
    *modern = false;
    bool seen_version = false; /* the server reads the first MCP-Protocol-Version */
    if (split) {
        body = split + 2;
        body_len = size - (size_t)(body - data);
        /* Header lines: no CR, NUL or other control bytes; each ends in CRLF.
         * None starts with a space or tab: that folds it into the header
         * before it (obs-fold), our own "Connection: close", and the
         * server then rightly keeps the connection open after answering,
         * so the exchange waits out the idle timeout (10 s) for nothing. */
        const uint8_t *line = data;
        while (line < split + 1) {
            const uint8_t *nl = memchr(line, '\n', (size_t)(split + 1 - line));
            size_t n = (size_t)(nl - line);
            bool clean = n > 0 && memchr(line, ':', n) != NULL && line[0] != ' ' && line[0] != '\t';
            for (size_t i = 0; i < n && clean; i++)
                clean = line[i] >= 0x20 && line[i] != 0x7f;
            if (clean && hl + n + 2 < sizeof headers) {
                memcpy(headers + hl, line, n);
                hl += n;
                memcpy(headers + hl, "\r\n", 2);
                hl += 2;
                static const char pv[] = "mcp-protocol-version:";
                if (!seen_version && n >= sizeof pv - 1 &&
                    strncasecmp((const char *)line, pv, sizeof pv - 1) == 0) {
                    seen_version = true;
                    const char *v = (const char *)line + sizeof pv - 1;
                    size_t vl = n - (sizeof pv - 1);
                    while (vl > 0 && (*v == ' ' || *v == '\t'))
                        v++, vl--;
                    while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                        vl--;
                    *modern = vl == 10 && memcmp(v, "2026-07-28", 10) == 0;
                }
            }
            line = nl + 1;
        }
    }
    int n = snprintf(out, REQUEST_MAX,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json"
                     "\r\nAccept: application/json, text/event-stream\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n%.*s\r\n",
                     fuzz_port, body_len, (int)hl, headers);
    if (n < 0 || (size_t)n + body_len > REQUEST_MAX)
        return 0;
    memcpy(out + n, body, body_len);
    return (size_t)n + body_len;
}

/* Sends the request, reads the answer until the server closes; its length. */
static size_t exchange(const char *req, size_t len, char *resp)
{
    recv_errno = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        abort();
    struct timeval tv = {5, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fuzz_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* Ephemeral ports run short in long runs (TIME_WAIT): wait for one. */
    int tries = 0;
    while (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (++tries > 500)
            abort();
        close(fd);
        usleep(10000);
        if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
            abort();
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    for (size_t at = 0; at < len;) {
        ssize_t w = send(fd, req + at, len - at, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may answer (and close) before reading a refused body */
        at += (size_t)w;
    }
    size_t got = 0;
    for (;;) {
        ssize_t r = recv(fd, resp + got, RESPONSE_MAX - 1 - got, 0);
        if (r < 0)
            recv_errno = errno;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == RESPONSE_MAX - 1)
            break;
    }
    close(fd);
    resp[got] = '\0';
    return got;
}

static void fail(const char *why, const char *resp)
{
    fprintf(stderr, "fuzz_http_modern: %s (recv: %s):\n%.2000s\n", why,
            recv_errno ? strerror(recv_errno) : "closed", resp);
    abort();
}

/* The value of header `name` in the response head, or NULL. */
static const char *header_in(const char *head, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p && p[2] != '\r'; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            *len = strcspn(v, "\r");
            return v;
        }
    }
    return NULL;
}

static void check_response(const char *resp, size_t len, bool modern)
{
    unsigned status = 0;
    if (len < 12 || sscanf(resp, "HTTP/1.1 %3u", &status) != 1)
        fail("not an HTTP response", resp);
    static const unsigned known[] = {200, 202, 400, 403, 404, 405, 406, 413, 415, 503};
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok = ok || status == known[i];
    if (!ok)
        fail("unexpected status", resp);
    const char *end = strstr(resp, "\r\n\r\n");
    if (end == NULL)
        fail("no end of the head", resp);
    size_t vl = 0;
    if (modern && header_in(resp, "Mcp-Session-Id", &vl) != NULL)
        fail("a modern request was given a session id", resp);
    const char *ct = header_in(resp, "Content-Type", &vl);
    if (ct && vl >= 16 && strncmp(ct, "application/json", 16) == 0) {
        const char *body = end + 4;
        json_error_t err;
        json_t *v = json_loadb(body, len - (size_t)(body - resp), 0, &err);
        if (!json_is_object(v))
            fail("a JSON answer that is not one JSON object", resp);
        if (status >= 400 && json_object_get(v, "error") == NULL)
            fail("an error status without a JSON-RPC error", resp);
        json_decref(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char req[REQUEST_MAX], resp[RESPONSE_MAX];
    bool modern = false;
    size_t len = build_request(data, size, req, &modern);
    if (len == 0)
        return 0;
    size_t got = exchange(req, len, resp);
    if (got == 0) {
        /* Closed without a byte: once may be the loaded machine; twice is a finding. */
        empty_retried++;
        got = exchange(req, len, resp);
    }
    if (getenv("FUZZ_HTTP_TRACE")) /* what each input got, when run on seeds by hand */
        fprintf(stderr, "%.*s\n", (int)strcspn(resp, "\r"), resp);
    check_response(resp, got, modern);
    return 0;
}
