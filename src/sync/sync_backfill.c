/*
 * The calls of sessions stored before the store kept them (a store of
 * schema 4 or older): read once from the raw bytes the store keeps, not
 * from the agents' files, at the start of the first sync after the
 * upgrade (usage_state.backfill). Line sources are parsed line by line
 * (Claude Code, Codex); folded ones whose lines each hold a message
 * (Gemini CLI, OpenCode, Copilot CLI's session.shutdown) through their
 * format's expand. Cursor records no usage. usage_state.backfill 1 reads
 * every session, 2 (a store made before Copilot CLI's calls were read) the
 * Copilot sessions alone. The file edits (sync_edits_backfill) are read the
 * same way, from those sources and the built-in descriptions, each with
 * the message stored from its line (Copilot CLI's edit calls are named by
 * the fold's state, not by their line alone: its older sessions get their
 * edits when read again, `mcpage sync --rebuild`). One transaction per
 * session; a session's calls (or edits) are cleared first, so a backfill
 * cut short is done again whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_desc.h"
#include "sync/sync_fold.h"
#include "sync/sync_internal.h"

#define BACKFILL_READ (4u << 20)  /* raw bytes read at a time */
#define BACKFILL_LINE (64u << 20) /* a longer line is skipped */

typedef struct backfill {
    store *s;
    const char *id;
    int kind; /* 0 claude, 1 codex, 2 folded */
    const sync_fold_format *fmt;
    const sync_desc *desc; /* a described source's (kind 2), or NULL */
    int edits;             /* the file edits' backfill, not usage's */
    const char *source;    /* the session's source name (edits) */
    int64_t at;            /* the raw offset of the line being read */
    sync_tool_ids ids;
    char *last_ts, *model;
} backfill;

static void keep(char **slot, const char *v)
{
    if (v && *v) {
        free(*slot);
        *slot = sync_short_copy(v, 150);
    }
}

/* A record's file edits, with the message stored from the same line. */
static int edits_put(backfill *b, const sync_record *r)
{
    if (!r->calls || r->kind != SYNC_MESSAGE)
        return 0;
    int64_t mid = 0;
    int rc = store_edit_message_at(b->s, b->id, b->at, r->call_id, &mid);
    if (rc < 0)
        return rc;
    const char *format = b->kind == 0 ? "claude" : b->kind == 1 ? "codex" : NULL;
    return sync_edits_put(b->s, b->source, format, b->id, mid, r, NULL, b->last_ts);
}

static int line(backfill *b, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
        i++;
    if (i == n || n > BACKFILL_LINE)
        return 0;
    char *fixed = NULL;
    size_t flen = 0;
    int rc = sync_utf8_repair(p, n, &fixed, &flen);
    if (rc < 0)
        return rc;
    const char *t = fixed ? fixed : p;
    size_t tn = fixed ? flen : n;
    char why[64];
    if (b->kind < 2) {
        sync_record r;
        rc = b->kind == 0 ? sync_claude_parse_line(t, tn, &b->ids, &r, why, sizeof why)
                          : sync_codex_parse_line(t, tn, &b->ids, &r, why, sizeof why);
        if (rc == 0) {
            rc = b->edits ? edits_put(b, &r)
                          : sync_usage_put(b->s, b->id, 0, &r, b->last_ts, b->model);
            keep(&b->last_ts, r.timestamp);
            keep(&b->model, r.model);
            sync_record_clear(&r);
        } else if (rc == MCPAGE_EPARSE) {
            rc = 0;
        }
    } else {
        sync_record *recs = NULL;
        size_t nr = 0;
        rc = b->desc ? sync__desc_expand(b->desc, t, tn, -1, &recs, &nr)
                     : b->fmt->expand(t, tn, -1, &recs, &nr);
        for (size_t k = 0; rc == 0 && k < nr; k++) {
            if (b->edits)
                rc = edits_put(b, &recs[k]);
            else if (recs[k].usage.present)
                rc = sync_usage_put(b->s, b->id, 0, &recs[k], b->last_ts, b->model);
            keep(&b->last_ts, recs[k].timestamp);
            keep(&b->model, recs[k].model);
        }
        sync__records_free(recs, nr);
        if (rc == MCPAGE_EPARSE)
            rc = 0;
    }
    free(fixed);
    return rc;
}

/* `pending` is usage_state.backfill (usage's backfill); `descs` the
   built-in descriptions (the edits' backfill), NULL for usage's. */
static int session(store *s, const char *id, const char *source, int pending,
                   const sync_descs *descs)
{
    backfill b = {.s = s, .id = id, .edits = descs != NULL, .source = source};
    if (!b.edits && pending == 2 && strcmp(source, "copilot") != 0)
        return 0;
    const sync_desc *d = descs ? sync_descs_find(descs, source) : NULL;
    if (d && d->writes)
        source = d->writes; /* another agent writing Claude's or Codex's lines */
    if (strcmp(source, "claude") == 0)
        b.kind = 0;
    else if (strcmp(source, "codex") == 0)
        b.kind = 1;
    else if (strcmp(source, "gemini") == 0)
        b.kind = 2, b.fmt = &sync__gemini_format;
    else if (strcmp(source, "opencode") == 0)
        b.kind = 2, b.fmt = &sync__opencode_format;
    else if (!b.edits && strcmp(source, "copilot") == 0)
        b.kind = 2, b.fmt = &sync__copilot_format;
    else if (b.edits && d && !d->writes)
        b.kind = 2, b.desc = d;
    else
        return 0;
    int rc = store_begin(s);
    if (rc < 0)
        return rc;
    if ((rc = b.edits ? store_edit_reset(s, id) : store_usage_reset(s, id)) < 0)
        goto fail;
    char *carry = NULL;
    size_t ncarry = 0;
    int64_t off = 0, total = 0, base = 0; /* base: the raw offset of carry[0] */
    for (;;) {
        unsigned char *buf = NULL;
        size_t n = 0;
        if ((rc = store_raw_read(s, id, off, BACKFILL_READ, &buf, &n, &total)) < 0)
            break;
        if (n == 0) {
            free(buf);
            b.at = base;
            if (ncarry)
                rc = line(&b, carry, ncarry);
            break;
        }
        off += (int64_t)n;
        char *all = realloc(carry, ncarry + n);
        if (!all) {
            free(buf);
            rc = MCPAGE_ENOMEM;
            break;
        }
        memcpy(all + ncarry, buf, n);
        free(buf);
        carry = all;
        ncarry += n;
        size_t start = 0;
        for (size_t i = 0; i < ncarry && rc == 0; i++) {
            if (carry[i] != '\n')
                continue;
            b.at = base + (int64_t)start;
            rc = line(&b, carry + start, i - start);
            start = i + 1;
        }
        if (rc < 0)
            break;
        memmove(carry, carry + start, ncarry - start);
        ncarry -= start;
        base += (int64_t)start;
        b.at = base;
        if (off >= total) {
            if (ncarry)
                rc = line(&b, carry, ncarry);
            break;
        }
    }
    free(carry);
    free(b.last_ts);
    free(b.model);
    if (rc < 0)
        goto fail;
    return store_commit(s);
fail:
    store_rollback(s);
    return rc;
}

int sync_usage_backfill(store *s)
{
    int pending = 0;
    int rc = store_usage_backfill_pending(s, &pending);
    if (rc < 0 || !pending)
        return rc;
    char **ids = NULL, **sources = NULL;
    size_t n = 0;
    if ((rc = store_usage_sessions(s, &ids, &sources, &n)) < 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if ((rc = store_session_lock(s, ids[i])) < 0)
            break;
        rc = session(s, ids[i], sources[i], pending, NULL);
        int u = store_session_unlock(s, ids[i]);
        if (rc == 0)
            rc = u;
    }
    store_usage_sessions_free(ids, sources, n);
    if (rc < 0)
        return rc;
    if ((rc = store_begin(s)) < 0)
        return rc;
    if ((rc = store_usage_backfill_done(s)) < 0) {
        store_rollback(s);
        return rc;
    }
    return store_commit(s);
}

int sync_edits_backfill(store *s)
{
    int pending = 0;
    int rc = store_edit_backfill_pending(s, &pending);
    if (rc < 0 || !pending)
        return rc;
    /* the built-in descriptions say which reader a described source's
       bytes need */
    sync_descs descs = {0};
    char err[256];
    rc = sync_descs_parse(&descs, sync__builtin_sources, strlen(sync__builtin_sources), "built-in",
                          err, sizeof err);
    if (rc < 0)
        return rc;
    char **ids = NULL, **sources = NULL;
    size_t n = 0;
    if ((rc = store_usage_sessions(s, &ids, &sources, &n)) < 0) {
        sync_descs_free(&descs);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if ((rc = store_session_lock(s, ids[i])) < 0)
            break;
        rc = session(s, ids[i], sources[i], 0, &descs);
        int u = store_session_unlock(s, ids[i]);
        if (rc == 0)
            rc = u;
    }
    store_usage_sessions_free(ids, sources, n);
    sync_descs_free(&descs);
    if (rc < 0)
        return rc;
    if ((rc = store_begin(s)) < 0)
        return rc;
    if ((rc = store_edit_backfill_done(s)) < 0) {
        store_rollback(s);
        return rc;
    }
    return store_commit(s);
}
