/*
 * `mcpage check [OPTIONS] -- COMMAND [ARGS...]`: checks any MCP server's
 * paging and host fit (src/check/, docs/check.md) and prints a report.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "check/check.h"
#include "cli/commands.h"
#include "page/term.h"

static void check_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage check [OPTIONS] -- COMMAND [ARGS...]\n"
            "       mcpage check [OPTIONS] URL\n\n"
            "Starts COMMAND as an MCP server on stdio (or talks Streamable HTTP to URL,\n"
            "e.g. http://127.0.0.1:8765/mcp) and checks what a paging-aware\n"
            "reviewer would: the protocol lists walked to the end (nextCursor rules, a\n"
            "garbage cursor refused with -32602, the 2026-07-28 cache hints on every page),\n"
            "every paginating tool walked by cursor and offset (records repeated or skipped,\n"
            "totals and has_more that disagree with the walk, cursors that do not advance,\n"
            "clamps, invalid and past-the-end windows, records too large for any page),\n"
            "descriptions and hints that name parameters the schema lacks, and how large\n"
            "each page is on the copy each host shows the model (Claude Code, Codex CLI,\n"
            "Gemini CLI, Copilot CLI). Every finding names its fix and the request that\n"
            "shows it.\n"
            "Speaks 2026-07-28 (server/discover) and falls back to 2025-11-25 (initialize).\n"
            "Only tools annotated readOnlyHint are called, and those named by --allow.\n\n"
            "  --allow TOOL        call TOOL although it is not annotated readOnlyHint\n"
            "  --header 'NAME: VALUE'  an HTTP header on every request (URL only), e.g.\n"
            "                      --header 'Authorization: Bearer TOKEN'\n"
            "  --args TOOL=JSON    arguments every call of TOOL needs, e.g.\n"
            "                      --args 'read_file={\"path\": \"README.md\"}'\n"
            "  --page-size N       walk with this window (limit, max_lines, max_bytes);\n"
            "                      default: the tool's own default\n"
            "  --max-calls N       tools/call requests at most (default %d)\n"
            "  --timeout SECONDS   per request (default %d); a tool whose parameters declare\n"
            "                      a duration (a default of duration, timeout, delay...\n"
            "                      in seconds) is given that much more\n"
            "  --timeout TOOL=SECONDS  what each call of TOOL may take; a call past its\n"
            "                      timeout is cancelled, reported, and the run goes on\n"
            "  --era REVISION      speak only 2025-11-25 or 2026-07-28 (default: probe)\n"
            "  --json              the report as one JSON object\n"
            "  --warnings-fail     exit 1 on warnings too\n"
            "  --quiet             no progress line on stderr\n\n"
            "Exit status: 0 no errors, 1 errors found (or warnings with --warnings-fail),\n"
            "2 usage, 3 the server could not be checked.\n\n"
            "examples: mcpage check -- mcpage serve --no-sync\n"
            "          mcpage check --header 'Authorization: Bearer TOKEN' "
            "https://example.com/mcp\n",
            CHECK_DEFAULT_MAX_CALLS, CHECK_DEFAULT_TIMEOUT_MS / 1000);
}

/* Adds TOOL=SECONDS to timeouts; 0 or -1 with a message. */
static int add_timeout(json_t *timeouts, const char *spec)
{
    const char *eq = strrchr(spec, '=');
    char *end = NULL;
    double v = eq ? strtod(eq + 1, &end) : 0;
    if (eq == NULL || eq == spec || end == eq + 1 || *end != '\0' || !(v > 0 && v <= 3600)) {
        text_term_printf(
            stderr, "mcpage check: --timeout wants SECONDS (1-3600) or TOOL=SECONDS, got '%s'\n",
            spec);
        return -1;
    }
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
    json_object_set_new(timeouts, name, json_real(v));
    return 0;
}

/* Adds TOOL=JSON to args; 0 or -1 with a message. */
static int add_args(json_t *args, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL || eq == spec) {
        text_term_printf(stderr, "mcpage check: --args wants TOOL=JSON, got '%s'\n", spec);
        return -1;
    }
    json_error_t e;
    json_t *v = json_loads(eq + 1, 0, &e);
    if (!json_is_object(v)) {
        text_term_printf(stderr, "mcpage check: --args %.*s: not a JSON object (%s)\n",
                         (int)(eq - spec), spec, v ? "not an object" : e.text);
        json_decref(v);
        return -1;
    }
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
    json_object_set_new(args, name, v);
    return 0;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int cli_cmd_check(int argc, char **argv)
{
    check_options o = {.progress = isatty(2) != 0};
    json_t *allow = json_array(), *args = json_object(), *timeouts = json_object();
    const char *headers[64];
    size_t n_headers = 0;
    bool as_json = false, warnings_fail = false;
    int status = 2, i = 1;
    long n;
    for (; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            check_usage(stdout);
            status = 0;
            goto done;
        } else if (strcmp(a, "--json") == 0) {
            as_json = true;
        } else if (strcmp(a, "--warnings-fail") == 0) {
            warnings_fail = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o.progress = false;
        } else if (has && strcmp(a, "--allow") == 0) {
            json_array_append_new(allow, json_string(argv[++i]));
        } else if (has && strcmp(a, "--header") == 0) {
            if (n_headers == sizeof headers / sizeof headers[0] || !strchr(argv[i + 1], ':')) {
                text_term_printf(stderr,
                                 "mcpage check: --header wants 'NAME: VALUE' (at most 64)\n");
                goto done;
            }
            headers[n_headers++] = argv[++i];
        } else if (has && strcmp(a, "--args") == 0) {
            if (add_args(args, argv[++i]) != 0)
                goto done;
        } else if (has && strcmp(a, "--era") == 0) {
            o.era = argv[++i];
            if (strcmp(o.era, "2025-11-25") != 0 && strcmp(o.era, "2026-07-28") != 0) {
                text_term_printf(stderr, "mcpage check: --era is 2025-11-25 or 2026-07-28\n");
                goto done;
            }
        } else if (has && strcmp(a, "--page-size") == 0 &&
                   parse_long(argv[i + 1], 1, 1000000, &n)) {
            o.page_size = n;
            i++;
        } else if (has && strcmp(a, "--max-calls") == 0 &&
                   parse_long(argv[i + 1], 1, 100000000, &n)) {
            o.max_calls = n;
            i++;
        } else if (has && strcmp(a, "--timeout") == 0 && parse_long(argv[i + 1], 1, 3600, &n)) {
            o.timeout_ms = (int)n * 1000;
            i++;
        } else if (has && strcmp(a, "--timeout") == 0 && strchr(argv[i + 1], '=')) {
            if (add_timeout(timeouts, argv[++i]) != 0)
                goto done;
        } else if (a[0] != '-' && i + 1 == argc) {
            break; /* the URL */
        } else {
            text_term_printf(stderr,
                             "mcpage check: unknown, incomplete or out-of-range option '%s'\n", a);
            check_usage(stderr);
            goto done;
        }
    }
    bool http = i < argc && strcmp(argv[i - 1], "--") != 0 &&
                (strncmp(argv[i], "http://", 7) == 0 || strncmp(argv[i], "https://", 8) == 0);
    if (i >= argc || (strcmp(argv[i - 1], "--") != 0 && !http)) {
        text_term_printf(
            stderr, "mcpage check: name the server: -- COMMAND [ARGS...], or an http(s) URL\n");
        check_usage(stderr);
        goto done;
    }
    o.allow = allow;
    o.args = args;
    o.tool_timeouts = timeouts;
    signal(SIGPIPE, SIG_IGN); /* a server that exits is reported, not fatal */
    char why[256] = "";
    check_stdio *child = NULL;
    check_http *endpoint = NULL;
    check_transport t;
    int rc;
    if (http) {
        rc = check_http_start(argv[i], headers, n_headers, &endpoint, why, sizeof why);
        if (rc == 0)
            check_http_transport(endpoint, &t);
    } else {
        rc = check_stdio_start(argv + i, &child, why, sizeof why);
        if (rc == 0)
            check_stdio_transport(child, &t);
    }
    if (rc != 0) {
        text_term_printf(stderr, "mcpage check: %s\n", why[0] ? why : mcpage_strerror(rc));
        status = 3;
        goto done;
    }
    check_report rep;
    rc = check_run(&o, &t, &rep);
    check_stdio_stop(child);
    check_http_stop(endpoint);
    if (as_json) {
        json_t *j = check_report_json(&rep);
        char *txt = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(j);
    } else {
        check_report_print(&rep, stdout);
    }
    if (rc != 0)
        status = 3;
    else
        status = rep.errors > 0 || (warnings_fail && rep.warnings > 0) ? 1 : 0;
    check_report_free(&rep);
done:
    json_decref(allow);
    json_decref(args);
    json_decref(timeouts);
    return status;
}
