/*
 * How a stored raw chunk or message text is encoded (issue 35): plain,
 * one zstd frame (Debian's libzstd) with its content size and checksum,
 * or (long texts) several such frames after a table of their offsets. Both backends
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
/* Several zstd frames of STORE_CODEC_FRAME_TEXT bytes of text each (the
 * last one shorter), after a zstd skippable frame that holds their
 * offsets, so a window of a long text decodes only the frames it needs
 * (store_codec_window). The whole value is a valid zstd stream: a stock
 * decoder (`zstd -d`, ZSTD_decompress) skips the table and gives the
 * text. Layout, little-endian:
 *
 *   u32 0x184D2A50  skippable frame magic
 *   u32 8 + 4k      its payload's size
 *   u32 total       bytes of text
 *   u32 frame       bytes of text a frame (the last has the rest)
 *   u32 end[k]      k = ceil(total / frame): where frame i ends, from
 *                   the value's start (frame 0 starts after the table)
 *   k zstd frames, each with its content size and checksum
 */
#define STORE_CODEC_FRAMES 2
/* Text a frame: a snippet decodes one or two. A frame's decoding is
 * most of a rare word's snippet (zstd ~49,000 instructions a frame of
 * 2 KiB, 133,000 of 8 KiB, on generated tool output); 2 KiB frames
 * keep those texts 30% larger than 8 KiB ones (0.379 against 0.293 of
 * their text), frames of 32 KiB 1.8% smaller (docs/store.md, "Long
 * texts in frames"). The reader takes any size (the table says it). */
#define STORE_CODEC_FRAME_TEXT (2u << 10)
#define STORE_CODEC_LEVEL      3 /* zstd's default level: ~12x on transcripts at ~200 MB/s */
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
    unsigned char *rbuf;  /* frames read piece by piece (store_codec_window_read) */
    size_t rcap;          /* its size */
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
 * Like store_codec_pack, for a long text: STORE_CODEC_FRAMES of `frame`
 * bytes of text a frame when that is smaller, else plain.
 */
int store_codec_pack_frames(store_codec *c, const unsigned char *in, size_t n, size_t frame,
                            int *codec, const unsigned char **out, size_t *outn);

/*
 * Texts longer than this are kept as frames of STORE_CODEC_FRAME_TEXT
 * bytes (store_codec_pack_frames, schema version 14), not one frame: a
 * snippet deep in a long text reads a window of it by its token map and
 * decodes only the frame or two that hold it. One frame a text made the
 * rare-word search page 0.51 to 5.1 ms on a 157 MB generated archive
 * (every snippet decoded a whole long tool output); version 13 kept them
 * plain.
 */
#define STORE_CODEC_TEXT_WHOLE_MAX (64 * 1024)

/* A message's text as a store that packs texts keeps it (message_body):
 * one frame, or frames past STORE_CODEC_TEXT_WHOLE_MAX, or plain when that
 * is not smaller. Needs no store: a sync packs texts on its parse thread
 * (store_message_add_packed). */
int store_codec_pack_text(store_codec *c, const char *text, size_t n, int *codec,
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

/*
 * Bytes [from, from + want) of what stored bytes of `codec` decode to,
 * decoding only the frames that hold them (STORE_CODEC_FRAMES; the
 * other codecs are decoded whole): *out points at byte `from`, *outn
 * bytes are there (at least want, or up to the end; more when the last
 * frame decoded goes on), *total is the whole length (0 bytes when
 * `from` is at or past it). Frames not read are not checked. 0,
 * MCPAGE_EPARSE with *why, or MCPAGE_ENOMEM, as store_codec_unpack.
 */
int store_codec_window(store_codec *c, int codec, const unsigned char *in, size_t n, size_t max,
                       size_t from, size_t want, const unsigned char **out, size_t *outn,
                       size_t *total, const char **why);

/* Reads n bytes at `at` of a stored value into dst: 0, else not 0. */
typedef int (*store_codec_read_fn)(void *ud, size_t at, unsigned char *dst, size_t n);

/*
 * store_codec_window for a STORE_CODEC_FRAMES value of `n` bytes that is
 * read through `read` (SQLite's incremental blob I/O): only its table's
 * head and last end, the ends of the frames needed and those frames are
 * read. A read that fails: MCPAGE_EIO.
 */
int store_codec_window_read(store_codec *c, size_t n, store_codec_read_fn read, void *ud,
                            size_t max, size_t from, size_t want, const unsigned char **out,
                            size_t *outn, size_t *total, const char **why);

/* Frees what c holds (the struct itself is the caller's). */
void store_codec_free(store_codec *c);

#endif
