/*
 * JSON Web Tokens as OAuth access tokens (RFC 9068) and the key sets
 * that verify them (JWKS, RFC 7517): parsing both from hostile text,
 * checking a compact JWS signature with OpenSSL (RS256, ES256, EdDSA
 * with Ed25519; nothing else, never "none"), and checking the claims a
 * resource server must (iss, aud, exp, nbf, iat, sub).
 *
 * Pure functions: no I/O, no clock of their own (the caller passes now),
 * so the fuzz target and the unit tests reach every branch.
 */
#ifndef MCPAGE_TRANSPORT_JWT_H
#define MCPAGE_TRANSPORT_JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

/* Longest access token accepted, in bytes (a JWT with many scopes is about 1 KiB). */
#define JWT_MAX_TOKEN 8192
/* Largest JWKS document accepted, in bytes. */
#define JWT_MAX_JWKS ((size_t)256 << 10)
/* Most keys kept from one JWKS (others are ignored with a note). */
#define JWT_MAX_KEYS 64
/* Longest kid kept, in bytes. */
#define JWT_MAX_KID 256
/* RSA moduli accepted, in bits: at least 2048 (RFC 7518 3.3), at most 8192 (verify cost). */
#define JWT_RSA_MIN_BITS 2048
#define JWT_RSA_MAX_BITS 8192

/* The signature algorithms verified. */
typedef enum jwt_alg {
    JWT_ALG_NONE = 0, /* not a supported algorithm */
    JWT_ALG_RS256,    /* RSASSA-PKCS1-v1_5 with SHA-256 */
    JWT_ALG_ES256,    /* ECDSA on P-256 with SHA-256 */
    JWT_ALG_EDDSA     /* EdDSA with Ed25519 */
} jwt_alg;

/* One public key of a set. */
typedef struct jwt_key {
    char *kid;      /* its key id, or NULL when the JWK had none */
    jwt_alg alg;    /* the one algorithm it verifies (from kty/crv, and alg when given) */
    EVP_PKEY *pkey; /* the OpenSSL key (owned) */
} jwt_key;

/* A JWKS: the keys that verify tokens. */
typedef struct jwt_keyset {
    jwt_key *keys;  /* owned */
    size_t n;       /* their count */
    size_t skipped; /* JWKs left out: not signature keys we verify, or malformed */
} jwt_keyset;

/* Outcome of jwt_verify. */
typedef enum jwt_status {
    JWT_OK = 0,
    JWT_EMALFORMED, /* not a compact JWS we accept (format, header, algorithm, size) */
    JWT_ENOKEY,     /* no key of the set has its kid and algorithm (the set may be stale) */
    JWT_EBADSIG,    /* the signature does not verify */
    JWT_ECLAIMS     /* the claims are wrong (jwt_check_claims) */
} jwt_status;

/*
 * Parses a JWKS document ({"keys": [...]}) of `len` bytes into `out`.
 * Keys of kinds not verified here (encryption keys, "use": "enc", other
 * curves, RSA under 2048 bits) are skipped and counted. 0, or -1 with
 * `why` saying what is wrong (not JSON, no "keys" array, too large).
 */
int jwt_keyset_parse(const char *json, size_t len, jwt_keyset *out, char *why, size_t cap);
/* Frees the keys (the struct itself is the caller's). */
void jwt_keyset_free(jwt_keyset *ks);

/*
 * Verifies the compact JWS `token` against `ks`: header (alg, kid, typ,
 * crit), then the signature. On JWT_OK, *payload is the parsed payload
 * (an object, owned by the caller). Otherwise `why` says what failed.
 */
jwt_status jwt_verify(const jwt_keyset *ks, const char *token, json_t **payload, char *why,
                      size_t cap);

/* The claims a resource server checks (jwt_check_claims). */
typedef struct jwt_expect {
    const char *issuer;   /* "iss" must equal it */
    const char *audience; /* "aud" (a string or an array of strings) must contain it */
    int64_t now;          /* unix seconds */
    unsigned leeway_s;    /* clock skew allowed on exp, nbf and iat */
} jwt_expect;

/*
 * Checks iss, aud, exp (required), nbf and iat (when present) and sub
 * (a non-empty string). JWT_OK, or JWT_ECLAIMS with `why`.
 */
jwt_status jwt_check_claims(const json_t *payload, const jwt_expect *ex, char *why, size_t cap);

/*
 * The token's scopes as one space-separated string (the "scope" claim,
 * or RFC 9068's alternative "scp" array), newly allocated; "" when none.
 * NULL on allocation failure.
 */
char *jwt_scopes(const json_t *payload);

/* True when the space-separated `have` holds every scope of the space-separated `need`. */
bool jwt_scopes_cover(const char *have, const char *need);

/* Writes a reason into why[0..cap) (nothing when why is NULL): the verdicts' wording here and in
 * oauth.c. */
void jwt_say(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
