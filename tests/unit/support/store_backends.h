/* The store backends a store or sync test runs on: SQLite, and
   PostgreSQL when MCPAGE_TEST_PG names a server (scripts/pg-test-server.sh
   starts one). A test suite runs its whole table of checks on one
   backend per executable (see TB_RUN_GROUPS); each fresh store is a file (SQLite) or a new schema
   of the test database (PostgreSQL, reached through the URL's search_path; its connections are
   named application_name "tb<pid>"). */
#ifndef MCPAGE_TEST_STORE_BACKENDS_H
#define MCPAGE_TEST_STORE_BACKENDS_H

#include <stddef.h>

typedef enum tb_backend { TB_SQLITE = 0, TB_POSTGRES } tb_backend;

/* 1 when MCPAGE_TEST_PG names a server. */
int tb_have_pg(void);
/* Selects the backend later tb_spec() calls use. */
void tb_use(tb_backend b);
tb_backend tb_current(void);
const char *tb_name(tb_backend b);
/* A spec for a fresh, empty store called `name`: dir/name.db, or a new
   schema whose URL is written to out. Fails the test when it cannot. */
void tb_spec(const char *dir, const char *name, char *out, size_t n);
/* Drops the schemas made so far and closes pooled connections. */
void tb_cleanup(void);
/* Runs a cmocka group on SQLite, or, in a file that defines
   TB_POSTGRES_ONLY before including the suite (test_store_pg.c is
   `#define TB_POSTGRES_ONLY` + `#include "test_store.c"`), on PostgreSQL:
   two CTest tests, each with its own time limit, run in parallel. */
#ifdef TB_POSTGRES_ONLY
#define TB_RUN_GROUPS(tests) tb_run_groups(tests, sizeof(tests) / sizeof((tests)[0]), TB_POSTGRES)
#else
#define TB_RUN_GROUPS(tests) tb_run_groups(tests, sizeof(tests) / sizeof((tests)[0]), TB_SQLITE)
#endif
struct CMUnitTest;
int tb_run_groups(const struct CMUnitTest *tests, size_t n, tb_backend b);

#endif
