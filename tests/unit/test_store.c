/*
 * Tests for the store interface: keyset walks return every row once and
 * in order and agree with offset walks and exact counts; the generation
 * moves with every change; search syntax, filters and the rejected-query
 * error; raw windows, transcripts, summaries, activity, a concurrent
 * reader, lost connections. Run on SQLite (files in a temporary directory)
 * here and on PostgreSQL (a schema per fixture) by test_store_pg.c.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <libpq-fe.h>

#include <mcpage/mcpage.h>

#include "store/postgres/pg_internal.h"
#include "store/sqlite/sqlite_internal.h"
#include "store/store.h"
#include "store/store_backend.h"
#include "store/store_codec.h"
#include "store/store_words.h"
#include "support/store_backends.h"

typedef struct fixture {
    char dir[256];
    char db[1200]; /* the store's spec: a file or a postgres:// URL */
    store *s;
} fixture;

static const char *const words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"};

/* 4 projects x 15 sessions x (6..11) messages, with equal start times
 * in pairs so the order has to fall back to session_id. */
static void fill(store *s)
{
    if (store_begin(s) < 0)
        fail_msg("begin: %s", store_errmsg(s));
    for (int p = 0; p < 4; p++) {
        char path[64], name[32];
        snprintf(name, sizeof name, "proj%d", p);
        snprintf(path, sizeof path, "/home/u/%s", name);
        int64_t pid = 0;
        assert_int_equal(store_project_ensure(s, path, name, &pid), 0);
        for (int k = 0; k < 15; k++) {
            char sid[64], ts[40];
            snprintf(sid, sizeof sid, "sess-%d-%02d", p, k);
            store_session_meta m = {.session_id = sid,
                                    .source = (k % 3 == 0) ? "codex" : "claude",
                                    .project_id = pid,
                                    .model = (k % 2) ? "m-odd" : "m-even",
                                    .git_branch = "main",
                                    .source_path = "/dev/null"};
            assert_int_equal(store_session_put(s, &m), 0);
            int nmsg = 6 + (k % 6);
            for (int i = 0; i < nmsg; i++) {
                char text[256];
                snprintf(ts, sizeof ts, "2025-%02d-%02dT10:%02d:00Z", 1 + (k / 2) % 12, 1 + p * 7,
                         i);
                snprintf(text, sizeof text,
                         "%s message %d of %s uses foo-bar and c++ in "
                         "path/to/file.c with max_tokens %s",
                         words[(p + k + i) % 6], i, sid, (i == 3) ? "exact phrase here" : "");
                store_message msg = {.session_id = sid,
                                     .ordinal = i,
                                     .role = (i % 4 == 0)   ? "user"
                                             : (i % 4 == 3) ? "tool"
                                                            : "assistant",
                                     .timestamp = ts,
                                     .text = text,
                                     .tool_name = (i % 4 == 1 || i % 4 == 3) ? "Bash" : NULL,
                                     .tool_input = (i % 4 == 1) ? "ls" : NULL,
                                     .is_error = (i == 3 && k % 5 == 0),
                                     .line_no = i + 1,
                                     .byte_offset = i * 10,
                                     .byte_length = 9};
                int64_t id = 0;
                assert_int_equal(store_message_add(s, &msg, &id), 0);
            }
            assert_int_equal(store_raw_append(s, sid, (const unsigned char *)"0123456789", 10, 1),
                             0);
            assert_int_equal(store_session_refresh(s, sid), 0);
        }
    }
    assert_int_equal(store_commit(s), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mcpage-test-store-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    tb_spec(f->dir, "a", f->db, sizeof f->db);
    if (store_open(f->db, STORE_OPEN_WRITE, &f->s) < 0)
        return -1;
    fill(f->s);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_close(f->s);
    tb_cleanup();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

/* ---- generic walk checks ---------------------------------------------- */

#define MAXROWS 2000

typedef int (*list_fn)(store *s, const void *filter, const store_page *pg, char ids[][80],
                       store_key *keys, size_t *n);
typedef int (*count_fn)(store *s, const void *filter, int64_t *n);

static int sessions_page(store *s, const void *f, const store_page *pg, char ids[][80],
                         store_key *keys, size_t *n)
{
    store_sessions l;
    int rc = store_sessions_list(s, f, pg, &l);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l.count; i++) {
        snprintf(ids[i], 80, "%s", l.rows[i].session_id);
        keys[i] = l.rows[i].key;
    }
    *n = l.count;
    store_sessions_free(&l);
    return 0;
}

static int sessions_total(store *s, const void *f, int64_t *n)
{
    return store_sessions_count(s, f, n);
}

static int projects_page(store *s, const void *f, const store_page *pg, char ids[][80],
                         store_key *keys, size_t *n)
{
    store_projects l;
    int rc = store_projects_list(s, f, pg, &l);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l.count; i++) {
        snprintf(ids[i], 80, "%lld", (long long)l.rows[i].id);
        keys[i] = l.rows[i].key;
    }
    *n = l.count;
    store_projects_free(&l);
    return 0;
}

static int projects_total(store *s, const void *f, int64_t *n)
{
    return store_projects_count(s, f, n);
}

static int hits_page(store *s, const void *f, const store_page *pg, char ids[][80], store_key *keys,
                     size_t *n)
{
    store_hits l;
    int rc = store_search(s, f, pg, &l);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l.count; i++) {
        snprintf(ids[i], 80, "%lld", (long long)l.rows[i].message_id);
        keys[i] = l.rows[i].key;
    }
    *n = l.count;
    store_hits_free(&l);
    return 0;
}

static int hits_total(store *s, const void *f, int64_t *n)
{
    return store_search_count(s, f, n);
}

static char (*all_ids)[80];
static char (*page_ids)[80];
static store_key *page_keys;

/* Walks the list three ways and checks they agree; returns the row count. */
static size_t check_walks(store *s, const void *filter, list_fn list, count_fn count,
                          int64_t page_size)
{
    size_t n_all = 0, n_key = 0, n_off = 0, n = 0;
    store_key keys_unused[MAXROWS];
    int64_t total = -1;
    assert_int_equal(count(s, filter, &total), 0);
    /* all at once (in chunks of the maximum) */
    store_page pg = {.limit = STORE_LIMIT_MAX};
    assert_int_equal(list(s, filter, &pg, all_ids, keys_unused, &n_all), 0);
    assert_int_equal((int64_t)n_all, total < STORE_LIMIT_MAX ? total : STORE_LIMIT_MAX);
    /* keyset walk */
    store_key after = {0};
    for (;;) {
        store_page kp = {.after = &after, .limit = page_size};
        assert_int_equal(list(s, filter, &kp, page_ids, page_keys, &n), 0);
        for (size_t i = 0; i < n; i++) {
            assert_true(n_key < n_all);
            assert_string_equal(page_ids[i], all_ids[n_key]);
            n_key++;
        }
        if (n < (size_t)page_size)
            break;
        after = page_keys[n - 1];
    }
    assert_int_equal(n_key, n_all);
    /* offset walk */
    for (int64_t off = 0;; off += page_size) {
        store_page op = {.offset = off, .limit = page_size};
        assert_int_equal(list(s, filter, &op, page_ids, page_keys, &n), 0);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(page_ids[i], all_ids[n_off]);
            n_off++;
        }
        if (n < (size_t)page_size)
            break;
    }
    assert_int_equal(n_off, n_all);
    /* each row exactly once */
    for (size_t i = 0; i < n_all; i++)
        for (size_t j = i + 1; j < n_all; j++)
            assert_string_not_equal(all_ids[i], all_ids[j]);
    return n_all;
}

static void session_walks_agree_with_offsets_and_counts(void **state)
{
    fixture *f = *state;
    store_session_filter flt = {0};
    assert_int_equal(check_walks(f->s, &flt, sessions_page, sessions_total, 7), 60);
    flt.order = STORE_OLDEST;
    assert_int_equal(check_walks(f->s, &flt, sessions_page, sessions_total, 4), 60);
    flt.project = "proj2";
    assert_int_equal(check_walks(f->s, &flt, sessions_page, sessions_total, 3), 15);
    flt.source = "codex";
    assert_int_equal(check_walks(f->s, &flt, sessions_page, sessions_total, 2), 5);
    store_session_filter f2 = {.model = "m-odd", .after = "2025-03-01", .before = "2025-06-01"};
    size_t n = check_walks(f->s, &f2, sessions_page, sessions_total, 5);
    assert_true(n > 0 && n < 60);
}

static void sessions_newest_are_ordered_by_start_then_id(void **state)
{
    fixture *f = *state;
    store_page pg = {.limit = 100};
    store_sessions l;
    assert_int_equal(store_sessions_list(f->s, NULL, &pg, &l), 0);
    assert_int_equal(l.count, 60);
    for (size_t i = 1; i < l.count; i++) {
        int c = strcmp(l.rows[i - 1].started_at, l.rows[i].started_at);
        assert_true(c > 0 ||
                    (c == 0 && strcmp(l.rows[i - 1].session_id, l.rows[i].session_id) > 0));
    }
    assert_string_equal(l.rows[0].project, "proj3");
    assert_true(l.rows[0].message_count >= 6);
    store_sessions_free(&l);
}

static void project_walks_in_every_sort(void **state)
{
    fixture *f = *state;
    store_project_filter flt = {0};
    for (int sort = STORE_PROJECTS_RECENT; sort <= STORE_PROJECTS_SIZE; sort++) {
        flt.sort = (store_project_sort)sort;
        assert_int_equal(check_walks(f->s, &flt, projects_page, projects_total, 1), 4);
    }
    flt.name_contains = "OJ2";
    assert_int_equal(check_walks(f->s, &flt, projects_page, projects_total, 1), 1);
    store_project_filter src = {.source = "codex"};
    assert_int_equal(check_walks(f->s, &src, projects_page, projects_total, 2), 4);
    store_page pg = {.limit = 10};
    store_projects l;
    assert_int_equal(store_projects_list(f->s, NULL, &pg, &l), 0);
    assert_int_equal(l.count, 4);
    assert_string_equal(l.rows[0].name, "proj3");
    assert_int_equal(l.rows[0].session_count, 15);
    assert_string_equal(l.rows[0].sources, "claude,codex");
    store_projects_free(&l);
}

/*
 * A page of `limit` rows of which the caller shows limit - 1 (a tool's
 * page and the row that says a next one exists): the rows shown are
 * those of the page that shows them all, and on SQLite, when one pass
 * over the matches picked the page, the last row gets no snippet and no
 * line (the row is the same). 1 when it was so.
 */
static int peek_row_is_not_cut(store *s, const store_search_filter *sf, int64_t offset)
{
    store_page all = {.offset = offset, .limit = 6}, shown = all;
    shown.shown = 5;
    store_hits a = {0}, b = {0};
    int64_t total = 0; /* counted first, as a tool's first page does (a pass needs the count) */
    assert_int_equal(store_search_count(s, sf, &total), 0);
    assert_int_equal(store_search(s, sf, &all, &a), 0);
    int64_t passes = store_sqlite__snippet_passes;
    assert_int_equal(store_search(s, sf, &shown, &b), 0);
    int pass = store_sqlite__snippet_passes > passes; /* (SQLite only) */
    assert_int_equal(a.count, 6);
    assert_int_equal(b.count, 6);
    for (size_t i = 0; i < b.count; i++) {
        assert_int_equal(a.rows[i].message_id, b.rows[i].message_id);
        if (i == 5 && pass) {
            assert_string_equal(b.rows[i].snippet, "");
            assert_int_equal(b.rows[i].before_count, 0);
            assert_int_equal(b.rows[i].before_lines, 0);
            continue;
        }
        assert_string_equal(a.rows[i].snippet, b.rows[i].snippet);
        assert_non_null(strstr(b.rows[i].snippet, STORE_HIT_OPEN));
        assert_int_equal(a.rows[i].before_count, b.rows[i].before_count);
        assert_int_equal(a.rows[i].before_lines, b.rows[i].before_lines);
    }
    store_hits_free(&a);
    store_hits_free(&b);
    return pass;
}

static void search_walks_in_every_sort(void **state)
{
    fixture *f = *state;
    store_search_filter flt = {.query = "alpha"};
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        flt.sort = (store_search_sort)sort;
        size_t n = check_walks(f->s, &flt, hits_page, hits_total, 9);
        assert_true(n > 50);
    }
    /* Newest and oldest on SQLite: every plan gives the same walks (the
       cost model picks one by the counts; forced here, each in turn). */
    if (!store_spec_is_url(f->db)) {
        for (int plan = 1; plan <= 6; plan++) {
            /* each plan with each way the snippets are joined (the page
               outside, or the matches outside) */
            store_sqlite__force_plan = (plan + 1) / 2;
            store_sqlite__force_outer = plan % 2 ? -1 : 1;
            for (int sort = STORE_SEARCH_NEWEST; sort <= STORE_SEARCH_OLDEST; sort++) {
                store_search_filter pf = {.query = "alpha", .sort = (store_search_sort)sort};
                assert_true(check_walks(f->s, &pf, hits_page, hits_total, 9) > 50);
                pf.query = "\"exact phrase here\"";
                pf.after = "2025-02-01";
                assert_true(check_walks(f->s, &pf, hits_page, hits_total, 4) > 5);
                pf.query = "alp*";
                pf.after = NULL;
                assert_true(check_walks(f->s, &pf, hits_page, hits_total, 7) > 50);
            }
        }
        store_sqlite__force_plan = 0;
        /* both joins give the same rows with the same snippets */
        store_search_filter sf = {.query = "\"exact phrase here\"", .sort = STORE_SEARCH_NEWEST};
        store_page pg = {.limit = 5};
        store_hits a = {0}, b = {0};
        store_sqlite__force_outer = -1;
        assert_int_equal(store_search(f->s, &sf, &pg, &a), 0);
        store_sqlite__force_outer = 1;
        assert_int_equal(store_search(f->s, &sf, &pg, &b), 0);
        store_sqlite__force_outer = 0;
        assert_int_equal(a.count, 5);
        assert_int_equal(a.count, b.count);
        for (size_t i = 0; i < a.count; i++) {
            assert_int_equal(a.rows[i].message_id, b.rows[i].message_id);
            assert_string_equal(a.rows[i].snippet, b.rows[i].snippet);
            assert_int_equal(a.rows[i].before_lines, b.rows[i].before_lines);
            assert_non_null(
                strstr(a.rows[i].snippet, STORE_HIT_OPEN "exact phrase here" STORE_HIT_CLOSE));
        }
        store_hits_free(&a);
        store_hits_free(&b);
    }
    /* with filters: the joined plans */
    store_search_filter ff = {.query = "alpha", .role = "assistant", .after = "2025-02-01"};
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        ff.sort = (store_search_sort)sort;
        size_t n = check_walks(f->s, &ff, hits_page, hits_total, 4);
        assert_true(n > 5);
    }
    store_search_filter fp = {.query = "alpha", .project = "proj2", .source = "claude"};
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        fp.sort = (store_search_sort)sort;
        assert_true(check_walks(f->s, &fp, hits_page, hits_total, 3) > 2);
    }
    /* the row past the rows shown, in every sort, on a first and a later page */
    int peeks = 0;
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        store_search_filter pf = {.query = "alpha", .sort = (store_search_sort)sort};
        peeks += peek_row_is_not_cut(f->s, &pf, 0);
        peeks += peek_row_is_not_cut(f->s, &pf, 7);
        pf.role = "assistant"; /* (the matches are not counted: no pass) */
        peek_row_is_not_cut(f->s, &pf, 0);
    }
    assert_int_equal(peeks, store_spec_is_url(f->db) ? 0 : 6);
}

static int64_t hits(store *s, store_search_filter *flt)
{
    int64_t n = -1;
    int rc = store_search_count(s, flt, &n);
    if (rc < 0)
        return rc;
    return n;
}

static void search_syntax_and_filters(void **state)
{
    fixture *f = *state;
    int64_t all = 0;
    assert_int_equal(store_search_count(f->s, &(store_search_filter){.query = "message"}, &all), 0);
    assert_true(all > 400);
    store_search_filter q = {.query = "\"exact phrase here\""};
    assert_int_equal(hits(f->s, &q), 60); /* one per session */
    q.query = "\"phrase exact\"";
    assert_int_equal(hits(f->s, &q), 0);
    q.query = "foo-bar";
    assert_int_equal(hits(f->s, &q), all);
    q.query = "c++";
    assert_int_equal(hits(f->s, &q), all);
    q.query = "path/to/file.c";
    assert_int_equal(hits(f->s, &q), all);
    q.query = "max_tokens";
    assert_int_equal(hits(f->s, &q), all);
    q.query = "max"; /* a part of the identifier max_tokens (store_words.h) */
    assert_int_equal(hits(f->s, &q), all);
    q.query = "\"max\""; /* a quoted word stays exact: max_tokens is one token */
    assert_int_equal(hits(f->s, &q), 0);
    q.query = "max_tok*";
    assert_int_equal(hits(f->s, &q), all);
    q.query = "AND OR NOT ( ) : ^";
    assert_true(hits(f->s, &q) >= 0 || hits(f->s, &q) == MCPAGE_EPARSE);
    q.query = "sess-1-03";
    assert_int_equal(hits(f->s, &q), 9);
    q = (store_search_filter){.query = "message", .role = "user"};
    int64_t users = hits(f->s, &q);
    assert_true(users > 0 && users < all);
    q = (store_search_filter){.query = "message", .tool = "Bash"};
    int64_t bash = hits(f->s, &q);
    assert_true(bash > 0 && bash < all);
    q = (store_search_filter){.query = "message", .has_error = 1};
    assert_int_equal(hits(f->s, &q), 12);
    q.has_error = -1;
    assert_int_equal(hits(f->s, &q), all - 12);
    q = (store_search_filter){.query = "message", .project = "proj1", .source = "codex"};
    assert_true(hits(f->s, &q) > 0);
    q = (store_search_filter){.query = "message", .after = "2025-02-01", .before = "2025-03-01"};
    int64_t feb = hits(f->s, &q);
    assert_true(feb > 0 && feb < all);

    /* snippets mark hits */
    store_page pg = {.limit = 3};
    store_hits h;
    q = (store_search_filter){.query = "charlie", .sort = STORE_SEARCH_NEWEST};
    assert_int_equal(store_search(f->s, &q, &pg, &h), 0);
    assert_int_equal(h.count, 3);
    assert_non_null(strstr(h.rows[0].snippet, STORE_HIT_OPEN "charlie" STORE_HIT_CLOSE));
    assert_non_null(h.rows[0].project);
    store_hits_free(&h);
}

/* The snippet of the one hit of `query` (malloc'd). */
static char *snippet_of(store *s, const char *query)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_NEWEST};
    store_page pg = {.limit = 2};
    store_hits h;
    assert_int_equal(store_search(s, &q, &pg, &h), 0);
    assert_int_equal(h.count, 1);
    char *snip = strdup(h.rows[0].snippet);
    store_hits_free(&h);
    return snip;
}

/*
 * Snippets are cut the same way on both backends: a 24-token window
 * centred on the best-scoring matches, ellipses where text was left out,
 * overlapping matches one span; a match deep in a large message is found
 * without reading the rest (speed is bench/run_tools_bench.sh's to show).
 */
static void snippets_are_cut_around_the_best_matches(void **state)
{
    fixture *f = *state;
    /* t000 ... t199 (t100 replaced), then 200 KB of filler: within the 65,535
       tokens PostgreSQL indexes. */
    size_t cap = 200000, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 200; i++)
        len += (size_t)snprintf(text + len, cap - len, i == 100 ? "quokkafish " : "t%03d ", i);
    while (len + 32 < cap - 64)
        len += (size_t)snprintf(text + len, cap - len, "filler line of a long output\n");
    snprintf(text + len, cap - len, "tail");
    assert_int_equal(store_begin(f->s), 0);
    store_session_meta m = {.session_id = "snip-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(f->s, &m), 0);
    const char *texts[] = {text, "the zebu is here", "the gull zebu gull here"};
    for (int i = 0; i < 3; i++) {
        store_message msg = {.session_id = "snip-1",
                             .ordinal = i,
                             .role = "tool",
                             .timestamp = i == 0 ? "2026-01-01T00:00:00Z" : "2026-01-01T00:00:01Z",
                             .text = (char *)texts[i]};
        int64_t id = 0;
        assert_int_equal(store_message_add(f->s, &msg, &id), 0);
    }
    assert_int_equal(store_session_refresh(f->s, "snip-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    free(text);

    char *snip = snippet_of(f->s, "quokkafish");
    assert_string_equal(snip,
                        "…t089 t090 t091 t092 t093 t094 t095 t096 t097 t098 t099 " STORE_HIT_OPEN
                        "quokkafish" STORE_HIT_CLOSE
                        " t101 t102 t103 t104 t105 t106 t107 t108 t109 t110 t111 t112…");
    free(snip);
    /* Two phrases in one window beat one; between equals, the first wins. */
    snip = snippet_of(f->s, "t050 t104 quokkafish");
    assert_string_equal(snip, "…t091 t092 t093 t094 t095 t096 t097 t098 t099 " STORE_HIT_OPEN
                              "quokkafish" STORE_HIT_CLOSE " t101 t102 t103 " STORE_HIT_OPEN
                              "t104" STORE_HIT_CLOSE
                              " t105 t106 t107 t108 t109 t110 t111 t112 t113 t114…");
    free(snip);
    snip = snippet_of(f->s, "t050 quokkafish");
    assert_string_equal(snip,
                        "…t039 t040 t041 t042 t043 t044 t045 t046 t047 t048 t049 " STORE_HIT_OPEN
                        "t050" STORE_HIT_CLOSE
                        " t051 t052 t053 t054 t055 t056 t057 t058 t059 t060 t061 t062…");
    free(snip);
    snip = snippet_of(f->s, "\"t150 t151\"");
    assert_string_equal(snip,
                        "…t139 t140 t141 t142 t143 t144 t145 t146 t147 t148 t149 " STORE_HIT_OPEN
                        "t150 t151" STORE_HIT_CLOSE
                        " t152 t153 t154 t155 t156 t157 t158 t159 t160 t161 t162…");
    free(snip);
    snip = snippet_of(f->s, "tail");
    assert_non_null(
        strstr(snip, "filler line of a long output\n" STORE_HIT_OPEN "tail" STORE_HIT_CLOSE));
    assert_memory_equal(snip, "…", strlen("…"));
    free(snip);
    snip = snippet_of(f->s, "zebu is");
    assert_string_equal(snip, "the " STORE_HIT_OPEN "zebu" STORE_HIT_CLOSE " " STORE_HIT_OPEN
                              "is" STORE_HIT_CLOSE " here");
    free(snip);
    snip = snippet_of(f->s, "gull");
    assert_string_equal(snip, "the " STORE_HIT_OPEN "gull" STORE_HIT_CLOSE " zebu " STORE_HIT_OPEN
                              "gull" STORE_HIT_CLOSE " here");
    free(snip);
}

/* Every query's snippet with the token map, then cut from the whole text. */
static void snippets_agree_with_whole_text(store *s, const char *const *queries, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *windowed = snippet_of(s, queries[i]);
        store_sqlite__snippet_whole = 1;
        char *whole = snippet_of(s, queries[i]);
        store_sqlite__snippet_whole = 0;
        if (strcmp(windowed, whole) != 0)
            fail_msg("query %s: windowed \"%s\", whole \"%s\"", queries[i], windowed, whole);
        free(windowed);
        free(whole);
    }
}

/* The integer `sql` gives on the SQLite file at path, or -1 when it fails. */
static int64_t file_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/*
 * Makes an SQLite store's message text as schema version 12 kept it: the
 * table message_text of plain texts with its triggers, no message_body,
 * view or packing state (a stock connection that can decode).
 */
static void text_as_version_12(sqlite3 *db)
{
    assert_int_equal(store_sqlite_text_register(db), 0);
    char *err = NULL;
    int rc = sqlite3_exec(
        db,
        "CREATE TABLE message_plain AS SELECT message_id, text FROM message_text;"
        "DROP VIEW message_text;"
        "DROP TABLE message_body;" /* and its triggers */
        "CREATE TABLE message_text(message_id INTEGER PRIMARY KEY, text TEXT NOT NULL);"
        "INSERT INTO message_text SELECT message_id, text FROM message_plain ORDER BY 1;"
        "DROP TABLE message_plain;"
        "CREATE TRIGGER message_text_ad AFTER DELETE ON message_text BEGIN"
        "  INSERT INTO messages_fts(messages_fts, rowid, text)"
        "  VALUES('delete', old.message_id, old.text); END;"
        "CREATE TRIGGER message_text_au AFTER UPDATE OF text ON message_text BEGIN"
        "  INSERT INTO messages_fts(messages_fts, rowid, text)"
        "  VALUES('delete', old.message_id, old.text);"
        "  INSERT INTO messages_fts(rowid, text) VALUES(new.message_id, new.text); END;"
        "CREATE TRIGGER IF NOT EXISTS message_tokmap_ad AFTER DELETE ON message_text BEGIN"
        "  DELETE FROM message_tokmap WHERE message_id = old.message_id;"
        "  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes'; END;"
        "CREATE TRIGGER IF NOT EXISTS message_tokmap_au AFTER UPDATE OF text ON message_text BEGIN"
        "  DELETE FROM message_tokmap WHERE message_id = old.message_id;"
        "  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes'; END;"
        "DELETE FROM meta WHERE key IN ('text_pack_at', 'text_pack_until');"
        "DELETE FROM schema_version WHERE version >= 13;",
        NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fail_msg("%s", err);
}

/* Drops the store's token maps (and what later versions added) as a
 * store of schema version 3, then
 * opens it for writing: the migration maps every text again. */
static void remap_tokens(fixture *f)
{
    store_close(f->s);
    f->s = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    text_as_version_12(db);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP TABLE message_tokmap; DROP TRIGGER message_tokmap_ad; "
                     "DROP TRIGGER message_tokmap_au; "
                     "DELETE FROM meta WHERE key IN ('text_deletes', 'store_id'); "
                     "DROP TABLE usage_calls; DROP TABLE usage_state; DROP TABLE usage_hours; "
                     "DELETE FROM schema_version WHERE version >= 4;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(file_int(f->db, "SELECT count(*) FROM message_tokmap"), -1);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
}

/*
 * A long text's snippet is cut from a window read by its token map
 * (SQLite): the same string as from the whole text, with words of every
 * kind (accents, emoji, CJK, punctuation outside ASCII, snake_case,
 * paths) before and in the window, at the start, deep inside and at the
 * very end; and a store written before the map existed gets its maps
 * when a writer opens it.
 */
static void long_text_snippets_read_a_window(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    static const char *const w[] = {
        "émoji🙂", "日本語 テスト", "naïve",     "max_tokens", "path/to/file.c",
        "c++",        "x—y",           "façade",    "a…b",        "¿qué?",
        "Ünïcödé",    "привет",        "tab\there", "«quoted»"};
    size_t cap = 4 << 20, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 30000; i++)
        len += (size_t)snprintf(text + len, cap - len, "row%05d: %s %s%s ok\n", i, w[i % 14],
                                w[(i * 7) % 14], i == 7 || i == 17777 ? " zorilla" : "");
    snprintf(text + len, cap - len, "the end: ocelot¿");
    assert_int_equal(store_begin(f->s), 0);
    store_session_meta m = {.session_id = "long-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(f->s, &m), 0);
    store_message msg = {.session_id = "long-1",
                         .ordinal = 0,
                         .role = "tool",
                         .timestamp = "2026-01-01T00:00:00Z",
                         .text = text};
    int64_t id = 0;
    assert_int_equal(store_message_add(f->s, &msg, &id), 0);
    assert_int_equal(store_session_refresh(f->s, "long-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    free(text);
    /* fill()'s short texts have no map, the long one has */
    assert_int_equal(file_int(f->db, "SELECT count(*) FROM message_tokmap"), 1);
    static const char *const queries[] = {
        "row00000",         "row00007",           "zorilla",  "row17777",
        "row17777 zorilla", "\"row12000 naïve\"", "row29999", "ocelot",
        "row2999*",         "row00255",           "row00256", "row15000 row15001",
        "テスト row20000",  "quoted row00013"};
    snippets_agree_with_whole_text(f->s, queries, sizeof queries / sizeof queries[0]);
    char *snip = snippet_of(f->s, "ocelot");
    assert_non_null(strstr(snip, "the end: " STORE_HIT_OPEN "ocelot" STORE_HIT_CLOSE "¿"));
    free(snip);

    /* A store without maps (schema version 3) gets them from a writer. */
    remap_tokens(f);
    assert_int_equal(file_int(f->db, "SELECT count(*) FROM message_tokmap"), 1);
    snippets_agree_with_whole_text(f->s, queries, sizeof queries / sizeof queries[0]);
}

/*
 * Each session's row of a grouped search is the first of its matches in
 * the plain search's own order (ties of rank or time broken alike), the
 * rows come in the order of those first matches, and each row's hits,
 * first and last match are its session's in the plain walk.
 */
static void grouped_agrees_with_plain(store *s, const char *query)
{
    enum { MAXS = 256 };
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        char sid[MAXS][80];
        int64_t rep[MAXS], n[MAXS], fo[MAXS], lo[MAXS], fid[MAXS], lid[MAXS];
        size_t ns = 0;
        store_search_filter plain = {.query = query, .sort = (store_search_sort)sort};
        for (int64_t off = 0;; off += 50) {
            store_page pg = {.limit = 50, .offset = off};
            store_hits h = {0};
            assert_int_equal(store_search(s, &plain, &pg, &h), 0);
            for (size_t i = 0; i < h.count; i++) {
                const store_hit *r = &h.rows[i];
                size_t k = 0;
                while (k < ns && strcmp(sid[k], r->session_id) != 0)
                    k++;
                if (k == ns) {
                    assert_true(ns < MAXS);
                    snprintf(sid[ns], sizeof sid[ns], "%s", r->session_id);
                    rep[ns] = r->message_id, n[ns] = 0;
                    fo[ns] = lo[ns] = r->ordinal, fid[ns] = lid[ns] = r->message_id;
                    ns++;
                }
                n[k]++;
                if (r->ordinal < fo[k])
                    fo[k] = r->ordinal, fid[k] = r->message_id;
                if (r->ordinal > lo[k])
                    lo[k] = r->ordinal, lid[k] = r->message_id;
            }
            size_t got = h.count;
            store_hits_free(&h);
            if (got < 50)
                break;
        }
        assert_true(ns > 1);
        store_search_filter g = plain;
        g.by_session = 1;
        store_page pg = {.limit = MAXS};
        store_hits h = {0};
        assert_int_equal(store_search(s, &g, &pg, &h), 0);
        assert_int_equal(h.count, ns);
        for (size_t i = 0; i < ns; i++) {
            const store_hit *r = &h.rows[i];
            assert_string_equal(r->session_id, sid[i]);
            assert_int_equal(r->message_id, rep[i]);
            assert_int_equal(r->hits, n[i]);
            assert_int_equal(r->first_id, fid[i]);
            assert_int_equal(r->last_id, lid[i]);
        }
        store_hits_free(&h);
    }
}

/*
 * A search grouped by session: one row per session holding a match (its
 * best, latest or earliest match), the session's hit count and first and
 * last hit; keyset, offset and whole walks agree with the count of
 * sessions, on both backends.
 */
static void search_grouped_by_session(void **state)
{
    fixture *f = *state;
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        store_search_filter g = {
            .query = "alpha", .sort = (store_search_sort)sort, .by_session = 1};
        size_t n = check_walks(f->s, &g, hits_page, hits_total, 7);
        assert_int_equal(n, 60); /* every session has an alpha message */
        g.project = "proj2";
        assert_int_equal(check_walks(f->s, &g, hits_page, hits_total, 4), 15);
    }
    /* each row against the plain search of its session */
    store_search_filter g = {.query = "\"exact phrase here\" message", .by_session = 1};
    store_page pg = {.limit = 100};
    store_hits h = {0};
    assert_int_equal(store_search(f->s, &g, &pg, &h), 0);
    assert_int_equal(h.count, 60);
    int64_t sum = 0;
    for (size_t i = 0; i < h.count; i++) {
        const store_hit *r = &h.rows[i];
        assert_int_equal(r->hits, 1); /* fill(): one phrase per session, at ordinal 3 */
        assert_int_equal(r->first_id, r->message_id);
        assert_int_equal(r->last_id, r->message_id);
        assert_int_equal(r->ordinal, 3);
        assert_non_null(strstr(r->snippet, STORE_HIT_OPEN "exact phrase here" STORE_HIT_CLOSE));
        assert_int_equal(r->before_count, 3);
        if (i > 0)
            assert_true(r->rank >= h.rows[i - 1].rank);
        sum += r->hits;
    }
    store_hits_free(&h);
    assert_int_equal(sum, 60);
    /* a word in every message: each session's count, first and last */
    store_search_filter all = {.query = "message", .sort = STORE_SEARCH_NEWEST, .by_session = 1};
    assert_int_equal(store_search(f->s, &all, &pg, &h), 0);
    assert_int_equal(h.count, 60);
    int64_t total = 0;
    for (size_t i = 0; i < h.count; i++) {
        const store_hit *r = &h.rows[i];
        assert_true(r->hits >= 6 && r->hits <= 11);
        assert_true(r->first_id < r->last_id);
        assert_int_equal(r->last_id, r->message_id); /* newest: the latest hit represents */
        assert_int_equal(r->ordinal, r->hits - 1);
        total += r->hits;
        if (i > 0) /* newest first, by the representative's time */
            assert_true(strcmp(r->timestamp, h.rows[i - 1].timestamp) <= 0);
    }
    store_hits_free(&h);
    int64_t matches = 0, sessions = 0;
    store_search_filter plain = {.query = "message"};
    assert_int_equal(store_search_count(f->s, &plain, &matches), 0);
    assert_int_equal(store_search_count(f->s, &all, &sessions), 0);
    assert_int_equal(total, matches);
    assert_int_equal(sessions, 60);
    /* many ties: the fixture's texts repeat across sessions */
    grouped_agrees_with_plain(f->s, "alpha");
    grouped_agrees_with_plain(f->s, "message");
}

/* ---- words a developer types (store_words.h) --------------------------- */

static const char *const dev_texts[] = {
    "The SessionLive component renders the list",
    "waiting_summary.ex holds the summary while waiting",
    "rendering the sprites took long",
    "we rendered it twice",
    "call render() again",
    "HTTPServer and v2Handler and __init__",
    "session live notes",
};

static void add_dev_texts(store *s)
{
    assert_int_equal(store_begin(s), 0);
    store_session_meta m = {
        .session_id = "words-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(s, &m), 0);
    for (size_t i = 0; i < sizeof dev_texts / sizeof dev_texts[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "%s", dev_texts[i]);
        store_message msg = {.session_id = "words-1",
                             .ordinal = (int64_t)i,
                             .role = "user",
                             .timestamp = "2026-02-01T00:00:00Z",
                             .text = text,
                             .line_no = (int64_t)i + 1};
        int64_t id = 0;
        assert_int_equal(store_message_add(s, &msg, &id), 0);
    }
    assert_int_equal(store_session_refresh(s, "words-1"), 0);
    assert_int_equal(store_commit(s), 0);
}

/* The counts and snippets of the words a developer types, the same on both backends. */
static void dev_words_are_found(store *s)
{
    static const struct {
        const char *query;
        int64_t n;
    } want[] = {
        {"session live", 2},     /* SessionLive, and the two words */
        {"\"session live\"", 1}, /* a quoted phrase stays exact */
        {"SessionLive", 1},      /* an identifier finds itself */
        {"sessionlive", 1},
        {"waiting summary", 1},
        {"waiting_summary", 1},
        {"waiting_summary.ex", 1},
        {"render", 4}, /* renders, rendering, rendered, render */
        {"Rendering", 4},
        {"renders", 4},
        {"\"rendering\"", 1}, /* quoted: the exact form */
        {"render*", 4},
        {"server", 1},
        {"http", 1},
        {"handler", 1},
        {"v2", 1},
        {"init", 1},
        {"\"init\"", 0},
        {"~render", 4}, /* the class mark is a separator in what users type */
        {"\"~render\"", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        store_search_filter q = {.query = want[i].query};
        int64_t n = hits(s, &q);
        if (n != want[i].n)
            fail_msg("%s: %lld matches, want %lld", want[i].query, (long long)n,
                     (long long)want[i].n);
    }
    char *snip = snippet_of(s, "rendered sprites");
    assert_string_equal(snip, "【rendering】 the 【sprites】 took long");
    free(snip);
    snip = snippet_of(s, "session live component");
    assert_string_equal(snip, "The 【SessionLive】 【component】 renders the list");
    free(snip);
    snip = snippet_of(s, "handler");
    assert_string_equal(snip, "HTTPServer and 【v2Handler】 and __init__");
    free(snip);
    /* words that are their own stem: indexed without their class, found by it */
    snip = snippet_of(s, "again render");
    assert_string_equal(snip, "call 【render】() 【again】");
    free(snip);
}

static void dev_words_are_split_and_stemmed(void **state)
{
    fixture *f = *state;
    add_dev_texts(f->s);
    dev_words_are_found(f->s);
}

/* Adds `texts` to session `sid` from ordinal `from`, their ids into ids;
 * commits unless `keep_open` (the transaction stays open then). */
static void add_texts(store *s, const char *sid, int from, const char *const *texts, int n,
                      int64_t *ids, int keep_open)
{
    assert_int_equal(store_begin(s), 0);
    store_session_meta m = {
        .session_id = (char *)sid, .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(s, &m), 0);
    for (int i = 0; i < n; i++) {
        store_message msg = {.session_id = (char *)sid,
                             .ordinal = from + i,
                             .role = "user",
                             .timestamp = "2026-02-02T00:00:00Z",
                             .text = (char *)texts[i],
                             .line_no = from + i + 1};
        assert_int_equal(store_message_add(s, &msg, &ids[i]), 0);
    }
    assert_int_equal(store_session_refresh(s, sid), 0);
    if (!keep_open)
        assert_int_equal(store_commit(s), 0);
}

/* A relevance page of `query` (at most 8 rows): its ids and ranks; the row count. */
static size_t relevance_page(store *s, const char *query, int64_t *ids, double *ranks)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_RELEVANCE};
    store_page pg = {.limit = 8};
    store_hits h = {0};
    assert_int_equal(store_search(s, &q, &pg, &h), 0);
    for (size_t i = 0; i < h.count; i++) {
        ids[i] = h.rows[i].message_id;
        ranks[i] = h.rows[i].rank;
    }
    size_t n = h.count;
    store_hits_free(&h);
    return n;
}

/* The SQLite page and count of `query` are the same when its own-stem
 * classes are asked for with their word as a synonym (the knob), by the
 * impact lists and by scoring every match. */
static void own_stem_alone_is_the_synonym(store *s, const char *query)
{
    int64_t ids[8], want_ids[8];
    double ranks[8], want_ranks[8];
    int64_t want_n = hits(s, &(store_search_filter){.query = query});
    size_t want = relevance_page(s, query, want_ids, want_ranks);
    for (int way = 0; way < 4; way++) {
        store_sqlite__class_alone_off = way & 1;
        store_sqlite__impact_off = way >> 1;
        size_t n = relevance_page(s, query, ids, ranks);
        int64_t count = hits(s, &(store_search_filter){.query = query});
        store_sqlite__class_alone_off = 0;
        store_sqlite__impact_off = 0;
        assert_int_equal(count, want_n);
        assert_int_equal(n, want);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(ids[i], want_ids[i]);
            assert_true(ranks[i] == want_ranks[i]); /* the same bm25, to the bit */
        }
    }
}

/*
 * A word that is its own stem (`render`, `the`, `list`) is indexed
 * without its class, and while no other word of the class is indexed
 * SQLite's query asks for the word alone (no empty synonym for FTS5 to
 * merge): the same rows, ranks and counts. A reader that asked so finds
 * the class's rows a writer adds next (`renders`), and so does the
 * writer, inside its own transaction too. PostgreSQL: the same counts.
 */
static void own_stem_word_alone_until_its_class_is_indexed(void **state)
{
    fixture *f = *state;
    int pg = store_spec_is_url(f->db);
    static const char *const first[] = {"call render() again", "the render loop draws the list",
                                        "render the page then render it"};
    int64_t ids[3], more[1], page[8];
    double ranks[8];
    add_texts(f->s, "own-1", 0, first, 3, ids, 0);
    store *r = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &r), 0);
    int64_t alone = store_sqlite__class_alone;
    assert_int_equal(hits(r, &(store_search_filter){.query = "render"}), 3);
    if (!pg) /* `render` alone */
        assert_true(store_sqlite__class_alone > alone);
    assert_int_equal(hits(r, &(store_search_filter){.query = "the"}), 2);
    assert_int_equal(hits(r, &(store_search_filter){.query = "render the"}), 2);
    assert_int_equal(relevance_page(r, "render", page, ranks), 3);
    if (!pg) {
        /* twice in 6 tokens, once in 3, once in 6 */
        assert_int_equal(page[0], ids[2]);
        assert_int_equal(page[1], ids[0]);
        assert_int_equal(page[2], ids[1]);
        own_stem_alone_is_the_synonym(r, "render");
        own_stem_alone_is_the_synonym(r, "the");
        own_stem_alone_is_the_synonym(r, "render the");
    }

    /* another connection indexes a word of render's class */
    static const char *const renders[] = {"it renders fast"};
    add_texts(f->s, "own-1", 3, renders, 1, more, 0);
    alone = store_sqlite__class_alone;
    assert_int_equal(hits(r, &(store_search_filter){.query = "render"}), 4);
    assert_int_equal(hits(r, &(store_search_filter){.query = "renders"}), 4);
    assert_int_equal(hits(r, &(store_search_filter){.query = "\"render\""}), 3);
    assert_int_equal(relevance_page(r, "render", page, ranks), 4);
    int found = 0;
    for (int i = 0; i < 4; i++)
        found += page[i] == more[0];
    assert_int_equal(found, 1);
    if (!pg) /* the class with its word now */
        assert_int_equal(store_sqlite__class_alone, alone);
    assert_int_equal(hits(r, &(store_search_filter){.query = "the"}), 2);
    if (!pg) {
        assert_true(store_sqlite__class_alone > alone); /* `the` still alone */
        own_stem_alone_is_the_synonym(r, "render");
    }

    /* the writer asked for `list` alone, then indexes `listing`: it finds
     * it before its commit (no data version moved yet), and after */
    alone = store_sqlite__class_alone;
    assert_int_equal(hits(f->s, &(store_search_filter){.query = "list"}), 1);
    if (!pg)
        assert_true(store_sqlite__class_alone > alone);
    static const char *const listing[] = {"listing the files"};
    add_texts(f->s, "own-1", 4, listing, 1, more, 1);
    alone = store_sqlite__class_alone;
    assert_int_equal(hits(f->s, &(store_search_filter){.query = "list"}), 2);
    if (!pg)
        assert_int_equal(store_sqlite__class_alone, alone);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(hits(f->s, &(store_search_filter){.query = "list"}), 2);
    assert_int_equal(hits(r, &(store_search_filter){.query = "list"}), 2);
    assert_int_equal(hits(r, &(store_search_filter){.query = "the"}), 3);
    store_close(r);
}

/* The message ids of a relevance page of `query` (at most 8), as "id id ...". */
static void relevance_ids(store *s, const char *query, char *out, size_t cap)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_RELEVANCE};
    store_page pg = {.limit = 8};
    store_hits h = {0};
    assert_int_equal(store_search(s, &q, &pg, &h), 0);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < h.count && o < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%lld", i ? " " : "",
                              (long long)h.rows[i].message_id);
    store_hits_free(&h);
}

/*
 * Relevance by role (issue 34): a tool's output that repeats the words
 * (more often, in a shorter text: bm25 and ts_rank alone rank it first)
 * comes after the user's and the assistant's messages that hold them, by
 * every path of the SQLite backend (impact lists, scoring every match,
 * lengths from the kept array or from FTS5 and the message); equal ranks
 * go newest stored first (message_id descending). On PostgreSQL (mcpage_rank(tsv, q, role), schema
 * version 13) by ranking every match and by the relevance heads.
 */
static void raw_sql(const char *spec, const char *sqlite_sql, const char *pg_sql);
static int64_t raw_num(const char *spec, const char *sql);
static void tool_output_ranks_after_the_words(void **state)
{
    fixture *f = *state;
    int pg = store_spec_is_url(f->db);
    assert_int_equal(store_begin(f->s), 0);
    store_session_meta m = {
        .session_id = "roles-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(f->s, &m), 0);
    static const struct {
        const char *role, *text;
    } msgs[] = {
        {"tool", "ledger export timeout\nledger export timeout\nledger export retry"},
        {"user", "the ledger export times out for large accounts, make it stream rows"},
        {"tool", "ledger export timeout\nledger export timeout\nledger export retry"},
        {"assistant", "the ledger export now streams its rows in batches of five hundred so it "
                      "finishes"},
        {"user", "the ledger export times out for large accounts, make it stream rows"},
    };
    int64_t ids[5];
    for (int i = 0; i < 5; i++) {
        store_message msg = {.session_id = "roles-1",
                             .ordinal = i,
                             .role = (char *)msgs[i].role,
                             .timestamp = "2026-03-01T00:00:00Z",
                             .text = (char *)msgs[i].text};
        assert_int_equal(store_message_add(f->s, &msg, &ids[i]), 0);
    }
    assert_int_equal(store_session_refresh(f->s, "roles-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    char want[128], got[128];
    /* the user's twice (equal: the newer first), the assistant's (longer), then the tools'
     * (the newer first); ts_rank ignores the length: the user's and the assistant's tie */
    int second = pg ? 3 : 1, third = pg ? 1 : 3;
    snprintf(want, sizeof want, "%lld %lld %lld %lld %lld", (long long)ids[4],
             (long long)ids[second], (long long)ids[third], (long long)ids[2], (long long)ids[0]);
    const char *queries[] = {"ledger", "ledger export"};
    if (pg) {
        for (int q = 0; q < 2; q++) {
            store_pg__rank_off = 1; /* ranking every match */
            relevance_ids(f->s, queries[q], got, sizeof got);
            store_pg__rank_off = 0;
            assert_string_equal(got, want);
        }
        /* the relevance heads of "ledger", built by the tidy; then the
         * store as schema version 12 left it: version 13 empties its
         * heads and the next tidy builds them again */
        for (int round = 0; round < 2; round++) {
            if (round) {
                store_close(f->s);
                f->s = NULL;
                raw_sql(f->db, "", "DELETE FROM schema_version WHERE version >= 13");
                store_pool_drain(); /* a process migrates a URL once: forget it */
                assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
                assert_int_equal(raw_num(f->db, "SELECT count(*) FROM rank_heads"), 0);
                assert_int_equal(raw_num(f->db, "SELECT count(*) FROM rank_terms"), 0);
            }
            int64_t min = store_pg__rank_min;
            store_pg__rank_min = 1;
            raw_sql(f->db, "", "ANALYZE messages");
            assert_int_equal(store_tidy(f->s), 0);
            store_pg__rank_min = min;
            assert_int_equal(raw_num(f->db, "SELECT count(*) FROM rank_terms t JOIN rank_heads h "
                                            "ON h.term = t.term WHERE t.lexeme = '~ledger'"),
                             5);
            int64_t read = store_pg__rank_read;
            relevance_ids(f->s, "ledger", got, sizeof got);
            assert_true(store_pg__rank_read > read);
            assert_string_equal(got, want);
        }
        return;
    }
    for (int q = 0; q < 2; q++) {
        relevance_ids(f->s, queries[q], got, sizeof got);
        assert_string_equal(got, want);
        /* scoring every match, lengths from FTS5 and roles from the messages */
        store_sqlite__impact_off = 1;
        store_sqlite__rank_kept_off = 1;
        relevance_ids(f->s, queries[q], got, sizeof got);
        store_sqlite__impact_off = 0;
        store_sqlite__rank_kept_off = 0;
        assert_string_equal(got, want);
    }
}

/* The number of texts the index gives the class of `render`, or -1: 3 of
 * dev_texts' 4 forms (`render` itself is its stem, indexed without it). */
static int64_t class_tokens(const char *spec)
{
    int64_t n = -1;
    if (store_spec_is_url(spec)) {
        PGconn *c = PQconnectdb(spec);
        PGresult *r =
            PQexec(c, "SELECT count(*) FROM messages WHERE tsv @@ '''~render'''::tsquery");
        if (PQresultStatus(r) == PGRES_TUPLES_OK)
            n = atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(c);
        return n;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(spec, &db) == SQLITE_OK &&
        sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, messages_fts, row)",
                     NULL, NULL, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT coalesce(sum(doc), 0) FROM temp.v WHERE term = '~render'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The index as schema version 5 of SQLite and 4 of PostgreSQL wrote it:
 * no classes, no parts. */
static void index_before_words(const char *spec)
{
    if (store_spec_is_url(spec)) {
        PGconn *c = PQconnectdb(spec);
        assert_int_equal(PQstatus(c), CONNECTION_OK);
        PGresult *r = PQexec(c, "UPDATE messages SET tsv = to_tsvector('simple', text);"
                                "DELETE FROM schema_version WHERE version >= 5");
        assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
        PQclear(r);
        PQfinish(c);
        return;
    }
    sqlite3 *db = NULL; /* a stock connection: the built-in unicode61 */
    assert_int_equal(sqlite3_open(spec, &db), SQLITE_OK);
    assert_int_equal(store_sqlite_text_register(db), 0); /* the texts are read decoded */
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO messages_fts(messages_fts) VALUES('rebuild');"
                                  "DELETE FROM schema_version WHERE version >= 6;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* The index as the version before issue 35's own stems wrote it. On
 * PostgreSQL (14) `~render` beside `render` at its positions, rank_terms
 * without `word` and a head of the lexeme `render`. On SQLite (15) an
 * index its writer must build again: the stock tokenizer's. */
static void index_before_own_stems(const char *spec)
{
    if (!store_spec_is_url(spec)) {
        sqlite3 *db = NULL;
        assert_int_equal(sqlite3_open(spec, &db), SQLITE_OK);
        assert_int_equal(store_sqlite_text_register(db), 0);
        assert_int_equal(sqlite3_exec(db,
                                      "INSERT INTO messages_fts(messages_fts) VALUES('rebuild');"
                                      "DELETE FROM schema_version WHERE version >= 16;",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(db);
        return;
    }
    PGconn *c = PQconnectdb(spec);
    assert_int_equal(PQstatus(c), CONNECTION_OK);
    PGresult *r =
        PQexec(c, "UPDATE messages m SET tsv = (SELECT string_agg('''' || l || ''':' || "
                  "array_to_string(p, ','), ' ')::tsvector FROM (SELECT u.lexeme, u.positions "
                  "FROM unnest(m.tsv) u UNION ALL SELECT '~render', u.positions FROM "
                  "unnest(m.tsv) u WHERE u.lexeme = 'render') x(l, p)) WHERE m.tsv @@ "
                  "'''render'''::tsquery;"
                  "TRUNCATE rank_heads, rank_terms;"
                  "ALTER TABLE rank_terms DROP COLUMN word;"
                  "INSERT INTO rank_terms VALUES (1, 'render', '''render''', 1);"
                  "INSERT INTO rank_heads SELECT 1, -0.1, max(message_id), false FROM messages;"
                  "DELETE FROM schema_version WHERE version >= 15");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
}

/* The store of dev_texts made as an older version left it (make_old,
 * after which the index gives `old` texts the class of `render`), then
 * opened: a reader refuses it, a writer indexes it again. */
static void indexed_again(fixture *f, void (*make_old)(const char *spec), int64_t old)
{
    add_dev_texts(f->s);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(class_tokens(f->db), 3);
    make_old(f->db);
    if (store_spec_is_url(f->db))
        store_pool_drain(); /* a process migrates a URL once: forget it */
    assert_int_equal(class_tokens(f->db), old);
    store *r = NULL; /* a reader refuses the older version */
    assert_true(store_open(f->db, STORE_OPEN_READONLY, &r) < 0);
    store_close(r);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    assert_int_equal(class_tokens(f->db), 3);
    dev_words_are_found(f->s);
    store_search_filter q = {.query = "\"exact phrase here\""};
    assert_int_equal(hits(f->s, &q), 60); /* fill()'s texts too */
}

/* A store indexed by an older build (no classes, no parts) is indexed
 * again when a writer opens it. */
static void old_stores_are_indexed_again(void **state)
{
    indexed_again(*state, index_before_words, 0);
}

/* A store of the version before own stems (SQLite 15, PostgreSQL 14) is
 * indexed again when a writer opens it: the class that repeats its word
 * goes, the searches match what they matched, the heads kept go. */
static void last_version_stores_are_indexed_again(void **state)
{
    fixture *f = *state;
    indexed_again(f, index_before_own_stems, store_spec_is_url(f->db) ? 4 : 0);
    if (store_spec_is_url(f->db))
        assert_int_equal(raw_num(f->db, "SELECT count(*) FROM rank_terms") +
                             raw_num(f->db, "SELECT count(*) FROM rank_heads"),
                         0);
}

/* Every token map of the store as one string: message ids and the maps in hex. */
static char *tokmaps_of(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT group_concat(message_id || ':' || hex(offsets), ' ')"
                           " FROM (SELECT * FROM message_tokmap ORDER BY message_id)",
                           -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const char *v = (const char *)sqlite3_column_text(st, 0);
    char *out = strdup(v ? v : "");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/*
 * The writer takes a long text's token map from the tokens FTS5 indexes
 * (the tokenizer registered as unicode61 in sqlite_snippet.c): the same
 * maps as the scan of each text that the migration runs, for texts of
 * ASCII words, of words with bytes from 0x80 (accents, CJK, emoji,
 * punctuation), of bytes that are not UTF-8, and of no token at all.
 */
static void token_maps_from_the_index_match_the_scan(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    static const char *const w[] = {"plain",    "snake_case_1", "Ünïcödé", "日本語", "a…b",
                                    "\xff\xfe", "\x80x\xc3",    "🙂",    "x—y",    "(ok)",
                                    "\xe2\x80", "naïve",        "ÀÉ",      "__",     "0x1F"};
    size_t cap = 1 << 20;
    char *text = malloc(cap);
    assert_int_equal(store_begin(f->s), 0);
    store_session_meta m = {.session_id = "maps-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(f->s, &m), 0);
    int64_t caught = store_sqlite__tokmap_caught;
    unsigned seed = 7;
    for (int t = 0; t < 6; t++) {
        size_t len = 0;
        for (int i = 0; len + 64 < cap && i < 4000 + t * 3000; i++) {
            seed = seed * 1103515245u + 12345u;
            const char *word = t == 5 ? " ... " : w[(seed >> 16) % (t < 2 ? 2u : 15u)];
            len += (size_t)snprintf(text + len, cap - len, "%s%s", word, i % 9 ? " " : "\n");
        }
        store_message msg = {.session_id = "maps-1",
                             .ordinal = t,
                             .role = "tool",
                             .timestamp = "2026-01-01T00:00:00Z",
                             .text = text};
        int64_t id = 0;
        assert_int_equal(store_message_add(f->s, &msg, &id), 0);
    }
    free(text);
    assert_int_equal(store_session_refresh(f->s, "maps-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_sqlite__tokmap_caught - caught, 6);
    /* five maps (the text of dots has no token), then the same five from the scan */
    char *indexed = tokmaps_of(f->db);
    assert_int_equal(file_int(f->db, "SELECT count(*) FROM message_tokmap"), 5);
    remap_tokens(f);
    char *scanned = tokmaps_of(f->db);
    assert_string_equal(indexed, scanned);
    free(indexed);
    free(scanned);
}

/* Texts whose every token, extra token and position the index pins. */
static const char *const stream_texts[] = {
    "The SessionLive component renders_the_list; HTTPServer v2Handler __init__ getHTTPResponse "
    "fooFoo URLParser ALLCAPS x",
    "naïve café Straße ÉCOLE Ünïcödé 東京タワー emoji 🎉 done fooБар caféBar x_ñ a…b x—y",
    "sha256:0x1F deadbeefCAFEbabe aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1234 12ab ab12 AB12cd a_1 _ __ ___x___",
    "{\"file_path\":\"/home/u/src/store_words.c\",\"old_string\":\"is_lower(c)\"}\\n\\tline2 "
    "don't re-run x.y.z e-mail it's running\tconnections\r\ngeneralizations Hopping HOPPING "
    "\x01"
    "ctl\x7f"
    "del~tilde|pipe",
    "Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_"
    "Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_ Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_"
    "Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Abc_Ab "
    "ponies ponies PONIES Ponies ties caresses agreed sky by is yes happy relational",
    "\xff\xfe bad \x80x\xc3 bytes \xe2\x80 end ÀÉ (ok) ... a",
};

/* The index's every token of the messages from `first` on: "doc:offset:term" in order, one a
 * line, doc counted from 0 at `first`. */
static char *token_stream_of(const char *path, int64_t first)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE temp.i USING fts5vocab(main, messages_fts, instance)",
                     NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(line, char(10)) FROM (SELECT "
                                        "(doc - ?1) || ':' || offset || ':' || term AS line FROM "
                                        "temp.i WHERE doc >= ?1 ORDER BY doc, offset, term)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, first);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The tokens the writer's tokenizer hands FTS5 (each word as written,
 * folded, its class and its parts at its own position), pinned for
 * tricky texts: a faster tokenizer must give the very same stream. */
static void token_stream_is_pinned(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    assert_int_equal(store_begin(f->s), 0);
    store_session_meta m = {
        .session_id = "stream-1", .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(f->s, &m), 0);
    int64_t first = 0;
    for (size_t i = 0; i < sizeof stream_texts / sizeof stream_texts[0]; i++) {
        store_message msg = {.session_id = "stream-1",
                             .ordinal = (int64_t)i,
                             .role = "user",
                             .timestamp = "2026-02-01T00:00:00Z",
                             .text = (char *)stream_texts[i],
                             .line_no = (int64_t)i + 1};
        int64_t id = 0;
        assert_int_equal(store_message_add(f->s, &msg, &id), 0);
        if (i == 0)
            first = id;
    }
    assert_int_equal(store_session_refresh(f->s, "stream-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    char *norm = token_stream_of(f->db, first);
    size_t n = strlen(norm), cap = n + 1;
    /* tests/data/token_stream.txt: the stream as this build's tokenizer gave it */
    FILE *in = fopen(MCPAGE_TEST_DATA "/token_stream.txt", "rb");
    assert_non_null(in);
    char *want = calloc(1, cap + 2);
    size_t wn = fread(want, 1, cap + 1, in);
    fclose(in);
    if (wn != n || memcmp(want, norm, n) != 0) {
        FILE *o = fopen("token_stream.got", "wb");
        if (o) {
            fwrite(norm, 1, n, o);
            fclose(o);
        }
        fail_msg("the token stream changed (written to token_stream.got in the test's directory)");
    }
    free(want);
    free(norm);
}

/* The FTS5 table's setting `key` in the store at path, or -1 when it has none. */
static int64_t fts_setting(const char *path, const char *key)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT v FROM messages_fts_config WHERE k = ?", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* The writer gives the FTS5 table its hash size and merge width, and
 * gives them back to a store where something else changed them. */
static void fts_settings_are_the_writers(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    assert_int_equal(fts_setting(f->db, "hashsize"), 16 * 1024 * 1024);
    assert_int_equal(fts_setting(f->db, "automerge"), 16);
    store_close(f->s);
    f->s = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO messages_fts(messages_fts, rank) VALUES('automerge', 4);"
                     "INSERT INTO messages_fts(messages_fts, rank) VALUES('hashsize', 1048576);",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(fts_setting(f->db, "automerge"), 4);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    assert_int_equal(fts_setting(f->db, "hashsize"), 16 * 1024 * 1024);
    assert_int_equal(fts_setting(f->db, "automerge"), 16);
}

/* Adds `n` messages of `nwords` words (then other counts, up to 42) to session `sid` (created),
 * ordinals from `first`. */
static void add_words(store *s, char *sid, int first, int n, int nwords, unsigned seed)
{
    assert_int_equal(store_begin(s), 0);
    store_session_meta m = {.session_id = sid, .source = "claude", .source_path = "/dev/null"};
    assert_int_equal(store_session_put(s, &m), 0);
    static const char *const vocab[] = {"alpha", "bravo", "kiwi", "lemon", "mango", "the"};
    char *text = malloc(64 * 8 + 1);
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        for (int w = 0; w < nwords; w++) {
            seed = seed * 1103515245u + 12345u;
            /* lengths and term frequencies spread over rows */
            int k = (int)((seed >> 16) % (w % 7 == 0 ? 6u : 3u));
            len += (size_t)sprintf(text + len, "%s ", vocab[k]);
        }
        text[len] = '\0';
        /* every third a tool's output: impact lists run by (tf, role) */
        store_message msg = {.session_id = sid,
                             .ordinal = first + i,
                             .role = i % 3 == 2 ? "tool" : "user",
                             .timestamp = "2026-02-01T00:00:00Z",
                             .text = text};
        int64_t id = 0;
        assert_int_equal(store_message_add(s, &msg, &id), 0);
        nwords = nwords % 40 + 3;
    }
    free(text);
    assert_int_equal(store_session_refresh(s, sid), 0);
    assert_int_equal(store_commit(s), 0);
}

/* FTS5's bm25 of a row as the store ranks it: a tool's output's times its weight. */
#define FTS5_RANK                                                                                  \
    "rank * CASE WHEN (SELECT role FROM messages WHERE message_id = messages_fts.rowid) = "        \
    "'tool' THEN " STORE_RANK_TOOL_WEIGHT_SQL " ELSE 1.0 END"

/* A relevance walk of `query` through the store equals FTS5's own bm25
 * order and ranks, a tool's output's times STORE_RANK_TOOL_WEIGHT, equal
 * ranks newest stored first (rowid descending). */
static void relevance_is_fts5_bm25(store *s, sqlite3 *raw, const char *query, const char *fts,
                                   int counted)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_RELEVANCE};
    int64_t total = 0;
    if (counted)
        assert_int_equal(store_search_count(s, &q, &total), 0);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT rowid, " FTS5_RANK " AS r FROM messages_fts "
                                        "WHERE messages_fts MATCH ? ORDER BY r, rowid DESC",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, fts, -1, SQLITE_STATIC);
    store_key after;
    store_page pg = {.limit = 7};
    store_hits h = {0};
    size_t i = 0, seen = 0;
    for (;;) {
        if (i == h.count) {
            if (h.count > 0 && h.count < 7)
                break;
            if (h.count > 0) {
                after = h.rows[h.count - 1].key;
                pg.after = &after;
            }
            store_hits_free(&h);
            assert_int_equal(store_search(s, &q, &pg, &h), 0);
            i = 0;
            if (h.count == 0)
                break;
        }
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        if (h.rows[i].message_id != sqlite3_column_int64(st, 0) ||
            h.rows[i].rank != sqlite3_column_double(st, 1))
            fail_msg("%s row %zu: store %lld %.17g, bm25 %lld %.17g", query, seen,
                     (long long)h.rows[i].message_id, h.rows[i].rank,
                     (long long)sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
        i++;
        seen++;
    }
    store_hits_free(&h);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    assert_true(seen > 0);
    if (counted)
        assert_int_equal((int64_t)seen, total);
}

/*
 * A page of a rare word takes its rows' matches from one pass over the
 * matches once they are counted, instead of one FTS5 probe per row: the
 * same rows, snippets, ranks and line counts as the probes, in every
 * sort, with and without filters, at every page.
 */
static void counted_rare_words_take_one_pass(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    store_search_filter filters[] = {
        {.query = "\"exact phrase here\""},
        {.query = "\"exact phrase here\"", .sort = STORE_SEARCH_NEWEST},
        {.query = "\"exact phrase here\"", .sort = STORE_SEARCH_OLDEST},
        {.query = "\"exact phrase here\"", .role = "tool"},
        {.query = "bravo", .project = "proj1", .sort = STORE_SEARCH_NEWEST},
        {.query = "charlie max_tokens"},
    };
    for (size_t k = 0; k < sizeof filters / sizeof filters[0]; k++) {
        const store_search_filter *sf = &filters[k];
        store_search_filter bare = {.query = sf->query};
        int64_t total = 0, matches = 0;
        assert_int_equal(store_search_count(f->s, &bare, &matches), 0); /* what the pass needs */
        assert_int_equal(store_search_count(f->s, sf, &total), 0);
        assert_true(matches >= total);
        if (!(total > 4))
            fail_msg("filter %zu: %lld", k, (long long)total);
        for (int64_t offset = 0; offset < total + 4; offset += 4) {
            store_page pg = {.limit = 4, .offset = offset};
            store_hits a = {0}, b = {0};
            int64_t passes = store_sqlite__snippet_passes;
            assert_int_equal(store_search(f->s, sf, &pg, &a), 0);
            assert_int_equal(store_sqlite__snippet_passes, passes + 1);
            store_sqlite__force_outer = -1; /* one probe per row */
            assert_int_equal(store_search(f->s, sf, &pg, &b), 0);
            store_sqlite__force_outer = 0;
            assert_int_equal(store_sqlite__snippet_passes, passes + 1);
            assert_int_equal(a.count, b.count);
            assert_int_equal(a.count, offset + 4 <= total ? 4
                                      : offset < total    ? total - offset
                                                          : 0);
            for (size_t i = 0; i < a.count; i++) {
                assert_int_equal(a.rows[i].message_id, b.rows[i].message_id);
                assert_string_equal(a.rows[i].snippet, b.rows[i].snippet);
                assert_non_null(strstr(a.rows[i].snippet, STORE_HIT_OPEN));
                assert_true(a.rows[i].rank == b.rows[i].rank);
                assert_int_equal(a.rows[i].before_count, b.rows[i].before_count);
                assert_int_equal(a.rows[i].before_lines, b.rows[i].before_lines);
                assert_int_equal(a.rows[i].before_count, a.rows[i].ordinal);
            }
            store_hits_free(&a);
            store_hits_free(&b);
        }
    }
    /* Not counted on this connection (another query was): one probe per row. */
    store_search_filter other = {.query = "echo"}, rare = {.query = "\"exact phrase here\""};
    int64_t n = 0;
    assert_int_equal(store_search_count(f->s, &other, &n), 0);
    store_page pg = {.limit = 4};
    store_hits h = {0};
    int64_t passes = store_sqlite__snippet_passes;
    assert_int_equal(store_search(f->s, &rare, &pg, &h), 0);
    assert_int_equal(h.count, 4);
    assert_int_equal(store_sqlite__snippet_passes, passes);
    store_hits_free(&h);
}

/*
 * Relevance (SQLite) ranks with mcpage_bm25(), which keeps the index's
 * row lengths per store generation: every rank is the double FTS5's
 * bm25() gives, in its order, for one word, several, phrases and
 * prefixes, counted first or not, and after a sync adds rows, and after
 * a re-parse deletes rows and reuses their ids with other lengths.
 */
static void relevance_ranks_are_bm25(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "rank-1", 0, 120, 5, 7);
    /* a query with fewer matches than this reads lengths through FTS5 */
    int load_matches = store_sqlite__rank_load_matches;
    store_sqlite__rank_load_matches = 1;
    /* and lengths come in slices: queries rank with some rows' lengths
     * from the array and the rest from FTS5 until all are read */
    int64_t load_slice = store_sqlite__rank_load_slice;
    store_sqlite__rank_load_slice = 250;
    /* from FTS5's docsize, not the lengths the writer keeps (below) */
    store_sqlite__rank_kept_off = 1;
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    static const struct {
        const char *query, *fts;
    } qs[] = {{"kiwi", "\"kiwi\""},
              {"the", "\"the\""},
              {"kiwi lemon", "\"kiwi\" \"lemon\""},
              {"\"kiwi lemon\"", "\"kiwi lemon\""},
              {"mang*", "\"mang\"*"},
              {"alpha", "\"alpha\""},
              {"the \"kiwi lemon\"", "\"the\" \"kiwi lemon\""},
              {"lem* kiwi", "\"lem\"* \"kiwi\""}};
    /* rows in the index: fill()'s 492 and rank-1's 120, then 40 more */
    static const int64_t loaded[] = {492 + 120, 40, 492 + 120 + 40};
    for (int round = 0; round < 3; round++) {
        int64_t before = store_sqlite__rank_rows_loaded;
        for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
            relevance_is_fts5_bm25(f->s, raw, qs[i].query, qs[i].fts, (int)(i % 2));
            relevance_is_fts5_bm25(f->s, raw, qs[i].query, qs[i].fts, (int)(1 - i % 2));
        }
        /* the lengths are read once a generation: all (in slices), then
         * the new rows only, then all again after rows were deleted */
        assert_int_equal(store_sqlite__rank_rows_loaded - before, loaded[round]);
        if (round == 0) { /* a sync appends rows */
            add_words(f->s, "rank-2", 0, 40, 11, 99);
        } else if (round == 1) { /* a re-parse: the newest ids deleted and reused */
            assert_int_equal(store_begin(f->s), 0);
            assert_int_equal(store_session_reset(f->s, "rank-2"), 0);
            assert_int_equal(store_commit(f->s), 0);
            add_words(f->s, "rank-2", 0, 40, 23, 5);
        }
    }
    /* the defaults: few matches never load the lengths, and rank the same */
    store_sqlite__rank_load_matches = load_matches;
    store_sqlite__rank_load_slice = load_slice;
    store_sqlite__rank_kept_off = 0;
    int64_t before = store_sqlite__rank_rows_loaded;
    add_words(f->s, "rank-3", 0, 10, 7, 3);
    relevance_is_fts5_bm25(f->s, raw, "kiwi", "\"kiwi\"", 1);
    assert_int_equal(store_sqlite__rank_rows_loaded, before);
    sqlite3_close(raw);
}

/* Every row length the writer keeps in `message_lengths` equals FTS5's docsize, its
 * top bit whether the row is a tool's output, and meta 'lengths_max_id' is the
 * index's last row; returns the rows compared. */
static int64_t kept_lengths_match(sqlite3 *raw)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(raw,
                           "SELECT d.id, d.sz, k.lens, (SELECT value FROM meta WHERE "
                           "key = 'lengths_max_id'), (SELECT role = 'tool' FROM "
                           "messages WHERE message_id = d.id) FROM messages_fts_docsize d LEFT "
                           "JOIN message_lengths k ON k.chunk = d.id >> 10 ORDER BY "
                           "d.id",
                           -1, &st, NULL),
        SQLITE_OK);
    int64_t rows = 0, last = 0, max_id = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const unsigned char *sz = sqlite3_column_blob(st, 1), *k = sqlite3_column_blob(st, 2);
        assert_int_equal(sqlite3_column_bytes(st, 2), 4096);
        const unsigned char *p = k + 4 * (id & 1023);
        uint32_t kept =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        assert_int_equal(kept & 0x7fffffffu, store_sqlite__varint(sz, sqlite3_column_bytes(st, 1)));
        assert_int_equal(kept >> 31, sqlite3_column_int(st, 4));
        assert_true((kept & 0x7fffffffu) > 0);
        max_id = sqlite3_column_int64(st, 3);
        last = id;
        rows++;
    }
    sqlite3_finalize(st);
    assert_int_equal(max_id, last);
    return rows;
}

/*
 * The writer keeps every row's length in the store at each commit, so a
 * fresh process reads them instead of FTS5's docsize: the new rows' after
 * an append, all again after a re-parse; kept lengths of another
 * text-delete count, or of a damaged shape, are not read, and every rank
 * stays FTS5's bm25.
 */
static void relevance_lengths_kept_by_the_writer(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "kept-1", 0, 120, 5, 7);
    int load_matches = store_sqlite__rank_load_matches;
    store_sqlite__rank_load_matches = 1;
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    /* rounds: as synced, after an append, after a re-parse, kept lengths
     * of another text-delete count, then of a damaged shape */
    static const int64_t kept[] = {492 + 120, 40, 492 + 120 + 40, 0, 0};
    static const int64_t docsize[] = {0, 0, 0, 492 + 120 + 40, 0};
    for (int round = 0; round < 5; round++) {
        if (round < 3)
            assert_int_equal(kept_lengths_match(raw), 492 + 120 + (round ? 40 : 0));
        int64_t k0 = store_sqlite__rank_rows_kept, d0 = store_sqlite__rank_rows_loaded;
        relevance_is_fts5_bm25(f->s, raw, "the", "\"the\"", 1);
        relevance_is_fts5_bm25(f->s, raw, "kiwi lemon", "\"kiwi\" \"lemon\"", 0);
        assert_int_equal(store_sqlite__rank_rows_kept - k0, kept[round]);
        assert_int_equal(store_sqlite__rank_rows_loaded - d0, docsize[round]);
        if (round == 0) {
            add_words(f->s, "kept-2", 0, 40, 11, 99);
        } else if (round == 1) {
            assert_int_equal(store_begin(f->s), 0);
            assert_int_equal(store_session_reset(f->s, "kept-2"), 0);
            assert_int_equal(store_commit(f->s), 0);
            add_words(f->s, "kept-2", 0, 40, 23, 5);
        } else if (round == 2) { /* a writer that keeps none changed a text */
            assert_int_equal(sqlite3_exec(raw,
                                          "UPDATE meta SET value = value + 1 WHERE key IN "
                                          "('text_deletes', 'generation')",
                                          NULL, NULL, NULL),
                             SQLITE_OK);
        } else if (round == 3) { /* chunks cut short, a last row far past the index */
            assert_int_equal(sqlite3_exec(raw,
                                          "UPDATE meta SET value = value + 1 WHERE key IN "
                                          "('text_deletes', 'generation');"
                                          "UPDATE meta SET value = (SELECT value FROM meta WHERE "
                                          "key = 'text_deletes') WHERE key = 'lengths_deletes';"
                                          "UPDATE meta SET value = 1 << 40 WHERE key = "
                                          "'lengths_max_id';"
                                          "UPDATE message_lengths SET lens = x'00'",
                                          NULL, NULL, NULL),
                             SQLITE_OK);
        }
    }
    /* the next commit keeps them all again */
    add_words(f->s, "kept-3", 0, 10, 7, 3);
    assert_int_equal(kept_lengths_match(raw), 492 + 120 + 40 + 10);
    store_sqlite__rank_load_matches = load_matches;
    sqlite3_close(raw);
}

/* The first `limit` relevance rows of `fts` after `offset`, as FTS5's bm25 orders them
 * (rank NULL) or as an impact list does, on `db` at its snapshot; returns the count. */
static size_t relevance_rows(sqlite3 *db, const char *fts, int impact, int64_t offset,
                             int64_t limit, int64_t *ids, double *ranks)
{
    sqlite3_stmt *st = NULL;
    const char *sql = impact ? SQ_IMPACT_PAGE " ORDER BY rk, id DESC LIMIT ?7 OFFSET ?8"
                             : "SELECT rowid, " FTS5_RANK " AS r FROM messages_fts WHERE "
                               "messages_fts MATCH ?1 ORDER BY r, rowid DESC LIMIT ?7 OFFSET ?8";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, fts, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, offset + limit);
    sqlite3_bind_int(st, 3, 0);
    sqlite3_bind_double(st, 4, 0.0);
    sqlite3_bind_int64(st, 5, 0);
    sqlite3_bind_text(st, 6, fts, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, limit);
    sqlite3_bind_int64(st, 8, offset);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ids[n] = sqlite3_column_int64(st, 0);
        ranks[n++] = sqlite3_column_double(st, 1);
    }
    assert_int_equal(sqlite3_errcode(db), SQLITE_DONE);
    sqlite3_finalize(st);
    return n;
}

/* Impact lists and FTS5's bm25 give `db` the same rows and ranks for `fts`, at every offset. */
static void impact_rows_are_bm25(sqlite3 *db, const char *fts)
{
    int64_t a[MAXROWS], b[MAXROWS];
    double ra[MAXROWS], rb[MAXROWS];
    size_t n = relevance_rows(db, fts, 0, 0, MAXROWS, a, ra);
    assert_true(n > 0 && n < MAXROWS);
    assert_int_equal(relevance_rows(db, fts, 1, 0, MAXROWS, b, rb), n);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i] || ra[i] != rb[i])
            fail_msg("%s row %zu: impact %lld %.17g, bm25 %lld %.17g", fts, i, (long long)b[i],
                     rb[i], (long long)a[i], ra[i]);
    for (int64_t off = 1; off < (int64_t)n; off += 37) {
        size_t m = relevance_rows(db, fts, 1, off, 9, b, rb);
        assert_int_equal(m, (size_t)(n - (size_t)off < 9 ? n - (size_t)off : 9));
        for (size_t i = 0; i < m; i++)
            assert_true(b[i] == a[(size_t)off + i] && rb[i] == ra[(size_t)off + i]);
    }
}

/* The matches of `query` in the store. */
static int64_t matches_of(store *s, const char *query)
{
    store_search_filter q = {.query = query};
    int64_t n = 0;
    assert_int_equal(store_search_count(s, &q, &n), 0);
    return n;
}

/*
 * Relevance pages of one-phrase queries come from impact lists
 * (sqlite_impact.c): the rows and ranks of FTS5's bm25 by keyset and by
 * offset, each list walked once per process, then only the rows a sync
 * appends, all again after a re-parse deletes and reuses ids; a reader
 * whose snapshot is older than the list skips the rows it cannot see.
 */
static void relevance_impact_lists_are_bm25(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "impact-1", 0, 150, 5, 11);
    static const struct {
        const char *query, *fts;
    } qs[] = {{"the", "\"the\""}, {"kiwi", "\"kiwi\""}, {"\"kiwi lemon\"", "\"kiwi lemon\""}};
    enum { NQ = sizeof qs / sizeof qs[0] };
    sqlite3 *raw = NULL, *old = NULL;
    static int64_t no_count = -1;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_open_v2(f->db, &old, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(store_sqlite_snippet_register(old, &no_count, NULL), 0);
    for (int round = 0; round < 3; round++) {
        int64_t walked = store_sqlite__impact_walked;
        for (size_t i = 0; i < NQ; i++) {
            relevance_is_fts5_bm25(f->s, raw, qs[i].query, qs[i].fts, (int)(i % 2));
            relevance_is_fts5_bm25(f->s, raw, qs[i].query, qs[i].fts, (int)(1 - i % 2));
        }
        /* each list walked once: every match, then the new rows' only */
        static int64_t before[NQ];
        int64_t added = 0;
        for (size_t i = 0; i < NQ; i++) {
            int64_t now = matches_of(f->s, qs[i].query);
            added += round == 1 ? now - before[i] : now;
            before[i] = now;
        }
        assert_int_equal(store_sqlite__impact_walked - walked, added);
        if (round == 0) {
            /* `old` keeps this snapshot while a sync appends rows and the lists grow */
            assert_int_equal(sqlite3_exec(old, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
            impact_rows_are_bm25(old, "\"the\"");
            add_words(f->s, "impact-2", 0, 40, 11, 99);
        } else if (round == 1) {
            impact_rows_are_bm25(old, "\"the\"");
            impact_rows_are_bm25(old, "\"kiwi\"");
            assert_int_equal(sqlite3_exec(old, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
            impact_rows_are_bm25(old, "\"kiwi\"");
            /* a re-parse: the newest ids deleted and reused */
            assert_int_equal(store_begin(f->s), 0);
            assert_int_equal(store_session_reset(f->s, "impact-2"), 0);
            assert_int_equal(store_commit(f->s), 0);
            add_words(f->s, "impact-2", 0, 40, 23, 5);
        }
    }
    /* switched off, nothing is walked and the ranks are the same */
    int64_t walked = store_sqlite__impact_walked;
    store_sqlite__impact_off = 1;
    add_words(f->s, "impact-3", 0, 10, 7, 3);
    relevance_is_fts5_bm25(f->s, raw, "the", "\"the\"", 1);
    store_sqlite__impact_off = 0;
    assert_int_equal(store_sqlite__impact_walked, walked);
    sqlite3_close(old);
    sqlite3_close(raw);
}

/* The page cache bound of reader `r`: the connection's and SQLite's own agree. */
static int64_t reader_cache_kib(store *r)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(CONN(r)->db, "PRAGMA cache_size", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t kib = -sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    assert_int_equal(kib, CONN(r)->cache_kib);
    return kib;
}

/* A search page of `query` on `r` (grouped by session or not). */
static void search_once(store *r, const char *query, int grouped)
{
    store_search_filter q = {.query = query, .by_session = grouped};
    store_page pg = {.limit = 10};
    store_hits l;
    int64_t n = 0;
    assert_int_equal(store_search_count(r, &q, &n), 0);
    assert_int_equal(store_search(r, &q, &pg, &l), 0);
    assert_true(n > 0 && l.count > 0);
    store_hits_free(&l);
}

/*
 * A reader's page cache shares a budget with the impact lists and row
 * lengths the process keeps (sq_cache_fit): 8 MiB while they are few,
 * the budget less them down to 6 MiB, and 2 MiB for a grouped page that
 * reads 4,096 matches or more; the writer's cache is its own.
 */
static void reader_cache_shares_a_budget(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "budget-1", 0, 6000, 5, 17);
    store_sqlite__impact_forget();
    int64_t saved = store_sqlite__read_budget_kib;
    store *r = NULL;
    char err[600];
    assert_int_equal(store_open_msg(f->db, STORE_OPEN_READONLY, &r, err, sizeof err), 0);
    assert_int_equal(reader_cache_kib(r), 8192);
    search_once(r, "kiwi", 0); /* builds and keeps kiwi's list */
    assert_true(store_sqlite__impact_bytes() > 0);
    assert_int_equal(reader_cache_kib(r), 8192);
    /* the budget less what is kept */
    int64_t kept = (store_sqlite__impact_bytes() + store_sqlite__lengths_bytes()) / 1024;
    store_sqlite__read_budget_kib = kept + 7000;
    search_once(r, "kiwi", 0);
    assert_int_equal(reader_cache_kib(r), 7000);
    /* never under the floor between walks */
    store_sqlite__read_budget_kib = 0;
    search_once(r, "kiwi", 0);
    assert_int_equal(reader_cache_kib(r), 6144);
    /* a grouped page of many matches: the walk's floor; of few: the floor between walks */
    assert_true(matches_of(r, "alpha") >= 4096 && matches_of(r, "mango") < 4096);
    search_once(r, "alpha", 1);
    assert_int_equal(reader_cache_kib(r), 2048);
    search_once(r, "mango", 1);
    assert_int_equal(reader_cache_kib(r), 6144);
    /* back within the budget: the whole cache again */
    store_sqlite__read_budget_kib = saved;
    search_once(r, "kiwi", 0);
    assert_int_equal(reader_cache_kib(r), 8192);
    /* the writer keeps its own */
    assert_int_equal(CONN(f->s)->cache_kib, 0);
    store_close(r);
    store_sqlite__impact_forget();
}

/* Rows of `table` (impact_lists, impact_heads) of the store's text-delete
 * count and their matches in all (n summed), by SQL on `raw`. */
static int64_t kept_rows(sqlite3 *raw, const char *table, int64_t *entries)
{
    sqlite3_stmt *st = NULL;
    char *sql = sqlite3_mprintf("SELECT count(*), coalesce(sum(n), 0) FROM %s WHERE deletes = "
                                "(SELECT value FROM meta WHERE key = 'text_deletes')",
                                table);
    assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_free(sql);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t rows = sqlite3_column_int64(st, 0);
    *entries = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    return rows;
}

/* The matches of each of the words `the`, `kiwi` and `lemon`, summed. */
static int64_t three_words(store *s)
{
    return matches_of(s, "the") + matches_of(s, "kiwi") + matches_of(s, "lemon");
}

/*
 * The writer keeps the impact lists its process built (new, or grown by
 * an eighth) at its next commit, so a fresh process loads them and walks
 * only the rows added since; lists of another text-delete count or of a
 * damaged shape are not loaded, and every rank stays FTS5's bm25.
 */
static void relevance_impact_lists_kept_by_the_writer(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "keep-1", 0, 150, 5, 11);
    int64_t save_min = store_sqlite__impact_save_min;
    store_sqlite__impact_save_min = 1;
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    relevance_is_fts5_bm25(f->s, raw, "the", "\"the\"", 1);
    relevance_is_fts5_bm25(f->s, raw, "kiwi lemon", "\"kiwi\" \"lemon\"", 1);
    /* a word of the AND alone builds its own ranked list; lemon's stays
     * unranked (rowids only), and the writer sorts it as it keeps it */
    relevance_is_fts5_bm25(f->s, raw, "kiwi", "\"kiwi\"", 1);
    int64_t before = three_words(f->s), entries = 0;
    add_words(f->s, "keep-2", 0, 40, 11, 99); /* this commit keeps the three lists */
    assert_int_equal(kept_rows(raw, "impact_lists", &entries), 3);
    assert_int_equal(entries, before);

    /* a fresh process loads them and walks the rows of keep-2 only */
    store_sqlite__impact_forget();
    int64_t walked = store_sqlite__impact_walked, loaded = store_sqlite__impact_loaded;
    relevance_is_fts5_bm25(f->s, raw, "the", "\"the\"", 1);
    relevance_is_fts5_bm25(f->s, raw, "kiwi lemon", "\"kiwi\" \"lemon\"", 0);
    assert_int_equal(store_sqlite__impact_loaded - loaded, before);
    assert_int_equal(store_sqlite__impact_walked - walked, three_words(f->s) - before);
    relevance_is_fts5_bm25(f->s, raw, "lemon", "\"lemon\"", 0); /* the order kept */

    /* a re-parse: the kept lists are of an older text-delete count */
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "keep-2"), 0);
    assert_int_equal(store_commit(f->s), 0);
    add_words(f->s, "keep-2", 0, 40, 23, 5);
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    loaded = store_sqlite__impact_loaded;
    relevance_is_fts5_bm25(f->s, raw, "the", "\"the\"", 0);
    relevance_is_fts5_bm25(f->s, raw, "kiwi lemon", "\"kiwi\" \"lemon\"", 1);
    assert_int_equal(store_sqlite__impact_loaded, loaded);
    assert_int_equal(store_sqlite__impact_walked - walked, three_words(f->s));
    /* the next commit keeps the new ones in their place */
    add_words(f->s, "keep-3", 0, 10, 7, 3);
    assert_int_equal(kept_rows(raw, "impact_lists", &entries), 3);

    /* a damaged list is walked again */
    assert_int_equal(sqlite3_exec(raw, "UPDATE impact_lists SET entries = x'00'", NULL, NULL, NULL),
                     SQLITE_OK);
    store_sqlite__impact_forget();
    loaded = store_sqlite__impact_loaded;
    relevance_is_fts5_bm25(f->s, raw, "kiwi lemon", "\"kiwi\" \"lemon\"", 1);
    assert_int_equal(store_sqlite__impact_loaded, loaded);
    store_sqlite__impact_save_min = save_min;
    sqlite3_close(raw);
}

/* The first `limit` rows of `query` by relevance (and its count) are FTS5's bm25's. */
static void first_page_is_bm25(store *s, sqlite3 *raw, const char *query, const char *fts,
                               int limit)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_RELEVANCE};
    int64_t total = 0;
    assert_int_equal(store_search_count(s, &q, &total), 0);
    store_page pg = {.limit = limit};
    store_hits h = {0};
    assert_int_equal(store_search(s, &q, &pg, &h), 0);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT rowid, " FTS5_RANK
                                        " AS r, count(*) OVER () FROM messages_fts "
                                        "WHERE messages_fts MATCH ? ORDER BY r, rowid DESC",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, fts, -1, SQLITE_STATIC);
    assert_int_equal(h.count, (size_t)limit);
    for (size_t i = 0; i < h.count; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(h.rows[i].message_id, sqlite3_column_int64(st, 0));
        assert_true(h.rows[i].rank == sqlite3_column_double(st, 1));
        assert_int_equal(total, sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
    store_hits_free(&h);
}

/* The one-word searches of the index terms in `min` rows or more
 * (fts5vocab), as the writer asks for them (store_sqlite__vocab_query),
 * each once: those it keeps heads of; in *rows their matches summed (the
 * rows holding the term, or the word its class also matches). */
static int64_t common_words(sqlite3 *raw, int64_t min, int64_t *rows)
{
    sqlite3_stmt *st = NULL, *n = NULL;
    assert_int_equal(sqlite3_exec(raw,
                                  "CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING "
                                  "fts5vocab(main, messages_fts, row);"
                                  "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vi USING "
                                  "fts5vocab(main, messages_fts, instance)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT term FROM temp.v WHERE doc >= ? ORDER BY doc "
                                        "DESC, term",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT count(DISTINCT doc) FROM temp.vi WHERE term = ?1 "
                                        "OR (?2 AND term = substr(?1, 2))",
                                        -1, &n, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, min);
    char *seen[256];
    int64_t nwords = 0;
    *rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW && nwords < 256) {
        char *q = store_sqlite__vocab_query(sqlite3_column_text(st, 0));
        for (int64_t i = 0; q && i < nwords; i++)
            if (strcmp(seen[i], q) == 0) {
                sqlite3_free(q);
                q = NULL;
            }
        if (!q)
            continue;
        seen[nwords++] = q;
        size_t len = strlen(q) - 2; /* the term inside the quotes */
        sqlite3_bind_text(n, 1, q + 1, (int)len, SQLITE_STATIC);
        sqlite3_bind_int(n, 2, store_word_query_self(q + 1, len));
        assert_int_equal(sqlite3_step(n), SQLITE_ROW);
        *rows += sqlite3_column_int64(n, 0);
        sqlite3_reset(n);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(n);
    for (int64_t i = 0; i < nwords; i++)
        sqlite3_free(seen[i]);
    return nwords;
}

/*
 * The writer keeps the heads of its commonest words when it has time
 * (store_tidy), whether or not anyone searched them: a fresh process
 * answers a first page and the count from them without a walk; a page
 * past them walks the whole list; rows a sync adds since are walked and
 * merged into them; a re-parse makes the writer choose again. Every rank
 * stays FTS5's bm25.
 */
static void relevance_heads_kept_by_the_writer(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "heads-1", 0, 150, 5, 11);
    int64_t heads_min = store_sqlite__impact_heads_min, run = store_sqlite__impact_heads_run;
    store_sqlite__impact_heads_min = 20;
    store_sqlite__impact_heads_run = 3; /* runs are cut: pages go past the heads */
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(store_tidy(f->s), 0);
    int64_t matches = 0, nwords = common_words(raw, 20, &matches);
    assert_true(nwords >= 6); /* every word of add_words, and the fixture's own */
    int64_t kept = 0;
    assert_int_equal(kept_rows(raw, "impact_heads", &kept), nwords);
    assert_int_equal(kept, matches);

    /* a fresh process: first pages and counts from the heads, no walk */
    store_sqlite__impact_forget();
    int64_t walked = store_sqlite__impact_walked, loaded = store_sqlite__impact_loaded;
    first_page_is_bm25(f->s, raw, "the", "\"the\"", 3);
    first_page_is_bm25(f->s, raw, "kiwi", "\"kiwi\"", 2);
    first_page_is_bm25(f->s, raw, "The", "\"the\"", 4); /* the tokenizer folds case */
    assert_int_equal(store_sqlite__impact_walked, walked);
    assert_true(store_sqlite__impact_loaded > loaded);
    /* every page by keyset: past the heads the whole list is walked, once */
    relevance_is_fts5_bm25(f->s, raw, "kiwi", "\"kiwi\"", 1);
    assert_int_equal(store_sqlite__impact_walked - walked, matches_of(f->s, "kiwi"));
    /* several nwords need whole lists */
    relevance_is_fts5_bm25(f->s, raw, "lemon the", "\"lemon\" \"the\"", 1);

    /* rows added since: walked by rowid and merged into the heads */
    int64_t before = matches_of(f->s, "mango");
    add_words(f->s, "heads-2", 0, 60, 11, 99); /* more than a sixteenth of the rows */
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    first_page_is_bm25(f->s, raw, "mango", "\"mango\"", 3);
    assert_int_equal(store_sqlite__impact_walked - walked, matches_of(f->s, "mango") - before);
    /* the writer extends the heads that fell behind; then nothing is walked */
    assert_int_equal(store_tidy(f->s), 0);
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    first_page_is_bm25(f->s, raw, "mango", "\"mango\"", 3);
    assert_int_equal(store_sqlite__impact_walked, walked);
    first_page_is_bm25(f->s, raw, "the", "\"the\"", 1);
    assert_int_equal(store_sqlite__impact_walked, walked);

    /* a re-parse: the kept heads are of an older text-delete count */
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "heads-2"), 0);
    assert_int_equal(store_commit(f->s), 0);
    add_words(f->s, "heads-2", 0, 60, 23, 5);
    assert_int_equal(kept_rows(raw, "impact_heads", &matches), 0);
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    first_page_is_bm25(f->s, raw, "the", "\"the\"", 3);
    assert_int_equal(store_sqlite__impact_walked - walked, matches_of(f->s, "the"));
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(kept_rows(raw, "impact_heads", &kept), common_words(raw, 20, &matches));
    assert_int_equal(kept, matches);
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    relevance_is_fts5_bm25(f->s, raw, "bravo", "\"bravo\"", 0);
    first_page_is_bm25(f->s, raw, "alpha", "\"alpha\"", 3);
    assert_int_equal(store_sqlite__impact_walked - walked, matches_of(f->s, "bravo"));

    /* damaged heads are walked again */
    assert_int_equal(sqlite3_exec(raw, "UPDATE impact_heads SET heads = x'00'", NULL, NULL, NULL),
                     SQLITE_OK);
    store_sqlite__impact_forget();
    walked = store_sqlite__impact_walked;
    first_page_is_bm25(f->s, raw, "lemon", "\"lemon\"", 3);
    assert_int_equal(store_sqlite__impact_walked - walked, matches_of(f->s, "lemon"));
    store_sqlite__impact_heads_min = heads_min;
    store_sqlite__impact_heads_run = run;
    sqlite3_close(raw);
}

static void rejected_queries_have_their_own_error(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"", "   ", "++", "\"\"", "- / ."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_search_filter q = {.query = bad[i]};
        int64_t n;
        assert_int_equal(store_search_count(f->s, &q, &n), MCPAGE_EPARSE);
        assert_true(strlen(store_errmsg(f->s)) > 10);
        assert_null(strstr(store_errmsg(f->s), "SQL"));
        store_page pg = {.limit = 5};
        store_hits h;
        assert_int_equal(store_search(f->s, &q, &pg, &h), MCPAGE_EPARSE);
        assert_int_equal(h.count, 0);
    }
    /* odd but searchable input never fails */
    static const char *const odd[] = {"\"unbalanced", "a\"b",    "NEAR(x y)", "col:val", "*",
                                      "x*y",          "\"\"\"\""};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        store_search_filter q = {.query = odd[i]};
        int64_t n;
        int rc = store_search_count(f->s, &q, &n);
        assert_true(rc == 0 || rc == MCPAGE_EPARSE);
    }
}

/* Issue 15: `"c* " x 1,365` (a 4 KB query) cost 12.5 s of CPU. Repeated
 * terms now count once, so it does the work of `c*`; past the caps on
 * distinct terms and prefixes a query is refused with what to drop. */
static void query_terms_are_deduplicated_and_capped(void **state)
{
    fixture *f = *state;
    static char repeated[STORE_QUERY_MAX + 1];
    size_t o = 0;
    for (int i = 0; i < 1365; i++)
        o += (size_t)snprintf(repeated + o, sizeof repeated - o, "c* ");
    assert_int_equal(o, 4095);
    store_search_filter one = {.query = "c*", .sort = STORE_SEARCH_NEWEST};
    store_search_filter many = {.query = repeated, .sort = STORE_SEARCH_NEWEST};
    int64_t n1 = 0, n2 = 0;
    assert_int_equal(store_search_count(f->s, &one, &n1), 0);
    assert_true(n1 > 100); /* charlie, c++ */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(store_search_count(f->s, &many, &n2), 0);
    store_page pg = {.limit = 20};
    store_hits h1, h2;
    assert_int_equal(store_search(f->s, &one, &pg, &h1), 0);
    assert_int_equal(store_search(f->s, &many, &pg, &h2), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms < 2000);
    assert_int_equal(n2, n1);
    assert_int_equal(h2.count, 20);
    for (size_t i = 0; i < h1.count; i++)
        assert_int_equal(h2.rows[i].message_id, h1.rows[i].message_id);
    store_hits_free(&h1);
    store_hits_free(&h2);
    /* a phrase and a word of the same letters are two terms; repeats of either are not */
    store_search_filter mixed = {.query = "\"c*\" c* \"c*\" c*   c*"};
    assert_int_equal(store_search_count(f->s, &mixed, &n2), 0);

    char q[600];
    o = 0;
    for (int i = 0; i < STORE_QUERY_TERMS_MAX; i++)
        o += (size_t)snprintf(q + o, sizeof q - o, "word%d word%d ", i, i);
    store_search_filter cap = {.query = q};
    assert_int_equal(store_search_count(f->s, &cap, &n2), 0);
    assert_int_equal(n2, 0);
    snprintf(q + o, sizeof q - o, "one-more");
    assert_int_equal(store_search_count(f->s, &cap, &n2), MCPAGE_EINVAL);
    assert_non_null(strstr(store_errmsg(f->s), "more than 16 different words and phrases"));
    assert_int_equal(store_search(f->s, &cap, &pg, &h1), MCPAGE_EINVAL);
    /* terms without a word character (dropped by the engines) do not count */
    snprintf(q + o, sizeof q - o, "+ - / . ++ -- //");
    assert_int_equal(store_search_count(f->s, &cap, &n2), 0);

    store_search_filter prefixes = {.query = "a* b* c* d* a* b*"};
    assert_int_equal(store_search_count(f->s, &prefixes, &n2), 0);
    prefixes.query = "a* b* c* d* e*";
    assert_int_equal(store_search_count(f->s, &prefixes, &n2), MCPAGE_EINVAL);
    assert_non_null(strstr(store_errmsg(f->s), "more than 4 different prefix terms (word*)"));
}

/* Counts the budget's checks and stops from the `from`-th on. */
typedef struct stopper {
    int calls; /* checks so far */
    int from;  /* the first check that stops */
} stopper;

static int stop_now(void *ud)
{
    stopper *st = ud;
    return ++st->calls >= st->from;
}

/* A statement past its deadline, or stopped by its caller (a cancelled
 * request), ends with its own status and message; clearing the budget
 * lets the handle work again. */
static void budget_stops_statements(void **state)
{
    fixture *f = *state;
    store_search_filter q = {.query = "message", .sort = STORE_SEARCH_RELEVANCE};
    store_page pg = {.limit = 20};
    store_hits h;
    int64_t n = 0;
    /* SQLite: the first check is store_search's own, the second comes from
     * the progress handler inside the running statement; PostgreSQL:
     * from the statement runner before it sends. */
    stopper st = {0, 2};
    store_budget_set(f->s, 0, stop_now, &st);
    assert_int_equal(store_search(f->s, &q, &pg, &h), MCPAGE_ECANCELED);
    assert_int_equal(h.count, 0);
    assert_true(st.calls >= 2);
    assert_non_null(strstr(store_errmsg(f->s), "cancelled"));
    assert_int_equal(store_search_count(f->s, &q, &n), MCPAGE_ECANCELED);
    assert_int_equal(store_sessions_count(f->s, NULL, &n), MCPAGE_ECANCELED);

    store_budget_set(f->s, 1, NULL, NULL);
    usleep(3000);
    assert_int_equal(store_search(f->s, &q, &pg, &h), MCPAGE_ERANGE);
    assert_non_null(strstr(store_errmsg(f->s), "stopped after 1 ms"));
    assert_int_equal(store_search_count(f->s, &q, &n), MCPAGE_ERANGE);

    store_budget_clear(f->s);
    assert_int_equal(store_search(f->s, &q, &pg, &h), 0);
    assert_int_equal(h.count, 20);
    store_hits_free(&h);
    /* a generous budget changes nothing */
    store_budget_set(f->s, 60000, stop_now, &(stopper){0, 1 << 30});
    assert_int_equal(store_search_count(f->s, &q, &n), 0);
    assert_true(n > 200);
    store_budget_clear(f->s);
}

/* Overwrites `n` bytes in the middle of a file with a pattern. */
static void scribble(const char *path, size_t n)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    assert_int_equal(fseek(fp, size / 2, SEEK_SET), 0);
    for (size_t i = 0; i < n; i++)
        fputc((int)((i * 131 + 7) & 0xff), fp);
    fclose(fp);
}

/*
 * Issue 15, item 7, on a real file: bytes written into the middle of a
 * closed store. The check (mcpage stats) says it is damaged and how to
 * recover; a writer is refused before it writes; the health check of
 * any handle in the process reports it once a handle has met it.
 */
static void a_damaged_file_is_reported_and_not_written(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    char path[1300];
    snprintf(path, sizeof path, "%s/damaged.db", f->dir);
    store *w = NULL, *r = NULL, *r2 = NULL;
    assert_int_equal(store_open(path, STORE_OPEN_WRITE, &w), 0);
    fill(w);
    store_close(w); /* the last connection checkpoints: all pages in the file */
    assert_int_equal(store_open(path, STORE_OPEN_READONLY, &r), 0);
    assert_int_equal(store_check(r), 0);
    assert_int_equal(store_ping(r), 0);
    store_close(r);

    scribble(path, 16384);
    assert_int_equal(store_open(path, STORE_OPEN_READONLY, &r), 0); /* cheap checks pass */
    assert_int_equal(store_open(path, STORE_OPEN_READONLY, &r2), 0);
    assert_int_equal(store_ping(r2), 0); /* nothing has met the damage yet */
    assert_int_equal(store_check(r), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(r), "is damaged (integrity check:"));
    assert_non_null(strstr(store_errmsg(r), "'mcpage sync --rebuild'"));
    assert_int_equal(store_ping(r2), MCPAGE_ESTORE); /* now the process knows */
    assert_non_null(strstr(store_errmsg(r2), "is damaged"));
    char err[600];
    assert_int_equal(store_open_msg(path, STORE_OPEN_WRITE, &w, err, sizeof err), MCPAGE_ESTORE);
    assert_non_null(strstr(err, "is damaged"));
    store_close(r);
    store_close(r2);

    /* truncated to half: refused at open, as truncated */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s/damaged.db' '%s/t.db' && truncate -s 100000 '%s/t.db'",
             f->dir, f->dir, f->dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/t.db", f->dir);
    assert_int_equal(store_open_msg(path, STORE_OPEN_READONLY, &r, err, sizeof err), MCPAGE_ESTORE);
    assert_non_null(strstr(err, "is truncated (100000 of its "));
}

/* A new store has 16 KB pages (fewer reads and writes per byte synced); a
 * store written with SQLite's 4 KB pages keeps them, and takes writes. */
static void new_stores_have_16k_pages_old_ones_keep_theirs(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    assert_int_equal(file_int(f->db, "PRAGMA page_size"), 16384);
    store_search_filter q = {.query = "kiwi"};
    assert_int_equal(hits(f->s, &q), 0);
    store_close(f->s);
    f->s = NULL;
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw,
                                  "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM; "
                                  "PRAGMA journal_mode = WAL",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(file_int(f->db, "PRAGMA page_size"), 4096);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    add_words(f->s, "old-pages", 0, 30, 5, 3);
    assert_true(hits(f->s, &q) > 0);
    assert_int_equal(file_int(f->db, "PRAGMA page_size"), 4096);
}

static void bad_pages_are_rejected(void **state)
{
    fixture *f = *state;
    store_sessions l;
    store_page pg = {.limit = 0};
    assert_int_equal(store_sessions_list(f->s, NULL, &pg, &l), MCPAGE_EINVAL);
    pg.limit = STORE_LIMIT_MAX + 1;
    assert_int_equal(store_sessions_list(f->s, NULL, &pg, &l), MCPAGE_EINVAL);
    pg = (store_page){.limit = 5, .offset = -1};
    assert_int_equal(store_sessions_list(f->s, NULL, &pg, &l), MCPAGE_EINVAL);
    store_key k = {.nparts = 2};
    k.part[0].type = STORE_KEY_INT; /* sessions need (text, text) */
    k.part[1].type = STORE_KEY_TEXT;
    pg = (store_page){.after = &k, .limit = 5};
    assert_int_equal(store_sessions_list(f->s, NULL, &pg, &l), MCPAGE_EINVAL);
}

static void generation_moves_with_changes_only(void **state)
{
    fixture *f = *state;
    int64_t g0, g1;
    assert_int_equal(store_generation(f->s, &g0), 0);
    assert_true(g0 >= 1);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_generation(f->s, &g1), 0);
    assert_int_equal(g1, g0);
    assert_int_equal(store_begin(f->s), 0);
    store_message m = {
        .session_id = "sess-0-00", .ordinal = 100, .role = "user", .text = "zulu", .line_no = 1};
    int64_t id;
    assert_int_equal(store_message_add(f->s, &m, &id), 0);
    assert_int_equal(store_rollback(f->s), 0);
    assert_int_equal(store_generation(f->s, &g1), 0);
    assert_int_equal(g1, g0);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_message_add(f->s, &m, &id), 0);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_generation(f->s, &g1), 0);
    assert_int_equal(g1, g0 + 1);
    store_search_filter q = {.query = "zulu"};
    assert_int_equal(hits(f->s, &q), 1);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "sess-0-00"), 0);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_generation(f->s, &g1), 0);
    assert_int_equal(g1, g0 + 2);
    assert_int_equal(hits(f->s, &q), 0); /* deleted rows leave the index too */
    /* writes outside a transaction are refused */
    assert_int_equal(store_message_add(f->s, &m, &id), MCPAGE_ESTATE);
}

static void transcript_raw_and_summary(void **state)
{
    fixture *f = *state;
    store_messages ms;
    assert_int_equal(store_messages_from(f->s, "sess-1-05", 2, 3, &ms), 0);
    assert_int_equal(ms.count, 3);
    assert_int_equal(ms.rows[0].ordinal, 2);
    assert_int_equal(ms.rows[2].ordinal, 4);
    assert_string_equal(ms.rows[1].session_id, "sess-1-05");
    int64_t id = ms.rows[0].message_id;
    store_messages_free(&ms);
    store_message m;
    assert_int_equal(store_message_get(f->s, id, &m), 0);
    assert_int_equal(m.ordinal, 2);
    assert_int_equal(m.line_no, 3);
    store_message_clear(&m);
    assert_int_equal(store_message_get(f->s, 99999999, &m), MCPAGE_ENOTFOUND);

    unsigned char *buf;
    size_t n;
    int64_t total;
    assert_int_equal(store_raw_read(f->s, "sess-1-05", 3, 4, &buf, &n, &total), 0);
    assert_int_equal(total, 10);
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "3456", 4);
    free(buf);
    assert_int_equal(store_raw_read(f->s, "sess-1-05", 8, 100, &buf, &n, &total), 0);
    assert_int_equal(n, 2);
    free(buf);
    assert_int_equal(store_raw_read(f->s, "sess-1-05", 10, 100, &buf, &n, &total), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_raw_read(f->s, "nope", 0, 1, &buf, &n, &total), MCPAGE_ENOTFOUND);

    store_session_summary sum;
    assert_int_equal(store_session_summary_get(f->s, "sess-1-05", &sum), 0);
    assert_int_equal(sum.session.message_count, 11);
    assert_true(sum.role_count >= 3);
    assert_int_equal(sum.tool_count, 1);
    assert_string_equal(sum.tools[0].name, "Bash");
    assert_non_null(sum.first_prompt);
    assert_int_equal(sum.error_count, 1);
    store_session_summary_clear(&sum);
}

/* ---- raw chunks compressed (issue 35) -------------------------------- */

/* A stop function that answers "stop" after calls[1] calls (PostgreSQL
 * also asks it while a statement runs). */
static int stop_after(void *ud)
{
    int *calls = ud;
    return ++calls[0] > calls[1];
}

/* Runs SQL on the store's own database (either backend), outside mcpage. */
static void raw_sql(const char *spec, const char *sqlite_sql, const char *pg_sql)
{
    if (store_spec_is_url(spec)) {
        PGconn *c = PQconnectdb(spec);
        assert_int_equal(PQstatus(c), CONNECTION_OK);
        PGresult *r = PQexec(c, pg_sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
            fail_msg("%s: %s", pg_sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        return;
    }
    sqlite3 *db = NULL;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(spec, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, sqlite_sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sqlite_sql, msg);
    sqlite3_close(db);
}

/* One number a query gives on the store's database. */
static int64_t raw_num(const char *spec, const char *sql)
{
    int64_t n = -1;
    if (store_spec_is_url(spec)) {
        PGconn *c = PQconnectdb(spec);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            n = atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(c);
        return n;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(spec, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* Transcript-like bytes: JSON lines that repeat with variations, and a
 * stretch of noise that does not compress. */
/* ---- PostgreSQL relevance heads --------------------------------------- */

/* Heads rows that are no match of their word at their rank, and matches
 * of messages up to rank_state.done above their group's cut (or of a
 * group without one) not kept: the heads keep the newest. */
#define HEADS_WRONG                                                                                \
    "SELECT (SELECT count(*) FROM rank_heads h WHERE NOT h.cut AND NOT EXISTS (SELECT 1 FROM "     \
    "messages m, rank_terms t WHERE t.term = h.term AND m.message_id = h.message_id AND m.tsv @@ " \
    "t.q AND mcpage_rank(m.tsv, t.q, m.role) = h.rk)) + (SELECT count(*) FROM rank_state s, "      \
    "rank_terms t "                                                                                \
    "JOIN messages m ON m.tsv @@ t.q WHERE m.message_id <= s.done AND NOT EXISTS (SELECT 1 FROM "  \
    "rank_heads h WHERE h.term = t.term AND h.rk = mcpage_rank(m.tsv, t.q, m.role) AND ((NOT "     \
    "h.cut AND "                                                                                   \
    "h.message_id = m.message_id) OR (h.cut AND h.message_id >= m.message_id))))"

/* Words whose kept match count is not their number of matches up to
 * rank_state.done. */
#define COUNTS_WRONG                                                                               \
    "SELECT count(*) FROM rank_terms t, rank_state s WHERE t.n <> (SELECT count(*) FROM messages " \
    "m WHERE m.tsv @@ t.q AND m.message_id <= s.done)"

/* Messages not yet in the heads. */
#define HEADS_BEHIND "SELECT count(*) FROM messages, rank_state WHERE message_id > done"

/* A whole relevance walk of `query`, pages of 4 by keyset or by offset:
 * message ids and ranks. */
static size_t relevance_walk(store *s, const char *query, int keyset, int64_t *ids, double *ranks)
{
    store_search_filter q = {.query = query, .sort = STORE_SEARCH_RELEVANCE};
    store_key after;
    store_page pg = {.limit = 4};
    size_t n = 0;
    for (;;) {
        store_hits h = {0};
        assert_int_equal(store_search(s, &q, &pg, &h), 0);
        for (size_t i = 0; i < h.count; i++) {
            assert_true(n < MAXROWS);
            ids[n] = h.rows[i].message_id;
            ranks[n++] = h.rows[i].rank;
        }
        size_t got = h.count;
        if (got)
            after = h.rows[got - 1].key;
        store_hits_free(&h);
        if (got < 4)
            return n;
        if (keyset)
            pg.after = &after;
        else
            pg.offset += 4;
    }
}

/* Every walk of each query reads the same rows and ranks with the heads
 * as ranking every match does, and the count kept with them is the
 * number of matches. */
static void heads_agree(store *s, const char *const *queries, size_t nq)
{
    static int64_t ids[2][MAXROWS];
    static double ranks[2][MAXROWS];
    for (size_t k = 0; k < nq; k++)
        for (int keyset = 0; keyset < 2; keyset++) {
            store_pg__rank_off = 1;
            size_t n = relevance_walk(s, queries[k], keyset, ids[0], ranks[0]);
            store_pg__rank_off = 0;
            size_t got = relevance_walk(s, queries[k], keyset, ids[1], ranks[1]);
            if (got != n || n == 0)
                fail_msg("%s (%s): %zu rows with the heads, %zu ranking every match", queries[k],
                         keyset ? "keyset" : "offset", got, n);
            store_search_filter q = {.query = queries[k]};
            int64_t total = -1;
            assert_int_equal(store_search_count(s, &q, &total), 0);
            if (total != (int64_t)n)
                fail_msg("%s: counted %lld with the heads, %zu matches", queries[k],
                         (long long)total, n);
            for (size_t i = 0; i < n; i++)
                if (ids[0][i] != ids[1][i] || ranks[0][i] != ranks[1][i])
                    fail_msg("%s row %zu: heads %lld %.17g, every match %lld %.17g", queries[k], i,
                             (long long)ids[1][i], ranks[1][i], (long long)ids[0][i], ranks[0][i]);
        }
}

/* The heads a tidy keeps, row by row in the order written (or by word,
 * without the row ids: `by_word`), and the meta it sets. */
static char *kept_heads(sqlite3 *raw, int by_word)
{
    sqlite3_stmt *st = NULL;
    char *sql = sqlite3_mprintf(
        "SELECT group_concat(r, char(10)) FROM (SELECT %s fts || ' ' || deletes || ' ' || max_id "
        "|| ' ' || n || ' ' || kept || ' ' || hex(heads) AS r FROM impact_heads UNION ALL SELECT "
        "key || ' ' || value FROM meta WHERE key LIKE 'impact_heads%%' ORDER BY %s)",
        by_word ? "" : "rowid || ' ' ||", by_word ? "r" : "1");
    assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_free(sql);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *out = strdup(t ? (const char *)t : "");
    sqlite3_finalize(st);
    return out;
}

/*
 * A tidy on two threads (a reader of its own takes ranges of the
 * vocabulary, then words) keeps what one thread keeps: the same words,
 * the same heads, written in the same order; heads that fell behind are
 * extended the same way; a budget's stop ends both threads. A word's
 * heads walked alone (each run's first entries in a heap) are those of
 * its whole list, walked and sorted, byte for byte.
 */
static void tidy_on_two_threads_keeps_what_one_keeps(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    add_words(f->s, "tidy-1", 0, 150, 5, 11);
    add_words(f->s, "tidy-2", 0, 90, 9, 7);
    int64_t heads_min = store_sqlite__impact_heads_min, run = store_sqlite__impact_heads_run;
    store_sqlite__impact_heads_min = 20;
    store_sqlite__impact_heads_run = 3;
    const char *env = getenv("MCPAGE_SYNC_THREADS");
    char *was = env ? strdup(env) : NULL;
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(f->db, &raw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    /* each way on its own copy of the same store: one thread, two, and
     * one taking each word's heads from its whole list, walked and sorted */
    char *kept[3][2];
    for (int t = 0; t < 3; t++) {
        char *path = sqlite3_mprintf("%s.tidy%d", f->db, t),
             *sql = sqlite3_mprintf("VACUUM INTO %Q", path);
        unlink(path);
        assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        setenv("MCPAGE_SYNC_THREADS", t == 1 ? "2" : "1", 1);
        store_sqlite__heads_by_list = t == 2;
        store *s = NULL;
        sqlite3 *copy = NULL;
        assert_int_equal(store_open(path, STORE_OPEN_WRITE, &s), 0);
        assert_int_equal(sqlite3_open_v2(path, &copy, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(store_tidy(s), 0);
        kept[t][0] = kept_heads(copy, 0);
        /* more than a sixteenth of the rows since: the heads are extended */
        add_words(s, "tidy-3", 0, 100, 11, 99);
        assert_int_equal(store_tidy(s), 0);
        kept[t][1] = kept_heads(copy, 0);
        if (t == 1) {
            int64_t matches = 0;
            assert_true(common_words(copy, 20, &matches) >= 6);
            /* stopped: both threads end; the next tidy keeps what an unstopped one keeps */
            static const char *const forget =
                "DELETE FROM impact_heads; DELETE FROM meta WHERE key LIKE 'impact_heads%'";
            char *whole[2];
            for (int k = 0; k < 2; k++) {
                sqlite3 *w = NULL;
                assert_int_equal(sqlite3_open_v2(path, &w, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_exec(w, forget, NULL, NULL, NULL), SQLITE_OK);
                sqlite3_close(w);
                int calls[2] = {0, 2};
                if (k == 0)
                    store_budget_set(s, 0, stop_after, calls);
                assert_int_equal(store_tidy(s), k == 0 ? MCPAGE_ECANCELED : 0);
                store_budget_clear(s);
                if (k == 0)
                    assert_int_equal(store_tidy(s), 0);
                whole[k] = kept_heads(copy, 1); /* a stopped tidy's rows were replaced */
            }
            assert_string_equal(whole[0], whole[1]);
            free(whole[0]);
            free(whole[1]);
        }
        sqlite3_close(copy);
        store_close(s);
        unlink(path);
        sqlite3_free(sql);
        sqlite3_free(path);
    }
    /* words of every range of the vocabulary: numbers, words, classes */
    assert_non_null(strstr(kept[1][0], " \"10\" "));
    assert_non_null(strstr(kept[1][0], " \"max_tokens\" "));
    assert_non_null(strstr(kept[1][0], " \"~the\" "));
    assert_non_null(strstr(kept[1][0], " \"~mango\" "));
    assert_string_equal(kept[0][0], kept[1][0]);
    assert_string_not_equal(kept[1][0], kept[1][1]);
    assert_string_equal(kept[0][1], kept[1][1]);
    assert_string_equal(kept[2][0], kept[0][0]);
    assert_string_equal(kept[2][1], kept[0][1]);
    store_sqlite__heads_by_list = 0;
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 2; k++)
            free(kept[t][k]);
    if (was)
        setenv("MCPAGE_SYNC_THREADS", was, 1);
    else
        unsetenv("MCPAGE_SYNC_THREADS");
    free(was);
    store_sqlite__impact_heads_min = heads_min;
    store_sqlite__impact_heads_run = run;
    sqlite3_close(raw);
}

/*
 * PostgreSQL keeps relevance heads of its commonest words (store_tidy,
 * chosen by ANALYZE's statistics); the trigger keeps them in step with
 * inserts and deletes; relevance walks by keyset and by offset read the
 * same rows and ranks as ranking every match, pages past a cut included.
 */
static void relevance_heads_in_postgres(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_POSTGRES) {
        skip();
        return;
    }
    static const char *const queries[] = {"the", "kiwi", "\"mango\"", "Lemon", "alpha"};
    const size_t nq = sizeof queries / sizeof queries[0];
    add_words(f->s, "heads-1", 0, 150, 5, 11);
    int64_t min = store_pg__rank_min, head = store_pg__rank_head;
    store_pg__rank_min = 20;
    store_pg__rank_head = 3; /* groups are cut: pages go past the heads */
    raw_sql(f->db, "", "ANALYZE messages");
    assert_int_equal(store_tidy(f->s), 0);
    assert_true(raw_num(f->db, "SELECT count(*) FROM rank_terms") >= 8);
    assert_true(raw_num(f->db, "SELECT count(*) FROM rank_heads WHERE cut") > 0);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    assert_int_equal(raw_num(f->db, COUNTS_WRONG), 0);
    int64_t read = store_pg__rank_read;
    heads_agree(f->s, queries, nq);
    assert_true(store_pg__rank_read > read);

    /* a sync's rows: read beside the heads, then added to them by the tidy */
    assert_int_equal(raw_num(f->db, HEADS_BEHIND), 0);
    add_words(f->s, "heads-2", 0, 150, 11, 99);
    assert_int_equal(raw_num(f->db, HEADS_BEHIND), 150);
    heads_agree(f->s, queries, nq);
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(raw_num(f->db, HEADS_BEHIND), 0);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    assert_int_equal(raw_num(f->db, COUNTS_WRONG), 0);
    heads_agree(f->s, queries, nq);

    /* rows of ids the heads passed (ids reserved before a tidy, written
     * after it): kept by the trigger */
    raw_sql(f->db, "", "UPDATE rank_state SET done = done + 1000");
    add_words(f->s, "heads-3", 0, 40, 7, 3);
    assert_int_equal(raw_num(f->db, HEADS_BEHIND), 0);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    assert_int_equal(raw_num(f->db, COUNTS_WRONG), 0);
    heads_agree(f->s, queries, nq);

    /* a re-parse: deleted rows leave the heads, the new ones join */
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "heads-1"), 0);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    assert_int_equal(raw_num(f->db, COUNTS_WRONG), 0);
    add_words(f->s, "heads-1", 0, 60, 23, 5);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    heads_agree(f->s, queries, nq);

    /* the writer keeps again the groups that grew or emptied */
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(raw_num(f->db, "SELECT count(*) FROM (SELECT 1 FROM rank_heads GROUP BY "
                                    "term, rk HAVING count(*) FILTER (WHERE NOT cut) > 6 OR "
                                    "bool_and(cut)) g"),
                     0);
    assert_int_equal(raw_num(f->db, HEADS_WRONG), 0);
    heads_agree(f->s, queries, nq);
    store_pg__rank_min = min;
    store_pg__rank_head = head;
}

/* A whole walk of `q`, pages of `limit` by keyset or by offset: message ids. */
static size_t walk_ids(store *s, const store_search_filter *q, int keyset, int64_t limit,
                       int64_t *ids, size_t cap)
{
    store_key after;
    store_page pg = {.limit = limit};
    size_t n = 0;
    for (;;) {
        store_hits h = {0};
        assert_int_equal(store_search(s, q, &pg, &h), 0);
        for (size_t i = 0; i < h.count; i++) {
            assert_true(n < cap);
            ids[n++] = h.rows[i].message_id;
        }
        size_t got = h.count;
        if (got)
            after = h.rows[got - 1].key;
        store_hits_free(&h);
        if (got < (size_t)limit)
            return n;
        if (keyset)
            pg.after = &after;
        else
            pg.offset += limit;
    }
}

/* `q`'s walks, pages of 1 and of 3 by keyset and by offset, read `want` (n ids) exactly. */
static void walks_read(store *s, const store_search_filter *q, const int64_t *want, size_t n)
{
    int64_t got[64];
    for (int keyset = 0; keyset < 2; keyset++)
        for (int64_t limit = 1; limit <= 3; limit += 2) {
            size_t m = walk_ids(s, q, keyset, limit, got, 64);
            for (size_t i = 0; i < n && i < m; i++)
                if (got[i] != want[i])
                    fail_msg("%s%s (%s, pages of %lld) row %zu: %lld, want %lld", q->query,
                             q->by_session ? " by session" : "", keyset ? "keyset" : "offset",
                             (long long)limit, i, (long long)got[i], (long long)want[i]);
            if (m != n)
                fail_msg("%s (%s, pages of %lld): %zu rows, want %zu", q->query,
                         keyset ? "keyset" : "offset", (long long)limit, m, n);
        }
}

/*
 * Equal relevance goes newest stored first (issue 34): the same message in
 * sessions of different days (stored in their order, as a sync stores
 * them) comes back newest first after the better-ranked ones, exactly
 * and once each, in pages of one by keyset and by offset: by every path
 * of each backend (SQLite: impact lists, every match scored, several
 * words, a filter; PostgreSQL: every match ranked, the relevance heads
 * cut within the tie) and grouped by session. A position in the order
 * before 0.2.0 (the message id, not -message_id) is refused.
 */
static void equal_ranks_go_newest_first(void **state)
{
    fixture *f = *state;
    int pg = store_spec_is_url(f->db);
    enum { SESSIONS = 5, SAME = 3 };
    int64_t same[SESSIONS * SAME], better = 0;
    size_t nsame = 0;
    for (int d = 0; d < SESSIONS; d++) {
        char sid[32], ts[32];
        snprintf(sid, sizeof sid, "tie-%d", d);
        snprintf(ts, sizeof ts, "2026-04-%02dT10:00:00Z", d + 1);
        assert_int_equal(store_begin(f->s), 0);
        store_session_meta m = {.session_id = sid, .source = "claude", .source_path = "/dev/null"};
        assert_int_equal(store_session_put(f->s, &m), 0);
        for (int i = 0; i < SAME + 1; i++) {
            int best = d == 2 && i == SAME; /* one better-ranked match, mid-walk in time */
            store_message msg = {.session_id = sid,
                                 .ordinal = i,
                                 .role = "user",
                                 .timestamp = ts,
                                 .text = best        ? "zeppelin zeppelin hangar"
                                         : i == SAME ? "an unrelated note"
                                                     : "deploy the zeppelin hangar build"};
            int64_t id = 0;
            assert_int_equal(store_message_add(f->s, &msg, &id), 0);
            if (best)
                better = id;
            else if (i < SAME)
                same[nsame++] = id;
        }
        assert_int_equal(store_session_refresh(f->s, sid), 0);
        assert_int_equal(store_commit(f->s), 0);
    }
    int64_t want[1 + SESSIONS * SAME];
    size_t n = 0;
    want[n++] = better;
    for (size_t i = nsame; i-- > 0;)
        want[n++] = same[i];
    assert_true(same[0] < same[nsame - 1]); /* stored oldest first */
    /* sessions: tie-2 (the better match), then tie-4 .. tie-0, each by its newest match */
    int64_t groups[SESSIONS] = {better};
    for (int d = SESSIONS - 1, k = 1; d >= 0; d--)
        if (d != 2)
            groups[k++] = same[d * SAME + SAME - 1];

    store_search_filter q = {.query = "zeppelin"}, two = {.query = "zeppelin hangar"},
                        role = {.query = "zeppelin", .role = "user"},
                        grouped = {.query = "zeppelin", .by_session = 1};
    if (pg) {
        store_pg__rank_off = 1; /* every match ranked */
        walks_read(f->s, &q, want, n);
        walks_read(f->s, &grouped, groups, SESSIONS);
        store_pg__rank_off = 0;
        int64_t min = store_pg__rank_min, head = store_pg__rank_head;
        store_pg__rank_min = 1;
        store_pg__rank_head = 4; /* the tie of 15 is cut: pages past the heads */
        raw_sql(f->db, "", "ANALYZE messages");
        assert_int_equal(store_tidy(f->s), 0);
        store_pg__rank_min = min;
        store_pg__rank_head = head;
        assert_true(raw_num(f->db, "SELECT count(*) FROM rank_terms t JOIN rank_heads h ON "
                                   "h.term = t.term WHERE h.cut AND t.lexeme = '~zeppelin'") == 1);
        int64_t read = store_pg__rank_read;
        walks_read(f->s, &q, want, n);
        assert_true(store_pg__rank_read > read);
    } else {
        walks_read(f->s, &q, want, n);
        walks_read(f->s, &two, want, n);
        store_sqlite__impact_off = 1;
        walks_read(f->s, &q, want, n);
        walks_read(f->s, &two, want, n);
        store_sqlite__impact_off = 0;
    }
    walks_read(f->s, &role, want, n);
    walks_read(f->s, &grouped, groups, SESSIONS);

    /* a position as an mcpage before 0.2.0 made it: refused, not skipping rows */
    store_hits h = {0};
    store_page first = {.limit = 2};
    assert_int_equal(store_search(f->s, &q, &first, &h), 0);
    store_key old = h.rows[1].key;
    assert_int_equal(old.part[1].i, -h.rows[1].message_id);
    store_hits_free(&h);
    old.part[1].i = -old.part[1].i;
    store_page resumed = {.after = &old, .limit = 2};
    assert_int_equal(store_search(f->s, &q, &resumed, &h), MCPAGE_EINVAL);
    assert_non_null(strstr(store_errmsg(f->s), "before 0.2.0"));
}

static unsigned char *raw_source(size_t n, unsigned seed)
{
    unsigned char *b = malloc(n);
    size_t at = 0;
    unsigned x = seed;
    while (at < n) {
        char line[200];
        x = x * 1103515245u + 12345u;
        int len = snprintf(line, sizeof line,
                           "{\"type\":\"assistant\",\"n\":%u,\"text\":\"read src/%s.c line %u\"}\n",
                           x % 1000, words[x % 6], (x >> 8) % 5000);
        for (int i = 0; i < len && at < n; i++)
            b[at++] = (unsigned char)line[i];
    }
    for (size_t i = n / 3; i < n / 3 + n / 10; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
    }
    return b;
}

/* Every window of the session's raw bytes, at several sizes, equals src. */
static void raw_reads_equal(store *s, const char *sid, const unsigned char *src, size_t n)
{
    static const int64_t sizes[] = {8192, 65536, (1 << 20) + 7, 16 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int64_t at = 0; at < (int64_t)n; at += sizes[k]) {
            unsigned char *buf = NULL;
            size_t got = 0;
            int64_t total = 0;
            if (store_raw_read(s, sid, at, sizes[k], &buf, &got, &total) < 0)
                fail_msg("read %s at %lld: %s", sid, (long long)at, store_errmsg(s));
            assert_int_equal(total, (int64_t)n);
            size_t want = n - (size_t)at < (size_t)sizes[k] ? n - (size_t)at : (size_t)sizes[k];
            assert_int_equal(got, want);
            assert_memory_equal(buf, src + at, want);
            free(buf);
        }
    }
}

static void put_session(store *s, const char *sid)
{
    assert_int_equal(store_begin(s), 0);
    int64_t pid = 0;
    assert_int_equal(store_project_ensure(s, "/home/u/rawz", "rawz", &pid), 0);
    store_session_meta m = {.session_id = sid, .source = "claude", .project_id = pid};
    assert_int_equal(store_session_put(s, &m), 0);
    assert_int_equal(store_commit(s), 0);
}

/* Session `sid` (put first) with `n` tool messages, message k's text
 * text_of(k), in one transaction; their ids in `ids`. */
static void add_tool_texts(store *s, const char *sid, int n, char *(*text_of)(int), int64_t *ids)
{
    char id[64]; /* store_message's fields are not const */
    snprintf(id, sizeof id, "%s", sid);
    put_session(s, sid);
    assert_int_equal(store_begin(s), 0);
    for (int k = 0; k < n; k++) {
        char *t = text_of(k);
        store_message msg = {
            .session_id = id, .ordinal = k, .role = "tool", .text = t, .line_no = k + 1};
        assert_int_equal(store_message_add(s, &msg, &ids[k]), 0);
        free(t);
    }
    assert_int_equal(store_commit(s), 0);
}

/*
 * Raw chunks are written as zstd frames and read back byte for byte at
 * any window; a damaged frame is a named error, never other bytes; the
 * plain rows of an older store are compressed by store_tidy, which can
 * be stopped between batches and goes on from there.
 */
static void raw_chunks_are_compressed(void **state)
{
    fixture *f = *state;
    size_t n = (3u << 20) + 1234;
    unsigned char *src = raw_source(n, 7);
    put_session(f->s, "raw-z");
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_raw_append(f->s, "raw-z", src, 1500000, 10), 0);
    assert_int_equal(store_raw_append(f->s, "raw-z", src + 1500000, n - 1500000, 10), 0);
    assert_int_equal(store_commit(f->s), 0);
    raw_reads_equal(f->s, "raw-z", src, n);
    const char *zsid = "(SELECT sid FROM sessions WHERE session_id = 'raw-z')";
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM raw_chunks WHERE sid = %s AND codec = 1", zsid);
    assert_true(raw_num(f->db, q) >= 3);
    snprintf(q, sizeof q, "SELECT sum(length(data)) FROM raw_chunks WHERE sid = %s", zsid);
    int64_t stored = raw_num(f->db, q);
    assert_true(stored > 0 && stored < (int64_t)n / 4);

    /* one byte of the second chunk's frame changed */
    char lite[512], pg[512];
    snprintf(lite, sizeof lite,
             "UPDATE raw_chunks SET data = substr(data, 1, 200) || CASE WHEN substr(data, 201, 1) "
             "= x'00' THEN x'01' ELSE x'00' END || substr(data, 202) WHERE sid = %s AND offset = "
             "1048576",
             zsid);
    snprintf(pg, sizeof pg,
             "UPDATE raw_chunks SET data = set_byte(data, 200, (get_byte(data, 200) + 1) %% 256) "
             "WHERE sid = %s AND \"offset\" = 1048576",
             zsid);
    raw_sql(f->db, lite, pg);
    unsigned char *buf = NULL;
    size_t got = 0;
    int64_t total = 0;
    assert_int_equal(store_raw_read(f->s, "raw-z", 1048576 + 10, 100, &buf, &got, &total),
                     MCPAGE_ESTORE);
    assert_null(buf);
    assert_non_null(strstr(store_errmsg(f->s), "raw bytes damaged: session 'raw-z', chunk at "
                                               "offset 1048576"));
    assert_non_null(strstr(store_errmsg(f->s), "mcpage sync --rebuild"));
    /* a window across it fails too; the others still read */
    assert_int_equal(store_raw_read(f->s, "raw-z", 0, 2 << 20, &buf, &got, &total), MCPAGE_ESTORE);
    assert_int_equal(store_raw_read(f->s, "raw-z", 0, 4096, &buf, &got, &total), 0);
    assert_memory_equal(buf, src, 4096);
    free(buf);
    /* an unknown codec is refused the same way */
    snprintf(lite, sizeof lite, "UPDATE raw_chunks SET codec = 7 WHERE sid = %s AND offset = 0",
             zsid);
    snprintf(pg, sizeof pg, "UPDATE raw_chunks SET codec = 7 WHERE sid = %s AND \"offset\" = 0",
             zsid);
    raw_sql(f->db, lite, pg);
    assert_int_equal(store_raw_read(f->s, "raw-z", 0, 10, &buf, &got, &total), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), "unknown codec"));

    /* an older store: 40 plain chunks of 4 KiB written as before version 9 (8) */
    put_session(f->s, "raw-old");
    const char *osid = "(SELECT sid FROM sessions WHERE session_id = 'raw-old')";
    size_t on = 40 * 4096;
    unsigned char *old = raw_source(on, 11);
    store_close(f->s);
    f->s = NULL;
    for (int i = 0; i < 40; i++) {
        char hex[2 * 4096 + 1];
        for (int k = 0; k < 4096; k++)
            snprintf(hex + 2 * k, 3, "%02x", old[i * 4096 + k]);
        char *sql_l = malloc(sizeof hex + 512), *sql_p = malloc(sizeof hex + 512);
        snprintf(sql_l, sizeof hex + 512,
                 "INSERT INTO raw_chunks(sid, offset, data) VALUES(%s, %d, x'%s')", osid, i * 4096,
                 hex);
        snprintf(sql_p, sizeof hex + 512,
                 "INSERT INTO raw_chunks(sid, \"offset\", data) VALUES(%s, %d, '\\x%s')", osid,
                 i * 4096, hex);
        raw_sql(f->db, sql_l, sql_p);
        free(sql_l);
        free(sql_p);
    }
    snprintf(lite, sizeof lite,
             "UPDATE sessions SET raw_size = %zu WHERE session_id = 'raw-old'; DELETE FROM "
             "schema_version WHERE version >= 11;",
             on);
    snprintf(pg, sizeof pg,
             "UPDATE sessions SET raw_size = %zu WHERE session_id = 'raw-old'; DELETE FROM "
             "schema_version WHERE version >= 10;",
             on);
    raw_sql(f->db, lite, pg);
    store_pool_drain(); /* a process migrates a URL once: forget it */
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    snprintf(q, sizeof q, "SELECT count(*) FROM raw_chunks WHERE sid = %s AND codec = 0", osid);
    assert_int_equal(raw_num(f->db, q), 40);
    raw_reads_equal(f->s, "raw-old", old, on);
    /* stopped after its first batch: some compressed, all readable */
    int64_t left = 40;
    for (int tries = 0; tries < 200 && left == 40; tries++) {
        /* a batch or a few a call (the other sessions' rows come first) */
        int calls[2] = {0, 1 + tries / 4};
        store_budget_set(f->s, 0, stop_after, calls);
        assert_int_equal(store_tidy(f->s), MCPAGE_ECANCELED);
        store_budget_clear(f->s);
        left = raw_num(f->db, q);
    }
    if (!(left > 3 && left < 40))
        fail_msg("left %lld, pack at %lld", (long long)left,
                 (long long)raw_num(f->db, store_spec_is_url(f->db)
                                               ? "SELECT count(*) FROM raw_pack"
                                               : "SELECT value FROM meta WHERE key = "
                                                 "'raw_pack_at'"));
    raw_reads_equal(f->s, "raw-old", old, on);
    /* the next tidy (the next sync's) goes on and finishes */
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(raw_num(f->db, q), 3); /* the 3 chunks of noise stay plain */
    raw_reads_equal(f->s, "raw-old", old, on);
    assert_int_equal(store_tidy(f->s), 0); /* nothing left: a no-op */
    free(old);
    free(src);
}

/* The texts of text_pack_session: lines of a log (compressible), a few
 * short ones (kept plain), and a token only message k has. */
static char *packed_text(int k)
{
    size_t lines = k % 5 == 0 ? 1 : 40 + (size_t)k * 7;
    char *t = malloc(lines * 64 + 64);
    size_t n = 0;
    for (size_t i = 0; i < lines; i++)
        n += (size_t)sprintf(t + n, "line %06zu: INFO handled in %zu ms path=/p?page=%zu\n", i,
                             i % 97, i);
    sprintf(t + n, "only%dword", k);
    return t;
}

/* Every text of the session reads as written: by id, in order, and by a
 * search for the token only it has (its snippet ends in that token). */
static void packed_texts_read_back(store *s, const int64_t *ids, int count)
{
    for (int k = 0; k < count; k++) {
        char *want = packed_text(k);
        store_message m;
        assert_int_equal(store_message_get(s, ids[k], &m), 0);
        assert_string_equal(m.text, want);
        store_message_clear(&m);
        char q[32];
        snprintf(q, sizeof q, "only%dword", k);
        store_search_filter sf = {.query = q};
        store_page pg = {.limit = 5};
        store_hits r;
        assert_int_equal(store_search(s, &sf, &pg, &r), 0);
        assert_int_equal(r.count, 1);
        assert_int_equal(r.rows[0].message_id, ids[k]);
        assert_non_null(strstr(r.rows[0].snippet, STORE_HIT_OPEN "only"));
        store_hits_free(&r);
        free(want);
    }
    store_messages l;
    assert_int_equal(store_messages_from(s, "text-z", 0, 1000, &l), 0);
    assert_int_equal(l.count, (size_t)count);
    for (int k = 0; k < count; k++) {
        char *want = packed_text(k);
        assert_string_equal(l.rows[k].text, want);
        free(want);
    }
    store_messages_free(&l);
}

/*
 * Message texts are kept compressed (SQLite, schema 13) and read back as
 * written by every reader; a damaged one is a named error, never other
 * text, and the others still read; a store of schema 12 (plain texts in
 * table message_text) is migrated, its texts compressed by store_tidy,
 * which can be stopped between batches and goes on from there.
 */
static void message_texts_are_compressed(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    enum { COUNT = 120 };
    int64_t ids[COUNT];
    add_tool_texts(f->s, "text-z", COUNT, packed_text, ids);
    const char *in_z = "message_id IN (SELECT message_id FROM messages WHERE sid = (SELECT sid "
                       "FROM sessions WHERE session_id = 'text-z'))";
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM message_body WHERE codec = 1 AND %s", in_z);
    assert_int_equal(raw_num(f->db, q), COUNT - COUNT / 5); /* the one-line texts stay plain */
    packed_texts_read_back(f->s, ids, COUNT);

    /* one byte of a frame changed: that message fails, named; others read */
    char sql[512];
    snprintf(sql, sizeof sql,
             "UPDATE message_body SET text = substr(text, 1, 30) || CASE WHEN substr(text, 31, 1) "
             "= x'00' THEN x'01' ELSE x'00' END || substr(text, 32) WHERE message_id = %lld",
             (long long)ids[7]);
    raw_sql(f->db, sql, sql);
    store_message m;
    assert_int_equal(store_message_get(f->s, ids[7], &m), MCPAGE_ESTORE);
    snprintf(q, sizeof q, "message text damaged: message %lld (codec 1,", (long long)ids[7]);
    assert_non_null(strstr(store_errmsg(f->s), q));
    assert_non_null(strstr(store_errmsg(f->s), "mcpage sync --rebuild"));
    store_search_filter sf = {.query = "only7word"};
    store_page pg = {.limit = 5};
    store_hits r;
    assert_int_equal(store_search(f->s, &sf, &pg, &r), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), q));
    assert_int_equal(store_message_get(f->s, ids[8], &m), 0);
    store_message_clear(&m);
    /* an unknown codec likewise */
    snprintf(sql, sizeof sql, "UPDATE message_body SET codec = 9 WHERE message_id = %lld",
             (long long)ids[8]);
    raw_sql(f->db, sql, sql);
    assert_int_equal(store_message_get(f->s, ids[8], &m), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), "unknown codec"));
    /* a session stored again drops its texts (the delete trigger decodes
     * them for FTS5): put them back whole */
    store_close(f->s);
    f->s = NULL;
    snprintf(sql, sizeof sql,
             "UPDATE message_body SET codec = 0, text = 'x' WHERE message_id IN (%lld, %lld)",
             (long long)ids[7], (long long)ids[8]);
    raw_sql(f->db, sql, sql);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_session_reset(f->s, "text-z"), 0);
    for (int k = 0; k < COUNT; k++) {
        char *t = packed_text(k);
        store_message msg = {.session_id = "text-z",
                             .ordinal = k,
                             .role = "tool",
                             .text = t,
                             .line_no = k + 1,
                             .message_id = ids[k]};
        assert_int_equal(store_message_add(f->s, &msg, &ids[k]), 0);
        free(t);
    }
    assert_int_equal(store_commit(f->s), 0);
    packed_texts_read_back(f->s, ids, COUNT);

    /* the store as schema 12 kept it: plain texts, migrated when opened */
    store_close(f->s);
    f->s = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    text_as_version_12(db);
    sqlite3_close(db);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    snprintf(q, sizeof q, "SELECT count(*) FROM message_body WHERE codec = 0 AND %s", in_z);
    assert_int_equal(raw_num(f->db, q), COUNT);
    packed_texts_read_back(f->s, ids, COUNT);
    /* stopped after a batch or a few: some compressed, all readable */
    int64_t left = COUNT;
    for (int tries = 0; tries < 200 && left == COUNT; tries++) {
        int calls[2] = {0, 1 + tries / 4};
        store_budget_set(f->s, 0, stop_after, calls);
        assert_int_equal(store_tidy(f->s), MCPAGE_ECANCELED);
        store_budget_clear(f->s);
        left = raw_num(f->db, q);
    }
    if (!(left > COUNT / 5 && left < COUNT))
        fail_msg("left %lld, pack at %lld", (long long)left,
                 (long long)raw_num(f->db, "SELECT value FROM meta WHERE key = 'text_pack_at'"));
    packed_texts_read_back(f->s, ids, COUNT);
    /* the next tidy goes on and finishes; a tidy after it does nothing */
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(raw_num(f->db, q), COUNT / 5);
    packed_texts_read_back(f->s, ids, COUNT);
    assert_int_equal(store_tidy(f->s), 0);
}

/* A text past SQ_TEXT_PACK_MAX (75 KB to 380 KB): log lines with a word
 * of its own in the middle and at the end; text 6 is letters of an LCG
 * (compressed less). */
enum { LONG_TEXTS = 7 };

static char *long_text(int k)
{
    size_t lines = 1500 + (size_t)k * 1000;
    char *t = malloc(lines * 64 + 64);
    size_t n = 0;
    uint32_t x = 12345;
    for (size_t i = 0; i < lines; i++) {
        if (k == 6) {
            for (int j = 0; j < 50; j++, x = x * 1103515245u + 12345u)
                t[n++] = (char)('a' + (x >> 16) % 26);
            t[n++] = '\n';
        } else {
            n += (size_t)sprintf(t + n, "line %06zu: INFO handled in %zu ms path=/p?page=%zu\n", i,
                                 i % 97, i);
        }
        if (i == lines / 2)
            n += (size_t)sprintf(t + n, "mid%dword\n", k);
    }
    sprintf(t + n, "only%dword", k);
    return t;
}

/* The one hit of `word` (its snippet into *snip, malloc'd), or the error. */
static int long_hit(store *s, const char *word, int64_t id, char **snip)
{
    store_search_filter sf = {.query = word};
    store_page pg = {.limit = 5};
    store_hits r;
    int rc = store_search(s, &sf, &pg, &r);
    if (rc < 0)
        return rc;
    assert_int_equal(r.count, 1);
    assert_int_equal(r.rows[0].message_id, id);
    *snip = strdup(r.rows[0].snippet);
    store_hits_free(&r);
    return 0;
}

/* The store file as schema 13 and older left it: the texts `which` selects
 * decoded back to plain, and the packing to run again from the start. */
static void texts_as_version_13(const char *path, const char *which)
{
    char sql[600];
    snprintf(sql, sizeof sql,
             "UPDATE message_body SET text = mcpage_text(message_id, codec, text), codec = 0 "
             "WHERE %s;"
             "UPDATE meta SET value = (SELECT max(message_id) FROM message_body) WHERE "
             "key IN ('text_pack_at', 'text_pack_until');"
             "DELETE FROM schema_version WHERE version >= 14;",
             which);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(store_sqlite_text_register(db), 0);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* Every long text reads as written, by id and in order; its words' snippets,
 * cut from the frames that hold them, are those cut from the whole text. */
static void long_texts_read_back(store *s, const int64_t *ids)
{
    store_messages l;
    assert_int_equal(store_messages_from(s, "text-l", 0, 100, &l), 0);
    assert_int_equal(l.count, LONG_TEXTS);
    for (int k = 0; k < LONG_TEXTS; k++) {
        char *want = long_text(k);
        store_message m;
        assert_int_equal(store_message_get(s, ids[k], &m), 0);
        assert_string_equal(m.text, want);
        assert_string_equal(l.rows[k].text, want);
        store_message_clear(&m);
        free(want);
        for (int w = 0; w < 2; w++) {
            char q[32], *part = NULL, *whole = NULL;
            snprintf(q, sizeof q, w ? "only%dword" : "mid%dword", k);
            assert_int_equal(long_hit(s, q, ids[k], &part), 0);
            store_sqlite__snippet_whole = 1;
            assert_int_equal(long_hit(s, q, ids[k], &whole), 0);
            store_sqlite__snippet_whole = 0;
            assert_string_equal(part, whole);
            assert_non_null(strstr(part, q));
            free(part);
            free(whole);
        }
    }
    store_messages_free(&l);
}

/* Message text id's stored value (malloc'd) and its codec. */
static unsigned char *body_get(const char *path, int64_t id, int *n, int *codec)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT text, codec FROM message_body WHERE "
                                        "message_id = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    *n = sqlite3_column_bytes(st, 0);
    *codec = sqlite3_column_int(st, 1);
    unsigned char *v = malloc((size_t)*n);
    memcpy(v, sqlite3_column_blob(st, 0), (size_t)*n);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void body_put(const char *path, int64_t id, const unsigned char *v, int n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    assert_int_equal(sqlite3_prepare_v2(db, "UPDATE message_body SET text = ? WHERE message_id = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_blob(st, 1, v, n, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The frame of long text k that holds its middle word. */
static size_t long_mid_frame(int k)
{
    char *t = long_text(k), word[16];
    snprintf(word, sizeof word, "mid%dword", k);
    size_t i = (size_t)(strstr(t, word) - t) / STORE_CODEC_FRAME_TEXT;
    free(t);
    return i;
}

static uint32_t le32_at(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Texts past 64 KiB are kept as frames of 2 KiB of text (schema 14,
 * codec 2) and read back whole by every reader, and by window in
 * snippets (the same snippet as from the whole text); a store of schema
 * 13 (such texts plain) is migrated and its long texts packed by the
 * tidy, stopped and gone on with; a damaged frame fails the reads that
 * need it, named, never read as other text, while a window of another
 * frame still reads; a damaged table of frames likewise.
 */
static void long_texts_in_frames(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    int64_t ids[LONG_TEXTS];
    add_tool_texts(f->s, "text-l", LONG_TEXTS, long_text, ids);
    const char *in_l = "message_id IN (SELECT message_id FROM messages WHERE sid = (SELECT sid "
                       "FROM sessions WHERE session_id = 'text-l'))";
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM message_body WHERE codec = 2 AND %s", in_l);
    assert_int_equal(raw_num(f->db, q), LONG_TEXTS);
    /* a fifth of the bytes or less, but text 6 (letters of 26) */
    snprintf(q, sizeof q,
             "SELECT count(*) FROM message_body WHERE length(text) * 5 > %d * 64 * 1000 AND %s",
             1500, in_l);
    assert_true(raw_num(f->db, q) <= 1);
    long_texts_read_back(f->s, ids);

    /* the store as version 13 kept it: long texts plain, packed by the tidy */
    store_close(f->s);
    f->s = NULL;
    texts_as_version_13(f->db, "codec = 2");
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    snprintf(q, sizeof q, "SELECT count(*) FROM message_body WHERE codec = 2 AND %s", in_l);
    assert_int_equal(raw_num(f->db, q), 0);
    long_texts_read_back(f->s, ids);
    int calls[2] = {0, 1};
    store_budget_set(f->s, 0, stop_after, calls);
    assert_int_equal(store_tidy(f->s), MCPAGE_ECANCELED);
    store_budget_clear(f->s);
    long_texts_read_back(f->s, ids);
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(raw_num(f->db, q), LONG_TEXTS);
    long_texts_read_back(f->s, ids);

    /* text 3: a byte of the frame with its middle word changed */
    int n = 0, codec = 0;
    unsigned char *v = body_get(f->db, ids[3], &n, &codec);
    assert_int_equal(codec, 2);
    size_t mid = long_mid_frame(3);
    size_t k = (le32_at(v + 4) - 8) / 4, a = mid ? le32_at(v + 16 + 4 * (mid - 1)) : 16 + 4 * k;
    v[a + (le32_at(v + 16 + 4 * mid) - a) / 2] ^= 0x10;
    body_put(f->db, ids[3], v, n);
    store_message m;
    assert_int_equal(store_message_get(f->s, ids[3], &m), MCPAGE_ESTORE);
    snprintf(q, sizeof q, "message text damaged: message %lld (codec 2,", (long long)ids[3]);
    assert_non_null(strstr(store_errmsg(f->s), q));
    assert_non_null(strstr(store_errmsg(f->s), "mcpage sync --rebuild"));
    char *snip = NULL;
    assert_int_equal(long_hit(f->s, "mid3word", ids[3], &snip), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), q));
    /* its last frame is whole: a snippet there reads */
    assert_int_equal(long_hit(f->s, "only3word", ids[3], &snip), 0);
    assert_non_null(strstr(snip, STORE_HIT_OPEN "only3word" STORE_HIT_CLOSE));
    free(snip);
    store_messages l;
    assert_int_equal(store_messages_from(f->s, "text-l", 0, 100, &l), MCPAGE_ESTORE);
    assert_int_equal(store_message_get(f->s, ids[2], &m), 0);
    store_message_clear(&m);
    free(v);
    /* text 4: where the frame with its middle word ends, in the table, changed */
    v = body_get(f->db, ids[4], &n, &codec);
    v[16 + 4 * long_mid_frame(4)] ^= 0x04;
    body_put(f->db, ids[4], v, n);
    free(v);
    assert_int_equal(store_message_get(f->s, ids[4], &m), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), "(codec 2,"));
    assert_int_equal(long_hit(f->s, "mid4word", ids[4], &snip), MCPAGE_ESTORE);
}

/* A text of one frame with a token map (about 45 KB, 9,000 tokens): rows
 * of a word of their own, an accented word and a number, then a last word. */
static char *mapped_text(int k)
{
    enum { ROWS = 1800 };
    char *t = malloc(ROWS * 48 + 32);
    size_t n = 0;
    for (int i = 0; i < ROWS; i++)
        n += (size_t)sprintf(t + n, "row%d_%05d naïve ok in %d ms\n", k, i, i % 97);
    sprintf(t + n, "end%dword", k);
    return t;
}

/* Every row of query's first page has the snippet cut from its whole text. */
static void page_snippets_agree(store *s, const char *query)
{
    store_search_filter sf = {.query = query};
    store_page pg = {.limit = 10};
    store_hits a, b;
    assert_int_equal(store_search(s, &sf, &pg, &a), 0);
    store_sqlite__snippet_whole = 1;
    assert_int_equal(store_search(s, &sf, &pg, &b), 0);
    store_sqlite__snippet_whole = 0;
    assert_true(a.count > 0);
    assert_int_equal(a.count, b.count);
    for (size_t i = 0; i < a.count; i++) {
        assert_int_equal(a.rows[i].message_id, b.rows[i].message_id);
        if (strcmp(a.rows[i].snippet, b.rows[i].snippet) != 0)
            fail_msg("query %s: window \"%s\", whole \"%s\"", query, a.rows[i].snippet,
                     b.rows[i].snippet);
        assert_non_null(strstr(a.rows[i].snippet, STORE_HIT_OPEN));
    }
    store_hits_free(&a);
    store_hits_free(&b);
}

/* The number of the first whole line of long text k in its frame i, or 0 past its end. */
static size_t long_line_in_frame(int k, size_t i)
{
    char *t = long_text(k);
    const char *p = i * STORE_CODEC_FRAME_TEXT < strlen(t)
                        ? strstr(t + i * STORE_CODEC_FRAME_TEXT, "\nline ")
                        : NULL;
    size_t line = p ? strtoul(p + 6, NULL, 10) : 0;
    free(t);
    return line;
}

/* The hits of `query` on a page of 10 (the error when it fails). */
static int hits_of(store *s, const char *query, store_hits *r)
{
    store_search_filter sf = {.query = query};
    store_page pg = {.limit = 10};
    return store_search(s, &sf, &pg, r);
}

/*
 * A snippet's window is read from the stored row: a text of one frame
 * (codec 1) decoded from its row, a text of several frames (codec 2) by
 * the frames its window reaches, the one holding its first byte first.
 * Snippets at the start, through the middle and at the end of each, and
 * across the ends of frames, are those cut from the whole text, and each
 * was cut from a window; a window inside one frame decodes that frame
 * only. A damaged frame fails the snippet that needs it, named, never
 * read as other text: in a text of one frame, and as the second frame a
 * window reaches.
 */
static void snippet_windows_read_their_frames(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    int64_t one[2], many[LONG_TEXTS];
    add_tool_texts(f->s, "text-m", 2, mapped_text, one);
    add_tool_texts(f->s, "text-l", LONG_TEXTS, long_text, many);
    assert_int_equal(raw_num(f->db, "SELECT count(*) FROM message_body b JOIN message_tokmap t "
                                    "USING (message_id) WHERE b.codec = 1"),
                     2);
    char q[64];
    int64_t windows = store_sqlite__snippet_windows;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 1800; i += i < 20 ? 1 : 37) {
            snprintf(q, sizeof q, "row%d_%05d", k, i);
            page_snippets_agree(f->s, q);
        }
        snprintf(q, sizeof q, "row%d_01799", k);
        page_snippets_agree(f->s, q);
        snprintf(q, sizeof q, "end%dword", k);
        page_snippets_agree(f->s, q);
    }
    /* the long texts: lines through one, every first line of a frame, the ends */
    for (size_t i = 0; i < 2500; i += 31) {
        snprintf(q, sizeof q, "%06zu", i);
        page_snippets_agree(f->s, q);
    }
    for (size_t i = 1; long_line_in_frame(1, i) > 0; i++) {
        snprintf(q, sizeof q, "%06zu", long_line_in_frame(1, i));
        page_snippets_agree(f->s, q);
    }
    for (int k = 0; k < LONG_TEXTS; k++) {
        snprintf(q, sizeof q, "only%dword", k);
        page_snippets_agree(f->s, q);
        snprintf(q, sizeof q, "mid%dword", k);
        page_snippets_agree(f->s, q);
    }
    /* every snippet above but the whole-text ones came from a window */
    assert_true(store_sqlite__snippet_windows - windows > 300);
    /* a window inside one frame decodes that one: 70 lines into frame 5
     * (its map entry at most 256 tokens, 24 lines, before it) */
    snprintf(q, sizeof q, "%06zu", long_line_in_frame(2, 5) + 70);
    int64_t frames = store_sqlite__snippet_frames;
    store_hits r;
    assert_int_equal(hits_of(f->s, q, &r), 0);
    assert_int_equal(r.count, 6); /* texts 0 to 5 have that line */
    assert_int_equal(store_sqlite__snippet_frames - frames, 6);
    store_hits_free(&r);

    /* one byte of text 1's frame changed: its snippets fail, named; text 0's read */
    int n = 0, codec = 0;
    unsigned char *v = body_get(f->db, one[1], &n, &codec);
    assert_int_equal(codec, 1);
    v[n / 2] ^= 0x10;
    body_put(f->db, one[1], v, n);
    free(v);
    char named[96];
    snprintf(named, sizeof named, "message text damaged: message %lld (codec 1,",
             (long long)one[1]);
    const char *const damaged[] = {"row1_00000", "row1_00900", "end1word"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(hits_of(f->s, damaged[i], &r), MCPAGE_ESTORE);
        assert_non_null(strstr(store_errmsg(f->s), named));
    }
    page_snippets_agree(f->s, "row0_00900");

    /* text 5's frame 7 changed: a window from frame 6 into it fails, named */
    size_t line = long_line_in_frame(5, 7);
    v = body_get(f->db, many[5], &n, &codec);
    assert_int_equal(codec, 2);
    size_t nf = (le32_at(v + 4) - 8) / 4, a = le32_at(v + 16 + 4 * 6);
    assert_true(nf > 8);
    v[a + (le32_at(v + 16 + 4 * 7) - a) / 2] ^= 0x10;
    body_put(f->db, many[5], v, n);
    free(v);
    snprintf(named, sizeof named, "message text damaged: message %lld (codec 2,",
             (long long)many[5]);
    snprintf(q, sizeof q, "%06zu", line);
    assert_int_equal(hits_of(f->s, q, &r), MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), named));
    /* a window in frame 5 of the same text still reads */
    snprintf(q, sizeof q, "%06zu", long_line_in_frame(5, 5) + 70);
    assert_int_equal(hits_of(f->s, q, &r), 0);
    char hit[96];
    snprintf(hit, sizeof hit, STORE_HIT_OPEN "%s" STORE_HIT_CLOSE, q);
    size_t seen = 0;
    for (size_t i = 0; i < r.count; i++)
        if (r.rows[i].message_id == many[5]) {
            assert_non_null(strstr(r.rows[i].snippet, hit));
            seen++;
        }
    assert_int_equal(seen, 1);
    store_hits_free(&r);
}

/* The crash test's texts: every 40th past 64 KiB (packed in frames), the rest 1-2 KB. */
static char *killed_tidy_text(int k)
{
    return k % 40 == 0 ? long_text(k / 40) : packed_text(k);
}

/* Copies a closed SQLite store file (no write-ahead log left). */
static void copy_store_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    assert_int_equal(fclose(b), 0);
}

/* A child: opens the store for writing (migrating it) and runs its tidy to the end. */
static void tidy_child(const char *db)
{
    store *s = NULL;
    if (store_open(db, STORE_OPEN_WRITE, &s) < 0)
        _exit(3);
    int rc = store_tidy(s);
    store_close(s);
    _exit(rc < 0 ? 4 : 0);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The tidy that packs an older store's plain texts (schema 13 and older
 * kept them so), killed with SIGKILL at random moments (1-3 times a
 * round), then run to its end: every text reads back as it was written,
 * each one packed, and the FTS5 index agrees with the texts
 * ('integrity-check'). MCPAGE_CRASH_SEED repeats a run.
 */
static void killed_tidy_packs_to_the_same_texts(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    enum { KT = 240 };
    int64_t ids[KT];
    add_tool_texts(f->s, "text-k", KT, killed_tidy_text, ids);
    store_close(f->s);
    f->s = NULL;
    /* every text plain, as schema 13 and older left them: the migration to
     * 14 starts the packing over */
    texts_as_version_13(f->db, "codec != 0");
    const char *in_k = "message_id IN (SELECT message_id FROM messages WHERE sid = (SELECT sid "
                       "FROM sessions WHERE session_id = 'text-k'))";
    char plain_q[512];
    snprintf(plain_q, sizeof plain_q,
             "SELECT count(*) FROM message_body WHERE codec = 0 AND length(text) >= 64 AND %s",
             in_k);
    int64_t plain = file_int(f->db, plain_q);
    assert_true(plain > KT / 2);
    char base[1300], crash[1300];
    snprintf(base, sizeof base, "%s/plain-base.db", f->dir);
    copy_store_file(f->db, base);

    /* one clean run, for its length */
    snprintf(crash, sizeof crash, "%s/tidy-clean.db", f->dir);
    copy_store_file(base, crash);
    double t0 = mono_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        tidy_child(crash);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    double clean_s = mono_s() - t0;
    int64_t packed_plain = file_int(crash, plain_q); /* texts zstd does not shrink stay plain */
    assert_true(packed_plain < plain / 4);

    unsigned seed = (unsigned)getpid();
    const char *env = getenv("MCPAGE_CRASH_SEED");
    if (env)
        seed = (unsigned)strtoul(env, NULL, 10);
    srand(seed);
    int kills = 0, halfway = 0;
    for (int round = 0; round < 4; round++) {
        snprintf(crash, sizeof crash, "%s/tidy-crash%d.db", f->dir, round);
        copy_store_file(base, crash);
        int times = 1 + rand() % 3;
        for (int k = 0; k < times; k++) {
            pid = fork();
            assert_true(pid >= 0);
            if (pid == 0)
                tidy_child(crash);
            usleep((useconds_t)((double)rand() / RAND_MAX * clean_s * 0.9 * 1e6 / (k + 1)));
            kill(pid, SIGKILL);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (WIFSIGNALED(status))
                kills++;
        }
        int64_t left = file_int(crash, plain_q); /* the kills left the packing half done */
        halfway += left > packed_plain && left < plain;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            tidy_child(crash);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            fail_msg("round %d (seed %u): the tidy after kills failed (%d)", round, seed, status);
        store *s = NULL;
        assert_int_equal(store_open(crash, STORE_OPEN_WRITE, &s), 0);
        for (int k = 0; k < KT; k++) {
            char *want = killed_tidy_text(k);
            store_message m;
            if (store_message_get(s, ids[k], &m) != 0)
                fail_msg("round %d (seed %u): message %d: %s", round, seed, k, store_errmsg(s));
            if (strcmp(m.text, want) != 0)
                fail_msg("round %d (seed %u): message %d differs after kills", round, seed, k);
            store_message_clear(&m);
            free(want);
        }
        char *err = NULL;
        if (sqlite3_exec(CONN(s)->db,
                         "INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')", NULL,
                         NULL, &err) != SQLITE_OK)
            fail_msg("round %d (seed %u): FTS5 integrity-check: %s", round, seed, err);
        store_close(s);
        if (file_int(crash, plain_q) != packed_plain)
            fail_msg("round %d (seed %u): %lld texts left plain, a clean tidy leaves %lld", round,
                     seed, (long long)file_int(crash, plain_q), (long long)packed_plain);
    }
    print_message("tidy crash test: %d kills, %d of 4 rounds left half packed (seed %u, clean "
                  "tidy %.2f s)\n",
                  kills, halfway, seed, clean_s);
    assert_true(kills > 0);
}

/*
 * A new store gives its free pages back (auto_vacuum incremental): once
 * more than a sixteenth of its pages are free, store_tidy vacuums them
 * and the file shrinks (below that it leaves them for the next sync).
 */
static void free_pages_given_back(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_SQLITE) {
        skip();
        return;
    }
    assert_int_equal(file_int(f->db, "SELECT * FROM pragma_auto_vacuum"), 2);
    put_session(f->s, "free-l");
    size_t n = 4u << 20;
    unsigned char *src = malloc(n);
    uint32_t x = 99;
    for (size_t i = 0; i < n; i++, x = x * 1103515245u + 12345u)
        src[i] = (unsigned char)(x >> 16); /* noise: kept plain */
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_raw_append(f->s, "free-l", src, n, 10), 0);
    assert_int_equal(store_commit(f->s), 0);
    free(src);
    assert_int_equal(store_tidy(f->s), 0);
    int64_t pages = file_int(f->db, "SELECT * FROM pragma_page_count");
    raw_sql(f->db,
            "DELETE FROM raw_chunks WHERE sid = (SELECT sid FROM sessions WHERE session_id = "
            "'free-l')",
            "");
    int64_t freed = file_int(f->db, "SELECT * FROM pragma_freelist_count");
    assert_true(freed * 16 > pages && freed >= 256); /* 4 MiB of 16 KiB pages */
    assert_int_equal(store_tidy(f->s), 0);
    assert_int_equal(file_int(f->db, "SELECT * FROM pragma_freelist_count"), 0);
    assert_int_equal(file_int(f->db, "SELECT * FROM pragma_page_count"), pages - freed);
}

static void activity_buckets(void **state)
{
    fixture *f = *state;
    store_activity a;
    store_activity_filter flt = {.bucket = STORE_BUCKET_MONTH};
    assert_int_equal(store_activity_get(f->s, &flt, 1000, &a), 0);
    int64_t sum = 0;
    for (size_t i = 0; i < a.count; i++) {
        sum += a.rows[i].messages;
        assert_int_equal(strlen(a.rows[i].bucket), 10);
        assert_string_equal(a.rows[i].bucket + 7, "-01");
    }
    store_stats st;
    assert_int_equal(store_stats_get(f->s, &st), 0);
    assert_int_equal(sum, st.messages);
    store_activity_free(&a);
    flt = (store_activity_filter){.bucket = STORE_BUCKET_WEEK, .project = "proj0"};
    assert_int_equal(store_activity_get(f->s, &flt, 1000, &a), 0);
    assert_true(a.count > 0);
    assert_string_equal(a.rows[0].project, "proj0");
    store_activity_free(&a);
    flt.bucket = STORE_BUCKET_DAY;
    flt.project = NULL;
    assert_int_equal(store_activity_get(f->s, &flt, 2, &a), MCPAGE_ERANGE);
}

/* Two folders with the same last name are two projects: the second gets
 * its parent in its name, and a name (or a path) selects exactly one, in
 * session lists, search and the activity map. An archive made before
 * (same names) is renamed when opened. */
/* A project's totals after each session's refresh: its sources in name
 * order whatever order they came in, the sessions without messages
 * counted but without times. And every source record of a machine, read
 * back whole and in path order past the blocks their strings are packed
 * in (SQLite: 256 KiB). */
static void project_totals_and_source_records(void **state)
{
    fixture *f = *state;
    store *s = f->s;
    int64_t pid = 0;
    assert_int_equal(store_begin(s), 0);
    assert_int_equal(store_project_ensure(s, "/home/u/totals", "totals", &pid), 0);
    static const char *const sources[] = {"codex", "aider", "claude", "codex"};
    for (int k = 0; k < 4; k++) {
        char sid[32], ts[40];
        snprintf(sid, sizeof sid, "tot-%d", k);
        store_session_meta m = {.session_id = sid, .source = sources[k], .project_id = pid};
        assert_int_equal(store_session_put(s, &m), 0);
        for (int i = 0; k < 3 && i <= k; i++) { /* tot-3: no message, no time */
            snprintf(ts, sizeof ts, "2025-03-%02dT10:00:00Z", 10 - 3 * k + i);
            store_message msg = {.session_id = sid,
                                 .ordinal = i,
                                 .role = "user",
                                 .timestamp = ts,
                                 .text = "totals",
                                 .line_no = i + 1};
            int64_t id = 0;
            assert_int_equal(store_message_add(s, &msg, &id), 0);
        }
        assert_int_equal(store_session_refresh(s, sid), 0);
    }
    enum { NSRC = 3000 };
    char path[300];
    for (int i = 0; i < NSRC; i++) {
        int k = (i * 7919) % NSRC; /* not in path order */
        snprintf(path, sizeof path, "/home/u/.claude/projects/%0200d/s-%04d.jsonl", k % 7, k);
        store_source src = {.hostname = "box",
                            .path = path,
                            .session_id = "tot-0",
                            .size = k,
                            .inode = k + 1,
                            .mtime_ns = (int64_t)k * 1000000000,
                            .consumed = k};
        assert_int_equal(store_source_put(s, &src), 0);
    }
    store_source other = {.hostname = "other", .path = "/x.jsonl", .session_id = "tot-1"};
    assert_int_equal(store_source_put(s, &other), 0);
    assert_int_equal(store_commit(s), 0);

    store_project_filter flt = {.name_contains = "totals"};
    store_page pg = {.limit = 10};
    store_projects l;
    assert_int_equal(store_projects_list(s, &flt, &pg, &l), 0);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.rows[0].sources, "aider,claude,codex");
    assert_int_equal(l.rows[0].session_count, 4);
    assert_int_equal(l.rows[0].message_count, 6);
    assert_string_equal(l.rows[0].first_activity, "2025-03-04T10:00:00Z");
    assert_string_equal(l.rows[0].last_activity, "2025-03-10T10:00:00Z");
    store_projects_free(&l);

    store_sources known;
    assert_int_equal(store_sources_all(s, "box", NSRC, &known), 0);
    assert_int_equal(known.count, NSRC);
    for (size_t i = 0; i < known.count; i++) {
        const store_source *r = &known.rows[i];
        int k = atoi(strrchr(r->path, '-') + 1);
        snprintf(path, sizeof path, "/home/u/.claude/projects/%0200d/s-%04d.jsonl", k % 7, k);
        assert_string_equal(r->path, path);
        assert_string_equal(r->session_id, "tot-0");
        assert_true(r->size == k && r->inode == k + 1 && r->consumed == k);
        assert_true(r->mtime_ns == (int64_t)k * 1000000000);
        if (i > 0)
            assert_true(strcmp(known.rows[i - 1].path, r->path) < 0);
    }
    store_sources_free(&known);
    assert_int_equal(store_sources_all(s, "box", NSRC - 1, &known), MCPAGE_ERANGE);
    store_sources_free(&known);
}

static void same_named_projects_stay_apart(void **state)
{
    fixture *f = *state;
    char buf[256];
    store_project_name_try("/srv/b/project", "project", 0, buf, sizeof buf);
    assert_string_equal(buf, "project");
    store_project_name_try("/srv/b/project", "project", 1, buf, sizeof buf);
    assert_string_equal(buf, "project (srv/b)");
    store_project_name_try("/home/u/srv/b/project/", "project", 1, buf, sizeof buf);
    assert_string_equal(buf, "project (srv/b)");
    store_project_name_try("/home/u/srv/b/project", "project", 2, buf, sizeof buf);
    assert_string_equal(buf, "project (u/srv/b)");
    store_project_name_try("/b/project", "project", 1, buf, sizeof buf);
    assert_string_equal(buf, "project (b)");
    store_project_name_try("/b/project", "project", 2, buf, sizeof buf);
    assert_string_equal(buf, "project (b) 2");
    store_project_name_try("/project", "project", 1, buf, sizeof buf);
    assert_string_equal(buf, "project 2");
    store_project_name_try("-home-a-x", "-home-a-x", 1, buf, sizeof buf);
    assert_string_equal(buf, "-home-a-x 2");

    int64_t home = 0, srv = 0, deep = 0, root = 0, again = 0;
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_project_ensure(f->s, "/home/u/proj0", "proj0", &home), 0);
    assert_int_equal(store_project_ensure(f->s, "/srv/b/proj0", "proj0", &srv), 0);
    assert_int_equal(store_project_ensure(f->s, "/x/srv/b/proj0", "proj0", &deep), 0);
    assert_int_equal(store_project_ensure(f->s, "/proj0", "proj0", &root), 0);
    assert_int_equal(store_project_ensure(f->s, "/srv/b/proj0", "proj0", &again), 0);
    assert_int_equal(again, srv);
    assert_true(home != srv && srv != deep && deep != root);
    store_session_meta m = {.session_id = "srv-b-1", .source = "claude", .project_id = srv};
    assert_int_equal(store_session_put(f->s, &m), 0);
    store_message msg = {.session_id = "srv-b-1",
                         .ordinal = 0,
                         .role = "user",
                         .timestamp = "2025-03-01T10:00:00Z",
                         .text = "alpha in the other folder",
                         .line_no = 1};
    int64_t mid = 0;
    assert_int_equal(store_message_add(f->s, &msg, &mid), 0);
    assert_int_equal(store_session_refresh(f->s, "srv-b-1"), 0);
    assert_int_equal(store_commit(f->s), 0);

    store_page pg = {.limit = 100};
    store_sessions l;
    store_session_filter sf = {.project = "proj0"};
    assert_int_equal(store_sessions_list(f->s, &sf, &pg, &l), 0);
    assert_int_equal(l.count, 15);
    for (size_t i = 0; i < l.count; i++)
        assert_string_equal(l.rows[i].project, "proj0");
    store_sessions_free(&l);
    const char *one[] = {"proj0 (srv/b)", "/srv/b/proj0"};
    for (int k = 0; k < 2; k++) {
        sf.project = one[k];
        assert_int_equal(store_sessions_list(f->s, &sf, &pg, &l), 0);
        assert_int_equal(l.count, 1);
        assert_string_equal(l.rows[0].session_id, "srv-b-1");
        assert_string_equal(l.rows[0].project, "proj0 (srv/b)");
        store_sessions_free(&l);
    }
    store_hits h;
    store_search_filter qf = {.query = "alpha", .project = "proj0 (srv/b)"};
    assert_int_equal(store_search(f->s, &qf, &pg, &h), 0);
    assert_int_equal(h.count, 1);
    assert_string_equal(h.rows[0].session_id, "srv-b-1");
    store_hits_free(&h);
    qf.project = "proj0";
    assert_int_equal(store_search(f->s, &qf, &pg, &h), 0);
    assert_true(h.count > 0);
    for (size_t i = 0; i < h.count; i++)
        assert_string_not_equal(h.rows[i].session_id, "srv-b-1");
    store_hits_free(&h);
    store_activity a;
    store_activity_filter af = {.bucket = STORE_BUCKET_MONTH, .project = "proj0"};
    assert_int_equal(store_activity_get(f->s, &af, 1000, &a), 0);
    for (size_t i = 0; i < a.count; i++)
        assert_int_equal(a.rows[i].project_id, home);
    store_activity_free(&a);

    if (tb_current() != TB_SQLITE)
        return;
    /* an archive of the schema before: both named "proj0" */
    store_close(f->s);
    f->s = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE projects SET name = 'proj0' WHERE path = '/srv/b/proj0'; DELETE FROM "
             "schema_version WHERE version >= 7;");
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &f->s), 0);
    sf.project = "proj0 (srv/b)";
    assert_int_equal(store_sessions_list(f->s, &sf, &pg, &l), 0);
    assert_int_equal(l.count, 1);
    store_sessions_free(&l);
    sf.project = "proj0";
    assert_int_equal(store_sessions_list(f->s, &sf, &pg, &l), 0);
    assert_int_equal(l.count, 15);
    store_sessions_free(&l);
}

static void stats_and_a_concurrent_reader(void **state)
{
    fixture *f = *state;
    store_stats st;
    assert_int_equal(store_stats_get(f->s, &st), 0);
    assert_int_equal(st.projects, 4);
    assert_int_equal(st.sessions, 60);
    assert_true(st.messages > 400);
    assert_true(st.size_bytes > 0);
    assert_int_equal(st.raw_bytes, 600);
    store *r = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &r), 0);
    assert_int_equal(store_begin(f->s), 0); /* the writer holds a transaction */
    store_message m = {
        .session_id = "sess-0-01", .ordinal = 100, .role = "user", .text = "yankee", .line_no = 1};
    int64_t id;
    assert_int_equal(store_message_add(f->s, &m, &id), 0);
    store_stats rs;
    assert_int_equal(store_stats_get(r, &rs), 0); /* the reader is not blocked */
    assert_int_equal(rs.messages, st.messages);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_stats_get(r, &rs), 0);
    assert_int_equal(rs.messages, st.messages + 1);
    assert_int_equal(store_begin(r), MCPAGE_ESTATE); /* readers do not write */
    store_close(r);
    assert_int_equal(store_open("/nonexistent/dir/x.db", STORE_OPEN_READONLY, &r),
                     MCPAGE_ENOTFOUND);
    /* nothing listens on port 1: a clear "unavailable" error, not a crash */
    char err[600];
    assert_int_equal(
        store_open_msg("postgres://127.0.0.1:1/x", STORE_OPEN_READONLY, &r, err, sizeof err),
        MCPAGE_ESTORE);
    assert_non_null(strstr(err, "the store is unavailable ("));
    assert_non_null(strstr(err, "retry shortly"));
}

typedef struct ended_seen {
    int n;
    uint8_t keys[8][STORE_ENDED_KEY_LEN];
    int64_t until[8];
} ended_seen;

static void ended_note(void *ctx, const uint8_t *key, int64_t until)
{
    ended_seen *e = ctx;
    assert_true(e->n < 8);
    memcpy(e->keys[e->n], key, STORE_ENDED_KEY_LEN);
    e->until[e->n++] = until;
}

/* HTTP sessions ended with DELETE: on PostgreSQL a reader records them and
 * every other reader sees them, by lookup and by polling from a position;
 * expired ends are neither; SQLite keeps no shared record. */
static void ended_sessions_are_shared(void **state)
{
    fixture *f = *state;
    store *a = NULL, *b = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &a), 0);
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &b), 0);
    uint8_t k1[STORE_ENDED_KEY_LEN], k2[STORE_ENDED_KEY_LEN], k3[STORE_ENDED_KEY_LEN];
    for (int i = 0; i < STORE_ENDED_KEY_LEN; i++) {
        k1[i] = (uint8_t)(i * 17 + 1);
        k2[i] = (uint8_t)(255 - i);
        k3[i] = (uint8_t)(i == 0 ? 0 : 0xf0);
    }
    int64_t now = (int64_t)time(NULL), mark = 0;
    ended_seen seen = {0};
    assert_int_equal(store_ended_since(b, &mark, ended_note, &seen), 0);
    assert_int_equal(seen.n, 0); /* the first poll only sets the position */
    assert_int_equal(store_ended_record(a, k1, now + 3600), 0);
    assert_int_equal(store_ended_record(a, k1, now + 3600), 0); /* twice is once */
    assert_int_equal(store_ended_record(a, k3, now - 5), 0);    /* already expired */
    bool ended = true;
    assert_int_equal(store_ended_lookup(b, k1, &ended), 0);
    int shared = tb_current() == TB_POSTGRES;
    assert_int_equal(ended, shared);
    assert_int_equal(store_ended_lookup(b, k2, &ended), 0);
    assert_int_equal(ended, 0);
    assert_int_equal(store_ended_lookup(b, k3, &ended), 0);
    assert_int_equal(ended, 0);
    assert_int_equal(store_ended_since(b, &mark, ended_note, &seen), 0);
    if (shared) {
        assert_int_equal(seen.n, 1);
        assert_memory_equal(seen.keys[0], k1, STORE_ENDED_KEY_LEN);
        assert_int_equal(seen.until[0], now + 3600);
        assert_true(mark > 0);
    } else {
        assert_int_equal(seen.n, 0);
    }
    /* A later end is reported from the position (ends may repeat, none is missed). */
    seen.n = 0;
    assert_int_equal(store_ended_record(b, k2, now + 60), 0);
    assert_int_equal(store_ended_since(a, &mark, ended_note, &seen), 0);
    int found = 0;
    for (int i = 0; i < seen.n; i++)
        found += memcmp(seen.keys[i], k2, STORE_ENDED_KEY_LEN) == 0;
    assert_int_equal(found, shared);
    /* The writer's handle records too. */
    assert_int_equal(store_ended_lookup(f->s, k2, &ended), 0);
    assert_int_equal(ended, shared);
    store_close(a);
    store_close(b);
}

/* PostgreSQL: a connection the server drops (a restart, a failover, an
 * idle timeout) is repaired on the next call, on the same handle; the
 * pool hands out connections that work; an outage inside a transaction is
 * a clear "unavailable" error, and the handle works again afterwards. */
static void lost_connections_recover(void **state)
{
    fixture *f = *state;
    if (tb_current() != TB_POSTGRES) {
        skip();
        return;
    }
    store *r = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_READONLY, &r), 0);
    int64_t n0 = 0, n1 = 0;
    assert_int_equal(store_sessions_count(r, NULL, &n0), 0);
    assert_int_equal(store_ping(r), 0);
    /* the server ends the store's connections */
    PGconn *admin = PQconnectdb(getenv("MCPAGE_TEST_PG"));
    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    char kill[200]; /* only this process's connections: other tests run at once */
    snprintf(kill, sizeof kill,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
             "application_name = 'tb%ld'",
             (long)getpid());
    PGresult *res = PQexec(admin, kill);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    assert_true(atoi(PQgetvalue(res, 0, 0)) >= 2); /* the reader and the writer */
    PQclear(res);
    assert_int_equal(store_sessions_count(r, NULL, &n1), 0); /* reconnected, retried */
    assert_int_equal(n1, n0);
    /* inside a transaction nothing is replayed: the write fails clearly */
    assert_int_equal(store_begin(f->s), 0);
    res = PQexec(admin, kill);
    PQclear(res);
    store_message m = {
        .session_id = "sess-0-02", .ordinal = 100, .role = "user", .text = "xray", .line_no = 1};
    int64_t id;
    int rc = store_message_add(f->s, &m, &id); /* buffered: the commit sends it */
    if (rc == 0)
        rc = store_commit(f->s);
    assert_int_equal(rc, MCPAGE_ESTORE);
    assert_non_null(strstr(store_errmsg(f->s), "the store is unavailable ("));
    assert_int_equal(store_rollback(f->s), 0);
    /* the next transaction works on the same handle */
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_message_add(f->s, &m, &id), 0);
    assert_int_equal(store_commit(f->s), 0);
    store_search_filter q = {.query = "xray"};
    assert_int_equal(hits(r, &q), 1);
    PQfinish(admin);
    store_close(r);
}

/* ---- owners on a shared store (issue 32) ----------------------------- */

/* Gives sess-P-K the owner alice@a (odd K) or bob@b (even K), and adds
 * one session without an owner (as a store synced before owners). */
static void give_owners(store *s)
{
    assert_int_equal(store_begin(s), 0);
    for (int p = 0; p < 4; p++)
        for (int k = 0; k < 15; k++) {
            char sid[64];
            snprintf(sid, sizeof sid, "sess-%d-%02d", p, k);
            store_session_meta m = {.session_id = sid, .owner = (k % 2) ? "alice@a" : "bob@b"};
            assert_int_equal(store_session_put(s, &m), 0);
        }
    /* an owner is set once: a later sync by someone else does not take it */
    store_session_meta steal = {.session_id = "sess-0-01", .owner = "mallory@m"};
    assert_int_equal(store_session_put(s, &steal), 0);
    store_session_meta none = {.session_id = "sess-none", .source = "claude", .source_path = "/x"};
    assert_int_equal(store_session_put(s, &none), 0);
    store_message msg = {.session_id = "sess-none",
                         .ordinal = 0,
                         .role = "user",
                         .timestamp = "2025-01-01T00:00:00Z",
                         .text = "alpha unowned",
                         .line_no = 1,
                         .byte_length = 1};
    int64_t id = 0;
    assert_int_equal(store_message_add(s, &msg, &id), 0);
    assert_int_equal(store_session_refresh(s, "sess-none"), 0);
    assert_int_equal(store_commit(s), 0);
}

static void view_as(store *s, const char *const *owners, size_t nowners,
                    const char *const *projects, size_t nprojects)
{
    store_viewer v = {owners, nowners, projects, nprojects};
    assert_int_equal(store_viewer_set(s, &v), 0);
}

static int64_t count_sessions(store *s, const char *project)
{
    store_session_filter flt = {.project = project};
    int64_t n = -1;
    assert_int_equal(store_sessions_count(s, &flt, &n), 0);
    return n;
}

static int64_t count_hits(store *s, const char *query, int by_session, store_search_sort sort)
{
    store_search_filter flt = {.query = query, .by_session = by_session, .sort = sort};
    int64_t n = -1;
    assert_int_equal(store_search_count(s, &flt, &n), 0);
    return n;
}

/* store_session_key: another owner's id is keyed, one's own and an
 * unowned one are not; a long id keeps its bytes and a hash, distinct. */
static void session_keys_per_owner(void **state)
{
    fixture *f = *state;
    give_owners(f->s);
    store *s = f->s;
    char key[STORE_ID_MAX + 1];
    assert_int_equal(store_session_key(s, "alice@a", "sess-0-01", key), 0);
    assert_string_equal(key, "sess-0-01"); /* hers */
    assert_int_equal(store_session_key(s, "alice@a", "sess-0-02", key), 0);
    assert_string_equal(key, "sess-0-02@alice@a"); /* bob's */
    assert_int_equal(store_session_key(s, "alice@a", "sess-none", key), 0);
    assert_string_equal(key, "sess-none"); /* nobody's */
    assert_int_equal(store_session_key(s, "alice@a", "sess-new", key), 0);
    assert_string_equal(key, "sess-new");
    assert_int_equal(store_session_key(s, NULL, "sess-0-02", key), 0);
    assert_string_equal(key, "sess-0-02");
    assert_int_equal(store_session_key(s, "not an owner", "sess-0-02", key), MCPAGE_EINVAL);

    /* ids of STORE_ID_MAX bytes that differ in their last byte, bob's */
    char a[STORE_ID_MAX + 1], b[STORE_ID_MAX + 1], ka[STORE_ID_MAX + 1], kb[STORE_ID_MAX + 1];
    memset(a, 'x', STORE_ID_MAX);
    a[STORE_ID_MAX] = 0;
    memcpy(b, a, sizeof b);
    b[STORE_ID_MAX - 1] = 'y';
    assert_int_equal(store_begin(s), 0);
    for (int i = 0; i < 2; i++) {
        store_session_meta m = {.session_id = i ? b : a, .owner = "bob@b"};
        assert_int_equal(store_session_put(s, &m), 0);
    }
    assert_int_equal(store_commit(s), 0);
    assert_int_equal(store_session_key(s, "carol@c", a, ka), 0);
    assert_int_equal(store_session_key(s, "carol@c", b, kb), 0);
    assert_int_equal(strlen(ka), STORE_ID_MAX);
    assert_int_equal(strncmp(ka, a, 100), 0);
    assert_string_equal(ka + STORE_ID_MAX - 8, "@carol@c");
    assert_string_not_equal(ka, kb);
    assert_int_equal(store_session_key(s, "carol@c", a, kb), 0);
    assert_string_equal(ka, kb); /* the same id, the same key */

    /* the key itself held by a third owner: refused, not shared */
    assert_int_equal(store_begin(s), 0);
    store_session_meta m = {.session_id = "sess-0-02@alice@a", .owner = "mallory@m"};
    assert_int_equal(store_session_put(s, &m), 0);
    assert_int_equal(store_commit(s), 0);
    assert_int_equal(store_session_key(s, "alice@a", "sess-0-02", key), MCPAGE_EINVAL);
}

static void owners_see_their_own_sessions(void **state)
{
    fixture *f = *state;
    give_owners(f->s);
    store *s = f->s;
    static const char *const alice[] = {"alice@a"}, *const bob[] = {"bob@b"},
                             *const both[] = {"alice@a", "bob@b"},
                             *const shared[] = {"proj1", "/home/u/proj3", "no-such-project"};
    /* without a viewer: everything, the unowned session too */
    assert_int_equal(count_sessions(s, NULL), 61);
    int64_t all_hits = count_hits(s, "alpha", 0, STORE_SEARCH_RELEVANCE);

    /* alice: her 28 sessions (odd K), walked every way, and nothing else */
    view_as(s, alice, 1, NULL, 0);
    store_session_filter flt = {0};
    assert_int_equal(check_walks(s, &flt, sessions_page, sessions_total, 5), 28);
    for (size_t i = 0; i < 28; i++)
        assert_true((all_ids[i][strlen(all_ids[i]) - 1] - '0') % 2 == 1);
    flt.order = STORE_OLDEST;
    flt.project = "proj2";
    assert_int_equal(check_walks(s, &flt, sessions_page, sessions_total, 3), 7);
    /* her projects count her sessions only */
    store_project_filter pf = {0};
    for (int sort = STORE_PROJECTS_RECENT; sort <= STORE_PROJECTS_SIZE; sort++) {
        pf.sort = (store_project_sort)sort;
        assert_int_equal(check_walks(s, &pf, projects_page, projects_total, 1), 4);
    }
    store_page pg = {.limit = 10};
    store_projects pl;
    assert_int_equal(store_projects_list(s, NULL, &pg, &pl), 0);
    assert_int_equal(pl.count, 4);
    for (size_t i = 0; i < pl.count; i++)
        assert_int_equal(pl.rows[i].session_count, 7);
    store_projects_free(&pl);
    /* search: pages and totals, plain and by session, every sort */
    int64_t alice_hits = 0;
    for (int sort = STORE_SEARCH_RELEVANCE; sort <= STORE_SEARCH_OLDEST; sort++) {
        store_search_filter sf = {.query = "alpha", .sort = (store_search_sort)sort};
        size_t n = check_walks(s, &sf, hits_page, hits_total, 7);
        assert_true(n > 0 && (int64_t)n < all_hits);
        alice_hits = (int64_t)n;
        sf.by_session = 1;
        assert_int_equal(check_walks(s, &sf, hits_page, hits_total, 4), 28);
        store_hits hl;
        store_page hp = {.limit = 100};
        sf.by_session = 0;
        assert_int_equal(store_search(s, &sf, &hp, &hl), 0);
        for (size_t i = 0; i < hl.count; i++)
            assert_true((hl.rows[i].session_id[strlen(hl.rows[i].session_id) - 1] - '0') % 2);
        store_hits_free(&hl);
    }
    /* another owner's session reads as a missing one, every way in */
    store_session one;
    assert_int_equal(store_session_get(s, "sess-0-00", &one), MCPAGE_ENOTFOUND);
    assert_int_equal(store_session_get(s, "sess-none", &one), MCPAGE_ENOTFOUND);
    assert_int_equal(store_session_get(s, "sess-0-01", &one), 0);
    store_session_clear(&one);
    store_messages ml;
    assert_int_equal(store_messages_from(s, "sess-0-00", 0, 10, &ml), MCPAGE_ENOTFOUND);
    assert_int_equal(store_messages_from(s, "sess-0-01", 0, 10, &ml), 0);
    assert_true(ml.count > 0);
    int64_t her_message = ml.rows[0].message_id;
    store_messages_free(&ml);
    unsigned char *buf = NULL;
    size_t nb = 0;
    int64_t total = 0;
    assert_int_equal(store_raw_read(s, "sess-0-00", 0, 10, &buf, &nb, &total), MCPAGE_ENOTFOUND);
    assert_int_equal(store_raw_read(s, "sess-0-01", 0, 10, &buf, &nb, &total), 0);
    assert_int_equal(nb, 10);
    free(buf);
    store_session_summary sum;
    assert_int_equal(store_session_summary_get(s, "sess-0-00", &sum), MCPAGE_ENOTFOUND);
    store_message m;
    assert_int_equal(store_message_get(s, her_message, &m), 0);
    store_message_clear(&m);
    /* activity adds up her messages only */
    store_activity_filter af = {.bucket = STORE_BUCKET_MONTH};
    store_activity act;
    assert_int_equal(store_activity_get(s, &af, 1000, &act), 0);
    int64_t alice_msgs = 0;
    for (size_t i = 0; i < act.count; i++)
        alice_msgs += act.rows[i].messages;
    store_activity_free(&act);

    /* bob: his 32, and alice's hits plus his and the unowned one are all of them */
    view_as(s, bob, 1, NULL, 0);
    assert_int_equal(count_sessions(s, NULL), 32);
    assert_int_equal(store_message_get(s, her_message, &m), MCPAGE_ENOTFOUND);
    int64_t bob_hits = count_hits(s, "alpha", 0, STORE_SEARCH_NEWEST);
    assert_int_equal(alice_hits + bob_hits + 1, all_hits);
    assert_int_equal(count_hits(s, "alpha", 1, STORE_SEARCH_RELEVANCE), 32);
    assert_int_equal(store_activity_get(s, &af, 1000, &act), 0);
    int64_t bob_msgs = 0;
    for (size_t i = 0; i < act.count; i++)
        bob_msgs += act.rows[i].messages;
    store_activity_free(&act);

    /* a shared project is seen whole; a name that is no project adds nothing */
    view_as(s, alice, 1, shared, 3);
    assert_int_equal(count_sessions(s, NULL), 28 + 8 + 8);
    assert_int_equal(count_sessions(s, "proj1"), 15);
    assert_int_equal(count_sessions(s, "proj0"), 7);
    flt = (store_session_filter){0};
    assert_int_equal(check_walks(s, &flt, sessions_page, sessions_total, 6), 44);
    assert_int_equal(store_session_get(s, "sess-1-00", &one), 0);
    store_session_clear(&one);

    /* two owners (one person's two machines); then everything again */
    view_as(s, both, 2, NULL, 0);
    assert_int_equal(count_sessions(s, NULL), 60);
    assert_int_equal(count_hits(s, "alpha", 0, STORE_SEARCH_OLDEST), all_hits - 1);
    assert_int_equal(store_viewer_set(s, NULL), 0);
    assert_int_equal(count_sessions(s, NULL), 61);
    assert_int_equal(store_activity_get(s, &af, 1000, &act), 0);
    int64_t all_msgs = 0;
    for (size_t i = 0; i < act.count; i++)
        all_msgs += act.rows[i].messages;
    store_activity_free(&act);
    assert_int_equal(alice_msgs + bob_msgs, all_msgs); /* the unowned session has no project */

    /* names that are not owners are refused */
    static const char *const bad[] = {"a|b"};
    store_viewer v = {bad, 1, NULL, 0};
    assert_int_equal(store_viewer_set(s, &v), MCPAGE_EINVAL);
    assert_int_equal(count_sessions(s, NULL), 61);
    assert_true(store_owner_valid("alice@laptop.local"));
    assert_false(store_owner_valid("alice laptop"));
    assert_false(store_owner_valid(""));
    char def[STORE_OWNER_MAX + 1];
    store_owner_default(def, sizeof def);
    assert_true(store_owner_valid(def));
    assert_non_null(strchr(def, '@'));
}

int main(void)
{
    all_ids = calloc(MAXROWS, 80);
    page_ids = calloc(MAXROWS, 80);
    page_keys = calloc(MAXROWS, sizeof *page_keys);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(session_walks_agree_with_offsets_and_counts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sessions_newest_are_ordered_by_start_then_id, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(project_walks_in_every_sort, setup, teardown),
        cmocka_unit_test_setup_teardown(search_walks_in_every_sort, setup, teardown),
        cmocka_unit_test_setup_teardown(search_syntax_and_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(tool_output_ranks_after_the_words, setup, teardown),
        cmocka_unit_test_setup_teardown(dev_words_are_split_and_stemmed, setup, teardown),
        cmocka_unit_test_setup_teardown(own_stem_word_alone_until_its_class_is_indexed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(search_grouped_by_session, setup, teardown),
        cmocka_unit_test_setup_teardown(old_stores_are_indexed_again, setup, teardown),
        cmocka_unit_test_setup_teardown(last_version_stores_are_indexed_again, setup, teardown),
        cmocka_unit_test_setup_teardown(snippets_are_cut_around_the_best_matches, setup, teardown),
        cmocka_unit_test_setup_teardown(long_text_snippets_read_a_window, setup, teardown),
        cmocka_unit_test_setup_teardown(token_maps_from_the_index_match_the_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(token_stream_is_pinned, setup, teardown),
        cmocka_unit_test_setup_teardown(fts_settings_are_the_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(counted_rare_words_take_one_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_ranks_are_bm25, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_impact_lists_are_bm25, setup, teardown),
        cmocka_unit_test_setup_teardown(rejected_queries_have_their_own_error, setup, teardown),
        cmocka_unit_test_setup_teardown(query_terms_are_deduplicated_and_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_lengths_kept_by_the_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_impact_lists_kept_by_the_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_heads_kept_by_the_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(tidy_on_two_threads_keeps_what_one_keeps, setup, teardown),
        cmocka_unit_test_setup_teardown(relevance_heads_in_postgres, setup, teardown),
        cmocka_unit_test_setup_teardown(equal_ranks_go_newest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(budget_stops_statements, setup, teardown),
        cmocka_unit_test_setup_teardown(a_damaged_file_is_reported_and_not_written, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_pages_are_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(new_stores_have_16k_pages_old_ones_keep_theirs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(generation_moves_with_changes_only, setup, teardown),
        cmocka_unit_test_setup_teardown(transcript_raw_and_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(raw_chunks_are_compressed, setup, teardown),
        cmocka_unit_test_setup_teardown(message_texts_are_compressed, setup, teardown),
        cmocka_unit_test_setup_teardown(long_texts_in_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(snippet_windows_read_their_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_tidy_packs_to_the_same_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(free_pages_given_back, setup, teardown),
        cmocka_unit_test_setup_teardown(activity_buckets, setup, teardown),
        cmocka_unit_test_setup_teardown(same_named_projects_stay_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(project_totals_and_source_records, setup, teardown),
        cmocka_unit_test_setup_teardown(stats_and_a_concurrent_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_connections_recover, setup, teardown),
        cmocka_unit_test_setup_teardown(reader_cache_shares_a_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(ended_sessions_are_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(owners_see_their_own_sessions, setup, teardown),
        cmocka_unit_test_setup_teardown(session_keys_per_owner, setup, teardown),
    };
    int rc = TB_RUN_GROUPS(tests);
    free(all_ids);
    free(page_ids);
    free(page_keys);
    return rc;
}
