/*
 * JSON-RPC message parsing (see jsonin.h). The depth scan runs first so
 * that a 10,000-deep array costs one pass over the bytes and no memory.
 */
#include "mcp/jsonin.h"

#include <stdbool.h>
#include <stdio.h>

int jsonin_depth(const char *msg, size_t len, int stop_at)
{
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = msg[i];
        if (in_string) {
            if (c == '\\')
                i++; /* skip the escaped byte, which may be a quote */
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) {
                deepest = depth;
                if (deepest > stop_at)
                    return deepest;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

jsonin_status jsonin_parse(const char *msg, size_t len, size_t max_len, int max_depth, json_t **out,
                           char *why, size_t whylen)
{
    *out = NULL;
    if (len > max_len) {
        (void)snprintf(why, whylen, "message of %zu bytes exceeds the limit of %zu bytes", len,
                       max_len);
        return JSONIN_TOO_LARGE;
    }
    if (jsonin_depth(msg, len, max_depth) > max_depth) {
        (void)snprintf(why, whylen, "JSON nested deeper than the limit of %d levels", max_depth);
        return JSONIN_TOO_DEEP;
    }
    json_error_t err;
    json_t *v = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    if (v == NULL) {
        (void)snprintf(why, whylen, "%s (line %d, column %d)", err.text, err.line, err.column);
        return JSONIN_SYNTAX;
    }
    *out = v;
    return JSONIN_OK;
}
