/*
 * The token estimator: a conservative estimate of how many tokens a
 * BPE tokenizer (o200k_base, the reference) makes of a piece of text.
 * Calibrated on tests/data/tokens/ against js-tiktoken; the bounds it
 * keeps are asserted by tests/unit/test_tokens.c and stated, with the
 * method, in docs/tokens.md. Every call adds 2.5 tokens for cut edges, so
 * estimate whole records or pages rather than single fields.
 */
#ifndef MCPAGE_PAGE_TOKENS_H
#define MCPAGE_PAGE_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

/* Estimated tokens of n bytes of UTF-8 (never less than the true count by more than the documented
 * bound). */
size_t mcpage__tokens_estimate(const char *s, size_t n);

/*
 * The estimate in parts, so a page made of records already scanned can be
 * estimated without scanning them again. mcpage__tokens_estimate(s, n) is
 * mcpage__tokens_total of mcpage__tokens_scan(s, n) exactly; where
 * mcpage__tokens_cut_ok(s, n, at) holds, the sums of s[0..at) and s[at..n)
 * scanned apart add up to the sums of s scanned whole.
 */
typedef struct tokens_sum {
    size_t cost;       /* the pieces, in hundredths of a token */
    size_t ascii_cost; /* of which plain ASCII words (the foreign surcharge's base) */
    size_t accented;   /* words with accented letters */
    size_t words;      /* all words */
} tokens_sum;

/* Adds the pieces of s[0..n) to *sum. */
void mcpage__tokens_scan(const char *s, size_t n, tokens_sum *sum);
/* The estimate of a text of n bytes whose pieces add up to *sum. */
size_t mcpage__tokens_total(const tokens_sum *sum, size_t n);
/* True when cutting s[0..n) at `at` changes none of its pieces. */
bool mcpage__tokens_cut_ok(const char *s, size_t n, size_t at);

/*
 * A record scanned once for a page that will hold it. The punctuation at
 * its ends runs into the page's punctuation around it, so what the page
 * reuses is the middle: the sums of s[from..to), past the leading run of
 * punctuation and before the trailing one.
 */
typedef struct tokens_part {
    tokens_sum sum; /* the pieces of s[from..to) */
    size_t from;    /* bytes of leading punctuation */
    size_t to;      /* where the trailing punctuation starts */
} tokens_part;

/* Returns mcpage__tokens_estimate(s, n) and fills *part. */
size_t mcpage__tokens_part(const char *s, size_t n, tokens_part *part);

/*
 * The parts of both copies of a COLUMNS record (page_list.c) from one scan
 * of its values: `text` is the values joined by tabs and `json` the same
 * values as a JSON array, strings quoted. Sets *jp, *tp and the copies'
 * estimates as mcpage__tokens_part would, and returns true, when every
 * value is non-empty, starts and ends with an ASCII letter or digit or a
 * non-ASCII character, needs no escaping in either copy and json is
 * exactly that array; then every edge between values cuts cleanly, a
 * separator of JSON marks is one piece and a tab costs nothing before a
 * letter and a piece of one blank before a digit. Otherwise false (scan
 * the copies apart).
 */
bool mcpage__tokens_columns(const char *json, size_t jn, const char *text, size_t tn,
                            tokens_part *jp, size_t *jtok, tokens_part *tp, size_t *ttok);

#endif
