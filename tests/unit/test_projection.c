/* Tests for projection (`fields`) in the LIST builder: the concise default
   set, identifiers always kept, unknown names rejected with the valid list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/page.h>

#include "support/page_support.h"

static const char *const msg_fields[] = {"message_id", "line", "role", "text", "tokens", NULL};
static const char *const msg_defaults[] = {"role", "text", NULL};
static const char *const msg_ids[] = {"message_id", "line", NULL};

static const mcpage_list_spec msg_spec = {
    .tool = "search_messages",
    .unit = "matches",
    .default_limit = 10,
    .max_limit = 100,
    .fields = msg_fields,
    .default_fields = msg_defaults,
    .id_fields = msg_ids,
};

/* Two records with every field, in schema order but "extra" first. */
static void run(const mcpage_pager *p, const mcpage_list_spec *spec, const char *args_json,
                mcpage_result *res)
{
    json_t *a = tp_args(args_json);
    mcpage_list *pg;
    int rc = mcpage_list_begin(p, spec, a, &pg);
    assert_true(rc >= 0);
    if (rc == 0) {
        for (int i = 0; i < 2; i++) {
            mcpage_keypart k = {.i = i};
            json_t *rec = json_pack("{s:s, s:s, s:I, s:s, s:s, s:I}", "extra", "not in schema",
                                    "message_id", i ? "m2" : "m1", "line", (json_int_t)(i + 10),
                                    "role", "user", "text", "hello", "tokens", (json_int_t)3);
            rc = mcpage_list_add(pg, rec, &k, 1);
            assert_true(rc == 0 || rc == MCPAGE_PAGE_FULL);
            if (rc == MCPAGE_PAGE_FULL)
                break;
        }
        mcpage_list_set_total(pg, 2, 1);
    }
    assert_int_equal(mcpage_list_finish(pg, res), 0);
    json_decref(a);
}

static json_t *first_record(const mcpage_result *res)
{
    json_t *sc = tp_structured(res);
    json_t *rec = json_incref(json_array_get(json_object_get(sc, "matches"), 0));
    json_decref(sc);
    return rec;
}

static void default_fields_are_the_concise_set_plus_identifiers(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    run(e.pager, &msg_spec, "{}", res);
    json_t *rec = first_record(res);
    char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    /* The record's own order; fields outside the set (extra, tokens) dropped. */
    assert_string_equal(s,
                        "{\"message_id\":\"m1\",\"line\":10,\"role\":\"user\",\"text\":\"hello\"}");
    /* The text copy carries the same projected record. */
    assert_non_null(strstr(tp_text(res), s));
    free(s);
    json_decref(rec);
    mcpage_result_free(res);
    tp_done(&e);
}

static void named_fields_replace_the_default_and_keep_identifiers(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    run(e.pager, &msg_spec, "{\"fields\":[\"tokens\",\"tokens\"]}", res);
    json_t *rec = first_record(res);
    char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"message_id\":\"m1\",\"line\":10,\"tokens\":3}");
    free(s);
    json_decref(rec);
    mcpage_result_free(res);
    tp_done(&e);
}

static void unknown_field_is_rejected_listing_the_valid_names(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_result *res = mcpage_result_new();
    run(e.pager, &msg_spec, "{\"fields\":[\"role\",\"extra\"]}", res);
    json_t *err = tp_assert_rejected(res, "invalid_argument", "fields", NULL);
    assert_string_equal(json_string_value(json_object_get(err, "got")), "extra");
    assert_string_equal(json_string_value(json_object_get(err, "expected")),
                        "a list of field names from: message_id, line, role, text, tokens");
    assert_string_equal(json_string_value(json_object_get(err, "example")),
                        "search_messages with fields=[\"role\",\"text\"]");
    json_decref(err);
    mcpage_result_free(res);
    tp_done(&e);
}

static void tool_without_a_field_list_returns_records_whole(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_list_spec whole = msg_spec;
    whole.fields = NULL;
    whole.default_fields = NULL;
    mcpage_result *res = mcpage_result_new();
    run(e.pager, &whole, "{}", res);
    json_t *rec = first_record(res);
    assert_int_equal(json_object_size(rec), 6);
    json_decref(rec);
    mcpage_result_free(res);
    tp_done(&e);
}

static void changing_fields_mid_walk_is_a_change_of_arguments(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    mcpage_list_spec one = msg_spec;
    one.default_limit = 1;
    mcpage_result *res = mcpage_result_new();
    run(e.pager, &one, "{\"fields\":[\"role\"]}", res);
    json_t *sc = tp_structured(res);
    char args[300];
    snprintf(args, sizeof args, "{\"fields\":[\"text\"],\"cursor\":\"%s\"}",
             json_string_value(json_object_get(sc, "next_cursor")));
    json_decref(sc);
    run(e.pager, &one, args, res);
    json_decref(tp_assert_rejected(res, "invalid_cursor", "cursor", "other_args"));
    mcpage_result_free(res);
    tp_done(&e);
}

static void schema_lists_the_valid_fields_and_the_default_set(void **state)
{
    (void)state;
    tp_env e;
    tp_setup(&e, NULL);
    json_t *props = mcpage_list_schema(e.pager, &msg_spec);
    json_t *f = json_object_get(props, "fields");
    assert_string_equal(json_string_value(json_object_get(f, "type")), "array");
    json_t *names = json_object_get(json_object_get(f, "items"), "enum");
    assert_int_equal(json_array_size(names), 5);
    assert_string_equal(json_string_value(json_array_get(names, 3)), "text");
    assert_string_equal(json_string_value(json_object_get(f, "description")),
                        "Fields to return; by default role, text. Always included: message_id, "
                        "line.");
    json_decref(props);
    tp_done(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_fields_are_the_concise_set_plus_identifiers),
        cmocka_unit_test(named_fields_replace_the_default_and_keep_identifiers),
        cmocka_unit_test(unknown_field_is_rejected_listing_the_valid_names),
        cmocka_unit_test(tool_without_a_field_list_returns_records_whole),
        cmocka_unit_test(changing_fields_mid_walk_is_a_change_of_arguments),
        cmocka_unit_test(schema_lists_the_valid_fields_and_the_default_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
