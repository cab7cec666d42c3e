/*
 * The paging contract test over a whole registry (see tool_contract.h):
 * `mcpage check` (src/check/) run against a session of the server in
 * this process, so the contract has one checker, not two.
 */
#include "tool_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "mcp_capture.h"

/* The in-process transport: one capture session on the server under test. */
static int capture_exchange(void *ud, const json_t *msg, int timeout_ms, json_t **reply, char *why,
                            size_t why_len)
{
    (void)timeout_ms;
    capture *c = ud;
    *reply = NULL;
    char *txt = json_dumps(msg, JSON_COMPACT);
    if (txt == NULL)
        return MCPAGE_ENOMEM;
    capture_clear(c);
    capture_send(c, txt);
    free(txt);
    const json_t *id = json_object_get(msg, "id");
    json_t *m;
    while ((m = capture_take(c)) != NULL) {
        if (id && json_equal(json_object_get(m, "id"), id) && !json_object_get(m, "method")) {
            *reply = m;
            return 0;
        }
        json_decref(m);
    }
    if (id == NULL)
        return 0;
    snprintf(why, why_len, "the session sent no reply");
    return MCPAGE_EIO;
}

void tool_contract_check(mcpage_server *srv, const tool_contract_opts *o, tool_contract_report *rep)
{
    memset(rep, 0, sizeof *rep);
    capture *c = capture_on(srv);
    check_transport t = {.exchange = capture_exchange, .ud = c, .garbage = NULL};
    /* Small windows, so even a small archive takes many pages. */
    check_options co = {.page_size = 3,
                        .max_calls = 1000000,
                        .base_args = o ? o->base_args : NULL,
                        .base_args_ud = o ? o->ud : NULL};
    check_report r;
    if (check_run(&co, &t, &r) != 0)
        rep->failures++;
    size_t i;
    const json_t *v;
    json_array_foreach(r.tools, i, v)
    {
        rep->tools_seen++;
        rep->tools_paged += json_is_true(json_object_get(v, "envelope"));
    }
    json_array_foreach(r.findings, i, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "severity")), "info") == 0)
            continue;
        char *req = json_dumps(json_object_get(v, "request"), JSON_COMPACT);
        fprintf(stderr, "contract: %s: %s: %s\n    request: %s\n",
                json_string_value(json_object_get(v, "severity")),
                json_string_value(json_object_get(v, "scope")),
                json_string_value(json_object_get(v, "message")), req ? req : "-");
        free(req);
        rep->failures++;
    }
    rep->calls = (int)r.calls;
    check_report_free(&r);
    capture_free(c);
}

json_t *tool_contract_call(mcpage_server *srv, const char *tool, json_t *args)
{
    capture *c = capture_on(srv);
    capture_init(c);
    json_t *req =
        json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", 2, "method",
                  "tools/call", "params", "name", tool, "arguments", args ? args : json_object());
    char *txt = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    capture_clear(c);
    capture_send(c, txt);
    free(txt);
    json_t *res = NULL, *m;
    while ((m = capture_take(c)) != NULL) {
        if (res == NULL && json_integer_value(json_object_get(m, "id")) == 2)
            res = json_incref(json_object_get(m, "result"));
        json_decref(m);
    }
    capture_free(c);
    return res;
}

json_t *tool_contract_list(mcpage_server *srv)
{
    capture *c = capture_on(srv);
    capture_init(c);
    json_t *tools = json_array();
    json_t *cursor = NULL;
    do {
        json_t *params = cursor ? json_pack("{s:O}", "cursor", cursor) : json_object();
        json_t *req = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", 3, "method",
                                "tools/list", "params", params);
        char *txt = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        json_decref(cursor);
        cursor = NULL;
        capture_clear(c);
        capture_send(c, txt);
        free(txt);
        json_t *m;
        while ((m = capture_take(c)) != NULL) {
            const json_t *r = json_object_get(m, "result");
            if (json_integer_value(json_object_get(m, "id")) == 3 && r) {
                json_array_extend(tools, json_object_get(r, "tools"));
                cursor = json_incref(json_object_get(r, "nextCursor"));
            }
            json_decref(m);
        }
    } while (cursor);
    capture_free(c);
    return tools;
}
