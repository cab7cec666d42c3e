/*
 * Tests for the one way sync opens what an agent's folder holds
 * (src/sync/sync_source.c), on real files made here: a link out of the
 * home is refused, a FIFO is named and skipped without blocking, a device
 * and a too-large file are refused, a view or a virtual table is not a
 * table, a database another process holds locked is "busy", a recursive
 * view is interrupted by the step budget, and warnings keep their control
 * bytes escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "support/sync_support.h"
#include "page/term.h"
#include "sync/sync_source.h"

typedef struct fx {
    char dir[256];   /* the fixture folder (first: ts_fixture_drop removes it) */
    char home[300];  /* an agent's home inside it */
    char other[300]; /* a folder beside the home */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "source") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/home", f->dir);
    snprintf(f->other, sizeof f->other, "%s/other", f->dir);
    if (mkdir(f->home, 0700) < 0 || mkdir(f->other, 0700) < 0)
        return -1;
    sync__source_busy_ms = 0;
    sync__source_db_steps = 0;
    *state = f;
    /* a test that blocks fails here instead of hanging the suite */
    alarm(60);
    return 0;
}

static int teardown(void **state)
{
    alarm(0);
    sync__source_busy_ms = 0;
    sync__source_db_steps = 0;
    return ts_fixture_drop(state);
}

static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

static void a_regular_file_inside_opens_and_reads(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "s.jsonl");
    ts_put(p, "w", "{\"a\":1}\n");
    struct stat sb;
    int fd = sync_source_open(f->home, p, 0, &sb, why, sizeof why);
    assert_true(fd >= 0);
    assert_int_equal(sb.st_size, 8);
    close(fd);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sync_source_read(f->home, p, 8, &text, &len, why, sizeof why), 0);
    assert_int_equal(len, 8);
    assert_string_equal(text, "{\"a\":1}\n");
    free(text);
    /* a link that stays inside the home is followed */
    char l[600];
    path_in(l, sizeof l, f->home, "link.jsonl");
    assert_int_equal(symlink(p, l), 0);
    assert_int_equal(sync_source_read(f->home, l, 0, &text, &len, why, sizeof why), 0);
    assert_int_equal(len, 8);
    free(text);
}

static void a_link_out_of_the_home_is_refused(void **state)
{
    fx *f = *state;
    char target[600], l[600], why[300] = "";
    path_in(target, sizeof target, f->other, "secret");
    ts_put(target, "w", "root:x:0:0\n");
    path_in(l, sizeof l, f->home, "session.jsonl");
    assert_int_equal(symlink(target, l), 0);
    struct stat sb;
    assert_int_equal(sync_source_open(f->home, l, 0, &sb, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "outside"));
    assert_non_null(strstr(why, "other/secret"));
    /* a folder on the way that leads out counts the same */
    char dl[600], via[700];
    path_in(dl, sizeof dl, f->home, "chats");
    assert_int_equal(symlink(f->other, dl), 0);
    snprintf(via, sizeof via, "%s/secret", dl);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sync_source_read(f->home, via, 0, &text, &len, why, sizeof why),
                     MCPAGE_EINVAL);
    assert_null(text);
    /* /etc/passwd itself, named directly */
    assert_int_equal(sync_source_open(f->home, "/etc/passwd", 0, &sb, why, sizeof why),
                     MCPAGE_EINVAL);
}

static void a_fifo_is_named_and_never_blocks(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "opencode.db");
    assert_int_equal(mkfifo(p, 0600), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct stat sb;
    assert_int_equal(sync_source_open(f->home, p, 0, &sb, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "a FIFO"));
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sync_source_read(f->home, p, 0, &text, &len, why, sizeof why), MCPAGE_EINVAL);
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), MCPAGE_EINVAL);
    assert_null(db);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 5);
}

static void a_device_is_refused(void **state)
{
    fx *f = *state;
    char why[300] = "", l[600];
    struct stat sb;
    /* a home of "/" holds /dev/null: still not a regular file */
    assert_int_equal(sync_source_open("/", "/dev/null", 0, &sb, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "character device"));
    /* a link to it from an agent's folder leads out */
    path_in(l, sizeof l, f->home, "workspace.yaml");
    assert_int_equal(symlink("/dev/zero", l), 0);
    assert_int_equal(sync_source_open(f->home, l, 0, &sb, why, sizeof why), MCPAGE_EINVAL);
}

static void a_file_over_its_budget_is_refused_and_a_gone_one_is_not_found(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "big.json");
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    for (int i = 0; i < 1000; i++)
        fputs("0123456789", fp);
    fclose(fp);
    struct stat sb;
    assert_int_equal(sync_source_open(f->home, p, 9999, &sb, why, sizeof why), MCPAGE_ERANGE);
    assert_non_null(strstr(why, "10000 bytes"));
    int fd = sync_source_open(f->home, p, 10000, &sb, why, sizeof why);
    assert_true(fd >= 0);
    close(fd);
    path_in(p, sizeof p, f->home, "gone.json");
    assert_int_equal(sync_source_open(f->home, p, 0, &sb, why, sizeof why), MCPAGE_ENOTFOUND);
}

static sqlite3 *make_db(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fail_msg("%s", err);
    return db;
}

static void a_view_or_a_missing_column_is_not_the_table_read(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "opencode.db");
    sqlite3_close(make_db(p, "CREATE TABLE real_t(id TEXT PRIMARY KEY, data TEXT);"
                             "CREATE TABLE message_base(id TEXT, data TEXT);"
                             "CREATE VIEW message AS SELECT * FROM message_base;"
                             "CREATE VIRTUAL TABLE part USING fts5(id, data);"
                             "CREATE TABLE gen(id TEXT, data TEXT AS (id || id));"));
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), 0);
    static const char *const cols[] = {"id", "data", NULL};
    assert_int_equal(sync_source_db_table(db, "real_t", cols, why, sizeof why), 0);
    assert_int_equal(sync_source_db_table(db, "REAL_T", cols, why, sizeof why), 0);
    assert_int_equal(sync_source_db_table(db, "message", cols, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "view"));
    assert_int_equal(sync_source_db_table(db, "part", cols, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "virtual"));
    assert_int_equal(sync_source_db_table(db, "session", cols, why, sizeof why), MCPAGE_EINVAL);
    assert_string_equal(why, "no table \"session\"");
    static const char *const more[] = {"id", "time_updated", NULL};
    assert_int_equal(sync_source_db_table(db, "real_t", more, why, sizeof why), MCPAGE_EINVAL);
    assert_string_equal(why, "table \"real_t\" has no column \"time_updated\"");
    assert_int_equal(sync_source_db_table(db, "gen", cols, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "generated"));
    /* read-only: a write fails */
    assert_int_not_equal(sqlite3_exec(db, "INSERT INTO real_t VALUES('a','b')", NULL, NULL, NULL),
                         SQLITE_OK);
    sqlite3_close(db);
}

static void a_file_that_is_no_database_is_a_parse_error(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "store.db");
    ts_put(p, "w", "this is not a database, but it is long enough to have a header.........\n");
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), MCPAGE_EPARSE);
    assert_null(db);
}

static void a_wal_beside_the_database_is_checked_too(void **state)
{
    fx *f = *state;
    char p[600], wal[700], why[300] = "";
    path_in(p, sizeof p, f->home, "store.db");
    sqlite3_close(make_db(p, "CREATE TABLE blobs(id TEXT, data BLOB);"));
    snprintf(wal, sizeof wal, "%s-wal", p);
    assert_int_equal(mkfifo(wal, 0600), 0);
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "wal file: a FIFO"));
    unlink(wal);
    char target[600];
    path_in(target, sizeof target, f->other, "x-wal");
    ts_put(target, "w", "");
    assert_int_equal(symlink(target, wal), 0);
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), MCPAGE_EINVAL);
    assert_non_null(strstr(why, "outside"));
}

static void a_database_locked_by_another_process_is_busy(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "opencode.db");
    sqlite3_close(make_db(p, "CREATE TABLE session(id TEXT); INSERT INTO session VALUES('s');"));
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sqlite3 *w = NULL;
        char c = 0;
        if (sqlite3_open(p, &w) != SQLITE_OK ||
            sqlite3_exec(w, "BEGIN EXCLUSIVE; INSERT INTO session VALUES('t');", NULL, NULL,
                         NULL) != SQLITE_OK)
            _exit(1);
        if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) != 1)
            _exit(2);
        sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w);
        _exit(0);
    }
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    sync__source_busy_ms = 100;
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), MCPAGE_ESTATE);
    assert_string_equal(why, "busy, skipped, retried on the next sync");
    assert_null(db);
    assert_int_equal(write(done[1], "d", 1), 1);
    int status = -1;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* once the lock is gone it opens */
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), 0);
    sqlite3_close(db);
    close(ready[0]);
    close(ready[1]);
    close(done[0]);
    close(done[1]);
}

static int step_all(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = SQLITE_OK;
    sqlite3_finalize(st);
    return rc;
}

static void a_recursive_view_is_interrupted_not_run_forever(void **state)
{
    fx *f = *state;
    char p[600], why[300] = "";
    path_in(p, sizeof p, f->home, "opencode.db");
    sqlite3_close(make_db(p, "CREATE VIEW message AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                             "SELECT x + 1 FROM c) SELECT x AS id, '' AS data FROM c;"
                             "CREATE TABLE part(id TEXT, data TEXT);"
                             "INSERT INTO part VALUES('p1', '{}');"));
    sync__source_db_steps = 5 * 1000 * 1000;
    sqlite3 *db = NULL;
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = step_all(db, "SELECT count(*) FROM message");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(rc, SQLITE_INTERRUPT);
    assert_int_equal(sync_source_db_status(rc), MCPAGE_ERANGE);
    assert_non_null(strstr(sync_source_db_error(db, rc), "step budget"));
    assert_true(t1.tv_sec - t0.tv_sec < 10);
    /* the default budget of a small file stops it as well, in about a second */
    sync__source_db_steps = 0;
    sqlite3_close(db);
    assert_int_equal(sync_source_db_open(f->home, p, &db, why, sizeof why), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = step_all(db, "SELECT count(*) FROM message");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(rc, SQLITE_INTERRUPT);
    assert_true(t1.tv_sec - t0.tv_sec < 20);
    /* the budget is per statement: the next one runs */
    assert_int_equal(step_all(db, "SELECT * FROM part"), SQLITE_DONE);
    /* and each statement of a loop gets its own (a reused statement too) */
    for (int i = 0; i < 3; i++)
        assert_int_equal(step_all(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                      "FROM c WHERE x < 20000) SELECT count(*) FROM c"),
                         SQLITE_DONE);
    sqlite3_close(db);
}

static void warnings_are_counted_and_escaped(void **state)
{
    (void)state;
    sync_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    sync_warn(rep, "gemini", "/h/.gemini/tmp/\x1b[31mred\x1b[0m/.project_root", 0,
              "a FIFO, not a regular file: skipped");
    assert_int_equal(rep->warnings, 1);
    assert_int_equal(rep->nwarnings, 1);
    assert_string_equal(rep->warning_list[0], "gemini: /h/.gemini/tmp/\\e[31mred\\e[0m/"
                                              ".project_root: a FIFO, not a regular file: skipped");
    /* C1 controls, bytes that are not UTF-8, a line number; UTF-8 kept */
    sync_warn(rep, "opencode",
              "/h/caf\xc3\xa9\xc2\x9b"
              "2J\xff",
              7, "bell\a");
    assert_string_equal(rep->warning_list[1], "opencode: /h/caf\xc3\xa9\\u009B2J\\xFF:7: bell^G");
    for (int i = 0; i < 100; i++)
        sync_warn(rep, "cursor", "/x", 0, "y");
    assert_int_equal(rep->warnings, 102);
    assert_int_equal(rep->nwarnings, SYNC_WARNINGS_MAX);
    /* a path too long keeps its end, the file's name */
    char longp[3000];
    memset(longp, 'a', sizeof longp);
    snprintf(longp + 2900, 100, "/the-file.jsonl");
    memset(rep, 0, sizeof *rep);
    sync_warn(rep, "claude", longp, 0, "why");
    assert_non_null(strstr(rep->warning_list[0], "...aaa"));
    assert_non_null(strstr(rep->warning_list[0], "/the-file.jsonl: why"));
    free(rep);
    /* an escape is never cut in half */
    char small[4];
    assert_int_equal(text_term_escape(small, sizeof small, "ab\x1b", 3), 2);
    assert_string_equal(small, "ab");
}

static void a_table_cell_is_cut_between_characters(void **state)
{
    (void)state;
    char cell[64];
    /* 9 characters, not 9 bytes: the cut falls after the "é", not inside it */
    assert_string_equal(text_term_cell(cell, sizeof cell, "ventes-r\xc3\xa9gion", 9),
                        "ventes-r\xc3\xa9");
    assert_string_equal(text_term_cell(cell, sizeof cell, "ab", 4), "ab  ");
    assert_string_equal(text_term_cell(cell, sizeof cell, NULL, 2), "  ");
    /* a buffer too small for the character ends before it */
    char tiny[4];
    assert_string_equal(text_term_cell(tiny, sizeof tiny, "ab\xe2\x82\xac", 3), "ab ");
}

static void an_id_map_holds_many_ids_in_constant_time(void **state)
{
    (void)state;
    sync_idmap m = {0};
    char id[32];
    for (long i = 0; i < 200000; i++) {
        snprintf(id, sizeof id, "msg-%ld", i);
        assert_int_equal(sync_idmap_put(&m, id, i), 0);
    }
    assert_int_equal(m.n, 200000);
    assert_int_equal(sync_idmap_get(&m, "msg-123456"), 123456);
    assert_int_equal(sync_idmap_get(&m, "msg-200000"), -1);
    assert_int_equal(sync_idmap_put(&m, "msg-5", 77), 0);
    assert_int_equal(sync_idmap_get(&m, "msg-5"), 77);
    assert_int_equal(m.n, 200000);
    assert_int_equal(sync_idmap_add(&m, "msg-5"), 0);
    assert_int_equal(sync_idmap_add(&m, "new"), 1);
    sync_idmap_free(&m);
    assert_int_equal(sync_idmap_get(&m, "new"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_regular_file_inside_opens_and_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(a_link_out_of_the_home_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_fifo_is_named_and_never_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(a_device_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_file_over_its_budget_is_refused_and_a_gone_one_is_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(a_view_or_a_missing_column_is_not_the_table_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_file_that_is_no_database_is_a_parse_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_wal_beside_the_database_is_checked_too, setup, teardown),
        cmocka_unit_test_setup_teardown(a_database_locked_by_another_process_is_busy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_recursive_view_is_interrupted_not_run_forever, setup,
                                        teardown),
        cmocka_unit_test(warnings_are_counted_and_escaped),
        cmocka_unit_test(a_table_cell_is_cut_between_characters),
        cmocka_unit_test(an_id_map_holds_many_ids_in_constant_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
