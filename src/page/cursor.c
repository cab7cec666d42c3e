/*
 * Signed cursors (see <mcpage/cursor.h>) and the keyring that signs them.
 *
 * Wire form: "c2." followed by the unpadded URL-safe base64 of
 *
 *   version (1 byte, = 2; version 1 had a 4-byte tool hash and a 12-byte tag)
 *   kid (1 byte)
 *   tool hash (2 bytes: SHA-256 of the tool name; the tag covers the name's
 *              use, this only tells "another tool" from "damaged")
 *   args fingerprint (8 bytes)
 *   offset            varint
 *   total + 1         varint (total is -1 when unknown)
 *   generation        zigzag varint
 *   issued_at - 2023-11-14T22:13:20Z   zigzag varint (seconds)
 *   nparts (1 byte, 0 to 4), then each part:
 *     0x00 zigzag varint         an integer
 *     0x01 16 bytes              a canonical lowercase UUID string
 *     0x02 zigzag varint         an ISO-8601 UTC timestamp "YYYY-MM-DDTHH:MM:SS.mmmZ" (ms)
 *     0x03 zigzag varint         the same without milliseconds (s)
 *     0x04 varint length, bytes  any other string
 *   tag (8 bytes: HMAC-SHA256 of everything above, truncated to 64 bits;
 *        forging one takes about 2^63 calls to the server, see docs/contract.md)
 *
 * Varints are LEB128 and must be minimal, so every cursor has exactly one
 * encoding. Decoding checks, in order: the shape (malformed), the key id
 * (foreign key), the tag (damaged: malformed), the tool, the fingerprint,
 * the age. Nothing is trusted before the tag has been checked, and the
 * parser never reads past the bytes it was given.
 */
#include <mcpage/cursor.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/jw.h"
#include "page/seal.h"
#include "page/digest.h"

#define CURSOR_VERSION  2
#define CURSOR_PREFIX   "c2."
#define PREFIX_LEN      3
#define TOOL_HASH_LEN   2
#define TOOL_NAME_CACHE 64 /* a tool name this long or longer is hashed every time */
#define TAG_LEN         8
#define HEADER_LEN      (2 + TOOL_HASH_LEN + MCPAGE_FINGERPRINT_LEN)
#define EPOCH_BASE      INT64_C(1700000000)
#define MAX_PAYLOAD     300 /* bytes of payload + tag; base64 of it fits MAX_LEN */
#define KEYRING_MAX     8   /* keys held at once: the current one and older ones */
#define KEY_MIN         16
#define KEY_MAX         64
#define KEYFILE_MAX     1024 /* a key file larger than this is not a key file */
#define FINGERPRINT_MAX ((size_t)4 << 20)

enum part_tag { PART_INT = 0, PART_UUID = 1, PART_TS_MS = 2, PART_TS_S = 3, PART_STR = 4 };

typedef struct keyslot {
    uint8_t kid;          /* key id carried in the cursor */
    uint8_t len;          /* key length in bytes */
    uint8_t key[KEY_MAX]; /* key material */
    hmac_sha256_key mac;  /* HMAC-SHA256 keyed with it */
} keyslot;

struct mcpage_keyring {
    keyslot keys[KEYRING_MAX]; /* keys accepted for verification */
    int nkeys;                 /* slots in use */
    int current;               /* index of the signing key, or -1 */
    int64_t ttl;               /* seconds a cursor stays valid; 0 = forever */
};

/* ------------------------------------------------------------ keyring */

int mcpage_keyring_new(mcpage_keyring **out)
{
    if (out == NULL)
        return MCPAGE_EINVAL;
    *out = mcpage__calloc(1, sizeof **out);
    if (*out == NULL)
        return MCPAGE_ENOMEM;
    (*out)->current = -1;
    return MCPAGE_OK;
}

void mcpage_keyring_free(mcpage_keyring *kr)
{
    if (kr == NULL)
        return;
    mcpage__cleanse(kr, sizeof *kr);
    mcpage__free(kr);
}

int mcpage_keyring_add(mcpage_keyring *kr, uint8_t kid, const uint8_t *key, size_t len,
                       bool current)
{
    if (kr == NULL || key == NULL || len < KEY_MIN || len > KEY_MAX)
        return MCPAGE_EINVAL;
    for (int i = 0; i < kr->nkeys; i++)
        if (kr->keys[i].kid == kid)
            return MCPAGE_EEXIST;
    if (kr->nkeys == KEYRING_MAX)
        return MCPAGE_ERANGE;
    keyslot *k = &kr->keys[kr->nkeys];
    k->kid = kid;
    k->len = (uint8_t)len;
    memcpy(k->key, key, len);
    hmac_sha256_keyed(&k->mac, key, len);
    if (current || kr->current < 0)
        kr->current = kr->nkeys;
    kr->nkeys++;
    return MCPAGE_OK;
}

void mcpage_keyring_set_ttl(mcpage_keyring *kr, int64_t seconds)
{
    if (kr)
        kr->ttl = seconds > 0 ? seconds : 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes n hex digits (even, 32 to 128) into out; returns bytes or -1. */
static long hex_decode(const char *s, size_t n, uint8_t *out)
{
    if (n % 2 != 0 || n < 2 * KEY_MIN || n > 2 * KEY_MAX)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

/* The key id of a loaded key: derived from the key, so that keys from
   different servers usually differ in id and are told apart as foreign. */
static uint8_t derived_kid(const uint8_t *key, size_t len)
{
    uint8_t md[SHA256_LEN];
    sha256(key, len, md);
    return md[0];
}

/* Parses a key file's contents: hex text (whitespace around it allowed)
   or exactly 32 raw bytes. */
static long parse_key_file(const char *buf, size_t n, uint8_t *key)
{
    size_t a = 0, b = n;
    while (a < b && (buf[a] == ' ' || buf[a] == '\n' || buf[a] == '\r' || buf[a] == '\t'))
        a++;
    while (b > a &&
           (buf[b - 1] == ' ' || buf[b - 1] == '\n' || buf[b - 1] == '\r' || buf[b - 1] == '\t'))
        b--;
    long k = hex_decode(buf + a, b - a, key);
    if (k > 0)
        return k;
    if (n == 32) {
        memcpy(key, buf, 32);
        return 32;
    }
    return -1;
}

/* Reads the key file; MCPAGE_ENOTFOUND when it does not exist. */
static int read_key_file(const char *path, uint8_t *key, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
    char buf[KEYFILE_MAX + 1];
    size_t n = 0;
    int rc = MCPAGE_OK;
    for (;;) {
        ssize_t r = read(fd, buf + n, sizeof buf - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = MCPAGE_EIO;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == sizeof buf) {
            rc = MCPAGE_ERANGE; /* far too large to be a key */
            break;
        }
    }
    close(fd);
    if (rc == MCPAGE_OK) {
        long k = parse_key_file(buf, n, key);
        if (k < 0)
            rc = MCPAGE_EPARSE;
        else
            *len = (size_t)k;
    }
    mcpage__cleanse(buf, sizeof buf);
    return rc;
}

/* Creates each missing directory of `path`'s parent with mode 0700. */
static int make_parent_dirs(const char *path)
{
    size_t n = strlen(path);
    if (n >= 4096)
        return MCPAGE_ERANGE;
    char dir[4096];
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return MCPAGE_OK;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return MCPAGE_EIO;
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return MCPAGE_EIO;
    return MCPAGE_OK;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return MCPAGE_EIO;
        buf += w;
        n -= (size_t)w;
    }
    return MCPAGE_OK;
}

/*
 * Writes a new key as hex to `path`, mode 0600. It goes to a private
 * temporary file first and is linked into place, which fails if the file
 * appeared meanwhile: two instances starting together then agree on the
 * one that won (the caller rereads it).
 */
static int write_key_file(const char *path, const uint8_t *key, size_t len)
{
    int rc = make_parent_dirs(path);
    if (rc)
        return rc;
    char tmp[4200];
    int tn = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (tn < 0 || (size_t)tn >= sizeof tmp)
        return MCPAGE_ERANGE;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return MCPAGE_EIO;
    char hex[2 * KEY_MAX + 2];
    hex_encode(key, len, hex);
    hex[2 * len] = '\n';
    rc = write_all(fd, hex, 2 * len + 1);
    if (rc == MCPAGE_OK && fsync(fd) != 0)
        rc = MCPAGE_EIO;
    close(fd);
    mcpage__cleanse(hex, sizeof hex);
    if (rc == MCPAGE_OK && link(tmp, path) != 0)
        rc = errno == EEXIST ? MCPAGE_EEXIST : MCPAGE_EIO;
    unlink(tmp);
    return rc;
}

int mcpage_keyring_load(mcpage_keyring *kr, const char *env_var, const char *path)
{
    if (kr == NULL)
        return MCPAGE_EINVAL;
    uint8_t key[KEY_MAX];
    size_t len = 0;
    int rc;
    const char *env = env_var ? getenv(env_var) : NULL;
    if (env && *env) {
        long k = hex_decode(env, strlen(env), key);
        if (k < 0)
            return MCPAGE_EPARSE; /* set but not 32 to 128 hex digits: say so */
        len = (size_t)k;
    } else if (path == NULL) {
        len = 32;
        if (!mcpage__random(key, 32))
            return MCPAGE_ECRYPTO;
    } else {
        rc = read_key_file(path, key, &len);
        if (rc == MCPAGE_ENOTFOUND) {
            len = 32;
            if (!mcpage__random(key, 32))
                return MCPAGE_ECRYPTO;
            rc = write_key_file(path, key, len);
            if (rc == MCPAGE_EEXIST) /* another instance won the race: use its key */
                rc = read_key_file(path, key, &len);
        }
        if (rc)
            goto done;
    }
    rc = mcpage_keyring_add(kr, derived_kid(key, len), key, len, true);
done:
    mcpage__cleanse(key, sizeof key);
    return rc;
}

/* -------------------------------------------------------- fingerprint */

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool skipped(const char *key, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(key, *skip) == 0)
            return true;
    return false;
}

/* Writes v as canonical JSON: object keys sorted bytewise, compact. */
static void write_canonical(jw *w, const json_t *v, const char *const *skip)
{
    if (w->err)
        return;
    if (!json_is_object(v)) {
        if (json_is_array(v)) {
            size_t i;
            json_t *e;
            jw_array_begin(w);
            json_array_foreach(v, i, e) write_canonical(w, e, NULL);
            jw_array_end(w);
        } else {
            jw_json(w, v);
        }
        return;
    }
    size_t n = json_object_size(v);
    const char **keys = mcpage__calloc(n ? n : 1, sizeof *keys);
    if (keys == NULL) {
        w->err = MCPAGE_ENOMEM;
        return;
    }
    size_t k = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (!skipped(key, skip))
            keys[k++] = key;
    }
    qsort(keys, k, sizeof *keys, compare_keys);
    jw_object_begin(w);
    for (size_t i = 0; i < k; i++) {
        jw_key(w, keys[i]);
        write_canonical(w, json_object_get(v, keys[i]), NULL);
    }
    jw_object_end(w);
    mcpage__free(keys);
}

void mcpage_args_fingerprint(const json_t *args, const char *const *skip,
                             uint8_t out[MCPAGE_FINGERPRINT_LEN])
{
    jw w;
    jw_init(&w, FINGERPRINT_MAX);
    if (args == NULL || json_is_null(args))
        jw_raw_value(&w, "{}", 2);
    else
        write_canonical(&w, args, skip);
    uint8_t md[SHA256_LEN];
    if (w.err) {
        /* Too large or too deep to canonicalize: such calls all share one
           fingerprint, which only means their cursors are interchangeable. */
        char marker[32];
        int n = snprintf(marker, sizeof marker, "!unhashable:%d", w.err);
        sha256(marker, (size_t)n, md);
    } else {
        sha256(w.buf, w.len, md);
    }
    jw_free(&w);
    memcpy(out, md, MCPAGE_FINGERPRINT_LEN);
}

/* --------------------------------------------------------- byte codec */

typedef struct wbuf {
    uint8_t b[MAX_PAYLOAD]; /* bytes written */
    size_t n;               /* bytes in use */
    bool overflow;          /* a write did not fit */
} wbuf;

static void put_byte(wbuf *w, uint8_t v)
{
    if (w->n >= sizeof w->b) {
        w->overflow = true;
        return;
    }
    w->b[w->n++] = v;
}

static void put_bytes(wbuf *w, const void *p, size_t n)
{
    if (n > sizeof w->b - w->n) {
        w->overflow = true;
        return;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_varint(wbuf *w, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(w, (uint8_t)v);
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

typedef struct rbuf {
    const uint8_t *b; /* bytes to read */
    size_t n;         /* bytes available */
    size_t pos;       /* next byte */
    bool bad;         /* a read failed: short input or non-minimal varint */
} rbuf;

static uint8_t get_byte(rbuf *r)
{
    if (r->pos >= r->n) {
        r->bad = true;
        return 0;
    }
    return r->b[r->pos++];
}

static const uint8_t *get_bytes(rbuf *r, size_t n)
{
    if (n > r->n - r->pos) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->b + r->pos;
    r->pos += n;
    return p;
}

static uint64_t get_varint(rbuf *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t c = get_byte(r);
        if (r->bad)
            return 0;
        if (shift == 63 && c > 1) {
            r->bad = true; /* more than 64 bits */
            return 0;
        }
        v |= (uint64_t)(c & 0x7F) << shift;
        if ((c & 0x80) == 0) {
            if (c == 0 && shift > 0)
                r->bad = true; /* not minimal: one value, one encoding */
            return v;
        }
    }
    r->bad = true;
    return 0;
}

/* ------------------------------------------------ compact string forms */

static bool is_uuid(const char *s, size_t n)
{
    if (n != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

static void uuid_pack(const char *s, uint8_t out[16])
{
    size_t o = 0;
    for (size_t i = 0; i < 36; i++) {
        if (s[i] == '-')
            continue;
        unsigned v = (unsigned)hex_value(s[i]) & 15u; /* is_uuid checked every digit */
        if (o % 2 == 0)
            out[o / 2] = (uint8_t)(v << 4);
        else
            out[o / 2] = (uint8_t)(out[o / 2] | v);
        o++;
    }
}

static void uuid_unpack(const uint8_t in[16], char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = digits[in[i] >> 4];
        out[o++] = digits[in[i] & 15];
    }
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp + (mp < 10 ? 3 : -9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* The n decimal digits of 0 <= v < 10^n, zero-padded, at out. */
static void put_digits(char *out, int64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

/* Formats unit-count `v` (ms when `ms`, else s) as "YYYY-MM-DDTHH:MM:SS[.mmm]Z";
   returns the length, or 0 when the year is outside 0000-9999. */
static size_t ts_format(int64_t v, bool ms, char *out)
{
    int64_t frac = 0;
    if (ms) {
        frac = v % 1000;
        v /= 1000;
        if (frac < 0)
            frac += 1000, v -= 1;
    }
    int64_t days = v / 86400, sec = v % 86400;
    if (sec < 0)
        sec += 86400, days -= 1;
    int64_t y, mo, d;
    civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999)
        return 0;
    /* "YYYY-MM-DDTHH:MM:SS[.mmm]Z" by hand: snprintf cost a tenth of a
       cursor, and every first page signs one. */
    put_digits(out, y, 4);
    out[4] = '-';
    put_digits(out + 5, mo, 2);
    out[7] = '-';
    put_digits(out + 8, d, 2);
    out[10] = 'T';
    put_digits(out + 11, sec / 3600, 2);
    out[13] = ':';
    put_digits(out + 14, sec / 60 % 60, 2);
    out[16] = ':';
    put_digits(out + 17, sec % 60, 2);
    size_t n = 19;
    if (ms) {
        out[n++] = '.';
        put_digits(out + n, frac, 3);
        n += 3;
    }
    out[n++] = 'Z';
    out[n] = '\0';
    return n;
}

static bool digits_at(const char *s, size_t at, size_t n, int64_t *v)
{
    int64_t x = 0;
    for (size_t i = at; i < at + n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return true;
}

/*
 * Recognizes a UTC timestamp in exactly the canonical form ts_format
 * writes, so that packing it as a number loses nothing: the round trip
 * is checked byte for byte.
 */
static bool ts_parse(const char *s, size_t n, int64_t *v, bool *ms)
{
    if (n != 20 && n != 24)
        return false;
    int64_t y, mo, d, h, mi, se, fr = 0;
    if (!digits_at(s, 0, 4, &y) || s[4] != '-' || !digits_at(s, 5, 2, &mo) || s[7] != '-' ||
        !digits_at(s, 8, 2, &d) || s[10] != 'T' || !digits_at(s, 11, 2, &h) || s[13] != ':' ||
        !digits_at(s, 14, 2, &mi) || s[16] != ':' || !digits_at(s, 17, 2, &se) || s[n - 1] != 'Z')
        return false;
    if (n == 24 && (s[19] != '.' || !digits_at(s, 20, 3, &fr)))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59)
        return false;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    *ms = n == 24;
    *v = *ms ? secs * 1000 + fr : secs;
    char back[32];
    return ts_format(*v, *ms, back) == n && memcmp(back, s, n) == 0;
}

/* ------------------------------------------------------- encode/decode */

static void tool_hash(const char *tool, uint8_t out[TOOL_HASH_LEN])
{
    /* A thread's calls are mostly of one tool: its hash is remembered
       (a digest is a block or two of SHA-256, about 2k instructions). */
    static _Thread_local char last[TOOL_NAME_CACHE];
    static _Thread_local uint8_t last_hash[TOOL_HASH_LEN];
    size_t n = strlen(tool);
    if (n < sizeof last && last[0] && strcmp(last, tool) == 0) {
        memcpy(out, last_hash, TOOL_HASH_LEN);
        return;
    }
    uint8_t md[SHA256_LEN];
    sha256(tool, n, md);
    memcpy(out, md, TOOL_HASH_LEN);
    if (n < sizeof last) {
        memcpy(last, tool, n + 1);
        memcpy(last_hash, md, TOOL_HASH_LEN);
    }
}

static void compute_tag(const keyslot *k, const uint8_t *msg, size_t n, uint8_t tag[TAG_LEN])
{
    uint8_t md[SHA256_LEN];
    hmac_sha256(&k->mac, msg, n, md);
    memcpy(tag, md, TAG_LEN);
}

static void put_part(wbuf *w, const mcpage_keypart *p)
{
    if (!p->is_str) {
        put_byte(w, PART_INT);
        put_varint(w, zigzag(p->i));
        return;
    }
    int64_t ts;
    bool ms;
    if (is_uuid(p->s, p->len)) {
        uint8_t u[16];
        uuid_pack(p->s, u);
        put_byte(w, PART_UUID);
        put_bytes(w, u, 16);
    } else if (ts_parse(p->s, p->len, &ts, &ms)) {
        put_byte(w, ms ? PART_TS_MS : PART_TS_S);
        put_varint(w, zigzag(ts));
    } else {
        put_byte(w, PART_STR);
        put_varint(w, p->len);
        put_bytes(w, p->s, p->len);
    }
}

int mcpage_cursor_encode(const mcpage_keyring *kr, const char *tool,
                         const uint8_t fp[MCPAGE_FINGERPRINT_LEN], const mcpage_cursor *c,
                         char *out, size_t outcap)
{
    if (kr == NULL || tool == NULL || fp == NULL || c == NULL || out == NULL)
        return MCPAGE_EINVAL;
    if (kr->current < 0)
        return MCPAGE_ESTATE; /* no signing key loaded */
    if (c->nparts < 0 || c->nparts > MCPAGE_CURSOR_MAX_PARTS || c->offset < 0 || c->total < -1 ||
        c->total == INT64_MAX)
        return MCPAGE_EINVAL;
    const keyslot *k = &kr->keys[kr->current];
    int64_t issued = c->issued_at ? c->issued_at : (int64_t)time(NULL);
    if (issued < INT64_MIN / 2 + EPOCH_BASE || issued > INT64_MAX / 2)
        return MCPAGE_EINVAL;

    wbuf w = {.n = 0};
    put_byte(&w, CURSOR_VERSION);
    put_byte(&w, k->kid);
    uint8_t th[TOOL_HASH_LEN];
    tool_hash(tool, th);
    put_bytes(&w, th, TOOL_HASH_LEN);
    put_bytes(&w, fp, MCPAGE_FINGERPRINT_LEN);
    put_varint(&w, (uint64_t)c->offset);
    put_varint(&w, (uint64_t)(c->total + 1));
    put_varint(&w, zigzag(c->generation));
    put_varint(&w, zigzag(issued - EPOCH_BASE));
    put_byte(&w, (uint8_t)c->nparts);
    for (int i = 0; i < c->nparts; i++) {
        const mcpage_keypart *p = &c->parts[i];
        if (p->is_str && (p->len > MCPAGE_CURSOR_MAX_STR_BYTES || (p->s == NULL && p->len)))
            return MCPAGE_ERANGE;
        if (p->is_str && p->s == NULL) {
            mcpage_keypart empty = {.is_str = true, .s = "", .len = 0};
            put_part(&w, &empty);
        } else {
            put_part(&w, p);
        }
    }
    uint8_t tag[TAG_LEN];
    if (w.overflow || w.n + TAG_LEN > sizeof w.b)
        return MCPAGE_ERANGE;
    compute_tag(k, w.b, w.n, tag);
    put_bytes(&w, tag, TAG_LEN);

    size_t need = PREFIX_LEN + b64_encoded_len(w.n, true);
    if (need > MCPAGE_CURSOR_MAX_LEN)
        return MCPAGE_ERANGE;
    if (outcap < need + 1)
        return MCPAGE_ERANGE;
    memcpy(out, CURSOR_PREFIX, PREFIX_LEN);
    b64_encode(w.b, w.n, out + PREFIX_LEN, true);
    return (int)need;
}

static const keyslot *find_key(const mcpage_keyring *kr, uint8_t kid)
{
    for (int i = 0; i < kr->nkeys; i++)
        if (kr->keys[i].kid == kid)
            return &kr->keys[i];
    return NULL;
}

/* ------------------------------------------------------------ seals */

int mcpage__seal_kid(const mcpage_keyring *kr, uint8_t *kid)
{
    if (kr == NULL || kr->current < 0)
        return MCPAGE_ESTATE;
    *kid = kr->keys[kr->current].kid;
    return MCPAGE_OK;
}

int mcpage__seal_tag(const mcpage_keyring *kr, uint8_t kid, const char *purpose, const uint8_t *msg,
                     size_t n, uint8_t tag[SEAL_TAG_LEN])
{
    const keyslot *k = kr ? find_key(kr, kid) : NULL;
    if (k == NULL)
        return MCPAGE_ENOTFOUND;
    size_t plen = strlen(purpose) + 1; /* the NUL too: "ab" + "c.." never equals "a" + "bc.." */
    if (plen > SEAL_PURPOSE_MAX || n > SEAL_MSG_MAX)
        return MCPAGE_ERANGE;
    uint8_t buf[SEAL_PURPOSE_MAX + SEAL_MSG_MAX];
    memcpy(buf, purpose, plen);
    memcpy(buf + plen, msg, n);
    uint8_t md[SHA256_LEN];
    hmac_sha256(&k->mac, buf, plen + n, md);
    memcpy(tag, md, SEAL_TAG_LEN);
    mcpage__cleanse(md, sizeof md);
    return MCPAGE_OK;
}

seal_status mcpage__seal_check(const mcpage_keyring *kr, uint8_t kid, const char *purpose,
                               const uint8_t *msg, size_t n, const uint8_t tag[SEAL_TAG_LEN])
{
    uint8_t want[SEAL_TAG_LEN];
    int rc = mcpage__seal_tag(kr, kid, purpose, msg, n, want);
    if (rc == MCPAGE_ENOTFOUND)
        return SEAL_FOREIGN_KEY;
    if (rc != MCPAGE_OK || !mcpage__bytes_equal(want, tag, SEAL_TAG_LEN))
        return SEAL_BAD;
    return SEAL_VALID;
}

/* Reads one part into out->parts[i], its string bytes into storage. */
static void get_part(rbuf *r, mcpage_cursor *out, int i)
{
    mcpage_keypart *p = &out->parts[i];
    char *slot = out->storage_ + (size_t)i * MCPAGE_CURSOR_MAX_STR_BYTES;
    memset(p, 0, sizeof *p);
    uint8_t tagb = get_byte(r);
    if (r->bad)
        return;
    switch (tagb) {
    case PART_INT:
        p->i = unzigzag(get_varint(r));
        break;
    case PART_UUID: {
        const uint8_t *u = get_bytes(r, 16);
        if (u == NULL)
            return;
        uuid_unpack(u, slot);
        p->is_str = true;
        p->s = slot;
        p->len = 36;
        break;
    }
    case PART_TS_MS:
    case PART_TS_S: {
        int64_t v = unzigzag(get_varint(r));
        if (r->bad)
            return;
        char buf[32];
        size_t n = ts_format(v, tagb == PART_TS_MS, buf);
        if (n == 0) {
            r->bad = true;
            return;
        }
        memcpy(slot, buf, n);
        p->is_str = true;
        p->s = slot;
        p->len = n;
        break;
    }
    case PART_STR: {
        uint64_t n = get_varint(r);
        if (r->bad)
            return;
        if (n > MCPAGE_CURSOR_MAX_STR_BYTES) {
            r->bad = true;
            return;
        }
        const uint8_t *s = get_bytes(r, (size_t)n);
        if (s == NULL)
            return;
        memcpy(slot, s, (size_t)n);
        p->is_str = true;
        p->s = slot;
        p->len = (size_t)n;
        break;
    }
    default:
        r->bad = true;
        break;
    }
}

mcpage_cursor_status mcpage_cursor_decode(const mcpage_keyring *kr, const char *tool,
                                          const uint8_t fp[MCPAGE_FINGERPRINT_LEN],
                                          const char *text, size_t len, mcpage_cursor *out)
{
    if (kr == NULL || tool == NULL || fp == NULL || text == NULL || out == NULL)
        return MCPAGE_CURSOR_MALFORMED;
    if (len <= PREFIX_LEN || len > MCPAGE_CURSOR_MAX_LEN ||
        memcmp(text, CURSOR_PREFIX, PREFIX_LEN) != 0)
        return MCPAGE_CURSOR_MALFORMED;
    uint8_t raw[MCPAGE_CURSOR_MAX_LEN];
    long n = b64_decode(text + PREFIX_LEN, len - PREFIX_LEN, raw, true);
    if (n < HEADER_LEN + 5 + 1 + TAG_LEN)
        return MCPAGE_CURSOR_MALFORMED;

    /* Parse the shape first, trusting nothing, into a scratch cursor. */
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    rbuf r = {.b = raw, .n = (size_t)n - TAG_LEN, .pos = 0, .bad = false};
    uint8_t version = get_byte(&r);
    uint8_t kid = get_byte(&r);
    const uint8_t *th = get_bytes(&r, TOOL_HASH_LEN);
    const uint8_t *cfp = get_bytes(&r, MCPAGE_FINGERPRINT_LEN);
    uint64_t offset = get_varint(&r);
    uint64_t total1 = get_varint(&r);
    int64_t gen = unzigzag(get_varint(&r));
    int64_t issued = unzigzag(get_varint(&r));
    uint8_t nparts = get_byte(&r);
    if (r.bad || version != CURSOR_VERSION || nparts > MCPAGE_CURSOR_MAX_PARTS ||
        offset > (uint64_t)INT64_MAX || total1 > (uint64_t)INT64_MAX || issued > INT64_MAX / 2 ||
        issued < INT64_MIN / 2)
        return MCPAGE_CURSOR_MALFORMED;
    for (int i = 0; i < nparts && !r.bad; i++)
        get_part(&r, &c, i);
    if (r.bad || r.pos != r.n)
        return MCPAGE_CURSOR_MALFORMED;

    const keyslot *k = find_key(kr, kid);
    if (k == NULL)
        return MCPAGE_CURSOR_FOREIGN_KEY;
    uint8_t tag[TAG_LEN];
    compute_tag(k, raw, r.n, tag);
    if (!mcpage__bytes_equal(tag, raw + r.n, TAG_LEN))
        return MCPAGE_CURSOR_MALFORMED; /* damaged in transit, or forged */

    uint8_t want[TOOL_HASH_LEN];
    tool_hash(tool, want);
    if (memcmp(th, want, TOOL_HASH_LEN) != 0)
        return MCPAGE_CURSOR_OTHER_TOOL;
    if (memcmp(cfp, fp, MCPAGE_FINGERPRINT_LEN) != 0)
        return MCPAGE_CURSOR_OTHER_ARGS;
    issued += EPOCH_BASE;
    if (kr->ttl > 0) {
        int64_t now = (int64_t)time(NULL);
        if (now - issued > kr->ttl)
            return MCPAGE_CURSOR_EXPIRED;
    }

    c.nparts = nparts;
    c.offset = (int64_t)offset;
    c.total = (int64_t)total1 - 1;
    c.generation = gen;
    c.issued_at = issued;
    /* Copy into out, re-pointing string parts at out's own storage. */
    memcpy(out, &c, sizeof c);
    for (int i = 0; i < nparts; i++)
        if (out->parts[i].is_str)
            out->parts[i].s = out->storage_ + (size_t)i * MCPAGE_CURSOR_MAX_STR_BYTES;
    return MCPAGE_CURSOR_VALID;
}

const char *mcpage_cursor_status_text(mcpage_cursor_status s)
{
    switch (s) {
    case MCPAGE_CURSOR_VALID:
        return "The cursor is valid.";
    case MCPAGE_CURSOR_MALFORMED:
        return "The cursor is damaged or incomplete: pass next_cursor exactly as it was "
               "returned, or omit cursor to start from the beginning.";
    case MCPAGE_CURSOR_FOREIGN_KEY:
        return "The cursor was not signed by this server's current keys (issued by another "
               "server, or the key was rotated): omit cursor to start over.";
    case MCPAGE_CURSOR_OTHER_TOOL:
        return "The cursor was issued by another tool: use it only with the tool that "
               "returned it, or omit cursor to start over.";
    case MCPAGE_CURSOR_OTHER_ARGS:
        return "The cursor was issued for different arguments: pass the same query and "
               "filters with the cursor, or drop the cursor to start over.";
    case MCPAGE_CURSOR_EXPIRED:
        return "The cursor has expired: omit cursor to start over (offset resumes at a "
               "position without one).";
    }
    return "The cursor is invalid.";
}

const char *mcpage_cursor_status_name(mcpage_cursor_status s)
{
    switch (s) {
    case MCPAGE_CURSOR_VALID:
        return "valid";
    case MCPAGE_CURSOR_MALFORMED:
        return "malformed";
    case MCPAGE_CURSOR_FOREIGN_KEY:
        return "foreign_key";
    case MCPAGE_CURSOR_OTHER_TOOL:
        return "other_tool";
    case MCPAGE_CURSOR_OTHER_ARGS:
        return "other_args";
    case MCPAGE_CURSOR_EXPIRED:
        return "expired";
    }
    return "invalid";
}
