/*
 * The paged resource form of an export (src/tools/export_resource.c),
 * through a runtime session on the archive's registry, on a store synced
 * from examples/archive and the hard transcript of tests/data/export:
 * the huge session's Markdown read piece by piece to its end joins into
 * exactly what export_session_write writes; bytes that are not UTF-8
 * come as base64 pieces; export_session links to the resource; a
 * tampered cursor, a cursor of a rewritten file, an unknown session and
 * a URI that is not the canonical spelling are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <mcpage/page.h>
#include <mcpage/server.h>

#include "page/base64.h"
#include "store/store.h"
#include "support/mcp_capture.h"
#include "support/tool_contract.h"
#include "sync/sync.h"
#include "tools/export.h"
#include "tools/tools.h"

#define HUGE "cc21fef1-e9d4-464f-a4e6-dc521e36aced" /* a 2.5 MB tool output */
#define HARD "0badc0de-7e57-4a11-8d00-000000000042" /* a line that is not UTF-8 */
/* No piece's response comes near a megabyte: the default budget is 4,000 tokens. */
#define PIECE_MAX_BYTES 40000

typedef struct env {
    char dir[256];       /* temp dir: store and export folder */
    char db[300];        /* the store */
    char exports[300];   /* the export folder */
    store *writer;       /* sync's handle */
    mcpage_keyring *kr;  /* cursor keys */
    mcpage_pager *pager; /* the contract */
    tools_ctx ctx;       /* the tools */
    mcpage_server *srv;  /* the registry */
    capture *c;          /* a session on it */
    int next_id;         /* the next request id */
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/mcpage_export_res_XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(e->db, sizeof e->db, "%s/a.db", e->dir);
    snprintf(e->exports, sizeof e->exports, "%s/exports", e->dir);
    assert_int_equal(store_open(e->db, STORE_OPEN_WRITE, &e->writer), 0);
    char claude[600], hard[600];
    snprintf(claude, sizeof claude, "%s/examples/archive/claude", MCPAGE_SOURCE_DIR);
    snprintf(hard, sizeof hard, "%s/tests/data/export/claude", MCPAGE_SOURCE_DIR);
    sync_options o = {.claude_home = claude, .codex_home = e->dir};
    sync_report r;
    assert_int_equal(sync_run(e->writer, &o, &r), 0);
    o.claude_home = hard;
    assert_int_equal(sync_run(e->writer, &o, &r), 0);
    assert_int_equal(mcpage_keyring_new(&e->kr), 0);
    assert_int_equal(mcpage_keyring_load(e->kr, NULL, NULL), 0);
    assert_int_equal(mcpage_pager_new(NULL, e->kr, &e->pager), 0);
    assert_int_equal(tools_ctx_init(&e->ctx, e->db, e->pager), 0);
    e->ctx.export_dir = e->exports;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage-test", "0");
    cfg.keyring = e->kr;
    assert_int_equal(mcpage_server_new(&cfg, &e->srv), 0);
    assert_int_equal(tools_register_all(e->srv, &e->ctx), 0);
    e->c = capture_on(e->srv);
    capture_init(e->c);
    e->next_id = 10;
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    capture_free(e->c);
    mcpage_server_free(e->srv);
    tools_ctx_free(&e->ctx);
    mcpage_pager_free(e->pager);
    mcpage_keyring_free(e->kr);
    store_close(e->writer);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", e->dir);
    free(e);
    return 0;
}

/* resources/read of `uri`; returns the whole response (caller decrefs). */
static json_t *read_uri(env *e, const char *uri)
{
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s}}", "jsonrpc", "2.0", "id", e->next_id++,
                            "method", "resources/read", "params", "uri", uri);
    char *text = json_dumps(req, JSON_COMPACT);
    capture_send(e->c, text);
    free(text);
    json_decref(req);
    json_t *resp = capture_take(e->c);
    assert_non_null(resp);
    return resp;
}

/* What export_session_write writes for a session: the reference. */
static char *expected_export(env *e, const char *id, export_format fmt, size_t *len)
{
    store_session ses;
    assert_int_equal(store_session_get(e->writer, id, &ses), 0);
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    export_stats st;
    assert_int_equal(export_session_write(e->writer, &ses, fmt, f, &st), 0);
    fclose(f);
    store_session_clear(&ses);
    return buf;
}

/* The joined pieces of a walk from `uri` to its end. */
typedef struct walked {
    char *data;      /* the bytes (malloc'd) */
    size_t len;      /* their length */
    int pieces;      /* reads */
    bool saw_base64; /* a piece came as base64 */
} walked;

static void walk(env *e, const char *uri, walked *w)
{
    memset(w, 0, sizeof *w);
    char next[2048];
    snprintf(next, sizeof next, "%s", uri);
    for (bool more = true; more; w->pieces++) {
        assert_true(w->pieces < 1000);
        json_t *resp = read_uri(e, next);
        char *raw = json_dumps(resp, JSON_COMPACT);
        assert_true(strlen(raw) < PIECE_MAX_BYTES);
        free(raw);
        json_t *contents = json_object_get(json_object_get(resp, "result"), "contents");
        assert_int_equal(json_array_size(contents), 2);
        json_t *piece = json_array_get(contents, 0), *page = json_array_get(contents, 1);
        assert_string_equal(json_string_value(json_object_get(piece, "uri")), next);
        json_t *env_ = json_loads(json_string_value(json_object_get(page, "text")), 0, NULL);
        assert_non_null(env_);
        assert_int_equal(json_integer_value(json_object_get(env_, "offset")), (json_int_t)w->len);
        size_t n = (size_t)json_integer_value(json_object_get(env_, "returned"));
        w->data = realloc(w->data, w->len + n + 1);
        const char *text = json_string_value(json_object_get(piece, "text"));
        const char *blob = json_string_value(json_object_get(piece, "blob"));
        if (text) {
            assert_int_equal(strlen(text), n);
            memcpy(w->data + w->len, text, n);
        } else {
            assert_non_null(blob);
            w->saw_base64 = true;
            assert_int_equal(b64_decode(blob, strlen(blob), (uint8_t *)w->data + w->len, false),
                             (long)n);
        }
        w->len += n;
        int64_t total = json_integer_value(json_object_get(env_, "total_bytes"));
        more = json_is_true(json_object_get(env_, "has_more"));
        assert_int_equal(more, (int64_t)w->len < total);
        if (more) {
            assert_true(n > 0);
            snprintf(next, sizeof next, "%s", json_string_value(json_object_get(env_, "next_uri")));
            assert_non_null(strstr(json_string_value(json_object_get(env_, "hint")), next));
        }
        json_decref(env_);
        json_decref(resp);
    }
}

/* The huge session's Markdown, piece by piece to its end, is exactly the export. */
static void test_pieces_join_into_the_export_byte_for_byte(void **state)
{
    env *e = *state;
    size_t want_len;
    char *want = expected_export(e, HUGE, EXPORT_MD, &want_len);
    assert_true(want_len > 1000000);
    walked w;
    walk(e, "mcpage://export/" HUGE ".md", &w);
    assert_int_equal(w.len, want_len);
    assert_memory_equal(w.data, want, want_len);
    assert_true(w.pieces > 20); /* a megabyte never comes in one response */
    assert_false(w.saw_base64);
    free(w.data);
    free(want);
}

/* A jsonl export with bytes that are not UTF-8 comes (partly) as base64, joined exactly. */
static void test_bytes_that_are_not_utf8_come_as_base64(void **state)
{
    env *e = *state;
    size_t want_len;
    char *want = expected_export(e, HARD, EXPORT_JSONL, &want_len);
    walked w;
    walk(e, "mcpage://export/" HARD ".jsonl", &w);
    assert_int_equal(w.len, want_len);
    assert_memory_equal(w.data, want, want_len);
    assert_true(w.saw_base64);
    free(w.data);
    free(want);
}

/* export_session's resource_link names the resource, which reads the file it wrote. */
static void test_the_tool_links_to_the_resource(void **state)
{
    env *e = *state;
    json_t *r = tool_contract_call(e->srv, "export_session",
                                   json_pack("{s:s, s:s}", "session_id", HARD, "format", "html"));
    json_t *link = json_array_get(json_object_get(r, "content"), 1);
    assert_string_equal(json_string_value(json_object_get(link, "type")), "resource_link");
    assert_string_equal(json_string_value(json_object_get(link, "uri")),
                        "mcpage://export/" HARD ".html");
    json_t *sc = json_object_get(r, "structuredContent");
    assert_string_equal(json_string_value(json_object_get(sc, "uri")),
                        "mcpage://export/" HARD ".html");
    walked w;
    walk(e, "mcpage://export/" HARD ".html", &w);
    assert_int_equal((json_int_t)w.len, json_integer_value(json_object_get(link, "size")));
    FILE *f = fopen(json_string_value(json_object_get(sc, "path")), "rb");
    assert_non_null(f);
    char *file = malloc(w.len + 1);
    assert_int_equal(fread(file, 1, w.len + 1, f), w.len);
    fclose(f);
    assert_memory_equal(file, w.data, w.len);
    free(file);
    free(w.data);
    json_decref(r);
}

/* The error a read answered with (the response is checked for `code`). */
static void expect_error(env *e, const char *uri, int code, const char *says)
{
    json_t *resp = read_uri(e, uri);
    json_t *err = json_object_get(resp, "error");
    assert_non_null(err);
    assert_int_equal(json_integer_value(json_object_get(err, "code")), code);
    const char *msg = json_string_value(json_object_get(err, "message"));
    if (strstr(msg, says) == NULL)
        fail_msg("%s: expected \"%s\" in: %s", uri, says, msg);
    json_decref(resp);
}

/* Refusals: each a JSON-RPC error that says what to do. */
static void test_bad_cursors_and_unknown_exports_are_refused(void **state)
{
    env *e = *state;
    json_t *first = read_uri(e, "mcpage://export/" HUGE ".md");
    json_t *page = json_array_get(json_object_get(json_object_get(first, "result"), "contents"), 1);
    json_t *env_ = json_loads(json_string_value(json_object_get(page, "text")), 0, NULL);
    char next[2048], bad[2048];
    snprintf(next, sizeof next, "%s", json_string_value(json_object_get(env_, "next_uri")));
    json_decref(env_);
    json_decref(first);

    snprintf(bad, sizeof bad, "%s", next);
    char *tail = bad + strlen(bad) - 2;
    tail[0] = tail[0] == 'A' ? 'B' : 'A';
    expect_error(e, bad, -32602, "Read mcpage://export/" HUGE ".md for the first piece");
    /* a cursor of another export */
    json_decref(read_uri(e, "mcpage://export/" HARD ".md"));
    snprintf(bad, sizeof bad, "mcpage://export/" HARD ".md%s", strchr(next, '?'));
    expect_error(e, bad, -32602, "Invalid cursor");
    /* the file written again: its old cursors are refused, not spliced */
    json_decref(
        tool_contract_call(e->srv, "export_session", json_pack("{s:s}", "session_id", HUGE)));
    expect_error(e, next, -32602, "was written again since this cursor was issued");
    /* not an export: unknown session, unknown format, another spelling, another query */
    expect_error(e, "mcpage://export/no-such-session.md", -32002, "Resource not found");
    expect_error(e, "mcpage://export/" HUGE ".pdf", -32002, "Resource not found");
    expect_error(e, "mcpage://export/" HUGE ".markdown", -32002, "Resource not found");
    expect_error(e, "mcpage://export/" HUGE ".md?offset=5", -32002, "Resource not found");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_join_into_the_export_byte_for_byte),
        cmocka_unit_test(test_bytes_that_are_not_utf8_come_as_base64),
        cmocka_unit_test(test_the_tool_links_to_the_resource),
        cmocka_unit_test(test_bad_cursors_and_unknown_exports_are_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
