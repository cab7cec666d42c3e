/*
 * Internal to src/sync/: the transcript files one pass found (jobs), the
 * walk that finds them (sync_discover.c) and the reading of one file
 * (sync_file.c). sync.c runs the pass: discovery, the pre-pass that picks
 * the changed files, the files, then the projects of sessions without one.
 *
 * Adding an agent: a source id below, a walk in sync_discover.c that adds
 * its files as jobs, and its line parser (sync_parse.h) in sync_file.c's
 * parse_line.
 */
#ifndef MCPAGE_SYNC_INTERNAL_H
#define MCPAGE_SYNC_INTERNAL_H

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_parse.h"
#include "sync/sync_walk.h"

#define SYNC_BLOCK     (1024 * 1024)      /* read size */
#define SYNC_FILES_MAX (10 * 1000 * 1000) /* transcript files in one pass */

enum sync_source { SRC_CLAUDE, SRC_CODEX };

/* What a pass keeps of a file's stat: a job's, 32 bytes where a struct
 * stat takes 144 (a walk keeps one per file). */
typedef struct sync_stat {
    int64_t size; /* st_size; -1 when gone, or when the file waits */
    int64_t inode;
    struct timespec mtime;
} sync_stat;

typedef struct sync_job {
    char *path;        /* as found under the agent's folder */
    const char *home;  /* that folder, as the options name it (not owned) */
    char *real;        /* the resolved path when a link led to it (inside the folder), or NULL */
    char *session_id;  /* the session the file holds */
    char *parent;      /* parent session for sub-agents, when known from the layout */
    char *project_dir; /* Claude's mangled project directory name */
    int source;        /* enum sync_source: the reader */
    const char *source_name; /* the store's source name when another agent writes this
                                format (a description's "writes"), else NULL */
    const char *id_prefix;   /* that agent's session id prefix, or NULL */
    int subagent;            /* a Claude sub-agent transcript */
    int bare_agent;   /* an older Claude agent-<id>.jsonl beside the sessions: id from its lines */
    int legacy;       /* a Codex rollout of the 2025 TypeScript CLI: one JSON document */
    int changed;      /* set by the pre-pass */
    int same_session; /* another file of this pass holds the same session: not read */
    sync_stat sb;     /* from the walk or the pre-pass; size -1 when stat failed */
    int statted;      /* sb is the walk's (a plain file's, by name in its folder) */
    int settle;       /* sync_options.settle: taken as settled whatever its age */
    int64_t project_id; /* its session's project after this run; -1 = none */
    uint64_t id_hash;   /* sync__id_hash(session_id), made where the id is (the walk's
                           threads); a new id is set with sync__job_set_id */
} sync_job;

typedef struct sync_jobs {
    sync_job *v;
    size_t n, cap;
} sync_jobs;

/* A session id's hash (eight bytes at a time); never 0. */
uint64_t sync__id_hash(const char *id);
/* Gives the job the session id `id` (taken; the one before is freed) and its hash. */
void sync__job_set_id(sync_job *j, char *id);

/* Finds every transcript under the homes `o` names, in path order, links
 * out of each home left alone (counted in `rep`). */
int sync_discover(sync_jobs *js, const sync_options *o, sync_report *rep);
void sync_jobs_free(sync_jobs *js);
/* What a named pass returns when it cannot decide alone: walk instead. */
#define SYNC_WALK 1
/*
 * The jobs of the files `paths` name (a watcher's names), under the walk's
 * rules: each path below one Claude or Codex session folder of `o` where
 * the walk would list a transcript gives that file's job, exactly as the
 * walk gives it; a path where the walk lists none (a file gone, another
 * file, a hidden folder) gives nothing. SYNC_WALK when a path is
 * not one the named rules decide: below no such folder (a folded
 * source's), below two, through a link to a folder, or a folder now.
 */
int sync_discover_named(sync_jobs *js, const sync_options *o, char *const *paths, size_t n,
                        sync_report *rep);

/*
 * One transaction over several files (sync_file.c): the files of a pass
 * are committed together up to the batch limits, not one by one, so FTS5
 * writes one index segment per batch instead of one per file and merges
 * far fewer (docs/sync.md, "Batches and crash safety"). The claims of the
 * files' sessions are held until the commit. A file that fails rolls the
 * transaction back with the files before it in the group: `lost` tells the
 * pass to read those again, each in its own transaction (`solo`).
 */
#define SYNC_GROUP_FILES_MAX 1000 /* files in one transaction at most */

typedef struct sync_group {
    int open;             /* a transaction is open */
    int lost;             /* a rollback took finished files of the group with it */
    int solo;             /* commit each file on its own */
    int64_t lines, bytes; /* of the files finished in the open transaction */
    char **claims;        /* those files' session claims, released after the commit (owned) */
    size_t nclaims;       /* entries in claims: the files finished in it */
    sync_report *rep;     /* the report whose counts the open transaction added to */
    int64_t sessions_at;  /* rep->sessions_added when the transaction began */
    int64_t messages_at;  /* rep->messages_added then: a rollback puts both back */
    const struct sync_options *opt; /* its `committed` hook is called after each commit */
    struct sync_ahead *ahead;       /* the thread that parses lines ahead (sync_lines.h), or NULL */
    struct sync_raw *raw; /* the raw bytes handed over in the open transaction (sync_raw.h) */
    int ahead_tried;      /* ahead was started, or could not be */
} sync_group;

/* Tests set this: a file fails (MCPAGE_EIO) when it reaches this line
 * number, after storing the line; 0 (the default) never. */
extern int64_t sync__fail_line;

/* Stores the raw bytes handed over (sync_raw.h), commits the group's
 * transaction, if open, and releases its claims. */
int sync_group_commit(store *s, sync_group *g);
/* After a failure: rolls the open transaction back, releases the claims
 * and frees them. */
void sync_group_end(store *s, sync_group *g);

/* Reads the new part of one changed file into `s`, in the group's
 * transaction. */
/*
 * The id a sync stores a file's session under (into key, STORE_ID_MAX + 1
 * bytes): `id`, unless another owner's session holds it and this
 * machine's record of the file (`src`, or NULL when it has none) does not
 * already name it (an owner renamed goes on in its sessions); then this
 * owner's own key (store_session_key). 1 when key differs from `id` (the
 * caller claims key instead), 0 when not, or a store error.
 */
int sync__session_key(store *s, const sync_options *opt, const store_source *src, const char *id,
                      char *key);
/* A parent session's id as this sync stores it: its key (into buf), or
 * `parent` itself (NULL stays NULL). */
const char *sync__parent_key(store *s, const sync_options *opt, const char *parent, char *buf);

int sync_file(store *s, sync_job *job, const sync_options *opt, sync_report *rep, sync_group *g,
              int64_t files_done, int64_t files_total, int64_t *bytes_done, int64_t bytes_total);

/* Stores the model call a parsed line records, if any (sync_usage.c):
 * `message_id` the message stored from the line (0 = none), `fallback_ts`
 * the time of the line before when the line has none, `fallback_model`
 * the session's model so far when the line names none (Codex). */
int sync_usage_put(store *s, const char *session_id, int64_t message_id, const sync_record *r,
                   const char *fallback_ts, const char *fallback_model);

/* ---- file edits (sync_edits.c) ---- */

/* One file a tool call wrote or edited, as read from its arguments. */
typedef struct sync_edit {
    const char *path;    /* absolute when the session's cwd was known */
    const char *tool;    /* the call's tool name */
    int64_t added;       /* lines, or -1 when the call does not show them */
    int64_t removed;     /* lines, or -1 */
    const char *summary; /* "edit: + first changed line", "create", "move to P", ... */
} sync_edit;

typedef int (*sync_edit_fn)(void *ud, const sync_edit *e);

/* The "edit_tools" entry of tool `name` for `source` (the store's source
 * name), else for `format` (the format it writes: "claude", "codex"), or
 * NULL when the call edits no file. */
const json_t *sync__edit_tool(const char *source, const char *format, const char *name);
/* The files one call changed, each given to fn (a negative return stops
 * and is returned). `args` as the agent wrote them: an object, or a
 * string holding JSON or the raw input (an apply_patch text). */
int sync__edits_of_call(const char *source, const char *format, const char *name, json_t *args,
                        const char *cwd, sync_edit_fn fn, void *ud);
/* Stores the file edits of a parsed record's calls (r->calls) with its
 * message; `cwd` the session's working directory, or NULL to ask the
 * store (store_session_cwd) when a call edits a file. */
int sync_edits_put(store *s, const char *source, const char *format, const char *session_id,
                   int64_t message_id, const sync_record *r, const char *cwd,
                   const char *fallback_ts);
/* The edits of sessions stored before the store kept them, from their
 * raw bytes (sync_backfill.c), once. */
int sync_edits_backfill(store *s);

/* Reads the calls of sessions stored before the store kept them, once
 * (sync_backfill.c). */
int sync_usage_backfill(store *s);

/* Shared helpers. */
void sync_example(sync_report *rep, const char *path, int64_t line, const char *why);

/* Per-source accounting: the report's counters when a source's work
 * began; sync__source_end adds what changed since to that source. */
typedef struct sync_mark {
    int prev; /* rep->current before */
    int64_t failed, sessions, messages, warnings;
} sync_mark;

/* The report's entry for a source (added when new; NULL when full). */
sync_source_report *sync__source(sync_report *rep, const char *name);
void sync__source_begin(sync_report *rep, const char *name, sync_mark *m);
void sync__source_end(sync_report *rep, sync_mark *m);
/* 1 when the file has not changed for SYNC_SETTLED_SECONDS. */
int sync_settled(const struct stat *sb);
/* 1 when the job's file counts as settled: sync_settled, or --settle. */
int sync_job_settled(const sync_job *j, const struct timespec *mtime);
/* Keeps what a pass compares of a stat. */
void sync_stat_keep(sync_stat *st, const struct stat *sb);
/*
 * Names a file whose last line was held back in the report. `until` > 0:
 * the line is complete and waits only for the file to settle, which it
 * does at `until` (Unix seconds); 0: the line is unfinished and waits for
 * its writer.
 */
void sync_held(sync_report *rep, const char *path, int64_t until);

#endif
