/*
 * The inputSchema fragments of the window parameters, written from the
 * same specs and pager settings the builders enforce, so a tool's schema
 * and its behaviour cannot drift apart. Maxima go in descriptions, never
 * in "maximum": the contract clamps what a schema maximum would reject.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/page_internal.h"

/* ------------------------------------------------ what this process generated */

typedef struct generated {
    int family; /* PAGE_GEN_* */
    void *spec; /* a copy of the spec (the library allocator) */
    char *
        props; /* the generated properties, compact JSON with sorted keys (the library allocator) */
} generated;

static pthread_mutex_t gen_mu = PTHREAD_MUTEX_INITIALIZER;
static generated gen[PAGE_GENERATED_MAX];
static size_t ngen;

/* A copy of a string, or of a NULL-terminated array of strings; false when out of memory. */
static bool dup_str(const char **s)
{
    if (*s == NULL)
        return true;
    char *d = mcpage__strdup(*s);
    *s = d;
    return d != NULL;
}

static bool dup_strv(const char *const **v)
{
    if (*v == NULL)
        return true;
    size_t n = 0;
    while ((*v)[n])
        n++;
    const char **d = mcpage__calloc(n + 1, sizeof *d);
    if (d == NULL) {
        *v = NULL;
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        d[i] = (*v)[i];
        ok = dup_str(&d[i]) && ok;
    }
    *v = d;
    return ok;
}

/* A copy of the spec the registry owns (never freed: tools borrow it), or NULL. */
static void *spec_copy(int family, const void *spec)
{
    size_t size = family == PAGE_GEN_LIST    ? sizeof(mcpage_list_spec)
                  : family == PAGE_GEN_LINES ? sizeof(mcpage_lines_spec)
                  : family == PAGE_GEN_BYTES ? sizeof(mcpage_bytes_spec)
                                             : sizeof(mcpage_grid_spec);
    void *c = mcpage__malloc(size);
    if (c == NULL)
        return NULL;
    memcpy(c, spec, size);
    bool ok = true;
    if (family == PAGE_GEN_LIST) {
        mcpage_list_spec *l = c;
        ok = dup_str(&l->tool) && dup_str(&l->unit) && dup_str(&l->narrow_hint) &&
             dup_str(&l->stable_order_hint) && dup_strv(&l->fields) &&
             dup_strv(&l->default_fields) && dup_strv(&l->id_fields) &&
             dup_strv(&l->fingerprint_skip);
        l->read_with = NULL; /* only a page's records need it; a rejection has none */
        l->ud = NULL;
    } else if (family == PAGE_GEN_LINES) {
        mcpage_lines_spec *l = c;
        ok = dup_str(&l->tool) && dup_str(&l->narrow_hint);
    } else if (family == PAGE_GEN_BYTES) {
        mcpage_bytes_spec *b = c;
        ok = dup_str(&b->tool) && dup_str(&b->narrow_hint);
    } else {
        mcpage_grid_spec *g = c;
        ok = dup_str(&g->tool) && dup_str(&g->narrow_hint);
    }
    /* A partial copy stays allocated (reachable from nowhere else): rare, and small. */
    return ok ? c : NULL;
}

static const char *spec_tool(int family, const void *spec)
{
    return family == PAGE_GEN_LIST    ? ((const mcpage_list_spec *)spec)->tool
           : family == PAGE_GEN_LINES ? ((const mcpage_lines_spec *)spec)->tool
           : family == PAGE_GEN_BYTES ? ((const mcpage_bytes_spec *)spec)->tool
                                      : ((const mcpage_grid_spec *)spec)->tool;
}

/* Remembers what was generated for spec; failures only mean the runtime will not recognise it. */
static json_t *remember(int family, const void *spec, json_t *props)
{
    char *text = props ? json_dumps(props, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text == NULL)
        return props;
    (void)pthread_mutex_lock(&gen_mu);
    bool known = false;
    for (size_t i = 0; i < ngen && !known; i++)
        known = gen[i].family == family && strcmp(gen[i].props, text) == 0 &&
                strcmp(spec_tool(family, gen[i].spec), spec_tool(family, spec)) == 0;
    if (!known && ngen < PAGE_GENERATED_MAX) {
        char *copy = mcpage__strdup(text);
        void *sc = copy ? spec_copy(family, spec) : NULL;
        if (sc) {
            gen[ngen++] = (generated){family, sc, copy};
        } else {
            mcpage__free(copy);
        }
    }
    (void)pthread_mutex_unlock(&gen_mu);
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree);
    if (jfree)
        jfree(text);
    return props;
}

int page_generated_find(const json_t *props, const char *tool, const void **spec)
{
    int found = PAGE_GEN_NONE;
    if (!json_is_object(props) || tool == NULL)
        return found;
    (void)pthread_mutex_lock(&gen_mu);
    for (size_t i = ngen; i-- > 0 && found == PAGE_GEN_NONE;) {
        if (strcmp(spec_tool(gen[i].family, gen[i].spec), tool) != 0)
            continue;
        json_t *want = json_loads(gen[i].props, 0, NULL);
        bool all = json_object_size(want) > 0;
        const char *k;
        json_t *v;
        json_object_foreach(want, k, v) all = all && json_equal(v, json_object_get(props, k));
        json_decref(want);
        if (all) {
            found = gen[i].family;
            *spec = gen[i].spec;
        }
    }
    (void)pthread_mutex_unlock(&gen_mu);
    return found;
}

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

static json_t *list_props(const mcpage_pager *p, const mcpage_list_spec *spec)
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

static json_t *lines_props(const mcpage_pager *p, const mcpage_lines_spec *spec)
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

static json_t *bytes_props(const mcpage_pager *p, const mcpage_bytes_spec *spec)
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

static json_t *grid_props(const mcpage_pager *p, const mcpage_grid_spec *spec)
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

json_t *mcpage_list_schema(const mcpage_pager *p, const mcpage_list_spec *spec)
{
    return remember(PAGE_GEN_LIST, spec, list_props(p, spec));
}

json_t *mcpage_lines_schema(const mcpage_pager *p, const mcpage_lines_spec *spec)
{
    return remember(PAGE_GEN_LINES, spec, lines_props(p, spec));
}

json_t *mcpage_bytes_schema(const mcpage_pager *p, const mcpage_bytes_spec *spec)
{
    return remember(PAGE_GEN_BYTES, spec, bytes_props(p, spec));
}

json_t *mcpage_grid_schema(const mcpage_pager *p, const mcpage_grid_spec *spec)
{
    return remember(PAGE_GEN_GRID, spec, grid_props(p, spec));
}
