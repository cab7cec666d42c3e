/*
 * `mcpage usage daily|weekly|monthly|session|project|model|agent`: tokens
 * and cost from the archive (src/tools/usage.h, docs/usage.md).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"
#include "page/term.h"
#include "store/store.h"
#include "sync/sync.h"
#include "tools/usage.h"

static void usage_help(FILE *out)
{
    fprintf(
        out,
        "usage: mcpage usage daily|weekly|monthly|session|project|model|agent\n"
        "                    [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--agent NAME]\n"
        "                    [--project NAME] [--breakdown] [--json]\n"
        "                    [--prices FILE] [--store URL | --db FILE]\n\n"
        "Tokens and cost of the model calls in the archive (run 'mcpage sync' first),\n"
        "each call counted once (docs/usage.md). Days, weeks (from Monday) and months\n"
        "are local time (TZ). Cost is priced from the bundled table (%s: %s),\n"
        "or taken as given where the agent reported it; models without a price are\n"
        "listed as unpriced with their tokens, never priced at $0.\n\n"
        "  --since DATE     calls on or after this local date\n"
        "  --until DATE     calls on or before this local date\n"
        "  --agent NAME     one agent: claude, codex, gemini, copilot, opencode, ...\n"
        "  --project NAME   one project (name or path)\n"
        "  --breakdown      tokens and cost per model in each row\n"
        "  --json           one JSON object: {\"daily\":[{\"date\",\"agent\",\"input_tokens\",\n"
        "                   \"output_tokens\",\"cache_creation_tokens\",\"cache_read_tokens\",\n"
        "                   \"total_tokens\",\"cost_usd\",\"models\"}],\"totals\":{...}}; "
        "session:\n"
        "                   {\"sessions\":[{\"session_id\",\"project\",\"agent\",...}],...}\n"
        "  --prices FILE    prices that override or extend the table (env MCPAGE_PRICES;\n"
        "                   default $XDG_CONFIG_HOME/mcpage/prices.json when it exists):\n"
        "                   {\"model\": {\"input\": 3, \"output\": 15, \"cache_write\": 3.75,\n"
        "                   \"cache_read\": 0.3}} in USD per million tokens, or LiteLLM's\n"
        "                   per-token fields\n"
        "  --store URL      a shared store: postgres://user@host/db (env MCPAGE_STORE)\n"
        "  --db FILE        the archive (env MCPAGE_DB; default as for 'mcpage sync')\n",
        usage_prices_date, "LiteLLM's public price list");
}

/* 1,234,567 */
static void put_int(char *out, size_t n, int64_t v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%lld", (long long)v);
    size_t len = strlen(raw), k = 0;
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        if (i && (len - i) % 3 == 0 && raw[0] != '-')
            out[k++] = ',';
        out[k++] = raw[i];
    }
    out[k] = 0;
}

static void print_line(const char *key, const char *agent, const usage_counts *c,
                       const char *models)
{
    char in[32], outp[32], cw[32], cr[32], tot[32];
    put_int(in, sizeof in, c->input);
    put_int(outp, sizeof outp, c->output);
    put_int(cw, sizeof cw, c->cache_creation);
    put_int(cr, sizeof cr, c->cache_read);
    put_int(tot, sizeof tot, usage_counts_total(c));
    char kcell[160], acell[64];
    text_term_printf(stdout, "%s %s %13s %13s %15s %15s %16s %11.2f%s %s\n",
                     text_term_cell(kcell, sizeof kcell, key, 36),
                     text_term_cell(acell, sizeof acell, agent ? agent : "", 14), in, outp, cw, cr,
                     tot, c->cost_usd, c->unpriced_tokens ? "*" : " ", models ? models : "");
}

static void print_table(const usage_report *r, int breakdown)
{
    static const char *const heads[] = {"Date",    "Week",  "Month", "Session",
                                        "Project", "Model", "Agent"};
    /* a session's row names its project in the second column, the others their agent */
    text_term_printf(stdout, "%-36s %-14s %13s %13s %15s %15s %16s %12s %s\n", heads[r->group],
                     r->group == USAGE_SESSION ? "Project"
                     : r->group == USAGE_AGENT ? ""
                                               : "Agent",
                     "Input", "Output", "Cache write", "Cache read", "Total tokens", "Cost (USD)",
                     "Models");
    for (size_t i = 0; i < r->count; i++) {
        const usage_row *row = &r->rows[i];
        char models[256] = "";
        size_t k = 0;
        for (size_t m = 0; m < row->nmodels && r->group != USAGE_MODEL; m++) {
            if (!row->models[m].model[0])
                continue; /* calls that named no model (<synthetic>) */
            int w = snprintf(models + k, sizeof models - k, "%s%s", k ? ", " : "",
                             row->models[m].model);
            if (w < 0 || (size_t)w >= sizeof models - k)
                break;
            k += (size_t)w;
        }
        const char *second = r->group == USAGE_AGENT ? "" : row->agent;
        if (r->group == USAGE_SESSION)
            second = row->project && *row->project ? row->project : "-";
        print_line(row->key, second, &row->c, models);
        for (size_t m = 0; breakdown && m < row->nmodels && r->group != USAGE_MODEL; m++) {
            char label[80];
            snprintf(label, sizeof label, "  └ %s",
                     row->models[m].model[0] ? row->models[m].model : "(none)");
            print_line(label, "", &row->models[m].c, NULL);
        }
    }
    print_line("Total", "", &r->totals, NULL);
    if (r->nunpriced) {
        text_term_printf(stdout, "\n* unpriced (tokens counted, no cost):");
        for (size_t i = 0; i < r->nunpriced; i++)
            text_term_printf(stdout, "%s %s", i ? "," : "", r->unpriced[i]);
        printf(". Add them with --prices FILE.\n");
    }
    if (r->totals.cost_given_usd > 0)
        text_term_printf(stdout, "$%.2f of the cost was reported by the agents themselves.\n",
                         r->totals.cost_given_usd);
}

int cli_cmd_usage(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    int g = usage_group_parse(argv[1]);
    if (g < 0) {
        text_term_printf(stderr,
                         "mcpage usage: unknown report '%s' (daily, weekly, monthly, session, "
                         "project, model, agent)\n",
                         argv[1]);
        return 2;
    }
    usage_query q = {.group = (usage_group)g};
    const char *store_arg = NULL, *db_arg = NULL, *prices_arg = NULL;
    int json = 0, breakdown = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_help(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--breakdown") == 0) {
            breakdown = 1;
        } else if (i + 1 < argc && strcmp(a, "--since") == 0) {
            q.since = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--until") == 0) {
            q.until = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--agent") == 0) {
            q.agent = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--project") == 0) {
            q.project = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--prices") == 0) {
            prices_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--db") == 0) {
            db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--store") == 0) {
            store_arg = argv[++i];
        } else {
            text_term_printf(stderr, "mcpage usage: unknown or incomplete option '%s'\n", a);
            usage_help(stderr);
            return 2;
        }
    }
    char err[600];
    usage_prices *prices = NULL;
    if (usage_prices_load(prices_arg, &prices, err, sizeof err) < 0) {
        text_term_printf(stderr, "mcpage usage: %s\n", err);
        return 2;
    }
    char shown[SYNC_PATH_MAX];
    store *s;
    int rc = cli_store_open_read("mcpage usage", store_arg, db_arg, " (run 'mcpage sync' first)",
                                 &s, shown, sizeof shown);
    if (rc != 0) {
        usage_prices_free(prices);
        return rc;
    }
    usage_report r;
    rc = usage_report_build(s, prices, &q, &r, err, sizeof err);
    if (rc < 0) {
        text_term_printf(stderr, "mcpage usage: %s\n", err);
        store_close(s);
        usage_prices_free(prices);
        return rc == MCPAGE_EINVAL ? 2 : 1;
    }
    if (json) {
        json_t *o = usage_report_json(&r, breakdown, prices);
        char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(o);
    } else {
        print_table(&r, breakdown);
    }
    usage_report_free(&r);
    store_close(s);
    usage_prices_free(prices);
    return 0;
}
