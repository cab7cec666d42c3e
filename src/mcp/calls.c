/*
 * Work that runs on the worker pool: tools/call (argument validation,
 * defaults, the handler, output checks), resources/read (static
 * resources, then providers, then templates) and prompts/get. A call
 * that was cancelled while it ran sends no response.
 */
#include <mcpage/server.h>

#include <stdio.h>
#include <string.h>

#include "mcp/schema.h"
#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/base64.h"
#include "page/result_internal.h"

/* The contents of one resources/read response. */
struct mcpage_contents {
    jw w;               /* the "contents" array being written */
    size_t n;           /* items added */
    const char *uri;    /* the registered resource being read, or NULL */
    const json_t *meta; /* its _meta, written on items of that uri, or NULL */
};

struct mcpage_prompt_messages {
    json_t *messages;  /* the messages array */
    char *description; /* or NULL */
};

/* Largest resources/read response body. */
#define CONTENTS_MAX_BYTES ((size_t)256 << 20)
/* Most messages one prompt may return. */
#define PROMPT_MAX_MESSAGES 1000

void mcp_call_free(mcpage_call *call)
{
    if (call == NULL)
        return;
    json_decref(call->id);
    json_decref(call->progress_token);
    json_decref(call->args);
    json_decref(call->caps);
    json_decref(call->answers);
    json_decref(call->asks);
    json_decref(call->missing_caps);
    mcpage__free(call->binding);
    mcpage__free(call->fail_message);
    mcpage__free(call->uri);
    mcpage__free((char *)call->caller.subject);
    mcpage__free((char *)call->caller.scopes);
    mcpage__free((char *)call->caller.groups);
    mcpage__free(call);
}

const mcpage_caller *mcpage_call_caller(const mcpage_call *call)
{
    static const mcpage_caller nobody = {0};
    return call ? &call->caller : &nobody;
}

/*
 * Adds the paging contract's error shape to a schema rejection, so a
 * caller reads the same {"error": {"code": "invalid_argument", "param",
 * "got", "expected"}} whether the schema or the tool caught it. The
 * parameter is the first quoted name in the validator's message, without
 * an array index ("fields[0]", an item the schema's enum does not list, is
 * parameter "fields"; "region.rows" stays); the message keeps the index.
 */
static void schema_error_structured(mcpage_result *res, const json_t *args, const char *why)
{
    char param[128] = "arguments";
    const char *q = strchr(why, '\'');
    const char *e = q ? strchr(q + 1, '\'') : NULL;
    if (q && e && (size_t)(e - q - 1) < sizeof param) {
        memcpy(param, q + 1, (size_t)(e - q - 1));
        param[e - q - 1] = '\0';
        param[strcspn(param, "[")] = '\0';
        if (param[0] == '\0')
            (void)snprintf(param, sizeof param, "arguments");
    }
    json_t *err = json_pack("{s:s, s:s, s:s, s:s}", "code", "invalid_argument", "param", param,
                            "expected", why, "message", why);
    const json_t *got = json_is_object(args) ? json_object_get(args, param) : NULL;
    if (err && got)
        json_object_set(err, "got", (json_t *)got);
    json_t *o = err ? json_pack("{s:o}", "error", err) : NULL;
    if (o)
        mcpage_result_set_structured(res, o);
    json_decref(o);
}

/*
 * Begins the page of a tool registered with its window, from the call's
 * arguments, into call->page. MCPAGE_PAGE_REJECTED when the builder
 * rejected the window: `res` then holds its answer (the parameter, the
 * expected range, one valid example call) and no page is open. 0 with the
 * page open (or for a tool without a window), or a negative status.
 */
static int page_open(mcpage_call *call, mcpage_result *res)
{
    const mcp_tool *t = call->tool;
    const mcpage_pager *p = call->srv->pager;
    int rc = 0;
    switch (t->window) {
    case MCP_WINDOW_LIST:
        rc = mcpage_list_begin(p, t->spec, call->args, &call->page.list);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_list_finish(call->page.list, res) != 0)
            rc = MCPAGE_ENOMEM;
        break;
    case MCP_WINDOW_LINES:
        rc = mcpage_lines_begin(p, t->spec, call->args, &call->page.lines);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_lines_finish(call->page.lines, res) != 0)
            rc = MCPAGE_ENOMEM;
        break;
    case MCP_WINDOW_BYTES:
        rc = mcpage_bytes_begin(p, t->spec, call->args, &call->page.bytes);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_bytes_finish(call->page.bytes, res) != 0)
            rc = MCPAGE_ENOMEM;
        break;
    case MCP_WINDOW_GRID:
        rc = mcpage_grid_begin(p, t->spec, call->args, &call->page.grid);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_grid_finish(call->page.grid, res) != 0)
            rc = MCPAGE_ENOMEM;
        break;
    case MCP_WINDOW_NONE:
        break;
    }
    if (rc != 0) /* rejected (finish freed the page) or failed (begin left none) */
        memset(&call->page, 0, sizeof call->page);
    return rc;
}

/*
 * For a tool registered without its window whose inputSchema holds the
 * window parameters mcpage_*_schema generated: the builder judges the
 * window (its page is dropped). MCPAGE_PAGE_REJECTED with the builder's
 * answer in res, 0 when it accepts the window, or a negative status.
 */
static int judge_window(mcpage_call *call, mcpage_result *res)
{
    const mcp_tool *t = call->tool;
    const mcpage_pager *p = call->srv->pager;
    int rc = 0;
    switch (t->judge) {
    case MCP_WINDOW_LIST: {
        mcpage_list *pg = NULL;
        rc = mcpage_list_begin(p, t->judge_spec, call->args, &pg);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_list_finish(pg, res) != 0)
            rc = MCPAGE_ENOMEM;
        else if (rc == 0)
            mcpage_list_abort(pg);
        break;
    }
    case MCP_WINDOW_LINES: {
        mcpage_lines *pg = NULL;
        rc = mcpage_lines_begin(p, t->judge_spec, call->args, &pg);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_lines_finish(pg, res) != 0)
            rc = MCPAGE_ENOMEM;
        else if (rc == 0)
            mcpage_lines_abort(pg);
        break;
    }
    case MCP_WINDOW_BYTES: {
        mcpage_bytes *pg = NULL;
        rc = mcpage_bytes_begin(p, t->judge_spec, call->args, &pg);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_bytes_finish(pg, res) != 0)
            rc = MCPAGE_ENOMEM;
        else if (rc == 0)
            mcpage_bytes_abort(pg);
        break;
    }
    case MCP_WINDOW_GRID: {
        mcpage_grid *pg = NULL;
        rc = mcpage_grid_begin(p, t->judge_spec, call->args, &pg);
        if (rc == MCPAGE_PAGE_REJECTED && mcpage_grid_finish(pg, res) != 0)
            rc = MCPAGE_ENOMEM;
        else if (rc == 0)
            mcpage_grid_abort(pg);
        break;
    }
    case MCP_WINDOW_NONE:
        break;
    }
    return rc;
}

/*
 * Ends the page page_open began, after the handler returned `rc`: writes
 * it into `res` when the handler succeeded (0, or MCPAGE_PAGE_FULL: it
 * stopped at a full page), else drops it (a negative status, or an error
 * result the handler wrote itself). Returns the call's status.
 */
static int page_close(mcpage_call *call, int rc, mcpage_result *res)
{
    bool keep = rc >= 0 && !mcpage_result_is_error(res);
    if (rc > 0)
        rc = 0;
    switch (call->tool->window) {
    case MCP_WINDOW_LIST:
        if (keep)
            rc = mcpage_list_finish(call->page.list, res);
        else
            mcpage_list_abort(call->page.list);
        break;
    case MCP_WINDOW_LINES:
        if (keep)
            rc = mcpage_lines_finish(call->page.lines, res);
        else
            mcpage_lines_abort(call->page.lines);
        break;
    case MCP_WINDOW_BYTES:
        if (keep)
            rc = mcpage_bytes_finish(call->page.bytes, res);
        else
            mcpage_bytes_abort(call->page.bytes);
        break;
    case MCP_WINDOW_GRID:
        if (keep)
            rc = mcpage_grid_finish(call->page.grid, res);
        else
            mcpage_grid_abort(call->page.grid);
        break;
    case MCP_WINDOW_NONE:
        break;
    }
    memset(&call->page, 0, sizeof call->page);
    return rc;
}

mcpage_list *mcpage_call_list(mcpage_call *call)
{
    return call->tool && call->tool->window == MCP_WINDOW_LIST ? call->page.list : NULL;
}

mcpage_lines *mcpage_call_lines(mcpage_call *call)
{
    return call->tool && call->tool->window == MCP_WINDOW_LINES ? call->page.lines : NULL;
}

mcpage_bytes *mcpage_call_bytes(mcpage_call *call)
{
    return call->tool && call->tool->window == MCP_WINDOW_BYTES ? call->page.bytes : NULL;
}

mcpage_grid *mcpage_call_grid(mcpage_call *call)
{
    return call->tool && call->tool->window == MCP_WINDOW_GRID ? call->page.grid : NULL;
}

/*
 * Runs a tool's handler on arguments the schema accepted. For a tool
 * registered with its window the runtime runs the page around it: the
 * builder judges the window first (a rejected window never reaches the
 * handler), and the page the handler filled is finished after it.
 */
static int run_handler(mcpage_call *call, mcpage_result *res)
{
    int rc = page_open(call, res);
    if (rc == MCPAGE_PAGE_REJECTED)
        return 0;
    if (rc == 0)
        rc = page_close(call, call->tool->handler(call, call->args, res), res);
    return rc;
}

/*
 * Answers a call that ends otherwise than with its result: a JSON-RPC
 * error the handler chose (mcpage_call_fail), -32021 for a capability the
 * client lacks, or (modern era) an InputRequiredResult with the asks of
 * this round. False when none of these happened.
 */
static bool answered_with_needs(mcpage_call *call)
{
    if (mcpage_call_cancelled(call))
        return false;
    if (call->fail_code) {
        mcp_send_error(call->s, call->id, call->fail_code, call->fail_message, NULL);
        return true;
    }
    if (call->missing_caps) {
        mcp_send_missing_caps(call);
        return true;
    }
    if (mcpage_call_is_modern(call) && json_object_size(call->asks) > 0) {
        mcp_send_input_required(call);
        return true;
    }
    return false;
}

/* Runs a tool call; true when it became a task that now waits for input (see mcp_call_run). */
static bool run_tool(mcpage_call *call)
{
    const mcp_tool *tool = call->tool;
    mcpage_server *srv = call->srv;
    mcpage_result *res = mcpage_result_new();
    if (res == NULL) {
        if (call->s)
            mcp_send_error(call->s, call->id, RPC_INTERNAL_ERROR, "Internal error: out of memory",
                           NULL);
        return false;
    }
    char why[512];
    if (!schema_validate(tool->input_schema, call->args, true, why, sizeof why)) {
        /* The builder judges the window too: a bad window gets its remedy, not ours. */
        int judged = page_open(call, res);
        if (judged == 0)
            page_close(call, MCPAGE_ECANCELED, res); /* it accepts the window: drop the page */
        if (judged == 0 && call->tool->window == MCP_WINDOW_NONE)
            judged = judge_window(call, res); /* generated window parameters, added by hand */
        if (judged != MCPAGE_PAGE_REJECTED) {
            mcpage_result_errorf(res,
                                 "Invalid arguments for tool '%s': %s. Fix this argument and call "
                                 "again; the inputSchema of '%s' in tools/list describes every "
                                 "parameter.",
                                 tool->name, why, tool->name);
            schema_error_structured(res, call->args, why);
        }
    } else {
        int rc = run_handler(call, res);
        if (rc != 0) {
            if (mcpage_result_block_count(res) == 0)
                mcpage_result_errorf(res, "Tool '%s' failed: %s", tool->name, mcpage_strerror(rc));
            mcpage_result_set_error(res, true);
        }
        if (!mcpage_result_is_error(res) && tool->output_schema && srv->cfg.validate_output) {
            size_t len = 0;
            const char *sc = mcpage_result_structured(res, &len);
            json_t *v = sc ? json_loadb(sc, len, 0, NULL) : NULL;
            bool ok = v != NULL;
            if (sc == NULL)
                (void)snprintf(why, sizeof why, "no structuredContent was set");
            else if (v == NULL)
                (void)snprintf(why, sizeof why, "structuredContent is not valid JSON");
            else
                ok = schema_validate(tool->output_schema, v, false, why, sizeof why);
            json_decref(v);
            if (!ok) {
                (void)fprintf(stderr, "mcpage: tool '%s' broke its outputSchema: %s\n", tool->name,
                              why);
                mcpage_result_errorf(res,
                                     "Tool '%s' returned a result that does not match its "
                                     "outputSchema (a server bug): %s",
                                     tool->name, why);
            }
        }
    }
    bool parked = false;
    if (call->task) {
        parked = mcp_task_settle(call, res); /* the result is the task's now */
    } else if (!answered_with_needs(call) && !mcpage_call_cancelled(call)) {
        jw w;
        jw_init(&w, 0);
        /* One allocation for the response: the head, the result, the era's members. */
        (void)jw_reserve(&w, mcpage__result_size(res) + 512);
        mcp_write_head(&w, call->id);
        mcpage__result_write(res, &w);
        mcp_send_result(call->s, &call->era, &w, call->id, NULL);
    }
    mcpage_result_free(res);
    return parked;
}

/* The registered resource's _meta on an item of its own uri (an MCP App's csp lives there). */
static void contents_meta(mcpage_contents *c, const char *uri)
{
    if (c->meta && c->uri && strcmp(uri, c->uri) == 0) {
        jw_key(&c->w, "_meta");
        jw_json(&c->w, c->meta);
    }
}

int mcpage_contents_add_text(mcpage_contents *c, const char *uri, const char *mime_type,
                             const char *text, size_t len)
{
    if (uri == NULL || (text == NULL && len > 0))
        return MCPAGE_EINVAL;
    jw_object_begin(&c->w);
    jw_kv_string(&c->w, "uri", uri);
    if (mime_type)
        jw_kv_string(&c->w, "mimeType", mime_type);
    jw_key(&c->w, "text");
    jw_stringn(&c->w, text ? text : "", len);
    contents_meta(c, uri);
    jw_object_end(&c->w);
    c->n++;
    return c->w.err;
}

int mcpage_contents_add_blob(mcpage_contents *c, const char *uri, const char *mime_type,
                             const void *data, size_t len)
{
    if (uri == NULL || (data == NULL && len > 0))
        return MCPAGE_EINVAL;
    if (len > CONTENTS_MAX_BYTES / 2)
        return MCPAGE_ERANGE;
    char *b64 = mcpage__malloc(b64_encoded_len(len, false) + 1);
    if (b64 == NULL)
        return MCPAGE_ENOMEM;
    size_t n = b64_encode(data, len, b64, false);
    jw_object_begin(&c->w);
    jw_kv_string(&c->w, "uri", uri);
    if (mime_type)
        jw_kv_string(&c->w, "mimeType", mime_type);
    jw_key(&c->w, "blob");
    jw_stringn(&c->w, b64, n);
    contents_meta(c, uri);
    jw_object_end(&c->w);
    mcpage__free(b64);
    c->n++;
    return c->w.err;
}

static void contents_reset(mcpage_contents *c)
{
    jw_reset(&c->w);
    c->n = 0;
    jw_array_begin(&c->w);
}

static void run_read(mcpage_call *call)
{
    mcpage_server *srv = call->srv;
    const char *uri = call->uri;
    mcpage_contents c = {.uri = NULL, .meta = NULL};
    jw_init(&c.w, CONTENTS_MAX_BYTES);
    contents_reset(&c);
    int rc = MCPAGE_ENOTFOUND;
    for (size_t i = 0; i < srv->nresources && rc == MCPAGE_ENOTFOUND; i++) {
        if (strcmp(srv->resources[i].uri, uri) == 0) {
            call->item_ud = srv->resources[i].ud;
            c.uri = srv->resources[i].uri;
            c.meta = srv->resources[i].meta;
            rc = srv->resources[i].read(call, uri, &c);
            c.uri = NULL;
            c.meta = NULL;
        }
    }
    for (size_t i = 0; i < srv->nproviders && rc == MCPAGE_ENOTFOUND; i++) {
        contents_reset(&c);
        call->item_ud = srv->providers[i].user_data;
        rc = srv->providers[i].read(call, uri, &c);
    }
    for (size_t i = 0; i < srv->ntemplates && rc == MCPAGE_ENOTFOUND; i++) {
        json_t *vars = NULL;
        if (mcpage_uri_template_match(srv->templates[i].uri_template, uri, &vars) != 0)
            continue;
        contents_reset(&c);
        json_decref(call->args);
        call->args = vars;
        call->item_ud = srv->templates[i].ud;
        rc = srv->templates[i].read(call, uri, &c);
    }
    jw_array_end(&c.w);
    if (rc == 0 && c.w.err)
        rc = c.w.err;
    if (mcpage_call_cancelled(call) || answered_with_needs(call)) {
        /* Dropped (the client no longer waits for it), or answered with what it needs. */
    } else if (rc == MCPAGE_ENOTFOUND) {
        char msg[300];
        (void)snprintf(msg, sizeof msg,
                       "Resource not found: '%.200s'; resources/list and "
                       "resources/templates/list name what can be read",
                       uri);
        /* -32002 until 2025-11-25; Invalid Params from 2026-07-28 on (SEP-2164). */
        mcp_send_error(call->s, call->id,
                       mcpage_call_is_modern(call) ? RPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND,
                       msg, json_pack("{s:s}", "uri", uri));
    } else if (rc != 0) {
        char msg[300];
        (void)snprintf(msg, sizeof msg, "Internal error: reading '%.200s' failed: %s", uri,
                       mcpage_strerror(rc));
        mcp_send_error(call->s, call->id, RPC_INTERNAL_ERROR, msg, NULL);
    } else {
        jw w;
        jw_init(&w, 0);
        mcp_write_head(&w, call->id);
        jw_object_begin(&w);
        jw_key(&w, "contents");
        jw_raw_value(&w, c.w.buf, c.w.len);
        jw_object_end(&w);
        mcp_cache cache = mcp_resource_cache(srv);
        mcp_send_result(call->s, &call->era, &w, call->id, &cache);
    }
    jw_free(&c.w);
}

static int add_message(mcpage_prompt_messages *m, const char *role, json_t *content)
{
    if (content == NULL)
        return MCPAGE_ENOMEM;
    if (role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)) {
        json_decref(content);
        return MCPAGE_EINVAL;
    }
    if (json_array_size(m->messages) >= PROMPT_MAX_MESSAGES) {
        json_decref(content);
        return MCPAGE_ERANGE;
    }
    json_t *msg = json_pack("{s:s, s:o}", "role", role, "content", content);
    if (msg == NULL || json_array_append_new(m->messages, msg) != 0)
        return MCPAGE_ENOMEM;
    return 0;
}

int mcpage_prompt_add_text(mcpage_prompt_messages *m, const char *role, const char *text)
{
    if (text == NULL)
        return MCPAGE_EINVAL;
    return add_message(m, role, json_pack("{s:s, s:s}", "type", "text", "text", text));
}

int mcpage_prompt_add_content(mcpage_prompt_messages *m, const char *role, const json_t *content)
{
    if (!json_is_object(content) || !json_is_string(json_object_get(content, "type")))
        return MCPAGE_EINVAL;
    return add_message(m, role, json_deep_copy(content));
}

int mcpage_prompt_set_description(mcpage_prompt_messages *m, const char *description)
{
    char *copy = description ? mcpage__strdup(description) : NULL;
    if (description && copy == NULL)
        return MCPAGE_ENOMEM;
    mcpage__free(m->description);
    m->description = copy;
    return 0;
}

static void run_prompt(mcpage_call *call)
{
    const mcp_prompt *p = call->prompt;
    mcpage_prompt_messages m = {json_array(), NULL};
    int rc = m.messages ? p->handler(call, call->args, &m) : MCPAGE_ENOMEM;
    if (mcpage_call_cancelled(call) || answered_with_needs(call)) {
        /* Dropped, or answered with what it needs. */
    } else if (rc != 0) {
        char msg[300];
        (void)snprintf(msg, sizeof msg, "Prompt '%s' failed: %s", p->name, mcpage_strerror(rc));
        mcp_send_error(call->s, call->id,
                       rc == MCPAGE_EINVAL ? RPC_INVALID_PARAMS : RPC_INTERNAL_ERROR, msg, NULL);
    } else {
        jw w;
        jw_init(&w, 0);
        mcp_write_head(&w, call->id);
        jw_object_begin(&w);
        if (m.description)
            jw_kv_string(&w, "description", m.description);
        jw_key(&w, "messages");
        jw_json(&w, m.messages);
        jw_object_end(&w);
        mcp_send_result(call->s, &call->era, &w, call->id, NULL);
    }
    json_decref(m.messages);
    mcpage__free(m.description);
}

bool mcp_call_run(mcpage_call *call)
{
    if (mcpage_call_cancelled(call)) {
        if (call->task)
            (void)mcp_task_settle(call, NULL); /* the task lets go of the call */
        return false;
    }
    switch (call->kind) {
    case CALL_TOOL:
        return run_tool(call);
    case CALL_READ:
        run_read(call);
        break;
    case CALL_PROMPT:
        run_prompt(call);
        break;
    case CALL_JOB: /* not a request: the worker runs it (server.c) */
        break;
    }
    return false;
}
