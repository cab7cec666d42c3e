/*
 * `mcpage call TOOL 'JSON'`: runs one archive tool in-process through the
 * same registry and dispatch path as `mcpage serve` (a session fed an
 * initialize and one tools/call) and prints its result. With --server
 * (a command on stdio) or --url (Streamable HTTP) it calls any server's
 * tool instead, in either protocol era, through the checker's client
 * (src/check/check_client.c). --all-pages follows next_cursor to the end.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/server.h>

#include "check/check.h"
#include "cli/cli_archive.h"
#include "cli/commands.h"
#include "tools/text_out.h"

/* Largest reply kept (a tool result is far smaller). */
#define CALL_REPLY_MAX ((size_t)64 << 20)
/* Pages --all-pages follows at most (a cursor that never ends). */
#define CALL_MAX_PAGES 100000
/* --header lines at most. */
#define CALL_MAX_HEADERS 64

static void call_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage call [--store URL | --db FILE] [OUTPUT] TOOL ['JSON ARGUMENTS']\n"
            "       mcpage call [--store URL | --db FILE] --list\n"
            "       mcpage call --server [OPTIONS] [OUTPUT] -- COMMAND [ARGS...] TOOL ['JSON']\n"
            "       mcpage call --url URL [OPTIONS] [OUTPUT] TOOL ['JSON']\n"
            "       mcpage call --server ... --list -- COMMAND [ARGS...]\n\n"
            "Runs one tool of the archive server against the archive, in-process, through\n"
            "the same registry and dispatch as `mcpage serve`, and prints what a client gets:\n"
            "the text block by default (and any resource link), the whole CallToolResult\n"
            "with --json, or one field of structuredContent with --field (e.g. next_cursor;\n"
            "strings print bare). Cursors stay valid across runs (the key is kept beside the\n"
            "archive). Exit status 1 when the result is an error.\n\n"
            "With --server or --url it calls a tool of any MCP server instead: COMMAND\n"
            "started on stdio (the last argument is the JSON when it starts with '{', the\n"
            "one before it the tool), or a Streamable HTTP endpoint. It speaks 2026-07-28\n"
            "when the server lists it in server/discover, else 2025-11-25 (initialize).\n\n"
            "  --store URL   a shared store, postgres://user@host/db (env MCPAGE_STORE)\n"
            "  --db FILE     the archive (env MCPAGE_DB; default as `mcpage sync`)\n"
            "  --list        list the tools with their first sentence\n"
            "  --server      call a server started as COMMAND (after --) on stdio\n"
            "  --url URL     call a Streamable HTTP server, e.g. http://127.0.0.1:8765/mcp\n"
            "  --header 'NAME: VALUE'  an HTTP header on every request (--url)\n"
            "  --era REVISION  speak only 2025-11-25 or 2026-07-28 (default: probe)\n"
            "  --timeout SECONDS  per request (default %d)\n"
            "OUTPUT:\n"
            "  --json        the whole CallToolResult, one line per page\n"
            "  --field NAME  one field of structuredContent, one line per page\n"
            "  --all-pages   call again with cursor=next_cursor (or nextCursor) until a page\n"
            "                has none; every page is printed\n"
            "  --raw         print control characters as they are when stdout is not a\n"
            "                terminal (by default, and always on a terminal, they are shown\n"
            "                visibly: ESC as \\e, BEL as ^G)\n"
            "  --no-check    skip the integrity check of the store (every page read first,\n"
            "                unless its seal says a check passed within a day and nothing\n"
            "                wrote it since; a damaged store exits 1 with the remedy)\n\n"
            "examples: mcpage call list_sessions '{\"limit\": 5}'\n"
            "          mcpage call --all-pages --field sessions list_sessions\n"
            "          mcpage call --server -- ./csv_server rows.csv list_rows '{\"limit\": 2}'\n"
            "          mcpage call --url http://127.0.0.1:8765/mcp --list\n",
            CHECK_DEFAULT_TIMEOUT_MS / 1000);
}

/* The replies the session sent, keyed by request id. */
typedef struct replies {
    pthread_mutex_t mu; /* the session may send from a worker thread */
    json_t *by_id;      /* id text -> reply object */
} replies;

static int capture(void *ud, const char *msg, size_t len, const char *related_id)
{
    (void)related_id;
    replies *r = ud;
    if (len > CALL_REPLY_MAX)
        return 0;
    json_t *v = json_loadb(msg, len, 0, NULL);
    json_t *id = json_object_get(v, "id");
    if (v && json_is_integer(id)) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(id));
        pthread_mutex_lock(&r->mu);
        json_object_set(r->by_id, key, v);
        pthread_mutex_unlock(&r->mu);
    }
    json_decref(v);
    return 0;
}

/* Sends one request and waits for its reply (a new reference, or NULL). */
static json_t *request(mcpage_session *s, replies *r, int id, const char *method, json_t *params)
{
    json_t *req = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method", method,
                            "params", params ? params : json_object());
    char *txt = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (txt == NULL)
        return NULL;
    mcpage_session_receive(s, txt, strlen(txt));
    free(txt);
    mcpage_session_drain(s, -1);
    char key[32];
    snprintf(key, sizeof key, "%d", id);
    pthread_mutex_lock(&r->mu);
    json_t *v = json_incref(json_object_get(r->by_id, key));
    pthread_mutex_unlock(&r->mu);
    return v;
}

/* Whether what is printed gets its control characters shown (off: redirected with --raw). */
static bool call_escape = true;

/* A line of the result on stdout: through the shared terminal escape unless raw. */
static void print_line(const char *s)
{
    if (call_escape)
        text_term_write(stdout, s, strlen(s));
    else
        (void)fputs(s, stdout);
    (void)putchar('\n');
}

/* Where requests go: the archive in-process, or a server through a transport. */
typedef struct call_target {
    mcpage_session *s; /* in-process: the session */
    replies *r;        /* and its replies */
    int next_id;       /* next request id in-process */
    check_client *cl;  /* --server, --url: the client, else NULL */
} call_target;

/* Sends one request to the target; the whole reply (new reference), or NULL after saying why. */
static json_t *send_request(call_target *t, const char *method, json_t *params)
{
    if (t->cl == NULL)
        return request(t->s, t->r, t->next_id++, method, params);
    char why[256];
    json_t *rep = check_client_request(t->cl, method, params, why, sizeof why);
    if (rep == NULL)
        text_term_printf(stderr, "mcpage call: %s: %s\n", method, why);
    return rep;
}

static void print_text(const json_t *result)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(result, "content"), i, b)
    {
        const char *type = json_string_value(json_object_get(b, "type"));
        const char *text = json_string_value(json_object_get(b, "text"));
        if (type && strcmp(type, "text") == 0 && text) {
            print_line(text);
        } else if (type && strcmp(type, "resource_link") == 0) {
            const char *uri = json_string_value(json_object_get(b, "uri"));
            const char *mime = json_string_value(json_object_get(b, "mimeType"));
            (void)fputs("[resource_link] ", stdout);
            text_term_printf(stdout, "%s (%s)\n", uri ? uri : "", mime ? mime : "");
        }
    }
}

static int list_tools(call_target *target)
{
    json_t *cursor = NULL;
    for (int page = 0; page < CALL_MAX_PAGES; page++) {
        json_t *params = json_object();
        if (cursor)
            json_object_set(params, "cursor", cursor);
        json_t *rep = send_request(target, "tools/list", params);
        const json_t *res = json_object_get(rep, "result");
        if (res == NULL) {
            text_term_printf(stderr, "mcpage call: tools/list failed\n");
            json_decref(rep);
            json_decref(cursor);
            return 1;
        }
        size_t i;
        const json_t *t;
        json_array_foreach(json_object_get(res, "tools"), i, t)
        {
            const char *d = json_string_value(json_object_get(t, "description"));
            const char *dot = d ? strstr(d, ". ") : NULL;
            int n = d ? (dot ? (int)(dot - d) + 1 : (int)strlen(d)) : 0;
            /* another server's names and descriptions reach the terminal escaped */
            text_term_printf(stdout, "%-22s %.*s\n",
                             json_string_value(json_object_get(t, "name")) ?: "?", n, d ? d : "");
        }
        const json_t *next = json_object_get(res, "nextCursor");
        bool same = json_is_string(next) && cursor && json_equal(next, cursor);
        json_decref(cursor);
        cursor = json_incref((json_t *)next);
        json_decref(rep);
        if (!json_is_string(cursor) || same)
            break;
    }
    json_decref(cursor);
    return 0;
}

/* What the command line asked for. */
typedef struct call_opts {
    const char *store_arg; /* --store URL, or NULL */
    const char *db_arg;    /* --db FILE, or NULL */
    const char *field;     /* --field NAME: print one field of structuredContent */
    const char *tool;      /* the tool to call (NULL with --list) */
    const char *args_text; /* its arguments as JSON text, or NULL */
    bool json;             /* --json: print the whole CallToolResult */
    bool list;             /* --list: list the tools instead */
    bool raw;              /* --raw: control characters as they are, when redirected */
    bool no_check;         /* --no-check: skip the store's integrity check */
    bool all_pages;        /* --all-pages: follow next_cursor to the end */
    bool server;           /* --server: a command on stdio (command[]) */
    const char *url;       /* --url URL, or NULL */
    const char *era;       /* --era, or NULL to probe */
    int timeout_ms;        /* --timeout; 0 = the default */
    char **command;        /* --server: the command and its arguments, NULL-terminated */
    const char *headers[CALL_MAX_HEADERS]; /* --header lines */
    size_t n_headers;
} call_opts;

/*
 * Splits what follows `--` after --server: COMMAND [ARGS...] TOOL ['JSON']
 * (or the command alone with --list). Returns -1, or 2 after saying why.
 */
static int split_server_command(call_opts *o, int argc, char **argv, int at)
{
    int end = argc; /* the command is argv[at..end) */
    if (!o->list) {
        const char *last = at < argc ? argv[argc - 1] : NULL;
        while (last && (*last == ' ' || *last == '\t' || *last == '\n'))
            last++;
        if (last && *last == '{') {
            o->args_text = argv[argc - 1];
            end--;
        }
        if (end - 1 > at)
            o->tool = argv[--end];
    }
    if (end <= at || (!o->list && o->tool == NULL)) {
        text_term_printf(stderr,
                         "mcpage call: --server wants -- COMMAND [ARGS...] TOOL ['JSON'] (or "
                         "--list -- COMMAND [ARGS...])\n");
        return 2;
    }
    o->command = calloc((size_t)(end - at) + 1, sizeof *o->command);
    if (o->command == NULL)
        return 2;
    for (int k = at; k < end; k++)
        o->command[k - at] = argv[k];
    return -1;
}

/* Reads the command line; -1 to go on, else the exit status (after --help: 0). */
static int parse_opts(int argc, char **argv, call_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            call_usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--list") == 0) {
            o->list = true;
        } else if (strcmp(a, "--raw") == 0) {
            o->raw = true;
        } else if (strcmp(a, "--no-check") == 0) {
            o->no_check = true;
        } else if (strcmp(a, "--all-pages") == 0) {
            o->all_pages = true;
        } else if (strcmp(a, "--server") == 0) {
            o->server = true;
        } else if (strcmp(a, "--") == 0 && o->server) {
            return split_server_command(o, argc, argv, i + 1);
        } else if (i + 1 < argc && strcmp(a, "--url") == 0) {
            o->url = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--header") == 0) {
            if (o->n_headers == CALL_MAX_HEADERS || !strchr(argv[i + 1], ':')) {
                text_term_printf(stderr, "mcpage call: --header wants 'NAME: VALUE' (at most %d)\n",
                                 CALL_MAX_HEADERS);
                return 2;
            }
            o->headers[o->n_headers++] = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--era") == 0) {
            o->era = argv[++i];
            if (strcmp(o->era, "2025-11-25") != 0 && strcmp(o->era, "2026-07-28") != 0) {
                text_term_printf(stderr, "mcpage call: --era is 2025-11-25 or 2026-07-28\n");
                return 2;
            }
        } else if (i + 1 < argc && strcmp(a, "--timeout") == 0) {
            char *end = NULL;
            long v = strtol(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end != '\0' || v < 1 || v > 3600) {
                text_term_printf(stderr, "mcpage call: --timeout wants SECONDS, 1 to 3600\n");
                return 2;
            }
            o->timeout_ms = (int)v * 1000;
            i++;
        } else if (i + 1 < argc && strcmp(a, "--db") == 0) {
            o->db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--store") == 0) {
            o->store_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--field") == 0) {
            o->field = argv[++i];
        } else if (a[0] == '-' && a[1] == '-') {
            text_term_printf(stderr, "mcpage call: unknown or incomplete option '%s'\n", a);
            call_usage(stderr);
            return 2;
        } else if (o->tool == NULL) {
            o->tool = a;
        } else if (o->args_text == NULL) {
            o->args_text = a;
        } else {
            text_term_printf(stderr,
                             "mcpage call: too many arguments; quote the JSON arguments as one\n");
            return 2;
        }
    }
    if (o->server) {
        text_term_printf(stderr,
                         "mcpage call: --server wants -- COMMAND [ARGS...] TOOL ['JSON']\n");
        return 2;
    }
    if (!o->list && o->tool == NULL) {
        call_usage(stderr);
        return 2;
    }
    return -1;
}

/* The arguments as a JSON object (a new reference; an empty one when none); NULL after saying why.
 */
static json_t *parse_arguments(const char *text)
{
    if (text == NULL)
        return json_object();
    json_error_t e;
    json_t *args = json_loads(text, 0, &e);
    if (!json_is_object(args)) {
        text_term_printf(
            stderr,
            "mcpage call: the arguments must be one JSON object, e.g. '{\"limit\": 5}' (%s)\n",
            args ? "not an object" : e.text);
        json_decref(args);
        return NULL;
    }
    return args;
}

/* Initializes the session as a client would: initialize, then notifications/initialized. */
static void session_initialize(mcpage_session *s, replies *r)
{
    json_t *init = request(s, r, 1, "initialize",
                           json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                                     mcpage_protocol_latest(), "capabilities", "clientInfo", "name",
                                     "mcpage-call", "version", mcpage_version()));
    json_decref(init);
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcpage_session_receive(s, note, sizeof note - 1);
}

/* Prints a JSON value on one line, a string bare. */
static void print_value(const json_t *v)
{
    if (json_is_string(v)) {
        print_line(json_string_value(v));
        return;
    }
    char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (txt)
        print_line(txt);
    free(txt);
}

/* The cursor of the next page a result names (next_cursor, or nextCursor), or NULL. */
static const json_t *next_cursor(const json_t *res)
{
    const json_t *sc = json_object_get(res, "structuredContent");
    const json_t *c = json_object_get(sc, "next_cursor");
    if (!json_is_string(c))
        c = json_object_get(sc, "nextCursor");
    return json_is_string(c) && json_string_length(c) > 0 ? c : NULL;
}

/* Prints one result as asked. */
static void print_result(const call_opts *o, const json_t *res)
{
    bool is_error = json_is_true(json_object_get(res, "isError"));
    if (o->json) {
        print_value(res);
    } else if (o->field && !is_error) {
        const json_t *v = json_object_get(json_object_get(res, "structuredContent"), o->field);
        if (v)
            print_value(v);
    } else {
        print_text(res);
    }
}

/* Calls the tool (every page with --all-pages) and prints as asked; the exit status. */
static int call_tool(call_target *target, const call_opts *o, json_t *args)
{
    json_t *cursor = NULL;
    int status = 0;
    for (long page = 0; page < CALL_MAX_PAGES; page++) {
        json_t *a = json_deep_copy(args);
        if (cursor)
            json_object_set(a, "cursor", cursor);
        json_t *rep = send_request(target, "tools/call",
                                   json_pack("{s:s, s:o}", "name", o->tool, "arguments", a));
        const json_t *res = json_object_get(rep, "result");
        if (res == NULL) {
            const char *msg =
                json_string_value(json_object_get(json_object_get(rep, "error"), "message"));
            if (rep)
                text_term_printf(stderr, "mcpage call: %s\n", msg ? msg : "no reply");
            json_decref(rep);
            status = 1;
            break;
        }
        print_result(o, res);
        bool is_error = json_is_true(json_object_get(res, "isError"));
        const json_t *next = o->all_pages && !is_error ? next_cursor(res) : NULL;
        if (next && cursor && json_equal(next, cursor)) {
            text_term_printf(stderr, "mcpage call: page %ld handed back its own cursor; stopped\n",
                             page + 1);
            status = 1;
            next = NULL;
        }
        json_decref(cursor);
        cursor = json_incref((json_t *)next);
        json_decref(rep);
        if (is_error)
            status = 1;
        if (cursor == NULL)
            break;
    }
    json_decref(cursor);
    return status;
}

/* --server or --url: the tool of another server; the exit status. */
static int call_remote(const call_opts *o, json_t *args)
{
    char why[256] = "";
    check_stdio *child = NULL;
    check_http *endpoint = NULL;
    check_transport t;
    int rc;
    if (o->url) {
        rc = check_http_start(o->url, o->headers, o->n_headers, &endpoint, why, sizeof why);
        if (rc == 0)
            check_http_transport(endpoint, &t);
    } else {
        signal(SIGPIPE, SIG_IGN); /* a server that exits is reported, not fatal */
        rc = check_stdio_start(o->command, &child, why, sizeof why);
        if (rc == 0)
            check_stdio_transport(child, &t);
    }
    int status = 1;
    if (rc == 0) {
        check_client cl = {.t = &t, .timeout_ms = o->timeout_ms};
        rc = check_client_open(&cl, o->era, why, sizeof why);
        if (rc == 0) {
            call_target target = {.cl = &cl};
            status = o->list ? list_tools(&target) : call_tool(&target, o, args);
        }
    }
    if (rc != 0)
        text_term_printf(stderr, "mcpage call: %s\n", why[0] ? why : mcpage_strerror(rc));
    check_stdio_stop(child);
    check_http_stop(endpoint);
    return status;
}

int cli_cmd_call(int argc, char **argv)
{
    call_opts o = {0};
    int status = parse_opts(argc, argv, &o);
    if (status >= 0)
        return status;
    call_escape = text_term_escapes(stdout, o.raw);
    json_t *args = parse_arguments(o.args_text);
    if (args == NULL) {
        free(o.command);
        return 2;
    }
    if (o.server || o.url) {
        status = call_remote(&o, args);
        json_decref(args);
        free(o.command);
        return status;
    }
    cli_archive arc;
    if (cli_archive_open(&arc, "mcpage call", o.store_arg, o.db_arg) != 0) {
        json_decref(args);
        return 1;
    }

    /* One server and one session in-process, the same registry as `serve`. */
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.keyring = arc.kr;
    cfg.workers = 1;
    mcpage_server *srv = NULL;
    mcpage_session *s = NULL;
    replies r = {.by_id = json_object()};
    pthread_mutex_init(&r.mu, NULL);
    status = 1;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = cli_archive_register(&arc, srv);
    if (rc == 0)
        rc = mcpage_session_new(srv, capture, &r, &s);
    char why[700] = "";
    if (rc != 0) {
        text_term_printf(stderr, "mcpage call: %s\n", mcpage_strerror(rc));
    } else if (!o.no_check && tools_check(&arc.tools, why, sizeof why) < 0) {
        /* an answer read from a damaged store is not to be trusted: say so, exit 1 */
        text_term_printf(stderr, "mcpage call: %s\n", why);
    } else {
        session_initialize(s, &r);
        call_target target = {.s = s, .r = &r, .next_id = 10};
        status = o.list ? list_tools(&target) : call_tool(&target, &o, args);
    }

    mcpage_session_free(s);
    mcpage_server_free(srv);
    cli_archive_close(&arc);
    json_decref(r.by_id);
    pthread_mutex_destroy(&r.mu);
    json_decref(args);
    return status;
}
