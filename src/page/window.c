/*
 * The pager and what all page builders share: window parameters parsed
 * with the contract's rules (omitted: default; above the maximum: lowered
 * and disclosed; invalid: an isError result naming the parameter, the
 * value received, the valid range and an example call), budget checks,
 * hint clauses, and writing both copies into a result.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/page_internal.h"
#include "page/result_internal.h"
#include "page/tokens.h"
#include "page/utf8.h"

/* ------------------------------------------------------------ pager */

void mcpage_pager_config_init(mcpage_pager_config *cfg)
{
    cfg->default_tokens = MCPAGE_DEFAULT_TOKENS;
    cfg->max_tokens = MCPAGE_MAX_TOKENS;
    cfg->min_tokens = MCPAGE_MIN_TOKENS;
    cfg->max_chars = MCPAGE_MAX_CHARS;
    cfg->text_mode = MCPAGE_TEXT_LINES;
}

int mcpage_pager_new(const mcpage_pager_config *cfg, const mcpage_keyring *kr, mcpage_pager **out)
{
    if (out == NULL || kr == NULL)
        return MCPAGE_EINVAL;
    *out = NULL;
    mcpage_pager_config c;
    if (cfg)
        c = *cfg;
    else
        mcpage_pager_config_init(&c);
    /* The envelope alone needs a few hundred tokens; below that no page fits. */
    if (c.min_tokens < 100 || c.default_tokens < c.min_tokens || c.max_tokens < c.default_tokens ||
        c.max_tokens > PAGE_MAX_SAFE_INT || c.max_chars < 1000 ||
        c.max_chars > (INT64_C(1) << 40) ||
        (c.text_mode != MCPAGE_TEXT_LINES && c.text_mode != MCPAGE_TEXT_STRUCTURED))
        return MCPAGE_EINVAL;
    mcpage_pager *p = mcpage__calloc(1, sizeof *p);
    if (p == NULL)
        return MCPAGE_ENOMEM;
    p->cfg = c;
    p->kr = kr;
    *out = p;
    return MCPAGE_OK;
}

void mcpage_pager_free(mcpage_pager *p)
{
    mcpage__free(p);
}

const mcpage_keyring *mcpage_pager_keyring(const mcpage_pager *p)
{
    return p ? p->kr : NULL;
}

const mcpage_pager_config *mcpage_pager_settings(const mcpage_pager *p)
{
    return p ? &p->cfg : NULL;
}

/* ------------------------------------------------------------- tbuf */

void tb_init(tbuf *t)
{
    dbuf_init(t, PAGE_TEXT_MAX);
}

void tb_free(tbuf *t)
{
    dbuf_free(t);
}

void tb_reset(tbuf *t)
{
    dbuf_reset(t);
}

void tb_put(tbuf *t, const char *s, size_t n)
{
    dbuf_put(t, s, n);
}

void tb_puts(tbuf *t, const char *s)
{
    dbuf_puts(t, s);
}

void tb_printf(tbuf *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dbuf_vprintf(t, fmt, ap);
    va_end(ap);
}

void tb_json(tbuf *t, const json_t *v)
{
    jw w;
    jw_init(&w, (size_t)1 << 30);
    jw_json(&w, v);
    if (w.err)
        t->err = t->err ? t->err : w.err;
    else
        tb_put(t, w.buf, w.len);
    jw_free(&w);
}

/* -------------------------------------------------------- page_base */

int page_base_init(page_base *b, const mcpage_pager *p, const char *tool, const json_t *args,
                   const char *const *window)
{
    memset(b, 0, sizeof *b);
    b->pager = p;
    b->tool = tool;
    b->window = window;
    b->max_tokens = p->cfg.default_tokens;
    b->meter_tokens = page_meter_tokens(b->max_tokens);
    b->max_chars = p->cfg.max_chars;
    tb_init(&b->notes);
    if (args && !json_is_null(args)) {
        b->args = json_incref((json_t *)args);
        if (!json_is_object(args))
            return page_reject(b, "invalid_argument", "arguments", args,
                               "a JSON object of named arguments",
                               "{} (an empty object: every parameter at its default)", NULL);
    }
    return MCPAGE_OK;
}

void page_base_free(page_base *b)
{
    json_decref(b->args);
    json_decref(b->error);
    mcpage__free(b->error_text);
    tb_free(&b->notes);
    memset(b, 0, sizeof *b);
}

/* The decimal digits of u at the end of buf[24]; returns where they start. */
static char *digits_of(uint64_t u, char buf[24])
{
    char *q = buf + 24;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return q;
}

void tb_int(tbuf *t, int64_t v)
{
    char buf[24];
    if (v < 0)
        tb_put(t, "-", 1);
    char *q = digits_of(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, buf);
    tb_put(t, q, (size_t)(buf + sizeof buf - q));
}

const char *page_fmt_int(int64_t v, char buf[32])
{
    char digits_buf[24];
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    const char *digits = digits_of(u, digits_buf);
    int n = (int)(digits_buf + sizeof digits_buf - digits);
    size_t o = 0;
    if (v < 0)
        buf[o++] = '-';
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* The value received, made safe to echo: long strings and containers cut. */
static json_t *echo_value(const json_t *got)
{
    if (got == NULL)
        return json_null();
    if (json_is_string(got) || json_is_array(got) || json_is_object(got)) {
        jw w;
        jw_init(&w, 4096);
        const char *s;
        size_t n;
        if (json_is_string(got)) {
            s = json_string_value(got);
            n = json_string_length(got);
        } else {
            jw_json(&w, got);
            s = w.err ? "(a very large value)" : w.buf;
            n = w.err ? strlen(s) : w.len;
        }
        json_t *out;
        if (n > PAGE_GOT_MAX) {
            size_t cut = jw_utf8_floor(s, PAGE_GOT_MAX);
            char buf[PAGE_GOT_MAX + 8];
            memcpy(buf, s, cut);
            memcpy(buf + cut, "\xE2\x80\xA6", 3); /* an ellipsis marks the cut */
            out = json_stringn(buf, cut + 3);
        } else {
            out = json_stringn(s, n);
        }
        jw_free(&w);
        /* jansson refuses invalid UTF-8 (a C caller may have built such a
           string without checks); the echo then says so instead. */
        return out ? out : json_string("(not valid UTF-8)");
    }
    return json_deep_copy(got);
}

int page_reject(page_base *b, const char *code, const char *param, const json_t *got,
                const char *expected, const char *example, const char *reason)
{
    if (b->rejected)
        return MCPAGE_PAGE_REJECTED; /* the first problem is the one reported */
    b->rejected = true;
    json_t *echo = echo_value(got);
    tbuf t;
    tb_init(&t);
    if (reason)
        tb_printf(&t, "Invalid %s (%s): ", param, reason);
    else
        tb_printf(&t, "Invalid %s: ", param);
    if (got) {
        tb_puts(&t, "got ");
        tb_json(&t, echo);
        tb_puts(&t, ". ");
    }
    /* With a reason, `expected` is the remedy, a sentence of its own. */
    if (reason)
        tb_puts(&t, expected);
    else
        tb_printf(&t, "Expected %s.", expected);
    if (example)
        tb_printf(&t, " Example: %s with %s.", b->tool, example);
    char ex[512];
    if (example)
        snprintf(ex, sizeof ex, "%s with %s", b->tool, example);
    json_t *err = json_object();
    if (err) {
        json_object_set_new(err, "code", json_string(code));
        json_object_set_new(err, "param", json_string(param));
        if (reason)
            json_object_set_new(err, "reason", json_string(reason));
        if (got)
            json_object_set(err, "got", echo);
        json_object_set_new(err, "expected", json_string(expected));
        if (example)
            json_object_set_new(err, "example", json_string(ex));
        if (t.err == 0)
            json_object_set_new(err, "message", json_string(t.buf));
    }
    json_decref(echo);
    b->error = json_object();
    if (b->error && err)
        json_object_set(b->error, "error", err);
    json_decref(err);
    if (t.err == 0) {
        b->error_text = t.buf; /* taken */
    } else {
        tb_free(&t);
        b->error_text = NULL;
    }
    return MCPAGE_PAGE_REJECTED;
}

void page_note_clamp(page_base *b, const char *flag, const char *label, const json_t *got,
                     int64_t max)
{
    char g[40], m[32];
    if (b->nclamped < PAGE_MAX_CLAMPS)
        b->clamped[b->nclamped++] = flag;
    if (json_is_integer(got))
        page_fmt_int((int64_t)json_integer_value(got), g);
    else /* a real, possibly beyond any integer type: as written, near enough */
        snprintf(g, sizeof g, "%g", json_number_value(got));
    tb_printf(&b->notes, " %s %s was lowered to the maximum %s.", label, g, page_fmt_int(max, m));
}

/*
 * Reads an integral JSON number; false for anything else. A real beyond
 * the int64 range (1e300 is integral too) saturates: past a window's
 * maximum every such value means the same, the maximum.
 */
static bool json_to_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d != floor(d))
            return false;
        if (d >= 9223372036854775807.0)
            *out = INT64_MAX;
        else if (d <= -9223372036854775807.0)
            *out = INT64_MIN;
        else
            *out = (int64_t)d;
        return true;
    }
    return false;
}

int page_int_param(page_base *b, const json_t *obj, const char *name, const char *label,
                   const char *flag, int64_t def, int64_t min, int64_t clamp, const char *example,
                   int64_t *out)
{
    *out = def;
    const json_t *v = obj ? json_object_get(obj, name) : NULL;
    if (v == NULL || json_is_null(v))
        return MCPAGE_OK;
    int64_t iv = 0;
    bool ok = json_to_int(v, &iv) && iv >= min;
    if (!ok) {
        char expected[160], m[32], c[32], ex[96];
        if (clamp > 0)
            snprintf(expected, sizeof expected,
                     "an integer from %s to %s (larger values are lowered to %s)",
                     page_fmt_int(min, m), page_fmt_int(clamp, c), c);
        else
            snprintf(expected, sizeof expected, "an integer of at least %s", page_fmt_int(min, m));
        if (example == NULL)
            snprintf(ex, sizeof ex, "%s=%lld", label, (long long)def);
        return page_reject(b, "invalid_argument", label, v, expected, example ? example : ex, NULL);
    }
    /* Clamp, don't reject: any value above the maximum is lowered to it,
     * however large; a parameter without one (an offset, a start line) is
     * lowered to the largest integer every JSON reader holds exactly,
     * which is past the end of anything a page can reach. */
    int64_t max = clamp > 0 ? clamp : PAGE_MAX_SAFE_INT;
    if (iv > max) {
        page_note_clamp(b, flag, label, v, max);
        iv = max;
    }
    *out = iv;
    return MCPAGE_OK;
}

int page_max_tokens(page_base *b, int64_t *out)
{
    const mcpage_pager_config *c = &b->pager->cfg;
    int rc = page_int_param(b, b->args, "max_tokens", "max_tokens", "max_tokens_clamped",
                            c->default_tokens, c->min_tokens, c->max_tokens, NULL, out);
    if (rc == MCPAGE_OK) {
        b->max_tokens = *out;
        b->meter_tokens = page_meter_tokens(*out);
    }
    return rc;
}

int64_t page_meter_tokens(int64_t max_tokens)
{
    /* Rounded up: the margin is never less than its share. */
    return max_tokens - (max_tokens * PAGE_TOKENS_MARGIN_PCT + 99) / 100;
}

page_over page_verdict(const page_base *b, size_t tokens, size_t units)
{
    if ((int64_t)tokens > b->meter_tokens)
        return PAGE_OVER_TOKENS;
    if ((int64_t)units > b->max_chars)
        return PAGE_OVER_CHARS;
    return PAGE_FITS;
}

page_over page_measure(const page_base *b, const char *s, size_t n)
{
    if ((int64_t)mcpage__tokens_estimate(s, n) > b->meter_tokens)
        return PAGE_OVER_TOKENS;
    size_t units = 0;
    jw_measure_utf8(s, n, NULL, &units);
    if ((int64_t)units > b->max_chars)
        return PAGE_OVER_CHARS;
    return PAGE_FITS;
}

page_over page_measure_copies(const page_base *b, const jw *s, const tbuf *t)
{
    page_over o = page_measure(b, s->buf, s->len);
    if (o != PAGE_FITS || b->pager->cfg.text_mode == MCPAGE_TEXT_STRUCTURED)
        return o;
    return page_measure(b, t->buf, t->len);
}

const char *page_over_name(page_over o)
{
    return o == PAGE_OVER_CHARS ? "max_chars" : "max_tokens";
}

static bool is_window_param(const page_base *b, const char *key)
{
    for (const char *const *w = b->window; w && *w; w++)
        if (strcmp(*w, key) == 0)
            return true;
    return false;
}

void page_same_args(const page_base *b, tbuf *t)
{
    if (b->args == NULL)
        return;
    const char *names[8];
    size_t n = 0, more = 0;
    const char *key;
    json_t *val;
    json_object_foreach(b->args, key, val)
    {
        if (json_is_null(val) || is_window_param(b, key))
            continue;
        if (n < 8)
            names[n++] = key;
        else
            more++;
    }
    if (n == 0)
        return;
    tb_puts(t, " and the same ");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            tb_puts(t, i + 1 == n && more == 0 ? " and " : ", ");
        tb_puts(t, names[i]);
    }
    if (more)
        tb_puts(t, " and the other arguments");
}

void page_given_size(const page_base *b, tbuf *t, const char *name, int64_t used)
{
    const json_t *v = b->args ? json_object_get(b->args, name) : NULL;
    /* The runtime may fill in a default the caller never gave: unsaid. */
    if (strcmp(name, "max_tokens") == 0 && used == b->pager->cfg.default_tokens)
        return;
    if (v && !json_is_null(v)) {
        tb_puts(t, ", ");
        tb_puts(t, name);
        tb_puts(t, "=");
        tb_int(t, used);
    }
}

void page_write_clamps(const page_base *b, jw *w)
{
    for (int i = 0; i < b->nclamped; i++) {
        bool seen = false;
        for (int k = 0; k < i; k++)
            seen = seen || strcmp(b->clamped[k], b->clamped[i]) == 0;
        if (!seen)
            jw_kv_bool(w, b->clamped[i], true);
    }
}

#ifndef NDEBUG
/* True when `block` holds what mcpage__result_take_text makes of t. */
static bool block_is_text(const jw *block, const tbuf *t)
{
    jw ref;
    jw_init(&ref, 0);
    jw_object_begin(&ref);
    jw_kv_string(&ref, "type", "text");
    jw_key(&ref, "text");
    jw_stringn(&ref, t->buf ? t->buf : "", t->len);
    jw_object_end(&ref);
    if (ref.err) {
        jw_free(&ref);
        return true; /* out of memory for the check itself: nothing to compare */
    }
    bool same = block->err == 0 && ref.len == block->len &&
                memcmp(ref.buf, block->buf, ref.len) == 0 && ref.codepoints == block->codepoints &&
                ref.utf16 == block->utf16;
    jw_free(&ref);
    return same;
}
#endif

int page_write_result(const page_base *b, mcpage_result *res, jw *s, tbuf *t)
{
    return page_write_result_block(b, res, s, t, NULL);
}

int page_write_result_block(const page_base *b, mcpage_result *res, jw *s, tbuf *t, jw *block)
{
    mcpage_result_clear(res);
    if (s->err || t->err)
        return s->err ? s->err : t->err;
    int rc;
    /* Both copies change hands without being copied; the structured one
       keeps the counts its writer made. */
    size_t cps = s->codepoints, units = s->utf16, slen, tlen;
    if (b->pager->cfg.text_mode == MCPAGE_TEXT_STRUCTURED) {
        rc = mcpage_result_add_text(res, s->buf ? s->buf : "", s->len);
    } else if (block && block->err == 0) {
        assert(block_is_text(block, t));
        char *text = dbuf_take(t, &tlen);
        rc = text ? mcpage__result_take_text_block(res, text, tlen, block) : MCPAGE_ENOMEM;
    } else {
        char *text = dbuf_take(t, &tlen);
        rc = text ? mcpage__result_take_text(res, text, tlen) : MCPAGE_ENOMEM;
    }
    if (rc == 0) {
        char *json = jw_take(s, &slen);
        if (json == NULL)
            rc = MCPAGE_ENOMEM;
        else
            mcpage__result_take_structured(res, json, slen, cps, units);
    }
    if (rc)
        mcpage_result_clear(res);
    return rc;
}

int page_write_rejection(const page_base *b, mcpage_result *res)
{
    if (b->error == NULL || b->error_text == NULL)
        return MCPAGE_ENOMEM;
    mcpage_result_clear(res);
    int rc = mcpage_result_add_text(res, b->error_text, strlen(b->error_text));
    if (rc == 0)
        rc = mcpage_result_set_structured(res, b->error);
    mcpage_result_set_error(res, true);
    return rc;
}

/* Bytes of the valid character at p[0..n), or 0 when it is not valid UTF-8. */
static size_t utf8_valid_len(const unsigned char *p, size_t n)
{
    return p[0] < 0x80 ? 1 : utf8_seq_len(p, n);
}

bool page_is_text(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    for (size_t i = 0; i < n;) {
        uint64_t x;
        /* Eight bytes at a time while they are ASCII and none is zero. */
        if (n - i >= 8) {
            memcpy(&x, p + i, 8);
            uint64_t stop = (x | ((x - ones) & ~x)) & high;
            if (stop == 0) {
                i += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* The ASCII bytes before the first that stops the word (the
               lowest flagged lane is exact), skipped at once. */
            i += (size_t)__builtin_ctzll(stop) / 8;
#endif
        }
        if (p[i] == 0)
            return false;
        size_t len = utf8_valid_len(p + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

size_t page_utf8_char_len(const char *s, size_t n)
{
    size_t len = utf8_valid_len((const unsigned char *)s, n);
    return len ? len : 1;
}

size_t page_utf8_skip(const char *s, size_t n, int64_t chars)
{
    size_t i = 0;
    for (int64_t k = 0; k < chars && i < n; k++)
        i += page_utf8_char_len(s + i, n - i);
    return i;
}

size_t page_tokens(const char *s, size_t n)
{
    return mcpage__tokens_estimate(s, n);
}

void page_trim_hint(tbuf *t)
{
    if (t->err == 0 && t->len && t->buf[0] == ' ') {
        memmove(t->buf, t->buf + 1, t->len);
        t->len--;
    }
}
