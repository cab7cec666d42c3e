/*
 * Folded sources: transcript formats whose records can change after they
 * are written (Gemini CLI: a message appended again with the same id
 * replaces it, `$rewindTo` drops it and what followed; GitHub Copilot
 * CLI: `session.snapshot_rewind` drops events). Each file is read whole,
 * its lines folded into the ordered list of messages it holds now, and
 * that list compared with the one the stored prefix gave: when the old
 * list is a prefix of the new one only the new messages are stored, else
 * the session is stored again from byte 0. One transaction per file holds
 * the messages, the raw bytes, the session facts and the consumed offset,
 * so a killed sync resumes exactly like the line sources in sync.c.
 * Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_FOLD_H
#define MCPAGE_SYNC_FOLD_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_parse.h"
#include "sync/sync_source.h"
#include "sync/sync_walk.h"

#define SYNC_FOLD_READ_MAX (256 << 20) /* largest file read (it is read whole) */
#define SYNC_FOLD_ID_MAX   96          /* bytes of a record id kept (longer ids are cut) */

/* One message the fold holds: where its latest version is. */
typedef struct sync_fold_entry {
    char id[SYNC_FOLD_ID_MAX]; /* the record's id; "" when it has none */
    int64_t offset;            /* content offset of the line holding its latest version */
    int64_t length;            /* that line's bytes, newline excluded */
    int64_t line_no;           /* 1-based line number of that line */
    int32_t sub;               /* its index in a checkpoint line's array; -1 = the line */
    long prev;                 /* the entry before it with the same id, or -1 */
} sync_fold_entry;

/* The folded state of a file: its messages in order and the facts seen. */
typedef struct sync_fold {
    sync_fold_entry *v; /* the messages, in the order the agent keeps them */
    size_t n, cap;
    char *session_id; /* the session the file names (owned, or NULL) */
    char *cwd;        /* the project directory the file names, or NULL */
    char *title;      /* a title the agent set (a summary), or NULL */
    char *model;      /* the last model named by a facts line, or NULL */
    char *branch;     /* git branch, or NULL */
    char *parent;     /* the parent session, or NULL */
    char *start_time; /* when the session began, for messages without a time, or NULL */
    uint64_t *seen;   /* hashes of names a format remembers (sync_fold_seen_add) */
    size_t nseen, capseen;
    sync_idmap index;  /* id -> its newest entry below n (-1: none), so a fold is linear */
    size_t join_open;  /* 1 + the last entry while stream fragments may join it; 0: none */
    char join_key[16]; /* the role those fragments have */
    /* a described document's calls keyed by message id (its usage_by
       object, sync__desc_reply_usage), a reference held, or NULL */
    struct json_t *doc_usage;
} sync_fold;

/* Appends an entry; MCPAGE_ENOMEM. */
int sync_fold_push(sync_fold *f, const char *id, int64_t off, int64_t len, int64_t line_no,
                   int32_t sub);
/* Index of the newest entry with `id`; -1 when absent. O(1). */
long sync_fold_find(const sync_fold *f, const char *id);
/* Drops the entries from `n` on (a rewind; 0 for a checkpoint), keeping the
 * index right: O(entries dropped). Never set f->n directly. */
int sync_fold_truncate(sync_fold *f, size_t n);
/* Remembers a name (e.g. a tool call id already requested) for the rest
 * of the fold; MCPAGE_ENOMEM. NULL or "" is ignored. */
int sync_fold_seen_add(sync_fold *f, const char *name);
/* 1 when the fold remembers `name`. */
int sync_fold_seen_has(const sync_fold *f, const char *name);
/* Replaces *slot with a copy of val (NULL or "" leave it). */
void sync_fold_set(char **slot, const char *val);
void sync_fold_free(sync_fold *f);

/* One folded format. */
struct sync_fold_job;
struct sync_desc;

typedef struct sync_fold_format {
    const char *source; /* the store's source name, e.g. "gemini" */
    /* Folds one line (valid UTF-8, not blank) found at content offset
     * `off`. 0, or MCPAGE_EPARSE with a reason in `why`. */
    int (*fold_line)(sync_fold *f, const char *line, size_t len, int64_t off, int64_t line_no,
                     char *why, size_t whylen);
    /* The messages of one entry (its line, and its index in a checkpoint
     * array or -1): *out gets a malloc'd array of *n records (maybe 0). */
    int (*expand)(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n);
    /* Optional: a whole-document file read as the JSON Lines it stands for
     * (*out malloc'd); MCPAGE_EPARSE with a reason when it is not one. */
    int (*convert)(const char *doc, size_t len, char **out, size_t *outlen, char *why,
                   size_t whylen);
    /* Optional: a job that is not a file (one session of a database): its
     * rows rendered as JSON Lines (*out malloc'd); replaces reading a file.
     * A rendering may change anywhere, so before new rows are appended the
     * stored raw bytes are compared with the rendering's prefix. */
    int (*load)(const struct sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen);
    /* A described format (sync_desc.h): fold_line, expand and convert are
       the engine's, driven by this description; NULL for the C formats. */
    const struct sync_desc *desc;
    /* The converted text may change anywhere, not only at its end (a
       request in the middle of a VS Code chat grew): the stored raw bytes
       are compared with its prefix before new messages are appended, as
       for `load`. */
    int rendered;
    /* Optional, for a line many entries point into (a checkpoint of
     * 10,000 messages): the line parsed once (NULL when it does not
     * parse), an entry's messages from that (as expand gives them), and
     * its release. Without them each entry parses its line again, which
     * is quadratic in a checkpoint's size. */
    void *(*parse)(const char *line, size_t len);
    int (*expand_parsed)(void *parsed, int32_t sub, sync_record **out, size_t *n);
    void (*parsed_free)(void *parsed);
} sync_fold_format;

/* One file to read. */
typedef struct sync_fold_job {
    char *path;
    char *home; /* the agent's folder (resolved) the file was found under, or NULL */
    const sync_fold_format *fmt;
    char *session_id;  /* from the file's place; NULL = the id the file names */
    char *row_id;      /* the session's own id where session_id carries a source's prefix
                          (Kilo's sessions in kilo.db), or NULL: session_id is it */
    char *fallback_id; /* the id when the file names none (a described source's {id}), or NULL */
    char *parent;      /* parent session from the file's place, or NULL */
    char *cwd;         /* project directory from the file's place, or NULL */
    int convert;       /* read through fmt->convert */
    int folder;        /* path is a session's folder of record files (a described layout) */
    /* a job that is not a file (fmt->load): where its rows are, and the
       identity that says whether they changed (compared like a stat) */
    char *db;         /* the database file, or NULL */
    char *title;      /* the session's title the database names, or NULL */
    int64_t size;     /* e.g. rows of the session */
    int64_t inode;    /* e.g. the database file's inode */
    int64_t mtime_ns; /* e.g. the newest row's update time */
    /* a job that is a byte range of the file `db` (an Aider run) */
    int64_t from, to; /* the range */
    int64_t line0;    /* the file's line number at `from` (1-based) */
    int tail;         /* the range reaches the file's end: its last message may grow */
    int settle;       /* sync_options.settle: the file counts as settled */
    /* a database's change marker, not a session: its identity (size, inode,
       mtime_ns) is stored under `path` once every other job of the same
       `db` was read without a failure or warning in the pass, so that
       discovery can skip the database while it stays the same */
    int mark;
} sync_fold_job;

typedef struct sync_fold_jobs {
    sync_fold_job *v;
    size_t n, cap;
} sync_fold_jobs;

/* Takes ownership of the job's strings (freed on failure too). */
int sync__fold_jobs_add(sync_fold_jobs *js, sync_fold_job *j);
/* Frees a job's strings (every one it holds: unset ones are NULL). */
void sync__fold_job_free(sync_fold_job *j);
void sync__fold_jobs_free(sync_fold_jobs *js);

/* The formats. */
extern const sync_fold_format sync__gemini_format;
extern const sync_fold_format sync__copilot_format;
extern const sync_fold_format sync__opencode_format;
extern const sync_fold_format sync__opencode_json_format;
extern const sync_fold_format sync__cursor_format;

/* Discovery per format: appends the files under the agent's home. */
int sync__gemini_discover(sync_fold_jobs *js, const char *home, store *s, sync_report *rep);
int sync__copilot_discover(sync_fold_jobs *js, const char *home, sync_report *rep);
/* For tests and fuzzing: a Cursor tree node's bytes rendered as sync
 * renders them (every child blob missing), into w; *workspace gets the
 * workspace a root names (owned), or NULL. */
int sync__cursor_render_node(const unsigned char *p, size_t n, FILE *w, char **workspace);
/* Cursor's agent CLI: one job per chat database under CURSOR_HOME/chats. */
int sync__cursor_discover(sync_fold_jobs *js, const char *home, sync_report *rep);
/* OpenCode: one job per session of DATA/opencode.db; a database that
 * cannot be opened is counted as a failed file in `rep`. */
int sync__opencode_discover(sync_fold_jobs *js, const char *data_dir, sync_report *rep);
/* An agent that writes OpenCode's format under its own name (Kilo CLI:
 * DATA/kilo.db and the same storage tree): the source named in jobs and
 * warnings, the database's file name in its data folder, and its formats
 * (the database's, the storage tree's, the first storage's), made by
 * sync__opencode_formats. */
typedef struct sync_opencode_as {
    const char *source;
    const char *db_file;
    const sync_fold_format *fmt[3];
} sync_opencode_as;
int sync__opencode_discover_as(sync_fold_jobs *js, const char *data_dir, sync_report *rep,
                               const sync_opencode_as *as);
/* OpenCode's three formats under another source name. */
void sync__opencode_formats(sync_fold_format fmt[3], const char *source);

/* Aider (sync_aider.c): the format under a source's name, and one job
 * per run of every .aider.chat.history.md found in the folders `home`
 * lists (colon-separated) and in the archive's project folders (`s`, may
 * be NULL). */
void sync__aider_format(sync_fold_format *fmt, const char *source);
int sync__aider_discover(const struct sync_desc *d, const sync_fold_format *fmt, const char *home,
                         store *s, sync_fold_jobs *js, sync_report *rep);
/* For tests and fuzzing: a history file's bytes rendered as one run
 * (`complete` = 0: the last message held back without its newline). */
int sync__aider_render(const char *p, size_t n, int complete, char **out, size_t *outlen);

/* The folded sources' pass (called by sync_run with its options, the
 * hostname resolved): discovery, the unchanged-file check, and each
 * changed file. Per-file failures only count in the report. */
int sync__fold_run(store *s, const sync_options *opt, sync_report *rep);
/* Discovery only (sync_scan): the files each folded source finds. */
int sync__fold_scan(const sync_options *opt, sync_report *rep);

/* One line through a format as sync reads it, for tests and fuzzing:
 * folds it into `f` and expands what it added or replaced. */
int sync__fold_parse_line(const sync_fold_format *fmt, sync_fold *f, const char *line, size_t len,
                          sync_record **out, size_t *n, char *why, size_t whylen);
void sync__records_free(sync_record *r, size_t n);
/*
 * Hands back the `k` records an expand built (none: *out NULL), or frees
 * them and returns MCPAGE_ENOMEM when a record's text could not be made.
 */
int sync__records_finish(sync_record *r, size_t k, sync_record **out, size_t *n);

#endif
