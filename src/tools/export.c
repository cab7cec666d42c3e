/*
 * Session exports (export.h): the three formats, and the temp-file-and-
 * rename write. Messages are read from the store in batches, so a session
 * of any length is exported in bounded memory; the JSON Lines form copies
 * the stored raw bytes in chunks.
 */
#include "tools/export.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "page/digest.h"
#include "tools/text_out.h"

/* Messages read per store call: a message holds up to 1 MiB, so a batch up to 32 MiB. */
#define EXPORT_BATCH 32
/* Raw bytes copied per store call. */
#define EXPORT_RAW_CHUNK ((int64_t)1 << 20)
/* Characters of a tool call's input shown in its folded summary. */
#define EXPORT_SUMMARY_MAX 120

int export_format_parse(const char *name, export_format *out)
{
    if (name == NULL)
        return MCPAGE_EINVAL;
    if (strcmp(name, "md") == 0 || strcmp(name, "markdown") == 0)
        *out = EXPORT_MD;
    else if (strcmp(name, "html") == 0)
        *out = EXPORT_HTML;
    else if (strcmp(name, "jsonl") == 0 || strcmp(name, "json-lines") == 0)
        *out = EXPORT_JSONL;
    else
        return MCPAGE_EINVAL;
    return 0;
}

const char *export_format_ext(export_format f)
{
    return f == EXPORT_HTML ? "html" : f == EXPORT_JSONL ? "jsonl" : "md";
}

const char *export_format_mime(export_format f)
{
    return f == EXPORT_HTML    ? "text/html"
           : f == EXPORT_JSONL ? "application/jsonl"
                               : "text/markdown";
}

void export_file_name(const char *session_id, export_format fmt, char *buf, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    char name[EXPORT_NAME_MAX];
    size_t o = 0;
    bool whole = true;
    for (const unsigned char *p = (const unsigned char *)session_id; *p; p++) {
        unsigned char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || (c == '.' && p != (const unsigned char *)session_id);
        if (o + 3 > EXPORT_NAME_ID_MAX) {
            whole = false;
            break;
        }
        if (keep) {
            name[o++] = (char)c;
        } else {
            name[o++] = '%';
            name[o++] = hex[c >> 4];
            name[o++] = hex[c & 15];
        }
    }
    if (!whole) { /* too long for one name: a prefix, then '~' and the id's hash */
        uint8_t d[SHA256_LEN];
        sha256(session_id, strlen(session_id), d);
        o = EXPORT_NAME_PREFIX;
        while (o > 0 && (name[o - 1] == '%' || (o > 1 && name[o - 2] == '%')))
            o--; /* not inside an escape */
        name[o++] = '~';
        for (size_t i = 0; i < 16; i++) {
            name[o++] = hex[d[i] >> 4];
            name[o++] = hex[d[i] & 15];
        }
    }
    (void)snprintf(buf, cap, "%.*s.%s", (int)o, name, export_format_ext(fmt));
}

/* ------------------------------------------------------------ what a message is */

typedef enum msg_kind {
    MSG_PROSE,       /* shown as written */
    MSG_TOOL_CALL,   /* prose (maybe none) then a folded tool call */
    MSG_TOOL_RESULT, /* folded */
    MSG_THINKING     /* folded */
} msg_kind;

/* The part of a message shown open (prose) and the part folded. */
typedef struct msg_parts {
    msg_kind kind;
    const char *prose; /* shown as is */
    size_t prose_len;
    const char *fold; /* shown folded */
    size_t fold_len;
} msg_parts;

/* Where "[tool_use " starts a line of t, or NULL. */
static const char *tool_use_line(const char *t)
{
    for (const char *p = t; (p = strstr(p, "[tool_use ")) != NULL; p++)
        if (p == t || p[-1] == '\n')
            return p;
    return NULL;
}

static msg_parts msg_split(const store_message *m)
{
    const char *t = m->text ? m->text : "";
    size_t n = strlen(t);
    msg_parts p = {MSG_PROSE, t, n, NULL, 0};
    const char *call;
    if (m->role && strcmp(m->role, "tool") == 0) {
        p = (msg_parts){MSG_TOOL_RESULT, NULL, 0, t, n};
    } else if (strncmp(t, "[thinking]", 10) == 0) {
        p = (msg_parts){MSG_THINKING, NULL, 0, t, n};
    } else if (m->tool_name && (call = tool_use_line(t)) != NULL) {
        size_t before = (size_t)(call - t);
        while (before > 0 && t[before - 1] == '\n')
            before--;
        p = (msg_parts){MSG_TOOL_CALL, t, before, call, n - (size_t)(call - t)};
    }
    while (p.fold_len > 0 && (p.fold[p.fold_len - 1] == '\n' || p.fold[p.fold_len - 1] == '\r'))
        p.fold_len--; /* the fence or </pre> ends the last line */
    return p;
}

static int64_t count_lines(const char *s, size_t n)
{
    int64_t k = n > 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

/* HTML text on one line: a line end would end the Markdown HTML block around it. */
static void html_one_line(text_out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k < n && s[k] != '\n' && s[k] != '\r')
            k++;
        text_out_html(o, s + i, k - i);
        if (k < n)
            text_out_puts(o, " ");
        i = k + 1;
    }
}

/* The folded part's one-line summary (HTML-escaped: it goes in <summary>). */
static void fold_summary(text_out *o, const store_message *m, const msg_parts *p)
{
    const char *name = m->tool_name ? m->tool_name : "?";
    if (p->kind == MSG_THINKING) {
        int64_t k = count_lines(p->fold, p->fold_len);
        text_out_printf(o, "Thinking (%lld line%s)", (long long)k, k == 1 ? "" : "s");
        return;
    }
    text_out_puts(o, p->kind == MSG_TOOL_CALL ? "Tool call: " : "Tool result: ");
    html_one_line(o, name, strlen(name));
    if (p->kind == MSG_TOOL_CALL && m->tool_input && m->tool_input[0]) {
        /* the input's summary, on one line, cut at a character boundary */
        const char *s = m->tool_input;
        size_t n = strcspn(s, "\n");
        if (n > EXPORT_SUMMARY_MAX) {
            n = EXPORT_SUMMARY_MAX;
            while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                n--;
        }
        text_out_puts(o, " \xE2\x80\x94 "); /* em dash */
        html_one_line(o, s, n);
        if (n < strlen(s))
            text_out_puts(o, "\xE2\x80\xA6");
    }
    if (p->kind == MSG_TOOL_RESULT) {
        int64_t k = count_lines(p->fold, p->fold_len);
        text_out_printf(o, " (%lld line%s%s)", (long long)k, k == 1 ? "" : "s",
                        m->is_error ? ", error" : "");
    }
}

/* ------------------------------------------------------------ Markdown */

/* A single-line Markdown value (title, project): escaped as text, newlines as spaces. */
static void md_value(text_out *o, const char *s)
{
    if (s == NULL || *s == '\0')
        text_out_puts(o, "-");
    else
        text_out_md_inline(o, s, strlen(s));
}

static void md_head(text_out *o, const store_session *ses)
{
    text_out_puts(o, "# ");
    md_value(o, ses->title ? ses->title : ses->session_id);
    text_out_puts(o, "\n\n- Session: ");
    md_value(o, ses->session_id);
    text_out_puts(o, "\n- Project: ");
    md_value(o, ses->project);
    text_out_puts(o, "\n- Agent: ");
    md_value(o, ses->source);
    text_out_puts(o, ", model ");
    md_value(o, ses->model);
    if (ses->git_branch && ses->git_branch[0]) {
        text_out_puts(o, ", branch ");
        md_value(o, ses->git_branch);
    }
    text_out_puts(o, "\n- Started: ");
    md_value(o, ses->started_at);
    text_out_puts(o, ", ended ");
    md_value(o, ses->ended_at);
    text_out_printf(o, "\n- Messages: %lld\n", (long long)ses->message_count);
    if (ses->parent_session_id) {
        text_out_puts(o, "- Sub-agent of: ");
        md_value(o, ses->parent_session_id);
        text_out_puts(o, "\n");
    }
}

/* A fenced block long enough to hold s. */
static void md_fence(text_out *o, const char *s, size_t n)
{
    size_t k = text_longest_backticks(s, n) + 1;
    if (k < 3)
        k = 3;
    for (size_t i = 0; i < k; i++)
        text_out_puts(o, "`");
    text_out_puts(o, "text\n");
    text_out_plain(o, s, n);
    text_out_puts(o, "\n");
    for (size_t i = 0; i < k; i++)
        text_out_puts(o, "`");
    text_out_puts(o, "\n");
}

static void md_message(text_out *o, const store_message *m)
{
    msg_parts p = msg_split(m);
    text_out_printf(o, "\n## [%lld] ", (long long)m->ordinal);
    md_value(o, m->role);
    text_out_puts(o, " \xC2\xB7 "); /* middle dot */
    md_value(o, m->timestamp);
    if (m->tool_name) {
        text_out_puts(o, " \xC2\xB7 tool ");
        md_value(o, m->tool_name);
    }
    if (m->is_error)
        text_out_puts(o, " \xC2\xB7 error");
    text_out_puts(o, "\n");
    if (p.prose_len > 0) {
        text_out_puts(o, "\n");
        text_out_markdown(o, p.prose, p.prose_len);
        text_out_puts(o, "\n");
    }
    if (p.kind != MSG_PROSE) {
        text_out_puts(o, "\n<details><summary>");
        fold_summary(o, m, &p);
        text_out_puts(o, "</summary>\n\n");
        md_fence(o, p.fold, p.fold_len);
        text_out_puts(o, "\n</details>\n");
    }
}

/* ------------------------------------------------------------ HTML */

static void html_value(text_out *o, const char *s)
{
    if (s == NULL || *s == '\0')
        text_out_puts(o, "-");
    else
        text_out_html(o, s, strlen(s));
}

/* A self-contained document up to its heading: our stylesheet, allowed by its hash only. */
static void html_open(text_out *o, const char *title)
{
    text_out_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src ");
    text_out_puts(o, text_css_csp_hash());
    text_out_puts(o, "\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<title>");
    html_value(o, title);
    text_out_puts(o, "</title>\n<style>");
    text_out_puts(o, text_css);
    text_out_puts(o, "</style></head>\n<body><main>\n<h1 dir=\"auto\">");
    html_value(o, title);
    text_out_puts(o, "</h1>\n");
}

static void html_head(text_out *o, const store_session *ses)
{
    html_open(o, ses->title ? ses->title : ses->session_id);
    text_out_puts(o, "<table class=\"meta\">\n<tr><th>Session</th><td><code>");
    html_value(o, ses->session_id);
    text_out_puts(o, "</code></td></tr>\n<tr><th>Project</th><td dir=\"auto\">");
    html_value(o, ses->project);
    text_out_puts(o, "</td></tr>\n<tr><th>Agent</th><td>");
    html_value(o, ses->source);
    text_out_puts(o, ", model ");
    html_value(o, ses->model);
    if (ses->git_branch && ses->git_branch[0]) {
        text_out_puts(o, ", branch ");
        html_value(o, ses->git_branch);
    }
    text_out_puts(o, "</td></tr>\n<tr><th>Time</th><td>");
    html_value(o, ses->started_at);
    text_out_puts(o, " \xE2\x80\x93 ");
    html_value(o, ses->ended_at);
    text_out_printf(o, "</td></tr>\n<tr><th>Messages</th><td>%lld</td></tr>\n</table>\n",
                    (long long)ses->message_count);
}

static void html_message(text_out *o, const store_message *m)
{
    msg_parts p = msg_split(m);
    text_out_puts(o, "<article class=\"msg ");
    html_value(o, m->role);
    text_out_printf(o, "\" id=\"m%lld\"><header>[%lld] ", (long long)m->ordinal,
                    (long long)m->ordinal);
    html_value(o, m->role);
    text_out_puts(o, " \xC2\xB7 <time>");
    html_value(o, m->timestamp);
    text_out_puts(o, "</time>");
    if (m->tool_name) {
        text_out_puts(o, " \xC2\xB7 tool ");
        html_value(o, m->tool_name);
    }
    if (m->is_error)
        text_out_puts(o, " \xC2\xB7 <span class=\"err\">error</span>");
    text_out_puts(o, "</header>\n");
    if (p.prose_len > 0) {
        text_out_puts(o, "<div class=\"text\" dir=\"auto\">");
        text_out_html(o, p.prose, p.prose_len);
        text_out_puts(o, "</div>\n");
    }
    if (p.kind != MSG_PROSE) {
        text_out_puts(o, "<details><summary>");
        fold_summary(o, m, &p);
        text_out_puts(o, "</summary><pre dir=\"auto\">");
        text_out_html(o, p.fold, p.fold_len);
        text_out_puts(o, "</pre></details>\n");
    }
    text_out_puts(o, "</article>\n");
}

/* ------------------------------------------------------------ writers */

static int write_messages(store *s, const store_session *ses, export_format fmt, text_out *o,
                          export_stats *st)
{
    int64_t from = 0;
    for (;;) {
        store_messages ms;
        int rc = store_messages_from(s, ses->session_id, from, EXPORT_BATCH, &ms);
        if (rc < 0)
            return rc;
        for (size_t i = 0; i < ms.count; i++) {
            if (fmt == EXPORT_HTML)
                html_message(o, &ms.rows[i]);
            else
                md_message(o, &ms.rows[i]);
            st->messages++;
        }
        size_t got = ms.count;
        if (got)
            from = ms.rows[got - 1].ordinal + 1;
        store_messages_free(&ms);
        if (o->err)
            return o->err;
        if (got < EXPORT_BATCH)
            return 0;
    }
}

static int write_raw(store *s, const store_session *ses, text_out *o)
{
    int64_t off = 0, total = 0;
    for (;;) {
        unsigned char *buf = NULL;
        size_t n = 0;
        int rc = store_raw_read(s, ses->session_id, off, EXPORT_RAW_CHUNK, &buf, &n, &total);
        if (rc < 0)
            return rc;
        text_out_write(o, (const char *)buf, n);
        free(buf);
        off += (int64_t)n;
        if (o->err)
            return o->err;
        if (n == 0 || off >= total)
            return 0;
    }
}

int export_session_write(store *s, const store_session *ses, export_format fmt, FILE *f,
                         export_stats *st)
{
    return export_session_stream(s, ses, fmt, f, false, st);
}

int export_session_stream(store *s, const store_session *ses, export_format fmt, FILE *f, bool term,
                          export_stats *st)
{
    text_out o;
    text_out_init(&o, f);
    o.term = term;
    export_stats local;
    if (st == NULL)
        st = &local;
    memset(st, 0, sizeof *st);
    int rc;
    if (fmt == EXPORT_JSONL) {
        rc = write_raw(s, ses, &o);
    } else {
        if (fmt == EXPORT_HTML)
            html_head(&o, ses);
        else
            md_head(&o, ses);
        rc = write_messages(s, ses, fmt, &o, st);
        if (rc == 0 && fmt == EXPORT_HTML)
            text_out_puts(&o, "</main></body></html>\n");
    }
    if (rc == 0 && fflush(f) != 0)
        rc = MCPAGE_EIO;
    st->bytes = o.bytes;
    st->lines = o.lines;
    return rc < 0 ? rc : o.err;
}

/* Puts the finished temporary file at `path`: over it, or only where nothing is. */
static int place_file(const char *tmp, const char *path, export_place place)
{
    if (place == EXPORT_REPLACE)
        return rename(tmp, path) == 0 ? 0 : MCPAGE_EIO;
    if (link(tmp, path) == 0) { /* exclusive: fails when path exists */
        (void)unlink(tmp);
        return 0;
    }
    if (errno == EEXIST)
        return MCPAGE_EEXIST;
    /* a file system without hard links: reserve the name exclusively, then rename over it */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? MCPAGE_EEXIST : MCPAGE_EIO;
    close(fd);
    return rename(tmp, path) == 0 ? 0 : MCPAGE_EIO;
}

int export_session_file(store *s, const char *session_id, export_format fmt, const char *path,
                        export_place place, export_stats *st, char *err, size_t errcap)
{
    store_session ses;
    int rc = store_session_get(s, session_id, &ses);
    if (rc < 0) {
        (void)snprintf(err, errcap, "%s",
                       rc == MCPAGE_ENOTFOUND ? "no session with this id" : store_errmsg(s));
        return rc;
    }
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.part-XXXXXX", path) >= (int)sizeof tmp) {
        store_session_clear(&ses);
        (void)snprintf(err, errcap, "the path is too long");
        return MCPAGE_ERANGE;
    }
    int fd = mkstemp(tmp); /* mode 0600, narrowed by the umask */
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (f == NULL) {
        int e = errno;
        (void)snprintf(err, errcap, "cannot create %s: %s", tmp,
                       e == ENOSPC ? "disk full" : strerror(e));
        if (fd >= 0)
            close(fd);
        store_session_clear(&ses);
        return MCPAGE_EIO;
    }
    rc = export_session_write(s, &ses, fmt, f, st);
    store_session_clear(&ses);
    int e = errno;
    if (rc == 0 && fsync(fd) != 0)
        rc = MCPAGE_EIO, e = errno;
    if (fclose(f) != 0 && rc == 0)
        rc = MCPAGE_EIO, e = errno;
    if (rc == 0) {
        rc = place_file(tmp, path, place);
        e = errno;
    }
    if (rc < 0) {
        (void)unlink(tmp);
        if (rc == MCPAGE_EEXIST)
            (void)snprintf(err, errcap, "%s exists already; it was left as it was", path);
        else if (rc == MCPAGE_EIO)
            (void)snprintf(err, errcap, "%s", e == ENOSPC ? "disk full" : strerror(e));
        else
            (void)snprintf(err, errcap, "%s", mcpage_strerror(rc));
    }
    return rc;
}

int export_session_output(store *s, const char *session_id, export_format fmt, const char *path,
                          export_stats *st, char *err, size_t errcap)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT) {
            (void)snprintf(err, errcap, "%s: %s", path, strerror(errno));
            return MCPAGE_EIO;
        }
        return export_session_file(s, session_id, fmt, path, EXPORT_NEW, st, err, errcap);
    }
    if (S_ISREG(sb.st_mode)) {
        char real[PATH_MAX]; /* through a symbolic link: the file it names is replaced */
        if (realpath(path, real) == NULL) {
            (void)snprintf(err, errcap, "%s: %s", path, strerror(errno));
            return MCPAGE_EIO;
        }
        return export_session_file(s, session_id, fmt, real, EXPORT_REPLACE, st, err, errcap);
    }
    if (!S_ISFIFO(sb.st_mode)) {
        (void)snprintf(err, errcap, "%s is %s, not a file: give a file's path, or -o - for stdout",
                       path,
                       S_ISDIR(sb.st_mode)    ? "a folder"
                       : S_ISSOCK(sb.st_mode) ? "a socket"
                                              : "a device");
        return MCPAGE_EINVAL;
    }
    /* a FIFO: streamed into, as to stdout (it is never replaced by a file) */
    store_session ses;
    int rc = store_session_get(s, session_id, &ses);
    if (rc < 0) {
        (void)snprintf(err, errcap, "%s",
                       rc == MCPAGE_ENOTFOUND ? "no session with this id" : store_errmsg(s));
        return rc;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC); /* waits for the reader */
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (f == NULL) {
        (void)snprintf(err, errcap, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        store_session_clear(&ses);
        return MCPAGE_EIO;
    }
    struct stat now;
    if (fstat(fd, &now) != 0 || !S_ISFIFO(now.st_mode)) { /* swapped since the stat */
        (void)snprintf(err, errcap, "%s changed while it was opened; nothing written", path);
        (void)fclose(f);
        store_session_clear(&ses);
        return MCPAGE_EIO;
    }
    rc = export_session_write(s, &ses, fmt, f, st);
    int e = errno;
    store_session_clear(&ses);
    if (fclose(f) != 0 && rc == 0)
        rc = MCPAGE_EIO, e = errno;
    if (rc < 0)
        (void)snprintf(err, errcap, "%s", rc == MCPAGE_EIO ? strerror(e) : mcpage_strerror(rc));
    return rc;
}

/* ------------------------------------------------------------ the index of a folder */

const char *export_index_name(export_format fmt)
{
    return fmt == EXPORT_HTML ? "index.html" : "index.md";
}

/* A Markdown table cell: one line, escaped as text (`|` included). */
static void md_cell(text_out *o, const char *s)
{
    md_value(o, s);
}

/* A link to a file of the folder: its name percent-encoded (a name may hold '%'). */
static void index_href(text_out *o, const char *file)
{
    char href[3 * EXPORT_NAME_MAX + 1];
    text_out_puts(o, "./");
    text_out_write(o, href, text_percent_encode(href, sizeof href, file, NULL));
}

static void md_index(text_out *o, const char *heading, const export_index_entry *e, size_t n)
{
    text_out_puts(o, "# ");
    md_value(o, heading);
    text_out_printf(o, "\n\n%zu sessions, newest first.\n\n", n);
    text_out_puts(o,
                  "| started | project | agent | messages | session |\n|---|---|---|---:|---|\n");
    for (size_t i = 0; i < n; i++) {
        const store_session *ses = e[i].ses;
        text_out_puts(o, "| ");
        md_cell(o, ses->started_at);
        text_out_puts(o, " | ");
        md_cell(o, ses->project);
        text_out_puts(o, " | ");
        md_cell(o, ses->source);
        text_out_printf(o, " | %lld | [", (long long)ses->message_count);
        md_cell(o, ses->title ? ses->title : ses->session_id);
        text_out_puts(o, "](");
        index_href(o, e[i].file);
        text_out_puts(o, ") |\n");
    }
}

static void html_index(text_out *o, const char *heading, const export_index_entry *e, size_t n)
{
    html_open(o, heading);
    text_out_printf(o, "<p class=\"meta\">%zu sessions, newest first.</p>\n", n);
    text_out_puts(o, "<table><tr><th>started</th><th>project</th><th>agent</th><th>messages</th>"
                     "<th>session</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        const store_session *ses = e[i].ses;
        text_out_puts(o, "<tr><td>");
        html_value(o, ses->started_at);
        text_out_puts(o, "</td><td dir=\"auto\">");
        html_value(o, ses->project);
        text_out_puts(o, "</td><td>");
        html_value(o, ses->source);
        text_out_printf(o, "</td><td>%lld</td><td dir=\"auto\"><a href=\"",
                        (long long)ses->message_count);
        index_href(o, e[i].file);
        text_out_puts(o, "\">");
        html_value(o, ses->title ? ses->title : ses->session_id);
        text_out_puts(o, "</a></td></tr>\n");
    }
    text_out_puts(o, "</table>\n</main></body></html>\n");
}

int export_index_write(FILE *f, export_format fmt, const char *heading, const export_index_entry *e,
                       size_t n)
{
    text_out o;
    text_out_init(&o, f);
    if (fmt == EXPORT_HTML)
        html_index(&o, heading, e, n);
    else
        md_index(&o, heading, e, n);
    if (o.err == 0 && fflush(f) != 0)
        return MCPAGE_EIO;
    return o.err;
}
