/*
 * libFuzzer target: the JWKS parser and the JWT access token checks of
 * the OAuth resource server (src/transport/jwt.c). The input is a JWKS
 * document, a NUL byte, then a token: the set is parsed, the token
 * verified against it, and when it verifies its claims and scopes are
 * checked. Nothing may crash, leak or read out of bounds, and a token
 * whose signature was not made by a key of the set must never verify
 * (the seeds are real sets and tokens made with jose, so mutations reach
 * the signature checks).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "page/alloc.h"
#include "transport/jwt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t jlen = nul ? (size_t)(nul - data) : size;
    char *jwks = malloc(jlen ? jlen : 1); /* exact size: ASan sees any overread */
    size_t tlen = nul ? size - jlen - 1 : 0;
    char *token = malloc(tlen + 1);
    if (jwks == NULL || token == NULL)
        abort();
    memcpy(jwks, data, jlen);
    if (tlen)
        memcpy(token, nul + 1, tlen);
    token[tlen] = '\0';

    jwt_keyset ks;
    char why[300];
    if (jwt_keyset_parse(jwks, jlen, &ks, why, sizeof why) == 0) {
        if (ks.n > JWT_MAX_KEYS)
            abort();
        json_t *payload = NULL;
        if (jwt_verify(&ks, token, &payload, why, sizeof why) == JWT_OK) {
            if (!json_is_object(payload))
                abort();
            jwt_expect ex = {.issuer = "http://127.0.0.1:1",
                             .audience = "http://127.0.0.1:2/mcp",
                             .now = 1800000000,
                             .leeway_s = 60};
            (void)jwt_check_claims(payload, &ex, why, sizeof why);
            char *scopes = jwt_scopes(payload);
            if (scopes && !jwt_scopes_cover(scopes, scopes))
                abort(); /* a set of scopes covers itself */
            mcpage__free(scopes);
        } else if (payload != NULL) {
            abort();
        }
        json_decref(payload);
        jwt_keyset_free(&ks);
    }
    free(jwks);
    free(token);
    return 0;
}
