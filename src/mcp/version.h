/*
 * Protocol revisions: the one place that knows which MCP revisions this
 * runtime speaks and how they differ. Adding a revision (2026-07-28)
 * means adding a row to the table in version.c and, where behaviour
 * differs, a feature flag below.
 */
#ifndef MCPAGE_MCP_VERSION_H
#define MCPAGE_MCP_VERSION_H

#include <stdbool.h>

/* What differs between revisions, as answered for one negotiated revision. */
typedef struct mcp_revision {
    const char *name;        /* "2025-11-25" */
    bool titles;             /* title fields (2025-06-18 and later) */
    bool structured_content; /* outputSchema / structuredContent (2025-06-18 and later) */
    bool resource_links;     /* resource_link content blocks (2025-06-18 and later) */
    bool completion_context; /* completion/complete context.arguments (2025-06-18 and later) */
} mcp_revision;

/* The newest revision we speak. */
const mcp_revision *mcp_version_latest(void);
/* The revision named `v`, or NULL when we do not speak it. */
const mcp_revision *mcp_version_find(const char *v);
/*
 * Negotiation (lifecycle, "Version Negotiation"): the client's revision
 * when we speak it, else our latest.
 */
const mcp_revision *mcp_version_negotiate(const char *requested);

#endif
