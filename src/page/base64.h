/*
 * Base64, standard (RFC 4648 section 4, padded) for binary content blocks
 * and URL-safe (section 5, unpadded) for cursors; lowercase hex for
 * digests and ids.
 */
#ifndef MCPAGE_PAGE_BASE64_H
#define MCPAGE_PAGE_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes needed to encode n bytes, without the NUL. */
size_t b64_encoded_len(size_t n, bool url);
/* Encodes n bytes into out (b64_encoded_len + 1 bytes); returns the length. */
size_t b64_encode(const uint8_t *in, size_t n, char *out, bool url);
/*
 * Decodes n characters into out (at least n * 3 / 4 + 3 bytes). Returns
 * the decoded length, or -1 for a character outside the alphabet, bad
 * padding, or (url) an impossible length.
 */
long b64_decode(const char *in, size_t n, uint8_t *out, bool url);

/* Writes n bytes as 2n lowercase hex digits and a NUL into out (2n + 1 bytes). */
void hex_encode(const uint8_t *in, size_t n, char *out);

#endif
