/* Tests for the Codex rollout line parser: golden lines for every line
 * type and payload kind (tests/data/codex_lines.jsonl). */
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
    assert_true(golden_run("codex_lines.jsonl", sync_codex_parse_line) >= 15);
}

static void tool_summary_prefers_command_then_compact_json(void **state)
{
    (void)state;
    json_t *in = json_pack("{s:[s,s,s]}", "command", "bash", "-lc", "ls");
    char *s = sync_tool_summary(in);
    assert_string_equal(s, "bash -lc ls");
    free(s);
    json_decref(in);
    in = json_string("not json at all");
    s = sync_tool_summary(in);
    assert_string_equal(s, "not json at all");
    free(s);
    json_decref(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_lines_parse_as_expected),
        cmocka_unit_test(tool_summary_prefers_command_then_compact_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
