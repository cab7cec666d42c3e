/*
 * What `mcpage serve` and `mcpage call` share: resolving the archive
 * path, the cursor key (next to the archive, so cursors outlive the
 * process and work across `mcpage call` runs), the pager and the tools.
 */
#ifndef MCPAGE_CLI_ARCHIVE_H
#define MCPAGE_CLI_ARCHIVE_H

#include <mcpage/page.h>
#include <mcpage/program.h>
#include <mcpage/server.h>

#include "sync/sync.h"
#include "tools/tools.h"

/* The cursor key file, beside the archive. */
#define CLI_KEY_FILE "cursor.key"
/* The key's older variable, still read when MCPAGE_KEY is not set. */
#define CLI_KEY_ENV_OLD "MCPAGE_CURSOR_KEY"

typedef struct cli_archive {
    char db[SYNC_PATH_MAX]; /* the archive's path or postgres:// URL */
    mcpage_keyring *kr;     /* signs cursors (env MCPAGE_CURSOR_KEY or the key file) */
    mcpage_pager *pager;    /* the contract's settings */
    tools_ctx tools;        /* the tools' shared context */
    bool tools_ready;       /* tools was initialized */
} cli_archive;

/*
 * Resolves the archive (`store_arg`, else `db_arg`, else MCPAGE_STORE,
 * else MCPAGE_DB, else the XDG data dir: cli_store_spec()), loads or
 * creates the cursor key and the pager. Prints why on stderr (prefixed
 * with `who`) and returns non-zero on failure.
 */
int cli_archive_open(cli_archive *a, const char *who, const char *store_arg, const char *db_arg);
/* Registers the archive's tools and resources on `srv`. */
int cli_archive_register(cli_archive *a, mcpage_server *srv);
void cli_archive_close(cli_archive *a);

#endif
