/*
 * The one growable buffer (dbuf.h).
 */
#include "page/dbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "page/alloc.h"

/* The limit of a buffer initialised with max 0. */
#define DBUF_NO_LIMIT (SIZE_MAX / 2)

void dbuf_init(dbuf *d, size_t max)
{
    memset(d, 0, sizeof *d);
    d->max = max && max < DBUF_NO_LIMIT ? max : DBUF_NO_LIMIT;
}

void dbuf_free(dbuf *d)
{
    mcpage__free(d->buf);
    dbuf_init(d, d->max);
}

void dbuf_reset(dbuf *d)
{
    d->len = 0;
    d->err = 0;
    if (d->buf)
        d->buf[0] = '\0';
}

int dbuf_grow(void **items, size_t *cap, size_t need, size_t size, size_t first, size_t max)
{
    if (need <= *cap)
        return 0;
    if (need > max || size == 0 || need > SIZE_MAX / 2 / size)
        return MCPAGE_ERANGE;
    size_t ncap = *cap ? *cap : (first ? first : 1);
    while (ncap < need)
        ncap *= 2;
    if (ncap > max)
        ncap = max;
    void *p = mcpage__realloc(*items, ncap * size);
    if (p == NULL)
        return MCPAGE_ENOMEM;
    *items = p;
    *cap = ncap;
    return 0;
}

bool dbuf_reserve(dbuf *d, size_t extra)
{
    if (d->err)
        return false;
    if (extra < d->cap - d->len && extra <= d->max - d->len)
        return true; /* room already there (most calls) */
    if (extra > d->max - d->len) {
        d->err = MCPAGE_ERANGE;
        return false;
    }
    void *p = d->buf;
    int rc = dbuf_grow(&p, &d->cap, d->len + extra + 1, 1, DBUF_FIRST_CAP, d->max + 1);
    if (rc != 0) {
        d->err = rc;
        return false;
    }
    d->buf = p;
    return true;
}

void dbuf_put(dbuf *d, const void *bytes, size_t n)
{
    if (!dbuf_reserve(d, n))
        return;
    if (n)
        memcpy(d->buf + d->len, bytes, n);
    d->len += n;
    d->buf[d->len] = '\0';
}

void dbuf_puts(dbuf *d, const char *s)
{
    dbuf_put(d, s, strlen(s));
}

void dbuf_putc(dbuf *d, char c)
{
    dbuf_put(d, &c, 1);
}

void dbuf_printf(dbuf *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dbuf_vprintf(d, fmt, ap);
    va_end(ap);
}

void dbuf_vprintf(dbuf *d, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        if (d->err == 0)
            d->err = MCPAGE_EINVAL;
    } else if ((size_t)n < sizeof small) {
        dbuf_put(d, small, (size_t)n);
    } else if (dbuf_reserve(d, (size_t)n)) {
        (void)vsnprintf(d->buf + d->len, (size_t)n + 1, fmt, again);
        d->len += (size_t)n;
    }
    va_end(again);
}

char *dbuf_take(dbuf *d, size_t *len)
{
    if (len)
        *len = 0;
    if (d->buf == NULL)
        dbuf_put(d, "", 0); /* an empty string, not NULL */
    if (d->err) {
        dbuf_free(d);
        return NULL;
    }
    char *out = d->buf;
    if (len)
        *len = d->len;
    d->buf = NULL;
    dbuf_init(d, d->max);
    return out;
}
