/*
 * The engine of described sources (sync_desc.h): one reader for every
 * agent told as data. It plugs into the folded sync (sync_fold.c) as a
 * format whose fold_line, expand, convert and load follow a description:
 *
 * - fold_line: the first rule whose tests pass decides what a record is:
 *   session facts, a message (kept in order; a record whose id is known
 *   replaces that message in place, so the same id is one message; a
 *   rewind drops a message and what followed), or nothing;
 * - expand: a message record becomes the messages mcpage stores: its
 *   text (text and thinking blocks), one message per tool call, one per
 *   tool result, with role, time, model and token usage;
 * - convert: a JSON document becomes JSON Lines: a first line
 *   {"$document": the document without its records}, then one record per
 *   line (the session's raw copy, read_raw shows it so);
 * - load: a session with sidecar files (meta.json beside messages.jsonl)
 *   is {"$sidecar": the first}, {"$sidecar1": the second}... followed by
 *   the session file's lines.
 *
 * Discovery walks the globs under the agent's home; links are followed
 * only where they resolve inside the home, only regular files are taken,
 * and the walk is bounded in depth and in files.
 */
#define _GNU_SOURCE /* open_memstream */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "page/base64.h"
#include "page/digest.h"
#include "page/term.h"
#include "sync/sync_cursor_ide.h"
#include "sync/sync_desc.h"
#include "sync/sync_internal.h"
#include "sync/sync_json.h"
#include "sync/sync_source.h"
#include "sync/sync_vscode_chat.h"

#define ENGINE_CALLS_MAX   1000       /* tool calls and results of one record */
#define ENGINE_SIDECAR_MAX (16 << 20) /* bytes of a sidecar file */
#define ENGINE_FILES_MAX   1000000    /* files one description finds */
#define ENGINE_RECORD_MAX  (64 << 20) /* bytes of one record file (a folder layout) */
#define ENGINE_RECORDS_MAX 100000     /* record files of one session's folder */

static void percent_decode(char *s);

/* ---- values --------------------------------------------------------------- */

static json_t *at_path(json_t *v, const sd_path *p)
{
    for (size_t i = 0; v && i < p->n; i++) {
        const char *t = p->tok[i];
        if (json_is_object(v)) {
            v = json_object_get(v, t);
        } else if (json_is_array(v)) {
            char *end = NULL;
            long k = strtol(t, &end, 10);
            if (!*t || *end)
                return NULL;
            if (k < 0)
                k += (long)json_array_size(v);
            v = k >= 0 ? json_array_get(v, (size_t)k) : NULL;
        } else {
            return NULL;
        }
    }
    return v;
}

/* The first alternative that holds a value (not null, not ""). */
static json_t *v_json(json_t *root, const sd_value *v)
{
    for (size_t i = 0; i < v->n; i++) {
        json_t *j = at_path(root, &v->alt[i]);
        if (!j || json_is_null(j) || (json_is_string(j) && !*json_string_value(j)))
            continue;
        return j;
    }
    return NULL;
}

static int v_set(const sd_value *v)
{
    return v->n > 0 || v->konst != NULL;
}

/* A value as text: a string as it is, a number or boolean written out;
 * NULL when absent or another kind. `tmp` holds a written-out one. */
static const char *v_str(json_t *root, const sd_value *v, char *tmp, size_t tmplen)
{
    if (v->konst)
        return v->konst;
    json_t *j = v_json(root, v);
    if (json_is_string(j))
        return json_string_value(j);
    if (json_is_integer(j)) {
        (void)snprintf(tmp, tmplen, "%lld", (long long)json_integer_value(j));
        return tmp;
    }
    if (json_is_real(j)) {
        (void)snprintf(tmp, tmplen, "%.17g", json_real_value(j));
        return tmp;
    }
    if (json_is_boolean(j))
        return json_is_true(j) ? "true" : "false";
    return NULL;
}

static int truthy(json_t *j)
{
    if (json_is_true(j))
        return 1;
    if (json_is_integer(j))
        return json_integer_value(j) != 0;
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        return *s && strcmp(s, "false") != 0 && strcmp(s, "0") != 0 && strcmp(s, "success") != 0 &&
               strcmp(s, "ok") != 0;
    }
    return json_is_object(j) || (json_is_array(j) && json_array_size(j) > 0);
}

static int v_bool(json_t *root, const sd_value *v)
{
    if (v->konst)
        return strcmp(v->konst, "true") == 0;
    return truthy(v_json(root, v));
}

/* A count of tokens; -1 when absent. */
static int64_t v_int(json_t *root, const sd_value *v)
{
    json_t *j = v_json(root, v);
    if (json_is_integer(j))
        return json_integer_value(j) >= 0 ? (int64_t)json_integer_value(j) : -1;
    if (json_is_real(j) && json_real_value(j) >= 0 && json_real_value(j) < 9e18)
        return (int64_t)json_real_value(j);
    if (json_is_string(j)) {
        char *end = NULL;
        long long k = strtoll(json_string_value(j), &end, 10);
        return *end == 0 && k >= 0 ? (int64_t)k : -1;
    }
    return -1;
}

/* A time as ISO 8601: text as it is (cut at 64 bytes), a number as
 * seconds (below 1e11) or milliseconds since 1970. */
static char *v_time(json_t *root, const sd_value *v)
{
    json_t *j = v->konst ? NULL : v_json(root, v);
    if (json_is_string(j)) {
        char *t = sync_short_copy(json_string_value(j), 64);
        /* SQLite's CURRENT_TIMESTAMP, "YYYY-MM-DD HH:MM:SS" in UTC: as ISO 8601 */
        size_t tl = t ? strlen(t) : 0;
        size_t frac = tl > 19 && t[19] == '.' ? strspn(t + 20, "0123456789") : 0;
        if (t && tl >= 19 && t[4] == '-' && t[10] == ' ' && t[13] == ':' &&
            (tl == 19 || (frac > 0 && 20 + frac == tl))) {
            char iso[48];
            (void)snprintf(iso, sizeof iso, "%.10sT%sZ", t, t + 11);
            free(t);
            t = sync_dup(iso);
        }
        return t;
    }
    if (json_is_number(j)) {
        double x = json_number_value(j);
        return sync_iso_ms(x < 1e11 ? x * 1000.0 : x);
    }
    return NULL;
}

/* The text after `after` (up to `until`, which must follow, or without it
 * the line's end) in the first string of j (a string, or inside an array or object) that holds
 * `after`; bounded in depth and in the strings looked at. */
static char *find_between(json_t *j, const char *after, const char *until, size_t max, int depth,
                          size_t *budget)
{
    if (!j || depth > 8 || *budget == 0)
        return NULL;
    if (json_is_string(j)) {
        (*budget)--;
        const char *s = json_string_value(j);
        const char *at = strstr(s, after);
        if (!at)
            return NULL;
        at += strlen(after);
        const char *end = until ? strstr(at, until) : at + strcspn(at, "\r\n");
        if (!end) /* the marker without its end: not this one */
            return NULL;
        size_t n = (size_t)(end - at);
        if (n == 0)
            return NULL;
        char *t = malloc(n + 1);
        if (!t)
            return NULL;
        memcpy(t, at, n);
        t[n] = 0;
        char *cut = sync_short_copy(t, max);
        free(t);
        return cut;
    }
    size_t i;
    const char *k;
    json_t *e;
    if (json_is_array(j)) {
        json_array_foreach(j, i, e)
        {
            char *t = find_between(e, after, until, max, depth + 1, budget);
            if (t)
                return t;
        }
    } else if (json_is_object(j)) {
        json_object_foreach(j, k, e)
        {
            char *t = find_between(e, after, until, max, depth + 1, budget);
            if (t)
                return t;
        }
    }
    return NULL;
}

static char *v_copy(json_t *root, const sd_value *v, size_t max)
{
    if (v->after) {
        size_t budget = 10000; /* strings looked at */
        for (size_t i = 0; i < v->n; i++) {
            char *t = find_between(at_path(root, &v->alt[i]), v->after, v->until, max, 0, &budget);
            if (t)
                return t;
        }
        return NULL;
    }
    char tmp[64];
    const char *s = v_str(root, v, tmp, sizeof tmp);
    return s && *s ? sync_short_copy(s, max) : NULL;
}

/* ---- rules ---------------------------------------------------------------- */

static int scalar_eq(json_t *a, json_t *b)
{
    if (json_is_null(b))
        return !a || json_is_null(a);
    if (!a)
        return 0;
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

static int when_ok(json_t *root, const sd_when *w)
{
    json_t *v = at_path(root, &w->path);
    if (w->present >= 0)
        return (v != NULL) == (w->present == 1);
    size_t i;
    json_t *e;
    json_array_foreach(w->want, i, e)
    {
        if (scalar_eq(v, e))
            return 1;
    }
    return 0;
}

static const sd_rule *pick_rule(const sync_desc *d, json_t *root)
{
    for (size_t i = 0; i < d->nrules; i++) {
        const sd_rule *r = &d->rules[i];
        size_t k = 0;
        while (k < r->nwhen && when_ok(root, &r->when[k]))
            k++;
        if (k == r->nwhen)
            return r;
    }
    return NULL;
}

/* A session id or parent with the source's prefix, malloc'd. */
static char *prefixed(const sync_desc *d, const char *id)
{
    if (!id || !*id)
        return NULL;
    char buf[STORE_ID_MAX + 1];
    (void)snprintf(buf, sizeof buf, "%s%.*s", d->id_prefix,
                   (int)(STORE_ID_MAX - strlen(d->id_prefix)), id);
    return sync_dup(buf);
}

static void set_owned(char **slot, char *val)
{
    if (!val)
        return;
    free(*slot);
    *slot = val;
}

/* The session facts a rule names, into the fold. */
static void take_facts(const sync_desc *d, const sd_rule *r, json_t *root, sync_fold *f)
{
    char tmp[64];
    if (v_set(&r->s_id) && !f->session_id)
        set_owned(&f->session_id, prefixed(d, v_str(root, &r->s_id, tmp, sizeof tmp)));
    if (v_set(&r->s_parent) && !f->parent)
        set_owned(&f->parent, prefixed(d, v_str(root, &r->s_parent, tmp, sizeof tmp)));
    if (v_set(&r->s_cwd) && !f->cwd) {
        char *cwd = v_copy(root, &r->s_cwd, SYNC_PATH_MAX);
        if (cwd && strncmp(cwd, "file://", 7) == 0) {
            /* an editor's workspace URI: its path, percent-decoded */
            memmove(cwd, cwd + 7, strlen(cwd + 7) + 1);
            percent_decode(cwd);
        }
        set_owned(&f->cwd, cwd);
    }
    if (v_set(&r->s_title))
        set_owned(&f->title, v_copy(root, &r->s_title, SYNC_TITLE_MAX));
    if (v_set(&r->s_model))
        set_owned(&f->model, v_copy(root, &r->s_model, 100));
    if (v_set(&r->s_branch))
        set_owned(&f->branch, v_copy(root, &r->s_branch, 200));
    if (v_set(&r->s_time) && !f->start_time)
        set_owned(&f->start_time, v_time(root, &r->s_time));
}

/* The record of a line: the line's object, or the object inside a
 * $document / $sidecar wrapper (*wrap 1, and 2 + the sidecar's index). */
static json_t *unwrap(json_t *root, int *wrap)
{
    *wrap = 0;
    if (json_object_size(root) != 1)
        return root;
    json_t *v = json_object_get(root, "$document");
    if (v) {
        *wrap = 1;
        return v;
    }
    const char *key = json_object_iter_key(json_object_iter(root));
    if (key && strncmp(key, "$sidecar", 8) == 0) {
        /* "$sidecar" is the first sidecar, "$sidecar1".. the others */
        int k = key[8] ? key[8] - '0' : 0;
        if (k >= 0 && k < SYNC_DESC_SIDECARS && (!key[8] || !key[9])) {
            *wrap = 2 + k;
            return json_object_get(root, key);
        }
    }
    return root;
}

static const char *map_role(const sd_rule *r, const char *src);

int sync__desc_fold_line(const sync_desc *d, sync_fold *f, const char *line, size_t len,
                         int64_t off, int64_t line_no, char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    if (!json_is_object(root)) {
        (void)snprintf(why, whylen, "%s", root ? "not a JSON object" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int wrap = 0;
    json_t *rec = unwrap(root, &wrap);
    int rc = 0;
    if (wrap) {
        if (wrap == 1 || (size_t)(wrap - 2) < d->nsidecar)
            take_facts(d, wrap == 1 ? &d->doc : &d->side[wrap - 2], rec, f);
        json_t *calls = wrap == 1 && d->usage_by.n ? at_path(rec, &d->usage_by) : NULL;
        if (json_is_object(calls)) {
            /* the document's calls by message id: kept for the store step */
            json_decref(f->doc_usage);
            f->doc_usage = json_incref(calls);
        }
        if (wrap == 1 && d->db && d->db->s_time && !f->start_time) {
            /* a database session's start: its time column */
            sd_value t = {.n = 1};
            char *tok[1] = {d->db->s_time};
            t.alt[0].tok = tok;
            t.alt[0].n = 1;
            f->start_time = v_time(rec, &t);
        }
        json_decref(root);
        return 0;
    }
    const sd_rule *r = pick_rule(d, rec);
    if (!r || r->kind == SD_SKIP) {
        json_decref(root);
        return 0;
    }
    take_facts(d, r, rec, f);
    if (r->kind == SD_MESSAGE) {
        char tmp[64];
        const char *rewind =
            v_set(&r->rewind_to) ? v_str(rec, &r->rewind_to, tmp, sizeof tmp) : NULL;
        const char *id = v_set(&r->id) ? v_str(rec, &r->id, tmp, sizeof tmp) : NULL;
        char rtmp[64];
        const char *role = map_role(r, v_str(rec, &r->role, rtmp, sizeof rtmp));
        if (rewind) {
            long at = sync_fold_find(f, rewind);
            sync_fold_truncate(f, at >= 0 ? (size_t)at : 0);
            f->join_open = 0;
        } else {
            long at = id ? sync_fold_find(f, id) : -1;
            if (at >= 0) {
                /* written again: the newest version, at the first one's place */
                f->v[at].offset = off;
                f->v[at].length = (int64_t)len;
                f->v[at].line_no = line_no;
                f->v[at].sub = -1;
                f->join_open = 0;
            } else if (r->join && f->join_open && f->join_open == f->n &&
                       strncmp(f->join_key, role, sizeof f->join_key) == 0) {
                /* a stream fragment of the message just before: its entry
                   spans the lines up to this one (expanded together) */
                sync_fold_entry *e = &f->v[f->n - 1];
                e->length = off + (int64_t)len - e->offset;
            } else {
                rc = sync_fold_push(f, id, off, (int64_t)len, line_no, -1);
                f->join_open = r->join ? f->n : 0;
                (void)snprintf(f->join_key, sizeof f->join_key, "%s", role);
            }
        }
    }
    json_decref(root);
    return rc;
}

/* ---- blocks --------------------------------------------------------------- */

enum { B_NONE, B_TEXT, B_THINKING, B_CALL, B_RESULT, B_IMAGE, B_FILE };

static int in_list(const char *s, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, v[i]) == 0)
            return 1;
    return 0;
}

/* What a block is, by its type (the common vocabularies of Anthropic,
 * OpenAI, Gemini, Pi and the AI SDK, plus the description's own), else
 * by the keys it holds (Gemini parts). */
static int block_kind(const sync_desc *d, json_t *b)
{
    static const char *const text[] = {"text", "input_text", "output_text", "markdown"};
    static const char *const think[] = {"thinking", "reasoning", "redacted_thinking",
                                        "reasoning_content", "redactedThinking"};
    static const char *const call[] = {
        "tool_use",        "toolCall",     "tool_call", "tool-call",   "function_call",
        "server_tool_use", "tool_request", "function",  "toolRequest", "toolUse"};
    static const char *const result[] = {
        "tool_result",   "toolResult",        "tool-result", "function_call_output",
        "tool_response", "function_response", "toolResponse"};
    static const char *const image[] = {"image", "image_url", "input_image", "Image"};
    if (json_is_string(b))
        return B_TEXT;
    if (!json_is_object(b))
        return B_NONE;
    const char *t = sync_json_str(b, "type");
    if (t) {
        if (in_list(t, (const char *const *)d->text_types, d->ntext_types) ||
            in_list(t, text, sizeof text / sizeof *text))
            return B_TEXT;
        if (in_list(t, (const char *const *)d->thinking_types, d->nthinking_types) ||
            in_list(t, think, sizeof think / sizeof *think))
            return B_THINKING;
        if (in_list(t, (const char *const *)d->call_types, d->ncall_types) ||
            in_list(t, call, sizeof call / sizeof *call))
            return B_CALL;
        if (in_list(t, (const char *const *)d->result_types, d->nresult_types) ||
            in_list(t, result, sizeof result / sizeof *result))
            return B_RESULT;
        if (in_list(t, image, sizeof image / sizeof *image))
            return B_IMAGE;
        if (strcmp(t, "file") == 0 || strcmp(t, "document") == 0)
            return B_FILE;
    }
    if (json_is_object(json_object_get(b, "functionCall")))
        return B_CALL;
    if (json_is_object(json_object_get(b, "functionResponse")))
        return B_RESULT;
    if (json_is_object(json_object_get(b, "inlineData")))
        return B_IMAGE;
    if (json_is_object(json_object_get(b, "fileData")))
        return B_FILE;
    if (json_is_string(json_object_get(b, "text")))
        return json_is_true(json_object_get(b, "thought")) ? B_THINKING : B_TEXT;
    return B_NONE;
}

static const char *first_str(json_t *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *s = sync_json_str(o, keys[i]);
        if (s && *s)
            return s;
    }
    return NULL;
}

static json_t *first_of(json_t *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(o, keys[i]);
        if (v && !json_is_null(v))
            return v;
    }
    return NULL;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* A tool call block's name, input and id (Gemini's functionCall and
 * OpenAI's function object looked into). */
static void call_parts(json_t *b, const char **name, json_t **input, const char **id)
{
    static const char *const names[] = {"name", "toolName", "tool_name", "tool"};
    static const char *const inputs[] = {"input", "arguments", "args", "parameters", "params"};
    static const char *const ids[] = {"id",          "toolCallId", "call_id",  "tool_call_id",
                                      "tool_use_id", "callId",     "toolUseId"};
    json_t *inner = json_object_get(b, "functionCall");
    if (!json_is_object(inner))
        inner = json_object_get(b, "function");
    json_t *tc = json_object_get(b, "toolCall"); /* Goose: {status, value: {name, arguments}} */
    if (!json_is_object(inner) && json_is_object(json_object_get(tc, "value")))
        inner = json_object_get(tc, "value");
    *id = first_str(b, ids, COUNT(ids));
    if (json_is_object(inner)) {
        *name = first_str(inner, names, COUNT(names));
        *input = first_of(inner, inputs, COUNT(inputs));
        if (!*id)
            *id = first_str(inner, ids, COUNT(ids));
    } else {
        *name = first_str(b, names, COUNT(names));
        *input = first_of(b, inputs, COUNT(inputs));
    }
}

static void add_value_text(sync_text *t, json_t *v, int *is_error, int depth);

/* The text of a result's content: a string, blocks, or an object with
 * output / error / content. */
static void add_value_text(sync_text *t, json_t *v, int *is_error, int depth)
{
    if (!v || json_is_null(v) || depth > 4)
        return;
    if (json_is_string(v)) {
        sync_text_sep(t);
        sync_text_adds(t, json_string_value(v));
        return;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            const char *type = sync_json_str(e, "type");
            if (type && (strcmp(type, "image") == 0 || strcmp(type, "image_url") == 0)) {
                sync_text_sep(t);
                sync_text_adds(t, "[image]");
            } else if (json_is_string(e) || json_is_string(json_object_get(e, "text"))) {
                sync_text_sep(t);
                sync_text_adds(t,
                               json_is_string(e) ? json_string_value(e) : sync_json_str(e, "text"));
            } else {
                add_value_text(t, e, is_error, depth + 1);
            }
        }
        return;
    }
    if (json_is_object(v)) {
        /* the AI SDK's tool output (Posit Assistant): {"type": "text" | "json" |
           "error-text" | "error-json" | "content", "value": ...} */
        const char *kind = sync_json_str(v, "type");
        json_t *value = json_object_get(v, "value");
        if (kind && value &&
            (strcmp(kind, "text") == 0 || strcmp(kind, "json") == 0 ||
             strcmp(kind, "error-text") == 0 || strcmp(kind, "error-json") == 0 ||
             strcmp(kind, "content") == 0)) {
            if (strncmp(kind, "error-", 6) == 0)
                *is_error = 1;
            if (strstr(kind, "json") && !json_is_string(value)) {
                /* a JSON value is the tool's answer as it is, not a block */
                char *dump = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
                sync_text_sep(t);
                sync_text_adds(t, dump ? dump : "");
                free(dump);
            } else {
                add_value_text(t, value, is_error, depth + 1);
            }
            return;
        }
        static const char *const outs[] = {
            "output",   "content",       "result",           "text", "stdout",
            "response", "responseParts", "functionResponse", "data", "thinking"};
        json_t *err = json_object_get(v, "error");
        json_t *out = first_of(v, outs, COUNT(outs));
        if (out)
            add_value_text(t, out, is_error, depth + 1);
        if (json_is_string(err) && *json_string_value(err)) {
            sync_text_sep(t);
            sync_text_adds(t, json_string_value(err));
            *is_error = 1;
        }
        if (!out && !json_is_string(err)) {
            char *dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            sync_text_sep(t);
            sync_text_adds(t, dump);
            free(dump);
        }
        return;
    }
    char *dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    sync_text_sep(t);
    sync_text_adds(t, dump);
    free(dump);
}

/* A result block's call id, tool, text and error flag. */
static void result_parts(json_t *b, const char **id, const char **name, sync_text *t, int *is_error)
{
    static const char *const ids[] = {"tool_use_id", "toolCallId", "call_id", "tool_call_id",
                                      "callId",      "toolUseID",  "id",      "toolUseId"};
    static const char *const names[] = {"name", "toolName", "tool_name"};
    static const char *const outs[] = {"content", "output", "result", "response"};
    static const char *const errs[] = {"is_error", "isError", "error"};
    json_t *inner = json_object_get(b, "functionResponse");
    if (json_is_object(inner))
        b = inner;
    *id = first_str(b, ids, COUNT(ids));
    json_t *run = json_object_get(b, "run"); /* Amp: {status, result, error: {message}} */
    if (json_is_object(run)) {
        const char *status = sync_json_str(run, "status");
        if (status && strcmp(status, "done") != 0 && strcmp(status, "success") != 0)
            *is_error = 1;
        add_value_text(t, json_object_get(run, "result"), is_error, 0);
        const char *msg = sync_json_str(json_object_get(run, "error"), "message");
        if (msg) {
            sync_text_sep(t);
            sync_text_adds(t, msg);
        }
        if (t->len == 0 && status) {
            sync_text_adds(t, "[");
            sync_text_adds(t, status);
            sync_text_adds(t, "]");
        }
        return;
    }
    json_t *tr = json_object_get(b, "toolResult"); /* Goose: {status, value | error} */
    if (json_is_object(tr)) {
        const char *status = sync_json_str(tr, "status");
        json_t *val = json_object_get(tr, "value");
        if (status && strcmp(status, "error") == 0) {
            *is_error = 1;
            add_value_text(t, json_object_get(tr, "error"), is_error, 0);
            return;
        }
        if (json_is_object(val) && json_is_true(json_object_get(val, "isError")))
            *is_error = 1;
        add_value_text(t, val, is_error, 0);
        return;
    }
    *name = first_str(b, names, COUNT(names));
    const char *status = sync_json_str(b, "status"); /* Kiro: "error" | "success" */
    if (status && (strcmp(status, "error") == 0 || strcmp(status, "Error") == 0))
        *is_error = 1;
    json_t *err = first_of(b, errs, COUNT(errs));
    if (json_is_boolean(err))
        *is_error = json_is_true(err);
    else if (json_is_string(err) && *json_string_value(err)) {
        *is_error = 1;
        sync_text_adds(t, json_string_value(err));
    }
    add_value_text(t, first_of(b, outs, COUNT(outs)), is_error, 0);
}

/* ---- expand --------------------------------------------------------------- */

static char *dup_range(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

/* The messages of one record, built up. */
typedef struct out {
    sync_record *v;
    size_t n, cap;
    int oom;
} out;

static sync_record *out_add(out *o)
{
    if (o->n >= ENGINE_CALLS_MAX + 2)
        return NULL;
    if (sync_grow((void **)&o->v, &o->cap, o->n, sizeof *o->v, 4) < 0) {
        o->oom = 1;
        return NULL;
    }
    sync_record *r = &o->v[o->n++];
    memset(r, 0, sizeof *r);
    r->kind = SYNC_MESSAGE;
    return r;
}

static const char *map_role(const sd_rule *r, const char *src)
{
    if (r->role.konst)
        return r->role.konst;
    if (src) {
        for (size_t i = 0; i < r->nmap; i++)
            if (strcmp(r->map_from[i], src) == 0)
                return r->map_to[i];
        static const char *const from[] = {"user",      "human",   "assistant",   "model",
                                           "ai",        "bot",     "agent",       "system",
                                           "developer", "tool",    "toolResult",  "tool_result",
                                           "function",  "ipython", "observation", "environment"};
        static const char *const to[] = {"user",      "user",      "assistant", "assistant",
                                         "assistant", "assistant", "assistant", "system",
                                         "system",    "tool",      "tool",      "tool",
                                         "tool",      "tool",      "tool",      "system"};
        for (size_t i = 0; i < COUNT(from); i++)
            if (strcmp(from[i], src) == 0)
                return to[i];
    }
    return r->map_default ? r->map_default : "system";
}

static const char *static_role(const char *role)
{
    if (strcmp(role, "user") == 0)
        return "user";
    if (strcmp(role, "assistant") == 0)
        return "assistant";
    if (strcmp(role, "tool") == 0)
        return "tool";
    return "system";
}

/* The counts and cost `r`'s usage values find in `rec`. */
static void usage_counts(const sd_rule *r, json_t *rec, sync_usage *u)
{
    u->input = v_int(rec, &r->usage_input);
    u->output = v_int(rec, &r->usage_output);
    u->cache_read = v_int(rec, &r->usage_cache_read);
    if (u->input < 0 && v_set(&r->usage_input_total)) {
        /* a prompt count that includes the cache reads: input is the rest */
        int64_t total = v_int(rec, &r->usage_input_total);
        if (total >= 0)
            u->input = u->cache_read > 0 && u->cache_read <= total ? total - u->cache_read : total;
    }
    u->cache_creation = v_int(rec, &r->usage_cache_creation);
    u->reasoning = v_int(rec, &r->usage_reasoning);
    json_t *cost = v_json(rec, &r->cost);
    if (json_is_number(cost) && json_number_value(cost) >= 0) {
        u->cost_usd = json_number_value(cost);
        u->cost_given = 1;
    }
    u->present = u->input >= 0 || u->output >= 0 || u->cache_read >= 0 || u->cache_creation >= 0 ||
                 u->reasoning >= 0 || u->cost_given;
    if (u->input < 0)
        u->input = 0;
    if (u->output < 0)
        u->output = 0;
    if (u->cache_read < 0)
        u->cache_read = 0;
    if (u->cache_creation < 0)
        u->cache_creation = 0;
    if (u->reasoning < 0)
        u->reasoning = 0;
}

/* The usage a record names, on its message. */
static void take_usage(const sd_rule *r, json_t *rec, sync_record *m)
{
    sync_usage *u = &m->usage;
    if (m->model && !u->model)
        u->model = sync_short_copy(m->model, 100);
    usage_counts(r, rec, u);
}

int sync__desc_reply_usage(const sync_desc *d, const sync_fold *f, const char *id,
                           const char *model, sync_usage *u)
{
    json_t *e = id && *id && f->doc_usage ? json_object_get(f->doc_usage, id) : NULL;
    if (!json_is_object(e))
        return 0;
    sync_usage got = {0};
    usage_counts(&d->doc, e, &got);
    if (!got.present)
        return 0;
    /* the key: the message id within its session, so a session stored
       again replaces its calls and never adds them twice */
    if (!(got.key = sync_short_copy(id, 100)) ||
        (model && *model && !(got.model = sync_short_copy(model, 100)))) {
        free(got.key);
        return MCPAGE_ENOMEM;
    }
    got.key_per_session = 1;
    free(u->key);
    free(u->model);
    free(u->timestamp);
    *u = got;
    return 1;
}

static void add_call(out *o, const char *name, json_t *input, const char *id, const char *ts,
                     const char *model)
{
    sync_record *c = out_add(o);
    if (!c)
        return;
    sync_record_call(c, "assistant", name && *name ? name : "?", id, input, ts);
    if (model)
        c->model = sync_short_copy(model, 100);
}

static void add_result(out *o, const char *id, const char *name, sync_text *t, int is_error,
                       const char *ts)
{
    sync_record *m = out_add(o);
    if (!m) {
        free(t->buf);
        return;
    }
    m->role = "tool";
    m->text = sync_text_finish(t);
    m->call_id = id && *id ? sync_short_copy(id, 100) : NULL;
    m->tool_name = name && *name ? sync_short_copy(name, 100) : NULL;
    m->is_error = is_error;
    m->timestamp = ts ? sync_short_copy(ts, 64) : NULL;
}

/* A block written as {"kind": K, "data": D} (Kiro), or as {"type": K,
 * "data": D} and nothing else (Crush): as {"type": K, ...D} (D an object)
 * or {"type": K, "text": D} (D a string); NULL otherwise. */
static json_t *kind_data_block(json_t *b)
{
    const char *kind = sync_json_str(b, "kind");
    json_t *data = json_object_get(b, "data");
    if (kind && json_object_get(b, "type"))
        return NULL;
    if (!kind && json_object_size(b) == 2 && json_is_object(data))
        kind = sync_json_str(b, "type");
    if (!kind || !data)
        return NULL;
    json_t *n = json_is_object(data) ? json_deep_copy(data) : json_object();
    if (!n)
        return NULL;
    json_object_set_new(n, "type", json_string(kind));
    if (json_is_string(data)) {
        json_object_set(n, "text", data);
        json_object_set(n, "thinking", data);
    }
    return n;
}

/* Blocks are separated by a line, but none comes between a message's
 * prefix (its first `from` bytes) and its first block. */
static void sep_after(sync_text *t, size_t from)
{
    if (t->len > from)
        sync_text_sep(t);
}

/* A record's messages; `content` and `think`, when not NULL, stand for
 * what the rule's pointers would find (stream fragments joined). */
/* A block written as an externally tagged enum, {"Text": "..."} or
 * {"ToolUse": {...}} (Zed), whose tag the description lists among its
 * block types (or is "Image"): as {"type": TAG, ...} (an object's fields,
 * or "text" and "thinking" for a string); NULL otherwise. */
static json_t *tagged_block(const sync_desc *d, json_t *b)
{
    if (!json_is_object(b) || json_object_size(b) != 1)
        return NULL;
    const char *tag = json_object_iter_key(json_object_iter(b));
    json_t *v = json_object_iter_value(json_object_iter(b));
    if (!in_list(tag, (const char *const *)d->text_types, d->ntext_types) &&
        !in_list(tag, (const char *const *)d->thinking_types, d->nthinking_types) &&
        !in_list(tag, (const char *const *)d->call_types, d->ncall_types) &&
        !in_list(tag, (const char *const *)d->result_types, d->nresult_types) &&
        strcmp(tag, "Image") != 0)
        return NULL;
    json_t *n = json_is_object(v) ? json_deep_copy(v) : json_object();
    if (!n)
        return NULL;
    if (json_is_string(v)) {
        json_object_set(n, "text", v);
        json_object_set(n, "thinking", v);
    }
    json_object_set_new(n, "type", json_string(tag));
    return n;
}

/* A tool result of a `results` list or map, as a result block: its
 * content's tagged blocks read as such. */
static json_t *result_block(const sync_desc *d, json_t *v, const char *key)
{
    if (!json_is_object(v))
        return NULL;
    json_t *n = json_deep_copy(v);
    if (!n)
        return NULL;
    if (!json_object_get(n, "type"))
        json_object_set_new(n, "type", json_string("tool_result"));
    if (key && !sync_json_str(n, "tool_use_id") && !sync_json_str(n, "call_id"))
        json_object_set_new(n, "tool_use_id", json_string(key));
    json_t *c = json_object_get(n, "content");
    json_t *one = json_is_object(c) ? json_pack("[O]", c) : json_incref(c);
    if (json_is_array(one)) {
        json_t *arr = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(one, i, e)
        {
            json_t *t = tagged_block(d, e);
            json_array_append_new(arr, t ? t : json_incref(e));
        }
        json_object_set_new(n, "content", arr);
    }
    json_decref(one);
    return n;
}

/* Puts each result of `res` (an array, or an object keyed by call id)
 * after the call it answers in `pending`, else at its end. */
static void place_results(const sync_desc *d, json_t *pending, json_t *res)
{
    const char *key;
    json_t *v;
    size_t i;
    json_t *list = json_array();
    if (json_is_object(res)) {
        json_object_foreach(res, key, v) json_array_append_new(list, result_block(d, v, key));
    } else if (json_is_array(res)) {
        json_array_foreach(res, i, v) json_array_append_new(list, result_block(d, v, NULL));
    }
    json_array_foreach(list, i, v)
    {
        if (!v || json_array_size(pending) >= ENGINE_CALLS_MAX)
            continue;
        const char *id = NULL, *name = NULL;
        sync_text t = {0};
        int err = 0;
        result_parts(v, &id, &name, &t, &err);
        free(t.buf);
        size_t at = json_array_size(pending);
        for (size_t k = 0; id && k < json_array_size(pending); k++) {
            json_t *c = json_array_get(pending, k);
            const char *cn = NULL, *cid = NULL;
            json_t *in = NULL;
            if (block_kind(d, c) != B_CALL)
                continue;
            call_parts(c, &cn, &in, &cid);
            if (cid && strcmp(cid, id) == 0) {
                at = k + 1;
                break;
            }
        }
        json_array_insert(pending, at, v);
    }
    json_decref(list);
}

static void expand_record(const sync_desc *d, const sd_rule *r, json_t *rec, out *o,
                          json_t *content_over, json_t *think_over)
{
    char tmp[64];
    const char *role = static_role(map_role(r, v_str(rec, &r->role, tmp, sizeof tmp)));
    if (strcmp(map_role(r, v_str(rec, &r->role, tmp, sizeof tmp)), "skip") == 0)
        return;
    char *ts = v_time(rec, &r->timestamp);
    char *model = v_copy(rec, &r->model, 100);
    sync_text text = {0};
    if (r->prefix)
        sync_text_adds(&text, r->prefix);
    size_t prefix_len = text.len;

    /* calls and results found in the blocks, kept in order after the text */
    json_t *content = content_over       ? content_over
                      : r->content.konst ? NULL
                                         : v_json(rec, &r->content);
    json_t *pending = json_array();
    if (r->content.konst)
        sync_text_adds(&text, r->content.konst);
    int is_error = v_set(&r->is_error) ? v_bool(rec, &r->is_error) : 0;
    if (json_is_string(content)) {
        sync_text_adds(&text, json_string_value(content));
    } else if (json_is_object(content) && block_kind(d, content) == B_NONE &&
               strcmp(role, "tool") == 0) {
        add_value_text(&text, content, &is_error, 0);
    } else if (content) {
        json_t *one = json_is_array(content) ? json_incref(content) : json_pack("[O]", content);
        size_t i;
        json_t *b;
        json_array_foreach(one, i, b)
        {
            json_t *norm = kind_data_block(b);
            if (!norm)
                norm = tagged_block(d, b);
            if (norm)
                b = norm;
            int k = block_kind(d, b);
            if (k == B_TEXT) {
                sep_after(&text, prefix_len);
                sync_text_adds(&text,
                               json_is_string(b) ? json_string_value(b) : sync_json_str(b, "text"));
            } else if (k == B_THINKING) {
                static const char *const keys[] = {"thinking", "text",    "reasoning",
                                                   "content",  "summary", "think"};
                const char *th = first_str(b, keys, COUNT(keys));
                sep_after(&text, prefix_len);
                sync_text_adds(&text, th ? "[thinking] " : "[thinking redacted]");
                sync_text_adds(&text, th);
            } else if (k == B_IMAGE) {
                json_t *inl = json_object_get(b, "inlineData");
                json_t *src = json_object_get(b, "source");
                const char *mime = sync_json_str(json_is_object(inl) ? inl : src,
                                                 json_is_object(inl) ? "mimeType" : "media_type");
                if (!mime)
                    mime = first_str(
                        b, (const char *const[]){"mimeType", "mime_type", "media_type"}, 3);
                sep_after(&text, prefix_len);
                sync_text_adds(&text, mime ? "[image: " : "[image");
                sync_text_adds(&text, mime);
                sync_text_adds(&text, "]");
            } else if (k == B_FILE) {
                json_t *fd = json_object_get(b, "fileData");
                const char *uri = first_str(
                    json_is_object(fd) ? fd : b,
                    (const char *const[]){"fileUri", "path", "filename", "name", "uri", "url"}, 6);
                sep_after(&text, prefix_len);
                sync_text_adds(&text, "[file: ");
                sync_text_adds(&text, uri ? uri : "?");
                sync_text_adds(&text, "]");
            } else if ((k == B_CALL || k == B_RESULT) &&
                       json_array_size(pending) < ENGINE_CALLS_MAX) {
                json_array_append(pending, b);
            } else if (k == B_NONE && json_is_object(b) && strcmp(role, "user") == 0) {
                /* a user block of a kind no rule knows (Crush's `!command`
                   runs): what the user typed is never dropped, so it is
                   kept as its type and JSON */
                const char *type = sync_json_str(b, "type");
                if (!type && json_object_size(b) == 1) /* an externally tagged block */
                    type = json_object_iter_key(json_object_iter(b));
                char *dump = json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER);
                sep_after(&text, prefix_len);
                sync_text_adds(&text, "[");
                sync_text_adds(&text, type ? type : "block");
                sync_text_adds(&text, "] ");
                sync_text_adds(&text, dump);
                free(dump);
            }
            json_decref(norm);
        }
        json_decref(one);
    }
    json_t *think = think_over            ? think_over
                    : v_set(&r->thinking) ? v_json(rec, &r->thinking)
                                          : NULL;
    if (think) {
        /* reasoning kept beside the content: before the text, as thinking */
        sync_text th = {0};
        int ignored = 0;
        add_value_text(&th, think, &ignored, 0);
        if (th.len) {
            char *body = sync_text_finish(&th);
            char *rest = text.len > prefix_len
                             ? dup_range(text.buf + prefix_len, text.len - prefix_len)
                             : NULL;
            text.len = prefix_len;
            sync_text_adds(&text, "[thinking] ");
            sync_text_adds(&text, body);
            if (rest) {
                sync_text_sep(&text);
                sync_text_adds(&text, rest);
            }
            free(rest);
            free(body);
        } else {
            free(th.buf);
        }
    }
    json_t *calls = v_json(rec, &r->calls);
    if (json_is_object(calls) && json_array_size(pending) < ENGINE_CALLS_MAX) {
        json_array_append(pending, calls); /* one call (OpenHands' tool_call) */
    } else if (json_is_array(calls)) {
        size_t i;
        json_t *b;
        json_array_foreach(calls, i, b)
        {
            if (json_is_object(b) && json_array_size(pending) < ENGINE_CALLS_MAX)
                json_array_append(pending, b);
        }
    }
    if (v_set(&r->results))
        place_results(d, pending, v_json(rec, &r->results));
    if (strcmp(role, "tool") == 0) {
        /* a tool result message: its content is the result */
        const char *id = v_str(rec, &r->call_id, tmp, sizeof tmp);
        char *cid = id ? sync_short_copy(id, 100) : NULL;
        char *name = v_copy(rec, &r->tool_name, 100);
        size_t i;
        json_t *b;
        json_array_foreach(pending, i, b)
        {
            /* result blocks inside a tool message: their text joins it */
            const char *bid = NULL, *bname = NULL;
            result_parts(b, &bid, &bname, &text, &is_error);
            if (!cid && bid)
                cid = sync_short_copy(bid, 100);
            if (!name && bname)
                name = sync_short_copy(bname, 100);
        }
        add_result(o, cid, name, &text, is_error, ts);
        free(cid);
        free(name);
    } else {
        int has_text = text.len > prefix_len;
        if (has_text || json_array_size(pending) == 0) {
            if (has_text) {
                sync_record *m = out_add(o);
                if (m) {
                    m->role = role;
                    m->text = sync_text_finish(&text);
                    m->timestamp = ts ? sync_short_copy(ts, 64) : NULL;
                    m->is_prompt = strcmp(role, "user") == 0;
                    m->is_error = strcmp(role, "system") == 0 ? is_error : 0;
                    if (model && strcmp(role, "assistant") == 0)
                        m->model = sync_short_copy(model, 100);
                }
            }
        }
        free(text.buf);
        size_t i;
        json_t *b;
        json_array_foreach(pending, i, b)
        {
            int k = block_kind(d, b);
            if (k == B_RESULT) {
                const char *id = NULL, *name = NULL;
                int err = 0;
                sync_text t = {0};
                result_parts(b, &id, &name, &t, &err);
                add_result(o, id, name, &t, err, ts);
            } else {
                const char *name = NULL, *id = NULL;
                json_t *input = NULL;
                call_parts(b, &name, &input, &id);
                add_call(o, name, input, id, ts, model);
            }
        }
    }
    /* the record's usage goes on its first assistant message */
    size_t i;
    for (i = 0; i < o->n; i++) {
        if (strcmp(o->v[i].role, "assistant") == 0) {
            take_usage(r, rec, &o->v[i]);
            break;
        }
    }
    if (o->n == 0 && (v_set(&r->usage_input) || v_set(&r->usage_output) || v_set(&r->cost))) {
        /* a record of usage only (Kimi's StatusUpdate): a model call, no message */
        sync_record *u = out_add(o);
        if (u) {
            u->kind = SYNC_SKIP;
            u->role = "assistant";
            u->model = model ? sync_short_copy(model, 100) : NULL;
            u->timestamp = ts ? sync_short_copy(ts, 64) : NULL;
            take_usage(r, rec, u);
        }
    }
    json_decref(pending);
    free(ts);
    free(model);
}

/* Joined stream fragments being built: the blocks so far, and the string
 * fields of the last one growing in buffers (capped as stored text is), so
 * joining n fragments costs O(n) whatever their number. */
#define JOIN_KEYS 8
typedef struct joiner {
    json_t *arr;  /* the blocks; the last one's joined fields are in buf */
    json_t *last; /* the last block (borrowed from arr), or NULL */
    char *key[JOIN_KEYS];
    sync_text buf[JOIN_KEYS];
    size_t nkeys;
} joiner;

/* Writes the last block's buffered fields back into it. */
static void join_flush(joiner *j)
{
    for (size_t i = 0; i < j->nkeys; i++) {
        if (j->last && j->buf[i].buf)
            json_object_set_new(j->last, j->key[i],
                                json_stringn_nocheck(j->buf[i].buf, j->buf[i].len));
        free(j->buf[i].buf);
        free(j->key[i]);
    }
    memset(j->buf, 0, sizeof j->buf);
    memset(j->key, 0, sizeof j->key);
    j->nkeys = 0;
}

/* Adds a fragment (a string, a block or blocks), joining it to the last
 * block when both have the same type: their string fields of the same name
 * are concatenated ("Let me look at " + "the posts folder."). */
static void add_fragment(joiner *j, json_t *v, int depth)
{
    if (!j->arr || !v || json_is_null(v) || depth > 2)
        return;
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) add_fragment(j, e, depth + 1);
        return;
    }
    json_t *part = json_is_string(v) ? json_pack("{ssso}", "type", "text", "text", json_incref(v))
                                     : json_deep_copy(v);
    if (!json_is_object(part)) {
        json_decref(part);
        return;
    }
    const char *t1 = sync_json_str(j->last, "type"), *t2 = sync_json_str(part, "type");
    if (t1 && t2 && strcmp(t1, t2) == 0) {
        const char *k;
        json_t *val;
        int joined = 0;
        json_object_foreach(part, k, val)
        {
            if (strcmp(k, "type") == 0 || !json_is_string(val))
                continue;
            size_t i = 0;
            while (i < j->nkeys && strcmp(j->key[i], k) != 0)
                i++;
            if (i == j->nkeys) {
                const char *prev = sync_json_str(j->last, k);
                if (!prev || j->nkeys >= JOIN_KEYS || !(j->key[i] = sync_dup(k)))
                    continue;
                j->nkeys++;
                sync_text_add(&j->buf[i], prev, strlen(prev));
            }
            sync_text_add(&j->buf[i], json_string_value(val), json_string_length(val));
            joined = 1;
        }
        if (joined) {
            json_decref(part);
            return;
        }
    }
    if (json_array_size(j->arr) >= ENGINE_CALLS_MAX) {
        json_decref(part);
        return;
    }
    join_flush(j);
    json_array_append_new(j->arr, part);
    j->last = part;
}

/*
 * An entry spanning several lines: the first record and the stream
 * fragments after it (records of join rules with its role; the lines
 * between them that are no fragment are skipped), their content and
 * thinking joined in order.
 */
static void join_fragments(const sync_desc *d, const sd_rule *first, json_t *first_rec,
                           const char *chunk, size_t len, json_t **parts, json_t **thinks)
{
    char tmp[64];
    char key[16];
    (void)snprintf(key, sizeof key, "%s",
                   map_role(first, v_str(first_rec, &first->role, tmp, sizeof tmp)));
    joiner jp = {.arr = json_array()}, jt = {.arr = json_array()};
    const char *p = chunk, *end = chunk + len;
    while (p < end && jp.arr && jt.arr) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *root = sync_json_loadb(p, n, 0, NULL);
        int wrap = 0;
        json_t *rec = json_is_object(root) ? unwrap(root, &wrap) : NULL;
        const sd_rule *r = rec && !wrap ? pick_rule(d, rec) : NULL;
        if (r && r->kind == SD_MESSAGE && r->join &&
            strncmp(map_role(r, v_str(rec, &r->role, tmp, sizeof tmp)), key, sizeof key) == 0) {
            if (r->content.konst) {
                json_t *k = json_string(r->content.konst);
                add_fragment(&jp, k, 0);
                json_decref(k);
            } else {
                add_fragment(&jp, v_json(rec, &r->content), 0);
            }
            if (v_set(&r->thinking))
                add_fragment(&jt, v_json(rec, &r->thinking), 0);
        }
        json_decref(root);
        p = nl ? nl + 1 : end;
    }
    join_flush(&jp);
    join_flush(&jt);
    *parts = jp.arr;
    *thinks = jt.arr;
    if (*thinks && json_array_size(*thinks) == 0) {
        json_decref(*thinks);
        *thinks = NULL;
    }
}

int sync__desc_expand(const sync_desc *d, const char *line, size_t len, int32_t sub,
                      sync_record **outp, size_t *n)
{
    (void)sub;
    *outp = NULL;
    *n = 0;
    /* an entry of joined stream fragments spans lines: its first is the record */
    const char *nl = memchr(line, '\n', len);
    json_t *root = sync_json_loadb(line, nl ? (size_t)(nl - line) : len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int wrap = 0;
    json_t *rec = unwrap(root, &wrap);
    const sd_rule *r = wrap ? NULL : pick_rule(d, rec);
    out o = {0};
    if (r && r->kind == SD_MESSAGE && r->join && nl) {
        json_t *parts = NULL, *thinks = NULL;
        join_fragments(d, r, rec, line, len, &parts, &thinks);
        expand_record(d, r, rec, &o, parts, thinks);
        json_decref(parts);
        json_decref(thinks);
    } else if (r && r->kind == SD_MESSAGE) {
        expand_record(d, r, rec, &o, NULL, NULL);
    }
    json_decref(root);
    if (o.oom) {
        sync__records_free(o.v, o.n);
        return MCPAGE_ENOMEM;
    }
    return sync__records_finish(o.v, o.n, outp, n);
}

/* ---- documents ------------------------------------------------------------ */

int sync__desc_convert(const sync_desc *d, const char *doc, size_t len, char **outp, size_t *outlen,
                       char *why, size_t whylen)
{
    *outp = NULL;
    *outlen = 0;
    json_error_t err;
    json_t *root = json_loadb(doc, len, 0, &err);
    if (!root) {
        (void)snprintf(why, whylen, "not a JSON document: %s (line %d)", err.text, err.line);
        return MCPAGE_EPARSE;
    }
    json_t *recs = at_path(root, &d->records);
    if (!json_is_array(recs)) {
        (void)snprintf(why, whylen, "no array of records where the description says (%zu steps in)",
                       d->records.n);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    json_incref(recs);
    json_t *rest = NULL;
    if (d->records.n == 0) {
        rest = json_object();
    } else {
        sd_path up = {d->records.tok, d->records.n - 1};
        json_t *parent = at_path(root, &up);
        if (json_is_object(parent))
            json_object_del(parent, d->records.tok[d->records.n - 1]);
        rest = json_incref(root);
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    json_t *head = json_pack("{sO}", "$document", rest);
    int ok = w && head && json_dumpf(head, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
    json_decref(head);
    size_t i;
    json_t *m;
    json_array_foreach(recs, i, m)
    {
        if (!ok)
            break;
        json_t *one = json_is_object(m) ? json_incref(m) : json_pack("{sO}", "$value", m);
        ok = one && json_dumpf(one, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
        json_decref(one);
    }
    if (w && fclose(w) != 0)
        ok = 0;
    json_decref(recs);
    json_decref(rest);
    json_decref(root);
    if (!ok) {
        free(buf);
        return MCPAGE_ENOMEM;
    }
    *outp = buf;
    *outlen = n;
    return 0;
}

/* ---- discovery ------------------------------------------------------------ */

typedef struct dwalk {
    const sync_desc *d;
    const sd_glob *g;
    sync_fold_jobs *js;
    sync_report *rep;
    const char *root; /* the home, resolved */
    size_t rootlen;
    size_t files;
    json_t *hashed; /* {hash of a path: the path} (d->hashed), or NULL */
    /* captures of the path being walked */
    char id[256], parent[256], cwd[SYNC_PATH_MAX], project[256];
} dwalk;

static int inside(const dwalk *w, const char *real)
{
    if (w->rootlen == 1)
        return 1;
    return strncmp(real, w->root, w->rootlen) == 0 &&
           (real[w->rootlen] == '/' || real[w->rootlen] == 0);
}

static void percent_decode(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
            char hex[3] = {p[1], p[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
}

/*
 * Matches one name against a segment pattern with captures: `{x}` is a
 * `*` whose match is kept. The literal parts and wildcards go to
 * fnmatch; captures are found by trying every split (names are short).
 */
static int seg_match(dwalk *w, const char *pat, const char *name)
{
    const char *open = strchr(pat, '{');
    if (!open)
        return fnmatch(pat, name, FNM_PERIOD) == 0;
    const char *close = strchr(open, '}');
    size_t pre = (size_t)(open - pat);
    char head[256];
    if (pre >= sizeof head)
        return 0;
    memcpy(head, pat, pre);
    head[pre] = 0;
    size_t nlen = strlen(name);
    /* the head must match a prefix, the rest (after the capture) the tail */
    for (size_t a = 0; a <= nlen; a++) {
        char left[256];
        if (a >= sizeof left)
            break;
        memcpy(left, name, a);
        left[a] = 0;
        if (fnmatch(head, left, FNM_PERIOD) != 0)
            continue;
        for (size_t b = nlen; b > a; b--) {
            if (!seg_match(w, close + 1, name + b))
                continue;
            char cap[SYNC_PATH_MAX];
            size_t cn = b - a < sizeof cap - 1 ? b - a : sizeof cap - 1;
            memcpy(cap, name + a, cn);
            cap[cn] = 0;
            size_t kn = (size_t)(close - open - 1);
            const char *k = open + 1;
            if (kn == 2 && strncmp(k, "id", 2) == 0)
                (void)snprintf(w->id, sizeof w->id, "%.*s", (int)sizeof w->id - 1, cap);
            else if (kn == 6 && strncmp(k, "parent", 6) == 0)
                (void)snprintf(w->parent, sizeof w->parent, "%.*s", (int)sizeof w->parent - 1, cap);
            else if (kn == 7 && strncmp(k, "project", 7) == 0)
                (void)snprintf(w->project, sizeof w->project, "%.*s", (int)sizeof w->project - 1,
                               cap);
            else if (kn == 7 && strncmp(k, "cwd:url", 7) == 0) {
                percent_decode(cap);
                (void)snprintf(w->cwd, sizeof w->cwd, "%s", cap);
            } else if (kn == 3)
                (void)snprintf(w->cwd, sizeof w->cwd, "%s", cap);
            return 1;
        }
    }
    return 0;
}

static void note(dwalk *w, const char *path, const char *what, int err)
{
    char why[200];
    (void)snprintf(why, sizeof why, "%s%s%s", what, err ? ": " : "", err ? strerror(err) : "");
    sync_example(w->rep, path, 0, why); /* counted by dirs_unreadable */
}

/* A session file's sidecar name: the description's, "{stem}" replaced by
 * the file's name without its last extension. */
static void sidecar_name(const char *side, const char *path, char *name, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    const char *at = strstr(side, "{stem}");
    if (!at)
        (void)snprintf(name, n, "%s", side);
    else
        (void)snprintf(name, n, "%.*s%.*s%s", (int)(at - side), side, stem, base, at + 6);
}

/* ---- sessions that are folders of record files ---------------------------- */

static int name_cmp(const void *a, const void *b)
{
    /* event-99999 before event-100000: numbers in names compare as numbers */
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/*
 * The record files of a session's folder (`each` under it), their paths
 * in name order, each a regular file (what else is there is named in
 * `rep` when given, and skipped), ENGINE_RECORDS_MAX at most. The folder
 * is opened through the source layer, inside `home`.
 */
static int folder_records(const char *home, const char *folder, const char *each, sync_report *rep,
                          const char *source, char ***list, size_t *n)
{
    *list = NULL;
    *n = 0;
    const char *slash = strrchr(each, '/');
    const char *pat = slash ? slash + 1 : each;
    char *dir = slash ? NULL : sync_dup(folder);
    if (slash) {
        char sub[SYNC_PATH_MAX];
        (void)snprintf(sub, sizeof sub, "%.*s", (int)(slash - each), each);
        dir = sync_join(folder, sub);
    }
    if (!dir)
        return MCPAGE_ENOMEM;
    DIR *dd = sync_source_opendir(home, dir, rep, source);
    if (!dd) {
        free(dir);
        return 0;
    }
    char **v = NULL;
    size_t cap = 0, k = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dd)) != NULL) {
        if (fnmatch(pat, e->d_name, FNM_PERIOD) != 0)
            continue;
        char *path = sync_join(dir, e->d_name);
        struct stat sb;
        if (!path) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        if (lstat(path, &sb) < 0) {
            free(path);
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            if (rep && !S_ISDIR(sb.st_mode))
                sync_warn(rep, source, path, 0, "not a regular file: skipped");
            free(path);
            continue;
        }
        if (k >= ENGINE_RECORDS_MAX) {
            if (rep)
                sync_warn(rep, source, dir, 0, "more than 100000 record files: the rest not read");
            free(path);
            break;
        }
        if (sync_grow((void **)&v, &cap, k, sizeof *v, 64) < 0) {
            free(path);
            rc = MCPAGE_ENOMEM;
            break;
        }
        v[k++] = path;
    }
    closedir(dd);
    free(dir);
    if (rc < 0) {
        names_free(v, k);
        return rc;
    }
    if (k > 1)
        qsort(v, k, sizeof *v, name_cmp);
    *list = v;
    *n = k;
    return 0;
}

static int add_file(dwalk *w, const char *path, const struct stat *sb);

/* A session that is a folder: one job, its change identity the record
 * files' bytes and count and the newest of their times (sidecars in it
 * counted too, by add_file). */
static int add_folder(dwalk *w, const char *path, const struct stat *sb)
{
    char **files = NULL;
    size_t nf = 0;
    int rc = folder_records(w->root, path, w->g->each, w->rep, w->d->name, &files, &nf);
    if (rc < 0)
        return rc;
    struct stat id = *sb;
    id.st_size = 0;
    for (size_t i = 0; i < nf; i++) {
        struct stat fs;
        if (lstat(files[i], &fs) < 0)
            continue;
        id.st_size += fs.st_size + 1;
        if (fs.st_mtim.tv_sec > id.st_mtim.tv_sec ||
            (fs.st_mtim.tv_sec == id.st_mtim.tv_sec && fs.st_mtim.tv_nsec > id.st_mtim.tv_nsec))
            id.st_mtim = fs.st_mtim;
    }
    names_free(files, nf);
    if (nf == 0)
        return 0; /* no records (yet): no session */
    return add_file(w, path, &id);
}

static int add_file(dwalk *w, const char *path, const struct stat *sb)
{
    if (w->files++ >= ENGINE_FILES_MAX)
        return 1;
    if (w->g->layout == SD_DB)
        return sync__desc_db_discover(w->d, w->root, path, w->cwd[0] ? w->cwd : NULL, w->js,
                                      w->rep);
    sync_fold_job j = {
        .fmt = &w->d->fmt, .convert = w->g->layout == SD_JSON, .folder = w->g->layout == SD_FOLDER};
    j.path = sync_dup(path);
    j.home = sync_dup(w->root);
    if (w->id[0])
        j.fallback_id = prefixed(w->d, w->id); /* an id a record names wins */
    if (w->parent[0])
        j.parent = prefixed(w->d, w->parent);
    const char *hashed = w->project[0] && w->hashed
                             ? json_string_value(json_object_get(w->hashed, w->project))
                             : NULL;
    if (w->cwd[0])
        j.cwd = sync_dup(w->cwd);
    else if (hashed)
        j.cwd = sync_dup(hashed); /* the folder named by the hash of the path */
    else if (w->project[0])
        j.cwd = sync_dup(w->project);
    if (!j.path || !j.home) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    j.size = (int64_t)sb->st_size;
    j.inode = (int64_t)sb->st_ino;
    j.mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    /* a sidecar's changes count as the session's: its size and time join the
       file's (a folder's sidecars are in it) */
    char *dir = w->d->nsidecar ? sync_dup(path) : NULL;
    char *slash = dir && !j.folder ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = 0;
    for (size_t i = 0; dir && i < w->d->nsidecar; i++) {
        char name[512];
        sidecar_name(w->d->sidecar[i], path, name, sizeof name);
        char *side = sync_join(dir, name);
        struct stat ss;
        if (side && lstat(side, &ss) == 0 && S_ISREG(ss.st_mode)) {
            j.size += (int64_t)ss.st_size;
            int64_t m = (int64_t)ss.st_mtim.tv_sec * 1000000000 + ss.st_mtim.tv_nsec;
            if (m > j.mtime_ns)
                j.mtime_ns = m;
        }
        free(side);
    }
    free(dir);
    return sync__fold_jobs_add(w->js, &j);
}

static int walk_seg(dwalk *w, const char *dir, size_t seg, int depth);

typedef struct dstep {
    dwalk *w;
    size_t seg;
    int depth;
    int globstar; /* this segment is `**`: also descend keeping it */
} dstep;

static int step_name(dstep *st, const char *d_name, char *path);

static int step_entry(void *ud, const struct dirent *e, char *path)
{
    return step_name(ud, e->d_name, path);
}

/* One entry (`d_name` in its folder, at `path`, owned) against the glob. */
static int step_name(dstep *st, const char *d_name, char *path)
{
    dwalk *w = st->w;
    const sd_glob *g = w->g;
    struct stat lsb, sb;
    int rc = 0;
    if (lstat(path, &lsb) < 0) {
        free(path);
        return 0;
    }
    sb = lsb;
    if (S_ISLNK(lsb.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real) {
            free(path);
            return 0;
        }
        int ok = inside(w, real);
        if (!ok) {
            w->rep->links_outside++;
            char why[160];
            (void)snprintf(why, sizeof why, "a link out of %.100s: not followed", w->root);
            sync_warn(w->rep, w->d->name, path, 0, why); /* named, and counted by links_outside */
        }
        int st_ok = ok && stat(real, &sb) == 0;
        free(real);
        if (!st_ok) {
            free(path);
            return 0;
        }
    }
    /* save captures: a failed branch must not leave its own */
    dwalk saved = *w;
    size_t seg = st->seg;
    if (st->globstar) {
        /* `**` matches zero folders (the next segment here) or more (descend) */
        if (S_ISDIR(sb.st_mode) && st->depth < SYNC_DESC_DEPTH)
            rc = walk_seg(w, path, seg, st->depth + 1);
        seg++;
    }
    if (rc == 0 && seg < g->n && seg_match(w, g->seg[seg], d_name)) {
        if (seg + 1 == g->n) {
            if (g->layout == SD_FOLDER)
                rc = S_ISDIR(sb.st_mode) ? add_folder(w, path, &sb) : 0;
            else if (S_ISREG(sb.st_mode))
                rc = add_file(w, path, &sb);
            else if (!S_ISDIR(sb.st_mode) && !S_ISLNK(lsb.st_mode))
                /* a FIFO, a device, a socket where a session file should be: never opened */
                sync_warn(w->rep, w->d->name, path, 0, "not a regular file: skipped");
        } else if (S_ISDIR(sb.st_mode) && st->depth < SYNC_DESC_DEPTH) {
            rc = walk_seg(w, path, seg + 1, st->depth + 1);
        }
    }
    memcpy(w->id, saved.id, sizeof w->id);
    memcpy(w->parent, saved.parent, sizeof w->parent);
    memcpy(w->cwd, saved.cwd, sizeof w->cwd);
    memcpy(w->project, saved.project, sizeof w->project);
    free(path);
    return rc;
}

static int walk_seg(dwalk *w, const char *dir, size_t seg, int depth)
{
    const char *pat = w->g->seg[seg];
    if (!strpbrk(pat, "*?[{")) {
        /* a plain name (".forge.db" too): looked up, not listed */
        dstep st = {.w = w, .seg = seg, .depth = depth};
        char *path = sync_join(dir, pat);
        if (!path)
            return MCPAGE_ENOMEM;
        struct stat sb;
        if (lstat(path, &sb) < 0) {
            free(path);
            return 0;
        }
        return step_name(&st, pat, path);
    }
    DIR *dd = opendir(dir);
    if (!dd) {
        if (errno != ENOENT && errno != ENOTDIR) {
            w->rep->dirs_unreadable++;
            note(w, dir, "cannot list this folder", errno);
        }
        return 0;
    }
    dstep st = {.w = w, .seg = seg, .depth = depth, .globstar = strcmp(w->g->seg[seg], "**") == 0};
    return sync_dir_each(dd, dir, step_entry, &st);
}

int sync__desc_found(const sync_desc *d, const char *home)
{
    if (d->roots) {
        char path[SYNC_PATH_MAX];
        struct stat sb;
        int k = snprintf(path, sizeof path, "%s/%s", home, d->roots->file);
        if (k > 0 && (size_t)k < sizeof path && stat(path, &sb) == 0)
            return 1;
    }
    size_t nglobs = d->nglobs + (d->db ? d->db->nglobs : 0);
    for (size_t i = 0; i < nglobs; i++) {
        const sd_glob *g = i < d->nglobs ? &d->globs[i] : &d->db->globs[i - d->nglobs];
        /* the folder the glob's plain leading names lead to (its file for a whole-name glob) */
        char path[SYNC_PATH_MAX];
        int k = snprintf(path, sizeof path, "%s", home);
        size_t lead = 0;
        while (lead < g->n && !strpbrk(g->seg[lead], "*?[{") && k > 0 && (size_t)k < sizeof path) {
            k += snprintf(path + k, sizeof path - (size_t)k, "/%s", g->seg[lead]);
            lead++;
        }
        struct stat sb;
        if (lead > 0 && k > 0 && (size_t)k < sizeof path && stat(path, &sb) == 0)
            return 1;
    }
    return 0;
}

/* Walks every glob of the description under `dir`, confined to `root`
 * (resolved), `cwd` the project of what it finds there (or NULL). */
static int walk_globs(const sync_desc *d, const char *dir, const char *root, const char *cwd,
                      json_t *hashed, sync_fold_jobs *js, sync_report *rep)
{
    int rc = 0;
    size_t nglobs = d->nglobs + (d->db ? d->db->nglobs : 0);
    for (size_t i = 0; rc == 0 && i < nglobs; i++) {
        dwalk *w = calloc(1, sizeof *w);
        if (!w)
            return MCPAGE_ENOMEM;
        w->d = d;
        w->g = i < d->nglobs ? &d->globs[i] : &d->db->globs[i - d->nglobs];
        w->js = js;
        w->rep = rep;
        w->root = root;
        w->rootlen = strlen(root);
        w->hashed = hashed;
        if (cwd)
            (void)snprintf(w->cwd, sizeof w->cwd, "%s", cwd);
        rc = walk_seg(w, dir, 0, 0); /* paths as the user gave the home */
        free(w);
    }
    return rc;
}

#define ROOTS_FILE_MAX (4 << 20) /* bytes of a listing of folders */

/*
 * The folders the description's listing names (d->roots), each walked as
 * a root of its own: an absolute path that exists, resolved, walked once.
 * The listing is read through the source layer (inside the home, a
 * regular file, 4 MiB at most); a listing that is not what the
 * description says is a warning.
 */
static int walk_roots(const sync_desc *d, const char *home, const char *root, sync_fold_jobs *js,
                      sync_report *rep)
{
    const sd_roots *r = d->roots;
    char *path = sync_join(home, r->file);
    if (!path)
        return MCPAGE_ENOMEM;
    struct stat sb;
    if (lstat(path, &sb) < 0) {
        free(path);
        return 0; /* no listing: nothing beyond the home */
    }
    char *text = NULL;
    size_t len = 0;
    char why[300] = "";
    int rc = sync_source_read(root, path, ROOTS_FILE_MAX, &text, &len, why, sizeof why);
    if (rc < 0) {
        sync_warn(rep, d->name, path, 0, why[0] ? why : "cannot read the listing");
        free(path);
        return rc == MCPAGE_ENOMEM ? rc : 0;
    }
    json_error_t err;
    json_t *doc = json_loadb(text, len, 0, &err);
    free(text);
    json_t *list = doc ? at_path(doc, &r->list) : NULL;
    if (!json_is_array(list)) {
        (void)snprintf(why, sizeof why, "%s",
                       doc ? "no list of folders where the description says" : err.text);
        sync_warn(rep, d->name, path, doc ? 0 : err.line, why);
        json_decref(doc);
        free(path);
        return 0;
    }
    sync_idmap seen = {0};
    size_t i;
    json_t *e;
    rc = 0;
    json_array_foreach(list, i, e)
    {
        if (rc < 0 || i >= SYNC_DESC_ROOTS_MAX)
            break;
        const char *folder = json_string_value(at_path(e, &r->folder));
        const char *cwd = r->cwd.n ? json_string_value(at_path(e, &r->cwd)) : NULL;
        if (!folder || !folder[0] || (folder[0] != '/' && strstr(folder, "..")))
            continue;
        /* a relative folder is the home's (an agent's listing of its own folders) */
        char *at = folder[0] == '/' ? sync_dup(folder) : sync_join(home, folder);
        char *real = at ? realpath(at, NULL) : NULL;
        if (!real) {
            free(at);
            if (!at)
                rc = MCPAGE_ENOMEM;
            continue; /* a project folder since removed */
        }
        int added = sync_idmap_add(&seen, real);
        if (added < 0)
            rc = added;
        else if (added == 1 && strcmp(real, root) != 0)
            rc = walk_globs(d, at, real, cwd && cwd[0] == '/' ? cwd : NULL, NULL, js, rep);
        free(real);
        free(at);
    }
    if (json_array_size(list) > SYNC_DESC_ROOTS_MAX) {
        (void)snprintf(why, sizeof why, "more than %d folders listed: the rest not read",
                       SYNC_DESC_ROOTS_MAX);
        sync_warn(rep, d->name, path, 0, why);
    }
    sync_idmap_free(&seen);
    json_decref(doc);
    free(path);
    return rc;
}

/* The description's listing of project paths as {hash hex: path} (NULL
 * when there is none or it is not what the description says: a warning). */
static json_t *load_hashed(const sync_desc *d, const char *home, const char *root, sync_report *rep)
{
    const sd_hashed *h = d->hashed;
    char *path = sync_join(home, h->file);
    struct stat sb;
    if (!path || lstat(path, &sb) < 0) {
        free(path);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    char why[300] = "";
    if (sync_source_read(root, path, ROOTS_FILE_MAX, &text, &len, why, sizeof why) < 0) {
        sync_warn(rep, d->name, path, 0, why[0] ? why : "cannot read the listing");
        free(path);
        return NULL;
    }
    json_t *doc = json_loadb(text, len, 0, NULL);
    free(text);
    json_t *list = at_path(doc, &h->list);
    json_t *map = json_object();
    if (!json_is_array(list))
        sync_warn(rep, d->name, path, 0, "no list of project paths where the description says");
    bool is_md5 = strcmp(h->hash, "md5") == 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *cwd = json_string_value(at_path(e, &h->cwd));
        uint8_t dg[SHA256_LEN];
        size_t dn = is_md5 ? MD5_LEN : SHA256_LEN;
        if (i >= SYNC_DESC_ROOTS_MAX || !map)
            break;
        if (!cwd)
            continue;
        if (is_md5)
            md5(cwd, strlen(cwd), dg);
        else
            sha256(cwd, strlen(cwd), dg);
        char hex[2 * SHA256_LEN + 1];
        hex_encode(dg, dn, hex);
        json_object_set_new(map, hex, json_string(cwd));
    }
    json_decref(doc);
    free(path);
    return map;
}

int sync__desc_discover(const sync_desc *d, const char *home, sync_fold_jobs *js, sync_report *rep)
{
    char *root = realpath(home, NULL);
    if (!root)
        return 0;
    json_t *hashed = d->hashed ? load_hashed(d, home, root, rep) : NULL;
    int rc = walk_globs(d, home, root, NULL, hashed, js, rep);
    json_decref(hashed);
    if (rc == 0 && d->roots)
        rc = walk_roots(d, home, root, js, rep);
    free(root);
    return rc < 0 ? rc : 0;
}

/* ---- sessions with a sidecar ---------------------------------------------- */

/*
 * A session's folder rendered as JSON Lines: each record file, in name
 * order, as one line (its JSON compacted; a file that is not JSON is a
 * line saying so, which the fold counts and names as malformed).
 */
static int folder_load(const sync_fold_job *job, char **outp, size_t *outlen, char *why,
                       size_t whylen)
{
    const sync_desc *d = job->fmt->desc;
    const sd_glob *g = NULL;
    for (size_t i = 0; i < d->nglobs && !g; i++)
        if (d->globs[i].layout == SD_FOLDER)
            g = &d->globs[i];
    if (!g) {
        (void)snprintf(why, whylen, "no folder layout in the description");
        return MCPAGE_EINVAL;
    }
    char **files = NULL;
    size_t nf = 0;
    int rc = folder_records(job->home, job->path, g->each, NULL, d->name, &files, &nf);
    if (rc < 0)
        return rc;
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    rc = w ? 0 : MCPAGE_ENOMEM;
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        char *text = NULL;
        size_t len = 0;
        char fwhy[200] = "";
        int frc = sync_source_read(job->home, files[i], ENGINE_RECORD_MAX, &text, &len, fwhy,
                                   sizeof fwhy);
        if (frc == MCPAGE_ENOMEM) {
            rc = frc;
            break;
        }
        json_t *rec = frc == 0 ? json_loadb(text, len, 0, NULL) : NULL;
        free(text);
        const char *base = strrchr(files[i], '/');
        base = base ? base + 1 : files[i];
        if (rec) {
            if (json_dumpf(rec, w, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0)
                rc = MCPAGE_ENOMEM;
        } else {
            /* not JSON (or refused): a line naming it, never a record */
            char esc[300];
            text_term_escape_line(esc, sizeof esc, base, strlen(base));
            fprintf(w, "%s: %s", esc, frc == 0 ? "not a JSON document" : fwhy);
        }
        json_decref(rec);
        if (rc == 0 && fputc('\n', w) == EOF)
            rc = MCPAGE_ENOMEM;
        if (rc == 0 && ftell(w) > SYNC_FOLD_READ_MAX) {
            (void)snprintf(why, whylen, "its records pass the %d MiB read limit",
                           SYNC_FOLD_READ_MAX >> 20);
            rc = MCPAGE_ERANGE;
        }
    }
    names_free(files, nf);
    if (w && fclose(w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *outp = buf;
    *outlen = n;
    return 0;
}

static int desc_load(const sync_fold_job *job, char **outp, size_t *outlen, char *why,
                     size_t whylen)
{
    const sync_desc *d = job->fmt->desc;
    if (job->db)
        return sync__desc_db_load(job, outp, outlen, why, whylen);
    *outp = NULL;
    *outlen = 0;
    char *raw = NULL, *conv = NULL, *side = NULL;
    size_t rawlen = 0, convlen = 0, sidelen = 0;
    int rc = job->folder ? folder_load(job, &raw, &rawlen, why, whylen)
                         : sync_source_read(job->home, job->path, SYNC_FOLD_READ_MAX, &raw, &rawlen,
                                            why, whylen);
    if (rc < 0)
        return rc;
    if (job->convert) {
        rc = sync__desc_convert(d, raw, rawlen, &conv, &convlen, why, whylen);
        free(raw);
        if (rc < 0)
            return rc;
        raw = conv;
        rawlen = convlen;
    }
    char *dir = sync_dup(job->path);
    char *slash = dir && !job->folder ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = 0;
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    int ok = w != NULL;
    for (size_t i = 0; ok && dir && i < d->nsidecar; i++) {
        /* each sidecar that is there and holds JSON: a first line {"$sidecarK": it} */
        char name[512];
        sidecar_name(d->sidecar[i], job->path, name, sizeof name);
        char *sp = sync_join(dir, name);
        char swhy[160];
        json_t *facts = NULL;
        if (sp && sync_source_read(job->home, sp, ENGINE_SIDECAR_MAX, &side, &sidelen, swhy,
                                   sizeof swhy) == 0)
            facts = json_loadb(side, sidelen, 0, NULL);
        free(side);
        side = NULL;
        free(sp);
        if (json_is_object(facts) || json_is_array(facts)) {
            char key[16];
            if (i == 0)
                (void)snprintf(key, sizeof key, "$sidecar");
            else
                (void)snprintf(key, sizeof key, "$sidecar%zu", i);
            json_t *head = json_pack("{sO}", key, facts);
            ok = head && json_dumpf(head, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
                 fputc('\n', w) != EOF;
            json_decref(head);
        }
        json_decref(facts);
    }
    free(dir);
    if (ok && rawlen)
        ok = fwrite(raw, 1, rawlen, w) == rawlen;
    if (w && fclose(w) != 0)
        ok = 0;
    free(raw);
    if (!ok) {
        free(buf);
        return MCPAGE_ENOMEM;
    }
    *outp = buf;
    *outlen = n;
    return 0;
}

void sync__desc_bind(sync_desc *d)
{
    d->fmt.source = d->name;
    d->fmt.desc = d;
    int folders = 0;
    for (size_t i = 0; i < d->nglobs; i++)
        folders |= d->globs[i].layout == SD_FOLDER;
    d->fmt.load = d->nsidecar || d->db || folders ? desc_load : NULL;
    if (d->writes && strcmp(d->writes, "opencode") == 0)
        sync__opencode_formats(d->wfmt, d->name);
    if (d->writes && strcmp(d->writes, "vscode-chat") == 0)
        sync__vscode_chat_formats(d->wfmt, d->name);
    if (d->writes && strcmp(d->writes, "aider") == 0)
        sync__aider_format(&d->wfmt[0], d->name);
    if (d->writes && strcmp(d->writes, "cursor-ide") == 0) {
        d->wfmt[0] = sync__cursor_ide_format;
        d->wfmt[0].source = d->name;
        d->wfmt[1] = sync__cursor_ide_panel_format;
        d->wfmt[1].source = d->name;
    }
}
