/*
 * The SQL both store backends share: the statement builder in the shared
 * spelling (`?` parameters, backquoted keyword identifiers) turned into
 * each engine's by its dialect, the lists' filters, orders and keyset
 * comparisons, the row layouts of projects, sessions, messages and
 * search hits, and the assembly of raw chunks. The statements each
 * backend builds from these are the same text they were when each
 * backend kept its own copy.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_sql.h"

/* ---- the builder ---------------------------------------------------- */

static void sql_put(store_sql *q, const char *src, size_t n)
{
    if (q->len + n + 1 > sizeof q->text) {
        q->overflow = 1;
        return;
    }
    memcpy(q->text + q->len, src, n);
    q->len += n;
    q->text[q->len] = '\0';
}

void store_sql_add(store_sql *q, const char *part)
{
    while (*part && !q->overflow) {
        size_t plain = strcspn(part, "?`");
        if (plain > 0 && !q->d->numbered && !part[plain]) {
            sql_put(q, part, plain); /* the common case: nothing to respell */
            return;
        }
        sql_put(q, part, plain);
        part += plain;
        if (*part == '?' && q->d->numbered) {
            char num[16];
            int n = snprintf(num, sizeof num, "$%d", ++q->placeholders);
            sql_put(q, num, (size_t)n);
            part++;
        } else if (*part == '?') {
            sql_put(q, "?", 1);
            part++;
        } else if (*part == '`') {
            if (q->d->quote)
                sql_put(q, &q->d->quote, 1);
            part++;
        }
    }
}

static store_sql_param *sql_param(store_sql *q, store_key_type type)
{
    if (q->nparams >= STORE_SQL_PARAMS) {
        q->overflow = 1;
        return NULL;
    }
    store_sql_param *p = &q->params[q->nparams++];
    *p = (store_sql_param){.type = type};
    return p;
}

void store_sql_text(store_sql *q, const char *v)
{
    store_sql_param *p = sql_param(q, STORE_KEY_TEXT);
    if (p)
        p->s = v;
}

void store_sql_int(store_sql *q, int64_t v)
{
    store_sql_param *p = sql_param(q, STORE_KEY_INT);
    if (p)
        p->i = v;
}

void store_sql_real(store_sql *q, double v)
{
    store_sql_param *p = sql_param(q, STORE_KEY_REAL);
    if (p)
        p->r = v;
}

void store_sql_key(store_sql *q, const store_key_part *p)
{
    if (p->type == STORE_KEY_INT)
        store_sql_int(q, p->i);
    else if (p->type == STORE_KEY_REAL)
        store_sql_real(q, p->r);
    else
        store_sql_text(q, p->s);
}

void store_sql_where(store_sql *q)
{
    store_sql_add(q, " WHERE ");
    store_sql_add(q, q->d->true_sql);
}

void store_sql_where_text(store_sql *q, const char *cond, const char *v)
{
    if (!v || !*v)
        return;
    store_sql_add(q, " AND ");
    store_sql_add(q, cond);
    store_sql_text(q, v);
}

void store_sql_where_end(store_sql *q, size_t mark)
{
    if (!q->overflow && q->len == mark + strlen(" WHERE ") + strlen(q->d->true_sql)) {
        q->len = mark;
        q->text[mark] = '\0';
    }
}

void store_sql_page(store_sql *q, const char *order, const store_page *pg)
{
    store_sql_add(q, " ORDER BY ");
    store_sql_add(q, order);
    store_sql_add(q, " LIMIT ?");
    store_sql_int(q, pg->limit);
    if (!store_page_keyset(pg)) {
        store_sql_add(q, " OFFSET ?");
        store_sql_int(q, pg->offset);
    }
}

int store_sql_after(store *s, store_sql *q, const store_page *pg, const char *cmp,
                    const store_key_type types[2])
{
    if (!store_page_keyset(pg))
        return 0;
    int rc = store_key_check(s, pg->after, types, 2);
    if (rc < 0)
        return rc;
    store_sql_add(q, cmp);
    store_sql_key(q, &pg->after->part[0]);
    store_sql_key(q, &pg->after->part[1]);
    return 0;
}

/* ---- filters and orders --------------------------------------------- */

/* " AND find(<haystack>, <needle>) > 0" binding `v`, when `v` is set. */
static void where_find(store_sql *q, const char *haystack, const char *needle, const char *v)
{
    if (!v || !*v)
        return;
    store_sql_add(q, " AND ");
    store_sql_add(q, q->d->find);
    store_sql_add(q, "(");
    store_sql_add(q, haystack);
    store_sql_add(q, ", ");
    store_sql_add(q, needle);
    store_sql_add(q, ") > 0");
    store_sql_text(q, v);
}

/* " AND s.project_id IN (...)": a project given by name or by path. */
static void where_project(store_sql *q, const char *project)
{
    if (!project || !*project)
        return;
    store_sql_add(q, " AND s.project_id IN (SELECT id FROM projects WHERE name = ? OR path = ?)");
    store_sql_text(q, project);
    store_sql_text(q, project);
}

void store_sql_visible(store_sql *q, const struct store_view *v, const char *alias)
{
    if (v == NULL)
        return;
    char part[64];
    if (v->nowners == 1) {
        snprintf(part, sizeof part, " AND (%s.owner = ?", alias);
        store_sql_add(q, part);
        store_sql_text(q, v->owners[0]);
    } else {
        /* several owners: one parameter "|a|b|" (owner names hold no '|') */
        snprintf(part, sizeof part, " AND (%s(?, '|' || %s.owner || '|') > 0", q->d->find, alias);
        store_sql_add(q, part);
        store_sql_text(q, v->owner_list);
    }
    if (v->npids > 0) {
        snprintf(part, sizeof part, " OR %s.project_id IN (", alias);
        store_sql_add(q, part);
        for (size_t i = 0; i < v->npids; i++) {
            /* ids are the store's own integers: written into the text, no parameter each */
            snprintf(part, sizeof part, "%s%lld", i ? ", " : "", (long long)v->pids[i]);
            store_sql_add(q, part);
        }
        store_sql_add(q, ")");
    }
    store_sql_add(q, ")");
}

void store_sql_projects_from(store_sql *q, const struct store_view *v)
{
    if (v == NULL) {
        store_sql_add(q, "projects p");
        return;
    }
    /* Each project with what its visible sessions add up to: a project of
       which the viewer sees no session is not listed, and its counts and
       times are those of the sessions the viewer sees. */
    store_sql_add(q, "(SELECT p.id, p.name, p.path, p.sources, CAST(count(*) AS BIGINT) AS "
                     "session_count, CAST(coalesce(sum(s.message_count), 0) AS BIGINT) AS "
                     "message_count, coalesce(min(s.started_at), '') AS first_activity, "
                     "coalesce(max(s.ended_at), '') AS last_activity FROM projects p JOIN "
                     "sessions s ON s.project_id = p.id WHERE ");
    store_sql_add(q, q->d->true_sql);
    store_sql_visible(q, v, "s");
    store_sql_add(q, " GROUP BY p.id, p.name, p.path, p.sources) p");
}

void store_sql_project_where(store_sql *q, const store_project_filter *f)
{
    store_sql_where(q);
    where_find(q, "lower(p.name)", "lower(?)", f->name_contains);
    where_find(q, "',' || p.sources || ','", "',' || ? || ','", f->source);
}

void store_sql_session_where(store_sql *q, const store_session_filter *f)
{
    store_sql_where(q);
    where_project(q, f->project);
    store_sql_where_text(q, "s.source = ?", f->source);
    store_sql_where_text(q, "s.started_at >= ?", f->after);
    store_sql_where_text(q, "s.started_at < ?", f->before);
    store_sql_where_text(q, "s.model = ?", f->model);
    store_sql_where_text(q, "s.git_branch = ?", f->branch);
    if (f->without_project)
        store_sql_add(q, " AND s.project_id = 0");
    store_sql_visible(q, f->view, "s");
}

void store_sql_search_and(store_sql *q, const store_search_filter *f)
{
    where_project(q, f->project);
    store_sql_where_text(q, "s.source = ?", f->source);
    store_sql_where_text(q, "m.role = ?", f->role);
    store_sql_where_text(q, "m.tool_name = ?", f->tool);
    store_sql_where_text(q, "m.`timestamp` >= ?", f->after);
    store_sql_where_text(q, "m.`timestamp` < ?", f->before);
    if (f->has_error > 0)
        store_sql_add(q, " AND m.is_error = 1");
    else if (f->has_error < 0)
        store_sql_add(q, " AND m.is_error = 0");
    store_sql_visible(q, f->view, "s");
}

void store_project_order(store_project_sort sort, const char **order, const char **cmp,
                         store_key_type types[2])
{
    types[0] = STORE_KEY_TEXT;
    types[1] = STORE_KEY_INT;
    switch (sort) {
    case STORE_PROJECTS_NAME:
        *order = "p.name, p.id";
        *cmp = " AND (p.name, p.id) > (?, ?)";
        break;
    case STORE_PROJECTS_SIZE:
        *order = "p.message_count DESC, p.id DESC";
        *cmp = " AND (p.message_count, p.id) < (?, ?)";
        types[0] = STORE_KEY_INT;
        break;
    default:
        *order = "p.last_activity DESC, p.id DESC";
        *cmp = " AND (p.last_activity, p.id) < (?, ?)";
        break;
    }
}

void store_session_order(int newest, const char **order, const char **cmp, store_key_type types[2])
{
    types[0] = STORE_KEY_TEXT;
    types[1] = STORE_KEY_TEXT;
    *order = newest ? "s.started_at DESC, s.session_id DESC" : "s.started_at, s.session_id";
    *cmp = newest ? " AND (s.started_at, s.session_id) < (?, ?)"
                  : " AND (s.started_at, s.session_id) > (?, ?)";
}

/* ---- rows ----------------------------------------------------------- */

int store_sql_col_dup(const store_sql_row *r, int col, int opt, char **out)
{
    const char *t = r->text(r->res, col);
    *out = NULL;
    if (!t)
        return opt ? 0 : ((*out = store_strdup("")) ? 0 : MCPAGE_ENOMEM);
    if (opt && !*t)
        return 0;
    *out = store_strdup(t);
    return *out ? 0 : MCPAGE_ENOMEM;
}

int store_sql_project_row(const store_sql_row *r, store_project_sort sort, store_project *p)
{
    p->id = r->int64(r->res, 0);
    if (store_sql_col_dup(r, 1, 0, &p->name) || store_sql_col_dup(r, 2, 0, &p->path) ||
        store_sql_col_dup(r, 3, 0, &p->sources) || store_sql_col_dup(r, 6, 1, &p->first_activity) ||
        store_sql_col_dup(r, 7, 1, &p->last_activity))
        return MCPAGE_ENOMEM;
    p->session_count = r->int64(r->res, 4);
    p->message_count = r->int64(r->res, 5);
    p->key.nparts = 2;
    if (sort == STORE_PROJECTS_NAME)
        store_key_set_text(&p->key.part[0], p->name);
    else if (sort == STORE_PROJECTS_SIZE)
        store_key_set_int(&p->key.part[0], p->message_count);
    else
        store_key_set_text(&p->key.part[0], r->text(r->res, 7));
    store_key_set_int(&p->key.part[1], p->id);
    return 0;
}

int store_sql_session_row(const store_sql_row *r, store_session *out)
{
    /* The row's strings in one allocation, as store_sql_col_dup would make
       them one by one (a page of sessions made 11 of them a row). */
    static const int cols[] = {0, 1, 3, 4, 5, 6, 7, 8, 10, 11, 12};
    static const bool opt[] = {false, false, true, true, true, true, true, true, true, true, true};
    char **dst[] = {&out->session_id,        &out->source,      &out->project, &out->title,
                    &out->started_at,        &out->ended_at,    &out->model,   &out->git_branch,
                    &out->parent_session_id, &out->source_path, &out->hostname};
    enum { NCOLS = sizeof cols / sizeof cols[0] };
    const char *text[NCOLS];
    size_t len[NCOLS], total = 0;
    for (size_t i = 0; i < NCOLS; i++) {
        text[i] = r->text(r->res, cols[i]);
        if (text[i] == NULL && !opt[i])
            text[i] = "";
        else if (text[i] && opt[i] && !*text[i])
            text[i] = NULL;
        len[i] = text[i] ? strlen(text[i]) : 0;
        total += text[i] ? len[i] + 1 : 0;
    }
    char *block = malloc(total), *p = block;
    if (block == NULL) {
        memset(out, 0, offsetof(store_session, key)); /* nothing for a clear to free */
        out->key.nparts = 0;
        out->strings_ = NULL;
        return MCPAGE_ENOMEM;
    }
    for (size_t i = 0; i < NCOLS; i++) {
        *dst[i] = NULL;
        if (text[i]) {
            memcpy(p, text[i], len[i] + 1);
            *dst[i] = p;
            p += len[i] + 1;
        }
    }
    out->strings_ = block;
    out->project_id = r->int64(r->res, 2);
    out->message_count = r->int64(r->res, 9);
    out->raw_size = r->int64(r->res, 13);
    out->key.nparts = 2;
    store_key_set_text(&out->key.part[0], out->started_at ? out->started_at : "");
    store_key_set_text(&out->key.part[1], out->session_id);
    return 0;
}

int store_sql_message_row(const store_sql_row *r, store_message *m)
{
    m->message_id = r->int64(r->res, 0);
    if (store_sql_col_dup(r, 1, 0, &m->session_id) || store_sql_col_dup(r, 3, 0, &m->role) ||
        store_sql_col_dup(r, 4, 1, &m->timestamp) || store_sql_col_dup(r, 5, 0, &m->text) ||
        store_sql_col_dup(r, 6, 1, &m->tool_name) || store_sql_col_dup(r, 7, 1, &m->tool_input) ||
        store_sql_col_dup(r, 12, 1, &m->tool_call_id))
        return MCPAGE_ENOMEM;
    m->ordinal = r->int64(r->res, 2);
    m->is_error = (int)r->int64(r->res, 8);
    m->line_no = r->int64(r->res, 9);
    m->byte_offset = r->int64(r->res, 10);
    m->byte_length = r->int64(r->res, 11);
    return 0;
}

int store_sql_hit_row(const store_sql_row *r, store_search_sort sort, store_hit *h)
{
    h->message_id = r->int64(r->res, 0);
    if (store_sql_col_dup(r, 1, 0, &h->session_id) || store_sql_col_dup(r, 2, 1, &h->project) ||
        store_sql_col_dup(r, 3, 0, &h->role) || store_sql_col_dup(r, 4, 1, &h->timestamp))
        return MCPAGE_ENOMEM;
    h->ordinal = r->int64(r->res, 6);
    h->rank = r->real(r->res, 7);
    h->key.nparts = 2;
    if (sort == STORE_SEARCH_RELEVANCE) {
        h->key.part[0].type = STORE_KEY_REAL;
        h->key.part[0].r = h->rank;
    } else {
        store_key_set_text(&h->key.part[0], r->text(r->res, 4));
    }
    store_key_set_int(&h->key.part[1],
                      sort == STORE_SEARCH_RELEVANCE ? -h->message_id : h->message_id);
    return 0;
}

/* ---- search grouped by session ----------------------------------- */

const char *store_sql_search_groups_order(const store_search_filter *f)
{
    switch (f->sort) {
    case STORE_SEARCH_NEWEST:
        return "g.ts DESC, g.id DESC";
    case STORE_SEARCH_OLDEST:
        return "g.ts, g.id";
    default:
        return "g.rk, g.id DESC";
    }
}

int store_sql_search_groups(store *s, store_sql *q, const store_search_filter *f,
                            const store_page *pg)
{
    /* The representative: the first of the session's matches in the walk's own order. */
    const char *rep, *cmp, *key, *best;
    int flags;
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    switch (f->sort) {
    case STORE_SEARCH_NEWEST:
        rep = "h.ts DESC, h.id DESC";
        cmp = " AND (g.ts, g.id) < (?, ?)";
        key = "h.ts", best = "json_extract(j.value, '$[1]') AS ts, 0.0 AS rk", flags = 3;
        break;
    case STORE_SEARCH_OLDEST:
        rep = "h.ts, h.id";
        cmp = " AND (g.ts, g.id) > (?, ?)";
        key = "h.ts", best = "json_extract(j.value, '$[1]') AS ts, 0.0 AS rk", flags = 0;
        break;
    default:
        rep = "h.rk, h.id DESC";
        cmp = " AND (g.rk, -g.id) > (CAST(? AS DOUBLE PRECISION), ?)";
        key = "h.rk", best = "'' AS ts, mcpage_f64(json_extract(j.value, '$[1]')) AS rk";
        flags = 2; /* equal ranks: newest */
        types[0] = STORE_KEY_REAL;
        break;
    }
    if (q->d->groups) {
        /* the groups' keys, the page of them, then the page's rows' columns */
        store_sql_add(q, "), g0 AS (SELECT * FROM (SELECT json_extract(j.value, '$[0]') AS sid, ");
        store_sql_add(q, best);
        store_sql_add(q, ", json_extract(j.value, '$[2]') AS id, json_extract(j.value, '$[3]') AS "
                         "n, json_extract(j.value, '$[4]') AS fo, json_extract(j.value, '$[5]') "
                         "AS lo FROM json_each((SELECT ");
        store_sql_add(q, q->d->groups);
        store_sql_add(q, "(h.sid, ");
        store_sql_add(q, key);
        char tail[64];
        (void)snprintf(tail, sizeof tail, ", h.id, h.ordinal, %d) FROM h)) j) g WHERE ", flags);
        store_sql_add(q, tail);
        store_sql_add(q, q->d->true_sql);
    } else {
        store_sql_add(q, "), r AS (SELECT h.*, row_number() OVER (PARTITION BY h.sid ORDER BY ");
        store_sql_add(q, rep);
        store_sql_add(q, ") AS rn, count(*) OVER w AS n, first_value(h.id) OVER w AS fid, "
                         "last_value(h.id) OVER w AS lid FROM h WINDOW w AS (PARTITION BY h.sid "
                         "ORDER BY h.ordinal ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
                         "FOLLOWING)), g AS (SELECT * FROM r g WHERE g.rn = 1");
    }
    int rc = store_sql_after(s, q, pg, cmp, types);
    if (rc < 0)
        return rc;
    store_sql_page(q, store_sql_search_groups_order(f), pg);
    if (q->d->groups)
        store_sql_add(q, "), g AS (SELECT g.id, g.sid, m.ordinal, m.timestamp AS ts, g.rk, g.n, "
                         "(SELECT f.message_id FROM messages f WHERE f.sid = g.sid AND "
                         "f.ordinal = g.fo) AS fid, (SELECT f.message_id FROM messages f WHERE "
                         "f.sid = g.sid AND f.ordinal = g.lo) AS lid FROM g0 g JOIN messages m ON "
                         "m.message_id = g.id");
    store_sql_add(q, ") ");
    return 0;
}

/* ---- raw bytes ------------------------------------------------------ */

int store_raw_take(unsigned char *out, int64_t offset, int64_t end, int64_t *filled, int64_t at,
                   const unsigned char *data, int64_t len)
{
    if (at > *filled)
        return 0; /* a gap: should not happen, stop at what is contiguous */
    int64_t from = *filled - at;
    if (from >= len)
        return 1;
    int64_t take = len - from;
    if (*filled + take > end)
        take = end - *filled;
    memcpy(out + (*filled - offset), data + from, (size_t)take);
    *filled += take;
    return *filled < end;
}

int store_raw_chunk(store *s, const char *id, int64_t at, int64_t codec, const unsigned char *data,
                    int64_t len, const unsigned char **plain, int64_t *plen)
{
    const char *why = "";
    size_t n = 0;
    int rc =
        codec < 0 || codec > 255
            ? MCPAGE_EPARSE
            : store_codec_unpack(&s->codec, (int)codec, data ? data : (const unsigned char *)"",
                                 (size_t)len, STORE_CODEC_OUT_MAX, plain, &n, &why);
    if (rc == MCPAGE_ENOMEM)
        return store_fail(s, rc,
                          "out of memory decoding the raw chunk of session '%s' at offset "
                          "%lld",
                          id, (long long)at);
    if (rc < 0)
        return store_fail(s, MCPAGE_ESTORE,
                          "raw bytes damaged: session '%s', chunk at offset %lld (codec %lld, %lld "
                          "bytes stored): %s; run `mcpage sync --rebuild` to read the session "
                          "again from its transcript",
                          id, (long long)at, (long long)codec, (long long)len,
                          why[0] ? why : "an unknown codec");
    *plen = (int64_t)n;
    return 0;
}
