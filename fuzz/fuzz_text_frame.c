/*
 * libFuzzer target: the message text decoder of the SQLite store
 * (mcpage_text, src/store/sqlite/sqlite_text.c, over store_codec.c), as
 * the view message_text calls it, on an in-memory database.
 * First byte 0-127: the rest is a stored text of codec (first byte % 4:
 * plain, one zstd frame, frames with their table, an unknown codec)
 * decoded: either a text of at most the cap or the "message text damaged"
 * error, never a crash; a window of it read alone (store_codec_window,
 * as snippets read long texts) is refused or those bytes of the text.
 * First byte 128-255: the rest (past two bytes naming a position and a
 * bit) is packed as the writer packs it, one frame a text (first byte
 * even) or frames of 1 to 64 x 64 bytes of text ((first byte >> 1) % 64
 * + 1; the writer's are 8 KiB, so small texts make several), one bit of
 * the value flipped, and decoded: either the damage error or the very
 * text packed, and a window of it likewise.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_flip.h"
#include "store/sqlite/sqlite_internal.h"
#include "store/store_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *db;
static sqlite3_stmt *st;

/* Decodes (codec, bytes) through mcpage_text: 1 and *out, *outn for a
 * text, 0 for the damage error; aborts on anything else. */
static int decode(void *ud, int codec, const unsigned char *in, size_t n, const unsigned char **out,
                  size_t *outn)
{
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, codec);
    if (codec == STORE_CODEC_PLAIN)
        sqlite3_bind_text64(st, 2, (const char *)in, n, SQLITE_TRANSIENT, SQLITE_UTF8);
    else
        sqlite3_bind_blob64(st, 2, in, n, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_blob(st, 0);
        *outn = (size_t)sqlite3_column_bytes(st, 0);
        if (*outn > STORE_CODEC_OUT_MAX)
            abort();
        return 1;
    }
    if (strncmp(sqlite3_errmsg(db), SQ_TEXT_DAMAGED, strlen(SQ_TEXT_DAMAGED)) != 0)
        abort(); /* a failure that does not say the text is damaged */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db && (sqlite3_open(":memory:", &db) != SQLITE_OK || store_sqlite_text_register(db) < 0 ||
                sqlite3_prepare_v2(db, "SELECT mcpage_text(1, ?, ?)", -1, &st, NULL) != SQLITE_OK))
        abort();
    if (size < 1)
        return 0;
    const unsigned char *out = NULL;
    size_t outn = 0;
    if (data[0] < 128) {
        int codec = data[0] % 4 == 3 ? 200 : data[0] % 4;
        unsigned char *in = malloc(size - 1 ? size - 1 : 1); /* exact: ASan sees overreads */
        if (!in)
            return 0;
        memcpy(in, data + 1, size - 1);
        int whole = decode(NULL, codec, in, size - 1, &out, &outn);
        size_t from = size > 2 ? (size_t)data[1] << 6 : 0;
        if (whole) {
            unsigned char *text = malloc(outn ? outn : 1);
            if (text) {
                if (outn)
                    memcpy(text, out, outn);
                fuzz_window_check(codec, in, size - 1, text, outn, from, 100);
                free(text);
            }
        } else {
            store_codec w = {0};
            const char *why = NULL;
            size_t total = 0;
            (void)store_codec_window(&w, codec, in, size - 1, STORE_CODEC_OUT_MAX, from, 100, &out,
                                     &outn, &total, &why);
            store_codec_free(&w);
        }
        free(in);
    } else {
        size_t frame = data[0] & 1 ? (size_t)((data[0] >> 1) % 64 + 1) * 64 : 0;
        fuzz_flip_check(data, size, decode, NULL, frame);
    }
    return 0;
}
