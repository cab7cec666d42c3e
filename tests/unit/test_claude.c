/* Tests for the Claude Code line parser: golden lines for every line type
 * and content block kind (tests/data/claude_lines.jsonl), plus limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "test_sync_golden.h"

static void golden_lines_parse_as_expected(void **state)
{
    (void)state;
    assert_true(golden_run("claude_lines.jsonl", sync_claude_parse_line) >= 20);
}

static void huge_text_is_capped_with_a_note(void **state)
{
    (void)state;
    size_t big = SYNC_TEXT_MAX + 5000;
    char *line = malloc(big + 200);
    assert_non_null(line);
    int k = sprintf(line, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"");
    memset(line + k, 'a', big);
    strcpy(line + (size_t)k + big, "\"}}");
    sync_tool_ids ids;
    memset(&ids, 0, sizeof ids);
    sync_record r;
    char why[100];
    assert_int_equal(sync_claude_parse_line(line, strlen(line), &ids, &r, why, sizeof why), 0);
    assert_int_equal(r.kind, SYNC_MESSAGE);
    assert_true(strlen(r.text) < SYNC_TEXT_MAX + 200);
    assert_non_null(strstr(r.text, "5000 more bytes not indexed"));
    sync_record_clear(&r);
    free(line);
}

static void utf8_repair_replaces_bad_bytes(void **state)
{
    (void)state;
    const char in[] = "ok \xff\xfe end \xe2\x82";
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(sync_utf8_repair(in, sizeof in - 1, &out, &n), 0);
    assert_non_null(out);
    assert_string_equal(out, "ok \xEF\xBF\xBD\xEF\xBF\xBD end \xEF\xBF\xBD\xEF\xBF\xBD");
    free(out);
    assert_int_equal(sync_utf8_repair("fine é", 7, &out, &n), 0);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_lines_parse_as_expected),
        cmocka_unit_test(huge_text_is_capped_with_a_note),
        cmocka_unit_test(utf8_repair_replaces_bad_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
