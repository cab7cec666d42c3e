/*
 * The streaming JSON writer (see jw.h). One pass over each string both
 * escapes it and validates its UTF-8, counting what is written.
 */
#include "page/jw.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <mcpage/mcpage.h>

#include "page/alloc.h"
#include "page/dbuf.h"
#include "page/utf8.h"

void jw_init(jw *w, size_t max)
{
    memset(w, 0, sizeof *w);
    /* Capped so that len + extra + 1 in reserve() cannot overflow. */
    w->max = max && max < SIZE_MAX / 2 ? max : SIZE_MAX / 2;
}

void jw_free(jw *w)
{
    mcpage__free(w->buf);
    size_t max = w->max;
    jw_init(w, max);
}

void jw_reset(jw *w)
{
    char *buf = w->buf;
    size_t cap = w->cap, max = w->max;
    jw_init(w, max);
    w->buf = buf;
    w->cap = cap;
    if (buf)
        buf[0] = '\0';
}

jw_mark jw_mark_get(const jw *w)
{
    jw_mark m = {w->len,
                 w->codepoints,
                 w->utf16,
                 w->repaired,
                 w->depth,
                 w->after_key,
                 w->depth > 0 && w->nonempty[w->depth - 1]};
    return m;
}

void jw_rewind(jw *w, const jw_mark *m)
{
    if (w->err || w->depth != m->depth || m->len > w->len)
        return;
    w->len = m->len;
    w->codepoints = m->codepoints;
    w->utf16 = m->utf16;
    w->repaired = m->repaired;
    w->after_key = m->after_key;
    if (w->depth > 0)
        w->nonempty[w->depth - 1] = m->nonempty;
    if (w->buf)
        w->buf[w->len] = '\0';
}

char *jw_take(jw *w, size_t *len)
{
    if (w->buf == NULL && w->err == 0) {
        /* Nothing written yet: hand back an empty string all the same. */
        w->buf = mcpage__malloc(1);
        if (w->buf)
            w->buf[0] = '\0';
    }
    char *buf = w->buf;
    if (len)
        *len = w->len;
    size_t max = w->max;
    jw_init(w, max);
    return buf;
}

static bool reserve(jw *w, size_t extra)
{
    if (w->err)
        return false;
    /* Room already there (most calls): no call into dbuf. */
    if (extra < w->cap - w->len && extra <= w->max - w->len)
        return true;
    if (extra > w->max - w->len) {
        w->err = MCPAGE_ERANGE;
        return false;
    }
    void *buf = w->buf;
    int rc = dbuf_grow(&buf, &w->cap, w->len + extra + 1, 1, DBUF_FIRST_CAP, w->max + 1);
    if (rc != 0) {
        w->err = rc;
        return false;
    }
    w->buf = buf;
    return true;
}

int jw_reserve(jw *w, size_t extra)
{
    return reserve(w, extra) ? 0 : w->err;
}

/* Appends ASCII bytes: each is one code point and one UTF-16 unit. */
static void put_ascii(jw *w, const char *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
    w->codepoints += n;
    w->utf16 += n;
}

/* Writes the comma (or checks the key) due before a value. */
static bool before_value(jw *w)
{
    if (w->err)
        return false;
    if (w->depth > 0 && w->kind[w->depth - 1] == 'o') {
        if (!w->after_key) {
            w->err = MCPAGE_ESTATE; /* a value inside an object needs a key */
            return false;
        }
        w->after_key = false;
        return true;
    }
    if (w->depth > 0) {
        if (w->nonempty[w->depth - 1])
            put_ascii(w, ",", 1);
        w->nonempty[w->depth - 1] = true;
    } else if (w->len > 0) {
        w->err = MCPAGE_ESTATE; /* one top-level value per writer */
        return false;
    }
    return w->err == 0;
}

/*
 * Decodes one UTF-8 sequence at s[0..n). Returns its length (1 to 4) and
 * the code point, or 0 when the bytes are not valid UTF-8 (overlong
 * forms, surrogates and values past U+10FFFF are invalid).
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

void jw_measure_utf8(const char *s, size_t n, size_t *codepoints, size_t *utf16)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t cps = 0, units = 0;
    for (size_t i = 0; i < n;) {
        /* Eight ASCII bytes at a time: each is one code point and one unit. */
        uint64_t word;
        if (n - i >= 8 && (memcpy(&word, p + i, 8), (word & UINT64_C(0x8080808080808080)) == 0)) {
            cps += 8;
            units += 8;
            i += 8;
            continue;
        }
        uint32_t cp;
        size_t len = p[i] < 0x80 ? 1 : utf8_decode(p + i, n - i, &cp);
        if (len == 0)
            len = 1; /* one replacement character */
        cps++;
        units += len == 4 ? 2 : 1;
        i += len;
    }
    if (codepoints)
        *codepoints = cps;
    if (utf16)
        *utf16 = units;
}

size_t jw_utf8_floor(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = p[i] < 0x80 ? 1 : utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            /* A lead byte whose sequence runs past n is a cut character. */
            size_t need = (p[i] & 0xE0) == 0xC0   ? 2
                          : (p[i] & 0xF0) == 0xE0 ? 3
                          : (p[i] & 0xF8) == 0xF0 ? 4
                                                  : 1;
            /* Only when every byte left continues it: "\xE2A" is an invalid
             * byte and an 'A', not a character cut short. */
            if (need > 1 && i + need > n) {
                size_t k = i + 1;
                while (k < n && (p[k] & 0xC0) == 0x80)
                    k++;
                if (k == n)
                    return i;
            }
            len = 1; /* an invalid byte stands as one character */
        }
        i += len;
    }
    return n;
}

/* Bytes repeated in each of a word's eight lanes. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (b))
/* Nonzero when some byte of x is zero (may also flag bytes past the first zero). */
#define HAS_ZERO(x) (((x)-LANES(1)) & ~(x)&LANES(0x80))

/* Lanes (their top bits) of the 8 bytes at p that are not printable ASCII
   other than '"' and '\\'; the lowest flagged lane is exact. */
static inline uint64_t special8(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return (x & LANES(0x80)) | ((x - LANES(0x20)) & ~x & LANES(0x80)) | HAS_ZERO(x ^ LANES('"')) |
           HAS_ZERO(x ^ LANES('\\'));
}

#if defined(__SSE2__)
/* Bits of the 16 bytes in x that are not printable ASCII other than '"' and
   '\\' (SSE2, which every x86-64 has): a byte below 0x20 or from 0x80 up
   is below 0x20 as a signed byte. */
static inline unsigned special16(__m128i x)
{
    const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(x, space),
                               _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)));
    return (unsigned)_mm_movemask_epi8(bad);
}
#endif

/* Bytes at the start of p[0..n) that are printable ASCII other than '"' and '\\'. */
static size_t plain_prefix(const unsigned char *p, size_t n)
{
    size_t run = 0;
#if defined(__SSE2__)
    for (; n - run >= 16; run += 16) {
        unsigned mask = special16(_mm_loadu_si128((const __m128i *)(const void *)(p + run)));
        if (mask)
            return run + (size_t)__builtin_ctz(mask);
    }
#endif
    for (; n - run >= 8; run += 8) {
        uint64_t special = special8(p + run);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* The first byte to escape, found in the word rather than byte by byte. */
        if (special)
            return run + (size_t)__builtin_ctzll(special) / 8;
    }
    if (run == n)
        return n;
    /* The last bytes: the word that ends them (its first bytes, before
       run, are plain: they were checked above), or, for a string shorter
       than a word, the bytes padded with plain ones. */
    uint64_t special;
    if (n >= 8) {
        special = special8(p + n - 8);
        return special ? n - 8 + (size_t)__builtin_ctzll(special) / 8 : n;
    }
    unsigned char pad[8] = {'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'};
    for (size_t k = 0; k < n; k++)
        pad[k] = p[k];
    special = special8(pad);
    return special ? (size_t)__builtin_ctzll(special) / 8 : n;
#else
        if (special)
            break;
    }
    while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
        run++;
    return run;
#endif
}

/* The JSON escape of an ASCII byte that needs one, at o; returns its length. */
static size_t escape_ascii(unsigned char c, char *o)
{
    static const char hex[] = "0123456789abcdef";
    char e = c == '"'    ? '"'
             : c == '\\' ? '\\'
             : c == '\n' ? 'n'
             : c == '\r' ? 'r'
             : c == '\t' ? 't'
             : c == '\b' ? 'b'
             : c == '\f' ? 'f'
                         : 0;
    o[0] = '\\';
    if (e) {
        o[1] = e;
        return 2;
    }
    memcpy(o + 1, "u00", 3);
    o[4] = hex[c >> 4];
    o[5] = hex[c & 15];
    return 6;
}

/* Input bytes escaped per call of escape_chunk. */
#define ESCAPE_CHUNK 4096

/*
 * Escapes the next chunk of p[*at..n) (ending on a character boundary)
 * straight into w's buffer. It reserves room for the chunk as it is (and
 * a little): runs of plain ASCII and of valid characters are copied as
 * they are, and escapes are written without a call per piece; when the
 * room runs out it stops where it is, and the next call reserves more
 * (the buffer doubles, so a string of many escapes grows it a few times,
 * not once per escape). False, having written nothing, when even that
 * room would pass w's limit: the loop in put_escaped, which reserves
 * piece by piece, then writes the rest.
 */
static bool escape_chunk(jw *w, const unsigned char *p, size_t n, size_t *at)
{
    size_t i = *at, end = n - i > ESCAPE_CHUNK ? i + ESCAPE_CHUNK : n;
    for (int k = 0; k < 3 && end < n && end > i + 1 && (p[end] & 0xC0) == 0x80; k++)
        end--;                  /* not inside a character */
    size_t want = end - i + 16; /* room for the first piece, whatever it is */
    if (want > w->max - w->len || !reserve(w, want))
        return false;
    char *o = w->buf + w->len, *start = o;
    const char *lim = w->buf + w->cap - 1;     /* the NUL goes at most here */
    size_t wide = 0, astral = 0, repaired = 0; /* non-ASCII counts, for cps and units */
    while (i < end) {
#if defined(__SSE2__)
        if (end - i >= 16 && lim - o >= 16) {
            /* Sixteen bytes copied at once, then kept up to the first that
               is not plain: no call for a run, however short. */
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            _mm_storeu_si128((__m128i *)(void *)o, x);
            unsigned mask = special16(x);
            if (mask == 0) {
                i += 16;
                o += 16;
                continue;
            }
            size_t k = (size_t)__builtin_ctz(mask);
            i += k;
            o += k;
        } else
#endif
        {
            size_t run = plain_prefix(p + i, end - i);
            if (run > (size_t)(lim - o))
                break; /* out of room: the next call reserves more */
            memcpy(o, p + i, run);
            o += run;
            i += run;
        }
        if (i == end || lim - o < 6)
            break;
        if (p[i] == '\t' || p[i] == '\n') {
            /* The escapes of a text copy's columns and lines, written here. */
            o[0] = '\\';
            o[1] = p[i++] == '\t' ? 't' : 'n';
            o += 2;
            continue;
        }
        if (p[i] < 0x80) {
            o += escape_ascii(p[i++], o);
            continue;
        }
        size_t chars = 0, run4 = 0;
        size_t run = utf8_wide_run(p + i, end - i, &chars, &run4);
        if (run > (size_t)(lim - o))
            break;
        if (run) {
            /* Valid characters copied as a run, without decoding them. */
            memcpy(o, p + i, run);
            o += run;
            i += run;
            wide += run - chars;
            astral += run4;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(p + i, end - i, &cp);
        if (len == 0) {
            memcpy(o, "\xEF\xBF\xBD", 3); /* invalid byte: U+FFFD, and move on by one */
            o += 3;
            wide += 2; /* three bytes, one code point, one unit */
            repaired++;
            i++;
        } else {
            /* U+2028 or U+2029, the valid characters a run stops at: see put_escaped. */
            assert(cp == 0x2028 || cp == 0x2029);
            memcpy(o, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
            o += 6;
            i += len;
        }
    }
    size_t bytes = (size_t)(o - start);
    *o = '\0';
    w->len += bytes;
    w->codepoints += bytes - wide;
    w->utf16 += bytes - wide + astral;
    w->repaired += repaired;
    *at = i;
    return true;
}

/* Appends n bytes of `chars` code points, `units` UTF-16 units; false on error. */
static bool put_counted(jw *w, const void *bytes, size_t n, size_t chars, size_t units)
{
    if (!reserve(w, n))
        return false;
    memcpy(w->buf + w->len, bytes, n);
    w->len += n;
    w->codepoints += chars;
    w->utf16 += units;
    return true;
}

static bool put_escaped_body(jw *w, const char *s, size_t n, size_t plain);

/*
 * A string, quoted and escaped: in chunks (escape_chunk) while their
 * room fits w's limit, else piece by piece, each piece reserved on its
 * own, so a writer limited to the exact output length still takes it.
 */
static void put_escaped(jw *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = plain_prefix(p, n);
    if (i == n) {
        /* Nothing to escape (most keys and values): quoted in one copy. */
        if (n > SIZE_MAX / 2 || !reserve(w, n + 2))
            return;
        char *o = w->buf + w->len;
        o[0] = '"';
        memcpy(o + 1, s, n);
        o[n + 1] = '"';
        o[n + 2] = '\0';
        w->len += n + 2;
        w->codepoints += n + 2;
        w->utf16 += n + 2;
        return;
    }
    if (put_counted(w, "\"", 1, 1, 1) && put_escaped_body(w, s, n, i) &&
        put_counted(w, "\"", 1, 1, 1))
        w->buf[w->len] = '\0';
}

/* The escape of s[0..n) (no quotes), whose first `plain` bytes need none;
   false on the writer's error. */
static bool put_escaped_body(jw *w, const char *s, size_t n, size_t plain)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = plain;
    if (!put_counted(w, s, i, i, i))
        return false;
    while (i < n && escape_chunk(w, p, n, &i))
        ;
    while (i < n) {
        size_t run = plain_prefix(p + i, n - i);
        if (run) {
            if (!put_counted(w, s + i, run, run, run))
                return false;
            i += run;
            continue;
        }
        char esc[6];
        if (p[i] < 0x80) {
            size_t k = escape_ascii(p[i++], esc);
            if (!put_counted(w, esc, k, k, k))
                return false;
            continue;
        }
        size_t chars = 0, astral = 0;
        run = utf8_wide_run(p + i, n - i, &chars, &astral);
        if (run) {
            if (!put_counted(w, s + i, run, chars, chars + astral))
                return false;
            i += run;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            /* Invalid byte: write U+FFFD instead and move on by one. */
            if (!put_counted(w, "\xEF\xBF\xBD", 3, 1, 1))
                return false;
            w->repaired++;
            i++;
            continue;
        }
        /* U+2028 or U+2029 (the only valid characters a run stops at):
           valid JSON, but line terminators in JavaScript source, so
           escaped for output embedded in a script. */
        assert(cp == 0x2028 || cp == 0x2029);
        if (!put_counted(w, cp == 0x2028 ? "\\u2028" : "\\u2029", 6, 6, 6))
            return false;
        i += len;
    }
    return w->err == 0;
}

static void open_container(jw *w, uint8_t kind)
{
    if (!before_value(w))
        return;
    if (w->depth >= JW_MAX_DEPTH) {
        w->err = MCPAGE_ERANGE;
        return;
    }
    put_ascii(w, kind == 'o' ? "{" : "[", 1);
    w->kind[w->depth] = kind;
    w->nonempty[w->depth] = false;
    w->depth++;
}

static void close_container(jw *w, uint8_t kind)
{
    if (w->err)
        return;
    if (w->depth == 0 || w->kind[w->depth - 1] != kind || w->after_key) {
        w->err = MCPAGE_ESTATE;
        return;
    }
    w->depth--;
    put_ascii(w, kind == 'o' ? "}" : "]", 1);
}

void jw_object_begin(jw *w)
{
    open_container(w, 'o');
}

void jw_object_end(jw *w)
{
    close_container(w, 'o');
}

void jw_object_reopen(jw *w)
{
    if (w->err)
        return;
    if (w->len < 2 || w->buf[w->len - 1] != '}' || w->after_key || w->depth >= JW_MAX_DEPTH) {
        w->err = MCPAGE_ESTATE;
        return;
    }
    w->len--;
    w->codepoints--;
    w->utf16--;
    w->buf[w->len] = '\0';
    w->kind[w->depth] = 'o';
    w->nonempty[w->depth] = w->buf[w->len - 1] != '{';
    w->depth++;
}

void jw_array_begin(jw *w)
{
    open_container(w, 'a');
}

void jw_array_end(jw *w)
{
    close_container(w, 'a');
}

void jw_keyn(jw *w, const char *key, size_t n)
{
    if (w->err)
        return;
    if (w->depth == 0 || w->kind[w->depth - 1] != 'o' || w->after_key) {
        w->err = MCPAGE_ESTATE;
        return;
    }
    if (w->nonempty[w->depth - 1])
        put_ascii(w, ",", 1);
    w->nonempty[w->depth - 1] = true;
    put_escaped(w, key, n);
    put_ascii(w, ":", 1);
    w->after_key = true;
}

void jw_key(jw *w, const char *key)
{
    jw_keyn(w, key, strlen(key));
}

void jw_stringn(jw *w, const char *s, size_t n)
{
    if (before_value(w))
        put_escaped(w, s, n);
}

void jw_string_begin(jw *w)
{
    if (before_value(w))
        put_ascii(w, "\"", 1);
}

void jw_string_piece(jw *w, const char *s, size_t n)
{
    if (w->err == 0 && put_escaped_body(w, s, n, plain_prefix((const unsigned char *)s, n)))
        w->buf[w->len] = '\0';
}

void jw_string_piece_escaped(jw *w, const char *json, size_t n, size_t codepoints, size_t units)
{
    if (w->err == 0 && put_counted(w, json, n, codepoints, units))
        w->buf[w->len] = '\0';
}

void jw_string_end(jw *w)
{
    put_ascii(w, "\"", 1);
}

void jw_string(jw *w, const char *s)
{
    if (s == NULL)
        jw_null(w);
    else
        jw_stringn(w, s, strlen(s));
}

void jw_int(jw *w, int64_t v)
{
    /* By hand: snprintf costs more than the rest of a typical record. */
    char num[24];
    char *end = num + sizeof num, *q = end;
    uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--q = '-';
    if (before_value(w))
        put_ascii(w, q, (size_t)(end - q));
}

void jw_double(jw *w, double v)
{
    if (!isfinite(v)) {
        jw_null(w);
        return;
    }
    char num[32];
    int n = snprintf(num, sizeof num, "%.17g", v);
    /* A host program may have set a locale whose decimal point is a comma. */
    for (char *c = num; *c; c++)
        if (*c == ',')
            *c = '.';
    /* Keep it a JSON number that reads back as a real. */
    if (strspn(num, "-0123456789") == (size_t)n && n < 30)
        num[n++] = '.', num[n++] = '0', num[n] = '\0';
    if (before_value(w))
        put_ascii(w, num, (size_t)n);
}

void jw_bool(jw *w, bool v)
{
    if (before_value(w))
        put_ascii(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(jw *w)
{
    if (before_value(w))
        put_ascii(w, "null", 4);
}

void jw_raw_value_counted(jw *w, const char *json, size_t n, size_t codepoints, size_t units)
{
    if (!before_value(w) || !reserve(w, n))
        return;
    memcpy(w->buf + w->len, json, n);
    w->len += n;
    w->buf[w->len] = '\0';
    w->codepoints += codepoints;
    w->utf16 += units;
}

void jw_raw_value(jw *w, const char *json, size_t n)
{
    size_t cps, units;
    jw_measure_utf8(json, n, &cps, &units);
    jw_raw_value_counted(w, json, n, cps, units);
}

void jw_json(jw *w, const json_t *v)
{
    if (w->err)
        return;
    if (v == NULL) {
        w->err = MCPAGE_EINVAL;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        size_t key_len;
        json_t *val;
        jw_object_begin(w);
        /* Keys may hold U+0000 (jansson 2.14 keeps their length). */
        json_object_keylen_foreach((json_t *)v, key, key_len, val)
        {
            jw_keyn(w, key, key_len);
            jw_json(w, val);
        }
        jw_object_end(w);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *val;
        jw_array_begin(w);
        json_array_foreach(v, i, val) jw_json(w, val);
        jw_array_end(w);
        break;
    }
    case JSON_STRING:
        jw_stringn(w, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        jw_int(w, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        jw_double(w, json_real_value(v));
        break;
    case JSON_TRUE:
        jw_bool(w, true);
        break;
    case JSON_FALSE:
        jw_bool(w, false);
        break;
    case JSON_NULL:
        jw_null(w);
        break;
    }
}

void jw_kv_string(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_string(w, s);
}

void jw_kv_int(jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    jw_int(w, v);
}

void jw_kv_bool(jw *w, const char *key, bool v)
{
    jw_key(w, key);
    jw_bool(w, v);
}
