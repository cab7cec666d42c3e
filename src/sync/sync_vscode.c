/*
 * VS Code-family editors' folders (sync_vscode.h).
 */
#define _GNU_SOURCE /* d_type */
#include "sync/sync_vscode.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#include "sync/sync_parse.h"
#include "sync/sync_source.h"
#include "sync/sync_walk.h"

/* 1 when dir/sub is a folder (links followed: containment is checked
   when the folder is opened). */
static int has_dir(const char *dir, const char *sub)
{
    char path[SYNC_PATH_MAX];
    struct stat sb;
    int k = snprintf(path, sizeof path, "%s/%s", dir, sub);
    return k > 0 && (size_t)k < sizeof path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_user_dir(const char *dir)
{
    return has_dir(dir, "workspaceStorage") || has_dir(dir, "globalStorage");
}

typedef struct users_walk {
    sync_vscode_user_fn fn;
    void *ud;
    int found; /* a User folder was seen */
} users_walk;

static int editor_entry(void *ud, const struct dirent *e, char *path)
{
    users_walk *w = ud;
    int rc = 0;
    char user[SYNC_PATH_MAX];
    int k = snprintf(user, sizeof user, "%s/User", path);
    if (k > 0 && (size_t)k < sizeof user && sync_entry_is(e, path, 1) && is_user_dir(user)) {
        w->found = 1;
        rc = w->fn ? w->fn(w->ud, user, e->d_name) : 1;
    }
    free(path);
    return rc;
}

/* The walk behind sync_vscode_users and sync_vscode_found (fn NULL:
   stops at the first User folder). */
static int users(const char *home, sync_report *rep, const char *source, users_walk *w)
{
    if (is_user_dir(home)) {
        w->found = 1;
        return w->fn ? w->fn(w->ud, home, "") : 0;
    }
    char user[SYNC_PATH_MAX];
    int k = snprintf(user, sizeof user, "%s/User", home);
    if (k > 0 && (size_t)k < sizeof user && is_user_dir(user)) {
        w->found = 1;
        return w->fn ? w->fn(w->ud, user, "") : 0;
    }
    DIR *d = sync_source_opendir(home, home, rep, source);
    return d ? sync_dir_each(d, home, editor_entry, w) : 0;
}

int sync_vscode_users(const char *home, sync_report *rep, const char *source,
                      sync_vscode_user_fn fn, void *ud)
{
    users_walk w = {.fn = fn, .ud = ud};
    return users(home, rep, source, &w);
}

int sync_vscode_found(const char *home)
{
    users_walk w = {0};
    (void)users(home, NULL, NULL, &w);
    return w.found;
}

static int hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes p[0..n) into a malloc'd string; NULL on a bad escape, a
   control byte or bytes that are not UTF-8. */
static char *decode(const char *p, size_t n)
{
    char *out = calloc(1, n + 1); /* zeroed: the analyzer sees every byte set */
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)p[i];
        if (c == '%') {
            if (i + 2 >= n)
                goto bad;
            int a = hex(p[i + 1]), b = hex(p[i + 2]);
            if (a < 0 || b < 0)
                goto bad;
            c = a * 16 + b;
            i += 2;
        }
        if (c < 0x20 || c == 0x7f)
            goto bad;
        out[k++] = (char)c;
    }
    out[k] = 0;
    for (size_t i = 0; i < k;) {
        size_t s = sync_utf8_seq((const unsigned char *)out + i, k - i);
        if (s == 0)
            goto bad;
        i += s;
    }
    return out;
bad:
    free(out);
    return NULL;
}

/* 1 when `s` starts with `prefix`, letters compared without case. */
static int scheme_is(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

char *sync_vscode_uri_path(const char *uri)
{
    if (!uri)
        return NULL;
    const char *rest;
    if (scheme_is(uri, "file://"))
        rest = uri + 7;
    else if (scheme_is(uri, "vscode-remote://"))
        rest = uri + 16;
    else
        return NULL;
    /* the authority: none for a local file (a UNC host is not read), the
       remote's name for vscode-remote */
    const char *path = strchr(rest, '/');
    if (!path || (scheme_is(uri, "file://") && path != rest))
        return NULL;
    size_t n = strcspn(path, "?#");
    char *p = decode(path, n);
    if (!p)
        return NULL;
    size_t len = strlen(p);
    /* /c:/src/app: a Windows drive, written as Windows writes it */
    if (len >= 3 && p[0] == '/' && isalpha((unsigned char)p[1]) && p[2] == ':' &&
        (len == 3 || p[3] == '/')) {
        memmove(p, p + 1, len);
        len--;
        p[0] = (char)toupper((unsigned char)p[0]);
        for (size_t i = 0; i < len; i++)
            if (p[i] == '/')
                p[i] = '\\';
        if (len == 2) { /* "C:" alone is the drive's root */
            char *q = realloc(p, 4);
            if (!q) {
                free(p);
                return NULL;
            }
            p = q;
            p[2] = '\\';
            p[3] = 0;
            len = 3;
        }
    }
    /* a trailing slash names the same folder */
    while (len > 1 && p[len - 1] == '/')
        p[--len] = 0;
    if (len == 0 || len >= SYNC_PATH_MAX) {
        free(p);
        return NULL;
    }
    return p;
}

/* The folder a .code-workspace path is in, or NULL for an untitled
   workspace (the editor's own .../Workspaces/<id>/workspace.json). */
static char *workspace_folder(char *file)
{
    char sep = file[0] == '/' ? '/' : '\\';
    char *last = strrchr(file, sep);
    if (!last || last == file)
        return NULL;
    *last = 0;
    if (strcmp(last + 1, "workspace.json") == 0) {
        char *dir = strrchr(file, sep);
        if (dir) {
            *dir = 0;
            const char *up = strrchr(file, sep);
            int untitled = strcmp(up ? up + 1 : file, "Workspaces") == 0;
            *dir = sep;
            if (untitled)
                return NULL;
        }
    }
    return sync_dup(file);
}

char *sync_vscode_workspace(const char *home, const char *wsdir, sync_report *rep,
                            const char *source)
{
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/workspace.json", wsdir);
    if (k < 0 || (size_t)k >= sizeof path)
        return NULL;
    char *buf = NULL, why[SYNC_WARNING_LEN] = "";
    size_t n = 0;
    int rc = sync_source_read(home, path, SYNC_VSCODE_WORKSPACE_MAX, &buf, &n, why, sizeof why);
    if (rc < 0) {
        if (rc != MCPAGE_ENOTFOUND && rc != MCPAGE_ENOMEM && rep)
            sync_warn(rep, source, path, 0, why);
        return NULL;
    }
    json_error_t err;
    json_t *root = json_loadb(buf, n, 0, &err);
    free(buf);
    if (!json_is_object(root)) {
        if (rep) {
            (void)snprintf(why, sizeof why, "not a workspace.json (a JSON object): %s",
                           root ? "another JSON value" : err.text);
            sync_warn(rep, source, path, root ? 0 : err.line, why);
        }
        json_decref(root);
        return NULL;
    }
    char *out = NULL;
    const char *folder = sync_json_str(root, "folder");
    const char *workspace = sync_json_str(root, "workspace");
    if (folder) {
        out = sync_vscode_uri_path(folder);
    } else if (workspace) {
        char *file = sync_vscode_uri_path(workspace);
        out = file ? workspace_folder(file) : NULL;
        free(file);
    }
    json_decref(root);
    return out;
}
