/*
 * The modern era on Streamable HTTP (revision 2026-07-28): every POST
 * stands alone. A request is modern when its MCP-Protocol-Version header
 * names a modern revision or its body's _meta names one (or it is
 * server/discover); everything else goes the 2025-11-25 way
 * (http_session.c), so one endpoint serves both eras.
 *
 * What this file adds to the shared request path (http_request.c):
 * - the request metadata headers checked against the body (SEP-2243):
 *   MCP-Protocol-Version against _meta, Mcp-Method against method,
 *   Mcp-Name against params.name or params.uri, and every Mcp-Param-*
 *   a tool's inputSchema declares with x-mcp-header against its argument;
 *   a mismatch is 400 with JSON-RPC error -32020 (HeaderMismatch);
 * - a runtime session that lives for one request and is never listed,
 *   so no Mcp-Session-Id is minted or read, and nothing is resumable
 *   (no SSE event ids, no priming event); closing the response stream
 *   ends the session, which cancels the call (the era's cancellation);
 * - HTTP statuses from the JSON-RPC answer: 404 for -32601, 400 for the
 *   malformed-request errors (-32600, -32602, -32020, -32021, -32022);
 * - GET and DELETE with a modern MCP-Protocol-Version: 405.
 */
#include <mcpage/http.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/jw.h"
#include "transport/http_internal.h"

/* Longest header value compared with the body (bytes, after decoding). */
#define HEADER_VALUE_MAX 4096
/* The Base64 sentinel of Mcp-Name and Mcp-Param-* values. */
#define B64_OPEN  "=?base64?"
#define B64_CLOSE "?="

/* ------------------------------------------------------------ era */

bool http_is_modern(struct MHD_Connection *c, const http_message *m)
{
    const char *pv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (pv && mcpage_protocol_is_modern(pv))
        return true;
    if (m == NULL || m->method == NULL)
        return false;
    const json_t *params = json_object_get(m->v, "params");
    return strcmp(m->method, "server/discover") == 0 ||
           json_object_get(json_object_get(params, "_meta"),
                           "io.modelcontextprotocol/protocolVersion") != NULL;
}

enum MHD_Result http_stateless_refuse(struct MHD_Connection *c, const char *method)
{
    char msg[200];
    (void)snprintf(msg, sizeof msg,
                   "Method Not Allowed: revision %s has no %s on the MCP endpoint (no sessions, "
                   "no standalone stream); POST each request",
                   mcpage_protocol_modern(), method);
    return http_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST, msg);
}

/* ------------------------------------------------------------ answers */

/* An error answer that keeps the request's id (the era wants ids on every error). */
static enum MHD_Result fail_with_id(struct MHD_Connection *c, unsigned status, int code,
                                    const json_t *id, const char *message)
{
    jw w;
    jw_init(&w, 8192);
    jw_object_begin(&w);
    jw_kv_string(&w, "jsonrpc", "2.0");
    jw_key(&w, "id");
    if (id)
        jw_json(&w, id);
    else
        jw_null(&w);
    jw_key(&w, "error");
    jw_object_begin(&w);
    jw_kv_int(&w, "code", code);
    jw_kv_string(&w, "message", message);
    jw_object_end(&w);
    jw_object_end(&w);
    enum MHD_Result ok =
        http_queue(c, status, "application/json", w.err ? "" : w.buf, w.err ? 0 : w.len, NULL);
    jw_free(&w);
    return ok;
}

/* True when the n bytes at p contain `needle` (the body is not NUL-terminated). */
static bool contains(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (p[i] == needle[0] && memcmp(p + i, needle, k) == 0)
            return true;
    return false;
}

unsigned http_stateless_status(const char *body, size_t len)
{
    /* The runtime writes "jsonrpc", "id" (at most MCP_ID_TEXT_MAX bytes), then "result" or
       "error": only errors are parsed, and only the head is searched. */
    size_t head = len < MCP_ID_TEXT_MAX + 64 ? len : MCP_ID_TEXT_MAX + 64;
    if (body == NULL || len == 0 || !contains(body, head, ",\"error\":{"))
        return MHD_HTTP_OK;
    json_t *v = json_loadb(body, len, 0, NULL);
    json_int_t code = json_integer_value(json_object_get(json_object_get(v, "error"), "code"));
    bool is_error = json_object_get(v, "error") != NULL;
    json_decref(v);
    if (!is_error)
        return MHD_HTTP_OK;
    switch (code) {
    case RPC_METHOD_NOT_FOUND:
        return MHD_HTTP_NOT_FOUND;
    case RPC_PARSE_ERROR:
    case RPC_INVALID_REQUEST:
    case RPC_INVALID_PARAMS:
    case MCP_HEADER_MISMATCH:
    case MCP_MISSING_CLIENT_CAP:
    case MCP_UNSUPPORTED_VERSION:
        return MHD_HTTP_BAD_REQUEST;
    default:
        return MHD_HTTP_OK;
    }
}

/* ------------------------------------------------------------ header checks */

/*
 * A header value as the body's value compares with it: surrounding
 * whitespace trimmed, the Base64 sentinel decoded where `b64` allows it.
 * False (with the reason) for characters a header may not carry or a
 * sentinel that is not strict Base64.
 */
static bool header_value(const char *raw, bool b64, char *out, size_t cap, const char **why)
{
    while (*raw == ' ' || *raw == '\t')
        raw++;
    size_t n = strlen(raw);
    while (n > 0 && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)raw[i];
        if ((ch < 0x20 && ch != '\t') || ch > 0x7e) {
            *why = "it carries characters outside visible ASCII";
            return false;
        }
    }
    size_t ol = strlen(B64_OPEN), cl = strlen(B64_CLOSE);
    if (b64 && n >= ol + cl && memcmp(raw, B64_OPEN, ol) == 0 &&
        memcmp(raw + n - cl, B64_CLOSE, cl) == 0) {
        size_t bn = n - ol - cl;
        if (bn % 4 != 0 || bn / 4 * 3 >= cap) {
            *why = "its =?base64?...?= value is not padded Base64";
            return false;
        }
        long got = b64_decode(raw + ol, bn, (uint8_t *)out, false);
        if (got < 0) {
            *why = "its =?base64?...?= value is not valid Base64";
            return false;
        }
        out[got] = '\0';
        if (strlen(out) != (size_t)got) {
            *why = "its decoded value contains a NUL byte";
            return false;
        }
        return true;
    }
    if (n >= cap) {
        *why = "it is too long";
        return false;
    }
    memcpy(out, raw, n);
    out[n] = '\0';
    return true;
}

/* The body value a header mirrors, as text (integers in decimal, booleans as true/false). */
static bool body_text(const json_t *v, char *out, size_t cap)
{
    if (json_is_string(v)) {
        if (json_string_length(v) >= cap || strlen(json_string_value(v)) != json_string_length(v))
            return false;
        memcpy(out, json_string_value(v), json_string_length(v) + 1);
        return true;
    }
    if (json_is_integer(v))
        return snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) < (int)cap;
    if (json_is_boolean(v))
        return snprintf(out, cap, "%s", json_is_true(v) ? "true" : "false") < (int)cap;
    return false;
}

/* Compares one mirrored header with its body value; false with the reason in msg. */
static bool header_matches(struct MHD_Connection *c, const char *header, const json_t *body,
                           bool b64, bool numeric, char *msg, size_t cap)
{
    const char *raw = MHD_lookup_connection_value(c, MHD_HEADER_KIND, header);
    char want[HEADER_VALUE_MAX], got[HEADER_VALUE_MAX];
    const char *why = NULL;
    if (body == NULL || json_is_null(body)) {
        if (raw == NULL)
            return true;
        (void)snprintf(msg, cap, "Header mismatch: %s is sent but the body has no such value",
                       header);
        return false;
    }
    if (raw == NULL) {
        (void)snprintf(msg, cap, "Header mismatch: the %s header is required for this request",
                       header);
        return false;
    }
    if (!header_value(raw, b64, got, sizeof got, &why)) {
        (void)snprintf(msg, cap, "Header mismatch: %s is malformed: %s", header, why);
        return false;
    }
    if (!body_text(body, want, sizeof want)) {
        (void)snprintf(msg, cap,
                       "Header mismatch: %s mirrors a body value that is not a string, integer "
                       "or boolean",
                       header);
        return false;
    }
    bool same = strcmp(got, want) == 0;
    if (!same && numeric) {
        char *end = NULL;
        double g = strtod(got, &end);
        same = end != got && *end == '\0' && g == (double)json_integer_value(body);
    }
    if (!same)
        (void)snprintf(msg, cap,
                       "Header mismatch: %s header value '%.100s' does not match body value "
                       "'%.100s'",
                       header, got, want);
    return same;
}

/* Walks a tool's inputSchema for x-mcp-header properties and checks each one's header. */
static bool param_headers_match(struct MHD_Connection *c, const json_t *schema, const json_t *args,
                                int depth, char *msg, size_t cap)
{
    const json_t *props = json_object_get(schema, "properties");
    const char *name;
    const json_t *def;
    if (depth > 16 || !json_is_object(props))
        return true;
    json_object_foreach((json_t *)props, name, def)
    {
        const json_t *value = json_object_get(args, name);
        const json_t *hdr = json_object_get(def, "x-mcp-header");
        if (json_is_string(hdr)) {
            char header[160];
            (void)snprintf(header, sizeof header, "Mcp-Param-%.128s", json_string_value(hdr));
            const json_t *type = json_object_get(def, "type");
            bool numeric = json_is_string(type) && strcmp(json_string_value(type), "integer") == 0;
            if (!header_matches(c, header, value, true, numeric, msg, cap))
                return false;
        }
        if (json_is_object(value) && !param_headers_match(c, def, value, depth + 1, msg, cap))
            return false;
    }
    return true;
}

/* The SEP-2243 checks; false after queueing 400 with -32020 in *ret. */
static bool headers_match_body(mcpage_http *h, struct MHD_Connection *c, const http_message *m,
                               enum MHD_Result *ret)
{
    char msg[512];
    const json_t *params = json_object_get(m->v, "params");
    const json_t *pv = json_object_get(json_object_get(params, "_meta"),
                                       "io.modelcontextprotocol/protocolVersion");
    const char *hpv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
    json_t *method = json_string(m->method);
    bool ok = true;
    if (hpv == NULL) {
        (void)snprintf(msg, sizeof msg,
                       "Header mismatch: the MCP-Protocol-Version header is required (it must "
                       "equal _meta[\"io.modelcontextprotocol/protocolVersion\"])");
        ok = false;
    } else if (json_is_string(pv) &&
               !header_matches(c, "MCP-Protocol-Version", pv, false, false, msg, sizeof msg)) {
        ok = false;
    } else if (!header_matches(c, "Mcp-Method", method, false, false, msg, sizeof msg)) {
        ok = false;
    } else if (strcmp(m->method, "tools/call") == 0 || strcmp(m->method, "prompts/get") == 0) {
        ok = header_matches(c, "Mcp-Name", json_object_get(params, "name"), true, false, msg,
                            sizeof msg);
        const json_t *name = json_object_get(params, "name");
        const json_t *schema = ok && json_is_string(name) && strcmp(m->method, "tools/call") == 0
                                   ? mcp_tool_input_schema(h->srv, json_string_value(name))
                                   : NULL;
        if (schema)
            ok = param_headers_match(c, schema, json_object_get(params, "arguments"), 0, msg,
                                     sizeof msg);
    } else if (strcmp(m->method, "resources/read") == 0) {
        ok = header_matches(c, "Mcp-Name", json_object_get(params, "uri"), true, false, msg,
                            sizeof msg);
    } else if (strcmp(m->method, "tasks/get") == 0 || strcmp(m->method, "tasks/update") == 0 ||
               strcmp(m->method, "tasks/cancel") == 0) {
        /* The tasks extension routes by task (SEP-2663, "Streamable HTTP: Routing Headers"). */
        ok = header_matches(c, "Mcp-Name", json_object_get(params, "taskId"), true, false, msg,
                            sizeof msg);
    }
    json_decref(method);
    if (!ok)
        *ret = fail_with_id(c, MHD_HTTP_BAD_REQUEST, MCP_HEADER_MISMATCH, m->id, msg);
    return ok;
}

/* ------------------------------------------------------------ the POST */

enum MHD_Result http_stateless_post(mcpage_http *h, struct MHD_Connection *c, http_req *rq,
                                    const http_message *m)
{
    if (m->response)
        return http_fail(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
                         "Invalid Request: revision 2026-07-28 has no server-to-client requests "
                         "to answer; a client sends only requests (input goes back in "
                         "inputResponses on a retry)");
    if (m->notification)
        return http_queue(c, MHD_HTTP_ACCEPTED, NULL, "", 0, NULL); /* nothing to act on */
    enum MHD_Result ret = MHD_NO;
    if (!headers_match_body(h, c, m, &ret))
        return ret;
    return http_session_post_transient(h, c, rq, m);
}
