/*
 * Throughput of the token estimator over the calibration corpus: prints
 * MB/s per class and overall (figures only; nothing is asserted).
 * Build and run from the repository root:
 *   cmake --preset release && cmake --build --preset release -j2 --target bench_tokens
 *   (or: gcc -O2 -std=c17 -Isrc -Iinclude bench/bench_tokens.c src/page/tokens.c -o
 * build/bench_tokens) build/release/bench/bench_tokens tests/data/tokens/record.json
 * tests/data/tokens/prose.txt ...
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "page/tokens.h"

#define MAX_FILE  (1u << 22)   /* 4 MiB per input file */
#define MIN_BYTES (200u << 20) /* estimate at least this much per file */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    char *buf = malloc(MAX_FILE);
    if (buf == NULL)
        return 1;
    double all_bytes = 0, all_secs = 0;
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (f == NULL) {
            perror(argv[a]);
            continue;
        }
        size_t n = fread(buf, 1, MAX_FILE, f);
        fclose(f);
        if (n == 0)
            continue;
        /* Best of three timings: the machine is shared, the best is the least disturbed. */
        size_t reps = MIN_BYTES / n / 3 + 1, sink = 0;
        double secs = 1e9;
        for (int round = 0; round < 3; round++) {
            double t0 = now();
            for (size_t r = 0; r < reps; r++)
                sink += mcpage__tokens_estimate(buf, n);
            double t = now() - t0;
            secs = t < secs ? t : secs;
        }
        sink /= 3;
        double bytes = (double)n * (double)reps;
        printf("%-40s %8zu bytes %10.0f MB/s (estimate %zu)\n", argv[a], n, bytes / secs / 1e6,
               sink / reps);
        all_bytes += bytes;
        all_secs += secs;
    }
    printf("overall %.0f MB/s\n", all_bytes / all_secs / 1e6);
    free(buf);
    return 0;
}
