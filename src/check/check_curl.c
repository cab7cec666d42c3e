/* libcurl's table for page/dynlib.c; MCPAGE_SONAME_CURL comes from the build. */
#define CHECK_CURL_DEFINING
#include "check/check_curl.h"

#include "page/dynlib.h"

static int start(void)
{
    return check_curl.curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

MCPAGE__DYNLIB_DEFINE(check_curl_fns, check_curl, CHECK_CURL_FUNCS, check_curl_load,
                      MCPAGE_SONAME_CURL, "libcurl4",
                      "MCP over HTTP (mcpage check, mcpage call --url)", start)
