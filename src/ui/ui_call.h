/*
 * Calling the archive's registered tools in-process, the way a client
 * does: a tools/call request through a runtime session (the registry,
 * the schema validation, the worker pool, the page builders, the signed
 * cursors), and reading what comes back. The browser view and
 * `mcpage export` select what they show through these calls, never by
 * querying the store themselves.
 */
#ifndef MCPAGE_UI_UI_CALL_H
#define MCPAGE_UI_UI_CALL_H

#include <stddef.h>

#include <jansson.h>

#include <mcpage/server.h>

/* Longest a call may take before it is cancelled. */
#define UI_CALL_TIMEOUT_MS 30000
/* Largest reply accepted (a page is far smaller). */
#define UI_CALL_REPLY_MAX ((size_t)64 << 20)

/*
 * Calls tool `name` with `args` (borrowed; NULL = {}) on `srv` through a
 * fresh runtime session, as `caller` (the page request's; NULL: no one
 * in particular, who sees all). Returns the CallToolResult object (a new
 * reference: content, structuredContent, isError), or NULL with a
 * sentence in `err` when no result came (a JSON-RPC error, a timeout).
 * A tool error (isError) is a result, not NULL. Thread-safe.
 */
json_t *ui_call_tool(mcpage_server *srv, const mcpage_caller *caller, const char *name,
                     const json_t *args, char *err, size_t errcap);

/*
 * The records of a LIST page under `noun` ("sessions") as an array of
 * objects (a new reference), whether the page carries them as objects
 * or in the compact column layout ("columns" + arrays). NULL when the
 * page has no such array.
 */
json_t *ui_records(const json_t *structured, const char *noun);

/*
 * A record's string field, or the page's own when the page says it once
 * for all its records (contract 1.1: the filter's project), or `dflt`.
 */
const char *ui_rec_str(const json_t *rec, const json_t *page, const char *key, const char *dflt);
/* A string field of an object, or `dflt` when absent or not a string. */
const char *ui_str(const json_t *obj, const char *key, const char *dflt);
/* An integer field, or `dflt`. */
long long ui_int(const json_t *obj, const char *key, long long dflt);

#endif
