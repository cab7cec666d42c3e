/*
 * Tests for incremental transcript sync on real files and real stores in
 * a temporary directory: append, partial last line, truncate, replace,
 * rewrite, delete, rename, long and malformed lines, the bundled sample
 * archive, and crash consistency (a child running sync is SIGKILLed at
 * random moments; the rerun must give the same store as a clean run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "sync/sync.h"

typedef struct fx {
    char dir[256];
    char claude[300];
    char codex[300];
    char proj[400];
    char db[300];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcpage-test-sync-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->claude, sizeof f->claude, "%s/claude", f->dir);
    snprintf(f->codex, sizeof f->codex, "%s/codex", f->dir);
    snprintf(f->proj, sizeof f->proj, "%s/projects/-home-u-app", f->claude);
    snprintf(f->db, sizeof f->db, "%s/archive.db", f->dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/sessions/2025/01/02'", f->proj, f->codex);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
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
        "fast\"}]}}\n");
    sync_report r;
    sync_once(f, &r, 0, 0);
    assert_int_equal(r.messages_added, 1);
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &s), 0);
    store_session row;
    assert_int_equal(store_session_get(s, "0199a213-81c0-7800-8aa1-bbab2a035a53", &row), 0);
    assert_string_equal(row.source, "codex");
    assert_string_equal(row.project, "tool");
    assert_string_equal(row.model, "gpt-5-codex");
    assert_string_equal(row.git_branch, "dev");
    assert_string_equal(row.title, "make it fast");
    store_session_clear(&row);
    store_close(s);
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
        dadd(&d, "project %lld %s %s %s %lld %lld %s %s\n", (long long)pl.rows[i].id,
             pl.rows[i].name, pl.rows[i].path, pl.rows[i].sources,
             (long long)pl.rows[i].session_count, (long long)pl.rows[i].message_count,
             S(pl.rows[i].first_activity), S(pl.rows[i].last_activity));
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
                dadd(&d, " m %lld %lld %s %s %s %s %d %lld %lld %lld %016llx\n",
                     (long long)m->message_id, (long long)m->ordinal, m->role, S(m->timestamp),
                     S(m->tool_name), S(m->tool_input), m->is_error, (long long)m->line_no,
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

static void run_child_sync(const char *db, const char *claude, const char *codex)
{
    store *s = NULL;
    if (store_open(db, STORE_OPEN_WRITE, &s) < 0)
        _exit(3);
    sync_options o = {
        .claude_home = claude, .codex_home = codex, .hostname = "test", .batch_lines = 7};
    sync_report r;
    int rc = sync_run(s, &o, &r);
    store_close(s);
    _exit(rc < 0 ? 4 : 0);
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
    char claude[600], codex[600], clean[400], crash[400];
    snprintf(claude, sizeof claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(codex, sizeof codex, "%s/examples/archive/codex", MCPAGE_SOURCE_DIR);
    snprintf(clean, sizeof clean, "%s/clean.db", f->dir);
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
    /* MCPAGE_CRASH_ROUNDS=N runs more rounds (default 4). */
    int rounds = 4;
    const char *rounds_env = getenv("MCPAGE_CRASH_ROUNDS");
    if (rounds_env && atoi(rounds_env) > 0)
        rounds = atoi(rounds_env);
    for (int round = 0; round < rounds; round++) {
        snprintf(crash, sizeof crash, "%s/crash%d.db", f->dir, round);
        /* kill 1-3 times at random moments, then let one run finish */
        int times = 1 + rand() % 3;
        for (int k = 0; k < times; k++) {
            pid = fork();
            assert_true(pid >= 0);
            if (pid == 0)
                run_child_sync(crash, claude, codex);
            /* later kills in a round hit a run with less left to do */
            useconds_t delay =
                (useconds_t)((double)rand() / RAND_MAX * clean_s * 0.9 * 1e6 / (k + 1));
            usleep(delay);
            kill(pid, SIGKILL);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (WIFSIGNALED(status))
                kills++;
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
    assert_true(kills > 0);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(append_reads_only_new_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(partial_last_line_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(truncate_and_replace_reparse, setup, teardown),
        cmocka_unit_test_setup_teardown(deleted_and_renamed_files_keep_sessions, setup, teardown),
        cmocka_unit_test_setup_teardown(long_malformed_and_invalid_lines_are_counted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(codex_rollout_session_id_and_facts, setup, teardown),
        cmocka_unit_test_setup_teardown(sample_archive_syncs, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_sync_resumes_to_the_same_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
