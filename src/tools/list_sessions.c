/*
 * list_sessions (LIST, unit sessions): sessions newest first (or oldest),
 * filtered by project, source, dates, model and git branch.
 */
#include <string.h>

#include "tools/tools.h"

static const char *const fields[] = {"session_id", "project",           "title",  "started_at",
                                     "ended_at",   "messages",          "source", "model",
                                     "branch",     "parent_session_id", NULL};
/* Lean by default (issue 23): end time, model, branch and parent are one
   `fields` away, and the description says so. */
static const char *const default_fields[] = {"session_id", "project", "title", "started_at",
                                             "messages",   "source",  NULL};
static const char *const id_fields[] = {"session_id", NULL};

/* Any oversized field of a session is read through its transcript. */
static json_t *read_with(const json_t *record, const char *field, void *ud)
{
    (void)field;
    (void)ud;
    const json_t *id = json_object_get(record, "session_id");
    if (!json_is_string(id))
        return NULL;
    return json_pack("{s:s, s:{s:O}}", "tool", "read_session", "arguments", "session_id", id);
}

static const mcpage_list_spec spec = {
    .tool = "list_sessions",
    .unit = "sessions",
    .default_limit = 20,
    .max_limit = 100,
    .fields = fields,
    .default_fields = default_fields,
    .id_fields = id_fields,
    .narrow_hint = "Narrow with project=..., source=..., after=YYYY-MM-DD or before=YYYY-MM-DD.",
    .read_with = read_with,
    .layout = MCPAGE_LIST_COLUMNS,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"project\":{\"type\":\"string\",\"description\":\"Only sessions of this project (its name "
    "as list_projects shows it, or its full path).\"},"
    "\"source\":{\"type\":\"string\"," TOOLS_SOURCE_ENUM ",\"description\":\"Only "
    "sessions of this agent: claude (Claude Code), codex (Codex CLI), gemini (Gemini CLI), "
    "copilot (GitHub Copilot CLI), opencode (OpenCode) or cursor (Cursor's agent CLI).\"},"
    "\"after\":{\"type\":\"string\",\"description\":\"Only sessions started at or after this UTC "
    "date or time: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.\"},"
    "\"before\":{\"type\":\"string\",\"description\":\"Only sessions started before this UTC date "
    "or time: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.\"},"
    "\"model\":{\"type\":\"string\",\"description\":\"Only sessions whose last model is exactly "
    "this, e.g. claude-sonnet-4-5.\"},"
    "\"branch\":{\"type\":\"string\",\"description\":\"Only sessions on this git branch "
    "(exact).\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"newest\",\"oldest\"],\"default\":\"newest\","
    "\"description\":\"newest: latest start first (default); oldest: earliest first.\"}}}";

static int count(store *s, void *ud, int64_t *total)
{
    return store_sessions_count(s, ud, total);
}

static int fetch(store *s, void *ud, const store_page *page, mcpage_list *pg)
{
    store_sessions rows = {0};
    int rc = store_sessions_list(s, ud, page, &rows);
    /* Fields the page does not show are not made (the defaults leave four out). */
    bool ended = mcpage_list_wants(pg, "ended_at"), model = mcpage_list_wants(pg, "model"),
         branch = mcpage_list_wants(pg, "branch"),
         parent = mcpage_list_wants(pg, "parent_session_id");
    for (size_t i = 0; rc >= 0 && i < rows.count; i++) {
        const store_session *r = &rows.rows[i];
        /* As cells: the page writes them without making a JSON object. */
        list_cell c[10];
        size_t n = 0;
        char started[18], ended_at[18];
        tools_cell_str(c, &n, "session_id", r->session_id);
        tools_cell_str(c, &n, "project", r->project);
        tools_cell_str(c, &n, "title", r->title);
        tools_cell_time(c, &n, "started_at", r->started_at, started);
        if (ended)
            tools_cell_time(c, &n, "ended_at", r->ended_at, ended_at);
        tools_cell_int(c, &n, "messages", r->message_count);
        tools_cell_str(c, &n, "source", r->source);
        if (model)
            tools_cell_str(c, &n, "model", r->model);
        if (branch)
            tools_cell_str(c, &n, "branch", r->git_branch);
        if (parent)
            tools_cell_str(c, &n, "parent_session_id", r->parent_session_id);
        rc = tools_list_add_cells(pg, c, n, &r->key);
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    store_sessions_free(&rows);
    return rc < 0 ? rc : 0;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    if (!tools_check_date(spec.tool, args, "after", res) ||
        !tools_check_date(spec.tool, args, "before", res))
        return 0;
    store_session_filter f = {
        .project = tools_arg_str(args, "project"),
        .source = tools_arg_str(args, "source"),
        .after = tools_arg_str(args, "after"),
        .before = tools_arg_str(args, "before"),
        .model = tools_arg_str(args, "model"),
        .branch = tools_arg_str(args, "branch"),
    };
    const char *sort = tools_arg_str(args, "sort");
    if (sort && strcmp(sort, "oldest") == 0)
        f.order = STORE_OLDEST;
    static const store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_TEXT};
    tools_list_walk walk = {&spec, types, 2,  "sessions", count,
                            fetch, NULL,  &f, call,       f.project ? "project" : NULL};
    return tools_list_run(ctx, &walk, res);
}

int tools_list_sessions_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1400];
    (void)snprintf(
        desc, sizeof desc,
        "Lists coding-agent sessions (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, "
        "OpenCode, Cursor's agent CLI), newest first (sort=oldest for the other way). Records "
        "come as arrays in the order of `columns` (text copy: a tab-separated header, one line "
        "per session): session_id, project, title, started_at (UTC, to the minute), messages, "
        "source; ended_at, model, branch and parent_session_id via fields=[...]. Filtered by "
        "project, the page says project once. Filters: project, source, after and before (UTC "
        "dates YYYY-MM-DD, after inclusive, before exclusive), model, branch. Pages of %s records "
        "by default (limit up to %s) within %s. Page on with next_cursor (same cost at any depth, "
        "and no session repeated or skipped while new ones arrive) or next_offset (cost grows "
        "with the offset). Read one with read_session(session_id=...).",
        page_fmt_int(spec.default_limit, d), page_fmt_int(spec.max_limit, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "list_sessions",
        .title = "List sessions",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LIST_COLUMNS_OUTPUT(
            "sessions", "\"project\":{\"type\":\"string\",\"description\":\"The project of "
                        "every session on the page (filtered by project).\"},"),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
        .meta = TOOLS_APP_TOOL_META,
    };
    return mcpage_server_add_list_tool(srv, &t, &spec);
}
