/* Files and folders for the discovery walks: see sync_walk.h. */
#define _GNU_SOURCE /* d_type */
#include <dirent.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_walk.h"

int sync_grow(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : first;
    void *p = want <= SIZE_MAX / size ? realloc(*v, want * size) : NULL;
    if (!p)
        return MCPAGE_ENOMEM;
    *v = p;
    *cap = want;
    return 0;
}

const char *sync_home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_dir : "/";
}

char *sync_dup(const char *src)
{
    if (!src)
        return NULL;
    size_t n = strlen(src);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, src, n + 1);
    return d;
}

char *sync_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 2 > SYNC_PATH_MAX)
        return NULL;
    char *p = malloc(la + lb + 2);
    if (!p)
        return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

int sync_ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

int sync_entry_is(const struct dirent *e, const char *path, int want_dir)
{
    if (e->d_type == DT_REG)
        return !want_dir;
    if (e->d_type == DT_DIR)
        return want_dir;
    struct stat sb;
    if (stat(path, &sb) < 0)
        return 0;
    return want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode);
}

int sync_dir_each(DIR *d, const char *dir, sync_entry_fn fn, void *ud)
{
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path = sync_join(dir, e->d_name);
        rc = path ? fn(ud, e, path) : MCPAGE_ENOMEM;
    }
    closedir(d);
    return rc > 0 ? 0 : rc;
}
