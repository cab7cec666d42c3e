/*
 * The tools' contract tests (test_tools_contract.c) on PostgreSQL: the
 * same table of checks against MCPAGE_TEST_PG (skipped with a message
 * when it is unset), as its own CTest test.
 */
#define TB_POSTGRES_ONLY
#include "test_tools_contract.c"
