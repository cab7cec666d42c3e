/* libpq's table for page/dynlib.c; MCPAGE_SONAME_PQ comes from the build. */
#define PG_LIB_DEFINING
#include "store/postgres/pg_lib.h"

#include "page/dynlib.h"

pg_lib_fns store_pg__lib;

#define PG_LIB_SYM(f) {#f, offsetof(pg_lib_fns, f)},
static const mcpage__dynsym pg_syms[] = {PG_LIB_FUNCS(PG_LIB_SYM)};

static mcpage__dynlib pg_dynlib =
    MCPAGE__DYNLIB_INIT(MCPAGE_SONAME_PQ, "libpq5", "a PostgreSQL store", pg_syms,
                        sizeof pg_syms / sizeof pg_syms[0], &store_pg__lib, NULL);

int store_pg__lib_load(char *why, size_t cap)
{
    return mcpage__dynlib_load(&pg_dynlib, why, cap);
}
