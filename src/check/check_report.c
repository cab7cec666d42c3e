/*
 * The checker's output: findings grouped by what they are about (the
 * server, a protocol list, a tool), one line each with its fix, then the
 * request that shows it so it can be sent again by hand; then the host-fit table: the largest
 * page each tool returned, measured on the copy each host shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "page/term.h"

static void print_finding(const json_t *f, FILE *out)
{
    /* One line per finding: what is wrong; fix: what removes it. */
    const char *fix = json_string_value(json_object_get(f, "fix"));
    text_term_printf(out, "  %-7s %s%s%s\n", json_string_value(json_object_get(f, "severity")),
                     json_string_value(json_object_get(f, "message")), fix ? "; fix: " : "",
                     fix ? fix : "");
    const json_t *req = json_object_get(f, "request");
    if (req == NULL)
        return;
    char *txt = json_dumps(req, JSON_COMPACT);
    if (txt && strlen(txt) > 600)
        text_term_printf(out, "          request: %.600s...\n", txt);
    else if (txt)
        text_term_printf(out, "          request: %s\n", txt);
    free(txt);
}

static void print_findings(const check_report *rep, FILE *out)
{
    /* Scopes in the order first seen; each group once. */
    json_t *done = json_object();
    size_t i, j;
    const json_t *f, *g;
    json_array_foreach(rep->findings, i, f)
    {
        const char *scope = json_string_value(json_object_get(f, "scope"));
        if (json_object_get(done, scope))
            continue;
        json_object_set_new(done, scope, json_true());
        text_term_printf(out, "%s\n", scope);
        json_array_foreach(rep->findings, j, g)
        {
            if (strcmp(json_string_value(json_object_get(g, "scope")), scope) == 0)
                print_finding(g, out);
        }
    }
    json_decref(done);
}

static void print_fit(const check_report *rep, FILE *out)
{
    size_t i;
    const json_t *t;
    long called = 0;
    json_array_foreach(rep->tools, i, t) called += json_is_true(json_object_get(t, "called"));
    if (called == 0)
        return;
    int w = 4; /* the tool column fits the longest name */
    json_array_foreach(rep->tools, i, t)
    {
        size_t l = strlen(json_string_value(json_object_get(t, "name")));
        if (json_is_true(json_object_get(t, "called")) && l > (size_t)w)
            w = l > 64 ? 64 : (int)l;
    }
    text_term_printf(out,
                     "\nhost fit: each tool's default page (no window arguments) as each host "
                     "shows it\n(t tokens, o200k estimate; c characters; B bytes; L lines; * past "
                     "that host's limit;\n ~ past it, but the tool is app-only: the model never "
                     "sees its results)\n");
    text_term_printf(out, "%-*s %-12s %6s", w, "tool", "family", "pages");
    for (size_t h = 0; h < check_host_count; h++)
        text_term_printf(out, " %14s", check_hosts[h].name);
    text_term_printf(out, "\n");
    json_array_foreach(rep->tools, i, t)
    {
        if (!json_is_true(json_object_get(t, "called")))
            continue;
        text_term_printf(out, "%-*.64s %-12s %6lld", w,
                         json_string_value(json_object_get(t, "name")),
                         json_string_value(json_object_get(t, "family")),
                         (long long)json_integer_value(json_object_get(t, "pages")));
        const json_t *fit = json_object_get(t, "fit");
        for (size_t h = 0; h < check_host_count; h++) {
            const check_host *host = &check_hosts[h];
            const json_t *m = json_object_get(fit, host->name);
            char cell[40];
            /* Each host in the unit it limits by. */
            if (host->max_tokens || host->warn_tokens)
                snprintf(cell, sizeof cell, "%lldt",
                         (long long)json_integer_value(json_object_get(m, "tokens")));
            else if (host->max_chars)
                snprintf(cell, sizeof cell, "%lldc",
                         (long long)json_integer_value(json_object_get(m, "chars")));
            else if (host->max_lines)
                snprintf(cell, sizeof cell, "%lldB/%lldL",
                         (long long)json_integer_value(json_object_get(m, "bytes")),
                         (long long)json_integer_value(json_object_get(m, "lines")));
            else
                snprintf(cell, sizeof cell, "%lldB",
                         (long long)json_integer_value(json_object_get(m, "bytes")));
            /* '~': past the limit, but an app-only tool's results never reach the model. */
            const char *mark = json_is_true(json_object_get(m, "fits"))       ? " "
                               : json_is_true(json_object_get(t, "app_only")) ? "~"
                                                                              : "*";
            text_term_printf(out, " %13s%s", cell, mark);
        }
        text_term_printf(out, "\n");
    }
    text_term_printf(out, "limits (docs/check.md):\n");
    for (size_t h = 0; h < check_host_count; h++) {
        const check_host *host = &check_hosts[h];
        text_term_printf(out, "  %-12s", host->name);
        if (host->max_tokens)
            text_term_printf(out, " %zu tokens", host->max_tokens);
        if (host->max_chars)
            text_term_printf(out, " %zu chars", host->max_chars);
        if (host->max_bytes)
            text_term_printf(out, " %zu bytes", host->max_bytes);
        if (host->max_lines)
            text_term_printf(out, " %zu lines", host->max_lines);
        text_term_printf(out, ": %s\n", host->past);
    }
}

/* MCP Apps: each view (MIME type, size, the origins its csp opens), then the tools that name one.
 */
static void print_apps(const check_report *rep, FILE *out)
{
    const json_t *apps = rep->apps;
    if (apps == NULL)
        return;
    text_term_printf(out, "\napps: extension io.modelcontextprotocol/ui %s\n",
                     json_is_true(json_object_get(apps, "extension")) ? "declared"
                                                                      : "not declared");
    size_t i, j;
    const json_t *v, *t, *o;
    json_array_foreach(json_object_get(apps, "views"), i, v)
    {
        const json_t *origins = json_object_get(v, "external_origins");
        if (!json_is_true(json_object_get(v, "resolves"))) {
            text_term_printf(out, "  view %s: does not resolve\n",
                             json_string_value(json_object_get(v, "uri")));
            continue;
        }
        text_term_printf(out, "  view %s: %s, %lld bytes, csp %s\n",
                         json_string_value(json_object_get(v, "uri")),
                         json_string_value(json_object_get(v, "mimeType")) ?: "(no mimeType)",
                         (long long)json_integer_value(json_object_get(v, "bytes")),
                         json_object_get(v, "csp") == NULL ||
                                 json_is_null(json_object_get(v, "csp"))
                             ? "not declared (the host's default: no external origin)"
                         : json_array_size(origins) ? "opens it to:"
                                                    : "{} (no external origin)");
        json_array_foreach(origins, j, o) text_term_printf(out, "    %s\n", json_string_value(o));
    }
    json_array_foreach(json_object_get(apps, "tools"), i, t)
    {
        const char *uri = json_string_value(json_object_get(t, "resourceUri"));
        const json_t *res = json_object_get(t, "resolves");
        text_term_printf(out, "  tool %s: %s%s%s\n", json_string_value(json_object_get(t, "name")),
                         json_is_true(json_object_get(t, "app_only")) ? "app-only"
                                                                      : "model and app",
                         uri ? ", view " : "", uri ? uri : "");
        if (uri && !json_is_true(res))
            text_term_printf(out, "    (the view does not resolve)\n");
    }
}

void check_report_print(const check_report *rep, FILE *out)
{
    const json_t *s = rep->server;
    text_term_printf(out, "mcpage check: %s %s, protocol %s\n",
                     json_string_value(json_object_get(s, "name")) ?: "(unnamed server)",
                     json_string_value(json_object_get(s, "version")) ?: "",
                     json_string_value(json_object_get(s, "era")) ?: "?");
    print_findings(rep, out);
    print_apps(rep, out);
    print_fit(rep, out);
    long tools = (long)json_array_size(rep->tools), called = 0;
    size_t i;
    const json_t *t;
    json_array_foreach(rep->tools, i, t) called += json_is_true(json_object_get(t, "called"));
    text_term_printf(out,
                     "\n%d errors, %d warnings, %d notes; %ld tools (%ld called), %ld calls, %ld "
                     "requests%s\n",
                     rep->errors, rep->warnings, rep->infos, tools, called, rep->calls,
                     rep->requests, rep->aborted ? " (stopped early)" : "");
}

json_t *check_report_json(const check_report *rep)
{
    return json_pack("{s:O, s:O, s:O, s:O?, s:{s:i, s:i, s:i, s:I, s:I, s:b}}", "server",
                     rep->server, "findings", rep->findings, "tools", rep->tools, "apps",
                     rep->apps ? rep->apps : json_null(), "summary", "errors", rep->errors,
                     "warnings", rep->warnings, "notes", rep->infos, "calls",
                     (json_int_t)rep->calls, "requests", (json_int_t)rep->requests, "stopped_early",
                     rep->aborted);
}
