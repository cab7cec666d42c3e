/*
 * Transcript sync: finds Claude Code transcripts and Codex CLI rollouts,
 * parses what is new in each file since the last run and writes it to the
 * store, one transaction per batch with the consumed offset in the same
 * transaction (so a killed sync resumes exactly). `mcpage sync` calls it
 * once; `mcpage serve` calls sync_run() on start and periodically.
 * Source directories are only ever read.
 */
#ifndef MCPAGE_SYNC_SYNC_H
#define MCPAGE_SYNC_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "sync/sync_redact.h"

#define SYNC_LINE_MAX_DEFAULT (64u * 1024u * 1024u) /* longer lines are skipped */
#define SYNC_EXAMPLES_MAX     5                     /* malformed-line examples kept in a report */
#define SYNC_EXAMPLE_LEN      300                   /* bytes of one example */
#define SYNC_PATH_MAX         4096
#define SYNC_WARNINGS_MAX     64  /* warnings kept in a report (all are counted) */
#define SYNC_WARNING_LEN      400 /* bytes of one, "source: path[:line]: why" */
/* A file unchanged this long is finished: a last line without its newline
 * that is a complete JSON object counts as a line. */
#define SYNC_SETTLED_SECONDS 60

typedef struct sync_progress {
    int64_t files_done, files_total;
    int64_t bytes_done, bytes_total; /* bytes to read in changed files */
    const char *path;                /* the file being read */
} sync_progress;

struct sync_desc;

/* A described source (src/sync/sync_desc.h) and the folder it is read from. */
typedef struct sync_described {
    const struct sync_desc *desc;
    const char *home; /* NULL: turned off */
} sync_described;

typedef struct sync_options {
    const char *claude_home; /* e.g. ~/.claude; NULL = skip Claude Code */
    const char *codex_home;  /* e.g. ~/.codex; NULL = skip Codex */
    const char *hostname;    /* recorded on sessions; NULL = gethostname() */
    const char *owner;       /* who new sessions belong to; NULL = login@hostname */
    size_t line_max;         /* 0 = SYNC_LINE_MAX_DEFAULT */
    int64_t batch_lines;     /* lines per transaction; 0 = 250,000 */
    int64_t batch_bytes;     /* bytes per transaction; 0 = 64 MiB */
    /* Called after each file (and within long files); may be NULL. */
    void (*progress)(void *ud, const sync_progress *p);
    void *progress_ud;

    const char *gemini_home;   /* e.g. ~/.gemini; NULL = skip Gemini CLI */
    const char *copilot_home;  /* e.g. ~/.copilot; NULL = skip GitHub Copilot CLI */
    const char *opencode_home; /* e.g. ~/.local/share/opencode; NULL = skip OpenCode */
    const char *cursor_home;   /* e.g. ~/.cursor; NULL = skip Cursor's agent CLI */

    /* The described sources (sync_desc.h) and their homes; none when 0. */
    const sync_described *described;
    size_t ndescribed;
    /* Take every file as settled: a complete last line without its
       newline is a line now, not once the file has been unchanged for
       SYNC_SETTLED_SECONDS (`mcpage sync --settle`, after copying files). */
    int settle;
    /* Store secrets as they are (`mcpage sync --keep-secrets`, config
       `keep_secrets`): no redaction (sync_redact.h, docs/security.md). */
    int keep_secrets;
    /* Called once per file (or database session) that stored messages in a
       pass, with its session id and whether the session is new; may be
       NULL. Its messages may wait in an open transaction: `committed`
       (may be NULL; same ud) is called after each commit, so every session
       `changed` named before it is readable then (`mcpage serve` tells its
       clients at that moment). A rolled-back file is read again and named
       again. */
    void (*changed)(void *ud, const char *session_id, int is_new);
    void (*committed)(void *ud);
    void *changed_ud;
    /* The user's own patterns and exceptions (redact.json, sync_redact.h);
       NULL: the built-in patterns only. */
    const sync_redact_rules *redact_rules;
    /* Asked before each changed file (may be NULL): non-zero ends the pass
       there. What was read is committed; the files not reached, and the
       databases of the folded sources, wait for the next pass
       (report.stopped). `mcpage serve` bounds its first pass with it. */
    int (*stop)(void *ud);
    void *stop_ud;
} sync_options;

#define SYNC_REPORT_SOURCES 80 /* sources a report keeps apart */

/* What one source gave in a pass, and the first thing that went wrong. */
typedef struct sync_source_report {
    char name[32];
    int found;              /* its folder exists */
    int64_t files;          /* session files (or database sessions) found */
    int64_t files_failed;   /* could not be read, or not regular files */
    int64_t sessions_added; /* new sessions */
    int64_t messages_added;
    int64_t warnings;               /* malformed or over-long lines, failed files, links out of its
                                       folder, unreadable folders, files holding another's session */
    char warning[SYNC_EXAMPLE_LEN]; /* the first: "path:line: why" */
} sync_source_report;

typedef struct sync_report {
    int64_t files_seen;         /* transcript files found */
    int64_t files_unchanged;    /* skipped by size, inode and mtime */
    int64_t files_read;         /* read from their consumed offset */
    int64_t files_reparsed;     /* truncated or replaced: read again from 0 */
    int64_t files_failed;       /* could not be read or stored */
    int64_t files_same_session; /* another file holds the same session id: not read */
    int64_t links_outside;      /* links out of the agent's folder: not followed */
    int64_t dirs_unreadable;    /* folders that could not be listed */
    int64_t lines_read;         /* complete lines read */
    int64_t lines_malformed;    /* not JSON objects; skipped */
    int64_t lines_too_long;     /* longer than line_max; skipped */
    int64_t lines_partial;      /* files ending in an unfinished line (waits) */
    int64_t lines_unterminated; /* last lines without a newline taken as finished */
    int64_t messages_added;
    int64_t sessions_added;
    int64_t bytes_read;
    int claude_found;   /* CLAUDE_HOME/projects could be listed */
    int codex_found;    /* CODEX_HOME/sessions or archived_sessions could be listed */
    int gemini_found;   /* GEMINI_HOME/tmp could be listed */
    int copilot_found;  /* COPILOT_HOME/session-state could be listed */
    int opencode_found; /* OPENCODE_HOME/opencode.db or storage/session exists */
    int cursor_found;   /* CURSOR_HOME/chats could be listed */
    double seconds;
    int nexamples;
    char examples[SYNC_EXAMPLES_MAX][SYNC_EXAMPLE_LEN]; /* "path:line: why" */
    /* Files and databases of an agent's folder that were refused or skipped
       (a link out of it, a FIFO, a file too large, a view, a locked
       database, a query past its budget): sync_warn() in sync_source.h.
       Control bytes in them are escaped. */
    int64_t warnings; /* every warning of the pass */
    int nwarnings;    /* the first SYNC_WARNINGS_MAX, kept */
    char warning_list[SYNC_WARNINGS_MAX][SYNC_WARNING_LEN];
    /* per source, in the order they were read */
    int nsources;
    sync_source_report sources[SYNC_REPORT_SOURCES];
    int current; /* the source being read (index + 1), 0 = none: examples are its warnings */
    /* Files whose last line was held back (sync_held): "path: why, when".
       held counts them all (a file once), held_list keeps the first. */
    int64_t held;
    int nheld;
    char held_list[SYNC_EXAMPLES_MAX][SYNC_EXAMPLE_LEN];
    /* When the last of them that waits only for time is taken (Unix
       seconds: its file unchanged for SYNC_SETTLED_SECONDS), or 0. */
    int64_t held_until;
    /* Secrets redacted in the lines this pass read, per kind (sync_redact.h). */
    sync_redact_counts redacted;
    /* sync_options.stop ended the pass: files_changed - files done wait. */
    int stopped;
    int64_t files_changed; /* files the pass found changed */
    int64_t files_done;    /* of them, read (or failed) before it ended */
    /* A named pass (sync_run_named) read only the files it was given:
       named is 1 and files_named their number; 0 after a walk. */
    int named;
    int64_t files_named;
    /* The named pass left something only a walk decides (a session of
       its files without a project, a file that failed): walk next. */
    int walk_due;
} sync_report;

/* Runs one sync pass into `s` (opened for writing). 0, or the first error
 * that stopped the whole pass; per-file failures only count in the report. */
int sync_run(store *s, const sync_options *opt, sync_report *rep);

/*
 * A pass over only the files `paths` name (the changes a watcher saw,
 * sync_watch.h), for `mcpage serve`: the jobs come from those paths under
 * the walk's rules (sync_discover_named), each file's record and session
 * are looked up one by one instead of all, and they are read as a walk's
 * pass reads them; the folded sources, the orphans' projects and the
 * backfills are left to the walks. When the names cannot decide what a walk
 * would do (a path outside the Claude and Codex session folders, a link, a
 * file that is not its session's file in the store, a new file of a known
 * session, a file that shrank), it walks instead, before writing anything:
 * rep->named says which ran. docs/sync.md, "Named passes".
 */
int sync_run_named(store *s, const sync_options *opt, char *const *paths, size_t n,
                   sync_report *rep);

/* Discovery only, nothing read or stored: what each source finds (its
 * files, whether its folder exists, folders and links it could not
 * follow) in rep->sources, for `mcpage sources`. */
int sync_scan(const sync_options *opt, sync_report *rep);

/* Default locations, resolved from flags' absence through the environment:
 * MCPAGE_CLAUDE_HOME, CLAUDE_CONFIG_DIR, ~/.claude; MCPAGE_CODEX_HOME,
 * CODEX_HOME, ~/.codex; MCPAGE_DB, $XDG_DATA_HOME/mcpage/archive.db,
 * ~/.local/share/mcpage/archive.db. MCPAGE_ERANGE when it does not fit. */
int sync_default_claude_home(char *buf, size_t n);
int sync_default_codex_home(char *buf, size_t n);
int sync_default_db(char *buf, size_t n);
/* MCPAGE_GEMINI_HOME, else $GEMINI_CLI_HOME/.gemini, else ~/.gemini;
 * MCPAGE_COPILOT_HOME, else $COPILOT_HOME, else ~/.copilot. */
int sync_default_gemini_home(char *buf, size_t n);
int sync_default_copilot_home(char *buf, size_t n);
/* MCPAGE_OPENCODE_HOME, else $XDG_DATA_HOME/opencode, else
 * ~/.local/share/opencode. */
int sync_default_opencode_home(char *buf, size_t n);
/* MCPAGE_CURSOR_HOME, else ~/.cursor. */
int sync_default_cursor_home(char *buf, size_t n);
/* Creates the parent directories of a file path (mode 0700). */
int sync_make_parent_dirs(const char *path);

#endif
