/*
 * `mcpage sources`: every agent mcpage knows, where it looks for each,
 * what it finds there now (session files, without reading them), what the
 * archive holds of it and what its last sync said (time, warnings). A
 * user sees at once why an agent's history is, or is not, in the archive.
 *
 * The last sync of each source is kept in a small state file written by
 * `mcpage sync` and `mcpage serve` after each pass
 * ($XDG_STATE_HOME/mcpage/sources.json, else
 * ~/.local/state/mcpage/sources.json), keyed by the store.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "cli/cli_agents.h"
#include "cli/commands.h"
#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_walk.h"
#include "tools/text_out.h"

#define STATE_MAX (8 << 20) /* bytes of the state file read */
/* Stores whose last sync `mcpage sources` remembers (the state file). */
#define SOURCES_STATE_STORES 64

static void sources_usage(FILE *out)
{
    fprintf(out, "usage: mcpage sources [--store URL | --db FILE] [--json] [--sources FILE]\n"
                 "                      [--NAME-home DIR] [--no-NAME]\n\n"
                 "Lists every agent mcpage reads: where it looks (and why there: a flag, an\n"
                 "environment variable or the default), whether the folder exists, how many\n"
                 "session files it finds now, how many sessions the archive holds, and the\n"
                 "last sync's time and warnings for it. Nothing is read or stored.\n\n"
                 "  --store URL       a shared store (env MCPAGE_STORE)\n"
                 "  --db FILE         the archive (env MCPAGE_DB; default as for 'mcpage sync')\n"
                 "  --json            print one JSON object on stdout\n"
                 "  --sources FILE    the user's source descriptions (env MCPAGE_SOURCES;\n"
                 "                    default $XDG_CONFIG_HOME/mcpage/sources.json or\n"
                 "                    ~/.config/mcpage/sources.json; docs/sources.md)\n"
                 "  --NAME-home DIR   look for agent NAME in DIR (env MCPAGE_NAME_HOME)\n"
                 "                    (--aider-home DIRS: folders, colon-separated, looked in\n"
                 "                    two levels down; env MCPAGE_AIDER_DIRS too)\n"
                 "  --no-NAME         leave agent NAME out\n");
}

/* ---- the state file ------------------------------------------------------ */

static int state_path(char *buf, size_t n)
{
    const char *e = getenv("MCPAGE_STATE_FILE");
    int k;
    if (e && *e)
        k = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_STATE_HOME")) && *e)
        k = snprintf(buf, n, "%s/mcpage/sources.json", e);
    else
        k = snprintf(buf, n, "%s/.local/state/mcpage/sources.json", sync_home_dir());
    return (k < 0 || (size_t)k >= n) ? -1 : 0;
}

static json_t *state_load(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return json_object();
    struct stat sb;
    json_t *v = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size <= STATE_MAX) {
        FILE *fp = fdopen(fd, "r");
        if (fp) {
            v = json_loadf(fp, 0, NULL);
            fclose(fp);
            fd = -1;
        }
    }
    if (fd >= 0)
        close(fd);
    if (!json_is_object(v)) {
        json_decref(v);
        v = json_object();
    }
    return v;
}

/* The store as the state file keys it: a file by its resolved path, so
 * `--db a.db` and `--db /abs/a.db` are one store; a URL as shown. */
static void state_key(const char *shown, char *key, size_t n)
{
    char *real = store_spec_is_url(shown) ? NULL : realpath(shown, NULL);
    (void)snprintf(key, n, "%s", real ? real : shown);
    free(real);
}

/* The latest synced_at of a store's sources ("" when none). */
static const char *store_synced_at(const json_t *st)
{
    const char *latest = "", *name;
    const json_t *src;
    json_object_foreach((json_t *)st, name, src)
    {
        const char *at = json_string_value(json_object_get(src, "synced_at"));
        if (at && strcmp(at, latest) > 0)
            latest = at;
    }
    return latest;
}

/*
 * Keeps the SOURCES_STATE_STORES stores synced last: every store path a
 * sync ever wrote (a test's or a benchmark's temporary store too) stayed
 * in the file, which each sync reads and writes whole (2 MB, 56 ms of an
 * incremental sync, seen on a machine that ran the benchmarks).
 */
static void forget_old_stores(json_t *stores)
{
    while (json_object_size(stores) > SOURCES_STATE_STORES) {
        const char *oldest = NULL, *key, *oldest_at = NULL;
        json_t *st;
        json_object_foreach(stores, key, st)
        {
            const char *at = store_synced_at(st);
            if (!oldest || strcmp(at, oldest_at) < 0) {
                oldest = key;
                oldest_at = at;
            }
        }
        if (!oldest || json_object_del(stores, oldest) != 0)
            return;
    }
}

void cli_sources_record(const char *store_shown, const sync_report *rep)
{
    char path[SYNC_PATH_MAX], tmp[SYNC_PATH_MAX + 16], key[SYNC_PATH_MAX];
    state_key(store_shown, key, sizeof key);
    store_shown = key;
    if (state_path(path, sizeof path) < 0 || sync_make_parent_dirs(path) < 0)
        return;
    json_t *root = state_load(path);
    json_t *stores = json_object_get(root, "stores");
    if (!json_is_object(stores)) {
        stores = json_object();
        json_object_set_new(root, "stores", stores);
    }
    json_t *st = json_object_get(stores, store_shown);
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(stores, store_shown, st);
    }
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    for (int i = 0; i < rep->nsources; i++) {
        const sync_source_report *r = &rep->sources[i];
        json_t *o =
            json_pack("{ss sb sI sI sI sI sI}", "synced_at", when, "found", r->found, "files",
                      (json_int_t)r->files, "files_failed", (json_int_t)r->files_failed,
                      "sessions_added", (json_int_t)r->sessions_added, "messages_added",
                      (json_int_t)r->messages_added, "warnings", (json_int_t)r->warnings);
        if (o && r->warning[0])
            json_object_set_new(o, "warning", json_string(r->warning));
        if (o)
            json_object_set_new(st, r->name, o);
    }
    forget_old_stores(stores);
    (void)snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    int ok = fp && json_dumpf(root, fp, JSON_INDENT(1) | JSON_SORT_KEYS) == 0;
    if (fp)
        ok = fclose(fp) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    if (!ok || rename(tmp, path) != 0)
        (void)unlink(tmp);
    json_decref(root);
}

/* ---- the listing ----------------------------------------------------------- */

typedef struct row {
    const char *name, *title, *kind, *home, *origin;
    int off;
} row;

static json_t *row_json(const row *r, const sync_report *scan, store *s, json_t *last)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "title", json_string(r->title));
    json_object_set_new(o, "reader", json_string(r->kind));
    json_object_set_new(o, "home", json_string(r->home));
    json_object_set_new(o, "home_from", json_string(r->origin));
    json_object_set_new(o, "enabled", json_boolean(!r->off));
    const sync_source_report *sr = NULL;
    for (int i = 0; i < scan->nsources; i++)
        if (strcmp(scan->sources[i].name, r->name) == 0)
            sr = &scan->sources[i];
    json_object_set_new(o, "found", json_boolean(sr && sr->found));
    json_object_set_new(o, "files", json_integer(sr ? sr->files : 0));
    if (sr && sr->warning[0])
        json_object_set_new(o, "scan_warning", json_string(sr->warning));
    if (s) {
        store_session_filter f = {.source = r->name};
        int64_t n = 0;
        if (store_sessions_count(s, &f, &n) == 0)
            json_object_set_new(o, "sessions", json_integer(n));
    }
    json_t *l = json_object_get(last, r->name);
    if (json_is_object(l))
        json_object_set(o, "last_sync", l);
    return o;
}

static void print_text(json_t *list, const char *shown, int have_store, const char *state)
{
    /* the name column fits the longest name (vscode-copilot; a user's own
       source may have up to 31 characters) */
    int wide = 11;
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *name = json_string_value(json_object_get(o, "name"));
        if (name && (int)strlen(name) > wide && strlen(name) <= 31)
            wide = (int)strlen(name);
    }
    printf("%-*s %-5s %6s %8s  %-20s %s\n", wide, "AGENT", "FOUND", "FILES", "SESSIONS",
           "LAST SYNC", "FOLDER");
    json_array_foreach(list, i, o)
    {
        json_t *l = json_object_get(o, "last_sync");
        const char *at = json_string_value(json_object_get(l, "synced_at"));
        char sessions[32] = "-";
        if (json_object_get(o, "sessions"))
            (void)snprintf(sessions, sizeof sessions, "%lld",
                           (long long)json_integer_value(json_object_get(o, "sessions")));
        int on = json_is_true(json_object_get(o, "enabled"));
        text_term_printf(stdout, "%-*s %-5s %6lld %8s  %-20s %s (%s)\n", wide,
                         json_string_value(json_object_get(o, "name")),
                         !on                                         ? "off"
                         : json_is_true(json_object_get(o, "found")) ? "yes"
                                                                     : "no",
                         (long long)json_integer_value(json_object_get(o, "files")), sessions,
                         at ? at : "-", json_string_value(json_object_get(o, "home")),
                         json_string_value(json_object_get(o, "home_from")));
    }
    int header = 0;
    json_array_foreach(list, i, o)
    {
        json_t *l = json_object_get(o, "last_sync");
        const char *w = json_string_value(json_object_get(l, "warning"));
        const char *sw = json_string_value(json_object_get(o, "scan_warning"));
        json_int_t nw = json_integer_value(json_object_get(l, "warnings"));
        if (!w && !sw)
            continue;
        if (!header++)
            printf("\nwarnings:\n");
        if (sw)
            text_term_printf(stdout, "  %s: now: %s\n",
                             json_string_value(json_object_get(o, "name")), sw);
        if (w)
            text_term_printf(stdout, "  %s: last sync (%lld): %s\n",
                             json_string_value(json_object_get(o, "name")), (long long)nw, w);
    }
    text_term_printf(stdout, "\nArchive: %s%s. Last syncs from %s.\n", shown,
                     have_store ? "" : " (not readable)", state);
    printf("Point an agent elsewhere with --NAME-home DIR or MCPAGE_NAME_HOME; leave it out with\n"
           "--no-NAME; add your own agents in the sources file (docs/sources.md).\n");
}

int cli_cmd_sources(int argc, char **argv)
{
    const char *store_arg = NULL, *db_arg = NULL;
    int json = 0;
    cli_agents *a = calloc(1, sizeof *a);
    if (!a)
        return 1;
    int status = -1;
    for (int i = 1; i < argc && status < 0; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            sources_usage(stdout);
            status = 0;
        } else if (strcmp(o, "--json") == 0) {
            json = 1;
        } else if (i + 1 < argc && strcmp(o, "--db") == 0) {
            db_arg = argv[++i];
        } else if (i + 1 < argc && strcmp(o, "--store") == 0) {
            store_arg = argv[++i];
        } else if (!cli_agents_parse(a, argc, argv, &i, true)) {
            text_term_printf(stderr, "mcpage sources: unknown or incomplete option '%s'\n", o);
            sources_usage(stderr);
            status = 2;
        }
    }
    if (status >= 0) {
        cli_agents_free(a);
        free(a);
        return status;
    }
    if (!cli_agents_resolve(a)) {
        text_term_printf(stderr, "mcpage sources: %s\n", a->err);
        cli_agents_free(a);
        free(a);
        return 2;
    }
    char db[SYNC_PATH_MAX], shown[SYNC_PATH_MAX], err[600], state[SYNC_PATH_MAX];
    if (cli_store_spec(db, sizeof db, store_arg, db_arg) < 0 ||
        state_path(state, sizeof state) < 0) {
        text_term_printf(stderr, "mcpage sources: a path is too long\n");
        cli_agents_free(a);
        free(a);
        return 2;
    }
    store_spec_display(db, shown, sizeof shown);
    store *s = NULL;
    if (store_open_msg(db, STORE_OPEN_READONLY, &s, err, sizeof err) < 0)
        s = NULL;
    sync_options opt = {0};
    cli_agents_options(a, &opt);
    sync_report *scan = calloc(1, sizeof *scan);
    if (!scan || sync_scan(&opt, scan) < 0) {
        text_term_printf(stderr, "mcpage sources: looking at the agents' folders failed\n");
        free(scan);
        store_close(s);
        cli_agents_free(a);
        free(a);
        return 1;
    }
    json_t *st = state_load(state);
    char key[SYNC_PATH_MAX];
    state_key(shown, key, sizeof key);
    json_t *last = json_object_get(json_object_get(st, "stores"), key);
    json_t *list = json_array();
    for (int g = 0; g < CLI_AGENTS; g++) {
        const char *home = a->home[g];
        row r = {cli_agents_name(g), cli_agents_name(g), "built-in reader", home,
                 a->origin[g],       a->skip[g]};
        json_array_append_new(list, row_json(&r, scan, s, last));
    }
    for (size_t d = 0; d < a->descs.n; d++) {
        const sync_desc *desc = a->descs.v[d];
        row r = {desc->name,
                 desc->title,
                 desc->writes    ? (strcmp(desc->writes, "claude") == 0       ? "claude format"
                                    : strcmp(desc->writes, "codex") == 0      ? "codex format"
                                    : strcmp(desc->writes, "opencode") == 0   ? "opencode format"
                                    : strcmp(desc->writes, "aider") == 0      ? "aider reader"
                                    : strcmp(desc->writes, "cursor-ide") == 0 ? "cursor-ide format"
                                                                              : "built-in reader")
                 : desc->builtin ? "described (built in)"
                                 : "described (sources file)",
                 a->dhome[d],
                 a->dorigin[d],
                 a->described[d].home == NULL};
        json_array_append_new(list, row_json(&r, scan, s, last));
    }
    if (json) {
        json_t *out = json_pack("{ss ss sb so}", "store", shown, "state_file", state,
                                "store_readable", s != NULL, "sources", list);
        char *txt = json_dumps(out, JSON_COMPACT);
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(out);
    } else {
        print_text(list, shown, s != NULL, state);
        json_decref(list);
    }
    json_decref(st);
    free(scan);
    store_close(s);
    cli_agents_free(a);
    free(a);
    return 0;
}
