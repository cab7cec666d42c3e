/* libcurl's table for page/dynlib.c; MCPAGE_SONAME_CURL comes from the build. */
#define CHECK_CURL_DEFINING
#include "check/check_curl.h"

#include "page/dynlib.h"

check_curl_fns check_curl;

#define CHECK_CURL_SYM(f) {#f, offsetof(check_curl_fns, f)},
static const mcpage__dynsym syms[] = {CHECK_CURL_FUNCS(CHECK_CURL_SYM)};

static int start(void)
{
    return check_curl.curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static mcpage__dynlib lib = MCPAGE__DYNLIB_INIT(
    MCPAGE_SONAME_CURL, "libcurl4", "MCP over HTTP (mcpage check, mcpage call --url)", syms,
    sizeof syms / sizeof syms[0], &check_curl, start);

int check_curl_load(char *why, size_t cap)
{
    return mcpage__dynlib_load(&lib, why, cap);
}
