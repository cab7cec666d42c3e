/*
 * examples/files against the generic paging-contract test
 * (tests/unit/support/tool_contract.c), unchanged: every paginating tool
 * the example registers is found through tools/list and checked on real
 * calls over a generated directory.
 */
#define _XOPEN_SOURCE 700 /* before any system header: the example uses nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define FILES_SERVER_NO_MAIN
#include "../../examples/files/files_server.c"

#include "support/tool_contract.h"

typedef struct env {
    char dir[64];       /* the served directory */
    files_ctx fx;       /* the example's state */
    mcpage_server *srv; /* the registry */
} env;

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/mcpage_files_XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    char name[64], sub[128];
    snprintf(sub, sizeof sub, "%s/sub", e->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    for (int i = 0; i < 120; i++) {
        snprintf(name, sizeof name, "%sfile_%03d.txt", i % 4 ? "" : "sub/", i);
        write_file(e->dir, name, "x\n", 2);
    }
    /* A text of 3,000 lines, some of them long, and a binary file. */
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    for (int i = 1; i <= 3000; i++) {
        len += (size_t)snprintf(text + len, cap - len, "line %d ", i);
        for (int k = 0; i % 500 == 0 && k < 3000; k++)
            text[len++] = (char)('a' + k % 26);
        text[len++] = '\n';
    }
    write_file(e->dir, "doc.txt", text, len);
    for (size_t i = 0; i < 70000; i++)
        text[i] = (char)(i * 131 % 256);
    write_file(e->dir, "blob.bin", text, 70000);
    free(text);
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "files-test", "0");
    assert_int_equal(mcpage_server_new(&cfg, &e->srv), 0);
    char *argv[] = {e->dir, NULL}; /* what mcpage_main passes: the positional arguments */
    assert_int_equal(files_setup(e->srv, 1, argv, &e->fx), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    mcpage_server_free(e->srv);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
    assert_int_equal(system(cmd), 0);
    free(e);
    return 0;
}

static json_t *base_args(const char *tool, void *ud)
{
    (void)ud;
    if (strcmp(tool, "read_file") == 0)
        return json_pack("{s:s}", "path", "doc.txt");
    if (strcmp(tool, "read_file_bytes") == 0)
        return json_pack("{s:s}", "path", "blob.bin");
    return NULL;
}

static void files_example_keeps_the_paging_contract(void **state)
{
    env *e = *state;
    tool_contract_opts o = {.base_args = base_args, .ud = e};
    tool_contract_report rep;
    tool_contract_check(e->srv, &o, &rep);
    fprintf(stderr, "contract: %d tools, %d paged, %d calls, %d failures\n", rep.tools_seen,
            rep.tools_paged, rep.calls, rep.failures);
    assert_int_equal(rep.tools_seen, 3);
    assert_int_equal(rep.tools_paged, 3);
    assert_true(rep.calls > 20);
    assert_int_equal(rep.failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(files_example_keeps_the_paging_contract, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
