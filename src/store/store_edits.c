/*
 * File edits (store.h, "file edits"): the files tool calls wrote or
 * edited, one row per file and call, written once for both backends over
 * store_ops.sql_rows. The list is newest first by (ts, id); the path
 * filter is exact, a trailing part, or a glob (SQLite GLOB, PostgreSQL
 * LIKE: both case-sensitive, which SQLite's LIKE is not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "store/store_backend.h"
#include "store/store_sql.h"

/* ---- writing ----------------------------------------------------------- */

static int first_int(void *ctx, const store_sql_row *row)
{
    int64_t *v = ctx;
    v[0] = 1;
    v[1] = row->int64(row->res, 0);
    return 0;
}

/* The session's row id; v[0] 0 when there is none. */
static int session_sid(store *s, const char *id, int64_t v[2])
{
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT sid FROM sessions WHERE session_id = ?");
    store_sql_text(&q, id);
    v[0] = v[1] = 0;
    return s->ops->sql_rows(s, &q, first_int, v);
}

int store_edit_add(store *s, const store_edit *e)
{
    if (!s || !e || !e->session_id || !e->path || !*e->path)
        return MCPAGE_EINVAL;
    if (!s->writable)
        return store_fail(s, MCPAGE_EINVAL, "store opened read-only");
    if (strlen(e->path) > STORE_EDIT_PATH_MAX)
        return 0; /* not a path a tool could name: nothing to keep */
    int64_t sid[2];
    int rc = session_sid(s, e->session_id, sid);
    if (rc < 0)
        return rc;
    if (!sid[0])
        return store_fail(s, MCPAGE_ENOTFOUND, "no session %s to add an edit to", e->session_id);
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "INSERT INTO file_edits(sid, message_id, ts, path, tool, added, removed, "
                      "summary) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    store_sql_int(&q, sid[1]);
    store_sql_int(&q, e->message_id);
    store_sql_text(&q, e->timestamp ? e->timestamp : "");
    store_sql_text(&q, e->path);
    store_sql_text(&q, e->tool ? e->tool : "");
    store_sql_int(&q, e->added < 0 ? -1 : e->added);
    store_sql_int(&q, e->removed < 0 ? -1 : e->removed);
    store_sql_text(&q, e->summary);
    return s->ops->sql_rows(s, &q, NULL, NULL);
}

int store_edits_forget(store *s, const char *session_id)
{
    int64_t sid[2];
    int rc = session_sid(s, session_id, sid);
    if (rc < 0 || !sid[0])
        return rc;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "DELETE FROM file_edits WHERE sid = ?");
    store_sql_int(&q, sid[1]);
    return s->ops->sql_rows(s, &q, NULL, NULL);
}

int store_edit_reset(store *s, const char *session_id)
{
    if (!s || !session_id)
        return MCPAGE_EINVAL;
    if (!s->writable)
        return store_fail(s, MCPAGE_EINVAL, "store opened read-only");
    return store_edits_forget(s, session_id);
}

int store_edit_backfill_pending(store *s, int *pending)
{
    if (!s || !pending)
        return MCPAGE_EINVAL;
    int64_t v[2] = {0};
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT max(backfill) FROM edits_state");
    int rc = s->ops->sql_rows(s, &q, first_int, v);
    *pending = rc == 0 && v[1] > 0;
    return rc;
}

int store_edit_backfill_done(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "UPDATE edits_state SET backfill = 0");
    return s->ops->sql_rows(s, &q, NULL, NULL);
}

int store_edit_message_at(store *s, const char *session_id, int64_t byte_offset,
                          const char *call_id, int64_t *message_id)
{
    if (!s || !session_id || !message_id)
        return MCPAGE_EINVAL;
    int64_t v[2] = {0};
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT m.message_id FROM messages m JOIN sessions s ON s.sid = m.sid "
                      "WHERE s.session_id = ? AND m.byte_offset = ? ORDER BY CASE WHEN "
                      "m.tool_call_id = ? THEN 0 ELSE 1 END, m.ordinal LIMIT 1");
    store_sql_text(&q, session_id);
    store_sql_int(&q, byte_offset);
    store_sql_text(&q, call_id ? call_id : "");
    int rc = s->ops->sql_rows(s, &q, first_int, v);
    *message_id = v[0] ? v[1] : 0;
    return rc;
}

static int take_text(void *ctx, const store_sql_row *row)
{
    char **out = ctx;
    const char *t = row->text(row->res, 0);
    if (t && *t && !*out && !(*out = store_strdup(t)))
        return MCPAGE_ENOMEM;
    return 0;
}

int store_session_cwd(store *s, const char *session_id, char **cwd)
{
    if (!s || !session_id || !cwd)
        return MCPAGE_EINVAL;
    *cwd = NULL;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT p.path FROM sessions s JOIN projects p ON p.id = s.project_id "
                      "WHERE s.session_id = ?");
    store_sql_text(&q, session_id);
    int rc = s->ops->sql_rows(s, &q, take_text, cwd);
    if (rc < 0) {
        free(*cwd);
        *cwd = NULL;
    }
    return rc;
}

/* ---- the list ---------------------------------------------------------- */

/* Characters in a UTF-8 string (the engines' length() and substr() count these). */
static int64_t utf8_chars(const char *p)
{
    int64_t n = 0;
    for (; *p; p++)
        n += ((unsigned char)*p & 0xC0) != 0x80;
    return n;
}

/*
 * A glob as the engine's pattern, into out (cap bytes; 0 on overflow):
 * SQLite GLOB keeps `*` and `?` and quotes `[` as "[[]"; PostgreSQL LIKE
 * spells them `%` and `_` and escapes its own `%`, `_` and `\`.
 */
static int glob_pattern(int like, const char *prefix, const char *glob, char *out, size_t cap)
{
    size_t n = 0;
    if (*prefix) { /* any folders before the glob */
        const char *any = like ? "%/" : "*/";
        if (cap < 3)
            return 0;
        memcpy(out, any, 2);
        n = 2;
    }
    for (const char *p = glob; *p; p++) {
        const char *put;
        char one[2] = {*p, 0};
        if (like)
            put = *p == '*'    ? "%"
                  : *p == '?'  ? "_"
                  : *p == '%'  ? "\\%"
                  : *p == '_'  ? "\\_"
                  : *p == '\\' ? "\\\\"
                               : one;
        else
            put = *p == '[' ? "[[]" : one;
        size_t k = strlen(put);
        if (n + k >= cap)
            return 0;
        memcpy(out + n, put, k);
        n += k;
    }
    out[n] = '\0';
    return 1;
}

typedef struct path_args {
    char a[2 * STORE_EDIT_PATH_MAX + 8]; /* the patterns or the suffix, bound by the query */
    char b[2 * STORE_EDIT_PATH_MAX + 8];
} path_args;

/* " AND <the path condition>" (see store_edit_filter). */
static int where_path(store *s, store_sql *q, const char *path, path_args *pa)
{
    if (!path)
        return 0;
    if (!*path || strlen(path) > STORE_EDIT_PATH_MAX)
        return store_fail(s, MCPAGE_EINVAL, "path must be 1 to %d bytes", STORE_EDIT_PATH_MAX);
    int like = s->ops->dialect->numbered;
    const char *op = like ? " LIKE ? ESCAPE '\\'" : " GLOB ?";
    if (strpbrk(path, "*?")) {
        if (!glob_pattern(like, "", path, pa->a, sizeof pa->a) ||
            !glob_pattern(like, "*/", path, pa->b, sizeof pa->b))
            return store_fail(s, MCPAGE_EINVAL, "path pattern too long");
        store_sql_add(q, " AND (e.path");
        store_sql_add(q, op);
        store_sql_text(q, pa->a);
        if (path[0] != '/') {
            store_sql_add(q, " OR e.path");
            store_sql_add(q, op);
            store_sql_text(q, pa->b);
        }
        store_sql_add(q, ")");
        return 0;
    }
    if (path[0] == '/') {
        store_sql_where_text(q, "e.path = ?", path);
        return 0;
    }
    /* a trailing part: the path itself (stored relative when no cwd was
       known) or "/" + it at the end, compared exactly */
    (void)snprintf(pa->a, sizeof pa->a, "/%s", path);
    store_sql_add(q, " AND (e.path = ? OR substr(e.path, length(e.path) - ?) = ?)");
    store_sql_text(q, path);
    store_sql_int(q, utf8_chars(pa->a) - 1);
    store_sql_text(q, pa->a);
    return 0;
}

#define EDIT_FROM                                                                                  \
    " FROM file_edits e JOIN sessions s ON s.sid = e.sid"                                          \
    " LEFT JOIN projects p ON p.id = s.project_id"

static int edit_where(store *s, store_sql *q, const store_edit_filter *f, path_args *pa)
{
    store_sql_where(q);
    int rc = where_path(s, q, f->path, pa);
    if (rc < 0)
        return rc;
    if (f->project && *f->project) {
        store_sql_add(q, " AND s.project_id IN (SELECT id FROM projects WHERE name = ? OR "
                         "path = ?)");
        store_sql_text(q, f->project);
        store_sql_text(q, f->project);
    }
    store_sql_where_text(q, "s.source = ?", f->source);
    store_sql_where_text(q, "s.session_id = ?", f->session_id);
    store_sql_where_text(q, "e.ts >= ?", f->after);
    store_sql_where_text(q, "e.ts < ?", f->before);
    store_sql_visible(q, store_view_of(s), "s");
    return 0;
}

typedef struct rows_ctx {
    store_edits *out;
    size_t cap;
} rows_ctx;

static int add_row(void *ctx, const store_sql_row *r)
{
    rows_ctx *c = ctx;
    store_edits *l = c->out;
    if (l->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        store_edit_row *v = realloc(l->rows, cap * sizeof *v);
        if (!v)
            return MCPAGE_ENOMEM;
        l->rows = v;
        c->cap = cap;
    }
    store_edit_row *e = &l->rows[l->count];
    memset(e, 0, sizeof *e);
    l->count++;
    e->id = r->int64(r->res, 0);
    e->message_id = r->int64(r->res, 3);
    e->ordinal = r->int64(r->res, 4);
    e->added = r->int64(r->res, 9);
    e->removed = r->int64(r->res, 10);
    if (store_sql_col_dup(r, 1, 0, &e->path) || store_sql_col_dup(r, 2, 0, &e->session_id) ||
        store_sql_col_dup(r, 5, 1, &e->timestamp) || store_sql_col_dup(r, 6, 0, &e->source) ||
        store_sql_col_dup(r, 7, 1, &e->project) || store_sql_col_dup(r, 8, 0, &e->tool) ||
        store_sql_col_dup(r, 11, 1, &e->summary))
        return MCPAGE_ENOMEM;
    e->key.nparts = 2;
    store_key_set_text(&e->key.part[0], e->timestamp ? e->timestamp : "");
    store_key_set_int(&e->key.part[1], e->id);
    return 0;
}

int store_edits_list(store *s, const store_edit_filter *f, const store_page *pg, store_edits *out)
{
    if (!s || !f || !pg || !out || pg->limit < 1 || pg->limit > STORE_LIMIT_MAX)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    path_args *pa = malloc(sizeof *pa);
    if (!pa)
        return MCPAGE_ENOMEM;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT e.id, e.path, s.session_id, e.message_id, coalesce((SELECT "
                      "m.ordinal FROM messages m WHERE m.message_id = e.message_id), -1), e.ts, "
                      "s.source, p.name, e.tool, e.added, e.removed, e.summary" EDIT_FROM);
    static const store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    int rc = edit_where(s, &q, f, pa);
    if (rc == 0)
        rc = store_sql_after(s, &q, pg, " AND (e.ts, e.id) < (?, ?)", types);
    if (rc == 0) {
        store_sql_page(&q, "e.ts DESC, e.id DESC", pg);
        rows_ctx c = {.out = out};
        rc = s->ops->sql_rows(s, &q, add_row, &c);
    }
    free(pa);
    if (rc < 0)
        store_edits_free(out);
    return rc;
}

int store_edits_count(store *s, const store_edit_filter *f, int64_t *n)
{
    if (!s || !f || !n)
        return MCPAGE_EINVAL;
    *n = 0;
    path_args *pa = malloc(sizeof *pa);
    if (!pa)
        return MCPAGE_ENOMEM;
    int64_t v[2] = {0};
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT count(*)" EDIT_FROM);
    int rc = edit_where(s, &q, f, pa);
    if (rc == 0)
        rc = s->ops->sql_rows(s, &q, first_int, v);
    free(pa);
    *n = v[1];
    return rc;
}

void store_edits_free(store_edits *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        store_edit_row *e = &l->rows[i];
        free(e->path);
        free(e->session_id);
        free(e->timestamp);
        free(e->source);
        free(e->project);
        free(e->tool);
        free(e->summary);
    }
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}
