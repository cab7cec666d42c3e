/*
 * mcpage_snippet(): FTS5's snippet() without reading the whole text.
 *
 * FTS5's own snippet() tokenizes the whole column (to score windows and
 * find sentence starts), which for a message of a megabyte (a long tool
 * output) is most of a search page's time. This one scores the windows
 * from the match positions the index already has (xInst): 1000 for each
 * phrase's first match in the window, 1 for each further one, the window
 * centred on its matches, the first best window winning; then it
 * tokenizes only up to that window's end and stops. What it gives up is
 * snippet()'s preference for starting at a sentence. The PostgreSQL
 * backend cuts its snippets by the same rule (pg_text.c), so both mark
 * the same spans. It takes snippet()'s arguments, so the query can fall
 * back to snippet() by name:
 *
 *   mcpage_snippet(fts_table, column, open, close, ellipsis, tokens)
 *
 * Overlapping matches are marked as one span; an ellipsis marks text left
 * out before and after; text between tokens is kept as it is.
 *
 * A long text (SNIP_MAP_MIN tokens or more) also has a token map in
 * `message_tokmap`: the byte offset of every SNIP_MAP_EVERY-th token,
 * written by the store with the text (mcpage_tokmap()). The snippet then
 * reads only the bytes from the map entry before its window, with
 * incremental blob I/O, and tokenizes a few hundred tokens: a match
 * 500 KB into a tool output no longer reads or tokenizes the 500 KB before
 * it (0.85 ms to a few microseconds a snippet). A text without a map (a
 * store written before the map existed) is read whole, as before.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_internal.h"
#include "store/store_codec.h"
#include "store/store_words.h"

#define SNIP_TOKENS_MAX  64
#define SNIP_MARK_MAX    16     /* bytes of an open/close/ellipsis string used */
#define SNIP_PHRASES_MAX 64     /* phrases told apart when scoring (more share a slot) */
#define SNIP_INST_MAX    100000 /* matches considered (a 1 MiB text has fewer tokens) */
#define SNIP_MAP_EVERY   256    /* tokens between two token map entries */
#define SNIP_MAP_MIN     1024   /* tokens from which a text has a token map */
#define SNIP_CHUNK       4096   /* bytes read first after a map entry (grows by 4x) */

int store_sqlite__snippet_whole;

int64_t store_sqlite__snippet_windows;

int64_t store_sqlite__snippet_frames;

int64_t store_sqlite__tokmap_caught;

int64_t store_sqlite__docs_indexed;
int64_t store_sqlite__docs_replayed;

int64_t store_sqlite__class_alone;

int store_sqlite__class_alone_off;

/* The token map of the text being indexed (store_sqlite_tokmap_watch). */
typedef struct tokmap {
    int pos;            /* tokens seen */
    int next;           /* the next token whose offset goes into the map */
    int base;           /* byte offset of the stretch being tokenized */
    unsigned char *map; /* little-endian uint32 offsets, sqlite3_malloc'd */
    int len, cap;       /* bytes */
    int nomem;
} tokmap;

/* What the writer's tokenizer is asked to do with the next document. */
enum { WATCH_OFF, WATCH_ARMED, WATCH_DONE };

/* Own-stem classes whose postings were looked up, per connection. */
#define CLASS_SEEN_MAX 8

/* Whether the class `cls` had postings, as the connection last saw it. */
typedef struct class_seen {
    char cls[STORE_WORD_CAP];
    int len;               /* bytes of cls; 0: an empty slot */
    int indexed;           /* the class had postings */
    unsigned version;      /* the file's data version then (SQLITE_FCNTL_DATA_VERSION) */
    sqlite3_int64 changes; /* and the connection's own changes (sqlite3_total_changes64) */
} class_seen;

/* Per connection: the FTS5 API, the built-in unicode61 and, once the writer needs it, an
 * instance of it; the token map being caught while FTS5 indexes a text. */
typedef struct snip_conn {
    sqlite3 *db;
    fts5_api *fts5;
    fts5_tokenizer tk; /* the built-in unicode61, for the non-ASCII stretches of a token map */
    void *tk_ud;
    Fts5Tokenizer *tok;
    int watch;       /* WATCH_* */
    int watched_len; /* bytes of the text the map was caught from */
    tokmap watched;
    store_codec codec;   /* a window's frames, or its text of one frame (snip_window_read) */
    sqlite3_stmt *row;   /* SNIP_ROW_SQL, once prepared */
    int keep_row;        /* row and vocab are kept between uses (store_sqlite_snippet_close) */
    sqlite3_stmt *vocab; /* CLASS_VOCAB_SQL, once prepared */
    class_seen seen[CLASS_SEEN_MAX]; /* own-stem classes looked up (class_indexed) */
    int seen_next;                   /* the slot the next look-up replaces */
    const store_tokens *ahead;       /* the next document's tokens, made ahead (or NULL) */
} snip_conn;

/* One match: tokens [pos, pos + size) match phrase `phrase`. */
typedef struct snip_inst {
    int pos;    /* first token */
    int size;   /* tokens */
    int phrase; /* which phrase of the query */
} snip_inst;

/* The window being collected while the column is tokenized. */
typedef struct snip_window {
    int start;                 /* index of the window's first token */
    int end;                   /* one past its last */
    int next;                  /* index of the next token seen */
    int from[SNIP_TOKENS_MAX]; /* byte offset where each window token starts */
    int to[SNIP_TOKENS_MAX];   /* and where it ends */
    int got;                   /* window tokens collected */
    int stopped;               /* tokenizing stopped at the window's end: more text follows */
} snip_window;

static int snip_token(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    (void)tok;
    (void)ntok;
    snip_window *w = ud;
    if (flags & FTS5_TOKEN_COLOCATED)
        return SQLITE_OK; /* a synonym at the same position */
    int i = w->next++;
    if (i >= w->end) {
        w->stopped = 1;
        return SQLITE_DONE; /* stops xTokenize: the rest of the column is not read */
    }
    if (i >= w->start) {
        w->from[i - w->start] = from;
        w->to[i - w->start] = to;
        w->got = i - w->start + 1;
    }
    return SQLITE_OK;
}

/* A text argument, bounded; "" when NULL. */
static const char *snip_arg(sqlite3_value *v, int *n)
{
    const char *s = (const char *)sqlite3_value_text(v);
    *n = s ? sqlite3_value_bytes(v) : 0;
    if (*n > SNIP_MARK_MAX)
        *n = SNIP_MARK_MAX;
    return s ? s : "";
}

static void put(sqlite3_str *out, const char *s, int n)
{
    if (n > 0)
        sqlite3_str_append(out, s, n);
}

static int inst_cmp(const void *a, const void *b)
{
    const snip_inst *x = a, *y = b;
    return x->pos != y->pos ? (x->pos < y->pos ? -1 : 1)
                            : (x->size > y->size) - (x->size < y->size);
}

/* The matches in column `col`, by position; -1 without memory. */
static int snip_matches(const Fts5ExtensionApi *api, Fts5Context *fts, int col, snip_inst **out)
{
    int ninst = 0, n = 0;
    *out = NULL;
    if (api->xInstCount(fts, &ninst) != SQLITE_OK || ninst <= 0)
        return 0;
    if (ninst > SNIP_INST_MAX)
        ninst = SNIP_INST_MAX;
    snip_inst *in = sqlite3_malloc64((sqlite3_uint64)ninst * sizeof *in);
    if (in == NULL)
        return -1;
    for (int i = 0; i < ninst; i++) {
        int ph, c, off;
        if (api->xInst(fts, i, &ph, &c, &off) != SQLITE_OK || c != col)
            continue;
        int size = api->xPhraseSize(fts, ph);
        in[n++] = (snip_inst){off, size > 0 ? size : 1, ph};
    }
    qsort(in, (size_t)n, sizeof *in, inst_cmp);
    *out = in;
    return n;
}

/*
 * The first token of the best window of `want` tokens in a column of
 * `ntok` tokens (the rule of FTS5's fts5SnippetScore, without sentences).
 */
static int snip_best_start(const snip_inst *in, int n, int want, int ntok)
{
    int best = 0, best_score = -1;
    for (int i = 0; i < n; i++) {
        unsigned char seen[SNIP_PHRASES_MAX] = {0};
        int score = 0, first = in[i].pos, last = 0;
        for (int j = i; j < n && in[j].pos < in[i].pos + want; j++) {
            int slot = in[j].phrase % SNIP_PHRASES_MAX;
            score += seen[slot] ? 1 : 1000;
            seen[slot] = 1;
            last = in[j].pos + in[j].size;
        }
        if (score > best_score) {
            int a = first - (want - (last - first)) / 2;
            if (a + want > ntok)
                a = ntok - want;
            best_score = score;
            best = a > 0 ? a : 0;
        }
    }
    return best;
}

/* 1 for the bytes that are token characters of the table's tokenizer
 * (unicode61 tokenchars '_'): ASCII letters, digits and '_'. Every other
 * ASCII byte separates tokens; bytes from 0x80 up are decided by unicode61. */
static const unsigned char tok_ascii[128] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['_'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1,
    ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1,
    ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
    ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1,
    ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1,
    ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1,
    ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1};

/* An ASCII byte that ends any token. */
static int ascii_sep(unsigned char c)
{
    return c < 0x80 && !tok_ascii[c];
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Byte classes of the scan: an ASCII separator (0), an ASCII token
 * character (a lower-case letter, an upper-case one, a digit or `_`), a
 * byte from 0x80. */
enum { TM_SEP = 0, TM_LOWER = 1, TM_UPPER = 2, TM_OTHER = 4, TM_TOKEN = 7, TM_HIGH = 8 };

#define L TM_LOWER
#define U TM_UPPER
#define O TM_OTHER
#define H TM_HIGH
/* Every byte's class (tok_ascii's token characters split by case). */
/* clang-format off */
static const unsigned char tm_class[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    O, O, O, O, O, O, O, O, O, O, 0, 0, 0, 0, 0, 0,
    0, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U,
    U, U, U, U, U, U, U, U, U, U, U, 0, 0, 0, 0, O,
    0, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,
    L, L, L, L, L, L, L, L, L, L, L, 0, 0, 0, 0, 0,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
};
/* clang-format on */
#undef L
#undef U
#undef O
#undef H

/* A token of a scan: s[from..to) for the caller's ud, `kinds` the TM_
 * classes of its bytes or'ed (an ASCII token's); non-zero stops the scan. */
typedef int (*scan_fn)(void *ud, int from, int to, unsigned kinds);

/*
 * The FTS5 table's tokens of s[0..n), in order. ASCII runs are scanned
 * here (an ASCII separator ends every token): each ASCII token goes to
 * `ascii`. A stretch with bytes from 0x80, between two ASCII separators,
 * goes to `stretch`, which has unicode61 itself tokenize it: unicode61
 * starts afresh after an ASCII separator and ends a token at one, so the
 * tokens are those of the whole text. Returns the first non-zero return.
 */
static int token_scan(const unsigned char *s, int n, scan_fn ascii, scan_fn stretch, void *ud)
{
    const unsigned char *cls = tm_class;
    int i = 0;
    for (;;) {
        while (i < n && cls[s[i]] == TM_SEP)
            i++;
        if (i == n)
            return SQLITE_OK;
        int j = i;
        unsigned kinds = 0;
        while (j < n && (cls[s[j]] & TM_TOKEN))
            kinds |= cls[s[j++]];
        int rc;
        if (j == n || cls[s[j]] == TM_SEP) { /* an ASCII token */
            rc = ascii(ud, i, j, kinds);
        } else {
            while (j < n && cls[s[j]] != TM_SEP)
                j++;
            rc = stretch(ud, i, j, 0);
        }
        if (rc != SQLITE_OK)
            return rc;
        i = j;
    }
}

/* An instance of the built-in unicode61 with the table's arguments (sqlite_schema.c). */
static int unicode61_new(const snip_conn *sc, Fts5Tokenizer **out)
{
    static const char *const args[] = {"remove_diacritics", "2", "tokenchars", "_"};
    return sc->tk.xCreate(sc->tk_ud, (const char **)args, 4, out) == SQLITE_OK ? SQLITE_OK
                                                                               : SQLITE_ERROR;
}

/* The connection's unicode61, made on first use. */
static int snip_unicode61(snip_conn *sc)
{
    return sc->tok == NULL ? unicode61_new(sc, &sc->tok) : SQLITE_OK;
}

/* A window's tokens by token_scan: the tokens the index has, its ASCII
 * ones cut here, not by unicode61 (a quarter of a snippet's time). */
typedef struct snip_scan {
    snip_conn *sc;
    const unsigned char *s;
    snip_window *w;
    int base; /* where the stretch unicode61 tokenizes starts in s */
} snip_scan;

static int snip_scan_ascii(void *ud, int from, int to, unsigned kinds)
{
    (void)kinds;
    return snip_token(((snip_scan *)ud)->w, 0, NULL, 0, from, to);
}

static int snip_scan_token(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    snip_scan *m = ud;
    return snip_token(m->w, flags, tok, ntok, m->base + from, m->base + to);
}

static int snip_scan_stretch(void *ud, int from, int to, unsigned kinds)
{
    (void)kinds;
    snip_scan *m = ud;
    if (snip_unicode61(m->sc) != SQLITE_OK)
        return SQLITE_ERROR;
    m->base = from;
    return m->sc->tk.xTokenize(m->sc->tok, m, FTS5_TOKENIZE_DOCUMENT, (const char *)m->s + from,
                               to - from, snip_scan_token);
}

/* store_codec_read_fn over an open blob. */
static int snip_blob_read(void *ud, size_t at, unsigned char *dst, size_t n)
{
    return n > INT32_MAX || at > INT32_MAX ||
           sqlite3_blob_read(ud, dst, (int)n, (int)at) != SQLITE_OK;
}

/* A row's codec, its stored bytes when they are one frame (decoded here,
 * not through the view and its copy) and, when ?2, its token map: one
 * statement, kept on a store's connection (store_sqlite_snippet_close). */
#define SNIP_ROW_SQL                                                                               \
    "SELECT codec, CASE codec WHEN 1 THEN text END, CASE WHEN ?2 THEN (SELECT offsets FROM "       \
    "message_tokmap WHERE message_id = ?1) END FROM message_body WHERE message_id = ?1"

/* Where a window's text comes from. */
typedef struct snip_src {
    int64_t codec;
    sqlite3_blob *blob;         /* a plain text, or the frames of a long one */
    const unsigned char *whole; /* a text of one frame, decoded (sc->codec's) */
    size_t total;               /* bytes of text (of the value, for frames) */
    size_t from;                /* the window's first byte: the map entry's */
} snip_src;

/*
 * Reads the row of message `id` into src: its codec, the byte its token
 * map entry *k points at (0: the text's start; *k lowered to the map's
 * last entry), and its text decoded (one frame) or opened (plain,
 * frames). 1, or 0 when the text must be read whole (no row, no map, a
 * frame that does not decode: the whole-text path names the damage).
 */
static int snip_src_open(snip_conn *sc, sqlite3_int64 id, int *k, snip_src *src)
{
    sqlite3_stmt *st = sc->row;
    if (st == NULL &&
        sqlite3_prepare_v3(sc->db, SNIP_ROW_SQL, -1, sc->keep_row ? SQLITE_PREPARE_PERSISTENT : 0,
                           &st, NULL) != SQLITE_OK)
        return 0;
    if (sc->keep_row)
        sc->row = st;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, *k > 0);
    int ok = sqlite3_step(st) == SQLITE_ROW;
    src->codec = ok ? sqlite3_column_int64(st, 0) : -1;
    if (ok && *k > 0) {
        const unsigned char *map = sqlite3_column_blob(st, 2);
        int entries = sqlite3_column_bytes(st, 2) / 4;
        *k = *k > entries ? entries : *k;
        ok = map != NULL;
        src->from = ok && *k > 0 ? le32(map + (size_t)(*k - 1) * 4) : 0;
    }
    if (ok && src->codec == STORE_CODEC_ZSTD) {
        const unsigned char *in = sqlite3_column_blob(st, 1);
        const char *why = "";
        ok = in && store_codec_unpack(&sc->codec, STORE_CODEC_ZSTD, in,
                                      (size_t)sqlite3_column_bytes(st, 1), STORE_CODEC_OUT_MAX,
                                      &src->whole, &src->total, &why) == 0;
    }
    if (sc->keep_row)
        sqlite3_reset(st); /* no read left open between snippets */
    else
        sqlite3_finalize(st);
    if (!ok || src->codec == STORE_CODEC_ZSTD)
        return ok;
    if (src->codec != STORE_CODEC_PLAIN && src->codec != STORE_CODEC_FRAMES)
        return 0;
    if (sqlite3_blob_open(sc->db, "main", "message_body", "text", id, 0, &src->blob) != SQLITE_OK)
        return 0;
    src->total = (size_t)sqlite3_blob_bytes(src->blob);
    return 1;
}

/*
 * Appends to *buf (holding *have bytes of text from src->from on) the
 * frames from byte src->from + *have until *have reaches `need` or the
 * text's end: only the frames the window reaches are decoded. *total
 * gets the text's length. 0, or -1 (a frame that does not read: the
 * whole-text path names it).
 */
static int snip_frames_fill(snip_conn *sc, snip_src *src, size_t need, unsigned char **buf,
                            size_t *have, size_t *total)
{
    do {
        const unsigned char *out = NULL;
        size_t outn = 0;
        const char *why = "";
        if (store_codec_window_read(&sc->codec, src->total, snip_blob_read, src->blob,
                                    STORE_CODEC_OUT_MAX, src->from + *have, 1, &out, &outn, total,
                                    &why) < 0 ||
            *total > INT32_MAX)
            return -1;
        if (outn == 0) /* the text's end */
            return 0;
        __atomic_fetch_add(&store_sqlite__snippet_frames, 1, __ATOMIC_RELAXED); /* shared */
        unsigned char *p = sqlite3_realloc64(*buf, *have + outn);
        if (p == NULL)
            return -1;
        memcpy(p + *have, out, outn);
        *buf = p;
        *have += outn;
    } while (*have < need);
    return 0;
}

/*
 * Reads the bytes of message `id`'s text from the token map entry before
 * window `w` up to past its end (or the text's end) into *buf, and
 * tokenizes them into w. 1 when done that way, 0 when the text must be
 * read whole (snip_src_open's cases, an I/O error).
 *
 * A plain text is read by window from its row; a text of one frame is
 * decoded whole from its row (a frame is one zstd block: no part of it
 * decodes alone) and only its window copied; a text of several frames
 * by the frames the window reaches (store_codec_window_read), the
 * frame that holds its first byte first, then one more at a time.
 */
static int snip_window_read(const Fts5ExtensionApi *api, Fts5Context *fts, snip_window *w,
                            unsigned char **buf, int *n)
{
    snip_conn *sc = api->xUserData(fts);
    int k = w->start / SNIP_MAP_EVERY; /* the map entry: token k * SNIP_MAP_EVERY */
    snip_src src = {.codec = -1};
    size_t total = 0, have = 0, len = 0, left = 0;
    int ok = 0;
    if (!snip_src_open(sc, api->xRowid(fts), &k, &src))
        goto done;
    total = src.total;
    if (src.codec == STORE_CODEC_FRAMES && snip_frames_fill(sc, &src, 1, buf, &have, &total) < 0)
        goto done;
    if (src.from > total)
        goto done;
    left = total - src.from;
    len = src.codec == STORE_CODEC_FRAMES ? have : left < SNIP_CHUNK ? left : SNIP_CHUNK;
    for (;;) {
        if (src.codec != STORE_CODEC_FRAMES) {
            unsigned char *p = sqlite3_realloc64(*buf, len ? len : 1);
            if (p == NULL)
                break;
            *buf = p;
            if (src.whole)
                memcpy(p, src.whole + src.from, len);
            else if (sqlite3_blob_read(src.blob, p, (int)len, (int)src.from) != SQLITE_OK)
                break;
        }
        unsigned char *p = *buf;
        /* Cut after the last ASCII separator unless this is the end of
         * the text: the tokens before it are the whole text's tokens. */
        size_t cut = len;
        if (len < left)
            while (cut > 0 && !ascii_sep(p[cut - 1]))
                cut--;
        w->next = k * SNIP_MAP_EVERY;
        w->got = w->stopped = 0;
        snip_scan m = {.sc = sc, .s = p, .w = w};
        int rc =
            cut > 0 ? token_scan(p, (int)cut, snip_scan_ascii, snip_scan_stretch, &m) : SQLITE_OK;
        if (rc != SQLITE_OK && rc != SQLITE_DONE)
            break;
        if (w->stopped || len == left) {
            __atomic_fetch_add(&store_sqlite__snippet_windows, 1, __ATOMIC_RELAXED); /* shared */
            *n = (int)cut;
            ok = 1;
            break;
        }
        size_t next = left / 4 < len ? left : len * 4;
        if (src.codec == STORE_CODEC_FRAMES) {
            if (snip_frames_fill(sc, &src, next, buf, &have, &total) < 0 || have <= len)
                break; /* a frame that does not read, or none more: the whole text */
            next = have < left ? have : left;
        }
        len = next;
    }
done:
    sqlite3_blob_close(src.blob);
    return ok;
}

static void snippet_fn(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                       int nval, sqlite3_value **val)
{
    if (nval != 5) {
        sqlite3_result_error(
            ctx, "mcpage_snippet takes (table, column, open, close, ellipsis, tokens)", -1);
        return;
    }
    int col = sqlite3_value_int(val[0]);
    int nopen, nclose, nell;
    const char *open = snip_arg(val[1], &nopen), *close = snip_arg(val[2], &nclose),
               *ell = snip_arg(val[3], &nell);
    int want = sqlite3_value_int(val[4]);
    want = want < 1 ? 1 : want > SNIP_TOKENS_MAX ? SNIP_TOKENS_MAX : want;
    int ntok = 0;
    if (api->xColumnSize(fts, col, &ntok) != SQLITE_OK)
        ntok = 0;
    snip_inst *in = NULL;
    int nin = snip_matches(api, fts, col, &in);
    if (nin < 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    snip_window w;
    memset(&w, 0, sizeof w);
    w.start = snip_best_start(in, nin, want, ntok);
    w.end = w.start + want;
    /* The text: the bytes around the window (a long text with a map), or all of it. */
    const char *text = NULL;
    unsigned char *part = NULL;
    int n = 0, rc = SQLITE_OK;
    if (col == 0 && ntok >= SNIP_MAP_MIN && !store_sqlite__snippet_whole &&
        snip_window_read(api, fts, &w, &part, &n)) {
        text = (const char *)part;
    } else {
        w.next = w.got = w.stopped = 0;
        rc = api->xColumnText(fts, col, &text, &n);
        if (rc == SQLITE_OK && text && n > 0)
            rc = api->xTokenize(fts, text, n, &w, snip_token);
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        sqlite3_free(part);
        sqlite3_free(in);
        /* a text that does not decode says which (mcpage_text's message) */
        snip_conn *sc = api->xUserData(fts);
        const char *msg = sqlite3_errmsg(sc->db);
        if (strncmp(msg, SQ_TEXT_DAMAGED, strlen(SQ_TEXT_DAMAGED)) == 0)
            sqlite3_result_error(ctx, msg, -1);
        else
            sqlite3_result_error_code(ctx, rc);
        return;
    }
    sqlite3_str *out = sqlite3_str_new(NULL);
    if (w.got > 0) {
        int end = w.start + w.got; /* one past the last token shown */
        int at = w.start > 0 ? w.from[0] : 0;
        if (w.start > 0)
            put(out, ell, nell);
        /* Marked spans: the matches inside the window, merged where they overlap. */
        for (int i = 0; i < nin; i++) {
            if (in[i].pos < w.start || in[i].pos >= end)
                continue;
            int last = in[i].pos + in[i].size - 1;
            while (i + 1 < nin && in[i + 1].pos <= last && in[i + 1].pos < end) {
                int l2 = in[i + 1].pos + in[i + 1].size - 1;
                last = l2 > last ? l2 : last;
                i++;
            }
            last = last >= end ? end - 1 : last;
            int s0 = w.from[in[i].pos - w.start], s1 = w.to[last - w.start];
            if (s0 < at)
                continue;
            put(out, text + at, s0 - at);
            put(out, open, nopen);
            put(out, text + s0, s1 - s0);
            put(out, close, nclose);
            at = s1;
        }
        int to = w.stopped ? w.to[w.got - 1] : n; /* the whole tail when the text ended */
        put(out, text + at, to - at);
        if (w.stopped)
            put(out, ell, nell);
    }
    sqlite3_free(part);
    sqlite3_free(in);
    int len = sqlite3_str_length(out);
    char *s = sqlite3_str_finish(out);
    if (s == NULL && len > 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, s ? s : "", len, s ? sqlite3_free : SQLITE_STATIC);
}

/* ---- the token map ---------------------------------------------------- */

static void tokmap_token(tokmap *t, int off)
{
    if (t->pos++ != t->next)
        return;
    t->next += SNIP_MAP_EVERY;
    if (t->pos == 1)
        return; /* token 0 starts the window read from offset 0 */
    if (t->len + 4 > t->cap) {
        int cap = t->cap ? t->cap * 2 : 256;
        unsigned char *m = sqlite3_realloc(t->map, cap);
        if (m == NULL) {
            t->nomem = 1;
            return;
        }
        t->map = m;
        t->cap = cap;
    }
    uint32_t v = (uint32_t)off;
    t->map[t->len++] = (unsigned char)v;
    t->map[t->len++] = (unsigned char)(v >> 8);
    t->map[t->len++] = (unsigned char)(v >> 16);
    t->map[t->len++] = (unsigned char)(v >> 24);
}

static int tokmap_cb(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    (void)tok;
    (void)ntok;
    (void)to;
    tokmap *t = ud;
    if (!(flags & FTS5_TOKEN_COLOCATED))
        tokmap_token(t, t->base + from);
    return t->nomem ? SQLITE_NOMEM : SQLITE_OK;
}

/* The tokens of a token map's scan. */
typedef struct tokmap_scan {
    snip_conn *sc;
    const unsigned char *s;
    tokmap *t;
} tokmap_scan;

static int tokmap_ascii(void *ud, int from, int to, unsigned kinds)
{
    (void)to;
    (void)kinds;
    tokmap *t = ((tokmap_scan *)ud)->t;
    tokmap_token(t, from);
    return t->nomem ? SQLITE_NOMEM : SQLITE_OK;
}

static int tokmap_stretch(void *ud, int from, int to, unsigned kinds)
{
    (void)kinds;
    tokmap_scan *m = ud;
    snip_conn *sc = m->sc;
    if (snip_unicode61(sc) != SQLITE_OK)
        return SQLITE_ERROR;
    m->t->base = from;
    return sc->tk.xTokenize(sc->tok, m->t, FTS5_TOKENIZE_DOCUMENT, (const char *)m->s + from,
                            to - from, tokmap_cb);
}

/* The token map of a text: the tokens are the FTS5 table's (token_scan). */
static int tokmap_build(snip_conn *sc, const unsigned char *s, int n, tokmap *t)
{
    tokmap_scan m = {.sc = sc, .s = s, .t = t};
    int rc = token_scan(s, n, tokmap_ascii, tokmap_stretch, &m);
    return t->nomem ? SQLITE_NOMEM : rc;
}

/* The map of s[0..n) into *map (sqlite3_malloc'd; NULL under SNIP_MAP_MIN tokens). */
static int tokmap_of(snip_conn *sc, const unsigned char *s, int n, unsigned char **map, int *len)
{
    *map = NULL;
    *len = 0;
    if (s == NULL || n < SQ_TOKMAP_MIN_BYTES)
        return SQLITE_OK;
    tokmap t = {0};
    int rc = tokmap_build(sc, s, n, &t);
    if (rc != SQLITE_OK || t.pos < SNIP_MAP_MIN) {
        sqlite3_free(t.map);
        return rc;
    }
    *map = t.map;
    *len = t.len;
    return SQLITE_OK;
}

void store_sqlite_tokmap_watch(void *snip)
{
    snip_conn *sc = snip;
    sqlite3_free(sc->watched.map);
    sc->watched = (tokmap){0};
    sc->watch = WATCH_ARMED;
}

int store_sqlite_tokmap(void *snip, const char *text, size_t n, unsigned char **map, int *len)
{
    snip_conn *sc = snip;
    tokmap t = sc->watched;
    int caught = sc->watch == WATCH_DONE && (size_t)sc->watched_len == n;
    sc->watched = (tokmap){0};
    sc->watch = WATCH_OFF;
    *map = NULL;
    *len = 0;
    if (!caught) {
        sqlite3_free(t.map);
        if (n > INT32_MAX) /* past what the map's offsets and SQLite's values hold */
            return SQLITE_OK;
        return tokmap_of(sc, (const unsigned char *)text, (int)n, map, len);
    }
    __atomic_fetch_add(&store_sqlite__tokmap_caught, 1, __ATOMIC_RELAXED); /* shared */
    if (t.nomem || t.pos < SNIP_MAP_MIN || n < SQ_TOKMAP_MIN_BYTES) {
        sqlite3_free(t.map);
        return t.nomem ? SQLITE_NOMEM : SQLITE_OK;
    }
    *map = t.map;
    *len = t.len;
    return SQLITE_OK;
}

/*
 * mcpage's tokenizer: the built-in unicode61, registered under its own
 * name on mcpage's connections (FTS5 takes the latest registration of a
 * name), so the table's definition stays the built-in's and a stock
 * sqlite3 reads the file (exact words). What it adds:
 *
 * - each document token's extra tokens (store_words.h: a word's class,
 *   an identifier's parts) at the token's own position
 *   (FTS5_TOKEN_COLOCATED), so positions, row lengths and phrases are
 *   those of the built-in;
 * - in a query, a term that starts with the class mark (`~render`,
 *   written only by sqlite_search.c) is that one token, and also the
 *   word as written when the class is the word behind the mark (not
 *   indexed then: `render` gives no `~render`), as FTS5's synonyms, or
 *   that word alone while the class has no postings (class_indexed);
 * - while the writer watches (store_sqlite_tokmap_watch), the next
 *   document FTS5 indexes also gives its token map from the tokens FTS5
 *   gets, instead of a second scan of the text;
 * - a document's ASCII tokens are cut and folded here (token_scan, as
 *   the token maps are), and only its stretches with bytes from 0x80 go
 *   through the built-in: the same tokens, without the built-in's pass
 *   over the ASCII text (tests/data/token_stream.txt pins them).
 *
 * Snippets and token maps (FTS5_TOKENIZE_AUX) get the built-in's tokens.
 */
typedef struct watch_tok {
    fts5_tokenizer tk; /* the built-in's methods */
    Fts5Tokenizer *inner;
    snip_conn *sc;
} watch_tok;

typedef struct watch_pass {
    void *ctx;
    int (*token)(void *, int, const char *, int, int, int);
    tokmap *map;      /* the map being caught, or NULL */
    const char *text; /* the document, for each token's bytes as written */
    Fts5Tokenizer *inner;
    const fts5_tokenizer *tk;
    int base;       /* where the stretch unicode61 tokenizes starts in text */
    char fold[256]; /* an ASCII token folded, when it fits */
    char *big;      /* else here (sqlite3_malloc'd) */
    int big_cap;
} watch_pass;

/* Hands one extra token to FTS5 at the position of the last token. */
static int watch_extra(void *ud, const char *tok, size_t len)
{
    const watch_pass *w = ud;
    return w->token(w->ctx, FTS5_TOKEN_COLOCATED, tok, (int)len, 0, 0);
}

/* A token of the document, text[from..to) folded into tok: to FTS5 (and the map). */
static int watch_first(watch_pass *w, int flags, const char *tok, int ntok, int from, int to)
{
    if (w->map) {
        if (!(flags & FTS5_TOKEN_COLOCATED))
            tokmap_token(w->map, from);
        if (w->map->nomem)
            return SQLITE_NOMEM;
    }
    return w->token(w->ctx, flags, tok, ntok, from, to);
}

/* unicode61's tokens of a stretch (offsets from the stretch's start), then their extras. */
static int watch_token(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    watch_pass *w = ud;
    from += w->base;
    to += w->base;
    int rc = watch_first(w, flags, tok, ntok, from, to);
    if (rc != SQLITE_OK || (flags & FTS5_TOKEN_COLOCATED))
        return rc;
    return store_word_extras(w->text + from, (size_t)(to - from), watch_extra, w);
}

/* An ASCII token, folded as unicode61 folds it (A-Z to a-z) without
 * unicode61's pass; a lower-case word of letters gets its class straight
 * from the cache (store_word_extras would find the same: nothing else). */
static int watch_ascii(void *ud, int from, int to, unsigned kinds)
{
    watch_pass *w = ud;
    const char *s = w->text + from;
    int n = to - from;
    if (kinds == TM_LOWER && n <= STORE_WORD_MAX) {
        int rc = watch_first(w, 0, s, n, from, to);
        const char *cls = NULL;
        size_t len = store_word_class(s, (size_t)n, &cls);
        if (rc != SQLITE_OK || store_word_class_is_self(cls, len, s, (size_t)n))
            return rc;
        return w->token(w->ctx, FTS5_TOKEN_COLOCATED, cls, (int)len, 0, 0);
    }
    const char *tok = s;
    if (kinds & TM_UPPER) {
        char *out = w->fold;
        if (n > (int)sizeof w->fold) {
            if (n > w->big_cap) {
                char *g = sqlite3_realloc(w->big, n);
                if (g == NULL)
                    return SQLITE_NOMEM;
                w->big = g;
                w->big_cap = n;
            }
            out = w->big;
        }
        for (int i = 0; i < n; i++)
            out[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
        tok = out;
    }
    int rc = watch_first(w, 0, tok, n, from, to);
    if (rc != SQLITE_OK)
        return rc;
    return store_word_extras(s, (size_t)n, watch_extra, w);
}

static int watch_stretch(void *ud, int from, int to, unsigned kinds)
{
    (void)kinds;
    watch_pass *w = ud;
    w->base = from;
    return w->tk->xTokenize(w->inner, w, FTS5_TOKENIZE_DOCUMENT, w->text + from, to - from,
                            watch_token);
}

static int watch_create(void *ud, const char **args, int nargs, Fts5Tokenizer **out)
{
    snip_conn *sc = ud;
    watch_tok *w = sqlite3_malloc(sizeof *w);
    if (w == NULL)
        return SQLITE_NOMEM;
    *w = (watch_tok){.tk = sc->tk, .sc = sc};
    int rc = sc->tk.xCreate(sc->tk_ud, args, nargs, &w->inner);
    if (rc != SQLITE_OK) {
        sqlite3_free(w);
        return rc;
    }
    *out = (Fts5Tokenizer *)w;
    return SQLITE_OK;
}

static void watch_delete(Fts5Tokenizer *p)
{
    watch_tok *w = (watch_tok *)p;
    w->tk.xDelete(w->inner);
    sqlite3_free(w);
}

/* The first posting of a term, if any (CLASS_VOCAB_TABLE: FTS5's own
 * look-up of a term in each segment and in the writer's pending hash). */
#define CLASS_VOCAB_TABLE "temp.mcpage_class_vocab"
#define CLASS_VOCAB_SQL   "SELECT 1 FROM " CLASS_VOCAB_TABLE " WHERE term = ?1 LIMIT 1"

/*
 * Whether the own-stem class `cls` (len bytes: `~render`) has postings
 * in the index: another word of the class was indexed (`renders`). When
 * it has none, the query asks for the word alone: the phrase's rows and
 * their hit counts are the word's either way, so matches and bm25 are
 * the same, and FTS5 no longer merges an empty list into every row
 * (docs/performance.md, "Own stems without their empty class").
 *
 * The look-up runs inside the statement that parses the query, so it
 * reads the snapshot the query reads; it costs 30-40 us (fts5vocab opens
 * a cursor on the table by a statement of its own), so the answer is kept
 * per connection until the file may have changed. "No postings" must
 * never outlive the snapshot it was read in: a reader that kept it after
 * a sync added `renders` would miss those rows. Two counters say when it
 * may have: the pager's data version (SQLITE_FCNTL_DATA_VERSION), which
 * moves when a read transaction starts after another connection's commit
 * and at this connection's own commits; and the connection's total
 * changes, which move at each of its own inserts into FTS5 (directly or
 * by a trigger), before any commit, so a writer searching inside its own
 * transaction looks again too. (PRAGMA data_version would not do alone:
 * it stays put for a connection's own commits.) Postings can only appear
 * through those. (A "has postings" kept too long would only cost the
 * synonym again: the same rows.)
 *
 * Anything that fails (the look-up table missing, the budget stopping
 * the statement) answers "has postings": the synonym, as before.
 */
static int class_indexed(snip_conn *sc, const char *cls, int len)
{
    unsigned version = 0;
    if (sqlite3_file_control(sc->db, "main", SQLITE_FCNTL_DATA_VERSION, &version) != SQLITE_OK)
        return 1;
    sqlite3_int64 changes = sqlite3_total_changes64(sc->db);
    for (int i = 0; i < CLASS_SEEN_MAX; i++) {
        const class_seen *e = &sc->seen[i];
        if (e->len == len && memcmp(e->cls, cls, (size_t)len) == 0 && e->version == version &&
            e->changes == changes)
            return e->indexed;
    }
    sqlite3_stmt *st = sc->vocab;
    if (st == NULL &&
        sqlite3_prepare_v3(sc->db, CLASS_VOCAB_SQL, -1,
                           sc->keep_row ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL) != SQLITE_OK)
        return 1;
    sqlite3_bind_text(st, 1, cls, len, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (sc->keep_row)
        sc->vocab = st;
    else
        sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return 1;
    class_seen *e = &sc->seen[sc->seen_next];
    sc->seen_next = (sc->seen_next + 1) % CLASS_SEEN_MAX;
    *e = (class_seen){
        .len = len, .indexed = rc == SQLITE_ROW, .version = version, .changes = changes};
    memcpy(e->cls, cls, (size_t)len);
    return e->indexed;
}

static int replay_tokens(watch_pass *w, const store_tokens *k);

static int watch_tokenize(Fts5Tokenizer *p, void *ctx, int flags, const char *text, int n,
                          int (*token)(void *, int, const char *, int, int, int))
{
    watch_tok *w = (watch_tok *)p;
    snip_conn *sc = w->sc;
    if ((flags & FTS5_TOKENIZE_QUERY) && n > 1 && n < STORE_WORD_CAP &&
        text[0] == STORE_WORD_CLASS) { /* a word's class, as sqlite_search.c wrote it */
        /* a class that is its word behind the mark is not indexed beside
         * the word: the word as written is its synonym (one phrase, so
         * matches, bm25, impact lists and snippets are the class's), or
         * the word alone while the class has no postings (`~the`) */
        int self = store_word_query_self(text, (size_t)n);
        if (self && !store_sqlite__class_alone_off && !class_indexed(sc, text, n)) {
            __atomic_fetch_add(&store_sqlite__class_alone, 1, __ATOMIC_RELAXED); /* shared */
            return token(ctx, 0, text + 1, n - 1, 1, n);
        }
        int rc = token(ctx, 0, text, n, 0, n);
        if (rc == SQLITE_OK && self)
            rc = token(ctx, FTS5_TOKEN_COLOCATED, text + 1, n - 1, 1, n);
        return rc;
    }
    if (flags != FTS5_TOKENIZE_DOCUMENT)
        return w->tk.xTokenize(w->inner, ctx, flags, text, n, token);
    __atomic_fetch_add(&store_sqlite__docs_indexed, 1, __ATOMIC_RELAXED); /* shared */
    watch_pass pass = {.ctx = ctx, .token = token, .text = text, .inner = w->inner, .tk = &w->tk};
    if (sc->watch == WATCH_ARMED) {
        sc->watch = WATCH_DONE;
        sc->watched_len = n;
        pass.map = &sc->watched;
    }
    const store_tokens *k = sc->ahead;
    sc->ahead = NULL;
    if (k && k->n == (size_t)n && (k->text == text || memcmp(k->text, text, (size_t)n) == 0))
        return replay_tokens(&pass, k);
    int rc = token_scan((const unsigned char *)text, n, watch_ascii, watch_stretch, &pass);
    sqlite3_free(pass.big);
    return rc;
}

/* ---- a text's tokens made ahead, on another thread ------------------------ */

/*
 * A sync's parse thread makes each message's tokens (store_text_tokens)
 * by the very pass above, with a sink that records them instead of FTS5,
 * and its own instance of the built-in unicode61. The writer arms them
 * for its next document (store_sqlite_tokens_arm), and FTS5 then gets
 * them replayed: the same tokens, flags and offsets, in the same order,
 * so the index and the token map are those of the text tokenized here.
 * Tokenizing was a fifth of the storing thread's instructions
 * (docs/performance.md, "Tokens made on the parse thread").
 */
static int replay_tokens(watch_pass *w, const store_tokens *k)
{
    __atomic_fetch_add(&store_sqlite__docs_replayed, 1, __ATOMIC_RELAXED); /* shared */
    for (size_t i = 0; i < k->count; i++) {
        const store_token *t = &k->v[i];
        int rc = watch_first(w, t->flags, k->bytes + t->off, t->ntok, t->from, t->to);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

void store_sqlite_tokens_arm(void *snip, const store_tokens *k)
{
    ((snip_conn *)snip)->ahead = k;
}

typedef struct ahead_tok {
    fts5_tokenizer tk; /* the built-in unicode61's methods */
    Fts5Tokenizer *inner;
} ahead_tok;

void *store_sqlite_tokenizer_new(void *snip)
{
    snip_conn *sc = snip;
    ahead_tok *t = sqlite3_malloc(sizeof *t);
    if (t == NULL)
        return NULL;
    t->tk = sc->tk;
    if (unicode61_new(sc, &t->inner) != SQLITE_OK) {
        sqlite3_free(t);
        return NULL;
    }
    return t;
}

void store_sqlite_tokenizer_free(void *p)
{
    ahead_tok *t = p;
    if (t) {
        t->tk.xDelete(t->inner);
        sqlite3_free(t);
    }
}

static int record_token(void *ctx, int flags, const char *tok, int ntok, int from, int to)
{
    return store_tokens_add(ctx, flags, tok, ntok, from, to) == 0 ? SQLITE_OK : SQLITE_NOMEM;
}

int store_sqlite_text_tokens(void *p, const char *text, size_t n, store_tokens *out)
{
    ahead_tok *t = p;
    if (n > INT32_MAX)
        return MCPAGE_EINVAL;
    watch_pass pass = {
        .ctx = out, .token = record_token, .text = text, .inner = t->inner, .tk = &t->tk};
    int rc = token_scan((const unsigned char *)text, (int)n, watch_ascii, watch_stretch, &pass);
    sqlite3_free(pass.big);
    return rc == SQLITE_OK ? 0 : MCPAGE_ENOMEM;
}

/* mcpage_tokmap(text): the text's token map, or NULL under SNIP_MAP_MIN tokens (the migration). */
static void tokmap_fn(sqlite3_context *ctx, int nval, sqlite3_value **val)
{
    (void)nval;
    unsigned char *map = NULL;
    int len = 0;
    int rc = tokmap_of(sqlite3_user_data(ctx), sqlite3_value_text(val[0]),
                       sqlite3_value_bytes(val[0]), &map, &len);
    if (rc != SQLITE_OK)
        sqlite3_result_error_code(ctx, rc);
    else if (map == NULL)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_blob(ctx, map, len, sqlite3_free);
}

void store_sqlite_snippet_close(void *snip)
{
    snip_conn *sc = snip;
    if (sc) {
        sqlite3_finalize(sc->row);
        sc->row = NULL;
        sqlite3_finalize(sc->vocab);
        sc->vocab = NULL;
    }
}

static void snip_conn_free(void *p)
{
    snip_conn *sc = p;
    if (sc->tok)
        sc->tk.xDelete(sc->tok);
    sqlite3_free(sc->watched.map);
    store_codec_free(&sc->codec);
    sqlite3_free(sc);
}

fts5_api *store_sqlite__fts5_api(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
        (void)sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return api;
}

int store_sqlite_snippet_register(sqlite3 *db, const int64_t *rank_nhit, void **snip)
{
    fts5_api *api = store_sqlite__fts5_api(db);
    if (api == NULL || api->iVersion < 2)
        return -1;
    snip_conn *sc = sqlite3_malloc(sizeof *sc);
    if (sc == NULL)
        return -1;
    *sc = (snip_conn){.db = db, .fts5 = api};
    if (api->xFindTokenizer(api, "unicode61", &sc->tk_ud, &sc->tk) != SQLITE_OK) {
        sqlite3_free(sc);
        return -1;
    }
    /* The function owns sc (freed when the connection closes); the
     * tokenizer is created on the first non-ASCII stretch of a map. */
    if (api->xCreateFunction(api, "mcpage_snippet", sc, snippet_fn, snip_conn_free) != SQLITE_OK) {
        sqlite3_free(sc);
        return -1;
    }
    if (snip) {
        *snip = sc;
        sc->keep_row = 1;
    }
    if (sqlite3_create_function(db, "mcpage_tokmap", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, sc,
                                tokmap_fn, NULL, NULL) != SQLITE_OK)
        return -1;
    /* what class_indexed reads (made now, outside any statement: made
     * while a query is parsed, it would change the schema under it); a
     * connection without it asks for own-stem classes with their synonym */
    (void)sqlite3_exec(db,
                       "CREATE VIRTUAL TABLE IF NOT EXISTS " CLASS_VOCAB_TABLE
                       " USING fts5vocab(main, messages_fts, instance)",
                       NULL, NULL, NULL);
    /* before any statement opens the FTS5 table, which makes its tokenizer then */
    fts5_tokenizer watch = {watch_create, watch_delete, watch_tokenize};
    if (api->xCreateTokenizer(api, "unicode61", sc, &watch, NULL) != SQLITE_OK)
        return -1;
    return store_sqlite_rank_register(api, db, rank_nhit);
}
