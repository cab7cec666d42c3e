/*
 * Cursor's editor (the IDE): composer conversations in its state.vscdb
 * databases (sync_cursor_ide.c, docs/transcripts.md "Cursor IDE"). A
 * described source with "writes": "cursor-ide" (src/sync/sources.json)
 * is read by it under its own name. Internal to src/sync/.
 */
#ifndef MCPAGE_SYNC_CURSOR_IDE_H
#define MCPAGE_SYNC_CURSOR_IDE_H

#include <jansson.h>
#include <stddef.h>

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_fold.h"
#include "sync/sync_parse.h"

/* Whose composers: the source named in jobs and warnings, its id prefix,
 * its formats (sync__cursor_ide_format and sync__cursor_ide_panel_format
 * under that name; panel_fmt NULL: the old chat panel is not read). */
typedef struct sync_cursor_ide_as {
    const char *source;
    const char *id_prefix;
    const sync_fold_format *fmt;
    const sync_fold_format *panel_fmt;
} sync_cursor_ide_as;

/* A composer of the global database; a tab of a workspace's old chat panel. */
extern const sync_fold_format sync__cursor_ide_format;
extern const sync_fold_format sync__cursor_ide_panel_format;

/* One job per composer holding messages in HOME/User/globalStorage/
 * state.vscdb and per chat panel tab of each HOME/User/workspaceStorage/
 * <hash>/state.vscdb, and each database's marker job
 * (sync_fold_job.mark); none for a database whose marker in `s` for
 * `hostname` says it is unchanged (s NULL: always listed). A database that
 * cannot be read is a warning. */
int sync__cursor_ide_discover(sync_fold_jobs *js, const char *home, store *s, const char *hostname,
                              sync_report *rep, const sync_cursor_ide_as *as);
/* 1 when HOME/User/globalStorage/state.vscdb or HOME/User/workspaceStorage exists. */
int sync__cursor_ide_found(const char *home);

/* For tests and fuzzing: the records of one bubble (r has room for 3):
 * `header_type` the type its header gives (0 = none), `id` its usage key,
 * `fallback_time` the time of one without its own (NULL = none). Returns
 * how many were filled. */
size_t sync__cursor_ide_bubble(json_t *b, json_int_t header_type, const char *id,
                               const char *fallback_time, sync_record *r);

#endif
