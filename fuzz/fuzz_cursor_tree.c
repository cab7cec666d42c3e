/*
 * libFuzzer target for Cursor's chat trees (src/sync/sync_cursor.c): the
 * input is a tree node's bytes (protobuf: children by hash, the root's
 * workspace URI, embedded JSON messages), rendered as sync renders a chat
 * (every child missing), and each rendered line then folded and expanded
 * as the Cursor format. Checks: no crash, no leak, every line the
 * renderer writes is a JSON object the fold reads (bytes that are not
 * UTF-8 included), every message record has a role and text.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = NULL, *workspace = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&buf, &len);
    if (!w)
        return 0;
    int rc = sync__cursor_render_node(data, size, w, &workspace);
    if (fclose(w) != 0 || rc == MCPAGE_ENOMEM) {
        free(buf);
        free(workspace);
        return 0;
    }
    if (rc < 0)
        abort(); /* the renderer only fails when out of memory */
    if (workspace && workspace[0] != '/')
        abort();
    free(workspace);
    sync_fold fold = {0};
    for (char *p = buf, *nl; p && (nl = memchr(p, '\n', len - (size_t)(p - buf))); p = nl + 1) {
        char *fixed = NULL;
        size_t fixed_len = 0;
        size_t n = (size_t)(nl - p);
        if (sync_utf8_repair(p, n, &fixed, &fixed_len) < 0)
            break;
        sync_record *r = NULL;
        size_t nr = 0;
        char why[200] = "";
        rc = sync__fold_parse_line(&sync__cursor_format, &fold, fixed ? fixed : p,
                                   fixed ? fixed_len : n, &r, &nr, why, sizeof why);
        free(fixed);
        /* a line the renderer wrote is always a row; only a missing
           blob is a counted line */
        if (rc == MCPAGE_EPARSE && !strstr(why, "missing"))
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
