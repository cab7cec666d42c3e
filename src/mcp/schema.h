/*
 * A JSON Schema subset for tool arguments and results: type (object,
 * string, integer, number, boolean, array, null and arrays of these),
 * properties, required, additionalProperties (boolean), enum, const,
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
 * maxLength (in code points), items, minItems, maxItems and default.
 * Other keywords are accepted and ignored. Errors name the parameter by
 * its path ("filter.project", "ids[2]") and say what was expected.
 */
#ifndef MCPAGE_MCP_SCHEMA_H
#define MCPAGE_MCP_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/*
 * Checks that `schema` is usable as a tool's input or output schema: an
 * object whose "type" is "object" and whose keywords of the subset have
 * the right types. On failure fills `why` and returns false.
 */
bool schema_check(const json_t *schema, char *why, size_t whylen);

/*
 * Validates `instance` against `schema`. When `fill` is set, missing
 * properties that have a "default" are added (deep copies) before the
 * checks, and integral numbers such as 3.0 are stored as integers where
 * the schema asks for an integer. On failure fills `why` and returns false.
 */
bool schema_validate(const json_t *schema, json_t *instance, bool fill, char *why, size_t whylen);

#endif
