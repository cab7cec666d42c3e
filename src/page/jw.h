/*
 * jw: a streaming JSON writer. It escapes strings, repairs invalid UTF-8
 * (each bad byte becomes U+FFFD), places commas, and counts the bytes,
 * code points and UTF-16 units of what it wrote in the same pass, so the
 * page builder can measure exactly the bytes that will be sent.
 * U+2028 and U+2029 are written as \u2028 and \u2029, so the output is
 * also safe to embed in JavaScript source.
 *
 * Errors are sticky: after the first failure (out of memory, the byte
 * limit, nesting deeper than JW_MAX_DEPTH, a value where a key is due)
 * every call is a no-op and jw.err holds the status.
 */
#ifndef MCPAGE_PAGE_JW_H
#define MCPAGE_PAGE_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JW_MAX_DEPTH 64

typedef struct jw {
    char *buf;                   /* output, NUL-terminated while err == 0 */
    size_t len;                  /* bytes written */
    size_t cap;                  /* bytes allocated */
    size_t max;                  /* hard limit on len; exceeding it sets MCPAGE_ERANGE */
    size_t codepoints;           /* Unicode code points written */
    size_t utf16;                /* UTF-16 code units written (what JavaScript hosts count) */
    size_t repaired;             /* invalid UTF-8 bytes replaced by U+FFFD */
    int err;                     /* first error, or 0 */
    int depth;                   /* open containers */
    bool after_key;              /* a key was written; its value is due */
    uint8_t kind[JW_MAX_DEPTH];  /* per level: 'o' object or 'a' array */
    bool nonempty[JW_MAX_DEPTH]; /* per level: a member was written */
} jw;

/* Where a writer stands (jw_mark), to take back what follows (jw_rewind). */
typedef struct jw_mark {
    size_t len;        /* bytes written */
    size_t codepoints; /* code points written */
    size_t utf16;      /* UTF-16 units written */
    size_t repaired;   /* bytes replaced */
    int depth;         /* open containers */
    bool after_key;    /* a key was written; its value is due */
    bool nonempty;     /* the open container had a member */
} jw_mark;

/* Starts an empty writer limited to `max` bytes (0 = SIZE_MAX / 2). */
void jw_init(jw *w, size_t max);
/* Where w stands now. */
jw_mark jw_mark_get(const jw *w);
/* Takes back what was written since m, in the same container, with no
   error since (else it does nothing). */
void jw_rewind(jw *w, const jw_mark *m);
/* Frees the buffer; the writer may be initialised again. */
void jw_free(jw *w);
/* Forgets what was written (and any error), keeping the buffer. */
void jw_reset(jw *w);
/* Hands the buffer to the caller (free with mcpage__free); the writer is emptied. */
char *jw_take(jw *w, size_t *len);
/* Makes room for `extra` more bytes at once; 0, or the writer's error. */
int jw_reserve(jw *w, size_t extra);

void jw_object_begin(jw *w);
void jw_object_end(jw *w);
/* Reopens the object that was just closed (the last byte written is its '}') to add members. */
void jw_object_reopen(jw *w);
void jw_array_begin(jw *w);
void jw_array_end(jw *w);
void jw_key(jw *w, const char *key);
void jw_keyn(jw *w, const char *key, size_t n);
void jw_string(jw *w, const char *s);
void jw_stringn(jw *w, const char *s, size_t n);
/*
 * A string value written in pieces, between jw_string_begin and
 * jw_string_end: each piece escaped as jw_stringn escapes it (the escape
 * of a text is the escapes of its pieces when they are cut between
 * characters), or given already escaped with its counts.
 */
void jw_string_begin(jw *w);
void jw_string_piece(jw *w, const char *s, size_t n);
void jw_string_piece_escaped(jw *w, const char *json, size_t n, size_t codepoints, size_t units);
void jw_string_end(jw *w);
void jw_int(jw *w, int64_t v);
/* Non-finite numbers are written as null: JSON has no NaN or infinity. */
void jw_double(jw *w, double v);
void jw_bool(jw *w, bool v);
void jw_null(jw *w);
/* Writes a jansson value (objects keep their insertion order). */
void jw_json(jw *w, const json_t *v);
/* Writes `n` bytes of JSON the caller vouches for, as one value. */
void jw_raw_value(jw *w, const char *json, size_t n);
/* The same, for bytes whose code points and UTF-16 units the caller has counted. */
void jw_raw_value_counted(jw *w, const char *json, size_t n, size_t codepoints, size_t units);

/* Convenience: key and value in one call. */
void jw_kv_string(jw *w, const char *key, const char *s);
void jw_kv_int(jw *w, const char *key, int64_t v);
void jw_kv_bool(jw *w, const char *key, bool v);

/*
 * Measures `n` bytes of UTF-8 as they would count once decoded: code
 * points and UTF-16 units; invalid bytes count as one U+FFFD each.
 */
void jw_measure_utf8(const char *s, size_t n, size_t *codepoints, size_t *utf16);

/*
 * Returns the length of the longest prefix of s[0..n) that does not end
 * inside a UTF-8 sequence (invalid bytes count as whole characters).
 */
size_t jw_utf8_floor(const char *s, size_t n);

#endif
