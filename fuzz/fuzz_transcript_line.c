/*
 * libFuzzer target for the transcript line parsers: the first input byte
 * picks the format (Claude Code or Codex), the rest is one line. The line
 * goes through the same path sync uses: UTF-8 repair, then the parser,
 * with a tool-id table that lives across inputs like it does across the
 * lines of one file; Codex records then go through the copy memory
 * (sync_codex_is_copy), which also lives across inputs. Checks: no crash,
 * no leak, a record that is a message always has a role and text, a parse
 * error always has a reason, and the copy memory stays within its bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sync_tool_ids ids;
static sync_copies copies;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int codex = data[0] & 1;
    const char *line = (const char *)data + 1;
    size_t len = size - 1;
    char *fixed = NULL;
    size_t fixed_len = 0;
    if (sync_utf8_repair(line, len, &fixed, &fixed_len) < 0)
        return 0;
    if (fixed) {
        line = fixed;
        len = fixed_len;
    }
    sync_record r;
    char why[200] = "";
    int rc = codex ? sync_codex_parse_line(line, len, &ids, &r, why, sizeof why)
                   : sync_claude_parse_line(line, len, &ids, &r, why, sizeof why);
    if (rc == MCPAGE_EPARSE && !why[0])
        abort();
    if (rc == 0) {
        if (r.kind == SYNC_MESSAGE && (!r.role || !r.text))
            abort();
        if (r.text && strlen(r.text) > SYNC_TEXT_MAX + 200)
            abort();
        if (r.tool_input && strlen(r.tool_input) > SYNC_TOOL_INPUT_MAX)
            abort();
        if (codex) {
            (void)sync_codex_is_copy(&copies, &r);
            if (copies.nuser < 0 || copies.nuser > SYNC_COPIES_MAX || copies.nagent < 0 ||
                copies.nagent > SYNC_COPIES_MAX)
                abort();
        }
        sync_record_clear(&r);
    }
    free(fixed);
    return 0;
}
