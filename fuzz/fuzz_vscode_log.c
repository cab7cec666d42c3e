/*
 * libFuzzer target for VS Code's chat mutation log (src/sync/
 * sync_vscode_chat.c): the input is a .jsonl log (a kind-0 state, then
 * set, push-with-truncation and delete entries) converted as sync
 * converts it (replayed, then rendered as JSON Lines), and each rendered
 * line then folded and expanded as the VS Code chat format. Checks: no
 * crash, no leak, no hang (replay work is linear), the converter fails
 * only with MCPAGE_EPARSE (with a reason) or out of memory, every line it
 * renders is one the fold reads, every message record has a role and text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_parse.h"
#include "sync/sync_vscode_chat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sync_fold_format fmt[2];
    if (!fmt[1].convert)
        sync__vscode_chat_formats(fmt, "vscode-copilot");
    char *buf = NULL, why[400] = "";
    size_t len = 0;
    int rc = fmt[1].convert((const char *)data, size, &buf, &len, why, sizeof why);
    if (rc == MCPAGE_ENOMEM)
        return 0;
    if (rc < 0) {
        if (rc != MCPAGE_EPARSE || !why[0] || buf)
            abort();
        return 0;
    }
    sync_fold fold = {0};
    for (char *p = buf, *nl; p && p < buf + len && (nl = memchr(p, '\n', len - (size_t)(p - buf)));
         p = nl + 1) {
        char *fixed = NULL;
        size_t fixed_len = 0;
        size_t n = (size_t)(nl - p);
        if (sync_utf8_repair(p, n, &fixed, &fixed_len) < 0)
            break;
        sync_record *r = NULL;
        size_t nr = 0;
        char w[200] = "";
        rc = sync__fold_parse_line(&fmt[1], &fold, fixed ? fixed : p, fixed ? fixed_len : n, &r,
                                   &nr, w, sizeof w);
        free(fixed);
        if (rc == MCPAGE_EPARSE) /* the renderer writes only JSON objects */
            abort();
        for (size_t i = 0; rc == 0 && i < nr; i++)
            if (r[i].kind == SYNC_MESSAGE && (!r[i].role || !r[i].text))
                abort();
        sync__records_free(r, nr);
    }
    sync_fold_free(&fold);
    free(buf);
    return 0;
}
