/*
 * `mcpage stats`: what the archive holds (projects, sessions, messages,
 * source files, size, generation).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"
#include "store/store.h"
#include "sync/sync.h"
#include "tools/text_out.h"

static void stats_usage(FILE *out)
{
    fprintf(out, "usage: mcpage stats [--store URL | --db FILE] [--json] [--no-check]\n\n"
                 "Prints what the archive holds, after checking that an SQLite store is\n"
                 "sound (every page is read: seconds on a large store; skipped while the\n"
                 "store's seal, FILE-checked, says a check passed within a day and nothing\n"
                 "has written the store since).\n\n"
                 "  --store URL  a shared store: postgres://user@host/db (env MCPAGE_STORE)\n"
                 "  --db FILE    the archive (env MCPAGE_DB; default as for 'mcpage sync')\n"
                 "  --json       print one JSON object on stdout\n"
                 "  --no-check   skip the check of every page\n");
}

int cli_cmd_stats(int argc, char **argv)
{
    const char *store_arg = NULL, *db_arg = NULL;
    int json = 0, no_check = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            stats_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--no-check") == 0) {
            no_check = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--store") == 0) {
            store_arg = argv[++i];
        } else {
            text_term_printf(stderr, "mcpage stats: unknown or incomplete option '%s'\n", argv[i]);
            stats_usage(stderr);
            return 2;
        }
    }
    char shown[SYNC_PATH_MAX];
    store *s;
    int rc = cli_store_open_read("mcpage stats", store_arg, db_arg, NULL, &s, shown, sizeof shown);
    if (rc != 0)
        return rc;
    store_stats st;
    rc = store_stats_get(s, &st);
    /* Counts can read fine from a file damaged elsewhere: every page is
     * checked too (SQLite: seconds on a large store). */
    if (rc == 0 && !no_check)
        rc = store_check(s);
    if (rc < 0) {
        text_term_printf(stderr, "mcpage stats: %s\n", store_errmsg(s));
        store_close(s);
        return 1;
    }
    if (json) {
        json_t *o =
            json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "db", shown, "backend",
                      store_backend_name(s), "projects", (json_int_t)st.projects, "sessions",
                      (json_int_t)st.sessions, "messages", (json_int_t)st.messages, "sources",
                      (json_int_t)st.sources, "size_bytes", (json_int_t)st.size_bytes, "raw_bytes",
                      (json_int_t)st.raw_bytes, "generation", (json_int_t)st.generation,
                      "schema_version", st.schema_version);
        char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(o);
    } else {
        text_term_printf(stdout,
                         "archive     %s (%s, schema %d)\n"
                         "projects    %lld\nsessions    %lld\nmessages    %lld\nsources     %lld\n"
                         "size        %.1f MB (raw transcripts kept: %.1f MB)\ngeneration  %lld\n",
                         shown, store_backend_name(s), st.schema_version, (long long)st.projects,
                         (long long)st.sessions, (long long)st.messages, (long long)st.sources,
                         (double)st.size_bytes / 1e6, (double)st.raw_bytes / 1e6,
                         (long long)st.generation);
    }
    store_close(s);
    return 0;
}
