/*
 * files_server: an MCP server over a directory of files, written only
 * against the public mcpage API (plus jansson and libc).
 *
 *   list_files       LIST: every regular file under the directory, sorted
 *                    by path; the cursor resumes after the last path, so a
 *                    walk stays exact while files are added or removed.
 *   read_file        CONTENT-line: a file's text, by lines.
 *   read_file_bytes  CONTENT-byte: a file's raw bytes.
 *
 * Usage: files_server DIR [--http PORT] [--key-file PATH]   (--help for all)
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* POSIX 2008 with XSI: nftw, realpath, pread, strdup */
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mcpage.h>

#define MAX_FILES 100000     /* list_files refuses larger trees */
#define MAX_TEXT  (64 << 20) /* read_file reads at most 64 MiB */

typedef struct files_ctx {
    char root[PATH_MAX]; /* the served directory, resolved */
} files_ctx;

typedef struct path_list {
    char **v;    /* paths relative to the root */
    size_t n;    /* paths in use */
    size_t cap;  /* paths allocated */
    size_t skip; /* bytes of "root/" before each relative path */
} path_list;

/* nftw passes no context, and each worker thread walks for its own call. */
static _Thread_local path_list *walking;

/* nftw's visitor: keeps regular files outside hidden names; -1 past MAX_FILES. */
static int visit(const char *path, const struct stat *st, int type, struct FTW *at)
{
    path_list *l = walking;
    const char *rel = path + l->skip;
    (void)st, (void)at;
    if (type != FTW_F || rel[0] == '.' || strstr(rel, "/.") != NULL)
        return 0; /* directories, links, unreadable entries, hidden files */
    if (l->n == l->cap) {
        char **v = l->n < MAX_FILES ? realloc(l->v, (l->cap + 256) * sizeof *v) : NULL;
        if (v == NULL)
            return -1;
        l->v = v;
        l->cap += 256;
    }
    return (l->v[l->n] = strdup(rel)) ? (int)(++l->n, 0) : -1;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the regular files under the root, sorted by path. */
static int walk(const char *root, path_list *out)
{
    out->skip = strlen(root) + 1;
    walking = out;
    int rc = nftw(root, visit, 16, FTW_PHYS); /* FTW_PHYS: symlinks are not followed */
    /* An empty directory has no vector to sort. */
    if (rc == 0 && out->n > 0)
        qsort(out->v, out->n, sizeof *out->v, by_path);
    return rc;
}

static void paths_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static const char *const file_fields[] = {"path", "size", "modified", NULL};
static const char *const file_ids[] = {"path", NULL};

static const mcpage_list_spec list_spec = {
    .tool = "list_files",
    .unit = "files",
    .default_limit = 50,
    .max_limit = 500,
    .fields = file_fields,
    .id_fields = file_ids,
    .narrow_hint = "Pass fields=[\"path\"] for shorter records.",
};

/* The runtime began the page from `args`; the handler fills it, and the runtime finishes it. */
static int list_files(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    files_ctx *fx = mcpage_call_data(call);
    mcpage_list *pg = mcpage_call_list(call);
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    path_list all = {0};
    (void)args;
    if (walk(fx->root, &all) != 0) {
        paths_free(&all);
        return mcpage_result_errorf(res, "cannot list %s (more than %d files?)", fx->root,
                                    MAX_FILES);
    }
    mcpage_list_set_total(pg, (int64_t)all.n, MCPAGE_GENERATION_NONE); /* counted each page */
    /* The keyset: resume strictly after the cursor's path; else skip `offset`. */
    char after[MCPAGE_CURSOR_MAX_STR_BYTES + 1] = "";
    if (w->resume)
        snprintf(after, sizeof after, "%.*s", (int)w->after[0].len, w->after[0].s);
    size_t i = w->resume ? 0 : (size_t)w->offset;
    while (w->resume && i < all.n && strcmp(all.v[i], after) <= 0)
        i++;
    int rc = 0;
    for (; i < all.n && rc == 0; i++) {
        char full[PATH_MAX * 2], when[32];
        struct stat st;
        struct tm tm;
        snprintf(full, sizeof full, "%s/%s", fx->root, all.v[i]);
        if (stat(full, &st) != 0)
            continue; /* removed since the walk */
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&st.st_mtime, &tm));
        json_t *rec = json_pack("{s:s, s:I, s:s}", "path", all.v[i], "size", (json_int_t)st.st_size,
                                "modified", when);
        mcpage_keypart pos = {.is_str = true, .s = all.v[i], .len = strlen(all.v[i])};
        rc = mcpage_list_add(pg, rec, &pos, 1);
    }
    paths_free(&all);
    return rc; /* 0 or MCPAGE_PAGE_FULL: the page is done; negative: it is dropped */
}

/*
 * Reads up to `cap` bytes at `offset` of the file args.path names, which
 * must resolve to a regular file inside the root (no "..", no symlink out).
 * Returns a malloc'd buffer (*len bytes of a *size-byte file), or NULL
 * with an error written to `res`.
 */
static char *read_inside(const files_ctx *fx, const json_t *args, int64_t offset, int64_t cap,
                         size_t *len, int64_t *size, mcpage_result *res)
{
    const char *path = json_string_value(json_object_get(args, "path"));
    char full[PATH_MAX * 2], real[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", fx->root, path);
    size_t rl = strlen(fx->root);
    if (realpath(full, real) == NULL || strncmp(real, fx->root, rl) != 0 || real[rl] != '/') {
        mcpage_result_errorf(res, "no file '%s' in the directory; list_files names them", path);
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    int fd = open(real, O_RDONLY);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (cap > st.st_size - offset) /* no bigger buffer than the file needs */
            cap = st.st_size > offset ? st.st_size - offset : 0;
        buf = malloc((size_t)cap + 1);
    }
    if (buf) {
        ssize_t got = pread(fd, buf, (size_t)cap, (off_t)offset);
        *len = got > 0 ? (size_t)got : 0;
        *size = (int64_t)st.st_size;
    }
    if (buf == NULL)
        mcpage_result_errorf(res, "cannot read '%s': %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return buf;
}

static const mcpage_lines_spec lines_spec = {
    .tool = "read_file",
    .default_max_lines = 200,
    .max_max_lines = 2000,
};

static int read_file(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    mcpage_lines *pg = mcpage_call_lines(call);
    size_t len = 0;
    int64_t size = 0;
    char *text = read_inside(mcpage_call_data(call), args, 0, MAX_TEXT + 1, &len, &size, res);
    if (text == NULL || size > MAX_TEXT) { /* an error result: the runtime drops the page */
        free(text);
        return text ? mcpage_result_errorf(res, "file over %d bytes: use read_file_bytes", MAX_TEXT)
                    : 0;
    }
    const char *end = text + len;
    int64_t total = 0; /* lines: newlines, plus a last line without one */
    for (const char *p = text; p < end; p++)
        total += *p == '\n' || p + 1 == end;
    mcpage_lines_set_total(pg, total);
    int64_t want = mcpage_lines_window_get(pg)->start_line, no = 1;
    int rc = 0;
    for (const char *p = text; p < end && rc == 0; no++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        if (no >= want)
            rc = mcpage_lines_add(pg, p, (size_t)(stop - p));
        p = stop + 1;
    }
    free(text);
    return rc;
}

static const mcpage_bytes_spec bytes_spec = {
    .tool = "read_file_bytes",
    .default_max_bytes = 4096,
    .max_max_bytes = 65536,
};

static int read_file_bytes(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    mcpage_bytes *pg = mcpage_call_bytes(call);
    const mcpage_bytes_window *w = mcpage_bytes_window_get(pg);
    size_t len = 0;
    int64_t size = 0;
    char *buf =
        read_inside(mcpage_call_data(call), args, w->offset, w->max_bytes, &len, &size, res);
    int rc = buf ? mcpage_bytes_set(pg, buf, len, size) : 0; /* no buffer: `res` says why */
    free(buf);
    return rc;
}

/* The reading tools' own parameter; the builders add their window's. */
static const char path_schema[] =
    "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{\"path\":"
    "{\"type\":\"string\",\"minLength\":1,\"description\":\"A path from list_files.\"}}}";

static int files_add_tools(mcpage_server *srv, files_ctx *fx)
{
    mcpage_tool t = {.read_only = MCPAGE_HINT_TRUE, .user_data = fx};
    t.name = "list_files";
    t.description = "Lists the files of the directory, sorted by path, with size and "
                    "modification time. Follow next_cursor to walk them all.";
    t.handler = list_files;
    int rc = mcpage_server_add_list_tool(srv, &t, &list_spec);
    t.name = "read_file";
    t.description = "Reads a text file by lines. Continue with next_start_line.";
    t.handler = read_file;
    t.input_schema = path_schema;
    if (rc == 0)
        rc = mcpage_server_add_lines_tool(srv, &t, &lines_spec);
    t.name = "read_file_bytes";
    t.description = "Reads a file's raw bytes (UTF-8 text as text, else base64). Continue "
                    "with next_offset.";
    t.handler = read_file_bytes;
    if (rc == 0)
        rc = mcpage_server_add_bytes_tool(srv, &t, &bytes_spec);
    return rc;
}

/* Resolves the root, which must be a directory. */
static int files_open(files_ctx *fx, const char *root)
{
    struct stat st;
    if (realpath(root, fx->root) == NULL || stat(fx->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "files_server: %s is not a directory\n", root);
        return MCPAGE_ENOTFOUND;
    }
    return 0;
}

static int files_setup(mcpage_server *srv, int argc, char **argv, void *ud)
{
    (void)argc; /* exactly one: min_args = 1 */
    int rc = files_open(ud, argv[0]);
    return rc == 0 ? files_add_tools(srv, ud) : rc;
}

#ifndef FILES_SERVER_NO_MAIN
int main(int argc, char **argv)
{
    static files_ctx fx;
    mcpage_program prog = {.name = "files-server",
                           .version = MCPAGE_VERSION_STRING,
                           .args_usage = "DIR",
                           .min_args = 1,
                           .setup = files_setup,
                           .user_data = &fx};
    return mcpage_main(&prog, argc, argv);
}
#endif
