/*
 * `mcpage serve`: runs the MCP server on stdin/stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/server.h>

#include "cli/commands.h"
#include "cli/serve_http.h"

static void usage(FILE *out)
{
    (void)fprintf(
        out,
        "usage: mcpage serve [OPTIONS]\n\n"
        "Serves MCP over stdio: newline-delimited JSON-RPC on stdin and stdout,\n"
        "diagnostics on stderr. Ends on end of input (after finishing running\n"
        "calls) or on SIGTERM/SIGINT (within about a second).\n\n"
        "options:\n"
        "  --page-size N     items per page of tools/resources/prompts lists (default %d)\n"
        "  --workers N       threads running tool calls (default %d)\n"
        "  --max-inflight N  calls queued or running before 'server busy' (default %d)\n"
        "  -h, --help        this text\n\n"
        "environment:\n"
        "  MCPAGE_CURSOR_KEY hex key (32-128 digits) signing list cursors; without it a\n"
        "                    random key is used and cursors die with the process\n",
        MCPAGE_DEFAULT_PAGE_SIZE, MCPAGE_DEFAULT_WORKERS, MCPAGE_DEFAULT_MAX_INFLIGHT);
    cli_http_usage(out);
}

/* Parses a positive integer option value; false with a message when invalid. */
static bool parse_count(const char *opt, const char *v, long max, long *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *end != '\0' || n < 1 || n > max) {
        (void)fprintf(stderr, "mcpage serve: %s needs a number from 1 to %ld\n", opt, max);
        return false;
    }
    *out = n;
    return true;
}

/*
 * The archive's tools are registered here. The archive engineers add one
 * call, e.g. `rc = tools_register_all(srv, store);`, from the header
 * src/tools provides; nothing else in this file needs to change.
 */
static int register_archive(mcpage_server *srv)
{
    (void)srv;
    return 0;
}

int cli_cmd_serve(int argc, char **argv)
{
    long page = MCPAGE_DEFAULT_PAGE_SIZE, workers = MCPAGE_DEFAULT_WORKERS,
         inflight = MCPAGE_DEFAULT_MAX_INFLIGHT;
    cli_http_opts http = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int hr = cli_http_parse(&http, argc, argv, &i);
        if (hr < 0)
            return 2;
        if (hr > 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--page-size") == 0) {
            if (!parse_count(a, v, 10000, &page))
                return 2;
            i++;
        } else if (strcmp(a, "--workers") == 0) {
            if (!parse_count(a, v, 256, &workers))
                return 2;
            i++;
        } else if (strcmp(a, "--max-inflight") == 0) {
            if (!parse_count(a, v, 100000, &inflight))
                return 2;
            i++;
        } else {
            (void)fprintf(stderr, "mcpage serve: unknown option '%s'; see 'mcpage serve --help'\n",
                          a);
            return 2;
        }
    }
    mcpage_keyring *kr = NULL;
    int rc = mcpage_keyring_new(&kr);
    if (rc == 0)
        rc = mcpage_keyring_load(kr, "MCPAGE_CURSOR_KEY", NULL);
    if (rc != 0) {
        (void)fprintf(stderr, "mcpage serve: cursor key: %s\n", mcpage_strerror(rc));
        mcpage_keyring_free(kr);
        return 1;
    }
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.title = "mcpage archive";
    cfg.page_size = (size_t)page;
    cfg.workers = (int)workers;
    cfg.max_inflight = (size_t)inflight;
    cfg.keyring = kr;
    mcpage_server *srv = NULL;
    rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = register_archive(srv);
    if (rc != 0) {
        (void)fprintf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        mcpage_server_free(srv);
        mcpage_keyring_free(kr);
        return 1;
    }
    rc = http.enabled ? cli_http_serve(srv, &http) : mcpage_serve_stdio(srv, 0, 1);
    if (rc == MCPAGE_ESTATE) {
        /* Calls ignored cancellation: leave them to process exit. */
        (void)fprintf(stderr, "mcpage serve: exiting with calls still running\n");
        return 0;
    }
    mcpage_server_free(srv);
    mcpage_keyring_free(kr);
    if (rc != 0) {
        (void)fprintf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        return 1;
    }
    return 0;
}
