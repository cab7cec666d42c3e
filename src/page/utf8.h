/*
 * UTF-8 validation for the writer and the page builder: the length of a
 * valid multi-byte sequence, and runs of them, without decoding the code
 * points. Valid means RFC 3629: no overlong form, no surrogate, nothing
 * past U+10FFFF (the second byte's range per lead byte says all three).
 */
#ifndef MCPAGE_PAGE_UTF8_H
#define MCPAGE_PAGE_UTF8_H

#include <stddef.h>

/* Bytes of the valid sequence that starts s[0..n) with a lead byte of
   0x80 or more (2 to 4), or 0 when it is not valid UTF-8. */
static inline size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0xC2 || c > 0xF4)
        return 0; /* a continuation byte, an overlong lead, or past U+10FFFF */
    if (c < 0xE0)
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4
                                                                                                : 0;
}

/*
 * The bytes at the start of p[0..n) that are valid multi-byte sequences
 * other than U+2028 and U+2029 (which JSON output escapes); adds their
 * code points to *chars and the 4-byte ones (two UTF-16 units each) to
 * *astral. Stops at ASCII, at an invalid byte and at the end.
 */
static inline size_t utf8_wide_run(const unsigned char *p, size_t n, size_t *chars, size_t *astral)
{
    size_t i = 0;
    while (i < n && p[i] >= 0x80) {
        size_t len = utf8_seq_len(p + i, n - i);
        if (len == 0 || (len == 3 && p[i] == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] & 0xFE) == 0xA8))
            break;
        i += len;
        (*chars)++;
        *astral += len == 4;
    }
    return i;
}

#endif
