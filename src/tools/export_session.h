/*
 * export_session and its paged resource form (docs/export.md), shared by
 * export_session.c (the tool, which writes the file) and
 * export_resource.c (mcpage://export/{session_id}.{format}, which reads
 * it back in pieces through the byte builder, with a signed cursor).
 */
#ifndef MCPAGE_TOOLS_EXPORT_SESSION_H
#define MCPAGE_TOOLS_EXPORT_SESSION_H

#include <stddef.h>

#include <mcpage/server.h>

#include "tools/export.h"
#include "tools/tools.h"

/* The resource template of exports (registered beside the tool). */
#define EXPORT_TEMPLATE "mcpage://export/{session_id}.{format}"
/* What every export resource's URI starts with. */
#define EXPORT_URI_PREFIX "mcpage://export/"

/*
 * The path of a session's export in the export folder, which is created
 * (mode 0700) when missing. 0, or a negative status with a sentence in
 * `err`.
 */
int export_target(const tools_ctx *ctx, const char *session_id, export_format fmt, char *path,
                  size_t cap, char *err, size_t errcap);

/* "mcpage://export/<id>.<ext>" (the id percent-encoded) into buf. */
void export_resource_uri(const char *session_id, export_format fmt, char *buf, size_t cap);

/* Registers the resource template (with the tool: only when an export folder is set). */
int export_resource_register(mcpage_server *srv, tools_ctx *ctx);

#endif
