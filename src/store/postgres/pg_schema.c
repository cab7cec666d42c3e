/*
 * The PostgreSQL store's schema and its migrations, as in the SQLite
 * backend: a schema_version table and a list of steps, each applied in
 * one transaction. A transaction-scoped advisory lock makes two writers
 * that open a fresh store at once migrate it once.
 *
 * Text columns that take part in sort orders are COLLATE "C" so they
 * compare bytes like SQLite's BINARY collation and walks page the same.
 * `tsv` holds the tsvector built by pg_text.c (no parser; word classes
 * and identifier parts from store_words.h, versions 5 and 15).
 * The tables live in the first schema of the connection's search_path,
 * so several stores can share one database (tests use that).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_internal.h"

#define STR_OF_(x) #x
#define STR_OF(x)  STR_OF_(x)

/* The functions and triggers of the relevance heads (schema versions 12
 * to 15): the rank call's arguments after (tsv, q) are M for a message
 * m of the table and O for a row o of the trigger's old rows; a new
 * match is kept when its id is KEEP ("<": below, versions 12 and 13;
 * ">": above, from version 14) its group's cut row's. ADD and DEL are
 * where the word's matches among the new messages (m) and the old rows
 * (o) come from: PG_RANK_BY_LEXEME (versions 12 to 14) or PG_RANK_BY_WORD. */
#define PG_RANK_FUNCS(M, O, KEEP, ADD, DEL)                                                        \
    "CREATE OR REPLACE FUNCTION mcpage_rank_add(ids bigint[]) RETURNS void LANGUAGE sql AS $$ "    \
    "WITH a AS MATERIALIZED (SELECT t.term, mcpage_rank(m.tsv, t.q" M ") AS rk, m.message_id "     \
    "FROM " ADD "), "                                                                              \
    "x AS (INSERT INTO rank_heads SELECT a.term, a.rk, a.message_id, false FROM a LEFT JOIN "      \
    "rank_heads c ON c.cut AND c.term = a.term AND c.rk = a.rk WHERE c.message_id IS NULL OR "     \
    "a.message_id " KEEP " c.message_id) "                                                         \
    "UPDATE rank_terms t SET n = t.n + c.k FROM (SELECT term, count(*) AS k FROM a GROUP BY "      \
    "term) c WHERE t.term = c.term $$;"                                                            \
    "CREATE OR REPLACE FUNCTION mcpage_rank_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "  \
    "IF TG_OP <> 'INSERT' THEN "                                                                   \
    "WITH d AS (SELECT t.term, mcpage_rank(o.tsv, t.q" O ") AS rk, o.message_id FROM " DEL "), "   \
    "x AS (DELETE FROM rank_heads h USING d WHERE h.term = d.term AND h.rk = d.rk AND "            \
    "h.message_id = d.message_id AND NOT h.cut) "                                                  \
    "UPDATE rank_terms t SET n = t.n - c.k FROM (SELECT term, count(*) AS k FROM d GROUP BY "      \
    "term) c WHERE t.term = c.term; "                                                              \
    "END IF; "                                                                                     \
    "IF TG_OP <> 'DELETE' THEN IF EXISTS (SELECT 1 FROM new_rows n, rank_state s WHERE "           \
    "n.message_id <= s.done) THEN "                                                                \
    "PERFORM mcpage_rank_add(ARRAY(SELECT n.message_id FROM new_rows n, rank_state s WHERE "       \
    "n.message_id <= s.done)); "                                                                   \
    "END IF; END IF; RETURN NULL; END $$;"                                                         \
    "DROP TRIGGER IF EXISTS rank_add ON messages;"                                                 \
    "DROP TRIGGER IF EXISTS rank_del ON messages;"                                                 \
    "DROP TRIGGER IF EXISTS rank_upd ON messages;"                                                 \
    "CREATE TRIGGER rank_add AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows FOR EACH " \
    "STATEMENT EXECUTE FUNCTION mcpage_rank_keep();"                                               \
    "CREATE TRIGGER rank_del AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows FOR EACH " \
    "STATEMENT EXECUTE FUNCTION mcpage_rank_keep();"                                               \
    "CREATE TRIGGER rank_upd AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW "      \
    "TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mcpage_rank_keep();"

/* A word's matches by the lexeme it is kept under (versions 12 to 14). */
#define PG_RANK_BY_LEXEME(ROWS, X, WHERE)                                                          \
    ROWS ", unnest(tsvector_to_array(" X ".tsv)) AS l(lexeme), rank_terms t WHERE " WHERE          \
         " AND t.lexeme = l.lexeme"
/* A word's matches by its lexeme or by the word as written that its
 * class also matches (rank_terms.word, version 15), each once. */
#define PG_RANK_BY_WORD(ROWS, X, WHERE)                                                            \
    ROWS ", rank_terms t, (SELECT DISTINCT w.term, l.id FROM (SELECT " X ".message_id AS id, "     \
         "unnest(tsvector_to_array(" X ".tsv)) AS lexeme FROM " ROWS " WHERE " WHERE ") l JOIN "   \
         "(SELECT term, unnest(ARRAY[lexeme, word]) AS lexeme FROM rank_terms) w ON w.lexeme = "   \
         "l.lexeme) p WHERE " X ".message_id = p.id AND t.term = p.term"
#define PG_RANK_ADD(BY) BY("messages m", "m", "m.message_id = ANY(ids)")
#define PG_RANK_DEL(BY) BY("old_rows o, rank_state s", "o", "o.message_id <= s.done")

static const char *const migrations[] = {
    /* version 1 */
    "CREATE TABLE meta(id integer PRIMARY KEY CHECK (id = 1), generation bigint NOT NULL);"
    "INSERT INTO meta VALUES(1, 0);"
    "CREATE TABLE projects("
    "  id bigserial PRIMARY KEY,"
    "  path text COLLATE \"C\" NOT NULL UNIQUE,"
    "  name text COLLATE \"C\" NOT NULL,"
    "  sources text NOT NULL DEFAULT '',"
    "  session_count bigint NOT NULL DEFAULT 0,"
    "  message_count bigint NOT NULL DEFAULT 0,"
    "  first_activity text COLLATE \"C\" NOT NULL DEFAULT '',"
    "  last_activity text COLLATE \"C\" NOT NULL DEFAULT '');"
    "CREATE INDEX projects_recent ON projects(last_activity, id);"
    "CREATE INDEX projects_name ON projects(name, id);"
    "CREATE INDEX projects_size ON projects(message_count, id);"
    "CREATE TABLE sessions("
    "  sid bigserial PRIMARY KEY,"
    "  session_id text COLLATE \"C\" NOT NULL UNIQUE,"
    "  source text NOT NULL,"
    "  project_id bigint NOT NULL DEFAULT 0,"
    "  title text,"
    "  started_at text COLLATE \"C\" NOT NULL DEFAULT '',"
    "  ended_at text COLLATE \"C\" NOT NULL DEFAULT '',"
    "  model text,"
    "  git_branch text,"
    "  message_count bigint NOT NULL DEFAULT 0,"
    "  parent_session_id text,"
    "  source_path text,"
    "  hostname text,"
    "  raw_size bigint NOT NULL DEFAULT 0,"
    "  raw_lines bigint NOT NULL DEFAULT 0,"
    "  head_hash bigint NOT NULL DEFAULT 0,"
    "  head_len bigint NOT NULL DEFAULT 0);"
    "CREATE INDEX sessions_started ON sessions(started_at, session_id);"
    "CREATE INDEX sessions_project ON sessions(project_id, started_at, session_id);"
    "CREATE TABLE messages("
    "  message_id bigserial PRIMARY KEY,"
    "  sid bigint NOT NULL,"
    "  ordinal bigint NOT NULL,"
    "  role text NOT NULL,"
    "  \"timestamp\" text COLLATE \"C\" NOT NULL DEFAULT '',"
    "  text text NOT NULL DEFAULT '',"
    "  tool_name text,"
    "  tool_input text,"
    "  tool_call_id text,"
    "  is_error integer NOT NULL DEFAULT 0,"
    "  line_no bigint NOT NULL,"
    "  byte_offset bigint NOT NULL,"
    "  byte_length bigint NOT NULL,"
    "  tsv tsvector NOT NULL);"
    "CREATE UNIQUE INDEX messages_session ON messages(sid, ordinal);"
    "CREATE INDEX messages_time ON messages(\"timestamp\", message_id);"
    "CREATE INDEX messages_call ON messages(sid, tool_call_id) WHERE tool_call_id IS NOT NULL;"
    "CREATE INDEX messages_tsv ON messages USING gin(tsv);"
    "CREATE TABLE raw_chunks("
    "  sid bigint NOT NULL,"
    "  \"offset\" bigint NOT NULL,"
    "  data bytea NOT NULL,"
    "  PRIMARY KEY(sid, \"offset\"));"
    "ALTER TABLE raw_chunks ALTER COLUMN data SET STORAGE EXTERNAL;"
    "CREATE TABLE source_files("
    "  hostname text COLLATE \"C\" NOT NULL,"
    "  path text COLLATE \"C\" NOT NULL,"
    "  session_id text NOT NULL,"
    "  size bigint NOT NULL,"
    "  inode bigint NOT NULL,"
    "  mtime_ns bigint NOT NULL,"
    "  consumed bigint NOT NULL,"
    "  PRIMARY KEY(hostname, path));"
    /* The Monday of a timestamp's week, or NULL when it is not a date
     * (SQLite's date() gives NULL there too; a cast would fail). */
    "CREATE FUNCTION mcpage_week(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$"
    " BEGIN RETURN to_char(date_trunc('week', substr(t, 1, 10)::date), 'YYYY-MM-DD');"
    " EXCEPTION WHEN others THEN RETURN NULL; END $$;",
    /* version 2: each message's text line count (store_message_text_lines),
     * covered by an index with the ordinal so transcripts map messages to
     * line numbers without reading texts */
    "ALTER TABLE messages ADD COLUMN text_lines bigint NOT NULL DEFAULT 0;"
    "UPDATE messages SET text_lines = CASE WHEN text = '' THEN 0 ELSE "
    "  length(text) - length(replace(text, chr(10), '')) + 1 END WHERE text <> '';"
    "CREATE INDEX messages_lines ON messages(sid, ordinal, text_lines);",
    /* version 3: HTTP sessions ended with DELETE, shared by every server
     * instance (store_ended_*); `ended_us` is the database's clock, the
     * position instances poll from */
    "CREATE TABLE ended_sessions("
    "  key bytea PRIMARY KEY,"
    "  until_s bigint NOT NULL,"
    "  ended_us bigint NOT NULL"
    "    DEFAULT (extract(epoch from clock_timestamp()) * 1000000)::bigint);"
    "CREATE INDEX ended_sessions_time ON ended_sessions(ended_us);",
    /* version 4: the model calls transcripts record (store_usage_add,
     * docs/usage.md): every copy of a call, `counted` on the one a report
     * adds up; `minute` (unix minutes, UTC) buckets local days. A store
     * that already holds sessions gets their calls from its raw bytes on
     * the next sync (usage_state.backfill = 1 until then). */
    "CREATE TABLE usage_calls("
    "  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  sid bigint NOT NULL,"
    "  source TEXT NOT NULL DEFAULT '',"
    "  message_id bigint,"
    "  \"timestamp\" TEXT NOT NULL DEFAULT '',"
    "  minute bigint,"
    "  call_key TEXT,"
    "  sidechain bigint NOT NULL DEFAULT 0,"
    "  model TEXT,"
    "  input bigint NOT NULL DEFAULT 0,"
    "  output bigint NOT NULL DEFAULT 0,"
    "  cache_creation bigint NOT NULL DEFAULT 0,"
    "  cache_creation_1h bigint NOT NULL DEFAULT 0,"
    "  cache_read bigint NOT NULL DEFAULT 0,"
    "  reasoning bigint NOT NULL DEFAULT 0,"
    "  cost_usd double precision NOT NULL DEFAULT 0,"
    "  cost_given bigint NOT NULL DEFAULT 0,"
    "  counted bigint NOT NULL DEFAULT 1);"
    "CREATE INDEX usage_calls_key ON usage_calls(call_key) WHERE call_key IS NOT NULL;"
    "CREATE INDEX usage_calls_sid ON usage_calls(sid);"
    "CREATE INDEX usage_calls_minute ON usage_calls(counted, minute, source);"
    "CREATE TABLE usage_state(backfill INTEGER NOT NULL);"
    "INSERT INTO usage_state SELECT CASE WHEN EXISTS(SELECT 1 FROM sessions) THEN 1 ELSE 0 END;",
    /* version 5: words a developer types (store_words.h): every message's
     * tsvector built again with word classes and identifier parts, in C
     * (retokenize(), below), after this statement; version 15 builds them
     * again, so since then this step does nothing */
    "SELECT 1",
    /* version 6: a project's display name selects exactly one project:
     * of projects sharing a name (two folders with the same last name),
     * all but the first take their parent folder, "project (srv/b)"
     * (new ones get the shortest such name: store_project_name_try) */
    "UPDATE projects SET name = name || ' (' || CASE WHEN length(path) > length(name) + 1 AND "
    "  substr(path, length(path) - length(name)) = '/' || name THEN "
    "  btrim(substr(path, 1, length(path) - length(name) - 1), '/') ELSE path END || ')' "
    "WHERE EXISTS (SELECT 1 FROM projects o WHERE o.name = projects.name AND o.id < projects.id);",
    /* version 7: the counted calls added up per hour (UTC), agent, model
     * and cost kind, kept by every change to usage_calls (store_usage.c):
     * a daily, weekly, monthly, agent or model report reads these few
     * rows instead of every call. Calls without a time are in hour
     * -2^62. Filled here from the calls a store already holds. */
    "DROP TABLE IF EXISTS usage_hours;" /* made again from usage_calls */
    "CREATE TABLE usage_hours("
    "  hour bigint NOT NULL,"
    "  source TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  cost_given bigint NOT NULL,"
    "  calls bigint NOT NULL,"
    "  input bigint NOT NULL,"
    "  output bigint NOT NULL,"
    "  cache_creation bigint NOT NULL,"
    "  cache_creation_1h bigint NOT NULL,"
    "  cache_read bigint NOT NULL,"
    "  reasoning bigint NOT NULL,"
    "  over_input bigint NOT NULL,"
    "  over_output bigint NOT NULL,"
    "  over_cache_5m bigint NOT NULL,"
    "  over_cache_1h bigint NOT NULL,"
    "  over_cache_read bigint NOT NULL,"
    "  cost_usd double precision NOT NULL,"
    "  PRIMARY KEY(hour, source, model, cost_given));"
    "INSERT INTO usage_hours SELECT coalesce(minute / 60, -4611686018427387904), source, "
    "coalesce(model, ''), cost_given, count(*), sum(input), sum(output), sum(cache_creation), "
    "sum(cache_creation_1h), sum(cache_read), sum(reasoning), sum(greatest(input - 200000, 0)), "
    "sum(greatest(output - 200000, 0)), sum(greatest(cache_creation - cache_creation_1h - 200000, "
    "0)), sum(greatest(cache_creation_1h - 200000, 0)), sum(greatest(cache_read - 200000, 0)), "
    "sum(cost_usd) FROM usage_calls WHERE counted = 1 GROUP BY 1, 2, 3, 4;",
    /* version 8: the calls Copilot CLI sessions record (session.shutdown,
     * sync_copilot.c), read from the raw bytes of a store's Copilot
     * sessions on the next sync (usage_state.backfill = 2: those alone) */
    ("UPDATE usage_state SET backfill = 2 WHERE backfill = 0 AND "
     "EXISTS(SELECT 1 FROM sessions WHERE source = 'copilot');"),
    /* version 9: the files tool calls wrote or edited (store_edit_add,
     * docs/store.md "File edits"), as SQLite's version 10. */
    "CREATE TABLE IF NOT EXISTS file_edits("
    "  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  sid bigint NOT NULL,"
    "  message_id bigint NOT NULL DEFAULT 0,"
    "  ts text COLLATE \"C\" NOT NULL DEFAULT '',"
    "  path text COLLATE \"C\" NOT NULL,"
    "  tool text NOT NULL DEFAULT '',"
    "  added bigint NOT NULL DEFAULT -1,"
    "  removed bigint NOT NULL DEFAULT -1,"
    "  summary text);"
    "CREATE INDEX IF NOT EXISTS file_edits_time ON file_edits(ts, id);"
    "CREATE INDEX IF NOT EXISTS file_edits_path ON file_edits(path, ts, id);"
    "CREATE INDEX IF NOT EXISTS file_edits_sid ON file_edits(sid);"
    "DROP TABLE IF EXISTS edits_state;"
    "CREATE TABLE edits_state(backfill integer NOT NULL);"
    "INSERT INTO edits_state SELECT CASE WHEN EXISTS(SELECT 1 FROM sessions) THEN 1 ELSE 0 END;",
    /* version 10: raw chunks compressed (store_codec.h, issue 35), as
     * SQLite's version 11: `codec` 0 plain (every row so far) or 1 one zstd
     * frame (the column stays STORAGE EXTERNAL: a frame is not compressed
     * again). The rows already stored are compressed after the next sync
     * (store_tidy: pg_tidy), from the (sid, offset) in raw_pack, whose row
     * goes when all are done. */
    "ALTER TABLE raw_chunks ADD COLUMN IF NOT EXISTS codec smallint NOT NULL DEFAULT 0;"
    "DROP TABLE IF EXISTS raw_pack;"
    "CREATE TABLE raw_pack(sid bigint NOT NULL, \"offset\" bigint NOT NULL);"
    "INSERT INTO raw_pack SELECT -1, -1 WHERE EXISTS (SELECT 1 FROM raw_chunks WHERE codec = 0);",
    /* version 11: owners on a shared store (issue 32), as SQLite's version
     * 12: sessions.owner, NULL for the sessions stored before. */
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner text COLLATE \"C\";"
    "CREATE INDEX IF NOT EXISTS sessions_owner ON sessions(owner, started_at, session_id);",
    /* version 12: relevance heads of the commonest words (issue 35,
     * docs/store.md "Relevance heads"). mcpage_rank() is the one rank
     * expression (searches, grouped searches, the heads); rank_terms the
     * words that have heads (chosen by pg_tidy) and their match counts;
     * rank_heads, per word and rank, the matches whose id is below the
     * group's cut row (cut: the first match not kept; no cut row: every
     * match is kept), of the messages up to rank_state.done: later ones
     * are added by the writer's tidy (mcpage_rank_add), and read as they
     * are until then. The trigger keeps the heads in step with deletes,
     * updates and inserts of messages up to `done`, in the writer's
     * transaction. */
    "CREATE OR REPLACE FUNCTION mcpage_rank(v tsvector, q tsquery) RETURNS float8 LANGUAGE sql "
    "IMMUTABLE PARALLEL SAFE AS $$ SELECT (-ts_rank(v, q))::float8 $$;"
    "CREATE TABLE IF NOT EXISTS rank_terms(term integer PRIMARY KEY, lexeme text COLLATE \"C\" "
    "NOT NULL UNIQUE, q tsquery NOT NULL, n bigint NOT NULL);"
    "CREATE TABLE IF NOT EXISTS rank_heads(term integer NOT NULL, rk float8 NOT NULL, "
    "message_id bigint NOT NULL, cut boolean NOT NULL, PRIMARY KEY (term, rk, message_id));"
    "CREATE INDEX IF NOT EXISTS rank_heads_cuts ON rank_heads(term, rk) INCLUDE (message_id) "
    "WHERE cut;"
    "CREATE TABLE IF NOT EXISTS rank_state(done bigint NOT NULL);"
    "INSERT INTO rank_state SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM rank_state);" PG_RANK_FUNCS(
        "", "", "<", PG_RANK_ADD(PG_RANK_BY_LEXEME), PG_RANK_DEL(PG_RANK_BY_LEXEME)),
    /* version 13: relevance by role (issue 34, docs/store.md "Relevance by
     * role"): mcpage_rank() takes the message's role and a tool's output
     * scores STORE_RANK_TOOL_WEIGHT of ts_rank, as on SQLite. The heads'
     * functions call it with the role; the heads held are emptied (rank_terms,
     * rank_heads) and the next tidy chooses and builds them again. */
    "DROP FUNCTION IF EXISTS mcpage_rank(tsvector, tsquery);"
    "CREATE OR REPLACE FUNCTION mcpage_rank(v tsvector, q tsquery, r text) RETURNS float8 "
    "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT (-ts_rank(v, q))::float8 * CASE WHEN "
    "r = 'tool' THEN " STORE_RANK_TOOL_WEIGHT_SQL "::float8 ELSE 1::float8 END $$;"
    "TRUNCATE rank_heads, rank_terms;" PG_RANK_FUNCS(", m.role", ", o.role", "<",
                                                     PG_RANK_ADD(PG_RANK_BY_LEXEME),
                                                     PG_RANK_DEL(PG_RANK_BY_LEXEME)),
    /* version 14: equal ranks newest first (issue 34, docs/store.md
     * "Relevance by role"): a relevance page orders (rank, message_id
     * DESC), so the heads keep per word and rank the matches whose id is
     * above the group's cut row (the newest; a new match joins its group
     * unless it is below the cut). The heads held are emptied and the next
     * tidy chooses and builds them again. */
    "TRUNCATE rank_heads, rank_terms;" PG_RANK_FUNCS(", m.role", ", o.role", ">",
                                                     PG_RANK_ADD(PG_RANK_BY_LEXEME),
                                                     PG_RANK_DEL(PG_RANK_BY_LEXEME)),
    /* version 15: a word whose class is itself behind the mark (`in`,
     * `error`: its stem is the word) no longer has the class beside it
     * (issue 35); a query for such a class asks for `'~in' | 'in'`
     * (store_word_query_self). Every message's tsvector built again
     * (retokenize(), below, after this statement); rank_terms.word is the
     * word as written a word's class also matches (NULL: none), and the
     * heads' functions find a word's matches by either. The heads held are
     * emptied; the next tidy chooses and builds them again. */
    "TRUNCATE rank_heads, rank_terms;"
    "ALTER TABLE rank_terms ADD COLUMN IF NOT EXISTS word text COLLATE \"C\";" PG_RANK_FUNCS(
        ", m.role", ", o.role", ">", PG_RANK_ADD(PG_RANK_BY_WORD), PG_RANK_DEL(PG_RANK_BY_WORD)),
};

static void pg_msg(PGconn *db, const PGresult *r, char *err, size_t errlen, const char *what);

/* The step whose texts are tokenized again (version 5's too, before
 * version 15 did it again), and its batches. */
#define PG_RETOKENIZE_STEP  15
#define PG_RETOKENIZE_BATCH 500
#define PG_RETOKENIZE_SAY   10000 /* messages from which it says how far it is */

/*
 * Builds every message's tsvector again (pg_text.c), by message id in
 * batches, inside the migration's transaction: interrupted, the store
 * stays as it was and the next writer starts over.
 */
static int retokenize(PGconn *db, char *err, size_t errlen)
{
    long long after = 0, done = 0, total = 0;
    PGresult *r = PQexec(db, "SELECT count(*) FROM messages");
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        total = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    if (total >= PG_RETOKENIZE_SAY)
        (void)fprintf(
            stderr,
            "mcpage: indexing the words of %lld messages again (identifier parts, word "
            "forms); once, for this version. Interrupting it keeps the store as it was.\n",
            total);
    for (;;) {
        char at[24];
        (void)snprintf(at, sizeof at, "%lld", after);
        const char *params[1] = {at};
        r = PQexecParams(db,
                         "SELECT message_id, text FROM messages WHERE message_id > $1::bigint "
                         "ORDER BY message_id LIMIT " STR_OF(PG_RETOKENIZE_BATCH),
                         1, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            pg_msg(db, r, err, errlen,
                   "migration to version " STR_OF(PG_RETOKENIZE_STEP) " (reading texts)");
            PQclear(r);
            return MCPAGE_ESTORE;
        }
        int n = PQntuples(r);
        if (n == 0) {
            PQclear(r);
            break;
        }
        /* the batch as two array literals: ids and tsvector texts */
        size_t cap = 64, len = 0;
        char *ids = malloc((size_t)n * 24 + 8);
        char *tsvs = malloc(cap);
        int rc = ids && tsvs ? 0 : MCPAGE_ENOMEM;
        size_t il = 0;
        if (rc == 0) {
            ids[il++] = '{';
            tsvs[len++] = '{';
        }
        for (int i = 0; rc == 0 && i < n; i++) {
            char *tsv = NULL;
            if ((rc = store_pg_tsvector(PQgetvalue(r, i, 1), &tsv)) < 0)
                break;
            /* an array element: quoted, with " and \ escaped */
            size_t need = len + 2 * strlen(tsv) + 8;
            if (need > cap) {
                while (cap < need)
                    cap *= 2;
                char *nt = realloc(tsvs, cap);
                if (!nt) {
                    free(tsv);
                    rc = MCPAGE_ENOMEM;
                    break;
                }
                tsvs = nt;
            }
            if (i) {
                ids[il++] = ',';
                tsvs[len++] = ',';
            }
            il += (size_t)snprintf(ids + il, 24, "%s", PQgetvalue(r, i, 0));
            tsvs[len++] = '"';
            for (const char *c = tsv; *c; c++) {
                if (*c == '"' || *c == '\\')
                    tsvs[len++] = '\\';
                tsvs[len++] = *c;
            }
            tsvs[len++] = '"';
            free(tsv);
        }
        after = atoll(PQgetvalue(r, n - 1, 0));
        PQclear(r);
        if (rc == 0) {
            ids[il++] = '}';
            ids[il] = 0;
            tsvs[len++] = '}';
            tsvs[len] = 0;
            const char *up[2] = {ids, tsvs};
            r = PQexecParams(db,
                             "UPDATE messages m SET tsv = u.t::tsvector FROM "
                             "unnest($1::bigint[], $2::text[]) AS u(id, t) WHERE m.message_id = "
                             "u.id",
                             2, NULL, up, NULL, NULL, 0);
            if (PQresultStatus(r) != PGRES_COMMAND_OK) {
                pg_msg(db, r, err, errlen,
                       "migration to version " STR_OF(PG_RETOKENIZE_STEP) " (writing tokens)");
                rc = MCPAGE_ESTORE;
            }
            PQclear(r);
        }
        free(ids);
        free(tsvs);
        if (rc < 0) {
            if (rc == MCPAGE_ENOMEM)
                (void)snprintf(
                    err, errlen,
                    "migration to version " STR_OF(PG_RETOKENIZE_STEP) ": out of memory");
            return MCPAGE_ESTORE;
        }
        done += n;
        if (total >= PG_RETOKENIZE_SAY && done % (PG_RETOKENIZE_BATCH * 100LL) == 0)
            (void)fprintf(stderr, "mcpage: indexing words: %lld of %lld messages\n", done, total);
    }
    return 0;
}

int store_pg_schema_latest(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

static void pg_msg(PGconn *db, const PGresult *r, char *err, size_t errlen, const char *what)
{
    const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(db);
    size_t n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
        n--;
    snprintf(err, errlen, "%s: %.*s", what, (int)n, m);
}

int store_pg_schema_version(PGconn *db, int *version, char *err, size_t errlen)
{
    *version = 0;
    PGresult *r = PQexec(db, "SELECT to_regclass('schema_version') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        pg_msg(db, r, err, errlen, "cannot read the schema version");
        PQclear(r);
        return MCPAGE_ESTORE;
    }
    int exists = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!exists)
        return 0;
    r = PQexec(db, "SELECT coalesce(max(version), 0) FROM schema_version");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        pg_msg(db, r, err, errlen, "cannot read the schema version");
        PQclear(r);
        return MCPAGE_ESTORE;
    }
    *version = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

static int run(PGconn *db, const char *sql, char *err, size_t errlen, const char *what)
{
    PGresult *r = PQexec(db, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        pg_msg(db, r, err, errlen, what);
        PQclear(r);
        return MCPAGE_ESTORE;
    }
    PQclear(r);
    return 0;
}

int store_pg_migrate(PGconn *db, char *err, size_t errlen)
{
    int latest = store_pg_schema_latest();
    for (;;) {
        char sql[160];
        if (run(db, "BEGIN", err, errlen, "migration") < 0)
            return MCPAGE_ESTORE;
        snprintf(sql, sizeof sql, "SELECT pg_advisory_xact_lock(%d)", PG_MIGRATE_LOCK);
        if (run(db, sql, err, errlen, "migration lock") < 0)
            goto fail;
        int version = 0;
        if (store_pg_schema_version(db, &version, err, errlen) < 0)
            goto fail;
        if (version > latest) {
            snprintf(err, errlen, "store schema version %d is newer than this build (%d)", version,
                     latest);
            PQclear(PQexec(db, "ROLLBACK"));
            return MCPAGE_ESTATE;
        }
        if (version == latest)
            return run(db, "COMMIT", err, errlen, "migration");
        if (version == 0 && run(db, "CREATE TABLE schema_version(version integer NOT NULL)", err,
                                errlen, "migration to version 1") < 0)
            goto fail;
        char what[64];
        snprintf(what, sizeof what, "migration to version %d", version + 1);
        if (run(db, migrations[version], err, errlen, what) < 0)
            goto fail;
        if (version + 1 == PG_RETOKENIZE_STEP && retokenize(db, err, errlen) < 0)
            goto fail;
        snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES(%d)", version + 1);
        if (run(db, sql, err, errlen, what) < 0 || run(db, "COMMIT", err, errlen, what) < 0)
            goto fail;
    }
fail:
    PQclear(PQexec(db, "ROLLBACK"));
    return MCPAGE_ESTORE;
}
