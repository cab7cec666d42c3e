/*
 * The list and transcript pages of the browser view: projects (the home
 * page), a project's sessions, search, and a session's transcript. Each
 * is one or two tool calls with the tool's own defaults (page size,
 * token budget), the fields it shows asked for by name, and a "Next
 * page" link carrying the page's signed next_cursor (or next_start_line)
 * and the walk's other arguments, exactly what an agent would send next.
 */
#include <stdlib.h>
#include <string.h>

#include "ui/ui_internal.h"

/* Lines shown before a search hit: the blank line ending the message
   before it. More would risk the budget ending the page before the hit
   (a long line before it), and "Previous lines" is one click away. */
#define UI_HIT_CONTEXT 1

/* "21–40 of 66 sessions" from a LIST page's envelope. */
static void list_summary(ui_doc *d, const json_t *sc, const char *unit)
{
    char total_key[64];
    (void)snprintf(total_key, sizeof total_key, "total_%s", unit);
    long long off = ui_int(sc, "offset", 0), n = ui_int(sc, "returned", 0);
    long long total = ui_int(sc, total_key, -1);
    ui_raw(d, "<p class=\"meta\">");
    if (n > 0)
        ui_rawf(d, "%lld\xE2\x80\x93%lld of ", off + 1, off + n);
    else
        ui_raw(d, "none of ");
    ui_rawf(d, "%lld %s", total, unit);
    if (json_is_true(json_object_get(sc, "order_may_have_shifted")))
        ui_raw(d, " (the archive changed during this walk: relevance order may have shifted)");
    ui_raw(d, "</p>\n");
}

/* Opens a link's href with `path` and the first argument's name. */
static void href_begin(ui_doc *d, const char *path)
{
    ui_raw(d, "<a href=\"");
    ui_raw(d, path);
}

/* Adds "&name=value" (or "?name=value" first) when value is set. */
static void href_arg(ui_doc *d, bool *first, const char *name, const char *value)
{
    if (value == NULL)
        return;
    ui_raw(d, *first ? "?" : "&amp;");
    *first = false;
    ui_raw(d, name);
    ui_raw(d, "=");
    ui_url(d, value);
}

/* A LIST page's pager: first page, and the next by next_cursor. */
static void list_pager(ui_doc *d, const json_t *sc, const char *path, const char *k1,
                       const char *v1, const char *k2, const char *v2)
{
    const char *next = ui_str(sc, "next_cursor", NULL);
    bool more = json_is_true(json_object_get(sc, "has_more")) && next;
    ui_raw(d, "<nav class=\"pager\">");
    if (ui_arg(d, "cursor")) {
        bool first = true;
        href_begin(d, path);
        href_arg(d, &first, k1, v1);
        href_arg(d, &first, k2, v2);
        ui_raw(d, "\" rel=\"first\">First page</a>");
    }
    if (more) {
        bool first = true;
        href_begin(d, path);
        href_arg(d, &first, k1, v1);
        href_arg(d, &first, k2, v2);
        href_arg(d, &first, "cursor", next);
        ui_raw(d, "\" rel=\"next\">Next page</a>");
    } else {
        ui_raw(d, "<span class=\"mute\">End of the list</span>");
    }
    ui_raw(d, "</nav>\n");
}

/* ------------------------------------------------------------ projects */

/* "claude,codex" as "claude, codex": a list that may wrap between agents. */
static void sources(ui_doc *d, const char *s)
{
    if (s == NULL) {
        ui_text(d, NULL);
        return;
    }
    for (const char *c; (c = strchr(s, ',')) != NULL; s = c + 1) {
        text_out_html(&d->o, s, (size_t)(c - s));
        ui_raw(d, ", ");
    }
    ui_text(d, s);
}

void ui_page_projects(ui_doc *d)
{
    ui_begin(d, "Projects", NULL);
    d->live = true;
    json_t *args = json_pack("{s:[s,s,s,s,s]}", "fields", "name", "sources", "session_count",
                             "message_count", "last_activity");
    if (ui_arg(d, "cursor"))
        json_object_set_new(args, "cursor", json_string(ui_arg(d, "cursor")));
    json_t *res;
    const json_t *sc = ui_tool(d, "list_projects", args, &res);
    if (sc) {
        ui_raw(d, "<h1>Projects</h1>\n");
        list_summary(d, sc, "projects");
        ui_raw(d, "<table><tr><th class=\"w\">project</th><th class=\"opt\">agents</th><th "
                  "class=\"num\">sessions</th><th class=\"num opt\">messages</th><th>last "
                  "active</th></tr>\n");
        json_t *recs = ui_records(sc, "projects");
        size_t i;
        const json_t *r;
        json_array_foreach(recs, i, r)
        {
            bool first = true;
            ui_raw(d, "<tr><td class=\"w\" dir=\"auto\">");
            href_begin(d, "/sessions");
            href_arg(d, &first, "project", ui_rec_str(r, sc, "name", ""));
            ui_raw(d, "\">");
            ui_text(d, ui_rec_str(r, sc, "name", NULL));
            ui_raw(d, "</a></td><td class=\"opt s\">");
            sources(d, ui_rec_str(r, sc, "sources", NULL));
            ui_rawf(
                d,
                "</td><td class=\"num\">%lld</td><td class=\"num opt\">%lld</td><td class=\"t\">",
                ui_int(r, "session_count", 0), ui_int(r, "message_count", 0));
            ui_time(d, ui_rec_str(r, sc, "last_activity", NULL));
            ui_raw(d, "</td></tr>\n");
        }
        json_decref(recs);
        ui_raw(d, "</table>\n");
        list_pager(d, sc, "/", NULL, NULL, NULL, NULL);
    }
    json_decref(res);
}

/* ------------------------------------------------------------ sessions */

void ui_page_sessions(ui_doc *d)
{
    const char *project = ui_arg(d, "project"), *source = ui_arg(d, "source");
    ui_begin(d, project ? project : "Sessions", NULL);
    d->live = true;
    json_t *args = json_pack("{s:[s,s,s,s,s,s]}", "fields", "session_id", "title", "started_at",
                             "messages", "source", "project");
    if (project)
        json_object_set_new(args, "project", json_string(project));
    if (source)
        json_object_set_new(args, "source", json_string(source));
    if (ui_arg(d, "cursor"))
        json_object_set_new(args, "cursor", json_string(ui_arg(d, "cursor")));
    json_t *res;
    const json_t *sc = ui_tool(d, "list_sessions", args, &res);
    if (sc) {
        ui_raw(d, "<h1 dir=\"auto\">");
        ui_text(d, project ? project : "All sessions");
        ui_raw(d, "</h1>\n");
        list_summary(d, sc, "sessions");
        ui_raw(d, "<table><tr><th>started</th><th class=\"w\">session</th><th "
                  "class=\"opt\">agent</th>"
                  "<th class=\"num\">msgs</th></tr>\n");
        json_t *recs = ui_records(sc, "sessions");
        size_t i;
        const json_t *r;
        json_array_foreach(recs, i, r)
        {
            bool first = true;
            const char *title = ui_rec_str(r, sc, "title", NULL);
            ui_raw(d, "<tr><td class=\"t\">");
            ui_time(d, ui_rec_str(r, sc, "started_at", NULL));
            ui_raw(d, "</td><td class=\"w\" dir=\"auto\">");
            href_begin(d, "/session");
            href_arg(d, &first, "id", ui_rec_str(r, sc, "session_id", ""));
            ui_raw(d, "\">");
            ui_text(d, title ? title : ui_rec_str(r, sc, "session_id", NULL));
            ui_raw(d, "</a>");
            if (!project) {
                ui_raw(d, " <span class=\"mute p\">");
                ui_text(d, ui_rec_str(r, sc, "project", NULL));
                ui_raw(d, "</span>");
            }
            ui_raw(d, "</td><td class=\"opt\">");
            ui_text(d, ui_rec_str(r, sc, "source", NULL));
            ui_rawf(d, "</td><td class=\"num\">%lld</td></tr>\n", ui_int(r, "messages", 0));
        }
        json_decref(recs);
        ui_raw(d, "</table>\n");
        list_pager(d, sc, "/sessions", "project", project, "source", source);
    }
    json_decref(res);
}

/* ------------------------------------------------------------ search */

static void search_form(ui_doc *d, const char *q, const char *sort)
{
    static const char *const sorts[] = {"relevance", "newest", "oldest"};
    ui_raw(d, "<form action=\"/search\" method=\"get\"><input type=\"search\" name=\"q\" "
              "aria-label=\"Query\" value=\"");
    ui_text(d, q ? q : "");
    ui_raw(d, "\"> <select name=\"sort\" aria-label=\"Order\">");
    for (size_t i = 0; i < 3; i++) {
        ui_rawf(d, "<option%s>%s</option>", sort && strcmp(sort, sorts[i]) == 0 ? " selected" : "",
                sorts[i]);
    }
    ui_raw(d, "</select> <button>Search</button></form>\n<p class=\"meta\">Words and "
              "\"phrases\" (all required), prefix*, and filters project:NAME, source:AGENT, "
              "role:user|assistant|system|tool, tool:NAME, after:DATE, before:DATE, "
              "has:error.</p>\n");
}

/* The matches folded into hit r (the same snippet further down the page),
   from the page's folds; 0 when none. */
static long long folded_into(const json_t *sc, const json_t *r)
{
    size_t i;
    const json_t *f;
    long long id = ui_int(r, "message_id", -1);
    json_array_foreach(json_object_get(sc, "folds"), i, f)
    {
        if (ui_int(f, "message_id", -2) == id)
            return (long long)json_array_size(json_object_get(f, "others"));
    }
    return 0;
}

static void search_hit(ui_doc *d, const json_t *sc, const json_t *r)
{
    long long line = ui_int(r, "line", 1);
    long long from = line > UI_HIT_CONTEXT ? line - UI_HIT_CONTEXT : 1;
    bool first = true;
    char buf[32];
    ui_raw(d, "<li class=\"msg\"><header>");
    ui_text(d, ui_rec_str(r, sc, "project", NULL));
    ui_raw(d, " \xC2\xB7 ");
    ui_text(d, ui_rec_str(r, sc, "role", NULL));
    ui_raw(d, " \xC2\xB7 ");
    ui_time(d, ui_rec_str(r, sc, "timestamp", NULL));
    ui_raw(d, " \xC2\xB7 ");
    href_begin(d, "/session");
    href_arg(d, &first, "id", ui_rec_str(r, sc, "session_id", ""));
    (void)snprintf(buf, sizeof buf, "%lld", from);
    href_arg(d, &first, "line", buf);
    (void)snprintf(buf, sizeof buf, "%lld", line);
    href_arg(d, &first, "hit", buf);
    ui_rawf(d,
            "#L%lld\" class=\"hit\">line %lld</a></header>\n<div class=\"text\" "
            "dir=\"auto\">",
            line, line);
    ui_snippet(d, ui_rec_str(r, sc, "snippet", NULL));
    ui_raw(d, "</div>");
    long long more = folded_into(sc, r);
    if (more > 0)
        ui_rawf(d,
                "<p class=\"meta folded\" data-folded=\"%lld\">and %lld more match%s with this "
                "snippet on this page</p>",
                more, more, more == 1 ? "" : "es");
    ui_raw(d, "</li>\n");
}

void ui_page_search(ui_doc *d)
{
    const char *q = ui_arg(d, "q"), *sort = ui_arg(d, "sort");
    ui_begin(d, q ? q : "Search", q);
    ui_raw(d, "<h1>Search</h1>\n");
    search_form(d, q, sort);
    if (q == NULL)
        return;
    json_t *args = json_pack("{s:s, s:[s,s,s,s,s,s,s]}", "query", q, "fields", "message_id",
                             "session_id", "project", "role", "timestamp", "snippet", "line");
    if (sort)
        json_object_set_new(args, "sort", json_string(sort));
    if (ui_arg(d, "cursor"))
        json_object_set_new(args, "cursor", json_string(ui_arg(d, "cursor")));
    json_t *res;
    const json_t *sc = ui_tool(d, "search_conversations", args, &res);
    if (sc) {
        list_summary(d, sc, "matches");
        ui_raw(d, "<ol class=\"hits\">\n");
        json_t *recs = ui_records(sc, "matches");
        size_t i;
        const json_t *r;
        json_array_foreach(recs, i, r) search_hit(d, sc, r);
        json_decref(recs);
        ui_raw(d, "</ol>\n");
        list_pager(d, sc, "/search", "q", q, "sort", sort);
    }
    json_decref(res);
}

/* ------------------------------------------------------------ a session */

static void session_head(ui_doc *d, const char *id)
{
    json_t *res;
    const json_t *sc =
        ui_tool(d, "get_session_summary", json_pack("{s:s}", "session_id", id), &res);
    if (sc) {
        bool first = true;
        ui_raw(d, "<h1 dir=\"auto\">");
        ui_text(d, ui_str(sc, "title", id));
        ui_raw(d, "</h1>\n<p class=\"meta\">");
        href_begin(d, "/sessions");
        href_arg(d, &first, "project", ui_str(sc, "project", ""));
        ui_raw(d, "\">");
        ui_text(d, ui_str(sc, "project", NULL));
        ui_raw(d, "</a> \xC2\xB7 ");
        ui_text(d, ui_str(sc, "source", NULL));
        ui_raw(d, " \xC2\xB7 ");
        ui_text(d, ui_str(sc, "model", NULL));
        ui_raw(d, " \xC2\xB7 ");
        ui_time(d, ui_str(sc, "started_at", NULL));
        ui_rawf(d, " \xC2\xB7 %lld messages", ui_int(sc, "messages", 0));
        ui_usage_session_line(d, sc);
        ui_raw(d, " \xC2\xB7 <code>");
        ui_text(d, id);
        ui_raw(d, "</code></p>\n");
    }
    json_decref(res);
}

/* One numbered line; message headers ("### [n] ...") stand out. */
static void session_line(ui_doc *d, long long n, const char *text, long long hit)
{
    ui_rawf(d, "<li id=\"L%lld\"%s><a class=\"n\" href=\"#L%lld\">%lld</a><span dir=\"auto\">", n,
            n == hit                         ? " class=\"hit\""
            : strncmp(text, "### [", 5) == 0 ? " class=\"h\""
                                             : "",
            n, n);
    ui_text(d, text);
    ui_raw(d, "</span></li>\n");
}

static void session_pager(ui_doc *d, const char *id, const json_t *sc, long long start)
{
    ui_raw(d, "<nav class=\"pager\">");
    if (start > 1) {
        long long prev =
            start > ui_int(sc, "max_lines", 200) ? start - ui_int(sc, "max_lines", 200) : 1;
        bool first = true;
        href_begin(d, "/session");
        href_arg(d, &first, "id", id);
        ui_rawf(d, "&amp;line=%lld\" rel=\"prev\">Previous lines</a>", prev);
    }
    long long next = ui_int(sc, "next_start_line", 0);
    if (json_is_true(json_object_get(sc, "has_more")) && next > 0) {
        bool first = true;
        href_begin(d, "/session");
        href_arg(d, &first, "id", id);
        ui_rawf(d, "&amp;line=%lld", next);
        if (ui_int(sc, "next_start_column", 0) > 1)
            ui_rawf(d, "&amp;col=%lld", ui_int(sc, "next_start_column", 0));
        ui_raw(d, "\" rel=\"next\">Next page</a>");
    } else {
        ui_raw(d, "<span class=\"mute\">End of the transcript</span>");
    }
    ui_raw(d, "</nav>\n");
}

void ui_page_session(ui_doc *d)
{
    const char *id = ui_arg(d, "id");
    ui_begin(d, id ? id : "Session", NULL);
    d->live = true;
    if (id == NULL) {
        ui_error(d, 400, "Which session?", "Open a session from a list: /session?id=SESSION_ID.");
        return;
    }
    session_head(d, id);
    if (d->status != 200)
        return;
    long long start = ui_arg_int(d, "line", 1), col = ui_arg_int(d, "col", 1);
    long long hit = ui_arg_int(d, "hit", 0);
    json_t *args = json_pack("{s:s, s:I}", "session_id", id, "start_line", start < 1 ? 1 : start);
    if (col > 1)
        json_object_set_new(args, "start_column", json_integer(col));
    json_t *res;
    const json_t *sc = ui_tool(d, "read_session", args, &res);
    if (sc) {
        long long first = ui_int(sc, "start_line", start);
        ui_rawf(d, "<p class=\"meta\">Lines %lld\xE2\x80\x93%lld of %lld</p>\n", first,
                ui_int(sc, "end_line", first), ui_int(sc, "total_lines", 0));
        session_pager(d, id, sc, first);
        ui_rawf(d, "<ol class=\"lines\" start=\"%lld\">\n", first);
        const json_t *lines = json_object_get(sc, "lines");
        size_t i;
        const json_t *l;
        json_array_foreach(lines, i, l)
        {
            /* a line is a string; an object with its text is read too */
            const char *text = json_is_string(l) ? json_string_value(l) : ui_str(l, "text", "");
            session_line(d, first + (long long)i, text, hit);
        }
        ui_raw(d, "</ol>\n");
        session_pager(d, id, sc, first);
    }
    json_decref(res);
}
