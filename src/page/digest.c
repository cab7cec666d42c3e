/*
 * SHA-256 from FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 6.2), HMAC from
 * RFC 2104, MD5 from RFC 1321. tests/unit/test_digest.c checks the three
 * against the standards' own examples and against libcrypto on every
 * length from 0 to 300 bytes, whole and in pieces.
 */
#include "page/digest.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the state. */
static void block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 =
            k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void sha256_init(sha256_ctx *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->bytes = 0;
    c->fill = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->bytes += n;
    if (c->fill) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->buf + c->fill, p, take);
        c->fill += take, p += take, n -= take;
        if (c->fill < 64)
            return;
        block(c->h, c->buf);
        c->fill = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        block(c->h, p);
    memcpy(c->buf, p, n);
    c->fill = n;
}

void sha256_final(sha256_ctx *c, uint8_t md[SHA256_LEN])
{
    uint64_t bits = c->bytes * 8;
    c->buf[c->fill++] = 0x80;
    if (c->fill > 56) {
        memset(c->buf + c->fill, 0, 64 - c->fill);
        block(c->h, c->buf);
        c->fill = 0;
    }
    memset(c->buf + c->fill, 0, 56 - c->fill);
    for (int i = 0; i < 8; i++)
        c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    block(c->h, c->buf);
    for (int i = 0; i < 8; i++) {
        md[4 * i] = (uint8_t)(c->h[i] >> 24);
        md[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        md[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        md[4 * i + 3] = (uint8_t)c->h[i];
    }
    mcpage__cleanse(c, sizeof *c);
}

void sha256(const void *data, size_t n, uint8_t md[SHA256_LEN])
{
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, data, n);
    sha256_final(&c, md);
}

void hmac_sha256_keyed(hmac_sha256_key *k, const void *key, size_t len)
{
    uint8_t pad[64] = {0};
    if (len > sizeof pad)
        sha256(key, len, pad);
    else if (len)
        memcpy(pad, key, len);
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] ^= 0x36;
    sha256_init(&k->inner);
    sha256_update(&k->inner, pad, sizeof pad);
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] ^= 0x36 ^ 0x5c;
    sha256_init(&k->outer);
    sha256_update(&k->outer, pad, sizeof pad);
    mcpage__cleanse(pad, sizeof pad);
}

void hmac_sha256(const hmac_sha256_key *k, const void *msg, size_t n, uint8_t md[SHA256_LEN])
{
    sha256_ctx c = k->inner;
    uint8_t in[SHA256_LEN];
    sha256_update(&c, msg, n);
    sha256_final(&c, in);
    c = k->outer;
    sha256_update(&c, in, sizeof in);
    sha256_final(&c, md);
    mcpage__cleanse(in, sizeof in);
}

/* ---- MD5 ---- */

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

/* One 64-byte block into the MD5 state (RFC 1321, section 3.4). */
static void md5_block(uint32_t h[4], const uint8_t *p)
{
    static const uint32_t T[64] = {
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
        0xeb86d391};
    static const int S[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
    uint32_t x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 64; i++) {
        int round = i / 16, k;
        uint32_t f;
        if (round == 0)
            f = (b & c) | (~b & d), k = i;
        else if (round == 1)
            f = (b & d) | (c & ~d), k = (5 * i + 1) % 16;
        else if (round == 2)
            f = b ^ c ^ d, k = (3 * i + 5) % 16;
        else
            f = c ^ (b | ~d), k = (7 * i) % 16;
        uint32_t t = d;
        d = c;
        c = b;
        b = b + rol(a + f + T[i] + x[k], S[round][i % 4]);
        a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d;
}

void md5(const void *data, size_t n, uint8_t md[MD5_LEN])
{
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    const uint8_t *p = data;
    uint64_t bits = (uint64_t)n * 8;
    for (; n >= 64; p += 64, n -= 64)
        md5_block(h, p);
    uint8_t last[128] = {0};
    memcpy(last, p, n);
    last[n] = 0x80;
    size_t end = n + 1 + 8 <= 64 ? 64 : 128;
    for (size_t i = 0; i < 8; i++)
        last[end - 8 + i] = (uint8_t)(bits >> (8 * i));
    md5_block(h, last);
    if (end == 128)
        md5_block(h, last + 64);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            md[4 * i + j] = (uint8_t)(h[i] >> (8 * j));
}

/* ---- the rest ---- */

bool mcpage__bytes_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

bool mcpage__random(void *out, size_t n)
{
    uint8_t *p = out;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += got, n -= (size_t)got;
    }
    return true;
}

void mcpage__cleanse(void *p, size_t n)
{
    explicit_bzero(p, n);
}
