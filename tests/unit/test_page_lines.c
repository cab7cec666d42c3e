/* Tests for the CONTENT-line page builder: numbering, windows, long lines
   split and resumed by column, budgets, clamps and rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/page.h>

#include "support/page_support.h"

static const mcpage_lines_spec doc_spec = {
    .tool = "read_doc",
    .default_max_lines = 100,
    .max_max_lines = 500,
    .narrow_hint = "Use grep_doc to find the lines you need.",
};

typedef struct doc {
    char **lines; /* the lines, without newlines */
    size_t *lens; /* their lengths */
    size_t n;     /* line count */
} doc;

static void doc_free(doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->lines[i]);
    free(d->lines);
    free(d->lens);
}

/* n lines with random lengths in [lo, hi] bytes; some multibyte characters. */
static void doc_fill(doc *d, size_t n, uint64_t *rng, int64_t lo, int64_t hi)
{
    d->n = n;
    d->lines = calloc(n ? n : 1, sizeof *d->lines);
    d->lens = calloc(n ? n : 1, sizeof *d->lens);
    for (size_t i = 0; i < n; i++) {
        size_t len = (size_t)tp_range(rng, lo, hi);
        char *s = malloc(len + 1);
        size_t k = 0;
        while (k < len) {
            uint64_t r = tp_rand(rng) % 20;
            if (r == 0 && k + 3 <= len) {
                memcpy(s + k, "\xE2\x82\xAC", 3); /* euro sign */
                k += 3;
            } else if (r == 1 && k + 4 <= len) {
                memcpy(s + k, "\xF0\x9F\x98\x80", 4); /* an emoji: two UTF-16 units */
                k += 4;
            } else if (r == 2) {
                s[k++] = '"';
            } else {
                s[k++] = (char)('a' + tp_rand(rng) % 26);
            }
        }
        s[k] = '\0';
        d->lines[i] = s;
        d->lens[i] = k;
    }
}

static int run_lines(const mcpage_pager *p, const doc *d, const json_t *args, mcpage_result *res)
{
    mcpage_lines *pg;
    int rc = mcpage_lines_begin(p, &doc_spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        const mcpage_lines_window *w = mcpage_lines_window_get(pg);
        mcpage_lines_set_total(pg, (int64_t)d->n);
        for (int64_t i = w->start_line - 1; i < (int64_t)d->n; i++) {
            rc = mcpage_lines_add(pg, d->lines[i], d->lens[i]);
            assert_true(rc >= 0);
            if (rc == MCPAGE_PAGE_FULL)
                break;
        }
    }
    return mcpage_lines_finish(pg, res);
}

static json_t *lines_page(tp_env *e, const doc *d, const char *args_json, mcpage_result *res)
{
    json_t *a = tp_args(args_json);
    assert_int_equal(run_lines(e->pager, d, a, res), 0);
    json_decref(a);
    return tp_structured(res);
}

static void first_page_numbers_lines_like_cat_n(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    doc d;
    uint64_t rng = 1;
    doc_fill(&d, 300, &rng, 0, 30);
    free(d.lines[0]);
    d.lines[0] = strdup("first line");
    d.lens[0] = 10;
    mcpage_result *res = mcpage_result_new();
    json_t *sc = lines_page(&e, &d, "{\"path\":\"notes.md\"}", res);
    assert_int_equal(json_array_size(json_object_get(sc, "lines")), 100);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 100);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_lines")), 300);
    assert_true(json_is_true(json_object_get(sc, "has_more")));
    assert_int_equal(json_integer_value(json_object_get(sc, "start_line")), 1);
    assert_int_equal(json_integer_value(json_object_get(sc, "end_line")), 100);
    assert_int_equal(json_integer_value(json_object_get(sc, "next_start_line")), 101);
    assert_null(json_object_get(sc, "next_start_column"));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "limit");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sc, "lines"), 0)),
                        "first line");
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "Next page: read_doc with start_line=101 and the same path. Use grep_doc "
                        "to find the lines you need.");
    const char *text = tp_text(res);
    const char *want = "Lines 1-100 of 300 (stopped at the 100-line limit).\n     1\tfirst line\n";
    assert_memory_equal(text, want, strlen(want));
    assert_non_null(strstr(text, "\n   100\t"));
    json_decref(sc);
    mcpage_result_free(res);
    doc_free(&d);
    tp_done(&e);
}

static void start_line_past_the_end_is_an_empty_page_naming_the_last_page(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    doc d;
    uint64_t rng = 2;
    doc_fill(&d, 812, &rng, 0, 10);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = lines_page(&e, &d, "{\"start_line\":5000}", res);
    assert_false(mcpage_result_is_error(res));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "start_line 5,000 is past the end of the 812 lines; the last page starts "
                        "at start_line 713: read_doc with start_line=713.");
    json_decref(sc);
    /* An empty document is one empty last page, no hint. */
    doc empty = {0};
    sc = lines_page(&e, &empty, "{}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_lines")), 0);
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "end");
    assert_null(json_object_get(sc, "hint"));
    json_decref(sc);
    mcpage_result_free(res);
    doc_free(&d);
    tp_done(&e);
}

static void long_line_is_split_and_resumed_by_column(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    doc d;
    uint64_t rng = 3;
    doc_fill(&d, 3, &rng, 200000, 200000);
    mcpage_result *res = mcpage_result_new();
    json_t *a = tp_args("{\"max_tokens\":2000}");
    size_t got = 0, pages = 0;
    char *joined = malloc(d.lens[0] + 1);
    int64_t line = 1;
    for (;;) {
        assert_int_equal(run_lines(e.pager, &d, a, res), 0);
        tp_assert_fits(res, 2000, MCPAGE_MAX_CHARS);
        json_t *sc = tp_structured(res);
        pages++;
        json_t *l0 = json_array_get(json_object_get(sc, "lines"), 0);
        assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 1);
        if (line == 1) {
            memcpy(joined + got, json_string_value(l0), json_string_length(l0));
            got += json_string_length(l0);
        }
        json_t *nl = json_object_get(sc, "next_start_line");
        if (nl == NULL || json_integer_value(nl) != 1) {
            json_decref(sc);
            break;
        }
        assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "max_tokens");
        json_object_set(a, "start_line", nl);
        json_object_set(a, "start_column", json_object_get(sc, "next_start_column"));
        json_decref(sc);
    }
    assert_int_equal(got, d.lens[0]);
    assert_memory_equal(joined, d.lines[0], got);
    assert_true(pages > 10);
    free(joined);
    json_decref(a);
    mcpage_result_free(res);
    doc_free(&d);
    tp_done(&e);
}

static void max_lines_above_maximum_is_lowered_and_disclosed(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    doc d;
    uint64_t rng = 4;
    doc_fill(&d, 1000, &rng, 0, 5);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = lines_page(&e, &d, "{\"max_lines\":2000,\"max_tokens\":20000}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "max_lines")), 500);
    assert_true(json_is_true(json_object_get(sc, "max_lines_clamped")));
    assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                           "max_lines 2,000 was lowered to the maximum 500."));
    json_decref(sc);
    mcpage_result_free(res);
    doc_free(&d);
    tp_done(&e);
}

static void invalid_line_windows_are_rejected(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    doc d;
    uint64_t rng = 5;
    doc_fill(&d, 10, &rng, 0, 5);
    static const struct {
        const char *args;  /* the call */
        const char *param; /* the parameter named */
    } cases[] = {
        {"{\"start_line\":0}", "start_line"},     {"{\"start_line\":-4}", "start_line"},
        {"{\"start_line\":\"3\"}", "start_line"}, {"{\"start_line\":1.5}", "start_line"},
        {"{\"start_column\":0}", "start_column"}, {"{\"max_lines\":0}", "max_lines"},
        {"{\"max_lines\":[]}", "max_lines"},      {"{\"max_tokens\":1}", "max_tokens"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpage_result *res = mcpage_result_new();
        json_t *a = tp_args(cases[i].args);
        assert_int_equal(run_lines(e.pager, &d, a, res), 0);
        json_decref(tp_assert_rejected(res, "invalid_argument", cases[i].param, NULL));
        json_decref(a);
        mcpage_result_free(res);
    }
    mcpage_result *res = mcpage_result_new();
    json_t *a = tp_args("{\"start_line\":0}");
    assert_int_equal(run_lines(e.pager, &d, a, res), 0);
    assert_string_equal(tp_text(res), "Invalid start_line: got 0. Expected an integer of at least "
                                      "1. Example: read_doc with start_line=1.");
    json_decref(a);
    mcpage_result_free(res);
    doc_free(&d);
    tp_done(&e);
}

/*
 * Property: random documents (some lines far larger than any budget),
 * random windows and budgets. Following next_start_line and
 * next_start_column until has_more is false yields every line exactly
 * once, in order and whole; every copy fits.
 */
static void walks_return_every_line_once_in_order_within_budget(void **state)
{
    (void)state;
    uint64_t rng = 77;
    size_t pages = 0;
    for (int iter = 0; iter < 300; iter++) {
        mcpage_pager_config cfg;
        mcpage_pager_config_init(&cfg);
        cfg.max_chars = tp_range(&rng, 3000, 100000);
        tp_env e;
        tp_setup(&e, &cfg);
        doc d;
        bool huge = tp_range(&rng, 0, 5) == 0;
        doc_fill(&d, (size_t)tp_range(&rng, 0, huge ? 6 : 400), &rng, 0,
                 huge ? 60000 : tp_range(&rng, 0, 400));
        int64_t max_tokens = tp_range(&rng, 500, tp_range(&rng, 0, 1) ? 3000 : 20000);
        json_t *a = json_pack("{s:I, s:I, s:s}", "max_lines", (json_int_t)tp_range(&rng, 1, 600),
                              "max_tokens", (json_int_t)max_tokens, "path", "x");
        size_t line = 0, byte = 0; /* position reached: line index and byte inside it */
        for (int guard = 0; guard < 100000; guard++) {
            mcpage_result *res = mcpage_result_new();
            assert_int_equal(run_lines(e.pager, &d, a, res), 0);
            assert_false(mcpage_result_is_error(res));
            tp_assert_fits(res, max_tokens, cfg.max_chars);
            json_t *sc = tp_structured(res);
            json_t *lines = json_object_get(sc, "lines");
            assert_int_equal(json_integer_value(json_object_get(sc, "returned")),
                             json_array_size(lines));
            assert_int_equal(json_integer_value(json_object_get(sc, "total_lines")), d.n);
            for (size_t i = 0; i < json_array_size(lines); i++) {
                json_t *l = json_array_get(lines, i);
                size_t n = json_string_length(l);
                assert_true(line < d.n);
                assert_true(byte + n <= d.lens[line]);
                assert_memory_equal(json_string_value(l), d.lines[line] + byte, n);
                byte += n;
                if (byte == d.lens[line] && i + 1 < json_array_size(lines)) {
                    line++;
                    byte = 0;
                }
            }
            pages++;
            json_t *hm = json_object_get(sc, "has_more");
            assert_true(json_is_boolean(hm));
            if (!json_is_true(hm)) {
                json_decref(sc);
                mcpage_result_free(res);
                break;
            }
            assert_true(json_array_size(lines) >= 1);
            json_t *nl = json_object_get(sc, "next_start_line");
            json_t *nc = json_object_get(sc, "next_start_column");
            if (nc == NULL) {
                assert_int_equal(byte, d.lens[line]); /* the line was completed */
                line++;
                byte = 0;
                assert_int_equal(json_integer_value(nl), (json_int_t)line + 1);
            } else {
                assert_int_equal(json_integer_value(nl), (json_int_t)line + 1);
            }
            json_object_set(a, "start_line", nl);
            if (nc)
                json_object_set(a, "start_column", nc);
            else
                json_object_del(a, "start_column");
            json_decref(sc);
            mcpage_result_free(res);
        }
        if (d.n > 0) {
            assert_int_equal(line, d.n - 1);
            assert_int_equal(byte, d.lens[d.n - 1]);
        }
        json_decref(a);
        doc_free(&d);
        tp_done(&e);
    }
    printf("property walk: %zu pages checked\n", pages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_page_numbers_lines_like_cat_n),
        cmocka_unit_test(start_line_past_the_end_is_an_empty_page_naming_the_last_page),
        cmocka_unit_test(long_line_is_split_and_resumed_by_column),
        cmocka_unit_test(max_lines_above_maximum_is_lowered_and_disclosed),
        cmocka_unit_test(invalid_line_windows_are_rejected),
        cmocka_unit_test(walks_return_every_line_once_in_order_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
