/*
 * The OAuth 2.1 resource server of the HTTP transport (oauth.h): the
 * protected resource metadata, the issuer's keys and their cache, the
 * verdict on a bearer token and the challenges that tell a client what
 * to do next. Tokens are verified here and go no further: no token is
 * forwarded anywhere (the spec forbids passthrough); the runtime learns
 * only the subject and the scopes.
 *
 * Fetching (the issuer's metadata, a JWKS URL) uses libcurl with a
 * timeout, a size limit, no redirects and http(s) only; it happens on
 * the thread that needs the keys, outside the lock, one fetch at a time,
 * while other requests go on with the keys already held.
 */
#include "transport/oauth.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "mcp/jsonin.h"
#include "page/alloc.h"
#include "page/jw.h"
#include "transport/http_curl.h"
#include "transport/jwt.h"

/* A key set shared by the requests verifying with it. */
typedef struct oauth_keys {
    jwt_keyset set; /* the keys */
    int refs;       /* holders (the cache is one); guarded by the owner's lock */
} oauth_keys;

/* One "TOOL=SCOPES" entry. */
typedef struct oauth_tool_scope {
    char *tool;   /* the tool's name, or "*" */
    char *scopes; /* what it needs */
} oauth_tool_scope;

struct http_oauth {
    char *issuer;               /* the issuer identifier */
    char *jwks;                 /* a file or URL the user named, or NULL: discovered */
    bool jwks_file;             /* jwks names a file */
    char *resource;             /* the audience */
    char *scope;                /* base scopes, or NULL */
    oauth_tool_scope *tools;    /* per-tool scopes */
    size_t ntools;              /* their count */
    unsigned leeway_s;          /* clock skew */
    long timeout_ms;            /* fetch timeout */
    char *metadata_url;         /* RFC 9728 document's URL */
    char *metadata_path;        /* its path suffixed form ("/.well-known/...//mcp") */
    char *metadata;             /* the document */
    size_t metadata_len;        /* its length */
    pthread_mutex_t lock;       /* guards what follows */
    oauth_keys *keys;           /* the current keys, or NULL until first loaded */
    int64_t keys_until;         /* monotonic s after which they are fetched again */
    int64_t last_try;           /* monotonic s of the last fetch or file check (0: none) */
    bool fetching;              /* a thread is fetching now */
    char *jwks_uri;             /* discovered jwks_uri (cached with the keys) */
    struct timespec file_mtime; /* the JWKS file as last read */
    off_t file_size;            /* its size then */
    bool warned;                /* the last failure was logged */
};

static int64_t mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

/* ------------------------------------------------------------ URLs */

/* The host part of "scheme://host[:port]/..." (start and length); false when none. */
static bool url_host(const char *url, const char **host, size_t *n)
{
    const char *p = strstr(url, "://");
    if (p == NULL)
        return false;
    p += 3;
    const char *e = p;
    if (*p == '[') {
        e = strchr(p, ']');
        if (e == NULL)
            return false;
        e++;
    } else {
        while (*e && *e != ':' && *e != '/' && *e != '?' && *e != '#')
            e++;
    }
    *host = p;
    *n = (size_t)(e - p);
    return *n > 0;
}

static bool host_is_loopback(const char *h, size_t n)
{
    return (n == 9 && strncasecmp(h, "localhost", 9) == 0) ||
           (n == 5 && memcmp(h, "[::1]", 5) == 0) || (n >= 4 && memcmp(h, "127.", 4) == 0);
}

/*
 * An URL the server may fetch or name: https, or http to a loopback
 * host (the spec's rule for authorization servers), no user info, no
 * fragment, no control characters or spaces, at most OAUTH_MAX_URL bytes.
 */
static bool url_ok(const char *url)
{
    size_t len = strnlen(url, OAUTH_MAX_URL + 1);
    if (len > OAUTH_MAX_URL)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f || url[i] == '"' || url[i] == '\\' ||
            url[i] == '#')
            return false;
    const char *host;
    size_t n;
    if (!url_host(url, &host, &n) || memchr(url, '@', (size_t)(host + n - url)) != NULL)
        return false;
    if (strncasecmp(url, "https://", 8) == 0)
        return true;
    return strncasecmp(url, "http://", 7) == 0 && host_is_loopback(host, n);
}

/* "scheme://authority" length of an URL (url_ok already held). */
static size_t origin_len(const char *url)
{
    const char *host;
    size_t n;
    (void)url_host(url, &host, &n);
    const char *e = host + n;
    while (*e && *e != '/' && *e != '?')
        e++;
    return (size_t)(e - url);
}

/* A new string: printf into the heap. */
static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = mcpage__malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    va_start(ap, fmt);
    (void)vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ------------------------------------------------------------ fetching */

typedef struct fetch_buf {
    char *data;      /* the body so far */
    size_t len, cap; /* its length and allocation */
    size_t max;      /* the limit */
    bool too_big;    /* the body passed it */
    int64_t max_age; /* from Cache-Control, or -1 */
} fetch_buf;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    fetch_buf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n > b->max) {
        b->too_big = true;
        return 0; /* libcurl stops */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8192;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = mcpage__realloc(b->data, cap);
        if (d == NULL)
            return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

int64_t oauth_cache_seconds(const char *cc)
{
    if (cc == NULL)
        return OAUTH_CACHE_DEFAULT_S;
    int64_t secs = OAUTH_CACHE_DEFAULT_S;
    const char *p = cc;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        if (strncasecmp(p, "no-store", 8) == 0 || strncasecmp(p, "no-cache", 8) == 0) {
            secs = 0; /* clamped to the minimum below: an issuer cannot make us fetch per request */
        } else if (strncasecmp(p, "max-age=", 8) == 0 && isdigit((unsigned char)p[8])) {
            char *end;
            long long v = strtoll(p + 8, &end, 10);
            secs = v > OAUTH_CACHE_MAX_S ? OAUTH_CACHE_MAX_S : (int64_t)v;
        }
        while (*p && *p != ',')
            p++;
    }
    if (secs < OAUTH_CACHE_MIN_S)
        secs = OAUTH_CACHE_MIN_S;
    if (secs > OAUTH_CACHE_MAX_S)
        secs = OAUTH_CACHE_MAX_S;
    return secs;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
    fetch_buf *b = ud;
    size_t n = size * nmemb;
    if (n > 14 && strncasecmp(line, "Cache-Control:", 14) == 0) {
        char v[512];
        size_t k = n - 14 < sizeof v - 1 ? n - 14 : sizeof v - 1;
        memcpy(v, line + 14, k);
        v[k] = '\0';
        b->max_age = oauth_cache_seconds(v);
    }
    return n;
}

/*
 * GETs `url` (JSON expected): 0 with the body (NUL-terminated, owned by
 * the caller) and its cache lifetime, else -1 with `why`.
 */
static int fetch(const http_oauth *o, const char *url, size_t max, char **body, size_t *len,
                 int64_t *cache_s, char *why, size_t cap)
{
    if (http_curl_load(why, cap) < 0)
        return -1;
    CURL *c = curl_easy_init();
    if (c == NULL) {
        jwt_say(why, cap, "out of memory");
        return -1;
    }
    fetch_buf b = {.max = max, .max_age = -1};
    char err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->timeout_ms);
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &b);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "mcpage/" MCPAGE_VERSION_STRING);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK || status != 200 || b.data == NULL) {
        if (b.too_big || rc == CURLE_FILESIZE_EXCEEDED)
            jwt_say(why, cap, "%.300s answered more than %zu bytes", url, max);
        else if (rc != CURLE_OK)
            jwt_say(why, cap, "%.300s: %.200s", url, err[0] ? err : curl_easy_strerror(rc));
        else
            jwt_say(why, cap, "%.300s answered HTTP %ld", url, status);
        mcpage__free(b.data);
        return -1;
    }
    *body = b.data;
    *len = b.len;
    *cache_s = b.max_age >= 0 ? b.max_age : OAUTH_CACHE_DEFAULT_S;
    return 0;
}

/*
 * The issuer's metadata: RFC 8414 (path inserted), then OpenID
 * discovery (path inserted, then appended), as MCP clients try them.
 * Its issuer must be ours; returns its jwks_uri (owned) or NULL.
 */
static char *discover_jwks_uri(const http_oauth *o, char *why, size_t cap)
{
    size_t ol = origin_len(o->issuer);
    const char *path = o->issuer + ol;
    size_t plen = strlen(path);
    while (plen && path[plen - 1] == '/')
        plen--;
    char *tries[3] = {
        strf("%.*s/.well-known/oauth-authorization-server%.*s", (int)ol, o->issuer, (int)plen,
             path),
        strf("%.*s/.well-known/openid-configuration%.*s", (int)ol, o->issuer, (int)plen, path),
        plen
            ? strf("%.*s%.*s/.well-known/openid-configuration", (int)ol, o->issuer, (int)plen, path)
            : NULL,
    };
    char *found = NULL;
    char first[1024] = "";
    for (size_t i = 0; i < 3 && found == NULL; i++) {
        char *body = NULL;
        size_t len = 0;
        int64_t secs;
        char err[400];
        if (tries[i] == NULL ||
            fetch(o, tries[i], OAUTH_MAX_METADATA, &body, &len, &secs, err, sizeof err) != 0) {
            if (tries[i] && first[0] == '\0')
                (void)snprintf(first, sizeof first, "%s", err);
            continue;
        }
        json_t *doc = NULL;
        char perr[256];
        if (jsonin_parse(body, len, OAUTH_MAX_METADATA, 16, &doc, perr, sizeof perr) == JSONIN_OK) {
            const char *iss = json_string_value(json_object_get(doc, "issuer"));
            const char *uri = json_string_value(json_object_get(doc, "jwks_uri"));
            if (iss == NULL || strcmp(iss, o->issuer) != 0)
                (void)snprintf(first, sizeof first,
                               "%.300s names issuer \"%.200s\", not %.200s (RFC 8414 3.3)",
                               tries[i], iss ? iss : "", o->issuer);
            else if (uri == NULL || !url_ok(uri))
                (void)snprintf(first, sizeof first,
                               "%.300s has no usable jwks_uri (https, or http on loopback)",
                               tries[i]);
            else
                found = mcpage__strdup(uri);
        } else {
            (void)snprintf(first, sizeof first, "%.300s is not JSON: %.200s", tries[i], perr);
        }
        json_decref(doc);
        mcpage__free(body);
    }
    for (size_t i = 0; i < 3; i++)
        mcpage__free(tries[i]);
    if (found == NULL)
        jwt_say(why, cap, "the issuer's metadata: %s", first[0] ? first : "not found");
    return found;
}

/* ------------------------------------------------------------ keys */

static void keys_unref_locked(http_oauth *o, oauth_keys *k)
{
    (void)o;
    if (k && --k->refs == 0) {
        jwt_keyset_free(&k->set);
        mcpage__free(k);
    }
}

static oauth_keys *keys_from_text(const char *text, size_t len, char *why, size_t cap)
{
    oauth_keys *k = mcpage__calloc(1, sizeof *k);
    if (k == NULL) {
        jwt_say(why, cap, "out of memory");
        return NULL;
    }
    if (jwt_keyset_parse(text, len, &k->set, why, cap) != 0) {
        mcpage__free(k);
        return NULL;
    }
    if (k->set.n == 0) {
        jwt_say(why, cap, "the JWKS holds no RS256, ES256 or Ed25519 signature key (%zu skipped)",
                k->set.skipped);
        jwt_keyset_free(&k->set);
        mcpage__free(k);
        return NULL;
    }
    k->refs = 1;
    return k;
}

/* Reads the JWKS file; NULL with `why` when it cannot be read or parsed. */
static oauth_keys *keys_from_file(http_oauth *o, char *why, size_t cap)
{
    FILE *f = fopen(o->jwks, "rb");
    if (f == NULL) {
        jwt_say(why, cap, "cannot open the JWKS file %.300s", o->jwks);
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    oauth_keys *k = NULL;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > JWT_MAX_JWKS) {
        jwt_say(why, cap, "the JWKS file %.300s is not a regular file of at most %zu bytes",
                o->jwks, JWT_MAX_JWKS);
        goto done;
    }
    buf = mcpage__malloc((size_t)st.st_size + 1);
    if (buf == NULL)
        goto done;
    len = fread(buf, 1, (size_t)st.st_size, f);
    buf[len] = '\0';
    k = keys_from_text(buf, len, why, cap);
    o->file_mtime = st.st_mtim;
    o->file_size = st.st_size;
done:
    mcpage__free(buf);
    (void)fclose(f);
    return k;
}

/* The file changed since it was read (or cannot be looked at now). */
static bool file_changed(const http_oauth *o)
{
    struct stat st;
    if (stat(o->jwks, &st) != 0)
        return false; /* keep the keys we have */
    return st.st_size != o->file_size || st.st_mtim.tv_sec != o->file_mtime.tv_sec ||
           st.st_mtim.tv_nsec != o->file_mtime.tv_nsec;
}

/* Fetches the keys from the URL (named or discovered); NULL with `why`. */
static oauth_keys *keys_from_url(http_oauth *o, int64_t *cache_s, char *why, size_t cap)
{
    char *uri = o->jwks ? mcpage__strdup(o->jwks) : NULL;
    if (o->jwks == NULL) {
        pthread_mutex_lock(&o->lock);
        uri = o->jwks_uri ? mcpage__strdup(o->jwks_uri) : NULL;
        pthread_mutex_unlock(&o->lock);
        if (uri == NULL && (uri = discover_jwks_uri(o, why, cap)) != NULL) {
            pthread_mutex_lock(&o->lock);
            mcpage__free(o->jwks_uri);
            o->jwks_uri = mcpage__strdup(uri);
            pthread_mutex_unlock(&o->lock);
        }
    }
    if (uri == NULL)
        return NULL;
    char *body = NULL;
    size_t len = 0;
    oauth_keys *k = NULL;
    if (fetch(o, uri, JWT_MAX_JWKS, &body, &len, cache_s, why, cap) == 0)
        k = keys_from_text(body, len, why, cap);
    if (k == NULL && o->jwks == NULL) { /* the metadata may have moved too: discover again */
        pthread_mutex_lock(&o->lock);
        mcpage__free(o->jwks_uri);
        o->jwks_uri = NULL;
        pthread_mutex_unlock(&o->lock);
    }
    mcpage__free(body);
    mcpage__free(uri);
    return k;
}

/*
 * Loads the keys again when they are due (expired, or `stale` after an
 * unknown kid) and no other thread is at it, at most every
 * OAUTH_REFETCH_MIN_S. Called without the lock.
 */
static void keys_refresh(http_oauth *o, bool stale)
{
    int64_t now = mono_s();
    pthread_mutex_lock(&o->lock);
    bool due = o->keys == NULL || now >= o->keys_until || stale;
    if (!due || o->fetching || (o->last_try && now - o->last_try < OAUTH_REFETCH_MIN_S)) {
        pthread_mutex_unlock(&o->lock);
        return;
    }
    o->fetching = true;
    o->last_try = now;
    pthread_mutex_unlock(&o->lock);

    char why[600] = "";
    int64_t cache_s = OAUTH_CACHE_DEFAULT_S;
    oauth_keys *k = NULL;
    bool unchanged = false;
    if (o->jwks_file) {
        unchanged = o->keys != NULL && !file_changed(o);
        if (!unchanged)
            k = keys_from_file(o, why, sizeof why);
        cache_s = OAUTH_REFETCH_MIN_S; /* a file is looked at again that often, when asked */
    } else {
        k = keys_from_url(o, &cache_s, why, sizeof why);
    }

    pthread_mutex_lock(&o->lock);
    o->fetching = false;
    if (k) {
        keys_unref_locked(o, o->keys);
        o->keys = k;
        o->warned = false;
    }
    if (k || unchanged)
        o->keys_until = now + cache_s;
    bool warn = k == NULL && !unchanged && !o->warned;
    if (warn)
        o->warned = true;
    pthread_mutex_unlock(&o->lock);
    if (warn)
        (void)fprintf(stderr, "mcpage: oauth: cannot load the issuer's keys: %s%s\n", why,
                      o->keys ? " (the keys held before stay in use)" : "");
}

/* The current keys, referenced (release with keys_release), or NULL. */
static oauth_keys *keys_get(http_oauth *o)
{
    pthread_mutex_lock(&o->lock);
    oauth_keys *k = o->keys;
    if (k)
        k->refs++;
    pthread_mutex_unlock(&o->lock);
    return k;
}

static void keys_release(http_oauth *o, oauth_keys *k)
{
    pthread_mutex_lock(&o->lock);
    keys_unref_locked(o, k);
    pthread_mutex_unlock(&o->lock);
}

/* ------------------------------------------------------------ setup */

/* The metadata document (RFC 9728 section 2). */
static char *metadata_doc(const http_oauth *o, size_t *len)
{
    jw w;
    jw_init(&w, 64 << 10);
    jw_object_begin(&w);
    jw_kv_string(&w, "resource", o->resource);
    jw_key(&w, "authorization_servers");
    jw_array_begin(&w);
    jw_string(&w, o->issuer);
    jw_array_end(&w);
    jw_key(&w, "bearer_methods_supported");
    jw_array_begin(&w);
    jw_string(&w, "header");
    jw_array_end(&w);
    jw_key(&w, "resource_signing_alg_values_supported"); /* what we verify tokens with */
    jw_array_begin(&w);
    jw_string(&w, "RS256");
    jw_string(&w, "ES256");
    jw_string(&w, "EdDSA");
    jw_array_end(&w);
    /* scopes_supported: every scope named, once, in order */
    jw_key(&w, "scopes_supported");
    jw_array_begin(&w);
    const char *lists[OAUTH_MAX_TOOL_SCOPES + 1];
    size_t nl = 0;
    if (o->scope)
        lists[nl++] = o->scope;
    for (size_t i = 0; i < o->ntools; i++)
        lists[nl++] = o->tools[i].scopes;
    char seen[4096] = " ";
    for (size_t i = 0; i < nl; i++) {
        const char *p = lists[i];
        while (*p) {
            while (*p == ' ')
                p++;
            const char *e = p;
            while (*e && *e != ' ')
                e++;
            char one[260];
            size_t n = (size_t)(e - p);
            if (n > 0 && n < 256) {
                (void)snprintf(one, sizeof one, " %.*s ", (int)n, p);
                if (strstr(seen, one) == NULL && strlen(seen) + n + 2 < sizeof seen) {
                    strcat(seen, one + 1);
                    jw_stringn(&w, p, n);
                }
            }
            p = e;
        }
    }
    jw_array_end(&w);
    jw_kv_string(&w, "resource_name", "mcpage");
    jw_object_end(&w);
    return jw_take(&w, len);
}

static bool scopes_text_ok(const char *s)
{
    if (strlen(s) > 1024)
        return false;
    for (const char *p = s; *p; p++) /* RFC 6749 3.3: NQCHAR and spaces */
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\' ||
            (unsigned char)*p > 0x7e)
            return false;
    return true;
}

static int parse_tool_scopes(http_oauth *o, const char *const *list)
{
    size_t n = 0;
    while (list && list[n])
        n++;
    if (n > OAUTH_MAX_TOOL_SCOPES) {
        (void)fprintf(stderr, "mcpage: oauth: more than %d tool scopes\n", OAUTH_MAX_TOOL_SCOPES);
        return MCPAGE_EINVAL;
    }
    if (n && (o->tools = mcpage__calloc(n, sizeof *o->tools)) == NULL)
        return MCPAGE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(list[i], '=');
        if (eq == NULL || eq == list[i] || eq[1] == '\0' || !scopes_text_ok(eq + 1)) {
            (void)fprintf(stderr,
                          "mcpage: oauth: tool scope \"%.100s\" is not TOOL=SCOPES (e.g. "
                          "read_raw=mcpage:raw)\n",
                          list[i]);
            return MCPAGE_EINVAL;
        }
        o->tools[i].tool = mcpage__strndup(list[i], (size_t)(eq - list[i]));
        o->tools[i].scopes = mcpage__strdup(eq + 1);
        o->ntools++;
        if (o->tools[i].tool == NULL || o->tools[i].scopes == NULL)
            return MCPAGE_ENOMEM;
    }
    return 0;
}

/* The metadata's URL and path: the well-known prefix inserted before the resource's path. */
static int metadata_location(http_oauth *o)
{
    size_t ol = origin_len(o->resource);
    const char *path = o->resource + ol;
    size_t plen = strcspn(path, "?");
    while (plen && path[plen - 1] == '/')
        plen--;
    o->metadata_path = strf("/.well-known/oauth-protected-resource%.*s", (int)plen, path);
    o->metadata_url =
        strf("%.*s%s", (int)ol, o->resource, o->metadata_path ? o->metadata_path : "");
    return o->metadata_path && o->metadata_url ? 0 : MCPAGE_ENOMEM;
}

void mcpage_http_oauth_init(mcpage_http_oauth *o)
{
    memset(o, 0, sizeof *o);
    o->leeway_s = OAUTH_LEEWAY_DEFAULT;
    o->fetch_timeout_s = OAUTH_FETCH_TIMEOUT_DEFAULT;
}

static bool is_url(const char *s)
{
    return strncasecmp(s, "https://", 8) == 0 || strncasecmp(s, "http://", 7) == 0;
}

/* Checks the configuration's values; a sentence on stderr for the first wrong one. */
static int config_check(const mcpage_http_oauth *cfg, const char *resource)
{
    const char *bad = NULL;
    if (cfg->issuer == NULL || !url_ok(cfg->issuer) || strchr(cfg->issuer, '?'))
        bad = "the issuer must be an https URL (http only on a loopback host), without query "
              "or fragment";
    else if (cfg->jwks && is_url(cfg->jwks) && !url_ok(cfg->jwks))
        bad = "the JWKS URL must be https (http only on a loopback host)";
    else if (resource == NULL || !is_url(resource) || strlen(resource) > OAUTH_MAX_URL ||
             strchr(resource, '#') || strchr(resource, '"') || strchr(resource, ' '))
        bad = "the resource must be an absolute http(s) URL without fragment (RFC 8707)";
    else if (cfg->scope && !scopes_text_ok(cfg->scope))
        bad = "the scope holds characters a scope cannot (quotes, backslashes, controls)";
    else if (cfg->leeway_s > OAUTH_LEEWAY_MAX)
        bad = "the clock skew allowed is at most 300 s";
    else if (cfg->fetch_timeout_s == 0 || cfg->fetch_timeout_s > 60)
        bad = "the fetch timeout is 1 to 60 s";
    if (bad == NULL)
        return 0;
    (void)fprintf(stderr, "mcpage: oauth: %s\n", bad);
    return MCPAGE_EINVAL;
}

int http_oauth_new(const mcpage_http_oauth *cfg, const char *default_resource, http_oauth **out)
{
    *out = NULL;
    const char *resource = cfg->resource ? cfg->resource : default_resource;
    int rc = config_check(cfg, resource);
    if (rc != 0)
        return rc;
    http_oauth *o = mcpage__calloc(1, sizeof *o);
    if (o == NULL)
        return MCPAGE_ENOMEM;
    pthread_mutex_init(&o->lock, NULL);
    o->leeway_s = cfg->leeway_s;
    o->timeout_ms = (long)cfg->fetch_timeout_s * 1000;
    o->issuer = mcpage__strdup(cfg->issuer);
    o->resource = mcpage__strdup(resource);
    o->jwks = cfg->jwks ? mcpage__strdup(cfg->jwks) : NULL;
    o->jwks_file = cfg->jwks && !is_url(cfg->jwks);
    o->scope = cfg->scope && cfg->scope[0] ? mcpage__strdup(cfg->scope) : NULL;
    rc = MCPAGE_ENOMEM;
    if (o->issuer == NULL || o->resource == NULL || (cfg->jwks && o->jwks == NULL) ||
        (cfg->scope && cfg->scope[0] && o->scope == NULL))
        goto fail;
    if ((rc = parse_tool_scopes(o, cfg->tool_scopes)) != 0 || (rc = metadata_location(o)) != 0)
        goto fail;
    rc = MCPAGE_ENOMEM;
    if ((o->metadata = metadata_doc(o, &o->metadata_len)) == NULL)
        goto fail;
    keys_refresh(o, false);
    if (o->jwks_file && o->keys == NULL) { /* a file is the user's: fail now, named */
        rc = MCPAGE_EINVAL;
        goto fail;
    }
    *out = o;
    return 0;
fail:
    http_oauth_free(o);
    return rc;
}

void http_oauth_free(http_oauth *o)
{
    if (o == NULL)
        return;
    keys_unref_locked(o, o->keys);
    for (size_t i = 0; i < o->ntools; i++) {
        mcpage__free(o->tools[i].tool);
        mcpage__free(o->tools[i].scopes);
    }
    mcpage__free(o->tools);
    mcpage__free(o->issuer);
    mcpage__free(o->jwks);
    mcpage__free(o->jwks_uri);
    mcpage__free(o->resource);
    mcpage__free(o->scope);
    mcpage__free(o->metadata_url);
    mcpage__free(o->metadata_path);
    mcpage__free(o->metadata);
    pthread_mutex_destroy(&o->lock);
    mcpage__free(o);
}

/* ------------------------------------------------------------ requests */

const char *http_oauth_resource(const http_oauth *o)
{
    return o->resource;
}

const char *http_oauth_metadata_url(const http_oauth *o)
{
    return o->metadata_url;
}

bool http_oauth_is_metadata_path(const http_oauth *o, const char *path)
{
    return strcmp(path, "/.well-known/oauth-protected-resource") == 0 ||
           strcmp(path, o->metadata_path) == 0;
}

const char *http_oauth_metadata(const http_oauth *o, size_t *len)
{
    *len = o->metadata_len;
    return o->metadata;
}

const char *http_oauth_base_scope(const http_oauth *o)
{
    return o->scope;
}

const char *http_oauth_tool_scope(const http_oauth *o, const char *tool)
{
    const char *any = NULL;
    for (size_t i = 0; i < o->ntools; i++) {
        if (strcmp(o->tools[i].tool, tool) == 0)
            return o->tools[i].scopes;
        if (strcmp(o->tools[i].tool, "*") == 0)
            any = o->tools[i].scopes;
    }
    return any;
}

void oauth_principal_clear(oauth_principal *p)
{
    mcpage__free(p->subject);
    mcpage__free(p->scopes);
    mcpage__free(p->groups);
    memset(p, 0, sizeof *p);
}

/* Most bytes of a token's groups kept (the rest are dropped at a whole group). */
#define OAUTH_GROUPS_MAX 4096

/*
 * The `groups` claim (an array of strings, or one string of groups
 * separated by spaces) as one group a line; NULL when there is none.
 * Groups holding a control character are dropped.
 */
static char *token_groups(const json_t *payload)
{
    const json_t *g = json_object_get(payload, "groups");
    char buf[OAUTH_GROUPS_MAX + 1];
    size_t o = 0;
    const char *one = json_string_value(g);
    size_t n = json_is_array(g) ? json_array_size(g) : one ? 1 : 0;
    for (size_t i = 0; i < n && i < 256; i++) {
        const char *v = one ? one : json_string_value(json_array_get(g, i));
        if (v == NULL)
            continue;
        /* a string claim: its words; an array: each item whole */
        while (*v) {
            const char *e = v;
            if (one) {
                while (*v == ' ')
                    v++;
                e = v;
                while (*e && *e != ' ')
                    e++;
            } else {
                e = v + strlen(v);
            }
            size_t len = (size_t)(e - v);
            bool clean = len > 0;
            for (size_t k = 0; k < len; k++)
                if ((unsigned char)v[k] < 0x20 || v[k] == 0x7f)
                    clean = false;
            if (clean && o + len + 1 <= OAUTH_GROUPS_MAX) {
                memcpy(buf + o, v, len);
                o += len;
                buf[o++] = '\n';
            }
            v = e;
            if (!one)
                break;
        }
    }
    if (o == 0)
        return NULL;
    buf[o] = 0;
    return mcpage__strdup(buf);
}

/* Verifies against the keys held, fetching them again once when the kid is unknown. */
static jwt_status verify_token(http_oauth *o, const char *tok, json_t **payload, bool *no_keys,
                               char *why, size_t cap)
{
    *no_keys = false;
    keys_refresh(o, false);
    for (int attempt = 0;; attempt++) {
        oauth_keys *k = keys_get(o);
        if (k == NULL) {
            *no_keys = true;
            jwt_say(why, cap, "the issuer's keys cannot be had right now; retry shortly");
            return JWT_ENOKEY;
        }
        jwt_status st = jwt_verify(&k->set, tok, payload, why, cap);
        keys_release(o, k);
        if (st != JWT_ENOKEY || attempt == 1)
            return st;
        keys_refresh(o, true); /* key rotation: the issuer may have a new key */
    }
}

oauth_verdict http_oauth_check(http_oauth *o, const char *authz, oauth_principal *p, char *why,
                               size_t cap)
{
    memset(p, 0, sizeof *p);
    if (authz == NULL || strncasecmp(authz, "Bearer ", 7) != 0) {
        jwt_say(why, cap, "send Authorization: Bearer TOKEN with an access token from %.300s",
                o->issuer);
        return OAUTH_NO_TOKEN;
    }
    const char *tok = authz + 7;
    while (*tok == ' ')
        tok++;
    json_t *payload = NULL;
    bool no_keys;
    jwt_status st = verify_token(o, tok, &payload, &no_keys, why, cap);
    if (no_keys)
        return OAUTH_UNAVAILABLE;
    if (st == JWT_OK) {
        jwt_expect ex = {.issuer = o->issuer,
                         .audience = o->resource,
                         .now = (int64_t)time(NULL),
                         .leeway_s = o->leeway_s};
        st = jwt_check_claims(payload, &ex, why, cap);
    }
    if (st != JWT_OK) {
        json_decref(payload);
        return OAUTH_BAD_TOKEN;
    }
    p->subject = mcpage__strdup(json_string_value(json_object_get(payload, "sub")));
    p->scopes = jwt_scopes(payload);
    p->groups = token_groups(payload);
    json_decref(payload);
    if (p->subject == NULL || p->scopes == NULL) {
        oauth_principal_clear(p);
        jwt_say(why, cap, "out of memory");
        return OAUTH_UNAVAILABLE;
    }
    if (!jwt_scopes_cover(p->scopes, o->scope)) {
        jwt_say(why, cap, "the token lacks the scope %.200s this server needs", o->scope);
        oauth_principal_clear(p);
        return OAUTH_SCOPE;
    }
    return OAUTH_PASS;
}

/* Appends `s` as the content of a quoted-string: no quotes, backslashes or controls. */
static void quoted_clean(char *out, size_t cap, const char *s)
{
    size_t o = strlen(out);
    for (; s && *s && o + 1 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        out[o++] = (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\') ? '\'' : (char)ch;
    }
    out[o] = '\0';
}

char *http_oauth_challenge(const http_oauth *o, const char *error, const char *desc,
                           const char *scope)
{
    char buf[2048] = "Bearer ";
    if (error) {
        (void)snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "error=\"%s\", ", error);
        if (desc) {
            strcat(buf, "error_description=\"");
            quoted_clean(buf, sizeof buf - 200, desc);
            strcat(buf, "\", ");
        }
    }
    if (scope) {
        strcat(buf, "scope=\"");
        quoted_clean(buf, sizeof buf - 100 - strlen(o->metadata_url), scope);
        strcat(buf, "\", ");
    }
    return strf("%sresource_metadata=\"%s\"", buf, o->metadata_url);
}
