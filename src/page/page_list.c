/*
 * The LIST page builder: ordered records walked by keyset cursor or
 * offset. Records arrive one at a time; each is projected, serialized
 * once and measured, and the page stops at the record window, the token
 * budget or the char ceiling. Finish writes both copies and checks them
 * exactly on their final bytes, dropping trailing records (or cutting the
 * only record's longest fields) until each copy fits on its own.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/page_internal.h"
#include "page/tokens.h"

/* A single record is refused past this size: no tool should hand more. */
#define LIST_RECORD_MAX ((size_t)256 << 20)
/* Exact measurements per page when the running estimate says "full". */
#define LIST_EXACT_CHECKS 3
/* Limits on the `fields` argument and the projection. */
#define LIST_MAX_FIELDS 64

static const char *const list_window[] = {"cursor", "offset", "limit", "max_tokens", NULL};

typedef struct list_rec {
    char *json;                                  /* projected record, compact JSON (an array
                                                    of the column values in COLUMNS) */
    size_t len;                                  /* bytes in json */
    size_t cps;                                  /* code points in json */
    size_t units;                                /* UTF-16 units in json */
    tokens_part jpart;                           /* json's token scan, for the page's */
    char *text;                                  /* COLUMNS: its tab-separated text line */
    size_t tlen;                                 /* bytes in text */
    size_t tunits;                               /* UTF-16 units in text */
    tokens_part tpart;                           /* text's token scan, for the page's */
    size_t at_s;                                 /* where render put json in the structured copy */
    size_t at_t;                                 /* where render put its line in the text copy */
    mcpage_keypart pos[MCPAGE_CURSOR_MAX_PARTS]; /* keyset position (strings owned) */
    int nparts;                                  /* parts in pos */
    char *etext;                                 /* text's JSON escape (no quotes) when every
                                                    value went as it is, else NULL (pooled) */
    size_t elen;                                 /* bytes in etext */
    size_t ecps;                                 /* code points in etext */
    size_t eunits;                               /* UTF-16 units in etext */
    bool bytes_pooled;                           /* json and text live in the page's pool */
    bool pos_pooled;                             /* pos strings live in the page's pool */
    size_t fold_of;                              /* a folded record: 1 + the index of the row
                                                    it is folded into (no bytes of its own);
                                                    0: a row */
    const char *fkey;                            /* a row's value of the fold field (pooled),
                                                    or NULL */
    size_t fkeylen;                              /* bytes in fkey */
    const char *idjson;                          /* its id field's value as JSON (pooled),
                                                    when the page folds; else NULL */
} list_rec;

/* A piece of the page's pool: bytes handed out in order, freed with the page. */
typedef struct pool_chunk {
    struct pool_chunk *next; /* the chunk made before this one */
    size_t used;             /* bytes handed out */
    size_t cap;              /* bytes in bytes[] */
    char bytes[];            /* the pool's bytes */
} pool_chunk;

struct mcpage_list {
    page_base b;                                 /* shared state; must stay first */
    const mcpage_list_spec *spec;                /* the tool's description */
    mcpage_list_window win;                      /* what the tool queries with */
    mcpage_cursor cur;                           /* the decoded cursor (win.after points here) */
    uint8_t fp[MCPAGE_FINGERPRINT_LEN];          /* fingerprint of the non-window arguments */
    const char *sel[LIST_MAX_FIELDS];            /* projected field names (borrowed) */
    int nsel;                                    /* entries in sel; -1: no projection */
    const char *cols[LIST_MAX_FIELDS];           /* COLUMNS: the column names, in order */
    int ncols;                                   /* entries in cols */
    const char *extra_key;                       /* an integer said after the total, or NULL */
    const char *fold_field;                      /* records whose value of it equals an earlier
                                                    row's are folded into that row, or NULL */
    int64_t extra_val;                           /* its value */
    const char *share;                           /* the field said once per page, or NULL */
    json_t *share_val;                           /* its value (the first record's) */
    json_t *trunc_notes;                         /* COLUMNS: the cut-field notes of record 0 */
    list_rec *recs;                              /* accepted records in order */
    size_t n;                                    /* records accepted */
    size_t cap;                                  /* records allocated */
    json_t *first_full;                          /* record 0 as given, for read_with */
    json_t *first_proj;                          /* record 0 projected, for cutting fields */
    list_cell *first_cells;                      /* record 0 given as cells: a copy (one
                                                    allocation), made into the two objects
                                                    above only if it must be cut */
    size_t first_ncells;                         /* cells in first_cells */
    bool full;                                   /* the page is complete */
    bool has_more;                               /* the walk continues past this page */
    const char *stopped_by;                      /* why the page ended, when not "end" */
    bool total_set;                              /* set_total was called */
    int64_t total;                               /* exact total of the walk */
    int64_t generation;                          /* store generation of the total */
    bool gen_set;                                /* a current generation is known */
    int64_t current_gen;                         /* the store generation now */
    size_t sum_tokens;                           /* running token estimate of the records */
    size_t sum_chars;                            /* running UTF-16 units of the records */
    size_t reserve_tokens;                       /* estimated envelope cost, tokens */
    size_t reserve_chars;                        /* estimated envelope cost, UTF-16 units */
    char cursor_text[MCPAGE_CURSOR_MAX_LEN + 1]; /* next_cursor for cursor_n records */
    size_t cursor_n;                             /* records the cached cursor follows; 0: none */
    bool cursor_ok;                              /* cursor_text holds a cursor */
    tbuf trunc_note;                             /* hint clause about cut fields */
    int exact_checks;                            /* exact measurements made by add */
    pool_chunk *pool;                            /* the records' bytes and positions given as
                                                    cells: one allocation for many */
    jw cell_json;                                /* a record of cells written, reused */
    tbuf cell_line;                              /* its text line, reused */
};

/* ------------------------------------------------------------ helpers */

/* Bytes a pool chunk holds at least: the records of a typical page. */
#define POOL_CHUNK 8192

/* n bytes from the page's pool, or NULL when no memory is left. */
static char *pool_alloc(mcpage_list *pg, size_t n)
{
    pool_chunk *c = pg->pool;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > POOL_CHUNK ? n : POOL_CHUNK;
        if ((c = mcpage__malloc(sizeof *c + cap)) == NULL)
            return NULL;
        c->next = pg->pool;
        c->used = 0;
        c->cap = cap;
        pg->pool = c;
    }
    char *p = c->bytes + c->used;
    c->used += n;
    return p;
}

/* A copy of s[0..n), NUL-terminated, in the page's pool; NULL without memory. */
static char *pool_strndup(mcpage_list *pg, const char *s, size_t n)
{
    char *p = pool_alloc(pg, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static bool name_in(const char *name, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

static bool columns(const mcpage_list *pg)
{
    return pg->spec->layout == MCPAGE_LIST_COLUMNS;
}

static bool selected(const mcpage_list *pg, const char *name)
{
    if (pg->share && strcmp(name, pg->share) == 0)
        return false;
    if (pg->nsel < 0 || name_in(name, pg->spec->id_fields))
        return true;
    for (int i = 0; i < pg->nsel; i++)
        if (strcmp(pg->sel[i], name) == 0)
            return true;
    return false;
}

/* A new object with the selected fields of `rec`, in the record's order. */
static json_t *project(const mcpage_list *pg, json_t *rec)
{
    if (pg->nsel < 0)
        return json_incref(rec);
    json_t *out = json_object();
    if (out == NULL)
        return NULL;
    const char *key;
    json_t *val;
    json_object_foreach(rec, key, val)
    {
        if (selected(pg, key) && json_object_set(out, key, val) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* Bytes repeated in each of a word's eight lanes. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (b))
/* Nonzero when some byte of x is zero (may also flag bytes past the first zero). */
#define HAS_ZERO(x) (((x)-LANES(1)) & ~(x)&LANES(0x80))
/* Nonzero when some byte of x is one a text line escapes: \t \n \r \\. */
#define TSV_SPECIAL(x)                                                                             \
    (HAS_ZERO((x) ^ LANES('\t')) | HAS_ZERO((x) ^ LANES('\n')) | HAS_ZERO((x) ^ LANES('\r')) |     \
     HAS_ZERO((x) ^ LANES('\\')))

/* A string in a text line, with \t \n \r \\ escaped. */
static void tsv_str(tbuf *t, const char *p, size_t n)
{
    const char *end = p + n, *run = p;
    for (; p < end; p++) {
        /* Eight bytes at a time while none needs escaping. */
        uint64_t x;
        while (end - p >= 8 && (memcpy(&x, p, 8), !TSV_SPECIAL(x)))
            p += 8;
        if (p == end)
            break;
        const char *esc = *p == '\t'   ? "\\t"
                          : *p == '\n' ? "\\n"
                          : *p == '\r' ? "\\r"
                          : *p == '\\' ? "\\\\"
                                       : NULL;
        if (esc == NULL)
            continue;
        tb_put(t, run, (size_t)(p - run));
        tb_put(t, esc, 2);
        run = p + 1;
    }
    tb_put(t, run, (size_t)(end - run));
}

/* One value of a text line: strings as they are with \t \n \r \\ escaped,
   null as nothing, anything else as compact JSON. */
static void tsv_value(tbuf *t, const json_t *v)
{
    if (v == NULL || json_is_null(v))
        return;
    if (!json_is_string(v))
        tb_json(t, v);
    else
        tsv_str(t, json_string_value(v), json_string_length(v));
}

/* Gives r the record's JSON copy (w) and text line (t, or none), or the writers' error. */
static int take_copies(jw *w, tbuf *t, list_rec *r)
{
    if (t && (t->err || t->len > LIST_RECORD_MAX)) {
        int err = t->err ? t->err : MCPAGE_ERANGE;
        tb_free(t);
        jw_free(w);
        return err;
    }
    if (r->bytes_pooled) {
        r->json = r->text = NULL; /* the pool keeps them until the page is freed */
        r->bytes_pooled = false;
    }
    r->etext = NULL; /* a record written from objects: its line is escaped with the page */
    if (t) {
        mcpage__free(r->text);
        r->tlen = t->len;
        r->text = t->buf ? t->buf : mcpage__strndup("", 0); /* the line is owned by r */
        if (r->text == NULL) {
            jw_free(w);
            return MCPAGE_ENOMEM;
        }
    }
    if (w->err) {
        int err = w->err;
        jw_free(w);
        return err;
    }
    mcpage__free(r->json);
    r->cps = w->codepoints;
    r->units = w->utf16;
    r->json = jw_take(w, &r->len);
    return MCPAGE_OK;
}

/*
 * Serializes a projected record into r->json (and, in COLUMNS, r->text):
 * an object as given, or the values in column order (a missing field is
 * null) and their text line.
 */
static int serialize(const mcpage_list *pg, const json_t *proj, list_rec *r)
{
    jw w;
    jw_init(&w, LIST_RECORD_MAX);
    if (!columns(pg)) {
        jw_json(&w, proj);
    } else {
        tbuf t;
        tb_init(&t);
        jw_array_begin(&w);
        for (int i = 0; i < pg->ncols; i++) {
            const json_t *v = json_object_get(proj, pg->cols[i]);
            if (v)
                jw_json(&w, v);
            else
                jw_null(&w);
            if (i > 0)
                tb_put(&t, "\t", 1);
            tsv_value(&t, v);
        }
        jw_array_end(&w);
        return take_copies(&w, &t, r);
    }
    return take_copies(&w, NULL, r);
}

/* tb_put with its common case inline: the room is there (a reused line). */
static inline void line_put(tbuf *t, const char *s, size_t n)
{
    if (t->err == 0 && n < t->cap - t->len && n <= t->max - t->len) {
        memcpy(t->buf + t->len, s, n);
        t->len += n;
        t->buf[t->len] = '\0';
        return;
    }
    tb_put(t, s, n);
}

/*
 * serialize() for a record given as cells, in COLUMNS: written into the
 * page's reused writers, then copied into its pool, so a page of records
 * costs a few allocations, not two a record.
 */
static int serialize_cells(mcpage_list *pg, const list_cell *cells, size_t nc, list_rec *r)
{
    jw *w = &pg->cell_json;
    tbuf *t = &pg->cell_line;
    jw_reset(w);
    tb_reset(t);
    /* plain: every value went as it is, so the line's JSON escape is the
       line with each tab (at tabs[]) written \t; nstr and nnull count the
       strings and nulls, whose quotes and "null" the escape lacks. */
    bool plain = true;
    size_t nstr = 0, nnull = 0, seps = pg->ncols > 0 ? (size_t)pg->ncols - 1 : 0;
    size_t tabs[LIST_MAX_FIELDS];
    jw_array_begin(w);
    size_t next = 0; /* cells mostly come in column order: look there first */
    for (int i = 0; i < pg->ncols; i++) {
        const list_cell *c = NULL;
        for (size_t k = 0; k < nc && c == NULL; k++) {
            size_t at = (next + k) % nc;
            /* The same literal, mostly: its address before its bytes. */
            if (cells[at].name == pg->cols[i] || strcmp(cells[at].name, pg->cols[i]) == 0) {
                c = &cells[at];
                next = at + 1;
            }
        }
        if (i > 0) {
            tabs[i - 1] = t->len;
            line_put(t, "\t", 1);
        }
        if (c == NULL || c->kind == LIST_CELL_NULL) {
            jw_null(w);
            nnull++;
        } else if (c->kind == LIST_CELL_INT) {
            jw_int(w, c->num);
            tb_int(t, c->num);
        } else {
            jw_mark before = jw_mark_get(w);
            jw_stringn(w, c->str, c->len);
            /* Written as it is (quotes and, past the first, a comma added):
               nothing needed a JSON escape, so nothing needs one in the
               line either (\t \n \r \\ are among JSON's), and it is text
               (a byte jw repairs, or U+0000, is written longer). */
            if (w->len - before.len == c->len + 2 + (i > 0)) {
                line_put(t, c->str, c->len);
                nstr++;
            } else if (page_is_text(c->str, c->len)) {
                tsv_str(t, c->str, c->len);
                plain = false;
            } else {
                /* Not text: left out, as from the object (a column's null). */
                jw_rewind(w, &before);
                jw_null(w);
                nnull++;
            }
        }
    }
    jw_array_end(w);
    if (w->err || t->err || t->len > LIST_RECORD_MAX)
        return w->err ? w->err : t->err ? t->err : MCPAGE_ERANGE;
    size_t elen = plain ? t->len + seps : 0;
    char *bytes = pool_alloc(pg, w->len + 1 + t->len + 1 + elen);
    if (bytes == NULL)
        return MCPAGE_ENOMEM;
    memcpy(bytes, w->buf, w->len + 1); /* with its NUL */
    r->json = bytes;
    r->len = w->len;
    r->cps = w->codepoints;
    r->units = w->utf16;
    r->text = bytes + w->len + 1;
    r->tlen = t->len;
    memcpy(r->text, t->buf ? t->buf : "", t->len);
    r->text[t->len] = '\0';
    r->etext = NULL;
    if (plain) {
        /* The record's copy less its brackets, commas, quotes and nulls,
           plus the escape's second byte of each tab; all of them ASCII. */
        size_t less = 2 + seps + 2 * nstr + 4 * nnull, more = 2 * seps;
        char *o = r->etext = r->text + t->len + 1;
        size_t from = 0;
        for (size_t k = 0; k < seps; k++) {
            memcpy(o, r->text + from, tabs[k] - from);
            o += tabs[k] - from;
            memcpy(o, "\\t", 2);
            o += 2;
            from = tabs[k] + 1;
        }
        memcpy(o, r->text + from, t->len - from);
        r->elen = elen;
        r->ecps = r->cps - less + more;
        r->eunits = r->units - less + more;
    }
    r->bytes_pooled = true;
    return MCPAGE_OK;
}

/*
 * A thread's memo of the records it scanned: the first page of a walk
 * shows the same records on every call until the store changes, and the
 * scans of a record's copies depend on nothing but their bytes, so a
 * record found here with the same bytes gets exactly what scanning it
 * gives. Direct-mapped by a hash of its structured copy.
 */
#define REC_MEMO_SLOTS 128  /* records remembered per thread */
#define REC_MEMO_BYTES 1024 /* larger records (both copies) are scanned every time */
#define REC_MEMO_WAYS  4    /* slots a record may take (a set; divides REC_MEMO_SLOTS) */
/* Bytes of a record hashed to find its set: its first field (an id, in
   most tools) tells records apart; the whole bytes are compared. */
#define REC_MEMO_HASHED 64

typedef struct rec_memo {
    size_t len;                 /* bytes of the structured copy; 0: unused slot */
    size_t tlen;                /* bytes of the text line */
    bool text;                  /* the record has a text line */
    uint64_t used;              /* when it was last found or made (rec_memo_clock) */
    tokens_part jpart;          /* the structured copy's scan */
    tokens_part tpart;          /* the text line's scan */
    size_t jt, tt, tunits;      /* estimates and the line's UTF-16 units */
    char bytes[REC_MEMO_BYTES]; /* the structured copy, then the text line */
} rec_memo;

static mcpage__thread_block_key rec_memo_key;  /* the slots, made on a thread's first page */
static _Thread_local rec_memo *rec_memo_slots; /* REC_MEMO_SLOTS, or NULL: no memo */
static _Thread_local uint64_t rec_memo_clock;  /* counts the thread's lookups */

/* A cheap hash of n bytes (eight at a time). */
static size_t bytes_hash(const char *s, size_t n)
{
    uint64_t h = (uint64_t)n * UINT64_C(0x9E3779B97F4A7C15), x;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        h = (h ^ x) * UINT64_C(0x100000001B3);
        h ^= h >> 31;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001B3);
    return (size_t)(h ^ (h >> 29));
}

/* Both copies' scans, estimates (before their edges) and the line's units. */
static void scan_copies(list_rec *r, size_t *jt, size_t *tt)
{
    *tt = 0;
    /* The two copies of a COLUMNS record hold the same values: scanned once
       when their edges cut cleanly in both (most records), else apart. */
    if (!r->text ||
        !mcpage__tokens_columns(r->json, r->len, r->text, r->tlen, &r->jpart, jt, &r->tpart, tt)) {
        *jt = mcpage__tokens_part(r->json, r->len, &r->jpart);
        if (r->text)
            *tt = mcpage__tokens_part(r->text, r->tlen, &r->tpart);
    }
    if (r->text)
        jw_measure_utf8(r->text, r->tlen, NULL, &r->tunits);
}

/* scan_copies through the memo. */
static void scan_copies_memoized(list_rec *r, size_t *jt, size_t *tt)
{
    size_t tlen = r->text ? r->tlen : 0;
    if (!rec_memo_slots)
        rec_memo_slots = mcpage__thread_block(&rec_memo_key, REC_MEMO_SLOTS * sizeof(rec_memo));
    if (r->len == 0 || r->len + tlen > REC_MEMO_BYTES || !rec_memo_slots) {
        scan_copies(r, jt, tt);
        return;
    }
    /* A set of REC_MEMO_WAYS slots a record, the least recently used
       replaced: the records of a page stay unless more than that many of
       them hash to one set (overlapping pairs of slots let three records
       evict each other in turn on every call). */
    rec_memo *set =
        &rec_memo_slots[bytes_hash(r->json, r->len < REC_MEMO_HASHED ? r->len : REC_MEMO_HASHED) %
                        (REC_MEMO_SLOTS / REC_MEMO_WAYS) * REC_MEMO_WAYS];
    for (int k = 0; k < REC_MEMO_WAYS; k++) {
        rec_memo *m = &set[k];
        if (m->len == r->len && m->tlen == tlen && m->text == (r->text != NULL) &&
            memcmp(m->bytes, r->json, r->len) == 0 &&
            (tlen == 0 || memcmp(m->bytes + r->len, r->text, tlen) == 0)) {
            r->jpart = m->jpart;
            r->tpart = m->tpart;
            r->tunits = m->tunits;
            *jt = m->jt;
            *tt = m->tt;
            m->used = ++rec_memo_clock;
            return;
        }
    }
    scan_copies(r, jt, tt);
    rec_memo *m = &set[0];
    for (int k = 1; k < REC_MEMO_WAYS; k++)
        if (set[k].used < m->used)
            m = &set[k];
    m->used = ++rec_memo_clock;
    m->len = r->len;
    m->tlen = tlen;
    m->text = r->text != NULL;
    memcpy(m->bytes, r->json, r->len);
    if (tlen)
        memcpy(m->bytes + r->len, r->text, tlen);
    m->jpart = r->jpart;
    m->tpart = r->tpart;
    m->tunits = r->tunits;
    m->jt = *jt;
    m->tt = *tt;
}

/*
 * Scans a serialized record for the running estimate: *tok and *chars
 * (when not NULL) are what the larger of its copies adds to a page; the
 * scans are kept for measuring the page (copy_tokens).
 */
static void scan_record(list_rec *r, size_t *tok, size_t *chars)
{
    size_t jt, tt, jc = r->units + 1;
    scan_copies_memoized(r, &jt, &tt);
    jt++;
    if (r->text) {
        tt++;
        jt = tt > jt ? tt : jt;
        jc = r->tunits + 1 > jc ? r->tunits + 1 : jc;
    }
    if (tok)
        *tok = jt;
    if (chars)
        *chars = jc;
}

static void free_pos(list_rec *r)
{
    for (int i = 0; i < r->nparts && !r->pos_pooled; i++)
        if (r->pos[i].is_str)
            mcpage__free((void *)r->pos[i].s);
    r->nparts = 0;
}

/* Frees what a record owns (what lives in the page's pool stays there). */
static void rec_release(list_rec *r)
{
    if (!r->bytes_pooled) {
        mcpage__free(r->json);
        mcpage__free(r->text);
    }
    r->json = r->text = NULL;
    free_pos(r);
}

static void list_free(mcpage_list *pg)
{
    if (pg == NULL)
        return;
    for (size_t i = 0; i < pg->n; i++)
        rec_release(&pg->recs[i]);
    while (pg->pool) {
        pool_chunk *next = pg->pool->next;
        mcpage__free(pg->pool);
        pg->pool = next;
    }
    jw_free(&pg->cell_json);
    tb_free(&pg->cell_line);
    json_decref(pg->share_val);
    json_decref(pg->trunc_notes);
    mcpage__free(pg->recs);
    json_decref(pg->first_full);
    json_decref(pg->first_proj);
    mcpage__free(pg->first_cells);
    tb_free(&pg->trunc_note);
    page_base_free(&pg->b);
    mcpage__free(pg);
}

void mcpage_list_abort(mcpage_list *pg)
{
    list_free(pg);
}

/* ------------------------------------------------------------- render */

/* Writes the summary line ("20 of 1,240 sessions (offset 0, ...).") */
static void summary(const mcpage_list *pg, size_t n, const char *stopped, tbuf *t)
{
    /* Written piece by piece: this runs for every page, printf costs more. */
    char a[32];
    tb_puts(t, page_fmt_int((int64_t)n, a));
    tb_puts(t, " of ");
    tb_puts(t, page_fmt_int(pg->total, a));
    tb_puts(t, " ");
    tb_puts(t, pg->spec->unit);
    tb_puts(t, " (offset ");
    tb_puts(t, page_fmt_int(pg->win.offset, a));
    tb_puts(t, ", ");
    if (strcmp(stopped, "limit") == 0) {
        tb_puts(t, "stopped at the ");
        tb_puts(t, page_fmt_int(pg->win.limit, a));
        tb_puts(t, "-record limit).");
    } else if (strcmp(stopped, "max_tokens") == 0) {
        tb_puts(t, "stopped at the ");
        tb_puts(t, page_fmt_int(pg->b.max_tokens, a));
        tb_puts(t, "-token budget).");
    } else if (strcmp(stopped, "max_chars") == 0) {
        tb_puts(t, "stopped at the ");
        tb_puts(t, page_fmt_int(pg->b.max_chars, a));
        tb_puts(t, "-character ceiling).");
    } else if (n == 0 && pg->win.offset > 0 && pg->win.offset >= pg->total)
        tb_puts(t, "past the end).");
    else
        tb_puts(t, "the end of the list).");
}

/* The page sizes the caller chose, so the next page has the same; a size
   equal to its default (which the runtime may have filled in) goes unsaid. */
static void given_size(const mcpage_list *pg, tbuf *t)
{
    if (pg->win.limit != pg->spec->default_limit)
        page_given_size(&pg->b, t, "limit", pg->win.limit);
    if (pg->win.max_tokens != pg->b.pager->cfg.default_tokens)
        page_given_size(&pg->b, t, "max_tokens", pg->win.max_tokens);
}

/*
 * Builds the hint for a page of n records; empty when nothing to say.
 * `literal`: the cursor is written out (the text copy) with the offset
 * and the arguments to keep; otherwise the hint points at next_cursor,
 * which structuredContent carries beside it (next_offset too), instead
 * of repeating its 80-odd characters, and says "the same call" rather
 * than listing the arguments: the hint is paid for on every page.
 */
static void hint(const mcpage_list *pg, size_t n, bool has_more, const char *cursor, bool literal,
                 tbuf *t)
{
    char a[32];
    if (has_more && cursor && !literal) {
        /* beside next_cursor: the call again with it, every other argument
           (sizes too) as it was; the cursor is bound to them anyway */
        tb_puts(t, "Next page: the same call with cursor=next_cursor.");
    } else if (has_more) {
        tb_puts(t, "Next page: ");
        tb_puts(t, pg->b.tool);
        tb_puts(t, " with ");
        if (cursor && literal) {
            tb_puts(t, "cursor=\"");
            tb_puts(t, cursor);
            tb_puts(t, "\" (or offset=");
            tb_int(t, pg->win.offset + (int64_t)n);
            tb_puts(t, ")");
        } else {
            tb_puts(t, "offset=");
            tb_int(t, pg->win.offset + (int64_t)n);
        }
        given_size(pg, t);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    } else if (n == 0 && pg->win.offset > 0 && pg->win.offset >= pg->total) {
        int64_t last = pg->total > pg->win.limit ? pg->total - pg->win.limit : 0;
        char b[32];
        tb_printf(t, "offset %s is past the end of the %s %s; the last page starts at offset ",
                  page_fmt_int(pg->win.offset, a), page_fmt_int(pg->total, b), pg->spec->unit);
        tb_printf(t, "%lld: %s with offset=%lld", (long long)last, pg->b.tool, (long long)last);
        given_size(pg, t);
        page_same_args(&pg->b, t);
        tb_puts(t, ".");
    }
    if (pg->trunc_note.len)
        tb_put(t, pg->trunc_note.buf, pg->trunc_note.len);
    if (pg->spec->relevance_order && pg->win.resume && pg->gen_set &&
        pg->current_gen != pg->cur.generation) {
        tb_puts(t, " The store changed since this walk began, so the relevance order may have "
                   "shifted.");
        if (pg->spec->stable_order_hint)
            tb_printf(t, " %s", pg->spec->stable_order_hint);
    }
    if (pg->b.notes.len)
        tb_put(t, pg->b.notes.buf, pg->b.notes.len);
    /* Narrowing is news on the first page of a walk, and worth saying only
       when more than one page remains; later pages would repeat it. */
    if (has_more && pg->spec->narrow_hint && !pg->win.resume && pg->win.offset == 0 &&
        pg->total - (int64_t)n > pg->win.limit) {
        tb_puts(t, " ");
        tb_puts(t, pg->spec->narrow_hint);
    }
    /* Clauses start with a space; the hint does not. */
    if (t->len && t->buf[0] == ' ' && t->err == 0) {
        memmove(t->buf, t->buf + 1, t->len);
        t->len--;
    }
}

/*
 * A thread's memo of the envelope pieces it scanned for tokens: the same
 * call asked again renders the same envelope around its records (keys,
 * counts, hint), so its pieces are scanned once and their sums added.
 * The sums of a text depend on nothing but its bytes, so a piece found
 * here by its bytes gives exactly what scanning it gives.
 */
#define MEMO_SLOTS 8    /* pieces remembered per thread */
#define MEMO_MIN   48   /* shorter pieces are scanned: comparing costs as much */
#define MEMO_BYTES 1024 /* longer pieces are scanned and not remembered */

typedef struct scan_memo {
    size_t len;             /* bytes of the piece; 0: unused */
    tokens_sum sum;         /* what scanning it adds */
    char bytes[MEMO_BYTES]; /* the piece */
} scan_memo;

static _Thread_local scan_memo memo[MEMO_SLOTS];
static _Thread_local unsigned memo_next; /* the slot the next new piece takes */

static void sum_add(tokens_sum *to, const tokens_sum *d)
{
    to->cost += d->cost;
    to->ascii_cost += d->ascii_cost;
    to->accented += d->accented;
    to->words += d->words;
}

/* mcpage__tokens_scan of s[0..n), from the memo when it holds the piece. */
static void scan_memoized(const char *s, size_t n, tokens_sum *sum)
{
    if (n < MEMO_MIN || n > MEMO_BYTES) {
        mcpage__tokens_scan(s, n, sum);
        return;
    }
    for (size_t i = 0; i < MEMO_SLOTS; i++)
        if (memo[i].len == n && memcmp(memo[i].bytes, s, n) == 0) {
            sum_add(sum, &memo[i].sum);
            return;
        }
    scan_memo *m = &memo[memo_next++ % MEMO_SLOTS];
    m->sum = (tokens_sum){0};
    mcpage__tokens_scan(s, n, &m->sum);
    memcpy(m->bytes, s, n);
    m->len = n;
    sum_add(sum, &m->sum);
}

/* The estimate of a whole envelope, its pieces from the memo. */
static size_t estimate_memoized(const char *s, size_t n)
{
    tokens_sum sum = {0};
    scan_memoized(s, n, &sum);
    return mcpage__tokens_total(&sum, n);
}

/*
 * Scans the tail of a page (what follows its last record): the cursor in
 * it differs on every call, so the pieces before and after it go through
 * the memo and the cursor is scanned, where the cuts around it change no
 * piece; else the tail is scanned as one.
 */
static const char *find_bytes(const char *s, size_t n, const char *what, size_t wn)
{
    for (const char *p = s; wn && (size_t)(s + n - p) >= wn; p++) {
        p = memchr(p, what[0], (size_t)(s + n - p) - wn + 1);
        if (p == NULL)
            return NULL;
        if (memcmp(p, what, wn) == 0)
            return p;
    }
    return NULL;
}

static void scan_tail(const char *s, size_t n, const char *cursor, tokens_sum *sum)
{
    size_t cn = cursor ? strlen(cursor) : 0;
    const char *at = cn && n >= MEMO_MIN ? find_bytes(s, n, cursor, cn) : NULL;
    size_t from = at ? (size_t)(at - s) : 0, to = from + cn;
    if (at == NULL || !mcpage__tokens_cut_ok(s, n, from) || !mcpage__tokens_cut_ok(s, n, to)) {
        scan_memoized(s, n, sum);
        return;
    }
    scan_memoized(s, from, sum);
    mcpage__tokens_scan(s + from, to - from, sum);
    scan_memoized(s + to, n - to, sum);
}

/* The cursor after n records, cached; NULL when it cannot be made. */
static const char *next_cursor(mcpage_list *pg, size_t n)
{
    if (n == 0)
        return NULL;
    if (pg->cursor_n == n)
        return pg->cursor_ok ? pg->cursor_text : NULL;
    const list_rec *r = &pg->recs[n - 1];
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    c.nparts = r->nparts;
    memcpy(c.parts, r->pos, sizeof c.parts);
    c.offset = pg->win.offset + (int64_t)n;
    c.total = pg->total;
    c.generation = pg->generation;
    pg->cursor_n = n;
    /* A position too large for a cursor leaves next_offset alone to resume. */
    pg->cursor_ok = mcpage_cursor_encode(pg->b.pager->kr, pg->b.tool, pg->fp, &c, pg->cursor_text,
                                         sizeof pg->cursor_text) > 0;
    return pg->cursor_ok ? pg->cursor_text : NULL;
}

/*
 * Writes both copies of a page of the first n records. `fake_cursor`,
 * when set, stands in for the real one (estimating the envelope).
 */
/*
 * The token estimate of one copy of a page of n records as render wrote
 * it (`text`: the text copy, else the structured one), and in *units its
 * UTF-16 units: the records' middles were scanned when they were added,
 * so only what lies around them is scanned here. Exactly what estimating
 * the whole copy gives (asserted in debug builds); where a record's edge
 * would change a piece of the page, the whole copy is scanned instead.
 */
static size_t copy_tokens(const mcpage_list *pg, size_t n, bool text, const char *buf, size_t len,
                          size_t *units)
{
    tokens_sum sum = {0};
    size_t pos = 0, upos = 0, u = 0, tokens;
    bool lines = text && columns(pg);
    /* The bytes between two records are mostly the same on a page ("],["
       or a newline): their sums are scanned once (a piece's sums depend
       on its bytes alone). */
    char between[8];
    size_t blen = SIZE_MAX;
    tokens_sum bsum = {0};
    bool head = true;
    for (size_t i = 0; i < n; i++) {
        const list_rec *r = &pg->recs[i];
        if (r->fold_of)
            continue; /* no bytes of its own */
        const tokens_part *part = lines ? &r->tpart : &r->jpart;
        size_t at = text ? r->at_t : r->at_s;
        size_t from = at + part->from, to = at + part->to;
        if (!mcpage__tokens_cut_ok(buf, len, from) || !mcpage__tokens_cut_ok(buf, len, to)) {
            tokens = mcpage__tokens_estimate(buf, len);
            jw_measure_utf8(buf, len, NULL, units);
            return tokens;
        }
        if (head) {
            head = false;
            scan_memoized(buf, from, &sum); /* the head: the same on every call */
        } else if (from - pos == blen && memcmp(buf + pos, between, blen) == 0) {
            sum_add(&sum, &bsum);
        } else {
            tokens_sum g = {0};
            mcpage__tokens_scan(buf + pos, from - pos, &g);
            sum_add(&sum, &g);
            if (from - pos <= sizeof between) {
                blen = from - pos;
                memcpy(between, buf + pos, blen);
                bsum = g;
            }
        }
        sum.cost += part->sum.cost;
        sum.ascii_cost += part->sum.ascii_cost;
        sum.accented += part->sum.accented;
        sum.words += part->sum.words;
        pos = to;
        if (text) {
            size_t gap = 0;
            jw_measure_utf8(buf + upos, at - upos, NULL, &gap);
            u += gap + (lines ? r->tunits : r->units);
            upos = at + (lines ? r->tlen : r->len);
        }
    }
    scan_tail(buf + pos, len - pos,
              n && pg->cursor_n == n && pg->cursor_ok ? pg->cursor_text : NULL, &sum);
    tokens = mcpage__tokens_total(&sum, len);
    assert(tokens == mcpage__tokens_estimate(buf, len));
    if (text) {
        size_t gap = 0;
        jw_measure_utf8(buf + upos, len - upos, NULL, &gap);
        u += gap;
#ifndef NDEBUG
        size_t whole = 0;
        jw_measure_utf8(buf, len, NULL, &whole);
        assert(u == whole);
#endif
    }
    *units = u; /* the structured copy's: the writer counted them */
    return tokens;
}

/* page_measure_copies for a page of n records that render just wrote. */
static page_over measure_copies(const mcpage_list *pg, size_t n, const jw *s, const tbuf *t)
{
    size_t units;
    page_over o = page_verdict(&pg->b, copy_tokens(pg, n, false, s->buf, s->len, &units), s->utf16);
    if (o != PAGE_FITS || pg->b.pager->cfg.text_mode == MCPAGE_TEXT_STRUCTURED)
        return o;
    return page_verdict(&pg->b, copy_tokens(pg, n, true, t->buf, t->len, &units), units);
}

/* Records of the first n that are folded into an earlier row. */
static size_t folded_count(const mcpage_list *pg, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; pg->fold_field && i < n; i++)
        k += pg->recs[i].fold_of != 0;
    return k;
}

/*
 * The folds of the first n records as a JSON array, one object per row
 * that others were folded into, in row order:
 * {"<id field>": the row's id, "count": records it stands for, "others": [their ids]}.
 */
static void folds_json(const mcpage_list *pg, size_t n, tbuf *t)
{
    bool first = true;
    tb_put(t, "[", 1);
    for (size_t i = 0; i < n; i++) {
        size_t count = 1;
        for (size_t j = i + 1; j < n; j++)
            count += pg->recs[j].fold_of == i + 1;
        if (count == 1)
            continue;
        tb_puts(t, first ? "{\"" : ",{\"");
        first = false;
        tb_puts(t, pg->spec->id_fields[0]);
        tb_puts(t, "\":");
        tb_puts(t, pg->recs[i].idjson ? pg->recs[i].idjson : "null");
        tb_puts(t, ",\"count\":");
        tb_int(t, (int64_t)count);
        tb_puts(t, ",\"others\":[");
        for (size_t j = i + 1, k = 0; j < n; j++)
            if (pg->recs[j].fold_of == i + 1) {
                if (k++)
                    tb_put(t, ",", 1);
                tb_puts(t, pg->recs[j].idjson ? pg->recs[j].idjson : "null");
            }
        tb_puts(t, "]}");
    }
    tb_put(t, "]", 1);
}

static int render(mcpage_list *pg, size_t n, bool has_more, const char *stopped,
                  const char *fake_cursor, jw *s, tbuf *t)
{
    const char *cursor = has_more ? (fake_cursor ? fake_cursor : next_cursor(pg, n)) : NULL;
    tbuf h, ht;
    tb_init(&h);
    tb_init(&ht);
    hint(pg, n, has_more, cursor, false, &h);
    hint(pg, n, has_more, cursor, true, &ht);
    char key[96];
    bool shared = pg->share && pg->share_val && n > 0;
    size_t folded = folded_count(pg, n);
    tbuf folds;
    tb_init(&folds);
    if (folded)
        folds_json(pg, n, &folds);

    /* Both copies sized once for their records and an envelope. */
    size_t room = 2048 + h.len + ht.len + 2 * folds.len, troom = room;
    for (size_t i = 0; i < n; i++) {
        room += pg->recs[i].len + 1;
        troom += pg->recs[i].text ? pg->recs[i].tlen + 1 : pg->recs[i].len + 1;
    }
    jw_reset(s);
    tb_reset(t);
    (void)jw_reserve(s, room);
    (void)dbuf_reserve(t, troom);
    jw_object_begin(s);
    if (shared) {
        jw_key(s, pg->share);
        jw_json(s, pg->share_val);
    }
    if (columns(pg)) {
        jw_key(s, "columns");
        jw_array_begin(s);
        for (int i = 0; i < pg->ncols; i++)
            jw_string(s, pg->cols[i]);
        jw_array_end(s);
    }
    jw_key(s, pg->spec->unit);
    jw_array_begin(s);
    for (size_t i = 0; i < n; i++) {
        list_rec *r = &pg->recs[i];
        if (r->fold_of)
            continue; /* said in folds */
        jw_raw_value_counted(s, r->json, r->len, r->cps, r->units);
        r->at_s = s->len - r->len;
    }
    jw_array_end(s);
    if (columns(pg) && pg->trunc_notes && n > 0) {
        jw_key(s, "_truncated"); /* record 0's cut fields: an array has no room for them */
        jw_json(s, pg->trunc_notes);
    }
    jw_kv_int(s, "returned", (int64_t)n);
    if (folded) {
        jw_kv_int(s, "folded", (int64_t)folded);
        jw_key(s, "folds");
        jw_raw_value(s, folds.buf, folds.len);
    }
    memcpy(key, "total_", 6);
    memcpy(key + 6, pg->spec->unit, strlen(pg->spec->unit) + 1); /* spec_ok: at most 64 bytes */
    jw_kv_int(s, key, pg->total);
    if (pg->extra_key)
        jw_kv_int(s, pg->extra_key, pg->extra_val);
    jw_kv_bool(s, "has_more", has_more);
    jw_kv_int(s, "offset", pg->win.offset);
    jw_kv_int(s, "limit", pg->win.limit);
    jw_kv_string(s, "stopped_by", stopped);
    if (has_more) {
        jw_kv_int(s, "next_offset", pg->win.offset + (int64_t)n);
        if (cursor)
            jw_kv_string(s, "next_cursor", cursor);
    }
    if (pg->spec->relevance_order && pg->win.resume && pg->gen_set &&
        pg->current_gen != pg->cur.generation)
        jw_kv_bool(s, "order_may_have_shifted", true);
    page_write_clamps(&pg->b, s);
    if (h.len && h.err == 0)
        jw_kv_string(s, "hint", h.buf);
    jw_object_end(s);

    tb_reset(t);
    if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES) {
        summary(pg, n, stopped, t);
        if (folded) {
            tb_puts(t, "\nfolded: ");
            tb_int(t, (int64_t)folded);
            tb_printf(
                t, " (%s with the same %s as an earlier row of this page are not rows: see folds)",
                pg->spec->unit, pg->fold_field);
        }
        if (pg->extra_key) {
            char a[32];
            tb_puts(t, "\n");
            tb_puts(t, pg->extra_key);
            tb_puts(t, ": ");
            tb_puts(t, page_fmt_int(pg->extra_val, a));
        }
        if (shared) {
            tb_puts(t, "\n");
            tb_puts(t, pg->share);
            tb_puts(t, ": ");
            tsv_value(t, pg->share_val);
        }
        if (columns(pg) && n > 0) {
            tb_put(t, "\n", 1);
            for (int i = 0; i < pg->ncols; i++) {
                if (i)
                    tb_put(t, "\t", 1);
                tb_puts(t, pg->cols[i]);
            }
        }
        for (size_t i = 0; i < n; i++) {
            list_rec *r = &pg->recs[i];
            if (r->fold_of)
                continue;
            tb_put(t, "\n", 1);
            r->at_t = t->len;
            if (columns(pg))
                tb_put(t, r->text, r->tlen);
            else
                tb_put(t, r->json, r->len);
        }
        if (folded) {
            tb_puts(t, "\nfolds: ");
            tb_put(t, folds.buf, folds.len);
        }
        if (ht.len) {
            tb_put(t, "\n", 1);
            tb_put(t, ht.buf, ht.len);
        }
    }
    int err = s->err ? s->err : t->err ? t->err : h.err ? h.err : ht.err ? ht.err : folds.err;
    tb_free(&h);
    tb_free(&ht);
    tb_free(&folds);
    return err;
}

/* ------------------------------------------------------------- begin */

static bool spec_ok(const mcpage_list_spec *s)
{
    if (s == NULL || s->tool == NULL || s->unit == NULL || s->default_limit < 1 ||
        s->max_limit < s->default_limit || s->max_limit > PAGE_MAX_SAFE_INT / 2 ||
        strlen(s->unit) > 64 || (s->layout == MCPAGE_LIST_COLUMNS && s->fields == NULL) ||
        (s->layout != MCPAGE_LIST_OBJECTS && s->layout != MCPAGE_LIST_COLUMNS))
        return false;
    /* Default and identifier fields must be among the valid names. */
    for (const char *const *f = s->default_fields; s->fields && f && *f; f++)
        if (!name_in(*f, s->fields))
            return false;
    return true;
}

/* Writes "a, b, c" into buf (cut with "..." when long). */
static void list_names(const char *const *names, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (; names && *names; names++) {
        int w = snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", *names);
        if (w < 0 || (size_t)w >= cap - o) {
            snprintf(buf + (cap > 4 ? cap - 4 : 0), 4, "...");
            return;
        }
        o += (size_t)w;
    }
}

/* Rejects the `fields` argument (or its element `got`), naming the valid fields. */
static int reject_fields(mcpage_list *pg, const json_t *got)
{
    const mcpage_list_spec *spec = pg->spec;
    char valid[1024], expected[1100], example[128];
    list_names(spec->fields, valid, sizeof valid);
    snprintf(expected, sizeof expected, "a list of field names from: %s", valid);
    const char *const *ex = spec->default_fields ? spec->default_fields : spec->fields;
    if (ex[0] && ex[1])
        snprintf(example, sizeof example, "fields=[\"%s\",\"%s\"]", ex[0], ex[1]);
    else
        snprintf(example, sizeof example, "fields=[\"%s\"]", ex[0] ? ex[0] : "");
    return page_reject(&pg->b, "invalid_argument", "fields", got, expected, example, NULL);
}

static int parse_fields(mcpage_list *pg)
{
    const mcpage_list_spec *spec = pg->spec;
    pg->nsel = -1;
    if (spec->fields == NULL)
        return MCPAGE_OK;
    const json_t *v = pg->b.args ? json_object_get(pg->b.args, "fields") : NULL;
    if (v == NULL || json_is_null(v)) {
        pg->nsel = 0;
        if (spec->default_fields == NULL) {
            pg->nsel = -1; /* every field */
            return MCPAGE_OK;
        }
        for (const char *const *f = spec->default_fields; *f && pg->nsel < LIST_MAX_FIELDS; f++)
            pg->sel[pg->nsel++] = *f;
        return MCPAGE_OK;
    }
    if (!json_is_array(v) || json_array_size(v) > LIST_MAX_FIELDS)
        return reject_fields(pg, v);
    pg->nsel = 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e) || !name_in(json_string_value(e), spec->fields))
            return reject_fields(pg, e);
        pg->sel[pg->nsel++] = json_string_value(e);
    }
    return MCPAGE_OK;
}

/* COLUMNS: the selected fields in the spec's order (the projection fixes them for the walk). */
static void set_columns(mcpage_list *pg)
{
    pg->ncols = 0;
    if (!columns(pg))
        return;
    for (const char *const *f = pg->spec->fields; *f && pg->ncols < LIST_MAX_FIELDS; f++)
        if (selected(pg, *f))
            pg->cols[pg->ncols++] = *f;
}

int mcpage_list_share(mcpage_list *pg, const char *field)
{
    if (pg == NULL || field == NULL || pg->spec->fields == NULL ||
        !name_in(field, pg->spec->fields) || name_in(field, pg->spec->id_fields))
        return MCPAGE_EINVAL;
    if (pg->n > 0 || pg->full)
        return MCPAGE_ESTATE;
    if (pg->b.rejected)
        return MCPAGE_OK;
    for (const char *const *f = pg->spec->fields; *f; f++)
        if (strcmp(*f, field) == 0)
            pg->share = *f; /* the spec's string: lives as long as the spec */
    set_columns(pg);
    return MCPAGE_OK;
}

static int estimate_reserve(mcpage_list *pg);

int mcpage__list_select_more(mcpage_list *pg, const char *const *names)
{
    if (pg == NULL || names == NULL)
        return MCPAGE_EINVAL;
    if (pg->n > 0 || pg->full)
        return MCPAGE_ESTATE;
    if (pg->b.rejected || pg->nsel < 0 || json_object_get(pg->b.args, "fields") != NULL)
        return MCPAGE_OK; /* every field, or the caller's choice */
    for (; *names && pg->nsel < LIST_MAX_FIELDS; names++)
        for (const char *const *f = pg->spec->fields; f && *f; f++)
            if (strcmp(*f, *names) == 0 && !selected(pg, *f))
                pg->sel[pg->nsel++] = *f; /* the spec's string */
    set_columns(pg);
    return estimate_reserve(pg);
}

int mcpage__list_extra_int(mcpage_list *pg, const char *key, int64_t value)
{
    if (pg == NULL || key == NULL)
        return MCPAGE_EINVAL;
    if (pg->n > 0 || pg->full)
        return MCPAGE_ESTATE;
    if (pg->b.rejected)
        return MCPAGE_OK;
    pg->extra_key = key;
    pg->extra_val = value;
    return estimate_reserve(pg);
}

int mcpage__list_fold(mcpage_list *pg, const char *field)
{
    if (pg == NULL || field == NULL || pg->spec->fields == NULL ||
        !name_in(field, pg->spec->fields) || name_in(field, pg->spec->id_fields) ||
        pg->spec->id_fields == NULL || pg->spec->id_fields[0] == NULL)
        return MCPAGE_EINVAL;
    if (pg->n > 0 || pg->full)
        return MCPAGE_ESTATE;
    if (pg->b.rejected || !selected(pg, field))
        return MCPAGE_OK; /* a field the rows do not show folds nothing */
    for (const char *const *f = pg->spec->fields; *f; f++)
        if (strcmp(*f, field) == 0)
            pg->fold_field = *f; /* the spec's string */
    return MCPAGE_OK;
}

bool mcpage_list_wants(const mcpage_list *pg, const char *field)
{
    if (pg == NULL || field == NULL || pg->spec->fields == NULL ||
        !name_in(field, pg->spec->fields))
        return true;
    return selected(pg, field) || (pg->share && strcmp(field, pg->share) == 0);
}

static int parse_cursor(mcpage_list *pg, bool offset_given, int64_t offset_arg)
{
    const json_t *v = pg->b.args ? json_object_get(pg->b.args, "cursor") : NULL;
    if (v == NULL || json_is_null(v))
        return MCPAGE_OK;
    char example[96];
    snprintf(example, sizeof example, "limit=%lld (no cursor: the first page)",
             (long long)pg->spec->default_limit);
    if (!json_is_string(v))
        return page_reject(&pg->b, "invalid_argument", "cursor", v,
                           "a string: next_cursor of a previous page", example, NULL);
    mcpage_cursor_status st = mcpage_cursor_decode(
        pg->b.pager->kr, pg->b.tool, pg->fp, json_string_value(v), json_string_length(v), &pg->cur);
    if (st != MCPAGE_CURSOR_VALID)
        return page_reject(&pg->b, "invalid_cursor", "cursor", v, mcpage_cursor_status_text(st),
                           example, mcpage_cursor_status_name(st));
    pg->win.resume = true;
    pg->win.offset = pg->cur.offset;
    pg->win.nparts = pg->cur.nparts;
    pg->win.after = pg->cur.parts;
    pg->win.total = pg->cur.total;
    pg->win.generation = pg->cur.generation;
    if (offset_given && offset_arg != pg->cur.offset) {
        char a[32], b[32];
        tb_printf(&pg->b.notes, " The cursor was used, so offset %s was ignored (resumed at %s).",
                  page_fmt_int(offset_arg, a), page_fmt_int(pg->cur.offset, b));
    }
    return MCPAGE_OK;
}

static int render_reserve(mcpage_list *pg);

/*
 * A thread's memo of envelope reserves. The reserve is the estimate of a
 * page with no records rendered with stand-ins for every number and the
 * cursor, so it depends only on what the key below holds: the tool's
 * spec, the pager's settings, the window as used and as given, the
 * columns, the clamps and notes, and the names the hint repeats ("and
 * the same project"). The same call asked again finds it here instead of
 * rendering that page; debug builds render it all the same and compare.
 */
#define RESERVE_MEMO_SLOTS 4   /* reserves remembered per thread */
#define RESERVE_KEY_MAX    768 /* longer keys (many arguments or notes) are not remembered */

typedef struct reserve_memo {
    size_t klen;               /* bytes of key; 0: unused */
    size_t tokens;             /* the reserve's tokens */
    size_t chars;              /* the reserve's UTF-16 units */
    char key[RESERVE_KEY_MAX]; /* what the reserve depends on (reserve_key) */
} reserve_memo;

static _Thread_local reserve_memo reserve_memo_slots[RESERVE_MEMO_SLOTS];
static _Thread_local unsigned reserve_memo_next; /* the slot the next new reserve takes */

/* Appends n bytes to a key of *len bytes in key[0..cap); false when full. */
static bool key_put(char *key, size_t cap, size_t *len, const void *bytes, size_t n)
{
    if (n > cap - *len)
        return false;
    if (n)
        memcpy(key + *len, bytes, n); /* bytes may be NULL when n is 0 (an empty buffer) */
    *len += n;
    return true;
}

/* A string with its length, so two keys cannot run into each other. */
static bool key_str(char *key, size_t cap, size_t *len, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return key_put(key, cap, len, &n, sizeof n) && key_put(key, cap, len, s, n);
}

/* 1 when the call gave argument `name` (not null), else 0. */
static int64_t given(const page_base *b, const char *name)
{
    const json_t *v = b->args ? json_object_get(b->args, name) : NULL;
    return v != NULL && !json_is_null(v);
}

/* The memo key of pg's reserve in key[0..cap): its length, 0 when it does not fit. */
static size_t reserve_key(const mcpage_list *pg, char *key, size_t cap)
{
    const mcpage_list_spec *sp = pg->spec;
    const mcpage_pager_config *cfg = &pg->b.pager->cfg;
    const page_base *b = &pg->b;
    int64_t nums[] = {(int64_t)(uintptr_t)sp,
                      sp->default_limit,
                      sp->layout,
                      cfg->default_tokens,
                      cfg->text_mode,
                      pg->win.limit,
                      pg->win.max_tokens,
                      b->max_tokens,
                      b->max_chars,
                      given(b, "limit"),
                      given(b, "max_tokens"),
                      pg->ncols,
                      b->nclamped};
    size_t len = 0;
    bool ok = key_put(key, cap, &len, nums, sizeof nums) && key_str(key, cap, &len, sp->tool) &&
              key_str(key, cap, &len, sp->unit);
    for (int i = 0; ok && i < pg->ncols; i++)
        ok = key_str(key, cap, &len, pg->cols[i]);
    for (int i = 0; ok && i < b->nclamped; i++)
        ok = key_str(key, cap, &len, b->clamped[i]);
    ok = ok && key_str(key, cap, &len, pg->extra_key ? pg->extra_key : "");
    ok = ok && key_put(key, cap, &len, &b->notes.len, sizeof b->notes.len) &&
         key_put(key, cap, &len, b->notes.buf, b->notes.len);
    if (!ok)
        return 0;
    tbuf same;
    tb_init(&same);
    page_same_args(b, &same);
    ok = same.err == 0 && key_put(key, cap, &len, &same.len, sizeof same.len) &&
         key_put(key, cap, &len, same.buf, same.len);
    tb_free(&same);
    return ok ? len : 0;
}

/* Estimates the envelope's cost once, from a page with no records but
   every optional field at full length (or from the thread's memo). */
static int estimate_reserve(mcpage_list *pg)
{
    char key[RESERVE_KEY_MAX];
    size_t klen = reserve_key(pg, key, sizeof key);
    reserve_memo *hit = NULL;
    for (size_t i = 0; klen && hit == NULL && i < RESERVE_MEMO_SLOTS; i++)
        if (reserve_memo_slots[i].klen == klen && memcmp(reserve_memo_slots[i].key, key, klen) == 0)
            hit = &reserve_memo_slots[i];
#ifdef NDEBUG
    if (hit) {
        pg->reserve_tokens = hit->tokens;
        pg->reserve_chars = hit->chars;
        return MCPAGE_OK;
    }
#endif
    int rc = render_reserve(pg);
    assert(rc != 0 || hit == NULL ||
           (hit->tokens == pg->reserve_tokens && hit->chars == pg->reserve_chars));
    if (rc == 0 && klen && hit == NULL) {
        reserve_memo *m = &reserve_memo_slots[reserve_memo_next++ % RESERVE_MEMO_SLOTS];
        memcpy(m->key, key, klen);
        m->klen = klen;
        m->tokens = pg->reserve_tokens;
        m->chars = pg->reserve_chars;
    }
    return rc;
}

/* estimate_reserve's page: rendered and estimated. */
static int render_reserve(mcpage_list *pg)
{
    static const char fake[] = "c1.Xq3vB9kZ_m2Lr8Tn4Yw-Jd7Hs1Pc6Fg0Ae5Ku2Ni9Ob3Vx8Qz4Rl7Wy1Ms6Dt0"
                               "Gh5Ej2Cu9Ip3Bk8Fo4Sa7Nv1Lw6Hr0Tm5Yq2Xe9Zc3Jb8Pg4Uf7";
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int64_t total = pg->total, off = pg->win.offset;
    pg->total = INT64_C(999999999999);
    pg->win.offset = INT64_C(999999999999);
    int rc = render(pg, 0, true, "max_chars", fake, &s, &t);
    pg->total = total;
    pg->win.offset = off;
    if (rc == 0) {
        size_t su = 0, tu = 0;
        jw_measure_utf8(t.buf, t.len, NULL, &tu);
        su = s.utf16;
        size_t stok = estimate_memoized(s.buf, s.len);
        size_t ttok = estimate_memoized(t.buf, t.len);
        /* Room for the summary's and hint's longer numbers and for a cut-field note. */
        pg->reserve_tokens = (stok > ttok ? stok : ttok) + 40;
        pg->reserve_chars = (su > tu ? su : tu) + 120;
    }
    jw_free(&s);
    tb_free(&t);
    return rc;
}

int mcpage_list_begin(const mcpage_pager *p, const mcpage_list_spec *spec, const json_t *args,
                      mcpage_list **out)
{
    if (out == NULL)
        return MCPAGE_EINVAL;
    *out = NULL;
    if (p == NULL || !spec_ok(spec))
        return MCPAGE_EINVAL;
    mcpage_list *pg = mcpage__calloc(1, sizeof *pg);
    if (pg == NULL)
        return MCPAGE_ENOMEM;
    pg->spec = spec;
    tb_init(&pg->trunc_note);
    jw_init(&pg->cell_json, LIST_RECORD_MAX);
    tb_init(&pg->cell_line);
    int rc = page_base_init(&pg->b, p, spec->tool, args, list_window);
    if (rc < 0) {
        list_free(pg);
        return rc;
    }
    pg->win.total = -1;
    pg->win.args = pg->b.args;
    pg->nsel = -1;
    int64_t offset = 0;
    bool offset_given = pg->b.args && json_object_get(pg->b.args, "offset") &&
                        !json_is_null(json_object_get(pg->b.args, "offset"));
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "limit", "limit", "limit_clamped",
                            spec->default_limit, 1, spec->max_limit, NULL, &pg->win.limit);
    if (rc == 0)
        rc = page_int_param(&pg->b, pg->b.args, "offset", "offset", "offset_clamped", 0, 0, 0, NULL,
                            &offset);
    if (rc == 0)
        rc = page_max_tokens(&pg->b, &pg->win.max_tokens);
    if (rc == 0)
        rc = parse_fields(pg);
    if (rc == 0)
        set_columns(pg);
    if (rc == 0) {
        const char *skip[24];
        size_t k = 0;
        for (const char *const *w = list_window; *w; w++)
            skip[k++] = *w;
        for (const char *const *w = spec->fingerprint_skip; w && *w && k < 23; w++)
            skip[k++] = *w;
        skip[k] = NULL;
        mcpage_args_fingerprint(pg->b.args, skip, pg->fp);
        memcpy(pg->win.fingerprint, pg->fp, sizeof pg->fp);
        pg->win.offset = offset;
        rc = parse_cursor(pg, offset_given, offset);
    }
    pg->win.fetch = pg->win.limit + 1;
    if (rc == 0)
        rc = estimate_reserve(pg);
    if (rc < 0) {
        list_free(pg);
        return rc;
    }
    *out = pg;
    return rc;
}

const mcpage_list_window *mcpage_list_window_get(const mcpage_list *pg)
{
    return &pg->win;
}

void mcpage_list_set_total(mcpage_list *pg, int64_t total, int64_t generation)
{
    if (pg == NULL)
        return;
    pg->total_set = true;
    pg->total = total < 0 ? 0 : total;
    pg->generation = generation;
    pg->gen_set = true;
    pg->current_gen = generation;
}

void mcpage_list_set_generation(mcpage_list *pg, int64_t generation)
{
    if (pg == NULL)
        return;
    pg->gen_set = true;
    pg->current_gen = generation;
}

/* --------------------------------------------------------------- add */

/* Copies a record's keyset position, its strings into the page's pool. */
static int copy_pos(mcpage_list *pg, list_rec *r, const mcpage_keypart *pos, int nparts)
{
    r->nparts = 0;
    r->pos_pooled = true;
    for (int i = 0; i < nparts; i++) {
        mcpage_keypart p = pos[i];
        if (p.is_str) {
            if (p.s == NULL)
                p.len = 0;
            if (p.len > MCPAGE_CURSOR_MAX_STR_BYTES)
                p.len = MCPAGE_CURSOR_MAX_STR_BYTES + 1; /* encode will refuse it: no cursor */
            char *s = pool_strndup(pg, p.s ? p.s : "", p.len);
            if (s == NULL) {
                free_pos(r);
                return MCPAGE_ENOMEM;
            }
            p.s = s;
        }
        r->pos[r->nparts++] = p;
    }
    return MCPAGE_OK;
}

/*
 * The running estimate says the record just appended does not fit; the
 * reserve behind it is cautious (it assumes every optional envelope field
 * at full length), so render the page with it and measure exactly. A few
 * such checks per page (each also recalibrating the reserve) raise the
 * fill from about 90% of the budget to 96-99%; past them the estimate
 * decides alone.
 */
static int exact_check(mcpage_list *pg)
{
    pg->exact_checks++;
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    int rc = render(pg, pg->n, true, "max_tokens", NULL, &s, &t);
    page_over o = rc == 0 ? measure_copies(pg, pg->n, &s, &t) : PAGE_FITS;
    if (rc == 0 && o == PAGE_FITS) {
        /* Recalibrate the reserve on what the envelope really costs, with a
           little room for longer numbers, so the estimate alone carries
           the page further and the next check comes only near the end. */
        size_t su = s.utf16, tt = 0, tu = 0;
        size_t st = copy_tokens(pg, pg->n, false, s.buf, s.len, &tu);
        if (pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES)
            tt = copy_tokens(pg, pg->n, true, t.buf, t.len, &tu);
        size_t mt = st > tt ? st : tt, mu = su > tu ? su : tu;
        pg->reserve_tokens = (mt > pg->sum_tokens ? mt - pg->sum_tokens : 0) + 8;
        pg->reserve_chars = (mu > pg->sum_chars ? mu - pg->sum_chars : 0) + 24;
    }
    jw_free(&s);
    tb_free(&t);
    if (rc)
        return rc;
    if (o == PAGE_FITS)
        return MCPAGE_OK;
    /* It does not fit: take it back; it starts the next page. */
    rec_release(&pg->recs[--pg->n]);
    pg->cursor_n = 0;
    pg->has_more = true;
    pg->stopped_by = page_over_name(o);
    pg->full = true;
    return MCPAGE_PAGE_FULL;
}

static int add_record(mcpage_list *pg, list_rec *rec, json_t *proj, json_t *record,
                      size_t share_tokens, size_t share_chars, const mcpage_keypart *pos,
                      int nparts);
static int add_scanned(mcpage_list *pg, list_rec *tmp, size_t tok, size_t chars, json_t *proj,
                       json_t *record, const mcpage_keypart *pos, int nparts);

/* The row of the page whose fold field holds s[0..n), or SIZE_MAX. */
static size_t fold_row(const mcpage_list *pg, const char *s, size_t n)
{
    for (size_t i = 0; i < pg->n; i++) {
        const list_rec *r = &pg->recs[i];
        if (r->fold_of == 0 && r->fkey && r->fkeylen == n && memcmp(r->fkey, s, n) == 0)
            return i;
    }
    return SIZE_MAX;
}

/*
 * Keeps a record of a folding page as a row (its fold value and id) or,
 * when an earlier row has its fold value, folded into that row: it stays
 * a record of the window (returned, the cursor, next_offset) and costs
 * its id in the row's folds. Returns 1 when the record was not folded
 * (the caller adds it as a row), else what adding it returned.
 */
static int fold_or_row(mcpage_list *pg, list_rec *tmp, json_t *record, const mcpage_keypart *pos,
                       int nparts)
{
    const json_t *v = json_object_get(record, pg->fold_field);
    const json_t *idv = json_object_get(record, pg->spec->id_fields[0]);
    size_t idlen = 4; /* null */
    if (idv) {
        jw w;
        jw_init(&w, LIST_RECORD_MAX);
        jw_json(&w, idv);
        tmp->idjson = w.err ? NULL : pool_strndup(pg, w.buf, w.len);
        idlen = w.len;
        jw_free(&w);
    }
    size_t row =
        json_is_string(v) ? fold_row(pg, json_string_value(v), json_string_length(v)) : SIZE_MAX;
    if (row == SIZE_MAX) {
        if (json_is_string(v)) {
            tmp->fkey = pool_strndup(pg, json_string_value(v), json_string_length(v));
            tmp->fkeylen = tmp->fkey ? json_string_length(v) : 0;
        }
        return 1;
    }
    /* What it adds: its id and a comma, the row's fold object the first
       time ({"message_id":N,"count":N,"others":[]}), "folded" and "folds"
       and the text's folded line the first time on the page; both copies
       say it, the larger governs: counted in full, measured on finish. */
    bool row_new = true, page_new = folded_count(pg, pg->n) == 0;
    for (size_t i = row + 1; i < pg->n; i++)
        row_new = row_new && pg->recs[i].fold_of != row + 1;
    size_t chars = idlen + 1 + (row_new ? 48 + idlen : 0) + (page_new ? 160 : 0);
    tmp->fold_of = row + 1;
    return add_scanned(pg, tmp, chars / 2 + 1, chars, NULL, record, pos, nparts);
}

int mcpage_list_add(mcpage_list *pg, json_t *record, const mcpage_keypart *pos, int nparts)
{
    if (pg == NULL || record == NULL || !json_is_object(record) || nparts < 0 ||
        nparts > MCPAGE_CURSOR_MAX_PARTS || (nparts > 0 && pos == NULL)) {
        json_decref(record);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected) {
        json_decref(record);
        return MCPAGE_ESTATE;
    }
    if (pg->full) {
        json_decref(record);
        return MCPAGE_PAGE_FULL;
    }
    if ((int64_t)pg->n >= pg->win.limit) {
        /* The record past the window: it exists, so the walk goes on. */
        pg->has_more = true;
        pg->stopped_by = "limit";
        pg->full = true;
        json_decref(record);
        return MCPAGE_PAGE_FULL;
    }
    size_t share_tokens = 0, share_chars = 0;
    if (pg->share) {
        json_t *v = json_object_get(record, pg->share);
        if (pg->share_val == NULL) {
            pg->share_val = v ? json_incref(v) : json_null();
            /* The page-level value is said in both copies: reserve room for it. */
            jw w;
            jw_init(&w, LIST_RECORD_MAX);
            jw_json(&w, pg->share_val);
            int err = w.err;
            share_tokens = err ? 0 : mcpage__tokens_estimate(w.buf, w.len) + 4;
            share_chars = w.utf16 + strlen(pg->share) * 2 + 8;
            jw_free(&w);
            if (err) {
                json_decref(record);
                return err;
            }
        } else if (!json_equal(v ? v : json_null(), pg->share_val)) {
            /* A record of another value starts the next page, which says its own. */
            pg->has_more = true;
            pg->stopped_by = "limit";
            pg->full = true;
            json_decref(record);
            return MCPAGE_PAGE_FULL;
        }
    }
    list_rec tmp;
    memset(&tmp, 0, sizeof tmp);
    if (pg->fold_field) {
        int fr = fold_or_row(pg, &tmp, record, pos, nparts);
        if (fr != 1)
            return fr;
    }
    /* In COLUMNS the record is written field by field from the selected
       columns, so only the first record (kept for cutting) is projected. */
    json_t *proj = columns(pg) && pg->n > 0 ? json_incref(record) : project(pg, record);
    if (proj == NULL) {
        json_decref(record);
        return MCPAGE_ENOMEM;
    }
    int src = serialize(pg, proj, &tmp);
    if (src) {
        json_decref(proj);
        json_decref(record);
        return src;
    }
    return add_record(pg, &tmp, proj, record, share_tokens, share_chars, pos, nparts);
}

/*
 * The rest of mcpage_list_add once the record is serialized (tmp): scanned,
 * checked against the budget, kept. record and proj (NULL past the first
 * record of cells) are kept for the first record and released otherwise.
 */
static int add_record(mcpage_list *pg, list_rec *rec, json_t *proj, json_t *record,
                      size_t share_tokens, size_t share_chars, const mcpage_keypart *pos,
                      int nparts)
{
    list_rec tmp = *rec;
    size_t tok, chars;
    scan_record(&tmp, &tok, &chars);
    pg->reserve_tokens += share_tokens;
    pg->reserve_chars += share_chars;
    return add_scanned(pg, &tmp, tok, chars, proj, record, pos, nparts);
}

/* The rest of add_record once the record's cost (tok, chars) is known. */
static int add_scanned(mcpage_list *pg, list_rec *rec, size_t tok, size_t chars, json_t *proj,
                       json_t *record, const mcpage_keypart *pos, int nparts)
{
    list_rec tmp = *rec;
    page_over o = PAGE_FITS;
    if (pg->n > 0) {
        if ((int64_t)(pg->sum_tokens + tok + pg->reserve_tokens) > pg->b.meter_tokens)
            o = PAGE_OVER_TOKENS;
        else if ((int64_t)(pg->sum_chars + chars + pg->reserve_chars) > pg->b.max_chars)
            o = PAGE_OVER_CHARS;
        if (o != PAGE_FITS && pg->exact_checks >= LIST_EXACT_CHECKS) {
            pg->has_more = true;
            pg->stopped_by = page_over_name(o);
            pg->full = true;
            rec_release(&tmp);
            json_decref(proj);
            json_decref(record);
            return MCPAGE_PAGE_FULL;
        }
    }
    if (pg->n == pg->cap) {
        size_t cap = pg->cap ? pg->cap * 2 : 16;
        list_rec *r = mcpage__realloc(pg->recs, cap * sizeof *r);
        if (r == NULL) {
            rec_release(&tmp);
            json_decref(proj);
            json_decref(record);
            return MCPAGE_ENOMEM;
        }
        pg->recs = r;
        pg->cap = cap;
    }
    list_rec *r = &pg->recs[pg->n];
    *r = tmp;
    int rc = copy_pos(pg, r, pos, nparts);
    if (rc) {
        rec_release(&tmp);
        json_decref(proj);
        json_decref(record);
        return rc;
    }
    if (pg->n == 0) {
        pg->first_full = record; /* kept: read_with sees the record as given */
        pg->first_proj = proj;
    } else {
        json_decref(proj);
        json_decref(record);
    }
    pg->n++;
    pg->sum_tokens += tok;
    pg->sum_chars += chars;
    if (o != PAGE_FITS)
        return exact_check(pg);
    return MCPAGE_OK;
}

/* The record of cells as the JSON object a tool would have made. */
static json_t *cells_object(const list_cell *cells, size_t nc)
{
    json_t *rec = json_object();
    for (size_t i = 0; rec && i < nc; i++) {
        const list_cell *c = &cells[i];
        if (c->kind == LIST_CELL_STR && !page_is_text(c->str, c->len))
            continue; /* not text: the object leaves it out */
        json_object_set_new(rec, c->name,
                            c->kind == LIST_CELL_STR   ? json_stringn_nocheck(c->str, c->len)
                            : c->kind == LIST_CELL_INT ? json_integer(c->num)
                                                       : json_null());
    }
    return rec;
}

/* A copy of n cells and their strings in one allocation, or NULL. */
static list_cell *cells_copy(const list_cell *cells, size_t n)
{
    size_t bytes = n * sizeof *cells + 1;
    for (size_t k = 0; k < n; k++)
        bytes +=
            strlen(cells[k].name) + 1 + (cells[k].kind == LIST_CELL_STR ? cells[k].len + 1 : 0);
    list_cell *out = mcpage__malloc(bytes);
    if (out == NULL)
        return NULL;
    char *p = (char *)(out + n);
    for (size_t k = 0; k < n; k++) {
        out[k] = cells[k];
        size_t len = strlen(cells[k].name) + 1;
        out[k].name = memcpy(p, cells[k].name, len);
        p += len;
        if (cells[k].kind == LIST_CELL_STR) {
            out[k].str = memcpy(p, cells[k].str, cells[k].len);
            p[cells[k].len] = '\0';
            p += cells[k].len + 1;
        }
    }
    return out;
}

/* first_full and first_proj, made from first_cells when record 0 came as cells. */
static int first_objects(mcpage_list *pg)
{
    if (pg->first_proj)
        return MCPAGE_OK;
    if (pg->first_cells == NULL)
        return MCPAGE_ENOMEM; /* the copy could not be made */
    pg->first_full = cells_object(pg->first_cells, pg->first_ncells);
    pg->first_proj = pg->first_full ? project(pg, pg->first_full) : NULL;
    return pg->first_proj ? MCPAGE_OK : MCPAGE_ENOMEM;
}

int mcpage__list_add_cells(mcpage_list *pg, const list_cell *cells, size_t ncells,
                           const mcpage_keypart *pos, int nparts)
{
    if (pg == NULL || (cells == NULL && ncells > 0))
        return MCPAGE_EINVAL;
    bool valid = nparts >= 0 && nparts <= MCPAGE_CURSOR_MAX_PARTS && (nparts == 0 || pos != NULL);
    if (valid && !pg->b.rejected && !pg->full && (int64_t)pg->n >= pg->win.limit) {
        /* The record past the window, which a tool fetches to learn that
           the walk goes on: what mcpage_list_add does with it, without
           making it an object first. */
        pg->has_more = true;
        pg->stopped_by = "limit";
        pg->full = true;
        return MCPAGE_PAGE_FULL;
    }
    /* A page that is done, shares a field or holds objects takes the
       record as an object. */
    if (pg->share || !columns(pg) || pg->b.rejected || pg->full ||
        (int64_t)pg->n >= pg->win.limit || nparts < 0 || nparts > MCPAGE_CURSOR_MAX_PARTS ||
        (nparts > 0 && pos == NULL))
        return mcpage_list_add(pg, cells_object(cells, ncells), pos, nparts);
    list_rec tmp;
    memset(&tmp, 0, sizeof tmp);
    bool first = pg->n == 0;
    int rc = serialize_cells(pg, cells, ncells, &tmp);
    if (rc == 0)
        rc = add_record(pg, &tmp, NULL, NULL, 0, 0, pos, nparts);
    if (rc == 0 && first && pg->n == 1) {
        /* Kept for read_with and cutting, as cells: objects only if it is cut. */
        pg->first_cells = cells_copy(cells, ncells);
        pg->first_ncells = ncells;
        if (pg->first_cells == NULL)
            return MCPAGE_ENOMEM;
    }
    return rc;
}

/* ----------------------------------------------------------- cutting */

typedef struct cut_field {
    const char *key;    /* the field name (a key of first_proj) */
    char *full;         /* its value as text (strings as is, others as JSON) */
    size_t len;         /* bytes in full */
    size_t chars_total; /* code points in full */
    json_t *read_with;  /* {"tool","arguments"} from the spec, or NULL */
} cut_field;

/* Rewrites record 0 with fields[0..nf) cut to keep[] bytes, and the note. */
static int rewrite_first(mcpage_list *pg, cut_field *fields, size_t nf, const size_t *keep)
{
    json_t *rec = json_copy(pg->first_proj); /* shallow: only cut fields change */
    json_t *notes = json_array();
    if (rec == NULL || notes == NULL) {
        json_decref(rec);
        json_decref(notes);
        return MCPAGE_ENOMEM;
    }
    tb_reset(&pg->trunc_note);
    for (size_t i = 0; i < nf; i++) {
        size_t shown = 0;
        jw_measure_utf8(fields[i].full, keep[i], &shown, NULL);
        json_object_set_new(rec, fields[i].key, json_stringn(fields[i].full, keep[i]));
        json_t *note = json_object();
        json_object_set_new(note, "field", json_string(fields[i].key));
        json_object_set_new(note, "chars_total", json_integer((json_int_t)fields[i].chars_total));
        json_object_set_new(note, "chars_shown", json_integer((json_int_t)shown));
        if (fields[i].read_with)
            json_object_set(note, "read_with", fields[i].read_with);
        json_array_append_new(notes, note);
        char a[32], b[32];
        tb_printf(&pg->trunc_note, " Field %s of the first record was cut to %s of %s characters",
                  fields[i].key, page_fmt_int((int64_t)shown, a),
                  page_fmt_int((int64_t)fields[i].chars_total, b));
        const json_t *tool = json_object_get(fields[i].read_with, "tool");
        const json_t *targs = json_object_get(fields[i].read_with, "arguments");
        if (json_is_string(tool)) {
            tb_printf(&pg->trunc_note, "; read it whole with %s", json_string_value(tool));
            const char *k;
            json_t *v;
            bool first = true;
            json_object_foreach((json_t *)targs, k, v)
            {
                tb_printf(&pg->trunc_note, "%s%s=", first ? " with " : ", ", k);
                tb_json(&pg->trunc_note, v);
                first = false;
            }
        }
        tb_puts(&pg->trunc_note, ".");
    }
    json_t *note =
        json_array_size(notes) == 1 ? json_incref(json_array_get(notes, 0)) : json_incref(notes);
    json_decref(notes);
    if (columns(pg)) {
        json_decref(pg->trunc_notes); /* said at page level: the record is an array */
        pg->trunc_notes = note;
    } else {
        json_object_set_new(rec, "_truncated", note);
    }
    int rc = serialize(pg, rec, &pg->recs[0]);
    if (rc == 0)
        scan_record(&pg->recs[0], NULL, NULL);
    json_decref(rec);
    return rc;
}

static int compare_cut(const void *a, const void *b)
{
    const cut_field *x = a, *y = b;
    return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

/*
 * The only record is larger than the whole budget: cut its longest
 * fields (identifiers never) at UTF-8 boundaries until the page fits.
 * Binary search on each field's kept length, longest field first.
 */
static int cut_first(mcpage_list *pg, bool has_more, const char *stopped, jw *s, tbuf *t)
{
    cut_field fields[LIST_MAX_FIELDS];
    size_t keep[LIST_MAX_FIELDS];
    size_t nf = 0;
    int rc = first_objects(pg);
    if (rc)
        return rc;
    const char *key;
    json_t *val;
    json_object_foreach(pg->first_proj, key, val)
    {
        if (nf == LIST_MAX_FIELDS || name_in(key, pg->spec->id_fields))
            continue;
        cut_field *f = &fields[nf];
        memset(f, 0, sizeof *f);
        f->key = key;
        if (json_is_string(val)) {
            f->full = mcpage__strndup(json_string_value(val), json_string_length(val));
            f->len = json_string_length(val);
        } else if (json_is_array(val) || json_is_object(val)) {
            jw w;
            jw_init(&w, LIST_RECORD_MAX);
            jw_json(&w, val);
            f->full = w.err ? NULL : jw_take(&w, &f->len);
            jw_free(&w);
        } else {
            continue; /* numbers, booleans and null are small */
        }
        if (f->full == NULL) {
            rc = MCPAGE_ENOMEM;
            goto done;
        }
        jw_measure_utf8(f->full, f->len, &f->chars_total, NULL);
        nf++;
    }
    qsort(fields, nf, sizeof fields[0], compare_cut);
    for (size_t i = 0; i < nf; i++) {
        if (pg->spec->read_with)
            fields[i].read_with = pg->spec->read_with(pg->first_full, fields[i].key, pg->spec->ud);
        keep[i] = fields[i].len;
    }
    /* A UTF-16 unit is at most 4 bytes (max_chars * 4 can never fit), and
       no tokenizer averages 16 bytes a token on text that needs cutting:
       the search stays below both, so a huge field costs no more than a
       page-sized one. The result is a prefix that fits, not the longest. */
    size_t ceiling = (size_t)pg->b.max_chars * 4;
    if ((size_t)pg->b.max_tokens * 16 < ceiling)
        ceiling = (size_t)pg->b.max_tokens * 16;
    for (size_t i = 0; i < nf; i++) {
        size_t lo = 0, hi = fields[i].len < ceiling ? fields[i].len : ceiling;
        keep[i] = 0;
        rc = rewrite_first(pg, fields, i + 1, keep);
        if (rc == 0)
            rc = render(pg, 1, has_more, stopped, NULL, s, t);
        if (rc)
            goto done;
        if (measure_copies(pg, 1, s, t) != PAGE_FITS)
            continue; /* even empty it does not fit: cut the next field too */
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            keep[i] = jw_utf8_floor(fields[i].full, mid);
            rc = rewrite_first(pg, fields, i + 1, keep);
            if (rc == 0)
                rc = render(pg, 1, has_more, stopped, NULL, s, t);
            if (rc)
                goto done;
            if (measure_copies(pg, 1, s, t) == PAGE_FITS)
                lo = mid;
            else
                hi = mid - 1;
        }
        keep[i] = jw_utf8_floor(fields[i].full, lo);
        rc = rewrite_first(pg, fields, i + 1, keep);
        if (rc == 0)
            rc = render(pg, 1, has_more, stopped, NULL, s, t);
        break;
    }
done:
    for (size_t i = 0; i < nf; i++) {
        mcpage__free(fields[i].full);
        json_decref(fields[i].read_with);
    }
    return rc;
}

/* ------------------------------------------------------------ finish */

/*
 * The text block of a page of n records that render just wrote into t,
 * as mcpage__result_take_text writes it ({"type":"text","text":"..."}):
 * a record's line is taken as the escape its cells made (etext) where it
 * has one, and only what lies around the lines (summary, header, hint,
 * newlines) and lines that needed escapes are escaped here. The escape
 * of a text is the escapes of its pieces, cut between characters (a line
 * starts after a newline); debug builds compare the two.
 */
static void text_block(const mcpage_list *pg, size_t n, const tbuf *t, jw *b)
{
    const char *buf = t->buf ? t->buf : "";
    (void)jw_reserve(b, t->len + t->len / 8 + 64);
    jw_object_begin(b);
    jw_kv_string(b, "type", "text");
    jw_key(b, "text");
    jw_string_begin(b);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const list_rec *r = &pg->recs[i];
        if (r->fold_of)
            continue;
        size_t len = columns(pg) ? r->tlen : r->len;
        if (r->at_t - pos == 1 && buf[pos] == '\n')
            jw_string_piece_escaped(b, "\\n", 2, 2, 2); /* between two lines */
        else
            jw_string_piece(b, buf + pos, r->at_t - pos);
        if (r->etext)
            jw_string_piece_escaped(b, r->etext, r->elen, r->ecps, r->eunits);
        else
            jw_string_piece(b, buf + r->at_t, len);
        pos = r->at_t + len;
    }
    jw_string_piece(b, buf + pos, t->len - pos);
    jw_string_end(b);
    jw_object_end(b);
}

int mcpage_list_finish(mcpage_list *pg, mcpage_result *res)
{
    if (pg == NULL || res == NULL) {
        list_free(pg);
        return MCPAGE_EINVAL;
    }
    if (pg->b.rejected) {
        int rc = page_write_rejection(&pg->b, res);
        list_free(pg);
        return rc;
    }
    if (!pg->total_set) {
        list_free(pg);
        return MCPAGE_ESTATE; /* the total is an invariant of every page */
    }
    jw s;
    tbuf t;
    jw_init(&s, 0);
    tb_init(&t);
    size_t n = pg->n;
    bool has_more = pg->has_more;
    const char *stopped = has_more ? pg->stopped_by : "end";
    int rc;
    for (;;) {
        rc = render(pg, n, has_more, stopped, NULL, &s, &t);
        if (rc)
            goto done;
        page_over o = measure_copies(pg, n, &s, &t);
        if (o == PAGE_FITS || n == 0)
            break;
        if (n > 1) {
            /* The final envelope (cursor, hint) pushed it over: drop a record. */
            n--;
            has_more = true;
            stopped = page_over_name(o);
            continue;
        }
        stopped = has_more ? stopped : "end";
        rc = cut_first(pg, has_more, stopped, &s, &t);
        break;
    }
    if (rc == 0) {
        jw block;
        jw_init(&block, 0);
        bool lines = pg->b.pager->cfg.text_mode == MCPAGE_TEXT_LINES;
        if (lines && t.err == 0)
            text_block(pg, n, &t, &block);
        rc = page_write_result_block(&pg->b, res, &s, &t, lines && t.err == 0 ? &block : NULL);
        jw_free(&block);
    }
done:
    jw_free(&s);
    tb_free(&t);
    list_free(pg);
    return rc;
}
