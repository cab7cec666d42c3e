/*
 * The JSON Schema subset (see schema.h). The validator walks the schema
 * and the instance together and stops at the first error, which it
 * describes in terms a model can act on: the parameter path, what was
 * expected, and what was received.
 */
#include "mcp/schema.h"

#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest parameter path kept in messages; longer paths are cut. */
#define PATH_MAX_LEN 256

typedef struct vctx {
    char *why;     /* where the first error goes */
    size_t whylen; /* its size */
    bool fill;     /* apply defaults and integer coercion */
} vctx;

static bool fail(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(vctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(c->why, c->whylen, fmt, ap);
    va_end(ap);
    return false;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

static bool is_integral(const json_t *v)
{
    if (json_is_integer(v))
        return true;
    if (!json_is_real(v))
        return false;
    double d = json_real_value(v);
    /* Within +-2^53 every integral double converts exactly (and without libm); beyond it
       every finite double is a whole number (1e300 is an integer, a huge one). */
    if (d > -9007199254740992.0 && d < 9007199254740992.0)
        return d == (double)(int64_t)d;
    return d - d == 0.0; /* finite */
}

/* An integral real as an integer, saturated at the int64 range (2^63 itself is past it). */
static json_int_t saturated(double d)
{
    if (d >= 9223372036854775808.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (json_int_t)d;
}

static bool type_matches(const char *t, const json_t *v)
{
    if (strcmp(t, "object") == 0)
        return json_is_object(v);
    if (strcmp(t, "array") == 0)
        return json_is_array(v);
    if (strcmp(t, "string") == 0)
        return json_is_string(v);
    if (strcmp(t, "integer") == 0)
        return is_integral(v);
    if (strcmp(t, "number") == 0)
        return json_is_number(v);
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(t, "null") == 0)
        return json_is_null(v);
    return false;
}

/*
 * Text from json_dumps() comes from jansson's allocator (which a program
 * may have replaced with json_set_alloc_funcs), not from ours or libc's:
 * give it back to jansson.
 */
static void json_text_free(char *s)
{
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree);
    if (s && jfree)
        jfree(s);
}

/* Short rendering of a value for messages: at most ~60 bytes. */
static void show(const json_t *v, char *out, size_t cap)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (s == NULL) {
        (void)snprintf(out, cap, "%s", type_name(v));
        return;
    }
    if (strlen(s) > 60)
        (void)snprintf(out, cap, "%.57s...", s);
    else
        (void)snprintf(out, cap, "%s", s);
    json_text_free(s);
}

static const char *label(const char *path)
{
    return path[0] ? path : "arguments";
}

static bool check_type(vctx *c, const json_t *schema, const json_t *v, const char *path)
{
    const json_t *t = json_object_get(schema, "type");
    if (t == NULL)
        return true;
    char want[128] = "";
    if (json_is_string(t)) {
        if (type_matches(json_string_value(t), v))
            return true;
        (void)snprintf(want, sizeof want, "%s", json_string_value(t));
    } else if (json_is_array(t)) {
        size_t i;
        const json_t *e;
        size_t used = 0;
        json_array_foreach(t, i, e)
        {
            if (!json_is_string(e))
                continue;
            if (type_matches(json_string_value(e), v))
                return true;
            int n = snprintf(want + used, sizeof want - used, "%s%s", i ? " or " : "",
                             json_string_value(e));
            if (n > 0 && (size_t)n < sizeof want - used)
                used += (size_t)n;
        }
    } else {
        return true;
    }
    char got[80];
    show(v, got, sizeof got);
    return fail(c, "parameter '%s' must be of type %s, got %s (%s)", label(path), want,
                type_name(v), got);
}

static size_t utf8_length(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            count++;
    return count;
}

static void join_path(char *out, const char *base, const char *key)
{
    /* "base.key" (or "key"), cut as snprintf cuts it, without its cost:
       this runs for every argument of every call. */
    const char *parts[3] = {base, base[0] ? "." : "", key};
    size_t o = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(parts[i]);
        if (n > PATH_MAX_LEN - 1 - o)
            n = PATH_MAX_LEN - 1 - o;
        memcpy(out + o, parts[i], n);
        o += n;
    }
    out[o] = '\0';
}

static bool validate(vctx *c, const json_t *schema, json_t *v, const char *path);

/* Replaces 3.0 by 3 where an integer is expected, so handlers read integers. */
static void coerce_integer(const json_t *schema, json_t *parent, const char *key, size_t index,
                           json_t *v)
{
    const json_t *t = json_object_get(schema, "type");
    if (!json_is_real(v) || !json_is_string(t) || strcmp(json_string_value(t), "integer") != 0)
        return;
    if (!is_integral(v))
        return;
    /* Out of range values saturate, so a window parameter clamps them like any large value
       (clamp, don't reject) and a handler never sees a real where it asked for an integer. */
    json_t *i = json_integer(saturated(json_real_value(v)));
    if (i == NULL)
        return;
    if (key)
        json_object_set_new(parent, key, i);
    else
        json_array_set_new(parent, index, i);
}

static bool validate_object(vctx *c, const json_t *schema, json_t *obj, const char *path)
{
    const json_t *props = json_object_get(schema, "properties");
    const char *key;
    json_t *sub;
    char p[PATH_MAX_LEN];
    if (c->fill && json_is_object(props)) {
        json_object_foreach((json_t *)props, key, sub)
        {
            const json_t *def = json_object_get(sub, "default");
            if (def && json_object_get(obj, key) == NULL)
                json_object_set_new(obj, key, json_deep_copy(def));
        }
    }
    const json_t *req = json_object_get(schema, "required");
    if (json_is_array(req)) {
        size_t i;
        const json_t *name;
        json_array_foreach(req, i, name)
        {
            if (json_is_string(name) && json_object_get(obj, json_string_value(name)) == NULL) {
                join_path(p, path, json_string_value(name));
                return fail(c, "missing required parameter '%s'", p);
            }
        }
    }
    const json_t *addl = json_object_get(schema, "additionalProperties");
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, sub)
    {
        const json_t *ps = json_is_object(props) ? json_object_get(props, key) : NULL;
        join_path(p, path, key);
        if (ps == NULL) {
            if (json_is_false(addl)) {
                char names[160] = "";
                size_t used = 0;
                const char *k;
                json_t *unused;
                if (json_is_object(props)) {
                    json_object_foreach((json_t *)props, k, unused)
                    {
                        int n = snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? ", " : "", k);
                        if (n < 0 || (size_t)n >= sizeof names - used)
                            break;
                        used += (size_t)n;
                    }
                }
                return fail(c, "unknown parameter '%s'; accepted parameters: %s", p,
                            used ? names : "none");
            }
            if (json_is_object(addl) && !validate(c, addl, sub, p))
                return false;
            continue;
        }
        if (!validate(c, ps, sub, p))
            return false;
        if (c->fill)
            coerce_integer(ps, obj, key, 0, sub);
    }
    return true;
}

static bool validate_array(vctx *c, const json_t *schema, json_t *arr, const char *path)
{
    size_t n = json_array_size(arr);
    const json_t *mn = json_object_get(schema, "minItems");
    const json_t *mx = json_object_get(schema, "maxItems");
    if (json_is_integer(mn) && (json_int_t)n < json_integer_value(mn))
        return fail(c, "parameter '%s' must have at least %lld items, got %zu", label(path),
                    (long long)json_integer_value(mn), n);
    if (json_is_integer(mx) && (json_int_t)n > json_integer_value(mx))
        return fail(c, "parameter '%s' must have at most %lld items, got %zu", label(path),
                    (long long)json_integer_value(mx), n);
    const json_t *items = json_object_get(schema, "items");
    if (!json_is_object(items))
        return true;
    char p[PATH_MAX_LEN];
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        (void)snprintf(p, sizeof p, "%s[%zu]", label(path), i);
        if (!validate(c, items, e, p))
            return false;
        if (c->fill)
            coerce_integer(items, arr, NULL, i, e);
    }
    return true;
}

static bool validate_number(vctx *c, const json_t *schema, const json_t *v, const char *path)
{
    double d = json_number_value(v);
    const json_t *b;
    if ((b = json_object_get(schema, "minimum")) && json_is_number(b) && d < json_number_value(b))
        return fail(c, "parameter '%s' must be >= %g, got %g", label(path), json_number_value(b),
                    d);
    if ((b = json_object_get(schema, "maximum")) && json_is_number(b) && d > json_number_value(b))
        return fail(c, "parameter '%s' must be <= %g, got %g", label(path), json_number_value(b),
                    d);
    if ((b = json_object_get(schema, "exclusiveMinimum")) && json_is_number(b) &&
        d <= json_number_value(b))
        return fail(c, "parameter '%s' must be > %g, got %g", label(path), json_number_value(b), d);
    if ((b = json_object_get(schema, "exclusiveMaximum")) && json_is_number(b) &&
        d >= json_number_value(b))
        return fail(c, "parameter '%s' must be < %g, got %g", label(path), json_number_value(b), d);
    return true;
}

static bool validate_string(vctx *c, const json_t *schema, const json_t *v, const char *path)
{
    size_t n = utf8_length(json_string_value(v), json_string_length(v));
    const json_t *mn = json_object_get(schema, "minLength");
    const json_t *mx = json_object_get(schema, "maxLength");
    if (json_is_integer(mn) && (json_int_t)n < json_integer_value(mn))
        return fail(c, "parameter '%s' must be at least %lld characters long, got %zu", label(path),
                    (long long)json_integer_value(mn), n);
    if (json_is_integer(mx) && (json_int_t)n > json_integer_value(mx))
        return fail(c, "parameter '%s' must be at most %lld characters long, got %zu", label(path),
                    (long long)json_integer_value(mx), n);
    return true;
}

static bool validate_enum(vctx *c, const json_t *schema, const json_t *v, const char *path)
{
    const json_t *en = json_object_get(schema, "enum");
    const json_t *cn = json_object_get(schema, "const");
    char got[80];
    if (cn && !json_equal(cn, v)) {
        char want[80];
        show(cn, want, sizeof want);
        show(v, got, sizeof got);
        return fail(c, "parameter '%s' must be %s, got %s", label(path), want, got);
    }
    if (!json_is_array(en))
        return true;
    size_t i;
    const json_t *e;
    json_array_foreach(en, i, e)
    {
        if (json_equal(e, v))
            return true;
    }
    char *all = json_dumps(en, JSON_COMPACT);
    show(v, got, sizeof got);
    fail(c, "parameter '%s' must be one of %.200s, got %s", label(path), all ? all : "the enum",
         got);
    json_text_free(all);
    return false;
}

static bool validate(vctx *c, const json_t *schema, json_t *v, const char *path)
{
    if (json_is_true(schema))
        return true;
    if (json_is_false(schema))
        return fail(c, "parameter '%s' is not allowed", label(path));
    if (!json_is_object(schema))
        return true;
    if (!check_type(c, schema, v, path) || !validate_enum(c, schema, v, path))
        return false;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return validate_object(c, schema, v, path);
    case JSON_ARRAY:
        return validate_array(c, schema, v, path);
    case JSON_STRING:
        return validate_string(c, schema, v, path);
    case JSON_INTEGER:
    case JSON_REAL:
        return validate_number(c, schema, v, path);
    default:
        return true;
    }
}

bool schema_validate(const json_t *schema, json_t *instance, bool fill, char *why, size_t whylen)
{
    vctx c = {why, whylen, fill};
    return validate(&c, schema, instance, "");
}

/* Keywords whose value must be a number, an integer, an array, an object. */
static const char *const number_kw[] = {"minimum", "maximum", "exclusiveMinimum",
                                        "exclusiveMaximum", NULL};
static const char *const integer_kw[] = {"minLength", "maxLength", "minItems", "maxItems", NULL};

static bool check_sub(const json_t *s, const char *path, char *why, size_t whylen, int depth)
{
    if (depth > 32) {
        (void)snprintf(why, whylen, "schema nested deeper than 32 levels at %s", path);
        return false;
    }
    if (json_is_boolean(s))
        return true;
    if (!json_is_object(s)) {
        (void)snprintf(why, whylen, "schema at %s must be an object", path);
        return false;
    }
    const json_t *t = json_object_get(s, "type");
    if (t && !json_is_string(t) && !json_is_array(t)) {
        (void)snprintf(why, whylen, "\"type\" at %s must be a string or an array", path);
        return false;
    }
    for (int i = 0; number_kw[i]; i++) {
        const json_t *k = json_object_get(s, number_kw[i]);
        if (k && !json_is_number(k)) {
            (void)snprintf(why, whylen, "\"%s\" at %s must be a number", number_kw[i], path);
            return false;
        }
    }
    for (int i = 0; integer_kw[i]; i++) {
        const json_t *k = json_object_get(s, integer_kw[i]);
        if (k && !json_is_integer(k)) {
            (void)snprintf(why, whylen, "\"%s\" at %s must be an integer", integer_kw[i], path);
            return false;
        }
    }
    const json_t *req = json_object_get(s, "required");
    if (req && !json_is_array(req)) {
        (void)snprintf(why, whylen, "\"required\" at %s must be an array of names", path);
        return false;
    }
    const json_t *en = json_object_get(s, "enum");
    if (en && !json_is_array(en)) {
        (void)snprintf(why, whylen, "\"enum\" at %s must be an array", path);
        return false;
    }
    const json_t *props = json_object_get(s, "properties");
    if (props && !json_is_object(props)) {
        (void)snprintf(why, whylen, "\"properties\" at %s must be an object", path);
        return false;
    }
    char p[PATH_MAX_LEN];
    const char *key;
    const json_t *sub;
    json_object_foreach((json_t *)props, key, sub)
    {
        (void)snprintf(p, sizeof p, "%s.properties.%s", path, key);
        if (!check_sub(sub, p, why, whylen, depth + 1))
            return false;
    }
    const json_t *items = json_object_get(s, "items");
    if (items) {
        (void)snprintf(p, sizeof p, "%s.items", path);
        if (!check_sub(items, p, why, whylen, depth + 1))
            return false;
    }
    return true;
}

bool schema_check(const json_t *schema, char *why, size_t whylen)
{
    if (!json_is_object(schema)) {
        (void)snprintf(why, whylen, "the schema must be a JSON object");
        return false;
    }
    const json_t *t = json_object_get(schema, "type");
    if (!json_is_string(t) || strcmp(json_string_value(t), "object") != 0) {
        (void)snprintf(why, whylen, "the schema must have \"type\": \"object\"");
        return false;
    }
    return check_sub(schema, "$", why, whylen, 0);
}
