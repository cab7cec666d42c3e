/*
 * read_message (CONTENT-line, unit lines): one message's full text,
 * however long, in line windows. It is where an oversized record's
 * _truncated.read_with points.
 */
#include <stdio.h>
#include <string.h>

#include "tools/tools.h"

static const mcpage_lines_spec spec = {
    .tool = "read_message",
    .default_max_lines = 200,
    .max_max_lines = 2000,
    .narrow_hint = NULL,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"message_id\"],"
    "\"properties\":{"
    "\"message_id\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The message, as "
    "search_conversations gives it.\"}}}";

/* Line 1 is a header naming the message; the text follows from line 2. */
static int64_t count_lines(const char *t)
{
    int64_t n = 1;
    if (*t == '\0')
        return n;
    n++;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    mcpage_lines *pg = mcpage_call_lines(call);
    if (pg == NULL)
        return MCPAGE_ESTATE; /* registered without its window: a bug */
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL)
        return 0;
    json_int_t id = json_integer_value(json_object_get(args, "message_id"));
    store_message m;
    int rc = store_message_get(s, id, &m);
    if (rc == MCPAGE_ENOTFOUND)
        tools_reject_message_id(res, spec.tool, json_object_get(args, "message_id"));
    else if (rc < 0)
        tools_store_error(res, s, rc, "the message");
    tools_store_put(ctx, s);
    if (rc < 0)
        return 0;

    const char *text = m.text ? m.text : "";
    mcpage_lines_set_total(pg, count_lines(text));
    const mcpage_lines_window *w = mcpage_lines_window_get(pg);
    char head[600];
    int hn =
        snprintf(head, sizeof head, "### [%lld] %s %s in session %s%s%s%s", (long long)m.ordinal,
                 m.role, m.timestamp ? m.timestamp : "-", m.session_id, m.tool_name ? " tool=" : "",
                 m.tool_name ? m.tool_name : "", m.is_error ? " error" : "");
    int64_t line = 1;
    rc = 0;
    if (w->start_line <= 1)
        rc = mcpage_lines_add(pg, head,
                              hn < 0                     ? 0
                              : (size_t)hn < sizeof head ? (size_t)hn
                                                         : sizeof head - 1);
    line++;

    const char *t = text;
    while (rc == 0 && *text) {
        const char *nl = strchr(t, '\n');
        size_t len = nl ? (size_t)(nl - t) : strlen(t);
        if (line >= w->start_line)
            rc = mcpage_lines_add(pg, t, len);
        line++;
        if (!nl)
            break;
        t = nl + 1;
    }
    store_message_clear(&m);
    return rc < 0 ? rc : 0;
}

int tools_read_message_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[800];
    (void)snprintf(
        desc, sizeof desc,
        "Reads one archived message's full text, however long, in line windows: line 1 is a "
        "header (`### [ordinal] role timestamp in session ID`), its text follows. Windowed by "
        "start_line (1-based, default 1) and max_lines (default %s, up to %s) within %s; "
        "continue with next_start_line (and next_start_column inside a very long line). Texts "
        "longer than 1 MiB were cut when archived; read_raw has the original bytes.",
        page_fmt_int(spec.default_max_lines, d), page_fmt_int(spec.max_max_lines, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "read_message",
        .title = "Read one message",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LINES_OUTPUT,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return mcpage_server_add_lines_tool(srv, &t, &spec);
}
