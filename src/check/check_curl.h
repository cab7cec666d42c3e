/*
 * libcurl, loaded when `mcpage check` or `mcpage call` first talks to a
 * server over HTTP (page/dynlib.h): every other mcpage command never maps
 * it nor what it pulls in (libssh2, nghttp2, LDAP, Kerberos).
 * check_http.c includes this instead of <curl/curl.h>.
 */
#ifndef MCPAGE_CHECK_CHECK_CURL_H
#define MCPAGE_CHECK_CHECK_CURL_H

#include <stddef.h>

/* Calls go through the table, where curl's type-checking macros cannot follow. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

/* The functions the checker calls, each once here. */
#define CHECK_CURL_FUNCS(X)                                                                        \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_init)                                                                              \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_strerror)                                                                          \
    X(curl_global_init)                                                                            \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)

/* The loaded functions, typed as the library's header declares them. */
typedef struct check_curl_fns {
#define CHECK_CURL_SLOT(f) __typeof__(f) *f;
    CHECK_CURL_FUNCS(CHECK_CURL_SLOT)
#undef CHECK_CURL_SLOT
} check_curl_fns;

extern check_curl_fns check_curl;

/* Loads libcurl once: 0, or MCPAGE_ENOTFOUND with `why` (page/dynlib.h). */
int check_curl_load(char *why, size_t cap);

#ifndef CHECK_CURL_DEFINING /* check_curl.c names the real functions */
#undef curl_easy_getinfo    /* curl.h's check that a call has three arguments */
#undef curl_easy_setopt
#define curl_easy_cleanup   check_curl.curl_easy_cleanup
#define curl_easy_getinfo   check_curl.curl_easy_getinfo
#define curl_easy_init      check_curl.curl_easy_init
#define curl_easy_perform   check_curl.curl_easy_perform
#define curl_easy_reset     check_curl.curl_easy_reset
#define curl_easy_setopt    check_curl.curl_easy_setopt
#define curl_easy_strerror  check_curl.curl_easy_strerror
#define curl_global_init    check_curl.curl_global_init
#define curl_slist_append   check_curl.curl_slist_append
#define curl_slist_free_all check_curl.curl_slist_free_all
#endif

#endif
