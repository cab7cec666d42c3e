/*
 * app_server: an MCP App on libmcpage (docs/app.md, "In the library").
 * One view, ui://app-example/list.html, and two tools that name it:
 * show_items, which the model calls (the host then renders the view), and
 * list_items, an app-only LIST tool (visibility ["app"]) that the view
 * calls through the host to page through 1,000 items with next_cursor.
 * The view reads the page envelope of docs/contract.md and nothing else:
 * items, returned, total_items, has_more, next_cursor.
 *
 * Usage: app_server [--http PORT] [--key-file PATH]   (--help for all)
 */
#include <stdio.h>
#include <string.h>

#include <mcpage.h>

#define COUNT    1000
#define VIEW_URI "ui://app-example/list.html"

/* The view: inline script and style only, so its csp declares no origin. */
static const char view_html[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>Items</title>\n"
    "<style>body{font:14px system-ui;margin:8px}li{padding:2px 0}</style></head><body>\n"
    "<p id=\"status\">Waiting for the host...</p><ol id=\"items\"></ol>\n"
    "<button id=\"back\" disabled>Previous</button> <button id=\"next\" disabled>Next</button>\n"
    "<script>\n"
    "let id = 0; const waiting = new Map(); const pages = []; let page = null;\n"
    "/* By id, not as window globals: window.status is a string of the window's own. */\n"
    "const [status, items, next, back] = ['status', 'items', 'next', 'back'].map(\n"
    "  (name) => document.getElementById(name));\n"
    "function send(method, params) {\n"
    "  return new Promise((ok, fail) => { waiting.set(++id, {ok, fail});\n"
    "    window.parent.postMessage({jsonrpc: '2.0', id, method, params}, '*'); });\n"
    "}\n"
    "window.addEventListener('message', (e) => {\n"
    "  const m = e.data; if (!m || m.jsonrpc !== '2.0') return;\n"
    "  if (m.id !== undefined && waiting.has(m.id)) { const w = waiting.get(m.id);\n"
    "    waiting.delete(m.id); m.error ? w.fail(m.error) : w.ok(m.result); }\n"
    "  else if (m.id !== undefined) window.parent.postMessage({jsonrpc: '2.0', id: m.id, result: "
    "{}}, '*');\n"
    "});\n"
    "/* One page of list_items: the envelope is the whole API. */\n"
    "async function load(args) {\n"
    "  const r = await send('tools/call', {name: 'list_items', arguments: args});\n"
    "  const s = r.structuredContent;\n"
    "  if (r.isError || !s) { status.textContent = (r.content[0] || {}).text || 'error'; return; "
    "}\n"
    "  page = {args, s}; items.replaceChildren();\n"
    "  items.start = s.offset + 1;\n"
    "  for (const it of s.items) { const li = document.createElement('li');\n"
    "    li.textContent = it.name; items.append(li); }\n"
    "  status.textContent = `${s.offset + 1}-${s.offset + s.returned} of ${s.total_items}`;\n"
    "  next.disabled = !s.has_more; back.disabled = pages.length === 0;\n"
    "}\n"
    "next.onclick = () => { pages.push(page.args); load({cursor: page.s.next_cursor}); };\n"
    "back.onclick = () => load(pages.pop());\n"
    "send('ui/initialize', {protocolVersion: '2026-01-26', appInfo: {name: 'items', version: "
    "'1'},\n"
    "  appCapabilities: {}}).then(() => {\n"
    "  window.parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/initialized'}, '*');\n"
    "  load({});\n"
    "});\n"
    "</script></body></html>\n";

static const mcpage_list_spec spec = {
    .tool = "list_items",
    .unit = "items",
    .default_limit = 25,
    .max_limit = 100,
};

static int read_view(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    return mcpage_contents_add_text(out, uri, MCPAGE_APP_MIME_TYPE, view_html,
                                    sizeof view_html - 1);
}

/* The app-only page: items 1..COUNT, resumed by keyset from the cursor. */
static int list_items(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args, (void)res;
    mcpage_list *pg = mcpage_call_list(call);
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    mcpage_list_set_total(pg, COUNT, MCPAGE_GENERATION_NONE);
    int64_t n = w->resume ? w->after[0].i + 1 : w->offset + 1;
    int rc = 0;
    for (; n <= COUNT && rc == 0; n++) {
        char name[32];
        (void)snprintf(name, sizeof name, "item %lld", (long long)n);
        mcpage_keypart pos = {.i = n};
        rc =
            mcpage_list_add(pg, json_pack("{s:I, s:s}", "n", (json_int_t)n, "name", name), &pos, 1);
    }
    return rc;
}

/* What the model sees: one line; the view shows the list. */
static int show_items(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call, (void)args;
    static const char text[] = "The list of 1000 items is shown in the view.";
    return mcpage_result_add_text(res, text, sizeof text - 1);
}

static int setup(mcpage_server *srv, int argc, char **argv, void *ud)
{
    (void)argc, (void)argv, (void)ud;
    mcpage_resource view = {.uri = VIEW_URI,
                            .name = "items-view",
                            .mime_type = MCPAGE_APP_MIME_TYPE,
                            .size = (int64_t)(sizeof view_html - 1),
                            .read = read_view,
                            .meta = "{\"ui\":{\"csp\":{}}}"};
    mcpage_tool show = {.name = "show_items",
                        .description = "Shows the 1000 items in an interactive view.",
                        .read_only = MCPAGE_HINT_TRUE,
                        .handler = show_items,
                        .meta = "{\"ui\":{\"resourceUri\":\"" VIEW_URI "\"}}"};
    mcpage_tool list = {.name = "list_items",
                        .description = "Lists the 1000 items; follow next_cursor. Called by the "
                                       "view only.",
                        .read_only = MCPAGE_HINT_TRUE,
                        .handler = list_items,
                        .meta = "{\"ui\":{\"resourceUri\":\"" VIEW_URI "\","
                                "\"visibility\":[\"app\"]}}"};
    int rc = mcpage_server_add_resource(srv, &view);
    if (rc == 0)
        rc = mcpage_server_add_tool(srv, &show);
    if (rc == 0)
        rc = mcpage_server_add_list_tool(srv, &list, &spec);
    return rc;
}

int main(int argc, char **argv)
{
    mcpage_program prog = {.name = "app-server", .version = "1.0.0", .setup = setup};
    return mcpage_main(&prog, argc, argv);
}
