/*
 * `mcpage call TOOL 'JSON'`: runs one archive tool in-process through the
 * same registry and dispatch path as `mcpage serve` (a session fed an
 * initialize and one tools/call) and prints its result.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/server.h>

#include "cli/cli_archive.h"
#include "cli/commands.h"
#include "tools/text_out.h"

/* Largest reply kept (a tool result is far smaller). */
#define CALL_REPLY_MAX ((size_t)64 << 20)

static void call_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage call [--store URL | --db FILE] [--json | --field NAME] TOOL ['JSON "
            "ARGUMENTS']\n"
            "       mcpage call [--store URL | --db FILE] --list\n\n"
            "Runs one tool of the archive server against the archive, in-process, through\n"
            "the same registry and dispatch as `mcpage serve`, and prints what a client gets:\n"
            "the text block by default (and any resource link), the whole CallToolResult\n"
            "with --json, or one field of structuredContent with --field (e.g. next_cursor;\n"
            "strings print bare). Cursors stay valid across runs (the key is kept beside the\n"
            "archive). Exit status 1 when the result is an error.\n\n"
            "  --store URL a shared store, postgres://user@host/db (env MCPAGE_STORE)\n"
            "  --db FILE   the archive (env MCPAGE_DB; default as `mcpage sync`)\n"
            "  --list      list the tools with their first sentence\n"
            "  --raw       print control characters as they are when stdout is not a\n"
            "              terminal (by default, and always on a terminal, they are shown\n"
            "              visibly: ESC as \\e, BEL as ^G)\n"
            "  --no-check  skip the integrity check of the store (every page read first;\n"
            "              a damaged store exits 1 with the remedy)\n\n"
            "example: mcpage call list_sessions '{\"limit\": 5}'\n");
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

static int list_tools(mcpage_session *s, replies *r)
{
    json_t *cursor = NULL;
    for (int id = 10;; id++) {
        json_t *params = json_object();
        if (cursor)
            json_object_set(params, "cursor", cursor);
        json_t *rep = request(s, r, id, "tools/list", params);
        const json_t *res = json_object_get(rep, "result");
        if (res == NULL) {
            fprintf(stderr, "mcpage call: tools/list failed\n");
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
            printf("%-22s %.*s\n", json_string_value(json_object_get(t, "name")), n, d ? d : "");
        }
        json_decref(cursor);
        cursor = json_incref(json_object_get(res, "nextCursor"));
        json_decref(rep);
        if (!json_is_string(cursor))
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
} call_opts;

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
        } else if (i + 1 < argc && strcmp(a, "--db") == 0) {
            o->db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--store") == 0) {
            o->store_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--field") == 0) {
            o->field = argv[++i];
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "mcpage call: unknown or incomplete option '%s'\n", a);
            call_usage(stderr);
            return 2;
        } else if (o->tool == NULL) {
            o->tool = a;
        } else if (o->args_text == NULL) {
            o->args_text = a;
        } else {
            fprintf(stderr, "mcpage call: too many arguments; quote the JSON arguments as one\n");
            return 2;
        }
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
        fprintf(stderr,
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

/* Calls the tool and prints its result as asked; the exit status. */
static int call_tool(mcpage_session *s, replies *r, const call_opts *o, json_t *args)
{
    json_t *rep =
        request(s, r, 2, "tools/call", json_pack("{s:s, s:O}", "name", o->tool, "arguments", args));
    const json_t *res = json_object_get(rep, "result");
    if (res == NULL) {
        const char *msg =
            json_string_value(json_object_get(json_object_get(rep, "error"), "message"));
        text_term_printf(stderr, "mcpage call: %s\n", msg ? msg : "no reply");
        json_decref(rep);
        return 1;
    }

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
    json_decref(rep);
    return is_error ? 1 : 0;
}

int cli_cmd_call(int argc, char **argv)
{
    call_opts o = {0};
    int status = parse_opts(argc, argv, &o);
    if (status >= 0)
        return status;
    call_escape = text_term_escapes(stdout, o.raw);
    json_t *args = parse_arguments(o.args_text);
    if (args == NULL)
        return 2;
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
        fprintf(stderr, "mcpage call: %s\n", mcpage_strerror(rc));
    } else if (!o.no_check && tools_check(&arc.tools, why, sizeof why) < 0) {
        /* an answer read from a damaged store is not to be trusted: say so, exit 1 */
        text_term_printf(stderr, "mcpage call: %s\n", why);
    } else {
        session_initialize(s, &r);
        status = o.list ? list_tools(s, &r) : call_tool(s, &r, &o, args);
    }

    mcpage_session_free(s);
    mcpage_server_free(srv);
    cli_archive_close(&arc);
    json_decref(r.by_id);
    pthread_mutex_destroy(&r.mu);
    json_decref(args);
    return status;
}
