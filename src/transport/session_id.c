/*
 * Signed session ids (see session_id.h). Parsing trusts nothing before
 * the tag is checked and never reads past the bytes decoded.
 */
#include "transport/session_id.h"

#include <string.h>

#include <mcpage/server.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/jw.h"
#include "page/seal.h"
#include "page/digest.h"

#define SID_PREFIX     "s1."
#define SID_PREFIX_LEN 3
#define SID_VERSION    1
#define SID_PURPOSE    "mcpage session id"
#define SID_SKEW_S     60 /* an id may come from an instance whose clock runs this far ahead */
/* Fixed bytes: version, kid, issued_at, nonce, version length, caps length. */
#define SID_FIXED   (1 + 1 + 8 + SESSION_ID_NONCE_LEN + 1 + 2)
#define SID_RAW_MAX (SID_FIXED + 31 + SESSION_ID_CAPS_MAX + SEAL_TAG_LEN)

/*
 * The capabilities' compact JSON in w (limited to SESSION_ID_CAPS_MAX),
 * reduced to their top-level names when the whole does not fit; w->len is
 * 0 when there are none, or not even the names fit.
 */
static void caps_text(const json_t *caps, jw *w)
{
    jw_init(w, SESSION_ID_CAPS_MAX);
    if (!json_is_object(caps))
        return;
    jw_json(w, caps);
    if (w->err == 0)
        return;
    /* Too large (experimental blobs, mostly): keep which capabilities exist. */
    jw_free(w);
    jw_init(w, SESSION_ID_CAPS_MAX);
    jw_object_begin(w);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)caps, k, v)
    {
        jw_key(w, k);
        jw_object_begin(w);
        jw_object_end(w);
    }
    jw_object_end(w);
    if (w->err != 0) {
        jw_free(w);
        jw_init(w, SESSION_ID_CAPS_MAX);
    }
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

int session_id_mint(const mcpage_keyring *kr, const char *protocol_version,
                    const json_t *client_caps, int64_t now, char *out)
{
    size_t vlen = protocol_version ? strlen(protocol_version) : 0;
    if (kr == NULL || out == NULL || vlen == 0 || vlen > 31 || now < 0)
        return MCPAGE_EINVAL;
    uint8_t kid;
    int rc = mcpage__seal_kid(kr, &kid);
    if (rc != MCPAGE_OK)
        return rc;
    jw caps;
    caps_text(client_caps, &caps);
    size_t clen = caps.len;
    uint8_t raw[SID_RAW_MAX];
    size_t n = 0;
    raw[n++] = SID_VERSION;
    raw[n++] = kid;
    put_be(raw + n, (uint64_t)now, 8);
    n += 8;
    if (!mcpage__random(raw + n, SESSION_ID_NONCE_LEN)) {
        jw_free(&caps);
        return MCPAGE_ECRYPTO;
    }
    n += SESSION_ID_NONCE_LEN;
    raw[n++] = (uint8_t)vlen;
    memcpy(raw + n, protocol_version, vlen);
    n += vlen;
    put_be(raw + n, clen, 2);
    n += 2;
    if (clen)
        memcpy(raw + n, caps.buf, clen);
    n += clen;
    jw_free(&caps);
    rc = mcpage__seal_tag(kr, kid, SID_PURPOSE, raw, n, raw + n);
    if (rc != MCPAGE_OK)
        return rc;
    n += SEAL_TAG_LEN;
    memcpy(out, SID_PREFIX, SID_PREFIX_LEN);
    size_t len = SID_PREFIX_LEN + b64_encode(raw, n, out + SID_PREFIX_LEN, true);
    out[len] = '\0';
    return (int)len;
}

session_id_status session_id_open(const mcpage_keyring *kr, const char *text, int64_t max_age_s,
                                  int64_t now, session_id_info *out)
{
    memset(out, 0, sizeof *out);
    size_t len = text ? strnlen(text, SESSION_ID_MAX + 1) : 0;
    if (kr == NULL || len <= SID_PREFIX_LEN || len > SESSION_ID_MAX ||
        memcmp(text, SID_PREFIX, SID_PREFIX_LEN) != 0)
        return SESSION_ID_MALFORMED;
    uint8_t raw[SESSION_ID_MAX]; /* base64 never decodes to more bytes than characters */
    long got = b64_decode(text + SID_PREFIX_LEN, len - SID_PREFIX_LEN, raw, true);
    if (got < (long)(SID_FIXED + SEAL_TAG_LEN) || got > (long)SID_RAW_MAX)
        return SESSION_ID_MALFORMED;
    size_t n = (size_t)got - SEAL_TAG_LEN; /* the signed bytes */
    size_t vlen = raw[SID_FIXED - 3];
    if (raw[0] != SID_VERSION || vlen == 0 || vlen >= sizeof out->protocol_version ||
        SID_FIXED + vlen > n)
        return SESSION_ID_MALFORMED;
    size_t clen = (size_t)get_be(raw + SID_FIXED - 2 + vlen, 2);
    if (SID_FIXED + vlen + clen != n || clen > SESSION_ID_CAPS_MAX)
        return SESSION_ID_MALFORMED;
    switch (mcpage__seal_check(kr, raw[1], SID_PURPOSE, raw, n, raw + n)) {
    case SEAL_VALID:
        break;
    case SEAL_FOREIGN_KEY:
        return SESSION_ID_FOREIGN_KEY;
    case SEAL_BAD:
        return SESSION_ID_MALFORMED;
    }
    /* Signed by us from here on; still checked, since an older build may have minted it. */
    uint64_t issued = get_be(raw + 2, 8);
    if (issued > (uint64_t)INT64_MAX || (int64_t)issued > now + SID_SKEW_S ||
        (max_age_s > 0 && now - (int64_t)issued > max_age_s))
        return SESSION_ID_EXPIRED;
    memcpy(out->protocol_version, raw + SID_FIXED - 2, vlen);
    out->protocol_version[vlen] = '\0';
    if (!mcpage_protocol_supported(out->protocol_version))
        return SESSION_ID_EXPIRED; /* a revision this build no longer speaks: start over */
    if (clen) {
        json_error_t err;
        out->client_caps =
            json_loadb((const char *)raw + SID_FIXED + vlen, clen, JSON_REJECT_DUPLICATES, &err);
        if (!json_is_object(out->client_caps)) {
            json_decref(out->client_caps);
            out->client_caps = NULL;
            return SESSION_ID_MALFORMED;
        }
    }
    out->issued_at = (int64_t)issued;
    memcpy(out->nonce, raw + 10, SESSION_ID_NONCE_LEN);
    return SESSION_ID_VALID;
}

const char *session_id_status_text(session_id_status s)
{
    switch (s) {
    case SESSION_ID_VALID:
        return "valid";
    case SESSION_ID_FOREIGN_KEY:
        return "Session not found: its id was signed with a key this server does not hold "
               "(another deployment, or the key was rotated); send initialize without "
               "Mcp-Session-Id to start a new one";
    case SESSION_ID_EXPIRED:
        return "Session not found: it is older than this server's maximum session age; send "
               "initialize without Mcp-Session-Id to start a new one";
    case SESSION_ID_MALFORMED:
    default:
        return "Session not found: the Mcp-Session-Id is not one this server issued, or it was "
               "damaged; send initialize without Mcp-Session-Id to start a new one";
    }
}
