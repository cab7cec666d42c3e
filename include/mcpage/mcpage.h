/*
 * mcpage: the public API, common part.
 *
 * mcpage is a paging contract for MCP tool results plus an MCP runtime in
 * C. This header holds what every part of the API shares: the export
 * macro, the version, the error codes and the allocator hook. Include
 * <mcpage/page.h> for the contract and <mcpage/server.h> for the runtime.
 */
#ifndef MCPAGE_MCPAGE_H
#define MCPAGE_MCPAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MCPAGE_BUILDING)
#define MCPAGE_API __attribute__((visibility("default")))
#else
#define MCPAGE_API
#endif

#define MCPAGE_VERSION_MAJOR  0
#define MCPAGE_VERSION_MINOR  2
#define MCPAGE_VERSION_PATCH  0
#define MCPAGE_VERSION_STRING "0.2.0"
/* One number that grows with every release: major * 10000 + minor * 100 + patch. */
#define MCPAGE_VERSION_NUMBER                                                                      \
    (MCPAGE_VERSION_MAJOR * 10000 + MCPAGE_VERSION_MINOR * 100 + MCPAGE_VERSION_PATCH)

/* The version of the library actually linked, e.g. "0.2.0". */
MCPAGE_API const char *mcpage_version(void);

/*
 * Error codes. Every fallible function returns 0 on success or one of
 * these negative values; mcpage_strerror() names it.
 */
enum mcpage_status {
    MCPAGE_OK = 0,
    MCPAGE_ENOMEM = -1,     /* an allocation failed */
    MCPAGE_EINVAL = -2,     /* an argument is out of its documented range */
    MCPAGE_ERANGE = -3,     /* a value or buffer exceeds its stated limit */
    MCPAGE_EPARSE = -4,     /* input is not well formed (JSON, UTF-8, a cursor) */
    MCPAGE_EIO = -5,        /* a read or write on a file or socket failed */
    MCPAGE_ENOTFOUND = -6,  /* the named thing does not exist */
    MCPAGE_ESTATE = -7,     /* the call is not valid in the object's current state */
    MCPAGE_ECRYPTO = -8,    /* the crypto library failed */
    MCPAGE_ESTORE = -9,     /* the store (database) failed */
    MCPAGE_EEXIST = -10,    /* the thing already exists */
    MCPAGE_ECANCELED = -11, /* the operation was cancelled */
    MCPAGE_EINPUT = -12,    /* the client must answer first (a modern-era call retries with it) */
    MCPAGE_ENOTSUP = -13    /* the client did not declare the capability this needs */
};

/* A short English description of a status code; never NULL. */
MCPAGE_API const char *mcpage_strerror(int status);

/*
 * The allocator hook: the library's one process-wide setting (there is
 * no other global state). Every allocation the library makes itself goes
 * through these three functions; the defaults are malloc, realloc and
 * free. Set it once, before any other call, or not at all: memory taken
 * under one allocator must not be freed after switching to another.
 *
 * It does not reach the libraries mcpage calls, which keep their own
 * hooks: JSON values (json_t, which the API passes in both directions)
 * come from jansson's allocator, so mcpage_set_allocator() deliberately
 * leaves it alone; to route them too, call jansson's
 * json_set_alloc_funcs() yourself before any json_t exists. OpenSSL
 * (CRYPTO_set_mem_functions) and the C library's threads likewise.
 * Memory the library hands to the caller (mcpage_result_to_json,
 * mcpage_uri_template_expand) is freed with mcpage_free(), which uses
 * this hook.
 */
typedef struct mcpage_allocator {
    void *(*malloc_fn)(size_t size, void *ud);
    void *(*realloc_fn)(void *ptr, size_t size, void *ud);
    void (*free_fn)(void *ptr, void *ud);
    void *ud; /* passed to each function */
} mcpage_allocator;

/*
 * Installs `a` (copied), or restores the defaults when `a` is NULL.
 * MCPAGE_EINVAL when one of the three functions is NULL. Not thread-safe:
 * call it before starting any thread that uses the library.
 */
MCPAGE_API int mcpage_set_allocator(const mcpage_allocator *a);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_MCPAGE_H */
