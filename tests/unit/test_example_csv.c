/*
 * examples/csv against the generic paging-contract test
 * (tests/unit/support/tool_contract.c), unchanged: list_rows and
 * read_cells found through tools/list and checked on real calls over a
 * generated CSV file with quoted fields, line breaks and long cells.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define CSV_SERVER_NO_MAIN
#include "../../examples/csv/csv_server.c"

#include <unistd.h>

#include "support/tool_contract.h"

typedef struct env {
    char path[64];      /* the CSV file */
    csv_ctx cx;         /* the example's state */
    mcpage_server *srv; /* the registry */
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    snprintf(e->path, sizeof e->path, "/tmp/mcpage_csv_XXXXXX");
    int fd = mkstemp(e->path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "id,name,note,amount,city,code\r\n");
    for (int r = 0; r < 1500; r++) {
        fprintf(f, "%d,name %d,", r, r);
        if (r % 7 == 0)
            fprintf(f, "\"two\nlines, \"\"quoted\"\"\"");
        else if (r % 250 == 0)
            for (int k = 0; k < 2000; k++)
                fputc('a' + k % 26, f);
        else
            fprintf(f, "n%d", r);
        fprintf(f, ",%d,city%d,c%05d\r\n", r * 3, r % 40, r);
    }
    fclose(f);
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "csv-test", "0");
    assert_int_equal(mcpage_server_new(&cfg, &e->srv), 0);
    char *argv[] = {e->path, NULL}; /* what mcpage_main passes: the positional arguments */
    assert_int_equal(csv_setup(e->srv, 1, argv, &e->cx), 0);
    assert_int_equal(e->cx.nrows, 1500);
    assert_int_equal(e->cx.ncols, 6);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    mcpage_server_free(e->srv);
    csv_close(&e->cx);
    unlink(e->path);
    free(e);
    return 0;
}

static void csv_example_keeps_the_paging_contract(void **state)
{
    env *e = *state;
    tool_contract_opts o = {.base_args = NULL, .ud = e};
    tool_contract_report rep;
    tool_contract_check(e->srv, &o, &rep);
    fprintf(stderr, "contract: %d tools, %d paged, %d calls, %d failures\n", rep.tools_seen,
            rep.tools_paged, rep.calls, rep.failures);
    assert_int_equal(rep.tools_seen, 2);
    assert_int_equal(rep.tools_paged, 2);
    assert_true(rep.calls > 20);
    assert_int_equal(rep.failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(csv_example_keeps_the_paging_contract, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
