/*
 * The sync tests (test_sync.c) on PostgreSQL: the same table of checks,
 * run against MCPAGE_TEST_PG (skipped with a message when it is unset).
 * A separate CTest test so both backends run in parallel, each within its
 * own time limit.
 */
#define TB_POSTGRES_ONLY
#include "test_sync.c"
