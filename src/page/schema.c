/*
 * The inputSchema fragments of the window parameters, written from the
 * same specs and pager settings the builders enforce, so a tool's schema
 * and its behaviour cannot drift apart. Maxima go in descriptions, never
 * in "maximum": the contract clamps what a schema maximum would reject.
 */
#include <stdio.h>
#include <string.h>

#include "page/page_internal.h"

/* {"type":"integer","minimum":min,"default":def,"description":desc} */
static json_t *int_prop(int64_t min, int64_t def, const char *desc)
{
    return json_pack("{s:s, s:I, s:I, s:s}", "type", "integer", "minimum", (json_int_t)min,
                     "default", (json_int_t)def, "description", desc);
}

static int add_max_tokens(json_t *props, const mcpage_pager *p)
{
    char d[256], a[32], b[32];
    snprintf(d, sizeof d,
             "Token budget of this page (each copy of the result fits it), at most %s: larger "
             "values are lowered to %s.",
             page_fmt_int(p->cfg.max_tokens, a), page_fmt_int(p->cfg.max_tokens, b));
    return json_object_set_new(props, "max_tokens",
                               int_prop(p->cfg.min_tokens, p->cfg.default_tokens, d));
}

/* Returns props, or NULL (and frees it) when any member failed. */
static json_t *checked(json_t *props, int failures)
{
    if (failures) {
        json_decref(props);
        return NULL;
    }
    return props;
}

json_t *mcpage_list_schema(const mcpage_pager *p, const mcpage_list_spec *spec)
{
    if (p == NULL || spec == NULL || spec->tool == NULL || spec->unit == NULL)
        return NULL;
    json_t *props = json_object();
    if (props == NULL)
        return NULL;
    char d[512], a[32];
    int bad = 0;
    snprintf(d, sizeof d, "%s per page, at most %s: larger values are lowered to %s.", spec->unit,
             page_fmt_int(spec->max_limit, a), a);
    if (d[0] >= 'a' && d[0] <= 'z')
        d[0] = (char)(d[0] - 'a' + 'A');
    bad |= json_object_set_new(props, "limit", int_prop(1, spec->default_limit, d));
    bad |= json_object_set_new(
        props, "offset",
        int_prop(0, 0,
                 "Position of the first record, 0-based. Costs a scan of the skipped records; "
                 "follow next_cursor instead when paging on."));
    bad |= json_object_set_new(
        props, "cursor",
        json_pack("{s:s, s:s}", "type", "string", "description",
                  "next_cursor of the previous page, passed with the same other arguments. "
                  "Wins over offset."));
    bad |= add_max_tokens(props, p);
    if (spec->fields) {
        json_t *names = json_array();
        for (const char *const *f = spec->fields; *f; f++)
            bad |= json_array_append_new(names, json_string(*f));
        size_t o = (size_t)snprintf(d, sizeof d, "Fields to return; by default ");
        const char *const *def = spec->default_fields ? spec->default_fields : spec->fields;
        for (const char *const *f = def; *f && o < sizeof d; f++)
            o += (size_t)snprintf(d + o, sizeof d - o, "%s%s", f == def ? "" : ", ", *f);
        if (spec->id_fields && o < sizeof d) {
            o += (size_t)snprintf(d + o, sizeof d - o, ". Always included: ");
            for (const char *const *f = spec->id_fields; *f && o < sizeof d; f++)
                o += (size_t)snprintf(d + o, sizeof d - o, "%s%s", f == spec->id_fields ? "" : ", ",
                                      *f);
        }
        if (o < sizeof d)
            snprintf(d + o, sizeof d - o, ".");
        bad |= json_object_set_new(props, "fields",
                                   json_pack("{s:s, s:{s:s, s:o}, s:s}", "type", "array", "items",
                                             "type", "string", "enum", names, "description", d));
    }
    return checked(props, bad);
}

json_t *mcpage_lines_schema(const mcpage_pager *p, const mcpage_lines_spec *spec)
{
    if (p == NULL || spec == NULL || spec->tool == NULL)
        return NULL;
    json_t *props = json_object();
    if (props == NULL)
        return NULL;
    char d[256], a[32];
    int bad = 0;
    bad |= json_object_set_new(props, "start_line",
                               int_prop(1, 1, "First line of the page, 1-based."));
    bad |=
        json_object_set_new(props, "start_column",
                            int_prop(1, 1,
                                     "Character of start_line where the page begins, 1-based (from "
                                     "next_start_column, when a long line was split)."));
    snprintf(d, sizeof d, "Lines per page, at most %s: larger values are lowered to %s.",
             page_fmt_int(spec->max_max_lines, a), a);
    bad |= json_object_set_new(props, "max_lines", int_prop(1, spec->default_max_lines, d));
    bad |= add_max_tokens(props, p);
    return checked(props, bad);
}

json_t *mcpage_bytes_schema(const mcpage_pager *p, const mcpage_bytes_spec *spec)
{
    if (p == NULL || spec == NULL || spec->tool == NULL)
        return NULL;
    json_t *props = json_object();
    if (props == NULL)
        return NULL;
    char d[256], a[32];
    int bad = 0;
    bad |= json_object_set_new(props, "offset", int_prop(0, 0, "First byte of the page, 0-based."));
    snprintf(d, sizeof d, "Bytes per page, at most %s: larger values are lowered to %s.",
             page_fmt_int(spec->max_max_bytes, a), a);
    bad |= json_object_set_new(props, "max_bytes", int_prop(1, spec->default_max_bytes, d));
    bad |= add_max_tokens(props, p);
    return checked(props, bad);
}

json_t *mcpage_grid_schema(const mcpage_pager *p, const mcpage_grid_spec *spec)
{
    if (p == NULL || spec == NULL || spec->tool == NULL)
        return NULL;
    json_t *props = json_object();
    if (props == NULL)
        return NULL;
    char dr[160], dc[160], d[256], a[32];
    int bad = 0;
    snprintf(dr, sizeof dr, "Rows, at most %s: larger values are lowered.",
             page_fmt_int(spec->max_rows, a));
    snprintf(dc, sizeof dc, "Columns, at most %s: larger values are lowered.",
             page_fmt_int(spec->max_cols, a));
    snprintf(d, sizeof d,
             "The rectangle to read: top-left row and col (0-based) and its size. Defaults: "
             "row 0, col 0, %lld rows, %lld cols.",
             (long long)spec->default_rows, (long long)spec->default_cols);
    json_t *region = json_pack(
        "{s:s, s:{s:o, s:o, s:o, s:o}, s:b, s:s}", "type", "object", "properties", "row",
        int_prop(0, 0, "First row, 0-based."), "col", int_prop(0, 0, "First column, 0-based."),
        "rows", int_prop(1, spec->default_rows, dr), "cols", int_prop(1, spec->default_cols, dc),
        "additionalProperties", 0, "description", d);
    bad |= json_object_set_new(props, "region", region);
    bad |= add_max_tokens(props, p);
    return checked(props, bad);
}
