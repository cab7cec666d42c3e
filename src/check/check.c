/*
 * The checker's run: the opening (server/discover, or initialize for a
 * 2025-11-25 server), the four protocol lists walked to the end, then
 * every tool (check_tools.c). Findings are JSON objects collected in
 * the report; printing is check_report.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "check/check_internal.h"

#define MODERN_VERSION "2026-07-28"
#define LEGACY_VERSION "2025-11-25"
/* A cursor no server issued (the garbage-cursor probe). */
#define GARBAGE_CURSOR "mcpage-check:not-a-cursor"

static const char *const severity_names[] = {"error", "warning", "info"};

/*
 * Replaces each byte that does not belong to a well-formed UTF-8
 * sequence with '?': a message quotes a server's text cut at a byte
 * count ("%.200s"), and JSON strings must be valid UTF-8.
 */
static void utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = *p < 0x80           ? 1
                   : (*p >> 5) == 0x6  ? 2
                   : (*p >> 4) == 0xE  ? 3
                   : (*p >> 3) == 0x1E ? 4
                                       : 0;
        size_t k = 1;
        while (n > 1 && k < n && (p[k] & 0xC0) == 0x80)
            k++;
        if (n == 0 || k < n) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

void check__find(check_ctx *c, check_severity sev, const json_t *request, const char *fix,
                 const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_scrub(msg);
    const char *scope = c->scope ? c->scope : "(server)";
    /* The same sentence about the same thing is said once (the first request shows it). */
    size_t i;
    const json_t *old;
    json_array_foreach(c->rep->findings, i, old)
    {
        if (strcmp(json_string_value(json_object_get(old, "scope")), scope) == 0 &&
            strcmp(json_string_value(json_object_get(old, "message")), msg) == 0)
            return;
    }
    if (json_array_size(c->rep->findings) >= CHECK_FINDINGS_MAX)
        return;
    json_t *f = json_pack("{s:s, s:s, s:s, s:s}", "severity", severity_names[sev], "scope", scope,
                          "message", msg, "fix", fix);
    if (f && request)
        json_object_set(f, "request", (json_t *)request);
    json_array_append_new(c->rep->findings, f);
    if (sev == CHECK_ERROR)
        c->rep->errors++;
    else if (sev == CHECK_WARNING)
        c->rep->warnings++;
    else
        c->rep->infos++;
}

/* The _meta every modern request carries. */
static json_t *modern_meta(void)
{
    return json_pack("{s:s, s:{}, s:{s:s, s:s}}", "io.modelcontextprotocol/protocolVersion",
                     MODERN_VERSION, "io.modelcontextprotocol/clientCapabilities",
                     "io.modelcontextprotocol/clientInfo", "name", "mcpage-check", "version",
                     mcpage_version());
}

json_t *check__request(check_ctx *c, const char *method, json_t *params)
{
    if (c->dead) {
        json_decref(params);
        return NULL;
    }
    if (params == NULL)
        params = json_object();
    if (c->modern) {
        json_t *meta = json_object_get(params, "_meta");
        if (!json_is_object(meta))
            json_object_set_new(params, "_meta", modern_meta());
        else
            json_object_update_missing(meta, modern_meta());
    }
    long id = c->next_id++;
    json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id,
                            "method", method, "params", params);
    json_decref(c->last_request);
    c->last_request = json_incref(req);
    c->rep->requests++;
    json_t *reply = NULL;
    char why[256] = "";
    int timeout = c->o->timeout_ms > 0 ? c->o->timeout_ms : CHECK_DEFAULT_TIMEOUT_MS;
    bool tool_call = strcmp(method, "tools/call") == 0;
    if (tool_call && c->call_timeout_ms > 0)
        timeout = c->call_timeout_ms;
    int rc = c->t->exchange(c->t->ud, req, timeout, &reply, why, sizeof why);
    json_decref(req);
    if (rc != 0 && c->probing)
        return NULL; /* a server of the old era may not answer server/discover at all */
    if (rc == MCPAGE_ECANCELED && tool_call) {
        /* One slow tool: its caller reports it, the server is told to stop, the run goes on. */
        c->timed_out = true;
        json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/cancelled", "params", "requestId", (json_int_t)id,
                              "reason", "mcpage check: no reply within its timeout");
        if (n && c->modern)
            json_object_set_new(json_object_get(n, "params"), "_meta", modern_meta());
        json_t *ignored = NULL;
        (void)c->t->exchange(c->t->ud, n, 1000, &ignored, why, sizeof why);
        json_decref(ignored);
        json_decref(n);
        return NULL;
    }
    if (rc != 0) {
        check__find(c, CHECK_ERROR, c->last_request,
                    "answer within --timeout, keep the process running and its stdout open",
                    "%s: %s (checking stopped)", method, why[0] ? why : mcpage_strerror(rc));
        c->dead = true;
        c->rep->aborted = true;
        return NULL;
    }
    return reply;
}

static void notify(check_ctx *c, const char *method)
{
    json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
    json_t *reply = NULL;
    char why[256];
    (void)c->t->exchange(c->t->ud, n, 1000, &reply, why, sizeof why);
    json_decref(reply);
    json_decref(n);
}

static bool has_string(const json_t *arr, const char *s)
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

static void learn_server(check_ctx *c, const json_t *info, const char *version)
{
    json_t *s = c->rep->server;
    json_object_set_new(s, "era", json_string(c->modern ? MODERN_VERSION : version));
    if (json_is_object(info)) {
        json_object_set(s, "name", json_object_get(info, "name"));
        json_object_set(s, "version", json_object_get(info, "version"));
    }
}

/* server/discover first; initialize when the server does not speak 2026-07-28. */
static const json_t *open_session(check_ctx *c, json_t **keep)
{
    bool try_modern = !c->o->legacy_only && !(c->o->era && strcmp(c->o->era, LEGACY_VERSION) == 0);
    if (try_modern) {
        c->modern = true;
        c->scope = "server/discover";
        c->probing = true;
        json_t *r = check__request(c, "server/discover", NULL);
        c->probing = false;
        const json_t *res = json_object_get(r, "result");
        if (res && has_string(json_object_get(res, "supportedVersions"), MODERN_VERSION)) {
            const json_t *meta = json_object_get(res, "_meta");
            learn_server(c, json_object_get(meta, "io.modelcontextprotocol/serverInfo"),
                         MODERN_VERSION);
            *keep = r;
            return json_object_get(res, "capabilities");
        }
        if (res && json_object_get(res, "supportedVersions"))
            check__find(c, CHECK_INFO, NULL,
                        "to be checked in 2026-07-28, list it in server/discover's "
                        "supportedVersions",
                        "server/discover does not list " MODERN_VERSION "; checked as %s",
                        LEGACY_VERSION);
        json_decref(r);
        c->modern = false;
        if (c->dead)
            return NULL;
    }
    c->scope = "initialize";
    json_t *r = check__request(c, "initialize",
                               json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                                         LEGACY_VERSION, "capabilities", "clientInfo", "name",
                                         "mcpage-check", "version", mcpage_version()));
    const json_t *res = json_object_get(r, "result");
    if (res == NULL) {
        if (!c->dead)
            check__find(c, CHECK_ERROR, c->last_request,
                        "answer initialize with protocolVersion, capabilities and serverInfo",
                        "initialize failed: %s",
                        json_string_value(json_object_get(json_object_get(r, "error"), "message"))
                            ?: "no result");
        json_decref(r);
        return NULL;
    }
    const char *v = json_string_value(json_object_get(res, "protocolVersion"));
    learn_server(c, json_object_get(res, "serverInfo"), v ? v : "?");
    notify(c, "notifications/initialized");
    *keep = r;
    return json_object_get(res, "capabilities");
}

/* The key that identifies an item of a list (name, uri or uriTemplate). */
static const char *item_key(const json_t *item, const char *field)
{
    return json_string_value(json_object_get(item, field));
}

/* Walks one protocol list to the end; the items in *all (new array). */
static void walk_list(check_ctx *c, const char *method, const char *items_field,
                      const char *key_field, json_t **all)
{
    c->scope = method;
    *all = json_array();
    json_t *seen = json_object();
    json_t *cursor = NULL, *first_cache = NULL;
    bool repeated = false;
    for (int page = 0; page < CHECK_WALK_MAX_PAGES && !c->dead; page++) {
        json_t *params = cursor ? json_pack("{s:O}", "cursor", cursor) : json_object();
        json_t *r = check__request(c, method, params);
        const json_t *res = json_object_get(r, "result");
        if (res == NULL) {
            if (!c->dead)
                check__find(
                    c, CHECK_ERROR, c->last_request,
                    "answer every page of the list, including ones asked for by a nextCursor "
                    "this server gave",
                    "page %d: %s", page + 1,
                    json_string_value(json_object_get(json_object_get(r, "error"), "message"))
                        ?: "no result");
            json_decref(r);
            break;
        }
        const json_t *items = json_object_get(res, items_field);
        if (!json_is_array(items))
            check__find(c, CHECK_ERROR, c->last_request,
                        "put the page's items in the array the spec names, even when it is empty",
                        "page %d has no \"%s\" array", page + 1, items_field);
        size_t i;
        const json_t *it;
        json_array_foreach(items, i, it)
        {
            const char *k = item_key(it, key_field);
            if (k && json_object_get(seen, k)) {
                check__find(c, CHECK_ERROR, c->last_request,
                            "make nextCursor resume after the last item of its page",
                            "page %d repeats %s \"%s\" (an item listed twice)", page + 1, key_field,
                            k);
                repeated = true;
            }
            if (k)
                json_object_set_new(seen, k, json_true());
            json_array_append(*all, (json_t *)it);
        }
        if (c->modern) {
            json_t *cache = json_pack("{s:O?, s:O?}", "ttlMs", json_object_get(res, "ttlMs"),
                                      "cacheScope", json_object_get(res, "cacheScope"));
            if (!json_is_integer(json_object_get(res, "ttlMs")) ||
                !json_is_string(json_object_get(res, "cacheScope")))
                check__find(c, CHECK_ERROR, c->last_request,
                            "send ttlMs and cacheScope on every page of a 2026-07-28 list",
                            "page %d lacks ttlMs or cacheScope (required in 2026-07-28)", page + 1);
            else if (first_cache && !json_equal(first_cache, cache))
                check__find(c, CHECK_ERROR, c->last_request,
                            "send the first page's ttlMs and cacheScope on every later page",
                            "page %d's ttlMs/cacheScope differ from the first page's", page + 1);
            if (first_cache == NULL)
                first_cache = json_incref(cache);
            json_decref(cache);
        }
        const json_t *next = json_object_get(res, "nextCursor");
        if (next && !json_is_string(next)) {
            check__find(c, CHECK_ERROR, c->last_request,
                        "send nextCursor as an opaque string, or leave it out on the last page",
                        "nextCursor is not a string");
            next = NULL;
        }
        if (next && cursor && json_equal(next, cursor)) {
            check__find(c, CHECK_ERROR, c->last_request,
                        "encode the position after the page's last item in nextCursor",
                        "nextCursor did not advance (the walk would loop)");
            next = NULL;
        }
        if (next && json_array_size(items) == 0)
            check__find(c, CHECK_WARNING, c->last_request,
                        "leave nextCursor out when nothing follows; fill a page that has one",
                        "page %d is empty but has a nextCursor", page + 1);
        json_decref(cursor);
        cursor = json_incref((json_t *)next);
        json_decref(r);
        if (cursor == NULL || repeated) /* a walk that repeats may never end */
            break;
    }
    json_decref(cursor);
    json_decref(first_cache);
    json_decref(seen);
    /* A cursor the server never issued must be refused, not read as page one. */
    json_t *r = check__request(c, method, json_pack("{s:s}", "cursor", GARBAGE_CURSOR));
    const json_t *err = json_object_get(r, "error");
    if (r && err == NULL)
        check__find(c, CHECK_WARNING, c->last_request,
                    "answer a cursor this server did not issue with JSON-RPC error -32602",
                    "a garbage cursor was answered with a page, not error -32602 (a client "
                    "that sends a stale cursor restarts silently)");
    else if (err && json_integer_value(json_object_get(err, "code")) != -32602)
        check__find(c, CHECK_WARNING, c->last_request,
                    "use code -32602 (invalid params) for a cursor this server did not issue",
                    "a garbage cursor got error %lld, not -32602 (invalid params)",
                    (long long)json_integer_value(json_object_get(err, "code")));
    json_decref(r);
}

int check_run(const check_options *o, check_transport *t, check_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->server = json_object();
    rep->findings = json_array();
    rep->tools = json_array();
    check_ctx c = {.o = o, .t = t, .rep = rep, .next_id = 1};
    json_t *opening = NULL;
    const json_t *caps = open_session(&c, &opening);
    if (caps == NULL) {
        json_decref(opening);
        json_decref(c.last_request);
        return c.dead ? MCPAGE_EIO : MCPAGE_ESTATE;
    }
    json_t *tools = NULL, *resources = NULL, *other = NULL;
    if (json_object_get(caps, "tools"))
        walk_list(&c, "tools/list", "tools", "name", &tools);
    if (json_object_get(caps, "resources")) {
        walk_list(&c, "resources/list", "resources", "uri", &resources);
        walk_list(&c, "resources/templates/list", "resourceTemplates", "uriTemplate", &other);
        json_decref(other);
    }
    if (json_object_get(caps, "prompts")) {
        walk_list(&c, "prompts/list", "prompts", "name", &other);
        json_decref(other);
    }
    if (!c.dead)
        check__apps(&c, caps, tools, resources);
    json_decref(resources);
    c.tools = tools;
    if (tools && !c.dead)
        check__tools(&c, tools);
    if (t->garbage && *t->garbage > 0) {
        c.scope = "(server)";
        check__find(&c, CHECK_ERROR, NULL,
                    "write logs to stderr; stdout carries only JSON-RPC messages",
                    "stdout carried %zu line(s) that were not JSON-RPC messages (a client may "
                    "fail on them; log to stderr)",
                    *t->garbage);
    }
    json_decref(tools);
    json_decref(opening);
    json_decref(c.last_request);
    json_decref(c.seen);
    return 0;
}

void check_report_free(check_report *rep)
{
    json_decref(rep->server);
    json_decref(rep->findings);
    json_decref(rep->tools);
    json_decref(rep->apps);
    memset(rep, 0, sizeof *rep);
}
