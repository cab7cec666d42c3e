/*
 * The Claude Code transcript parser: one JSONL line of
 * ~/.claude/projects/<mangled cwd>/<session>.jsonl into a sync_record.
 *
 * Lines carry `type`: user, assistant, system, summary, and bookkeeping
 * (file-history-snapshot, queue-operation, progress, ...) that is skipped.
 * user/assistant lines hold `message` {role, model, content}, content a
 * string or blocks: text, thinking, redacted_thinking, tool_use {id, name,
 * input}, tool_result {tool_use_id, content, is_error}, image, document.
 * Field names checked against public parsers: see docs/transcripts.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_parse.h"

/* User-side text that Claude Code itself writes: not a prompt. */
static int is_meta_text(const char *t)
{
    static const char *const prefixes[] = {
        "<command-name>",
        "<command-message>",
        "<command-args>",
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "Caveat:",
        "<system-reminder>",
        "[Request interrupted",
        "<bash-input>",
        "<bash-stdout>",
        "<user-memory-input>",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (sync_starts_with(t, prefixes[i]))
            return 1;
    return 0;
}

static void add_result_content(sync_text *t, json_t *content)
{
    if (json_is_string(content)) {
        sync_text_adds(t, json_string_value(content));
        return;
    }
    size_t i;
    json_t *b;
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (type && strcmp(type, "text") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, sync_json_str(b, "text"));
        } else if (type && strcmp(type, "image") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, "[image]");
        }
    }
}

/* Walks content blocks; returns how many were tool_result blocks. */
static size_t add_blocks(json_t *content, sync_tool_ids *ids, sync_text *t, sync_record *r,
                         size_t *nblocks)
{
    size_t results = 0;
    size_t i;
    json_t *b;
    *nblocks = 0;
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (!type)
            continue;
        (*nblocks)++;
        if (strcmp(type, "text") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, sync_json_str(b, "text"));
        } else if (strcmp(type, "thinking") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, "[thinking] ");
            sync_text_adds(t, sync_json_str(b, "thinking"));
        } else if (strcmp(type, "redacted_thinking") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, "[thinking redacted]");
        } else if (strcmp(type, "tool_use") == 0 || strcmp(type, "server_tool_use") == 0) {
            const char *name = sync_json_str(b, "name");
            char *sum = sync_tool_summary(json_object_get(b, "input"));
            sync_tool_ids_put(ids, sync_json_str(b, "id"), name);
            sync_text_sep(t);
            sync_text_adds(t, "[tool_use ");
            sync_text_adds(t, name ? name : "?");
            sync_text_adds(t, "] ");
            sync_text_adds(t, sum);
            if (!r->tool_name && name) {
                r->tool_name = sync_short_copy(name, 100);
                r->call_id = sync_short_copy(sync_json_str(b, "id"), 100);
                r->tool_input = sum;
                sum = NULL;
            }
            free(sum);
        } else if (strcmp(type, "tool_result") == 0) {
            results++;
            const char *call = sync_json_str(b, "tool_use_id");
            const char *name = sync_tool_ids_get(ids, call);
            if (!r->call_id && call)
                r->call_id = sync_short_copy(call, 100);
            if (!r->tool_name && name)
                r->tool_name = sync_short_copy(name, 100);
            if (json_is_true(json_object_get(b, "is_error")))
                r->is_error = 1;
            sync_text_sep(t);
            add_result_content(t, json_object_get(b, "content"));
        } else if (strcmp(type, "image") == 0) {
            json_t *src = json_object_get(b, "source");
            const char *mt = sync_json_str(src, "media_type");
            char note[128];
            snprintf(note, sizeof note, "[image: %s]", mt ? mt : "unknown type");
            sync_text_sep(t);
            sync_text_adds(t, note);
        } else if (strcmp(type, "document") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, "[document]");
        } else {
            char note[96];
            snprintf(note, sizeof note, "[%.60s]", type);
            sync_text_sep(t);
            sync_text_adds(t, note);
        }
    }
    return results;
}

static char *dup_nonempty(const char *s)
{
    if (!s || !*s)
        return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

int sync_claude_parse_line(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                           char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    json_error_t err;
    json_t *root = json_loadb(line, len, 0, &err);
    if (!json_is_object(root)) {
        snprintf(why, whylen, "%s", root ? "not a JSON object" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = 0;
    const char *type = sync_json_str(root, "type");
    if (!type)
        goto done; /* unknown shape: ignored, not malformed */
    if (strcmp(type, "summary") == 0) {
        const char *sum = sync_json_str(root, "summary");
        if (sum && *sum) {
            r->kind = SYNC_META;
            r->summary = sync_short_copy(sum, SYNC_TITLE_MAX);
        }
        goto done;
    }
    int is_user = strcmp(type, "user") == 0;
    int is_assistant = strcmp(type, "assistant") == 0;
    int is_system = strcmp(type, "system") == 0;
    if (!is_user && !is_assistant && !is_system)
        goto done; /* bookkeeping: file-history-snapshot, queue-operation, ... */

    r->kind = SYNC_META;
    r->timestamp = dup_nonempty(sync_json_str(root, "timestamp"));
    r->cwd = dup_nonempty(sync_json_str(root, "cwd"));
    r->git_branch = dup_nonempty(sync_json_str(root, "gitBranch"));
    r->parent_session_id = dup_nonempty(sync_json_str(root, "sessionId"));

    sync_text t = {0};
    if (is_system) {
        sync_text_adds(&t, sync_json_str(root, "content"));
        r->role = "system";
    } else {
        json_t *msg = json_object_get(root, "message");
        json_t *content = json_object_get(msg, "content");
        const char *model = sync_json_str(msg, "model");
        if (is_assistant && model && *model && strcmp(model, "<synthetic>") != 0)
            r->model = dup_nonempty(model);
        size_t nblocks = 0;
        size_t results = 0;
        if (json_is_string(content))
            sync_text_adds(&t, json_string_value(content));
        else if (json_is_array(content))
            results = add_blocks(content, ids, &t, r, &nblocks);
        if (is_assistant) {
            r->role = "assistant";
        } else if (results > 0 && results == nblocks) {
            r->role = "tool";
        } else if (json_is_true(json_object_get(root, "isMeta")) ||
                   json_is_true(json_object_get(root, "isCompactSummary")) ||
                   (t.buf && is_meta_text(t.buf))) {
            r->role = "system";
        } else {
            r->role = "user";
            r->is_prompt = t.len > 0;
        }
    }
    if (t.len == 0 && !r->tool_name) {
        free(t.buf);
        goto done; /* nothing to show: keep only the session facts */
    }
    r->text = sync_text_finish(&t);
    if (!r->text) {
        rc = MCPAGE_ENOMEM;
        goto done;
    }
    r->kind = SYNC_MESSAGE;
done:
    json_decref(root);
    if (rc < 0)
        sync_record_clear(r);
    return rc;
}
