/*
 * Tests for GitHub Copilot CLI sessions (src/sync/sync_copilot.c through
 * the folded sync of sync_fold.c): the golden home in
 * tests/data/copilot/home (a current session with reasoning, tool
 * requests and results, a rejected call, a snapshot rewind, a torn line;
 * an older 0.0.369 session without context whose last line is unfinished)
 * against tests/data/copilot/expected.txt, single events, and the
 * incremental rules on real files: append, rewind, replace, delete.
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
    char home[300]; /* a Copilot home the test writes */
    char sess[400]; /* its session-state/s-1 */
    char db[1200];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "copilot") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/copilot", f->dir);
    snprintf(f->sess, sizeof f->sess, "%s/session-state/s-1", f->home);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && printf 'id: s-1\\ncwd: /home/u/app\\n' > '%s/workspace.yaml'",
             f->sess, f->sess);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

static void golden_home_syncs_as_expected(void **state)
{
    fx *f = *state;
    char home[600], expected[600];
    snprintf(home, sizeof home, "%s/copilot/home", MCPAGE_TEST_DATA);
    snprintf(expected, sizeof expected, "%s/copilot/expected.txt", MCPAGE_TEST_DATA);
    sync_report rep;
    ts_sync(f->db, NULL, home, &rep);
    assert_int_equal(rep.files_seen, 2);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.sessions_added, 2);
    assert_int_equal(rep.messages_added, 26);
    assert_int_equal(rep.lines_malformed, 1); /* the torn line, counted with its place */
    assert_non_null(strstr(rep.examples[0], "/events.jsonl:10: "));
    assert_int_equal(rep.lines_partial, 1); /* the older session is still being written */

    char *got = ts_dump(f->db, 160);
    /* the snapshot rewind dropped the prompt and its answer */
    assert_null(strstr(got, "Drop the owner_id column"));
    /* the rejected call is an error result named after its request */
    assert_non_null(strstr(got, "tool 2026-11-21T10:00:15.500Z tool=create input=- "
                                "call=toolu_vrtx_02EfGh err=1"));
    assert_non_null(strstr(got, "title=Index accounts(owner_id)"));
    assert_non_null(strstr(got, "model=gpt-5 branch=fix/accounts-500"));
    /* a call the user asked for is theirs, once (its execution_start
       repeats it); a call only execution_start names is stored */
    const char *u = strstr(got, "[tool_use bash] git status --short");
    assert_non_null(u);
    assert_null(strstr(u + 1, "[tool_use bash] git status --short"));
    assert_non_null(strstr(got, "13 user 2026-11-21T10:03:01.000Z tool=bash"));
    assert_non_null(strstr(got, "assistant 2026-11-21T10:03:02.000Z tool=view"));
    /* text a skill injected is kept, as are the newer event kinds */
    assert_non_null(
        strstr(got, "user 2026-11-21T10:03:03.100Z tool=- input=- call=- err=0 line=29"));
    assert_non_null(strstr(got, "err=1 line=31 at=7221+246 | [subagent failed] Explore"));
    assert_non_null(strstr(got, "[task complete] Wrote migrations/0008_owner_index.sql"));
    /* the older session's project comes from workspace.yaml */
    assert_non_null(strstr(got, "project pixel-garden /home/ada/src/pixel-garden copilot"));

    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-copilot-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-copilot-got.txt)", expected);
    }
    free(want);
    free(got);
}

static void events_expand_to_messages(void **state)
{
    (void)state;
    sync_fold fold = {0};
    sync_record *r = NULL;
    size_t n = 0;
    char why[200] = "";
    const char *line =
        "{\"type\":\"assistant.message\",\"id\":\"e1\",\"timestamp\":\"2026-01-01T00:00:01Z\","
        "\"parentId\":null,\"data\":{\"messageId\":\"m\",\"content\":\"Two steps.\","
        "\"toolRequests\":[{\"toolCallId\":\"t1\",\"name\":\"bash\",\"arguments\":{\"command\":"
        "\"make test\"},\"type\":\"function\"},{\"toolCallId\":\"t2\",\"name\":\"view\","
        "\"arguments\":{\"path\":\"src/a.c\"}}]}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 3);
    assert_string_equal(r[0].text, "Two steps.");
    assert_string_equal(r[1].text, "[tool_use bash] make test");
    assert_string_equal(r[1].call_id, "t1");
    assert_string_equal(r[2].tool_input, "src/a.c");
    sync__records_free(r, n);

    line =
        "{\"type\":\"tool.execution_complete\",\"id\":\"e2\",\"timestamp\":\"2026-01-01T00:00:"
        "02Z\","
        "\"data\":{\"toolCallId\":\"t1\",\"success\":false,\"result\":{\"content\":\"2 failed\"}}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "tool");
    assert_string_equal(r[0].text, "2 failed");
    assert_int_equal(r[0].is_error, 1);
    assert_null(r[0].tool_name); /* sync names it from the call */
    sync__records_free(r, n);

    /* bookkeeping is an entry (a rewind may name it) without messages */
    line = "{\"type\":\"assistant.turn_end\",\"id\":\"e3\",\"data\":{\"turnId\":\"0\"}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 0);
    assert_int_equal(fold.n, 3);
    line = "{\"type\":\"session.snapshot_rewind\",\"id\":\"e4\",\"data\":{\"upToEventId\":\"e2\","
           "\"eventsRemoved\":2}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(fold.n, 1);
    /* an unknown id removes nothing */
    line = "{\"type\":\"session.snapshot_rewind\",\"id\":\"e5\",\"data\":{\"upToEventId\":\"zz\"}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(fold.n, 1);
    /* t1 was requested: its execution_start repeats it; t9 was not */
    line = "{\"type\":\"tool.execution_start\",\"id\":\"e6\",\"data\":{\"toolCallId\":\"t1\","
           "\"toolName\":\"bash\",\"arguments\":{\"command\":\"make test\"}}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 0);
    line = "{\"type\":\"tool.execution_start\",\"id\":\"e7\",\"data\":{\"toolCallId\":\"t9\","
           "\"toolName\":\"grep\",\"arguments\":{\"pattern\":\"TODO\"}}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "assistant");
    assert_string_equal(r[0].text, "[tool_use grep] TODO");
    assert_string_equal(r[0].call_id, "t9");
    sync__records_free(r, n);
    /* a prompt a skill injected is kept, but is no title */
    line = "{\"type\":\"user.message\",\"id\":\"e8\",\"data\":{\"content\":\"use pdftotext\","
           "\"source\":\"skill-pdf\"}}";
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, line, strlen(line), &r, &n,
                                           why, sizeof why),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "user");
    assert_string_equal(r[0].text, "use pdftotext");
    assert_int_equal(r[0].is_prompt, 0);
    sync__records_free(r, n);
    assert_int_equal(sync__fold_parse_line(&sync__copilot_format, &fold, "{\"data\":{}}", 11, &r,
                                           &n, why, sizeof why),
                     MCPAGE_EPARSE);
    assert_string_equal(why, "an event without a type");
    sync_fold_free(&fold);
}

static char *event(int i, const char *type, const char *data)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"type\":\"%s\",\"data\":%s,\"id\":\"ev-%d\",\"timestamp\":"
             "\"2026-01-01T00:00:%02dZ\",\"parentId\":null}\n",
             type, data, i, i % 60);
    return buf;
}

static void append_rewind_replace_and_delete(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/events.jsonl", f->sess);
    sync_report rep;
    ts_put(path, "w",
           event(1, "session.start", "{\"sessionId\":\"s-1\",\"copilotVersion\":\"0.0.407\"}"));
    ts_put(path, "a", event(2, "user.message", "{\"content\":\"list the tests\"}"));
    ts_sync(f->db, NULL, f->home, &rep);
    assert_int_equal(rep.messages_added, 1);
    int64_t first = ts_message_id(f->db, "s-1", 0);

    /* append */
    ts_put(path, "a",
           event(3, "assistant.message",
                 "{\"content\":\"\",\"toolRequests\":[{\"toolCallId\":\"t1\",\"name\":\"bash\","
                 "\"arguments\":{\"command\":\"ls tests\"}}]}"));
    ts_sync(f->db, NULL, f->home, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "s-1", 0), first);
    /* a result in a later sync is named after the call stored before */
    ts_put(path, "a",
           event(4, "tool.execution_complete",
                 "{\"toolCallId\":\"t1\",\"success\":true,\"result\":{\"content\":\"a.c\"}}"));
    ts_sync(f->db, NULL, f->home, &rep);
    char *d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "tool=bash input=- call=t1 err=0 line=4"));
    assert_non_null(strstr(d, "project app /home/u/app copilot sessions=1"));
    free(d);

    /* rewind to the prompt: everything from it on is gone */
    ts_put(path, "a", event(5, "session.snapshot_rewind", "{\"upToEventId\":\"ev-2\"}"));
    ts_put(path, "a", event(6, "user.message", "{\"content\":\"count the tests instead\"}"));
    ts_sync(f->db, NULL, f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "messages=1\n"));
    assert_non_null(strstr(d, "count the tests instead"));
    assert_null(strstr(d, "list the tests"));
    free(d);

    /* replaced by another file at the same path */
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    ts_put(tmp, "w", event(1, "user.message", "{\"content\":\"fresh start\"}"));
    assert_int_equal(rename(tmp, path), 0);
    ts_sync(f->db, NULL, f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);

    /* deleted: the session stays */
    assert_int_equal(unlink(path), 0);
    ts_sync(f->db, NULL, f->home, &rep);
    assert_int_equal(rep.files_seen, 0);
    d = ts_dump(f->db, 80);
    assert_non_null(strstr(d, "fresh start"));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(golden_home_syncs_as_expected, setup, ts_fixture_drop),
        cmocka_unit_test(events_expand_to_messages),
        cmocka_unit_test_setup_teardown(append_rewind_replace_and_delete, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
