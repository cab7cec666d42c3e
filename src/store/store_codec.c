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

/* The writer's context, made on first use: level, checksum, content size. */
static int cctx_get(store_codec *c)
{
    if (c->cctx)
        return 0;
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
    return 0;
}

/* One frame of in[0..n) at dst (room for ZSTD_compressBound(n)): its size, or 0 without memory. */
static size_t frame_make(store_codec *c, unsigned char *dst, size_t room, const unsigned char *in,
                         size_t n)
{
    size_t z = ZSTD_compress2(c->cctx, dst, room, in, n);
    if (ZSTD_isError(z)) {
        /* only memory can fail here; the context is reset for the next call */
        ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
        return 0;
    }
    return z;
}

int store_codec_pack(store_codec *c, const unsigned char *in, size_t n, int *codec,
                     const unsigned char **out, size_t *outn)
{
    *codec = STORE_CODEC_PLAIN;
    *out = in;
    *outn = n;
    if (n < 64)
        return 0; /* a frame's header and checksum alone are 10+ bytes */
    if (cctx_get(c) < 0 || reserve(&c->zbuf, &c->zcap, ZSTD_compressBound(n)) < 0)
        return MCPAGE_ENOMEM;
    size_t z = frame_make(c, c->zbuf, c->zcap, in, n);
    if (!z)
        return MCPAGE_ENOMEM;
    if (z >= n)
        return 0; /* incompressible: kept plain */
    *codec = STORE_CODEC_ZSTD;
    *out = c->zbuf;
    *outn = z;
    return 0;
}

int store_codec_pack_text(store_codec *c, const char *text, size_t n, int *codec,
                          const unsigned char **out, size_t *outn)
{
    const unsigned char *in = (const unsigned char *)text;
    return n > STORE_CODEC_TEXT_WHOLE_MAX /* frames read by window */
               ? store_codec_pack_frames(c, in, n, STORE_CODEC_FRAME_TEXT, codec, out, outn)
               : store_codec_pack(c, in, n, codec, out, outn);
}

/* STORE_CODEC_FRAMES' table: a skippable frame's magic (store_codec.h). */
#define FRAMES_MAGIC 0x184D2A50u
#define FRAMES_HEAD  16 /* magic, payload size, total, frame; then the ends */

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, size_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

int store_codec_pack_frames(store_codec *c, const unsigned char *in, size_t n, size_t frame,
                            int *codec, const unsigned char **out, size_t *outn)
{
    *codec = STORE_CODEC_PLAIN;
    *out = in;
    *outn = n;
    if (n < 64 || frame == 0 || frame > STORE_CODEC_OUT_MAX || n > STORE_CODEC_OUT_MAX)
        return 0; /* (the writers keep texts far shorter) */
    size_t k = (n + frame - 1) / frame, head = FRAMES_HEAD + 4 * k;
    size_t bound = ZSTD_compressBound(frame < n ? frame : n);
    if (cctx_get(c) < 0 || reserve(&c->zbuf, &c->zcap, head + k * bound) < 0)
        return MCPAGE_ENOMEM;
    unsigned char *z = c->zbuf;
    wr32(z, FRAMES_MAGIC);
    wr32(z + 4, head - 8);
    wr32(z + 8, n);
    wr32(z + 12, frame);
    size_t at = head;
    for (size_t i = 0; i < k; i++) {
        size_t len = i + 1 < k ? frame : n - i * frame;
        size_t got = frame_make(c, z + at, c->zcap - at, in + i * frame, len);
        if (!got)
            return MCPAGE_ENOMEM;
        at += got;
        wr32(z + FRAMES_HEAD + 4 * i, at);
    }
    if (at >= n)
        return 0; /* incompressible: kept plain */
    *codec = STORE_CODEC_FRAMES;
    *out = z;
    *outn = at;
    return 0;
}

static int refuse(const char **why, const char *what)
{
    *why = what;
    return MCPAGE_EPARSE;
}

/* in[0..n) must be exactly one whole frame with its checksum, no
 * dictionary and a content size of at most `max`: *size gets it. */
static int frame_check(const unsigned char *in, size_t n, size_t max, size_t *size,
                       const char **why)
{
    /* magic, frame header descriptor: checksum flag (bit 2) set, no
     * dictionary id (bits 0-1), reserved bit 3 clear */
    if (n < 9 || memcmp(in, zmagic, 4) != 0)
        return refuse(why, "not a zstd frame");
    if (!(in[4] & 0x04) || (in[4] & 0x03) || (in[4] & 0x08))
        return refuse(why, "a zstd frame without its checksum, or with a dictionary");
    unsigned long long got = ZSTD_getFrameContentSize(in, n);
    if (got == ZSTD_CONTENTSIZE_UNKNOWN || got == ZSTD_CONTENTSIZE_ERROR)
        return refuse(why, "a zstd frame without a readable content size");
    if (got > max)
        return refuse(why, "a zstd frame that inflates past the size a chunk may have");
    size_t whole = ZSTD_findFrameCompressedSize(in, n);
    if (ZSTD_isError(whole) || whole != n)
        return refuse(why, "not exactly one whole zstd frame");
    *size = (size_t)got;
    return 0;
}

/* Inflates a checked frame of content size `size` into dst. */
static int frame_inflate(store_codec *c, const unsigned char *in, size_t n, unsigned char *dst,
                         size_t size, const char **why)
{
    if (!c->dctx && !(c->dctx = ZSTD_createDCtx()))
        return MCPAGE_ENOMEM;
    size_t got = ZSTD_decompressDCtx(c->dctx, dst, size, in, n);
    if (ZSTD_isError(got)) {
        *why = ZSTD_getErrorName(got); /* a static string: checksum wrong, corrupted, ... */
        return MCPAGE_EPARSE;
    }
    if (got != size)
        return refuse(why, "a zstd frame shorter than its content size");
    return 0;
}

/* A STORE_CODEC_FRAMES value: in memory, or read piece by piece; its
 * table's head checked against the value's size. */
typedef struct frames {
    store_codec *c;
    const unsigned char *in; /* the value, or NULL: read through `read` */
    store_codec_read_fn read;
    void *ud;
    size_t n;     /* the value's size */
    size_t total; /* bytes of text */
    size_t frame; /* bytes of text a frame */
    size_t k;     /* frames */
} frames;

/* Bytes [at, at + len) of f's value: *p points at them (in the value, in
 * `small` when given, else in c->rbuf). */
static int frames_fetch(frames *f, size_t at, size_t len, unsigned char *small,
                        const unsigned char **p, const char **why)
{
    if (at > f->n || len > f->n - at)
        return refuse(why, "zstd frames out of order");
    if (f->in) {
        *p = f->in + at;
        return 0;
    }
    if (!small) {
        if (reserve(&f->c->rbuf, &f->c->rcap, len) < 0)
            return MCPAGE_ENOMEM;
        small = f->c->rbuf;
    }
    if (f->read(f->ud, at, small, len) != 0) {
        *why = "the stored value could not be read";
        return MCPAGE_EIO;
    }
    *p = small;
    return 0;
}

static int frames_table(frames *f, size_t max, const char **why)
{
    unsigned char head[FRAMES_HEAD], last[8];
    const unsigned char *h = NULL, *e = NULL;
    if (f->n < FRAMES_HEAD + 4)
        return refuse(why, "not a table of zstd frames");
    int rc = frames_fetch(f, 0, FRAMES_HEAD, head, &h, why);
    if (rc < 0)
        return rc;
    if (rd32(h) != FRAMES_MAGIC)
        return refuse(why, "not a table of zstd frames");
    size_t pay = rd32(h + 4);
    if (pay < FRAMES_HEAD - 4 || (pay - 8) % 4 || pay > f->n - 8)
        return refuse(why, "a table of zstd frames of a wrong size");
    f->total = rd32(h + 8);
    f->frame = rd32(h + 12);
    f->k = (pay - 8) / 4;
    if (f->total > max)
        return refuse(why, "frames that inflate past the size a text may have");
    if (!f->total || !f->frame || (f->total + f->frame - 1) / f->frame != f->k)
        return refuse(why, "a table of zstd frames that does not match its frames");
    /* the last frame ends the value, and its header says the size the
     * table's total leaves it (a window that does not read it still
     * answers the text's true length) */
    size_t at = FRAMES_HEAD + 4 * (f->k > 1 ? f->k - 2 : f->k - 1);
    if ((rc = frames_fetch(f, at, f->k > 1 ? 8 : 4, last, &e, why)) < 0)
        return rc;
    size_t a = f->k > 1 ? rd32(e) : FRAMES_HEAD + 4 * f->k, b = rd32(e + (f->k > 1 ? 4 : 0));
    if (b != f->n || a >= b)
        return refuse(why, "a table of zstd frames that does not match its frames");
    unsigned char fh[18]; /* a frame header at most (ZSTD_FRAMEHEADERSIZE_MAX) */
    const unsigned char *z = NULL;
    size_t fhn = b - a < sizeof fh ? b - a : sizeof fh;
    if ((rc = frames_fetch(f, a, fhn, fh, &z, why)) < 0)
        return rc;
    if (ZSTD_getFrameContentSize(z, fhn) != f->total - (f->k - 1) * f->frame)
        return refuse(why, "a table of zstd frames that does not match its frames");
    return 0;
}

/* Frame i of f checked and inflated into dst (room for f->frame bytes): *size gets its length. */
static int frames_inflate(frames *f, size_t i, unsigned char *dst, size_t *size, const char **why)
{
    unsigned char ends[8];
    const unsigned char *e = NULL, *z = NULL;
    int rc = frames_fetch(f, FRAMES_HEAD + 4 * (i ? i - 1 : 0), i ? 8 : 4, ends, &e, why);
    if (rc < 0)
        return rc;
    size_t a = i ? rd32(e) : FRAMES_HEAD + 4 * f->k, b = rd32(e + (i ? 4 : 0));
    size_t want = i + 1 < f->k ? f->frame : f->total - i * f->frame, got = 0;
    if (a >= b)
        return refuse(why, "zstd frames out of order");
    if ((rc = frames_fetch(f, a, b - a, NULL, &z, why)) < 0)
        return rc;
    rc = frame_check(z, b - a, want, &got, why);
    if (rc == 0 && got != want)
        rc = refuse(why, "a zstd frame of another size than its table says");
    if (rc == 0)
        rc = frame_inflate(f->c, z, b - a, dst, want, why);
    *size = want;
    return rc;
}

/* Frames [i0, i1] of f into c->plain: *len bytes. */
static int frames_read(frames *f, size_t i0, size_t i1, size_t *len, const char **why)
{
    store_codec *c = f->c;
    size_t room = (i1 - i0 + 1) * f->frame;
    if (room > f->total - i0 * f->frame)
        room = f->total - i0 * f->frame;
    c->keylen = 0; /* the cache is being overwritten */
    if (reserve(&c->plain, &c->plaincap, room) < 0)
        return MCPAGE_ENOMEM;
    *len = 0;
    for (size_t i = i0; i <= i1; i++) {
        size_t got = 0;
        int rc = frames_inflate(f, i, c->plain + *len, &got, why);
        if (rc < 0)
            return rc;
        *len += got;
    }
    return 0;
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
    if (codec != STORE_CODEC_ZSTD && codec != STORE_CODEC_FRAMES)
        return refuse(why, "an unknown codec (written by a newer mcpage?)");
    if (c->keylen && c->keylen == n && memcmp(c->key, in, n) == 0) {
        *out = c->plain;
        *outn = c->plainlen;
        return 0;
    }
    size_t size = 0;
    int rc;
    if (codec == STORE_CODEC_FRAMES) {
        frames f = {.c = c, .in = in, .n = n};
        if ((rc = frames_table(&f, max, why)) < 0 ||
            (rc = frames_read(&f, 0, f.k - 1, &size, why)) < 0)
            return rc;
    } else {
        if ((rc = frame_check(in, n, max, &size, why)) < 0)
            return rc;
        c->keylen = 0; /* the cache is being overwritten */
        if (reserve(&c->plain, &c->plaincap, size) < 0)
            return MCPAGE_ENOMEM;
        if ((rc = frame_inflate(c, in, n, c->plain, size, why)) < 0)
            return rc;
    }
    if (reserve(&c->key, &c->keycap, n) < 0)
        return MCPAGE_ENOMEM;
    memcpy(c->key, in, n);
    c->keylen = n;
    c->plainlen = size;
    *out = c->plain;
    *outn = size;
    return 0;
}

/* Bytes [from, from + want) of f's text, decoding the frames that hold them. */
static int frames_window(frames *f, size_t max, size_t from, size_t want, const unsigned char **out,
                         size_t *outn, size_t *total, const char **why)
{
    *out = f->in ? f->in : (const unsigned char *)"";
    *outn = 0;
    *total = 0;
    *why = "";
    int rc = frames_table(f, max, why);
    if (rc < 0)
        return rc;
    *total = f->total;
    if (from >= f->total)
        return 0;
    size_t last = want && want - 1 < f->total - from ? from + want - 1 : f->total - 1, len = 0;
    size_t i0 = from / f->frame;
    if ((rc = frames_read(f, i0, last / f->frame, &len, why)) < 0)
        return rc;
    *out = f->c->plain + (from - i0 * f->frame);
    *outn = len - (from - i0 * f->frame);
    return 0;
}

int store_codec_window(store_codec *c, int codec, const unsigned char *in, size_t n, size_t max,
                       size_t from, size_t want, const unsigned char **out, size_t *outn,
                       size_t *total, const char **why)
{
    if (codec != STORE_CODEC_FRAMES) {
        *total = 0;
        int rc = store_codec_unpack(c, codec, in, n, max, out, outn, why);
        if (rc < 0)
            return rc;
        *total = *outn;
        from = from < *outn ? from : *outn;
        *out += from;
        *outn -= from;
        return 0;
    }
    frames f = {.c = c, .in = in, .n = n};
    return frames_window(&f, max, from, want, out, outn, total, why);
}

int store_codec_window_read(store_codec *c, size_t n, store_codec_read_fn read, void *ud,
                            size_t max, size_t from, size_t want, const unsigned char **out,
                            size_t *outn, size_t *total, const char **why)
{
    frames f = {.c = c, .read = read, .ud = ud, .n = n};
    return frames_window(&f, max, from, want, out, outn, total, why);
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
    free(c->rbuf);
    memset(c, 0, sizeof *c);
}

/* ---- store_packer (store.h): store_codec_pack_text on its own codec ---- */

struct store_packer {
    store_codec codec;
};

store_packer *store_packer_new(void)
{
    return calloc(1, sizeof(store_packer));
}

void store_packer_free(store_packer *p)
{
    if (!p)
        return;
    store_codec_free(&p->codec);
    free(p);
}

int store_text_pack(store_packer *p, const char *text, size_t n, store_text_packed *out)
{
    return store_codec_pack_text(&p->codec, text, n, &out->codec, &out->bytes, &out->n);
}

int store_raw_pack(store_packer *p, const unsigned char *data, size_t n, store_raw_packed *out)
{
    if (n > STORE_RAW_CHUNK || (!data && n))
        return MCPAGE_EINVAL;
    out->raw_n = n;
    return store_codec_pack(&p->codec, data, n, &out->codec, &out->bytes, &out->n);
}
