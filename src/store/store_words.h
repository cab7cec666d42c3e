/*
 * What a developer means by a word, shared by both backends' full-text
 * indexes (internal to src/store/, no database header).
 *
 * Every token is indexed as written (folded), and an ASCII token also
 * gets extra tokens at its own position (docs/store.md, "Words"):
 *
 * - the class of a word: `~` and its Porter stem (`rendering`, `rendered`
 *   and `renders` all give `~render`), for a token of letters only,
 *   unless the stem is the token itself (`render`, `in`, `error`): that
 *   class would repeat the token's own postings (issue 35), so a query
 *   for it asks for the token as written too (store_word_query_self);
 * - the parts of an identifier split at `_` and at case humps
 *   (`SessionLive` gives `~session` and `~live`, `waiting_summary` gives
 *   `~wait` and `~summari`, `v2Handler` gives `v2` and `~handler`): a
 *   part of letters only as its class, a part with digits as written.
 *
 * An unquoted query word of letters only without a hump (`rendering`,
 * `Session`, `HTTP`) asks for its class; anything else (an identifier, a
 * "quoted phrase", a prefix) asks for the tokens as written. So `session
 * live` finds `SessionLive`, `SessionLive` finds only itself, `"render"`
 * finds only `render`, and the extra tokens never shift a position.
 */
#ifndef MCPAGE_STORE_WORDS_H
#define MCPAGE_STORE_WORDS_H

#include <stddef.h>
#include <string.h>

/* Longest word (bytes) that gets a class; a longer run of letters is not
 * a word anyone types (hashes, base64), and is matched as written. */
#define STORE_WORD_MAX 40
/* Longest token split into parts. */
#define STORE_IDENT_MAX 128
/* Room for one extra token: `~`, the word, the NUL. */
#define STORE_WORD_CAP (STORE_WORD_MAX + 2)
/* The mark that starts a class token (no token character, so no token
 * of a text is ever one). */
#define STORE_WORD_CLASS '~'

/* Porter's stem of the lower-case ASCII word w[0..n) (n <= STORE_WORD_MAX)
 * into out (at least n + 1 bytes, NUL-terminated); returns its length. */
size_t store_word_stem(const char *w, size_t n, char *out);

/* The class token of the lower-case word w[0..n) of ASCII letters only
 * (n <= STORE_WORD_MAX): *cls points at it (not NUL-terminated; valid
 * until the next call on this thread, from a per-thread cache of the
 * last words' classes); returns its length. */
size_t store_word_class(const char *w, size_t n, const char **cls);

/* Whether the class cls[0..len) of the lower-case word w[0..n) is the
 * word itself behind the mark (`~in` of `in`): such a class is not
 * indexed beside the word. */
static inline int store_word_class_is_self(const char *cls, size_t len, const char *w, size_t n)
{
    return len == n + 1 && memcmp(cls + 1, w, n) == 0;
}

/* Whether a query for the class cls[0..len) (`~render`, from
 * store_word_query) also asks for its word as written (`render`): the
 * word's stem is itself, so the word's class is not indexed beside it
 * and the class matches `render OR ~render`. */
int store_word_query_self(const char *cls, size_t len);

/* Receives one extra token (not NUL-terminated); non-zero stops. */
typedef int (*store_word_emit)(void *ud, const char *tok, size_t len);

/*
 * The extra tokens of the token whose bytes in the text are orig[0..n)
 * (before folding): none unless every byte is an ASCII letter, digit or
 * `_`. Each distinct extra once, none equal to the token as written, nor
 * the token's own class when that is the token behind the mark.
 * Returns the first non-zero value of emit, else 0.
 */
int store_word_extras(const char *orig, size_t n, store_word_emit emit, void *ud);

/*
 * The class token an unquoted, non-prefix query term term[0..n) asks for,
 * into out (STORE_WORD_CAP bytes): its length when the term is one word
 * of ASCII letters without a case hump, between separators only
 * (`rendering`, `(Session)`); else 0 and the term keeps its tokens.
 */
size_t store_word_query(const char *term, size_t n, char *out);

#endif
