/*
 * Archive setup shared by `mcpage serve` and `mcpage call`.
 */
#include "cli/cli_archive.h"

#include <stdio.h>
#include <string.h>

int cli_archive_open(cli_archive *a, const char *who, const char *db_arg)
{
    memset(a, 0, sizeof *a);
    int rc =
        db_arg
            ? (snprintf(a->db, sizeof a->db, "%s", db_arg) < (int)sizeof a->db ? 0 : MCPAGE_ERANGE)
            : sync_default_db(a->db, sizeof a->db);
    if (rc < 0) {
        fprintf(stderr, "%s: the archive path is too long\n", who);
        return rc;
    }
    char key[SYNC_PATH_MAX + 32];
    const char *slash = strrchr(a->db, '/');
    if (slash)
        snprintf(key, sizeof key, "%.*s/%s", (int)(slash - a->db), a->db, CLI_KEY_FILE);
    else
        snprintf(key, sizeof key, "%s", CLI_KEY_FILE);
    rc = mcpage_keyring_new(&a->kr);
    if (rc == 0)
        rc = mcpage_keyring_load(a->kr, "MCPAGE_CURSOR_KEY", key);
    if (rc != 0) {
        fprintf(stderr, "%s: cursor key (%s or env MCPAGE_CURSOR_KEY): %s\n", who, key,
                mcpage_strerror(rc));
        cli_archive_close(a);
        return rc;
    }
    rc = mcpage_pager_new(NULL, a->kr, &a->pager);
    if (rc == 0)
        rc = tools_ctx_init(&a->tools, a->db, a->pager);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", who, mcpage_strerror(rc));
        cli_archive_close(a);
        return rc;
    }
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
