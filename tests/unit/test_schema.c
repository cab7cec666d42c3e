/*
 * Tests for the JSON Schema subset used on tool arguments and results:
 * each keyword accepts what it should, rejects what it should with a
 * message naming the parameter, and defaults are filled in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcp/schema.h"

/* Validates JSON text `inst` against `schema`; returns the message or "" when valid. */
static const char *check(const char *schema, const char *inst, bool fill, char *out)
{
    json_t *s = json_loads(schema, 0, NULL);
    json_t *v = json_loads(inst, JSON_DECODE_ANY, NULL);
    assert_non_null(s);
    assert_non_null(v);
    char why[512];
    bool ok = schema_validate(s, v, fill, why, sizeof why);
    if (ok) {
        char *dump = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        snprintf(out, 512, "ok %s", dump);
        free(dump);
    } else {
        snprintf(out, 512, "%s", why);
    }
    json_decref(s);
    json_decref(v);
    return out;
}

/* A parameter's path in a message: "outer.inner", cut at 255 bytes. */
static void parameter_paths_are_joined_and_cut(void **state)
{
    (void)state;
    char out[512];
    assert_string_equal(check("{\"type\":\"object\",\"properties\":{\"outer\":{\"type\":"
                              "\"object\",\"properties\":{\"inner\":{\"type\":\"integer\"}}}}}",
                              "{\"outer\":{\"inner\":\"x\"}}", false, out),
                        "parameter 'outer.inner' must be of type integer, got a string (\"x\")");
    /* Names longer than a path holds: cut after 255 bytes, as before. */
    char name[300], inst[400], want[400];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(inst, sizeof inst, "{\"%s\":1}", name);
    snprintf(want, sizeof want, "unknown parameter '%.255s'; accepted parameters: a", name);
    assert_string_equal(check("{\"type\":\"object\",\"additionalProperties\":false,"
                              "\"properties\":{\"a\":{}}}",
                              inst, false, out),
                        want);
}

static void huge_integral_numbers_saturate(void **state)
{
    (void)state;
    char out[512];
    const char *schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    assert_string_equal(check(schema, "{\"n\":1e300}", true, out),
                        "ok {\"n\":9223372036854775807}");
    assert_string_equal(check(schema, "{\"n\":-1e300}", true, out),
                        "ok {\"n\":-9223372036854775808}");
    assert_string_equal(check(schema, "{\"n\":9007199254740993.0}", true, out),
                        "ok {\"n\":9007199254740992}");
    assert_string_equal(check(schema, "{\"n\":3.0}", true, out), "ok {\"n\":3}");
    assert_non_null(strstr(check(schema, "{\"n\":2.5}", true, out), "integer"));
}

static void each_keyword_accepts_and_rejects(void **state)
{
    static const struct {
        const char *schema, *inst, *want;
    } cases[] = {
        {"{\"type\":\"string\"}", "\"a\"", "ok \"a\""},
        {"{\"type\":\"string\"}", "1",
         "parameter 'arguments' must be of type string, got an "
         "integer (1)"},
        {"{\"type\":[\"integer\",\"null\"]}", "null", "ok null"},
        {"{\"type\":[\"integer\",\"null\"]}", "\"x\"",
         "parameter 'arguments' must be of type integer or null, got a string (\"x\")"},
        {"{\"type\":\"integer\"}", "2.5",
         "parameter 'arguments' must be of type integer, got a "
         "number (2.5)"},
        {"{\"type\":\"number\"}", "2", "ok 2"},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":2}", "[1,2,3]",
         "parameter 'arguments' must have at most 2 items, got 3"},
        {"{\"type\":\"string\",\"maxLength\":3}", "\"\xc3\xa9\xc3\xa9\xc3\xa9\"",
         "ok \"\xc3\xa9\xc3\xa9\xc3\xa9\""},
        {"{\"type\":\"string\",\"maxLength\":2}", "\"abc\"",
         "parameter 'arguments' must be at most 2 characters long, got 3"},
        {"{\"enum\":[1,\"a\",null]}", "null", "ok null"},
        {"{\"const\":\"x\"}", "\"y\"", "parameter 'arguments' must be \"x\", got \"y\""},
        {"{\"exclusiveMinimum\":0}", "0", "parameter 'arguments' must be > 0, got 0"},
        {"{\"exclusiveMaximum\":10}", "9.5", "ok 9.5"},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\",\"required\":[\"b\"]}}}",
         "{\"a\":{}}", "missing required parameter 'a.b'"},
        {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}", "{\"x\":1}",
         "parameter 'x' must be of type string, got an integer (1)"},
        {"{\"type\":\"object\",\"properties\":{\"a\":false}}", "{\"a\":1}",
         "parameter 'a' is not allowed"},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"a\":4.0}",
         "ok {\"a\":4}"},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"default\":[1]},\"b\":{\"type\":\"object\","
         "\"properties\":{\"c\":{\"default\":\"d\"}}}}}",
         "{\"b\":{}}", "ok {\"a\":[1],\"b\":{\"c\":\"d\"}}"},
        {"{\"unknownKeyword\":{\"type\":\"string\"}}", "5", "ok 5"},
    };
    char out[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = check(cases[i].schema, cases[i].inst, true, out);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu: want [%s] got [%s]", i, cases[i].want, got);
    }
}

static void defaults_are_not_filled_without_fill(void **state)
{
    char out[512];
    assert_string_equal(
        check("{\"type\":\"object\",\"properties\":{\"a\":{\"default\":1}}}", "{}", false, out),
        "ok {}");
}

static void schema_check_rejects_unusable_schemas(void **state)
{
    static const struct {
        const char *schema;
        bool ok;
    } cases[] = {
        {"{\"type\":\"object\"}", true},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"maxLength\":3}}}",
         true},
        {"{\"type\":\"string\"}", false},
        {"{}", false},
        {"[]", false},
        {"{\"type\":\"object\",\"properties\":[]}", false},
        {"{\"type\":\"object\",\"required\":\"a\"}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"maxLength\":1.5}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":5}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"items\":3}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"enum\":{}}}}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *s = json_loads(cases[i].schema, JSON_DECODE_ANY, NULL);
        char why[256] = "";
        if (schema_check(s, why, sizeof why) != cases[i].ok)
            fail_msg("case %zu: %s (%s)", i, cases[i].schema, why);
        if (!cases[i].ok)
            assert_true(strlen(why) > 10);
        json_decref(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_keyword_accepts_and_rejects),
        cmocka_unit_test(huge_integral_numbers_saturate),
        cmocka_unit_test(parameter_paths_are_joined_and_cut),
        cmocka_unit_test(defaults_are_not_filled_without_fill),
        cmocka_unit_test(schema_check_rejects_unusable_schemas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
