/*
 * Tests for Aider (src/sync/sync_aider.c): the golden sample
 * (examples/archive/aider: two runs of a repository, a file with text
 * before its first run, a non-UTF-8 input, code fences holding `>` and
 * `####` lines, usage reports, a failure, two runs in one second and a
 * last line cut short; an empty file) syncs as
 * tests/data/sources/aider.expected; a run is a session, an append
 * reads only the run it reached (the others skipped unread, no session
 * stored again); the file's last message waits until the file settles;
 * history files are found in the archive's project folders in the same
 * pass that brings them; hostile files (a FIFO, a link out of the
 * folder) are named, never read. MCPAGE_UPDATE_GOLDEN=1 rewrites the
 * expected file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync_desc.h"
#include "sync/sync_fold.h"

typedef struct fx {
    char dir[256];
    char home[300]; /* folders the test writes */
    char db[1200];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "aider") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/home", f->dir);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    if (mkdir(f->home, 0700) < 0)
        return -1;
    *state = f;
    return 0;
}

static void load(sync_descs *d, const char *user)
{
    char err[700] = "";
    memset(d, 0, sizeof *d);
    if (sync_descs_parse(d, sync__builtin_sources, strlen(sync__builtin_sources), "built-in", err,
                         sizeof err) != 0)
        fail_msg("the built-in descriptions do not load: %s", err);
    if (user && sync_descs_parse(d, user, strlen(user), "test", err, sizeof err) != 0)
        fail_msg("a test description does not load: %s", err);
}

/* One sync of the sources `names` (NULL-terminated) at their homes. */
static void sync_some(const char *db, const sync_descs *d, const char *const *names,
                      const char *const *homes, int settle, sync_report *rep)
{
    sync_described v[4];
    size_t n = 0;
    for (; names[n]; n++) {
        v[n].desc = sync_descs_find(d, names[n]);
        assert_non_null(v[n].desc);
        v[n].home = homes[n];
    }
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.hostname = "test", .described = v, .ndescribed = n, .settle = settle};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static void sync_aider(const char *db, const sync_descs *d, const char *home, int settle,
                       sync_report *rep)
{
    const char *names[] = {"aider", NULL}, *homes[] = {home, NULL};
    sync_some(db, d, names, homes, settle, rep);
}

static const sync_source_report *source_of(const sync_report *rep, const char *name)
{
    for (int i = 0; i < rep->nsources; i++)
        if (strcmp(rep->sources[i].name, name) == 0)
            return &rep->sources[i];
    fail_msg("no report for source %s", name);
    return NULL;
}

/* The first 16 hex digits of the SHA-256 of a file's resolved path: the
 * part of an Aider session id naming its file. */
static void file_hash(const char *path, char out[17])
{
    char real[4096];
    assert_non_null(realpath(path, real));
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    assert_int_equal(EVP_Digest(real, strlen(real), md, &n, EVP_sha256(), NULL), 1);
    for (unsigned i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* `s` with every `from` replaced by `to` (malloc'd; `s` freed). */
static char *replace(char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
        n++;
    char *out = malloc(strlen(s) + n * tl + 1), *w = out;
    assert_non_null(out);
    const char *p = s;
    for (const char *q = strstr(p, from); q; q = strstr(p, from)) {
        memcpy(w, p, (size_t)(q - p));
        w += q - p;
        memcpy(w, to, tl);
        w += tl;
        p = q + fl;
    }
    strcpy(w, p);
    free(s);
    return out;
}

/* ---- the golden sample ----------------------------------------------------- */

static void golden(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, NULL);
    char home[600], expected[600], path[700];
    snprintf(home, sizeof home, "%s/examples/archive/aider", MCPAGE_SOURCE_DIR);
    snprintf(expected, sizeof expected, "%s/sources/aider.expected", MCPAGE_TEST_DATA);
    sync_report rep;
    sync_aider(f->db, &d, home, 1, &rep);
    const sync_source_report *sr = source_of(&rep, "aider");
    assert_int_equal(sr->found, 1);
    assert_int_equal(sr->files, 5); /* shop: 2 runs; notes: text before, 2 runs; empty: none */
    assert_int_equal(sr->files_failed, 0);
    assert_int_equal(rep.lines_malformed, 0);
    assert_int_equal(sr->warnings, 0);
    char *got = ts_dump(f->db, 160);
    /* the checkout's place out of it: its folder, and the hash of each file's path */
    char real[4096], h[17];
    assert_non_null(realpath(home, real));
    static const char *const repos[] = {"shop", "notes"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s/.aider.chat.history.md", home, repos[i]);
        file_hash(path, h);
        char tag[40];
        snprintf(tag, sizeof tag, "<%s>", repos[i]);
        got = replace(got, h, tag);
    }
    got = replace(got, real, "<home>");
    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        ts_put("/tmp/mcpage-sources-aider-got.txt", "w", got);
        fail_msg("the store differs from %s (got: /tmp/mcpage-sources-aider-got.txt)", expected);
    }
    free(want);
    /* what a user typed is all there: the Latin-1 bytes as U+FFFD, never dropped */
    assert_non_null(
        strstr(got, "Latin-1 bytes from an old terminal: caf\xef\xbf\xbd na\xef\xbf\xbdve"));
    /* a fence's `>` and `####` lines are the answer's, the user's line after it is the user's */
    assert_non_null(strstr(got, "assistant 2025-11-30T22:05:09Z tool=- input=- call=- err=0"));
    assert_non_null(strstr(got, "#### A level-4 heading"));
    /* the text before the first run is a session of its own */
    assert_non_null(strstr(got, "Notes kept by hand before aider ran here."));
    free(got);
    /* nothing changed: every run skipped without reading */
    sync_aider(f->db, &d, home, 1, &rep);
    assert_int_equal(rep.files_seen, 5);
    assert_int_equal(rep.files_unchanged, 5);
    assert_int_equal(rep.messages_added, 0);
    sync_descs_free(&d);
}

/* ---- rendering ------------------------------------------------------------- */

static char *render(const char *md, int complete)
{
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(sync__aider_render(md, strlen(md), complete, &out, &n), 0);
    return out;
}

static void rendering_hard_cases(void **state)
{
    (void)state;
    /* empty, blank, no header */
    char *r = render("", 1);
    assert_string_equal(r, "{\"aider\":\"run\"}\n");
    free(r);
    r = render("just text, no header\n", 1);
    assert_non_null(strstr(r, "\"role\":\"assistant\",\"text\":\"just text, no header\""));
    free(r);
    /* a multi-line input, the <blank> input dropped, a Cost line without its `> ` */
    r = render("# aider chat started at 2025-01-02 03:04:05\n\n"
               "#### first line  \n#### second line  \n\nanswer\n\n"
               "> Tokens: 2.8k sent, 1.9k cache write, 2.2k cache hit, 96 received.\n"
               "Cost: $0.0052 message, $0.0175 session.  \n\n#### <blank>  \n",
               1);
    assert_non_null(strstr(r, "\"text\":\"first line\\nsecond line\""));
    assert_null(strstr(r, "<blank>"));
    assert_non_null(strstr(r, "\"usage\":{\"input\":2800,\"cache_creation\":1900,"
                              "\"cache_read\":2200,\"output\":96,\"cost\":0.0052"));
    assert_non_null(strstr(r, "\"started\":\"2025-01-02 03:04:05\""));
    free(r);
    /* the last message, not complete: held without its newline, the cut line left out */
    r = render("#### do it  \n\nfirst line of the answer\nI will start by readi", 0);
    assert_non_null(strstr(r, "\"role\":\"user\",\"text\":\"do it\"}\n"));
    assert_non_null(strstr(r, "first line of the answer\"}"));
    assert_int_equal(r[strlen(r) - 1], '}');
    assert_null(strstr(r, "readi"));
    free(r);
    /* a user's input a blank line ended is whole, even unsettled */
    r = render("#### do it  \n\n", 0);
    assert_int_equal(r[strlen(r) - 1], '\n');
    free(r);
    r = render("#### do it  \n\nI will start by readi", 1);
    assert_non_null(strstr(r, "I will start by readi"));
    free(r);
    /* an unclosed fence in the answer does not take the user's next input */
    r = render("#### q  \n\n```python\nx = 1\n\n#### typed next  \n", 1);
    assert_non_null(strstr(r, "\"role\":\"user\",\"text\":\"typed next\""));
    free(r);
    /* NUL and bad bytes in a line */
    static const char bad[] = "#### a\xff\xfe b  \n";
    r = render(bad, 1);
    assert_non_null(strstr(r, "a\xef\xbf\xbd\xef\xbf\xbd b"));
    free(r);
}

/* ---- incremental ----------------------------------------------------------- */

static void append_reads_only_the_run_it_reached(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, NULL);
    char repo[600], path[700];
    snprintf(repo, sizeof repo, "%s/repo", f->home);
    assert_int_equal(mkdir(repo, 0700), 0);
    snprintf(path, sizeof path, "%s/.aider.chat.history.md", repo);
    ts_put(
        path, "w",
        "\n# aider chat started at 2025-12-01 10:00:00\n\n> Model: gpt-4o with diff edit format  \n"
        "\n#### first question  \n\nfirst answer\n\n");
    ts_put(path, "a",
           "\n# aider chat started at 2025-12-02 10:00:00\n\n#### second question  \n\nsecond "
           "answer\n\n"
           "> Tokens: 1.4k sent, 48 received. Cost: $0.00021 message, $0.00021 session.  \n");
    sync_report rep;
    sync_aider(f->db, &d, f->home, 1, &rep);
    assert_int_equal(rep.sessions_added, 2);
    assert_int_equal(rep.messages_added, 6);
    char h[17], sid[80];
    file_hash(path, h);
    snprintf(sid, sizeof sid, "aider:%s-20251202100000", h);
    int64_t first = ts_message_id(f->db, sid, 0);
    assert_true(first > 0);
    char *dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "title=second question"));
    assert_non_null(strstr(dump, "model=gpt-4o"));
    free(dump);

    /* the last run grows: only it is read, its messages appended */
    ts_put(path, "a", "\n#### third question  \n\nthird answer\n\n");
    sync_aider(f->db, &d, f->home, 1, &rep);
    assert_int_equal(rep.files_seen, 2);
    assert_int_equal(rep.files_unchanged, 1);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 2);
    assert_int_equal(ts_message_id(f->db, sid, 0), first);

    /* a new run: a new session, the others unread */
    ts_put(path, "a", "\n# aider chat started at 2025-12-03 10:00:00\n\n#### fourth  \n\nok\n");
    sync_aider(f->db, &d, f->home, 1, &rep);
    assert_int_equal(rep.files_unchanged, 2);
    assert_int_equal(rep.sessions_added, 1);
    assert_int_equal(rep.messages_added, 2);
    assert_int_equal(rep.files_reparsed, 0);

    /* not settled: the last message waits; it comes once the file settles */
    ts_put(path, "a", "\n#### fifth  \n\nhalf an ans");
    sync_aider(f->db, &d, f->home, 0, &rep);
    assert_int_equal(rep.messages_added, 1); /* the input; "ok" was stored before */
    assert_int_equal(rep.files_reparsed, 0);
    dump = ts_dump(f->db, 80);
    assert_null(strstr(dump, "half an ans"));
    free(dump);
    ts_put(path, "a", "wer\n");
    sync_aider(f->db, &d, f->home, 0, &rep);
    assert_int_equal(rep.messages_added, 0);
    sync_aider(f->db, &d, f->home, 1, &rep); /* --settle: taken now */
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(rep.files_reparsed, 0);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "half an answer"));
    free(dump);

    /* the file replaced by a shorter one: its runs read again, nothing lost */
    ts_put(path, "w", "\n# aider chat started at 2025-12-01 10:00:00\n\n#### first question  \n\n");
    sync_aider(f->db, &d, f->home, 1, &rep);
    assert_int_equal(rep.files_failed, 0);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "third answer")); /* the archive keeps what it had */
    free(dump);
    sync_descs_free(&d);
}

/* ---- where the files are found --------------------------------------------- */

/* A project another agent's session names: its history file is found in the
 * same pass, at the repository's root above the session's folder. */
static void found_in_project_folders(void **state)
{
    fx *f = *state;
    char repo[600], sub[700], path[800], logs[700], cmd[3000], user[4000];
    snprintf(repo, sizeof repo, "%s/work/app", f->dir);
    snprintf(sub, sizeof sub, "%s/src", repo);
    snprintf(logs, sizeof logs, "%s/logs", f->dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/.git' '%s' '%s'", repo, sub, logs);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/.aider.chat.history.md", repo);
    ts_put(path, "w",
           "\n# aider chat started at 2025-12-01 10:00:00\n\n#### from aider  \n\nyes\n");
    snprintf(path, sizeof path, "%s/s1.jsonl", logs);
    snprintf(cmd, sizeof cmd,
             "{\"role\":\"user\",\"text\":\"from another agent\",\"cwd\":\"%s\"}\n", sub);
    ts_put(path, "w", cmd);
    snprintf(user, sizeof user,
             "[{\"name\": \"logs\", \"home\": \"%s\", \"files\": \"*.jsonl\", \"rules\": "
             "[{\"message\": {\"role\": \"/role\", \"content\": \"/text\"}, "
             "\"session\": {\"cwd\": \"/cwd\"}}]}]",
             logs);
    sync_descs d;
    load(&d, user);
    /* aider's own folders hold nothing */
    const char *names[] = {"logs", "aider", NULL}, *homes[] = {logs, f->home, NULL};
    sync_report rep;
    sync_some(f->db, &d, names, homes, 1, &rep);
    assert_int_equal(source_of(&rep, "aider")->files, 1);
    char *dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "from aider"));
    assert_non_null(strstr(dump, "source=aider project=app"));
    free(dump);
    sync_descs_free(&d);
}

/* MCPAGE_AIDER_DIRS lists folders; a FIFO or a link out of the folder
 * where the history file should be is named, never read. */
static void listed_folders_and_hostile_files(void **state)
{
    fx *f = *state;
    char a[300], b[300], c[300], cmd[2400], list[1300];
    snprintf(a, sizeof a, "%s/a", f->dir);
    snprintf(b, sizeof b, "%s/b/deep", f->dir);
    snprintf(c, sizeof c, "%s/c", f->dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/repo' '%s/x/y/z' '%s' && mkfifo '%s/repo/.aider.chat.history.md' && "
             "ln -s /etc/passwd '%s/.aider.chat.history.md' && "
             "printf '#### deep\\n' > '%s/x/y/z/.aider.chat.history.md' && "
             "printf '\\n# aider chat started at 2025-12-01 10:00:00\\n\\n#### found\\n' > "
             "'%s/x/.aider.chat.history.md'",
             a, b, c, a, c, b, b);
    assert_int_equal(system(cmd), 0);
    snprintf(list, sizeof list, "%s:%s/b:%s:/nonexistent", a, f->dir, c);
    sync_descs d;
    load(&d, NULL);
    setenv("MCPAGE_AIDER_DIRS", list, 1);
    char home[SYNC_PATH_MAX], origin[64];
    assert_int_equal(sync_desc_home(sync_descs_find(&d, "aider"), NULL, home, sizeof home, origin,
                                    sizeof origin),
                     0);
    unsetenv("MCPAGE_AIDER_DIRS");
    assert_string_equal(home, list);
    assert_string_equal(origin, "env MCPAGE_AIDER_DIRS");
    time_t t0 = time(NULL);
    sync_report rep;
    sync_aider(f->db, &d, home, 1, &rep);
    assert_true(time(NULL) - t0 < 10); /* the FIFO never opened for blocking */
    const sync_source_report *sr = source_of(&rep, "aider");
    assert_int_equal(sr->files, 1); /* b/deep/x (2 levels under b); not x/y/z (4) */
    assert_int_equal(sr->warnings, 2);
    char *dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "found"));
    assert_null(strstr(dump, "deep\n"));
    assert_null(strstr(dump, "root:"));
    free(dump);
    sync_descs_free(&d);
}

int main(void)
{
    setenv("TZ", "UTC", 1); /* aider's headers are local time */
    tzset();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(golden, setup, ts_fixture_drop),
        cmocka_unit_test(rendering_hard_cases),
        cmocka_unit_test_setup_teardown(append_reads_only_the_run_it_reached, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(found_in_project_folders, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(listed_folders_and_hostile_files, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
