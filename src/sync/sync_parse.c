/*
 * Helpers shared by the transcript parsers: UTF-8 repair (jansson rejects
 * invalid UTF-8, real transcripts contain some), bounded text assembly,
 * short single-line copies and tool-input summaries.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpage/mcpage.h>

#include "sync/sync_json.h"
#include "sync/sync_parse.h"

void sync_record_clear(sync_record *r)
{
    free(r->text);
    free(r->tool_name);
    free(r->tool_input);
    free(r->call_id);
    free(r->timestamp);
    free(r->cwd);
    free(r->model);
    free(r->git_branch);
    free(r->summary);
    free(r->parent_session_id);
    free(r->meta_session_id);
    free(r->git_origin);
    sync_usage_clear(&r->usage);
    json_decref(r->calls);
    memset(r, 0, sizeof *r);
}

void sync_record_keep_call(sync_record *r, const char *name, const char *call_id, json_t *args)
{
    if (!name || !args || json_is_null(args))
        return;
    if (!r->calls && !(r->calls = json_array()))
        return;
    json_t *c = json_pack("{s:s, s:s?, s:O}", "name", name, "id", call_id, "args", args);
    if (c)
        json_array_append_new(r->calls, c);
}

void sync_usage_clear(sync_usage *u)
{
    free(u->key);
    free(u->model);
    free(u->timestamp);
    memset(u, 0, sizeof *u);
}

int64_t sync_json_count(json_t *v)
{
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        return n > 0 && n <= (json_int_t)9007199254740992LL ? (int64_t)n : 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d > 0 && d <= 9007199254740992.0 && d == (double)(int64_t)d)
            return (int64_t)d;
    }
    return 0;
}

size_t sync_utf8_seq(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

int sync_utf8_repair(const char *in, size_t len, char **out, size_t *outlen)
{
    const unsigned char *p = (const unsigned char *)in;
    *out = NULL;
    *outlen = 0;
    size_t i = 0;
    while (i < len) {
        /* ASCII eight bytes at a time: most of a transcript */
        uint64_t w;
        while (len - i >= 8 && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ull) == 0))
            i += 8;
        if (i == len)
            break;
        size_t n = sync_utf8_seq(p + i, len - i);
        if (!n)
            break;
        i += n;
    }
    if (i == len)
        return 0;
    /* Worst case every byte becomes 3 bytes of U+FFFD. */
    if (len > (SIZE_MAX - 1) / 3)
        return MCPAGE_ERANGE;
    char *o = malloc(len * 3 + 1);
    if (!o)
        return MCPAGE_ENOMEM;
    memcpy(o, in, i);
    size_t w = i;
    while (i < len) {
        size_t n = sync_utf8_seq(p + i, len - i);
        if (n) {
            memcpy(o + w, p + i, n);
            w += n;
            i += n;
        } else {
            memcpy(o + w, "\xEF\xBF\xBD", 3);
            w += 3;
            i++;
        }
    }
    o[w] = 0;
    *out = o;
    *outlen = w;
    return 0;
}

/* The largest prefix length <= max that ends on a UTF-8 boundary. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

void sync_text_add(sync_text *t, const char *s, size_t n)
{
    if (t->oom || !n)
        return;
    size_t room = SYNC_TEXT_MAX - t->len;
    if (t->dropped || n > room) {
        size_t keep = t->dropped ? 0 : utf8_cut(s, n, room);
        t->dropped += n - keep;
        n = keep;
        if (!n)
            return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->oom = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = 0;
}

void sync_text_adds(sync_text *t, const char *s)
{
    if (s)
        sync_text_add(t, s, strlen(s));
}

void sync_text_sep(sync_text *t)
{
    if (t->len)
        sync_text_add(t, "\n", 1);
}

char *sync_text_finish(sync_text *t)
{
    if (t->oom) {
        free(t->buf);
        memset(t, 0, sizeof *t);
        return NULL;
    }
    char *out = t->buf;
    if (t->dropped) {
        char note[160];
        int k = snprintf(note, sizeof note,
                         "\n[... %zu more bytes not indexed; the raw transcript has all of them]",
                         t->dropped);
        char *b = realloc(out, t->len + (size_t)k + 1);
        if (b) {
            memcpy(b + t->len, note, (size_t)k + 1);
            out = b;
        }
    }
    if (!out)
        out = calloc(1, 1);
    memset(t, 0, sizeof *t);
    return out;
}

char *sync_short_copy(const char *s, size_t max)
{
    if (!s)
        return NULL;
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        s++;
    size_t len = strlen(s);
    size_t n = utf8_cut(s, len, max);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        o[i] = (s[i] == '\n' || s[i] == '\t' || s[i] == '\r') ? ' ' : s[i];
    while (n > 0 && o[n - 1] == ' ')
        n--;
    o[n] = 0;
    return o;
}

/* Text agents put on the user's side that is no request of the user's. */
static const char *const injected_prompts[] = {
    "Your task is to create a detailed summary of the conversation",
    "This session is being continued from a previous conversation",
    "Caveat: The messages below were generated",
    "<system-reminder>",
    "<local-command-",
    "<command-name>",
    "<command-message>",
    "[Request interrupted",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<session_context>",
    "This is the Gemini CLI. We are setting up the context",
};

char *sync_title_of_prompt(const char *text)
{
    if (!text)
        return NULL;
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
        text++;
    if (strcmp(text, "Warmup") == 0)
        return NULL; /* Claude Code's sub-agent warm-up */
    for (size_t i = 0; i < sizeof injected_prompts / sizeof injected_prompts[0]; i++)
        if (sync_starts_with(text, injected_prompts[i]))
            return NULL;
    if (sync_starts_with(text, "# Files mentioned by the user")) {
        /* "## My request for Codex:" (or "## My request:") then the request */
        const char *req = strstr(text, "\n## My request");
        const char *colon = req ? strchr(req + 1, ':') : NULL;
        const char *eol = req ? strchr(req + 1, '\n') : NULL;
        if (!colon || (eol && eol < colon))
            return NULL;
        text = colon + 1;
        while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
            text++;
        if (!*text)
            return NULL;
    }
    return sync_short_copy(text, SYNC_TITLE_MAX);
}

void sync_record_call(sync_record *r, const char *role, const char *name, const char *call_id,
                      json_t *args, const char *ts)
{
    char *sum = sync_tool_summary(args);
    sync_text c = {0};
    sync_text_adds(&c, "[tool_use ");
    sync_text_adds(&c, name ? name : "?");
    sync_text_adds(&c, "] ");
    sync_text_adds(&c, sum);
    r->kind = SYNC_MESSAGE;
    r->role = role;
    r->text = sync_text_finish(&c);
    r->timestamp = ts && *ts ? sync_short_copy(ts, 64) : NULL;
    r->tool_name = sync_short_copy(name ? name : "?", 100);
    r->tool_input = sum;
    r->call_id = call_id && *call_id ? sync_short_copy(call_id, 100) : NULL;
    sync_record_keep_call(r, name, call_id, args);
}

void sync_text_content(sync_text *t, json_t *content)
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
        const char *text = json_is_string(b) ? json_string_value(b) : sync_json_str(b, "text");
        if (type && strcmp(type, "image") == 0)
            text = "[image]";
        if (text) {
            sync_text_sep(t);
            sync_text_adds(t, text);
        }
    }
}

char *sync_iso_ms(double ms)
{
    if (!(ms > 0 && ms <= 253402300799999.0))
        return NULL;
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm))
        return NULL;
    char buf[96];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)((int64_t)ms % 1000));
    return sync_short_copy(buf, sizeof buf);
}

json_t *sync_json_text(const char *p, size_t n)
{
    char *fixed = NULL;
    size_t fixed_len = 0;
    if (sync_utf8_repair(p, n, &fixed, &fixed_len) < 0)
        return NULL;
    const char *t = fixed ? fixed : p;
    size_t tn = fixed ? fixed_len : n;
    char *nonul = NULL;
    if (memchr(t, 0, tn)) {
        /* a NUL would be written as \u0000, which readers reject */
        size_t k = 0;
        nonul = tn <= (SIZE_MAX - 1) / 3 ? malloc(tn * 3 + 1) : NULL;
        for (size_t i = 0; nonul && i < tn; i++) {
            if (t[i]) {
                nonul[k++] = t[i];
            } else {
                memcpy(nonul + k, "\xEF\xBF\xBD", 3);
                k += 3;
            }
        }
        t = nonul;
        tn = k;
    }
    json_t *v = t ? json_stringn_nocheck(t, tn) : NULL;
    free(nonul);
    free(fixed);
    return v;
}

const char *sync_json_str(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

char *sync_tool_summary(json_t *input)
{
    /* absolute_path, dir_path: Gemini CLI's read_file, list_directory;
       filePath: OpenCode's read, edit, write */
    static const char *const keys[] = {
        "command",  "cmd",           "file_path",   "path",
        "pattern",  "query",         "url",         "description",
        "prompt",   "notebook_path", "skill",       "absolute_path",
        "dir_path", "filePath",      "target_file", "target_directory"};
    json_t *parsed = NULL;
    char *out = NULL;
    if (json_is_string(input)) {
        /* Codex passes arguments as a JSON string. */
        const char *txt = json_string_value(input);
        parsed = sync_json_loadb(txt, strlen(txt), JSON_DECODE_ANY, NULL);
        if (!json_is_object(parsed)) {
            json_decref(parsed);
            return sync_short_copy(txt, SYNC_TOOL_INPUT_MAX);
        }
        input = parsed;
    }
    if (json_is_object(input)) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            json_t *v = json_object_get(input, keys[i]);
            if (json_is_string(v)) {
                out = sync_short_copy(json_string_value(v), SYNC_TOOL_INPUT_MAX);
                goto done;
            }
            if (json_is_array(v)) {
                /* a command as an argv array: join it with spaces */
                sync_text t = {0};
                size_t j;
                json_t *e;
                json_array_foreach(v, j, e)
                {
                    if (!json_is_string(e))
                        continue;
                    if (t.len)
                        sync_text_add(&t, " ", 1);
                    sync_text_adds(&t, json_string_value(e));
                    if (t.len > SYNC_TOOL_INPUT_MAX)
                        break;
                }
                char *joined = sync_text_finish(&t);
                out = sync_short_copy(joined, SYNC_TOOL_INPUT_MAX);
                free(joined);
                goto done;
            }
        }
    }
    if (input) {
        char *dump = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY);
        out = sync_short_copy(dump, SYNC_TOOL_INPUT_MAX);
        free(dump);
    }
done:
    json_decref(parsed);
    return out;
}

void sync_tool_ids_put(sync_tool_ids *ids, const char *id, const char *name)
{
    if (!id || !name)
        return;
    unsigned i = ids->next++ % SYNC_TOOL_IDS;
    snprintf(ids->id[i], sizeof ids->id[i], "%s", id);
    snprintf(ids->name[i], sizeof ids->name[i], "%s", name);
}

const char *sync_tool_ids_get(const sync_tool_ids *ids, const char *id)
{
    if (!id || !*id)
        return NULL;
    for (unsigned i = 0; i < SYNC_TOOL_IDS; i++)
        if (ids->id[i][0] && strncmp(ids->id[i], id, sizeof ids->id[i] - 1) == 0)
            return ids->name[i];
    return NULL;
}

int sync_starts_with(const char *text, const char *prefix)
{
    if (!text)
        return 0;
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
        text++;
    return strncmp(text, prefix, strlen(prefix)) == 0;
}
