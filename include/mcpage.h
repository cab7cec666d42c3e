/*
 * mcpage: the whole public API in one include. <mcpage/mcpage.h> holds
 * the version, error codes and allocator hook; <mcpage/cursor.h> signed
 * cursors; <mcpage/result.h> tool results; <mcpage/page.h> the paging
 * contract's builders; <mcpage/server.h> the MCP runtime and stdio;
 * <mcpage/http.h> the Streamable HTTP transport; <mcpage/program.h> a
 * whole server's main() in one call.
 */
#ifndef MCPAGE_H
#define MCPAGE_H

#include <mcpage/cursor.h>
#include <mcpage/http.h>
#include <mcpage/mcpage.h>
#include <mcpage/page.h>
#include <mcpage/program.h>
#include <mcpage/result.h>
#include <mcpage/server.h>

#endif /* MCPAGE_H */
