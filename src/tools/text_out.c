/*
 * The counting writer and the transcript escapes (text_out.h), and the
 * one stylesheet of the HTML renderings.
 */
#include "tools/text_out.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <mcpage/mcpage.h>

void text_out_init(text_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->f = f;
}

void text_out_write(text_out *o, const char *p, size_t n)
{
    if (o->err || n == 0)
        return;
    if (fwrite(p, 1, n, o->f) != n) {
        o->err = MCPAGE_EIO;
        return;
    }
    o->bytes += (int64_t)n;
    for (const char *q = p; (q = memchr(q, '\n', n - (size_t)(q - p))) != NULL; q++)
        o->lines++;
}

void text_out_puts(text_out *o, const char *s)
{
    text_out_write(o, s, strlen(s));
}

void text_out_printf(text_out *o, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->err = o->err ? o->err : MCPAGE_EINVAL;
        return;
    }
    text_out_write(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/*
 * The next character of s[0..n): its code point in *cp and its length,
 * or 1 with *cp = -1 for a byte that does not start a valid UTF-8
 * sequence (overlong forms, surrogates and values past U+10FFFF included).
 */
static size_t utf8_next(const unsigned char *s, size_t n, long *cp)
{
    unsigned char c = s[0];
    size_t len;
    long v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        *cp = -1;
        return 1;
    }
    if (len > n) {
        *cp = -1;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = -1;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = -1;
        return 1;
    }
    *cp = v;
    return len;
}

/* U+FFFD, the replacement character. */
static const char replacement[] = "\xEF\xBF\xBD";

/*
 * Writes s[0..n) safely: valid UTF-8 passes, controls become their
 * pictures, the rest U+FFFD; with `html`, the five HTML specials are
 * written as entities.
 */
static void write_safe(text_out *o, const char *s, size_t n, bool html)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* bytes [i - run, i) pass unchanged */
    while (i < n) {
        long cp;
        size_t len = utf8_next(p + i, n - i, &cp);
        const char *sub = NULL;
        char pic[4];
        if (cp == '\r' && i + 1 < n && p[i + 1] == '\n') {
            sub = "";
        } else if (cp < 0 || (cp >= 0x80 && cp <= 0x9F)) {
            sub = replacement;
        } else if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7F) {
            long pc = cp == 0x7F ? 0x2421 : 0x2400 + cp; /* U+2400..U+241F, U+2421 */
            pic[0] = (char)(0xE0 | (pc >> 12));
            pic[1] = (char)(0x80 | ((pc >> 6) & 0x3F));
            pic[2] = (char)(0x80 | (pc & 0x3F));
            pic[3] = '\0';
            sub = pic;
        } else if (html) {
            sub = cp == '&'    ? "&amp;"
                  : cp == '<'  ? "&lt;"
                  : cp == '>'  ? "&gt;"
                  : cp == '"'  ? "&quot;"
                  : cp == '\'' ? "&#39;"
                               : NULL;
        }
        if (sub) {
            text_out_write(o, s + i - run, run);
            text_out_puts(o, sub);
            run = 0;
        } else {
            run += len;
        }
        i += len;
    }
    text_out_write(o, s + i - run, run);
}

void text_out_html(text_out *o, const char *s, size_t n)
{
    write_safe(o, s, n, true);
}

void text_out_plain(text_out *o, const char *s, size_t n)
{
    write_safe(o, s, n, false);
}

size_t text_percent_encode(char *buf, size_t cap, const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 <= cap; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == '~' || (keep && strchr(keep, c));
        if (plain) {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    if (cap > 0)
        buf[o] = '\0';
    return o;
}

size_t text_longest_backticks(const char *s, size_t n)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best;
}

/* A fence line: up to 3 spaces, then 3 or more ` or ~; its char and length. */
static bool fence_line(const char *s, size_t n, char *ch, size_t *len)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    if (i >= n || (s[i] != '`' && s[i] != '~'))
        return false;
    size_t k = i;
    while (k < n && s[k] == s[i])
        k++;
    if (k - i < 3)
        return false;
    *ch = s[i];
    *len = k - i;
    return true;
}

/* One prose line outside fences: code spans as is, `<` elsewhere as &lt;. */
static void markdown_line(text_out *o, const char *s, size_t n)
{
    size_t i = 0, start = 0;
    while (i < n) {
        if (s[i] == '`') {
            size_t run = 0;
            while (i + run < n && s[i + run] == '`')
                run++;
            /* the closing run of the same length, if the line has one */
            size_t j = i + run, close = 0;
            while (j < n) {
                size_t r = 0;
                while (j + r < n && s[j + r] == '`')
                    r++;
                if (r == run) {
                    close = j + r;
                    break;
                }
                j += r ? r : 1;
            }
            i = close ? close : i + run; /* a span is copied as is below */
        } else if (s[i] == '<') {
            text_out_plain(o, s + start, i - start);
            text_out_puts(o, "&lt;");
            start = ++i;
        } else {
            i++;
        }
    }
    text_out_plain(o, s + start, n - start);
}

void text_out_markdown(text_out *o, const char *s, size_t n)
{
    char fence_ch = 0;
    size_t fence_len = 0;
    size_t i = 0;
    while (i <= n) {
        const char *nl = i < n ? memchr(s + i, '\n', n - i) : NULL;
        size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
        size_t line_len = len; /* a CR before the newline is dropped */
        if (nl && len > 0 && s[i + len - 1] == '\r')
            len--;
        char ch;
        size_t flen;
        if (fence_line(s + i, len, &ch, &flen)) {
            if (fence_ch == 0) {
                fence_ch = ch, fence_len = flen;
            } else if (ch == fence_ch && flen >= fence_len) {
                fence_ch = 0;
            }
            text_out_plain(o, s + i, len);
        } else if (fence_ch) {
            text_out_plain(o, s + i, len);
        } else {
            markdown_line(o, s + i, len);
        }
        if (!nl)
            break;
        text_out_write(o, "\n", 1);
        i += line_len + 1;
    }
    if (fence_ch) {
        text_out_write(o, "\n", 1);
        for (size_t k = 0; k < fence_len; k++)
            text_out_write(o, &fence_ch, 1);
    }
}

/* ------------------------------------------------------------ the stylesheet */

const char text_css[] =
    ":root{color-scheme:light dark;--fg:#1d1f21;--bg:#fff;--mute:#666;--line:#ddd;--code:#f5f5f4;"
    "--accent:#0b57d0;--hit:#fff3b0;--user:#eef4ff;--err:#b3261e}"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--bg:#141414;--mute:#9a9a9a;"
    "--line:#333;--code:#1f1f1f;--accent:#8ab4f8;--hit:#5c4a00;--user:#182233;--err:#f2b8b5}}"
    "*{box-sizing:border-box}"
    "body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"
    "'Segoe UI',Roboto,sans-serif}"
    "main{max-width:60rem;margin:0 auto;padding:1rem}"
    "nav.top{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;padding:.5rem 1rem;"
    "border-bottom:1px solid var(--line)}"
    "nav.top form{flex:1 1 16rem;display:flex;gap:.5rem}"
    "input[type=search],input[type=text]{flex:1;min-width:0;font:inherit;padding:.35rem .5rem;"
    "border:1px solid var(--line);border-radius:.3rem;background:var(--bg);color:var(--fg)}"
    "button{font:inherit;padding:.35rem .8rem;border-radius:.3rem;border:1px solid var(--line);"
    "background:var(--code);color:var(--fg)}"
    "a{color:var(--accent)}h1{font-size:1.4rem;overflow-wrap:anywhere}"
    "h2{font-size:1.1rem}.mute,.meta{color:var(--mute);font-size:.9rem}"
    "table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;"
    "border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}"
    ".num{text-align:right;white-space:nowrap}td.t{white-space:nowrap}"
    "@media (max-width:40rem){.opt{display:none}td,th{padding:.3rem .25rem;font-size:.9rem}"
    "ol.lines a.n{flex-basis:3em}td.t{white-space:normal}}"
    "pre,code{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}"
    "pre{background:var(--code);padding:.6rem;border-radius:.3rem;overflow-x:auto;"
    "white-space:pre-wrap;overflow-wrap:anywhere}"
    ".msg{border-top:1px solid var(--line);padding:.5rem 0}"
    ".msg>header{color:var(--mute);font-size:.85rem}"
    ".msg.user .text{background:var(--user);padding:.5rem;border-radius:.3rem}"
    ".text{white-space:pre-wrap;overflow-wrap:anywhere}"
    ".err{color:var(--err)}details>summary{cursor:pointer;color:var(--mute)}"
    "ol.lines{list-style:none;margin:0;padding:0;font:13px/1.45 ui-monospace,SFMono-Regular,"
    "Menlo,Consolas,monospace}"
    "ol.lines li{display:flex;gap:.75rem}ol.lines a.n{flex:0 0 4.5em;text-align:right;"
    "color:var(--mute);text-decoration:none;user-select:none}"
    "ol.lines span{white-space:pre-wrap;overflow-wrap:anywhere;min-width:0;flex:1}"
    "ol.lines li:target,ol.lines li.hit{background:var(--hit)}ol.lines li.h span{font-weight:600}"
    "ol.hits{list-style:none;padding:0}"
    "mark{background:var(--hit);color:inherit}"
    ".pager{display:flex;flex-wrap:wrap;gap:1rem;margin:1rem 0}"
    "svg.map{max-width:100%;height:auto}svg.map text{font:10px system-ui,sans-serif;"
    "fill:var(--fg)}";

static char css_hash[64];
static pthread_once_t css_once = PTHREAD_ONCE_INIT;

static void css_hash_init(void)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)text_css, strlen(text_css), d);
    unsigned char b64[48];
    int n = EVP_EncodeBlock(b64, d, sizeof d); /* 44 characters */
    (void)snprintf(css_hash, sizeof css_hash, "'sha256-%.*s'", n, (const char *)b64);
}

const char *text_css_csp_hash(void)
{
    pthread_once(&css_once, css_hash_init);
    return css_hash;
}
