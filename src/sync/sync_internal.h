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

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_walk.h"

#define SYNC_BLOCK     (1024 * 1024)      /* read size */
#define SYNC_FILES_MAX (10 * 1000 * 1000) /* transcript files in one pass */

enum sync_source { SRC_CLAUDE, SRC_CODEX };

typedef struct sync_job {
    char *path;        /* as found under the agent's folder */
    char *real;        /* the resolved path when a link led to it (inside the folder), or NULL */
    char *session_id;  /* the session the file holds */
    char *parent;      /* parent session for sub-agents, when known from the layout */
    char *project_dir; /* Claude's mangled project directory name */
    int source;        /* enum sync_source */
    int subagent;      /* a Claude sub-agent transcript */
    int bare_agent;    /* an older Claude agent-<id>.jsonl beside the sessions: id from its lines */
    int legacy;        /* a Codex rollout of the 2025 TypeScript CLI: one JSON document */
    int changed;       /* set by the pre-pass */
    int same_session;  /* another file of this pass holds the same session: not read */
    struct stat sb;    /* from the pre-pass; st_size -1 when stat failed */
    int64_t project_id; /* its session's project after this run; -1 = none */
} sync_job;

typedef struct sync_jobs {
    sync_job *v;
    size_t n, cap;
} sync_jobs;

/* Finds every transcript under the homes `o` names, in path order, links
 * out of each home left alone (counted in `rep`). */
int sync_discover(sync_jobs *js, const sync_options *o, sync_report *rep);
void sync_jobs_free(sync_jobs *js);

/* Reads the new part of one changed file into `s`. */
int sync_file(store *s, sync_job *job, const sync_options *opt, sync_report *rep,
              int64_t files_done, int64_t files_total, int64_t *bytes_done, int64_t bytes_total);

/* Shared helpers. */
void sync_example(sync_report *rep, const char *path, int64_t line, const char *why);
/* 1 when the file has not changed for SYNC_SETTLED_SECONDS. */
int sync_settled(const struct stat *sb);

#endif
