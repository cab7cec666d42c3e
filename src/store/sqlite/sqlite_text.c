/*
 * Message text compressed (issue 35, schema version 13): table
 * message_body(message_id, text, codec) keeps each text as
 * store_codec_pack made it (plain, or one zstd frame; a text past
 * SQ_TEXT_PACK_MAX as frames of STORE_CODEC_FRAME_TEXT bytes, schema
 * version 14, store_codec_pack_frames); the view
 * message_text(message_id, text) gives the texts back through
 * mcpage_text(message_id, codec, text), which every reader reads through:
 * read_session, search snippets (FTS5's external content is the view),
 * exports, the delete trigger that tells FTS5 a text's old words. So
 * there is one decode path, store_codec_unpack, bounded and checked; a
 * damaged row fails its statement with a message that names the message
 * and `mcpage sync --rebuild`, never reads as other bytes.
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "store/sqlite/sqlite_internal.h"
#include "store/store_codec.h"

/* The connection's decoder: its own (not the store handle's, whose last
 * raw chunk it would evict), freed with the connection. */
static void text_codec_free(void *ud)
{
    store_codec_free(ud);
    free(ud);
}

/* mcpage_text(message_id, codec, stored): the text the row keeps. */
static void text_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    store_codec *c = sqlite3_user_data(ctx);
    int64_t codec = sqlite3_value_int64(argv[1]);
    if (codec == STORE_CODEC_PLAIN && sqlite3_value_type(argv[2]) == SQLITE_TEXT) {
        sqlite3_result_value(ctx, argv[2]);
        return;
    }
    const unsigned char *in = sqlite3_value_blob(argv[2]);
    size_t n = (size_t)sqlite3_value_bytes(argv[2]);
    const unsigned char *out = NULL;
    size_t outn = 0;
    const char *why = "";
    int rc = codec < 0 || codec > 255 || sqlite3_value_type(argv[2]) == SQLITE_NULL
                 ? MCPAGE_EPARSE
                 : store_codec_unpack(c, (int)codec, in ? in : (const unsigned char *)"", n,
                                      STORE_CODEC_OUT_MAX, &out, &outn, &why);
    if (rc == MCPAGE_ENOMEM) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (rc < 0) {
        char *msg = sqlite3_mprintf(
            SQ_TEXT_DAMAGED "message %lld (codec %lld, %lld bytes stored): %s; run "
                            "`mcpage sync --rebuild` to read its session again from its transcript",
            (long long)sqlite3_value_int64(argv[0]), (long long)codec, (long long)n,
            why[0] ? why : "an unknown codec");
        sqlite3_result_error(ctx, msg ? msg : SQ_TEXT_DAMAGED "out of memory saying which", -1);
        sqlite3_free(msg);
        return;
    }
    sqlite3_result_text64(ctx, (const char *)out, outn, SQLITE_TRANSIENT, SQLITE_UTF8);
}

int store_sqlite_text_register(sqlite3 *db)
{
    store_codec *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    /* not SQLITE_DETERMINISTIC: its error names the row, and a damaged
     * row must fail each time it is read */
    return sqlite3_create_function_v2(db, "mcpage_text", 3, SQLITE_UTF8 | SQLITE_INNOCUOUS, c,
                                      text_fn, NULL, NULL, text_codec_free) == SQLITE_OK
               ? 0
               : -1;
}

int store_sqlite__text_encode(store *s, const char *text, size_t n, int *codec,
                              const unsigned char **out, size_t *outn)
{
    if (store_codec_pack_text(&s->codec, text, n, codec, out, outn) < 0)
        return store_fail(s, MCPAGE_ENOMEM, "out of memory compressing a message's text");
    return 0;
}
