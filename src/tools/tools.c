/*
 * The tools context (a pool of read-only store handles for the worker
 * threads), helpers every tool file shares, and tools_register_all().
 */
#include "tools/tools.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tools_ctx_init(tools_ctx *ctx, const char *db, const mcpage_pager *pager)
{
    if (ctx == NULL || db == NULL || pager == NULL)
        return MCPAGE_EINVAL;
    memset(ctx, 0, sizeof *ctx);
    if (strlen(db) >= sizeof ctx->db)
        return MCPAGE_ERANGE;
    strcpy(ctx->db, db);
    ctx->pager = pager;
    ctx->query_budget_ms = STORE_QUERY_BUDGET_MS;
    if (pthread_mutex_init(&ctx->mu, NULL) != 0)
        return MCPAGE_ENOMEM;
    return 0;
}

void tools_ctx_free(tools_ctx *ctx)
{
    if (ctx == NULL)
        return;
    for (int i = 0; i < ctx->npool; i++)
        store_close(ctx->pool[i]);
    ctx->npool = 0;
    pthread_mutex_destroy(&ctx->mu);
}

/* A pooled read-only handle, or a new one; NULL with the open error in `err`. */
static store *pool_take(tools_ctx *ctx, char *err, size_t cap)
{
    store *s = NULL;
    pthread_mutex_lock(&ctx->mu);
    if (ctx->npool > 0)
        s = ctx->pool[--ctx->npool];
    pthread_mutex_unlock(&ctx->mu);
    if (s == NULL && store_open_msg(ctx->db, STORE_OPEN_READONLY, &s, err, cap) < 0)
        return NULL;
    return s;
}

store *tools_store_get(tools_ctx *ctx, const mcpage_call *call, mcpage_result *res)
{
    char err[600];
    store *s = pool_take(ctx, err, sizeof err);
    if (s == NULL) {
        /* the store's message names the state and the fix (sync, --rebuild, ...) */
        mcpage_result_errorf(res, "The archive at %s cannot be opened: %s.", ctx->db, err);
        return NULL;
    }
    int rc = tools_viewer_apply(ctx, call, s, err, sizeof err);
    if (rc < 0) {
        mcpage_result_errorf(res, "This archive cannot be read for you: %s.", err);
        tools_store_put(ctx, s);
        return NULL;
    }
    return s;
}

/* A handle for the transport's hooks; NULL with the reason in `why`. */
static store *hook_store(tools_ctx *ctx, char *why, size_t cap)
{
    char err[600];
    store *s = pool_take(ctx, err, sizeof err);
    if (s == NULL)
        (void)snprintf(why, cap, "the archive cannot be opened: %s", err);
    return s;
}

void tools_store_put(tools_ctx *ctx, store *s)
{
    if (s == NULL)
        return;
    store_budget_clear(s);
    (void)store_viewer_set(s, NULL);
    pthread_mutex_lock(&ctx->mu);
    if (ctx->npool < TOOLS_POOL_MAX) {
        ctx->pool[ctx->npool++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&ctx->mu);
    store_close(s);
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tools_check(tools_ctx *ctx, char *why, size_t cap)
{
    store *s = hook_store(ctx, why, cap);
    if (s == NULL)
        return MCPAGE_ESTORE;
    int rc = store_check(s);
    if (rc < 0)
        (void)snprintf(why, cap, "%s", store_errmsg(s));
    tools_store_put(ctx, s);
    return rc;
}

int tools_health(void *ud, char *why, size_t cap)
{
    tools_ctx *ctx = ud;
    store *s = hook_store(ctx, why, cap);
    if (s == NULL)
        return MCPAGE_ESTORE;
    int rc = store_ping(s); /* reconnects a pooled connection a restart broke */
    if (rc < 0)
        (void)snprintf(why, cap, "%s", store_errmsg(s));
    tools_store_put(ctx, s);
    if (rc < 0)
        return rc;
    /* Every page, now and then: damage the ping's one row does not reach (one caller runs it;
       the others answer from what the last run found, remembered by the store) */
    int64_t now = monotonic_ms();
    pthread_mutex_lock(&ctx->mu);
    bool due = ctx->checked_ms == 0 || now - ctx->checked_ms >= TOOLS_HEALTH_CHECK_MS;
    if (due)
        ctx->checked_ms = now;
    pthread_mutex_unlock(&ctx->mu);
    return due ? tools_check(ctx, why, cap) : 0;
}

static int ended_record(void *ud, const uint8_t *key, int64_t until)
{
    char why[700];
    store *s = hook_store(ud, why, sizeof why);
    int rc = s ? store_ended_record(s, key, until) : MCPAGE_ESTORE;
    tools_store_put(ud, s);
    return rc;
}

static int ended_lookup(void *ud, const uint8_t *key, bool *ended)
{
    char why[700];
    store *s = hook_store(ud, why, sizeof why);
    bool yes = false;
    int rc = s ? store_ended_lookup(s, key, &yes) : MCPAGE_ESTORE;
    tools_store_put(ud, s);
    *ended = rc == 0 && yes;
    return rc;
}

static int ended_since(void *ud, int64_t *mark,
                       void (*each)(void *ctx, const uint8_t *key, int64_t until), void *ctx)
{
    char why[700];
    store *s = hook_store(ud, why, sizeof why);
    int rc = s ? store_ended_since(s, mark, each, ctx) : MCPAGE_ESTORE;
    tools_store_put(ud, s);
    return rc;
}

mcpage_http_ended tools_ended_sessions(tools_ctx *ctx)
{
    mcpage_http_ended e = {
        .record = ended_record, .lookup = ended_lookup, .since = ended_since, .ud = ctx};
    return e;
}

int tools_store_error(mcpage_result *res, store *s, int rc, const char *what)
{
    const char *msg = s ? store_errmsg(s) : "";
    return mcpage_result_errorf(res, "Reading %s from the archive failed: %s%s%s", what,
                                mcpage_strerror(rc), msg[0] ? ": " : "", msg);
}

int tools_source_known(const char *name)
{
    static const char *const names[] = {"claude",  "codex",    "gemini",
                                        "copilot", "opencode", "cursor"};
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

const char *tools_arg_str(const json_t *args, const char *name)
{
    const char *v = json_string_value(json_object_get(args, name));
    return v && v[0] ? v : NULL;
}

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static int num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* YYYY-MM-DD, optionally THH:MM, :SS, .fraction and Z. */
bool tools_date_ok(const char *s)
{
    size_t len = strlen(s);
    if (len < 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2))
        return false;
    int mo = num(s + 5, 2), d = num(s + 8, 2);
    if (mo < 1 || mo > 12 || d < 1 || d > 31)
        return false;
    if (len == 10)
        return true;
    const char *p = s + 10;
    if (*p != 'T' || !digits(p + 1, 2) || p[3] != ':' || !digits(p + 4, 2))
        return false;
    if (num(p + 1, 2) > 23 || num(p + 4, 2) > 59)
        return false;
    p += 6;
    if (*p == ':') {
        if (!digits(p + 1, 2) || num(p + 1, 2) > 60)
            return false;
        p += 3;
        if (*p == '.') {
            p++;
            if (*p < '0' || *p > '9')
                return false;
            while (*p >= '0' && *p <= '9')
                p++;
        }
    }
    if (*p == 'Z')
        p++;
    return *p == '\0';
}

bool tools_check_date(const char *tool, const json_t *args, const char *name, mcpage_result *res)
{
    const json_t *v = json_object_get(args, name);
    if (v == NULL || json_is_null(v))
        return true;
    if (json_is_string(v) && (json_string_length(v) == 0 || tools_date_ok(json_string_value(v))))
        return true;
    char ex[64];
    snprintf(ex, sizeof ex, "%s=\"2025-01-31\"", name);
    mcpage_reject_argument(res, tool, name, v,
                           "a UTC date YYYY-MM-DD or timestamp YYYY-MM-DDTHH:MM:SSZ (no time zone "
                           "offset)",
                           ex);
    return false;
}

int tools_key_to_parts(const store_key *k, mcpage_keypart *parts)
{
    for (int i = 0; i < k->nparts; i++) {
        const store_key_part *p = &k->part[i];
        memset(&parts[i], 0, sizeof parts[i]);
        if (p->type == STORE_KEY_TEXT) {
            parts[i].is_str = true;
            parts[i].s = p->s;
            parts[i].len = strlen(p->s);
        } else if (p->type == STORE_KEY_REAL) {
            /* The exact bits: the keyset compares the same double again. */
            int64_t bits;
            memcpy(&bits, &p->r, sizeof bits);
            parts[i].i = bits;
        } else {
            parts[i].i = p->i;
        }
    }
    return k->nparts;
}

bool tools_key_from_window(const mcpage_list_window *w, const store_key_type *types, int ntypes,
                           store_key *out)
{
    memset(out, 0, sizeof *out);
    if (!w->resume)
        return true;
    if (w->nparts != ntypes || ntypes > STORE_KEY_PARTS)
        return false;
    for (int i = 0; i < ntypes; i++) {
        const mcpage_keypart *p = &w->after[i];
        store_key_part *q = &out->part[i];
        q->type = types[i];
        if (types[i] == STORE_KEY_TEXT) {
            if (!p->is_str || p->len > STORE_KEY_TEXT_MAX)
                return false;
            memcpy(q->s, p->s, p->len);
            q->s[p->len] = '\0';
        } else if (p->is_str) {
            return false;
        } else if (types[i] == STORE_KEY_REAL) {
            memcpy(&q->r, &p->i, sizeof q->r);
        } else {
            q->i = p->i;
        }
    }
    out->nparts = ntypes;
    return true;
}

void tools_session_uri(const char *session_id, char *buf, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(buf, cap, "mcpage://sessions/");
    for (const unsigned char *p = (const unsigned char *)session_id; *p && o + 4 < cap; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    buf[o] = '\0';
}

int tools_session_link(mcpage_result *res, const store_session *ses)
{
    char uri[700], desc[400];
    tools_session_uri(ses->session_id, uri, sizeof uri);
    snprintf(desc, sizeof desc,
             "The whole transcript of session %s (%lld messages) as markdown, the same "
             "rendering as read_session.",
             ses->session_id, (long long)ses->message_count);
    mcpage_resource_link link = {
        .uri = uri,
        .name = ses->session_id,
        .title = ses->title,
        .description = desc,
        .mime_type = "text/markdown",
        .size = -1,
    };
    return mcpage_result_add_resource_link(res, &link);
}

/*
 * A JSON string of the n bytes of a C string (no NUL among them), or
 * NULL when they are not UTF-8, as json_string answers. jansson checks
 * UTF-8 character by character (a tenth of a first page's instructions
 * went there); page_is_text accepts exactly what it accepts (no overlong
 * form, surrogate or code point past U+10FFFF) and skips ASCII eight
 * bytes at a time.
 */
static json_t *jstring(const char *s, size_t n)
{
    return page_is_text(s, n) ? json_stringn_nocheck(s, n) : NULL;
}

json_t *tools_jstr(const char *s)
{
    return s ? jstring(s, strlen(s)) : json_null();
}

/* A stored timestamp's text at the minute (into buf) or as it is; its length in *len. */
static const char *time_text(const char *ts, char buf[18], size_t *len)
{
    size_t n = strlen(ts);
    /* YYYY-MM-DDTHH:MM followed by seconds (and a fraction) and Z. */
    if (n > 17 && ts[4] == '-' && ts[10] == 'T' && ts[13] == ':' && ts[16] == ':' &&
        ts[n - 1] == 'Z') {
        memcpy(buf, ts, 16);
        buf[16] = 'Z';
        buf[17] = '\0';
        *len = 17;
        return buf;
    }
    *len = n;
    return ts;
}

json_t *tools_jtime(const char *ts)
{
    if (ts == NULL)
        return json_null();
    char buf[18];
    size_t n;
    const char *text = time_text(ts, buf, &n);
    return jstring(text, n);
}

void tools_cell_str(list_cell *cells, size_t *n, const char *name, const char *s)
{
    /* A string that is not text is left out by the page, as
       json_object_set_new leaves out tools_jstr's NULL. */
    cells[(*n)++] = s ? (list_cell){.name = name, .kind = LIST_CELL_STR, .str = s, .len = strlen(s)}
                      : (list_cell){.name = name, .kind = LIST_CELL_NULL};
}

void tools_cell_time(list_cell *cells, size_t *n, const char *name, const char *ts, char buf[18])
{
    size_t len = 0;
    tools_cell_str(cells, n, name, ts ? time_text(ts, buf, &len) : NULL);
}

void tools_cell_int(list_cell *cells, size_t *n, const char *name, int64_t v)
{
    cells[(*n)++] = (list_cell){.name = name, .kind = LIST_CELL_INT, .num = v};
}

json_t *tools_read_with_message(const json_t *record, const char *field, void *ud)
{
    (void)field;
    (void)ud;
    const json_t *id = json_object_get(record, "message_id");
    if (!json_is_integer(id))
        return NULL;
    return json_pack("{s:s, s:{s:O}}", "tool", "read_message", "arguments", "message_id", id);
}

const char *tools_budget_words(const mcpage_pager *p, char *buf, size_t cap)
{
    const mcpage_pager_config *c = mcpage_pager_settings(p);
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP];
    (void)snprintf(buf, cap, "a %s-token budget (max_tokens up to %s)",
                   page_fmt_int(c->default_tokens, d), page_fmt_int(c->max_tokens, m));
    return buf;
}

int tools_add_windowed(mcpage_server *srv, const mcpage_tool *t, json_t *window)
{
    json_t *in = t->input_schema ? json_loads(t->input_schema, 0, NULL) : NULL;
    json_t *props = json_object_get(in, "properties");
    int rc = MCPAGE_ENOMEM;
    if (!json_is_object(props))
        rc = MCPAGE_EPARSE;
    else if (json_is_object(window) && json_object_update(props, window) == 0)
        rc = 0;
    char *text = rc == 0 ? json_dumps(in, JSON_COMPACT) : NULL;
    json_decref(window);
    json_decref(in);
    if (rc == 0 && text == NULL)
        rc = MCPAGE_ENOMEM;
    if (rc == 0) {
        mcpage_tool merged = *t;
        merged.input_schema = text;
        rc = mcpage_server_add_tool(srv, &merged);
    }
    free(text);
    return rc;
}

int tools_reject_message_id(mcpage_result *res, const char *tool, const json_t *got)
{
    return mcpage_reject_argument(
        res, tool, "message_id", got,
        "the message_id of an archived message (search_conversations gives them)",
        "message_id=<a message_id from search_conversations>");
}

int tools_register_all(mcpage_server *srv, tools_ctx *ctx)
{
    int (*const regs[])(mcpage_server *, tools_ctx *) = {
        tools_list_projects_register,
        tools_list_sessions_register,
        tools_search_conversations_register,
        tools_read_session_register,
        tools_read_message_register,
        tools_read_raw_register,
        tools_activity_map_register,
        tools_get_session_summary_register,
        tools_resources_register,
        tools_export_session_register,
        tools_usage_report_register,
        tools_file_history_register,
        tools_app_register,
    };
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
        int rc = regs[i](srv, ctx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int tools_list_add(mcpage_list *pg, json_t *rec, const store_key *key)
{
    mcpage_keypart parts[STORE_KEY_PARTS];
    int np = tools_key_to_parts(key, parts);
    return mcpage_list_add(pg, rec, parts, np);
}

int tools_list_add_cells(mcpage_list *pg, const list_cell *cells, size_t n, const store_key *key)
{
    mcpage_keypart parts[STORE_KEY_PARTS];
    int np = tools_key_to_parts(key, parts);
    return mcpage__list_add_cells(pg, cells, n, parts, np);
}

/*
 * The remembered total of a walk at generation `gen`, if any. A total
 * depends only on the tool, its non-window arguments and the store's
 * contents, which the generation names: a broad first page (hundreds of
 * milliseconds of counting on a large archive) is counted once per
 * process and generation, not once per client.
 */
static bool count_recall(tools_ctx *ctx, const void *spec, const uint8_t *fp, int64_t gen,
                         int64_t *total)
{
    bool hit = false;
    pthread_mutex_lock(&ctx->mu);
    for (size_t i = 0; i < TOOLS_COUNT_CACHE && !hit; i++) {
        tools_count *c = &ctx->counts[i];
        if (c->spec == spec && c->generation == gen &&
            memcmp(c->fp, fp, MCPAGE_FINGERPRINT_LEN) == 0) {
            c->used = ++ctx->clock;
            *total = c->total;
            hit = true;
        }
    }
    pthread_mutex_unlock(&ctx->mu);
    return hit;
}

/* Remembers a total, in place of the least recently used one. */
static void count_remember(tools_ctx *ctx, const void *spec, const uint8_t *fp, int64_t gen,
                           int64_t total)
{
    pthread_mutex_lock(&ctx->mu);
    tools_count *victim = &ctx->counts[0];
    for (size_t i = 1; i < TOOLS_COUNT_CACHE; i++)
        if (ctx->counts[i].used < victim->used)
            victim = &ctx->counts[i];
    victim->spec = spec;
    memcpy(victim->fp, fp, MCPAGE_FINGERPRINT_LEN);
    victim->generation = gen;
    victim->total = total;
    victim->used = ++ctx->clock;
    pthread_mutex_unlock(&ctx->mu);
}

/* The store's budget check: the client cancelled the call. */
static int call_cancelled(void *ud)
{
    return mcpage_call_cancelled(ud);
}

int tools_list_run(tools_ctx *ctx, const tools_list_walk *walk, mcpage_result *res)
{
    mcpage_list *pg = mcpage_call_list(walk->call);
    if (pg == NULL)
        return MCPAGE_ESTATE; /* registered without its window: a bug */
    store *s = tools_store_get(ctx, walk->call, res);
    if (s == NULL)
        return 0;
    store_budget_set(s, ctx->query_budget_ms, call_cancelled, walk->call);
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    store_key after;
    int64_t gen = 0, total = w->total;
    int rc;
    if (!tools_key_from_window(w, walk->key_types, walk->nkeys, &after)) {
        rc = MCPAGE_EPARSE;
        goto fail;
    }
    store_page page = {.after = w->resume ? &after : NULL,
                       .offset = w->offset,
                       .limit = w->fetch,
                       .shown = w->limit};
    if ((rc = store_generation(s, &gen)) < 0)
        goto fail;

    /* The exact total is counted once per (arguments, viewer, generation) and rides in the
       cursor; a cursor's total is not taken from a token-holder's cursor (another viewer
       could replay it), only from the count remembered for this viewer. */
    uint8_t fp[MCPAGE_FINGERPRINT_LEN];
    memcpy(fp, w->fingerprint, sizeof fp);
    tools_viewer_mix(walk->call, s, fp);
    if (memcmp(fp, w->fingerprint, sizeof fp) != 0)
        total = -1;
    if ((total < 0 || w->generation != gen) && !count_recall(ctx, walk->spec, fp, gen, &total)) {
        if ((rc = walk->count(s, walk->ud, &total)) < 0)
            goto fail;
        count_remember(ctx, walk->spec, fp, gen, total);
    }
    if (walk->share && (rc = mcpage_list_share(pg, walk->share)) < 0)
        goto fail;
    mcpage_list_set_total(pg, total, gen);

    if ((rc = walk->fetch(s, walk->ud, &page, pg)) < 0)
        goto fail;
    tools_store_put(ctx, s);
    return 0;
fail:
    if (walk->on_error == NULL || !walk->on_error(s, walk->ud, rc, res))
        tools_store_error(res, s, rc, walk->what);
    tools_store_put(ctx, s);
    return 0;
}

int tools_session_find(store *s, const char *tool, const json_t *args, store_session *out,
                       mcpage_result *res)
{
    int rc = store_session_get(s, tools_arg_str(args, "session_id"), out);
    if (rc == MCPAGE_ENOTFOUND)
        mcpage_reject_argument(res, tool, "session_id", json_object_get(args, "session_id"),
                               "the id of an archived session (list_sessions shows them)",
                               "session_id=\"<a session_id from list_sessions>\"");
    else if (rc < 0)
        tools_store_error(res, s, rc, "the session");
    return rc;
}
