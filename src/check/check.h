/*
 * The paging and host-fit checker behind `mcpage check` (design in
 * docs/check.md). It talks to any MCP server through a check_transport
 * (a child process on stdio, a Streamable HTTP endpoint, or a session in
 * this process for the unit tests), speaks either protocol era, walks
 * the four protocol lists and every paginating tool it may call, and
 * records what it finds as findings plus a host-fit table. It uses the
 * contract's token estimator (src/page/tokens.h) and the public headers;
 * it knows nothing of the store.
 */
#ifndef MCPAGE_CHECK_CHECK_H
#define MCPAGE_CHECK_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* Largest message read from a server (a tool result is far smaller). */
#define CHECK_MESSAGE_MAX ((size_t)64 << 20)
/* Pages a walk may take before it is declared endless. */
#define CHECK_WALK_MAX_PAGES 100000
/* Tools/call requests made when --max-calls is not given. */
#define CHECK_DEFAULT_MAX_CALLS 20000
/* Findings kept (a badly broken server could produce one per page). */
#define CHECK_FINDINGS_MAX 1000
/* Per-request timeout when --timeout is not given. */
#define CHECK_DEFAULT_TIMEOUT_MS 10000

/*
 * How the checker reaches a server. exchange() sends one JSON-RPC
 * message; when it has an id it waits for the reply with that id and
 * hands it over in *reply (a new reference), skipping notifications.
 * A notification gets 0 and *reply NULL. Returns 0 or a negative
 * mcpage status with a sentence in why: MCPAGE_ECANCELED when no reply
 * came within the timeout (the connection is still usable: a late reply
 * is skipped by its id), MCPAGE_EIO for a transport failure.
 */
typedef struct check_transport {
    int (*exchange)(void *ud, const json_t *msg, int timeout_ms, json_t **reply, char *why,
                    size_t why_len);
    void *ud;              /* the transport's state */
    const size_t *garbage; /* lines the server sent that were not JSON-RPC, or NULL */
} check_transport;

typedef enum check_severity { CHECK_ERROR, CHECK_WARNING, CHECK_INFO } check_severity;

typedef struct check_options {
    int timeout_ms; /* per request; 0 = CHECK_DEFAULT_TIMEOUT_MS */
    /* object: tool name -> seconds (a number) its calls may take (--timeout TOOL=S), or NULL */
    const json_t *tool_timeouts;
    long max_calls; /* tools/call requests at most; 0 = CHECK_DEFAULT_MAX_CALLS */
    long page_size; /* window of the walks (limit, max_lines, max_bytes); 0 = the tool's default */
    const json_t *allow; /* array of tool names that may be called without readOnlyHint */
    const json_t *args;  /* object: tool name -> arguments every call of it needs */
    /* Or: the arguments every call of `tool` needs (a new object, or NULL for none). */
    json_t *(*base_args)(const char *tool, void *ud);
    void *base_args_ud; /* passed to base_args */
    bool progress;      /* a progress line on stderr during long walks */
    bool legacy_only;   /* skip the server/discover probe */
    const char *era;    /* "2026-07-28" or "2025-11-25" to force one; NULL = probe */
} check_options;

/* What a run found; free with check_report_free(). */
typedef struct check_report {
    json_t *server;   /* {name, version, era, protocolVersion} as learned */
    json_t *findings; /* array of {severity, scope, message, request} */
    json_t *tools;    /* array of {name, family, called, calls, pages, envelope, fit} */
    json_t *apps;     /* MCP Apps: {extension, views, tools}, or NULL when the server has none */
    int errors;       /* findings by severity */
    int warnings;
    int infos;
    long calls;    /* tools/call requests made */
    long requests; /* every request made */
    bool aborted;  /* the transport failed or --max-calls ran out */
} check_report;

/* Runs every check against the server behind t. 0, or a negative status for a failed start. */
int check_run(const check_options *o, check_transport *t, check_report *rep);
void check_report_free(check_report *rep);

/* The human report (findings grouped per scope, then the host-fit table). */
void check_report_print(const check_report *rep, FILE *out);
/* The report as one JSON object (new reference). */
json_t *check_report_json(const check_report *rep);

/* ------------------------------------------------------------ host fit */

/* Which copy of a result a host shows the model. */
typedef enum check_copy {
    CHECK_COPY_STRUCTURED_ELSE_TEXT, /* JSON of structuredContent when present, else the text */
    CHECK_COPY_TEXT,                 /* the text blocks */
} check_copy;

/* One host's profile: what it shows and where it cuts (sources in docs/check.md). */
typedef struct check_host {
    const char *name;    /* "Claude Code" */
    const char *past;    /* what happens past the limit: "spilled to a file", "cut" */
    check_copy copy;     /* which copy the model sees */
    bool chars_raisable; /* _meta["anthropic/maxResultSizeChars"] raises max_chars */
    size_t warn_tokens;  /* a warning past this many tokens; 0 = none */
    size_t max_tokens;   /* rejected or cut past this many tokens; 0 = none */
    size_t max_chars;    /* cut or spilled past this many characters; 0 = none */
    size_t max_bytes;    /* cut or spilled past this many bytes; 0 = none */
    size_t max_lines;    /* cut past this many lines; 0 = none */
} check_host;

/* Most host profiles the table may hold. */
#define CHECK_HOSTS_MAX 8
extern const check_host check_hosts[];
extern const size_t check_host_count;
/* Claude Code's cut of a tool description (characters). */
#define CHECK_DESCRIPTION_MAX 2048

/* What one host shows of a result: measured on the copy it shows. */
typedef struct check_measure {
    size_t bytes;  /* UTF-8 bytes */
    size_t chars;  /* Unicode code points */
    size_t lines;  /* newline-separated lines */
    size_t tokens; /* o200k estimate (src/page/tokens.c) */
} check_measure;

/* Measures what `h` shows of CallToolResult `res`. */
void check_measure_result(const check_host *h, const json_t *res, check_measure *m);
/* True when m passes h's limits (raised_chars > 0 replaces max_chars where raisable). */
bool check_fits(const check_host *h, const check_measure *m, size_t raised_chars);

/* ------------------------------------------------------------ a plain client */

/* One session with a server over a transport (`mcpage call --server`, `--url`). */
typedef struct check_client {
    check_transport *t; /* the server */
    int timeout_ms;     /* per request; 0 = CHECK_DEFAULT_TIMEOUT_MS */
    bool modern;        /* 2026-07-28: the _meta on every request */
    long next_id;       /* next JSON-RPC id */
    char version[32];   /* the protocol revision spoken */
} check_client;

/*
 * Opens the session: era "2026-07-28" or "2025-11-25" forces one, NULL
 * probes (server/discover, then initialize). 0, or a negative status with
 * a sentence in why.
 */
int check_client_open(check_client *cl, const char *era, char *why, size_t why_len);
/* Sends method(params, stolen); the whole reply (new reference), or NULL with why. */
json_t *check_client_request(check_client *cl, const char *method, json_t *params, char *why,
                             size_t why_len);

/* ------------------------------------------------------------ transports */

/* A server started as a child process on stdio (argv[0] found on PATH). */
typedef struct check_stdio check_stdio;
int check_stdio_start(char *const argv[], check_stdio **out, char *why, size_t why_len);
/* Ends the child: closes its stdin, then SIGTERM, then SIGKILL; reaps it. */
void check_stdio_stop(check_stdio *c);
void check_stdio_transport(check_stdio *c, check_transport *t);

/* A Streamable HTTP endpoint (curl_global_init is the caller's); headers are "Name: value". */
typedef struct check_http check_http;
int check_http_start(const char *url, const char *const *headers, size_t n_headers,
                     check_http **out, char *why, size_t why_len);
/* Ends the session (DELETE) when the server gave one, and frees. */
void check_http_stop(check_http *h);
void check_http_transport(check_http *h, check_transport *t);

#endif
