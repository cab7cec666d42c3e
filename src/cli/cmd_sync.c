/*
 * `mcpage sync`: reads new transcript lines from Claude Code, Codex CLI,
 * Gemini CLI, GitHub Copilot CLI and OpenCode into the archive. Progress bar on a terminal, one
 * summary line otherwise, a JSON object with --json.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "cli/cli_agents.h"
#include "cli/commands.h"
#include "store/store.h"
#include "sync/sync.h"
#include "sync/sync_walk.h"
#include "tools/text_out.h"

static void print_sync_usage(FILE *out)
{
    fprintf(out,
            "usage: mcpage sync [--store URL | --db FILE] [--claude-home DIR]\n"
            "                   [--codex-home DIR] [--gemini-home DIR] [--copilot-home DIR]\n"
            "                   [--opencode-home DIR] [--cursor-home DIR] [--no-claude]\n"
            "                   [--no-codex] [--no-gemini] [--no-copilot] [--no-opencode]\n"
            "                   [--no-cursor] [--NAME-home DIR] [--no-NAME] [--sources FILE]\n"
            "                   [--hostname NAME] [--owner NAME] [--json] [--quiet]\n"
            "                   [--rebuild] [--settle] [--keep-secrets]\n\n"
            "Reads new lines of Claude Code transcripts (DIR/projects/**.jsonl) and Codex\n"
            "CLI rollouts (DIR/sessions/YYYY/MM/DD/rollout-*.jsonl, archived ones in\n"
            "DIR/archived_sessions, 2025's rollout-*.json), Gemini CLI chats\n"
            "(DIR/tmp/*/chats/session-*.jsonl, older session-*.json, sub-agents in\n"
            "chats/<parent>/) and GitHub Copilot CLI sessions\n"
            "(DIR/session-state/<id>/events.jsonl), OpenCode sessions (DIR/opencode.db,\n"
            "read-only) and Cursor agent CLI chats (DIR/chats/*/*/store.db, read-only)\n"
            "into the archive, and every described agent (Pi, Qwen Code, OpenClaude, ...:\n"
            "'mcpage sources' lists them and where each is looked for).\n"
            "Files already read are skipped or read from where the last sync stopped;\n"
            "sessions whose files were deleted stay in the archive. A last line without\n"
            "its newline may still be written: it is taken once its file has been\n"
            "unchanged for 60 s (sync names the files it holds back and when).\n\n"
            "  --store URL        a shared store: postgres://user@host/db (env\n"
            "                     MCPAGE_STORE); several machines may sync into it\n"
            "                     at once\n"
            "  --db FILE          the archive (env MCPAGE_DB; default\n"
            "                     $XDG_DATA_HOME/mcpage/archive.db or\n"
            "                     ~/.local/share/mcpage/archive.db)\n"
            "  --claude-home DIR  Claude Code's directory (env MCPAGE_CLAUDE_HOME,\n"
            "                     CLAUDE_CONFIG_DIR; default ~/.claude)\n"
            "  --codex-home DIR   Codex's directory (env MCPAGE_CODEX_HOME, CODEX_HOME;\n"
            "                     default ~/.codex)\n"
            "  --gemini-home DIR  Gemini CLI's directory (env MCPAGE_GEMINI_HOME, else\n"
            "                     $GEMINI_CLI_HOME/.gemini; default ~/.gemini)\n"
            "  --copilot-home DIR GitHub Copilot CLI's directory (env MCPAGE_COPILOT_HOME,\n"
            "                     COPILOT_HOME; default ~/.copilot)\n"
            "  --opencode-home DIR OpenCode's data directory (env MCPAGE_OPENCODE_HOME;\n"
            "                     default $XDG_DATA_HOME/opencode, ~/.local/share/opencode)\n"
            "  --cursor-home DIR  Cursor's directory (env MCPAGE_CURSOR_HOME; default\n"
            "                     ~/.cursor)\n"
            "  --NAME-home DIR    any other agent's directory, NAME as 'mcpage sources'\n"
            "                     lists it (env MCPAGE_NAME_HOME, e.g. MCPAGE_PI_HOME)\n"
            "  --aider-home DIRS  Aider's .aider.chat.history.md files: looked for in these\n"
            "                     folders (colon-separated) and two levels under them, and\n"
            "                     in every project folder the archive knows (env\n"
            "                     MCPAGE_AIDER_HOME, MCPAGE_AIDER_DIRS; default ~)\n"
            "  --no-claude, --no-codex, --no-gemini, --no-copilot, --no-opencode,\n"
            "  --no-cursor, --no-NAME  skip one source\n"
            "  --sources FILE     the user's source descriptions (env MCPAGE_SOURCES;\n"
            "                     default $XDG_CONFIG_HOME/mcpage/sources.json or\n"
            "                     ~/.config/mcpage/sources.json; docs/sources.md)\n"
            "  --hostname NAME    the machine recorded on sessions and source files\n"
            "                     (env MCPAGE_HOSTNAME; default gethostname())\n"
            "  --owner NAME       who the sessions this sync adds belong to on a shared\n"
            "                     store, user@machine (env MCPAGE_OWNER; default\n"
            "                     login@hostname; letters, digits and . _ - + @)\n"
            "  --json             print the report as one JSON object on stdout\n"
            "  --quiet            print nothing unless something failed\n"
            "  --settle           take every file as finished now: a last line without\n"
            "                     its newline that is a whole JSON object is read at once\n"
            "                     (after copying transcripts; not while an agent writes)\n"
            "  --keep-secrets     store secrets as they are: no redaction (by default API\n"
            "                     keys, tokens, private keys, URL passwords and secret\n"
            "                     NAME=value pairs become [REDACTED:kind] in message text,\n"
            "                     the index and the raw copy; docs/security.md). Also\n"
            "                     env MCPAGE_KEEP_SECRETS=1 or {\"keep_secrets\": true} in\n"
            "                     $XDG_CONFIG_HOME/mcpage/redact.json (env MCPAGE_REDACT_CONFIG)\n"
            "  --rebuild          build a new store from the transcripts (for a damaged\n"
            "                     one): written beside it as FILE.rebuild, then swapped\n"
            "                     in; the old file is kept as FILE.old-<UTC time>.\n"
            "                     Sessions whose transcripts are gone stay only there\n");
}

typedef struct bar_state {
    int enabled;
    int last_pct;
} bar_state;

static void draw_bar(void *ud, const sync_progress *p)
{
    bar_state *b = ud;
    if (!b->enabled)
        return;
    int pct = p->bytes_total > 0 ? (int)(p->bytes_done * 100 / p->bytes_total) : 100;
    if (pct > 100)
        pct = 100;
    if (pct == b->last_pct && p->files_done != p->files_total)
        return;
    b->last_pct = pct;
    char bar[31];
    int fill = pct * 30 / 100;
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r[%s] %3d%%  %lld/%lld files  %.1f MB   ", bar, pct, (long long)p->files_done,
            (long long)p->files_total, (double)p->bytes_done / 1e6);
    fflush(stderr);
}

/* What a pass and the tidy after it cost, for --json: the tidy runs
 * outside the pass (sync_report.seconds does not count it). */
typedef struct sync_costs {
    double cpu_seconds;      /* the pass: user + system CPU of this process */
    double tidy_seconds;     /* the tidy, wall clock */
    double tidy_cpu_seconds; /* the tidy, CPU */
} sync_costs;

static void print_json(const sync_report *r, const sync_costs *costs, const char *db)
{
    json_t *o = json_object();
    json_t *ex = json_array();
    for (int i = 0; i < r->nexamples; i++)
        json_array_append_new(ex, json_string(r->examples[i]));
    json_object_set_new(o, "db", json_string(db));
    json_object_set_new(o, "files_seen", json_integer(r->files_seen));
    json_object_set_new(o, "files_unchanged", json_integer(r->files_unchanged));
    json_object_set_new(o, "files_read", json_integer(r->files_read));
    json_object_set_new(o, "files_reparsed", json_integer(r->files_reparsed));
    json_object_set_new(o, "files_failed", json_integer(r->files_failed));
    json_object_set_new(o, "files_same_session", json_integer(r->files_same_session));
    json_object_set_new(o, "links_outside", json_integer(r->links_outside));
    json_object_set_new(o, "dirs_unreadable", json_integer(r->dirs_unreadable));
    json_object_set_new(o, "lines_read", json_integer(r->lines_read));
    json_object_set_new(o, "lines_malformed", json_integer(r->lines_malformed));
    json_object_set_new(o, "lines_too_long", json_integer(r->lines_too_long));
    json_object_set_new(o, "files_with_partial_last_line", json_integer(r->lines_partial));
    json_object_set_new(o, "lines_unterminated", json_integer(r->lines_unterminated));
    json_object_set_new(o, "claude_found", json_boolean(r->claude_found));
    json_object_set_new(o, "codex_found", json_boolean(r->codex_found));
    json_object_set_new(o, "gemini_found", json_boolean(r->gemini_found));
    json_object_set_new(o, "copilot_found", json_boolean(r->copilot_found));
    json_object_set_new(o, "opencode_found", json_boolean(r->opencode_found));
    json_object_set_new(o, "cursor_found", json_boolean(r->cursor_found));
    json_object_set_new(o, "sessions_added", json_integer(r->sessions_added));
    json_object_set_new(o, "messages_added", json_integer(r->messages_added));
    json_object_set_new(o, "bytes_read", json_integer(r->bytes_read));
    json_object_set_new(o, "seconds", json_real(r->seconds));
    json_object_set_new(o, "cpu_seconds", json_real(costs->cpu_seconds));
    json_object_set_new(o, "tidy_seconds", json_real(costs->tidy_seconds));
    json_object_set_new(o, "tidy_cpu_seconds", json_real(costs->tidy_cpu_seconds));
    json_object_set_new(o, "examples", ex);
    json_t *red = json_object();
    json_int_t red_total = 0;
    for (int k = 0; k < REDACT_KINDS; k++) {
        json_object_set_new(red, sync_redact_kind_name(k), json_integer(r->redacted.n[k]));
        red_total += r->redacted.n[k];
    }
    json_object_set_new(o, "redacted", red);
    json_object_set_new(o, "redacted_total", json_integer(red_total));
    json_t *warn = json_array();
    for (int i = 0; i < r->nwarnings; i++)
        json_array_append_new(warn, json_string(r->warning_list[i]));
    json_object_set_new(o, "warnings", json_integer(r->warnings));
    json_object_set_new(o, "warning_list", warn);
    json_t *srcs = json_array();
    for (int i = 0; i < r->nsources; i++) {
        const sync_source_report *x = &r->sources[i];
        json_t *so =
            json_pack("{ss sb sI sI sI sI sI}", "name", x->name, "found", x->found, "files",
                      (json_int_t)x->files, "files_failed", (json_int_t)x->files_failed,
                      "sessions_added", (json_int_t)x->sessions_added, "messages_added",
                      (json_int_t)x->messages_added, "warnings", (json_int_t)x->warnings);
        if (so && x->warning[0])
            json_object_set_new(so, "warning", json_string(x->warning));
        json_array_append_new(srcs, so);
    }
    json_object_set_new(o, "sources", srcs);
    json_t *held = json_array();
    for (int i = 0; i < r->nheld; i++)
        json_array_append_new(held, json_string(r->held_list[i]));
    json_object_set_new(o, "files_held_back", json_integer(r->held));
    json_object_set_new(o, "held_back", held);
    if (r->held_until > 0) {
        time_t t = (time_t)r->held_until;
        struct tm tm;
        char at[32];
        if (gmtime_r(&t, &tm) && strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm))
            json_object_set_new(o, "held_back_until", json_string(at));
    }
    char *txt = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (txt)
        printf("%s\n", txt);
    free(txt);
    json_decref(o);
}

/* Nothing to read at all: where sync looked and how to point it elsewhere. */
static void no_folder_help(const char *claude, const char *codex, const char *gemini,
                           const char *copilot, const char *opencode, const char *cursor)
{
    text_term_printf(stderr, "mcpage sync: no agent folder found. Looked for:\n");
    if (claude)
        text_term_printf(stderr, "  Claude Code transcripts in %s/projects\n", claude);
    if (codex)
        text_term_printf(stderr, "  Codex rollouts in %s/sessions and %s/archived_sessions\n",
                         codex, codex);
    if (gemini)
        text_term_printf(stderr, "  Gemini CLI chats in %s/tmp\n", gemini);
    if (copilot)
        text_term_printf(stderr, "  GitHub Copilot CLI sessions in %s/session-state\n", copilot);
    if (opencode)
        text_term_printf(stderr, "  OpenCode sessions in %s/opencode.db and %s/storage\n", opencode,
                         opencode);
    if (cursor)
        text_term_printf(stderr, "  Cursor agent CLI chats in %s/chats\n", cursor);
    text_term_printf(stderr,
                     "Point sync elsewhere with --claude-home DIR (env MCPAGE_CLAUDE_HOME or\n"
                     "CLAUDE_CONFIG_DIR) and --codex-home DIR (env MCPAGE_CODEX_HOME or "
                     "CODEX_HOME); likewise --gemini-home, --copilot-home, --opencode-home and\n"
                     "--cursor-home; every other agent with --NAME-home DIR or MCPAGE_NAME_HOME.\n"
                     "'mcpage sources' lists every agent and where it is looked for.\n");
}

/* Renames `from` to `to` when `from` exists; 0, or -1 with errno. */
static int move_if_present(const char *from, const char *to)
{
    if (rename(from, to) == 0 || errno == ENOENT)
        return 0;
    return -1;
}

/* Removes a store file and the files SQLite keeps beside it. */
static void remove_store_files(const char *path)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal", "-checked"};
    char p[SYNC_PATH_MAX + 16];
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, tails[i]);
        (void)unlink(p);
    }
}

/*
 * Puts the store built at `fresh` in place of `db`, keeping the old file
 * (and its write-ahead log, which belongs to it) as `aside`. The old file
 * is linked aside first so `db` names a store at every moment: the last
 * step, rename(fresh, db), replaces it atomically. Processes that have
 * the old file open keep reading it until they reopen (restart serve).
 */
static int swap_in(const char *fresh, const char *db, const char *aside)
{
    char from[SYNC_PATH_MAX + 16], to[SYNC_PATH_MAX + 64];
    if (access(db, F_OK) == 0 && link(db, aside) != 0 && rename(db, aside) != 0)
        return -1;
    static const char *const tails[] = {"-wal", "-shm", "-checked"};
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        snprintf(from, sizeof from, "%s%s", db, tails[i]);
        snprintf(to, sizeof to, "%s%s", aside, tails[i]);
        if (move_if_present(from, to) < 0)
            return -1;
    }
    return rename(fresh, db);
}

static double now_s(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * One pass into `s`, then what the store keeps for later readers
 * (store_tidy): a failure there leaves the sync done, so it is only
 * said. The pass's status, with the store's message in `err`.
 */
static int pass_and_tidy(store *s, const sync_options *opt, sync_report *rep, sync_costs *costs,
                         char *err, size_t errcap)
{
    double cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc = sync_run(s, opt, rep);
    snprintf(err, errcap, "%s", store_errmsg(s));
    double cpu1 = now_s(CLOCK_PROCESS_CPUTIME_ID), wall1 = now_s(CLOCK_MONOTONIC);
    costs->cpu_seconds = cpu1 - cpu0;
    if (rc >= 0 && store_tidy(s) < 0)
        text_term_printf(stderr, "mcpage sync: warning: keeping search lists failed: %s\n",
                         store_errmsg(s));
    costs->tidy_seconds = now_s(CLOCK_MONOTONIC) - wall1;
    costs->tidy_cpu_seconds = now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu1;
    return rc;
}

/*
 * `mcpage sync --rebuild`: a new store from the transcripts, for a
 * damaged one (or one of something else): nothing is read from the old
 * file and nothing is written into it. 0, or 1 after saying why.
 */
static int rebuild(const char *db, const char *shown, const sync_options *opt, sync_report *rep,
                   sync_costs *costs, char *aside, size_t aside_cap)
{
    if (store_spec_is_url(db)) {
        text_term_printf(stderr,
                         "mcpage sync: --rebuild rebuilds an SQLite file; a PostgreSQL store is "
                         "restored from the server's backups (or dropped and synced again)\n");
        return 1;
    }
    char fresh[SYNC_PATH_MAX + 16], err[600];
    snprintf(fresh, sizeof fresh, "%s.rebuild", db);
    remove_store_files(fresh); /* a rebuild that was interrupted */
    store *s = NULL;
    if (store_open_msg(fresh, STORE_OPEN_WRITE, &s, err, sizeof err) < 0) {
        text_term_printf(stderr, "mcpage sync: cannot create %s: %s\n", fresh, err);
        return 1;
    }
    int rc = pass_and_tidy(s, opt, rep, costs, err, sizeof err);
    store_close(s); /* checkpoints: the new store is one file */
    if (rc < 0) {
        remove_store_files(fresh);
        text_term_printf(stderr, "mcpage sync: the rebuild failed (%s%s%s); %s is unchanged\n",
                         mcpage_strerror(rc), err[0] ? ": " : "", err, shown);
        return 1;
    }
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    snprintf(aside, aside_cap, "%s.old-%s", db, when);
    int had = access(db, F_OK) == 0;
    if (swap_in(fresh, db, aside) < 0) {
        text_term_printf(stderr, "mcpage sync: cannot swap the rebuilt store %s in for %s: %s\n",
                         fresh, shown, strerror(errno));
        return 1;
    }
    if (!had)
        aside[0] = '\0'; /* nothing was there to keep */
    char lock[SYNC_PATH_MAX + 32];
    snprintf(lock, sizeof lock, "%s-sync.lock", fresh); /* claims die with the name */
    (void)unlink(lock);
    snprintf(lock, sizeof lock, "%s-checked", fresh); /* the seal of a name gone */
    (void)unlink(lock);
    return 0;
}

/* What `mcpage sync` was asked, then the paths it resolved. */
typedef struct sync_cmd {
    const char *store_arg;     /* --store URL, or NULL */
    const char *db_arg;        /* --db FILE, or NULL */
    const char *host_arg;      /* --hostname, else MCPAGE_HOSTNAME, or NULL */
    const char *owner_arg;     /* --owner, else MCPAGE_OWNER, or NULL */
    int json, quiet, rebuild;  /* --json, --quiet, --rebuild */
    int settle;                /* --settle */
    int keep_secrets;          /* --keep-secrets, or the config's keep_secrets */
    cli_agents agents;         /* --NAME-home, --no-NAME and the folders */
    char db[SYNC_PATH_MAX];    /* the store spec */
    char shown[SYNC_PATH_MAX]; /* the store as messages show it (no password) */
} sync_cmd;

/* Reads the options into `c`; -1 to go on, else the exit status (help: 0, a bad option: 2). */
static int parse_args(int argc, char **argv, sync_cmd *c)
{
    c->host_arg = getenv("MCPAGE_HOSTNAME");
    c->owner_arg = getenv("MCPAGE_OWNER");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc, known = true;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_sync_usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            c->json = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            c->quiet = 1;
        } else if (strcmp(a, "--rebuild") == 0) {
            c->rebuild = 1;
        } else if (strcmp(a, "--settle") == 0) {
            c->settle = 1;
        } else if (strcmp(a, "--keep-secrets") == 0) {
            c->keep_secrets = 1;
        } else if (has_value && strcmp(a, "--db") == 0) {
            c->db_arg = argv[++i];
        } else if (has_value && strcmp(a, "--store") == 0) {
            c->store_arg = argv[++i];
        } else if (has_value && strcmp(a, "--hostname") == 0) {
            c->host_arg = argv[++i];
        } else if (has_value && strcmp(a, "--owner") == 0) {
            c->owner_arg = argv[++i];
        } else {
            known = cli_agents_parse(&c->agents, argc, argv, &i, true);
        }
        if (!known) {
            text_term_printf(stderr, "mcpage sync: unknown or incomplete option '%s'\n", a);
            print_sync_usage(stderr);
            return 2;
        }
    }
    if (c->owner_arg && *c->owner_arg && !store_owner_valid(c->owner_arg)) {
        text_term_printf(stderr,
                         "mcpage sync: --owner '%s' is not an owner name: use letters, digits "
                         "and . _ - + @ (at most %d bytes), as user@machine\n",
                         c->owner_arg, STORE_OWNER_MAX);
        return 2;
    }
    return -1;
}

/* The store spec and every agent's folder (given, or its default); false when one is too long. */
static bool resolve_paths(sync_cmd *c)
{
    if (cli_store_spec(c->db, sizeof c->db, c->store_arg, c->db_arg) < 0 ||
        !cli_agents_resolve(&c->agents))
        return false;
    store_spec_display(c->db, c->shown, sizeof c->shown);
    return true;
}

/*
 * Syncs into the store (or rebuilds it: `aside` then names the old
 * file). 0 or a negative status with the store's message in `err`; 1
 * when it failed and said why already.
 */
static int run_sync(const sync_cmd *c, const sync_options *opt, sync_report *rep, sync_costs *costs,
                    char *err, size_t errcap, char *aside, size_t asidecap)
{
    if (c->rebuild)
        return rebuild(c->db, c->shown, opt, rep, costs, aside, asidecap) != 0 ? 1 : 0;
    store *s = NULL;
    if (store_open_msg(c->db, STORE_OPEN_WRITE, &s, err, errcap) < 0) {
        text_term_printf(stderr, "mcpage sync: cannot open %s: %s\n", c->shown, err);
        return 1;
    }
    int rc = pass_and_tidy(s, opt, rep, costs, err, errcap);
    store_close(s);
    return rc;
}

/* The secrets redacted, per kind ("  redacted 3 secrets: github 2, jwt 1"). */
static void print_redacted(const sync_report *rep)
{
    long long total = 0;
    char kinds[512] = "";
    size_t k = 0;
    for (int i = 0; i < REDACT_KINDS; i++) {
        if (rep->redacted.n[i] == 0)
            continue;
        total += rep->redacted.n[i];
        int w = snprintf(kinds + k, sizeof kinds - k, "%s%s %lld", k ? ", " : "",
                         sync_redact_kind_name(i), (long long)rep->redacted.n[i]);
        if (w > 0 && (size_t)w < sizeof kinds - k)
            k += (size_t)w;
    }
    if (total)
        fprintf(stderr, "  redacted %lld secret%s: %s\n", total, total == 1 ? "" : "s", kinds);
}

/* What was read, on stderr: the counts, what was skipped, the first examples of failures. */
static void print_summary(const sync_report *rep)
{
    text_term_printf(
        stderr,
        "mcpage sync: %lld files (%lld unchanged, %lld read, %lld re-read, %lld failed), "
        "+%lld sessions, +%lld messages, %.1f MB in %.2f s; %lld malformed, %lld too "
        "long, %lld partial last lines\n",
        (long long)rep->files_seen, (long long)rep->files_unchanged, (long long)rep->files_read,
        (long long)rep->files_reparsed, (long long)rep->files_failed,
        (long long)rep->sessions_added, (long long)rep->messages_added,
        (double)rep->bytes_read / 1e6, rep->seconds, (long long)rep->lines_malformed,
        (long long)rep->lines_too_long, (long long)rep->lines_partial);
    print_redacted(rep);
    if (rep->files_same_session || rep->links_outside || rep->dirs_unreadable)
        text_term_printf(stderr,
                         "  %lld files skipped (same session as another), %lld links out of the "
                         "agent's folder not followed, %lld folders unreadable\n",
                         (long long)rep->files_same_session, (long long)rep->links_outside,
                         (long long)rep->dirs_unreadable);
    if (rep->files_failed)
        text_term_printf(
            stderr,
            "  the counts are what was committed; the %lld failed files' uncommitted lines "
            "were rolled back, and the next sync reads them again from there\n",
            (long long)rep->files_failed);
    for (int i = 0; i < rep->nexamples; i++)
        text_term_printf(stderr, "  %s\n", rep->examples[i]);
    if (rep->warnings)
        text_term_printf(stderr, "  %lld files of the agents' folders refused or skipped:\n",
                         (long long)rep->warnings);
    for (int i = 0; i < rep->nwarnings; i++)
        text_term_printf(stderr, "    %s\n", rep->warning_list[i]);
    if (rep->warnings > rep->nwarnings)
        text_term_printf(stderr, "    (%lld more)\n", (long long)(rep->warnings - rep->nwarnings));
    /* per source: how many warnings, and the first unless shown above */
    for (int i = 0; i < rep->nsources; i++) {
        const sync_source_report *x = &rep->sources[i];
        if (x->warnings <= 0)
            continue;
        int shown = 0;
        for (int k = 0; k < rep->nexamples && !shown; k++)
            shown = strcmp(rep->examples[k], x->warning) == 0;
        text_term_printf(stderr, "  %s: %lld warning%s%s%s\n", x->name, (long long)x->warnings,
                         x->warnings == 1 ? "" : "s",
                         shown || !x->warning[0] ? "" : ", first: ", shown ? "" : x->warning);
    }
    if (rep->held) {
        text_term_printf(stderr, "  %lld files hold back their last line:\n", (long long)rep->held);
        for (int i = 0; i < rep->nheld; i++)
            text_term_printf(stderr, "    %s\n", rep->held_list[i]);
        if (rep->held > rep->nheld)
            text_term_printf(stderr, "    (%lld more)\n", (long long)(rep->held - rep->nheld));
        if (rep->held_until > 0) {
            time_t t = (time_t)rep->held_until, now = time(NULL);
            text_term_printf(stderr,
                             "  run `mcpage sync` again after %lld s to take them, or `mcpage sync "
                             "--settle` to take complete lines now\n",
                             (long long)(t > now ? t - now : 0));
        }
    }
}

/* The report in the form asked for, and what to do when no agent folder was found. */
static void report(const sync_cmd *c, const sync_report *rep, const sync_costs *costs,
                   const char *aside)
{
    if (c->json)
        print_json(rep, costs, c->shown);
    else if (!c->quiet || rep->files_failed)
        print_summary(rep);

    int any = 0;
    for (int i = 0; i < rep->nsources; i++)
        any |= rep->sources[i].found;
    if (!c->json && !any && !rep->claude_found && !rep->codex_found && !rep->gemini_found &&
        !rep->copilot_found && !rep->opencode_found && !rep->cursor_found)
        no_folder_help(cli_agents_home(&c->agents, CLI_AGENT_CLAUDE),
                       cli_agents_home(&c->agents, CLI_AGENT_CODEX),
                       cli_agents_home(&c->agents, CLI_AGENT_GEMINI),
                       cli_agents_home(&c->agents, CLI_AGENT_COPILOT),
                       cli_agents_home(&c->agents, CLI_AGENT_OPENCODE),
                       cli_agents_home(&c->agents, CLI_AGENT_CURSOR));

    if (aside[0] && !c->quiet)
        text_term_printf(
            stderr,
            "mcpage sync: rebuilt %s from the transcripts; the previous file is kept as %s "
            "(restart 'mcpage serve' so it reads the new one)\n",
            c->shown, aside);
}

int cli_cmd_sync(int argc, char **argv)
{
    sync_cmd c;
    memset(&c, 0, sizeof c);
    int status = parse_args(argc, argv, &c);
    if (status >= 0)
        return status;

    if (!resolve_paths(&c)) {
        text_term_printf(stderr, "mcpage sync: %s\n",
                         c.agents.err[0] ? c.agents.err : "a path is too long");
        cli_agents_free(&c.agents);
        return 2;
    }
    if (!store_spec_is_url(c.db) && sync_make_parent_dirs(c.db) < 0) {
        text_term_printf(stderr, "mcpage sync: cannot create the directory of %s\n", c.db);
        cli_agents_free(&c.agents);
        return 1;
    }

    bar_state bar = {.enabled = !c.json && !c.quiet && isatty(2), .last_pct = -1};
    sync_options opt = {
        .hostname = c.host_arg && *c.host_arg ? c.host_arg : NULL,
        .owner = c.owner_arg && *c.owner_arg ? c.owner_arg : NULL,
        .progress = draw_bar,
        .progress_ud = &bar,
        .settle = c.settle,
    };
    sync_redact_config redact;
    cli_redact_options("mcpage sync", c.keep_secrets, &redact, &opt);
    cli_agents_options(&c.agents, &opt);
    sync_report rep;
    sync_costs costs = {0};
    char err[600] = "", aside[SYNC_PATH_MAX + 64] = "";
    int rc = run_sync(&c, &opt, &rep, &costs, err, sizeof err, aside, sizeof aside);
    if (rc == 1) {
        status = 1;
        goto out;
    }
    if (bar.enabled && bar.last_pct >= 0)
        text_term_printf(stderr, "\n");

    report(&c, &rep, &costs, aside);
    if (rc < 0) {
        text_term_printf(stderr, "mcpage sync: %s%s%s\n", mcpage_strerror(rc), err[0] ? ": " : "",
                         err);
        status = 1;
        goto out;
    }
    cli_sources_record(c.shown, &rep);
    status = rep.files_failed ? 1 : 0;
out:
    sync_redact_config_free(&redact);
    cli_agents_free(&c.agents);
    return status;
}
