/* Helpers shared by the folded-source sync tests (test_sync_gemini.c,
   test_sync_copilot.c, test_sync_fold.c): syncing one agent home into a
   store, and a dump of what the store then holds, for golden files and
   for comparing a killed sync with a clean one. */
#ifndef MCPAGE_TEST_SYNC_SUPPORT_H
#define MCPAGE_TEST_SYNC_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "sync/sync.h"

/* Runs one sync of the given homes (NULL = skip) into the store `db`;
   fails the test when sync_run fails. */
void ts_sync(const char *db, const char *gemini, const char *copilot, sync_report *rep);
/* The store's sessions and messages as text (malloc'd): per session its
   facts, per message ordinal, role, tool, error flag, source line and
   text (newlines as \n, cut at `text_max` bytes), and the raw bytes' size
   and hash. Row ids are left out, so two stores filled differently
   compare equal when they hold the same. */
char *ts_dump(const char *db, int text_max);
/* Message `ordinal`'s id in a session, or -1. */
int64_t ts_message_id(const char *db, const char *sid, int64_t ordinal);
/* A fixture's temporary folder: /tmp/mcpage-test-<tag>-XXXXXX made in
   dir (n bytes); -1 when it cannot be made. */
int ts_fixture_dir(char *dir, size_t n, const char *tag);
/* A cmocka teardown for a malloc'd fixture whose first member is its
   ts_fixture_dir folder: drops the test stores (tb_cleanup), removes the
   folder and frees the fixture. */
int ts_fixture_drop(void **state);
/* Writes (mode "w") or appends ("a") text to a file. */
void ts_put(const char *path, const char *mode, const char *text);
/* Copies a directory tree (cp -r src dst). */
void ts_copy_tree(const char *src, const char *dst);
/* Reads a whole file (malloc'd), or NULL. */
char *ts_read_file(const char *path);

#endif
