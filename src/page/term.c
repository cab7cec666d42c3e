/*
 * The terminal escape (term.h): one function decides, per character, what
 * a terminal sees; the writer, the formatter and the buffer form share it.
 */
#include "page/term.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page/alloc.h"
#include "page/utf8.h"

/* The code point of the valid sequence of `len` bytes at s (2 to 4). */
static unsigned long utf8_value(const unsigned char *s, size_t len)
{
    unsigned long v = s[0] & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++)
        v = (v << 6) | (s[i] & 0x3Fu);
    return v;
}

/*
 * The character at s[0..n): its length in *len, and the visible form a
 * terminal gets in out (its length returned), or 0 when it passes as it is.
 */
static size_t term_escape_one(const unsigned char *s, size_t n, size_t *len, char out[8], bool line)
{
    unsigned c = s[0];
    *len = 1;
    if (c >= 0x80) {
        size_t l = utf8_seq_len(s, n);
        if (l == 0)
            return (size_t)snprintf(out, 8, "\\x%02X", c);
        *len = l;
        unsigned long cp = utf8_value(s, l);
        if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
            (cp >= 0x2066 && cp <= 0x2069))
            return (size_t)snprintf(out, 8, "\\u%04lX", cp);
        return 0;
    }
    if ((c == '\n' || c == '\t') && !line)
        return 0;
    if (c == 0x1B)
        return (size_t)snprintf(out, 8, "\\e");
    if (c < 0x20 || c == 0x7F)
        return (size_t)snprintf(out, 8, "^%c", c == 0x7F ? '?' : (char)(c + '@'));
    return 0;
}

bool text_term_escapes(FILE *f, bool raw)
{
    return !raw || isatty(fileno(f));
}

void text_term_write(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* bytes [i - run, i) pass unchanged */
    while (i < n) {
        char esc[8];
        size_t len;
        size_t k = term_escape_one(p + i, n - i, &len, esc, false);
        if (k) {
            (void)fwrite(s + i - run, 1, run, f);
            (void)fwrite(esc, 1, k, f);
            run = 0;
        } else {
            run += len;
        }
        i += len;
    }
    (void)fwrite(s + i - run, 1, run, f);
}

void text_term_printf(FILE *f, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char *buf = small;
    if ((size_t)n >= sizeof small) {
        buf = mcpage__malloc((size_t)n + 1);
        if (buf == NULL)
            return;
        va_start(ap, fmt);
        (void)vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    text_term_write(f, buf, (size_t)n);
    if (buf != small)
        mcpage__free(buf);
}

static size_t escape_into(char *buf, size_t cap, const char *s, size_t n, bool line)
{
    if (cap == 0)
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char esc[8];
        size_t len;
        size_t k = term_escape_one(p + i, n - i, &len, esc, line);
        const char *w = k ? esc : s + i;
        size_t wl = k ? k : len;
        if (o + wl >= cap)
            break;
        memcpy(buf + o, w, wl);
        o += wl;
        i += len;
    }
    buf[o] = '\0';
    return o;
}

size_t text_term_escape(char *buf, size_t cap, const char *s, size_t n)
{
    return escape_into(buf, cap, s, n, false);
}

size_t text_term_escape_line(char *buf, size_t cap, const char *s, size_t n)
{
    return escape_into(buf, cap, s, n, true);
}

const char *text_term_cell(char *buf, size_t cap, const char *s, size_t width)
{
    size_t k = 0, chars = 0, n = s ? strlen(s) : 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; i < n && chars < width;) {
        size_t len = p[i] < 0x80 ? 1 : utf8_seq_len(p + i, n - i);
        if (len == 0)
            len = 1; /* a byte that is not UTF-8: one cell (shown escaped) */
        if (k + len + 1 > cap)
            break;
        memcpy(buf + k, p + i, len);
        k += len;
        i += len;
        chars++;
    }
    for (; chars < width && k + 2 <= cap; chars++)
        buf[k++] = ' ';
    if (cap)
        buf[k < cap ? k : cap - 1] = 0;
    return buf;
}
