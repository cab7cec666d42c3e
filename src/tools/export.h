/*
 * Exports of archived sessions for people (docs/export.md): Markdown with
 * tool calls and results folded in <details>, one self-contained HTML
 * file, or the original JSON Lines byte for byte. Used by `mcpage export`
 * and the export_session tool. Reads the store; writes a FILE, or a file
 * by temp file and rename, so a failed export leaves nothing behind.
 */
#ifndef MCPAGE_TOOLS_EXPORT_H
#define MCPAGE_TOOLS_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

typedef enum export_format {
    EXPORT_MD = 0, /* Markdown (default) */
    EXPORT_HTML,   /* one HTML file, no external asset, no script */
    EXPORT_JSONL   /* the session's original bytes as stored */
} export_format;

/* What an export wrote. */
typedef struct export_stats {
    int64_t bytes;    /* bytes written */
    int64_t lines;    /* newlines written */
    int64_t messages; /* messages rendered (0 for jsonl) */
} export_stats;

/* "md", "html" or "jsonl" (also "markdown", "json-lines"); 0 or MCPAGE_EINVAL. */
int export_format_parse(const char *name, export_format *out);
/* The file extension without the dot: "md", "html", "jsonl". */
const char *export_format_ext(export_format f);
/* The media type: text/markdown, text/html, application/jsonl. */
const char *export_format_mime(export_format f);

/*
 * Writes session `ses` in `fmt` to `f`. 0, or a negative status (store
 * errors as the store gave them, MCPAGE_EIO for a failed write).
 */
int export_session_write(store *s, const store_session *ses, export_format fmt, FILE *f,
                         export_stats *st);
/* The same; with `term`, every byte goes through text_term_write (a terminal's stdout). */
int export_session_stream(store *s, const store_session *ses, export_format fmt, FILE *f, bool term,
                          export_stats *st);

/* Whether an export file may replace what is at its path. */
typedef enum export_place {
    EXPORT_REPLACE = 0, /* renamed over `path` (export_session: idempotent) */
    EXPORT_NEW          /* only where nothing is: MCPAGE_EEXIST otherwise */
} export_place;

/*
 * Writes session `session_id` to `path`: into a temporary file beside it
 * (mode 0600, which the umask can only narrow), flushed and synced, then
 * put at `path` as `place` says. On failure the temporary file is removed
 * and `path` is untouched; `err` gets a sentence ("disk full" for
 * ENOSPC). MCPAGE_ENOTFOUND for an unknown session.
 */
int export_session_file(store *s, const char *session_id, export_format fmt, const char *path,
                        export_place place, export_stats *st, char *err, size_t errcap);

/*
 * `mcpage export -o PATH`: a new path or a regular file (through a
 * symbolic link, the file it names) is written by export_session_file; a
 * FIFO is streamed into, never replaced; a folder, a device or a socket
 * is refused (MCPAGE_EINVAL, `err` says what to give instead).
 */
int export_session_output(store *s, const char *session_id, export_format fmt, const char *path,
                          export_stats *st, char *err, size_t errcap);

/* One exported session, for an index of many. */
typedef struct export_index_entry {
    const char *file;         /* its file name in the folder */
    const store_session *ses; /* its facts */
    export_stats stats;       /* what its export wrote */
} export_index_entry;

/*
 * Writes the index of a folder of exports: index.html for HTML, else
 * Markdown (index.md), one row per session with a link to its file,
 * under `heading` (what was exported: a project, a query).
 */
int export_index_write(FILE *f, export_format fmt, const char *heading, const export_index_entry *e,
                       size_t n);
/* The index's file name: "index.html" or "index.md". */
const char *export_index_name(export_format fmt);

/* Longest export file name, its extension included (a file system's name limit is 255). */
#define EXPORT_NAME_MAX 256
/* Longest encoded id kept whole in a file name. */
#define EXPORT_NAME_ID_MAX 200
/* Encoded bytes kept before the hash when an id is longer. */
#define EXPORT_NAME_PREFIX 160

/*
 * A file name for a session's export, distinct for distinct ids: the id
 * with every byte but [A-Za-z0-9_-] (and '.' after the first) written as
 * %XX, so the name decodes back to the id; then "." and the extension.
 * An id whose encoding passes EXPORT_NAME_ID_MAX bytes is cut, followed
 * by '~' (never in an encoded id) and 32 hex digits of its SHA-256.
 * `cap` should be EXPORT_NAME_MAX.
 */
void export_file_name(const char *session_id, export_format fmt, char *buf, size_t cap);

#endif
