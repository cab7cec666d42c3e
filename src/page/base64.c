/*
 * Base64 encoding and strict decoding (see base64.h).
 */
#include "page/base64.h"

static const char std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t b64_encoded_len(size_t n, bool url)
{
    return url ? (n / 3) * 4 + (n % 3 ? n % 3 + 1 : 0) : (n + 2) / 3 * 4;
}

size_t b64_encode(const uint8_t *in, size_t n, char *out, bool url)
{
    const char *abc = url ? url_alphabet : std_alphabet;
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
        out[o++] = abc[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = abc[v >> 6 & 63];
        else if (!url)
            out[o++] = '=';
        if (!url)
            out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

static int b64_value(char c, bool url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

long b64_decode(const char *in, size_t n, uint8_t *out, bool url)
{
    if (!url) {
        if (n % 4 != 0)
            return -1;
        size_t pad = 0;
        while (pad < 2 && n > 0 && in[n - 1] == '=')
            n--, pad++;
    }
    if (n % 4 == 1)
        return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value(in[i], url);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    /* Leftover bits must be zero, so every input has one encoding. */
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
        return -1;
    return (long)o;
}

void hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = 0;
}
