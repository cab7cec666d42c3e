/*
 * The OAuth 2.1 resource server of the HTTP transport
 * (mcpage_http_oauth): the protected resource metadata (RFC 9728), the
 * issuer's keys (a file, a URL, or discovered from the issuer's
 * metadata, RFC 8414 / OpenID discovery) with their cache, a bearer
 * token's verdict, and the WWW-Authenticate challenges.
 *
 * Thread-safe: checks run on libmicrohttpd's polling threads; the key
 * set is swapped under a mutex and shared by reference, so a refresh
 * never holds the lock while it fetches.
 */
#ifndef MCPAGE_TRANSPORT_OAUTH_H
#define MCPAGE_TRANSPORT_OAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mcpage/http.h>

/* Default and largest clock skew allowed on exp, nbf and iat, in seconds. */
#define OAUTH_LEEWAY_DEFAULT 60
#define OAUTH_LEEWAY_MAX     300
/* Default seconds a metadata or JWKS fetch may take. */
#define OAUTH_FETCH_TIMEOUT_DEFAULT 5
/* Bounds on how long fetched keys are kept, whatever their Cache-Control says (seconds). */
#define OAUTH_CACHE_MIN_S 60
#define OAUTH_CACHE_MAX_S 86400
/* Keys kept this long when the answer says nothing of caching (seconds). */
#define OAUTH_CACHE_DEFAULT_S 300
/* Fewest seconds between two fetches of the keys (an unknown kid asks for one). */
#define OAUTH_REFETCH_MIN_S 10
/* Largest metadata document accepted, in bytes. */
#define OAUTH_MAX_METADATA ((size_t)64 << 10)
/* Longest issuer, resource or URL accepted, in bytes. */
#define OAUTH_MAX_URL 1024
/* Most "TOOL=SCOPES" entries. */
#define OAUTH_MAX_TOOL_SCOPES 256

typedef struct http_oauth http_oauth;

/* Who a request comes from, once its token passed. */
typedef struct oauth_principal {
    char *subject; /* the token's sub (owned); NULL for the static token */
    char *scopes;  /* its scopes, space-separated (owned); NULL for the static token */
    char *groups;  /* its `groups` claim, one a line (owned), or NULL */
    bool all;      /* the static token: every scope */
} oauth_principal;

/* A verdict on a request's credentials. */
typedef enum oauth_verdict {
    OAUTH_PASS = 0,   /* the principal is filled */
    OAUTH_NO_TOKEN,   /* 401: no bearer token */
    OAUTH_BAD_TOKEN,  /* 401 invalid_token: `why` says what is wrong */
    OAUTH_SCOPE,      /* 403 insufficient_scope: `need` is what it lacks */
    OAUTH_UNAVAILABLE /* 503: the issuer's keys cannot be had right now */
} oauth_verdict;

/*
 * Copies and checks `cfg` (the resource defaults to `default_resource`),
 * then loads the keys once: a file that cannot be read or parsed fails
 * the start (MCPAGE_EINVAL, the reason on stderr); an unreachable URL
 * only delays them (requests get 503 until they come). 0 or a negative
 * MCPAGE_E* code.
 */
int http_oauth_new(const mcpage_http_oauth *cfg, const char *default_resource, http_oauth **out);
void http_oauth_free(http_oauth *o);

/* The resource identifier tokens must name. */
const char *http_oauth_resource(const http_oauth *o);
/* The metadata's URL (for WWW-Authenticate). */
const char *http_oauth_metadata_url(const http_oauth *o);
/* True when `path` is where the metadata is served. */
bool http_oauth_is_metadata_path(const http_oauth *o, const char *path);
/* The metadata document (JSON, NUL-terminated; owned by `o`). */
const char *http_oauth_metadata(const http_oauth *o, size_t *len);

/*
 * Checks an Authorization header value (NULL when absent) against the
 * issuer's keys and claims, and the scopes every request needs. On
 * OAUTH_PASS, `p` is filled (free it with oauth_principal_clear). `why`
 * receives a sentence for any other verdict.
 */
oauth_verdict http_oauth_check(http_oauth *o, const char *authz, oauth_principal *p, char *why,
                               size_t cap);
/* The scopes a tools/call of `tool` needs besides the base ones, or NULL. */
const char *http_oauth_tool_scope(const http_oauth *o, const char *tool);
/* The scopes every request needs, or NULL. */
const char *http_oauth_base_scope(const http_oauth *o);

/*
 * The WWW-Authenticate value of a refusal (newly allocated): `error` is
 * NULL (no token), "invalid_token" or "insufficient_scope"; `desc` (may
 * be NULL) is cleaned of quotes and control characters; `scope` (may be
 * NULL) is the scope the client should ask for.
 */
char *http_oauth_challenge(const http_oauth *o, const char *error, const char *desc,
                           const char *scope);

void oauth_principal_clear(oauth_principal *p);

/* The extra fetch-free entry points the fuzz target and unit tests use. */
/* The max-age a Cache-Control value allows (seconds, clamped), or the default. */
int64_t oauth_cache_seconds(const char *cache_control);

#endif
