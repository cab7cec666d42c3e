/*
 * libFuzzer target for Cursor's editor (src/sync/sync_cursor_ide.c): the
 * first input byte picks what the rest is. Bits 0-1: 0 or 1, rendered
 * composer lines (the JSON Lines sync renders from a state.vscdb: a header
 * row, bubble rows, inline conversation elements), each repaired to UTF-8,
 * folded into one fold and expanded as sync does; 2, one bubble's JSON
 * mapped to records directly (the header type from bits 2-3); 3, a
 * workspace URI decoded (sync_vscode_uri_path, shared with VS Code's
 * reader). Checks: no crash, no
 * leak, every message record has a role and text within the caps, a tool
 * message names its tool, a parse error always has a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#include "sync/sync_cursor_ide.h"
#include "sync/sync_fold.h"
#include "sync/sync_parse.h"
#include "sync/sync_vscode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_records(sync_record *r, size_t n, int free_them)
{
    for (size_t i = 0; i < n; i++) {
        if (r[i].kind == SYNC_MESSAGE && (!r[i].role || !r[i].text))
            abort();
        if (r[i].text && strlen(r[i].text) > SYNC_TEXT_MAX + 200)
            abort();
        if (r[i].tool_input && strlen(r[i].tool_input) > SYNC_TOOL_INPUT_MAX)
            abort();
        if (r[i].role && strcmp(r[i].role, "tool") == 0 && !r[i].tool_name)
            abort();
    }
    if (free_them)
        sync__records_free(r, n);
}

static void fold_lines(const char *p, size_t len)
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
        int rc = sync__fold_parse_line(&sync__cursor_ide_format, &fold, fixed ? fixed : p,
                                       fixed ? fixed_len : n, &r, &nr, why, sizeof why);
        free(fixed);
        if (rc == MCPAGE_EPARSE && !why[0])
            abort();
        if (rc == 0)
            check_records(r, nr, 1);
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
    const char *p = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] & 3) {
    case 2: {
        json_t *b = json_loadb(p, len, 0, NULL);
        if (b) {
            sync_record r[3];
            memset(r, 0, sizeof r);
            size_t k =
                sync__cursor_ide_bubble(b, (data[0] >> 2) & 3, "fuzz",
                                        (data[0] & 16) ? "2026-01-01T00:00:00.000Z" : NULL, r);
            if (k > 3)
                abort();
            check_records(r, k, 0);
            for (size_t i = 0; i < k; i++)
                sync_record_clear(&r[i]);
            json_decref(b);
        }
        break;
    }
    case 3: {
        char *u = malloc(len + 1);
        if (!u)
            return 0;
        memcpy(u, p, len);
        u[len] = 0;
        free(sync_vscode_uri_path(u));
        free(u);
        break;
    }
    default:
        fold_lines(p, len);
    }
    return 0;
}
