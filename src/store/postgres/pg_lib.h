/*
 * libpq, loaded when the first PostgreSQL store is opened (page/dynlib.h):
 * a process on a SQLite store never maps it nor what it pulls in
 * (Kerberos, LDAP, OpenSSL's libssl). The backend's files include this
 * instead of <libpq-fe.h>; each PQ* name below is the loaded function.
 */
#ifndef MCPAGE_STORE_PG_LIB_H
#define MCPAGE_STORE_PG_LIB_H

#include <stddef.h>

#include <libpq-fe.h>

/* The functions the backend calls, each once here. */
#define PG_LIB_FUNCS(X)                                                                            \
    X(PQcancel)                                                                                    \
    X(PQclear)                                                                                     \
    X(PQconnectdbParams)                                                                           \
    X(PQconsumeInput)                                                                              \
    X(PQdb)                                                                                        \
    X(PQerrorMessage)                                                                              \
    X(PQexec)                                                                                      \
    X(PQexecParams)                                                                                \
    X(PQfinish)                                                                                    \
    X(PQfreeCancel)                                                                                \
    X(PQgetCancel)                                                                                 \
    X(PQgetResult)                                                                                 \
    X(PQgetisnull)                                                                                 \
    X(PQgetlength)                                                                                 \
    X(PQgetvalue)                                                                                  \
    X(PQisBusy)                                                                                    \
    X(PQntuples)                                                                                   \
    X(PQreset)                                                                                     \
    X(PQresultErrorField)                                                                          \
    X(PQresultErrorMessage)                                                                        \
    X(PQresultStatus)                                                                              \
    X(PQsendQuery)                                                                                 \
    X(PQsendQueryParams)                                                                           \
    X(PQsocket)                                                                                    \
    X(PQstatus)                                                                                    \
    X(PQtransactionStatus)

/* The loaded functions, typed as <libpq-fe.h> declares them. */
typedef struct pg_lib_fns {
#define PG_LIB_SLOT(f) __typeof__(f) *f;
    PG_LIB_FUNCS(PG_LIB_SLOT)
#undef PG_LIB_SLOT
} pg_lib_fns;

extern pg_lib_fns store_pg__lib;

/* Loads libpq once: 0, or MCPAGE_ENOTFOUND with `why` (page/dynlib.h). */
int store_pg__lib_load(char *why, size_t cap);

#ifndef PG_LIB_DEFINING /* pg_lib.c names the real functions */
#define PQcancel             store_pg__lib.PQcancel
#define PQclear              store_pg__lib.PQclear
#define PQconnectdbParams    store_pg__lib.PQconnectdbParams
#define PQconsumeInput       store_pg__lib.PQconsumeInput
#define PQdb                 store_pg__lib.PQdb
#define PQerrorMessage       store_pg__lib.PQerrorMessage
#define PQexec               store_pg__lib.PQexec
#define PQexecParams         store_pg__lib.PQexecParams
#define PQfinish             store_pg__lib.PQfinish
#define PQfreeCancel         store_pg__lib.PQfreeCancel
#define PQgetCancel          store_pg__lib.PQgetCancel
#define PQgetResult          store_pg__lib.PQgetResult
#define PQgetisnull          store_pg__lib.PQgetisnull
#define PQgetlength          store_pg__lib.PQgetlength
#define PQgetvalue           store_pg__lib.PQgetvalue
#define PQisBusy             store_pg__lib.PQisBusy
#define PQntuples            store_pg__lib.PQntuples
#define PQreset              store_pg__lib.PQreset
#define PQresultErrorField   store_pg__lib.PQresultErrorField
#define PQresultErrorMessage store_pg__lib.PQresultErrorMessage
#define PQresultStatus       store_pg__lib.PQresultStatus
#define PQsendQuery          store_pg__lib.PQsendQuery
#define PQsendQueryParams    store_pg__lib.PQsendQueryParams
#define PQsocket             store_pg__lib.PQsocket
#define PQstatus             store_pg__lib.PQstatus
#define PQtransactionStatus  store_pg__lib.PQtransactionStatus
#endif

#endif
