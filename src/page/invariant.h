/*
 * Invariants checked in debug and sanitizer builds (compiled out when
 * NDEBUG is defined, as in the release and fuzz presets).
 *
 * MCPAGE_ASSERT(cond) states what the code assumes and cannot be wrong
 * about without a bug here: never input from outside, which gets an
 * error instead. MCPAGE_ASSERT_LOCKED(m) opens a function whose caller
 * must hold the mutex m ("lock held" in its comment): it fails when
 * nobody holds it. (It cannot tell which thread holds it; a mutex held
 * by another thread passes, so the check never fails a correct caller.)
 */
#ifndef MCPAGE_PAGE_INVARIANT_H
#define MCPAGE_PAGE_INVARIANT_H

#ifdef NDEBUG

#define MCPAGE_ASSERT(cond)     ((void)sizeof(!(cond)))
#define MCPAGE_ASSERT_LOCKED(m) ((void)sizeof(m))

#else

#include <errno.h>
#include <pthread.h>

/* Prints where and what failed, then aborts (debug builds only). */
void mcpage__assert_fail(const char *expr, const char *file, int line, const char *func);

#define MCPAGE_ASSERT(cond)                                                                        \
    ((cond) ? (void)0 : mcpage__assert_fail(#cond, __FILE__, __LINE__, __func__))

/* A trylock that succeeds means nobody held m: undo it, then fail. */
#define MCPAGE_ASSERT_LOCKED(m)                                                                    \
    (pthread_mutex_trylock(m) == EBUSY                                                             \
         ? (void)0                                                                                 \
         : ((void)pthread_mutex_unlock(m),                                                         \
            mcpage__assert_fail("caller holds " #m, __FILE__, __LINE__, __func__)))

#endif

#endif
