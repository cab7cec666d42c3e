/*
 * A transcript file's lines, parsed in chunks ahead of the thread that
 * stores them (docs/sync.md, "Two cores").
 *
 * sync_file.c splits the file into lines and gathers them in chunks
 * (SYNC_CHUNK_FIRST, doubling up to SYNC_CHUNK_BYTES). A chunk's lines are
 * redacted and parsed (UTF-8 repair, JSON, the agent's record) by a second
 * thread while the sync's own thread stores the chunk before it; that
 * thread also packs each message's text as the store will keep it (zstd,
 * store_text_pack) and makes its index tokens (store_text_tokens). Parsing and packing were about a
 * quarter of a first sync's CPU (docs/performance.md, "Parsing on a second core"). What a line's
 * parse needs of the file (the tool ids its calls named) is touched only by the parse, one chunk at
 * a time and in order, so the records are those one thread makes.
 *
 * With one core, or MCPAGE_SYNC_THREADS=1, there is no second thread:
 * a chunk is parsed when it is handed over, by the thread that hands it
 * (MCPAGE_SYNC_THREADS=2 starts it even on one core: tests).
 */
#ifndef MCPAGE_SYNC_LINES_H
#define MCPAGE_SYNC_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "sync/sync_internal.h"
#include "sync/sync_parse.h"
#include "sync/sync_redact.h"

#define SYNC_CHUNK_BYTES (64 * 1024) /* a chunk is handed over past this many bytes */
#define SYNC_CHUNK_FIRST                                                                           \
    (16 * 1024)              /* a file's first (parsed by the storing thread), and                 \
                                each next twice the one before, while the first is                 \
                                stored */
#define SYNC_CHUNK_LINES 256 /* or this many lines */
#define SYNC_CHUNK_LINE_MAX                                                                        \
    (1024 * 1024) /* a longer line is parsed by the storing thread,                                \
                     after the chunks before it: not copied, and                                   \
                     its record not kept (peak memory as before) */

/* A blank line (spaces only): nothing to parse. */
#define SYNC_BLANK 1

/* What a chunk's entry is. */
enum sync_line_kind {
    SYNC_LINE_TEXT,     /* a complete line: parsed */
    SYNC_LINE_TOO_LONG, /* longer than the reader's limit: its bytes were dropped */
    SYNC_LINE_NEWLINE   /* the newline of a line stored without it: no line */
};

typedef struct sync_parsed {
    int64_t start, end; /* file offsets: the line's first byte, the byte after its newline */
    size_t off, len;    /* its bytes in the chunk's buffer */
    int kind;           /* enum sync_line_kind */
    int rc;             /* SYNC_LINE_TEXT: 0 (r filled), SYNC_BLANK, MCPAGE_EPARSE (why), or a
                           failure */
    char why[200];
    sync_record r;
    int packed;              /* r.text was packed ahead, into pack */
    store_text_packed pack;  /* bytes: r.text itself (codec plain) or pack_buf; tokens */
    unsigned char *pack_buf; /* owned */
    store_tokens *tokens;    /* r.text's index tokens made ahead (owned), or NULL */
} sync_parsed;

/*
 * The records a chunk's parse allocates are freed on the parsing thread
 * too: a stored chunk's entries become `spent`, freed when the chunk is
 * parsed next (or freed), so memory goes back to the allocator's arena
 * of the thread that took it.
 */
typedef struct sync_chunk {
    char *buf; /* the lines' bytes, one after the other */
    size_t len, cap;
    sync_parsed *v;
    size_t n, vcap;
    sync_parsed *spent; /* entries stored, their records not yet freed */
    size_t nspent, spentcap;
    sync_redact_counts redacted; /* what the parse redacted */
} sync_chunk;

/* How a file's lines are parsed. `ids` is the file's parse state. */
typedef struct sync_parse_ctx {
    int source; /* enum sync_source */
    int keep_secrets;
    const sync_redact_rules *rules;
    sync_tool_ids *ids;
    int pack; /* the store packs texts (store_packs_texts): the second thread packs them */
    store *s; /* the store, whose tokenizer the second thread copies (store_tokenizer_new) */
} sync_parse_ctx;

/*
 * Parses one line with its source's parser, after UTF-8 repair: 0 (r
 * filled), MCPAGE_EPARSE (reason in `why`) or SYNC_BLANK for a line of
 * spaces only (nothing to parse). The line is not redacted here.
 */
int sync_parse_line(int source, const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                    char *why, size_t whylen);

/* Redacts (unless ctx->keep_secrets) and parses one line in place. */
void sync_parse_one(const sync_parse_ctx *ctx, char *line, size_t len, sync_parsed *p,
                    sync_redact_counts *redacted);

/* Adds a line of `kind` to the chunk (its bytes copied): 0 or MCPAGE_ENOMEM. */
int sync_chunk_add(sync_chunk *c, const char *line, size_t len, int64_t start, int64_t end,
                   int kind);
/* 1 when the chunk should be handed over: past `bytes` or SYNC_CHUNK_LINES. */
int sync_chunk_full(const sync_chunk *c, size_t bytes);
/* Empties a stored chunk for the next lines; its records are freed by its
 * next parse. */
void sync_chunk_stored(sync_chunk *c);
/* Frees the chunk and every record it holds. */
void sync_chunk_free(sync_chunk *c);

/* The second thread. NULL from sync_ahead_start means none (one core,
 * MCPAGE_SYNC_THREADS=1, or it could not start): the calls below then
 * parse on the caller's thread. */
typedef struct sync_ahead sync_ahead;

sync_ahead *sync_ahead_start(void);
/* Parses chunk c with ctx, on the second thread; one chunk at a time:
 * the one before must have been waited for. */
void sync_ahead_submit(sync_ahead *a, sync_chunk *c, const sync_parse_ctx *ctx);
/* Waits until the chunk submitted last is parsed (at once when none is). */
void sync_ahead_wait(sync_ahead *a);
void sync_ahead_stop(sync_ahead *a);

#endif
