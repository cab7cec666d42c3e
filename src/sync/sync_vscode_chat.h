/*
 * VS Code's chat sessions (sync_vscode_chat.c): the formats a described
 * source with "writes": "vscode-chat" is read with, its discovery, and
 * the mutation log's replay (for tests and fuzzing). Internal to
 * src/sync/.
 */
#ifndef MCPAGE_SYNC_VSCODE_CHAT_H
#define MCPAGE_SYNC_VSCODE_CHAT_H

#include <jansson.h>
#include <stddef.h>

#include "sync/sync_fold.h"

/* The two formats under a source's name: [0] the .json documents, [1]
 * the .jsonl mutation logs. */
void sync__vscode_chat_formats(sync_fold_format fmt[2], const char *source);

/* One job per chat session file under every VS Code-family User folder
 * of `home` (workspaceStorage/<hash>/chatSessions/, globalStorage/
 * emptyWindowChatSessions/), its session id `prefix` + the file's stem,
 * its project from workspace.json. A .json with a .jsonl beside it is
 * left to the .jsonl. Refused folders are warnings of `source`. */
int sync__vscode_chat_discover(sync_fold_jobs *js, const char *home, sync_report *rep,
                               const char *source, const char *prefix,
                               const sync_fold_format fmt[2]);

/*
 * Replays a mutation log (doc, len bytes) into the state it describes
 * (*out, a new reference). Entries that cannot apply (not JSON, an
 * unknown kind, a path that leads nowhere) are skipped and counted in
 * *skipped, the first named in `why`; an unfinished last line (no
 * newline, not JSON yet) is left for the next read. MCPAGE_EPARSE with a
 * reason when the log has no initial state (kind 0) first. Work is linear
 * in the log's size: each entry walks at most 64 path elements, and a
 * truncation removes only what the array holds.
 */
int sync__vscode_log_replay(const char *doc, size_t len, json_t **out, char *why, size_t whylen,
                            long *skipped);

#endif
