/*
 * Watching the agents' session folders with inotify (sync_watch.h).
 *
 * A root is a folder sessions live under (CLAUDE_HOME/projects, ...) and
 * how many levels below it the source's layout goes. Each folder of a
 * root's tree down to that depth is watched for files written, created,
 * moved or deleted; each folder between the agent's home and a root is
 * watched only for folders created or moved in, so a root (or the home's
 * first session folder) that appears later is armed then.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_source.h"
#include "sync/sync_watch.h"
#include "sync/sync_walk.h"

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>

#define ROOTS_MAX 256 /* roots of one watcher */

/* A session folder and the levels of folders below it that hold sessions. */
typedef struct watch_root {
    char path[SYNC_PATH_MAX];
    char home[SYNC_PATH_MAX]; /* the agent's home it is under */
    int depth;                /* folder levels below path that are watched */
} watch_root;

/* What one watch descriptor watches. */
typedef struct watch_ent {
    char *path; /* NULL: free slot */
    int root;   /* index in roots, or -1 for a folder between a home and its roots */
    int level;  /* levels below the root (0 = the root) */
} watch_ent;

struct sync_watch {
    int fd;
    watch_root *roots;
    size_t nroots;
    watch_ent *ent; /* by watch descriptor */
    size_t cap;     /* slots in ent */
    size_t count;   /* watches held */
    bool full;      /* the limit was met: some folders are not watched */
    bool warned;    /* sync_watch_warning said so */
    char warning[600];
    /* What changed since sync_watch_take: the files named, or a walk. */
    char **names; /* paths of files events named, each once (owned) */
    size_t nnames, cap_names;
    sync_idmap seen; /* the paths in names */
    bool walk;       /* the names are not all that changed */
};

/* Events that say a session file changed, in a folder of a root's tree. */
#define MASK_TREE                                                                                  \
    (IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |            \
     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
/* Events that say a folder appeared, in a folder between a home and a root. */
#define MASK_PATH                                                                                  \
    (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW |       \
     IN_EXCL_UNLINK)

static void add_root(sync_watch *w, const char *home, const char *sub, int depth)
{
    if (!home || !*home || w->nroots >= ROOTS_MAX)
        return;
    watch_root *r = &w->roots[w->nroots];
    int k = snprintf(r->path, sizeof r->path, "%s%s%s", home, *sub ? "/" : "", sub);
    int h = snprintf(r->home, sizeof r->home, "%s", home);
    if (k <= 0 || (size_t)k >= sizeof r->path || h <= 0 || (size_t)h >= sizeof r->home)
        return;
    while (k > 1 && r->path[k - 1] == '/') /* "home/" */
        r->path[--k] = '\0';
    while (h > 1 && r->home[h - 1] == '/')
        r->home[--h] = '\0';
    r->depth = depth;
    w->nroots++;
}

static bool has_wildcard(const char *seg)
{
    return strpbrk(seg, "*?{[") != NULL;
}

/* The root of one glob: its literal leading folders, and the levels below them. */
static void add_glob_root(sync_watch *w, const char *home, const sd_glob *g)
{
    char sub[SYNC_PATH_MAX] = "";
    size_t used = 0, i = 0;
    for (; i + 1 < g->n && !has_wildcard(g->seg[i]); i++) {
        int k = snprintf(sub + used, sizeof sub - used, "%s%s", used ? "/" : "", g->seg[i]);
        if (k < 0 || (size_t)k >= sizeof sub - used)
            return;
        used += (size_t)k;
    }
    int depth = 0;
    for (size_t j = i; j + 1 < g->n; j++)
        depth += strcmp(g->seg[j], "**") == 0 ? SYNC_DESC_DEPTH : 1;
    add_root(w, home, sub, depth > SYNC_DESC_DEPTH ? SYNC_DESC_DEPTH : depth);
}

/* Where each source's sessions live (docs/sync.md, "Discovery"). */
static void find_roots(sync_watch *w, const sync_options *o)
{
    add_root(w, o->claude_home, "projects", 3); /* <dir>/<session>/subagents */
    add_root(w, o->codex_home, "sessions", 6);  /* YYYY/MM/DD, 6 levels at most */
    add_root(w, o->codex_home, "archived_sessions", 6);
    add_root(w, o->gemini_home, "tmp", 3);               /* <folder>/chats/<parent> */
    add_root(w, o->copilot_home, "session-state", 1);    /* <id>/events.jsonl */
    add_root(w, o->opencode_home, "", 0);                /* opencode.db and its -wal */
    add_root(w, o->opencode_home, "storage/session", 2); /* <project>/<id>.json, info/ */
    add_root(w, o->opencode_home, "project", 5); /* <folder>/storage/session/info/<id>.json */
    add_root(w, o->cursor_home, "chats", 2);     /* <md5>/<id>/store.db */
    for (size_t i = 0; i < o->ndescribed; i++) {
        const sync_desc *d = o->described[i].desc;
        const char *home = o->described[i].home;
        if (!home || !d || sync_desc_disabled(d))
            continue;
        if (d->writes && strcmp(d->writes, "claude") == 0) {
            add_root(w, home, "projects", 3);
        } else if (d->writes && strcmp(d->writes, "vscode-chat") == 0) {
            /* <Editor>/User/workspaceStorage/<hash>/chatSessions/<id>.jsonl */
            add_root(w, home, "", 5);
        } else if (d->writes && strcmp(d->writes, "codex") == 0) {
            add_root(w, home, "sessions", 6);
            add_root(w, home, "archived_sessions", 6);
        } else if (d->writes && strcmp(d->writes, "cursor-ide") == 0) {
            add_root(w, home, "User/globalStorage", 0); /* state.vscdb and its -wal */
        } else {
            for (size_t g = 0; g < d->nglobs; g++)
                add_glob_root(w, home, &d->globs[g]);
            for (size_t g = 0; d->db && g < d->db->nglobs; g++)
                add_glob_root(w, home, &d->db->globs[g]);
        }
    }
}

/* Notes that the limit was met (once). */
static void limit_met(sync_watch *w, int err)
{
    if (w->full)
        return;
    w->full = true;
    char sys[32] = "?";
    FILE *f = fopen("/proc/sys/fs/inotify/max_user_watches", "r");
    if (f) {
        if (!fgets(sys, sizeof sys, f))
            (void)snprintf(sys, sizeof sys, "?");
        (void)fclose(f);
        sys[strcspn(sys, "\n")] = '\0';
    }
    (void)snprintf(w->warning, sizeof w->warning,
                   "watching %zu folders, no more (%s; fs.inotify.max_user_watches is %s, this "
                   "server's own limit %d): changes in the folders left out sync on the interval "
                   "only; raise the limit with `sysctl fs.inotify.max_user_watches=N`",
                   w->count, err == ENOSPC ? "the system's watch limit was met" : strerror(err),
                   sys, SYNC_WATCH_MAX);
}

/* Watches `path` as (root, level); the watch descriptor, or -1. */
static int watch_one(sync_watch *w, const char *path, int root, int level)
{
    if (w->count >= SYNC_WATCH_MAX) {
        limit_met(w, ENOSPC);
        return -1;
    }
    uint32_t mask = (root >= 0 ? MASK_TREE : MASK_PATH) | IN_MASK_ADD;
    int wd = inotify_add_watch(w->fd, path, mask);
    if (wd < 0) {
        if (errno == ENOSPC || errno == ENOMEM)
            limit_met(w, errno);
        return -1;
    }
    if ((size_t)wd >= w->cap) {
        size_t cap = w->cap ? w->cap : 64;
        while (cap <= (size_t)wd)
            cap *= 2;
        watch_ent *e = realloc(w->ent, cap * sizeof *e);
        if (!e) {
            inotify_rm_watch(w->fd, wd);
            return -1;
        }
        memset(e + w->cap, 0, (cap - w->cap) * sizeof *e);
        w->ent = e;
        w->cap = cap;
    }
    watch_ent *e = &w->ent[wd];
    if (e->path && strcmp(e->path, path) == 0 && (e->root >= 0 || root < 0))
        return wd; /* already so (a root's tree takes precedence over a path to a root) */
    char *copy = strdup(path);
    if (!copy)
        return wd;
    if (!e->path)
        w->count++;
    free(e->path);
    e->path = copy;
    if (root >= 0 || e->root < 0 || e->root >= (int)w->nroots) {
        e->root = root;
        e->level = level;
    }
    return wd;
}

/* Watches `dir` and the folders below it down to the root's depth. */
static void arm_tree(sync_watch *w, const char *dir, int root, int level)
{
    if (watch_one(w, dir, root, level) < 0 || level >= w->roots[root].depth)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char sub[SYNC_PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        int k = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (k <= 0 || (size_t)k >= sizeof sub)
            continue;
        bool is_dir = e->d_type == DT_DIR;
        struct stat sb;
        if (e->d_type == DT_UNKNOWN) /* links are not followed: lstat */
            is_dir = lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (is_dir)
            arm_tree(w, sub, root, level + 1);
    }
    closedir(d);
}

/* Arms root `r`: its tree when it exists, else the folders from its home toward it. */
static void arm_root(sync_watch *w, int r)
{
    const watch_root *rt = &w->roots[r];
    struct stat sb;
    if (stat(rt->path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        arm_tree(w, rt->path, r, 0);
        return;
    }
    /* the home and each existing folder below it on the way to the root */
    char p[SYNC_PATH_MAX];
    size_t hl = strlen(rt->home);
    (void)snprintf(p, sizeof p, "%s", rt->path);
    for (size_t i = hl;; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        bool ok = stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (ok)
            watch_one(w, p, -1, 0);
        p[i] = c;
        if (!ok || c == '\0')
            break;
    }
}

/* True when `a` is `b` or a folder above it. */
static bool is_at_or_above(const char *a, const char *b)
{
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* Drops the watch of a folder moved away, and of the folders below it. */
static void drop_tree(sync_watch *w, int wd)
{
    char *top = w->ent[wd].path;
    w->ent[wd].path = NULL;
    for (size_t i = 0; i < w->cap; i++) {
        if (!w->ent[i].path || !is_at_or_above(top, w->ent[i].path))
            continue;
        inotify_rm_watch(w->fd, (int)i);
        free(w->ent[i].path);
        w->ent[i].path = NULL;
        w->count--;
    }
    inotify_rm_watch(w->fd, wd);
    free(top);
    w->count--;
}

int sync_watch_open(const sync_options *opt, sync_watch **out, char *why, size_t cap)
{
    *out = NULL;
    sync_watch *w = calloc(1, sizeof *w);
    if (w)
        w->roots = calloc(ROOTS_MAX, sizeof *w->roots);
    if (!w || !w->roots) {
        free(w);
        (void)snprintf(why, cap, "out of memory");
        return MCPAGE_ENOMEM;
    }
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        (void)snprintf(why, cap, "inotify_init1: %s", strerror(errno));
        free(w->roots);
        free(w);
        return MCPAGE_EIO;
    }
    find_roots(w, opt);
    for (size_t r = 0; r < w->nroots; r++)
        arm_root(w, (int)r);
    *out = w;
    return 0;
}

int sync_watch_fd(const sync_watch *w)
{
    return w->fd;
}

/* A folder appeared at `path`, in a watched folder `e`: arm what it starts. */
static int folder_appeared(sync_watch *w, const watch_ent *e, const char *path)
{
    if (e->root >= 0) {
        if (e->level < w->roots[e->root].depth)
            arm_tree(w, path, e->root, e->level + 1);
        return 1;
    }
    int hits = 0;
    for (size_t r = 0; r < w->nroots; r++)
        if (is_at_or_above(path, w->roots[r].path)) {
            arm_root(w, (int)r);
            hits++;
        }
    return hits;
}

/* Notes a file an event named; past SYNC_WATCH_NAMES_MAX, a walk instead. */
static void name_file(sync_watch *w, const char *path)
{
    if (w->walk)
        return;
    int added = w->nnames < SYNC_WATCH_NAMES_MAX ? sync_idmap_add(&w->seen, path) : -1;
    if (added == 0)
        return;
    char *copy = added > 0 ? strdup(path) : NULL;
    if (!copy ||
        sync_grow((void **)&w->names, &w->cap_names, w->nnames, sizeof *w->names, 16) < 0) {
        free(copy);
        w->walk = true;
        return;
    }
    w->names[w->nnames++] = copy;
}

int sync_watch_take(sync_watch *w, char ***paths, size_t *n)
{
    int named = !w->walk;
    *paths = named ? w->names : NULL;
    *n = named ? w->nnames : 0;
    if (!named)
        sync_watch_names_free(w->names, w->nnames);
    w->names = NULL;
    w->nnames = w->cap_names = 0;
    w->walk = false;
    sync_idmap_free(&w->seen);
    return named;
}

void sync_watch_names_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

int sync_watch_read(sync_watch *w)
{
    char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
    int changes = 0;
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) { /* events lost: look again everywhere */
                for (size_t r = 0; r < w->nroots; r++)
                    arm_root(w, (int)r);
                w->walk = true;
                changes++;
                continue;
            }
            if (ev->wd < 0 || (size_t)ev->wd >= w->cap || !w->ent[ev->wd].path)
                continue;
            watch_ent *e = &w->ent[ev->wd];
            if (ev->mask & IN_IGNORED) { /* removed, or its folder deleted */
                free(e->path);
                e->path = NULL;
                w->count--;
                continue;
            }
            if (ev->mask & IN_MOVE_SELF) {
                struct stat sb;
                /* moved within the tree: re-armed under its new name already */
                w->walk |= e->root >= 0;
                changes += e->root >= 0;
                if (stat(e->path, &sb) != 0)
                    drop_tree(w, ev->wd);
                continue;
            }
            if (ev->mask & IN_DELETE_SELF) {
                w->walk |= e->root >= 0;
                changes += e->root >= 0;
                continue;
            }
            char path[SYNC_PATH_MAX];
            int k = ev->len ? snprintf(path, sizeof path, "%s/%s", e->path, ev->name) : -1;
            bool fits = k > 0 && (size_t)k < sizeof path;
            if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && fits) {
                int hits = folder_appeared(w, e, path);
                w->walk |= hits > 0; /* its files may predate its watch */
                changes += hits;
            } else if (e->root >= 0) {
                /* a file written, created, moved or deleted is named; a folder moved away
                   or deleted, or a name that does not fit, needs a walk */
                if ((ev->mask & IN_ISDIR) || !fits)
                    w->walk = true;
                else
                    name_file(w, path);
                changes++;
            }
        }
    }
    return changes;
}

size_t sync_watch_count(const sync_watch *w)
{
    return w->count;
}

const char *sync_watch_warning(sync_watch *w)
{
    if (!w->full || w->warned)
        return NULL;
    w->warned = true;
    return w->warning;
}

void sync_watch_close(sync_watch *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->cap; i++)
        free(w->ent[i].path);
    free(w->ent);
    free(w->roots);
    sync_watch_names_free(w->names, w->nnames);
    sync_idmap_free(&w->seen);
    close(w->fd);
    free(w);
}

#else /* not Linux: no watcher, the interval sync only */

int sync_watch_open(const sync_options *opt, sync_watch **out, char *why, size_t cap)
{
    (void)opt;
    *out = NULL;
    (void)snprintf(why, cap, "watching folders needs Linux inotify");
    return MCPAGE_ESTATE;
}

int sync_watch_fd(const sync_watch *w)
{
    (void)w;
    return -1;
}

int sync_watch_read(sync_watch *w)
{
    (void)w;
    return 0;
}

int sync_watch_take(sync_watch *w, char ***paths, size_t *n)
{
    (void)w;
    *paths = NULL;
    *n = 0;
    return 0;
}

void sync_watch_names_free(char **paths, size_t n)
{
    (void)paths;
    (void)n;
}

size_t sync_watch_count(const sync_watch *w)
{
    (void)w;
    return 0;
}

const char *sync_watch_warning(sync_watch *w)
{
    (void)w;
    return NULL;
}

void sync_watch_close(sync_watch *w)
{
    (void)w;
}

#endif
