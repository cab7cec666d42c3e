/* libpq's table for page/dynlib.c; MCPAGE_SONAME_PQ comes from the build. */
#define PG_LIB_DEFINING
#include "store/postgres/pg_lib.h"

#include "page/dynlib.h"

MCPAGE__DYNLIB_DEFINE(pg_lib_fns, store_pg__lib, PG_LIB_FUNCS, store_pg__lib_load, MCPAGE_SONAME_PQ,
                      "libpq5", "a PostgreSQL store", NULL)
