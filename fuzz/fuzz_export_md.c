/*
 * libFuzzer target: the Markdown export's escapes (src/tools/text_out.c)
 * and its file names (export_file_name). Input: a value, a newline, then
 * a message's prose. The harness writes what an export writes around
 * them: "# " and the value escaped as an inline value, a blank line, the
 * prose as text_out_markdown writes it.
 *
 * The property (issue 38): rendered by a CommonMark renderer that allows
 * raw HTML, no element and no attribute comes from transcript bytes. It
 * is checked by reading the output as CommonMark reads it:
 * - blocks: outside code fences, no line opens a block the harness did
 *   not write (a quote, a list, a heading, a table, raw HTML, an indented
 *   code block, a setext underline, a thematic break), and every fence
 *   is at column 0 and closed before the end;
 * - inlines, per paragraph (its lines joined, as the renderer joins
 *   them): backslash escapes and code spans as CommonMark matches them
 *   (a run closes at the next run of the same length anywhere in the
 *   paragraph); outside code spans no `<`, `[`, `]`, `*`, `~`, `|`, no
 *   `_` at a word's edge, no backtick run without its closer, and no
 *   entity but the &lt; &gt; &amp; the writer makes;
 * - bytes: valid UTF-8, no control character but newline and tab.
 * Any failure aborts. The file name of the value as a session id holds
 * only [A-Za-z0-9._%~-], is no longer than a name may be, does not start
 * with '.', and decodes back to the id unless it carries the hash ('~').
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/export.h"
#include "tools/text_out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool punct(unsigned char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

static bool alnum(unsigned char c)
{
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9');
}

static size_t run_of(const char *s, size_t n, size_t i, char ch)
{
    size_t k = i;
    while (k < n && s[k] == ch)
        k++;
    return k - i;
}

/* The inlines of one paragraph, as CommonMark reads them. */
static void check_inlines(const char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\' && i + 1 < n && punct((unsigned char)p[i + 1])) {
            i += 2;
            continue;
        }
        if (c == '`') {
            size_t r = run_of(p, n, i, '`'), j = i + r, close = 0;
            while (j < n) {
                size_t k = run_of(p, n, j, '`');
                if (k == r) {
                    close = j + k;
                    break;
                }
                j += k ? k : 1;
            }
            if (close == 0)
                abort(); /* a backtick run the writer left unescaped, with no closer */
            i = close;
            continue;
        }
        if (c == '<' || c == '[' || c == ']' || c == '*' || c == '~' || c == '|')
            abort();
        if (c == '_' && !(i > 0 && i + 1 < n && alnum((unsigned char)p[i - 1]) &&
                          alnum((unsigned char)p[i + 1])))
            abort();
        /* an entity reference: & then a letter (a name) or '#' (a number), up to ';' */
        if (c == '&' && i + 1 < n &&
            (p[i + 1] == '#' || ((p[i + 1] | 0x20) >= 'a' && (p[i + 1] | 0x20) <= 'z'))) {
            size_t k = i + 1;
            while (k < n && k - i < 34 && (alnum((unsigned char)p[k]) || p[k] == '#'))
                k++;
            if (k < n && p[k] == ';' && k > i + 1 && strncmp(p + i, "&lt;", 4) != 0 &&
                strncmp(p + i, "&gt;", 4) != 0 && strncmp(p + i, "&amp;", 5) != 0)
                abort(); /* an entity from transcript bytes */
        }
        i++;
    }
}

/* A fence line: up to 3 spaces, 3 or more ` or ~ (a backtick fence's info has no backtick). */
static bool opens_fence(const char *s, size_t n, char *ch, size_t *len, size_t *indent)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    if (i >= n || (s[i] != '`' && s[i] != '~'))
        return false;
    size_t k = run_of(s, n, i, s[i]);
    if (k < 3 || (s[i] == '`' && memchr(s + i + k, '`', n - i - k)))
        return false;
    *ch = s[i], *len = k, *indent = i;
    return true;
}

static bool closes_fence(const char *s, size_t n, char ch, size_t len)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    size_t k = run_of(s, n, i, ch);
    if (k < len)
        return false;
    for (i += k; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* A line outside fences that would open a block of its own. */
static bool opens_block(const char *s, size_t n)
{
    if (n == 0)
        return false;
    unsigned char c = (unsigned char)s[0];
    if (c == ' ' || c == '\t') /* the writer indents with no-break spaces */
        return true;
    if (c == '>' || c == '#' || c == '-' || c == '+' || c == '*' || c == '=' || c == '<' ||
        c == '|' || c == '_')
        return true;
    size_t d = 0;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    return d > 0 && d < n && (s[d] == '.' || s[d] == ')');
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

static void check_bytes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
            abort();
        if (c < 0x80)
            continue;
        size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0 || i + len > n)
            abort();
        for (size_t k = 1; k < len; k++)
            if (((unsigned char)s[i + k] & 0xC0) != 0x80)
                abort();
        i += len - 1;
    }
}

/* The body (after the harness's heading) as CommonMark reads its blocks. */
static void check_body(const char *s, size_t n)
{
    char fch = 0;
    size_t flen = 0, para = 0, para_len = 0;
    bool in_para = false;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
        const char *line = s + i;
        size_t next = nl ? i + len + 1 : n;
        if (fch) {
            if (closes_fence(line, len, fch, flen))
                fch = 0;
            i = next;
            continue;
        }
        char ch;
        size_t fl, indent;
        bool fence = opens_fence(line, len, &ch, &fl, &indent);
        if (blank(line, len) || fence) {
            if (in_para)
                check_inlines(s + para, para_len);
            in_para = false;
            if (fence) {
                if (indent != 0)
                    abort(); /* the writer's fences are at column 0 */
                fch = ch, flen = fl;
            }
            i = next;
            continue;
        }
        if (opens_block(line, len))
            abort(); /* a block of its own, or one interrupting the paragraph */
        if (!in_para) {
            in_para = true;
            para = i;
        }
        para_len = i + len - para;
        i = next;
    }
    if (in_para)
        check_inlines(s + para, para_len);
    if (fch)
        abort(); /* a fence left open swallows what follows */
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void check_file_name(const char *id)
{
    char name[EXPORT_NAME_MAX];
    export_file_name(id, EXPORT_MD, name, sizeof name);
    size_t n = strlen(name);
    if (n >= 255 || n < 4 || name[0] == '.' || strcmp(name + n - 3, ".md") != 0)
        abort();
    bool hashed = false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!alnum((unsigned char)c) && c != '.' && c != '_' && c != '-' && c != '%' && c != '~')
            abort();
        hashed = hashed || c == '~';
    }
    if (hashed)
        return;
    char back[EXPORT_NAME_MAX];
    size_t o = 0;
    for (size_t i = 0; i + 3 < n; i++) {
        if (name[i] == '%') {
            int hi = hexval(name[i + 1]), lo = hexval(name[i + 2]);
            if (hi < 0 || lo < 0)
                abort();
            back[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            back[o++] = name[i];
        }
    }
    back[o] = '\0';
    if (strcmp(back, id) != 0)
        abort(); /* the name does not decode back to the id */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t vlen = nl ? (size_t)(nl - data) : size;
    char *value = malloc(vlen + 1);
    if (value == NULL)
        return 0;
    memcpy(value, data, vlen);
    value[vlen] = '\0';
    const char *prose = nl ? (const char *)nl + 1 : "";
    size_t plen = nl ? size - vlen - 1 : 0;

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        free(value);
        return 0;
    }
    text_out o;
    text_out_init(&o, f);
    text_out_puts(&o, "# ");
    text_out_md_inline(&o, value, strlen(value)); /* a C string, as the store gives it */
    size_t head_end = (size_t)o.bytes;
    text_out_puts(&o, "\n\n");
    text_out_markdown(&o, prose, strnlen(prose, plen));
    text_out_puts(&o, "\n");
    if (fclose(f) != 0 || o.err || (size_t)o.bytes != len)
        abort();
    check_bytes(buf, len);
    if (memchr(buf, '\n', head_end))
        abort(); /* the heading is one line */
    check_inlines(buf + 2, head_end - 2);
    check_body(buf + head_end + 2, len - head_end - 2);
    free(buf);
    if (value[0])
        check_file_name(value);
    free(value);
    return 0;
}
