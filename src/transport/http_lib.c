/* libmicrohttpd's table for page/dynlib.c; MCPAGE_SONAME_MHD comes from the build. */
#define HTTP_MHD_DEFINING
#include "transport/http_lib.h"

#include "page/dynlib.h"

MCPAGE__DYNLIB_DEFINE(http_mhd_fns, http_mhd, HTTP_MHD_FUNCS, http_mhd_load, MCPAGE_SONAME_MHD,
                      "libmicrohttpd12", "MCP over HTTP", NULL)
