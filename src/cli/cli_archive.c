/*
 * Archive setup shared by `mcpage serve` and `mcpage call`.
 */
#include "cli/cli_archive.h"

#include "cli/commands.h"
#include "page/term.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_archive_open(cli_archive *a, const char *who, const char *store_arg, const char *db_arg)
{
    memset(a, 0, sizeof *a);
    int rc = cli_store_spec(a->db, sizeof a->db, store_arg, db_arg);
    if (rc < 0) {
        text_term_printf(stderr, "%s: the archive path or URL is too long\n", who);
        return rc;
    }
    /* The key, as every mcpage program loads it (docs/keys.md): MCPAGE_KEY
     * (MCPAGE_CURSOR_KEY, its older name, still read), else the key file:
     * MCPAGE_KEY_FILE, or one beside a SQLite archive. A server store
     * (postgres://) has no directory: its key file sits in the default data
     * directory, so instances on several machines share one MCPAGE_KEY
     * (docs/scale-out.md). */
    const char *env = getenv(MCPAGE_KEY_ENV) ? MCPAGE_KEY_ENV : CLI_KEY_ENV_OLD;
    char keydir[SYNC_PATH_MAX];
    if (store_spec_is_url(a->db) ? sync_default_db(keydir, sizeof keydir) < 0
                                 : snprintf(keydir, sizeof keydir, "%s", a->db) < 0) {
        text_term_printf(stderr, "%s: the archive path is too long\n", who);
        return MCPAGE_ERANGE;
    }
    if (store_spec_is_url(a->db))
        sync_make_parent_dirs(keydir);
    char key[SYNC_PATH_MAX + 32];
    const char *slash = strrchr(keydir, '/');
    const char *key_file = getenv(MCPAGE_KEY_FILE_ENV);
    if (key_file && key_file[0])
        snprintf(key, sizeof key, "%s", key_file);
    else if (slash)
        snprintf(key, sizeof key, "%.*s/%s", (int)(slash - keydir), keydir, CLI_KEY_FILE);
    else
        snprintf(key, sizeof key, "%s", CLI_KEY_FILE);
    rc = mcpage_keyring_new(&a->kr);
    if (rc == 0)
        rc = mcpage_keyring_load(a->kr, env, key);
    if (rc != 0) {
        text_term_printf(stderr, "%s: the signing key (env %s, or the key file %s): %s\n", who, env,
                         key, mcpage_strerror(rc));
        cli_archive_close(a);
        return rc;
    }
    rc = mcpage_pager_new(NULL, a->kr, &a->pager);
    if (rc == 0)
        rc = tools_ctx_init(&a->tools, a->db, a->pager);
    if (rc != 0) {
        text_term_printf(stderr, "%s: %s\n", who, mcpage_strerror(rc));
        cli_archive_close(a);
        return rc;
    }
    a->tools.export_dir = getenv("MCPAGE_EXPORT_DIR"); /* export_session's folder, if any */
    a->tools_ready = true;
    return 0;
}

int cli_archive_register(cli_archive *a, mcpage_server *srv)
{
    return tools_register_all(srv, &a->tools);
}

void cli_archive_close(cli_archive *a)
{
    if (a->tools_ready)
        tools_ctx_free(&a->tools);
    a->tools_ready = false;
    mcpage_pager_free(a->pager);
    a->pager = NULL;
    mcpage_keyring_free(a->kr);
    a->kr = NULL;
}
