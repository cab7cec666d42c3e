/*
 * The usage store tests (test_usage_store.c) on PostgreSQL.
 */
#define TB_POSTGRES_ONLY
#include "test_usage_store.c"
