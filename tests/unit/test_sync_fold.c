/*
 * Tests for the folded sources' sync (src/sync/sync_fold.c) as a whole:
 * a sync killed at random moments resumes to exactly the store of a
 * clean run (the sample archive's Gemini CLI, Copilot CLI, OpenCode and
 * Cursor sessions, then the same files grown, rewound and rewritten), and
 * sessions of six agents working in one directory make one project. Run
 * on SQLite
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
    char cursor[300];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "fold") < 0)
        return -1;
    snprintf(f->gemini, sizeof f->gemini, "%s/gemini", f->dir);
    snprintf(f->copilot, sizeof f->copilot, "%s/copilot", f->dir);
    snprintf(f->opencode, sizeof f->opencode, "%s/opencode", f->dir);
    snprintf(f->cursor, sizeof f->cursor, "%s/cursor", f->dir);
    char src[600];
    snprintf(src, sizeof src, "%s/examples/archive/gemini", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->gemini);
    snprintf(src, sizeof src, "%s/examples/archive/copilot", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->copilot);
    snprintf(src, sizeof src, "%s/examples/archive/opencode", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->opencode);
    snprintf(src, sizeof src, "%s/examples/archive/cursor", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->cursor);
    *state = f;
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
                      .cursor_home = f->cursor,
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
    char cmd[1400], src[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s' '%s'", f->gemini, f->copilot, f->opencode,
             f->cursor);
    assert_int_equal(system(cmd), 0);
    snprintf(src, sizeof src, "%s/examples/archive/gemini", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->gemini);
    snprintf(src, sizeof src, "%s/examples/archive/copilot", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->copilot);
    snprintf(src, sizeof src, "%s/examples/archive/opencode", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->opencode);
    snprintf(src, sizeof src, "%s/examples/archive/cursor", MCPAGE_SOURCE_DIR);
    ts_copy_tree(src, f->cursor);
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

static void six_agents_in_one_directory_are_one_project(void **state)
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
                      .cursor_home = f->cursor,
                      .hostname = "test"};
    sync_report rep;
    assert_int_equal(sync_run(s, &o, &rep), 0);
    assert_int_equal(rep.files_seen, 69);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.lines_malformed, 5);
    assert_int_equal(rep.lines_partial, 2);
    store_close(s);
    char *d = ts_dump(db, 40);
    assert_non_null(strstr(d, "project ledger-api /home/ada/src/ledger-api "
                              "claude,codex,copilot,cursor,gemini,opencode sessions=24"));
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
    sf.source = "cursor";
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

/* ---- walks while sessions are stored again ------------------------------ */

#define WALK_T     "2025-11-01T10:00:00.000Z"
#define WALK_T_MS  "1761991200000"
#define WALK_PAGE  3
#define WALK_FIRST 8

static void put_file(const char *mode, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put_file(const char *mode, const char *text, const char *fmt, ...)
{
    char path[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    ts_put(path, mode, text);
}

static void gemini_line(const fx *f, const char *id, int user, const char *words)
{
    char line[600];
    snprintf(line, sizeof line,
             "{\"id\":\"%s\",\"timestamp\":\"" WALK_T "\",\"type\":\"%s\",\"content\":\"%s\"}\n",
             id, user ? "user" : "gemini", words);
    put_file("a", line, "%s/tmp/walk/chats/session-2025-11-01T10-00-walkgem1.jsonl", f->gemini);
}

static void copilot_line(const fx *f, const char *id, int user, const char *words)
{
    char line[600];
    snprintf(line, sizeof line,
             "{\"type\":\"%s\",\"data\":{\"content\":\"%s\"},\"id\":\"%s\",\"timestamp\":"
             "\"" WALK_T "\",\"parentId\":null}\n",
             user ? "user.message" : "assistant.message", words, id);
    put_file("a", line, "%s/session-state/walk-cop/events.jsonl", f->copilot);
}

static void opencode_part(const fx *f, int msg, const char *part, const char *words)
{
    char text[600];
    snprintf(text, sizeof text,
             "{\"id\":\"%s\",\"sessionID\":\"ses_walk\",\"messageID\":\"msg_w%d\","
             "\"type\":\"text\",\"text\":\"%s\"}\n",
             part, msg, words);
    put_file("w", text, "%s/storage/part/msg_w%d/%s.json", f->opencode, msg, part);
}

/*
 * Three sessions, one per folded agent, whose messages all hold the word
 * "walkword" and share one time: a walk orders them by message id alone,
 * the order a resync that gave them new ids would upset.
 */
static void walk_write(const fx *f)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd,
             "set -e; mkdir -p '%s/tmp/walk/chats' '%s/session-state/walk-cop' "
             "'%s/storage/session/prj_walk' '%s/storage/message/ses_walk'; cd '%s/storage'; "
             "mkdir -p part/msg_w1 part/msg_w2 part/msg_w3 part/msg_w4",
             f->gemini, f->copilot, f->opencode, f->opencode, f->opencode);
    assert_int_equal(system(cmd), 0);
    put_file("w",
             "{\"sessionId\":\"walk-gem\",\"projectHash\":\"walk\",\"startTime\":\"" WALK_T
             "\",\"lastUpdated\":\"" WALK_T
             "\",\"kind\":\"main\",\"directories\":[\"/home/ada/src/walk\"]}\n",
             "%s/tmp/walk/chats/session-2025-11-01T10-00-walkgem1.jsonl", f->gemini);
    put_file("w",
             "{\"type\":\"session.start\",\"data\":{\"sessionId\":\"walk-cop\",\"context\":"
             "{\"cwd\":\"/home/ada/src/walk\"}},\"id\":\"ce0\",\"timestamp\":\"" WALK_T
             "\",\"parentId\":null}\n",
             "%s/session-state/walk-cop/events.jsonl", f->copilot);
    put_file("w",
             "{\"id\":\"ses_walk\",\"projectID\":\"prj_walk\",\"directory\":\"/home/ada/src/walk\","
             "\"title\":\"walk\",\"time\":{\"created\":" WALK_T_MS ",\"updated\":" WALK_T_MS "}}\n",
             "%s/storage/session/prj_walk/ses_walk.json", f->opencode);
    for (int i = 1; i <= WALK_FIRST; i++) {
        char id[32], words[64];
        snprintf(id, sizeof id, "gm%d", i);
        snprintf(words, sizeof words, "walkword gemini %d", i);
        gemini_line(f, id, i % 2, words);
        snprintf(id, sizeof id, "ce%d", i);
        snprintf(words, sizeof words, "walkword copilot %d", i);
        copilot_line(f, id, i % 2, words);
    }
    for (int m = 1; m <= 4; m++) {
        char text[400], part[32], words[64];
        snprintf(text, sizeof text,
                 "{\"id\":\"msg_w%d\",\"sessionID\":\"ses_walk\",\"role\":\"%s\",\"time\":"
                 "{\"created\":" WALK_T_MS "}}\n",
                 m, m % 2 ? "user" : "assistant");
        put_file("w", text, "%s/storage/message/ses_walk/msg_w%d.json", f->opencode, m);
        for (int k = 0; k < 2; k++) {
            snprintf(part, sizeof part, "prt_w%d%c", m, 'a' + k);
            snprintf(words, sizeof words, "walkword opencode %d%c", m, 'a' + k);
            opencode_part(f, m, part, words);
        }
    }
}

static void walk_sync(const char *db, const fx *f)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.gemini_home = f->gemini,
                      .copilot_home = f->copilot,
                      .opencode_home = f->opencode,
                      .hostname = "test"};
    sync_report r;
    assert_int_equal(sync_run(s, &o, &r), 0);
    assert_int_equal(r.files_failed, 0);
    store_close(s);
}

/*
 * Change `step` between two pages: the agents store a session again
 * (Gemini writes a message again and rewinds, Copilot rewinds to an event
 * and writes it again, OpenCode updates a part in place) or add messages.
 * Returns 1 when the change makes sync store a session again.
 */
static int walk_change(const fx *f, int step)
{
    char id[32], words[64];
    switch (step % 6) {
    case 0: /* the same message written again (its tokens arrived) */
        gemini_line(f, "gm3", 0, "walkword gemini 3");
        return 1;
    case 1: /* a rewind to the last event, which is written again */
        put_file("a",
                 "{\"type\":\"session.snapshot_rewind\",\"data\":{\"upToEventId\":\"ce8\"},"
                 "\"id\":\"rw\",\"timestamp\":\"" WALK_T "\",\"parentId\":null}\n",
                 "%s/session-state/walk-cop/events.jsonl", f->copilot);
        copilot_line(f, "ce8", 0, "walkword copilot 8");
        return 1;
    case 2: /* a part updated in place */
        snprintf(words, sizeof words, "walkword opencode 2b edited %d", step);
        opencode_part(f, 2, "prt_w2b", words);
        return 1;
    case 3: /* a rewind to the last message, written again, and a new one */
        put_file("a", "{\"$rewindTo\":\"gm8\"}\n",
                 "%s/tmp/walk/chats/session-2025-11-01T10-00-walkgem1.jsonl", f->gemini);
        gemini_line(f, "gm8", 0, "walkword gemini 8");
        snprintf(id, sizeof id, "gx%d", step);
        snprintf(words, sizeof words, "walkword gemini new %d", step);
        gemini_line(f, id, 1, words);
        return 1;
    case 4: /* appended only */
        snprintf(id, sizeof id, "cx%d", step);
        snprintf(words, sizeof words, "walkword copilot new %d", step);
        copilot_line(f, id, 1, words);
        return 0;
    default: /* a new part */
        snprintf(id, sizeof id, "prt_x%d", step);
        snprintf(words, sizeof words, "walkword opencode new %d", step);
        opencode_part(f, 4, id, words);
        return 1;
    }
}

typedef struct walk_row {
    int64_t id;
    char who[200]; /* session and snippet: the message as a reader sees it */
} walk_row;

typedef struct walk_rows {
    walk_row v[256];
    size_t n;
} walk_rows;

static void walk_add(walk_rows *w, const store_hit *h)
{
    assert_true(w->n < sizeof w->v / sizeof w->v[0]);
    w->v[w->n].id = h->message_id;
    snprintf(w->v[w->n].who, sizeof w->v[w->n].who, "%s|%s", h->session_id, h->snippet);
    w->n++;
}

static const walk_row *walk_find(const walk_rows *w, int64_t id, const char *who)
{
    for (size_t i = 0; i < w->n; i++)
        if (id ? w->v[i].id == id : (who != NULL && strcmp(w->v[i].who, who) == 0))
            return &w->v[i];
    return NULL;
}

/* Every match now, in one page. */
static void walk_all(store *r, store_search_sort sort, walk_rows *out)
{
    store_search_filter q = {.query = "walkword", .sort = sort};
    store_page pg = {.limit = STORE_LIMIT_MAX};
    store_hits h;
    assert_int_equal(store_search(r, &q, &pg, &h), 0);
    out->n = 0;
    for (size_t i = 0; i < h.count; i++)
        walk_add(out, &h.rows[i]);
    store_hits_free(&h);
}

/*
 * What the contract asks of a walk by next cursor while sync stores
 * sessions again: every message that existed for the whole walk is seen
 * exactly once; a message a resync left as it was keeps its id (else a
 * reader that saw it sees it again under its new id, or, walking newest
 * first, never); messages added or removed meanwhile may or may not be seen.
 */
static void walk_while_sessions_are_stored_again(void **state)
{
    fx *f = *state;
    char db[1200], clean[1200];
    tb_spec(f->dir, "walk", db, sizeof db);
    walk_write(f);
    walk_sync(db, f);
    store *r = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &r), 0);
    int step = 0, restored = 0, edited = 0;
    static const store_search_sort sorts[] = {STORE_SEARCH_OLDEST, STORE_SEARCH_NEWEST};
    for (size_t si = 0; si < 2; si++) {
        static walk_rows before, after, seen;
        walk_all(r, sorts[si], &before);
        assert_true(before.n >= 3 * WALK_FIRST);
        seen.n = 0;
        store_search_filter q = {.query = "walkword", .sort = sorts[si]};
        store_key at = {0};
        for (int pages = 0;; pages++) {
            assert_true(pages < 100);
            store_page pg = {.after = at.nparts ? &at : NULL, .limit = WALK_PAGE};
            store_hits h;
            assert_int_equal(store_search(r, &q, &pg, &h), 0);
            for (size_t i = 0; i < h.count; i++) {
                const store_hit *x = &h.rows[i];
                if (walk_find(&seen, x->message_id, NULL))
                    fail_msg("walk %zu: message %lld seen twice", si, (long long)x->message_id);
                walk_add(&seen, x);
                const walk_row *w = &seen.v[seen.n - 1];
                if (walk_find(&seen, 0, w->who) != w)
                    fail_msg("walk %zu: %s seen twice (ids %lld, %lld)", si, w->who,
                             (long long)walk_find(&seen, 0, w->who)->id, (long long)w->id);
                at = x->key;
            }
            size_t got = h.count;
            store_hits_free(&h);
            if (got < WALK_PAGE)
                break;
            restored += walk_change(f, step++);
            walk_sync(db, f);
        }
        walk_all(r, sorts[si], &after);
        /* the part updated in place kept its id through every edit */
        for (size_t i = 0; i < before.n; i++) {
            if (!strstr(before.v[i].who, "opencode 2b"))
                continue;
            const walk_row *now = walk_find(&after, before.v[i].id, NULL);
            assert_non_null(now);
            assert_non_null(strstr(now->who, "opencode 2b edited"));
            edited++;
        }
        for (size_t i = 0; i < before.n; i++) {
            const walk_row *b = &before.v[i];
            /* left as it was: the same id */
            const walk_row *now = walk_find(&after, 0, b->who);
            if (now && now->id != b->id)
                fail_msg("walk %zu: %s was %lld, is %lld after the resyncs", si, b->who,
                         (long long)b->id, (long long)now->id);
            /* there for the whole walk: seen */
            if (walk_find(&after, b->id, NULL) && !walk_find(&seen, b->id, NULL))
                fail_msg("walk %zu: %s (%lld) never seen", si, b->who, (long long)b->id);
        }
    }
    store_close(r);
    assert_true(step >= 12);
    assert_true(restored >= 8);
    assert_int_equal(edited, 2);
    /* and the store is what one sync of the final files gives */
    tb_spec(f->dir, "walk-clean", clean, sizeof clean);
    walk_sync(clean, f);
    char *want = ts_dump(clean, 200), *got = ts_dump(db, 200);
    assert_string_equal(got, want);
    free(want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(killed_sync_resumes_to_the_same_store, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(six_agents_in_one_directory_are_one_project, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(walk_while_sessions_are_stored_again, setup,
                                        ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
