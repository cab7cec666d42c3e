/*
 * A file's raw bytes, redacted and packed on a thread of their own
 * (docs/sync.md, "Two cores").
 *
 * At the end of a batch the sync keeps the batch's bytes of the file as
 * the session's raw copy: read again from the file, redacted, packed in
 * zstd frames of up to STORE_RAW_CHUNK bytes. Reading, redacting and
 * packing were a tenth of the storing thread's time (docs/performance.md,
 * "Raw bytes packed off the storing thread"), so a batch hands them over
 * as a job (a duplicate of the file's descriptor, the range, its line
 * count) to a packer thread, which cuts and packs the range exactly as one
 * thread did: pieces of SYNC_BLOCK bytes ending after their last newline,
 * one stored chunk each. The storing thread stores the packed pieces in
 * the order they were handed over, inside the same transaction: whatever
 * is ready at each batch's end, and all of it before the transaction
 * commits (sync_group_commit); a rollback drops them. So the store gets
 * the rows one thread wrote, in the same order.
 *
 * Memory stays bounded: the packer waits while SYNC_RAW_HELD pieces are
 * packed and not stored, and at most SYNC_RAW_JOBS jobs (one open
 * descriptor each) wait. With one core or MCPAGE_SYNC_THREADS=1 there is
 * no packer thread: a job is packed and stored a piece at a time when it
 * is handed over, as before.
 */
#ifndef MCPAGE_SYNC_RAW_H
#define MCPAGE_SYNC_RAW_H

#include <stdint.h>

#include "store/store.h"
#include "sync/sync_redact.h"

#define SYNC_RAW_HELD 8  /* pieces packed and not yet stored, at most */
#define SYNC_RAW_JOBS 64 /* jobs handed over and not yet stored, at most */

typedef struct sync_raw sync_raw;

/* A queue of jobs, with its packer thread when there is a second core.
 * NULL: out of memory. */
sync_raw *sync_raw_new(void);
/* Drops what is left unstored and ends the thread. */
void sync_raw_free(sync_raw *r);

/*
 * Hands over the raw bytes [from, to) of the file open at `fd` (duplicated:
 * the caller may close it), holding `lines` complete lines, of session
 * `session_id`, redacted with `rules` unless keep_secrets. `s` is the
 * store, its transaction open: what is packed already is stored first
 * (and with no packer thread, this job too). 0, or a failure (then the
 * transaction is to be rolled back).
 */
int sync_raw_give(sync_raw *r, store *s, int fd, int64_t from, int64_t to, int64_t lines,
                  const char *session_id, const sync_redact_rules *rules, int keep_secrets);

/* Stores every job handed over, in order, waiting for the packer: 0, or
 * MCPAGE_EIO when a file could not be read again, or the store's failure
 * (then the transaction is to be rolled back). */
int sync_raw_store(sync_raw *r, store *s);

/* Drops every job unstored (the transaction was rolled back). */
void sync_raw_drop(sync_raw *r);

/* 1 when a job of session `id` is handed over and not yet stored. */
int sync_raw_pending(sync_raw *r, const char *id);

#endif
