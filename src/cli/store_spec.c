/*
 * Which store a subcommand opens: `--store SPEC` (a postgres:// URL or a
 * file), else `--db FILE`, else env MCPAGE_STORE, else env MCPAGE_DB,
 * else the default SQLite file (sync_default_db()). Flags win over the
 * environment; --store wins over --db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"
#include "store/store.h"
#include "sync/sync.h"
#include "page/term.h"

int cli_store_spec(char *buf, size_t n, const char *store_arg, const char *db_arg)
{
    const char *env = getenv("MCPAGE_STORE");
    const char *pick = store_arg ? store_arg : db_arg ? db_arg : (env && *env) ? env : NULL;
    if (!pick)
        return sync_default_db(buf, n);
    int w = snprintf(buf, n, "%s", pick);
    return (w < 0 || (size_t)w >= n) ? MCPAGE_ERANGE : 0;
}

int cli_store_open_read(const char *who, const char *store_arg, const char *db_arg,
                        const char *advice, store **out, char *shown, size_t shown_cap)
{
    char db[SYNC_PATH_MAX], err[600];
    *out = NULL;
    if (cli_store_spec(db, sizeof db, store_arg, db_arg) < 0) {
        text_term_printf(stderr, "%s: the store path or URL is too long\n", who);
        return 2;
    }
    store_spec_display(db, shown, shown_cap);
    if (store_open_msg(db, STORE_OPEN_READONLY, out, err, sizeof err) < 0) {
        text_term_printf(stderr, "%s: cannot open %s: %s%s\n", who, shown, err,
                         advice ? advice : "");
        return 1;
    }
    return 0;
}
