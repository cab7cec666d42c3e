/*
 * How a stored raw chunk is encoded (issue 35): plain, or one zstd frame
 * (Debian's libzstd) with its content size and checksum. Both backends
 * write a chunk through store_codec_pack and read it through
 * store_codec_unpack, whose output is bounded: a frame that says it
 * inflates past the caller's cap, or does, is refused, so a damaged or
 * hostile row costs at most that much memory (a "zstd bomb" cannot).
 * A damaged frame is refused (its checksum, its sizes), never read as
 * other bytes. No database header here; internal to src/store/.
 */
#ifndef MCPAGE_STORE_CODEC_H
#define MCPAGE_STORE_CODEC_H

#include <stddef.h>

#define STORE_CODEC_PLAIN 0 /* the bytes as the transcript had them */
#define STORE_CODEC_ZSTD  1 /* one zstd frame: content size and checksum set */
#define STORE_CODEC_LEVEL 3 /* zstd's default level: ~12x on transcripts at ~200 MB/s */
/* Bytes one chunk may inflate to when read (the writers store 1 MiB). */
#define STORE_CODEC_OUT_MAX (64u << 20)

/*
 * A handle's codec state, kept between calls: the zstd contexts (made on
 * first use) and the last chunk decoded, so reading a chunk window by
 * window (read_raw's 8 KB pages of a 1 MiB chunk) inflates it once.
 */
typedef struct store_codec {
    void *cctx;           /* ZSTD_CCtx, writers only */
    void *dctx;           /* ZSTD_DCtx */
    unsigned char *zbuf;  /* store_codec_pack's output */
    size_t zcap;          /* its size */
    unsigned char *key;   /* the stored bytes last decoded */
    size_t keylen;        /* their length */
    size_t keycap;        /* key's allocation */
    unsigned char *plain; /* what they decoded to */
    size_t plainlen;      /* its length */
    size_t plaincap;      /* plain's allocation */
} store_codec;

/*
 * Encodes `n` bytes for storage: *codec and the bytes to store (*out,
 * *outn), which are the input itself (STORE_CODEC_PLAIN) when a frame
 * would not be smaller, else the frame in c's buffer (valid until the
 * next call). 0 or MCPAGE_ENOMEM.
 */
int store_codec_pack(store_codec *c, const unsigned char *in, size_t n, int *codec,
                     const unsigned char **out, size_t *outn);

/*
 * Decodes stored bytes of `codec` into at most `max` bytes: *out (valid
 * until the next call on c, or `in` itself for a plain chunk) and *outn.
 * 0; MCPAGE_EPARSE with *why saying what is wrong (an unknown codec, not
 * one whole frame, no checksum, a dictionary, a size past `max`, the
 * checksum or sizes not matching); MCPAGE_ENOMEM.
 */
int store_codec_unpack(store_codec *c, int codec, const unsigned char *in, size_t n, size_t max,
                       const unsigned char **out, size_t *outn, const char **why);

/* Frees what c holds (the struct itself is the caller's). */
void store_codec_free(store_codec *c);

#endif
