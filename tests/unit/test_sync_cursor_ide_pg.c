/*
 * The Cursor editor sync tests (test_sync_cursor_ide.c) on PostgreSQL: the
 * same checks, run against MCPAGE_TEST_PG (skipped with a message when
 * unset).
 */
#define TB_POSTGRES_ONLY
#include "test_sync_cursor_ide.c"
