/* Helpers shared by the page builder tests: a pager with a fixed key, and
   independent checks of a finished result (parsed back with jansson). */
#ifndef MCPAGE_TEST_PAGE_SUPPORT_H
#define MCPAGE_TEST_PAGE_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/page.h>

/* A keyring with a fixed key (kid 1) and a pager over it; free with tp_done. */
typedef struct tp_env {
    mcpage_keyring *kr;  /* the keys */
    mcpage_pager *pager; /* the pager under test */
} tp_env;

void tp_setup(tp_env *e, const mcpage_pager_config *cfg);
void tp_done(tp_env *e);
/* A keyring whose one key (id `kid`) is 32 bytes of `fill`: equal fills, equal keys. */
mcpage_keyring *tp_keyring(uint8_t kid, uint8_t fill);

/* Parses JSON text that must be valid; fails the test otherwise. */
json_t *tp_parse(const char *text);
/* structuredContent of r, parsed (new reference). */
json_t *tp_structured(const mcpage_result *r);
/* The text of content[0]. */
const char *tp_text(const mcpage_result *r);
/*
 * Asserts that each copy of r fits the budget when measured afresh: the
 * structuredContent parsed and re-serialized compactly by jansson, and
 * the text block, each estimated and counted in UTF-16 units.
 */
void tp_assert_fits(const mcpage_result *r, int64_t max_tokens, int64_t max_chars);
/* Asserts r is an isError result with code, param (and reason when set). */
json_t *tp_assert_rejected(const mcpage_result *r, const char *code, const char *param,
                           const char *reason);
/* Builds arguments from JSON text. */
json_t *tp_args(const char *json);
/* A small deterministic PRNG (xorshift64*), seeded per test. */
uint64_t tp_rand(uint64_t *state);
/* Uniform in [lo, hi]. */
int64_t tp_range(uint64_t *state, int64_t lo, int64_t hi);

#endif
