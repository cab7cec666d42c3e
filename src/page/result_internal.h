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

/* About the bytes mcpage__result_write writes (a few more, never fewer),
   so the response can be sized once. */
size_t mcpage__result_size(const mcpage_result *r);

/* Appends a text block of `text` (mcpage__malloc'd), which the result
   then owns, even on failure. */
int mcpage__result_take_text(mcpage_result *r, char *text, size_t len);

/* The same with the block already written into `w` as
   mcpage__result_take_text writes it ({"type":"text","text":...}); the
   result takes the writer's bytes and the text, even on failure. */
int mcpage__result_take_text_block(mcpage_result *r, char *text, size_t len, jw *w);

/* Sets structuredContent to `json` (mcpage__malloc'd, a JSON object the
   caller wrote, `cps` code points and `units` UTF-16 units), which the
   result then owns. */
void mcpage__result_take_structured(mcpage_result *r, char *json, size_t len, size_t cps,
                                    size_t units);

#endif
