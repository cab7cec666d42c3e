/*
 * The Codex CLI rollout parser: one JSONL line of
 * ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl into a
 * sync_record.
 *
 * Lines are envelopes {timestamp, type, payload}: session_meta (id, cwd,
 * git {branch}), turn_context (model, cwd), response_item (message with
 * input_text/output_text blocks, reasoning with a summary, function_call
 * {name, arguments (a JSON string), call_id}, function_call_output
 * {call_id, output}, custom_tool_call(_output), local_shell_call,
 * web_search_call), compacted (a summary that replaced earlier turns:
 * stored as a system message) and event_msg (UI events that repeat
 * response items: skipped). Rollouts of mid-2025 have no envelopes: a
 * first line {id, timestamp, git, ...} of session facts, then the
 * response items themselves, one per line.
 * Field names checked against public parsers: see docs/transcripts.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_json.h"
#include "sync/sync_parse.h"

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

/* Context Codex injects as user messages: not a prompt. */
static int is_meta_text(const char *t)
{
    static const char *const prefixes[] = {
        "<environment_context>", "<user_instructions>",  "# AGENTS.md instructions",
        "<INSTRUCTIONS>",        "<user_shell_command>", "<turn_aborted>",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (sync_starts_with(t, prefixes[i]))
            return 1;
    return 0;
}

#define WORDS_HASH_INIT 1469598103934665603ull

/* FNV-1a over the bytes of `s` other than spaces, tabs and line ends,
 * continuing `h`: an item and its event differ in separators and
 * trailing newlines only. */
static uint64_t words_hash(uint64_t h, const char *s)
{
    for (; s && *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            continue;
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/* The tags Codex wraps an attached image in ("<image>", "</image>",
 * "<image name=[Image #1]>"): input_text blocks around an input_image. */
static int is_image_tag(const char *t)
{
    size_t n = t ? strlen(t) : 0;
    return n >= 7 && n <= 200 && t[n - 1] == '>' &&
           (strncmp(t, "<image", 6) == 0 || strcmp(t, "</image>") == 0);
}

static void add_message(json_t *p, sync_text *t, sync_record *r)
{
    const char *role = sync_json_str(p, "role");
    json_t *content = json_object_get(p, "content");
    size_t i;
    json_t *b;
    r->words = WORDS_HASH_INIT;
    if (json_is_string(content)) {
        sync_text_adds(t, json_string_value(content));
        r->words = words_hash(r->words, json_string_value(content));
    }
    json_array_foreach(content, i, b)
    {
        const char *type = sync_json_str(b, "type");
        if (!type)
            continue;
        if (strcmp(type, "input_text") == 0 || strcmp(type, "output_text") == 0 ||
            strcmp(type, "text") == 0) {
            const char *txt = sync_json_str(b, "text");
            if (is_image_tag(txt))
                continue; /* the [image] below says it */
            sync_text_sep(t);
            sync_text_adds(t, txt);
            r->words = words_hash(r->words, txt);
        } else if (strcmp(type, "input_image") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, "[image]");
        } else if (strcmp(type, "refusal") == 0) {
            sync_text_sep(t);
            sync_text_adds(t, sync_json_str(b, "refusal"));
        }
    }
    if (role && strcmp(role, "assistant") == 0) {
        r->role = "assistant";
        r->side = SYNC_SIDE_AGENT;
    } else if (role && strcmp(role, "user") == 0 && !(t->buf && is_meta_text(t->buf))) {
        r->role = "user";
        r->is_prompt = t->len > 0;
        r->side = SYNC_SIDE_USER;
    } else {
        r->role = "system"; /* developer, system, injected context */
        if (role && strcmp(role, "user") == 0)
            r->side = SYNC_SIDE_USER;
    }
}

static void add_call(const char *name, json_t *args, const char *call_id, sync_tool_ids *ids,
                     sync_text *t, sync_record *r)
{
    char *sum = sync_tool_summary(args);
    sync_tool_ids_put(ids, call_id, name);
    sync_text_adds(t, "[tool_use ");
    sync_text_adds(t, name ? name : "?");
    sync_text_adds(t, "] ");
    sync_text_adds(t, sum);
    r->role = "assistant";
    r->tool_name = sync_short_copy(name ? name : "?", 100);
    r->tool_input = sum;
    r->call_id = call_id ? sync_short_copy(call_id, 100) : NULL;
    sync_record_keep_call(r, name, call_id, args);
}

/*
 * The exit status a tool output states in its header, as Codex writes it
 * for exec_command ("...\nProcess exited with code 1\n...Output:\n") and
 * shell_command / apply_patch ("Exit code: 1\nWall time: ...\nOutput:\n"):
 * 1 for a non-zero status, else 0. Only header lines (before "Output:")
 * count, so a program that prints such a line is not misread.
 */
static int header_failed(const char *s)
{
    for (int line = 0; *s && line < 8; line++) {
        const char *end = strchr(s, '\n');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        if (n >= 7 && strncmp(s, "Output:", 7) == 0)
            return 0;
        static const char *const prefixes[] = {"Process exited with code ", "Exit code: "};
        for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
            size_t pn = strlen(prefixes[i]);
            if (n > pn && strncmp(s, prefixes[i], pn) == 0) {
                const char *d = s + pn;
                if (*d == '-')
                    d++;
                if (*d < '0' || *d > '9')
                    break;
                while (*d == '0')
                    d++;
                return *d >= '1' && *d <= '9';
            }
        }
        if (!end)
            break;
        s = end + 1;
    }
    return 0;
}

/* Output blocks (custom tools, MCP results): their text, images noted. */
static void add_output_blocks(json_t *blocks, sync_text *t)
{
    size_t i;
    json_t *b;
    json_array_foreach(blocks, i, b)
    {
        const char *type = sync_json_str(b, "type");
        const char *txt = sync_json_str(b, "text");
        if (txt) {
            sync_text_sep(t);
            sync_text_adds(t, txt);
        } else if (type && strstr(type, "image")) {
            sync_text_sep(t);
            sync_text_adds(t, "[image]");
        }
    }
}

static void add_output(json_t *p, sync_tool_ids *ids, sync_text *t, sync_record *r)
{
    json_t *out = json_object_get(p, "output");
    const char *call = sync_json_str(p, "call_id");
    const char *name = sync_tool_ids_get(ids, call);
    r->role = "tool";
    r->call_id = call ? sync_short_copy(call, 100) : NULL;
    if (name)
        r->tool_name = sync_short_copy(name, 100);
    if (json_is_array(out)) {
        add_output_blocks(out, t);
        return;
    }
    if (json_is_object(out)) {
        json_t *content = json_object_get(out, "content");
        if (json_is_array(content))
            add_output_blocks(content, t);
        else
            sync_text_adds(t, sync_json_str(out, "content"));
        if (json_is_false(json_object_get(out, "success")))
            r->is_error = 1;
        return;
    }
    const char *s = json_is_string(out) ? json_string_value(out) : NULL;
    if (!s)
        return;
    /* exec output is often {"output": "...", "metadata": {"exit_code": N}} */
    json_t *inner = (s[0] == '{') ? sync_json_loadb(s, strlen(s), 0, NULL) : NULL;
    if (json_is_object(inner) && json_is_string(json_object_get(inner, "output"))) {
        sync_text_adds(t, sync_json_str(inner, "output"));
        json_t *code = json_object_get(json_object_get(inner, "metadata"), "exit_code");
        if (json_is_integer(code) && json_integer_value(code) != 0)
            r->is_error = 1;
    } else {
        sync_text_adds(t, s);
        r->is_error = header_failed(s);
    }
    json_decref(inner);
}

static void add_reasoning(json_t *p, sync_text *t, sync_record *r)
{
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(p, "summary"), i, b)
    {
        const char *txt = sync_json_str(b, "text");
        if (!txt)
            continue;
        sync_text_sep(t);
        sync_text_adds(t, "[thinking] ");
        sync_text_adds(t, txt);
    }
    r->role = "assistant";
}

/* A response item: a message, a call, an output or reasoning. */
static void add_item(json_t *p, sync_tool_ids *ids, sync_text *t, sync_record *r)
{
    const char *type = sync_json_str(p, "type");
    if (!type)
        return;
    if (strcmp(type, "message") == 0) {
        add_message(p, t, r);
    } else if (strcmp(type, "function_call") == 0) {
        add_call(sync_json_str(p, "name"), json_object_get(p, "arguments"),
                 sync_json_str(p, "call_id"), ids, t, r);
    } else if (strcmp(type, "custom_tool_call") == 0) {
        add_call(sync_json_str(p, "name"), json_object_get(p, "input"), sync_json_str(p, "call_id"),
                 ids, t, r);
    } else if (strcmp(type, "local_shell_call") == 0) {
        json_t *action = json_object_get(p, "action");
        const char *id = sync_json_str(p, "call_id");
        add_call("shell", action ? action : json_null(), id ? id : sync_json_str(p, "id"), ids, t,
                 r);
    } else if (strcmp(type, "web_search_call") == 0) {
        add_call("web_search", json_object_get(p, "action"), NULL, ids, t, r);
    } else if (strcmp(type, "function_call_output") == 0 ||
               strcmp(type, "custom_tool_call_output") == 0 ||
               strcmp(type, "local_shell_call_output") == 0) {
        add_output(p, ids, t, r);
    } else if (strcmp(type, "reasoning") == 0) {
        add_reasoning(p, t, r);
    }
}

/*
 * A token_count event: info.last_token_usage is the call just made
 * (input_tokens counts the cached ones too; output_tokens the reasoning
 * ones), info.total_token_usage the session's running sum. The running
 * total keys the call within its session: Codex writes some events twice
 * with the same sums, and those are one call. Events without
 * last_token_usage (or with no tokens) record none. The model is the
 * turn's (turn_context), which sync supplies.
 */
static void codex_usage(json_t *payload, sync_usage *u)
{
    const char *et = sync_json_str(payload, "type");
    if (!et || strcmp(et, "token_count") != 0)
        return;
    json_t *info = json_object_get(payload, "info");
    json_t *last = json_object_get(info, "last_token_usage");
    json_t *total = json_object_get(info, "total_token_usage");
    if (!json_is_object(last))
        return;
    int64_t in = sync_json_count(json_object_get(last, "input_tokens"));
    int64_t cached = sync_json_count(json_object_get(last, "cached_input_tokens"));
    int64_t out = sync_json_count(json_object_get(last, "output_tokens"));
    if (cached > in)
        cached = in;
    if (in + out == 0)
        return;
    u->input = in - cached;
    u->cache_read = cached;
    u->output = out;
    u->reasoning = sync_json_count(json_object_get(last, "reasoning_output_tokens"));
    if (json_is_object(total)) { /* else never taken for a copy */
        char key[96];
        snprintf(key, sizeof key, "codex-total:%lld:%lld:%lld",
                 (long long)sync_json_count(json_object_get(total, "total_tokens")),
                 (long long)sync_json_count(json_object_get(total, "input_tokens")),
                 (long long)sync_json_count(json_object_get(total, "output_tokens")));
        u->key = sync_short_copy(key, sizeof key);
        u->key_per_session = 1;
    }
    u->model_from_session = 1;
    u->present = 1;
}

int sync_codex_parse_line(const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
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
    sync_text t = {0};
    const char *type = sync_json_str(root, "type");
    json_t *payload = json_object_get(root, "payload");
    r->timestamp = dup_nonempty(sync_json_str(root, "timestamp"));
    if (type && strcmp(type, "session_meta") == 0) {
        r->kind = SYNC_META;
        /* a forked or sub-agent thread also carries its parent's
           session_meta: sync keeps only the facts of the file's own id */
        r->meta_session_id = dup_nonempty(sync_json_str(payload, "id"));
        const char *parent = sync_json_str(payload, "forked_from_id");
        if (!parent)
            parent = sync_json_str(payload, "parent_thread_id");
        if (!parent)
            parent = sync_json_str(
                json_object_get(json_object_get(json_object_get(payload, "source"), "subagent"),
                                "thread_spawn"),
                "parent_thread_id");
        r->parent_session_id = dup_nonempty(parent);
        r->cwd = dup_nonempty(sync_json_str(payload, "cwd"));
        r->git_branch = dup_nonempty(sync_json_str(json_object_get(payload, "git"), "branch"));
        r->git_origin =
            dup_nonempty(sync_json_str(json_object_get(payload, "git"), "repository_url"));
        r->model = dup_nonempty(sync_json_str(payload, "model"));
        if (!r->timestamp)
            r->timestamp = dup_nonempty(sync_json_str(payload, "timestamp"));
        goto done;
    }
    if (!type && !payload && sync_json_str(root, "id") && r->timestamp) {
        /* mid-2025 rollouts: the first line holds the session's facts */
        r->kind = SYNC_META;
        r->cwd = dup_nonempty(sync_json_str(root, "cwd"));
        r->git_branch = dup_nonempty(sync_json_str(json_object_get(root, "git"), "branch"));
        r->git_origin = dup_nonempty(sync_json_str(json_object_get(root, "git"), "repository_url"));
        goto done;
    }
    if (type && strcmp(type, "compacted") == 0) {
        /* the summary that replaced the earlier turns in the model's context */
        const char *sum = sync_json_str(payload, "message");
        if (sum && *sum) {
            sync_text_adds(&t, "[compacted] ");
            sync_text_adds(&t, sum);
            r->role = "system";
        }
    }
    if (type && strcmp(type, "event_msg") == 0)
        codex_usage(payload, &r->usage);
    if (type && strcmp(type, "event_msg") == 0) {
        /* The UI's record of a message: often a copy of a response item,
           sometimes the only record (Codex Desktop's prompts, events-only
           threads); sync_codex_is_copy tells them apart. */
        const char *et = sync_json_str(payload, "type");
        const char *msg = sync_json_str(payload, "message");
        if (et && msg && *msg) {
            r->words = words_hash(WORDS_HASH_INIT, msg);
            if (strcmp(et, "user_message") == 0) {
                sync_text_adds(&t, msg);
                r->role = is_meta_text(msg) ? "system" : "user";
                r->is_prompt = r->role[0] == 'u';
                r->side = SYNC_SIDE_USER;
            } else if (strcmp(et, "agent_message") == 0) {
                sync_text_adds(&t, msg);
                r->role = "assistant";
                r->side = SYNC_SIDE_AGENT;
            }
            r->from_event = r->role != NULL;
        }
    }
    if (type && strcmp(type, "turn_context") == 0) {
        r->kind = SYNC_META;
        r->cwd = dup_nonempty(sync_json_str(payload, "cwd"));
        r->model = dup_nonempty(sync_json_str(payload, "model"));
        goto done;
    }
    if (type && strcmp(type, "response_item") == 0 && json_is_object(payload))
        add_item(payload, ids, &t, r);
    else if (type && !payload) /* older rollouts: the item is the line */
        add_item(root, ids, &t, r);
    if (!r->role || (t.len == 0 && !r->tool_name)) {
        free(t.buf);
        free(r->tool_name);
        free(r->tool_input);
        free(r->call_id);
        r->tool_name = r->tool_input = r->call_id = NULL;
        r->role = NULL;
        r->is_prompt = 0;
        r->is_error = 0;
        r->from_event = 0;
        r->side = SYNC_SIDE_NONE;
        goto done; /* other events, unknown: ignored */
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

/* Pairs `hash` with an unpaired entry of the other kind: 1 when found
 * (the entry is used up), else 0 and the message is remembered. */
static int copies_pair(sync_copy *ring, int *n, uint64_t hash, int from_event)
{
    for (int i = 0; i < *n; i++) {
        if (ring[i].hash != hash || ring[i].from_event == from_event)
            continue;
        memmove(ring + i, ring + i + 1, (size_t)(*n - i - 1) * sizeof *ring);
        (*n)--;
        return 1;
    }
    if (*n == SYNC_COPIES_MAX) {
        memmove(ring, ring + 1, (size_t)(SYNC_COPIES_MAX - 1) * sizeof *ring);
        (*n)--;
    }
    ring[*n].hash = hash;
    ring[*n].from_event = from_event;
    (*n)++;
    return 0;
}

int sync_codex_is_copy(sync_copies *c, const sync_record *r)
{
    if (r->kind != SYNC_MESSAGE)
        return 0;
    if (r->side == SYNC_SIDE_USER) {
        /* the user speaks: the agent's previous words are settled */
        c->nagent = 0;
        c->agent_clears++;
        return copies_pair(c->user, &c->nuser, r->words, r->from_event);
    }
    if (r->side == SYNC_SIDE_AGENT) {
        int copy = copies_pair(c->agent, &c->nagent, r->words, r->from_event);
        c->nuser = 0;
        c->user_clears++;
        return copy;
    }
    if (strcmp(r->role, "assistant") == 0 || strcmp(r->role, "tool") == 0) {
        c->nuser = 0; /* the agent answered the turn's input */
        c->user_clears++;
    }
    return 0;
}
