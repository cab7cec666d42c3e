/*
 * The Claude Code transcript parser: one JSONL line of
 * ~/.claude/projects/<mangled cwd>/<session>.jsonl into a sync_record.
 *
 * Lines carry `type`: user, assistant, system, summary, custom-title and
 * ai-title (session titles), attachment (of which a queued_command in
 * prompt mode is a message the user typed while the agent worked), and
 * bookkeeping (file-history-snapshot, queue-operation, progress, ...)
 * that is skipped.
 * user/assistant lines hold `message` {role, model, content}, content a
 * string or blocks: text, thinking, redacted_thinking, tool_use {id, name,
 * input}, tool_result {tool_use_id, content, is_error}, image, document.
 * Field names checked against public parsers: see docs/transcripts.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_json.h"
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
            sync_record_keep_call(r, name, sync_json_str(b, "id"), json_object_get(b, "input"));
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

/* The text between <tag> and </tag> in `t`, trimmed, or NULL; *n its length. */
static const char *tag_text(const char *t, const char *tag, size_t *n)
{
    char open[40], close[40];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(t, open);
    if (!a)
        return NULL;
    a += strlen(open);
    const char *b = strstr(a, close);
    if (!b)
        return NULL;
    while (a < b && (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\n' || b[-1] == '\t' || b[-1] == '\r'))
        b--;
    *n = (size_t)(b - a);
    return a;
}

/*
 * The expansion a custom slash command sent the model, as Claude Code
 * records it: <command-contents> holding the text, or a JSON text block
 * {"type":"text","text":...}. Added to `t` after a blank line.
 */
static void add_contents(sync_text *t, const char *c, size_t n)
{
    json_error_t err;
    json_t *j = n > 0 && c[0] == '{' ? json_loadb(c, n, 0, &err) : NULL;
    const char *text = json_is_object(j) ? sync_json_str(j, "text") : NULL;
    sync_text_add(t, "\n\n", 2);
    if (text)
        sync_text_adds(t, text);
    else
        sync_text_add(t, c, n);
    json_decref(j);
}

/*
 * A slash command the user ran, as Claude Code writes it:
 * <command-name>/review</command-name> ... <command-args>the
 * parser</command-args>, and for a custom command the prompt it expanded
 * to in <command-contents>. Rewrites `t` to what the user typed ("/review
 * the parser"), followed by the expansion, and returns 1; 0 (t unchanged)
 * for anything else, including a command with neither arguments nor
 * contents (/clear, /compact), which stays bookkeeping.
 */
static int slash_command(sync_text *t)
{
    if (!t->buf || !sync_starts_with(t->buf, "<command-"))
        return 0;
    size_t nn = 0, na = 0, nc = 0;
    const char *name = tag_text(t->buf, "command-name", &nn);
    const char *args = tag_text(t->buf, "command-args", &na);
    const char *contents = tag_text(t->buf, "command-contents", &nc);
    if (!name || nn == 0 || ((!args || na == 0) && (!contents || nc == 0)))
        return 0;
    sync_text typed = {0};
    if (name[0] != '/')
        sync_text_add(&typed, "/", 1);
    sync_text_add(&typed, name, nn);
    if (args && na > 0) {
        sync_text_add(&typed, " ", 1);
        sync_text_add(&typed, args, na);
    }
    if (contents && nc > 0)
        add_contents(&typed, contents, nc);
    if (typed.oom) {
        free(typed.buf);
        return 0;
    }
    free(t->buf);
    *t = typed;
    return 1;
}

/* A message the user queued while the agent worked: a string or blocks. */
static void add_queued(json_t *prompt, sync_tool_ids *ids, sync_text *t, sync_record *r)
{
    size_t nblocks = 0;
    if (json_is_string(prompt))
        sync_text_adds(t, json_string_value(prompt));
    else if (json_is_array(prompt))
        (void)add_blocks(prompt, ids, t, r, &nblocks);
}

/* 1 when `key` of `obj` is present and JSON null. */
static int is_null(json_t *obj, const char *key)
{
    return json_is_null(json_object_get(obj, key));
}

/*
 * The model call a line records: `node` is the line itself, or for a
 * progress record the assistant line it carries (data.message). Its
 * message.usage holds input_tokens and output_tokens (both required),
 * cache_read_input_tokens, and cache writes either split by kind
 * (cache_creation.ephemeral_5m_input_tokens and _1h_) or as one
 * cache_creation_input_tokens. A call is keyed by message.id and
 * requestId (docs/usage.md: Claude Code writes one line per content
 * block, each with the usage so far). Lines ccusage refuses are refused
 * the same way: an empty or null id, request id, model or session id.
 */
static void claude_usage(json_t *node, const char *line_ts, sync_usage *u)
{
    json_t *msg = json_object_get(node, "message");
    json_t *usage = json_object_get(msg, "usage");
    if (!json_is_object(usage) || !json_is_integer(json_object_get(usage, "input_tokens")) ||
        !json_is_integer(json_object_get(usage, "output_tokens")))
        return;
    const char *id = sync_json_str(msg, "id"), *req = sync_json_str(node, "requestId");
    const char *model = sync_json_str(msg, "model"), *sess = sync_json_str(node, "sessionId");
    if ((id && !*id) || (req && !*req) || (model && !*model) || (sess && !*sess) ||
        is_null(msg, "id") || is_null(node, "requestId") || is_null(msg, "model") ||
        is_null(node, "sessionId") || is_null(node, "costUSD") ||
        is_null(usage, "cache_read_input_tokens") || is_null(usage, "cache_creation_input_tokens"))
        return;
    const char *ts = sync_json_str(node, "timestamp");
    if (!ts || !*ts)
        ts = line_ts;
    if (!ts || !*ts)
        return; /* a call without a time belongs to no day */
    u->input = sync_json_count(json_object_get(usage, "input_tokens"));
    u->output = sync_json_count(json_object_get(usage, "output_tokens"));
    u->cache_read = sync_json_count(json_object_get(usage, "cache_read_input_tokens"));
    json_t *split = json_object_get(usage, "cache_creation");
    if (json_is_object(split)) {
        int64_t m5 = sync_json_count(json_object_get(split, "ephemeral_5m_input_tokens"));
        u->cache_creation_1h = sync_json_count(json_object_get(split, "ephemeral_1h_input_tokens"));
        u->cache_creation = m5 + u->cache_creation_1h;
    } else {
        u->cache_creation = sync_json_count(json_object_get(usage, "cache_creation_input_tokens"));
    }
    json_t *cost = json_object_get(node, "costUSD");
    if (json_is_number(cost) && json_number_value(cost) >= 0) {
        u->cost_usd = json_number_value(cost);
        u->cost_given = 1;
    }
    u->sidechain = json_is_true(json_object_get(node, "isSidechain"));
    if (model && strcmp(model, "<synthetic>") != 0) {
        const char *speed = sync_json_str(usage, "speed");
        int fast = speed && strcmp(speed, "fast") == 0;
        char buf[160];
        snprintf(buf, sizeof buf, "%.120s%s", model, fast ? "-fast" : "");
        u->model = sync_short_copy(buf, 150);
    }
    if (id) {
        size_t n = strlen(id) + (req ? strlen(req) : 0) + 2;
        u->key = malloc(n);
        if (u->key)
            snprintf(u->key, n, "%s:%s", id, req ? req : "");
    }
    u->timestamp = sync_short_copy(ts, 64);
    u->present = 1;
}

int sync_claude_parse_line(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                           char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    if (!json_is_object(root)) {
        snprintf(why, whylen, "%s", root ? "not a JSON object" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = 0;
    const char *type = sync_json_str(root, "type");
    if (!type)
        goto done; /* unknown shape: ignored, not malformed */
    static const struct {
        const char *type, *field;
        int rank;
    } titles[] = {
        {"summary", "summary", SYNC_TITLE_SUMMARY},
        {"ai-title", "aiTitle", SYNC_TITLE_AI},
        {"custom-title", "customTitle", SYNC_TITLE_CUSTOM},
    };
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++) {
        if (strcmp(type, titles[i].type) != 0)
            continue;
        const char *title = sync_json_str(root, titles[i].field);
        if (title && *title) {
            r->kind = SYNC_META;
            r->summary = sync_short_copy(title, SYNC_TITLE_MAX);
            r->title_rank = titles[i].rank;
        }
        goto done;
    }
    int is_user = strcmp(type, "user") == 0;
    int is_assistant = strcmp(type, "assistant") == 0;
    if (is_assistant) {
        claude_usage(root, NULL, &r->usage);
    } else if (strcmp(type, "progress") == 0) {
        /* a sub-agent's response as its parent's file reports it */
        json_t *inner = json_object_get(json_object_get(root, "data"), "message");
        const char *itype = sync_json_str(inner, "type");
        if (itype && strcmp(itype, "assistant") == 0)
            claude_usage(inner, sync_json_str(root, "timestamp"), &r->usage);
    }
    int is_system = strcmp(type, "system") == 0;
    json_t *queued = NULL;
    if (strcmp(type, "attachment") == 0) {
        json_t *a = json_object_get(root, "attachment");
        const char *atype = sync_json_str(a, "type"), *mode = sync_json_str(a, "commandMode");
        if (atype && strcmp(atype, "queued_command") == 0 && (!mode || strcmp(mode, "prompt") == 0))
            queued = json_object_get(a, "prompt");
        if (!queued)
            goto done; /* other attachments: files, hooks, task notifications */
    }
    if (!is_user && !is_assistant && !is_system && !queued)
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
    } else if (queued) {
        add_queued(queued, ids, &t, r);
        r->role = "user";
        r->is_prompt = t.len > 0;
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
                   (t.buf && is_meta_text(t.buf) && !slash_command(&t))) {
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
