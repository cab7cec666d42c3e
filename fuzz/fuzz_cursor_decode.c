/*
 * libFuzzer target: mcpage_cursor_decode on arbitrary bytes. A decode must
 * never read out of bounds, and whatever it accepts must re-encode to the
 * very same text (one cursor, one encoding). The seeds hold valid cursors
 * signed with the key below, so mutations start from real ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/cursor.h>

static const uint8_t fuzz_key[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                     12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                     23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t fuzz_fp[MCPAGE_FINGERPRINT_LEN] = {1, 1, 1, 1, 1, 1, 1, 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mcpage_keyring *kr;
    if (kr == NULL) {
        if (mcpage_keyring_new(&kr) != 0 || mcpage_keyring_add(kr, 1, fuzz_key, 32, true) != 0)
            abort();
    }
    /* Copy into an exact-size heap buffer so ASan sees any overread. */
    char *text = malloc(size ? size : 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    mcpage_cursor c;
    mcpage_cursor_status s = mcpage_cursor_decode(kr, "list_sessions", fuzz_fp, text, size, &c);
    if (s == MCPAGE_CURSOR_VALID) {
        char again[MCPAGE_CURSOR_MAX_LEN + 1];
        int n = mcpage_cursor_encode(kr, "list_sessions", fuzz_fp, &c, again, sizeof again);
        if (n < 0 || (size_t)n != size || memcmp(again, text, size) != 0)
            abort();
    }
    (void)mcpage_cursor_status_name(s);
    free(text);
    return 0;
}
