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
    .narrow_hint = "search_conversations gives the line of each match; start there.",
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session_id\"],"
    "\"properties\":{"
    "\"session_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The session, as "
    "list_sessions or search_conversations gives it.\"},"
    "\"start_line\":{\"type\":\"integer\",\"minimum\":1,\"default\":1,\"description\":\"First line "
    "to show, 1-based (default 1). Jumping to any line costs the same.\"},"
    "\"start_column\":{\"type\":\"integer\",\"minimum\":1,\"default\":1,\"description\":"
    "\"Character "
    "of start_line to begin at, 1-based (default 1): pass next_start_column to continue a line "
    "too long for one page.\"},"
    "\"max_lines\":{\"type\":\"integer\",\"minimum\":1,\"default\":200,\"description\":\"Lines per "
    "page (default 200, maximum 2000; a larger value is lowered to 2000 and flagged "
    "max_lines_clamped).\"}," TOOLS_MAX_TOKENS "}}";

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

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    const char *id = tools_arg_str(args, "session_id");
    mcpage_lines *pg;
    int rc = mcpage_lines_begin(ctx->pager, &spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == MCPAGE_PAGE_REJECTED)
        return mcpage_lines_finish(pg, res);
    store *s = tools_store_get(ctx, res);
    if (s == NULL) {
        mcpage_lines_abort(pg);
        return 0;
    }
    store_session ses;
    rc = store_session_get(s, id, &ses);
    if (rc < 0) {
        mcpage_lines_abort(pg);
        if (rc == MCPAGE_ENOTFOUND)
            mcpage_reject_argument(res, spec.tool, "session_id",
                                   json_object_get(args, "session_id"),
                                   "the id of an archived session (list_sessions shows them)",
                                   "session_id=\"<a session_id from list_sessions>\"");
        else
            tools_store_error(res, s, rc, "the session");
        tools_store_put(ctx, s);
        return 0;
    }
    const mcpage_lines_window *w = mcpage_lines_window_get(pg);
    walk_state ws = {pg};
    int64_t total = 0;
    rc = transcript_walk_ex(s, &ses, w->start_line, on_total, on_line, &ws, &total);
    tools_store_put(ctx, s);
    if (rc < 0) {
        mcpage_lines_abort(pg);
        store_session_clear(&ses);
        return tools_store_error(res, NULL, rc, "the transcript");
    }
    rc = mcpage_lines_finish(pg, res);
    if (rc == 0 && !mcpage_result_is_error(res))
        rc = tools_session_link(res, &ses);
    store_session_clear(&ses);
    return rc;
}

int tool_read_session_register(mcpage_server *srv, tools_ctx *ctx)
{
    mcpage_tool t = {
        .name = "read_session",
        .title = "Read a session transcript",
        .description =
            "Reads one archived session as a transcript with stable line numbers: line 1 names "
            "the session, then each message starts with a header line `### [ordinal] role "
            "timestamp [tool=NAME] [error]` followed by its text (tool calls as `[tool_use NAME] "
            "summary`) and a blank line. Windowed by start_line (1-based, default 1) and "
            "max_lines (default 200, up to 2,000) within a 4,000-token budget (max_tokens up to "
            "20,000); total_lines is exact and any start_line costs the same. Continue with "
            "next_start_line (and next_start_column inside a very long line). "
            "search_conversations gives the line of each match. The session's resource link "
            "follows the page.",
        .input_schema = schema,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
    };
    return mcpage_server_add_tool(srv, &t);
}
