/*
 * Tests for the words of the full-text indexes (src/store/store_words.c):
 * Porter's stems of the paper's and the usual test vocabulary's words,
 * the extra tokens of words and identifiers, and the class a query word
 * asks for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "store/store_words.h"

static void stems_follow_porter(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"caresses", "caress"},
        {"ponies", "poni"},
        {"ties", "ti"},
        {"caress", "caress"},
        {"cats", "cat"},
        {"feed", "feed"},
        {"agreed", "agre"},
        {"plastered", "plaster"},
        {"bled", "bled"},
        {"motoring", "motor"},
        {"sing", "sing"},
        {"conflated", "conflat"},
        {"troubled", "troubl"},
        {"sized", "size"},
        {"hopping", "hop"},
        {"tanned", "tan"},
        {"falling", "fall"},
        {"hissing", "hiss"},
        {"fizzed", "fizz"},
        {"failing", "fail"},
        {"filing", "file"},
        {"happy", "happi"},
        {"sky", "sky"},
        {"relational", "relat"},
        {"conditional", "condit"},
        {"rational", "ration"},
        {"hopeful", "hope"},
        {"goodness", "good"},
        {"adjustable", "adjust"},
        {"adoption", "adopt"},
        {"effective", "effect"},
        {"probate", "probat"},
        {"rate", "rate"},
        {"cease", "ceas"},
        {"controlling", "control"},
        {"roll", "roll"},
        {"generalizations", "gener"},
        {"oscillators", "oscil"},
        {"connection", "connect"},
        {"connections", "connect"},
        {"connective", "connect"},
        {"connected", "connect"},
        {"connecting", "connect"},
        {"rendering", "render"},
        {"rendered", "render"},
        {"renders", "render"},
        {"render", "render"},
        {"running", "run"},
        {"subagents", "subag"},
        {"subagent", "subag"},
        {"a", "a"},
        {"is", "is"},
        {"yes", "ye"},
        {"by", "by"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char out[STORE_WORD_CAP];
        size_t n = store_word_stem(pairs[i][0], strlen(pairs[i][0]), out);
        if (strcmp(out, pairs[i][1]) != 0 || n != strlen(pairs[i][1]))
            fail_msg("%s: stem %s, want %s", pairs[i][0], out, pairs[i][1]);
    }
}

/* The extras of a token, space-separated. */
typedef struct joined {
    char s[512];
    size_t n;
} joined;

static int join(void *ud, const char *tok, size_t len)
{
    joined *j = ud;
    j->n +=
        (size_t)snprintf(j->s + j->n, sizeof j->s - j->n, "%s%.*s", j->n ? " " : "", (int)len, tok);
    return 0;
}

static void extras_are_classes_and_parts(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"rendering", "~render"},
        {"Rendering", "~render"},
        {"SessionLive", "~sessionl ~session ~live"},
        {"waiting_summary", "~wait ~summari"},
        {"HTTPServer", "~http ~server"}, /* httpserver is its own stem */
        {"v2Handler", "v2 ~handler"},
        {"__init__", "~init"},
        {"getHTTPResponse", "~gethttprespons ~get ~http ~respons"},
        {"fooFoo", "~foo"}, /* foofoo is its own stem */
        {"sha256", ""},
        {"0x1F", ""},
        {"a", ""}, /* a word that is its own stem: no class beside it (issue 35) */
        {"render", ""},
        {"Error", ""},
        {"HTTP", ""},
        {"renders", "~render"},
        {"naïve", ""},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ""}, /* 41 letters: not a word */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        joined j = {{0}, 0};
        assert_int_equal(store_word_extras(cases[i][0], strlen(cases[i][0]), join, &j), 0);
        if (strcmp(j.s, cases[i][1]) != 0)
            fail_msg("%s: extras \"%s\", want \"%s\"", cases[i][0], j.s, cases[i][1]);
    }
}

static int stop_first(void *ud, const char *tok, size_t len)
{
    (void)tok;
    (void)len;
    ++*(int *)ud;
    return 7;
}

static void emit_can_stop(void **state)
{
    (void)state;
    int calls = 0;
    assert_int_equal(store_word_extras("SessionLive", 11, stop_first, &calls), 7);
    assert_int_equal(calls, 1);
}

static void query_words_ask_for_their_class(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"rendering", "~render"},
        {"Rendering", "~render"},
        {"HTTP", "~http"},
        {"(session)", "~session"},
        {"live,", "~live"},
        {"SessionLive", ""},
        {"max_tokens", ""},
        {"v2", ""},
        {"foo-bar", ""},
        {"café", ""},
        {"...", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[STORE_WORD_CAP] = "";
        size_t n = store_word_query(cases[i][0], strlen(cases[i][0]), out);
        out[n] = 0;
        if (strcmp(out, cases[i][1]) != 0)
            fail_msg("%s: class \"%s\", want \"%s\"", cases[i][0], out, cases[i][1]);
    }
}

/* A query for the class of a word that is its own stem also asks for the
 * word as written (it is indexed without the class). */
static void own_stems_ask_for_the_word(void **state)
{
    (void)state;
    static const struct {
        const char *cls;
        int self;
    } cases[] = {
        {"~render", 1}, {"~the", 1},       {"~in", 1},   {"~error", 1}, {"~a", 1},
        {"~http", 1},   {"~rendering", 0}, {"~runs", 0}, {"render", 0}, {"~", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (store_word_query_self(cases[i].cls, strlen(cases[i].cls)) != cases[i].self)
            fail_msg("%s: self %d, want %d", cases[i].cls, !cases[i].self, cases[i].self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stems_follow_porter),
        cmocka_unit_test(extras_are_classes_and_parts),
        cmocka_unit_test(emit_can_stop),
        cmocka_unit_test(query_words_ask_for_their_class),
        cmocka_unit_test(own_stems_ask_for_the_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
