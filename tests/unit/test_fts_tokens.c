/*
 * The FTS5 table's tokenizer with its ASCII fast path (sqlite_tokenize.c)
 * against the built-in unicode61 with the same arguments: the same
 * tokens, offsets and flags, the same stop when the callback says
 * SQLITE_DONE or fails, on words of every kind and on bytes that are not
 * UTF-8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/sqlite/sqlite_internal.h"
#include "support/fts_tokens.h"

typedef struct pair {
    sqlite3 *db;
    fts_tokens_pair p;
} pair;

static int setup(void **state)
{
    pair *t = calloc(1, sizeof *t);
    assert_int_equal(sqlite3_open(":memory:", &t->db), SQLITE_OK);
    assert_int_equal(fts_tokens_pair_open(&t->p, t->db), SQLITE_OK);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    pair *t = *state;
    fts_tokens_pair_close(&t->p);
    sqlite3_close(t->db);
    free(t);
    return 0;
}

static void agree(pair *t, const char *s, size_t n)
{
    char why[256];
    if (fts_tokens_differ(&t->p, s, (int)n, why, sizeof why))
        fail_msg("text of %zu bytes \"%.*s\": %s", n, (int)(n < 80 ? n : 80), s, why);
}

static void words_of_every_kind(void **state)
{
    pair *t = *state;
    assert_true(t->p.fast.fast);
    static const char *const cases[] = {
        "",
        "a",
        "Hello, World! snake_case_1 __init__ 0x1F path/to/file.c c++",
        "MiXeD CaSe WORDS 12ab_CD",
        "émoji🙂 日本語 テスト naïve façade Ünïcödé привет «quoted» ¿qué?",
        "a…b x—y ÀÉ e\xcc\x81t\xc3\xa9 ABCé Éabc abc_é",
        "\x80\x80 x\xff y \xc3 \xe2\x82 ab\xf0\x9f z\xc0\xaf w\xed\xa0\x80 v\xef\xbf\xbe",
        "tab\there\nnew\rline\x01\x7f\x1f end",
        "trailing lead \xe2",
        "\xc3\xa9",
        "___ _ a_ _b",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        agree(t, cases[i], strlen(cases[i]));
    /* a word longer than the fold buffer's first size, and a text of only one */
    char big[3000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)("AbZ_9"[i % 5]);
    agree(t, big, sizeof big);
    big[1500] = ' ';
    big[2000] = (char)0xc3;
    agree(t, big, sizeof big);
}

/* Random texts from ASCII words, separators, UTF-8 letters and stray bytes. */
static void random_texts(void **state)
{
    pair *t = *state;
    static const char *const pieces[] = {"a",
                                         "Z",
                                         "q_",
                                         "09",
                                         " ",
                                         ",",
                                         "\n",
                                         "_",
                                         "é",
                                         "É",
                                         "🙂",
                                         "日",
                                         "…",
                                         "—",
                                         "\x80",
                                         "\xff",
                                         "\xc3",
                                         "\xe2\x82",
                                         "\xcc\x81",
                                         "ß",
                                         "İ",
                                         "ǅ",
                                         "Ⅻ",
                                         "①",
                                         "\xf4\x90\x80\x80",
                                         "\xed\xa0\x80",
                                         "x",
                                         "W"};
    unsigned seed = 12345;
    char text[512];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        seed = seed * 1103515245u + 12345u;
        int parts = (int)((seed >> 16) % 40u);
        for (int k = 0; k < parts; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(p);
            if (len + pl >= sizeof text)
                break;
            memcpy(text + len, p, pl);
            len += pl;
        }
        agree(t, text, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(words_of_every_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(random_texts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
