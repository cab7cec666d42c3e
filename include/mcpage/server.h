/*
 * mcpage server: an MCP (Model Context Protocol) server runtime in C.
 *
 * A server holds a configuration and a registry of tools, resources,
 * resource templates and prompts. A session speaks the protocol with one
 * client over any transport: it takes one JSON-RPC message at a time and
 * hands every response and notification to a send function. The stdio
 * transport is one call:
 *
 *     static int echo(mcpage_call *call, const json_t *args, mcpage_result *res)
 *     {
 *         const char *text = json_string_value(json_object_get(args, "text"));
 *         return mcpage_result_add_text(res, text, strlen(text));
 *     }
 *
 *     int main(void)
 *     {
 *         mcpage_server_config cfg;
 *         mcpage_server_config_init(&cfg, "echo-server", "1.0.0");
 *         mcpage_server *srv;
 *         if (mcpage_server_new(&cfg, &srv) != 0)
 *             return 1;
 *         mcpage_tool tool = {
 *             .name = "echo", .description = "Echoes its text.",
 *             .input_schema = "{\"type\":\"object\",\"properties\":"
 *                             "{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
 *             .handler = echo,
 *         };
 *         mcpage_server_add_tool(srv, &tool);
 *         int rc = mcpage_serve_stdio(srv, 0, 1);
 *         mcpage_server_free(srv);
 *         return rc == 0 ? 0 : 1;
 *     }
 *
 * Ownership: every descriptor passed to a registration function is
 * copied (strings included); the caller may free it after the call.
 * User data pointers are borrowed and must outlive the server.
 *
 * Threads: tool calls, resource reads and prompt gets run on the
 * server's worker pool, so handlers must be thread-safe with respect to
 * their user data. List providers and the completion callback run on the
 * thread that called mcpage_session_receive(). Register everything
 * before the first session is created: the registry is then frozen
 * (registration returns MCPAGE_ESTATE) so that it can be read without
 * locks.
 */
#ifndef MCPAGE_SERVER_H
#define MCPAGE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/cursor.h>
#include <mcpage/mcpage.h>
#include <mcpage/page.h>
#include <mcpage/result.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpage_server mcpage_server;   /* opaque: configuration + registry */
typedef struct mcpage_session mcpage_session; /* opaque: one client connection */
typedef struct mcpage_call mcpage_call;       /* opaque: one request being handled */

/* ---------------------------------------------------------------- config */

/* Defaults of mcpage_server_config_init(). */
#define MCPAGE_DEFAULT_MAX_MESSAGE    ((size_t)4 << 20)
#define MCPAGE_DEFAULT_MAX_DEPTH      64
#define MCPAGE_DEFAULT_PAGE_SIZE      100
#define MCPAGE_DEFAULT_MAX_INFLIGHT   64
#define MCPAGE_DEFAULT_WORKERS        4
#define MCPAGE_DEFAULT_CATALOG_TTL_MS 300000

/* MCP log levels (RFC 5424 severities), lowest first. */
typedef enum mcpage_log_level {
    MCPAGE_LOG_DEBUG = 0,
    MCPAGE_LOG_INFO,
    MCPAGE_LOG_NOTICE,
    MCPAGE_LOG_WARNING,
    MCPAGE_LOG_ERROR,
    MCPAGE_LOG_CRITICAL,
    MCPAGE_LOG_ALERT,
    MCPAGE_LOG_EMERGENCY
} mcpage_log_level;

typedef struct mcpage_server_config {
    const char *name;           /* serverInfo.name (required) */
    const char *title;          /* serverInfo.title, or NULL */
    const char *version;        /* serverInfo.version (required) */
    const char *instructions;   /* initialize result instructions, or NULL */
    size_t page_size;           /* items per page of the four catalog lists */
    size_t max_message;         /* largest accepted message in bytes */
    int max_depth;              /* deepest accepted JSON nesting (1 to 1000) */
    size_t max_inflight;        /* calls queued or running per server; more get -32000 */
    int workers;                /* worker threads for calls (1 to 256) */
    mcpage_log_level log_level; /* threshold until the client sends logging/setLevel */
    bool validate_output;       /* check structuredContent against outputSchema */
    int64_t catalog_ttl_ms;  /* 2026-07-28 ttlMs of tools/list, prompts/list, templates, discover */
    int64_t resource_ttl_ms; /* 2026-07-28 ttlMs of resources/list and resources/read */
    bool resources_public;   /* cacheScope "public" for resources (default "private") */
    /* Borrowed: the one key of everything the server signs (tool cursors of
       its pager, catalog list cursors, HTTP session ids, 2026-07-28
       requestStates); NULL = a fresh random key for this process. See docs/keys.md. */
    mcpage_keyring *keyring;
    void *user_data; /* returned by mcpage_call_server_data() */
    /* Settings of the server's pager (mcpage_server_pager()), copied; NULL = defaults. */
    const mcpage_pager_config *pager;
    /* The resource list changes while serving and the application calls
       mcpage_server_resources_list_changed(): capabilities say resources.listChanged
       and subscriptions/listen honours resourcesListChanged. */
    bool resources_list_changed;
} mcpage_server_config;

/*
 * Fills `cfg` with the defaults above; `name` and `version` are stored
 * as given (borrowed until mcpage_server_new copies them).
 * validate_output is on when the library was built without NDEBUG.
 * catalog_ttl_ms is MCPAGE_DEFAULT_CATALOG_TTL_MS (the registry is frozen
 * while the process runs, so only a restart changes it); resource_ttl_ms
 * is 0 (resources may change at any time: tell clients to ask again).
 */
MCPAGE_API void mcpage_server_config_init(mcpage_server_config *cfg, const char *name,
                                          const char *version);

/*
 * Creates a server; the configuration is copied. The server also makes
 * its pager, which signs tool cursors with cfg->keyring: one key for
 * everything the server signs.
 */
MCPAGE_API int mcpage_server_new(const mcpage_server_config *cfg, mcpage_server **out);
/*
 * The server's pager (owned by the server): the paging contract's
 * settings (cfg->pager) with the server's keyring. Handlers reach it with
 * mcpage_call_pager().
 */
MCPAGE_API const mcpage_pager *mcpage_server_pager(const mcpage_server *srv);
/* The keyring that signs everything the server signs (cfg->keyring, or its own). */
MCPAGE_API const mcpage_keyring *mcpage_server_keyring(const mcpage_server *srv);
/*
 * Stops the worker pool (waiting for running calls) and frees the server.
 * Free every session first.
 */
MCPAGE_API void mcpage_server_free(mcpage_server *srv);

/* ----------------------------------------------------------------- tools */

/*
 * A tool handler. `args` are the call's arguments, already validated
 * against the inputSchema with its defaults filled in (never NULL; an
 * object). Fill `res`. Returning non-zero, or setting isError, makes the
 * result an error result (never a JSON-RPC error); when the handler
 * returns non-zero and left `res` empty, the runtime adds a text block
 * naming the status.
 */
typedef int (*mcpage_tool_fn)(mcpage_call *call, const json_t *args, mcpage_result *res);

/*
 * Whether a tool may run as a task (the io.modelcontextprotocol/tasks
 * extension of revision 2026-07-28): the handler decides per call with
 * mcpage_call_task().
 */
typedef enum mcpage_task_support {
    MCPAGE_TASKS_NONE = 0, /* always answers in the request */
    MCPAGE_TASKS_OPTIONAL, /* may become a task for clients that declare the extension */
    MCPAGE_TASKS_REQUIRED  /* clients without the extension get -32021 before it runs */
} mcpage_task_support;

/* Tool annotations: hints for the client, not guarantees. */
typedef enum mcpage_hint {
    MCPAGE_HINT_UNSET = 0, /* not sent */
    MCPAGE_HINT_FALSE,     /* sent as false */
    MCPAGE_HINT_TRUE       /* sent as true */
} mcpage_hint;

typedef struct mcpage_tool {
    const char *name;          /* required: unique, 1-128 chars of [A-Za-z0-9_.-] */
    const char *title;         /* optional human title */
    const char *description;   /* optional but strongly advised */
    const char *input_schema;  /* JSON text of an object schema; NULL = no arguments */
    const char *output_schema; /* JSON text of an object schema, or NULL */
    mcpage_hint read_only;     /* annotations.readOnlyHint */
    mcpage_hint destructive;   /* annotations.destructiveHint */
    mcpage_hint idempotent;    /* annotations.idempotentHint */
    mcpage_hint open_world;    /* annotations.openWorldHint */
    mcpage_tool_fn handler;    /* required */
    void *user_data;           /* returned by mcpage_call_data() */
    mcpage_task_support tasks; /* task support (default MCPAGE_TASKS_NONE) */
    /* When > 0, tools/list declares _meta["anthropic/maxResultSizeChars"]:
       Claude Code keeps a result up to this many characters inline instead
       of saving it to a file past 50,000 (it honours up to 500,000). A
       paging tool passes its pager's max_chars, the ceiling of each copy. */
    int64_t max_result_chars;
    /* JSON text of an object written as the tool's _meta in tools/list (merged
       with the key max_result_chars writes), or NULL. An MCP App (extension
       io.modelcontextprotocol/ui) links a tool to its view here:
       {"ui":{"resourceUri":"ui://server/view.html"}}, and marks a tool that
       only the view may call with "visibility":["app"] (docs/app.md).
       MCPAGE_EPARSE when it is not a JSON object. */
    const char *meta;
} mcpage_tool;

/* Registers a tool. MCPAGE_EEXIST for a duplicate name, MCPAGE_EPARSE for a bad schema. */
MCPAGE_API int mcpage_server_add_tool(mcpage_server *srv, const mcpage_tool *tool);

/*
 * Registers a paginating tool with its window, in one call: the
 * inputSchema is the tool's own (tool->input_schema: an object schema
 * with the tool's other parameters, or NULL for none) plus the window
 * parameters the spec describes (as mcpage_list_schema() and its
 * siblings write them, from the server's pager), with
 * "additionalProperties": false unless the tool's schema says otherwise.
 * An invalid window is then answered the same way whichever layer sees
 * it first: when the runtime's schema check rejects a call, the builder
 * judges the arguments, and its isError result (the parameter, what is
 * expected with the range, one valid example call) is the answer.
 *
 * The runtime runs the page around the handler: it begins the page from
 * the call's arguments before the handler runs (a window the builder
 * rejects is answered with that isError result, and the handler does not
 * run); the handler takes the open page with mcpage_call_list() (or
 * mcpage_call_lines(), _bytes(), _grid()), queries its data with the
 * window, adds units and sets the total, and returns 0 (or
 * MCPAGE_PAGE_FULL); the runtime then finishes the page into the result.
 * When the handler returns a negative status or writes an error result
 * itself (mcpage_result_errorf()), the page is dropped. The handler must
 * not begin or finish a page of its own.
 *
 * `spec` is borrowed and must outlive the server; spec->tool must be the
 * tool's name. MCPAGE_EINVAL for a spec that names another tool or that
 * breaks its own rules, or a tool schema that declares a window
 * parameter itself; else as mcpage_server_add_tool().
 */
MCPAGE_API int mcpage_server_add_list_tool(mcpage_server *srv, const mcpage_tool *tool,
                                           const mcpage_list_spec *spec);
/* As mcpage_server_add_list_tool(), for a CONTENT-line tool. */
MCPAGE_API int mcpage_server_add_lines_tool(mcpage_server *srv, const mcpage_tool *tool,
                                            const mcpage_lines_spec *spec);
/* As mcpage_server_add_list_tool(), for a CONTENT-byte tool. */
MCPAGE_API int mcpage_server_add_bytes_tool(mcpage_server *srv, const mcpage_tool *tool,
                                            const mcpage_bytes_spec *spec);
/* As mcpage_server_add_list_tool(), for a SPATIAL tool. */
MCPAGE_API int mcpage_server_add_grid_tool(mcpage_server *srv, const mcpage_tool *tool,
                                           const mcpage_grid_spec *spec);

/* ------------------------------------------------------------- resources */

typedef struct mcpage_contents mcpage_contents; /* opaque: resources/read contents */

/* Appends a text content item. */
MCPAGE_API int mcpage_contents_add_text(mcpage_contents *c, const char *uri, const char *mime_type,
                                        const char *text, size_t len);
/* Appends a binary content item (base64-encoded here). */
MCPAGE_API int mcpage_contents_add_blob(mcpage_contents *c, const char *uri, const char *mime_type,
                                        const void *data, size_t len);

/*
 * Reads one resource. Return 0 after adding contents, MCPAGE_ENOTFOUND
 * when the uri is not yours (the client gets -32002), or another status
 * (-32603). For a template, mcpage_call_args() holds its variables.
 */
typedef int (*mcpage_read_fn)(mcpage_call *call, const char *uri, mcpage_contents *out);

/* A resource as listed. */
typedef struct mcpage_resource {
    const char *uri;         /* required */
    const char *name;        /* required */
    const char *title;       /* optional */
    const char *description; /* optional */
    const char *mime_type;   /* optional */
    int64_t size;            /* bytes, or -1 when unknown */
    mcpage_read_fn read;     /* required when registered on its own */
    void *user_data;         /* returned by mcpage_call_data() */
    /* JSON text of an object, the resource's _meta: written in resources/list
       and on every resources/read contents item whose uri is this resource's
       (registered resources only), or NULL. An MCP App view declares its
       sandbox here: {"ui":{"csp":{},"prefersBorder":false}} (docs/app.md).
       MCPAGE_EPARSE when it is not a JSON object. */
    const char *meta;
} mcpage_resource;

/* The MIME type of an MCP App view (a ui:// resource of HTML). A server that
   registers a resource of this type declares the extension
   io.modelcontextprotocol/ui in its capabilities. */
#define MCPAGE_APP_MIME_TYPE "text/html;profile=mcp-app"
/* The extension identifier of MCP Apps (SEP-1865). */
#define MCPAGE_APP_EXTENSION "io.modelcontextprotocol/ui"

/* Registers one resource (copied). MCPAGE_EEXIST for a duplicate uri, MCPAGE_EINVAL
   without uri, name or read, MCPAGE_EPARSE for a meta that is not a JSON object. */
MCPAGE_API int mcpage_server_add_resource(mcpage_server *srv, const mcpage_resource *res);

/*
 * A resource provider lists a large or changing set page by page. The
 * list callback adds up to `limit` resources that follow the position
 * `after` (NULL for the first page) in its own stable order, each with
 * the key that resumes after it (at most MCPAGE_CURSOR_MAX_STR_BYTES
 * bytes; NULL = the uri). The runtime asks for one more than it shows to
 * learn whether more follow.
 */
typedef struct mcpage_resource_page mcpage_resource_page; /* opaque */
MCPAGE_API int mcpage_resource_page_add(mcpage_resource_page *page, const mcpage_resource *res,
                                        const char *key);

typedef int (*mcpage_list_fn)(void *user_data, const char *after, size_t after_len, size_t limit,
                              mcpage_resource_page *page);

typedef struct mcpage_resource_provider {
    mcpage_list_fn list; /* required */
    mcpage_read_fn read; /* required: MCPAGE_ENOTFOUND for uris it does not own */
    void *user_data;     /* passed to list; returned by mcpage_call_data() in read */
} mcpage_resource_provider;

/* Registers a provider (copied; at most 64, else MCPAGE_ERANGE); resources/list shows
   the single resources first, then each provider's in turn. */
MCPAGE_API int mcpage_server_add_resource_provider(mcpage_server *srv,
                                                   const mcpage_resource_provider *p);

/* A resource template (RFC 6570, level 1: {var} expansions). */
typedef struct mcpage_resource_template {
    const char *uri_template; /* required, e.g. "notes://{id}/text" */
    const char *name;         /* required */
    const char *title;        /* optional */
    const char *description;  /* optional */
    const char *mime_type;    /* optional */
    mcpage_read_fn read;      /* required: reads a matching uri */
    void *user_data;          /* returned by mcpage_call_data() */
} mcpage_resource_template;

/* Registers a template (copied). MCPAGE_EINVAL without uri_template, name or read. */
MCPAGE_API int mcpage_server_add_resource_template(mcpage_server *srv,
                                                   const mcpage_resource_template *t);

/*
 * Matches `uri` against a level-1 template; on a match stores a new
 * object of the (percent-decoded) variables in *vars (caller frees with
 * json_decref) and returns 0, else MCPAGE_ENOTFOUND.
 */
MCPAGE_API int mcpage_uri_template_match(const char *tmpl, const char *uri, json_t **vars);
/* Expands a level-1 template with string values from `vars`; free with mcpage_free(). */
MCPAGE_API char *mcpage_uri_template_expand(const char *tmpl, const json_t *vars);

/* --------------------------------------------------------------- prompts */

typedef struct mcpage_prompt_messages mcpage_prompt_messages; /* opaque */

/* Appends a message with a text content block; role is "user" or "assistant". */
MCPAGE_API int mcpage_prompt_add_text(mcpage_prompt_messages *m, const char *role,
                                      const char *text);
/* Appends a message with any content block (copied). */
MCPAGE_API int mcpage_prompt_add_content(mcpage_prompt_messages *m, const char *role,
                                         const json_t *content);
MCPAGE_API int mcpage_prompt_set_description(mcpage_prompt_messages *m, const char *description);

/* Builds a prompt; `args` holds the string arguments (required ones checked). */
typedef int (*mcpage_prompt_fn)(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out);

typedef struct mcpage_prompt_arg {
    const char *name;        /* required */
    const char *title;       /* optional */
    const char *description; /* optional */
    bool required;           /* prompts/get without it is -32602 */
} mcpage_prompt_arg;

#define MCPAGE_PROMPT_MAX_ARGS 32

typedef struct mcpage_prompt {
    const char *name;                               /* required, unique */
    const char *title;                              /* optional */
    const char *description;                        /* optional */
    mcpage_prompt_arg args[MCPAGE_PROMPT_MAX_ARGS]; /* first `nargs` used */
    int nargs;                                      /* 0 to MCPAGE_PROMPT_MAX_ARGS */
    mcpage_prompt_fn handler;                       /* required */
    void *user_data;                                /* returned by mcpage_call_data() */
} mcpage_prompt;

/* Registers a prompt (copied). MCPAGE_EEXIST for a duplicate name, MCPAGE_EINVAL for
   a missing name, handler or argument name. */
MCPAGE_API int mcpage_server_add_prompt(mcpage_server *srv, const mcpage_prompt *p);

/* ------------------------------------------------------------ completion */

typedef struct mcpage_completion mcpage_completion; /* opaque: the values to return */

/* Adds a value; past 100 values it only counts toward total and sets hasMore. */
MCPAGE_API int mcpage_completion_add(mcpage_completion *c, const char *value);

/* What completion/complete asks for. */
typedef struct mcpage_completion_request {
    bool is_prompt;        /* ref/prompt (else ref/resource) */
    const char *ref;       /* the prompt name or the template uri */
    const char *argument;  /* the argument or template variable being completed */
    const char *value;     /* what the user typed so far */
    const json_t *context; /* context.arguments: already resolved values, or NULL */
} mcpage_completion_request;

typedef int (*mcpage_complete_fn)(void *user_data, const mcpage_completion_request *req,
                                  mcpage_completion *out);

/* Enables the completions capability with one callback for all prompts and templates. */
MCPAGE_API int mcpage_server_set_completion(mcpage_server *srv, mcpage_complete_fn fn,
                                            void *user_data);

/* ------------------------------------------------------------ the call */

/* The tool arguments, prompt arguments or template variables (an object). */
MCPAGE_API const json_t *mcpage_call_args(const mcpage_call *call);
/* The registered item's user_data. */
MCPAGE_API void *mcpage_call_data(const mcpage_call *call);
/* The server's config user_data. */
MCPAGE_API void *mcpage_call_server_data(const mcpage_call *call);
/*
 * Who sent a request, as its transport authenticated it
 * (mcpage_session_set_caller). Every field NULL / false when nobody was
 * named: stdio, an HTTP server without authentication.
 */
typedef struct mcpage_caller {
    const char *subject; /* an OAuth access token's `sub`; NULL for the static token */
    const char *scopes;  /* its scopes, space-separated, or NULL */
    const char *groups;  /* its `groups` claim, one group a line, or NULL */
    bool all;            /* the static bearer token: its one user may do anything */
} mcpage_caller;
/* The caller of this call (never NULL; its strings live as long as the call). */
MCPAGE_API const mcpage_caller *mcpage_call_caller(const mcpage_call *call);
/* The server's pager (mcpage_server_pager()), for the page builders. */
MCPAGE_API const mcpage_pager *mcpage_call_pager(const mcpage_call *call);
/*
 * The page the runtime began for a tool registered with its window
 * (mcpage_server_add_list_tool() and its siblings), open while the
 * handler runs and finished by the runtime after it; NULL for a tool of
 * another family or without a window.
 */
MCPAGE_API mcpage_list *mcpage_call_list(mcpage_call *call);
MCPAGE_API mcpage_lines *mcpage_call_lines(mcpage_call *call);
MCPAGE_API mcpage_bytes *mcpage_call_bytes(mcpage_call *call);
MCPAGE_API mcpage_grid *mcpage_call_grid(mcpage_call *call);
/* True once the client cancelled this request (the response will be dropped). */
MCPAGE_API bool mcpage_call_cancelled(const mcpage_call *call);
/*
 * Sends notifications/progress when the request carried a progressToken
 * (else does nothing and returns 0). `progress` must grow from call to
 * call; `total` <= 0 means unknown; `message` may be NULL.
 */
MCPAGE_API int mcpage_call_progress(mcpage_call *call, double progress, double total,
                                    const char *message);
/* Sends notifications/message when `level` passes the session's threshold. */
MCPAGE_API int mcpage_call_log(mcpage_call *call, mcpage_log_level level, const char *logger,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The client's capabilities as sent in initialize (an object; borrowed,
 * valid during the call), or NULL when it sent none.
 */
MCPAGE_API const json_t *mcpage_call_client_capabilities(const mcpage_call *call);

/* True when the request speaks a modern revision (2026-07-28: no session, per-request _meta). */
MCPAGE_API bool mcpage_call_is_modern(const mcpage_call *call);

/*
 * Asks the client for input from inside a call, the same way in both
 * eras: `method` is "elicitation/create", "sampling/createMessage" or
 * "roots/list" (other methods: legacy only, as mcpage_call_request()),
 * `params` its params (borrowed, may be NULL), `key` names this question
 * within the call (1 to 64 bytes, unique per question).
 *
 * Legacy era: sends the request and waits, as mcpage_call_request().
 * Modern era: returns 0 with the client's answer when the client sent it
 * (params.inputResponses[key], or an earlier round's answer carried in the
 * signed requestState); otherwise records the question and returns
 * MCPAGE_EINPUT. Return from the handler then (any status): the runtime
 * answers an InputRequiredResult with every question recorded this round
 * and a requestState signed with the server's keyring, and runs the
 * handler again from the start when the client retries with the answers.
 * A handler may ask several questions before returning, to ask them in
 * one round. So handlers must be repeatable until their questions are
 * answered (ask before doing anything irreversible).
 *
 * MCPAGE_ENOTSUP when the client did not declare the capability the
 * method needs (sampling, elicitation, roots); *result is then NULL.
 * On success free *result with json_decref.
 */
MCPAGE_API int mcpage_call_input(mcpage_call *call, const char *key, const char *method,
                                 const json_t *params, int timeout_ms, json_t **result);

/*
 * Requires a client capability ("sampling", "elicitation", "roots", ...):
 * 0 when the client declared it; otherwise MCPAGE_ENOTSUP, and once the
 * handler returns the client gets JSON-RPC error -32021 (missing required
 * client capability, with data.requiredCapabilities naming it) instead of
 * a result.
 */
MCPAGE_API int mcpage_call_require(mcpage_call *call, const char *capability);

/*
 * Which attempt of a modern call this is: 1 for a first request, n when
 * the client retried with the verified requestState of attempt n-1.
 * Always 1 in the legacy era.
 */
MCPAGE_API int mcpage_call_round(const mcpage_call *call);

/*
 * Continues this tool call as a task (the io.modelcontextprotocol/tasks
 * extension): the client gets a CreateTaskResult at once and polls
 * tasks/get; what the handler returns from now on becomes the task's
 * result. Progress and log notifications stop (the request they belonged
 * to is answered). mcpage_call_input() then parks the task in
 * input_required until tasks/update answers every question, and the
 * handler runs again from the start with the answers (as in the modern
 * era's retries). mcpage_call_cancelled() turns true on tasks/cancel.
 * Tasks live in this process for MCPAGE_TASK_TTL_MS.
 *
 * 0 when the call is a task (also when it already was); MCPAGE_ENOTSUP
 * when it cannot be one (the tool was registered without task support,
 * the request is not of the modern era, or the client did not declare the
 * extension): then go on and answer in the request. MCPAGE_ERANGE when
 * MCPAGE_MAX_TASKS tasks are live.
 */
MCPAGE_API int mcpage_call_task(mcpage_call *call);

/* How long a task stays readable by tasks/get, and the polling interval suggested. */
#define MCPAGE_TASK_TTL_MS  3600000
#define MCPAGE_TASK_POLL_MS 500
/* Most tasks one server holds at once. */
#define MCPAGE_MAX_TASKS 10000

/*
 * Ends the call with a JSON-RPC error instead of a result (a protocol
 * failure, not a tool error: for those return an isError result). A task
 * moves to "failed" with this error. `code` is a JSON-RPC error code
 * (-32603 for an internal error); `message` is copied.
 */
MCPAGE_API int mcpage_call_fail(mcpage_call *call, int code, const char *message);

/* Longest wait mcpage_call_request() accepts, in milliseconds. */
#define MCPAGE_REQUEST_MAX_TIMEOUT_MS 600000

/*
 * Sends a request to the client from inside a call (sampling/createMessage,
 * elicitation/create, roots/list) and waits for its response, for at most
 * `timeout_ms` (1 to MCPAGE_REQUEST_MAX_TIMEOUT_MS). The request belongs
 * to the call (on HTTP it travels on the call's stream). `params` is
 * borrowed, may be NULL. On success returns 0 and stores the response's
 * result in *result (free with json_decref). When the client answered
 * with a JSON-RPC error, returns MCPAGE_EIO and stores the error object
 * in *result. MCPAGE_ECANCELED when the call was cancelled or the session
 * ended while waiting, MCPAGE_ESTATE on timeout (the late response is
 * then ignored), MCPAGE_ERANGE when 64 requests of this session already
 * wait. Only for handlers running on the worker pool.
 */
MCPAGE_API int mcpage_call_request(mcpage_call *call, const char *method, const json_t *params,
                                   int timeout_ms, json_t **result);

/*
 * Asks the transport to close the connection that carries this call's
 * messages without ending the call (HTTP: the POST's SSE stream, so the
 * client reconnects with Last-Event-ID and gets the rest by replay;
 * SEP-1699 polling). Does nothing on transports without that notion
 * (stdio). Returns 0.
 */
MCPAGE_API int mcpage_call_close_stream(mcpage_call *call);

/* ------------------------------------------------------------ sessions */

/*
 * The transport's output: one complete JSON-RPC message of `len` bytes
 * (no trailing newline; the bytes are valid during the call only).
 * `related_id` is the compact JSON text of the request id the message
 * answers or belongs to (a response, or progress and log notifications
 * sent while that request ran: "7", "\"abc\""), or NULL; an HTTP
 * transport uses it to pick the stream. Called from any thread but never
 * concurrently for one session. Return 0, or non-zero when the peer is
 * gone (later sends are dropped).
 */
typedef int (*mcpage_send_fn)(void *ud, const char *msg, size_t len, const char *related_id);

/*
 * The transport's hook for mcpage_call_close_stream(): closes the
 * connection carrying the messages related to `related_id` (see
 * mcpage_send_fn). Called from a worker thread.
 */
typedef void (*mcpage_close_stream_fn)(void *ud, const char *related_id);

/* Creates a session; freezes the server's registry. */
MCPAGE_API int mcpage_session_new(mcpage_server *srv, mcpage_send_fn send, void *ud,
                                  mcpage_session **out);
/* What mcpage_session_receive() made of a message. */
typedef enum mcpage_received {
    MCPAGE_RECEIVED_NOTIFICATION = 0, /* a notification or a response: no reply is sent */
    MCPAGE_RECEIVED_REQUEST = 1,      /* a request: its response (result or error) is sent,
                                         now or later, with its id as related_id */
    MCPAGE_RECEIVED_INVALID = 2       /* rejected: the error reply was sent before returning */
} mcpage_received;

/*
 * Handles one message (a JSON-RPC request, notification or response).
 * Replies synchronously, except for tools/call, resources/read and
 * prompts/get, which run on the worker pool and reply later from a
 * worker thread. Call it from one thread at a time.
 */
MCPAGE_API mcpage_received mcpage_session_receive(mcpage_session *s, const char *msg, size_t len);
/* Installs the transport's close-stream hook (before the first message). */
MCPAGE_API void mcpage_session_set_close_stream(mcpage_session *s, mcpage_close_stream_fn fn);
/*
 * Names who sends the messages the transport hands over next, until it
 * is called again (NULL: nobody): each call begun meanwhile keeps a copy
 * (mcpage_call_caller). The transport calls it around each receive, on
 * the receiving thread.
 */
MCPAGE_API void mcpage_session_set_caller(mcpage_session *s, const mcpage_caller *who);
/* Requests cancellation of every call in flight (their responses are dropped). */
MCPAGE_API void mcpage_session_cancel_all(mcpage_session *s);
/*
 * Waits until no call of this session is in flight, for at most
 * `timeout_ms` (negative = forever). 0 when idle, else MCPAGE_ESTATE.
 */
MCPAGE_API int mcpage_session_drain(mcpage_session *s, int timeout_ms);
/*
 * Detaches the session from its transport (no send after this returns)
 * and frees it once its last call finishes.
 */
MCPAGE_API void mcpage_session_free(mcpage_session *s);

/* True once initialize succeeded. */
MCPAGE_API bool mcpage_session_initialized(const mcpage_session *s);
/* The negotiated protocol version ("2025-11-25"), or NULL before initialize. */
MCPAGE_API const char *mcpage_session_protocol_version(const mcpage_session *s);
/* The capabilities the client declared at initialize (borrowed), or NULL. */
MCPAGE_API const json_t *mcpage_session_client_capabilities(const mcpage_session *s);
/*
 * Puts a new session in the state initialize and notifications/initialized
 * would leave it in, with `protocol_version` (a supported revision) and
 * `client_caps` (an object, copied, or NULL): what a transport does when a
 * client continues, on this process, a session that another process (or
 * an earlier run) opened; the HTTP transport's signed session ids carry
 * both values. MCPAGE_EINVAL for an unsupported version or caps that are
 * not an object, MCPAGE_ESTATE when the session is already initialized.
 */
MCPAGE_API int mcpage_session_restore(mcpage_session *s, const char *protocol_version,
                                      const json_t *client_caps);
/* Sends a notifications/message outside any call (e.g. from a transport). */
MCPAGE_API int mcpage_session_log(mcpage_session *s, mcpage_log_level level, const char *logger,
                                  const char *text);
/* Sends notifications/resources/updated when the client subscribed to `uri`. */
MCPAGE_API int mcpage_session_resource_updated(mcpage_session *s, const char *uri);

/*
 * Change notifications to every session of the server, on any transport,
 * from any thread (docs/runtime.md, "Change notifications"):
 * - mcpage_server_resources_list_changed: when cfg.resources_list_changed,
 *   notifications/resources/list_changed to every initialized 2025-11-25
 *   session and on every subscriptions/listen (2026-07-28) whose filter
 *   asked for resourcesListChanged; 0 and nothing sent otherwise;
 * - mcpage_server_resource_updated: notifications/resources/updated for
 *   `uri` to the sessions that subscribed to it (resources/subscribe) and
 *   on every listen whose resourceSubscriptions names it (exact match).
 * A listen's notifications carry _meta["io.modelcontextprotocol/
 * subscriptionId"], the listen's request id. The number of notifications
 * sent, or MCPAGE_EINVAL. Sending never waits on an HTTP client (its
 * stream buffers); on stdio it writes to the client's pipe.
 */
MCPAGE_API int mcpage_server_resources_list_changed(mcpage_server *srv);
MCPAGE_API int mcpage_server_resource_updated(mcpage_server *srv, const char *uri);
/*
 * The distinct uris some session subscribed to now, either way
 * (resources/subscribe or an open listen's resourceSubscriptions), so an
 * application that learns of changes only by looking (another process
 * wrote a shared store) checks just those: *uris is an array of *n
 * strings, freed with mcpage_server_subscriptions_free. 0, MCPAGE_EINVAL
 * or MCPAGE_ENOMEM.
 */
MCPAGE_API int mcpage_server_subscriptions(mcpage_server *srv, char ***uris, size_t *n);
/* Frees what mcpage_server_subscriptions returned. */
MCPAGE_API void mcpage_server_subscriptions_free(char **uris, size_t n);

/* True when `version` is a protocol revision this library speaks. */
MCPAGE_API bool mcpage_protocol_supported(const char *version);
/* The newest legacy revision (initialize era) this library speaks: "2025-11-25". */
MCPAGE_API const char *mcpage_protocol_latest(void);
/* The newest modern revision (per-request _meta, no initialize): "2026-07-28". */
MCPAGE_API const char *mcpage_protocol_modern(void);
/* True when `version` is a modern revision (its requests carry _meta, no session). */
MCPAGE_API bool mcpage_protocol_is_modern(const char *version);

/* ------------------------------------------------------------ stdio */

typedef struct mcpage_stdio_options {
    int stop_fd;         /* readable (or closed) means stop, as on SIGTERM; -1 = none */
    bool handle_signals; /* stop on SIGTERM/SIGINT (blocked in the calling thread) */
    int grace_ms;        /* on stop: wait this long for running calls, then cancel */
} mcpage_stdio_options;

/*
 * Serves one session over newline-delimited JSON-RPC on the two file
 * descriptors until end of input (waits for every call, then returns 0),
 * a stop signal (returns 0 within about a second: running calls get
 * grace_ms to finish and are then cancelled), or an I/O error
 * (MCPAGE_EIO). Nothing but MCP goes to out_fd; diagnostics go to stderr.
 * mcpage_serve_stdio() uses a 300 ms grace period and handles signals.
 * Returns MCPAGE_ESTATE when calls ignored cancellation and were still
 * running at exit: then do not free the server; exit the process.
 * SIGPIPE is blocked in the calling thread and the workers.
 */
MCPAGE_API int mcpage_serve_stdio(mcpage_server *srv, int in_fd, int out_fd);
MCPAGE_API int mcpage_serve_stdio_ex(mcpage_server *srv, int in_fd, int out_fd,
                                     const mcpage_stdio_options *opts);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_SERVER_H */
