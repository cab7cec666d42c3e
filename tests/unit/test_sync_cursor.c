/*
 * Tests for Cursor's agent CLI chats (src/sync/sync_cursor.c through the
 * folded sync of sync_fold.c): a chat database written here the way
 * cursor-agent writes it (WAL; meta key "0" as hex JSON; content-addressed
 * blobs, messages as JSON, protobuf tree nodes naming their children by
 * SHA-256, the root naming the workspace) reads as the expected messages;
 * a message added is appended while the messages before keep their ids; a
 * write transaction another connection holds open neither blocks sync nor
 * shows; an edited chat is stored again with its unchanged messages' ids;
 * a blob the tree names but the database lacks is counted with its place;
 * a message whose bytes are not UTF-8 is kept.
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
#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"
#include "sync/sync.h"

#define CHAT "2f0c6a1e-7b0d-4c55-9a51-3e1c2b7d9f10"

typedef struct fx {
    char dir[256];
    char home[300];   /* a Cursor home */
    char chatdb[600]; /* its chat's store.db */
    char db[1200];    /* the archive */
} fx;

static const char *const messages[] = {
    "{\"role\":\"system\",\"content\":\"You are an AI coding assistant, powered by GPT-5.\"}",
    "{\"role\":\"user\",\"content\":\"<user_info>OS: linux. Workspace: /home/ada/src/ledger "
    "api</user_info>\\n\\n<user_query>\\nWhy does the balance endpoint round twice?\\n"
    "</user_query>\"}",
    "{\"id\":\"1\",\"role\":\"assistant\",\"content\":[{\"type\":\"reasoning\",\"text\":\"Look at "
    "the money helpers first.\",\"signature\":\"c2ln\"},{\"type\":\"text\",\"text\":\"Let me "
    "read the helper.\"},{\"type\":\"tool-call\",\"toolCallId\":\"toolu_01Read\",\"toolName\":"
    "\"Read\",\"args\":{\"path\":\"/home/ada/src/ledger api/src/money.py\"}}]}",
    "{\"role\":\"tool\",\"id\":\"toolu_01Read\",\"content\":[{\"type\":\"tool-result\","
    "\"toolName\":\"Read\",\"toolCallId\":\"toolu_01Read\",\"result\":[{\"type\":\"text\","
    "\"text\":\"def to_cents(x): return round(round(x, 2) * 100)\"}],\"isError\":false}]}",
    "{\"id\":\"1\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"to_cents "
    "rounds to 2 places and then again to whole cents.\"}]}",
    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"<attached_files>src/money.py"
    "</attached_files>\"}]}",
};
#define NMSG (sizeof messages / sizeof messages[0])

static void sha256_hex(const void *p, size_t n, char out[65], unsigned char raw[32])
{
    unsigned int len = 0;
    assert_int_equal(EVP_Digest(p, n, raw, &len, EVP_sha256(), NULL), 1);
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void exec_sql(sqlite3 *h, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sql: %s", err ? err : "?");
}

/* Stores a blob; its id (SHA-256 hex) in id, raw in raw. */
static void put_blob(sqlite3 *h, const void *data, size_t n, char id[65], unsigned char raw[32])
{
    sha256_hex(data, n, id, raw);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "INSERT OR IGNORE INTO blobs(id, data) VALUES(?1, ?2)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(st, 2, data, (int)n, SQLITE_TRANSIENT);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

/* A length-delimited protobuf field (lengths below 128). */
static size_t pb_field(unsigned char *out, unsigned field, const void *v, size_t n)
{
    assert_true(n < 128);
    out[0] = (unsigned char)(field << 3 | 2);
    out[1] = (unsigned char)n;
    memcpy(out + 2, v, n);
    return n + 2;
}

/*
 * Writes the chat's tree for messages [0, n) (plus `extra`, a message
 * JSON, when not NULL): the first three under a node, the rest directly
 * under the root, which names the workspace; the meta row points at it.
 * missing: name a child blob the database lacks.
 */
static void write_tree(sqlite3 *h, size_t n, const char *extra, int missing)
{
    unsigned char node[512], root[1024];
    size_t nn = 0, nr = 0;
    char id[65];
    unsigned char raw[32];
    for (size_t i = 0; i < n; i++) {
        put_blob(h, messages[i], strlen(messages[i]), id, raw);
        if (i < 3)
            nn += pb_field(node + nn, 1, raw, 32);
        else
            nr += pb_field(root + nr, 1, raw, 32);
        if (i == 2) {
            unsigned char nraw[32];
            put_blob(h, node, nn, id, nraw);
            memmove(root + 34, root, nr);
            pb_field(root, 1, nraw, 32);
            nr += 34;
        }
    }
    if (extra) {
        put_blob(h, extra, strlen(extra), id, raw);
        nr += pb_field(root + nr, 1, raw, 32);
    }
    if (missing) {
        memset(raw, 0xab, sizeof raw);
        nr += pb_field(root + nr, 1, raw, 32);
    }
    const char *ws = "file:///home/ada/src/ledger%20api";
    nr += pb_field(root + nr, 9, ws, strlen(ws));
    put_blob(h, root, nr, id, raw);
    char meta[600], hex[1300];
    snprintf(meta, sizeof meta,
             "{\"agentId\":\"" CHAT "\",\"latestRootBlobId\":\"%s\",\"name\":\"Double "
             "rounding\",\"mode\":\"auto-run\",\"createdAt\":1768862746153,\"lastUsedModel\":"
             "\"gpt-5\"}",
             id);
    for (size_t i = 0; meta[i]; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)meta[i]);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "INSERT OR REPLACE INTO meta(key, value) VALUES('0', ?1)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, hex, -1, SQLITE_TRANSIENT);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

static sqlite3 *open_chat(const fx *f)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->chatdb, &h), SQLITE_OK);
    return h;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "cursor") < 0)
        return -1;
    snprintf(f->home, sizeof f->home, "%s/cursor", f->dir);
    snprintf(f->chatdb, sizeof f->chatdb, "%s/chats/6a4ed208d874bc31c17fb549de8edded/" CHAT,
             f->home);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", f->chatdb);
    if (system(cmd) != 0)
        return -1;
    strncat(f->chatdb, "/store.db", sizeof f->chatdb - strlen(f->chatdb) - 1);
    tb_spec(f->dir, "archive", f->db, sizeof f->db);
    sqlite3 *h = open_chat(f);
    exec_sql(h, "PRAGMA journal_mode=WAL; CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);"
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);");
    write_tree(h, 5, NULL, 0);
    sqlite3_close(h);
    *state = f;
    return 0;
}

static void sync_cursor(const fx *f, sync_report *rep)
{
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.cursor_home = f->home, .hostname = "test"};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

static void chat_reads_as_messages(void **state)
{
    fx *f = *state;
    sync_report rep;
    sync_cursor(f, &rep);
    assert_int_equal(rep.cursor_found, 1);
    assert_int_equal(rep.files_seen, 1);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.lines_malformed, 0);
    assert_int_equal(rep.messages_added, 6);
    char *d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "project ledger api /home/ada/src/ledger api cursor sessions=1 "
                              "messages=6"));
    assert_non_null(strstr(d, "session " CHAT " source=cursor project=ledger api title=Double "
                              "rounding start=2026-01-19T22:45:46.153Z"));
    assert_non_null(strstr(d, "model=gpt-5"));
    /* every message at the chat's time: Cursor keeps none per message */
    assert_non_null(strstr(d, "0 system 2026-01-19T22:45:46.153Z tool=- input=- call=- err=0 "
                              "line=2 "));
    assert_non_null(strstr(d, "| You are an AI coding assistant, powered by GPT-5."));
    /* the query typed, without the context Cursor added */
    assert_non_null(strstr(d, "1 user 2026-01-19T22:45:46.153Z tool=- input=- call=- err=0 "
                              "line=3 "));
    assert_non_null(strstr(d, "| Why does the balance endpoint round twice?\n"));
    assert_non_null(strstr(d, "| [thinking] Look at the money helpers first.\\nLet me read the "
                              "helper.\n"));
    assert_non_null(strstr(d,
                           "3 assistant 2026-01-19T22:45:46.153Z tool=Read "
                           "input=/home/ada/src/ledger api/src/money.py call=toolu_01Read err=0"));
    assert_non_null(strstr(d, "4 tool 2026-01-19T22:45:46.153Z tool=Read input=- "
                              "call=toolu_01Read err=0"));
    assert_non_null(strstr(d, "| def to_cents(x): return round(round(x, 2) * 100)"));
    assert_non_null(strstr(d, "| to_cents rounds to 2 places and then again to whole cents."));
    free(d);

    /* nothing changed: the database is not opened again */
    sync_cursor(f, &rep);
    assert_int_equal(rep.files_unchanged, 1);
    assert_int_equal(rep.messages_added, 0);
}

static void added_message_appends_and_writers_are_not_waited_for(void **state)
{
    fx *f = *state;
    sync_report rep;
    sync_cursor(f, &rep);
    int64_t first = ts_message_id(f->db, CHAT, 1);
    assert_true(first > 0);

    /* Cursor writes the next message but has not committed it */
    sqlite3 *w = open_chat(f);
    exec_sql(w, "BEGIN IMMEDIATE");
    write_tree(w, 6, NULL, 0);
    sync_cursor(f, &rep); /* reads the committed tree, without waiting */
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.messages_added, 0);
    exec_sql(w, "COMMIT");
    sqlite3_close(w);

    sync_cursor(f, &rep);
    assert_int_equal(rep.files_read, 1);
    assert_int_equal(rep.files_reparsed, 0);
    assert_int_equal(rep.messages_added, 1);
    assert_int_equal(ts_message_id(f->db, CHAT, 1), first);
    char *d = ts_dump(f->db, 120);
    /* context without a query: kept, as a system message */
    assert_non_null(strstr(d, "6 system 2026-01-19T22:45:46.153Z tool=- input=- call=- err=0"));
    assert_non_null(strstr(d, "| <attached_files>src/money.py</attached_files>"));
    free(d);
}

static void edited_chat_keeps_ids_and_missing_blobs_count(void **state)
{
    fx *f = *state;
    sync_report rep;
    sync_cursor(f, &rep);
    int64_t ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = ts_message_id(f->db, CHAT, i);

    /* the last answer replaced (a resubmitted turn), and a blob missing */
    sqlite3 *w = open_chat(f);
    write_tree(w, 4,
               "{\"id\":\"1\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
               "\"It rounds twice: once in to_cents, once in the view.\"}]}",
               1);
    sqlite3_close(w);
    sync_cursor(f, &rep);
    assert_int_equal(rep.files_reparsed, 1);
    assert_int_equal(rep.lines_malformed, 1);
    assert_non_null(strstr(rep.examples[0], "store.db:7: blobs abababab"));
    assert_non_null(strstr(rep.examples[0], "missing"));
    for (int i = 0; i < 5; i++)
        assert_int_equal(ts_message_id(f->db, CHAT, i), ids[i]);
    char *d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "| It rounds twice: once in to_cents, once in the view."));
    assert_null(strstr(d, "then again to whole cents"));
    assert_non_null(strstr(d, "messages=6\n"));
    free(d);
}

/* A message whose bytes are not UTF-8 (Latin-1 typed into a prompt): kept,
   the bad byte as U+FFFD, and the chat with it. */
static void message_not_utf8_is_kept(void **state)
{
    fx *f = *state;
    sqlite3 *w = open_chat(f);
    write_tree(w, 5, "{\"role\":\"user\",\"content\":\"<user_query>caf\xe9 au lait</user_query>\"}",
               0);
    sqlite3_close(w);
    sync_report rep;
    sync_cursor(f, &rep);
    assert_int_equal(rep.files_failed, 0);
    assert_int_equal(rep.messages_added, 7);
    char *d = ts_dump(f->db, 120);
    assert_non_null(strstr(d, "6 user 2026-01-19T22:45:46.153Z"));
    assert_non_null(strstr(d, "| caf\xef\xbf\xbd au lait\n"));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(chat_reads_as_messages, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(added_message_appends_and_writers_are_not_waited_for, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(edited_chat_keeps_ids_and_missing_blobs_count, setup,
                                        ts_fixture_drop),
        cmocka_unit_test_setup_teardown(message_not_utf8_is_kept, setup, ts_fixture_drop),
    };
    return TB_RUN_GROUPS(tests);
}
