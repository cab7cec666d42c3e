/* libmicrohttpd's table for page/dynlib.c; MCPAGE_SONAME_MHD comes from the build. */
#define HTTP_MHD_DEFINING
#include "transport/http_lib.h"

#include "page/dynlib.h"

http_mhd_fns http_mhd;

#define HTTP_MHD_SYM(f) {#f, offsetof(http_mhd_fns, f)},
static const mcpage__dynsym mhd_syms[] = {HTTP_MHD_FUNCS(HTTP_MHD_SYM)};

static mcpage__dynlib mhd_dynlib =
    MCPAGE__DYNLIB_INIT(MCPAGE_SONAME_MHD, "libmicrohttpd12", "MCP over HTTP", mhd_syms,
                        sizeof mhd_syms / sizeof mhd_syms[0], &http_mhd, NULL);

int http_mhd_load(char *why, size_t cap)
{
    return mcpage__dynlib_load(&mhd_dynlib, why, cap);
}
