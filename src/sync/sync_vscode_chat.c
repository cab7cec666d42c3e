/*
 * VS Code's chat sessions (GitHub Copilot Chat's panel, agent and edit
 * modes), folded by sync_fold.c under a described source's name
 * ("writes": "vscode-chat"; built in as vscode-copilot):
 *
 *   <User>/workspaceStorage/<hash>/chatSessions/<sessionId>.json   (a document)
 *   <User>/workspaceStorage/<hash>/chatSessions/<sessionId>.jsonl  (a mutation log)
 *   <User>/globalStorage/emptyWindowChatSessions/<sessionId>.json[l] (no folder open)
 *
 * for every VS Code-family User folder under the home (sync_vscode.h);
 * the project is the folder workspace.json names.
 *
 * A document is VS Code's ISerializableChatData (versions 1, 2 and 3:
 * chatModel.ts): {version, sessionId, creationDate, customTitle (v3) or
 * computedTitle (v2), requests: [{requestId, timestamp, message {text}
 * (a string in v1), variableData {variables}, response: [parts],
 * result {timings, metadata, errorDetails}, modelState {value} or
 * isCanceled, modelId, ...}]}. Since late 2025 VS Code writes the same
 * state as a log (objectMutationLog.ts, chatSessionOperationLog.ts): a
 * first line {"kind":0,"v":state}, then {"kind":1,"k":path,"v":value}
 * (set), {"kind":2,"k":path,"v":[items],"i":n} (truncate the array to n
 * when i is given, then append the items) and {"kind":3,"k":path}
 * (delete); VS Code compacts it back to one kind-0 line now and then.
 *
 * Both are read whole and rendered as the JSON Lines they stand for
 * (convert): a first line {"session": facts}, then one {"request": ...}
 * line per request, the request as VS Code holds it now. That rendering
 * is the session's raw copy (read_raw) and is compared with the stored
 * one like a database's: requests added after the stored ones are
 * appended; a request that changed (its response grew, a vote) or was
 * removed stores the session again, message ids kept where the request
 * stays. Each request gives its user message, then the response in
 * order: text (markdown runs, inline references as links, thinking as
 * `[thinking]`), each tool invocation as a call and its result (denied
 * or failed ones flagged as errors), edit groups as calls naming the
 * file, an error (`result.errorDetails`) and a cancellation as notes.
 */
#define _GNU_SOURCE /* d_type */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_json.h"
#include "sync/sync_vscode.h"
#include "sync/sync_vscode_chat.h"

#define VSC_PARTS_MAX   20000 /* response parts of one request read */
#define VSC_PATH_MAX    64    /* elements of a mutation's key path */
#define VSC_ATTACH_MAX  20    /* attachment names listed with a prompt */
#define VSC_VERSION_MAX 3     /* newest document version known */

/* ---- the mutation log ------------------------------------------------ */

/* The container a path's first n-1 elements lead to, or NULL. */
static json_t *walk(json_t *state, json_t *path, size_t n)
{
    json_t *at = state;
    for (size_t i = 0; at && i + 1 < n; i++) {
        json_t *k = json_array_get(path, i);
        if (json_is_string(k) && json_is_object(at))
            at = json_object_get(at, json_string_value(k));
        else if (json_is_integer(k) && json_is_array(at) && json_integer_value(k) >= 0)
            at = json_array_get(at, (size_t)json_integer_value(k));
        else
            at = NULL;
    }
    return json_is_object(at) || json_is_array(at) ? at : NULL;
}

/* Sets (or with v NULL deletes) the last element of `path` in `at`; 0,
   or -1 when the key does not fit the container. Steals nothing. */
static int put(json_t *at, json_t *key, json_t *v)
{
    if (json_is_object(at) && json_is_string(key)) {
        if (!v) {
            (void)json_object_del(at, json_string_value(key)); /* absent: nothing to do */
            return 0;
        }
        return json_object_set(at, json_string_value(key), v) == 0 ? 0 : -1;
    }
    if (json_is_array(at) && json_is_integer(key) && json_integer_value(key) >= 0) {
        size_t i = (size_t)json_integer_value(key), n = json_array_size(at);
        if (!v) { /* JavaScript leaves a hole: null stands for it */
            return i < n ? json_array_set(at, i, json_null()) : 0;
        }
        if (i < n)
            return json_array_set(at, i, v) == 0 ? 0 : -1;
        if (i == n)
            return json_array_append(at, v) == 0 ? 0 : -1;
    }
    return -1;
}

/* One log entry applied to *state; 0, or -1 with a reason. */
static int apply(json_t **state, json_t *e, long line_no, char *why, size_t whylen)
{
    json_t *kind = json_object_get(e, "kind");
    json_int_t k = json_is_integer(kind) ? json_integer_value(kind) : -1;
    if (k == 0) {
        json_t *v = json_object_get(e, "v");
        if (!json_is_object(v)) {
            (void)snprintf(why, whylen, "line %ld: a kind 0 entry whose v is not an object",
                           line_no);
            return -1;
        }
        json_decref(*state);
        *state = json_incref(v);
        return 0;
    }
    if (!*state) {
        (void)snprintf(why, whylen, "line %ld: an entry before the initial state (kind 0)",
                       line_no);
        return -1;
    }
    json_t *path = json_object_get(e, "k");
    size_t n = json_array_size(path);
    if (k < 1 || k > 3 || !json_is_array(path) || n == 0 || n > VSC_PATH_MAX) {
        (void)snprintf(why, whylen, "line %ld: %s", line_no,
                       k < 1 || k > 3 ? "an entry of an unknown kind"
                                      : "an entry without a key path");
        return -1;
    }
    json_t *at = walk(*state, path, n);
    json_t *last = json_array_get(path, n - 1);
    int rc = -1;
    if (at && k == 1)
        rc = put(at, last, json_object_get(e, "v") ? json_object_get(e, "v") : json_null());
    else if (at && k == 3)
        rc = put(at, last, NULL);
    else if (at && k == 2) {
        /* the array at the path (made when absent), cut to i, then the items */
        json_t *arr = json_is_object(at) && json_is_string(last)
                          ? json_object_get(at, json_string_value(last))
                      : json_is_array(at) && json_is_integer(last) && json_integer_value(last) >= 0
                          ? json_array_get(at, (size_t)json_integer_value(last))
                          : NULL;
        json_t *made = NULL;
        if (!json_is_array(arr)) {
            arr = made = json_array();
            if (!made || put(at, last, made) < 0) {
                json_decref(made);
                arr = made = NULL;
            }
        }
        json_t *cut = json_object_get(e, "i"), *items = json_object_get(e, "v");
        if (arr && (!cut || json_is_integer(cut)) && (!items || json_is_array(items))) {
            rc = 0;
            if (cut && json_integer_value(cut) >= 0) {
                size_t to = (size_t)json_integer_value(cut);
                while (json_array_size(arr) > to && rc == 0)
                    rc = json_array_remove(arr, json_array_size(arr) - 1);
            }
            size_t i;
            json_t *it;
            json_array_foreach(items, i, it)
            {
                if (rc == 0)
                    rc = json_array_append(arr, it);
            }
        }
        json_decref(made);
    }
    if (rc < 0)
        (void)snprintf(why, whylen, "line %ld: its key path leads nowhere in the session", line_no);
    return rc;
}

int sync__vscode_log_replay(const char *doc, size_t len, json_t **out, char *why, size_t whylen,
                            long *skipped)
{
    *out = NULL;
    *skipped = 0;
    json_t *state = NULL;
    long line_no = 0;
    char first[200] = "";
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(doc + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - doc) : len;
        line_no++;
        size_t n = end - at;
        const char *p = doc + at;
        at = end + 1;
        while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == 0)
            continue;
        json_error_t err;
        json_t *e = sync_json_loadb(p, n, 0, &err);
        char w[200] = "";
        if (!json_is_object(e)) {
            if (!nl) { /* the last line, still being written: taken next time */
                json_decref(e);
                break;
            }
            (void)snprintf(w, sizeof w, "line %ld: %s", line_no,
                           e ? "not a JSON object" : err.text);
        } else if (apply(&state, e, line_no, w, sizeof w) == 0) {
            w[0] = 0;
        }
        json_decref(e);
        if (w[0]) {
            if (!state) { /* the first entry is not the state: not a log */
                (void)snprintf(why, whylen, "not a VS Code chat log: %s", w);
                return MCPAGE_EPARSE;
            }
            if (!*skipped)
                (void)snprintf(first, sizeof first, "%s", w);
            (*skipped)++;
        }
    }
    if (!state) {
        (void)snprintf(why, whylen, "not a VS Code chat log: no initial state (kind 0)");
        return MCPAGE_EPARSE;
    }
    if (*skipped)
        (void)snprintf(why, whylen, "%ld log entries not applied (the first: %s)", *skipped, first);
    *out = state;
    return 0;
}

/* ---- the rendering --------------------------------------------------- */

/* Appends one compact JSON line {"<key>": v} to *buf. */
static int emit(char **buf, size_t *len, size_t *cap, const char *key, json_t *v)
{
    json_t *line = json_pack("{sO}", key, v);
    char *s = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(line);
    if (!s)
        return MCPAGE_ENOMEM;
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1)
            c *= 2;
        char *b = realloc(*buf, c);
        if (!b) {
            free(s);
            return MCPAGE_ENOMEM;
        }
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    (*buf)[*len + n] = '\n';
    *len += n + 1;
    free(s);
    return 0;
}

/* The facts line: the session's own keys that name it, not its draft
   input or the editor's bookkeeping (they change without a message). */
static const char *const session_keys[] = {
    "version",           "sessionId",         "creationDate",    "customTitle", "computedTitle",
    "requesterUsername", "responderUsername", "initialLocation", "isImported",  NULL};

static int render(json_t *state, char **out, size_t *outlen, char *why, size_t whylen)
{
    *out = NULL;
    *outlen = 0;
    if (!json_is_object(state)) {
        (void)snprintf(why, whylen, "not a VS Code chat session (a JSON object)");
        return MCPAGE_EPARSE;
    }
    json_t *version = json_object_get(state, "version");
    if (version && (!json_is_integer(version) || json_integer_value(version) < 1 ||
                    json_integer_value(version) > VSC_VERSION_MAX)) {
        char v[40] = "?";
        if (json_is_integer(version))
            (void)snprintf(v, sizeof v, "%lld", (long long)json_integer_value(version));
        (void)snprintf(why, whylen,
                       "a chat session of format version %s (versions 1 to %d are read)", v,
                       VSC_VERSION_MAX);
        return MCPAGE_EPARSE;
    }
    json_t *requests = json_object_get(state, "requests");
    if (!json_is_array(requests)) {
        (void)snprintf(why, whylen, "not a VS Code chat session: no \"requests\" array");
        return MCPAGE_EPARSE;
    }
    json_t *facts = json_object();
    if (!facts)
        return MCPAGE_ENOMEM;
    for (size_t i = 0; session_keys[i]; i++) {
        json_t *v = json_object_get(state, session_keys[i]);
        if (v && !json_is_null(v) && json_object_set(facts, session_keys[i], v) < 0) {
            json_decref(facts);
            return MCPAGE_ENOMEM;
        }
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = emit(&buf, &len, &cap, "session", facts);
    json_decref(facts);
    size_t i;
    json_t *r;
    json_array_foreach(requests, i, r)
    {
        if (rc == 0 && json_is_object(r))
            rc = emit(&buf, &len, &cap, "request", r);
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

static int convert_doc(const char *doc, size_t len, char **out, size_t *outlen, char *why,
                       size_t whylen)
{
    json_error_t err;
    json_t *state = json_loadb(doc, len, 0, &err);
    if (!state) {
        (void)snprintf(why, whylen, "not a JSON document: %s (line %d)", err.text, err.line);
        return MCPAGE_EPARSE;
    }
    int rc = render(state, out, outlen, why, whylen);
    json_decref(state);
    return rc;
}

static int convert_log(const char *doc, size_t len, char **out, size_t *outlen, char *why,
                       size_t whylen)
{
    json_t *state = NULL;
    long skipped = 0;
    char note[SYNC_WARNING_LEN] = "";
    int rc = sync__vscode_log_replay(doc, len, &state, note, sizeof note, &skipped);
    if (rc < 0) {
        (void)snprintf(why, whylen, "%s", note);
        return rc;
    }
    rc = render(state, out, outlen, why, whylen);
    json_decref(state);
    if (rc == 0 && skipped)
        (void)snprintf(why, whylen, "%s", note); /* read, with a warning */
    return rc;
}

/* ---- folding --------------------------------------------------------- */

static char *short_or_null(const char *s, size_t max)
{
    return s && *s ? sync_short_copy(s, max) : NULL;
}

/* A time in ms since the epoch as ISO 8601, or NULL. */
static char *iso_of(json_t *ms)
{
    return json_is_number(ms) && json_number_value(ms) > 0 ? sync_iso_ms(json_number_value(ms))
                                                           : NULL;
}

static int vsc_fold_line(sync_fold *f, const char *line, size_t len, int64_t off, int64_t line_no,
                         char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    if (!json_is_object(root)) {
        (void)snprintf(why, whylen, "%s", root ? "not a JSON object" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = 0;
    json_t *s = json_object_get(root, "session");
    json_t *r = json_object_get(root, "request");
    if (json_is_object(s)) {
        sync_fold_set(&f->session_id, sync_json_str(s, "sessionId"));
        const char *title = sync_json_str(s, "customTitle");
        if (!title || !*title)
            title = sync_json_str(s, "computedTitle");
        if (title && *title) {
            free(f->title);
            f->title = sync_short_copy(title, SYNC_TITLE_MAX);
        }
        char *start = iso_of(json_object_get(s, "creationDate"));
        sync_fold_set(&f->start_time, start);
        free(start);
    } else if (json_is_object(r)) {
        rc = sync_fold_push(f, sync_json_str(r, "requestId"), off, (int64_t)len, line_no, -1);
    }
    json_decref(root);
    return rc;
}

/* A markdown value: a string or {value}. */
static const char *md(json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : sync_json_str(v, "value");
}

/* The model a request names: the one that answered, else the one picked
   (without VS Code's "copilot/" vendor prefix). */
static const char *model_of(json_t *req)
{
    json_t *meta = json_object_get(json_object_get(req, "result"), "metadata");
    const char *m = sync_json_str(meta, "resolvedModel");
    if (m && *m)
        return m;
    m = sync_json_str(req, "modelId");
    if (m && strncmp(m, "copilot/", 8) == 0 && m[8])
        m += 8;
    return m && *m ? m : NULL;
}

/* The records of one request, built in order. */
typedef struct vsc_out {
    sync_record *r;
    size_t k, cap;
    sync_text t;        /* the assistant's text being gathered */
    const char *ts;     /* the response's time */
    const char *model;  /* the request's model */
    json_t *args;       /* call id -> the arguments the model sent (toolCallRounds) */
    json_t *results;    /* call id -> the tool's output (toolCallResults) */
    size_t last_answer; /* 1 + the last assistant record, for the usage; 0: none */
} vsc_out;

static sync_record *next(vsc_out *o)
{
    return o->k < o->cap ? &o->r[o->k++] : NULL;
}

/* The gathered text as an assistant message, when there is any. */
static void flush(vsc_out *o)
{
    if (o->t.len == 0) {
        free(o->t.buf);
        memset(&o->t, 0, sizeof o->t);
        return;
    }
    sync_record *r = next(o);
    if (!r) {
        free(o->t.buf);
        memset(&o->t, 0, sizeof o->t);
        return;
    }
    r->kind = SYNC_MESSAGE;
    r->role = "assistant";
    r->text = sync_text_finish(&o->t);
    r->timestamp = short_or_null(o->ts, 64);
    r->model = short_or_null(o->model, 150);
    o->last_answer = o->k;
}

/* The text of a tool result: its output blocks ({value} or strings). */
static void result_text(sync_text *t, json_t *content)
{
    if (json_is_string(content)) {
        sync_text_adds(t, json_string_value(content));
        return;
    }
    size_t i;
    json_t *b;
    json_array_foreach(content, i, b)
    {
        const char *s = md(b);
        if (!s)
            s = sync_json_str(b, "text");
        if (s && *s) {
            sync_text_sep(t);
            sync_text_adds(t, s);
        }
    }
}

static void tool_invocation(vsc_out *o, json_t *p)
{
    flush(o);
    const char *name = sync_json_str(p, "toolId");
    const char *id = sync_json_str(p, "toolCallId");
    json_t *data = json_object_get(p, "toolSpecificData");
    json_t *details = json_object_get(p, "resultDetails");
    /* the input: what the model sent (agent mode keeps it), else what the
       invocation shows */
    json_t *args = id ? json_object_get(o->args, id) : NULL, *made = NULL;
    if (!args && json_is_string(json_object_get(details, "input")))
        args = json_object_get(details, "input");
    if (!args) {
        const char *kind = sync_json_str(data, "kind");
        json_t *cl = json_object_get(data, "commandLine");
        const char *cmd = sync_json_str(cl, "original");
        if (!cmd)
            cmd = json_is_string(json_object_get(data, "command"))
                      ? json_string_value(json_object_get(data, "command"))
                      : NULL;
        if (kind && strcmp(kind, "input") == 0 && json_object_get(data, "rawInput"))
            args = json_object_get(data, "rawInput");
        else if (cmd)
            args = made = json_pack("{ss}", "command", cmd);
        else if (md(json_object_get(p, "invocationMessage")))
            args = made =
                json_pack("{ss}", "description", md(json_object_get(p, "invocationMessage")));
    }
    sync_record *r = next(o);
    if (r) {
        sync_record_call(r, "assistant", name, id, args, o->ts);
        r->model = short_or_null(o->model, 150);
    }
    json_decref(made);
    /* its result: the tool's output when kept, else what VS Code showed */
    json_t *confirmed = json_object_get(p, "isConfirmed");
    json_int_t ck = json_is_integer(json_object_get(confirmed, "type"))
                        ? json_integer_value(json_object_get(confirmed, "type"))
                        : -1;
    int denied = json_is_false(confirmed) || ck == 0, skipped = ck == 5;
    sync_text t = {0};
    if (denied)
        sync_text_adds(&t, "[denied] ");
    else if (skipped)
        sync_text_adds(&t, "[skipped] ");
    json_t *res = id ? json_object_get(o->results, id) : NULL;
    size_t before = t.len;
    if (res)
        result_text(&t, json_is_object(res) ? json_object_get(res, "content") : res);
    if (t.len == before && json_is_array(json_object_get(details, "output")))
        result_text(&t, json_object_get(details, "output"));
    if (t.len == before) {
        const char *past = md(json_object_get(p, "pastTenseMessage"));
        sync_text_adds(&t, past ? past : md(json_object_get(p, "invocationMessage")));
    }
    r = next(o);
    if (!r) {
        free(t.buf);
        return;
    }
    r->kind = SYNC_MESSAGE;
    r->role = "tool";
    r->text = sync_text_finish(&t);
    r->timestamp = short_or_null(o->ts, 64);
    r->tool_name = short_or_null(name ? name : "?", 100);
    r->call_id = short_or_null(id, 100);
    r->is_error = denied || skipped || json_is_true(json_object_get(details, "isError"));
}

/* A textEditGroup: the edits made to one file, as a call naming it. */
static void edit_group(vsc_out *o, json_t *p)
{
    flush(o);
    json_t *uri = json_object_get(p, "uri");
    const char *path = sync_json_str(uri, "fsPath");
    if (!path)
        path = sync_json_str(uri, "path");
    /* the new text of every edit, for the file edits index's line counts */
    size_t edits = 0, i, j;
    json_t *e, *one;
    sync_text text = {0};
    json_array_foreach(json_object_get(p, "edits"), i, e)
    {
        json_t *list = json_is_array(e) ? e : NULL;
        size_t n = list ? json_array_size(list) : 1;
        for (j = 0; j < n; j++) {
            one = list ? json_array_get(list, j) : e;
            edits++;
            const char *nt = sync_json_str(one, "text");
            if (nt && *nt) {
                sync_text_sep(&text);
                sync_text_adds(&text, nt);
            }
        }
    }
    char *joined = sync_text_finish(&text);
    json_t *args = json_pack("{sssIss}", "path", path ? path : "?", "edits", (json_int_t)edits,
                             "text", joined ? joined : "");
    free(joined);
    sync_record *r = next(o);
    if (r) {
        sync_record_call(r, "assistant", "textEditGroup", NULL, args, o->ts);
        r->model = short_or_null(o->model, 150);
    }
    json_decref(args);
}

/* A note after the response (an error, a cancellation). */
static void note(vsc_out *o, const char *label, const char *text, int err)
{
    flush(o);
    sync_record *r = next(o);
    if (!r)
        return;
    sync_text t = {0};
    sync_text_adds(&t, label);
    if (text && *text) {
        sync_text_adds(&t, " ");
        sync_text_adds(&t, text);
    }
    r->kind = SYNC_MESSAGE;
    r->role = "system";
    r->text = sync_text_finish(&t);
    r->timestamp = short_or_null(o->ts, 64);
    r->is_error = err;
}

static void response_part(vsc_out *o, json_t *p)
{
    if (json_is_string(p)) { /* very old: plain markdown */
        sync_text_adds(&o->t, json_string_value(p));
        return;
    }
    const char *kind = sync_json_str(p, "kind");
    if (!kind || strcmp(kind, "markdownContent") == 0 || strcmp(kind, "markdownVuln") == 0) {
        const char *v = md(json_object_get(p, "content"));
        if (!v)
            v = md(p);
        if (v)
            sync_text_adds(&o->t, v);
    } else if (strcmp(kind, "thinking") == 0) {
        json_t *v = json_object_get(p, "value");
        const char *s = md(v);
        if (json_is_array(v)) { /* a thought in pieces */
            sync_text tt = {0};
            size_t i;
            json_t *piece;
            json_array_foreach(v, i, piece)
            {
                if (json_is_string(piece))
                    sync_text_adds(&tt, json_string_value(piece));
            }
            if (tt.len) {
                sync_text_sep(&o->t);
                sync_text_adds(&o->t, "[thinking] ");
                sync_text_add(&o->t, tt.buf, tt.len);
                sync_text_adds(&o->t, "\n");
            }
            free(tt.buf);
        } else if (s && *s) {
            sync_text_sep(&o->t);
            sync_text_adds(&o->t, "[thinking] ");
            sync_text_adds(&o->t, s);
            sync_text_adds(&o->t, "\n");
        }
    } else if (strcmp(kind, "inlineReference") == 0) {
        json_t *ref = json_object_get(p, "inlineReference");
        const char *path = sync_json_str(ref, "fsPath");
        if (!path)
            path = sync_json_str(ref, "path");
        if (!path)
            path = sync_json_str(json_object_get(ref, "uri"), "path"); /* a Location */
        const char *name = sync_json_str(p, "name");
        if (!name && path) {
            name = strrchr(path, '/');
            name = name && name[1] ? name + 1 : path;
        }
        if (path) {
            sync_text_adds(&o->t, "[");
            sync_text_adds(&o->t, name);
            sync_text_adds(&o->t, "](");
            sync_text_adds(&o->t, path);
            sync_text_adds(&o->t, ")");
        }
    } else if (strcmp(kind, "toolInvocationSerialized") == 0 ||
               strcmp(kind, "toolInvocation") == 0) {
        tool_invocation(o, p);
    } else if (strcmp(kind, "textEditGroup") == 0 || strcmp(kind, "notebookEditGroup") == 0) {
        edit_group(o, p);
    } else if (strcmp(kind, "warning") == 0 || strcmp(kind, "confirmation") == 0) {
        const char *v = md(json_object_get(p, "content"));
        if (!v)
            v = md(json_object_get(p, "message"));
        if (v && *v) {
            sync_text_sep(&o->t);
            sync_text_adds(&o->t, strcmp(kind, "warning") == 0 ? "[warning] " : "[confirmation] ");
            sync_text_adds(&o->t, v);
        }
    }
    /* codeblockUri, undoStop, progressMessage, prepareToolInvocation,
       command buttons, references and the like hold no words of the
       conversation */
}

/* call id -> arguments, and call id -> output, from agent mode's metadata. */
static void index_calls(vsc_out *o, json_t *meta)
{
    o->args = json_object();
    size_t i, j;
    json_t *round, *call;
    json_array_foreach(json_object_get(meta, "toolCallRounds"), i, round)
    {
        json_array_foreach(json_object_get(round, "toolCalls"), j, call)
        {
            const char *id = sync_json_str(call, "id");
            json_t *a = json_object_get(call, "arguments");
            if (o->args && id && a)
                json_object_set(o->args, id, a);
        }
    }
    json_t *res = json_object_get(meta, "toolCallResults");
    o->results = json_is_object(res) ? res : NULL;
}

static int vsc_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    (void)sub;
    *out = NULL;
    *n = 0;
    json_t *root = sync_json_loadb(line, len, 0, NULL);
    json_t *req = json_object_get(root, "request");
    if (!json_is_object(root)) {
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    if (!json_is_object(req)) { /* the facts line */
        json_decref(root);
        return 0;
    }
    json_t *response = json_object_get(req, "response");
    size_t nparts = json_is_array(response) ? json_array_size(response) : 0;
    if (nparts > VSC_PARTS_MAX)
        nparts = VSC_PARTS_MAX;
    vsc_out o = {.cap = 4 + 2 * nparts};
    o.r = calloc(o.cap, sizeof *o.r);
    if (!o.r) {
        json_decref(root);
        return MCPAGE_ENOMEM;
    }
    json_t *result = json_object_get(req, "result");
    json_t *meta = json_object_get(result, "metadata");
    char *ts = iso_of(json_object_get(req, "timestamp"));
    /* the answer's time: when its first part arrived, when known */
    json_t *first = json_object_get(json_object_get(result, "timings"), "firstProgress");
    char *answer_ts = NULL;
    if (json_is_number(json_object_get(req, "timestamp")) && json_is_number(first) &&
        json_number_value(first) >= 0)
        answer_ts = sync_iso_ms(json_number_value(json_object_get(req, "timestamp")) +
                                json_number_value(first));
    o.ts = answer_ts ? answer_ts : ts;
    o.model = model_of(req);
    index_calls(&o, meta);

    /* the prompt, and what was attached to it */
    json_t *msg = json_object_get(req, "message");
    const char *text = json_is_string(msg) ? json_string_value(msg) : sync_json_str(msg, "text");
    sync_text t = {0};
    if (text)
        sync_text_adds(&t, text);
    size_t i, named = 0;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(req, "variableData"), "variables"), i, v)
    {
        const char *name = sync_json_str(v, "name");
        if (!name || !*name || named == VSC_ATTACH_MAX)
            continue;
        sync_text_adds(&t, named++ ? ", " : (t.len ? "\n\n[attached] " : "[attached] "));
        sync_text_adds(&t, name);
    }
    if (t.len) {
        sync_record *r = next(&o);
        r->kind = SYNC_MESSAGE;
        r->role = "user";
        r->text = sync_text_finish(&t);
        r->timestamp = short_or_null(ts, 64);
        r->is_prompt = text && *text;
    } else {
        free(t.buf);
    }
    for (i = 0; i < nparts; i++)
        response_part(&o, json_array_get(response, i));
    flush(&o);
    /* how it ended: an error, a cancellation */
    json_t *errd = json_object_get(result, "errorDetails");
    if (!errd)
        errd = json_object_get(req, "responseErrorDetails"); /* version 1 */
    json_t *state = json_object_get(json_object_get(req, "modelState"), "value");
    if (json_is_object(errd)) {
        note(&o, "[error]", sync_json_str(errd, "message"), 1);
    } else if ((json_is_integer(state) && json_integer_value(state) == 2) ||
               (!state && json_is_true(json_object_get(req, "isCanceled")))) {
        note(&o, "[cancelled]", NULL, 0);
    }
    /* the model call: its tokens on the answer (one per request; agent
       mode's rounds are not counted apart) */
    int64_t in = sync_json_count(json_object_get(meta, "promptTokens"));
    int64_t outt = sync_json_count(json_object_get(meta, "outputTokens"));
    if ((in || outt) && o.model) {
        sync_record *r = o.last_answer ? &o.r[o.last_answer - 1] : next(&o);
        if (r) {
            if (!o.last_answer)
                r->kind = SYNC_SKIP;
            r->usage.present = 1;
            r->usage.input = in;
            r->usage.output = outt;
            r->usage.model = sync_short_copy(o.model, 150);
            r->usage.key = short_or_null(sync_json_str(req, "requestId"), 150);
            r->usage.timestamp = short_or_null(o.ts, 64);
            r->usage.present = r->usage.model != NULL;
        }
    }
    json_decref(o.args);
    free(ts);
    free(answer_ts);
    json_decref(root);
    return sync__records_finish(o.r, o.k, out, n);
}

static const sync_fold_format json_format = {
    .source = "vscode-copilot",
    .fold_line = vsc_fold_line,
    .expand = vsc_expand,
    .convert = convert_doc,
    .rendered = 1,
};

static const sync_fold_format log_format = {
    .source = "vscode-copilot",
    .fold_line = vsc_fold_line,
    .expand = vsc_expand,
    .convert = convert_log,
    .rendered = 1,
};

void sync__vscode_chat_formats(sync_fold_format fmt[2], const char *source)
{
    fmt[0] = json_format;
    fmt[1] = log_format;
    fmt[0].source = fmt[1].source = source;
}

/* ---- discovery ------------------------------------------------------- */

typedef struct vsc_at {
    sync_fold_jobs *js;
    const char *home;
    const char *source;
    const char *prefix;          /* the session ids' prefix */
    const sync_fold_format *fmt; /* [0] documents, [1] logs */
    sync_report *rep;
    const char *wsdir; /* the workspaceStorage/<hash> folder being walked, or NULL */
    char *cwd;         /* its project, read once (owned) */
    int cwd_read;
} vsc_at;

static int session_entry(void *ud, const struct dirent *e, char *path)
{
    vsc_at *at = ud;
    int log = sync_ends_with(e->d_name, ".jsonl");
    int doc = !log && sync_ends_with(e->d_name, ".json");
    size_t stem = strlen(e->d_name) - (log ? 6 : 5);
    if ((!log && !doc) || stem == 0 || stem + strlen(at->prefix) > STORE_ID_MAX) {
        free(path);
        return 0;
    }
    if (doc) {
        /* VS Code moved this session to a log beside it: the log holds it */
        char l[SYNC_PATH_MAX];
        struct stat sb;
        int k = snprintf(l, sizeof l, "%sl", path);
        if (k > 0 && (size_t)k < sizeof l && lstat(l, &sb) == 0) {
            free(path);
            return 0;
        }
    }
    if (at->wsdir && !at->cwd_read) {
        at->cwd = sync_vscode_workspace(at->home, at->wsdir, at->rep, at->source);
        at->cwd_read = 1;
    }
    char id[STORE_ID_MAX + 1];
    (void)snprintf(id, sizeof id, "%s%.*s", at->prefix, (int)stem, e->d_name);
    sync_fold_job j = {.fmt = &at->fmt[log ? 1 : 0], .convert = 1, .path = path};
    j.home = sync_dup(at->home);
    j.session_id = sync_dup(id);
    j.cwd = at->cwd ? sync_dup(at->cwd) : NULL;
    if (!j.home || !j.session_id || (at->cwd && !j.cwd)) {
        sync__fold_job_free(&j); /* path with it */
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(at->js, &j);
}

/* The chat sessions of one folder (chatSessions/, emptyWindowChatSessions/). */
static int sessions_in(vsc_at *at, const char *dir)
{
    DIR *d = sync_source_opendir(at->home, dir, at->rep, at->source);
    return d ? sync_dir_each(d, dir, session_entry, at) : 0;
}

static int workspace_entry(void *ud, const struct dirent *e, char *path)
{
    vsc_at *at = ud;
    char dir[SYNC_PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s/chatSessions", path);
    struct stat sb;
    int rc = 0;
    if (sync_entry_is(e, path, 1) && k > 0 && (size_t)k < sizeof dir && stat(dir, &sb) == 0 &&
        S_ISDIR(sb.st_mode)) {
        at->wsdir = path;
        at->cwd = NULL;
        at->cwd_read = 0;
        rc = sessions_in(at, dir);
        free(at->cwd);
        at->cwd = NULL;
        at->wsdir = NULL;
    }
    free(path);
    return rc;
}

static int user_entry(void *ud, const char *user, const char *editor)
{
    (void)editor;
    vsc_at *at = ud;
    char dir[SYNC_PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s/workspaceStorage", user);
    int rc = 0;
    struct stat sb;
    if (k > 0 && (size_t)k < sizeof dir && stat(dir, &sb) == 0) {
        DIR *d = sync_source_opendir(at->home, dir, at->rep, at->source);
        rc = d ? sync_dir_each(d, dir, workspace_entry, at) : 0;
    }
    k = snprintf(dir, sizeof dir, "%s/globalStorage/emptyWindowChatSessions", user);
    if (rc == 0 && k > 0 && (size_t)k < sizeof dir && stat(dir, &sb) == 0)
        rc = sessions_in(at, dir);
    return rc;
}

int sync__vscode_chat_discover(sync_fold_jobs *js, const char *home, sync_report *rep,
                               const char *source, const char *prefix,
                               const sync_fold_format fmt[2])
{
    vsc_at at = {.js = js,
                 .home = home,
                 .source = source,
                 .prefix = prefix ? prefix : "",
                 .fmt = fmt,
                 .rep = rep};
    return sync_vscode_users(home, rep, source, user_entry, &at);
}
