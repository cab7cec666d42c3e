/*
 * The SQLite backend's full-text search: user syntax turned into an FTS5
 * query, the newest/oldest plans and their cost model, relevance pages
 * ranked by mcpage_bm25() (sqlite_rank.c) with snippets from
 * mcpage_snippet() (sqlite_snippet.c), and exact match counts.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_internal.h"
#include "store/store_sql.h"
#include "store/store_words.h"

/* ---- search --------------------------------------------------------- */

/* Relevance: bm25() of the match, lower is better (sqlite_rank.c). */
#define SQ_BM25 "mcpage_bm25(messages_fts)"

static int is_word_byte(unsigned char c)
{
    return isalnum(c) || c == '_' || c >= 0x80;
}

/*
 * The cost model of newest/oldest search plans, in microseconds, fitted
 * on a million-message archive (docs/store.md has the figures): probing
 * the FTS index for one row costs SQ_PROBE_US per plain term (a phrase or
 * prefix term weighs SQ_PROBE_HEAVY terms); collecting the matches into
 * a set costs SQ_SET_US per match and testing a row against it
 * SQ_ROW_US; joining and sorting every match costs SQ_SORT_US per match.
 */
#define SQ_PROBE_US    120.0
#define SQ_PROBE_HEAVY 15
#define SQ_SET_US      0.25
#define SQ_ROW_US      3.0
#define SQ_SORT_US     1.5

/* A page's snippets come from one pass over the matches (below) when
 * there are at most this many matches per page row. On 1M messages
 * (bench_store sql, callgrind) a pass costs about 700 instructions a
 * match, a probe per page row about 320k with the index in 15 segments
 * and 130k in one (after 'optimize'): the pass is cheaper up to about
 * 450 and 185 matches a row. */
#define SQ_PASS_PER_ROW 150

/* How a newest/oldest search finds its page. */
typedef enum sq_plan {
    SQ_COLLECT = 0, /* join every match, sort by time, take the page */
    SQ_PROBE,       /* walk the time index, probe the FTS index per row */
    SQ_MEMBER       /* collect the matching rowids once, walk the time index testing them */
} sq_plan;

/*
 * Turns user syntax into an FTS5 query: every word and every "quoted
 * phrase" becomes one quoted FTS5 string (embedded quotes doubled), so
 * no user character can be read as FTS5 syntax; a trailing `*` on a word
 * becomes a prefix query. Terms without any word character (`++`) are
 * dropped; a query left with no terms is rejected.
 */
/* What a query's terms cost to evaluate (fts_query_build). */
typedef struct sq_terms {
    int weight;   /* probe cost in plain-token units (SQ_PROBE_HEAVY a phrase or prefix) */
    int prefixes; /* prefix terms (`axo*`) */
    int phrases;  /* terms of several tokens (`"a b"`, `foo-bar`) */
    int terms;    /* words and phrases */
} sq_terms;

static int fts_query_build(store *s, const char *in, char *out, size_t cap, sq_terms *cost)
{
    size_t o = 0;
    int terms = 0;
    if (cost)
        memset(cost, 0, sizeof *cost);
    const char *p = in, *start, *end;
    int prefix, quoted;
    while (store_query_term_quoted(&p, &start, &end, &prefix, &quoted)) {
        /* An unquoted word asks for its class (store_words.h): `~render`,
         * one token that the tokenizer passes through. Anything else asks
         * for its tokens as written; separators before the first word
         * byte are dropped (they separate nothing), so no term of the
         * user's starts with the class mark. */
        char cls[STORE_WORD_CAP];
        size_t ncls = quoted || prefix ? 0 : store_word_query(start, (size_t)(end - start), cls);
        if (ncls) {
            start = cls;
            end = cls + ncls;
        } else {
            while (start < end && !is_word_byte((unsigned char)*start))
                start++;
        }
        int wordy = 0;
        for (const char *c = start; c < end; c++)
            if (is_word_byte((unsigned char)*c))
                wordy = 1;
        if (!wordy)
            continue;
        if (cost) {
            /* A term of several tokens (a phrase: `"a b"`, `foo-bar`) or a
             * prefix makes FTS5 read position lists or expand terms on
             * every probe: it weighs far more than one plain token. */
            int tokens = 0, in_word = 0;
            for (const char *c = start; c < end; c++) {
                int w = is_word_byte((unsigned char)*c);
                tokens += w && !in_word;
                in_word = w;
            }
            cost->weight += (prefix || tokens > 1) ? SQ_PROBE_HEAVY : 1;
            cost->prefixes += prefix;
            cost->phrases += tokens > 1;
            cost->terms++;
        }
        /* room for: space, quote, doubled content, quote, star, NUL */
        size_t need = 4 + 2 * (size_t)(end - start);
        if (o + need >= cap)
            return store_fail(s, MCPAGE_EPARSE, "search query too long");
        if (terms++)
            out[o++] = ' ';
        out[o++] = '"';
        for (const char *c = start; c < end; c++) {
            if (*c == '"')
                out[o++] = '"';
            out[o++] = *c;
        }
        out[o++] = '"';
        if (prefix)
            out[o++] = '*';
    }
    out[o] = 0;
    if (!terms)
        return store_fail(s, MCPAGE_EPARSE,
                          "search query has no words to search for; give words or "
                          "\"quoted phrases\"");
    return 0;
}

static void search_where(store_sql *q, const store_search_filter *f, const char *fts)
{
    store_sql_add(q, " WHERE messages_fts MATCH ?");
    store_sql_text(q, fts);
    store_sql_search_and(q, f);
}

/* A number that moves whenever the database may have changed: commits
 * by other connections (data_version) and this one's own changes. */
static int data_version(store *s, int64_t *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "PRAGMA data_version", &st);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    int64_t dv = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_err(s, "data version");
    *v = (dv << 32) ^ sqlite3_total_changes64(CONN(s)->db);
    return 0;
}

/* Remembers `n`, the bare match count of `fts` at `version`, for the
 * connection's next queries; `us` is how long one enumeration took, or
 * -1 when it was counted another way (an impact list). */
static void count_keep(sq_conn *c, const char *fts, int64_t n, double us, int64_t version)
{
    free(c->count_query);
    c->count_query = store_strdup(fts);
    c->count_matches = n;
    c->count_us = us;
    c->count_version = version;
}

/* Whether the connection's remembered count is of `fts` at `version`. */
static int count_remembered(const sq_conn *c, const char *fts, int64_t version)
{
    return c->count_query && strcmp(c->count_query, fts) == 0 && c->count_version == version;
}

/* The bare match count of `fts` (remembered for the connection's last
 * query until the database changes), and in *us how long counting took:
 * one enumeration. */
static int fts_matches(store *s, const char *fts, int64_t *n, double *us)
{
    sq_conn *c = CONN(s);
    int64_t version = 0;
    int vrc = data_version(s, &version);
    if (vrc < 0)
        return vrc;
    if (count_remembered(c, fts, version) && (us == NULL || c->count_us >= 0)) {
        *n = c->count_matches;
        if (us)
            *us = c->count_us;
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int rc = sq_prep(s, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", &st);
    if (rc < 0)
        return rc;
    sq_bind_text(st, 1, fts);
    double t0 = store_now_us();
    rc = sqlite3_step(st);
    double took = store_now_us() - t0;
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return sq_search_err(s);
    count_keep(c, fts, *n, took, version);
    if (us)
        *us = took;
    return 0;
}

/* The bare match count of `fts` when it is known without counting: `counted`
 * (choose_plan's), or this connection's last count if the database has not
 * changed since; else -1. */
static int known_matches(store *s, const char *fts, int64_t counted, int64_t *n)
{
    sq_conn *c = CONN(s);
    *n = counted;
    if (counted >= 0 || c->count_query == NULL)
        return 0;
    int64_t version = 0;
    int rc = data_version(s, &version);
    if (rc < 0)
        return rc;
    if (count_remembered(c, fts, version))
        *n = c->count_matches;
    return 0;
}

/*
 * A relevance page (or its count) of the query's terms comes from impact
 * lists (sqlite_impact.c): up to SQ_IMPACT_PHRASES_MAX words, phrases or
 * prefixes, and no filter of the messages (the caller checks those). Not
 * a prefix alone: FTS5 merges its expansions' doclists in every statement
 * that matches it, the list's included, so "pa*" (622k matches at a
 * million messages) kept a warm page at 600-1,000 ms either way.
 */
static int impact_serves(store *s, const store_search_filter *f, const sq_terms *cost)
{
    return f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST &&
           CONN(s)->own_snippet && cost->terms <= SQ_IMPACT_PHRASES_MAX &&
           !(cost->terms == 1 && cost->prefixes > 0) && !store_sqlite__impact_off;
}

/* Test knobs (sqlite_internal.h). */
int store_sqlite__force_plan;
int store_sqlite__force_outer;
int64_t store_sqlite__snippet_passes;

/*
 * The cheapest plan for a newest/oldest page of `fts` (whose terms weigh
 * `weight`, fts_query_build). Walking the time index stops after the
 * page, so it reads about (offset + limit) x messages / matches rows; it
 * wins when matches are dense, probing per row when probes are cheap
 * (plain terms matching a large share of messages) and testing rows
 * against the collected matches when they are not (phrases, prefixes,
 * middling shares). Sparse matches are collected and sorted. Filters
 * other than dates thin the matches in ways the counts do not show: they
 * keep the collect plan.
 */
static int choose_plan(store *s, const store_search_filter *f, const store_page *pg,
                       const char *fts, const sq_terms *cost, sq_plan *plan, int64_t *nmatches)
{
    *plan = SQ_COLLECT;
    *nmatches = -1;
    if (f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST)
        return 0;
    if ((f->project && *f->project) || (f->source && *f->source) || (f->role && *f->role) ||
        (f->tool && *f->tool) || f->has_error || f->view)
        return 0;
    int64_t matches = 0;
    double enum_us = 0;
    int rc = fts_matches(s, fts, &matches, &enum_us);
    if (rc < 0)
        return rc;
    *nmatches = matches;
    if (store_sqlite__force_plan > 0 && store_sqlite__force_plan <= SQ_MEMBER + 1) {
        *plan = (sq_plan)(store_sqlite__force_plan - 1);
        return 0;
    }
    if (matches == 0)
        return 0;
    sqlite3_stmt *st = NULL;
    rc = sq_prep(s, "SELECT coalesce(max(message_id), 0) FROM messages", &st);
    if (rc < 0)
        return rc;
    int64_t total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    double want = (double)((store_page_keyset(pg) ? 0 : pg->offset) + pg->limit);
    double rows = want * (double)total / (double)matches; /* rows a time walk reads */
    /* FTS5 evaluates a prefix by merging the doclists of every term it
     * expands to, for each probe as for the count: a prefix probe costs
     * about one enumeration, which the count just timed ("pa*" on 1M
     * messages: 190 ms a probe, 230 ms the count). */
    double per_probe = SQ_PROBE_US * (cost->weight > 0 ? cost->weight : 1);
    if (cost->prefixes > 0 && enum_us > per_probe)
        per_probe = enum_us;
    double probe = rows * per_probe;
    double member = (double)matches * SQ_SET_US + rows * SQ_ROW_US;
    double collect = (double)matches * SQ_SORT_US;
    if (probe <= member && probe < collect)
        *plan = SQ_PROBE;
    else if (member < collect)
        *plan = SQ_MEMBER;
    return 0;
}

/* "CASE WHEN h.id IS <the id of h's row at `peek` in order `outer`> ":
 * h's rows joined as the outer query joins them, so that its rows and
 * h's are the same (one statement, one snapshot), evaluated once. */
static void search_peek(store_sql *q, const char *outer, int64_t peek)
{
    store_sql_add(q, "CASE WHEN h.id IS (SELECT h.id FROM h CROSS JOIN messages m ON "
                     "m.message_id = h.id JOIN sessions s ON s.sid = m.sid ORDER BY ");
    store_sql_add(q, outer);
    store_sql_add(q, " LIMIT 1 OFFSET ?) ");
    store_sql_int(q, peek);
}

/* The columns of a search page's rows, up to FROM: the snippet is cut
 * around the first match (sqlite_snippet.c), not scored over the text.
 * With `peek` (a pass: h holds the page's rows), the row at `peek` in
 * the page's order `outer`, past the rows shown, only says that more
 * exist: it gets no snippet and no line (an eleventh of a rare word's
 * page). */
static void search_head(store_sql *q, int own_snippet, const char *outer, int64_t peek)
{
    store_sql_add(q, "SELECT h.id, s.session_id, p.name, m.role, m.timestamp, ");
    if (peek >= 0) {
        search_peek(q, outer, peek);
        store_sql_add(q, "THEN NULL ELSE ");
    }
    store_sql_add(q, own_snippet ? "mcpage_snippet(" : "snippet(");
    store_sql_add(q, "messages_fts, 0, '" STORE_HIT_OPEN "', '" STORE_HIT_CLOSE "', '…', 24)");
    if (peek >= 0) {
        store_sql_add(q, " END, m.ordinal, h.rk, ");
        search_peek(q, outer, peek);
        store_sql_add(q, "THEN NULL ELSE ");
    } else {
        store_sql_add(q, ", m.ordinal, h.rk, ");
    }
    /* what precedes the hit in its session, its transcript line:
     * "count lines", one scan of the index for both */
    store_sql_add(q, "(SELECT count(*) || ' ' || coalesce(sum(b.text_lines), 0) FROM messages b "
                     "INDEXED BY messages_lines WHERE b.sid = m.sid AND b.ordinal < m.ordinal)");
    store_sql_add(q, peek >= 0 ? " END FROM " : " FROM ");
}

/*
 * A page of a search grouped by session (store_search_filter.by_session):
 * every match is scored (relevance) and grouped, O(matches) under the
 * call's budget, then the page's sessions get their representative's
 * columns and snippet (one FTS5 probe each) and their line.
 */
/* A search row's hit (columns 0-8: the row, its snippet, "count lines"
 * before it); the grouped search reads its three more columns after. */
static int sq_hit_read(sqlite3_stmt *st, const store_search_filter *f, store_hit *h)
{
    store_sql_row r = sq_row(st);
    if (store_sql_hit_row(&r, f->sort, h) < 0 || sq_col_dup(st, 5, 0, &h->snippet) < 0)
        return MCPAGE_ENOMEM;
    const char *before = (const char *)sqlite3_column_text(st, 8);
    char *end = NULL;
    h->before_count = before ? strtoll(before, &end, 10) : 0;
    h->before_lines = end ? strtoll(end, NULL, 10) : 0;
    return 0;
}

/*
 * mcpage_groups(sid, key, id, ordinal, flags), an aggregate over every
 * match of a grouped search, without GROUP BY: for each session (sid),
 * its representative, the id of its first row in (key, id) order (keys
 * compared as SQLite orders values: NULL, then numbers, then text and
 * blobs by their bytes; flags bit 0 orders the key descending, bit 1 the
 * id, so ties break as the page's keyset breaks them), its matches and
 * its first and last ordinal, as JSON [[sid, key, id, n, fo, lo], ...] (a
 * number key as its IEEE 754 bits: mcpage_f64() gives it back). Memory
 * goes with the sessions; a GROUP BY sorted every match (4 MB of sorter
 * for 100,000 matches, docs/performance.md).
 */
typedef struct pick_acc {
    int set, cls;       /* a row seen; its key's class (0 NULL, 1 number, 2 text, 3 blob) */
    double num;         /* a number key */
    unsigned char *txt; /* a text or blob key (sqlite3_malloc), and its length */
    int len;
    int64_t id;
} pick_acc;

static int pick_class(sqlite3_value *v)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
        return 0;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
        return 1;
    case SQLITE_TEXT:
        return 2;
    default:
        return 3;
    }
}

/* <0, 0, >0 as key v sorts before, with, after the kept key. */
static int pick_cmp(const pick_acc *a, sqlite3_value *v, int cls)
{
    if (cls != a->cls)
        return cls < a->cls ? -1 : 1;
    if (cls == 1) {
        double d = sqlite3_value_double(v);
        return d < a->num ? -1 : d > a->num;
    }
    if (cls == 0)
        return 0;
    const void *p = cls == 2 ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);
    int n = sqlite3_value_bytes(v), m = n < a->len ? n : a->len;
    int c = m > 0 ? memcmp(p, a->txt, (size_t)m) : 0;
    return c ? c : (n > a->len) - (n < a->len);
}

/* Keeps (key, id) in `a` if it comes first; SQLITE_NOMEM or SQLITE_OK. */
static int pick_take(pick_acc *a, sqlite3_value *key, int64_t id, int flags)
{
    int cls = pick_class(key);
    if (a->set) {
        int c = pick_cmp(a, key, cls);
        if (flags & 1)
            c = -c;
        if (c == 0)
            c = flags & 2 ? (id > a->id ? -1 : id < a->id) : (id < a->id ? -1 : id > a->id);
        if (c >= 0)
            return SQLITE_OK;
    }
    if (cls >= 2) {
        const void *p = cls == 2 ? (const void *)sqlite3_value_text(key) : sqlite3_value_blob(key);
        int n = sqlite3_value_bytes(key);
        if (n > a->len || a->txt == NULL) {
            unsigned char *t = sqlite3_realloc(a->txt, n > 0 ? n : 1);
            if (t == NULL)
                return SQLITE_NOMEM;
            a->txt = t;
        }
        if (n > 0)
            memcpy(a->txt, p, (size_t)n);
        a->len = n;
    } else if (cls == 1) {
        a->num = sqlite3_value_double(key);
    }
    a->set = 1, a->cls = cls, a->id = id;
    return SQLITE_OK;
}

/* One session of mcpage_groups. */
typedef struct group_acc {
    int64_t sid;
    pick_acc pick;  /* its representative */
    int64_t n;      /* matches */
    int64_t fo, lo; /* first and last ordinal */
} group_acc;

typedef struct groups_acc {
    group_acc *g; /* the sessions, in the order first seen */
    int64_t n, cap;
    sq_keymap at; /* sid to its index in g */
    int failed;
} groups_acc;

/* The session `sid` of `a`, added if new; NULL when out of memory. */
static group_acc *group_of(groups_acc *a, int64_t sid)
{
    int64_t i = sq_keymap_get(&a->at, sid);
    if (i >= 0)
        return &a->g[i];
    if (a->n == a->cap) {
        int64_t cap = a->cap ? 2 * a->cap : 64;
        group_acc *g = sqlite3_realloc64(a->g, (sqlite3_uint64)cap * sizeof *g);
        if (g == NULL)
            return NULL;
        a->g = g;
        a->cap = cap;
    }
    if (sq_keymap_put(&a->at, sid, a->n) != SQLITE_OK)
        return NULL;
    group_acc *g = &a->g[a->n++];
    memset(g, 0, sizeof *g);
    g->sid = sid;
    return g;
}

static void groups_step(sqlite3_context *ctx, int nval, sqlite3_value **val)
{
    (void)nval;
    groups_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
    if (a == NULL || a->failed) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    int64_t ordinal = sqlite3_value_int64(val[3]);
    group_acc *g = group_of(a, sqlite3_value_int64(val[0]));
    if (g == NULL || pick_take(&g->pick, val[1], sqlite3_value_int64(val[2]),
                               sqlite3_value_int(val[4])) != SQLITE_OK) {
        a->failed = 1;
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (g->n == 0 || ordinal < g->fo)
        g->fo = ordinal;
    if (g->n == 0 || ordinal > g->lo)
        g->lo = ordinal;
    g->n++;
}

/* Appends text `p` (n bytes) to `out` as a JSON string. */
static void json_string(sqlite3_str *out, const unsigned char *p, int n)
{
    sqlite3_str_appendchar(out, 1, '"');
    int from = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] != '"' && p[i] != '\\' && p[i] >= 0x20)
            continue;
        sqlite3_str_append(out, (const char *)p + from, i - from);
        if (p[i] == '"' || p[i] == '\\')
            sqlite3_str_appendf(out, "\\%c", p[i]);
        else
            sqlite3_str_appendf(out, "\\u%04x", p[i]);
        from = i + 1;
    }
    sqlite3_str_append(out, (const char *)p + from, n - from);
    sqlite3_str_appendchar(out, 1, '"');
}

static void groups_final(sqlite3_context *ctx)
{
    groups_acc *a = sqlite3_aggregate_context(ctx, 0);
    sqlite3_str *out = sqlite3_str_new(sqlite3_context_db_handle(ctx));
    int bad = a != NULL && a->failed;
    sqlite3_str_appendchar(out, 1, '[');
    for (int64_t i = 0; a && i < a->n && !bad; i++) {
        const group_acc *g = &a->g[i];
        sqlite3_str_appendf(out, "%s[%lld,", i ? "," : "", (long long)g->sid);
        if (g->pick.cls == 1) {
            sqlite3_int64 bits;
            memcpy(&bits, &g->pick.num, sizeof bits);
            sqlite3_str_appendf(out, "%lld", (long long)bits);
        } else if (g->pick.cls == 2) {
            json_string(out, g->pick.txt, g->pick.len);
        } else if (g->pick.cls == 0) {
            sqlite3_str_appendall(out, "null");
        } else {
            bad = 1; /* a blob key: no session's time or rank is one */
        }
        sqlite3_str_appendf(out, ",%lld,%lld,%lld,%lld]", (long long)g->pick.id, (long long)g->n,
                            (long long)g->fo, (long long)g->lo);
    }
    sqlite3_str_appendchar(out, 1, ']');
    for (int64_t i = 0; a && i < a->n; i++)
        sqlite3_free(a->g[i].pick.txt);
    if (a) {
        sqlite3_free(a->g);
        sq_keymap_free(&a->at);
        a->g = NULL;
        a->n = 0;
    }
    int len = sqlite3_str_length(out);
    int rc = sqlite3_str_errcode(out);
    char *json = sqlite3_str_finish(out);
    if (bad || rc != SQLITE_OK || json == NULL) {
        sqlite3_free(json);
        if (bad && rc == SQLITE_OK)
            sqlite3_result_error(ctx, "mcpage_groups: a blob key", -1);
        else
            sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, json, len, sqlite3_free);
}

int store_sqlite_search_register(sqlite3 *db)
{
    return sqlite3_create_function(db, "mcpage_groups", 5, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                   NULL, groups_step, groups_final) == SQLITE_OK &&
                   sqlite3_create_function(db, "mcpage_f64", 1,
                                           SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                           NULL, store_sqlite__f64, NULL, NULL) == SQLITE_OK
               ? 0
               : -1;
}

/*
 * Matches from which a grouped page (and its count) runs with the page
 * cache at its walk floor (sq_cache_fit): it reads every match and its
 * message row once, more pages than the cache holds ("error", 100,881
 * matches: most of the 1,933 pages of messages), so under LRU none would
 * be read again; a rare word's few are (its newest grouped page 2x
 * slower at the floor).
 */
#define SQ_GROUPS_SCAN_MATCHES 4096

static int64_t groups_fit(store *s, const char *fts)
{
    int64_t n = 0;
    return fts_matches(s, fts, &n, NULL) == 0 && n >= SQ_GROUPS_SCAN_MATCHES ? SQ_FIT_SCAN : 0;
}

static int search_groups(store *s, const store_search_filter *f, const store_page *pg,
                         const char *fts, store_hits *out)
{
    int own = CONN(s)->own_snippet;
    int need_s = (f->project && *f->project) || (f->source && *f->source) || f->view;
    store_sql q = {.d = &sq_dialect};
    store_sql_add(&q, "WITH h AS (SELECT m.message_id AS id, m.sid, m.ordinal, "
                      "m.timestamp AS ts, ");
    store_sql_add(&q, f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST
                          ? (own ? SQ_BM25 : "messages_fts.rank")
                          : "0.0");
    store_sql_add(&q, " AS rk FROM messages_fts JOIN messages m ON m.message_id = "
                      "messages_fts.rowid");
    if (need_s)
        store_sql_add(&q, " JOIN sessions s ON s.sid = m.sid");
    search_where(&q, f, fts);
    /* h feeds one aggregate: streamed (a co-routine), not put whole into a
     * table first (every match, 1.8 MB for "error" on 373,750 messages).
     * The OFFSET keeps SQLite from flattening it into the aggregate's
     * query, where mcpage_bm25() has no FTS5 context. */
    store_sql_add(&q, " LIMIT -1 OFFSET 0");
    int rc = store_sql_search_groups(s, &q, f, pg);
    if (rc < 0)
        return rc;
    store_sql_add(&q,
                  own ? "SELECT g.id, s.session_id, p.name, m.role, g.ts, (SELECT mcpage_snippet("
                      : "SELECT g.id, s.session_id, p.name, m.role, g.ts, (SELECT snippet(");
    store_sql_add(&q, "messages_fts, 0, '" STORE_HIT_OPEN "', '" STORE_HIT_CLOSE
                      "', '…', 24) FROM messages_fts WHERE messages_fts MATCH ? AND "
                      "messages_fts.rowid = g.id), g.ordinal, g.rk, (SELECT count(*) || ' ' || "
                      "coalesce(sum(b.text_lines), 0) FROM messages b INDEXED BY messages_lines "
                      "WHERE b.sid = g.sid AND b.ordinal < g.ordinal), g.n, g.fid, g.lid FROM g "
                      "JOIN messages m ON m.message_id = g.id JOIN sessions s ON s.sid = g.sid "
                      "LEFT JOIN projects p ON p.id = s.project_id ORDER BY ");
    store_sql_text(&q, fts);
    store_sql_add(&q, store_sql_search_groups_order(f));
    sqlite3_stmt *st = NULL;
    if ((rc = sq_sql_prepare(s, &q, &st)) < 0)
        return rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_hit *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_hit *h = &rows[out->count++];
        if (sq_hit_read(st, f, h) < 0)
            goto nomem;
        h->hits = sqlite3_column_int64(st, 9);
        h->first_id = sqlite3_column_int64(st, 10);
        h->last_id = sqlite3_column_int64(st, 11);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_hits_free(out);
        return sq_search_err(s);
    }
    return 0;
nomem:
    sqlite3_reset(st);
    store_hits_free(out);
    return MCPAGE_ENOMEM;
}

int sqlite_search(store *s, const store_search_filter *f, const store_page *pg, store_hits *out)
{
    char fts[2 * STORE_QUERY_MAX + 16];
    sq_terms cost;
    int rc = fts_query_build(s, f->query, fts, sizeof fts, &cost);
    if (rc < 0)
        return rc;
    sq_cache_fit(s, f->by_session ? groups_fit(s, fts) : 0);
    if (f->by_session)
        return search_groups(s, f, pg, fts, out);
    /*
     * The inner query picks the page (filters, keyset, order, limit);
     * only its rows get a snippet, computed by the outer query. bm25 is
     * computed only for relevance order.
     */
    store_sql q = {.d = &sq_dialect};
    sqlite3_stmt *st = NULL;
    int relevance = f->sort != STORE_SEARCH_NEWEST && f->sort != STORE_SEARCH_OLDEST;
    int need_s = (f->project && *f->project) || (f->source && *f->source) || f->view;
    int need_m = need_s || (f->role && *f->role) || (f->tool && *f->tool) ||
                 (f->after && *f->after) || (f->before && *f->before) || f->has_error;
    sq_plan plan = SQ_COLLECT;
    int64_t matches = -1;
    if ((rc = choose_plan(s, f, pg, fts, &cost, &plan, &matches)) < 0)
        return rc;
    /* The outer query gives the page's rows their snippets (below), one
     * FTS5 probe per row. A prefix probe costs about one enumeration of
     * the matches (choose_plan), so with a prefix, enumerating them once
     * and keeping the page's rows is cheaper (axo* on 1M messages, newest:
     * 100 to 30 ms). Not with a phrase: enumerating checks positions in
     * every row holding all its words, where a probe checks one row
     * ("kernel panic": 58 to 78-100 ms); bench_store query. */
    int fts_drives = cost.prefixes > 0 && cost.phrases == 0;
    if (store_sqlite__force_outer)
        fts_drives = store_sqlite__force_outer > 0;
    /* The snippets need each page row's matches from FTS5. A probe per row
     * looks the phrase up in every segment of the index; one pass over
     * the matches pays that once, then a little per match: cheaper when
     * the matches are few (a rare word) and known to be few (counted).
     * The pass picks the page's rows first (a CTE, so that the outer
     * query can both join and test them). A prefix keeps its own way of
     * enumerating the matches (fts_drives): the pass is no cheaper there
     * ("01234*", newest: 20.4M instructions a call, 20.7M in a pass). */
    int64_t known = -1;
    if ((rc = known_matches(s, fts, matches, &known)) < 0)
        return rc;
    int pass = !fts_drives && !store_sqlite__force_outer && known >= 0 &&
               known <= SQ_PASS_PER_ROW * pg->limit;
    if (pass) {
        __atomic_fetch_add(&store_sqlite__snippet_passes, 1, __ATOMIC_RELAXED); /* shared */
        store_sql_add(&q, "WITH h AS MATERIALIZED (");
    } else {
        search_head(&q, CONN(s)->own_snippet, NULL, -1);
        store_sql_add(&q, fts_drives ? "messages_fts CROSS JOIN (" : "(");
    }
    /* bm25 as mcpage_bm25() computes it (sqlite_rank.c), else FTS5's rank. */
    int own = CONN(s)->own_snippet;
    /* The inner query: which rows, in which order (four shapes). */
    const char *order, *outer, *cmp;
    store_key_type types[2] = {STORE_KEY_TEXT, STORE_KEY_INT};
    /* the rows up to the page's end (an offset past the bound scores every match) */
    int64_t want = store_page_keyset(pg)              ? pg->limit
                   : pg->offset <= SQ_IMPACT_WANT_MAX ? pg->offset + pg->limit
                                                      : SQ_IMPACT_WANT_MAX + 1;
    if (!need_m && impact_serves(s, f, &cost) && want <= SQ_IMPACT_WANT_MAX) {
        /* The phrases' impact lists pick the page (sqlite_impact.c). */
        const store_key *k = store_page_keyset(pg) ? pg->after : NULL;
        int has_key = k && k->nparts == 2 && k->part[0].type == STORE_KEY_REAL &&
                      k->part[1].type == STORE_KEY_INT;
        store_sql_add(&q, SQ_IMPACT_PAGE);
        store_sql_text(&q, fts);
        store_sql_int(&q, want);
        store_sql_int(&q, has_key);
        if (has_key) { /* the key's message id: its second part is -message_id */
            store_sql_key(&q, &k->part[0]);
            store_sql_int(&q, -k->part[1].i);
        } else {
            store_sql_int(&q, 0);
            store_sql_int(&q, 0);
        }
        store_sql_text(&q, fts);
        order = "rk, id DESC";
        cmp = " AND (rk, -id) > (?, ?)";
    } else if (relevance && !need_m) {
        /* FTS5 alone: no join while every match is scored. */
        store_sql_add(&q, own ? "SELECT messages_fts.rowid AS id, " SQ_BM25
                                " AS rk FROM messages_fts "
                                "WHERE messages_fts MATCH ?"
                              : "SELECT messages_fts.rowid AS id, messages_fts.rank AS rk FROM "
                                "messages_fts WHERE messages_fts MATCH ?");
        store_sql_text(&q, fts);
        order = own ? SQ_BM25 ", messages_fts.rowid DESC"
                    : "messages_fts.rank, messages_fts.rowid DESC";
        cmp = own ? " AND (" SQ_BM25 ", -messages_fts.rowid) > (?, ?)"
                  : " AND (messages_fts.rank, -messages_fts.rowid) > (?, ?)";
    } else if (plan != SQ_COLLECT) {
        store_sql_add(&q,
                      plan == SQ_PROBE
                          ? "SELECT m.message_id AS id, 0.0 AS rk FROM messages m INDEXED BY "
                            "messages_time WHERE EXISTS (SELECT 1 FROM messages_fts WHERE "
                            "messages_fts MATCH ? AND messages_fts.rowid = m.message_id)"
                          : "SELECT m.message_id AS id, 0.0 AS rk FROM messages m INDEXED BY "
                            "messages_time WHERE m.message_id IN (SELECT rowid FROM messages_fts "
                            "WHERE messages_fts MATCH ?)");
        store_sql_text(&q, fts);
        store_sql_where_text(&q, "m.timestamp >= ?", f->after);
        store_sql_where_text(&q, "m.timestamp < ?", f->before);
        order = cmp = NULL;
    } else {
        store_sql_add(&q, !relevance ? "SELECT m.message_id AS id, 0.0 AS rk"
                          : own      ? "SELECT m.message_id AS id, " SQ_BM25 " AS rk"
                                     : "SELECT m.message_id AS id, messages_fts.rank AS rk");
        store_sql_add(&q,
                      " FROM messages_fts JOIN messages m ON m.message_id = messages_fts.rowid");
        if (need_s)
            store_sql_add(&q, " JOIN sessions s ON s.sid = m.sid");
        search_where(&q, f, fts);
        order = own ? SQ_BM25 ", m.message_id DESC" : "messages_fts.rank, m.message_id DESC";
        cmp = own ? " AND (" SQ_BM25 ", -m.message_id) > (?, ?)"
                  : " AND (messages_fts.rank, -m.message_id) > (?, ?)";
    }
    switch (f->sort) {
    case STORE_SEARCH_NEWEST:
        order = "m.timestamp DESC, m.message_id DESC";
        outer = "m.timestamp DESC, h.id DESC";
        cmp = " AND (m.timestamp, m.message_id) < (?, ?)";
        break;
    case STORE_SEARCH_OLDEST:
        order = "m.timestamp, m.message_id";
        outer = "m.timestamp, h.id";
        cmp = " AND (m.timestamp, m.message_id) > (?, ?)";
        break;
    default:
        outer = "h.rk, h.id DESC";
        types[0] = STORE_KEY_REAL;
        break;
    }
    if ((rc = store_sql_after(s, &q, pg, cmp, types)) < 0)
        return rc;
    store_sql_page(&q, order, pg);
    /* The outer query: the page's rows get their columns and a snippet.
     * CROSS JOIN fixes the loop order: the page outside (one FTS5 probe
     * per row), or the matches outside (fts_drives; the pass, whose
     * matches are each tested against the page, an index of h, before
     * they are joined, and read only between the page's smallest and
     * largest rowid). */
    /* (With the matches outside, messages comes after the page too, or
     * every match would be looked up in it: "er*", 485k matches, 220 to
     * 60 ms.) */
    if (pass) {
        store_sql_add(&q, ") ");
        int64_t peek = pg->shown > 0 && pg->shown < pg->limit ? pg->shown : -1;
        search_head(&q, CONN(s)->own_snippet, outer, peek);
        store_sql_add(&q, "messages_fts CROSS JOIN h ON h.id = messages_fts.rowid "
                          "CROSS JOIN messages m ");
    } else {
        store_sql_add(&q, fts_drives ? ") h ON h.id = messages_fts.rowid CROSS JOIN messages m "
                                     : ") h CROSS JOIN messages_fts ON messages_fts.rowid = h.id "
                                       "JOIN messages m ");
    }
    store_sql_add(&q, "ON m.message_id = h.id JOIN sessions s ON s.sid = m.sid "
                      "LEFT JOIN projects p ON p.id = s.project_id WHERE messages_fts MATCH ?");
    store_sql_text(&q, fts);
    if (pass)
        store_sql_add(&q, " AND +messages_fts.rowid IN (SELECT id FROM h) AND messages_fts.rowid "
                          "BETWEEN (SELECT min(id) FROM h) AND (SELECT max(id) FROM h)");
    store_sql_add(&q, " ORDER BY ");
    store_sql_add(&q, outer);
    rc = sq_sql_prepare(s, &q, &st);
    if (rc < 0)
        return rc;
    /* bm25 needs the rows holding each phrase: for one phrase, the bare
     * count this connection may have just made for the page's total. */
    if (relevance && own)
        CONN(s)->rank_nhit = known;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_hit *rows = sq_rows_grow(out->rows, out->count, &cap, sizeof *rows);
        if (!rows)
            goto nomem;
        out->rows = rows;
        store_hit *h = &rows[out->count++];
        if (sq_hit_read(st, f, h) < 0)
            goto nomem;
    }
    sqlite3_reset(st);
    CONN(s)->rank_nhit = -1;
    if (rc != SQLITE_DONE) {
        store_hits_free(out);
        return sq_search_err(s);
    }
    return 0;
nomem:
    sqlite3_reset(st);
    CONN(s)->rank_nhit = -1;
    store_hits_free(out);
    return MCPAGE_ENOMEM;
}

/* The matches of `fts` counted by building (or reading) its impact list. */
static int impact_count(store *s, const char *fts, int64_t *n)
{
    sqlite3_stmt *st = NULL;
    int64_t version = 0;
    int rc = data_version(s, &version);
    if (rc < 0 || (rc = sq_prep(s, SQ_IMPACT_COUNT, &st)) < 0)
        return rc;
    sq_bind_text(st, 1, fts);
    sq_bind_text(st, 2, fts);
    rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sq_search_err(s);
    count_keep(CONN(s), fts, *n, -1, version); /* the page's plan reads it (known_matches) */
    return 0;
}

int sqlite_search_count(store *s, const store_search_filter *f, int64_t *n)
{
    char fts[2 * STORE_QUERY_MAX + 16];
    sq_terms cost;
    int rc = fts_query_build(s, f->query, fts, sizeof fts, &cost);
    if (rc < 0)
        return rc;
    sq_cache_fit(s, f->by_session ? groups_fit(s, fts) : 0); /* as its page's */
    /* Join only what the filters read: a bare count is a doclist scan. */
    int need_s = (f->project && *f->project) || (f->source && *f->source) || f->view;
    int need_m = need_s || (f->role && *f->role) || (f->tool && *f->tool) ||
                 (f->after && *f->after) || (f->before && *f->before) || f->has_error ||
                 f->by_session;
    if (!need_m && impact_serves(s, f, &cost)) /* the list the page reads next counts them */
        return impact_count(s, fts, n);
    if (!need_m) /* the bare count the plan choice also needs: counted once */
        return fts_matches(s, fts, n, NULL);
    store_sql q = {.d = &sq_dialect};
    store_sql_add(&q, f->by_session ? "SELECT count(DISTINCT m.sid) FROM messages_fts"
                                    : "SELECT count(*) FROM messages_fts");
    if (need_m)
        store_sql_add(&q, " JOIN messages m ON m.message_id = messages_fts.rowid");
    if (need_s)
        store_sql_add(&q, " JOIN sessions s ON s.sid = m.sid");
    search_where(&q, f, fts);
    return sq_count_query(s, &q, n, MCPAGE_EPARSE);
}
