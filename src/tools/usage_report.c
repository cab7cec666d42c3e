/*
 * usage_report (LIST, unit rows): tokens and cost of the archive's model
 * calls grouped by day, week, month (local time of the server), session,
 * project, model or agent (src/tools/usage.h). The whole report is built
 * for every page (one aggregate over the counted calls), so each page
 * carries the exact totals of the whole filter, said once per page as
 * the shared field `totals`. Order: time groups oldest first; the others
 * by cost, highest first; a position is (sort key, row id), both text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/tools.h"
#include "tools/usage.h"

static const char *const fields[] = {"key",
                                     "agent",
                                     "project",
                                     "input_tokens",
                                     "output_tokens",
                                     "cache_creation_tokens",
                                     "cache_read_tokens",
                                     "total_tokens",
                                     "cost_usd",
                                     "cost_given_usd",
                                     "unpriced_tokens",
                                     "models",
                                     "totals",
                                     NULL};
static const char *const id_fields[] = {"key", NULL};

static const mcpage_list_spec spec = {
    .tool = "usage_report",
    .unit = "rows",
    .default_limit = 30,
    .max_limit = 200,
    .fields = fields,
    .id_fields = id_fields,
    .narrow_hint = "Narrow with after=YYYY-MM-DD, before=YYYY-MM-DD, project=... or source=...",
    .layout = MCPAGE_LIST_COLUMNS,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"group_by\":{\"type\":\"string\",\"enum\":[\"day\",\"week\",\"month\",\"session\","
    "\"project\",\"model\",\"agent\"],\"default\":\"day\",\"description\":\"One row per local "
    "day (default), week (from Monday), month, session, project, model or agent.\"},"
    "\"project\":{\"type\":\"string\",\"description\":\"Only this project (name or path).\"},"
    "\"source\":{\"type\":\"string\"," TOOLS_SOURCE_ENUM ",\"description\":\"Only this "
    "agent's calls.\"},"
    "\"session_id\":{\"type\":\"string\",\"description\":\"Only this session's calls.\"},"
    "\"after\":{\"type\":\"string\",\"description\":\"Only calls on or after this local date "
    "(YYYY-MM-DD).\"},"
    "\"before\":{\"type\":\"string\",\"description\":\"Only calls before this local date "
    "(YYYY-MM-DD).\"}}}";

typedef struct report_ud {
    usage_query q;
    const char *before;
    usage_report r;
    int built, rc;
    char err[300];
    char (*sk)[64]; /* each row's sort key */
    size_t *order;  /* rows in walk order */
} report_ud;

static void row_id(const usage_row *row, char *out, size_t n)
{
    snprintf(out, n, "%.200s%s%.40s", row->key, row->agent ? "\x1f" : "",
             row->agent ? row->agent : "");
}

static report_ud *sort_ud;

static int walk_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(sort_ud->sk[x], sort_ud->sk[y]);
    if (c)
        return c;
    char ix[256], iy[256];
    row_id(&sort_ud->r.rows[x], ix, sizeof ix);
    row_id(&sort_ud->r.rows[y], iy, sizeof iy);
    return strcmp(ix, iy);
}

static int build(store *s, report_ud *u)
{
    if (u->built)
        return u->rc;
    u->built = 1;
    usage_prices *prices = NULL;
    u->rc = usage_prices_load(NULL, &prices, u->err, sizeof u->err);
    if (u->rc < 0)
        return u->rc;
    char until[16] = "";
    if (u->before && *u->before) {
        /* before D (exclusive) is until the day before D (inclusive) */
        int y, m, d;
        if (sscanf(u->before, "%4d-%2d-%2d", &y, &m, &d) != 3 || strlen(u->before) != 10) {
            snprintf(u->err, sizeof u->err, "before must be a date YYYY-MM-DD, got '%s'",
                     u->before);
            usage_prices_free(prices);
            return u->rc = MCPAGE_EINVAL;
        }
        struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d - 1, .tm_hour = 12};
        (void)timegm(&tm);
        snprintf(until, sizeof until, "%04d-%02d-%02d", (tm.tm_year + 1900) % 10000,
                 (tm.tm_mon + 1) % 100, tm.tm_mday % 100);
        u->q.until = until;
    }
    u->rc = usage_report_build(s, prices, &u->q, &u->r, u->err, sizeof u->err);
    u->q.until = NULL;
    usage_prices_free(prices);
    if (u->rc < 0)
        return u->rc;
    size_t n = u->r.count;
    u->sk = calloc(n ? n : 1, sizeof *u->sk);
    u->order = calloc(n ? n : 1, sizeof *u->order);
    if (!u->sk || !u->order)
        return u->rc = MCPAGE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const usage_row *row = &u->r.rows[i];
        if (u->q.group <= USAGE_MONTHLY)
            snprintf(u->sk[i], sizeof u->sk[i], "%.40s", row->key);
        else /* cost, highest first: a string that sorts ascending */
            snprintf(u->sk[i], sizeof u->sk[i], "%024.6f", 1e15 - row->c.cost_usd);
        u->order[i] = i;
    }
    sort_ud = u;
    if (n)
        qsort(u->order, n, sizeof *u->order, walk_cmp);
    return 0;
}

static int count(store *s, void *ud, int64_t *total)
{
    report_ud *u = ud;
    int rc = build(s, u);
    if (rc < 0)
        return rc;
    *total = (int64_t)u->r.count;
    return 0;
}

static int fetch(store *s, void *ud, const store_page *page, mcpage_list *pg)
{
    report_ud *u = ud;
    int rc = build(s, u);
    if (rc < 0)
        return rc;
    size_t i = 0;
    if (page->after && page->after->nparts == 2) {
        const char *ask = page->after->part[0].s, *aid = page->after->part[1].s;
        while (i < u->r.count) {
            char id[256];
            row_id(&u->r.rows[u->order[i]], id, sizeof id);
            int c = strcmp(u->sk[u->order[i]], ask);
            if (c > 0 || (c == 0 && strcmp(id, aid) > 0))
                break;
            i++;
        }
    } else {
        i = page->offset > 0 ? (size_t)page->offset : 0;
    }
    json_t *tot = json_object();
    if (!tot || usage_counts_json(tot, &u->r.totals) < 0) {
        json_decref(tot);
        return MCPAGE_ENOMEM;
    }
    json_object_set_new(tot, "rows", json_integer((json_int_t)u->r.count));
    json_object_set_new(tot, "cache_savings_usd", usage_money(u->r.totals.cache_savings_usd));
    json_t *un = json_array();
    for (size_t k = 0; k < u->r.nunpriced; k++)
        json_array_append_new(un, json_string(u->r.unpriced[k]));
    json_object_set_new(tot, "unpriced_models", un);
    for (int64_t n = 0; i < u->r.count && n < page->limit; i++, n++) {
        const usage_row *row = &u->r.rows[u->order[i]];
        json_t *rec = json_object();
        json_object_set_new(rec, "key", json_string(row->key));
        json_object_set_new(rec, "agent", row->agent ? json_string(row->agent) : json_null());
        json_object_set_new(rec, "project", row->project ? json_string(row->project) : json_null());
        usage_counts_json(rec, &row->c);
        if (!json_object_get(rec, "cost_given_usd"))
            json_object_set_new(rec, "cost_given_usd", usage_money(0));
        if (!json_object_get(rec, "unpriced_tokens"))
            json_object_set_new(rec, "unpriced_tokens", json_integer(0));
        json_object_del(rec, "reasoning_tokens");
        json_t *models = json_array();
        for (size_t k = 0; k < row->nmodels; k++)
            if (row->models[k].model[0])
                json_array_append_new(models, json_string(row->models[k].model));
        json_object_set_new(rec, "models", models);
        json_object_set_new(rec, "totals", json_incref(tot));
        store_key key = {.nparts = 2};
        key.part[0].type = key.part[1].type = STORE_KEY_TEXT;
        snprintf(key.part[0].s, sizeof key.part[0].s, "%s", u->sk[u->order[i]]);
        row_id(row, key.part[1].s, sizeof key.part[1].s);
        rc = tools_list_add(pg, rec, &key);
        if (rc == MCPAGE_PAGE_FULL)
            break;
        if (rc < 0)
            break;
    }
    json_decref(tot);
    return rc < 0 && rc != MCPAGE_PAGE_FULL ? rc : 0;
}

static bool on_error(store *s, void *ud, int rc, mcpage_result *res)
{
    (void)s;
    report_ud *u = ud;
    if (rc != MCPAGE_EINVAL || !u->err[0])
        return false;
    const char *param = strstr(u->err, "before") == u->err ? "before" : "after";
    mcpage_reject_argument(res, "usage_report", param, NULL, "a date YYYY-MM-DD",
                           "after=\"2026-01-01\"");
    return true;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    report_ud u = {0};
    const char *g = tools_arg_str(args, "group_by");
    int group = g ? usage_group_parse(g) : USAGE_DAILY;
    if (group < 0)
        return mcpage_reject_argument(
            res, "usage_report", "group_by", json_object_get(args, "group_by"),
            "day, week, month, session, project, model or agent", "group_by=\"model\"");
    u.q.group = (usage_group)group;
    u.q.project = tools_arg_str(args, "project");
    u.q.agent = tools_arg_str(args, "source");
    u.q.session_id = tools_arg_str(args, "session_id");
    u.q.since = tools_arg_str(args, "after");
    u.before = tools_arg_str(args, "before");
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_TEXT};
    tools_list_walk walk = {&spec, types, 2, "usage", count, fetch, on_error, &u, call, "totals"};
    int rc = tools_list_run(ctx, &walk, res);
    usage_report_free(&u.r);
    free(u.sk);
    free(u.order);
    return rc;
}

int tools_usage_report_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1400];
    (void)snprintf(
        desc, sizeof desc,
        "Tokens and cost of the model calls in the archive of coding-agent conversations, "
        "grouped by group_by: day (default), week, month (the server's local time), session, "
        "project, model or agent. Each call is counted once (Claude Code writes a response "
        "once per content block). Records come as arrays in the order of `columns`: key (the "
        "date, week start, month, session_id, project, model or agent), agent, project, "
        "input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens, "
        "cost_usd (priced from a bundled list of %s, or as the agent reported it: "
        "cost_given_usd), unpriced_tokens (calls of models without a price), models. Every "
        "page says `totals` once: the exact sums of the whole filter and unpriced_models. "
        "Time groups oldest first; the others by cost, highest first. Pages of %s rows by "
        "default (limit up to %s) within %s; page on with next_cursor or next_offset.",
        usage_prices_date, page_fmt_int(spec.default_limit, d), page_fmt_int(spec.max_limit, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "usage_report",
        .title = "Tokens and cost",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LIST_COLUMNS_OUTPUT(
            "rows", "\"totals\":{\"type\":\"object\",\"description\":\"Sums of the whole "
                    "filter, on every page.\"},"),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return mcpage_server_add_list_tool(srv, &t, &spec);
}
