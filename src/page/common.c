/*
 * What every part of the library shares: the version, the status strings,
 * the allocator hook and the report of a failed invariant (debug builds).
 */
#include <mcpage/mcpage.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page/alloc.h"
#include "page/invariant.h"

const char *mcpage_version(void)
{
    return MCPAGE_VERSION_STRING;
}

const char *mcpage_strerror(int status)
{
    switch (status) {
    case MCPAGE_OK:
        return "success";
    case MCPAGE_ENOMEM:
        return "out of memory";
    case MCPAGE_EINVAL:
        return "invalid argument";
    case MCPAGE_ERANGE:
        return "value or size beyond its limit";
    case MCPAGE_EPARSE:
        return "malformed input";
    case MCPAGE_EIO:
        return "input/output error";
    case MCPAGE_ENOTFOUND:
        return "not found";
    case MCPAGE_ESTATE:
        return "call not valid in the current state";
    case MCPAGE_ECRYPTO:
        return "cryptography failure";
    case MCPAGE_ESTORE:
        return "store failure";
    case MCPAGE_EEXIST:
        return "already exists";
    case MCPAGE_ECANCELED:
        return "cancelled";
    case MCPAGE_EINPUT:
        return "input required from the client";
    case MCPAGE_ENOTSUP:
        return "the client did not declare the capability this needs";
    default:
        return "unknown error";
    }
}

static void *default_malloc(size_t size, void *ud)
{
    (void)ud;
    return malloc(size);
}

static void *default_realloc(void *ptr, size_t size, void *ud)
{
    (void)ud;
    return realloc(ptr, size);
}

static void default_free(void *ptr, void *ud)
{
    (void)ud;
    free(ptr);
}

/* The one piece of process-wide state: set before use, read afterwards. */
static mcpage_allocator allocator = {default_malloc, default_realloc, default_free, NULL};

int mcpage_set_allocator(const mcpage_allocator *a)
{
    if (a == NULL) {
        allocator = (mcpage_allocator){default_malloc, default_realloc, default_free, NULL};
        return MCPAGE_OK;
    }
    if (a->malloc_fn == NULL || a->realloc_fn == NULL || a->free_fn == NULL)
        return MCPAGE_EINVAL;
    allocator = *a;
    return MCPAGE_OK;
}

void *mcpage__malloc(size_t size)
{
    return allocator.malloc_fn(size ? size : 1, allocator.ud);
}

void *mcpage__calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    if (allocator.malloc_fn == default_malloc) /* zero pages stay untouched */
        return calloc(n ? n : 1, size ? size : 1);
    void *p = mcpage__malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *mcpage__realloc(void *ptr, size_t size)
{
    return allocator.realloc_fn(ptr, size ? size : 1, allocator.ud);
}

void mcpage__free(void *ptr)
{
    if (ptr)
        allocator.free_fn(ptr, allocator.ud);
}

char *mcpage__strndup(const char *s, size_t n)
{
    char *d = mcpage__malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *mcpage__strdup(const char *s)
{
    return mcpage__strndup(s, strlen(s));
}

#ifndef NDEBUG
void mcpage__assert_fail(const char *expr, const char *file, int line, const char *func)
{
    (void)fprintf(stderr, "mcpage: %s:%d: %s: invariant failed: %s\n", file, line, func, expr);
    abort();
}
#endif

/* Frees a thread's block when the thread ends (its key's destructor). */
static void thread_block_free(void *p)
{
    mcpage__free(p);
}

static pthread_mutex_t thread_block_mu = PTHREAD_MUTEX_INITIALIZER;

void *mcpage__thread_block(mcpage__thread_block_key *b, size_t size)
{
    if (!__atomic_load_n(&b->made, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&thread_block_mu);
        if (!b->made && pthread_key_create(&b->key, thread_block_free) == 0)
            __atomic_store_n(&b->made, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&thread_block_mu);
        if (!b->made)
            return NULL;
    }
    void *p = pthread_getspecific(b->key);
    if (p == NULL && (p = mcpage__calloc(1, size)) != NULL && pthread_setspecific(b->key, p) != 0) {
        mcpage__free(p);
        p = NULL;
    }
    return p;
}
