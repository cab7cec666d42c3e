/*
 * The activity map as a picture: one activity_map page (SPATIAL family:
 * a region of the projects x time-buckets grid) drawn as inline SVG,
 * darker cells for more messages, a <title> on every cell for its count,
 * and the page's next_regions as "Earlier" (the tool's columns are newest
 * first: to the right is back in time) and "More below" links. Columns
 * are drawn oldest at the left, so the latest period is at the right.
 * Presentation attributes only (no style attribute, which the page's
 * Content-Security-Policy would refuse).
 */
#include <string.h>

#include "ui/ui_internal.h"

/* The region one picture asks for (the tool's maximum is 100 x 60). */
#define MAP_ROWS 20
#define MAP_COLS 30
/* Geometry, in SVG units. */
#define MAP_CELL    16
#define MAP_LABEL_W 150
#define MAP_TOP     78
#define MAP_RIGHT   40 /* room for the last column's slanted label */
/* Characters of a project name drawn as a row label. */
#define MAP_LABEL_CHARS 22

/* s cut to at most `max` characters (UTF-8), "…" when cut, into buf. */
static void label_cut(const char *s, size_t max, char *buf, size_t cap)
{
    size_t i = 0, chars = 0;
    while (s[i] && chars < max && i + 4 < cap - 4) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars++;
    }
    memcpy(buf, s, i);
    strcpy(buf + i, s[i] ? "\xE2\x80\xA6" : "");
}

static void map_link(ui_doc *d, const char *bucket, const json_t *region, const char *text,
                     const char *rel)
{
    ui_raw(d, "<a href=\"/map?bucket=");
    ui_url(d, bucket);
    ui_rawf(d, "&amp;row=%lld&amp;col=%lld&amp;rows=%lld&amp;cols=%lld\" rel=\"%s\">",
            ui_int(region, "row", 0), ui_int(region, "col", 0), ui_int(region, "rows", MAP_ROWS),
            ui_int(region, "cols", MAP_COLS), rel);
    ui_raw(d, text);
    ui_raw(d, "</a>");
}

static long long max_cell(const json_t *cells)
{
    long long max = 0;
    size_t r, c;
    const json_t *row, *v;
    json_array_foreach(cells, r, row) json_array_foreach(row, c, v)
    {
        if (json_integer_value(v) > max)
            max = json_integer_value(v);
    }
    return max;
}

static void map_svg(ui_doc *d, const json_t *sc)
{
    const json_t *cells = json_object_get(sc, "cells");
    const json_t *rows = json_object_get(sc, "row_labels"),
                 *cols = json_object_get(sc, "col_labels");
    size_t nr = json_array_size(cells), nc = json_array_size(cols);
    long long max = max_cell(cells);
    ui_rawf(
        d,
        "<svg class=\"map\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\" "
        "viewBox=\"0 0 %zu %zu\" role=\"img\" aria-label=\"Messages per project and period\">\n",
        (size_t)MAP_LABEL_W + nc * MAP_CELL + MAP_RIGHT, (size_t)MAP_TOP + nr * MAP_CELL + 8,
        (size_t)MAP_LABEL_W + nc * MAP_CELL + MAP_RIGHT, (size_t)MAP_TOP + nr * MAP_CELL + 8);
    /* the tool's columns are newest first; drawn oldest at the left, so
       time runs left to right and the latest period is the last column */
    for (size_t c = 0; c < nc; c++) {
        ui_rawf(d, "<text transform=\"translate(%zu,%d) rotate(-60)\">",
                (size_t)MAP_LABEL_W + (nc - 1 - c) * MAP_CELL + 11, MAP_TOP - 4);
        ui_text(d, json_string_value(json_array_get(cols, c)));
        ui_raw(d, "</text>\n");
    }
    for (size_t r = 0; r < nr; r++) {
        const char *name = json_string_value(json_array_get(rows, r));
        char label[128];
        label_cut(name ? name : "-", MAP_LABEL_CHARS, label, sizeof label);
        ui_raw(d, "<a href=\"/sessions?project=");
        ui_url(d, name);
        ui_rawf(d, "\"><text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", MAP_LABEL_W - 6,
                (size_t)MAP_TOP + r * MAP_CELL + 12);
        ui_text(d, label);
        ui_raw(d, "</text></a>\n");
        const json_t *row = json_array_get(cells, r);
        for (size_t c = 0; c < nc; c++) {
            long long v = json_integer_value(json_array_get(row, c));
            double shade = v > 0 && max > 0 ? 0.2 + 0.8 * (double)v / (double)max : 0.12;
            ui_rawf(d,
                    "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"%s\" "
                    "fill-opacity=\"%.2f\"><title>",
                    (size_t)MAP_LABEL_W + (nc - 1 - c) * MAP_CELL, (size_t)MAP_TOP + r * MAP_CELL,
                    MAP_CELL - 2, MAP_CELL - 2, v > 0 ? "#1a73e8" : "#888888", shade);
            ui_text(d, name);
            ui_raw(d, ", ");
            ui_text(d, json_string_value(json_array_get(cols, c)));
            ui_rawf(d, ": %lld messages</title></rect>\n", v);
        }
    }
    ui_raw(d, "</svg>\n");
}

void ui_page_map(ui_doc *d)
{
    static const char *const buckets[] = {"day", "week", "month"};
    const char *bucket = ui_arg(d, "bucket");
    if (bucket == NULL)
        bucket = "week";
    ui_begin(d, "Activity", NULL);
    /* the region asked for; the tool clamps it to its maximum and says so */
    long long rows = ui_arg_int(d, "rows", 0), cols = ui_arg_int(d, "cols", 0);
    json_t *args = json_pack("{s:s, s:{s:I, s:I, s:I, s:I}, s:i}", "bucket", bucket, "region",
                             "row", ui_arg_int(d, "row", 0), "col", ui_arg_int(d, "col", 0), "rows",
                             rows > 0 ? rows : MAP_ROWS, "cols", cols > 0 ? cols : MAP_COLS,
                             "max_tokens", 20000);
    json_t *res;
    const json_t *sc = ui_tool(d, "activity_map", args, &res);
    if (sc) {
        const json_t *reg = json_object_get(sc, "region"), *bounds = json_object_get(sc, "bounds");
        ui_raw(d, "<h1>Activity</h1>\n<p class=\"meta\">Messages per project and ");
        for (size_t i = 0; i < 3; i++) {
            ui_raw(d, i ? " \xC2\xB7 " : "");
            if (strcmp(bucket, buckets[i]) == 0)
                ui_rawf(d, "<b>%s</b>", buckets[i]);
            else
                ui_rawf(d, "<a href=\"/map?bucket=%s\">%s</a>", buckets[i], buckets[i]);
        }
        const json_t *labels = json_object_get(sc, "col_labels");
        size_t nc = json_array_size(labels);
        ui_rawf(d, ". Rows %lld\xE2\x80\x93%lld of %lld projects", ui_int(reg, "row", 0) + 1,
                ui_int(reg, "row", 0) + (long long)json_array_size(json_object_get(sc, "cells")),
                ui_int(bounds, "rows", 0));
        if (nc > 0) {
            ui_raw(d, "; periods from ");
            ui_text(d, json_string_value(json_array_get(labels, nc - 1)));
            ui_raw(d, " to ");
            ui_text(d, json_string_value(json_array_get(labels, 0)));
        }
        ui_rawf(d, " (columns %lld\xE2\x80\x93%lld of %lld, newest first).</p>\n",
                ui_int(reg, "col", 0) + 1, ui_int(reg, "col", 0) + (long long)nc,
                ui_int(bounds, "cols", 0));
        map_svg(d, sc);
        const json_t *next = json_object_get(sc, "next_regions");
        ui_raw(d, "<nav class=\"pager\">");
        if (json_object_get(next, "right"))
            map_link(d, bucket, json_object_get(next, "right"), "Earlier", "prev");
        if (ui_int(reg, "row", 0) > 0 || ui_int(reg, "col", 0) > 0)
            map_link(d, bucket, NULL, "Back to the latest", "first");
        if (json_object_get(next, "down"))
            map_link(d, bucket, json_object_get(next, "down"), "More below", "next");
        ui_raw(d, "</nav>\n");
    }
    json_decref(res);
}
