/*
 * Hostile-input JSON parsing for JSON-RPC messages: a size limit, a
 * nesting-depth limit checked before jansson builds anything, and
 * jansson's strict decoder (duplicate keys, invalid UTF-8, lone
 * surrogates, NUL escapes and out-of-range numbers are all rejected).
 */
#ifndef MCPAGE_MCP_JSONIN_H
#define MCPAGE_MCP_JSONIN_H

#include <stddef.h>

#include <jansson.h>

/* Why a message could not be parsed; selects the JSON-RPC error code. */
typedef enum jsonin_status {
    JSONIN_OK = 0,
    JSONIN_TOO_LARGE, /* longer than the size limit */
    JSONIN_TOO_DEEP,  /* nested deeper than the depth limit */
    JSONIN_SYNTAX     /* not one well-formed JSON text */
} jsonin_status;

/*
 * Parses `len` bytes as one JSON text. On success *out is the value;
 * else `why` (at least 200 bytes) says what is wrong and where.
 */
jsonin_status jsonin_parse(const char *msg, size_t len, size_t max_len, int max_depth, json_t **out,
                           char *why, size_t whylen);

/* The deepest nesting of arrays and objects in msg, counting outside strings. */
int jsonin_depth(const char *msg, size_t len, int stop_at);

#endif
