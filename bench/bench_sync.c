/*
 * The sync benchmark: a full sync of a generated archive (MB/s and
 * messages/s), a second pass with nothing changed, and an incremental
 * sync after one line is appended to one file among thousands. Prints
 * figures; asserts nothing. The archive's claude/, codex/, gemini/ and
 * copilot/ folders are synced when present; the appended line goes to a
 * file of the first of claude, gemini, copilot found.
 *
 *   bench_sync ARCHIVE_DIR DB_FILE [--keep]
 * DB_FILE is deleted first, unless --keep: then the full sync is skipped
 * and only the incremental passes run on the existing store.
 *
 * MCPAGE_BENCH_DESCRIBED=NAME reads the claude/ folder with the described
 * source NAME (the built-in descriptions and MCPAGE_SOURCES) instead of
 * the Claude Code reader, and leaves Codex out: the engine against the
 * dedicated reader on the same bytes (bench/claude-described.json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_desc.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU seconds used by this process so far, in user mode or in the
 * kernel (`sys`, when not NULL), user + system returned: on a shared
 * machine the wall clock also counts other people's work. */
static double cpu_split(double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double k = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    if (sys)
        *sys = k;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + k;
}

static double cpu_s(void)
{
    return cpu_split(NULL);
}

static double last_cpu, last_sys; /* of the last pass: CPU seconds, of which in the kernel */

static int pass(const char *db, const sync_options *o, sync_report *r, double *secs)
{
    store *s = NULL;
    double k0, k1, t0 = now_s(), c0 = cpu_split(&k0);
    int rc = store_open(db, STORE_OPEN_WRITE, &s);
    if (rc < 0)
        return rc;
    rc = sync_run(s, o, r);
    store_close(s);
    *secs = now_s() - t0;
    last_cpu = cpu_split(&k1) - c0;
    last_sys = k1 - k0;
    return rc;
}

int main(int argc, char **argv)
{
    int keep = argc == 4 && strcmp(argv[3], "--keep") == 0;
    if (argc != 3 && !keep) {
        fprintf(stderr, "usage: bench_sync ARCHIVE_DIR DB_FILE [--keep]\n");
        return 2;
    }
    char claude[4096], codex[4096], gemini[4096], copilot[4096], wal[4200], shm[4200];
    snprintf(claude, sizeof claude, "%s/claude", argv[1]);
    snprintf(codex, sizeof codex, "%s/codex", argv[1]);
    snprintf(gemini, sizeof gemini, "%s/gemini", argv[1]);
    snprintf(copilot, sizeof copilot, "%s/copilot", argv[1]);
    snprintf(wal, sizeof wal, "%s-wal", argv[2]);
    snprintf(shm, sizeof shm, "%s-shm", argv[2]);
    sync_options o = {.claude_home = claude,
                      .codex_home = codex,
                      .gemini_home = gemini,
                      .copilot_home = copilot,
                      .hostname = "bench"};
    /* where the appended lines go, and what they look like */
    const char *home = claude, *pattern = "*.jsonl";
    const char *line1 =
        "{\"type\":\"user\",\"timestamp\":\"2025-12-31T23:59:59.000Z\",\"message\":{"
        "\"role\":\"user\",\"content\":\"one more appended line\"}}\n";
    const char *line2 =
        "{\"type\":\"user\",\"timestamp\":\"2025-12-31T23:59:59.500Z\",\"message\":{"
        "\"role\":\"user\",\"content\":\"and one more\"}}\n";
    if (access(claude, F_OK) != 0 && access(gemini, F_OK) == 0) {
        home = gemini;
        line1 = "{\"id\":\"appended-1\",\"timestamp\":\"2025-12-31T23:59:59.000Z\",\"type\":"
                "\"user\",\"content\":\"one more appended line\"}\n";
        line2 = "{\"id\":\"appended-2\",\"timestamp\":\"2025-12-31T23:59:59.500Z\",\"type\":"
                "\"user\",\"content\":\"and one more\"}\n";
    } else if (access(claude, F_OK) != 0 && access(copilot, F_OK) == 0) {
        home = copilot;
        pattern = "events.jsonl";
        line1 = "{\"type\":\"user.message\",\"data\":{\"content\":\"one more appended line\"},"
                "\"id\":\"appended-1\",\"timestamp\":\"2025-12-31T23:59:59.000Z\"}\n";
        line2 = "{\"type\":\"user.message\",\"data\":{\"content\":\"and one more\"},"
                "\"id\":\"appended-2\",\"timestamp\":\"2025-12-31T23:59:59.500Z\"}\n";
    }
    const char *described = getenv("MCPAGE_BENCH_DESCRIBED");
    sync_descs descs = {0};
    sync_described one = {0};
    if (described && *described) {
        char err[700];
        if (sync_descs_load(&descs, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "bench_sync: %s\n", err);
            return 1;
        }
        one.desc = sync_descs_find(&descs, described);
        if (!one.desc) {
            fprintf(stderr, "bench_sync: no source is described as %s\n", described);
            return 1;
        }
        one.home = claude;
        o.described = &one;
        o.ndescribed = 1;
        o.claude_home = NULL;
        o.codex_home = NULL;
        printf("claude/ read by the described source %s (Codex left out)\n", described);
    }
    sync_report r;
    double secs;
    if (!keep) {
        unlink(argv[2]);
        unlink(wal);
        unlink(shm);
    }
    if (pass(argv[2], &o, &r, &secs) < 0)
        return 1;
    if (!keep)
        printf("full sync:        %lld files, %.1f MB, %lld messages in %.2f s = %.1f MB/s, %.0f "
               "messages/s (%lld malformed); CPU %.2f s = %.1f MB/s of CPU (%.2f s user, %.2f s "
               "system)\n",
               (long long)r.files_seen, (double)r.bytes_read / 1e6, (long long)r.messages_added,
               secs, (double)r.bytes_read / 1e6 / secs, (double)r.messages_added / secs,
               (long long)r.lines_malformed, last_cpu, (double)r.bytes_read / 1e6 / last_cpu,
               last_cpu - last_sys, last_sys);
    if (pass(argv[2], &o, &r, &secs) < 0)
        return 1;
    printf("nothing changed:  %lld files checked (%lld unchanged) in %.1f ms (CPU %.1f ms)\n",
           (long long)r.files_seen, (long long)r.files_unchanged, secs * 1e3, last_cpu * 1e3);
    /* append one line to one file among thousands */
    char cmd[8400];
    snprintf(cmd, sizeof cmd,
             "find '%s' -name '%s' | sort | awk '{a[NR]=$0} END {print a[int(NR/2)+1]}'", home,
             pattern);
    FILE *p = popen(cmd, "r");
    char path[4096] = "";
    if (!p || !fgets(path, sizeof path, p))
        return 1;
    pclose(p);
    path[strcspn(path, "\n")] = 0;
    FILE *f = fopen(path, "a");
    if (!f)
        return 1;
    fputs(line1, f);
    fclose(f);
    if (pass(argv[2], &o, &r, &secs) < 0)
        return 1;
    printf("one line appended: %lld files checked, %lld read, %lld message added in %.1f ms "
           "(CPU %.1f ms)\n",
           (long long)r.files_seen, (long long)r.files_read, (long long)r.messages_added,
           secs * 1e3, last_cpu * 1e3);
    /* the serve case: one handle kept open, syncing periodically */
    store *w = NULL;
    if (store_open(argv[2], STORE_OPEN_WRITE, &w) < 0)
        return 1;
    double t0 = now_s();
    if (sync_run(w, &o, &r) < 0)
        return 1;
    double warm1 = now_s() - t0;
    t0 = now_s();
    double c0 = cpu_s();
    if (sync_run(w, &o, &r) < 0)
        return 1;
    double warm2 = now_s() - t0, warm2_cpu = cpu_s() - c0;
    f = fopen(path, "a");
    if (!f)
        return 1;
    fputs(line2, f);
    fclose(f);
    t0 = now_s();
    c0 = cpu_s();
    if (sync_run(w, &o, &r) < 0)
        return 1;
    double warm3 = now_s() - t0, warm3_cpu = cpu_s() - c0;
    store_close(w);
    printf("serve-style, one open handle: nothing changed %.1f ms then %.1f ms (CPU %.1f ms); "
           "one line appended %.1f ms (CPU %.1f ms, %lld message added)\n",
           warm1 * 1e3, warm2 * 1e3, warm2_cpu * 1e3, warm3 * 1e3, warm3_cpu * 1e3,
           (long long)r.messages_added);
    store *s = NULL;
    store_stats st;
    if (store_open(argv[2], STORE_OPEN_READONLY, &s) == 0 && store_stats_get(s, &st) == 0)
        printf("store:            %.1f MB on disk (raw kept %.1f MB), %lld messages\n",
               (double)st.size_bytes / 1e6, (double)st.raw_bytes / 1e6, (long long)st.messages);
    store_close(s);
    return 0;
}
