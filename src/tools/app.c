/*
 * The archive as an MCP App (SEP-1865, extension io.modelcontextprotocol/ui):
 * one ui:// resource, the hand-written view of src/tools/app/archive.html
 * compiled in (cmake/embed.cmake), which list_sessions, search_conversations,
 * read_session and activity_map name in their _meta.ui.resourceUri. The view
 * calls those same tools through the host and pages with their cursors; it
 * needs no network, so its sandbox policy declares no origin at all.
 * docs/app.md.
 */
#include <string.h>

#include "tools/tools.h"

/* The view's bytes (generated from src/tools/app/archive.html). */
extern const char tools__app_html[];

static int read_view(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    if (strcmp(uri, TOOLS_APP_URI) != 0)
        return MCPAGE_ENOTFOUND;
    return mcpage_contents_add_text(out, uri, MCPAGE_APP_MIME_TYPE, tools__app_html,
                                    strlen(tools__app_html));
}

int tools_app_register(mcpage_server *srv, tools_ctx *ctx)
{
    (void)ctx;
    mcpage_resource r = {
        .uri = TOOLS_APP_URI,
        .name = "archive-view",
        .title = "Archive view",
        .description = "The archive as an interactive view for hosts that render MCP Apps: "
                       "sessions, search results and transcripts, paged with the tools' own "
                       "cursors. Self-contained HTML; it loads nothing from any origin.",
        .mime_type = MCPAGE_APP_MIME_TYPE,
        .size = (int64_t)strlen(tools__app_html),
        .read = read_view,
        .meta = TOOLS_APP_RESOURCE_META,
    };
    return mcpage_server_add_resource(srv, &r);
}
