/*
 * The one growable buffer (src/page/dbuf.h): appends keep the bytes
 * NUL-terminated, the limit and out of memory are sticky errors, take
 * hands the bytes over and empties the buffer, and dbuf_grow doubles an
 * array's capacity up to its maximum.
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

#include "page/alloc.h"
#include "page/dbuf.h"

static void test_appends_stay_terminated(void **state)
{
    (void)state;
    dbuf d;
    dbuf_init(&d, 0);
    assert_null(d.buf);
    dbuf_puts(&d, "ab");
    dbuf_putc(&d, 'c');
    dbuf_put(&d, "dEF", 1);
    dbuf_printf(&d, "-%d-%s", 42, "x");
    assert_int_equal(d.err, 0);
    assert_int_equal(d.len, 9);
    assert_string_equal(d.buf, "abcd-42-x");
    assert_int_equal(d.cap, DBUF_FIRST_CAP);
    dbuf_reset(&d);
    assert_int_equal(d.len, 0);
    assert_string_equal(d.buf, "");
    dbuf_free(&d);
    assert_null(d.buf);
}

/* A formatted piece longer than printf's stack buffer is written whole. */
static void test_long_printf_grows(void **state)
{
    (void)state;
    char big[5000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dbuf d;
    dbuf_init(&d, 0);
    dbuf_printf(&d, "<%s>", big);
    assert_int_equal(d.err, 0);
    assert_int_equal(d.len, sizeof big + 1);
    assert_int_equal(d.buf[0], '<');
    assert_int_equal(d.buf[d.len - 1], '>');
    assert_int_equal(d.buf[d.len], '\0');
    assert_true(d.cap >= d.len + 1 && d.cap == 8192);
    dbuf_free(&d);
}

/* Past the limit the error sticks: later appends, even small ones, do nothing. */
static void test_limit_is_a_sticky_error(void **state)
{
    (void)state;
    dbuf d;
    dbuf_init(&d, 5);
    dbuf_puts(&d, "12345");
    assert_int_equal(d.err, 0);
    dbuf_puts(&d, "6");
    assert_int_equal(d.err, MCPAGE_ERANGE);
    assert_int_equal(d.len, 5);
    dbuf_reset(&d);
    assert_int_equal(d.err, 0);
    dbuf_puts(&d, "1234");
    assert_string_equal(d.buf, "1234");
    size_t len = 99;
    dbuf_puts(&d, "567");
    assert_null(dbuf_take(&d, &len));
    assert_int_equal(len, 0);
    assert_null(d.buf);
    assert_int_equal(d.err, 0);
    assert_int_equal(d.max, 5);
}

static void test_take_hands_over(void **state)
{
    (void)state;
    dbuf d;
    dbuf_init(&d, 0);
    size_t len = 99;
    char *empty = dbuf_take(&d, &len);
    assert_non_null(empty);
    assert_string_equal(empty, "");
    assert_int_equal(len, 0);
    mcpage__free(empty);
    dbuf_puts(&d, "hello");
    char *s = dbuf_take(&d, &len);
    assert_string_equal(s, "hello");
    assert_int_equal(len, 5);
    assert_null(d.buf);
    assert_int_equal(d.len, 0);
    mcpage__free(s);
}

static int fail_after; /* allocations left before the test allocator fails */
static void *flaky_malloc(size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? malloc(n) : NULL;
}
static void *flaky_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* Out of memory is sticky too, and the bytes written so far stay intact. */
static void test_out_of_memory_is_sticky(void **state)
{
    (void)state;
    mcpage_allocator a = {
        .malloc_fn = flaky_malloc, .realloc_fn = flaky_realloc, .free_fn = plain_free, .ud = NULL};
    assert_int_equal(mcpage_set_allocator(&a), 0);
    fail_after = 1;
    dbuf d;
    dbuf_init(&d, 0);
    dbuf_puts(&d, "abc");
    char more[DBUF_FIRST_CAP];
    memset(more, 'm', sizeof more);
    dbuf_put(&d, more, sizeof more);
    assert_int_equal(d.err, MCPAGE_ENOMEM);
    fail_after = 100;
    dbuf_puts(&d, "d");
    assert_int_equal(d.err, MCPAGE_ENOMEM);
    assert_int_equal(d.len, 3);
    assert_memory_equal(d.buf, "abc", 3);
    dbuf_free(&d);
    assert_int_equal(mcpage_set_allocator(NULL), 0);
}

static void test_grow_doubles_to_the_maximum(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t cap = 0;
    void *p = v;
    assert_int_equal(dbuf_grow(&p, &cap, 1, sizeof *v, 8, 100), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(dbuf_grow(&p, &cap, 8, sizeof *v, 8, 100), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(dbuf_grow(&p, &cap, 9, sizeof *v, 8, 100), 0);
    assert_int_equal(cap, 16);
    assert_int_equal(dbuf_grow(&p, &cap, 70, sizeof *v, 8, 100), 0);
    assert_int_equal(cap, 100); /* 128 would pass the maximum */
    v = p;
    v[99] = 7;
    assert_int_equal(dbuf_grow(&p, &cap, 101, sizeof *v, 8, 100), MCPAGE_ERANGE);
    assert_int_equal(cap, 100);
    assert_ptr_equal(p, v);
    assert_int_equal(dbuf_grow(&p, &cap, SIZE_MAX / 4, sizeof *v, 8, SIZE_MAX), MCPAGE_ERANGE);
    mcpage__free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends_stay_terminated),
        cmocka_unit_test(test_long_printf_grows),
        cmocka_unit_test(test_limit_is_a_sticky_error),
        cmocka_unit_test(test_take_hands_over),
        cmocka_unit_test(test_out_of_memory_is_sticky),
        cmocka_unit_test(test_grow_doubles_to_the_maximum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
