/*
 * The file edits tool calls made (store_edit_add): which files a call
 * wrote or edited, read from the call's arguments as the source's entry
 * in the "edit_tools" map of src/sync/sources.json says (the fields of
 * the path, the old and new text, a list of edits, an apply_patch text or
 * a diff). Lines added and removed are counted from what the call shows:
 * an old/new pair without the lines both share at its start and end, a
 * patch's +/- lines, a whole-file write's lines (nothing removed known).
 * Internal to src/sync/.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_internal.h"

#define EDIT_LINES_MAX  (1u << 20) /* lines of one text compared line by line */
#define EDIT_SUMMARY    160        /* bytes of a summary */
#define EDIT_LIKE_DEPTH 4          /* "$like" links followed */

/* ---- the map ------------------------------------------------------------ */

static pthread_once_t map_once = PTHREAD_ONCE_INIT;
static json_t *map_root; /* the built-in "edit_tools" object, for the process's life */

static void map_load(void)
{
    json_t *root = json_loads(sync__builtin_sources, 0, NULL);
    json_t *et = json_object_get(root, "edit_tools");
    if (json_is_object(et))
        map_root = json_incref(et);
    json_decref(root);
}

/* The tool's entry for `source` (following "$like"), or NULL. */
static json_t *map_tool(const char *source, const char *name)
{
    json_t *m = source ? json_object_get(map_root, source) : NULL;
    for (int i = 0; i < EDIT_LIKE_DEPTH && m; i++) {
        const char *like = sync_json_str(m, "$like");
        if (!like)
            break;
        m = json_object_get(map_root, like);
    }
    json_t *t = json_object_get(m, name);
    return json_is_object(t) ? t : NULL;
}

const json_t *sync__edit_tool(const char *source, const char *format, const char *name)
{
    pthread_once(&map_once, map_load);
    if (!name)
        return NULL;
    json_t *t = map_tool(source, name);
    return t ? t : map_tool(format, name);
}

/* ---- arguments ------------------------------------------------------- */

typedef struct text_buf {
    char *p; /* owned when `own` */
    int own;
} text_buf;

/* The first field of `names` holding text: a string, or an array of
 * strings joined by newlines; "$" is the argument itself when a string. */
static int field_text(json_t *obj, const char *whole, json_t *names, text_buf *out)
{
    out->p = NULL;
    out->own = 0;
    size_t i;
    json_t *nm;
    json_array_foreach(names, i, nm)
    {
        const char *k = json_string_value(nm);
        if (!k)
            continue;
        if (strcmp(k, "$") == 0) {
            if (whole) {
                out->p = (char *)whole;
                return 1;
            }
            continue;
        }
        json_t *v = json_object_get(obj, k);
        if (json_is_string(v)) {
            out->p = (char *)json_string_value(v);
            return 1;
        }
        if (json_is_array(v)) {
            size_t n = 0, j;
            json_t *e;
            json_array_foreach(v, j, e) n += json_is_string(e) ? json_string_length(e) + 1 : 0;
            char *b = malloc(n + 1), *w = b;
            if (!b)
                return 0;
            json_array_foreach(v, j, e)
            {
                if (!json_is_string(e))
                    continue;
                memcpy(w, json_string_value(e), json_string_length(e));
                w += json_string_length(e);
                *w++ = '\n';
            }
            *w = '\0';
            out->p = b;
            out->own = 1;
            return 1;
        }
    }
    return 0;
}

static void text_free(text_buf *t)
{
    if (t->own)
        free(t->p);
    t->p = NULL;
}

/* 1 when `args` satisfies the tool's "when": each field one of its values. */
static int when_holds(json_t *tool, json_t *args)
{
    json_t *when = json_object_get(tool, "when");
    const char *k;
    json_t *allowed;
    json_object_foreach(when, k, allowed)
    {
        const char *v = sync_json_str(args, k);
        int ok = 0;
        size_t i;
        json_t *a;
        json_array_foreach(allowed, i, a) ok |=
            v && json_is_string(a) && strcmp(v, json_string_value(a)) == 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- counting -------------------------------------------------------- */

typedef struct span {
    const char *p;
    size_t n;
} span;

static size_t count_lines(const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = 0;
    const char *q = s;
    for (; *q; q++)
        n += *q == '\n';
    return n + (q[-1] != '\n');
}

/* The lines of s (without their newlines) into *out (malloc'd); 0 when
 * there are more than EDIT_LINES_MAX or memory ran out. */
static int split_lines(const char *s, span **out, size_t *n)
{
    size_t k = count_lines(s);
    *out = NULL;
    *n = 0;
    if (k > EDIT_LINES_MAX)
        return 0;
    if (k == 0)
        return 1;
    span *v = malloc(k * sizeof *v);
    if (!v)
        return 0;
    size_t i = 0;
    for (const char *p = s; *p && i < k;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        v[i].p = p;
        v[i++].n = len;
        p += len + (nl != NULL);
    }
    *out = v;
    *n = i;
    return 1;
}

static int span_has(span l, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= l.n; i++)
        if (memcmp(l.p + i, word, k) == 0)
            return 1;
    return 0;
}

static int span_eq(span a, span b)
{
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* A line fit for a summary: trimmed, short, or NULL when blank. */
static void line_note(char *buf, size_t cap, const char *tag, span l)
{
    while (l.n && (*l.p == ' ' || *l.p == '\t')) {
        l.p++;
        l.n--;
    }
    if (!l.n)
        return;
    char tmp[EDIT_SUMMARY + 1];
    size_t n = l.n < EDIT_SUMMARY ? l.n : EDIT_SUMMARY;
    memcpy(tmp, l.p, n);
    tmp[n] = '\0';
    char *cut = sync_short_copy(tmp, EDIT_SUMMARY - 20);
    if (cut)
        (void)snprintf(buf, cap, "%s %s", tag, cut);
    free(cut);
}

typedef struct edit_count {
    int64_t added, removed; /* -1: not shown */
    char note[EDIT_SUMMARY + 1];
} edit_count;

static void count_add(edit_count *c, int64_t added, int64_t removed)
{
    if (added >= 0)
        c->added = (c->added < 0 ? 0 : c->added) + added;
    if (removed >= 0)
        c->removed = (c->removed < 0 ? 0 : c->removed) + removed;
}

/* An old/new pair: the lines between their common head and tail. */
static void count_pair(edit_count *c, const char *old, const char *new_)
{
    span *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (!split_lines(old ? old : "", &a, &na) || !split_lines(new_ ? new_ : "", &b, &nb)) {
        count_add(c, (int64_t)count_lines(new_), (int64_t)count_lines(old));
        free(a);
        free(b);
        return;
    }
    size_t head = 0, tail = 0;
    while (head < na && head < nb && span_eq(a[head], b[head]))
        head++;
    while (tail < na - head && tail < nb - head && span_eq(a[na - 1 - tail], b[nb - 1 - tail]))
        tail++;
    count_add(c, (int64_t)(nb - head - tail), (int64_t)(na - head - tail));
    if (!c->note[0] && nb - head - tail > 0)
        line_note(c->note, sizeof c->note, "+", b[head]);
    if (!c->note[0] && na - head - tail > 0)
        line_note(c->note, sizeof c->note, "-", a[head]);
    free(a);
    free(b);
}

/* A whole text written: its lines added. */
static void count_new(edit_count *c, const char *text, int write)
{
    (void)write;
    count_add(c, (int64_t)count_lines(text), -1);
    if (!c->note[0] && text) {
        const char *nl = strchr(text, '\n');
        span l = {text, nl ? (size_t)(nl - text) : strlen(text)};
        line_note(c->note, sizeof c->note, "+", l);
    }
}

/* A diff's lines: a unified diff's +/- lines, or SEARCH/REPLACE blocks. */
static void count_diff(edit_count *c, const char *d)
{
    span *v = NULL;
    size_t n = 0;
    if (!split_lines(d, &v, &n)) {
        free(v);
        return;
    }
    int64_t add = 0, rem = 0;
    int part = 0; /* SEARCH/REPLACE: 0 outside, 1 search, 2 replace */
    for (size_t i = 0; i < n; i++) {
        span l = v[i];
        if (l.n >= 7 && (strncmp(l.p, "<<<<<<<", 7) == 0 || strncmp(l.p, "-------", 7) == 0) &&
            span_has(l, "SEARCH")) {
            part = 1;
            continue;
        }
        if (part && l.n >= 7 && strncmp(l.p, "=======", 7) == 0) {
            part = 2;
            continue;
        }
        if (part && l.n >= 7 &&
            (strncmp(l.p, ">>>>>>>", 7) == 0 || strncmp(l.p, "+++++++", 7) == 0)) {
            part = 0;
            continue;
        }
        if (part == 1 || part == 2) {
            part == 1 ? rem++ : add++;
            if (!c->note[0] && part == 2)
                line_note(c->note, sizeof c->note, "+", l);
            continue;
        }
        if (l.n >= 3 && (strncmp(l.p, "+++", 3) == 0 || strncmp(l.p, "---", 3) == 0))
            continue;
        if (l.n && l.p[0] == '+') {
            add++;
            if (!c->note[0])
                line_note(c->note, sizeof c->note, "+", (span){l.p + 1, l.n - 1});
        } else if (l.n && l.p[0] == '-') {
            rem++;
        }
    }
    count_add(c, add, rem);
    free(v);
}

/* ---- paths ----------------------------------------------------------- */

/* 1 for a path that is absolute here or on Windows (C:\x, \\server). */
static int is_absolute(const char *p)
{
    return p[0] == '/' || (((p[0] | 32) >= 'a' && (p[0] | 32) <= 'z') && p[1] == ':') ||
           (p[0] == '\\' && p[1] == '\\');
}

/* `path` made absolute against `cwd` and tidied ("//", "/./", "/../"):
 * malloc'd; a path that cannot be resolved is kept as given. */
static char *resolve(const char *path, const char *cwd)
{
    if (strncmp(path, "file://", 7) == 0)
        path += 7;
    size_t n = strlen(path), c = cwd ? strlen(cwd) : 0;
    if (n == 0)
        return NULL;
    int join = path[0] != '/' && !is_absolute(path) && path[0] != '~' && cwd && cwd[0] == '/';
    char *full = malloc((join ? c + 1 : 0) + n + 1);
    if (!full)
        return NULL;
    if (join)
        (void)snprintf(full, c + n + 2, "%s/%s", cwd, path);
    else
        memcpy(full, path, n + 1);
    if (full[0] != '/')
        return full;
    /* tidy in place: each part appended after the last kept one */
    char *out = full;
    size_t w = 0;
    for (char *p = full; *p;) {
        while (*p == '/')
            p++;
        char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0)
            break;
        if (len == 1 && p[0] == '.') {
            /* skip */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (w > 0 && out[w - 1] != '/')
                w--;
            if (w > 0)
                w--;
        } else {
            out[w++] = '/';
            memmove(out + w, p, len);
            w += len;
        }
        p += len;
    }
    if (w == 0)
        out[w++] = '/';
    out[w] = '\0';
    return out;
}

/* ---- the calls ----------------------------------------------------------- */

typedef struct edit_sink {
    sync_edit_fn fn;
    void *ud;
    const char *cwd;
    const char *tool;
    int rc;
} edit_sink;

static void emit(edit_sink *k, const char *path, const edit_count *c, const char *op)
{
    if (k->rc < 0 || !path || !*path)
        return;
    char *abs = resolve(path, k->cwd);
    if (!abs) {
        k->rc = MCPAGE_ENOMEM;
        return;
    }
    char summary[EDIT_SUMMARY + 40];
    if (c->note[0])
        (void)snprintf(summary, sizeof summary, "%s: %s", op, c->note);
    else
        (void)snprintf(summary, sizeof summary, "%s", op);
    sync_edit e = {abs, k->tool, c->added, c->removed, summary};
    k->rc = k->fn(k->ud, &e);
    free(abs);
}

/* A trimmed copy of the rest of a header line, into buf. */
static void header_value(const char *p, size_t n, char *buf, size_t cap)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\t'))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

/*
 * An apply_patch text ("*** Begin Patch" ... "*** End Patch"): every
 * file it adds, deletes or updates (a move names both files).
 */
static int patch_edits(edit_sink *k, const char *text)
{
    const char *at = strstr(text, "*** Begin Patch");
    if (!at)
        return 0;
    char path[STORE_EDIT_PATH_MAX + 1] = "", moved[STORE_EDIT_PATH_MAX + 1] = "";
    const char *op = NULL;
    edit_count c = {-1, -1, ""};
    int files = 0;
    for (const char *p = at; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + n;
        static const struct {
            const char *head, *op;
        } heads[] = {{"*** Add File:", "create"},
                     {"*** Delete File:", "delete"},
                     {"*** Update File:", "update"}};
        int head = -1;
        for (int i = 0; i < 3; i++)
            if (n >= strlen(heads[i].head) && strncmp(p, heads[i].head, strlen(heads[i].head)) == 0)
                head = i;
        int end = n >= 13 && strncmp(p, "*** End Patch", 13) == 0;
        if ((head >= 0 || end) && op) {
            if (moved[0]) {
                char o[STORE_EDIT_PATH_MAX + 16];
                (void)snprintf(o, sizeof o, "move to %s", moved);
                emit(k, path, &c, o);
                emit(k, moved, &c, "move");
            } else {
                emit(k, path, &c, op);
            }
            files++;
            op = NULL;
        }
        if (end)
            break;
        if (head >= 0) {
            size_t h = strlen(heads[head].head);
            header_value(p + h, n - h, path, sizeof path);
            op = heads[head].op;
            moved[0] = '\0';
            c = (edit_count){head == 1 ? -1 : 0, head == 1 ? -1 : 0, ""};
        } else if (op && n >= 13 && strncmp(p, "*** Move to:", 12) == 0) {
            header_value(p + 12, n - 12, moved, sizeof moved);
        } else if (op && n && p[0] == '+') {
            c.added++;
            if (!c.note[0])
                line_note(c.note, sizeof c.note, "+", (span){p + 1, n - 1});
        } else if (op && n && p[0] == '-') {
            c.removed++;
        }
        p = next;
    }
    return files;
}

/* A unified diff's files ("--- a/x" / "+++ b/x"). */
static int unified_edits(edit_sink *k, const char *text)
{
    int files = 0;
    for (const char *p = text; (p = strstr(p, "--- ")) != NULL;) {
        if (p != text && p[-1] != '\n') {
            p += 4;
            continue;
        }
        const char *nl = strchr(p, '\n');
        if (!nl || strncmp(nl + 1, "+++ ", 4) != 0) {
            p += 4;
            continue;
        }
        char from[STORE_EDIT_PATH_MAX + 1], to[STORE_EDIT_PATH_MAX + 1];
        header_value(p + 4, (size_t)(nl - p - 4), from, sizeof from);
        const char *nl2 = strchr(nl + 1, '\n');
        const char *body = nl2 ? nl2 + 1 : nl + 1 + strlen(nl + 1);
        header_value(nl + 5, (size_t)((nl2 ? nl2 : body) - nl - 5), to, sizeof to);
        /* the hunk lines up to the next file */
        const char *stop = body;
        for (;;) {
            const char *q = strstr(stop, "\n--- ");
            const char *qq = q ? strchr(q + 1, '\n') : NULL;
            if (!q || (qq && strncmp(qq + 1, "+++ ", 4) == 0)) {
                stop = q ? q + 1 : body + strlen(body);
                break;
            }
            stop = q + 1;
        }
        size_t hn = (size_t)(stop - body);
        char *hunks = malloc(hn + 1);
        if (!hunks)
            return MCPAGE_ENOMEM;
        memcpy(hunks, body, hn);
        hunks[hn] = '\0';
        edit_count c = {-1, -1, ""};
        count_diff(&c, hunks);
        free(hunks);
        int deleted = strcmp(to, "/dev/null") == 0, created = strcmp(from, "/dev/null") == 0;
        const char *path = deleted ? from : to;
        for (char *t = strchr((char *)path, '\t'); t; t = NULL)
            *t = '\0'; /* a time stamp after a tab */
        if ((path[0] == 'a' || path[0] == 'b') && path[1] == '/')
            path += 2;
        emit(k, path, &c, deleted ? "delete" : created ? "create" : "edit");
        files++;
        p = stop;
    }
    return files;
}

static void one_edit(edit_sink *k, json_t *tool, json_t *args, const char *whole,
                     const char *parent_path)
{
    text_buf path, old, new_, diff;
    int has_path = field_text(args, whole, json_object_get(tool, "path"), &path);
    const char *p = has_path ? path.p : parent_path;
    if (!p) {
        text_free(&path);
        return;
    }
    int write = json_is_true(json_object_get(tool, "write"));
    edit_count c = {-1, -1, ""};
    const char *op = write ? "write" : "edit";
    int has_old = field_text(args, NULL, json_object_get(tool, "old"), &old);
    int has_new = field_text(args, NULL, json_object_get(tool, "new"), &new_);
    int has_diff = field_text(args, NULL, json_object_get(tool, "diff"), &diff);
    json_t *each = json_object_get(args, sync_json_str(tool, "each"));
    if (json_is_array(each)) {
        size_t i;
        json_t *e;
        json_array_foreach(each, i, e)
        {
            text_buf eo, en;
            int ho = field_text(e, NULL, json_object_get(tool, "old"), &eo);
            int hn = field_text(e, NULL, json_object_get(tool, "new"), &en);
            if (ho || hn)
                count_pair(&c, eo.p, en.p);
            text_free(&eo);
            text_free(&en);
        }
    } else if (has_old) {
        count_pair(&c, old.p, has_new ? new_.p : "");
    } else if (has_diff) {
        count_diff(&c, diff.p);
    } else if (has_new) {
        count_new(&c, new_.p, write);
    }
    emit(k, p, &c, op);
    text_free(&path);
    text_free(&old);
    text_free(&new_);
    text_free(&diff);
}

int sync__edits_of_call(const char *source, const char *format, const char *name, json_t *args,
                        const char *cwd, sync_edit_fn fn, void *ud)
{
    json_t *tool = (json_t *)sync__edit_tool(source, format, name);
    if (!tool || !args)
        return 0;
    edit_sink k = {fn, ud, cwd, name, 0};
    json_t *parsed = NULL;
    const char *whole = NULL;
    if (json_is_string(args)) {
        whole = json_string_value(args);
        parsed = json_loads(whole, JSON_DECODE_ANY, NULL);
        if (json_is_object(parsed))
            args = parsed;
    }
    if (json_is_object(args) && !when_holds(tool, args))
        goto done;
    json_t *patch = json_object_get(tool, "patch");
    if (patch) {
        text_buf t;
        if (field_text(json_is_object(args) ? args : NULL, whole, patch, &t)) {
            int n = patch_edits(&k, t.p);
            if (n == 0 && k.rc == 0 && (strncmp(t.p, "--- ", 4) == 0 || strstr(t.p, "\n--- ")))
                n = unified_edits(&k, t.p);
            if (n < 0)
                k.rc = n;
        }
        text_free(&t);
        goto done;
    }
    if (json_is_object(args))
        one_edit(&k, tool, args, whole, NULL);
done:
    json_decref(parsed);
    return k.rc;
}

/* ---- into the store -------------------------------------------------- */

typedef struct put_ctx {
    store *s;
    const char *session_id;
    int64_t message_id;
    const char *ts;
    sync_report *rep;
} put_ctx;

static int put_one(void *ud, const sync_edit *e)
{
    put_ctx *c = ud;
    store_edit se = {
        .session_id = c->session_id,
        .message_id = c->message_id,
        .timestamp = c->ts,
        .path = e->path,
        .tool = e->tool,
        .added = e->added,
        .removed = e->removed,
        .summary = e->summary,
    };
    return store_edit_add(c->s, &se);
}

int sync_edits_put(store *s, const char *source, const char *format, const char *session_id,
                   int64_t message_id, const sync_record *r, const char *cwd,
                   const char *fallback_ts)
{
    if (!r->calls || json_array_size(r->calls) == 0)
        return 0;
    put_ctx c = {s, session_id, message_id, r->timestamp ? r->timestamp : fallback_ts, NULL};
    char *stored_cwd = NULL;
    int rc = 0;
    size_t i;
    json_t *call;
    json_array_foreach(r->calls, i, call)
    {
        const char *name = sync_json_str(call, "name");
        if (!sync__edit_tool(source, format, name))
            continue;
        if (!cwd && !stored_cwd && (rc = store_session_cwd(s, session_id, &stored_cwd)) < 0)
            break;
        rc = sync__edits_of_call(source, format, name, json_object_get(call, "args"),
                                 cwd ? cwd : stored_cwd, put_one, &c);
        if (rc < 0)
            break;
    }
    free(stored_cwd);
    return rc;
}
