/*
 * `mcpage serve`: runs the MCP server on stdin/stdout.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpage/server.h>

#include "cli/cli_archive.h"
#include "cli/commands.h"
#include "cli/serve_http.h"
#include "store/store.h"
#include "sync/sync.h"

static void usage(FILE *out)
{
    (void)fprintf(
        out,
        "usage: mcpage serve [OPTIONS]\n\n"
        "Serves MCP over stdio: newline-delimited JSON-RPC on stdin and stdout,\n"
        "diagnostics on stderr. Ends on end of input (after finishing running\n"
        "calls) or on SIGTERM/SIGINT (within about a second).\n\n"
        "options:\n"
        "  --page-size N     items per page of tools/resources/prompts lists (default %d)\n"
        "  --workers N       threads running tool calls (default %d)\n"
        "  --max-inflight N  calls queued or running before 'server busy' (default %d)\n"
        "  --store URL       a shared store, postgres://user@host/db (env MCPAGE_STORE);\n"
        "                    several instances may serve it (docs/scale-out.md)\n"
        "  --db FILE         the archive (env MCPAGE_DB; default\n"
        "                    $XDG_DATA_HOME/mcpage/archive.db or "
        "~/.local/share/mcpage/archive.db)\n"
        "  --no-sync         serve the archive as it is: no sync on start or while running\n"
        "  --sync-interval S sync again every S seconds while serving (default 60)\n"
        "  --export-dir DIR  offer the export_session tool, writing into DIR (env\n"
        "                    MCPAGE_EXPORT_DIR; without either, no tool writes anything)\n"
        "  --claude-home DIR, --codex-home DIR, --gemini-home DIR, --copilot-home DIR,\n"
        "  --opencode-home DIR, --cursor-home DIR\n"
        "                    where sync reads transcripts (as mcpage sync)\n"
        "  -h, --help        this text\n\n"
        "environment:\n"
        "  MCPAGE_KEY        hex key (32-128 digits) signing cursors and HTTP session ids\n"
        "                    (MCPAGE_CURSOR_KEY, its older name, is still read); without it\n"
        "                    the key file MCPAGE_KEY_FILE, else cursor.key beside the archive\n"
        "                    (created once, mode 0600). Instances sharing a store must share\n"
        "                    the key\n",
        MCPAGE_DEFAULT_PAGE_SIZE, MCPAGE_DEFAULT_WORKERS, MCPAGE_DEFAULT_MAX_INFLIGHT);
    cli_http_usage(out);
}

/* Parses a positive integer option value; false with a message when invalid. */
static bool parse_count(const char *opt, const char *v, long max, long *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *end != '\0' || n < 1 || n > max) {
        (void)fprintf(stderr, "mcpage serve: %s needs a number from 1 to %ld\n", opt, max);
        return false;
    }
    *out = n;
    return true;
}

/* The background sync: runs sync_run every `interval` seconds until stopped. */
typedef struct serve_sync {
    store *writer;              /* the archive opened for writing */
    sync_options opt;           /* sources */
    char claude[SYNC_PATH_MAX]; /* Claude Code's directory */
    char codex[SYNC_PATH_MAX];  /* Codex's directory */
    long interval;              /* seconds between passes */
    pthread_mutex_t mu;         /* guards stop */
    pthread_cond_t cv;          /* signals stop */
    bool stop;                  /* the server is shutting down */
    pthread_t thread;           /* the sync thread */
    bool running;               /* thread was started */

    char gemini[SYNC_PATH_MAX];   /* Gemini CLI's directory */
    char copilot[SYNC_PATH_MAX];  /* GitHub Copilot CLI's directory */
    const char *gemini_arg;       /* --gemini-home, or NULL */
    const char *copilot_arg;      /* --copilot-home, or NULL */
    char opencode[SYNC_PATH_MAX]; /* OpenCode's data directory */
    const char *opencode_arg;     /* --opencode-home, or NULL */
    char cursor[SYNC_PATH_MAX];   /* Cursor's directory */
    const char *cursor_arg;       /* --cursor-home, or NULL */
} serve_sync;

static void sync_once(serve_sync *ss, bool verbose)
{
    sync_report rep;
    int rc = sync_run(ss->writer, &ss->opt, &rep);
    if (rc < 0)
        (void)fprintf(stderr, "mcpage serve: sync failed: %s\n", mcpage_strerror(rc));
    else if (verbose || rep.messages_added > 0 || rep.files_failed > 0)
        (void)fprintf(stderr, "mcpage serve: synced %lld files, +%lld sessions, +%lld messages\n",
                      (long long)rep.files_seen, (long long)rep.sessions_added,
                      (long long)rep.messages_added);
}

static void *sync_loop(void *ud)
{
    serve_sync *ss = ud;
    pthread_mutex_lock(&ss->mu);
    while (!ss->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ss->interval;
        int w = 0;
        while (!ss->stop && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&ss->cv, &ss->mu, &until);
        if (ss->stop)
            break;
        pthread_mutex_unlock(&ss->mu);
        sync_once(ss, false);
        pthread_mutex_lock(&ss->mu);
    }
    pthread_mutex_unlock(&ss->mu);
    return NULL;
}

static void sync_stop(serve_sync *ss)
{
    if (ss->running) {
        pthread_mutex_lock(&ss->mu);
        ss->stop = true;
        pthread_cond_signal(&ss->cv);
        pthread_mutex_unlock(&ss->mu);
        pthread_join(ss->thread, NULL);
        ss->running = false;
    }
    store_close(ss->writer);
    ss->writer = NULL;
}

/* Opens the archive for writing, syncs once, and starts the periodic sync. */
static int sync_start(serve_sync *ss, const char *db, const char *claude_arg, const char *codex_arg)
{
    if ((claude_arg ? snprintf(ss->claude, sizeof ss->claude, "%s", claude_arg) < 0
                    : sync_default_claude_home(ss->claude, sizeof ss->claude) < 0) ||
        (codex_arg ? snprintf(ss->codex, sizeof ss->codex, "%s", codex_arg) < 0
                   : sync_default_codex_home(ss->codex, sizeof ss->codex) < 0) ||
        (ss->gemini_arg ? snprintf(ss->gemini, sizeof ss->gemini, "%s", ss->gemini_arg) < 0
                        : sync_default_gemini_home(ss->gemini, sizeof ss->gemini) < 0) ||
        (ss->copilot_arg ? snprintf(ss->copilot, sizeof ss->copilot, "%s", ss->copilot_arg) < 0
                         : sync_default_copilot_home(ss->copilot, sizeof ss->copilot) < 0) ||
        (ss->opencode_arg ? snprintf(ss->opencode, sizeof ss->opencode, "%s", ss->opencode_arg) < 0
                          : sync_default_opencode_home(ss->opencode, sizeof ss->opencode) < 0) ||
        (ss->cursor_arg ? snprintf(ss->cursor, sizeof ss->cursor, "%s", ss->cursor_arg) < 0
                        : sync_default_cursor_home(ss->cursor, sizeof ss->cursor) < 0)) {
        (void)fprintf(stderr, "mcpage serve: a source path is too long\n");
        return 1;
    }
    char err[600], shown[SYNC_PATH_MAX];
    store_spec_display(db, shown, sizeof shown);
    if ((!store_spec_is_url(db) && sync_make_parent_dirs(db) < 0) ||
        store_open_msg(db, STORE_OPEN_WRITE, &ss->writer, err, sizeof err) < 0) {
        (void)fprintf(stderr, "mcpage serve: cannot open %s for sync: %s\n", shown,
                      ss->writer ? "" : err);
        return 1;
    }
    ss->opt.claude_home = ss->claude;
    ss->opt.codex_home = ss->codex;
    ss->opt.gemini_home = ss->gemini;
    ss->opt.copilot_home = ss->copilot;
    ss->opt.opencode_home = ss->opencode;
    ss->opt.cursor_home = ss->cursor;
    sync_once(ss, true);
    pthread_mutex_init(&ss->mu, NULL);
    pthread_cond_init(&ss->cv, NULL);
    /* The sync thread takes no process signals: SIGTERM and SIGINT belong
       to the transport, which masks them in its own threads only. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&ss->thread, NULL, sync_loop, ss);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        (void)fprintf(stderr, "mcpage serve: cannot start the sync thread\n");
        return 1;
    }
    ss->running = true;
    return 0;
}

int cli_cmd_serve(int argc, char **argv)
{
    long page = MCPAGE_DEFAULT_PAGE_SIZE, workers = MCPAGE_DEFAULT_WORKERS,
         inflight = MCPAGE_DEFAULT_MAX_INFLIGHT, interval = 60;
    const char *store_arg = NULL, *db_arg = NULL, *claude_arg = NULL, *codex_arg = NULL;
    const char *gemini_arg = NULL, *copilot_arg = NULL, *opencode_arg = NULL;
    const char *cursor_arg = NULL;
    const char *export_dir = NULL;
    bool no_sync = false;
    cli_http_opts http = {.session_max_age = -1, .ui = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int hr = cli_http_parse(&http, argc, argv, &i);
        if (hr < 0)
            return 2;
        if (hr > 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--page-size") == 0) {
            if (!parse_count(a, v, 10000, &page))
                return 2;
            i++;
        } else if (strcmp(a, "--workers") == 0) {
            if (!parse_count(a, v, 256, &workers))
                return 2;
            i++;
        } else if (strcmp(a, "--max-inflight") == 0) {
            if (!parse_count(a, v, 100000, &inflight))
                return 2;
            i++;
        } else if (strcmp(a, "--sync-interval") == 0) {
            if (!parse_count(a, v, 86400, &interval))
                return 2;
            i++;
        } else if (strcmp(a, "--no-sync") == 0) {
            no_sync = true;
        } else if (v && strcmp(a, "--db") == 0) {
            db_arg = argv[++i];
        } else if (v && strcmp(a, "--store") == 0) {
            store_arg = argv[++i];
        } else if (v && strcmp(a, "--claude-home") == 0) {
            claude_arg = argv[++i];
        } else if (v && strcmp(a, "--codex-home") == 0) {
            codex_arg = argv[++i];
        } else if (v && strcmp(a, "--gemini-home") == 0) {
            gemini_arg = argv[++i];
        } else if (v && strcmp(a, "--copilot-home") == 0) {
            copilot_arg = argv[++i];
        } else if (v && strcmp(a, "--opencode-home") == 0) {
            opencode_arg = argv[++i];
        } else if (v && strcmp(a, "--cursor-home") == 0) {
            cursor_arg = argv[++i];
        } else if (v && strcmp(a, "--export-dir") == 0) {
            export_dir = argv[++i];
        } else {
            (void)fprintf(stderr, "mcpage serve: unknown option '%s'; see 'mcpage serve --help'\n",
                          a);
            return 2;
        }
    }
    cli_archive arc;
    if (cli_archive_open(&arc, "mcpage serve", store_arg, db_arg) != 0)
        return 1;
    if (export_dir)
        arc.tools.export_dir = export_dir;
    serve_sync ss;
    memset(&ss, 0, sizeof ss);
    ss.interval = interval;
    ss.gemini_arg = gemini_arg;
    ss.copilot_arg = copilot_arg;
    ss.opencode_arg = opencode_arg;
    ss.cursor_arg = cursor_arg;
    if (!no_sync && sync_start(&ss, arc.db, claude_arg, codex_arg) != 0) {
        sync_stop(&ss);
        cli_archive_close(&arc);
        return 1;
    }
    mcpage_keyring *kr = arc.kr;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.title = "mcpage archive";
    cfg.page_size = (size_t)page;
    cfg.workers = (int)workers;
    cfg.max_inflight = (size_t)inflight;
    cfg.keyring = kr;
    /* 2026-07-28 cache hints from what changes: the tools never change while this binary
       runs; the sessions change when a sync lands, which this process does every
       `interval` seconds on its own archive file (others may write a shared store at any
       time, or the archive served with --no-sync: there, no reuse without asking again).
       Transcripts are private: resources keep cacheScope "private". */
    cfg.catalog_ttl_ms = 3600000;
    cfg.resource_ttl_ms = no_sync || store_spec_is_url(arc.db) ? 0 : (int64_t)interval * 1000;
    mcpage_server *srv = NULL;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = cli_archive_register(&arc, srv);
    if (rc != 0) {
        (void)fprintf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        mcpage_server_free(srv);
        sync_stop(&ss);
        cli_archive_close(&arc);
        return 1;
    }
    /* Ended sessions are shared through a store many instances share; an
       archive file is one machine's, and its servers open it read-only. */
    mcpage_http_ended ended = tools_ended_sessions(&arc.tools);
    rc = http.enabled ? cli_http_serve(srv, &http, tools_health, &arc.tools,
                                       store_spec_is_url(arc.db) ? &ended : NULL)
                      : mcpage_serve_stdio(srv, 0, 1);
    if (rc == MCPAGE_ESTATE) {
        /* Calls ignored cancellation: leave them to process exit. */
        (void)fprintf(stderr, "mcpage serve: exiting with calls still running\n");
        return 0;
    }
    mcpage_server_free(srv);
    sync_stop(&ss);
    cli_archive_close(&arc);
    if (rc != 0) {
        (void)fprintf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        return 1;
    }
    return 0;
}
