/*
 * Raw chunk encoding (store_codec.h): zstd frames written with their
 * content size and a checksum, read back only when they are exactly one
 * such frame of a bounded size whose checksum holds.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "store/store.h"
#include "store/store_codec.h"

/* A frame's first bytes: the magic number, little-endian. */
static const unsigned char zmagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

/* Grows *buf to at least `want` bytes (contents not kept). */
static int reserve(unsigned char **buf, size_t *cap, size_t want)
{
    if (*cap >= want && *buf)
        return 0;
    unsigned char *g = malloc(want ? want : 1);
    if (!g)
        return MCPAGE_ENOMEM;
    free(*buf);
    *buf = g;
    *cap = want;
    return 0;
}

int store_codec_pack(store_codec *c, const unsigned char *in, size_t n, int *codec,
                     const unsigned char **out, size_t *outn)
{
    *codec = STORE_CODEC_PLAIN;
    *out = in;
    *outn = n;
    if (n < 64)
        return 0; /* a frame's header and checksum alone are 10+ bytes */
    if (!c->cctx) {
        ZSTD_CCtx *z = ZSTD_createCCtx();
        if (!z)
            return MCPAGE_ENOMEM;
        if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, STORE_CODEC_LEVEL)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 1))) {
            ZSTD_freeCCtx(z);
            return MCPAGE_ENOMEM;
        }
        c->cctx = z;
    }
    size_t bound = ZSTD_compressBound(n);
    if (reserve(&c->zbuf, &c->zcap, bound) < 0)
        return MCPAGE_ENOMEM;
    size_t z = ZSTD_compress2(c->cctx, c->zbuf, c->zcap, in, n);
    if (ZSTD_isError(z)) {
        /* only memory can fail here; the context is reset for the next call */
        ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
        return MCPAGE_ENOMEM;
    }
    if (z >= n)
        return 0; /* incompressible: kept plain */
    *codec = STORE_CODEC_ZSTD;
    *out = c->zbuf;
    *outn = z;
    return 0;
}

static int refuse(const char **why, const char *what)
{
    *why = what;
    return MCPAGE_EPARSE;
}

int store_codec_unpack(store_codec *c, int codec, const unsigned char *in, size_t n, size_t max,
                       const unsigned char **out, size_t *outn, const char **why)
{
    *out = NULL;
    *outn = 0;
    *why = "";
    if (codec == STORE_CODEC_PLAIN) {
        if (n > max)
            return refuse(why, "a plain chunk past the size a chunk may have");
        *out = in;
        *outn = n;
        return 0;
    }
    if (codec != STORE_CODEC_ZSTD)
        return refuse(why, "an unknown codec (written by a newer mcpage?)");
    if (c->keylen && c->keylen == n && memcmp(c->key, in, n) == 0) {
        *out = c->plain;
        *outn = c->plainlen;
        return 0;
    }
    /* magic, frame header descriptor: checksum flag (bit 2) set, no
     * dictionary id (bits 0-1), reserved bit 3 clear */
    if (n < 9 || memcmp(in, zmagic, 4) != 0)
        return refuse(why, "not a zstd frame");
    if (!(in[4] & 0x04) || (in[4] & 0x03) || (in[4] & 0x08))
        return refuse(why, "a zstd frame without its checksum, or with a dictionary");
    unsigned long long size = ZSTD_getFrameContentSize(in, n);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR)
        return refuse(why, "a zstd frame without a readable content size");
    if (size > max)
        return refuse(why, "a zstd frame that inflates past the size a chunk may have");
    size_t whole = ZSTD_findFrameCompressedSize(in, n);
    if (ZSTD_isError(whole) || whole != n)
        return refuse(why, "not exactly one whole zstd frame");
    if (!c->dctx && !(c->dctx = ZSTD_createDCtx()))
        return MCPAGE_ENOMEM;
    if (reserve(&c->plain, &c->plaincap, (size_t)size) < 0 || reserve(&c->key, &c->keycap, n) < 0) {
        c->keylen = 0;
        return MCPAGE_ENOMEM;
    }
    c->keylen = 0; /* the cache is being overwritten */
    size_t got = ZSTD_decompressDCtx(c->dctx, c->plain, (size_t)size, in, n);
    if (ZSTD_isError(got)) {
        *why = ZSTD_getErrorName(got); /* a static string: checksum wrong, corrupted, ... */
        return MCPAGE_EPARSE;
    }
    if (got != size)
        return refuse(why, "a zstd frame shorter than its content size");
    memcpy(c->key, in, n);
    c->keylen = n;
    c->plainlen = got;
    *out = c->plain;
    *outn = got;
    return 0;
}

void store_codec_free(store_codec *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    free(c->zbuf);
    free(c->key);
    free(c->plain);
    memset(c, 0, sizeof *c);
}
