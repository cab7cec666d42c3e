/*
 * Invalid-argument results for arguments a tool checks itself, in the
 * same shape the window parsers write (page_reject).
 */
#include <string.h>

#include "page/page_internal.h"

int mcpage_reject_argument(mcpage_result *res, const char *tool, const char *param,
                           const json_t *got, const char *expected, const char *example)
{
    if (res == NULL || tool == NULL || param == NULL || expected == NULL)
        return MCPAGE_EINVAL;
    page_base b;
    memset(&b, 0, sizeof b);
    b.tool = tool;
    tb_init(&b.notes);
    page_reject(&b, "invalid_argument", param, got, expected, example, NULL);
    int rc = page_write_rejection(&b, res);
    page_base_free(&b);
    return rc;
}
