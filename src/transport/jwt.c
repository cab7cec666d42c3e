/*
 * JWT access tokens and JWKS (jwt.h): hostile text in, OpenSSL keys and
 * checked claims out. Every length is bounded before anything is
 * decoded, the header is refused unless it names one of three
 * algorithms, and a key verifies only the algorithm its JWK implies, so
 * an RSA key can never check an HMAC or "none" token (the classic
 * algorithm-confusion attacks).
 */
#include "transport/jwt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcp/jsonin.h"
#include "page/alloc.h"
#include "page/base64.h"
#include "transport/jwt_crypto.h"

/* Deepest nesting accepted in a header, a payload or a JWKS. */
#define JWT_MAX_DEPTH 16

void jwt_say(char *why, size_t cap, const char *fmt, ...)
{
    if (why == NULL || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

/* Decodes `n` base64url characters (unpadded) into a new buffer; NULL when invalid. */
static uint8_t *b64url_dup(const char *s, size_t n, size_t *out_len)
{
    uint8_t *buf = mcpage__malloc(n * 3 / 4 + 4);
    if (buf == NULL)
        return NULL;
    long got = b64_decode(s, n, buf, true);
    if (got < 0) {
        mcpage__free(buf);
        return NULL;
    }
    *out_len = (size_t)got;
    return buf;
}

/* A base64url JSON member of a JWK decoded; NULL when absent or invalid. */
static uint8_t *jwk_bytes(const json_t *jwk, const char *name, size_t max, size_t *len)
{
    const char *s = json_string_value(json_object_get(jwk, name));
    if (s == NULL)
        return NULL;
    size_t n = strlen(s);
    if (n == 0 || n > max * 4 / 3 + 4)
        return NULL;
    return b64url_dup(s, n, len);
}

/* ------------------------------------------------------------ keys */

static EVP_PKEY *pkey_from_params(const char *type, OSSL_PARAM_BLD *bld)
{
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (params && ctx && EVP_PKEY_fromdata_init(ctx) == 1)
        (void)EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return pkey;
}

static EVP_PKEY *rsa_key(const json_t *jwk)
{
    size_t nlen = 0, elen = 0;
    uint8_t *n = jwk_bytes(jwk, "n", JWT_RSA_MAX_BITS / 8 + 1, &nlen);
    uint8_t *e = jwk_bytes(jwk, "e", 16, &elen);
    EVP_PKEY *pkey = NULL;
    BIGNUM *bn = n ? BN_bin2bn(n, (int)nlen, NULL) : NULL;
    BIGNUM *be = e ? BN_bin2bn(e, (int)elen, NULL) : NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bn && be && bld && BN_num_bits(bn) >= JWT_RSA_MIN_BITS &&
        BN_num_bits(bn) <= JWT_RSA_MAX_BITS && BN_is_odd(be) && BN_num_bits(be) >= 2 &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) == 1 &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) == 1)
        pkey = pkey_from_params("RSA", bld);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    mcpage__free(n);
    mcpage__free(e);
    return pkey;
}

static EVP_PKEY *p256_key(const json_t *jwk)
{
    size_t xlen = 0, ylen = 0;
    uint8_t *x = jwk_bytes(jwk, "x", 32, &xlen);
    uint8_t *y = jwk_bytes(jwk, "y", 32, &ylen);
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (x && y && xlen == 32 && ylen == 32 && bld) {
        uint8_t point[65];
        point[0] = 0x04; /* uncompressed: OpenSSL checks it lies on the curve */
        memcpy(point + 1, x, 32);
        memcpy(point + 33, y, 32);
        if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ==
                1 &&
            OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point) ==
                1)
            pkey = pkey_from_params("EC", bld);
    }
    OSSL_PARAM_BLD_free(bld);
    mcpage__free(x);
    mcpage__free(y);
    return pkey;
}

static EVP_PKEY *ed25519_key(const json_t *jwk)
{
    size_t xlen = 0;
    uint8_t *x = jwk_bytes(jwk, "x", 32, &xlen);
    EVP_PKEY *pkey = NULL;
    if (x && xlen == 32)
        pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
    mcpage__free(x);
    return pkey;
}

static jwt_alg alg_named(const char *alg)
{
    if (alg == NULL)
        return JWT_ALG_NONE;
    if (strcmp(alg, "RS256") == 0)
        return JWT_ALG_RS256;
    if (strcmp(alg, "ES256") == 0)
        return JWT_ALG_ES256;
    if (strcmp(alg, "EdDSA") == 0 || strcmp(alg, "Ed25519") == 0)
        return JWT_ALG_EDDSA;
    return JWT_ALG_NONE;
}

/* The algorithm a JWK's type and curve imply; NONE for keys we do not verify with. */
static jwt_alg jwk_alg(const json_t *jwk)
{
    const char *kty = json_string_value(json_object_get(jwk, "kty"));
    const char *crv = json_string_value(json_object_get(jwk, "crv"));
    if (kty == NULL)
        return JWT_ALG_NONE;
    if (strcmp(kty, "RSA") == 0)
        return JWT_ALG_RS256;
    if (strcmp(kty, "EC") == 0 && crv && strcmp(crv, "P-256") == 0)
        return JWT_ALG_ES256;
    if (strcmp(kty, "OKP") == 0 && crv && strcmp(crv, "Ed25519") == 0)
        return JWT_ALG_EDDSA;
    return JWT_ALG_NONE;
}

/* One JWK into `k`: true when it is a verification key of ours. */
static bool jwk_take(const json_t *jwk, jwt_key *k)
{
    if (!json_is_object(jwk))
        return false;
    const char *use = json_string_value(json_object_get(jwk, "use"));
    if (use && strcmp(use, "sig") != 0)
        return false;
    jwt_alg alg = jwk_alg(jwk);
    const json_t *jalg = json_object_get(jwk, "alg");
    if (alg == JWT_ALG_NONE || (jalg && alg_named(json_string_value(jalg)) != alg))
        return false; /* a key declared for another algorithm verifies nothing here */
    const json_t *jkid = json_object_get(jwk, "kid");
    if (jkid && (!json_is_string(jkid) || json_string_length(jkid) > JWT_MAX_KID))
        return false;
    EVP_PKEY *pkey = alg == JWT_ALG_RS256   ? rsa_key(jwk)
                     : alg == JWT_ALG_ES256 ? p256_key(jwk)
                                            : ed25519_key(jwk);
    if (pkey == NULL)
        return false;
    k->kid = jkid ? mcpage__strdup(json_string_value(jkid)) : NULL;
    if (jkid && k->kid == NULL) {
        EVP_PKEY_free(pkey);
        return false;
    }
    k->alg = alg;
    k->pkey = pkey;
    return true;
}

int jwt_keyset_parse(const char *json, size_t len, jwt_keyset *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (len > JWT_MAX_JWKS) {
        jwt_say(why, cap, "the JWKS is %zu bytes, more than the %zu accepted", len, JWT_MAX_JWKS);
        return -1;
    }
    if (jwt_crypto_load(why, cap) != 0)
        return -1;
    json_t *doc = NULL;
    char perr[256];
    if (jsonin_parse(json, len, JWT_MAX_JWKS, JWT_MAX_DEPTH, &doc, perr, sizeof perr) !=
        JSONIN_OK) {
        jwt_say(why, cap, "the JWKS is not JSON: %s", perr);
        return -1;
    }
    const json_t *keys = json_object_get(doc, "keys");
    if (!json_is_array(keys)) {
        jwt_say(why, cap, "the JWKS has no \"keys\" array");
        json_decref(doc);
        return -1;
    }
    size_t total = json_array_size(keys);
    size_t room = total < JWT_MAX_KEYS ? total : JWT_MAX_KEYS;
    out->keys = room ? mcpage__calloc(room, sizeof *out->keys) : NULL;
    if (room && out->keys == NULL) {
        jwt_say(why, cap, "out of memory");
        json_decref(doc);
        return -1;
    }
    for (size_t i = 0; i < total; i++) {
        if (out->n < room && jwk_take(json_array_get(keys, i), &out->keys[out->n]))
            out->n++;
        else
            out->skipped++;
    }
    json_decref(doc);
    return 0;
}

void jwt_keyset_free(jwt_keyset *ks)
{
    if (ks == NULL)
        return;
    for (size_t i = 0; i < ks->n; i++) {
        mcpage__free(ks->keys[i].kid);
        EVP_PKEY_free(ks->keys[i].pkey);
    }
    mcpage__free(ks->keys);
    memset(ks, 0, sizeof *ks);
}

/* ------------------------------------------------------------ signatures */

/* ES256's raw r||s (64 bytes) as the DER ECDSA-Sig-Value OpenSSL verifies; NULL when malformed. */
static uint8_t *es256_der(const uint8_t *sig, size_t len, size_t *der_len)
{
    if (len != 64)
        return NULL;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    if (es == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        return NULL;
    }
    int n = i2d_ECDSA_SIG(es, NULL); /* its length, then the bytes into our buffer */
    uint8_t *der = n > 0 ? mcpage__malloc((size_t)n) : NULL;
    unsigned char *end = der;
    if (der == NULL || i2d_ECDSA_SIG(es, &end) != n) {
        mcpage__free(der);
        der = NULL;
    }
    ECDSA_SIG_free(es);
    *der_len = der ? (size_t)n : 0;
    return der;
}

static bool signature_ok(const jwt_key *k, const char *input, size_t ilen, const uint8_t *sig,
                         size_t slen)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (md == NULL)
        return false;
    bool ok = false;
    if (k->alg == JWT_ALG_ES256) {
        size_t dlen = 0;
        uint8_t *der = es256_der(sig, slen, &dlen);
        ok = der && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, k->pkey) == 1 &&
             EVP_DigestVerify(md, der, dlen, (const unsigned char *)input, ilen) == 1;
        mcpage__free(der);
    } else {
        const EVP_MD *digest = k->alg == JWT_ALG_RS256 ? EVP_sha256() : NULL;
        ok = EVP_DigestVerifyInit(md, NULL, digest, NULL, k->pkey) == 1 &&
             EVP_DigestVerify(md, sig, slen, (const unsigned char *)input, ilen) == 1;
    }
    EVP_MD_CTX_free(md);
    return ok;
}

/* A base64url part of the token parsed as a JSON object; NULL with `why` when not one. */
static json_t *part_json(const char *s, size_t n, const char *name, char *why, size_t cap)
{
    size_t len = 0;
    uint8_t *raw = b64url_dup(s, n, &len);
    if (raw == NULL) {
        jwt_say(why, cap, "the token's %s is not base64url", name);
        return NULL;
    }
    json_t *v = NULL;
    char perr[256];
    jsonin_status st =
        jsonin_parse((const char *)raw, len, JWT_MAX_TOKEN, JWT_MAX_DEPTH, &v, perr, sizeof perr);
    mcpage__free(raw);
    if (st != JSONIN_OK || !json_is_object(v)) {
        jwt_say(why, cap, "the token's %s is not a JSON object", name);
        json_decref(v);
        return NULL;
    }
    return v;
}

/* The header's typ is absent or names a JWT access token (RFC 9068: at+jwt). */
static bool typ_ok(const json_t *typ)
{
    if (typ == NULL)
        return true;
    const char *t = json_string_value(typ);
    if (t == NULL)
        return false;
    if (strncasecmp(t, "application/", 12) == 0)
        t += 12;
    return strcasecmp(t, "JWT") == 0 || strcasecmp(t, "at+jwt") == 0;
}

/* Checks the header; on success the algorithm and the kid (borrowed from `hdr`, may be NULL). */
static jwt_status header_check(const json_t *hdr, jwt_alg *alg, const char **kid, char *why,
                               size_t cap)
{
    const char *name = json_string_value(json_object_get(hdr, "alg"));
    *alg = alg_named(name);
    if (*alg == JWT_ALG_NONE) {
        jwt_say(why, cap,
                "the token's algorithm \"%.20s\" is not accepted (RS256, ES256, EdDSA, Ed25519)",
                name ? name : "(none)");
        return JWT_EMALFORMED;
    }
    if (json_object_get(hdr, "crit")) {
        jwt_say(why, cap,
                "the token's header has \"crit\" extensions, which this server does not "
                "understand");
        return JWT_EMALFORMED;
    }
    if (!typ_ok(json_object_get(hdr, "typ"))) {
        jwt_say(why, cap,
                "the token's typ is not JWT or at+jwt (an ID token is not an access token)");
        return JWT_EMALFORMED;
    }
    const json_t *jkid = json_object_get(hdr, "kid");
    if (jkid && (!json_is_string(jkid) || json_string_length(jkid) > JWT_MAX_KID)) {
        jwt_say(why, cap, "the token's kid is not a string of at most %d bytes", JWT_MAX_KID);
        return JWT_EMALFORMED;
    }
    *kid = json_string_value(jkid);
    return JWT_OK;
}

/* Splits "h.p.s" into its three parts' offsets; false unless exactly three non-empty parts. */
static bool split_compact(const char *t, size_t len, size_t dots[2])
{
    size_t nd = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            if (nd == 2)
                return false;
            dots[nd++] = i;
        }
    }
    return nd == 2 && dots[0] > 0 && dots[1] > dots[0] + 1 && dots[1] + 1 < len;
}

jwt_status jwt_verify(const jwt_keyset *ks, const char *token, json_t **payload, char *why,
                      size_t cap)
{
    *payload = NULL;
    size_t len = strnlen(token, JWT_MAX_TOKEN + 1);
    size_t dots[2];
    if (len > JWT_MAX_TOKEN) {
        jwt_say(why, cap, "the token is longer than %d bytes", JWT_MAX_TOKEN);
        return JWT_EMALFORMED;
    }
    if (!split_compact(token, len, dots)) {
        jwt_say(why, cap, "the token is not a JWT (three base64url parts separated by dots)");
        return JWT_EMALFORMED;
    }
    json_t *hdr = part_json(token, dots[0], "header", why, cap);
    if (hdr == NULL)
        return JWT_EMALFORMED;
    jwt_alg alg;
    const char *kid = NULL;
    jwt_status st = header_check(hdr, &alg, &kid, why, cap);
    size_t slen = 0;
    uint8_t *sig = NULL;
    if (st == JWT_OK) {
        sig = b64url_dup(token + dots[1] + 1, len - dots[1] - 1, &slen);
        if (sig == NULL) {
            jwt_say(why, cap, "the token's signature is not base64url");
            st = JWT_EMALFORMED;
        }
    }
    if (st == JWT_OK) {
        st = JWT_ENOKEY;
        jwt_say(why, cap, "no key of the issuer's JWKS has kid \"%.64s\" for %s", kid ? kid : "",
                alg == JWT_ALG_RS256   ? "RS256"
                : alg == JWT_ALG_ES256 ? "ES256"
                                       : "EdDSA");
        for (size_t i = 0; i < ks->n && st != JWT_OK; i++) {
            const jwt_key *k = &ks->keys[i];
            if (k->alg != alg || (kid && (k->kid == NULL || strcmp(k->kid, kid) != 0)))
                continue;
            st = signature_ok(k, token, dots[1], sig, slen) ? JWT_OK : JWT_EBADSIG;
        }
        if (st == JWT_EBADSIG)
            jwt_say(why, cap, "the token's signature does not verify with the issuer's key");
    }
    mcpage__free(sig);
    json_decref(hdr);
    if (st != JWT_OK)
        return st;
    *payload = part_json(token + dots[0] + 1, dots[1] - dots[0] - 1, "payload", why, cap);
    return *payload ? JWT_OK : JWT_EMALFORMED;
}

/* ------------------------------------------------------------ claims */

/* A NumericDate claim: true with *v when present and a number; *present tells. */
static bool numeric_date(const json_t *payload, const char *name, bool *present, int64_t *v)
{
    const json_t *j = json_object_get(payload, name);
    *present = j != NULL;
    if (j == NULL)
        return true;
    if (!json_is_number(j))
        return false;
    double d = json_number_value(j);
    if (!(d > -1e15 && d < 1e15))
        return false;
    *v = (int64_t)d;
    return true;
}

static bool audience_has(const json_t *aud, const char *want)
{
    if (json_is_string(aud))
        return strcmp(json_string_value(aud), want) == 0;
    size_t i;
    const json_t *a;
    json_array_foreach(aud, i, a)
    {
        if (json_is_string(a) && strcmp(json_string_value(a), want) == 0)
            return true;
    }
    return false;
}

jwt_status jwt_check_claims(const json_t *payload, const jwt_expect *ex, char *why, size_t cap)
{
    const char *iss = json_string_value(json_object_get(payload, "iss"));
    if (iss == NULL || strcmp(iss, ex->issuer) != 0) {
        jwt_say(why, cap, "the token was issued by \"%.100s\", not by this server's issuer %.100s",
                iss ? iss : "(no iss)", ex->issuer);
        return JWT_ECLAIMS;
    }
    if (!audience_has(json_object_get(payload, "aud"), ex->audience)) {
        jwt_say(why, cap,
                "the token's audience is not this resource (%.200s); ask for a token "
                "with resource=%.200s",
                ex->audience, ex->audience);
        return JWT_ECLAIMS;
    }
    bool has_exp, has_nbf, has_iat;
    int64_t exp = 0, nbf = 0, iat = 0;
    int64_t skew = (int64_t)ex->leeway_s;
    if (!numeric_date(payload, "exp", &has_exp, &exp) || !has_exp) {
        jwt_say(why, cap, "the token has no numeric exp");
        return JWT_ECLAIMS;
    }
    if (ex->now > exp + skew) {
        jwt_say(why, cap, "the token expired %lld s ago", (long long)(ex->now - exp));
        return JWT_ECLAIMS;
    }
    if (!numeric_date(payload, "nbf", &has_nbf, &nbf) || (has_nbf && ex->now + skew < nbf)) {
        jwt_say(why, cap, "the token is not valid yet (nbf)");
        return JWT_ECLAIMS;
    }
    if (!numeric_date(payload, "iat", &has_iat, &iat) || (has_iat && ex->now + skew < iat)) {
        jwt_say(why, cap, "the token was issued in the future (iat)");
        return JWT_ECLAIMS;
    }
    const char *sub = json_string_value(json_object_get(payload, "sub"));
    if (sub == NULL || sub[0] == '\0') {
        jwt_say(why, cap, "the token has no subject (sub)");
        return JWT_ECLAIMS;
    }
    return JWT_OK;
}

char *jwt_scopes(const json_t *payload)
{
    const json_t *scope = json_object_get(payload, "scope");
    if (json_is_string(scope))
        return mcpage__strdup(json_string_value(scope));
    const json_t *scp = json_object_get(payload, "scp");
    size_t total = 1, i;
    const json_t *a;
    json_array_foreach(scp, i, a) total += json_string_length(a) + 1;
    char *out = mcpage__malloc(total);
    if (out == NULL)
        return NULL;
    size_t at = 0;
    json_array_foreach(scp, i, a)
    {
        if (!json_is_string(a) || json_string_length(a) == 0)
            continue;
        if (at)
            out[at++] = ' ';
        memcpy(out + at, json_string_value(a), json_string_length(a));
        at += json_string_length(a);
    }
    out[at] = '\0';
    return out;
}

/* `have` (space-separated) holds the one scope s[0..n). */
static bool scope_in(const char *have, const char *s, size_t n)
{
    const char *p = have;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && n > 0 && memcmp(p, s, n) == 0)
            return true;
        p = e;
    }
    return false;
}

bool jwt_scopes_cover(const char *have, const char *need)
{
    if (need == NULL)
        return true;
    const char *p = need;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if (e > p && !scope_in(have ? have : "", p, (size_t)(e - p)))
            return false;
        p = e;
    }
    return true;
}
