/*
 * Text for PostgreSQL full-text search that behaves like the SQLite
 * backend's FTS5 index. PostgreSQL's own parser keeps `path/to/file.c`
 * and `foo-bar` whole and splits `max_tokens` at the underscore; FTS5's
 * unicode61 tokenizer (tokenchars '_') does the opposite. So this file
 * tokenizes in C, the same way for documents and queries, and hands
 * PostgreSQL finished tsvector and tsquery literals (no parser, no
 * dictionary: the 'simple' behaviour), with the same extra tokens at each
 * token's position (word classes, identifier parts: store_words.h). Snippets are cut here
 * too, by the rule of the SQLite backend's mcpage_snippet(), so hits are marked the same.
 *
 * Tokens: runs of ASCII letters, digits and `_`, and of non-ASCII code
 * points other than common punctuation and symbols (Latin-1 punctuation,
 * General Punctuation, arrows, math and box drawing, CJK punctuation,
 * emoji). Folding: lower case for ASCII, Latin-1, Latin Extended-A,
 * Greek and Cyrillic; Latin diacritics removed (`météo` = `meteo`).
 * Other scripts are compared as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_internal.h"
#include "store/store_words.h"

/* Base letters of U+00C0..U+00FF and U+0100..U+017F; '.' = no base
 * letter (only lower-cased), '-' = not a letter. */
static const char latin1_base[] = "aaaaaa.ceeeeiiii.nooooo-ouuuuy.."
                                  "aaaaaa.ceeeeiiii.nooooo-ouuuuy.y";
static const char latin_ext_base[] = "aaaaaaccccccccdd"
                                     "ddeeeeeeeeeegggg"
                                     "gggghhhhiiiiiiii"
                                     "ii..jjkk.lllllll"
                                     "llllnnnnnn..oooo"
                                     "oo..rrrrrrssssss"
                                     "ssttttttuuuuuuuu"
                                     "uuuuwwyyyzzzzzzs";

/* Decodes one UTF-8 code point at p (n bytes left); an invalid byte is
 * one code point of its own value (kept as a token byte). */
static unsigned decode(const unsigned char *p, size_t n, size_t *len)
{
    unsigned c = p[0];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (need == 0 || need > n) {
        *len = 1;
        return 0xFFFD0000u | c; /* invalid: a token byte */
    }
    unsigned cp = c & (0x3Fu >> (need - 1));
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *len = 1;
            return 0xFFFD0000u | c;
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    *len = need;
    return cp;
}

static int is_token_cp(unsigned cp)
{
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
               cp == '_';
    if (cp >= 0xFFFD0000u)
        return 1;
    if (cp < 0xC0)
        return cp == 0xAA || cp == 0xB2 || cp == 0xB3 || cp == 0xB5 || cp == 0xB9 || cp == 0xBA ||
               (cp >= 0xBC && cp <= 0xBE);
    if (cp == 0xD7 || cp == 0xF7)
        return 0;
    if ((cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x20A0 && cp <= 0x20CF) ||
        (cp >= 0x2190 && cp <= 0x2BFF) || (cp >= 0x2E00 && cp <= 0x2E7F) ||
        (cp >= 0x3000 && cp <= 0x3003) || (cp >= 0x3008 && cp <= 0x3011) ||
        (cp >= 0x3014 && cp <= 0x301F) || (cp >= 0xFE10 && cp <= 0xFE1F) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
        (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
        (cp >= 0xFF5B && cp <= 0xFF65) || (cp >= 0x1F000 && cp <= 0x1FAFF) || cp == 0xFEFF)
        return 0;
    return 1;
}

/* Appends the UTF-8 of cp to out (room for 4 bytes is the caller's). */
static size_t encode(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static unsigned fold_cp(unsigned cp)
{
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp >= 0xC0 && cp <= 0xFF) {
        char b = latin1_base[cp - 0xC0];
        if (b >= 'a' && b <= 'z')
            return (unsigned)b;
        return (cp <= 0xDE && cp != 0xD7) ? cp + 0x20 : cp;
    }
    if (cp >= 0x100 && cp <= 0x17F) {
        char b = latin_ext_base[cp - 0x100];
        if (b >= 'a' && b <= 'z')
            return (unsigned)b;
        return (cp == 0x132 || cp == 0x14A || cp == 0x152) ? cp + 1 : cp;
    }
    if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2)
        return cp + 0x20;
    if (cp >= 0x410 && cp <= 0x42F)
        return cp + 0x20;
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 0x50;
    return cp;
}

/* One token: bytes [start, end) of the text. */
typedef struct tok {
    size_t start; /* first byte */
    size_t end;   /* one past the last byte */
} tok;

/* The next token at or after *pos; 0 at the end. */
static int next_token(const char *text, size_t n, size_t *pos, tok *t)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = *pos;
    size_t len = 0;
    while (i < n && !is_token_cp(decode(p + i, n - i, &len)))
        i += len;
    if (i >= n) {
        *pos = n;
        return 0;
    }
    t->start = i;
    while (i < n && is_token_cp(decode(p + i, n - i, &len)))
        i += len;
    t->end = i;
    *pos = i;
    return 1;
}

/* The folded form of text[t] into out (cap bytes, NUL-terminated, cut at
 * a code point boundary); returns its length. */
static size_t fold_token(const char *text, tok t, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t o = 0;
    size_t len = 0;
    for (size_t i = t.start; i < t.end; i += len) {
        unsigned cp = decode(p + i, t.end - i, &len);
        char enc[4];
        size_t k;
        if (cp >= 0xFFFD0000u) {
            enc[0] = (char)(cp & 0xFF);
            k = 1;
        } else {
            k = encode(fold_cp(cp), enc);
        }
        if (o + k + 1 > cap)
            break;
        memcpy(out + o, enc, k);
        o += k;
    }
    out[o] = 0;
    return o;
}

/* ---- growable text ---------------------------------------------------- */

typedef struct buf {
    char *p;    /* NUL-terminated */
    size_t len; /* bytes before the NUL */
    size_t cap; /* bytes allocated */
    int oom;    /* an allocation failed */
} buf;

static void buf_add(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void buf_str(buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static int buf_done(buf *b, char **out)
{
    if (!b->oom && !b->p)
        buf_add(b, "", 0);
    if (b->oom) {
        free(b->p);
        return MCPAGE_ENOMEM;
    }
    *out = b->p;
    return 0;
}

/* ---- tsvector --------------------------------------------------------- */

/* The lexemes being written: each extra token goes at the position `num`. */
typedef struct tsv_out {
    buf *b;          /* the literal */
    const char *num; /* "':N " of the current token */
    size_t bytes;    /* lexeme bytes so far */
} tsv_out;

static int tsv_extra(void *ud, const char *lexeme, size_t len)
{
    tsv_out *o = ud;
    buf_add(o->b, "'", 1);
    buf_add(o->b, lexeme, len); /* ASCII letters, digits, `_` and the class mark */
    buf_str(o->b, o->num);
    o->bytes += len;
    return 0;
}

/* Each token as written and its extra tokens (store_words.h) at its
 * position, as the SQLite backend's tokenizer indexes them. */
int store_pg_tsvector(const char *text, char **out)
{
    buf b = {0};
    size_t n = text ? strlen(text) : 0;
    size_t pos = 0;
    tok t;
    int ntok = 0;
    char lex[PG_LEXEME_MAX + 1];
    char num[24];
    tsv_out o = {.b = &b, .num = num};
    while (ntok < PG_TSV_TOKENS && o.bytes < PG_TSV_BYTES && next_token(text, n, &pos, &t)) {
        size_t k = fold_token(text, t, lex, sizeof lex);
        if (k == 0)
            continue;
        ntok++;
        o.bytes += k;
        /* tsvector positions stop at 16383; later tokens share it */
        snprintf(num, sizeof num, "':%d ", ntok < 16383 ? ntok : 16383);
        buf_add(&b, "'", 1);
        buf_add(&b, lex, k); /* tokens hold no quote or backslash */
        buf_str(&b, num);
        store_word_extras(text + t.start, t.end - t.start, tsv_extra, &o);
    }
    return buf_done(&b, out);
}

/* ---- queries ---------------------------------------------------------- */

void store_pg_query_free(pg_query *q)
{
    for (int i = 0; i < q->ntokens; i++)
        free(q->tok[i]);
    memset(q, 0, sizeof *q);
}

static int add_term(pg_query *q, const char *start, size_t len, int prefix, int quoted, char *err,
                    size_t errlen)
{
    size_t pos = 0;
    tok t;
    int first = q->ntokens;
    char lex[PG_LEXEME_MAX + 1];
    /* An unquoted word asks for its class (store_words.h), one lexeme. */
    char cls[STORE_WORD_CAP];
    size_t ncls = quoted || prefix ? 0 : store_word_query(start, len, cls);
    if (ncls) {
        if (q->ntokens >= PG_QUERY_TOKENS) {
            snprintf(err, errlen, "search query has more than %d words", PG_QUERY_TOKENS);
            return MCPAGE_EPARSE;
        }
        char *copy = malloc(ncls + 1);
        if (!copy)
            return MCPAGE_ENOMEM;
        memcpy(copy, cls, ncls + 1);
        q->tok[q->ntokens++] = copy;
        len = 0; /* no further tokens */
    }
    while (next_token(start, len, &pos, &t)) {
        if (q->ntokens >= PG_QUERY_TOKENS) {
            snprintf(err, errlen, "search query has more than %d words", PG_QUERY_TOKENS);
            return MCPAGE_EPARSE;
        }
        size_t k = fold_token(start, t, lex, sizeof lex);
        if (!k)
            continue;
        char *copy = malloc(k + 1);
        if (!copy)
            return MCPAGE_ENOMEM;
        memcpy(copy, lex, k + 1);
        q->tok[q->ntokens++] = copy;
    }
    if (q->ntokens == first)
        return 0; /* no word characters: dropped, as the SQLite backend does */
    if (q->nterms >= PG_QUERY_TERMS) {
        snprintf(err, errlen, "search query has more than %d terms", PG_QUERY_TERMS);
        return MCPAGE_EPARSE;
    }
    q->first[q->nterms] = first;
    q->count[q->nterms] = q->ntokens - first;
    q->prefix[q->nterms] = prefix;
    q->nterms++;
    return 0;
}

/* The same term syntax as the SQLite backend's fts_query_build(). */
int store_pg_query_parse(const char *in, pg_query *q, char *err, size_t errlen)
{
    memset(q, 0, sizeof *q);
    const char *p = in, *start, *end;
    int rc = 0, prefix, quoted;
    while (store_query_term_quoted(&p, &start, &end, &prefix, &quoted)) {
        if ((rc = add_term(q, start, (size_t)(end - start), prefix, quoted, err, errlen)) < 0)
            goto fail;
    }
    if (!q->nterms) {
        snprintf(err, errlen,
                 "search query has no words to search for; give words or \"quoted phrases\"");
        rc = MCPAGE_EPARSE;
        goto fail;
    }
    return 0;
fail:
    store_pg_query_free(q);
    return rc;
}

int store_pg_query_tsquery(const pg_query *q, char **out)
{
    buf b = {0};
    for (int t = 0; t < q->nterms; t++) {
        if (t)
            buf_str(&b, " & ");
        buf_str(&b, "(");
        for (int i = 0; i < q->count[t]; i++) {
            if (i)
                buf_str(&b, " <-> ");
            const char *lexeme = q->tok[q->first[t] + i];
            buf_str(&b, "'");
            buf_str(&b, lexeme);
            buf_str(&b, "'");
            if (q->prefix[t] && i == q->count[t] - 1)
                buf_str(&b, ":*");
            if (lexeme[0] == STORE_WORD_CLASS && store_word_query_self(lexeme, strlen(lexeme))) {
                buf_str(&b, " | '"); /* the class is not indexed beside its word */
                buf_str(&b, lexeme + 1);
                buf_str(&b, "'");
            }
        }
        buf_str(&b, ")");
    }
    return buf_done(&b, out);
}

/* ---- snippets ---------------------------------------------------------- */

#define SNIPPET_TOKENS 24 /* as the SQLite backend's mcpage_snippet(..., 24) */

/* A phrase instance: tokens [pos, pos + size) match term `term`. */
typedef struct inst {
    int pos;  /* first token */
    int size; /* tokens */
    int term; /* which term */
} inst;

typedef struct doc {
    const char *text; /* the message text */
    tok *t;           /* its tokens */
    char **fold;      /* folded token i */
    int n;            /* tokens */
    inst *in;         /* phrase instances, by position */
    int nin;          /* instances */
} doc;

static void doc_free(doc *d)
{
    for (int i = 0; i < d->n; i++)
        free(d->fold[i]);
    free(d->fold);
    free(d->t);
    free(d->in);
}

static int doc_load(doc *d, const char *text)
{
    size_t n = strlen(text);
    size_t pos = 0;
    int cap = 0;
    tok t;
    char lex[PG_LEXEME_MAX + 1];
    d->text = text;
    while (next_token(text, n, &pos, &t)) {
        if (d->n == cap) {
            int nc = cap ? cap * 2 : 64;
            tok *nt = realloc(d->t, (size_t)nc * sizeof *nt);
            if (!nt)
                return MCPAGE_ENOMEM;
            d->t = nt;
            char **nf = realloc(d->fold, (size_t)nc * sizeof *nf);
            if (!nf)
                return MCPAGE_ENOMEM;
            d->fold = nf;
            cap = nc;
        }
        size_t k = fold_token(text, t, lex, sizeof lex);
        char *copy = malloc(k + 1);
        if (!copy)
            return MCPAGE_ENOMEM;
        memcpy(copy, lex, k + 1);
        d->t[d->n] = t;
        d->fold[d->n++] = copy;
    }
    return 0;
}

/* Whether one extra token of a document token is the class asked for. */
static int is_wanted(void *ud, const char *lexeme, size_t len)
{
    const char *want = ud;
    return strlen(want) == len && memcmp(want, lexeme, len) == 0;
}

static int term_at(const doc *d, const pg_query *q, int term, int pos)
{
    int cnt = q->count[term];
    if (pos + cnt > d->n)
        return 0;
    for (int i = 0; i < cnt; i++) {
        const char *want = q->tok[q->first[term] + i];
        const char *have = d->fold[pos + i];
        if (want[0] == STORE_WORD_CLASS) { /* a class: one of the token's extras */
            const tok *t = &d->t[pos + i];
            if (!store_word_extras(d->text + t->start, t->end - t->start, is_wanted,
                                   (void *)want) &&
                !(strcmp(have, want + 1) == 0 && store_word_query_self(want, strlen(want))))
                return 0; /* nor the word a class of itself also asks for */
        } else if (q->prefix[term] && i == cnt - 1) {
            if (strncmp(have, want, strlen(want)) != 0)
                return 0;
        } else if (strcmp(have, want) != 0) {
            return 0;
        }
    }
    return 1;
}

static int doc_match(doc *d, const pg_query *q)
{
    int cap = 0;
    for (int pos = 0; pos < d->n; pos++) {
        for (int term = 0; term < q->nterms; term++) {
            if (!term_at(d, q, term, pos))
                continue;
            if (d->nin == cap) {
                int nc = cap ? cap * 2 : 16;
                inst *ni = realloc(d->in, (size_t)nc * sizeof *ni);
                if (!ni)
                    return MCPAGE_ENOMEM;
                d->in = ni;
                cap = nc;
            }
            d->in[d->nin++] = (inst){pos, q->count[term], term};
        }
    }
    return 0;
}

/* FTS5's fts5SnippetScore(): 1000 for each term's first instance in the
 * window, 1 for each further one; *adj = a start that centres the hits. */
static int snippet_score(const doc *d, int nterms, int pos, int *adj)
{
    char seen[PG_QUERY_TERMS] = {0};
    int score = 0;
    int first = -1;
    int last = 0;
    int lo = 0, hi = d->nin; /* the first instance at or after pos */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (d->in[mid].pos < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < d->nin && d->in[i].pos < pos + SNIPPET_TOKENS; i++) {
        const inst *in = &d->in[i];
        score += seen[in->term] ? 1 : 1000;
        seen[in->term] = 1;
        if (first < 0)
            first = in->pos;
        last = in->pos + in->size;
    }
    (void)nterms;
    if (adj) {
        int a = first - (SNIPPET_TOKENS - (last - first)) / 2;
        if (a + SNIPPET_TOKENS > d->n)
            a = d->n - SNIPPET_TOKENS;
        if (a < 0)
            a = 0;
        *adj = a;
    }
    return score;
}

int store_pg_snippet(const char *text, const pg_query *q, char **out)
{
    doc d = {0};
    buf b = {0};
    int rc = doc_load(&d, text ? text : "");
    if (rc == 0)
        rc = doc_match(&d, q);
    if (rc < 0)
        goto out;
    /* The best window by match positions alone, as the SQLite backend's
     * mcpage_snippet() (sqlite_snippet.c) chooses it: both mark the same. */
    int best = 0;
    int best_score = -1;
    for (int i = 0; i < d.nin; i++) {
        int adj = 0;
        int sc = snippet_score(&d, q->nterms, d.in[i].pos, &adj);
        if (sc > best_score) {
            best_score = sc;
            best = adj;
        }
    }
    int end = best + SNIPPET_TOKENS; /* one past the last token shown */
    if (end > d.n)
        end = d.n;
    size_t from = best > 0 ? d.t[best].start : 0;
    size_t to = end < d.n ? (end > 0 ? d.t[end - 1].end : 0) : strlen(d.text);
    if (best > 0)
        buf_str(&b, "…");
    /* marked spans: instances inside the window, merged when they overlap */
    size_t at = from;
    for (int i = 0; i < d.nin; i++) {
        const inst *in = &d.in[i];
        if (in->pos < best || in->pos >= end)
            continue;
        int last = in->pos + in->size - 1;
        while (i + 1 < d.nin && d.in[i + 1].pos <= last && d.in[i + 1].pos < end) {
            int l2 = d.in[i + 1].pos + d.in[i + 1].size - 1;
            if (l2 > last)
                last = l2;
            i++;
        }
        if (last >= end)
            last = end - 1;
        size_t s0 = d.t[in->pos].start;
        size_t s1 = d.t[last].end;
        if (s0 < at)
            continue;
        buf_add(&b, d.text + at, s0 - at);
        buf_str(&b, STORE_HIT_OPEN);
        buf_add(&b, d.text + s0, s1 - s0);
        buf_str(&b, STORE_HIT_CLOSE);
        at = s1;
    }
    if (to > at)
        buf_add(&b, d.text + at, to - at);
    if (end < d.n)
        buf_str(&b, "…");
    rc = buf_done(&b, out);
    b.p = NULL;
out:
    free(b.p);
    doc_free(&d);
    return rc;
}
