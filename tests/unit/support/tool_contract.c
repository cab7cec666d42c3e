/*
 * The paging contract test over a whole registry (see tool_contract.h).
 */
#include "tool_contract.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_capture.h"
#include "page/tokens.h"

/* Pages a walk may take before it is declared endless. */
#define WALK_MAX_PAGES 20000

typedef enum family { FAM_NONE, FAM_LIST, FAM_LINES, FAM_BYTES, FAM_GRID } family;

typedef struct tc {
    mcpage_server *srv;          /* the server under test */
    capture *c;                  /* a session on it */
    int id;                      /* next request id */
    const tool_contract_opts *o; /* caller's options */
    tool_contract_report *rep;   /* counts */
    const char *tool;            /* the tool being checked */
    const json_t *props;         /* its inputSchema properties */
} tc;

static void fail(tc *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(tc *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "contract: %s: ", t->tool ? t->tool : "(server)");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    t->rep->failures++;
}

static json_t *request(tc *t, const char *method, json_t *params)
{
    int id = t->id++;
    json_t *req = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method", method,
                            "params", params);
    char *txt = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    capture_clear(t->c);
    capture_send(t->c, txt);
    free(txt);
    json_t *m;
    while ((m = capture_take(t->c)) != NULL) {
        if (json_integer_value(json_object_get(m, "id")) == id)
            return m;
        json_decref(m);
    }
    return NULL;
}

/* Calls the tool being checked with base args merged with `extra` (stolen). */
static json_t *call(tc *t, json_t *extra)
{
    json_t *args = t->o && t->o->base_args ? t->o->base_args(t->tool, t->o->ud) : NULL;
    if (args == NULL)
        args = json_object();
    if (extra)
        json_object_update(args, extra);
    json_decref(extra);
    t->rep->calls++;
    json_t *rep =
        request(t, "tools/call", json_pack("{s:s, s:o}", "name", t->tool, "arguments", args));
    json_t *res = json_incref(json_object_get(rep, "result"));
    if (res == NULL)
        fail(t, "tools/call got no result (JSON-RPC error?)");
    json_decref(rep);
    return res;
}

static const json_t *sc(const json_t *res)
{
    return json_object_get(res, "structuredContent");
}

static const char *text0(const json_t *res)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
}

/* The unit name from total_<unit>, or NULL. */
static const char *unit_of(const json_t *s, char *buf, size_t cap)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v)
    {
        if (strncmp(k, "total_", 6) == 0) {
            snprintf(buf, cap, "%s", k + 6);
            return buf;
        }
    }
    return NULL;
}

static void check_hint(tc *t, const json_t *s)
{
    const char *h = json_string_value(json_object_get(s, "hint"));
    for (const char *p = h; p && *p; p++) {
        if (*p != '=')
            continue;
        const char *b = p;
        while (b > h && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z')))
            b--;
        if (b == p)
            continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(p - b), b);
        if (json_object_get(t->props, name) == NULL)
            fail(t, "hint names parameter '%s' the inputSchema does not accept: %s", name, h);
    }
}

/* Every page of every family: the invariants. Returns the structured copy. */
static const json_t *check_page(tc *t, const json_t *res, const char *what)
{
    if (res == NULL)
        return NULL;
    if (json_is_true(json_object_get(res, "isError"))) {
        fail(t, "%s: unexpected error: %s", what, text0(res) ? text0(res) : "?");
        return NULL;
    }
    const json_t *s = sc(res);
    char unit[64];
    if (!json_is_object(s) || !unit_of(s, unit, sizeof unit)) {
        fail(t, "%s: no structuredContent with total_<unit>", what);
        return NULL;
    }
    if (!json_is_integer(json_object_get(s, "returned")) ||
        json_integer_value(json_object_get(s, "returned")) < 0)
        fail(t, "%s: returned missing or negative", what);
    if (!json_is_boolean(json_object_get(s, "has_more")))
        fail(t, "%s: has_more missing", what);
    if (text0(res) == NULL)
        fail(t, "%s: no text block first", what);
    if (json_is_true(json_object_get(s, "has_more")) && !json_is_string(json_object_get(s, "hint")))
        fail(t, "%s: has_more without a hint", what);
    check_hint(t, s);
    return s;
}

static void check_budget(tc *t, const json_t *res, int64_t budget, const char *what)
{
    const char *txt = text0(res);
    char *st = json_dumps(sc(res), JSON_COMPACT);
    size_t a = txt ? mcpage__tokens_estimate(txt, strlen(txt)) : 0;
    size_t b = st ? mcpage__tokens_estimate(st, strlen(st)) : 0;
    if ((int64_t)a > budget)
        fail(t, "%s: text copy %zu tokens over the budget %lld", what, a, (long long)budget);
    if ((int64_t)b > budget)
        fail(t, "%s: structuredContent %zu tokens over the budget %lld", what, b,
             (long long)budget);
    free(st);
}

static void expect_reject(tc *t, json_t *extra, const char *param, const char *code)
{
    char *desc = json_dumps(extra, JSON_COMPACT);
    json_t *res = call(t, extra);
    const json_t *err = json_object_get(sc(res), "error");
    if (!json_is_true(json_object_get(res, "isError")))
        fail(t, "%s was not rejected", desc);
    else if (!json_is_object(err))
        fail(t, "%s: rejection without the structured error shape", desc);
    else if (strcmp(json_string_value(json_object_get(err, "code")) ?: "", code) != 0 ||
             strcmp(json_string_value(json_object_get(err, "param")) ?: "", param) != 0)
        fail(t, "%s: error code/param %s/%s, expected %s/%s", desc,
             json_string_value(json_object_get(err, "code")),
             json_string_value(json_object_get(err, "param")), code, param);
    else if (text0(res) == NULL || strstr(text0(res), param) == NULL)
        fail(t, "%s: error text does not name %s", desc, param);
    free(desc);
    json_decref(res);
}

static void expect_clamp(tc *t, const char *param, json_int_t big)
{
    json_t *res = call(t, json_pack("{s:I}", param, big));
    const json_t *s = check_page(t, res, param);
    char flag[80];
    snprintf(flag, sizeof flag, "%s_clamped", param);
    if (s && !json_is_true(json_object_get(s, flag)))
        fail(t, "%s=%lld not disclosed as %s", param, (long long)big, flag);
    if (s && !strstr(json_string_value(json_object_get(s, "hint")) ?: "", param))
        fail(t, "%s clamp has no hint clause", param);
    json_decref(res);
}

static void check_invalid(tc *t, const char *param, bool zero_ok)
{
    if (json_object_get(t->props, param) == NULL)
        return;
    if (!zero_ok)
        expect_reject(t, json_pack("{s:i}", param, 0), param, "invalid_argument");
    expect_reject(t, json_pack("{s:i}", param, -1), param, "invalid_argument");
    expect_reject(t, json_pack("{s:s}", param, "x"), param, "invalid_argument");
    expect_reject(t, json_pack("{s:f}", param, 1.5), param, "invalid_argument");
}

static int64_t total_of(const json_t *s)
{
    char unit[64], key[80];
    if (!s || !unit_of(s, unit, sizeof unit))
        return -1;
    snprintf(key, sizeof key, "total_%s", unit);
    return json_integer_value(json_object_get(s, key));
}

static void check_list(tc *t)
{
    /* Budgets, with the record window at its maximum so the budget binds. */
    static const int64_t budgets[] = {500, 2000, 20000};
    for (size_t i = 0; i < 3; i++) {
        json_t *res = call(
            t, json_pack("{s:I, s:i}", "max_tokens", (json_int_t)budgets[i], "limit", 1000000));
        if (check_page(t, res, "budget page"))
            check_budget(t, res, budgets[i], "budget page");
        json_decref(res);
    }
    /* A full cursor walk: every record exactly once. */
    json_t *seen = json_object();
    json_t *res = call(t, json_pack("{s:i}", "limit", 3));
    const json_t *s = check_page(t, res, "walk page 1");
    int64_t total = total_of(s), n = 0;
    char unit[64];
    const char *u = s ? unit_of(s, unit, sizeof unit) : NULL;
    char *first_cursor = NULL;
    for (int page = 0; s && page < WALK_MAX_PAGES; page++) {
        const json_t *items = json_object_get(s, u);
        if (!json_is_array(items) || (json_int_t)json_array_size(items) !=
                                         json_integer_value(json_object_get(s, "returned")))
            fail(t, "page %d: items under \"%s\" do not match returned", page, u);
        size_t i;
        const json_t *r;
        json_array_foreach(items, i, r)
        {
            char *k = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
            if (json_object_get(seen, k))
                fail(t, "walk returned a record twice: %s", k);
            json_object_set_new(seen, k, json_true());
            free(k);
            n++;
        }
        if (!json_is_true(json_object_get(s, "has_more")))
            break;
        const char *cur = json_string_value(json_object_get(s, "next_cursor"));
        if (!cur) {
            fail(t, "has_more without next_cursor");
            break;
        }
        if (!first_cursor)
            first_cursor = strdup(cur);
        json_t *next = call(t, json_pack("{s:i, s:s}", "limit", 3, "cursor", cur));
        json_decref(res);
        res = next;
        s = check_page(t, res, "walk page");
    }
    if (total >= 0 && n != total)
        fail(t, "cursor walk returned %lld records, total said %lld", (long long)n,
             (long long)total);
    json_decref(res);
    json_decref(seen);
    /* Clamps. */
    expect_clamp(t, "limit", 100000);
    expect_clamp(t, "max_tokens", 100000000);
    /* Invalid windows. */
    check_invalid(t, "limit", false);
    check_invalid(t, "max_tokens", false);
    check_invalid(t, "offset", true);
    if (json_object_get(t->props, "fields"))
        expect_reject(t, json_pack("{s:[s]}", "fields", "no_such_field"), "fields",
                      "invalid_argument");
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
    /* Past the end. */
    if (total >= 0) {
        json_t *pe = call(t, json_pack("{s:I}", "offset", (json_int_t)(total + 5)));
        const json_t *ps = check_page(t, pe, "past the end");
        if (ps && (json_integer_value(json_object_get(ps, "returned")) != 0 ||
                   json_is_true(json_object_get(ps, "has_more")) ||
                   !json_is_string(json_object_get(ps, "hint"))))
            fail(t, "past-the-end page: want returned 0, has_more false and a hint");
        json_decref(pe);
    }
    /* Tampered cursor. */
    if (first_cursor) {
        size_t len = strlen(first_cursor);
        first_cursor[len / 2] = first_cursor[len / 2] == 'A' ? 'B' : 'A';
        expect_reject(t, json_pack("{s:s}", "cursor", first_cursor), "cursor", "invalid_cursor");
        expect_reject(t, json_pack("{s:s}", "cursor", "c1.garbage"), "cursor", "invalid_cursor");
    }
    free(first_cursor);
}

/* CONTENT-line and CONTENT-byte: walk by the resume field to the end. */
static void check_content(tc *t, family f)
{
    const char *size = f == FAM_LINES ? "max_lines" : "max_bytes";
    const char *start = f == FAM_LINES ? "start_line" : "offset";
    const char *next = f == FAM_LINES ? "next_start_line" : "next_offset";
    static const int64_t budgets[] = {500, 2000, 20000};
    for (size_t i = 0; i < 3; i++) {
        json_t *res =
            call(t, json_pack("{s:I, s:i}", "max_tokens", (json_int_t)budgets[i], size, 100000000));
        if (check_page(t, res, "budget page"))
            check_budget(t, res, budgets[i], "budget page");
        json_decref(res);
    }
    json_t *res = call(t, json_pack("{s:i}", size, 7));
    const json_t *s = check_page(t, res, "walk page 1");
    int64_t total = total_of(s), sum = 0;
    for (int page = 0; s && page < WALK_MAX_PAGES; page++) {
        if (f == FAM_BYTES)
            sum += json_integer_value(json_object_get(s, "returned"));
        if (total_of(s) != total)
            fail(t, "total changed during a walk");
        if (!json_is_true(json_object_get(s, "has_more")))
            break;
        const json_t *nx = json_object_get(s, next);
        if (!json_is_integer(nx)) {
            fail(t, "has_more without %s", next);
            break;
        }
        json_t *extra = json_pack("{s:i, s:O}", size, 7, start, nx);
        const json_t *col = json_object_get(s, "next_start_column");
        if (col)
            json_object_set(extra, "start_column", (json_t *)col);
        json_t *n2 = call(t, extra);
        json_decref(res);
        res = n2;
        s = check_page(t, res, "walk page");
    }
    if (f == FAM_BYTES && sum != total)
        fail(t, "byte walk returned %lld bytes, total_bytes %lld", (long long)sum,
             (long long)total);
    if (f == FAM_LINES && s && json_integer_value(json_object_get(s, "end_line")) != total)
        fail(t, "line walk ended at line %lld, total_lines %lld",
             (long long)json_integer_value(json_object_get(s, "end_line")), (long long)total);
    json_decref(res);
    expect_clamp(t, size, 1000000000);
    expect_clamp(t, "max_tokens", 100000000);
    check_invalid(t, size, false);
    check_invalid(t, "max_tokens", false);
    check_invalid(t, start, f == FAM_BYTES);
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
    if (total >= 0) {
        json_t *pe = call(t, json_pack("{s:I}", start, (json_int_t)(total + 5)));
        const json_t *ps = check_page(t, pe, "past the end");
        if (ps && (json_integer_value(json_object_get(ps, "returned")) != 0 ||
                   json_is_true(json_object_get(ps, "has_more"))))
            fail(t, "past-the-end page: want returned 0 and has_more false");
        json_decref(pe);
    }
}

/* SPATIAL: invariants, budgets, bounds and next_regions. */
static void check_grid(tc *t)
{
    static const int64_t budgets[] = {500, 2000, 20000};
    for (size_t i = 0; i < 3; i++) {
        json_t *res =
            call(t, json_pack("{s:I, s:{s:i, s:i, s:i, s:i}}", "max_tokens", (json_int_t)budgets[i],
                              "region", "row", 0, "col", 0, "rows", 1000000, "cols", 1000000));
        const json_t *s = check_page(t, res, "budget page");
        if (s) {
            check_budget(t, res, budgets[i], "budget page");
            if (!json_is_object(json_object_get(s, "bounds")))
                fail(t, "grid page without bounds");
            if (json_is_true(json_object_get(s, "has_more")) &&
                !json_is_object(json_object_get(s, "next_regions")))
                fail(t, "grid page has_more without next_regions");
        }
        json_decref(res);
    }
    expect_clamp(t, "max_tokens", 100000000);
    check_invalid(t, "max_tokens", false);
    expect_reject(
        t,
        json_pack("{s:{s:i, s:i, s:i, s:i}}", "region", "row", 0, "col", 0, "rows", 0, "cols", 1),
        "region.rows", "invalid_argument");
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
}

static family family_of(const json_t *props)
{
    if (json_object_get(props, "region"))
        return FAM_GRID;
    if (json_object_get(props, "start_line") && json_object_get(props, "max_lines"))
        return FAM_LINES;
    if (json_object_get(props, "max_bytes") && json_object_get(props, "offset"))
        return FAM_BYTES;
    if (json_object_get(props, "limit") &&
        (json_object_get(props, "cursor") || json_object_get(props, "offset")))
        return FAM_LIST;
    return FAM_NONE;
}

json_t *tool_contract_call(mcpage_server *srv, const char *tool, json_t *args)
{
    tool_contract_report rep = {0};
    tc t = {.srv = srv, .id = 1, .rep = &rep, .tool = tool};
    t.c = capture_on(srv);
    capture_init(t.c);
    json_t *res = call(&t, args);
    capture_free(t.c);
    return res;
}

void tool_contract_check(mcpage_server *srv, const tool_contract_opts *o, tool_contract_report *rep)
{
    memset(rep, 0, sizeof *rep);
    tc t = {.srv = srv, .id = 1, .o = o, .rep = rep};
    t.c = capture_on(srv);
    capture_init(t.c);
    json_t *tools = json_array();
    json_t *cursor = NULL;
    for (int i = 0; i < 1000; i++) {
        json_t *params = cursor ? json_pack("{s:O}", "cursor", cursor) : json_object();
        json_t *r = request(&t, "tools/list", params);
        const json_t *res = json_object_get(r, "result");
        json_array_extend(tools, json_object_get(res, "tools"));
        json_decref(cursor);
        cursor = json_incref(json_object_get(res, "nextCursor"));
        json_decref(r);
        if (!cursor)
            break;
    }
    size_t i;
    json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        rep->tools_seen++;
        t.tool = json_string_value(json_object_get(tool, "name"));
        t.props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
        family f = family_of(t.props);
        /* Window parameters state their maximum in words, never as a schema maximum. */
        const char *k;
        json_t *p;
        json_object_foreach((json_t *)t.props, k, p)
        {
            if (json_object_get(p, "maximum"))
                fail(&t, "parameter %s has a schema maximum (clamped params must not)", k);
        }
        if (f == FAM_NONE)
            continue;
        rep->tools_paged++;
        if (f == FAM_LIST)
            check_list(&t);
        else if (f == FAM_GRID)
            check_grid(&t);
        else
            check_content(&t, f);
    }
    json_decref(tools);
    capture_free(t.c);
}
