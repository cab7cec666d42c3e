/*
 * Tests for described sources (src/sync/sync_desc.c, sync_engine.c): the
 * built-in descriptions load; bad descriptions are refused with a message
 * naming the field; a user's file adds, changes and turns off agents;
 * homes come from a flag, the environment or the default; the golden
 * sample of each agent (examples/archive/<agent>) syncs as
 * tests/data/sources/<agent>.expected; records of every common shape
 * expand to the right messages; and the incremental rules hold per
 * format family (JSON Lines: append, rewrite, rewind, truncate, delete;
 * JSON documents and sidecars: rewritten in place), with hostile folders
 * (a FIFO, a link out of the home, one id repeated 20,000 times).
 * MCPAGE_UPDATE_GOLDEN=1 rewrites the expected files (review the diff).
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
#include "sync/sync_desc.h"

typedef struct fx {
    char dir[256];
    char home[300]; /* an agent home the test writes */
    char db[1200];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "sources") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/agent", f->dir);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    if (mkdir(f->home, 0700) < 0)
        return -1;
    *state = f;
    return 0;
}

/* Loads descriptions: the built-in ones and the JSON text `user` (or none). */
static void load(sync_descs *d, const char *user)
{
    char err[700] = "";
    memset(d, 0, sizeof *d);
    int rc = sync_descs_parse(d, sync__builtin_sources, strlen(sync__builtin_sources), "built-in",
                              err, sizeof err);
    if (rc != 0)
        fail_msg("the built-in descriptions do not load: %s", err);
    if (user && sync_descs_parse(d, user, strlen(user), "test", err, sizeof err) != 0)
        fail_msg("a test description does not load: %s", err);
}

/* One sync of source `name` (from `d`) at `home` into db. */
static void sync_one(const char *db, const sync_descs *d, const char *name, const char *home,
                     sync_report *rep)
{
    const sync_desc *desc = sync_descs_find(d, name);
    assert_non_null(desc);
    sync_described one = {.desc = desc, .home = home};
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.hostname = "test", .described = &one, .ndescribed = 1};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static const sync_source_report *source_of(const sync_report *rep, const char *name)
{
    for (int i = 0; i < rep->nsources; i++)
        if (strcmp(rep->sources[i].name, name) == 0)
            return &rep->sources[i];
    fail_msg("no report for source %s", name);
    return NULL;
}

/* ---- descriptions --------------------------------------------------------- */

static void builtin_descriptions_load(void **state)
{
    (void)state;
    sync_descs d;
    load(&d, NULL);
    static const char *const names[] = {"openclaude", "qoder", "pi", "omp", "qwen"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const sync_desc *x = sync_descs_find(&d, names[i]);
        if (!x)
            fail_msg("no built-in description of %s", names[i]);
        assert_true(x->home[0] == '~');
        assert_non_null(x->provenance);
    }
    assert_string_equal(sync_descs_find(&d, "openclaude")->writes, "claude");
    assert_string_equal(sync_descs_find(&d, "pi")->id_prefix, "pi:");
    sync_descs_free(&d);
}

/* Each bad description is refused, and the message names the field. */
static void bad_descriptions_name_the_field(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"sources\": 3}", "test: sources: expected {\"sources\": [ ... ]}"},
        {"[{\"name\": \"Bad Name\"}]", "sources[0].name: expected the source's name"},
        {"[{\"name\": \"claude\", \"home\": \"~/x\"}]",
         "\"claude\" is read by mcpage's own reader"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*.jsonl\"}]",
         "sources[0] (x).rules: expected a list of 1 to 64 rules"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*.jsonl\", \"rules\": "
         "[{\"message\": {\"role\": \"/role\"}}]}]",
         "sources[0] (x).rules[0].message.content: missing"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*.jsonl\", \"rules\": "
         "[{\"message\": {\"role\": \"role\", \"content\": \"/c\"}}]}]",
         "rules[0].message.role: \"role\" is not a JSON pointer"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*.jsonl\", \"rules\": "
         "[{\"mesage\": {}}]}]",
         "rules[0].mesage: unknown field (known here: when, message, session, skip)"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*.jsonl\", \"rules\": "
         "[{\"message\": {\"role\": \"/r\", \"content\": \"/c\", \"role_map\": {\"bot\": "
         "\"robot\"}}}]}]",
         "rules[0].message.role_map.bot: must be one of user, assistant, system, tool, skip"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"/abs/*.jsonl\", \"rules\": "
         "[{\"skip\": true}]}]",
         "sources[0] (x).files[0]: \"/abs/*.jsonl\": a glob is relative to the home"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/../*.jsonl\", \"rules\": "
         "[{\"skip\": true}]}]",
         "files[0]: \"a/../*.jsonl\": empty, '.' and '..' steps are not allowed"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/{uid}.jsonl\", \"rules\": "
         "[{\"skip\": true}]}]",
         "a capture is {id}, {parent}, {cwd}, {cwd:url} or {project}"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": {\"glob\": \"a/*.json\", \"layout\": "
         "\"json\"}, \"rules\": [{\"skip\": true}]}]",
         "sources[0] (x).records: missing: a \"json\" layout needs the pointer"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"layout\": \"yaml\", "
         "\"rules\": [{\"skip\": true}]}]",
         "sources[0] (x).layout: expected \"jsonl\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"when\": "
         "{\"/type\": {\"eq\": 1}}, \"skip\": true}]}]",
         "rules[0].when./type: an object here is {\"exists\": true}"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"writes\": \"claude\", \"files\": \"a\"}]",
         "sources[0] (x).files: not used with \"writes\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"writes\": \"markdown\"}]",
         "sources[0] (x).writes: \"markdown\": claude, codex, opencode, vscode-chat, aider or "
         "cursor-ide"},
        {"[{\"name\": \"x\", \"home\": \"relative/dir\", \"writes\": \"claude\"}]",
         "sources[0] (x).home: \"relative/dir\": an absolute path"},
        {"[{\"name\": \"nosuch\", \"enabled\": false}]",
         "sources[0] (nosuch).name: no known source is named \"nosuch\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"message\": "
         "{\"role\": \"/r\", \"content\": \"/c\", \"usage\": {\"inputs\": \"/u\"}}}]}]",
         "rules[0].message.usage.inputs: unknown field"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"layout\": \"json\", \"files\": \"a/*\", "
         "\"records\": \"/m\", \"document\": {\"usage\": {\"input\": \"/i\"}}, \"rules\": "
         "[{\"message\": {\"role\": \"/r\", \"content\": \"/c\"}}]}]",
         "document.usage.by_message: missing"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"layout\": \"json\", \"files\": \"a/*\", "
         "\"records\": \"/m\", \"document\": {\"usage\": {\"by_message\": \"/u\", \"inputs\": "
         "\"/i\"}}, \"rules\": [{\"message\": {\"role\": \"/r\", \"content\": \"/c\"}}]}]",
         "document.usage.inputs: unknown field"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"message\": "
         "{\"role\": \"/r\", \"content\": \"/c/~2\"}}]}]",
         "'~' must be followed by 0 or 1"},
        {"{\"sources\": [], \"sources\": []}", "test:1:"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"session\": "
         "{\"cwd\": {\"find\": \"/c\", \"until\": \")\"}}}]}]",
         "rules[0].session.cwd: expected {\"find\": \"/pointer\", \"after\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"session\": "
         "{\"cwd\": {\"find\": \"/c\", \"after\": \"(\", \"upto\": \")\"}}}]}]",
         "rules[0].session.cwd.upto: unknown field"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"skip\": true}], "
         "\"sidecar\": [{\"file\": \"a.json\", \"session\": {}}, {\"file\": \"../../b.json\", "
         "\"session\": {}}]}]",
         "sources[0] (x).sidecar[1].file: a file name beside the session file"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"skip\": true}], "
         "\"sidecar\": [{\"file\": \"1\", \"session\": {}}, {\"file\": \"2\", \"session\": {}}, "
         "{\"file\": \"3\", \"session\": {}}, {\"file\": \"4\", \"session\": {}}, "
         "{\"file\": \"5\", \"session\": {}}]}]",
         "sources[0] (x).sidecar: expected {\"file\": \"meta.json\", \"session\": {...}}, or a "
         "list of 1 to 4"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": {\"glob\": \"c/{id}\", \"layout\": "
         "\"folder\"}, \"rules\": [{\"skip\": true}]}]",
         "sources[0] (x).files[0].each: missing: the record files"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": {\"glob\": \"c/{id}\", \"layout\": "
         "\"folder\", \"each\": \"ev*/e-*.json\"}, \"rules\": [{\"skip\": true}]}]",
         "sources[0] (x).files[0].each: \"ev*/e-*.json\": folder names, then a file pattern"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": {\"glob\": \"c/*.json\", \"each\": "
         "\"e.json\"}, \"rules\": [{\"skip\": true}]}]",
         "sources[0] (x).files[0].each: only with \"layout\": \"folder\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"writes\": \"codex\", \"db_file\": \"x.db\"}]",
         "sources[0] (x).db_file: only with \"writes\": \"opencode\""},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"writes\": \"opencode\", \"db_file\": "
         "\"../x.db\"}]",
         "sources[0] (x).db_file: \"../x.db\": a file name in the home"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"skip\": true}], "
         "\"roots\": {\"file\": \"p.json\", \"list\": \"/projects\"}}]",
         "sources[0] (x).roots.folder: expected a JSON pointer"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"skip\": true}], "
         "\"roots\": {\"file\": \"../p.json\", \"list\": \"/p\", \"folder\": \"/d\"}}]",
         "sources[0] (x).roots.file: \"../p.json\": a file under the home"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"skip\": true}], "
         "\"project_hash\": {\"file\": \"k.json\", \"list\": \"/w\", \"cwd\": \"/p\", \"hash\": "
         "\"crc32\"}}]",
         "sources[0] (x).project_hash.hash: \"crc32\": md5 or sha256"},
        {"[{\"name\": \"x\", \"home\": \"~/x\", \"files\": \"a/*\", \"rules\": [{\"message\": "
         "{\"role\": \"/r\", \"content\": \"/c\", \"join\": \"yes\"}}]}]",
         "rules[0].message.join: expected true or false"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sync_descs d;
        load(&d, NULL);
        size_t before = d.n;
        char err[700] = "";
        int rc =
            sync_descs_parse(&d, cases[i].json, strlen(cases[i].json), "test", err, sizeof err);
        if (rc != MCPAGE_EPARSE)
            fail_msg("case %zu was accepted: %s", i, cases[i].json);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: want '%s' in the error, got '%s'", i, cases[i].want, err);
        assert_int_equal(d.n, before); /* nothing of a bad file is kept */
        sync_descs_free(&d);
    }
}

static void user_file_adds_changes_and_turns_off(void **state)
{
    (void)state;
    sync_descs d;
    load(&d, "{\"sources\": ["
             "{\"name\": \"my-agent\", \"title\": \"My agent\", \"home\": \"/opt/my\","
             " \"files\": \"logs/*.jsonl\", \"rules\": [{\"message\": {\"role\": \"/who\","
             " \"content\": \"/said\"}}]},"
             "{\"name\": \"pi\", \"home\": \"/srv/pi\"},"
             "{\"name\": \"qwen\", \"enabled\": false}]}");
    const sync_desc *mine = sync_descs_find(&d, "my-agent");
    assert_non_null(mine);
    assert_string_equal(mine->id_prefix, "my-agent:");
    assert_int_equal(mine->builtin, 0);
    assert_string_equal(sync_descs_find(&d, "pi")->home, "/srv/pi");
    assert_int_equal(sync_desc_disabled(sync_descs_find(&d, "qwen")), 1);
    assert_int_equal(sync_desc_disabled(sync_descs_find(&d, "omp")), 0);
    sync_descs_free(&d);
}

static void homes_from_flag_env_and_default(void **state)
{
    (void)state;
    sync_descs d;
    load(&d, "[{\"name\": \"x\", \"home\": \"${MCPAGE_TEST_XDG:-~/.local/share}/x\","
             " \"writes\": \"claude\"}]");
    char buf[4096], origin[64];
    const sync_desc *pi = sync_descs_find(&d, "pi");
    unsetenv("MCPAGE_PI_HOME");
    unsetenv("PI_CODING_AGENT_DIR");
    setenv("HOME", "/home/tester", 1);
    assert_int_equal(sync_desc_home(pi, NULL, buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/home/tester/.pi/agent");
    assert_string_equal(origin, "default");
    setenv("PI_CODING_AGENT_DIR", "/data/pi", 1);
    assert_int_equal(sync_desc_home(pi, NULL, buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/data/pi");
    assert_string_equal(origin, "env PI_CODING_AGENT_DIR");
    setenv("MCPAGE_PI_HOME", "/mine/pi", 1);
    assert_int_equal(sync_desc_home(pi, NULL, buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/mine/pi");
    assert_string_equal(origin, "env MCPAGE_PI_HOME");
    assert_int_equal(sync_desc_home(pi, "/flag/pi", buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/flag/pi");
    assert_string_equal(origin, "flag --pi-home");
    unsetenv("MCPAGE_PI_HOME");
    unsetenv("PI_CODING_AGENT_DIR");
    const sync_desc *x = sync_descs_find(&d, "x");
    unsetenv("MCPAGE_TEST_XDG");
    assert_int_equal(sync_desc_home(x, NULL, buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/home/tester/.local/share/x");
    setenv("MCPAGE_TEST_XDG", "/xdg", 1);
    assert_int_equal(sync_desc_home(x, NULL, buf, sizeof buf, origin, sizeof origin), 0);
    assert_string_equal(buf, "/xdg/x");
    unsetenv("MCPAGE_TEST_XDG");
    sync_descs_free(&d);
}

/* ---- golden samples ------------------------------------------------------ */

static void golden(fx *f, const char *agent, int files, int malformed)
{
    sync_descs d;
    load(&d, NULL);
    char home[600], expected[600];
    snprintf(home, sizeof home, "%s/examples/archive/%s", MCPAGE_SOURCE_DIR, agent);
    snprintf(expected, sizeof expected, "%s/sources/%s.expected", MCPAGE_TEST_DATA, agent);
    sync_report rep;
    sync_one(f->db, &d, agent, home, &rep);
    const sync_source_report *sr = source_of(&rep, agent);
    assert_int_equal(sr->found, 1);
    assert_int_equal(sr->files, files);
    assert_int_equal(sr->files_failed, 0);
    assert_int_equal(rep.lines_malformed, malformed);
    assert_int_equal(sr->warnings, malformed);
    if (malformed)
        assert_non_null(strstr(sr->warning, agent));
    char *got = ts_dump(f->db, 160);
    if (getenv("MCPAGE_UPDATE_GOLDEN"))
        ts_put(expected, "w", got);
    char *want = ts_read_file(expected);
    assert_non_null(want);
    if (strcmp(want, got) != 0) {
        char out[300];
        snprintf(out, sizeof out, "/tmp/mcpage-sources-%s-got.txt", agent);
        ts_put(out, "w", got);
        fail_msg("the store differs from %s (got: %s)", expected, out);
    }
    free(want);
    /* nothing changed: every file skipped without reading */
    sync_one(f->db, &d, agent, home, &rep);
    assert_true(rep.files_seen > 0);
    assert_int_equal(rep.files_unchanged, rep.files_seen); /* a file a database holds: not read */
    assert_int_equal(rep.messages_added, 0);
    char *again = ts_dump(f->db, 160);
    assert_string_equal(again, got);
    free(again);
    free(got);
    sync_descs_free(&d);
}

static void golden_pi(void **state)
{
    golden(*state, "pi", 2, 1);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* the session header names the id (prefixed) and the project */
    assert_non_null(strstr(d, "session pi:6f1d2c3a-9b8e-4c7d-a1f0-5e4d3c2b1a09 source=pi "
                              "project=ledger-api title=Banker's rounding in round_half"));
    /* a failed tool result, its tool named by the result itself */
    assert_non_null(strstr(d, "tool=bash input=- call=call_1 err=1"));
    /* the model change names the session's model */
    assert_non_null(strstr(d, "model=claude-opus-4-5"));
    free(d);
    /* each assistant record's tokens and cost are one call of its model */
    store *s = NULL;
    assert_int_equal(store_open(((fx *)*state)->db, STORE_OPEN_READONLY, &s), 0);
    store_usage_filter uf = {
        .group = STORE_USAGE_BY_AGENT, .from_minute = INT64_MIN, .to_minute = INT64_MAX};
    store_usage_sums sums;
    assert_int_equal(store_usage_sums_get(s, &uf, 100, &sums), 0);
    int64_t calls = 0, input = 0, output = 0, cache_read = 0, cache_creation = 0;
    double cost = 0;
    for (size_t i = 0; i < sums.count; i++) {
        assert_string_equal(sums.rows[i].name, "pi");
        calls += sums.rows[i].calls;
        input += sums.rows[i].input;
        output += sums.rows[i].output;
        cache_read += sums.rows[i].cache_read;
        cache_creation += sums.rows[i].cache_creation;
        cost += sums.rows[i].cost_usd;
    }
    assert_int_equal(calls, 4);
    assert_int_equal(input, 1520 + 210 + 340 + 800);
    assert_int_equal(output, 96 + 64 + 41 + 30);
    assert_int_equal(cache_read, 11200 + 12700 + 13020);
    assert_int_equal(cache_creation, 380 + 120);
    assert_true(cost > 0.02818 && cost < 0.02819); /* 0.010785 + 0.0081 + 0.0093 */
    store_usage_sums_free(&sums);
    store_close(s);
}

static void golden_omp(void **state)
{
    golden(*state, "omp", 2, 1);
}

static void golden_qwen(void **state)
{
    golden(*state, "qwen", 2, 1);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "project données-météo /home/ada/work/données-météo qwen"));
    assert_non_null(strstr(d, "tool=run_shell_command input=- call=call_q2 err=1"));
    free(d);
}

static void golden_openclaude(void **state)
{
    golden(*state, "openclaude", 2, 1);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* Claude's format, the agent's own name; the sub-agent names its parent */
    assert_non_null(strstr(d, "session openclaude:d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70:agent-"
                              "a1b2c3 source=openclaude"));
    assert_non_null(strstr(d, "parent=openclaude:d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70"));
    free(d);
}

static void golden_qoder(void **state)
{
    golden(*state, "qoder", 1, 1);
}

static void golden_trae(void **state)
{
    golden(*state, "trae", 3, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* Codex rollouts under TRAE's own name; the sub-agent names its parent */
    assert_non_null(strstr(d, "source=trae"));
    assert_null(strstr(d, "source=codex"));
    assert_non_null(strstr(d, "parent=trae:"));
    free(d);
}

static void golden_droid(void **state)
{
    golden(*state, "droid", 2, 0);
}

static void golden_grok(void **state)
{
    golden(*state, "grok", 3, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* summary.json names the title and the fork's parent */
    assert_non_null(strstr(d, "title=Fix umlaut slug bug"));
    assert_non_null(strstr(d, "parent=grok:019aef10-2c3d-7a4b-9c8d-1e2f3a4b5c6d"));
    free(d);
}

static void golden_vibe(void **state)
{
    golden(*state, "vibe", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* no time per message: the session's start from meta.json */
    assert_null(strstr(d, "start=- "));
    assert_non_null(strstr(d, "parent=vibe:3fa85f64-5717-4562-b3fc-2c963f66afa6"));
    free(d);
}

static void golden_gptme(void **state)
{
    golden(*state, "gptme", 1, 0);
}

static void golden_posit(void **state)
{
    /* two workspaces: one with workspace.json (the project, one folder above
       the conversation), one without; a cut line counted as malformed */
    golden(*state, "posit", 2, 1);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "/home/ada/ventes-r\xc3\xa9gion posit sessions=1"));
    assert_non_null(strstr(d, "tool=runCode input=- call=call-2 err=1"));
    free(d);
}

static void golden_goose(void **state)
{
    /* sessions.db (two sessions, one a sub-agent) and an older .jsonl file */
    golden(*state, "goose", 3, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "parent=goose:20251205_1"));
    free(d);
}

static void golden_hermes(void **state)
{
    golden(*state, "hermes", 5, 0);
}

static void golden_forge(void **state)
{
    golden(*state, "forge", 2, 0);
}

static void golden_devin(void **state)
{
    golden(*state, "devin", 2, 0);
}

static void golden_iflow(void **state)
{
    golden(*state, "iflow", 1, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* streamed snapshots repeat call_aa11 and call_bb22: each is stored once */
    const char *first = strstr(d, "call=call_bb22 err=0");
    assert_non_null(first);
    assert_true(strstr(first + 1, "tool=run_shell_command input=npm test call=call_bb22") == NULL);
    free(d);
}

static void golden_continue(void **state)
{
    golden(*state, "continue", 2, 0);
}

static void golden_kilo(void **state)
{
    /* OpenCode's database under Kilo's name and file (kilo.db) */
    golden(*state, "kilo", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "session kilo:ses_4f1a2b3c4d5eFg6H7iJ8kL9mN0 source=kilo"));
    assert_non_null(strstr(d, "parent=kilo:ses_4f1a2b3c4d5eFg6H7iJ8kL9mN0"));
    free(d);
}

static void golden_crush(void **state)
{
    /* a database per project, found through projects.json (a relative
       folder is the home's; a folder since removed is no error) */
    golden(*state, "crush", 3, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "project app /home/dev/app crush sessions=3"));
    assert_non_null(strstr(d, "parent=crush:8d0c4b2e-6f1a-4c3d-9e8b-7a6f5e4d3c2b"));
    assert_non_null(strstr(d, "err=1 line=11")); /* the provider's error, as an error */
    free(d);
}

static void golden_openhands(void **state)
{
    /* a folder per conversation, a file per event, base_state.json beside */
    golden(*state, "openhands", 1, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(
        strstr(d, "session openhands:7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e source=openhands "
                  "project=app title=CHANGELOG"));
    free(d);
}

static void golden_kimi(void **state)
{
    /* stream fragments joined, usage-only records as calls, the project from
       the md5 of a path kimi.json lists, a sub-agent linked to its parent */
    golden(*state, "kimi", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 300);
    assert_non_null(strstr(d, "project blog /home/dev/blog kimi sessions=2"));
    assert_non_null(strstr(d, "[thinking] User wants a draft; first check existing posts.\\nLet me "
                              "look at the posts folder."));
    assert_non_null(strstr(d, "parent=kimi:7c9e6679-7425-40de-944b-e07fc1f90ae7"));
    assert_non_null(strstr(d, "[approval feedback] don't run network tools"));
    free(d);
}

/* The counted calls of a store, by session then model: "session model calls
 * input output cache_creation cache_read\n" per row. */
static char *usage_rows(const char *db)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    store_usage_filter uf = {
        .group = STORE_USAGE_BY_SESSION, .from_minute = INT64_MIN, .to_minute = INT64_MAX};
    store_usage_sums sums;
    assert_int_equal(store_usage_sums_get(s, &uf, 100, &sums), 0);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    assert_non_null(m);
    for (size_t i = 0; i < sums.count; i++) {
        const store_usage_sum *x = &sums.rows[i];
        fprintf(m, "%s %s %lld %lld %lld %lld %lld\n", x->name, x->model ? x->model : "-",
                (long long)x->calls, (long long)x->input, (long long)x->output,
                (long long)x->cache_creation, (long long)x->cache_read);
    }
    fclose(m);
    store_usage_sums_free(&sums);
    store_close(s);
    return out;
}

static void golden_zed(void **state)
{
    /* zstd-compressed thread rows, externally tagged messages, tool results
       kept by id inside the agent's message, an older plain-JSON row */
    golden(*state, "zed", 3, 0);
    char *d = ts_dump(((fx *)*state)->db, 300);
    assert_non_null(strstr(d, "parent=zed:3b9c6f1e-7a2d-4e5f-9b8a-1c2d3e4f5a6b"));
    assert_non_null(strstr(d, "source=zed project=ws"));
    free(d);
    /* request_token_usage: a call per user message (its turn), the
       thread's model; the sums are the thread's cumulative_token_usage;
       the older row (agent v1, usage as a list) has none */
    char *u = usage_rows(((fx *)*state)->db);
    if (!strstr(u, "zed:3b9c6f1e-7a2d-4e5f-9b8a-1c2d3e4f5a6b claude-sonnet-4-5 2 1830 612 14200 "
                   "52300\n") ||
        !strstr(u, "zed:8e7d6c5b-4a39-4281-9f0e-d1c2b3a4f5e6 claude-haiku-4-5 1 900 80 0 0\n") ||
        strstr(u, "0a1b2c3d"))
        fail_msg("zed calls: %s", u);
    free(u);
}

/* A document's calls keyed by message id ("document": {"usage":
 * {"by_message": ...}}): each on the first assistant message after its
 * message, one whose message has no reply (yet) or is not there stored
 * alone; saved again, the document's calls are never counted twice. */
#define REPLY_DESC                                                                                 \
    "[{\"name\": \"chats\", \"home\": \"~/c\", \"layout\": \"json\", \"files\": \"c/*.json\","     \
    " \"records\": \"/messages\", \"document\": {\"id\": \"/id\", \"model\": \"/model\","          \
    " \"usage\": {\"by_message\": \"/usage\", \"input\": \"/in\", \"output\": \"/out\","           \
    " \"cache_read\": \"/cr\"}},"                                                                  \
    " \"rules\": [{\"message\": {\"id\": \"/id\", \"role\": \"/role\", \"content\": "              \
    "\"/text\"}}]}]"

static void document_calls_by_message_id(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, REPLY_DESC);
    char dir[600], doc[800], cmd[900];
    snprintf(dir, sizeof dir, "%s/c", f->home);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(doc, sizeof doc, "%s/t.json", dir);
    /* u2 awaits its reply; "gone" names no message */
    ts_put(doc, "w",
           "{\"id\": \"T\", \"model\": \"claude-sonnet-4-5\", \"usage\": {"
           "\"u1\": {\"in\": 100, \"out\": 10, \"cr\": 5}, \"u2\": {\"in\": 200, \"out\": 20},"
           " \"gone\": {\"in\": 7, \"out\": 1}}, \"messages\": [\n"
           "  {\"id\": \"u1\", \"role\": \"user\", \"text\": \"q1\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r1\"},\n"
           "  {\"id\": \"u2\", \"role\": \"user\", \"text\": \"q2\"}\n]}\n");
    sync_report rep;
    sync_one(f->db, &d, "chats", f->home, &rep);
    assert_int_equal(rep.messages_added, 3);
    char *u = usage_rows(f->db);
    assert_string_equal(u, "chats:T claude-sonnet-4-5 3 307 31 0 5\n");
    free(u);

    /* the reply comes, the calls stay: nothing counted twice */
    ts_put(doc, "w",
           "{\"id\": \"T\", \"model\": \"claude-sonnet-4-5\", \"usage\": {"
           "\"u1\": {\"in\": 100, \"out\": 10, \"cr\": 5}, \"u2\": {\"in\": 200, \"out\": 20},"
           " \"gone\": {\"in\": 7, \"out\": 1}}, \"messages\": [\n"
           "  {\"id\": \"u1\", \"role\": \"user\", \"text\": \"q1\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r1\"},\n"
           "  {\"id\": \"u2\", \"role\": \"user\", \"text\": \"q2\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r2\"}\n]}\n");
    sync_one(f->db, &d, "chats", f->home, &rep);
    assert_int_equal(rep.messages_added, 1);
    u = usage_rows(f->db);
    assert_string_equal(u, "chats:T claude-sonnet-4-5 3 307 31 0 5\n");
    free(u);

    /* a new turn and its call: the session stored again, every call once */
    ts_put(doc, "w",
           "{\"id\": \"T\", \"model\": \"claude-sonnet-4-5\", \"usage\": {"
           "\"u1\": {\"in\": 100, \"out\": 10, \"cr\": 5}, \"u2\": {\"in\": 200, \"out\": 20},"
           " \"gone\": {\"in\": 7, \"out\": 1}, \"u3\": {\"in\": 1000, \"out\": 100}},"
           " \"messages\": [\n"
           "  {\"id\": \"u1\", \"role\": \"user\", \"text\": \"q1\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r1\"},\n"
           "  {\"id\": \"u2\", \"role\": \"user\", \"text\": \"q2\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r2\"},\n"
           "  {\"id\": \"u3\", \"role\": \"user\", \"text\": \"q3\"},\n"
           "  {\"role\": \"assistant\", \"text\": \"r3\"}\n]}\n");
    sync_one(f->db, &d, "chats", f->home, &rep);
    u = usage_rows(f->db);
    assert_string_equal(u, "chats:T claude-sonnet-4-5 4 1307 131 0 5\n");
    free(u);
    char *dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "messages=6\n"));
    free(dump);
    sync_descs_free(&d);
}

static void golden_amp(void **state)
{
    golden(*state, "amp", 1, 0);
}

static void golden_kiro(void **state)
{
    golden(*state, "kiro", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    /* a failed tool result ({kind, data} blocks, status "error") */
    assert_non_null(strstr(d, "call=tooluse_Jx2 err=1"));
    free(d);
}

/* ---- records of each common shape ----------------------------------------- */

static void expand_line(const sync_desc *d, sync_fold *fold, const char *line, sync_record **r,
                        size_t *n)
{
    char why[200] = "";
    int rc = sync__fold_parse_line(&d->fmt, fold, line, strlen(line), r, n, why, sizeof why);
    if (rc != 0)
        fail_msg("parse failed (%d): %s", rc, why);
}

static void records_of_every_shape(void **state)
{
    (void)state;
    sync_descs d;
    load(&d, "[{\"name\": \"chat\", \"home\": \"~/c\", \"files\": \"*.jsonl\", \"rules\": ["
             "{\"when\": {\"/kind\": \"meta\"}, \"session\": {\"id\": \"/sid\", \"title\": "
             "\"/name\"}},"
             "{\"when\": {\"/kind\": \"noise\"}, \"skip\": true},"
             "{\"message\": {\"id\": \"/id\", \"role\": \"/role\", \"content\": [\"/content\", "
             "\"/parts\"], \"calls\": \"/tool_calls\", \"call_id\": \"/tool_call_id\", "
             "\"timestamp\": \"/ts\", \"model\": \"/model\", \"usage\": {\"input\": "
             "\"/usage/prompt_tokens\", \"output\": \"/usage/completion_tokens\"}}}]}]");
    const sync_desc *c = sync_descs_find(&d, "chat");
    sync_fold fold = {0};
    sync_record *r = NULL;
    size_t n = 0;

    /* facts, and a record the rules skip */
    expand_line(c, &fold, "{\"kind\":\"meta\",\"sid\":\"abc\",\"name\":\"Fix it\"}", &r, &n);
    assert_int_equal(n, 0);
    assert_string_equal(fold.session_id, "chat:abc");
    assert_string_equal(fold.title, "Fix it");
    expand_line(c, &fold, "{\"kind\":\"noise\",\"role\":\"user\",\"content\":\"x\"}", &r, &n);
    assert_int_equal(n, 0);
    assert_int_equal(fold.n, 0);

    /* OpenAI: text, then calls beside it (arguments as a JSON string) */
    expand_line(c, &fold,
                "{\"id\":\"m1\",\"role\":\"assistant\",\"content\":\"Running it.\","
                "\"model\":\"gpt-5\",\"ts\":1764000000,\"usage\":{\"prompt_tokens\":10,"
                "\"completion_tokens\":3},\"tool_calls\":[{\"id\":\"call_1\",\"type\":"
                "\"function\",\"function\":{\"name\":\"shell\",\"arguments\":"
                "\"{\\\"command\\\":\\\"ls -la\\\"}\"}}]}",
                &r, &n);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].role, "assistant");
    assert_string_equal(r[0].text, "Running it.");
    assert_string_equal(r[0].model, "gpt-5");
    assert_string_equal(r[0].timestamp, "2025-11-24T16:00:00.000Z");
    assert_int_equal(r[0].usage.present, 1);
    assert_int_equal(r[0].usage.input, 10);
    assert_int_equal(r[0].usage.output, 3);
    assert_string_equal(r[1].text, "[tool_use shell] ls -la");
    assert_string_equal(r[1].tool_name, "shell");
    assert_string_equal(r[1].call_id, "call_1");
    sync__records_free(r, n);

    /* OpenAI: a tool message (role tool) with its call id */
    expand_line(c, &fold,
                "{\"id\":\"m2\",\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":"
                "\"total 0\"}",
                &r, &n);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "tool");
    assert_string_equal(r[0].call_id, "call_1");
    assert_string_equal(r[0].text, "total 0");
    sync__records_free(r, n);

    /* Anthropic: a user record holding a failed tool result block */
    expand_line(c, &fold,
                "{\"id\":\"m3\",\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                "\"tool_use_id\":\"t1\",\"is_error\":true,\"content\":[{\"type\":\"text\","
                "\"text\":\"no such file\"}]}]}",
                &r, &n);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "tool");
    assert_string_equal(r[0].call_id, "t1");
    assert_int_equal(r[0].is_error, 1);
    assert_string_equal(r[0].text, "no such file");
    sync__records_free(r, n);

    /* Gemini parts: thought, text, an image, a call */
    expand_line(c, &fold,
                "{\"id\":\"m4\",\"role\":\"model\",\"parts\":[{\"text\":\"hmm\",\"thought\":true},"
                "{\"text\":\"Here.\"},{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"x\"}},"
                "{\"functionCall\":{\"id\":\"f1\",\"name\":\"read_file\",\"args\":"
                "{\"absolute_path\":\"/a.c\"}}}]}",
                &r, &n);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].text, "[thinking] hmm\nHere.\n[image: image/png]");
    assert_string_equal(r[1].tool_input, "/a.c");
    sync__records_free(r, n);

    /* the same id again replaces the message in place; an unknown role is system */
    size_t before = fold.n;
    expand_line(c, &fold, "{\"id\":\"m1\",\"role\":\"assistant\",\"content\":\"Ran it.\"}", &r, &n);
    assert_int_equal(fold.n, before);
    sync__records_free(r, n);
    expand_line(c, &fold, "{\"id\":\"m9\",\"role\":\"narrator\",\"content\":\"Meanwhile\"}", &r,
                &n);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].role, "system");
    sync__records_free(r, n);

    /* malformed: a reason, never a crash */
    char why[200] = "";
    assert_int_equal(sync__fold_parse_line(&c->fmt, &fold, "[1]", 3, &r, &n, why, sizeof why),
                     MCPAGE_EPARSE);
    assert_string_equal(why, "not a JSON object");
    sync_fold_free(&fold);
    sync_descs_free(&d);
}

/* ---- incremental, per family ---------------------------------------------- */

#define LOGS_DESC                                                                                  \
    "[{\"name\": \"logs\", \"home\": \"~/l\", \"files\": \"{cwd:url}/{id}.jsonl\", \"rules\": ["   \
    "{\"when\": {\"/op\": \"rewind\"}, \"message\": {\"role\": {\"const\": \"skip\"},"             \
    " \"rewind_to\": \"/to\"}},"                                                                   \
    "{\"message\": {\"id\": \"/id\", \"role\": \"/role\", \"content\": \"/text\", \"timestamp\":"  \
    " \"/ts\"}}]}]"

static void line(char *path, const char *mode, const char *id, const char *role, const char *text)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"id\":\"%s\",\"role\":\"%s\",\"text\":\"%s\",\"ts\":\"2026-01-01T00:00:%02dZ\"}\n",
             id, role, text, (int)(strlen(text) % 60));
    ts_put(path, mode, buf);
}

static void jsonl_append_rewind_rewrite_delete(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, LOGS_DESC);
    char dir[600], path[800], cmd[900];
    snprintf(dir, sizeof dir, "%s/%%2Fhome%%2Fu%%2Fproj", f->home);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/s1.jsonl", dir);
    sync_report rep;

    line(path, "w", "a", "user", "add a flag");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.sessions_added, 1);
    assert_int_equal(rep.messages_added, 1);
    int64_t first = ts_message_id(f->db, "logs:s1", 0);
    assert_true(first > 0);
    char *dump = ts_dump(f->db, 80);
    /* the id and the url-encoded project come from the path */
    assert_non_null(strstr(dump, "project proj /home/u/proj logs sessions=1"));
    free(dump);

    /* append: only the new message, the stored one untouched */
    line(path, "a", "b", "assistant", "done");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "logs:s1", 0), first);

    /* a record written again under its id: the session is stored again,
       the message keeps its place and its id */
    line(path, "a", "b", "assistant", "done, and tested");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "messages=2\n"));
    assert_non_null(strstr(dump, "done, and tested"));
    free(dump);
    assert_int_equal(ts_message_id(f->db, "logs:s1", 0), first);

    /* rewind: the message and every later one go */
    line(path, "a", "c", "user", "also docs");
    ts_put(path, "a", "{\"op\":\"rewind\",\"to\":\"b\"}\n");
    sync_one(f->db, &d, "logs", f->home, &rep);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "messages=1\n"));
    assert_null(strstr(dump, "also docs"));
    free(dump);

    /* truncated and rewritten: read again from the start */
    line(path, "w", "x", "user", "start over");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "start over"));
    assert_non_null(strstr(dump, "messages=1\n"));
    free(dump);

    /* a partial last line waits for its newline */
    ts_put(path, "a", "{\"id\":\"y\",\"role\":\"user\",\"text\":\"half");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.messages_added, 0);
    ts_put(path, "a", " done\"}\n");
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.messages_added, 1);

    /* deleted: the archive keeps the session */
    assert_int_equal(unlink(path), 0);
    sync_one(f->db, &d, "logs", f->home, &rep);
    assert_int_equal(rep.files_seen, 0);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "session logs:s1 source=logs"));
    assert_non_null(strstr(dump, "messages=2\n"));
    free(dump);
    sync_descs_free(&d);
}

#define DOC_DESC                                                                                   \
    "[{\"name\": \"docs\", \"home\": \"~/d\", \"layout\": \"json\", \"files\": "                   \
    "\"tasks/*/chat.json\","                                                                       \
    " \"records\": \"/history\", \"document\": {\"id\": \"/taskId\", \"cwd\": \"/workspace\"},"    \
    " \"sidecar\": {\"file\": \"meta.json\", \"session\": {\"title\": \"/title\"}},"               \
    " \"rules\": [{\"message\": {\"role\": \"/role\", \"content\": \"/content\"}}]}]"

#define WAL_ADD                                                                                    \
    "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) "        \
    "VALUES ('%s', '20251205_1', 'assistant', '[{\"type\":\"text\",\"text\":\"%s\"}]', %d)"

/* A described database (Goose's) while the agent writes it: a row committed
   under an open WAL writer is read and appended, one still uncommitted is
   not seen, and is read by the sync after its commit; the stored messages
   keep their ids (appended, not stored again) and the sync never waits. */
static void a_database_row_added_under_an_open_wal_writer(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, NULL);
    char dir[700], path[800], cmd[2000];
    snprintf(dir, sizeof dir, "%s/sessions", f->home);
    snprintf(path, sizeof path, "%s/sessions.db", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && cp '%s/examples/archive/goose/sessions/sessions.db' '%s'", dir,
             MCPAGE_SOURCE_DIR, path);
    assert_int_equal(system(cmd), 0);
    sqlite3 *w = NULL;
    assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
    assert_int_equal(sqlite3_exec(w, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);

    sync_report rep;
    sync_one(f->db, &d, "goose", f->home, &rep);
    assert_true(rep.messages_added > 0);
    int64_t first = ts_message_id(f->db, "goose:20251205_1", 0);
    assert_true(first > 0);

    char sql[400];
    snprintf(sql, sizeof sql, WAL_ADD, "wal-a", "row A committed under WAL", 1764999000);
    assert_int_equal(sqlite3_exec(w, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    snprintf(sql, sizeof sql, WAL_ADD, "wal-b", "row B not yet committed", 1764999100);
    assert_int_equal(sqlite3_exec(w, sql, NULL, NULL, NULL), SQLITE_OK);

    sync_one(f->db, &d, "goose", f->home, &rep);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "goose:20251205_1", 0), first);
    char *dump = ts_dump(f->db, 200);
    assert_non_null(strstr(dump, "row A committed under WAL"));
    assert_null(strstr(dump, "row B not yet committed"));
    free(dump);

    assert_int_equal(sqlite3_exec(w, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sync_one(f->db, &d, "goose", f->home, &rep);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, "goose:20251205_1", 0), first);
    dump = ts_dump(f->db, 200);
    assert_non_null(strstr(dump, "row B not yet committed"));
    free(dump);
    /* nothing new: nothing read again */
    sync_one(f->db, &d, "goose", f->home, &rep);
    assert_int_equal(rep.messages_added, 0);
    sqlite3_close(w);
    sync_descs_free(&d);
}

static void json_documents_and_sidecars(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, DOC_DESC);
    char dir[600], doc[800], meta[800], cmd[900];
    snprintf(dir, sizeof dir, "%s/tasks/t1", f->home);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(doc, sizeof doc, "%s/chat.json", dir);
    snprintf(meta, sizeof meta, "%s/meta.json", dir);
    ts_put(
        doc, "w",
        "{\"taskId\": \"T-1\", \"workspace\": \"/home/u/site\", \"history\": [\n"
        "  {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"hello\"}]}\n]}\n");
    ts_put(meta, "w", "{\"title\": \"First title\"}");
    sync_report rep;
    sync_one(f->db, &d, "docs", f->home, &rep);
    assert_int_equal(rep.messages_added, 1);
    char *dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "session docs:T-1 source=docs project=site title=First title"));
    free(dump);

    /* the document saved again with one more record: the new message added */
    ts_put(doc, "w",
           "{\"taskId\": \"T-1\", \"workspace\": \"/home/u/site\", \"history\": [\n"
           "  {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"hello\"}]},\n"
           "  {\"role\": \"assistant\", \"content\": \"hi there\"}\n]}\n");
    sync_one(f->db, &d, "docs", f->home, &rep);
    assert_int_equal(rep.files_unchanged, 0);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "messages=2\n"));
    free(dump);

    /* only the sidecar changes: the title follows */
    ts_put(meta, "w", "{\"title\": \"A longer, better title\"}");
    sync_one(f->db, &d, "docs", f->home, &rep);
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "title=A longer, better title"));
    assert_non_null(strstr(dump, "messages=2\n"));
    free(dump);

    /* a document that is not JSON: a named warning, the session kept */
    ts_put(doc, "w", "{\"taskId\": \"T-1\", \"history\": [ {\"role\": ");
    sync_one(f->db, &d, "docs", f->home, &rep);
    assert_int_equal(source_of(&rep, "docs")->warnings, 1);
    assert_non_null(strstr(source_of(&rep, "docs")->warning, "chat.json"));
    dump = ts_dump(f->db, 80);
    assert_non_null(strstr(dump, "messages=2\n"));
    free(dump);
    sync_descs_free(&d);
}

/* ---- hostile folders -------------------------------------------------------- */

static void hostile_folders(void **state)
{
    fx *f = *state;
    sync_descs d;
    load(&d, LOGS_DESC);
    char dir[600], path[800], cmd[2000];
    snprintf(dir, sizeof dir, "%s/p", f->home);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && mkfifo '%s/fifo.jsonl' && ln -s /etc/passwd "
             "'%s/passwd.jsonl'",
             dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    /* 20,000 records of one id are one message; 20,000 distinct ids fold
       in linear time (a hash from id to message) */
    snprintf(path, sizeof path, "%s/same.jsonl", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 20000; i++)
        fprintf(fp, "{\"id\":\"dup\",\"role\":\"user\",\"text\":\"version %d\"}\n", i);
    fclose(fp);
    snprintf(path, sizeof path, "%s/many.jsonl", dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 20000; i++)
        fprintf(fp, "{\"id\":\"m%d\",\"role\":\"user\",\"text\":\"message %d\"}\n", i, i);
    fclose(fp);
    sync_report rep;
    sync_one(f->db, &d, "logs", f->home, &rep);
    const sync_source_report *sr = source_of(&rep, "logs");
    assert_int_equal(rep.links_outside, 1);
    assert_int_equal(sr->files, 2);
    assert_int_equal(rep.warnings, 2); /* the FIFO, named, never opened, and the link */
    assert_int_equal(sr->warnings, 3); /* the link counted as a link out too (as Claude's) */
    assert_non_null(strstr(sr->warning, "jsonl"));
    char *dump = ts_dump(f->db, 40);
    assert_non_null(strstr(dump, "session logs:same source=logs"));
    assert_non_null(strstr(dump, "version 19999"));
    assert_null(strstr(dump, "version 19998"));
    assert_non_null(strstr(dump, "messages=20000\n"));
    assert_null(strstr(dump, "root:"));
    free(dump);
    sync_descs_free(&d);
}

/* ---- VS Code-family extensions (Cline, Roo Code, Kilo Code) ------------- */

/* Cline: legacy XML-style task (no ts: times from ui_messages' first
 * record), native-tool task with modelInfo and metrics (prompt tokens
 * include the cached ones), project from the environment details. */
static void golden_cline(void **state)
{
    golden(*state, "cline", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "title=Add a --verbose flag to cli.py"));
    assert_non_null(strstr(d, "project tool /home/dev/tool cline"));
    assert_non_null(strstr(d, "model=anthropic/claude-sonnet-4.5"));
    free(d);
    /* metrics: prompt counts the cached tokens, so input is prompt - cached */
    store *s = NULL;
    assert_int_equal(store_open(((fx *)*state)->db, STORE_OPEN_READONLY, &s), 0);
    store_usage_filter uf = {
        .group = STORE_USAGE_BY_AGENT, .from_minute = INT64_MIN, .to_minute = INT64_MAX};
    store_usage_sums sums;
    assert_int_equal(store_usage_sums_get(s, &uf, 100, &sums), 0);
    assert_int_equal(sums.count, 1);
    assert_string_equal(sums.rows[0].name, "cline");
    assert_int_equal(sums.rows[0].calls, 4);
    assert_int_equal(sums.rows[0].input, 12044 + 366 + 380 + 220);
    assert_int_equal(sums.rows[0].output, 141 + 230 + 180 + 52);
    assert_int_equal(sums.rows[0].cache_read, 12044 + 12410 + 12790);
    store_usage_sums_free(&sums);
    store_close(s);
}

/* Roo Code: history_item.json (workspace, task, parentTaskId), a failed
 * tool result, a condense summary, reasoning blocks, a sub-task. */
static void golden_roo(void **state)
{
    golden(*state, "roo", 2, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "parent=roo:019398a0-7c1e-7d3a-9b2f-4c5d6e7f0001"));
    assert_non_null(strstr(d, "9 system 2025-12-06T05:48:13.001Z tool=- input=- call=- err=0 "
                              "line=10 at=5539+305 | [summary] "));
    free(d);
}

/* Kilo Code: no index; project and model from the environment details. */
static void golden_kilocode(void **state)
{
    golden(*state, "kilocode", 1, 0);
    char *d = ts_dump(((fx *)*state)->db, 200);
    assert_non_null(strstr(d, "model=z-ai/glm-4.6"));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_descriptions_load),
        cmocka_unit_test(bad_descriptions_name_the_field),
        cmocka_unit_test(user_file_adds_changes_and_turns_off),
        cmocka_unit_test(homes_from_flag_env_and_default),
        cmocka_unit_test(records_of_every_shape),
        cmocka_unit_test_setup_teardown(golden_pi, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_omp, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_qwen, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_openclaude, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_qoder, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_trae, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_droid, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_grok, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_vibe, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_gptme, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_posit, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_goose, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_hermes, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_forge, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_devin, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_iflow, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_cline, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_roo, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_kilocode, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_continue, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_amp, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_kilo, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_crush, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_openhands, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_kimi, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_zed, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(document_calls_by_message_id, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(golden_kiro, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(jsonl_append_rewind_rewrite_delete, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(a_database_row_added_under_an_open_wal_writer, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(json_documents_and_sidecars, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(hostile_folders, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
