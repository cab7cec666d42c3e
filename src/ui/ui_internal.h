/*
 * What the page files of the browser view share: a document being
 * written (an in-memory HTML page with its status), its frame (head,
 * navigation, the one stylesheet under a CSP hash), escapes and links,
 * and a tool call whose failure becomes the page.
 */
#ifndef MCPAGE_UI_UI_INTERNAL_H
#define MCPAGE_UI_UI_INTERNAL_H

#include <stdio.h>

#include <jansson.h>

#include "tools/text_out.h"
#include "ui/ui.h"
#include "ui/ui_call.h"

/* A page being written. */
typedef struct ui_doc {
    FILE *f;                         /* an open_memstream over buf */
    char *buf;                       /* the page (malloc'd by the stream) */
    size_t len;                      /* its length once closed */
    text_out o;                      /* the writer over f */
    unsigned status;                 /* HTTP status, 200 unless an error page */
    mcpage_server *srv;              /* whose tools the page calls */
    const mcpage_http_page_req *req; /* the request */
    bool live;                       /* it grows with the archive: the live script follows */
} ui_doc;

/* A query argument of the request, or NULL when absent or empty. */
const char *ui_arg(const ui_doc *d, const char *name);
/* A positive integer argument, or dflt. */
long long ui_arg_int(const ui_doc *d, const char *name, long long dflt);

/* Opens the page: head, stylesheet, navigation with the search box (q). */
void ui_begin(ui_doc *d, const char *title, const char *q);
/* Text, HTML-escaped ("-" for NULL). */
void ui_text(ui_doc *d, const char *s);
/* A search snippet: its text escaped, each hit (between text_hit_open
   and text_hit_close) in <mark>. */
void ui_snippet(ui_doc *d, const char *s);
/* A stored timestamp as a person reads it: "2025-09-26 19:03" (UTC). */
void ui_time(ui_doc *d, const char *ts);
/* Markup as is (our own strings only). */
void ui_raw(ui_doc *d, const char *s);
void ui_rawf(ui_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A value percent-encoded for a URL's query (all but [A-Za-z0-9-._~]). */
void ui_url(ui_doc *d, const char *s);
/* An error page body: a heading and the tool's or our sentence. */
void ui_error(ui_doc *d, unsigned status, const char *what, const char *text);

/*
 * Calls `tool` with `args` (stolen). The structured result (borrowed
 * from *res, which the caller frees with json_decref) on success; on a
 * failed call or an isError result, writes the error into the page and
 * returns NULL.
 */
const json_t *ui_tool(ui_doc *d, const char *tool, json_t *args, json_t **res);

/* The pages (ui_pages.c, ui_map.c). */
void ui_page_projects(ui_doc *d);
void ui_page_sessions(ui_doc *d);
void ui_page_search(ui_doc *d);
void ui_page_session(ui_doc *d);
void ui_page_map(ui_doc *d);
void ui_page_usage(ui_doc *d);
/* " · N tokens · $X" of a get_session_summary result, when it has usage (ui_usage.c). */
void ui_usage_session_line(ui_doc *d, const json_t *summary);

#endif
