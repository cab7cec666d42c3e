/*
 * The CONTENT-byte page builder: raw bytes walked by offset. The tool
 * hands the bytes of the window; the builder sends them as text (key
 * `text`, encoding "utf-8") when they are valid UTF-8 without NUL bytes,
 * never cutting inside a character, and otherwise as base64 (key `data`,
 * encoding "base64"). It keeps the longest prefix whose copies both fit
 * the budget (at least one unit, so every page makes progress).
 */
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/page_internal.h"

/* The window a tool may hand at once. */
#define BYTES_MAX ((size_t)64 << 20)

static const char *const bytes_window[] = {"offset", "max_bytes", "max_tokens", NULL};

struct mcpage_bytes {
    page_base b;                   /* shared state */
    const mcpage_bytes_spec *spec; /* the tool's description */
    mcpage_bytes_window win;       /* what the tool reads */
    bool set;                      /* mcpage_bytes_set was called */
    uint8_t *data;                 /* the window's bytes (owned) */
    size_t len;                    /* bytes in data (at most max_bytes) */
    int64_t total;                 /* total_bytes of the document */
    bool text;                     /* sent as UTF-8 text, else base64 */
    char *b64;                     /* scratch for the base64 form */
};

static void bytes_free(mcpage_bytes *pg)
{
    if (pg == NULL)
        return;
    mcpage__free(pg->data);
    mcpage__free(pg->b64);
    page_base_free(&pg->b);
    mcpage__free(pg);
}

void mcpage_bytes_abort(mcpage_bytes *pg)
{
    bytes_free(pg);
}

int mcpage_bytes_begin(const mcpage_pager *p, const mcpage_bytes_spec *spec, const json_t *args,
                       mcpage_bytes **out)
{
    if (out == NULL)
        return MCPAGE_EINVAL;
    *out = NULL;
    if (p == NULL || spec == NULL || spec->tool == NULL || spec->default_max_bytes < 1 ||
        spec->max_max_bytes < spec->default_max_bytes || spec->max_max_bytes > (int64_t)BYTES_MAX)
        return MCPAGE_EINVAL;
    mcpage_bytes *pg = mcpage__calloc(1, sizeof *pg);
    if (pg == NULL)
        return MCPAGE_ENOMEM;
    pg->spec = spec;
    int rc = page_base_init(&pg->b, p, spec->tool, args, bytes_window);
    pg->win.args = pg->b.args;
    pg->win.max_bytes = spec->default_max_bytes;
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "offset", "offset", "offset_clamped", 0, 0, 0, NULL,
                            &pg->win.offset);
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "max_bytes", "max_bytes", "max_bytes_clamped",
                            spec->default_max_bytes, 1, spec->max_max_bytes, NULL,
                            &pg->win.max_bytes);
    if (rc == 0)
        rc = page_max_tokens(&pg->b, &pg->win.max_tokens);
    if (rc < 0) {
        bytes_free(pg);
        return rc;
    }
    *out = pg;
    return rc;
}

const mcpage_bytes_window *mcpage_bytes_window_get(const mcpage_bytes *pg)
{
    return &pg->win;
}

int mcpage_bytes_set(mcpage_bytes *pg, const void *data, size_t len, int64_t total_bytes)
{
    if (pg == NULL || (data == NULL && len > 0) || total_bytes < 0)
        return MCPAGE_EINVAL;
    if (pg->b.rejected)
        return MCPAGE_ESTATE;
    if (len > (size_t)pg->win.max_bytes)
        len = (size_t)pg->win.max_bytes;
    int64_t avail = total_bytes > pg->win.offset ? total_bytes - pg->win.offset : 0;
    if ((int64_t)len > avail)
        len = (size_t)avail;
    uint8_t *copy = mcpage__malloc(len ? len : 1);
    if (copy == NULL)
        return MCPAGE_ENOMEM;
    if (len)
        memcpy(copy, data, len);
    mcpage__free(pg->data);
    pg->data = copy;
    pg->len = len;
    pg->total = total_bytes;
    pg->set = true;
    return MCPAGE_OK;
}

/* ------------------------------------------------------------- render */

static bool bytes_past_end(const mcpage_bytes *pg)
{
    return pg->win.offset > 0 && pg->win.offset >= pg->total;
}

static void bytes_hint(const mcpage_bytes *pg, size_t k, bool has_more, tbuf *t)
{
    char a[32], b[32];
    if (has_more) {
        tb_printf(t, " Next page: %s with offset=%lld", pg->b.tool,
                  (long long)(pg->win.offset + (int64_t)k));
        page_given_size(&pg->b, t, "max_bytes", pg->win.max_bytes);
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    } else if (bytes_past_end(pg)) {
        int64_t last = pg->total > pg->win.max_bytes ? pg->total - pg->win.max_bytes : 0;
        tb_printf(t, " offset %s is past the end of the %s bytes; the last page starts at ",
                  page_fmt_int(pg->win.offset, a), page_fmt_int(pg->total, b));
        tb_printf(t, "offset %lld: %s with offset=%lld", (long long)last, pg->b.tool,
                  (long long)last);
        page_given_size(&pg->b, t, "max_bytes", pg->win.max_bytes);
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    }
    if (pg->b.notes.len)
        tb_put(t, pg->b.notes.buf, pg->b.notes.len);
    if (has_more && pg->spec->narrow_hint)
        tb_printf(t, " %s", pg->spec->narrow_hint);
    page_trim_hint(t);
}

static int bytes_render(mcpage_bytes *pg, size_t k, bool has_more, const char *why, jw *s, tbuf *t)
{
    tbuf h;
    tb_init(&h);
    bytes_hint(pg, k, has_more, &h);
    const char *body;
    size_t blen;
    if (pg->text) {
        body = (const char *)pg->data;
        blen = k;
    } else {
        blen = b64_encode(pg->data, k, pg->b64, false);
        body = pg->b64;
    }
    jw_reset(s);
    jw_object_begin(s);
    jw_key(s, pg->text ? "text" : "data");
    jw_stringn(s, body ? body : "", blen);
    jw_kv_string(s, "encoding", pg->text ? "utf-8" : "base64");
    jw_kv_int(s, "returned", (int64_t)k);
    jw_kv_int(s, "total_bytes", pg->total);
    jw_kv_bool(s, "has_more", has_more);
    jw_kv_int(s, "offset", pg->win.offset);
    jw_kv_int(s, "max_bytes", pg->win.max_bytes);
    jw_kv_string(s, "stopped_by", why);
    if (has_more)
        jw_kv_int(s, "next_offset", pg->win.offset + (int64_t)k);
    page_write_clamps(&pg->b, s);
    if (h.len && h.err == 0)
        jw_kv_string(s, "hint", h.buf);
    jw_object_end(s);

    tb_reset(t);
    if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES) {
        char a[32], b[32], c[32];
        if (k == 0) {
            tb_printf(t, "0 of %s bytes (offset %s, %s).", page_fmt_int(pg->total, a),
                      page_fmt_int(pg->win.offset, b),
                      bytes_past_end(pg) ? "past the end" : "the end of the document");
        } else {
            tb_printf(t, "Bytes %s-%s of %s (%s; ", page_fmt_int(pg->win.offset, a),
                      page_fmt_int(pg->win.offset + (int64_t)k - 1, b), page_fmt_int(pg->total, c),
                      pg->text ? "utf-8 text" : "binary, base64");
            if (strcmp(why, "limit") == 0)
                tb_printf(t, "stopped at the %s-byte limit).", page_fmt_int(pg->win.max_bytes, a));
            else if (strcmp(why, "max_tokens") == 0)
                tb_printf(t, "stopped at the %s-token budget).", page_fmt_int(pg->b.max_tokens, a));
            else if (strcmp(why, "max_chars") == 0)
                tb_printf(t, "stopped at the %s-character ceiling).",
                          page_fmt_int(pg->b.max_chars, a));
            else
                tb_puts(t, "the end of the document).");
        }
        if (k) {
            tb_put(t, "\n", 1);
            tb_put(t, body, blen);
        }
        if (h.len) {
            tb_put(t, "\n", 1);
            tb_put(t, h.buf, h.len);
        }
    }
    int err = s->err ? s->err : t->err ? t->err : h.err;
    tb_free(&h);
    return err;
}

/* ------------------------------------------------------------ finish */

/* The largest unit boundary at or below k (a character start for text). */
static size_t floor_unit(const mcpage_bytes *pg, size_t k)
{
    return pg->text ? jw_utf8_floor((const char *)pg->data, k) : k;
}

int mcpage_bytes_finish(mcpage_bytes *pg, mcpage_result *res)
{
    if (pg == NULL || res == NULL) {
        bytes_free(pg);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected) {
        int rc = page_write_rejection(&pg->b, res);
        bytes_free(pg);
        return rc;
    }
    if (!pg->set || (pg->len == 0 && pg->win.offset < pg->total)) {
        bytes_free(pg);
        return MCPAGE_ESTATE; /* no total, or bytes that exist were not handed */
    }
    /* Text when the window (less a character cut by its end) is UTF-8. */
    size_t n = pg->len;
    bool at_end = pg->win.offset + (int64_t)n >= pg->total;
    size_t tn = at_end ? n : jw_utf8_floor((const char *)pg->data, n);
    pg->text = tn > 0 && page_is_text((const char *)pg->data, tn);
    if (pg->text)
        n = tn;
    else if (n > 0)
        pg->text = false;
    if (n == 0)
        pg->text = true; /* an empty page is empty text */
    pg->b64 = mcpage__malloc(b64_encoded_len(pg->len, false) + 1);
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int rc = pg->b64 ? MCPAGE_OK : MCPAGE_ENOMEM;
    size_t k = n;
    const char *why = pg->win.offset + (int64_t)n >= pg->total ? "end" : "limit";
    if (rc == 0)
        rc = bytes_render(pg, k, pg->win.offset + (int64_t)k < pg->total, why, &s, &t);
    page_over o = rc == 0 ? page_measure_copies(&pg->b, &s, &t) : PAGE_FITS;
    if (rc == 0 && o != PAGE_FITS && n > 0) {
        /* Binary search for the longest prefix that fits, one unit at least. */
        const char *over = page_over_name(o);
        size_t lo = pg->text ? page_utf8_char_len((const char *)pg->data, n) : 1;
        size_t hi = n - 1;
        size_t ceiling = (size_t)pg->b.max_chars * 4;
        if ((size_t)pg->b.max_tokens * 16 < ceiling)
            ceiling = (size_t)pg->b.max_tokens * 16;
        if (hi > ceiling)
            hi = ceiling;
        while (lo < hi && rc == 0) {
            size_t mid = floor_unit(pg, lo + (hi - lo + 1) / 2);
            if (mid <= lo) {
                mid = lo + (pg->text ? page_utf8_char_len((const char *)pg->data + lo, n - lo) : 1);
                if (mid > hi)
                    break;
            }
            rc = bytes_render(pg, mid, true, over, &s, &t);
            if (rc == 0 && page_measure_copies(&pg->b, &s, &t) == PAGE_FITS)
                lo = mid;
            else
                hi = mid - 1;
        }
        k = floor_unit(pg, lo);
        if (k == 0)
            k = pg->text ? page_utf8_char_len((const char *)pg->data, n) : 1;
        if (rc == 0)
            rc = bytes_render(pg, k, true, over, &s, &t);
    }
    if (rc == 0)
        rc = page_write_result(&pg->b, res, &s, &t);
    jw_free(&s);
    tb_free(&t);
    bytes_free(pg);
    return rc;
}
