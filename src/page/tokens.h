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

#include <stddef.h>

/* Estimated tokens of n bytes of UTF-8 (never less than the true count by more than the documented
 * bound). */
size_t mcpage__tokens_estimate(const char *s, size_t n);

#endif
