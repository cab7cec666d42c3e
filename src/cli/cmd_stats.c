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

static void stats_usage(FILE *out)
{
    fprintf(out, "usage: mcpage stats [--db FILE] [--json]\n\n"
                 "Prints what the archive holds.\n\n"
                 "  --db FILE  the archive (env MCPAGE_DB; default as for 'mcpage sync')\n"
                 "  --json     print one JSON object on stdout\n");
}

int cli_cmd_stats(int argc, char **argv)
{
    char db[SYNC_PATH_MAX];
    const char *db_arg = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            stats_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--db") == 0) {
            db_arg = argv[++i];
        } else {
            fprintf(stderr, "mcpage stats: unknown or incomplete option '%s'\n", argv[i]);
            stats_usage(stderr);
            return 2;
        }
    }
    if (db_arg ? snprintf(db, sizeof db, "%s", db_arg) < 0 : sync_default_db(db, sizeof db) < 0) {
        fprintf(stderr, "mcpage stats: the path is too long\n");
        return 2;
    }
    store *s = NULL;
    char err[600];
    int rc = store_open_msg(db, STORE_OPEN_READONLY, &s, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mcpage stats: cannot open %s: %s\n", db, err);
        return 1;
    }
    store_stats st;
    rc = store_stats_get(s, &st);
    if (rc < 0) {
        fprintf(stderr, "mcpage stats: %s\n", store_errmsg(s));
        store_close(s);
        return 1;
    }
    if (json) {
        json_t *o =
            json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "db", db, "backend",
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
        printf("archive     %s (%s, schema %d)\n"
               "projects    %lld\nsessions    %lld\nmessages    %lld\nsources     %lld\n"
               "size        %.1f MB (raw transcripts kept: %.1f MB)\ngeneration  %lld\n",
               db, store_backend_name(s), st.schema_version, (long long)st.projects,
               (long long)st.sessions, (long long)st.messages, (long long)st.sources,
               (double)st.size_bytes / 1e6, (double)st.raw_bytes / 1e6, (long long)st.generation);
    }
    store_close(s);
    return 0;
}
