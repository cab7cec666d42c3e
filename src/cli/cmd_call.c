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

/* Largest reply kept (a tool result is far smaller). */
#define CALL_REPLY_MAX ((size_t)64 << 20)

static void call_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage call [--db FILE] [--json | --field NAME] TOOL ['JSON ARGUMENTS']\n"
            "       mcpage call [--db FILE] --list\n\n"
            "Runs one tool of the archive server against the archive, in-process, through\n"
            "the same registry and dispatch as `mcpage serve`, and prints what a client gets:\n"
            "the text block by default (and any resource link), the whole CallToolResult\n"
            "with --json, or one field of structuredContent with --field (e.g. next_cursor;\n"
            "strings print bare). Cursors stay valid across runs (the key is kept beside the\n"
            "archive). Exit status 1 when the result is an error.\n\n"
            "  --db FILE   the archive (env MCPAGE_DB; default as `mcpage sync`)\n"
            "  --list      list the tools with their first sentence\n\n"
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

static void print_text(const json_t *result)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(result, "content"), i, b)
    {
        const char *type = json_string_value(json_object_get(b, "type"));
        if (type && strcmp(type, "text") == 0)
            printf("%s\n", json_string_value(json_object_get(b, "text")));
        else if (type && strcmp(type, "resource_link") == 0)
            printf("[resource_link] %s (%s)\n", json_string_value(json_object_get(b, "uri")),
                   json_string_value(json_object_get(b, "mimeType")));
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

int cli_cmd_call(int argc, char **argv)
{
    const char *db_arg = NULL, *field = NULL, *tool = NULL, *args_text = NULL;
    bool json = false, list = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            call_usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--list") == 0) {
            list = true;
        } else if (i + 1 < argc && strcmp(a, "--db") == 0) {
            db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--field") == 0) {
            field = argv[++i];
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "mcpage call: unknown or incomplete option '%s'\n", a);
            call_usage(stderr);
            return 2;
        } else if (tool == NULL) {
            tool = a;
        } else if (args_text == NULL) {
            args_text = a;
        } else {
            fprintf(stderr, "mcpage call: too many arguments; quote the JSON arguments as one\n");
            return 2;
        }
    }
    if (!list && tool == NULL) {
        call_usage(stderr);
        return 2;
    }
    json_t *args = NULL;
    if (args_text) {
        json_error_t e;
        args = json_loads(args_text, 0, &e);
        if (!json_is_object(args)) {
            fprintf(stderr,
                    "mcpage call: the arguments must be one JSON object, e.g. '{\"limit\": 5}' "
                    "(%s)\n",
                    args ? "not an object" : e.text);
            json_decref(args);
            return 2;
        }
    }
    cli_archive arc;
    if (cli_archive_open(&arc, "mcpage call", db_arg) != 0) {
        json_decref(args);
        return 1;
    }
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.keyring = arc.kr;
    cfg.workers = 1;
    mcpage_server *srv = NULL;
    mcpage_session *s = NULL;
    replies r = {.by_id = json_object()};
    pthread_mutex_init(&r.mu, NULL);
    int status = 1;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = cli_archive_register(&arc, srv);
    if (rc == 0)
        rc = mcpage_session_new(srv, capture, &r, &s);
    if (rc != 0) {
        fprintf(stderr, "mcpage call: %s\n", mcpage_strerror(rc));
        goto done;
    }
    json_t *init = request(s, &r, 1, "initialize",
                           json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                                     mcpage_protocol_latest(), "capabilities", "clientInfo", "name",
                                     "mcpage-call", "version", mcpage_version()));
    json_decref(init);
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcpage_session_receive(s, note, sizeof note - 1);
    if (list) {
        status = list_tools(s, &r);
        goto done;
    }
    json_t *rep =
        request(s, &r, 2, "tools/call",
                json_pack("{s:s, s:O}", "name", tool, "arguments", args ? args : json_object()));
    const json_t *res = json_object_get(rep, "result");
    if (res == NULL) {
        const char *msg =
            json_string_value(json_object_get(json_object_get(rep, "error"), "message"));
        fprintf(stderr, "mcpage call: %s\n", msg ? msg : "no reply");
        json_decref(rep);
        goto done;
    }
    bool is_error = json_is_true(json_object_get(res, "isError"));
    if (json) {
        char *txt = json_dumps(res, JSON_COMPACT);
        if (txt)
            printf("%s\n", txt);
        free(txt);
    } else if (field && !is_error) {
        const json_t *v = json_object_get(json_object_get(res, "structuredContent"), field);
        if (json_is_string(v)) {
            printf("%s\n", json_string_value(v));
        } else if (v) {
            char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (txt)
                printf("%s\n", txt);
            free(txt);
        }
    } else {
        print_text(res);
    }
    status = is_error ? 1 : 0;
    json_decref(rep);
done:
    mcpage_session_free(s);
    mcpage_server_free(srv);
    cli_archive_close(&arc);
    json_decref(r.by_id);
    pthread_mutex_destroy(&r.mu);
    json_decref(args);
    return status;
}
