/*
 * The transcript rendering shared by read_session, the session resources
 * and the line numbers search_conversations reports. It is deterministic
 * and its line numbers are computable without rendering:
 *
 *     line 1   # Session <id> (<source>, project <project>)
 *     line 2   (blank)
 *     then per message, in ordinal order:
 *              ### [<ordinal>] <role> <timestamp or -> [tool=<name>] [error]
 *              the message's text, split at '\n' (none when empty)
 *              (blank)
 *
 * so message k starts at 3 + sum over earlier messages of (2 + lines of
 * their text), which store_message_text_lines() gives without moving
 * the texts. Messages are only ever appended to a session, so a line
 * number, once given, keeps pointing at the same line.
 */
#ifndef MCPAGE_TOOLS_TRANSCRIPT_H
#define MCPAGE_TOOLS_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Lines before the first message. */
#define TRANSCRIPT_HEAD_LINES 2
/* Messages fetched per store call while rendering. */
#define TRANSCRIPT_BATCH       200
#define TRANSCRIPT_BATCH_FIRST 16 /* the first read of a walk; each next one 4x, up to 200 */
/*
 * Largest whole document rendered in memory (resources/read): a session
 * longer than this is cut at a line and ends with a note naming where the
 * rest is, so one read stays in bounded memory whatever the session's
 * size (its JSON answer and the transport's copies are a few times this).
 */
#define TRANSCRIPT_DOC_MAX ((size_t)8 << 20)
/* Room kept at the end for that note. */
#define TRANSCRIPT_DOC_NOTE 1024

/*
 * Called with each line (no newline; bytes valid during the call).
 * Returns 0 for more, 1 to stop, or a negative status.
 */
typedef int (*transcript_line_fn)(void *ud, const char *line, size_t len);

/* The 1-based line of the header of message `ordinal` (which exists). */
int transcript_message_line(store *s, const char *session_id, int64_t ordinal, int64_t *line);
/* The same from what precedes the message: how many messages, and their
 * text lines (a search hit carries both: no query per hit). */
int64_t transcript_line_after(int64_t before_count, int64_t before_lines);
/* The exact number of lines of the session's document. */
int transcript_total_lines(store *s, const char *session_id, int64_t *total);
/*
 * Renders the session's document from line `start_line` (1-based) on,
 * calling `fn` per line until it stops or the document ends. *total gets
 * the document's line count (also when start_line is past the end).
 */
int transcript_walk(store *s, const store_session *ses, int64_t start_line, transcript_line_fn fn,
                    void *ud, int64_t *total);
/* The same, telling `on_total` the line count before the first line. */
int transcript_walk_ex(store *s, const store_session *ses, int64_t start_line,
                       void (*on_total)(void *ud, int64_t total), transcript_line_fn fn, void *ud,
                       int64_t *total);
/* The whole document (NUL-terminated; free it with mcpage_free), at most TRANSCRIPT_DOC_MAX:
 * a longer one is cut at a line, with a last line saying where the rest is. */
int transcript_render(store *s, const store_session *ses, char **out, size_t *len);

#endif
