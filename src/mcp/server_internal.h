/*
 * The runtime's internal structures, shared by server.c (configuration,
 * registry, worker pool), session.c (dispatch and lifecycle), lists.c
 * (the four paged catalog lists) and calls.c (work that runs on the
 * pool: tools/call, resources/read, prompts/get).
 */
#ifndef MCPAGE_MCP_SERVER_INTERNAL_H
#define MCPAGE_MCP_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/server.h>

#include "mcp/version.h"
#include "page/jw.h"

/* JSON-RPC 2.0 and MCP error codes. */
#define RPC_PARSE_ERROR        (-32700)
#define RPC_INVALID_REQUEST    (-32600)
#define RPC_METHOD_NOT_FOUND   (-32601)
#define RPC_INVALID_PARAMS     (-32602)
#define RPC_INTERNAL_ERROR     (-32603)
#define RPC_SERVER_BUSY        (-32000) /* implementation-defined: too many calls in flight */
#define MCP_RESOURCE_NOT_FOUND (-32002) /* legacy era; modern answers -32602 */
/* Modern era (2026-07-28): codes the specification reserves (-32020 to -32099). */
#define MCP_HEADER_MISMATCH     (-32020) /* HTTP headers disagree with the body */
#define MCP_MISSING_CLIENT_CAP  (-32021) /* the request needs a capability the client lacks */
#define MCP_UNSUPPORTED_VERSION (-32022) /* _meta names a revision we do not speak */

/* The _meta keys of a modern request and result. */
#define MCP_META_VERSION         "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS            "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT_INFO     "io.modelcontextprotocol/clientInfo"
#define MCP_META_LOG_LEVEL       "io.modelcontextprotocol/logLevel"
#define MCP_META_SERVER_INFO     "io.modelcontextprotocol/serverInfo"
#define MCP_META_SUBSCRIPTION_ID "io.modelcontextprotocol/subscriptionId"

/* A log threshold meaning "send no notifications/message" (a modern request without logLevel). */
#define MCP_LOG_OFF (-1)

/*
 * How one request is answered: the revision it speaks, the capabilities
 * its client declared and the log threshold. A legacy request reads them
 * from its session (set at initialize); a modern one carries them in its
 * _meta. Borrowed pointers live as long as the request or call.
 */
typedef struct mcp_era {
    const mcp_revision *rev; /* never NULL while a request is handled */
    const json_t *caps;      /* the client's capabilities (object), or NULL */
    int log_level;           /* threshold (mcpage_log_level), or MCP_LOG_OFF */
} mcp_era;

/* Cache hints of a modern result (ttlMs, cacheScope). */
typedef struct mcp_cache {
    int64_t ttl_ms;    /* >= 0 */
    bool public_scope; /* "public" (shared caches may keep it) or "private" */
} mcp_cache;

/* Limits on what the registry and a session hold. */
#define MCP_MAX_ITEMS         100000 /* tools, resources, templates or prompts each */
#define MCP_MAX_SUBSCRIPTIONS 1024   /* resources/subscribe uris per session */
#define MCP_MAX_ID_BYTES      256    /* longest string request id we accept */
#define MCP_ID_TEXT_MAX       (MCP_MAX_ID_BYTES * 6 + 3) /* its JSON text, escaped, plus NUL */
#define MCP_MAX_WORKERS       256
#define MCP_MAX_PAGE_SIZE     10000 /* mcpage_server_config.page_size: catalog items per page */
#define MCP_MIN_MESSAGE       1024  /* mcpage_server_config.max_message: smallest accepted */
#define MCP_MAX_DEPTH         1000  /* mcpage_server_config.max_depth: deepest nesting accepted */
#define MCP_CAPS_ENTRY_MAX    1024  /* bytes of JSON kept per client capability (session.c) */

/* The paging family of a tool registered with its window (mcpage_server_add_*_tool). */
typedef enum mcp_window {
    MCP_WINDOW_NONE = 0, /* mcpage_server_add_tool: no window the runtime knows of */
    MCP_WINDOW_LIST,     /* spec is an mcpage_list_spec */
    MCP_WINDOW_LINES,    /* an mcpage_lines_spec */
    MCP_WINDOW_BYTES,    /* an mcpage_bytes_spec */
    MCP_WINDOW_GRID      /* an mcpage_grid_spec */
} mcp_window;

typedef struct mcp_tool {
    char *name;                /* unique name */
    char *title;               /* or NULL */
    char *description;         /* or NULL */
    json_t *input_schema;      /* parsed inputSchema (always an object schema) */
    json_t *output_schema;     /* parsed outputSchema, or NULL */
    mcpage_hint hints[4];      /* readOnly, destructive, idempotent, openWorld */
    mcpage_tool_fn handler;    /* the handler */
    void *ud;                  /* its user data */
    mcpage_task_support tasks; /* may it run as a task */
    mcp_window window;         /* its window's family, or MCP_WINDOW_NONE */
    const void *spec;          /* the window's spec (borrowed), or NULL */
    /* Registered without its window but with the window parameters mcpage_*_schema
       generated: the family and spec (the registry's copy) that judge a bad window. */
    mcp_window judge;
    const void *judge_spec;
    int64_t max_result_chars; /* _meta["anthropic/maxResultSizeChars"], or 0 */
    json_t *meta;             /* the rest of its _meta in tools/list (an object), or NULL */
} mcp_tool;

typedef struct mcp_resource {
    char *uri;           /* exact uri */
    char *name;          /* name */
    char *title;         /* or NULL */
    char *description;   /* or NULL */
    char *mime_type;     /* or NULL */
    int64_t size;        /* bytes or -1 */
    mcpage_read_fn read; /* reader */
    void *ud;            /* its user data */
    json_t *meta;        /* its _meta (an object), or NULL */
} mcp_resource;

typedef struct mcp_template {
    char *uri_template;  /* level-1 RFC 6570 template */
    char *name;          /* name */
    char *title;         /* or NULL */
    char *description;   /* or NULL */
    char *mime_type;     /* or NULL */
    mcpage_read_fn read; /* reader for matching uris */
    void *ud;            /* its user data */
} mcp_template;

typedef struct mcp_prompt_arg {
    char *name;        /* argument name */
    char *title;       /* or NULL */
    char *description; /* or NULL */
    bool required;     /* must be given */
} mcp_prompt_arg;

typedef struct mcp_prompt {
    char *name;                                  /* unique name */
    char *title;                                 /* or NULL */
    char *description;                           /* or NULL */
    mcp_prompt_arg args[MCPAGE_PROMPT_MAX_ARGS]; /* arguments */
    int nargs;                                   /* arguments in use */
    mcpage_prompt_fn handler;                    /* builds the messages */
    void *ud;                                    /* its user data */
} mcp_prompt;

/* What a queued call does. CALL_JOB: other work on the pool, mcp_server_run. */
typedef enum mcp_call_kind { CALL_TOOL, CALL_READ, CALL_PROMPT, CALL_JOB } mcp_call_kind;

struct mcpage_call {
    mcpage_call *next;  /* server queue link */
    mcpage_call *snext; /* session in-flight list links */
    mcpage_call *sprev;
    mcpage_session *s;        /* owning session (holds a reference) */
    mcp_call_kind kind;       /* what to run */
    json_t *id;               /* request id (string or integer) */
    json_t *progress_token;   /* _meta.progressToken, or NULL */
    json_t *args;             /* arguments / template variables (object) */
    const mcp_tool *tool;     /* CALL_TOOL */
    const mcp_prompt *prompt; /* CALL_PROMPT */
    char *uri;                /* CALL_READ */
    void *item_ud;            /* the registered item's user data */
    atomic_bool cancelled;    /* set by notifications/cancelled */
    double last_progress;     /* last progress value sent, for monotonicity */
    bool sent_progress;       /* any progress sent yet */
    mcp_era era;              /* how to answer; era.caps points at caps or the session's */
    json_t *caps;             /* modern: the request's clientCapabilities (owned), or NULL */
    json_t *answers;          /* modern: inputResponses so far, by key (owned), or NULL */
    json_t *asks;             /* modern: inputRequests this round, by key (owned), or NULL */
    json_t *missing_caps;     /* capabilities the call needed and the client lacks, or NULL */
    char *binding;            /* modern: what a requestState is bound to (method, name, args) */
    int round;                /* 1, or n when retried with the verified state of round n-1 */
    mcpage_server *srv;       /* the server (calls outlive their session once they are tasks) */
    struct mcp_task *task;    /* the task this call became, or NULL */
    void (*job)(void *ud);    /* CALL_JOB: what to run (no session, no id) */
    void *job_ud;             /* its argument */
    int fail_code;            /* mcpage_call_fail: a JSON-RPC error instead of a result, or 0 */
    char *fail_message;       /* its message (owned) */
    mcpage_caller caller;     /* who sent it (strings owned) */
    union {                   /* the page the runtime began for a window tool (calls.c) */
        mcpage_list *list;    /* tool->window == MCP_WINDOW_LIST */
        mcpage_lines *lines;  /* MCP_WINDOW_LINES */
        mcpage_bytes *bytes;  /* MCP_WINDOW_BYTES */
        mcpage_grid *grid;    /* MCP_WINDOW_GRID */
    } page;                   /* all NULL outside the handler */
};

struct mcpage_server {
    mcpage_server_config cfg;                    /* copy; its strings point into the fields below */
    char *name, *title, *version, *instructions; /* owned copies */
    mcp_tool *tools;                             /* registry vectors */
    size_t ntools, captools;
    mcp_resource *resources;
    size_t nresources, capresources;
    mcpage_resource_provider *providers;
    size_t nproviders, capproviders;
    mcp_template *templates;
    size_t ntemplates, captemplates;
    mcp_prompt *prompts;
    size_t nprompts, capprompts;
    mcpage_complete_fn complete;              /* completion callback, or NULL */
    void *complete_ud;                        /* its user data */
    mcpage_keyring *keyring;                  /* signs everything the server signs */
    bool own_keyring;                         /* we created it */
    mcpage_pager *pager;                      /* the paging contract, signing with keyring */
    uint8_t empty_fp[MCPAGE_FINGERPRINT_LEN]; /* fingerprint of {} for the lists */
    pthread_mutex_t lock;                     /* guards everything below */
    pthread_cond_t work_cv;                   /* signals queued work or stop */
    bool frozen;                              /* a session exists: the registry is read-only */
    mcpage_call *queue_head;                  /* calls waiting for a worker */
    mcpage_call *queue_tail;
    size_t inflight;                 /* calls queued or running */
    pthread_t *threads;              /* the pool */
    int nthreads;                    /* threads started */
    bool stopping;                   /* mcpage_server_free was called */
    pthread_mutex_t sessions_lock;   /* guards sessions (taken before any session's lock) */
    struct mcpage_session *sessions; /* live sessions, for change notifications */
    pthread_mutex_t tasks_lock;      /* guards the tasks (tasks.c) */
    struct mcp_task *tasks;          /* live tasks, newest first */
    size_t ntasks;                   /* their number */
};

struct mcpage_session {
    mcpage_server *srv;        /* the server (borrowed) */
    pthread_mutex_t lock;      /* guards state, the call list, refs, subscriptions */
    pthread_cond_t idle_cv;    /* signals a call finished */
    pthread_mutex_t send_lock; /* serializes the transport */
    mcpage_send_fn send;       /* NULL once detached */
    void *send_ud;             /* its user data */
    bool peer_gone;            /* send failed: drop later messages */
    const mcp_revision *rev;   /* negotiated revision, NULL before initialize */
    bool client_ready;         /* notifications/initialized received */
    mcpage_log_level level;    /* notifications/message threshold */
    mcpage_call *calls;        /* calls in flight (queued or running) */
    size_t ncalls;             /* their number */
    int refs;                  /* 1 for the owner + 1 per call */
    char **subs;               /* subscribed uris */
    size_t nsubs;
    json_t *client_caps;                 /* initialize params.capabilities (object), or NULL */
    const mcp_era *req;                  /* the request being answered on the receiving thread */
    pthread_cond_t reply_cv;             /* signals a response to one of our requests arrived */
    struct mcp_outreq *outreqs;          /* requests we sent to the client, awaiting responses */
    int64_t next_out_id;                 /* id of our next request to the client */
    bool detached;                       /* mcpage_session_free was called: waiters give up */
    mcpage_close_stream_fn close_stream; /* transport hook for mcpage_call_close_stream */
    mcpage_caller caller;                /* who sends the messages received now (borrowed) */
    mcpage_session *srv_next, *srv_prev; /* the server's list of sessions (sessions_lock) */
    struct mcp_listen *listens;          /* open subscriptions/listen requests (lock) */
    size_t nlistens;
};

/* One open subscriptions/listen request (2026-07-28): what its filter asked for. */
typedef struct mcp_listen {
    struct mcp_listen *next;
    json_t *id;        /* the request id: the subscriptionId */
    bool ready;        /* its acknowledgement was sent: changes may follow */
    bool list_changed; /* resourcesListChanged, honoured */
    char **uris;       /* resourceSubscriptions, honoured (no duplicates) */
    size_t nuris;
} mcp_listen;

/* Open listens per session and uris per listen, at most. */
#define MCP_MAX_LISTENS 16

/* A request this server sent to the client (sampling, elicitation, ...). */
typedef struct mcp_outreq {
    struct mcp_outreq *next; /* session list link */
    int64_t id;              /* our request id */
    json_t *result;          /* the response's result, once it came */
    json_t *error;           /* or its error object */
    bool done;               /* a response came */
} mcp_outreq;

/* Most requests to the client one session may have waiting at once. */
#define MCP_MAX_OUTREQS 64

/*
 * server.c: queues a call (takes ownership); MCPAGE_ERANGE when the server
 * is full. A call submitted from one of this server's workers (an
 * in-process client waiting there, such as a page being rendered) runs at
 * once on that thread instead: queued, it could wait behind the very
 * callers that wait for it, until every worker waits.
 */
int mcp_server_submit(mcpage_server *srv, mcpage_call *call);
/*
 * server.c: the next call submitted to srv on this thread, if no other
 * call is in flight, is kept instead of queued (counted against
 * max_inflight all the same), until
 * mcp_server_held() returns it (or NULL) and ends the hold. The stdio
 * transport runs it on its reading thread with mcp_server_run_held()
 * after mcpage_session_receive() returned, sparing the hand-off to a
 * worker (see stdio.c for who keeps reading meanwhile).
 */
void mcp_server_hold(const mcpage_server *srv);
mcpage_call *mcp_server_held(void);
void mcp_server_run_held(mcpage_server *srv, mcpage_call *call);
/*
 * server.c: runs fn(ud) on a worker of the pool (starting it and freezing
 * the registry, as a first session does), queued behind the calls already
 * waiting and counted against max_inflight like them (the HTTP transport
 * renders pages this way). 0, or MCPAGE_ERANGE when the server is full or
 * stopping (fn will not run), MCPAGE_ENOMEM.
 */
int mcp_server_run(mcpage_server *srv, void (*fn)(void *ud), void *ud);
/* server.c: the parsed inputSchema of a registered tool, or NULL (read-only after freeze). */
const json_t *mcp_tool_input_schema(const mcpage_server *srv, const char *name);
/* server.c: starts the pool and freezes the registry. */
int mcp_server_freeze(mcpage_server *srv);

/* session.c: message output. */
void mcp_write_head(jw *w, const json_t *id); /* {"jsonrpc":"2.0","id":..,"result": */
/*
 * Closes the response object and sends it (or -32603 when it could not be
 * built); frees w. A modern era's result gains resultType, the server's
 * identity in _meta and, when `cache` is given, ttlMs and cacheScope.
 */
void mcp_send_result(mcpage_session *s, const mcp_era *era, jw *w, const json_t *id,
                     const mcp_cache *cache);
/* mcp_send_result for the request being answered on the receiving thread (s->req). */
void mcp_send_finish(mcpage_session *s, jw *w, const json_t *id, const mcp_cache *cache);
void mcp_send_error(mcpage_session *s, const json_t *id, int code, const char *message,
                    json_t *data /* stolen, may be NULL */);
/* mcp_send_error with a formatted message (at most 511 bytes). */
void mcp_send_errorf(mcpage_session *s, const json_t *id, int code, json_t *data, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));
/* Sends an empty result ({} plus, for a modern request, what every modern result carries). */
void mcp_send_empty(mcpage_session *s, const json_t *id);
/* Writes "_meta": {"io.modelcontextprotocol/serverInfo": {...}} as a member of an open object. */
void mcp_write_server_meta(jw *w, const mcpage_server *srv);
/*
 * session.c: mcpage_session_receive() for a message a transport already
 * parsed and checked for size and depth (it stays the caller's).
 */
mcpage_received mcp_session_receive_json(mcpage_session *s, const json_t *msg);
/* session.c: the server's capabilities object (initialize, server/discover). */
void mcp_write_capabilities(jw *w, const mcpage_server *srv, bool modern);
/*
 * session.c: takes a call that became a task out of its session (no
 * cancel_all, drain or free reaches it any more) but keeps the session's
 * memory until mcp_session_release(); call->s stays set until then.
 */
void mcp_call_detach(mcpage_call *call);
/* session.c: marks a call as a task (under the session's lock, which cancel_all reads it under). */
void mcp_call_became_task(mcpage_call *call, struct mcp_task *task);
void mcp_session_release(mcpage_session *s);
/* session.c: drops a finished call from the session and frees it. */
void mcp_call_finish(mcpage_call *call);

/*
 * calls.c: runs a call on a worker thread. Then the caller calls
 * mcp_call_finish, unless this returns true: the call became a task that
 * waits for input, and the task holds it until it runs again.
 */
bool mcp_call_run(mcpage_call *call);
/* calls.c: frees a call's own memory. */
void mcp_call_free(mcpage_call *call);

/* lists.c: the four catalog lists. */
void mcp_list_tools(mcpage_session *s, const json_t *id, const json_t *params);
void mcp_list_resources(mcpage_session *s, const json_t *id, const json_t *params);
void mcp_list_templates(mcpage_session *s, const json_t *id, const json_t *params);
void mcp_list_prompts(mcpage_session *s, const json_t *id, const json_t *params);
/* lists.c: completion/complete. */
void mcp_complete(mcpage_session *s, const json_t *id, const json_t *params);

/* modern.c: the modern era's request checks, server/discover and request state. */
/*
 * Reads a modern request's _meta into *era (caps borrowed from params);
 * returns 0, or answers the error (-32602, -32022) and returns -1.
 */
int mcp_modern_era(mcpage_session *s, const json_t *id, const json_t *params, mcp_era *era);
/* server/discover. */
void mcp_discover(mcpage_session *s, const json_t *id, const json_t *params);
/* The cache hints of the registry's lists (tools, prompts, templates; constant per process). */
mcp_cache mcp_catalog_cache(const mcpage_server *srv);
/* The cache hints of resources/list and resources/read. */
mcp_cache mcp_resource_cache(const mcpage_server *srv);
/*
 * Prepares a modern call for tools/call, resources/read or prompts/get:
 * binds it to (method, name, arguments), opens params.requestState (when
 * present) and merges its answers with params.inputResponses. 0, or
 * answers -32602 and returns -1.
 */
int mcp_call_prepare_input(mcpage_session *s, mcpage_call *call, const char *method,
                           const char *name, const json_t *params);
/* Sends an InputRequiredResult for a call that asked for input (call->asks). */
void mcp_send_input_required(mcpage_call *call);
/* Sends -32021 naming call->missing_caps. */
void mcp_send_missing_caps(mcpage_call *call);

/* tasks.c: the io.modelcontextprotocol/tasks extension. */
#define MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"
/* True when a tool of the registry may run as a task (the extension is offered). */
bool mcp_tasks_offered(const mcpage_server *srv);
/* True when capabilities declare the extension. */
bool mcp_tasks_declared(const json_t *caps);
/* Answers -32021 naming the tasks extension. */
void mcp_tasks_required(mcpage_session *s, const json_t *id);
/* tasks/get, tasks/update, tasks/cancel. */
void mcp_tasks_get(mcpage_session *s, const json_t *id, const json_t *params);
void mcp_tasks_update(mcpage_session *s, const json_t *id, const json_t *params);
void mcp_tasks_cancel(mcpage_session *s, const json_t *id, const json_t *params);
/*
 * At the end of a run of a call that is a task: stores its result, error
 * or questions; true when the task now waits for input and holds the call.
 */
bool mcp_task_settle(mcpage_call *call, mcpage_result *res);
/* Cancels every running task (the server is going away). */
void mcp_tasks_stop(mcpage_server *srv);
/* Frees every task (the server is going away; no worker runs). */
void mcp_tasks_free(mcpage_server *srv);

/* Level names as the protocol spells them. */
const char *mcp_level_name(mcpage_log_level l);
int mcp_level_parse(const char *name, mcpage_log_level *out);

#endif
