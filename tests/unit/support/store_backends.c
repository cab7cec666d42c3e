/* Store backends for tests: see store_backends.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <libpq-fe.h>

#include "store/store.h"
#include "support/store_backends.h"

#define TB_SCHEMAS 128 /* schemas one test process makes */

static tb_backend current = TB_SQLITE;
static char schemas[TB_SCHEMAS][64];
static int nschemas;
static int serial;

int tb_have_pg(void)
{
    const char *pg = getenv("MCPAGE_TEST_PG");
    return pg && *pg;
}

void tb_use(tb_backend b)
{
    current = b;
}

tb_backend tb_current(void)
{
    return current;
}

const char *tb_name(tb_backend b)
{
    return b == TB_POSTGRES ? "postgres" : "sqlite";
}

static int pg_exec(const char *sql)
{
    PGconn *db = PQconnectdb(getenv("MCPAGE_TEST_PG"));
    int ok = PQstatus(db) == CONNECTION_OK;
    if (ok) {
        PQclear(PQexec(db, "SET client_min_messages = warning"));
        PGresult *r = PQexec(db, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            fprintf(stderr, "tb: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
    } else {
        fprintf(stderr, "tb: cannot reach MCPAGE_TEST_PG: %s", PQerrorMessage(db));
    }
    PQfinish(db);
    return ok ? 0 : -1;
}

void tb_spec(const char *dir, const char *name, char *out, size_t n)
{
    if (current == TB_SQLITE) {
        snprintf(out, n, "%s/%s.db", dir, name);
        return;
    }
    assert_true(nschemas < TB_SCHEMAS);
    char *schema = schemas[nschemas];
    snprintf(schema, sizeof schemas[0], "t_%ld_%d_%s", (long)getpid(), ++serial, name);
    for (char *p = schema; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    char sql[160];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
    assert_int_equal(pg_exec(sql), 0);
    nschemas++;
    const char *url = getenv("MCPAGE_TEST_PG");
    int written = snprintf(out, n, "%s%soptions=-csearch_path%%3D%s&application_name=tb%ld", url,
                           strchr(url, '?') ? "&" : "?", schema, (long)getpid());
    assert_true(written > 0 && (size_t)written < n);
}

void tb_cleanup(void)
{
    store_pool_drain();
    for (int i = 0; i < nschemas; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %.63s CASCADE", schemas[i]);
        pg_exec(sql);
    }
    nschemas = 0;
}

int tb_run_groups(const struct CMUnitTest *tests, size_t n, tb_backend b)
{
    if (b == TB_POSTGRES && !tb_have_pg()) {
        print_message("[  SKIPPED ] postgres: MCPAGE_TEST_PG is not set "
                      "(eval \"$(scripts/pg-test-server.sh start)\" to run these on PostgreSQL)\n");
        return 0;
    }
    tb_use(b);
    int rc = _cmocka_run_group_tests(tb_name(b), tests, n, NULL, NULL);
    tb_cleanup();
    return rc;
}
