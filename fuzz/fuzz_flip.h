/*
 * Shared by the frame fuzz targets (fuzz_raw_frame, fuzz_text_frame): one
 * flipped bit of a zstd frame, or of a text's frames and their table, is
 * either refused or read as the very bytes packed, never as other bytes.
 */
#ifndef MCPAGE_FUZZ_FLIP_H
#define MCPAGE_FUZZ_FLIP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"

/* Decodes (codec, in, n): 1 with *out, *outn for bytes, 0 when refused as
 * damaged; aborts on anything else. The output lives until the next call. */
typedef int (*fuzz_decode_fn)(void *ud, int codec, const unsigned char *in, size_t n,
                              const unsigned char **out, size_t *outn);

/* store_codec_read_fn over a value in memory: ud is {value, its size}. */
static inline int fuzz_value_read(void *ud, size_t at, unsigned char *dst, size_t n)
{
    const unsigned char **v = ud;
    size_t vn = (size_t)(v[1] - v[0]);
    if (at > vn || n > vn - at)
        abort(); /* a read past the value's size, which store_codec_window_read was given */
    memcpy(dst, v[0] + at, n);
    return 0;
}

/* Frames of v read through store_codec_window_read one at a time, as a
 * snippet reads them (sqlite_snippet.c), from `from` until `want` bytes
 * or the end: refused, or the very bytes of plain[0..n) there. */
static inline void fuzz_frames_check(const unsigned char *v, size_t vn, const unsigned char *plain,
                                     size_t n, size_t from, size_t want)
{
    store_codec w = {0};
    const unsigned char *ends[2] = {v, v + vn}, *out = NULL;
    size_t have = 0, outn = 0, total = 0;
    const char *why = NULL;
    while (have < want &&
           store_codec_window_read(&w, vn, fuzz_value_read, ends, STORE_CODEC_OUT_MAX, from + have,
                                   1, &out, &outn, &total, &why) == 0) {
        size_t at = from + have;
        if (total != n ||
            (at < n ? outn == 0 || outn > n - at || memcmp(out, plain + at, outn) != 0 : outn != 0))
            abort(); /* a frame read as other bytes */
        if (outn == 0)
            break;
        have += outn;
    }
    store_codec_free(&w);
}

/* A window [from, from + want) of `v` read alone (store_codec_window, and
 * frame by frame through store_codec_window_read) is refused or the very
 * bytes of plain[0..n) there; aborts otherwise. */
static inline void fuzz_window_check(int codec, const unsigned char *v, size_t vn,
                                     const unsigned char *plain, size_t n, size_t from, size_t want)
{
    store_codec w = {0};
    const unsigned char *out = NULL;
    size_t outn = 0, total = 0;
    const char *why = NULL;
    if (store_codec_window(&w, codec, v, vn, STORE_CODEC_OUT_MAX, from, want, &out, &outn, &total,
                           &why) == 0) {
        size_t end = from + want < n ? from + want : n;
        if (total != n ||
            (from < n &&
             (outn < end - from || outn > n - from || memcmp(out, plain + from, outn) != 0)) ||
            (from >= n && outn != 0))
            abort(); /* a window read as other bytes */
    }
    store_codec_free(&w);
    if (codec == STORE_CODEC_FRAMES)
        fuzz_frames_check(v, vn, plain, n, from, want);
}

/*
 * data[3..size) packed as the store's writers pack it (one frame, or
 * frames of `frame` bytes of text when `frame` is not 0); when that gives
 * zstd frames, the bit data[2] & 7 of its byte ((data[1] << 8 | data[2])
 * % their size) is flipped: decoded, they are refused or give the bytes
 * packed, and so is a window of them read alone (from byte data[1] *
 * 37 % n, data[2] + 1 bytes); flipped back, they read back whole. Aborts
 * otherwise.
 */
static inline void fuzz_flip_check(const uint8_t *data, size_t size, fuzz_decode_fn decode,
                                   void *ud, size_t frame)
{
    if (size < 3)
        return;
    size_t n = size - 3;
    const unsigned char *plain = data + 3, *packed = NULL, *out = NULL;
    size_t pn = 0, outn = 0;
    store_codec c = {0};
    int codec = 0;
    int rc = frame ? store_codec_pack_frames(&c, plain, n, frame, &codec, &packed, &pn)
                   : store_codec_pack(&c, plain, n, &codec, &packed, &pn);
    if (rc == 0 && codec != STORE_CODEC_PLAIN) {
        unsigned char *frames = malloc(pn);
        if (frames) {
            memcpy(frames, packed, pn);
            size_t at = ((size_t)data[1] << 8 | data[2]) % pn;
            unsigned char bit = (unsigned char)(1u << (data[2] & 7));
            size_t from = n ? (size_t)data[1] * 37 % n : 0, want = (size_t)data[2] + 1;
            frames[at] ^= bit;
            if (decode(ud, codec, frames, pn, &out, &outn) && (outn != n || memcmp(out, plain, n)))
                abort(); /* damage read as other bytes */
            fuzz_window_check(codec, frames, pn, plain, n, from, want);
            frames[at] ^= bit;
            if (!decode(ud, codec, frames, pn, &out, &outn) || outn != n || memcmp(out, plain, n))
                abort(); /* whole, it reads back */
            fuzz_window_check(codec, frames, pn, plain, n, from, want);
            free(frames);
        }
    }
    store_codec_free(&c);
}

#endif
