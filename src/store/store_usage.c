/*
 * Model calls and what they cost (store.h, "usage"), written once for
 * both backends over store_ops.sql_rows: the copies of a call and which
 * one counts, the copies a session reset takes away, and the sums the
 * reports add up (src/tools/usage.c prices them).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "store/store_backend.h"
#include "store/store_sql.h"

/* ---- time ------------------------------------------------------------ */

static int digits(const char *p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int64_t store_usage_minute(const char *ts)
{
    int y, mo, d, h = 0, mi = 0;
    if (!ts || strlen(ts) < 10 || !digits(ts, 4, &y) || ts[4] != '-' || !digits(ts + 5, 2, &mo) ||
        ts[7] != '-' || !digits(ts + 8, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31)
        return INT64_MIN;
    const char *p = ts + 10;
    int off = 0; /* minutes east of UTC */
    if (*p == 'T' || *p == ' ') {
        if (!digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &mi) || h > 23 || mi > 59)
            return INT64_MIN;
        p += 6;
        if (*p == ':') { /* seconds and a fraction: within the minute */
            p++;
            while (*p >= '0' && *p <= '9')
                p++;
            if (*p == '.' || *p == ',') {
                p++;
                while (*p >= '0' && *p <= '9')
                    p++;
            }
        }
        if (*p == '+' || *p == '-') {
            int oh = 0, om = 0;
            int sign = *p == '-' ? -1 : 1;
            if (!digits(p + 1, 2, &oh))
                return INT64_MIN;
            const char *q = p + 3;
            if (*q == ':')
                q++;
            if (*q && !digits(q, 2, &om))
                return INT64_MIN;
            off = sign * (oh * 60 + om);
        } else if (*p && *p != 'Z' && *p != 'z') {
            return INT64_MIN;
        }
    } else if (*p) {
        return INT64_MIN;
    }
    return days_from_civil(y, mo, d) * 1440 + h * 60 + mi - off;
}

/* ---- writing ----------------------------------------------------------- */

static int first_int(void *ctx, const store_sql_row *row)
{
    int64_t *v = ctx;
    v[0] = 1;
    v[1] = row->int64(row->res, 0);
    v[2] = row->int64(row->res, 1);
    v[3] = row->int64(row->res, 2);
    return 0;
}

static int64_t call_total(const store_usage *u)
{
    return u->input + u->output + u->cache_creation + u->cache_read;
}

typedef struct sid_row {
    int found;
    int64_t sid;
    char source[64];
} sid_row;

static int take_sid(void *ctx, const store_sql_row *row)
{
    sid_row *r = ctx;
    r->found = 1;
    r->sid = row->int64(row->res, 0);
    const char *src = row->text(row->res, 1);
    snprintf(r->source, sizeof r->source, "%s", src ? src : "");
    return 0;
}

/* Runs a statement of this file. None reads a session's message count
 * or time span, so a backend that keeps those pending while a sync adds
 * messages (SQLite) need not write them first (store_sql.h). */
static int usage_rows(store *s, store_sql *q, store_sql_each_fn each, void *ctx)
{
    q->keeps_pending = 1;
    return s->ops->sql_rows(s, q, each, ctx);
}

/* The session's row id and agent. */
static int session_sid(store *s, const char *id, sid_row *r)
{
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT sid, source FROM sessions WHERE session_id = ?");
    store_sql_text(&q, id);
    memset(r, 0, sizeof *r);
    int rc = usage_rows(s, &q, take_sid, r);
    if (rc < 0)
        return rc;
    if (!r->found)
        return store_fail(s, MCPAGE_ENOTFOUND, "no session %s to add usage to", id);
    return 0;
}

/* ---- the hourly sums (usage_hours) ---------------------------------------- */

/* The hour of calls without a time: apart from every real hour. */
#define NO_HOUR "-4611686018427387904"

static const char *greatest(const store *s)
{
    return s->ops->dialect->numbered ? "greatest" : "max";
}

/* The upsert's tail: each sum grows by the new row's (one literal: it
 * was built by 13 snprintf calls per model call a sync stored). */
#define SUM(col) col " = usage_hours." col " + excluded." col
/* clang-format off */
static const char ROLLUP_UPSERT[] =
    " ON CONFLICT(hour, source, model, cost_given) DO UPDATE SET "
    SUM("calls") ", " SUM("input") ", " SUM("output") ", "
    SUM("cache_creation") ", " SUM("cache_creation_1h") ", " SUM("cache_read") ", "
    SUM("reasoning") ", " SUM("over_input") ", " SUM("over_output") ", "
    SUM("over_cache_5m") ", " SUM("over_cache_1h") ", " SUM("over_cache_read") ", "
    SUM("cost_usd");
/* clang-format on */
#undef SUM

static void rollup_upsert(store_sql *q)
{
    store_sql_add(q, ROLLUP_UPSERT);
}

/*
 * Adds (sign "1") or takes away ("-1") the counted calls of usage_calls
 * that `cond` (one integer parameter: `v`) selects to the hourly sums.
 */
static int rollup_rows(store *s, const char *sign, const char *cond, int64_t v)
{
    const char *mx = greatest(s);
    char sums[900];
    snprintf(sums, sizeof sums,
             "%s * count(*), %s * sum(input), %s * sum(output), %s * sum(cache_creation), "
             "%s * sum(cache_creation_1h), %s * sum(cache_read), %s * sum(reasoning), "
             "%s * sum(%s(input - %d, 0)), %s * sum(%s(output - %d, 0)), "
             "%s * sum(%s(cache_creation - cache_creation_1h - %d, 0)), "
             "%s * sum(%s(cache_creation_1h - %d, 0)), %s * sum(%s(cache_read - %d, 0)), "
             "%s * sum(cost_usd)",
             sign, sign, sign, sign, sign, sign, sign, sign, mx, STORE_USAGE_TIER, sign, mx,
             STORE_USAGE_TIER, sign, mx, STORE_USAGE_TIER, sign, mx, STORE_USAGE_TIER, sign, mx,
             STORE_USAGE_TIER, sign);
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "INSERT INTO usage_hours(hour, source, model, cost_given, calls, input, "
                      "output, cache_creation, cache_creation_1h, cache_read, reasoning, "
                      "over_input, over_output, over_cache_5m, over_cache_1h, over_cache_read, "
                      "cost_usd) SELECT coalesce(minute / 60, " NO_HOUR
                      "), source, coalesce(model, ''), cost_given, ");
    store_sql_add(&q, sums);
    store_sql_add(&q, " FROM usage_calls WHERE counted = 1 AND ");
    store_sql_add(&q, cond);
    store_sql_int(&q, v);
    store_sql_add(&q, " GROUP BY coalesce(minute / 60, " NO_HOUR
                      "), source, coalesce(model, ''), cost_given");
    rollup_upsert(&q);
    return usage_rows(s, &q, NULL, NULL);
}

static int64_t past_tier(int64_t n)
{
    return n > STORE_USAGE_TIER ? n - STORE_USAGE_TIER : 0;
}

/*
 * Adds one counted call to the hourly sums (sign 1), or takes it away
 * (-1). One row's VALUES: unlike an INSERT ... SELECT it opens no
 * statement savepoint, which would make FTS5 flush its pending terms as
 * a segment of its own (a third of a sync's CPU when every replaced
 * Claude Code call did).
 */
static int rollup_call(store *s, const char *source, int64_t minute, const store_usage *u, int sign)
{
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "INSERT INTO usage_hours(hour, source, model, cost_given, calls, input, "
                      "output, cache_creation, cache_creation_1h, cache_read, reasoning, "
                      "over_input, over_output, over_cache_5m, over_cache_1h, over_cache_read, "
                      "cost_usd) VALUES(");
    if (minute != INT64_MIN) {
        store_sql_add(&q, "?");
        /* as SQL's minute / 60 (truncated toward 0) */
        store_sql_int(&q, minute / 60);
    } else {
        store_sql_add(&q, NO_HOUR);
    }
    store_sql_add(&q, ", ?, ?, ");
    store_sql_text(&q, source);
    store_sql_text(&q, u->model && *u->model ? u->model : "");
    store_sql_add(&q, u->cost_given ? "1, ?" : "0, ?");
    store_sql_int(&q, sign);
    int64_t v[] = {u->input,
                   u->output,
                   u->cache_creation,
                   u->cache_creation_1h,
                   u->cache_read,
                   u->reasoning,
                   past_tier(u->input),
                   past_tier(u->output),
                   past_tier(u->cache_creation - u->cache_creation_1h),
                   past_tier(u->cache_creation_1h),
                   past_tier(u->cache_read)};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        store_sql_add(&q, ", ?");
        store_sql_int(&q, sign * v[i]);
    }
    store_sql_add(&q, ", ?)");
    store_sql_real(&q, sign * (u->cost_given ? u->cost_usd : 0.0));
    rollup_upsert(&q);
    return usage_rows(s, &q, NULL, NULL);
}

/* A counted call's row, as rollup_call takes it. */
typedef struct call_row {
    int found;
    int64_t minute; /* INT64_MIN: none */
    char *source, *model;
    store_usage u;
} call_row;

static int take_call(void *ctx, const store_sql_row *row)
{
    call_row *c = ctx;
    c->found = 1;
    c->minute = row->int64(row->res, 0) ? INT64_MIN : row->int64(row->res, 1);
    int rc = store_sql_col_dup(row, 2, 0, &c->source);
    if (rc == 0)
        rc = store_sql_col_dup(row, 3, 1, &c->model);
    c->u.model = c->model;
    c->u.cost_given = (int)row->int64(row->res, 4);
    int64_t *n[] = {&c->u.input,      &c->u.output,   &c->u.cache_creation, &c->u.cache_creation_1h,
                    &c->u.cache_read, &c->u.reasoning};
    for (int i = 0; i < 6; i++)
        *n[i] = row->int64(row->res, 5 + i);
    c->u.cost_usd = row->real(row->res, 11);
    return rc;
}

/* Adds counted call `id` to the hourly sums (sign 1) or takes it away (-1). */
static int rollup_one(store *s, int64_t id, int sign)
{
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT CASE WHEN minute IS NULL THEN 1 ELSE 0 END, coalesce(minute, 0), "
                      "source, model, cost_given, input, output, cache_creation, "
                      "cache_creation_1h, cache_read, reasoning, cost_usd "
                      "FROM usage_calls WHERE id = ? AND counted = 1");
    store_sql_int(&q, id);
    call_row c = {0};
    int rc = usage_rows(s, &q, take_call, &c);
    if (rc == 0 && c.found)
        rc = rollup_call(s, c.source ? c.source : "", c.minute, &c.u, sign);
    free(c.source);
    free(c.model);
    return rc;
}

int store_usage_add(store *s, const store_usage *u)
{
    if (!s || !u || !u->session_id)
        return MCPAGE_EINVAL;
    if (!s->writable)
        return store_fail(s, MCPAGE_EINVAL, "store opened read-only");
    if (u->input < 0 || u->output < 0 || u->cache_creation < 0 || u->cache_read < 0 ||
        u->reasoning < 0 || u->cache_creation_1h < 0 || u->cache_creation_1h > u->cache_creation)
        return store_fail(s, MCPAGE_EINVAL, "usage counts must be >= 0");
    sid_row sr;
    int rc = session_sid(s, u->session_id, &sr);
    if (rc < 0)
        return rc;
    int counted = 1;
    if (u->call_key && *u->call_key) {
        /* the counted copy: the same key, or (a sidechain on either side)
           the same message id, the part of a Claude key before ':'. A key
           scoped to its session ("<session>/<key>", sync_usage_put) names
           one call: a ':' in the session id ("zed:...") is no message id */
        const char *colon = strchr(u->call_key, '/') ? NULL : strchr(u->call_key, ':');
        size_t idlen = colon ? (size_t)(colon - u->call_key) : strlen(u->call_key);
        char *lo = malloc(idlen + 2), *hi = malloc(idlen + 2);
        if (!lo || !hi) {
            free(lo);
            free(hi);
            return MCPAGE_ENOMEM;
        }
        memcpy(lo, u->call_key, idlen);
        memcpy(hi, u->call_key, idlen);
        lo[idlen] = ':';
        hi[idlen] = ';';
        lo[idlen + 1] = hi[idlen + 1] = 0;
        /* one probe of the call_key index: the key itself, or the range of
           keys of its message id (the key lies in it). "+counted" keeps the
           planner off the (counted, minute) index, which it took for the OR
           of the two and then scanned every counted call per insert: sync of
           Claude Code transcripts was quadratic in their model calls */
        store_sql q = {.d = s->ops->dialect};
        store_sql_add(&q, "SELECT id, input + output + cache_creation + cache_read, sidechain "
                          "FROM usage_calls WHERE ");
        if (colon) {
            store_sql_add(&q, "call_key >= ? AND call_key < ? AND +counted = 1 AND "
                              "(call_key = ? OR sidechain = 1 OR ? = 1)");
            store_sql_text(&q, lo);
            store_sql_text(&q, hi);
            store_sql_text(&q, u->call_key);
            store_sql_int(&q, u->sidechain ? 1 : 0);
        } else {
            store_sql_add(&q, "call_key = ? AND +counted = 1");
            store_sql_text(&q, u->call_key);
        }
        store_sql_add(&q, " ORDER BY CASE WHEN call_key = ? THEN 0 ELSE 1 END, id LIMIT 1");
        store_sql_text(&q, u->call_key);
        int64_t v[4] = {0};
        rc = usage_rows(s, &q, first_int, v);
        free(lo);
        free(hi);
        if (rc < 0)
            return rc;
        if (v[0]) {
            int ex_side = v[3] != 0, cand_side = u->sidechain != 0;
            int replace = cand_side != ex_side ? ex_side : call_total(u) > v[2];
            if (replace) {
                if ((rc = rollup_one(s, v[1], -1)) < 0)
                    return rc;
                store_sql up = {.d = s->ops->dialect};
                store_sql_add(&up, "UPDATE usage_calls SET counted = 0 WHERE id = ?");
                store_sql_int(&up, v[1]);
                if ((rc = usage_rows(s, &up, NULL, NULL)) < 0)
                    return rc;
            } else {
                counted = 0;
            }
        }
    }
    int64_t minute = store_usage_minute(u->timestamp);
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "INSERT INTO usage_calls(sid, source, message_id, `timestamp`, minute, "
                      "call_key, sidechain, model, input, output, cache_creation, "
                      "cache_creation_1h, cache_read, reasoning, cost_usd, cost_given, counted) "
                      "VALUES(?, ?, ");
    store_sql_int(&q, sr.sid);
    store_sql_text(&q, sr.source);
    if (u->message_id > 0) {
        store_sql_add(&q, "?, ?, ");
        store_sql_int(&q, u->message_id);
    } else {
        store_sql_add(&q, "NULL, ?, ");
    }
    store_sql_text(&q, u->timestamp ? u->timestamp : "");
    if (minute != INT64_MIN) {
        store_sql_add(&q, "?, ");
        store_sql_int(&q, minute);
    } else {
        store_sql_add(&q, "NULL, ");
    }
    if (u->call_key && *u->call_key) {
        store_sql_add(&q, "?, ");
        store_sql_text(&q, u->call_key);
    } else {
        store_sql_add(&q, "NULL, ");
    }
    store_sql_add(&q, u->sidechain ? "1, " : "0, ");
    if (u->model && *u->model) {
        store_sql_add(&q, "?, ");
        store_sql_text(&q, u->model);
    } else {
        store_sql_add(&q, "NULL, ");
    }
    /* counts as parameters: 16 at most per statement, so the flags inline */
    store_sql_add(&q, "?, ?, ?, ?, ?, ?, ?, ");
    store_sql_int(&q, u->input);
    store_sql_int(&q, u->output);
    store_sql_int(&q, u->cache_creation);
    store_sql_int(&q, u->cache_creation_1h);
    store_sql_int(&q, u->cache_read);
    store_sql_int(&q, u->reasoning);
    store_sql_real(&q, u->cost_given ? u->cost_usd : 0.0);
    store_sql_add(&q, u->cost_given ? "1, " : "0, ");
    store_sql_add(&q, counted ? "1)" : "0)");
    rc = usage_rows(s, &q, NULL, NULL);
    if (rc == 0 && counted)
        rc = rollup_call(s, sr.source, minute, u, 1);
    return rc;
}

/* ---- a session's calls taken away --------------------------------------- */

typedef struct key_list {
    char **v;
    size_t n, cap;
    int oom;
} key_list;

static int collect_key(void *ctx, const store_sql_row *row)
{
    key_list *k = ctx;
    const char *t = row->text(row->res, 0);
    if (!t)
        return 0;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 16;
        char **v = realloc(k->v, cap * sizeof *v);
        if (!v)
            return MCPAGE_ENOMEM;
        k->v = v;
        k->cap = cap;
    }
    if (!(k->v[k->n] = store_strdup(t)))
        return MCPAGE_ENOMEM;
    k->n++;
    return 0;
}

/*
 * Before a session's rows are deleted (store_session_reset): its calls go
 * too, and where one of them was the counted copy of a key another
 * session also holds, the best remaining copy counts instead.
 */
int store_usage_forget(store *s, const char *session_id)
{
    sid_row sr;
    int rc = session_sid(s, session_id, &sr);
    if (rc == MCPAGE_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    int64_t sid = sr.sid;
    key_list keys = {0};
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT DISTINCT call_key FROM usage_calls WHERE sid = ? AND counted = 1 "
                      "AND call_key IS NOT NULL");
    store_sql_int(&q, sid);
    rc = usage_rows(s, &q, collect_key, &keys);
    if (rc == 0)
        rc = rollup_rows(s, "-1", "sid = ?", sid);
    if (rc == 0) {
        store_sql d = {.d = s->ops->dialect};
        store_sql_add(&d, "DELETE FROM usage_calls WHERE sid = ?");
        store_sql_int(&d, sid);
        rc = usage_rows(s, &d, NULL, NULL);
    }
    for (size_t i = 0; i < keys.n && rc == 0; i++) {
        store_sql p = {.d = s->ops->dialect};
        store_sql_add(&p, "SELECT id, 0, 0 FROM usage_calls WHERE call_key = ? ORDER BY "
                          "sidechain, input + output + cache_creation + cache_read DESC, id "
                          "LIMIT 1");
        store_sql_text(&p, keys.v[i]);
        int64_t best[4] = {0};
        if ((rc = usage_rows(s, &p, first_int, best)) < 0 || !best[0])
            continue;
        store_sql up = {.d = s->ops->dialect};
        store_sql_add(&up, "UPDATE usage_calls SET counted = 1 WHERE id = ?");
        store_sql_int(&up, best[1]);
        if ((rc = usage_rows(s, &up, NULL, NULL)) == 0)
            rc = rollup_one(s, best[1], 1);
    }
    for (size_t i = 0; i < keys.n; i++)
        free(keys.v[i]);
    free(keys.v);
    return rc;
}

/* ---- sums ----------------------------------------------------------------- */

typedef struct sums_ctx {
    store_usage_sums *out;
    size_t cap, max;
    store_usage_group group;
} sums_ctx;

static int dup_col(const store_sql_row *row, int col, char **out)
{
    return store_sql_col_dup(row, col, 0, out);
}

static int add_sum(void *ctx, const store_sql_row *row)
{
    sums_ctx *c = ctx;
    store_usage_sums *o = c->out;
    if (o->count >= c->max)
        return MCPAGE_ERANGE;
    if (o->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        store_usage_sum *v = realloc(o->rows, cap * sizeof *v);
        if (!v)
            return MCPAGE_ENOMEM;
        o->rows = v;
        c->cap = cap;
    }
    store_usage_sum *r = &o->rows[o->count];
    memset(r, 0, sizeof *r);
    o->count++;
    if (c->group == STORE_USAGE_BY_HOUR || c->group == STORE_USAGE_BY_MINUTE)
        r->bucket = row->int64(row->res, 0);
    else if (c->group != STORE_USAGE_BY_MODEL && dup_col(row, 0, &r->name) < 0)
        return MCPAGE_ENOMEM;
    if (dup_col(row, 1, &r->project) < 0 || dup_col(row, 2, &r->source) < 0 ||
        dup_col(row, 3, &r->model) < 0 || dup_col(row, 19, &r->first) < 0 ||
        dup_col(row, 20, &r->last) < 0)
        return MCPAGE_ENOMEM;
    if (c->group == STORE_USAGE_BY_PROJECT && !r->name && !(r->name = store_strdup("")))
        return MCPAGE_ENOMEM;
    r->cost_given = row->int64(row->res, 4) != 0;
    r->calls = row->int64(row->res, 5);
    int64_t *f[] = {&r->input,         &r->output,        &r->cache_creation, &r->cache_creation_1h,
                    &r->cache_read,    &r->reasoning,     &r->over_input,     &r->over_output,
                    &r->over_cache_5m, &r->over_cache_1h, &r->over_cache_read};
    for (int i = 0; i < 11; i++)
        *f[i] = row->int64(row->res, 6 + i);
    r->cost_usd = row->real(row->res, 17);
    return 0;
}

int store_usage_sums_get(store *s, const store_usage_filter *f, size_t max_rows,
                         store_usage_sums *out)
{
    if (!s || !f || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    const char *mx = s->ops->dialect->numbered ? "greatest" : "max";
    char tiers[5][160];
    static const char *const kinds[5] = {"input", "output", "cache_creation - cache_creation_1h",
                                         "cache_creation_1h", "cache_read"};
    for (int i = 0; i < 5; i++)
        snprintf(tiers[i], sizeof tiers[i], ", sum(%s(%s - %d, 0))", mx, kinds[i],
                 STORE_USAGE_TIER);
    /* the time groups and BY_AGENT read the call's own copy of its agent;
       a session or project needs the sessions */
    const char *g = "0", *extra = "NULL, u.source", *by = "g, u.source";
    int join = (f->project && *f->project) || (f->session_id && *f->session_id) || s->viewing;
    switch (f->group) {
    case STORE_USAGE_BY_HOUR:
        g = "u.minute / 60";
        break;
    case STORE_USAGE_BY_MINUTE:
        g = "u.minute";
        break;
    case STORE_USAGE_BY_SESSION:
        g = "s.session_id";
        extra = "max(p.name), max(s.source)";
        by = "g";
        join = 1;
        break;
    case STORE_USAGE_BY_PROJECT:
        g = "p.name";
        extra = "NULL, NULL";
        by = "g";
        join = 1;
        break;
    case STORE_USAGE_BY_AGENT:
        g = "u.source";
        extra = "NULL, NULL";
        by = "g";
        break;
    case STORE_USAGE_BY_MODEL:
        g = "0";
        extra = "NULL, NULL";
        by = "g";
        break;
    }
    store_sql q = {.d = s->ops->dialect};
    int hourly = !join &&
                 (f->group == STORE_USAGE_BY_HOUR || f->group == STORE_USAGE_BY_AGENT ||
                  f->group == STORE_USAGE_BY_MODEL) &&
                 (f->from_minute == INT64_MIN || f->from_minute % 60 == 0) &&
                 (f->to_minute == INT64_MAX || f->to_minute % 60 == 0);
    if (hourly) {
        /* whole hours: the few rows of usage_hours instead of every call */
        const char *hg = f->group == STORE_USAGE_BY_HOUR    ? "hour"
                         : f->group == STORE_USAGE_BY_AGENT ? "source"
                                                            : "0";
        store_sql_add(&q, "SELECT ");
        store_sql_add(&q, hg);
        store_sql_add(&q, f->group == STORE_USAGE_BY_HOUR ? " AS g, NULL, source"
                                                          : " AS g, NULL, NULL");
        store_sql_add(&q, ", CASE WHEN model = '' THEN NULL ELSE model END, cost_given, "
                          "sum(calls), sum(input), sum(output), sum(cache_creation), "
                          "sum(cache_creation_1h), sum(cache_read), sum(reasoning), "
                          "sum(over_input), sum(over_output), sum(over_cache_5m), "
                          "sum(over_cache_1h), sum(over_cache_read), sum(cost_usd), 0, NULL, NULL "
                          "FROM usage_hours WHERE calls <> 0");
        if (f->group == STORE_USAGE_BY_HOUR || f->from_minute != INT64_MIN ||
            f->to_minute != INT64_MAX)
            store_sql_add(&q, " AND hour <> " NO_HOUR);
        if (f->from_minute != INT64_MIN) {
            store_sql_add(&q, " AND hour >= ?");
            store_sql_int(&q, f->from_minute / 60);
        }
        if (f->to_minute != INT64_MAX) {
            store_sql_add(&q, " AND hour < ?");
            store_sql_int(&q, f->to_minute / 60);
        }
        store_sql_where_text(&q, "source = ?", f->source);
        store_sql_add(&q,
                      f->group == STORE_USAGE_BY_HOUR ? " GROUP BY hour, source" : " GROUP BY g");
        store_sql_add(&q, ", model, cost_given");
        goto run;
    }
    store_sql_add(&q, "SELECT ");
    store_sql_add(&q, g);
    store_sql_add(&q, " AS g, ");
    store_sql_add(&q, extra);
    store_sql_add(&q, ", u.model, u.cost_given, count(*), sum(u.input), sum(u.output), "
                      "sum(u.cache_creation), sum(u.cache_creation_1h), sum(u.cache_read), "
                      "sum(u.reasoning)");
    for (int i = 0; i < 5; i++)
        store_sql_add(&q, tiers[i]);
    store_sql_add(&q, ", sum(u.cost_usd), 0, min(u.`timestamp`), max(u.`timestamp`) "
                      "FROM usage_calls u");
    if (join)
        store_sql_add(&q, " JOIN sessions s ON s.sid = u.sid LEFT JOIN projects p ON p.id = "
                          "s.project_id");
    store_sql_add(&q, " WHERE u.counted = 1");
    if (f->group == STORE_USAGE_BY_HOUR || f->group == STORE_USAGE_BY_MINUTE ||
        f->from_minute != INT64_MIN || f->to_minute != INT64_MAX)
        store_sql_add(&q, " AND u.minute IS NOT NULL");
    if (f->from_minute != INT64_MIN) {
        store_sql_add(&q, " AND u.minute >= ?");
        store_sql_int(&q, f->from_minute);
    }
    if (f->to_minute != INT64_MAX) {
        store_sql_add(&q, " AND u.minute < ?");
        store_sql_int(&q, f->to_minute);
    }
    store_sql_where_text(&q, "u.source = ?", f->source);
    store_sql_where_text(&q, "s.session_id = ?", f->session_id);
    if (f->project && *f->project) {
        store_sql_add(&q, " AND (p.name = ? OR p.path = ?)");
        store_sql_text(&q, f->project);
        store_sql_text(&q, f->project);
    }
    store_sql_visible(&q, store_view_of(s), "s");
    store_sql_add(&q, " GROUP BY ");
    store_sql_add(&q, by);
    store_sql_add(&q, ", u.model, u.cost_given");
run:;
    sums_ctx c = {.out = out, .max = max_rows, .group = f->group};
    int rc = usage_rows(s, &q, add_sum, &c);
    if (rc == MCPAGE_ERANGE) {
        store_usage_sums_free(out);
        return store_fail(s, MCPAGE_ERANGE, "more than %zu usage groups; narrow the filter",
                          max_rows);
    }
    if (rc < 0)
        store_usage_sums_free(out);
    return rc;
}

void store_usage_sums_free(store_usage_sums *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        store_usage_sum *r = &l->rows[i];
        free(r->name);
        free(r->project);
        free(r->source);
        free(r->model);
        free(r->first);
        free(r->last);
    }
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}

/* ---- the backfill of an older store -------------------------------------- */

int store_usage_reset(store *s, const char *session_id)
{
    if (!s || !session_id)
        return MCPAGE_EINVAL;
    if (!s->writable)
        return store_fail(s, MCPAGE_EINVAL, "store opened read-only");
    return store_usage_forget(s, session_id);
}

static int first_flag(void *ctx, const store_sql_row *row)
{
    *(int *)ctx = (int)row->int64(row->res, 0);
    return 0;
}

int store_usage_backfill_pending(store *s, int *pending)
{
    if (!s || !pending)
        return MCPAGE_EINVAL;
    *pending = 0;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT max(backfill) FROM usage_state");
    return usage_rows(s, &q, first_flag, pending);
}

int store_usage_backfill_done(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "UPDATE usage_state SET backfill = 0");
    return usage_rows(s, &q, NULL, NULL);
}

typedef struct id_list {
    char **ids, **sources;
    size_t n, cap;
} id_list;

static int collect_session(void *ctx, const store_sql_row *row)
{
    id_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        char **a = realloc(l->ids, cap * sizeof *a);
        if (!a)
            return MCPAGE_ENOMEM;
        l->ids = a;
        char **b = realloc(l->sources, cap * sizeof *b);
        if (!b)
            return MCPAGE_ENOMEM;
        l->sources = b;
        l->cap = cap;
    }
    l->ids[l->n] = store_strdup(row->text(row->res, 0));
    l->sources[l->n] = store_strdup(row->text(row->res, 1));
    if (!l->ids[l->n] || !l->sources[l->n]) {
        free(l->ids[l->n]);
        free(l->sources[l->n]);
        return MCPAGE_ENOMEM;
    }
    l->n++;
    return 0;
}

int store_usage_sessions(store *s, char ***ids, char ***sources, size_t *n)
{
    if (!s || !ids || !sources || !n)
        return MCPAGE_EINVAL;
    id_list l = {0};
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT session_id, source FROM sessions WHERE raw_size > 0 ORDER BY sid");
    int rc = usage_rows(s, &q, collect_session, &l);
    if (rc < 0) {
        store_usage_sessions_free(l.ids, l.sources, l.n);
        return rc;
    }
    *ids = l.ids;
    *sources = l.sources;
    *n = l.n;
    return 0;
}

void store_usage_sessions_free(char **ids, char **sources, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ids ? ids[i] : NULL);
        free(sources ? sources[i] : NULL);
    }
    free(ids);
    free(sources);
}
