/*
 * `mcpage serve`: runs the MCP server on stdin/stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/server.h>

#include "cli/cli_archive.h"
#include "cli/cli_agents.h"
#include "cli/commands.h"
#include "cli/serve_http.h"
#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_watch.h"
#include "tools/text_out.h"

/* The largest values of the counting options (mcpage_server_new's limits where they meet). */
#define SERVE_MAX_PAGE_SIZE       10000  /* --page-size */
#define SERVE_MAX_WORKERS         256    /* --workers */
#define SERVE_MAX_INFLIGHT        100000 /* --max-inflight */
#define SERVE_MAX_SYNC_INTERVAL_S 86400  /* --sync-interval: a day */
/* Seconds between background syncs by default. */
#define SERVE_SYNC_INTERVAL_S 60
/* Seconds the start's sync may read before the server answers (--first-sync):
 * under the 30 s an MCP host waits for a server to start; the rest is read
 * on the sync thread while serving. */
#define SERVE_FIRST_SYNC_S 20
/* Watching (sync_watch.h): a pass once the folders were quiet this long after a change... */
#define SERVE_WATCH_QUIET_MS 100
/* ...or this long after the first change of a burst, whichever comes first. */
#define SERVE_WATCH_BURST_MS 250
/* Keeping search lists for later readers (store_tidy) waits for this long a calm. */
#define SERVE_TIDY_CALM_MS 2000
/* How long clients may keep tools/list (the tools never change while the binary runs). */
#define SERVE_CATALOG_TTL_MS 3600000
/* A shared store is looked at this often for others' changes (milliseconds). */
#define SERVE_FOLLOW_MS 500
/* Sessions one pass tells its clients of, at most (a pass importing more tells of these). */
#define SERVE_NOTIFY_MAX 100000

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
        "                    (with no archive yet, an empty one is made and served)\n"
        "  --sync-interval S walk every agent folder again after S seconds without a walk\n"
        "                    while serving (default %d); between walks, a change's pass\n"
        "                    reads only the files the watcher named (MCPAGE_NAMED_SYNC=0:\n"
        "                    every pass walks)\n"
        "  --first-sync S    read transcripts for at most S seconds before serving (default\n"
        "                    %d; 0: serve at once); the rest is read while serving\n"
        "  --no-watch        do not watch the agents' folders (env MCPAGE_NO_WATCH=1): sync\n"
        "                    on the interval only. Watching (Linux inotify, on by default)\n"
        "                    syncs a changed transcript within about 250 ms (docs/live.md)\n"
        "  --export-dir DIR  offer the export_session tool, writing into DIR (env\n"
        "                    MCPAGE_EXPORT_DIR; without either, no tool writes anything)\n"
        "  --policy FILE     who sees what with OAuth tokens (JSON: admin_scope, owners,\n"
        "                    shares; docs/security.md, \"Owners\"). Without it a token\n"
        "                    sees the sessions its subject owns, mcpage:admin sees all\n"
        "  --claude-home DIR, --codex-home DIR, --gemini-home DIR, --copilot-home DIR,\n"
        "  --opencode-home DIR, --cursor-home DIR, --NAME-home DIR (any agent\n"
        "                    `mcpage sources` lists)\n"
        "                    where sync reads transcripts (as mcpage sync)\n"
        "  --sources FILE    the user's source descriptions (default\n"
        "                    ~/.config/mcpage/sources.json; docs/sources.md)\n"
        "  -h, --help        this text\n\n"
        "environment:\n"
        "  MCPAGE_KEY        hex key (32-128 digits) signing cursors and HTTP session ids\n"
        "                    (MCPAGE_CURSOR_KEY, its older name, is still read); without it\n"
        "                    the key file MCPAGE_KEY_FILE, else cursor.key beside the archive\n"
        "                    (created once, mode 0600). Instances sharing a store must share\n"
        "                    the key\n",
        MCPAGE_DEFAULT_PAGE_SIZE, MCPAGE_DEFAULT_WORKERS, MCPAGE_DEFAULT_MAX_INFLIGHT,
        SERVE_SYNC_INTERVAL_S, SERVE_FIRST_SYNC_S);
    cli_http_usage(out);
}

/* Parses a positive integer option value; false with a message when invalid. */
static bool parse_count(const char *opt, const char *v, long min, long max, long *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *end != '\0' || n < min || n > max) {
        text_term_printf(stderr, "mcpage serve: %s needs a number from %ld to %ld\n", opt, min,
                         max);
        return false;
    }
    *out = n;
    return true;
}

/* The background sync: a pass when the watched folders change, and every `interval` seconds. */
typedef struct serve_sync {
    store *writer;             /* the archive opened for writing */
    sync_options opt;          /* sources */
    cli_agents agents;         /* --NAME-home and each agent's folder */
    sync_redact_config redact; /* the user's redaction settings (redact.json) */
    long interval;             /* seconds between passes */
    long first_sync;           /* --first-sync: seconds the start's pass may read */
    int64_t first_until;       /* when the start's pass ends (ms, now_ms) */
    bool resume;               /* the last pass was cut short: the next one at once */
    bool no_watch;             /* --no-watch or MCPAGE_NO_WATCH: the interval only */
    sync_watch *watch;         /* the folders watched, or NULL */
    bool no_named;             /* MCPAGE_NAMED_SYNC=0: every pass walks */
    bool walk_due;             /* the last pass left something to a walk: walk next, at once */
    int64_t held_until;        /* the last pass held a settled last line back until then (Unix
                                  seconds; 0: none): a walk then takes it */
    int stop_pipe[2];          /* written to stop the thread */
    pthread_mutex_t mu;        /* guards stop */
    bool stop;                 /* the server is shutting down */
    pthread_t thread;          /* the sync thread */
    bool running;              /* thread was started */
    char shown[SYNC_PATH_MAX]; /* the store as `mcpage sources` keys it */
    /* The notifier (sync thread only, but srv under mu): the server once it exists, and
       the sessions the running pass stored messages in. */
    mcpage_server *srv;
    char **changed; /* session ids, owned */
    size_t nchanged, cap_changed;
    bool added; /* a session is new */
} serve_sync;

/* sync_options.changed: notes a session the pass stored messages in (the sync thread). */
static void note_changed(void *ud, const char *session_id, int is_new)
{
    serve_sync *ss = ud;
    pthread_mutex_lock(&ss->mu);
    bool serving = ss->srv != NULL;
    pthread_mutex_unlock(&ss->mu);
    if (!serving || ss->nchanged >= SERVE_NOTIFY_MAX)
        return; /* the start's pass: nobody to tell yet */
    ss->added = ss->added || is_new;
    if (ss->nchanged == ss->cap_changed) {
        size_t cap = ss->cap_changed ? ss->cap_changed * 2 : 64;
        char **v = realloc(ss->changed, cap * sizeof *v);
        if (v == NULL)
            return;
        ss->changed = v;
        ss->cap_changed = cap;
    }
    char *id = strdup(session_id);
    if (id)
        ss->changed[ss->nchanged++] = id;
}

static int id_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * After each commit of a pass (sync_options.committed) and at its end:
 * tells the clients what is stored now (docs/live.md). Sessions added:
 * notifications/resources/list_changed; each session that grew:
 * notifications/resources/updated for mcpage://sessions/ID to those who
 * subscribed to it (resources/subscribe, or a subscriptions/listen).
 */
static void notify_changes(void *ud)
{
    serve_sync *ss = ud;
    pthread_mutex_lock(&ss->mu);
    mcpage_server *srv = ss->srv; /* freed only after this thread is joined */
    pthread_mutex_unlock(&ss->mu);
    if (srv && ss->added)
        (void)mcpage_server_resources_list_changed(srv);
    if (ss->nchanged > 1)
        qsort(ss->changed, ss->nchanged, sizeof *ss->changed, id_cmp);
    for (size_t i = 0; srv && i < ss->nchanged; i++) {
        if (i == 0 || strcmp(ss->changed[i], ss->changed[i - 1]) != 0) {
            char uri[32 + 3 * STORE_ID_MAX];
            tools_session_uri(ss->changed[i], uri, sizeof uri);
            (void)mcpage_server_resource_updated(srv, uri);
        }
    }
    for (size_t i = 0; i < ss->nchanged; i++)
        free(ss->changed[i]);
    ss->nchanged = 0;
    ss->added = false;
}

/*
 * A shared store (a postgres:// URL): other machines' and instances'
 * syncs write it, so this instance learns of changes by looking. Every
 * SERVE_FOLLOW_MS it reads the store's generation; when it moved, a
 * session count that grew is notifications/resources/list_changed, and
 * each uri a client subscribed to (mcpage_server_subscriptions) whose
 * session's message count changed is notifications/resources/updated
 * (one it has no count for yet is told once: it may have grown since the
 * subscription). Its own sync's passes are told this way too.
 */
typedef struct serve_follow {
    store *reader;
    mcpage_server *srv;
    int stop_pipe[2];
    pthread_t thread;
    bool running;
    int64_t gen, sessions;
    char **uris; /* the uris seen, and their sessions' message counts */
    int64_t *counts;
    size_t n, cap;
} serve_follow;

/* The remembered count of `uri`, or -1; *slot its index (or n). */
static int64_t follow_count(serve_follow *f, const char *uri, size_t *slot)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->uris[i], uri) == 0) {
            *slot = i;
            return f->counts[i];
        }
    *slot = f->n;
    return -1;
}

static void follow_remember(serve_follow *f, size_t slot, const char *uri, int64_t count)
{
    if (slot < f->n) {
        f->counts[slot] = count;
        return;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        char **u = realloc(f->uris, cap * sizeof *u);
        if (u)
            f->uris = u;
        int64_t *c = u ? realloc(f->counts, cap * sizeof *c) : NULL;
        if (c == NULL)
            return;
        f->counts = c;
        f->cap = cap;
    }
    if ((f->uris[f->n] = strdup(uri)) != NULL)
        f->counts[f->n++] = count;
}

static void follow_look(serve_follow *f)
{
    int64_t gen = 0;
    if (store_generation(f->reader, &gen) < 0 || gen == f->gen)
        return;
    f->gen = gen;
    store_stats st;
    if (store_stats_get(f->reader, &st) == 0) {
        if (st.sessions > f->sessions && f->sessions >= 0)
            (void)mcpage_server_resources_list_changed(f->srv);
        f->sessions = st.sessions;
    }
    char **uris = NULL;
    size_t n = 0;
    if (mcpage_server_subscriptions(f->srv, &uris, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        json_t *vars = NULL;
        if (mcpage_uri_template_match("mcpage://sessions/{session_id}", uris[i], &vars) != 0)
            continue;
        const char *id = json_string_value(json_object_get(vars, "session_id"));
        store_session ses;
        if (id && store_session_get(f->reader, id, &ses) == 0) {
            size_t slot;
            if (follow_count(f, uris[i], &slot) != ses.message_count) {
                (void)mcpage_server_resource_updated(f->srv, uris[i]);
                follow_remember(f, slot, uris[i], ses.message_count);
            }
            store_session_clear(&ses);
        }
        json_decref(vars);
    }
    mcpage_server_subscriptions_free(uris, n);
}

static void *follow_loop(void *ud)
{
    serve_follow *f = ud;
    for (;;) {
        struct pollfd p = {.fd = f->stop_pipe[0], .events = POLLIN};
        if (poll(&p, 1, SERVE_FOLLOW_MS) != 0 && (p.revents || errno != EINTR))
            break;
        follow_look(f);
    }
    return NULL;
}

/* Starts following a shared store; a failure is said and leaves the instance without it. */
static void follow_start(serve_follow *f, const char *db, mcpage_server *srv)
{
    char err[600];
    memset(f, 0, sizeof *f);
    f->srv = srv;
    f->sessions = -1;
    if (store_open_msg(db, STORE_OPEN_READONLY, &f->reader, err, sizeof err) < 0 ||
        pipe(f->stop_pipe) < 0) {
        text_term_printf(stderr,
                         "mcpage serve: not following the shared store (%s): clients hear of "
                         "nothing that other instances write\n",
                         f->reader ? strerror(errno) : err);
        store_close(f->reader);
        f->reader = NULL;
        return;
    }
    (void)store_generation(f->reader, &f->gen);
    store_stats st;
    if (store_stats_get(f->reader, &st) == 0)
        f->sessions = st.sessions;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    f->running = pthread_create(&f->thread, NULL, follow_loop, f) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void follow_stop(serve_follow *f)
{
    if (f->running) {
        ssize_t w = write(f->stop_pipe[1], "x", 1);
        (void)w;
        pthread_join(f->thread, NULL);
        f->running = false;
    }
    if (f->reader) {
        close(f->stop_pipe[0]);
        close(f->stop_pipe[1]);
    }
    store_close(f->reader);
    f->reader = NULL;
    for (size_t i = 0; i < f->n; i++)
        free(f->uris[i]);
    free(f->uris);
    free(f->counts);
    f->uris = NULL;
    f->counts = NULL;
    f->n = f->cap = 0;
}

static bool sync_stopping(serve_sync *ss);

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* sync_options.stop of a pass while serving: the server is shutting down. */
static int pass_stop(void *ud)
{
    return sync_stopping(ud);
}

/* ...and of the start's pass: or it has read for --first-sync seconds. */
static int first_pass_stop(void *ud)
{
    serve_sync *ss = ud;
    return sync_stopping(ss) || now_ms() >= ss->first_until;
}

/*
 * One pass. The files the watcher named since the last pass are its own
 * (sync_watch_take, before the pass reads anything): a named pass reads
 * only them (sync_run_named, which walks itself when they do not decide),
 * unless `walk` or the last pass asks for a walk, which covers them too.
 * True when the pass walked.
 */
static bool sync_once(serve_sync *ss, bool verbose, bool walk)
{
    char **names = NULL;
    size_t n = 0;
    bool named = ss->watch && sync_watch_take(ss->watch, &names, &n) && n > 0 && !walk &&
                 !ss->walk_due && !ss->no_named;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    sync_report rep;
    int rc = named ? sync_run_named(ss->writer, &ss->opt, names, n, &rep)
                   : sync_run(ss->writer, &ss->opt, &rep);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    sync_watch_names_free(names, n);
    long long cpu_ms =
        (long long)(c1.tv_sec - c0.tv_sec) * 1000 + (c1.tv_nsec - c0.tv_nsec) / 1000000;
    if (rc < 0)
        text_term_printf(stderr, "mcpage serve: sync failed: %s\n", mcpage_strerror(rc));
    else if (verbose || rep.messages_added > 0 || rep.files_failed > 0)
        text_term_printf(
            stderr,
            "mcpage serve: synced %lld files, +%lld sessions, +%lld messages (%s in "
            "%.0f ms, %lld ms of CPU)\n",
            (long long)rep.files_seen, (long long)rep.sessions_added, (long long)rep.messages_added,
            rep.named ? "the files the watcher named" : "a walk", rep.seconds * 1000, cpu_ms);
    ss->walk_due = rc < 0 || (rep.named && rep.walk_due);
    ss->held_until = rc < 0 ? 0 : rep.held_until;
    /* cut short (not by the shutdown): the next pass reads the rest at once */
    ss->resume = rc >= 0 && rep.stopped && !sync_stopping(ss);
    if (ss->resume && verbose)
        text_term_printf(stderr,
                         "mcpage serve: read %lld of %lld changed files in the first %ld s; the "
                         "rest is read while serving\n",
                         (long long)rep.files_done, (long long)rep.files_changed, ss->first_sync);
    if (rc >= 0 && !rep.named) /* a named pass does not find each source's files */
        cli_sources_record(ss->shown, &rep);
    notify_changes(ss);
    return rc < 0 || !rep.named;
}

/* Non-zero once the server is shutting down. */
static bool sync_stopping(serve_sync *ss)
{
    pthread_mutex_lock(&ss->mu);
    bool stop = ss->stop;
    pthread_mutex_unlock(&ss->mu);
    return stop;
}

/* Non-zero once the server is shutting down or a watched folder changed (tidy's stop). */
static int tidy_yields(void *ud)
{
    serve_sync *ss = ud;
    if (sync_stopping(ss))
        return 1;
    struct pollfd p = {.fd = ss->watch ? sync_watch_fd(ss->watch) : -1, .events = POLLIN};
    return ss->watch && poll(&p, 1, 0) > 0;
}

/* What the writer keeps for later readers (store_tidy), until shutdown or a change. */
static void tidy_once(serve_sync *ss)
{
    store_budget_set(ss->writer, 0, tidy_yields, ss);
    int rc = store_tidy(ss->writer);
    if (rc < 0 && !tidy_yields(ss))
        text_term_printf(stderr, "mcpage serve: keeping search lists failed: %s\n",
                         store_errmsg(ss->writer));
    store_budget_clear(ss->writer);
}

/*
 * The sync thread: waits for a change in the watched folders, the
 * interval or the stop. A burst of changes (an agent writes many lines a
 * second) is one pass, once the folders were quiet SERVE_WATCH_QUIET_MS or
 * SERVE_WATCH_BURST_MS after its first change: a named pass over the files
 * the watcher named. Every `interval` seconds without a walk, a pass walks
 * every folder (what a watch cannot see: a folder past the watch limit).
 * Passes run one at a time on this thread, so no file is ever synced
 * twice at once.
 */
static void *sync_loop(void *ud)
{
    serve_sync *ss = ud;
    int64_t next_pass = now_ms() + (ss->resume ? 0 : (int64_t)ss->interval * 1000);
    int64_t first = 0, last = 0; /* the burst waiting for its pass: first and last change */
    int64_t calm_since = now_ms();
    bool tidy_due = true; /* after the start's pass and each pass, once calm */
    while (!sync_stopping(ss)) {
        int64_t now = now_ms(), wake = next_pass;
        if (first) {
            int64_t due = first + SERVE_WATCH_BURST_MS < last + SERVE_WATCH_QUIET_MS
                              ? first + SERVE_WATCH_BURST_MS
                              : last + SERVE_WATCH_QUIET_MS;
            wake = due < wake ? due : wake;
        } else if (tidy_due && calm_since + SERVE_TIDY_CALM_MS < wake) {
            wake = calm_since + SERVE_TIDY_CALM_MS;
        }
        struct pollfd p[2] = {{.fd = ss->stop_pipe[0], .events = POLLIN},
                              {.fd = ss->watch ? sync_watch_fd(ss->watch) : -1, .events = POLLIN}};
        int timeout = wake > now ? (int)(wake - now) : 0;
        int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        now = now_ms();
        if (n > 0 && (p[1].revents & POLLIN)) {
            if (sync_watch_read(ss->watch) > 0) {
                if (!first)
                    first = now;
                last = now;
            }
            const char *warn = sync_watch_warning(ss->watch);
            if (warn)
                text_term_printf(stderr, "mcpage serve: %s\n", warn);
        }
        if ((first &&
             (now >= first + SERVE_WATCH_BURST_MS || now >= last + SERVE_WATCH_QUIET_MS)) ||
            now >= next_pass) {
            first = last = 0;
            bool walked = sync_once(ss, false, now >= next_pass);
            if (walked || ss->resume || ss->walk_due)
                next_pass =
                    now_ms() + (ss->resume || ss->walk_due ? 0 : (int64_t)ss->interval * 1000);
            /* no event says a file settled: a walk when its held line is due */
            if (ss->held_until > 0) {
                int64_t at = now_ms() + (ss->held_until - (int64_t)time(NULL)) * 1000 + 100;
                at = at > now_ms() + 1000 ? at : now_ms() + 1000;
                next_pass = at < next_pass ? at : next_pass;
            }
            calm_since = now_ms();
            tidy_due = true;
        } else if (!first && tidy_due && now >= calm_since + SERVE_TIDY_CALM_MS) {
            tidy_once(ss);
            tidy_due = false;
        }
    }
    return NULL;
}

static void sync_stop(serve_sync *ss)
{
    if (ss->running) {
        pthread_mutex_lock(&ss->mu);
        ss->stop = true;
        pthread_mutex_unlock(&ss->mu);
        ssize_t w = write(ss->stop_pipe[1], "x", 1);
        (void)w;
        pthread_join(ss->thread, NULL);
        ss->running = false;
    }
    if (ss->stop_pipe[0] > 0) {
        close(ss->stop_pipe[0]);
        close(ss->stop_pipe[1]);
        ss->stop_pipe[0] = ss->stop_pipe[1] = 0;
    }
    sync_watch_close(ss->watch);
    ss->watch = NULL;
    free(ss->changed);
    ss->changed = NULL;
    ss->cap_changed = 0;
    store_close(ss->writer);
    ss->writer = NULL;
    cli_agents_free(&ss->agents);
    sync_redact_config_free(&ss->redact);
}

/* True when MCPAGE_NO_WATCH asks for the interval only. */
static bool env_no_watch(void)
{
    const char *e = getenv("MCPAGE_NO_WATCH");
    return e && *e && strcmp(e, "0") != 0;
}

/* Opens the archive for writing, syncs once, and starts the watching and periodic sync. */
static int sync_start(serve_sync *ss, const char *db)
{
    if (!cli_agents_resolve(&ss->agents)) {
        text_term_printf(stderr, "mcpage serve: %s\n", ss->agents.err);
        return 1;
    }
    char err[600], shown[SYNC_PATH_MAX];
    store_spec_display(db, shown, sizeof shown);
    (void)snprintf(ss->shown, sizeof ss->shown, "%s", shown);
    if ((!store_spec_is_url(db) && sync_make_parent_dirs(db) < 0) ||
        store_open_msg(db, STORE_OPEN_WRITE, &ss->writer, err, sizeof err) < 0) {
        text_term_printf(stderr, "mcpage serve: cannot open %s for sync: %s\n", shown,
                         ss->writer ? "" : err);
        return 1;
    }
    cli_agents_options(&ss->agents, &ss->opt);
    ss->opt.changed = note_changed;
    ss->opt.committed = notify_changes;
    ss->opt.changed_ud = ss;
    /* the same redaction as `mcpage sync` (it had ignored redact.json's keep_secrets) */
    cli_redact_options("mcpage serve", 0, &ss->redact, &ss->opt);
    pthread_mutex_init(&ss->mu, NULL);
    if (pipe(ss->stop_pipe) < 0) {
        text_term_printf(stderr, "mcpage serve: cannot start the sync thread: %s\n",
                         strerror(errno));
        return 1;
    }
    (void)fcntl(ss->stop_pipe[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(ss->stop_pipe[1], F_SETFD, FD_CLOEXEC);
    /* Watching starts before the first pass: a change during it is not missed. */
    if (!ss->no_watch && !env_no_watch()) {
        char why[300];
        if (sync_watch_open(&ss->opt, &ss->watch, why, sizeof why) < 0)
            text_term_printf(stderr,
                             "mcpage serve: not watching the agents' folders (%s): syncing every "
                             "%ld s only\n",
                             why, ss->interval);
        const char *warn = ss->watch ? sync_watch_warning(ss->watch) : NULL;
        if (warn)
            text_term_printf(stderr, "mcpage serve: %s\n", warn);
    }
    ss->opt.stop = first_pass_stop;
    ss->opt.stop_ud = ss;
    ss->first_until = now_ms() + (int64_t)ss->first_sync * 1000;
    const char *named = getenv("MCPAGE_NAMED_SYNC");
    ss->no_named = named && strcmp(named, "0") == 0;
    sync_once(ss, true, true);
    ss->opt.stop = pass_stop;
    /* The sync thread takes no process signals: SIGTERM and SIGINT belong
       to the transport, which masks them in its own threads only. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&ss->thread, NULL, sync_loop, ss);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        text_term_printf(stderr, "mcpage serve: cannot start the sync thread\n");
        return 1;
    }
    ss->running = true;
    return 0;
}

/* What `mcpage serve` was asked. */
typedef struct serve_cmd {
    long page;              /* --page-size */
    long workers;           /* --workers */
    long inflight;          /* --max-inflight */
    const char *store_arg;  /* --store URL, or NULL */
    const char *db_arg;     /* --db FILE, or NULL */
    const char *export_dir; /* --export-dir, or NULL (then MCPAGE_EXPORT_DIR) */
    const char *policy;     /* --policy FILE, or NULL */
    bool no_sync;           /* --no-sync */
    cli_http_opts http;     /* the HTTP transport's options (serve_http.h) */
} serve_cmd;

/* Reads the options; -1 to go on, else the exit status (help: 0, a bad option: 2). */
static int parse_args(int argc, char **argv, serve_cmd *c, serve_sync *ss)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int hr = cli_http_parse(&c->http, argc, argv, &i);
        if (hr < 0)
            return 2;
        if (hr > 0)
            continue;
        long *count = NULL, min = 1, max = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--page-size") == 0) {
            count = &c->page, max = SERVE_MAX_PAGE_SIZE;
        } else if (strcmp(a, "--workers") == 0) {
            count = &c->workers, max = SERVE_MAX_WORKERS;
        } else if (strcmp(a, "--max-inflight") == 0) {
            count = &c->inflight, max = SERVE_MAX_INFLIGHT;
        } else if (strcmp(a, "--sync-interval") == 0) {
            count = &ss->interval, max = SERVE_MAX_SYNC_INTERVAL_S;
        } else if (strcmp(a, "--first-sync") == 0) {
            count = &ss->first_sync, min = 0, max = SERVE_MAX_SYNC_INTERVAL_S;
        } else if (strcmp(a, "--no-watch") == 0) {
            ss->no_watch = true;
        } else if (strcmp(a, "--no-sync") == 0) {
            c->no_sync = true;
        } else if (v && strcmp(a, "--db") == 0) {
            c->db_arg = argv[++i];
        } else if (v && strcmp(a, "--store") == 0) {
            c->store_arg = argv[++i];
        } else if (v && strcmp(a, "--export-dir") == 0) {
            c->export_dir = argv[++i];
        } else if (v && strcmp(a, "--policy") == 0) {
            c->policy = argv[++i];
        } else if (!cli_agents_parse(&ss->agents, argc, argv, &i, false)) {
            text_term_printf(stderr,
                             "mcpage serve: unknown option '%s'; see 'mcpage serve --help'\n", a);
            return 2;
        }
        if (count) {
            if (!parse_count(a, v, min, max, count))
                return 2;
            i++;
        }
    }
    return -1;
}

/* --no-sync on a machine that never synced: an empty archive is served (created here,
   migrated, with nothing in it), so every tool answers page one instead of an error;
   stderr says how to fill it. 0, or 1 after saying why it could not be made. */
static int empty_archive(const char *db)
{
    struct stat st;
    if (store_spec_is_url(db) || stat(db, &st) == 0 || errno != ENOENT)
        return 0; /* a shared store, or a file whose state the store's own check names */
    char err[600], shown[SYNC_PATH_MAX];
    store_spec_display(db, shown, sizeof shown);
    store *w = NULL;
    if (sync_make_parent_dirs(db) < 0 ||
        store_open_msg(db, STORE_OPEN_WRITE, &w, err, sizeof err) < 0) {
        text_term_printf(stderr,
                         "mcpage serve: there is no archive at %s and none can be made: %s\n",
                         shown, w ? store_errmsg(w) : err);
        store_close(w);
        return 1;
    }
    store_close(w);
    text_term_printf(stderr,
                     "mcpage serve: there was no archive at %s: serving an empty one; run "
                     "'mcpage sync' (or serve without --no-sync) to fill it\n",
                     shown);
    return 0;
}

/* The server with the archive's tools; 0, or 1 after saying why. */
static int server_open(const serve_cmd *c, const serve_sync *ss, cli_archive *arc,
                       mcpage_server **srv)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.title = "mcpage archive";
    cfg.page_size = (size_t)c->page;
    cfg.workers = (int)c->workers;
    cfg.max_inflight = (size_t)c->inflight;
    cfg.keyring = arc->kr;
    /* 2026-07-28 cache hints from what changes: the tools never change while this binary
       runs; the sessions change when a sync lands, which this process does every
       `interval` seconds on its own archive file (others may write a shared store at any
       time, or the archive served with --no-sync: there, no reuse without asking again).
       Transcripts are private: resources keep cacheScope "private". */
    cfg.catalog_ttl_ms = SERVE_CATALOG_TTL_MS;
    /* Sessions appear while serving when this process syncs or others write the shared
       store (docs/live.md). */
    cfg.resources_list_changed = !c->no_sync || store_spec_is_url(arc->db);
    cfg.resource_ttl_ms =
        c->no_sync || store_spec_is_url(arc->db) ? 0 : (int64_t)ss->interval * 1000;
    int rc = mcpage_server_new(&cfg, srv);
    if (rc == 0)
        rc = cli_archive_register(arc, *srv);
    if (rc != 0) {
        text_term_printf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        mcpage_server_free(*srv);
        *srv = NULL;
        return 1;
    }
    return 0;
}

/* The store checked once at start, beside serving: damage is said with its remedy. */
static void *check_at_start(void *arg)
{
    tools_ctx *ctx = arg;
    char why[700] = "";
    if (tools_check(ctx, why, sizeof why) < 0)
        text_term_printf(stderr, "mcpage serve: %s\n", why);
    return NULL;
}

int cli_cmd_serve(int argc, char **argv)
{
    serve_cmd c = {.page = MCPAGE_DEFAULT_PAGE_SIZE,
                   .workers = MCPAGE_DEFAULT_WORKERS,
                   .inflight = MCPAGE_DEFAULT_MAX_INFLIGHT,
                   .http = {.session_max_age = -1, .ui = -1}};
    serve_sync ss;
    memset(&ss, 0, sizeof ss);
    ss.interval = SERVE_SYNC_INTERVAL_S;
    ss.first_sync = SERVE_FIRST_SYNC_S;
    int status = parse_args(argc, argv, &c, &ss);
    if (status >= 0)
        return status;

    cli_archive arc;
    if (cli_archive_open(&arc, "mcpage serve", c.store_arg, c.db_arg) != 0)
        return 1;
    if (c.export_dir)
        arc.tools.export_dir = c.export_dir;
    arc.tools.owners_apply = c.http.oauth_issuer != NULL;
    tools_policy *policy = NULL;
    if (c.policy) {
        char err[600];
        if (tools_policy_load(c.policy, &policy, err, sizeof err) < 0) {
            text_term_printf(stderr, "mcpage serve: --policy %s\n", err);
            cli_archive_close(&arc);
            return 2;
        }
        arc.tools.policy = policy;
    }
    /* One malloc arena over stdio. glibc gives each thread that allocates its
       own (the two stdio threads, the sync pass, the store check), and what a
       call frees in one arena the next call, on the other thread, does not
       reuse: the bench's stdio run peaked at 50-65 MB with them, 39.5 MB with
       one, at the same speed (docs/performance.md). Over stdio at most two
       calls run at once, so there is little to contend for; HTTP keeps the
       default. */
    if (!c.http.enabled)
        (void)mallopt(M_ARENA_MAX, 1);
    mcpage_server *srv = NULL;
    if ((c.no_sync ? empty_archive(arc.db) : sync_start(&ss, arc.db)) != 0 ||
        server_open(&c, &ss, &arc, &srv) != 0) {
        sync_stop(&ss);
        cli_archive_close(&arc);
        tools_policy_free(policy);
        return 1;
    }

    /* A shared store: the follower tells of every change, this instance's own too. */
    serve_follow follow = {0};
    if (store_spec_is_url(arc.db))
        follow_start(&follow, arc.db, srv);
    else if (ss.running) { /* from now on a pass tells the clients what it stored */
        pthread_mutex_lock(&ss.mu);
        ss.srv = srv;
        pthread_mutex_unlock(&ss.mu);
    }

    /* A damaged store is reported as damaged (and /health says so) without holding up the
       first request: the check reads every page. */
    pthread_t checker;
    bool checking = pthread_create(&checker, NULL, check_at_start, &arc.tools) == 0;

    /* Ended sessions are shared through a store many instances share; an
       archive file is one machine's, and its servers open it read-only. */
    mcpage_http_ended ended = tools_ended_sessions(&arc.tools);
    int rc = c.http.enabled ? cli_http_serve(srv, &c.http, tools_health, &arc.tools,
                                             store_spec_is_url(arc.db) ? &ended : NULL)
                            : mcpage_serve_stdio(srv, 0, 1);
    if (rc == MCPAGE_ESTATE) {
        /* Calls ignored cancellation: leave them to process exit. */
        text_term_printf(stderr, "mcpage serve: exiting with calls still running\n");
        return 0;
    }

    if (checking)
        pthread_join(checker, NULL);
    follow_stop(&follow);
    sync_stop(&ss); /* before the server goes: a pass may be telling its clients */
    mcpage_server_free(srv);
    cli_archive_close(&arc);
    tools_policy_free(policy);
    if (rc != 0) {
        text_term_printf(stderr, "mcpage serve: %s\n", mcpage_strerror(rc));
        return 1;
    }
    return 0;
}
