/*
 * RFC 6570 level 1 URI templates: "{var}" expands to the percent-encoded
 * value (unreserved characters kept). Matching is the inverse: literal
 * text must match exactly and each variable takes one or more
 * characters up to the next literal, never a '/'.
 */
#include <mcpage/server.h>

#include <stdio.h>
#include <string.h>

#include "page/alloc.h"

/* Longest variable name and value handled. */
#define VAR_NAME_MAX  64
#define VAR_VALUE_MAX 4096

static bool unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into out (at least n + 1 bytes); false on a bad escape or NUL. */
static bool pct_decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            if (i + 2 >= n)
                return false;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return false;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return true;
}

int mcpage_uri_template_match(const char *tmpl, const char *uri, json_t **vars)
{
    *vars = NULL;
    if (tmpl == NULL || uri == NULL)
        return MCPAGE_EINVAL;
    json_t *obj = json_object();
    if (obj == NULL)
        return MCPAGE_ENOMEM;
    const char *t = tmpl, *u = uri;
    char name[VAR_NAME_MAX + 1];
    char value[VAR_VALUE_MAX + 1];
    while (*t) {
        if (*t != '{') {
            if (*u != *t)
                goto nomatch;
            t++;
            u++;
            continue;
        }
        const char *close = strchr(t, '}');
        size_t nlen = close ? (size_t)(close - t - 1) : 0;
        if (close == NULL || nlen == 0 || nlen > VAR_NAME_MAX)
            goto nomatch;
        memcpy(name, t + 1, nlen);
        name[nlen] = '\0';
        t = close + 1;
        /* The value runs to the next literal character of the template (or the end). */
        char stop = *t == '{' ? '\0' : *t;
        size_t vlen = 0;
        while (u[vlen] && u[vlen] != '/' && (stop == '\0' || u[vlen] != stop))
            vlen++;
        if (stop == '\0' && *t == '\0' && u[vlen] != '\0')
            goto nomatch; /* a '/' remains after the last variable */
        if (vlen == 0 || vlen > VAR_VALUE_MAX || !pct_decode(u, vlen, value))
            goto nomatch;
        json_object_set_new(obj, name, json_string(value));
        u += vlen;
    }
    if (*u != '\0')
        goto nomatch;
    *vars = obj;
    return 0;
nomatch:
    json_decref(obj);
    return MCPAGE_ENOTFOUND;
}

char *mcpage_uri_template_expand(const char *tmpl, const json_t *vars)
{
    if (tmpl == NULL)
        return NULL;
    size_t cap = strlen(tmpl) + 64, len = 0;
    char *out = mcpage__malloc(cap);
    if (out == NULL)
        return NULL;
    for (const char *t = tmpl; *t;) {
        const char *piece = t;
        size_t plen = 1;
        char enc[VAR_VALUE_MAX * 3 + 1];
        if (*t == '{') {
            const char *close = strchr(t, '}');
            if (close == NULL)
                goto fail;
            char name[VAR_NAME_MAX + 1];
            size_t nlen = (size_t)(close - t - 1);
            if (nlen == 0 || nlen > VAR_NAME_MAX)
                goto fail;
            memcpy(name, t + 1, nlen);
            name[nlen] = '\0';
            const char *v = json_string_value(json_object_get(vars, name));
            size_t e = 0;
            for (size_t i = 0; v && v[i]; i++) {
                if (i >= VAR_VALUE_MAX)
                    goto fail;
                unsigned char c = (unsigned char)v[i];
                if (unreserved(c)) {
                    enc[e++] = (char)c;
                } else {
                    (void)snprintf(enc + e, 4, "%%%02X", c);
                    e += 3;
                }
            }
            piece = enc;
            plen = e;
            t = close + 1;
        } else {
            t++;
        }
        if (len + plen + 1 > cap) {
            cap = (len + plen + 1) * 2;
            char *n = mcpage__realloc(out, cap);
            if (n == NULL)
                goto fail;
            out = n;
        }
        memcpy(out + len, piece, plen);
        len += plen;
    }
    out[len] = '\0';
    return out;
fail:
    mcpage__free(out);
    return NULL;
}
