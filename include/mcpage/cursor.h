/*
 * Signed cursors: the resume tokens of the paging contract and of the
 * four MCP catalog lists.
 *
 * A cursor is opaque, URL-safe and short. It is self-contained and signed
 * with HMAC-SHA256 (truncated tag), so any server instance that holds the
 * key can resume any walk: no server-side state. It carries a format
 * version, the key id, the tool it was issued for, a fingerprint of every
 * non-window argument, the keyset position (the sort key of the last
 * record returned, ending in a unique key), the logical offset of the
 * next record, the total and the store generation it was counted at, and
 * the time it was issued.
 */
#ifndef MCPAGE_CURSOR_H
#define MCPAGE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits: a position has at most this many parts and string bytes. */
#define MCPAGE_CURSOR_MAX_PARTS     4
#define MCPAGE_CURSOR_MAX_STR_BYTES 192
/* No encoded cursor is longer than this (plus the NUL). */
#define MCPAGE_CURSOR_MAX_LEN 400
#define MCPAGE_FINGERPRINT_LEN 8

/*
 * The keyring: the current signing key and older keys still accepted,
 * each with a one-byte id, plus an optional time to live.
 */
typedef struct mcpage_keyring mcpage_keyring; /* opaque */

/*
 * Creates an empty keyring in *out (no key yet: add one with
 * mcpage_keyring_add or mcpage_keyring_load before signing). Free it with
 * mcpage_keyring_free (NULL is fine), which wipes the keys; a pager or
 * server that borrows it must be freed first.
 */
MCPAGE_API int mcpage_keyring_new(mcpage_keyring **out);
MCPAGE_API void mcpage_keyring_free(mcpage_keyring *kr);
/*
 * Adds a key (16 to 64 bytes) under `kid`. The key added last with
 * `current` set signs new cursors; the others only verify.
 */
MCPAGE_API int mcpage_keyring_add(mcpage_keyring *kr, uint8_t kid, const uint8_t *key,
                                  size_t len, bool current);
/*
 * Loads the signing key, in this order: the environment variable
 * `env_var` (hex, 32 to 128 digits; may be NULL), then the file `path`
 * (32 raw bytes or hex text), else generates 32 random bytes and writes
 * them to `path` with mode 0600 (creating its directory), so cursors
 * survive restarts. `path` may be NULL for an in-memory key.
 */
MCPAGE_API int mcpage_keyring_load(mcpage_keyring *kr, const char *env_var, const char *path);
/* Cursors older than `seconds` are rejected as expired; 0 means no expiry. */
MCPAGE_API void mcpage_keyring_set_ttl(mcpage_keyring *kr, int64_t seconds);

/* One part of a keyset position. */
typedef struct mcpage_keypart {
    bool is_str;     /* string part (else integer) */
    int64_t i;       /* integer value */
    const char *s;   /* string bytes (not NUL-terminated on decode) */
    size_t len;      /* string length in bytes */
} mcpage_keypart;

/* What a cursor carries, apart from the tool and the fingerprint. */
typedef struct mcpage_cursor {
    int nparts;                                  /* parts in use, 0 to 4 */
    mcpage_keypart parts[MCPAGE_CURSOR_MAX_PARTS]; /* the keyset position */
    int64_t offset;                              /* logical offset of the next record */
    int64_t total;                               /* the total as counted, or -1 */
    int64_t generation;                          /* store generation of the count */
    int64_t issued_at;                           /* unix seconds; set by encode */
    /* private: decoded string parts point here */
    char storage_[MCPAGE_CURSOR_MAX_PARTS * MCPAGE_CURSOR_MAX_STR_BYTES];
} mcpage_cursor;

/* Why a cursor was rejected: each has its own remedy text. */
typedef enum mcpage_cursor_status {
    MCPAGE_CURSOR_VALID = 0,
    MCPAGE_CURSOR_MALFORMED,     /* not a cursor of ours at all, or damaged */
    MCPAGE_CURSOR_FOREIGN_KEY,   /* not signed by a key this server holds (or rotated) */
    MCPAGE_CURSOR_OTHER_TOOL,    /* issued for another tool or list */
    MCPAGE_CURSOR_OTHER_ARGS,    /* issued for different query, filters, sort or fields */
    MCPAGE_CURSOR_EXPIRED        /* older than the configured time to live */
} mcpage_cursor_status;

/*
 * The fingerprint of a call's arguments without its window parameters
 * (`skip`, a NULL-terminated list of names such as "cursor", "offset",
 * "limit", "max_tokens"): a hash of the canonical JSON (sorted keys).
 */
MCPAGE_API void mcpage_args_fingerprint(const json_t *args, const char *const *skip,
                                        uint8_t out[MCPAGE_FINGERPRINT_LEN]);

/*
 * Encodes and signs `c` for `tool` and the fingerprint `fp` into `out`
 * (at least MCPAGE_CURSOR_MAX_LEN + 1 bytes). Returns the length or a
 * negative status.
 */
MCPAGE_API int mcpage_cursor_encode(const mcpage_keyring *kr, const char *tool,
                                    const uint8_t fp[MCPAGE_FINGERPRINT_LEN],
                                    const mcpage_cursor *c, char *out, size_t outcap);
/*
 * Verifies and decodes `text`, which must have been issued for `tool`
 * with the fingerprint `fp`. Fills `out` only when the result is
 * MCPAGE_CURSOR_VALID. Never reads past `len` bytes.
 */
MCPAGE_API mcpage_cursor_status mcpage_cursor_decode(const mcpage_keyring *kr, const char *tool,
                                                     const uint8_t fp[MCPAGE_FINGERPRINT_LEN],
                                                     const char *text, size_t len,
                                                     mcpage_cursor *out);
/* One sentence saying what went wrong and how to fix it. */
MCPAGE_API const char *mcpage_cursor_status_text(mcpage_cursor_status s);
/* A stable machine name: "malformed", "foreign_key", "other_tool", ... */
MCPAGE_API const char *mcpage_cursor_status_name(mcpage_cursor_status s);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_CURSOR_H */
