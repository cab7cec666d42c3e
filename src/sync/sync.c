/*
 * Transcript sync: discovery of transcript files, the incremental rules
 * and the batching that makes a killed sync resume exactly.
 *
 * Per file: unchanged size, inode and mtime = skipped without opening it.
 * Otherwise reading continues at the session's consumed offset (the bytes
 * of complete lines already stored) unless the file was truncated (size
 * below that offset), replaced (another inode at the same path) or
 * rewritten (the first bytes hash differently): then the session is reset
 * and read again from byte 0. A last line without its newline waits for
 * the next sync. Each batch (lines, raw bytes, session facts, consumed
 * offset, source record) is one transaction.
 */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "sync/sync.h"
#include "sync/sync_parse.h"

#define SYNC_HEAD_MAX     4096               /* bytes hashed to detect a rewritten file */
#define SYNC_EVENTS_PROBE (64 * 1024)        /* bytes read to tell an events-only rollout */
#define SYNC_LEGACY_MAX   (256 << 20)        /* largest legacy .json rollout read */
#define SYNC_BLOCK        (1024 * 1024)      /* read size */
#define SYNC_DEPTH_MAX    6                  /* directory levels walked under sessions/ */
#define SYNC_FILES_MAX    (10 * 1000 * 1000) /* transcript files in one pass */

enum { SRC_CLAUDE, SRC_CODEX };

typedef struct sync_job {
    char *path;
    char *session_id;
    char *parent;      /* parent session for sub-agents in <session>/subagents/ */
    char *project_dir; /* Claude's mangled project directory name */
    int source;
    int subagent;
    int legacy;         /* a Codex rollout of the 2025 TypeScript CLI: one JSON document */
    int changed;        /* set by the pre-pass */
    int64_t project_id; /* its session's project after this run; -1 = none */
} sync_job;

typedef struct sync_jobs {
    sync_job *v;
    size_t n, cap;
} sync_jobs;

/* ---- default paths --------------------------------------------------- */

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_dir : "/";
}

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
    return fmt_path(buf, n, home_dir(), "/.claude");
}

int sync_default_codex_home(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_CODEX_HOME");
    if (!e || !*e)
        e = getenv("CODEX_HOME");
    if (e && *e)
        return fmt_path(buf, n, e, "");
    return fmt_path(buf, n, home_dir(), "/.codex");
}

int sync_default_db(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_DB");
    if (e && *e)
        return fmt_path(buf, n, e, "");
    e = getenv("XDG_DATA_HOME");
    if (e && *e)
        return fmt_path(buf, n, e, "/mcpage/archive.db");
    return fmt_path(buf, n, home_dir(), "/.local/share/mcpage/archive.db");
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

/* ---- discovery ------------------------------------------------------- */

static char *sync_dup(const char *src)
{
    if (!src)
        return NULL;
    size_t n = strlen(src);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, src, n + 1);
    return d;
}

static char *join(const char *a, const char *b)
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

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static char *stem(const char *name)
{
    size_t n = strlen(name);
    if (ends_with(name, ".jsonl"))
        n -= 6;
    else if (ends_with(name, ".json"))
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
    free(j->session_id);
    free(j->parent);
    free(j->project_dir);
}

static void jobs_free(sync_jobs *js)
{
    for (size_t i = 0; i < js->n; i++)
        job_free(&js->v[i]);
    free(js->v);
    memset(js, 0, sizeof *js);
}

static int jobs_add(sync_jobs *js, sync_job *j)
{
    if (js->n >= SYNC_FILES_MAX) {
        job_free(j);
        return MCPAGE_ERANGE;
    }
    if (js->n == js->cap) {
        size_t cap = js->cap ? js->cap * 2 : 256;
        sync_job *v = realloc(js->v, cap * sizeof *v);
        if (!v) {
            job_free(j);
            return MCPAGE_ENOMEM;
        }
        js->v = v;
        js->cap = cap;
    }
    js->v[js->n++] = *j;
    return 0;
}

/* File type from readdir when the file system gives it (no stat). */
static int entry_is(const struct dirent *e, const char *path, int want_dir)
{
    if (e->d_type == DT_REG)
        return !want_dir;
    if (e->d_type == DT_DIR)
        return want_dir;
    struct stat sb; /* DT_UNKNOWN or a symlink: follow it */
    if (stat(path, &sb) < 0)
        return 0;
    return want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode);
}

/* <session>/subagents/agent-*.jsonl under one Claude project directory. */
static int claude_subagents(sync_jobs *js, const char *sessdir, const char *parent,
                            const char *projdir)
{
    char *sub = join(sessdir, "subagents");
    if (!sub)
        return MCPAGE_ENOMEM;
    DIR *d = opendir(sub);
    int rc = 0;
    if (!d)
        goto done;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".jsonl"))
            continue;
        sync_job j = {.source = SRC_CLAUDE, .subagent = 1};
        char *st = stem(e->d_name);
        char id[STORE_ID_MAX + 1];
        snprintf(id, sizeof id, "%.100s:%.90s", parent, st ? st : "");
        free(st);
        j.path = join(sub, e->d_name);
        j.session_id = sync_dup(id);
        j.parent = sync_dup(parent);
        j.project_dir = sync_dup(projdir);
        if (!j.path || !j.session_id || !j.parent || !j.project_dir) {
            job_free(&j);
            rc = MCPAGE_ENOMEM;
            break;
        }
        if (!entry_is(e, j.path, 0)) {
            job_free(&j);
            continue;
        }
        if ((rc = jobs_add(js, &j)) < 0)
            break;
    }
    closedir(d);
done:
    free(sub);
    return rc;
}

static int discover_claude(sync_jobs *js, const char *home)
{
    char *root = join(home, "projects");
    if (!root)
        return MCPAGE_ENOMEM;
    DIR *d = opendir(root);
    int rc = 0;
    if (!d)
        goto done;
    struct dirent *pe;
    while (rc == 0 && (pe = readdir(d))) {
        if (pe->d_name[0] == '.')
            continue;
        char *proj = join(root, pe->d_name);
        if (!proj) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        DIR *pd = entry_is(pe, proj, 1) ? opendir(proj) : NULL;
        struct dirent *e;
        while (pd && rc == 0 && (e = readdir(pd))) {
            if (e->d_name[0] == '.')
                continue;
            char *path = join(proj, e->d_name);
            if (!path) {
                rc = MCPAGE_ENOMEM;
                break;
            }
            if (ends_with(e->d_name, ".jsonl") && entry_is(e, path, 0)) {
                sync_job j = {.source = SRC_CLAUDE, .path = path};
                j.session_id = stem(e->d_name);
                j.project_dir = sync_dup(pe->d_name);
                j.subagent = strncmp(e->d_name, "agent-", 6) == 0;
                if (!j.session_id || !j.project_dir) {
                    job_free(&j);
                    rc = MCPAGE_ENOMEM;
                    break;
                }
                rc = jobs_add(js, &j);
            } else {
                if (entry_is(e, path, 1))
                    rc = claude_subagents(js, path, e->d_name, pe->d_name);
                free(path);
            }
        }
        if (pd)
            closedir(pd);
        free(proj);
    }
    closedir(d);
done:
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

static int discover_codex_dir(sync_jobs *js, const char *dir, int depth)
{
    if (depth > SYNC_DEPTH_MAX)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join(dir, e->d_name);
        if (!path) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        int legacy = strncmp(e->d_name, "rollout-", 8) == 0 && ends_with(e->d_name, ".json");
        if ((ends_with(e->d_name, ".jsonl") || legacy) && entry_is(e, path, 0)) {
            sync_job j = {.source = SRC_CODEX, .path = path, .legacy = legacy};
            j.session_id = codex_session_id(e->d_name);
            if (!j.session_id) {
                job_free(&j);
                rc = MCPAGE_ENOMEM;
                break;
            }
            rc = jobs_add(js, &j);
        } else {
            if (entry_is(e, path, 1))
                rc = discover_codex_dir(js, path, depth + 1);
            free(path);
        }
    }
    closedir(d);
    return rc;
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sync_job *)a)->path, ((const sync_job *)b)->path);
}

/* ---- reading one file ------------------------------------------------ */

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Hash of the first n bytes of fd. */
/*
 * A rollout of the 2025 TypeScript Codex CLI (sessions/rollout-<date>-
 * <uuid>.json, rewritten whole at each save) is one JSON document,
 * {"session": {id, timestamp, instructions}, "items": [response items]}.
 * It is read as the JSONL rollouts that followed it: a first line of
 * session facts, then one item per line, written to an anonymous file
 * that stands in for it (*out; the archive's raw copy is that JSONL).
 * Each save appends items, so the JSONL grows by lines and later syncs
 * read only the new ones. 0, or MCPAGE_EPARSE with the reason in `why`.
 */
static int codex_legacy_jsonl(int fd, int64_t size, int *out, char *why, size_t whylen)
{
    *out = -1;
    if (size > SYNC_LEGACY_MAX) {
        snprintf(why, whylen, "a legacy rollout over %d MiB is not read", SYNC_LEGACY_MAX >> 20);
        return MCPAGE_EPARSE;
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf)
        return MCPAGE_ENOMEM;
    ssize_t got = pread(fd, buf, (size_t)size, 0);
    if (got != (ssize_t)size) {
        free(buf);
        return MCPAGE_EIO;
    }
    json_error_t err;
    json_t *root = json_loadb(buf, (size_t)size, JSON_ALLOW_NUL, &err);
    free(buf);
    json_t *session = json_object_get(root, "session");
    json_t *items = json_object_get(root, "items");
    if (!json_is_object(session) || !json_is_array(items)) {
        snprintf(why, whylen, "%s",
                 root ? "a .json rollout without \"session\" and \"items\"" : err.text);
        json_decref(root);
        return MCPAGE_EPARSE;
    }
    int rc = MCPAGE_EIO;
    int mfd = memfd_create("mcpage-rollout", MFD_CLOEXEC);
    int wfd = mfd >= 0 ? dup(mfd) : -1;
    FILE *w = wfd >= 0 ? fdopen(wfd, "w") : NULL;
    if (!w && wfd >= 0)
        close(wfd);
    if (w) {
        /* the facts line: the shape of the first line of mid-2025 rollouts */
        json_t *head = json_deep_copy(session);
        int ok = head && json_dumpf(head, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
                 fputc('\n', w) != EOF;
        json_decref(head);
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            if (!ok)
                break;
            ok =
                json_dumpf(it, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 && fputc('\n', w) != EOF;
        }
        if (fclose(w) == 0 && ok)
            rc = 0;
    }
    json_decref(root);
    if (rc < 0) {
        if (mfd >= 0)
            close(mfd);
        return rc;
    }
    *out = mfd;
    return 0;
}

/*
 * True when a Codex rollout holds no response item in its first
 * SYNC_EVENTS_PROBE bytes: a thread written as UI events only, whose
 * user_message / agent_message events are then its messages. Elsewhere
 * those events repeat response items and are skipped.
 */
static int codex_events_only(int fd)
{
    char *buf = malloc(SYNC_EVENTS_PROBE);
    if (!buf)
        return 0;
    ssize_t got = pread(fd, buf, SYNC_EVENTS_PROBE, 0);
    int only = got > 0 && !memmem(buf, (size_t)got, "\"response_item\"", 15) &&
               memmem(buf, (size_t)got, "\"event_msg\"", 11);
    free(buf);
    return only;
}

static int head_hash(int fd, int64_t n, uint64_t *h)
{
    unsigned char buf[SYNC_HEAD_MAX];
    if (n > SYNC_HEAD_MAX)
        n = SYNC_HEAD_MAX;
    ssize_t got = pread(fd, buf, (size_t)n, 0);
    if (got != (ssize_t)n)
        return MCPAGE_EIO;
    *h = fnv1a(buf, (size_t)n);
    return 0;
}

typedef struct file_state {
    const sync_job *job;
    const sync_options *opt;
    sync_report *rep;
    store *s;
    int fd;                 /* the content read (for a legacy rollout: its JSONL form) */
    struct stat sb;         /* the file's own: its source record */
    int64_t size;           /* bytes of the content */
    store_session_state st; /* as stored when the file was opened */
    int session_exists;
    int reparse;
    int64_t consumed;  /* end of the last complete line handled */
    int64_t committed; /* consumed as of the last commit */
    int64_t lines;     /* complete lines since the last commit */
    int64_t line_no;   /* of the last complete line */
    int64_t next_ordinal;
    int has_title;
    int title_rank; /* of the title set by this run (sync_title_rank) */
    int64_t project_id;
    int in_tx;
    sync_tool_ids ids;
    /* session facts waiting for the next commit (owned) */
    char *model, *branch, *title, *parent;
    char *meta_id;   /* the session the file's first facts line named (Codex) */
    char *last_ts;   /* the newest timestamp a line carried: for lines without one */
    int events_only; /* a Codex rollout without response items: keep its UI events */
    int64_t new_project_id;
} file_state;

static void example(sync_report *rep, const char *path, int64_t line, const char *why)
{
    if (rep->nexamples >= SYNC_EXAMPLES_MAX)
        return;
    snprintf(rep->examples[rep->nexamples++], SYNC_EXAMPLE_LEN, "%s:%lld: %s", path,
             (long long)line, why);
}

static void take(char **slot, char **val)
{
    if (!*val)
        return;
    free(*slot);
    *slot = *val;
    *val = NULL;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return (b && b[1]) ? b + 1 : path;
}

static int open_batch(file_state *f)
{
    int rc = store_begin(f->s);
    if (rc < 0)
        return rc;
    f->in_tx = 1;
    if (f->reparse) {
        rc = store_session_reset(f->s, f->job->session_id);
        if (rc < 0)
            return rc;
        f->reparse = 0;
    }
    store_session_meta m = {
        .session_id = f->job->session_id,
        .source = f->job->source == SRC_CLAUDE ? "claude" : "codex",
        .source_path = f->job->path,
        .hostname = f->opt->hostname,
        .parent_session_id = f->job->parent,
    };
    rc = store_session_put(f->s, &m);
    if (rc < 0)
        return rc;
    if (!f->session_exists) {
        f->session_exists = 1;
        f->rep->sessions_added++;
    }
    return 0;
}

/* Writes the batch's raw bytes, session facts and offsets, and commits. */
static int commit_batch(file_state *f, int at_eof)
{
    int rc = 0;
    unsigned char *buf = NULL;
    if (!f->in_tx) {
        if (f->consumed == f->committed && !at_eof)
            return 0;
        if ((rc = store_begin(f->s)) < 0)
            return rc;
        f->in_tx = 1;
    }
    if (f->consumed > f->committed) {
        buf = malloc(SYNC_BLOCK);
        if (!buf)
            return MCPAGE_ENOMEM;
        for (int64_t at = f->committed; at < f->consumed;) {
            size_t want = (size_t)(f->consumed - at);
            if (want > SYNC_BLOCK)
                want = SYNC_BLOCK;
            ssize_t got = pread(f->fd, buf, want, at);
            if (got != (ssize_t)want) {
                rc = MCPAGE_EIO;
                goto out;
            }
            int64_t lines = (at + (int64_t)want >= f->consumed) ? f->lines : 0;
            rc = store_raw_append(f->s, f->job->session_id, buf, want, lines);
            if (rc < 0)
                goto out;
            at += (int64_t)want;
        }
        store_session_meta m = {.session_id = f->job->session_id};
        if (f->st.head_len < SYNC_HEAD_MAX && f->consumed > f->st.head_len) {
            int64_t n = f->consumed < SYNC_HEAD_MAX ? f->consumed : SYNC_HEAD_MAX;
            if ((rc = head_hash(f->fd, n, &m.head_hash)) < 0)
                goto out;
            m.head_len = n;
            f->st.head_len = n;
            f->st.head_hash = m.head_hash;
        }
        m.model = f->model;
        m.git_branch = f->branch;
        m.title = f->title;
        m.parent_session_id = f->parent;
        m.project_id = f->new_project_id;
        if ((rc = store_session_put(f->s, &m)) < 0)
            goto out;
        if ((rc = store_session_refresh(f->s, f->job->session_id)) < 0)
            goto out;
    }
    store_source src = {
        .hostname = (char *)f->opt->hostname,
        .path = f->job->path,
        .session_id = f->job->session_id,
        /* Until the file is done, record the offset as its size so the
         * next run does not skip it. */
        .size = at_eof ? (int64_t)f->sb.st_size : f->consumed,
        .inode = (int64_t)f->sb.st_ino,
        .mtime_ns = at_eof ? (int64_t)f->sb.st_mtim.tv_sec * 1000000000 + f->sb.st_mtim.tv_nsec : 0,
        .consumed = f->consumed,
    };
    if ((rc = store_source_put(f->s, &src)) < 0)
        goto out;
    if ((rc = store_commit(f->s)) < 0)
        goto out;
    f->in_tx = 0;
    f->committed = f->consumed;
    f->lines = 0;
    free(f->model);
    free(f->branch);
    free(f->title);
    free(f->parent);
    f->model = f->branch = f->title = f->parent = NULL;
    f->new_project_id = 0;
out:
    free(buf);
    return rc;
}

static int ensure_project(file_state *f, const char *cwd)
{
    if (f->project_id > 0)
        return 0;
    const char *name = base_name(cwd);
    int rc = store_project_ensure(f->s, cwd, name, &f->project_id);
    if (rc == 0)
        f->new_project_id = f->project_id;
    return rc;
}

/* One complete line [line, line+len) that starts at file offset `at`. */
static int handle_line(file_state *f, const char *line, size_t len, int64_t at)
{
    f->line_no++;
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len)
        return 0;
    char *fixed = NULL;
    size_t fixed_len = 0;
    int rc = sync_utf8_repair(line, len, &fixed, &fixed_len);
    if (rc < 0)
        return rc;
    sync_record r;
    char why[200] = "";
    const char *text = fixed ? fixed : line;
    size_t tlen = fixed ? fixed_len : len;
    if (f->job->source == SRC_CLAUDE)
        rc = sync_claude_parse_line(text, tlen, &f->ids, &r, why, sizeof why);
    else
        rc = sync_codex_parse_line(text, tlen, &f->ids, &r, why, sizeof why);
    free(fixed);
    if (rc == MCPAGE_EPARSE) {
        f->rep->lines_malformed++;
        example(f->rep, f->job->path, f->line_no, why);
        return 0;
    }
    if (rc < 0)
        return rc;
    if (r.kind == SYNC_SKIP || (r.from_event && !f->events_only))
        goto done;
    /* Lines without a time (Codex rollouts of mid-2025 time only their
       first line) take the time of the line before. */
    if (r.timestamp && (!f->last_ts || strcmp(r.timestamp, f->last_ts) > 0)) {
        free(f->last_ts);
        f->last_ts = sync_short_copy(r.timestamp, 64);
    } else if (!r.timestamp && f->last_ts && r.kind == SYNC_MESSAGE) {
        r.timestamp = sync_short_copy(f->last_ts, 64);
    }
    if (r.meta_session_id) {
        /* the first facts line names the file's session; a later one that
           names another (the parent a fork copies in) says nothing of it */
        if (f->meta_id && strcmp(f->meta_id, r.meta_session_id) != 0)
            goto done;
        take(&f->meta_id, &r.meta_session_id);
    }
    if (r.cwd && (rc = ensure_project(f, r.cwd)) < 0)
        goto done;
    take(&f->model, &r.model);
    take(&f->branch, &r.git_branch);
    if (r.summary && (!f->has_title || r.title_rank >= f->title_rank)) {
        take(&f->title, &r.summary);
        f->has_title = 1;
        f->title_rank = r.title_rank;
    }
    /* Claude sub-agents name their parent on every line (sessionId),
       Codex forks and sub-agents in their session_meta */
    if ((f->job->subagent || f->job->source == SRC_CODEX) && !f->job->parent &&
        r.parent_session_id && strcmp(r.parent_session_id, f->job->session_id) != 0 && !f->parent)
        take(&f->parent, &r.parent_session_id);
    if (r.kind == SYNC_MESSAGE) {
        if (r.is_prompt && !f->has_title) {
            free(f->title);
            f->title = sync_short_copy(r.text, SYNC_TITLE_MAX);
            f->has_title = f->title != NULL;
        }
        if (!r.tool_name && r.call_id && strcmp(r.role, "tool") == 0) {
            /* the call was stored by an earlier run: ask the store */
            rc = store_tool_call_name(f->s, f->job->session_id, r.call_id, &r.tool_name);
            if (rc < 0 && rc != MCPAGE_ENOTFOUND)
                goto done;
            rc = 0;
        }
        store_message m = {
            .session_id = f->job->session_id,
            .ordinal = f->next_ordinal,
            .role = (char *)r.role,
            .timestamp = r.timestamp,
            .text = r.text,
            .tool_name = r.tool_name,
            .tool_input = r.tool_input,
            .tool_call_id = r.call_id,
            .is_error = r.is_error,
            .line_no = f->line_no,
            .byte_offset = at,
            .byte_length = (int64_t)len,
        };
        int64_t id = 0;
        if ((rc = store_message_add(f->s, &m, &id)) < 0)
            goto done;
        f->next_ordinal++;
        f->rep->messages_added++;
    }
done:
    sync_record_clear(&r);
    return rc;
}

static void report_progress(file_state *f, int64_t files_done, int64_t files_total,
                            int64_t *bytes_done, int64_t bytes_total)
{
    if (!f->opt->progress)
        return;
    sync_progress p = {files_done, files_total, *bytes_done, bytes_total, f->job->path};
    f->opt->progress(f->opt->progress_ud, &p);
}

/* Reads the new part of one file. */
static int sync_file(store *s, sync_job *job, const sync_options *opt, sync_report *rep,
                     int64_t files_done, int64_t files_total, int64_t *bytes_done,
                     int64_t bytes_total)
{
    file_state f = {.job = job, .opt = opt, .rep = rep, .s = s, .fd = -1};
    store_source src = {0};
    char *lb = NULL;
    unsigned char *block = NULL;
    int rc = 0;
    int locked = 0;
    f.fd = open(job->path, O_RDONLY | O_CLOEXEC);
    if (f.fd < 0 || fstat(f.fd, &f.sb) < 0) {
        rc = MCPAGE_EIO;
        goto out;
    }
    /* claim the session: another sync process (another machine, same
     * store) waits here, then continues from what this one stored */
    if ((rc = store_session_lock(s, job->session_id)) < 0)
        goto out;
    locked = 1;
    int found = store_source_get(s, opt->hostname, job->path, &src) == 0;
    rc = store_session_state_get(s, job->session_id, &f.st);
    if (rc < 0 && rc != MCPAGE_ENOTFOUND)
        goto out;
    f.session_exists = rc == 0;
    rc = 0;
    f.size = (int64_t)f.sb.st_size;
    if (job->legacy) {
        char why[160];
        int jfd = -1;
        rc = codex_legacy_jsonl(f.fd, f.size, &jfd, why, sizeof why);
        if (rc == MCPAGE_EPARSE) {
            rep->lines_malformed++;
            example(rep, job->path, 1, why);
            rc = 0;
            goto out; /* nothing to store; the next sync tries again */
        }
        if (rc < 0)
            goto out;
        close(f.fd);
        f.fd = jfd;
        struct stat jsb;
        if (fstat(f.fd, &jsb) < 0) {
            rc = MCPAGE_EIO;
            goto out;
        }
        f.size = (int64_t)jsb.st_size;
    }
    if (job->source == SRC_CODEX)
        f.events_only = codex_events_only(f.fd);
    f.consumed = f.st.raw_size;
    if (f.consumed > 0) {
        uint64_t h = 0;
        if (found && src.inode != (int64_t)f.sb.st_ino)
            f.reparse = 1; /* replaced */
        else if (f.size < f.consumed)
            f.reparse = 1; /* truncated */
        else if (f.st.head_len > 0 &&
                 (head_hash(f.fd, f.st.head_len, &h) < 0 || h != f.st.head_hash))
            f.reparse = 1; /* rewritten */
    }
    if (f.reparse) {
        rep->files_reparsed++;
        memset(&f.st, 0, sizeof f.st);
        f.consumed = 0;
    } else {
        rep->files_read++;
        f.has_title = f.st.has_title;
        f.project_id = f.st.project_id;
    }
    f.committed = f.consumed;
    f.line_no = f.st.raw_lines;
    f.next_ordinal = f.st.message_count;

    size_t line_max = opt->line_max ? opt->line_max : SYNC_LINE_MAX_DEFAULT;
    int64_t batch_lines = opt->batch_lines > 0 ? opt->batch_lines : 5000;
    int64_t batch_bytes = opt->batch_bytes > 0 ? opt->batch_bytes : 32 * 1024 * 1024;
    block = malloc(SYNC_BLOCK);
    if (!block) {
        rc = MCPAGE_ENOMEM;
        goto out;
    }
    size_t lcap = 0, llen = 0;
    int skipping = 0;
    int64_t line_start = f.consumed;
    int64_t pos = f.consumed;
    int64_t end = f.size;
    while (pos < end) {
        size_t want = (size_t)(end - pos < SYNC_BLOCK ? end - pos : SYNC_BLOCK);
        ssize_t got = pread(f.fd, block, want, pos);
        if (got <= 0) {
            if (got < 0)
                rc = MCPAGE_EIO;
            break;
        }
        rep->bytes_read += got;
        *bytes_done += got;
        size_t i = 0;
        while (i < (size_t)got) {
            unsigned char *nl = memchr(block + i, '\n', (size_t)got - i);
            size_t seg = nl ? (size_t)(nl - (block + i)) : (size_t)got - i;
            if (!skipping) {
                if (llen + seg > line_max) {
                    skipping = 1;
                    llen = 0;
                } else {
                    if (llen + seg + 1 > lcap) {
                        size_t ncap = lcap ? lcap : 4096;
                        while (ncap < llen + seg + 1)
                            ncap *= 2;
                        char *nb = realloc(lb, ncap);
                        if (!nb) {
                            rc = MCPAGE_ENOMEM;
                            goto out;
                        }
                        lb = nb;
                        lcap = ncap;
                    }
                    memcpy(lb + llen, block + i, seg);
                    llen += seg;
                }
            }
            i += seg;
            if (!nl)
                break;
            i++; /* the newline */
            int64_t line_end = pos + (int64_t)i;
            if (!f.in_tx && (rc = open_batch(&f)) < 0)
                goto out;
            if (skipping) {
                f.line_no++;
                rep->lines_too_long++;
                char why[96];
                snprintf(why, sizeof why, "line longer than %zu bytes skipped", line_max);
                example(rep, job->path, f.line_no, why);
                skipping = 0;
            } else if ((rc = handle_line(&f, lb ? lb : "", llen, line_start)) < 0) {
                goto out;
            }
            llen = 0;
            rep->lines_read++;
            f.lines++;
            f.consumed = line_end;
            line_start = line_end;
            if (f.lines >= batch_lines || f.consumed - f.committed >= batch_bytes) {
                if ((rc = commit_batch(&f, 0)) < 0)
                    goto out;
                report_progress(&f, files_done, files_total, bytes_done, bytes_total);
            }
        }
        pos += got;
    }
    if (f.consumed < end)
        rep->lines_partial++;
    rc = commit_batch(&f, 1);
    job->project_id = f.session_exists ? f.project_id : -1;
out:
    if (rc < 0) {
        if (f.in_tx)
            store_rollback(s);
        rep->files_failed++;
        char why[160];
        snprintf(why, sizeof why, "file not synced: %s (%s)", mcpage_strerror(rc), store_errmsg(s));
        example(rep, job->path, f.line_no, why);
    }
    free(f.model);
    free(f.branch);
    free(f.title);
    free(f.parent);
    free(f.meta_id);
    free(f.last_ts);
    free(lb);
    free(block);
    store_source_clear(&src);
    if (locked)
        store_session_unlock(s, job->session_id);
    if (f.fd >= 0)
        close(f.fd);
    return rc;
}

/* ---- projects of sessions without a cwd -------------------------------- */

/* The project of a sibling session in the same Claude project directory. */
static int64_t sibling_project(store *s, const sync_jobs *js, const sync_job *j)
{
    for (size_t i = 0; i < js->n; i++) {
        const sync_job *o = &js->v[i];
        if (o == j || o->source != SRC_CLAUDE || strcmp(o->project_dir, j->project_dir) != 0)
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
 * same project directory, or else a project named after the directory.
 * The candidates come from the store, so sessions left without a project
 * by a killed run are handled by the next one.
 */
static int assign_orphans(store *s, sync_jobs *js)
{
    store_session_filter flt = {.source = "claude", .without_project = 1};
    store_page pg = {.limit = STORE_LIMIT_MAX};
    store_sessions l;
    int rc = store_sessions_list(s, &flt, &pg, &l);
    if (rc < 0 || l.count == 0)
        return rc;
    int open = 0;
    for (size_t k = 0; k < l.count && rc == 0; k++) {
        sync_job *j = NULL;
        for (size_t i = 0; i < js->n && !j; i++)
            if (js->v[i].source == SRC_CLAUDE && js->v[i].project_dir &&
                strcmp(js->v[i].session_id, l.rows[k].session_id) == 0)
                j = &js->v[i];
        if (!j)
            continue; /* its file is gone: nothing to learn its directory from */
        int64_t pid = sibling_project(s, js, j);
        if (!open) {
            if ((rc = store_begin(s)) < 0)
                break;
            open = 1;
        }
        if (pid == 0)
            rc = store_project_ensure(s, j->project_dir, j->project_dir, &pid);
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

/* ---- the pass -------------------------------------------------------- */

int sync_run(store *s, const sync_options *opt, sync_report *rep)
{
    if (!s || !opt || !rep)
        return MCPAGE_EINVAL;
    memset(rep, 0, sizeof *rep);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char host[256] = "";
    sync_options o = *opt;
    if (!o.hostname) {
        if (gethostname(host, sizeof host - 1) < 0)
            snprintf(host, sizeof host, "unknown");
        o.hostname = host;
    }
    sync_jobs js = {0};
    int rc = 0;
    if (o.claude_home && (rc = discover_claude(&js, o.claude_home)) < 0)
        goto out;
    /* Codex moves a rollout from sessions/ to archived_sessions/ when the
       user archives its conversation: the same session, read on there. */
    static const char *const codex_dirs[] = {"sessions", "archived_sessions"};
    for (size_t d = 0; o.codex_home && d < sizeof codex_dirs / sizeof codex_dirs[0]; d++) {
        char *root = join(o.codex_home, codex_dirs[d]);
        if (!root) {
            rc = MCPAGE_ENOMEM;
            goto out;
        }
        rc = discover_codex_dir(&js, root, 0);
        free(root);
        if (rc < 0)
            goto out;
    }
    if (js.n > 1)
        qsort(js.v, js.n, sizeof js.v[0], job_cmp);
    rep->files_seen = (int64_t)js.n;

    /* Pre-pass: which files changed since their last sync, and how many
     * bytes that means (for the progress bar). */
    int64_t changed = 0, bytes_total = 0;
    /* One ordered scan of the source records, merged with the sorted
     * file list: no per-file query. */
    store_sources known;
    if ((rc = store_sources_all(s, o.hostname, SYNC_FILES_MAX, &known)) < 0)
        goto out;
    size_t k = 0;
    for (size_t i = 0; i < js.n; i++) {
        struct stat sb;
        if (stat(js.v[i].path, &sb) < 0)
            continue;
        while (k < known.count && strcmp(known.rows[k].path, js.v[i].path) < 0)
            k++;
        const store_source *src = (k < known.count && strcmp(known.rows[k].path, js.v[i].path) == 0)
                                      ? &known.rows[k]
                                      : NULL;
        if (src && src->size == (int64_t)sb.st_size && src->inode == (int64_t)sb.st_ino &&
            src->mtime_ns == (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec) {
            rep->files_unchanged++;
        } else {
            js.v[i].changed = 1;
            changed++;
            int64_t from = src && src->consumed <= (int64_t)sb.st_size ? src->consumed : 0;
            bytes_total += (int64_t)sb.st_size - from;
        }
    }
    store_sources_free(&known);
    int64_t done = 0, bytes_done = 0;
    for (size_t i = 0; i < js.n; i++) {
        if (!js.v[i].changed)
            continue;
        if (sync_file(s, &js.v[i], &o, rep, done, changed, &bytes_done, bytes_total) < 0)
            js.v[i].project_id = -1;
        done++;
        if (o.progress) {
            sync_progress p = {done, changed, bytes_done, bytes_total, js.v[i].path};
            o.progress(o.progress_ud, &p);
        }
    }
    rc = assign_orphans(s, &js);
out:
    jobs_free(&js);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    rep->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}
