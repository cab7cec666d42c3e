/*
 * mcpage_main: the command line, the key, the server and the transport
 * that every server program would otherwise write again. It only wires
 * the public API together (server.h, http.h, cursor.h): a program that
 * needs more control writes the same twenty lines itself.
 */
#include <mcpage/program.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/http.h>

#include "page/alloc.h"

/* What the command line asked for. */
typedef struct program_opts {
    bool http;                  /* --http PORT given */
    uint16_t port;              /* its port (0 = any free one) */
    const char *host;           /* --host, or NULL for the transport's default */
    const char *key_file;       /* --key-file, else $MCPAGE_KEY_FILE, or NULL */
    mcpage_log_level log_level; /* --log-level */
    bool verbose;               /* --verbose */
    int nargs;                  /* positional arguments */
    char **args;                /* them (a vector the caller frees), NULL-terminated */
} program_opts;

static const char *const level_names[] = {"debug", "info",     "notice", "warning",
                                          "error", "critical", "alert",  "emergency"};

static void usage(const mcpage_program *prog, FILE *to)
{
    (void)fprintf(to,
                  "usage: %s [options]%s%s\n"
                  "  --stdio            MCP over stdin and stdout (the default)\n"
                  "  --http PORT        MCP over Streamable HTTP at http://HOST:PORT/mcp "
                  "(0: any free port)\n"
                  "  --host ADDR        numeric address to bind with --http (default 127.0.0.1)\n"
                  "  --key-file PATH    the signing key: read, or generated once and stored "
                  "(or $%s)\n"
                  "  --log-level LEVEL  debug, info, notice, warning, error (default info)\n"
                  "  --verbose          one line on stderr per HTTP session\n"
                  "  --help, --version\n"
                  "The key in $%s (hex) wins over the file; without either, cursors and "
                  "sessions\nlast as long as this process. $%s: a bearer token HTTP "
                  "requests must carry.\n",
                  prog->name, prog->args_usage ? " " : "", prog->args_usage ? prog->args_usage : "",
                  MCPAGE_KEY_FILE_ENV, prog->key_env ? prog->key_env : MCPAGE_KEY_ENV,
                  MCPAGE_HTTP_TOKEN_ENV);
}

/* Parses a port number; false when it is not one. */
static bool parse_port(const char *text, uint16_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 65535)
        return false;
    *out = (uint16_t)v;
    return true;
}

static bool parse_level(const char *text, mcpage_log_level *out)
{
    for (int i = 0; i < (int)(sizeof level_names / sizeof *level_names); i++)
        if (strcmp(text, level_names[i]) == 0) {
            *out = (mcpage_log_level)i;
            return true;
        }
    return false;
}

/*
 * Reads argv into `o`. Returns 0 to serve, 1 when --help or --version
 * was answered, 2 for a bad command line (the reason is on stderr).
 */
static int parse_args(const mcpage_program *prog, int argc, char **argv, program_opts *o)
{
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--http") == 0 || strcmp(a, "--host") == 0 ||
                     strcmp(a, "--key-file") == 0 || strcmp(a, "--log-level") == 0;
        if (!options || a[0] != '-' || strcmp(a, "-") == 0) {
            o->args[o->nargs++] = argv[i];
            continue;
        }
        if (takes && value == NULL) {
            (void)fprintf(stderr, "%s: %s needs a value\n", prog->name, a);
            return 2;
        }
        if (strcmp(a, "--") == 0) {
            options = false;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(prog, stdout);
            return 1;
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s (mcpage %s)\n", prog->name, prog->version, mcpage_version());
            return 1;
        } else if (strcmp(a, "--stdio") == 0) {
            o->http = false;
        } else if (strcmp(a, "--verbose") == 0) {
            o->verbose = true;
        } else if (strcmp(a, "--http") == 0 && parse_port(value, &o->port)) {
            o->http = true;
        } else if (strcmp(a, "--host") == 0) {
            o->host = value;
        } else if (strcmp(a, "--key-file") == 0) {
            o->key_file = value;
        } else if (strcmp(a, "--log-level") == 0 && parse_level(value, &o->log_level)) {
            ;
        } else {
            (void)fprintf(stderr, "%s: %s%s%s: not an option or not a valid value\n", prog->name, a,
                          takes ? " " : "", takes ? value : "");
            return 2;
        }
        i += takes;
    }
    int max = prog->max_args > prog->min_args ? prog->max_args : prog->min_args;
    if (o->nargs < prog->min_args) {
        (void)fprintf(stderr, "%s: missing %s\n", prog->name, prog->args_usage);
        return 2;
    }
    if (o->nargs > max) {
        (void)fprintf(stderr, "%s: unexpected argument '%s'\n", prog->name, o->args[max]);
        return 2;
    }
    return 0;
}

/* Loads the one key of the server into a new keyring (*out). */
static int load_key(const mcpage_program *prog, const program_opts *o, mcpage_keyring **out)
{
    const char *env = prog->key_env ? prog->key_env : MCPAGE_KEY_ENV;
    int rc = mcpage_keyring_new(out);
    if (rc == 0)
        rc = mcpage_keyring_load(*out, env, o->key_file);
    if (rc != 0)
        (void)fprintf(stderr, "%s: cannot load the key (%s%s%s): %s\n", prog->name, env,
                      o->key_file ? " or " : "", o->key_file ? o->key_file : "",
                      mcpage_strerror(rc));
    else if (o->http && o->key_file == NULL && getenv(env) == NULL)
        (void)fprintf(stderr,
                      "%s: note: no $%s and no --key-file: a random key, so cursors and "
                      "sessions end with this process\n",
                      prog->name, env);
    return rc;
}

/* Serves `srv` on the transport the options chose, until it stops. */
static int serve(mcpage_server *srv, const program_opts *o)
{
    if (!o->http)
        return mcpage_serve_stdio(srv, 0, 1);
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    if (o->host)
        hc.host = o->host;
    hc.port = o->port;
    hc.verbose = o->verbose;
    hc.auth_token = getenv(MCPAGE_HTTP_TOKEN_ENV);
    return mcpage_serve_http(srv, &hc);
}

int mcpage_main(const mcpage_program *prog, int argc, char **argv)
{
    if (prog == NULL || prog->name == NULL || prog->version == NULL || prog->setup == NULL ||
        argc < 1 || argv == NULL)
        return 2;
    program_opts o = {.log_level = MCPAGE_LOG_INFO, .key_file = getenv(MCPAGE_KEY_FILE_ENV)};
    o.args = mcpage__calloc((size_t)argc + 1, sizeof *o.args);
    if (o.args == NULL)
        return 1;
    int rc = parse_args(prog, argc, argv, &o);
    if (rc != 0) {
        if (rc == 2)
            usage(prog, stderr);
        mcpage__free(o.args);
        return rc == 1 ? 0 : 2;
    }
    mcpage_keyring *kr = NULL;
    mcpage_server *srv = NULL;
    const char *step = "key";
    rc = load_key(prog, &o, &kr);
    if (rc == 0) {
        mcpage_server_config cfg;
        mcpage_server_config_init(&cfg, prog->name, prog->version);
        cfg.title = prog->title;
        cfg.instructions = prog->instructions;
        cfg.keyring = kr;
        cfg.pager = prog->pager;
        cfg.log_level = o.log_level;
        cfg.user_data = prog->user_data;
        if (prog->workers > 0)
            cfg.workers = prog->workers;
        step = "server";
        rc = mcpage_server_new(&cfg, &srv);
    }
    bool set_up = rc == 0;
    if (set_up) {
        step = "setup";
        rc = prog->setup(srv, o.nargs, o.args, prog->user_data);
    }
    if (rc == 0) {
        step = o.http ? "http" : "stdio";
        rc = serve(srv, &o);
    }
    if (rc != 0 && rc != MCPAGE_ESTATE && strcmp(step, "key") != 0)
        (void)fprintf(stderr, "%s: %s: %s\n", prog->name, step, mcpage_strerror(rc));
    if (rc == MCPAGE_ESTATE) /* calls still running: leave their memory to exit() */
        return 1;
    mcpage_server_free(srv);
    mcpage_keyring_free(kr);
    if (set_up && prog->cleanup)
        prog->cleanup(prog->user_data);
    mcpage__free(o.args);
    return rc == 0 ? 0 : 1;
}
