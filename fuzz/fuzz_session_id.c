/*
 * libFuzzer target: signed HTTP session ids (src/transport/session_id.c).
 * Even first byte: the rest is an Mcp-Session-Id header value to open,
 * which must never read out of bounds and must refuse what it did not
 * mint. Odd first byte: the rest is "VERSION\nCAPABILITIES-JSON"; the id
 * minted from them must open again, with the same capability names,
 * exactly when the version is one the runtime speaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/server.h>

#include "transport/session_id.h"

#define FUZZ_NOW INT64_C(1796000000)

static const uint8_t fuzz_key[32] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6,
                                     7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void open_text(const mcpage_keyring *kr, const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1); /* exact size: ASan sees any overread */
    if (text == NULL)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    session_id_info info;
    if (session_id_open(kr, text, 3600, FUZZ_NOW, &info) == SESSION_ID_VALID)
        abort(); /* nothing here was signed with the fuzz key */
    if (info.client_caps != NULL)
        abort();
    free(text);
}

static void round_trip(const mcpage_keyring *kr, const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t vlen = nl ? (size_t)(nl - data) : size;
    char version[64];
    if (vlen >= sizeof version || memchr(data, '\0', vlen))
        return;
    memcpy(version, data, vlen);
    version[vlen] = '\0';
    json_t *caps = NULL;
    if (nl) {
        json_error_t err;
        caps = json_loadb((const char *)nl + 1, size - vlen - 1, 0, &err);
    }
    char id[SESSION_ID_MAX + 1];
    int n = session_id_mint(kr, version, caps, FUZZ_NOW, id);
    bool speakable = vlen > 0 && vlen <= 31 && mcpage_protocol_supported(version);
    if (n > 0) {
        for (int i = 0; i < n; i++)
            if (id[i] < 0x21 || id[i] > 0x7e)
                abort();
        session_id_info info;
        session_id_status st = session_id_open(kr, id, 3600, FUZZ_NOW, &info);
        if ((st == SESSION_ID_VALID) != speakable)
            abort();
        if (st == SESSION_ID_VALID && json_is_object(caps) && info.client_caps &&
            json_object_size(info.client_caps) != json_object_size(caps))
            abort();
        if (st == SESSION_ID_VALID && strcmp(info.protocol_version, version) != 0)
            abort();
        json_decref(info.client_caps);
    } else if (vlen > 0 && vlen <= 31) {
        abort(); /* a version of legal length always mints */
    }
    json_decref(caps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mcpage_keyring *kr;
    if (kr == NULL) {
        if (mcpage_keyring_new(&kr) != 0 || mcpage_keyring_add(kr, 1, fuzz_key, 32, true) != 0)
            abort();
    }
    if (size == 0)
        return 0;
    if (data[0] & 1)
        round_trip(kr, data + 1, size - 1);
    else
        open_text(kr, data + 1, size - 1);
    return 0;
}
