/* Tests for the CONTENT-byte page builder: text versus base64, UTF-8
   boundaries, budgets, past-the-end pages and the resume offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/page.h>

#include "support/page_support.h"

static const mcpage_bytes_spec blob_spec = {
    .tool = "read_blob",
    .default_max_bytes = 4096,
    .max_max_bytes = 65536,
};

static int run_bytes(const mcpage_pager *p, const uint8_t *data, size_t total, const json_t *args,
                     mcpage_result *res)
{
    mcpage_bytes *pg;
    int rc = mcpage_bytes_begin(p, &blob_spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        const mcpage_bytes_window *w = mcpage_bytes_window_get(pg);
        size_t off = (size_t)(w->offset < (int64_t)total ? w->offset : (int64_t)total);
        size_t n = total - off;
        if ((int64_t)n > w->max_bytes)
            n = (size_t)w->max_bytes;
        assert_int_equal(mcpage_bytes_set(pg, data + off, n, (int64_t)total), 0);
    }
    return mcpage_bytes_finish(pg, res);
}

static json_t *bytes_page(tp_env *e, const uint8_t *data, size_t total, const char *args_json,
                          mcpage_result *res)
{
    json_t *a = tp_args(args_json);
    assert_int_equal(run_bytes(e->pager, data, total, a, res), 0);
    json_decref(a);
    return tp_structured(res);
}

static void utf8_text_is_sent_as_text_and_never_cut_inside_a_character(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    /* "é" is two bytes: a 5-byte window over "aéé" must stop after 1 + 2 + 2. */
    const char *s = "a\xC3\xA9\xC3\xA9\xC3\xA9";
    mcpage_result *res = mcpage_result_new();
    json_t *sc = bytes_page(&e, (const uint8_t *)s, strlen(s), "{\"max_bytes\":4}", res);
    assert_string_equal(json_string_value(json_object_get(sc, "encoding")), "utf-8");
    assert_string_equal(json_string_value(json_object_get(sc, "text")), "a\xC3\xA9");
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 3);
    assert_int_equal(json_integer_value(json_object_get(sc, "total_bytes")), 7);
    assert_true(json_is_true(json_object_get(sc, "has_more")));
    assert_int_equal(json_integer_value(json_object_get(sc, "next_offset")), 3);
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "limit");
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "Next page: read_blob with offset=3, max_bytes=4.");
    assert_string_equal(tp_text(res),
                        "Bytes 0-2 of 7 (utf-8 text; stopped at the 4-byte "
                        "limit).\na\xC3\xA9\nNext page: read_blob with offset=3, max_bytes=4.");
    json_decref(sc);
    sc = bytes_page(&e, (const uint8_t *)s, strlen(s), "{\"offset\":3}", res);
    assert_string_equal(json_string_value(json_object_get(sc, "text")), "\xC3\xA9\xC3\xA9");
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "stopped_by")), "end");
    assert_null(json_object_get(sc, "next_offset"));
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

static void binary_bytes_are_sent_as_base64(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    const uint8_t bin[] = {0x00, 0xFF, 0x10, 'a', 0x80};
    mcpage_result *res = mcpage_result_new();
    json_t *sc = bytes_page(&e, bin, sizeof bin, "{}", res);
    assert_string_equal(json_string_value(json_object_get(sc, "encoding")), "base64");
    assert_string_equal(json_string_value(json_object_get(sc, "data")), "AP8QYYA=");
    assert_null(json_object_get(sc, "text"));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 5);
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

static void offset_past_the_end_is_an_empty_page_naming_the_last_page(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint8_t *data = malloc(10000);
    memset(data, 'x', 10000);
    mcpage_result *res = mcpage_result_new();
    json_t *sc = bytes_page(&e, data, 10000, "{\"offset\":20000,\"file\":\"a.log\"}", res);
    assert_false(mcpage_result_is_error(res));
    assert_int_equal(json_integer_value(json_object_get(sc, "returned")), 0);
    assert_false(json_is_true(json_object_get(sc, "has_more")));
    assert_string_equal(json_string_value(json_object_get(sc, "hint")),
                        "offset 20,000 is past the end of the 10,000 bytes; the last page starts "
                        "at offset 5904: read_blob with offset=5904 and the same file.");
    json_decref(sc);
    free(data);
    mcpage_result_free(res);
    tp_done(&e);
}

static void invalid_byte_windows_are_rejected_and_large_ones_clamped(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    uint8_t data[16] = {0};
    static const struct {
        const char *args;  /* the call */
        const char *param; /* the parameter named */
    } cases[] = {
        {"{\"offset\":-1}", "offset"},
        {"{\"offset\":\"0\"}", "offset"},
        {"{\"max_bytes\":0}", "max_bytes"},
        {"{\"max_bytes\":2.5}", "max_bytes"},
        {"{\"max_tokens\":false}", "max_tokens"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpage_result *res = mcpage_result_new();
        json_t *a = tp_args(cases[i].args);
        assert_int_equal(run_bytes(e.pager, data, sizeof data, a, res), 0);
        json_decref(tp_assert_rejected(res, "invalid_argument", cases[i].param, NULL));
        json_decref(a);
        mcpage_result_free(res);
    }
    mcpage_result *res = mcpage_result_new();
    json_t *sc = bytes_page(&e, data, sizeof data, "{\"max_bytes\":1000000}", res);
    assert_int_equal(json_integer_value(json_object_get(sc, "max_bytes")), 65536);
    assert_true(json_is_true(json_object_get(sc, "max_bytes_clamped")));
    json_decref(sc);
    mcpage_result_free(res);
    tp_done(&e);
}

/* Property: random documents (text with multibyte characters, or binary),
   random windows and budgets: following next_offset reassembles the
   document exactly, every page fits, text pages are valid UTF-8. */
static void walks_reassemble_the_document_within_budget(void **state)
{
    (void)state;
    uint64_t rng = 5150;
    size_t pages = 0;
    for (int iter = 0; iter < 300; iter++) {
        mcpage_pager_config cfg;
        mcpage_pager_config_init(&cfg);
        cfg.max_chars = tp_range(&rng, 2000, 100000);
        tp_env e;
        tp_setup(&e, &cfg);
        size_t total = (size_t)tp_range(&rng, 0, tp_range(&rng, 0, 1) ? 3000 : 60000);
        uint8_t *data = malloc(total + 4);
        bool binary = tp_range(&rng, 0, 3) == 0;
        size_t k = 0;
        while (k < total) {
            uint64_t r = tp_rand(&rng) % 16;
            if (binary) {
                data[k++] = (uint8_t)tp_rand(&rng);
            } else if (r == 0 && k + 4 <= total) {
                memcpy(data + k, "\xF0\x9F\x98\x80", 4);
                k += 4;
            } else if (r == 1 && k + 2 <= total) {
                memcpy(data + k, "\xC3\xA9", 2);
                k += 2;
            } else {
                data[k++] = r == 2 ? '\n' : r == 3 ? '"' : (uint8_t)('a' + r);
            }
        }
        int64_t max_tokens = tp_range(&rng, 500, 20000);
        json_t *a = json_pack("{s:I, s:I}", "max_bytes", (json_int_t)tp_range(&rng, 1, 70000),
                              "max_tokens", (json_int_t)max_tokens);
        uint8_t *back = malloc(total + 4);
        size_t got = 0;
        for (int guard = 0; guard < 1000000; guard++) {
            mcpage_result *res = mcpage_result_new();
            assert_int_equal(run_bytes(e.pager, data, total, a, res), 0);
            tp_assert_fits(res, max_tokens, cfg.max_chars);
            json_t *sc = tp_structured(res);
            const char *enc = json_string_value(json_object_get(sc, "encoding"));
            int64_t returned = json_integer_value(json_object_get(sc, "returned"));
            if (strcmp(enc, "utf-8") == 0) {
                json_t *t = json_object_get(sc, "text");
                assert_int_equal(json_string_length(t), returned);
                memcpy(back + got, json_string_value(t), (size_t)returned);
            } else {
                const char *b = json_string_value(json_object_get(sc, "data"));
                /* Decode standard base64 by hand: the test trusts no helper. */
                static const char abc[] =
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                size_t o = got;
                uint32_t acc = 0;
                int bits = 0;
                for (const char *p = b; *p && *p != '='; p++) {
                    acc = acc << 6 | (uint32_t)(strchr(abc, *p) - abc);
                    bits += 6;
                    if (bits >= 8) {
                        bits -= 8;
                        back[o++] = (uint8_t)(acc >> bits);
                    }
                }
                assert_int_equal(o - got, returned);
            }
            got += (size_t)returned;
            pages++;
            bool more = json_is_true(json_object_get(sc, "has_more"));
            if (more) {
                assert_true(returned >= 1);
                assert_int_equal(json_integer_value(json_object_get(sc, "next_offset")), got);
                json_object_set(a, "offset", json_object_get(sc, "next_offset"));
            }
            json_decref(sc);
            mcpage_result_free(res);
            if (!more)
                break;
        }
        assert_int_equal(got, total);
        assert_memory_equal(back, data, total);
        free(back);
        free(data);
        json_decref(a);
        tp_done(&e);
    }
    printf("property walk: %zu pages checked\n", pages);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_text_is_sent_as_text_and_never_cut_inside_a_character),
        cmocka_unit_test(binary_bytes_are_sent_as_base64),
        cmocka_unit_test(offset_past_the_end_is_an_empty_page_naming_the_last_page),
        cmocka_unit_test(invalid_byte_windows_are_rejected_and_large_ones_clamped),
        cmocka_unit_test(walks_reassemble_the_document_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
