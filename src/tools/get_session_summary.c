/*
 * get_session_summary (not paged: small and bounded): one session's
 * metadata, messages per role, tools used, error count, the start of
 * its first prompt and its transcript's size in lines, with the
 * session's resource link.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"
#include "tools/transcript.h"
#include "tools/usage.h"

/* The first prompt is cut to this many bytes (at a character boundary). */
#define FIRST_PROMPT_MAX 1000
/* Tools listed, most used first. */
#define TOOLS_SHOWN 40

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session_id\"],"
    "\"properties\":{\"session_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The "
    "session, as list_sessions or search_conversations gives it.\"}}}";

static const char output_schema[] =
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"session_id\",\"messages\","
    "\"messages_by_role\",\"tools_used\",\"transcript_lines\",\"resource_uri\"]},"
    "{\"required\":[\"error\"]}],\"properties\":{\"error\":{\"type\":\"object\"},"
    "\"session_id\":{\"type\":\"string\"},\"messages\":{\"type\":\"integer\"},"
    "\"messages_by_role\":{\"type\":\"object\"},\"tools_used\":{\"type\":\"array\"},"
    "\"tool_errors\":{\"type\":\"integer\"},\"first_prompt\":{\"type\":[\"string\",\"null\"]},"
    "\"transcript_lines\":{\"type\":\"integer\"},\"usage\":{\"type\":\"object\","
    "\"description\":\"Tokens and cost of the session's model calls.\"},"
    "\"resume\":{\"type\":\"string\",\"description\":\"The shell command that resumes the "
    "session in its own agent and working directory.\"},"
    "\"resource_uri\":{\"type\":\"string\"}}}";

/*
 * The session's tokens and cost (docs/usage.md): {"calls", "input_tokens",
 * ..., "cost_usd", "models": [{"model", "total_tokens", "cost_usd",
 * "priced"}]}, or NULL when the store has none of its calls or cannot say.
 */
static json_t *session_usage(store *s, const char *id)
{
    usage_prices *prices = NULL;
    char err[300];
    if (usage_prices_load(NULL, &prices, err, sizeof err) < 0)
        return NULL;
    usage_query q = {.group = USAGE_SESSION, .session_id = id};
    usage_report r;
    json_t *o = NULL;
    if (usage_report_build(s, prices, &q, &r, err, sizeof err) == 0) {
        o = json_object();
        json_object_set_new(o, "calls", json_integer(r.totals.calls));
        usage_counts_json(o, &r.totals);
        json_t *models = json_array();
        for (size_t i = 0; r.count && i < r.rows[0].nmodels; i++) {
            const usage_model_row *m = &r.rows[0].models[i];
            json_array_append_new(
                models, json_pack("{s:s, s:I, s:o, s:b}", "model", m->model, "total_tokens",
                                  (json_int_t)usage_counts_total(&m->c), "cost_usd",
                                  usage_money(m->c.cost_usd), "priced", m->priced));
        }
        json_object_set_new(o, "models", models);
        usage_report_free(&r);
    }
    usage_prices_free(prices);
    return o;
}

static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    const char *id = tools_arg_str(args, "session_id");
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL)
        return 0;
    store_session_summary sum;
    int rc = store_session_summary_get(s, id, &sum);
    if (rc == MCPAGE_ENOTFOUND) {
        tools_store_put(ctx, s);
        return mcpage_reject_argument(res, "get_session_summary", "session_id",
                                      json_object_get(args, "session_id"),
                                      "the id of an archived session (list_sessions shows them)",
                                      "session_id=\"<a session_id from list_sessions>\"");
    }
    if (rc < 0) {
        tools_store_error(res, s, rc, "the session summary");
        tools_store_put(ctx, s);
        return 0;
    }
    int64_t lines = 0;
    rc = transcript_total_lines(s, id, &lines);
    tools_store_put(ctx, s);
    if (rc < 0) {
        store_session_summary_clear(&sum);
        return tools_store_error(res, NULL, rc, "the session's lines");
    }
    const store_session *ss = &sum.session;
    char uri[700];
    tools_session_uri(ss->session_id, uri, sizeof uri);
    json_t *o = json_object();
    json_object_set_new(o, "session_id", tools_jstr(ss->session_id));
    json_object_set_new(o, "project", tools_jstr(ss->project));
    json_object_set_new(o, "title", tools_jstr(ss->title));
    json_object_set_new(o, "source", tools_jstr(ss->source));
    json_object_set_new(o, "model", tools_jstr(ss->model));
    json_object_set_new(o, "branch", tools_jstr(ss->git_branch));
    json_object_set_new(o, "started_at", tools_jstr(ss->started_at));
    json_object_set_new(o, "ended_at", tools_jstr(ss->ended_at));
    json_object_set_new(o, "parent_session_id", tools_jstr(ss->parent_session_id));
    json_object_set_new(o, "messages", json_integer(ss->message_count));
    json_t *roles = json_object();
    for (size_t i = 0; i < sum.role_count; i++)
        json_object_set_new(roles, sum.roles[i].name, json_integer(sum.roles[i].count));
    json_object_set_new(o, "messages_by_role", roles);
    json_t *tools = json_array();
    for (size_t i = 0; i < sum.tool_count && i < TOOLS_SHOWN; i++)
        json_array_append_new(tools, json_pack("{s:s, s:I}", "name", sum.tools[i].name, "calls",
                                               (json_int_t)sum.tools[i].count));
    json_object_set_new(o, "tools_used", tools);
    if (sum.tool_count > TOOLS_SHOWN)
        json_object_set_new(o, "tools_not_shown",
                            json_integer((json_int_t)(sum.tool_count - TOOLS_SHOWN)));
    json_object_set_new(o, "tool_errors", json_integer(sum.error_count));
    if (sum.first_prompt) {
        size_t n = utf8_cut(sum.first_prompt, FIRST_PROMPT_MAX);
        json_object_set_new(o, "first_prompt", json_stringn(sum.first_prompt, n));
        if (n < strlen(sum.first_prompt))
            json_object_set_new(o, "first_prompt_cut", json_true());
    } else {
        json_object_set_new(o, "first_prompt", json_null());
    }
    json_object_set_new(o, "transcript_lines", json_integer(lines));
    json_object_set_new(o, "raw_bytes", json_integer(ss->raw_size));
    json_t *usage = session_usage(s, ss->session_id);
    if (usage)
        json_object_set_new(o, "usage", usage);
    char *cwd = NULL;
    if (store_session_cwd(s, ss->session_id, &cwd) == 0) {
        char *resume = tools_resume_command(ss->source, ss->session_id, cwd);
        if (resume)
            json_object_set_new(o, "resume", json_string(resume));
        free(resume);
    }
    free(cwd);
    json_object_set_new(o, "resource_uri", json_string(uri));
    char hint[400];
    snprintf(hint, sizeof hint,
             "Read the transcript with read_session(session_id=\"%s\") (%lld lines), or the "
             "original bytes with read_raw(session_id=\"%s\").",
             ss->session_id, (long long)lines, ss->session_id);
    json_object_set_new(o, "hint", json_string(hint));
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(12));
    rc = text ? mcpage_result_add_text(res, text, strlen(text)) : MCPAGE_ENOMEM;
    free(text);
    if (rc == 0)
        rc = mcpage_result_set_structured(res, o);
    if (rc == 0)
        rc = tools_session_link(res, ss);
    json_decref(o);
    store_session_summary_clear(&sum);
    return rc;
}

int tools_get_session_summary_register(mcpage_server *srv, tools_ctx *ctx)
{
    mcpage_tool t = {
        .name = "get_session_summary",
        .title = "Session summary",
        .description =
            "Summarizes one archived session in a few hundred tokens: project, title, source, "
            "model, branch, start and end, messages per role, tools used (up to 40, most used "
            "first), tool errors, the first 1,000 bytes of the first prompt, the transcript's "
            "length in lines, its tokens and cost (usage: input, output, cache creation and "
            "cache read tokens, cost_usd, per model), plus a resource link to the whole "
            "transcript, and resume: the shell command that resumes it in its own agent and "
            "working directory (cd DIR && claude --resume ID, codex resume ID, gemini --resume "
            "ID, ...; absent for agents without one). Not paged. Follow "
            "with read_session to read it.",
        .input_schema = schema,
        .output_schema = output_schema,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return mcpage_server_add_tool(srv, &t);
}
