/*
 * What the checker's files share: the state of one run, the request
 * helper and the finding recorder. Internal to src/check/.
 */
#ifndef MCPAGE_CHECK_INTERNAL_H
#define MCPAGE_CHECK_INTERNAL_H

#include "check/check.h"

/* One run: the server's era, the request counter and what was found. */
typedef struct check_ctx {
    const check_options *o; /* caller's options */
    check_transport *t;     /* the server */
    check_report *rep;      /* the report being filled */
    bool modern;            /* 2026-07-28: _meta on every request */
    const char *version;    /* the protocol revision spoken */
    long next_id;           /* next JSON-RPC id */
    json_t *last_request;   /* the last request sent (for findings) */
    const char *scope;      /* what findings are about now: a tool name or a list method */
    json_t *tool_row;       /* the tool's row in rep->tools, or NULL */
    bool dead;              /* the transport failed: no more requests */
    bool probing;           /* the server/discover probe: a failure is not a finding */
    const json_t *tools;    /* the tools/list items, once walked */
    int call_timeout_ms;    /* the tool being checked: what its calls may take; 0 = timeout_ms */
    bool timed_out;         /* a tools/call got no reply within call_timeout_ms (cancelled) */
    json_t *seen;           /* values of the server's answers by name (check_guess.c) */
} check_ctx;

/*
 * Records a finding about c->scope: what is wrong (fmt) and the fix that
 * removes it (a sentence addressed to the server's author); `request`
 * (may be NULL) is the request that shows it.
 */
void check__find(check_ctx *c, check_severity sev, const json_t *request, const char *fix,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Sends method(params, stolen) and returns the whole reply (new reference), or NULL. */
json_t *check__request(check_ctx *c, const char *method, json_t *params);

/*
 * Reports each parameter that `text` (a description or a hint, said in
 * findings as `where`) names in an unmistakable form but whose tool's
 * inputSchema lacks; `self` is the tool the text belongs to (check_names.c).
 */
void check__names(check_ctx *c, const json_t *request, const char *where, const char *text,
                  const char *self, const json_t *self_props);

/* Remembers the values of a tool's answer by name, for guessing arguments (check_guess.c). */
void check__harvest(check_ctx *c, const char *tool, const json_t *args, const json_t *res);

/*
 * Fills the arguments `needs` names (an array of names) that `base`
 * lacks from what earlier answers held under the same name (or, for a
 * path, any path they listed). `attempt` picks among several candidates
 * (0 first). Returns the guessed arguments (new object; empty when
 * nothing fits) and, in from, where they came from.
 */
json_t *check__guess(check_ctx *c, const json_t *tool, const json_t *base, const json_t *needs,
                     int attempt, char *from, size_t from_len);

/*
 * MCP Apps: reads every view the tools name or resources/list lists
 * (resources/read), checks its MIME type and csp, notes app-only tools,
 * and fills rep->apps (check_apps.c). caps: the server's capabilities.
 */
void check__apps(check_ctx *c, const json_t *caps, const json_t *tools, const json_t *resources);

/* Checks every tool of the list (an array of Tool objects). */
void check__tools(check_ctx *c, const json_t *tools);

#endif
