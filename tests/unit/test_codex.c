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
    assert_true(golden_run("codex_lines.jsonl", sync_codex_parse_line) >= 17);
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

/* Parses one Codex line and asks the copy memory about it. */
static int copy_of(sync_copies *c, sync_tool_ids *ids, const char *line)
{
    sync_record r;
    char why[200];
    assert_int_equal(sync_codex_parse_line(line, strlen(line), ids, &r, why, sizeof why), 0);
    int copy = sync_codex_is_copy(c, &r);
    sync_record_clear(&r);
    return copy;
}

#define ITEM(role, kind, text)                                                                     \
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"" role               \
    "\",\"content\":[{\"type\":\"" kind "\",\"text\":\"" text "\"}]}}"
#define EVENT(type, text)                                                                          \
    "{\"type\":\"event_msg\",\"payload\":{\"type\":\"" type "\",\"message\":\"" text "\"}}"

/* A UI event is a copy only of an unpaired message of the other kind with
 * the same words in the same turn: never per file, never twice. */
static void copies_are_decided_per_message(void **state)
{
    (void)state;
    sync_copies c;
    memset(&c, 0, sizeof c);
    sync_tool_ids ids;
    memset(&ids, 0, sizeof ids);
    /* Desktop 0.104: the prompt as an item, then its event (a trailing newline apart) */
    assert_int_equal(copy_of(&c, &ids, ITEM("user", "input_text", "fix it\\n")), 0);
    assert_int_equal(copy_of(&c, &ids, EVENT("user_message", "fix it")), 1);
    /* typed again in the same turn, as an event only: a message */
    assert_int_equal(copy_of(&c, &ids, EVENT("user_message", "fix it")), 0);
    /* the agent's words: event first, then the item */
    assert_int_equal(copy_of(&c, &ids, EVENT("agent_message", "on it")), 0);
    assert_int_equal(copy_of(&c, &ids, ITEM("assistant", "output_text", "on it")), 1);
    /* the agent answered: an item with the event's words in the next turn
       is no copy of it (Desktop 0.128 writes prompts as events only) */
    assert_int_equal(copy_of(&c, &ids, ITEM("user", "input_text", "fix it")), 0);
    /* an assistant item with the same words as an older, paired one: kept */
    assert_int_equal(copy_of(&c, &ids, ITEM("assistant", "output_text", "on it")), 0);
    assert_int_equal(c.nuser, 0);
    assert_int_equal(c.nagent, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_lines_parse_as_expected),
        cmocka_unit_test(tool_summary_prefers_command_then_compact_json),
        cmocka_unit_test(copies_are_decided_per_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
