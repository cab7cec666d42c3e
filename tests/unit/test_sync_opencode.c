/*
 * Tests for OpenCode sessions (src/sync/sync_opencode.c through the folded
 * sync of sync_fold.c): a database built from tests/data/opencode/
 * fixture.sql (WAL mode, two sessions, a sub-agent, tool calls that
 * finished and failed, a failed turn, a row whose data is not JSON)
 * against tests/data/opencode/expected.txt; a row added while another
 * process holds the database open with a write transaction (sync neither
 * waits for it nor sees it, then reads it once committed, appending);
 * changed and deleted rows; the JSON storage tree of OpenCode before 1.2
 * (tests/data/opencode/storage), a part file added, and the database
 * winning over a session it also holds. MCPAGE_UPDATE_GOLDEN=1 rewrites
 * the expected file (review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync.h"

#define SID "ses_4a1b2c3d4e5fKeyset"

typedef struct fx {
    char dir[256];
    char data[300]; /* OpenCode's data directory */
    char ocdb[400]; /* its opencode.db */
    char db[1200];  /* the archive */
} fx;

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    char *err = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sql: %s", err ? err : "?");
    sqlite3_close(h);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "opencode") < 0)
        return -1;
    snprintf(f->data, sizeof f->data, "%s/opencode", f->dir);
    snprintf(f->ocdb, sizeof f->ocdb, "%s/opencode.db", f->data);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", f->data);
    if (system(cmd) != 0)
        return -1;
    char fixture[600];
    snprintf(fixture, sizeof fixture, "%s/opencode/fixture.sql", MCPAGE_TEST_DATA);
    char *sql = ts_read_file(fixture);
    if (!sql)
        return -1;
    exec_sql(f->ocdb, sql);
    free(sql);
    *state = f;
    return 0;
}

static void sync_opencode(fx *f, sync_report *rep)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.opencode_home = f->data, .hostname = "test"};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static void database_syncs_as_expected(void **state)
{
    fx *f = *state;
    char expected[600];
    snprintf(expected, sizeof expected, "%s/opencode/expected.txt", MCPAGE_TEST_DATA);
    sync_report rep;
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 2);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.sessions_added, 2);
    assert_int_equal(rep.messages_added, 12);
    assert_int_equal(rep.lines_malformed, 1); /* prt_a09: its data is not JSON */
    assert_non_null(strstr(rep.examples[0], "opencode.db#" SID ":11: "));

    char *got = ts_dump(f->db, 160);
    assert_non_null(strstr(got, "session " SID " source=opencode project=ledger-api "
                                "title=Keyset pagination for GET /accounts"));
    assert_non_null(strstr(got, "parent=" SID));
    assert_non_null(strstr(got, "tool=bash input=- call=toolu_02Bash err=1"));
    assert_non_null(strstr(got, "[error] APIError: Overloaded"));
    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-opencode-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-opencode-got.txt)", expected);
    }
    free(want);
    free(got);

    /* the raw copy is the rows as JSON Lines */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    unsigned char *raw = NULL;
    size_t n = 0;
    int64_t total = 0;
    assert_int_equal(store_raw_read(s, SID, 0, 64, &raw, &n, &total), 0);
    assert_int_equal(n, 64);
    assert_memory_equal(raw,
                        "{\"table\":\"message\",\"row\":{\"id\":\"msg_a01\",\"session_id\":", 54);
    free(raw);
    store_close(s);

    /* nothing changed: no session rendered */
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_unchanged, 2);
    assert_int_equal(rep.bytes_read, 0);
}

/* The child holds a write transaction with one new part until told. */
static void writer_child(const char *path, int ready_fd, int go_fd)
{
    sqlite3 *h = NULL;
    if (sqlite3_open(path, &h) != SQLITE_OK)
        _exit(3);
    if (sqlite3_exec(
            h,
            "BEGIN IMMEDIATE; INSERT INTO part VALUES ('prt_a11', 'msg_a04', '" SID "', "
            "1764000033000, 1764000033000, '{\"type\":\"text\",\"text\":\"Retrying after "
            "the overload\"}'); UPDATE session SET time_updated = 1764000033000 WHERE id = '" SID
            "';",
            NULL, NULL, NULL) != SQLITE_OK)
        _exit(4);
    char c = 1;
    if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
        _exit(5);
    int rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    _exit(rc == SQLITE_OK ? 0 : 6);
}

static void rows_added_while_opencode_writes(void **state)
{
    fx *f = *state;
    sync_report rep;
    sync_opencode(f, &rep);
    int64_t first = ts_message_id(f->db, SID, 0);
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        writer_child(f->ocdb, ready[1], go[0]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    /* OpenCode is mid-write: sync reads the committed rows, at once */
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.messages_added, 0);
    c = 1;
    assert_int_equal(write(go[1], &c, 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* committed: the new row is appended, the stored ones kept */
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, SID, 0), first);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "Retrying after the overload"));
    free(d);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
}

static void changed_and_deleted_rows(void **state)
{
    fx *f = *state;
    sync_report rep;
    sync_opencode(f, &rep);
    /* a part rewritten in place (same length or not): stored again */
    exec_sql(f->ocdb, "UPDATE part SET data = replace(data, '2 failed', '0 failed'), "
                      "time_updated = 1764000050000 WHERE id = 'prt_a06'");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "Error: 0 failed, 10 passed"));
    assert_null(strstr(d, "Error: 2 failed"));
    free(d);
    /* a reverted turn's rows deleted: the session drops them */
    exec_sql(f->ocdb, "DELETE FROM part WHERE message_id IN ('msg_a03', 'msg_a04'); "
                      "DELETE FROM message WHERE id IN ('msg_a03', 'msg_a04')");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    d = ts_dump(f->db, 80);
    assert_null(strstr(d, "Fix the two tests"));
    free(d);
    /* the session deleted from OpenCode: the archive keeps it */
    exec_sql(f->ocdb, "DELETE FROM part WHERE session_id = '" SID "'; DELETE FROM message WHERE "
                      "session_id = '" SID "'; DELETE FROM session WHERE id = '" SID "'");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "session " SID " source=opencode"));
    free(d);
}

static void json_storage_tree_before_1_2(void **state)
{
    fx *f = *state;
    char tree[700], cmd[1600];
    snprintf(tree, sizeof tree, "%s/opencode/storage", MCPAGE_TEST_DATA);
    snprintf(cmd, sizeof cmd, "rm -f '%s' && cp -r '%s' '%s/storage'", f->ocdb, tree, f->data);
    assert_int_equal(system(cmd), 0);
    sync_report rep;
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 1);
    assert_int_equal(rep.messages_added, 4);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "project pixel-garden /home/ada/src/pixel-garden opencode"));
    assert_non_null(strstr(d, "session ses_old1 source=opencode project=pixel-garden "
                              "title=Why does the sprite flicker on resize?"));
    assert_non_null(strstr(d, "model=gpt-5"));
    assert_non_null(strstr(d, "tool=grep input=on_resize call=call_Grep1 err=0"));
    assert_non_null(strstr(d, "| src/render/sprite.c:88: void on_resize(int w, int h)"));
    free(d);
    int64_t first = ts_message_id(f->db, "ses_old1", 0);

    /* a part file written later: appended */
    char part[900];
    snprintf(part, sizeof part, "%s/storage/part/msg_old2/prt_old4.json", f->data);
    ts_put(part, "w",
           "{\"id\":\"prt_old4\",\"sessionID\":\"ses_old1\",\"messageID\":\"msg_old2\","
           "\"type\":\"text\",\"text\":\"Debounced to 100 ms; no flicker.\"}\n");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "ses_old1", 0), first);
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_unchanged, 1);

    /* OpenCode 1.2 migrated it into its database: the database is read */
    exec_sql(f->ocdb,
             "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, parent_id TEXT, "
             "title TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);"
             "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created "
             "INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);"
             "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT "
             "NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT "
             "NOT NULL);"
             "INSERT INTO session VALUES ('ses_old1', '/home/ada/src/pixel-garden', NULL, "
             "'Sprite flicker', 1759300000000, 1759300090000);"
             "INSERT INTO message VALUES ('msg_old1', 'ses_old1', 1759300001000, 1759300001000, "
             "'{\"role\":\"user\",\"time\":{\"created\":1759300001000}}');"
             "INSERT INTO part VALUES ('prt_old1', 'msg_old1', 'ses_old1', 1759300001000, "
             "1759300001000, '{\"type\":\"text\",\"text\":\"Why does the sprite flicker?\"}');");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 1);
    assert_int_equal(rep.files_reparsed, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "title=Sprite flicker"));
    assert_non_null(strstr(d, "messages=1\n"));
    free(d);
}

/*
 * OpenCode's first storage (before mid-2025): per project under
 * DATA/project/<folder>/storage (or DATA/storage), session/info/<id>.json
 * without a directory, session/message/<id>/ and session/part/<id>/<msg>/;
 * the oldest messages (V1) hold their parts inline with their times in
 * `metadata` (tests/data/opencode/oldest, our own files in those shapes).
 */
static void oldest_storage_layout(void **state)
{
    fx *f = *state;
    char tree[700], cmd[1600];
    snprintf(tree, sizeof tree, "%s/opencode/oldest", MCPAGE_TEST_DATA);
    snprintf(cmd, sizeof cmd, "rm -f '%s' && cp -r '%s'/* '%s'", f->ocdb, tree, f->data);
    assert_int_equal(system(cmd), 0);
    sync_report rep;
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 3);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.lines_malformed, 0);
    assert_int_equal(rep.messages_added, 12);
    char *d = ts_dump(f->db, 80);
    /* the project comes from the assistant's path (V2) or metadata (V1) */
    assert_non_null(strstr(d, "project kiln /home/ada/src/kiln opencode sessions=2 messages=10"));
    assert_non_null(strstr(d, "project notes /home/ada/src/notes opencode sessions=1"));
    /* V1: every inline part, with its message's time */
    assert_non_null(strstr(d, "session ses_first0 source=opencode project=kiln "
                              "title=Why is the kiln build slow? start=2025-06-15T15:06:41.000Z"));
    assert_non_null(strstr(d, "model=claude-sonnet-4"));
    assert_non_null(strstr(d, "0 user 2025-06-15T15:06:41.000Z tool=- input=- call=- err=0 "));
    assert_non_null(strstr(d, "| Why is the kiln build slow? See the profile."));
    assert_non_null(strstr(d, "user 2025-06-15T15:06:41.000Z tool=- input=- call=- err=0 line=1 "
                              "at=0+"));
    assert_non_null(strstr(d, "| [image: image/png]"));
    assert_non_null(strstr(d, "| [thinking] The profile shows the linker."));
    assert_non_null(strstr(d, "assistant 2025-06-15T15:06:42.000Z tool=bash input=make -j1 V=1 | "
                              "tail -3 call=toolu_first_1 err=0"));
    assert_non_null(strstr(d, "tool 2025-06-15T15:07:29.000Z tool=bash input=- "
                              "call=toolu_first_1 err=0"));
    assert_non_null(strstr(d, "| ld: 41 s in LTO"));
    assert_non_null(strstr(d, "| Link-time optimisation takes 41 s"));
    /* V2 messages in the old folders */
    assert_non_null(strstr(d, "tool=edit input=- call=call_edit_1 err=1"));
    assert_non_null(strstr(d, "| The Makefile sets -flto only in CFLAGS_RELEASE now."));
    assert_non_null(strstr(d, "model=gpt-4.1"));
    assert_non_null(strstr(d, "| Outline the release notes for 0.4"));
    free(d);

    /* a part written later is appended; nothing else moves */
    int64_t first = ts_message_id(f->db, "ses_first1", 0);
    char part[900];
    snprintf(part, sizeof part,
             "%s/project/home-ada-src-kiln/storage/session/part/ses_first1/msg_f2/prt_f4.json",
             f->data);
    ts_put(part, "w",
           "{\"id\":\"prt_f4\",\"sessionID\":\"ses_first1\",\"messageID\":\"msg_f2\","
           "\"type\":\"text\",\"text\":\"Rebuilt in 9 s.\"}\n");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "ses_first1", 0), first);
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_unchanged, 3);

    /* a part file holding bytes that are not UTF-8 (Latin-1): read, as U+FFFD */
    snprintf(part, sizeof part,
             "%s/project/home-ada-src-kiln/storage/session/part/ses_first1/msg_f2/prt_f5.json",
             f->data);
    ts_put(part, "w",
           "{\"id\":\"prt_f5\",\"sessionID\":\"ses_first1\",\"messageID\":\"msg_f2\","
           "\"type\":\"text\",\"text\":\"D\xe9j\xe0 fait.\"}\n");
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.messages_added, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "| D\xef\xbf\xbdj\xef\xbf\xbd fait.\n"));
    free(d);

    /* OpenCode copies them to the newer layout on upgrade: read there once */
    snprintf(
        cmd, sizeof cmd,
        "set -e; cd '%s'; mkdir -p storage/session/prj_kiln storage/message/ses_first1 "
        "storage/part/msg_f1; cp project/home-ada-src-kiln/storage/session/info/ses_first1.json "
        "storage/session/prj_kiln/; cp project/home-ada-src-kiln/storage/session/message/"
        "ses_first1/msg_f1.json storage/message/ses_first1/; cp project/home-ada-src-kiln/"
        "storage/session/part/ses_first1/msg_f1/prt_f1.json storage/part/msg_f1/",
        f->data);
    assert_int_equal(system(cmd), 0);
    sync_opencode(f, &rep);
    assert_int_equal(rep.files_seen, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(database_syncs_as_expected, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(rows_added_while_opencode_writes, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(changed_and_deleted_rows, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(json_storage_tree_before_1_2, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(oldest_storage_layout, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
