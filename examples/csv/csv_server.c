/*
 * csv_server: an MCP server over one large CSV file (RFC 4180: a header
 * row, quoted fields with "" escapes and line breaks), written only
 * against the public mcpage API (plus jansson and libc).
 *
 *   list_rows   LIST: records {"row": n, <column>: value, ...}; keyset on
 *               the row number, so any depth costs the same.
 *   read_cells  SPATIAL: a rectangle of cells, labelled with the column
 *               names from the header; continue with next_regions.
 *
 * The file is read once at start and indexed by row. Usage:
 *   csv_server FILE.csv [--http PORT] [--key-file PATH]   (MCP over stdio,
 *   or Streamable HTTP on 127.0.0.1:PORT; --help lists the options)
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* POSIX 2008 with XSI: realpath, pread, strdup */
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage.h>

#define MAX_FILE    (512L << 20) /* the largest CSV file served */
#define MAX_COLUMNS 1024         /* columns beyond this are ignored */

typedef struct csv_ctx {
    char *text;            /* the whole file */
    size_t len;            /* its length in bytes */
    size_t *rows;          /* start offset of each data row */
    int64_t nrows;         /* data rows (the header excluded) */
    int ncols;             /* columns, from the header */
    char **names;          /* column names, then NULL */
    const char **fields;   /* "row" + names + NULL: list_rows' fields */
    mcpage_list_spec list; /* list_rows, with `fields` */
} csv_ctx;

/*
 * Parses the field at *pp (unquoting it) into a new JSON string (null if
 * not UTF-8), moves *pp past its separator and sets *eol at a row's end.
 */
static json_t *csv_field(const char **pp, const char *end, bool *eol)
{
    const char *p = *pp, *q;
    size_t n = 0;
    char *buf;
    if (p < end && *p == '"') {
        for (q = ++p; q < end && !(*q == '"' && (q + 1 == end || q[1] != '"'));)
            q += *q == '"' ? 2 : 1;
        if ((buf = malloc((size_t)(q - p) + 1)) == NULL)
            return NULL;
        for (const char *r = p; r < q; r++)
            buf[n++] = *r == '"' ? *r++ : *r; /* "" is one quote */
        p = q < end ? q + 1 : q;
    } else {
        for (q = p; q < end && *q != ',' && *q != '\n';)
            q++;
        n = (size_t)(q - p) - (q > p && q[-1] == '\r');
        if ((buf = malloc(n + 1)) == NULL)
            return NULL;
        memcpy(buf, p, n);
        p = q;
    }
    p += p < end && *p == '\r';
    *eol = p >= end || *p == '\n';
    *pp = p + (p < end);
    json_t *v = json_stringn(buf, n);
    free(buf);
    return v ? v : json_null();
}

/* The offset where the row starting at `p` ends (past its newline). */
static size_t csv_row_end(const csv_ctx *cx, size_t p)
{
    bool quoted = false;
    for (; p < cx->len; p++) {
        if (cx->text[p] == '"')
            quoted = !quoted;
        else if (cx->text[p] == '\n' && !quoted)
            return p + 1;
    }
    return p;
}

/* Parses columns [0, ncols) of data row `row` into `cells` (missing ones are null). */
static int csv_row(const csv_ctx *cx, int64_t row, json_t **cells, int ncols)
{
    const char *p = cx->text + cx->rows[row], *end = cx->text + csv_row_end(cx, cx->rows[row]);
    bool eol = false;
    for (int c = 0; c < ncols; c++) {
        cells[c] = eol ? json_null() : csv_field(&p, end, &eol);
        if (cells[c] == NULL)
            return MCPAGE_ENOMEM;
    }
    return 0;
}

/* The runtime began the page from `args`; the handler fills it, and the runtime finishes it. */
static int list_rows(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    csv_ctx *cx = mcpage_call_data(call);
    mcpage_list *pg = mcpage_call_list(call);
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    (void)args, (void)res;
    mcpage_list_set_total(pg, cx->nrows, MCPAGE_GENERATION_NONE); /* counted in memory */
    json_t *cells[MAX_COLUMNS];
    /* Keyset: the row after the cursor's, found without a scan. */
    int64_t row = w->resume ? w->after[0].i + 1 : w->offset;
    int rc = 0;
    for (; row < cx->nrows && rc == 0; row++) {
        if ((rc = csv_row(cx, row, cells, cx->ncols)) < 0)
            break;
        json_t *rec = json_pack("{s:I}", "row", (json_int_t)row);
        for (int c = 0; c < cx->ncols; c++)
            json_object_set_new(rec, cx->names[c], cells[c]);
        mcpage_keypart pos = {.i = row};
        rc = mcpage_list_add(pg, rec, &pos, 1);
    }
    return rc; /* 0 or MCPAGE_PAGE_FULL: the page is done; negative: it is dropped */
}

static const mcpage_grid_spec grid_spec = {
    .tool = "read_cells",
    .default_rows = 20,
    .max_rows = 200,
    .default_cols = 10,
    .max_cols = 50,
};

/* Column labels are the header's names; rows keep their 0-based numbers. */
static const char *column_name(void *ud, bool is_row, int64_t index)
{
    const csv_ctx *cx = ud;
    return is_row || index < 0 || index >= cx->ncols ? NULL : cx->names[index];
}

static int read_cells(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    csv_ctx *cx = mcpage_call_data(call);
    mcpage_grid *pg = mcpage_call_grid(call);
    (void)args, (void)res;
    mcpage_grid_set_bounds(pg, cx->nrows, cx->ncols);
    mcpage_grid_set_labels(pg, column_name, cx);
    const mcpage_region *r = &mcpage_grid_window_get(pg)->region;
    json_t *cells[MAX_COLUMNS];
    int rc = 0;
    for (int64_t row = r->row; row < r->row + r->rows && rc == 0; row++) {
        int upto = (int)(r->col + r->cols);
        if ((rc = csv_row(cx, row, cells, upto)) < 0)
            break;
        for (int c = 0; c < upto; c++) {
            if (c < r->col || rc != 0)
                json_decref(cells[c]);
            else
                rc = mcpage_grid_add(pg, cells[c]);
        }
    }
    return rc;
}

static const char *const row_only[] = {"row", NULL};

/* Reads and indexes the file. */
static int csv_open(csv_ctx *cx, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return MCPAGE_ENOTFOUND;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && size <= MAX_FILE && fseek(f, 0, SEEK_SET) == 0 &&
        (cx->text = malloc((size_t)size + 1)) != NULL)
        cx->len = fread(cx->text, 1, (size_t)size, f);
    fclose(f);
    if (cx->text == NULL)
        return size > MAX_FILE ? MCPAGE_ERANGE : MCPAGE_EIO;
    /* The header gives the columns; every later row start is indexed. */
    const char *p = cx->text, *end = cx->text + cx->len;
    bool eol = false;
    cx->names = calloc(MAX_COLUMNS + 1, sizeof *cx->names);
    cx->fields = calloc(MAX_COLUMNS + 2, sizeof *cx->fields);
    if (cx->names == NULL || cx->fields == NULL)
        return MCPAGE_ENOMEM;
    cx->fields[0] = "row";
    while (!eol && p < end && cx->ncols < MAX_COLUMNS) {
        json_t *v = csv_field(&p, end, &eol);
        const char *s = json_string_value(v);
        cx->names[cx->ncols] = strdup(s && *s && strcmp(s, "row") ? s : "column");
        cx->fields[cx->ncols + 1] = cx->names[cx->ncols];
        cx->ncols++;
        json_decref(v);
    }
    size_t at = csv_row_end(cx, 0), cap_rows = 0;
    for (; at < cx->len; at = csv_row_end(cx, at)) {
        if ((size_t)cx->nrows == cap_rows) {
            size_t *r = realloc(cx->rows, (cap_rows = cap_rows * 2 + 1024) * sizeof *r);
            if (r == NULL)
                return MCPAGE_ENOMEM;
            cx->rows = r;
        }
        cx->rows[cx->nrows++] = at;
    }
    cx->list = (mcpage_list_spec){.tool = "list_rows",
                                  .unit = "rows",
                                  .default_limit = 50,
                                  .max_limit = 1000,
                                  .fields = cx->fields,
                                  .id_fields = row_only};
    return 0;
}

static void csv_close(void *ud)
{
    csv_ctx *cx = ud;
    for (int c = 0; cx->names && c < cx->ncols; c++)
        free(cx->names[c]);
    free(cx->names);
    free(cx->fields);
    free(cx->rows);
    free(cx->text);
}

static int csv_add_tools(mcpage_server *srv, csv_ctx *cx)
{
    mcpage_tool t = {.read_only = MCPAGE_HINT_TRUE, .user_data = cx};
    t.name = "list_rows";
    t.description = "Lists the CSV file's rows as records keyed by column name, with \"row\" "
                    "the 0-based row number (header excluded). Follow next_cursor to walk them.";
    t.handler = list_rows;
    int rc = mcpage_server_add_list_tool(srv, &t, &cx->list);
    t.name = "read_cells";
    t.description = "Reads a rectangle of cells: rows are 0-based data rows, columns are "
                    "labelled with the header's names. Continue with next_regions.";
    t.handler = read_cells;
    if (rc == 0)
        rc = mcpage_server_add_grid_tool(srv, &t, &grid_spec);
    return rc;
}

static int csv_setup(mcpage_server *srv, int argc, char **argv, void *ud)
{
    (void)argc; /* exactly one: min_args = 1 */
    int rc = csv_open(ud, argv[0]);
    if (rc != 0)
        fprintf(stderr, "csv_server: %s: %s\n", argv[0], mcpage_strerror(rc));
    return rc == 0 ? csv_add_tools(srv, ud) : rc;
}

#ifndef CSV_SERVER_NO_MAIN
int main(int argc, char **argv)
{
    static csv_ctx cx;
    mcpage_program prog = {.name = "csv-server",
                           .version = MCPAGE_VERSION_STRING,
                           .args_usage = "FILE.csv",
                           .min_args = 1,
                           .setup = csv_setup,
                           .cleanup = csv_close,
                           .user_data = &cx};
    return mcpage_main(&prog, argc, argv);
}
#endif
