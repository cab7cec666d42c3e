/*
 * Store benchmark: the same generated archive in SQLite and PostgreSQL,
 * list and search latency through the store interface, and throughput of
 * one or several processes (each standing for one `mcpage serve`
 * instance) reading at once.
 *
 *   bench_store fill SPEC --messages N [--seed S] [--first K]
 *                                                   writes N messages (sessions from number K:
 *                                                   0, or where an earlier fill ended)
 *   bench_store tidy SPEC                           a writer's store_tidy (PostgreSQL: the
 *                                                   relevance heads), timed
 *   bench_store query SPEC [--reps R] [--no-heads]  latency table (ms); --no-heads: PostgreSQL
 *                                                   ranks every match (store_pg__rank_off)
 *   bench_store load SPEC --procs P --seconds T     pages per second
 *   bench_store hostile SPEC                        one run of each hostile query (ms)
 *   bench_store sql FILE COUNT SQL                  an SQL statement on an SQLite store with
 *                                                   the store's own functions (mcpage_bm25,
 *                                                   mcpage_snippet), run COUNT times (ms);
 *                                                   under callgrind, COUNT 1 and 2 give one
 *                                                   warm run's instructions
 *   bench_store rank FILE DEPTH QUERY...            each query's first DEPTH relevance rows
 *                                                   through the store against FTS5's bm25
 *                                                   (`ORDER BY rank`); a query of several
 *                                                   words ("the error", "pa* the") is their AND
 *   bench_store keep FILE QUERY...                  a writer's process ranks each query's first
 *                                                   page, then commits: the store keeps the
 *                                                   impact lists it built (sqlite_impact.c), as
 *                                                   `mcpage serve`'s next sync would
 *
 * The generator writes through the store API (store_message_add), not
 * through transcripts: 1,000,000 messages of 20-60 words from a fixed
 * vocabulary, 100 messages a session, 40 projects, timestamps over a
 * year. Same seed, same archive in both backends.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "store/postgres/pg_internal.h"
#include "store/sqlite/sqlite_internal.h"
#include "store/store.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const vocab[] = {"the",
                                    "a",
                                    "to",
                                    "of",
                                    "and",
                                    "in",
                                    "is",
                                    "it",
                                    "that",
                                    "for",
                                    "function",
                                    "return",
                                    "error",
                                    "test",
                                    "file",
                                    "build",
                                    "cursor",
                                    "page",
                                    "session",
                                    "index",
                                    "query",
                                    "buffer",
                                    "limit",
                                    "offset",
                                    "parse",
                                    "token",
                                    "stream",
                                    "socket",
                                    "thread",
                                    "mutex",
                                    "commit",
                                    "branch",
                                    "merge",
                                    "rebase",
                                    "docker",
                                    "kernel",
                                    "compile",
                                    "linker",
                                    "header",
                                    "struct",
                                    "pointer",
                                    "alloc",
                                    "free",
                                    "leak",
                                    "segfault",
                                    "panic",
                                    "retry",
                                    "timeout",
                                    "postgres",
                                    "sqlite",
                                    "nginx",
                                    "upstream",
                                    "foo-bar",
                                    "c++",
                                    "max_tokens",
                                    "src/store/store.c",
                                    "path/to/file.c",
                                    "json",
                                    "schema",
                                    "migrate",
                                    "vacuum",
                                    "zebra",
                                    "quokka",
                                    "axolotl",
                                    "narwhal"};
#define NVOCAB (sizeof vocab / sizeof vocab[0])

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int fail(store *s, const char *what, int rc)
{
    fprintf(stderr, "bench_store: %s: %s (%s)\n", what, mcpage_strerror(rc),
            s ? store_errmsg(s) : "");
    return 1;
}

static int fill(const char *spec, int64_t total, int64_t first)
{
    store *s = NULL;
    char err[600];
    int rc = store_open_msg(spec, STORE_OPEN_WRITE, &s, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 1;
    }
    double t0 = now_ms();
    int64_t per_session = 100;
    int64_t sessions = (total + per_session - 1) / per_session;
    int64_t done = 0;
    sessions += first;
    for (int64_t k = first; k < sessions; k++) {
        if ((rc = store_begin(s)) < 0)
            return fail(s, "begin", rc);
        char path[64], name[32], sid[64], text[1024], ts[40];
        snprintf(name, sizeof name, "proj%02d", (int)(k % 40));
        snprintf(path, sizeof path, "/home/dev/%s", name);
        int64_t pid = 0;
        if ((rc = store_project_ensure(s, path, name, &pid)) < 0)
            return fail(s, "project", rc);
        snprintf(sid, sizeof sid, "bench-%08" PRId64, k);
        store_session_meta m = {.session_id = sid,
                                .source = (k % 3) ? "claude" : "codex",
                                .project_id = pid,
                                .model = "model-x",
                                .git_branch = "main",
                                .hostname = "bench"};
        if ((rc = store_session_put(s, &m)) < 0)
            return fail(s, "session", rc);
        int day = (int)(k * 365 / sessions);
        for (int64_t i = 0; i < per_session && done < total; i++, done++) {
            size_t o = 0;
            int words = 20 + (int)(rnd() % 41);
            for (int w = 0; w < words; w++) {
                /* skewed: common words often, the last four rarely */
                unsigned r = (unsigned)(rnd() % 1000);
                const char *word = r < 990 ? vocab[r % (NVOCAB - 4)] : vocab[NVOCAB - 4 + r % 4];
                o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", w ? " " : "", word);
            }
            snprintf(ts, sizeof ts, "2025-%02d-%02dT%02d:%02d:%02d.000Z", 1 + day / 31 % 12,
                     1 + day % 28, (int)(i / 60) % 24, (int)(i % 60), (int)(k % 60));
            store_message msg = {.session_id = sid,
                                 .ordinal = i,
                                 .role = (i % 2) ? "assistant" : "user",
                                 .timestamp = ts,
                                 .text = text,
                                 .tool_name = (i % 5 == 1) ? "Bash" : NULL,
                                 .is_error = (i % 97 == 3),
                                 .line_no = i + 1,
                                 .byte_offset = i * 100,
                                 .byte_length = 99};
            int64_t id;
            if ((rc = store_message_add(s, &msg, &id)) < 0)
                return fail(s, "message", rc);
        }
        if ((rc = store_session_refresh(s, sid)) < 0 || (rc = store_commit(s)) < 0)
            return fail(s, "commit", rc);
    }
    double ms = now_ms() - t0;
    printf("fill %s: %" PRId64 " messages, %" PRId64 " sessions in %.1f s (%.0f messages/s)\n",
           store_backend_name(s), done, sessions - first, ms / 1e3, (double)done / (ms / 1e3));
    store_close(s);
    return 0;
}

typedef struct probe {
    const char *name; /* what the row of the table measures */
    int kind;         /* 0 sessions page, 1 deep sessions page, 2 sessions count, 3 search */
    const char *query;
    store_search_sort sort;
    int count; /* search: count instead of a page */
} probe;

static int run_probe(store *s, const probe *p, const store_key *deep)
{
    store_page pg = {.limit = 50};
    if (p->kind == 0 || p->kind == 1) {
        if (p->kind == 1)
            pg.after = deep;
        store_sessions l;
        int rc = store_sessions_list(s, NULL, &pg, &l);
        store_sessions_free(&l);
        return rc;
    }
    if (p->kind == 2) {
        int64_t n;
        return store_sessions_count(s, NULL, &n);
    }
    store_search_filter f = {.query = p->query, .sort = p->sort};
    if (p->count) {
        int64_t n;
        return store_search_count(s, &f, &n);
    }
    pg.limit = 20;
    store_hits h;
    int rc = store_search(s, &f, &pg, &h);
    store_hits_free(&h);
    return rc;
}

static const probe probes[] = {
    {"sessions, first page (50)", 0, NULL, 0, 0},
    {"sessions, keyset page at 50%", 1, NULL, 0, 0},
    {"sessions, exact count", 2, NULL, 0, 0},
    {"search 'narwhal' relevance (20)", 3, "narwhal", STORE_SEARCH_RELEVANCE, 0},
    {"search 'narwhal' newest (20)", 3, "narwhal", STORE_SEARCH_NEWEST, 0},
    {"search 'narwhal' count", 3, "narwhal", STORE_SEARCH_RELEVANCE, 1},
    {"search \"kernel panic\" newest (20)", 3, "\"kernel panic\"", STORE_SEARCH_NEWEST, 0},
    {"search 'error' (common) newest (20)", 3, "error", STORE_SEARCH_NEWEST, 0},
    {"search 'error' (common) relevance (20)", 3, "error", STORE_SEARCH_RELEVANCE, 0},
    {"search 'axo*' prefix newest (20)", 3, "axo*", STORE_SEARCH_NEWEST, 0},
    /* words that ask for their class (store_words.h), and the exact form */
    {"search 'parse token' relevance (20)", 3, "parse token", STORE_SEARCH_RELEVANCE, 0},
    {"search 'parse token' count", 3, "parse token", STORE_SEARCH_RELEVANCE, 1},
    {"search '\"error\"' (exact) relevance (20)", 3, "\"error\"", STORE_SEARCH_RELEVANCE, 0},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int deep_key(store *s, store_key *k)
{
    int64_t n = 0;
    int rc = store_sessions_count(s, NULL, &n);
    if (rc < 0)
        return rc;
    store_page pg = {.offset = n / 2, .limit = 1};
    store_sessions l;
    rc = store_sessions_list(s, NULL, &pg, &l);
    if (rc < 0)
        return rc;
    if (l.count)
        *k = l.rows[0].key;
    store_sessions_free(&l);
    return 0;
}

static int query(const char *spec, int reps)
{
    store *s = NULL;
    char err[600];
    if (store_open_msg(spec, STORE_OPEN_READONLY, &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 1;
    }
    store_stats st;
    int rc = store_stats_get(s, &st);
    if (rc < 0)
        return fail(s, "stats", rc);
    store_key deep = {0};
    if ((rc = deep_key(s, &deep)) < 0)
        return fail(s, "deep key", rc);
    printf("%s: %" PRId64 " messages, %" PRId64 " sessions; median / p95 of %d runs (ms)\n",
           store_backend_name(s), st.messages, st.sessions, reps);
    double *t = calloc((size_t)reps, sizeof *t);
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        run_probe(s, &probes[i], &deep); /* warm */
        for (int r = 0; r < reps; r++) {
            double t0 = now_ms();
            if ((rc = run_probe(s, &probes[i], &deep)) < 0)
                return fail(s, probes[i].name, rc);
            t[r] = now_ms() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-40s %9.2f %9.2f\n", probes[i].name, t[reps / 2], t[(reps * 95) / 100]);
    }
    free(t);
    store_close(s);
    return 0;
}

/* One reader process: walks session pages and rare-word search pages by
 * keyset for `seconds`; writes its page count to fd. */
static void load_child(const char *spec, double seconds, int fd)
{
    store *s = NULL;
    if (store_open(spec, STORE_OPEN_READONLY, &s) < 0)
        _exit(3);
    int64_t pages = 0;
    double end = now_ms() + seconds * 1e3;
    store_key k = {0};
    int which = 0;
    while (now_ms() < end) {
        store_page pg = {.after = k.nparts ? &k : NULL, .limit = 50};
        size_t got = 0;
        if (which == 0) {
            store_sessions l;
            if (store_sessions_list(s, NULL, &pg, &l) < 0)
                _exit(4);
            got = l.count;
            if (got)
                k = l.rows[got - 1].key;
            store_sessions_free(&l);
        } else {
            store_search_filter f = {.query = "narwhal", .sort = STORE_SEARCH_NEWEST};
            store_hits h;
            pg.limit = 20;
            if (store_search(s, &f, &pg, &h) < 0)
                _exit(4);
            got = h.count;
            if (got)
                k = h.rows[got - 1].key;
            store_hits_free(&h);
        }
        pages++;
        if (got == 0 || pages % 20 == 0) { /* a new walk, alternating lists */
            k.nparts = 0;
            which ^= 1;
        }
    }
    store_close(s);
    if (write(fd, &pages, sizeof pages) != (ssize_t)sizeof pages)
        _exit(5);
    _exit(0);
}

static int load(const char *spec, int procs, double seconds)
{
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    for (int i = 0; i < procs; i++) {
        pid_t pid = fork();
        if (pid == 0)
            load_child(spec, seconds, fds[1]);
    }
    int64_t total = 0;
    for (int i = 0; i < procs; i++) {
        int st = 0;
        wait(&st);
        int64_t n = 0;
        if (read(fds[0], &n, sizeof n) == (ssize_t)sizeof n)
            total += n;
    }
    printf("load %s: %d process(es), %.0f s: %" PRId64 " pages, %.0f pages/s\n",
           store_spec_is_url(spec) ? "postgres" : "sqlite", procs, seconds, total,
           (double)total / seconds);
    return 0;
}

/* The hostile query of issue 15: "c* " x 1,365 (4,095 bytes, under the
 * query limit), and its deduplicated and normal neighbours. Each is run
 * once (at the baseline a run took minutes); the line says how it ended. */
static int hostile(const char *spec)
{
    store *s = NULL;
    char err[600];
    if (store_open_msg(spec, STORE_OPEN_READONLY, &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 1;
    }
    static char repeated[STORE_QUERY_MAX + 1], distinct[STORE_QUERY_MAX + 1];
    size_t o = 0;
    for (int i = 0; i < 1365; i++)
        o += (size_t)snprintf(repeated + o, sizeof repeated - o, "c* ");
    o = 0;
    for (int i = 0; o + 12 < sizeof distinct; i++)
        o += (size_t)snprintf(distinct + o, sizeof distinct - o, "w%d* ", i);
    const struct {
        const char *name;
        const char *query;
        store_search_sort sort;
        int count;
    } runs[] = {
        {"'c* ' x 1365 count", repeated, STORE_SEARCH_RELEVANCE, 1},
        {"'c* ' x 1365 newest (20)", repeated, STORE_SEARCH_NEWEST, 0},
        {"'c* ' x 1365 relevance (20)", repeated, STORE_SEARCH_RELEVANCE, 0},
        {"'w0* w1* ...' (distinct prefixes) newest", distinct, STORE_SEARCH_NEWEST, 0},
        {"'c*' newest (20)", "c*", STORE_SEARCH_NEWEST, 0},
        {"'c*' relevance (20)", "c*", STORE_SEARCH_RELEVANCE, 0},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0] + 2; i++) {
        /* the last two: four short prefixes ranked, under the tools'
         * budget and under a 200 ms one (how soon a stop lands) */
        int budgeted = i >= sizeof runs / sizeof runs[0];
        if (budgeted) {
            int64_t ms = i == sizeof runs / sizeof runs[0] ? STORE_QUERY_BUDGET_MS : 200;
            store_budget_set(s, ms, NULL, NULL);
            store_search_filter f = {.query = "c* t* s* p*", .sort = STORE_SEARCH_RELEVANCE};
            store_page pg = {.limit = 20};
            store_hits h = {0};
            double t0 = now_ms();
            int rc = store_search(s, &f, &pg, &h);
            double took = now_ms() - t0;
            store_hits_free(&h);
            store_budget_clear(s);
            printf("  %-44s %10.1f ms  %s%s%s\n",
                   ms == 200 ? "'c* t* s* p*' relevance, 200 ms budget"
                             : "'c* t* s* p*' relevance, tools' budget",
                   took, rc < 0 ? mcpage_strerror(rc) : "ok", rc < 0 ? ": " : "",
                   rc < 0 ? store_errmsg(s) : "");
            fflush(stdout);
            continue;
        }
        store_search_filter f = {.query = runs[i].query, .sort = runs[i].sort};
        store_page pg = {.limit = 20};
        double t0 = now_ms();
        int64_t n = 0;
        store_hits h = {0};
        int rc = runs[i].count ? store_search_count(s, &f, &n) : store_search(s, &f, &pg, &h);
        double ms = now_ms() - t0;
        if (!runs[i].count)
            n = (int64_t)h.count;
        store_hits_free(&h);
        printf("  %-44s %10.1f ms  %s%s%s\n", runs[i].name, ms, rc < 0 ? mcpage_strerror(rc) : "ok",
               rc < 0 ? ": " : "", rc < 0 ? store_errmsg(s) : "");
        if (rc == 0)
            printf("  %-44s %10" PRId64 " rows\n", "", n);
        fflush(stdout);
    }
    store_close(s);
    return 0;
}

/* `sql`: SQL on the file with the store's functions, stepped `count` times. */
static int sql_runs(const char *file, int count, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t nhit = -1; /* mcpage_bm25 counts each phrase's rows itself */
    if (sqlite3_open_v2(file, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        store_sqlite_text_register(db) != 0 ||
        store_sqlite_snippet_register(db, &nhit, NULL) != 0 ||
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_store sql: %s\n", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return 1;
    }
    double best = 0, sum = 0;
    int64_t rows = 0;
    for (int i = 0; i < count; i++) {
        double t0 = now_ms();
        rows = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            rows++;
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            fprintf(stderr, "bench_store sql: %s\n", sqlite3_errmsg(db));
            break;
        }
        double ms = now_ms() - t0;
        best = i == 0 || ms < best ? ms : best;
        sum += ms;
    }
    printf("%" PRId64 " rows; best %.3f ms, mean %.3f ms over %d runs\n", rows, best, sum / count,
           count);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}

/*
 * The first `depth` rows of each word's relevance pages through the store
 * (no budget), against FTS5's bm25 (`ORDER BY rank, rowid DESC`: equal
 * ranks newest stored first) on the same file: rows in the same order,
 * and the overlap, per word.
 */
static int rank_check(const char *file, int depth, char **words, int nwords)
{
    store *s = NULL;
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    if (store_open(file, STORE_OPEN_READONLY, &s) < 0 ||
        sqlite3_open_v2(file, &raw, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(raw,
                           "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY "
                           "rank, rowid DESC LIMIT ?",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_store rank: cannot open %s\n", file);
        return 1;
    }
    int same = 0, overlap = 0, rows = 0;
    for (int w = 0; w < nwords; w++) {
        store_search_filter q = {.query = words[w], .sort = STORE_SEARCH_RELEVANCE};
        store_page pg = {.limit = depth};
        store_hits h = {0};
        if (store_search(s, &q, &pg, &h) < 0) {
            fprintf(stderr, "bench_store rank: %s: %s\n", words[w], store_errmsg(s));
            return 1;
        }
        /* the store's FTS5 query: each word quoted, a trailing star a prefix */
        char fts[600];
        size_t o = 0;
        for (const char *p = words[w]; *p && o + 8 < sizeof fts;) {
            while (*p == ' ')
                p++;
            size_t n = strcspn(p, " ");
            int star = n > 1 && p[n - 1] == '*';
            if (n == 0 || o + n + 8 >= sizeof fts)
                break;
            o += (size_t)snprintf(fts + o, sizeof fts - o, "%s\"%.*s\"%s", o ? " " : "",
                                  (int)(n - (size_t)star), p, star ? "*" : "");
            p += n;
        }
        fts[o] = '\0';
        sqlite3_bind_text(st, 1, fts, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 2, depth);
        int64_t ref[1000];
        int n = 0, in_order = 1, common = 0;
        while (n < depth && n < 1000 && sqlite3_step(st) == SQLITE_ROW)
            ref[n++] = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        for (int i = 0; i < n; i++) {
            in_order &= (size_t)i < h.count && h.rows[i].message_id == ref[i];
            for (size_t j = 0; j < h.count; j++)
                common += h.rows[j].message_id == ref[i];
        }
        in_order &= (size_t)n == h.count;
        printf("%-16s top %d: %s, overlap %d of %d\n", words[w], depth,
               in_order ? "same rows in the same order" : "DIFFERENT", common, n);
        same += in_order;
        overlap += common;
        rows += n;
        store_hits_free(&h);
    }
    printf("%d words: %d with the same top %d, overlap %d of %d rows\n", nwords, same, depth,
           overlap, rows);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    store_close(s);
    return same == nwords ? 0 : 1;
}

/* `keep`: what `mcpage serve` does between its queries and its next sync's commit. */
static int keep_lists(const char *file, char **queries, int nqueries)
{
    store *s = NULL;
    if (store_open(file, STORE_OPEN_WRITE, &s) < 0) {
        fprintf(stderr, "bench_store keep: cannot open %s: %s\n", file,
                s ? store_errmsg(s) : "out of memory");
        store_close(s);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < nqueries && rc >= 0; i++) {
        store_search_filter q = {.query = queries[i], .sort = STORE_SEARCH_RELEVANCE};
        store_page pg = {.limit = 10};
        store_hits h = {0};
        int64_t n = 0;
        if ((rc = store_search_count(s, &q, &n)) >= 0 && (rc = store_search(s, &q, &pg, &h)) >= 0)
            printf("%s: %" PRId64 " matches\n", queries[i], n);
        store_hits_free(&h);
    }
    if (rc >= 0 && (rc = store_begin(s)) >= 0)
        rc = store_commit(s);
    if (rc < 0)
        fprintf(stderr, "bench_store keep: %s\n", store_errmsg(s));
    store_close(s);
    return rc < 0;
}

static int tidy(const char *spec)
{
    store *s = NULL;
    char err[600];
    if (store_open_msg(spec, STORE_OPEN_WRITE, &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 1;
    }
    double t0 = now_ms();
    int rc = store_tidy(s);
    if (rc < 0)
        return fail(s, "tidy", rc);
    printf("tidy %s: %.1f s\n", store_backend_name(s), (now_ms() - t0) / 1e3);
    store_close(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_store fill|query|load|hostile SPEC [--messages N] [--seed S] "
                        "[--first K] [--reps R] [--no-heads] [--procs P] [--seconds T]\n"
                        "       bench_store tidy SPEC\n"
                        "       bench_store sql FILE COUNT SQL\n"
                        "       bench_store rank FILE DEPTH WORD...\n"
                        "       bench_store keep FILE QUERY...\n");
        return 2;
    }
    if (strcmp(argv[1], "rank") == 0 && argc > 4 && atoi(argv[3]) > 0 && atoi(argv[3]) <= 1000)
        return rank_check(argv[2], atoi(argv[3]), argv + 4, argc - 4);
    if (strcmp(argv[1], "keep") == 0 && argc > 3)
        return keep_lists(argv[2], argv + 3, argc - 3);
    if (strcmp(argv[1], "tidy") == 0)
        return tidy(argv[2]);
    int64_t messages = 1000000, first = 0;
    int reps = 30, procs = 1;
    double seconds = 10;
    for (int i = 3; i < argc; i += 2) {
        if (strcmp(argv[i], "--no-heads") == 0) {
            store_pg__rank_off = 1;
            i--;
        } else if (i + 1 == argc)
            break;
        else if (strcmp(argv[i], "--first") == 0)
            first = strtoll(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--messages") == 0)
            messages = strtoll(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0)
            rng ^= strtoull(argv[i + 1], NULL, 10) * 0x9E3779B97F4A7C15ull;
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--procs") == 0)
            procs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
    }
    if (reps < 1 || procs < 1 || seconds <= 0 || messages < 1 || first < 0)
        return 2;
    if (strcmp(argv[1], "fill") == 0)
        return fill(argv[2], messages, first);
    if (strcmp(argv[1], "query") == 0)
        return query(argv[2], reps);
    if (strcmp(argv[1], "load") == 0)
        return load(argv[2], procs, seconds);
    if (strcmp(argv[1], "hostile") == 0)
        return hostile(argv[2]);
    if (strcmp(argv[1], "sql") == 0 && argc == 5 && atoi(argv[3]) > 0)
        return sql_runs(argv[2], atoi(argv[3]), argv[4]);
    return 2;
}
