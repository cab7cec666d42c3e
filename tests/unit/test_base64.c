/*
 * Base64: RFC 4648 test vectors, round trips of every length in both
 * alphabets, and strict decoding (bad characters, bad padding, impossible
 * lengths and non-zero trailing bits are all rejected, so every byte
 * string has exactly one accepted encoding).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "page/base64.h"

static void rfc4648_vectors_encode_and_decode(void **state)
{
    (void)state;
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const std[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    static const char *const url[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        size_t n = strlen(plain[i]);
        char enc[16];
        uint8_t dec[16];
        assert_int_equal(b64_encoded_len(n, false), strlen(std[i]));
        assert_int_equal(b64_encode((const uint8_t *)plain[i], n, enc, false), strlen(std[i]));
        assert_string_equal(enc, std[i]);
        assert_int_equal(b64_encoded_len(n, true), strlen(url[i]));
        assert_int_equal(b64_encode((const uint8_t *)plain[i], n, enc, true), strlen(url[i]));
        assert_string_equal(enc, url[i]);
        assert_int_equal(b64_decode(std[i], strlen(std[i]), dec, false), (long)n);
        assert_memory_equal(dec, plain[i], n);
        assert_int_equal(b64_decode(url[i], strlen(url[i]), dec, true), (long)n);
        assert_memory_equal(dec, plain[i], n);
    }
    /* The two alphabets differ in 62 and 63. */
    const uint8_t hi[] = {0xFB, 0xFF, 0xBF};
    char enc[8];
    b64_encode(hi, 3, enc, false);
    assert_string_equal(enc, "+/+/");
    b64_encode(hi, 3, enc, true);
    assert_string_equal(enc, "-_-_");
}

static void every_length_round_trips_in_both_alphabets(void **state)
{
    (void)state;
    uint8_t in[300], out[300 + 3];
    char enc[404];
    uint32_t x = 12345;
    for (size_t n = 0; n <= sizeof in; n++) {
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            in[i] = (uint8_t)(x >> 16);
        }
        for (int url = 0; url < 2; url++) {
            size_t len = b64_encode(in, n, enc, url);
            assert_int_equal(len, b64_encoded_len(n, url));
            assert_int_equal(strlen(enc), len);
            memset(out, 0xAA, sizeof out);
            assert_int_equal(b64_decode(enc, len, out, url), (long)n);
            assert_memory_equal(out, in, n);
        }
    }
}

static void strict_decoding_rejects_malformed_input(void **state)
{
    (void)state;
    static const char *const bad_std[] = {
        "Zm9v!",    /* not in the alphabet (and a bad length) */
        "Zm 9v",    /* whitespace */
        "Zm9\nv",   /* a newline */
        "Zg=a",     /* padding in the middle */
        "Z===",     /* three padding characters */
        "====",     /* padding only */
        "Zg",       /* padded alphabet needs a multiple of 4 */
        "Zg=",      /* short padding */
        "Zm9v-_==", /* URL-safe characters in the standard alphabet */
        "Zh==",     /* 'f' with non-zero trailing bits: not canonical */
        "Zm9=",     /* "fo" with non-zero trailing bits */
        "Zg==Zg==", /* padding before the end */
    };
    static const char *const bad_url[] = {
        "Zg==",        /* no padding in the URL-safe form */
        "Z",           /* one character cannot encode a byte */
        "Zm9vY",       /* length 5: 4k+1 is impossible */
        "Zm+v",        /* standard characters in the URL-safe alphabet */
        "Zm/v",  "Zh", /* non-zero trailing bits */
        "Zm9",
    };
    uint8_t out[32];
    for (size_t i = 0; i < sizeof bad_std / sizeof bad_std[0]; i++) {
        if (b64_decode(bad_std[i], strlen(bad_std[i]), out, false) != -1)
            fail_msg("standard base64 accepted \"%s\"", bad_std[i]);
    }
    for (size_t i = 0; i < sizeof bad_url / sizeof bad_url[0]; i++) {
        if (b64_decode(bad_url[i], strlen(bad_url[i]), out, true) != -1)
            fail_msg("URL-safe base64 accepted \"%s\"", bad_url[i]);
    }
    /* NUL inside the given length is a bad character, not an end. */
    assert_int_equal(b64_decode("Zm\0v", 4, out, false), -1);
}

static void every_accepted_string_is_the_canonical_encoding(void **state)
{
    (void)state;
    /* All 4-character strings over a small alphabet that includes padding
     * and a foreign character: whatever decodes must re-encode to itself. */
    static const char abc[] = "AZaz09+/-_=Q!";
    char s[5] = {0}, enc[8];
    uint8_t out[8];
    size_t accepted = 0;
    for (size_t a = 0; a < 13; a++)
        for (size_t b = 0; b < 13; b++)
            for (size_t c = 0; c < 13; c++)
                for (size_t d = 0; d < 13; d++) {
                    s[0] = abc[a], s[1] = abc[b], s[2] = abc[c], s[3] = abc[d];
                    for (int url = 0; url < 2; url++) {
                        long n = b64_decode(s, 4, out, url);
                        if (n < 0)
                            continue;
                        accepted++;
                        size_t len = b64_encode(out, (size_t)n, enc, url);
                        assert_int_equal(len, 4);
                        assert_memory_equal(enc, s, 4);
                    }
                }
    assert_true(accepted > 1000);
}

static void hex_is_two_lowercase_digits_a_byte_and_a_nul(void **state)
{
    (void)state;
    const uint8_t in[] = {0x00, 0x0f, 0x10, 0xa5, 0xff};
    char out[2 * sizeof in + 2];
    memset(out, '#', sizeof out);
    hex_encode(in, sizeof in, out);
    assert_string_equal(out, "000f10a5ff");
    assert_int_equal(out[2 * sizeof in + 1], '#'); /* nothing past the NUL */
    hex_encode(in, 0, out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rfc4648_vectors_encode_and_decode),
        cmocka_unit_test(every_length_round_trips_in_both_alphabets),
        cmocka_unit_test(strict_decoding_rejects_malformed_input),
        cmocka_unit_test(every_accepted_string_is_the_canonical_encoding),
        cmocka_unit_test(hex_is_two_lowercase_digits_a_byte_and_a_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
