/*
 * Transcript discovery: Claude Code's projects/<dir>/<session>.jsonl and
 * its sub-agents, Codex's rollouts under sessions/ and archived_sessions/.
 *
 * Links are followed only where they resolve inside the agent's own folder
 * (CLAUDE_HOME or CODEX_HOME, resolved with realpath): a transcript linked
 * to /etc/passwd is counted and left alone, never opened. A folder that
 * cannot be listed is counted and named in the report with its errno text.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_internal.h"
#include "sync/sync_source.h"

#define SYNC_DEPTH_MAX 6 /* directory levels walked under sessions/ */

/* One walk under one agent's folder. */
typedef struct walk {
    sync_jobs *js;
    sync_report *rep;
    const char *root; /* the agent's folder, resolved */
    size_t rootlen;
    const char *home;   /* the agent's folder as the options name it */
    const char *source; /* "claude" or "codex", for warnings */
} walk;

static char *stem(const char *name)
{
    size_t n = strlen(name);
    if (sync_ends_with(name, ".jsonl"))
        n -= 6;
    else if (sync_ends_with(name, ".json"))
        n -= 5;
    if (n > STORE_ID_MAX - 40)
        n = STORE_ID_MAX - 40;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, name, n);
    s[n] = 0;
    return s;
}

static void job_free(sync_job *j)
{
    free(j->path);
    free(j->real);
    free(j->session_id);
    free(j->parent);
    free(j->project_dir);
}

void sync_jobs_free(sync_jobs *js)
{
    for (size_t i = 0; i < js->n; i++)
        job_free(&js->v[i]);
    free(js->v);
    memset(js, 0, sizeof *js);
}

/* Takes ownership of j's strings, also on failure. */
static int jobs_add(sync_jobs *js, sync_job *j)
{
    if (js->n >= SYNC_FILES_MAX) {
        job_free(j);
        return MCPAGE_ERANGE;
    }
    if (sync_grow((void **)&js->v, &js->cap, js->n, sizeof *js->v, 256) < 0) {
        job_free(j);
        return MCPAGE_ENOMEM;
    }
    js->v[js->n++] = *j;
    return 0;
}

static void note_errno(walk *w, const char *path, const char *what, int err)
{
    char why[200];
    snprintf(why, sizeof why, "%s: %s", what, strerror(err));
    sync_warn(w->rep, w->source, path, 0, why);
}

/* A directory, or NULL (a missing one silently: sub-agent folders are
 * optional; any other failure is counted and named). */
static DIR *open_dir(walk *w, const char *path)
{
    DIR *d = opendir(path);
    if (!d && errno != ENOENT && errno != ENOTDIR) {
        w->rep->dirs_unreadable++;
        note_errno(w, path, "cannot list this folder", errno);
    }
    return d;
}

static int inside_root(const walk *w, const char *real)
{
    if (w->rootlen == 1) /* the root is "/" */
        return 1;
    return strncmp(real, w->root, w->rootlen) == 0 &&
           (real[w->rootlen] == '/' || real[w->rootlen] == 0);
}

enum { ENTRY_NONE, ENTRY_FILE, ENTRY_DIR };

/*
 * What a directory entry is: a file, a folder, or neither. A link counts
 * as what it points to only when that resolves inside the walk's root;
 * then *real is the resolved path (caller frees). A dangling link is
 * neither, silently (its target was deleted); a looping or unreadable one
 * is named in the report.
 */
static int entry_kind(walk *w, const struct dirent *e, const char *path, char **real)
{
    *real = NULL;
    if (e->d_type == DT_REG)
        return ENTRY_FILE;
    if (e->d_type == DT_DIR)
        return ENTRY_DIR;
    if (e->d_type == DT_FIFO || e->d_type == DT_CHR || e->d_type == DT_BLK ||
        e->d_type == DT_SOCK) {
        /* never opened (it could block); named, since a transcript's
           place holds it */
        if (sync_ends_with(e->d_name, ".jsonl") || sync_ends_with(e->d_name, ".json"))
            sync_warn(w->rep, w->source, path, 0,
                      e->d_type == DT_FIFO ? "a FIFO, not a regular file: skipped"
                                           : "a device or socket, not a regular file: skipped");
        return ENTRY_NONE;
    }
    if (e->d_type == DT_UNKNOWN) {
        struct stat lsb;
        if (lstat(path, &lsb) < 0)
            return ENTRY_NONE;
        if (S_ISREG(lsb.st_mode))
            return ENTRY_FILE;
        if (S_ISDIR(lsb.st_mode))
            return ENTRY_DIR;
        if (!S_ISLNK(lsb.st_mode))
            return ENTRY_NONE;
    } else if (e->d_type != DT_LNK) {
        return ENTRY_NONE;
    }
    char *r = realpath(path, NULL);
    if (!r) {
        if (errno != ENOENT) {
            w->rep->dirs_unreadable++;
            note_errno(w, path, "cannot follow this link", errno);
        }
        return ENTRY_NONE;
    }
    if (!inside_root(w, r)) {
        w->rep->links_outside++;
        char why[120];
        snprintf(why, sizeof why, "a link out of %.80s: not followed", w->root);
        sync_warn(w->rep, w->source, path, 0, why);
        free(r);
        return ENTRY_NONE;
    }
    struct stat sb;
    int kind = stat(r, &sb) < 0      ? ENTRY_NONE
               : S_ISDIR(sb.st_mode) ? ENTRY_DIR
               : S_ISREG(sb.st_mode) ? ENTRY_FILE
                                     : ENTRY_NONE;
    if (kind == ENTRY_NONE)
        free(r);
    else
        *real = r;
    return kind;
}

/* Where a folder's entries go: the walk and what the folder is. */
typedef struct place {
    walk *w;
    int dirfd;          /* the folder being listed */
    const char *name;   /* Claude: the project directory's name */
    const char *parent; /* Claude sub-agents: their session */
    int depth;          /* Codex: levels below sessions/ */
} place;

/*
 * A plain file's (size, inode, mtime) for the pre-pass, looked up by its
 * name in the folder being listed (no walk of its path again, no link
 * followed). A link (j->real) and a file that became something else since
 * the listing are left to the pre-pass's stat of their resolved path.
 */
static void entry_stat(const place *at, const struct dirent *e, sync_job *j)
{
    if (!j->real && fstatat(at->dirfd, e->d_name, &j->sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(j->sb.st_mode))
        j->statted = 1;
}

/* <session>/subagents/agent-*.jsonl under one Claude project directory. */
static int claude_subagent(void *ud, const struct dirent *e, char *path)
{
    const place *at = ud;
    if (!sync_ends_with(e->d_name, ".jsonl")) {
        free(path);
        return 0;
    }
    sync_job j = {.source = SRC_CLAUDE, .subagent = 1, .path = path, .home = at->w->home};
    char *st = stem(e->d_name);
    char id[STORE_ID_MAX + 1];
    snprintf(id, sizeof id, "%.100s:%.90s", at->parent, st ? st : "");
    free(st);
    j.session_id = sync_dup(id);
    j.parent = sync_dup(at->parent);
    j.project_dir = sync_dup(at->name);
    if (!j.session_id || !j.parent || !j.project_dir) {
        job_free(&j);
        return MCPAGE_ENOMEM;
    }
    if (entry_kind(at->w, e, j.path, &j.real) != ENTRY_FILE) {
        job_free(&j);
        return 0;
    }
    entry_stat(at, e, &j);
    return jobs_add(at->w->js, &j);
}

/* One entry of a Claude project directory: a session, an older
   agent-<id>.jsonl beside them, or a session's folder of sub-agents. */
static int claude_entry(void *ud, const struct dirent *e, char *path)
{
    const place *at = ud;
    char *real = NULL;
    int kind = entry_kind(at->w, e, path, &real);
    if (kind == ENTRY_FILE && sync_ends_with(e->d_name, ".jsonl")) {
        sync_job j = {.source = SRC_CLAUDE, .path = path, .real = real, .home = at->w->home};
        j.session_id = stem(e->d_name);
        j.project_dir = sync_dup(at->name);
        j.subagent = strncmp(e->d_name, "agent-", 6) == 0;
        j.bare_agent = j.subagent;
        if (!j.session_id || !j.project_dir) {
            job_free(&j);
            return MCPAGE_ENOMEM;
        }
        entry_stat(at, e, &j);
        return jobs_add(at->w->js, &j);
    }
    int rc = 0;
    if (kind == ENTRY_DIR) {
        char *sub = sync_join(path, "subagents");
        DIR *d = sub ? open_dir(at->w, sub) : NULL;
        place in = {.w = at->w, .dirfd = d ? dirfd(d) : -1, .name = at->name, .parent = e->d_name};
        rc = !sub ? MCPAGE_ENOMEM : d ? sync_dir_each(d, sub, claude_subagent, &in) : 0;
        free(sub);
    }
    free(real);
    free(path);
    return rc;
}

/* One Claude project directory. */
static int claude_project(void *ud, const struct dirent *e, char *path)
{
    const place *at = ud;
    char *real = NULL;
    int rc = 0;
    if (entry_kind(at->w, e, path, &real) == ENTRY_DIR) {
        DIR *d = open_dir(at->w, path);
        place in = {.w = at->w, .dirfd = d ? dirfd(d) : -1, .name = e->d_name};
        rc = d ? sync_dir_each(d, path, claude_entry, &in) : 0;
    }
    free(real);
    free(path);
    return rc;
}

static int discover_claude(walk *w, const char *home)
{
    char *root = sync_join(home, "projects");
    if (!root)
        return MCPAGE_ENOMEM;
    DIR *d = open_dir(w, root);
    int rc = 0;
    if (d) {
        w->rep->claude_found = 1;
        place at = {.w = w, .dirfd = dirfd(d)};
        rc = sync_dir_each(d, root, claude_project, &at);
    }
    free(root);
    return rc;
}

/* The session id of a rollout: the uuid that ends its name, else the stem. */
static char *codex_session_id(const char *name)
{
    char *s = stem(name);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (n > 36 && s[n - 37] == '-' && s[n - 28] == '-' && s[n - 23] == '-') {
        memmove(s, s + n - 36, 37);
    }
    return s;
}

static int discover_codex_dir(walk *w, const char *dir, int depth);

/* One entry under sessions/: a rollout, or a folder (YYYY/MM/DD). */
static int codex_entry(void *ud, const struct dirent *e, char *path)
{
    const place *at = ud;
    char *real = NULL;
    int kind = entry_kind(at->w, e, path, &real);
    int legacy = strncmp(e->d_name, "rollout-", 8) == 0 && sync_ends_with(e->d_name, ".json");
    if (kind == ENTRY_FILE && (sync_ends_with(e->d_name, ".jsonl") || legacy)) {
        sync_job j = {
            .source = SRC_CODEX, .path = path, .real = real, .legacy = legacy, .home = at->w->home};
        j.session_id = codex_session_id(e->d_name);
        if (!j.session_id) {
            job_free(&j);
            return MCPAGE_ENOMEM;
        }
        entry_stat(at, e, &j);
        return jobs_add(at->w->js, &j);
    }
    int rc = kind == ENTRY_DIR ? discover_codex_dir(at->w, path, at->depth + 1) : 0;
    free(real);
    free(path);
    return rc;
}

static int discover_codex_dir(walk *w, const char *dir, int depth)
{
    if (depth > SYNC_DEPTH_MAX)
        return 0;
    DIR *d = open_dir(w, dir);
    if (!d)
        return 0;
    if (depth == 0)
        w->rep->codex_found = 1;
    place at = {.w = w, .dirfd = dirfd(d), .depth = depth};
    return sync_dir_each(d, dir, codex_entry, &at);
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sync_job *)a)->path, ((const sync_job *)b)->path);
}

/* Walks one agent's folder, its links confined to it. A folder that does
 * not exist is not an error (the report says what was found). */
static int walk_home(sync_jobs *js, sync_report *rep, const char *home, int source)
{
    char *root = realpath(home, NULL);
    if (!root)
        return 0;
    walk w = {.js = js, .rep = rep, .root = root, .rootlen = strlen(root), .home = home};
    w.source = source == SRC_CLAUDE ? "claude" : "codex";
    int rc = 0;
    if (source == SRC_CLAUDE) {
        rc = discover_claude(&w, home);
    } else {
        /* Codex moves a rollout from sessions/ to archived_sessions/ when
           the user archives its conversation: the same session, read on. */
        static const char *const dirs[] = {"sessions", "archived_sessions"};
        for (size_t d = 0; rc == 0 && d < sizeof dirs / sizeof dirs[0]; d++) {
            char *dir = sync_join(home, dirs[d]);
            if (!dir) {
                rc = MCPAGE_ENOMEM;
                break;
            }
            rc = discover_codex_dir(&w, dir, 0);
            free(dir);
        }
    }
    free(root);
    return rc;
}

/* Walks one source's home under its name: what it finds and what goes
 * wrong are that source's in the report. */
static int walk_source(sync_jobs *js, sync_report *rep, const char *home, int source,
                       const char *name)
{
    sync_mark m;
    sync__source_begin(rep, name, &m);
    size_t before = js->n;
    int claude = rep->claude_found, codex = rep->codex_found;
    int rc = walk_home(js, rep, home, source);
    sync_source_report *r = sync__source(rep, name);
    if (r) {
        r->found |= source == SRC_CLAUDE ? rep->claude_found : rep->codex_found;
        r->files += (int64_t)(js->n - before);
    }
    if (strcmp(name, "claude") != 0 && strcmp(name, "codex") != 0) {
        /* another agent's folder in this format says nothing of Claude's or Codex's */
        rep->claude_found = claude;
        rep->codex_found = codex;
    }
    sync__source_end(rep, &m);
    return rc;
}

/* The ids of a described source's sessions carry its prefix (a bare
 * agent-<id> file gets its id, and its prefix, in the pre-pass). */
static int name_jobs(sync_jobs *js, size_t from, const sync_desc *d)
{
    for (size_t i = from; i < js->n; i++) {
        sync_job *j = &js->v[i];
        j->source_name = d->name;
        j->id_prefix = d->id_prefix;
        char id[STORE_ID_MAX + 1];
        if (!j->bare_agent && d->id_prefix[0]) {
            snprintf(id, sizeof id, "%s%.150s", d->id_prefix, j->session_id);
            char *dup = sync_dup(id);
            if (!dup)
                return MCPAGE_ENOMEM;
            free(j->session_id);
            j->session_id = dup;
        }
        if (j->parent && d->id_prefix[0]) {
            snprintf(id, sizeof id, "%s%.150s", d->id_prefix, j->parent);
            char *dup = sync_dup(id);
            if (!dup)
                return MCPAGE_ENOMEM;
            free(j->parent);
            j->parent = dup;
        }
    }
    return 0;
}

int sync_discover(sync_jobs *js, const sync_options *o, sync_report *rep)
{
    int rc = 0;
    if (o->claude_home)
        rc = walk_source(js, rep, o->claude_home, SRC_CLAUDE, "claude");
    if (rc == 0 && o->codex_home)
        rc = walk_source(js, rep, o->codex_home, SRC_CODEX, "codex");
    for (size_t i = 0; rc == 0 && i < o->ndescribed; i++) {
        const sync_desc *d = o->described[i].desc;
        if (!o->described[i].home || !d->writes ||
            (strcmp(d->writes, "claude") != 0 && strcmp(d->writes, "codex") != 0))
            continue; /* OpenCode's, VS Code's, Aider's and Cursor IDE's are folded (sync_fold.c) */
        size_t before = js->n;
        int source = strcmp(d->writes, "claude") == 0 ? SRC_CLAUDE : SRC_CODEX;
        rc = walk_source(js, rep, o->described[i].home, source, d->name);
        if (rc == 0)
            rc = name_jobs(js, before, d);
    }
    if (rc == 0 && js->n > 1)
        qsort(js->v, js->n, sizeof js->v[0], job_cmp);
    return rc;
}

/* ---- a named pass: the files a watcher named, under the walk's rules ---- */

/* What follows `dir` + "/" in `path`, or NULL when path is not below it. */
static const char *below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/' ? path + n + 1 : NULL;
}

/*
 * Splits `rest` (a path below a session folder) at its slashes into at most
 * `max` parts, in place. The number of parts; 0 when a part starts with '.'
 * or there are more than `max` (the walk never lists it), -1 when a part is
 * empty (a path the walk never spells so).
 */
static int split_parts(char *rest, char **part, int max)
{
    int n = 0;
    for (char *p = rest;;) {
        if (!*p)
            return -1;
        if (n == max)
            return 0;
        part[n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            break;
        *slash = '\0';
        p = slash + 1;
    }
    for (int i = 0; i < n; i++)
        if (part[i][0] == '.')
            return 0;
    return n;
}

/* A folder entry's type from lstat, as a listing gives it; -1 for a folder. */
static int entry_type(const struct stat *sb)
{
    return S_ISREG(sb->st_mode)    ? DT_REG
           : S_ISDIR(sb->st_mode)  ? -1
           : S_ISLNK(sb->st_mode)  ? DT_LNK
           : S_ISFIFO(sb->st_mode) ? DT_FIFO
           : S_ISCHR(sb->st_mode)  ? DT_CHR
           : S_ISBLK(sb->st_mode)  ? DT_BLK
           : S_ISSOCK(sb->st_mode) ? DT_SOCK
                                   : DT_UNKNOWN;
}

/*
 * Hands file `part[nparts - 1]` of the folder `from`/part[0]/.../ (joined
 * as the walk joins them: the job's path is the walk's) to the walk's
 * callback for that folder, as its listing would. The session folder
 * `from` is opened as the walk opens it (links followed); each folder
 * below it must be a folder, no link: the walk follows a link to a folder
 * inside the home, which a named pass leaves to a walk (SYNC_WALK), as it
 * leaves a name that is now a folder. A file or folder gone, or a file
 * where a folder was, is nothing, as in the walk.
 */
static int named_entry(place *at, const char *from, char *const *part, int nparts, sync_entry_fn fn)
{
    char dir[SYNC_PATH_MAX];
    struct stat sb;
    int k = snprintf(dir, sizeof dir, "%s", from);
    if (stat(dir, &sb) < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : SYNC_WALK;
    if (!S_ISDIR(sb.st_mode))
        return 0;
    for (int i = 0; i + 1 < nparts; i++) {
        int m = k > 0 && (size_t)k < sizeof dir
                    ? snprintf(dir + k, sizeof dir - (size_t)k, "/%s", part[i])
                    : -1;
        if (m < 0 || (size_t)(k += m) >= sizeof dir)
            return SYNC_WALK;
        if (lstat(dir, &sb) < 0)
            return errno == ENOENT || errno == ENOTDIR ? 0 : SYNC_WALK;
        if (S_ISLNK(sb.st_mode))
            return SYNC_WALK;
        if (!S_ISDIR(sb.st_mode))
            return 0;
    }
    const char *name = part[nparts - 1];
    struct dirent de = {0};
    if (strlen(name) >= sizeof de.d_name)
        return 0; /* no folder lists such a name */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : SYNC_WALK;
    int rc = 0, type = 0;
    if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        rc = errno == ENOENT ? 0 : SYNC_WALK; /* deleted: nothing, as in the walk */
    else if ((type = entry_type(&sb)) < 0)
        rc = SYNC_WALK; /* a folder: its files are the walk's */
    else {
        memcpy(de.d_name, name, strlen(name) + 1);
        de.d_type = (unsigned char)type;
        char *path = sync_join(dir, name);
        at->dirfd = fd;
        rc = path ? fn(at, &de, path) : MCPAGE_ENOMEM;
    }
    close(fd);
    return rc;
}

/* One named path under a Claude home's projects/ (`rest` below it). */
static int named_claude(walk *w, const char *root, char *rest)
{
    char *part[4];
    int n = split_parts(rest, part, 4);
    if (n < 0)
        return SYNC_WALK;
    if (n == 2) { /* <project>/<session>.jsonl: a file of the project's listing */
        place at = {.w = w, .name = part[0]};
        return named_entry(&at, root, part, 2, claude_entry);
    }
    if (n == 4 && strcmp(part[2], "subagents") == 0) { /* <project>/<session>/subagents/x */
        place at = {.w = w, .name = part[0], .parent = part[1]};
        return named_entry(&at, root, part, 4, claude_subagent);
    }
    return 0; /* no session file there: the walk lists none */
}

/* One named path under a Codex home's sessions/ or archived_sessions/. */
static int named_codex(walk *w, const char *root, char *rest)
{
    char *part[SYNC_DEPTH_MAX + 2];
    int n = split_parts(rest, part, SYNC_DEPTH_MAX + 2);
    if (n < 0)
        return SYNC_WALK;
    if (n == 0)
        return 0; /* past the walk's depth, or a hidden part: not listed */
    place at = {.w = w, .depth = n - 1};
    return named_entry(&at, root, part, n, codex_entry);
}

/* Where one home's sessions are: its session folders (walk's joins). */
typedef struct named_home {
    const char *home;
    int source;            /* SRC_CLAUDE or SRC_CODEX */
    const char *name;      /* the source's name in the report */
    const sync_desc *desc; /* a described source writing the format, or NULL */
    char *roots[2];        /* projects/, or sessions/ and archived_sessions/ */
} named_home;

static int named_path(sync_jobs *js, sync_report *rep, const named_home *h, size_t nh,
                      const char *path)
{
    const named_home *at = NULL;
    const char *root = NULL, *rest = NULL;
    for (size_t i = 0; i < nh; i++)
        for (int r = 0; r < 2 && h[i].roots[r]; r++) {
            const char *b = below(path, h[i].roots[r]);
            if (!b)
                continue;
            if (at)
                return SYNC_WALK; /* two sources' folders: the walk settles it */
            at = &h[i], root = h[i].roots[r], rest = b;
        }
    if (!at)
        return SYNC_WALK; /* a folded source's file, or one the walk alone knows */
    char *real = realpath(at->home, NULL), *copy = sync_dup(rest);
    int rc = copy ? 0 : MCPAGE_ENOMEM;
    if (rc == 0 && real) { /* a home gone has no files, as in the walk */
        walk w = {.js = js, .rep = rep, .root = real, .rootlen = strlen(real), .home = at->home};
        w.source = at->source == SRC_CLAUDE ? "claude" : "codex";
        sync_mark m;
        sync__source_begin(rep, at->name, &m);
        size_t before = js->n;
        rc = at->source == SRC_CLAUDE ? named_claude(&w, root, copy) : named_codex(&w, root, copy);
        sync__source_end(rep, &m);
        if (rc == 0 && at->desc)
            rc = name_jobs(js, before, at->desc);
    }
    free(real);
    free(copy);
    return rc;
}

int sync_discover_named(sync_jobs *js, const sync_options *o, char *const *paths, size_t n,
                        sync_report *rep)
{
    named_home h[2 + SYNC_REPORT_SOURCES] = {0};
    size_t nh = 0;
    int rc = 0;
    if (o->claude_home)
        h[nh++] = (named_home){o->claude_home, SRC_CLAUDE, "claude", NULL, {NULL, NULL}};
    if (o->codex_home)
        h[nh++] = (named_home){o->codex_home, SRC_CODEX, "codex", NULL, {NULL, NULL}};
    for (size_t i = 0; i < o->ndescribed && nh < sizeof h / sizeof h[0]; i++) {
        const sync_desc *d = o->described[i].desc;
        if (!o->described[i].home || !d->writes ||
            (strcmp(d->writes, "claude") != 0 && strcmp(d->writes, "codex") != 0))
            continue;
        int source = strcmp(d->writes, "claude") == 0 ? SRC_CLAUDE : SRC_CODEX;
        h[nh++] = (named_home){o->described[i].home, source, d->name, d, {NULL, NULL}};
    }
    for (size_t i = 0; i < nh && rc == 0; i++) {
        h[i].roots[0] = sync_join(h[i].home, h[i].source == SRC_CLAUDE ? "projects" : "sessions");
        if (h[i].source == SRC_CODEX)
            h[i].roots[1] = sync_join(h[i].home, "archived_sessions");
        if (!h[i].roots[0] || (h[i].source == SRC_CODEX && !h[i].roots[1]))
            rc = MCPAGE_ENOMEM;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = named_path(js, rep, h, nh, paths[i]);
    for (size_t i = 0; i < nh; i++) {
        free(h[i].roots[0]);
        free(h[i].roots[1]);
    }
    if (rc == 0 && js->n > 1)
        qsort(js->v, js->n, sizeof js->v[0], job_cmp);
    return rc;
}
