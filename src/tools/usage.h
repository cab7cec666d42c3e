/*
 * Usage reports: the store's counted model calls (store_usage_sums_get)
 * grouped by local day, week, month, session, project, model or agent,
 * priced from the bundled table (usage_prices.c) or a user's file, with
 * costs the agents reported taken as given. The CLI (`mcpage usage`), the
 * MCP tool usage_report, get_session_summary and the browser view share
 * it. docs/usage.md describes the rules.
 */
#ifndef MCPAGE_TOOLS_USAGE_H
#define MCPAGE_TOOLS_USAGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* ---- prices ------------------------------------------------------------ */

/* USD per million tokens; an `above` of -1 means no long-context rate
 * (the base rate applies past STORE_USAGE_TIER too). */
typedef struct usage_price {
    const char *model;
    double input, output, cache_write, cache_read;
    double input_above, output_above, cache_write_above, cache_read_above;
} usage_price;

/* The bundled table's date and source, for reports and --help. */
extern const char usage_prices_date[];
extern const char usage_prices_source[];

/* A price list: the bundled table, overridden or extended by a user's
 * file. */
typedef struct usage_prices usage_prices;

/*
 * Loads the bundled table and, when `file` is set (else MCPAGE_PRICES,
 * else $XDG_CONFIG_HOME/mcpage/prices.json or ~/.config/mcpage/prices.json
 * when that exists), the user's file: a JSON object of model name to an
 * object with `input`, `output`, `cache_write`, `cache_read` and the
 * `*_above_200k` rates in USD per million tokens, or LiteLLM's per-token
 * names (input_cost_per_token, ...). A model the file names replaces the
 * table's (fields it omits keep the table's values). On a bad file:
 * MCPAGE_EINVAL with the reason in err.
 */
int usage_prices_load(const char *file, usage_prices **out, char *err, size_t errlen);
void usage_prices_free(usage_prices *p);
/* The price of a model: an exact name first, then without a provider
 * prefix ("anthropic/"), a region prefix ("us.anthropic."), a date suffix
 * ("-20250929", "@20250929") or a "-v1:0" suffix; NULL when unknown. */
const usage_price *usage_price_find(const usage_prices *p, const char *model);
/* The path of the user's file in use, or NULL. */
const char *usage_prices_file(const usage_prices *p);

/* ---- reports ------------------------------------------------------------- */

typedef enum usage_group {
    USAGE_DAILY = 0,
    USAGE_WEEKLY, /* weeks start on Monday */
    USAGE_MONTHLY,
    USAGE_SESSION,
    USAGE_PROJECT,
    USAGE_MODEL,
    USAGE_AGENT
} usage_group;

/* The group's name as the CLI and the tool take it ("daily", "day", ...),
 * or -1. */
int usage_group_parse(const char *name);
/* "daily", "weekly", ... as the JSON's list key ("daily", "sessions", ...). */
const char *usage_group_list_key(usage_group g);

typedef struct usage_query {
    usage_group group;
    const char *since, *until; /* local dates YYYY-MM-DD (inclusive), or NULL */
    const char *agent;         /* a source name, or NULL */
    const char *project;       /* name or path, or NULL */
    const char *session_id;    /* or NULL */
} usage_query;

/* Token counts and cost of some calls. */
typedef struct usage_counts {
    int64_t calls;
    int64_t input, output, cache_creation, cache_read, reasoning;
    int64_t cache_creation_1h;
    double cost_usd;          /* priced + given */
    double cost_given_usd;    /* of it, what agents reported themselves */
    int64_t unpriced_tokens;  /* tokens of calls whose model has no price */
    double cache_savings_usd; /* cache reads priced at input rates, less what they cost */
} usage_counts;

typedef struct usage_model_row {
    char *model; /* "" when the calls named none */
    usage_counts c;
    int priced; /* has a price (table or file) */
    int given;  /* some of its cost was reported by the agent */
} usage_model_row;

typedef struct usage_row {
    char *key;          /* date, week start, month (YYYY-MM), session id, project, model or agent */
    char *agent;        /* the time groups and sessions: the agent; else NULL */
    char *project;      /* sessions: the project (NULL when none) */
    char *first, *last; /* earliest and latest call */
    usage_counts c;
    usage_model_row *models; /* by model, most expensive first */
    size_t nmodels;
} usage_row;

typedef struct usage_report {
    usage_group group;
    usage_row *rows; /* in the report's order (time ascending; else cost descending) */
    size_t count;
    usage_counts totals;
    char **unpriced; /* models without a price, sorted */
    size_t nunpriced;
} usage_report;

/* Builds the report of `q` (err says why on failure: a bad date, a store
 * error). */
int usage_report_build(store *s, const usage_prices *prices, const usage_query *q,
                       usage_report *out, char *err, size_t errlen);
void usage_report_free(usage_report *r);

/* Dollars rounded to a millionth, as every report writes them. */
json_t *usage_money(double usd);
/* Total tokens: input + output + cache creation + cache read. */
int64_t usage_counts_total(const usage_counts *c);
/* The counts as JSON members (input_tokens, output_tokens,
 * cache_creation_tokens, cache_read_tokens, total_tokens, reasoning_tokens,
 * cost_usd, and cost_given_usd / unpriced_tokens when not 0) set on `o`. */
int usage_counts_json(json_t *o, const usage_counts *c);
/* One row as the JSON the CLI and the tool print: the group's key
 * ("date", "week", "month", "session_id", "project", "model", "agent"),
 * agent/project where the group has them, the counts, "models" (names),
 * and with `breakdown` "breakdown": per model counts. */
json_t *usage_row_json(const usage_report *r, const usage_row *row, int breakdown);
/* The whole report: {"<list key>": [rows], "totals": {...}, "unpriced_models": [...]}. */
json_t *usage_report_json(const usage_report *r, int breakdown, const usage_prices *p);

#endif
