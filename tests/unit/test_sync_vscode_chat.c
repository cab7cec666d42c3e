/*
 * Tests for VS Code Copilot Chat (src/sync/sync_vscode_chat.c, source
 * vscode-copilot): the sample in examples/archive/vscode-copilot (a
 * version-3 document with thinking, tool calls, a denied call, an edit
 * group, a failed and a cancelled request; a .jsonl mutation log with
 * set, push, a rewind and a delete; a version-1 document with no folder
 * open; a file of an unknown version) against
 * tests/data/sources/vscode-copilot.expected and real values; the log's
 * replay entry by entry; and the incremental rules on real files: an
 * unchanged file is not read, a log that grows by a request adds only its
 * messages, a change to an earlier request stores the session again with
 * the kept requests' message ids, a rewritten document is read again, and
 * a corrupt entry is a named warning that loses nothing else.
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
#include "sync/sync_desc.h"
#include "sync/sync_vscode_chat.h"

typedef struct fx {
    char dir[256];
    char home[300];  /* a config folder the test writes */
    char chats[600]; /* its Code/User/workspaceStorage/h1/chatSessions */
    char db[1200];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "vscode-chat") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/config", f->dir);
    snprintf(f->chats, sizeof f->chats, "%s/Code/User/workspaceStorage/h1/chatSessions", f->home);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && printf '{\"folder\": \"file:///home/u/app\"}' > "
             "'%s/Code/User/workspaceStorage/h1/workspace.json'",
             f->chats, f->home);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

static void sync_home(const char *db, const char *home, sync_report *rep)
{
    sync_descs d;
    char err[700] = "";
    memset(&d, 0, sizeof d);
    assert_int_equal(sync_descs_parse(&d, sync__builtin_sources, strlen(sync__builtin_sources),
                                      "built-in", err, sizeof err),
                     0);
    const sync_desc *desc = sync_descs_find(&d, "vscode-copilot");
    assert_non_null(desc);
    sync_described one = {.desc = desc, .home = home};
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.hostname = "test", .described = &one, .ndescribed = 1, .settle = 1};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
    sync_descs_free(&d);
}

static const sync_source_report *source_of(const sync_report *rep)
{
    for (int i = 0; i < rep->nsources; i++)
        if (strcmp(rep->sources[i].name, "vscode-copilot") == 0)
            return &rep->sources[i];
    fail_msg("no report for vscode-copilot");
    return NULL;
}

static void golden_sample(void **state)
{
    fx *f = *state;
    char home[600], expected[600];
    snprintf(home, sizeof home, "%s/examples/archive/vscode-copilot", MCPAGE_SOURCE_DIR);
    snprintf(expected, sizeof expected, "%s/sources/vscode-copilot.expected", MCPAGE_TEST_DATA);
    sync_report rep;
    sync_home(f->db, home, &rep);
    const sync_source_report *sr = source_of(&rep);
    assert_int_equal(sr->found, 1);
    assert_int_equal(sr->files, 4);
    assert_int_equal(sr->files_failed, 0);
    assert_int_equal(sr->sessions_added, 3);
    assert_int_equal(rep.lines_malformed, 1); /* the version-9 file */
    assert_int_equal(sr->warnings, 1);
    assert_non_null(strstr(sr->warning, "format version 9"));
    assert_non_null(strstr(sr->warning, "f0f0f0f0-0000-4000-8000-000000000009.json"));
    char *got = ts_dump(f->db, 200);
    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-vscode-copilot-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-vscode-copilot-got.txt)", expected);
    }
    free(want);
    /* the values themselves, not only the golden text */
    assert_non_null(
        strstr(got, "project ledger api /home/dev/ledger api vscode-copilot sessions=2"));
    assert_non_null(strstr(got, "session vscode-copilot:7c1e2a90-3b4d-4e5f-8a6b-0c1d2e3f4a5b "
                                "source=vscode-copilot project=ledger api "
                                "title=Rounding in invoice totals start=2025-12-05T10:00:10.000Z"));
    assert_non_null(strstr(got, "title=Rounding in invoice totals start=2025-12-05T10:00:10.000Z "
                                "end=2025-12-05T10:05:00.000Z model=gpt-4o"));
    assert_non_null(strstr(got, "title=The Money type"));
    assert_non_null(strstr(got, "| Invoice totals are off by a cent. Find the rounding bug and "
                                "fix it.\\n\\n[attached] invoice.ts"));
    assert_non_null(
        strstr(got, "tool=copilot_findTextInFiles input=Math.round call=toolu_ledger_1"));
    assert_non_null(strstr(got, "| src/invoice.ts:12: return lines.reduce"));
    /* the denied call: its command as input, an error */
    assert_non_null(strstr(got, "tool=run_in_terminal input=- call=toolu_ledger_2 err=1"));
    assert_non_null(strstr(got, "| [denied] Ran `rm -rf dist && npm test`"));
    assert_non_null(strstr(got, "input=rm -rf dist && npm test call=toolu_ledger_2 err=0"));
    assert_non_null(strstr(got, "tool=textEditGroup input=/home/dev/ledger api/src/invoice.ts"));
    assert_non_null(strstr(got, "[invoice.ts](/home/dev/ledger api/src/invoice.ts)"));
    assert_non_null(strstr(got, "err=1 line=3 "));
    assert_non_null(strstr(got, "[error] Sorry, your request failed. Reason: rate limit exceeded"));
    assert_non_null(strstr(got, "[cancelled]"));
    /* the log: the rewound request is gone, the one after it is there */
    assert_null(strstr(got, "| shorter"));
    assert_non_null(strstr(got, "| Which file defines it?"));
    assert_non_null(strstr(got, "`Money` keeps amounts in integer cents [money.ts](/home/dev/"
                                "ledger api/src/money.ts) so sums never drift."));
    /* version 1: the prompt a string, no project, the session's start */
    assert_non_null(strstr(got, "title=How do I format a date as ISO 8601 in TypeScript?"));
    assert_non_null(strstr(got, "| Use `date.toISOString()`"));
    /* token usage: one call per answered request */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_usage_filter uf = {
        .group = STORE_USAGE_BY_AGENT, .from_minute = INT64_MIN, .to_minute = INT64_MAX};
    store_usage_sums sums;
    assert_int_equal(store_usage_sums_get(s, &uf, 100, &sums), 0);
    /* a row per model: the one that answered (resolvedModel) */
    assert_int_equal(sums.count, 2);
    int64_t calls = 0, in = 0, out = 0;
    for (size_t i = 0; i < sums.count; i++) {
        assert_string_equal(sums.rows[i].name, "vscode-copilot");
        const char *m = sums.rows[i].model;
        assert_true(m && (strcmp(m, "claude-sonnet-4.5") == 0 || strcmp(m, "gpt-5-mini") == 0));
        calls += sums.rows[i].calls;
        in += sums.rows[i].input;
        out += sums.rows[i].output;
    }
    assert_int_equal(calls, 2);
    assert_int_equal(in, 15230 + 5120);
    assert_int_equal(out, 488 + 64);
    store_usage_sums_free(&sums);
    store_close(s);
    /* nothing changed: no file is read */
    sync_home(f->db, home, &rep);
    assert_int_equal(rep.messages_added, 0);
    assert_int_equal(rep.files_read + rep.files_reparsed, 0);
    char *again = ts_dump(f->db, 200);
    assert_string_equal(again, got);
    free(again);
    free(got);
}

/* ---- the log's replay ------------------------------------------------- */

static json_t *replay(const char *log, long *skipped, char *why, size_t whylen)
{
    json_t *out = NULL;
    int rc = sync__vscode_log_replay(log, strlen(log), &out, why, whylen, skipped);
    if (rc < 0)
        return NULL;
    return out;
}

static void log_entries_replay(void **state)
{
    (void)state;
    char why[400] = "";
    long skipped = 0;
    json_t *s = replay("{\"kind\":0,\"v\":{\"a\":1,\"requests\":[]}}\n"
                       "{\"kind\":2,\"k\":[\"requests\"],\"v\":[{\"r\":1},{\"r\":2},{\"r\":3}]}\n"
                       "{\"kind\":1,\"k\":[\"requests\",1,\"x\"],\"v\":\"set\"}\n"
                       "{\"kind\":2,\"k\":[\"requests\"],\"v\":[{\"r\":4}],\"i\":2}\n"
                       "{\"kind\":2,\"k\":[\"requests\",0,\"parts\"],\"v\":[7,8]}\n"
                       "{\"kind\":3,\"k\":[\"a\"]}\n"
                       "{\"kind\":1,\"k\":[\"title\"],\"v\":\"t\"}\n",
                       &skipped, why, sizeof why);
    assert_non_null(s);
    assert_int_equal(skipped, 0);
    char *d = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(d, "{\"requests\":[{\"parts\":[7,8],\"r\":1},{\"r\":2,\"x\":\"set\"},"
                           "{\"r\":4}],\"title\":\"t\"}");
    free(d);
    json_decref(s);
    /* entries that cannot apply are skipped and named; the rest applies;
       an unfinished last line waits */
    s = replay("{\"kind\":0,\"v\":{\"requests\":[]}}\n"
               "not json\n"
               "{\"kind\":7,\"k\":[\"x\"]}\n"
               "{\"kind\":1,\"k\":[\"nowhere\",\"deep\"],\"v\":1}\n"
               "{\"kind\":1,\"k\":[\"requests\",5],\"v\":1}\n"
               "{\"kind\":1,\"k\":[],\"v\":1}\n"
               /* an array made for a push where it cannot go (freed once: the
                  fuzzer's first finding) */
               "{\"kind\":2,\"k\":[\"requests\",5],\"v\":[1]}\n"
               "{\"kind\":2,\"k\":[\"requests\"],\"v\":[1]}\n"
               "{\"kind\":2,\"k\":[\"requests\"],\"v\":[2",
               &skipped, why, sizeof why);
    assert_non_null(s);
    assert_int_equal(skipped, 6);
    assert_non_null(strstr(why, "6 log entries not applied (the first: line 2:"));
    d = json_dumps(s, JSON_COMPACT);
    assert_string_equal(d, "{\"requests\":[1]}");
    free(d);
    json_decref(s);
    /* not a log */
    assert_null(replay("{\"kind\":1,\"k\":[\"a\"],\"v\":1}\n", &skipped, why, sizeof why));
    assert_non_null(strstr(why, "not a VS Code chat log: line 1: an entry before"));
    assert_null(replay("", &skipped, why, sizeof why));
    assert_null(replay("[1,2]\n", &skipped, why, sizeof why));
}

/* ---- incremental ------------------------------------------------------ */

static void put_log(const fx *f, const char *mode, const char *text)
{
    char path[800];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->chats);
    ts_put(path, mode, text);
}

#define REQ(id, ts, prompt, answer)                                                                \
    "{\"kind\":2,\"k\":[\"requests\"],\"v\":[{\"requestId\":\"" id "\",\"timestamp\":" ts          \
    ",\"message\":{\"text\":\"" prompt "\"},\"response\":[{\"value\":\"" answer                    \
    "\"}],\"modelId\":\"copilot/gpt-4o\"}]}\n"

static void log_grows_changes_and_is_rewritten(void **state)
{
    fx *f = *state;
    sync_report rep;
    put_log(f, "w",
            "{\"kind\":0,\"v\":{\"version\":3,\"sessionId\":\"s1\",\"creationDate\":1764932400000,"
            "\"requests\":[]}}\n" REQ("r1", "1764932401000", "first question", "first answer"));
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.sessions_added, 1);
    assert_int_equal(rep.messages_added, 2);
    char *d = ts_dump(f->db, 200);
    assert_non_null(strstr(d, "project app /home/u/app vscode-copilot sessions=1 messages=2"));
    assert_non_null(strstr(d, "0 user 2025-12-05T11:00:01.000Z"));
    free(d);
    int64_t first = ts_message_id(f->db, "vscode-copilot:s1", 0);
    assert_true(first > 0);
    /* unchanged: a stat, nothing read */
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.files_unchanged, 1);
    assert_int_equal(rep.files_read + rep.files_reparsed, 0);
    /* a request appended: its two messages added, the others untouched */
    put_log(f, "a", REQ("r2", "1764932402000", "second question", "second answer"));
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 2);
    assert_int_equal(ts_message_id(f->db, "vscode-copilot:s1", 0), first);
    /* the first request's answer grows: stored again, ids kept */
    put_log(f, "a",
            "{\"kind\":2,\"k\":[\"requests\",0,\"response\"],\"v\":[{\"value\":\" and more\"}]}\n");
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    assert_int_equal(ts_message_id(f->db, "vscode-copilot:s1", 0), first);
    d = ts_dump(f->db, 200);
    assert_non_null(strstr(d, "| first answer and more"));
    assert_non_null(strstr(d, "messages=4"));
    free(d);
    /* a corrupt entry: named with its line, the entries after it apply */
    put_log(f, "a",
            "{\"kind\":2,\"k\":[\"requests\",9,\"response\"],\"v\":[]}\n" REQ(
                "r3", "1764932403000", "third question", "third answer"));
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.messages_added, 2);
    const sync_source_report *sr = source_of(&rep);
    if (sr->warnings != 1 || !strstr(sr->warning, "line 5: its key path leads nowhere"))
        fail_msg("warnings %lld: %s", (long long)sr->warnings, sr->warning);
    assert_non_null(strstr(sr->warning, "s1.jsonl"));

    /* VS Code compacts the log to one line: the same requests, re-read */
    put_log(f, "w",
            "{\"kind\":0,\"v\":{\"version\":3,\"sessionId\":\"s1\",\"creationDate\":1764932400000,"
            "\"requests\":[{\"requestId\":\"r1\",\"timestamp\":1764932401000,\"message\":{\"text\":"
            "\"first question\"},\"response\":[{\"value\":\"first answer and more\"}],"
            "\"modelId\":\"copilot/gpt-4o\"}]}}\n");
    sync_home(f->db, f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    assert_int_equal(ts_message_id(f->db, "vscode-copilot:s1", 0), first);
    d = ts_dump(f->db, 200);
    assert_non_null(strstr(d, "messages=2"));
    assert_null(strstr(d, "third question"));
    free(d);
    /* a document of a version not known, beside it: a warning, no abort */
    char path[800];
    snprintf(path, sizeof path, "%s/s2.json", f->chats);
    ts_put(path, "w", "{\"version\": \"4\", \"requests\": []}");
    sync_home(f->db, f->home, &rep);
    sr = source_of(&rep);
    assert_int_equal(sr->warnings, 1);
    assert_non_null(strstr(sr->warning, "format version ?"));
    ts_put(path, "w", "{\"version\": 3, \"requests\": [");
    sync_home(f->db, f->home, &rep);
    assert_non_null(strstr(source_of(&rep)->warning, "not a JSON document"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(golden_sample, setup, ts_fixture_drop),
        cmocka_unit_test(log_entries_replay),
        cmocka_unit_test_setup_teardown(log_grows_changes_and_is_rewritten, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
