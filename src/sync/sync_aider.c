/*
 * Aider (docs/transcripts.md, "Aider"): `<repo>/.aider.chat.history.md`,
 * one Markdown file per repository that every run of aider appends to.
 * A run starts with a line `# aider chat started at YYYY-MM-DD HH:MM:SS`
 * (local time) and is one session. In it, `#### ` lines are what the
 * user typed (one input may span several such lines), `> ` lines are
 * aider's own output (announcements, confirmations, token reports,
 * errors), and the rest is the model's answer.
 *
 * Aider has no central folder, so the files are looked for where the
 * user works: the project folders of every session the archive holds
 * (and their parents up to the repository's root, where aider writes),
 * and the folders the source's home lists (`--aider-home`,
 * MCPAGE_AIDER_HOME or MCPAGE_AIDER_DIRS: colon-separated; by default
 * the home folder), each with two levels of folders under it.
 *
 * Each run is a job of its own: a byte range of the file, its identity
 * the range's length and a hash of its bytes, so a run that did not
 * change is skipped, and only the run an append reached is read again
 * (its range alone). A run is rendered as JSON Lines (its raw copy,
 * read_raw says so): a first line with the run's facts, then one line
 * per message. The file's last message may still grow, so while the
 * file is younger than SYNC_SETTLED_SECONDS (and --settle is not given)
 * that line is written without its newline and waits, as a partial line
 * of any other source does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "page/base64.h"
#include "page/digest.h"
#include "sync/sync_desc.h"
#include "sync/sync_fold.h"
#include "sync/sync_internal.h"
#include "sync/sync_json.h"
#include "sync/sync_source.h"

#define AIDER_FILE      ".aider.chat.history.md"
#define AIDER_HEADER    "# aider chat started at "
#define AIDER_RUNS_MAX  100000  /* runs of one file */
#define AIDER_DIRS_MAX  20000   /* folders listed while looking, per listed folder */
#define AIDER_UP_MAX    8       /* parents of a project folder looked at */
#define AIDER_LINES_MAX 1000000 /* lines of one message kept together */
#define AIDER_FILES_MAX 100000  /* history files of one pass */

/* ---- rendering --------------------------------------------------------- */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int starts(const char *p, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(p, prefix, k) == 0;
}

/* A line without its newline, its trailing "  " (aider's Markdown line
 * break) and a carriage return. */
static size_t trim_end(const char *p, size_t n)
{
    if (n > 0 && p[n - 1] == '\r')
        n--;
    while (n > 0 && p[n - 1] == ' ')
        n--;
    return n;
}

/* A user line: `#### text` or `####` alone. */
static int is_user(const char *p, size_t n)
{
    return starts(p, n, "#### ") || (n == 4 && memcmp(p, "####", 4) == 0) ||
           (starts(p, n, "####") && trim_end(p, n) == 4);
}

/* A line of aider's output: `> text` or `>` alone. */
static int is_tool(const char *p, size_t n)
{
    return starts(p, n, "> ") || (n >= 1 && p[0] == '>' && trim_end(p, n) == 1);
}

/* A code fence in the model's answer (``` or ~~~, maybe indented). */
static int is_fence(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && i < 3 && p[i] == ' ')
        i++;
    return starts(p + i, n - i, "```") || starts(p + i, n - i, "~~~");
}

/* "2.3k" / "312" / "1.2M" as aider's format_tokens writes them. */
static int64_t tokens_of(const char *p, size_t n)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = 0;
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end == buf || v < 0 || v > 1e15)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1000, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1000000, end++;
    if (*end)
        return -1;
    return (int64_t)(v + 0.5);
}

/* A `Tokens: 2.3k sent, 1.9k cache write, 2.2k cache hit, 312 received.
 * Cost: $0.0123 message, $0.0175 session.` report into an object (NULL
 * when the text holds none). The counts are aider's rounded ones. */
static json_t *usage_of(const char *t)
{
    const char *p = strstr(t, "Tokens: ");
    if (!p)
        return NULL;
    p += 8;
    json_t *u = json_object();
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *stop = p + len;
    while (p < stop) {
        const char *num = p;
        while (p < stop && *p != ' ')
            p++;
        int64_t v = tokens_of(num, (size_t)(p - num));
        while (p < stop && *p == ' ')
            p++;
        const char *what = p;
        while (p < stop && *p != ',' && *p != '.')
            p++;
        size_t wn = (size_t)(p - what);
        const char *key = wn == 4 && memcmp(what, "sent", 4) == 0            ? "input"
                          : wn == 8 && memcmp(what, "received", 8) == 0      ? "output"
                          : wn == 11 && memcmp(what, "cache write", 11) == 0 ? "cache_creation"
                          : wn == 9 && memcmp(what, "cache hit", 9) == 0     ? "cache_read"
                                                                             : NULL;
        if (key && v >= 0)
            json_object_set_new(u, key, json_integer(v));
        if (p < stop && *p == '.')
            break;
        while (p < stop && (*p == ',' || *p == ' '))
            p++;
    }
    const char *c = strstr(t, "Cost: $");
    if (c) {
        char *e = NULL;
        double cost = strtod(c + 7, &e);
        if (e != c + 7 && cost >= 0 && cost < 1e9 && strncmp(e, " message", 8) == 0)
            json_object_set_new(u, "cost", json_real(cost));
    }
    if (json_object_size(u) == 0) {
        json_decref(u);
        return NULL;
    }
    return u;
}

/* The model a `Main model: X with ...` or `Model: X with ...` line names
 * (malloc'd), or NULL. */
static char *model_of(const char *line)
{
    const char *p = NULL;
    if (strncmp(line, "Main model: ", 12) == 0)
        p = line + 12;
    else if (strncmp(line, "Model: ", 7) == 0)
        p = line + 7;
    if (!p)
        return NULL;
    const char *e = strstr(p, " with ");
    size_t n = e ? (size_t)(e - p) : strcspn(p, "\n");
    if (n == 0 || n > 200)
        return NULL;
    char *m = strndup(p, n);
    return m;
}

/* Aider's words for a failure, in its output (colour is lost in the file). */
static int is_failure(const char *t)
{
    static const char *const marks[] = {"The LLM did not conform to the edit format",
                                        "SEARCH/REPLACE block failed to match",
                                        "SearchReplaceNoExactMatch",
                                        "litellm.",
                                        "Error:",
                                        "Unable to ",
                                        "Traceback (most recent call last)",
                                        NULL};
    for (size_t i = 0; marks[i]; i++)
        if (strstr(t, marks[i]))
            return 1;
    return 0;
}

typedef struct render {
    FILE *w;
    char *model;        /* the run's model so far (owned) */
    int kind;           /* 0 none, 'u' user, 'a' assistant, 't' aider's output */
    int64_t first_line; /* of the message being gathered */
    sync_text text;     /* its text */
    size_t nlines;      /* lines in it */
    size_t blank_run;   /* blank lines seen after its last text line (assistant) */
    int fence;          /* inside a code fence of the answer */
    int last_tokens;    /* the last line gathered was a Tokens report */
    char *pending;      /* the previous message, not yet written (owned) */
    int open_tail;      /* pending is the last message and nothing ended it */
} render;

/* Writes the message gathered so far as a line (held as `pending` until
 * the next one, so the last can be written without its newline). */
static int flush(render *r)
{
    int kind = r->kind;
    r->kind = 0;
    r->fence = 0;
    r->last_tokens = 0;
    r->blank_run = 0;
    r->nlines = 0;
    int oom = r->text.oom;
    char *text = sync_text_finish(&r->text);
    memset(&r->text, 0, sizeof r->text);
    if (!text)
        return kind && oom ? MCPAGE_ENOMEM : 0;
    /* trim the blank lines around it */
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == '\r'))
        text[--n] = 0;
    size_t s = 0;
    while (text[s] == '\n' || text[s] == '\r')
        s++;
    if (!text[s] || (kind == 'u' && strcmp(text + s, "<blank>") == 0)) {
        free(text); /* nothing said; `<blank>` is aider's mark of an empty input */
        return 0;
    }
    json_t *o = json_object();
    json_object_set_new(o, "line", json_integer(r->first_line));
    json_object_set_new(o, "role",
                        json_string(kind == 'u'   ? "user"
                                    : kind == 'a' ? "assistant"
                                                  : "aider"));
    json_object_set_new(o, "text", sync_json_text(text + s, strlen(text + s)));
    if (kind == 't') {
        /* a model named, usage reported, a failure */
        char *line = text + s;
        for (char *l = line; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            char *m = model_of(l);
            if (m) {
                free(r->model);
                r->model = m;
                json_object_set_new(o, "model_named", json_string(m));
            }
        }
        json_t *u = usage_of(line);
        if (u)
            json_object_set_new(o, "usage", u);
        if (is_failure(line))
            json_object_set_new(o, "error", json_true());
    }
    if (r->model && kind != 'u')
        json_object_set_new(o, "model", json_string(r->model));
    free(text);
    char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(o);
    if (!line)
        return MCPAGE_ENOMEM;
    if (r->pending)
        fprintf(r->w, "%s\n", r->pending);
    free(r->pending);
    r->pending = line;
    return 0;
}

static void gather(render *r, int kind, int64_t line_no, const char *p, size_t n)
{
    if (r->kind != kind) {
        r->kind = kind;
        r->first_line = line_no;
    }
    if (r->nlines >= AIDER_LINES_MAX)
        return;
    if (kind == 'a') {
        for (; r->blank_run > 0; r->blank_run--)
            sync_text_add(&r->text, "\n", 1);
    }
    if (r->nlines > 0)
        sync_text_add(&r->text, "\n", 1);
    sync_text_add(&r->text, p, n);
    r->nlines++;
}

/* The run's lines [p, p + n) as messages. Line numbers count from
 * `line0` (the run's first line in the file). */
static int render_lines(render *r, const char *p, size_t n, int64_t line0)
{
    int64_t line_no = line0;
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; line_no++) {
        const char *nl = memchr(p + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (p + at)) : n - at;
        const char *l = p + at;
        at += len + (nl ? 1 : 0);
        size_t t = trim_end(l, len);
        if (starts(l, len, AIDER_HEADER))
            continue; /* the run's own header: its facts line says it */
        if (r->kind == 'a' && r->fence) {
            /* inside the answer's code: only a user line aider wrote
               (ending in its two-space break, after a blank line) ends it */
            int user_break = is_user(l, len) && len >= 2 && l[len - 1] == ' ' &&
                             l[len - 2] == ' ' && r->blank_run > 0;
            if (!user_break) {
                if (t == 0) {
                    r->blank_run++;
                } else {
                    gather(r, 'a', line_no, l, len);
                    r->blank_run = 0;
                    if (is_fence(l, len))
                        r->fence = 0;
                }
                continue;
            }
        }
        if (is_user(l, len)) {
            if (r->kind != 'u' && (rc = flush(r)) < 0)
                break;
            size_t k = len > 4 && l[4] == ' ' ? 5 : 4;
            gather(r, 'u', line_no, l + k, t > k ? t - k : 0);
        } else if (is_tool(l, len) ||
                   (r->kind == 't' && r->last_tokens && starts(l, len, "Cost: $"))) {
            if (r->kind != 't' && (rc = flush(r)) < 0)
                break;
            size_t k = l[0] == '>' ? (len > 1 && l[1] == ' ' ? 2 : 1) : 0;
            gather(r, 't', line_no, l + k, t > k ? t - k : 0);
            r->last_tokens = starts(l + k, len - k, "Tokens: ");
        } else if (t == 0) {
            /* a blank line ends the user's input and aider's output */
            if (r->kind == 'u' || r->kind == 't') {
                if ((rc = flush(r)) < 0)
                    break;
            } else if (r->kind == 'a') {
                r->blank_run++;
            }
        } else {
            if (r->kind != 'a' && (rc = flush(r)) < 0)
                break;
            gather(r, 'a', line_no, l, len > 0 && l[len - 1] == '\r' ? len - 1 : len);
            r->blank_run = 0;
            if (is_fence(l, len))
                r->fence = 1;
        }
    }
    /* a message nothing followed may still grow; one a blank line or
       another kind of line ended is whole */
    int open = r->kind != 0;
    char *before = r->pending;
    if (rc == 0)
        rc = flush(r);
    r->open_tail = open && r->pending != before;
    return rc;
}

/* "YYYY-MM-DD HH:MM:SS" (local time) as ISO 8601 UTC, into out[32];
 * "" when it is not one. */
static void utc_of(const char *stamp, char out[32])
{
    out[0] = 0;
    struct tm tm = {0};
    const char *e = strptime(stamp, "%Y-%m-%d %H:%M:%S", &tm);
    if (!e || (*e && *e != '\r' && *e != ' '))
        return;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    struct tm u;
    if (t == (time_t)-1 || !gmtime_r(&t, &u))
        return;
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &u);
}

/* A run rendered: its facts (when it began), then its messages (the
 * file and its folder are the session's project, not written here, so
 * the rendering is the same wherever the file is); `complete` = 0 leaves
 * the bytes after the last newline out and the last message, when
 * nothing ended it yet (it may still grow), without its newline. */
static int render_run(const char *p, size_t n, int64_t line0, int complete, char **out,
                      size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!complete) {
        while (n > 0 && p[n - 1] != '\n')
            n--;
        size_t lead = 0;
        while (lead < n && p[lead] == '\n')
            lead++;
        if (lead == n) {
            /* its first line (the header) not written whole yet: nothing */
            *out = calloc(1, 1);
            return *out ? 0 : MCPAGE_ENOMEM;
        }
    }
    render r = {0};
    r.w = open_memstream(out, outlen);
    if (!r.w)
        return MCPAGE_ENOMEM;
    json_t *facts = json_object();
    json_object_set_new(facts, "aider", json_string("run"));
    size_t lead = 0; /* the blank line before the header */
    while (lead < n && p[lead] == '\n')
        lead++;
    if (starts(p + lead, n - lead, AIDER_HEADER)) {
        const char *s = p + lead + strlen(AIDER_HEADER);
        const char *nl = memchr(s, '\n', n - (size_t)(s - p));
        size_t sn = nl ? (size_t)(nl - s) : n - (size_t)(s - p);
        char stamp[64] = "", iso[32];
        snprintf(stamp, sizeof stamp, "%.*s", (int)(sn < 40 ? sn : 40), s);
        utc_of(stamp, iso);
        json_object_set_new(facts, "started", sync_json_text(stamp, strlen(stamp)));
        if (iso[0])
            json_object_set_new(facts, "time", json_string(iso));
    }
    char *fl = json_dumps(facts, JSON_COMPACT);
    json_decref(facts);
    int rc = fl ? 0 : MCPAGE_ENOMEM;
    if (fl)
        fprintf(r.w, "%s\n", fl);
    free(fl);
    if (rc == 0)
        rc = render_lines(&r, p, n, line0);
    if (rc == 0 && r.pending)
        fprintf(r.w, complete || !r.open_tail ? "%s\n" : "%s", r.pending);
    free(r.pending);
    free(r.model);
    free(sync_text_finish(&r.text));
    if (fclose(r.w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0) {
        free(*out);
        *out = NULL;
        *outlen = 0;
    }
    return rc;
}

/* ---- the format ------------------------------------------------------- */

static int aider_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen)
{
    *out = NULL;
    *len = 0;
    struct stat sb;
    int fd = sync_source_open(job->home ? job->home : "/", job->db, SYNC_FOLD_READ_MAX, &sb, why,
                              whylen);
    if (fd < 0)
        return fd == MCPAGE_ENOTFOUND ? MCPAGE_ESTATE : fd;
    int64_t from = job->from, to = job->to;
    if ((int64_t)sb.st_ino != job->inode || (int64_t)sb.st_size < to) {
        close(fd);
        snprintf(why, whylen, "changed while it was read; read again on the next sync");
        return MCPAGE_ESTATE;
    }
    size_t n = (size_t)(to - from);
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return MCPAGE_ENOMEM;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)from + (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (got < n) {
        free(buf);
        snprintf(why, whylen, "changed while it was read; read again on the next sync");
        return MCPAGE_ESTATE;
    }
    /* the file's last message may still grow until the file settles */
    int complete = !job->tail || job->settle || sync_settled(&sb);
    int rc = render_run(buf, n, job->line0, complete, out, len);
    free(buf);
    return rc;
}

static int aider_fold_line(sync_fold *f, const char *line, size_t len, int64_t off, int64_t line_no,
                           char *why, size_t whylen)
{
    json_error_t err;
    json_t *o = json_loadb(line, len, 0, &err);
    int rc = 0;
    if (!json_is_object(o)) {
        snprintf(why, whylen, "%s", o ? "not a rendered line" : err.text);
        rc = MCPAGE_EPARSE;
    } else if (json_object_get(o, "aider")) {
        sync_fold_set(&f->start_time, sync_json_str(o, "time"));
    } else {
        const char *m = sync_json_str(o, "model_named");
        if (m)
            sync_fold_set(&f->model, m);
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(o, "line")));
        rc = sync_fold_push(f, id, off, (int64_t)len, line_no, -1);
    }
    json_decref(o);
    return rc;
}

static int aider_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    (void)sub;
    *out = NULL;
    *n = 0;
    json_t *o = json_loadb(line, len, 0, NULL);
    const char *role = sync_json_str(o, "role");
    const char *text = sync_json_str(o, "text");
    if (!role || !text) {
        json_decref(o);
        return 0; /* the facts line */
    }
    sync_record *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(o);
        return MCPAGE_ENOMEM;
    }
    r->kind = SYNC_MESSAGE;
    int user = strcmp(role, "user") == 0;
    int tool = strcmp(role, "aider") == 0;
    r->role = user ? "user" : tool ? "tool" : "assistant";
    r->text = sync_dup(text);
    if (tool)
        r->tool_name = sync_dup("aider");
    r->is_error = json_is_true(json_object_get(o, "error"));
    const char *model = sync_json_str(o, "model");
    if (model && !user)
        r->model = sync_dup(model);
    /* a prompt, not a command (/add, /run...): a title candidate; the
       commands that carry a request are prompts too */
    r->is_prompt =
        user && (text[0] != '/' || strncmp(text, "/ask ", 5) == 0 ||
                 strncmp(text, "/code ", 6) == 0 || strncmp(text, "/architect ", 11) == 0);
    json_t *u = json_object_get(o, "usage");
    if (json_is_object(u)) {
        r->usage.present = 1;
        r->usage.input = sync_json_count(json_object_get(u, "input"));
        r->usage.output = sync_json_count(json_object_get(u, "output"));
        r->usage.cache_creation = sync_json_count(json_object_get(u, "cache_creation"));
        r->usage.cache_read = sync_json_count(json_object_get(u, "cache_read"));
        json_t *c = json_object_get(u, "cost");
        if (json_is_number(c)) {
            r->usage.cost_usd = json_number_value(c);
            r->usage.cost_given = 1;
        }
        /* no key: a report is stored once, with its message (as the
           engine's sources' usage is) */
        r->usage.model = model ? sync_dup(model) : NULL;
        r->usage.model_from_session = model == NULL;
    }
    json_decref(o);
    return sync__records_finish(r, 1, out, n);
}

void sync__aider_format(sync_fold_format *fmt, const char *source)
{
    memset(fmt, 0, sizeof *fmt);
    fmt->source = source;
    fmt->fold_line = aider_fold_line;
    fmt->expand = aider_expand;
    fmt->load = aider_load;
}

/* For tests and fuzzing: a history file's bytes as one run renders them. */
int sync__aider_render(const char *p, size_t n, int complete, char **out, size_t *outlen)
{
    return render_run(p, n, 1, complete, out, outlen);
}

/* ---- discovery --------------------------------------------------------- */

typedef struct finder {
    sync_fold_jobs *js;
    const sync_desc *d;
    const sync_fold_format *fmt;
    sync_report *rep;
    sync_idmap seen; /* files (resolved) and folders looked at */
    size_t files;
    int rc;
} finder;

static void hex16(const char *s, char out[17])
{
    uint8_t md[SHA256_LEN];
    sha256(s, strlen(s), md);
    hex_encode(md, 8, out);
}

static int blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)p[i]))
            return 0;
    return 1;
}

/* One job per run of the history file `path` in folder `dir`. */
static int add_runs(finder *fd, const char *dir, const char *path)
{
    struct stat sb;
    char why[SYNC_WARNING_LEN] = "";
    char *buf = NULL;
    size_t n = 0;
    /* inside its folder, a regular file, 256 MiB at most; its stat and
       bytes from the same open file */
    int file = sync_source_open(dir, path, SYNC_FOLD_READ_MAX, &sb, why, sizeof why);
    if (file == MCPAGE_ENOTFOUND)
        return 0;
    if (file < 0) {
        sync_warn(fd->rep, fd->d->name, path, 0, why);
        sync_source_report *sr = sync__source(fd->rep, fd->d->name);
        if (sr)
            sr->files_failed++;
        return 0;
    }
    int rc = 0;
    n = (size_t)sb.st_size;
    buf = malloc(n + 1);
    size_t got = 0;
    while (buf && got < n) {
        ssize_t k = pread(file, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(file);
    if (!buf)
        return MCPAGE_ENOMEM;
    n = got; /* shorter when it shrank meanwhile: the next sync sees it again */
    char real[SYNC_PATH_MAX];
    if (!realpath(path, real))
        snprintf(real, sizeof real, "%s", path);
    char h[17];
    hex16(real, h);
    /* runs: each header line, and any text before the first */
    int64_t line_no = 1, line0 = 1;
    size_t start = 0, runs = 0;
    sync_idmap stamps = {0};
    int dup = 0;
    for (size_t at = 0; rc == 0 && runs < AIDER_RUNS_MAX;) {
        const char *nl = memchr(buf + at, '\n', n - at);
        size_t next = nl ? (size_t)(nl - buf) + 1 : n;
        int header = starts(buf + at, n - at, AIDER_HEADER);
        int end = at >= n;
        size_t cut = at; /* where the run ends: the blank line aider writes
                            before a header is the next run's */
        if (header && at >= 1 && buf[at - 1] == '\n' && (at == 1 || buf[at - 2] == '\n'))
            cut = at - 1;
        if ((header || end) && cut > start && blank(buf + start, cut - start)) {
            start = cut; /* only blank lines before the first header */
            line0 = cut < at ? line_no - 1 : line_no;
        } else if ((header || end) && cut > start) {
            /* the run [start, cut) */
            char stamp[64] = "";
            size_t hs = start;
            while (hs < cut && buf[hs] == '\n')
                hs++;
            if (starts(buf + hs, cut - hs, AIDER_HEADER)) {
                const char *s = buf + hs + strlen(AIDER_HEADER);
                size_t k = 0;
                while (k < 19 && s + k < buf + cut &&
                       (isdigit((unsigned char)s[k]) || s[k] == '-' || s[k] == ':' || s[k] == ' '))
                    k++;
                for (size_t i = 0, j = 0; i < k && j + 1 < sizeof stamp; i++)
                    if (isdigit((unsigned char)s[i]))
                        stamp[j++] = s[i], stamp[j] = 0;
            }
            if (!stamp[0])
                snprintf(stamp, sizeof stamp, "%s", runs == 0 ? "head" : "run");
            /* a time seen before in the file (two runs in one second, a
               clock set back): the next number */
            long seen = sync_idmap_get(&stamps, stamp);
            dup = seen < 0 ? 0 : (int)seen + 1;
            if (sync_idmap_put(&stamps, stamp, dup) < 0)
                rc = MCPAGE_ENOMEM;
            char tag[80], sid[STORE_ID_MAX + 1], vpath[SYNC_PATH_MAX];
            if (dup)
                snprintf(tag, sizeof tag, "%s-%d", stamp, dup + 1);
            else
                snprintf(tag, sizeof tag, "%s", stamp);
            snprintf(sid, sizeof sid, "%s%s-%s", fd->d->id_prefix, h, tag);
            int k = snprintf(vpath, sizeof vpath, "%s#%s", path, tag);
            if (rc == 0 && k > 0 && (size_t)k < sizeof vpath) {
                sync_fold_job j = {.fmt = fd->fmt};
                j.path = sync_dup(vpath);
                j.db = sync_dup(path);
                j.home = sync_dup(dir);
                j.session_id = sync_dup(sid);
                j.cwd = sync_dup(dir);
                j.from = (int64_t)start;
                j.to = (int64_t)cut;
                j.line0 = line0;
                j.tail = cut == n;
                j.size = (int64_t)(cut - start);
                j.inode = (int64_t)sb.st_ino;
                /* the identity: the bytes' hash, its low bit set while the
                   run's last message may be held (the file not settled), so
                   the run is read again once it settles */
                j.mtime_ns = (int64_t)(fnv1a(buf + start, cut - start) & 0x3ffffffffffffffeULL);
                if (j.tail && !sync_settled(&sb))
                    j.mtime_ns |= 1;
                if (!j.path || !j.db || !j.home || !j.session_id || !j.cwd) {
                    sync__fold_job_free(&j);
                    rc = MCPAGE_ENOMEM;
                } else {
                    rc = sync__fold_jobs_add(fd->js, &j);
                }
            }
            runs++;
            start = cut;
            line0 = cut < at ? line_no - 1 : line_no;
        }
        if (end)
            break;
        at = next;
        line_no++;
    }
    sync_idmap_free(&stamps);
    free(buf);
    return rc;
}

/* The history file in `dir`, when there is one and it was not seen. */
static int look_in(finder *fd, const char *dir)
{
    if (fd->files >= AIDER_FILES_MAX)
        return 0;
    char *path = sync_join(dir, AIDER_FILE);
    if (!path)
        return MCPAGE_ENOMEM;
    struct stat sb;
    int rc = 0;
    if (lstat(path, &sb) == 0) {
        char real[SYNC_PATH_MAX];
        const char *key = realpath(path, real) ? real : path;
        int added = sync_idmap_add(&fd->seen, key);
        if (added < 0)
            rc = added;
        else if (added) {
            fd->files++;
            rc = add_runs(fd, dir, path);
        }
    }
    free(path);
    return rc;
}

/* `dir` and its folders `depth` levels down (hidden ones and links not
 * followed), at most AIDER_DIRS_MAX folders listed. */
static int walk(finder *fd, const char *dir, int depth, size_t *listed)
{
    int rc = look_in(fd, dir);
    if (rc < 0 || depth == 0 || *listed >= AIDER_DIRS_MAX)
        return rc;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    (*listed)++;
    struct dirent *e;
    char **subs = NULL;
    size_t nsub = 0, cap = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "node_modules") == 0)
            continue;
        char *p = sync_join(dir, e->d_name);
        if (!p) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        struct stat sb;
        int is_dir = e->d_type == DT_DIR ||
                     (e->d_type == DT_UNKNOWN && lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode));
        if (!is_dir || nsub >= AIDER_DIRS_MAX ||
            sync_grow((void **)&subs, &cap, nsub, sizeof *subs, 16) < 0) {
            free(p);
            continue;
        }
        subs[nsub++] = p;
    }
    closedir(d);
    for (size_t i = 0; i < nsub; i++) {
        if (rc == 0 && *listed < AIDER_DIRS_MAX)
            rc = walk(fd, subs[i], depth - 1, listed);
        free(subs[i]);
    }
    free(subs);
    return rc;
}

/* A project folder and its parents up to its repository's root (where
 * aider writes), not above the home folder when it is under it. */
static int look_up(finder *fd, const char *project)
{
    if (project[0] != '/')
        return 0;
    char dir[SYNC_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", project);
    const char *home = sync_home_dir();
    size_t hl = strlen(home);
    int under_home = hl > 1 && strncmp(dir, home, hl) == 0 && (dir[hl] == '/' || !dir[hl]);
    for (int up = 0; up <= AIDER_UP_MAX; up++) {
        size_t n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/')
            dir[--n] = 0;
        if (n <= 1)
            break;
        int rc = look_in(fd, dir);
        if (rc < 0)
            return rc;
        char git[SYNC_PATH_MAX + 8];
        struct stat sb;
        snprintf(git, sizeof git, "%s/.git", dir);
        if (lstat(git, &sb) == 0)
            break; /* the repository's root */
        if (under_home && strlen(dir) <= hl)
            break;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = 0;
    }
    return 0;
}

/* The folders `list` names (colon-separated; `~/` is the home folder). */
static int walk_list(finder *fd, const char *list)
{
    const char *p = list;
    int rc = 0;
    while (rc == 0 && p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char dir[SYNC_PATH_MAX];
        if (n > 0 && n < sizeof dir) {
            if (p[0] == '~' && (n == 1 || p[1] == '/'))
                snprintf(dir, sizeof dir, "%s%.*s", sync_home_dir(), (int)(n - 1), p + 1);
            else
                snprintf(dir, sizeof dir, "%.*s", (int)n, p);
            size_t listed = 0;
            char real[SYNC_PATH_MAX];
            if (realpath(dir, real)) /* a relative one from where mcpage runs */
                rc = walk(fd, real, 2, &listed);
        }
        p = colon ? colon + 1 : NULL;
    }
    return rc;
}

int sync__aider_discover(const sync_desc *d, const sync_fold_format *fmt, const char *home,
                         store *s, sync_fold_jobs *js, sync_report *rep)
{
    finder fd = {.js = js, .d = d, .fmt = fmt, .rep = rep};
    int rc = walk_list(&fd, home);
    /* aider's own variable naming the file */
    const char *own = getenv("AIDER_CHAT_HISTORY_FILE");
    if (rc == 0 && own && own[0] == '/') {
        char dir[SYNC_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", own);
        char *slash = strrchr(dir, '/');
        if (slash && strcmp(slash + 1, AIDER_FILE) == 0) {
            *slash = 0;
            rc = look_in(&fd, dir[0] ? dir : "/");
        }
    }
    /* every project folder the archive knows */
    for (int page = 0; rc == 0 && s && page < 100; page++) {
        store_project_filter flt = {.sort = STORE_PROJECTS_NAME};
        store_page pg = {.offset = (int64_t)page * STORE_LIMIT_MAX, .limit = STORE_LIMIT_MAX};
        store_projects l;
        if (store_projects_list(s, &flt, &pg, &l) < 0)
            break;
        for (size_t i = 0; rc == 0 && i < l.count; i++)
            if (l.rows[i].path)
                rc = look_up(&fd, l.rows[i].path);
        size_t got = l.count;
        store_projects_free(&l);
        if (got < STORE_LIMIT_MAX)
            break;
    }
    sync_idmap_free(&fd.seen);
    return rc;
}
