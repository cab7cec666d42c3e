/*
 * Writing transcript text for people: a counting writer over a FILE and
 * the escapes every rendering of a transcript needs (exports and the
 * browser view). Transcripts hold HTML, scripts, terminal escapes and
 * bytes that are not UTF-8; whatever the mode, what leaves here is valid
 * UTF-8 with every control character except tab and newline shown as its
 * visible Unicode picture (ESC as U+241B), C1 controls and bytes that are
 * not UTF-8 as U+FFFD, and a CR before a newline dropped.
 *
 * No dependency on the store, the runtime or a socket.
 */
#ifndef MCPAGE_TOOLS_TEXT_OUT_H
#define MCPAGE_TOOLS_TEXT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "page/term.h"

/* A writer that counts what it wrote; the first error sticks. */
typedef struct text_out {
    FILE *f;       /* where bytes go (borrowed) */
    int64_t bytes; /* bytes written so far */
    int64_t lines; /* newlines written so far */
    int err;       /* 0, or the first error (MCPAGE_EIO) */
    bool term;     /* bytes go through text_term_write (a terminal; counts are of the input) */
} text_out;

void text_out_init(text_out *o, FILE *f);
/* Bytes as they are (counted). */
void text_out_write(text_out *o, const char *p, size_t n);
void text_out_puts(text_out *o, const char *s);
void text_out_printf(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text for an HTML element or a quoted attribute: & < > " ' escaped. */
void text_out_html(text_out *o, const char *s, size_t n);
/* Text as is, made safe (controls shown, bad UTF-8 replaced): fenced code. */
void text_out_plain(text_out *o, const char *s, size_t n);
/*
 * Markdown prose, escaped as text: no transcript byte becomes Markdown or
 * HTML syntax, whatever the viewer (docs/security.md, "Exports"). Every
 * character CommonMark or GFM reads as syntax is backslash-escaped (`<`
 * and a `&` that could start an entity as entities); leading blanks
 * become no-break spaces (never an indented code block); each line ends
 * with a hard break inside a paragraph, so lines stay lines. Code stays
 * code, on our terms: a fenced block of the text is written as our own
 * fence at column 0, longer than any backtick run inside it (a fence
 * left open ends with the text); an inline code span is kept when it
 * closes on its line and holds no `|`.
 */
void text_out_markdown(text_out *o, const char *s, size_t n);
/* One Markdown value inside our own syntax (a heading, a list item, a
 * table cell): escaped as text, line ends as spaces, no code spans. */
void text_out_md_inline(text_out *o, const char *s, size_t n);
/*
 * s percent-encoded into buf (NUL-terminated, cut at a whole escape when
 * cap is short): every byte but [A-Za-z0-9-._~] and those in `keep`
 * (e.g. "/" for a path). Returns the length written.
 */
size_t text_percent_encode(char *buf, size_t cap, const char *s, const char *keep);
/* The longest run of backticks in s: a fence one longer encloses it. */
size_t text_longest_backticks(const char *s, size_t n);

/* Text for a terminal: the shared escape of page/term.h. */

/* The stylesheet of every HTML page and export (one copy, one hash). */
extern const char text_css[];
/* "'sha256-...'" of text_css, for a Content-Security-Policy style-src. */
const char *text_css_csp_hash(void);
/* "'sha256-BASE64'" of a and b one after the other: a Content-Security-Policy
   source for an inline style or script made of the two. */
void text_csp_hash(char *out, size_t cap, const char *a, const char *b);
/* How search snippets mark a hit (the store's STORE_HIT_OPEN and
   STORE_HIT_CLOSE, for modules that do not read the store): "【", "】". */
extern const char text_hit_open[];
extern const char text_hit_close[];

#endif
