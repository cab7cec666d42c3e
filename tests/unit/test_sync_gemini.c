/*
 * Tests for Gemini CLI chats (src/sync/sync_gemini.c through the folded
 * sync of sync_fold.c): the golden home in tests/data/gemini/home (JSON
 * Lines with message updates, $set, $rewindTo, a malformed line, a
 * sub-agent, an older .json document, a migrated .json beside its .jsonl)
 * against tests/data/gemini/expected.txt, single records, and the
 * incremental rules on real files: append, update, rewind, checkpoint,
 * replace, rewrite of a document, delete, partial last line.
 * MCPAGE_UPDATE_GOLDEN=1 rewrites the expected file (review the diff).
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

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync_fold.h"

typedef struct fx {
    char dir[256];
    char home[300];  /* a Gemini home the test writes */
    char chats[400]; /* its tmp/app/chats */
    char db[1200];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "gemini") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/gemini", f->dir);
    snprintf(f->chats, sizeof f->chats, "%s/tmp/app/chats", f->home);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && printf '/home/u/app\\n' > '%s/tmp/app/.project_root'", f->chats,
             f->home);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

/* ---- the golden home ---------------------------------------------------- */

static void golden_home_syncs_as_expected(void **state)
{
    fx *f = *state;
    char home[600], expected[600];
    snprintf(home, sizeof home, "%s/gemini/home", MCPAGE_TEST_DATA);
    snprintf(expected, sizeof expected, "%s/gemini/expected.txt", MCPAGE_TEST_DATA);
    sync_report rep;
    ts_sync(f->db, home, NULL, &rep);
    /* the migrated .json is not read: its .jsonl holds the session */
    assert_int_equal(rep.files_seen, 4);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.sessions_added, 4);
    assert_int_equal(rep.messages_added, 21);
    assert_int_equal(rep.lines_malformed, 1);
    assert_non_null(strstr(rep.examples[0], "session-2026-11-20T09-14-4f1c2a9e.jsonl:16: "));

    char *got = ts_dump(f->db, 160);
    /* a rewind dropped the prompt and the answer that followed it */
    assert_null(strstr(got, "Delete the accounts table"));
    assert_null(strstr(got, "are you sure"));
    /* a message written three times is stored once, in its last version */
    assert_non_null(strstr(got, "tool=read_file input=/home/ada/src/ledger-api/src/routes/"
                                "accounts.py call=read_file-1763630054000-0"));
    /* the sub-agent names its parent; the hash folder maps to its path */
    assert_non_null(strstr(got, "session codebase_investigator-7c3e9b10 source=gemini "
                                "project=ledger-api"));
    assert_non_null(strstr(got, "parent=4f1c2a9e-6b3d-4e8a-9c21-7d5e0f3b1a64"));
    assert_non_null(strstr(got, "project pixel-garden /home/ada/src/pixel-garden gemini "
                                "sessions=2"));
    assert_non_null(strstr(got, "title=Fix the 500 on GET /accounts after the balance column "
                                "rename"));

    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-gemini-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-gemini-got.txt)", expected);
    }
    free(want);

    /* nothing changed: every file skipped without reading */
    ts_sync(f->db, home, NULL, &rep);
    assert_int_equal(rep.files_unchanged, 4);
    assert_int_equal(rep.messages_added, 0);
    assert_int_equal(rep.lines_malformed, 0);
    char *again = ts_dump(f->db, 160);
    assert_string_equal(again, got);
    free(again);
    free(got);
}

/* ---- single records ----------------------------------------------------- */

static void expand_one(sync_fold *fold, const char *line, sync_record **r, size_t *n)
{
    char why[200] = "";
    int rc = sync__fold_parse_line(&sync__gemini_format, fold, line, strlen(line), r, n, why,
                                   sizeof why);
    if (rc != 0)
        fail_msg("parse failed (%d): %s", rc, why);
}

static void records_expand_to_messages(void **state)
{
    (void)state;
    sync_fold fold = {0};
    sync_record *r = NULL;
    size_t n = 0;

    /* a model turn: thoughts and text, a finished call and a running one */
    expand_one(&fold,
               "{\"id\":\"g1\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"type\":\"gemini\","
               "\"content\":[{\"text\":\"Reading it.\"}],\"model\":\"gemini-2.5-pro\","
               "\"thoughts\":[{\"subject\":\"Plan\",\"description\":\"read main.c\"}],"
               "\"toolCalls\":[{\"id\":\"c1\",\"name\":\"read_file\",\"args\":{\"file_path\":"
               "\"main.c\"},\"status\":\"success\",\"timestamp\":\"2026-01-01T00:00:02Z\","
               "\"result\":[{\"functionResponse\":{\"id\":\"c1\",\"name\":\"read_file\","
               "\"response\":{\"output\":\"int main(void)\"}}}]},"
               "{\"id\":\"c2\",\"name\":\"run_shell_command\",\"args\":{\"command\":\"make\"},"
               "\"status\":\"executing\",\"timestamp\":\"2026-01-01T00:00:03Z\"}]}",
               &r, &n);
    assert_int_equal(n, 4);
    assert_string_equal(r[0].role, "assistant");
    assert_string_equal(r[0].text, "[thinking] Plan: read main.c\nReading it.");
    assert_string_equal(r[0].model, "gemini-2.5-pro");
    assert_string_equal(r[1].text, "[tool_use read_file] main.c");
    assert_string_equal(r[1].tool_name, "read_file");
    assert_string_equal(r[1].call_id, "c1");
    assert_string_equal(r[1].timestamp, "2026-01-01T00:00:02Z");
    assert_string_equal(r[2].role, "tool");
    assert_string_equal(r[2].text, "int main(void)");
    assert_int_equal(r[2].is_error, 0);
    assert_string_equal(r[3].tool_input, "make");
    sync__records_free(r, n);

    /* a prompt as typed (displayContent), not as expanded */
    expand_one(&fold,
               "{\"id\":\"u1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"user\","
               "\"content\":[{\"text\":\"@a.c explain\"},{\"text\":\"--- a.c ---\\nint x;\"}],"
               "\"displayContent\":[{\"text\":\"@a.c explain\"}]}",
               &r, &n);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "user");
    assert_string_equal(r[0].text, "@a.c explain");
    assert_int_equal(r[0].is_prompt, 1);
    sync__records_free(r, n);

    /* an error message, and a failed call whose result says why */
    expand_one(&fold, "{\"id\":\"e1\",\"type\":\"error\",\"content\":\"[API Error: quota]\"}", &r,
               &n);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "system");
    assert_string_equal(r[0].text, "[error] [API Error: quota]");
    assert_int_equal(r[0].is_error, 1);
    sync__records_free(r, n);
    expand_one(&fold,
               "{\"id\":\"g2\",\"type\":\"gemini\",\"content\":\"\",\"toolCalls\":[{\"id\":\"c3\","
               "\"name\":\"replace\",\"args\":{\"file_path\":\"b.c\"},\"status\":\"error\","
               "\"result\":[{\"functionResponse\":{\"id\":\"c3\",\"name\":\"replace\","
               "\"response\":{\"error\":\"0 occurrences found\"}}}]}]}",
               &r, &n);
    assert_int_equal(n, 2); /* no text: the call and its result only */
    assert_string_equal(r[1].text, "0 occurrences found");
    assert_int_equal(r[1].is_error, 1);
    sync__records_free(r, n);

    /* five messages so far; a rewind to g2 drops it, an unknown id all */
    assert_int_equal(fold.n, 4);
    expand_one(&fold, "{\"$rewindTo\":\"e1\"}", &r, &n);
    assert_int_equal(n, 0);
    assert_int_equal(fold.n, 2);
    assert_string_equal(fold.v[1].id, "u1");
    expand_one(&fold, "{\"$rewindTo\":\"nope\"}", &r, &n);
    assert_int_equal(fold.n, 0);

    /* a checkpoint: the messages become the array's */
    expand_one(&fold,
               "{\"$set\":{\"summary\":\"Explain a.c\",\"messages\":[{\"id\":\"k1\",\"type\":"
               "\"user\",\"content\":\"first\"},{\"id\":\"k2\",\"type\":\"gemini\","
               "\"content\":\"second\"}]}}",
               &r, &n);
    assert_int_equal(fold.n, 2);
    assert_int_equal(fold.v[1].sub, 1);
    assert_string_equal(fold.title, "Explain a.c");
    assert_int_equal(n, 1);
    assert_string_equal(r[0].text, "first"); /* the first entry the line holds */
    sync__records_free(r, n);

    /* malformed: a reason, never a crash */
    char why[200] = "";
    assert_int_equal(
        sync__fold_parse_line(&sync__gemini_format, &fold, "[1,2]", 5, &r, &n, why, sizeof why),
        MCPAGE_EPARSE);
    assert_string_equal(why, "not a JSON object");
    sync_fold_free(&fold);
}

/* ---- incremental -------------------------------------------------------- */

#define META                                                                                       \
    "{\"sessionId\":\"s-1\",\"projectHash\":\"h\",\"startTime\":\"2026-01-01T00:00:00Z\","         \
    "\"lastUpdated\":\"2026-01-01T00:00:00Z\"}\n"

static char *msg(const char *id, const char *type, const char *text)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"id\":\"%s\",\"timestamp\":\"2026-01-01T00:%02d:00Z\",\"type\":\"%s\","
             "\"content\":[{\"text\":\"%s\"}]}\n",
             id, (int)strlen(text) % 60, type, text);
    return buf;
}

static void session_path(fx *f, char *out, size_t n)
{
    snprintf(out, n, "%s/session-2026-01-01T00-00-s-1.jsonl", f->chats);
}

static void append_update_rewind_and_delete(void **state)
{
    fx *f = *state;
    char path[600];
    session_path(f, path, sizeof path);
    sync_report rep;

    ts_put(path, "w", META);
    ts_put(path, "a", msg("u1", "user", "add a --json flag"));
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.sessions_added, 1);
    assert_int_equal(rep.messages_added, 1);
    int64_t first_id = ts_message_id(f->db, "s-1", 0);
    assert_true(first_id > 0);

    /* append: read on, the stored message untouched */
    ts_put(path, "a", msg("g1", "gemini", "Looking at stats.c"));
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "s-1", 0), first_id);

    /* the same message written again (its tool call now): stored again */
    ts_put(path, "a",
           "{\"id\":\"g1\",\"timestamp\":\"2026-01-01T00:18:00Z\",\"type\":\"gemini\","
           "\"content\":[{\"text\":\"Looking at stats.c\"}],\"toolCalls\":[{\"id\":\"c1\","
           "\"name\":\"read_file\",\"args\":{\"file_path\":\"stats.c\"},\"status\":\"success\","
           "\"result\":[{\"functionResponse\":{\"id\":\"c1\",\"name\":\"read_file\","
           "\"response\":{\"output\":\"static int stats(void)\"}}}]}]}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "messages=4\n"));
    assert_non_null(strstr(d, "tool=read_file input=- call=c1 err=0 line=4"));
    free(d);

    /* a prompt added and rewound in one go: nothing of it is stored */
    ts_put(path, "a", msg("u2", "user", "no, drop the flag"));
    ts_put(path, "a", "{\"$rewindTo\":\"u2\"}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 0);

    /* a stored prompt rewound later: the session drops it */
    ts_put(path, "a", msg("u3", "user", "also document it"));
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.messages_added, 1);
    ts_put(path, "a", "{\"$rewindTo\":\"u3\"}\n");
    ts_put(path, "a", "{\"$set\":{\"summary\":\"Add --json to stats\"}}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "title=Add --json to stats"));
    assert_non_null(strstr(d, "messages=4\n"));
    assert_null(strstr(d, "also document it"));
    free(d);

    /* a malformed line is counted once, by the sync that first reads it */
    ts_put(path, "a", "{\"id\":\"broken\n");
    ts_put(path, "a", msg("u4", "user", "thanks"));
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.lines_malformed, 1);
    assert_int_equal(rep.messages_added, 1);
    ts_put(path, "a", msg("g4", "gemini", "You are welcome"));
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.lines_malformed, 0);
    assert_int_equal(rep.messages_added, 1);

    /* a last line without its newline waits */
    ts_put(path, "a", "{\"id\":\"u5\",\"type\":\"user\",\"content\":\"half");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.lines_partial, 1);
    assert_int_equal(rep.messages_added, 0);
    ts_put(path, "a", " done\"}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.messages_added, 1);

    /* replaced (Gemini CLI rewrites a file it could not read: a new inode) */
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp-1", path);
    ts_put(tmp, "w", META);
    ts_put(tmp, "a", msg("u1", "user", "add a --json flag"));
    assert_int_equal(rename(tmp, path), 0);
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "messages=1\n"));
    free(d);

    /* deleted: the archive keeps the session */
    assert_int_equal(unlink(path), 0);
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_seen, 0);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "session s-1 source=gemini project=app"));
    assert_non_null(strstr(d, "messages=1\n"));
    free(d);
}

static void documents_and_their_migration(void **state)
{
    fx *f = *state;
    char doc[600], jsonl[700];
    snprintf(doc, sizeof doc, "%s/session-2025-09-01T10-00-d0c00001.json", f->chats);
    snprintf(jsonl, sizeof jsonl, "%sl", doc);
    static const char head[] = "{\n  \"sessionId\": \"d0c00001-aaaa\",\n  \"projectHash\": \"h\",\n"
                               "  \"startTime\": \"2025-09-01T10:00:00Z\",\n";
    sync_report rep;
    char text[2048];
    snprintf(text, sizeof text,
             "%s  \"lastUpdated\": \"2025-09-01T10:00:05Z\",\n  \"messages\": [\n"
             "    {\"id\": \"a\", \"timestamp\": \"2025-09-01T10:00:05Z\", \"type\": \"user\", "
             "\"content\": \"why is the build slow?\"}\n  ]\n}\n",
             head);
    ts_put(doc, "w", text);
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.messages_added, 1);

    /* saved again in place: the document is read again */
    snprintf(text, sizeof text,
             "%s  \"lastUpdated\": \"2025-09-01T10:00:09Z\",\n  \"messages\": [\n"
             "    {\"id\": \"a\", \"timestamp\": \"2025-09-01T10:00:05Z\", \"type\": \"user\", "
             "\"content\": \"why is the build slow?\"},\n"
             "    {\"id\": \"b\", \"timestamp\": \"2025-09-01T10:00:09Z\", \"type\": \"gemini\", "
             "\"content\": \"LTO is on in debug builds.\"}\n  ]\n}\n",
             head);
    ts_put(doc, "w", text);
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "session d0c00001-aaaa source=gemini project=app title=why is the "
                              "build slow?"));
    assert_non_null(strstr(d, "messages=2\n"));
    /* the raw copy is the JSON Lines the document stands for */
    assert_non_null(strstr(d, "  1 assistant 2025-09-01T10:00:09Z tool=- input=- call=- err=0 "
                              "line=3"));
    free(d);

    /* Gemini CLI resumes it: the .jsonl beside it is now the session */
    ts_put(jsonl, "w",
           "{\"sessionId\":\"d0c00001-aaaa\",\"projectHash\":\"h\",\"startTime\":"
           "\"2025-09-01T10:00:00Z\",\"lastUpdated\":\"2025-09-01T10:00:09Z\"}\n");
    ts_put(jsonl, "a",
           "{\"id\":\"a\",\"timestamp\":\"2025-09-01T10:00:05Z\",\"type\":\"user\",\"content\":"
           "\"why is the build slow?\"}\n"
           "{\"id\":\"b\",\"timestamp\":\"2025-09-01T10:00:09Z\",\"type\":\"gemini\",\"content\":"
           "\"LTO is on in debug builds.\"}\n"
           "{\"$set\":{\"sessionId\":\"d0c00001-aaaa\"}}\n"
           "{\"id\":\"c\",\"timestamp\":\"2025-09-02T08:00:00Z\",\"type\":\"user\",\"content\":"
           "\"turn it off\"}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.files_seen, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "messages=3\n"));
    assert_null(strstr(d, "session d0c00001-aaaa source=gemini project=app title=why is the "
                          "build slow? start=2025-09-01T10:00:05Z end=2025-09-01T10:00:09Z"));
    free(d);
}

/* One session file in tmp/<folder>/chats of the test's home. */
static void folder_session(fx *f, const char *folder, const char *sid)
{
    char dir[800], path[1000], cmd[1200];
    snprintf(dir, sizeof dir, "%s/tmp/%s/chats", f->home, folder);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/session-2025-08-01T09-00-%.8s.jsonl", dir, sid);
    char meta[400];
    snprintf(meta, sizeof meta,
             "{\"sessionId\":\"%s\",\"projectHash\":\"h\",\"startTime\":"
             "\"2025-08-01T09:00:00Z\",\"lastUpdated\":\"2025-08-01T09:00:00Z\"}\n",
             sid);
    ts_put(path, "w", meta);
    ts_put(path, "a", msg("x", "user", "hello"));
}

static void project_folders_map_to_paths(void **state)
{
    fx *f = *state;
    sync_report rep;
    /* tmp/app has a .project_root (setup): /home/u/app */
    folder_session(f, "app", "app00001");
    ts_sync(f->db, f->home, NULL, &rep);
    /* older folders are the SHA-256 of the path: one named in
       projects.json, one of a project already archived, one unknown */
    folder_session(f, "552c70df17e3b180d1d430691d4c7c28eda8acc97b3053565d72cae4f5482db0",
                   "lib00001");
    folder_session(f, "2bf7c3a66bb612328fc2e5547e4b0a1406e703635b3cb0184e96b5db1425cd84",
                   "app00002");
    folder_session(f, "0000000000000000000000000000000000000000000000000000000000000000",
                   "unk00001");
    /* a slug folder without .project_root: projects.json maps it */
    folder_session(f, "tools", "tools001");
    char reg[600];
    snprintf(reg, sizeof reg, "%s/projects.json", f->home);
    ts_put(reg, "w", "{\"projects\":{\"/home/u/lib\":\"lib\",\"/home/u/tools\":\"tools\"}}\n");
    ts_sync(f->db, f->home, NULL, &rep);
    assert_int_equal(rep.sessions_added, 4);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "project app /home/u/app gemini sessions=2"));
    assert_non_null(strstr(d, "project lib /home/u/lib gemini sessions=1"));
    assert_non_null(strstr(d, "project tools /home/u/tools gemini sessions=1"));
    assert_non_null(strstr(d, "session unk00001 source=gemini project=000000000000"));
    free(d);

    /* a hash folder no file maps: the directory the session's context
       names ("I'm currently working in the directory: ..."); its title is
       the first real request, not the context */
    folder_session(f, "1111111111111111111111111111111111111111111111111111111111111111",
                   "ctx00001");
    char path[1000];
    snprintf(path, sizeof path,
             "%s/tmp/1111111111111111111111111111111111111111111111111111111111111111/chats/"
             "session-2025-08-01T09-00-ctx00001.jsonl",
             f->home);
    ts_put(path, "w",
           "{\"sessionId\":\"ctx00001\",\"projectHash\":\"h\",\"startTime\":"
           "\"2025-08-01T09:00:00Z\",\"lastUpdated\":\"2025-08-01T09:00:00Z\"}\n");
    ts_put(path, "a",
           msg("c1", "user",
               "<session_context>\\nThis is the Gemini CLI. We are setting up the context for our "
               "chat.\\nThe project's temporary directory is: /home/u/.gemini/tmp/1111\\nI'm "
               "currently working in the directory: /home/u/ctx project  \\nHere is the folder "
               "structure\\n</session_context>"));
    ts_put(path, "a", msg("c2", "user", "count the lines"));
    folder_session(f, "2222222222222222222222222222222222222222222222222222222222222222",
                   "win00001");
    snprintf(path, sizeof path,
             "%s/tmp/2222222222222222222222222222222222222222222222222222222222222222/chats/"
             "session-2025-08-01T09-00-win00001.jsonl",
             f->home);
    ts_put(path, "a",
           msg("w1", "user",
               "This is the Gemini CLI.\\nI'm currently working in the directory: "
               "R:\\\\HACK\\\\book-site\\nShowing up to 200 items"));
    ts_sync(f->db, f->home, NULL, &rep);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "project ctx project /home/u/ctx project gemini sessions=1"));
    assert_non_null(strstr(d, "session ctx00001 source=gemini project=ctx project"));
    assert_non_null(strstr(d, "R:\\HACK\\book-site"));
    free(d);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_session row;
    assert_int_equal(store_session_get(s, "ctx00001", &row), 0);
    assert_string_equal(row.title, "count the lines");
    store_session_clear(&row);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(golden_home_syncs_as_expected, setup, ts_fixture_drop),
        cmocka_unit_test(records_expand_to_messages),
        cmocka_unit_test_setup_teardown(append_update_rewind_and_delete, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(documents_and_their_migration, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(project_folders_map_to_paths, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
