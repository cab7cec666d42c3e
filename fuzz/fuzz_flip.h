/*
 * Shared by the frame fuzz targets (fuzz_raw_frame, fuzz_text_frame): one
 * flipped bit of a zstd frame is either refused or read as the very bytes
 * packed, never as other bytes.
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

/*
 * data[3..size) packed as the store's writers pack it; when that gives a
 * zstd frame, the bit data[2] & 7 of its byte ((data[1] << 8 | data[2]) %
 * frame size) is flipped: decoded, the frame is refused or the bytes
 * packed; flipped back, it reads back whole. Aborts otherwise.
 */
static inline void fuzz_flip_check(const uint8_t *data, size_t size, fuzz_decode_fn decode,
                                   void *ud)
{
    if (size < 3)
        return;
    size_t n = size - 3;
    const unsigned char *plain = data + 3, *packed = NULL, *out = NULL;
    size_t pn = 0, outn = 0;
    store_codec c = {0};
    int codec = 0;
    if (store_codec_pack(&c, plain, n, &codec, &packed, &pn) == 0 && codec == STORE_CODEC_ZSTD) {
        unsigned char *frame = malloc(pn);
        if (frame) {
            memcpy(frame, packed, pn);
            size_t at = ((size_t)data[1] << 8 | data[2]) % pn;
            unsigned char bit = (unsigned char)(1u << (data[2] & 7));
            frame[at] ^= bit;
            if (decode(ud, codec, frame, pn, &out, &outn) && (outn != n || memcmp(out, plain, n)))
                abort(); /* damage read as other bytes */
            frame[at] ^= bit;
            if (!decode(ud, codec, frame, pn, &out, &outn) || outn != n || memcmp(out, plain, n))
                abort(); /* whole, it reads back */
            free(frame);
        }
    }
    store_codec_free(&c);
}

#endif
