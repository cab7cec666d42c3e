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
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "sync/sync_redact.h"
#include <mcpage/mcpage.h>

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
        size_t k = sync_redact(NULL, buf, n, &c, NULL, NULL);
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
        assert_int_equal(sync_redact(NULL, again, n, NULL, NULL, NULL), 0);
        assert_string_equal(again, buf);
        free(again);
        free(buf);
    }
}

/* The scan skips 16 bytes a step where it can: each case redacts the
 * same wherever it sits in the buffer, its start at every offset of a
 * step, the buffer's end right after it or a few bytes later. */
static void every_kind_is_redacted_at_any_offset(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const golden *g = &cases[i];
        size_t n = strlen(g->in);
        char *alone = strdup(g->in);
        assert_int_equal(sync_redact(NULL, alone, n, NULL, NULL, NULL), 1);
        for (size_t pad = 0; pad < 40; pad++) {
            for (size_t tail = 0; tail < 20; tail += 19) {
                char buf[512];
                assert_true(pad + n + tail < sizeof buf);
                memset(buf, ' ', sizeof buf);
                memcpy(buf + pad, g->in, n);
                if (sync_redact(NULL, buf, pad + n + tail, NULL, NULL, NULL) != 1 ||
                    memcmp(buf + pad, alone, n) != 0)
                    fail_msg("case %zu (%s) at offset %zu, %zu after: %.*s", i, g->kind, pad, tail,
                             (int)(pad + n + tail), buf);
            }
        }
        free(alone);
    }
}

static void the_marker_names_the_kind(void **state)
{
    (void)state;
    char buf[] = "x ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b y";
    sync_redact(NULL, buf, strlen(buf), NULL, NULL, NULL);
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
        size_t k = sync_redact(NULL, buf, strlen(buf), NULL, NULL, NULL);
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
        size_t k = sync_redact(NULL, buf, strlen(buf), NULL, NULL, NULL);
        if (k != 0)
            fail_msg("ordinary text %zu was redacted: %s", i, buf);
        free(buf);
    }
}

/* Found by fuzz_redact: a URL's password at a colon hid the value of a
 * secret's name at the same colon until a second scan. */
static void one_scan_finds_every_secret(void **state)
{
    (void)state;
    char buf[] = "export DBsecrethunter://u_PASSWORD=Tr0ub4dorLm2Np9Vt4Wb6ap:hunterikeyF2pass@d";
    size_t n = strlen(buf);
    assert_int_equal(sync_redact(NULL, buf, n, NULL, NULL, NULL), 2);
    assert_null(strstr(buf, "Tr0ub4dor"));
    assert_null(strstr(buf, "hunterikey"));
    char again[sizeof buf];
    memcpy(again, buf, sizeof buf);
    assert_int_equal(sync_redact(NULL, again, n, NULL, NULL, NULL), 0);
    assert_string_equal(again, buf);
}

static sync_redact_rules *rules_of(const char *json)
{
    sync_redact_rules *r = NULL;
    char err[512] = "";
    int rc = sync_redact_rules_parse(json, strlen(json), &r, err, sizeof err);
    if (rc != 0 || r == NULL)
        fail_msg("rules refused (%d): %s", rc, err);
    return r;
}

static void a_users_pattern_is_redacted_under_its_name(void **state)
{
    (void)state;
    sync_redact_rules *r =
        rules_of("{\"patterns\": [{\"name\": \"acme\", \"prefix\": \"acme_live_\", "
                 "\"min_length\": 20}, {\"name\": \"acme-long\", \"prefix\": \"acme_live_x\"}]}");
    char buf[] = "key acme_live_Ab3Cd4Ef5Gh6Ij7Kl8Mn9 end";
    size_t n = strlen(buf);
    sync_redact_counts c = {0};
    assert_int_equal(sync_redact(r, buf, n, &c, NULL, NULL), 1);
    assert_string_equal(buf, "key [REDACTED:acme]**************** end");
    assert_int_equal(c.n[REDACT_CUSTOM], 1);
    assert_string_equal(sync_redact_kind_name(REDACT_CUSTOM), "custom");
    /* a second scan changes nothing */
    char again[sizeof buf];
    memcpy(again, buf, sizeof buf);
    assert_int_equal(sync_redact(r, again, n, NULL, NULL, NULL), 0);
    assert_string_equal(again, buf);

    /* the longest of two matching patterns names it */
    char both[] = "acme_live_xQ7wE3rT9yU1iO5pA2sD8f";
    assert_int_equal(sync_redact(r, both, strlen(both), NULL, NULL, NULL), 1);
    assert_memory_equal(both, "[REDACTED:acme-long]", 20);

    /* too short, inside a word, or without the built-in rules' context: left */
    const char *left[] = {"acme_live_short1", "xacme_live_Ab3Cd4Ef5Gh6Ij7Kl8Mn9",
                          "acme_livE_Ab3Cd4Ef5Gh6Ij7Kl8Mn9"};
    for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
        char *b = strdup(left[i]);
        if (sync_redact(r, b, strlen(b), NULL, NULL, NULL) != 0)
            fail_msg("'%s' was redacted: %s", left[i], b);
        free(b);
    }
    /* the built-in kinds still apply beside the user's */
    char gh[] = "ghp_Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zX3cV7b acme_live_Ab3Cd4Ef5Gh6Ij7Kl8Mn9";
    sync_redact_counts c2 = {0};
    assert_int_equal(sync_redact(r, gh, strlen(gh), &c2, NULL, NULL), 2);
    assert_int_equal(c2.n[REDACT_GITHUB], 1);
    assert_int_equal(c2.n[REDACT_CUSTOM], 1);
    sync_redact_rules_free(r);
}

static void an_allowed_string_is_kept_and_not_counted(void **state)
{
    (void)state;
    sync_redact_rules *r = rules_of("{\"allow\": [\"AKIAIOSFODNN7EXAMPLE\", "
                                    "\"Tr0ub4dor3xK9mQ2vL7p\"], \"keep_secrets\": false}");
    char buf[] =
        "docs AKIAIOSFODNN7EXAMPLE, PASSWORD=Tr0ub4dor3xK9mQ2vL7p, real AKIAQX3HZP7KL2MNB4WT";
    sync_redact_counts c = {0};
    assert_int_equal(sync_redact(r, buf, strlen(buf), &c, NULL, NULL), 1);
    assert_non_null(strstr(buf, "docs AKIAIOSFODNN7EXAMPLE, PASSWORD=Tr0ub4dor3xK9mQ2vL7p, real "
                                "[REDACTED:aws-key]**"));
    assert_int_equal(c.n[REDACT_AWS_KEY], 1);
    sync_redact_rules_free(r);
}

static void a_wrong_rule_is_named_with_its_place(void **state)
{
    (void)state;
    static const struct {
        const char *json, *says;
    } bad[] = {
        {"{\"patterns\": [", "not JSON"},
        {"[1]", "JSON object"},
        {"{\"patterns\": {}}", "\"patterns\" must be an array"},
        {"{\"patterns\": [7]}", "patterns[0] must be an object"},
        {"{\"patterns\": [{\"name\": \"Acme\", \"prefix\": \"acme_\"}]}", "patterns[0].name"},
        {"{\"patterns\": [{\"name\": \"a\", \"prefix\": \"ok_\"}, {\"name\": \"b\", \"prefix\": "
         "\"a b\"}]}",
         "patterns[1].prefix"},
        {"{\"patterns\": [{\"name\": \"a\", \"prefix\": \"REDACTED:\"}]}", "patterns[0].prefix"},
        {"{\"patterns\": [{\"name\": \"a\", \"prefix\": \"abc\", \"min_length\": 2}]}",
         "patterns[0].min_length is 2"},
        {"{\"patterns\": [{\"name\": \"a\", \"prefix\": \"abc\", \"min_length\": \"9\"}]}",
         "patterns[0].min_length must be an integer"},
        {"{\"allow\": \"x\"}", "\"allow\" must be an array"},
        {"{\"allow\": [\"ok\", 3]}", "allow[1] must be a string"},
        {"{\"allow\": [\"\"]}", "allow[0] must be a string"},
        {"{\"allow\": [], \"allow\": []}", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sync_redact_rules *r = (sync_redact_rules *)1;
        char err[512] = "";
        int rc = sync_redact_rules_parse(bad[i].json, strlen(bad[i].json), &r, err, sizeof err);
        if (rc != MCPAGE_EINVAL || r != NULL || strstr(err, bad[i].says) == NULL)
            fail_msg("case %zu (%s): rc %d, said '%s', wanted '%s'", i, bad[i].json, rc, err,
                     bad[i].says);
    }
    /* neither member: no rules, no error */
    sync_redact_rules *r = (sync_redact_rules *)1;
    char err[64] = "";
    assert_int_equal(sync_redact_rules_parse("{\"keep_secrets\": true}", 22, &r, err, sizeof err),
                     0);
    assert_null(r);
}

/* Writes text to a file in a fresh temporary folder; its path into path. */
static void write_config(char *path, size_t cap, const char *text)
{
    char dir[] = "/tmp/mcpage-redact-XXXXXX";
    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, cap, "%s/redact.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_config(const char *path)
{
    (void)remove(path);
    char dir[4096];
    (void)snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    (void)rmdir(dir);
}

static void the_config_file_is_read_and_a_broken_one_is_said(void **state)
{
    (void)state;
    char path[4096];
    sync_redact_config cfg;
    unsetenv("MCPAGE_KEEP_SECRETS");

    write_config(path, sizeof path,
                 "{\"keep_secrets\": true, \"patterns\": [{\"name\": \"corp\", \"prefix\": "
                 "\"corp-\", \"min_length\": 10}]}");
    setenv("MCPAGE_REDACT_CONFIG", path, 1);
    sync_redact_config_load(&cfg);
    assert_string_equal(cfg.warning, "");
    assert_int_equal(cfg.keep_secrets, 1);
    assert_non_null(cfg.rules);
    setenv("MCPAGE_KEEP_SECRETS", "0", 1); /* the environment over the file */
    sync_redact_config_free(&cfg);
    sync_redact_config_load(&cfg);
    assert_int_equal(cfg.keep_secrets, 0);
    sync_redact_config_free(&cfg);
    unsetenv("MCPAGE_KEEP_SECRETS");
    remove_config(path);

    /* a wrong member: redaction stays on, built-in patterns only, and says why */
    write_config(
        path, sizeof path,
        "{\"keep_secrets\": true, \"patterns\": [{\"name\": \"corp\", \"prefix\": \"c\"}]}");
    setenv("MCPAGE_REDACT_CONFIG", path, 1);
    sync_redact_config_load(&cfg);
    assert_int_equal(cfg.keep_secrets, 0);
    assert_null(cfg.rules);
    assert_non_null(strstr(cfg.warning, "patterns[0].prefix"));
    assert_non_null(strstr(cfg.warning, "redacting with the built-in patterns only"));
    sync_redact_config_free(&cfg);
    remove_config(path);

    write_config(path, sizeof path, "{\"keep_secrets\": \"yes\"}");
    setenv("MCPAGE_REDACT_CONFIG", path, 1);
    sync_redact_config_load(&cfg);
    assert_int_equal(cfg.keep_secrets, 0);
    assert_non_null(strstr(cfg.warning, "\"keep_secrets\" must be true or false"));
    sync_redact_config_free(&cfg);
    remove_config(path);

    /* no file: redaction on, nothing said */
    sync_redact_config_load(&cfg);
    assert_string_equal(cfg.warning, "");
    assert_int_equal(cfg.keep_secrets, 0);
    assert_null(cfg.rules);
    unsetenv("MCPAGE_REDACT_CONFIG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_is_redacted_in_place),
        cmocka_unit_test(every_kind_is_redacted_at_any_offset),
        cmocka_unit_test(the_marker_names_the_kind),
        cmocka_unit_test(json_stays_valid),
        cmocka_unit_test(ordinary_text_is_left_alone),
        cmocka_unit_test(one_scan_finds_every_secret),
        cmocka_unit_test(a_users_pattern_is_redacted_under_its_name),
        cmocka_unit_test(an_allowed_string_is_kept_and_not_counted),
        cmocka_unit_test(a_wrong_rule_is_named_with_its_place),
        cmocka_unit_test(the_config_file_is_read_and_a_broken_one_is_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
