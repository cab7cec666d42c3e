/*
 * The bundled price table and a user's price file (usage.h).
 *
 * Source: LiteLLM's public model_prices_and_context_window.json (the list
 * ccusage and agentsview price from), as ccusage 20.0.24 embeds it for
 * --offline: every rate below except those marked was read back from
 * ccusage by pricing one call of 300,000 and one of 1,000,000 tokens of
 * each kind per model (tests/usage/probe_prices.py re-runs it). Where
 * ccusage's name matching lands on another entry than the model's own
 * (o3, o4-mini, codex-mini-latest, gemini-2.5-pro, gemini-2.0-flash) the
 * vendor's list price is used instead, marked "vendor".
 * Rates are USD per million tokens; `*_above` apply to the tokens of one
 * call past 200,000 of that kind (-1: none). 1-hour cache writes are
 * priced at 2x input (Anthropic's rate; ccusage does the same).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "tools/usage.h"

const char usage_prices_date[] = "2026-12-05";
const char usage_prices_source[] =
    "LiteLLM model_prices_and_context_window.json as embedded in ccusage 20.0.24 (offline), "
    "vendor list prices for o3, o4-mini, codex-mini-latest, gemini-2.5-pro, gemini-2.0-flash";

#define NA (-1.0)

static const usage_price bundled[] = {
    /* model                      in     out   cache w  cache r   in>    out>  cw>   cr> */
    {"claude-opus-4-6", 5, 25, 6.25, 0.5, NA, NA, NA, NA},
    {"claude-opus-4-5", 5, 25, 6.25, 0.5, NA, NA, NA, NA},
    {"claude-opus-4-5-20251101", 5, 25, 6.25, 0.5, NA, NA, NA, NA},
    {"claude-opus-4-1", 15, 75, 18.75, 1.5, NA, NA, NA, NA},
    {"claude-opus-4-1-20250805", 15, 75, 18.75, 1.5, NA, NA, NA, NA},
    {"claude-opus-4-0", 15, 75, 18.75, 1.5, NA, NA, NA, NA},
    {"claude-opus-4-20250514", 15, 75, 18.75, 1.5, NA, NA, NA, NA},
    {"claude-3-opus-20240229", 15, 75, 18.75, 1.5, NA, NA, NA, NA},
    {"claude-sonnet-4-6", 3, 15, 3.75, 0.3, NA, NA, NA, NA},
    {"claude-sonnet-4-5", 3, 15, 3.75, 0.3, 6, 22.5, 7.5, 0.6},
    {"claude-sonnet-4-5-20250929", 3, 15, 3.75, 0.3, 6, 22.5, 7.5, 0.6},
    {"claude-sonnet-4-0", 3, 15, 3.75, 0.3, 6, 22.5, 7.5, 0.6},
    {"claude-sonnet-4-20250514", 3, 15, 3.75, 0.3, 6, 22.5, 7.5, 0.6},
    {"claude-3-7-sonnet-20250219", 3, 15, 3.75, 0.3, NA, NA, NA, NA},
    {"claude-3-7-sonnet-latest", 3, 15, 3.75, 0.3, NA, NA, NA, NA},
    {"claude-3-5-sonnet-20241022", 3, 15, 3.75, 0.3, NA, NA, NA, NA},
    {"claude-3-5-sonnet-20240620", 3, 15, 3.75, 0.3, NA, NA, NA, NA},
    {"claude-haiku-4-5", 1, 5, 1.25, 0.1, NA, NA, NA, NA},
    {"claude-haiku-4-5-20251001", 1, 5, 1.25, 0.1, NA, NA, NA, NA},
    {"claude-3-5-haiku-20241022", 0.8, 4, 1, 0.08, NA, NA, NA, NA},
    {"claude-3-haiku-20240307", 0.25, 1.25, 0.3, 0.03, NA, NA, NA, NA},
    /* OpenAI: cached input is the cache read; there are no cache writes */
    {"gpt-5", 1.25, 10, 1.25, 0.125, NA, NA, NA, NA},
    {"gpt-5-codex", 1.25, 10, 1.25, 0.125, NA, NA, NA, NA},
    {"gpt-5-mini", 0.25, 2, 0.25, 0.025, NA, NA, NA, NA},
    {"gpt-5-nano", 0.05, 0.4, 0.05, 0.005, NA, NA, NA, NA},
    {"gpt-5-pro", 15, 120, 15, 1.5, NA, NA, NA, NA},
    {"gpt-5.1", 1.25, 10, 1.25, 0.125, NA, NA, NA, NA},
    {"gpt-5.1-codex", 1.25, 10, 1.25, 0.125, NA, NA, NA, NA},
    {"gpt-5.1-codex-max", 1.25, 10, 1.25, 0.125, NA, NA, NA, NA},
    {"gpt-5.1-codex-mini", 0.25, 2, 0.25, 0.025, NA, NA, NA, NA},
    {"gpt-5.2", 1.75, 14, 1.75, 0.175, NA, NA, NA, NA},
    {"gpt-5.2-codex", 1.75, 14, 1.75, 0.175, NA, NA, NA, NA},
    {"o3", 2, 8, 2, 0.5, NA, NA, NA, NA},                      /* vendor */
    {"o4-mini", 1.1, 4.4, 1.1, 0.275, NA, NA, NA, NA},         /* vendor */
    {"codex-mini-latest", 1.5, 6, 1.5, 0.375, NA, NA, NA, NA}, /* vendor */
    {"gpt-4.1", 2, 8, 2, 0.5, NA, NA, NA, NA},
    {"gpt-4.1-mini", 0.4, 1.6, 0.4, 0.1, NA, NA, NA, NA},
    {"gpt-4o", 2.5, 10, 2.5, 1.25, NA, NA, NA, NA},
    {"gpt-4o-mini", 0.15, 0.6, 0.15, 0.075, NA, NA, NA, NA},
    /* Google: cached content is the cache read */
    {"gemini-2.5-pro", 1.25, 10, 1.25, 0.125, 2.5, 15, 2.5, 0.25}, /* vendor */
    {"gemini-2.5-flash", 0.3, 2.5, 0.3, 0.03, NA, NA, NA, NA},
    {"gemini-2.5-flash-lite", 0.1, 0.4, 0.1, 0.01, NA, NA, NA, NA},
    {"gemini-3-pro-preview", 2, 12, 2, 0.2, 4, 18, 4, 0.4},
    {"gemini-3-flash-preview", 0.5, 3, 0.5, 0.05, NA, NA, NA, NA},
    {"gemini-2.0-flash", 0.1, 0.4, 0.1, 0.025, NA, NA, NA, NA}, /* vendor */
    /* others agents run */
    {"grok-code-fast-1", 0.2, 1.5, 0.2, 0.02, NA, NA, NA, NA},
    {"kimi-k2", 0.57, 2.3, 0.57, 0.5, NA, NA, NA, NA},
    {"qwen3-coder-plus", 1, 5, 1.25, 0.1, NA, NA, NA, NA},
    {"glm-4.6", 0.6, 2.2, 0.6, 0.11, NA, NA, NA, NA},
    {"deepseek-chat", 0.1, 0.425, 0.125, 0.05, NA, NA, NA, NA},
};

struct usage_prices {
    usage_price *v; /* the user's entries first, then the bundled ones */
    size_t n;
    char **names; /* the user's model names (owned) */
    size_t nnames;
    char *file;
};

void usage_prices_free(usage_prices *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
    free(p->v);
    free(p->file);
    free(p);
}

const char *usage_prices_file(const usage_prices *p)
{
    return p ? p->file : NULL;
}

/* A rate of the user's entry: per million under `mtok`, or per token
 * under `tok` (LiteLLM's names); *v unchanged when neither is there. */
static int rate(json_t *o, const char *mtok, const char *tok, double *v, const char *model,
                char *err, size_t errlen)
{
    json_t *a = json_object_get(o, mtok), *b = tok ? json_object_get(o, tok) : NULL;
    json_t *x = a ? a : b;
    if (!x)
        return 0;
    if (!json_is_number(x) || json_number_value(x) < 0) {
        snprintf(err, errlen, "price of %s: %s must be a number >= 0 (USD per %s)", model,
                 a ? mtok : tok, a ? "million tokens" : "token");
        return MCPAGE_EINVAL;
    }
    *v = a ? json_number_value(x) : json_number_value(x) * 1e6;
    return 0;
}

static int load_file(usage_prices *p, const char *path, int must_exist, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (!must_exist && errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot open the price file %s: %s", path, strerror(errno));
        return MCPAGE_EINVAL;
    }
    json_error_t je;
    json_t *root = json_loadf(fp, 0, &je);
    fclose(fp);
    if (!json_is_object(root)) {
        snprintf(err, errlen, "price file %s: %s", path,
                 root ? "not a JSON object of model names to prices" : je.text);
        json_decref(root);
        return MCPAGE_EINVAL;
    }
    size_t n = json_object_size(root);
    if (n > 100000) {
        json_decref(root);
        snprintf(err, errlen, "price file %s: more than 100000 models", path);
        return MCPAGE_EINVAL;
    }
    usage_price *v = calloc(n + p->n + 1, sizeof *v);
    char **names = calloc(n + 1, sizeof *names);
    if (!v || !names) {
        free(v);
        free(names);
        json_decref(root);
        return MCPAGE_ENOMEM;
    }
    size_t k = 0;
    const char *model;
    json_t *o;
    int rc = 0;
    json_object_foreach(root, model, o)
    {
        if (!json_is_object(o))
            continue; /* LiteLLM's file has a sample_spec and the like */
        const usage_price *base = usage_price_find(p, model);
        usage_price e = base ? *base : (usage_price){NULL, 0, 0, 0, 0, NA, NA, NA, NA};
        int has = 0;
        struct {
            const char *mtok, *tok;
            double *v;
        } f[] = {
            {"input", "input_cost_per_token", &e.input},
            {"output", "output_cost_per_token", &e.output},
            {"cache_write", "cache_creation_input_token_cost", &e.cache_write},
            {"cache_read", "cache_read_input_token_cost", &e.cache_read},
            {"input_above_200k", "input_cost_per_token_above_200k_tokens", &e.input_above},
            {"output_above_200k", "output_cost_per_token_above_200k_tokens", &e.output_above},
            {"cache_write_above_200k", "cache_creation_input_token_cost_above_200k_tokens",
             &e.cache_write_above},
            {"cache_read_above_200k", "cache_read_input_token_cost_above_200k_tokens",
             &e.cache_read_above},
        };
        for (size_t i = 0; i < sizeof f / sizeof f[0] && rc == 0; i++) {
            double before = *f[i].v;
            rc = rate(o, f[i].mtok, f[i].tok, f[i].v, model, err, errlen);
            has |=
                *f[i].v != before || json_object_get(o, f[i].mtok) || json_object_get(o, f[i].tok);
        }
        if (rc < 0)
            break;
        if (!has)
            continue; /* no token prices: an image model and the like */
        if (!base && !json_object_get(o, "cache_write") &&
            !json_object_get(o, "cache_creation_input_token_cost"))
            e.cache_write = e.input;
        if (!base && !json_object_get(o, "cache_read") &&
            !json_object_get(o, "cache_read_input_token_cost"))
            e.cache_read = e.input;
        if (!(names[k] = strdup(model))) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        e.model = names[k];
        v[k++] = e;
    }
    json_decref(root);
    if (rc < 0) {
        for (size_t i = 0; i < k; i++)
            free(names[i]);
        free(names);
        free(v);
        return rc;
    }
    memcpy(v + k, p->v, p->n * sizeof *v);
    free(p->v);
    p->v = v;
    p->n += k;
    p->names = names;
    p->nnames = k;
    p->file = strdup(path);
    return p->file ? 0 : MCPAGE_ENOMEM;
}

int usage_prices_load(const char *file, usage_prices **out, char *err, size_t errlen)
{
    *out = NULL;
    usage_prices *p = calloc(1, sizeof *p);
    if (!p)
        return MCPAGE_ENOMEM;
    p->n = sizeof bundled / sizeof bundled[0];
    p->v = malloc(sizeof bundled);
    if (!p->v) {
        free(p);
        return MCPAGE_ENOMEM;
    }
    memcpy(p->v, bundled, sizeof bundled);
    int rc = 0;
    const char *env = getenv("MCPAGE_PRICES");
    if (file && *file) {
        rc = load_file(p, file, 1, err, errlen);
    } else if (env && *env) {
        rc = load_file(p, env, 1, err, errlen);
    } else {
        char path[4096];
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(path, sizeof path, "%s/mcpage/prices.json", xdg);
        else if (home && *home)
            snprintf(path, sizeof path, "%s/.config/mcpage/prices.json", home);
        else
            path[0] = 0;
        if (path[0])
            rc = load_file(p, path, 0, err, errlen);
    }
    if (rc < 0) {
        usage_prices_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

static const usage_price *exact(const usage_prices *p, const char *m, size_t n)
{
    for (size_t i = 0; i < p->n; i++)
        if (strlen(p->v[i].model) == n && strncmp(p->v[i].model, m, n) == 0)
            return &p->v[i];
    return NULL;
}

const usage_price *usage_price_find(const usage_prices *p, const char *model)
{
    if (!p || !model || !*model)
        return NULL;
    size_t n = strlen(model);
    const usage_price *e = exact(p, model, n);
    if (e)
        return e;
    /* a provider prefix: "anthropic/claude-...", "openrouter/openai/gpt-5" */
    const char *m = model;
    const char *slash = strrchr(m, '/');
    if (slash)
        m = slash + 1;
    /* a region prefix: "us.anthropic.claude-...", "anthropic.claude-..." */
    const char *dot = strstr(m, "anthropic.");
    if (dot)
        m = dot + strlen("anthropic.");
    n = strlen(m);
    /* a Bedrock version suffix "-v1:0", a Vertex date "@20250929" */
    const char *colon = strchr(m, ':');
    if (colon && colon - m > 3 && strncmp(colon - 3, "-v", 2) == 0)
        n = (size_t)(colon - 3 - m);
    else if (colon && colon - m > 3 && strncmp(colon - 3, "-v1", 3) == 0)
        n = (size_t)(colon - 3 - m);
    const char *at = memchr(m, '@', n);
    if (at)
        n = (size_t)(at - m);
    if ((e = exact(p, m, n)))
        return e;
    /* a date suffix "-20250929" */
    if (n > 9 && m[n - 9] == '-') {
        int digits = 1;
        for (size_t i = n - 8; i < n; i++)
            digits &= isdigit((unsigned char)m[i]) != 0;
        if (digits && (e = exact(p, m, n - 9)))
            return e;
    }
    /* GitHub Copilot's names of Claude models: "claude-sonnet-4.5" for
       claude-sonnet-4-5, "claude-sonnet-4" for claude-sonnet-4-0 */
    char alt[128];
    if (n >= 7 && n + 3 <= sizeof alt && strncmp(m, "claude-", 7) == 0) {
        for (size_t i = 0; i < n; i++)
            alt[i] = m[i] == '.' ? '-' : m[i];
        if ((e = exact(p, alt, n)))
            return e;
        if (isdigit((unsigned char)alt[n - 1]) && alt[n - 2] == '-') {
            memcpy(alt + n, "-0", 2);
            return exact(p, alt, n + 2);
        }
    }
    return NULL;
}
