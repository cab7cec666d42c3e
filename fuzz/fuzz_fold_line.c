/*
 * libFuzzer target for the folded transcript formats (Gemini CLI, GitHub
 * Copilot CLI, OpenCode's and Cursor's rendered rows): the first input
 * byte picks the format (bits 0-1: Gemini, Copilot, OpenCode, Cursor) and
 * whether the rest
 * is a whole Gemini session document read through its JSON Lines
 * conversion (bit 2); the rest is split into lines, each repaired
 * to UTF-8 and folded into one fold as sync does for one file (updates,
 * rewinds and checkpoints act on the lines before), and expanded into
 * its records. Checks: no crash, no leak, every message record has a
 * role and text within the caps, and a parse error always has a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

static void fold_lines(const sync_fold_format *fmt, const char *p, size_t len)
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
        int rc = sync__fold_parse_line(fmt, &fold, fixed ? fixed : p, fixed ? fixed_len : n, &r,
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
    sync_fold_free(&fold);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const sync_fold_format *const fmts[] = {&sync__gemini_format, &sync__copilot_format,
                                                   &sync__opencode_format, &sync__cursor_format};
    const sync_fold_format *fmt = fmts[data[0] & 3];
    const char *p = (const char *)data + 1;
    size_t len = size - 1;
    if ((data[0] & 4) && fmt->convert) {
        char *out = NULL;
        size_t outlen = 0;
        char why[200] = "";
        int rc = fmt->convert(p, len, &out, &outlen, why, sizeof why);
        if (rc == MCPAGE_EPARSE && !why[0])
            abort();
        if (rc == 0) {
            fold_lines(fmt, out, outlen);
            free(out);
        }
        return 0;
    }
    fold_lines(fmt, p, len);
    return 0;
}
