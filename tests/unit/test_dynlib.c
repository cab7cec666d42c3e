/*
 * Libraries opened on first use (src/page/dynlib.h): a library found
 * fills its table once and its functions are the library's; an absent
 * one, or one that lacks a function, is an error that names the
 * library, the package to install and what needs it, said again on
 * every later call without a second attempt; a failed start is an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "page/dynlib.h"

/* Two of libc's functions, typed, in the order of their names, as a
 * module's table holds them. */
typedef struct libc_fns {
    size_t (*strlen)(const char *);
    int (*abs)(int);
} libc_fns;

static const char *const libc_syms[] = {"strlen", "abs"};

static int starts;
static int start_ok(void)
{
    starts++;
    return 0;
}
static int start_fails(void)
{
    return -1;
}

static void test_found_library_fills_its_table_once(void **state)
{
    (void)state;
    libc_fns fns = {0};
    mcpage__dynlib lib =
        MCPAGE__DYNLIB_INIT("libc.so.6", "libc6", "the test", libc_syms, 2, &fns, start_ok);
    char why[256] = "untouched";
    starts = 0;
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), 0);
    assert_non_null(fns.strlen);
    assert_int_equal(fns.strlen("mcpage"), 6);
    assert_int_equal(fns.abs(-7), 7);
    assert_string_equal(why, "untouched");
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), 0);
    assert_int_equal(starts, 1);
}

static void test_absent_library_names_the_package(void **state)
{
    (void)state;
    libc_fns fns = {0};
    mcpage__dynlib lib = MCPAGE__DYNLIB_INIT("libmcpage-absent.so.9", "libmcpage-absent9",
                                             "a PostgreSQL store", libc_syms, 2, &fns, start_ok);
    char why[384] = "";
    starts = 0;
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), MCPAGE_ENOTFOUND);
    assert_non_null(strstr(why, "a PostgreSQL store needs libmcpage-absent.so.9 "
                                "(Debian: apt-get install libmcpage-absent9): "));
    assert_null(fns.strlen);
    assert_int_equal(starts, 0);
    char again[384] = "";
    assert_int_equal(mcpage__dynlib_load(&lib, again, sizeof again), MCPAGE_ENOTFOUND);
    assert_string_equal(again, why);
    assert_int_equal(mcpage__dynlib_load(&lib, NULL, 0), MCPAGE_ENOTFOUND);
}

static void test_missing_function_is_named(void **state)
{
    (void)state;
    libc_fns fns = {0};
    static const char *const syms[] = {"strlen", "mcpage_no_such_function"};
    mcpage__dynlib lib =
        MCPAGE__DYNLIB_INIT("libc.so.6", "libc6", "the test", syms, 2, &fns, start_ok);
    char why[384] = "";
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), MCPAGE_ENOTFOUND);
    assert_string_equal(why, "the test needs libc.so.6 with mcpage_no_such_function(), which "
                             "the one installed lacks (upgrade libc6)");
}

static void test_failed_start_is_an_error(void **state)
{
    (void)state;
    libc_fns fns = {0};
    mcpage__dynlib lib =
        MCPAGE__DYNLIB_INIT("libc.so.6", "libc6", "MCP over HTTP", libc_syms, 2, &fns, start_fails);
    char why[384] = "";
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), MCPAGE_ENOTFOUND);
    assert_string_equal(why, "MCP over HTTP: libc.so.6 did not start");
}

/* A short buffer gets a cut, terminated message. */
static void test_short_buffer_is_terminated(void **state)
{
    (void)state;
    libc_fns fns = {0};
    mcpage__dynlib lib =
        MCPAGE__DYNLIB_INIT("libmcpage-absent.so.9", "x", "the test", libc_syms, 2, &fns, NULL);
    char why[8];
    memset(why, 'z', sizeof why);
    assert_int_equal(mcpage__dynlib_load(&lib, why, sizeof why), MCPAGE_ENOTFOUND);
    assert_string_equal(why, "the tes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_library_fills_its_table_once),
        cmocka_unit_test(test_absent_library_names_the_package),
        cmocka_unit_test(test_missing_function_is_named),
        cmocka_unit_test(test_failed_start_is_an_error),
        cmocka_unit_test(test_short_buffer_is_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
