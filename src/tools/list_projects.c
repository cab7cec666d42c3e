/*
 * list_projects (LIST, unit projects): the archive's projects with their
 * sources, session and message counts and first and last activity.
 */
#include <string.h>

#include "tools/tools.h"

static const char *const fields[] = {
    "name",          "path",           "sources",       "session_count",
    "message_count", "first_activity", "last_activity", NULL};
static const char *const id_fields[] = {"name", NULL};

static const mcpage_list_spec spec = {
    .tool = "list_projects",
    .unit = "projects",
    .default_limit = 20,
    .max_limit = 100,
    .fields = fields,
    .id_fields = id_fields,
    .narrow_hint =
        "Narrow with name=... (a substring) or source=\"claude\", \"codex\", \"gemini\", "
        "\"copilot\", \"opencode\" or \"cursor\".",
    .layout = MCPAGE_LIST_COLUMNS,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"Only projects whose name contains this "
    "substring (case-insensitive).\"},"
    "\"source\":{\"type\":\"string\"," TOOLS_SOURCE_ENUM ",\"description\":\"Only "
    "projects with sessions from this agent.\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"recent\",\"name\",\"size\"],\"default\":\"recent\","
    "\"description\":\"recent: last activity first (default); name: A-Z; size: most messages "
    "first.\"}}}";

static int count(store *s, void *ud, int64_t *total)
{
    return store_projects_count(s, ud, total);
}

static int fetch(store *s, void *ud, const store_page *page, mcpage_list *pg)
{
    store_projects rows = {0};
    int rc = store_projects_list(s, ud, page, &rows);
    for (size_t i = 0; rc >= 0 && i < rows.count; i++) {
        const store_project *p = &rows.rows[i];
        json_t *rec = json_object();
        json_object_set_new(rec, "name", tools_jstr(p->name));
        json_object_set_new(rec, "path", tools_jstr(p->path));
        json_object_set_new(rec, "sources", tools_jstr(p->sources));
        json_object_set_new(rec, "session_count", json_integer(p->session_count));
        json_object_set_new(rec, "message_count", json_integer(p->message_count));
        json_object_set_new(rec, "first_activity", tools_jtime(p->first_activity));
        json_object_set_new(rec, "last_activity", tools_jtime(p->last_activity));
        rc = tools_list_add(pg, rec, &p->key);
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    store_projects_free(&rows);
    return rc < 0 ? rc : 0;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    store_project_filter f = {.name_contains = tools_arg_str(args, "name"),
                              .source = tools_arg_str(args, "source")};
    const char *sort = tools_arg_str(args, "sort");
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    if (sort && strcmp(sort, "name") == 0) {
        f.sort = STORE_PROJECTS_NAME;
    } else if (sort && strcmp(sort, "size") == 0) {
        f.sort = STORE_PROJECTS_SIZE;
        types[0] = STORE_KEY_INT;
    }
    tools_list_walk walk = {&spec, types, 2, "projects", count, fetch, NULL, &f, call, NULL};
    return tools_list_run(ctx, &walk, res);
}

int tools_list_projects_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1000];
    (void)snprintf(
        desc, sizeof desc,
        "Lists the projects (working directories) in the archive of coding-agent "
        "conversations. Records come as arrays in the order of `columns` (text copy: a "
        "tab-separated header, one line per project): name, path, sources, session_count, "
        "message_count, first_activity, last_activity (UTC, to the minute). Sorted by recent "
        "activity by default (sort=name or size). Pages of %s records by default (limit up to "
        "%s) within %s. Page on with next_cursor (constant cost at any depth) or next_offset "
        "(cost grows with the offset). Use a project name with list_sessions(project=...).",
        page_fmt_int(spec.default_limit, d), page_fmt_int(spec.max_limit, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "list_projects",
        .title = "List projects",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LIST_COLUMNS_OUTPUT("projects", ""),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return mcpage_server_add_list_tool(srv, &t, &spec);
}
