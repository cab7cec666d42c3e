/*
 * Tests for incremental transcript sync on real files and real stores in
 * a temporary directory: append, partial last line, truncate, replace,
 * rewrite, delete, rename, long and malformed lines, the bundled sample
 * archive, and crash consistency (a child running sync is SIGKILLed at
 * random moments; the rerun must give the same store as a clean run),
 * and concurrent syncs from several machines. Run on SQLite here and on
 * PostgreSQL by test_sync_pg.c.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_internal.h"
#include "sync/sync_parse.h"
#include "support/store_backends.h"
#include "support/sync_support.h"

/* documents whose index tokens were made on the parse thread (sqlite_snippet.c) */
extern int64_t store_sqlite__docs_replayed;

typedef struct fx {
    char dir[256];
    char claude[300];
    char codex[300];
    char proj[400];
    char db[1200]; /* the store's spec: a file or a postgres:// URL */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "sync") < 0)
        return -1;
    snprintf(f->claude, sizeof f->claude, "%s/claude", f->dir);
    snprintf(f->codex, sizeof f->codex, "%s/codex", f->dir);
    snprintf(f->proj, sizeof f->proj, "%s/projects/-home-u-app", f->claude);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/sessions/2025/01/02'", f->proj, f->codex);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

static void put(const char *path, const char *mode, const char *text)
{
    FILE *fp = fopen(path, mode);
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
    assert_int_equal(fclose(fp), 0);
}

static char *user_line(int i, const char *word)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "{\"type\":\"user\",\"sessionId\":\"s1\",\"cwd\":\"/home/u/app\",\"timestamp\":"
             "\"2025-01-02T10:%02d:00Z\",\"message\":{\"role\":\"user\",\"content\":\"%s %d\"}}\n",
             i % 60, word, i);
    return buf;
}

static void sync_once(fx *f, sync_report *rep, size_t line_max, int64_t batch)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.claude_home = f->claude,
                      .codex_home = f->codex,
                      .hostname = "test",
                      .line_max = line_max,
                      .batch_lines = batch};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static int64_t count_messages(fx *f, const char *sid)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_session row;
    int64_t n = -1;
    if (store_session_get(s, sid, &row) == 0) {
        n = row.message_count;
        store_session_clear(&row);
    }
    store_close(s);
    return n;
}

/* Text of message `ordinal` of a session, and a check that its byte
 * window in the raw copy is the line it came from. */
static char *message_text(fx *f, const char *sid, int64_t ordinal)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_messages ms;
    assert_int_equal(store_messages_from(s, sid, ordinal, 1, &ms), 0);
    assert_int_equal(ms.count, 1);
    unsigned char *raw;
    size_t n;
    int64_t total;
    assert_int_equal(
        store_raw_read(s, sid, ms.rows[0].byte_offset, ms.rows[0].byte_length, &raw, &n, &total),
        0);
    assert_int_equal((int64_t)n, ms.rows[0].byte_length);
    assert_int_equal(raw[0], '{');
    assert_int_equal(raw[n - 1], '}');
    free(raw);
    char *t = strdup(ms.rows[0].text);
    store_messages_free(&ms);
    store_close(s);
    return t;
}

static void append_reads_only_new_lines(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    for (int i = 0; i < 3; i++)
        put(path, "a", user_line(i, "hello"));
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_seen, 1);
    assert_int_equal(r.messages_added, 3);
    assert_int_equal(r.sessions_added, 1);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_unchanged, 1);
    assert_int_equal(r.messages_added, 0);
    put(path, "a", user_line(3, "more"));
    put(path, "a", user_line(4, "more"));
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_read, 1);
    assert_int_equal(r.files_reparsed, 0);
    assert_int_equal(r.messages_added, 2);
    assert_int_equal(r.lines_read, 2);
    assert_int_equal(count_messages(f, "s1"), 5);
    char *t = message_text(f, "s1", 4);
    assert_string_equal(t, "more 4");
    free(t);
    /* the session title is the first prompt, the project its cwd */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_session row;
    assert_int_equal(store_session_get(s, "s1", &row), 0);
    assert_string_equal(row.title, "hello 0");
    assert_string_equal(row.project, "app");
    assert_string_equal(row.source, "claude");
    assert_string_equal(row.hostname, "test");
    assert_string_equal(row.started_at, "2025-01-02T10:00:00Z");
    assert_string_equal(row.ended_at, "2025-01-02T10:04:00Z");
    store_session_clear(&row);
    store_messages ms;
    assert_int_equal(store_messages_from(s, "s1", 0, 10, &ms), 0);
    for (size_t i = 0; i < ms.count; i++)
        assert_int_equal(ms.rows[i].line_no, (int64_t)i + 1);
    store_messages_free(&ms);
    store_close(s);
}

static void partial_last_line_waits(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    put(path, "w", user_line(0, "one"));
    put(path, "a", "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"tw");
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_partial, 1);
    assert_int_equal(r.lines_malformed, 0);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_unchanged, 1);
    put(path, "a", "o\"}}\n");
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_partial, 0);
    char *t = message_text(f, "s1", 1);
    assert_string_equal(t, "two");
    free(t);
}

static void truncate_and_replace_reparse(void **state)
{
    fx *f = *state;
    char path[600], tmp[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    snprintf(tmp, sizeof tmp, "%s/new.tmp", f->dir);
    for (int i = 0; i < 5; i++)
        put(path, "a", user_line(i, "old"));
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(count_messages(f, "s1"), 5);
    /* truncated: shorter than what was consumed */
    put(path, "w", user_line(0, "short"));
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_reparsed, 1);
    assert_int_equal(count_messages(f, "s1"), 1);
    char *t = message_text(f, "s1", 0);
    assert_string_equal(t, "short 0");
    free(t);
    /* replaced: a new inode at the same path */
    put(tmp, "w", user_line(0, "fresh"));
    put(tmp, "a", user_line(1, "fresh"));
    assert_int_equal(rename(tmp, path), 0);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_reparsed, 1);
    assert_int_equal(count_messages(f, "s1"), 2);
    t = message_text(f, "s1", 1);
    assert_string_equal(t, "fresh 1");
    free(t);
    /* rewritten in place, longer, different first bytes */
    FILE *fp = fopen(path, "r+");
    assert_non_null(fp);
    const char *l0 = user_line(0, "XXXXX");
    assert_int_equal(fwrite(l0, 1, strlen(l0), fp), strlen(l0));
    fclose(fp);
    put(path, "a", user_line(2, "tail"));
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_reparsed, 1);
    assert_int_equal(count_messages(f, "s1"), 3);
    t = message_text(f, "s1", 0);
    assert_string_equal(t, "XXXXX 0");
    free(t);
    /* no duplicates anywhere: the search index agrees */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    int64_t n;
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "old"}, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "fresh"}, &n), 0);
    assert_int_equal(n, 1);
    store_close(s);
}

static void deleted_and_renamed_files_keep_sessions(void **state)
{
    fx *f = *state;
    char path[600], moved_dir[600], moved[700];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    for (int i = 0; i < 4; i++)
        put(path, "a", user_line(i, "keep"));
    sync_report r;
    sync_once(f, &r, 0, 0);
    /* renamed into another project directory: same session, nothing new */
    snprintf(moved_dir, sizeof moved_dir, "%s/projects/-home-u-renamed", f->claude);
    assert_int_equal(mkdir(moved_dir, 0700), 0);
    snprintf(moved, sizeof moved, "%s/s1.jsonl", moved_dir);
    assert_int_equal(rename(path, moved), 0);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_seen, 1);
    assert_int_equal(r.messages_added, 0);
    assert_int_equal(r.files_reparsed, 0);
    assert_int_equal(count_messages(f, "s1"), 4);
    /* grows after the rename: continues */
    put(moved, "a", user_line(4, "after"));
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    /* deleted: the archive keeps everything */
    assert_int_equal(unlink(moved), 0);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_seen, 0);
    assert_int_equal(count_messages(f, "s1"), 5);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    unsigned char *raw;
    size_t n;
    int64_t total;
    assert_int_equal(store_raw_read(s, "s1", 0, 1 << 20, &raw, &n, &total), 0);
    assert_int_equal((int64_t)n, total);
    assert_true(n > 100);
    int found = 0;
    for (size_t i = 0; i + 7 <= n; i++)
        found |= memcmp(raw + i, "after 4", 7) == 0;
    assert_true(found);
    free(raw);
    store_close(s);
}

static void long_malformed_and_invalid_lines_are_counted(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    put(path, "w", user_line(0, "good"));
    put(path, "a", "{not json\n");
    char *big = malloc(6000);
    memset(big, 'x', 5998);
    big[5998] = '\n';
    big[5999] = 0;
    put(path, "a", big);
    free(big);
    put(path, "a",
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}\n");
    put(path, "a", "\n");
    put(path, "a", user_line(5, "good"));
    sync_report r;
    sync_once(f, &r, 1000, 0);
    assert_int_equal(r.lines_malformed, 1);
    assert_int_equal(r.lines_too_long, 1);
    assert_int_equal(r.messages_added, 3);
    assert_true(r.nexamples >= 2);
    assert_non_null(strstr(r.examples[0], "s1.jsonl:2:"));
    assert_non_null(strstr(r.examples[1], "s1.jsonl:3:"));
    char *t = message_text(f, "s1", 1);
    assert_string_equal(t, "bad \xEF\xBF\xBD byte");
    free(t);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_messages ms;
    assert_int_equal(store_messages_from(s, "s1", 2, 1, &ms), 0);
    assert_int_equal(ms.rows[0].line_no, 6);
    store_messages_free(&ms);
    store_close(s);
}

static void session_row(fx *f, const char *sid, store_session *row)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    assert_int_equal(store_session_get(s, sid, row), 0);
    store_close(s);
}

static void codex_rollout_session_id_and_facts(void **state)
{
    fx *f = *state;
    char path[700];
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-02T10-00-00-0199a213-81c0-7800-8aa1-"
             "bbab2a035a53.jsonl",
             f->codex);
    put(path, "w",
        "{\"timestamp\":\"2025-01-02T10:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a213-81c0-7800-8aa1-bbab2a035a53\",\"cwd\":\"/home/u/tool\",\"git\":{\"branch\":"
        "\"dev\"}}}\n"
        "{\"timestamp\":\"2025-01-02T10:00:01Z\",\"type\":\"turn_context\",\"payload\":{"
        "\"model\":\"gpt-5-codex\"}}\n"
        "{\"timestamp\":\"2025-01-02T10:00:02Z\",\"type\":\"response_item\",\"payload\":{\"type\":"
        "\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"make it "
        "fast\"}]}}\n"
        /* the UI's copy of the same message: not stored twice */
        "{\"timestamp\":\"2025-01-02T10:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"user_message\",\"message\":\"make it fast\"}}\n");
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    store_session row;
    session_row(f, "0199a213-81c0-7800-8aa1-bbab2a035a53", &row);
    assert_string_equal(row.source, "codex");
    assert_string_equal(row.project, "tool");
    assert_string_equal(row.model, "gpt-5-codex");
    assert_string_equal(row.git_branch, "dev");
    assert_string_equal(row.title, "make it fast");
    store_session_clear(&row);
}

/* Shapes of other Codex versions: a fork written as UI events only, which
 * also carries its parent's session_meta; a mid-2025 rollout without
 * envelopes, timed on its first line only. And Claude titles: the user's
 * /rename beats the agent's title, which beats the first prompt. */
static void codex_forks_untimed_items_and_claude_titles(void **state)
{
    fx *f = *state;
    char path[700];
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-02T11-00-00-0199a001-0000-7000-8000-"
             "00000000c41d.jsonl",
             f->codex);
    put(path, "w",
        "{\"timestamp\":\"2025-01-02T11:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a001-0000-7000-8000-00000000c41d\",\"forked_from_id\":\"0199a000-0000-7000-8000-"
        "000000000002\",\"cwd\":\"/home/u/fork\",\"git\":{\"branch\":\"child\"}}}\n"
        "{\"timestamp\":\"2025-01-02T11:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a000-0000-7000-8000-000000000002\",\"cwd\":\"/home/u/elsewhere\",\"git\":{"
        "\"branch\":\"parent\"}}}\n"
        "{\"timestamp\":\"2025-01-02T11:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"user_message\",\"message\":\"update the pins\"}}\n"
        "{\"timestamp\":\"2025-01-02T11:00:09Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"agent_message\",\"message\":\"pins updated\"}}\n");
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-07-03T18-50-18-0094c5f9-8c02-4bf9-a22d-"
             "340f144ee5ee.jsonl",
             f->codex);
    put(path, "w",
        "{\"id\":\"0094c5f9-8c02-4bf9-a22d-340f144ee5ee\",\"timestamp\":\"2025-07-03T18:50:18Z\","
        "\"instructions\":null,\"git\":{\"branch\":\"main\"}}\n"
        "{\"record_type\":\"state\"}\n"
        "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
        "\"what is this repo\"}]}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
        "\"text\":\"a Docker project\"}]}\n");
    char cpath[700];
    snprintf(cpath, sizeof cpath, "%s/t1.jsonl", f->proj);
    put(cpath, "w",
        "{\"type\":\"user\",\"sessionId\":\"t1\",\"cwd\":\"/home/u/app\",\"timestamp\":"
        "\"2025-01-02T10:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"draft plan\"}}\n"
        "{\"type\":\"custom-title\",\"customTitle\":\"first name\",\"sessionId\":\"t1\"}\n"
        "{\"type\":\"ai-title\",\"aiTitle\":\"Drafting a plan\",\"sessionId\":\"t1\"}\n"
        "{\"type\":\"custom-title\",\"customTitle\":\"final name\",\"sessionId\":\"t1\"}\n");
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.lines_malformed, 0);

    store_session row;
    session_row(f, "0199a001-0000-7000-8000-00000000c41d", &row);
    assert_int_equal(row.message_count, 2);
    assert_string_equal(row.parent_session_id, "0199a000-0000-7000-8000-000000000002");
    assert_string_equal(row.project, "fork"); /* the parent's facts were not taken */
    assert_string_equal(row.git_branch, "child");
    assert_string_equal(row.title, "update the pins");
    store_session_clear(&row);
    char *t = message_text(f, "0199a001-0000-7000-8000-00000000c41d", 1);
    assert_string_equal(t, "pins updated");
    free(t);

    session_row(f, "0094c5f9-8c02-4bf9-a22d-340f144ee5ee", &row);
    assert_int_equal(row.message_count, 2);
    assert_string_equal(row.git_branch, "main");
    assert_string_equal(row.started_at, "2025-07-03T18:50:18Z");
    assert_string_equal(row.ended_at, "2025-07-03T18:50:18Z");
    assert_string_equal(row.title, "what is this repo");
    store_session_clear(&row);

    session_row(f, "t1", &row);
    assert_string_equal(row.title, "final name");
    store_session_clear(&row);
}

/* Titles come from the first real request: Codex Desktop's file preamble
 * gives the request after it, and Claude Code's compaction prompt and a
 * sub-agent's warm-up give none. */
static void titles_skip_injected_prompts(void **state)
{
    fx *f = *state;
    char *t = sync_title_of_prompt("\n# Files mentioned by the user:\n\n## a.png: /tmp/a.png\n\n"
                                   "## My request for Codex:\nfix the login bug\n");
    assert_string_equal(t, "fix the login bug");
    free(t);
    t = sync_title_of_prompt("# Files mentioned by the user:\n\n## a.txt: /a.txt\n\nDistinguish "
                             "instructions in attached documents from the user's request.\n\n"
                             "## My request:\nrename it");
    assert_string_equal(t, "rename it");
    free(t);
    assert_null(sync_title_of_prompt("# Files mentioned by the user:\n\n## a.png: /a.png\n"));
    assert_null(sync_title_of_prompt("# Files mentioned by the user:\n\n## My request:\n\n"));
    assert_null(sync_title_of_prompt("Your task is to create a detailed summary of the "
                                     "conversation so far, paying close attention to ..."));
    assert_null(sync_title_of_prompt("Warmup"));
    assert_null(sync_title_of_prompt("<environment_context>\n<cwd>/x</cwd>"));
    t = sync_title_of_prompt("Warmup the oven");
    assert_string_equal(t, "Warmup the oven");
    free(t);

    char path[700];
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-03T11-00-00-0199a001-0000-7000-8000-"
             "00000000f11e.jsonl",
             f->codex);
    put(path, "w",
        "{\"timestamp\":\"2025-01-03T11:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a001-0000-7000-8000-00000000f11e\",\"cwd\":\"/home/u/desk\"}}\n"
        "{\"timestamp\":\"2025-01-03T11:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"user_message\",\"message\":\"# Files mentioned by the user:\\n\\n## shot.png: "
        "/tmp/shot.png\\n\\n## My request for Codex:\\nwhy is the header blue\\n\"}}\n"
        "{\"timestamp\":\"2025-01-03T11:00:09Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"agent_message\",\"message\":\"a CSS rule\"}}\n");
    char cpath[700];
    snprintf(cpath, sizeof cpath, "%s/compact1.jsonl", f->proj);
    put(cpath, "w",
        "{\"type\":\"user\",\"sessionId\":\"compact1\",\"cwd\":\"/home/u/app\",\"timestamp\":"
        "\"2025-01-03T10:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"Your task is to "
        "create a detailed summary of the conversation so far, paying close attention to the "
        "user's explicit requests.\"}}\n"
        "{\"type\":\"user\",\"sessionId\":\"compact1\",\"cwd\":\"/home/u/app\",\"timestamp\":"
        "\"2025-01-03T10:00:05Z\",\"message\":{\"role\":\"user\",\"content\":\"tidy the "
        "readme\"}}\n");
    snprintf(cpath, sizeof cpath, "%s/warm1.jsonl", f->proj);
    put(cpath, "w",
        "{\"type\":\"user\",\"sessionId\":\"warm1\",\"cwd\":\"/home/u/app\",\"timestamp\":"
        "\"2025-01-03T10:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"Warmup\"}}\n");
    sync_report r;
    sync_once(f, &r, 0, 0);
    store_session row;
    session_row(f, "0199a001-0000-7000-8000-00000000f11e", &row);
    assert_string_equal(row.title, "why is the header blue");
    store_session_clear(&row);
    session_row(f, "compact1", &row);
    assert_string_equal(row.title, "tidy the readme");
    store_session_clear(&row);
    session_row(f, "warm1", &row);
    assert_null(row.title);
    store_session_clear(&row);
}

/* The 2025 TypeScript Codex CLI wrote sessions/rollout-<date>-<uuid>.json,
 * one pretty-printed document rewritten at each save: read as JSONL, its
 * items timed by the session, and a save that adds items adds only them. */
static void codex_legacy_json_rollouts(void **state)
{
    fx *f = *state;
    char path[700], bad[700];
    snprintf(path, sizeof path,
             "%s/sessions/rollout-2025-05-05-0187df2e-dbd3-4fb3-a837-8e51233dd60a.json", f->codex);
    const char *head =
        "{\n  \"session\": {\n    \"timestamp\": \"2025-05-05T19:24:54.000Z\",\n    \"id\": "
        "\"0187df2e-dbd3-4fb3-a837-8e51233dd60a\",\n    \"instructions\": \"\"\n  },\n"
        "  \"items\": [\n"
        "    {\"role\": \"user\", \"content\": [{\"type\": \"input_text\", \"text\": \"list the "
        "files\"}], \"type\": \"message\"},\n"
        "    {\"type\": \"function_call\", \"name\": \"shell\", \"arguments\": "
        "\"{\\\"command\\\":[\\\"ls\\\"]}\", \"call_id\": \"x1\"},\n"
        "    {\"type\": \"function_call_output\", \"call_id\": \"x1\", \"output\": "
        "\"{\\\"output\\\":\\\"a.txt\\\\n\\\",\\\"metadata\\\":{\\\"exit_code\\\":0}}\"}";
    char doc[4096];
    snprintf(doc, sizeof doc, "%s\n  ]\n}\n", head);
    put(path, "w", doc);
    snprintf(bad, sizeof bad,
             "%s/sessions/rollout-2025-05-06-0187df2e-0000-4000-8000-00000000000b.json", f->codex);
    put(bad, "w", "{\"session\": {\"id\": \"x\"}, \"items\": [1, 2"); /* cut short */
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 3);
    assert_int_equal(r.lines_malformed, 1); /* the cut file, reported, nothing stored */
    store_session row;
    session_row(f, "0187df2e-dbd3-4fb3-a837-8e51233dd60a", &row);
    assert_int_equal(row.message_count, 3);
    assert_string_equal(row.title, "list the files");
    assert_string_equal(row.started_at, "2025-05-05T19:24:54.000Z");
    store_session_clear(&row);
    char *t = message_text(f, "0187df2e-dbd3-4fb3-a837-8e51233dd60a", 1);
    assert_string_equal(t, "[tool_use shell] ls");
    free(t);
    t = message_text(f, "0187df2e-dbd3-4fb3-a837-8e51233dd60a", 2);
    assert_string_equal(t, "a.txt\n");
    free(t);
    assert_int_equal(count_messages(f, "0187df2e-0000-4000-8000-00000000000b"), -1);

    /* unchanged: skipped; saved again with one more item: read on from there */
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 0);
    assert_int_equal(r.files_reparsed, 0);
    snprintf(doc, sizeof doc,
             "%s,\n    {\"type\": \"message\", \"role\": \"assistant\", \"content\": [{\"type\": "
             "\"output_text\", \"text\": \"one file: a.txt\"}]}\n  ]\n}\n",
             head);
    put(path, "w", doc);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.files_reparsed, 0);
    t = message_text(f, "0187df2e-dbd3-4fb3-a837-8e51233dd60a", 3);
    assert_string_equal(t, "one file: a.txt");
    free(t);
}

/* Codex moves an archived conversation's rollout from sessions/ to
 * archived_sessions/: read on from where the old path stopped. */
static void codex_archived_rollouts_are_read_on(void **state)
{
    fx *f = *state;
    char from[700], dir[700], to[800];
    snprintf(from, sizeof from,
             "%s/sessions/2025/01/02/rollout-2025-01-02T12-00-00-0199b000-0000-7000-8000-"
             "0000000000aa.jsonl",
             f->codex);
    const char *line1 =
        "{\"timestamp\":\"2025-01-02T12:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199b000-0000-7000-8000-0000000000aa\",\"cwd\":\"/home/u/tool\"}}\n"
        "{\"timestamp\":\"2025-01-02T12:00:01Z\",\"type\":\"response_item\",\"payload\":{\"type\":"
        "\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"first\"}]}}"
        "\n";
    put(from, "w", line1);
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    snprintf(dir, sizeof dir, "%s/archived_sessions", f->codex);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(to, sizeof to,
             "%s/rollout-2025-01-02T12-00-00-0199b000-0000-7000-8000-0000000000aa.jsonl", dir);
    assert_int_equal(rename(from, to), 0);
    put(to, "a",
        "{\"timestamp\":\"2025-01-02T12:00:05Z\",\"type\":\"response_item\",\"payload\":{\"type\":"
        "\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":"
        "\"second\"}]}}\n");
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.files_reparsed, 0);
    assert_int_equal(count_messages(f, "0199b000-0000-7000-8000-0000000000aa"), 2);
    char *t = message_text(f, "0199b000-0000-7000-8000-0000000000aa", 1);
    assert_string_equal(t, "second");
    free(t);
}

static void sample_archive_syncs(void **state)
{
    fx *f = *state;
    snprintf(f->claude, sizeof f->claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(f->codex, sizeof f->codex, "%s/examples/archive/codex", MCPAGE_SOURCE_DIR);
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_seen, 45);
    assert_int_equal(r.files_failed, 0);
    assert_int_equal(r.lines_malformed, 2);
    assert_int_equal(r.lines_partial, 1);
    assert_true(r.messages_added > 1000);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_stats st;
    assert_int_equal(store_stats_get(s, &st), 0);
    assert_int_equal(st.sessions, 45);
    assert_int_equal(st.projects, 4);
    store_sessions l;
    store_page pg = {.limit = 100};
    assert_int_equal(store_sessions_list(s, NULL, &pg, &l), 0);
    int subagents = 0;
    for (size_t i = 0; i < l.count; i++)
        if (l.rows[i].parent_session_id) {
            subagents++;
            assert_non_null(strstr(l.rows[i].session_id, ":agent-"));
        }
    assert_int_equal(subagents, 1);
    /* every raw byte read back (compressed in the store: issue 35) is the
     * transcript file's byte, in windows of any size */
    int whole = 0;
    for (size_t i = 0; i < l.count; i++) {
        const store_session *row = &l.rows[i];
        FILE *fp = row->source_path ? fopen(row->source_path, "rb") : NULL;
        if (!fp)
            continue;
        unsigned char *file = malloc((size_t)row->raw_size + 1);
        size_t fn = fread(file, 1, (size_t)row->raw_size + 1, fp);
        fclose(fp);
        if ((int64_t)fn == row->raw_size && row->raw_size > 0) {
            whole++;
            static const int64_t windows[] = {STORE_RAW_READ_MAX, 8192, 65536 + 3};
            for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
                for (int64_t at = 0; at < row->raw_size; at += windows[w]) {
                    unsigned char *raw = NULL;
                    size_t got = 0;
                    int64_t total = 0;
                    assert_int_equal(
                        store_raw_read(s, row->session_id, at, windows[w], &raw, &got, &total), 0);
                    assert_int_equal(total, row->raw_size);
                    size_t want =
                        (size_t)(row->raw_size - at < windows[w] ? row->raw_size - at : windows[w]);
                    assert_int_equal(got, want);
                    assert_memory_equal(raw, file + at, want);
                    free(raw);
                }
        }
        free(file);
    }
    assert_true(whole >= 40); /* the JSON Lines files: kept byte for byte */
    store_sessions_free(&l);
    /* a file with only a summary line: titled, and in its directory's project */
    store_session row;
    assert_int_equal(store_session_get(s, "0c1f6a4e-summary-only", &row), 0);
    assert_string_equal(row.title, "Ledger rounding fix");
    assert_string_equal(row.project, "ledger-api");
    store_session_clear(&row);
    int64_t n;
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "météo"}, &n), 0);
    assert_true(n > 0);
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "meteo"}, &n), 0);
    assert_true(n > 0); /* diacritics folded */
    assert_int_equal(
        store_search_count(
            s, &(store_search_filter){.query = "日本語のコメントを英語に翻訳してください"}, &n),
        0);
    assert_true(n > 0);
    store_close(s);
}

/* ---- crash consistency -------------------------------------------------- */

typedef struct dumpbuf {
    char *p;
    size_t n, cap;
} dumpbuf;

static void dadd(dumpbuf *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dadd(dumpbuf *d, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    size_t len = (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1;
    if (d->n + len + 1 > d->cap) {
        d->cap = (d->cap + len + 1) * 2;
        d->p = realloc(d->p, d->cap);
    }
    memcpy(d->p + d->n, tmp, len + 1);
    d->n += len;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#define S(x) ((x) ? (x) : "-")
/* Row ids in a dump: PostgreSQL sequences do not roll back, so a killed
 * sync leaves gaps there, and concurrent syncs number rows in the order
 * their batches commit; ids are compared on SQLite, in sequential runs. */
static int hide_ids;
#define ID(x) ((hide_ids || tb_current() == TB_POSTGRES) ? 0LL : (long long)(x))

/* Everything the store says, through its interface (the generation and
 * raw chunk boundaries legitimately differ between runs). */
static char *dump_store(const char *db)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    dumpbuf d = {0};
    store_stats st;
    assert_int_equal(store_stats_get(s, &st), 0);
    dadd(&d, "P%lld S%lld M%lld F%lld R%lld\n", (long long)st.projects, (long long)st.sessions,
         (long long)st.messages, (long long)st.sources, (long long)st.raw_bytes);
    store_projects pl;
    store_page pg = {.limit = 1000};
    store_project_filter pf = {.sort = STORE_PROJECTS_NAME};
    assert_int_equal(store_projects_list(s, &pf, &pg, &pl), 0);
    for (size_t i = 0; i < pl.count; i++)
        dadd(&d, "project %lld %s %s %s %lld %lld %s %s\n", ID(pl.rows[i].id), pl.rows[i].name,
             pl.rows[i].path, pl.rows[i].sources, (long long)pl.rows[i].session_count,
             (long long)pl.rows[i].message_count, S(pl.rows[i].first_activity),
             S(pl.rows[i].last_activity));
    store_projects_free(&pl);
    store_sessions sl;
    assert_int_equal(store_sessions_list(s, NULL, &pg, &sl), 0);
    for (size_t i = 0; i < sl.count; i++) {
        store_session *r = &sl.rows[i];
        dadd(&d, "session %s %s %s %s %s %s %s %s %lld %s %lld\n", r->session_id, r->source,
             S(r->project), S(r->title), S(r->started_at), S(r->ended_at), S(r->model),
             S(r->git_branch), (long long)r->message_count, S(r->parent_session_id),
             (long long)r->raw_size);
        for (int64_t from = 0;;) {
            store_messages ms;
            assert_int_equal(store_messages_from(s, r->session_id, from, 500, &ms), 0);
            for (size_t j = 0; j < ms.count; j++) {
                store_message *m = &ms.rows[j];
                dadd(&d, " m %lld %lld %s %s %s %s %d %lld %lld %lld %016llx\n", ID(m->message_id),
                     (long long)m->ordinal, m->role, S(m->timestamp), S(m->tool_name),
                     S(m->tool_input), m->is_error, (long long)m->line_no,
                     (long long)m->byte_offset, (long long)m->byte_length,
                     (unsigned long long)fnv(m->text, strlen(m->text)));
            }
            size_t got = ms.count;
            if (got)
                from = ms.rows[got - 1].ordinal + 1;
            store_messages_free(&ms);
            if (got < 500)
                break;
        }
        unsigned char *raw;
        size_t n;
        int64_t total;
        assert_int_equal(store_raw_read(s, r->session_id, 0, STORE_RAW_READ_MAX, &raw, &n, &total),
                         0);
        dadd(&d, " raw %zu %016llx\n", n, (unsigned long long)fnv(raw, n));
        free(raw);
    }
    store_sessions_free(&sl);
    store_activity act;
    assert_int_equal(store_activity_get(s, &(store_activity_filter){0}, 100000, &act), 0);
    for (size_t i = 0; i < act.count; i++)
        dadd(&d, "activity %s %s %lld\n", act.rows[i].project, act.rows[i].bucket,
             (long long)act.rows[i].messages);
    store_activity_free(&act);
    int64_t hits;
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "the"}, &hits), 0);
    dadd(&d, "search %lld\n", (long long)hits);
    store_close(s);
    return d.p;
}

/* ---- the transcript cases of tests/data/sync ------------------------------ */

/* A copy of tests/data/sync under the test's folder, every file settled
 * (last changed an hour ago). */
static void copy_cases(fx *f, const char *name, char *root, size_t n)
{
    snprintf(root, n, "%s/%s", f->dir, name);
    char cmd[1600];
    snprintf(cmd, sizeof cmd,
             "cp -a '%s/sync' '%s' && find '%s' -type f -exec touch -d '1 hour ago' {} +",
             MCPAGE_TEST_DATA, root, root);
    assert_int_equal(system(cmd), 0);
}

/* Sets a file's times `seconds` into the past (a file settled that long). */
static void age_file(const char *path, int seconds)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* A pass over the homes of a tree: a walk, or (path not NULL) a named
 * pass over that one file (sync_run_named). */
static void sync_in_tree(const char *db, const char *root, const char *path, sync_report *rep)
{
    char claude[1400], codex[1400];
    snprintf(claude, sizeof claude, "%s/claude", root);
    snprintf(codex, sizeof codex, "%s/codex", root);
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.claude_home = claude, .codex_home = codex, .hostname = "test"};
    char *const paths[] = {(char *)path};
    assert_int_equal(path ? sync_run_named(s, &o, paths, 1, rep) : sync_run(s, &o, rep), 0);
    store_close(s);
}

static void sync_tree(const char *db, const char *root, sync_report *rep)
{
    sync_in_tree(db, root, NULL, rep);
}

static void sync_named(const char *db, const char *root, const char *path, sync_report *rep)
{
    sync_in_tree(db, root, path, rep);
}

/* What a reader sees: per session its project, parent and title, then
 * each message's role, tool and text (one line, cut at 100 bytes). */
static char *readable_dump(const char *db)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    dumpbuf d = {0};
    store_sessions sl;
    store_page pg = {.limit = 1000};
    store_session_filter flt = {.order = STORE_OLDEST};
    assert_int_equal(store_sessions_list(s, &flt, &pg, &sl), 0);
    for (size_t i = 0; i < sl.count; i++) {
        store_session *r = &sl.rows[i];
        dadd(&d, "session %s %s project=%s parent=%s title=%s\n", r->session_id, r->source,
             S(r->project), S(r->parent_session_id), S(r->title));
        store_messages ms;
        assert_int_equal(store_messages_from(s, r->session_id, 0, 1000, &ms), 0);
        for (size_t j = 0; j < ms.count; j++) {
            char text[101];
            snprintf(text, sizeof text, "%s", ms.rows[j].text);
            for (char *p = text; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            dadd(&d, "  %s%s%s %s\n", ms.rows[j].role, ms.rows[j].tool_name ? ":" : "",
                 ms.rows[j].tool_name ? ms.rows[j].tool_name : "", text);
        }
        store_messages_free(&ms);
    }
    store_sessions_free(&sl);
    store_projects pl;
    store_project_filter pf = {.sort = STORE_PROJECTS_NAME};
    assert_int_equal(store_projects_list(s, &pf, &pg, &pl), 0);
    for (size_t i = 0; i < pl.count; i++)
        dadd(&d, "project %s %s sessions=%lld\n", pl.rows[i].name, pl.rows[i].path,
             (long long)pl.rows[i].session_count);
    store_projects_free(&pl);
    store_close(s);
    return d.p;
}

/* tests/data/sync holds one file per case, shaped like the real ones (see
 * docs/transcripts.md): Codex Desktop 0.128 (prompts only as events),
 * Desktop 0.104 (each message as item and event, in both orders), CLI
 * 0.42 (items only, a git origin and no cwd), an events-only sub-agent
 * thread (no cwd, no origin), a finished Claude session without its last
 * newline, and two projects' agent-aa84377.jsonl. The store must read as
 * tests/data/sync.expected (MCPAGE_UPDATE_GOLDEN=1 rewrites it). */
static void transcript_cases_sync_as_expected(void **state)
{
    fx *f = *state;
    char root[600], path[600];
    copy_cases(f, "cases", root, sizeof root);
    sync_report r;
    sync_tree(f->db, root, &r);
    assert_int_equal(r.files_failed, 0);
    assert_int_equal(r.lines_malformed, 0);
    assert_int_equal(r.lines_partial, 0);
    assert_int_equal(r.lines_unterminated, 1);
    char *got = readable_dump(f->db);
    snprintf(path, sizeof path, "%s/sync.expected", MCPAGE_TEST_DATA);
    if (getenv("MCPAGE_UPDATE_GOLDEN")) {
        FILE *w = fopen(path, "w");
        assert_non_null(w);
        fputs(got, w);
        fclose(w);
    }
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char want[16384];
    size_t n = fread(want, 1, sizeof want - 1, fp);
    want[n] = 0;
    fclose(fp);
    if (strcmp(want, got) != 0)
        fail_msg("the transcript cases differ from %s:\n%s", path, got);
    /* the words the Desktop user typed are found, once */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    int64_t hits;
    assert_int_equal(
        store_search_count(s, &(store_search_filter){.query = "watering schedule"}, &hits), 0);
    assert_int_equal(hits, 1);
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "backoff"}, &hits), 0);
    assert_int_equal(hits, 1);
    store_close(s);
    /* a second sync reads nothing */
    sync_tree(f->db, root, &r);
    assert_int_equal(r.files_unchanged, r.files_seen);
    assert_int_equal(r.messages_added, 0);
    char *again = readable_dump(f->db);
    assert_string_equal(again, got);
    free(again);
    free(got);
}

typedef struct caselines {
    char path[700];
    char *text;    /* the whole file */
    size_t len;    /* its bytes */
    size_t offset; /* written so far */
} caselines;

/* The same cases written line by line, every file one line further per
 * round, a sync after each line (the Codex copy memory rebuilt at every
 * offset, the unterminated line taken last): the store must equal one
 * sync of the finished files, message for message and byte for byte. */
/* The cases line by line, a sync after each line: a walk, or (named) a
 * named pass over the file that grew, walking when the pass says so as
 * `mcpage serve` does. Returns how many passes were named. */
static int cases_line_by_line(fx *f, int named)
{
    char clean_root[600], root[600], clean[1200];
    copy_cases(f, "clean", clean_root, sizeof clean_root);
    tb_spec(f->dir, "clean", clean, sizeof clean);
    sync_report r;
    sync_tree(clean, clean_root, &r);
    hide_ids = 1;
    char *want = dump_store(clean);
    char *want_text = readable_dump(clean);

    copy_cases(f, "lines", root, sizeof root);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "find '%s' -type f | sort", root);
    FILE *ls = popen(cmd, "r");
    assert_non_null(ls);
    caselines c[16];
    int nc = 0;
    while (nc < 16 && fgets(c[nc].path, sizeof c[nc].path, ls)) {
        c[nc].path[strcspn(c[nc].path, "\n")] = 0;
        FILE *in = fopen(c[nc].path, "r");
        assert_non_null(in);
        c[nc].text = malloc(1 << 16);
        c[nc].len = fread(c[nc].text, 1, 1 << 16, in);
        fclose(in);
        c[nc].offset = 0;
        put(c[nc].path, "w", "");
        nc++;
    }
    pclose(ls);
    assert_true(nc >= 7);
    int syncs = 0, passes = 0, walk = 1;
    for (int more = 1; more;) {
        more = 0;
        for (int i = 0; i < nc; i++) {
            if (c[i].offset >= c[i].len)
                continue;
            char *nl = memchr(c[i].text + c[i].offset, '\n', c[i].len - c[i].offset);
            size_t end = nl ? (size_t)(nl - c[i].text) + 1 : c[i].len;
            FILE *a = fopen(c[i].path, "a");
            assert_non_null(a);
            fwrite(c[i].text + c[i].offset, 1, end - c[i].offset, a);
            fclose(a);
            c[i].offset = end;
            age_file(c[i].path, 3600);
            if (named && !walk) {
                sync_named(f->db, root, c[i].path, &r);
                walk = r.walk_due;
                passes += r.named;
            } else {
                sync_tree(f->db, root, &r);
                walk = 0;
            }
            assert_int_equal(r.files_failed, 0);
            syncs++;
            more = 1;
        }
    }
    for (int i = 0; i < nc; i++)
        free(c[i].text);
    print_message("line by line: %d syncs, %d named\n", syncs, passes);
    char *got_text = readable_dump(f->db);
    assert_string_equal(got_text, want_text);
    char *got = dump_store(f->db);
    assert_string_equal(got, want);
    hide_ids = 0;
    free(got);
    free(got_text);
    free(want);
    free(want_text);
    return passes;
}

static void transcript_cases_sync_the_same_line_by_line(void **state)
{
    assert_int_equal(cases_line_by_line(*state, 0), 0);
}

/* The same with named passes (what `mcpage serve` runs when its watcher
 * names the file that grew): the same store, and most passes named. */
static void transcript_cases_sync_the_same_named_line_by_line(void **state)
{
    int passes = cases_line_by_line(*state, 1);
    assert_true(passes >= 30);
}

/* What a named pass reads, leaves alone or leaves to a walk, against what
 * a walk does with the same files. */
static void named_passes_decide_as_a_walk(void **state)
{
    fx *f = *state;
    char root[600], proj[700], path[800], other[800], cmd[2000];
    snprintf(root, sizeof root, "%s/named", f->dir);
    snprintf(proj, sizeof proj, "%s/claude/projects/-home-u-app", root);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' '%s/codex/sessions/2025/01/02' '%s/claude/projects/-home-u-web'", proj,
             root, root);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/s1.jsonl", proj);
    for (int i = 0; i < 3; i++)
        put(path, "a", user_line(i, "hello"));
    sync_report r;
    sync_tree(f->db, root, &r);
    assert_int_equal(r.named, 0);
    assert_int_equal(r.messages_added, 3);

    /* a line appended: read, nothing else looked at */
    put(path, "a", user_line(3, "hello"));
    sync_named(f->db, root, path, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.files_named, 1);
    assert_int_equal(r.files_seen, 1);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.walk_due, 0);
    assert_int_equal(count_messages(f, "s1"), 4);
    /* named again unchanged: nothing */
    sync_named(f->db, root, path, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.files_unchanged, 1);
    assert_int_equal(r.messages_added, 0);

    /* a file beside the sessions that is no transcript, and a hidden one: nothing, named */
    snprintf(other, sizeof other, "%s/notes.txt", proj);
    put(other, "w", "not a transcript\n");
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.files_seen, 0);

    /* a new session in a file of its own: read by the named pass */
    char s2[800];
    snprintf(s2, sizeof s2, "%s/s2.jsonl", proj);
    put(s2, "w", user_line(1, "fresh"));
    sync_named(f->db, root, s2, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.sessions_added, 1);
    assert_int_equal(r.messages_added, 1);

    /* the same session copied to another project folder: a walk decides which file owns it */
    snprintf(other, sizeof other, "%s/claude/projects/-home-u-web/s2.jsonl", root);
    put(other, "w", user_line(1, "fresh"));
    put(other, "a", user_line(2, "fresh"));
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 0);
    assert_int_equal(r.files_same_session, 1);
    assert_int_equal(count_messages(f, "s2"), 2);

    /* the file that owns it now, shrunk (rewritten): a walk */
    put(other, "w", user_line(1, "fresh"));
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 0);

    /* a path of no Claude or Codex session folder: a walk */
    snprintf(other, sizeof other, "%s/elsewhere.jsonl", root);
    put(other, "w", user_line(1, "elsewhere"));
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 0);

    /* a deleted file: nothing read, its session kept, as a walk keeps it */
    assert_int_equal(unlink(path), 0);
    sync_named(f->db, root, path, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.files_seen, 0);
    assert_int_equal(count_messages(f, "s1"), 4);

    /* a Codex rollout appended to, in its day's folder */
    snprintf(other, sizeof other,
             "%s/codex/sessions/2025/01/02/"
             "rollout-2025-01-02T10-00-00-0199a000-0000-7000-8000-000000000009.jsonl",
             root);
    put(other, "w",
        "{\"timestamp\":\"2025-01-02T10:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a000-0000-7000-8000-000000000009\",\"cwd\":\"/home/u/app\"}}\n");
    sync_tree(f->db, root, &r);
    put(other, "a",
        "{\"timestamp\":\"2025-01-02T10:00:01Z\",\"type\":\"response_item\",\"payload\":{"
        "\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
        "\"text\":\"named codex line\"}]}}\n");
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 1);
    assert_int_equal(r.messages_added, 1);

    /* a project folder that is a link (inside the home): a walk */
    snprintf(cmd, sizeof cmd, "ln -s '%s' '%s/claude/projects/-home-u-link'", proj, root);
    assert_int_equal(system(cmd), 0);
    snprintf(other, sizeof other, "%s/claude/projects/-home-u-link/s2.jsonl", root);
    sync_named(f->db, root, other, &r);
    assert_int_equal(r.named, 0);
}

/* A finished session's last line without its newline is archived; when
 * the file grows after all (the newline, then more lines), reading goes
 * on from there: no line twice, none lost, the raw copy the file. */
/* A first sync of freshly copied files: a last line without its newline
 * is held back, and the report names the file and when it will be taken
 * (again on the next sync while it waits); --settle takes a complete one
 * at once, and still names an unfinished one. */
static void held_back_files_are_named_and_settle_takes_them(void **state)
{
    fx *f = *state;
    char path[600], path2[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    put(path, "w", user_line(0, "one"));
    char last[512];
    snprintf(last, sizeof last, "%s", user_line(1, "two"));
    last[strlen(last) - 1] = 0; /* no newline */
    put(path, "a", last);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    sync_report r;
    for (int pass = 0; pass < 2; pass++) {
        sync_once(f, &r, 0, 0);
        assert_int_equal(r.messages_added, pass == 0 ? 1 : 0);
        assert_int_equal(r.held, 1);
        assert_int_equal(r.nheld, 1);
        assert_non_null(strstr(r.held_list[0], "s1.jsonl: its last line has no newline yet: "
                                               "taken at "));
        assert_non_null(strstr(r.held_list[0], "or now with --settle"));
        assert_int_equal(r.held_until, (int64_t)sb.st_mtim.tv_sec + SYNC_SETTLED_SECONDS);
    }
    snprintf(path2, sizeof path2, "%s/s2.jsonl", f->proj);
    put(path2, "w", "{\"type\":\"user\",\"sessionId\":\"s2\",\"mess");
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {
        .claude_home = f->claude, .codex_home = f->codex, .hostname = "test", .settle = 1};
    assert_int_equal(sync_run(s, &o, &r), 0);
    store_close(s);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_unterminated, 1);
    assert_int_equal(count_messages(f, "s1"), 2);
    assert_int_equal(r.held, 1); /* the unfinished one */
    assert_int_equal(r.held_until, 0);
    assert_non_null(strstr(r.held_list[0], "s2.jsonl: its last line is unfinished"));
}

static void unterminated_last_line_is_taken_and_read_on(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/s1.jsonl", f->proj);
    put(path, "w", user_line(0, "one"));
    char last[512];
    snprintf(last, sizeof last, "%s", user_line(1, "two"));
    last[strlen(last) - 1] = 0; /* no newline */
    put(path, "a", last);
    sync_report r;
    sync_once(f, &r, 0, 0); /* just written: waits */
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_partial, 1);
    age_file(path, 120);
    sync_once(f, &r, 0, 0); /* settled: a line */
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_unterminated, 1);
    assert_int_equal(r.lines_partial, 0);
    char *t = message_text(f, "s1", 1);
    assert_string_equal(t, "two 1");
    free(t);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_unchanged, 1);
    /* the writer goes on: the newline, then a line */
    put(path, "a", "\n");
    put(path, "a", user_line(2, "three"));
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    assert_int_equal(r.lines_read, 1);
    assert_int_equal(r.files_reparsed, 0);
    assert_int_equal(count_messages(f, "s1"), 3);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_messages ms;
    assert_int_equal(store_messages_from(s, "s1", 0, 10, &ms), 0);
    assert_int_equal(ms.count, 3);
    for (size_t i = 0; i < ms.count; i++)
        assert_int_equal(ms.rows[i].line_no, (int64_t)i + 1);
    store_messages_free(&ms);
    unsigned char *raw;
    size_t n;
    int64_t total;
    assert_int_equal(store_raw_read(s, "s1", 0, 1 << 20, &raw, &n, &total), 0);
    FILE *fp = fopen(path, "r");
    char file[2048];
    size_t fl = fread(file, 1, sizeof file, fp);
    fclose(fp);
    assert_int_equal(n, fl);
    assert_memory_equal(raw, file, fl);
    free(raw);
    store_session row;
    assert_int_equal(store_session_get(s, "s1", &row), 0);
    assert_int_equal(row.message_count, 3);
    store_session_clear(&row);
    store_close(s);
    t = message_text(f, "s1", 2);
    assert_string_equal(t, "three 2");
    free(t);
}

/* Two files with one session id (a copied project directory): one owns
 * it (the longer), the other is reported and never read; nothing is read
 * again on the next sync. */
static void two_files_with_one_session_are_read_once(void **state)
{
    fx *f = *state;
    char a[600], dir[600], b[700];
    snprintf(a, sizeof a, "%s/s1.jsonl", f->proj);
    for (int i = 0; i < 3; i++)
        put(a, "a", user_line(i, "orig"));
    snprintf(dir, sizeof dir, "%s/projects/-home-u-copy", f->claude);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(b, sizeof b, "%s/s1.jsonl", dir);
    put(b, "w", user_line(0, "orig"));
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_seen, 2);
    assert_int_equal(r.files_same_session, 1);
    assert_int_equal(count_messages(f, "s1"), 3);
    for (int k = 0; k < 2; k++) {
        sync_once(f, &r, 0, 0);
        assert_int_equal(r.files_reparsed, 0);
        assert_int_equal(r.files_read, 0);
        assert_int_equal(r.messages_added, 0);
        assert_int_equal(r.files_same_session, 1);
    }
    assert_int_equal(count_messages(f, "s1"), 3);
}

/* Older Claude sub-agents (agent-<id>.jsonl beside the sessions) are
 * named by their parent session: the same file name in two projects is
 * two sessions. */
static void bare_agent_ids_do_not_collide(void **state)
{
    fx *f = *state;
    char dir[600], path[700];
    const char *projects[] = {"-home-u-app", "-home-u-web"};
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/projects/%s", f->claude, projects[i]);
        mkdir(dir, 0700);
        snprintf(path, sizeof path, "%s/agent-abc1234.jsonl", dir);
        char line[512];
        snprintf(line, sizeof line,
                 "{\"type\":\"user\",\"sessionId\":\"p%d\",\"isSidechain\":true,\"agentId\":"
                 "\"abc1234\",\"cwd\":\"/home/u/%d\",\"message\":{\"role\":\"user\",\"content\":"
                 "\"task %d\"}}\n",
                 i, i, i);
        put(path, "w", line);
    }
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.sessions_added, 2);
    assert_int_equal(r.files_same_session, 0);
    store_session row;
    session_row(f, "p0:agent-abc1234", &row);
    assert_string_equal(row.parent_session_id, "p0");
    assert_int_equal(row.message_count, 1);
    store_session_clear(&row);
    session_row(f, "p1:agent-abc1234", &row);
    assert_string_equal(row.parent_session_id, "p1");
    store_session_clear(&row);
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_unchanged, 2);
}

/* One walk of f's homes with MCPAGE_SYNC_THREADS=`threads`. */
static void discover_threads(fx *f, const char *threads, sync_jobs *js, sync_report *rep)
{
    setenv("MCPAGE_SYNC_THREADS", threads, 1);
    sync_options o = {.claude_home = f->claude, .codex_home = f->codex, .hostname = "test"};
    memset(rep, 0, sizeof *rep);
    *js = (sync_jobs){0};
    assert_int_equal(sync_discover(js, &o, rep), 0);
    unsetenv("MCPAGE_SYNC_THREADS");
}

/*
 * The walk lists Claude's project directories and Codex's days on two
 * threads: it finds what one thread finds, file by file, in path order,
 * with the same refusals (links out of the folder, FIFOs named and
 * skipped) counted and named once each.
 */
static void walk_on_two_threads_finds_what_one_finds(void **state)
{
    fx *f = *state;
    char path[900], target[900];
    snprintf(target, sizeof target, "%s/secret.jsonl", f->dir);
    put(target, "w", user_line(0, "private"));
    for (int p = 0; p < 12; p++) {
        snprintf(path, sizeof path, "%s/projects/-home-u-p%02d/s%02d/subagents", f->claude, p, p);
        char cmd[1000];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path, "%s/projects/-home-u-p%02d/s%02d/subagents/agent-a%d.jsonl",
                 f->claude, p, p, p);
        put(path, "w", user_line(p, "sub"));
        for (int k = 0; k < 5; k++) {
            snprintf(path, sizeof path, "%s/projects/-home-u-p%02d/s%02d-%d.jsonl", f->claude, p, p,
                     k);
            put(path, "w", user_line(k, "claude"));
        }
        snprintf(path, sizeof path, "%s/projects/-home-u-p%02d/out.jsonl", f->claude, p);
        assert_int_equal(symlink(target, path), 0);
        snprintf(path, sizeof path, "%s/projects/-home-u-p%02d/pipe.jsonl", f->claude, p);
        assert_int_equal(mkfifo(path, 0600), 0);
        snprintf(path, sizeof path, "%s/sessions/2025/%02d/%02d", f->codex, 1 + p % 3, 1 + p);
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path,
                 "%s/sessions/2025/%02d/%02d/rollout-2025-01-01T10-00-00-"
                 "00000000-0000-4000-8000-0000000000%02d.jsonl",
                 f->codex, 1 + p % 3, 1 + p, p);
        put(path, "w", "{}\n");
        snprintf(path, sizeof path, "%s/sessions/2025/%02d/%02d/out.jsonl", f->codex, 1 + p % 3,
                 1 + p);
        assert_int_equal(symlink(target, path), 0);
    }
    snprintf(path, sizeof path, "%s/sessions/2025/rollout-top.jsonl", f->codex);
    put(path, "w", "{}\n"); /* above the days: listed before the tasks */
    snprintf(path, sizeof path, "%s/sessions/2025/01/pipe.jsonl", f->codex);
    assert_int_equal(mkfifo(path, 0600), 0);

    sync_jobs one, two;
    sync_report r1, r2;
    discover_threads(f, "1", &one, &r1);
    discover_threads(f, "2", &two, &r2);
    /* 12 x (5 sessions, 1 sub-agent) + 12 rollouts and one above the days */
    assert_int_equal(one.n, 12 * 6 + 12 + 1);
    assert_int_equal(two.n, one.n);
    for (size_t i = 0; i < one.n; i++) {
        const sync_job *a = &one.v[i], *b = &two.v[i];
        if (i > 0)
            assert_true(strcmp(one.v[i - 1].path, a->path) < 0);
        assert_string_equal(b->path, a->path);
        assert_string_equal(b->session_id, a->session_id);
        assert_int_equal(b->source, a->source);
        assert_int_equal(b->subagent, a->subagent);
        assert_int_equal(b->statted, 1);
        assert_int_equal(a->statted, 1);
        assert_int_equal(b->sb.inode, a->sb.inode);
        assert_int_equal(b->sb.size, a->sb.size);
        if (a->parent)
            assert_string_equal(b->parent, a->parent);
        if (a->project_dir)
            assert_string_equal(b->project_dir, a->project_dir);
        assert_null(strstr(a->path, "out.jsonl"));
        assert_null(strstr(a->path, "pipe.jsonl"));
    }
    for (int k = 0; k < 2; k++) {
        const sync_report *r = k ? &r2 : &r1;
        assert_int_equal(r->links_outside, 24);
        assert_int_equal(r->warnings, 24 + 13); /* the links, then the FIFOs named */
        assert_int_equal(r->nwarnings, 24 + 13);
        assert_int_equal(r->dirs_unreadable, 0);
        assert_true(r->claude_found && r->codex_found);
    }
    int links = 0, fifos = 0;
    for (int i = 0; i < r2.nwarnings; i++) {
        assert_string_equal(r2.warning_list[i], r1.warning_list[i]); /* one order */
        links += strstr(r2.warning_list[i], "out.jsonl: a link out of") != NULL;
        fifos += strstr(r2.warning_list[i], "pipe.jsonl: a FIFO") != NULL;
    }
    assert_int_equal(links, 24);
    assert_int_equal(fifos, 13);
    for (int i = 0; i < r2.nsources; i++) {
        assert_string_equal(r2.sources[i].name, r1.sources[i].name);
        assert_int_equal(r2.sources[i].warnings, r1.sources[i].warnings);
        assert_string_equal(r2.sources[i].warning, r1.sources[i].warning);
    }
    sync_jobs_free(&one);
    sync_jobs_free(&two);
}

/* A transcript linked to a file outside the agent's folder is not read
 * (a link inside it is); the report says so without printing the file. */
static void links_out_of_the_agent_folder_are_not_followed(void **state)
{
    fx *f = *state;
    char outside[600], link[600], inside[600], link2[600];
    snprintf(outside, sizeof outside, "%s/secret.jsonl", f->dir);
    put(outside, "w", user_line(0, "private words"));
    snprintf(link, sizeof link, "%s/evil.jsonl", f->proj);
    assert_int_equal(symlink(outside, link), 0);
    snprintf(inside, sizeof inside, "%s/projects/real.jsonl.txt", f->claude);
    put(inside, "w", user_line(0, "linked inside"));
    snprintf(link2, sizeof link2, "%s/good.jsonl", f->proj);
    assert_int_equal(symlink(inside, link2), 0);
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.links_outside, 1);
    assert_int_equal(r.files_seen, 1);
    assert_int_equal(count_messages(f, "evil"), -1);
    assert_int_equal(count_messages(f, "good"), 1);
    /* named in a warning (sync_warn), never read */
    assert_int_equal(r.warnings, 1);
    assert_non_null(strstr(r.warning_list[0], "claude: "));
    assert_non_null(strstr(r.warning_list[0], "evil.jsonl: a link out of"));
    for (int i = 0; i < r.nexamples; i++)
        assert_null(strstr(r.examples[i], "private"));
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    int64_t n;
    assert_int_equal(store_search_count(s, &(store_search_filter){.query = "private"}, &n), 0);
    assert_int_equal(n, 0);
    store_close(s);
}

/*
 * A project folder and a transcript that cannot be read are counted and
 * named with the system's words. As root, permission bits stop nothing,
 * so the sync then runs in a child that has dropped to uid/gid 65534
 * (nobody): a real EACCES from the kernel, not an injected one.
 */
static void unreadable_folders_and_files_are_reported(void **state)
{
    fx *f = *state;
    char locked[600], file[600], cmd[1400];
    snprintf(locked, sizeof locked, "%s/projects/-home-u-locked", f->claude);
    assert_int_equal(mkdir(locked, 0700), 0);
    snprintf(cmd, sizeof cmd, "%s/x.jsonl", locked);
    put(cmd, "w", user_line(0, "hidden"));
    snprintf(file, sizeof file, "%s/closed.jsonl", f->proj);
    put(file, "w", user_line(0, "closed"));
    int root = geteuid() == 0;
    if (root) {
        snprintf(cmd, sizeof cmd, "chown -R 65534:65534 '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(chmod(locked, 0), 0);
    assert_int_equal(chmod(file, 0), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (root && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(5);
        store *s = NULL;
        if (store_open(f->db, STORE_OPEN_WRITE, &s) < 0)
            _exit(3);
        sync_options o = {.claude_home = f->claude, .codex_home = f->codex, .hostname = "test"};
        sync_report r;
        int rc = sync_run(s, &o, &r);
        store_close(s);
        if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r)
            _exit(6);
        _exit(rc < 0 ? 4 : 0);
    }
    close(fds[1]);
    sync_report r;
    assert_int_equal(read(fds[0], &r, sizeof r), (ssize_t)sizeof r);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    chmod(locked, 0700);
    chmod(file, 0600);
    assert_int_equal(r.dirs_unreadable, 1);
    assert_int_equal(r.files_failed, 1);
    int dir_named = 0, file_named = 0;
    for (int i = 0; i < r.nwarnings; i++)
        dir_named |= strstr(r.warning_list[i], "-home-u-locked: cannot list this folder: "
                                               "Permission denied") != NULL;
    for (int i = 0; i < r.nexamples; i++) {
        file_named |=
            strstr(r.examples[i], "closed.jsonl") && strstr(r.examples[i], "(Permission denied)");
        assert_null(strstr(r.examples[i], "()"));
    }
    assert_true(dir_named);
    assert_true(file_named);
}

/* Codex sessions without a cwd: the project of their git origin (without
 * the credentials in it), else one named "unknown". */
static void codex_sessions_without_cwd_get_a_project(void **state)
{
    fx *f = *state;
    char path[700];
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-02T10-00-00-0199a213-0000-7800-8aa1-"
             "0000000000a1.jsonl",
             f->codex);
    put(path, "w",
        "{\"timestamp\":\"2025-01-02T10:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a213-0000-7800-8aa1-0000000000a1\",\"git\":{\"repository_url\":\"https://u:tok@"
        "github.com/acme/rocket.git\"}}}\n"
        "{\"timestamp\":\"2025-01-02T10:00:02Z\",\"type\":\"response_item\",\"payload\":{\"type\":"
        "\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"go\"}]}}"
        "\n");
    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-02T11-00-00-0199a213-0000-7800-8aa1-"
             "0000000000a2.jsonl",
             f->codex);
    put(path, "w",
        "{\"timestamp\":\"2025-01-02T11:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":"
        "\"0199a213-0000-7800-8aa1-0000000000a2\"}}\n"
        "{\"timestamp\":\"2025-01-02T11:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
        "\"user_message\",\"message\":\"hi\"}}\n");
    sync_report r;
    sync_once(f, &r, 0, 0); /* live files: no project yet */
    store_session row;
    session_row(f, "0199a213-0000-7800-8aa1-0000000000a1", &row);
    assert_null(row.project);
    store_session_clear(&row);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -exec touch -d '1 hour ago' {} +", f->codex);
    assert_int_equal(system(cmd), 0);
    sync_once(f, &r, 0, 0);
    session_row(f, "0199a213-0000-7800-8aa1-0000000000a1", &row);
    assert_string_equal(row.project, "rocket");
    store_session_clear(&row);
    session_row(f, "0199a213-0000-7800-8aa1-0000000000a2", &row);
    assert_string_equal(row.project, "unknown");
    store_session_clear(&row);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_projects pl;
    store_page pg = {.limit = 100};
    store_project_filter pf = {.sort = STORE_PROJECTS_NAME};
    assert_int_equal(store_projects_list(s, &pf, &pg, &pl), 0);
    assert_int_equal(pl.count, 2);
    assert_string_equal(pl.rows[0].name, "rocket");
    assert_string_equal(pl.rows[0].path, "github.com/acme/rocket");
    assert_string_equal(pl.rows[1].name, "unknown");
    store_projects_free(&pl);
    store_close(s);
}

/* `mcpage sync` with no agent folder says where it looked and how to
 * point it elsewhere. */
static void sync_without_agent_folders_says_where_it_looked(void **state)
{
    fx *f = *state;
    const char *bin = getenv("MCPAGE_BIN");
    if (!bin) {
        print_message("MCPAGE_BIN unset: skipped\n");
        return;
    }
    char cmd[1600], out[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' sync --db '%s/cli.db' --claude-home '%s/none-c' --codex-home '%s/none-x' 2>&1",
             bin, f->dir, f->dir, f->dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    assert_int_equal(pclose(p), 0);
    char want[700];
    snprintf(want, sizeof want, "%s/none-c/projects", f->dir);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "%s/none-x/sessions", f->dir);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "--claude-home DIR"));
    assert_non_null(strstr(out, "MCPAGE_CODEX_HOME"));
}

static void run_child_sync_as(const char *db, const char *claude, const char *codex,
                              const char *host)
{
    store *s = NULL;
    if (store_open(db, STORE_OPEN_WRITE, &s) < 0)
        _exit(3);
    sync_options o = {
        .claude_home = claude, .codex_home = codex, .hostname = host, .batch_lines = 7};
    sync_report r;
    int rc = sync_run(s, &o, &r);
    store_close(s);
    _exit(rc < 0 ? 4 : 0);
}

static void run_child_sync(const char *db, const char *claude, const char *codex)
{
    run_child_sync_as(db, claude, codex, "test");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void killed_sync_resumes_to_the_same_store(void **state)
{
    fx *f = *state;
    char claude[600], codex[600], clean[1200], crash[1200];
    snprintf(claude, sizeof claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(codex, sizeof codex, "%s/examples/archive/codex", MCPAGE_SOURCE_DIR);
    tb_spec(f->dir, "clean", clean, sizeof clean);
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        run_child_sync(clean, claude, codex);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    double clean_s = now_s() - t0;
    char *want = dump_store(clean);

    unsigned seed = (unsigned)getpid();
    const char *env = getenv("MCPAGE_CRASH_SEED");
    if (env)
        seed = (unsigned)strtoul(env, NULL, 10);
    srand(seed);
    int kills = 0;
    /* MCPAGE_CRASH_ROUNDS=N runs more rounds (default 4; 2 on PostgreSQL,
     * which pays a round trip per statement, batches of 7 lines here). */
    int rounds = tb_current() == TB_POSTGRES ? 2 : 4;
    const char *rounds_env = getenv("MCPAGE_CRASH_ROUNDS");
    if (rounds_env && atoi(rounds_env) > 0)
        rounds = atoi(rounds_env);
    for (int round = 0; round < rounds; round++) {
        /* A round whose kills all came after its run had finished (the
         * clean run, first of the process, can be slower than the later
         * ones) tested no crash: it starts again on a new store with
         * shorter delays, up to four times. */
        for (int again = 0; again < 5; again++) {
            char name[32];
            snprintf(name, sizeof name, "crash%d_%d", round, again);
            tb_spec(f->dir, name, crash, sizeof crash);
            /* kill 1-3 times at random moments, then let one run finish */
            int times = 1 + rand() % 3, landed = 0;
            for (int k = 0; k < times; k++) {
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0)
                    run_child_sync(crash, claude, codex);
                /* later kills in a round hit a run with less left to do */
                useconds_t delay = (useconds_t)((double)rand() / RAND_MAX * clean_s * 0.9 * 1e6 /
                                                (k + 1) / (1 << again));
                usleep(delay);
                kill(pid, SIGKILL);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (WIFSIGNALED(status))
                    landed++;
            }
            kills += landed;
            if (landed)
                break;
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            run_child_sync(crash, claude, codex);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        char *got = dump_store(crash);
        if (strcmp(want, got) != 0) {
            FILE *w = fopen("/tmp/mcpage-crash-want.txt", "w");
            FILE *g = fopen("/tmp/mcpage-crash-got.txt", "w");
            if (w && g) {
                fputs(want, w);
                fputs(got, g);
            }
            if (w)
                fclose(w);
            if (g)
                fclose(g);
        }
        if (strcmp(want, got) != 0)
            fail_msg("round %d (seed %u): the store after kills differs from a clean run", round,
                     seed);
        free(got);
    }
    print_message("crash test: %d kills (seed %u, clean run %.2f s)\n", kills, seed, clean_s);
    free(want);
    assert_true(kills > 0);
}

/* Two sync processes at once into one store. */
static void sync_pair(const char *db, const char *c1, const char *x1, const char *h1,
                      const char *c2, const char *x2, const char *h2)
{
    pid_t a = fork();
    assert_true(a >= 0);
    if (a == 0)
        run_child_sync_as(db, c1, x1, h1);
    pid_t b = fork();
    assert_true(b >= 0);
    if (b == 0)
        run_child_sync_as(db, c2, x2, h2);
    int st = 0;
    assert_int_equal(waitpid(a, &st, 0), a);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(waitpid(b, &st, 0), b);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Several machines sync into one shared store at the same time: over the
 * same tree (same host: nothing counted twice), over different trees
 * (each adds its part), and one tree seen from two hosts (sessions keep
 * their ids; each host's source files are recorded apart). Every result
 * must equal one clean sync. */
static void concurrent_syncs_equal_one_clean_sync(void **state)
{
    fx *f = *state;
    char claude[600], codex[600], clean[1200], db[1200];
    snprintf(claude, sizeof claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(codex, sizeof codex, "%s/examples/archive/codex", MCPAGE_SOURCE_DIR);
    tb_spec(f->dir, "clean", clean, sizeof clean);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        run_child_sync(clean, claude, codex);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    hide_ids = 1;
    char *want = dump_store(clean);

    for (int round = 0; round < (tb_current() == TB_POSTGRES ? 1 : 2); round++) {
        tb_spec(f->dir, "same", db, sizeof db);
        sync_pair(db, claude, codex, "test", claude, codex, "test");
        char *got = dump_store(db);
        if (strcmp(want, got) != 0)
            fail_msg("same tree, round %d: two concurrent syncs differ from one clean sync", round);
        free(got);
    }

    tb_spec(f->dir, "split", db, sizeof db);
    sync_pair(db, claude, NULL, "test", NULL, codex, "test");
    char *got = dump_store(db);
    assert_string_equal(got, want);
    free(got);

    /* the same files read on two machines: the sessions once, the source
     * files twice (keyed by host and path) */
    tb_spec(f->dir, "hosts", db, sizeof db);
    sync_pair(db, claude, codex, "m1", claude, codex, "m2");
    got = dump_store(db);
    const char *want_rest = strchr(want, '\n');
    const char *got_rest = strchr(got, '\n');
    assert_non_null(want_rest);
    assert_non_null(got_rest);
    assert_string_equal(got_rest, want_rest);
    store *s = NULL;
    store_stats a, b;
    assert_int_equal(store_open(clean, STORE_OPEN_READONLY, &s), 0);
    assert_int_equal(store_stats_get(s, &a), 0);
    store_close(s);
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    assert_int_equal(store_stats_get(s, &b), 0);
    store_source src;
    assert_int_equal(store_source_get(s, "m1", "/nonexistent", &src), MCPAGE_ENOTFOUND);
    store_close(s);
    assert_int_equal(b.messages, a.messages);
    assert_int_equal(b.sessions, a.sessions);
    assert_int_equal(b.sources, 2 * a.sources);
    free(got);
    free(want);
    hide_ids = 0;
}

/* Three small files a, b, c of one project, 2, 3 and 2 lines. */
static void put_three_sessions(fx *f)
{
    const char *names[] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.jsonl", f->proj, names[k]);
        for (int i = 0; i < (k == 1 ? 3 : 2); i++)
            put(path, i ? "a" : "w", user_line(i, names[k]));
    }
}

static int64_t store_gen(fx *f)
{
    store *s = NULL;
    int64_t gen = -1;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    assert_int_equal(store_generation(s, &gen), 0);
    store_close(s);
    return gen;
}

/* Small files share one transaction (SQLite: one commit, one generation,
 * for three files); a sync that needs a claim another writer holds
 * commits the files before it first, then waits, then goes on. */
static void files_share_a_transaction_and_commit_before_waiting(void **state)
{
    fx *f = *state;
    put_three_sessions(f);
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 7);
    assert_int_equal(r.sessions_added, 3);
    if (tb_current() == TB_SQLITE)
        assert_int_equal(store_gen(f), 1);

    char other[1200];
    tb_spec(f->dir, "claimed", other, sizeof other);
    store *holder = NULL;
    assert_int_equal(store_open(other, STORE_OPEN_WRITE, &holder), 0);
    assert_int_equal(store_session_lock(holder, "c"), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        run_child_sync(other, f->claude, NULL);
    /* a and b appear while the sync waits for c */
    store *s = NULL;
    int64_t na = -1, nb = -1, nc = -1;
    for (double t0 = now_s(); now_s() - t0 < 30 && (na != 2 || nb != 3);) {
        usleep(20000);
        if (store_open(other, STORE_OPEN_READONLY, &s) < 0)
            continue;
        store_session row;
        na = store_session_get(s, "a", &row) == 0 ? row.message_count : -1;
        if (na >= 0)
            store_session_clear(&row);
        nb = store_session_get(s, "b", &row) == 0 ? row.message_count : -1;
        if (nb >= 0)
            store_session_clear(&row);
        nc = store_session_get(s, "c", &row) == 0 ? row.message_count : -1;
        if (nc >= 0)
            store_session_clear(&row);
        store_close(s);
    }
    assert_int_equal(na, 2);
    assert_int_equal(nb, 3);
    assert_int_equal(nc, -1);
    assert_int_equal(store_session_unlock(holder, "c"), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    store_close(holder);
    assert_int_equal(store_open(other, STORE_OPEN_READONLY, &s), 0);
    store_session row;
    assert_int_equal(store_session_get(s, "c", &row), 0);
    assert_int_equal(row.message_count, 2);
    store_session_clear(&row);
    store_close(s);
}

/* A file that fails inside a shared transaction takes the files before
 * it down with its rollback: they are read again on their own, so they
 * are stored and counted once; the failed file is named and read by the
 * next sync. */
static void a_failed_file_keeps_the_files_before_it(void **state)
{
    fx *f = *state;
    put_three_sessions(f);
    sync_report r;
    sync__fail_line = 3; /* b's last line */
    sync_once(f, &r, 0, 0);
    sync__fail_line = 0;
    assert_int_equal(r.files_failed, 1);
    /* what was committed (issue 38: the summary counted rolled-back lines):
     * a's messages once, not once more for the rollback; none of b's */
    assert_int_equal(r.messages_added, 2 + 2);
    assert_int_equal(r.files_read, 3);
    assert_true(r.nexamples >= 1 && strstr(r.examples[0], "b.jsonl:3: file not synced"));
    assert_int_equal(count_messages(f, "a"), 2);
    assert_int_equal(count_messages(f, "b"), -1);
    assert_int_equal(count_messages(f, "c"), 2);

    sync_once(f, &r, 0, 0);
    assert_int_equal(r.files_failed, 0);
    assert_int_equal(r.files_read, 1);
    assert_int_equal(r.messages_added, 3);
    assert_int_equal(count_messages(f, "b"), 3);
}

/* One value of an SQL query on the SQLite store, as text. */
static char *sql_text(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *v = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* A digest of every value of an SQL query's rows on the SQLite store:
 * "rows:hash", to compare two stores' index or token maps byte for byte. */
static char *sql_digest(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    uint64_t d = 1469598103934665603ULL;
    long long rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const void *b = sqlite3_column_blob(st, i);
            uint64_t v = fnv(b ? b : "", (size_t)sqlite3_column_bytes(st, i));
            d = (d ^ v) * 1099511628211ULL;
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    char *out = malloc(64);
    snprintf(out, 64, "%lld:%016llx", rows, (unsigned long long)d);
    return out;
}

/* SQLite: the full-text index and the token maps of two stores are the
 * same bytes (tokens made on a parse thread, or by FTS5's own pass). */
static void same_index(const char *a, const char *b)
{
    static const char *const q[] = {"SELECT id, block FROM messages_fts_data ORDER BY id",
                                    "SELECT id, sz FROM messages_fts_docsize ORDER BY id",
                                    "SELECT * FROM message_tokmap ORDER BY message_id"};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char *x = sql_digest(a, q[i]), *y = sql_digest(b, q[i]);
        assert_string_equal(y, x);
        assert_true(i == 2 || strtol(x, NULL, 10) > 0); /* texts long enough for a map: some */
        free(x);
        free(y);
    }
}

/* A session's count, time span and messages per day are added up per
 * batch (SQLite); they must be what its messages say, over more days than
 * are kept pending, out of order, with a timestamp too long to keep, one
 * whose first ten characters are not ten bytes, and several sessions. */
static void session_counts_match_their_messages(void **state)
{
    fx *f = *state;
    const char *odd[] = {("2025-01-05T00:00:00.000000000000000000000000000000000000000000000000"
                          "00000000000Z"),
                         "\uff12\uff10\uff12\uff15-01-07T00:00:00Z", "2025-01", "2025-01-0"};
    for (int k = 0; k < 2; k++) {
        char path[600], line[600];
        snprintf(path, sizeof path, "%s/%s.jsonl", f->proj, k ? "t2" : "t1");
        for (int i = 0; i < 16; i++) {
            char ts[200];
            if (i < 12)
                snprintf(ts, sizeof ts, "2025-01-%02dT10:00:00Z", 1 + (i * 7 + k) % 12);
            else
                snprintf(ts, sizeof ts, "%s", odd[i - 12]);
            snprintf(line, sizeof line,
                     "{\"type\":\"user\",\"cwd\":\"/home/u/app\",\"timestamp\":\"%s\","
                     "\"message\":{\"role\":\"user\",\"content\":\"day %d\"}}\n",
                     ts, i);
            put(path, i ? "a" : "w", line);
        }
    }
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 32);
    assert_int_equal(count_messages(f, "t1"), 16);
    if (tb_current() != TB_SQLITE)
        return;
    /* what the sessions and session_days hold, and what the messages say */
    const char *q[][2] = {
        {"SELECT group_concat(s.session_id || ' ' || s.message_count || ' ' || s.started_at || "
         "' ' || s.ended_at, '|') FROM (SELECT * FROM sessions ORDER BY sid) s",
         "SELECT group_concat(x, '|') FROM (SELECT s.session_id || ' ' || count(*) || ' ' || "
         "coalesce(min(nullif(m.timestamp, '')), '') || ' ' || max(m.timestamp) AS x FROM "
         "sessions s JOIN messages m USING (sid) GROUP BY s.sid ORDER BY s.sid)"},
        {"SELECT group_concat(sid || ' ' || day || ' ' || messages, '|') FROM (SELECT * FROM "
         "session_days ORDER BY sid, day)",
         "SELECT group_concat(x, '|') FROM (SELECT sid || ' ' || d || ' ' || count(*) AS x FROM "
         "(SELECT sid, substr(timestamp, 1, 10) AS d FROM messages WHERE "
         "length(CAST(timestamp AS BLOB)) >= 10) GROUP BY sid, d ORDER BY sid, d)"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char *got = sql_text(f->db, q[i][0]), *want = sql_text(f->db, q[i][1]);
        assert_true(strlen(want) > 40);
        assert_string_equal(got, want);
        free(got);
        free(want);
    }
    char *days = sql_text(f->db, "SELECT count(*) FROM session_days");
    assert_string_equal(days, "26"); /* 12, and the full-width one, per session */
    free(days);
}

/* ---- lines parsed ahead (sync_lines.h) ------------------------------------ */

/* A Claude session and a Codex rollout of many chunks each: tool results
 * chunks after their calls (the parse's tool ids), secrets, malformed,
 * blank and too long lines, and a last line without its newline. */
static void put_many_chunks(fx *f)
{
    char path[700];
    snprintf(path, sizeof path, "%s/big.jsonl", f->proj);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    char pad[301];
    memset(pad, 'p', 300);
    pad[300] = 0;
    for (int i = 0; i < 3000; i++) {
        if (i == 1500 || i == 2100) {
            /* too long for a line_max of 2 MiB; then a message longer than
               a chunk's lines are (SYNC_CHUNK_LINE_MAX) */
            size_t n = i == 1500 ? (2u << 20) + 100 : (3u << 19);
            char *big = malloc(n + 1);
            memset(big, 'y', n);
            big[n] = 0;
            if (i == 1500)
                fprintf(fp, "%s\n", big);
            else
                fprintf(fp,
                        "{\"type\":\"user\",\"sessionId\":\"big\",\"message\":{\"role\":"
                        "\"user\",\"content\":\"long %s\"}}\n",
                        big);
            free(big);
        } else if (i % 11 == 0) {
            fprintf(fp, "{not json %d\n", i);
        } else if (i % 13 == 0) {
            fprintf(fp, "   \n");
        } else if (i % 7 == 0) {
            fprintf(fp,
                    "{\"type\":\"assistant\",\"sessionId\":\"big\",\"cwd\":\"/home/u/app\","
                    "\"timestamp\":\"2025-01-02T10:%02d:%02dZ\",\"message\":{\"role\":"
                    "\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_%d\","
                    "\"name\":\"Tool%d\",\"input\":{\"path\":\"src/f%d.c\"}}]}}\n",
                    i / 60 % 60, i % 60, i, i % 5, i);
        } else if (i % 7 == 3 && i >= 70) { /* the result of a call 70 lines (~25 KB) before */
            fprintf(fp,
                    "{\"type\":\"user\",\"sessionId\":\"big\",\"timestamp\":\"2025-01-02T10:%02d:"
                    "%02dZ\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":"
                    "\"tool_result\",\"tool_use_id\":\"toolu_%d\",\"content\":\"out %d %s\"}]}}\n",
                    i / 60 % 60, i % 60, i - 73, i, pad);
        } else {
            fprintf(fp,
                    "{\"type\":\"user\",\"sessionId\":\"big\",\"timestamp\":\"2025-01-02T10:%02d:"
                    "%02dZ\",\"message\":{\"role\":\"user\",\"content\":\"line %d%s %s\"}}\n",
                    i / 60 % 60, i % 60, i, i % 17 == 0 ? " key AKIAABCDEFGHIJKLMNOP" : "", pad);
        }
    }
    fprintf(fp, "{\"type\":\"user\",\"sessionId\":\"big\",\"message\":{\"role\":\"user\","
                "\"content\":\"the last, without its newline\"}}");
    assert_int_equal(fclose(fp), 0);
    age_file(path, 3600);

    snprintf(path, sizeof path,
             "%s/sessions/2025/01/02/rollout-2025-01-02T10-00-00-0199a213-81c0-7800-8aa1-"
             "cccccccccccc.jsonl",
             f->codex);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "{\"timestamp\":\"2025-01-02T10:00:00Z\",\"type\":\"session_meta\",\"payload\":{"
                "\"id\":\"0199a213-81c0-7800-8aa1-cccccccccccc\",\"cwd\":\"/home/u/tool\"}}\n");
    for (int i = 0; i < 2000; i++) {
        if (i % 5 == 0)
            fprintf(fp,
                    "{\"timestamp\":\"2025-01-02T11:00:00Z\",\"type\":\"response_item\","
                    "\"payload\":{\"type\":\"function_call\",\"name\":\"shell%d\",\"arguments\":"
                    "\"{}\",\"call_id\":\"call_%d\"}}\n",
                    i % 3, i);
        else if (i % 5 == 2 && i >= 100)
            fprintf(fp,
                    "{\"timestamp\":\"2025-01-02T11:00:01Z\",\"type\":\"response_item\","
                    "\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"call_%d\","
                    "\"output\":\"done %d %s\"}}\n",
                    i - 102, i, pad);
        else
            fprintf(fp,
                    "{\"timestamp\":\"2025-01-02T11:00:02Z\",\"type\":\"response_item\","
                    "\"payload\":{\"type\":\"message\",\"role\":\"%s\",\"content\":[{\"type\":"
                    "\"input_text\",\"text\":\"say %d %s\"}]}}\n",
                    i % 2 ? "user" : "assistant", i, pad);
    }
    assert_int_equal(fclose(fp), 0);
    age_file(path, 3600);
}

/* Removes the lines that start with `prefix` from a dump, in place. */
static void drop_lines(char *d, const char *prefix)
{
    char *o = d;
    for (char *p = d; *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) != 0) {
            memmove(o, p, n);
            o += n;
        }
        p += n;
    }
    *o = 0;
}

static void sync_threads(fx *f, const char *threads, const char *name, char *db, size_t n,
                         sync_report *rep)
{
    tb_spec(f->dir, name, db, n);
    setenv("MCPAGE_SYNC_THREADS", threads, 1);
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {
        .claude_home = f->claude, .codex_home = f->codex, .hostname = "test", .line_max = 2u << 20};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
    unsetenv("MCPAGE_SYNC_THREADS");
}

/* Two threads: a sync in which a file fails when it reaches line `line`
 * (its transaction, with the files before it, rolled back), then one that
 * reads everything, both into store "failed" (its spec in db). */
static void fail_then_sync_again(fx *f, int64_t line, char *db, size_t n, sync_report *rep)
{
    sync__fail_line = line;
    sync_threads(f, "2", "failed", db, n, rep);
    sync__fail_line = 0;
    assert_int_equal(rep->files_failed, 1);
    sync_threads(f, "2", "failed", db, n, rep);
    assert_int_equal(rep->files_failed, 0);
}

/* Lines parsed on a second thread are stored as one thread stores them:
 * every message, tool name, raw byte and count; and a file that fails in
 * the middle of a chunk (the next one being parsed) is read again whole. */
static void lines_parsed_ahead_store_what_one_thread_stores(void **state)
{
    fx *f = *state;
    put_many_chunks(f);
    char one[1200], two[1200], failed[1200];
    sync_report r1, r2, r3;
    sync_threads(f, "1", "one", one, sizeof one, &r1);
    sync_threads(f, "2", "two", two, sizeof two, &r2);
    assert_int_equal(r1.files_failed, 0);
    assert_true(r1.messages_added > 4000);
    assert_int_equal(r2.messages_added, r1.messages_added);
    assert_int_equal(r2.lines_read, r1.lines_read);
    assert_int_equal(r2.lines_malformed, r1.lines_malformed);
    assert_true(r1.lines_malformed >= 270);
    assert_int_equal(r2.lines_too_long, 1);
    assert_int_equal(r1.lines_too_long, 1);
    assert_int_equal(r2.lines_unterminated, 1);
    int64_t red1 = 0, red2 = 0;
    for (int k = 0; k < REDACT_KINDS; k++) {
        red1 += r1.redacted.n[k];
        red2 += r2.redacted.n[k];
        assert_int_equal(r2.redacted.n[k], r1.redacted.n[k]);
    }
    assert_int_equal(red2, red1);
    assert_int_equal(red1, 106); /* the AKIA keys of i % 17 == 0 lines (not also %7, %11, %13) */
    char *want = dump_store(one);
    char *got = dump_store(two);
    assert_string_equal(got, want);
    if (tb_current() == TB_SQLITE)
        same_index(one, two);
    assert_non_null(strstr(want, "Tool3")); /* results named by calls chunks before */
    assert_non_null(strstr(want, "shell1"));
    free(got);

    /* in line order, the long line's message among them */
    store *s = NULL;
    assert_int_equal(store_open(two, STORE_OPEN_READONLY, &s), 0);
    int64_t long_at = -1, n = 0, line = 0;
    char *last = NULL;
    for (;;) {
        store_messages ms;
        assert_int_equal(store_messages_from(s, "big", n, 500, &ms), 0);
        for (size_t i = 0; i < ms.count; i++, n++) {
            assert_int_equal(ms.rows[i].ordinal, n);
            assert_true(ms.rows[i].line_no > line);
            line = ms.rows[i].line_no;
            if (strncmp(ms.rows[i].text, "long yyy", 8) == 0)
                long_at = line;
            free(last);
            last = strdup(ms.rows[i].text);
        }
        size_t page = ms.count;
        store_messages_free(&ms);
        if (page < 500)
            break;
    }
    assert_true(n > 2000);
    assert_int_equal(long_at, 2101);
    assert_string_equal(last, "the last, without its newline");
    free(last);
    store_close(s);

    /* fails at line 2345 of the Claude file (the rollout has fewer), chunks in,
       then reads it again */
    fail_then_sync_again(f, 2345, failed, sizeof failed, &r3);
    got = dump_store(failed);
    hide_ids = 1;
    free(want);
    want = dump_store(one);
    free(got);
    got = dump_store(failed);
    hide_ids = 0;
    /* the rollout, committed first, made its project first: the activity
       of one day lists the projects in that order */
    drop_lines(want, "activity ");
    drop_lines(got, "activity ");
    assert_string_equal(got, want);
    free(got);
    free(want);
}

/* ---- raw bytes packed on a thread of their own (sync_raw.h) ------------- */

/* 150 small Claude sessions (more than SYNC_RAW_JOBS in one transaction)
 * and one of about 10 MiB (more pieces than SYNC_RAW_HELD), with secrets
 * in their lines. */
static void put_raw_files(fx *f)
{
    char path[700];
    for (int k = 0; k < 150; k++) {
        snprintf(path, sizeof path, "%s/s%03d.jsonl", f->proj, k);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        for (int i = 0; i < 3 + k % 5; i++)
            fprintf(fp,
                    "{\"type\":\"user\",\"sessionId\":\"s%03d\",\"cwd\":\"/home/u/app\","
                    "\"timestamp\":\"2025-01-02T10:00:%02dZ\",\"message\":{\"role\":\"user\","
                    "\"content\":\"small %d line %d%s%s\"}}\n",
                    k, i, k, i, i == 1 ? " key AKIAABCDEFGHIJKLMNOP" : "",
                    i == 2 ? " Na\u00efve caf\u00e9 \u00dcBER stra\u00dfe_x "
                             "\u6f22\u5b57 ReadFile Running"
                           : "");
        assert_int_equal(fclose(fp), 0);
        age_file(path, 3600);
    }
    snprintf(path, sizeof path, "%s/zbig.jsonl", f->proj);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    char words[20001];
    for (int i = 0; i < 20000; i++)
        words[i] = i % 9 == 8 ? ' ' : (char)('a' + (i * 7 + i / 9) % 26);
    words[20000] = 0;
    for (int i = 0; i < 500; i++)
        fprintf(fp,
                "{\"type\":\"user\",\"sessionId\":\"zbig\",\"timestamp\":\"2025-01-03T10:%02d:"
                "%02dZ\",\"message\":{\"role\":\"user\",\"content\":\"big %d%s %s\"}}\n",
                i / 60 % 60, i % 60, i, i % 50 == 0 ? " key AKIAABCDEFGHIJKLMNOP" : "",
                words + i % 97);
    assert_int_equal(fclose(fp), 0);
    age_file(path, 3600);
}

/* The raw copies a packer thread packs are the rows one thread writes:
 * the same chunks (offsets, codecs, bytes) in the same order, redacted,
 * with the same line counts; and a file that fails with other files'
 * raw bytes still in flight rolls them back with their transaction and
 * the next sync stores them all. */
static void raw_bytes_packed_apart_store_what_one_thread_stores(void **state)
{
    fx *f = *state;
    put_raw_files(f);
    char one[1200], two[1200], failed[1200];
    sync_report r1, r2, r3;
    int64_t replayed = __atomic_load_n(&store_sqlite__docs_replayed, __ATOMIC_RELAXED);
    sync_threads(f, "1", "one", one, sizeof one, &r1);
    int64_t replayed_one = __atomic_load_n(&store_sqlite__docs_replayed, __ATOMIC_RELAXED);
    sync_threads(f, "2", "two", two, sizeof two, &r2);
    int64_t replayed_two = __atomic_load_n(&store_sqlite__docs_replayed, __ATOMIC_RELAXED);
    assert_int_equal(r1.files_failed, 0);
    assert_int_equal(r2.files_failed, 0);
    assert_int_equal(r1.sessions_added, 151);
    if (tb_current() == TB_SQLITE) { /* texts tokenized on the parse thread (but a file's first
                                        chunk's, parsed by the storing thread) */
        assert_int_equal(replayed_one, replayed);
        assert_true(replayed_two - replayed_one > 300);
        same_index(one, two);
        char *maps = sql_text(two, "SELECT count(*) FROM message_tokmap");
        assert_true(atoi(maps) >= 400); /* zbig's 20 KB texts, mapped from the tokens replayed */
        free(maps);
    }
    assert_int_equal(r2.messages_added, r1.messages_added);
    char *want = dump_store(one);
    char *got = dump_store(two);
    assert_string_equal(got, want);
    assert_non_null(strstr(want, "session zbig"));
    free(got);

    /* one small session's raw copy: its file, the key redacted */
    store *s = NULL;
    assert_int_equal(store_open(two, STORE_OPEN_READONLY, &s), 0);
    unsigned char *raw = NULL;
    size_t n = 0;
    int64_t total = 0;
    assert_int_equal(store_raw_read(s, "s007", 0, STORE_RAW_READ_MAX, &raw, &n, &total), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/s007.jsonl", f->proj);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char file[4096];
    size_t fn = fread(file, 1, sizeof file, fp);
    fclose(fp);
    assert_int_equal(n, fn);
    assert_int_equal(total, (int64_t)fn);
    assert_null(memmem(raw, n, "AKIAABCDEFGHIJKLMNOP", 20));
    assert_non_null(memmem(file, fn, "AKIAABCDEFGHIJKLMNOP", 20));
    assert_memory_equal(raw, file, 20); /* the first line has no key */
    free(raw);
    assert_int_equal(store_raw_read(s, "zbig", 0, STORE_RAW_READ_MAX, &raw, &n, &total), 0);
    assert_true(total > 9 * 1024 * 1024);
    assert_null(memmem(raw, n, "AKIAABCDEFGHIJKLMNOP", 20));
    free(raw);
    store_close(s);

    if (tb_current() == TB_SQLITE) { /* the rows themselves, and the line counts */
        const char *q = "SELECT count(*) || ' ' || group_concat(sid || ':' || offset || ':' || "
                        "length(data) || ':' || codec || ':' || hex(substr(data, -8)), ' ') "
                        "FROM (SELECT * FROM raw_chunks ORDER BY id)";
        const char *lines = "SELECT group_concat(raw_lines || '/' || raw_size, ' ') FROM "
                            "(SELECT * FROM sessions ORDER BY sid)";
        char *a = sql_text(one, q), *b = sql_text(two, q);
        assert_string_equal(b, a);
        assert_true(strtol(a, NULL, 10) >= 150 + 10); /* zbig: ten chunks or more */
        free(a);
        free(b);
        a = sql_text(one, lines);
        b = sql_text(two, lines);
        assert_string_equal(b, a);
        assert_non_null(strstr(a, " 500/"));
        free(a);
        free(b);
    }

    /* zbig fails at its line 400, after the small files' raw bytes were
       handed over in the same transaction; then everything is read again */
    fail_then_sync_again(f, 400, failed, sizeof failed, &r3);
    hide_ids = 1;
    free(want);
    want = dump_store(one);
    got = dump_store(failed);
    hide_ids = 0;
    drop_lines(want, "activity ");
    drop_lines(got, "activity ");
    assert_string_equal(got, want);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(append_reads_only_new_lines, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(lines_parsed_ahead_store_what_one_thread_stores, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(raw_bytes_packed_apart_store_what_one_thread_stores, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(files_share_a_transaction_and_commit_before_waiting, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(a_failed_file_keeps_the_files_before_it, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(session_counts_match_their_messages, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(partial_last_line_waits, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(truncate_and_replace_reparse, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(deleted_and_renamed_files_keep_sessions, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(long_malformed_and_invalid_lines_are_counted, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(codex_rollout_session_id_and_facts, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(titles_skip_injected_prompts, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(codex_forks_untimed_items_and_claude_titles, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(codex_legacy_json_rollouts, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(codex_archived_rollouts_are_read_on, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(sample_archive_syncs, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(killed_sync_resumes_to_the_same_store, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(concurrent_syncs_equal_one_clean_sync, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(transcript_cases_sync_as_expected, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(transcript_cases_sync_the_same_line_by_line, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(transcript_cases_sync_the_same_named_line_by_line, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(named_passes_decide_as_a_walk, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(held_back_files_are_named_and_settle_takes_them, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(unterminated_last_line_is_taken_and_read_on, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(two_files_with_one_session_are_read_once, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(bare_agent_ids_do_not_collide, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(walk_on_two_threads_finds_what_one_finds, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(links_out_of_the_agent_folder_are_not_followed, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(unreadable_folders_and_files_are_reported, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(codex_sessions_without_cwd_get_a_project, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(sync_without_agent_folders_says_where_it_looked, setup,
                                        ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
