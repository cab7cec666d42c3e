/*
 * The usage page of the browser view: tokens and cost from the
 * usage_report tool (docs/usage.md): daily cost as bars (inline SVG,
 * presentation attributes only, as the page's CSP wants), then cost per
 * model and per project, and what cache reads saved against input rates.
 * And the one-line usage of a session page (ui_usage_session_line).
 */
#include <math.h>
#include <string.h>

#include "ui/ui_internal.h"

#define BAR_W      14
#define BAR_GAP    3
#define CHART_H    160
#define CHART_TOP  18
#define CHART_LEFT 64

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* One usage_report page's records as objects, or NULL (an error page was written). */
static json_t *report(ui_doc *d, const char *group, const char *project, json_t **res,
                      const json_t **sc)
{
    json_t *args = json_pack("{s:s, s:i}", "group_by", group, "limit", 200);
    if (project)
        json_object_set_new(args, "project", json_string(project));
    *sc = ui_tool(d, "usage_report", args, res);
    return *sc ? ui_records(*sc, "rows") : NULL;
}

static void money(ui_doc *d, double usd)
{
    ui_rawf(d, usd >= 100 ? "$%.0f" : usd >= 1 ? "$%.2f" : "$%.4f", usd);
}

static void bars(ui_doc *d, const json_t *rows)
{
    size_t n = json_array_size(rows);
    double max = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (num(r, "cost_usd") > max)
            max = num(r, "cost_usd");
    }
    if (n == 0) {
        ui_raw(d, "<p class=\"mute\">No model calls in the archive yet (run mcpage sync).</p>\n");
        return;
    }
    size_t w = CHART_LEFT + n * (BAR_W + BAR_GAP) + 8, h = CHART_TOP + CHART_H + 70;
    ui_rawf(d,
            "<svg class=\"usage\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" "
            "height=\"%zu\" viewBox=\"0 0 %zu %zu\" role=\"img\" aria-label=\"Cost per day\">\n",
            w, h, w, h);
    ui_rawf(d, "<line x1=\"%d\" y1=\"%d\" x2=\"%zu\" y2=\"%d\" stroke=\"#999\"/>\n", CHART_LEFT,
            CHART_TOP + CHART_H, w - 4, CHART_TOP + CHART_H);
    ui_rawf(d, "<text x=\"4\" y=\"%d\" font-size=\"11\">", CHART_TOP + 4);
    money(d, max);
    ui_raw(d, "</text>\n");
    json_array_foreach(rows, i, r)
    {
        double cost = num(r, "cost_usd");
        int bh = max > 0 ? (int)lround(cost / max * CHART_H) : 0;
        size_t x = CHART_LEFT + i * (BAR_W + BAR_GAP);
        ui_rawf(d, "<rect x=\"%zu\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#3b6ea8\"><title>",
                x, CHART_TOP + CHART_H - bh, BAR_W, bh);
        ui_text(d, ui_str(r, "key", ""));
        ui_raw(d, " ");
        ui_text(d, ui_str(r, "agent", ""));
        ui_raw(d, ": ");
        money(d, cost);
        ui_rawf(d, ", %.0f tokens</title></rect>\n", num(r, "total_tokens"));
        ui_rawf(d,
                "<text transform=\"translate(%zu,%d) rotate(-60)\" font-size=\"10\" "
                "text-anchor=\"end\">",
                x + BAR_W - 2, CHART_TOP + CHART_H + 6);
        ui_text(d, ui_str(r, "key", ""));
        ui_raw(d, "</text>\n");
    }
    ui_raw(d, "</svg>\n");
}

static void table(ui_doc *d, const char *what, const json_t *rows)
{
    ui_raw(d, "<table><tr><th>");
    ui_text(d, what);
    ui_raw(d, "</th><th class=\"num\">input</th><th class=\"num\">output</th>"
              "<th class=\"num opt\">cache write</th><th class=\"num opt\">cache read</th>"
              "<th class=\"num\">cost</th></tr>\n");
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
    {
        ui_raw(d, "<tr><td dir=\"auto\">");
        const char *key = ui_str(r, "key", "");
        ui_text(d, *key ? key : "(none)");
        if (num(r, "unpriced_tokens") > 0)
            ui_raw(d, " <span class=\"mute\">unpriced</span>");
        ui_rawf(d,
                "</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>"
                "<td class=\"num opt\">%.0f</td><td class=\"num opt\">%.0f</td><td class=\"num\">",
                num(r, "input_tokens"), num(r, "output_tokens"), num(r, "cache_creation_tokens"),
                num(r, "cache_read_tokens"));
        money(d, num(r, "cost_usd"));
        ui_raw(d, "</td></tr>\n");
    }
    ui_raw(d, "</table>\n");
}

void ui_page_usage(ui_doc *d)
{
    const char *project = ui_arg(d, "project");
    ui_begin(d, "Usage", NULL);
    json_t *res = NULL;
    const json_t *sc = NULL;
    json_t *days = report(d, "day", project, &res, &sc);
    if (!days) {
        json_decref(res);
        return;
    }
    /* held: the result it is part of goes before the unpriced models are written */
    json_t *tot = json_incref(json_object_get(sc, "totals"));
    ui_raw(d, "<h1>Tokens and cost");
    if (project) {
        ui_raw(d, ": ");
        ui_text(d, project);
    }
    ui_raw(d, "</h1>\n<p class=\"meta\">");
    money(d, num(tot, "cost_usd"));
    ui_rawf(d, " \xC2\xB7 %.0f tokens (%.0f input, %.0f output, %.0f cache write, %.0f cache read)",
            num(tot, "total_tokens"), num(tot, "input_tokens"), num(tot, "output_tokens"),
            num(tot, "cache_creation_tokens"), num(tot, "cache_read_tokens"));
    if (num(tot, "cache_savings_usd") > 0) {
        ui_raw(d, " \xC2\xB7 cache reads saved ");
        money(d, num(tot, "cache_savings_usd"));
    }
    if (num(tot, "cost_given_usd") > 0) {
        ui_raw(d, " \xC2\xB7 ");
        money(d, num(tot, "cost_given_usd"));
        ui_raw(d, " as the agents reported it");
    }
    ui_raw(d, "</p>\n<h2>Cost per day</h2>\n");
    bars(d, days);
    json_decref(days);
    json_decref(res);
    static const struct {
        const char *group, *title;
    } parts[] = {{"model", "Model"}, {"project", "Project"}};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        if (project && strcmp(parts[k].group, "project") == 0)
            continue;
        json_t *rows = report(d, parts[k].group, project, &res, &sc);
        if (!rows) {
            json_decref(res);
            json_decref(tot);
            return;
        }
        ui_rawf(d, "<h2>Per %s</h2>\n", parts[k].group);
        table(d, parts[k].title, rows);
        json_decref(rows);
        json_decref(res);
    }
    const json_t *un = json_object_get(tot, "unpriced_models");
    if (json_array_size(un) > 0) {
        ui_raw(d, "<p class=\"mute\">Without a price (tokens counted, no cost): ");
        size_t i;
        const json_t *m;
        json_array_foreach(un, i, m)
        {
            if (i)
                ui_raw(d, ", ");
            ui_text(d, json_string_value(m));
        }
        ui_raw(d, ". Add them with mcpage usage --prices FILE.</p>\n");
    }
    json_decref(tot);
}

void ui_usage_session_line(ui_doc *d, const json_t *summary)
{
    const json_t *u = json_object_get(summary, "usage");
    if (!json_is_object(u) || num(u, "calls") <= 0)
        return;
    ui_rawf(d, " \xC2\xB7 %.0f tokens \xC2\xB7 ", num(u, "total_tokens"));
    money(d, num(u, "cost_usd"));
}
