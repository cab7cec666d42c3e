/*
 * What the four page builders share: the pager, the text buffer, window
 * parameter parsing with clamping and rejection, budget checks, hint
 * clauses and writing the finished copies into a result.
 */
#ifndef MCPAGE_PAGE_PAGE_INTERNAL_H
#define MCPAGE_PAGE_PAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/page.h>

#include "page/dbuf.h"
#include "page/fmt.h"
#include "page/jw.h"

/* The largest integer a window parameter may carry (JavaScript's safe range). */
#define PAGE_MAX_SAFE_INT INT64_C(9007199254740991)
/* Clamp clauses and notes kept for one hint. */
#define PAGE_MAX_CLAMPS 8
/* A rejected value is echoed back cut to this many bytes. */
#define PAGE_GOT_MAX 80

struct mcpage_pager {
    mcpage_pager_config cfg;  /* the settings, validated */
    const mcpage_keyring *kr; /* signs and verifies cursors (borrowed) */
};

/* The text copy's buffer: a dbuf (page/dbuf.h) of at most PAGE_TEXT_MAX bytes. */
typedef dbuf tbuf;
#define PAGE_TEXT_MAX ((size_t)1 << 30) /* no text copy is ever near a gigabyte */

void tb_init(tbuf *t);
void tb_free(tbuf *t);
void tb_reset(tbuf *t);
void tb_put(tbuf *t, const char *s, size_t n);
void tb_puts(tbuf *t, const char *s);
void tb_printf(tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends v as compact JSON. */
void tb_json(tbuf *t, const json_t *v);
/* Appends v in decimal. */
void tb_int(tbuf *t, int64_t v);

/* Which limit a copy broke. */
typedef enum page_over { PAGE_FITS = 0, PAGE_OVER_TOKENS, PAGE_OVER_CHARS } page_over;

/* What every page being built carries, whatever its family. */
typedef struct page_base {
    const mcpage_pager *pager;            /* settings and keys */
    const char *tool;                     /* the tool's name */
    json_t *args;                         /* the call's arguments (a reference), or NULL */
    const char *const *window;            /* names of this family's window parameters */
    int64_t max_tokens;                   /* the token budget of each copy */
    int64_t meter_tokens;                 /* what the estimate of a copy may reach: max_tokens
                                             less the margin (page_meter_tokens) */
    int64_t max_chars;                    /* the char ceiling of each copy */
    bool rejected;                        /* the window was invalid: error holds why */
    json_t *error;                        /* the structuredContent of the rejection */
    char *error_text;                     /* the text of the rejection */
    const char *clamped[PAGE_MAX_CLAMPS]; /* flag names to set true, e.g. "limit_clamped" */
    int nclamped;                         /* entries in clamped */
    tbuf notes; /* hint clauses about the window (clamps, ignored params) */
} page_base;

/* Starts `b`; returns 0 or a negative status. Rejects a non-object `args`. */
int page_base_init(page_base *b, const mcpage_pager *p, const char *tool, const json_t *args,
                   const char *const *window);
void page_base_free(page_base *b);

/*
 * Parses integer parameter `name` of `obj` (the arguments, or a nested
 * object such as region) into *out: `def` when absent or null, rejected
 * below `min` or when not an integer, lowered to `clamp` (when clamp > 0;
 * else to PAGE_MAX_SAFE_INT) and disclosed, however large the value (a
 * real such as 1e300 saturates). `label` names it in messages
 * ("limit", "region.rows"); `flag` is its _clamped key; `example` is the
 * example call's arguments (NULL: "<label>=<def>"). Returns 0, or
 * MCPAGE_PAGE_REJECTED after recording the rejection.
 */
int page_int_param(page_base *b, const json_t *obj, const char *name, const char *label,
                   const char *flag, int64_t def, int64_t min, int64_t clamp, const char *example,
                   int64_t *out);
/*
 * The margin between the token estimate and max_tokens, in percent. The
 * estimator undercounts o200k by up to 5% on short pieces and by 1-3% on
 * whole pages of escaped JSON and numbered code (docs/tokens.md), so a
 * copy is closed when its estimate reaches max_tokens less this share:
 * every copy then fits in o200k too (tests/integration/tokens_budget.mjs).
 */
#define PAGE_TOKENS_MARGIN_PCT 4
/* The estimate a copy may reach under a budget of max_tokens. */
int64_t page_meter_tokens(int64_t max_tokens);
/* Parses max_tokens against the pager's limits. */
int page_max_tokens(page_base *b, int64_t *out);
/*
 * Records a rejection: `code` ("invalid_argument", "invalid_cursor"),
 * the parameter, the value received (may be NULL), what is expected,
 * an example call written after the tool's name (e.g. "limit=20"), and
 * for cursors the reason name. Returns MCPAGE_PAGE_REJECTED.
 */
int page_reject(page_base *b, const char *code, const char *param, const json_t *got,
                const char *expected, const char *example, const char *reason);
/* Adds a clamp: the flag key and a hint clause naming the value received. */
void page_note_clamp(page_base *b, const char *flag, const char *label, const json_t *got,
                     int64_t max);

/* Checks one copy against the budget. */
page_over page_measure(const page_base *b, const char *s, size_t n);
/* The same verdict for a copy already measured: its token estimate and UTF-16 units. */
page_over page_verdict(const page_base *b, size_t tokens, size_t units);
/*
 * Checks both copies of a page, the structured one and the text one
 * (unless the text is the structured copy); the worse verdict governs.
 */
page_over page_measure_copies(const page_base *b, const jw *s, const tbuf *t);
/* The stopped_by name of a broken limit. */
const char *page_over_name(page_over o);

/*
 * Appends " and the same a, b and c" naming the call's arguments that are
 * not window parameters, so a hint's next call is exact.
 */
void page_same_args(const page_base *b, tbuf *t);
/*
 * Appends ", <name>=<used>" when the caller gave window parameter `name`
 * (a size such as limit or max_tokens), so the next call keeps the page
 * size the caller chose; `used` is the value after clamping.
 */
void page_given_size(const page_base *b, tbuf *t, const char *name, int64_t used);

/*
 * Writes a finished page: content[0] is the text copy `t` (or the
 * structured bytes in MCPAGE_TEXT_STRUCTURED mode), structuredContent is
 * `s`. The result takes both buffers: s and t are left empty.
 */
int page_write_result(const page_base *b, mcpage_result *res, jw *s, tbuf *t);
/* The same, the text block written already into `block` (or NULL: written
   from t); the result takes block's bytes. */
int page_write_result_block(const page_base *b, mcpage_result *res, jw *s, tbuf *t, jw *block);
/* Writes the recorded rejection as an isError result. */
int page_write_rejection(const page_base *b, mcpage_result *res);
/* Writes the clamp flags ("<param>_clamped": true) into an envelope. */
void page_write_clamps(const page_base *b, jw *w);

/* True when s[0..n) is valid UTF-8 without NUL bytes (text, not binary). */
bool page_is_text(const char *s, size_t n);
/* Bytes of the character at s[0..n) (n > 0): 1 to 4; an invalid byte is 1. */
size_t page_utf8_char_len(const char *s, size_t n);
/* Bytes taken by the first `chars` characters of s[0..n) (all of it when shorter). */
size_t page_utf8_skip(const char *s, size_t n, int64_t chars);
/* Estimated tokens of s[0..n). */
size_t page_tokens(const char *s, size_t n);
/* Removes the leading space clause builders leave at the start of a hint. */
void page_trim_hint(tbuf *t);

/*
 * page_list.c: a record given as its fields' values rather than as a JSON
 * object, for a tool that makes many small records (list_sessions). The
 * page holds exactly what mcpage_list_add() of the object with these
 * fields, in this order, would hold; in a COLUMNS page the records after
 * the first are written from the values without making the object.
 * A string that is not UTF-8, or holds U+0000, is left out, as a tool
 * leaves such a value out of its object (the page checks, at no cost
 * where the writer takes the string as it is).
 */
enum { LIST_CELL_STR, LIST_CELL_INT, LIST_CELL_NULL };
typedef struct list_cell {
    const char *name; /* the field */
    int kind;         /* LIST_CELL_* */
    const char *str;  /* LIST_CELL_STR: the value's len bytes */
    size_t len;
    int64_t num; /* LIST_CELL_INT */
} list_cell;
int mcpage__list_add_cells(mcpage_list *pg, const list_cell *cells, size_t ncells,
                           const mcpage_keypart *pos, int nparts);
/* Adds `names` (fields of the spec, NULL-terminated) to the default
 * selection of a call without `fields`, before any record: a mode of a
 * tool whose records carry more (search_conversations grouped by
 * session). The columns and the envelope's reserve follow. */
int mcpage__list_select_more(mcpage_list *pg, const char *const *names);
/* An integer the envelope says after the total, in both copies (`key`
 * must outlive the page), before any record: e.g. total_hits. */
int mcpage__list_extra_int(mcpage_list *pg, const char *key, int64_t value);

/*
 * Folds the page on `field` (a field of the spec, not an id), before any
 * record: a record given with mcpage_list_add whose value of it (a
 * string) equals an earlier row's of the page is not written as a row
 * but folded into that row. It stays a record of the window: returned,
 * next_offset and the cursor count it, so the walk is the same; the
 * envelope says "folded" (how many) and "folds" (per row: its id, the
 * records it stands for as "count", the folded ids as "others"), in both
 * copies. Nothing is folded when the call's `fields` leave the field out.
 */
int mcpage__list_fold(mcpage_list *pg, const char *field);

/*
 * The window schemas this process generated (mcpage_*_schema), so the
 * runtime can recognise them in the inputSchema of a tool registered
 * without its window and answer a bad window with the builder's remedy.
 * Families: PAGE_GEN_LIST, _LINES, _BYTES, _GRID. The registry keeps its
 * own copy of each spec (strings included) for the life of the process,
 * at most PAGE_GENERATED_MAX of them, allocated with libc (it is process
 * state, not an object's: the allocator hook's accounting never sees it).
 */
enum { PAGE_GEN_NONE, PAGE_GEN_LIST, PAGE_GEN_LINES, PAGE_GEN_BYTES, PAGE_GEN_GRID };
#define PAGE_GENERATED_MAX 256
/*
 * The family of the generated window whose properties `props` (a tool's
 * inputSchema properties) hold unchanged and whose spec names `tool`;
 * its spec (the registry's copy, valid for the process) in *spec.
 * PAGE_GEN_NONE when none.
 */
int page_generated_find(const json_t *props, const char *tool, const void **spec);

#endif
