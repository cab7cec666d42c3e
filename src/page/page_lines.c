/*
 * The CONTENT-line page builder: text walked by lines. The tool hands
 * whole lines from window->start_line on; the builder skips to
 * start_column inside the first one, stops at max_lines or the budget,
 * and splits a line longer than the whole budget, resuming inside it with
 * next_start_column. Columns count characters (Unicode code points).
 *
 * The text copy numbers its lines like `cat -n`: the number right-aligned
 * in six columns, a tab, the line.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/dbuf.h"
#include "page/page_internal.h"

/* Exact measurements per page when the running estimate says "full". */
#define LINES_EXACT_CHECKS 3
/* A line is refused past this size. */
#define LINES_LINE_MAX ((size_t)256 << 20)

static const char *const lines_window[] = {"start_line", "start_column", "max_lines", "max_tokens",
                                           NULL};

typedef struct line_frag {
    char *text;        /* the part of the line on this page (owned) */
    size_t len;        /* bytes in text */
    char *full;        /* the whole rest of the line, kept for the first fragment only */
    size_t full_len;   /* bytes in full */
    int64_t number;    /* 1-based line number */
    int64_t start_col; /* 1-based character where text starts */
    bool cut;          /* the line goes on past text */
} line_frag;

struct mcpage_lines {
    page_base b;                   /* shared state */
    const mcpage_lines_spec *spec; /* the tool's description */
    mcpage_lines_window win;       /* what the tool reads */
    bool total_set;                /* set_total was called */
    int64_t total;                 /* total_lines */
    line_frag *frags;              /* lines on the page, in order */
    size_t n;                      /* lines on the page */
    size_t cap;                    /* lines allocated */
    int64_t next_number;           /* number of the next line the tool adds */
    bool full;                     /* the page is complete */
    bool stopped_early;            /* the budget ended the page before the line window */
    const char *stopped_by;        /* why, when stopped_early */
    int64_t resume_line;           /* where the next page starts, when stopped_early */
    int64_t resume_col;            /* 1-based column there */
    size_t sum_tokens;             /* running token estimate of the lines */
    size_t sum_chars;              /* running UTF-16 units of the lines */
    size_t reserve_tokens;         /* estimated envelope cost, tokens */
    size_t reserve_chars;          /* estimated envelope cost, UTF-16 units */
    int exact_checks;              /* exact measurements made by add */
};

static void lines_free(mcpage_lines *pg)
{
    if (pg == NULL)
        return;
    for (size_t i = 0; i < pg->n; i++) {
        mcpage__free(pg->frags[i].text);
        mcpage__free(pg->frags[i].full);
    }
    mcpage__free(pg->frags);
    page_base_free(&pg->b);
    mcpage__free(pg);
}

void mcpage_lines_abort(mcpage_lines *pg)
{
    lines_free(pg);
}

/* ------------------------------------------------------------- render */

typedef struct lines_view {
    size_t n;          /* fragments on the page */
    bool has_more;     /* the walk goes on */
    const char *why;   /* stopped_by */
    int64_t next_line; /* next_start_line when has_more */
    int64_t next_col;  /* next_start_column (1 when at a line start) */
} lines_view;

static bool past_end(const mcpage_lines *pg)
{
    return pg->n == 0 && pg->win.start_line > pg->total &&
           !(pg->total == 0 && pg->win.start_line == 1);
}

static void lines_hint(const mcpage_lines *pg, const lines_view *v, tbuf *t)
{
    char a[32], b[32];
    if (v->has_more) {
        tb_printf(t, " Next page: %s with start_line=%lld", pg->b.tool, (long long)v->next_line);
        if (v->next_col > 1)
            tb_printf(t, ", start_column=%lld", (long long)v->next_col);
        page_given_size(&pg->b, t, "max_lines", pg->win.max_lines);
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    } else if (past_end(pg)) {
        int64_t last = pg->total > pg->win.max_lines ? pg->total - pg->win.max_lines + 1 : 1;
        tb_printf(t, " start_line %s is past the end of the %s lines; the last page starts at ",
                  page_fmt_int(pg->win.start_line, a), page_fmt_int(pg->total, b));
        tb_printf(t, "start_line %lld: %s with start_line=%lld", (long long)last, pg->b.tool,
                  (long long)last);
        page_given_size(&pg->b, t, "max_lines", pg->win.max_lines);
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    }
    if (pg->b.notes.len)
        tb_put(t, pg->b.notes.buf, pg->b.notes.len);
    if (v->has_more && pg->spec->narrow_hint)
        tb_printf(t, " %s", pg->spec->narrow_hint);
    page_trim_hint(t);
}

static void lines_summary(const mcpage_lines *pg, const lines_view *v, tbuf *t)
{
    char a[32], b[32], c[32];
    if (v->n == 0) {
        tb_printf(t, "0 of %s lines (start_line %s, %s).", page_fmt_int(pg->total, a),
                  page_fmt_int(pg->win.start_line, b),
                  past_end(pg) ? "past the end" : "the end of the document");
        return;
    }
    const line_frag *first = &pg->frags[0], *last = &pg->frags[v->n - 1];
    tb_printf(t, "Lines %s-%s of %s (", page_fmt_int(first->number, a),
              page_fmt_int(last->number, b), page_fmt_int(pg->total, c));
    if (first->start_col > 1)
        tb_printf(t, "line %s from column %s; ", page_fmt_int(first->number, a),
                  page_fmt_int(first->start_col, b));
    if (v->has_more && v->next_col > 1)
        tb_printf(t, "line %s continues at column %s; ", page_fmt_int(v->next_line, a),
                  page_fmt_int(v->next_col, b));
    if (strcmp(v->why, "limit") == 0)
        tb_printf(t, "stopped at the %s-line limit).", page_fmt_int(pg->win.max_lines, a));
    else if (strcmp(v->why, "max_tokens") == 0)
        tb_printf(t, "stopped at the %s-token budget).", page_fmt_int(pg->b.max_tokens, a));
    else if (strcmp(v->why, "max_chars") == 0)
        tb_printf(t, "stopped at the %s-character ceiling).", page_fmt_int(pg->b.max_chars, a));
    else
        tb_puts(t, "the end of the document).");
}

static int lines_render(const mcpage_lines *pg, const lines_view *v, jw *s, tbuf *t)
{
    tbuf h;
    tb_init(&h);
    lines_hint(pg, v, &h);
    int64_t end_line = v->n ? pg->frags[v->n - 1].number : pg->win.start_line - 1;

    jw_reset(s);
    jw_object_begin(s);
    jw_key(s, "lines");
    jw_array_begin(s);
    for (size_t i = 0; i < v->n; i++)
        jw_stringn(s, pg->frags[i].text, pg->frags[i].len);
    jw_array_end(s);
    jw_kv_int(s, "returned", (int64_t)v->n);
    jw_kv_int(s, "total_lines", pg->total);
    jw_kv_bool(s, "has_more", v->has_more);
    jw_kv_int(s, "start_line", pg->win.start_line);
    if (pg->win.start_column > 1)
        jw_kv_int(s, "start_column", pg->win.start_column);
    jw_kv_int(s, "end_line", end_line);
    jw_kv_int(s, "max_lines", pg->win.max_lines);
    jw_kv_string(s, "stopped_by", v->why);
    if (v->has_more) {
        jw_kv_int(s, "next_start_line", v->next_line);
        if (v->next_col > 1)
            jw_kv_int(s, "next_start_column", v->next_col);
    }
    page_write_clamps(&pg->b, s);
    if (h.len && h.err == 0)
        jw_kv_string(s, "hint", h.buf);
    jw_object_end(s);

    tb_reset(t);
    if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES) {
        lines_summary(pg, v, t);
        for (size_t i = 0; i < v->n; i++) {
            tb_printf(t, "\n%6lld\t", (long long)pg->frags[i].number);
            tb_put(t, pg->frags[i].text, pg->frags[i].len);
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

/* ------------------------------------------------------------- begin */

static int lines_reserve(mcpage_lines *pg)
{
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int64_t total = pg->total, sl = pg->win.start_line;
    pg->total = INT64_C(999999999999);
    pg->win.start_line = INT64_C(999999999999);
    lines_view v = {.n = 0,
                    .has_more = true,
                    .why = "max_chars",
                    .next_line = INT64_C(999999999999),
                    .next_col = INT64_C(999999999999)};
    int rc = lines_render(pg, &v, &s, &t);
    pg->total = total;
    pg->win.start_line = sl;
    if (rc == 0) {
        size_t tu = 0;
        jw_measure_utf8(t.buf, t.len, NULL, &tu);
        size_t st = page_tokens(s.buf, s.len), tt = page_tokens(t.buf, t.len);
        /* Plus the summary's clauses about columns. */
        pg->reserve_tokens = (st > tt ? st : tt) + 40;
        pg->reserve_chars = (s.utf16 > tu ? s.utf16 : tu) + 100;
    }
    jw_free(&s);
    tb_free(&t);
    return rc;
}

int mcpage_lines_begin(const mcpage_pager *p, const mcpage_lines_spec *spec, const json_t *args,
                       mcpage_lines **out)
{
    if (out == NULL)
        return MCPAGE_EINVAL;
    *out = NULL;
    if (p == NULL || spec == NULL || spec->tool == NULL || spec->default_max_lines < 1 ||
        spec->max_max_lines < spec->default_max_lines)
        return MCPAGE_EINVAL;
    mcpage_lines *pg = mcpage__calloc(1, sizeof *pg);
    if (pg == NULL)
        return MCPAGE_ENOMEM;
    pg->spec = spec;
    int rc = page_base_init(&pg->b, p, spec->tool, args, lines_window);
    pg->win.args = pg->b.args;
    pg->win.start_line = 1;
    pg->win.start_column = 1;
    pg->win.max_lines = spec->default_max_lines;
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "start_line", "start_line", "start_line_clamped", 1,
                            1, 0, NULL, &pg->win.start_line);
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "start_column", "start_column",
                            "start_column_clamped", 1, 1, 0, NULL, &pg->win.start_column);
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "max_lines", "max_lines", "max_lines_clamped",
                            spec->default_max_lines, 1, spec->max_max_lines, NULL,
                            &pg->win.max_lines);
    if (rc == 0)
        rc = page_max_tokens(&pg->b, &pg->win.max_tokens);
    pg->next_number = pg->win.start_line;
    if (rc == 0)
        rc = lines_reserve(pg);
    if (rc < 0) {
        lines_free(pg);
        return rc;
    }
    *out = pg;
    return rc;
}

const mcpage_lines_window *mcpage_lines_window_get(const mcpage_lines *pg)
{
    return &pg->win;
}

void mcpage_lines_set_total(mcpage_lines *pg, int64_t total_lines)
{
    if (pg == NULL)
        return;
    pg->total_set = true;
    pg->total = total_lines < 0 ? 0 : total_lines;
}

/* --------------------------------------------------------------- add */

/* The cost of a fragment in the larger copy: the text line ("%6d\t" + text
   + newline) or the JSON string in the array (escaped, quoted, comma). */
static void frag_cost(const char *s, size_t n, size_t *tokens, size_t *chars)
{
    jw w;
    jw_init(&w, 0);
    jw_stringn(&w, s, n);
    size_t jt = page_tokens(w.buf ? w.buf : "", w.len) + 1;
    size_t tt = page_tokens(s, n) + 4;
    size_t tu = 0;
    jw_measure_utf8(s, n, NULL, &tu);
    *tokens = jt > tt ? jt : tt;
    *chars = (w.utf16 + 1 > tu + 8 ? w.utf16 + 1 : tu + 8);
    jw_free(&w);
}

static bool frag_fits(const mcpage_lines *pg, size_t tokens, size_t chars, page_over *why)
{
    *why = PAGE_FITS;
    if ((int64_t)(pg->sum_tokens + tokens + pg->reserve_tokens) > pg->b.meter_tokens)
        *why = PAGE_OVER_TOKENS;
    else if ((int64_t)(pg->sum_chars + chars + pg->reserve_chars) > pg->b.max_chars)
        *why = PAGE_OVER_CHARS;
    return *why == PAGE_FITS;
}

/* Ends the page before column `col` of line `number`: the next page starts there. */
static void lines_stop(mcpage_lines *pg, page_over why, int64_t number, int64_t col)
{
    pg->full = true;
    pg->stopped_early = true;
    pg->stopped_by = page_over_name(why);
    pg->resume_line = number;
    pg->resume_col = col;
}

/*
 * The estimate said the line just appended does not fit, but the reserve
 * behind it is cautious: render the page with it and measure exactly (as
 * the LIST builder does). When it fits, keep it and recalibrate the
 * reserve; else take it back: it starts the next page. 0 or a status.
 */
static int lines_exact_check(mcpage_lines *pg)
{
    pg->exact_checks++;
    line_frag *last = &pg->frags[pg->n - 1];
    lines_view v = {.n = pg->n,
                    .has_more = true,
                    .why = "max_tokens",
                    .next_line = last->number + 1,
                    .next_col = 1};
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int rc = lines_render(pg, &v, &s, &t);
    page_over o = rc == 0 ? page_measure_copies(&pg->b, &s, &t) : PAGE_FITS;
    if (rc == 0 && o == PAGE_FITS) {
        size_t st = page_tokens(s.buf, s.len), su = s.utf16, tt = 0, tu = 0;
        if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES) {
            tt = page_tokens(t.buf, t.len);
            jw_measure_utf8(t.buf, t.len, NULL, &tu);
        }
        size_t mt = st > tt ? st : tt, mu = su > tu ? su : tu;
        pg->reserve_tokens = (mt > pg->sum_tokens ? mt - pg->sum_tokens : 0) + 8;
        pg->reserve_chars = (mu > pg->sum_chars ? mu - pg->sum_chars : 0) + 24;
    }
    jw_free(&s);
    tb_free(&t);
    if (rc || o == PAGE_FITS)
        return rc;

    pg->n--;
    lines_stop(pg, o, last->number, last->start_col);
    mcpage__free(last->text);
    mcpage__free(last->full);
    return MCPAGE_OK;
}

/*
 * For a line longer than the whole budget on an empty page: the length
 * of the longest prefix of rest[0..rest_len) that fits, at least one
 * character, so every page makes progress.
 */
static size_t longest_fitting_prefix(const mcpage_lines *pg, const char *rest, size_t rest_len)
{
    size_t lo = page_utf8_char_len(rest, rest_len ? rest_len : 1);
    if (lo > rest_len)
        lo = rest_len;
    size_t hi = rest_len;
    size_t ceiling = (size_t)pg->b.max_chars * 4;
    if ((size_t)pg->b.max_tokens * 16 < ceiling)
        ceiling = (size_t)pg->b.max_tokens * 16;
    if (hi > ceiling)
        hi = ceiling;

    while (lo < hi) {
        size_t mid = jw_utf8_floor(rest, lo + (hi - lo + 1) / 2);
        if (mid <= lo) {
            mid = lo + page_utf8_char_len(rest + lo, rest_len - lo);
            if (mid > hi)
                break; /* no character boundary left between lo and hi */
        }
        size_t mt, mc;
        frag_cost(rest, mid, &mt, &mc);
        page_over w2;
        if (frag_fits(pg, mt, mc, &w2))
            lo = mid;
        else
            hi = mid - 1;
    }

    size_t keep = jw_utf8_floor(rest, lo);
    if (keep == 0 && rest_len > 0)
        keep = page_utf8_char_len(rest, rest_len);
    return keep;
}

/*
 * Appends the first `keep` bytes of rest[0..rest_len) as the fragment of
 * line `number` from column `col`, with its cost. The page's first
 * fragment also keeps the whole rest, so finish can cut it further.
 */
static int frag_append(mcpage_lines *pg, const char *rest, size_t rest_len, size_t keep,
                       int64_t number, int64_t col, size_t tok, size_t chars)
{
    /* no maximum of its own: the page's budget ends it first */
    void *frags = pg->frags;
    int rc = dbuf_grow(&frags, &pg->cap, pg->n + 1, sizeof *pg->frags, 64, SIZE_MAX);
    if (rc != 0)
        return rc;
    pg->frags = frags;

    line_frag *f = &pg->frags[pg->n];
    memset(f, 0, sizeof *f);
    f->text = mcpage__strndup(rest, keep);
    if (f->text == NULL)
        return MCPAGE_ENOMEM;
    if (pg->n == 0) {
        f->full = mcpage__strndup(rest, rest_len);
        if (f->full == NULL) {
            mcpage__free(f->text);
            return MCPAGE_ENOMEM;
        }
        f->full_len = rest_len;
    }
    f->len = keep;
    f->number = number;
    f->start_col = col;
    f->cut = keep < rest_len;

    pg->n++;
    pg->sum_tokens += tok;
    pg->sum_chars += chars;
    return MCPAGE_OK;
}

int mcpage_lines_add(mcpage_lines *pg, const char *line, size_t len)
{
    if (pg == NULL || (line == NULL && len > 0))
        return MCPAGE_EINVAL;
    if (pg->b.rejected)
        return MCPAGE_ESTATE;
    if (pg->full)
        return MCPAGE_PAGE_FULL;
    if (len > LINES_LINE_MAX)
        return MCPAGE_ERANGE;
    if (line == NULL)
        line = "";

    /* Where this line's fragment starts: start_column applies to the window's first line. */
    int64_t number = pg->next_number++;
    int64_t col = number == pg->win.start_line ? pg->win.start_column : 1;
    size_t skip = page_utf8_skip(line, len, col - 1);
    const char *rest = line + skip;
    size_t rest_len = len - skip;

    /* Whether it fits: whole, on trial (measured exactly after), cut, or on the next page. */
    size_t tok, chars;
    frag_cost(rest, rest_len, &tok, &chars);
    page_over why;
    size_t keep = rest_len;
    bool check = false;
    if (!frag_fits(pg, tok, chars, &why) && pg->n > 0 && pg->exact_checks < LINES_EXACT_CHECKS) {
        check = true;
    } else if (why != PAGE_FITS && pg->n > 0) {
        lines_stop(pg, why, number, col);
        return MCPAGE_PAGE_FULL;
    } else if (why != PAGE_FITS) {
        keep = longest_fitting_prefix(pg, rest, rest_len);
        frag_cost(rest, keep, &tok, &chars);
    }

    int rc = frag_append(pg, rest, rest_len, keep, number, col, tok, chars);
    if (rc != 0)
        return rc;

    /* A cut line ends the page; a line on trial may be taken back; else the window decides. */
    if (keep < rest_len) {
        size_t kept_chars = 0;
        jw_measure_utf8(rest, keep, &kept_chars, NULL);
        lines_stop(pg, why, number, col + (int64_t)kept_chars);
        return MCPAGE_PAGE_FULL;
    }
    if (check && (rc = lines_exact_check(pg)) != 0)
        return rc;
    if (pg->full)
        return MCPAGE_PAGE_FULL;
    if ((int64_t)pg->n >= pg->win.max_lines) {
        pg->full = true;
        return MCPAGE_PAGE_FULL;
    }
    return MCPAGE_OK;
}

/* ------------------------------------------------------------ finish */

/* The view of a page of the first n fragments, as add left it. */
static lines_view view_of(const mcpage_lines *pg, size_t n)
{
    lines_view v = {.n = n, .has_more = false, .why = "end", .next_line = 0, .next_col = 1};
    if (n == 0)
        return v; /* past the end, or an empty document */
    const line_frag *last = &pg->frags[n - 1];
    if (n == pg->n && pg->stopped_early) {
        v.has_more = true;
        v.why = pg->stopped_by;
        v.next_line = pg->resume_line;
        v.next_col = pg->resume_col;
        return v;
    }
    if (last->cut) {
        size_t kept = 0;
        jw_measure_utf8(last->text, last->len, &kept, NULL);
        v.has_more = true;
        v.next_line = last->number;
        v.next_col = last->start_col + (int64_t)kept;
        v.why = "max_tokens";
        return v;
    }
    v.next_line = last->number + 1;
    v.has_more = last->number < pg->total;
    if (v.has_more)
        v.why = "limit"; /* the line window (or the tool stopped handing lines) */
    return v;
}

int mcpage_lines_finish(mcpage_lines *pg, mcpage_result *res)
{
    if (pg == NULL || res == NULL) {
        lines_free(pg);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected) {
        int rc = page_write_rejection(&pg->b, res);
        lines_free(pg);
        return rc;
    }
    if (!pg->total_set || (pg->n == 0 && pg->win.start_line <= pg->total)) {
        /* No total, or lines that exist were not handed: no honest page. */
        lines_free(pg);
        return MCPAGE_ESTATE;
    }
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    size_t n = pg->n;
    lines_view v = view_of(pg, n);
    int rc;
    for (;;) {
        rc = lines_render(pg, &v, &s, &t);
        if (rc)
            break;
        page_over o = page_measure_copies(&pg->b, &s, &t);
        if (o == PAGE_FITS || n == 0)
            break;
        if (n > 1) {
            /* The final envelope pushed the page over: the last line waits. */
            n--;
            v.n = n;
            v.has_more = true;
            v.why = page_over_name(o);
            v.next_line = pg->frags[n].number;
            v.next_col = pg->frags[n].start_col;
            continue;
        }
        /* One line, still over: cut it shorter (one character at least). */
        line_frag *f = &pg->frags[0];
        size_t keep = f->len;
        if (keep <= page_utf8_char_len(f->full, f->full_len))
            break;
        keep = jw_utf8_floor(f->full, keep - (keep / 8 > 0 ? keep / 8 : 1));
        if (keep == 0)
            keep = page_utf8_char_len(f->full, f->full_len);
        char *text = mcpage__strndup(f->full, keep);
        if (text == NULL) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        mcpage__free(f->text);
        f->text = text;
        f->len = keep;
        f->cut = true;
        size_t kept = 0;
        jw_measure_utf8(text, keep, &kept, NULL);
        v.has_more = true;
        v.why = page_over_name(o);
        v.next_line = f->number;
        v.next_col = f->start_col + (int64_t)kept;
    }
    if (rc == 0)
        rc = page_write_result(&pg->b, res, &s, &t);
    jw_free(&s);
    tb_free(&t);
    lines_free(pg);
    return rc;
}
