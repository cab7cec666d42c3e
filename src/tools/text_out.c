/*
 * The counting writer and the transcript escapes (text_out.h), and the
 * one stylesheet of the HTML renderings.
 */
#include "tools/text_out.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "page/base64.h"
#include "page/digest.h"
#include "store/store.h"

void text_out_init(text_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->f = f;
}

void text_out_write(text_out *o, const char *p, size_t n)
{
    if (o->err || n == 0)
        return;
    if (o->term) {
        text_term_write(o->f, p, n);
        if (ferror(o->f))
            o->err = MCPAGE_EIO;
    } else if (fwrite(p, 1, n, o->f) != n) {
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

/*
 * Markdown. The rule: transcript bytes never become Markdown or HTML
 * syntax. Outside code every character CommonMark (and GFM) reads as
 * syntax is escaped, so a message renders as the text it is; what stays
 * code is re-emitted by us, so its extent is ours and not the renderer's
 * guess: a fenced block becomes our own fence at column 0 (longer than
 * any backtick run inside it), an inline code span is kept only when it
 * closes on its own line and holds no `|` (GFM splits table cells first).
 */

/* ASCII punctuation: what a CommonMark backslash escapes. */
static bool md_punct(unsigned char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

static bool md_alnum(char c)
{
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9');
}

static size_t md_run(const char *s, size_t n, size_t i, char ch)
{
    size_t k = i;
    while (k < n && s[k] == ch)
        k++;
    return k - i;
}

/*
 * A fence line: up to 3 spaces, then 3 or more ` or ~ (a backtick
 * fence's info string holds no backtick). Its char, its length, its
 * indent, and where its info string starts.
 */
static bool fence_line(const char *s, size_t n, char *ch, size_t *len, size_t *indent, size_t *info)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    if (i >= n || (s[i] != '`' && s[i] != '~'))
        return false;
    size_t k = md_run(s, n, i, s[i]);
    if (k < 3)
        return false;
    if (s[i] == '`' && memchr(s + i + k, '`', n - i - k) != NULL)
        return false;
    *ch = s[i];
    *len = k;
    *indent = i;
    *info = i + k;
    return true;
}

/* A closing fence for (ch, len): up to 3 spaces, the run, then only blanks. */
static bool fence_closes(const char *s, size_t n, char ch, size_t len)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    size_t k = md_run(s, n, i, ch);
    if (k < len || k < 3)
        return false;
    for (i += k; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* Where the span opened by the run at s[i..i+run) closes on this line (its end), or 0. */
static size_t span_close(const char *s, size_t n, size_t i, size_t run)
{
    for (size_t j = i + run; j < n;) {
        size_t r = md_run(s, n, j, '`');
        if (r == run) {
            bool pipe = memchr(s + i + run, '|', j - i - run) != NULL;
            return pipe ? 0 : j + r;
        }
        j += r ? r : 1;
    }
    return 0;
}

/*
 * One line of text, every syntax character escaped. `spans`: inline code
 * spans of the line are kept (prose); `block`: the line starts a block
 * line (indentation and block markers are handled), else it is a value
 * inside one of ours (a heading, a list item, a table cell).
 */
static void md_escape_line(text_out *o, const char *s, size_t n, bool spans, bool block)
{
    size_t i = 0, start = 0;
    if (block) {
        /* leading blanks as no-break spaces: never an indented code block */
        for (; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
            for (int k = s[i] == '\t' ? 4 : 1; k > 0; k--)
                text_out_puts(o, "\xC2\xA0");
        start = i;
    }
    size_t first = i; /* the line's first character after its indent */
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        const char *sub = NULL;
        size_t skip = 1;
        if (c == '`') {
            size_t run = md_run(s, n, i, '`');
            size_t close = spans && !(i == first && run >= 3) ? span_close(s, n, i, run) : 0;
            if (close) { /* a code span: copied as is, its bytes are literal */
                text_out_plain(o, s + start, close - start);
                start = i = close;
                continue;
            }
            text_out_plain(o, s + start, i - start);
            for (size_t k = 0; k < run; k++)
                text_out_puts(o, "\\`");
            start = i += run;
            continue;
        }
        if (c == '<') {
            sub = "&lt;";
        } else if (c == '>' && i == first) {
            sub = "&gt;";
        } else if (c == '&' && i + 1 < n &&
                   (s[i + 1] == '#' || ((s[i + 1] | 0x20) >= 'a' && (s[i + 1] | 0x20) <= 'z'))) {
            sub = "&amp;"; /* not an entity reference */
        } else if (c == '\\') {
            if (i + 1 >= n || md_punct((unsigned char)s[i + 1]))
                sub = "\\\\";
        } else if (c == '_' && i > first && i + 1 < n && md_alnum(s[i - 1]) && md_alnum(s[i + 1])) {
            /* snake_case: an underscore inside a word never opens or closes emphasis */
        } else if (c == '*' || c == '_' || c == '[' || c == ']' || c == '|' || c == '~') {
            skip = 0; /* escaped below */
        } else if (i == first && (c == '#' || c == '-' || c == '+' || c == '=')) {
            skip = 0;
        } else if ((c == '.' || c == ')') && i > first) {
            size_t d = first;
            while (d < i && s[d] >= '0' && s[d] <= '9')
                d++;
            if (d == i) /* "12." or "3)" at the line's start: an ordered list */
                skip = 0;
        }
        if (sub || skip == 0) {
            text_out_plain(o, s + start, i - start);
            if (sub) {
                text_out_puts(o, sub);
            } else {
                text_out_write(o, "\\", 1);
                text_out_write(o, s + i, 1);
            }
            start = ++i;
            continue;
        }
        i++;
    }
    text_out_plain(o, s + start, n - start);
}

void text_out_md_inline(text_out *o, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = i;
        while (k < n && s[k] != '\n' && s[k] != '\r')
            k++;
        md_escape_line(o, s + i, k - i, false, false);
        if (k < n)
            text_out_puts(o, " ");
        i = k + 1;
    }
}

/* A blank line (only spaces and tabs). */
static bool md_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* The line at s[i..n): its length without the newline (and a CR before it), and the next start. */
static size_t md_next_line(const char *s, size_t n, size_t i, size_t *len)
{
    const char *nl = memchr(s + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - s) : n;
    *len = end - i;
    if (nl && *len > 0 && s[end - 1] == '\r')
        (*len)--;
    return nl ? end + 1 : n;
}

/* The fenced block of s starting at line `i` (opened by `ch` x `flen`): its end. */
static size_t md_block_end(const char *s, size_t n, size_t i, char ch, size_t flen, size_t *body,
                           size_t *body_end)
{
    size_t len;
    size_t next = md_next_line(s, n, i, &len);
    *body = *body_end = next;
    while (next < n) {
        size_t at = next;
        next = md_next_line(s, n, at, &len);
        if (fence_closes(s + at, len, ch, flen))
            return next; /* a fence left open runs to the end of the text */
        *body_end = next;
    }
    return n;
}

/* Our fence around s's lines [body, body_end), each with up to `indent` spaces removed. */
static void md_code_block(text_out *o, const char *s, size_t body, size_t body_end, size_t indent,
                          const char *info, size_t info_len)
{
    size_t k = text_longest_backticks(s + body, body_end - body) + 1;
    if (k < 3)
        k = 3;
    for (size_t j = 0; j < k; j++)
        text_out_write(o, "`", 1);
    /* the language, when it is a plain word: it becomes a class name */
    size_t w = 0;
    while (w < info_len && w < 32 &&
           (((info[w] | 0x20) >= 'a' && (info[w] | 0x20) <= 'z') ||
            (info[w] >= '0' && info[w] <= '9') || info[w] == '+' || info[w] == '-' ||
            info[w] == '_' || info[w] == '.' || info[w] == '#'))
        w++;
    if (w > 0 && (w == info_len || info[w] == ' ' || info[w] == '\t'))
        text_out_write(o, info, w);
    text_out_write(o, "\n", 1);
    for (size_t i = body; i < body_end;) {
        size_t len;
        size_t next = md_next_line(s, body_end, i, &len);
        size_t cut = 0;
        while (cut < indent && cut < len && s[i + cut] == ' ')
            cut++;
        text_out_plain(o, s + i + cut, len - cut);
        text_out_write(o, "\n", 1);
        i = next;
    }
    for (size_t j = 0; j < k; j++)
        text_out_write(o, "`", 1);
}

/* True when the line at s[i..n) ends a paragraph: absent, blank, or a fence. */
static bool md_paragraph_ends(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return true;
    size_t len, a, b, c;
    char ch;
    (void)md_next_line(s, n, i, &len);
    return md_blank(s + i, len) || fence_line(s + i, len, &ch, &a, &b, &c);
}

void text_out_markdown(text_out *o, const char *s, size_t n)
{
    size_t i = 0;
    bool wrote = false, block = false;
    while (i < n) {
        size_t len, flen, indent, info;
        size_t next = md_next_line(s, n, i, &len);
        char ch;
        if (wrote) /* the line before ends; a blank line after a code block */
            text_out_write(o, "\n\n", block ? 2 : 1);
        wrote = true;
        block = fence_line(s + i, len, &ch, &flen, &indent, &info);
        if (block) {
            size_t body, body_end;
            next = md_block_end(s, n, i, ch, flen, &body, &body_end);
            while (info < len && (s[i + info] == ' ' || s[i + info] == '\t'))
                info++;
            text_out_write(o, "\n", 1); /* a blank line before it */
            md_code_block(o, s, body, body_end, indent, s + i + info, len - info);
        } else if (!md_blank(s + i, len)) {
            md_escape_line(o, s + i, len, true, true);
            if (!md_paragraph_ends(s, n, next))
                text_out_write(o, "\\", 1); /* a hard break keeps the line's end */
        }
        i = next;
    }
}

/* ------------------------------------------------------------ the terminal */

/* ------------------------------------------------------------ the stylesheet */

const char text_hit_open[] = STORE_HIT_OPEN;
const char text_hit_close[] = STORE_HIT_CLOSE;

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

void text_csp_hash(char *out, size_t cap, const char *a, const char *b)
{
    uint8_t d[SHA256_LEN];
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, a, strlen(a));
    sha256_update(&c, b, strlen(b));
    sha256_final(&c, d);
    char b64[48];
    size_t n = b64_encode(d, sizeof d, b64, false); /* 44 characters */
    (void)snprintf(out, cap, "'sha256-%.*s'", (int)n, b64);
}

static void css_hash_init(void)
{
    text_csp_hash(css_hash, sizeof css_hash, text_css, "");
}

const char *text_css_csp_hash(void)
{
    pthread_once(&css_once, css_hash_init);
    return css_hash;
}
