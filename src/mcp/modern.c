/*
 * The modern era (revision 2026-07-28 and later): what a request without
 * a session needs. Each request carries its revision and the client's
 * capabilities in _meta (checked here); server/discover says what the
 * server speaks; cacheable results carry ttlMs and cacheScope; and a call
 * that needs the client's input answers an InputRequiredResult whose
 * requestState is signed with the server's keyring, so that any instance
 * holding the key can continue it and a tampered or foreign state is
 * refused.
 *
 * A requestState is "rs1." + base64url(kid, tag, payload), where the tag
 * seals the SHA-256 of the payload and the payload is compact JSON:
 * {"b": binding, "x": expiry (unix s), "r": round, "a": answers so far}.
 * The binding is the digest of (method, name or uri, arguments), so a
 * state is refused on any other request (spec: basic/patterns/mrtr,
 * "Server Requirements").
 */
#include <mcpage/server.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/base64.h"
#include "page/seal.h"
#include "page/digest.h"

#define STATE_PREFIX     "rs1."
#define STATE_PREFIX_LEN 4
#define STATE_PURPOSE    "mcp-request-state"
#define STATE_TTL_S      900                 /* a state older than this is refused */
#define STATE_MAX_BYTES  ((size_t)256 << 10) /* largest payload (the answers travel in it) */
#define BINDING_HEX      32                  /* hex digits of the binding digest kept */

/* ------------------------------------------------------------ _meta */

int mcp_modern_era(mcpage_session *s, const json_t *id, const json_t *params, mcp_era *era)
{
    const json_t *meta = json_object_get(params, "_meta");
    const json_t *pv = json_object_get(meta, MCP_META_VERSION);
    const json_t *caps = json_object_get(meta, MCP_META_CAPS);
    const json_t *info = json_object_get(meta, MCP_META_CLIENT_INFO);
    const json_t *level = json_object_get(meta, MCP_META_LOG_LEVEL);
    if (!json_is_object(meta) || !json_is_string(pv)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: a request of revision %s carries params._meta with "
                        "\"%s\" (a revision string) and \"%s\" (an object)",
                        mcpage_protocol_modern(), MCP_META_VERSION, MCP_META_CAPS);
        return -1;
    }
    const mcp_revision *rev = mcp_version_find(json_string_value(pv));
    if (rev == NULL || !rev->modern) {
        json_t *data = json_pack("{s:o, s:O}", "supported", mcp_version_list(), "requested", pv);
        mcp_send_errorf(s, id, MCP_UNSUPPORTED_VERSION, data,
                        "Unsupported protocol version: '%.40s'; this server speaks %s without a "
                        "session, and %s and earlier after initialize",
                        json_string_value(pv), mcpage_protocol_modern(), mcpage_protocol_latest());
        return -1;
    }
    if (!json_is_object(caps)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: params._meta[\"%s\"] is required and must be an object "
                        "(send {} when the client declares nothing)",
                        MCP_META_CAPS);
        return -1;
    }
    if (info && !json_is_object(info)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: params._meta[\"%s\"] must be an object {name, version}",
                        MCP_META_CLIENT_INFO);
        return -1;
    }
    mcpage_log_level lv = MCPAGE_LOG_DEBUG;
    if (level && (!json_is_string(level) || mcp_level_parse(json_string_value(level), &lv) != 0)) {
        mcp_send_errorf(s, id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: params._meta[\"%s\"] must be one of debug, info, notice, "
                        "warning, error, critical, alert, emergency",
                        MCP_META_LOG_LEVEL);
        return -1;
    }
    era->rev = rev;
    era->caps = caps;
    era->log_level = level ? (int)lv : MCP_LOG_OFF;
    return 0;
}

/* ------------------------------------------------------------ discovery and caching */

mcp_cache mcp_catalog_cache(const mcpage_server *srv)
{
    mcp_cache c = {srv->cfg.catalog_ttl_ms, true};
    return c;
}

mcp_cache mcp_resource_cache(const mcpage_server *srv)
{
    mcp_cache c = {srv->cfg.resource_ttl_ms, srv->cfg.resources_public};
    return c;
}

void mcp_discover(mcpage_session *s, const json_t *id, const json_t *params)
{
    (void)params;
    mcpage_server *srv = s->srv;
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "supportedVersions");
    json_t *versions = mcp_version_list();
    if (versions)
        jw_json(&w, versions);
    else
        w.err = MCPAGE_ENOMEM;
    json_decref(versions);
    jw_key(&w, "capabilities");
    mcp_write_capabilities(&w, srv, true);
    if (srv->cfg.instructions)
        jw_kv_string(&w, "instructions", srv->cfg.instructions);
    jw_object_end(&w);
    mcp_cache cache = mcp_catalog_cache(srv);
    mcp_send_finish(s, &w, id, &cache);
}

/* ------------------------------------------------------------ request state */

/* Text from json_dumps() belongs to jansson's allocator (a program may have replaced it). */
static void json_text_free(char *text)
{
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree);
    if (text && jfree)
        jfree(text);
}

/* The hex digest binding a state to (method, name, arguments), in out[BINDING_HEX + 1]. */
static int binding_of(const char *method, const char *name, const json_t *args, char *out)
{
    /* Sorted keys: a client that rebuilds its arguments in another order still matches. */
    char *text = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    size_t ml = strlen(method) + 1, nl = strlen(name) + 1, tl = text ? strlen(text) : 0;
    uint8_t *buf = text ? mcpage__malloc(ml + nl + tl) : NULL;
    if (buf == NULL) {
        json_text_free(text);
        return MCPAGE_ENOMEM;
    }
    memcpy(buf, method, ml);
    memcpy(buf + ml, name, nl);
    memcpy(buf + ml + nl, text, tl);
    uint8_t md[SHA256_LEN];
    sha256(buf, ml + nl + tl, md);
    mcpage__free(buf);
    json_text_free(text);
    hex_encode(md, BINDING_HEX / 2, out);
    return 0;
}

/* Seals `payload` into a requestState string (free with mcpage__free). */
static int state_seal(const mcpage_keyring *kr, const char *payload, size_t n, char **out)
{
    *out = NULL;
    uint8_t kid;
    int rc = mcpage__seal_kid(kr, &kid);
    if (rc != 0)
        return rc;
    uint8_t md[SHA256_LEN];
    sha256(payload, n, md);
    size_t raw_len = 1 + SEAL_TAG_LEN + n;
    uint8_t *raw = mcpage__malloc(raw_len);
    char *text = mcpage__malloc(STATE_PREFIX_LEN + b64_encoded_len(raw_len, true) + 1);
    if (raw == NULL || text == NULL) {
        mcpage__free(raw);
        mcpage__free(text);
        return MCPAGE_ENOMEM;
    }
    raw[0] = kid;
    rc = mcpage__seal_tag(kr, kid, STATE_PURPOSE, md, sizeof md, raw + 1);
    if (rc == 0) {
        memcpy(raw + 1 + SEAL_TAG_LEN, payload, n);
        memcpy(text, STATE_PREFIX, STATE_PREFIX_LEN);
        size_t len = STATE_PREFIX_LEN + b64_encode(raw, raw_len, text + STATE_PREFIX_LEN, true);
        text[len] = '\0';
        *out = text;
        text = NULL;
    }
    mcpage__free(raw);
    mcpage__free(text);
    return rc;
}

/*
 * Opens a requestState: its payload object in *out, or NULL with the
 * reason in why[] (the text a client reads in the -32602 error).
 */
static void state_open(const mcpage_keyring *kr, const char *text, size_t len, json_t **out,
                       char *why, size_t cap)
{
    *out = NULL;
    size_t max_chars = b64_encoded_len(1 + SEAL_TAG_LEN + STATE_MAX_BYTES, true);
    if (len <= STATE_PREFIX_LEN || len > STATE_PREFIX_LEN + max_chars ||
        memcmp(text, STATE_PREFIX, STATE_PREFIX_LEN) != 0) {
        (void)snprintf(why, cap, "it is not a requestState this server issued");
        return;
    }
    uint8_t *raw = mcpage__malloc(len);
    if (raw == NULL) {
        (void)snprintf(why, cap, "out of memory");
        return;
    }
    long n = b64_decode(text + STATE_PREFIX_LEN, len - STATE_PREFIX_LEN, raw, true);
    if (n <= (long)(1 + SEAL_TAG_LEN)) {
        (void)snprintf(why, cap, "it is not a requestState this server issued");
        mcpage__free(raw);
        return;
    }
    const uint8_t *payload = raw + 1 + SEAL_TAG_LEN;
    size_t plen = (size_t)n - 1 - SEAL_TAG_LEN;
    uint8_t md[SHA256_LEN];
    sha256(payload, plen, md);
    switch (mcpage__seal_check(kr, raw[0], STATE_PURPOSE, md, sizeof md, raw + 1)) {
    case SEAL_VALID:
        *out = json_loadb((const char *)payload, plen, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(*out)) {
            json_decref(*out);
            *out = NULL;
            (void)snprintf(why, cap, "its payload is damaged");
        }
        break;
    case SEAL_FOREIGN_KEY:
        (void)snprintf(why, cap,
                       "it was signed with a key this server does not hold (another deployment, "
                       "or a key rotated out)");
        break;
    case SEAL_BAD:
        (void)snprintf(why, cap, "its signature does not verify: it was altered");
        break;
    }
    mcpage__free(raw);
}

/* Checks an opened state against the call; 0, or the reason in why[]. */
static int state_check(const json_t *st, const char *binding, char *why, size_t cap)
{
    const json_t *b = json_object_get(st, "b");
    const json_t *x = json_object_get(st, "x");
    const json_t *r = json_object_get(st, "r");
    const json_t *a = json_object_get(st, "a");
    if (!json_is_string(b) || !json_is_integer(x) || !json_is_integer(r) || !json_is_object(a) ||
        json_integer_value(r) < 1 || json_integer_value(r) > 1000000) {
        (void)snprintf(why, cap, "its payload is damaged");
        return -1;
    }
    if (strcmp(json_string_value(b), binding) != 0) {
        (void)snprintf(why, cap,
                       "it belongs to another request (a different method, name or arguments); "
                       "echo a requestState only on the retry of the request that received it");
        return -1;
    }
    if (json_integer_value(x) < (json_int_t)time(NULL)) {
        (void)snprintf(why, cap,
                       "it expired (states live %d seconds); send the request again without "
                       "requestState and inputResponses",
                       STATE_TTL_S);
        return -1;
    }
    return 0;
}

int mcp_call_prepare_input(mcpage_session *s, mcpage_call *call, const char *method,
                           const char *name, const json_t *params)
{
    char binding[BINDING_HEX + 1];
    if (binding_of(method, name, call->args, binding) != 0 ||
        (call->binding = mcpage__strdup(binding)) == NULL ||
        (call->answers = json_object()) == NULL) {
        mcp_send_error(s, call->id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return -1;
    }
    char why[300];
    const json_t *rs = json_object_get(params, "requestState");
    if (rs) {
        json_t *st = NULL;
        if (!json_is_string(rs))
            (void)snprintf(why, sizeof why, "it must be the string the server sent");
        else
            state_open(s->srv->keyring, json_string_value(rs), json_string_length(rs), &st, why,
                       sizeof why);
        if (st == NULL || state_check(st, binding, why, sizeof why) != 0) {
            json_decref(st);
            mcp_send_errorf(s, call->id, RPC_INVALID_PARAMS, NULL,
                            "Invalid params: requestState refused: %s", why);
            return -1;
        }
        json_object_update(call->answers, json_object_get(st, "a"));
        call->round = (int)json_integer_value(json_object_get(st, "r")) + 1;
        json_decref(st);
    }
    const json_t *ir = json_object_get(params, "inputResponses");
    if (ir == NULL)
        return 0;
    if (!json_is_object(ir)) {
        mcp_send_errorf(s, call->id, RPC_INVALID_PARAMS, NULL,
                        "Invalid params: inputResponses must be an object: the client's result for "
                        "each key of the inputRequests it answers");
        return -1;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)ir, key, v)
    {
        if (!json_is_object(v)) {
            mcp_send_errorf(
                s, call->id, RPC_INVALID_PARAMS, NULL,
                "Invalid params: inputResponses[\"%.64s\"] must be an object: the "
                "client's result (ElicitResult, CreateMessageResult or ListRootsResult)",
                key);
            return -1;
        }
    }
    json_object_update(call->answers, (json_t *)ir);
    return 0;
}

void mcp_send_input_required(mcpage_call *call)
{
    mcpage_server *srv = call->s->srv;
    json_t *payload =
        json_pack("{s:s, s:I, s:i, s:O}", "b", call->binding ? call->binding : "", "x",
                  (json_int_t)time(NULL) + STATE_TTL_S, "r", call->round, "a", call->answers);
    char *text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
    json_decref(payload);
    char *state = NULL;
    int rc = text == NULL ? MCPAGE_ENOMEM
             : strlen(text) > STATE_MAX_BYTES
                 ? MCPAGE_ERANGE
                 : state_seal(srv->keyring, text, strlen(text), &state);
    json_text_free(text);
    if (rc != 0) {
        char msg[200];
        (void)snprintf(msg, sizeof msg,
                       "Internal error: the request state could not be built (%s); the answers "
                       "collected so far exceed %zu bytes or no signing key is loaded",
                       mcpage_strerror(rc), STATE_MAX_BYTES);
        mcp_send_error(call->s, call->id, RPC_INTERNAL_ERROR, msg, NULL);
        return;
    }
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, call->id);
    jw_object_begin(&w);
    jw_kv_string(&w, "resultType", "input_required");
    jw_key(&w, "inputRequests");
    jw_json(&w, call->asks);
    jw_kv_string(&w, "requestState", state);
    mcp_write_server_meta(&w, srv);
    jw_object_end(&w);
    mcp_send_result(call->s, NULL, &w, call->id, NULL);
    mcpage__free(state);
}

void mcp_send_missing_caps(mcpage_call *call)
{
    const char *first = "";
    const char *key;
    const json_t *v;
    json_object_foreach(call->missing_caps, key, v)
    {
        first = key;
        break;
    }
    json_t *data = json_pack("{s:O}", "requiredCapabilities", call->missing_caps);
    mcp_send_errorf(call->s, call->id, MCP_MISSING_CLIENT_CAP, data,
                    "Missing required client capability: '%.64s'; the client must declare it (in "
                    "_meta[\"%s\"], or in initialize) to use this",
                    first, MCP_META_CAPS);
}
