/*
 * A plain MCP client over a check_transport, for `mcpage call --server`
 * and `--url`: it opens a session in either era (server/discover with
 * the 2026-07-28 _meta when the server lists that revision, else
 * initialize for 2025-11-25 and notifications/initialized) and sends
 * requests with what the era asks of each (the _meta on every modern
 * request). The checker's own run (check.c) does the same with findings.
 */
#include <stdio.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "check/check.h"

#define MODERN_VERSION "2026-07-28"
#define LEGACY_VERSION "2025-11-25"

static json_t *client_meta(void)
{
    return json_pack("{s:s, s:{}, s:{s:s, s:s}}", "io.modelcontextprotocol/protocolVersion",
                     MODERN_VERSION, "io.modelcontextprotocol/clientCapabilities",
                     "io.modelcontextprotocol/clientInfo", "name", "mcpage-call", "version",
                     mcpage_version());
}

json_t *check_client_request(check_client *cl, const char *method, json_t *params, char *why,
                             size_t why_len)
{
    if (params == NULL)
        params = json_object();
    if (cl->modern) {
        json_t *meta = json_object_get(params, "_meta");
        if (json_is_object(meta))
            json_object_update_missing(meta, client_meta());
        else
            json_object_set_new(params, "_meta", client_meta());
    }
    json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
                            (json_int_t)cl->next_id++, "method", method, "params", params);
    json_t *reply = NULL;
    why[0] = '\0';
    int rc = req ? cl->t->exchange(cl->t->ud, req,
                                   cl->timeout_ms > 0 ? cl->timeout_ms : CHECK_DEFAULT_TIMEOUT_MS,
                                   &reply, why, why_len)
                 : MCPAGE_ENOMEM;
    json_decref(req);
    if (rc != 0) {
        if (why[0] == '\0')
            (void)snprintf(why, why_len, "%s", mcpage_strerror(rc));
        json_decref(reply);
        return NULL;
    }
    return reply;
}

static bool lists(const json_t *arr, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

int check_client_open(check_client *cl, const char *era, char *why, size_t why_len)
{
    cl->next_id = cl->next_id > 0 ? cl->next_id : 1;
    if (era == NULL || strcmp(era, MODERN_VERSION) == 0) {
        cl->modern = true;
        int keep = cl->timeout_ms;
        if (era == NULL && (keep <= 0 || keep > 5000))
            cl->timeout_ms = 5000; /* an old server may never answer the probe */
        json_t *r = check_client_request(cl, "server/discover", NULL, why, why_len);
        cl->timeout_ms = keep;
        const json_t *res = json_object_get(r, "result");
        bool ok = lists(json_object_get(res, "supportedVersions"), MODERN_VERSION);
        if (ok) {
            (void)snprintf(cl->version, sizeof cl->version, "%s", MODERN_VERSION);
            json_decref(r);
            return 0;
        }
        json_decref(r);
        cl->modern = false;
        if (era != NULL) {
            if (why[0] == '\0')
                (void)snprintf(why, why_len, "the server does not speak %s", MODERN_VERSION);
            return MCPAGE_ENOTSUP;
        }
    }
    json_t *r = check_client_request(cl, "initialize",
                                     json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                                               LEGACY_VERSION, "capabilities", "clientInfo", "name",
                                               "mcpage-call", "version", mcpage_version()),
                                     why, why_len);
    const json_t *res = json_object_get(r, "result");
    const char *v = json_string_value(json_object_get(res, "protocolVersion"));
    if (v == NULL) {
        const char *msg =
            json_string_value(json_object_get(json_object_get(r, "error"), "message"));
        if (msg)
            (void)snprintf(why, why_len, "initialize failed: %s", msg);
        else if (why[0] == '\0')
            (void)snprintf(why, why_len, "initialize got no result");
        json_decref(r);
        return MCPAGE_EIO;
    }
    (void)snprintf(cl->version, sizeof cl->version, "%s", v);
    json_decref(r);
    json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized");
    json_t *ignored = NULL;
    char w[64];
    (void)cl->t->exchange(cl->t->ud, n, 1000, &ignored, w, sizeof w);
    json_decref(ignored);
    json_decref(n);
    return 0;
}
