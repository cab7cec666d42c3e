/*
 * Tool latency on a large archive, through the full dispatch path (a
 * session fed JSON-RPC tools/call requests, answered on a worker thread):
 * list_sessions at depth 0 and at the end through next_cursor and by
 * offset, search_conversations for a common and a rare term (relevance
 * and newest, first page with the exact count and a later page with the
 * count carried in the cursor), and read_session at a deep line. Medians
 * over repeated runs, printed, not asserted.
 *
 *   bench_tools ARCHIVE.db [RUNS] [COMMON_TERM] [RARE_TERM]
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpage/page.h>
#include <mcpage/server.h>

#include "store/store.h"
#include "tools/tools.h"

typedef struct bench {
    mcpage_session *s;  /* the session calls go through */
    pthread_mutex_t mu; /* guards last */
    json_t *last;       /* the last reply */
    int id;             /* next request id */
} bench;

static int capture(void *ud, const char *msg, size_t len, const char *related)
{
    (void)related;
    bench *b = ud;
    json_t *v = json_loadb(msg, len, 0, NULL);
    pthread_mutex_lock(&b->mu);
    json_decref(b->last);
    b->last = v;
    pthread_mutex_unlock(&b->mu);
    return 0;
}

static double clock_us(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double now_us(void)
{
    return clock_us(CLOCK_MONOTONIC);
}

/* CPU time of the whole process (the caller and the worker thread): on a
   shared, loaded machine the wall clock also measures the neighbours. */
static double cpu_us(void)
{
    return clock_us(CLOCK_PROCESS_CPUTIME_ID);
}

/* One call; returns the result (new reference), its latency in *us and CPU time in *cpu. */
static json_t *call_cpu(bench *b, const char *tool, json_t *args, double *us, double *cpu)
{
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", ++b->id,
                            "method", "tools/call", "params", "name", tool, "arguments", args);
    char *txt = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    double t0 = now_us(), c0 = cpu_us();
    mcpage_session_receive(b->s, txt, strlen(txt));
    mcpage_session_drain(b->s, -1);
    double t1 = now_us(), c1 = cpu_us();
    free(txt);
    if (us)
        *us = t1 - t0;
    if (cpu)
        *cpu = c1 - c0;
    pthread_mutex_lock(&b->mu);
    json_t *res = json_incref(json_object_get(b->last, "result"));
    pthread_mutex_unlock(&b->mu);
    if (res == NULL || json_is_true(json_object_get(res, "isError"))) {
        char *a = json_dumps(b->last, JSON_COMPACT);
        fprintf(stderr, "bench_tools: %s failed: %.400s\n", tool, a ? a : "?");
        free(a);
        exit(1);
    }
    return res;
}

static json_t *call(bench *b, const char *tool, json_t *args, double *us)
{
    return call_cpu(b, tool, args, us, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The CPU median of the last median() call. */
static double last_cpu;

/* Median latency of `runs` calls of tool(args_json); last_cpu gets the CPU median. */
static double median(bench *b, int runs, const char *tool, const char *args_json)
{
    double *v = calloc((size_t)runs, sizeof *v), *c = calloc((size_t)runs, sizeof *c);
    for (int i = 0; i < runs; i++) {
        json_t *res = call_cpu(b, tool, json_loads(args_json, 0, NULL), &v[i], &c[i]);
        json_decref(res);
    }
    qsort(v, (size_t)runs, sizeof *v, cmp_double);
    qsort(c, (size_t)runs, sizeof *c, cmp_double);
    double m = v[runs / 2];
    last_cpu = c[runs / 2];
    free(v);
    free(c);
    return m;
}

static const json_t *sc(const json_t *res)
{
    return json_object_get(res, "structuredContent");
}

static void row(const char *what, double us, const char *note)
{
    printf("| %-58s | %10.3f | %8.3f | %s |\n", what, us / 1000.0, last_cpu / 1000.0,
           note ? note : "");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_tools ARCHIVE.db [RUNS] [COMMON_TERM] [RARE_TERM]\n");
        return 2;
    }
    const char *db = argv[1];
    int runs = argc > 2 ? atoi(argv[2]) : 21;
    const char *common = argc > 3 ? argv[3] : "the";
    const char *rare = argc > 4 ? argv[4] : "012345";
    if (runs < 1)
        runs = 1;
    mcpage_keyring *kr;
    mcpage_pager *pager;
    tools_ctx ctx;
    mcpage_server *srv;
    bench b = {.id = 0};
    pthread_mutex_init(&b.mu, NULL);
    if (mcpage_keyring_new(&kr) || mcpage_keyring_load(kr, NULL, NULL) ||
        mcpage_pager_new(NULL, kr, &pager) || tools_ctx_init(&ctx, db, pager))
        return 1;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "bench", "0");
    cfg.keyring = kr;
    cfg.workers = 1;
    if (mcpage_server_new(&cfg, &srv) || tools_register_all(srv, &ctx) ||
        mcpage_session_new(srv, capture, &b, &b.s))
        return 1;
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}"
        "}";
    mcpage_session_receive(b.s, init, sizeof init - 1);
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcpage_session_receive(b.s, note, sizeof note - 1);

    store *st;
    store_stats stats;
    if (store_open(db, STORE_OPEN_READONLY, &st) || store_stats_get(st, &stats))
        return 1;
    printf("archive: %lld projects, %lld sessions, %lld messages, %.1f MB store; %d runs per "
           "figure (median, through JSON-RPC dispatch and a worker thread)\n\n",
           (long long)stats.projects, (long long)stats.sessions, (long long)stats.messages,
           (double)stats.size_bytes / 1e6, runs);
    printf("| %-58s | %10s | %8s | %s |\n", "call", "wall ms", "cpu ms", "note");
    printf("|%s|%s|%s|%s|\n", "------------------------------------------------------------",
           "------------", "----------", "------");

    /* list_sessions: depth 0, then the end by cursor and by offset. */
    double first = median(&b, runs, "list_sessions", "{\"limit\":20}");
    row("list_sessions limit=20, first page (counts the total)", first, NULL);
    json_t *res = call(&b, "list_sessions", json_pack("{s:i}", "limit", 20), NULL);
    int64_t total = json_integer_value(json_object_get(sc(res), "total_sessions"));
    json_decref(res);
    /* Walk to the last page with limit 100 to get a cursor near the end. */
    char *cursor = NULL;
    json_t *a = json_pack("{s:i}", "limit", 100);
    double walk0 = now_us();
    int pages = 0;
    for (;;) {
        res = call(&b, "list_sessions", a, NULL);
        pages++;
        const char *c = json_string_value(json_object_get(sc(res), "next_cursor"));
        int64_t next = json_integer_value(json_object_get(sc(res), "next_offset"));
        if (c == NULL || next >= total - 20) {
            free(cursor);
            cursor = c ? strdup(c) : NULL;
            json_decref(res);
            break;
        }
        free(cursor);
        cursor = strdup(c);
        a = json_pack("{s:i, s:s}", "limit", 100, "cursor", cursor);
        json_decref(res);
    }
    double walk = now_us() - walk0;
    last_cpu = 0;
    char buf[1024];
    if (cursor) {
        snprintf(buf, sizeof buf, "{\"limit\":20,\"cursor\":\"%s\"}", cursor);
        double end = median(&b, runs, "list_sessions", buf);
        char n[96];
        snprintf(n, sizeof n, "%.2fx the first page", end / first);
        row("list_sessions limit=20 at the end, by next_cursor", end, n);
    }
    snprintf(buf, sizeof buf, "{\"limit\":20,\"offset\":%lld}", (long long)(total - 20));
    double off = median(&b, runs, "list_sessions", buf);
    char n[128];
    snprintf(n, sizeof n, "%.2fx the first page (offset %lld)", off / first,
             (long long)(total - 20));
    row("list_sessions limit=20 at the end, by offset", off, n);
    snprintf(n, sizeof n, "%d pages of 100, %lld sessions", pages, (long long)total);
    row("whole cursor walk of list_sessions, limit=100", walk, n);
    free(cursor);

    /* search: common and rare terms, relevance and newest. */
    const char *terms[2] = {common, rare};
    for (int k = 0; k < 2; k++) {
        const char *sorts[2] = {"relevance", "newest"};
        for (int s = 0; s < 2; s++) {
            snprintf(buf, sizeof buf, "{\"query\":\"%s\",\"sort\":\"%s\"}", terms[k], sorts[s]);
            double us = median(&b, runs, "search_conversations", buf);
            res = call(&b, "search_conversations", json_loads(buf, 0, NULL), NULL);
            int64_t matches = json_integer_value(json_object_get(sc(res), "total_matches"));
            const char *c = json_string_value(json_object_get(sc(res), "next_cursor"));
            char what[160], note2[160];
            snprintf(what, sizeof what, "search \"%s\" sort=%s, page 1 (exact count)", terms[k],
                     sorts[s]);
            snprintf(note2, sizeof note2, "total_matches %lld", (long long)matches);
            row(what, us, note2);
            if (c) {
                snprintf(buf, sizeof buf, "{\"query\":\"%s\",\"sort\":\"%s\",\"cursor\":\"%s\"}",
                         terms[k], sorts[s], c);
                us = median(&b, runs, "search_conversations", buf);
                snprintf(what, sizeof what, "search \"%s\" sort=%s, page 2 (count from cursor)",
                         terms[k], sorts[s]);
                row(what, us, NULL);
            }
            json_decref(res);
        }
    }

    /* read_session deep in the largest session. */
    store_session_filter f = {0};
    store_sessions rows;
    store_key after = {0};
    char big[STORE_ID_MAX + 1] = "";
    int64_t most = -1;
    for (;;) {
        store_page pg = {.after = after.nparts ? &after : NULL, .limit = 1000};
        if (store_sessions_list(st, &f, &pg, &rows) || rows.count == 0)
            break;
        for (size_t i = 0; i < rows.count; i++)
            if (rows.rows[i].message_count > most) {
                most = rows.rows[i].message_count;
                snprintf(big, sizeof big, "%s", rows.rows[i].session_id);
            }
        after = rows.rows[rows.count - 1].key;
        size_t cnt = rows.count;
        store_sessions_free(&rows);
        if (cnt < 1000)
            break;
    }
    if (big[0]) {
        snprintf(buf, sizeof buf, "{\"session_id\":\"%s\"}", big);
        res = call(&b, "read_session", json_loads(buf, 0, NULL), NULL);
        int64_t lines = json_integer_value(json_object_get(sc(res), "total_lines"));
        json_decref(res);
        double us1 = median(&b, runs, "read_session", buf);
        row("read_session line 1 of the largest session", us1, NULL);
        snprintf(buf, sizeof buf, "{\"session_id\":\"%s\",\"start_line\":%lld}", big,
                 (long long)(lines > 200 ? lines - 200 : 1));
        double us = median(&b, runs, "read_session", buf);
        char note3[160];
        snprintf(note3, sizeof note3, "%lld messages, %lld lines", (long long)most,
                 (long long)lines);
        row("read_session 200 lines before the end of it", us, note3);
    }
    store_close(st);
    mcpage_session_free(b.s);
    mcpage_server_free(srv);
    tools_ctx_free(&ctx);
    mcpage_pager_free(pager);
    mcpage_keyring_free(kr);
    json_decref(b.last);
    return 0;
}
