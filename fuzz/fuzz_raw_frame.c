/*
 * libFuzzer target: the raw chunk decoder (src/store/store_codec.c).
 * First byte 0-127: the rest is a stored chunk of codec 1 (a zstd frame),
 * decoded with a 1 MiB cap: it must never read or write out of bounds,
 * give more than the cap, or take more memory than the cap (a frame that
 * claims or inflates past it is refused). First byte 128-255: the rest
 * (past two bytes naming a position and a bit) is packed, one bit of the
 * frame flipped, and decoded: either refused or the very bytes packed,
 * never other bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_flip.h"
#include "store/store_codec.h"

#define FUZZ_CAP (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_decode_fn over the codec `ud`: any failure is a refusal. */
static int unpack(void *ud, int codec, const unsigned char *in, size_t n, const unsigned char **out,
                  size_t *outn)
{
    const char *why = NULL;
    return store_codec_unpack(ud, codec, in, n, FUZZ_CAP, out, outn, &why) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    store_codec c = {0};
    const unsigned char *out = NULL;
    size_t outn = 0;
    const char *why = NULL;
    if (data[0] < 128) {
        unsigned char *in = malloc(size - 1 ? size - 1 : 1); /* exact: ASan sees overreads */
        if (!in)
            return 0;
        memcpy(in, data + 1, size - 1);
        int rc =
            store_codec_unpack(&c, STORE_CODEC_ZSTD, in, size - 1, FUZZ_CAP, &out, &outn, &why);
        if (rc == 0 && outn > FUZZ_CAP)
            abort();
        if (rc == 0 && outn > 0 && out[outn - 1] == 0xAB && out[0] == 0xCD)
            outn = 0; /* touch the output: ASan checks it is all there */
        free(in);
    } else {
        store_codec d = {0};
        fuzz_flip_check(data, size, unpack, &d, 0);
        store_codec_free(&d);
    }
    store_codec_free(&c);
    return 0;
}
