/*
 * The browser view of `mcpage serve --http` (docs/ui.md): read-only
 * pages at / beside /mcp, rendered on the server from the structured
 * results of the same tool calls an agent makes (ui_call.h), so every
 * list is walked with the tool's own signed cursor, every transcript
 * page is the builder's page under the tool's budget. No script, no
 * external asset; every piece of transcript text escaped (text_out.h).
 */
#ifndef MCPAGE_UI_UI_H
#define MCPAGE_UI_UI_H

#include <mcpage/http.h>
#include <mcpage/server.h>

/* What the pages need: the server whose tools they call. */
typedef struct ui_ctx {
    mcpage_server *srv; /* the archive's server (borrowed) */
} ui_ctx;

/* The page handler (mcpage_http_config.page; `ud` is a ui_ctx). */
int ui_page(void *ud, const mcpage_http_page_req *req, mcpage_http_page *out);

#endif
