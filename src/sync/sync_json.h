/*
 * json_loadb for transcript lines, faster on lines that hold long strings
 * (tool outputs of megabytes). Internal to src/sync/.
 *
 * jansson reads a string byte by byte through its stream and grows a
 * buffer for it: most of a first sync's parse time on an archive whose
 * bytes are mostly tool output. Here the line is scanned once; every long
 * string value is decoded straight into one buffer and stands in the line
 * as a short placeholder; jansson parses what is left (the line's shape,
 * its short strings, numbers and literals) and the placeholders are
 * replaced by the decoded strings. A line the scan cannot vouch for (a
 * control character, an escape it does not know, a \u0000, bytes that
 * are not UTF-8) and a line jansson rejects are parsed again by
 * json_loadb itself, so the result, and the error of a malformed line,
 * are always json_loadb's.
 */
#ifndef MCPAGE_SYNC_JSON_H
#define MCPAGE_SYNC_JSON_H

#include <jansson.h>
#include <stddef.h>

/* A string token at least this long (quotes included) is decoded by the
 * scan; shorter ones are left to jansson. jansson spends about 180
 * instructions a byte on what it parses (docs/performance.md): at 24
 * bytes timestamps, ids and paths leave it too (the parse of the 32 MB
 * archive's lines 7% cheaper than at 64). */
#define SYNC_JSON_LONG 24

/* What json_loadb(buf, len, flags, err) returns, for flags 0 or
 * JSON_DECODE_ANY (other flags go to json_loadb). */
json_t *sync_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

#endif
