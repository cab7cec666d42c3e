/*
 * libFuzzer target for Aider's Markdown history (src/sync/sync_aider.c).
 * The first input byte splits the rest at a point (as a file read while
 * aider appends to it); the rest is a run of .aider.chat.history.md.
 *
 * Checks: no crash, no leak; every rendered line is a JSON object the
 * format folds and expands into records with a role and text within the
 * caps; and appends never change what was rendered before: the rendering
 * of the first part (held last message aside) is a prefix of the
 * rendering of the whole, as a sync that read the file mid-append finds
 * its stored messages again and appends the rest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_fold.h"
#include "sync/sync_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sync_fold_format fmt;

static void fold_all(const char *p, size_t len)
{
    sync_fold fold = {0};
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        size_t n = nl ? (size_t)(nl - p) : len;
        sync_record *r = NULL;
        size_t nr = 0;
        char why[200] = "";
        int rc = sync__fold_parse_line(&fmt, &fold, p, n, &r, &nr, why, sizeof why);
        if (rc != 0) /* the renderer writes only JSON objects */
            abort();
        for (size_t i = 0; i < nr; i++) {
            if (r[i].kind == SYNC_MESSAGE && (!r[i].role || !r[i].text))
                abort();
            if (r[i].text && strlen(r[i].text) > SYNC_TEXT_MAX + 200)
                abort();
        }
        sync__records_free(r, nr);
        if (!nl)
            break;
        len -= n + 1;
        p = nl + 1;
    }
    sync_fold_free(&fold);
}

/* The bytes up to the last newline. */
static size_t whole_lines(const char *p, size_t n)
{
    while (n > 0 && p[n - 1] != '\n')
        n--;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!fmt.source)
        sync__aider_format(&fmt, "aider");
    const char *p = (const char *)data + 1;
    size_t len = size - 1;
    size_t cut = len ? (size_t)data[0] * len / 255 : 0;
    char *all = NULL, *part = NULL, *done = NULL;
    size_t nall = 0, npart = 0, ndone = 0;
    if (sync__aider_render(p, len, 0, &all, &nall) != 0 ||
        sync__aider_render(p, cut, 0, &part, &npart) != 0 ||
        sync__aider_render(p, len, 1, &done, &ndone) != 0)
        abort();
    size_t keep = whole_lines(part, npart);
    if (keep > nall || memcmp(part, all, keep) != 0)
        abort(); /* an append changed what was rendered */
    keep = whole_lines(all, nall);
    if (keep > ndone || memcmp(all, done, keep) != 0)
        abort(); /* settling changed more than the held message */
    fold_all(all, nall);
    fold_all(done, ndone);
    free(all);
    free(part);
    free(done);
    return 0;
}
