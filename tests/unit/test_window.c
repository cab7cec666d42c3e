/* Tests for window parsing shared by the four families: pager settings,
   defaults, clamps (disclosed), rejections (shape of the isError result). */
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

static const mcpage_list_spec list_spec = {
    .tool = "list_things", .unit = "things", .default_limit = 10, .max_limit = 50};
static const mcpage_lines_spec lines_spec = {
    .tool = "read_text", .default_max_lines = 40, .max_max_lines = 400};
static const mcpage_bytes_spec bytes_spec = {
    .tool = "read_bytes", .default_max_bytes = 1000, .max_max_bytes = 9000};
static const mcpage_grid_spec grid_spec = {
    .tool = "read_grid", .default_rows = 5, .max_rows = 50, .default_cols = 4, .max_cols = 20};

enum family { LIST, LINES, BYTES, GRID };

/* Runs one call of a family over a tiny data set; the result goes to res. */
static void run_family(const mcpage_pager *p, enum family f, const char *args_json,
                       mcpage_result *res)
{
    json_t *a = tp_args(args_json);
    int rc;
    switch (f) {
    case LIST: {
        mcpage_list *pg;
        rc = mcpage_list_begin(p, &list_spec, a, &pg);
        assert_true(rc >= 0);
        if (rc == 0) {
            const mcpage_list_window *w = mcpage_list_window_get(pg);
            for (int64_t i = w->offset; i < 3; i++) {
                mcpage_keypart k = {.i = i};
                if (mcpage_list_add(pg, json_pack("{s:I}", "id", (json_int_t)i), &k, 1))
                    break;
            }
            mcpage_list_set_total(pg, 3, 1);
        }
        assert_int_equal(mcpage_list_finish(pg, res), 0);
        break;
    }
    case LINES: {
        mcpage_lines *pg;
        rc = mcpage_lines_begin(p, &lines_spec, a, &pg);
        assert_true(rc >= 0);
        if (rc == 0) {
            mcpage_lines_set_total(pg, 3);
            for (int64_t i = mcpage_lines_window_get(pg)->start_line; i <= 3; i++)
                if (mcpage_lines_add(pg, "line", 4))
                    break;
        }
        assert_int_equal(mcpage_lines_finish(pg, res), 0);
        break;
    }
    case BYTES: {
        mcpage_bytes *pg;
        rc = mcpage_bytes_begin(p, &bytes_spec, a, &pg);
        assert_true(rc >= 0);
        if (rc == 0) {
            static const char abc[] = "abc";
            int64_t off = mcpage_bytes_window_get(pg)->offset;
            size_t at = (size_t)(off < 3 ? off : 3);
            assert_int_equal(mcpage_bytes_set(pg, abc + at, 3 - at, 3), 0);
        }
        assert_int_equal(mcpage_bytes_finish(pg, res), 0);
        break;
    }
    case GRID: {
        mcpage_grid *pg;
        rc = mcpage_grid_begin(p, &grid_spec, a, &pg);
        assert_true(rc >= 0);
        if (rc == 0) {
            mcpage_grid_set_bounds(pg, 3, 3);
            const mcpage_region *r = &mcpage_grid_window_get(pg)->region;
            for (int64_t i = 0; i < r->rows * r->cols; i++)
                if (mcpage_grid_add(pg, json_integer(i)))
                    break;
        }
        assert_int_equal(mcpage_grid_finish(pg, res), 0);
        break;
    }
    }
    json_decref(a);
}

static void pager_defaults_fit_the_strictest_common_host(void **state)
{
    (void)state;
    mcpage_pager_config cfg;
    mcpage_pager_config_init(&cfg);
    assert_int_equal(cfg.default_tokens, 4000);
    assert_int_equal(cfg.max_tokens, 20000);
    assert_int_equal(cfg.max_chars, 100000);
    assert_int_equal(cfg.text_mode, MCPAGE_TEXT_LINES);
}

static void pager_refuses_inconsistent_settings(void **state)
{
    (void)state;
    mcpage_keyring *kr;
    assert_int_equal(mcpage_keyring_new(&kr), 0);
    assert_int_equal(mcpage_keyring_load(kr, NULL, NULL), 0);
    mcpage_pager *p = NULL;
    mcpage_pager_config cfg;
    mcpage_pager_config_init(&cfg);
    cfg.default_tokens = cfg.max_tokens + 1;
    assert_int_equal(mcpage_pager_new(&cfg, kr, &p), MCPAGE_EINVAL);
    mcpage_pager_config_init(&cfg);
    cfg.min_tokens = 10;
    assert_int_equal(mcpage_pager_new(&cfg, kr, &p), MCPAGE_EINVAL);
    mcpage_pager_config_init(&cfg);
    cfg.max_chars = 10;
    assert_int_equal(mcpage_pager_new(&cfg, kr, &p), MCPAGE_EINVAL);
    assert_int_equal(mcpage_pager_new(NULL, NULL, &p), MCPAGE_EINVAL);
    assert_null(p);
    assert_int_equal(mcpage_pager_new(NULL, kr, &p), 0);
    assert_ptr_equal(mcpage_pager_keyring(p), kr);
    mcpage_pager_free(p);
    mcpage_keyring_free(kr);
}

static void omitted_window_parameters_take_the_documented_defaults(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_list *l;
    assert_int_equal(mcpage_list_begin(e.pager, &list_spec, NULL, &l), 0);
    assert_int_equal(mcpage_list_window_get(l)->limit, 10);
    assert_int_equal(mcpage_list_window_get(l)->fetch, 11);
    assert_int_equal(mcpage_list_window_get(l)->offset, 0);
    assert_int_equal(mcpage_list_window_get(l)->max_tokens, 4000);
    assert_false(mcpage_list_window_get(l)->resume);
    assert_int_equal(mcpage_list_window_get(l)->total, -1);
    mcpage_list_abort(l);
    mcpage_lines *ln;
    assert_int_equal(mcpage_lines_begin(e.pager, &lines_spec, NULL, &ln), 0);
    assert_int_equal(mcpage_lines_window_get(ln)->start_line, 1);
    assert_int_equal(mcpage_lines_window_get(ln)->start_column, 1);
    assert_int_equal(mcpage_lines_window_get(ln)->max_lines, 40);
    mcpage_lines_abort(ln);
    mcpage_bytes *b;
    assert_int_equal(mcpage_bytes_begin(e.pager, &bytes_spec, NULL, &b), 0);
    assert_int_equal(mcpage_bytes_window_get(b)->offset, 0);
    assert_int_equal(mcpage_bytes_window_get(b)->max_bytes, 1000);
    mcpage_bytes_abort(b);
    mcpage_grid *g;
    assert_int_equal(mcpage_grid_begin(e.pager, &grid_spec, NULL, &g), 0);
    const mcpage_region *r = &mcpage_grid_window_get(g)->region;
    assert_int_equal(r->row, 0);
    assert_int_equal(r->col, 0);
    assert_int_equal(r->rows, 5);
    assert_int_equal(r->cols, 4);
    mcpage_grid_abort(g);
    tp_done(&e);
}

static void max_tokens_above_the_maximum_is_clamped_in_every_family(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    for (int f = LIST; f <= GRID; f++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, (enum family)f, "{\"max_tokens\":1000000}", res);
        assert_false(mcpage_result_is_error(res));
        json_t *sc = tp_structured(res);
        assert_true(json_is_true(json_object_get(sc, "max_tokens_clamped")));
        assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                               "max_tokens 1,000,000 was lowered to the maximum 20,000."));
        assert_non_null(strstr(tp_text(res), "max_tokens 1,000,000 was lowered"));
        json_decref(sc);
        mcpage_result_free(res);
    }
    tp_done(&e);
}

static void invalid_values_are_rejected_in_every_family(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    static const struct {
        enum family f;     /* the family */
        const char *args;  /* the call */
        const char *param; /* the parameter named */
    } cases[] = {
        {LIST, "{\"limit\":0}", "limit"},
        {LIST, "{\"limit\":-1}", "limit"},
        {LIST, "{\"limit\":1.5}", "limit"},
        {LIST, "{\"limit\":\"5\"}", "limit"},
        {LIST, "{\"offset\":-2}", "offset"},
        {LINES, "{\"start_line\":0}", "start_line"},
        {LINES, "{\"start_column\":-1}", "start_column"},
        {LINES, "{\"max_lines\":0}", "max_lines"},
        {LINES, "{\"max_lines\":true}", "max_lines"},
        {BYTES, "{\"offset\":-1}", "offset"},
        {BYTES, "{\"max_bytes\":0}", "max_bytes"},
        {BYTES, "{\"max_bytes\":{}}", "max_bytes"},
        {GRID, "{\"region\":{\"rows\":0}}", "region.rows"},
        {GRID, "{\"region\":{\"col\":-3}}", "region.col"},
        {GRID, "{\"region\":5}", "region"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, cases[i].f, cases[i].args, res);
        json_t *err = tp_assert_rejected(res, "invalid_argument", cases[i].param, NULL);
        /* The structured copy is complete on its own: it carries the message. */
        assert_string_equal(json_string_value(json_object_get(err, "message")), tp_text(res));
        assert_int_equal(mcpage_result_block_count(res), 1);
        json_decref(err);
        mcpage_result_free(res);
    }
    /* Zero and negative max_tokens, and below the minimum, in every family. */
    for (int f = LIST; f <= GRID; f++) {
        const char *bad[] = {"{\"max_tokens\":0}", "{\"max_tokens\":-100}", "{\"max_tokens\":499}",
                             "{\"max_tokens\":\"4000\"}"};
        for (size_t k = 0; k < 4; k++) {
            mcpage_result *res = mcpage_result_new();
            run_family(e.pager, (enum family)f, bad[k], res);
            json_decref(tp_assert_rejected(res, "invalid_argument", "max_tokens", NULL));
            mcpage_result_free(res);
        }
    }
    tp_done(&e);
}

static void rejection_names_value_range_and_a_valid_call(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    run_family(e.pager, LINES, "{\"max_lines\":-7}", res);
    assert_string_equal(tp_text(res),
                        "Invalid max_lines: got -7. Expected an integer from 1 to 400 (larger "
                        "values are lowered to 400). Example: read_text with max_lines=40.");
    json_t *err = tp_assert_rejected(res, "invalid_argument", "max_lines", NULL);
    assert_int_equal(json_integer_value(json_object_get(err, "got")), -7);
    assert_string_equal(json_string_value(json_object_get(err, "expected")),
                        "an integer from 1 to 400 (larger values are lowered to 400)");
    assert_string_equal(json_string_value(json_object_get(err, "example")),
                        "read_text with max_lines=40");
    json_decref(err);
    mcpage_result_free(res);
    tp_done(&e);
}

static void echo_of_a_long_or_nested_value_is_cut(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    char args[3000];
    char big[2001];
    memset(big, 'z', 2000);
    big[2000] = '\0';
    snprintf(args, sizeof args, "{\"limit\":\"%s\"}", big);
    run_family(e.pager, LIST, args, res);
    json_t *err = tp_assert_rejected(res, "invalid_argument", "limit", NULL);
    const char *got = json_string_value(json_object_get(err, "got"));
    assert_int_equal(strlen(got), 80 + 3); /* 80 bytes and an ellipsis */
    assert_memory_equal(got + 80, "\xE2\x80\xA6", 3);
    json_decref(err);
    run_family(e.pager, LIST, "{\"limit\":{\"a\":[1,2,{\"b\":null}]}}", res);
    err = tp_assert_rejected(res, "invalid_argument", "limit", NULL);
    assert_string_equal(json_string_value(json_object_get(err, "got")),
                        "{\"a\":[1,2,{\"b\":null}]}");
    json_decref(err);
    mcpage_result_free(res);
    tp_done(&e);
}

static void arguments_that_are_not_an_object_are_rejected_in_every_family(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    for (int f = LIST; f <= GRID; f++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, (enum family)f, "[1,2]", res);
        json_decref(tp_assert_rejected(res, "invalid_argument", "arguments", NULL));
        mcpage_result_free(res);
    }
    tp_done(&e);
}

static void integral_reals_are_integers_and_null_means_omitted(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    run_family(e.pager, LIST, "{\"limit\":2.0,\"offset\":null,\"max_tokens\":null}", res);
    json_t *sc = tp_structured(res);
    assert_int_equal(json_integer_value(json_object_get(sc, "limit")), 2);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 2);
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

static void past_the_end_is_never_an_error(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    const char *calls[] = {"{\"offset\":100}", "{\"start_line\":100}", "{\"offset\":100}",
                           "{\"region\":{\"row\":100}}"};
    for (int f = LIST; f <= GRID; f++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, (enum family)f, calls[f], res);
        assert_false(mcpage_result_is_error(res));
        json_t *sc = tp_structured(res);
        assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
        assert_false(json_is_true(json_object_get(sc, "has_more")));
        assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")), "past the end"));
        json_decref(sc);
        mcpage_result_free(res);
    }
    tp_done(&e);
}

/*
 * Clamp, don't reject, however high (issue 15: INT64_MAX was rejected with
 * a message saying larger values are lowered): a window size past its
 * maximum is lowered to it, and a position without a maximum (offset,
 * start_line, region.row) to 2^53-1, which is past the end; both
 * disclosed. Integral reals beyond int64 (1e300) count as integers.
 */
static void any_high_value_is_clamped_in_every_family(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    static const struct {
        enum family f;    /* the family */
        const char *args; /* the call */
        const char *flag; /* the _clamped key */
        const char *note; /* the hint clause */
    } cases[] = {
        {LIST, "{\"limit\":9223372036854775807}", "limit_clamped",
         "limit 9,223,372,036,854,775,807 was lowered to the maximum 50."},
        {LIST, "{\"limit\":1e300}", "limit_clamped", "limit 1e+300 was lowered to the maximum 50."},
        {LIST, "{\"limit\":101}", "limit_clamped", "limit 101 was lowered to the maximum 50."},
        {LIST, "{\"max_tokens\":9223372036854775807}", "max_tokens_clamped",
         "max_tokens 9,223,372,036,854,775,807 was lowered to the maximum 20,000."},
        {LIST, "{\"max_tokens\":1e19}", "max_tokens_clamped",
         "max_tokens 1e+19 was lowered to the maximum 20,000."},
        {LIST, "{\"offset\":9223372036854775807}", "offset_clamped",
         "offset 9,223,372,036,854,775,807 was lowered to the maximum 9,007,199,254,740,991."},
        {LIST, "{\"offset\":1e300}", "offset_clamped",
         "offset 1e+300 was lowered to the maximum 9,007,199,254,740,991."},
        {LINES, "{\"start_line\":9223372036854775807}", "start_line_clamped",
         "start_line 9,223,372,036,854,775,807 was lowered to the maximum "
         "9,007,199,254,740,991."},
        {LINES, "{\"max_lines\":9223372036854775807}", "max_lines_clamped", "was lowered to"},
        {BYTES, "{\"offset\":9223372036854775807}", "offset_clamped", "was lowered to"},
        {BYTES, "{\"max_bytes\":1e300}", "max_bytes_clamped", "was lowered to"},
        {GRID, "{\"region\":{\"row\":9223372036854775807}}", "region_clamped", "was lowered to"},
        {GRID, "{\"region\":{\"rows\":1e300}}", "region_clamped", "was lowered to"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, cases[i].f, cases[i].args, res);
        if (mcpage_result_is_error(res))
            fail_msg("%s rejected: %s", cases[i].args, tp_text(res));
        json_t *sc = tp_structured(res);
        assert_true(json_is_true(json_object_get(sc, cases[i].flag)));
        const char *hint = json_string_value(json_object_get(sc, "hint"));
        if (hint == NULL || strstr(hint, cases[i].note) == NULL)
            fail_msg("%s: hint %s lacks \"%s\"", cases[i].args, hint ? hint : "(none)",
                     cases[i].note);
        json_decref(sc);
        mcpage_result_free(res);
    }
    /* A position lowered that far is past the end: an empty last page. */
    const char *past[] = {"{\"offset\":9223372036854775807}", "{\"start_line\":1e300}",
                          "{\"offset\":9223372036854775807}",
                          "{\"region\":{\"row\":9223372036854775807}}"};
    for (int f = LIST; f <= GRID; f++) {
        mcpage_result *res = mcpage_result_new();
        run_family(e.pager, (enum family)f, past[f], res);
        assert_false(mcpage_result_is_error(res));
        json_t *sc = tp_structured(res);
        assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
        assert_false(json_is_true(json_object_get(sc, "has_more")));
        assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")), "past the end"));
        json_decref(sc);
        mcpage_result_free(res);
    }
    tp_done(&e);
}

/* True when the key "maximum" appears anywhere in v. */
static bool has_maximum(const json_t *v)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (strcmp(k, "maximum") == 0 || has_maximum(x))
                return true;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (has_maximum(x))
                return true;
        }
    }
    return false;
}

/* Calls the family with every schema default spelled out: never an error. */
static void defaults_are_accepted(const mcpage_pager *p, enum family f, const json_t *props)
{
    json_t *args = json_object();
    const char *k;
    json_t *prop;
    json_object_foreach((json_t *)props, k, prop)
    {
        json_t *def = json_object_get(prop, "default");
        if (def)
            json_object_set(args, k, def);
    }
    char *text = json_dumps(args, JSON_COMPACT);
    mcpage_result *res = mcpage_result_new();
    run_family(p, f, text, res);
    assert_false(mcpage_result_is_error(res));
    mcpage_result_free(res);
    free(text);
    json_decref(args);
}

static void schema_declares_type_minimum_default_and_never_maximum(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    json_t *s[4] = {
        mcpage_list_schema(e.pager, &list_spec), mcpage_lines_schema(e.pager, &lines_spec),
        mcpage_bytes_schema(e.pager, &bytes_spec), mcpage_grid_schema(e.pager, &grid_spec)};
    for (int f = LIST; f <= GRID; f++) {
        assert_non_null(s[f]);
        assert_false(has_maximum(s[f]));
        json_t *mt = json_object_get(s[f], "max_tokens");
        assert_string_equal(json_string_value(json_object_get(mt, "type")), "integer");
        assert_int_equal(json_integer_value(json_object_get(mt, "minimum")), 500);
        assert_int_equal(json_integer_value(json_object_get(mt, "default")), 4000);
        assert_non_null(
            strstr(json_string_value(json_object_get(mt, "description")), "at most 20,000"));
        defaults_are_accepted(e.pager, (enum family)f, s[f]);
    }
    json_t *limit = json_object_get(s[LIST], "limit");
    assert_int_equal(json_integer_value(json_object_get(limit, "minimum")), 1);
    assert_int_equal(json_integer_value(json_object_get(limit, "default")), 10);
    assert_string_equal(json_string_value(json_object_get(limit, "description")),
                        "Things per page, at most 50: larger values are lowered to 50.");
    assert_non_null(json_object_get(s[LIST], "cursor"));
    assert_non_null(json_object_get(s[LINES], "start_column"));
    json_t *rows =
        json_object_get(json_object_get(json_object_get(s[GRID], "region"), "properties"), "rows");
    assert_int_equal(json_integer_value(json_object_get(rows, "default")), 5);
    for (int f = LIST; f <= GRID; f++)
        json_decref(s[f]);
    tp_done(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pager_defaults_fit_the_strictest_common_host),
        cmocka_unit_test(pager_refuses_inconsistent_settings),
        cmocka_unit_test(omitted_window_parameters_take_the_documented_defaults),
        cmocka_unit_test(max_tokens_above_the_maximum_is_clamped_in_every_family),
        cmocka_unit_test(invalid_values_are_rejected_in_every_family),
        cmocka_unit_test(rejection_names_value_range_and_a_valid_call),
        cmocka_unit_test(echo_of_a_long_or_nested_value_is_cut),
        cmocka_unit_test(arguments_that_are_not_an_object_are_rejected_in_every_family),
        cmocka_unit_test(integral_reals_are_integers_and_null_means_omitted),
        cmocka_unit_test(past_the_end_is_never_an_error),
        cmocka_unit_test(any_high_value_is_clamped_in_every_family),
        cmocka_unit_test(schema_declares_type_minimum_default_and_never_maximum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
