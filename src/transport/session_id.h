/*
 * Signed session ids for the Streamable HTTP transport.
 *
 * The Mcp-Session-Id a server hands out at initialize is a token that
 * carries what the session needs to continue anywhere: the negotiated
 * protocol version and the client's capabilities, sealed with the
 * cursor keyring (src/page/seal.h). Any instance holding the key can
 * rebuild the session from the id alone, so a load balancer may send
 * every POST of a session to any instance.
 *
 * Wire form: "s1." followed by the unpadded URL-safe base64 of
 *
 *   version (1 byte, = 1)
 *   kid (1 byte)
 *   issued_at (8 bytes, big-endian unix seconds)
 *   nonce (16 random bytes: every id is unguessable and unique)
 *   protocol version length (1 byte), its bytes
 *   capabilities length (2 bytes, big-endian), their canonical JSON
 *   tag (16 bytes, seal purpose "mcpage session id")
 *
 * Every character is visible ASCII, as the specification requires.
 */
#ifndef MCPAGE_TRANSPORT_SESSION_ID_H
#define MCPAGE_TRANSPORT_SESSION_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/cursor.h>

/* Longest capabilities JSON carried; larger ones are reduced (see session_id_mint). */
#define SESSION_ID_CAPS_MAX 1024
/* Longest session id text, without the NUL. */
#define SESSION_ID_MAX 1500
/* Bytes of the nonce: the part that tells sessions apart. */
#define SESSION_ID_NONCE_LEN 16

/* Why an id was not accepted. */
typedef enum session_id_status {
    SESSION_ID_VALID = 0,
    SESSION_ID_MALFORMED,   /* not an id of this server's kind, or damaged or forged */
    SESSION_ID_FOREIGN_KEY, /* signed with a key this instance does not hold */
    SESSION_ID_EXPIRED      /* older than the maximum session age (or from the future) */
} session_id_status;

/* What a valid id carries. */
typedef struct session_id_info {
    char protocol_version[32];           /* "2025-11-25" */
    json_t *client_caps;                 /* owned object, or NULL when none was sent */
    int64_t issued_at;                   /* unix seconds */
    uint8_t nonce[SESSION_ID_NONCE_LEN]; /* the random part */
} session_id_info;

/*
 * Mints a new id for a session that negotiated `protocol_version` with a
 * client that declared `client_caps` (an object or NULL), issued at `now`
 * (unix seconds), into `out` (SESSION_ID_MAX + 1 bytes). Capabilities
 * whose canonical JSON passes SESSION_ID_CAPS_MAX keep only their top-level
 * names (each with an empty object), and none at all if even that is too
 * large. Returns the length or a negative status (MCPAGE_ESTATE: no key).
 */
int session_id_mint(const mcpage_keyring *kr, const char *protocol_version,
                    const json_t *client_caps, int64_t now, char *out);

/*
 * Checks `text` and fills `out` when it is valid: signed by a held key,
 * a supported protocol version, issued at most `max_age_s` seconds before
 * `now` (and not more than a minute after it: clocks of instances
 * differ). Free out->client_caps with json_decref.
 */
session_id_status session_id_open(const mcpage_keyring *kr, const char *text, int64_t max_age_s,
                                  int64_t now, session_id_info *out);

/* One sentence a client can act on, for a 404 answer. */
const char *session_id_status_text(session_id_status s);

#endif
