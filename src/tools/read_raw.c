/*
 * read_raw (CONTENT-byte, unit bytes): the original source bytes of a
 * session as the agent wrote them (JSON Lines), windowed by offset and
 * max_bytes. The builder never cuts UTF-8 text inside a character and
 * sends base64 where the bytes are not text.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

static const mcpage_bytes_spec spec = {
    .tool = "read_raw",
    .default_max_bytes = 8192,
    .max_max_bytes = 65536,
    .narrow_hint = NULL,
};

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session_id\"],"
    "\"properties\":{"
    "\"session_id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The session, as "
    "list_sessions gives it.\"}}}";

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    const char *id = tools_arg_str(args, "session_id");
    mcpage_bytes *pg;
    int rc = mcpage_bytes_begin(mcpage_call_pager(call), &spec, args, &pg);
    if (rc < 0)
        return rc;
    if (rc == MCPAGE_PAGE_REJECTED)
        return mcpage_bytes_finish(pg, res);
    store *s = tools_store_get(ctx, call, res);
    if (s == NULL) {
        mcpage_bytes_abort(pg);
        return 0;
    }
    store_session ses;
    if (tools_session_find(s, spec.tool, args, &ses, res) < 0) {
        mcpage_bytes_abort(pg);
        tools_store_put(ctx, s);
        return 0;
    }
    const mcpage_bytes_window *w = mcpage_bytes_window_get(pg);
    unsigned char *buf = NULL;
    size_t n = 0;
    int64_t total = 0;
    rc = store_raw_read(s, id, w->offset, w->max_bytes, &buf, &n, &total);
    if (rc < 0) {
        mcpage_bytes_abort(pg);
        tools_store_error(res, s, rc, "the raw bytes");
        tools_store_put(ctx, s);
        store_session_clear(&ses);
        return 0;
    }
    tools_store_put(ctx, s);
    rc = mcpage_bytes_set(pg, buf, n, total);
    free(buf);
    if (rc < 0) {
        mcpage_bytes_abort(pg);
        store_session_clear(&ses);
        return rc;
    }
    rc = mcpage_bytes_finish(pg, res);
    if (rc == 0 && !mcpage_result_is_error(res))
        rc = tools_session_link(res, &ses);
    store_session_clear(&ses);
    return rc;
}

/*
 * Registered with tools_add_windowed(), not mcpage_server_add_bytes_tool(): it
 * adds the session's resource link after the page, which a page the
 * runtime finishes cannot carry. The window's schema still comes from
 * the spec.
 */
int tools_read_raw_register(mcpage_server *srv, tools_ctx *ctx)
{
    const mcpage_pager *p = mcpage_server_pager(srv);
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[1400];
    (void)snprintf(
        desc, sizeof desc,
        "Reads the original transcript bytes of one archived session (the JSON Lines file "
        "the agent wrote, kept whole in the archive; for a session an agent kept as one JSON "
        "document rewritten at each save, older Gemini CLI and Codex CLI ones, the JSON "
        "Lines that document stands for: its facts, then one message per line; for OpenCode, "
        "whose sessions live in a SQLite database, a faithful JSON Lines rendering of the "
        "session's message and part rows, one row per line with every column; for Cursor's "
        "agent CLI, a database of blobs per chat, its facts then each message blob's JSON in "
        "the chat's order, one per line) by byte offset: offset (default 0) and max_bytes "
        "(default %s, up to %s) within %s. UTF-8 text comes as text, never cut inside a "
        "character; other bytes as base64 (encoding says which). total_bytes is exact; "
        "continue with next_offset. Use it to check what read_session shows against the source.",
        page_fmt_int(spec.default_max_bytes, d), page_fmt_int(spec.max_max_bytes, m),
        tools_budget_words(p, budget, sizeof budget));
    mcpage_tool t = {
        .name = "read_raw",
        .title = "Read a session's original bytes",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_BYTES_OUTPUT,
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
    };
    return tools_add_windowed(srv, &t, mcpage_bytes_schema(p, &spec));
}
