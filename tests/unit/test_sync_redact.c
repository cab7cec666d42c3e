/*
 * The secret scanner (src/sync/sync_redact.c): one golden case per kind
 * (the secret gone, the words around it kept, the length kept), JSON
 * that stays valid, ordinary text untouched, and a second scan that
 * changes nothing. The secrets are made up here in their vendors' shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "sync/sync_redact.h"

typedef struct golden {
    const char *in;     /* the text holding one secret */
    const char *secret; /* the secret (gone after) */
    const char *kind;   /* its kind */
} golden;

static const golden cases[] = {
    {"id AKIAQX3HZP7KL2MNB4WT here", "AKIAQX3HZP7KL2MNB4WT", "aws-key"},
    {"AWS_SECRET_ACCESS_KEY=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",
     "Zq8vR2mX7kP4nT9wL3bY6cF1hJ5sD0gA8eU2iO7r", "aws-secret"},
    {"token ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b ok",
     "ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b", "github"},
    {"use github_pat_11ABCDE2Y0q8Xz7Wv6Ut5Sr4_Qp3On2Ml1Kj9Ih8Gf7Ed6Cb5Ab",
     "github_pat_11ABCDE2Y0q8Xz7Wv6Ut5Sr4_Qp3On2Ml1Kj9Ih8Gf7Ed6Cb5Ab", "github"},
    {"key sk-proj-Xy7Zk3Lm9Qp2Wr5Tn8Vb4Cd6Fg1Hj0Ks3Ae7Ui2 done",
     "sk-proj-Xy7Zk3Lm9Qp2Wr5Tn8Vb4Cd6Fg1Hj0Ks3Ae7Ui2", "openai"},
    {"old sk-9fK2mQ7xL4pR8wT1vZ6bN3cH5jD0gS2aE7yU4iO1 x",
     "sk-9fK2mQ7xL4pR8wT1vZ6bN3cH5jD0gS2aE7yU4iO1", "openai"},
    {"claude sk-ant-api03-Wq8Er4Ty6Ui2Op0As7Df3Gh9Jk5Lz1Xc8Vb4Nm6-Qw2ErAA .",
     "sk-ant-api03-Wq8Er4Ty6Ui2Op0As7Df3Gh9Jk5Lz1Xc8Vb4Nm6-Qw2ErAA", "anthropic"},
    {"maps AIzaSyD4xQ8wE2rT6yU0iO4pA8sD2fG6hJ0kL4z end", "AIzaSyD4xQ8wE2rT6yU0iO4pA8sD2fG6hJ0kL4z",
     "google"},
    {"bot xoxb-2048193847-5829104736-Qw8Er4Ty6Ui2Op0As7Df3Gh9 end",
     "xoxb-2048193847-5829104736-Qw8Er4Ty6Ui2Op0As7Df3Gh9", "slack"},
    {"pay sk_live_51Hq8Zk3Lm9Qp2Wr5Tn8Vb4Cd end", "sk_live_51Hq8Zk3Lm9Qp2Wr5Tn8Vb4Cd", "stripe"},
    {"restricted rk_live_51Hq8Zk3Lm9Qp2Wr5Tn8Vb4Cd.", "rk_live_51Hq8Zk3Lm9Qp2Wr5Tn8Vb4Cd",
     "stripe"},
    {"Bearer "
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U "
     "end",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "jwt"},
    {"k -----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAA\\n-----END OPENSSH PRIVATE "
     "KEY----- ok",
     "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"},
    {"db postgres://app:hunter2pass@db.internal:5432/prod", "hunter2pass", "url-password"},
    {"{\"api_key\": \"q8Zr3Kx7Lm2Np9Vt4Wb6Yc1Hd5Fj0Gs\"}", "q8Zr3Kx7Lm2Np9Vt4Wb6Yc1Hd5Fj0Gs",
     "secret"},
    {"export DB_PASSWORD=Tr0ub4dor3xK9mQ2vL7p", "Tr0ub4dor3xK9mQ2vL7p", "secret"},
};

static void every_kind_is_redacted_in_place(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const golden *g = &cases[i];
        size_t n = strlen(g->in);
        char *buf = strdup(g->in);
        sync_redact_counts c = {0};
        size_t k = sync_redact(buf, n, &c, NULL, NULL);
        if (k != 1 || strstr(buf, g->secret) || strlen(buf) != n)
            fail_msg("case %zu (%s): %zu redactions, got: %s", i, g->kind, k, buf);
        int kind = -1;
        for (int j = 0; j < REDACT_KINDS; j++)
            if (c.n[j])
                kind = j;
        assert_string_equal(sync_redact_kind_name(kind), g->kind);
        /* the words before it stay */
        assert_memory_equal(buf, g->in, 2);
        /* a second scan changes nothing */
        char *again = strdup(buf);
        assert_int_equal(sync_redact(again, n, NULL, NULL, NULL), 0);
        assert_string_equal(again, buf);
        free(again);
        free(buf);
    }
}

static void the_marker_names_the_kind(void **state)
{
    (void)state;
    char buf[] = "x ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b y";
    sync_redact(buf, strlen(buf), NULL, NULL, NULL);
    assert_string_equal(buf, "x [REDACTED:github]*********************** y");
}

static void json_stays_valid(void **state)
{
    (void)state;
    const char *lines[] = {
        "{\"t\":\"a\\nghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b\\\"\"}",
        "{\"t\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n\"}",
        "{\"t\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\\\\"}",
        "{\"t\":\"{\\\"password\\\": \\\"Tr0ub4dor3xK9mQ2vL7p\\\"}\"}",
        "{\"t\":\"https://u:p4ss\\\\@h\"}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char *buf = strdup(lines[i]);
        size_t k = sync_redact(buf, strlen(buf), NULL, NULL, NULL);
        json_error_t e;
        json_t *v = json_loads(buf, 0, &e);
        if (!v)
            fail_msg("line %zu (%zu redactions) is no longer JSON: %s", i, k, buf);
        json_decref(v);
        free(buf);
    }
}

static void ordinary_text_is_left_alone(void **state)
{
    (void)state;
    const char *text[] = {
        "\"max_tokens\": 4096, \"input_tokens\": 123456789012345678",
        "see https://example.com:8080/path and git@github.com:org/repo.git",
        "the task-list and sk-learn docs; ask-questions-first please",
        "password: see the docs; token=abcdefghijklmnopqrstuvwxyz",
        "sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "postgres://${USER}:${PASSWORD}@localhost/db and https://user:*****@host",
        "AKIAIOSFODNN7EXAMPL is short; XAKIAIOSFODNN7EXAMPLEX is inside a word",
        "-----BEGIN PUBLIC KEY----- is not private",
        "eyJhbGciOiJIUzI1NiJ9 alone is a header only",
    };
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        char *buf = strdup(text[i]);
        size_t k = sync_redact(buf, strlen(buf), NULL, NULL, NULL);
        if (k != 0)
            fail_msg("ordinary text %zu was redacted: %s", i, buf);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_is_redacted_in_place),
        cmocka_unit_test(the_marker_names_the_kind),
        cmocka_unit_test(json_stays_valid),
        cmocka_unit_test(ordinary_text_is_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
