/*
 * The server object: its configuration, the registry of tools,
 * resources, templates and prompts, and the worker pool that runs calls.
 * The registry is written only before the first session exists and read
 * without locks afterwards; the pool queue is guarded by srv->lock.
 */
#include <mcpage/server.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mcp/schema.h"
#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/dbuf.h"
#include "page/page_internal.h"

void mcpage_server_config_init(mcpage_server_config *cfg, const char *name, const char *version)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = name;
    cfg->version = version;
    cfg->page_size = MCPAGE_DEFAULT_PAGE_SIZE;
    cfg->max_message = MCPAGE_DEFAULT_MAX_MESSAGE;
    cfg->max_depth = MCPAGE_DEFAULT_MAX_DEPTH;
    cfg->max_inflight = MCPAGE_DEFAULT_MAX_INFLIGHT;
    cfg->workers = MCPAGE_DEFAULT_WORKERS;
    cfg->log_level = MCPAGE_LOG_INFO;
    cfg->catalog_ttl_ms = MCPAGE_DEFAULT_CATALOG_TTL_MS;
    cfg->resource_ttl_ms = 0;
#ifdef NDEBUG
    cfg->validate_output = false;
#else
    cfg->validate_output = true;
#endif
}

/* Duplicates an optional string; false only when allocation failed. */
static bool dup_opt(char **dst, const char *src)
{
    *dst = NULL;
    if (src == NULL)
        return true;
    *dst = mcpage__strdup(src);
    return *dst != NULL;
}

int mcpage_server_new(const mcpage_server_config *cfg, mcpage_server **out)
{
    *out = NULL;
    if (cfg == NULL || cfg->name == NULL || cfg->version == NULL || cfg->page_size == 0 ||
        cfg->page_size > MCP_MAX_PAGE_SIZE || cfg->max_message < MCP_MIN_MESSAGE ||
        cfg->max_depth < 1 || cfg->max_depth > MCP_MAX_DEPTH || cfg->max_inflight == 0 ||
        cfg->workers < 1 || cfg->workers > MCP_MAX_WORKERS || cfg->catalog_ttl_ms < 0 ||
        cfg->resource_ttl_ms < 0)
        return MCPAGE_EINVAL;
    mcpage_server *srv = mcpage__calloc(1, sizeof *srv);
    if (srv == NULL)
        return MCPAGE_ENOMEM;
    srv->cfg = *cfg;
    int rc = MCPAGE_ENOMEM;
    if (!dup_opt(&srv->name, cfg->name) || !dup_opt(&srv->title, cfg->title) ||
        !dup_opt(&srv->version, cfg->version) || !dup_opt(&srv->instructions, cfg->instructions))
        goto fail;
    srv->cfg.name = srv->name;
    srv->cfg.title = srv->title;
    srv->cfg.version = srv->version;
    srv->cfg.instructions = srv->instructions;
    if (cfg->keyring) {
        srv->keyring = cfg->keyring;
    } else {
        rc = mcpage_keyring_new(&srv->keyring);
        if (rc != 0)
            goto fail;
        srv->own_keyring = true;
        rc = mcpage_keyring_load(srv->keyring, NULL, NULL);
        if (rc != 0)
            goto fail;
    }
    rc = mcpage_pager_new(cfg->pager, srv->keyring, &srv->pager);
    if (rc != 0)
        goto fail;
    srv->cfg.pager = NULL; /* copied into the pager */
    json_t *empty = json_object();
    if (empty == NULL) {
        rc = MCPAGE_ENOMEM;
        goto fail;
    }
    static const char *const no_skip[] = {NULL};
    mcpage_args_fingerprint(empty, no_skip, srv->empty_fp);
    json_decref(empty);
    pthread_mutex_init(&srv->lock, NULL);
    pthread_mutex_init(&srv->sessions_lock, NULL);
    pthread_mutex_init(&srv->tasks_lock, NULL);
    pthread_cond_init(&srv->work_cv, NULL);
    *out = srv;
    return 0;
fail:
    mcpage_pager_free(srv->pager);
    if (srv->own_keyring)
        mcpage_keyring_free(srv->keyring);
    mcpage__free(srv->name);
    mcpage__free(srv->title);
    mcpage__free(srv->version);
    mcpage__free(srv->instructions);
    mcpage__free(srv);
    return rc;
}

const mcpage_pager *mcpage_server_pager(const mcpage_server *srv)
{
    return srv->pager;
}

const mcpage_keyring *mcpage_server_keyring(const mcpage_server *srv)
{
    return srv->keyring;
}

static void free_tool(mcp_tool *t)
{
    mcpage__free(t->name);
    mcpage__free(t->title);
    mcpage__free(t->description);
    json_decref(t->input_schema);
    json_decref(t->output_schema);
    json_decref(t->meta);
}

static void free_resource(mcp_resource *r)
{
    mcpage__free(r->uri);
    mcpage__free(r->name);
    mcpage__free(r->title);
    mcpage__free(r->description);
    mcpage__free(r->mime_type);
    json_decref(r->meta);
}

/*
 * Parses a registration's _meta (JSON text of an object; NULL = none) into
 * *out; reports the reason on stderr, naming `what`.
 */
static int parse_meta(const char *text, const char *what, json_t **out)
{
    *out = NULL;
    if (text == NULL)
        return 0;
    json_error_t err;
    json_t *m = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (m == NULL || !json_is_object(m)) {
        (void)fprintf(stderr, "mcpage: %s: _meta must be a JSON object: %s\n", what,
                      m ? "it is another JSON value" : err.text);
        json_decref(m);
        return MCPAGE_EPARSE;
    }
    *out = m;
    return 0;
}

static void free_template(mcp_template *t)
{
    mcpage__free(t->uri_template);
    mcpage__free(t->name);
    mcpage__free(t->title);
    mcpage__free(t->description);
    mcpage__free(t->mime_type);
}

static void free_prompt(mcp_prompt *p)
{
    mcpage__free(p->name);
    mcpage__free(p->title);
    mcpage__free(p->description);
    for (int i = 0; i < p->nargs; i++) {
        mcpage__free(p->args[i].name);
        mcpage__free(p->args[i].title);
        mcpage__free(p->args[i].description);
    }
}

void mcpage_server_free(mcpage_server *srv)
{
    if (srv == NULL)
        return;
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    pthread_cond_broadcast(&srv->work_cv);
    pthread_mutex_unlock(&srv->lock);
    mcp_tasks_stop(srv); /* running tasks are cancelled: nobody will poll them */
    for (int i = 0; i < srv->nthreads; i++)
        pthread_join(srv->threads[i], NULL);
    mcpage__free(srv->threads);
    mcp_tasks_free(srv);
    for (size_t i = 0; i < srv->ntools; i++)
        free_tool(&srv->tools[i]);
    for (size_t i = 0; i < srv->nresources; i++)
        free_resource(&srv->resources[i]);
    for (size_t i = 0; i < srv->ntemplates; i++)
        free_template(&srv->templates[i]);
    for (size_t i = 0; i < srv->nprompts; i++)
        free_prompt(&srv->prompts[i]);
    mcpage__free(srv->tools);
    mcpage__free(srv->resources);
    mcpage__free(srv->providers);
    mcpage__free(srv->templates);
    mcpage__free(srv->prompts);
    mcpage_pager_free(srv->pager);
    if (srv->own_keyring)
        mcpage_keyring_free(srv->keyring);
    pthread_cond_destroy(&srv->work_cv);
    pthread_mutex_destroy(&srv->lock);
    pthread_mutex_destroy(&srv->sessions_lock);
    pthread_mutex_destroy(&srv->tasks_lock);
    mcpage__free(srv->name);
    mcpage__free(srv->title);
    mcpage__free(srv->version);
    mcpage__free(srv->instructions);
    mcpage__free(srv);
}

/* Grows a registry vector by one slot; returns the new slot zeroed, or NULL. */
static void *grow(void **vec, const size_t *n, size_t *cap, size_t elem)
{
    if (dbuf_grow(vec, cap, *n + 1, elem, 8, MCP_MAX_ITEMS) != 0)
        return NULL;
    void *slot = (char *)*vec + *n * elem;
    memset(slot, 0, elem);
    return slot;
}

/* Registration is allowed only until the first session freezes the registry. */
static int check_open(mcpage_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    bool frozen = srv->frozen;
    pthread_mutex_unlock(&srv->lock);
    return frozen ? MCPAGE_ESTATE : 0;
}

static bool valid_tool_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* Parses and checks a schema given as JSON text; reports the reason on stderr. */
static int parse_schema(const char *text, const char *tool, const char *which, json_t **out)
{
    json_error_t err;
    json_t *s = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (s == NULL) {
        (void)fprintf(stderr, "mcpage: tool '%s': %s is not valid JSON: %s\n", tool, which,
                      err.text);
        return MCPAGE_EPARSE;
    }
    char why[256];
    if (!schema_check(s, why, sizeof why)) {
        (void)fprintf(stderr, "mcpage: tool '%s': %s: %s\n", tool, which, why);
        json_decref(s);
        return MCPAGE_EPARSE;
    }
    *out = s;
    return 0;
}

/*
 * Registers `tool` with the parsed inputSchema `in` (stolen, also on
 * failure; NULL = no arguments) and, for a tool with a window, its family
 * and spec.
 */
static int register_tool(mcpage_server *srv, const mcpage_tool *tool, json_t *in, mcp_window window,
                         const void *spec)
{
    json_t *out = NULL;
    json_t *meta = NULL;
    int rc = 0;
    if (in == NULL) {
        in = json_pack("{s:s, s:{}}", "type", "object", "properties");
        rc = in ? 0 : MCPAGE_ENOMEM;
    }
    if (rc == 0 && tool->output_schema)
        rc = parse_schema(tool->output_schema, tool->name, "outputSchema", &out);
    if (rc == 0)
        rc = parse_meta(tool->meta, tool->name, &meta);
    if (rc != 0)
        goto fail;
    rc = MCPAGE_ENOMEM;
    mcp_tool *t = grow((void **)&srv->tools, &srv->ntools, &srv->captools, sizeof *t);
    if (t == NULL)
        goto fail;
    if (!dup_opt(&t->name, tool->name) || !dup_opt(&t->title, tool->title) ||
        !dup_opt(&t->description, tool->description)) {
        free_tool(t);
        goto fail;
    }
    t->input_schema = in;
    t->output_schema = out;
    t->meta = meta;
    t->hints[0] = tool->read_only;
    t->hints[1] = tool->destructive;
    t->hints[2] = tool->idempotent;
    t->hints[3] = tool->open_world;
    t->handler = tool->handler;
    t->ud = tool->user_data;
    t->tasks = tool->tasks;
    t->max_result_chars = tool->max_result_chars > 0 ? tool->max_result_chars : 0;
    t->window = window;
    t->spec = spec;
    srv->ntools++;
    return 0;
fail:
    json_decref(in);
    json_decref(out);
    json_decref(meta);
    return rc;
}

/* The checks every registration makes before it parses anything. */
static int check_tool(mcpage_server *srv, const mcpage_tool *tool)
{
    if (tool == NULL || tool->name == NULL || tool->handler == NULL || !valid_tool_name(tool->name))
        return MCPAGE_EINVAL;
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < srv->ntools; i++)
        if (strcmp(srv->tools[i].name, tool->name) == 0)
            return MCPAGE_EEXIST;
    return 0;
}

int mcpage_server_add_tool(mcpage_server *srv, const mcpage_tool *tool)
{
    int rc = check_tool(srv, tool);
    json_t *in = NULL;
    if (rc == 0 && tool->input_schema)
        rc = parse_schema(tool->input_schema, tool->name, "inputSchema", &in);
    if (rc == 0)
        rc = register_tool(srv, tool, in, MCP_WINDOW_NONE, NULL);
    if (rc == 0) {
        /* Window parameters generated by mcpage_*_schema: a bad window gets the builder's
           answer (range, example call), as for a tool declared with its window. */
        mcp_tool *t = &srv->tools[srv->ntools - 1];
        const void *spec = NULL;
        static const mcp_window kinds[] = {MCP_WINDOW_NONE, MCP_WINDOW_LIST, MCP_WINDOW_LINES,
                                           MCP_WINDOW_BYTES, MCP_WINDOW_GRID};
        int family =
            page_generated_find(json_object_get(t->input_schema, "properties"), t->name, &spec);
        t->judge = kinds[family];
        t->judge_spec = spec;
    }
    return rc;
}

/*
 * Registers a tool whose inputSchema is its own schema plus `window` (the
 * window's properties, stolen; NULL when the spec was refused or memory
 * ran out). `spec_tool` is the name the spec gives the tool.
 */
static int add_window_tool(mcpage_server *srv, const mcpage_tool *tool, mcp_window kind,
                           const void *spec, const char *spec_tool, json_t *window)
{
    int rc = check_tool(srv, tool);
    if (rc == 0 && (window == NULL || spec_tool == NULL || strcmp(spec_tool, tool->name) != 0)) {
        (void)fprintf(stderr, "mcpage: tool '%s': its window spec is invalid or names tool '%s'\n",
                      tool->name, spec_tool ? spec_tool : "(none)");
        rc = MCPAGE_EINVAL;
    }
    json_t *in = NULL;
    if (rc == 0 && tool->input_schema)
        rc = parse_schema(tool->input_schema, tool->name, "inputSchema", &in);
    else if (rc == 0 && (in = json_pack("{s:s}", "type", "object")) == NULL)
        rc = MCPAGE_ENOMEM;
    json_t *props = in ? json_object_get(in, "properties") : NULL;
    if (in && props == NULL && json_object_set_new(in, "properties", props = json_object()) != 0)
        rc = MCPAGE_ENOMEM;
    const char *name;
    json_t *prop;
    json_object_foreach(window, name, prop)
    {
        if (rc == 0 && json_object_get(props, name)) {
            (void)fprintf(stderr,
                          "mcpage: tool '%s': its schema declares the window parameter "
                          "'%s' itself\n",
                          tool->name, name);
            rc = MCPAGE_EINVAL;
        }
        if (rc == 0 && json_object_set(props, name, prop) != 0)
            rc = MCPAGE_ENOMEM;
    }
    if (rc == 0 && json_object_get(in, "additionalProperties") == NULL &&
        json_object_set_new(in, "additionalProperties", json_false()) != 0)
        rc = MCPAGE_ENOMEM;
    json_decref(window);
    if (rc != 0) {
        json_decref(in);
        return rc;
    }
    return register_tool(srv, tool, in, kind, spec);
}

int mcpage_server_add_list_tool(mcpage_server *srv, const mcpage_tool *tool,
                                const mcpage_list_spec *spec)
{
    json_t *w = spec ? mcpage_list_schema(srv->pager, spec) : NULL;
    return add_window_tool(srv, tool, MCP_WINDOW_LIST, spec, spec ? spec->tool : NULL, w);
}

int mcpage_server_add_lines_tool(mcpage_server *srv, const mcpage_tool *tool,
                                 const mcpage_lines_spec *spec)
{
    json_t *w = spec ? mcpage_lines_schema(srv->pager, spec) : NULL;
    return add_window_tool(srv, tool, MCP_WINDOW_LINES, spec, spec ? spec->tool : NULL, w);
}

int mcpage_server_add_bytes_tool(mcpage_server *srv, const mcpage_tool *tool,
                                 const mcpage_bytes_spec *spec)
{
    json_t *w = spec ? mcpage_bytes_schema(srv->pager, spec) : NULL;
    return add_window_tool(srv, tool, MCP_WINDOW_BYTES, spec, spec ? spec->tool : NULL, w);
}

int mcpage_server_add_grid_tool(mcpage_server *srv, const mcpage_tool *tool,
                                const mcpage_grid_spec *spec)
{
    json_t *w = spec ? mcpage_grid_schema(srv->pager, spec) : NULL;
    return add_window_tool(srv, tool, MCP_WINDOW_GRID, spec, spec ? spec->tool : NULL, w);
}

int mcpage_server_add_resource(mcpage_server *srv, const mcpage_resource *res)
{
    if (res == NULL || res->uri == NULL || res->name == NULL || res->read == NULL)
        return MCPAGE_EINVAL;
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < srv->nresources; i++)
        if (strcmp(srv->resources[i].uri, res->uri) == 0)
            return MCPAGE_EEXIST;
    json_t *meta;
    rc = parse_meta(res->meta, res->uri, &meta);
    if (rc != 0)
        return rc;
    mcp_resource *r =
        grow((void **)&srv->resources, &srv->nresources, &srv->capresources, sizeof *r);
    if (r == NULL) {
        json_decref(meta);
        return MCPAGE_ENOMEM;
    }
    r->meta = meta;
    if (!dup_opt(&r->uri, res->uri) || !dup_opt(&r->name, res->name) ||
        !dup_opt(&r->title, res->title) || !dup_opt(&r->description, res->description) ||
        !dup_opt(&r->mime_type, res->mime_type)) {
        free_resource(r);
        return MCPAGE_ENOMEM;
    }
    r->size = res->size;
    r->read = res->read;
    r->ud = res->user_data;
    srv->nresources++;
    return 0;
}

int mcpage_server_add_resource_provider(mcpage_server *srv, const mcpage_resource_provider *p)
{
    if (p == NULL || p->list == NULL || p->read == NULL)
        return MCPAGE_EINVAL;
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    if (srv->nproviders >= 64)
        return MCPAGE_ERANGE;
    mcpage_resource_provider *slot =
        grow((void **)&srv->providers, &srv->nproviders, &srv->capproviders, sizeof *slot);
    if (slot == NULL)
        return MCPAGE_ENOMEM;
    *slot = *p;
    srv->nproviders++;
    return 0;
}

int mcpage_server_add_resource_template(mcpage_server *srv, const mcpage_resource_template *t)
{
    if (t == NULL || t->uri_template == NULL || t->name == NULL || t->read == NULL)
        return MCPAGE_EINVAL;
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    mcp_template *slot =
        grow((void **)&srv->templates, &srv->ntemplates, &srv->captemplates, sizeof *slot);
    if (slot == NULL)
        return MCPAGE_ENOMEM;
    if (!dup_opt(&slot->uri_template, t->uri_template) || !dup_opt(&slot->name, t->name) ||
        !dup_opt(&slot->title, t->title) || !dup_opt(&slot->description, t->description) ||
        !dup_opt(&slot->mime_type, t->mime_type)) {
        free_template(slot);
        return MCPAGE_ENOMEM;
    }
    slot->read = t->read;
    slot->ud = t->user_data;
    srv->ntemplates++;
    return 0;
}

int mcpage_server_add_prompt(mcpage_server *srv, const mcpage_prompt *p)
{
    if (p == NULL || p->name == NULL || p->handler == NULL || p->nargs < 0 ||
        p->nargs > MCPAGE_PROMPT_MAX_ARGS)
        return MCPAGE_EINVAL;
    for (int i = 0; i < p->nargs; i++)
        if (p->args[i].name == NULL)
            return MCPAGE_EINVAL;
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < srv->nprompts; i++)
        if (strcmp(srv->prompts[i].name, p->name) == 0)
            return MCPAGE_EEXIST;
    mcp_prompt *slot = grow((void **)&srv->prompts, &srv->nprompts, &srv->capprompts, sizeof *slot);
    if (slot == NULL)
        return MCPAGE_ENOMEM;
    bool ok = dup_opt(&slot->name, p->name) && dup_opt(&slot->title, p->title) &&
              dup_opt(&slot->description, p->description);
    for (int i = 0; ok && i < p->nargs; i++) {
        slot->nargs = i + 1;
        ok = dup_opt(&slot->args[i].name, p->args[i].name) &&
             dup_opt(&slot->args[i].title, p->args[i].title) &&
             dup_opt(&slot->args[i].description, p->args[i].description);
        slot->args[i].required = p->args[i].required;
    }
    if (!ok) {
        free_prompt(slot);
        return MCPAGE_ENOMEM;
    }
    slot->handler = p->handler;
    slot->ud = p->user_data;
    srv->nprompts++;
    return 0;
}

int mcpage_server_set_completion(mcpage_server *srv, mcpage_complete_fn fn, void *user_data)
{
    int rc = check_open(srv);
    if (rc != 0)
        return rc;
    srv->complete = fn;
    srv->complete_ud = user_data;
    return 0;
}

/* The server whose worker this thread is, or NULL (mcp_server_submit). */
static _Thread_local const mcpage_server *worker_of;

/* The server whose next call this thread keeps (mcp_server_hold), and that call. */
static _Thread_local const mcpage_server *hold_for;
static _Thread_local mcpage_call *held;

/* Runs a call or job taken off the queue on this worker, then frees its slot. */
static void run_queued(mcpage_server *srv, mcpage_call *call)
{
    bool job = call->kind == CALL_JOB, parked = false;
    if (job)
        call->job(call->job_ud);
    else
        parked = mcp_call_run(call);
    /* Free the server slot before the session learns the call ended, so
     * a client that saw the response may send the next call at once. */
    pthread_mutex_lock(&srv->lock);
    srv->inflight--;
    pthread_mutex_unlock(&srv->lock);
    if (job)
        mcpage__free(call);
    else if (!parked) /* a parked task's call waits in its task for tasks/update */
        mcp_call_finish(call);
}

/* A worker: takes calls off the queue until the server stops and the queue is empty. */
static void *worker_main(void *arg)
{
    mcpage_server *srv = arg;
    worker_of = srv;
    pthread_mutex_lock(&srv->lock);
    for (;;) {
        while (srv->queue_head == NULL && !srv->stopping)
            pthread_cond_wait(&srv->work_cv, &srv->lock);
        mcpage_call *call = srv->queue_head;
        if (call == NULL)
            break; /* stopping and nothing left */
        srv->queue_head = call->next;
        if (srv->queue_head == NULL)
            srv->queue_tail = NULL;
        pthread_mutex_unlock(&srv->lock);
        run_queued(srv, call);
        pthread_mutex_lock(&srv->lock);
    }
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

int mcp_server_freeze(mcpage_server *srv)
{
    int rc = 0;
    pthread_mutex_lock(&srv->lock);
    srv->frozen = true;
    if (srv->threads == NULL) {
        srv->threads = mcpage__calloc((size_t)srv->cfg.workers, sizeof(pthread_t));
        if (srv->threads == NULL) {
            rc = MCPAGE_ENOMEM;
            goto out;
        }
        /* Workers take no process signals: those belong to the program. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        for (int i = 0; i < srv->cfg.workers; i++) {
            if (pthread_create(&srv->threads[i], NULL, worker_main, srv) != 0)
                break;
            srv->nthreads++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (srv->nthreads == 0)
            rc = MCPAGE_ENOMEM;
    }
out:
    pthread_mutex_unlock(&srv->lock);
    return rc;
}

int mcp_server_submit(mcpage_server *srv, mcpage_call *call)
{
    if (worker_of == srv && call->kind != CALL_JOB) { /* from a worker: run it here */
        if (!mcp_call_run(call))
            mcp_call_finish(call);
        return 0;
    }
    pthread_mutex_lock(&srv->lock);
    if (srv->stopping || srv->nthreads == 0 || srv->inflight >= srv->cfg.max_inflight) {
        pthread_mutex_unlock(&srv->lock);
        return MCPAGE_ERANGE;
    }
    if (hold_for == srv && held == NULL && call->kind != CALL_JOB && srv->inflight == 0) {
        /* Nothing else runs or waits: kept, and counted like a queued call
           (mcp_server_run_held). With calls in flight the workers are
           awake anyway, and the reader had better go on reading. */
        held = call;
        srv->inflight++;
        pthread_mutex_unlock(&srv->lock);
        return 0;
    }
    call->next = NULL;
    if (srv->queue_tail)
        srv->queue_tail->next = call;
    else
        srv->queue_head = call;
    srv->queue_tail = call;
    srv->inflight++;
    pthread_cond_signal(&srv->work_cv);
    pthread_mutex_unlock(&srv->lock);
    return 0;
}

void mcp_server_hold(const mcpage_server *srv)
{
    hold_for = srv;
    held = NULL;
}

mcpage_call *mcp_server_held(void)
{
    mcpage_call *call = held;
    hold_for = NULL;
    held = NULL;
    return call;
}

void mcp_server_run_held(mcpage_server *srv, mcpage_call *call)
{
    const mcpage_server *was = worker_of;
    worker_of = srv; /* what it submits in turn runs here too, as on a worker */
    run_queued(srv, call);
    worker_of = was;
}

int mcp_server_run(mcpage_server *srv, void (*fn)(void *ud), void *ud)
{
    int rc = mcp_server_freeze(srv); /* the pool starts with the first session, or here */
    if (rc != 0)
        return rc;
    mcpage_call *call = mcpage__calloc(1, sizeof *call);
    if (call == NULL)
        return MCPAGE_ENOMEM;
    call->kind = CALL_JOB;
    call->srv = srv;
    call->job = fn;
    call->job_ud = ud;
    rc = mcp_server_submit(srv, call);
    if (rc != 0)
        mcpage__free(call);
    return rc;
}

const json_t *mcp_tool_input_schema(const mcpage_server *srv, const char *name)
{
    for (size_t i = 0; i < srv->ntools; i++)
        if (strcmp(srv->tools[i].name, name) == 0)
            return srv->tools[i].input_schema;
    return NULL;
}
