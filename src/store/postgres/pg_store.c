/*
 * The PostgreSQL store backend: every operation of store_ops with libpq.
 * The SQL mirrors the SQLite backend's statement for statement: the same
 * filters, the same sort keys and tie-breakers (text compared as bytes,
 * COLLATE "C"), the same keyset row comparisons, so a walk pages the same
 * on either backend. Differences are in docs/store.md: relevance is
 * ts_rank (negated, lower is better, like bm25; a tool's output times
 * STORE_RANK_TOOL_WEIGHT) instead of bm25, and
 * tokens come from pg_text.c.
 *
 * Writers: store_begin() opens a READ COMMITTED transaction and locks the
 * single row of `meta` (SELECT ... FOR UPDATE): write transactions run one
 * at a time, as SQLite's BEGIN IMMEDIATE makes them, so two sync processes
 * never interleave half-done batches or race on a project's aggregates;
 * readers are never blocked. The commit bumps the generation with UPDATE
 * ... RETURNING in the same transaction when rows changed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_internal.h"
#include "store/store_words.h"

#define CONN(s) ((pg_conn *)(s)->impl)

/* ---- the shared SQL (store_sql.h) ---------------------------------- */

const store_sql_dialect pg_dialect = {
    .numbered = 1,      /* $1, $2, ... */
    .quote = '"',       /* "timestamp", "offset" */
    .true_sql = "true", /* WHERE true */
    .find = "strpos",   /* strpos(haystack, needle) */
};

/* Runs a built statement, its parameters as text (numbers formatted
 * here); NULL with the failure recorded on `s`. */
static PGresult *q_run(store *s, const store_sql *q)
{
    if (q->overflow) {
        store_fail(s, MCPAGE_ERANGE, "generated statement too long");
        return NULL;
    }
    const char *vals[STORE_SQL_PARAMS];
    char nums[STORE_SQL_PARAMS][32];
    for (int i = 0; i < q->nparams; i++) {
        const store_sql_param *p = &q->params[i];
        vals[i] = p->s;
        if (p->type == STORE_KEY_INT)
            snprintf(nums[i], sizeof nums[i], "%" PRId64, p->i);
        else if (p->type == STORE_KEY_REAL)
            snprintf(nums[i], sizeof nums[i], "%.17g", p->r);
        if (p->type != STORE_KEY_TEXT)
            vals[i] = nums[i];
    }
    return store_pg_exec(s, q->text, q->nparams, vals, NULL, NULL, 0);
}

/* One statement with up to 16 text parameters, by value list. */
static PGresult *run(store *s, const char *sql, int n, const char *const *vals)
{
    return store_pg_exec(s, sql, n, vals, NULL, NULL, 0);
}

static int64_t num(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* One row of a result, for the shared row decoders (pg_sql_row). */
typedef struct pg_at {
    const PGresult *r;
    int row;
} pg_at;

static const char *at_text(void *res, int col)
{
    const pg_at *a = res;
    return PQgetisnull(a->r, a->row, col) ? NULL : PQgetvalue(a->r, a->row, col);
}

static int64_t at_int64(void *res, int col)
{
    const pg_at *a = res;
    return num(a->r, a->row, col);
}

static double at_real(void *res, int col)
{
    const pg_at *a = res;
    return strtod(PQgetvalue(a->r, a->row, col), NULL);
}

static store_sql_row pg_sql_row(pg_at *at)
{
    return (store_sql_row){.text = at_text, .int64 = at_int64, .real = at_real, .res = at};
}

static int pg_sql_rows(store *s, const store_sql *q, store_sql_each_fn each, void *ctx)
{
    PGresult *r = q_run(s, q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r), rc = 0;
    for (int i = 0; i < n && rc >= 0 && each; i++) {
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        rc = each(ctx, &row);
    }
    PQclear(r);
    return rc < 0 ? rc : 0;
}

/* Column as a malloc'd string; NULL for NULL, and for '' when `opt`. */
static int col_dup(const PGresult *r, int row, int col, int opt, char **out)
{
    pg_at at = {r, row};
    store_sql_row sr = pg_sql_row(&at);
    return store_sql_col_dup(&sr, col, opt, out);
}

/* A zeroed array of n rows; NULL for none (as the SQLite backend leaves
 * an empty result: callers may skip the free when count is 0). */
static void *rows_alloc(int n, size_t elem)
{
    return n > 0 ? calloc((size_t)n, elem) : NULL;
}

/* ---- projects ------------------------------------------------------- */

static int pg_projects_list(store *s, const store_project_filter *f, const store_page *pg,
                            store_projects *out)
{
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "SELECT " STORE_SQL_PROJECT_COLS " FROM ");
    store_sql_projects_from(&q, f->view);
    store_sql_project_where(&q, f);
    const char *order, *cmp;
    store_key_type types[2];
    store_project_order(f->sort, &order, &cmp, types);
    int rc = store_sql_after(s, &q, pg, cmp, types);
    if (rc < 0)
        return rc;
    store_sql_page(&q, order, pg);
    PGresult *r = q_run(s, &q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        if (store_sql_project_row(&row, f->sort, &out->rows[out->count++]) < 0)
            goto nomem;
    }
    PQclear(r);
    return 0;
nomem:
    PQclear(r);
    store_projects_free(out);
    return MCPAGE_ENOMEM;
}

static int count_query(store *s, store_sql *q, int64_t *n)
{
    PGresult *r = q_run(s, q);
    if (!r)
        return MCPAGE_ESTORE;
    *n = PQntuples(r) ? num(r, 0, 0) : 0;
    PQclear(r);
    return 0;
}

static int pg_projects_count(store *s, const store_project_filter *f, int64_t *n)
{
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "SELECT count(*) FROM ");
    store_sql_projects_from(&q, f->view);
    store_sql_project_where(&q, f);
    return count_query(s, &q, n);
}

/* ---- sessions ------------------------------------------------------- */

static int pg_sessions_list(store *s, const store_session_filter *f, const store_page *pg,
                            store_sessions *out)
{
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "SELECT " STORE_SQL_SESSION_COLS " FROM " STORE_SQL_SESSION_FROM);
    store_sql_session_where(&q, f);
    const char *order, *cmp;
    store_key_type types[2];
    store_session_order(f->order != STORE_OLDEST, &order, &cmp, types);
    int rc = store_sql_after(s, &q, pg, cmp, types);
    if (rc < 0)
        return rc;
    store_sql_page(&q, order, pg);
    PGresult *r = q_run(s, &q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        if (store_sql_session_row(&row, &out->rows[out->count++]) < 0)
            goto nomem;
    }
    PQclear(r);
    return 0;
nomem:
    PQclear(r);
    store_sessions_free(out);
    return MCPAGE_ENOMEM;
}

static int pg_sessions_count(store *s, const store_session_filter *f, int64_t *n)
{
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "SELECT count(*) FROM sessions s");
    store_sql_session_where(&q, f);
    return count_query(s, &q, n);
}

static int pg_session_get(store *s, const char *id, store_session *out)
{
    const char *v[] = {id};
    PGresult *r = run(s,
                      "SELECT " STORE_SQL_SESSION_COLS " FROM " STORE_SQL_SESSION_FROM
                      " WHERE s.session_id = $1",
                      1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int rc;
    if (PQntuples(r) == 0) {
        rc = store_fail(s, MCPAGE_ENOTFOUND, "no session '%s'", id);
    } else {
        pg_at at = {r, 0};
        store_sql_row row = pg_sql_row(&at);
        rc = store_sql_session_row(&row, out);
        if (rc < 0)
            store_session_clear(out);
    }
    PQclear(r);
    return rc;
}

/* ---- messages ------------------------------------------------------- */

#define MESSAGE_COLS                                                                               \
    "m.message_id, s.session_id, m.ordinal, m.role, m.\"timestamp\", m.text, m.tool_name, "        \
    "m.tool_input, m.is_error, m.line_no, m.byte_offset, m.byte_length, m.tool_call_id"

static int pg_messages_from(store *s, const char *id, int64_t from, int64_t limit,
                            store_messages *out)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%" PRId64, from);
    snprintf(b, sizeof b, "%" PRId64, limit);
    const char *v[] = {id, a, b};
    PGresult *r = run(s,
                      "SELECT " MESSAGE_COLS " FROM sessions s JOIN messages m ON m.sid = s.sid "
                      "WHERE s.session_id = $1 AND m.ordinal >= $2 ORDER BY m.ordinal LIMIT $3",
                      3, v);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        if (store_sql_message_row(&row, &out->rows[out->count++]) < 0)
            goto nomem;
    }
    PQclear(r);
    return 0;
nomem:
    PQclear(r);
    store_messages_free(out);
    return MCPAGE_ENOMEM;
}

static int pg_text_lines(store *s, const char *id, int64_t before, store_text_lines *out)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, before);
    const char *v[] = {id, b};
    PGresult *r = run(s,
                      "SELECT m.ordinal, m.text_lines FROM sessions s JOIN messages m ON m.sid = "
                      "s.sid WHERE s.session_id = $1 AND m.ordinal < $2 ORDER BY m.ordinal",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    out->ordinal = rows_alloc(n, sizeof *out->ordinal);
    out->lines = rows_alloc(n, sizeof *out->lines);
    if (n > 0 && (!out->ordinal || !out->lines)) {
        PQclear(r);
        store_text_lines_free(out);
        return MCPAGE_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        out->ordinal[i] = num(r, i, 0);
        out->lines[i] = num(r, i, 1);
    }
    out->count = (size_t)n;
    PQclear(r);
    return 0;
}

static int pg_message_get(store *s, int64_t id, store_message *out)
{
    char a[32];
    snprintf(a, sizeof a, "%" PRId64, id);
    const char *v[] = {a};
    PGresult *r = run(s,
                      "SELECT " MESSAGE_COLS " FROM messages m JOIN sessions s ON s.sid = m.sid "
                      "WHERE m.message_id = $1",
                      1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int rc;
    if (PQntuples(r) == 0) {
        rc = store_fail(s, MCPAGE_ENOTFOUND, "no message %" PRId64, id);
    } else {
        pg_at at = {r, 0};
        store_sql_row row = pg_sql_row(&at);
        rc = store_sql_message_row(&row, out);
        if (rc < 0)
            store_message_clear(out);
    }
    PQclear(r);
    return rc;
}

/* The row id and raw size of a session (cached for the writer's session). */
static int session_sid(store *s, const char *id, int64_t *sid, int64_t *raw_size)
{
    pg_conn *c = CONN(s);
    if (!raw_size && c->sid_of[0] && strcmp(c->sid_of, id) == 0) {
        *sid = c->sid_hit;
        return 0;
    }
    const char *v[] = {id};
    PGresult *r = run(s, "SELECT sid, raw_size FROM sessions WHERE session_id = $1", 1, v);
    if (!r)
        return MCPAGE_ESTORE;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return store_fail(s, MCPAGE_ENOTFOUND, "no session '%s'", id);
    }
    *sid = num(r, 0, 0);
    if (raw_size)
        *raw_size = num(r, 0, 1);
    PQclear(r);
    if (strlen(id) < sizeof c->sid_of) {
        snprintf(c->sid_of, sizeof c->sid_of, "%s", id);
        c->sid_hit = *sid;
    }
    return 0;
}

static uint64_t be64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | u[i];
    return v;
}

static int pg_raw_read(store *s, const char *id, int64_t offset, int64_t length,
                       unsigned char **buf, size_t *n, int64_t *total)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, total);
    if (rc < 0)
        return rc;
    if (offset >= *total || length == 0)
        return 0;
    int64_t end = offset + length;
    if (end > *total)
        end = *total;
    unsigned char *out = malloc((size_t)(end - offset));
    if (!out)
        return MCPAGE_ENOMEM;
    char a[32], b[32], c3[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    snprintf(b, sizeof b, "%" PRId64, offset);
    snprintf(c3, sizeof c3, "%" PRId64, end);
    const char *v[] = {a, b, c3};
    PGresult *r = store_pg_exec(
        s,
        "SELECT \"offset\", data, codec::bigint FROM raw_chunks WHERE sid = $1 AND \"offset\" "
        ">= coalesce((SELECT max(\"offset\") FROM raw_chunks WHERE sid = $1 AND \"offset\" <= "
        "$2), 0) AND \"offset\" < $3 ORDER BY \"offset\"",
        3, v, NULL, NULL, 1);
    if (!r) {
        free(out);
        return MCPAGE_ESTORE;
    }
    int64_t filled = offset;
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetlength(r, i, 0) != 8 || PQgetlength(r, i, 2) != 8)
            break;
        int64_t at = (int64_t)be64(PQgetvalue(r, i, 0));
        const unsigned char *plain = NULL;
        int64_t plen = 0;
        rc = store_raw_chunk(s, id, at, (int64_t)be64(PQgetvalue(r, i, 2)),
                             (const unsigned char *)PQgetvalue(r, i, 1), PQgetlength(r, i, 1),
                             &plain, &plen);
        if (rc < 0) {
            PQclear(r);
            free(out);
            return rc;
        }
        if (!store_raw_take(out, offset, end, &filled, at, plain, plen))
            break;
    }
    PQclear(r);
    *buf = out;
    *n = (size_t)(filled - offset);
    return 0;
}

/* ---- summary -------------------------------------------------------- */

static int counts_query(store *s, const char *sql, const char *sid, store_count **out, size_t *n)
{
    const char *v[] = {sid};
    PGresult *r = run(s, sql, 1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int rows = PQntuples(r);
    *out = rows_alloc(rows, sizeof **out);
    if (rows > 0 && !*out) {
        PQclear(r);
        return MCPAGE_ENOMEM;
    }
    for (int i = 0; i < rows; i++) {
        if (col_dup(r, i, 0, 0, &(*out)[*n].name) < 0) {
            PQclear(r);
            return MCPAGE_ENOMEM;
        }
        (*out)[(*n)++].count = num(r, i, 1);
    }
    PQclear(r);
    return 0;
}

static int pg_session_summary(store *s, const char *id, store_session_summary *out)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    char a[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    rc = pg_session_get(s, id, &out->session);
    if (rc < 0)
        goto fail;
    rc = counts_query(s,
                      "SELECT role, count(*) FROM messages WHERE sid = $1 GROUP BY role "
                      "ORDER BY role COLLATE \"C\"",
                      a, &out->roles, &out->role_count);
    if (rc < 0)
        goto fail;
    rc = counts_query(s,
                      "SELECT tool_name, count(*) FROM messages WHERE sid = $1 AND tool_name IS "
                      "NOT NULL AND role = 'assistant' GROUP BY tool_name ORDER BY 2 DESC, "
                      "tool_name COLLATE \"C\" LIMIT 200",
                      a, &out->tools, &out->tool_count);
    if (rc < 0)
        goto fail;
    const char *v[] = {a};
    PGresult *r = run(s,
                      "SELECT (SELECT text FROM messages WHERE sid = $1 AND role = 'user' ORDER "
                      "BY ordinal LIMIT 1), (SELECT count(*) FROM messages WHERE sid = $1 AND "
                      "is_error <> 0)",
                      1, v);
    if (!r) {
        rc = MCPAGE_ESTORE;
        goto fail;
    }
    rc = col_dup(r, 0, 0, 1, &out->first_prompt);
    out->error_count = num(r, 0, 1);
    PQclear(r);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    store_session_summary_clear(out);
    return rc;
}

#define STR_OF_(x) #x
#define STR_OF(x)  STR_OF_(x)

/* ---- search --------------------------------------------------------- */

static int query_prepare(store *s, const char *in, pg_query *pq, char **tsq)
{
    char err[200] = "";
    int rc = store_pg_query_parse(in, pq, err, sizeof err);
    if (rc == MCPAGE_EPARSE)
        return store_fail(s, rc, "%s", err);
    if (rc < 0)
        return rc;
    rc = store_pg_query_tsquery(pq, tsq);
    if (rc < 0)
        store_pg_query_free(pq);
    return rc;
}

/*
 * A page of a search grouped by session (store_search_filter.by_session):
 * every match ranked and grouped, then the page's sessions with their
 * representative's text (its snippet cut here) and line.
 */
static int search_groups(store *s, const store_search_filter *f, const store_page *pg,
                         const pg_query *pq, const char *tsq, store_hits *out)
{
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "WITH h AS MATERIALIZED (SELECT m.message_id AS id, m.sid, m.ordinal, "
                      "m.\"timestamp\" AS ts, mcpage_rank(m.tsv, q.q, m.role) AS rk "
                      "FROM (SELECT ?::tsquery AS q) q JOIN messages m ON m.tsv @@ q.q "
                      "JOIN sessions s ON s.sid = m.sid WHERE true");
    store_sql_text(&q, tsq);
    store_sql_search_and(&q, f);
    int rc = store_sql_search_groups(s, &q, f, pg);
    if (rc < 0)
        return rc;
    store_sql_add(&q, "SELECT g.id, s.session_id, p.name, m.role, g.ts, m.text, g.ordinal, g.rk, "
                      "x.bc, x.bl, g.n, g.fid, g.lid FROM g JOIN messages m ON m.message_id = "
                      "g.id JOIN sessions s ON s.sid = g.sid LEFT JOIN projects p ON p.id = "
                      "s.project_id LEFT JOIN LATERAL (SELECT count(*) AS bc, "
                      "coalesce(sum(b.text_lines), 0) AS bl FROM messages b WHERE b.sid = g.sid "
                      "AND b.ordinal < g.ordinal) x ON true ORDER BY ");
    store_sql_add(&q, store_sql_search_groups_order(f));
    PGresult *r = q_run(s, &q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows) {
        PQclear(r);
        return MCPAGE_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        store_hit *h = &out->rows[out->count++];
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        if (store_sql_hit_row(&row, f->sort, h) < 0 ||
            store_pg_snippet(PQgetvalue(r, i, 5), pq, &h->snippet) < 0) {
            PQclear(r);
            store_hits_free(out);
            return MCPAGE_ENOMEM;
        }
        h->before_count = num(r, i, 8);
        h->before_lines = num(r, i, 9);
        h->hits = num(r, i, 10);
        h->first_id = num(r, i, 11);
        h->last_id = num(r, i, 12);
    }
    PQclear(r);
    return 0;
}

int64_t store_pg__rank_min = 32768;
int64_t store_pg__rank_head = 128;
int64_t store_pg__rank_read = 0;
int store_pg__rank_off = 0;

/* A query the heads can answer: one word (or one quoted word), no prefix,
 * no filter, no viewer, not grouped. */
static int rank_heads_fit(const store_search_filter *f, const pg_query *pq)
{
    return !store_pg__rank_off && !f->by_session && pq->nterms == 1 && pq->count[0] == 1 &&
           !pq->prefix[0] && !(f->project && *f->project) && !(f->source && *f->source) &&
           !(f->role && *f->role) && !(f->tool && *f->tool) && !(f->after && *f->after) &&
           !(f->before && *f->before) && !f->has_error && !f->view;
}

/* A word's heads: 1 with its term, the last message the heads hold
 * (rank_state.done) and its match count up to there; 0 when the word
 * has none. */
static int rank_word(store *s, const pg_query *pq, char term[32], char done[32], int64_t *n)
{
    const char *v[] = {pq->tok[pq->first[0]]};
    PGresult *r = run(s,
                      "SELECT t.term, s.done, t.n FROM rank_terms t, rank_state s WHERE "
                      "t.lexeme = $1",
                      1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int listed = PQntuples(r) == 1;
    if (listed) {
        snprintf(term, 32, "%s", PQgetvalue(r, 0, 0));
        snprintf(done, 32, "%s", PQgetvalue(r, 0, 1));
        *n = num(r, 0, 2);
    }
    PQclear(r);
    return listed;
}

/*
 * The message ids of a relevance page of one word read from its heads
 * (rank_heads, docs/store.md "Relevance heads"): 1 with `ids` set to an
 * array literal (maybe empty: the walk is over), 0 when the heads cannot
 * answer (not a single word, a filter, a word without heads, or the page
 * passes a group's cut row, past which matches are not kept), or the
 * failure. The page's rows and ranks are then read as any other page's.
 */
static int rank_heads_page(store *s, const store_search_filter *f, const store_page *pg,
                           const pg_query *pq, const char *tsq, char **ids)
{
    *ids = NULL;
    if (f->sort != STORE_SEARCH_RELEVANCE || !rank_heads_fit(f, pq))
        return 0;
    int64_t want = (store_page_keyset(pg) ? 0 : pg->offset) + pg->limit;
    if (pg->limit < 0 || want > PG_RANK_READ)
        return 0;
    static const store_key_type types[2] = {STORE_KEY_REAL, STORE_KEY_INT};
    int rc;
    if (store_page_keyset(pg) && (rc = store_key_check(s, pg->after, types, 2)) < 0)
        return rc;
    char term[32], done[32];
    int64_t kept = 0;
    if ((rc = rank_word(s, pq, term, done, &kept)) <= 0)
        return rc;
    /* The heads from the cursor (those of messages up to `done`, and the
     * cut rows), the matches of later messages ranked here, merged in the
     * page's order (rank, message id descending; the key's second part is
     * -message_id); and a cut row first when the cursor is past its
     * group's cut (that group's older matches are not kept). */
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, "SELECT u.message_id, u.cut FROM ((SELECT r.rk, r.message_id, r.cut FROM "
                      "rank_heads r WHERE r.term = ?::integer AND (r.message_id <= ? OR r.cut)");
    store_sql_text(&q, term);
    store_sql_text(&q, done);
    if (store_page_keyset(pg)) { /* the index range: (term, rk, message_id) */
        store_sql_add(&q, " AND r.rk >= ?::float8");
        store_sql_key(&q, &pg->after->part[0]);
    }
    if ((rc = store_sql_after(s, &q, pg, " AND (r.rk, -r.message_id) > (?::float8, ?)", types)) < 0)
        return rc;
    store_sql_add(&q,
                  " ORDER BY r.rk, r.message_id DESC LIMIT ?) UNION ALL (SELECT p.rk, "
                  "p.message_id, false FROM (SELECT mcpage_rank(m.tsv, ?::tsquery, m.role) AS rk, "
                  "m.message_id FROM messages m WHERE m.message_id > ? AND m.tsv @@ "
                  "?::tsquery) p WHERE true");
    store_sql_int(&q, want);
    store_sql_text(&q, tsq);
    store_sql_text(&q, done);
    store_sql_text(&q, tsq);
    if ((rc = store_sql_after(s, &q, pg, " AND (p.rk, -p.message_id) > (?::float8, ?)", types)) < 0)
        return rc;
    store_sql_add(&q, " ORDER BY p.rk, p.message_id DESC LIMIT ?)");
    store_sql_int(&q, want);
    if (store_page_keyset(pg)) {
        store_sql_add(&q, " UNION ALL SELECT '-Infinity'::float8, 0, true WHERE (SELECT c.cut AND "
                          "c.message_id >= ? FROM rank_heads c WHERE c.term = ?::integer AND "
                          "c.rk = ?::float8 ORDER BY c.message_id LIMIT 1)");
        store_sql_int(&q, -pg->after->part[1].i);
        store_sql_text(&q, term);
        store_sql_key(&q, &pg->after->part[0]);
    }
    store_sql_add(&q, ") u ORDER BY u.rk, u.message_id DESC LIMIT ?");
    store_sql_int(&q, want);
    PGresult *r = q_run(s, &q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    for (int i = 0; i < n; i++)
        if (PQgetvalue(r, i, 1)[0] == 't') {
            PQclear(r); /* past what is kept: every match is ranked */
            return 0;
        }
    int from = (int)(want - pg->limit);
    char *o = malloc((size_t)n * 21 + 3);
    if (!o) {
        PQclear(r);
        return MCPAGE_ENOMEM;
    }
    size_t len = 0;
    o[len++] = '{';
    for (int i = from; i < n; i++)
        len += (size_t)sprintf(o + len, "%s%s", i > from ? "," : "", PQgetvalue(r, i, 0));
    o[len++] = '}';
    o[len] = 0;
    PQclear(r);
    *ids = o;
    store_pg__rank_read++;
    return 1;
}

static int pg_search(store *s, const store_search_filter *f, const store_page *pg, store_hits *out)
{
    pg_query pq;
    char *tsq = NULL;
    int rc = query_prepare(s, f->query, &pq, &tsq);
    if (rc < 0)
        return rc;
    if (f->by_session) {
        rc = search_groups(s, f, pg, &pq, tsq, out);
        free(tsq);
        store_pg_query_free(&pq);
        return rc;
    }
    char *ids = NULL;
    if ((rc = rank_heads_page(s, f, pg, &pq, tsq, &ids)) < 0)
        goto out;
    store_page head_pg = {.limit = pg->limit};
    if (ids)
        pg = &head_pg; /* the ids are the page: no cursor, no offset */
    store_sql q = {.d = &pg_dialect};
    /* relevance: mcpage_rank() (schema version 13: by role), lower is
     * better as bm25 in the SQLite backend */
    /* The page (t), then what precedes each of its hits in its session
     * (x: the hit's transcript line), for the page's rows only. */
    store_sql_add(&q,
                  "SELECT t.*, x.bc, x.bl FROM (SELECT * FROM (SELECT m.message_id, s.session_id, "
                  "p.name, m.role, m.\"timestamp\" AS ts, m.text, m.ordinal, "
                  "mcpage_rank(m.tsv, q.q, m.role) AS rank, m.sid AS msid "
                  "FROM (SELECT ?::tsquery AS q) q JOIN messages m ON m.tsv @@ q.q "
                  "JOIN sessions s ON s.sid = m.sid LEFT JOIN projects p ON p.id = s.project_id "
                  "WHERE true");
    store_sql_text(&q, tsq);
    store_sql_search_and(&q, f);
    if (ids) {
        store_sql_add(&q, " AND m.message_id = ANY(?::bigint[])");
        store_sql_text(&q, ids);
    }
    store_sql_add(&q, ") t WHERE true");
    const char *order;
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    const char *cmp;
    switch (f->sort) {
    case STORE_SEARCH_NEWEST:
        order = "t.ts DESC, t.message_id DESC";
        cmp = " AND (t.ts, t.message_id) < (?, ?)";
        break;
    case STORE_SEARCH_OLDEST:
        order = "t.ts, t.message_id";
        cmp = " AND (t.ts, t.message_id) > (?, ?)";
        break;
    default:
        order = "t.rank, t.message_id DESC";
        cmp = " AND (t.rank, -t.message_id) > (?::float8, ?)";
        types[0] = STORE_KEY_REAL;
        break;
    }
    if ((rc = store_sql_after(s, &q, pg, cmp, types)) < 0)
        goto out;
    store_sql_page(&q, order, pg);
    store_sql_add(
        &q, ") t LEFT JOIN LATERAL (SELECT count(*) AS bc, coalesce(sum(b.text_lines), 0) AS bl "
            "FROM messages b WHERE b.sid = t.msid AND b.ordinal < t.ordinal) x ON true "
            "ORDER BY ");
    store_sql_add(&q, order);
    PGresult *r = q_run(s, &q);
    if (!r) {
        rc = MCPAGE_ESTORE;
        goto out;
    }
    int n = PQntuples(r);
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        store_hit *h = &out->rows[out->count++];
        pg_at at = {r, i};
        store_sql_row row = pg_sql_row(&at);
        if (store_sql_hit_row(&row, f->sort, h) < 0 ||
            store_pg_snippet(PQgetvalue(r, i, 5), &pq, &h->snippet) < 0)
            goto nomem;
        h->before_count = num(r, i, 9);
        h->before_lines = num(r, i, 10);
    }
    PQclear(r);
    rc = 0;
    goto out;
nomem:
    PQclear(r);
    store_hits_free(out);
    rc = MCPAGE_ENOMEM;
out:
    free(ids);
    free(tsq);
    store_pg_query_free(&pq);
    return rc;
}

static int pg_search_count(store *s, const store_search_filter *f, int64_t *n)
{
    pg_query pq;
    char *tsq = NULL;
    int rc = query_prepare(s, f->query, &pq, &tsq);
    if (rc < 0)
        return rc;
    char term[32], done[32];
    int64_t kept = 0;
    if (rank_heads_fit(f, &pq) && (rc = rank_word(s, &pq, term, done, &kept)) != 0) {
        /* a word with heads: its count up to `done`, and the matches since */
        const char *v[] = {done, tsq};
        PGresult *r = rc < 0 ? NULL
                             : run(s,
                                   "SELECT count(*) FROM messages WHERE message_id > $1::bigint "
                                   "AND tsv @@ $2::tsquery",
                                   2, v);
        if (r)
            *n = kept + num(r, 0, 0);
        PQclear(r);
        free(tsq);
        store_pg_query_free(&pq);
        return r ? 0 : MCPAGE_ESTORE;
    }
    store_sql q = {.d = &pg_dialect};
    store_sql_add(&q, f->by_session ? "SELECT count(DISTINCT m.sid) FROM messages m JOIN "
                                      "sessions s ON s.sid = m.sid WHERE m.tsv @@ ?::tsquery"
                                    : "SELECT count(*) FROM messages m JOIN sessions s ON "
                                      "s.sid = m.sid WHERE m.tsv @@ ?::tsquery");
    store_sql_text(&q, tsq);
    store_sql_search_and(&q, f);
    rc = count_query(s, &q, n);
    free(tsq);
    store_pg_query_free(&pq);
    return rc;
}

/* ---- activity ------------------------------------------------------- */

static int pg_activity(store *s, const store_activity_filter *f, size_t max_rows,
                       store_activity *out)
{
    store_sql q = {.d = &pg_dialect};
    const char *bucket;
    switch (f->bucket) {
    case STORE_BUCKET_WEEK:
        bucket = "mcpage_week(m.\"timestamp\")";
        break;
    case STORE_BUCKET_MONTH:
        bucket = "substr(m.\"timestamp\", 1, 7) || '-01'";
        break;
    default:
        bucket = "substr(m.\"timestamp\", 1, 10)";
        break;
    }
    store_sql_add(&q, "SELECT p.id, p.name, ");
    store_sql_add(&q, bucket);
    store_sql_add(&q,
                  " COLLATE \"C\" AS b, count(*) FROM messages m JOIN sessions s ON s.sid = m.sid "
                  "JOIN projects p ON p.id = s.project_id WHERE m.\"timestamp\" <> ''");
    if (f->project && *f->project) {
        store_sql_add(&q, " AND (p.name = ? OR p.path = ?)");
        store_sql_text(&q, f->project);
        store_sql_text(&q, f->project);
    }
    store_sql_where_text(&q, "s.source = ?", f->source);
    store_sql_visible(&q, f->view, "s");
    store_sql_where_text(&q, "m.\"timestamp\" >= ?", f->after);
    store_sql_where_text(&q, "m.\"timestamp\" < ?", f->before);
    store_sql_add(&q, " GROUP BY b, p.id ORDER BY b NULLS FIRST, p.id LIMIT ?");
    store_sql_int(&q, (int64_t)max_rows + 1);
    PGresult *r = q_run(s, &q);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    if ((size_t)n > max_rows) {
        PQclear(r);
        return store_fail(s, MCPAGE_ERANGE, "more than %zu activity rows; narrow the range",
                          max_rows);
    }
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        store_activity_row *row = &out->rows[out->count++];
        row->project_id = num(r, i, 0);
        if (col_dup(r, i, 1, 0, &row->project) || col_dup(r, i, 2, 0, &row->bucket))
            goto nomem;
        row->messages = num(r, i, 3);
    }
    PQclear(r);
    return 0;
nomem:
    PQclear(r);
    store_activity_free(out);
    return MCPAGE_ENOMEM;
}

/* ---- stats ---------------------------------------------------------- */

static int pg_generation(store *s, int64_t *gen)
{
    PGresult *r = run(s, "SELECT generation FROM meta WHERE id = 1", 0, NULL);
    if (!r)
        return MCPAGE_ESTORE;
    *gen = PQntuples(r) ? num(r, 0, 0) : 0;
    PQclear(r);
    return 0;
}

static int pg_stats(store *s, store_stats *out)
{
    PGresult *r = run(s,
                      "SELECT (SELECT count(*) FROM projects), (SELECT count(*) FROM sessions), "
                      "(SELECT count(*) FROM messages), (SELECT count(*) FROM source_files), "
                      "(SELECT coalesce(sum(raw_size), 0) FROM sessions), "
                      "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = "
                      "current_schema() AND c.relkind = 'r'), "
                      "(SELECT generation FROM meta WHERE id = 1)",
                      0, NULL);
    if (!r)
        return MCPAGE_ESTORE;
    out->projects = num(r, 0, 0);
    out->sessions = num(r, 0, 1);
    out->messages = num(r, 0, 2);
    out->sources = num(r, 0, 3);
    out->raw_bytes = num(r, 0, 4);
    out->size_bytes = num(r, 0, 5);
    out->generation = num(r, 0, 6);
    out->schema_version = store_pg_schema_latest();
    PQclear(r);
    return 0;
}

/* ---- transactions --------------------------------------------------- */

static int pg_begin(store *s)
{
    pg_conn *c = CONN(s);
    if (c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "a transaction is already open");
    /* one writer at a time, like SQLite's BEGIN IMMEDIATE; sent before
     * in_tx is set, so a connection lost since the last call is repaired
     * and the statement retried */
    int rc = store_pg_simple(s, "BEGIN; SELECT generation FROM meta WHERE id = 1 FOR UPDATE");
    if (rc < 0) {
        if (PQstatus(c->db) == CONNECTION_OK && PQtransactionStatus(c->db) != PQTRANS_IDLE)
            PQclear(PQexec(c->db, "ROLLBACK"));
        return rc;
    }
    c->in_tx = 1;
    c->dirty = 0;
    return 0;
}

static int pg_commit(store *s)
{
    pg_conn *c = CONN(s);
    if (!c->in_tx)
        return store_fail(s, MCPAGE_ESTATE, "no transaction is open");
    /* the generation moves in the same transaction as the change */
    int rc = store_pg_simple(s, c->dirty ? "UPDATE meta SET generation = generation + 1 WHERE "
                                           "id = 1 RETURNING generation; COMMIT"
                                         : "COMMIT");
    if (rc < 0)
        return rc;
    c->in_tx = 0;
    c->dirty = 0;
    return 0;
}

static int pg_rollback(store *s)
{
    pg_conn *c = CONN(s);
    if (!c->in_tx)
        return 0;
    c->in_tx = 0;
    c->dirty = 0;
    c->sid_of[0] = 0; /* a session created in this transaction is gone */
    store_pg_discard(c);
    if (PQstatus(c->db) != CONNECTION_OK)
        return 0;
    return store_pg_simple(s, "ROLLBACK");
}

#define NEED_TX()                                                                                  \
    do {                                                                                           \
        if (!CONN(s)->in_tx)                                                                       \
            return store_fail(s, MCPAGE_ESTATE, "writes need a transaction");                      \
    } while (0)

/* ---- writes --------------------------------------------------------- */

static int pg_project_ensure(store *s, const char *path, const char *name, int64_t *id)
{
    NEED_TX();
    const char *v[] = {path, name};
    PGresult *r = run(s, "SELECT id FROM projects WHERE path = $1", 1, v);
    if (!r)
        return MCPAGE_ESTORE;
    if (PQntuples(r) > 0) {
        *id = num(r, 0, 0);
        PQclear(r);
        return 0;
    }
    PQclear(r);
    /* a name no other project holds, so that it selects this one */
    char unique[1024];
    for (int attempt = 0;; attempt++) {
        if (attempt == STORE_PROJECT_NAME_TRIES)
            return store_fail(s, MCPAGE_ESTORE, "no free display name for the project at %s", path);
        store_project_name_try(path, name, attempt, unique, sizeof unique);
        const char *u[] = {unique};
        r = run(s, "SELECT 1 FROM projects WHERE name = $1", 1, u);
        if (!r)
            return MCPAGE_ESTORE;
        int taken = PQntuples(r) > 0;
        PQclear(r);
        if (!taken)
            break;
    }
    v[1] = unique;
    r = run(s, "INSERT INTO projects(path, name) VALUES($1, $2) RETURNING id", 2, v);
    if (!r)
        return MCPAGE_ESTORE;
    *id = num(r, 0, 0);
    PQclear(r);
    CONN(s)->dirty = 1;
    return 0;
}

static int pg_session_put(store *s, const store_session_meta *m)
{
    NEED_TX();
    char pid[32], hh[32], hl[32];
    snprintf(pid, sizeof pid, "%" PRId64, m->project_id);
    snprintf(hh, sizeof hh, "%" PRId64, (int64_t)m->head_hash);
    snprintf(hl, sizeof hl, "%" PRId64, m->head_len);
    const char *v[] = {m->session_id,
                       m->source,
                       m->project_id > 0 ? pid : NULL,
                       m->title,
                       m->model,
                       m->git_branch,
                       m->parent_session_id,
                       m->source_path,
                       m->hostname,
                       m->head_len > 0 ? hh : NULL,
                       m->head_len > 0 ? hl : NULL,
                       m->owner};
    PGresult *r = run(s,
                      "INSERT INTO sessions(session_id, source, project_id, title, model, "
                      "git_branch, parent_session_id, source_path, hostname, head_hash, "
                      "head_len, owner) VALUES($1, coalesce($2, ''), coalesce($3::bigint, 0), $4, "
                      "$5, $6, $7, $8, $9, coalesce($10::bigint, 0), coalesce($11::bigint, 0), "
                      "$12) ON CONFLICT(session_id) DO UPDATE SET "
                      "owner = coalesce(sessions.owner, $12), "
                      "source = coalesce($2, sessions.source), "
                      "project_id = coalesce($3::bigint, sessions.project_id), "
                      "title = coalesce($4, sessions.title), "
                      "model = coalesce($5, sessions.model), "
                      "git_branch = coalesce($6, sessions.git_branch), "
                      "parent_session_id = coalesce($7, sessions.parent_session_id), "
                      "source_path = coalesce($8, sessions.source_path), "
                      "hostname = coalesce($9, sessions.hostname), "
                      "head_hash = coalesce($10::bigint, sessions.head_hash), "
                      "head_len = coalesce($11::bigint, sessions.head_len)",
                      12, v);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    CONN(s)->dirty = 1;
    return 0;
}

static int pg_session_state(store *s, const char *id, store_session_state *out)
{
    const char *v[] = {id};
    PGresult *r = run(s,
                      "SELECT raw_size, raw_lines, head_hash, head_len, message_count, "
                      "project_id, coalesce(title, '') <> '' FROM sessions WHERE session_id = $1",
                      1, v);
    if (!r)
        return MCPAGE_ESTORE;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return MCPAGE_ENOTFOUND;
    }
    out->raw_size = num(r, 0, 0);
    out->raw_lines = num(r, 0, 1);
    out->head_hash = (uint64_t)num(r, 0, 2);
    out->head_len = num(r, 0, 3);
    out->message_count = num(r, 0, 4);
    out->project_id = num(r, 0, 5);
    out->has_title = strcmp(PQgetvalue(r, 0, 6), "t") == 0;
    PQclear(r);
    return 0;
}

static int pg_session_reset(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc == MCPAGE_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    char a[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    const char *v[] = {a};
    static const char *const sqls[] = {
        "DELETE FROM messages WHERE sid = $1",
        "DELETE FROM raw_chunks WHERE sid = $1",
        ("UPDATE sessions SET raw_size = 0, raw_lines = 0, head_hash = 0, head_len = 0, "
         "message_count = 0, title = NULL, started_at = '', ended_at = '' WHERE sid = $1"),
    };
    for (size_t i = 0; i < sizeof sqls / sizeof sqls[0]; i++) {
        PGresult *r = run(s, sqls[i], 1, v);
        if (!r)
            return MCPAGE_ESTORE;
        PQclear(r);
    }
    CONN(s)->dirty = 1;
    return 0;
}

void store_pg_discard(pg_conn *c)
{
    for (int i = 0; i < c->npend; i++)
        for (int k = 0; k < PG_MSG_COLS; k++)
            free(c->pend[i].v[k]);
    c->npend = 0;
    c->pend_bytes = 0;
    c->nids = c->idpos = 0;
    c->pend_sid = 0;
    c->pend_first[0] = c->pend_last[0] = 0;
}

/* Appends one element of a PostgreSQL array literal: NULL, or the value
 * double-quoted with '"' and '\\' escaped. */
static void array_elem(char **o, const char *v, int first)
{
    char *p = *o;
    if (!first)
        *p++ = ',';
    if (!v) {
        memcpy(p, "NULL", 4);
        *o = p + 4;
        return;
    }
    *p++ = '"';
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            *p++ = '\\';
        *p++ = *v;
    }
    *p++ = '"';
    *o = p;
}

int store_pg_flush(store *s)
{
    pg_conn *c = CONN(s);
    if (!c->npend)
        return 0;
    /* One statement: the rows go as one array per column (a VALUES list
     * of 1400 parameters cost 11 ms of planning per flush), and the
     * session's count and time span follow its messages, as in the SQLite
     * backend. */
    static const char *const types[PG_MSG_COLS] = {
        "bigint", "bigint", "bigint", "text",   "text", "text",   "text",    "text",
        "int",    "bigint", "bigint", "bigint", "text", "bigint", "tsvector"};
    char *cols[PG_MSG_COLS] = {0};
    const char *vals[PG_MSG_COLS + 3];
    int rc = MCPAGE_ENOMEM;
    for (int k = 0; k < PG_MSG_COLS; k++) {
        size_t need = 3;
        for (int i = 0; i < c->npend; i++)
            need += 2 * (c->pend[i].v[k] ? strlen(c->pend[i].v[k]) : 0) + 8;
        if (!(cols[k] = malloc(need)))
            goto out;
        char *o = cols[k];
        *o++ = '{';
        for (int i = 0; i < c->npend; i++)
            array_elem(&o, c->pend[i].v[k], i == 0);
        *o++ = '}';
        *o = 0;
        vals[k] = cols[k];
    }
    char sql[1500];
    size_t n = (size_t)snprintf(
        sql, sizeof sql,
        "WITH ins AS (INSERT INTO messages(message_id, sid, ordinal, role, "
        "\"timestamp\", text, tool_name, tool_input, is_error, line_no, "
        "byte_offset, byte_length, tool_call_id, text_lines, tsv) SELECT * FROM unnest(");
    for (int k = 0; k < PG_MSG_COLS; k++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s$%d::%s[]", k ? ", " : "", k + 1,
                              types[k]);
    char sidbuf[32];
    snprintf(sidbuf, sizeof sidbuf, "%" PRId64, c->pend_sid);
    vals[PG_MSG_COLS] = sidbuf;
    vals[PG_MSG_COLS + 1] = c->pend_first;
    vals[PG_MSG_COLS + 2] = c->pend_last;
    n += (size_t)snprintf(
        sql + n, sizeof sql - n,
        ") RETURNING 1) UPDATE sessions SET message_count = message_count + (SELECT count(*) "
        "FROM ins), started_at = CASE WHEN $%d <> '' AND (started_at = '' OR $%d < started_at) "
        "THEN $%d ELSE started_at END, ended_at = CASE WHEN $%d > ended_at THEN $%d ELSE "
        "ended_at END WHERE sid = $%d",
        PG_MSG_COLS + 2, PG_MSG_COLS + 2, PG_MSG_COLS + 2, PG_MSG_COLS + 3, PG_MSG_COLS + 3,
        PG_MSG_COLS + 1);
    if (n >= sizeof sql) {
        rc = MCPAGE_ERANGE;
        goto out;
    }
    c->flushing = 1;
    PGresult *r = store_pg_exec(s, sql, PG_MSG_COLS + 3, vals, NULL, NULL, 0);
    c->flushing = 0;
    rc = r ? 0 : MCPAGE_ESTORE;
    PQclear(r);
out:
    for (int k = 0; k < PG_MSG_COLS; k++)
        free(cols[k]);
    int64_t keep_ids[PG_ID_BLOCK];
    int n_ids = c->nids - c->idpos;
    memcpy(keep_ids, c->ids + c->idpos, (size_t)n_ids * sizeof keep_ids[0]);
    store_pg_discard(c);
    memcpy(c->ids, keep_ids, (size_t)n_ids * sizeof keep_ids[0]);
    c->nids = n_ids;
    return rc;
}

/* A message id from the block reserved on the sequence. */
static int next_message_id(store *s, int64_t *id)
{
    pg_conn *c = CONN(s);
    if (c->idpos >= c->nids) {
        char n[16];
        snprintf(n, sizeof n, "%d", PG_ID_BLOCK);
        const char *v[] = {n};
        PGresult *r = run(s,
                          "SELECT nextval(pg_get_serial_sequence('messages', 'message_id')) "
                          "FROM generate_series(1, $1::int)",
                          1, v);
        if (!r)
            return MCPAGE_ESTORE;
        int rows = PQntuples(r);
        for (int i = 0; i < rows && i < PG_ID_BLOCK; i++)
            c->ids[i] = num(r, i, 0);
        c->nids = rows < PG_ID_BLOCK ? rows : PG_ID_BLOCK;
        c->idpos = 0;
        PQclear(r);
        if (c->nids == 0)
            return store_fail(s, MCPAGE_ESTORE, "no message ids reserved");
    }
    *id = c->ids[c->idpos++];
    return 0;
}

/* Messages are buffered and sent PG_PEND_ROWS at a time (a round trip per
 * row made sync 3x slower than on SQLite); ids come from a reserved block
 * so the caller still gets its id at once. */
static int pg_message_add(store *s, const store_message *m, const store_text_packed *packed,
                          int64_t *id)
{
    (void)packed; /* texts are kept plain (packs_texts 0: never given) */
    NEED_TX();
    pg_conn *c = CONN(s);
    int64_t sid = 0;
    int rc = session_sid(s, m->session_id, &sid, NULL);
    if (rc < 0)
        return rc;
    if (c->npend >= PG_PEND_ROWS || c->pend_bytes >= PG_PEND_BYTES ||
        (c->npend && c->pend_sid != sid)) {
        if ((rc = store_pg_flush(s)) < 0)
            return rc;
    }
    if (m->message_id > 0) /* a message stored again keeps its id */
        *id = m->message_id;
    else if ((rc = next_message_id(s, id)) < 0)
        return rc;
    char *tsv = NULL;
    rc = store_pg_tsvector(m->text, &tsv);
    if (rc < 0)
        return rc;
    char nums[8][32];
    snprintf(nums[0], sizeof nums[0], "%" PRId64, *id);
    snprintf(nums[1], sizeof nums[1], "%" PRId64, sid);
    snprintf(nums[2], sizeof nums[2], "%" PRId64, m->ordinal);
    snprintf(nums[3], sizeof nums[3], "%d", m->is_error ? 1 : 0);
    snprintf(nums[4], sizeof nums[4], "%" PRId64, m->line_no);
    snprintf(nums[5], sizeof nums[5], "%" PRId64, m->byte_offset);
    snprintf(nums[6], sizeof nums[6], "%" PRId64, m->byte_length);
    /* lines as store_message_text_lines() defines them */
    int64_t lines = 0;
    if (m->text && *m->text) {
        lines = 1;
        for (const char *p = m->text; *p; p++)
            lines += *p == '\n';
    }
    snprintf(nums[7], sizeof nums[7], "%" PRId64, lines);
    const char *src[PG_MSG_COLS] = {nums[0],
                                    nums[1],
                                    nums[2],
                                    m->role,
                                    m->timestamp ? m->timestamp : "",
                                    m->text ? m->text : "",
                                    m->tool_name,
                                    m->tool_input,
                                    nums[3],
                                    nums[4],
                                    nums[5],
                                    nums[6],
                                    m->tool_call_id,
                                    nums[7]};
    pg_row *row = &c->pend[c->npend];
    memset(row, 0, sizeof *row);
    size_t bytes = strlen(tsv);
    for (int k = 0; k < PG_MSG_COLS - 1; k++) {
        if (src[k] && !(row->v[k] = store_strdup(src[k])))
            goto nomem;
        bytes += src[k] ? strlen(src[k]) : 0;
    }
    row->v[PG_MSG_COLS - 1] = tsv;
    c->pend_sid = sid;
    const char *ts = m->timestamp ? m->timestamp : "";
    if (*ts && strlen(ts) < sizeof c->pend_first) {
        if (!c->pend_first[0] || strcmp(ts, c->pend_first) < 0)
            snprintf(c->pend_first, sizeof c->pend_first, "%s", ts);
        if (strcmp(ts, c->pend_last) > 0)
            snprintf(c->pend_last, sizeof c->pend_last, "%s", ts);
    }
    c->npend++;
    c->pend_bytes += bytes;
    c->dirty = 1;
    return 0;
nomem:
    for (int k = 0; k < PG_MSG_COLS; k++)
        free(row->v[k]);
    free(tsv);
    return MCPAGE_ENOMEM;
}

/* ---- compressing the raw chunks of older stores (issue 35) ---------- */

#define PG_PACK_ROWS 8 /* chunks read and compressed in one transaction */

/* One plain chunk compressed in place when a frame is smaller and reads back. */
static int pack_one(store *s, const char *sid, const char *off, const unsigned char *plain,
                    size_t n)
{
    int codec = 0;
    const unsigned char *packed = NULL;
    size_t packed_n = 0;
    if (store_codec_pack(&s->codec, plain, n, &codec, &packed, &packed_n) < 0)
        return store_fail(s, MCPAGE_ENOMEM, "out of memory compressing raw bytes");
    if (codec == STORE_CODEC_PLAIN)
        return 0;
    store_codec check = {0};
    const unsigned char *back = NULL;
    size_t back_n = 0;
    const char *why = "";
    int ok = store_codec_unpack(&check, codec, packed, packed_n, STORE_CODEC_OUT_MAX, &back,
                                &back_n, &why) == 0 &&
             back_n == n && memcmp(back, plain, n) == 0;
    store_codec_free(&check);
    if (!ok)
        return store_fail(s, MCPAGE_ESTORE, "a compressed raw chunk did not read back");
    char cs[8];
    snprintf(cs, sizeof cs, "%d", codec);
    const char *v[] = {sid, off, (const char *)packed, cs};
    int lens[] = {0, 0, (int)packed_n, 0};
    int fmts[] = {0, 0, 1, 0};
    PGresult *r = store_pg_exec(s,
                                "UPDATE raw_chunks SET data = $3, codec = $4 WHERE sid = $1 AND "
                                "\"offset\" = $2",
                                4, v, lens, fmts, 0);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

/*
 * store_ops.tidy: compresses the raw chunks a store kept before schema
 * version 10, a few a transaction, in (sid, offset) order from the
 * position in raw_pack (whose row goes once all are done), until done or
 * the budget's stop. Interrupted, what was committed stays compressed and
 * the next sync goes on from there.
 */
static int rank_tidy(store *s);

static int pack_tidy(store *s)
{
    pg_conn *c = CONN(s);
    for (;;) {
        int rc = store_budget_check(s);
        if (rc < 0)
            return store_budget_fail(s, s->stopped = rc);
        if ((rc = store_pg_simple(s, "BEGIN")) < 0)
            return rc;
        c->in_tx = 1;
        PGresult *r = run(s, "SELECT sid, \"offset\" FROM raw_pack FOR UPDATE", 0, NULL);
        if (!r)
            goto fail;
        if (PQntuples(r) == 0) {
            PQclear(r);
            c->in_tx = 0;
            return store_pg_simple(s, "COMMIT");
        }
        char last_sid[32], last_off[32];
        snprintf(last_sid, sizeof last_sid, "%s", PQgetvalue(r, 0, 0));
        snprintf(last_off, sizeof last_off, "%s", PQgetvalue(r, 0, 1));
        PQclear(r);
        const char *at[] = {last_sid, last_off};
        r = store_pg_exec(s,
                          "SELECT sid, \"offset\", data FROM raw_chunks WHERE (sid, \"offset\") > "
                          "($1::bigint, $2::bigint) AND codec = 0 ORDER BY sid, \"offset\" "
                          "LIMIT 8", /* PG_PACK_ROWS */
                          2, at, NULL, NULL, 1);
        if (!r)
            goto fail;
        int rows = PQntuples(r);
        for (int i = 0; i < rows; i++) {
            if (PQgetlength(r, i, 0) != 8 || PQgetlength(r, i, 1) != 8) {
                PQclear(r);
                store_fail(s, MCPAGE_ESTORE, "compressing raw bytes: an unexpected row");
                goto fail;
            }
            snprintf(last_sid, sizeof last_sid, "%" PRId64, (int64_t)be64(PQgetvalue(r, i, 0)));
            snprintf(last_off, sizeof last_off, "%" PRId64, (int64_t)be64(PQgetvalue(r, i, 1)));
            if (pack_one(s, last_sid, last_off, (const unsigned char *)PQgetvalue(r, i, 2),
                         (size_t)PQgetlength(r, i, 2)) < 0) {
                PQclear(r);
                goto fail;
            }
        }
        PQclear(r);
        const char *next[] = {last_sid, last_off};
        r = rows < PG_PACK_ROWS ? run(s, "DELETE FROM raw_pack", 0, NULL)
                                : run(s, "UPDATE raw_pack SET sid = $1, \"offset\" = $2", 2, next);
        if (!r)
            goto fail;
        PQclear(r);
        c->in_tx = 0;
        if ((rc = store_pg_simple(s, "COMMIT")) < 0)
            return rc;
        continue;
    fail:
        rc = s->stopped ? s->stopped : MCPAGE_ESTORE;
        if (c->in_tx) {
            c->in_tx = 0;
            if (PQstatus(c->db) == CONNECTION_OK)
                PQclear(PQexec(c->db, "ROLLBACK"));
        }
        return rc;
    }
}

static int pg_tidy(store *s)
{
    pg_conn *c = CONN(s);
    if (c->in_tx || c->locks)
        return 0;
    int rc = pack_tidy(s);
    return rc < 0 ? rc : rank_tidy(s);
}

/*
 * One statement of rank_tidy inside its own transaction, which holds the
 * meta row as writers do (store_begin), so no sync's rows land between
 * reading a word's matches and keeping them.
 */
static int rank_tx(store *s, const char *first, const char *sql, int n, const char *const *vals,
                   PGresult **out)
{
    pg_conn *c = CONN(s);
    int rc = store_budget_check(s);
    if (rc < 0)
        return store_budget_fail(s, s->stopped = rc);
    if ((rc = store_pg_simple(s, "BEGIN; SELECT 1 FROM meta WHERE id = 1 FOR UPDATE")) < 0)
        return rc;
    c->in_tx = 1;
    PGresult *r = first ? run(s, first, n, vals) : NULL;
    if (!first || r) {
        PQclear(r);
        r = run(s, sql, n, vals);
    }
    c->in_tx = 0;
    if (!r) {
        if (PQstatus(c->db) == CONNECTION_OK)
            PQclear(PQexec(c->db, "ROLLBACK"));
        return s->stopped ? s->stopped : MCPAGE_ESTORE;
    }
    if ((rc = store_pg_simple(s, "COMMIT")) < 0) {
        PQclear(r);
        return rc;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

/* Keeps word $1's heads again from all its matches: per rank the first $2
 * (store_pg__rank_head) in the page's order (message id descending: the
 * newest), and the next one as the group's cut row; and counts its
 * matches. */
#define RANK_BUILD                                                                                 \
    "WITH y AS MATERIALIZED (SELECT mcpage_rank(m.tsv, t.q, m.role) AS rk, m.message_id FROM "     \
    "rank_terms t, messages m, rank_state s WHERE t.term = $1::integer AND m.tsv @@ t.q AND "      \
    "m.message_id <= s.done), x AS (INSERT INTO rank_heads "                                       \
    "SELECT $1::integer, z.rk, z.message_id, z.n > $2::bigint FROM (SELECT rk, message_id, "       \
    "row_number() OVER (PARTITION BY rk ORDER BY message_id DESC) AS n FROM y) z WHERE z.n <= "    \
    "$2::bigint + 1) UPDATE rank_terms SET n = (SELECT count(*) FROM y) WHERE term = $1::integer"

/*
 * The heads' term of a common lexeme: the lexeme a query asks for (*key,
 * rank_terms.lexeme), the word as written its class also matches (*word,
 * pointing into lexeme, or NULL) and the query's tsquery (*q), as
 * store_pg_query_tsquery writes it for that query. A word that is its own
 * stem (`the`) is indexed without its class (store_words.h), so its heads
 * are those of the query `the`, which asks for `'~the' | 'the'`.
 */
static int rank_term_of(const char *lexeme, char **key, const char **word, char **q)
{
    size_t n = strlen(lexeme);
    int letters = n > 0 && n <= STORE_WORD_MAX;
    for (size_t i = 0; letters && i < n; i++)
        letters = lexeme[i] >= 'a' && lexeme[i] <= 'z';
    *key = malloc(n + 2);
    *q = malloc(2 * n + 16);
    if (!*key || !*q) {
        free(*key);
        free(*q);
        return MCPAGE_ENOMEM;
    }
    *word = NULL;
    if (letters) { /* the class of a word that is its own stem */
        (*key)[0] = STORE_WORD_CLASS;
        memcpy(*key + 1, lexeme, n + 1);
        if (store_word_query_self(*key, n + 1))
            *word = lexeme;
        else
            memcpy(*key, lexeme, n + 1);
    } else {
        memcpy(*key, lexeme, n + 1);
        if (lexeme[0] == STORE_WORD_CLASS && store_word_query_self(lexeme, n))
            *word = lexeme + 1;
    }
    if (*word)
        snprintf(*q, 2 * n + 16, "('%s' | '%s')", *key, *word);
    else
        snprintf(*q, 2 * n + 16, "('%s')", *key);
    return 0;
}

/*
 * store_ops.tidy, after the raw chunks: the relevance heads
 * (docs/store.md "Relevance heads"). First the messages written since
 * the heads' `done` are added to them. Words PostgreSQL's statistics of
 * messages.tsv (ANALYZE, autovacuum's too) estimate in
 * store_pg__rank_min messages or more get heads, the commonest first, up
 * to PG_RANK_TERMS; a word whose heads grew past twice store_pg__rank_head in a
 * rank (the writes keep every new match: newer than the cut row) or
 * whose cut group fell to a quarter (deletes) is kept again. One word a
 * transaction; stopped by the budget, the next tidy goes on.
 */
static int rank_tidy(store *s)
{
    char min[32], head[32];
    snprintf(min, sizeof min, "%" PRId64, store_pg__rank_min);
    snprintf(head, sizeof head, "%" PRId64, store_pg__rank_head);
    const char *v[] = {min, head};
    /* the messages since `done` into the heads, PG_RANK_BATCH a transaction */
    for (;;) {
        PGresult *b = NULL;
        int rc =
            rank_tx(s, NULL,
                    "WITH b AS MATERIALIZED (SELECT m.message_id FROM messages m, rank_state s "
                    "WHERE m.message_id > s.done ORDER BY m.message_id LIMIT " STR_OF(
                        PG_RANK_BATCH) "), a AS (SELECT mcpage_rank_add(ARRAY(SELECT "
                                       "message_id FROM b)) WHERE EXISTS (SELECT 1 FROM "
                                       "rank_terms)), u AS (UPDATE rank_state SET done = "
                                       "(SELECT max(message_id) FROM b) WHERE EXISTS (SELECT "
                                       "1 FROM b)) SELECT (SELECT count(*) FROM b), (SELECT "
                                       "count(*) FROM a)",
                    0, NULL, &b);
        if (rc < 0)
            return rc;
        int64_t rows = num(b, 0, 0);
        PQclear(b);
        if (rows < PG_RANK_BATCH)
            break;
    }
    PGresult *r = run(
        s,
        "SELECT e.lexeme FROM pg_stats st, pg_class c, unnest(st.most_common_elems::text::text[], "
        "st.most_common_elem_freqs) AS e(lexeme, f) WHERE st.schemaname = current_schema() AND "
        "st.tablename = 'messages' AND st.attname = 'tsv' AND c.oid = 'messages'::regclass AND "
        "e.lexeme IS NOT NULL AND e.f * greatest(c.reltuples, 0) >= $1::float8 AND "
        "strpos(e.lexeme, '''') = 0 AND strpos(e.lexeme, '\\') = 0 AND NOT EXISTS (SELECT 1 "
        "FROM rank_terms t WHERE e.lexeme IN (t.lexeme, t.word)) ORDER BY e.f DESC, e.lexeme "
        "LIMIT " STR_OF(PG_RANK_TERMS),
        1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int rc = 0;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        PGresult *t = NULL;
        char *key = NULL, *q = NULL;
        const char *word = NULL;
        if ((rc = rank_term_of(PQgetvalue(r, i, 0), &key, &word, &q)) < 0)
            break;
        const char *lex[] = {key, q, word};
        rc = rank_tx(s, NULL,
                     "WITH t AS (INSERT INTO rank_terms(term, lexeme, q, n, word) SELECT "
                     "coalesce(max(term), 0) + 1, $1, $2::tsquery, 0, $3 FROM rank_terms HAVING "
                     "count(*) < " STR_OF(PG_RANK_TERMS) " ON CONFLICT (lexeme) DO NOTHING "
                                                         "RETURNING term) SELECT term FROM t",
                     3, lex, &t);
        free(key);
        free(q);
        if (rc == 0 && PQntuples(t) == 1) {
            const char *build[] = {PQgetvalue(t, 0, 0), head};
            rc = rank_tx(s, NULL, RANK_BUILD, 2, build, NULL);
        }
        PQclear(t);
    }
    PQclear(r);
    if (rc < 0)
        return rc;
    r = run(s,
            "SELECT DISTINCT term FROM (SELECT term, count(*) FILTER (WHERE NOT cut) AS n, "
            "bool_or(cut) AS cut FROM "
            "rank_heads GROUP BY term, rk) g WHERE n > 2 * $1::bigint OR (cut AND n <= "
            "$1::bigint / 4) ORDER BY term",
            1, v + 1);
    if (!r)
        return MCPAGE_ESTORE;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        const char *build[] = {PQgetvalue(r, i, 0), head};
        rc = rank_tx(s, "DELETE FROM rank_heads WHERE term = $1::integer AND $2::bigint > 0",
                     RANK_BUILD, 2, build, NULL);
    }
    PQclear(r);
    return rc;
}

static int pg_raw_append(store *s, const char *id, const store_raw_packed *v, size_t nv,
                         int64_t lines)
{
    NEED_TX();
    int64_t sid = 0;
    int64_t size = 0;
    int rc = session_sid(s, id, &sid, &size);
    if (rc < 0)
        return rc;
    char a[32], off[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    int64_t n = 0; /* raw bytes appended */
    for (size_t i = 0; i < nv; i++) {
        snprintf(off, sizeof off, "%" PRId64, size + n);
        char cs[8];
        snprintf(cs, sizeof cs, "%d", v[i].codec);
        const char *p[] = {a, off, (const char *)v[i].bytes, cs};
        int lens[] = {0, 0, (int)v[i].n, 0};
        int fmts[] = {0, 0, 1, 0};
        PGresult *r = store_pg_exec(s,
                                    "INSERT INTO raw_chunks(sid, \"offset\", data, codec) "
                                    "VALUES($1, $2, $3, $4)",
                                    4, p, lens, fmts, 0);
        if (!r)
            return MCPAGE_ESTORE;
        PQclear(r);
        n += (int64_t)v[i].raw_n;
    }
    char nn[32], ll[32];
    snprintf(nn, sizeof nn, "%" PRId64, n);
    snprintf(ll, sizeof ll, "%" PRId64, lines);
    const char *p[] = {nn, ll, a};
    PGresult *r = run(s,
                      "UPDATE sessions SET raw_size = raw_size + $1, raw_lines = raw_lines + $2 "
                      "WHERE sid = $3",
                      3, p);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    if (n)
        CONN(s)->dirty = 1;
    return 0;
}

static int pg_session_refresh(store *s, const char *id)
{
    NEED_TX();
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    char a[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    const char *v[] = {a};
    PGresult *r = run(s, "SELECT project_id FROM sessions WHERE sid = $1", 1, v);
    if (!r)
        return MCPAGE_ESTORE;
    int64_t project = PQntuples(r) ? num(r, 0, 0) : 0;
    PQclear(r);
    if (project <= 0)
        return 0;
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, project);
    const char *w[] = {b};
    r = run(s,
            "UPDATE projects SET "
            "session_count = (SELECT count(*) FROM sessions WHERE project_id = $1), "
            "message_count = (SELECT coalesce(sum(message_count), 0) FROM sessions WHERE "
            "project_id = $1), "
            "first_activity = coalesce((SELECT min(started_at) FROM sessions WHERE "
            "project_id = $1 AND started_at <> ''), ''), "
            "last_activity = coalesce((SELECT max(ended_at) FROM sessions WHERE "
            "project_id = $1 AND ended_at <> ''), ''), "
            "sources = coalesce((SELECT string_agg(source, ',' ORDER BY source COLLATE \"C\") "
            "FROM (SELECT DISTINCT source FROM sessions WHERE project_id = $1) d), '') "
            "WHERE id = $1",
            1, w);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

static int pg_tool_call_name(store *s, const char *id, const char *call_id, char **name)
{
    int64_t sid = 0;
    int rc = session_sid(s, id, &sid, NULL);
    if (rc < 0)
        return rc;
    char a[32];
    snprintf(a, sizeof a, "%" PRId64, sid);
    const char *v[] = {a, call_id};
    PGresult *r = run(s,
                      "SELECT tool_name FROM messages WHERE sid = $1 AND tool_call_id = $2 AND "
                      "role = 'assistant' AND tool_name IS NOT NULL LIMIT 1",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    rc = PQntuples(r) ? col_dup(r, 0, 0, 0, name) : MCPAGE_ENOTFOUND;
    PQclear(r);
    return rc;
}

static int pg_source_get(store *s, const char *hostname, const char *path, store_source *out)
{
    const char *v[] = {hostname, path};
    PGresult *r = run(s,
                      "SELECT hostname, path, session_id, size, inode, mtime_ns, consumed FROM "
                      "source_files WHERE hostname = $1 AND path = $2",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return MCPAGE_ENOTFOUND;
    }
    if (col_dup(r, 0, 0, 0, &out->hostname) || col_dup(r, 0, 1, 0, &out->path) ||
        col_dup(r, 0, 2, 0, &out->session_id)) {
        PQclear(r);
        store_source_clear(out);
        return MCPAGE_ENOMEM;
    }
    out->size = num(r, 0, 3);
    out->inode = num(r, 0, 4);
    out->mtime_ns = num(r, 0, 5);
    out->consumed = num(r, 0, 6);
    PQclear(r);
    return 0;
}

static int pg_sources_all(store *s, const char *hostname, size_t max_rows, store_sources *out)
{
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", max_rows + 1);
    const char *v[] = {hostname, lim};
    PGresult *r = run(s,
                      "SELECT path, session_id, size, inode, mtime_ns, consumed FROM source_files "
                      "WHERE hostname = $1 ORDER BY path COLLATE \"C\" LIMIT $2",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    if ((size_t)n > max_rows) {
        PQclear(r);
        return store_fail(s, MCPAGE_ERANGE, "more than %zu source files", max_rows);
    }
    out->rows = rows_alloc(n, sizeof *out->rows);
    if (n > 0 && !out->rows)
        goto nomem;
    for (int i = 0; i < n; i++) {
        store_source *row = &out->rows[out->count++];
        if (col_dup(r, i, 0, 0, &row->path) || col_dup(r, i, 1, 0, &row->session_id))
            goto nomem;
        row->size = num(r, i, 2);
        row->inode = num(r, i, 3);
        row->mtime_ns = num(r, i, 4);
        row->consumed = num(r, i, 5);
    }
    PQclear(r);
    return 0;
nomem:
    PQclear(r);
    store_sources_free(out);
    return MCPAGE_ENOMEM;
}

static int pg_source_put(store *s, const store_source *src)
{
    NEED_TX();
    char a[32], b[32], c3[32], d[32];
    snprintf(a, sizeof a, "%" PRId64, src->size);
    snprintf(b, sizeof b, "%" PRId64, src->inode);
    snprintf(c3, sizeof c3, "%" PRId64, src->mtime_ns);
    snprintf(d, sizeof d, "%" PRId64, src->consumed);
    const char *v[] = {src->hostname ? src->hostname : "", src->path, src->session_id, a, b, c3, d};
    PGresult *r = run(s,
                      "INSERT INTO source_files(hostname, path, session_id, size, inode, "
                      "mtime_ns, consumed) VALUES($1, $2, $3, $4, $5, $6, $7) "
                      "ON CONFLICT(hostname, path) DO UPDATE SET session_id = excluded.session_id, "
                      "size = excluded.size, inode = excluded.inode, "
                      "mtime_ns = excluded.mtime_ns, consumed = excluded.consumed",
                      7, v);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

/* ---- session locks, ping --------------------------------------------- */

static int pg_session_lock(store *s, const char *id)
{
    char cls[16];
    snprintf(cls, sizeof cls, "%d", PG_LOCK_CLASS);
    const char *v[] = {cls, id};
    PGresult *r = run(s, "SELECT pg_advisory_lock($1::int, hashtext($2))", 2, v);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    CONN(s)->locks++;
    return 0;
}

static int pg_session_unlock(store *s, const char *id)
{
    pg_conn *c = CONN(s);
    if (c->locks <= 0)
        return 0; /* lost with the connection: nothing is held */
    char cls[16];
    snprintf(cls, sizeof cls, "%d", PG_LOCK_CLASS);
    const char *v[] = {cls, id};
    c->locks--;
    PGresult *r = run(s, "SELECT pg_advisory_unlock($1::int, hashtext($2))", 2, v);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

/* ---- open / close --------------------------------------------------- */

static void pg_close(store *s)
{
    store_pg_release(CONN(s));
    s->impl = NULL;
}

/* ---- HTTP sessions ended with DELETE --------------------------------- */

/* Microseconds of ends re-read before a poll position: an end committed after
 * a later one (two instances at once) is still seen. */
#define PG_ENDED_OVERLAP_US 10000000

static void key_hex(const uint8_t *key, char out[2 * STORE_ENDED_KEY_LEN + 1])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < STORE_ENDED_KEY_LEN; i++) {
        out[2 * i] = hx[key[i] >> 4];
        out[2 * i + 1] = hx[key[i] & 15];
    }
    out[2 * STORE_ENDED_KEY_LEN] = '\0';
}

static int pg_ended_record(store *s, const uint8_t *key, int64_t until)
{
    char k[2 * STORE_ENDED_KEY_LEN + 1], u[32];
    key_hex(key, k);
    snprintf(u, sizeof u, "%" PRId64, until);
    const char *v[] = {k, u};
    PGresult *r = run(s,
                      "INSERT INTO ended_sessions(key, until_s) VALUES(decode($1, 'hex'), $2) "
                      "ON CONFLICT (key) DO NOTHING",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    /* Expired ends matter no more: their ids are refused by age. */
    r = run(s, "DELETE FROM ended_sessions WHERE until_s < extract(epoch from now())", 0, NULL);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

static int pg_ended_lookup(store *s, const uint8_t *key, bool *ended)
{
    char k[2 * STORE_ENDED_KEY_LEN + 1];
    key_hex(key, k);
    const char *v[] = {k};
    PGresult *r = run(s,
                      "SELECT 1 FROM ended_sessions WHERE key = decode($1, 'hex') "
                      "AND until_s >= extract(epoch from now())",
                      1, v);
    if (!r)
        return MCPAGE_ESTORE;
    *ended = PQntuples(r) > 0;
    PQclear(r);
    return 0;
}

static int unhex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int pg_ended_since(store *s, int64_t *mark, store_ended_fn each, void *ctx)
{
    char m[32], o[32];
    snprintf(m, sizeof m, "%" PRId64, *mark);
    snprintf(o, sizeof o, "%d", PG_ENDED_OVERLAP_US);
    const char *v[] = {m, o};
    /* One row at least (the clock), then the ends since the position. */
    PGresult *r = run(s,
                      "SELECT c.now_us, encode(e.key, 'hex'), e.until_s FROM (SELECT "
                      "(extract(epoch from clock_timestamp()) * 1000000)::bigint AS now_us) c "
                      "LEFT JOIN ended_sessions e ON $1::bigint > 0 AND e.ended_us > $1::bigint - "
                      "$2::bigint AND e.until_s >= extract(epoch from now()) ORDER BY e.ended_us",
                      2, v);
    if (!r)
        return MCPAGE_ESTORE;
    int n = PQntuples(r);
    for (int i = 0; i < n; i++) {
        if (PQgetisnull(r, i, 1))
            continue;
        const char *h = PQgetvalue(r, i, 1);
        uint8_t key[STORE_ENDED_KEY_LEN];
        int ok = strlen(h) == 2 * STORE_ENDED_KEY_LEN;
        for (int j = 0; ok && j < STORE_ENDED_KEY_LEN; j++) {
            int hi = unhex(h[2 * j]), lo = unhex(h[2 * j + 1]);
            ok = hi >= 0 && lo >= 0;
            key[j] = (uint8_t)(hi << 4 | (lo & 15));
        }
        if (ok)
            each(ctx, key, num(r, i, 2));
    }
    if (n > 0)
        *mark = num(r, 0, 0);
    PQclear(r);
    return 0;
}

static const store_ops pg_ops = {
    .name = "postgres",
    .dialect = &pg_dialect,
    .sql_rows = pg_sql_rows,
    .close = pg_close,
    .projects_list = pg_projects_list,
    .projects_count = pg_projects_count,
    .sessions_list = pg_sessions_list,
    .sessions_count = pg_sessions_count,
    .session_get = pg_session_get,
    .messages_from = pg_messages_from,
    .message_get = pg_message_get,
    .text_lines = pg_text_lines,
    .raw_read = pg_raw_read,
    .session_summary = pg_session_summary,
    .search = pg_search,
    .search_count = pg_search_count,
    .activity = pg_activity,
    .stats = pg_stats,
    .generation = pg_generation,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .project_ensure = pg_project_ensure,
    .session_put = pg_session_put,
    .session_state = pg_session_state,
    .session_reset = pg_session_reset,
    .message_add = pg_message_add,
    .raw_append = pg_raw_append,
    .tidy = pg_tidy,
    .session_refresh = pg_session_refresh,
    .tool_call_name = pg_tool_call_name,
    .source_get = pg_source_get,
    .source_put = pg_source_put,
    .sources_all = pg_sources_all,
    .session_lock = pg_session_lock,
    .session_unlock = pg_session_unlock,
    .ping = store_pg_ping,
    .ended_record = pg_ended_record,
    .ended_lookup = pg_ended_lookup,
    .ended_since = pg_ended_since,
};

int store_pg_open(store *s, const char *url, int flags)
{
    pg_conn *c = NULL;
    int rc = store_pg_connect(s, url, (flags & STORE_OPEN_WRITE) != 0, &c);
    if (rc < 0)
        return rc;
    s->impl = c;
    s->ops = &pg_ops;
    return 0;
}
