/*
 * Growable arrays, and files and folders as every agent's discovery walks them (Claude Code
 * and Codex in sync_discover.c, Gemini CLI, Copilot CLI and OpenCode in
 * their sources): the home folder, paths, and one loop over a folder's
 * entries. Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_WALK_H
#define MCPAGE_SYNC_WALK_H

#include <dirent.h>
#include <stddef.h>

#include "sync/sync.h" /* SYNC_PATH_MAX */

/* Makes room for one more element in a growable array (*v of *cap
 * elements of `size` bytes, `n` used): doubles it, from `first`.
 * MCPAGE_ENOMEM leaves the array as it was. */
int sync_grow(void **v, size_t *cap, size_t n, size_t size, size_t first);
/* $HOME, else the password database's home, else "/". */
const char *sync_home_dir(void);
/* A malloc'd copy (NULL for NULL or when out of memory). */
char *sync_dup(const char *src);
/* "a/b", malloc'd; NULL when out of memory or longer than SYNC_PATH_MAX. */
char *sync_join(const char *a, const char *b);
/* 1 when `s` ends with `suffix`. */
int sync_ends_with(const char *s, const char *suffix);
/* 1 when a folder entry is a directory (want_dir) or a regular file,
 * from its d_type or, when that is unknown, stat (links followed). */
int sync_entry_is(const struct dirent *e, const char *path, int want_dir);

/*
 * Calls fn(ud, e, path) for each entry of the open folder `d` whose name
 * does not start with '.', `path` being dir/name, malloc'd and the
 * callback's to keep or free; closes `d`. fn returns 0 to go on, a
 * positive value to stop (sync_dir_each then returns 0) or an error,
 * which stops and is returned. MCPAGE_ENOMEM when a path cannot be made.
 */
typedef int (*sync_entry_fn)(void *ud, const struct dirent *e, char *path);
int sync_dir_each(DIR *d, const char *dir, sync_entry_fn fn, void *ud);

#endif
