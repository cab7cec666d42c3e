/*
 * Transcript rendering: see transcript.h for the layout and why its line
 * numbers are computable from per-message text line counts.
 */
#include "tools/transcript.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page/dbuf.h"

/* Longest header line: the session id and project are cut to fit. */
#define HEADER_MAX 1024

/* Lines of message i's block: header, text lines, blank. */
static int64_t block_lines(const store_text_lines *tl, size_t i)
{
    return 2 + tl->lines[i];
}

int64_t transcript_line_after(int64_t before_count, int64_t before_lines)
{
    /* the head, then per message block: header, text lines, blank */
    return TRANSCRIPT_HEAD_LINES + 1 + 2 * before_count + before_lines;
}

int transcript_message_line(store *s, const char *session_id, int64_t ordinal, int64_t *line)
{
    store_text_lines tl;
    int rc = store_message_text_lines(s, session_id, ordinal, &tl);
    if (rc < 0)
        return rc;
    int64_t lines = 0;
    for (size_t i = 0; i < tl.count; i++)
        lines += tl.lines[i];
    *line = transcript_line_after((int64_t)tl.count, lines);
    store_text_lines_free(&tl);
    return 0;
}

int transcript_total_lines(store *s, const char *session_id, int64_t *total)
{
    store_text_lines tl;
    int rc = store_message_text_lines(s, session_id, INT64_MAX, &tl);
    if (rc < 0)
        return rc;
    int64_t n = TRANSCRIPT_HEAD_LINES;
    for (size_t i = 0; i < tl.count; i++)
        n += block_lines(&tl, i);
    store_text_lines_free(&tl);
    *total = n;
    return 0;
}

/* Copies s into out without newlines (they would add lines). */
static void one_line(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; s && *s && o + 1 < cap; s++)
        out[o++] = (*s == '\n' || *s == '\r') ? ' ' : *s;
    out[o] = '\0';
}

static int emit_doc_head(const store_session *ses, int64_t line, transcript_line_fn fn, void *ud)
{
    if (line == 2)
        return fn(ud, "", 0);
    char id[256], proj[256], buf[HEADER_MAX];
    one_line(id, sizeof id, ses->session_id);
    one_line(proj, sizeof proj, ses->project ? ses->project : "-");
    int n = snprintf(buf, sizeof buf, "# Session %s (%s, project %s)", id,
                     ses->source ? ses->source : "-", proj);
    if (n < 0)
        return MCPAGE_EINVAL;
    return fn(ud, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static int emit_msg_head(const store_message *m, transcript_line_fn fn, void *ud)
{
    char role[64], ts[64], tool[200], buf[HEADER_MAX];
    one_line(role, sizeof role, m->role);
    one_line(ts, sizeof ts, m->timestamp ? m->timestamp : "-");
    one_line(tool, sizeof tool, m->tool_name);
    int n = snprintf(buf, sizeof buf, "### [%lld] %s %s%s%s%s", (long long)m->ordinal, role, ts,
                     tool[0] ? " tool=" : "", tool, m->is_error ? " error" : "");
    if (n < 0)
        return MCPAGE_EINVAL;
    return fn(ud, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Emits the lines of message m's block from its local line `from` (0 = header). */
static int emit_block(const store_message *m, int64_t from, transcript_line_fn fn, void *ud)
{
    int64_t k = 0;
    int rc = 0;
    if (from <= k && (rc = emit_msg_head(m, fn, ud)) != 0)
        return rc;
    k++;
    const char *t = m->text ? m->text : "";
    if (*t) {
        for (;;) {
            const char *nl = strchr(t, '\n');
            size_t len = nl ? (size_t)(nl - t) : strlen(t);
            if (from <= k && (rc = fn(ud, t, len)) != 0)
                return rc;
            k++;
            if (!nl)
                break;
            t = nl + 1;
        }
    }
    if (from <= k && (rc = fn(ud, "", 0)) != 0)
        return rc;
    return 0;
}

int transcript_walk(store *s, const store_session *ses, int64_t start_line, transcript_line_fn fn,
                    void *ud, int64_t *total)
{
    return transcript_walk_ex(s, ses, start_line, NULL, fn, ud, total);
}

int transcript_walk_ex(store *s, const store_session *ses, int64_t start_line,
                       void (*on_total)(void *ud, int64_t total), transcript_line_fn fn, void *ud,
                       int64_t *total)
{
    store_text_lines tl;
    int rc = store_message_text_lines(s, ses->session_id, INT64_MAX, &tl);
    if (rc < 0)
        return rc;
    int64_t n = TRANSCRIPT_HEAD_LINES;
    /* Find the message holding start_line and where its block starts. */
    size_t first = tl.count;
    int64_t first_start = 0;
    for (size_t i = 0; i < tl.count; i++) {
        int64_t b = block_lines(&tl, i);
        if (first == tl.count && start_line <= n + b) {
            first = i;
            first_start = n + 1;
        }
        n += b;
    }
    *total = n;
    if (on_total)
        on_total(ud, n);
    if (start_line < 1)
        start_line = 1;
    for (int64_t l = start_line; l <= TRANSCRIPT_HEAD_LINES && rc == 0; l++)
        rc = emit_doc_head(ses, l, fn, ud);
    if (rc != 0 || first == tl.count) {
        store_text_lines_free(&tl);
        return rc < 0 ? rc : 0;
    }
    int64_t from_ord = tl.ordinal[first];
    int64_t local = start_line > first_start ? start_line - first_start : 0;
    store_text_lines_free(&tl);
    /* a page shows a few messages: the first reads are small (each text
     * read is decoded, issue 35), later ones grow to TRANSCRIPT_BATCH */
    int64_t batch = TRANSCRIPT_BATCH_FIRST;
    while (rc == 0) {
        store_messages ms;
        rc = store_messages_from(s, ses->session_id, from_ord, batch, &ms);
        if (rc < 0)
            return rc;
        for (size_t i = 0; i < ms.count && rc == 0; i++) {
            rc = emit_block(&ms.rows[i], local, fn, ud);
            local = 0;
        }
        size_t got = ms.count;
        if (got)
            from_ord = ms.rows[got - 1].ordinal + 1;
        store_messages_free(&ms);
        if ((int64_t)got < batch)
            break;
        batch = batch * 4 < TRANSCRIPT_BATCH ? batch * 4 : TRANSCRIPT_BATCH;
    }
    return rc < 0 ? rc : 0;
}

/* The document being rendered whole: its buffer, and where it was cut. */
typedef struct doc_state {
    dbuf d;        /* the text so far */
    int64_t lines; /* lines in it */
    bool cut;      /* the next line did not fit TRANSCRIPT_DOC_MAX */
} doc_state;

/* Appends one line of the document; stops (1) at the line that would pass the limit. */
static int doc_line(void *ud, const char *line, size_t len)
{
    doc_state *ds = ud;
    if (ds->d.len + len + 1 > TRANSCRIPT_DOC_MAX - TRANSCRIPT_DOC_NOTE) {
        ds->cut = true;
        return 1;
    }
    dbuf_put(&ds->d, line, len);
    dbuf_putc(&ds->d, '\n');
    ds->lines++;
    return ds->d.err;
}

int transcript_render(store *s, const store_session *ses, char **out, size_t *len)
{
    doc_state ds = {.lines = 0};
    dbuf_init(&ds.d, TRANSCRIPT_DOC_MAX - 1); /* and its NUL */
    int64_t total = 0;
    int rc = transcript_walk(s, ses, 1, doc_line, &ds, &total);
    if (rc < 0) {
        dbuf_free(&ds.d);
        return rc;
    }
    if (ds.cut) /* a session larger than one answer: where the rest is */
        dbuf_printf(&ds.d,
                    "[Cut after line %lld of %lld: this resource holds at most %zu bytes. Read "
                    "on with read_session(session_id=\"%.300s\") from line %lld, or read the "
                    "export mcpage://export/ID.md in pieces.]\n",
                    (long long)ds.lines, (long long)total, (size_t)TRANSCRIPT_DOC_MAX,
                    ses->session_id, (long long)ds.lines + 1);
    if (ds.d.err) {
        int err = ds.d.err;
        dbuf_free(&ds.d);
        return err;
    }
    *out = dbuf_take(&ds.d, len);
    return *out ? 0 : MCPAGE_ENOMEM;
}
