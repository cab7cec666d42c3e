/*
 * TEMPORARY stand-in for the cursor codec of branch `contract`, so the
 * runtime links and its tests run before that lands. It is deleted when
 * main brings src/page/cursor.c. Unsigned: never ship it.
 */
#include <mcpage/cursor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page/alloc.h"

struct mcpage_keyring {
    int unused; /* no keys in the stand-in */
};

int mcpage_keyring_new(mcpage_keyring **out)
{
    *out = mcpage__calloc(1, sizeof **out);
    return *out ? 0 : MCPAGE_ENOMEM;
}

void mcpage_keyring_free(mcpage_keyring *kr)
{
    mcpage__free(kr);
}

int mcpage_keyring_add(mcpage_keyring *kr, uint8_t kid, const uint8_t *key, size_t len,
                       bool current)
{
    return 0;
}

int mcpage_keyring_load(mcpage_keyring *kr, const char *env_var, const char *path)
{
    return 0;
}

void mcpage_keyring_set_ttl(mcpage_keyring *kr, int64_t seconds) {}

void mcpage_args_fingerprint(const json_t *args, const char *const *skip,
                             uint8_t out[MCPAGE_FINGERPRINT_LEN])
{
    memset(out, 7, MCPAGE_FINGERPRINT_LEN);
}

/* Format: "s." tool "." nparts "." then per part "i<int>." or "s<hex>." */
int mcpage_cursor_encode(const mcpage_keyring *kr, const char *tool,
                         const uint8_t fp[MCPAGE_FINGERPRINT_LEN], const mcpage_cursor *c,
                         char *out, size_t outcap)
{
    size_t n = 0;
    int w = snprintf(out, outcap, "s.%s.%d.", tool, c->nparts);
    if (w < 0 || (size_t)w >= outcap)
        return MCPAGE_ERANGE;
    n = (size_t)w;
    for (int i = 0; i < c->nparts; i++) {
        if (c->parts[i].is_str) {
            if (n + 2 + c->parts[i].len * 2 >= outcap)
                return MCPAGE_ERANGE;
            out[n++] = 's';
            for (size_t k = 0; k < c->parts[i].len; k++) {
                (void)snprintf(out + n, 3, "%02x", (unsigned char)c->parts[i].s[k]);
                n += 2;
            }
            out[n++] = '.';
        } else {
            w = snprintf(out + n, outcap - n, "i%lld.", (long long)c->parts[i].i);
            if (w < 0 || (size_t)w >= outcap - n)
                return MCPAGE_ERANGE;
            n += (size_t)w;
        }
    }
    out[n] = '\0';
    return (int)n;
}

mcpage_cursor_status mcpage_cursor_decode(const mcpage_keyring *kr, const char *tool,
                                          const uint8_t fp[MCPAGE_FINGERPRINT_LEN],
                                          const char *text, size_t len, mcpage_cursor *out)
{
    char buf[MCPAGE_CURSOR_MAX_LEN + 1];
    if (len > MCPAGE_CURSOR_MAX_LEN || len < 4 || memchr(text, 0, len))
        return MCPAGE_CURSOR_MALFORMED;
    memcpy(buf, text, len);
    buf[len] = '\0';
    size_t tl = strlen(tool);
    if (strncmp(buf, "s.", 2) != 0)
        return MCPAGE_CURSOR_MALFORMED;
    if (strncmp(buf + 2, tool, tl) != 0 || buf[2 + tl] != '.')
        return MCPAGE_CURSOR_OTHER_TOOL;
    char *p = buf + 3 + tl;
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    char *end;
    long np = strtol(p, &end, 10);
    if (end == p || *end != '.' || np < 0 || np > MCPAGE_CURSOR_MAX_PARTS)
        return MCPAGE_CURSOR_MALFORMED;
    c.nparts = (int)np;
    p = end + 1;
    size_t used = 0;
    for (int i = 0; i < c.nparts; i++) {
        if (*p == 'i') {
            long long v = strtoll(p + 1, &end, 10);
            if (end == p + 1 || *end != '.')
                return MCPAGE_CURSOR_MALFORMED;
            c.parts[i].i = v;
            p = end + 1;
        } else if (*p == 's') {
            p++;
            char *dot = strchr(p, '.');
            if (dot == NULL || (dot - p) % 2 || (size_t)(dot - p) / 2 > MCPAGE_CURSOR_MAX_STR_BYTES)
                return MCPAGE_CURSOR_MALFORMED;
            size_t sl = (size_t)(dot - p) / 2;
            c.parts[i].is_str = true;
            c.parts[i].s = c.storage_ + used;
            for (size_t k = 0; k < sl; k++) {
                unsigned v;
                if (sscanf(p + 2 * k, "%2x", &v) != 1)
                    return MCPAGE_CURSOR_MALFORMED;
                c.storage_[used + k] = (char)v;
            }
            c.parts[i].len = sl;
            used += sl;
            p = dot + 1;
        } else {
            return MCPAGE_CURSOR_MALFORMED;
        }
    }
    if (*p != '\0')
        return MCPAGE_CURSOR_MALFORMED;
    *out = c;
    for (int i = 0; i < out->nparts; i++)
        if (out->parts[i].is_str)
            out->parts[i].s = out->storage_ + (c.parts[i].s - c.storage_);
    return MCPAGE_CURSOR_VALID;
}

const char *mcpage_cursor_status_text(mcpage_cursor_status s)
{
    return s == MCPAGE_CURSOR_OTHER_TOOL ? "the cursor was issued for another list"
                                         : "the cursor is malformed; drop it to start over";
}

const char *mcpage_cursor_status_name(mcpage_cursor_status s)
{
    return s == MCPAGE_CURSOR_OTHER_TOOL ? "other_tool" : "malformed";
}
