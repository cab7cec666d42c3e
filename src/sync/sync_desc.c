/*
 * Descriptions of sources (sync_desc.h): parsed from JSON and checked
 * field by field, so a bad description is refused with a message that
 * names the field and says what it should be. Nothing here reads an
 * agent's files; sync_engine.c does, driven by what is parsed here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_walk.h"

#define DESC_FILE_MAX (4 << 20) /* bytes of a user's sources file */

/* Where the parser is, for errors: "origin: sources[2] (pi): rules[0].message.role". */
typedef struct ctx {
    const char *origin;
    char where[256]; /* the path of the field being read */
    char *err;
    size_t errlen;
    int failed;
} ctx;

__attribute__((format(printf, 3, 4))) static int fail(ctx *c, const char *field, const char *fmt,
                                                      ...)
{
    if (c->failed)
        return MCPAGE_EPARSE;
    c->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    (void)snprintf(c->err, c->errlen, "%s: %s%s%s: %s", c->origin, c->where,
                   field && *field && c->where[0] ? "." : "", field ? field : "", msg);
    return MCPAGE_EPARSE;
}

/* Appends ".name" (or "name" first) to the context's path; returns the old length. */
static size_t enter(ctx *c, const char *name)
{
    size_t n = strlen(c->where);
    (void)snprintf(c->where + n, sizeof c->where - n, "%s%s", n ? "." : "", name);
    return n;
}

static void leave(ctx *c, size_t n)
{
    c->where[n] = 0;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Fails when `o` has a key not in `known` (a NULL-terminated list): a
 * typo in a description is an error, never silently ignored. */
static int only_keys(ctx *c, json_t *o, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        int ok = 0;
        for (size_t i = 0; known[i] && !ok; i++)
            ok = strcmp(k, known[i]) == 0;
        if (!ok) {
            char list[300] = "";
            for (size_t i = 0; known[i]; i++) {
                size_t n = strlen(list);
                (void)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", known[i]);
            }
            return fail(c, k, "unknown field (known here: %s)", list);
        }
    }
    return 0;
}

/* ---- JSON pointers ------------------------------------------------------ */

static void path_free(sd_path *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->tok[i]);
    free(p->tok);
    memset(p, 0, sizeof *p);
}

/* "/a/b~1c/0" -> ["a", "b/c", "0"]; "" is the record itself. */
static int path_parse(ctx *c, const char *field, const char *s, sd_path *out)
{
    memset(out, 0, sizeof *out);
    if (!*s)
        return 0;
    if (s[0] != '/')
        return fail(c, field,
                    "\"%s\" is not a JSON pointer: it starts with '/' (\"/message/role\")", s);
    size_t ntok = 0;
    for (const char *p = s; *p; p++)
        ntok += *p == '/';
    if (ntok > SYNC_DESC_PATH_MAX)
        return fail(c, field, "a pointer of more than %d steps", SYNC_DESC_PATH_MAX);
    out->tok = calloc(ntok, sizeof *out->tok);
    if (!out->tok)
        return MCPAGE_ENOMEM;
    const char *p = s + 1;
    for (;;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *t = malloc(n + 1);
        if (!t) {
            path_free(out);
            return MCPAGE_ENOMEM;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                t[k++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else if (p[i] == '~') {
                free(t);
                path_free(out);
                return fail(c, field, "\"%s\": '~' must be followed by 0 or 1 (RFC 6901)", s);
            } else {
                t[k++] = p[i];
            }
        }
        t[k] = 0;
        out->tok[out->n++] = t;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* ---- values ------------------------------------------------------------- */

static void value_free(sd_value *v)
{
    for (size_t i = 0; i < v->n; i++)
        path_free(&v->alt[i]);
    free(v->konst);
    free(v->after);
    free(v->until);
    memset(v, 0, sizeof *v);
}

/* A value: "/pointer", ["/a", "/b"] (the first present), or {"const": "text"}. */
static int value_parse(ctx *c, const char *field, json_t *j, sd_value *out)
{
    memset(out, 0, sizeof *out);
    if (!j)
        return 0;
    if (json_is_string(j))
        return (out->n = 1, path_parse(c, field, json_string_value(j), &out->alt[0]));
    if (json_is_array(j)) {
        if (json_array_size(j) == 0 || json_array_size(j) > SYNC_DESC_ALTS)
            return fail(c, field, "a list of 1 to %d pointers", SYNC_DESC_ALTS);
        size_t i;
        json_t *e;
        json_array_foreach(j, i, e)
        {
            if (!json_is_string(e))
                return fail(c, field, "item %zu is not a string (a JSON pointer such as \"/text\")",
                            i);
            int rc = path_parse(c, field, json_string_value(e), &out->alt[out->n]);
            if (rc < 0)
                return rc;
            out->n++;
        }
        return 0;
    }
    if (json_is_object(j) && json_object_get(j, "find")) {
        /* {"find": pointers, "after": "marker", "until": "end"}: text inside */
        static const char *const fkeys[] = {"find", "after", "until", NULL};
        json_t *find = json_object_get(j, "find");
        json_t *after = json_object_get(j, "after");
        json_t *until = json_object_get(j, "until");
        if (json_is_object(find) || !json_is_string(after) || !*json_string_value(after) ||
            (until && (!json_is_string(until) || !*json_string_value(until))))
            return fail(c, field,
                        "expected {\"find\": \"/pointer\", \"after\": \"text before the value\", "
                        "\"until\": \"text after it\"} (after and until non-empty strings)");
        size_t at = enter(c, field);
        int rc = only_keys(c, j, fkeys);
        leave(c, at);
        if (rc == 0)
            rc = value_parse(c, field, find, out);
        if (rc < 0)
            return rc;
        out->after = sync_dup(json_string_value(after));
        out->until = until ? sync_dup(json_string_value(until)) : NULL;
        return out->after && (!until || out->until) ? 0 : MCPAGE_ENOMEM;
    }
    if (json_is_object(j)) {
        json_t *k = json_object_get(j, "const");
        if (json_object_size(j) != 1 || !k ||
            !(json_is_string(k) || json_is_number(k) || json_is_boolean(k)))
            return fail(c, field,
                        "an object here is {\"const\": VALUE} (a string, number or "
                        "boolean)");
        if (json_is_string(k))
            out->konst = sync_dup(json_string_value(k));
        else if (json_is_boolean(k))
            out->konst = sync_dup(json_is_true(k) ? "true" : "false");
        else {
            char num[64];
            (void)snprintf(num, sizeof num, "%.17g", json_number_value(k));
            out->konst = sync_dup(num);
        }
        return out->konst ? 0 : MCPAGE_ENOMEM;
    }
    return fail(c, field,
                "expected a JSON pointer (\"/message/text\"), a list of them, {\"const\": ...} "
                "or {\"find\": ..., \"after\": ...}");
}

/* ---- rules -------------------------------------------------------------- */

static void rule_free(sd_rule *r)
{
    for (size_t i = 0; i < r->nwhen; i++) {
        path_free(&r->when[i].path);
        json_decref(r->when[i].want);
    }
    free(r->when);
    sd_value *vals[] = {&r->id,
                        &r->role,
                        &r->content,
                        &r->thinking,
                        &r->calls,
                        &r->call_id,
                        &r->tool_name,
                        &r->is_error,
                        &r->timestamp,
                        &r->model,
                        &r->usage_input,
                        &r->usage_input_total,
                        &r->usage_output,
                        &r->usage_cache_read,
                        &r->usage_cache_creation,
                        &r->usage_reasoning,
                        &r->cost,
                        &r->rewind_to,
                        &r->results,
                        &r->s_id,
                        &r->s_cwd,
                        &r->s_title,
                        &r->s_parent,
                        &r->s_model,
                        &r->s_branch,
                        &r->s_time};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        value_free(vals[i]);
    for (size_t i = 0; i < r->nmap; i++) {
        free(r->map_from[i]);
        free(r->map_to[i]);
    }
    free(r->map_from);
    free(r->map_to);
    free(r->map_default);
    free(r->prefix);
    memset(r, 0, sizeof *r);
}

static int is_role(const char *s)
{
    return strcmp(s, "user") == 0 || strcmp(s, "assistant") == 0 || strcmp(s, "system") == 0 ||
           strcmp(s, "tool") == 0 || strcmp(s, "skip") == 0;
}

/* "when": {"/pointer": expected, ...}: a scalar, a list of them (any
 * one), null (absent or null), or {"exists": true|false}. */
static int when_parse(ctx *c, json_t *j, sd_rule *r)
{
    if (!json_is_object(j))
        return fail(c, "when", "expected an object of tests: {\"/type\": \"message\"}");
    size_t n = json_object_size(j);
    r->when = calloc(n ? n : 1, sizeof *r->when);
    if (!r->when)
        return MCPAGE_ENOMEM;
    const char *k;
    json_t *v;
    size_t at = enter(c, "when");
    json_object_foreach(j, k, v)
    {
        sd_when *w = &r->when[r->nwhen];
        w->present = -1;
        int rc = path_parse(c, k, k, &w->path);
        if (rc < 0)
            return rc;
        r->nwhen++;
        if (json_is_object(v)) {
            json_t *e = json_object_get(v, "exists");
            if (json_object_size(v) != 1 || !json_is_boolean(e))
                return fail(c, k, "an object here is {\"exists\": true} or {\"exists\": false}");
            w->present = json_is_true(e);
            continue;
        }
        json_t *list = json_is_array(v) ? json_incref(v) : json_pack("[O]", v);
        if (!list)
            return MCPAGE_ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e)
        {
            if (json_is_object(e) || json_is_array(e)) {
                json_decref(list);
                return fail(c, k, "compare with strings, numbers, booleans or null");
            }
        }
        w->want = list;
    }
    leave(c, at);
    return 0;
}

static int role_map_parse(ctx *c, json_t *j, sd_rule *r)
{
    if (!json_is_object(j))
        return fail(c, "role_map",
                    "expected an object: {\"model\": \"assistant\", \"*\": \"skip\"}");
    size_t n = json_object_size(j);
    r->map_from = calloc(n ? n : 1, sizeof *r->map_from);
    r->map_to = calloc(n ? n : 1, sizeof *r->map_to);
    if (!r->map_from || !r->map_to)
        return MCPAGE_ENOMEM;
    const char *k;
    json_t *v;
    size_t at = enter(c, "role_map");
    json_object_foreach(j, k, v)
    {
        if (!json_is_string(v) || !is_role(json_string_value(v)))
            return fail(c, k, "must be one of user, assistant, system, tool, skip");
        if (strcmp(k, "*") == 0) {
            free(r->map_default);
            if (!(r->map_default = sync_dup(json_string_value(v))))
                return MCPAGE_ENOMEM;
            continue;
        }
        r->map_from[r->nmap] = sync_dup(k);
        r->map_to[r->nmap] = sync_dup(json_string_value(v));
        if (!r->map_from[r->nmap] || !r->map_to[r->nmap])
            return MCPAGE_ENOMEM;
        r->nmap++;
    }
    leave(c, at);
    return 0;
}

static int facts_parse(ctx *c, json_t *j, sd_rule *r)
{
    static const char *const keys[] = {"id",    "cwd",    "title", "parent",
                                       "model", "branch", "time",  NULL};
    if (!json_is_object(j))
        return fail(c, NULL, "expected an object of session facts (%s)",
                    "id, cwd, title, parent, model, branch, time");
    int rc = only_keys(c, j, keys);
    if (rc == 0)
        rc = value_parse(c, "id", json_object_get(j, "id"), &r->s_id);
    if (rc == 0)
        rc = value_parse(c, "cwd", json_object_get(j, "cwd"), &r->s_cwd);
    if (rc == 0)
        rc = value_parse(c, "title", json_object_get(j, "title"), &r->s_title);
    if (rc == 0)
        rc = value_parse(c, "parent", json_object_get(j, "parent"), &r->s_parent);
    if (rc == 0)
        rc = value_parse(c, "model", json_object_get(j, "model"), &r->s_model);
    if (rc == 0)
        rc = value_parse(c, "branch", json_object_get(j, "branch"), &r->s_branch);
    if (rc == 0)
        rc = value_parse(c, "time", json_object_get(j, "time"), &r->s_time);
    return rc;
}

static int usage_parse(ctx *c, json_t *j, sd_rule *r)
{
    static const char *const keys[] = {"input",          "input_total", "output", "cache_read",
                                       "cache_creation", "reasoning",   "cost",   NULL};
    if (!json_is_object(j))
        return fail(c, NULL, "expected an object: {\"input\": \"/usage/input_tokens\", ...}");
    int rc = only_keys(c, j, keys);
    if (rc == 0)
        rc = value_parse(c, "input", json_object_get(j, "input"), &r->usage_input);
    if (rc == 0)
        rc =
            value_parse(c, "input_total", json_object_get(j, "input_total"), &r->usage_input_total);
    if (rc == 0)
        rc = value_parse(c, "output", json_object_get(j, "output"), &r->usage_output);
    if (rc == 0)
        rc = value_parse(c, "cache_read", json_object_get(j, "cache_read"), &r->usage_cache_read);
    if (rc == 0)
        rc = value_parse(c, "cache_creation", json_object_get(j, "cache_creation"),
                         &r->usage_cache_creation);
    if (rc == 0)
        rc = value_parse(c, "reasoning", json_object_get(j, "reasoning"), &r->usage_reasoning);
    if (rc == 0)
        rc = value_parse(c, "cost", json_object_get(j, "cost"), &r->cost);
    return rc;
}

/* "document": the session facts, and "usage": {"by_message": "/ptr",
 * "input": "/input_tokens", ...}, the document's calls keyed by message
 * id (the counts' pointers are read in each entry of that object). */
static int document_parse(ctx *c, json_t *j, sync_desc *d)
{
    json_t *u = json_is_object(j) ? json_object_get(j, "usage") : NULL;
    if (!u)
        return facts_parse(c, j, &d->doc);
    if (!json_is_object(u))
        return fail(c, "usage",
                    "expected an object: {\"by_message\": \"/request_token_usage\", "
                    "\"input\": \"/input_tokens\", ...}");
    json_t *facts = json_copy(j), *counts = json_copy(u);
    int rc = facts && counts ? 0 : MCPAGE_ENOMEM;
    if (rc == 0) {
        json_object_del(facts, "usage");
        rc = facts_parse(c, facts, &d->doc);
    }
    size_t at = enter(c, "usage");
    json_t *by = rc == 0 ? json_object_get(counts, "by_message") : NULL;
    if (rc == 0 && !json_is_string(by))
        rc = fail(c, "by_message",
                  "missing: the pointer to the object of calls keyed by message id "
                  "(\"/request_token_usage\")");
    if (rc == 0)
        rc = path_parse(c, "by_message", json_string_value(by), &d->usage_by);
    if (rc == 0 && d->usage_by.n == 0)
        rc = fail(c, "by_message", "expected a pointer inside the document, not \"\"");
    if (rc == 0) {
        json_object_del(counts, "by_message");
        rc = usage_parse(c, counts, &d->doc);
    }
    leave(c, at);
    json_decref(facts);
    json_decref(counts);
    return rc;
}

static int message_parse(ctx *c, json_t *j, sd_rule *r)
{
    static const char *const keys[] = {"id",      "role",    "role_map",  "content",  "thinking",
                                       "calls",   "call_id", "tool_name", "is_error", "timestamp",
                                       "model",   "usage",   "rewind_to", "prefix",   "join",
                                       "results", NULL};
    if (!json_is_object(j))
        return fail(c, NULL, "expected an object mapping the record to a message");
    int rc = only_keys(c, j, keys);
    struct {
        const char *k;
        sd_value *v;
    } vals[] = {{"id", &r->id},
                {"role", &r->role},
                {"content", &r->content},
                {"thinking", &r->thinking},
                {"calls", &r->calls},
                {"call_id", &r->call_id},
                {"tool_name", &r->tool_name},
                {"is_error", &r->is_error},
                {"timestamp", &r->timestamp},
                {"model", &r->model},
                {"rewind_to", &r->rewind_to},
                {"results", &r->results}};
    for (size_t i = 0; rc == 0 && i < sizeof vals / sizeof vals[0]; i++)
        rc = value_parse(c, vals[i].k, json_object_get(j, vals[i].k), vals[i].v);
    if (rc < 0)
        return rc;
    if (!r->role.n && !r->role.konst)
        return fail(c, "role",
                    "missing: where the role is (\"/message/role\") or "
                    "{\"const\": \"assistant\"}");
    if (r->role.konst && !is_role(r->role.konst))
        return fail(c, "role", "a constant role is one of user, assistant, system, tool, skip");
    json_t *jn = json_object_get(j, "join");
    if (jn && !json_is_boolean(jn))
        return fail(c, "join", "expected true or false");
    r->join = json_is_true(jn);
    if (!r->content.n && !r->content.konst && !r->calls.n && !r->rewind_to.n &&
        !json_object_get(j, "usage"))
        return fail(c, "content",
                    "missing: where the message's text or blocks are "
                    "(\"/message/content\")");
    json_t *m = json_object_get(j, "role_map");
    if (m && (rc = role_map_parse(c, m, r)) < 0)
        return rc;
    json_t *u = json_object_get(j, "usage");
    if (u) {
        size_t at = enter(c, "usage");
        if ((rc = usage_parse(c, u, r)) < 0)
            return rc;
        leave(c, at);
    }
    json_t *p = json_object_get(j, "prefix");
    if (p) {
        if (!json_is_string(p))
            return fail(c, "prefix", "expected a string put before the text (\"[compaction] \")");
        if (!(r->prefix = sync_dup(json_string_value(p))))
            return MCPAGE_ENOMEM;
    }
    return 0;
}

static int rule_parse(ctx *c, json_t *j, sd_rule *r)
{
    static const char *const keys[] = {"when", "message", "session", "skip", NULL};
    memset(r, 0, sizeof *r);
    if (!json_is_object(j))
        return fail(c, NULL, "expected a rule: {\"when\": {...}, \"message\": {...}}");
    int rc = only_keys(c, j, keys);
    if (rc < 0)
        return rc;
    json_t *w = json_object_get(j, "when"), *m = json_object_get(j, "message"),
           *s = json_object_get(j, "session"), *skip = json_object_get(j, "skip");
    if (skip && !json_is_boolean(skip))
        return fail(c, "skip", "expected true or false");
    if (json_is_true(skip) && (m || s))
        return fail(c, "skip", "a rule that skips has no message or session");
    if (!m && !s && !json_is_true(skip))
        return fail(c, NULL, "a rule needs \"message\", \"session\" or \"skip\": true");
    if (w && (rc = when_parse(c, w, r)) < 0)
        return rc;
    r->kind = json_is_true(skip) ? SD_SKIP : m ? SD_MESSAGE : SD_SESSION;
    if (m) {
        size_t at = enter(c, "message");
        if ((rc = message_parse(c, m, r)) < 0)
            return rc;
        leave(c, at);
    }
    if (s) {
        size_t at = enter(c, "session");
        if ((rc = facts_parse(c, s, r)) < 0)
            return rc;
        leave(c, at);
    }
    return 0;
}

/* ---- globs -------------------------------------------------------------- */

static void glob_free(sd_glob *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->seg[i]);
    free(g->seg);
    free(g->each);
    memset(g, 0, sizeof *g);
}

static int capture_ok(const char *name, size_t n)
{
    static const char *const caps[] = {"id", "parent", "cwd", "cwd:url", "project", NULL};
    for (size_t i = 0; caps[i]; i++)
        if (strlen(caps[i]) == n && strncmp(caps[i], name, n) == 0)
            return 1;
    return 0;
}

static int glob_parse(ctx *c, const char *field, const char *s, int layout, sd_glob *g)
{
    memset(g, 0, sizeof *g);
    g->layout = layout;
    if (!*s || s[0] == '/')
        return fail(c, field, "\"%s\": a glob is relative to the home (\"sessions/*/*.jsonl\")", s);
    size_t nseg = 1;
    for (const char *p = s; *p; p++)
        nseg += *p == '/';
    if (nseg > SYNC_DESC_DEPTH + 4)
        return fail(c, field, "\"%s\": more than %d folder levels", s, SYNC_DESC_DEPTH + 4);
    g->seg = calloc(nseg, sizeof *g->seg);
    if (!g->seg)
        return MCPAGE_ENOMEM;
    for (const char *p = s;;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return fail(c, field, "\"%s\": empty, '.' and '..' steps are not allowed", s);
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '{') {
                const char *close = memchr(p + i, '}', n - i);
                if (!close || !capture_ok(p + i + 1, (size_t)(close - (p + i + 1))))
                    return fail(c, field,
                                "\"%s\": a capture is {id}, {parent}, {cwd}, {cwd:url} or "
                                "{project}",
                                s);
                i = (size_t)(close - p);
            }
        }
        if (n == 2 && p[0] == '*' && p[1] == '*' && !e)
            return fail(c, field, "\"%s\": '**' must be followed by a file pattern", s);
        if (!(g->seg[g->n++] = dup_n(p, n)))
            return MCPAGE_ENOMEM;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* ---- descriptions ------------------------------------------------------- */

static void db_free(sd_db *b);

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void roots_free(sd_roots *r)
{
    if (!r)
        return;
    free(r->file);
    path_free(&r->list);
    path_free(&r->folder);
    path_free(&r->cwd);
    free(r);
}

static void hashed_free(sd_hashed *h)
{
    if (!h)
        return;
    free(h->file);
    path_free(&h->list);
    path_free(&h->cwd);
    free(h->hash);
    free(h);
}

static void desc_free(sync_desc *d)
{
    if (!d)
        return;
    roots_free(d->roots);
    hashed_free(d->hashed);
    free(d->name);
    free(d->title);
    free(d->home);
    strv_free(d->env, d->nenv);
    free(d->writes);
    free(d->db_file);
    free(d->id_prefix);
    for (size_t i = 0; i < d->nglobs; i++)
        glob_free(&d->globs[i]);
    free(d->globs);
    path_free(&d->records);
    path_free(&d->usage_by);
    rule_free(&d->doc);
    for (size_t i = 0; i < d->nrules; i++)
        rule_free(&d->rules[i]);
    free(d->rules);
    for (size_t i = 0; i < d->nsidecar; i++) {
        free(d->sidecar[i]);
        rule_free(&d->side[i]);
    }
    db_free(d->db);
    strv_free(d->call_types, d->ncall_types);
    strv_free(d->result_types, d->nresult_types);
    strv_free(d->text_types, d->ntext_types);
    strv_free(d->thinking_types, d->nthinking_types);
    free(d->provenance);
    free(d);
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SYNC_DESC_NAME_MAX || !islower((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
            s[i] != '_')
            return 0;
    return 1;
}

/* The six sources with their own C readers: a description may not take their names. */
static int reserved(const char *s)
{
    static const char *const names[] = {"claude",   "codex",  "gemini", "copilot",
                                        "opencode", "cursor", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0)
            return 1;
    return 0;
}

static int str_field(ctx *c, json_t *o, const char *k, int required, char **out)
{
    json_t *v = json_object_get(o, k);
    *out = NULL;
    if (!v)
        return required ? fail(c, k, "missing") : 0;
    if (!json_is_string(v) || !*json_string_value(v))
        return fail(c, k, "expected a non-empty string");
    return (*out = sync_dup(json_string_value(v))) ? 0 : MCPAGE_ENOMEM;
}

static int strv_field(ctx *c, json_t *o, const char *k, char ***out, size_t *n)
{
    json_t *v = json_object_get(o, k);
    *out = NULL;
    *n = 0;
    if (!v)
        return 0;
    json_t *list = json_is_string(v) ? json_pack("[O]", v) : json_incref(v);
    if (!json_is_array(list) || json_array_size(list) > 32) {
        json_decref(list);
        return fail(c, k, "expected a string or a list of up to 32 strings");
    }
    size_t cnt = json_array_size(list);
    *out = calloc(cnt ? cnt : 1, sizeof **out);
    int rc = *out ? 0 : MCPAGE_ENOMEM;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (rc < 0)
            break;
        if (!json_is_string(e) || !*json_string_value(e)) {
            rc = fail(c, k, "item %zu is not a non-empty string", i);
            break;
        }
        if (!((*out)[(*n)++] = sync_dup(json_string_value(e))))
            rc = MCPAGE_ENOMEM;
    }
    json_decref(list);
    return rc;
}

static int layout_of(ctx *c, const char *field, json_t *v, int dflt, int *out)
{
    *out = dflt;
    if (!v)
        return 0;
    const char *s = json_string_value(v);
    if (s && strcmp(s, "jsonl") == 0)
        *out = SD_JSONL;
    else if (s && strcmp(s, "json") == 0)
        *out = SD_JSON;
    else if (s && strcmp(s, "folder") == 0)
        *out = SD_FOLDER;
    else
        return fail(c, field,
                    "expected \"jsonl\" (a record per line), \"json\" (one document) or "
                    "\"folder\" (a file per record)");
    return 0;
}

/* A folder layout's record files: relative, no "..", patterns only in
 * the last name ("events/event-*.json"). */
static int each_ok(const char *each)
{
    const char *wild = strpbrk(each, "*?[{");
    const char *last = strrchr(each, '/');
    if (!*each || each[0] == '/' || strstr(each, "..") || strstr(each, "//"))
        return 0;
    return !(wild && last && wild < last) && !(last && last[1] == 0);
}

static int files_parse(ctx *c, json_t *j, int layout, sync_desc *d)
{
    json_t *list = json_is_string(j) || json_is_object(j) ? json_pack("[O]", j) : json_incref(j);
    if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > 16) {
        json_decref(list);
        return fail(c, "files", "expected a glob (\"sessions/*/*.jsonl\") or a list of 1 to 16");
    }
    d->globs = calloc(json_array_size(list), sizeof *d->globs);
    int rc = d->globs ? 0 : MCPAGE_ENOMEM;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (rc < 0)
            break;
        char field[32];
        (void)snprintf(field, sizeof field, "files[%zu]", i);
        int lay = layout;
        const char *g = json_string_value(e);
        const char *each = NULL;
        if (json_is_object(e)) {
            static const char *const keys[] = {"glob", "layout", "each", NULL};
            size_t at = enter(c, field);
            rc = only_keys(c, e, keys);
            if (rc == 0)
                rc = layout_of(c, "layout", json_object_get(e, "layout"), layout, &lay);
            g = json_string_value(json_object_get(e, "glob"));
            if (rc == 0 && !g)
                rc = fail(c, "glob", "missing");
            each = json_string_value(json_object_get(e, "each"));
            if (rc == 0 && (lay == SD_FOLDER) != (each != NULL))
                rc = fail(c, "each",
                          lay == SD_FOLDER ? "missing: the record files under the session's "
                                             "folder (\"events/event-*.json\")"
                                           : "only with \"layout\": \"folder\"");
            if (rc == 0 && each && !each_ok(each))
                rc = fail(c, "each",
                          "\"%s\": folder names, then a file pattern, under the session's "
                          "folder (\"events/event-*.json\")",
                          each);
            leave(c, at);
            if (rc < 0)
                break;
        } else if (!g) {
            rc = fail(c, field, "expected a glob string or {\"glob\": ..., \"layout\": ...}");
            break;
        }
        if (lay == SD_FOLDER && !each) {
            rc = fail(c, field, "a \"folder\" layout needs {\"glob\", \"layout\", \"each\"}");
            break;
        }
        rc = glob_parse(c, field, g, lay, &d->globs[d->nglobs]);
        d->nglobs++;
        if (rc == 0 && each && !(d->globs[d->nglobs - 1].each = sync_dup(each)))
            rc = MCPAGE_ENOMEM;
    }
    json_decref(list);
    return rc;
}

static int blocks_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const keys[] = {"text", "thinking", "call", "result", NULL};
    if (!json_is_object(j))
        return fail(c, "blocks", "expected {\"call\": [\"my_tool_call\"], ...}: extra block types");
    size_t at = enter(c, "blocks");
    int rc = only_keys(c, j, keys);
    if (rc == 0)
        rc = strv_field(c, j, "text", &d->text_types, &d->ntext_types);
    if (rc == 0)
        rc = strv_field(c, j, "thinking", &d->thinking_types, &d->nthinking_types);
    if (rc == 0)
        rc = strv_field(c, j, "call", &d->call_types, &d->ncall_types);
    if (rc == 0)
        rc = strv_field(c, j, "result", &d->result_types, &d->nresult_types);
    leave(c, at);
    return rc;
}

/* ---- SQLite stores ------------------------------------------------------ */

static void db_free(sd_db *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nglobs; i++)
        glob_free(&b->globs[i]);
    free(b->globs);
    free(b->s_table);
    free(b->s_id);
    free(b->s_cwd);
    free(b->s_title);
    free(b->s_parent);
    free(b->s_time);
    free(b->s_changed);
    strv_free(b->s_json, b->ns_json);
    free(b->m_table);
    free(b->m_session);
    strv_free(b->m_order, b->nm_order);
    strv_free(b->m_json, b->nm_json);
    free(b);
}

/* A table or column name: [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes. */
static int ident_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

static int ident_field(ctx *c, json_t *o, const char *k, int required, char **out)
{
    int rc = str_field(c, o, k, required, out);
    if (rc == 0 && *out && !ident_ok(*out))
        return fail(c, k, "\"%s\": a table or column name (letters, digits, '_')", *out);
    return rc;
}

static int idents_field(ctx *c, json_t *o, const char *k, char ***out, size_t *n)
{
    int rc = strv_field(c, o, k, out, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        if (!ident_ok((*out)[i]))
            rc = fail(c, k, "\"%s\": a column name (letters, digits, '_')", (*out)[i]);
    return rc;
}

static int db_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const keys[] = {"files", "sessions", "messages", NULL};
    static const char *const skeys[] = {"table", "id",      "cwd",  "title", "parent",
                                        "time",  "changed", "json", NULL};
    static const char *const mkeys[] = {"table", "session", "order", "json", NULL};
    if (!json_is_object(j))
        return fail(c, NULL, "expected {\"files\": ..., \"sessions\": {...}, \"messages\": {...}}");
    int rc = only_keys(c, j, keys);
    if (rc < 0)
        return rc;
    sd_db *b = d->db = calloc(1, sizeof *b);
    if (!b)
        return MCPAGE_ENOMEM;
    json_t *files = json_object_get(j, "files");
    json_t *list = json_is_string(files) ? json_pack("[O]", files) : json_incref(files);
    if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > 8) {
        json_decref(list);
        return fail(c, "files",
                    "expected the database's glob under the home "
                    "(\"sessions/sessions.db\") or a list of 1 to 8");
    }
    b->globs = calloc(json_array_size(list), sizeof *b->globs);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        char field[32];
        (void)snprintf(field, sizeof field, "files[%zu]", i);
        if (!b->globs)
            rc = MCPAGE_ENOMEM;
        else if (!json_is_string(e))
            rc = fail(c, field, "expected a glob string");
        else {
            rc = glob_parse(c, field, json_string_value(e), SD_DB, &b->globs[b->nglobs]);
            b->nglobs++;
        }
        if (rc < 0)
            break;
    }
    json_decref(list);
    if (rc < 0)
        return rc;
    json_t *s = json_object_get(j, "sessions");
    if (!json_is_object(s))
        return fail(c, "sessions", "missing: {\"table\": \"sessions\", \"id\": \"id\", ...}");
    size_t at = enter(c, "sessions");
    if ((rc = only_keys(c, s, skeys)) < 0 ||
        (rc = ident_field(c, s, "table", 1, &b->s_table)) < 0 ||
        (rc = ident_field(c, s, "id", 1, &b->s_id)) < 0 ||
        (rc = ident_field(c, s, "cwd", 0, &b->s_cwd)) < 0 ||
        (rc = ident_field(c, s, "title", 0, &b->s_title)) < 0 ||
        (rc = ident_field(c, s, "parent", 0, &b->s_parent)) < 0 ||
        (rc = ident_field(c, s, "time", 0, &b->s_time)) < 0 ||
        (rc = ident_field(c, s, "changed", 0, &b->s_changed)) < 0 ||
        (rc = idents_field(c, s, "json", &b->s_json, &b->ns_json)) < 0)
        return rc;
    leave(c, at);
    json_t *m = json_object_get(j, "messages");
    if (m) {
        at = enter(c, "messages");
        if (!json_is_object(m))
            return fail(c, NULL, "expected {\"table\": ..., \"session\": ..., \"order\": [...]}");
        if ((rc = only_keys(c, m, mkeys)) < 0 ||
            (rc = ident_field(c, m, "table", 1, &b->m_table)) < 0 ||
            (rc = ident_field(c, m, "session", 1, &b->m_session)) < 0 ||
            (rc = idents_field(c, m, "order", &b->m_order, &b->nm_order)) < 0 ||
            (rc = idents_field(c, m, "json", &b->m_json, &b->nm_json)) < 0)
            return rc;
        leave(c, at);
    }
    return 0;
}

/* "roots": {"file", "list", "folder", "cwd"}: folders a file in the home lists. */
static int roots_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const keys[] = {"file", "list", "folder", "cwd", NULL};
    if (!json_is_object(j))
        return fail(c, NULL,
                    "expected {\"file\": \"projects.json\", \"list\": \"/projects\", "
                    "\"folder\": \"/data_dir\"}");
    int rc = only_keys(c, j, keys);
    if (rc < 0)
        return rc;
    sd_roots *r = d->roots = calloc(1, sizeof *r);
    if (!r)
        return MCPAGE_ENOMEM;
    if ((rc = str_field(c, j, "file", 1, &r->file)) < 0)
        return rc;
    if (strstr(r->file, "..") || r->file[0] == '/' || !r->file[0])
        return fail(c, "file", "\"%s\": a file under the home (relative, no \"..\")", r->file);
    static const char *const paths[] = {"list", "folder", "cwd"};
    sd_path *out[] = {&r->list, &r->folder, &r->cwd};
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(j, paths[i]);
        if (!v && i == 2)
            break;
        if (!json_is_string(v))
            return fail(c, paths[i], "expected a JSON pointer (\"/projects\", \"/data_dir\")");
        if ((rc = path_parse(c, paths[i], json_string_value(v), out[i])) < 0)
            return rc;
    }
    return 0;
}

/* "project_hash": {"file", "list", "cwd", "hash"}. */
static int hashed_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const keys[] = {"file", "list", "cwd", "hash", NULL};
    if (!json_is_object(j))
        return fail(c, NULL,
                    "expected {\"file\": \"kimi.json\", \"list\": \"/work_dirs\", \"cwd\": "
                    "\"/path\", \"hash\": \"md5\"}");
    int rc = only_keys(c, j, keys);
    if (rc < 0)
        return rc;
    sd_hashed *h = d->hashed = calloc(1, sizeof *h);
    if (!h)
        return MCPAGE_ENOMEM;
    if ((rc = str_field(c, j, "file", 1, &h->file)) < 0 ||
        (rc = str_field(c, j, "hash", 1, &h->hash)) < 0)
        return rc;
    if (strstr(h->file, "..") || h->file[0] == '/' || !h->file[0])
        return fail(c, "file", "\"%s\": a file under the home (relative, no \"..\")", h->file);
    if (strcmp(h->hash, "md5") != 0 && strcmp(h->hash, "sha256") != 0)
        return fail(c, "hash", "\"%s\": md5 or sha256", h->hash);
    static const char *const paths[] = {"list", "cwd"};
    sd_path *out[] = {&h->list, &h->cwd};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(j, paths[i]);
        if (!json_is_string(v))
            return fail(c, paths[i], "expected a JSON pointer (\"/work_dirs\", \"/path\")");
        if ((rc = path_parse(c, paths[i], json_string_value(v), out[i])) < 0)
            return rc;
    }
    return 0;
}

/* "sidecar": {"file", "session"} or a list of up to SYNC_DESC_SIDECARS. */
static int sidecars_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const skeys[] = {"file", "session", NULL};
    size_t n = json_is_array(j) ? json_array_size(j) : 1;
    if (!(json_is_object(j) || json_is_array(j)) || n == 0 || n > SYNC_DESC_SIDECARS)
        return fail(c, "sidecar",
                    "expected {\"file\": \"meta.json\", \"session\": {...}}, or a list of 1 to %d",
                    SYNC_DESC_SIDECARS);
    for (size_t i = 0; i < n; i++) {
        json_t *side = json_is_array(j) ? json_array_get(j, i) : j;
        char field[32];
        if (json_is_array(j))
            (void)snprintf(field, sizeof field, "sidecar[%zu]", i);
        else
            (void)snprintf(field, sizeof field, "sidecar");
        size_t at = enter(c, field);
        if (!json_is_object(side))
            return fail(c, NULL, "expected {\"file\": \"meta.json\", \"session\": {...}}");
        int rc = only_keys(c, side, skeys);
        if (rc == 0)
            rc = str_field(c, side, "file", 1, &d->sidecar[i]);
        d->nsidecar = i + 1;
        if (rc < 0)
            return rc;
        /* beside the session file, or in the folder above it ("../NAME":
           Posit Assistant's workspace.json above each conversation's folder);
           the source layer still refuses anything outside the home */
        const char *f = d->sidecar[i];
        if (strncmp(f, "../", 3) == 0)
            f += 3;
        if (!*f || strchr(f, '/') || f[0] == '.' || strstr(f, ".."))
            return fail(c, "file",
                        "a file name beside the session file, or '../NAME' in the folder above "
                        "(no other '/', not hidden)");
        json_t *facts = json_object_get(side, "session");
        if (!facts)
            return fail(c, "session", "missing: the facts the file holds");
        size_t at2 = enter(c, "session");
        if ((rc = facts_parse(c, facts, &d->side[i])) < 0)
            return rc;
        leave(c, at2);
        d->side[i].kind = SD_SESSION;
        leave(c, at);
    }
    return 0;
}

static int desc_parse(ctx *c, json_t *j, sync_desc *d)
{
    static const char *const keys[] = {
        "name",      "title",      "home",         "env",      "files",    "layout",
        "records",   "document",   "sidecar",      "rules",    "blocks",   "writes",
        "id_prefix", "provenance", "enabled",      "$comment", "database", "unique_calls",
        "db_file",   "roots",      "project_hash", NULL};
    int rc = only_keys(c, j, keys);
    if (rc == 0)
        rc = str_field(c, j, "title", 0, &d->title);
    if (rc == 0)
        rc = str_field(c, j, "home", 1, &d->home);
    if (rc == 0 && d->home && d->home[0] != '~' && d->home[0] != '/' && d->home[0] != '$')
        rc = fail(c, "home", "\"%s\": an absolute path, \"~/...\" or \"${VAR:-~/...}\"", d->home);
    if (rc == 0)
        rc = strv_field(c, j, "env", &d->env, &d->nenv);
    if (rc == 0)
        rc = str_field(c, j, "writes", 0, &d->writes);
    if (rc == 0)
        rc = str_field(c, j, "provenance", 0, &d->provenance);
    if (rc == 0)
        rc = str_field(c, j, "db_file", 0, &d->db_file);
    if (rc == 0 && json_object_get(j, "id_prefix")) {
        json_t *p = json_object_get(j, "id_prefix");
        if (!json_is_string(p) || strlen(json_string_value(p)) > 40)
            rc = fail(c, "id_prefix", "expected a string of at most 40 bytes (\"\" for none)");
        else if (!(d->id_prefix = sync_dup(json_string_value(p))))
            rc = MCPAGE_ENOMEM;
    }
    json_t *uc = json_object_get(j, "unique_calls");
    if (rc == 0 && uc && !json_is_boolean(uc))
        rc = fail(c, "unique_calls", "expected true or false");
    d->unique_calls = json_is_true(uc);
    if (rc < 0)
        return rc;
    if (!d->title && !(d->title = sync_dup(d->name)))
        return MCPAGE_ENOMEM;
    if (!d->id_prefix) {
        char pre[SYNC_DESC_NAME_MAX + 2];
        (void)snprintf(pre, sizeof pre, "%s:", d->name);
        if (!(d->id_prefix = sync_dup(pre)))
            return MCPAGE_ENOMEM;
    }
    if (d->db_file && !d->writes)
        return fail(c, "db_file", "only with \"writes\": \"opencode\"");
    if (d->writes) {
        const char *w = d->writes;
        if (strcmp(w, "claude") != 0 && strcmp(w, "codex") != 0 && strcmp(w, "opencode") != 0 &&
            strcmp(w, "vscode-chat") != 0 && strcmp(w, "aider") != 0 &&
            strcmp(w, "cursor-ide") != 0)
            return fail(c, "writes",
                        "\"%s\": claude, codex, opencode, vscode-chat, aider or cursor-ide (the "
                        "reader used)",
                        w);
        if (d->db_file && strcmp(w, "opencode") != 0)
            return fail(c, "db_file", "only with \"writes\": \"opencode\"");
        if (d->db_file && (!d->db_file[0] || strchr(d->db_file, '/') || d->db_file[0] == '.'))
            return fail(c, "db_file", "\"%s\": a file name in the home (no '/', not hidden)",
                        d->db_file);
        static const char *const banned[] = {
            "files",        "layout",  "records", "document", "roots",
            "project_hash", "sidecar", "rules",   "blocks",   NULL};
        for (size_t i = 0; banned[i]; i++)
            if (json_object_get(j, banned[i]))
                return fail(c, banned[i],
                            "not used with \"writes\" (the %s reader finds and "
                            "reads the files)",
                            w);
        return 0;
    }
    int layout = SD_JSONL;
    if ((rc = layout_of(c, "layout", json_object_get(j, "layout"), SD_JSONL, &layout)) < 0)
        return rc;
    json_t *files = json_object_get(j, "files");
    json_t *database = json_object_get(j, "database");
    if (!files && !database)
        return fail(c, "files",
                    "missing: where the session files are under the home "
                    "(\"sessions/*/*.jsonl\"), or a \"database\"");
    if (files && (rc = files_parse(c, files, layout, d)) < 0)
        return rc;
    if (database) {
        size_t at = enter(c, "database");
        if ((rc = db_parse(c, database, d)) < 0)
            return rc;
        leave(c, at);
    }
    json_t *hashed = json_object_get(j, "project_hash");
    if (hashed) {
        size_t at = enter(c, "project_hash");
        if ((rc = hashed_parse(c, hashed, d)) < 0)
            return rc;
        leave(c, at);
    }
    json_t *roots = json_object_get(j, "roots");
    if (roots) {
        size_t at = enter(c, "roots");
        if ((rc = roots_parse(c, roots, d)) < 0)
            return rc;
        leave(c, at);
    }
    int any_json = d->db && !d->db->m_table;
    for (size_t i = 0; i < d->nglobs; i++)
        any_json |= d->globs[i].layout == SD_JSON;
    json_t *recs = json_object_get(j, "records");
    if (recs && !json_is_string(recs))
        return fail(c, "records",
                    "expected a JSON pointer to the document's array (\"/messages\")");
    if (any_json && !recs)
        return fail(c, "records",
                    "missing: a \"json\" layout needs the pointer to the array of "
                    "records (\"/messages\", or \"\" when the document is the array)");
    if (recs && (rc = path_parse(c, "records", json_string_value(recs), &d->records)) < 0)
        return rc;
    json_t *doc = json_object_get(j, "document");
    if (doc) {
        size_t at = enter(c, "document");
        rc = document_parse(c, doc, d);
        leave(c, at);
        if (rc < 0)
            return rc;
        d->doc.kind = SD_SESSION;
    }
    json_t *side = json_object_get(j, "sidecar");
    if (side && (rc = sidecars_parse(c, side, d)) < 0)
        return rc;
    json_t *rules = json_object_get(j, "rules");
    if (!json_is_array(rules) || json_array_size(rules) == 0 || json_array_size(rules) > 64)
        return fail(c, "rules",
                    "expected a list of 1 to 64 rules: [{\"when\": {\"/type\": "
                    "\"message\"}, \"message\": {...}}]");
    d->rules = calloc(json_array_size(rules), sizeof *d->rules);
    if (!d->rules)
        return MCPAGE_ENOMEM;
    size_t i;
    json_t *e;
    json_array_foreach(rules, i, e)
    {
        char field[32];
        (void)snprintf(field, sizeof field, "rules[%zu]", i);
        size_t at = enter(c, field);
        rc = rule_parse(c, e, &d->rules[d->nrules]);
        d->nrules++;
        if (rc < 0)
            return rc;
        leave(c, at);
    }
    json_t *blocks = json_object_get(j, "blocks");
    if (blocks && (rc = blocks_parse(c, blocks, d)) < 0)
        return rc;
    return 0;
}

void sync_descs_free(sync_descs *ds)
{
    for (size_t i = 0; i < ds->n; i++)
        desc_free(ds->v[i]);
    memset(ds, 0, sizeof *ds);
}

const sync_desc *sync_descs_find(const sync_descs *ds, const char *name)
{
    for (size_t i = 0; i < ds->n; i++)
        if (strcmp(ds->v[i]->name, name) == 0)
            return ds->v[i];
    return NULL;
}

int sync_desc_disabled(const sync_desc *d)
{
    return d->nglobs == 0 && !d->writes && !d->db;
}

/* {"name": X, "home": ..., "enabled": ...} alone: a change to a known source. */
static int is_override(json_t *e)
{
    const char *k;
    json_t *v;
    json_object_foreach(e, k, v)
    {
        if (strcmp(k, "name") != 0 && strcmp(k, "home") != 0 && strcmp(k, "enabled") != 0 &&
            strcmp(k, "env") != 0 && strcmp(k, "$comment") != 0)
            return 0;
    }
    return 1;
}

static int apply_override(ctx *c, sync_desc *d, json_t *e)
{
    json_t *home = json_object_get(e, "home"), *en = json_object_get(e, "enabled"),
           *env = json_object_get(e, "env");
    if (en && !json_is_boolean(en))
        return fail(c, "enabled", "expected true or false");
    if (home) {
        if (!json_is_string(home) || !*json_string_value(home))
            return fail(c, "home", "expected a non-empty string");
        char *h = sync_dup(json_string_value(home));
        if (!h)
            return MCPAGE_ENOMEM;
        free(d->home);
        d->home = h;
    }
    if (env) {
        char **v = NULL;
        size_t n = 0;
        int rc = strv_field(c, e, "env", &v, &n);
        if (rc < 0) {
            strv_free(v, n);
            return rc;
        }
        strv_free(d->env, d->nenv);
        d->env = v;
        d->nenv = n;
    }
    if (json_is_false(en)) {
        /* off: no files found, no reader */
        for (size_t i = 0; i < d->nglobs; i++)
            glob_free(&d->globs[i]);
        d->nglobs = 0;
        db_free(d->db);
        d->db = NULL;
        free(d->writes);
        d->writes = NULL;
    }
    return 0;
}

int sync_descs_parse(sync_descs *out, const char *text, size_t len, const char *origin, char *err,
                     size_t errlen)
{
    ctx c = {.origin = origin, .err = err, .errlen = errlen};
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        (void)snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s", origin, jerr.line, jerr.column,
                       jerr.text);
        return MCPAGE_EPARSE;
    }
    json_t *list = root;
    if (json_is_object(root)) {
        static const char *const keys[] = {"sources", "edit_tools", "$comment", NULL};
        int rc = only_keys(&c, root, keys);
        if (rc < 0) {
            json_decref(root);
            return rc;
        }
        list = json_object_get(root, "sources");
    }
    if (!json_is_array(list)) {
        json_decref(root);
        return fail(&c, "sources", "expected {\"sources\": [ ... ]}");
    }
    sync_descs add = {0};
    int rc = 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        (void)snprintf(c.where, sizeof c.where, "sources[%zu]", i);
        if (!json_is_object(e)) {
            rc = fail(&c, NULL, "expected an object describing one agent");
            break;
        }
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name || !name_ok(name)) {
            rc = fail(&c, "name",
                      "expected the source's name: 1 to 31 of a-z, 0-9, '-', '_', starting "
                      "with a letter (\"my-agent\")");
            break;
        }
        size_t n = strlen(c.where);
        (void)snprintf(c.where + n, sizeof c.where - n, " (%s)", name);
        if (reserved(name)) {
            rc = fail(&c, "name", "\"%s\" is read by mcpage's own reader; pick another name", name);
            break;
        }
        for (size_t k = 0; k < add.n && rc == 0; k++)
            if (strcmp(add.v[k]->name, name) == 0)
                rc = fail(&c, "name", "\"%s\" is described twice in this file", name);
        if (rc < 0)
            break;
        sync_desc *known = NULL;
        for (size_t k = 0; k < out->n; k++)
            if (strcmp(out->v[k]->name, name) == 0)
                known = out->v[k];
        if (known && is_override(e)) {
            if ((rc = apply_override(&c, known, e)) < 0)
                break;
            continue;
        }
        if (!known && is_override(e)) {
            rc = fail(&c, "name",
                      "no known source is named \"%s\" (`mcpage sources` lists them); a new "
                      "source needs \"files\" and \"rules\", or \"writes\"",
                      name);
            break;
        }
        if (add.n + out->n >= SYNC_DESC_MAX) {
            rc = fail(&c, NULL, "more than %d sources", SYNC_DESC_MAX);
            break;
        }
        sync_desc *d = calloc(1, sizeof *d);
        if (!d || !(d->name = sync_dup(name))) {
            free(d);
            rc = MCPAGE_ENOMEM;
            break;
        }
        add.v[add.n++] = d;
        if ((rc = desc_parse(&c, e, d)) < 0)
            break;
        json_t *en = json_object_get(e, "enabled");
        if (en && (rc = apply_override(&c, d, e)) < 0)
            break;
    }
    json_decref(root);
    if (rc < 0) {
        sync_descs_free(&add);
        return rc;
    }
    for (size_t k = 0; k < add.n; k++) {
        sync_desc *d = add.v[k];
        sync__desc_bind(d);
        size_t at = out->n;
        for (size_t m = 0; m < out->n; m++)
            if (strcmp(out->v[m]->name, d->name) == 0)
                at = m;
        if (at < out->n)
            desc_free(out->v[at]);
        else
            out->n++;
        out->v[at] = d;
    }
    return 0;
}

int sync_descs_user_path(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_SOURCES");
    int k;
    if (e && *e)
        k = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_CONFIG_HOME")) && *e)
        k = snprintf(buf, n, "%s/mcpage/sources.json", e);
    else
        k = snprintf(buf, n, "%s/.config/mcpage/sources.json", sync_home_dir());
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

int sync_descs_load(sync_descs *out, const char *user_file, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = sync_descs_parse(out, sync__builtin_sources, strlen(sync__builtin_sources),
                              "built-in sources.json", err, errlen);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < out->n; i++)
        out->v[i]->builtin = 1;
    char path[SYNC_PATH_MAX];
    const char *env_file = getenv("MCPAGE_SOURCES");
    int explicit_file = user_file != NULL || (env_file && *env_file);
    if (user_file)
        (void)snprintf(path, sizeof path, "%s", user_file);
    else if (sync_descs_user_path(path, sizeof path) < 0)
        return 0;
    FILE *fp = fopen(path, "re");
    if (!fp) {
        /* the default file is optional: absent, or behind a folder this
           user cannot enter (another user's home, a sandbox) */
        if (!explicit_file && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
            return 0;
        (void)snprintf(err, errlen, "%s: %s", path, strerror(errno));
        sync_descs_free(out);
        return MCPAGE_EIO;
    }
    struct stat sb;
    if (fstat(fileno(fp), &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > DESC_FILE_MAX) {
        fclose(fp);
        (void)snprintf(err, errlen, "%s: not a regular file of at most %d bytes", path,
                       DESC_FILE_MAX);
        sync_descs_free(out);
        return MCPAGE_EPARSE;
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    size_t got = buf ? fread(buf, 1, (size_t)sb.st_size, fp) : 0;
    fclose(fp);
    if (!buf) {
        sync_descs_free(out);
        return MCPAGE_ENOMEM;
    }
    buf[got] = 0;
    rc = sync_descs_parse(out, buf, got, path, err, errlen);
    free(buf);
    if (rc < 0)
        sync_descs_free(out);
    return rc;
}

/* ---- homes -------------------------------------------------------------- */

/* "~/x", "$VAR/x", "${VAR:-~/y}/x" expanded into buf. */
static int expand_home(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
#define PUT(str)                                                                                   \
    do {                                                                                           \
        const char *p_ = (str);                                                                    \
        size_t l_ = strlen(p_);                                                                    \
        if (k + l_ >= n)                                                                           \
            return MCPAGE_ERANGE;                                                                  \
        memcpy(buf + k, p_, l_ + 1);                                                               \
        k += l_;                                                                                   \
    } while (0)
    if (s[0] == '~' && (s[1] == '/' || s[1] == 0)) {
        PUT(sync_home_dir());
        s++;
    }
    while (*s) {
        if (s[0] == '$' && s[1] == '{') {
            const char *close = strchr(s, '}');
            if (!close)
                return MCPAGE_EINVAL;
            const char *dflt = strstr(s, ":-");
            char var[128];
            size_t vn = (size_t)((dflt && dflt < close ? dflt : close) - (s + 2));
            if (vn >= sizeof var)
                return MCPAGE_ERANGE;
            memcpy(var, s + 2, vn);
            var[vn] = 0;
            const char *val = getenv(var);
            if (val && *val) {
                PUT(val);
            } else if (dflt && dflt < close) {
                char inner[SYNC_PATH_MAX], ex[SYNC_PATH_MAX];
                size_t dn = (size_t)(close - dflt - 2);
                if (dn >= sizeof inner)
                    return MCPAGE_ERANGE;
                memcpy(inner, dflt + 2, dn);
                inner[dn] = 0;
                int rc = expand_home(inner, ex, sizeof ex);
                if (rc < 0)
                    return rc;
                PUT(ex);
            }
            s = close + 1;
        } else if (s[0] == '$' && (isalpha((unsigned char)s[1]) || s[1] == '_')) {
            char var[128];
            size_t vn = 0;
            s++;
            while ((isalnum((unsigned char)*s) || *s == '_') && vn + 1 < sizeof var)
                var[vn++] = *s++;
            var[vn] = 0;
            const char *val = getenv(var);
            PUT(val ? val : "");
        } else {
            char one[2] = {*s++, 0};
            PUT(one);
        }
    }
#undef PUT
    return 0;
}

int sync_desc_home(const sync_desc *d, const char *given, char *buf, size_t n, char *origin,
                   size_t originlen)
{
    if (given) {
        (void)snprintf(origin, originlen, "flag --%s-home", d->name);
        int k = snprintf(buf, n, "%s", given);
        return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
    }
    char var[SYNC_DESC_NAME_MAX + 16] = "MCPAGE_";
    size_t k = strlen(var);
    for (const char *p = d->name; *p && k + 6 < sizeof var; p++)
        var[k++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    (void)snprintf(var + k, sizeof var - k, "_HOME");
    const char *e = getenv(var);
    for (size_t i = 0; (!e || !*e) && i < d->nenv; i++) {
        e = getenv(d->env[i]);
        (void)snprintf(var, sizeof var, "%.40s", d->env[i]);
    }
    if (e && *e) {
        (void)snprintf(origin, originlen, "env %s", var);
        int m = snprintf(buf, n, "%s", e);
        return (m < 0 || (size_t)m >= n) ? MCPAGE_ERANGE : 0;
    }
    (void)snprintf(origin, originlen, "default");
    return expand_home(d->home, buf, n);
}
