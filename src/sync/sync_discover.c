/*
 * Transcript discovery: Claude Code's projects/<dir>/<session>.jsonl and
 * its sub-agents, Codex's rollouts under sessions/ and archived_sessions/.
 *
 * Links are followed only where they resolve inside the agent's own folder
 * (CLAUDE_HOME or CODEX_HOME, resolved with realpath): a transcript linked
 * to /etc/passwd is counted and left alone, never opened. A folder that
 * cannot be listed is counted and named in the report with its errno text.
 *
 * Each agent's folder is listed in two steps: its session folder down to
 * the folders that hold the transcripts (Claude's project directories,
 * Codex's days), then those folders as tasks on two threads, each task
 * with its own files and warnings, joined in the order of their paths
 * (docs/sync.md, "The walk on two threads").
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
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
/* The folders listed as tasks: Claude's project directories, and the
   folders this many levels below Codex's sessions/ (its days,
   YYYY/MM/DD). At most WALK_TASKS_MAX of them in one agent's folder;
   past it a folder is listed at once, on the walk's thread. */
#define WALK_TASK_DEPTH 3
#define WALK_TASKS_MAX  100000

typedef struct walk_tasks walk_tasks;
typedef struct walk_task walk_task;

/* A task's file by the part of its path below the task's folder. */
typedef struct job_key {
    const char *below; /* its path past the folder's and the '/' */
    size_t at;         /* its place in the task's files */
} job_key;

/* One walk under one agent's folder, or one task of it. */
typedef struct walk {
    sync_jobs *js;
    sync_report *rep;  /* the pass's report; NULL in a task (walk_report) */
    walk_task *task;   /* the task this walk lists, or NULL */
    walk_tasks *tasks; /* where the folders of tasks go (the walk above the tasks), or in a
                          task the tasks it is one of; NULL in a named pass */
    const char *root;  /* the agent's folder, resolved */
    size_t rootlen;
    const char *home;   /* the agent's folder as the options name it */
    const char *source; /* "claude" or "codex", for warnings */
} walk;

/* A folder listed on either thread: a Claude project directory or a Codex day. */
struct walk_task {
    char *path;       /* the folder, joined as the walk joins it */
    char *name;       /* Claude: the project directory's name; NULL for Codex */
    int depth;        /* Codex: its level below sessions/ */
    sync_jobs js;     /* the transcripts it holds */
    job_key *order;   /* js in path order (js.n keys), once listed */
    sync_report *rep; /* its warnings and counts, made on the first, or NULL */
    int rc;           /* its status */
};

/* The tasks of one agent's folder. */
struct walk_tasks {
    walk_task *v;
    size_t n, cap;
    size_t before;       /* files the pass had found before them */
    atomic_size_t next;  /* the next task a thread takes */
    atomic_size_t files; /* files the tasks found, counted against SYNC_FILES_MAX */
    atomic_int failed;   /* a task failed: the others stop */
    const walk *above;   /* the walk they come from (root, home, source) */
};

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

/* Takes ownership of j's strings, also on failure. The pass's files, a
 * task's counted with every task of its folder, at most SYNC_FILES_MAX. */
static int jobs_add(walk *w, sync_job *j)
{
    sync_jobs *js = w->js;
    size_t found = w->task ? w->tasks->before + atomic_fetch_add(&w->tasks->files, 1) : js->n;
    if (found >= SYNC_FILES_MAX) {
        job_free(j);
        return MCPAGE_ERANGE;
    }
    if (sync_grow((void **)&js->v, &js->cap, js->n, sizeof *js->v, 256) < 0) {
        job_free(j);
        return MCPAGE_ENOMEM;
    }
    j->id_hash = sync__id_hash(j->session_id); /* while the id is in this thread's cache */
    js->v[js->n++] = *j;
    return 0;
}

/* Where the walk's warnings and counts go: the pass's report, or a task's
 * own, made on its first (NULL when out of memory: the task fails). */
static sync_report *walk_report(walk *w)
{
    if (!w->task)
        return w->rep;
    if (!w->task->rep && !(w->task->rep = calloc(1, sizeof *w->task->rep)))
        w->task->rc = MCPAGE_ENOMEM;
    return w->task->rep;
}

static void note_errno(walk *w, const char *path, const char *what, int err)
{
    sync_report *rep = walk_report(w);
    char why[200], text[120];
    if (!rep)
        return;
    if (strerror_r(err, text, sizeof text) != 0) /* strerror's buffer is not the thread's own */
        snprintf(text, sizeof text, "error %d", err);
    snprintf(why, sizeof why, "%s: %s", what, text);
    sync_warn(rep, w->source, path, 0, why);
}

/* Counts a folder that could not be listed, or a link out of the root. */
static void count_in(walk *w, int link_outside)
{
    sync_report *rep = walk_report(w);
    if (rep && link_outside)
        rep->links_outside++;
    else if (rep)
        rep->dirs_unreadable++;
}

/* A directory, or NULL (a missing one silently: sub-agent folders are
 * optional; any other failure is counted and named). */
static DIR *open_dir(walk *w, const char *path)
{
    DIR *d = opendir(path);
    if (!d && errno != ENOENT && errno != ENOTDIR) {
        int err = errno;
        count_in(w, 0);
        note_errno(w, path, "cannot list this folder", err);
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
        sync_report *rep = walk_report(w);
        if (rep && (sync_ends_with(e->d_name, ".jsonl") || sync_ends_with(e->d_name, ".json")))
            sync_warn(rep, w->source, path, 0,
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
            int err = errno;
            count_in(w, 0);
            note_errno(w, path, "cannot follow this link", err);
        }
        return ENTRY_NONE;
    }
    if (!inside_root(w, r)) {
        count_in(w, 1);
        char why[120];
        snprintf(why, sizeof why, "a link out of %.80s: not followed", w->root);
        sync_report *rep = walk_report(w);
        if (rep)
            sync_warn(rep, w->source, path, 0, why);
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
    struct stat sb;
    if (!j->real && fstatat(at->dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(sb.st_mode)) {
        sync_stat_keep(&j->sb, &sb);
        j->statted = 1;
    }
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
    return jobs_add(at->w, &j);
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
        return jobs_add(at->w, &j);
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

/*
 * Keeps the folder `path` (taken: 1) as a task of the walk above the
 * tasks. 0 when the walk lists it at once instead: in a task or a named
 * pass, or past WALK_TASKS_MAX. MCPAGE_ENOMEM (path not taken).
 */
static int task_add(walk *w, char *path, const char *name, int depth)
{
    walk_tasks *ts = w->tasks;
    if (!ts || w->task || ts->n >= WALK_TASKS_MAX)
        return 0;
    char *dup = NULL;
    if ((name && !(dup = sync_dup(name))) ||
        sync_grow((void **)&ts->v, &ts->cap, ts->n, sizeof *ts->v, 64) < 0) {
        free(dup);
        return MCPAGE_ENOMEM;
    }
    ts->v[ts->n++] = (walk_task){.path = path, .name = dup, .depth = depth};
    return 1;
}

/* The sessions of one Claude project directory. */
static int list_project(walk *w, const char *path, const char *name)
{
    DIR *d = open_dir(w, path);
    place in = {.w = w, .dirfd = d ? dirfd(d) : -1, .name = name};
    return d ? sync_dir_each(d, path, claude_entry, &in) : 0;
}

/* One Claude project directory: a task, or listed at once. */
static int claude_project(void *ud, const struct dirent *e, char *path)
{
    const place *at = ud;
    char *real = NULL;
    int rc = 0;
    if (entry_kind(at->w, e, path, &real) == ENTRY_DIR &&
        (rc = task_add(at->w, path, e->d_name, 0)) == 0)
        rc = list_project(at->w, path, e->d_name);
    free(real);
    if (rc != 1)
        free(path);
    return rc > 0 ? 0 : rc;
}

static int discover_claude(walk *w, const char *home)
{
    char *root = sync_join(home, "projects");
    if (!root)
        return MCPAGE_ENOMEM;
    DIR *d = open_dir(w, root);
    int rc = 0;
    if (d) {
        assert(!w->task);
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
        return jobs_add(at->w, &j);
    }
    int rc = 0;
    if (kind == ENTRY_DIR && at->depth + 1 == WALK_TASK_DEPTH)
        rc = task_add(at->w, path, NULL, at->depth + 1);
    if (kind == ENTRY_DIR && rc == 0)
        rc = discover_codex_dir(at->w, path, at->depth + 1);
    free(real);
    if (rc != 1)
        free(path);
    return rc > 0 ? 0 : rc;
}

static int discover_codex_dir(walk *w, const char *dir, int depth)
{
    if (depth > SYNC_DEPTH_MAX)
        return 0;
    DIR *d = open_dir(w, dir);
    if (!d)
        return 0;
    if (depth == 0) {
        assert(!w->task); /* tasks are folders below */
        w->rep->codex_found = 1;
    }
    place at = {.w = w, .dirfd = dirfd(d), .depth = depth};
    return sync_dir_each(d, dir, codex_entry, &at);
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sync_job *)a)->path, ((const sync_job *)b)->path);
}

/* Puts the files in path order; most often they are already (each
 * folder's tasks are), and one look says so. */
static void jobs_sort(sync_jobs *js)
{
    size_t i = 1;
    while (i < js->n && job_cmp(&js->v[i - 1], &js->v[i]) < 0)
        i++;
    if (i < js->n)
        qsort(js->v, js->n, sizeof js->v[0], job_cmp);
}

/* The paths' order, a folder's path read as if it ended in '/': the
 * order of the files below it. */
static int task_cmp(const void *a, const void *b)
{
    const unsigned char *x = (const unsigned char *)((const walk_task *)a)->path;
    const unsigned char *y = (const unsigned char *)((const walk_task *)b)->path;
    while (*x && *x == *y)
        x++, y++;
    int cx = *x ? *x : '/', cy = *y ? *y : '/';
    return cx != cy ? cx - cy : (int)*x - (int)*y;
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(((const job_key *)a)->below, ((const job_key *)b)->below);
}

/*
 * A task's files in path order. All lie below its folder, so the names
 * below it decide, and no comparison reads the folder's path again.
 */
static int task_sort(walk_task *t)
{
    size_t skip = strlen(t->path) + 1;
    t->order = malloc((t->js.n ? t->js.n : 1) * sizeof *t->order);
    if (!t->order)
        return MCPAGE_ENOMEM;
    for (size_t i = 0; i < t->js.n; i++) {
        const char *p = t->js.v[i].path;
        assert(strncmp(p, t->path, skip - 1) == 0 && p[skip - 1] == '/');
        t->order[i] = (job_key){p + skip, i};
    }
    if (t->js.n > 1)
        qsort(t->order, t->js.n, sizeof *t->order, key_cmp);
    return 0;
}

/* Lists one task's folder as the walk above would have, then sorts its files. */
static void task_run(walk_tasks *ts, walk_task *t)
{
    const walk *up = ts->above;
    walk w = {.js = &t->js, .task = t, .tasks = ts, .root = up->root, .rootlen = up->rootlen};
    w.home = up->home;
    w.source = up->source;
    int rc =
        t->name ? list_project(&w, t->path, t->name) : discover_codex_dir(&w, t->path, t->depth);
    if (rc == 0 && t->rc == 0)
        rc = task_sort(t);
    if (rc < 0 && t->rc == 0)
        t->rc = rc;
    if (t->rc < 0)
        atomic_store(&ts->failed, 1);
}

static void *tasks_main(void *arg)
{
    walk_tasks *ts = arg;
    for (size_t i; !atomic_load(&ts->failed) && (i = atomic_fetch_add(&ts->next, 1)) < ts->n;)
        task_run(ts, &ts->v[i]);
    return NULL;
}

/* A task's warnings and counts, as if the walk had met them itself. */
static void report_join(sync_report *rep, const sync_report *t)
{
    rep->dirs_unreadable += t->dirs_unreadable;
    rep->links_outside += t->links_outside;
    rep->warnings += t->warnings;
    for (int i = 0; i < t->nwarnings && rep->nwarnings < SYNC_WARNINGS_MAX; i++)
        memcpy(rep->warning_list[rep->nwarnings++], t->warning_list[i], SYNC_WARNING_LEN);
    for (int i = 0; i < t->nsources; i++) {
        sync_source_report *r = sync__source(rep, t->sources[i].name);
        if (!r)
            continue;
        r->warnings += t->sources[i].warnings;
        if (!r->warning[0])
            memcpy(r->warning, t->sources[i].warning, sizeof r->warning);
    }
}

static void tasks_free(walk_tasks *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        free(ts->v[i].path);
        free(ts->v[i].name);
        free(ts->v[i].rep);
        free(ts->v[i].order);
        sync_jobs_free(&ts->v[i].js);
    }
    free(ts->v);
}

/*
 * Lists the tasks on two threads (on one when the machine has one core or
 * a thread cannot start), then adds their files to the walk's and their
 * warnings to its report, in the order of the tasks' paths: the files stay
 * in path order when the walk's were.
 */
static int tasks_run(walk *w, walk_tasks *ts)
{
    ts->above = w;
    ts->before = w->js->n;
    pthread_t th;
    int two = ts->n > 1 && store_second_thread() && pthread_create(&th, NULL, tasks_main, ts) == 0;
    tasks_main(ts);
    if (two)
        pthread_join(th, NULL);
    size_t files = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (ts->v[i].rc < 0)
            return ts->v[i].rc;
        files += ts->v[i].js.n;
    }
    sync_jobs *js = w->js;
    if (js->cap < js->n + files) {
        void *v = realloc(js->v, (js->n + files) * sizeof *js->v);
        if (!v)
            return MCPAGE_ENOMEM;
        js->v = v;
        js->cap = js->n + files;
    }
    qsort(ts->v, ts->n, sizeof *ts->v, task_cmp);
    for (size_t i = 0; i < ts->n; i++) {
        walk_task *t = &ts->v[i];
        if (t->rep)
            report_join(w->rep, t->rep);
        for (size_t k = 0; k < t->js.n; k++)
            js->v[js->n++] = t->js.v[t->order[k].at];
        t->js.n = 0; /* the strings are the walk's now */
    }
    return 0;
}

/* Walks one agent's folder, its links confined to it. A folder that does
 * not exist is not an error (the report says what was found). */
static int walk_home(sync_jobs *js, sync_report *rep, const char *home, int source)
{
    char *root = realpath(home, NULL);
    if (!root)
        return 0;
    walk_tasks ts = {0};
    walk w = {.js = js, .rep = rep, .tasks = &ts, .root = root, .rootlen = strlen(root)};
    w.home = home;
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
    if (rc == 0 && ts.n)
        rc = tasks_run(&w, &ts);
    tasks_free(&ts);
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
            sync__job_set_id(j, dup);
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
    if (rc == 0)
        jobs_sort(js);
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
