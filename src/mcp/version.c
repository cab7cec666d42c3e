/*
 * Protocol revisions and version negotiation. Every revision-dependent
 * decision of the runtime reads a flag of mcp_revision; nothing else
 * compares version strings.
 */
#include "mcp/version.h"

#include <string.h>

#include <mcpage/server.h>

/* Newest first: the first row is what we answer to an unknown revision. */
static const mcp_revision revisions[] = {
    {"2025-11-25", true, true, true, true},
    {"2025-06-18", true, true, true, true},
    {"2025-03-26", false, false, false, false},
};

const mcp_revision *mcp_version_latest(void)
{
    return &revisions[0];
}

const mcp_revision *mcp_version_find(const char *v)
{
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof revisions / sizeof revisions[0]; i++)
        if (strcmp(revisions[i].name, v) == 0)
            return &revisions[i];
    return NULL;
}

const mcp_revision *mcp_version_negotiate(const char *requested)
{
    const mcp_revision *r = mcp_version_find(requested);
    return r ? r : mcp_version_latest();
}

bool mcpage_protocol_supported(const char *version)
{
    return mcp_version_find(version) != NULL;
}

const char *mcpage_protocol_latest(void)
{
    return mcp_version_latest()->name;
}
