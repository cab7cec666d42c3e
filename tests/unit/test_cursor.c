/* Tests for signed cursors: the codec, the tamper corpus, the keyring and
   the arguments fingerprint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/cursor.h>

static const uint8_t key_a[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t key_b[32] = {99, 2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t fp_a[MCPAGE_FINGERPRINT_LEN] = {1, 1, 1, 1, 1, 1, 1, 1};
static const uint8_t fp_b[MCPAGE_FINGERPRINT_LEN] = {1, 1, 1, 1, 1, 1, 1, 2};

static mcpage_keyring *ring_with(uint8_t kid, const uint8_t *key)
{
    mcpage_keyring *kr;
    assert_int_equal(mcpage_keyring_new(&kr), 0);
    assert_int_equal(mcpage_keyring_add(kr, kid, key, 32, true), 0);
    return kr;
}

/* The typical LIST position: a timestamp and a unique id. */
static mcpage_cursor typical(void)
{
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    c.nparts = 2;
    c.parts[0] = (mcpage_keypart){.is_str = false, .i = INT64_C(1764687559123)};
    c.parts[1] =
        (mcpage_keypart){.is_str = true, .s = "3f2b8c1e-9d4a-4e6b-a1c2-0f9e8d7c6b5a", .len = 36};
    c.offset = 1240;
    c.total = 98765;
    c.generation = 4321;
    return c;
}

static int encode(const mcpage_keyring *kr, const char *tool, const uint8_t *fp,
                  const mcpage_cursor *c, char *out)
{
    return mcpage_cursor_encode(kr, tool, fp, c, out, MCPAGE_CURSOR_MAX_LEN + 1);
}

static void round_trip_keeps_every_field(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    c.nparts = 4;
    c.parts[0] = (mcpage_keypart){.is_str = false, .i = -42};
    c.parts[1] = (mcpage_keypart){.is_str = true, .s = "2026-12-02T14:59:19.123Z", .len = 24};
    c.parts[2] = (mcpage_keypart){.is_str = true, .s = "api/with \"quotes\"\n", .len = 18};
    c.parts[3] =
        (mcpage_keypart){.is_str = true, .s = "3f2b8c1e-9d4a-4e6b-a1c2-0f9e8d7c6b5a", .len = 36};
    c.offset = 7;
    c.total = -1;
    c.generation = -3;
    c.issued_at = 1764687559;
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_true(n > 3);
    assert_int_equal((size_t)n, strlen(text));
    assert_memory_equal(text, "c2.", 3);
    for (int i = 0; i < n; i++)
        assert_true(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.",
                           text[i]) != NULL);
    mcpage_cursor d;
    assert_int_equal(mcpage_cursor_decode(kr, "list_sessions", fp_a, text, (size_t)n, &d),
                     MCPAGE_CURSOR_VALID);
    assert_int_equal(d.nparts, 4);
    assert_false(d.parts[0].is_str);
    assert_int_equal(d.parts[0].i, -42);
    for (int i = 1; i < 4; i++) {
        assert_true(d.parts[i].is_str);
        assert_int_equal(d.parts[i].len, c.parts[i].len);
        assert_memory_equal(d.parts[i].s, c.parts[i].s, c.parts[i].len);
    }
    assert_int_equal(d.offset, 7);
    assert_int_equal(d.total, -1);
    assert_int_equal(d.generation, -3);
    assert_int_equal(d.issued_at, 1764687559);
    mcpage_keyring_free(kr);
}

static void typical_cursor_is_under_120_chars(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_true(n > 0);
    assert_true(n < 120);
    /* The same position with the timestamp as ISO text stays short too. */
    c.parts[0] = (mcpage_keypart){.is_str = true, .s = "2026-12-02T14:59:19.123Z", .len = 24};
    n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_true(n > 0);
    assert_true(n < 120);
    printf("typical cursor: %d chars: %s\n", n, text);
    mcpage_keyring_free(kr);
}

static void non_canonical_uuid_and_timestamp_round_trip_as_strings(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    const char *odd[] = {"3F2B8C1E-9D4A-4E6B-A1C2-0F9E8D7C6B5A",
                         "2026-12-02T14:59:19Z",
                         "2026-02-30T00:00:00Z",
                         "2026-12-02T14:59:19.12Z",
                         "0000-01-01T00:00:00Z",
                         "9999-12-31T23:59:59.999Z",
                         "",
                         "3f2b8c1e-9d4a-4e6b-a1c2-0f9e8d7c6b5"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        mcpage_cursor c;
        memset(&c, 0, sizeof c);
        c.nparts = 1;
        c.parts[0] = (mcpage_keypart){.is_str = true, .s = odd[i], .len = strlen(odd[i])};
        char text[MCPAGE_CURSOR_MAX_LEN + 1];
        int n = encode(kr, "t", fp_a, &c, text);
        assert_true(n > 0);
        mcpage_cursor d;
        assert_int_equal(mcpage_cursor_decode(kr, "t", fp_a, text, (size_t)n, &d),
                         MCPAGE_CURSOR_VALID);
        assert_true(d.parts[0].is_str);
        assert_int_equal(d.parts[0].len, strlen(odd[i]));
        assert_memory_equal(d.parts[0].s, odd[i], strlen(odd[i]));
    }
    mcpage_keyring_free(kr);
}

/* Canonical timestamps of every year, with and without milliseconds, go
   as numbers (a shorter cursor) and come back as the same text. */
static void timestamps_round_trip_as_numbers(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 4000; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545F4914F6CDD1Du;
        char ts[40];
        int len = snprintf(ts, sizeof ts,
                           i % 2 ? "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ"
                                 : "%04d-%02d-%02dT%02d:%02d:%02dZ",
                           (int)(r % 10000), (int)(r / 10000 % 12) + 1, (int)(r / 120000 % 28) + 1,
                           (int)(r / 3360000 % 24), (int)(r / 80640000 % 60),
                           (int)(r / 4838400000 % 60), (int)(r / 290304000000 % 1000));
        mcpage_cursor c;
        memset(&c, 0, sizeof c);
        c.nparts = 1;
        c.parts[0] = (mcpage_keypart){.is_str = true, .s = ts, .len = (size_t)len};
        char text[MCPAGE_CURSOR_MAX_LEN + 1], as_text[MCPAGE_CURSOR_MAX_LEN + 1];
        int n = encode(kr, "t", fp_a, &c, text);
        assert_true(n > 0);
        ts[len - 1] = 'z'; /* not canonical: kept as a string */
        int m = encode(kr, "t", fp_a, &c, as_text);
        ts[len - 1] = 'Z';
        assert_true(n < m);
        mcpage_cursor d;
        assert_int_equal(mcpage_cursor_decode(kr, "t", fp_a, text, (size_t)n, &d),
                         MCPAGE_CURSOR_VALID);
        assert_true(d.parts[0].is_str);
        assert_int_equal(d.parts[0].len, (size_t)len);
        assert_memory_equal(d.parts[0].s, ts, (size_t)len);
    }
    mcpage_keyring_free(kr);
}

static void extreme_integers_round_trip(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    int64_t vals[] = {0, 1, -1, INT64_MAX, INT64_MIN, 127, 128, -65};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        mcpage_cursor c;
        memset(&c, 0, sizeof c);
        c.nparts = 1;
        c.parts[0].i = vals[i];
        c.generation = vals[i];
        c.offset = vals[i] < 0 ? 0 : vals[i];
        c.total = vals[i] < -1 || vals[i] == INT64_MAX ? 5 : vals[i];
        char text[MCPAGE_CURSOR_MAX_LEN + 1];
        int n = encode(kr, "t", fp_a, &c, text);
        assert_true(n > 0);
        mcpage_cursor d;
        assert_int_equal(mcpage_cursor_decode(kr, "t", fp_a, text, (size_t)n, &d),
                         MCPAGE_CURSOR_VALID);
        assert_int_equal(d.parts[0].i, vals[i]);
        assert_int_equal(d.generation, vals[i]);
        assert_int_equal(d.offset, c.offset);
        assert_int_equal(d.total, c.total);
    }
    mcpage_keyring_free(kr);
}

static void encode_refuses_what_it_cannot_carry(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    mcpage_cursor c = typical();
    char big[MCPAGE_CURSOR_MAX_STR_BYTES + 1];
    memset(big, 'x', sizeof big);
    c.parts[1] = (mcpage_keypart){.is_str = true, .s = big, .len = sizeof big};
    assert_int_equal(encode(kr, "t", fp_a, &c, text), MCPAGE_ERANGE);
    /* Four maximal strings do not fit MCPAGE_CURSOR_MAX_LEN: a clear error. */
    c.nparts = 4;
    for (int i = 0; i < 4; i++)
        c.parts[i] = (mcpage_keypart){.is_str = true, .s = big, .len = sizeof big - 1};
    assert_int_equal(encode(kr, "t", fp_a, &c, text), MCPAGE_ERANGE);
    c = typical();
    c.nparts = 5;
    assert_int_equal(encode(kr, "t", fp_a, &c, text), MCPAGE_EINVAL);
    c = typical();
    c.offset = -1;
    assert_int_equal(encode(kr, "t", fp_a, &c, text), MCPAGE_EINVAL);
    c = typical();
    assert_int_equal(mcpage_cursor_encode(kr, "t", fp_a, &c, text, 20), MCPAGE_ERANGE);
    mcpage_keyring *empty;
    assert_int_equal(mcpage_keyring_new(&empty), 0);
    assert_int_equal(encode(empty, "t", fp_a, &c, text), MCPAGE_ESTATE);
    mcpage_keyring_free(empty);
    mcpage_keyring_free(kr);
}

static mcpage_cursor_status decode_str(const mcpage_keyring *kr, const char *tool,
                                       const uint8_t *fp, const char *text, size_t n)
{
    mcpage_cursor d;
    return mcpage_cursor_decode(kr, tool, fp, text, n, &d);
}

static void every_single_bit_flip_is_rejected_as_damaged_or_foreign(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_true(n > 0);
    int flips = 0, malformed = 0;
    for (int i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            char t[MCPAGE_CURSOR_MAX_LEN + 1];
            memcpy(t, text, (size_t)n + 1);
            t[i] = (char)(t[i] ^ (1 << bit));
            mcpage_cursor_status s = decode_str(kr, "list_sessions", fp_a, t, (size_t)n);
            assert_true(s == MCPAGE_CURSOR_MALFORMED || s == MCPAGE_CURSOR_FOREIGN_KEY);
            malformed += s == MCPAGE_CURSOR_MALFORMED;
            flips++;
        }
    }
    assert_int_equal(flips, n * 8);
    assert_true(malformed > flips / 2);
    mcpage_keyring_free(kr);
}

static void every_truncation_is_malformed(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    for (int len = 0; len < n; len++)
        assert_int_equal(decode_str(kr, "list_sessions", fp_a, text, (size_t)len),
                         MCPAGE_CURSOR_MALFORMED);
    /* Dropping leading characters is damage too. */
    for (int skip = 1; skip < n; skip++)
        assert_int_equal(decode_str(kr, "list_sessions", fp_a, text + skip, (size_t)(n - skip)),
                         MCPAGE_CURSOR_MALFORMED);
    mcpage_keyring_free(kr);
}

static void cursor_from_another_key_id_is_foreign(void **state)
{
    (void)state;
    mcpage_keyring *other = ring_with(2, key_b);
    mcpage_keyring *ours = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(other, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(ours, "list_sessions", fp_a, text, (size_t)n),
                     MCPAGE_CURSOR_FOREIGN_KEY);
    mcpage_keyring_free(other);
    mcpage_keyring_free(ours);
}

static void cursor_signed_with_another_key_under_our_id_is_rejected(void **state)
{
    (void)state;
    mcpage_keyring *other = ring_with(1, key_b);
    mcpage_keyring *ours = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(other, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(ours, "list_sessions", fp_a, text, (size_t)n),
                     MCPAGE_CURSOR_MALFORMED);
    mcpage_keyring_free(other);
    mcpage_keyring_free(ours);
}

static void rotated_key_still_verifies_until_removed(void **state)
{
    (void)state;
    mcpage_keyring *old = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(old, "list_sessions", fp_a, &c, text);
    /* The new ring signs with key 2 and still accepts key 1. */
    mcpage_keyring *rotated = ring_with(2, key_b);
    assert_int_equal(mcpage_keyring_add(rotated, 1, key_a, 32, false), 0);
    assert_int_equal(decode_str(rotated, "list_sessions", fp_a, text, (size_t)n),
                     MCPAGE_CURSOR_VALID);
    char fresh[MCPAGE_CURSOR_MAX_LEN + 1];
    int m = encode(rotated, "list_sessions", fp_a, &c, fresh);
    assert_int_equal(decode_str(old, "list_sessions", fp_a, fresh, (size_t)m),
                     MCPAGE_CURSOR_FOREIGN_KEY);
    assert_int_equal(mcpage_keyring_add(rotated, 2, key_a, 32, false), MCPAGE_EEXIST);
    mcpage_keyring_free(old);
    mcpage_keyring_free(rotated);
}

static void cursor_for_another_tool_is_other_tool(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(kr, "search_messages", fp_a, text, (size_t)n),
                     MCPAGE_CURSOR_OTHER_TOOL);
    mcpage_keyring_free(kr);
}

static void cursor_for_other_arguments_is_other_args(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(kr, "list_sessions", fp_b, text, (size_t)n),
                     MCPAGE_CURSOR_OTHER_ARGS);
    mcpage_keyring_free(kr);
}

static void cursor_older_than_ttl_is_expired(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    mcpage_keyring_set_ttl(kr, 3600);
    mcpage_cursor c = typical();
    c.issued_at = (int64_t)time(NULL) - 3700;
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(kr, "list_sessions", fp_a, text, (size_t)n), MCPAGE_CURSOR_EXPIRED);
    c.issued_at = (int64_t)time(NULL) - 60;
    n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(kr, "list_sessions", fp_a, text, (size_t)n), MCPAGE_CURSOR_VALID);
    /* Without a TTL nothing expires. */
    mcpage_keyring_set_ttl(kr, 0);
    c.issued_at = 1000;
    n = encode(kr, "list_sessions", fp_a, &c, text);
    assert_int_equal(decode_str(kr, "list_sessions", fp_a, text, (size_t)n), MCPAGE_CURSOR_VALID);
    mcpage_keyring_free(kr);
}

static void garbage_empty_and_huge_strings_are_malformed(void **state)
{
    (void)state;
    mcpage_keyring *kr = ring_with(1, key_a);
    const char *junk[] = {"",
                          "c2.",
                          "c1",
                          "c2.AAAA",
                          "c2.!!!!",
                          "null",
                          "c2.AAAAAAAAAAAAAAAAAAAA",
                          "c2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                          "20",
                          "c2.\xff\xfe"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        assert_int_equal(decode_str(kr, "t", fp_a, junk[i], strlen(junk[i])),
                         MCPAGE_CURSOR_MALFORMED);
    size_t big = 10 * 1024;
    char *huge = malloc(big);
    assert_non_null(huge);
    memcpy(huge, "c2.", 3);
    memset(huge + 3, 'A', big - 3);
    assert_int_equal(decode_str(kr, "t", fp_a, huge, big), MCPAGE_CURSOR_MALFORMED);
    free(huge);
    /* Random printable strings of every length up to the limit. */
    srand(7);
    for (int i = 0; i < 2000; i++) {
        char t[MCPAGE_CURSOR_MAX_LEN];
        size_t n = (size_t)(rand() % (MCPAGE_CURSOR_MAX_LEN - 3)) + 3;
        memcpy(t, "c2.", 3);
        for (size_t k = 3; k < n; k++)
            t[k] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[rand() % 64];
        mcpage_cursor_status s = decode_str(kr, "t", fp_a, t, n);
        assert_true(s == MCPAGE_CURSOR_MALFORMED || s == MCPAGE_CURSOR_FOREIGN_KEY);
    }
    mcpage_keyring_free(kr);
}

static void status_names_and_texts_are_distinct(void **state)
{
    (void)state;
    for (int a = MCPAGE_CURSOR_VALID; a <= MCPAGE_CURSOR_EXPIRED; a++)
        for (int b = a + 1; b <= MCPAGE_CURSOR_EXPIRED; b++) {
            assert_string_not_equal(mcpage_cursor_status_name((mcpage_cursor_status)a),
                                    mcpage_cursor_status_name((mcpage_cursor_status)b));
            assert_string_not_equal(mcpage_cursor_status_text((mcpage_cursor_status)a),
                                    mcpage_cursor_status_text((mcpage_cursor_status)b));
        }
    assert_string_equal(mcpage_cursor_status_name(MCPAGE_CURSOR_OTHER_ARGS), "other_args");
    assert_non_null(strstr(mcpage_cursor_status_text(MCPAGE_CURSOR_OTHER_ARGS),
                           "pass the same query and filters"));
}

/* ------------------------------------------------------- fingerprint */

static void fp(const char *json, const char *const *skip, uint8_t out[8])
{
    json_error_t err;
    json_t *v = json_loads(json, 0, &err);
    assert_non_null(v);
    mcpage_args_fingerprint(v, skip, out);
    json_decref(v);
}

static void fingerprint_ignores_key_order_and_window_params(void **state)
{
    (void)state;
    static const char *const skip[] = {"cursor", "offset", "limit", "max_tokens", NULL};
    uint8_t a[8], b[8], c[8], d[8];
    fp("{\"project\":\"api\",\"q\":{\"b\":1,\"a\":[2,{\"y\":1,\"x\":2}]}}", skip, a);
    fp("{\"limit\":5,\"q\":{\"a\":[2,{\"x\":2,\"y\":1}],\"b\":1},\"cursor\":\"c2.x\","
       "\"project\":\"api\",\"offset\":3,\"max_tokens\":900}",
       skip, b);
    assert_memory_equal(a, b, 8);
    fp("{\"project\":\"web\",\"q\":{\"b\":1,\"a\":[2,{\"y\":1,\"x\":2}]}}", skip, c);
    assert_memory_not_equal(a, c, 8);
    /* Array order is meaningful; skipping applies to the top level only. */
    fp("{\"project\":\"api\",\"q\":{\"b\":1,\"a\":[{\"y\":1,\"x\":2},2]}}", skip, d);
    assert_memory_not_equal(a, d, 8);
    uint8_t e[8], f[8];
    fp("{\"q\":{\"limit\":1}}", skip, e);
    fp("{\"q\":{\"limit\":2}}", skip, f);
    assert_memory_not_equal(e, f, 8);
    /* NULL arguments and an empty object are the same call. */
    uint8_t g[8], h[8];
    mcpage_args_fingerprint(NULL, skip, g);
    fp("{\"limit\":3}", skip, h);
    assert_memory_equal(g, h, 8);
    /* The first 8 bytes of SHA-256 of the canonical JSON: cursors issued by
       an earlier build stay valid however the digest is computed. */
    static const uint8_t empty[8] = {0x44, 0x13, 0x6f, 0xa3, 0x55, 0xb3, 0x67, 0x8a};
    assert_memory_equal(g, empty, 8);
    static const uint8_t api[8] = {0x80, 0xd4, 0x7b, 0xaa, 0x35, 0x53, 0x46, 0x28};
    uint8_t k[8];
    fp("{\"limit\":3,\"project\":\"api\"}", skip, k);
    assert_memory_equal(k, api, 8);
}

/* ----------------------------------------------------------- keyring */

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_cursor.XXXXXX", MCPAGE_BINARY_DIR);
    assert_non_null(mkdtemp(tmpdir));
}

static void remove_tree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Two rings agree on a key when each verifies the other's cursor. */
static bool same_key(const mcpage_keyring *a, const mcpage_keyring *b)
{
    mcpage_cursor c = typical();
    char text[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = encode(a, "t", fp_a, &c, text);
    return decode_str(b, "t", fp_a, text, (size_t)n) == MCPAGE_CURSOR_VALID;
}

static void generated_key_is_saved_0600_in_a_0700_dir_and_reloaded(void **state)
{
    (void)state;
    make_tmpdir();
    char path[400];
    snprintf(path, sizeof path, "%s/data/keys/cursor.key", tmpdir);
    mcpage_keyring *a, *b;
    assert_int_equal(mcpage_keyring_new(&a), 0);
    assert_int_equal(mcpage_keyring_load(a, NULL, path), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/data/keys", tmpdir);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(mcpage_keyring_new(&b), 0);
    assert_int_equal(mcpage_keyring_load(b, NULL, path), 0);
    assert_true(same_key(a, b));
    mcpage_keyring_free(a);
    mcpage_keyring_free(b);
    remove_tree(tmpdir);
}

static void key_file_may_be_raw_or_hex_and_garbage_is_refused(void **state)
{
    (void)state;
    make_tmpdir();
    char raw[400], hex[400], bad[400];
    snprintf(raw, sizeof raw, "%s/raw.key", tmpdir);
    snprintf(hex, sizeof hex, "%s/hex.key", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.key", tmpdir);
    write_file(raw, key_a, 32);
    char h[70];
    for (int i = 0; i < 32; i++)
        snprintf(h + 2 * i, 3, "%02x", key_a[i]);
    h[64] = '\n';
    write_file(hex, h, 65);
    write_file(bad, "not a key\n", 10);
    mcpage_keyring *a, *b, *c;
    assert_int_equal(mcpage_keyring_new(&a), 0);
    assert_int_equal(mcpage_keyring_new(&b), 0);
    assert_int_equal(mcpage_keyring_new(&c), 0);
    assert_int_equal(mcpage_keyring_load(a, NULL, raw), 0);
    assert_int_equal(mcpage_keyring_load(b, NULL, hex), 0);
    assert_true(same_key(a, b));
    assert_int_equal(mcpage_keyring_load(c, NULL, bad), MCPAGE_EPARSE);
    /* The environment wins over the file. */
    setenv("MCPAGE_TEST_CURSOR_KEY", h, 1);
    mcpage_keyring *d;
    assert_int_equal(mcpage_keyring_new(&d), 0);
    assert_int_equal(mcpage_keyring_load(d, "MCPAGE_TEST_CURSOR_KEY", bad), MCPAGE_EPARSE);
    h[64] = '\0';
    setenv("MCPAGE_TEST_CURSOR_KEY", h, 1);
    assert_int_equal(mcpage_keyring_load(d, "MCPAGE_TEST_CURSOR_KEY", bad), 0);
    assert_true(same_key(a, d));
    setenv("MCPAGE_TEST_CURSOR_KEY", "abcd", 1);
    mcpage_keyring *e;
    assert_int_equal(mcpage_keyring_new(&e), 0);
    assert_int_equal(mcpage_keyring_load(e, "MCPAGE_TEST_CURSOR_KEY", NULL), MCPAGE_EPARSE);
    unsetenv("MCPAGE_TEST_CURSOR_KEY");
    mcpage_keyring_free(a);
    mcpage_keyring_free(b);
    mcpage_keyring_free(c);
    mcpage_keyring_free(d);
    mcpage_keyring_free(e);
    remove_tree(tmpdir);
}

static void in_memory_keys_differ_between_rings(void **state)
{
    (void)state;
    mcpage_keyring *a, *b;
    assert_int_equal(mcpage_keyring_new(&a), 0);
    assert_int_equal(mcpage_keyring_new(&b), 0);
    assert_int_equal(mcpage_keyring_load(a, NULL, NULL), 0);
    assert_int_equal(mcpage_keyring_load(b, NULL, NULL), 0);
    assert_false(same_key(a, b));
    assert_true(same_key(a, a));
    mcpage_keyring_free(a);
    mcpage_keyring_free(b);
}

static void keyring_rejects_short_keys_and_overflow(void **state)
{
    (void)state;
    mcpage_keyring *kr;
    assert_int_equal(mcpage_keyring_new(&kr), 0);
    assert_int_equal(mcpage_keyring_add(kr, 1, key_a, 15, true), MCPAGE_EINVAL);
    for (int i = 0; i < 8; i++)
        assert_int_equal(mcpage_keyring_add(kr, (uint8_t)i, key_a, 32, false), 0);
    assert_int_equal(mcpage_keyring_add(kr, 9, key_a, 32, false), MCPAGE_ERANGE);
    mcpage_keyring_free(kr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_every_field),
        cmocka_unit_test(typical_cursor_is_under_120_chars),
        cmocka_unit_test(non_canonical_uuid_and_timestamp_round_trip_as_strings),
        cmocka_unit_test(timestamps_round_trip_as_numbers),
        cmocka_unit_test(extreme_integers_round_trip),
        cmocka_unit_test(encode_refuses_what_it_cannot_carry),
        cmocka_unit_test(every_single_bit_flip_is_rejected_as_damaged_or_foreign),
        cmocka_unit_test(every_truncation_is_malformed),
        cmocka_unit_test(cursor_from_another_key_id_is_foreign),
        cmocka_unit_test(cursor_signed_with_another_key_under_our_id_is_rejected),
        cmocka_unit_test(rotated_key_still_verifies_until_removed),
        cmocka_unit_test(cursor_for_another_tool_is_other_tool),
        cmocka_unit_test(cursor_for_other_arguments_is_other_args),
        cmocka_unit_test(cursor_older_than_ttl_is_expired),
        cmocka_unit_test(garbage_empty_and_huge_strings_are_malformed),
        cmocka_unit_test(status_names_and_texts_are_distinct),
        cmocka_unit_test(fingerprint_ignores_key_order_and_window_params),
        cmocka_unit_test(generated_key_is_saved_0600_in_a_0700_dir_and_reloaded),
        cmocka_unit_test(key_file_may_be_raw_or_hex_and_garbage_is_refused),
        cmocka_unit_test(in_memory_keys_differ_between_rings),
        cmocka_unit_test(keyring_rejects_short_keys_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
