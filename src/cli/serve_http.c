/*
 * `mcpage serve --http HOST:PORT` and its options: parsing, help text, and
 * the call into the HTTP transport (include/mcpage/http.h).
 */
#include "cli/serve_http.h"

#include "tools/text_out.h"
#include "ui/ui.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Largest accepted token file. */
#define TOKEN_FILE_MAX 4096
/* Shortest accepted token (the transport refuses shorter ones too). */
#define TOKEN_MIN 16

void cli_http_usage(FILE *out)
{
    (void)fprintf(
        out,
        "\nHTTP (Streamable HTTP, MCP 2025-11-25; endpoint /mcp):\n"
        "  --http HOST:PORT        serve over HTTP instead of stdio; HOST defaults to\n"
        "                          127.0.0.1 (\"[::1]:PORT\" for IPv6), PORT 0 picks a free\n"
        "                          port; the URL is printed on stderr\n"
        "  --allow-origin ORIGIN   also admit browser requests from ORIGIN (repeatable;\n"
        "                          \"*\" admits any). Without it, requests carrying an Origin\n"
        "                          get 403 unless bound to loopback and the Origin is local\n"
        "  --auth-token-file FILE  require 'Authorization: Bearer <first line of FILE>'\n"
        "                          (401 otherwise; at least 16 characters: make one with\n"
        "                          'openssl rand -hex 32 > FILE'). A client's failed tokens\n"
        "                          are throttled: after 10, one per 6 s (429 with\n"
        "                          Retry-After)\n"
        "  --oauth-issuer URL      be an OAuth 2.1 resource server (MCP authorization):\n"
        "                          accept access tokens (JWT: RS256, ES256, EdDSA) issued\n"
        "                          by URL (https; http only on loopback) for this server;\n"
        "                          serves /.well-known/oauth-protected-resource, answers\n"
        "                          401 with WWW-Authenticate: Bearer resource_metadata=...\n"
        "                          and 403 insufficient_scope. --auth-token-file still\n"
        "                          opens everything (one user)\n"
        "  --oauth-jwks FILE_OR_URL  the issuer's keys (a JWKS file, re-read when it\n"
        "                          changes, or an URL); default: the jwks_uri of the\n"
        "                          issuer's metadata, cached per its Cache-Control\n"
        "  --oauth-resource URL    this server's resource identifier, the audience its\n"
        "                          tokens must name (default: http://HOST:PORT/mcp as\n"
        "                          bound; required when bound to 0.0.0.0 or ::, or\n"
        "                          behind a proxy)\n"
        "  --oauth-scope SCOPES    scopes every request needs (default mcpage:read;\n"
        "                          \"\" for none)\n"
        "  --oauth-tool-scope TOOL=SCOPES  scopes a call of TOOL also needs, e.g.\n"
        "                          read_raw=mcpage:raw (repeatable; TOOL * = the others)\n"
        "  --max-sessions N        live sessions before initialize gets 503 (default 1024)\n"
        "  --session-idle SECONDS  a session unused this long leaves memory (default 1800);\n"
        "                          its signed id still resumes it, here or on any instance\n"
        "                          holding the same cursor key\n"
        "  --session-max-age SECONDS  refuse session ids older than this; 0 = never\n"
        "                          (default 86400)\n"
        "  --max-connections N     open TCP connections (default 2048)\n"
        "  --heartbeat SECONDS     SSE keep-alive comment period (default 15)\n"
        "  --no-ui                 no browser view (docs/ui.md): by default a bound loopback\n"
        "                          address also serves read-only pages at / (projects,\n"
        "                          sessions, search, transcripts, the activity map)\n"
        "  --ui                    serve the browser view on a non-loopback address too\n"
        "                          (use --auth-token-file; a browser logs in once with\n"
        "                          /?token=TOKEN and keeps an HttpOnly cookie)\n"
        "GET /health answers 200 while the store answers, else 503 with the reason.\n"
        "Bound to loopback, requests whose Host is not localhost, 127.0.0.1, [::1] or the\n"
        "bound address get 403 (DNS rebinding protection).\n");
}

static bool num(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || errno || n < lo || n > hi) {
        text_term_printf(stderr, "mcpage serve: %s needs a number from %ld to %ld\n", opt, lo, hi);
        return false;
    }
    *out = n;
    return true;
}

/* Parses HOST:PORT, [V6]:PORT, :PORT or PORT. */
static bool parse_addr(cli_http_opts *o, const char *v)
{
    const char *colon = NULL;
    const char *host = v;
    size_t hlen = 0;
    if (v[0] == '[') {
        const char *rb = strchr(v, ']');
        if (rb == NULL || rb[1] != ':')
            goto bad;
        host = v + 1;
        hlen = (size_t)(rb - host);
        colon = rb + 1;
    } else if ((colon = strrchr(v, ':')) != NULL) {
        hlen = (size_t)(colon - v);
    }
    const char *port = colon ? colon + 1 : v;
    if (hlen >= sizeof o->host)
        goto bad;
    if (colon && hlen > 0) {
        memcpy(o->host, host, hlen);
        o->host[hlen] = '\0';
    } else {
        strcpy(o->host, "127.0.0.1");
    }
    if (!num("--http PORT", port, 0, 65535, &o->port))
        return false;
    o->enabled = true;
    return true;
bad:
    text_term_printf(stderr,
                     "mcpage serve: --http takes HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:0\n");
    return false;
}

/* One --oauth-* option with its value; false after saying what is wrong. */
static bool oauth_opt(cli_http_opts *o, const char *a, const char *v)
{
    if (strcmp(a, "--oauth-issuer") == 0)
        o->oauth_issuer = v;
    else if (strcmp(a, "--oauth-jwks") == 0)
        o->oauth_jwks = v;
    else if (strcmp(a, "--oauth-resource") == 0)
        o->oauth_resource = v;
    else if (strcmp(a, "--oauth-scope") == 0)
        o->oauth_scope = v;
    else if (strcmp(a, "--oauth-tool-scope") == 0 && o->noauth_tools < CLI_MAX_TOOL_SCOPES)
        o->oauth_tools[o->noauth_tools++] = v;
    else if (strcmp(a, "--oauth-tool-scope") == 0) {
        (void)fprintf(stderr, "mcpage serve: at most %d --oauth-tool-scope\n", CLI_MAX_TOOL_SCOPES);
        return false;
    } else {
        (void)fprintf(stderr,
                      "mcpage serve: unknown option %s (the OAuth options are --oauth-issuer, "
                      "--oauth-jwks, --oauth-resource, --oauth-scope, --oauth-tool-scope)\n",
                      a);
        return false;
    }
    return true;
}

int cli_http_parse(cli_http_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    bool ok;
    if (strcmp(a, "--http") == 0) {
        ok = v && parse_addr(o, v);
        if (v == NULL)
            text_term_printf(stderr, "mcpage serve: --http needs HOST:PORT\n");
    } else if (strcmp(a, "--allow-origin") == 0) {
        ok = v != NULL && o->norigins < CLI_MAX_ORIGINS;
        if (ok)
            o->origins[o->norigins++] = v;
        else
            text_term_printf(stderr, "mcpage serve: --allow-origin needs an origin such as "
                                     "https://app.example.com (at most 64)\n");
    } else if (strcmp(a, "--auth-token-file") == 0) {
        ok = v != NULL;
        o->token_file = v;
        if (!ok)
            text_term_printf(stderr, "mcpage serve: --auth-token-file needs a file name\n");
    } else if (strncmp(a, "--oauth-", 8) == 0) {
        ok = v != NULL && oauth_opt(o, a, v);
        if (v == NULL)
            (void)fprintf(stderr, "mcpage serve: %s needs a value (mcpage serve --help)\n", a);
        else if (!ok)
            return -1;
    } else if (strcmp(a, "--max-sessions") == 0) {
        ok = num(a, v, 1, 1000000, &o->max_sessions);
    } else if (strcmp(a, "--session-idle") == 0) {
        ok = num(a, v, 1, 86400L * 30, &o->session_idle);
    } else if (strcmp(a, "--session-max-age") == 0) {
        ok = num(a, v, 0, 86400L * 365, &o->session_max_age);
    } else if (strcmp(a, "--max-connections") == 0) {
        ok = num(a, v, 1, 1000000, &o->max_connections);
    } else if (strcmp(a, "--heartbeat") == 0) {
        ok = num(a, v, 1, 3600, &o->heartbeat);
    } else if (strcmp(a, "--no-ui") == 0 || strcmp(a, "--ui") == 0) {
        o->ui = strcmp(a, "--ui") == 0;
        return 1; /* takes no value */
    } else {
        return 0;
    }
    if (!ok)
        return -1;
    (*i)++;
    return 1;
}

/* Reads the token: the file's first line, surrounding blanks removed. */
static char *read_token(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        text_term_printf(stderr, "mcpage serve: --auth-token-file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = calloc(1, TOKEN_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, TOKEN_FILE_MAX + 1, f) : 0;
    (void)fclose(f);
    if (buf == NULL)
        return NULL;
    if (n > TOKEN_FILE_MAX) {
        text_term_printf(stderr, "mcpage serve: --auth-token-file %s: longer than %d bytes\n", path,
                         TOKEN_FILE_MAX);
        free(buf);
        return NULL;
    }
    buf[strcspn(buf, "\r\n")] = '\0';
    size_t len = strlen(buf);
    while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        buf[--len] = '\0';
    size_t start = strspn(buf, " \t");
    memmove(buf, buf + start, len - start + 1);
    size_t n_chars = strlen(buf);
    if (n_chars < TOKEN_MIN) {
        text_term_printf(stderr,
                         "mcpage serve: --auth-token-file %s: the token is %zu characters; a "
                         "token needs at least %d (guessable otherwise). Make one with:\n"
                         "  openssl rand -hex 32 > %s && chmod 600 %s\n",
                         path, n_chars, TOKEN_MIN, path, path);
        memset(buf, 0, TOKEN_FILE_MAX + 1);
        free(buf);
        return NULL;
    }
    return buf;
}

int cli_http_serve(mcpage_server *srv, const cli_http_opts *o,
                   int (*health)(void *ud, char *why, size_t cap), void *health_ud,
                   const mcpage_http_ended *ended)
{
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    hc.health = health;
    hc.health_ud = health_ud;
    if (ended)
        hc.ended = *ended;
    hc.host = o->host;
    hc.port = (uint16_t)o->port;
    hc.allow_origins = o->norigins ? o->origins : NULL;
    if (o->max_sessions)
        hc.max_sessions = (unsigned)o->max_sessions;
    if (o->session_idle)
        hc.session_idle_s = (unsigned)o->session_idle;
    if (o->session_max_age >= 0)
        hc.session_max_age_s = (unsigned)o->session_max_age;
    if (o->max_connections)
        hc.max_connections = (unsigned)o->max_connections;
    if (o->heartbeat)
        hc.heartbeat_ms = (unsigned)o->heartbeat * 1000;
    /* The browser view: on a loopback address unless --no-ui, elsewhere only with --ui. */
    ui_ctx ui = {.srv = srv};
    bool loopback = strncmp(o->host, "127.", 4) == 0 || strcmp(o->host, "::1") == 0 ||
                    strcmp(o->host, "localhost") == 0;
    if (o->ui == 1 || (o->ui < 0 && loopback)) {
        hc.page = ui_page;
        hc.page_ud = &ui;
    }
    char *token = NULL;
    if (o->token_file) {
        token = read_token(o->token_file);
        if (token == NULL)
            return MCPAGE_EINVAL;
        hc.auth_token = token;
    }
    mcpage_http_oauth oauth;
    if (o->oauth_issuer) {
        mcpage_http_oauth_init(&oauth);
        oauth.issuer = o->oauth_issuer;
        oauth.jwks = o->oauth_jwks;
        oauth.resource = o->oauth_resource;
        oauth.scope = o->oauth_scope ? o->oauth_scope : "mcpage:read";
        oauth.tool_scopes = o->noauth_tools ? o->oauth_tools : NULL;
        hc.oauth = &oauth;
    } else if (o->oauth_jwks || o->oauth_resource || o->oauth_scope || o->noauth_tools) {
        (void)fprintf(stderr, "mcpage serve: the --oauth-* options need --oauth-issuer URL\n");
        if (token)
            memset(token, 0, strlen(token));
        free(token);
        return MCPAGE_EINVAL;
    }
    int rc = mcpage_serve_http(srv, &hc);
    if (rc == MCPAGE_EINVAL && o->oauth_issuer)
        text_term_printf(stderr, "mcpage serve: the OAuth settings were refused (see above)\n");
    else if (rc == MCPAGE_EINVAL)
        text_term_printf(stderr,
                         "mcpage serve: --http %s: give a numeric address (127.0.0.1, ::1, "
                         "0.0.0.0) or localhost\n",
                         o->host);
    else if (rc == MCPAGE_EIO)
        text_term_printf(stderr,
                         "mcpage serve: cannot listen on %s:%ld (in use, or not an address of "
                         "this machine)\n",
                         o->host, o->port);
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    return rc;
}
