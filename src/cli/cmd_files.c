/*
 * `mcpage files [PATH]`: which sessions wrote or edited a file, newest
 * first: the list the file_history tool pages, printed whole (up to
 * --limit), as text lines or JSON Lines.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"
#include "store/store.h"
#include "sync/sync.h"
#include "page/term.h"

#define FILES_LIMIT_DEFAULT 50
#define FILES_LIMIT_MAX     100000
#define FILES_PAGE          500 /* rows read from the store at a time */

static void files_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage files [PATH] [--project NAME] [--agent NAME] [--after DATE]\n"
            "                    [--before DATE] [--limit N] [--json]\n"
            "                    [--store URL | --db FILE]\n\n"
            "Prints which sessions wrote or edited a file, newest first: every file a\n"
            "tool call changed (Edit, apply_patch, write_file, ...), with its session,\n"
            "the message holding the call (read it with read_session(message_id=...)),\n"
            "the agent and tool, and the lines added and removed where the call shows\n"
            "them ('?' where not). The list the file_history tool pages.\n\n"
            "  PATH            an absolute path (exact), a trailing part (src/foo.c) or a\n"
            "                  glob with * and ? (src/*.c); omitted: every edit\n"
            "  --project NAME  only this project (name or full path)\n"
            "  --agent NAME    only this agent (claude, codex, gemini, ...)\n"
            "  --after DATE    at or after this UTC date or time (YYYY-MM-DD...)\n"
            "  --before DATE   before this UTC date or time\n"
            "  --limit N       print at most N edits (default %d, up to %d)\n"
            "  --json          one JSON object per edit (JSON Lines), the tool's fields\n"
            "  --store URL     a shared store: postgres://user@host/db (env MCPAGE_STORE)\n"
            "  --db FILE       the archive (env MCPAGE_DB; default as for 'mcpage sync')\n",
            FILES_LIMIT_DEFAULT, FILES_LIMIT_MAX);
}

static void print_json(const store_edit_row *r)
{
    json_t *o = json_pack("{s:s, s:s, s:s?, s:s, s:s, s:s?}", "path", r->path, "session_id",
                          r->session_id, "timestamp", r->timestamp, "agent", r->source, "tool",
                          r->tool, "summary", r->summary);
    if (!o)
        return;
    json_object_set_new(o, "message_id",
                        r->message_id > 0 ? json_integer(r->message_id) : json_null());
    json_object_set_new(o, "added", r->added >= 0 ? json_integer(r->added) : json_null());
    json_object_set_new(o, "removed", r->removed >= 0 ? json_integer(r->removed) : json_null());
    json_object_set_new(o, "project", r->project ? json_string(r->project) : json_null());
    char *t = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (t)
        printf("%s\n", t);
    free(t);
    json_decref(o);
}

static void print_text(const store_edit_row *r)
{
    char added[24] = "?", removed[24] = "?", when[20] = "";
    if (r->added >= 0)
        (void)snprintf(added, sizeof added, "%lld", (long long)r->added);
    if (r->removed >= 0)
        (void)snprintf(removed, sizeof removed, "%lld", (long long)r->removed);
    if (r->timestamp)
        (void)snprintf(when, sizeof when, "%.10s %.5s", r->timestamp,
                       strlen(r->timestamp) > 11 ? r->timestamp + 11 : "");
    text_term_printf(stdout, "%-16s  +%s -%s  %s %s  %s\n    session %s  message %lld%s%s\n", when,
                     added, removed, r->source, r->tool, r->path, r->session_id,
                     (long long)r->message_id, r->summary ? "  " : "",
                     r->summary ? r->summary : "");
}

int cli_cmd_files(int argc, char **argv)
{
    const char *store_arg = NULL, *db_arg = NULL;
    store_edit_filter f = {0};
    long long limit = FILES_LIMIT_DEFAULT;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            files_usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (more && strcmp(a, "--db") == 0) {
            db_arg = argv[++i];
        } else if (more && strcmp(a, "--store") == 0) {
            store_arg = argv[++i];
        } else if (more && strcmp(a, "--project") == 0) {
            f.project = argv[++i];
        } else if (more && strcmp(a, "--agent") == 0) {
            f.source = argv[++i];
        } else if (more && strcmp(a, "--after") == 0) {
            f.after = argv[++i];
        } else if (more && strcmp(a, "--before") == 0) {
            f.before = argv[++i];
        } else if (more && strcmp(a, "--limit") == 0) {
            char *end = NULL;
            limit = strtoll(argv[++i], &end, 10);
            if (!end || *end || limit < 1) {
                text_term_printf(stderr,
                                 "mcpage files: --limit wants a whole number from 1, got '%s'\n",
                                 argv[i]);
                return 2;
            }
            if (limit > FILES_LIMIT_MAX)
                limit = FILES_LIMIT_MAX;
        } else if (a[0] != '-' && !f.path) {
            f.path = a;
        } else {
            text_term_printf(stderr, "mcpage files: unknown or incomplete option '%s'\n", a);
            files_usage(stderr);
            return 2;
        }
    }
    if (f.path && (strlen(f.path) == 0 || strlen(f.path) > STORE_EDIT_PATH_MAX)) {
        fprintf(stderr, "mcpage files: PATH must be 1 to %d bytes\n", STORE_EDIT_PATH_MAX);
        return 2;
    }
    char shown[SYNC_PATH_MAX];
    store *s;
    int rc = cli_store_open_read("mcpage files", store_arg, db_arg, NULL, &s, shown, sizeof shown);
    if (rc != 0)
        return rc;
    int64_t total = 0;
    rc = store_edits_count(s, &f, &total);
    long long printed = 0;
    store_key after = {0};
    while (rc == 0 && printed < limit) {
        int64_t want = limit - printed < FILES_PAGE ? limit - printed : FILES_PAGE;
        store_page pg = {.after = after.nparts ? &after : NULL, .limit = want};
        store_edits rows = {0};
        if ((rc = store_edits_list(s, &f, &pg, &rows)) < 0)
            break;
        for (size_t i = 0; i < rows.count; i++)
            json ? print_json(&rows.rows[i]) : print_text(&rows.rows[i]);
        printed += (long long)rows.count;
        if (rows.count)
            after = rows.rows[rows.count - 1].key;
        size_t got = rows.count;
        store_edits_free(&rows);
        if ((int64_t)got < want)
            break;
    }
    if (rc < 0) {
        text_term_printf(stderr, "mcpage files: %s\n", store_errmsg(s));
        store_close(s);
        return 1;
    }
    if (!json && total > printed)
        printf("(%lld of %lld edits; --limit %lld for more)\n", printed, (long long)total,
               (long long)total);
    else if (!json && total == 0)
        printf("no edits%s\n", f.path ? " of that file" : "");
    store_close(s);
    return 0;
}
