/*
 * The store interface: opens the backend named by a spec, checks the
 * arguments every backend would have to check, and dispatches through the
 * backend's table of operations. Also the free functions of result rows,
 * which are backend-neutral.
 */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store_backend.h"
#include "store/store_sql.h"

int store_fail(store *s, int status, const char *fmt, ...)
{
    if (s) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
        va_end(ap);
    }
    return status;
}

char *store_strdup(const char *src)
{
    if (!src)
        return NULL;
    size_t n = strlen(src);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, src, n + 1);
    return d;
}

double store_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

void store_budget_set(store *s, int64_t budget_ms, store_stop_fn stop, void *ud)
{
    if (!s)
        return;
    s->budget_ms = budget_ms > 0 ? budget_ms : 0;
    s->deadline_us = budget_ms > 0 ? store_now_us() + (double)budget_ms * 1e3 : 0;
    s->stop = stop;
    s->stop_ud = ud;
    s->stopped = 0;
}

void store_budget_clear(store *s)
{
    store_budget_set(s, 0, NULL, NULL);
}

int store_budget_check(const store *s)
{
    if (s->stop && s->stop(s->stop_ud))
        return MCPAGE_ECANCELED;
    if (s->deadline_us > 0 && store_now_us() > s->deadline_us)
        return MCPAGE_ERANGE;
    return 0;
}

int store_budget_fail(store *s, int status)
{
    if (status == MCPAGE_ECANCELED)
        return store_fail(s, status, "stopped: the caller cancelled the request");
    return store_fail(s, MCPAGE_ERANGE,
                      "stopped after %lld ms, the work one request may do; narrow the request",
                      (long long)s->budget_ms);
}

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A failed call the budget stopped answers the budget's status (a
 * backend may report the failed statement as a plain store error). */
static int budget_status(store *s, int rc)
{
    if (rc < 0 && s->stopped)
        return store_budget_fail(s, s->stopped);
    return rc;
}

/* 0 while the budget allows more work, else its failure (checked as a
 * call starts: a statement too short for the progress handler still stops). */
static int budget_gate(store *s)
{
    int rc = store_budget_check(s);
    if (rc < 0)
        return store_budget_fail(s, s->stopped = rc);
    return 0;
}

/* A term holds something to search for (the backends drop the others). */
static int term_has_word(const char *start, const char *end)
{
    for (const unsigned char *c = (const unsigned char *)start; c < (const unsigned char *)end; c++)
        if ((*c >= '0' && *c <= '9') || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z') || *c == '_' ||
            *c >= 0x80)
            return 1;
    return 0;
}

int store_query_normalize(store *s, const char *query, char *out, size_t cap)
{
    /* where each kept term starts in `out`, and its length */
    static _Thread_local uint16_t at[STORE_QUERY_MAX], len[STORE_QUERY_MAX];
    const char *p = query, *start, *end;
    int prefix, terms = 0, prefixes = 0;
    size_t o = 0, kept = 0;
    out[0] = 0;
    for (;;) {
        while (blank(*p))
            p++;
        int quoted = *p == '"';
        if (!store_query_term(&p, &start, &end, &prefix))
            break;
        /* The term as the backends read it again: a phrase keeps its
         * quotes (so `"c*"` stays a phrase), a prefix its star. */
        size_t n = (size_t)(end - start) + (quoted ? 2 : prefix ? 1 : 0);
        if (o + n + 2 > cap || o + n > UINT16_MAX || kept == STORE_QUERY_MAX)
            return store_fail(s, MCPAGE_ERANGE, "search query longer than %d bytes",
                              STORE_QUERY_MAX);
        char *t = out + o + (o > 0); /* written in place, kept only when new */
        snprintf(t, n + 1, "%s%.*s%s", quoted ? "\"" : "", (int)(end - start), start,
                 quoted   ? "\""
                 : prefix ? "*"
                          : "");
        /* Seen already: `c* c* c*` asks for `c*` once. */
        int seen = 0;
        for (size_t i = 0; i < kept && !seen; i++)
            seen = len[i] == n && memcmp(out + at[i], t, n) == 0;
        if (seen) {
            out[o] = 0;
            continue;
        }
        if (term_has_word(start, end)) {
            terms++;
            prefixes += prefix;
        }
        if (terms > STORE_QUERY_TERMS_MAX)
            return store_fail(s, MCPAGE_EINVAL,
                              "more than %d different words and phrases; keep the %d that "
                              "matter most",
                              STORE_QUERY_TERMS_MAX, STORE_QUERY_TERMS_MAX);
        if (prefixes > STORE_QUERY_PREFIXES_MAX)
            return store_fail(s, MCPAGE_EINVAL,
                              "more than %d different prefix terms (word*); spell out the "
                              "others in full",
                              STORE_QUERY_PREFIXES_MAX);
        if (o > 0)
            out[o++] = ' ';
        at[kept] = (uint16_t)o;
        len[kept++] = (uint16_t)n;
        o += n;
        out[o] = 0;
    }
    return 0;
}

int store_spec_is_url(const char *spec)
{
    return spec &&
           (strncmp(spec, "postgres://", 11) == 0 || strncmp(spec, "postgresql://", 13) == 0);
}

int store_open(const char *spec, int flags, store **out)
{
    return store_open_msg(spec, flags, out, NULL, 0);
}

int store_open_msg(const char *spec, int flags, store **out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (!spec || !*spec || !out)
        return MCPAGE_EINVAL;
    *out = NULL;
    store *s = calloc(1, sizeof *s);
    if (!s)
        return MCPAGE_ENOMEM;
    s->writable = (flags & STORE_OPEN_WRITE) != 0;
    int rc;
    if (store_spec_is_url(spec)) {
        rc = store_pg_open(s, spec, flags);
    } else {
        rc = store_sqlite_open(s, spec, flags);
    }
    if (rc < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s", s->errmsg[0] ? s->errmsg : mcpage_strerror(rc));
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void store_close(store *s)
{
    if (!s)
        return;
    if (s->ops)
        s->ops->close(s);
    store_codec_free(&s->codec);
    free(s);
}

const char *store_errmsg(const store *s)
{
    return s ? s->errmsg : "no store";
}

const char *store_backend_name(const store *s)
{
    return s && s->ops ? s->ops->name : "none";
}

static int check_page(store *s, const store_page *pg)
{
    if (!pg)
        return store_fail(s, MCPAGE_EINVAL, "no page");
    if (pg->limit < 1 || pg->limit > STORE_LIMIT_MAX)
        return store_fail(s, MCPAGE_EINVAL, "limit %lld outside 1..%d", (long long)pg->limit,
                          STORE_LIMIT_MAX);
    if (pg->offset < 0)
        return store_fail(s, MCPAGE_EINVAL, "negative offset");
    if (pg->after && (pg->after->nparts < 0 || pg->after->nparts > STORE_KEY_PARTS))
        return store_fail(s, MCPAGE_EINVAL, "bad keyset position");
    return 0;
}

#define NEED(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return store_fail(s, MCPAGE_EINVAL, "invalid argument: %s", #cond);                    \
    } while (0)

#define NEED_WRITER()                                                                              \
    do {                                                                                           \
        if (!s->writable)                                                                          \
            return store_fail(s, MCPAGE_ESTATE, "store opened read-only");                         \
    } while (0)

void store_spec_display(const char *spec, char *out, size_t n)
{
    if (!n)
        return;
    snprintf(out, n, "%s", spec ? spec : "");
    if (!store_spec_is_url(out))
        return;
    /* scheme://user:password@host... : hide what lies between ':' and '@' */
    char *auth = strstr(out, "://") + 3;
    char *at = strchr(auth, '@');
    char *slash = strchr(auth, '/');
    if (!at || (slash && slash < at))
        return;
    char *colon = memchr(auth, ':', (size_t)(at - auth));
    if (!colon)
        return;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", at);
    snprintf(colon, n - (size_t)(colon - out), ":***%s", rest);
}

void store_pool_drain(void)
{
    store_pg_pool_drain();
}

int store_ping(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    return s->ops->ping(s);
}

int store_check(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    return s->ops->check ? s->ops->check(s) : 0;
}

int store_second_thread(void)
{
    const char *env = getenv("MCPAGE_SYNC_THREADS");
    if (env && strcmp(env, "1") == 0)
        return 0;
    return (env && strcmp(env, "2") == 0) || sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

int store_tidy(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    if (!s->writable)
        return 0;
    return s->ops->tidy ? budget_status(s, s->ops->tidy(s)) : 0;
}

int store_ended_record(store *s, const uint8_t *key, int64_t until)
{
    if (!s || !key)
        return MCPAGE_EINVAL;
    return s->ops->ended_record ? s->ops->ended_record(s, key, until) : 0;
}

int store_ended_lookup(store *s, const uint8_t *key, bool *ended)
{
    if (!s || !key || !ended)
        return MCPAGE_EINVAL;
    *ended = false;
    return s->ops->ended_lookup ? s->ops->ended_lookup(s, key, ended) : 0;
}

int store_ended_since(store *s, int64_t *mark, store_ended_fn each, void *ctx)
{
    if (!s || !mark || !each)
        return MCPAGE_EINVAL;
    return s->ops->ended_since ? s->ops->ended_since(s, mark, each, ctx) : 0;
}

int store_session_lock(store *s, const char *session_id)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id);
    return s->ops->session_lock(s, session_id);
}

int store_session_trylock(store *s, const char *session_id)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id);
    return s->ops->session_trylock ? s->ops->session_trylock(s, session_id) : 0;
}

int store_session_unlock(store *s, const char *session_id)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id);
    return s->ops->session_unlock(s, session_id);
}

/* ---- who reads ------------------------------------------------------ */

int store_owner_valid(const char *owner)
{
    size_t n = owner ? strlen(owner) : 0;
    if (n == 0 || n > STORE_OWNER_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)owner[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-' && c != '+' && c != '@')
            return 0;
    }
    return 1;
}

/* `src` into dst (cap bytes), invalid owner bytes made '_'. */
static void owner_part(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    for (; src && *src && o + 1 < cap; src++) {
        unsigned char c = (unsigned char)*src;
        dst[o++] = isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+' ? (char)c : '_';
    }
    dst[o] = 0;
}

void store_owner_default(char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return;
    char login[64] = "", host[64] = "";
    struct passwd *pw = getpwuid(geteuid());
    const char *name = pw && pw->pw_name && *pw->pw_name ? pw->pw_name : getenv("USER");
    owner_part(login, sizeof login, name && *name ? name : "user");
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    owner_part(host, sizeof host, h);
    snprintf(buf, cap, "%s@%s", login, host);
}

/* A session's owner as held_by_other reads it. */
typedef struct owner_row {
    int found;
    char owner[STORE_OWNER_MAX + 1]; /* "" for none */
} owner_row;

static int owner_each(void *ctx, const struct store_sql_row *row)
{
    owner_row *o = ctx;
    const char *v = row->text(row->res, 0);
    o->found = 1;
    snprintf(o->owner, sizeof o->owner, "%s", v ? v : "");
    return 0;
}

/* 1 when session `id` is stored with an owner other than `owner`, else 0. */
static int held_by_other(store *s, const char *owner, const char *id)
{
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT owner FROM sessions WHERE session_id = ?");
    store_sql_text(&q, id);
    owner_row o = {0};
    int rc = s->ops->sql_rows(s, &q, owner_each, &o);
    if (rc < 0)
        return rc;
    return o.found && o.owner[0] && strcmp(o.owner, owner) != 0;
}

int store_session_key(store *s, const char *owner, const char *id, char *out)
{
    if (!s || !id || !out || strlen(id) > STORE_ID_MAX)
        return MCPAGE_EINVAL;
    snprintf(out, STORE_ID_MAX + 1, "%s", id);
    if (!owner || !*owner)
        return 0;
    if (!store_owner_valid(owner))
        return store_fail(s, MCPAGE_EINVAL, "owner '%.*s' is not a valid name", STORE_OWNER_MAX,
                          owner);
    int rc = held_by_other(s, owner, id);
    if (rc <= 0)
        return rc;
    /* id@owner; an id too long for it: its first bytes, then a hash of it */
    size_t n = strlen(id), o = strlen(owner), room = STORE_ID_MAX - 1 - o;
    char tail[18] = "";
    if (n > room) {
        uint64_t h = 14695981039346656037ULL;
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
        snprintf(tail, sizeof tail, "-%016llx", (unsigned long long)h);
        n = room - strlen(tail);
    }
    size_t t = strlen(tail);
    memcpy(out, id, n);
    memcpy(out + n, tail, t);
    out[n + t] = '@';
    memcpy(out + n + t + 1, owner, o + 1);
    rc = held_by_other(s, owner, out);
    if (rc > 0)
        return store_fail(s, MCPAGE_EINVAL,
                          "sessions '%s' and '%s' are both held by other owners than '%s'", id, out,
                          owner);
    return rc;
}

/* Collects the ids a query returns. */
typedef struct view_ids {
    int64_t *ids;
    size_t n, cap;
} view_ids;

static int view_id_each(void *ctx, const struct store_sql_row *row)
{
    view_ids *v = ctx;
    if (v->n < v->cap)
        v->ids[v->n] = row->int64(row->res, 0);
    v->n++;
    return 0;
}

int store_viewer_set(store *s, const store_viewer *v)
{
    if (!s)
        return MCPAGE_EINVAL;
    s->viewing = 0;
    memset(&s->view, 0, sizeof s->view);
    if (!v)
        return 0;
    if (v->nowners < 1 || v->nowners > STORE_VIEW_OWNERS_MAX || !v->owners)
        return store_fail(s, MCPAGE_EINVAL, "a viewer needs 1 to %d owners", STORE_VIEW_OWNERS_MAX);
    if (v->nprojects > STORE_VIEW_PROJECTS_MAX || (v->nprojects && !v->projects))
        return store_fail(s, MCPAGE_EINVAL, "a viewer holds at most %d shared projects",
                          STORE_VIEW_PROJECTS_MAX);
    struct store_view *w = &s->view;
    size_t o = 0;
    w->owner_list[o++] = '|';
    for (size_t i = 0; i < v->nowners; i++) {
        if (!store_owner_valid(v->owners[i]))
            return store_fail(s, MCPAGE_EINVAL,
                              "owner '%.*s' is not a name of letters, digits and . _ - + @",
                              STORE_OWNER_MAX, v->owners[i] ? v->owners[i] : "");
        snprintf(w->owners[i], sizeof w->owners[i], "%s", v->owners[i]);
        size_t len = strlen(v->owners[i]);
        memcpy(w->owner_list + o, v->owners[i], len);
        o += len;
        w->owner_list[o++] = '|';
    }
    w->owner_list[o] = 0;
    w->nowners = v->nowners;
    for (size_t i = 0; i < v->nprojects; i++) {
        if (!v->projects[i] || !*v->projects[i])
            continue;
        store_sql q = {.d = s->ops->dialect};
        store_sql_add(&q, "SELECT p.id FROM projects p WHERE p.name = ? OR p.path = ?");
        store_sql_text(&q, v->projects[i]);
        store_sql_text(&q, v->projects[i]);
        int64_t got[STORE_VIEW_PROJECTS_MAX];
        view_ids ids = {got, 0, STORE_VIEW_PROJECTS_MAX};
        int rc = s->ops->sql_rows(s, &q, view_id_each, &ids);
        if (rc < 0) {
            memset(&s->view, 0, sizeof s->view);
            return rc;
        }
        for (size_t k = 0; k < ids.n && k < ids.cap && w->npids < STORE_VIEW_PROJECTS_MAX; k++)
            w->pids[w->npids++] = got[k];
    }
    s->viewing = 1;
    return 0;
}

/* 0 when the handle's viewer sees session `id` (or there is no viewer),
 * else MCPAGE_ENOTFOUND as for a session that does not exist. */
static int view_session(store *s, const char *id)
{
    if (!s->viewing)
        return 0;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT 1 FROM sessions s WHERE s.session_id = ?");
    store_sql_text(&q, id);
    store_sql_visible(&q, &s->view, "s");
    int64_t one[1];
    view_ids ids = {one, 0, 1};
    int rc = s->ops->sql_rows(s, &q, view_id_each, &ids);
    if (rc < 0)
        return rc;
    return ids.n ? 0 : store_fail(s, MCPAGE_ENOTFOUND, "no session '%s'", id);
}

static int view_message(store *s, int64_t id)
{
    if (!s->viewing)
        return 0;
    store_sql q = {.d = s->ops->dialect};
    store_sql_add(&q, "SELECT 1 FROM messages m JOIN sessions s ON s.sid = m.sid WHERE "
                      "m.message_id = ?");
    store_sql_int(&q, id);
    store_sql_visible(&q, &s->view, "s");
    int64_t one[1];
    view_ids ids = {one, 0, 1};
    int rc = s->ops->sql_rows(s, &q, view_id_each, &ids);
    if (rc < 0)
        return rc;
    return ids.n ? 0 : store_fail(s, MCPAGE_ENOTFOUND, "no message %lld", (long long)id);
}

int store_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                        store_projects *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = check_page(s, pg);
    if (rc < 0)
        return rc;
    store_project_filter g = f ? *f : (store_project_filter){0};
    g.view = store_view_of(s);
    if ((rc = budget_gate(s)) < 0)
        return rc;
    return budget_status(s, s->ops->projects_list(s, &g, pg, out));
}

int store_projects_count(store *s, const store_project_filter *f, int64_t *n)
{
    if (!s || !n)
        return MCPAGE_EINVAL;
    store_project_filter g = f ? *f : (store_project_filter){0};
    g.view = store_view_of(s);
    int rc = budget_gate(s);
    if (rc < 0)
        return rc;
    return budget_status(s, s->ops->projects_count(s, &g, n));
}

int store_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                        store_sessions *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = check_page(s, pg);
    if (rc < 0)
        return rc;
    store_session_filter g = f ? *f : (store_session_filter){0};
    g.view = store_view_of(s);
    if ((rc = budget_gate(s)) < 0)
        return rc;
    return budget_status(s, s->ops->sessions_list(s, &g, pg, out));
}

int store_sessions_count(store *s, const store_session_filter *f, int64_t *n)
{
    if (!s || !n)
        return MCPAGE_EINVAL;
    store_session_filter g = f ? *f : (store_session_filter){0};
    g.view = store_view_of(s);
    int rc = budget_gate(s);
    if (rc < 0)
        return rc;
    return budget_status(s, s->ops->sessions_count(s, &g, n));
}

int store_session_get(store *s, const char *session_id, store_session *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(session_id);
    int seen = view_session(s, session_id);
    if (seen < 0)
        return seen;
    return s->ops->session_get(s, session_id, out);
}

int store_messages_from(store *s, const char *session_id, int64_t from_ordinal, int64_t limit,
                        store_messages *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(session_id);
    NEED(limit >= 1 && limit <= STORE_LIMIT_MAX);
    if (from_ordinal < 0)
        from_ordinal = 0;
    int seen = view_session(s, session_id);
    if (seen < 0)
        return seen;
    return s->ops->messages_from(s, session_id, from_ordinal, limit, out);
}

int store_message_get(store *s, int64_t message_id, store_message *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    int seen = view_message(s, message_id);
    if (seen < 0)
        return seen;
    return s->ops->message_get(s, message_id, out);
}

int store_message_text_lines(store *s, const char *session_id, int64_t before_ordinal,
                             store_text_lines *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(session_id);
    int seen = view_session(s, session_id);
    if (seen < 0)
        return seen;
    return s->ops->text_lines(s, session_id, before_ordinal, out);
}

void store_text_lines_free(store_text_lines *l)
{
    if (!l)
        return;
    free(l->ordinal);
    free(l->lines);
    memset(l, 0, sizeof *l);
}

int store_raw_read(store *s, const char *session_id, int64_t offset, int64_t length,
                   unsigned char **buf, size_t *n, int64_t *total)
{
    if (!s || !buf || !n || !total)
        return MCPAGE_EINVAL;
    *buf = NULL;
    *n = 0;
    *total = 0;
    NEED(session_id);
    NEED(offset >= 0);
    NEED(length >= 0 && length <= (int64_t)STORE_RAW_READ_MAX);
    int seen = view_session(s, session_id);
    if (seen < 0)
        return seen;
    return s->ops->raw_read(s, session_id, offset, length, buf, n, total);
}

int store_session_summary_get(store *s, const char *session_id, store_session_summary *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(session_id);
    int seen = view_session(s, session_id);
    if (seen < 0)
        return seen;
    return s->ops->session_summary(s, session_id, out);
}

int store_search(store *s, const store_search_filter *f, const store_page *pg, store_hits *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(f && f->query);
    NEED(strlen(f->query) <= STORE_QUERY_MAX);
    int rc = check_page(s, pg);
    if (rc < 0)
        return rc;
    if (f->sort == STORE_SEARCH_RELEVANCE && store_page_keyset(pg) &&
        store_key_relevance_old(pg->after))
        return store_fail(s, MCPAGE_EINVAL,
                          "keyset position of the relevance order before 0.2.0 (equal ranks "
                          "oldest first): start the walk again");
    char query[2 * STORE_QUERY_MAX + 8];
    if ((rc = store_query_normalize(s, f->query, query, sizeof query)) < 0)
        return rc;
    if ((rc = budget_gate(s)) < 0)
        return rc;
    store_search_filter g = *f;
    g.query = query;
    g.view = store_view_of(s);
    return budget_status(s, s->ops->search(s, &g, pg, out));
}

int store_key_relevance_old(const store_key *k)
{
    return k && k->nparts == 2 && k->part[1].type == STORE_KEY_INT && k->part[1].i > 0;
}

int store_search_count(store *s, const store_search_filter *f, int64_t *n)
{
    if (!s || !n)
        return MCPAGE_EINVAL;
    NEED(f && f->query);
    NEED(strlen(f->query) <= STORE_QUERY_MAX);
    char query[2 * STORE_QUERY_MAX + 8];
    int rc = store_query_normalize(s, f->query, query, sizeof query);
    if (rc < 0)
        return rc;
    if ((rc = budget_gate(s)) < 0)
        return rc;
    store_search_filter g = *f;
    g.query = query;
    g.view = store_view_of(s);
    return budget_status(s, s->ops->search_count(s, &g, n));
}

int store_activity_get(store *s, const store_activity_filter *f, size_t max_rows,
                       store_activity *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(max_rows >= 1 && max_rows <= 100000);
    store_activity_filter g = f ? *f : (store_activity_filter){0};
    g.view = store_view_of(s);
    return s->ops->activity(s, &g, max_rows, out);
}

int store_stats_get(store *s, store_stats *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    return s->ops->stats(s, out);
}

int store_generation(store *s, int64_t *gen)
{
    if (!s || !gen)
        return MCPAGE_EINVAL;
    int rc = budget_gate(s);
    if (rc < 0)
        return rc;
    return budget_status(s, s->ops->generation(s, gen));
}

int store_begin(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    return s->ops->begin(s);
}

int store_commit(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    return s->ops->commit(s);
}

int store_rollback(store *s)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    return s->ops->rollback(s);
}

int store_project_ensure(store *s, const char *path, const char *name, int64_t *id)
{
    if (!s || !id)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(path && name);
    return s->ops->project_ensure(s, path, name, id);
}

/* The parent folder a project's name is told apart by: its path without
 * the trailing "/name" (or the whole path when the name is not its last
 * component), without leading and trailing slashes. *n its length. */
static const char *name_parent(const char *path, const char *name, size_t *n)
{
    size_t pl = strlen(path), nl = strlen(name);
    while (pl > 1 && path[pl - 1] == '/')
        pl--;
    if (pl > nl && path[pl - nl - 1] == '/' && strncmp(path + pl - nl, name, nl) == 0)
        pl -= nl + 1;
    while (pl > 0 && path[pl - 1] == '/')
        pl--;
    if (pl == nl && strncmp(path, name, nl) == 0)
        pl = 0; /* the path is the name: no parent to tell it by */
    const char *p = path;
    while (pl > 0 && *p == '/') {
        p++;
        pl--;
    }
    *n = pl;
    return p;
}

void store_project_name_try(const char *path, const char *name, int attempt, char *buf, size_t cap)
{
    size_t n;
    const char *parent = name_parent(path, name, &n);
    size_t comps = n > 0;
    for (size_t i = 0; i < n; i++)
        comps += parent[i] == '/';
    if (attempt == 0 || n == 0) {
        if (attempt == 0)
            (void)snprintf(buf, cap, "%s", name);
        else
            (void)snprintf(buf, cap, "%s %d", name, attempt + 1);
        return;
    }
    /* attempt k shows the last k+1 folders (at least two, the example's
       "srv/b"), up to the whole parent; past that, numbers */
    size_t want = (comps < 2 ? comps : 2) + (size_t)attempt - 1, extra = 0;
    if (want > comps) {
        extra = want - comps;
        want = comps;
    }
    const char *tail = parent + n;
    for (size_t k = 0; k < want && tail > parent;) {
        tail--;
        if (*tail == '/' && ++k == want) {
            tail++;
            break;
        }
    }
    if (extra)
        (void)snprintf(buf, cap, "%s (%.*s) %zu", name, (int)(parent + n - tail), tail, extra + 1);
    else
        (void)snprintf(buf, cap, "%s (%.*s)", name, (int)(parent + n - tail), tail);
}

int store_session_put(store *s, const store_session_meta *m)
{
    if (!s || !m)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(m->session_id && strlen(m->session_id) <= STORE_ID_MAX);
    return s->ops->session_put(s, m);
}

int store_session_state_get(store *s, const char *session_id, store_session_state *st)
{
    if (!s || !st)
        return MCPAGE_EINVAL;
    memset(st, 0, sizeof *st);
    NEED(session_id);
    return s->ops->session_state(s, session_id, st);
}

int store_session_reset(store *s, const char *session_id)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id);
    int rc = store_usage_forget(s, session_id);
    if (rc == 0)
        rc = store_edits_forget(s, session_id);
    if (rc < 0)
        return rc;
    return s->ops->session_reset(s, session_id);
}

int store_message_add(store *s, const store_message *m, int64_t *id)
{
    return store_message_add_packed(s, m, NULL, id);
}

int store_packs_texts(store *s)
{
    return s && s->ops->packs_texts;
}

/* ---- index tokens made ahead -------------------------------------------- */

struct store_tokenizer {
    const store_ops *ops;
    void *impl;
};

store_tokenizer *store_tokenizer_new(store *s)
{
    if (!s || !s->ops->tokenizer_new)
        return NULL;
    store_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ops = s->ops;
    if (!(t->impl = s->ops->tokenizer_new(s))) {
        free(t);
        return NULL;
    }
    return t;
}

void store_tokenizer_free(store_tokenizer *t)
{
    if (!t)
        return;
    t->ops->tokenizer_free(t->impl);
    free(t);
}

void store_tokens_free(store_tokens *k)
{
    if (!k)
        return;
    free(k->v);
    free(k->bytes);
    free(k);
}

int store_text_tokens(store_tokenizer *t, const char *text, size_t n, store_tokens **out)
{
    *out = NULL;
    if (!t || (!text && n))
        return MCPAGE_EINVAL;
    store_tokens *k = calloc(1, sizeof *k);
    if (!k)
        return MCPAGE_ENOMEM;
    k->text = text;
    k->n = n;
    int rc = t->ops->text_tokens(t->impl, text, n, k);
    if (rc < 0) {
        store_tokens_free(k);
        return rc;
    }
    *out = k;
    return 0;
}

int store_tokens_add(store_tokens *k, int flags, const char *tok, int ntok, int from, int to)
{
    if (ntok < 0)
        return MCPAGE_EINVAL;
    if (k->count == k->cap) {
        size_t ncap = k->cap ? k->cap * 2 : 256;
        store_token *nv = realloc(k->v, ncap * sizeof *nv);
        if (!nv)
            return MCPAGE_ENOMEM;
        k->v = nv;
        k->cap = ncap;
    }
    if (k->len + (size_t)ntok > k->bcap) {
        size_t ncap = k->bcap ? k->bcap : 1024;
        while (ncap < k->len + (size_t)ntok)
            ncap *= 2;
        char *nb = realloc(k->bytes, ncap);
        if (!nb)
            return MCPAGE_ENOMEM;
        k->bytes = nb;
        k->bcap = ncap;
    }
    if (ntok)
        memcpy(k->bytes + k->len, tok, (size_t)ntok);
    k->v[k->count++] =
        (store_token){.flags = flags, .from = from, .to = to, .ntok = ntok, .off = k->len};
    k->len += (size_t)ntok;
    return 0;
}

int store_message_add_packed(store *s, const store_message *m, const store_text_packed *packed,
                             int64_t *id)
{
    if (!s || !m || !id)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(m->session_id && m->role);
    NEED(!packed || (s->ops->packs_texts && (packed->bytes || packed->n == 0)));
    return s->ops->message_add(s, m, packed, id);
}

int store_raw_append(store *s, const char *session_id, const unsigned char *data, size_t n,
                     int64_t lines)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id && (data || n == 0) && lines >= 0);
    if (n == 0)
        return s->ops->raw_append(s, session_id, NULL, 0, lines);
    for (size_t done = 0; done < n;) { /* a chunk at a time: the codec's buffer is reused */
        size_t take = n - done < STORE_RAW_CHUNK ? n - done : STORE_RAW_CHUNK;
        store_raw_packed c = {.raw_n = take};
        if (store_codec_pack(&s->codec, data + done, take, &c.codec, &c.bytes, &c.n) < 0)
            return store_fail(s, MCPAGE_ENOMEM, "out of memory compressing raw bytes");
        done += take;
        int rc = s->ops->raw_append(s, session_id, &c, 1, done == n ? lines : 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int store_raw_append_packed(store *s, const char *session_id, const store_raw_packed *v, size_t nv,
                            int64_t lines)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id && (v || nv == 0) && lines >= 0);
    for (size_t i = 0; i < nv; i++)
        NEED(v[i].raw_n <= STORE_RAW_CHUNK && (v[i].bytes || v[i].n == 0));
    return s->ops->raw_append(s, session_id, v, nv, lines);
}

int store_tool_call_name(store *s, const char *session_id, const char *call_id, char **name)
{
    if (!s || !name)
        return MCPAGE_EINVAL;
    *name = NULL;
    NEED(session_id && call_id);
    return s->ops->tool_call_name(s, session_id, call_id, name);
}

int store_session_refresh(store *s, const char *session_id)
{
    if (!s)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(session_id);
    return s->ops->session_refresh(s, session_id);
}

int store_source_get(store *s, const char *hostname, const char *path, store_source *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    NEED(path);
    return s->ops->source_get(s, hostname ? hostname : "", path, out);
}

int store_source_put(store *s, const store_source *src)
{
    if (!s || !src)
        return MCPAGE_EINVAL;
    NEED_WRITER();
    NEED(src->path && src->session_id);
    return s->ops->source_put(s, src);
}

/* ---- freeing rows --------------------------------------------------- */

static void project_clear(store_project *p)
{
    free(p->name);
    free(p->path);
    free(p->sources);
    free(p->first_activity);
    free(p->last_activity);
}

void store_projects_free(store_projects *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++)
        project_clear(&l->rows[i]);
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}

/* Frees what a row owns, leaving its fields as they are. */
static void session_free_strings(store_session *r)
{
    if (r->strings_) {
        free(r->strings_); /* a row read by store_sql_session_row: one allocation */
        return;
    }
    free(r->session_id);
    free(r->source);
    free(r->project);
    free(r->title);
    free(r->started_at);
    free(r->ended_at);
    free(r->model);
    free(r->git_branch);
    free(r->parent_session_id);
    free(r->source_path);
    free(r->hostname);
}

void store_session_clear(store_session *r)
{
    if (!r)
        return;
    session_free_strings(r);
    memset(r, 0, sizeof *r);
}

void store_sessions_free(store_sessions *l)
{
    if (!l)
        return;
    /* The rows go with the array: their strings are freed, not cleared
       (a row is about 1 KiB, its key). */
    for (size_t i = 0; i < l->count; i++)
        session_free_strings(&l->rows[i]);
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}

void store_message_clear(store_message *m)
{
    if (!m)
        return;
    free(m->session_id);
    free(m->role);
    free(m->timestamp);
    free(m->text);
    free(m->tool_name);
    free(m->tool_input);
    free(m->tool_call_id);
    memset(m, 0, sizeof *m);
}

void store_messages_free(store_messages *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++)
        store_message_clear(&l->rows[i]);
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}

static void counts_free(store_count *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].name);
    free(c);
}

void store_session_summary_clear(store_session_summary *sum)
{
    if (!sum)
        return;
    store_session_clear(&sum->session);
    counts_free(sum->roles, sum->role_count);
    counts_free(sum->tools, sum->tool_count);
    free(sum->first_prompt);
    memset(sum, 0, sizeof *sum);
}

void store_hits_free(store_hits *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        free(l->rows[i].session_id);
        free(l->rows[i].project);
        free(l->rows[i].role);
        free(l->rows[i].timestamp);
        free(l->rows[i].snippet);
    }
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
}

void store_activity_free(store_activity *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->count; i++) {
        free(a->rows[i].project);
        free(a->rows[i].bucket);
    }
    free(a->rows);
    a->rows = NULL;
    a->count = 0;
}

int store_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out)
{
    if (!s || !out)
        return MCPAGE_EINVAL;
    memset(out, 0, sizeof *out);
    return s->ops->sources_all(s, hostname ? hostname : "", max_rows, out);
}

void store_sources_free(store_sources *l)
{
    if (!l)
        return;
    for (size_t i = 0; !l->text && i < l->count; i++)
        store_source_clear(&l->rows[i]);
    for (void *b = l->text, *next; b; b = next) { /* each block begins with the next's address */
        memcpy(&next, b, sizeof next);
        free(b);
    }
    free(l->rows);
    l->rows = NULL;
    l->count = 0;
    l->text = NULL;
}

void store_source_clear(store_source *src)
{
    if (!src)
        return;
    free(src->hostname);
    free(src->path);
    free(src->session_id);
    memset(src, 0, sizeof *src);
}

int store_key_check(store *s, const store_key *k, const store_key_type *types, int n)
{
    if (k->nparts != n)
        return store_fail(s, MCPAGE_EINVAL, "keyset position has %d parts, this list needs %d",
                          k->nparts, n);
    for (int i = 0; i < n; i++)
        if (k->part[i].type != types[i])
            return store_fail(s, MCPAGE_EINVAL, "keyset position part %d has the wrong type", i);
    return 0;
}

void store_key_set_text(store_key_part *p, const char *v)
{
    p->type = STORE_KEY_TEXT;
    size_t n = v ? strnlen(v, sizeof p->s - 1) : 0; /* cut as snprintf would */
    memcpy(p->s, v ? v : "", n);
    p->s[n] = '\0';
}

void store_key_set_int(store_key_part *p, int64_t v)
{
    p->type = STORE_KEY_INT;
    p->i = v;
}

int store_page_keyset(const store_page *pg)
{
    return pg->after && pg->after->nparts > 0;
}

int store_query_term(const char **p, const char **start, const char **end, int *prefix)
{
    int quoted;
    return store_query_term_quoted(p, start, end, prefix, &quoted);
}

int store_query_term_quoted(const char **p, const char **start, const char **end, int *prefix,
                            int *quoted)
{
    const char *c = *p;
    while (blank(*c))
        c++;
    if (!*c) {
        *p = c;
        return 0;
    }
    *prefix = 0;
    *quoted = *c == '"';
    if (*c == '"') {
        *start = ++c;
        while (*c && *c != '"')
            c++;
        *end = c;
        if (*c == '"')
            c++;
    } else {
        *start = c;
        while (*c && !blank(*c) && *c != '"')
            c++;
        *end = c;
        if (*end - *start > 1 && (*end)[-1] == '*') {
            *prefix = 1;
            (*end)--;
        }
    }
    *p = c;
    return 1;
}
