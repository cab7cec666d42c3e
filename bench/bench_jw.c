/*
 * Throughput of the JSON writer: record-like objects written call by call,
 * the same records as jansson values through jw_json (and jansson's own
 * json_dumps for comparison), and long strings. Prints MB/s of output;
 * nothing is asserted. Build and run from the repository root:
 *   cmake --preset release && cmake --build --preset release -j2 --target bench_jw
 *   build/release/bench/bench_jw
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "page/jw.h"

#define RECORDS 20000 /* records per pass */
#define PASSES  10    /* passes per measurement */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned rng = 12345;
static unsigned rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static void hex(char *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = "0123456789abcdef"[rnd() & 15];
    out[n] = '\0';
}

static const char *const texts[] = {
    "Run the unit tests and summarise the failures.",
    ("The second page starts from the offset, not the key, so a record inserted between calls "
     "shifts everything by one.\nI will switch to keyset pagination."),
    "Größere Ergebnisse werden über mehrere Seiten verteilt. \"quoted\" \\ back\tslash",
    "分页是一个很古老的想法。模型读取工具的输出时，上下文窗口很小。🚀",
};

static void record(jw *w, unsigned i, const char *id, const char *sha)
{
    jw_object_begin(w);
    jw_kv_string(w, "id", id);
    jw_kv_int(w, "seq", (int64_t)i);
    jw_kv_string(w, "ts", "2026-11-03T09:12:44.123Z");
    jw_kv_string(w, "sha", sha);
    jw_kv_string(w, "role", i % 2 ? "assistant" : "user");
    jw_key(w, "cost");
    jw_double(w, (double)i / 7.0);
    jw_kv_bool(w, "ok", i % 5 != 0);
    jw_kv_string(w, "text", texts[i % 4]);
    jw_object_end(w);
}

int main(void)
{
    char ids[64][40], shas[64][48];
    for (int k = 0; k < 64; k++) {
        hex(ids[k], 32);
        hex(shas[k], 40);
    }

    /* 1. Records written call by call. */
    jw w;
    jw_init(&w, 0);
    double t0 = now(), bytes = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        jw_reset(&w);
        jw_array_begin(&w);
        for (unsigned i = 0; i < RECORDS; i++)
            record(&w, i, ids[i % 64], shas[i % 64]);
        jw_array_end(&w);
        bytes += (double)w.len;
    }
    double secs = now() - t0;
    printf("jw records (calls):      %8.0f MB/s  (%zu bytes per pass)\n", bytes / secs / 1e6,
           w.len);

    /* 2. The same records as jansson values: jw_json against json_dumps. */
    json_error_t err;
    json_t *v = json_loadb(w.buf, w.len, 0, &err);
    if (v == NULL) {
        fprintf(stderr, "reparse failed: %s\n", err.text);
        return 1;
    }
    t0 = now();
    bytes = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        jw_reset(&w);
        jw_json(&w, v);
        bytes += (double)w.len;
    }
    secs = now() - t0;
    printf("jw_json records:         %8.0f MB/s\n", bytes / secs / 1e6);
    t0 = now();
    bytes = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        bytes += (double)strlen(s);
        free(s);
    }
    secs = now() - t0;
    printf("jansson json_dumps:      %8.0f MB/s\n", bytes / secs / 1e6);
    json_decref(v);

    /* 3. Long strings: plain ASCII, mixed UTF-8 with escapes. */
    size_t big = 8u << 20;
    char *s = malloc(big + 1);
    if (s == NULL)
        return 1;
    for (int kind = 0; kind < 2; kind++) {
        size_t n = 0;
        while (n < big) {
            const char *t =
                kind == 0 ? "The quick brown fox jumps over the lazy dog. " : texts[n % 4];
            size_t tl = strlen(t);
            if (n + tl > big)
                break;
            memcpy(s + n, t, tl);
            n += tl;
        }
        t0 = now();
        bytes = 0;
        for (int pass = 0; pass < PASSES; pass++) {
            jw_reset(&w);
            jw_stringn(&w, s, n);
            bytes += (double)w.len;
        }
        secs = now() - t0;
        printf("jw long string (%s): %8.0f MB/s\n", kind == 0 ? "ASCII" : "UTF-8",
               bytes / secs / 1e6);
    }
    free(s);
    jw_free(&w);
    return 0;
}
