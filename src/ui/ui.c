/*
 * The browser view's routing and page frame (ui.h): which path is which
 * page, the document every page writes into, the Content-Security-Policy
 * that lets only our one stylesheet and our one script in.
 */
#include "ui/ui.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ui/ui_internal.h"

/*
 * The view's own rules, after the stylesheet it shares with the exports
 * (text_css). Tables size their columns to their content: short cells
 * (dates, counts, agents) stay on one line, and only the one wide column
 * (a title, a project's name: class w) wraps, breaking inside a word
 * only when the word is longer than the column; a project's name beside
 * a title (class p) moves to the next line whole rather than break at
 * its hyphen. On a phone the optional columns go and a date may break at
 * its space.
 */
static const char ui_css[] = "td,th{overflow-wrap:normal;white-space:nowrap}"
                             "td.w,th.w{white-space:normal;overflow-wrap:anywhere;width:100%}"
                             "td .p{display:inline-block}.nw{white-space:nowrap}"
                             "ol.hits mark{padding:0 .1em;border-radius:.2em}"
                             "@media (max-width:40rem){td.t{white-space:normal}}";

/*
 * The live script of the pages that grow with the archive (projects,
 * sessions, a transcript: docs/ui.md, "Live"): every 2 s while the tab is
 * visible it asks the same address again and, when the new page's <main>
 * differs, puts it in place of the old one. No reload (the scroll
 * position, a selection elsewhere stay), nothing but this origin, no
 * markup of its own: the page it inserts is the server's, escaped as
 * every page is. Without it (scripts off) the pages are as they were.
 */
static const char ui_live_js[] =
    "(function(){var m=document.querySelector('main'),busy=0;"
    "if(!m||!window.fetch||!window.DOMParser)return;"
    "function tick(){if(busy||document.hidden)return;busy=1;"
    "fetch(location.href,{cache:'no-store',credentials:'same-origin'})"
    ".then(function(r){return r.ok?r.text():null}).then(function(t){busy=0;if(!t)return;"
    "var n=new DOMParser().parseFromString(t,'text/html').querySelector('main');"
    "if(n&&n.innerHTML!==m.innerHTML){m.innerHTML=n.innerHTML;"
    "document.documentElement.setAttribute('data-updated',String(Date.now()))}})"
    "['catch'](function(){busy=0})}"
    "setInterval(tick,2000)})();";

static char ui_css_hash[64], ui_js_hash[64];
static pthread_once_t ui_css_once = PTHREAD_ONCE_INIT;

static void ui_css_hash_init(void)
{
    text_csp_hash(ui_css_hash, sizeof ui_css_hash, text_css, ui_css);
    text_csp_hash(ui_js_hash, sizeof ui_js_hash, ui_live_js, "");
}

/* The policy of every page: nothing but our stylesheet and live script, requests and forms
   to ourselves. */
static void csp_header(char *buf, size_t cap)
{
    pthread_once(&ui_css_once, ui_css_hash_init);
    (void)snprintf(buf, cap,
                   "Content-Security-Policy: default-src 'none'; style-src %s; script-src %s; "
                   "connect-src 'self'; base-uri 'none'; form-action 'self'; "
                   "frame-ancestors 'none'\n",
                   ui_css_hash, ui_js_hash);
}

const char *ui_arg(const ui_doc *d, const char *name)
{
    const char *v = d->req->arg(d->req, name);
    return v && v[0] ? v : NULL;
}

long long ui_arg_int(const ui_doc *d, const char *name, long long dflt)
{
    const char *v = ui_arg(d, name);
    if (v == NULL)
        return dflt;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end == '\0' && n >= 0 ? n : dflt;
}

void ui_raw(ui_doc *d, const char *s)
{
    text_out_puts(&d->o, s);
}

void ui_rawf(ui_doc *d, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        text_out_write(&d->o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void ui_text(ui_doc *d, const char *s)
{
    if (s == NULL)
        s = "-";
    text_out_html(&d->o, s, strlen(s));
}

void ui_snippet(ui_doc *d, const char *s)
{
    const char *open = text_hit_open, *close = text_hit_close;
    size_t skip = strlen(open); /* both marks are as long */
    if (s == NULL) {
        ui_text(d, NULL);
        return;
    }
    bool in = false;
    for (;;) {
        const char *m = strstr(s, in ? close : open);
        text_out_html(&d->o, s, m ? (size_t)(m - s) : strlen(s));
        if (m == NULL)
            break;
        ui_raw(d, in ? "</mark>" : "<mark>");
        in = !in;
        s = m + skip;
    }
    if (in)
        ui_raw(d, "</mark>");
}

void ui_time(ui_doc *d, const char *ts)
{
    char buf[17];
    if (ts == NULL || strlen(ts) < 16 || ts[10] != 'T') {
        ui_text(d, ts);
        return;
    }
    /* the date and the time each unbroken; a line may end between them */
    memcpy(buf, ts, 16);
    buf[10] = '\0';
    buf[16] = '\0';
    ui_raw(d, "<span class=\"nw\">");
    ui_text(d, buf);
    ui_raw(d, "</span> <span class=\"nw\">");
    ui_text(d, buf + 11);
    ui_raw(d, "</span>");
}

void ui_url(ui_doc *d, const char *s)
{
    char buf[3 * 1024 + 1];
    const char *p = s ? s : "";
    while (*p) { /* in pieces that fit the buffer whole */
        size_t n = strlen(p) < 1024 ? strlen(p) : 1024;
        char piece[1025];
        memcpy(piece, p, n);
        piece[n] = '\0';
        text_out_write(&d->o, buf, text_percent_encode(buf, sizeof buf, piece, NULL));
        p += n;
    }
}

void ui_begin(ui_doc *d, const char *title, const char *q)
{
    ui_raw(d, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    ui_text(d, title);
    ui_raw(d, " \xC2\xB7 mcpage</title>\n<style>");
    ui_raw(d, text_css);
    ui_raw(d, ui_css);
    ui_raw(d, "</style></head>\n<body>\n<nav class=\"top\"><a href=\"/\"><b>mcpage</b></a>"
              "<a href=\"/map\">activity</a><a href=\"/usage\">usage</a>"
              "<form action=\"/search\" method=\"get\" role=\"search\">"
              "<input type=\"search\" name=\"q\" aria-label=\"Search the archive\" "
              "placeholder=\"words, &quot;phrases&quot;, prefix*, project:NAME, role:tool\" "
              "value=\"");
    ui_text(d, q ? q : "");
    ui_raw(d, "\"><button>Search</button></form></nav>\n<main>\n");
}

void ui_error(ui_doc *d, unsigned status, const char *what, const char *text)
{
    d->status = status;
    ui_raw(d, "<h1>");
    ui_text(d, what);
    ui_raw(d, "</h1>\n<pre class=\"err\">");
    ui_text(d, text);
    ui_raw(d, "</pre>\n");
}

const json_t *ui_tool(ui_doc *d, const char *tool, json_t *args, json_t **res)
{
    char err[600];
    *res = ui_call_tool(d->srv, d->req->caller, tool, args, err, sizeof err);
    json_decref(args);
    if (*res == NULL) {
        ui_error(d, 500, tool, err);
        return NULL;
    }
    const json_t *sc = json_object_get(*res, "structuredContent");
    if (json_is_true(json_object_get(*res, "isError")) || !json_is_object(sc)) {
        const json_t *c0 = json_array_get(json_object_get(*res, "content"), 0);
        const char *param = ui_str(json_object_get(sc, "error"), "param", "");
        ui_error(d, strcmp(param, "session_id") == 0 ? 404 : 400, tool,
                 ui_str(c0, "text", "the tool failed"));
        return NULL;
    }
    return sc;
}

/* The pages by path. */
static const struct {
    const char *path;
    void (*render)(ui_doc *d);
} routes[] = {
    {"/", ui_page_projects},       {"/sessions", ui_page_sessions}, {"/search", ui_page_search},
    {"/session", ui_page_session}, {"/map", ui_page_map},           {"/usage", ui_page_usage},
};

int ui_page(void *ud, const mcpage_http_page_req *req, mcpage_http_page *out)
{
    ui_ctx *ctx = ud;
    ui_doc d = {.status = 200, .srv = ctx->srv, .req = req};
    d.f = open_memstream(&d.buf, &d.len);
    if (d.f == NULL)
        return MCPAGE_ENOMEM;
    text_out_init(&d.o, d.f);
    size_t i = 0;
    while (i < sizeof routes / sizeof routes[0] && strcmp(routes[i].path, req->path) != 0)
        i++;
    if (i < sizeof routes / sizeof routes[0]) {
        routes[i].render(&d);
    } else {
        ui_begin(&d, "Not found", NULL);
        ui_error(&d, 404, "Not found",
                 "No page here. The pages are /, /sessions, /search, /session, /map and /usage.");
    }
    ui_raw(&d, "</main>");
    if (d.live && d.status == 200) {
        ui_raw(&d, "<script>");
        ui_raw(&d, ui_live_js);
        ui_raw(&d, "</script>");
    }
    ui_raw(&d, "</body></html>\n");
    int err = d.o.err;
    if (fclose(d.f) != 0 || err) {
        free(d.buf);
        return MCPAGE_EIO;
    }
    char csp[400];
    csp_header(csp, sizeof csp);
    out->status = d.status;
    out->content_type = "text/html; charset=utf-8";
    out->body = d.buf;
    out->len = d.len;
    out->release = free;
    out->headers = strdup(csp);
    return out->headers ? 0 : MCPAGE_ENOMEM;
}
