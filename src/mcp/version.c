/*
 * Protocol revisions and version negotiation. Every revision-dependent
 * decision of the runtime reads a flag of mcp_revision; nothing else
 * compares version strings.
 */
#include "mcp/version.h"

#include <string.h>

#include <mcpage/server.h>

/* Newest first. */
static const mcp_revision revisions[] = {
    {"2026-07-28", true, true, true, true, true},
    {"2025-11-25", true, true, true, true, false},
    {"2025-06-18", true, true, true, true, false},
    {"2025-03-26", false, false, false, false, false},
};
#define NREVISIONS (sizeof revisions / sizeof revisions[0])

const mcp_revision *mcp_version_latest(void)
{
    for (size_t i = 0; i < NREVISIONS; i++)
        if (!revisions[i].modern)
            return &revisions[i];
    return NULL; /* not reached: the table has legacy rows */
}

const mcp_revision *mcp_version_modern(void)
{
    return &revisions[0];
}

json_t *mcp_version_list(void)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < NREVISIONS; i++)
        if (json_array_append_new(a, json_string(revisions[i].name)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

const mcp_revision *mcp_version_find(const char *v)
{
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < NREVISIONS; i++)
        if (strcmp(revisions[i].name, v) == 0)
            return &revisions[i];
    return NULL;
}

const mcp_revision *mcp_version_negotiate(const char *requested)
{
    const mcp_revision *r = mcp_version_find(requested);
    return r && !r->modern ? r : mcp_version_latest();
}

bool mcpage_protocol_supported(const char *version)
{
    return mcp_version_find(version) != NULL;
}

const char *mcpage_protocol_latest(void)
{
    return mcp_version_latest()->name;
}

const char *mcpage_protocol_modern(void)
{
    return mcp_version_modern()->name;
}

bool mcpage_protocol_is_modern(const char *version)
{
    const mcp_revision *r = mcp_version_find(version);
    return r != NULL && r->modern;
}
