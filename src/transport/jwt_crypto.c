/* libcrypto's table for page/dynlib.c; MCPAGE_SONAME_CRYPTO comes from the build. */
#define JWT_CRYPTO_DEFINING
#include "transport/jwt_crypto.h"

#include "page/dynlib.h"

MCPAGE__DYNLIB_DEFINE(jwt_crypto_fns, jwt_crypto, JWT_CRYPTO_FUNCS, jwt_crypto_load,
                      MCPAGE_SONAME_CRYPTO, "libssl3", "OAuth (verifying access tokens)", NULL)
