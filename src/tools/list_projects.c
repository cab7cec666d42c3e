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
    .narrow_hint = "Narrow with name=... (a substring) or source=\"claude\" or \"codex\".",
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"Only projects whose name contains this "
    "substring (case-insensitive).\"},"
    "\"source\":{\"type\":\"string\",\"enum\":[\"claude\",\"codex\"],\"description\":\"Only "
    "projects with sessions from this agent.\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"recent\",\"name\",\"size\"],\"default\":\"recent\","
    "\"description\":\"recent: last activity first (default); name: A-Z; size: most messages "
    "first.\"},"
    "\"fields\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Record "
    "fields "
    "to return, from: name, path, sources, session_count, message_count, first_activity, "
    "last_activity (default all; name is always kept).\"}," TOOLS_LIST_WINDOW(20, 100) "}}";

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
    mcpage_list *pg;
    int rc = mcpage_list_begin(ctx->pager, &spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == MCPAGE_PAGE_REJECTED)
        return mcpage_list_finish(pg, res);
    store *s = tools_store_get(ctx, res);
    if (s == NULL) {
        mcpage_list_abort(pg);
        return 0;
    }
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    store_key after;
    int64_t gen = 0, total = w->total;
    store_projects rows = {0};
    if (!tools_key_from_window(w, types, 2, &after)) {
        rc = MCPAGE_EPARSE;
        goto fail;
    }
    store_page page = {.after = w->resume ? &after : NULL, .offset = w->offset, .limit = w->fetch};
    if ((rc = store_generation(s, &gen)) < 0)
        goto fail;
    if (total < 0 || w->generation != gen) {
        if ((rc = store_projects_count(s, &f, &total)) < 0)
            goto fail;
    }
    if ((rc = store_projects_list(s, &f, &page, &rows)) < 0)
        goto fail;
    mcpage_list_set_total(pg, total, gen);
    for (size_t i = 0; i < rows.count; i++) {
        const store_project *p = &rows.rows[i];
        json_t *rec = json_object();
        json_object_set_new(rec, "name", tools_jstr(p->name));
        json_object_set_new(rec, "path", tools_jstr(p->path));
        json_object_set_new(rec, "sources", tools_jstr(p->sources));
        json_object_set_new(rec, "session_count", json_integer(p->session_count));
        json_object_set_new(rec, "message_count", json_integer(p->message_count));
        json_object_set_new(rec, "first_activity", tools_jstr(p->first_activity));
        json_object_set_new(rec, "last_activity", tools_jstr(p->last_activity));
        mcpage_keypart parts[STORE_KEY_PARTS];
        int np = tools_key_to_parts(&p->key, parts);
        rc = mcpage_list_add(pg, rec, parts, np);
        if (rc < 0)
            goto fail;
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    store_projects_free(&rows);
    tools_store_put(ctx, s);
    return mcpage_list_finish(pg, res);
fail:
    store_projects_free(&rows);
    mcpage_list_abort(pg);
    tools_store_error(res, s, rc, "projects");
    tools_store_put(ctx, s);
    return 0;
}

int tool_list_projects_register(mcpage_server *srv, tools_ctx *ctx)
{
    mcpage_tool t = {
        .name = "list_projects",
        .title = "List projects",
        .description =
            "Lists the projects (working directories) in the archive of coding-agent "
            "conversations, with their sources, session and message counts and first and last "
            "activity. Sorted by recent activity by default (sort=name or size). Pages of 20 "
            "records by default (limit up to 100) within a 4,000-token budget (max_tokens up to "
            "20,000). Page on with next_cursor (constant cost at any depth) or next_offset (cost "
            "grows with the offset). Use a project name with list_sessions(project=...).",
        .input_schema = schema,
        .output_schema = TOOLS_LIST_OUTPUT("projects"),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
    };
    return mcpage_server_add_tool(srv, &t);
}
