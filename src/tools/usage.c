/*
 * Usage reports (usage.h): the store's sums turned into local days,
 * weeks and months, or sessions, projects, models and agents, priced.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpage/mcpage.h>

#include "tools/usage.h"

static const struct {
    const char *name;
    usage_group g;
} group_names[] = {
    {"daily", USAGE_DAILY},     {"day", USAGE_DAILY},       {"weekly", USAGE_WEEKLY},
    {"week", USAGE_WEEKLY},     {"monthly", USAGE_MONTHLY}, {"month", USAGE_MONTHLY},
    {"session", USAGE_SESSION}, {"project", USAGE_PROJECT}, {"model", USAGE_MODEL},
    {"agent", USAGE_AGENT},
};

int usage_group_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof group_names / sizeof group_names[0]; i++)
        if (strcmp(name, group_names[i].name) == 0)
            return (int)group_names[i].g;
    return -1;
}

const char *usage_group_list_key(usage_group g)
{
    static const char *const keys[] = {"daily",    "weekly", "monthly", "sessions",
                                       "projects", "models", "agents"};
    return (unsigned)g < sizeof keys / sizeof keys[0] ? keys[g] : "rows";
}

static const char *row_key_name(usage_group g)
{
    static const char *const keys[] = {"date",    "week",  "month", "session_id",
                                       "project", "model", "agent"};
    return (unsigned)g < sizeof keys / sizeof keys[0] ? keys[g] : "key";
}

int64_t usage_counts_total(const usage_counts *c)
{
    return c->input + c->output + c->cache_creation + c->cache_read;
}

/* ---- local dates -------------------------------------------------------- */

/* Unix minute of local midnight starting `date` (YYYY-MM-DD), plus `days`. */
static int local_midnight(const char *date, int days, int64_t *minute)
{
    int y, m, d;
    char tail;
    if (!date || sscanf(date, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || strlen(date) != 10 ||
        m < 1 || m > 12 || d < 1 || d > 31 || y < 1970 || y > 9999)
        return MCPAGE_EINVAL;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d + days, .tm_isdst = -1};
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return MCPAGE_EINVAL;
    *minute = (int64_t)t / 60;
    return 0;
}

/* The local date (and tm) of a unix minute. */
static void local_date(int64_t minute, struct tm *tm, char out[40])
{
    time_t t = (time_t)(minute * 60);
    if (!localtime_r(&t, tm))
        memset(tm, 0, sizeof *tm);
    snprintf(out, 40, "%04d-%02d-%02d", tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday);
}

/* The bucket key of a local time: the date, the Monday of its week, or
 * YYYY-MM. */
static void time_key(usage_group g, int64_t minute, char out[40])
{
    struct tm tm;
    local_date(minute, &tm, out);
    if (g == USAGE_MONTHLY) {
        out[7] = 0;
    } else if (g == USAGE_WEEKLY) {
        struct tm w = {.tm_year = tm.tm_year,
                       .tm_mon = tm.tm_mon,
                       .tm_mday = tm.tm_mday - (tm.tm_wday + 6) % 7,
                       .tm_hour = 12,
                       .tm_isdst = -1};
        (void)mktime(&w);
        snprintf(out, 40, "%04d-%02d-%02d", w.tm_year + 1900, w.tm_mon + 1, w.tm_mday);
    }
}

/* 1 when local time is a whole number of hours from UTC at every hour
 * bucket of `l` (then the hour buckets map to local days exactly). */
static int whole_hours(const store_usage_sums *l)
{
    for (size_t i = 0; i < l->count; i++) {
        time_t t = (time_t)(l->rows[i].bucket * 3600);
        struct tm tm;
        if (!localtime_r(&t, &tm) || tm.tm_gmtoff % 3600 != 0)
            return 0;
    }
    return 1;
}

/* ---- pricing -------------------------------------------------------------- */

static double tier(int64_t tokens, int64_t over, double base, double above)
{
    if (above < 0)
        above = base;
    return ((double)(tokens - over) * base + (double)over * above) / 1e6;
}

/* What the counted calls of one sum row cost, into c. */
static void price_sum(const usage_prices *p, const store_usage_sum *s, usage_counts *c, int *priced)
{
    c->calls = s->calls;
    c->input = s->input;
    c->output = s->output;
    c->cache_creation = s->cache_creation;
    c->cache_creation_1h = s->cache_creation_1h;
    c->cache_read = s->cache_read;
    c->reasoning = s->reasoning;
    if (s->cost_given) {
        c->cost_usd = s->cost_usd;
        c->cost_given_usd = s->cost_usd;
        *priced = 1;
        return;
    }
    const usage_price *pr = usage_price_find(p, s->model);
    *priced = pr != NULL;
    if (!pr) {
        c->unpriced_tokens = usage_counts_total(c);
        return;
    }
    int64_t c5 = s->cache_creation - s->cache_creation_1h;
    double in1h_above = pr->input_above < 0 ? -1 : pr->input_above * 2;
    c->cost_usd = tier(s->input, s->over_input, pr->input, pr->input_above) +
                  tier(s->output, s->over_output, pr->output, pr->output_above) +
                  tier(c5, s->over_cache_5m, pr->cache_write, pr->cache_write_above) +
                  tier(s->cache_creation_1h, s->over_cache_1h, pr->input * 2, in1h_above) +
                  tier(s->cache_read, s->over_cache_read, pr->cache_read, pr->cache_read_above);
    c->cache_savings_usd =
        tier(s->cache_read, s->over_cache_read, pr->input, pr->input_above) -
        tier(s->cache_read, s->over_cache_read, pr->cache_read, pr->cache_read_above);
}

static void counts_add(usage_counts *a, const usage_counts *b)
{
    a->calls += b->calls;
    a->input += b->input;
    a->output += b->output;
    a->cache_creation += b->cache_creation;
    a->cache_creation_1h += b->cache_creation_1h;
    a->cache_read += b->cache_read;
    a->reasoning += b->reasoning;
    a->cost_usd += b->cost_usd;
    a->cost_given_usd += b->cost_given_usd;
    a->unpriced_tokens += b->unpriced_tokens;
    a->cache_savings_usd += b->cache_savings_usd;
}

/* ---- building --------------------------------------------------------------- */

/* One priced sum row on its way into a report row. */
typedef struct part {
    char key[40];     /* time groups */
    const char *name; /* other groups (borrowed from the sums) */
    const char *agent, *project, *model, *first, *last;
    usage_counts c;
    int priced, given;
} part;

static usage_group sort_group;

static int strcmp0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static const char *part_key(const part *p)
{
    return sort_group <= USAGE_MONTHLY ? p->key : p->name;
}

static int part_cmp(const void *a, const void *b)
{
    const part *x = a, *y = b;
    int c = strcmp0(part_key(x), part_key(y));
    if (!c && sort_group <= USAGE_MONTHLY)
        c = strcmp0(x->agent, y->agent);
    if (!c)
        c = strcmp0(x->model, y->model);
    return c;
}

static int model_cmp(const void *a, const void *b)
{
    const usage_model_row *x = a, *y = b;
    if (x->c.cost_usd != y->c.cost_usd)
        return x->c.cost_usd < y->c.cost_usd ? 1 : -1;
    int64_t tx = usage_counts_total(&x->c), ty = usage_counts_total(&y->c);
    if (tx != ty)
        return tx < ty ? 1 : -1;
    return strcmp(x->model, y->model);
}

static int row_cost_cmp(const void *a, const void *b)
{
    const usage_row *x = a, *y = b;
    if (x->c.cost_usd != y->c.cost_usd)
        return x->c.cost_usd < y->c.cost_usd ? 1 : -1;
    int64_t tx = usage_counts_total(&x->c), ty = usage_counts_total(&y->c);
    if (tx != ty)
        return tx < ty ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *dup(const char *s)
{
    return strdup(s ? s : "");
}

static int add_unpriced(usage_report *r, const char *model)
{
    const char *m = model && *model ? model : "(no model)";
    for (size_t i = 0; i < r->nunpriced; i++)
        if (strcmp(r->unpriced[i], m) == 0)
            return 0;
    char **v = realloc(r->unpriced, (r->nunpriced + 1) * sizeof *v);
    if (!v)
        return MCPAGE_ENOMEM;
    r->unpriced = v;
    if (!(v[r->nunpriced] = strdup(m)))
        return MCPAGE_ENOMEM;
    r->nunpriced++;
    return 0;
}

int usage_report_build(store *s, const usage_prices *prices, const usage_query *q,
                       usage_report *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->group = q->group;
    store_usage_filter f = {.from_minute = INT64_MIN,
                            .to_minute = INT64_MAX,
                            .source = q->agent,
                            .project = q->project,
                            .session_id = q->session_id};
    if (q->since && *q->since && local_midnight(q->since, 0, &f.from_minute) < 0) {
        snprintf(err, errlen, "since must be a date YYYY-MM-DD, got '%s'", q->since);
        return MCPAGE_EINVAL;
    }
    if (q->until && *q->until && local_midnight(q->until, 1, &f.to_minute) < 0) {
        snprintf(err, errlen, "until must be a date YYYY-MM-DD, got '%s'", q->until);
        return MCPAGE_EINVAL;
    }
    static const store_usage_group sg[] = {
        STORE_USAGE_BY_HOUR,    STORE_USAGE_BY_HOUR,  STORE_USAGE_BY_HOUR, STORE_USAGE_BY_SESSION,
        STORE_USAGE_BY_PROJECT, STORE_USAGE_BY_MODEL, STORE_USAGE_BY_AGENT};
    f.group = sg[q->group];
    store_usage_sums l = {0};
    const size_t max_rows = 2000000;
    int rc = store_usage_sums_get(s, &f, max_rows, &l);
    if (rc == 0 && f.group == STORE_USAGE_BY_HOUR && !whole_hours(&l)) {
        store_usage_sums_free(&l);
        f.group = STORE_USAGE_BY_MINUTE;
        rc = store_usage_sums_get(s, &f, max_rows, &l);
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", store_errmsg(s));
        return rc;
    }
    part *parts = l.count ? calloc(l.count, sizeof *parts) : NULL;
    if (l.count && !parts) {
        store_usage_sums_free(&l);
        return MCPAGE_ENOMEM;
    }
    size_t np = 0;
    for (size_t i = 0; i < l.count; i++) {
        const store_usage_sum *su = &l.rows[i];
        if ((!su->model || !*su->model) && !su->cost_given &&
            su->input + su->output + su->cache_creation + su->cache_read == 0)
            continue; /* calls that named no model and used nothing (<synthetic>) */
        part *p = &parts[np++];
        if (q->group <= USAGE_MONTHLY)
            time_key(q->group, f.group == STORE_USAGE_BY_MINUTE ? su->bucket : su->bucket * 60,
                     p->key);
        p->name = q->group == USAGE_MODEL ? (su->model ? su->model : "") : su->name;
        p->agent = su->source;
        p->project = su->project;
        p->model = su->model ? su->model : "";
        p->first = su->first;
        p->last = su->last;
        price_sum(prices, su, &p->c, &p->priced);
        p->given = su->cost_given;
        if (!p->priced && usage_counts_total(&p->c) > 0 && (rc = add_unpriced(out, su->model)) < 0)
            goto fail;
    }
    sort_group = q->group;
    if (np)
        qsort(parts, np, sizeof *parts, part_cmp);
    out->rows = np ? calloc(np, sizeof *out->rows) : NULL;
    if (np && !out->rows) {
        rc = MCPAGE_ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < np;) {
        size_t j = i;
        while (j < np && strcmp0(part_key(&parts[j]), part_key(&parts[i])) == 0 &&
               (q->group > USAGE_MONTHLY || strcmp0(parts[j].agent, parts[i].agent) == 0))
            j++;
        usage_row *row = &out->rows[out->count++];
        row->key = dup(part_key(&parts[i]));
        row->agent =
            q->group <= USAGE_MONTHLY || q->group == USAGE_SESSION ? dup(parts[i].agent) : NULL;
        row->project = q->group == USAGE_SESSION && parts[i].project ? dup(parts[i].project) : NULL;
        row->models = calloc(j - i, sizeof *row->models);
        if (!row->key || !row->models) {
            rc = MCPAGE_ENOMEM;
            goto fail;
        }
        for (size_t k = i; k < j; k++) {
            part *p = &parts[k];
            counts_add(&row->c, &p->c);
            if (p->first && (!row->first || strcmp(p->first, row->first) < 0)) {
                free(row->first);
                row->first = dup(p->first);
            }
            if (p->last && (!row->last || strcmp(p->last, row->last) > 0)) {
                free(row->last);
                row->last = dup(p->last);
            }
            usage_model_row *m = row->nmodels ? &row->models[row->nmodels - 1] : NULL;
            if (!m || strcmp(m->model, p->model) != 0) {
                m = &row->models[row->nmodels++];
                if (!(m->model = dup(p->model))) {
                    rc = MCPAGE_ENOMEM;
                    goto fail;
                }
            }
            counts_add(&m->c, &p->c);
            m->priced |= p->priced;
            m->given |= p->given;
        }
        qsort(row->models, row->nmodels, sizeof *row->models, model_cmp);
        counts_add(&out->totals, &row->c);
        i = j;
    }
    if (q->group > USAGE_MONTHLY && out->count)
        qsort(out->rows, out->count, sizeof *out->rows, row_cost_cmp);
    if (out->nunpriced)
        qsort(out->unpriced, out->nunpriced, sizeof *out->unpriced, str_cmp);
    free(parts);
    store_usage_sums_free(&l);
    return 0;
fail:
    free(parts);
    store_usage_sums_free(&l);
    usage_report_free(out);
    return rc;
}

void usage_report_free(usage_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        usage_row *row = &r->rows[i];
        free(row->key);
        free(row->agent);
        free(row->project);
        free(row->first);
        free(row->last);
        for (size_t k = 0; k < row->nmodels; k++)
            free(row->models[k].model);
        free(row->models);
    }
    free(r->rows);
    for (size_t i = 0; i < r->nunpriced; i++)
        free(r->unpriced[i]);
    free(r->unpriced);
    memset(r, 0, sizeof *r);
}

/* ---- JSON -------------------------------------------------------------------- */

json_t *usage_money(double v)
{
    return json_real(round(v * 1e6) / 1e6);
}

int usage_counts_json(json_t *o, const usage_counts *c)
{
    int rc = 0;
    rc |= json_object_set_new(o, "input_tokens", json_integer(c->input));
    rc |= json_object_set_new(o, "output_tokens", json_integer(c->output));
    rc |= json_object_set_new(o, "cache_creation_tokens", json_integer(c->cache_creation));
    rc |= json_object_set_new(o, "cache_read_tokens", json_integer(c->cache_read));
    rc |= json_object_set_new(o, "total_tokens", json_integer(usage_counts_total(c)));
    if (c->reasoning)
        rc |= json_object_set_new(o, "reasoning_tokens", json_integer(c->reasoning));
    rc |= json_object_set_new(o, "cost_usd", usage_money(c->cost_usd));
    if (c->cost_given_usd > 0)
        rc |= json_object_set_new(o, "cost_given_usd", usage_money(c->cost_given_usd));
    if (c->unpriced_tokens)
        rc |= json_object_set_new(o, "unpriced_tokens", json_integer(c->unpriced_tokens));
    return rc ? MCPAGE_ENOMEM : 0;
}

json_t *usage_row_json(const usage_report *r, const usage_row *row, int breakdown)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, row_key_name(r->group), json_string(row->key));
    if (r->group == USAGE_SESSION)
        json_object_set_new(o, "project", row->project ? json_string(row->project) : json_null());
    if (row->agent)
        json_object_set_new(o, "agent", json_string(row->agent));
    usage_counts_json(o, &row->c);
    if (r->group == USAGE_SESSION) {
        json_object_set_new(o, "first_activity", json_string(row->first ? row->first : ""));
        json_object_set_new(o, "last_activity", json_string(row->last ? row->last : ""));
    }
    if (r->group != USAGE_MODEL) {
        json_t *models = json_array();
        for (size_t k = 0; k < row->nmodels; k++)
            if (row->models[k].model[0])
                json_array_append_new(models, json_string(row->models[k].model));
        json_object_set_new(o, "models", models);
    }
    if (breakdown && r->group != USAGE_MODEL) {
        json_t *b = json_array();
        for (size_t k = 0; k < row->nmodels; k++) {
            const usage_model_row *m = &row->models[k];
            json_t *e = json_object();
            json_object_set_new(e, "model", json_string(m->model));
            usage_counts_json(e, &m->c);
            json_object_set_new(e, "priced", json_boolean(m->priced));
            json_array_append_new(b, e);
        }
        json_object_set_new(o, "breakdown", b);
    }
    if (r->group == USAGE_MODEL && row->nmodels)
        json_object_set_new(o, "priced", json_boolean(row->models[0].priced));
    return o;
}

json_t *usage_report_json(const usage_report *r, int breakdown, const usage_prices *p)
{
    json_t *o = json_object(), *rows = json_array(), *tot = json_object(), *un = json_array();
    if (!o || !rows || !tot || !un) {
        json_decref(o);
        json_decref(rows);
        json_decref(tot);
        json_decref(un);
        return NULL;
    }
    for (size_t i = 0; i < r->count; i++)
        json_array_append_new(rows, usage_row_json(r, &r->rows[i], breakdown));
    usage_counts_json(tot, &r->totals);
    json_object_set_new(tot, "cache_savings_usd", usage_money(r->totals.cache_savings_usd));
    for (size_t i = 0; i < r->nunpriced; i++)
        json_array_append_new(un, json_string(r->unpriced[i]));
    json_object_set_new(o, usage_group_list_key(r->group), rows);
    json_object_set_new(o, "totals", tot);
    json_object_set_new(o, "unpriced_models", un);
    json_t *pr = json_pack("{s:s, s:s}", "date", usage_prices_date, "source", usage_prices_source);
    if (pr && usage_prices_file(p))
        json_object_set_new(pr, "file", json_string(usage_prices_file(p)));
    json_object_set_new(o, "prices", pr);
    return o;
}
