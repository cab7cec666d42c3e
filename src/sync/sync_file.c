/*
 * Reading one transcript file: the incremental rules and the batching that
 * makes a killed sync resume exactly (docs/sync.md).
 *
 * Unchanged size, inode and mtime = skipped by the pre-pass (sync.c).
 * Otherwise reading continues at the session's consumed offset (the bytes
 * of complete lines already stored) unless the file was truncated (size
 * below that offset), replaced (another inode at the same path) or
 * rewritten (the first bytes hash differently): then the session is reset
 * and read again from byte 0. A last line without its newline waits for
 * the next sync, unless the file has settled and the line is a complete
 * JSON object: then it is a line, and the newline a later append may bring
 * is taken as its end. Each batch (lines, raw bytes, session facts,
 * consumed offset, source record) is one transaction; a batch holds the
 * files read one after the other until it reaches its limits (sync_group).
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "page/term.h"
#include "sync/sync_internal.h"
#include "sync/sync_lines.h"
#include "sync/sync_raw.h"
#include "sync/sync_parse.h"
#include "sync/sync_source.h"

#define SYNC_HEAD_MAX   4096        /* bytes hashed to detect a rewritten file */
#define SYNC_LEGACY_MAX (256 << 20) /* largest legacy .json rollout read */
/* bytes before the consumed offset read again to rebuild the Codex copy
   memory when a rollout is read on (sync_codex_is_copy) */
#define SYNC_REPLAY_MAX SYNC_BLOCK

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

/*
 * A batch's size (docs/sync.md "Batches and crash safety"). Every commit
 * writes each page it changed into the write-ahead log and again at the
 * checkpoint, and FTS5 writes its pending terms out as a new segment to be
 * merged later, so pages that every batch changes (index leaves keyed by
 * time or by call, b-tree interiors, young segments) are written once a
 * batch: the fewer the batches, the fewer the writes. At 5,000 lines or
 * 32 MiB the first sync of the 10 GB generated archive wrote 106.9 GB and
 * took 906 s of CPU; at 64 MiB (the bytes decide: 250,000 lines is a
 * bound for tiny lines) 74.0 GB and 791-804 s, with fewer FTS5 segments
 * left (docs/performance.md "Fewer, larger batches"). A 631 MB archive
 * pays about 5% more CPU and 14 MB more peak memory. 64 MiB is about 4 s
 * of a sync's CPU here, the longest the write lock is held, well inside
 * the 10 s other writers wait for it (sqlite_store.c).
 */
#define SYNC_BATCH_LINES 250000             /* lines per transaction (default) */
#define SYNC_BATCH_BYTES (64 * 1024 * 1024) /* bytes per transaction (default) */

/* The pass around one file: its progress and the batch limits. */
typedef struct sync_pass {
    int64_t files_done, files_total; /* for progress */
    int64_t *bytes_done;             /* bytes read in this pass, updated as lines are read */
    int64_t bytes_total;
    int64_t batch_lines, batch_bytes; /* a batch is committed when it reaches either */
    sync_group *g;                    /* the transaction, perhaps open with files before */
} sync_pass;

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
    int in_tx; /* this file's rows are in the open transaction */
    int kept;  /* the file is done and left in the open transaction (sync_group) */
    sync_group *g;
    sync_tool_ids ids;    /* what the parse keeps of the file: the ahead thread's while it runs */
    sync_parse_ctx parse; /* how its lines are parsed (ids above) */
    size_t line_max;      /* longer lines are skipped */
    /* session facts waiting for the next commit (owned) */
    char *model, *branch, *title, *parent;
    char *meta_id;      /* the session the file's first facts line named (Codex) */
    char *cwd;          /* the working directory the lines named last (file edits) */
    char *last_ts;      /* the newest timestamp a line carried: for lines without one */
    sync_copies copies; /* Codex: messages that may yet meet their UI-event copy */
    int sys_errno;      /* errno of a failed open or read, or 0 */
    int pending_nl;     /* the last stored line was taken without its newline: a
                           newline that now follows it ends it, and is no line */
    int64_t new_project_id;
} file_state;

/* Warnings of every kind a report counts. */
static int64_t warnings_of(const sync_report *rep)
{
    /* (sync_warn counts its own per source) */
    return rep->lines_malformed + rep->lines_too_long + rep->files_failed + rep->links_outside +
           rep->dirs_unreadable + rep->files_same_session;
}

sync_source_report *sync__source(sync_report *rep, const char *name)
{
    for (int i = 0; i < rep->nsources; i++)
        if (strcmp(rep->sources[i].name, name) == 0)
            return &rep->sources[i];
    if (rep->nsources >= SYNC_REPORT_SOURCES)
        return NULL;
    sync_source_report *r = &rep->sources[rep->nsources++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

void sync__source_begin(sync_report *rep, const char *name, sync_mark *m)
{
    m->prev = rep->current;
    m->failed = rep->files_failed;
    m->sessions = rep->sessions_added;
    m->messages = rep->messages_added;
    m->warnings = warnings_of(rep);
    sync_source_report *r = sync__source(rep, name);
    rep->current = r ? (int)(r - rep->sources) + 1 : 0;
}

void sync__source_end(sync_report *rep, sync_mark *m)
{
    if (rep->current > 0) {
        sync_source_report *r = &rep->sources[rep->current - 1];
        r->files_failed += rep->files_failed - m->failed;
        r->sessions_added += rep->sessions_added - m->sessions;
        r->messages_added += rep->messages_added - m->messages;
        r->warnings += warnings_of(rep) - m->warnings;
    }
    rep->current = m->prev;
}

void sync_example(sync_report *rep, const char *path, int64_t line, const char *why)
{
    if (rep->current > 0 && rep->current <= rep->nsources &&
        !rep->sources[rep->current - 1].warning[0]) {
        char *w = rep->sources[rep->current - 1].warning;
        if (line > 0)
            snprintf(w, SYNC_EXAMPLE_LEN, "%s:%lld: %s", path, (long long)line, why);
        else
            snprintf(w, SYNC_EXAMPLE_LEN, "%s: %s", path, why);
    }
    if (rep->nexamples >= SYNC_EXAMPLES_MAX)
        return;
    /* paths and reasons come from the agent's folder: escaped before a
       terminal sees them */
    char epath[200];
    sync_escape_path(epath, sizeof epath, path);
    char *ex = rep->examples[rep->nexamples++];
    int k = line > 0 ? snprintf(ex, SYNC_EXAMPLE_LEN, "%s:%lld: ", epath, (long long)line)
                     : snprintf(ex, SYNC_EXAMPLE_LEN, "%s: ", epath);
    if (k > 0 && k < SYNC_EXAMPLE_LEN)
        text_term_escape_line(ex + k, (size_t)(SYNC_EXAMPLE_LEN - k), why ? why : "",
                              why ? strlen(why) : 0);
}

/* 1 when a file last changed at `mtime` (Unix seconds) has been unchanged
 * for SYNC_SETTLED_SECONDS. */
static int settled_since(time_t mtime)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec - mtime >= SYNC_SETTLED_SECONDS;
}

int sync_job_settled(const sync_job *j, const struct timespec *mtime)
{
    return j->settle || settled_since(mtime->tv_sec);
}

void sync_stat_keep(sync_stat *st, const struct stat *sb)
{
    st->size = (int64_t)sb->st_size;
    st->inode = (int64_t)sb->st_ino;
    st->mtime = sb->st_mtim;
}

void sync_held(sync_report *rep, const char *path, int64_t until)
{
    rep->held++;
    if (until > rep->held_until)
        rep->held_until = until;
    if (rep->nheld >= SYNC_EXAMPLES_MAX)
        return;
    char epath[170], why[120]; /* "epath: why" fits SYNC_EXAMPLE_LEN */
    sync_escape_path(epath, sizeof epath, path);
    if (until > 0) {
        time_t t = (time_t)until;
        struct tm tm;
        char at[16] = "";
        if (gmtime_r(&t, &tm))
            strftime(at, sizeof at, "%H:%M:%S", &tm);
        (void)snprintf(why, sizeof why,
                       "its last line has no newline yet: taken at %s UTC (%d s unchanged), or "
                       "now with --settle",
                       at, SYNC_SETTLED_SECONDS);
    } else {
        (void)snprintf(why, sizeof why,
                       "its last line is unfinished: read once the agent has written it whole");
    }
    (void)snprintf(rep->held_list[rep->nheld++], SYNC_EXAMPLE_LEN, "%s: %s", epath, why);
}

int sync_settled(const struct stat *sb)
{
    return settled_since(sb->st_mtim.tv_sec);
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

/* ---- one transaction over several files ----------------------------- */

int64_t sync__fail_line;

static void release_claims(store *s, sync_group *g)
{
    for (size_t i = 0; i < g->nclaims; i++) {
        store_session_unlock(s, g->claims[i]);
        free(g->claims[i]);
    }
    g->nclaims = 0;
}

int sync_group_commit(store *s, sync_group *g)
{
    int was_open = g->open;
    if (g->open) {
        int rc = sync_raw_store(g->raw, s);
        if (rc < 0 || (rc = store_commit(s)) < 0)
            return rc;
    }
    if (was_open && g->opt && g->opt->committed)
        g->opt->committed(g->opt->changed_ud);
    g->open = 0;
    g->lines = g->bytes = 0;
    release_claims(s, g);
    return 0;
}

void sync_group_end(store *s, sync_group *g)
{
    if (g->open && g->rep) { /* the summary counts what was committed, not what was undone */
        g->rep->sessions_added = g->sessions_at;
        g->rep->messages_added = g->messages_at;
    }
    sync_raw_drop(g->raw);
    if (g->open)
        store_rollback(s);
    g->open = 0;
    g->lines = g->bytes = 0;
    release_claims(s, g);
    free(g->claims);
    g->claims = NULL;
}

/* Leaves the finished file in the open transaction, its claim held by
 * the group: 1, or 0 when the group is full (or out of memory) and
 * commits now. */
static int group_keep(file_state *f, const sync_pass *pass)
{
    sync_group *g = f->g;
    if (g->solo || g->lines >= pass->batch_lines || g->bytes >= pass->batch_bytes ||
        g->nclaims >= SYNC_GROUP_FILES_MAX)
        return 0;
    if (!g->claims && !(g->claims = calloc(SYNC_GROUP_FILES_MAX, sizeof *g->claims)))
        return 0;
    if (!(g->claims[g->nclaims] = sync_dup(f->job->session_id)))
        return 0;
    g->nclaims++;
    return 1;
}

/*
 * Claims the file's session. While the group's transaction is open only a
 * claim that is free now is taken; otherwise the group commits first, so
 * this writer never waits for a claim while holding the write lock that
 * the claim's holder may be waiting for.
 */
static int claim_session(store *s, sync_group *g, const char *id)
{
    if (g->open) {
        int rc = store_session_trylock(s, id);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        if ((rc = sync_group_commit(s, g)) < 0) {
            g->lost = g->nclaims > 0;
            sync_group_end(s, g);
            return rc;
        }
    }
    return store_session_lock(s, id);
}

/* The transaction the file's rows go to: the group's, begun if none is open. */
static int begin_tx(file_state *f)
{
    if (!f->g->open) {
        int rc = store_begin(f->s);
        if (rc < 0)
            return rc;
        f->g->open = 1;
        f->g->rep = f->rep;
        f->g->sessions_at = f->rep->sessions_added;
        f->g->messages_at = f->rep->messages_added;
    }
    f->in_tx = 1;
    return 0;
}

static int open_batch(file_state *f)
{
    int rc = begin_tx(f);
    if (rc < 0)
        return rc;
    if (f->reparse) {
        rc = store_session_reset(f->s, f->job->session_id);
        if (rc < 0)
            return rc;
        f->reparse = 0;
    }
    store_session_meta m = {
        .session_id = f->job->session_id,
        .source = f->job->source_name            ? f->job->source_name
                  : f->job->source == SRC_CLAUDE ? "claude"
                                                 : "codex",
        .source_path = f->job->path,
        .hostname = f->opt->hostname,
        .owner = f->opt->owner,
    };
    char parent[STORE_ID_MAX + 1];
    m.parent_session_id = sync__parent_key(f->s, f->opt, f->job->parent, parent);
    rc = store_session_put(f->s, &m);
    if (rc < 0)
        return rc;
    if (!f->session_exists) {
        f->session_exists = 1;
        f->rep->sessions_added++;
    }
    return 0;
}

/* Hands the batch's raw bytes, [committed, consumed) of the file, over
 * to be kept as the session's raw copy (with its line count), redacted as
 * handle_line redacted them: stored before the transaction commits
 * (sync_raw.h). */
static int put_raw_bytes(file_state *f)
{
    sync_group *g = f->g;
    if (!g->raw && !(g->raw = sync_raw_new()))
        return MCPAGE_ENOMEM;
    return sync_raw_give(g->raw, f->s, f->fd, f->committed, f->consumed, f->lines,
                         f->job->session_id, f->opt->redact_rules, f->opt->keep_secrets);
}

/* Writes the session facts the batch saw (and the head hash while the
 * file's first SYNC_HEAD_MAX bytes are not all hashed yet). */
static int put_session_facts(file_state *f)
{
    store_session_meta m = {.session_id = f->job->session_id};
    int rc;
    if (f->st.head_len < SYNC_HEAD_MAX && f->consumed > f->st.head_len) {
        int64_t n = f->consumed < SYNC_HEAD_MAX ? f->consumed : SYNC_HEAD_MAX;
        if ((rc = head_hash(f->fd, n, &m.head_hash)) < 0)
            return rc;
        m.head_len = n;
        f->st.head_len = n;
        f->st.head_hash = m.head_hash;
    }
    m.model = f->model;
    m.git_branch = f->branch;
    m.title = f->title;
    char parent[STORE_ID_MAX + 1];
    m.parent_session_id = sync__parent_key(f->s, f->opt, f->parent, parent);
    m.project_id = f->new_project_id;
    if ((rc = store_session_put(f->s, &m)) < 0)
        return rc;
    return store_session_refresh(f->s, f->job->session_id);
}

/* Records the file's state: until the file is done, its size is recorded
 * as the consumed offset so that the next run does not skip it. */
static int put_source_record(file_state *f, int at_eof)
{
    const struct stat *sb = &f->sb;
    store_source src = {
        .hostname = (char *)f->opt->hostname,
        .path = f->job->path,
        .session_id = f->job->session_id,
        .size = at_eof ? (int64_t)sb->st_size : f->consumed,
        .inode = (int64_t)sb->st_ino,
        .mtime_ns = at_eof ? (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec : 0,
        .consumed = f->consumed,
    };
    return store_source_put(f->s, &src);
}

/* The batch commit: the batch's raw bytes, session facts and offsets,
 * then the commit, in the transaction that holds its messages. At the
 * end of the file the commit waits for the files after it while the
 * group has room. */
static int commit_batch(file_state *f, int at_eof, const sync_pass *pass)
{
    int rc;
    if (!f->in_tx) {
        if (f->consumed == f->committed && !at_eof)
            return 0;
        if ((rc = begin_tx(f)) < 0)
            return rc;
    }
    if (f->consumed > f->committed &&
        ((rc = put_raw_bytes(f)) < 0 || (rc = put_session_facts(f)) < 0))
        return rc;
    if ((rc = put_source_record(f, at_eof)) < 0)
        return rc;
    f->g->lines += f->lines;
    f->g->bytes += f->consumed - f->committed;
    if (at_eof && group_keep(f, pass)) {
        f->kept = 1;
    } else {
        if ((rc = sync_group_commit(f->s, f->g)) < 0)
            return rc;
        f->in_tx = 0;
    }

    f->committed = f->consumed;
    f->lines = 0;
    free(f->model);
    free(f->branch);
    free(f->title);
    free(f->parent);
    f->model = f->branch = f->title = f->parent = NULL;
    f->new_project_id = 0;
    return 0;
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

/* Stores one parsed line (p->kind SYNC_LINE_TEXT) that starts at file
 * offset p->start. p->r stays with its chunk, which frees it: what the
 * store takes of it is left NULL. */
static int store_line(file_state *f, sync_parsed *p)
{
    f->line_no++;
    int rc = p->rc;
    if (rc == SYNC_BLANK)
        return 0;
    if (rc == MCPAGE_EPARSE) {
        f->rep->lines_malformed++;
        sync_example(f->rep, f->job->path, f->line_no, p->why);
        return 0;
    }
    if (rc < 0)
        return rc;
    sync_record *r = &p->r; /* freed with its chunk (what is taken: NULL) */
    int64_t at = p->start;
    size_t len = p->len;
    int64_t msg_id = 0;
    if (r->kind == SYNC_SKIP || (f->job->source == SRC_CODEX && sync_codex_is_copy(&f->copies, r)))
        goto usage;
    /* Lines without a time (Codex rollouts of mid-2025 time only their
       first line) take the time of the line before. */
    if (r->timestamp && (!f->last_ts || strcmp(r->timestamp, f->last_ts) > 0)) {
        free(f->last_ts);
        f->last_ts = sync_short_copy(r->timestamp, 64);
    } else if (!r->timestamp && f->last_ts && r->kind == SYNC_MESSAGE) {
        r->timestamp = sync_short_copy(f->last_ts, 64);
    }
    if (r->meta_session_id) {
        /* the first facts line names the file's session; a later one that
           names another (the parent a fork copies in) says nothing of it */
        if (f->meta_id && strcmp(f->meta_id, r->meta_session_id) != 0)
            goto done;
        take(&f->meta_id, &r->meta_session_id);
    }
    if (r->cwd && (rc = ensure_project(f, r->cwd)) < 0)
        goto done;
    if (r->cwd && r->cwd[0] == '/' && (!f->cwd || strcmp(f->cwd, r->cwd) != 0)) {
        free(f->cwd);
        f->cwd = sync_dup(r->cwd);
    }
    take(&f->model, &r->model);
    take(&f->branch, &r->git_branch);
    if (r->summary && (!f->has_title || r->title_rank >= f->title_rank)) {
        take(&f->title, &r->summary);
        f->has_title = 1;
        f->title_rank = r->title_rank;
    }
    /* Claude sub-agents name their parent on every line (sessionId),
       Codex forks and sub-agents in their session_meta */
    if ((f->job->subagent || f->job->source == SRC_CODEX) && !f->job->parent &&
        r->parent_session_id && strcmp(r->parent_session_id, f->job->session_id) != 0 &&
        !f->parent) {
        if (f->job->id_prefix && *f->job->id_prefix) {
            /* an agent writing another's format: its ids carry its prefix */
            char id[STORE_ID_MAX + 1];
            snprintf(id, sizeof id, "%s%.150s", f->job->id_prefix, r->parent_session_id);
            if (strcmp(id, f->job->session_id) != 0)
                f->parent = sync_dup(id);
        } else {
            take(&f->parent, &r->parent_session_id);
        }
    }
    if (r->kind == SYNC_MESSAGE) {
        if (r->is_prompt && !f->has_title) {
            free(f->title);
            f->title = sync_title_of_prompt(r->text);
            f->has_title = f->title != NULL;
        }
        if (!r->tool_name && r->call_id && strcmp(r->role, "tool") == 0) {
            /* the call was stored by an earlier run: ask the store */
            rc = store_tool_call_name(f->s, f->job->session_id, r->call_id, &r->tool_name);
            if (rc < 0 && rc != MCPAGE_ENOTFOUND)
                goto done;
            rc = 0;
        }
        store_message m = {
            .session_id = f->job->session_id,
            .ordinal = f->next_ordinal,
            .role = (char *)r->role,
            .timestamp = r->timestamp,
            .text = r->text,
            .tool_name = r->tool_name,
            .tool_input = r->tool_input,
            .tool_call_id = r->call_id,
            .is_error = r->is_error,
            .line_no = f->line_no,
            .byte_offset = at,
            .byte_length = (int64_t)len,
        };
        if ((rc = store_message_add_packed(f->s, &m, p->packed ? &p->pack : NULL, &msg_id)) < 0)
            goto done;
        f->next_ordinal++;
        f->rep->messages_added++;
        const char *format = f->job->source == SRC_CLAUDE ? "claude" : "codex";
        rc = sync_edits_put(f->s, f->job->source_name ? f->job->source_name : format, format,
                            f->job->session_id, msg_id, r, f->cwd, f->last_ts);
        if (rc < 0)
            goto done;
    }
usage:
    rc = sync_usage_put(f->s, f->job->session_id, msg_id, r, f->last_ts, f->model);
done:
    return rc;
}

/* One complete line [line, line+len) at file offset `at`, parsed and
 * stored on this thread. */
static int handle_line(file_state *f, char *line, size_t len, int64_t at)
{
    sync_parsed p = {.start = at, .len = len, .kind = SYNC_LINE_TEXT};
    sync_parse_one(&f->parse, line, len, &p, &f->rep->redacted);
    int rc = store_line(f, &p);
    if (p.rc == 0)
        sync_record_clear(&p.r);
    return rc;
}

static void report_progress(file_state *f, const sync_pass *pass)
{
    if (!f->opt->progress)
        return;
    sync_progress p = {pass->files_done, pass->files_total, *pass->bytes_done, pass->bytes_total,
                       f->job->path};
    f->opt->progress(f->opt->progress_ud, &p);
}

/*
 * Rebuilds the Codex copy memory of a rollout read on from f->consumed:
 * the lines of the SYNC_REPLAY_MAX bytes before it go through the same
 * check again, nothing stored. A side the window never saw emptied may
 * hold entries already paired before the window: it is forgotten, so a
 * copy can at worst be kept twice, never a message dropped.
 */
static int codex_copies_replay(file_state *f, size_t line_max)
{
    int64_t from = f->consumed > SYNC_REPLAY_MAX ? f->consumed - SYNC_REPLAY_MAX : 0;
    size_t n = (size_t)(f->consumed - from);
    char *buf = malloc(n ? n : 1);
    if (!buf)
        return MCPAGE_ENOMEM;
    if (pread(f->fd, buf, n, from) != (ssize_t)n) {
        free(buf);
        return MCPAGE_EIO;
    }
    if (!f->opt->keep_secrets)
        sync_redact(f->opt->redact_rules, buf, n, NULL, NULL,
                    NULL); /* as the lines were when handled */
    char *p = buf, *e = buf + n;
    if (from > 0) { /* the first line may be cut by the window */
        p = memchr(buf, '\n', n);
        p = p ? p + 1 : e;
    }
    sync_tool_ids *ids = calloc(1, sizeof *ids);
    if (!ids) {
        free(buf);
        return MCPAGE_ENOMEM;
    }
    int64_t user_clears = f->copies.user_clears, agent_clears = f->copies.agent_clears;
    while (p < e) {
        char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
        sync_record r;
        char why[8];
        if (len <= line_max && sync_parse_line(SRC_CODEX, p, len, ids, &r, why, sizeof why) == 0) {
            sync_codex_is_copy(&f->copies, &r);
            sync_record_clear(&r);
        }
        p += len + 1;
    }
    if (from > 0 && f->copies.user_clears == user_clears)
        f->copies.nuser = 0;
    if (from > 0 && f->copies.agent_clears == agent_clears)
        f->copies.nagent = 0;
    free(ids);
    free(buf);
    return 0;
}

/* 1 when the line before `consumed` was stored without its newline and
 * that newline has arrived since. */
static int newline_arrived(int fd, int64_t consumed, int64_t size)
{
    unsigned char b[2];
    return consumed > 0 && consumed < size && pread(fd, b, 2, consumed - 1) == 2 && b[0] != '\n' &&
           b[1] == '\n';
}

/* 1 when [line, line+len) is one complete JSON object. */
static int complete_object(const char *line, size_t len)
{
    char *fixed = NULL;
    size_t fixed_len = 0;
    if (sync_utf8_repair(line, len, &fixed, &fixed_len) < 0)
        return 0;
    json_t *v = json_loadb(fixed ? fixed : line, fixed ? fixed_len : len, 0, NULL);
    int ok = json_is_object(v);
    json_decref(v);
    free(fixed);
    return ok;
}

/* What a read-on file needs from before its consumed offset: the newest
 * time (for lines without one), the Codex copy memory, and whether its
 * last stored line is still waiting for its newline. */
static int read_on_state(file_state *f, size_t line_max)
{
    store_session row;
    if (store_session_get(f->s, f->job->session_id, &row) == 0) {
        f->last_ts = row.ended_at ? sync_short_copy(row.ended_at, 64) : NULL;
        store_session_clear(&row);
    }
    f->pending_nl = !f->job->legacy && newline_arrived(f->fd, f->consumed, f->size);
    if (f->job->source == SRC_CODEX)
        return codex_copies_replay(f, line_max);
    return 0;
}

/* Opens the file through sync_source_open: inside the agent's folder (a
 * link as its resolved path; never a link swapped in since), a regular
 * file. 1 when it is refused (named in a warning): nothing to read. */
static int open_source(file_state *f)
{
    const char *home = f->job->home;
    char why[SYNC_WARNING_LEN] = "";
    errno = 0;
    f->fd = sync_source_open(home ? home : "/", f->job->real ? f->job->real : f->job->path, 0,
                             &f->sb, why, sizeof why);
    if (f->fd == MCPAGE_EINVAL || f->fd == MCPAGE_ERANGE) {
        sync_warn(f->rep, f->job->source == SRC_CLAUDE ? "claude" : "codex", f->job->path, 0, why);
        f->fd = -1;
        return 1;
    }
    if (f->fd < 0) {
        f->sys_errno = f->fd == MCPAGE_ENOTFOUND ? ENOENT : errno ? errno : EIO;
        f->fd = -1;
        return MCPAGE_EIO;
    }
    return 0;
}

/*
 * The resume decision: where reading starts. A file read before continues
 * at the session's consumed offset unless it was replaced (another inode),
 * truncated (shorter than that offset) or rewritten (its first bytes hash
 * differently): then the session is read again from byte 0.
 */
static int decide_resume(file_state *f, const store_source *src, int found, size_t line_max)
{
    f->consumed = f->st.raw_size;
    if (f->consumed > 0) {
        uint64_t h = 0;
        if (found && src->inode != (int64_t)f->sb.st_ino)
            f->reparse = 1; /* replaced */
        else if (f->size < f->consumed)
            f->reparse = 1; /* truncated */
        else if (f->st.head_len > 0 &&
                 (head_hash(f->fd, f->st.head_len, &h) < 0 || h != f->st.head_hash))
            f->reparse = 1; /* rewritten */
    }

    if (f->reparse) {
        f->rep->files_reparsed++;
        memset(&f->st, 0, sizeof f->st);
        f->consumed = 0;
    } else {
        f->rep->files_read++;
        f->has_title = f->st.has_title;
        f->project_id = f->st.project_id;
    }
    f->committed = f->consumed;
    f->line_no = f->st.raw_lines;
    f->next_ordinal = f->st.message_count;

    if (f->consumed > 0)
        return read_on_state(f, line_max);
    return 0;
}

/*
 * A legacy Codex rollout (one JSON document) is read through its JSONL
 * form: f->fd and f->size become that form's. 1 when the document does
 * not parse (counted as malformed; nothing to store, the next sync tries
 * again), else 0 or a failure.
 */
static int open_legacy(file_state *f)
{
    char why[160];
    int jfd = -1;
    int rc = codex_legacy_jsonl(f->fd, f->size, &jfd, why, sizeof why);
    if (rc == MCPAGE_EPARSE) {
        f->rep->lines_malformed++;
        sync_example(f->rep, f->job->path, 1, why);
        return 1;
    }
    if (rc < 0)
        return rc;
    close(f->fd);
    f->fd = jfd;
    struct stat jsb;
    if (fstat(f->fd, &jsb) < 0)
        return MCPAGE_EIO;
    f->size = (int64_t)jsb.st_size;
    return 0;
}

/*
 * The line reader: the file streamed in SYNC_BLOCK reads, each complete
 * line gathered in `buf` (a line may span blocks and grow the buffer up
 * to line_max; a longer one is skipped without holding it).
 */
typedef struct line_reader {
    char *buf;          /* the line so far (owned) */
    size_t len, cap;    /* its length and buf's size */
    size_t line_max;    /* longer lines are skipped */
    int skipping;       /* the line so far is over line_max: its bytes are dropped */
    int64_t line_start; /* file offset of the line's first byte */
} line_reader;

/* Adds seg bytes of the current line (dropped once it is too long). */
static int reader_add(line_reader *lr, const unsigned char *seg, size_t n)
{
    if (lr->skipping)
        return 0;
    if (lr->len + n > lr->line_max) {
        lr->skipping = 1;
        lr->len = 0;
        return 0;
    }
    if (lr->len + n + 1 > lr->cap) {
        size_t ncap = lr->cap ? lr->cap : 4096;
        while (ncap < lr->len + n + 1)
            ncap *= 2;
        char *nb = realloc(lr->buf, ncap);
        if (!nb)
            return MCPAGE_ENOMEM;
        lr->buf = nb;
        lr->cap = ncap;
    }
    memcpy(lr->buf + lr->len, seg, n);
    lr->len += n;
    return 0;
}

/* Commits when the batch is full (lines or bytes), then reports progress. */
static int commit_if_full(file_state *f, const sync_pass *pass)
{
    if (f->g->lines + f->lines < pass->batch_lines &&
        f->g->bytes + (f->consumed - f->committed) < pass->batch_bytes)
        return 0;
    int rc = commit_batch(f, 0, pass);
    if (rc == 0)
        report_progress(f, pass);
    return rc;
}

/* Stores one entry of a parsed chunk, then commits if the batch is full. */
static int store_parsed(file_state *f, sync_parsed *p, const sync_pass *pass)
{
    int rc;
    if (p->kind == SYNC_LINE_NEWLINE) {
        f->consumed = p->end;
        return 0;
    }
    if (!f->in_tx && (rc = open_batch(f)) < 0)
        return rc;
    if (p->kind == SYNC_LINE_TOO_LONG) {
        f->line_no++;
        f->rep->lines_too_long++;
        char why[96];
        snprintf(why, sizeof why, "line longer than %zu bytes skipped", f->line_max);
        sync_example(f->rep, f->job->path, f->line_no, why);
    } else if ((rc = store_line(f, p)) < 0) {
        return rc;
    }
    if (sync__fail_line > 0 && f->line_no == sync__fail_line)
        return MCPAGE_EIO;
    f->rep->lines_read++;
    f->lines++;
    f->consumed = p->end;
    return commit_if_full(f, pass);
}

/* Stores a parsed chunk's entries in order, then empties it. */
static int store_chunk(file_state *f, sync_chunk *c, const sync_pass *pass)
{
    for (int k = 0; k < REDACT_KINDS; k++)
        f->rep->redacted.n[k] += c->redacted.n[k];
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++)
        rc = store_parsed(f, &c->v[i], pass);
    sync_chunk_stored(c);
    return rc;
}

/*
 * The lines in flight: chunk `fill` gathers lines while the other, when
 * `parsing`, is parsed ahead. Handing `fill` over waits for the other,
 * starts `fill`'s parse, and stores the other meanwhile.
 */
typedef struct line_chunks {
    sync_chunk c[2];
    int fill;
    int parsing;  /* c[1 - fill] is handed over and not yet stored */
    size_t limit; /* c[fill] is handed over past this many bytes */
} line_chunks;

static int hand_over(file_state *f, line_chunks *lc, const sync_pass *pass)
{
    sync_chunk *mine = &lc->c[lc->fill], *other = &lc->c[1 - lc->fill];
    /* with nothing to store meanwhile (a file's first chunk), a parse
       ahead would only be waited for: this thread parses it */
    sync_ahead *a = lc->parsing ? f->g->ahead : NULL;
    sync_ahead_wait(f->g->ahead);
    if (mine->n)
        sync_ahead_submit(a, mine, &f->parse);
    int rc = 0;
    if (lc->parsing)
        rc = store_chunk(f, other, pass);
    lc->parsing = mine->n > 0;
    lc->fill = 1 - lc->fill;
    if (lc->limit < SYNC_CHUNK_BYTES)
        lc->limit *= 2;
    return rc;
}

/* Stores every line handed over or gathered: nothing is left in flight. */
static int drain(file_state *f, line_chunks *lc, const sync_pass *pass)
{
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) /* the chunk gathered, then the one ahead of it */
        rc = hand_over(f, lc, pass);
    return rc;
}

/* A complete line of the reader ends at file offset line_end (after its newline). */
static int end_line(file_state *f, line_reader *lr, int64_t line_end, line_chunks *lc,
                    const sync_pass *pass)
{
    int kind = SYNC_LINE_TEXT;
    if (f->pending_nl) {
        f->pending_nl = 0;
        kind = SYNC_LINE_NEWLINE;
    } else if (lr->skipping) {
        kind = SYNC_LINE_TOO_LONG;
    }
    if (kind == SYNC_LINE_TEXT && lr->len > SYNC_CHUNK_LINE_MAX) {
        /* a long line is parsed and stored here, after the lines before
           it, from the reader's buffer: no copy of it in a chunk, and
           its record freed at once */
        int rc = drain(f, lc, pass);
        if (rc == 0) {
            sync_parsed p = {
                .start = lr->line_start, .end = line_end, .len = lr->len, .kind = kind};
            sync_parse_one(&f->parse, lr->buf, lr->len, &p, &f->rep->redacted);
            rc = store_parsed(f, &p, pass);
            if (p.rc == 0)
                sync_record_clear(&p.r);
        }
        lr->len = 0;
        lr->line_start = line_end;
        return rc;
    }
    sync_chunk *c = &lc->c[lc->fill];
    int rc = sync_chunk_add(c, lr->buf, kind == SYNC_LINE_TEXT ? lr->len : 0, lr->line_start,
                            line_end, kind);
    lr->len = 0;
    lr->skipping = 0;
    lr->line_start = line_end;
    if (rc == 0 && sync_chunk_full(c, lc->limit))
        rc = hand_over(f, lc, pass);
    return rc;
}

/* Reads and handles every complete line from f->consumed to the end: the
 * lines are parsed a chunk ahead of the one being stored. */
static int read_lines(file_state *f, line_reader *lr, const sync_pass *pass)
{
    unsigned char *block = malloc(SYNC_BLOCK);
    if (!block)
        return MCPAGE_ENOMEM;
    if (!f->g->ahead_tried) {
        f->g->ahead = sync_ahead_start();
        f->g->ahead_tried = 1;
    }
    line_chunks lc = {.limit = SYNC_CHUNK_FIRST};
    int rc = 0;
    lr->line_start = f->consumed;
    for (int64_t pos = f->consumed; pos < f->size && rc == 0;) {
        size_t want = (size_t)(f->size - pos < SYNC_BLOCK ? f->size - pos : SYNC_BLOCK);
        ssize_t got = pread(f->fd, block, want, pos);
        if (got <= 0) {
            if (got < 0) {
                f->sys_errno = errno;
                rc = MCPAGE_EIO;
            }
            break;
        }
        f->rep->bytes_read += got;
        *pass->bytes_done += got;

        for (size_t i = 0; i < (size_t)got && rc == 0;) {
            unsigned char *nl = memchr(block + i, '\n', (size_t)got - i);
            size_t seg = nl ? (size_t)(nl - (block + i)) : (size_t)got - i;
            if ((rc = reader_add(lr, block + i, seg)) < 0)
                break;
            i += seg;
            if (!nl)
                break;
            i++; /* the newline */
            rc = end_line(f, lr, pos + (int64_t)i, &lc, pass);
        }
        pos += got;
    }
    if (rc == 0)
        rc = drain(f, &lc, pass);
    sync_ahead_wait(f->g->ahead); /* after a failure, the parse ahead is dropped */
    sync_chunk_free(&lc.c[0]);
    sync_chunk_free(&lc.c[1]);
    free(block);
    return rc;
}

/* A last line without its newline: a line once the file has settled and
 * it is a whole JSON object, else it waits for the next sync. */
static int finish_last_line(file_state *f, line_reader *lr)
{
    if (f->consumed >= f->size)
        return 0;
    int whole = !lr->skipping && lr->buf && !f->job->legacy && complete_object(lr->buf, lr->len);
    if (!whole || !sync_job_settled(f->job, &f->sb.st_mtim)) {
        f->rep->lines_partial++;
        if (!lr->skipping && lr->buf)
            sync_held(f->rep, f->job->path,
                      whole ? (int64_t)f->sb.st_mtim.tv_sec + SYNC_SETTLED_SECONDS : 0);
        return 0;
    }
    int rc;
    if (!f->in_tx && (rc = open_batch(f)) < 0)
        return rc;
    if ((rc = handle_line(f, lr->buf, lr->len, lr->line_start)) < 0)
        return rc;
    f->rep->lines_read++;
    f->rep->lines_unterminated++;
    f->lines++;
    f->consumed = f->size;
    return 0;
}

/* Rolls a failed file back (with the files before it in the open
 * transaction: the pass reads those again) and names it in the report. */
static void report_failure(file_state *f, int rc)
{
    if (f->in_tx) {
        f->g->lost = f->g->nclaims > 0;
        sync_group_end(f->s, f->g);
    }
    f->rep->files_failed++;
    char why[240];
    const char *detail = f->sys_errno ? strerror(f->sys_errno) : store_errmsg(f->s);
    snprintf(why, sizeof why, "file not synced: %s%s%s%s", mcpage_strerror(rc),
             detail && *detail ? " (" : "", detail ? detail : "", detail && *detail ? ")" : "");
    sync_example(f->rep, f->job->path, f->line_no, why);
}

/* Reads the new part of one file: open, claim the session, decide where
 * to resume, read the lines in batches, commit the last batch. */
int sync_file(store *s, sync_job *job, const sync_options *opt, sync_report *rep, sync_group *g,
              int64_t files_done, int64_t files_total, int64_t *bytes_done, int64_t bytes_total)
{
    file_state f = {.job = job, .opt = opt, .rep = rep, .s = s, .fd = -1, .g = g};
    sync_pass pass = {
        .files_done = files_done,
        .files_total = files_total,
        .bytes_done = bytes_done,
        .bytes_total = bytes_total,
        .batch_lines = opt->batch_lines > 0 ? opt->batch_lines : SYNC_BATCH_LINES,
        .batch_bytes = opt->batch_bytes > 0 ? opt->batch_bytes : SYNC_BATCH_BYTES,
        .g = g,
    };
    line_reader lr = {.line_max = opt->line_max ? opt->line_max : SYNC_LINE_MAX_DEFAULT};
    f.parse = (sync_parse_ctx){job->source, opt->keep_secrets,    opt->redact_rules,
                               &f.ids,      store_packs_texts(s), s};
    f.line_max = lr.line_max;
    store_source src = {0};
    int locked = 0, existed = 0;
    const int64_t messages_at = rep->messages_added;
    int rc = open_source(&f);
    if (rc != 0) {
        rc = rc > 0 ? 0 : rc; /* refused: warned, not a failure */
        goto out;
    }

    /* claim the session: another sync process (another machine, same
     * store) waits here, then continues from what this one stored */
    if ((rc = claim_session(s, g, job->session_id)) < 0)
        goto out;
    locked = 1;
    int found = store_source_get(s, opt->hostname, job->path, &src) == 0;
    char key[STORE_ID_MAX + 1];
    if ((rc = sync__session_key(s, opt, found ? &src : NULL, job->session_id, key)) < 0)
        goto out;
    if (rc == 1) { /* another owner's session has the id: this owner's is its own */
        char *k = sync_dup(key);
        if (!k) {
            rc = MCPAGE_ENOMEM;
            goto out;
        }
        store_session_unlock(s, job->session_id);
        locked = 0;
        sync__job_set_id(job, k);
        if ((rc = claim_session(s, g, job->session_id)) < 0)
            goto out;
        locked = 1;
    }
    /* the session's raw size counts the raw bytes handed over */
    if (sync_raw_pending(g->raw, job->session_id) && (rc = sync_raw_store(g->raw, s)) < 0)
        goto out;
    rc = store_session_state_get(s, job->session_id, &f.st);
    if (rc < 0 && rc != MCPAGE_ENOTFOUND)
        goto out;
    f.session_exists = rc == 0;
    existed = f.session_exists;
    rc = 0;
    f.size = (int64_t)f.sb.st_size;
    if (job->legacy && (rc = open_legacy(&f)) != 0) {
        rc = rc > 0 ? 0 : rc;
        goto out;
    }

    if ((rc = decide_resume(&f, &src, found, lr.line_max)) < 0 ||
        (rc = read_lines(&f, &lr, &pass)) < 0 || (rc = finish_last_line(&f, &lr)) < 0)
        goto out;
    rc = commit_batch(&f, 1, &pass);
    job->project_id = f.session_exists ? f.project_id : -1;
    if (rc == 0 && opt->changed && f.session_exists &&
        (!existed || rep->messages_added > messages_at))
        opt->changed(opt->changed_ud, job->session_id, !existed);
out:
    if (rc < 0)
        report_failure(&f, rc);
    free(f.model);
    free(f.branch);
    free(f.title);
    free(f.parent);
    free(f.meta_id);
    free(f.cwd);
    free(f.last_ts);
    free(lr.buf);
    store_source_clear(&src);
    if (locked && !f.kept)
        store_session_unlock(s, job->session_id);
    if (f.fd >= 0)
        close(f.fd);
    return rc;
}
