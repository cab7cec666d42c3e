/*
 * libcrypto, loaded when an OAuth resource server first reads its
 * issuer's keys (page/dynlib.h): OpenSSL verifies the tokens'
 * signatures, and nothing else in mcpage needs it (digests, MACs and
 * random bytes are page/digest.h). A process that never verifies a
 * token never maps libcrypto nor initialises its providers, about 1.5
 * to 3.5 MB of resident memory. jwt.c includes this instead of the
 * OpenSSL headers it calls.
 */
#ifndef MCPAGE_TRANSPORT_JWT_CRYPTO_H
#define MCPAGE_TRANSPORT_JWT_CRYPTO_H

#include <stddef.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

/* The functions jwt.c calls, each once here. */
#define JWT_CRYPTO_FUNCS(X)                                                                        \
    X(BN_bin2bn)                                                                                   \
    X(BN_free)                                                                                     \
    X(BN_is_odd)                                                                                   \
    X(BN_num_bits)                                                                                 \
    X(ECDSA_SIG_free)                                                                              \
    X(ECDSA_SIG_new)                                                                               \
    X(ECDSA_SIG_set0)                                                                              \
    X(EVP_DigestVerify)                                                                            \
    X(EVP_DigestVerifyInit)                                                                        \
    X(EVP_MD_CTX_free)                                                                             \
    X(EVP_MD_CTX_new)                                                                              \
    X(EVP_PKEY_CTX_free)                                                                           \
    X(EVP_PKEY_CTX_new_from_name)                                                                  \
    X(EVP_PKEY_free)                                                                               \
    X(EVP_PKEY_fromdata)                                                                           \
    X(EVP_PKEY_fromdata_init)                                                                      \
    X(EVP_PKEY_new_raw_public_key)                                                                 \
    X(EVP_sha256)                                                                                  \
    X(OSSL_PARAM_BLD_free)                                                                         \
    X(OSSL_PARAM_BLD_new)                                                                          \
    X(OSSL_PARAM_BLD_push_BN)                                                                      \
    X(OSSL_PARAM_BLD_push_octet_string)                                                            \
    X(OSSL_PARAM_BLD_push_utf8_string)                                                             \
    X(OSSL_PARAM_BLD_to_param)                                                                     \
    X(OSSL_PARAM_free)                                                                             \
    X(i2d_ECDSA_SIG)

/* The loaded functions, typed as the library's headers declare them. */
typedef struct jwt_crypto_fns {
#define JWT_CRYPTO_SLOT(f) __typeof__(f) *f;
    JWT_CRYPTO_FUNCS(JWT_CRYPTO_SLOT)
#undef JWT_CRYPTO_SLOT
} jwt_crypto_fns;

extern jwt_crypto_fns jwt_crypto;

/* Loads libcrypto once: 0, or MCPAGE_ENOTFOUND with `why` (page/dynlib.h). */
int jwt_crypto_load(char *why, size_t cap);

#ifndef JWT_CRYPTO_DEFINING /* jwt_crypto.c names the real functions */
#define BN_bin2bn                        jwt_crypto.BN_bin2bn
#define BN_free                          jwt_crypto.BN_free
#define BN_is_odd                        jwt_crypto.BN_is_odd
#define BN_num_bits                      jwt_crypto.BN_num_bits
#define ECDSA_SIG_free                   jwt_crypto.ECDSA_SIG_free
#define ECDSA_SIG_new                    jwt_crypto.ECDSA_SIG_new
#define ECDSA_SIG_set0                   jwt_crypto.ECDSA_SIG_set0
#define EVP_DigestVerify                 jwt_crypto.EVP_DigestVerify
#define EVP_DigestVerifyInit             jwt_crypto.EVP_DigestVerifyInit
#define EVP_MD_CTX_free                  jwt_crypto.EVP_MD_CTX_free
#define EVP_MD_CTX_new                   jwt_crypto.EVP_MD_CTX_new
#define EVP_PKEY_CTX_free                jwt_crypto.EVP_PKEY_CTX_free
#define EVP_PKEY_CTX_new_from_name       jwt_crypto.EVP_PKEY_CTX_new_from_name
#define EVP_PKEY_free                    jwt_crypto.EVP_PKEY_free
#define EVP_PKEY_fromdata                jwt_crypto.EVP_PKEY_fromdata
#define EVP_PKEY_fromdata_init           jwt_crypto.EVP_PKEY_fromdata_init
#define EVP_PKEY_new_raw_public_key      jwt_crypto.EVP_PKEY_new_raw_public_key
#define EVP_sha256                       jwt_crypto.EVP_sha256
#define OSSL_PARAM_BLD_free              jwt_crypto.OSSL_PARAM_BLD_free
#define OSSL_PARAM_BLD_new               jwt_crypto.OSSL_PARAM_BLD_new
#define OSSL_PARAM_BLD_push_BN           jwt_crypto.OSSL_PARAM_BLD_push_BN
#define OSSL_PARAM_BLD_push_octet_string jwt_crypto.OSSL_PARAM_BLD_push_octet_string
#define OSSL_PARAM_BLD_push_utf8_string  jwt_crypto.OSSL_PARAM_BLD_push_utf8_string
#define OSSL_PARAM_BLD_to_param          jwt_crypto.OSSL_PARAM_BLD_to_param
#define OSSL_PARAM_free                  jwt_crypto.OSSL_PARAM_free
#define i2d_ECDSA_SIG                    jwt_crypto.i2d_ECDSA_SIG
#endif

#endif
