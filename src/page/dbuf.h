/*
 * dbuf: the one growable buffer. Bytes appended with a stated limit and
 * a sticky error: after the first failure (out of memory, or the limit)
 * every append is a no-op and `err` holds the status, so a writer checks
 * once at the end. The bytes stay NUL-terminated while err == 0.
 * Memory comes from mcpage__realloc (mcpage_set_allocator reaches it);
 * bytes handed over by dbuf_take are freed with mcpage__free.
 *
 * dbuf_grow is the same growth for an array of elements (a registry, a
 * page's records, a result's blocks): capacity doubles from a first size
 * up to what is needed, never past a stated maximum.
 */
#ifndef MCPAGE_PAGE_DBUF_H
#define MCPAGE_PAGE_DBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Bytes allocated by the first growth of an empty buffer. */
#define DBUF_FIRST_CAP 256

typedef struct dbuf {
    char *buf;  /* the bytes, NUL-terminated while err == 0; NULL until the first append */
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated */
    size_t max; /* limit on len; past it err is MCPAGE_ERANGE */
    int err;    /* first error (MCPAGE_ENOMEM or MCPAGE_ERANGE), or 0 */
} dbuf;

/* Starts an empty buffer of at most `max` bytes (0: SIZE_MAX / 2). */
void dbuf_init(dbuf *d, size_t max);
/* Frees the bytes; the buffer may be initialised again. */
void dbuf_free(dbuf *d);
/* Forgets the bytes and any error, keeping the memory and the limit. */
void dbuf_reset(dbuf *d);
/*
 * Makes room for `extra` more bytes (and the NUL): true, or false with
 * err set (also when err was already set).
 */
bool dbuf_reserve(dbuf *d, size_t extra);
void dbuf_put(dbuf *d, const void *bytes, size_t n);
void dbuf_puts(dbuf *d, const char *s);
void dbuf_putc(dbuf *d, char c);
void dbuf_printf(dbuf *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dbuf_vprintf(dbuf *d, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/*
 * Hands the bytes to the caller (free with mcpage__free; an empty buffer
 * gives an empty string, NULL only when out of memory) with their length
 * in *len (may be NULL); the buffer is emptied and keeps its limit.
 * NULL when err is set (the buffer is then emptied too).
 */
char *dbuf_take(dbuf *d, size_t *len);

/*
 * Grows the array *items (of *cap elements of `size` bytes) to hold at
 * least `need` elements: the capacity doubles from `first` (when it was
 * 0). 0, MCPAGE_ERANGE when `need` is past `max` elements (or the bytes
 * overflow), or MCPAGE_ENOMEM; on failure the array is untouched. New
 * elements are not initialised.
 */
int dbuf_grow(void **items, size_t *cap, size_t need, size_t size, size_t first, size_t max);

#endif
