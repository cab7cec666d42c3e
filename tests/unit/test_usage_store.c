/*
 * The store's model calls (store_usage_add, store_usage_sums_get): one
 * copy of a call counts, by ccusage's rule (the larger sum of the four
 * counts; a main-chain copy over a sidechain one, which matches by
 * message id alone; the first on a tie); a session reset takes its calls
 * away and promotes the best remaining copy; sums by hour, minute,
 * session, project, agent and model, with the per-call long-context
 * parts. Runs on SQLite here and on PostgreSQL in test_usage_store_pg.c.
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

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"

typedef struct fixture {
    char dir[256];
    char db[1200];
    store *s;
} fixture;

static void session(store *s, const char *id, const char *source, const char *cwd)
{
    int64_t pid = 0;
    assert_int_equal(store_project_ensure(s, cwd, strrchr(cwd, '/') + 1, &pid), 0);
    store_session_meta m = {.session_id = id, .source = source, .project_id = pid};
    assert_int_equal(store_session_put(s, &m), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcpage-test-usage-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    tb_spec(f->dir, "u", f->db, sizeof f->db);
    if (store_open(f->db, STORE_OPEN_WRITE, &f->s) < 0)
        return -1;
    assert_int_equal(store_begin(f->s), 0);
    session(f->s, "a", "claude", "/w/api");
    session(f->s, "b", "claude", "/w/web");
    session(f->s, "c", "codex", "/w/api");
    assert_int_equal(store_commit(f->s), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_close(f->s);
    tb_cleanup();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void add(store *s, const char *sess, const char *ts, const char *key, const char *model,
                int side, int64_t in, int64_t out, int64_t cc, int64_t cr)
{
    store_usage u = {.session_id = sess,
                     .timestamp = ts,
                     .call_key = key,
                     .model = model,
                     .sidechain = side,
                     .input = in,
                     .output = out,
                     .cache_creation = cc,
                     .cache_read = cr};
    assert_int_equal(store_usage_add(s, &u), 0);
}

/* Sums of one filter, over every row: calls, input, output, cache
 * creation, cache read. */
static void totals(store *s, const store_usage_filter *f, int64_t t[5])
{
    store_usage_sums l;
    assert_int_equal(store_usage_sums_get(s, f, 1000, &l), 0);
    memset(t, 0, 5 * sizeof t[0]);
    for (size_t i = 0; i < l.count; i++) {
        t[0] += l.rows[i].calls;
        t[1] += l.rows[i].input;
        t[2] += l.rows[i].output;
        t[3] += l.rows[i].cache_creation;
        t[4] += l.rows[i].cache_read;
    }
    store_usage_sums_free(&l);
}

static const store_usage_filter all = {
    .group = STORE_USAGE_BY_MODEL, .from_minute = INT64_MIN, .to_minute = INT64_MAX};

/* The hourly sums (usage_hours: BY_MODEL, BY_AGENT, BY_HOUR) agree with
 * the calls themselves (BY_SESSION, BY_PROJECT, BY_MINUTE read usage_calls). */
static void hourly_sums_agree(store *s)
{
    int64_t want[5], got[5], h[5], m[5];
    store_usage_filter f = all;
    f.group = STORE_USAGE_BY_SESSION;
    totals(s, &f, want);
    static const store_usage_group same[] = {STORE_USAGE_BY_MODEL, STORE_USAGE_BY_AGENT,
                                             STORE_USAGE_BY_PROJECT};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        f.group = same[i];
        totals(s, &f, got);
        assert_memory_equal(got, want, sizeof want);
    }
    f.group = STORE_USAGE_BY_HOUR; /* calls with a time only, both ways */
    totals(s, &f, h);
    f.group = STORE_USAGE_BY_MINUTE;
    totals(s, &f, m);
    assert_memory_equal(h, m, sizeof h);
    /* a whole-hour range reads usage_hours; one off the hour, the calls */
    f.group = STORE_USAGE_BY_AGENT;
    f.from_minute = store_usage_minute("2026-01-02T10:00:00Z");
    totals(s, &f, h);
    f.from_minute = store_usage_minute("2026-01-02T09:59:00Z");
    totals(s, &f, m);
    assert_memory_equal(h, m, sizeof h);
}

static void one_copy_of_a_call_counts(void **state)
{
    fixture *f = *state;
    int64_t t[5];
    assert_int_equal(store_begin(f->s), 0);
    /* streaming partials: output grows; the largest counts */
    add(f->s, "a", "2026-01-02T10:00:00Z", "m1:r1", "opus", 0, 10, 1, 100, 1000);
    add(f->s, "a", "2026-01-02T10:00:01Z", "m1:r1", "opus", 0, 10, 40, 100, 1000);
    add(f->s, "a", "2026-01-02T10:00:02Z", "m1:r1", "opus", 0, 10, 40, 100, 1000); /* tie */
    /* a sidechain copy with another request id loses to the main chain */
    add(f->s, "b", "2026-01-02T10:00:03Z", "m1:r9", "opus", 1, 10, 400, 100, 1000);
    /* a main-chain copy beats an earlier sidechain one, even when smaller */
    add(f->s, "b", "2026-01-02T11:00:00Z", "m2:r2", "opus", 1, 5, 50, 0, 0);
    add(f->s, "a", "2026-01-02T11:00:00Z", "m2:r2", "opus", 0, 5, 5, 0, 0);
    /* no key: never a copy */
    add(f->s, "c", "2026-01-03T00:30:00+01:00", NULL, "gpt-5", 0, 7, 3, 0, 2);
    add(f->s, "c", "2026-01-03T00:30:00+01:00", NULL, "gpt-5", 0, 7, 3, 0, 2);
    assert_int_equal(store_commit(f->s), 0);
    totals(f->s, &all, t);
    assert_int_equal(t[0], 4);
    assert_int_equal(t[1], 10 + 5 + 14);
    assert_int_equal(t[2], 40 + 5 + 6);
    assert_int_equal(t[3], 100);
    assert_int_equal(t[4], 1000 + 4);

    /* by session: m1 and m2 are a's */
    store_usage_filter by = all;
    by.group = STORE_USAGE_BY_SESSION;
    by.session_id = "b";
    totals(f->s, &by, t);
    assert_int_equal(t[0], 0);
    by.session_id = "a";
    totals(f->s, &by, t);
    assert_int_equal(t[0], 2);
    assert_int_equal(t[2], 45);

    /* by hour: the codex calls at 23:30 UTC on the 2nd */
    by = all;
    by.group = STORE_USAGE_BY_HOUR;
    store_usage_sums l;
    assert_int_equal(store_usage_sums_get(f->s, &by, 100, &l), 0);
    int seen = 0;
    int64_t h2330 = store_usage_minute("2026-01-02T23:30:00Z") / 60;
    for (size_t i = 0; i < l.count; i++)
        if (l.rows[i].bucket == h2330) {
            seen++;
            assert_int_equal(l.rows[i].calls, 2);
            assert_string_equal(l.rows[i].model, "gpt-5");
            assert_string_equal(l.rows[i].source, "codex");
            assert_true(!l.rows[i].first || !*l.rows[i].first); /* hourly sums: no times */
        }
    assert_int_equal(seen, 1);
    store_usage_sums_free(&l);

    /* project and agent filters */
    by = all;
    by.group = STORE_USAGE_BY_PROJECT;
    by.project = "api";
    totals(f->s, &by, t);
    assert_int_equal(t[0], 4);
    by.source = "codex";
    totals(f->s, &by, t);
    assert_int_equal(t[0], 2);
    by = all;
    by.group = STORE_USAGE_BY_AGENT;
    by.from_minute = store_usage_minute("2026-01-02T10:30:00Z");
    by.to_minute = store_usage_minute("2026-01-02T23:00:00Z");
    totals(f->s, &by, t);
    assert_int_equal(t[0], 1); /* m2 alone */
    hourly_sums_agree(f->s);
}

static void a_reset_promotes_the_best_remaining_copy(void **state)
{
    fixture *f = *state;
    int64_t t[5];
    assert_int_equal(store_begin(f->s), 0);
    add(f->s, "a", "2026-01-02T10:00:00Z", "m1:r1", "opus", 0, 10, 40, 0, 0);
    add(f->s, "b", "2026-01-02T10:00:00Z", "m1:r1", "opus", 0, 10, 30, 0, 0);
    add(f->s, "b", "2026-01-02T10:00:00Z", "m1:r1", "opus", 0, 10, 35, 0, 0);
    assert_int_equal(store_commit(f->s), 0);
    totals(f->s, &all, t);
    assert_int_equal(t[2], 40);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "a"), 0);
    assert_int_equal(store_commit(f->s), 0);
    totals(f->s, &all, t);
    assert_int_equal(t[0], 1);
    assert_int_equal(t[2], 35);
    hourly_sums_agree(f->s);
    /* and a session read again competes as before */
    assert_int_equal(store_begin(f->s), 0);
    add(f->s, "a", "2026-01-02T10:00:00Z", "m1:r1", "opus", 0, 10, 40, 0, 0);
    assert_int_equal(store_commit(f->s), 0);
    totals(f->s, &all, t);
    assert_int_equal(t[0], 1);
    assert_int_equal(t[2], 40);
    hourly_sums_agree(f->s);
}

static void long_context_parts_and_bad_counts(void **state)
{
    fixture *f = *state;
    assert_int_equal(store_begin(f->s), 0);
    store_usage u = {.session_id = "a",
                     .timestamp = "2026-01-05T12:00:00.123Z",
                     .model = "sonnet",
                     .input = 250000,
                     .output = 10,
                     .cache_creation = 300000,
                     .cache_creation_1h = 210000,
                     .cache_read = 199999,
                     .cost_usd = 1.5,
                     .cost_given = 1};
    assert_int_equal(store_usage_add(f->s, &u), 0);
    u.input = -1;
    assert_int_equal(store_usage_add(f->s, &u), MCPAGE_EINVAL);
    u.input = 1;
    u.session_id = "nope";
    assert_int_equal(store_usage_add(f->s, &u), MCPAGE_ENOTFOUND);
    assert_int_equal(store_commit(f->s), 0);
    store_usage_sums l;
    assert_int_equal(store_usage_sums_get(f->s, &all, 10, &l), 0);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.rows[0].over_input, 50000);
    assert_int_equal(l.rows[0].over_output, 0);
    assert_int_equal(l.rows[0].over_cache_5m, 0); /* 90,000 of 5-minute writes */
    assert_int_equal(l.rows[0].over_cache_1h, 10000);
    assert_int_equal(l.rows[0].over_cache_read, 0);
    assert_int_equal(l.rows[0].cost_given, 1);
    assert_true(l.rows[0].cost_usd > 1.49 && l.rows[0].cost_usd < 1.51);
    store_usage_sums_free(&l);
    assert_int_equal(store_usage_sums_get(f->s, &all, 0, &l), MCPAGE_ERANGE);
}

static void minutes_of_timestamps(void **state)
{
    (void)state;
    assert_int_equal(store_usage_minute("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(store_usage_minute("1970-01-01T01:01:59.999Z"), 61);
    assert_int_equal(store_usage_minute("1970-01-01T05:45:00+05:45"), 0);
    assert_int_equal(store_usage_minute("1969-12-31T23:00:00-01:00"), 0);
    assert_int_equal(store_usage_minute("2026-03-01"), 20513 * 1440);
    assert_int_equal(store_usage_minute("2026-13-01T00:00Z"), INT64_MIN);
    assert_int_equal(store_usage_minute("yesterday"), INT64_MIN);
    assert_int_equal(store_usage_minute(""), INT64_MIN);
    assert_int_equal(store_usage_minute(NULL), INT64_MIN);
    assert_int_equal(store_usage_minute("2026-01-01T10:00:00Q"), INT64_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_copy_of_a_call_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(a_reset_promotes_the_best_remaining_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(long_context_parts_and_bad_counts, setup, teardown),
        cmocka_unit_test(minutes_of_timestamps),
    };
    return TB_RUN_GROUPS(tests);
}
