/*
 * The SQLite store's schema and its migrations. Version 1 is the first
 * schema; a later version appends one more entry to `migrations` and
 * store_sqlite_migrate() applies what a store lacks, one transaction per
 * step, recording each in the schema_version table.
 *
 * Tokenizer: unicode61 with remove_diacritics 2 and `_` as a token
 * character, as the table says; mcpage's connections register their own
 * under that name, which adds word classes and identifier parts at each
 * token's position (version 6, store_words.h; version 16 leaves out a
 * class that is its word behind the mark). Prose splits on spaces and punctuation as usual;
 * code keeps snake_case identifiers whole (`max_tokens` is one token) while `foo-bar`, `a.b.c` and
 * `path/to/file.c` split into parts that a quoted phrase query matches in order. Trigram would also
 * find substrings, but its index is 2.7x larger on the sample archive (docs/store.md) and it cannot
 * match words under three characters; we chose word tokens and phrase queries.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/sqlite/sqlite_internal.h"

/* The statement that indexes every text again (versions 6 and 16). */
#define SQ_REBUILD "INSERT INTO messages_fts(messages_fts) VALUES('rebuild');"

/* Version 13's new tables, view and trigger (below). */
#define SQ_TEXT_STEP 13
#define SQ_TEXT_BODY                                                                               \
    "DROP TRIGGER IF EXISTS message_text_ad;"                                                      \
    "DROP TRIGGER IF EXISTS message_text_au;"                                                      \
    "DROP TRIGGER IF EXISTS message_tokmap_au;"                                                    \
    "ALTER TABLE message_text RENAME TO message_body;"                                             \
    "ALTER TABLE message_body ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;"                        \
    "CREATE VIEW message_text(message_id, text) AS SELECT message_id, "                            \
    "  mcpage_text(message_id, codec, text) FROM message_body;"                                    \
    "CREATE TRIGGER message_body_ad AFTER DELETE ON message_body BEGIN"                            \
    "  INSERT INTO messages_fts(messages_fts, rowid, text)"                                        \
    "  VALUES('delete', old.message_id, mcpage_text(old.message_id, old.codec, old.text)); END;"

static const char *const migrations[] = {
    /* version 1 */
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT INTO meta VALUES('generation', 0);"
    "CREATE TABLE projects("
    "  id INTEGER PRIMARY KEY,"
    "  path TEXT NOT NULL UNIQUE,"
    "  name TEXT NOT NULL,"
    "  sources TEXT NOT NULL DEFAULT '',"
    "  session_count INTEGER NOT NULL DEFAULT 0,"
    "  message_count INTEGER NOT NULL DEFAULT 0,"
    "  first_activity TEXT NOT NULL DEFAULT '',"
    "  last_activity TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX projects_recent ON projects(last_activity, id);"
    "CREATE INDEX projects_name ON projects(name, id);"
    "CREATE INDEX projects_size ON projects(message_count, id);"
    "CREATE TABLE sessions("
    "  sid INTEGER PRIMARY KEY,"
    "  session_id TEXT NOT NULL UNIQUE,"
    "  source TEXT NOT NULL,"
    "  project_id INTEGER NOT NULL DEFAULT 0,"
    "  title TEXT,"
    "  started_at TEXT NOT NULL DEFAULT '',"
    "  ended_at TEXT NOT NULL DEFAULT '',"
    "  model TEXT,"
    "  git_branch TEXT,"
    "  message_count INTEGER NOT NULL DEFAULT 0,"
    "  parent_session_id TEXT,"
    "  source_path TEXT,"
    "  hostname TEXT,"
    "  raw_size INTEGER NOT NULL DEFAULT 0,"
    "  raw_lines INTEGER NOT NULL DEFAULT 0,"
    "  head_hash INTEGER NOT NULL DEFAULT 0,"
    "  head_len INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX sessions_started ON sessions(started_at, session_id);"
    "CREATE INDEX sessions_project ON sessions(project_id, started_at, session_id);"
    "CREATE TABLE messages("
    "  message_id INTEGER PRIMARY KEY,"
    "  sid INTEGER NOT NULL,"
    "  ordinal INTEGER NOT NULL,"
    "  role TEXT NOT NULL,"
    "  timestamp TEXT NOT NULL DEFAULT '',"
    "  tool_name TEXT,"
    "  tool_input TEXT,"
    "  tool_call_id TEXT,"
    "  is_error INTEGER NOT NULL DEFAULT 0,"
    "  line_no INTEGER NOT NULL,"
    "  byte_offset INTEGER NOT NULL,"
    "  byte_length INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX messages_session ON messages(sid, ordinal);"
    "CREATE INDEX messages_time ON messages(timestamp, message_id, sid);"
    /* Text lives apart so that message rows stay small: joins, counts and
     * scans over messages then touch few pages (a row with 1 MiB of text
     * otherwise costs a page read per row). */
    "CREATE TABLE message_text(message_id INTEGER PRIMARY KEY, text TEXT NOT NULL);"
    /* Messages per session and day, kept by each insert: the activity
     * heat map reads these instead of scanning every message. */
    "CREATE TABLE session_days("
    "  sid INTEGER NOT NULL,"
    "  day TEXT NOT NULL,"
    "  messages INTEGER NOT NULL,"
    "  PRIMARY KEY(sid, day)) WITHOUT ROWID;"
    "CREATE INDEX session_days_day ON session_days(day, sid);"
    "CREATE INDEX messages_call ON messages(sid, tool_call_id) WHERE tool_call_id IS NOT NULL;"
    "CREATE TABLE raw_chunks("
    "  id INTEGER PRIMARY KEY,"
    "  sid INTEGER NOT NULL,"
    "  offset INTEGER NOT NULL,"
    "  data BLOB NOT NULL);"
    "CREATE UNIQUE INDEX raw_chunks_at ON raw_chunks(sid, offset);"
    "CREATE TABLE source_files("
    "  path TEXT PRIMARY KEY,"
    "  session_id TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  inode INTEGER NOT NULL,"
    "  mtime_ns INTEGER NOT NULL,"
    "  consumed INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='message_text',"
    "  content_rowid='message_id', tokenize=\"unicode61 remove_diacritics 2 tokenchars '_'\");"
    /* Inserts reach the index from store code, not from a trigger: a
     * trigger makes every INSERT a statement with a savepoint, and FTS5
     * flushes its pending terms at each savepoint (measured: 4 MB/s with
     * the trigger). Deletes are rare and keep theirs. */
    "CREATE TRIGGER message_text_ad AFTER DELETE ON message_text BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, text)"
    "  VALUES('delete', old.message_id, old.text); END;"
    "CREATE TRIGGER message_text_au AFTER UPDATE OF text ON message_text BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, text)"
    "  VALUES('delete', old.message_id, old.text);"
    "  INSERT INTO messages_fts(rowid, text) VALUES(new.message_id, new.text); END;",
    /* version 2: each message's text line count, in an index that covers
     * (sid, ordinal, text_lines), so a transcript's line numbers (read_session,
     * search matches) are summed from the index without reading the texts. */
    "ALTER TABLE messages ADD COLUMN text_lines INTEGER NOT NULL DEFAULT 0;"
    "UPDATE messages SET text_lines = coalesce((SELECT CASE WHEN length(t.text) = 0 THEN 0"
    "  ELSE length(t.text) - length(replace(t.text, char(10), '')) + 1 END"
    "  FROM message_text t WHERE t.message_id = messages.message_id), 0);"
    "CREATE INDEX messages_lines ON messages(sid, ordinal, text_lines);",
    /* version 3: source files keyed by (hostname, path), so one store can
     * take syncs from several machines whose paths coincide. Existing rows
     * get the hostname of their session (the machine that read them). */
    "CREATE TABLE source_files_v2("
    "  hostname TEXT NOT NULL,"
    "  path TEXT NOT NULL,"
    "  session_id TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  inode INTEGER NOT NULL,"
    "  mtime_ns INTEGER NOT NULL,"
    "  consumed INTEGER NOT NULL,"
    "  PRIMARY KEY(hostname, path)) WITHOUT ROWID;"
    "INSERT INTO source_files_v2 SELECT coalesce((SELECT hostname FROM sessions s WHERE "
    "  s.session_id = f.session_id), ''), path, session_id, size, inode, mtime_ns, consumed "
    "  FROM source_files f;"
    "DROP TABLE source_files;"
    "ALTER TABLE source_files_v2 RENAME TO source_files;",
    /* version 4: the token map of each long text (sqlite_snippet.c): the
     * byte offset of every 256th token, so a snippet deep in a megabyte
     * tool output reads a few kilobytes around its window. Existing texts
     * get theirs here (one read of every long text, once). */
    "CREATE TABLE message_tokmap(message_id INTEGER PRIMARY KEY, offsets BLOB NOT NULL);"
    /* Texts deleted or changed, ever: readers that keep the index's row
     * lengths (sqlite_rank.c) reload them all when it moves. */
    "INSERT INTO meta VALUES('text_deletes', 0);"
    /* and tell stores apart whose files had the same inode (a deleted
     * file's number is given to a new one) */
    "INSERT INTO meta VALUES('store_id', random());"
    "INSERT INTO message_tokmap SELECT message_id, m FROM (SELECT message_id,"
    "  mcpage_tokmap(text) AS m FROM message_text) WHERE m IS NOT NULL;"
    "CREATE TRIGGER message_tokmap_ad AFTER DELETE ON message_text BEGIN"
    "  DELETE FROM message_tokmap WHERE message_id = old.message_id;"
    "  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes'; END;"
    "CREATE TRIGGER message_tokmap_au AFTER UPDATE OF text ON message_text BEGIN"
    "  DELETE FROM message_tokmap WHERE message_id = old.message_id;"
    "  UPDATE meta SET value = value + 1 WHERE key = 'text_deletes'; END;",
    /* version 5: the model calls transcripts record (store_usage_add,
     * docs/usage.md): every copy of a call, `counted` on the one a report
     * adds up; `minute` (unix minutes, UTC) buckets local days. A store
     * that already holds sessions gets their calls from its raw bytes on
     * the next sync (usage_state.backfill = 1 until then). */
    "CREATE TABLE usage_calls("
    "  id INTEGER PRIMARY KEY,"
    "  sid INTEGER NOT NULL,"
    "  source TEXT NOT NULL DEFAULT '',"
    "  message_id INTEGER,"
    "  \"timestamp\" TEXT NOT NULL DEFAULT '',"
    "  minute INTEGER,"
    "  call_key TEXT,"
    "  sidechain INTEGER NOT NULL DEFAULT 0,"
    "  model TEXT,"
    "  input INTEGER NOT NULL DEFAULT 0,"
    "  output INTEGER NOT NULL DEFAULT 0,"
    "  cache_creation INTEGER NOT NULL DEFAULT 0,"
    "  cache_creation_1h INTEGER NOT NULL DEFAULT 0,"
    "  cache_read INTEGER NOT NULL DEFAULT 0,"
    "  reasoning INTEGER NOT NULL DEFAULT 0,"
    "  cost_usd REAL NOT NULL DEFAULT 0,"
    "  cost_given INTEGER NOT NULL DEFAULT 0,"
    "  counted INTEGER NOT NULL DEFAULT 1);"
    "CREATE INDEX usage_calls_key ON usage_calls(call_key) WHERE call_key IS NOT NULL;"
    "CREATE INDEX usage_calls_sid ON usage_calls(sid);"
    "CREATE INDEX usage_calls_minute ON usage_calls(counted, minute, source);"
    "CREATE TABLE usage_state(backfill INTEGER NOT NULL);"
    "INSERT INTO usage_state SELECT CASE WHEN EXISTS(SELECT 1 FROM sessions) THEN 1 ELSE 0 END;",
    /* version 6: words a developer types (store_words.h): every text indexed
     * again by mcpage's tokenizer, which adds each word's class and each
     * identifier's parts at the token's position (sqlite_snippet.c). The
     * caches beside the index go: the kept lists and heads are of the old
     * tokens, and the moved text-delete count retires every reader's. */
    SQ_REBUILD /* skipped: version 16 follows */
    "DROP TABLE IF EXISTS impact_lists;"
    "DROP TABLE IF EXISTS impact_heads;"
    "UPDATE meta SET value = value + 1 WHERE key = 'text_deletes';",
    /* version 7: a project's display name selects exactly one project:
     * of projects sharing a name (two folders with the same last name),
     * all but the first take their parent folder, "project (srv/b)"
     * (new ones get the shortest such name: store_project_name_try) */
    "UPDATE projects SET name = name || ' (' || CASE WHEN length(path) > length(name) + 1 AND "
    "  substr(path, length(path) - length(name)) = '/' || name THEN "
    "  trim(substr(path, 1, length(path) - length(name) - 1), '/') ELSE path END || ')' "
    "WHERE EXISTS (SELECT 1 FROM projects o WHERE o.name = projects.name AND o.id < projects.id);",
    /* version 8: the counted calls added up per hour (UTC), agent, model
     * and cost kind, kept by every change to usage_calls (store_usage.c):
     * a daily, weekly, monthly, agent or model report reads these few
     * rows instead of every call. Calls without a time are in hour
     * -2^62. Filled here from the calls a store already holds. */
    "DROP TABLE IF EXISTS usage_hours;" /* made again from usage_calls */
    "CREATE TABLE usage_hours("
    "  hour INTEGER NOT NULL,"
    "  source TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  cost_given INTEGER NOT NULL,"
    "  calls INTEGER NOT NULL,"
    "  input INTEGER NOT NULL,"
    "  output INTEGER NOT NULL,"
    "  cache_creation INTEGER NOT NULL,"
    "  cache_creation_1h INTEGER NOT NULL,"
    "  cache_read INTEGER NOT NULL,"
    "  reasoning INTEGER NOT NULL,"
    "  over_input INTEGER NOT NULL,"
    "  over_output INTEGER NOT NULL,"
    "  over_cache_5m INTEGER NOT NULL,"
    "  over_cache_1h INTEGER NOT NULL,"
    "  over_cache_read INTEGER NOT NULL,"
    "  cost_usd REAL NOT NULL,"
    "  PRIMARY KEY(hour, source, model, cost_given));"
    "INSERT INTO usage_hours SELECT coalesce(minute / 60, -4611686018427387904), source, "
    "coalesce(model, ''), cost_given, count(*), sum(input), sum(output), sum(cache_creation), "
    "sum(cache_creation_1h), sum(cache_read), sum(reasoning), sum(max(input - 200000, 0)), "
    "sum(max(output - 200000, 0)), sum(max(cache_creation - cache_creation_1h - 200000, 0)), "
    "sum(max(cache_creation_1h - 200000, 0)), sum(max(cache_read - 200000, 0)), sum(cost_usd) FROM "
    "usage_calls WHERE counted = 1 GROUP BY 1, 2, 3, 4;",
    /* version 9: the calls Copilot CLI sessions record (session.shutdown,
     * sync_copilot.c), read from the raw bytes of a store's Copilot
     * sessions on the next sync (usage_state.backfill = 2: those alone) */
    ("UPDATE usage_state SET backfill = 2 WHERE backfill = 0 AND "
     "EXISTS(SELECT 1 FROM sessions WHERE source = 'copilot');"),
    /* version 10: the files tool calls wrote or edited (store_edit_add,
     * docs/store.md "File edits"): one row per file a call changed, newest
     * first by (ts, id). `added`/`removed` are -1 where the call does not
     * show them. A store that already holds sessions gets its edits from
     * its raw bytes on the next sync (edits_state.backfill = 1 until then). */
    "CREATE TABLE IF NOT EXISTS file_edits("
    "  id INTEGER PRIMARY KEY,"
    "  sid INTEGER NOT NULL,"
    "  message_id INTEGER NOT NULL DEFAULT 0,"
    "  ts TEXT NOT NULL DEFAULT '',"
    "  path TEXT NOT NULL,"
    "  tool TEXT NOT NULL DEFAULT '',"
    "  added INTEGER NOT NULL DEFAULT -1,"
    "  removed INTEGER NOT NULL DEFAULT -1,"
    "  summary TEXT);"
    "CREATE INDEX IF NOT EXISTS file_edits_time ON file_edits(ts, id);"
    "CREATE INDEX IF NOT EXISTS file_edits_path ON file_edits(path, ts, id);"
    "CREATE INDEX IF NOT EXISTS file_edits_sid ON file_edits(sid);"
    "DROP TABLE IF EXISTS edits_state;"
    "CREATE TABLE edits_state(backfill INTEGER NOT NULL);"
    "INSERT INTO edits_state SELECT CASE WHEN EXISTS(SELECT 1 FROM sessions) THEN 1 ELSE 0 END;",
    /* version 11: raw chunks compressed (store_codec.h, issue 35): each row
     * says how its bytes are kept, 0 plain (every row so far) or 1 one zstd
     * frame. The rows already stored are compressed after the next sync
     * (store_tidy: store_sqlite__raw_pack), a few a transaction, from meta
     * raw_pack_at up to raw_pack_until; later rows are written compressed. */
    "ALTER TABLE raw_chunks ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;" /* SQ_CODEC_ALTER */
    "INSERT OR REPLACE INTO meta VALUES('raw_pack_at', 0);"
    "INSERT OR REPLACE INTO meta SELECT 'raw_pack_until', coalesce(max(id), 0) FROM raw_chunks;",
    /* version 12: owners on a shared store (issue 32): who synced each
     * session ("user@machine", store_session_meta.owner). Sessions stored
     * before stay without one (NULL): only a reader who sees everything
     * (local, the static token, an admin) sees them, until a sync that
     * continues one gives it its owner. */
    "ALTER TABLE sessions ADD COLUMN owner TEXT;" /* SQ_OWNER_ALTER */
    "CREATE INDEX IF NOT EXISTS sessions_owner ON sessions(owner, started_at, session_id);",
    /* version 13: message text compressed (issue 35, sqlite_text.c): the
     * table becomes message_body, whose rows say how their text is kept
     * (codec 0 plain, every row so far, or 1 one zstd frame), and
     * message_text is a view that decodes through mcpage_text(): FTS5's
     * external content, by the name it has always had, and every reader's.
     * FTS5's index is not touched. The delete trigger gives FTS5 the
     * decoded old text (message_tokmap_ad moves with the table); texts are
     * never updated but by the tidy that compresses them, whose words and
     * token map do not change (no update triggers). The
     * rows already stored are compressed after the next sync (store_tidy:
     * store_sqlite__text_pack), from meta text_pack_at to text_pack_until. */
    SQ_TEXT_BODY /* skipped where message_body is there already */
    "INSERT OR REPLACE INTO meta VALUES('text_pack_at', 0);"
    "INSERT OR REPLACE INTO meta SELECT 'text_pack_until', coalesce(max(message_id), 0) "
    "  FROM message_body;",
    /* version 14: texts past 64 KiB kept as several zstd frames with a
     * table of their offsets (codec 2, store_codec.h), read by window;
     * version 13 kept them plain. An older binary would name such a row
     * damaged: the version tells it the store is newer instead. The
     * rows already stored are packed after the next sync, as version 13's
     * were (store_sqlite__text_pack walks them again from the start). */
    "INSERT OR REPLACE INTO meta VALUES('text_pack_at', 0);"
    "INSERT OR REPLACE INTO meta SELECT 'text_pack_until', coalesce(max(message_id), 0) "
    "  FROM message_body;",
    /* version 15: relevance by role (issue 34, STORE_RANK_TOOL_WEIGHT): the
     * kept row lengths carry whether a row is a tool's output (SQ_LEN_TOOL)
     * and the kept impact lists run by (tf, role) (IMP_TF). The caches of
     * the older form go; the next commit and tidy build them again. */
    "DROP TABLE IF EXISTS message_lengths;"
    "DROP TABLE IF EXISTS impact_lists;"
    "DROP TABLE IF EXISTS impact_heads;"
    "DELETE FROM meta WHERE key IN ('lengths_max_id', 'lengths_deletes', "
    "  'impact_heads_max_id', 'impact_heads_deletes');",
    /* version 16: a word whose class is itself behind the mark (`in`,
     * `error`: its stem is the word) no longer has the class beside it
     * (issue 35: 26% of the index's positions on real sessions); a query
     * for such a class asks for the word too (store_word_query_self).
     * Every text indexed again, the caches beside the index dropped, as
     * version 6 did. */
    SQ_REBUILD /* with the progress lines of run_step */
    "DROP TABLE IF EXISTS impact_lists;"
    "DROP TABLE IF EXISTS impact_heads;"
    "DELETE FROM meta WHERE key IN ('impact_heads_max_id', 'impact_heads_deletes');"
    "UPDATE meta SET value = value + 1 WHERE key = 'text_deletes';",
};

/* The steps that index every text again (versions 6 and 16: the first is
 * skipped, the second does it), and how often it says how far it is. */
#define SQ_REINDEX_SKIP      6
#define SQ_REINDEX_STEP      16
#define SQ_REINDEX_SAY_MIN   10000 /* messages from which it is said at all */
#define SQ_REINDEX_SAY_EVERY 5.0   /* seconds between two lines */
#define SQ_REINDEX_CHECK_OPS 100000

/* Progress of a long step, said on stderr (a sync's or a server's start). */
typedef struct step_progress {
    int64_t total;   /* messages to index */
    int64_t start;   /* store_sqlite__docs_indexed when the step began */
    double began_us; /* when it began */
    double said_us;  /* when a line was last written */
} step_progress;

static int say_progress(void *ud)
{
    step_progress *p = ud;
    double now = store_now_us();
    if (now - p->said_us < SQ_REINDEX_SAY_EVERY * 1e6)
        return 0;
    p->said_us = now;
    int64_t done = __atomic_load_n(&store_sqlite__docs_indexed, __ATOMIC_RELAXED) - p->start;
    fprintf(stderr, "mcpage: indexing words: %lld of %lld messages (%.0f s)\n", (long long)done,
            (long long)p->total, (now - p->began_us) / 1e6);
    return 0;
}

/* The step that adds raw_chunks.codec, and the statement it starts with:
 * skipped where the column is there already (a store whose recorded
 * version was set back, as the tests do; SQLite has no ADD COLUMN IF NOT
 * EXISTS). */
#define SQ_CODEC_STEP  11
#define SQ_CODEC_ALTER "ALTER TABLE raw_chunks ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;"

/* The step that adds sessions.owner, skipped likewise. */
#define SQ_OWNER_STEP  12
#define SQ_OWNER_ALTER "ALTER TABLE sessions ADD COLUMN owner TEXT;"

static int has_column(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int has = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
        has = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

static int has_codec(sqlite3 *db)
{
    return has_column(db, "SELECT 1 FROM pragma_table_info('raw_chunks') WHERE name = 'codec'");
}

/* Runs migration step `version` (0-based), saying how far a long re-index is. */
static int run_step(sqlite3 *db, int version, char **msg)
{
    const char *sql = migrations[version];
    if (version + 1 == SQ_CODEC_STEP && strncmp(sql, SQ_CODEC_ALTER, strlen(SQ_CODEC_ALTER)) == 0 &&
        has_codec(db))
        sql += strlen(SQ_CODEC_ALTER);
    if (version + 1 == SQ_OWNER_STEP && strncmp(sql, SQ_OWNER_ALTER, strlen(SQ_OWNER_ALTER)) == 0 &&
        has_column(db, "SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'owner'"))
        sql += strlen(SQ_OWNER_ALTER);
    if (version + 1 == SQ_TEXT_STEP && strncmp(sql, SQ_TEXT_BODY, strlen(SQ_TEXT_BODY)) == 0 &&
        has_column(db, "SELECT 1 FROM pragma_table_info('message_body') WHERE name = 'codec'"))
        sql += strlen(SQ_TEXT_BODY);
    if (version + 1 == SQ_REINDEX_SKIP && strncmp(sql, SQ_REBUILD, strlen(SQ_REBUILD)) == 0)
        sql += strlen(SQ_REBUILD);
    if (version + 1 != SQ_REINDEX_STEP)
        return sqlite3_exec(db, sql, NULL, NULL, msg);
    step_progress p = {.began_us = store_now_us()};
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM message_text", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        p.total = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    int say = p.total >= SQ_REINDEX_SAY_MIN;
    if (say) {
        fprintf(stderr,
                "mcpage: indexing the words of %lld messages again (identifier parts, word "
                "forms); once, for this version. Interrupting it keeps the store as it was.\n",
                (long long)p.total);
        p.start = __atomic_load_n(&store_sqlite__docs_indexed, __ATOMIC_RELAXED);
        p.said_us = p.began_us;
        sqlite3_progress_handler(db, SQ_REINDEX_CHECK_OPS, say_progress, &p);
    }
    int rc = sqlite3_exec(db, sql, NULL, NULL, msg);
    if (say) {
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the caller sets its own again */
        if (rc == SQLITE_OK)
            fprintf(stderr, "mcpage: indexed the words of %lld messages in %.1f s\n",
                    (long long)p.total, (store_now_us() - p.began_us) / 1e6);
    }
    return rc;
}

/*
 * FTS5 keeps the terms of the rows a transaction inserts in a hash and
 * writes them out as a new index segment when they pass `hashsize` bytes
 * (1 MiB by default) and at the commit; segments are then merged, four at
 * a time, level after level. A sync batch (up to 32 MiB of transcript)
 * then wrote about a dozen segments and merged them again and again: at
 * 16 MiB it writes about one segment per batch (docs/performance.md:
 * 9.22G to 7.55G instructions for a first sync of 33.8 MB). Only writers
 * hold pending terms, so the hash costs memory only in a sync.
 *
 * `automerge` 16 instead of 4: a level's segments are merged once sixteen
 * of them are there, so a first sync rewrites its batches' segments about
 * once instead of level after level (256 MB archive: 5.7% less CPU;
 * docs/performance.md), for a few more segments to look a word up in
 * (10 to 15 after the million-message archive).
 *
 * The settings live in the FTS5 table; the writer sets each one that
 * differs, in the transaction that checks the schema version.
 */
#define SQ_FTS_HASHSIZE  (16 * 1024 * 1024)
#define SQ_FTS_AUTOMERGE 16

static int fts_settings(sqlite3 *db, char **msg)
{
    static const struct {
        const char *key;
        int value;
    } want[] = {{"hashsize", SQ_FTS_HASHSIZE}, {"automerge", SQ_FTS_AUTOMERGE}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT v FROM messages_fts_config WHERE k = ?", -1, &st,
                               NULL) != SQLITE_OK)
            return -1;
        sqlite3_bind_text(st, 1, want[i].key, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        int same = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == want[i].value;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return -1;
        if (same)
            continue;
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO messages_fts(messages_fts, rank) VALUES('%s', %d)",
                 want[i].key, want[i].value);
        if (sqlite3_exec(db, sql, NULL, NULL, msg) != SQLITE_OK)
            return -1;
    }
    return 0;
}

int store_sqlite_schema_latest(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

int store_sqlite_schema_version(sqlite3 *db, int *version)
{
    sqlite3_stmt *st = NULL;
    *version = 0;
    int rc = sqlite3_prepare_v2(
        db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='schema_version'", -1,
        &st, NULL);
    if (rc != SQLITE_OK)
        return MCPAGE_ESTORE;
    int exists = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (!exists)
        return 0;
    rc = sqlite3_prepare_v2(db, "SELECT max(version) FROM schema_version", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return MCPAGE_ESTORE;
    if (sqlite3_step(st) == SQLITE_ROW)
        *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

int store_sqlite_migrate(sqlite3 *db, char *err, size_t errlen)
{
    int latest = store_sqlite_schema_latest();
    /* The version is read inside the write transaction: two writers that
     * open a fresh store at once (concurrent syncs) migrate it once. */
    for (;;) {
        char *msg = NULL;
        int version = 0;
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK)
            goto fail;
        if (store_sqlite_schema_version(db, &version) < 0) {
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            snprintf(err, errlen, "cannot read the schema version: %s", sqlite3_errmsg(db));
            return MCPAGE_ESTORE;
        }
        if (version > latest) {
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            snprintf(err, errlen, "store schema version %d is newer than this build (%d)", version,
                     latest);
            return MCPAGE_ESTATE;
        }
        if (version == latest) {
            if (fts_settings(db, &msg) < 0 ||
                sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
                goto fail_tx;
            return 0;
        }
        char bump[128];
        snprintf(bump, sizeof bump, "INSERT INTO schema_version VALUES(%d);", version + 1);
        if (version == 0 &&
            sqlite3_exec(db, "CREATE TABLE schema_version(version INTEGER NOT NULL);", NULL, NULL,
                         &msg) != SQLITE_OK)
            goto fail_tx;
        if (run_step(db, version, &msg) != SQLITE_OK)
            goto fail_tx;
        if (sqlite3_exec(db, bump, NULL, NULL, &msg) != SQLITE_OK)
            goto fail_tx;
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
            goto fail_tx;
        continue;
    fail_tx:
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    fail:
        snprintf(err, errlen, "migration to version %d failed: %s", version + 1,
                 msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return MCPAGE_ESTORE;
    }
}
