/*
 * file_history (LIST, unit edits): which sessions wrote or edited a file,
 * newest first: every file a tool call changed (Edit, apply_patch,
 * write_file, ...), with the message holding the call, so read_session
 * at that message shows why.
 */
#include <string.h>

#include "tools/tools.h"

static const char *const fields[] = {"path",    "session_id", "message_id", "timestamp",
                                     "agent",   "tool",       "added",      "removed",
                                     "summary", "project",    NULL};
static const char *const default_fields[] = {"path",    "session_id", "message_id", "timestamp",
                                             "agent",   "tool",       "added",      "removed",
                                             "summary", NULL};
static const char *const id_fields[] = {"session_id", "message_id", NULL};

static const mcpage_list_spec spec = {
    .tool = "file_history",
    .unit = "edits",
    .default_limit = 20,
    .max_limit = 100,
    .fields = fields,
    .default_fields = default_fields,
    .id_fields = id_fields,
    .narrow_hint = "Read an edit in context with read_session(message_id=...) of its record; "
                   "narrow with path=..., project=..., agent=..., after=YYYY-MM-DD or "
                   "before=YYYY-MM-DD.",
    .read_with = tools_read_with_message,
    .layout = MCPAGE_LIST_COLUMNS,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"path\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The file: an absolute path "
    "(exact), a trailing part such as src/foo.c (matches any folder ending so), or a glob with * "
    "and ? (e.g. src/*.c; * also crosses folders). Omitted: every edit.\"},"
    "\"project\":{\"type\":\"string\",\"description\":\"Only edits of this project (its name as "
    "list_projects shows it, or its full path).\"},"
    "\"agent\":{\"type\":\"string\",\"description\":\"Only edits made by this agent (a source "
    "name as list_sessions shows it: claude, codex, gemini, copilot, opencode, cursor, or a "
    "described agent such as qwen).\"},"
    "\"after\":{\"type\":\"string\",\"description\":\"Only edits at or after this UTC date or "
    "time: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.\"},"
    "\"before\":{\"type\":\"string\",\"description\":\"Only edits before this UTC date or time: "
    "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.\"}}}";

static int count(store *s, void *ud, int64_t *total)
{
    return store_edits_count(s, ud, total);
}

/* A line count, or null where the call does not show it. */
static void cell_lines(list_cell *c, size_t *n, const char *name, int64_t v)
{
    if (v < 0)
        tools_cell_str(c, n, name, NULL);
    else
        tools_cell_int(c, n, name, v);
}

static int fetch(store *s, void *ud, const store_page *page, mcpage_list *pg)
{
    store_edits rows = {0};
    int rc = store_edits_list(s, ud, page, &rows);
    for (size_t i = 0; rc >= 0 && i < rows.count; i++) {
        const store_edit_row *r = &rows.rows[i];
        list_cell c[10];
        size_t n = 0;
        char ts[18];
        tools_cell_str(c, &n, "path", r->path);
        tools_cell_str(c, &n, "session_id", r->session_id);
        if (r->message_id > 0)
            tools_cell_int(c, &n, "message_id", r->message_id);
        else
            tools_cell_str(c, &n, "message_id", NULL);
        tools_cell_time(c, &n, "timestamp", r->timestamp, ts);
        tools_cell_str(c, &n, "agent", r->source);
        tools_cell_str(c, &n, "tool", r->tool);
        cell_lines(c, &n, "added", r->added);
        cell_lines(c, &n, "removed", r->removed);
        tools_cell_str(c, &n, "summary", r->summary);
        tools_cell_str(c, &n, "project", r->project);
        rc = tools_list_add_cells(pg, c, n, &r->key);
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    store_edits_free(&rows);
    return rc < 0 ? rc : 0;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    if (!tools_check_date(spec.tool, args, "after", res) ||
        !tools_check_date(spec.tool, args, "before", res))
        return 0;
    const json_t *path = json_object_get(args, "path");
    if (json_is_string(path) && json_string_length(path) > STORE_EDIT_PATH_MAX) {
        mcpage_reject_argument(res, spec.tool, "path", path,
                               "a file path of at most 4096 bytes: absolute, a trailing part "
                               "(src/foo.c) or a glob (src/*.c)",
                               "path=\"src/main.c\"");
        return 0;
    }
    store_edit_filter f = {
        .path = tools_arg_str(args, "path"),
        .project = tools_arg_str(args, "project"),
        .source = tools_arg_str(args, "agent"),
        .after = tools_arg_str(args, "after"),
        .before = tools_arg_str(args, "before"),
    };
    static const store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    tools_list_walk walk = {&spec, types, 2,  "edits", count,
                            fetch, NULL,  &f, call,    f.project ? "project" : NULL};
    return tools_list_run(ctx, &walk, res);
}

int tools_file_history_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1600];
    (void)snprintf(
        desc, sizeof desc,
        "Which sessions changed a file, and why: every file a coding agent's tool call wrote or "
        "edited (Claude Code Edit/MultiEdit/Write/NotebookEdit, Codex apply_patch, Gemini CLI "
        "write_file/replace, OpenCode edit/write/patch, Copilot CLI edit/create, and the "
        "described agents' equivalents), newest first. Records come as arrays in the order of "
        "`columns` (text copy: a tab-separated header, one line per edit): path (absolute), "
        "session_id, message_id (the message holding the call), timestamp (UTC, to the minute), "
        "agent, tool, added and removed (lines, null where the call does not show them), summary "
        "(the first changed line); project via fields=[...]. path is exact when absolute, else a "
        "trailing part (src/foo.c) or a glob (src/*.c). Filters: project, agent, after and before "
        "(UTC dates, after inclusive, before exclusive). Read an edit in context with "
        "read_session(message_id=...). Pages of %s records by default (limit up to %s) within %s. "
        "Page on with next_cursor (same cost at any depth, no edit repeated or skipped while "
        "sessions grow) or next_offset (cost grows with the offset).",
        page_fmt_int(spec.default_limit, d), page_fmt_int(spec.max_limit, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "file_history",
        .title = "File history",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LIST_COLUMNS_OUTPUT(
            "edits", "\"project\":{\"type\":\"string\",\"description\":\"The project of every "
                     "edit on the page (filtered by project).\"},"),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return mcpage_server_add_list_tool(srv, &t, &spec);
}
