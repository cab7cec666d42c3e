/*
 * Tests for the folded sources' sync (src/sync/sync_fold.c) as a whole:
 * a sync killed at random moments resumes to exactly the store of a
 * clean run (the sample archive's Gemini CLI, Copilot CLI and OpenCode
 * sessions, then the same files grown, rewound and rewritten), and
 * sessions of five agents working in one directory make one project. Run on SQLite
 * here and on PostgreSQL by test_sync_fold_pg.c.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync.h"

typedef struct fx {
    char dir[256];
    char gemini[300];
    char copilot[300];
    char opencode[300];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcpage-test-fold-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->gemini, sizeof f->gemini, "%s/gemini", f->dir);
    snprintf(f->copilot, sizeof f->copilot, "%s/copilot", f->dir);
    snprintf(f->opencode, sizeof f->opencode, "%s/opencode", f->dir);
    char src[600];
    snprintf(src, sizeof src, "%s/examples/archive/gemini", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->gemini);
    snprintf(src, sizeof src, "%s/examples/archive/copilot", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->copilot);
    snprintf(src, sizeof src, "%s/examples/archive/opencode", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->opencode);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    tb_cleanup();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void child_sync(const char *db, const fx *f)
{
    store *s = NULL;
    if (store_open(db, STORE_OPEN_WRITE, &s) < 0)
        _exit(3);
    sync_options o = {.gemini_home = f->gemini,
                      .copilot_home = f->copilot,
                      .opencode_home = f->opencode,
                      .hostname = "test"};
    sync_report r;
    int rc = sync_run(s, &o, &r);
    store_close(s);
    _exit(rc < 0 || r.files_failed ? 4 : 0);
}

static void run_to_end(const char *db, const fx *f)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_sync(db, f);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Kills `times` syncs of db at random moments within `span` seconds. */
static int kill_syncs(const char *db, const fx *f, int times, double span)
{
    int kills = 0;
    for (int k = 0; k < times; k++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            child_sync(db, f);
        usleep((useconds_t)((double)rand() / RAND_MAX * span * 1e6 / (k + 1)));
        kill(pid, SIGKILL);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
            kills++;
    }
    return kills;
}

/* Grows, rewinds and rewrites the copied sample files (a second pass). */
static void change_files(const fx *f)
{
    char cmd[2400];
    snprintf(
        cmd, sizeof cmd,
        "set -e; cd '%s'; for x in tmp/*/chats/session-*.jsonl; do "
        "printf '%%s\\n' '{\"id\":\"late-1\",\"timestamp\":\"2025-10-01T00:00:00Z\","
        "\"type\":\"user\",\"content\":\"one more thing\"}' >> \"$x\"; done; "
        "x=$(ls tmp/ledger-api/chats/session-*.jsonl | head -1); "
        "printf '%%s\\n' '{\"$rewindTo\":\"late-1\"}' >> \"$x\"; "
        "d=$(ls tmp/*/chats/session-*.json | head -1); "
        "sed -i 's/\"lastUpdated\": \"/\"lastUpdated\": \"2/' \"$d\"; "
        "cd '%s'; for x in session-state/*/events.jsonl; do "
        "printf '%%s\\n' '{\"type\":\"user.message\",\"data\":{\"content\":\"and the docs\"},"
        "\"id\":\"late-ev\",\"timestamp\":\"2025-10-01T00:00:00Z\",\"parentId\":null}' >> \"$x\"; "
        "done; cd '%s/storage/part'; for x in */; do "
        "printf '%%s\\n' '{\"id\":\"prt_late\",\"type\":\"text\",\"text\":\"one more\"}' "
        "> \"$x/prt_zzz.json\"; done",
        f->gemini, f->copilot, f->opencode);
    assert_int_equal(system(cmd), 0);
}

/* The sample's files again, as the sample has them. */
static void restore_files(const fx *f)
{
    char cmd[1000], src[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", f->gemini, f->copilot, f->opencode);
    assert_int_equal(system(cmd), 0);
    snprintf(src, sizeof src, "%s/examples/archive/gemini", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->gemini);
    snprintf(src, sizeof src, "%s/examples/archive/copilot", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->copilot);
    snprintf(src, sizeof src, "%s/examples/archive/opencode", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->opencode);
}

/*
 * Pass 0 kills the first sync of the sample; pass 1 kills the sync after
 * the files grew, were rewound and rewritten (read on, or read again).
 * Each round must end with the dump of a run never killed.
 */
static void killed_sync_resumes_to_the_same_store(void **state)
{
    fx *f = *state;
    unsigned seed = (unsigned)getpid();
    const char *env = getenv("MCPAGE_CRASH_SEED");
    if (env)
        seed = (unsigned)strtoul(env, NULL, 10);
    srand(seed);
    int rounds = tb_current() == TB_POSTGRES ? 2 : 4;
    const char *rounds_env = getenv("MCPAGE_CRASH_ROUNDS");
    if (rounds_env && atoi(rounds_env) > 0)
        rounds = atoi(rounds_env);
    int kills = 0;
    for (int pass = 0; pass < 2; pass++) {
        char clean[1200];
        tb_spec(f->dir, pass ? "clean1" : "clean0", clean, sizeof clean);
        restore_files(f);
        if (pass) {
            run_to_end(clean, f);
            change_files(f);
        }
        double t0 = now_s();
        run_to_end(clean, f);
        double span = (now_s() - t0) * 0.9;
        char *want = ts_dump(clean, 200);
        for (int round = 0; round < rounds; round++) {
            char name[32], crash[1200];
            snprintf(name, sizeof name, "crash%d-%d", pass, round);
            tb_spec(f->dir, name, crash, sizeof crash);
            restore_files(f);
            if (pass) {
                run_to_end(crash, f);
                change_files(f);
            }
            kills += kill_syncs(crash, f, 1 + rand() % 3, span);
            run_to_end(crash, f);
            char *got = ts_dump(crash, 200);
            if (strcmp(want, got) != 0) {
                ts_put("/tmp/mcpage-fold-crash-want.txt", "w", want);
                ts_put("/tmp/mcpage-fold-crash-got.txt", "w", got);
                fail_msg("pass %d round %d (seed %u): the store after kills differs from a "
                         "clean run",
                         pass, round, seed);
            }
            free(got);
        }
        free(want);
    }
    print_message("fold crash test: %d kills (seed %u)\n", kills, seed);
    assert_true(kills > 0);
}

static void five_agents_in_one_directory_are_one_project(void **state)
{
    fx *f = *state;
    char db[1200], claude[600], codex[600];
    tb_spec(f->dir, "all", db, sizeof db);
    snprintf(claude, sizeof claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(codex, sizeof codex, "%s/examples/archive/codex", MCPAGE_SOURCE_DIR);
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.claude_home = claude,
                      .codex_home = codex,
                      .gemini_home = f->gemini,
                      .copilot_home = f->copilot,
                      .opencode_home = f->opencode,
                      .hostname = "test"};
    sync_report rep;
    assert_int_equal(sync_run(s, &o, &rep), 0);
    assert_int_equal(rep.files_seen, 65);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.lines_malformed, 4);
    assert_int_equal(rep.lines_partial, 2);
    store_close(s);
    char *d = ts_dump(db, 40);
    assert_non_null(strstr(d, "project ledger-api /home/ada/src/ledger-api "
                              "claude,codex,copilot,gemini,opencode sessions=22"));
    assert_non_null(strstr(d, "project mcpage /home/ada/src/mcpage claude,copilot sessions=11"));
    free(d);

    /* the source filters take the new names */
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    int64_t n = 0;
    store_session_filter sf = {.source = "gemini"};
    assert_int_equal(store_sessions_count(s, &sf, &n), 0);
    assert_int_equal(n, 10);
    sf.source = "copilot";
    assert_int_equal(store_sessions_count(s, &sf, &n), 0);
    assert_int_equal(n, 6);
    sf.source = "opencode";
    assert_int_equal(store_sessions_count(s, &sf, &n), 0);
    assert_int_equal(n, 4);
    store_project_filter pf = {.source = "gemini"};
    assert_int_equal(store_projects_count(s, &pf, &n), 0);
    assert_int_equal(n, 3);
    store_search_filter qf = {.query = "rounding rule", .source = "gemini"};
    assert_int_equal(store_search_count(s, &qf, &n), 0);
    assert_int_equal(n, 1);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(killed_sync_resumes_to_the_same_store, setup, teardown),
        cmocka_unit_test_setup_teardown(five_agents_in_one_directory_are_one_project, setup,
                                        teardown),
    };
    return TB_RUN_GROUPS(tests);
}
