/*
 * read_session (CONTENT-line, unit lines): a session's transcript as text
 * with stable line numbers (transcript.h), windowed by start_line and
 * max_lines within the token budget; a long line continues with
 * next_start_column. The session's resource link follows the page.
 */
#include <string.h>

#include "tools/tools.h"
#include "tools/transcript.h"

static const mcpage_lines_spec spec = {
    .tool = "read_session",
    .default_max_lines = 200,
    .max_max_lines = 2000,
    .narrow_hint = "Pass message_id=... of a search_conversations match to start at it.",
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"properties\":{"
    "\"session_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The session, as "
    "list_sessions gives it (this or message_id is required).\"},"
    "\"message_id\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Instead of "
    "session_id: the session of this message (a message_id from search_conversations), from "
    "the message's header line unless start_line is past 1.\"}}}";

typedef struct walk_state {
    mcpage_lines *pg; /* the page being built */
} walk_state;

static void on_total(void *ud, int64_t total)
{
    walk_state *ws = ud;
    mcpage_lines_set_total(ws->pg, total);
}

static int on_line(void *ud, const char *line, size_t len)
{
    walk_state *ws = ud;
    int rc = mcpage_lines_add(ws->pg, line, len);
    return rc == MCPAGE_PAGE_FULL ? 1 : rc;
}

static int run_window(mcpage_call *call, tools_ctx *ctx, const json_t *args, mcpage_result *res);

/* The session named by session_id, or else by message_id's message. */
static int session_of(store *s, const json_t *args, store_session *out, mcpage_result *res)
{
    if (tools_arg_str(args, "session_id") || !json_is_integer(json_object_get(args, "message_id")))
        return tools_session_find(s, spec.tool, args, out, res);
    json_t *a = json_pack("{s:s}", "session_id", "");
    store_message m;
    int rc = store_message_get(s, json_integer_value(json_object_get(args, "message_id")), &m);
    if (rc == 0) {
        json_object_set_new(a, "session_id", json_string(m.session_id));
        store_message_clear(&m);
    }
    if (rc == MCPAGE_ENOTFOUND)
        tools_reject_message_id(res, spec.tool, json_object_get(args, "message_id"));
    else if (rc < 0)
        tools_store_error(res, s, rc, "the message");
    else
        rc = tools_session_find(s, spec.tool, a, out, res);
    json_decref(a);
    return rc;
}

/*
 * The arguments the window is read from: with message_id and start_line
 * absent or 1, start_line is the message's header line. A new reference,
 * or NULL after writing the error result.
 */
static json_t *window_args(tools_ctx *ctx, const mcpage_call *call, const json_t *args,
                           mcpage_result *res)
{
    const json_t *mid = json_object_get(args, "message_id");
    const json_t *sl = json_object_get(args, "start_line");
    /* The runtime fills in start_line's default 1, so 1 means "not given". */
    if (!json_is_integer(mid) || (json_is_integer(sl) && json_integer_value(sl) != 1) ||
        tools_arg_str(args, "session_id"))
        return json_incref((json_t *)args);
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL)
        return NULL;
    store_message m;
    int64_t line = 0;
    int rc = store_message_get(s, json_integer_value(mid), &m);
    if (rc == 0) {
        rc = transcript_message_line(s, m.session_id, m.ordinal, &line);
        store_message_clear(&m);
    }
    if (rc == MCPAGE_ENOTFOUND)
        tools_reject_message_id(res, spec.tool, mid);
    else if (rc < 0)
        tools_store_error(res, s, rc, "the message");
    tools_store_put(ctx, s);
    if (rc < 0)
        return NULL;
    json_t *a = json_copy((json_t *)args);
    if (a)
        json_object_set_new(a, "start_line", json_integer(line));
    return a;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    if (!tools_arg_str(args, "session_id") && !json_is_integer(json_object_get(args, "message_id")))
        return mcpage_reject_argument(
            res, spec.tool, "session_id", json_object_get(args, "session_id"),
            "session_id (from list_sessions) or message_id (from search_conversations)",
            "session_id=\"<a session_id from list_sessions>\"");
    json_t *wargs = window_args(ctx, call, args, res);
    if (wargs == NULL)
        return 0;
    int rc = run_window(call, ctx, wargs, res);
    json_decref(wargs);
    return rc;
}

static int run_window(mcpage_call *call, tools_ctx *ctx, const json_t *args, mcpage_result *res)
{
    mcpage_lines *pg;
    int rc = mcpage_lines_begin(mcpage_call_pager(call), &spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == MCPAGE_PAGE_REJECTED)
        return mcpage_lines_finish(pg, res);
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL) {
        mcpage_lines_abort(pg);
        return 0;
    }
    store_session ses;
    if (session_of(s, args, &ses, res) < 0) {
        mcpage_lines_abort(pg);
        tools_store_put(ctx, s);
        return 0;
    }
    const mcpage_lines_window *w = mcpage_lines_window_get(pg);
    walk_state ws = {pg};
    int64_t total = 0;
    rc = transcript_walk_ex(s, &ses, w->start_line, on_total, on_line, &ws, &total);
    if (rc < 0) { /* the store's message says what failed (a damaged text: issue 35) */
        mcpage_lines_abort(pg);
        store_session_clear(&ses);
        rc = tools_store_error(res, s, rc, "the transcript");
        tools_store_put(ctx, s);
        return rc;
    }
    tools_store_put(ctx, s);
    rc = mcpage_lines_finish(pg, res);
    if (rc == 0 && !mcpage_result_is_error(res))
        rc = tools_session_link(res, &ses);
    store_session_clear(&ses);
    return rc;
}

/*
 * Registered with tools_add_windowed(), not mcpage_server_add_lines_tool(): it
 * begins its own page, from a start_line that message_id may move, and
 * adds the session's resource link after the page. The window's schema
 * still comes from the spec.
 */
int tools_read_session_register(mcpage_server *srv, tools_ctx *ctx)
{
    const mcpage_pager *p = mcpage_server_pager(srv);
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1200];
    (void)snprintf(
        desc, sizeof desc,
        "Reads one archived session as a transcript with stable line numbers: line 1 names "
        "the session, then each message starts with a header line `### [ordinal] role "
        "timestamp [tool=NAME] [error]` followed by its text (tool calls as `[tool_use NAME] "
        "summary`) and a blank line. Windowed by start_line (1-based, default 1) and "
        "max_lines (default %s, up to %s) within %s; total_lines is exact and any start_line "
        "costs the same. Continue with next_start_line (and next_start_column inside a very "
        "long line). read_session(message_id=...) opens the session of a search_conversations "
        "match at that message. The session's resource link follows the page.",
        page_fmt_int(spec.default_max_lines, d), page_fmt_int(spec.max_max_lines, m),
        tools_budget_words(p, budget, sizeof budget));
    mcpage_tool t = {
        .name = "read_session",
        .title = "Read a session transcript",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LINES_OUTPUT,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
        .meta = TOOLS_APP_TOOL_META,
    };
    return tools_add_windowed(srv, &t, mcpage_lines_schema(p, &spec));
}
