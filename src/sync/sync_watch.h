/*
 * Watching the agents' folders (Linux inotify) so that `mcpage serve`
 * syncs a changed transcript within a second instead of on its interval.
 *
 * Only folders are watched, never files: each source's own session folders
 * (CLAUDE_HOME/projects, CODEX_HOME/sessions, a described source's glob
 * prefix, ...) down to the depth its layout uses, and the folders between
 * the agent's home and a session folder that does not exist yet (so its
 * creation is seen). A folder created or moved in is watched at once and
 * counted as changed (its files may predate the watch); a folder deleted
 * or moved away drops its watch. The watcher keeps the names of the files
 * the events name (sync_watch_take): `mcpage serve` then runs a pass over
 * only those (sync_run_named, docs/sync.md "Named passes"), and walks every
 * folder when a name cannot be trusted to be all that changed: events lost
 * (IN_Q_OVERFLOW), a folder created, moved or deleted, more than
 * SYNC_WATCH_NAMES_MAX files.
 *
 * When the system's watch limit (fs.inotify.max_user_watches) or the
 * watcher's own (SYNC_WATCH_MAX) is reached, the folders left unwatched
 * sync on the interval only; sync_watch_warning() says so once.
 */
#ifndef MCPAGE_SYNC_SYNC_WATCH_H
#define MCPAGE_SYNC_SYNC_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "sync/sync.h"

/* Folders one watcher watches at most (each costs ~1 KiB of kernel memory). */
#define SYNC_WATCH_MAX 100000
/* Files the events between two passes may name; past it the next pass walks. */
#define SYNC_WATCH_NAMES_MAX 1000

typedef struct sync_watch sync_watch;

/*
 * Starts watching the folders of the sources `opt` names (opt and its
 * strings must outlive the watcher). 0, or a negative status with the
 * reason in `why` (inotify unavailable: not Linux, inotify_init failed).
 */
int sync_watch_open(const sync_options *opt, sync_watch **out, char *why, size_t cap);
/* The descriptor to poll for input (readable: call sync_watch_read). */
int sync_watch_fd(const sync_watch *w);
/*
 * Reads the pending events without blocking, watching new folders as they
 * appear. The number of events that concern sessions' folders (0: none,
 * only noise such as a file beside the session folders).
 */
int sync_watch_read(sync_watch *w);
/*
 * Hands over the files the events read since the last call named (*paths,
 * *n, malloc'd, each once; free with sync_watch_names_free) and forgets
 * them. 1 when they are all that changed in the watched folders, 0 when
 * the next pass must walk (events lost, a folder created, moved or
 * deleted, too many names, out of memory).
 */
int sync_watch_take(sync_watch *w, char ***paths, size_t *n);
void sync_watch_names_free(char **paths, size_t n);
/* Folders watched now. */
size_t sync_watch_count(const sync_watch *w);
/* Once, after the watch limit was met: what happened and the fix; else NULL. */
const char *sync_watch_warning(sync_watch *w);
void sync_watch_close(sync_watch *w);

#endif
