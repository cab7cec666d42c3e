/*
 * Session resources: every session is mcpage://sessions/{session_id}
 * (text/markdown: the read_session rendering), listed page by page
 * through a resource provider with keyset positions (oldest first, so
 * sessions added during a walk show up at its end), plus a resource
 * template of the same form for direct reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"
#include "tools/transcript.h"

#define SESSION_TEMPLATE "mcpage://sessions/{session_id}"
/* Separates started_at and session_id in a provider key. */
#define KEY_SEP '\x1f'

static int read_session_doc(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    tools_ctx *ctx = mcpage_call_data(call);
    json_t *vars = NULL;
    if (mcpage_uri_template_match(SESSION_TEMPLATE, uri, &vars) != 0)
        return MCPAGE_ENOTFOUND;
    const char *id = json_string_value(json_object_get(vars, "session_id"));
    mcpage_result *tmp = mcpage_result_new();
    store *s = tmp ? tools_store_get(ctx, call, tmp) : NULL;
    mcpage_result_free(tmp);
    int rc = MCPAGE_ESTORE;
    if (s == NULL || id == NULL) {
        json_decref(vars);
        return id == NULL ? MCPAGE_ENOTFOUND : rc;
    }
    store_session ses;
    rc = store_session_get(s, id, &ses);
    if (rc == 0) {
        char *doc = NULL;
        size_t len = 0;
        rc = transcript_render(s, &ses, &doc, &len);
        if (rc == 0)
            rc = mcpage_contents_add_text(out, uri, "text/markdown", doc, len);
        mcpage_free(doc);
        store_session_clear(&ses);
    }
    tools_store_put(ctx, s);
    json_decref(vars);
    return rc;
}

static int list_sessions_page(void *ud, const char *after, size_t after_len, size_t limit,
                              mcpage_resource_page *page)
{
    tools_ctx *ctx = ud;
    /* resources/list names no caller: where tokens see only their own
       sessions (OAuth), it lists none (read them through the tools) */
    if (ctx->owners_apply)
        return 0;
    mcpage_result *tmp = mcpage_result_new();
    store *s = tmp ? tools_store_get(ctx, NULL, tmp) : NULL;
    mcpage_result_free(tmp);
    if (s == NULL)
        return MCPAGE_ESTORE;
    store_key key;
    memset(&key, 0, sizeof key);
    if (after && after_len) {
        const char *sep = memchr(after, KEY_SEP, after_len);
        size_t a = sep ? (size_t)(sep - after) : 0;
        size_t b = sep ? after_len - a - 1 : 0;
        if (!sep || a > STORE_KEY_TEXT_MAX || b > STORE_KEY_TEXT_MAX) {
            tools_store_put(ctx, s);
            return MCPAGE_EPARSE;
        }
        key.nparts = 2;
        key.part[0].type = key.part[1].type = STORE_KEY_TEXT;
        memcpy(key.part[0].s, after, a);
        memcpy(key.part[1].s, sep + 1, b);
    }
    store_session_filter f = {.order = STORE_OLDEST};
    store_page pg = {.after = key.nparts ? &key : NULL,
                     .limit = limit > STORE_LIMIT_MAX ? STORE_LIMIT_MAX : (int64_t)limit};
    store_sessions rows = {0};
    int rc = store_sessions_list(s, &f, &pg, &rows);
    for (size_t i = 0; rc == 0 && i < rows.count; i++) {
        const store_session *r = &rows.rows[i];
        char uri[700], k[2 * STORE_KEY_TEXT_MAX + 2], desc[300];
        tools_session_uri(r->session_id, uri, sizeof uri);
        snprintf(k, sizeof k, "%s%c%s", r->key.part[0].s, KEY_SEP, r->key.part[1].s);
        snprintf(desc, sizeof desc, "%s session, project %s, %lld messages, started %s",
                 r->source ? r->source : "?", r->project ? r->project : "-",
                 (long long)r->message_count, r->started_at ? r->started_at : "-");
        mcpage_resource res = {
            .uri = uri,
            .name = r->session_id,
            .title = r->title,
            .description = desc,
            .mime_type = "text/markdown",
            .size = -1,
        };
        rc = mcpage_resource_page_add(page, &res, k);
    }
    store_sessions_free(&rows);
    tools_store_put(ctx, s);
    return rc;
}

int tools_resources_register(mcpage_server *srv, tools_ctx *ctx)
{
    mcpage_resource_provider p = {
        .list = list_sessions_page,
        .read = read_session_doc,
        .user_data = ctx,
    };
    int rc = mcpage_server_add_resource_provider(srv, &p);
    if (rc < 0)
        return rc;
    mcpage_resource_template t = {
        .uri_template = SESSION_TEMPLATE,
        .name = "session",
        .title = "Session transcript",
        .description = "The transcript of one archived session as markdown (the read_session "
                       "rendering, whole). For long sessions prefer read_session, which pages.",
        .mime_type = "text/markdown",
        .read = read_session_doc,
        .user_data = ctx,
    };
    return mcpage_server_add_resource_template(srv, &t);
}
