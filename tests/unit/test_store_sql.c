/*
 * The SQL both store backends share (src/store/store_sql.c), spelled by
 * each backend's own dialect: the statement texts must stay those each
 * backend wrote by hand before they shared them (the strings below are
 * copied from that code), parameters bind in order, a full builder
 * refuses, and raw chunks assemble into a window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "store/postgres/pg_internal.h"
#include "store/sqlite/sqlite_internal.h"
#include "store/store_sql.h"

static void projects_filters_spell_each_engine(void **state)
{
    (void)state;
    store_project_filter f = {.name_contains = "web", .source = "codex"};
    store_sql sq = {.d = &sq_dialect}, pg = {.d = &pg_dialect};
    store_sql_add(&sq, "SELECT count(*) FROM projects p");
    store_sql_project_where(&sq, &f);
    store_sql_add(&pg, "SELECT count(*) FROM projects p");
    store_sql_project_where(&pg, &f);
    assert_string_equal(sq.text, "SELECT count(*) FROM projects p WHERE 1"
                                 " AND instr(lower(p.name), lower(?)) > 0"
                                 " AND instr(',' || p.sources || ',', ',' || ? || ',') > 0");
    assert_string_equal(pg.text, "SELECT count(*) FROM projects p WHERE true"
                                 " AND strpos(lower(p.name), lower($1)) > 0"
                                 " AND strpos(',' || p.sources || ',', ',' || $2 || ',') > 0");
    assert_int_equal(sq.nparams, 2);
    assert_int_equal(pg.nparams, 2);
    assert_string_equal(pg.params[0].s, "web");
    assert_string_equal(pg.params[1].s, "codex");
    assert_false(sq.overflow || pg.overflow);
}

static void sessions_keyset_page_binds_in_order(void **state)
{
    (void)state;
    store_session_filter f = {.project = "mcpage", .after = "2026-01-01", .without_project = 0};
    store_key after = {.nparts = 2};
    store_key_set_text(&after.part[0], "2026-02-03T04:05:06Z");
    store_key_set_text(&after.part[1], "s-42");
    store_page page = {.after = &after, .limit = 20};
    const char *order, *cmp;
    store_key_type types[2];
    store_session_order(1, &order, &cmp, types);
    store_sql pg = {.d = &pg_dialect};
    store_sql_add(&pg, "SELECT " STORE_SQL_SESSION_COLS " FROM " STORE_SQL_SESSION_FROM);
    store_sql_session_where(&pg, &f);
    store s = {0};
    assert_int_equal(store_sql_after(&s, &pg, &page, cmp, types), 0);
    store_sql_page(&pg, order, &page);
    assert_string_equal(
        pg.text,
        "SELECT s.session_id, s.source, s.project_id, p.name, s.title, s.started_at, s.ended_at, "
        "s.model, s.git_branch, s.message_count, s.parent_session_id, s.source_path, s.hostname, "
        "s.raw_size FROM sessions s LEFT JOIN projects p ON p.id = s.project_id WHERE true"
        " AND s.project_id IN (SELECT id FROM projects WHERE name = $1 OR path = $2)"
        " AND s.started_at >= $3 AND (s.started_at, s.session_id) < ($4, $5)"
        " ORDER BY s.started_at DESC, s.session_id DESC LIMIT $6");
    assert_int_equal(pg.nparams, 6);
    assert_string_equal(pg.params[3].s, "2026-02-03T04:05:06Z");
    assert_string_equal(pg.params[4].s, "s-42");
    assert_int_equal(pg.params[5].type, STORE_KEY_INT);
    assert_int_equal(pg.params[5].i, 20);
    /* a position of another list (an int where a text belongs) is refused */
    store_key_set_int(&after.part[1], 42);
    store_sql other = {.d = &pg_dialect};
    assert_int_equal(store_sql_after(&s, &other, &page, cmp, types), MCPAGE_EINVAL);
    assert_int_equal(other.nparams, 0);
}

static void search_filters_quote_keywords_where_needed(void **state)
{
    (void)state;
    store_search_filter f = {.source = "claude",
                             .role = "user",
                             .after = "2026-01",
                             .before = "2026-02",
                             .has_error = 1};
    store_sql sq = {.d = &sq_dialect}, pg = {.d = &pg_dialect};
    store_sql_add(&sq, " WHERE messages_fts MATCH ?");
    store_sql_search_and(&sq, &f);
    store_sql_add(&pg, " WHERE m.tsv @@ ?::tsquery");
    store_sql_search_and(&pg, &f);
    assert_string_equal(sq.text, " WHERE messages_fts MATCH ? AND s.source = ? AND m.role = ?"
                                 " AND m.timestamp >= ? AND m.timestamp < ? AND m.is_error = 1");
    assert_string_equal(pg.text, " WHERE m.tsv @@ $1::tsquery AND s.source = $2 AND m.role = $3"
                                 " AND m.\"timestamp\" >= $4 AND m.\"timestamp\" < $5"
                                 " AND m.is_error = 1");
    assert_int_equal(sq.nparams, 4);
}

static void an_empty_where_goes_and_a_full_builder_refuses(void **state)
{
    (void)state;
    store_session_filter none = {0};
    store_sql sq = {.d = &sq_dialect};
    store_sql_add(&sq, "SELECT count(*) FROM sessions s");
    size_t mark = sq.len;
    store_sql_session_where(&sq, &none);
    store_sql_where_end(&sq, mark);
    assert_string_equal(sq.text, "SELECT count(*) FROM sessions s");

    store_sql full = {.d = &pg_dialect};
    for (int i = 0; i < STORE_SQL_PARAMS; i++)
        store_sql_int(&full, i);
    assert_false(full.overflow);
    store_sql_int(&full, 99);
    assert_true(full.overflow);
    store_sql big = {.d = &sq_dialect};
    char chunk[1001];
    memset(chunk, 'x', sizeof chunk - 1);
    chunk[sizeof chunk - 1] = '\0';
    for (int i = 0; i < 4; i++)
        store_sql_add(&big, chunk);
    assert_false(big.overflow);
    store_sql_add(&big, chunk);
    assert_true(big.overflow);
}

static void raw_chunks_fill_a_window_up_to_a_gap(void **state)
{
    (void)state;
    const unsigned char a[] = "0123456789", b[] = "abcdefghij";
    unsigned char out[12];
    /* window [5, 17): the end of the first chunk, the start of the second */
    int64_t filled = 5;
    assert_int_equal(store_raw_take(out, 5, 17, &filled, 0, a, 10), 1);
    assert_int_equal(filled, 10);
    assert_int_equal(store_raw_take(out, 5, 17, &filled, 10, b, 10), 0);
    assert_int_equal(filled, 17);
    assert_memory_equal(out, "56789abcdefg", 12);
    /* a chunk that starts past what is filled is a gap: stop there */
    filled = 0;
    assert_int_equal(store_raw_take(out, 0, 12, &filled, 3, a, 10), 0);
    assert_int_equal(filled, 0);
    /* a chunk wholly before the window is skipped */
    filled = 10;
    assert_int_equal(store_raw_take(out, 10, 12, &filled, 0, a, 10), 1);
    assert_int_equal(filled, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(projects_filters_spell_each_engine),
        cmocka_unit_test(sessions_keyset_page_binds_in_order),
        cmocka_unit_test(search_filters_quote_keywords_where_needed),
        cmocka_unit_test(an_empty_where_goes_and_a_full_builder_refuses),
        cmocka_unit_test(raw_chunks_fill_a_window_up_to_a_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
