/*
 * Internal access to mcpage_result for the runtime: it writes the
 * CallToolResult straight into the response being serialized, so the
 * bytes the page builder measured are the bytes that go out.
 */
#ifndef MCPAGE_PAGE_RESULT_INTERNAL_H
#define MCPAGE_PAGE_RESULT_INTERNAL_H

#include <mcpage/result.h>

#include "page/jw.h"

/* Writes the CallToolResult object as the next value of w. */
void mcpage__result_write(const mcpage_result *r, jw *w);

#endif
