/*
 * Sealed tokens: other signed things than cursors (the HTTP transport's
 * session ids), signed with the same keyring so that any instance that
 * can resume a walk can also resume a session.
 *
 * A seal is HMAC-SHA256 over a purpose string (domain separation: a tag
 * made for one purpose never verifies for another, nor as a cursor) and
 * the message, truncated to SEAL_TAG_LEN bytes. The caller lays out the
 * message; the key id travels in it.
 */
#ifndef MCPAGE_PAGE_SEAL_H
#define MCPAGE_PAGE_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mcpage/cursor.h>

#define SEAL_TAG_LEN 16
/* Longest purpose string (with its NUL) and message sealed. */
#define SEAL_PURPOSE_MAX 32
#define SEAL_MSG_MAX     4096

/* The outcome of checking a seal. */
typedef enum seal_status {
    SEAL_VALID = 0,   /* the tag is right */
    SEAL_FOREIGN_KEY, /* no key with this id is held (another deployment, or rotated out) */
    SEAL_BAD          /* damaged or forged */
} seal_status;

/*
 * The id of the signing key in *kid; MCPAGE_ESTATE when the keyring has
 * no key yet.
 */
int mcpage__seal_kid(const mcpage_keyring *kr, uint8_t *kid);
/*
 * Writes the tag of msg[0..n) for `purpose` with the key `kid` (which
 * must be held); MCPAGE_ENOTFOUND for an unknown key, MCPAGE_ERANGE past
 * the limits above, MCPAGE_ECRYPTO when OpenSSL fails.
 */
int mcpage__seal_tag(const mcpage_keyring *kr, uint8_t kid, const char *purpose, const uint8_t *msg,
                     size_t n, uint8_t tag[SEAL_TAG_LEN]);
/* Checks `tag` in constant time. */
seal_status mcpage__seal_check(const mcpage_keyring *kr, uint8_t kid, const char *purpose,
                               const uint8_t *msg, size_t n, const uint8_t tag[SEAL_TAG_LEN]);

#endif
