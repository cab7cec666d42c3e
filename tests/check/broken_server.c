/*
 * broken_server: an MCP server with one defect per tool, for the tests
 * of `mcpage check` (tests/integration/check.sh), written only against
 * the public mcpage API. Each tool pages the same ten records
 * {"id": 0..9} through a hand-written envelope (returned, total_items,
 * has_more, next_cursor "o<offset>", next_offset, hint), correct except
 * for its one defect; good_list has none. EXPECTED in check.sh pairs
 * each tool with what the checker must say about it, and nothing else.
 *
 * Usage: broken_server   (MCP over stdio)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpage.h>

#define RECORDS   10
#define MAX_LIMIT 5

typedef enum defect {
    GOOD,             /* none */
    REPEATS,          /* the next page starts one record early */
    SKIPS,            /* the next page starts one record late */
    TOTAL_LIES,       /* total_items says 12 */
    HAS_MORE_LIES,    /* has_more false on the first of two pages */
    STUCK_CURSOR,     /* next_cursor always points at the first page */
    PAST_END_ERROR,   /* an offset past the end is an error, not an empty page */
    REJECTS_BIG,      /* a limit over the maximum is an error, not clamped */
    SILENT_CLAMP,     /* a limit over the maximum is clamped without saying so */
    ACCEPTS_BAD,      /* limit 0 or -1 is taken as the default */
    RPC_ERROR,        /* limit 0 or -1 is a JSON-RPC error */
    BAD_HINT,         /* the hint names page=, which the tool does not take */
    SCHEMA_MAXIMUM,   /* limit has a schema maximum */
    LONG_DESCRIPTION, /* a description past Claude Code's 2,048 characters */
    CUT_UNREADABLE,   /* a record cut to fit (_truncated) with no call that reads it whole */
    HUGE_RECORD,      /* record 8 is 120,000 characters, whole: no page can carry it */
    BAD_READ_WITH,    /* a record cut to fit whose read_with passes an argument the tool lacks */
    NAMES_MISSING     /* its description tells the model to pass page=2, which it does not take */
} defect;

/* A window parameter's schema, with or without minimum/maximum. */
#define LIMIT_OK                                                                                   \
    "\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"default\": 5, "                          \
    "\"description\": \"records per page, at most 5\"}"
#define LIMIT_MAX                                                                                  \
    "\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 5, "                          \
    "\"default\": 5, \"description\": \"records per page\"}"
#define LIMIT_ANY                                                                                  \
    "\"limit\": {\"type\": \"integer\", \"default\": 5, "                                          \
    "\"description\": \"records per page, at most 5\"}"
#define WINDOW_REST                                                                                \
    "\"offset\": {\"type\": \"integer\", \"minimum\": 0, \"default\": 0}, "                        \
    "\"cursor\": {\"type\": \"string\", \"description\": \"next_cursor of the last page\"}"
#define SCHEMA(limit)                                                                              \
    "{\"type\": \"object\", \"properties\": {" limit ", " WINDOW_REST "}, "                        \
    "\"additionalProperties\": false}"

static void reject(mcpage_result *res, const char *code, const char *param, const char *why)
{
    json_t *e =
        json_pack("{s:{s:s, s:s, s:s}}", "error", "code", code, "param", param, "expected", why);
    mcpage_result_errorf(res, "%s: %s; drop it to start from the first page", param, why);
    mcpage_result_set_structured(res, e);
    json_decref(e);
}

/* The offset a cursor resumes at, or -1 for a cursor this server did not issue. */
static long cursor_offset(const char *c)
{
    if (c[0] != 'o' || c[1] < '0' || c[1] > '9')
        return -1;
    char *end;
    long v = strtol(c + 1, &end, 10);
    return *end == '\0' && v <= RECORDS ? v : -1;
}

/* One tool of the server. */
typedef struct broken_tool {
    const char *name;   /* the tool */
    defect d;           /* its defect */
    const char *schema; /* its inputSchema */
} broken_tool;

/* 120,000 hex characters in lines of 64: past every host's limit (a JSON string, or NULL). */
static json_t *huge_text(void)
{
    size_t n = 120000;
    char *t = malloc(n + 1);
    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        t[i] = i % 65 == 64 ? '\n' : "0123456789abcdef"[(i * 7 + i / 13) % 16];
    t[n] = '\0';
    json_t *s = json_stringn(t, n);
    free(t);
    return s;
}

static int list_items(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const broken_tool *bt = mcpage_call_data(call);
    defect d = bt->d;
    long limit = (long)json_integer_value(json_object_get(args, "limit"));
    long offset = (long)json_integer_value(json_object_get(args, "offset"));
    const char *cur = json_string_value(json_object_get(args, "cursor"));
    bool clamped = false;
    if (limit <= 0 && d == RPC_ERROR)
        return mcpage_call_fail(call, -32603, "internal error: bad limit");
    if (limit <= 0)
        limit = MAX_LIMIT; /* ACCEPTS_BAD; the others' schema stops it first */
    if (limit > MAX_LIMIT && d == REJECTS_BIG) {
        reject(res, "invalid_argument", "limit", "at most 5");
        return 0;
    }
    if (limit > MAX_LIMIT) {
        limit = MAX_LIMIT;
        clamped = d != SILENT_CLAMP;
    }
    if (cur) {
        offset = cursor_offset(cur);
        if (offset < 0) {
            reject(res, "invalid_cursor", "cursor", "a next_cursor this server issued");
            return 0;
        }
    }
    if (offset > RECORDS && d == PAST_END_ERROR) {
        reject(res, "invalid_argument", "offset", "at most 10");
        return 0;
    }
    long start = offset < RECORDS ? offset : RECORDS;
    long end = start + limit < RECORDS ? start + limit : RECORDS;
    bool more = end < RECORDS && d != HAS_MORE_LIES;
    long next = end + (d == REPEATS ? -1 : d == SKIPS ? 1 : 0);
    json_t *items = json_array();
    char text[2048];
    int n = snprintf(text, sizeof text, "%ld of %d items (offset %ld).\n", end - start,
                     d == TOTAL_LIES ? 12 : RECORDS, start);
    for (long i = start; i < end; i++) {
        json_t *rec = json_pack("{s:I}", "id", (json_int_t)i);
        if (d == CUT_UNREADABLE && i == 3)
            json_object_set_new(rec, "_truncated",
                                json_pack("{s:s, s:i}", "field", "body", "chars_total", 90000));
        if (d == BAD_READ_WITH && i == 3)
            json_object_set_new(rec, "_truncated",
                                json_pack("{s:s, s:i, s:{s:s, s:{s:i}}}", "field", "body",
                                          "chars_total", 90000, "read_with", "tool", "good_list",
                                          "arguments", "record", 3));
        if (d == HUGE_RECORD && i == 7)
            json_object_set_new(rec, "body", huge_text());
        json_array_append_new(items, rec);
        n += snprintf(text + n, sizeof text - (size_t)n, "{\"id\":%ld}\n", i);
    }
    json_t *s = json_pack("{s:o, s:I, s:i, s:b, s:I, s:I, s:s}", "items", items, "returned",
                          (json_int_t)(end - start), "total_items", d == TOTAL_LIES ? 12 : RECORDS,
                          "has_more", more, "offset", (json_int_t)start, "limit", (json_int_t)limit,
                          "stopped_by", more ? "limit" : "end");
    char hint[256] = "";
    if (more) {
        char c[32];
        snprintf(c, sizeof c, "o%ld", d == STUCK_CURSOR ? 0L : next);
        json_object_set_new(s, "next_cursor", json_string(c));
        json_object_set_new(s, "next_offset", json_integer(next));
        snprintf(hint, sizeof hint, "Next page: %s with cursor=\"%s\" (or %s=%ld).", bt->name, c,
                 d == BAD_HINT ? "page" : "offset", next);
    }
    if (start >= RECORDS)
        snprintf(hint, sizeof hint, "Past the end: the last page starts at offset=%d.",
                 RECORDS - MAX_LIMIT);
    if (clamped) {
        json_object_set_new(s, "limit_clamped", json_true());
        size_t l = strlen(hint);
        snprintf(hint + l, sizeof hint - l, "%slimit was lowered to the maximum 5.", l ? " " : "");
    }
    if (hint[0])
        json_object_set_new(s, "hint", json_string(hint));
    snprintf(text + n, sizeof text - (size_t)n, "%s", hint);
    mcpage_result_add_text(res, text, strlen(text));
    mcpage_result_set_structured(res, s);
    json_decref(s);
    return 0;
}

/* A page of 120,000 hex characters: past every host's limit. */
static int huge_page(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    json_t *t = huge_text();
    if (t == NULL)
        return MCPAGE_ENOMEM;
    int rc = mcpage_result_add_text(res, json_string_value(t), json_string_length(t));
    json_decref(t);
    return rc;
}

/* Not annotated read-only: the checker must never call it. */
static int not_read_only(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    (void)res;
    fprintf(stderr, "broken_server: not_read_only was called\n");
    exit(3);
}

/* A result without the envelope: s (stolen) as structuredContent and, as JSON, the text. */
static int json_result(mcpage_result *res, json_t *s)
{
    char *text = json_dumps(s, JSON_COMPACT);
    int rc = text ? mcpage_result_add_text(res, text, strlen(text)) : MCPAGE_ENOMEM;
    free(text);
    if (rc == 0)
        rc = mcpage_result_set_structured(res, s);
    json_decref(s);
    return rc;
}

/*
 * No envelope: {"items": [...], "nextCursor": "p<page>"} over three
 * pages; plain_repeats serves page 1 again as page 2, plain_stuck always
 * hands out the cursor of page 2. per_page (plain_rejects_big,
 * plain_rpc_error) changes nothing but is checked: plain_rejects_big
 * rejects more than 5 instead of clamping, plain_rpc_error answers -1
 * with a JSON-RPC error; both reject -1 otherwise, naming per_page.
 */
static int plain_items(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const broken_tool *bt = mcpage_call_data(call);
    const json_t *per_page = json_object_get(args, "per_page");
    if (per_page && json_integer_value(per_page) < 1 && strcmp(bt->name, "plain_rpc_error") == 0)
        return mcpage_call_fail(call, -32603, "internal error");
    if (per_page && json_integer_value(per_page) < 1) {
        mcpage_result_errorf(res, "per_page must be from 1 to 5");
        return 0;
    }
    if (per_page && json_integer_value(per_page) > 5 &&
        strcmp(bt->name, "plain_rejects_big") == 0) {
        mcpage_result_errorf(res, "per_page must be from 1 to 5");
        return 0;
    }
    const char *cur = json_string_value(json_object_get(args, "cursor"));
    long page = cur && cur[0] == 'p' ? strtol(cur + 1, NULL, 10) : 0;
    if (page < 0 || page > 2)
        page = 0;
    long shown = page == 1 && strcmp(bt->name, "plain_repeats") == 0 ? 0 : page;
    json_t *items = json_array();
    for (long i = 0; i < 3; i++)
        json_array_append_new(items, json_pack("{s:I}", "id", (json_int_t)(shown * 3 + i)));
    json_t *s = json_pack("{s:o}", "items", items);
    if (page < 2) {
        char c[16];
        snprintf(c, sizeof c, "p%ld", strcmp(bt->name, "plain_stuck") == 0 ? 1 : page + 1);
        json_object_set_new(s, "nextCursor", json_string(c));
    }
    return json_result(res, s);
}

/* Requires a parameter it never defines. */
#define UNDEFINED_SCHEMA "{\"type\": \"object\", \"properties\": {}, \"required\": [\"filter\"]}"

/*
 * Pages by offset without the envelope: {"items", "offset", "count",
 * "total": 9, "hasMore"}, three items a page; hasMore is false already
 * on the second page.
 */
static int offset_items(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    json_int_t offset = json_integer_value(json_object_get(args, "offset"));
    if (offset < 0 || offset > 9)
        offset = 9;
    json_int_t end = offset + 3 < 9 ? offset + 3 : 9;
    json_t *items = json_array();
    for (json_int_t i = offset; i < end; i++)
        json_array_append_new(items, json_pack("{s:I}", "id", i));
    json_t *s = json_pack("{s:o, s:I, s:I, s:i, s:b}", "items", items, "offset", offset, "count",
                          end - offset, "total", 9, "hasMore", end < 6);
    return json_result(res, s);
}

#define OFFSET_SCHEMA                                                                              \
    "{\"type\": \"object\", \"properties\": {\"offset\": {\"type\": \"integer\"}}}"

#define PLAIN_SIZE_SCHEMA                                                                          \
    "{\"type\": \"object\", \"properties\": {\"cursor\": {\"type\": \"string\"}, "                 \
    "\"per_page\": {\"type\": \"integer\", \"description\": \"items per page, 1 to 5\"}}}"

#define PLAIN_SCHEMA                                                                               \
    "{\"type\": \"object\", \"properties\": {\"cursor\": {\"type\": \"string\"}}, "                \
    "\"additionalProperties\": false}"

static const broken_tool tools[] = {
    {"good_list", GOOD, SCHEMA(LIMIT_OK)},
    {"repeats", REPEATS, SCHEMA(LIMIT_OK)},
    {"skips", SKIPS, SCHEMA(LIMIT_OK)},
    {"total_lies", TOTAL_LIES, SCHEMA(LIMIT_OK)},
    {"has_more_lies", HAS_MORE_LIES, SCHEMA(LIMIT_OK)},
    {"stuck_cursor", STUCK_CURSOR, SCHEMA(LIMIT_OK)},
    {"past_end_error", PAST_END_ERROR, SCHEMA(LIMIT_OK)},
    {"rejects_big", REJECTS_BIG, SCHEMA(LIMIT_OK)},
    {"silent_clamp", SILENT_CLAMP, SCHEMA(LIMIT_OK)},
    {"accepts_bad", ACCEPTS_BAD, SCHEMA(LIMIT_ANY)},
    {"rpc_error", RPC_ERROR, SCHEMA(LIMIT_ANY)},
    {"bad_hint", BAD_HINT, SCHEMA(LIMIT_OK)},
    {"schema_maximum", SCHEMA_MAXIMUM, SCHEMA(LIMIT_MAX)},
    {"long_description", LONG_DESCRIPTION, SCHEMA(LIMIT_OK)},
    {"cut_unreadable", CUT_UNREADABLE, SCHEMA(LIMIT_OK)},
    {"huge_record", HUGE_RECORD, SCHEMA(LIMIT_OK)},
    {"names_missing", NAMES_MISSING, SCHEMA(LIMIT_OK)},
    {"requires_undefined", GOOD, UNDEFINED_SCHEMA},
    {"plain_repeats", GOOD, PLAIN_SCHEMA},
    {"plain_stuck", GOOD, PLAIN_SCHEMA},
    {"plain_rejects_big", GOOD, PLAIN_SIZE_SCHEMA},
    {"plain_rpc_error", GOOD, PLAIN_SIZE_SCHEMA},
    {"offset_has_more_lies", GOOD, OFFSET_SCHEMA},
    {"cut_bad_read_with", BAD_READ_WITH, SCHEMA(LIMIT_OK)},
};

/* Resources that ignore the position: every page starts over (resources/list repeats). */
static int list_resources(void *ud, const char *after, size_t after_len, size_t limit,
                          mcpage_resource_page *page)
{
    (void)ud;
    (void)after;
    (void)after_len;
    for (size_t i = 0; i < limit && i < 4; i++) {
        char uri[32], name[16];
        snprintf(uri, sizeof uri, "broken://r%zu", i);
        snprintf(name, sizeof name, "r%zu", i);
        mcpage_resource r = {.uri = uri, .name = name, .size = -1};
        int rc = mcpage_resource_page_add(page, &r, NULL);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The views (MCP Apps): ui://broken/missing.html does not exist, plain.html is not an app's type.
 */
#define VIEW_OK      "ui://broken/view.html"
#define VIEW_MISSING "ui://broken/missing.html"
#define VIEW_PLAIN   "ui://broken/plain.html"
#define VIEW_HTML    "<!doctype html><title>view</title><p>view</p>"

static int read_resource(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    if (strcmp(uri, VIEW_MISSING) == 0)
        return MCPAGE_ENOTFOUND;
    if (strcmp(uri, VIEW_PLAIN) == 0)
        return mcpage_contents_add_text(out, uri, "text/html", VIEW_HTML, strlen(VIEW_HTML));
    return mcpage_contents_add_text(out, uri, "text/plain", "r", 1);
}

static int read_view(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    return mcpage_contents_add_text(out, uri, MCPAGE_APP_MIME_TYPE, VIEW_HTML, strlen(VIEW_HTML));
}

static int small_result(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    return mcpage_result_add_text(res, "shown in the view", 17);
}

/*
 * MCP Apps: a view that asks for an external origin (csp), a tool only
 * the view calls, and two tools whose view is broken: one names a uri
 * resources/read does not know, one a view served as plain text/html.
 */
static int add_apps(mcpage_server *srv)
{
    mcpage_resource view = {
        .uri = VIEW_OK,
        .name = "view",
        .mime_type = MCPAGE_APP_MIME_TYPE,
        .size = -1,
        .read = read_view,
        .meta = "{\"ui\": {\"csp\": {\"connectDomains\": [\"https://api.example.com\"]}}}",
    };
    const mcpage_tool app_tools[] = {
        {.name = "app_page",
         .description = "What the view shows.",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = small_result,
         .meta = "{\"ui\": {\"resourceUri\": \"" VIEW_OK "\", \"visibility\": [\"app\"]}}"},
        {.name = "missing_view",
         .description = "Shown in a view that does not exist.",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = small_result,
         .meta = "{\"ui\": {\"resourceUri\": \"" VIEW_MISSING "\"}}"},
        {.name = "wrong_mime_view",
         .description = "Shown in a view served as text/html.",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = small_result,
         .meta = "{\"ui\": {\"resourceUri\": \"" VIEW_PLAIN "\"}}"},
    };
    int rc = mcpage_server_add_resource(srv, &view);
    for (size_t i = 0; rc == 0 && i < sizeof app_tools / sizeof app_tools[0]; i++)
        rc = mcpage_server_add_tool(srv, &app_tools[i]);
    return rc;
}

/*
 * Tools that need an identifier: one_of_ids states it as anyOf of two
 * required sets (and is noted, never called); wants_id states nothing
 * and refuses a call without `id` naming it (a note, not an error about
 * its window). The archive's ids come from no other tool here, so
 * neither can be guessed.
 */
static int wants_id(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    if (!json_is_string(json_object_get(args, "id"))) {
        mcpage_result_set_error(res, true);
        return json_result(res, json_pack("{s:{s:s, s:s, s:s}}", "error", "code",
                                          "invalid_argument", "param", "id", "message",
                                          "Invalid id: pass the id of a record."));
    }
    return json_result(res,
                       json_pack("{s:s}", "id", json_string_value(json_object_get(args, "id"))));
}

/*
 * Slow tools (the checker runs broken_server with --timeout 2): slow_ok
 * declares how long it takes (duration, default 3 seconds: it is given
 * 5) and is waited for; too_slow declares nothing, takes 6 s, and is
 * cancelled at 2 s while the run goes on to the next tool.
 */
static int sleep_for(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    const json_t *d = json_object_get(args, "duration");
    double sec = json_is_number(d) ? json_number_value(d) : 6.0;
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return json_result(res, json_pack("{s:f}", "slept", sec));
}

static int add_tools(mcpage_server *srv)
{
    static const mcpage_tool slow[] = {
        {.name = "too_slow",
         .description = "Takes six seconds.",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = sleep_for},
        {.name = "slow_ok",
         .description = "Takes as long as it is asked to.",
         .input_schema = "{\"type\": \"object\", \"properties\": {\"duration\": {\"type\": "
                         "\"number\", \"default\": 3, \"description\": \"How long to take, in "
                         "seconds.\"}}}",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = sleep_for},
        {.name = "one_of_ids",
         .description = "Reads a session, by session_id or by message_id.",
         .input_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                         "\"string\"}, \"message_id\": {\"type\": \"integer\"}}, \"anyOf\": "
                         "[{\"required\": [\"session_id\"]}, {\"required\": [\"message_id\"]}]}",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = wants_id},
        {.name = "wants_id",
         .description = "Reads one record by its id.",
         .input_schema = "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": "
                         "\"string\"}, \"limit\": {\"type\": \"integer\", \"default\": 5}}}",
         .read_only = MCPAGE_HINT_TRUE,
         .handler = wants_id},
    };
    static char long_description[2200];
    memset(long_description, 'x', sizeof long_description - 1);
    memcpy(long_description, "Lists items. ", 13);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof slow / sizeof slow[0]; i++)
        rc = mcpage_server_add_tool(srv, &slow[i]);
    for (size_t i = 0; rc == 0 && i < sizeof tools / sizeof tools[0]; i++) {
        bool plain = strncmp(tools[i].name, "plain_", 6) == 0;
        mcpage_tool t = {.name = tools[i].name,
                         .description = tools[i].d == LONG_DESCRIPTION ? long_description
                                        : tools[i].d == NAMES_MISSING
                                            ? "Lists the ten items; follow next_cursor, or pass "
                                              "page=2 for the second page."
                                            : "Lists the ten items; follow next_cursor.",
                         .input_schema = tools[i].schema,
                         .read_only = MCPAGE_HINT_TRUE,
                         .handler = strncmp(tools[i].name, "offset_", 7) == 0 ? offset_items
                                    : plain                                   ? plain_items
                                                                              : list_items,
                         .user_data = (void *)&tools[i]};
        rc = mcpage_server_add_tool(srv, &t);
    }
    mcpage_tool huge = {.name = "huge_page",
                        .description = "One page of 120,000 characters.",
                        .read_only = MCPAGE_HINT_TRUE,
                        .handler = huge_page};
    mcpage_tool writer = {.name = "not_read_only",
                          .description = "Not read-only: must not be called by a checker.",
                          .handler = not_read_only};
    mcpage_resource_provider p = {.list = list_resources, .read = read_resource};
    if (rc == 0)
        rc = mcpage_server_add_tool(srv, &huge);
    if (rc == 0)
        rc = mcpage_server_add_tool(srv, &writer);
    if (rc == 0)
        rc = mcpage_server_add_resource_provider(srv, &p);
    if (rc == 0)
        rc = add_apps(srv);
    return rc;
}

int main(void)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "broken-server", MCPAGE_VERSION_STRING);
    cfg.page_size = 2;
    mcpage_server *srv = NULL;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = add_tools(srv);
    if (rc == 0)
        rc = mcpage_serve_stdio(srv, 0, 1);
    if (rc != 0)
        fprintf(stderr, "broken_server: %s\n", mcpage_strerror(rc));
    if (rc != MCPAGE_ESTATE)
        mcpage_server_free(srv);
    return rc == 0 ? 0 : 1;
}
