/*
 * MCP Apps (SEP-1865, extension io.modelcontextprotocol/ui) as `mcpage
 * check` sees them: the ui:// resources a server lists and the tools that
 * name one in _meta.ui.resourceUri. Each view is read once with
 * resources/read: its MIME type must be text/html;profile=mcp-app, its
 * _meta.ui.csp is read for the origins the host is asked to open to the
 * view (reported, since a view that declares none loads nothing from
 * outside), and a resourceUri that does not resolve is an error. Tools
 * whose visibility leaves out "model" are reported as app-only. What was
 * found also goes into the report's "apps" object (docs/check.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>
#include <mcpage/server.h>

#include "check/check_internal.h"

#define APP_MIME   MCPAGE_APP_MIME_TYPE
#define APP_EXT    MCPAGE_APP_EXTENSION
#define APP_SCHEME "ui://"
/* Views read at most (a server could name thousands of uris). */
#define APPS_READS_MAX 64
/* Origins kept per view in the report. */
#define APPS_ORIGINS_MAX 32

/* The four lists of origins a view's csp may ask the host to allow. */
static const char *const csp_lists[] = {"connectDomains", "resourceDomains", "frameDomains",
                                        "baseUriDomains"};

static bool is_app_uri(const char *uri)
{
    return uri && strncmp(uri, APP_SCHEME, strlen(APP_SCHEME)) == 0;
}

/* The uri a tool shows its view in, or NULL; *legacy when it is the flat key of early drafts. */
static const char *tool_view(const json_t *tool, bool *legacy)
{
    const json_t *meta = json_object_get(tool, "_meta");
    const char *uri =
        json_string_value(json_object_get(json_object_get(meta, "ui"), "resourceUri"));
    *legacy = false;
    if (uri == NULL) {
        uri = json_string_value(json_object_get(meta, "ui/resourceUri"));
        *legacy = uri != NULL;
    }
    return uri;
}

static bool has_string(const json_t *arr, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

/*
 * The origins csp opens the view to, as "list: origin" strings into
 * `origins`; a csp member of the wrong shape is a warning.
 */
static void csp_origins(check_ctx *c, const json_t *csp, json_t *origins)
{
    if (csp == NULL)
        return;
    if (!json_is_object(csp)) {
        check__find(c, CHECK_WARNING, c->last_request,
                    "declare _meta.ui.csp as an object of origin lists ({} for none)",
                    "_meta.ui.csp is not an object (a host may refuse the view)");
        return;
    }
    for (size_t k = 0; k < sizeof csp_lists / sizeof csp_lists[0]; k++) {
        const json_t *list = json_object_get(csp, csp_lists[k]);
        size_t i;
        const json_t *o;
        if (list && !json_is_array(list))
            check__find(c, CHECK_WARNING, c->last_request,
                        "give each csp member as an array of origins",
                        "_meta.ui.csp.%s is not an array of origins", csp_lists[k]);
        json_array_foreach(list, i, o)
        {
            if (!json_is_string(o))
                continue;
            if (json_array_size(origins) < APPS_ORIGINS_MAX) {
                char line[300];
                snprintf(line, sizeof line, "%s: %.250s", csp_lists[k], json_string_value(o));
                json_array_append_new(origins, json_string(line));
            }
        }
    }
}

/* The text or blob item of a resources/read result whose uri is `uri` (else the first). */
static const json_t *read_item(const json_t *res, const char *uri)
{
    const json_t *contents = json_object_get(res, "contents");
    size_t i;
    const json_t *it;
    json_array_foreach(contents, i, it)
    {
        const char *u = json_string_value(json_object_get(it, "uri"));
        if (u && strcmp(u, uri) == 0)
            return it;
    }
    return json_array_get(contents, 0);
}

/*
 * Reads one view and checks it; its entry (uri, mimeType, bytes, csp,
 * external_origins, resolves, error) is added to `views`. `listed` is
 * its resources/list item or NULL. Findings go to c->scope.
 */
static json_t *check_view(check_ctx *c, const char *uri, const json_t *listed)
{
    json_t *v = json_pack("{s:s, s:b, s:[]}", "uri", uri, "resolves", false, "external_origins");
    const char *listed_mime = json_string_value(json_object_get(listed, "mimeType"));
    if (listed && (listed_mime == NULL || strcmp(listed_mime, APP_MIME) != 0))
        check__find(c, CHECK_ERROR, NULL, "list the view with mimeType " APP_MIME,
                    "%s is listed with mimeType %s, not " APP_MIME " (hosts do not render it)", uri,
                    listed_mime ? listed_mime : "(none)");
    json_t *r = check__request(c, "resources/read", json_pack("{s:s}", "uri", uri));
    const json_t *res = json_object_get(r, "result");
    if (res == NULL) {
        const char *why =
            json_string_value(json_object_get(json_object_get(r, "error"), "message"));
        if (!c->dead)
            check__find(c, CHECK_ERROR, c->last_request,
                        "serve every ui:// uri a tool names with resources/read (or fix the uri "
                        "in _meta.ui.resourceUri)",
                        "%s does not resolve: resources/read answered %.200s", uri,
                        why ? why : "no result");
        json_object_set_new(v, "error", json_string(why ? why : "no result"));
        json_decref(r);
        return v;
    }
    const json_t *item = read_item(res, uri);
    const char *mime = json_string_value(json_object_get(item, "mimeType"));
    const char *text = json_string_value(json_object_get(item, "text"));
    const char *blob = json_string_value(json_object_get(item, "blob"));
    json_object_set_new(v, "resolves", json_boolean(item != NULL));
    json_object_set_new(v, "mimeType", mime ? json_string(mime) : json_null());
    json_object_set_new(v, "bytes",
                        json_integer(text   ? (json_int_t)strlen(text)
                                     : blob ? (json_int_t)strlen(blob) / 4 * 3
                                            : 0));
    if (item == NULL)
        check__find(c, CHECK_ERROR, c->last_request,
                    "answer resources/read of a view with one contents item holding its HTML",
                    "resources/read of %s returned no contents", uri);
    else if (mime == NULL || strcmp(mime, APP_MIME) != 0)
        check__find(c, CHECK_ERROR, c->last_request,
                    "serve the view with mimeType " APP_MIME " (SEP-1865)",
                    "%s is read with mimeType %s, not " APP_MIME " (hosts do not render it)", uri,
                    mime ? mime : "(none)");
    else if ((text == NULL || text[0] == '\0') && (blob == NULL || blob[0] == '\0'))
        check__find(c, CHECK_ERROR, c->last_request,
                    "put the view's HTML in the item's text (or blob)",
                    "resources/read of %s has no text or blob", uri);
    /* The policy is read from the read item (the spec); the listed one is the fallback. */
    const json_t *ui = json_object_get(json_object_get(item, "_meta"), "ui");
    if (ui == NULL)
        ui = json_object_get(json_object_get(listed, "_meta"), "ui");
    const json_t *csp = json_object_get(ui, "csp");
    json_object_set(v, "csp", csp ? (json_t *)csp : json_null());
    json_t *origins = json_object_get(v, "external_origins");
    csp_origins(c, csp, origins);
    if (json_array_size(origins) > 0) {
        char *list = json_dumps(origins, JSON_COMPACT);
        check__find(c, CHECK_INFO, c->last_request,
                    "none if the view needs them; a view that ships its code inline needs no "
                    "origin (csp {})",
                    "%s asks the host to open it to external origins: %.400s", uri,
                    list ? list : "?");
        free(list);
    }
    json_decref(r);
    return v;
}

/* The view entry for uri in views, checked (and read) on first use. */
static json_t *view_for(check_ctx *c, json_t *views, const char *uri, const json_t *listed)
{
    size_t i;
    json_t *v;
    json_array_foreach(views, i, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "uri")), uri) == 0)
            return v;
    }
    if (json_array_size(views) >= APPS_READS_MAX || c->dead)
        return NULL;
    v = check_view(c, uri, listed);
    json_array_append_new(views, v);
    return v;
}

static const json_t *listed_item(const json_t *resources, const char *uri)
{
    size_t i;
    const json_t *r;
    json_array_foreach(resources, i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uri"));
        if (u && strcmp(u, uri) == 0)
            return r;
    }
    return NULL;
}

/* One tool's view reference and visibility: its entry for the report's apps.tools. */
static json_t *check_tool(check_ctx *c, const json_t *tool, const json_t *resources, json_t *views)
{
    const char *name = json_string_value(json_object_get(tool, "name"));
    bool legacy;
    const char *uri = tool_view(tool, &legacy);
    const json_t *vis =
        json_object_get(json_object_get(json_object_get(tool, "_meta"), "ui"), "visibility");
    if (uri == NULL && vis == NULL)
        return NULL;
    c->scope = name;
    bool model = !json_is_array(vis) || has_string(vis, "model");
    bool app = !json_is_array(vis) || has_string(vis, "app");
    json_t *t = json_pack("{s:s, s:s?, s:b, s:O?}", "name", name, "resourceUri", uri, "app_only",
                          !model, "visibility", vis);
    if (vis && !json_is_array(vis))
        check__find(c, CHECK_WARNING, NULL,
                    "give _meta.ui.visibility as an array of \"model\" and \"app\"",
                    "_meta.ui.visibility is not an array (hosts read it as both)");
    if (json_is_array(vis) && !model && !app)
        check__find(c, CHECK_WARNING, NULL,
                    "list \"model\", \"app\" or both in _meta.ui.visibility",
                    "_meta.ui.visibility names neither \"model\" nor \"app\": no one may call it");
    if (!model)
        check__find(c, CHECK_INFO, NULL,
                    "none: results only the app reads stay out of the model's context",
                    "app-only (_meta.ui.visibility has no \"model\"): hosts that render apps "
                    "hide it from the model; hosts that do not list it as a plain tool");
    if (legacy)
        check__find(c, CHECK_WARNING, NULL, "write _meta.ui.resourceUri (SEP-1865)",
                    "the view is named by _meta[\"ui/resourceUri\"], the key of an early draft");
    if (uri == NULL)
        return t;
    if (!is_app_uri(uri)) {
        check__find(c, CHECK_ERROR, NULL, "name a ui:// resource in _meta.ui.resourceUri",
                    "_meta.ui.resourceUri %.200s is not a ui:// uri (hosts do not render it)", uri);
        json_object_set_new(t, "resolves", json_false());
    } else {
        const json_t *v = view_for(c, views, uri, listed_item(resources, uri));
        json_object_set_new(t, "resolves",
                            json_boolean(json_is_true(json_object_get(v, "resolves"))));
    }
    return t;
}

void check__apps(check_ctx *c, const json_t *caps, const json_t *tools, const json_t *resources)
{
    bool ext = json_object_get(json_object_get(caps, "extensions"), APP_EXT) != NULL;
    json_t *views = json_array(), *entries = json_array();
    size_t i;
    const json_t *it;
    /* Tools first: a view's findings then sit under the tool that names it. */
    json_array_foreach(tools, i, it)
    {
        json_t *t = check_tool(c, it, resources, views);
        if (t)
            json_array_append_new(entries, t);
    }
    /* Listed views no tool names are read too. */
    json_array_foreach(resources, i, it)
    {
        const char *uri = json_string_value(json_object_get(it, "uri"));
        const char *mime = json_string_value(json_object_get(it, "mimeType"));
        if (!is_app_uri(uri) && !(mime && strcmp(mime, APP_MIME) == 0))
            continue;
        c->scope = uri ? uri : "resources/list";
        (void)view_for(c, views, uri ? uri : "", it);
    }
    if (json_array_size(views) == 0 && json_array_size(entries) == 0 && !ext) {
        json_decref(views);
        json_decref(entries);
        return; /* no app: nothing to say */
    }
    c->scope = "apps";
    /* A note, not a warning: hosts go by the tools' _meta, and ext-apps' own servers do not declare
     * it. */
    if (!ext && json_array_size(views) > 0)
        check__find(c, CHECK_INFO, NULL,
                    "declare \"" APP_EXT "\": {} under capabilities.extensions",
                    "the server has views but does not declare the " APP_EXT
                    " extension in its capabilities");
    if (ext && json_array_size(views) == 0)
        check__find(c, CHECK_WARNING, NULL,
                    "list the view in resources/list and name it in a tool's "
                    "_meta.ui.resourceUri, or drop the extension",
                    "the server declares the " APP_EXT " extension but has no ui:// resource");
    json_decref(c->rep->apps);
    c->rep->apps = json_pack("{s:b, s:o, s:o}", "extension", ext, "views", views, "tools", entries);
}
