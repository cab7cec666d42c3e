/*
 * Libraries loaded on first use. libpq (PostgreSQL stores),
 * libmicrohttpd (the HTTP transport) and libcurl (`mcpage check` over
 * HTTP, the OAuth keys) and what they pull in (gnutls, Kerberos, LDAP,
 * libssh2, ...) are about 40 shared objects; linked, every mcpage process
 * maps and relocates them at start, about 4.6 MB of resident memory and
 * 5-6 ms, though most never use them (a stdio server, a sync, a call).
 * Loaded by dlopen() when first needed, they cost only those that do.
 *
 * A module describes a library once: its soname (from the build, the
 * name the dynamic linker would have used), the package that installs
 * it, and a struct of typed function pointers in the order of their
 * names (MCPAGE__DYNLIB_DEFINE); the module's own header maps the
 * library's function names onto that struct, so call sites read as
 * plain library calls.
 */
#ifndef MCPAGE_PAGE_DYNLIB_H
#define MCPAGE_PAGE_DYNLIB_H

#include <pthread.h>
#include <stddef.h>

/* A library loaded on first use; a static object of its module. Its
 * struct holds one function pointer per name, in the names' order. */
typedef struct mcpage__dynlib {
    const char *soname;       /* "libpq.so.5" */
    const char *package;      /* what installs it, for the error: "libpq5" */
    const char *use;          /* what needs it, for the error: "a PostgreSQL store" */
    const char *const *names; /* its functions, as dlsym() takes them */
    size_t nnames;            /* how many */
    void *fns;                /* the struct the addresses go into, name i in slot i */
    int (*init)(void);        /* run once after loading (curl_global_init), or NULL */
    pthread_mutex_t mu;       /* guards the fields below */
    int state;                /* 0 not tried, 1 loaded, -1 failed */
    char why[384];            /* the failure, said once and kept */
} mcpage__dynlib;

#define MCPAGE__DYNLIB_INIT(so, pkg, what, table, n, fnstruct, initfn)                             \
    {                                                                                              \
        .soname = (so), .package = (pkg), .use = (what), .names = (table), .nnames = (n),          \
        .fns = (fnstruct), .init = (initfn), .mu = PTHREAD_MUTEX_INITIALIZER                       \
    }

/* A function's name, for FUNCS(MCPAGE__DYNLIB_NAME). */
#define MCPAGE__DYNLIB_NAME(f) #f,

/*
 * A module's library, defined once: `fns`, the struct `type` of the
 * functions FUNCS(X) lists (X(name) for each, in the struct's order), and
 * `int load(char *why, size_t cap)`, which loads them (below). `start` is
 * run once after loading, or NULL.
 */
#define MCPAGE__DYNLIB_DEFINE(type, fns, FUNCS, load, so, pkg, what, start)                        \
    type fns;                                                                                      \
    static const char *const fns##_names[] = {FUNCS(MCPAGE__DYNLIB_NAME)};                         \
    _Static_assert(sizeof(type) == sizeof fns##_names / sizeof fns##_names[0] * sizeof(void *),    \
                   #type " holds one function pointer per name");                                  \
    static mcpage__dynlib fns##_lib = MCPAGE__DYNLIB_INIT(                                         \
        so, pkg, what, fns##_names, sizeof fns##_names / sizeof fns##_names[0], &fns, start);      \
    int load(char *why, size_t cap)                                                                \
    {                                                                                              \
        return mcpage__dynlib_load(&fns##_lib, why, cap);                                          \
    }

/*
 * Loads `lib` and fills its struct, once per process; later calls return
 * the first one's result. 0, or MCPAGE_ENOTFOUND with `why` naming the
 * library, the package to install and what it is needed for (a missing
 * function too: a library older than the build's). Thread-safe. A
 * loaded library stays loaded.
 */
int mcpage__dynlib_load(mcpage__dynlib *lib, char *why, size_t cap);

#endif
