/*
 * `mcpage export`: one session to stdout or a file, or many (a project's,
 * or those a search finds) into a new folder with an index. The sessions
 * of a project or a query are chosen by the archive's own tools
 * (list_sessions, search_conversations) called in-process, so the query
 * syntax and filters are the agent's; the files are written by
 * src/tools/export.c. A file appears only whole (temp file, then rename); a
 * folder appears only complete (built under a temporary name, renamed at
 * the end, removed on failure).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_archive.h"
#include "cli/commands.h"
#include "tools/export.h"
#include "tools/text_out.h"
#include "ui/ui_call.h"

/* Most sessions one folder export takes (--max-sessions). */
#define EXPORT_SESSIONS_DEFAULT 1000
#define EXPORT_SESSIONS_MAX     100000

static void export_usage(FILE *out)
{
    (void)fprintf(
        out,
        "usage: mcpage export [OPTIONS] SESSION_ID [--format md|html|jsonl] [-o FILE]\n"
        "       mcpage export [OPTIONS] --project NAME [--format ...] [-o DIR]\n"
        "       mcpage export [OPTIONS] --query \"...\" [--format ...] [-o DIR]\n\n"
        "Exports archived sessions for reading or keeping:\n"
        "  md     Markdown, tool calls, tool results and thinking folded in <details>\n"
        "  html   one self-contained HTML file (inline style, no script, no external asset)\n"
        "  jsonl  the session's original JSON Lines, byte for byte as stored\n"
        "One session goes to stdout, or to FILE with -o (written whole or not at all).\n"
        "--project and --query export every session of a project, or every session a\n"
        "search finds (search_conversations' syntax: words, \"phrases\", prefix*,\n"
        "project:, source:, role:, tool:, after:, before:, has:error), into a new\n"
        "folder DIR (default ./mcpage-export) holding one file per session and an index;\n"
        "the folder appears only once complete. Progress goes to stderr.\n\n"
        "options:\n"
        "  --format F          md (default), html or jsonl\n"
        "  -o, --output PATH   the file (one session) or the new folder (many)\n"
        "  --max-sessions N    most sessions a folder export takes (default %d, up to %d)\n"
        "  --quiet             no progress\n"
        "  --raw               stdout byte for byte when it is not a terminal (jsonl);\n"
        "                      by default, and always on a terminal, control characters\n"
        "                      are shown visibly (ESC as \\e); -o FILE is always exact\n"
        "  --store URL         a shared store, postgres://user@host/db (env MCPAGE_STORE)\n"
        "  --db FILE           the archive (env MCPAGE_DB; default as `mcpage sync`)\n",
        EXPORT_SESSIONS_DEFAULT, EXPORT_SESSIONS_MAX);
}

typedef struct export_opts {
    const char *store_arg, *db_arg; /* where the archive is */
    const char *session_id;         /* one session, or NULL */
    const char *project, *query;    /* many sessions, or NULL */
    const char *output;             /* -o, or NULL */
    export_format fmt;              /* --format */
    long max_sessions;              /* --max-sessions */
    bool quiet;                     /* --quiet */
    bool raw;                       /* --raw: stdout byte for byte when it is not a terminal */
} export_opts;

/* 0 when parsed, 1 after --help, 2 after a usage error (printed). */
static int parse_args(export_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            export_usage(stdout);
            return 1;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            takes = false;
        } else if (strcmp(a, "--raw") == 0) {
            o->raw = true;
            takes = false;
        } else if (v && strcmp(a, "--format") == 0) {
            if (export_format_parse(v, &o->fmt) != 0) {
                text_term_printf(stderr, "mcpage export: --format takes md, html or jsonl\n");
                return 2;
            }
        } else if (v && (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
            o->output = v;
        } else if (v && strcmp(a, "--project") == 0) {
            o->project = v;
        } else if (v && strcmp(a, "--query") == 0) {
            o->query = v;
        } else if (v && strcmp(a, "--db") == 0) {
            o->db_arg = v;
        } else if (v && strcmp(a, "--store") == 0) {
            o->store_arg = v;
        } else if (v && strcmp(a, "--max-sessions") == 0) {
            char *end;
            o->max_sessions = strtol(v, &end, 10);
            if (*end || o->max_sessions < 1 || o->max_sessions > EXPORT_SESSIONS_MAX) {
                text_term_printf(stderr, "mcpage export: --max-sessions needs 1 to %d\n",
                                 EXPORT_SESSIONS_MAX);
                return 2;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            text_term_printf(stderr, "mcpage export: unknown or incomplete option '%s'\n", a);
            return 2;
        } else if (o->session_id == NULL) {
            o->session_id = a;
            takes = false;
        } else {
            text_term_printf(stderr, "mcpage export: one SESSION_ID at a time (or --project, "
                                     "--query)\n");
            return 2;
        }
        if (takes)
            i++;
    }
    int modes = (o->session_id != NULL) + (o->project != NULL) + (o->query != NULL);
    if (modes != 1) {
        text_term_printf(stderr, "mcpage export: give one of SESSION_ID, --project NAME or "
                                 "--query \"...\"\n");
        export_usage(stderr);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------ one session */

static int export_one(const export_opts *o, store *s)
{
    char err[600];
    export_stats st;
    if (o->output && strcmp(o->output, "-") != 0) {
        int rc = export_session_output(s, o->session_id, o->fmt, o->output, &st, err, sizeof err);
        if (rc < 0) {
            text_term_printf(stderr, "mcpage export: %s: %s\n", o->session_id, err);
            return 1;
        }
        if (!o->quiet)
            text_term_printf(stderr, "mcpage export: wrote %s (%lld bytes, %lld lines, %s)\n",
                             o->output, (long long)st.bytes, (long long)st.lines,
                             export_format_ext(o->fmt));
        return 0;
    }
    store_session ses;
    int rc = store_session_get(s, o->session_id, &ses);
    if (rc < 0) {
        text_term_printf(stderr, "mcpage export: %s: %s\n", o->session_id,
                         rc == MCPAGE_ENOTFOUND ? "no session with this id (mcpage call "
                                                  "list_sessions shows them)"
                                                : store_errmsg(s));
        return 1;
    }
    rc = export_session_stream(s, &ses, o->fmt, stdout, text_term_escapes(stdout, o->raw), &st);
    store_session_clear(&ses);
    if (rc < 0) {
        text_term_printf(stderr, "mcpage export: %s: %s\n", o->session_id,
                         rc == MCPAGE_EIO && errno == ENOSPC ? "disk full" : mcpage_strerror(rc));
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ choosing many */

/*
 * Walks `tool` page by page with next_cursor, collecting the distinct
 * session_id of its records (in order of first appearance) into `ids`,
 * up to `max`. 0, or 1 after printing why.
 */
static int collect_ids(mcpage_server *srv, const char *tool, json_t *args, const char *noun,
                       long max, json_t *ids)
{
    json_t *seen = json_object();
    int status = 0;
    for (;;) {
        char err[600];
        json_t *res = ui_call_tool(srv, NULL, tool, args, err, sizeof err); /* the local user */
        if (res == NULL || json_is_true(json_object_get(res, "isError"))) {
            const json_t *c0 = json_array_get(json_object_get(res, "content"), 0);
            text_term_printf(stderr, "mcpage export: %s: %s\n", tool,
                             res ? ui_str(c0, "text", "failed") : err);
            json_decref(res);
            status = 1;
            break;
        }
        const json_t *sc = json_object_get(res, "structuredContent");
        json_t *recs = ui_records(sc, noun);
        size_t i;
        const json_t *rec;
        json_array_foreach(recs, i, rec)
        {
            const char *id = ui_str(rec, "session_id", NULL);
            if (id && !json_object_get(seen, id) && (long)json_array_size(ids) < max) {
                json_object_set_new(seen, id, json_true());
                json_array_append_new(ids, json_string(id));
            }
        }
        json_decref(recs);
        const char *next = ui_str(sc, "next_cursor", NULL);
        bool more = json_is_true(json_object_get(sc, "has_more")) && next &&
                    (long)json_array_size(ids) < max;
        if (more)
            json_object_set_new(args, "cursor", json_string(next));
        json_decref(res);
        if (!more)
            break;
    }
    json_decref(seen);
    return status;
}

/* The sessions to export, chosen by the archive's tools. */
static int choose_sessions(const export_opts *o, cli_archive *arc, json_t *ids)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcpage", mcpage_version());
    cfg.keyring = arc->kr;
    cfg.workers = 1;
    mcpage_server *srv = NULL;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = cli_archive_register(arc, srv);
    if (rc != 0) {
        text_term_printf(stderr, "mcpage export: %s\n", mcpage_strerror(rc));
        mcpage_server_free(srv);
        return 1;
    }
    json_t *args;
    int status;
    if (o->project) {
        args = json_pack("{s:s, s:i, s:[s]}", "project", o->project, "limit", 100, "fields",
                         "session_id");
        status = collect_ids(srv, "list_sessions", args, "sessions", o->max_sessions, ids);
    } else {
        args = json_pack("{s:s, s:s, s:i, s:[s]}", "query", o->query, "sort", "newest", "limit", 50,
                         "fields", "session_id");
        status = collect_ids(srv, "search_conversations", args, "matches", o->max_sessions, ids);
    }
    json_decref(args);
    mcpage_server_free(srv);
    return status;
}

/* ------------------------------------------------------------ a folder */

/* dir/name into out; false when it does not fit (nothing this command makes is that long). */
static bool path_join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < cap;
}

/* Removes a folder this command made and everything in it (one level). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (path_join(path, sizeof path, dir, e->d_name))
                (void)unlink(path);
        }
        closedir(d);
    }
    (void)rmdir(dir);
}

static int write_index(const export_opts *o, const char *tmpdir, const export_index_entry *e,
                       size_t n)
{
    char heading[600], path[4400], err[300];
    if (o->project)
        (void)snprintf(heading, sizeof heading, "Sessions of project %s", o->project);
    else
        (void)snprintf(heading, sizeof heading, "Sessions matching %s", o->query);
    if (!path_join(path, sizeof path, tmpdir, export_index_name(o->fmt))) {
        text_term_printf(stderr, "mcpage export: the folder's path is too long: %s\n", tmpdir);
        return MCPAGE_ERANGE;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (f == NULL && fd >= 0)
        close(fd);
    int rc = f ? export_index_write(f, o->fmt, heading, e, n) : MCPAGE_EIO;
    if (f && fclose(f) != 0 && rc == 0)
        rc = MCPAGE_EIO;
    if (rc < 0) {
        (void)snprintf(err, sizeof err, "%s", strerror(errno));
        text_term_printf(stderr, "mcpage export: cannot write the index: %s\n", err);
    }
    return rc;
}

/* Exports each session of `ids` into `tmpdir`; 0, or 1 after printing why. */
static int export_each(const export_opts *o, store *s, const json_t *ids, const char *tmpdir,
                       export_index_entry *e, store_session *sess, size_t *done)
{
    size_t n = json_array_size(ids);
    int64_t bytes = 0;
    time_t last = 0;
    bool tty = isatty(2); /* a terminal gets one line, rewritten in place */
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        char name[EXPORT_NAME_MAX], path[4400], err[600];
        export_file_name(id, o->fmt, name, sizeof name);
        if (!path_join(path, sizeof path, tmpdir, name)) {
            text_term_printf(stderr, "\nmcpage export: the folder's path is too long: %s\n",
                             tmpdir);
            return 1;
        }
        int rc = store_session_get(s, id, &sess[i]);
        if (rc < 0) {
            text_term_printf(stderr, "\nmcpage export: %s: %s\n", id, store_errmsg(s));
            return 1;
        }
        rc = export_session_file(s, id, o->fmt, path, EXPORT_NEW, &e[i].stats, err, sizeof err);
        if (rc < 0) {
            store_session_clear(&sess[i]);
            text_term_printf(stderr, "\nmcpage export: %s: %s\n", id, err);
            return 1;
        }
        *done = i + 1;
        e[i].file = strdup(name);
        e[i].ses = &sess[i];
        if (e[i].file == NULL) {
            text_term_printf(stderr, "\nmcpage export: out of memory\n");
            return 1;
        }
        bytes += e[i].stats.bytes;
        time_t now = time(NULL);
        if (!o->quiet && (now != last || i + 1 == n)) {
            last = now;
            (void)fprintf(stderr, "%smcpage export: %zu/%zu sessions, %.1f MB%s", tty ? "\r" : "",
                          i + 1, n, (double)bytes / 1e6, tty ? "" : "\n");
            (void)fflush(stderr);
        }
    }
    if (!o->quiet && tty && n > 0)
        text_term_printf(stderr, "\n");
    return 0;
}

static int export_many(const export_opts *o, cli_archive *arc, store *s)
{
    const char *dir = o->output ? o->output : "mcpage-export";
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        text_term_printf(stderr, "mcpage export: %s exists; name a new folder with -o DIR\n", dir);
        return 1;
    }
    json_t *ids = json_array();
    if (choose_sessions(o, arc, ids) != 0) {
        json_decref(ids);
        return 1;
    }
    size_t n = json_array_size(ids);
    if (n == 0) {
        text_term_printf(stderr, "mcpage export: no session found; nothing written\n");
        json_decref(ids);
        return 1;
    }
    char tmpdir[4400];
    int tn = snprintf(tmpdir, sizeof tmpdir, "%s.part-XXXXXX", dir);
    if (tn < 0 || (size_t)tn >= sizeof tmpdir) {
        text_term_printf(stderr, "mcpage export: the output folder's path is too long: %s\n", dir);
        json_decref(ids);
        return 1;
    }
    export_index_entry *e = calloc(n, sizeof *e);
    store_session *sess = calloc(n, sizeof *sess);
    int status = 1;
    size_t done = 0;
    if (e == NULL || sess == NULL || mkdtemp(tmpdir) == NULL) {
        text_term_printf(stderr, "mcpage export: cannot create %s: %s\n", tmpdir, strerror(errno));
        tmpdir[0] = '\0';
        goto out;
    }
    if (export_each(o, s, ids, tmpdir, e, sess, &done) != 0 || write_index(o, tmpdir, e, n) != 0)
        goto out;
    if (rename(tmpdir, dir) != 0) {
        text_term_printf(stderr, "mcpage export: cannot rename %s to %s: %s\n", tmpdir, dir,
                         strerror(errno));
        goto out;
    }
    tmpdir[0] = '\0';
    status = 0;
    if (!o->quiet)
        text_term_printf(stderr, "mcpage export: wrote %zu sessions and %s into %s\n", n,
                         export_index_name(o->fmt), dir);
out:
    if (tmpdir[0])
        remove_tree(tmpdir); /* nothing partial is left behind */
    for (size_t i = 0; e && sess && i < done; i++) {
        free((void *)e[i].file);
        store_session_clear(&sess[i]);
    }
    free(e);
    free(sess);
    json_decref(ids);
    return status;
}

int cli_cmd_export(int argc, char **argv)
{
    export_opts o = {.fmt = EXPORT_MD, .max_sessions = EXPORT_SESSIONS_DEFAULT};
    int prc = parse_args(&o, argc, argv);
    if (prc != 0)
        return prc == 1 ? 0 : 2;
    cli_archive arc;
    if (cli_archive_open(&arc, "mcpage export", o.store_arg, o.db_arg) != 0)
        return 1;
    store *s = NULL;
    char err[600];
    int status = 1;
    if (store_open_msg(arc.db, STORE_OPEN_READONLY, &s, err, sizeof err) < 0) {
        text_term_printf(stderr, "mcpage export: cannot open the archive: %s\n", err);
    } else {
        status = o.session_id ? export_one(&o, s) : export_many(&o, &arc, s);
    }
    store_close(s);
    cli_archive_close(&arc);
    return status;
}
