/* Tests for the SPATIAL page builder: regions clamped and clipped, labels,
   row-major cells, budgets that drop rows, and next_regions {right, down}. */
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

static const mcpage_grid_spec sheet_spec = {
    .tool = "read_sheet",
    .default_rows = 20,
    .max_rows = 200,
    .default_cols = 10,
    .max_cols = 50,
    .a1_labels = true,
};

/* The cell at (r, c) of the test grid: a short string, or a long one. */
static json_t *cell_value(int64_t r, int64_t c, size_t width)
{
    char buf[64];
    if (width == 0) {
        snprintf(buf, sizeof buf, "r%lldc%lld", (long long)r, (long long)c);
        return json_string(buf);
    }
    char *s = malloc(width + 1);
    for (size_t i = 0; i < width; i++)
        s[i] = (char)('a' + (size_t)(r * 7 + c + (int64_t)i) % 26);
    s[width] = '\0';
    json_t *v = json_string(s);
    free(s);
    return v;
}

static int run_grid(const mcpage_pager *p, const mcpage_grid_spec *spec, int64_t nrows,
                    int64_t ncols, size_t width, const json_t *args, mcpage_result *res)
{
    mcpage_grid *pg;
    int rc = mcpage_grid_begin(p, spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        mcpage_grid_set_bounds(pg, nrows, ncols);
        const mcpage_region *r = &mcpage_grid_window_get(pg)->region;
        for (int64_t i = 0; i < r->rows && rc != MCPAGE_PAGE_FULL; i++)
            for (int64_t j = 0; j < r->cols; j++) {
                rc = mcpage_grid_add(pg, cell_value(r->row + i, r->col + j, width));
                assert_true(rc >= 0);
                if (rc == MCPAGE_PAGE_FULL)
                    break;
            }
    }
    return mcpage_grid_finish(pg, res);
}

static json_t *grid_page(tp_env *e, int64_t nrows, int64_t ncols, size_t width,
                         const char *args_json, mcpage_result *res)
{
    json_t *a = tp_args(args_json);
    assert_int_equal(run_grid(e->pager, &sheet_spec, nrows, ncols, width, a, res), 0);
    json_decref(a);
    return tp_structured(res);
}

static void region_page_has_labels_bounds_and_next_regions(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    json_t *sc =
        grid_page(&e, 1000, 26, 0,
                  "{\"region\":{\"row\":0,\"col\":0,\"rows\":3,\"cols\":2},\"sheet\":\"S\"}", res);
    json_t *cells = json_object_get(sc, "cells");
    assert_int_equal(json_array_size(cells), 3);
    assert_string_equal(json_string_value(json_array_get(json_array_get(cells, 2), 1)), "r2c1");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sc, "row_labels"), 0)),
                        "1");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sc, "col_labels"), 1)),
                        "B");
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 6);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_cells")), 26000);
    assert_true(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "limit");
    json_t *nr = json_object_get(sc, "next_regions");
    json_t *down = json_object_get(nr, "down");
    json_t *right = json_object_get(nr, "right");
    assert_int_equal(json_integer_value(json_object_get(down, "row")), 3);
    assert_int_equal(json_integer_value(json_object_get(down, "col")), 0);
    assert_int_equal(json_integer_value(json_object_get(right, "row")), 0);
    assert_int_equal(json_integer_value(json_object_get(right, "col")), 2);
    assert_int_equal(json_integer_value(json_object_get(right, "rows")), 3);
    json_t *bounds = json_object_get(sc, "bounds");
    assert_int_equal(json_integer_value(json_object_get(bounds, "rows")), 1000);
    assert_int_equal(json_integer_value(json_object_get(bounds, "cols")), 26);
    assert_string_equal(
        json_string_value(json_object_get(sc, "hint")),
        "Next page: read_sheet with region={\"row\":3,\"col\":0,\"rows\":3,\"cols\":2} (down) or "
        "region={\"row\":0,\"col\":2,\"rows\":3,\"cols\":2} (right) and the same sheet.");
    const char *text = tp_text(res);
    const char *want = "Rows 1-3, columns A-B of a 1,000 x 26 grid: 6 of 26,000 cells (stopped at "
                       "the edge of the region).\nrow\tA\tB\n1\t\"r0c0\"\t\"r0c1\"\n";
    assert_memory_equal(text, want, strlen(want));
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

static void region_is_clipped_to_the_grid_and_ends_there(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = grid_page(&e, 5, 4, 0, "{\"region\":{\"row\":3,\"col\":1}}", res);
    json_t *region = json_object_get(sc, "region");
    assert_int_equal(json_integer_value(json_object_get(region, "rows")), 2);
    assert_int_equal(json_integer_value(json_object_get(region, "cols")), 3);
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 6);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "end");
    assert_null(json_object_get(sc, "next_regions"));
    json_decref(sc);
    /* Past the grid: empty, no more, a hint where the last cells are. */
    sc = grid_page(&e, 5, 4, 0, "{\"region\":{\"row\":50,\"col\":0,\"rows\":2,\"cols\":2}}", res);
    assert_false(mcpage_result_is_error(res));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "The region starts past the end of the 5 x 4 grid; its last cells are at "
                        "read_sheet with region={\"row\":3,\"col\":2,\"rows\":2,\"cols\":2}.");
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

static void region_above_maximum_is_lowered_and_bad_regions_rejected(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = grid_page(&e, 1000, 100, 0,
                           "{\"region\":{\"rows\":1000,\"cols\":3},\"max_tokens\":20000}", res);
    assert_true(json_is_true(json_object_get(sc, "region_clamped")));
    assert_non_null(strstr(json_string_value(json_object_get(sc, "hint")),
                           "region.rows 1,000 was lowered to the maximum 200."));
    json_decref(sc);
    static const struct {
        const char *args;  /* the call */
        const char *param; /* the parameter named */
    } cases[] = {
        {"{\"region\":[0,0,5,5]}", "region"},
        {"{\"region\":\"A1:B2\"}", "region"},
        {"{\"region\":{\"row\":-1}}", "region.row"},
        {"{\"region\":{\"rows\":0}}", "region.rows"},
        {"{\"region\":{\"cols\":1.5}}", "region.cols"},
        {"{\"region\":{\"height\":3}}", "region"},
        {"{\"max_tokens\":\"lots\"}", "max_tokens"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = tp_args(cases[i].args);
        assert_int_equal(run_grid(e.pager, &sheet_spec, 10, 10, 0, a, res), 0);
        json_decref(tp_assert_rejected(res, "invalid_argument", cases[i].param, NULL));
        json_decref(a);
    }
    mcpage_result_free(res);
    tp_done(&e);
}

static void budget_drops_whole_rows_and_keeps_at_least_one_cell(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    /* Rows of 10 cells of 200 bytes: a 1,000-token budget holds few. */
    json_t *sc = grid_page(&e, 100, 10, 200, "{\"max_tokens\":1000}", res);
    tp_assert_fits(res, 1000, MCPAGE_MAX_CHARS);
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "max_tokens");
    json_t *region = json_object_get(sc, "region");
    int64_t rows = json_integer_value(json_object_get(region, "rows"));
    assert_true(rows >= 1);
    json_t *down = json_object_get(json_object_get(sc, "next_regions"), "down");
    assert_int_equal(json_integer_value(json_object_get(down, "row")), rows);
    json_decref(sc);
    /* One cell larger than half the budget per row: a partial first row. */
    sc = grid_page(&e, 3, 10, 1500, "{\"max_tokens\":1000}", res);
    tp_assert_fits(res, 1000, MCPAGE_MAX_CHARS);
    region = json_object_get(sc, "region");
    assert_int_equal(json_integer_value(json_object_get(region, "rows")), 1);
    int64_t cols = json_integer_value(json_object_get(region, "cols"));
    assert_true(cols >= 1 && cols < 10);
    json_t *right = json_object_get(json_object_get(sc, "next_regions"), "right");
    assert_int_equal(json_integer_value(json_object_get(right, "col")), cols);
    assert_int_equal(json_integer_value(json_object_get(right, "row")), 0);
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

/* Property: walking a random grid band by band (down first, then the next
   band to the right) visits every cell exactly once; every page fits. */
static void walks_visit_every_cell_once_within_budget(void **state)
{
    (void)state;
    uint64_t rng = 4242;
    size_t pages = 0;
    for (int iter = 0; iter < 50; iter++) {
        tp_env e;
        tp_setup(&e, NULL);
        int64_t nrows = tp_range(&rng, 0, 120), ncols = tp_range(&rng, 0, 60);
        size_t width = (size_t)tp_range(&rng, 0, tp_range(&rng, 0, 3) ? 40 : 3000);
        int64_t max_tokens = tp_range(&rng, 500, 6000);
        int64_t rows = tp_range(&rng, 1, 200), cols = tp_range(&rng, 1, 50);
        unsigned char *seen = calloc((size_t)(nrows * ncols) + 1, 1);
        int64_t band_col = 0;
        json_t *region =
            json_pack("{s:I, s:I, s:I, s:I}", "row", (json_int_t)0, "col", (json_int_t)0, "rows",
                      (json_int_t)rows, "cols", (json_int_t)cols);
        for (int guard = 0; guard < 100000; guard++) {
            json_t *a =
                json_pack("{s:O, s:I}", "region", region, "max_tokens", (json_int_t)max_tokens);
            mcpage_result *res = mcpage_result_new();
            assert_int_equal(run_grid(e.pager, &sheet_spec, nrows, ncols, width, a, res), 0);
            json_decref(a);
            tp_assert_fits(res, max_tokens, MCPAGE_MAX_CHARS);
            json_t *sc = tp_structured(res);
            json_t *reg = json_object_get(sc, "region");
            int64_t r0 = json_integer_value(json_object_get(reg, "row"));
            int64_t c0 = json_integer_value(json_object_get(reg, "col"));
            int64_t rr = json_integer_value(json_object_get(reg, "rows"));
            int64_t cc = json_integer_value(json_object_get(reg, "cols"));
            assert_int_equal(json_integer_value(json_object_get(sc, "returned")), rr * cc);
            assert_int_equal(json_integer_value(json_object_get(sc, "total_cells")), nrows * ncols);
            json_t *cells = json_object_get(sc, "cells");
            for (int64_t i = 0; i < rr; i++)
                for (int64_t j = 0; j < cc; j++) {
                    json_t *v = json_array_get(json_array_get(cells, (size_t)i), (size_t)j);
                    json_t *want = cell_value(r0 + i, c0 + j, width);
                    if (json_object_get(sc, "truncated_cell")) {
                        /* A cell larger than the budget comes cut: a prefix. */
                        assert_int_equal(rr * cc, 1);
                        assert_true(json_string_length(v) < json_string_length(want));
                        assert_memory_equal(json_string_value(v), json_string_value(want),
                                            json_string_length(v));
                    } else {
                        assert_true(json_equal(v, want));
                    }
                    json_decref(want);
                    size_t at = (size_t)((r0 + i) * ncols + c0 + j);
                    assert_int_equal(seen[at], 0);
                    seen[at] = 1;
                }
            pages++;
            json_t *nr = json_object_get(sc, "next_regions");
            json_t *down = json_object_get(nr, "down");
            json_t *right = json_object_get(nr, "right");
            assert_true(json_is_true(json_object_get(sc, "has_more")) == (nr != NULL));
            int64_t band_end = band_col + cols < ncols ? band_col + cols : ncols;
            json_t *go = NULL;
            if (rr == 1 && c0 + cc < band_end) {
                /* A partial row: its right region continues it. */
                assert_non_null(right);
                assert_int_equal(json_integer_value(json_object_get(right, "col")), c0 + cc);
                go = json_pack("{s:I, s:I, s:I, s:I}", "row", (json_int_t)r0, "col",
                               (json_int_t)(c0 + cc), "rows", (json_int_t)1, "cols",
                               (json_int_t)(band_end - c0 - cc));
            } else if (rr > 0 && r0 + rr < nrows) {
                assert_non_null(down);
                assert_int_equal(json_integer_value(json_object_get(down, "row")), r0 + rr);
                go = json_pack("{s:I, s:I, s:I, s:I}", "row", (json_int_t)(r0 + rr), "col",
                               (json_int_t)band_col, "rows", (json_int_t)rows, "cols",
                               (json_int_t)cols);
            } else {
                band_col += cols;
                if (band_col < ncols && nrows > 0)
                    go = json_pack("{s:I, s:I, s:I, s:I}", "row", (json_int_t)0, "col",
                                   (json_int_t)band_col, "rows", (json_int_t)rows, "cols",
                                   (json_int_t)cols);
            }
            json_decref(sc);
            mcpage_result_free(res);
            json_decref(region);
            region = go;
            if (go == NULL)
                break;
        }
        json_decref(region);
        for (int64_t i = 0; i < nrows * ncols; i++)
            assert_int_equal(seen[i], 1);
        free(seen);
        tp_done(&e);
    }
    printf("property walk: %zu pages checked\n", pages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(region_page_has_labels_bounds_and_next_regions),
        cmocka_unit_test(region_is_clipped_to_the_grid_and_ends_there),
        cmocka_unit_test(region_above_maximum_is_lowered_and_bad_regions_rejected),
        cmocka_unit_test(budget_drops_whole_rows_and_keeps_at_least_one_cell),
        cmocka_unit_test(walks_visit_every_cell_once_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
