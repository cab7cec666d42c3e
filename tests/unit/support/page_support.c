/* Helpers shared by the page builder tests (see page_support.h). */
#include "support/page_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "page/jw.h"
#include "page/tokens.h"

static const uint8_t test_key[32] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                     7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 9};

void tp_setup(tp_env *e, const mcpage_pager_config *cfg)
{
    assert_int_equal(mcpage_keyring_new(&e->kr), 0);
    assert_int_equal(mcpage_keyring_add(e->kr, 1, test_key, 32, true), 0);
    assert_int_equal(mcpage_pager_new(cfg, e->kr, &e->pager), 0);
}

mcpage_keyring *tp_keyring(uint8_t kid, uint8_t fill)
{
    mcpage_keyring *kr = NULL;
    assert_int_equal(mcpage_keyring_new(&kr), 0);
    uint8_t key[32];
    memset(key, fill, sizeof key);
    assert_int_equal(mcpage_keyring_add(kr, kid, key, sizeof key, true), 0);
    return kr;
}

void tp_done(tp_env *e)
{
    mcpage_pager_free(e->pager);
    mcpage_keyring_free(e->kr);
}

json_t *tp_parse(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &err);
    if (v == NULL)
        fail_msg("not JSON (%s): %.200s", err.text, text);
    return v;
}

json_t *tp_structured(const mcpage_result *r)
{
    size_t n;
    const char *s = mcpage_result_structured(r, &n);
    assert_non_null(s);
    json_error_t err;
    json_t *v = json_loadb(s, n, 0, &err);
    if (v == NULL)
        fail_msg("structuredContent is not JSON (%s)", err.text);
    assert_true(json_is_object(v));
    return v;
}

const char *tp_text(const mcpage_result *r)
{
    assert_true(mcpage_result_block_count(r) >= 1);
    const char *t = mcpage_result_text(r, 0, NULL);
    assert_non_null(t);
    return t;
}

static void assert_copy_fits(const char *what, const char *s, size_t n, int64_t max_tokens,
                             int64_t max_chars)
{
    size_t tokens = mcpage__tokens_estimate(s, n);
    size_t units = 0;
    jw_measure_utf8(s, n, NULL, &units);
    if ((int64_t)tokens > max_tokens || (int64_t)units > max_chars)
        fail_msg("%s over budget: %zu tokens (max %lld), %zu chars (max %lld)", what, tokens,
                 (long long)max_tokens, units, (long long)max_chars);
}

void tp_assert_fits(const mcpage_result *r, int64_t max_tokens, int64_t max_chars)
{
    json_t *sc = tp_structured(r);
    char *again = json_dumps(sc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_non_null(again);
    assert_copy_fits("structuredContent", again, strlen(again), max_tokens, max_chars);
    free(again);
    json_decref(sc);
    size_t tn;
    const char *t = mcpage_result_text(r, 0, &tn);
    assert_non_null(t);
    assert_copy_fits("text block", t, tn, max_tokens, max_chars);
}

json_t *tp_assert_rejected(const mcpage_result *r, const char *code, const char *param,
                           const char *reason)
{
    assert_true(mcpage_result_is_error(r));
    json_t *sc = tp_structured(r);
    json_t *err = json_object_get(sc, "error");
    assert_non_null(err);
    assert_string_equal(json_string_value(json_object_get(err, "code")), code);
    assert_string_equal(json_string_value(json_object_get(err, "param")), param);
    if (reason)
        assert_string_equal(json_string_value(json_object_get(err, "reason")), reason);
    assert_non_null(json_object_get(err, "expected"));
    const char *text = tp_text(r);
    assert_non_null(strstr(text, param));
    assert_non_null(strstr(text, "Example: "));
    json_incref(err);
    json_decref(sc);
    return err;
}

json_t *tp_args(const char *json)
{
    return tp_parse(json);
}

uint64_t tp_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

int64_t tp_range(uint64_t *state, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tp_rand(state) % (uint64_t)(hi - lo + 1));
}
