/*
 * SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104), MD5 (RFC 1321, for the
 * folder names an agent derives from a path; never for security), a
 * comparison in constant time and random bytes from the kernel: what
 * cursors, seals, session ids and content hashes need, without libcrypto.
 * OpenSSL 3 initialises its providers on the first digest, MAC or random
 * call: 2.2 MB of resident memory in every process that made one
 * (docs/performance.md, "Digests without libcrypto"). libcrypto is left
 * to what only it does: the OAuth keys' signatures (transport/jwt.c).
 */
#ifndef MCPAGE_PAGE_DIGEST_H
#define MCPAGE_PAGE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32 /* bytes of a digest */

typedef struct sha256_ctx {
    uint32_t h[8];   /* the chaining state */
    uint64_t bytes;  /* message bytes so far */
    uint8_t buf[64]; /* a block being filled */
    size_t fill;     /* bytes of it filled */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* The digest into md; c is spent (init it again to reuse it). */
void sha256_final(sha256_ctx *c, uint8_t md[SHA256_LEN]);
/* The digest of data[0..n). */
void sha256(const void *data, size_t n, uint8_t md[SHA256_LEN]);

/* HMAC-SHA256 with a key: the inner and outer states after the padded key. */
typedef struct hmac_sha256_key {
    sha256_ctx inner, outer;
} hmac_sha256_key;

/* Keys k with key[0..len) (any length: a longer key is hashed first). */
void hmac_sha256_keyed(hmac_sha256_key *k, const void *key, size_t len);
/* HMAC-SHA256 of msg[0..n) under k into md. */
void hmac_sha256(const hmac_sha256_key *k, const void *msg, size_t n, uint8_t md[SHA256_LEN]);

#define MD5_LEN 16 /* bytes of an MD5 digest */

/* The MD5 digest of data[0..n). */
void md5(const void *data, size_t n, uint8_t md[MD5_LEN]);

/* a[0..n) == b[0..n), in time that depends on n only. */
bool mcpage__bytes_equal(const void *a, const void *b, size_t n);

/* Fills out[0..n) from the kernel's random source (getrandom); false on failure. */
bool mcpage__random(void *out, size_t n);

/* Zeroes n bytes of secret so that the compiler cannot drop it. */
void mcpage__cleanse(void *p, size_t n);

#endif
