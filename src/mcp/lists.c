/*
 * The four catalog lists (tools/list, resources/list,
 * resources/templates/list, prompts/list), paged with the signed cursor
 * codec of <mcpage/cursor.h>: the cursor's tool is the method name and
 * its fingerprint that of empty arguments. Registered items resume by
 * index, checked against the key of the last item shown; provider
 * resources resume from the provider's own keyset position. Also
 * completion/complete, which shares nothing but the file's brevity.
 */
#include <mcpage/server.h>

#include <stdio.h>
#include <string.h>

#include "mcp/server_internal.h"
#include "page/alloc.h"

/*
 * Copies a cursor remedy written for tools (which name their resume field
 * next_cursor) into `out`, naming the lists' field nextCursor instead.
 */
static void list_remedy(const char *text, char *out, size_t cap)
{
    static const char tool_field[] = "next_cursor";
    size_t o = 0;
    while (*text && o + 1 < cap) {
        if (strncmp(text, tool_field, sizeof tool_field - 1) == 0 && o + 11 < cap) {
            memcpy(out + o, "nextCursor", 10);
            o += 10;
            text += sizeof tool_field - 1;
        } else {
            out[o++] = *text++;
        }
    }
    out[o] = '\0';
}

/* Reads params.cursor; returns false after answering an error. */
static bool read_cursor(mcpage_session *s, const json_t *id, const json_t *params,
                        const char *method, mcpage_cursor *c, bool *have)
{
    *have = false;
    const json_t *cur = json_object_get(params, "cursor");
    if (cur == NULL || json_is_null(cur))
        return true;
    if (!json_is_string(cur)) {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "Invalid params: cursor must be a string, the nextCursor of the previous "
                       "page",
                       NULL);
        return false;
    }
    mcpage_cursor_status st =
        mcpage_cursor_decode(s->srv->keyring, method, s->srv->empty_fp, json_string_value(cur),
                             json_string_length(cur), c);
    if (st != MCPAGE_CURSOR_VALID) {
        char msg[600];
        int n = snprintf(msg, sizeof msg, "Invalid cursor for %s: ", method);
        list_remedy(mcpage_cursor_status_text(st), msg + n, sizeof msg - (size_t)n);
        mcp_send_error(s, id, RPC_INVALID_PARAMS, msg,
                       json_pack("{s:s}", "reason", mcpage_cursor_status_name(st)));
        return false;
    }
    *have = true;
    return true;
}

/* Writes "nextCursor" for cursor `c`; on failure poisons the writer. */
static void write_cursor(jw *w, mcpage_session *s, const char *method, mcpage_cursor *c)
{
    char buf[MCPAGE_CURSOR_MAX_LEN + 1];
    c->total = -1;
    int n = mcpage_cursor_encode(s->srv->keyring, method, s->srv->empty_fp, c, buf, sizeof buf);
    if (n < 0) {
        w->err = n;
        return;
    }
    jw_key(w, "nextCursor");
    jw_stringn(w, buf, (size_t)n);
}

static void kv_opt(jw *w, const char *key, const char *v)
{
    if (v)
        jw_kv_string(w, key, v);
}

/* The name of item i of a registry vector, for index cursors. */
typedef const char *(*key_at_fn)(const mcpage_server *srv, size_t i);

/*
 * Where an index-paged list starts. The cursor holds [next index, key
 * of the last item shown]; when that key has moved, resume after it.
 */
static bool index_start(mcpage_session *s, const json_t *id, const json_t *params,
                        const char *method, size_t n, key_at_fn key_at, size_t *start)
{
    mcpage_cursor c;
    bool have;
    *start = 0;
    if (!read_cursor(s, id, params, method, &c, &have))
        return false;
    if (!have)
        return true;
    if (c.nparts != 2 || c.parts[0].is_str || !c.parts[1].is_str || c.parts[0].i < 0) {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "Invalid cursor: it does not hold a list position; drop it to start over",
                       NULL);
        return false;
    }
    size_t next = (size_t)c.parts[0].i;
    const char *last = c.parts[1].s;
    size_t llen = c.parts[1].len;
    if (next >= 1 && next <= n) {
        const char *k = key_at(s->srv, next - 1);
        if (strlen(k) == llen && memcmp(k, last, llen) == 0) {
            *start = next;
            return true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *k = key_at(s->srv, i);
        if (strlen(k) == llen && memcmp(k, last, llen) == 0) {
            *start = i + 1;
            return true;
        }
    }
    *start = next < n ? next : n;
    return true;
}

static void index_cursor(jw *w, mcpage_session *s, const char *method, size_t next,
                         const char *last)
{
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    c.nparts = 2;
    c.parts[0].i = (int64_t)next;
    c.parts[1].is_str = true;
    c.parts[1].s = last;
    c.parts[1].len = strlen(last);
    if (c.parts[1].len > MCPAGE_CURSOR_MAX_STR_BYTES)
        c.parts[1].len = 0; /* too long to carry: resume by index alone */
    c.offset = (int64_t)next;
    write_cursor(w, s, method, &c);
}

static const char *tool_key(const mcpage_server *srv, size_t i)
{
    return srv->tools[i].name;
}

static const char *template_key(const mcpage_server *srv, size_t i)
{
    return srv->templates[i].uri_template;
}

static const char *prompt_key(const mcpage_server *srv, size_t i)
{
    return srv->prompts[i].name;
}

/* The revision of the request being answered (lists run on the receiving thread). */
static const mcp_revision *session_rev(mcpage_session *s)
{
    return s->req && s->req->rev ? s->req->rev : mcp_version_latest();
}

/* Writes the members of the object `obj` (may be NULL) into the open object, but `skip`. */
static void write_members(jw *w, const json_t *obj, const char *skip)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        if (skip && strcmp(key, skip) == 0)
            continue;
        jw_key(w, key);
        jw_json(w, v);
    }
}

static void write_hints(jw *w, const mcp_tool *t)
{
    static const char *const names[4] = {"readOnlyHint", "destructiveHint", "idempotentHint",
                                         "openWorldHint"};
    bool any = false;
    for (int i = 0; i < 4; i++)
        any = any || t->hints[i] != MCPAGE_HINT_UNSET;
    if (!any)
        return;
    jw_key(w, "annotations");
    jw_object_begin(w);
    for (int i = 0; i < 4; i++)
        if (t->hints[i] != MCPAGE_HINT_UNSET)
            jw_kv_bool(w, names[i], t->hints[i] == MCPAGE_HINT_TRUE);
    jw_object_end(w);
}

void mcp_list_tools(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    size_t start;
    if (!index_start(s, id, params, "tools/list", srv->ntools, tool_key, &start))
        return;
    const mcp_revision *rev = session_rev(s);
    size_t end =
        start + srv->cfg.page_size < srv->ntools ? start + srv->cfg.page_size : srv->ntools;
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "tools");
    jw_array_begin(&w);
    for (size_t i = start; i < end; i++) {
        const mcp_tool *t = &srv->tools[i];
        jw_object_begin(&w);
        jw_kv_string(&w, "name", t->name);
        if (rev->titles)
            kv_opt(&w, "title", t->title);
        kv_opt(&w, "description", t->description);
        jw_key(&w, "inputSchema");
        jw_json(&w, t->input_schema);
        if (t->output_schema && rev->structured_content) {
            jw_key(&w, "outputSchema");
            jw_json(&w, t->output_schema);
        }
        write_hints(&w, t);
        if (t->max_result_chars > 0 || t->meta) {
            jw_key(&w, "_meta");
            jw_object_begin(&w);
            if (t->max_result_chars > 0)
                jw_kv_int(&w, "anthropic/maxResultSizeChars", t->max_result_chars);
            write_members(&w, t->meta, "anthropic/maxResultSizeChars");
            jw_object_end(&w);
        }
        jw_object_end(&w);
    }
    jw_array_end(&w);
    if (end < srv->ntools)
        index_cursor(&w, s, "tools/list", end, srv->tools[end - 1].name);
    jw_object_end(&w);
    mcp_cache cache = mcp_catalog_cache(srv);
    mcp_send_finish(s, &w, id, &cache);
}

void mcp_list_templates(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    size_t start;
    if (!index_start(s, id, params, "resources/templates/list", srv->ntemplates, template_key,
                     &start))
        return;
    const mcp_revision *rev = session_rev(s);
    size_t end =
        start + srv->cfg.page_size < srv->ntemplates ? start + srv->cfg.page_size : srv->ntemplates;
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "resourceTemplates");
    jw_array_begin(&w);
    for (size_t i = start; i < end; i++) {
        const mcp_template *t = &srv->templates[i];
        jw_object_begin(&w);
        jw_kv_string(&w, "uriTemplate", t->uri_template);
        jw_kv_string(&w, "name", t->name);
        if (rev->titles)
            kv_opt(&w, "title", t->title);
        kv_opt(&w, "description", t->description);
        kv_opt(&w, "mimeType", t->mime_type);
        jw_object_end(&w);
    }
    jw_array_end(&w);
    if (end < srv->ntemplates)
        index_cursor(&w, s, "resources/templates/list", end, srv->templates[end - 1].uri_template);
    jw_object_end(&w);
    mcp_cache cache = mcp_catalog_cache(srv);
    mcp_send_finish(s, &w, id, &cache);
}

void mcp_list_prompts(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    size_t start;
    if (!index_start(s, id, params, "prompts/list", srv->nprompts, prompt_key, &start))
        return;
    const mcp_revision *rev = session_rev(s);
    size_t end =
        start + srv->cfg.page_size < srv->nprompts ? start + srv->cfg.page_size : srv->nprompts;
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "prompts");
    jw_array_begin(&w);
    for (size_t i = start; i < end; i++) {
        const mcp_prompt *p = &srv->prompts[i];
        jw_object_begin(&w);
        jw_kv_string(&w, "name", p->name);
        if (rev->titles)
            kv_opt(&w, "title", p->title);
        kv_opt(&w, "description", p->description);
        jw_key(&w, "arguments");
        jw_array_begin(&w);
        for (int a = 0; a < p->nargs; a++) {
            jw_object_begin(&w);
            jw_kv_string(&w, "name", p->args[a].name);
            if (rev->titles)
                kv_opt(&w, "title", p->args[a].title);
            kv_opt(&w, "description", p->args[a].description);
            jw_kv_bool(&w, "required", p->args[a].required);
            jw_object_end(&w);
        }
        jw_array_end(&w);
        jw_object_end(&w);
    }
    jw_array_end(&w);
    if (end < srv->nprompts)
        index_cursor(&w, s, "prompts/list", end, srv->prompts[end - 1].name);
    jw_object_end(&w);
    mcp_cache cache = mcp_catalog_cache(srv);
    mcp_send_finish(s, &w, id, &cache);
}

/* ------------------------------------------------------------ resources/list */

typedef struct page_item {
    char *json;  /* the serialized Resource object */
    size_t len;  /* its length */
    char *key;   /* the provider's resume key */
    size_t klen; /* its length */
} page_item;

struct mcpage_resource_page {
    const mcp_revision *rev; /* decides whether titles are written */
    size_t limit;            /* most items the provider may add */
    size_t n;                /* items added */
    page_item *items;        /* limit slots */
};

static void write_resource(jw *w, const mcp_revision *rev, const char *uri, const char *name,
                           const char *title, const char *description, const char *mime,
                           int64_t size, const json_t *meta)
{
    jw_object_begin(w);
    jw_kv_string(w, "uri", uri);
    jw_kv_string(w, "name", name);
    if (rev->titles)
        kv_opt(w, "title", title);
    kv_opt(w, "description", description);
    kv_opt(w, "mimeType", mime);
    if (size >= 0)
        jw_kv_int(w, "size", size);
    if (meta) {
        jw_key(w, "_meta");
        jw_json(w, meta);
    }
    jw_object_end(w);
}

int mcpage_resource_page_add(mcpage_resource_page *page, const mcpage_resource *res,
                             const char *key)
{
    if (res == NULL || res->uri == NULL || res->name == NULL)
        return MCPAGE_EINVAL;
    if (page->n >= page->limit)
        return MCPAGE_ERANGE;
    if (key == NULL)
        key = res->uri;
    size_t klen = strlen(key);
    if (klen == 0 || klen > MCPAGE_CURSOR_MAX_STR_BYTES)
        return MCPAGE_ERANGE;
    jw w;
    jw_init(&w, 1 << 20);
    write_resource(&w, page->rev, res->uri, res->name, res->title, res->description, res->mime_type,
                   res->size, NULL);
    if (w.err) {
        int err = w.err;
        jw_free(&w);
        return err;
    }
    page_item *it = &page->items[page->n];
    it->key = mcpage__strndup(key, klen);
    if (it->key == NULL) {
        jw_free(&w);
        return MCPAGE_ENOMEM;
    }
    it->klen = klen;
    it->json = jw_take(&w, &it->len);
    page->n++;
    return 0;
}

static void page_clear(mcpage_resource_page *page)
{
    for (size_t i = 0; i < page->n; i++) {
        mcpage__free(page->items[i].json);
        mcpage__free(page->items[i].key);
    }
    page->n = 0;
}

/* Where a resources/list page starts: section 0 is the registered resources, section k the k-th
 * provider; `index` into section 0, or the key after which a provider resumes. */
typedef struct resources_pos {
    size_t section;    /* 0, or the provider's number from 1 */
    size_t index;      /* the first registered resource of the page (section 0) */
    const char *after; /* the provider's key to resume after, or NULL: from its first */
    size_t after_len;  /* bytes of `after` */
} resources_pos;

/* Reads the position out of the request's cursor; false after answering a bad one. */
static bool resources_start(mcpage_session *s, const json_t *id, const json_t *params,
                            mcpage_cursor *c, resources_pos *pos)
{
    bool have;
    if (!read_cursor(s, id, params, "resources/list", c, &have))
        return false;
    *pos = (resources_pos){0, 0, NULL, 0};
    if (!have)
        return true;
    if (c->nparts != 2 || c->parts[0].is_str || c->parts[0].i < 0 ||
        (size_t)c->parts[0].i > s->srv->nproviders || (c->parts[0].i == 0 && c->parts[1].is_str)) {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "Invalid cursor: it does not hold a resources/list position; drop it to "
                       "start over",
                       NULL);
        return false;
    }
    pos->section = (size_t)c->parts[0].i;
    if (pos->section == 0) {
        pos->index = c->parts[1].i < 0 ? 0 : (size_t)c->parts[1].i;
    } else if (c->parts[1].is_str && c->parts[1].len > 0) {
        pos->after = c->parts[1].s;
        pos->after_len = c->parts[1].len;
    }
    return true;
}

/* Writes registered resources from pos->index while room lasts; true when some are left (their
 * position in `next`), else moves pos on to the first provider. */
static bool write_registered(jw *w, const mcpage_server *srv, const mcp_revision *rev,
                             resources_pos *pos, size_t *room, mcpage_cursor *next)
{
    size_t index = pos->index;
    for (; index<srv->nresources && * room> 0; index++, (*room)--) {
        const mcp_resource *r = &srv->resources[index];
        write_resource(w, rev, r->uri, r->name, r->title, r->description, r->mime_type, r->size,
                       r->meta);
    }
    if (index < srv->nresources) {
        next->nparts = 2;
        next->parts[1].i = (int64_t)index;
        return true;
    }
    pos->section = 1;
    return false;
}

/*
 * Writes the providers' resources from pos while room lasts; sets *more (and `next`, whose key is
 * copied into keybuf) when some are left. Returns a provider's failure, else 0.
 */
static int write_provided(jw *w, const mcpage_server *srv, mcpage_resource_page *page,
                          resources_pos *pos, size_t room, mcpage_cursor *next, char *keybuf,
                          bool *more)
{
    for (; pos->section >= 1 && pos->section <= srv->nproviders; pos->section++) {
        next->nparts = 2;
        next->parts[0].i = (int64_t)pos->section;
        if (room == 0) {
            *more = true; /* resume at the start of this provider */
            return 0;
        }

        const mcpage_resource_provider *p = &srv->providers[pos->section - 1];
        page->limit = room + 1;
        page_clear(page);
        int rc = p->list(p->user_data, pos->after, pos->after_len, room + 1, page);
        if (rc != 0)
            return rc;
        size_t shown = page->n < room ? page->n : room;
        for (size_t i = 0; i < shown; i++)
            jw_raw_value(w, page->items[i].json, page->items[i].len);
        room -= shown;

        if (page->n > shown) {
            *more = true;
            memcpy(keybuf, page->items[shown - 1].key, page->items[shown - 1].klen);
            next->parts[1].is_str = true;
            next->parts[1].s = keybuf;
            next->parts[1].len = page->items[shown - 1].klen;
            return 0;
        }
        pos->after = NULL;
        pos->after_len = 0;
    }
    next->nparts = 0;
    return 0;
}

void mcp_list_resources(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    mcpage_cursor c;
    resources_pos pos;
    if (!resources_start(s, id, params, &c, &pos))
        return;
    size_t room = srv->cfg.page_size;
    mcpage_resource_page page = {session_rev(s), 0, 0, NULL};
    page.items = mcpage__calloc(room + 1, sizeof *page.items);
    if (page.items == NULL) {
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }

    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "resources");
    jw_array_begin(&w);
    mcpage_cursor next;
    memset(&next, 0, sizeof next);
    char keybuf[MCPAGE_CURSOR_MAX_STR_BYTES];
    bool more = pos.section == 0 && write_registered(&w, srv, page.rev, &pos, &room, &next);
    int prc = more ? 0 : write_provided(&w, srv, &page, &pos, room, &next, keybuf, &more);
    page_clear(&page);
    mcpage__free(page.items);
    if (prc != 0) {
        jw_free(&w);
        char msg[200];
        (void)snprintf(msg, sizeof msg, "Internal error: listing resources failed: %s",
                       mcpage_strerror(prc));
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, msg, NULL);
        return;
    }

    jw_array_end(&w);
    if (more)
        write_cursor(&w, s, "resources/list", &next);
    jw_object_end(&w);
    mcp_cache cache = mcp_resource_cache(srv);
    mcp_send_finish(s, &w, id, &cache);
}

/* ------------------------------------------------------------ completion */

/* The most values one completion result may carry (spec: 100). */
#define COMPLETION_MAX_VALUES 100

struct mcpage_completion {
    json_t *values; /* at most 100 strings */
    size_t total;   /* values offered, shown or not */
};

int mcpage_completion_add(mcpage_completion *c, const char *value)
{
    if (value == NULL)
        return MCPAGE_EINVAL;
    c->total++;
    if (json_array_size(c->values) >= COMPLETION_MAX_VALUES)
        return 0;
    return json_array_append_new(c->values, json_string(value)) == 0 ? 0 : MCPAGE_ENOMEM;
}

void mcp_complete(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcpage_server *srv = s->srv;
    const json_t *ref = json_object_get(params, "ref");
    const json_t *arg = json_object_get(params, "argument");
    const char *type = json_string_value(json_object_get(ref, "type"));
    const char *aname = json_string_value(json_object_get(arg, "name"));
    const char *avalue = json_string_value(json_object_get(arg, "value"));
    if (type == NULL || aname == NULL || avalue == NULL) {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "completion/complete requires params.ref {type, name or uri} and "
                       "params.argument {name, value}",
                       NULL);
        return;
    }
    mcpage_completion_request req = {0};
    req.argument = aname;
    req.value = avalue;
    const json_t *ctx = json_object_get(json_object_get(params, "context"), "arguments");
    req.context = json_is_object(ctx) ? ctx : NULL;
    bool known = false;
    if (strcmp(type, "ref/prompt") == 0) {
        req.is_prompt = true;
        req.ref = json_string_value(json_object_get(ref, "name"));
        for (size_t i = 0; req.ref && i < srv->nprompts && !known; i++)
            known = strcmp(srv->prompts[i].name, req.ref) == 0;
    } else if (strcmp(type, "ref/resource") == 0) {
        req.ref = json_string_value(json_object_get(ref, "uri"));
        for (size_t i = 0; req.ref && i < srv->ntemplates && !known; i++)
            known = strcmp(srv->templates[i].uri_template, req.ref) == 0;
    } else {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "completion/complete: ref.type must be \"ref/prompt\" or \"ref/resource\"",
                       NULL);
        return;
    }
    if (!known) {
        char msg[300];
        (void)snprintf(msg, sizeof msg, "completion/complete: no %s named '%.200s'",
                       req.is_prompt ? "prompt" : "resource template", req.ref ? req.ref : "");
        mcp_send_error(s, id, RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    mcpage_completion out = {json_array(), 0};
    int rc = out.values ? srv->complete(srv->complete_ud, &req, &out) : MCPAGE_ENOMEM;
    if (rc != 0) {
        json_decref(out.values);
        char msg[200];
        (void)snprintf(msg, sizeof msg, "Internal error: completion failed: %s",
                       mcpage_strerror(rc));
        mcp_send_error(s, id, RPC_INTERNAL_ERROR, msg, NULL);
        return;
    }
    size_t shown = json_array_size(out.values);
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    jw_key(&w, "completion");
    jw_object_begin(&w);
    jw_key(&w, "values");
    jw_json(&w, out.values);
    jw_kv_int(&w, "total", (int64_t)out.total);
    jw_kv_bool(&w, "hasMore", out.total > shown);
    jw_object_end(&w);
    jw_object_end(&w);
    mcp_send_finish(s, &w, id, NULL);
    json_decref(out.values);
}
