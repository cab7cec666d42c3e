/*
 * Transcript sync: one pass. Discovery (sync_discover.c) lists the files;
 * the pre-pass picks the changed ones with one stat each against the
 * stored source records, names older Claude agent-<id> files by their
 * parent session and lets one file own each session id; sync_file.c reads
 * the changed files; sessions still without a project get one last.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync.h"
#include "sync/sync_fold.h"
#include "sync/sync_internal.h"
#include "sync/sync_lines.h"
#include "sync/sync_raw.h"
#include "sync/sync_source.h"
#include "sync/sync_parse.h"

/* ---- default paths --------------------------------------------------- */

static int fmt_path(char *buf, size_t n, const char *a, const char *b)
{
    int k = snprintf(buf, n, "%s%s", a, b);
    return (k < 0 || (size_t)k >= n) ? MCPAGE_ERANGE : 0;
}

int sync_default_claude_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_CLAUDE_HOME");
    if (!e || !*e)
        e = getenv("CLAUDE_CONFIG_DIR");
    if (e && *e)
        return fmt_path(buf, n, e, "");
    return fmt_path(buf, n, sync_home_dir(), "/.claude");
}

int sync_default_codex_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_CODEX_HOME");
    if (!e || !*e)
        e = getenv("CODEX_HOME");
    if (e && *e)
        return fmt_path(buf, n, e, "");
    return fmt_path(buf, n, sync_home_dir(), "/.codex");
}

int sync_default_db(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_DB");
    if (e && *e)
        return fmt_path(buf, n, e, "");
    e = getenv("XDG_DATA_HOME");
    if (e && *e)
        return fmt_path(buf, n, e, "/mcpage/archive.db");
    return fmt_path(buf, n, sync_home_dir(), "/.local/share/mcpage/archive.db");
}

int sync_make_parent_dirs(const char *path)
{
    char tmp[SYNC_PATH_MAX];
    if (strlen(path) >= sizeof tmp)
        return MCPAGE_ERANGE;
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (!slash || slash == tmp)
        return 0;
    *slash = 0;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
            return MCPAGE_EIO;
        *p = '/';
    }
    if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
        return MCPAGE_EIO;
    return 0;
}

/* ---- projects of sessions without a cwd -------------------------------- */

/* The first line of a file (at most SYNC_BLOCK bytes), or NULL (also when
 * the file is refused: sync_file names it). */
static char *first_line(const sync_job *j, size_t *len)
{
    const char *home = j->home;
    char why[SYNC_WARNING_LEN];
    struct stat sb;
    int fd =
        sync_source_open(home ? home : "/", j->real ? j->real : j->path, 0, &sb, why, sizeof why);
    if (fd < 0)
        return NULL;
    char *buf = malloc(SYNC_BLOCK);
    ssize_t got = buf ? pread(fd, buf, SYNC_BLOCK, 0) : -1;
    close(fd);
    char *nl = got > 0 ? memchr(buf, '\n', (size_t)got) : NULL;
    *len = nl ? (size_t)(nl - buf) : got > 0 ? (size_t)got : 0;
    if (*len == 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/*
 * A project for a git origin: "https://user:token@github.com/o/r.git" and
 * "git@github.com:o/r.git" both give path "github.com/o/r", name "r"
 * (credentials never kept). 0, or -1 when it names no repository.
 */
static int origin_project(const char *url, char *path, size_t pathlen, char *name, size_t namelen)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *slash = strchr(p, '/'), *at = strchr(p, '@');
    if (at && (!slash || at < slash))
        p = at + 1;
    int k = snprintf(path, pathlen, "%s", p);
    if (k <= 0 || (size_t)k >= pathlen)
        return -1;
    char *colon = strchr(path, ':');
    if (!strstr(url, "://") && colon && (!strchr(path, '/') || colon < strchr(path, '/')))
        *colon = '/'; /* scp-like host:owner/repo */
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        path[--n] = 0;
    if (n > 4 && strcmp(path + n - 4, ".git") == 0)
        path[n -= 4] = 0;
    const char *base = strrchr(path, '/');
    if (!base || !base[1])
        return -1;
    snprintf(name, namelen, "%s", base + 1);
    return 0;
}

/*
 * A Codex session whose rollout names no cwd (in session_meta or any
 * turn_context): the project of its git origin, else the project named
 * "unknown", so list_projects still shows it. Only once the file has
 * settled: a live rollout may name its cwd in the next turn_context.
 */
static int codex_fallback_project(store *s, const sync_job *j, int64_t *pid)
{
    *pid = 0;
    if (j->sb.size < 0 || !sync_job_settled(j, &j->sb.mtime))
        return 0;
    char path[1024] = "unknown", name[256] = "unknown";
    size_t len = 0;
    char *line = j->legacy ? NULL : first_line(j, &len);
    if (line) {
        sync_tool_ids *ids = calloc(1, sizeof *ids);
        sync_record r;
        char why[8];
        if (ids && sync_codex_parse_line(line, len, ids, &r, why, sizeof why) == 0) {
            if (r.git_origin &&
                origin_project(r.git_origin, path, sizeof path, name, sizeof name)) {
                snprintf(path, sizeof path, "unknown");
                snprintf(name, sizeof name, "unknown");
            }
            sync_record_clear(&r);
        }
        free(ids);
        free(line);
    }
    return store_project_ensure(s, path, name, pid);
}

/* The project of a sibling session in the same Claude project directory. */
static int64_t sibling_project(store *s, const sync_jobs *js, const sync_job *j)
{
    for (size_t i = 0; i < js->n; i++) {
        const sync_job *o = &js->v[i];
        if (o == j || o->source != SRC_CLAUDE || !o->project_dir ||
            strcmp(o->project_dir, j->project_dir) != 0)
            continue;
        if (o->project_id > 0)
            return o->project_id;
        store_session_state st;
        if (o->project_id == 0 && store_session_state_get(s, o->session_id, &st) == 0 &&
            st.project_id > 0)
            return st.project_id;
    }
    return 0;
}

/*
 * A Claude session without any line carrying a cwd (a file of summary
 * lines, an early sub-agent) joins the project of another session in the
 * same project directory, or else a project named after the directory; a
 * Codex one gets codex_fallback_project. The candidates come from the
 * store, so sessions left without a project by a killed run are handled
 * by the next one.
 */
static int assign_orphans(store *s, sync_jobs *js)
{
    store_session_filter flt = {.without_project = 1};
    store_page pg = {.limit = STORE_LIMIT_MAX};
    store_sessions l;
    int rc = store_sessions_list(s, &flt, &pg, &l);
    if (rc < 0 || l.count == 0)
        return rc;
    int open = 0;
    for (size_t k = 0; k < l.count && rc == 0; k++) {
        sync_job *j = NULL;
        for (size_t i = 0; i < js->n && !j; i++)
            if (!js->v[i].same_session && strcmp(js->v[i].session_id, l.rows[k].session_id) == 0)
                j = &js->v[i];
        if (!j)
            continue; /* its file is gone: nothing to learn its project from */
        if (!open) {
            if ((rc = store_begin(s)) < 0)
                break;
            open = 1;
        }
        int64_t pid = 0;
        if (j->source == SRC_CODEX) {
            rc = codex_fallback_project(s, j, &pid);
            if (rc < 0 || pid == 0)
                continue;
        } else {
            pid = sibling_project(s, js, j);
            if (pid == 0)
                rc = store_project_ensure(s, j->project_dir, j->project_dir, &pid);
        }
        store_session_meta m = {.session_id = j->session_id, .project_id = pid};
        if (rc == 0)
            rc = store_session_put(s, &m);
        if (rc == 0)
            rc = store_session_refresh(s, j->session_id);
        j->project_id = pid;
    }
    store_sessions_free(&l);
    if (open) {
        if (rc == 0)
            rc = store_commit(s);
        else
            store_rollback(s);
    }
    return rc;
}
/* ---- the pre-pass ---------------------------------------------------- */

/*
 * The session id of an older Claude agent-<id>.jsonl beside the sessions:
 * "<parent>:agent-<id>" as for sub-agents in <session>/subagents/, the
 * parent from the sessionId its lines carry, so two projects' agent-<id>
 * never meet. `known` is the id a store already keeps for this path (kept
 * as it is). 0; 1 when the file names no parent yet and has not settled
 * (it waits); the id is then the project directory's.
 */
static int bare_agent_id(sync_job *j, const char *known)
{
    char *parent = NULL;
    if (!known) {
        size_t len = 0;
        char *line = first_line(j, &len);
        if (!line)
            return 1; /* nothing to read yet */
        json_t *v = line ? json_loadb(line, len, 0, NULL) : NULL;
        const char *sid = sync_json_str(v, "sessionId");
        if (sid && *sid && strlen(sid) <= 100)
            parent = sync_dup(sid);
        json_decref(v);
        free(line);
        if (!parent && !sync_job_settled(j, &j->sb.mtime))
            return 1;
    }
    char id[STORE_ID_MAX + 1];
    const char *pre = j->id_prefix ? j->id_prefix : "";
    if (known)
        snprintf(id, sizeof id, "%s", known);
    else
        snprintf(id, sizeof id, "%s%.100s:%.90s", pre, parent ? parent : j->project_dir,
                 j->session_id);
    if (parent && *pre) {
        /* an agent writing Claude's format: its parent carries its prefix too */
        char p[STORE_ID_MAX + 1];
        snprintf(p, sizeof p, "%s%.150s", pre, parent);
        char *dup = sync_dup(p);
        if (!dup) {
            free(parent);
            return MCPAGE_ENOMEM;
        }
        free(parent);
        parent = dup;
    }
    char *dup = sync_dup(id);
    if (!dup) {
        free(parent);
        return MCPAGE_ENOMEM;
    }
    sync__job_set_id(j, dup);
    if (parent) {
        free(j->parent);
        j->parent = parent;
    }
    return 0;
}

uint64_t sync__id_hash(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h ? h : 1; /* 0 is an empty slot's */
}

void sync__job_set_id(sync_job *j, char *id)
{
    free(j->session_id);
    j->session_id = id;
    j->id_hash = sync__id_hash(id);
}

/* One hash of the files' session ids, and how many files have it. */
typedef struct id_count {
    uint64_t hash;
    size_t files;
} id_count;

/* The slot of `hash` in a table of `mask` + 1 slots (open addressing). */
static id_count *count_slot(id_count *t, size_t mask, uint64_t hash)
{
    size_t i = (size_t)hash & mask;
    while (t[i].hash && t[i].hash != hash)
        i = (i + 1) & mask;
    return &t[i];
}

static int by_session(const void *a, const void *b)
{
    const sync_job *x = *(sync_job *const *)a, *y = *(sync_job *const *)b;
    int c = strcmp(x->session_id, y->session_id);
    return c ? c : strcmp(x->path, y->path);
}

/*
 * Two files that hold the same session id (a project directory copied, a
 * rollout both in sessions/ and archived_sessions/) would reset each other
 * on every sync. One owns the session: the longest, then the one read
 * before (unchanged), then the first by path. The others are not read.
 */
static int one_file_per_session(sync_jobs *js, sync_report *rep)
{
    if (js->n < 2)
        return 0;
    /* the files that may share their session with another: those whose id
       hashes alike, counted in a table of at least twice as many slots
       (gone files and files waiting to be named left out). A collision
       only adds a candidate. */
    size_t slots = 1024;
    while (slots < 2 * js->n)
        slots *= 2;
    id_count *t = calloc(slots, sizeof *t);
    sync_job **v = malloc(js->n * sizeof *v);
    if (!t || !v) {
        free(t);
        free(v);
        return MCPAGE_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < js->n; i++)
        if (js->v[i].sb.size >= 0) {
            uint64_t h = js->v[i].id_hash;
            assert(h == sync__id_hash(js->v[i].session_id));
            id_count *c = count_slot(t, slots - 1, h);
            c->hash = h;
            c->files++;
        }
    for (size_t i = 0; i < js->n; i++)
        if (js->v[i].sb.size >= 0 && count_slot(t, slots - 1, js->v[i].id_hash)->files > 1)
            v[n++] = &js->v[i];
    free(t);
    if (n > 1)
        qsort(v, n, sizeof *v, by_session);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && strcmp(v[b]->session_id, v[a]->session_id) == 0)
            b++;
        sync_job *owner = v[a];
        for (size_t k = a + 1; k < b; k++)
            if (v[k]->sb.size > owner->sb.size ||
                (v[k]->sb.size == owner->sb.size && !v[k]->changed && owner->changed))
                owner = v[k];
        for (size_t k = a; k < b; k++) {
            if (v[k] == owner)
                continue;
            v[k]->same_session = 1;
            sync_mark mark;
            sync__source_begin(rep,
                               v[k]->source_name            ? v[k]->source_name
                               : v[k]->source == SRC_CLAUDE ? "claude"
                                                            : "codex",
                               &mark);
            rep->files_same_session++;
            char why[SYNC_EXAMPLE_LEN];
            snprintf(why, sizeof why, "same session as %.200s: not read", owner->path);
            sync_example(rep, v[k]->path, 0, why);
            sync__source_end(rep, &mark);
        }
        a = b;
    }
    free(v);
    return 0;
}

/* The source record of `path` in `known` (ordered by path), from *k on. */
static const store_source *source_of(const store_sources *known, size_t *k, const char *path)
{
    while (*k < known->count && strcmp(known->rows[*k].path, path) < 0)
        (*k)++;
    return (*k < known->count && strcmp(known->rows[*k].path, path) == 0) ? &known->rows[*k] : NULL;
}

/*
 * Whether one file changed since its last sync (`src` its record, or NULL),
 * from the walk's stat of it (or a stat now), and how many bytes that
 * means for the progress bar. A file whose last line waited for its
 * newline is looked at again once it has settled. A file gone, or a bare
 * agent file that waits for its parent's name, gets st_size -1.
 */
static int look_at(sync_job *j, const store_source *src, sync_report *rep, int64_t *bytes_total)
{
    struct stat sb;
    if (!j->statted && stat(j->real ? j->real : j->path, &sb) < 0) {
        j->sb.size = -1;
        return 0;
    }
    if (!j->statted)
        sync_stat_keep(&j->sb, &sb);
    int rc;
    if (j->bare_agent && (rc = bare_agent_id(j, src ? src->session_id : NULL)) != 0) {
        j->sb.size = -1; /* waits for a line that names its parent */
        return rc < 0 ? rc : 0;
    }
    int64_t size = (int64_t)j->sb.size;
    int same = src && src->size == size && src->inode == (int64_t)j->sb.inode &&
               src->mtime_ns == (int64_t)j->sb.mtime.tv_sec * 1000000000 + j->sb.mtime.tv_nsec;
    int waiting = same && src->consumed < size && !j->legacy && sync_job_settled(j, &j->sb.mtime);
    if (same && !waiting) {
        if (src->consumed < size && !j->legacy) /* its last line still waits */
            sync_held(rep, j->path, (int64_t)j->sb.mtime.tv_sec + SYNC_SETTLED_SECONDS);
        return 0;
    }
    j->changed = 1;
    int64_t from = src && src->consumed <= size ? src->consumed : 0;
    *bytes_total += size - from;
    return 0;
}

/* One file per session, then the counts of changed and unchanged files. */
static int count_changed(sync_jobs *js, sync_report *rep, int64_t *changed)
{
    int rc = one_file_per_session(js, rep);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < js->n; i++) {
        sync_job *j = &js->v[i];
        if (j->sb.size < 0 || j->same_session)
            continue;
        if (j->changed)
            (*changed)++;
        else
            rep->files_unchanged++;
    }
    return 0;
}

/*
 * The source records of one machine, read while the walk lists the
 * folders: on a thread of its own when the machine has two cores (the
 * walk touches no store), else when the pre-pass asks for them.
 */
typedef struct sources_load {
    store *s;
    const char *host;
    store_sources known; /* ordered by path */
    int rc;              /* store_sources_all's status */
    int threaded;        /* read on `thread`, joined by sources_wait */
    pthread_t thread;
} sources_load;

static void *sources_main(void *arg)
{
    sources_load *l = arg;
    l->rc = store_sources_all(l->s, l->host, SYNC_FILES_MAX, &l->known);
    return NULL;
}

static void sources_start(sources_load *l, store *s, const char *host)
{
    *l = (sources_load){.s = s, .host = host};
    l->threaded = store_second_thread() && pthread_create(&l->thread, NULL, sources_main, l) == 0;
}

/* The records, once read; the store is the caller's again. */
static int sources_wait(sources_load *l)
{
    if (l->threaded)
        pthread_join(l->thread, NULL);
    else
        sources_main(l);
    l->threaded = 0;
    return l->rc;
}

/*
 * Which files changed since their last sync (look_at, the source records
 * merged with the walk's files in path order: no query per file).
 */
static int prepass(sources_load *l, sync_jobs *js, sync_report *rep, int64_t *changed,
                   int64_t *bytes_total)
{
    int rc = sources_wait(l);
    if (rc < 0)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < js->n && rc >= 0; i++)
        rc = look_at(&js->v[i], source_of(&l->known, &k, js->v[i].path), rep, bytes_total);
    return rc < 0 ? rc : count_changed(js, rep, changed);
}

/*
 * Whether a named pass decides alone what a walk would do with this file
 * (0), or must walk (SYNC_WALK). A walk lets one file own each session:
 * the longest of the files holding it. A named pass sees only its files,
 * so it reads a file only when no other can own its session: a file that
 * is its session's file in the store (read on this machine from this path)
 * and has not shrunk, or a new file whose session the store does not know.
 */
static int named_decides(store *s, const char *host, const sync_job *j, const store_source *src)
{
    store_session ses;
    int rc = store_session_get(s, j->session_id, &ses);
    if (rc == MCPAGE_ENOTFOUND)
        return src ? SYNC_WALK : 0;
    if (rc < 0)
        return rc;
    int own = ses.source_path && strcmp(ses.source_path, j->path) == 0 && ses.hostname &&
              strcmp(ses.hostname, host) == 0 && src && src->session_id &&
              strcmp(src->session_id, j->session_id) == 0 && src->size <= (int64_t)j->sb.size;
    store_session_clear(&ses);
    return own ? 0 : SYNC_WALK;
}

/* The prepass of a named pass: each file's record looked up by its path. */
static int prepass_named(store *s, sync_jobs *js, const char *host, sync_report *rep,
                         int64_t *changed, int64_t *bytes_total)
{
    int rc = 0;
    for (size_t i = 0; i < js->n && rc == 0; i++) {
        sync_job *j = &js->v[i];
        store_source src = {0};
        int got = store_source_get(s, host, j->path, &src);
        if (got < 0 && got != MCPAGE_ENOTFOUND)
            return got;
        rc = look_at(j, got == 0 ? &src : NULL, rep, bytes_total);
        if (rc == 0 && j->sb.size >= 0)
            rc = named_decides(s, host, j, got == 0 ? &src : NULL);
        store_source_clear(&src);
    }
    return rc != 0 ? rc : count_changed(js, rep, changed);
}

/* ---- the pass -------------------------------------------------------- */

/* Progress through the changed files. */
typedef struct pass_files {
    int64_t done, changed; /* files handled, files to handle */
    int64_t bytes_done, bytes_total;
} pass_files;

/*
 * Reads the changed files, several to a transaction (sync_group). When a
 * failure rolls back files of the group before it, the report and the
 * progress go back to where the group began and those files are read
 * again, each in its own transaction, up to the one that failed.
 */
static int read_changed(store *s, sync_jobs *js, const sync_options *o, sync_report *rep,
                        pass_files *p)
{
    sync_group g = {.opt = o};
    sync_report *saved = malloc(sizeof *saved); /* the report as the group began */
    if (!saved)
        return MCPAGE_ENOMEM;
    pass_files p0 = *p;
    size_t i = 0, first = 0, solo_end = 0;
    for (;;) {
        if (i == js->n) {
            if (sync_group_commit(s, &g) == 0)
                break;
            g.lost = g.nclaims > 0;
            sync_group_end(s, &g);
        } else if (js->v[i].changed && !js->v[i].same_session && o->stop && o->stop(o->stop_ud)) {
            rep->stopped = 1; /* commit what was read; the rest waits */
            i = js->n;
            continue;
        } else if (js->v[i].changed && !js->v[i].same_session) {
            if (!g.open) {
                *saved = *rep;
                p0 = *p;
                first = i;
            }
            g.solo = i < solo_end;
            sync_mark mark;
            const sync_job *j = &js->v[i];
            sync__source_begin(rep,
                               j->source_name            ? j->source_name
                               : j->source == SRC_CLAUDE ? "claude"
                                                         : "codex",
                               &mark);
            if (sync_file(s, &js->v[i], o, rep, &g, p->done, p->changed, &p->bytes_done,
                          p->bytes_total) < 0)
                js->v[i].project_id = -1;
            sync__source_end(rep, &mark);
            if (!g.lost) {
                p->done++;
                if (o->progress) {
                    sync_progress pr = {p->done, p->changed, p->bytes_done, p->bytes_total,
                                        js->v[i].path};
                    o->progress(o->progress_ud, &pr);
                }
            }
        }
        if (g.lost) {
            *rep = *saved;
            *p = p0;
            g.lost = 0;
            solo_end = i == js->n ? i : i + 1;
            i = first;
            continue;
        }
        if (i == js->n)
            break;
        i++;
    }
    sync_group_end(s, &g);
    sync_ahead_stop(g.ahead);
    sync_raw_free(g.raw);
    free(saved);
    return 0;
}

int sync_scan(const sync_options *opt, sync_report *rep)
{
    if (!opt || !rep)
        return MCPAGE_EINVAL;
    memset(rep, 0, sizeof *rep);
    sync_jobs js = {0};
    int rc = sync_discover(&js, opt, rep);
    rep->files_seen = (int64_t)js.n;
    sync_jobs_free(&js);
    if (rc == 0)
        rc = sync__fold_scan(opt, rep);
    return rc;
}

int sync__session_key(store *s, const sync_options *opt, const store_source *src, const char *id,
                      char *key)
{
    if (src && src->session_id && strcmp(src->session_id, id) == 0) {
        snprintf(key, STORE_ID_MAX + 1, "%s", id); /* this machine's session of the file */
        return 0;
    }
    int rc = store_session_key(s, opt->owner, id, key);
    return rc < 0 ? rc : strcmp(key, id) != 0;
}

const char *sync__parent_key(store *s, const sync_options *opt, const char *parent, char *buf)
{
    if (!parent || store_session_key(s, opt->owner, parent, buf) < 0)
        return parent;
    return buf;
}

/* What a pass begins with: its report emptied, its start time, and its
 * options with the machine's name and the owner filled in (into host and
 * owner, which must live as long as o). */
typedef struct pass_start {
    sync_options o;
    struct timespec t0;
    char host[256];
    char owner[STORE_OWNER_MAX + 1];
} pass_start;

static int pass_begin(const sync_options *opt, sync_report *rep, pass_start *ps)
{
    memset(rep, 0, sizeof *rep);
    clock_gettime(CLOCK_MONOTONIC, &ps->t0);
    ps->o = *opt;
    if (!ps->o.hostname) {
        if (gethostname(ps->host, sizeof ps->host - 1) < 0)
            snprintf(ps->host, sizeof ps->host, "unknown");
        ps->host[sizeof ps->host - 1] = '\0';
        ps->o.hostname = ps->host;
    }
    if (!ps->o.owner || !*ps->o.owner) {
        store_owner_default(ps->owner, sizeof ps->owner);
        ps->o.owner = ps->owner;
    }
    return store_owner_valid(ps->o.owner) ? 0 : MCPAGE_EINVAL;
}

static void pass_seconds(sync_report *rep, const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    rep->seconds = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int sync_run(store *s, const sync_options *opt, sync_report *rep)
{
    if (!s || !opt || !rep)
        return MCPAGE_EINVAL;
    pass_start ps;
    int rc = pass_begin(opt, rep, &ps);
    const sync_options o = ps.o;
    sync_jobs js = {0};
    sources_load known = {0};
    if (rc < 0)
        goto out;
    /* a store older than usage_calls: its sessions' calls, from its raw bytes */
    rc = sync_usage_backfill(s);
    if (rc == 0) /* and its file edits */
        rc = sync_edits_backfill(s);
    if (rc < 0)
        goto out;
    sources_start(&known, s, o.hostname);
    rc = sync_discover(&js, &o, rep);
    if (rc < 0)
        goto out;
    rep->files_seen = (int64_t)js.n;
    for (size_t i = 0; i < js.n; i++)
        js.v[i].settle = o.settle;
    pass_files p = {0};
    if ((rc = prepass(&known, &js, rep, &p.changed, &p.bytes_total)) < 0)
        goto out;
    store_sources_free(&known.known);
    if ((rc = read_changed(s, &js, &o, rep, &p)) < 0)
        goto out;
    rep->files_changed = p.changed;
    rep->files_done = p.done;
    rc = assign_orphans(s, &js);
    /* Gemini CLI and Copilot CLI: sync_fold.c */
    if (rc == 0 && !rep->stopped && o.stop && o.stop(o.stop_ud))
        rep->stopped = 1;
    if (rc == 0 && !rep->stopped)
        rc = sync__fold_run(s, &o, rep);
out:
    if (known.threaded) /* a walk that failed: the store is ours again */
        sources_wait(&known);
    store_sources_free(&known.known);
    sync_jobs_free(&js);
    pass_seconds(rep, &ps.t0);
    return rc;
}

/* 1 when a session a named pass read has no project yet (a walk gives it one). */
static int orphan_read(store *s, const sync_jobs *js)
{
    for (size_t i = 0; i < js->n; i++) {
        const sync_job *j = &js->v[i];
        if (!j->changed || j->same_session || j->sb.size < 0)
            continue;
        store_session_state st;
        if (store_session_state_get(s, j->session_id, &st) == 0 && st.project_id == 0)
            return 1;
    }
    return 0;
}

int sync_run_named(store *s, const sync_options *opt, char *const *paths, size_t n,
                   sync_report *rep)
{
    if (!s || !opt || !rep || (n && !paths))
        return MCPAGE_EINVAL;
    pass_start ps;
    int rc = pass_begin(opt, rep, &ps);
    const sync_options o = ps.o;
    sync_jobs js = {0};
    pass_files p = {0};
    if (rc == 0)
        rc = sync_discover_named(&js, &o, paths, n, rep);
    for (size_t i = 0; rc == 0 && i < js.n; i++)
        js.v[i].settle = o.settle;
    if (rc == 0)
        rc = prepass_named(s, &js, o.hostname, rep, &p.changed, &p.bytes_total);
    if (rc == SYNC_WALK) { /* nothing written yet: the walk decides */
        sync_jobs_free(&js);
        return sync_run(s, opt, rep);
    }
    rep->named = 1;
    rep->files_named = (int64_t)n;
    rep->files_seen = (int64_t)js.n;
    if (rc == 0)
        rc = read_changed(s, &js, &o, rep, &p);
    rep->files_changed = p.changed;
    rep->files_done = p.done;
    if (rc == 0)
        rep->walk_due = rep->files_failed > 0 || rep->stopped || orphan_read(s, &js);
    sync_jobs_free(&js);
    pass_seconds(rep, &ps.t0);
    return rc;
}
