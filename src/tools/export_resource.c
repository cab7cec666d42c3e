/*
 * The paged resource form of an export (docs/export.md): the file that
 * export_session writes is also the resource
 * mcpage://export/{session_id}.{format}, for hosts that read resources
 * but not files. resources/read has no range, so a large export comes in
 * pieces. One read returns one piece, cut by the byte builder under the
 * server's token budget (UTF-8 text cut at a character boundary, or
 * base64 when the bytes are not text), then the page's envelope as a
 * second contents item (application/json) whose hint names the next
 * piece's URI: the same URI with ?cursor=, a cursor signed like every
 * other, carrying the next offset and the identity of the file it was
 * cut from, so a piece of a file written again since is refused rather
 * than spliced in. The pieces' bytes, joined in order, are the file.
 *
 * A first read (no cursor) writes the export afresh, as export_session
 * would, so it shows the store's current state; the pieces after it are
 * read from that file (their cursors name it). An id the store does not
 * hold is "Resource not found", whatever file is in the folder. The URI
 * is percent-decoded once, by the template matcher, and must be the
 * canonical spelling of what it decodes to.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/export_session.h"
#include "tools/text_out.h"

/* The walk a piece's cursor is issued for (a cursor names its walk). */
#define EXPORT_CURSOR_WALK "mcpage://export"
/* Bytes read from the file for one piece: more than the largest budget shows. */
#define EXPORT_PIECE_READ ((int64_t)256 << 10)
/* Longest session id in an export URI. */
#define EXPORT_ID_MAX 1024
/* Longest export URI, with its cursor. */
#define EXPORT_URI_MAX (3 * EXPORT_ID_MAX + MCPAGE_CURSOR_MAX_LEN + 64)
/* JSON-RPC Invalid Params: a piece's URI that cannot be read (bad cursor, file rewritten). */
#define EXPORT_RPC_INVALID_PARAMS (-32602)
/* JSON-RPC Internal Error: the export could not be written or read. */
#define EXPORT_RPC_INTERNAL (-32603)

/* How a piece is cut: the byte family's builder, its window no larger than one read. */
static const mcpage_bytes_spec piece_spec = {
    .tool = "resources/read",
    .default_max_bytes = EXPORT_PIECE_READ,
    .max_max_bytes = EXPORT_PIECE_READ,
};

/* An export URI, parsed. */
typedef struct export_ref {
    char id[EXPORT_ID_MAX + 1]; /* the session id, decoded */
    export_format fmt;          /* from the extension */
    char base[EXPORT_URI_MAX];  /* the URI without its cursor (the first piece's) */
    const char *cursor;         /* the cursor after "?cursor=" (in the URI), or NULL */
} export_ref;

/*
 * One piece, as the builder cut it: the builder's page is the envelope
 * (encoding, returned, total_bytes, has_more, offset, stopped_by,
 * next_offset), without its copy of the bytes, which go in the first item.
 */
typedef struct export_piece {
    json_t *env;      /* the builder's page, its "text"/"data" and "hint" removed */
    int64_t offset;   /* its first byte in the file */
    int64_t returned; /* its length */
    int64_t total;    /* the file's size */
    bool text;        /* UTF-8 text, else base64 */
} export_piece;

void export_resource_uri(const char *session_id, export_format fmt, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "%s", EXPORT_URI_PREFIX);
    if (o < cap)
        o += text_percent_encode(buf + o, cap - o, session_id, "");
    if (o < cap)
        (void)snprintf(buf + o, cap - o, ".%s", export_format_ext(fmt));
}

/*
 * Parses mcpage://export/<id>.<ext>[?cursor=C]. Only the canonical
 * spelling (as export_resource_uri writes it) is an export: one URI per
 * export.
 */
static bool export_ref_parse(const char *uri, export_ref *r)
{
    const size_t plen = strlen(EXPORT_URI_PREFIX);
    if (strncmp(uri, EXPORT_URI_PREFIX, plen) != 0)
        return false;
    const char *q = strchr(uri, '?');
    size_t blen = q ? (size_t)(q - uri) : strlen(uri);
    r->cursor = NULL;
    if (q) {
        if (strncmp(q, "?cursor=", 8) != 0 || q[8] == '\0')
            return false;
        r->cursor = q + 8;
    }
    char name[EXPORT_URI_MAX];
    if (blen >= sizeof name || blen <= plen)
        return false;
    memcpy(name, uri + plen, blen - plen);
    name[blen - plen] = '\0';
    char *dot = strrchr(name, '.');
    if (dot == NULL || dot == name || export_format_parse(dot + 1, &r->fmt) != 0)
        return false;
    *dot = '\0';
    json_t *vars = NULL; /* percent-decoded by the library's template matcher */
    if (mcpage_uri_template_match("{session_id}", name, &vars) != 0)
        return false;
    const char *id = json_string_value(json_object_get(vars, "session_id"));
    bool ok = id && strlen(id) <= EXPORT_ID_MAX;
    if (ok)
        memcpy(r->id, id, strlen(id) + 1);
    json_decref(vars);
    if (!ok)
        return false;
    export_resource_uri(r->id, r->fmt, r->base, sizeof r->base);
    return strlen(r->base) == blen && strncmp(r->base, uri, blen) == 0;
}

/* Ends the read with a JSON-RPC error whose message says what to do (0: answered). */
__attribute__((format(printf, 3, 4))) static int read_fail(mcpage_call *call, int code,
                                                           const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rc = mcpage_call_fail(call, code, msg);
    return rc < 0 ? rc : 0;
}

/*
 * A first read writes the export afresh, so it shows the store as it is
 * now (a sync may have added messages since the file was written); a
 * later piece checks that the session still exists. MCPAGE_ENOTFOUND
 * for a session the store does not hold, whatever file is there.
 */
static int export_fresh(tools_ctx *ctx, const mcpage_call *call, const export_ref *r,
                        const char *path, char *err, size_t errcap)
{
    mcpage_result *tmp = mcpage_result_new();
    store *s = tmp ? tools_store_get(ctx, call, tmp) : NULL;
    mcpage_result_free(tmp);
    if (s == NULL) {
        (void)snprintf(err, errcap, "the archive cannot be opened");
        return MCPAGE_ESTORE;
    }
    int rc;
    if (r->cursor == NULL) {
        export_stats st;
        rc = export_session_file(s, r->id, r->fmt, path, EXPORT_REPLACE, &st, err, errcap);
    } else {
        store_session ses;
        rc = store_session_get(s, r->id, &ses);
        if (rc == 0)
            store_session_clear(&ses);
        else if (rc != MCPAGE_ENOTFOUND)
            (void)snprintf(err, errcap, "%s", store_errmsg(s));
    }
    tools_store_put(ctx, s);
    return rc;
}

/* The identity of the file a cursor was cut from: a file written again has another. */
static int64_t file_generation(const struct stat *st)
{
    const uint64_t parts[] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                              (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec};
    uint64_t h = 14695981039346656037ULL; /* FNV-1a over the parts' bytes */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((parts[i] >> (8 * b)) & 0xff)) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

/* What the cursor is bound to: the session and the format. */
static void export_fingerprint(const export_ref *r, uint8_t fp[MCPAGE_FINGERPRINT_LEN])
{
    json_t *args =
        json_pack("{s:s, s:s}", "session_id", r->id, "format", export_format_ext(r->fmt));
    mcpage_args_fingerprint(args, NULL, fp);
    json_decref(args);
}

/*
 * Cuts the piece at `offset` from `data` (the file's bytes from there,
 * `n` of them) with the byte builder, under the pager's default budget.
 */
static int cut_piece(const mcpage_pager *pager, int64_t offset, const char *data, size_t n,
                     int64_t total, export_piece *pc)
{
    json_t *args = json_pack("{s:I}", "offset", (json_int_t)offset);
    mcpage_bytes *pg = NULL;
    int rc = args ? mcpage_bytes_begin(pager, &piece_spec, args, &pg) : MCPAGE_ENOMEM;
    json_decref(args);
    if (rc == MCPAGE_PAGE_REJECTED)
        rc = MCPAGE_EINVAL; /* the offset came from our own cursor */
    if (rc == 0)
        rc = mcpage_bytes_set(pg, data, n, total);
    if (rc != 0) {
        mcpage_bytes_abort(pg);
        return rc;
    }
    mcpage_result *res = mcpage_result_new();
    rc = res ? mcpage_bytes_finish(pg, res) : MCPAGE_ENOMEM;
    if (res == NULL)
        mcpage_bytes_abort(pg);
    size_t len = 0;
    const char *sc = rc == 0 ? mcpage_result_structured(res, &len) : NULL;
    json_t *page = sc ? json_loadb(sc, len, 0, NULL) : NULL;
    if (rc == 0 && page == NULL)
        rc = MCPAGE_ENOMEM;
    if (rc == 0) {
        pc->offset = offset;
        pc->total = total;
        pc->returned = json_integer_value(json_object_get(page, "returned"));
        const char *enc = json_string_value(json_object_get(page, "encoding"));
        pc->text = enc && strcmp(enc, "utf-8") == 0;
        (void)json_object_del(page, pc->text ? "text" : "data");
        (void)json_object_del(page, "hint"); /* it names an offset; ours names the next URI */
        pc->env = page;
        page = NULL;
    }
    json_decref(page);
    mcpage_result_free(res);
    return rc;
}

/*
 * The envelope of a piece, as the second contents item: the builder's page
 * plus what only the resource knows (the export, and the next piece's URI).
 */
static int add_envelope(mcpage_contents *out, const char *uri, const export_ref *r,
                        const export_piece *pc, const char *next_cursor)
{
    bool more = pc->offset + pc->returned < pc->total;
    json_t *env = pc->env;
    json_object_set_new(env, "session_id", json_string(r->id));
    json_object_set_new(env, "format", json_string(export_format_ext(r->fmt)));
    if (more) {
        char next[EXPORT_URI_MAX + 16], hint[2 * EXPORT_URI_MAX];
        (void)snprintf(next, sizeof next, "%s?cursor=%s", r->base, next_cursor);
        (void)snprintf(hint, sizeof hint,
                       "Bytes %lld-%lld of %lld. Next piece: resources/read with uri=\"%s\". The "
                       "pieces joined in order (base64 ones decoded) are the file, byte for byte.",
                       (long long)pc->offset, (long long)(pc->offset + pc->returned - 1),
                       (long long)pc->total, next);
        json_object_set_new(env, "next_cursor", json_string(next_cursor));
        json_object_set_new(env, "next_uri", json_string(next));
        json_object_set_new(env, "hint", json_string(hint));
    }
    char *text = json_dumps(env, JSON_COMPACT);
    char page_uri[EXPORT_URI_MAX + 8];
    (void)snprintf(page_uri, sizeof page_uri, "%s#page", uri);
    int rc = text ? mcpage_contents_add_text(out, page_uri, "application/json", text, strlen(text))
                  : MCPAGE_ENOMEM;
    free(text);
    return rc;
}

/* Reads the piece of the open export `fd` that the URI names, into `out`. */
static int read_piece(mcpage_call *call, int fd, const char *uri, const export_ref *r,
                      mcpage_contents *out)
{
    const mcpage_pager *pager = mcpage_call_pager(call);
    const mcpage_keyring *kr = mcpage_pager_keyring(pager);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return read_fail(call, EXPORT_RPC_INTERNAL, "Reading the export %s failed: %s", r->base,
                         strerror(errno));
    int64_t gen = file_generation(&st), offset = 0;
    uint8_t fp[MCPAGE_FINGERPRINT_LEN];
    export_fingerprint(r, fp);
    if (r->cursor) {
        mcpage_cursor c;
        mcpage_cursor_status cs =
            mcpage_cursor_decode(kr, EXPORT_CURSOR_WALK, fp, r->cursor, strlen(r->cursor), &c);
        if (cs != MCPAGE_CURSOR_VALID)
            return read_fail(call, EXPORT_RPC_INVALID_PARAMS,
                             "Invalid cursor in %.900s: %s Read %s for the first piece.", uri,
                             mcpage_cursor_status_text(cs), r->base);
        if (c.generation != gen || c.total != (int64_t)st.st_size || c.offset <= 0 ||
            c.offset > (int64_t)st.st_size)
            return read_fail(call, EXPORT_RPC_INVALID_PARAMS,
                             "The export %s was written again since this cursor was issued; read "
                             "it again from its first piece, %s.",
                             r->base, r->base);
        offset = c.offset;
    }
    int64_t want = (int64_t)st.st_size - offset;
    if (want > EXPORT_PIECE_READ)
        want = EXPORT_PIECE_READ;
    char *buf = malloc(want > 0 ? (size_t)want : 1);
    if (buf == NULL)
        return MCPAGE_ENOMEM;
    ssize_t got = want > 0 ? pread(fd, buf, (size_t)want, (off_t)offset) : 0;
    int rc = got == (ssize_t)want ? 0 : MCPAGE_EIO;
    export_piece pc = {0};
    if (rc == 0)
        rc = cut_piece(pager, offset, buf, (size_t)got, (int64_t)st.st_size, &pc);
    const char *mime = export_format_mime(r->fmt);
    if (rc == 0)
        rc = pc.text ? mcpage_contents_add_text(out, uri, mime, buf, (size_t)pc.returned)
                     : mcpage_contents_add_blob(out, uri, mime, buf, (size_t)pc.returned);
    char next[MCPAGE_CURSOR_MAX_LEN + 1] = "";
    if (rc == 0 && pc.offset + pc.returned < pc.total) {
        mcpage_cursor c = {.offset = pc.offset + pc.returned, .total = pc.total, .generation = gen};
        int n = mcpage_cursor_encode(kr, EXPORT_CURSOR_WALK, fp, &c, next, sizeof next);
        rc = n < 0 ? n : 0;
    }
    if (rc == 0)
        rc = add_envelope(out, uri, r, &pc, next);
    json_decref(pc.env);
    free(buf);
    return rc;
}

static int read_export(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    tools_ctx *ctx = mcpage_call_data(call);
    export_ref *r = malloc(sizeof *r);
    if (r == NULL)
        return MCPAGE_ENOMEM;
    char path[TOOLS_PATH_MAX], err[600];
    int rc = MCPAGE_ENOTFOUND;
    if (!export_ref_parse(uri, r))
        goto done;
    rc = export_target(ctx, r->id, r->fmt, path, sizeof path, err, sizeof err);
    if (rc < 0) {
        rc = read_fail(call, EXPORT_RPC_INTERNAL, "Exporting session %s failed: %s.", r->id, err);
        goto done;
    }
    rc = export_fresh(ctx, call, r, path, err, sizeof err);
    if (rc == MCPAGE_ENOTFOUND)
        goto done; /* no such session: no such resource */
    if (rc < 0) {
        rc = read_fail(call, EXPORT_RPC_INTERNAL, "Exporting session %s failed: %s.", r->id, err);
        goto done;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        rc = read_fail(call, r->cursor ? EXPORT_RPC_INVALID_PARAMS : EXPORT_RPC_INTERNAL,
                       "The export %s cannot be read (%s); read %s to write it again.", r->base,
                       strerror(errno), r->base);
        goto done;
    }
    rc = read_piece(call, fd, uri, r, out);
    close(fd);
done:
    free(r);
    return rc;
}

int export_resource_register(mcpage_server *srv, tools_ctx *ctx)
{
    mcpage_resource_template t = {
        .uri_template = EXPORT_TEMPLATE,
        .name = "session_export",
        .title = "Session export, in pieces",
        .description =
            "One session exported as format md (Markdown), html or jsonl (the original JSON "
            "Lines): the file export_session writes, read in pieces that fit the token budget. "
            "Each read returns one piece (text, or base64 when the bytes are not UTF-8) and a "
            "second item, application/json, with returned, total_bytes, has_more and, while "
            "more follows, next_uri: the next piece's URI (with a signed cursor). The pieces "
            "joined in order are the file, byte for byte.",
        .read = read_export,
        .user_data = ctx,
    };
    return mcpage_server_add_resource_template(srv, &t);
}
