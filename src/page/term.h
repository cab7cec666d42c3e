/*
 * Text for a terminal, the one escape every path that prints to a
 * terminal uses (issues 32 and 38): `call`, `export` to stdout, `check`,
 * `stats`, `usage`, `sources`, `sync` and its warnings, and every error
 * message that quotes input. Transcript text and paths hold escape
 * sequences (ESC[2J clears the screen, ESC]0;...BEL sets the title, OSC
 * 52 writes the clipboard), so control characters other than newline and
 * tab are shown visibly: ESC as \e, the other C0 controls in caret
 * notation (^G, ^M, ^@), DEL as ^?, C1 controls and bidirectional
 * overrides and isolates as \u0085, \u202E, and bytes that are not UTF-8
 * as \xFF. Everything else passes unchanged.
 *
 * Lives in the library's lowest layer so that the archive (sync, tools),
 * the checker and the command line share it. Depends on nothing of ours
 * but utf8.h.
 */
#ifndef MCPAGE_PAGE_TERM_H
#define MCPAGE_PAGE_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* True when output to `f` must be escaped: it is a terminal, or `raw` was not asked for. */
bool text_term_escapes(FILE *f, bool raw);
/* Writes s[0..n) to f escaped as above; the first failure's errno is kept by f. */
void text_term_write(FILE *f, const char *s, size_t n);
/* Formats, then writes the result escaped (for messages that quote input). */
void text_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped into buf (NUL-terminated, cut before an escape or character that does not fit);
 * its length. With cap 0 nothing is written and 0 returned. */
size_t text_term_escape(char *buf, size_t cap, const char *s, size_t n);
/* The same for text kept as one line (a warning naming a path): newline and tab shown too,
 * as ^J and ^I. */
size_t text_term_escape_line(char *buf, size_t cap, const char *s, size_t n);
/* A table cell: s cut to `width` characters on a character boundary (never inside a
 * UTF-8 sequence, which would then print as \xC3), padded with spaces to `width`
 * characters; into buf, which it returns. Print it through text_term_printf. */
const char *text_term_cell(char *buf, size_t cap, const char *s, size_t width);

#endif
