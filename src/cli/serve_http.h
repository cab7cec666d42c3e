/*
 * The HTTP options of `mcpage serve` (--http and its companions), kept
 * out of cmd_serve.c so that file stays small: parse, usage, serve.
 */
#ifndef MCPAGE_CLI_SERVE_HTTP_H
#define MCPAGE_CLI_SERVE_HTTP_H

#include <stdbool.h>
#include <stdio.h>

#include <mcpage/http.h>

/* Most --allow-origin options. */
#define CLI_MAX_ORIGINS MCPAGE_HTTP_MAX_ORIGINS
/* Most --oauth-tool-scope options. */
#define CLI_MAX_TOOL_SCOPES 64

typedef struct cli_http_opts {
    bool enabled;                             /* --http was given */
    char host[64];                            /* bind address */
    long port;                                /* bind port (0 = any) */
    const char *origins[CLI_MAX_ORIGINS + 1]; /* --allow-origin values, NULL-terminated */
    int norigins;                             /* their count */
    const char *token_file;                   /* --auth-token-file, or NULL */
    long max_sessions;                        /* --max-sessions, 0 = default */
    long session_idle;                        /* --session-idle seconds, 0 = default */
    long session_max_age;                     /* --session-max-age seconds, -1 = default */
    long max_connections;                     /* --max-connections, 0 = default */
    long heartbeat;                           /* --heartbeat seconds, 0 = default */
    int ui;                                   /* --ui 1, --no-ui 0, -1 = on when loopback */
    const char *oauth_issuer;                 /* --oauth-issuer URL, or NULL */
    const char *oauth_jwks;                   /* --oauth-jwks FILE_OR_URL, or NULL */
    const char *oauth_resource;               /* --oauth-resource URL, or NULL */
    const char *oauth_scope;                  /* --oauth-scope SCOPES, or NULL = mcpage:read */
    const char *oauth_tools[CLI_MAX_TOOL_SCOPES + 1]; /* --oauth-tool-scope, NULL-terminated */
    int noauth_tools;                                 /* their count */
} cli_http_opts;

/*
 * Tries argv[*i] as an HTTP option. Returns 1 when it was one (and
 * advances *i past its value), 0 when it is not an HTTP option, -1 after
 * printing an error for a bad value.
 */
int cli_http_parse(cli_http_opts *o, int argc, char **argv, int *i);
/* Prints the HTTP part of `mcpage serve --help`. */
void cli_http_usage(FILE *out);
/*
 * Serves over HTTP until SIGTERM/SIGINT, with `health` (and `health_ud`)
 * behind GET /health and `ended` (may be NULL) as the record of sessions
 * ended with DELETE that instances share; 0 or an MCPAGE_E* status
 * (already reported).
 */
int cli_http_serve(mcpage_server *srv, const cli_http_opts *o,
                   int (*health)(void *ud, char *why, size_t cap), void *health_ud,
                   const mcpage_http_ended *ended);

#endif
