/*
 * Protocol revisions: the one place that knows which MCP revisions this
 * runtime speaks and how they differ. Adding a revision means adding a
 * row to the table in version.c and, where behaviour differs, a feature
 * flag below.
 *
 * Two eras: legacy revisions (2025-11-25 and earlier) open a session with
 * initialize; modern ones (2026-07-28) carry the revision and the
 * client's capabilities in every request's _meta and keep no session.
 */
#ifndef MCPAGE_MCP_VERSION_H
#define MCPAGE_MCP_VERSION_H

#include <stdbool.h>

#include <jansson.h>

/* What differs between revisions, as answered for one negotiated revision. */
typedef struct mcp_revision {
    const char *name;        /* "2025-11-25" */
    bool titles;             /* title fields (2025-06-18 and later) */
    bool structured_content; /* outputSchema / structuredContent (2025-06-18 and later) */
    bool resource_links;     /* resource_link content blocks (2025-06-18 and later) */
    bool completion_context; /* completion/complete context.arguments (2025-06-18 and later) */
    bool modern;             /* per-request _meta, no initialize (2026-07-28 and later) */
} mcp_revision;

/* The newest legacy revision we speak (what initialize negotiates to). */
const mcp_revision *mcp_version_latest(void);
/* The newest modern revision we speak. */
const mcp_revision *mcp_version_modern(void);
/* The revision named `v`, or NULL when we do not speak it. */
const mcp_revision *mcp_version_find(const char *v);
/*
 * initialize's negotiation (2025-11-25 lifecycle, "Version Negotiation"):
 * the client's revision when it is a legacy one we speak, else our latest
 * legacy revision. A modern revision is never negotiated by initialize.
 */
const mcp_revision *mcp_version_negotiate(const char *requested);
/* Every revision we speak, newest first, as a JSON array of strings (new reference). */
json_t *mcp_version_list(void);

#endif
