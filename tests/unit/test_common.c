/* Tests for the common API: version, status strings, allocator hook. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "page/alloc.h"

static void version_string_matches_macros(void **state)
{
    (void)state;
    assert_string_equal(mcpage_version(), MCPAGE_VERSION_STRING);
}

static void every_status_has_its_own_message(void **state)
{
    (void)state;
    for (int a = MCPAGE_ENOTSUP; a <= 0; a++)
        for (int b = a + 1; b <= 0; b++)
            assert_string_not_equal(mcpage_strerror(a), mcpage_strerror(b));
    assert_string_equal(mcpage_strerror(12345), "unknown error");
}

static size_t counted;
static void *counting_malloc(size_t n, void *ud)
{
    (void)ud;
    counted++;
    return malloc(n);
}
static void *counting_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return realloc(p, n);
}
static void counting_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static void allocator_hook_reaches_internal_allocations(void **state)
{
    (void)state;
    mcpage_allocator a = {counting_malloc, counting_realloc, counting_free, NULL};
    counted = 0;
    assert_int_equal(mcpage_set_allocator(&a), 0);
    char *s = mcpage__strdup("abc");
    assert_string_equal(s, "abc");
    mcpage__free(s);
    assert_int_equal(counted, 1);
    assert_int_equal(mcpage_set_allocator(NULL), 0);
    mcpage_allocator bad = {NULL, counting_realloc, counting_free, NULL};
    assert_int_equal(mcpage_set_allocator(&bad), MCPAGE_EINVAL);
}

/* ---- mcpage__thread_block ---- */

static size_t freed;
static void *garbage_malloc(size_t n, void *ud)
{
    (void)ud;
    counted++;
    void *p = malloc(n);
    if (p)
        memset(p, 0xA5, n); /* what a block must not keep */
    return p;
}
static void counting_free_count(void *p, void *ud)
{
    (void)ud;
    if (p)
        freed++;
    free(p);
}

static mcpage__thread_block_key test_key;
#define BLOCK 300000 /* past malloc's mmap threshold: the default path's calloc */

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* In a thread: its block, zeroed, different from the caller's, then written. */
static void *other_thread(void *arg)
{
    unsigned char *mine = mcpage__thread_block(&test_key, BLOCK);
    if (!mine || mine == arg || !all_zero(mine, BLOCK) ||
        mcpage__thread_block(&test_key, BLOCK) != mine)
        return NULL;
    memset(mine, 7, BLOCK);
    return mine;
}

static void thread_block_is_each_threads_own_and_freed_when_it_ends(void **state)
{
    (void)state;
    for (int custom = 0; custom <= 1; custom++) {
        mcpage__thread_block_key fresh = {0};
        test_key = fresh;
        mcpage_allocator a = {garbage_malloc, counting_realloc, counting_free_count, NULL};
        if (custom)
            assert_int_equal(mcpage_set_allocator(&a), 0);
        counted = freed = 0;
        unsigned char *mine = mcpage__thread_block(&test_key, BLOCK);
        assert_non_null(mine);
        assert_true(all_zero(mine, BLOCK)); /* zeroed, whatever the allocator gave */
        assert_ptr_equal(mcpage__thread_block(&test_key, BLOCK), mine);
        mine[0] = 1;
        pthread_t t;
        void *theirs = NULL;
        assert_int_equal(pthread_create(&t, NULL, other_thread, mine), 0);
        assert_int_equal(pthread_join(t, &theirs), 0);
        assert_non_null(theirs); /* its own, zeroed block */
        assert_int_equal(mine[0], 1);
        if (custom) {
            assert_int_equal(counted, 2); /* through the hook: one block a thread */
            assert_int_equal(freed, 1);   /* the ended thread's, by the key */
        }
        /* this thread's block goes with its key's value */
        pthread_setspecific(test_key.key, NULL);
        mcpage__free(mine);
        pthread_key_delete(test_key.key);
        assert_int_equal(mcpage_set_allocator(NULL), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_string_matches_macros),
        cmocka_unit_test(every_status_has_its_own_message),
        cmocka_unit_test(allocator_hook_reaches_internal_allocations),
        cmocka_unit_test(thread_block_is_each_threads_own_and_freed_when_it_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
