/*
 * libFuzzer target for described sources (src/sync/sync_desc.c,
 * sync_engine.c). The first input byte picks what the rest is:
 *
 * - bit 7 set: a user's sources file, parsed over the built-in
 *   descriptions (a refused one must say why, naming the field);
 * - else bits 0-3 pick a description (every built-in one that the engine
 *   reads, and a generic one whose rules take every common shape) and
 *   bit 4 says whether the rest is a JSON document read through its JSON
 *   Lines conversion (the description's "json" layout); the lines are
 *   folded into one fold as sync does for one file (replacements by id,
 *   rewinds) and each expanded into its records.
 *
 * Checks: no crash, no leak, every message record has a role and text
 * within the caps, a parse error always has a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_fold.h"
#include "sync/sync_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char generic[] =
    "[{\"name\": \"generic\", \"home\": \"~/g\", \"layout\": \"json\", \"files\": \"*.json\","
    " \"records\": \"/messages\", \"document\": {\"id\": \"/id\", \"cwd\": \"/cwd\", \"title\":"
    " \"/title\", \"time\": \"/created\"},"
    " \"rules\": [{\"when\": {\"/op\": \"rewind\"}, \"message\": {\"role\": {\"const\": \"skip\"},"
    " \"rewind_to\": \"/to\"}}, {\"when\": {\"/type\": \"meta\"}, \"session\": {\"id\": \"/sid\","
    " \"parent\": \"/parent\", \"model\": \"/model\", \"branch\": \"/branch\"}},"
    " {\"when\": {\"/skip\": {\"exists\": true}}, \"skip\": true},"
    " {\"message\": {\"id\": [\"/id\", \"/uuid\"], \"role\": [\"/role\", \"/message/role\"],"
    " \"content\": [\"/content\", \"/message/content\", \"/parts\"], \"thinking\":"
    " \"/reasoning_content\", \"calls\": \"/tool_calls\", \"call_id\": \"/tool_call_id\","
    " \"tool_name\": \"/name\", \"is_error\": \"/is_error\", \"timestamp\": [\"/timestamp\","
    " \"/ts\"], \"model\": \"/model\", \"prefix\": \"\", \"usage\": {\"input\": \"/usage/input\","
    " \"output\": \"/usage/output\", \"cache_read\": \"/usage/cache_read\", \"cost\":"
    " \"/usage/cost\"}}}]}]";

static sync_descs descs;
static const sync_desc *engine_descs[16];
static size_t nengine;

static void init(void)
{
    if (nengine)
        return;
    char err[700];
    if (sync_descs_parse(&descs, sync__builtin_sources, strlen(sync__builtin_sources), "built-in",
                         err, sizeof err) != 0 ||
        sync_descs_parse(&descs, generic, strlen(generic), "generic", err, sizeof err) != 0)
        abort();
    for (size_t i = 0; i < descs.n && nengine < 16; i++)
        if (!descs.v[i]->writes)
            engine_descs[nengine++] = descs.v[i];
}

static void check_records(sync_record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (r[i].kind == SYNC_MESSAGE && (!r[i].role || !r[i].text))
            abort();
        if (r[i].text && strlen(r[i].text) > SYNC_TEXT_MAX + 200)
            abort();
        if (r[i].tool_input && strlen(r[i].tool_input) > SYNC_TOOL_INPUT_MAX)
            abort();
    }
    sync__records_free(r, n);
}

static void fold_lines(const sync_desc *d, const char *p, size_t len)
{
    sync_fold fold = {0};
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        size_t n = nl ? (size_t)(nl - p) : len;
        char *fixed = NULL;
        size_t fixed_len = 0;
        if (sync_utf8_repair(p, n, &fixed, &fixed_len) < 0)
            break;
        sync_record *r = NULL;
        size_t nr = 0;
        char why[200] = "";
        int rc = sync__fold_parse_line(&d->fmt, &fold, fixed ? fixed : p, fixed ? fixed_len : n, &r,
                                       &nr, why, sizeof why);
        free(fixed);
        if (rc == MCPAGE_EPARSE && !why[0])
            abort();
        if (rc == 0)
            check_records(r, nr);
        if (!nl)
            break;
        len -= n + 1;
        p = nl + 1;
    }
    /* every live entry is found by its id, at or after its place */
    for (size_t i = 0; i < fold.n; i++)
        if (fold.v[i].id[0] && sync_fold_find(&fold, fold.v[i].id) < (long)i)
            abort();
    sync_fold_free(&fold);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    init();
    const char *p = (const char *)data + 1;
    size_t len = size - 1;
    if (data[0] & 0x80) {
        sync_descs d = {0};
        char err[700] = "";
        int rc = sync_descs_parse(&d, sync__builtin_sources, strlen(sync__builtin_sources),
                                  "built-in", err, sizeof err);
        if (rc != 0)
            abort();
        rc = sync_descs_parse(&d, p, len, "fuzz", err, sizeof err);
        if (rc == MCPAGE_EPARSE && !err[0])
            abort();
        sync_descs_free(&d);
        return 0;
    }
    const sync_desc *d = engine_descs[(data[0] & 0x0f) % nengine];
    if (data[0] & 0x10) {
        char *out = NULL;
        size_t outlen = 0;
        char why[200] = "";
        int rc = sync__desc_convert(d, p, len, &out, &outlen, why, sizeof why);
        if (rc == MCPAGE_EPARSE && !why[0])
            abort();
        if (rc == 0)
            fold_lines(d, out, outlen);
        free(out);
        return 0;
    }
    fold_lines(d, p, len);
    return 0;
}
