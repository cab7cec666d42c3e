/*
 * VS Code-family editors (VS Code, Insiders, VSCodium, Cursor, Windsurf,
 * Positron...) keep what their chat panels and extensions write under one
 * layout: <config>/<Editor>/User/{workspaceStorage/<hash>/,globalStorage/}.
 * This module finds those User folders under an agent's home and turns a
 * workspaceStorage folder's workspace.json into the project path it
 * stands for, for every reader of that layout (VS Code's chat sessions,
 * sync_vscode_chat.c; Cursor's editor database). Folders are opened
 * through sync_source.h like every other reader's. Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_VSCODE_H
#define MCPAGE_SYNC_VSCODE_H

#include <stddef.h>

#include "sync/sync.h"

/* Bytes of a workspace.json read (a real one is under 200). */
#define SYNC_VSCODE_WORKSPACE_MAX 65536

/*
 * One User folder: `user` its path (home/<editor>/User, or home itself),
 * `editor` the editor folder's name ("Code", "Code - Insiders"; "" when
 * home is that folder or a User folder). Both are the callee's to read,
 * not to keep. A non-zero return stops the walk and is returned.
 */
typedef int (*sync_vscode_user_fn)(void *ud, const char *user, const char *editor);

/*
 * Calls fn for each VS Code-family User folder `home` holds: home itself
 * when it is one (it holds workspaceStorage/ or globalStorage/), else
 * home/User when home is one editor's folder (~/.config/Code), else
 * home/<editor>/User for every folder of home that has one (~/.config:
 * every editor at once). A folder that cannot be listed or leads out of
 * home is named in a warning of `source` (rep may be NULL). 0 or the
 * callback's error.
 */
int sync_vscode_users(const char *home, sync_report *rep, const char *source,
                      sync_vscode_user_fn fn, void *ud);
/* 1 when `home` holds at least one User folder (as sync_vscode_users). */
int sync_vscode_found(const char *home);

/*
 * The local path a workspace URI names (malloc'd), percent-decoded:
 * file:///home/a/b%20c -> /home/a/b c; file:///c%3A/src/app -> C:\src\app
 * (a Windows drive, as that system writes it); vscode-remote://ssh-remote
 * %2Bhost/home/a -> /home/a (the path on the remote machine, which other
 * agents there record). NULL for other schemes, a URI with no absolute
 * path, a bad escape, a NUL or control byte, bytes that are not UTF-8,
 * or a path longer than SYNC_PATH_MAX.
 */
char *sync_vscode_uri_path(const char *uri);

/*
 * The project of a workspaceStorage/<hash>/ folder `wsdir` (malloc'd), or
 * NULL: its workspace.json's "folder" URI as a path, or for "workspace"
 * (a multi-root .code-workspace file) the folder that file is in, except
 * an untitled workspace the editor keeps in its own Workspaces/ folder.
 * The file is read under `home` (sync_source_read, at most
 * SYNC_VSCODE_WORKSPACE_MAX bytes); a refused one (a link out of home, a
 * FIFO, too large) or one that is not JSON is named in a warning of
 * `source`; a missing one is no project, silently.
 */
char *sync_vscode_workspace(const char *home, const char *wsdir, sync_report *rep,
                            const char *source);

#endif
