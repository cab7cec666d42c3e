/*
 * Signed session ids (src/transport/session_id.c): what is minted opens
 * back to the same version, capabilities and nonce; every damaged byte,
 * a key this keyring does not hold, an age past the limit or from the
 * future, and a seal made for another purpose are all refused; oversized
 * capabilities are reduced to their names; every character is visible
 * ASCII.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/page_support.h"
#include "transport/session_id.h"

#define NOW INT64_C(1796000000) /* 2026-11-30 */

static void an_id_opens_to_what_was_minted(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(7, 0x11);
    json_t *caps = json_pack("{s:{s:b},s:{}}", "roots", "listChanged", 1, "sampling");
    char a[SESSION_ID_MAX + 1], b[SESSION_ID_MAX + 1];
    int n = session_id_mint(kr, "2025-06-18", caps, NOW, a);
    assert_true(n > 3 && n <= SESSION_ID_MAX);
    assert_int_equal(strlen(a), (size_t)n);
    assert_memory_equal(a, "s1.", 3);
    for (int i = 0; i < n; i++)
        assert_true(a[i] >= 0x21 && a[i] <= 0x7e);
    assert_true(session_id_mint(kr, "2025-06-18", caps, NOW, b) > 0);
    assert_string_not_equal(a, b); /* the nonce makes every id unique */

    session_id_info info;
    assert_int_equal(session_id_open(kr, a, 3600, NOW + 10, &info), SESSION_ID_VALID);
    assert_string_equal(info.protocol_version, "2025-06-18");
    assert_int_equal(info.issued_at, NOW);
    assert_true(json_equal(info.client_caps, caps));
    session_id_info other;
    assert_int_equal(session_id_open(kr, b, 3600, NOW, &other), SESSION_ID_VALID);
    assert_memory_not_equal(info.nonce, other.nonce, SESSION_ID_NONCE_LEN);
    json_decref(info.client_caps);
    json_decref(other.client_caps);

    /* No capabilities at all: none come back. */
    assert_true(session_id_mint(kr, "2025-11-25", NULL, NOW, a) > 0);
    assert_int_equal(session_id_open(kr, a, 0, NOW, &info), SESSION_ID_VALID);
    assert_null(info.client_caps);
    assert_string_equal(info.protocol_version, "2025-11-25");
    json_decref(caps);
    mcpage_keyring_free(kr);
}

static void every_damaged_character_is_refused(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(1, 0x22);
    json_t *caps = json_pack("{s:{}}", "elicitation");
    char id[SESSION_ID_MAX + 1];
    int n = session_id_mint(kr, "2025-11-25", caps, NOW, id);
    assert_true(n > 0);
    int refused = 0;
    for (int i = 0; i < n; i++) {
        char bad[SESSION_ID_MAX + 1];
        memcpy(bad, id, (size_t)n + 1);
        bad[i] = id[i] == 'A' ? 'B' : 'A';
        session_id_info info;
        session_id_status st = session_id_open(kr, bad, 0, NOW, &info);
        assert_int_not_equal(st, SESSION_ID_VALID);
        assert_null(info.client_caps);
        refused++;
    }
    assert_int_equal(refused, n);
    /* Truncated at every length, and one character too many. */
    for (int len = 0; len < n; len++) {
        char cut[SESSION_ID_MAX + 1];
        memcpy(cut, id, (size_t)len);
        cut[len] = '\0';
        session_id_info info;
        assert_int_equal(session_id_open(kr, cut, 0, NOW, &info), SESSION_ID_MALFORMED);
    }
    char longer[SESSION_ID_MAX + 2];
    (void)snprintf(longer, sizeof longer, "%sA", id);
    session_id_info info;
    assert_int_equal(session_id_open(kr, longer, 0, NOW, &info), SESSION_ID_MALFORMED);
    assert_int_equal(session_id_open(kr, "", 0, NOW, &info), SESSION_ID_MALFORMED);
    assert_int_equal(session_id_open(kr, NULL, 0, NOW, &info), SESSION_ID_MALFORMED);
    /* An id of the old kind (32 random bytes, base64url) is simply unknown. */
    assert_int_equal(
        session_id_open(kr, "q5kWc3Tk2m3bHq0x7y7dUo3B2N5yX6b8m1zT4vJ0aYc", 0, NOW, &info),
        SESSION_ID_MALFORMED);
    json_decref(caps);
    mcpage_keyring_free(kr);
}

static void another_key_an_old_id_and_a_future_id_are_refused(void **state)
{
    (void)state;
    mcpage_keyring *mine = tp_keyring(1, 0x33), *theirs = tp_keyring(2, 0x44),
                   *same_kid = tp_keyring(1, 0x55);
    char id[SESSION_ID_MAX + 1];
    assert_true(session_id_mint(theirs, "2025-11-25", NULL, NOW, id) > 0);
    session_id_info info;
    assert_int_equal(session_id_open(mine, id, 0, NOW, &info), SESSION_ID_FOREIGN_KEY);
    assert_true(session_id_mint(same_kid, "2025-11-25", NULL, NOW, id) > 0);
    assert_int_equal(session_id_open(mine, id, 0, NOW, &info), SESSION_ID_MALFORMED); /* forged */

    assert_true(session_id_mint(mine, "2025-11-25", NULL, NOW, id) > 0);
    assert_int_equal(session_id_open(mine, id, 100, NOW + 100, &info), SESSION_ID_VALID);
    assert_int_equal(session_id_open(mine, id, 100, NOW + 101, &info), SESSION_ID_EXPIRED);
    assert_int_equal(session_id_open(mine, id, 0, NOW + 86400 * 365, &info), SESSION_ID_VALID);
    assert_int_equal(session_id_open(mine, id, 100, NOW - 60, &info), SESSION_ID_VALID);
    assert_int_equal(session_id_open(mine, id, 100, NOW - 61, &info), SESSION_ID_EXPIRED);
    /* A key rotated in keeps old ids valid while the old key stays on the ring. */
    uint8_t key2[32];
    memset(key2, 0x66, sizeof key2);
    assert_int_equal(mcpage_keyring_add(mine, 9, key2, sizeof key2, true), 0);
    assert_int_equal(session_id_open(mine, id, 0, NOW, &info), SESSION_ID_VALID);
    mcpage_keyring_free(mine);
    mcpage_keyring_free(theirs);
    mcpage_keyring_free(same_kid);
}

static void a_version_this_build_does_not_speak_is_refused(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(1, 0x77);
    char id[SESSION_ID_MAX + 1];
    assert_true(session_id_mint(kr, "2024-11-05", NULL, NOW, id) > 0);
    session_id_info info;
    assert_int_equal(session_id_open(kr, id, 0, NOW, &info), SESSION_ID_EXPIRED);
    assert_int_equal(session_id_mint(kr, "", NULL, NOW, id), MCPAGE_EINVAL);
    assert_int_equal(session_id_mint(kr, "a-version-string-far-too-long-to-be-one", NULL, NOW, id),
                     MCPAGE_EINVAL);
    mcpage_keyring *empty = NULL;
    assert_int_equal(mcpage_keyring_new(&empty), 0);
    assert_int_equal(session_id_mint(empty, "2025-11-25", NULL, NOW, id), MCPAGE_ESTATE);
    mcpage_keyring_free(empty);
    mcpage_keyring_free(kr);
}

static void large_capabilities_keep_their_names(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(1, 0x88);
    char blob[3000];
    memset(blob, 'z', sizeof blob - 1);
    blob[sizeof blob - 1] = '\0';
    json_t *caps =
        json_pack("{s:{s:s},s:{s:b}}", "experimental", "blob", blob, "roots", "listChanged", 1);
    char id[SESSION_ID_MAX + 1];
    int n = session_id_mint(kr, "2025-11-25", caps, NOW, id);
    assert_true(n > 0 && n < 400);
    session_id_info info;
    assert_int_equal(session_id_open(kr, id, 0, NOW, &info), SESSION_ID_VALID);
    json_t *want = json_pack("{s:{},s:{}}", "experimental", "roots");
    assert_true(json_equal(info.client_caps, want));
    json_decref(want);
    json_decref(info.client_caps);
    json_decref(caps);

    /* So many names that not even they fit: no capabilities, still a valid id. */
    caps = json_object();
    for (int i = 0; i < 200; i++) {
        char k[32];
        (void)snprintf(k, sizeof k, "capability-number-%03d", i);
        json_object_set_new(caps, k, json_object());
    }
    assert_true(session_id_mint(kr, "2025-11-25", caps, NOW, id) > 0);
    assert_int_equal(session_id_open(kr, id, 0, NOW, &info), SESSION_ID_VALID);
    assert_null(info.client_caps);
    json_decref(caps);
    mcpage_keyring_free(kr);
}

static void a_cursor_is_not_a_session_id(void **state)
{
    (void)state;
    mcpage_keyring *kr = tp_keyring(1, 0x99);
    uint8_t fp[MCPAGE_FINGERPRINT_LEN] = {0};
    mcpage_cursor c;
    memset(&c, 0, sizeof c);
    c.total = 5;
    char cur[MCPAGE_CURSOR_MAX_LEN + 1];
    int n = mcpage_cursor_encode(kr, "tools/list", fp, &c, cur, sizeof cur);
    assert_true(n > 3);
    /* Same key, the cursor's bytes under the session prefix: the purposes differ. */
    char fake[MCPAGE_CURSOR_MAX_LEN + 1];
    (void)snprintf(fake, sizeof fake, "s1.%s", cur + 3);
    session_id_info info;
    assert_int_equal(session_id_open(kr, fake, 0, NOW, &info), SESSION_ID_MALFORMED);
    /* And a session id is no cursor. */
    char id[SESSION_ID_MAX + 1];
    assert_true(session_id_mint(kr, "2025-11-25", NULL, NOW, id) > 0);
    mcpage_cursor out;
    assert_int_not_equal(mcpage_cursor_decode(kr, "tools/list", fp, id, strlen(id), &out),
                         MCPAGE_CURSOR_VALID);
    mcpage_keyring_free(kr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_id_opens_to_what_was_minted),
        cmocka_unit_test(every_damaged_character_is_refused),
        cmocka_unit_test(another_key_an_old_id_and_a_future_id_are_refused),
        cmocka_unit_test(a_version_this_build_does_not_speak_is_refused),
        cmocka_unit_test(large_capabilities_keep_their_names),
        cmocka_unit_test(a_cursor_is_not_a_session_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
