/*
 * The SPATIAL page builder: a rectangle of a 2-D grid. The region
 * {row, col, rows, cols} (0-based) is clamped to the tool's maxima and
 * clipped to the grid; cells arrive row-major; the budget ends the page
 * by dropping whole rows (at least one row stays, or part of it: at least
 * one cell). The resume field is structured: next_regions {right, down}.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/dbuf.h"
#include "page/page_internal.h"

/* A cell's JSON is refused past this size. */
#define GRID_CELL_MAX ((size_t)16 << 20)
/* The largest grid side accepted, so that rows * cols stays exact. */
#define GRID_SIDE_MAX (INT64_C(1) << 26)

static const char *const grid_window[] = {"region", "max_tokens", NULL};
static const char *const region_keys[] = {"row", "col", "rows", "cols", NULL};

typedef struct grid_cell {
    char *json; /* the cell's value, compact JSON (owned) */
    size_t len; /* bytes in json */
} grid_cell;

struct mcpage_grid {
    page_base b;                  /* shared state */
    const mcpage_grid_spec *spec; /* the tool's description */
    mcpage_grid_window win;       /* the region (clipped once bounds are known) */
    mcpage_region req;            /* the region as requested, after clamping */
    bool bounds_set;              /* set_bounds was called */
    int64_t nrows;                /* grid height */
    int64_t ncols;                /* grid width */
    grid_cell *cells;             /* cells accepted, row-major */
    size_t n;                     /* cells accepted */
    size_t cap;                   /* cells allocated */
    bool full;                    /* the page is complete */
    bool stopped_early;           /* the budget ended the page */
    const char *stopped_by;       /* why, when stopped_early */
    size_t sum_tokens;            /* running token estimate of the cells */
    size_t sum_chars;             /* running UTF-16 units of the cells */
    size_t reserve_tokens;        /* estimated envelope cost, tokens */
    size_t reserve_chars;         /* estimated envelope cost, UTF-16 units */
    int64_t cut_chars_total;      /* the single cell was cut: its full length in
                                     characters; 0 when nothing was cut */
    int64_t cut_chars_shown;      /* characters of it on the page */
    mcpage_grid_label_fn label;   /* the tool's row and column names, or NULL */
    void *label_ud;               /* passed to label */
};

static void grid_free(mcpage_grid *pg)
{
    if (pg == NULL)
        return;
    for (size_t i = 0; i < pg->n; i++)
        mcpage__free(pg->cells[i].json);
    mcpage__free(pg->cells);
    page_base_free(&pg->b);
    mcpage__free(pg);
}

void mcpage_grid_abort(mcpage_grid *pg)
{
    grid_free(pg);
}

/* Column label: A, B, ..., Z, AA, ... (A1 style) or the 0-based index. */
static const char *col_label(const mcpage_grid *pg, int64_t col, char buf[32])
{
    const char *named = pg->label ? pg->label(pg->label_ud, false, col) : NULL;
    if (named)
        return named;
    if (!pg->spec->a1_labels) {
        snprintf(buf, 32, "%lld", (long long)col);
        return buf;
    }
    char rev[16];
    int k = 0;
    int64_t c = col + 1;
    while (c > 0 && k < 15) {
        c--;
        rev[k++] = (char)('A' + c % 26);
        c /= 26;
    }
    for (int i = 0; i < k; i++)
        buf[i] = rev[k - 1 - i];
    buf[k] = '\0';
    return buf;
}

static const char *row_label(const mcpage_grid *pg, int64_t row, char buf[32])
{
    const char *named = pg->label ? pg->label(pg->label_ud, true, row) : NULL;
    if (named)
        return named;
    snprintf(buf, 32, "%lld", (long long)(pg->spec->a1_labels ? row + 1 : row));
    return buf;
}

/* ------------------------------------------------------------- render */

/* A page's shape: rows x cols cells from the region's corner. */
typedef struct grid_view {
    int64_t rows;    /* rows on the page (the last may be partial when rows == 1) */
    int64_t cols;    /* columns on the page */
    bool has_right;  /* cells to the right of the page */
    bool has_down;   /* cells below the page */
    const char *why; /* stopped_by */
} grid_view;

static bool grid_past_end(const mcpage_grid *pg)
{
    /* At the corner of an empty grid there is nothing, but nothing is past. */
    if (pg->req.row == 0 && pg->req.col == 0)
        return false;
    return pg->req.row >= pg->nrows || pg->req.col >= pg->ncols;
}

static void region_json(jw *s, int64_t row, int64_t col, int64_t rows, int64_t cols)
{
    jw_object_begin(s);
    jw_kv_int(s, "row", row);
    jw_kv_int(s, "col", col);
    jw_kv_int(s, "rows", rows);
    jw_kv_int(s, "cols", cols);
    jw_object_end(s);
}

static void region_text(tbuf *t, int64_t row, int64_t col, int64_t rows, int64_t cols)
{
    tb_printf(t, "region={\"row\":%lld,\"col\":%lld,\"rows\":%lld,\"cols\":%lld}", (long long)row,
              (long long)col, (long long)rows, (long long)cols);
}

static void grid_hint(const mcpage_grid *pg, const grid_view *v, tbuf *t)
{
    const mcpage_region *r = &pg->win.region;
    char a[32], b[32];
    if (v->has_down || v->has_right) {
        tb_printf(t, " Next page: %s with ", pg->b.tool);
        if (v->has_down) {
            region_text(t, r->row + v->rows, r->col, pg->req.rows, pg->req.cols);
            tb_puts(t, " (down)");
        }
        if (v->has_right) {
            tb_puts(t, v->has_down ? " or " : "");
            region_text(t, r->row, r->col + v->cols, v->rows, pg->req.cols);
            tb_puts(t, " (right)");
        }
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    } else if (grid_past_end(pg)) {
        int64_t lr = pg->nrows > pg->req.rows ? pg->nrows - pg->req.rows : 0;
        int64_t lc = pg->ncols > pg->req.cols ? pg->ncols - pg->req.cols : 0;
        tb_printf(t, " The region starts past the end of the %s x %s grid; its last cells are at ",
                  page_fmt_int(pg->nrows, a), page_fmt_int(pg->ncols, b));
        tb_printf(t, "%s with ", pg->b.tool);
        region_text(t, lr, lc, pg->req.rows, pg->req.cols);
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    }
    if (pg->cut_chars_total) {
        char c1[32], c2[32];
        tb_printf(t, " The cell was cut to %s of its %s characters.",
                  page_fmt_int(pg->cut_chars_shown, c1), page_fmt_int(pg->cut_chars_total, c2));
    }
    if (pg->b.notes.len)
        tb_put(t, pg->b.notes.buf, pg->b.notes.len);
    if ((v->has_down || v->has_right) && pg->spec->narrow_hint)
        tb_printf(t, " %s", pg->spec->narrow_hint);
    page_trim_hint(t);
}

static void grid_summary(const mcpage_grid *pg, const grid_view *v, tbuf *t)
{
    const mcpage_region *r = &pg->win.region;
    char a[32], b[32], c[32], d[32];
    int64_t cells = v->rows * v->cols;
    int64_t total = pg->nrows * pg->ncols;
    if (cells == 0) {
        tb_printf(t, "0 of %s cells of a %s x %s grid (%s).", page_fmt_int(total, a),
                  page_fmt_int(pg->nrows, b), page_fmt_int(pg->ncols, c),
                  grid_past_end(pg) ? "the region is past the end" : "the grid is empty");
        return;
    }
    /* Named rows and columns may hold dashes themselves: "to" keeps them apart. */
    const char *to = pg->label ? " to " : "-";
    tb_printf(t, "Rows %s%s%s, ", row_label(pg, r->row, a), to,
              row_label(pg, r->row + v->rows - 1, b));
    tb_printf(t, "columns %s%s%s ", col_label(pg, r->col, a), to,
              col_label(pg, r->col + v->cols - 1, b));
    tb_printf(t, "of a %s x %s grid: %s of %s cells (", page_fmt_int(pg->nrows, a),
              page_fmt_int(pg->ncols, b), page_fmt_int(cells, c), page_fmt_int(total, d));
    if (strcmp(v->why, "limit") == 0)
        tb_puts(t, "stopped at the edge of the region).");
    else if (strcmp(v->why, "max_tokens") == 0)
        tb_printf(t, "stopped at the %s-token budget).", page_fmt_int(pg->b.max_tokens, a));
    else if (strcmp(v->why, "max_chars") == 0)
        tb_printf(t, "stopped at the %s-character ceiling).", page_fmt_int(pg->b.max_chars, a));
    else
        tb_puts(t, "the end of the grid).");
}

static int grid_render(const mcpage_grid *pg, const grid_view *v, jw *s, tbuf *t)
{
    const mcpage_region *r = &pg->win.region;
    tbuf h;
    tb_init(&h);
    grid_hint(pg, v, &h);
    char lab[32];
    int64_t stride = r->cols; /* cells are stored by the region's full width */

    jw_reset(s);
    jw_object_begin(s);
    jw_key(s, "cells");
    jw_array_begin(s);
    for (int64_t i = 0; i < v->rows; i++) {
        jw_array_begin(s);
        for (int64_t j = 0; j < v->cols; j++) {
            const grid_cell *c = &pg->cells[i * stride + j];
            jw_raw_value(s, c->json, c->len);
        }
        jw_array_end(s);
    }
    jw_array_end(s);
    jw_key(s, "row_labels");
    jw_array_begin(s);
    for (int64_t i = 0; i < v->rows; i++)
        jw_string(s, row_label(pg, r->row + i, lab));
    jw_array_end(s);
    jw_key(s, "col_labels");
    jw_array_begin(s);
    for (int64_t j = 0; j < v->cols; j++)
        jw_string(s, col_label(pg, r->col + j, lab));
    jw_array_end(s);
    jw_kv_int(s, "returned", v->rows * v->cols);
    jw_kv_int(s, "total_cells", pg->nrows * pg->ncols);
    jw_kv_bool(s, "has_more", v->has_down || v->has_right);
    jw_key(s, "region");
    region_json(s, r->row, r->col, v->rows, v->cols);
    jw_key(s, "bounds");
    jw_object_begin(s);
    jw_kv_int(s, "rows", pg->nrows);
    jw_kv_int(s, "cols", pg->ncols);
    jw_object_end(s);
    jw_kv_string(s, "stopped_by", v->why);
    if (v->has_down || v->has_right) {
        jw_key(s, "next_regions");
        jw_object_begin(s);
        if (v->has_right) {
            jw_key(s, "right");
            region_json(s, r->row, r->col + v->cols, v->rows, pg->req.cols);
        }
        if (v->has_down) {
            jw_key(s, "down");
            region_json(s, r->row + v->rows, r->col, pg->req.rows, pg->req.cols);
        }
        jw_object_end(s);
    }
    if (pg->cut_chars_total) {
        jw_key(s, "truncated_cell");
        jw_object_begin(s);
        jw_kv_int(s, "row", r->row);
        jw_kv_int(s, "col", r->col);
        jw_kv_int(s, "chars_total", pg->cut_chars_total);
        jw_kv_int(s, "chars_shown", pg->cut_chars_shown);
        jw_object_end(s);
    }
    page_write_clamps(&pg->b, s);
    if (h.len && h.err == 0)
        jw_kv_string(s, "hint", h.buf);
    jw_object_end(s);

    tb_reset(t);
    if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES) {
        grid_summary(pg, v, t);
        if (v->rows > 0) {
            tb_puts(t, "\nrow");
            for (int64_t j = 0; j < v->cols; j++)
                tb_printf(t, "\t%s", col_label(pg, r->col + j, lab));
        }
        for (int64_t i = 0; i < v->rows; i++) {
            tb_printf(t, "\n%s", row_label(pg, r->row + i, lab));
            for (int64_t j = 0; j < v->cols; j++) {
                const grid_cell *c = &pg->cells[i * stride + j];
                tb_put(t, "\t", 1);
                tb_put(t, c->json, c->len);
            }
        }
        if (h.len) {
            tb_put(t, "\n", 1);
            tb_put(t, h.buf, h.len);
        }
    }
    int err = s->err ? s->err : t->err ? t->err : h.err;
    tb_free(&h);
    return err;
}

/* ------------------------------------------------------------- begin */

static int parse_region(mcpage_grid *pg)
{
    const mcpage_grid_spec *spec = pg->spec;
    char example[160];
    snprintf(example, sizeof example, "region={\"row\":0,\"col\":0,\"rows\":%lld,\"cols\":%lld}",
             (long long)spec->default_rows, (long long)spec->default_cols);
    pg->req = (mcpage_region){0, 0, spec->default_rows, spec->default_cols};
    const json_t *v = pg->b.args ? json_object_get(pg->b.args, "region") : NULL;
    if (v == NULL || json_is_null(v))
        return MCPAGE_OK;
    if (!json_is_object(v))
        return page_reject(&pg->b, "invalid_argument", "region", v,
                           "an object {row, col, rows, cols} of integers", example, NULL);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        bool known = false;
        for (const char *const *k = region_keys; *k; k++)
            known = known || strcmp(*k, key) == 0;
        if (!known) {
            json_t *name = json_string(key);
            int rc =
                page_reject(&pg->b, "invalid_argument", "region", name,
                            "an object with only the keys row, col, rows and cols", example, NULL);
            json_decref(name);
            return rc;
        }
    }
    int rc = page_int_param(&pg->b, v, "row", "region.row", "region_clamped", 0, 0, 0, example,
                            &pg->req.row);
    if (rc == 0)
        rc = page_int_param(&pg->b, v, "col", "region.col", "region_clamped", 0, 0, 0, example,
                            &pg->req.col);
    if (rc == 0)
        rc = page_int_param(&pg->b, v, "rows", "region.rows", "region_clamped", spec->default_rows,
                            1, spec->max_rows, example, &pg->req.rows);
    if (rc == 0)
        rc = page_int_param(&pg->b, v, "cols", "region.cols", "region_clamped", spec->default_cols,
                            1, spec->max_cols, example, &pg->req.cols);
    return rc;
}

int mcpage_grid_begin(const mcpage_pager *p, const mcpage_grid_spec *spec, const json_t *args,
                      mcpage_grid **out)
{
    if (out == NULL)
        return MCPAGE_EINVAL;
    *out = NULL;
    if (p == NULL || spec == NULL || spec->tool == NULL || spec->default_rows < 1 ||
        spec->max_rows < spec->default_rows || spec->default_cols < 1 ||
        spec->max_cols < spec->default_cols || spec->max_rows > 100000 || spec->max_cols > 100000 ||
        spec->max_rows * spec->max_cols > 1000000)
        return MCPAGE_EINVAL;
    mcpage_grid *pg = mcpage__calloc(1, sizeof *pg);
    if (pg == NULL)
        return MCPAGE_ENOMEM;
    pg->spec = spec;
    int rc = page_base_init(&pg->b, p, spec->tool, args, grid_window);
    pg->win.args = pg->b.args;
    if (rc == 0)
        rc = parse_region(pg);
    if (rc == 0)
        rc = page_max_tokens(&pg->b, &pg->win.max_tokens);
    pg->win.region = pg->req;
    if (rc < 0) {
        grid_free(pg);
        return rc;
    }
    *out = pg;
    return rc;
}

static void grid_reserve(mcpage_grid *pg)
{
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    /* An empty page with both next regions and long numbers. */
    mcpage_region keep = pg->win.region;
    int64_t nr = pg->nrows, nc = pg->ncols;
    pg->win.region = (mcpage_region){GRID_SIDE_MAX, GRID_SIDE_MAX, 0, 0};
    pg->nrows = pg->ncols = GRID_SIDE_MAX * 2;
    grid_view v = {.rows = 0, .cols = 0, .has_right = true, .has_down = true, .why = "max_chars"};
    if (grid_render(pg, &v, &s, &t) == 0) {
        size_t tu = 0;
        jw_measure_utf8(t.buf, t.len, NULL, &tu);
        size_t st = page_tokens(s.buf, s.len), tt = page_tokens(t.buf, t.len);
        pg->reserve_tokens = (st > tt ? st : tt) + 40;
        pg->reserve_chars = (s.utf16 > tu ? s.utf16 : tu) + 100;
    }
    pg->win.region = keep;
    pg->nrows = nr;
    pg->ncols = nc;
    jw_free(&s);
    tb_free(&t);
}

void mcpage_grid_set_bounds(mcpage_grid *pg, int64_t rows, int64_t cols)
{
    if (pg == NULL || pg->b.rejected)
        return;
    rows = rows < 0 ? 0 : rows > GRID_SIDE_MAX ? GRID_SIDE_MAX : rows;
    cols = cols < 0 ? 0 : cols > GRID_SIDE_MAX ? GRID_SIDE_MAX : cols;
    pg->bounds_set = true;
    pg->nrows = rows;
    pg->ncols = cols;
    mcpage_region *r = &pg->win.region;
    *r = pg->req;
    if (r->row >= rows || r->col >= cols) {
        r->rows = 0;
        r->cols = 0;
    } else {
        if (r->rows > rows - r->row)
            r->rows = rows - r->row;
        if (r->cols > cols - r->col)
            r->cols = cols - r->col;
    }
    grid_reserve(pg);
    if (r->rows == 0)
        pg->full = true;
}

void mcpage_grid_set_labels(mcpage_grid *pg, mcpage_grid_label_fn label, void *ud)
{
    if (pg == NULL)
        return;
    pg->label = label;
    pg->label_ud = ud;
    /* The empty page's estimate was made with numbers: redo it with names. */
    if (pg->bounds_set && !pg->b.rejected)
        grid_reserve(pg);
}

const mcpage_grid_window *mcpage_grid_window_get(const mcpage_grid *pg)
{
    return &pg->win;
}

/* --------------------------------------------------------------- add */

static int push_cell(mcpage_grid *pg, jw *w)
{
    /* no maximum of its own: the page's budget ends it first */
    void *cells = pg->cells;
    int rc = dbuf_grow(&cells, &pg->cap, pg->n + 1, sizeof *pg->cells, 64, SIZE_MAX);
    if (rc != 0)
        return rc;
    pg->cells = cells;
    grid_cell *c = &pg->cells[pg->n++];
    c->json = jw_take(w, &c->len);
    return c->json ? MCPAGE_OK : MCPAGE_ENOMEM;
}

int mcpage_grid_add(mcpage_grid *pg, json_t *value)
{
    if (pg == NULL) {
        json_decref(value);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected || !pg->bounds_set) {
        json_decref(value);
        return MCPAGE_ESTATE;
    }
    if (pg->full) {
        json_decref(value);
        return MCPAGE_PAGE_FULL;
    }
    jw w;
    jw_init(&w, GRID_CELL_MAX);
    if (value)
        jw_json(&w, value);
    else
        jw_null(&w);
    json_decref(value);
    if (w.err) {
        int err = w.err;
        jw_free(&w);
        return err;
    }
    const mcpage_region *r = &pg->win.region;
    size_t row = pg->n / (size_t)r->cols, col = pg->n % (size_t)r->cols;
    /* A cell costs itself and its separator; a new row also its label. */
    size_t tok = page_tokens(w.buf, w.len) + 1 + (col == 0 ? 4 : 0);
    size_t chars = w.utf16 + 1 + (col == 0 ? 12 : 0);
    if (pg->label) {
        /* Named rows and columns cost their names (a column once, on the first row). */
        char rb[32], cb[32];
        const char *l[2] = {col == 0 ? row_label(pg, r->row + (int64_t)row, rb) : NULL,
                            row == 0 ? col_label(pg, r->col + (int64_t)col, cb) : NULL};
        for (int k = 0; k < 2; k++) {
            if (l[k]) {
                tok += page_tokens(l[k], strlen(l[k])) + 2;
                chars += strlen(l[k]) + 4;
            }
        }
    }
    bool fits = (int64_t)(pg->sum_tokens + tok + pg->reserve_tokens) <= pg->b.meter_tokens &&
                (int64_t)(pg->sum_chars + chars + pg->reserve_chars) <= pg->b.max_chars;
    if (!fits && pg->n > 0) {
        pg->full = true;
        pg->stopped_early = true;
        pg->stopped_by = (int64_t)(pg->sum_tokens + tok + pg->reserve_tokens) > pg->b.meter_tokens
                             ? "max_tokens"
                             : "max_chars";
        jw_free(&w);
        if (row > 0) {
            /* Drop the partial row: pages end on whole rows when they can. */
            while (pg->n > row * (size_t)r->cols)
                mcpage__free(pg->cells[--pg->n].json);
        }
        return MCPAGE_PAGE_FULL;
    }
    int rc = push_cell(pg, &w);
    jw_free(&w);
    if (rc)
        return rc;
    pg->sum_tokens += tok;
    pg->sum_chars += chars;
    if ((int64_t)pg->n == r->rows * r->cols) {
        pg->full = true;
        return MCPAGE_PAGE_FULL;
    }
    return MCPAGE_OK;
}

/* ------------------------------------------------------------ finish */

/* Sets cell 0 to the first `keep` bytes of `full` as a JSON string. */
static int set_first_cell(mcpage_grid *pg, const char *full, size_t keep)
{
    jw w;
    jw_init(&w, GRID_CELL_MAX);
    jw_stringn(&w, full, keep);
    if (w.err) {
        int err = w.err;
        jw_free(&w);
        return err;
    }
    mcpage__free(pg->cells[0].json);
    pg->cells[0].json = jw_take(&w, &pg->cells[0].len);
    size_t shown = 0;
    jw_measure_utf8(full, keep, &shown, NULL);
    pg->cut_chars_shown = (int64_t)shown;
    return pg->cells[0].json ? MCPAGE_OK : MCPAGE_ENOMEM;
}

/*
 * One cell larger than the whole budget: cut it (a string at a UTF-8
 * boundary; any other value as its JSON text) to the longest prefix that
 * fits, one character at least, and disclose it (truncated_cell + hint).
 */
static int cut_cell(mcpage_grid *pg, const grid_view *v, jw *s, tbuf *t)
{
    json_t *val = json_loadb(pg->cells[0].json, pg->cells[0].len, JSON_DECODE_ANY, NULL);
    char *full = NULL;
    size_t len = 0;
    if (json_is_string(val)) {
        full = mcpage__strndup(json_string_value(val), json_string_length(val));
        len = json_string_length(val);
    } else {
        full = mcpage__strndup(pg->cells[0].json, pg->cells[0].len);
        len = pg->cells[0].len;
    }
    json_decref(val);
    if (full == NULL)
        return MCPAGE_ENOMEM;
    size_t total = 0;
    jw_measure_utf8(full, len, &total, NULL);
    pg->cut_chars_total = total > 0 ? (int64_t)total : 1;
    size_t lo = len ? page_utf8_char_len(full, len) : 0, hi = len;
    size_t ceiling = (size_t)pg->b.max_tokens * 16;
    if (hi > ceiling)
        hi = ceiling;
    int rc = MCPAGE_OK;
    while (lo < hi && rc == 0) {
        size_t mid = jw_utf8_floor(full, lo + (hi - lo + 1) / 2);
        if (mid <= lo)
            break;
        rc = set_first_cell(pg, full, mid);
        if (rc == 0)
            rc = grid_render(pg, v, s, t);
        if (rc == 0 && page_measure_copies(&pg->b, s, t) == PAGE_FITS)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (rc == 0)
        rc = set_first_cell(pg, full, lo);
    if (rc == 0)
        rc = grid_render(pg, v, s, t);
    mcpage__free(full);
    return rc;
}

static grid_view grid_view_of(const mcpage_grid *pg, int64_t rows, int64_t cols, const char *why)
{
    const mcpage_region *r = &pg->win.region;
    grid_view v = {.rows = rows, .cols = cols, .why = why};
    if (rows == 0 || cols == 0) {
        v.rows = v.cols = 0;
        v.why = "end";
        return v;
    }
    v.has_right = r->col + cols < pg->ncols;
    v.has_down = r->row + rows < pg->nrows;
    if (why == NULL)
        v.why = v.has_right || v.has_down ? "limit" : "end";
    return v;
}

int mcpage_grid_finish(mcpage_grid *pg, mcpage_result *res)
{
    if (pg == NULL || res == NULL) {
        grid_free(pg);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected) {
        int rc = page_write_rejection(&pg->b, res);
        grid_free(pg);
        return rc;
    }
    const mcpage_region *r = &pg->win.region;
    if (!pg->bounds_set || (pg->n == 0 && r->rows > 0)) {
        grid_free(pg);
        return MCPAGE_ESTATE; /* no bounds, or cells that exist were not handed */
    }
    int64_t rows, cols;
    if (r->cols > 0 && pg->n < (size_t)r->cols) {
        rows = pg->n ? 1 : 0; /* one partial row */
        cols = (int64_t)pg->n;
    } else {
        rows = r->cols > 0 ? (int64_t)pg->n / r->cols : 0;
        cols = r->cols;
    }
    const char *why = pg->stopped_early ? pg->stopped_by : NULL;
    if (!pg->stopped_early && rows < r->rows && rows > 0)
        why = "limit"; /* the tool stopped handing cells early */
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int rc;
    for (;;) {
        grid_view v = grid_view_of(pg, rows, cols, why);
        rc = grid_render(pg, &v, &s, &t);
        if (rc)
            break;
        page_over o = page_measure_copies(&pg->b, &s, &t);
        if (o == PAGE_FITS)
            break;
        why = page_over_name(o);
        if (rows > 1) {
            rows--;
        } else if (cols > 1) {
            cols--;
        } else {
            v = grid_view_of(pg, rows, cols, why);
            rc = cut_cell(pg, &v, &s, &t);
            break;
        }
    }
    if (rc == 0)
        rc = page_write_result(&pg->b, res, &s, &t);
    jw_free(&s);
    tb_free(&t);
    grid_free(pg);
    return rc;
}
