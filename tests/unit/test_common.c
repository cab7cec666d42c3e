/* Tests for the common API: version, status strings, allocator hook. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_string_matches_macros),
        cmocka_unit_test(every_status_has_its_own_message),
        cmocka_unit_test(allocator_hook_reaches_internal_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
