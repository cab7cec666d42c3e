/*
 * Gemini CLI chats: discovery under GEMINI_HOME/tmp/<project>/chats/ and
 * the record format, folded by sync_fold.c.
 *
 * Current files are JSON Lines (session-<time>-<id8>.jsonl; sub-agents
 * chats/<parentId>/<id>.jsonl): a first facts line {sessionId,
 * projectHash, startTime, lastUpdated, kind, directories}, message
 * records {id, timestamp, type: user|gemini|info|warning|error, content,
 * displayContent, toolCalls, thoughts, model, tokens} where a record with
 * a known id replaces that message in place, {"$set": {...}} updating the
 * facts (a `messages` array there is a checkpoint that replaces them all)
 * and {"$rewindTo": id} dropping that message and every later one (all of
 * them when the id is unknown). Older files are one JSON document
 * session-*.json {sessionId, projectHash, startTime, lastUpdated,
 * messages: [...]}, rewritten at each save; they are read as the JSON
 * Lines Gemini CLI itself migrates them to (facts line, one message per
 * line), and skipped when that .jsonl exists beside them.
 *
 * The project folder is a slug with a `.project_root` file naming the
 * project path, or (older) the SHA-256 of the path; `projects.json`
 * {"projects": {path: slug}} maps both ways. Checked against the
 * gemini-cli sources: see docs/transcripts.md.
 */
#define _GNU_SOURCE /* open_memstream, d_type */
#include <ctype.h>
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#include "page/base64.h"
#include "page/digest.h"
#include "sync/sync_fold.h"
#include "sync/sync_json.h"

#define GEMINI_ROOT_MAX     4096       /* bytes of a .project_root file read */
#define GEMINI_REGISTRY_MAX (16 << 20) /* bytes of projects.json read */
#define GEMINI_PROJECTS     100        /* store pages of projects matched against a hash folder */
#define GEMINI_DIRS_MAX     100000

/* ---- default home ---------------------------------------------------- */

int sync_default_gemini_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_GEMINI_HOME");
    int k;
    if (e && *e)
        k = snprintf(buf, n, "%s", e);
    else if ((e = getenv("GEMINI_CLI_HOME")) && *e)
        k = snprintf(buf, n, "%s/.gemini", e);
    else
        k = snprintf(buf, n, "%s/.gemini", sync_home_dir());
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

/* ---- records --------------------------------------------------------- */

static int is_fact_line(json_t *root)
{
    return json_is_string(json_object_get(root, "sessionId")) &&
           json_is_string(json_object_get(root, "projectHash"));
}

/* The facts of a facts line or a $set record. */
static void take_facts(sync_fold *f, json_t *o, int first_line)
{
    const char *sid = sync_json_str(o, "sessionId");
    if (sid && (first_line || !f->session_id))
        sync_fold_set(&f->session_id, sid);
    const char *summary = sync_json_str(o, "summary");
    if (summary && *summary) {
        free(f->title);
        f->title = sync_short_copy(summary, SYNC_TITLE_MAX);
    }
    json_t *dirs = json_object_get(o, "directories");
    if (!f->cwd && json_is_string(json_array_get(dirs, 0)))
        sync_fold_set(&f->cwd, json_string_value(json_array_get(dirs, 0)));
}

/*
 * The working directory Gemini CLI states in the context it sends first,
 * "I'm currently working in the directory: /home/u/app" (in a user
 * message, or the <session_context> seed of newer versions): the project
 * of a session whose folder maps to no path (an old SHA-256 folder with
 * no projects.json entry). Only an absolute path (POSIX or a Windows
 * drive) is taken, and only the first.
 */
#define GEMINI_CWD_SAYS "I'm currently working in the directory: "
static void cwd_of_context(sync_fold *f, json_t *msg)
{
    if (f->cwd || !json_is_object(msg))
        return;
    const char *type = sync_json_str(msg, "type");
    if (!type || strcmp(type, "user") != 0)
        return;
    json_t *content = json_object_get(msg, "content");
    size_t i, n = json_is_array(content) ? json_array_size(content) : 1;
    for (i = 0; i < n && !f->cwd; i++) {
        json_t *part = json_is_array(content) ? json_array_get(content, i) : content;
        const char *text =
            json_is_string(part) ? json_string_value(part) : sync_json_str(part, "text");
        const char *at = text ? strstr(text, GEMINI_CWD_SAYS) : NULL;
        if (!at)
            continue;
        at += strlen(GEMINI_CWD_SAYS);
        size_t len = strcspn(at, "\r\n");
        while (len > 0 && (at[len - 1] == ' ' || at[len - 1] == '\t'))
            len--;
        int posix = at[0] == '/';
        int drive = len >= 3 && ((at[0] | 0x20) >= 'a' && (at[0] | 0x20) <= 'z') && at[1] == ':' &&
                    (at[2] == '\\' || at[2] == '/');
        if ((!posix && !drive) || len >= SYNC_PATH_MAX)
            continue;
        char path[SYNC_PATH_MAX];
        memcpy(path, at, len);
        path[len] = '\0';
        sync_fold_set(&f->cwd, path);
    }
}

/* A checkpoint: the messages become exactly the array's. */
static int fold_checkpoint(sync_fold *f, json_t *msgs, int64_t off, int64_t len, int64_t line_no)
{
    int rc = sync_fold_truncate(f, 0);
    if (rc < 0)
        return rc;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        cwd_of_context(f, m);
        const char *id = sync_json_str(m, "id");
        if (!id)
            continue;
        long at = sync_fold_find(f, id);
        if (at >= 0) {
            f->v[at].offset = off;
            f->v[at].length = len;
            f->v[at].line_no = line_no;
            f->v[at].sub = (int32_t)i;
            continue;
        }
        if ((rc = sync_fold_push(f, id, off, len, line_no, (int32_t)i)) < 0)
            return rc;
    }
    return 0;
}

static int gemini_fold_line(sync_fold *f, const char *line, size_t len, int64_t off,
                            int64_t line_no, char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    if (!json_is_object(root)) {
        snprintf(why, whylen, "%s", root ? "not a JSON object" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = 0;
    json_t *set = json_object_get(root, "$set");
    const char *rewind = sync_json_str(root, "$rewindTo");
    const char *id = sync_json_str(root, "id");
    if (rewind) {
        long at = sync_fold_find(f, rewind);
        rc = sync_fold_truncate(f, at >= 0 ? (size_t)at : 0);
    } else if (json_is_object(set)) {
        take_facts(f, set, 0);
        json_t *msgs = json_object_get(set, "messages");
        if (json_is_array(msgs))
            rc = fold_checkpoint(f, msgs, off, (int64_t)len, line_no);
    } else if (id) {
        cwd_of_context(f, root);
        long at = sync_fold_find(f, id);
        if (at >= 0) {
            /* written again: the newest version, at the first one's place */
            f->v[at].offset = off;
            f->v[at].length = (int64_t)len;
            f->v[at].line_no = line_no;
            f->v[at].sub = -1;
        } else {
            rc = sync_fold_push(f, id, off, (int64_t)len, line_no, -1);
        }
    } else if (is_fact_line(root)) {
        take_facts(f, root, line_no == 1);
        json_t *msgs = json_object_get(root, "messages");
        if (json_is_array(msgs))
            rc = fold_checkpoint(f, msgs, off, (int64_t)len, line_no);
    }
    /* anything else (an unknown record kind) holds no message */
    json_decref(root);
    return rc;
}

/* Text of a functionResponse's response (or a tool result's). */
static void response_text(json_t *resp, sync_text *t, int *is_error)
{
    if (json_is_string(resp)) {
        sync_text_adds(t, json_string_value(resp));
        return;
    }
    const char *out = sync_json_str(resp, "output");
    const char *error = sync_json_str(resp, "error");
    if (out)
        sync_text_adds(t, out);
    if (error) {
        sync_text_sep(t);
        sync_text_adds(t, error);
        *is_error = 1;
    }
    json_t *content = json_object_get(resp, "content");
    if (!out && !error && json_is_string(content))
        sync_text_adds(t, json_string_value(content));
    else if (!out && !error && resp) {
        char *dump = json_dumps(resp, JSON_COMPACT | JSON_ENCODE_ANY);
        sync_text_adds(t, dump);
        free(dump);
    }
}

/* Text of a PartListUnion: a string, a part or an array of parts. */
static void parts_text(json_t *parts, sync_text *t, int *is_error)
{
    if (json_is_string(parts)) {
        if (*json_string_value(parts))
            sync_text_sep(t);
        sync_text_adds(t, json_string_value(parts));
        return;
    }
    if (json_is_object(parts)) {
        json_t *one = json_array();
        json_array_append(one, parts);
        parts_text(one, t, is_error);
        json_decref(one);
        return;
    }
    size_t i;
    json_t *p;
    json_array_foreach(parts, i, p)
    {
        const char *text = sync_json_str(p, "text");
        json_t *inline_data = json_object_get(p, "inlineData");
        json_t *file_data = json_object_get(p, "fileData");
        json_t *call = json_object_get(p, "functionCall");
        json_t *resp = json_object_get(p, "functionResponse");
        if (json_is_string(p)) {
            sync_text_sep(t);
            sync_text_adds(t, json_string_value(p));
        } else if (text) {
            sync_text_sep(t);
            if (json_is_true(json_object_get(p, "thought")))
                sync_text_adds(t, "[thinking] ");
            sync_text_adds(t, text);
        } else if (json_is_object(inline_data)) {
            const char *mime = sync_json_str(inline_data, "mimeType");
            sync_text_sep(t);
            sync_text_adds(t, mime && strncmp(mime, "image/", 6) == 0 ? "[image: " : "[data: ");
            sync_text_adds(t, mime ? mime : "?");
            sync_text_adds(t, "]");
        } else if (json_is_object(file_data)) {
            sync_text_sep(t);
            sync_text_adds(t, "[file: ");
            sync_text_adds(t, sync_json_str(file_data, "fileUri"));
            sync_text_adds(t, "]");
        } else if (json_is_object(call)) {
            char *sum = sync_tool_summary(json_object_get(call, "args"));
            sync_text_sep(t);
            sync_text_adds(t, "[tool_use ");
            sync_text_adds(t, sync_json_str(call, "name"));
            sync_text_adds(t, "] ");
            sync_text_adds(t, sum);
            free(sum);
        } else if (json_is_object(resp)) {
            sync_text_sep(t);
            response_text(json_object_get(resp, "response"), t, is_error);
        }
    }
}

/* A copy of a short fact (a timestamp, a model name), or NULL. */
static char *dup_str(const char *s)
{
    return s && *s ? sync_short_copy(s, 100) : NULL;
}

static void fill_text(sync_record *r, sync_text *t)
{
    r->text = sync_text_finish(t);
}

/* A tool call and, once it has one, its result: two records. */
static size_t expand_call(json_t *tc, const char *msg_ts, const char *model, sync_record *out)
{
    const char *name = sync_json_str(tc, "name");
    const char *id = sync_json_str(tc, "id");
    const char *ts = sync_json_str(tc, "timestamp");
    const char *status = sync_json_str(tc, "status");
    if (!ts)
        ts = msg_ts;
    sync_record *c = &out[0];
    sync_text t = {0};
    char *sum = sync_tool_summary(json_object_get(tc, "args"));
    sync_text_adds(&t, "[tool_use ");
    sync_text_adds(&t, name ? name : "?");
    sync_text_adds(&t, "] ");
    sync_text_adds(&t, sum);
    c->kind = SYNC_MESSAGE;
    c->role = "assistant";
    fill_text(c, &t);
    c->tool_name = sync_short_copy(name ? name : "?", 100);
    c->tool_input = sum;
    c->call_id = id ? sync_short_copy(id, 100) : NULL;
    sync_record_keep_call(c, name, id, json_object_get(tc, "args"));
    c->timestamp = dup_str(ts);
    c->model = dup_str(model);
    json_t *result = json_object_get(tc, "result");
    int done = status && (strcmp(status, "success") == 0 || strcmp(status, "error") == 0 ||
                          strcmp(status, "cancelled") == 0);
    if ((!result || json_is_null(result)) && !done)
        return 1;
    sync_record *r = &out[1];
    int is_error = status && (strcmp(status, "error") == 0 || strcmp(status, "cancelled") == 0);
    parts_text(result, &t, &is_error);
    const char *display = sync_json_str(tc, "resultDisplay");
    if (t.len == 0 && display)
        sync_text_adds(&t, display);
    if (t.len == 0 && status) {
        sync_text_adds(&t, "[");
        sync_text_adds(&t, status);
        sync_text_adds(&t, "]");
    }
    r->kind = SYNC_MESSAGE;
    r->role = "tool";
    fill_text(r, &t);
    r->tool_name = sync_short_copy(name ? name : "?", 100);
    r->call_id = id ? sync_short_copy(id, 100) : NULL;
    r->is_error = is_error;
    r->timestamp = dup_str(ts);
    return 2;
}

/*
 * A gemini message's `tokens`: input (the prompt, cached tokens included),
 * cached, output, thoughts (billed as output), tool (tool-use prompt
 * tokens, billed as input), total. Keyed by the message id within the
 * session: the fold keeps a message's latest version only, and a session
 * stored again replaces its calls.
 */
static void gemini_usage(json_t *msg, const char *model, const char *ts, sync_usage *u)
{
    json_t *tok = json_object_get(msg, "tokens");
    if (!json_is_object(tok))
        return;
    int64_t in = sync_json_count(json_object_get(tok, "input"));
    int64_t cached = sync_json_count(json_object_get(tok, "cached"));
    int64_t out = sync_json_count(json_object_get(tok, "output"));
    int64_t thoughts = sync_json_count(json_object_get(tok, "thoughts"));
    int64_t tool = sync_json_count(json_object_get(tok, "tool"));
    if (cached > in)
        cached = in;
    if (in + out + thoughts + tool == 0)
        return;
    u->input = in - cached + tool;
    u->cache_read = cached;
    u->output = out + thoughts;
    u->reasoning = thoughts;
    const char *id = sync_json_str(msg, "id");
    if (id && *id) {
        u->key = sync_short_copy(id, 100);
        u->key_per_session = 1;
    }
    u->model = model && *model ? sync_short_copy(model, 150) : NULL;
    u->model_from_session = u->model == NULL;
    u->timestamp = ts && *ts ? sync_short_copy(ts, 64) : NULL;
    u->present = 1;
}

/* The records of one message object. */
static int expand_message(json_t *msg, sync_record **out, size_t *n)
{
    const char *type = sync_json_str(msg, "type");
    const char *ts = sync_json_str(msg, "timestamp");
    const char *model = sync_json_str(msg, "model");
    json_t *calls = json_object_get(msg, "toolCalls");
    size_t ncalls = json_is_array(calls) ? json_array_size(calls) : 0;
    if (ncalls > 10000)
        ncalls = 10000;
    sync_record *r = calloc(1 + 2 * ncalls, sizeof *r);
    if (!r)
        return MCPAGE_ENOMEM;
    size_t k = 0;
    sync_text t = {0};
    int is_error = 0;
    if (type && strcmp(type, "gemini") == 0) {
        size_t i;
        json_t *th;
        json_array_foreach(json_object_get(msg, "thoughts"), i, th)
        {
            const char *subject = sync_json_str(th, "subject");
            const char *desc = sync_json_str(th, "description");
            sync_text_sep(&t);
            sync_text_adds(&t, "[thinking] ");
            sync_text_adds(&t, subject);
            if (subject && desc)
                sync_text_adds(&t, ": ");
            sync_text_adds(&t, desc);
        }
        parts_text(json_object_get(msg, "content"), &t, &is_error);
        if (t.len > 0 || ncalls == 0) {
            r[k].kind = SYNC_MESSAGE;
            r[k].role = "assistant";
            fill_text(&r[k], &t);
            r[k].timestamp = dup_str(ts);
            r[k].model = dup_str(model);
            k++;
        }
        free(t.buf);
        memset(&t, 0, sizeof t);
        for (size_t c = 0; c < ncalls; c++)
            k += expand_call(json_array_get(calls, c), ts, model, &r[k]);
        if (k > 0)
            gemini_usage(msg, model, ts, &r[0].usage);
    } else {
        json_t *shown = json_object_get(msg, "displayContent");
        int user = type && strcmp(type, "user") == 0;
        sync_text body = {0};
        parts_text(user && shown && !json_is_null(shown) ? shown : json_object_get(msg, "content"),
                   &body, &is_error);
        char *text = sync_text_finish(&body);
        if (type && strcmp(type, "error") == 0) {
            sync_text_adds(&t, "[error] ");
            is_error = 1;
        } else if (type && strcmp(type, "warning") == 0) {
            sync_text_adds(&t, "[warning] ");
        }
        sync_text_adds(&t, text);
        free(text);
        r[k].kind = SYNC_MESSAGE;
        r[k].role = user ? "user" : "system";
        r[k].is_prompt = user && t.len > 0;
        r[k].is_error = user ? 0 : is_error;
        fill_text(&r[k], &t);
        r[k].timestamp = dup_str(ts);
        k++;
    }
    return sync__records_finish(r, k, out, n);
}

static void *gemini_parse(const char *line, size_t len)
{
    json_t *root = sync_json_loadb(line, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static void gemini_parsed_free(void *parsed)
{
    json_decref(parsed);
}

static int gemini_expand_parsed(void *parsed, int32_t sub, sync_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_t *root = parsed, *msg = root;
    if (sub >= 0) {
        json_t *set = json_object_get(root, "$set");
        json_t *msgs = json_object_get(json_is_object(set) ? set : root, "messages");
        msg = json_array_get(msgs, (size_t)sub);
    }
    return json_is_object(msg) ? expand_message(msg, out, n) : MCPAGE_EPARSE;
}

static int gemini_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    void *root = gemini_parse(line, len);
    if (!root)
        return MCPAGE_EPARSE;
    int rc = gemini_expand_parsed(root, sub, out, n);
    gemini_parsed_free(root);
    return rc;
}

/*
 * An older session-*.json document as the JSON Lines Gemini CLI migrates
 * it to: the facts (everything but `messages`, lastUpdated included, so
 * any save reads the session again: a document is rewritten in place)
 * on the first line, then one message per line.
 */
static int gemini_convert(const char *doc, size_t len, char **out, size_t *outlen, char *why,
                          size_t whylen)
{
    *out = NULL;
    *outlen = 0;
    json_error_t err;
    json_t *root = json_loadb(doc, len, 0, &err);
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_object(root) || !json_is_array(msgs)) {
        snprintf(why, whylen, "%s", root ? "a session .json without \"messages\"" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    json_incref(msgs);
    json_object_del(root, "messages");
    char *buf = NULL;
    size_t n = 0;
    FILE *w = open_memstream(&buf, &n);
    int ok =
        w && json_dumpf(root, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 && fputc('\n', w) != EOF;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (!ok)
            break;
        ok = json_dumpf(m, w, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) == 0 &&
             fputc('\n', w) != EOF;
    }
    if (w && fclose(w) != 0)
        ok = 0;
    json_decref(msgs);
    json_decref(root);
    if (!ok) {
        free(buf);
        return MCPAGE_ENOMEM;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

const sync_fold_format sync__gemini_format = {
    .source = "gemini",
    .fold_line = gemini_fold_line,
    .expand = gemini_expand,
    .convert = gemini_convert,
    .parse = gemini_parse,
    .expand_parsed = gemini_expand_parsed,
    .parsed_free = gemini_parsed_free,
};

/* ---- discovery ------------------------------------------------------- */

typedef struct gemini_map {
    const char *home; /* GEMINI_HOME */
    sync_report *rep; /* for warnings */
    json_t *registry; /* projects.json's "projects": {path: slug}, or NULL */
    store *s;         /* for paths of projects already archived */
    json_t *hashes;   /* {sha256 hex: path} of archived projects, loaded on first need */
    json_t *by_slug;  /* {slug: path} from the registry, made on first need */
    json_t *by_hash;  /* {sha256 hex: path} from the registry, likewise */
} gemini_map;

static void sha256_hex(const char *s, char out[65])
{
    uint8_t md[SHA256_LEN];
    sha256(s, strlen(s), md);
    hex_encode(md, SHA256_LEN, out);
}

static int is_hash_name(const char *name)
{
    size_t i = 0;
    for (; name[i]; i++)
        if (!isxdigit((unsigned char)name[i]) || isupper((unsigned char)name[i]))
            return 0;
    return i == 64;
}

/* The first line of <dir>/.project_root, trimmed; NULL when absent (or
 * refused: a link out of GEMINI_HOME, a FIFO, over GEMINI_ROOT_MAX bytes,
 * named in a warning). */
static char *read_project_root(gemini_map *m, const char *dir)
{
    char *p = sync_join(dir, ".project_root");
    char *buf = NULL, why[SYNC_WARNING_LEN] = "";
    size_t n = 0;
    int rc = p ? sync_source_read(m->home, p, GEMINI_ROOT_MAX, &buf, &n, why, sizeof why)
               : MCPAGE_ENOMEM;
    if (rc < 0 && rc != MCPAGE_ENOTFOUND && rc != MCPAGE_ENOMEM)
        sync_warn(m->rep, "gemini", p, 0, why);
    free(p);
    if (rc < 0)
        return NULL;
    buf[strcspn(buf, "\r\n")] = 0;
    char *out = sync_short_copy(buf, GEMINI_ROOT_MAX);
    free(buf);
    if (out && !*out) {
        free(out);
        out = NULL;
    }
    return out;
}

/* Archived project paths by their SHA-256 (the older folder names). */
static void load_store_hashes(gemini_map *m)
{
    m->hashes = json_object();
    if (!m->s || !m->hashes)
        return;
    for (int page = 0; page < GEMINI_PROJECTS; page++) {
        store_project_filter flt = {.sort = STORE_PROJECTS_NAME};
        store_page pg = {.offset = (int64_t)page * STORE_LIMIT_MAX, .limit = STORE_LIMIT_MAX};
        store_projects l;
        if (store_projects_list(m->s, &flt, &pg, &l) < 0)
            return;
        for (size_t i = 0; i < l.count; i++) {
            char h[65];
            sha256_hex(l.rows[i].path, h);
            if (h[0])
                json_object_set_new(m->hashes, h, json_string(l.rows[i].path));
        }
        size_t got = l.count;
        store_projects_free(&l);
        if (got < STORE_LIMIT_MAX)
            return;
    }
}

/* projects.json indexed once, by slug and by the SHA-256 of each path (the
 * older folder names), so each folder costs a lookup, not a pass over it. */
static void index_registry(gemini_map *m)
{
    m->by_slug = json_object();
    m->by_hash = json_object();
    const char *path;
    json_t *slug;
    json_object_foreach(m->registry, path, slug)
    {
        char h[65];
        if (json_is_string(slug) && !json_object_get(m->by_slug, json_string_value(slug)))
            json_object_set_new(m->by_slug, json_string_value(slug), json_string(path));
        sha256_hex(path, h);
        if (h[0] && !json_object_get(m->by_hash, h))
            json_object_set_new(m->by_hash, h, json_string(path));
    }
}

/* The project path a tmp/<name> folder stands for, or a copy of the name. */
static char *project_of(gemini_map *m, const char *dir, const char *name)
{
    char *root = read_project_root(m, dir);
    if (root)
        return root;
    if (!m->by_slug)
        index_registry(m);
    const char *known = sync_json_str(m->by_slug, name);
    if (known)
        return sync_short_copy(known, SYNC_PATH_MAX);
    if (is_hash_name(name)) {
        if ((known = sync_json_str(m->by_hash, name)))
            return sync_short_copy(known, SYNC_PATH_MAX);
        if (!m->hashes)
            load_store_hashes(m);
        if ((known = sync_json_str(m->hashes, name)))
            return sync_short_copy(known, SYNC_PATH_MAX);
    }
    return sync_short_copy(name, SYNC_PATH_MAX);
}

static int add_job(sync_fold_jobs *js, const char *home, char *path, const char *parent,
                   const char *cwd, int convert)
{
    sync_fold_job j = {
        .path = path, .fmt = &sync__gemini_format, .convert = convert, .home = sync_dup(home)};
    j.parent = parent ? sync_short_copy(parent, STORE_ID_MAX) : NULL;
    j.cwd = cwd ? sync_short_copy(cwd, SYNC_PATH_MAX) : NULL;
    if ((parent && !j.parent) || (cwd && !j.cwd)) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(js, &j);
}

/* Where a folder's entries go. */
typedef struct chats_at {
    sync_fold_jobs *js;
    gemini_map *m;
    const char *cwd;    /* the project the folder's chats belong to */
    const char *parent; /* sub-agent chats: the parent session */
    size_t dirs;        /* tmp/ folders seen */
} chats_at;

/* chats/<parentId>/<id>.jsonl: a sub-agent's chats. */
static int subagent_entry(void *ud, const struct dirent *e, char *path)
{
    const chats_at *at = ud;
    if (sync_ends_with(e->d_name, ".jsonl") && sync_entry_is(e, path, 0))
        return add_job(at->js, at->m->home, path, at->parent, at->cwd, 0);
    free(path);
    return 0;
}

static int chats_entry(void *ud, const struct dirent *e, char *path)
{
    const chats_at *at = ud;
    int session = strncmp(e->d_name, "session-", 8) == 0;
    if (sync_entry_is(e, path, 1)) {
        DIR *d = sync_source_opendir(at->m->home, path, at->m->rep, "gemini");
        chats_at in = {.js = at->js, .m = at->m, .cwd = at->cwd, .parent = e->d_name};
        int rc = d ? sync_dir_each(d, path, subagent_entry, &in) : 0;
        free(path);
        return rc;
    }
    if (session && sync_ends_with(e->d_name, ".jsonl") && sync_entry_is(e, path, 0))
        return add_job(at->js, at->m->home, path, NULL, at->cwd, 0);
    if (session && sync_ends_with(e->d_name, ".json") && sync_entry_is(e, path, 0)) {
        /* migrated: Gemini CLI continues it in <name>.jsonl */
        char migrated[SYNC_PATH_MAX];
        struct stat sb;
        int k = snprintf(migrated, sizeof migrated, "%sl", path);
        if (!(k > 0 && (size_t)k < sizeof migrated && stat(migrated, &sb) == 0))
            return add_job(at->js, at->m->home, path, NULL, at->cwd, 1);
    }
    free(path);
    return 0;
}

/* tmp/<folder>: its chats/, under the project the folder stands for. */
static int folder_entry(void *ud, const struct dirent *e, char *dir)
{
    chats_at *at = ud;
    if (at->dirs++ >= GEMINI_DIRS_MAX) {
        free(dir);
        return 1;
    }
    char *chats = sync_join(dir, "chats");
    struct stat sb;
    int rc = 0;
    if (!chats) {
        rc = MCPAGE_ENOMEM;
    } else if (stat(chats, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        char *cwd = project_of(at->m, dir, e->d_name);
        DIR *d = cwd ? sync_source_opendir(at->m->home, chats, at->m->rep, "gemini") : NULL;
        chats_at in = {.js = at->js, .m = at->m, .cwd = cwd};
        rc = !cwd ? MCPAGE_ENOMEM : d ? sync_dir_each(d, chats, chats_entry, &in) : 0;
        free(cwd);
    }
    free(chats);
    free(dir);
    return rc;
}

int sync__gemini_discover(sync_fold_jobs *js, const char *home, store *s, sync_report *rep)
{
    gemini_map m = {.home = home, .rep = rep, .s = s};
    char *reg = sync_join(home, "projects.json");
    char *tmp = sync_join(home, "tmp");
    int rc = 0;
    if (!reg || !tmp) {
        rc = MCPAGE_ENOMEM;
        goto out;
    }
    char *text = NULL, why[SYNC_WARNING_LEN] = "";
    size_t n = 0;
    rc = sync_source_read(home, reg, GEMINI_REGISTRY_MAX, &text, &n, why, sizeof why);
    if (rc < 0 && rc != MCPAGE_ENOTFOUND)
        sync_warn(rep, "gemini", reg, 0, why);
    rc = 0;
    json_t *doc = text ? json_loadb(text, n, 0, NULL) : NULL;
    free(text);
    m.registry = json_object_get(doc, "projects");
    json_incref(m.registry);
    json_decref(doc);
    if (!json_is_object(m.registry)) {
        json_decref(m.registry);
        m.registry = NULL;
    }
    DIR *d = sync_source_opendir(home, tmp, rep, "gemini");
    chats_at at = {.js = js, .m = &m};
    if (d)
        rc = sync_dir_each(d, tmp, folder_entry, &at);
out:
    json_decref(m.registry);
    json_decref(m.hashes);
    json_decref(m.by_slug);
    json_decref(m.by_hash);
    free(reg);
    free(tmp);
    return rc;
}
