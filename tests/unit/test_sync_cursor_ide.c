/*
 * Tests for Cursor's editor (src/sync/sync_cursor_ide.c through the folded
 * sync of sync_fold.c, as the built-in description "cursor-ide" names it):
 * the hand-written sample (examples/archive/cursor-ide) syncs as
 * tests/data/sources/cursor-ide.expected and a second sync of it opens no
 * database; state.vscdb files built here in both shapes (headers-only with
 * bubble rows; an older inline conversation array) read as the messages
 * they hold, project from the workspace mapping, and the chat panel
 * before composers (a workspace's ItemTable tabs); a bubble added while
 * another connection holds the database open in WAL mode (and while it
 * holds an uncommitted write) is appended, the composer beside it not read
 * again, the earlier messages keeping their ids; a locked database and a
 * file that is no database are named warnings that never stop the sync;
 * the bubble mapping of every kind of bubble; and the editor's database is
 * never written. MCPAGE_UPDATE_GOLDEN=1 rewrites the expected file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync_cursor_ide.h"
#include "sync/sync_desc.h"
#include "sync/sync_source.h"

#define CA "0f4c2a1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b" /* headers-only */
#define CB "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d" /* inline conversation */

typedef struct fx {
    char dir[256];
    char home[300];   /* a Cursor config folder (~/.config/Cursor) */
    char global[700]; /* its User/globalStorage/state.vscdb */
    char wsdir[700];  /* one workspace folder under User/workspaceStorage */
    char db[1200];    /* the archive */
    sync_descs descs;
} fx;

static void exec_sql(sqlite3 *h, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sql: %s", err ? err : "?");
}

static void put_kv(sqlite3 *h, const char *table, const char *key, const char *value)
{
    char sql[100];
    snprintf(sql, sizeof sql, "INSERT INTO %s(key, value) VALUES(?1, ?2)", table);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

static const char *const kv_schema =
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);";

/* The header of composer A naming bubbles a1..a<n>. */
static void put_header_a(sqlite3 *h, int n)
{
    char hdr[2000];
    int k = snprintf(hdr, sizeof hdr,
                     "{\"_v\":10,\"composerId\":\"" CA "\",\"name\":\"Flaky retry test\","
                     "\"createdAt\":1767225600000,\"lastUpdatedAt\":%d,\"status\":\"completed\","
                     "\"modelConfig\":{\"modelName\":\"gpt-5-codex\",\"maxMode\":false},"
                     "\"blobEncryptionKey\":\"S3CRETKEYVALUE\",\"fullConversationHeadersOnly\":[",
                     1000 + n);
    for (int i = 1; i <= n; i++)
        k += snprintf(hdr + k, sizeof hdr - (size_t)k, "%s{\"bubbleId\":\"a%d\",\"type\":%d}",
                      i > 1 ? "," : "", i, i % 2 ? 1 : 2);
    snprintf(hdr + k, sizeof hdr - (size_t)k, "]}");
    put_kv(h, "cursorDiskKV", "composerData:" CA, hdr);
}

static const char *const bubbles_a[] = {
    "{\"_v\":3,\"type\":1,\"bubbleId\":\"a1\",\"text\":\"Why does test_retry fail one run in "
    "ten?\",\"createdAt\":\"2026-01-01T00:00:05.000Z\",\"modelInfo\":{\"modelName\":"
    "\"gpt-5-codex\"}}",
    "{\"_v\":3,\"type\":2,\"bubbleId\":\"a2\",\"text\":\"It sleeps on the wall clock.\","
    "\"thinking\":{\"text\":\"The backoff uses time.time().\"},\"toolFormerData\":{\"name\":"
    "\"grep_search\",\"toolCallId\":\"call_g1\",\"status\":\"completed\",\"params\":"
    "\"{\\\"query\\\":\\\"time.time\\\"}\",\"result\":\"retry.py:12: t = time.time()\"},"
    "\"tokenCount\":{\"inputTokens\":900,\"outputTokens\":40},\"createdAt\":"
    "\"2026-01-01T00:00:09.000Z\"}",
    "{\"_v\":3,\"type\":1,\"bubbleId\":\"a3\",\"text\":\"Use a fake clock.\"}",
    "{\"_v\":3,\"type\":2,\"bubbleId\":\"a4\",\"text\":\"\",\"toolFormerData\":{\"name\":"
    "\"run_terminal_cmd\",\"toolCallId\":\"call_r2\",\"status\":\"error\",\"params\":{"
    "\"command\":\"pytest -q tests/test_retry.py\"},\"result\":\"{\\\"output\\\":\\\"1 "
    "failed\\\",\\\"exitCode\\\":1}\"},\"timingInfo\":{\"clientStartTime\":5123.5,"
    "\"clientRpcSendTime\":1767225660000}}",
};

static void put_bubble_a(sqlite3 *h, int i)
{
    char key[200];
    snprintf(key, sizeof key, "bubbleId:" CA ":a%d", i);
    put_kv(h, "cursorDiskKV", key, bubbles_a[i - 1]);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "cursoride") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/Cursor", f->dir);
    snprintf(f->global, sizeof f->global, "%s/User/globalStorage", f->home);
    snprintf(f->wsdir, sizeof f->wsdir, "%s/User/workspaceStorage/9a0364b9e99bb480dd25e1f0284c8555",
             f->home);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s'", f->global, f->wsdir);
    if (system(cmd) != 0)
        return -1;
    strncat(f->global, "/state.vscdb", sizeof f->global - strlen(f->global) - 1);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char err[700] = "";
    if (sync_descs_parse(&f->descs, sync__builtin_sources, strlen(sync__builtin_sources),
                         "built-in", err, sizeof err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sync_descs_free(&f->descs);
    return ts_fixture_drop(state);
}

/* The editor's databases in both shapes: composer A headers-only with its
 * first `n` bubbles, composer B an inline conversation; the workspace
 * folder maps A to its project, B names its own. WAL, as Cursor keeps it. */
static void write_editor(const fx *f, int n)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->global, &h), SQLITE_OK);
    exec_sql(h, "PRAGMA journal_mode=WAL");
    exec_sql(h, kv_schema);
    put_kv(h, "ItemTable", "cursorAuth/accessToken", "never-read");
    put_header_a(h, n);
    for (int i = 1; i <= n; i++)
        put_bubble_a(h, i);
    put_kv(h, "cursorDiskKV", "composerData:" CB,
           "{\"_v\":3,\"composerId\":\"" CB "\",\"name\":\"Rename the CLI\",\"createdAt\":"
           "1764547200000,\"modelConfig\":{\"modelName\":\"default\"},\"workspaceIdentifier\":{"
           "\"uri\":{\"fsPath\":\"/srv/tools/clí\",\"scheme\":\"file\"}},\"conversation\":["
           "{\"type\":1,\"bubbleId\":\"b1\",\"text\":\"Rename mk to mkx everywhere.\"},"
           "{\"type\":2,\"bubbleId\":\"b2\",\"text\":\"\",\"codeBlocks\":[{\"content\":\"sed -i "
           "s/mk/mkx/g bin/*\"}]},"
           "{\"type\":2,\"bubbleId\":\"b3\",\"text\":\"Done in 4 files.\"}]}");
    sqlite3_close(h);

    char path[800];
    snprintf(path, sizeof path, "%s/workspace.json", f->wsdir);
    ts_put(path, "w", "{\"folder\":\"file:///home/eve/src/retry%20lib\"}\n");
    snprintf(path, sizeof path, "%s/state.vscdb", f->wsdir);
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    exec_sql(h, kv_schema);
    put_kv(h, "ItemTable", "composer.composerData",
           "{\"allComposers\":[{\"composerId\":\"" CA "\",\"name\":\"Flaky retry test\"}],"
           "\"selectedComposerId\":\"" CA "\"}");
    sqlite3_close(h);
}

static void sync_ide(const fx *f, const char *home, sync_report *rep)
{
    const sync_desc *d = sync_descs_find(&f->descs, "cursor-ide");
    assert_non_null(d);
    assert_string_equal(d->writes, "cursor-ide");
    sync_described one = {.desc = d, .home = home};
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.hostname = "test", .described = &one, .ndescribed = 1};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static const sync_source_report *source_of(const sync_report *rep)
{
    for (int i = 0; i < rep->nsources; i++)
        if (strcmp(rep->sources[i].name, "cursor-ide") == 0)
            return &rep->sources[i];
    fail_msg("no report for cursor-ide");
    return NULL;
}

/* The session's raw copy as text (malloc'd). */
static char *raw_of(const fx *f, const char *sid)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    unsigned char *raw = NULL;
    size_t n = 0;
    int64_t total = 0;
    assert_int_equal(store_raw_read(s, sid, 0, 1 << 20, &raw, &n, &total), 0);
    store_close(s);
    char *t = malloc(n + 1);
    assert_non_null(t);
    memcpy(t, raw, n);
    t[n] = 0;
    free(raw);
    return t;
}

/* ---- the sample ---------------------------------------------------------- */

static void sample_is_golden(void **state)
{
    fx *f = *state;
    char home[600], expected[600];
    snprintf(home, sizeof home, "%s/examples/archive/cursor-ide", MCPAGE_SOURCE_DIR);
    snprintf(expected, sizeof expected, "%s/sources/cursor-ide.expected", MCPAGE_TEST_DATA);
    sync_report rep;
    sync_ide(f, home, &rep);
    const sync_source_report *sr = source_of(&rep);
    assert_int_equal(sr->found, 1);
    /* two composers and a chat panel tab; the draft, the bad key and the
       empty tab are no sessions */
    assert_int_equal(sr->files, 3);
    assert_int_equal(sr->files_failed, 0);
    assert_int_equal(sr->sessions_added, 3);
    assert_int_equal(sr->messages_added, 17);
    assert_int_equal(rep.lines_malformed, 1); /* the bubble the headers name, missing */
    assert_non_null(strstr(sr->warning, ":a5: named by the composer's headers but missing"));
    char *got = ts_dump(f->db, 160);
    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-sources-cursor-ide-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-sources-cursor-ide-got.txt)",
                 expected);
    }
    free(want);
    /* the workspace database names the first composer's project; the
       second names its own; the failed command is an error */
    assert_non_null(strstr(got, "source=cursor-ide project=ledger-api title=Banker's rounding"));
    assert_non_null(strstr(got, "source=cursor-ide project=pixel-garden title=Tile palette"));
    assert_non_null(strstr(got, "tool=run_terminal_cmd input=- call=toolu_run_2 err=1"));
    assert_non_null(strstr(got, "tool=tool-7 input="));
    /* the chat panel before composers: its tab, its project, its time */
    assert_non_null(strstr(got, "session cursor-ide:panel-7e2d9c4b-0a1f-4c3e-9b8d-6f5e4d3c2b1a "
                                "source=cursor-ide project=ledger-api title=Why is the ledger CSV "
                                "export slow? start=2025-11-05T15:00:00.000Z"));
    assert_non_null(strstr(got, "1 assistant 2025-11-05T15:00:00.000Z tool=- input=- call=- "
                                "err=0 line=3"));
    char *raw = raw_of(f, "cursor-ide:4b7e2c1a-9d3f-4e8b-a6c5-2f1d0e9b8a71");
    assert_non_null(strstr(raw, "\"modelName\":\"claude-4.5-sonnet\""));
    assert_null(strstr(raw, "c2VjcmV0")); /* blobEncryptionKey: never stored */
    assert_null(strstr(raw, "bm90LXN0"));
    assert_null(strstr(raw, "lastUpdatedAt"));
    free(raw);

    /* unchanged: the database is not even opened (no job at all) */
    sync_ide(f, home, &rep);
    assert_int_equal(rep.files_seen, 0);
    assert_int_equal(rep.messages_added, 0);
    assert_int_equal(rep.lines_malformed, 0);
    char *again = ts_dump(f->db, 160);
    assert_string_equal(again, got);
    free(again);
    free(got);
}

/* ---- both shapes, built here ---------------------------------------------- */

static void both_shapes_read(void **state)
{
    fx *f = *state;
    write_editor(f, 4);
    struct stat before;
    assert_int_equal(stat(f->global, &before), 0);
    sync_report rep;
    sync_ide(f, f->home, &rep);
    const sync_source_report *sr = source_of(&rep);
    assert_int_equal(sr->files, 2);
    assert_int_equal(sr->warnings, 0);
    assert_int_equal(rep.lines_malformed, 0);
    assert_int_equal(rep.messages_added, 10);
    char *d = ts_dump(f->db, 120);
    /* headers-only: the project from workspace.json (percent-decoded) */
    assert_non_null(strstr(d, "project retry lib /home/eve/src/retry lib cursor-ide sessions=1 "
                              "messages=7"));
    assert_non_null(strstr(d, "session cursor-ide:" CA " source=cursor-ide project=retry lib "
                              "title=Flaky retry test"));
    assert_non_null(strstr(d, "model=gpt-5-codex"));
    assert_non_null(strstr(d, "0 user 2026-01-01T00:00:05.000Z tool=- input=- call=- err=0"));
    assert_non_null(strstr(d, "| [thinking] The backoff uses time.time().\\nIt sleeps on the "
                              "wall clock.\n"));
    assert_non_null(strstr(d, "2 assistant 2026-01-01T00:00:09.000Z tool=grep_search "
                              "input=time.time call=call_g1 err=0"));
    assert_non_null(strstr(d, "3 tool 2026-01-01T00:00:09.000Z tool=grep_search input=- "
                              "call=call_g1 err=0"));
    assert_non_null(strstr(d, "| retry.py:12: t = time.time()\n"));
    /* a prompt without a time: the time of the message before it */
    assert_non_null(strstr(d, "4 user 2026-01-01T00:00:09.000Z"));
    /* a failed command, its time from timingInfo's wall clock */
    assert_non_null(strstr(d, "5 assistant 2026-01-01T00:01:00.000Z tool=run_terminal_cmd "
                              "input=pytest -q tests/test_retry.py call=call_r2 err=0"));
    assert_non_null(strstr(d, "6 tool 2026-01-01T00:01:00.000Z tool=run_terminal_cmd input=- "
                              "call=call_r2 err=1"));
    /* inline conversation: no times of its own, so the composer's; the
       project named by the header; a "default" model is no model */
    assert_non_null(strstr(d, "session cursor-ide:" CB " source=cursor-ide project=clí "
                              "title=Rename the CLI start=2025-12-01T00:00:00.000Z"));
    assert_non_null(strstr(d, "0 user 2025-12-01T00:00:00.000Z"));
    assert_non_null(strstr(d, "| Rename mk to mkx everywhere.\n"));
    assert_non_null(strstr(d, "| sed -i s/mk/mkx/g bin/*\n"));
    assert_non_null(strstr(d, "| Done in 4 files.\n"));
    free(d);
    char *raw = raw_of(f, "cursor-ide:" CA);
    assert_null(strstr(raw, "S3CRETKEYVALUE"));
    assert_non_null(strstr(raw, "\"table\":\"cursorDiskKV\",\"key\":\"bubbleId:" CA ":a2\""));
    free(raw);
    /* the editor's database is left as it was */
    struct stat after;
    assert_int_equal(stat(f->global, &after), 0);
    assert_int_equal(after.st_size, before.st_size);
    assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

/* ---- incremental ---------------------------------------------------------- */

static void bubble_added_under_an_open_writer(void **state)
{
    fx *f = *state;
    write_editor(f, 3);
    sync_report rep;
    sync_ide(f, f->home, &rep);
    assert_int_equal(rep.messages_added, 8);
    int64_t first = ts_message_id(f->db, "cursor-ide:" CA, 0);
    int64_t third = ts_message_id(f->db, "cursor-ide:" CA, 4);
    assert_true(first > 0 && third > first);

    /* Cursor holds the database open (WAL) and writes the next bubble in a
       transaction it has not committed */
    sqlite3 *w = NULL;
    assert_int_equal(sqlite3_open(f->global, &w), SQLITE_OK);
    exec_sql(w, "PRAGMA journal_mode=WAL");
    exec_sql(w, "BEGIN IMMEDIATE");
    put_bubble_a(w, 4);
    put_header_a(w, 4);
    sync_ide(f, f->home, &rep); /* the committed state, without waiting */
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.warnings, 0);
    assert_int_equal(rep.messages_added, 0);
    exec_sql(w, "COMMIT");

    /* committed, the connection still open: the new bubble is appended and
       the other composer is not read again */
    sync_ide(f, f->home, &rep);
    assert_int_equal(rep.files_seen, 2);
    assert_int_equal(rep.files_unchanged, 1);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 2);
    assert_int_equal(ts_message_id(f->db, "cursor-ide:" CA, 0), first);
    assert_int_equal(ts_message_id(f->db, "cursor-ide:" CA, 4), third);
    char *d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "6 tool 2026-01-01T00:01:00.000Z tool=run_terminal_cmd input=- "
                              "call=call_r2 err=1"));
    free(d);

    /* the same again: a stat, no job */
    sync_ide(f, f->home, &rep);
    assert_int_equal(rep.files_seen, 0);

    /* renamed: the header's facts change, the session is stored again with
       its messages' ids kept */
    exec_sql(w, "UPDATE cursorDiskKV SET value = replace(value, 'Flaky retry test', "
                "'Fake clock for retries') WHERE key = 'composerData:" CA "'");
    sqlite3_close(w);
    sync_ide(f, f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    assert_int_equal(ts_message_id(f->db, "cursor-ide:" CA, 0), first);
    d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "title=Fake clock for retries"));
    assert_non_null(strstr(d, "messages=7"));
    free(d);
}

/* ---- hostile databases ----------------------------------------------------- */

static void locked_and_damaged_databases_are_warnings(void **state)
{
    fx *f = *state;
    write_editor(f, 2);
    /* another process holds the database's write lock, journal mode */
    sqlite3 *w = NULL;
    assert_int_equal(sqlite3_open(f->global, &w), SQLITE_OK);
    exec_sql(w, "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE;"
                "INSERT INTO ItemTable VALUES('held', 'x')");
    sync__source_busy_ms = 50;
    sync_report rep;
    sync_ide(f, f->home, &rep);
    const sync_source_report *sr = source_of(&rep);
    assert_int_equal(sr->warnings, 1);
    assert_non_null(strstr(sr->warning, "state.vscdb"));
    assert_non_null(strstr(sr->warning, "busy"));
    assert_int_equal(rep.messages_added, 0);
    exec_sql(w, "ROLLBACK");
    sqlite3_close(w);
    /* the lock gone: read, as nothing recorded it as read */
    sync_ide(f, f->home, &rep);
    assert_int_equal(source_of(&rep)->warnings, 0);
    assert_int_equal(rep.messages_added, 7);
    sync__source_busy_ms = 0;

    /* a file that is not a database: named, the sync goes on */
    ts_put(f->global, "w", "this is not a SQLite database, it is text\n");
    char wal[800];
    snprintf(wal, sizeof wal, "%s-wal", f->global);
    unlink(wal);
    sync_ide(f, f->home, &rep);
    sr = source_of(&rep);
    assert_int_equal(sr->warnings, 1);
    assert_non_null(strstr(sr->warning, "state.vscdb"));
    assert_int_equal(rep.messages_added, 0);
}

/* Keys and values that are no composers: skipped, never a crash. */
static void odd_rows_are_skipped(void **state)
{
    fx *f = *state;
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->global, &h), SQLITE_OK);
    exec_sql(h, kv_schema);
    put_kv(h, "cursorDiskKV", "composerData:../../x",
           "{\"conversation\":[{\"type\":1,\"text\":"
           "\"x\"}]}");
    put_kv(h, "cursorDiskKV", "composerData:nul", "null");
    put_kv(h, "cursorDiskKV", "composerData:arr", "[1,2]");
    put_kv(h, "cursorDiskKV", "composerData:bad", "{not json");
    put_kv(h, "cursorDiskKV", "composerData:hdr",
           "{\"createdAt\":\"yesterday\",\"fullConversationHeadersOnly\":[{\"bubbleId\":"
           "\"../x\"},{\"bubbleId\":7},{\"bubbleId\":\"ok\",\"type\":\"weird\"},{\"bubbleId\":"
           "\"ok\"},{\"bubbleId\":\"arr\"}]}");
    put_kv(h, "cursorDiskKV", "bubbleId:hdr:ok", "{\"type\":2,\"text\":\"kept once\"}");
    put_kv(h, "cursorDiskKV", "bubbleId:hdr:arr", "[\"not\",\"a\",\"bubble\"]");
    sqlite3_close(h);
    sync_report rep;
    sync_ide(f, f->home, &rep);
    assert_int_equal(source_of(&rep)->files, 1);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.messages_added, 1);
    char *d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "| kept once\n"));
    free(d);
}

/* ---- the bubble mapping --------------------------------------------------- */

static size_t map(const char *json, json_int_t header_type, sync_record r[3])
{
    memset(r, 0, 3 * sizeof *r);
    json_t *b = json_loads(json, 0, NULL);
    assert_non_null(b);
    size_t k = sync__cursor_ide_bubble(b, header_type, "bid", "2026-02-02T02:02:02.000Z", r);
    json_decref(b);
    return k;
}

static void drop(sync_record r[3], size_t k)
{
    for (size_t i = 0; i < k; i++)
        sync_record_clear(&r[i]);
}

static void bubble_kinds_map(void **state)
{
    (void)state;
    sync_record r[3];
    /* the oldest chat panel's roles ("user" | "ai") */
    size_t k = map("{\"type\":\"ai\",\"text\":\"Sure.\",\"modelType\":\"gpt-4\"}", 0, r);
    assert_int_equal(k, 1);
    assert_string_equal(r[0].role, "assistant");
    assert_string_equal(r[0].text, "Sure.");
    assert_string_equal(r[0].model, "gpt-4");
    assert_string_equal(r[0].timestamp, "2026-02-02T02:02:02.000Z");
    drop(r, k);
    /* no type of its own: the header's; ms times */
    k = map("{\"text\":\"hello\",\"createdAt\":1767225600000}", 1, r);
    assert_int_equal(k, 1);
    assert_string_equal(r[0].role, "user");
    assert_true(r[0].is_prompt);
    assert_string_equal(r[0].timestamp, "2026-01-01T00:00:00.000Z");
    drop(r, k);
    /* an empty user bubble: nothing */
    assert_int_equal(map("{\"type\":1,\"text\":\"\"}", 0, r), 0);
    /* tokens on a tool-only bubble: on its call; a result naming an error */
    k = map("{\"type\":2,\"toolFormerData\":{\"name\":\"edit_file\",\"toolCallId\":\"c9\","
            "\"status\":\"completed\",\"rawArgs\":\"{\\\"target_file\\\":\\\"a.c\\\"}\","
            "\"result\":{\"error\":\"patch did not apply\"}},\"tokenCount\":{\"inputTokens\":7,"
            "\"outputTokens\":3}}",
            0, r);
    assert_int_equal(k, 2);
    assert_string_equal(r[0].tool_name, "edit_file");
    assert_string_equal(r[0].tool_input, "a.c");
    assert_int_equal(r[0].usage.present, 1);
    assert_int_equal(r[0].usage.input, 7);
    assert_int_equal(r[0].usage.output, 3);
    assert_string_equal(r[1].role, "tool");
    assert_int_equal(r[1].is_error, 1);
    assert_non_null(strstr(r[1].text, "patch did not apply"));
    drop(r, k);
    /* a failed call without a result: its status stands for it */
    k = map("{\"type\":2,\"toolFormerData\":{\"name\":\"web_search\",\"status\":\"error\"}}", 0, r);
    assert_int_equal(k, 2);
    assert_string_equal(r[1].text, "error");
    assert_int_equal(r[1].is_error, 1);
    drop(r, k);
    /* thinking blocks only */
    k = map("{\"type\":2,\"allThinkingBlocks\":[{\"thinking\":\"first\"},{\"text\":\"second\"}]}",
            0, r);
    assert_int_equal(k, 1);
    assert_string_equal(r[0].text, "[thinking] first\n[thinking] second");
    drop(r, k);
    /* not an object */
    json_t *a = json_loads("[1]", 0, NULL);
    assert_int_equal(sync__cursor_ide_bubble(a, 2, NULL, NULL, r), 0);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sample_is_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(both_shapes_read, setup, teardown),
        cmocka_unit_test_setup_teardown(bubble_added_under_an_open_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(locked_and_damaged_databases_are_warnings, setup, teardown),
        cmocka_unit_test_setup_teardown(odd_rows_are_skipped, setup, teardown),
        cmocka_unit_test(bubble_kinds_map),
    };
    return TB_RUN_GROUPS(tests);
}
