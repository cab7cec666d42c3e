/*
 * mcpage program: what every server's main() repeats, in one call.
 *
 * mcpage_main() reads the command line (--stdio, --http PORT, --host,
 * --key-file, --log-level, --verbose, --help, --version), loads the one
 * signing key (docs/keys.md), creates the server, lets the program
 * register its tools, and serves MCP over stdio or Streamable HTTP until
 * end of input or SIGTERM. Both protocol revisions (2025-11-25 with
 * initialize and sessions, 2026-07-28 with per-request _meta) are spoken
 * on both transports without the program doing anything.
 *
 *     static int setup(mcpage_server *srv, int argc, char **argv, void *ud)
 *     {
 *         mcpage_tool t = {.name = "list_items", .handler = list_items};
 *         return mcpage_server_add_list_tool(srv, &t, &list_spec);
 *     }
 *
 *     int main(int argc, char **argv)
 *     {
 *         mcpage_program prog = {.name = "items", .version = "1.0.0", .setup = setup};
 *         return mcpage_main(&prog, argc, argv);
 *     }
 */
#ifndef MCPAGE_PROGRAM_H
#define MCPAGE_PROGRAM_H

#include <mcpage/mcpage.h>
#include <mcpage/page.h>
#include <mcpage/server.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable mcpage_main() reads the key from (hex) unless told another. */
#define MCPAGE_KEY_ENV "MCPAGE_KEY"
/* The environment variable naming the key file when --key-file is not given. */
#define MCPAGE_KEY_FILE_ENV "MCPAGE_KEY_FILE"
/* The environment variable holding the bearer token HTTP requests must carry, if any. */
#define MCPAGE_HTTP_TOKEN_ENV "MCPAGE_HTTP_TOKEN"

/* A server program, described once (usually in main). Zero what you do not set. */
typedef struct mcpage_program {
    const char *name;         /* serverInfo.name and the prefix of messages (required) */
    const char *version;      /* serverInfo.version (required) */
    const char *title;        /* serverInfo.title, or NULL */
    const char *instructions; /* the initialize instructions, or NULL */
    const char *args_usage;   /* the positional arguments for --help, e.g. "DIR", or NULL */
    int min_args;             /* positional arguments required */
    int max_args;             /* positional arguments accepted (below min_args: = min_args) */
    const char *key_env;      /* the key's environment variable; NULL = MCPAGE_KEY_ENV */
    /*
     * Registers the program's tools (and resources, prompts) on `srv`,
     * given the positional arguments (argv[0] is the first of them, not
     * the program). Returns 0, or a status that ends the program with a
     * message naming it (print your own reason on stderr first).
     */
    int (*setup)(mcpage_server *srv, int argc, char **argv, void *ud);
    void (*cleanup)(void *ud); /* after the server is freed, once setup ran (even if it failed) */
    void *user_data;           /* passed to setup and cleanup; the config's user_data */
    const mcpage_pager_config *pager; /* the paging contract's settings, or NULL for defaults */
    int workers;                      /* worker threads for calls; 0 = the default */
} mcpage_program;

/*
 * Runs the program and returns its exit status: 0 after serving, 1 when
 * the key, the setup or the transport failed (a line on stderr says
 * why), 2 for a bad command line (with the usage). The key comes from
 * the environment variable (hex), else the key file (read, or generated
 * once and stored with mode 0600), else is random for this process (a
 * note on stderr says that cursors and sessions end with it). Nothing
 * but MCP is written to stdout.
 */
MCPAGE_API int mcpage_main(const mcpage_program *prog, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_PROGRAM_H */
