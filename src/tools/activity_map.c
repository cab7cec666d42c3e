/*
 * activity_map (SPATIAL, unit cells): messages per project (rows, most
 * active first) and per day, week or month (columns, newest first, so a
 * first page shows the latest activity: every bucket from the last
 * active one back to the first, empty ones included), walked
 * by region. Row and column labels (project names, bucket dates) ride in
 * the page through the grid builder's labels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/tools.h"

/* Rows the store may return (project x bucket pairs); more is an error naming the fix. */
#define ACTIVITY_MAX_ROWS 100000
/* Columns of one grid (ten years of days). */
#define ACTIVITY_MAX_COLS 4000

static const mcpage_grid_spec spec = {
    .tool = "activity_map",
    .default_rows = 10,
    .max_rows = 100,
    .default_cols = 12,
    .max_cols = 60,
    .narrow_hint = "Narrow with project=..., source=..., after=YYYY-MM-DD, before=YYYY-MM-DD or "
                   "a coarser bucket.",
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"bucket\":{\"type\":\"string\",\"enum\":[\"day\",\"week\",\"month\"],\"default\":\"week\","
    "\"description\":\"Column width: day, week (starting Monday; default) or month.\"},"
    "\"project\":{\"type\":\"string\",\"description\":\"Only this project (name or path).\"},"
    "\"source\":{\"type\":\"string\"," TOOLS_SOURCE_ENUM ",\"description\":\"Only this "
    "agent's sessions.\"},"
    "\"after\":{\"type\":\"string\",\"description\":\"Only messages at or after this UTC date "
    "(YYYY-MM-DD).\"},"
    "\"before\":{\"type\":\"string\",\"description\":\"Only messages before this UTC date "
    "(YYYY-MM-DD).\"}}}";

/* One project's row. */
typedef struct act_row {
    const char *name; /* project name (borrowed from the store rows) */
    int64_t id;       /* project id */
    int64_t total;    /* messages in range */
} act_row;

/* The grid: labels and counts. */
typedef struct act_grid {
    act_row *rows;    /* projects, most active first */
    size_t nrows;     /* projects */
    char (*cols)[11]; /* bucket start dates */
    size_t ncols;     /* buckets */
    int64_t *cells;   /* nrows x ncols counts */
} act_grid;

static const char *label(void *ud, bool is_row, int64_t index)
{
    const act_grid *g = ud;
    if (index < 0)
        return NULL;
    if (is_row)
        return (size_t)index < g->nrows ? g->rows[index].name : NULL;
    return (size_t)index < g->ncols ? g->cols[index] : NULL;
}

static int by_activity(const void *a, const void *b)
{
    const act_row *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

static time_t parse_day(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (sscanf(s, "%4d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3)
        return (time_t)-1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return timegm(&tm);
}

static void next_bucket(struct tm *tm, store_bucket b)
{
    if (b == STORE_BUCKET_MONTH)
        tm->tm_mon += 1;
    else
        tm->tm_mday += b == STORE_BUCKET_WEEK ? 7 : 1;
    time_t t = timegm(tm);
    gmtime_r(&t, tm);
}

/* Builds the grid from the store's (project, bucket, messages) rows. */
static int build(const store_activity *a, store_bucket bucket, act_grid *g)
{
    memset(g, 0, sizeof *g);
    if (a->count == 0)
        return 0;
    g->rows = calloc(a->count, sizeof *g->rows);
    if (!g->rows)
        return MCPAGE_ENOMEM;
    for (size_t i = 0; i < a->count; i++) {
        size_t k = 0;
        while (k < g->nrows && g->rows[k].id != a->rows[i].project_id)
            k++;
        if (k == g->nrows) {
            g->rows[k].id = a->rows[i].project_id;
            g->rows[k].name = a->rows[i].project;
            g->nrows++;
        }
        g->rows[k].total += a->rows[i].messages;
    }
    qsort(g->rows, g->nrows, sizeof *g->rows, by_activity);
    /* Rows arrive by bucket, so the first and last give the range. */
    time_t t0 = parse_day(a->rows[0].bucket), t1 = parse_day(a->rows[a->count - 1].bucket);
    if (t0 == (time_t)-1 || t1 == (time_t)-1 || t1 < t0)
        return MCPAGE_EPARSE;
    struct tm tm;
    gmtime_r(&t0, &tm);
    for (time_t t = t0; t <= t1; t = timegm(&tm)) {
        if (g->ncols == ACTIVITY_MAX_COLS)
            return MCPAGE_ERANGE;
        char(*nc)[11] = realloc(g->cols, (g->ncols + 1) * sizeof *g->cols);
        if (!nc)
            return MCPAGE_ENOMEM;
        g->cols = nc;
        strftime(g->cols[g->ncols++], 11, "%Y-%m-%d", &tm);
        next_bucket(&tm, bucket);
    }
    /* newest first: the first page shows the latest active periods */
    for (size_t i = 0, j = g->ncols - 1; i < j; i++, j--) {
        char tmp[11];
        memcpy(tmp, g->cols[i], sizeof tmp);
        memcpy(g->cols[i], g->cols[j], sizeof tmp);
        memcpy(g->cols[j], tmp, sizeof tmp);
    }
    g->cells = calloc(g->nrows * g->ncols, sizeof *g->cells);
    if (!g->cells)
        return MCPAGE_ENOMEM;
    for (size_t i = 0; i < a->count; i++) {
        size_t r = 0, c = 0;
        while (r < g->nrows && g->rows[r].id != a->rows[i].project_id)
            r++;
        while (c < g->ncols && strncmp(g->cols[c], a->rows[i].bucket, 10) != 0)
            c++;
        if (r < g->nrows && c < g->ncols)
            g->cells[r * g->ncols + c] += a->rows[i].messages;
    }
    return 0;
}

static void grid_free_all(act_grid *g)
{
    free(g->rows);
    free(g->cols);
    free(g->cells);
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    if (!tools_check_date(spec.tool, args, "after", res) ||
        !tools_check_date(spec.tool, args, "before", res))
        return 0;
    store_activity_filter f = {.project = tools_arg_str(args, "project"),
                               .source = tools_arg_str(args, "source"),
                               .after = tools_arg_str(args, "after"),
                               .before = tools_arg_str(args, "before")};
    const char *b = tools_arg_str(args, "bucket");
    f.bucket = b && strcmp(b, "day") == 0     ? STORE_BUCKET_DAY
               : b && strcmp(b, "month") == 0 ? STORE_BUCKET_MONTH
                                              : STORE_BUCKET_WEEK;
    mcpage_grid *pg;
    int rc = mcpage_grid_begin(mcpage_call_pager(call), &spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == MCPAGE_PAGE_REJECTED)
        return mcpage_grid_finish(pg, res);
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL) {
        mcpage_grid_abort(pg);
        return 0;
    }
    store_activity a = {0};
    act_grid g;
    memset(&g, 0, sizeof g);
    rc = store_activity_get(s, &f, ACTIVITY_MAX_ROWS, &a);
    if (rc == 0)
        rc = build(&a, f.bucket, &g);
    if (rc == MCPAGE_ERANGE) {
        mcpage_grid_abort(pg);
        mcpage_reject_argument(res, spec.tool, "bucket", json_object_get(args, "bucket"),
                               "a coarser bucket or a shorter range: this range has too many "
                               "(project, bucket) pairs to map at once",
                               "bucket=\"month\" or after=\"2025-01-01\"");
        goto done;
    }
    if (rc < 0) {
        mcpage_grid_abort(pg);
        tools_store_error(res, s, rc, "activity");
        goto done;
    }
    mcpage_grid_set_bounds(pg, (int64_t)g.nrows, (int64_t)g.ncols);
    mcpage_grid_set_labels(pg, label, &g);
    const mcpage_grid_window *w = mcpage_grid_window_get(pg);
    rc = 0;
    for (int64_t r = 0; r < w->region.rows && rc == 0; r++)
        for (int64_t c = 0; c < w->region.cols && rc == 0; c++)
            rc = mcpage_grid_add(
                pg,
                json_integer(
                    g.cells[(size_t)(w->region.row + r) * g.ncols + (size_t)(w->region.col + c)]));
    if (rc < 0) {
        mcpage_grid_abort(pg);
        goto done;
    }
    rc = mcpage_grid_finish(pg, res);
done:
    tools_store_put(ctx, s);
    grid_free_all(&g);
    store_activity_free(&a);
    return rc < 0 ? rc : 0;
}

/*
 * Registered with tools_add_windowed(), not mcpage_server_add_grid_tool(): its
 * row and column labels live in the grid it builds per call, which must
 * outlive the page's finish. The window's schema still comes from the
 * spec.
 */
int tools_activity_map_register(mcpage_server *srv, tools_ctx *ctx)
{
    const mcpage_pager *p = mcpage_server_pager(srv);
    char dr[PAGE_FMT_INT_CAP], dc[PAGE_FMT_INT_CAP], mr[PAGE_FMT_INT_CAP], mc[PAGE_FMT_INT_CAP];
    char budget[128], desc[1200];
    (void)snprintf(
        desc, sizeof desc,
        "Maps archived activity as a grid: rows are projects (most messages first), columns "
        "are days, weeks (default) or months (bucket=day|week|month), newest first: from the "
        "last active one back to the first, each cell the number of messages (so the first "
        "page shows the latest activity, and next_regions.right goes back in time). row_labels "
        "(project names) and "
        "col_labels (bucket start dates) come with the page. Navigate by region {row, col, "
        "rows, cols} (0-based; default %s rows x %s columns, maximum %s x %s) within %s, "
        "following next_regions.right or .down. Filters: project, source, after, before.",
        page_fmt_int(spec.default_rows, dr), page_fmt_int(spec.default_cols, dc),
        page_fmt_int(spec.max_rows, mr), page_fmt_int(spec.max_cols, mc),
        tools_budget_words(p, budget, sizeof budget));
    mcpage_tool t = {
        .name = "activity_map",
        .title = "Activity map",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_GRID_OUTPUT,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
        .meta = TOOLS_APP_TOOL_META,
    };
    return tools_add_windowed(srv, &t, mcpage_grid_schema(p, &spec));
}
