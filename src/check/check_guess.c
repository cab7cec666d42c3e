/*
 * Arguments the checker guesses from the server's own answers: a tool
 * that needs `session_id` is called with a session_id an earlier answer
 * held (list_sessions' column of that name), a tool that needs `path`
 * with a path an earlier answer listed (list_allowed_directories' lines,
 * list_directory's "[FILE] name" entries under the directory it was
 * asked about). Every answer of a successful call is harvested into
 * c->seen: {name: [{v, from, kind}]}, a few values per name; paths go
 * under the name "(path)". What was guessed is reported by the caller.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

/* Values kept per name, and how deep and wide an answer is searched. */
#define SEEN_PER_NAME 8
#define HARVEST_DEPTH 6
#define HARVEST_ITEMS 20
#define HARVEST_LINES 500
/* The longest value kept (a path or an identifier, not a document). */
#define SEEN_VALUE_MAX 1024
/* The key paths are kept under (no parameter has this name). */
#define PATH_KEY "(path)"

/* "sessionId", "session_id" and "session-id" all compare as "sessionid". */
static void squash(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (*s != '_' && *s != '-')
            out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
}

static void remember(check_ctx *c, const char *name, const json_t *v, const char *from,
                     const char *kind)
{
    if (json_is_string(v) &&
        (json_string_length(v) == 0 || json_string_length(v) > SEEN_VALUE_MAX ||
         strchr(json_string_value(v), '\n')))
        return;
    if (!json_is_string(v) && !json_is_integer(v))
        return;
    if (c->seen == NULL)
        c->seen = json_object();
    char key[128];
    if (strcmp(name, PATH_KEY) == 0)
        snprintf(key, sizeof key, "%s", name);
    else
        squash(name, key, sizeof key);
    if (key[0] == '\0')
        return;
    json_t *list = json_object_get(c->seen, key);
    if (list == NULL) {
        list = json_array();
        json_object_set_new(c->seen, key, list);
    }
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_equal(json_object_get(e, "v"), v))
            return;
    }
    if (json_array_size(list) < SEEN_PER_NAME)
        json_array_append_new(
            list, json_pack("{s:O, s:s, s:s}", "v", v, "from", from, "kind", kind ? kind : ""));
}

/* The absolute directory the call was about: its first argument that is one, or NULL. */
static const char *dir_argument(const json_t *args)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)args, k, v)
    {
        const char *s = json_string_value(v);
        if (s && s[0] == '/' && !strchr(s, '\n'))
            return s;
    }
    return NULL;
}

/* Lines of text: absolute paths on their own, and "[FILE] name" / "[DIR] name" entries. */
static void harvest_lines(check_ctx *c, const char *tool, const json_t *args, const char *text)
{
    const char *dir = dir_argument(args);
    int lines = 0;
    for (const char *p = text; p && *p && lines < HARVEST_LINES; lines++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[SEEN_VALUE_MAX];
        if (n < sizeof line) {
            memcpy(line, p, n);
            line[n] = '\0';
            size_t e = n;
            while (e > 0 && isspace((unsigned char)line[e - 1]))
                line[--e] = '\0';
            const char *s = line;
            while (*s == ' ' || *s == '\t')
                s++;
            if (s[0] == '/' && !strchr(s, '\t')) {
                json_t *v = json_string(s);
                remember(c, PATH_KEY, v, tool, "");
                json_decref(v);
            } else if (s[0] == '[' && dir) {
                const char *close = strchr(s, ']');
                const char *kind = NULL;
                if (close && close - s < 12) {
                    kind = strncmp(s, "[DIR]", 5) == 0    ? "dir"
                           : strncmp(s, "[FILE]", 6) == 0 ? "file"
                                                          : NULL;
                }
                const char *name = close ? close + 1 : NULL;
                while (name && *name == ' ')
                    name++;
                char entry[SEEN_VALUE_MAX];
                if (kind && name && *name && !strchr(name, '/')) {
                    /* list_directory_with_sizes pads the name before the size */
                    size_t len = strlen(name);
                    const char *gap = strstr(name, "  ");
                    if (gap)
                        len = (size_t)(gap - name);
                    int w = snprintf(entry, sizeof entry, "%s%s%.*s", dir,
                                     dir[strlen(dir) - 1] == '/' ? "" : "/", (int)len, name);
                    if (w > 0 && (size_t)w < sizeof entry) {
                        json_t *v = json_string(entry);
                        remember(c, PATH_KEY, v, tool, kind);
                        json_decref(v);
                    }
                }
            }
        }
        p = nl ? nl + 1 : NULL;
    }
}

static void harvest_value(check_ctx *c, const char *tool, const json_t *args, const json_t *v,
                          int depth)
{
    if (depth > HARVEST_DEPTH)
        return;
    if (json_is_string(v)) {
        if (strchr(json_string_value(v), '\n') || json_string_value(v)[0] == '/')
            harvest_lines(c, tool, args, json_string_value(v));
        return;
    }
    size_t i;
    const json_t *e;
    if (json_is_array(v)) {
        json_array_foreach(v, i, e)
        {
            if (i >= HARVEST_ITEMS)
                break;
            harvest_value(c, tool, args, e, depth + 1);
        }
        return;
    }
    if (!json_is_object(v))
        return;
    /* The column layout: "columns" names each value of the records under another key. */
    const json_t *cols = json_object_get(v, "columns");
    const char *k;
    const json_t *sub;
    json_object_foreach((json_t *)v, k, sub)
    {
        if (json_is_array(cols) && json_is_array(sub) && sub != cols) {
            const json_t *row;
            json_array_foreach(sub, i, row)
            {
                if (i >= HARVEST_ITEMS || !json_is_array(row))
                    break;
                for (size_t j = 0; j < json_array_size(row) && j < json_array_size(cols); j++) {
                    const char *col = json_string_value(json_array_get(cols, j));
                    if (col)
                        remember(c, col, json_array_get(row, j), tool, NULL);
                }
            }
        }
        remember(c, k, sub, tool, NULL);
        harvest_value(c, tool, args, sub, depth + 1);
    }
}

void check__harvest(check_ctx *c, const char *tool, const json_t *args, const json_t *res)
{
    if (!json_is_object(res) || json_is_true(json_object_get(res, "isError")))
        return;
    harvest_value(c, tool, args, json_object_get(res, "structuredContent"), 0);
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(res, "content"), i, b)
    {
        const char *t = json_string_value(json_object_get(b, "text"));
        if (t && i < HARVEST_ITEMS)
            harvest_lines(c, tool, args, t);
    }
}

/* A parameter that takes a filesystem path: path, file, dir, source, *_path, *Path... */
static bool path_like(const char *name)
{
    char s[128];
    squash(name, s, sizeof s);
    static const char *const names[] = {"path",   "file",      "filename", "filepath",
                                        "dir",    "directory", "folder",   "root",
                                        "source", "paths",     "files",    "directories"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return true;
    size_t n = strlen(s);
    return n > 4 && strcmp(s + n - 4, "path") == 0;
}

/* Which kind of path a tool wants: "file", "dir" or "" (from its name and description). */
static const char *wanted_kind(const json_t *tool, const char *param)
{
    const char *name = json_string_value(json_object_get(tool, "name"));
    if (strstr(param, "dir") || strstr(param, "folder"))
        return "dir";
    if (strstr(param, "file"))
        return "file";
    if (name && (strstr(name, "dir") || strstr(name, "tree") || strstr(name, "list")))
        return "dir";
    if (name && (strstr(name, "file") || strstr(name, "read")))
        return "file";
    return "";
}

/*
 * The attempt-th candidate for a path: of the wanted kind first, then of
 * no known kind (a listed file is never offered where a directory is
 * wanted); any when the kind wanted is unknown. NULL when none is left.
 */
static const json_t *path_candidate(const json_t *list, const char *kind, int attempt)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e)
        {
            const char *k = json_string_value(json_object_get(e, "kind")) ?: "";
            bool take = kind[0] == '\0' ? pass == 0 : strcmp(k, pass == 0 ? kind : "") == 0;
            if (take && n++ == attempt)
                return e;
        }
    }
    return NULL;
}

json_t *check__guess(check_ctx *c, const json_t *tool, const json_t *base, const json_t *needs,
                     int attempt, char *from, size_t from_len)
{
    json_t *g = json_object();
    from[0] = '\0';
    const json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
    size_t i;
    const json_t *n;
    json_array_foreach(needs, i, n)
    {
        const char *name = json_string_value(n);
        if (name == NULL || json_object_get(base, name))
            continue;
        const json_t *prop = json_object_get(props, name);
        const char *type = json_string_value(json_object_get(prop, "type"));
        const json_t *items_type = json_object_get(json_object_get(prop, "items"), "type");
        bool want_array = type && strcmp(type, "array") == 0 && json_is_string(items_type) &&
                          strcmp(json_string_value(items_type), "string") == 0;
        char key[128];
        squash(name, key, sizeof key);
        const json_t *e = NULL;
        const json_t *list = json_object_get(c->seen, key);
        if (!want_array && list) {
            /* The same name: values of the type the schema asks for. */
            int k = 0;
            size_t j;
            const json_t *x;
            json_array_foreach(list, j, x)
            {
                const json_t *v = json_object_get(x, "v");
                bool ok = type == NULL || (strcmp(type, "string") == 0 && json_is_string(v)) ||
                          ((strcmp(type, "integer") == 0 || strcmp(type, "number") == 0) &&
                           json_is_integer(v));
                if (ok && k++ == attempt) {
                    e = x;
                    break;
                }
            }
        }
        if (e == NULL && path_like(name) &&
            (type == NULL || strcmp(type, "string") == 0 || want_array))
            e = path_candidate(json_object_get(c->seen, PATH_KEY),
                               want_array ? "file" : wanted_kind(tool, name), attempt);
        if (e == NULL)
            continue;
        const json_t *v = json_object_get(e, "v");
        json_object_set_new(g, name, want_array ? json_pack("[O]", v) : json_incref((json_t *)v));
        size_t used = strlen(from);
        snprintf(from + used, from_len - used, "%s%s from %s", used ? ", " : "", name,
                 json_string_value(json_object_get(e, "from")) ?: "?");
    }
    return g;
}
