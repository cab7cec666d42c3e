/*
 * The paging contract test, for any server in this process: runs the
 * checker behind `mcpage check` (src/check/, docs/check.md) on a session
 * of the server, with walk windows of 3. It discovers every tool from
 * tools/list, infers each one's family from the window parameters of
 * its inputSchema, and checks on real calls what CONTRACT.md promises:
 * the invariants on every page, hints naming only accepted parameters,
 * both copies within budget at several budgets, full walks by cursor and
 * by offset returning every unit exactly once, clamps disclosed, invalid
 * windows rejected in the error shape, past-the-end pages well formed
 * and tampered cursors rejected. Errors and warnings are printed and
 * counted, so it runs under any test framework.
 */
#ifndef MCPAGE_TESTS_TOOL_CONTRACT_H
#define MCPAGE_TESTS_TOOL_CONTRACT_H

#include <stddef.h>

#include <jansson.h>

#include <mcpage/server.h>

typedef struct tool_contract_opts {
    /* Arguments every call of `tool` needs (a new object), or NULL for none. */
    json_t *(*base_args)(const char *tool, void *ud);
    void *ud; /* passed to base_args */
} tool_contract_opts;

/* What a run found. */
typedef struct tool_contract_report {
    int tools_seen;  /* tools in tools/list */
    int tools_paged; /* tools whose pages carry the envelope, checked by its rules */
    int calls;       /* tool calls made */
    int failures;    /* the checker's errors and warnings (each printed on stderr) */
} tool_contract_report;

/* Checks every paginating tool of `srv` (its registry must be complete). */
void tool_contract_check(mcpage_server *srv, const tool_contract_opts *o,
                         tool_contract_report *rep);

/* Calls one tool through a session of `srv`; returns the CallToolResult (new reference). */
json_t *tool_contract_call(mcpage_server *srv, const char *tool, json_t *args);

/* The tools of `srv`'s tools/list, every page (a new array). */
json_t *tool_contract_list(mcpage_server *srv);

#endif
