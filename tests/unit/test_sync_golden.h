/*
 * The golden-line runner shared by test_claude.c and test_codex.c: each
 * line of tests/data/<format>_lines.jsonl holds a transcript line ("in" as
 * an object, or "in_raw" as text) and the fields the parser must produce
 * ("expect"; a field absent from expect is not checked, null means unset).
 * Lines run in file order with one tool-id table, as in a real file.
 */
#ifndef MCPAGE_TEST_SYNC_GOLDEN_H
#define MCPAGE_TEST_SYNC_GOLDEN_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_parse.h"

typedef int (*golden_parser)(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                             char *why, size_t whylen);

static void golden_str(const char *name, const char *field, json_t *want, const char *got)
{
    if (!want)
        return;
    if (json_is_null(want)) {
        if (got)
            fail_msg("%s: %s should be unset, got '%s'", name, field, got);
        return;
    }
    const char *w = json_string_value(want);
    if (!got || strcmp(w, got) != 0)
        fail_msg("%s: %s: want '%s', got '%s'", name, field, w, got ? got : "(null)");
}

static void golden_bool(const char *name, const char *field, json_t *want, int got)
{
    if (want && json_is_true(want) != (got != 0))
        fail_msg("%s: %s: want %d, got %d", name, field, json_is_true(want), got);
}

/*
 * The model call a line records: "usage": null when it records none, else
 * an object whose members present are checked (input, output,
 * cache_creation, cache_creation_1h, cache_read, reasoning as integers;
 * key, model, timestamp as strings or null; cost_usd as a number, meaning
 * a cost given; sidechain as a boolean).
 */
static void golden_usage(const char *name, json_t *want, const sync_usage *u)
{
    if (!want)
        return;
    if (json_is_null(want)) {
        if (u->present)
            fail_msg("%s: usage should be absent", name);
        return;
    }
    if (!u->present)
        fail_msg("%s: usage missing", name);
    static const struct {
        const char *k;
        size_t off;
    } counts[] = {
        {"input", offsetof(sync_usage, input)},
        {"output", offsetof(sync_usage, output)},
        {"cache_creation", offsetof(sync_usage, cache_creation)},
        {"cache_creation_1h", offsetof(sync_usage, cache_creation_1h)},
        {"cache_read", offsetof(sync_usage, cache_read)},
        {"reasoning", offsetof(sync_usage, reasoning)},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        json_t *w = json_object_get(want, counts[i].k);
        int64_t got = *(const int64_t *)((const char *)u + counts[i].off);
        if (w && json_integer_value(w) != got)
            fail_msg("%s: usage.%s: want %lld, got %lld", name, counts[i].k,
                     (long long)json_integer_value(w), (long long)got);
    }
    golden_str(name, "usage.key", json_object_get(want, "key"), u->key);
    golden_str(name, "usage.model", json_object_get(want, "model"), u->model);
    golden_str(name, "usage.timestamp", json_object_get(want, "timestamp"), u->timestamp);
    golden_bool(name, "usage.sidechain", json_object_get(want, "sidechain"), u->sidechain);
    json_t *cost = json_object_get(want, "cost_usd");
    if (cost && json_is_null(cost) && u->cost_given)
        fail_msg("%s: usage.cost_usd should be unset", name);
    if (cost && json_is_number(cost) &&
        (!u->cost_given || u->cost_usd < json_number_value(cost) - 1e-9 ||
         u->cost_usd > json_number_value(cost) + 1e-9))
        fail_msg("%s: usage.cost_usd: want %g, got %g (%s)", name, json_number_value(cost),
                 u->cost_usd, u->cost_given ? "given" : "not given");
}

static int golden_run(const char *file, golden_parser parse)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", MCPAGE_TEST_DATA, file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int cases = 0;
    sync_tool_ids ids;
    memset(&ids, 0, sizeof ids);
    while ((n = getline(&line, &cap, f)) > 0) {
        json_error_t err;
        json_t *c = json_loadb(line, (size_t)n, 0, &err);
        assert_non_null(c);
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *ex = json_object_get(c, "expect");
        char *in = NULL;
        if (json_object_get(c, "in"))
            in = json_dumps(json_object_get(c, "in"), JSON_COMPACT | JSON_PRESERVE_ORDER);
        else
            in = strdup(json_string_value(json_object_get(c, "in_raw")));
        assert_non_null(in);
        sync_record r;
        char why[200] = "";
        int rc = parse(in, strlen(in), &ids, &r, why, sizeof why);
        const char *kind = json_string_value(json_object_get(ex, "kind"));
        if (strcmp(kind, "error") == 0) {
            if (rc != MCPAGE_EPARSE)
                fail_msg("%s: want a parse error, got %d", name, rc);
            if (!why[0])
                fail_msg("%s: a parse error needs a reason", name);
        } else {
            if (rc != 0)
                fail_msg("%s: parse failed: %d %s", name, rc, why);
            const char *got_kind = r.kind == SYNC_MESSAGE ? "message"
                                   : r.kind == SYNC_META  ? "meta"
                                                          : "skip";
            if (strcmp(kind, got_kind) != 0)
                fail_msg("%s: kind: want %s, got %s", name, kind, got_kind);
            golden_str(name, "role", json_object_get(ex, "role"), r.role);
            golden_str(name, "text", json_object_get(ex, "text"), r.text);
            golden_str(name, "tool_name", json_object_get(ex, "tool_name"), r.tool_name);
            golden_str(name, "tool_input", json_object_get(ex, "tool_input"), r.tool_input);
            golden_str(name, "cwd", json_object_get(ex, "cwd"), r.cwd);
            golden_str(name, "model", json_object_get(ex, "model"), r.model);
            golden_str(name, "git_branch", json_object_get(ex, "git_branch"), r.git_branch);
            golden_str(name, "summary", json_object_get(ex, "summary"), r.summary);
            golden_str(name, "timestamp", json_object_get(ex, "timestamp"), r.timestamp);
            golden_bool(name, "is_error", json_object_get(ex, "is_error"), r.is_error);
            golden_bool(name, "is_prompt", json_object_get(ex, "is_prompt"), r.is_prompt);
            golden_bool(name, "from_event", json_object_get(ex, "from_event"), r.from_event);
            golden_str(name, "parent_session_id", json_object_get(ex, "parent_session_id"),
                       r.parent_session_id);
            golden_str(name, "meta_session_id", json_object_get(ex, "meta_session_id"),
                       r.meta_session_id);
            json_t *rank = json_object_get(ex, "title_rank");
            if (rank && json_integer_value(rank) != r.title_rank)
                fail_msg("%s: title_rank: want %d, got %d", name, (int)json_integer_value(rank),
                         r.title_rank);
            golden_usage(name, json_object_get(ex, "usage"), &r.usage);
            sync_record_clear(&r);
        }
        free(in);
        json_decref(c);
        cases++;
    }
    free(line);
    fclose(f);
    return cases;
}

#endif
