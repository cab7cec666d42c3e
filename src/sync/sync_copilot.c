/*
 * GitHub Copilot CLI sessions: COPILOT_HOME/session-state/<id>/events.jsonl
 * (one event per line) with workspace.yaml beside it, folded by
 * sync_fold.c.
 *
 * Events are envelopes {type, id, timestamp, parentId, data}. Stored:
 * user.message {content, attachments} (always; a title candidate only
 * without a `source` such as skill-pdf or agent-<id> and not an autopilot
 * continuation), assistant.message {content, toolRequests [{toolCallId,
 * name, arguments}]} (one message for the text, one per tool call),
 * tool.user_requested {toolCallId, toolName, arguments} (a call the user
 * asked for, role user), tool.execution_start of a call no toolRequests
 * or user request named before it (else it repeats one: skipped),
 * assistant.reasoning {content}, tool.execution_complete {toolCallId,
 * success, result {content}, error {message}}, session.error /
 * session.warning / session.info {message}, system.message and
 * system.notification {content}, abort {reason},
 * session.compaction_complete {summaryContent}, skill.invoked {name,
 * description}, subagent.started / subagent.failed {agentDisplayName,
 * agentDescription / error}, session.task_complete {summary} and
 * session.handoff {summary, context}. Facts: session.start {sessionId,
 * selectedModel, context {cwd, branch}}, session.context_changed,
 * session.model_change {newModel}, session.title_changed {title}.
 * session.snapshot_rewind {upToEventId} removes that event and every
 * later one (an unknown id removes nothing). session.shutdown holds no
 * message but the session's running token totals per model: model calls
 * (expand_shutdown, docs/usage.md). Everything else (turn boundaries,
 * hooks, permissions, streaming deltas and assistant.usage, which are
 * ephemeral and never written) holds nothing. Checked against the
 * Copilot SDK's generated event types: see docs/transcripts.md.
 */
#define _GNU_SOURCE /* d_type */
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_json.h"

#define COPILOT_YAML_MAX 65536 /* bytes of workspace.yaml read */

int sync_default_copilot_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_COPILOT_HOME");
    if (!e || !*e)
        e = getenv("COPILOT_HOME");
    int k;
    if (e && *e) {
        k = snprintf(buf, n, "%s", e);
    } else {
        k = snprintf(buf, n, "%s/.copilot", sync_home_dir());
    }
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

/* ---- records --------------------------------------------------------- */

/* A tool.execution_start entry's sub: whether its call was already
   requested (an assistant's toolRequests, a user's tool.user_requested). */
enum { CALL_NEW = 0, CALL_REPEATED = 1 };

static void take_context(sync_fold *f, json_t *ctx)
{
    sync_fold_set(&f->cwd, sync_json_str(ctx, "cwd"));
    sync_fold_set(&f->branch, sync_json_str(ctx, "branch"));
}

static int copilot_fold_line(sync_fold *f, const char *line, size_t len, int64_t off,
                             int64_t line_no, char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    const char *type = sync_json_str(root, "type");
    if (!json_is_object(root) || !type) {
        snprintf(why, whylen, "%s",
                 !root                  ? err.text
                 : json_is_object(root) ? "an event without a type"
                                        : "not a JSON object");
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    json_t *data = json_object_get(root, "data");
    int rc = 0;
    if (strcmp(type, "session.snapshot_rewind") == 0) {
        long at = sync_fold_find(f, sync_json_str(data, "upToEventId"));
        if (at >= 0)
            rc = sync_fold_truncate(f, (size_t)at);
    } else {
        if (strcmp(type, "session.start") == 0) {
            sync_fold_set(&f->session_id, sync_json_str(data, "sessionId"));
            sync_fold_set(&f->model, sync_json_str(data, "selectedModel"));
            take_context(f, json_object_get(data, "context"));
        } else if (strcmp(type, "session.context_changed") == 0) {
            take_context(f, data);
        } else if (strcmp(type, "session.model_change") == 0) {
            sync_fold_set(&f->model, sync_json_str(data, "newModel"));
        } else if (strcmp(type, "session.title_changed") == 0) {
            const char *title = sync_json_str(data, "title");
            if (title && *title) {
                free(f->title);
                f->title = sync_short_copy(title, SYNC_TITLE_MAX);
            }
        }
        /* a call is stored once: from the assistant's toolRequests or the
           user's request, else from its tool.execution_start */
        int32_t sub = -1;
        if (strcmp(type, "assistant.message") == 0) {
            size_t i;
            json_t *q;
            json_array_foreach(json_object_get(data, "toolRequests"), i, q)
            {
                if ((rc = sync_fold_seen_add(f, sync_json_str(q, "toolCallId"))) < 0)
                    break;
            }
        } else if (strcmp(type, "tool.user_requested") == 0) {
            rc = sync_fold_seen_add(f, sync_json_str(data, "toolCallId"));
        } else if (strcmp(type, "tool.execution_start") == 0) {
            const char *call = sync_json_str(data, "toolCallId");
            sub = sync_fold_seen_has(f, call) ? CALL_REPEATED : CALL_NEW;
            if (rc == 0)
                rc = sync_fold_seen_add(f, call);
        }
        /* every event is an entry, so a rewind finds the one it names */
        if (rc == 0)
            rc = sync_fold_push(f, sync_json_str(root, "id"), off, (int64_t)len, line_no, sub);
    }
    json_decref(root);
    return rc;
}

static char *short_or_null(const char *s, size_t max)
{
    return s && *s ? sync_short_copy(s, max) : NULL;
}

/* One message record with its text (owned by the record afterwards). */
static void set_message(sync_record *r, const char *role, sync_text *t, const char *ts)
{
    r->kind = SYNC_MESSAGE;
    r->role = role;
    r->text = sync_text_finish(t);
    r->timestamp = short_or_null(ts, 64);
}

/* `[label] a` then `b` on the next line (each when present): a system
   note of an event that is not a conversation message. */
static void set_note(sync_record *r, const char *role, const char *label, const char *a,
                     const char *b, const char *ts)
{
    sync_text t = {0};
    sync_text_adds(&t, label);
    if (a && *a) {
        sync_text_adds(&t, " ");
        sync_text_adds(&t, a);
    }
    if (b && *b) {
        sync_text_adds(&t, "\n");
        sync_text_adds(&t, b);
    }
    set_message(r, role, &t, ts);
}

static size_t expand_assistant(json_t *data, const char *ts, sync_record *r)
{
    size_t k = 0;
    sync_text t = {0};
    json_t *reqs = json_object_get(data, "toolRequests");
    size_t nreq = json_is_array(reqs) ? json_array_size(reqs) : 0;
    const char *reasoning = sync_json_str(data, "reasoningText");
    if (reasoning && *reasoning) {
        sync_text_adds(&t, "[thinking] ");
        sync_text_adds(&t, reasoning);
    }
    const char *content = sync_json_str(data, "content");
    if (content && *content) {
        sync_text_sep(&t);
        sync_text_adds(&t, content);
    }
    if (t.len > 0 || nreq == 0)
        set_message(&r[k++], "assistant", &t, ts);
    free(t.buf);
    for (size_t i = 0; i < nreq; i++) {
        json_t *q = json_array_get(reqs, i);
        sync_record_call(&r[k++], "assistant", sync_json_str(q, "name"),
                         sync_json_str(q, "toolCallId"), json_object_get(q, "arguments"), ts);
    }
    return k;
}

#define COPILOT_MODELS_MAX 1000 /* models of one session.shutdown read */

/*
 * session.shutdown's modelMetrics {model: {requests {count}, usage
 * {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
 * reasoningTokens}}}: the session's running totals per model when the
 * process ended (a resumed session's next shutdown carries them on, as
 * ccusage reads them), one usage record per model. inputTokens counts
 * the cache reads and writes: the input stored is the rest. Copilot's
 * billing figures (requests.cost: premium-request multipliers;
 * totalNanoAiu) are not dollars and are not taken as a cost.
 */
static size_t expand_shutdown(json_t *data, const char *ts, sync_record *r, size_t cap)
{
    size_t k = 0;
    const char *model;
    json_t *m;
    json_object_foreach(json_object_get(data, "modelMetrics"), model, m)
    {
        if (k == cap)
            break;
        json_t *use = json_object_get(m, "usage");
        if (!*model || !json_is_object(use))
            continue;
        int64_t in = sync_json_count(json_object_get(use, "inputTokens"));
        int64_t cr = sync_json_count(json_object_get(use, "cacheReadTokens"));
        int64_t cw = sync_json_count(json_object_get(use, "cacheWriteTokens"));
        sync_usage *u = &r[k].usage;
        u->input = in > cr + cw ? in - cr - cw : 0;
        u->cache_read = cr;
        u->cache_creation = cw;
        u->output = sync_json_count(json_object_get(use, "outputTokens"));
        u->reasoning = sync_json_count(json_object_get(use, "reasoningTokens"));
        u->requests = sync_json_count(json_object_get(json_object_get(m, "requests"), "count"));
        u->model = sync_short_copy(model, 150);
        u->timestamp = short_or_null(ts, 64);
        u->cumulative = 1;
        u->present = u->model != NULL;
        r[k++].kind = SYNC_SKIP;
    }
    return k;
}

static int copilot_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_t *root = sync_json_loadb(line, len, 0, NULL);
    const char *type = sync_json_str(root, "type");
    if (!json_is_object(root) || !type) {
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    json_t *data = json_object_get(root, "data");
    const char *ts = sync_json_str(root, "timestamp");
    json_t *reqs = json_object_get(data, "toolRequests");
    size_t nreq = json_is_array(reqs) ? json_array_size(reqs) : 0;
    if (nreq > 10000)
        nreq = 10000;
    size_t nmodels = 0;
    if (strcmp(type, "session.shutdown") == 0) {
        nmodels = json_object_size(json_object_get(data, "modelMetrics"));
        if (nmodels > COPILOT_MODELS_MAX)
            nmodels = COPILOT_MODELS_MAX;
    }
    sync_record *r = calloc(1 + nreq + nmodels, sizeof *r);
    if (!r) {
        json_decref(root);
        return MCPAGE_ENOMEM;
    }
    size_t k = 0;
    sync_text t = {0};
    if (strcmp(type, "user.message") == 0) {
        sync_text_content(&t, json_object_get(data, "content"));
        /* kept whatever its origin; a title only when a person typed it
           (no `source` such as skill-pdf or agent-<id>, no autopilot) */
        const char *origin = sync_json_str(data, "source");
        r[0].is_prompt = t.len > 0 && (!origin || !*origin || strcmp(origin, "user") == 0) &&
                         !json_is_true(json_object_get(data, "isAutopilotContinuation"));
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(data, "attachments"), i, a)
        {
            const char *path = sync_json_str(a, "path");
            if (!path)
                path = sync_json_str(a, "displayName");
            if (path) {
                sync_text_sep(&t);
                sync_text_adds(&t, "[file: ");
                sync_text_adds(&t, path);
                sync_text_adds(&t, "]");
            }
        }
        set_message(&r[k++], "user", &t, ts);
    } else if (strcmp(type, "assistant.message") == 0) {
        k = expand_assistant(data, ts, r);
    } else if (strcmp(type, "tool.user_requested") == 0 ||
               (strcmp(type, "tool.execution_start") == 0 && sub == CALL_NEW)) {
        /* a call the user asked for, or one no toolRequests named */
        int user = strcmp(type, "tool.user_requested") == 0;
        sync_record_call(&r[k++], user ? "user" : "assistant", sync_json_str(data, "toolName"),
                         sync_json_str(data, "toolCallId"), json_object_get(data, "arguments"), ts);
    } else if (strcmp(type, "skill.invoked") == 0) {
        set_note(&r[k++], "system", "[skill]", sync_json_str(data, "name"),
                 sync_json_str(data, "description"), ts);
    } else if (strcmp(type, "subagent.started") == 0) {
        set_note(&r[k++], "system", "[subagent]", sync_json_str(data, "agentDisplayName"),
                 sync_json_str(data, "agentDescription"), ts);
    } else if (strcmp(type, "subagent.failed") == 0) {
        set_note(&r[k], "system", "[subagent failed]", sync_json_str(data, "agentDisplayName"),
                 sync_json_str(data, "error"), ts);
        r[k++].is_error = 1;
    } else if (strcmp(type, "system.notification") == 0) {
        sync_text_content(&t, json_object_get(data, "content"));
        set_message(&r[k++], "system", &t, ts);
    } else if (strcmp(type, "session.task_complete") == 0 && sync_json_str(data, "summary")) {
        set_note(&r[k++], "assistant", "[task complete]", sync_json_str(data, "summary"), NULL, ts);
    } else if (strcmp(type, "session.handoff") == 0) {
        set_note(&r[k++], "system", "[handoff]", sync_json_str(data, "summary"),
                 sync_json_str(data, "context"), ts);
    } else if (strcmp(type, "assistant.reasoning") == 0) {
        sync_text_adds(&t, "[thinking] ");
        sync_text_content(&t, json_object_get(data, "content"));
        set_message(&r[k++], "assistant", &t, ts);
    } else if (strcmp(type, "tool.execution_complete") == 0) {
        json_t *result = json_object_get(data, "result");
        json_t *error = json_object_get(data, "error");
        sync_text_content(&t, json_object_get(result, "content"));
        if (json_is_string(error))
            sync_text_adds(&t, json_string_value(error));
        else if (sync_json_str(error, "message")) {
            sync_text_sep(&t);
            sync_text_adds(&t, sync_json_str(error, "message"));
        }
        set_message(&r[k], "tool", &t, ts);
        r[k].is_error = json_is_false(json_object_get(data, "success")) || json_is_object(error);
        r[k].call_id = short_or_null(sync_json_str(data, "toolCallId"), 100);
        r[k].tool_name = short_or_null(sync_json_str(data, "toolName"), 100);
        k++;
    } else if (strcmp(type, "session.error") == 0 || strcmp(type, "session.warning") == 0 ||
               strcmp(type, "session.info") == 0 || strcmp(type, "abort") == 0) {
        int err = strcmp(type, "session.error") == 0;
        sync_text_adds(&t, err                                    ? "[error] "
                           : strcmp(type, "session.warning") == 0 ? "[warning] "
                           : strcmp(type, "abort") == 0           ? "[abort] "
                                                                  : "");
        const char *msg = sync_json_str(data, "message");
        sync_text_adds(&t, msg ? msg : sync_json_str(data, "reason"));
        set_message(&r[k], "system", &t, ts);
        r[k].is_error = err;
        k++;
    } else if (strcmp(type, "system.message") == 0) {
        sync_text_content(&t, json_object_get(data, "content"));
        set_message(&r[k++], "system", &t, ts);
    } else if (strcmp(type, "session.shutdown") == 0) {
        k = expand_shutdown(data, ts, r, nmodels);
    } else if (strcmp(type, "session.compaction_complete") == 0 &&
               sync_json_str(data, "summaryContent")) {
        sync_text_adds(&t, "[compaction] ");
        sync_text_adds(&t, sync_json_str(data, "summaryContent"));
        set_message(&r[k++], "system", &t, ts);
    }
    json_decref(root);
    return sync__records_finish(r, k, out, n);
}

const sync_fold_format sync__copilot_format = {
    .source = "copilot",
    .fold_line = copilot_fold_line,
    .expand = copilot_expand,
    .convert = NULL,
};

/* ---- discovery ------------------------------------------------------- */

/* A top-level `key: value` of a small YAML file (quotes removed), or NULL. */
static char *yaml_value(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, kl) != 0 || p[kl] != ':')
            continue;
        const char *v = p + kl + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, "\r\n");
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v++;
            n -= 2;
        }
        if (n == 0)
            return NULL;
        char *out = malloc(n + 1);
        if (out) {
            memcpy(out, v, n);
            out[n] = 0;
        }
        return out;
    }
    return NULL;
}

/* Where session folders go: the home and the report. */
typedef struct copilot_at {
    sync_fold_jobs *js;
    const char *home; /* COPILOT_HOME */
    sync_report *rep;
} copilot_at;

/* The cwd workspace.yaml names, or NULL (also when it is refused: a link
 * out of COPILOT_HOME, a FIFO, over COPILOT_YAML_MAX bytes; warned). */
static char *workspace_cwd(const copilot_at *at, const char *dir)
{
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/workspace.yaml", dir);
    if (k < 0 || (size_t)k >= sizeof path)
        return NULL;
    char *buf = NULL, why[SYNC_WARNING_LEN] = "";
    size_t n = 0;
    int rc = sync_source_read(at->home, path, COPILOT_YAML_MAX, &buf, &n, why, sizeof why);
    if (rc < 0) {
        if (rc != MCPAGE_ENOTFOUND && rc != MCPAGE_ENOMEM)
            sync_warn(at->rep, "copilot", path, 0, why);
        return NULL;
    }
    char *cwd = yaml_value(buf, "cwd");
    free(buf);
    return cwd;
}

/* session-state/<id>/events.jsonl, with workspace.yaml beside it. */
static int session_entry(void *ud, const struct dirent *e, char *dir)
{
    const copilot_at *at = ud;
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/events.jsonl", dir);
    struct stat sb;
    if (strlen(e->d_name) > STORE_ID_MAX || k < 0 || (size_t)k >= sizeof path ||
        lstat(path, &sb) < 0) {
        free(dir);
        return 0;
    }
    /* anything but a folder's regular file (a link, a FIFO) is looked at
       when it is opened: refused there, and named */
    sync_fold_job j = {.fmt = &sync__copilot_format, .home = sync_dup(at->home)};
    j.path = sync_short_copy(path, SYNC_PATH_MAX);
    j.session_id = sync_short_copy(e->d_name, STORE_ID_MAX);
    j.cwd = workspace_cwd(at, dir);
    free(dir);
    if (!j.path || !j.session_id) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(at->js, &j);
}

int sync__copilot_discover(sync_fold_jobs *js, const char *home, sync_report *rep)
{
    char root[SYNC_PATH_MAX];
    int k = snprintf(root, sizeof root, "%s/session-state", home);
    if (k < 0 || (size_t)k >= sizeof root)
        return MCPAGE_ERANGE;
    copilot_at at = {.js = js, .home = home, .rep = rep};
    DIR *d = sync_source_opendir(home, root, rep, "copilot");
    return d ? sync_dir_each(d, root, session_entry, &at) : 0;
}
