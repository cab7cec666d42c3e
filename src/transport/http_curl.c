/* libcurl's table for page/dynlib.c; MCPAGE_SONAME_CURL comes from the build. */
#define HTTP_CURL_DEFINING
#include "transport/http_curl.h"

#include "page/dynlib.h"

http_curl_fns http_curl;

#define HTTP_CURL_SYM(f) {#f, offsetof(http_curl_fns, f)},
static const mcpage__dynsym syms[] = {HTTP_CURL_FUNCS(HTTP_CURL_SYM)};

static int start(void)
{
    return http_curl.curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static mcpage__dynlib lib =
    MCPAGE__DYNLIB_INIT(MCPAGE_SONAME_CURL, "libcurl4", "OAuth (fetching the issuer's keys)", syms,
                        sizeof syms / sizeof syms[0], &http_curl, start);

int http_curl_load(char *why, size_t cap)
{
    return mcpage__dynlib_load(&lib, why, cap);
}
