/*
 * libcurl, loaded when the OAuth resource server first fetches its
 * issuer's metadata or keys (page/dynlib.h): a server without --oauth
 * never maps it nor what it pulls in (libssh2, nghttp2, LDAP, Kerberos).
 * oauth.c includes this instead of <curl/curl.h>.
 */
#ifndef MCPAGE_TRANSPORT_HTTP_CURL_H
#define MCPAGE_TRANSPORT_HTTP_CURL_H

#include <stddef.h>

/* Calls go through the table, where curl's type-checking macros cannot follow. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

/* The functions the transport calls, each once here. */
#define HTTP_CURL_FUNCS(X)                                                                         \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_init)                                                                              \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_strerror)                                                                          \
    X(curl_global_init)                                                                            \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)

/* The loaded functions, typed as the library's header declares them. */
typedef struct http_curl_fns {
#define HTTP_CURL_SLOT(f) __typeof__(f) *f;
    HTTP_CURL_FUNCS(HTTP_CURL_SLOT)
#undef HTTP_CURL_SLOT
} http_curl_fns;

extern http_curl_fns http_curl;

/* Loads libcurl once: 0, or MCPAGE_ENOTFOUND with `why` (page/dynlib.h). */
int http_curl_load(char *why, size_t cap);

#ifndef HTTP_CURL_DEFINING /* http_curl.c names the real functions */
#undef curl_easy_getinfo   /* curl.h's check that a call has three arguments */
#undef curl_easy_setopt
#define curl_easy_cleanup   http_curl.curl_easy_cleanup
#define curl_easy_getinfo   http_curl.curl_easy_getinfo
#define curl_easy_init      http_curl.curl_easy_init
#define curl_easy_perform   http_curl.curl_easy_perform
#define curl_easy_setopt    http_curl.curl_easy_setopt
#define curl_easy_strerror  http_curl.curl_easy_strerror
#define curl_global_init    http_curl.curl_global_init
#define curl_slist_append   http_curl.curl_slist_append
#define curl_slist_free_all http_curl.curl_slist_free_all
#endif

#endif
