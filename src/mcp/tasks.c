/*
 * The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) of the
 * modern era: a tool call that the handler turns into a task
 * (mcpage_call_task) answers a CreateTaskResult at once and goes on in
 * the background; the client polls tasks/get, answers questions with
 * tasks/update and may cancel with tasks/cancel.
 *
 * A task asks the client the way a modern call does (mcpage_call_input):
 * the handler records its questions and returns; the task waits in
 * input_required holding the call; once tasks/update has answered every
 * question the call goes back to the worker pool and the handler runs
 * again from the start, finding the answers. Tasks live in this process
 * (MCPAGE_TASK_TTL_MS from creation): an instance behind a balancer knows
 * only its own, so task traffic needs affinity by task id (Mcp-Name).
 */
#include <mcpage/server.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcp/server_internal.h"
#include "page/alloc.h"
#include "page/invariant.h"
#include "page/result_internal.h"
#include "page/base64.h"
#include "page/digest.h"

#define TASK_ID_HEX 32

typedef enum task_status {
    TASK_WORKING,
    TASK_INPUT_REQUIRED,
    TASK_COMPLETED,
    TASK_FAILED,
    TASK_CANCELLED
} task_status;

static const char *const status_names[] = {"working", "input_required", "completed", "failed",
                                           "cancelled"};

typedef struct mcp_task {
    struct mcp_task *next;    /* server list link */
    char id[TASK_ID_HEX + 1]; /* random, hex */
    task_status status;       /* where it is */
    int64_t created_ms;       /* unix ms */
    int64_t updated_ms;       /* unix ms of the last status change */
    char *result;             /* completed: the tool result's JSON text (owned) */
    json_t *error;            /* failed: {code, message} (owned) */
    json_t *asks;             /* input_required: the questions not yet answered (owned) */
    mcpage_call *parked;      /* input_required: the call, held until it runs again */
    mcpage_call *running;     /* working: the call on a worker (borrowed), or NULL */
} mcp_task;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void iso_time(int64_t ms, char out[32])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    (void)snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

static bool terminal(task_status st)
{
    return st == TASK_COMPLETED || st == TASK_FAILED || st == TASK_CANCELLED;
}

static void task_free(mcp_task *t)
{
    if (t->parked)
        mcp_call_finish(t->parked);
    mcpage__free(t->result);
    json_decref(t->error);
    json_decref(t->asks);
    mcpage__free(t);
}

/* ------------------------------------------------------------ registry */

bool mcp_tasks_offered(const mcpage_server *srv)
{
    for (size_t i = 0; i < srv->ntools; i++)
        if (srv->tools[i].tasks != MCPAGE_TASKS_NONE)
            return true;
    return false;
}

bool mcp_tasks_declared(const json_t *caps)
{
    return json_object_get(json_object_get(caps, "extensions"), MCP_TASKS_EXTENSION) != NULL;
}

/* Drops tasks past their TTL that no worker holds (tasks_lock held). */
static void purge_expired(mcpage_server *srv, int64_t now)
{
    MCPAGE_ASSERT_LOCKED(&srv->tasks_lock);
    for (mcp_task **pp = &srv->tasks; *pp;) {
        mcp_task *t = *pp;
        if (t->running == NULL && now - t->created_ms > MCPAGE_TASK_TTL_MS) {
            *pp = t->next;
            srv->ntasks--;
            task_free(t);
        } else {
            pp = &t->next;
        }
    }
}

/* The task with this id (tasks_lock held), or NULL. */
static mcp_task *find(mcpage_server *srv, const char *id)
{
    MCPAGE_ASSERT_LOCKED(&srv->tasks_lock);
    for (mcp_task *t = srv->tasks; t; t = t->next)
        if (strcmp(t->id, id) == 0)
            return t;
    return NULL;
}

void mcp_tasks_stop(mcpage_server *srv)
{
    pthread_mutex_lock(&srv->tasks_lock);
    for (mcp_task *t = srv->tasks; t; t = t->next)
        if (t->running)
            atomic_store(&t->running->cancelled, true);
    pthread_mutex_unlock(&srv->tasks_lock);
}

void mcp_tasks_free(mcpage_server *srv)
{
    for (mcp_task *t = srv->tasks, *n; t; t = n) {
        n = t->next;
        task_free(t);
    }
    srv->tasks = NULL;
    srv->ntasks = 0;
}

/* ------------------------------------------------------------ output */

static void write_task_fields(jw *w, const mcp_task *t)
{
    char created[32], updated[32];
    iso_time(t->created_ms, created);
    iso_time(t->updated_ms, updated);
    jw_kv_string(w, "taskId", t->id);
    jw_kv_string(w, "status", status_names[t->status]);
    jw_kv_string(w, "createdAt", created);
    jw_kv_string(w, "lastUpdatedAt", updated);
    jw_kv_int(w, "ttlMs", MCPAGE_TASK_TTL_MS);
    jw_kv_int(w, "pollIntervalMs", MCPAGE_TASK_POLL_MS);
}

void mcp_tasks_required(mcpage_session *s, const json_t *id)
{
    json_t *data =
        json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", MCP_TASKS_EXTENSION);
    mcp_send_error(s, id, MCP_MISSING_CLIENT_CAP,
                   "Missing required client capability: this needs the tasks extension; "
                   "declare \"extensions\": {\"" MCP_TASKS_EXTENSION
                   "\": {}} in _meta[\"io.modelcontextprotocol/clientCapabilities\"]",
                   data);
}

/* ------------------------------------------------------------ the call side */

int mcpage_call_task(mcpage_call *call)
{
    if (call == NULL)
        return MCPAGE_EINVAL;
    if (call->task)
        return 0;
    if (call->kind != CALL_TOOL || call->tool->tasks == MCPAGE_TASKS_NONE || call->s == NULL ||
        !mcpage_call_is_modern(call) || !mcp_tasks_declared(call->era.caps))
        return MCPAGE_ENOTSUP;
    mcpage_server *srv = call->srv;
    mcp_task *t = mcpage__calloc(1, sizeof *t);
    if (t == NULL)
        return MCPAGE_ENOMEM;
    uint8_t rnd[TASK_ID_HEX / 2];
    if (!mcpage__random(rnd, sizeof rnd)) {
        mcpage__free(t);
        return MCPAGE_ECRYPTO;
    }
    hex_encode(rnd, sizeof rnd, t->id);
    t->status = TASK_WORKING;
    t->created_ms = t->updated_ms = now_ms();
    t->running = call;

    /* Registered before the answer goes out: a tasks/get right after it finds the task. */
    pthread_mutex_lock(&srv->tasks_lock);
    purge_expired(srv, t->created_ms);
    bool full = srv->ntasks >= MCPAGE_MAX_TASKS;
    if (!full) {
        t->next = srv->tasks;
        srv->tasks = t;
        srv->ntasks++;
    }
    pthread_mutex_unlock(&srv->tasks_lock);
    if (full) {
        mcpage__free(t);
        return MCPAGE_ERANGE;
    }

    /* Marked first, so that the end of the request (its answer goes out below) cancels
       nothing; answered next; then out of the session, so that a transport that waits for
       the session's calls (stdio at end of input) sees the answer before it stops. */
    mcpage_session *s = call->s;
    mcp_call_became_task(call, t);
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, call->id);
    jw_object_begin(&w);
    jw_kv_string(&w, "resultType", "task");
    pthread_mutex_lock(&srv->tasks_lock);
    write_task_fields(&w, t);
    pthread_mutex_unlock(&srv->tasks_lock);
    mcp_write_server_meta(&w, srv);
    jw_object_end(&w);
    mcp_send_result(s, NULL, &w, call->id, NULL);
    mcp_call_detach(call);
    call->s = NULL;
    mcp_session_release(s);
    return 0;
}

bool mcp_task_settle(mcpage_call *call, mcpage_result *res)
{
    mcp_task *t = call->task;
    mcpage_server *srv = call->srv;
    char *text = NULL;
    json_t *error = NULL;
    bool cancelled = mcpage_call_cancelled(call);
    if (!cancelled && call->fail_code) {
        error = json_pack("{s:i, s:s}", "code", call->fail_code, "message", call->fail_message);
    } else if (!cancelled && call->missing_caps) {
        error = json_pack("{s:i, s:s, s:{s:O}}", "code", MCP_MISSING_CLIENT_CAP, "message",
                          "Missing required client capability", "data", "requiredCapabilities",
                          call->missing_caps);
    } else if (!cancelled && json_object_size(call->asks) == 0) {
        jw w;
        jw_init(&w, 0);
        mcpage__result_write(res, &w);
        if (w.err == 0)
            text = jw_take(&w, NULL);
        else
            error = json_pack("{s:i, s:s}", "code", RPC_INTERNAL_ERROR, "message",
                              "Internal error: the result could not be serialized");
        jw_free(&w);
    }

    bool parked = false;
    pthread_mutex_lock(&srv->tasks_lock);
    t->running = NULL;
    if (!terminal(t->status)) {
        t->updated_ms = now_ms();
        if (cancelled) {
            t->status = TASK_CANCELLED;
        } else if (text) {
            t->status = TASK_COMPLETED;
            t->result = text;
            text = NULL;
        } else if (error) {
            t->status = TASK_FAILED;
            t->error = error;
            error = NULL;
        } else {
            /* Questions: wait for tasks/update with the call (it runs again then). */
            t->status = TASK_INPUT_REQUIRED;
            json_decref(t->asks);
            t->asks = call->asks;
            call->asks = NULL;
            t->parked = call;
            parked = true;
        }
    }
    pthread_mutex_unlock(&srv->tasks_lock);
    mcpage__free(text);
    json_decref(error);
    return parked;
}

/* ------------------------------------------------------------ methods */

/* The task a tasks/ request names; NULL after answering -32021 or -32602 (tasks_lock held after).
 */
static mcp_task *task_param(mcpage_session *s, const json_t *id, const json_t *params,
                            const char *method)
{
    if (!mcp_tasks_declared(s->req->caps)) {
        mcp_tasks_required(s, id);
        return NULL;
    }
    const json_t *tid = json_object_get(params, "taskId");
    if (!json_is_string(tid)) {
        char msg[200];
        (void)snprintf(msg, sizeof msg,
                       "Invalid params: %s requires params.taskId, the taskId of a "
                       "CreateTaskResult",
                       method);
        mcp_send_error(s, id, RPC_INVALID_PARAMS, msg, NULL);
        return NULL;
    }
    pthread_mutex_lock(&s->srv->tasks_lock);
    purge_expired(s->srv, now_ms());
    mcp_task *t = find(s->srv, json_string_value(tid));
    if (t == NULL) {
        pthread_mutex_unlock(&s->srv->tasks_lock);
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "Invalid params: no such task (unknown taskId, or it expired)",
                       json_pack("{s:O}", "taskId", tid));
    }
    return t;
}

void mcp_tasks_get(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcp_task *t = task_param(s, id, params, "tasks/get");
    if (t == NULL)
        return;
    jw w;
    jw_init(&w, 0);
    mcp_write_head(&w, id);
    jw_object_begin(&w);
    write_task_fields(&w, t);
    if (t->status == TASK_INPUT_REQUIRED) {
        jw_key(&w, "inputRequests");
        jw_json(&w, t->asks);
    } else if (t->status == TASK_COMPLETED) {
        jw_key(&w, "result");
        jw_raw_value(&w, t->result, strlen(t->result));
    } else if (t->status == TASK_FAILED) {
        jw_kv_string(&w, "statusMessage", json_string_value(json_object_get(t->error, "message")));
        jw_key(&w, "error");
        jw_json(&w, t->error);
    }
    jw_object_end(&w);
    pthread_mutex_unlock(&s->srv->tasks_lock);
    mcp_send_finish(s, &w, id, NULL);
}

void mcp_tasks_update(mcpage_session *s, const json_t *id, const json_t *params)
{
    const json_t *ir = json_object_get(params, "inputResponses");
    const char *key;
    const json_t *v;
    bool valid = json_is_object(ir);
    json_object_foreach((json_t *)ir, key, v) valid = valid && json_is_object(v);
    if (!valid) {
        mcp_send_error(s, id, RPC_INVALID_PARAMS,
                       "Invalid params: tasks/update requires params.inputResponses, an object "
                       "of the client's results keyed as the task's inputRequests",
                       NULL);
        return;
    }
    mcp_task *t = task_param(s, id, params, "tasks/update");
    if (t == NULL)
        return;
    mcpage_call *resume = NULL;
    if (t->status == TASK_INPUT_REQUIRED && t->parked) {
        /* Answers to questions not outstanding are ignored (SEP-2663). */
        json_object_foreach((json_t *)ir, key, v)
        {
            if (json_object_get(t->asks, key) == NULL)
                continue;
            json_object_set(t->parked->answers, key, (json_t *)v);
            json_object_del(t->asks, key);
        }
        if (json_object_size(t->asks) == 0) {
            resume = t->parked;
            t->parked = NULL;
            t->running = resume;
            t->status = TASK_WORKING;
            t->updated_ms = now_ms();
        }
    }
    pthread_mutex_unlock(&s->srv->tasks_lock);
    if (resume && mcp_server_submit(s->srv, resume) != 0) {
        pthread_mutex_lock(&s->srv->tasks_lock);
        t->running = NULL;
        t->status = TASK_FAILED;
        t->error = json_pack("{s:i, s:s}", "code", RPC_SERVER_BUSY, "message",
                             "Server busy: the task could not be resumed");
        pthread_mutex_unlock(&s->srv->tasks_lock);
        mcp_call_finish(resume);
    }
    mcp_send_empty(s, id); /* the ack: {resultType: "complete"} */
}

void mcp_tasks_cancel(mcpage_session *s, const json_t *id, const json_t *params)
{
    mcp_task *t = task_param(s, id, params, "tasks/cancel");
    if (t == NULL)
        return;
    mcpage_call *drop = NULL;
    if (!terminal(t->status)) {
        if (t->running) {
            /* Cooperative: the handler sees mcpage_call_cancelled(); its end settles it. */
            atomic_store(&t->running->cancelled, true);
        } else {
            drop = t->parked;
            t->parked = NULL;
        }
        t->status = TASK_CANCELLED;
        t->updated_ms = now_ms();
    }
    pthread_mutex_unlock(&s->srv->tasks_lock);
    if (drop)
        mcp_call_finish(drop);
    mcp_send_empty(s, id); /* the ack: {resultType: "complete"} */
}
