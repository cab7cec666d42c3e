/*
 * Tests for page/digest.h: SHA-256 against FIPS 180-4's examples, HMAC-
 * SHA256 against RFC 4231's, MD5 against RFC 1321's, and all three
 * against libcrypto on every length from 0 to 300 bytes, fed whole and in
 * pieces; the comparison in constant time and the random source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "page/digest.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void assert_sha256(const void *data, size_t n, const char *want)
{
    uint8_t md[SHA256_LEN];
    char got[2 * SHA256_LEN + 1];
    sha256(data, n, md);
    hex(md, sizeof md, got);
    assert_string_equal(got, want);
}

static void sha256_gives_the_standards_examples(void **state)
{
    (void)state;
    assert_sha256("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_sha256("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_sha256(two, strlen(two),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    assert_sha256(four, strlen(four),
                  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* a million 'a', given 1,000 at a time */
    char a[1000];
    memset(a, 'a', sizeof a);
    sha256_ctx c;
    sha256_init(&c);
    for (int i = 0; i < 1000; i++)
        sha256_update(&c, a, sizeof a);
    uint8_t md[SHA256_LEN];
    char got[2 * SHA256_LEN + 1];
    sha256_final(&c, md);
    hex(md, sizeof md, got);
    assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void assert_hmac(const void *key, size_t klen, const void *msg, size_t n, const char *want)
{
    hmac_sha256_key k;
    hmac_sha256_keyed(&k, key, klen);
    uint8_t md[SHA256_LEN];
    char got[2 * SHA256_LEN + 1];
    hmac_sha256(&k, msg, n, md);
    hex(md, sizeof md, got);
    assert_string_equal(got, want);
    hmac_sha256(&k, msg, n, md); /* a keyed state serves any number of messages */
    hex(md, sizeof md, got);
    assert_string_equal(got, want);
}

static void hmac_gives_rfc_4231s_cases(void **state)
{
    (void)state;
    uint8_t k1[20], k3[20], d3[50], k4[25], d4[50], k6[131];
    memset(k1, 0x0b, sizeof k1);
    assert_hmac(k1, sizeof k1, "Hi There", 8,
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    assert_hmac("Jefe", 4, "what do ya want for nothing?", 28,
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(k3, 0xaa, sizeof k3);
    memset(d3, 0xdd, sizeof d3);
    assert_hmac(k3, sizeof k3, d3, sizeof d3,
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
        k4[i] = (uint8_t)(i + 1);
    memset(d4, 0xcd, sizeof d4);
    assert_hmac(k4, sizeof k4, d4, sizeof d4,
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    memset(k6, 0xaa, sizeof k6); /* a key longer than a block is hashed first */
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    assert_hmac(k6, sizeof k6, m6, strlen(m6),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    assert_hmac(k6, sizeof k6, m7, strlen(m7),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

static void md5_gives_rfc_1321s_suite(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t md[MD5_LEN];
        char got[2 * MD5_LEN + 1];
        md5(cases[i][0], strlen(cases[i][0]), md);
        hex(md, sizeof md, got);
        assert_string_equal(got, cases[i][1]);
    }
}

/* Every length from 0 to 300 (across the 55/56/64-byte padding edges),
   pieces of every size: the same bytes as libcrypto's. */
static void every_length_agrees_with_libcrypto(void **state)
{
    (void)state;
    uint8_t data[300], key[150];
    srand(35);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)rand();
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)rand();
    for (size_t n = 0; n <= sizeof data; n++) {
        uint8_t want[EVP_MAX_MD_SIZE], got[SHA256_LEN];
        unsigned int wn = 0;
        assert_int_equal(EVP_Digest(data, n, want, &wn, EVP_sha256(), NULL), 1);
        sha256(data, n, got);
        assert_memory_equal(got, want, SHA256_LEN);
        size_t piece = 1 + n % 67;
        sha256_ctx c;
        sha256_init(&c);
        for (size_t at = 0; at < n; at += piece)
            sha256_update(&c, data + at, n - at < piece ? n - at : piece);
        sha256_final(&c, got);
        assert_memory_equal(got, want, SHA256_LEN);

        uint8_t m[MD5_LEN];
        assert_int_equal(EVP_Digest(data, n, want, &wn, EVP_md5(), NULL), 1);
        md5(data, n, m);
        assert_memory_equal(m, want, MD5_LEN);

        size_t klen = n % (sizeof key + 1);
        assert_non_null(HMAC(EVP_sha256(), key, (int)klen, data, n, want, &wn));
        hmac_sha256_key k;
        hmac_sha256_keyed(&k, key, klen);
        hmac_sha256(&k, data, n, got);
        assert_memory_equal(got, want, SHA256_LEN);
    }
}

static void equal_and_random(void **state)
{
    (void)state;
    assert_true(mcpage__bytes_equal("abcd", "abcd", 4));
    assert_false(mcpage__bytes_equal("abcd", "abce", 4));
    assert_false(mcpage__bytes_equal("xbcd", "abcd", 4));
    assert_true(mcpage__bytes_equal("a", "b", 0));
    uint8_t a[64] = {0}, b[64] = {0}, zero[64] = {0};
    assert_true(mcpage__random(a, sizeof a));
    assert_true(mcpage__random(b, sizeof b));
    assert_memory_not_equal(a, zero, sizeof a); /* 2^-512 to fail by chance */
    assert_memory_not_equal(a, b, sizeof a);
    uint8_t big[100000];
    assert_true(mcpage__random(big, sizeof big)); /* about half of its bits set */
    size_t ones = 0;
    for (size_t i = 0; i < sizeof big; i++)
        ones += (size_t)__builtin_popcount(big[i]);
    assert_in_range(ones, 390000, 410000); /* 400,000 expected, sd 447 */
    mcpage__cleanse(a, sizeof a);
    assert_memory_equal(a, zero, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_gives_the_standards_examples),
        cmocka_unit_test(hmac_gives_rfc_4231s_cases),
        cmocka_unit_test(md5_gives_rfc_1321s_suite),
        cmocka_unit_test(every_length_agrees_with_libcrypto),
        cmocka_unit_test(equal_and_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
