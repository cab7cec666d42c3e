/*
 * export_session (not paged: it writes a file and says where): one
 * session exported as Markdown, HTML or its original JSON Lines into the
 * configured export folder (`mcpage serve --export-dir`, env
 * MCPAGE_EXPORT_DIR), answered with a resource_link, never with the text
 * itself: for hosts that spill large results to files, and for people who
 * want the file. The link points at the export's resource,
 * mcpage://export/{session_id}.{format} (export_resource.c), which reads
 * the same file back in pieces, so a host that cannot open files can
 * still read it; structuredContent gives the file's path too. The tool
 * and the resource are registered only when a folder is configured, so a
 * server without one writes nothing anywhere.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/export_session.h"

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session_id\"],"
    "\"properties\":{\"session_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The "
    "session, as list_sessions or search_conversations gives it.\"},"
    "\"format\":{\"type\":\"string\",\"enum\":[\"md\",\"html\",\"jsonl\"],\"default\":\"md\","
    "\"description\":\"md: Markdown, tool calls and results folded in <details> (default); "
    "html: one self-contained HTML file; jsonl: the original JSON Lines as the agent wrote "
    "them.\"}}}";

static const char output_schema[] =
    "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"session_id\",\"format\",\"path\",\"uri\","
    "\"size\",\"lines\"]},{\"required\":[\"error\"]}],\"properties\":{\"error\":{\"type\":"
    "\"object\"},\"session_id\":{\"type\":\"string\"},\"format\":{\"type\":\"string\"},"
    "\"path\":{\"type\":\"string\"},\"uri\":{\"type\":\"string\"},\"mime_type\":{\"type\":"
    "\"string\"},\"size\":{\"type\":\"integer\"},\"lines\":{\"type\":\"integer\"},"
    "\"messages\":{\"type\":\"integer\"}}}";

/* Creates dir and its parents (mode 0700: transcripts are private). */
static int make_dirs(const char *dir)
{
    char p[TOOLS_PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return MCPAGE_ERANGE;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return MCPAGE_EIO;
        *s = '/';
    }
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
        return MCPAGE_EIO;
    return 0;
}

int export_target(const tools_ctx *ctx, const char *session_id, export_format fmt, char *path,
                  size_t cap, char *err, size_t errcap)
{
    char dir[PATH_MAX], name[EXPORT_NAME_MAX];
    if (make_dirs(ctx->export_dir) < 0 || realpath(ctx->export_dir, dir) == NULL) {
        (void)snprintf(err, errcap, "the export folder %s cannot be created: %s", ctx->export_dir,
                       strerror(errno));
        return MCPAGE_EIO;
    }
    export_file_name(session_id, fmt, name, sizeof name);
    if (snprintf(path, cap, "%s/%s", dir, name) >= (int)cap) {
        (void)snprintf(err, errcap, "the export folder's path is too long");
        return MCPAGE_ERANGE;
    }
    return 0;
}

/* The result: a sentence, the facts, and the link to the file. */
static int answer(mcpage_result *res, const char *id, export_format fmt, const char *path,
                  const export_stats *st)
{
    char uri[TOOLS_PATH_MAX * 3 + 16], text[TOOLS_PATH_MAX * 4 + 600], desc[600];
    export_resource_uri(id, fmt, uri, sizeof uri);
    const char *ext = export_format_ext(fmt);
    (void)snprintf(text, sizeof text,
                   "Exported session %s as %s to %s (%lld bytes, %lld lines). Open the file with "
                   "your file tools, or read the resource %s: in pieces, each naming the next. "
                   "read_session(session_id=\"%s\") pages the same transcript.",
                   id, ext, path, (long long)st->bytes, (long long)st->lines, uri, id);
    (void)snprintf(desc, sizeof desc,
                   "Session %s exported as %s: %lld bytes, %lld lines, %lld messages.", id, ext,
                   (long long)st->bytes, (long long)st->lines, (long long)st->messages);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "session_id", id, "format",
                          ext, "path", path, "uri", uri, "mime_type", export_format_mime(fmt),
                          "size", (json_int_t)st->bytes, "lines", (json_int_t)st->lines, "messages",
                          (json_int_t)st->messages);
    int rc = o ? mcpage_result_add_text(res, text, strlen(text)) : MCPAGE_ENOMEM;
    if (rc == 0)
        rc = mcpage_result_set_structured(res, o);
    json_decref(o);
    const char *name = strrchr(path, '/');
    mcpage_resource_link link = {
        .uri = uri,
        .name = name ? name + 1 : path,
        .description = desc,
        .mime_type = export_format_mime(fmt),
        .size = st->bytes,
    };
    if (rc == 0)
        rc = mcpage_result_add_resource_link(res, &link);
    return rc;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    const char *id = tools_arg_str(args, "session_id");
    export_format fmt = EXPORT_MD;
    const char *f = tools_arg_str(args, "format");
    if (f && export_format_parse(f, &fmt) != 0) /* the schema's enum catches it first */
        return mcpage_reject_argument(res, "export_session", "format",
                                      json_object_get(args, "format"), "md, html or jsonl",
                                      "format=\"md\"");
    char path[TOOLS_PATH_MAX], err[600];
    if (export_target(ctx, id, fmt, path, sizeof path, err, sizeof err) < 0)
        return mcpage_result_errorf(res, "Exporting session %s failed: %s.", id, err);
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL)
        return 0;
    store_session ses;
    if (tools_session_find(s, "export_session", args, &ses, res) < 0) {
        tools_store_put(ctx, s);
        return 0;
    }
    store_session_clear(&ses);
    export_stats st;
    int rc = export_session_file(s, id, fmt, path, EXPORT_REPLACE, &st, err, sizeof err);
    tools_store_put(ctx, s);
    if (rc < 0)
        return mcpage_result_errorf(res, "Exporting session %s failed: %s.", id, err);
    return answer(res, id, fmt, path, &st);
}

int tools_export_session_register(mcpage_server *srv, tools_ctx *ctx)
{
    if (ctx->export_dir == NULL || ctx->export_dir[0] == '\0')
        return 0; /* no folder configured: no tool that writes */
    int rc = export_resource_register(srv, ctx);
    if (rc < 0)
        return rc;
    mcpage_tool t = {
        .name = "export_session",
        .title = "Export a session to a file",
        .description =
            "Writes one archived session to a file in the server's export folder and returns "
            "a resource_link to it (size in bytes, line count, format; the file's path in "
            "structuredContent), never the text: format md (Markdown, tool calls and results "
            "folded, default), html (one self-contained file) or jsonl (the original JSON "
            "Lines). The link's resource, mcpage://export/ID.FORMAT, reads the file in pieces, "
            "each naming the next. Use it to hand a whole transcript to a person or to your "
            "file tools; to read it yourself, page it with read_session. Writing the same "
            "session and format again replaces the file.",
        .input_schema = schema,
        .output_schema = output_schema,
        .read_only = MCPAGE_HINT_FALSE,
        .destructive = MCPAGE_HINT_FALSE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
    };
    return mcpage_server_add_tool(srv, &t);
}
