/*
 * libmicrohttpd, loaded when the first HTTP server starts (page/dynlib.h):
 * a stdio server, a sync or a call never maps it nor what it pulls in
 * (gnutls, p11-kit, nettle, gmp). The transport's files include this
 * instead of <microhttpd.h>; each MHD_* function below is the loaded one.
 */
#ifndef MCPAGE_TRANSPORT_HTTP_LIB_H
#define MCPAGE_TRANSPORT_HTTP_LIB_H

#include <stddef.h>

#include <microhttpd.h>

/* The functions the transport calls, each once here. */
#define HTTP_MHD_FUNCS(X)                                                                          \
    X(MHD_add_response_header)                                                                     \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_create_response_from_callback)                                                           \
    X(MHD_destroy_response)                                                                        \
    X(MHD_get_connection_info)                                                                     \
    X(MHD_get_connection_values)                                                                   \
    X(MHD_get_daemon_info)                                                                         \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_queue_response)                                                                          \
    X(MHD_resume_connection)                                                                       \
    X(MHD_set_connection_option)                                                                   \
    X(MHD_start_daemon)                                                                            \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_suspend_connection)

/* The loaded functions, typed as <microhttpd.h> declares them. */
typedef struct http_mhd_fns {
#define HTTP_MHD_SLOT(f) __typeof__(f) *f;
    HTTP_MHD_FUNCS(HTTP_MHD_SLOT)
#undef HTTP_MHD_SLOT
} http_mhd_fns;

extern http_mhd_fns http_mhd;

/* Loads libmicrohttpd once: 0, or MCPAGE_ENOTFOUND with `why` (page/dynlib.h). */
int http_mhd_load(char *why, size_t cap);

#ifndef HTTP_MHD_DEFINING /* http_lib.c names the real functions */
#define MHD_add_response_header           http_mhd.MHD_add_response_header
#define MHD_create_response_from_buffer   http_mhd.MHD_create_response_from_buffer
#define MHD_create_response_from_callback http_mhd.MHD_create_response_from_callback
#define MHD_destroy_response              http_mhd.MHD_destroy_response
#define MHD_get_connection_info           http_mhd.MHD_get_connection_info
#define MHD_get_connection_values         http_mhd.MHD_get_connection_values
#define MHD_get_daemon_info               http_mhd.MHD_get_daemon_info
#define MHD_lookup_connection_value       http_mhd.MHD_lookup_connection_value
#define MHD_queue_response                http_mhd.MHD_queue_response
#define MHD_resume_connection             http_mhd.MHD_resume_connection
#define MHD_set_connection_option         http_mhd.MHD_set_connection_option
#define MHD_start_daemon                  http_mhd.MHD_start_daemon
#define MHD_stop_daemon                   http_mhd.MHD_stop_daemon
#define MHD_suspend_connection            http_mhd.MHD_suspend_connection
#endif

#endif
