/* Tests for the LIST page builder: the envelope, both copies, budgets,
   cursors and offsets over a simulated keyset store, clamps and rejects. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/page.h>

#include "page/page_internal.h"
#include "support/page_support.h"

/* ------------------------------------------------- the simulated store */

/* One record of the store, sorted by (started_at, session_id). */
typedef struct row {
    int64_t started_at; /* sort key */
    char id[37];        /* unique key: a lowercase UUID */
    char *title;        /* a field of variable size */
} row;

typedef struct store {
    row *rows;          /* sorted ascending */
    size_t n;           /* rows in use */
    int64_t generation; /* bumped on every change */
} store;

static void make_uuid(uint64_t *rng, char out[37])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            out[i] = '-';
            continue;
        }
        out[i] = hex[tp_rand(rng) % 16];
    }
    out[36] = '\0';
}

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->started_at != y->started_at)
        return x->started_at < y->started_at ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* n rows with titles of random length in [lo, hi] bytes (with some UTF-8). */
static void store_fill(store *s, size_t n, uint64_t *rng, int64_t lo, int64_t hi)
{
    s->rows = calloc(n ? n : 1, sizeof *s->rows);
    s->n = n;
    s->generation = 1;
    for (size_t i = 0; i < n; i++) {
        row *r = &s->rows[i];
        r->started_at = INT64_C(1764000000000) + tp_range(rng, 0, 1000) * 1000;
        make_uuid(rng, r->id);
        size_t len = (size_t)tp_range(rng, lo, hi);
        r->title = malloc(len + 4);
        size_t k = 0;
        while (k < len) {
            if (tp_rand(rng) % 10 == 0 && k + 2 <= len) {
                memcpy(r->title + k, "\xC3\xA9", 2); /* é */
                k += 2;
            } else {
                r->title[k++] = (char)('a' + tp_rand(rng) % 26);
            }
        }
        r->title[k] = '\0';
    }
    qsort(s->rows, n, sizeof *s->rows, row_cmp);
}

static void store_free(store *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->rows[i].title);
    free(s->rows);
}

static json_t *row_record(const row *r, size_t index)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I}", "session_id", r->id, "project",
                     index % 2 ? "api" : "web", "title", r->title, "started_at",
                     (json_int_t)r->started_at, "messages", (json_int_t)(index * 3 % 17));
}

static json_t *session_read_with(const json_t *record, const char *field, void *ud)
{
    (void)ud;
    return json_pack("{s:s, s:{s:O, s:s}}", "tool", "read_session_field", "arguments", "session_id",
                     json_object_get(record, "session_id"), "field", field);
}

static const char *const session_fields[] = {"session_id", "project",  "title",
                                             "started_at", "messages", NULL};
static const char *const session_defaults[] = {"project", "title", "started_at", NULL};
static const char *const session_ids[] = {"session_id", NULL};

static const mcpage_list_spec sessions_spec = {
    .tool = "list_sessions",
    .unit = "sessions",
    .default_limit = 20,
    .max_limit = 100,
    .fields = session_fields,
    .default_fields = session_defaults,
    .id_fields = session_ids,
    .narrow_hint = "Narrow with project=... or after=YYYY-MM-DD.",
    .read_with = session_read_with,
};

/* Runs one call against the store the way a tool would; returns the status of finish. */
static int run_page(const mcpage_pager *p, const mcpage_list_spec *spec, store *s,
                    const json_t *args, mcpage_result *res)
{
    mcpage_list *pg;
    int rc = mcpage_list_begin(p, spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        const mcpage_list_window *w = mcpage_list_window_get(pg);
        size_t start = 0;
        if (w->resume) {
            assert_int_equal(w->nparts, 2);
            row key = {.started_at = w->after[0].i};
            assert_int_equal(w->after[1].len, 36);
            memcpy(key.id, w->after[1].s, 36);
            key.id[36] = '\0';
            while (start < s->n && row_cmp(&s->rows[start], &key) <= 0)
                start++;
        } else {
            start = (size_t)(w->offset < (int64_t)s->n ? w->offset : (int64_t)s->n);
        }
        for (size_t i = start; i < s->n && (int64_t)(i - start) < w->fetch; i++) {
            mcpage_keypart pos[2] = {
                {.is_str = false, .i = s->rows[i].started_at},
                {.is_str = true, .s = s->rows[i].id, .len = 36},
            };
            rc = mcpage_list_add(pg, row_record(&s->rows[i], i), pos, 2);
            assert_true(rc >= 0);
            if (rc == MCPAGE_PAGE_FULL)
                break;
        }
        if (w->total >= 0 && w->generation == s->generation)
            mcpage_list_set_total(pg, w->total, w->generation);
        else
            mcpage_list_set_total(pg, (int64_t)s->n, s->generation);
    }
    return mcpage_list_finish(pg, res);
}

static json_t *page_json(tp_env *e, store *s, const char *args_json, mcpage_result *res)
{
    json_t *args = tp_args(args_json);
    assert_int_equal(run_page(e->pager, &sessions_spec, s, args, res), 0);
    json_decref(args);
    return tp_structured(res);
}

/* ---------------------------------------------------------------- tests */

static void first_page_carries_the_whole_envelope_in_both_copies(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 1;
    store s;
    store_fill(&s, 1240, &rng, 10, 40);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{}", res);
    assert_false(mcpage_result_is_error(res));
    assert_int_equal(json_array_size(json_object_get(sc, "sessions")), 20);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 20);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_sessions")), 1240);
    assert_true(json_is_true(json_object_get(sc, "has_more")));
    assert_int_equal(json_integer_value(json_object_get(sc, "offset")), 0);
    assert_int_equal(json_integer_value(json_object_get(sc, "limit")), 20);
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "limit");
    assert_int_equal(json_integer_value(json_object_get(sc, "next_offset")), 20);
    const char *cursor = json_string_value(json_object_get(sc, "next_cursor"));
    assert_non_null(cursor);
    assert_true(strlen(cursor) < 120);
    const char *hint = json_string_value(json_object_get(sc, "hint"));
    /* structuredContent points at next_cursor rather than repeating it. */
    assert_string_equal(hint, "Next page: the same call with cursor=next_cursor. Narrow with "
                              "project=... or after=YYYY-MM-DD.");
    char want[300];
    snprintf(want, sizeof want,
             "Next page: list_sessions with cursor=\"%s\" (or offset=20). Narrow with "
             "project=... or after=YYYY-MM-DD.",
             cursor);
    /* Default projection: the default fields plus the identifier, nothing else. */
    json_t *first = json_array_get(json_object_get(sc, "sessions"), 0);
    assert_int_equal(json_object_size(first), 4);
    assert_non_null(json_object_get(first, "session_id"));
    assert_null(json_object_get(first, "messages"));
    /* The text copy: summary, one compact record per line, the hint. */
    const char *text = tp_text(res);
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_int_equal(nl - text, strlen("20 of 1,240 sessions (offset 0, stopped at the 20-record "
                                       "limit)."));
    assert_memory_equal(text, "20 of 1,240 sessions (offset 0, stopped at the 20-record limit).",
                        (size_t)(nl - text));
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 21); /* summary + 20 records + hint: 22 lines, 21 breaks */
    const char *last = strrchr(text, '\n') + 1;
    assert_string_equal(last, want); /* the text copy writes the cursor out */
    char *rec0 = json_dumps(first, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_memory_equal(nl + 1, rec0, strlen(rec0));
    free(rec0);
    printf("%.400s\n", text);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void last_page_ends_without_resume_fields(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 2;
    store s;
    store_fill(&s, 40, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"offset\":20,\"limit\":20}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 20);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "end");
    assert_null(json_object_get(sc, "next_cursor"));
    assert_null(json_object_get(sc, "next_offset"));
    assert_null(json_object_get(sc, "hint"));
    assert_non_null(strstr(tp_text(res), "20 of 40 sessions (offset 20, the end of the list)."));
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void offset_past_the_end_is_an_empty_page_naming_the_last_page(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 3;
    store s;
    store_fill(&s, 1240, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"offset\":5000}", res);
    assert_false(mcpage_result_is_error(res));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_sessions")), 1240);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_int_equal(json_integer_value(json_object_get(sc, "offset")), 5000);
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "offset 5,000 is past the end of the 1,240 sessions; the last page "
                        "starts at offset 1220: list_sessions with offset=1220.");
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void limit_above_maximum_is_lowered_and_disclosed(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 4;
    store s;
    store_fill(&s, 300, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"limit\":500,\"max_tokens\":50000}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "limit")), 100);
    assert_true(json_is_true(json_object_get(sc, "limit_clamped")));
    assert_true(json_is_true(json_object_get(sc, "max_tokens_clamped")));
    const char *hint = json_string_value(json_object_get(sc, "hint"));
    assert_non_null(strstr(hint, "limit 500 was lowered to the maximum 100."));
    assert_non_null(strstr(hint, "max_tokens 50,000 was lowered to the maximum 20,000."));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 100);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void invalid_window_values_are_rejected_with_a_correctable_message(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 5;
    store s;
    store_fill(&s, 10, &rng, 5, 10);
    static const struct {
        const char *args;  /* the call */
        const char *param; /* the parameter named */
    } cases[] = {
        {"{\"limit\":0}", "limit"},
        {"{\"limit\":-3}", "limit"},
        {"{\"limit\":\"20\"}", "limit"},
        {"{\"limit\":2.5}", "limit"},
        {"{\"limit\":true}", "limit"},
        {"{\"limit\":[20]}", "limit"},
        {"{\"limit\":{\"n\":1}}", "limit"},
        {"{\"offset\":-1}", "offset"},
        {"{\"offset\":0.5}", "offset"},
        {"{\"offset\":\"ten\"}", "offset"},
        {"{\"max_tokens\":0}", "max_tokens"},
        {"{\"max_tokens\":10}", "max_tokens"},
        {"{\"max_tokens\":-5}", "max_tokens"},
        {"{\"fields\":[\"nope\"]}", "fields"},
        {"{\"fields\":\"title\"}", "fields"},
        {"{\"fields\":[1]}", "fields"},
        {"{\"cursor\":42}", "cursor"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpage_result *res = mcpage_result_new();
        json_t *args = tp_args(cases[i].args);
        assert_int_equal(run_page(e.pager, &sessions_spec, &s, args, res), 0);
        json_t *err = tp_assert_rejected(res, "invalid_argument", cases[i].param, NULL);
        assert_non_null(json_object_get(err, "got"));
        json_decref(err);
        json_decref(args);
        mcpage_result_free(res);
    }
    /* The message names the value, the range and a valid call. */
    mcpage_result *res = mcpage_result_new();
    json_t *args = tp_args("{\"limit\":-3}");
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, args, res), 0);
    assert_string_equal(tp_text(res), "Invalid limit: got -3. Expected an integer from 1 to 100 "
                                      "(larger values are lowered to 100). Example: "
                                      "list_sessions with limit=20.");
    json_decref(args);
    args = tp_args("{\"fields\":[\"title\",\"nope\"]}");
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, args, res), 0);
    assert_string_equal(tp_text(res),
                        "Invalid fields: got \"nope\". Expected a list of field names from: "
                        "session_id, project, title, started_at, messages. Example: "
                        "list_sessions with fields=[\"project\",\"title\"].");
    json_decref(args);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void null_window_values_mean_the_default(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 6;
    store s;
    store_fill(&s, 50, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"limit\":null,\"offset\":null,\"cursor\":null}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "limit")), 20);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 20);
    json_decref(sc);
    /* An integral real is an integer. */
    sc = page_json(&e, &s, "{\"limit\":5.0}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 5);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void cursor_wins_over_offset_and_the_echo_shows_the_position_used(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 7;
    store s;
    store_fill(&s, 100, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"limit\":10}", res);
    char args[400];
    snprintf(args, sizeof args, "{\"limit\":10,\"offset\":70,\"cursor\":\"%s\"}",
             json_string_value(json_object_get(sc, "next_cursor")));
    json_decref(sc);
    sc = page_json(&e, &s, args, res);
    assert_int_equal(json_integer_value(json_object_get(sc, "offset")), 10);
    json_t *first = json_array_get(json_object_get(sc, "sessions"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "session_id")), s.rows[10].id);
    assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                           "The cursor was used, so offset 70 was ignored (resumed at 10)."));
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void cursor_rejections_name_their_distinct_reason(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 8;
    store s;
    store_fill(&s, 100, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"limit\":10,\"project\":\"api\"}", res);
    const char *cur = json_string_value(json_object_get(sc, "next_cursor"));
    char args[400];
    json_t *a;
    json_t *err;

    /* Different filters. */
    snprintf(args, sizeof args, "{\"limit\":10,\"project\":\"web\",\"cursor\":\"%s\"}", cur);
    a = tp_args(args);
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, a, res), 0);
    err = tp_assert_rejected(res, "invalid_cursor", "cursor", "other_args");
    json_decref(err);
    assert_non_null(strstr(tp_text(res), "pass the same query and filters with the cursor"));
    json_decref(a);

    /* Another tool. */
    mcpage_list_spec other = sessions_spec;
    other.tool = "search_sessions";
    snprintf(args, sizeof args, "{\"limit\":10,\"project\":\"api\",\"cursor\":\"%s\"}", cur);
    a = tp_args(args);
    assert_int_equal(run_page(e.pager, &other, &s, a, res), 0);
    json_decref(tp_assert_rejected(res, "invalid_cursor", "cursor", "other_tool"));

    /* The same call resumes; a changed limit is a window change, not other args. */
    json_t *a2 = json_deep_copy(a);
    json_object_set_new(a2, "limit", json_integer(7));
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, a2, res), 0);
    assert_false(mcpage_result_is_error(res));
    json_decref(a2);
    json_decref(a);

    /* Damaged: one character changed. */
    char bad[200];
    snprintf(bad, sizeof bad, "%s", cur);
    bad[10] = bad[10] == 'A' ? 'B' : 'A';
    snprintf(args, sizeof args, "{\"limit\":10,\"project\":\"api\",\"cursor\":\"%s\"}", bad);
    a = tp_args(args);
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, a, res), 0);
    json_decref(tp_assert_rejected(res, "invalid_cursor", "cursor", "malformed"));
    json_decref(a);

    /* Signed by another server. */
    tp_env e2;
    tp_setup(&e2, NULL);
    mcpage_keyring *kr2;
    assert_int_equal(mcpage_keyring_new(&kr2), 0);
    assert_int_equal(mcpage_keyring_load(kr2, NULL, NULL), 0);
    mcpage_pager *p2;
    assert_int_equal(mcpage_pager_new(NULL, kr2, &p2), 0);
    snprintf(args, sizeof args, "{\"limit\":10,\"project\":\"api\",\"cursor\":\"%s\"}", cur);
    a = tp_args(args);
    assert_int_equal(run_page(p2, &sessions_spec, &s, a, res), 0);
    err = tp_assert_rejected(res, "invalid_cursor", "cursor", NULL);
    const char *reason = json_string_value(json_object_get(err, "reason"));
    assert_true(strcmp(reason, "foreign_key") == 0 || strcmp(reason, "malformed") == 0);
    json_decref(err);
    json_decref(a);
    mcpage_pager_free(p2);
    mcpage_keyring_free(kr2);
    tp_done(&e2);

    /* Empty and huge strings. */
    a = tp_args("{\"cursor\":\"\"}");
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, a, res), 0);
    json_decref(tp_assert_rejected(res, "invalid_cursor", "cursor", "malformed"));
    json_decref(a);
    char *huge = malloc(10 * 1024 + 1);
    memset(huge, 'A', 10 * 1024);
    huge[10 * 1024] = '\0';
    a = json_pack("{s:s}", "cursor", huge);
    assert_int_equal(run_page(e.pager, &sessions_spec, &s, a, res), 0);
    err = tp_assert_rejected(res, "invalid_cursor", "cursor", "malformed");
    /* The echo of a huge value is cut. */
    assert_true(json_string_length(json_object_get(err, "got")) < 100);
    json_decref(err);
    json_decref(a);
    free(huge);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void projection_keeps_identifiers_and_only_the_named_fields(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 9;
    store s;
    store_fill(&s, 5, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"fields\":[\"messages\"]}", res);
    json_t *rec = json_array_get(json_object_get(sc, "sessions"), 0);
    assert_int_equal(json_object_size(rec), 2);
    assert_non_null(json_object_get(rec, "session_id"));
    assert_non_null(json_object_get(rec, "messages"));
    json_decref(sc);
    sc = page_json(&e, &s, "{\"fields\":[]}", res);
    rec = json_array_get(json_object_get(sc, "sessions"), 0);
    assert_int_equal(json_object_size(rec), 1);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void record_larger_than_the_budget_is_cut_with_read_with(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 10;
    store s;
    store_fill(&s, 3, &rng, 60000, 60000);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{\"max_tokens\":1000}", res);
    tp_assert_fits(res, 1000, MCPAGE_MAX_CHARS);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 1);
    assert_true(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "max_tokens");
    json_t *rec = json_array_get(json_object_get(sc, "sessions"), 0);
    assert_string_equal(json_string_value(json_object_get(rec, "session_id")), s.rows[0].id);
    json_t *tr = json_object_get(rec, "_truncated");
    assert_non_null(tr);
    assert_string_equal(json_string_value(json_object_get(tr, "field")), "title");
    size_t cps = 0;
    for (const char *p = s.rows[0].title; *p; p++)
        cps += ((unsigned char)*p & 0xC0) != 0x80;
    assert_int_equal(json_integer_value(json_object_get(tr, "chars_total")), cps);
    const char *title = json_string_value(json_object_get(rec, "title"));
    assert_true(strlen(title) > 100);
    assert_memory_equal(title, s.rows[0].title, strlen(title)); /* a prefix, cut cleanly */
    json_t *rw = json_object_get(tr, "read_with");
    assert_string_equal(json_string_value(json_object_get(rw, "tool")), "read_session_field");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(rw, "arguments"), "session_id")),
        s.rows[0].id);
    assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                           "read it whole with read_session_field"));
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void relevance_walk_discloses_a_changed_generation(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint64_t rng = 11;
    store s;
    store_fill(&s, 50, &rng, 5, 10);
    mcpage_list_spec spec = sessions_spec;
    spec.relevance_order = true;
    spec.stable_order_hint = "Pass sort=\"newest\" for a stable order.";
    mcpage_result *res = mcpage_result_new();
    json_t *a = tp_args("{\"limit\":10}");
    assert_int_equal(run_page(e.pager, &spec, &s, a, res), 0);
    json_t *sc = tp_structured(res);
    json_object_set(a, "cursor", json_object_get(sc, "next_cursor"));
    json_decref(sc);
    /* Unchanged store: nothing to disclose, and the total is reused. */
    assert_int_equal(run_page(e.pager, &spec, &s, a, res), 0);
    sc = tp_structured(res);
    assert_null(json_object_get(sc, "order_may_have_shifted"));
    json_decref(sc);
    s.generation++;
    assert_int_equal(run_page(e.pager, &spec, &s, a, res), 0);
    sc = tp_structured(res);
    assert_true(json_is_true(json_object_get(sc, "order_may_have_shifted")));
    assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                           "Pass sort=\"newest\" for a stable order."));
    json_decref(sc);
    json_decref(a);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void structured_text_mode_repeats_the_envelope_byte_for_byte(void **state)
{
    (void)state;
    mcpage_pager_config cfg;
    mcpage_pager_config_init(&cfg);
    cfg.text_mode = MCPAGE_TEXT_STRUCTURED;
    tp_env e;
    tp_setup(&e, &cfg);
    uint64_t rng = 12;
    store s;
    store_fill(&s, 30, &rng, 5, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = page_json(&e, &s, "{}", res);
    size_t sn, tn;
    const char *st = mcpage_result_structured(res, &sn);
    const char *tx = mcpage_result_text(res, 0, &tn);
    assert_int_equal(sn, tn);
    assert_memory_equal(st, tx, sn);
    json_decref(sc);
    mcpage_result_free(res);
    store_free(&s);
    tp_done(&e);
}

static void builder_refuses_misuse(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_list *pg;
    mcpage_list_spec bad = sessions_spec;
    bad.max_limit = 5; /* below the default */
    assert_int_equal(mcpage_list_begin(e.pager, &bad, NULL, &pg), MCPAGE_EINVAL);
    assert_null(pg);
    assert_int_equal(mcpage_list_begin(e.pager, &sessions_spec, NULL, &pg), 0);
    mcpage_keypart pos = {.i = 1};
    assert_int_equal(mcpage_list_add(pg, json_string("not an object"), &pos, 1), MCPAGE_EINVAL);
    mcpage_result *res = mcpage_result_new();
    /* No total: the invariant cannot be met, and finish says so. */
    assert_int_equal(mcpage_list_finish(pg, res), MCPAGE_ESTATE);
    /* Arguments that are not an object are a rejection, not a crash. */
    json_t *arr = json_array();
    assert_int_equal(mcpage_list_begin(e.pager, &sessions_spec, arr, &pg), MCPAGE_PAGE_REJECTED);
    assert_int_equal(mcpage_list_finish(pg, res), 0);
    json_decref(tp_assert_rejected(res, "invalid_argument", "arguments", NULL));
    json_decref(arr);
    mcpage_result_free(res);
    tp_done(&e);
}

/*
 * The property test: random stores, windows and budgets. Walking by
 * next_cursor (and separately by next_offset) until has_more is false
 * returns every record exactly once, in order; every page carries the
 * invariants; no copy is ever over budget.
 */
static void walks_return_every_record_once_in_order_within_budget(void **state)
{
    (void)state;
    uint64_t rng = 0x9E3779B97F4A7C15u;
    size_t pages = 0;
    for (int iter = 0; iter < 100; iter++) {
        mcpage_pager_config cfg;
        mcpage_pager_config_init(&cfg);
        cfg.max_chars = tp_range(&rng, 4000, 100000);
        tp_env e;
        tp_setup(&e, &cfg);
        store s;
        /* One store in five has records larger than any budget (few of them:
           each such page is cut by a search); the others vary in size. */
        bool huge = tp_range(&rng, 0, 4) == 0;
        int64_t hi = huge ? 40000 : tp_range(&rng, 0, 2000);
        store_fill(&s, (size_t)tp_range(&rng, 0, huge ? 12 : 400), &rng, 0, hi);
        for (int by_cursor = 0; by_cursor < 2; by_cursor++) {
            int64_t limit = tp_range(&rng, 1, 150);
            int64_t max_tokens = tp_range(&rng, 500, tp_range(&rng, 0, 1) ? 2000 : 20000);
            json_t *a = json_pack("{s:I, s:I, s:s}", "limit", (json_int_t)limit, "max_tokens",
                                  (json_int_t)max_tokens, "project", "any");
            size_t seen = 0;
            for (int guard = 0; guard < 10000; guard++) {
                mcpage_result *res = mcpage_result_new();
                assert_int_equal(run_page(e.pager, &sessions_spec, &s, a, res), 0);
                assert_false(mcpage_result_is_error(res));
                tp_assert_fits(res, max_tokens, cfg.max_chars);
                json_t *sc = tp_structured(res);
                json_t *items = json_object_get(sc, "sessions");
                int64_t returned = json_integer_value(json_object_get(sc, "returned"));
                assert_int_equal((size_t)returned, json_array_size(items));
                assert_int_equal(json_integer_value(json_object_get(sc, "total_sessions")), s.n);
                json_t *hm = json_object_get(sc, "has_more");
                assert_true(json_is_boolean(hm));
                assert_true(returned <= (limit > 100 ? 100 : limit));
                for (size_t i = 0; i < json_array_size(items); i++) {
                    json_t *rec = json_array_get(items, i);
                    assert_true(seen < s.n);
                    assert_string_equal(json_string_value(json_object_get(rec, "session_id")),
                                        s.rows[seen].id);
                    seen++;
                }
                pages++;
                if (!json_is_true(hm)) {
                    json_decref(sc);
                    mcpage_result_free(res);
                    break;
                }
                assert_true(returned >= 1); /* progress */
                assert_int_equal(json_integer_value(json_object_get(sc, "next_offset")), seen);
                if (by_cursor) {
                    json_t *c = json_object_get(sc, "next_cursor");
                    assert_true(json_is_string(c));
                    json_object_set(a, "cursor", c);
                } else {
                    json_object_set(a, "offset", json_object_get(sc, "next_offset"));
                }
                json_decref(sc);
                mcpage_result_free(res);
            }
            assert_int_equal(seen, s.n);
            json_decref(a);
        }
        store_free(&s);
        tp_done(&e);
    }
    printf("property walk: %zu pages checked\n", pages);
}

/* ------------------------------------------- records given as cells */

static const char *const cell_fields[] = {"id", "title", "n", "note", "gone", NULL};
static const char *const cell_ids[] = {"id", NULL};
static const mcpage_list_spec cells_spec = {
    .tool = "list_cells",
    .unit = "rows",
    .default_limit = 20,
    .max_limit = 100,
    .fields = cell_fields,
    .id_fields = cell_ids,
    .layout = MCPAGE_LIST_COLUMNS,
};

/* A title longer than a small budget: the page's only record, cut. */
#define CELL_W32  "lorem ipsum dolor \t sit amet, x "
#define CELL_W256 CELL_W32 CELL_W32 CELL_W32 CELL_W32 CELL_W32 CELL_W32 CELL_W32 CELL_W32
#define CELL_LONG CELL_W256 CELL_W256 CELL_W256 CELL_W256 CELL_W256 CELL_W256 CELL_W256 CELL_W256

/* Past the pool's chunk: a record of cells that needs a chunk of its own. */
#define CELL_HUGE CELL_LONG CELL_LONG CELL_LONG CELL_LONG CELL_LONG

/* Titles that need escaping in one copy or the other, or are not ASCII. */
static const char *const cell_titles[] = {
    CELL_LONG,
    "plain words here",
    "tab\there and\nnewline",
    "quote \" and back\\slash",
    "caf\xC3\xA9 \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xE6\x97\xA5\xE6\x9C\xAC",
    "line\xE2\x80\xA8sep",
    " edge spaces ",
    "ctl\x01 and cr\r and \xF0\x9F\x99\x82 and \\",
    "",
    "x",
    CELL_HUGE,
    "not UTF-8: \xC3\x28 \xFF",
    "\xED\xA0\x80 a surrogate"};

/* Blanks every cursor in s (its issue time may move between two builds of a page). */
static void mask_cursors(char *s)
{
    for (char *p = s; (p = strstr(p, "c2.")) != NULL; p += 3)
        for (char *q = p + 3; *q && *q != '"' && *q != '\\'; q++)
            *q = '_';
}

/* One page of 60 rows, its records added as objects or as cells; text and structured, masked. */
static char *cells_page(tp_env *e, const char *args_json, bool cells)
{
    json_t *args = tp_args(args_json);
    mcpage_list *pg;
    int begun = mcpage_list_begin(e->pager, &cells_spec, args, &pg);
    if (begun != 0) {
        mcpage_result *r = mcpage_result_new();
        mcpage_list_finish(pg, r);
        fail_msg("%s: %d %s", args_json, begun, tp_text(r));
    }
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    size_t ntitles = sizeof cell_titles / sizeof *cell_titles;
    for (int64_t i = w->offset; i < 60 && i - w->offset < w->fetch; i++) {
        char id[16];
        (void)snprintf(id, sizeof id, "row-%03d", (int)i);
        const char *title = cell_titles[(size_t)i % ntitles];
        list_cell c[4];
        size_t n = 0;
        c[n++] = (list_cell){.name = "id", .kind = LIST_CELL_STR, .str = id, .len = strlen(id)};
        c[n++] =
            (list_cell){.name = "title", .kind = LIST_CELL_STR, .str = title, .len = strlen(title)};
        c[n++] = (list_cell){.name = "n", .kind = LIST_CELL_INT, .num = (i - 30) * 1000003};
        if (i % 3)
            c[n++] = (list_cell){.name = "note", .kind = LIST_CELL_NULL};
        mcpage_keypart pos = {.is_str = true, .s = id, .len = strlen(id)};
        int rc;
        if (cells) {
            rc = mcpage__list_add_cells(pg, c, n, &pos, 1);
        } else {
            json_t *rec = json_object();
            for (size_t k = 0; k < n; k++)
                json_object_set_new(rec, c[k].name,
                                    c[k].kind == LIST_CELL_STR   ? json_string(c[k].str)
                                    : c[k].kind == LIST_CELL_INT ? json_integer(c[k].num)
                                                                 : json_null());
            rc = mcpage_list_add(pg, rec, &pos, 1);
        }
        if (rc < 0)
            fail_msg("row %d (%s): %d", (int)i, cells ? "cells" : "object", rc);
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    mcpage_list_set_total(pg, 60, 7);
    mcpage_result *res = mcpage_result_new();
    assert_int_equal(mcpage_list_finish(pg, res), 0);
    size_t slen;
    const char *sc = mcpage_result_structured(res, &slen);
    const char *text = tp_text(res);
    char *out = malloc(slen + strlen(text) + 2);
    memcpy(out, sc, slen);
    out[slen] = '\n';
    strcpy(out + slen + 1, text);
    mask_cursors(out);
    mcpage_result_free(res);
    json_decref(args);
    return out;
}

static void records_given_as_cells_make_the_same_page_as_objects(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    static const char *const args[] = {
        "{}",
        "{\"limit\":100}",
        "{\"limit\":7,\"offset\":3}",
        "{\"max_tokens\":500,\"limit\":60}",
        "{\"max_tokens\":700,\"limit\":50}",
        "{\"fields\":[\"title\",\"note\",\"gone\"]}",
        "{\"fields\":[\"n\"],\"limit\":60}",
        "{\"max_tokens\":500}",
    };
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char *a = cells_page(&e, args[i], false), *b = cells_page(&e, args[i], true);
        if (strcmp(a, b) != 0) {
            /* A second may have turned between the two: the cursors' issue
               times then differ, and with them the budget a cut can use. */
            free(a);
            free(b);
            a = cells_page(&e, args[i], false);
            b = cells_page(&e, args[i], true);
        }
        assert_string_equal(a, b);
        assert_non_null(strstr(a, "\"returned\":"));
        if (strstr(args[i], "max_tokens") && strstr(a, "\"stopped_by\":\"max_tokens\"") == NULL)
            fail_msg("%s", a);
        if (strcmp(args[i], "{\"max_tokens\":500}") == 0 && strstr(a, "\"_truncated\"") == NULL)
            fail_msg("the long first record was not cut: %.300s", a);
        free(a);
        free(b);
    }
    tp_done(&e);
}

/*
 * The text block a page of cells sends (made from the lines' own escapes
 * where the records have them) is exactly the JSON escape of its text
 * copy, whatever the records hold: pages of every title, cut or not.
 */
static void the_text_block_is_the_escape_of_the_text_copy(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    static const char *const args[] = {"{}", "{\"limit\":100}", "{\"limit\":7,\"offset\":3}",
                                       "{\"max_tokens\":500}", "{\"fields\":[\"n\"]}"};
    size_t ntitles = sizeof cell_titles / sizeof *cell_titles;
    for (size_t a = 0; a < sizeof args / sizeof *args; a++) {
        json_t *jargs = tp_args(args[a]);
        mcpage_list *pg;
        assert_int_equal(mcpage_list_begin(e.pager, &cells_spec, jargs, &pg), 0);
        const mcpage_list_window *w = mcpage_list_window_get(pg);
        for (int64_t i = w->offset; i < 60 && i - w->offset < w->fetch; i++) {
            char id[16];
            (void)snprintf(id, sizeof id, "row-%03d", (int)i);
            const char *title = cell_titles[(size_t)i % ntitles];
            list_cell c[3] = {
                {.name = "id", .kind = LIST_CELL_STR, .str = id, .len = strlen(id)},
                {.name = "title", .kind = LIST_CELL_STR, .str = title, .len = strlen(title)},
                {.name = "n", .kind = LIST_CELL_INT, .num = -i * 7}};
            mcpage_keypart pos = {.is_str = true, .s = id, .len = strlen(id)};
            if (mcpage__list_add_cells(pg, c, 3, &pos, 1) == MCPAGE_PAGE_FULL)
                break;
        }
        mcpage_list_set_total(pg, 60, 1);
        mcpage_result *res = mcpage_result_new();
        assert_int_equal(mcpage_list_finish(pg, res), 0);
        size_t tlen, jlen;
        const char *text = mcpage_result_text(res, 0, &tlen);
        char *json = mcpage_result_to_json(res, &jlen);
        assert_non_null(text);
        assert_non_null(json);
        jw ref;
        jw_init(&ref, 0);
        jw_object_begin(&ref);
        jw_kv_string(&ref, "type", "text");
        jw_key(&ref, "text");
        jw_stringn(&ref, text, tlen);
        jw_object_end(&ref);
        static const char head[] = "{\"content\":[";
        assert_true(jlen > sizeof head - 1 + ref.len);
        assert_memory_equal(json, head, sizeof head - 1);
        assert_memory_equal(json + sizeof head - 1, ref.buf, ref.len);
        /* And read back, it is the text copy. */
        json_t *back = json_loadb(json, jlen, 0, NULL);
        const char *got = json_string_value(
            json_object_get(json_array_get(json_object_get(back, "content"), 0), "text"));
        assert_non_null(got);
        assert_int_equal(strlen(got), tlen);
        assert_memory_equal(got, text, tlen);
        json_decref(back);
        jw_free(&ref);
        mcpage_free(json);
        mcpage_result_free(res);
        json_decref(jargs);
    }
    tp_done(&e);
}

/* A page of cells made under a pager of `cfg`, text and structured. */
typedef struct memo_run {
    const mcpage_pager_config *cfg; /* the pager's settings */
    const char *args;               /* the call's arguments */
    char *page;                     /* out: both copies, one after the other */
} memo_run;

static void *memo_page(void *ud)
{
    memo_run *m = ud;
    tp_env e;
    tp_setup(&e, m->cfg);
    m->page = cells_page(&e, m->args, true);
    tp_done(&e);
    return NULL;
}

/*
 * The envelope's reserve (which decides where a budgeted page stops) is
 * remembered per thread: pages made after others of other pagers,
 * settings and arguments (pagers freed and made again, perhaps at the
 * same address) are the pages a fresh thread, which remembers nothing,
 * makes.
 */
static void remembered_reserves_give_the_pages_a_fresh_thread_gives(void **state)
{
    (void)state;
    mcpage_pager_config small, lines;
    mcpage_pager_config_init(&small);
    mcpage_pager_config_init(&lines);
    small.default_tokens = 900;
    small.max_chars = 3000;
    static const char *const args[] = {
        "{\"max_tokens\":500,\"limit\":60}", "{\"max_tokens\":700,\"fields\":[\"title\"]}",
        "{\"limit\":60}", "{\"limit\":500,\"max_tokens\":90000}", "{}"};
    const mcpage_pager_config *cfgs[] = {&lines, &small};
    for (int round = 0; round < 2; round++)
        for (size_t c = 0; c < 2; c++)
            for (size_t a = 0; a < sizeof args / sizeof *args; a++) {
                memo_run here = {cfgs[c], args[a], NULL}, fresh = here;
                memo_page(&here); /* this thread remembers the earlier ones */
                pthread_t th;
                assert_int_equal(pthread_create(&th, NULL, memo_page, &fresh), 0);
                assert_int_equal(pthread_join(th, NULL), 0);
                assert_string_equal(here.page, fresh.page);
                free(here.page);
                free(fresh.page);
            }
}

/* An allocator that fails its n-th request and counts the blocks it holds. */
static long flaky_left; /* requests before the failing one; negative: never fail */
static long flaky_live; /* blocks taken and not yet given back */

static void *flaky_malloc(size_t n, void *ud)
{
    (void)ud;
    if (flaky_left >= 0 && flaky_left-- == 0)
        return NULL;
    void *p = malloc(n);
    flaky_live += p != NULL;
    return p;
}

static void *flaky_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    if (flaky_left >= 0 && flaky_left-- == 0)
        return NULL;
    void *q = realloc(p, n);
    flaky_live += q != NULL && p == NULL;
    return q;
}

static void flaky_free(void *p, void *ud)
{
    (void)ud;
    flaky_live -= p != NULL;
    free(p);
}

/*
 * A page of cells (records past the pool's first chunk, one larger than a
 * chunk) built while the n-th allocation fails, for every n until none
 * does: each run ends in a page or an error, never a crash, and gives
 * back every block it took.
 */
static void a_page_of_cells_gives_back_everything_when_memory_runs_out(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    json_t *args = tp_args("{\"limit\":100,\"max_tokens\":20000}");
    static const mcpage_allocator flaky = {flaky_malloc, flaky_realloc, flaky_free, NULL};
    size_t ntitles = sizeof cell_titles / sizeof *cell_titles;
    bool whole = false;
    long fail = 0;
    for (; !whole && fail < 5000; fail++) {
        flaky_left = fail;
        flaky_live = 0;
        assert_int_equal(mcpage_set_allocator(&flaky), 0);
        mcpage_result *res = mcpage_result_new();
        mcpage_list *pg = NULL;
        int rc = res ? mcpage_list_begin(e.pager, &cells_spec, args, &pg) : MCPAGE_ENOMEM;
        for (int i = 0; rc == 0 && i < 60; i++) {
            char id[16];
            (void)snprintf(id, sizeof id, "row-%03d", i);
            const char *title = cell_titles[(size_t)i % ntitles];
            list_cell c[2] = {
                {.name = "id", .kind = LIST_CELL_STR, .str = id, .len = strlen(id)},
                {.name = "title", .kind = LIST_CELL_STR, .str = title, .len = strlen(title)}};
            mcpage_keypart pos = {.is_str = true, .s = id, .len = strlen(id)};
            rc = mcpage__list_add_cells(pg, c, 2, &pos, 1);
        }
        if (pg && rc < 0) {
            mcpage_list_abort(pg);
        } else if (pg) {
            mcpage_list_set_total(pg, 60, 1);
            rc = mcpage_list_finish(pg, res);
            whole = rc == 0 && flaky_left >= 0; /* every request was met */
        }
        mcpage_result_free(res);
        assert_int_equal(mcpage_set_allocator(NULL), 0);
        if (flaky_live != 0)
            fail_msg("allocation %ld failed: %ld blocks not given back", fail, flaky_live);
    }
    assert_true(whole);
    assert_in_range(fail, 20, 4999); /* the page took many blocks, each failed once */
    json_decref(args);
    tp_done(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_page_carries_the_whole_envelope_in_both_copies),
        cmocka_unit_test(last_page_ends_without_resume_fields),
        cmocka_unit_test(offset_past_the_end_is_an_empty_page_naming_the_last_page),
        cmocka_unit_test(limit_above_maximum_is_lowered_and_disclosed),
        cmocka_unit_test(invalid_window_values_are_rejected_with_a_correctable_message),
        cmocka_unit_test(null_window_values_mean_the_default),
        cmocka_unit_test(cursor_wins_over_offset_and_the_echo_shows_the_position_used),
        cmocka_unit_test(cursor_rejections_name_their_distinct_reason),
        cmocka_unit_test(projection_keeps_identifiers_and_only_the_named_fields),
        cmocka_unit_test(record_larger_than_the_budget_is_cut_with_read_with),
        cmocka_unit_test(relevance_walk_discloses_a_changed_generation),
        cmocka_unit_test(structured_text_mode_repeats_the_envelope_byte_for_byte),
        cmocka_unit_test(builder_refuses_misuse),
        cmocka_unit_test(walks_return_every_record_once_in_order_within_budget),
        cmocka_unit_test(records_given_as_cells_make_the_same_page_as_objects),
        cmocka_unit_test(a_page_of_cells_gives_back_everything_when_memory_runs_out),
        cmocka_unit_test(the_text_block_is_the_escape_of_the_text_copy),
        cmocka_unit_test(remembered_reserves_give_the_pages_a_fresh_thread_gives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
