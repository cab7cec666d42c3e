/* libcurl's table for page/dynlib.c; MCPAGE_SONAME_CURL comes from the build. */
#define HTTP_CURL_DEFINING
#include "transport/http_curl.h"

#include "page/dynlib.h"

static int start(void)
{
    return http_curl.curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

MCPAGE__DYNLIB_DEFINE(http_curl_fns, http_curl, HTTP_CURL_FUNCS, http_curl_load, MCPAGE_SONAME_CURL,
                      "libcurl4", "OAuth (fetching the issuer's keys)", start)
