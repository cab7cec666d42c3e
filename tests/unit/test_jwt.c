/*
 * JWT access tokens and JWKS (src/transport/jwt.c) and the cache rule of
 * the OAuth resource server (src/transport/oauth.c): real tokens signed
 * by jose (ES256, RS256, EdDSA; the fuzz target's seeds, each a JWKS, a
 * NUL and a token) verify; a changed byte of the signature, header or
 * payload, another kid, another algorithm's key or "none" do not; iss,
 * aud, exp, nbf and iat are checked with the leeway and no more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "page/alloc.h"
#include "transport/jwt.h"
#include "transport/oauth.h"

#define ISS "http://127.0.0.1:1"
#define AUD "http://127.0.0.1:2/mcp"
#define NOW INT64_C(1800000000) /* the seeds: iat/nbf NOW-1000, exp NOW+300 */

typedef struct seed {
    char jwks[4096];  /* the set */
    char token[4096]; /* the token */
} seed;

static void load(int n, seed *s)
{
    char path[512];
    (void)snprintf(path, sizeof path, "%s/fuzz/seeds/fuzz_jwt/seed%d", MCPAGE_SOURCE_DIR, n);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[len] = '\0';
    size_t jl = strlen(buf);
    assert_true(jl < len && jl < sizeof s->jwks);
    memcpy(s->jwks, buf, jl + 1);
    (void)snprintf(s->token, sizeof s->token, "%s", buf + jl + 1);
}

static jwt_status verify_at(const seed *s, const char *token, int64_t now, const char *aud)
{
    jwt_keyset ks;
    char why[300];
    assert_int_equal(jwt_keyset_parse(s->jwks, strlen(s->jwks), &ks, why, sizeof why), 0);
    json_t *payload = NULL;
    jwt_status st = jwt_verify(&ks, token, &payload, why, sizeof why);
    if (st == JWT_OK) {
        jwt_expect ex = {.issuer = ISS, .audience = aud, .now = now, .leeway_s = 60};
        st = jwt_check_claims(payload, &ex, why, sizeof why);
    }
    json_decref(payload);
    jwt_keyset_free(&ks);
    return st;
}

static void real_tokens_of_three_algorithms_verify(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        seed s;
        load(i, &s);
        jwt_keyset ks;
        char why[300];
        assert_int_equal(jwt_keyset_parse(s.jwks, strlen(s.jwks), &ks, why, sizeof why), 0);
        assert_int_equal(ks.n, 1);
        assert_int_equal(ks.skipped, 1); /* the "oct" key verifies nothing */
        jwt_keyset_free(&ks);
        assert_int_equal(verify_at(&s, s.token, NOW, AUD), JWT_OK);
    }
}

static void a_changed_byte_is_refused(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        seed s;
        load(i, &s);
        size_t len = strlen(s.token);
        const char *dot2 = strrchr(s.token, '.');
        size_t spots[3] = {5, (size_t)(strchr(s.token, '.') - s.token) + 5,
                           (size_t)(dot2 - s.token) + 5};
        for (int k = 0; k < 3; k++) {
            char t[4096];
            memcpy(t, s.token, len + 1);
            t[spots[k]] = t[spots[k]] == 'A' ? 'B' : 'A';
            assert_int_not_equal(verify_at(&s, t, NOW, AUD), JWT_OK);
        }
        char cut[4096]; /* no signature at all */
        memcpy(cut, s.token, (size_t)(dot2 - s.token) + 1);
        cut[dot2 - s.token + 1] = '\0';
        assert_int_not_equal(verify_at(&s, cut, NOW, AUD), JWT_OK);
    }
}

static void claims_are_checked_with_the_leeway(void **state)
{
    (void)state;
    seed s;
    load(0, &s);
    assert_int_equal(verify_at(&s, s.token, NOW + 300 + 60, AUD), JWT_OK); /* at exp + leeway */
    assert_int_equal(verify_at(&s, s.token, NOW + 300 + 61, AUD), JWT_ECLAIMS);  /* expired */
    assert_int_equal(verify_at(&s, s.token, NOW - 1000 - 60, AUD), JWT_OK);      /* nbf - leeway */
    assert_int_equal(verify_at(&s, s.token, NOW - 1000 - 61, AUD), JWT_ECLAIMS); /* not yet */
    assert_int_equal(verify_at(&s, s.token, NOW, "http://127.0.0.1:2/mcp/"), JWT_ECLAIMS);
    assert_int_equal(verify_at(&s, s.token, NOW, "x"), JWT_OK); /* aud is an array holding x */
}

static void keys_verify_only_their_own_algorithm(void **state)
{
    (void)state;
    seed ec, rsa;
    load(0, &ec);
    load(1, &rsa);
    /* The ES256 token against the RSA set: no key for ES256 there. */
    assert_int_equal(verify_at(&rsa, ec.token, NOW, AUD), JWT_ENOKEY);
    /* alg none, with the payload of a real token */
    char t[4096];
    const char *dot = strchr(ec.token, '.');
    (void)snprintf(t, sizeof t, "eyJhbGciOiJub25lIn0%.*s.", (int)(strrchr(ec.token, '.') - dot),
                   dot);
    assert_int_equal(verify_at(&ec, t, NOW, AUD), JWT_EMALFORMED);
    assert_int_equal(verify_at(&ec, "a.b", NOW, AUD), JWT_EMALFORMED);
    assert_int_equal(verify_at(&ec, "a.b.c.d", NOW, AUD), JWT_EMALFORMED);
}

static void bad_key_sets_are_refused_or_skipped(void **state)
{
    (void)state;
    jwt_keyset ks;
    char why[300];
    assert_int_equal(jwt_keyset_parse("[]", 2, &ks, why, sizeof why), -1);
    assert_non_null(strstr(why, "keys"));
    assert_int_equal(jwt_keyset_parse("{", 1, &ks, why, sizeof why), -1);
    const char *weak = "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
                       "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AAAA\",\"y\":\"AAAA\"},"
                       "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"AAAA\",\"use\":\"enc\"}]}";
    assert_int_equal(jwt_keyset_parse(weak, strlen(weak), &ks, why, sizeof why), 0);
    assert_int_equal(ks.n, 0);
    assert_int_equal(ks.skipped, 3);
    jwt_keyset_free(&ks);
}

static void scopes_and_cache_lifetimes(void **state)
{
    (void)state;
    assert_true(jwt_scopes_cover("a b c", "c a"));
    assert_false(jwt_scopes_cover("a b", "a bc"));
    assert_false(jwt_scopes_cover("", "a"));
    assert_true(jwt_scopes_cover(NULL, NULL));
    json_t *p = json_pack("{s:[s,s]}", "scp", "x", "y");
    char *sc = jwt_scopes(p);
    assert_string_equal(sc, "x y");
    mcpage__free(sc);
    json_decref(p);
    assert_int_equal(oauth_cache_seconds(NULL), OAUTH_CACHE_DEFAULT_S);
    assert_int_equal(oauth_cache_seconds(" public, max-age=3600"), 3600);
    assert_int_equal(oauth_cache_seconds("max-age=5"), OAUTH_CACHE_MIN_S);
    assert_int_equal(oauth_cache_seconds("no-store"), OAUTH_CACHE_MIN_S);
    assert_int_equal(oauth_cache_seconds("max-age=99999999999"), OAUTH_CACHE_MAX_S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_tokens_of_three_algorithms_verify),
        cmocka_unit_test(a_changed_byte_is_refused),
        cmocka_unit_test(claims_are_checked_with_the_leeway),
        cmocka_unit_test(keys_verify_only_their_own_algorithm),
        cmocka_unit_test(bad_key_sets_are_refused_or_skipped),
        cmocka_unit_test(scopes_and_cache_lifetimes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
