/*
 * Parameters named in prose (src/check/check_names.c): the forms that
 * name a parameter are reported when the tool lacks it, and the prose of
 * real servers that only looks like them is not. The false-alarm texts
 * are quoted from the servers mcpage check is run against
 * (@modelcontextprotocol/server-pdf, server-filesystem, mcpage serve).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "check/check_internal.h"

/* tools/list of a made-up server: the tools the prose may name. */
static const char tools_json[] =
    "["
    "{\"name\": \"interact\", \"inputSchema\": {\"type\": \"object\", \"properties\": "
    "  {\"viewUUID\": {}, \"action\": {}, \"page\": {}, \"path\": {}, \"overwrite\": {}}}},"
    "{\"name\": \"save_pdf\", \"inputSchema\": {\"type\": \"object\", \"properties\": "
    "  {\"url\": {}, \"data\": {}}}},"
    "{\"name\": \"read_session\", \"inputSchema\": {\"type\": \"object\", \"properties\": "
    "  {\"session_id\": {}, \"start_line\": {}, \"max_lines\": {}}}},"
    "{\"name\": \"list_sessions\", \"inputSchema\": {\"type\": \"object\", \"properties\": "
    "  {\"project\": {}, \"limit\": {}, \"offset\": {}, \"cursor\": {}}}},"
    "{\"name\": \"read_text_file\", \"inputSchema\": {\"type\": \"object\", \"properties\": "
    "  {\"path\": {}, \"head\": {}, \"tail\": {}}}},"
    "{\"name\": \"get-resource-links\", \"inputSchema\": {\"type\": \"object\"}}"
    "]";

/* One check__names run: the findings' messages, "|"-joined, in out; their number returned. */
static size_t names(const char *self, const char *text, char *out, size_t cap)
{
    json_t *tools = json_loads(tools_json, 0, NULL);
    assert_non_null(tools);
    check_report rep = {.findings = json_array()};
    check_options o = {0};
    check_ctx c = {.o = &o, .rep = &rep, .scope = self, .tools = tools};
    const json_t *props = NULL;
    size_t i;
    const json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        if (strcmp(json_string_value(json_object_get(tool, "name")), self) == 0)
            props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
    }
    check__names(&c, NULL, "description", text, self, props);
    out[0] = '\0';
    const json_t *f;
    json_array_foreach(rep.findings, i, f)
    {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", l ? "|" : "",
                 json_string_value(json_object_get(f, "message")));
        assert_non_null(json_string_value(json_object_get(f, "fix")));
    }
    size_t n = json_array_size(rep.findings);
    json_decref(rep.findings);
    json_decref(tools);
    return n;
}

#define NONE(self, text)                                                                           \
    do {                                                                                           \
        char got_[2048];                                                                           \
        size_t n_ = names(self, text, got_, sizeof got_);                                          \
        if (n_ != 0)                                                                               \
            fail_msg("false alarm on \"%s\": %s", text, got_);                                     \
    } while (0)

#define ONE(self, text, words)                                                                     \
    do {                                                                                           \
        char got_[2048];                                                                           \
        assert_int_equal(names(self, text, got_, sizeof got_), 1);                                 \
        if (strstr(got_, words) == NULL)                                                           \
            fail_msg("\"%s\" not in \"%s\"", words, got_);                                         \
    } while (0)

/* Prose of real servers that only looks like a parameter. */
static void real_prose_is_not_a_parameter(void **state)
{
    (void)state;
    /* server-pdf's interact: coordinates of an annotation object, not arguments. */
    NONE("interact", "To place a 200x30 box at the TOP of the page: x=72, y=50, width=200, "
                     "height=30.");
    NONE("interact",
         "Margins: top\xe2\x89\x88y=50, bottom\xe2\x89\x88y=742, left\xe2\x89\x88x=72.");
    NONE("interact", "Set `overwrite: true` to replace an existing file.");
    NONE("interact", "Example:\n{\"viewUUID\":\"...\",\"commands\":[{\"action\":\"zoom\"}]}");
    NONE("interact", "Each has optional start/end. [{start:1,end:5}], [{}] = all pages.");
    NONE("save_pdf", "Save annotated PDF bytes. The model should NOT call this tool directly "
                     "- use interact with action: save_as instead.");
    /* mcpage serve: a query syntax, a transcript format, calls of other tools. */
    NONE("list_sessions", "filters written in it: project:NAME source:claude|codex role:user "
                          "tool:NAME after:YYYY-MM-DD has:error");
    NONE("read_session", "each message starts with `### [ordinal] role timestamp [tool=NAME] "
                         "[error]` followed by its text");
    NONE("list_sessions", "Each match has line: where read_session(session_id, "
                          "start_line=line) shows the message.");
    NONE("read_session", "Use a project name with list_sessions(project=...).");
    NONE("list_sessions", "Sorted by recent activity (sort=name or size). Columns are days "
                          "(bucket=day|week|month).");
    /* server-filesystem: a quoted parameter it has. */
    NONE("read_text_file", "Use the 'head' parameter to read only the first N lines of a file, "
                           "or the 'tail' parameter to read only the last N lines.");
    /* Links, keys, code, comparisons, a tool named before a colon. */
    NONE("list_sessions", "See https://example.com/list?page=2&limit=5 or a.page=3.");
    NONE("list_sessions", "Like JSON.stringify(page=1) and f(limit=3) in code.");
    NONE("list_sessions", "read_session: reads one session; when a==b or page == 2.");
    NONE("list_sessions", "Next page: list_sessions with cursor=\"c1.ab+cd=\" (or offset=20).");
    NONE("list_sessions", "Call get-resource-links for links.");
    /* A tool mentioned in passing governs nothing (mcpage's search description, 2026-12-03). */
    NONE("list_sessions", "a snippet with hits in [brackets]; session_id, line (where "
                          "read_session shows it) and ordinal via fields=[...].");
    NONE("list_sessions", "As read_session does, page with offset=20.");
}

/* The forms that name a parameter, reported against the right tool. */
static void named_parameters_the_tool_lacks(void **state)
{
    (void)state;
    ONE("list_sessions", "Lists sessions; pass page=2 for the second page.",
        "description names parameter 'page', which the inputSchema lacks");
    ONE("read_text_file", "Use the 'lines' parameter to read a range.", "parameter 'lines'");
    ONE("read_text_file", "Pass the `start_line` argument to skip.", "parameter 'start_line'");
    ONE("interact", "Set `overwrite_all: true` to replace an existing file.",
        "parameter 'overwrite_all'");
    ONE("save_pdf", "Use interact with mode: save_as instead.",
        "names parameter 'mode' of interact, whose inputSchema lacks it");
    ONE("list_sessions", "Each match has a line: read_session(session_id, start=line) shows it.",
        "names parameter 'start' of read_session");
    ONE("read_session", "Use a project name with list_sessions(project_name=...).",
        "parameter 'project_name' of list_sessions");
    ONE("list_sessions", "Next page: list_sessions with cursor=\"c1.x\" (or skip=20).",
        "parameter 'skip'");
    ONE("get-resource-links", "Returns links; max_results=5 at most.", "'max_results'");
    /* The quoted piece starts inside a character: the finding is kept, the piece valid UTF-8. */
    ONE("list_sessions",
        "\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88"
        "\xe2\x89\x88\xe2\x89\x88\xe2\x89\x88x pass page=2.",
        "(\"...??\xe2\x89\x88");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_prose_is_not_a_parameter),
        cmocka_unit_test(named_parameters_the_tool_lacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
