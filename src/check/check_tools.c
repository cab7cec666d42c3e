/*
 * The checker's tool walks: which tools page (from the window parameters
 * of their inputSchema), which may be called (readOnlyHint, or --allow),
 * and for each: its default page measured against every host profile;
 * where the page claims mcpage's envelope (returned, total_<unit>,
 * has_more), the contract's rules (docs/contract.md): full walks by
 * cursor and by offset with every unit once, totals that agree, clamps
 * disclosed, invalid windows answered as isError naming the fix, past-
 * the-end pages, tampered cursors refused; elsewhere plain-language
 * findings from a walk by whatever next cursor the result carries.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check_internal.h"
#include "page/tokens.h"

typedef enum family { FAM_NONE, FAM_LIST, FAM_LINES, FAM_BYTES, FAM_GRID, FAM_OTHER } family;

static const char *const family_names[] = {"none",         "LIST",    "CONTENT-line",
                                           "CONTENT-byte", "SPATIAL", "paged"};

/* Parameter names that mark a window (a tool that takes one pages its result). */
static const char *const window_params[] = {
    "cursor",      "offset",     "limit",     "page",       "per_page", "page_size", "pageSize",
    "start_line",  "max_lines",  "max_bytes", "max_tokens", "region",   "head",      "tail",
    "max_results", "maxResults", "count",     "skip",       "top",      "first",     "after",
};

/* One tool being checked. */
typedef struct tool_ctx {
    check_ctx *c;                       /* the run */
    const char *name;                   /* the tool */
    const json_t *props;                /* inputSchema properties */
    json_t *base;                       /* arguments every call needs */
    long calls;                         /* calls made for this tool */
    long pages;                         /* pages measured */
    check_measure max[CHECK_HOSTS_MAX]; /* the largest page per host */
    check_measure def[CHECK_HOSTS_MAX]; /* the default page (no window arguments) per host */
    size_t raised_chars;                /* _meta["anthropic/maxResultSizeChars"], or 0 */
    size_t max_budget;                  /* the max_tokens maximum the schema states, or 0 */
    bool record_too_large;              /* a record too large for any page was reported */
    bool app_only;                      /* _meta.ui.visibility without "model" (MCP Apps) */
    json_t *rpc_error;  /* when not NULL, call() keeps a JSON-RPC error here instead of reporting */
    json_t *walks;      /* [{by, units, pages, ms}] of the full walks */
    bool stopped;       /* a call timed out: no more calls of this tool */
    int timeout_ms;     /* what one call may take */
    int64_t slowest_ms; /* the longest call that was answered */
} tool_ctx;

/* A finding about the tool, shown by the last request sent. */
#define FIND(t, sev, fix, ...) check__find((t)->c, sev, (t)->c->last_request, fix, __VA_ARGS__)

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_window_param(const char *k)
{
    for (size_t i = 0; i < sizeof window_params / sizeof window_params[0]; i++)
        if (strcmp(k, window_params[i]) == 0)
            return true;
    return false;
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
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)props, k, v)
    {
        if (is_window_param(k))
            return FAM_OTHER;
    }
    return FAM_NONE;
}

static void progress(tool_ctx *t)
{
    if (t->c->o->progress && t->calls % 200 == 0)
        fprintf(stderr, "\rmcpage check: %s: %ld calls, %ld pages   ", t->name, t->calls, t->pages);
}

/* Calls the tool with its base arguments and `extra` (stolen); the CallToolResult or NULL. */
static json_t *call(tool_ctx *t, json_t *extra)
{
    check_ctx *c = t->c;
    long max = c->o->max_calls > 0 ? c->o->max_calls : CHECK_DEFAULT_MAX_CALLS;
    if (c->rep->calls >= max) {
        if (!c->rep->aborted)
            check__find(c, CHECK_WARNING, NULL,
                        "raise --max-calls, or check the tools one at a time with --page-size",
                        "--max-calls %ld reached; checking stopped", max);
        c->rep->aborted = true;
        c->dead = true;
    }
    json_t *args = json_deep_copy(t->base);
    if (extra)
        json_object_update(args, extra);
    json_decref(extra);
    if (c->dead || t->stopped) {
        json_decref(args);
        return NULL;
    }
    c->rep->calls++;
    t->calls++;
    progress(t);
    int64_t asked = now_ms();
    c->call_timeout_ms = t->timeout_ms;
    json_t *r = check__request(c, "tools/call",
                               json_pack("{s:s, s:O}", "name", t->name, "arguments", args));
    c->call_timeout_ms = 0;
    if (c->timed_out) {
        c->timed_out = false;
        t->stopped = true;
        FIND(t, CHECK_WARNING,
             "answer within a host's timeout (or send progress notifications); a tool meant to "
             "be slow can say how long in a parameter's default (duration, timeout: seconds), "
             "or be given more with --timeout TOOL=SECONDS",
             "no reply within %.1f s: the call was cancelled (notifications/cancelled) and the "
             "tool's other checks skipped (--timeout '%s=SECONDS' waits longer)",
             t->timeout_ms / 1000.0, t->name);
    } else if (r && now_ms() - asked > t->slowest_ms) {
        t->slowest_ms = now_ms() - asked;
    }
    json_t *res = json_incref(json_object_get(r, "result"));
    check__harvest(c, t->name, args, res);
    json_decref(args);
    if (r && res == NULL && t->rpc_error) {
        json_object_update(t->rpc_error, json_object_get(r, "error"));
    } else if (r && res == NULL) {
        const json_t *e = json_object_get(r, "error");
        check__find(c, CHECK_ERROR, c->last_request,
                    "answer a tool's failures with an isError result that names the argument "
                    "and the fix (a JSON-RPC error may never reach the model)",
                    "JSON-RPC error %lld instead of a result: %s",
                    (long long)json_integer_value(json_object_get(e, "code")),
                    json_string_value(json_object_get(e, "message")) ?: "?");
    }
    json_decref(r);
    if (res && !json_is_true(json_object_get(res, "isError"))) {
        t->pages++;
        /* Hosts differ in the copy they show, and there are only two copies. */
        check_measure by_copy[2];
        bool done[2] = {false, false};
        for (size_t h = 0; h < check_host_count; h++) {
            size_t k = check_hosts[h].copy == CHECK_COPY_TEXT;
            if (!done[k])
                check_measure_result(&check_hosts[h], res, &by_copy[k]);
            done[k] = true;
            const check_measure m = by_copy[k];
            if (m.tokens > t->max[h].tokens)
                t->max[h].tokens = m.tokens;
            if (m.chars > t->max[h].chars)
                t->max[h].chars = m.chars;
            if (m.bytes > t->max[h].bytes)
                t->max[h].bytes = m.bytes;
            if (m.lines > t->max[h].lines)
                t->max[h].lines = m.lines;
        }
    }
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

/* What a server said, quoted in a finding (its buffer a compound literal
 * at the call, alive to the end of the statement): its first text, at most
 * SAID_MAX bytes, cut at a character with "..." after the cut (an error's
 * fix is often at its end, so a cut must show). */
#define SAID_MAX 400
typedef struct said_buf {
    char s[SAID_MAX + 8];
} said_buf;

static const char *said(const json_t *res, said_buf *b)
{
    const char *t = text0(res);
    if (t == NULL)
        return "?";
    size_t n = strlen(t);
    if (n <= SAID_MAX)
        return t;
    n = SAID_MAX;
    while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
        n--; /* not inside a UTF-8 character */
    memcpy(b->s, t, n);
    memcpy(b->s + n, "...", 4);
    return b->s;
}

/* ------------------------------------------------------------ the envelope (mcpage's contract) */

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

static bool claims_envelope(const json_t *res)
{
    char unit[64];
    const json_t *s = sc(res);
    return json_is_object(s) && json_object_get(s, "returned") && json_object_get(s, "has_more") &&
           unit_of(s, unit, sizeof unit);
}

static int64_t total_of(const json_t *s)
{
    char unit[64], key[80];
    if (!s || !unit_of(s, unit, sizeof unit))
        return -1;
    snprintf(key, sizeof key, "total_%s", unit);
    return json_integer_value(json_object_get(s, key));
}

/* A hint naming a parameter the tool does not accept sends the caller into an error. */
static void check_hint(tool_ctx *t, const json_t *s)
{
    check__names(t->c, t->c->last_request, "hint", json_string_value(json_object_get(s, "hint")),
                 t->name, t->props);
}

/* The tool of tools/list called `name`, or NULL. */
static const json_t *tool_named(const check_ctx *c, const char *name)
{
    size_t i;
    const json_t *tool;
    json_array_foreach(c->tools, i, tool)
    {
        if (name && strcmp(json_string_value(json_object_get(tool, "name")) ?: "", name) == 0)
            return tool;
    }
    return NULL;
}

/*
 * A record no page can carry: larger by itself than Claude Code's token
 * cap, or than the largest max_tokens the tool takes. A record cut to fit
 * (_truncated) is the remedy, so it is never one. `json` is its JSON text.
 */
static void check_record_size(tool_ctx *t, const json_t *record, const char *json, const char *how,
                              int page, size_t index)
{
    if (t->record_too_large || json == NULL || json_object_get(record, "_truncated"))
        return;
    const check_host *claude = &check_hosts[0];
    size_t cap = claude->max_tokens;
    if (t->max_budget > 0 && t->max_budget < cap)
        cap = t->max_budget;
    size_t n = strlen(json);
    if (n <= cap) /* a token is at least a byte */
        return;
    size_t tokens = mcpage__tokens_estimate(json, n);
    if (tokens <= cap)
        return;
    t->record_too_large = true;
    char over[96];
    if (cap == claude->max_tokens)
        snprintf(over, sizeof over, "%s's %zu-token cap", claude->name, cap);
    else
        snprintf(over, sizeof over, "the largest max_tokens the tool takes (%zu)", cap);
    FIND(t, CHECK_ERROR,
         "cut the record's long fields to fit a page and mark them with _truncated {field, "
         "read_with} naming a call that reads the rest in windows",
         "%s page %d, record %zu is about %zu tokens by itself, over %s: no page can carry it "
         "whole and nothing reads it in parts",
         how, page, index + 1, tokens, over);
}

/* The maximum a parameter's schema states: `maximum`, or "maximum N" / "at most N" / "up to N" in
 * its description; 0 if none. */
static size_t stated_maximum(const json_t *prop)
{
    const json_t *m = json_object_get(prop, "maximum");
    if (json_is_number(m) && json_number_value(m) >= 1)
        return (size_t)json_number_value(m);
    const char *d = json_string_value(json_object_get(prop, "description"));
    static const char *const marks[] = {"maximum ", "at most ", "up to "};
    for (size_t i = 0; d && i < sizeof marks / sizeof marks[0]; i++) {
        const char *p = strstr(d, marks[i]);
        if (p == NULL)
            continue;
        size_t v = 0;
        bool digits = false;
        for (p += strlen(marks[i]); (*p >= '0' && *p <= '9') || (*p == ',' && digits); p++) {
            if (*p == ',')
                continue;
            digits = true;
            if (v > SIZE_MAX / 10 - 10)
                return 0;
            v = v * 10 + (size_t)(*p - '0');
        }
        if (digits && v > 0)
            return v;
    }
    return 0;
}

/* A record cut to fit must say which call reads the rest (the contract's _truncated). */
static void check_truncated(tool_ctx *t, const json_t *record)
{
    const json_t *tr = json_object_get(record, "_truncated");
    if (tr == NULL)
        return;
    const json_t *one = json_is_array(tr) ? json_array_get(tr, 0) : tr;
    const json_t *with = json_object_get(one, "read_with");
    const char *tool = json_string_value(json_object_get(with, "tool"));
    if (tool == NULL)
        FIND(t, CHECK_WARNING,
             "give _truncated a read_with {tool, arguments} that reads the whole value in windows",
             "a record was cut (_truncated) with no read_with call to read it whole");
    else if (!tool_named(t->c, tool))
        FIND(t, CHECK_ERROR, "name a tool of tools/list in read_with",
             "_truncated.read_with names tool '%s', which tools/list lacks", tool);
    else {
        const json_t *props =
            json_object_get(json_object_get(tool_named(t->c, tool), "inputSchema"), "properties");
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(with, "arguments"), k, v)
        {
            if (json_object_get(props, k) == NULL)
                FIND(t, CHECK_ERROR, "pass only arguments the read_with tool takes",
                     "_truncated.read_with passes argument '%s', which %s's inputSchema lacks", k,
                     tool);
        }
    }
}

/* The invariants of every page; the structured copy, or NULL when the page is unusable. */
static const json_t *check_page(tool_ctx *t, const json_t *res, const char *what)
{
    if (res == NULL)
        return NULL;
    if (json_is_true(json_object_get(res, "isError"))) {
        FIND(t, CHECK_ERROR,
             "accept every window the contract allows; past the end is an empty page, too large "
             "is clamped",
             "%s: unexpected error: %s", what, said(res, &(said_buf){{0}}));
        return NULL;
    }
    const json_t *s = sc(res);
    char unit[64];
    if (!json_is_object(s) || !unit_of(s, unit, sizeof unit)) {
        FIND(t, CHECK_ERROR, "send the envelope on every page: structuredContent with total_<unit>",
             "%s: no structuredContent with total_<unit>", what);
        return NULL;
    }
    if (!json_is_integer(json_object_get(s, "returned")) ||
        json_integer_value(json_object_get(s, "returned")) < 0)
        FIND(t, CHECK_ERROR, "send returned: the number of items on the page",
             "%s: returned missing or negative", what);
    if (!json_is_boolean(json_object_get(s, "has_more")))
        FIND(t, CHECK_ERROR, "send has_more as true or false on every page",
             "%s: has_more missing or not a boolean", what);
    if (text0(res) == NULL)
        FIND(t, CHECK_ERROR, "put a text block with the page first in content",
             "%s: no text block first (hosts that show text see nothing)", what);
    if (json_is_true(json_object_get(s, "has_more")) && !json_is_string(json_object_get(s, "hint")))
        FIND(t, CHECK_ERROR, "add a hint naming the call that reads the next page",
             "%s: has_more without a hint naming the next call", what);
    check_hint(t, s);
    return s;
}

static void check_budget(tool_ctx *t, const json_t *res, int64_t budget)
{
    const char *txt = text0(res);
    char *st = json_dumps(sc(res), JSON_COMPACT);
    size_t a = txt ? mcpage__tokens_estimate(txt, strlen(txt)) : 0;
    size_t b = st ? mcpage__tokens_estimate(st, strlen(st)) : 0;
    if ((int64_t)a > budget)
        FIND(t, CHECK_ERROR,
             "measure the text copy on its final bytes and stop adding records at the budget",
             "text copy is %zu tokens, over max_tokens %lld", a, (long long)budget);
    if ((int64_t)b > budget)
        FIND(t, CHECK_ERROR,
             "measure the serialized structuredContent and stop adding records at the budget",
             "structuredContent is %zu tokens, over max_tokens %lld", b, (long long)budget);
    free(st);
}

static void expect_reject(tool_ctx *t, json_t *extra, const char *param, const char *code)
{
    char *desc = json_dumps(extra, JSON_COMPACT);
    json_t *res = call(t, extra);
    const json_t *err = json_object_get(sc(res), "error");
    if (res == NULL)
        ; /* already reported (JSON-RPC error or transport) */
    else if (!json_is_true(json_object_get(res, "isError")))
        FIND(t, CHECK_ERROR,
             "reject it with an isError result naming the parameter and the values it takes",
             "%s was not rejected (an invalid window must be an isError result)", desc);
    else if (!json_is_object(err))
        FIND(t, CHECK_ERROR,
             "add structuredContent {\"error\": {code, param, expected}} to the rejection",
             "%s: rejection without the structured error {code, param, ...}", desc);
    else if (strcmp(json_string_value(json_object_get(err, "code")) ?: "", code) != 0 ||
             strcmp(json_string_value(json_object_get(err, "param")) ?: "", param) != 0)
        FIND(t, CHECK_ERROR, "name the rejected parameter and the contract's code in error",
             "%s: error code/param %s/%s, expected %s/%s", desc,
             json_string_value(json_object_get(err, "code")) ?: "-",
             json_string_value(json_object_get(err, "param")) ?: "-", code, param);
    else if (text0(res) == NULL || strstr(text0(res), param) == NULL)
        FIND(t, CHECK_ERROR, "name the parameter and its valid values in the error text",
             "%s: error text does not name %s", desc, param);
    free(desc);
    json_decref(res);
}

static void expect_clamp(tool_ctx *t, const char *param, json_int_t big)
{
    if (json_object_get(t->props, param) == NULL)
        return;
    json_t *res = call(t, json_pack("{s:I}", param, big));
    if (res && json_is_true(json_object_get(res, "isError"))) {
        FIND(t, CHECK_ERROR, "lower it to the maximum, set <param>_clamped and say so in the hint",
             "%s=%lld was rejected; an oversized window must be clamped", param, (long long)big);
        json_decref(res);
        return;
    }
    const json_t *s = check_page(t, res, param);
    char flag[80];
    snprintf(flag, sizeof flag, "%s_clamped", param);
    if (s && !json_is_true(json_object_get(s, flag)))
        FIND(t, CHECK_ERROR, "set <param>_clamped: true and add a hint clause with the maximum",
             "%s=%lld clamped without saying so (no %s)", param, (long long)big, flag);
    else if (s && !strstr(json_string_value(json_object_get(s, "hint")) ?: "", param))
        FIND(t, CHECK_ERROR, "add a hint clause: '<param> N was lowered to the maximum M.'",
             "%s clamp has no hint clause naming %s", param, param);
    json_decref(res);
}

static void check_invalid(tool_ctx *t, const char *param, bool zero_ok)
{
    if (json_object_get(t->props, param) == NULL)
        return;
    if (!zero_ok)
        expect_reject(t, json_pack("{s:i}", param, 0), param, "invalid_argument");
    expect_reject(t, json_pack("{s:i}", param, -1), param, "invalid_argument");
    expect_reject(t, json_pack("{s:s}", param, "x"), param, "invalid_argument");
    expect_reject(t, json_pack("{s:f}", param, 1.5), param, "invalid_argument");
}

static void budget_pages(tool_ctx *t, json_t *(*window)(json_int_t budget))
{
    if (json_object_get(t->props, "max_tokens") == NULL)
        return;
    static const json_int_t budgets[] = {500, 2000, 20000};
    for (size_t i = 0; i < 3; i++) {
        json_t *res = call(t, window(budgets[i]));
        if (check_page(t, res, "budget page"))
            check_budget(t, res, budgets[i]);
        json_decref(res);
    }
}

static json_t *list_budget(json_int_t b)
{
    return json_pack("{s:I, s:i}", "max_tokens", b, "limit", 1000000);
}

static json_t *lines_budget(json_int_t b)
{
    return json_pack("{s:I, s:i}", "max_tokens", b, "max_lines", 100000000);
}

static json_t *bytes_budget(json_int_t b)
{
    return json_pack("{s:I, s:i}", "max_tokens", b, "max_bytes", 100000000);
}

static json_t *grid_budget(json_int_t b)
{
    return json_pack("{s:I, s:{s:i, s:i, s:i, s:i}}", "max_tokens", b, "region", "row", 0, "col", 0,
                     "rows", 1000000, "cols", 1000000);
}

/* The window of a walk page: --page-size, or the tool's default. */
static json_t *walk_window(tool_ctx *t, const char *size_param)
{
    json_t *w = json_object();
    if (t->c->o->page_size > 0 && json_object_get(t->props, size_param))
        json_object_set_new(w, size_param, json_integer(t->c->o->page_size));
    return w;
}

/* The records a page's folds name (each row's others). */
static int64_t folded_others(const json_t *s)
{
    int64_t k = 0;
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(s, "folds"), i, f) k +=
        (int64_t)json_array_size(json_object_get(f, "others"));
    return k;
}

/* A LIST walk by cursor (by_cursor) or by next_offset; n records, checked once each. */
static void walk_list(tool_ctx *t, bool by_cursor, char **first_cursor, int64_t *total_out)
{
    const char *how = by_cursor ? "cursor walk" : "offset walk";
    json_t *seen = json_object();
    bool repeated = false;
    int64_t started = now_ms();
    json_t *used = NULL; /* the cursor that asked for this page */
    json_t *res = call(t, walk_window(t, "limit"));
    const json_t *s = check_page(t, res, how);
    int64_t total = total_of(s), n = 0, prev_total = total;
    char unit[64];
    const char *u = s ? unit_of(s, unit, sizeof unit) : NULL;
    int page = 1;
    for (; s && page < CHECK_WALK_MAX_PAGES; page++) {
        const json_t *items = json_object_get(s, u);
        int64_t returned = json_integer_value(json_object_get(s, "returned"));
        /* Records folded into an earlier row of the page (mcpage's search)
           are records of the window without an item of their own. */
        int64_t folded = json_integer_value(json_object_get(s, "folded"));
        if (!json_is_array(items) || (int64_t)json_array_size(items) + folded != returned)
            FIND(t, CHECK_ERROR, "set returned to the number of items on the page (plus folded)",
                 "%s page %d: items under \"%s\" do not match returned %lld", how, page, u,
                 (long long)returned);
        if (folded_others(s) != folded)
            FIND(t, CHECK_ERROR, "list every folded record once in folds[].others",
                 "%s page %d: folds list %lld records, folded says %lld", how, page,
                 (long long)folded_others(s), (long long)folded);
        n += folded;
        if (total_of(s) != prev_total)
            FIND(t, CHECK_ERROR,
                 "count the total once per walk (or say order_may_have_shifted when it moves)",
                 "%s page %d: total_%s changed from %lld to %lld", how, page, u,
                 (long long)prev_total, (long long)total_of(s));
        prev_total = total_of(s);
        check_truncated(t, s); /* the column layout says a cut record's note once per page */
        size_t i;
        const json_t *r;
        json_array_foreach(items, i, r)
        {
            char *k = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
            if (k && json_object_get(seen, k) && !repeated) {
                FIND(
                    t, CHECK_ERROR,
                    "resume after the last record of the page (a key cursor, or offset + returned)",
                    "%s page %d repeats a record: %.120s", how, page, k);
                repeated = true;
            }
            if (k)
                json_object_set_new(seen, k, json_true());
            check_truncated(t, r);
            check_record_size(t, r, k, how, page, i);
            free(k);
            n++;
        }
        bool more = json_is_true(json_object_get(s, "has_more"));
        if (repeated) /* a walk that repeats may never end */
            break;
        if (!more) {
            if (returned > 0 && total >= 0 && n < total)
                FIND(t, CHECK_ERROR, "set has_more true while records remain after the page",
                     "%s page %d: has_more false after %lld of %lld %s", how, page, (long long)n,
                     (long long)total, u);
            break;
        }
        if (returned == 0) {
            FIND(t, CHECK_ERROR, "put at least one record on every page that is not the end",
                 "%s page %d: has_more true on an empty page (no progress)", how, page);
            break;
        }
        json_t *extra = walk_window(t, "limit");
        if (by_cursor) {
            const char *cur = json_string_value(json_object_get(s, "next_cursor"));
            if (!cur) {
                FIND(t, CHECK_ERROR, "send next_cursor whenever has_more is true",
                     "%s page %d: has_more without next_cursor", how, page);
                json_decref(extra);
                break;
            }
            if (used && strcmp(json_string_value(used), cur) == 0) {
                FIND(t, CHECK_ERROR,
                     "encode the position after the page's last record in next_cursor",
                     "%s page %d: next_cursor is the cursor of this page (the walk would loop)",
                     how, page);
                json_decref(extra);
                break;
            }
            if (first_cursor && !*first_cursor)
                *first_cursor = strdup(cur);
            json_object_set_new(extra, "cursor", json_string(cur));
            json_decref(used);
            used = json_string(cur);
        } else {
            const json_t *off = json_object_get(s, "next_offset");
            if (!json_is_integer(off)) {
                FIND(t, CHECK_ERROR, "send next_offset whenever has_more is true",
                     "%s page %d: has_more without next_offset", how, page);
                json_decref(extra);
                break;
            }
            if (json_integer_value(off) != n)
                FIND(t, CHECK_ERROR, "set next_offset to offset + returned",
                     "%s page %d: next_offset %lld after %lld records", how, page,
                     (long long)json_integer_value(off), (long long)n);
            json_object_set(extra, "offset", (json_t *)off);
        }
        json_t *next = call(t, extra);
        json_decref(res);
        res = next;
        s = check_page(t, res, how);
    }
    if (page >= CHECK_WALK_MAX_PAGES)
        FIND(t, CHECK_ERROR, "end the walk: has_more false on the last page",
             "%s did not end within %d pages", how, CHECK_WALK_MAX_PAGES);
    if (s && !repeated && total >= 0 && n != total)
        FIND(t, CHECK_ERROR,
             "make total_<unit> the count a full walk returns, and hand every record once",
             "%s returned %lld records, total_%s said %lld", how, (long long)n, u ? u : "?",
             (long long)total);
    if (total_out)
        *total_out = total;
    json_array_append_new(
        t->walks, json_pack("{s:s, s:I, s:i, s:I}", "by", by_cursor ? "cursor" : "offset", "units",
                            (json_int_t)n, "pages", page, "ms", (json_int_t)(now_ms() - started)));
    json_decref(used);
    json_decref(res);
    json_decref(seen);
}

static void past_the_end(tool_ctx *t, const char *param, int64_t total, bool want_hint)
{
    if (total < 0 || json_object_get(t->props, param) == NULL)
        return;
    json_t *pe = call(t, json_pack("{s:I}", param, (json_int_t)total + 5));
    const json_t *ps = check_page(t, pe, "past the end");
    if (ps && (json_integer_value(json_object_get(ps, "returned")) != 0 ||
               json_is_true(json_object_get(ps, "has_more"))))
        FIND(t, CHECK_ERROR, "answer a window past the end with an empty page and has_more false",
             "past-the-end page (%s=%lld): want returned 0 and has_more false", param,
             (long long)(total + 5));
    else if (ps && want_hint && !json_is_string(json_object_get(ps, "hint")))
        FIND(t, CHECK_ERROR, "add a hint naming the call that reads the last page",
             "past-the-end page (%s=%lld) has no hint saying where the last page starts", param,
             (long long)(total + 5));
    json_decref(pe);
}

static void contract_list(tool_ctx *t)
{
    budget_pages(t, list_budget);
    char *first_cursor = NULL;
    int64_t total = -1;
    if (json_object_get(t->props, "cursor"))
        walk_list(t, true, &first_cursor, &total);
    if (json_object_get(t->props, "offset"))
        walk_list(t, false, NULL, &total);
    expect_clamp(t, "limit", 100000);
    expect_clamp(t, "max_tokens", 100000000);
    check_invalid(t, "limit", false);
    check_invalid(t, "max_tokens", false);
    check_invalid(t, "offset", true);
    if (json_object_get(t->props, "fields"))
        expect_reject(t, json_pack("{s:[s]}", "fields", "no_such_field"), "fields",
                      "invalid_argument");
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
    past_the_end(t, "offset", total, true);
    if (first_cursor) {
        size_t len = strlen(first_cursor);
        first_cursor[len / 2] = first_cursor[len / 2] == 'A' ? 'B' : 'A';
        expect_reject(t, json_pack("{s:s}", "cursor", first_cursor), "cursor", "invalid_cursor");
        expect_reject(t, json_pack("{s:s}", "cursor", "c1.garbage"), "cursor", "invalid_cursor");
    }
    free(first_cursor);
}

/* CONTENT-line and CONTENT-byte: walk by the resume field to the end. */
static void contract_content(tool_ctx *t, family f)
{
    const char *size = f == FAM_LINES ? "max_lines" : "max_bytes";
    const char *start = f == FAM_LINES ? "start_line" : "offset";
    const char *next = f == FAM_LINES ? "next_start_line" : "next_offset";
    budget_pages(t, f == FAM_LINES ? lines_budget : bytes_budget);
    json_t *res = call(t, walk_window(t, size));
    const json_t *s = check_page(t, res, "walk");
    int64_t total = total_of(s), sum = 0, pos = f == FAM_LINES ? 1 : 0;
    int page = 1;
    for (; s && page < CHECK_WALK_MAX_PAGES; page++) {
        int64_t returned = json_integer_value(json_object_get(s, "returned"));
        sum += returned;
        if (total_of(s) != total)
            FIND(t, CHECK_ERROR, "report the same total on every page of a walk",
                 "walk page %d: the total changed during the walk", page);
        if (!json_is_true(json_object_get(s, "has_more")))
            break;
        const json_t *nx = json_object_get(s, next);
        if (!json_is_integer(nx)) {
            FIND(t, CHECK_ERROR, "send the resume field whenever has_more is true",
                 "walk page %d: has_more without %s", page, next);
            break;
        }
        const json_t *col = json_object_get(s, "next_start_column");
        if (json_integer_value(nx) <= pos && col == NULL) {
            FIND(t, CHECK_ERROR,
                 "resume after the page's last unit (or inside a long line by column)",
                 "walk page %d: %s %lld does not advance (the walk would loop)", page, next,
                 (long long)json_integer_value(nx));
            break;
        }
        pos = json_integer_value(nx);
        json_t *extra = walk_window(t, size);
        json_object_set(extra, start, (json_t *)nx);
        if (col)
            json_object_set(extra, "start_column", (json_t *)col);
        json_t *n2 = call(t, extra);
        json_decref(res);
        res = n2;
        s = check_page(t, res, "walk");
    }
    if (f == FAM_BYTES && s && sum != total)
        FIND(t, CHECK_ERROR, "make next_offset offset + returned and total_bytes the file's size",
             "byte walk returned %lld bytes, total_bytes said %lld", (long long)sum,
             (long long)total);
    if (f == FAM_LINES && s && total > 0 &&
        json_integer_value(json_object_get(s, "end_line")) != total)
        FIND(t, CHECK_ERROR, "make total_lines the last line a walk reaches",
             "line walk ended at line %lld, total_lines said %lld",
             (long long)json_integer_value(json_object_get(s, "end_line")), (long long)total);
    json_decref(res);
    expect_clamp(t, size, 1000000000);
    expect_clamp(t, "max_tokens", 100000000);
    check_invalid(t, size, false);
    check_invalid(t, "max_tokens", false);
    check_invalid(t, start, f == FAM_BYTES);
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
    past_the_end(t, start, total, false);
}

static void contract_grid(tool_ctx *t)
{
    budget_pages(t, grid_budget);
    json_t *res = call(t, grid_budget(2000));
    const json_t *s = check_page(t, res, "grid page");
    if (s && !json_is_object(json_object_get(s, "bounds")))
        FIND(t, CHECK_ERROR, "send bounds {rows, cols} of the whole grid",
             "grid page without bounds");
    if (s && json_is_true(json_object_get(s, "has_more")) &&
        !json_is_object(json_object_get(s, "next_regions")))
        FIND(t, CHECK_ERROR, "send next_regions {right, down} whenever has_more is true",
             "grid page has_more without next_regions");
    json_decref(res);
    expect_clamp(t, "max_tokens", 100000000);
    check_invalid(t, "max_tokens", false);
    expect_reject(
        t,
        json_pack("{s:{s:i, s:i, s:i, s:i}}", "region", "row", 0, "col", 0, "rows", 0, "cols", 1),
        "region.rows", "invalid_argument");
    expect_reject(t, json_pack("{s:i}", "no_such_param", 1), "no_such_param", "invalid_argument");
}

/* ------------------------------------------------------------ servers without the envelope */

/* The next-page cursor a result carries, wherever a server is likely to put it. */
static const json_t *generic_next(const json_t *res)
{
    static const char *const names[] = {"nextCursor", "next_cursor", "cursor_next", "next"};
    const json_t *s = sc(res);
    for (size_t i = 0; json_is_object(s) && i < sizeof names / sizeof names[0]; i++) {
        const json_t *v = json_object_get(s, names[i]);
        if (json_is_string(v) && json_string_length(v) > 0)
            return v;
    }
    return NULL;
}

/* The first array of a structured page: its items. */
static const json_t *generic_items(const json_t *res)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)sc(res), k, v)
    {
        if (json_is_array(v))
            return v;
    }
    return NULL;
}

/* The records of a page without the envelope: each within a page's reach. */
static void generic_records(tool_ctx *t, const json_t *res, int page)
{
    size_t i;
    const json_t *r;
    json_array_foreach(generic_items(res), i, r)
    {
        char *k = json_dumps(r, JSON_COMPACT | JSON_ENCODE_ANY);
        check_truncated(t, r);
        check_record_size(t, r, k, "walk", page, i);
        free(k);
    }
}

static void generic_walk(tool_ctx *t, json_t *first)
{
    generic_records(t, first, 1);
    if (!json_object_get(t->props, "cursor") || generic_next(first) == NULL)
        return;
    json_t *seen = json_object();
    bool repeated = false;
    json_t *res = json_incref(first);
    json_t *prev = NULL;
    for (int page = 1; res && page < CHECK_WALK_MAX_PAGES; page++) {
        size_t i;
        const json_t *r;
        json_array_foreach(generic_items(res), i, r)
        {
            char *k = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
            if (k && json_object_get(seen, k) && !repeated) {
                FIND(t, CHECK_ERROR, "make the next cursor resume after the last item of its page",
                     "page %d repeats an item of an earlier page: %.120s", page, k);
                repeated = true;
            }
            if (k)
                json_object_set_new(seen, k, json_true());
            free(k);
        }
        const json_t *nx = generic_next(res);
        if (page > 1)
            generic_records(t, res, page);
        if (nx == NULL || repeated)
            break;
        if (prev && json_equal(prev, nx)) {
            FIND(t, CHECK_ERROR,
                 "encode the position after the page's last item in the next cursor",
                 "page %d: the next cursor did not advance (the walk would loop)", page);
            break;
        }
        json_decref(prev);
        prev = json_incref((json_t *)nx);
        json_t *n2 = call(t, json_pack("{s:O}", "cursor", nx));
        json_decref(res);
        res = n2;
        if (res && json_is_true(json_object_get(res, "isError"))) {
            FIND(t, CHECK_ERROR,
                 "accept every cursor the tool issued (with the same other arguments)",
                 "page %d: the cursor the tool gave was refused: %s", page + 1,
                 said(res, &(said_buf){{0}}));
            break;
        }
    }
    json_decref(prev);
    json_decref(res);
    json_decref(seen);
}

/* The first of `names` that s holds as an integer (JSON numbers like 3.0 too), or -1. */
static int64_t int_field(const json_t *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_object_get(s, names[i]);
        if (json_is_integer(v))
            return json_integer_value(v);
        if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 9e15 &&
            json_real_value(v) == (double)(int64_t)json_real_value(v))
            return (int64_t)json_real_value(v);
    }
    return -1;
}

#define FIELD(s, ...)                                                                              \
    int_field(s, (const char *const[]){__VA_ARGS__},                                               \
              sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/*
 * A tool without the envelope that takes `offset` and says hasMore (or
 * has_more): walked by offset to the end. The next offset is the page's
 * nextOffset, or its offset plus what it returned (a count field, or its
 * items); what was walked must reach the total it states, hasMore must
 * be false only at the end, and no item may come twice.
 */
static void generic_offset_walk(tool_ctx *t, const json_t *first)
{
    const json_t *s = sc(first);
    const json_t *more = json_object_get(s, "hasMore") ?: json_object_get(s, "has_more");
    if (!json_object_get(t->props, "offset") || !json_is_boolean(more) ||
        json_object_get(t->props, "cursor"))
        return;
    int64_t started = now_ms(), sum = 0,
            total = FIELD(s, "totalBytes", "total_bytes", "total", "totalCount", "total_count",
                          "totalItems");
    int64_t pos = FIELD(json_object_get(t->base, "offset") ? t->base : s, "offset");
    json_t *seen = json_object();
    json_t *res = json_incref((json_t *)first);
    int page = 1;
    for (; res && page < CHECK_WALK_MAX_PAGES; page++) {
        s = sc(res);
        more = json_object_get(s, "hasMore") ?: json_object_get(s, "has_more");
        const json_t *items = generic_items(res);
        int64_t got = FIELD(s, "byteCount", "count", "returned", "bytesRead");
        if (got < 0)
            got = (int64_t)json_array_size(items);
        sum += got;
        bool repeated = false;
        size_t i;
        const json_t *r;
        json_array_foreach(items, i, r)
        {
            char *k = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
            if (k && json_object_get(seen, k))
                repeated = true;
            if (k)
                json_object_set_new(seen, k, json_true());
            free(k);
        }
        if (page > 1)
            generic_records(t, res, page);
        if (repeated) {
            FIND(t, CHECK_ERROR, "make the next offset the page's offset plus what it returned",
                 "offset walk page %d repeats an item of an earlier page", page);
            break;
        }
        if (!json_is_true(more)) {
            if (total >= 0 && sum < total && got > 0)
                FIND(t, CHECK_ERROR, "say hasMore true while anything remains after the page",
                     "offset walk page %d: hasMore false after %lld of %lld", page, (long long)sum,
                     (long long)total);
            break;
        }
        if (got <= 0) {
            FIND(t, CHECK_ERROR, "return something on every page that is not the end",
                 "offset walk page %d: hasMore true on an empty page (no progress)", page);
            break;
        }
        int64_t next = FIELD(s, "nextOffset", "next_offset");
        if (next < 0)
            next = (pos >= 0 ? pos : 0) + got;
        if (pos >= 0 && next <= pos) {
            FIND(t, CHECK_ERROR, "resume after the page's last unit",
                 "offset walk page %d: the next offset %lld does not advance (the walk would "
                 "loop)",
                 page, (long long)next);
            break;
        }
        pos = next;
        json_t *n2 = call(t, json_pack("{s:I}", "offset", (json_int_t)next));
        json_decref(res);
        res = n2;
        if (res && json_is_true(json_object_get(res, "isError"))) {
            FIND(t, CHECK_ERROR, "accept every offset below the total",
                 "offset walk page %d (offset %lld) was refused: %s", page + 1, (long long)next,
                 said(res, &(said_buf){{0}}));
            json_decref(res);
            res = NULL;
        }
    }
    if (res && total >= 0 && sum != total)
        FIND(t, CHECK_ERROR, "make the stated total what a full walk returns",
             "offset walk returned %lld, the total said %lld", (long long)sum, (long long)total);
    json_array_append_new(t->walks, json_pack("{s:s, s:I, s:i, s:I}", "by", "offset", "units",
                                              (json_int_t)sum, "pages", page, "ms",
                                              (json_int_t)(now_ms() - started)));
    json_decref(res);
    json_decref(seen);
}

/* Window sizes a tool without the envelope is probed with, oversized and invalid. */
static const char *const size_params[] = {
    "limit",      "per_page", "page_size", "pageSize",  "max_results",
    "maxResults", "count",    "max_lines", "max_bytes", "max_tokens",
};

/*
 * One probe of a plain tool's window size: `oversized` (100,000) should
 * be clamped, not rejected; an invalid one (-1) should be an isError
 * result that names the parameter, not a JSON-RPC error. Warnings: the
 * spec asks for both (SHOULD), the contract is not claimed.
 */
static void plain_probe(tool_ctx *t, const char *param, json_int_t v, bool oversized)
{
    json_t *err = json_object();
    t->rpc_error = err;
    json_t *res = call(t, json_pack("{s:I}", param, v));
    t->rpc_error = NULL;
    const char *txt = text0(res);
    if (json_object_size(err) > 0)
        FIND(t, CHECK_WARNING,
             oversized ? "lower an oversized window to the maximum and say so in the result"
                       : "answer an invalid window with an isError result naming the parameter "
                         "and the values it takes",
             "%s=%lld got JSON-RPC error %lld (%.120s), not %s", param, (long long)v,
             (long long)json_integer_value(json_object_get(err, "code")),
             json_string_value(json_object_get(err, "message")) ?: "?",
             oversized ? "a clamped page" : "an isError result the model can read");
    else if (res && json_is_true(json_object_get(res, "isError")) && oversized)
        FIND(t, CHECK_WARNING,
             "lower an oversized window to the maximum and say so in the result (a model "
             "cannot guess the maximum from an error)",
             "%s=%lld was rejected instead of clamped: %.160s", param, (long long)v, txt ?: "?");
    else if (res && json_is_true(json_object_get(res, "isError")) &&
             (txt == NULL || strstr(txt, param) == NULL))
        FIND(t, CHECK_WARNING, "name the parameter and the values it takes in the error text",
             "%s=%lld was rejected with a text that does not name %s: %.160s", param, (long long)v,
             param, txt ?: "?");
    json_decref(res);
    json_decref(err);
}

static void plain_windows(tool_ctx *t)
{
    for (size_t i = 0; i < sizeof size_params / sizeof size_params[0]; i++) {
        const char *type =
            json_string_value(json_object_get(json_object_get(t->props, size_params[i]), "type"));
        if (type == NULL || (strcmp(type, "integer") != 0 && strcmp(type, "number") != 0))
            continue;
        plain_probe(t, size_params[i], 100000, true);
        plain_probe(t, size_params[i], -1, false);
    }
}

/* ------------------------------------------------------------ per tool */

static bool allowed(const check_ctx *c, const json_t *tool, const char *name)
{
    const json_t *ann = json_object_get(tool, "annotations");
    if (json_is_true(json_object_get(ann, "readOnlyHint")))
        return true;
    size_t i;
    const json_t *v;
    json_array_foreach(c->o->allow, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

/* Appends name to the array unless it is there. */
static void add_name(json_t *names, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach(names, i, v)
    {
        if (strcmp(json_string_value(v), name) == 0)
            return;
    }
    json_array_append_new(names, json_string(name));
}

/* Appends a and then b to what (a phrase) within cap. */
static void say(char *what, size_t cap, const char *a, const char *b)
{
    size_t n = strlen(what);
    if (n < cap)
        snprintf(what + n, cap - n, "%s%s", a, b);
}

/*
 * The arguments a call needs that `base` lacks: the schema's `required`,
 * and where it states alternatives (anyOf/oneOf of `required` sets) and
 * `base` completes none of them, the names of the first set. Adds them
 * to needs and says them in `what` ("argument query", "one of
 * session_id or message_id"). True when something is missing.
 */
static bool missing_required(const json_t *schema, const json_t *base, json_t *needs, char *what,
                             size_t cap)
{
    what[0] = '\0';
    size_t i;
    const json_t *v;
    size_t lacking = 0;
    json_array_foreach(json_object_get(schema, "required"), i, v)
    {
        const char *k = json_string_value(v);
        if (k && !json_object_get(base, k)) {
            say(what, cap, what[0] ? ", " : "argument ", k);
            add_name(needs, k);
            lacking++;
        }
    }
    if (lacking > 1) { /* "argument a, b" -> "arguments a, b" */
        size_t n = strlen(what);
        if (n + 1 < cap) {
            memmove(what + 9, what + 8, n - 8 + 1);
            what[8] = 's';
        }
    }
    static const char *const alternatives[] = {"anyOf", "oneOf"};
    for (size_t a = 0; a < 2; a++) {
        const json_t *sets = json_object_get(schema, alternatives[a]);
        bool complete = false, any = false;
        json_array_foreach(sets, i, v)
        {
            const json_t *req = json_object_get(v, "required");
            if (!json_is_array(req) || json_array_size(req) == 0) {
                complete = true; /* a branch that requires nothing */
                continue;
            }
            any = true;
            bool all = true;
            size_t j;
            const json_t *k;
            json_array_foreach(req, j, k) all =
                all && json_is_string(k) && json_object_get(base, json_string_value(k));
            complete = complete || all;
        }
        if (complete || !any)
            continue;
        say(what, cap, what[0] ? "; " : "", "");
        json_array_foreach(sets, i, v)
        {
            size_t j;
            const json_t *k;
            say(what, cap, i ? " or " : "one of ", "");
            json_array_foreach(json_object_get(v, "required"), j, k)
            {
                if (!json_is_string(k))
                    continue;
                say(what, cap, j ? " and " : "", json_string_value(k));
                if (i == 0 && !json_object_get(base, json_string_value(k)))
                    add_name(needs, json_string_value(k));
            }
        }
    }
    return json_array_size(needs) > 0;
}

/*
 * The argument a refusal is about when it is not a window parameter (the
 * call lacked an identifier, or the one given names nothing): the
 * structured error's param, else a parameter of the schema the text
 * names in "missing"/"required"/"invalid" prose; NULL when the refusal
 * is about a window or cannot be told.
 */
static const char *refused_argument(const json_t *res, const json_t *props, char *buf, size_t cap)
{
    const char *p = json_string_value(json_object_get(json_object_get(sc(res), "error"), "param"));
    if (p) {
        size_t n = strcspn(p, ".[");
        snprintf(buf, cap, "%.*s", (int)n, p);
        return is_window_param(buf) ? NULL : buf;
    }
    const char *txt = text0(res);
    if (txt == NULL ||
        !(strstr(txt, "required") || strstr(txt, "missing") || strstr(txt, "Required") ||
          strstr(txt, "Missing") || strstr(txt, "nvalid")))
        return NULL;
    const char *k, *found = NULL;
    const json_t *v;
    json_object_foreach((json_t *)props, k, v)
    {
        const char *at = strstr(txt, k);
        size_t n = strlen(k);
        bool word = at && (at == txt || !(isalnum((unsigned char)at[-1]) || at[-1] == '_')) &&
                    !(isalnum((unsigned char)at[n]) || at[n] == '_');
        if (!word)
            continue;
        if (is_window_param(k))
            return NULL; /* the text is about a window too */
        found = found ? found : k;
    }
    if (found == NULL)
        return NULL;
    snprintf(buf, cap, "%s", found);
    return buf;
}

/*
 * What one call of the tool may take: --timeout TOOL=S, else --timeout
 * plus what the tool declares it takes (the default of a parameter that
 * is a duration: duration, timeout, delay, wait, sleep, seconds, or "in
 * seconds"/"milliseconds" in its description). `why` says which.
 */
static int tool_timeout(const check_ctx *c, const char *name, const json_t *props, char *why,
                        size_t cap)
{
    int base = c->o->timeout_ms > 0 ? c->o->timeout_ms : CHECK_DEFAULT_TIMEOUT_MS;
    why[0] = '\0';
    const json_t *set = json_object_get(c->o->tool_timeouts, name);
    if (json_is_number(set) && json_number_value(set) > 0) {
        snprintf(why, cap, "--timeout %s=%g", name, json_number_value(set));
        double ms = json_number_value(set) * 1000;
        return ms > 3600000 ? 3600000 : (int)ms;
    }
    double declared = 0;
    const char *k;
    const json_t *p;
    json_object_foreach((json_t *)props, k, p)
    {
        const json_t *def = json_object_get(p, "default");
        const char *d = json_string_value(json_object_get(p, "description")) ?: "";
        if (!json_is_number(def) || json_number_value(def) <= 0)
            continue;
        char sq[64];
        size_t n = 0;
        for (const char *q = k; *q && n + 1 < sizeof sq; q++)
            sq[n++] = (char)tolower((unsigned char)*q);
        sq[n] = '\0';
        bool ms = strstr(d, "millisecond") || (n > 2 && strcmp(sq + n - 2, "ms") == 0);
        bool duration = strstr(sq, "duration") || strstr(sq, "timeout") || strstr(sq, "delay") ||
                        strstr(sq, "wait") || strstr(sq, "sleep") || strstr(sq, "seconds") ||
                        strstr(d, "in seconds") || strstr(d, "milliseconds");
        if (!duration)
            continue;
        double sec = json_number_value(def) / (ms ? 1000.0 : 1.0);
        if (sec > declared) {
            declared = sec;
            snprintf(why, cap, "%s defaults to %g %s", k, json_number_value(def), ms ? "ms" : "s");
        }
    }
    if (declared > 3600)
        declared = 3600;
    return base + (int)(declared * 1000);
}

static void static_checks(tool_ctx *t, const json_t *tool)
{
    const char *d = json_string_value(json_object_get(tool, "description"));
    if (d && strlen(d) > CHECK_DESCRIPTION_MAX)
        check__find(
            t->c, CHECK_WARNING, NULL,
            "put what a model needs in the first 2,048 characters; move the rest to parameter "
            "descriptions",
            "description is %zu characters; Claude Code cuts it at %d (what follows is never "
            "seen)",
            strlen(d), CHECK_DESCRIPTION_MAX);
    check__names(t->c, NULL, "description", d, t->name, t->props);
    /* Claude's API refuses a request whose tools have a combinator at the top of a schema. */
    static const char *const combinators[] = {"anyOf", "oneOf", "allOf"};
    for (size_t i = 0; i < 3; i++)
        if (json_object_get(json_object_get(tool, "inputSchema"), combinators[i]))
            check__find(t->c, CHECK_WARNING, NULL,
                        "drop it: mark none of the alternatives required, say in their "
                        "descriptions which one is needed, and refuse a call without any with "
                        "an isError result naming them",
                        "inputSchema has %s at its top level: Claude's API refuses every request "
                        "whose tools include such a schema (\"input_schema does not support "
                        "oneOf, allOf, or anyOf at the top level\"), so in Claude Code no tool "
                        "of this server can be used",
                        combinators[i]);
    const char *k;
    const json_t *p;
    json_object_foreach((json_t *)t->props, k, p)
    {
        char where[96];
        snprintf(where, sizeof where, "parameter %.64s's description", k);
        check__names(t->c, NULL, where, json_string_value(json_object_get(p, "description")),
                     t->name, t->props);
        if (is_window_param(k) && strcmp(k, "cursor") != 0 && json_object_get(p, "maximum"))
            check__find(
                t->c, CHECK_WARNING, NULL,
                "drop the schema maximum, state it in the description and clamp larger values",
                "window parameter %s has a schema maximum: hosts and validators reject larger "
                "values instead of the server clamping them (state the maximum in the "
                "description)",
                k);
    }
    /* The reverse: a parameter the schema requires but never defines. */
    size_t i;
    json_array_foreach(json_object_get(json_object_get(tool, "inputSchema"), "required"), i, p)
    {
        if (json_is_string(p) && json_object_get(t->props, json_string_value(p)) == NULL)
            check__find(t->c, CHECK_ERROR, NULL,
                        "define it under properties (type and description), or drop it from "
                        "required",
                        "inputSchema requires '%.64s' but does not define it (no model can "
                        "know what to pass)",
                        json_string_value(p));
    }
    t->max_budget = stated_maximum(json_object_get(t->props, "max_tokens"));
    /* MCP Apps: a tool only the app calls; hosts hide it and its results from the model. */
    const json_t *vis =
        json_object_get(json_object_get(json_object_get(tool, "_meta"), "ui"), "visibility");
    bool model = !json_is_array(vis);
    json_array_foreach(vis, i, p) model =
        model || (json_is_string(p) && strcmp(json_string_value(p), "model") == 0);
    t->app_only = !model;
    const json_t *raised =
        json_object_get(json_object_get(tool, "_meta"), "anthropic/maxResultSizeChars");
    if (json_is_integer(raised) && json_integer_value(raised) > 0)
        t->raised_chars = (size_t)json_integer_value(raised);
}

/* What the default page costs on each host: findings where the cost is lost content. */
static void default_fit(tool_ctx *t, const json_t *res)
{
    for (size_t h = 0; h < check_host_count; h++) {
        const check_host *host = &check_hosts[h];
        check_measure m;
        check_measure_result(host, res, &m);
        t->def[h] = m;
        if (strcmp(host->name, "Claude Code") != 0)
            continue; /* the others are in the table */
        if (t->app_only)
            continue; /* the model never sees its results (noted by check_apps.c) */
        if (host->max_tokens && m.tokens > host->max_tokens)
            FIND(t, CHECK_ERROR, "page the result: a smaller default page, or a max_tokens budget",
                 "the default page is about %zu tokens: %s refuses results over %zu", m.tokens,
                 host->name, host->max_tokens);
        else if (host->warn_tokens && m.tokens > host->warn_tokens)
            FIND(t, CHECK_WARNING, "page the result: a default page under 10,000 tokens",
                 "the default page is about %zu tokens: %s warns past %zu", m.tokens, host->name,
                 host->warn_tokens);
        size_t limit = t->raised_chars ? t->raised_chars : host->max_chars;
        if (limit && m.chars > limit)
            FIND(t, CHECK_WARNING,
                 "page the result, or raise _meta[\"anthropic/maxResultSizeChars\"] in tools/list",
                 "the default page is %zu characters: %s spills results over %zu to a file "
                 "(raise with _meta[\"anthropic/maxResultSizeChars\"] in tools/list)",
                 m.chars, host->name, limit);
    }
}

static json_t *fit_row(const tool_ctx *t, const check_measure *ms)
{
    json_t *fit = json_object();
    for (size_t h = 0; h < check_host_count; h++) {
        const check_measure *m = &ms[h];
        json_object_set_new(fit, check_hosts[h].name,
                            json_pack("{s:I, s:I, s:I, s:I, s:b}", "tokens", (json_int_t)m->tokens,
                                      "chars", (json_int_t)m->chars, "bytes", (json_int_t)m->bytes,
                                      "lines", (json_int_t)m->lines, "fits",
                                      check_fits(&check_hosts[h], m, t->raised_chars)));
    }
    return fit;
}

/* What checking a tool came to. */
typedef enum outcome { TOOL_DONE, TOOL_NEEDS } outcome;

/*
 * Checks one tool, with `guess` (arguments guessed from earlier answers,
 * said to come from `from`) added to its base arguments. TOOL_NEEDS when
 * it could not be called for want of arguments (nothing recorded: the
 * names are added to needs, the phrase to what, a refusal's text to
 * refusal), TOOL_DONE when its row is in the report.
 */
static outcome check_tool(check_ctx *c, const json_t *tool, const json_t *guess, const char *from,
                          json_t *needs, char *what, size_t what_len, char *refusal,
                          size_t refusal_len)
{
    assert(check_host_count <= CHECK_HOSTS_MAX);
    tool_ctx t = {.c = c, .name = json_string_value(json_object_get(tool, "name"))};
    if (t.name == NULL)
        return TOOL_DONE;
    c->scope = t.name;
    int64_t started = now_ms();
    const json_t *schema = json_object_get(tool, "inputSchema");
    t.props = json_object_get(schema, "properties");
    family f = family_of(t.props);
    static_checks(&t, tool); /* said once: a finding is not repeated */
    const json_t *base = json_object_get(c->o->args, t.name);
    t.base = json_is_object(base) ? json_deep_copy(base) : NULL;
    if (t.base == NULL && c->o->base_args)
        t.base = c->o->base_args(t.name, c->o->base_args_ud);
    if (t.base == NULL)
        t.base = json_object();
    if (guess)
        json_object_update_missing(t.base, (json_t *)guess);
    char timeout_why[160];
    t.timeout_ms = tool_timeout(c, t.name, t.props, timeout_why, sizeof timeout_why);
    bool called = false, envelope = false;
    if (!allowed(c, tool, t.name)) {
        check__find(c, CHECK_INFO, NULL,
                    "annotate read-only tools readOnlyHint: true (or pass --allow to call it)",
                    "not called: not annotated readOnlyHint (--allow %s to call it)", t.name);
    } else if (missing_required(schema, t.base, needs, what, what_len)) {
        json_decref(t.base);
        json_decref(t.walks);
        return TOOL_NEEDS;
    } else {
        t.walks = json_array();
        json_t *res = call(&t, NULL);
        char arg[128];
        const char *refused = res && json_is_true(json_object_get(res, "isError"))
                                  ? refused_argument(res, t.props, arg, sizeof arg)
                                  : NULL;
        if (guess && res && json_is_true(json_object_get(res, "isError")) && !refused)
            refused = json_string_value(json_array_get(needs, 0)) ?: "?"; /* a wrong guess */
        if (refused && (guess || !json_object_get(t.base, refused))) {
            /* It wants an identifier (or the guessed one named nothing): not the window's fault. */
            add_name(needs, refused);
            if (what[0] == '\0')
                snprintf(what, what_len, "argument %s", refused);
            snprintf(refusal, refusal_len, "%.200s", text0(res) ?: "?");
            json_decref(res);
            json_decref(t.base);
            json_decref(t.walks);
            return TOOL_NEEDS;
        }
        called = true;
        if (guess) {
            char *g = json_dumps(guess, JSON_COMPACT);
            FIND(&t, CHECK_INFO,
                 "none needed: pass --args TOOL=JSON to check it with arguments of your choice",
                 "called with guessed arguments %.300s (%s)", g ? g : "?", from);
            free(g);
        }
        envelope = res && !json_is_true(json_object_get(res, "isError")) && claims_envelope(res);
        if (refused)
            FIND(&t, CHECK_INFO, "none: pass arguments it accepts with --args TOOL=JSON",
                 "not checked further: the arguments given were refused: %s",
                 said(res, &(said_buf){{0}}));
        else if (res && json_is_true(json_object_get(res, "isError")))
            FIND(&t, CHECK_ERROR,
                 "answer a call that gives only the required arguments with page one: give every "
                 "window parameter a default (or, when the server cannot serve at all, say how "
                 "to make it)",
                 "the call with no window arguments failed: %s", said(res, &(said_buf){{0}}));
        if (res)
            default_fit(&t, res);
        if (envelope) {
            check_page(&t, res, "default page");
            if (f == FAM_LIST)
                contract_list(&t);
            else if (f == FAM_LINES || f == FAM_BYTES)
                contract_content(&t, f);
            else if (f == FAM_GRID)
                contract_grid(&t);
        } else if (res && f != FAM_NONE && !json_is_true(json_object_get(res, "isError"))) {
            generic_walk(&t, res);
            generic_offset_walk(&t, res);
            plain_windows(&t);
        }
        json_decref(res);
        int base_ms = c->o->timeout_ms > 0 ? c->o->timeout_ms : CHECK_DEFAULT_TIMEOUT_MS;
        if (!t.stopped && t.slowest_ms > base_ms)
            FIND(&t, CHECK_INFO,
                 "none needed; a host may give up sooner (send progress notifications while it "
                 "works)",
                 "slow: a call took %.1f s, past the %d s timeout; it was given %.1f s because %s",
                 (double)t.slowest_ms / 1000.0, base_ms / 1000, t.timeout_ms / 1000.0,
                 timeout_why[0] ? timeout_why : "--timeout");
    }
    json_t *row =
        json_pack("{s:s, s:s, s:b, s:b, s:b, s:I, s:I, s:o, s:I}", "name", t.name, "family",
                  family_names[f], "called", called, "envelope", envelope, "app_only", t.app_only,
                  "calls", (json_int_t)t.calls, "ms", (json_int_t)(now_ms() - started), "walks",
                  t.walks ? t.walks : json_array(), "pages", (json_int_t)t.pages);
    json_object_set_new(row, "timed_out", json_boolean(t.stopped));
    if (guess)
        json_object_set(row, "guessed", (json_t *)guess);
    json_object_set_new(row, "fit", fit_row(&t, t.def));
    json_object_set_new(row, "fit_largest", fit_row(&t, t.max));
    json_array_append_new(c->rep->tools, row);
    json_decref(t.base);
    if (c->o->progress && t.calls >= 200)
        fprintf(stderr, "\rmcpage check: %s: %ld calls, %ld pages\n", t.name, t.calls, t.pages);
    return TOOL_DONE;
}

/* A tool that was never called for want of arguments: the note and its row. */
static void not_called(check_ctx *c, const json_t *tool, const json_t *needs, const char *what,
                       const char *refusal, const char *tried)
{
    const char *name = json_string_value(json_object_get(tool, "name"));
    const char *first = json_string_value(json_array_get(needs, 0)) ?: "?";
    c->scope = name;
    char more[400] = "";
    if (tried[0])
        snprintf(more, sizeof more, "; guessed %.120s, refused: %.200s", tried, refusal);
    else if (refusal[0])
        snprintf(more, sizeof more, "; a call without it was refused: %.200s", refusal);
    check__find(c, CHECK_INFO, NULL, "pass its arguments with --args TOOL=JSON",
                "not called: needs %s (--args '%s={\"%s\": ...}')%s", what, name, first, more);
    const json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
    tool_ctx t = {.c = c, .name = name};
    json_t *row =
        json_pack("{s:s, s:s, s:b, s:b, s:b, s:i, s:i, s:[], s:i, s:b}", "name", name, "family",
                  family_names[family_of(props)], "called", false, "envelope", false, "app_only",
                  false, "calls", 0, "ms", 0, "walks", "pages", 0, "timed_out", false);
    json_object_set_new(row, "fit", fit_row(&t, t.def));
    json_object_set_new(row, "fit_largest", fit_row(&t, t.max));
    json_array_append_new(c->rep->tools, row);
}

/* Guessed calls per tool, and candidates looked at for them. */
#define GUESS_ATTEMPTS 3
#define GUESS_SCAN     12

/*
 * One round of guesses for a waiting tool w ({needs, what, refusal,
 * tried: [guesses refused], calls}): the candidates not tried yet, until
 * one is accepted. True when the tool was checked (its row is in).
 */
static bool try_guesses(check_ctx *c, const json_t *tool, json_t *w)
{
    const json_t *args =
        json_object_get(c->o->args, json_string_value(json_object_get(tool, "name")));
    json_t *tried = json_object_get(w, "tried");
    for (int scan = 0; scan < GUESS_SCAN && !c->dead; scan++) {
        if (json_integer_value(json_object_get(w, "calls")) >= GUESS_ATTEMPTS)
            return false;
        char from[256], what[256], refusal[256];
        json_t *g =
            check__guess(c, tool, args, json_object_get(w, "needs"), scan, from, sizeof from);
        char *key = json_object_size(g) ? json_dumps(g, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (key == NULL || json_object_get(tried, key)) {
            bool none = key == NULL;
            free(key);
            json_decref(g);
            if (none)
                return false;
            continue;
        }
        json_t *needs = json_array();
        what[0] = refusal[0] = '\0';
        outcome o = check_tool(c, tool, g, from, needs, what, sizeof what, refusal, sizeof refusal);
        json_decref(g);
        if (o == TOOL_DONE) {
            free(key);
            json_decref(needs);
            return true;
        }
        /* A refusal may name another argument it wants: guess that one next. */
        size_t j;
        const json_t *nm;
        json_array_foreach(needs, j, nm)
            add_name(json_object_get(w, "needs"), json_string_value(nm));
        json_decref(needs);
        if (refusal[0]) { /* called and refused (not merely short of an argument) */
            json_object_set_new(tried, key, json_string(refusal));
            json_object_set_new(w, "last", json_string(key));
            json_object_set_new(w, "calls",
                                json_integer(json_integer_value(json_object_get(w, "calls")) + 1));
        }
        free(key);
    }
    return false;
}

void check__tools(check_ctx *c, const json_t *tools)
{
    size_t n = json_array_size(tools);
    /* Per tool (by index) waiting for arguments: {needs, what, refusal, tried, calls}. */
    json_t *waiting = json_object();
    char what[256], refusal[256];
    for (size_t i = 0; i < n && !c->dead; i++) {
        json_t *needs = json_array();
        what[0] = refusal[0] = '\0';
        if (check_tool(c, json_array_get(tools, i), NULL, NULL, needs, what, sizeof what, refusal,
                       sizeof refusal) == TOOL_NEEDS) {
            char key[24];
            snprintf(key, sizeof key, "%zu", i);
            json_object_set_new(waiting, key,
                                json_pack("{s:o, s:s, s:s, s:{}, s:i}", "needs", needs, "what",
                                          what, "refusal", refusal, "tried", "calls", 0));
        } else {
            json_decref(needs);
        }
    }
    /* Then those that need arguments, with what earlier answers held, until none advances. */
    for (bool progress = true; progress && !c->dead;) {
        progress = false;
        const char *key;
        json_t *w;
        void *tmp;
        json_object_foreach_safe(waiting, tmp, key, w)
        {
            if (try_guesses(c, json_array_get(tools, strtoul(key, NULL, 10)), w)) {
                json_object_del(waiting, key);
                progress = true;
            }
        }
    }
    const char *key;
    json_t *w;
    json_object_foreach(waiting, key, w)
    {
        if (c->dead)
            break;
        const char *last = json_string_value(json_object_get(w, "last"));
        const char *why =
            last ? json_string_value(json_object_get(json_object_get(w, "tried"), last))
                 : json_string_value(json_object_get(w, "refusal"));
        not_called(c, json_array_get(tools, strtoul(key, NULL, 10)), json_object_get(w, "needs"),
                   json_string_value(json_object_get(w, "what")), why ? why : "", last ? last : "");
    }
    json_decref(waiting);
}
