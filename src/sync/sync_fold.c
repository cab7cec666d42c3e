/*
 * The folded sources' sync (see sync_fold.h): discovery through each
 * format's function, the unchanged-file check, and per changed file the
 * fold, the comparison with what the stored prefix held, and one
 * transaction with the new messages, raw bytes, facts and offset.
 *
 * Invariant: a session read from a file holds the expansion of the fold
 * of the file's first `raw_size` bytes (its consumed offset), in order.
 * A file that only grew by records that add messages keeps that list as
 * a prefix and gets the rest appended; anything else (a rewind, a
 * message written again, a checkpoint, a truncated, replaced or
 * rewritten file) stores the session again from byte 0.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_cursor_ide.h"
#include "sync/sync_desc.h"
#include "sync/sync_fold.h"
#include "sync/sync_internal.h"
#include "sync/sync_source.h"
#include "sync/sync_vscode.h"
#include "sync/sync_vscode_chat.h"

#define FOLD_HEAD_MAX    4096    /* bytes hashed to detect a rewritten file (as sync.c) */
#define FOLD_FILES_MAX   1000000 /* folded files in one pass */
#define FOLD_SOURCES_MAX (10 * 1000 * 1000) /* source records of one machine (as sync.c) */
#define FOLD_RAW_CHUNK   (1 << 20)          /* raw bytes appended per call */

/* ---- the fold ---------------------------------------------------------- */

static uint64_t fnv1a(const char *p, size_t n);

int sync_fold_push(sync_fold *f, const char *id, int64_t off, int64_t len, int64_t line_no,
                   int32_t sub)
{
    if (sync_grow((void **)&f->v, &f->cap, f->n, sizeof *f->v, 64) < 0)
        return MCPAGE_ENOMEM;
    sync_fold_entry *e = &f->v[f->n];
    snprintf(e->id, sizeof e->id, "%s", id ? id : "");
    e->offset = off;
    e->length = len;
    e->line_no = line_no;
    e->sub = sub;
    e->prev = -1;
    if (e->id[0]) {
        e->prev = sync_idmap_get(&f->index, e->id);
        if (sync_idmap_put(&f->index, e->id, (long)f->n) < 0)
            return MCPAGE_ENOMEM;
    }
    f->n++;
    return 0;
}

long sync_fold_find(const sync_fold *f, const char *id)
{
    if (!id || !*id)
        return -1;
    char key[SYNC_FOLD_ID_MAX];
    snprintf(key, sizeof key, "%s", id); /* ids are kept cut to this */
    long at = sync_idmap_get(&f->index, key);
    assert(at < (long)f->n);
    return at;
}

int sync_fold_truncate(sync_fold *f, size_t n)
{
    if (n == 0) {
        sync_idmap_free(&f->index);
        f->n = 0;
        return 0;
    }
    for (; f->n > n; f->n--) {
        const sync_fold_entry *e = &f->v[f->n - 1];
        if (e->id[0] && sync_idmap_put(&f->index, e->id, e->prev) < 0)
            return MCPAGE_ENOMEM;
    }
    return 0;
}

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Names are kept as 64-bit hashes in an open-addressed table (0 = free):
 * a false "seen" needs two names with one hash. */
static uint64_t name_hash(const char *name)
{
    uint64_t h = fnv1a(name, strlen(name));
    return h ? h : 1;
}

static size_t seen_slot(const uint64_t *t, size_t cap, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (t[i] && t[i] != h)
        i = (i + 1) & (cap - 1);
    return i;
}

int sync_fold_seen_add(sync_fold *f, const char *name)
{
    if (!name || !*name)
        return 0;
    if ((f->nseen + 1) * 2 > f->capseen) {
        size_t cap = f->capseen ? f->capseen * 2 : 64;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t)
            return MCPAGE_ENOMEM;
        for (size_t i = 0; i < f->capseen; i++)
            if (f->seen[i])
                t[seen_slot(t, cap, f->seen[i])] = f->seen[i];
        free(f->seen);
        f->seen = t;
        f->capseen = cap;
    }
    uint64_t h = name_hash(name);
    size_t i = seen_slot(f->seen, f->capseen, h);
    if (!f->seen[i]) {
        f->seen[i] = h;
        f->nseen++;
    }
    return 0;
}

int sync_fold_seen_has(const sync_fold *f, const char *name)
{
    if (!name || !*name || !f->capseen)
        return 0;
    uint64_t h = name_hash(name);
    return f->seen[seen_slot(f->seen, f->capseen, h)] == h;
}

void sync_fold_set(char **slot, const char *val)
{
    if (!val || !*val)
        return;
    size_t n = strlen(val);
    char *d = malloc(n + 1);
    if (!d)
        return;
    memcpy(d, val, n + 1);
    free(*slot);
    *slot = d;
}

void sync_fold_free(sync_fold *f)
{
    free(f->v);
    free(f->session_id);
    free(f->cwd);
    free(f->title);
    free(f->model);
    free(f->branch);
    free(f->parent);
    free(f->start_time);
    free(f->seen);
    sync_idmap_free(&f->index);
    json_decref(f->doc_usage);
    memset(f, 0, sizeof *f);
}

void sync__records_free(sync_record *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sync_record_clear(&r[i]);
    free(r);
}

int sync__records_finish(sync_record *r, size_t k, sync_record **out, size_t *n)
{
    for (size_t i = 0; i < k; i++) {
        if (!r[i].text && r[i].kind == SYNC_MESSAGE) { /* a usage-only record has none */
            sync__records_free(r, k);
            return MCPAGE_ENOMEM;
        }
    }
    if (k == 0) {
        free(r);
        r = NULL;
    }
    *out = r;
    *n = k;
    return 0;
}

/* A format's steps: its own functions, or the engine's for a described one. */
static int fmt_fold_line(const sync_fold_format *fmt, sync_fold *f, const char *line, size_t len,
                         int64_t off, int64_t line_no, char *why, size_t whylen)
{
    if (fmt->desc)
        return sync__desc_fold_line(fmt->desc, f, line, len, off, line_no, why, whylen);
    return fmt->fold_line(f, line, len, off, line_no, why, whylen);
}

static int fmt_expand(const sync_fold_format *fmt, const char *line, size_t len, int32_t sub,
                      sync_record **out, size_t *n)
{
    if (fmt->desc)
        return sync__desc_expand(fmt->desc, line, len, sub, out, n);
    return fmt->expand(line, len, sub, out, n);
}

static int fmt_convert(const sync_fold_format *fmt, const char *doc, size_t len, char **out,
                       size_t *outlen, char *why, size_t whylen)
{
    if (fmt->desc)
        return sync__desc_convert(fmt->desc, doc, len, out, outlen, why, whylen);
    return fmt->convert(doc, len, out, outlen, why, whylen);
}

int sync__fold_parse_line(const sync_fold_format *fmt, sync_fold *f, const char *line, size_t len,
                          sync_record **out, size_t *n, char *why, size_t whylen)
{
    *out = NULL;
    *n = 0;
    /* this line folds at offset -1, every earlier one sits at 0 */
    int rc = fmt_fold_line(fmt, f, line, len, -1, 1, why, whylen);
    if (rc < 0)
        return rc;
    long at = -1;
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].offset == -1) {
            f->v[i].offset = 0;
            if (at < 0)
                at = (long)i;
        }
    }
    if (at < 0)
        return 0;
    rc = fmt_expand(fmt, line, len, f->v[at].sub, out, n);
    if (rc == MCPAGE_EPARSE)
        snprintf(why, whylen, "record not readable");
    return rc;
}

/* ---- jobs -------------------------------------------------------------- */

void sync__fold_job_free(sync_fold_job *j)
{
    free(j->path);
    free(j->home);
    free(j->db);
    free(j->title);
    free(j->session_id);
    free(j->row_id);
    free(j->fallback_id);
    free(j->parent);
    free(j->cwd);
}

int sync__fold_jobs_add(sync_fold_jobs *js, sync_fold_job *j)
{
    if (js->n >= FOLD_FILES_MAX) {
        sync__fold_job_free(j);
        return MCPAGE_ERANGE;
    }
    if (sync_grow((void **)&js->v, &js->cap, js->n, sizeof *js->v, 64) < 0) {
        sync__fold_job_free(j);
        return MCPAGE_ENOMEM;
    }
    js->v[js->n++] = *j;
    return 0;
}

void sync__fold_jobs_free(sync_fold_jobs *js)
{
    for (size_t i = 0; i < js->n; i++)
        sync__fold_job_free(&js->v[i]);
    free(js->v);
    memset(js, 0, sizeof *js);
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sync_fold_job *)a)->path, ((const sync_fold_job *)b)->path);
}

/* ---- one file ---------------------------------------------------------- */

/*
 * A stored message's place in its source: the id of the record it came
 * from and its index among the messages that record expands to. When a
 * session is stored again, a message at the same place keeps its id, so
 * a walk by message id that began before the resync goes on after it
 * without seeing the message twice (a rewound or updated Gemini message,
 * an OpenCode part updated in place).
 */
typedef struct fold_key {
    char id[SYNC_FOLD_ID_MAX];
    int64_t k;
    int64_t message_id; /* 0 once taken */
} fold_key;

typedef struct fold_keys {
    fold_key *v; /* sorted by (id, k) */
    size_t n;
} fold_keys;

/* A message stored after the others: it gets a new id, which must not
 * take one a kept message is about to get back. */
typedef struct fold_later {
    store_message m; /* its strings are r's */
    sync_record r;
} fold_later;

/* What one file's pass works on. */
typedef struct fold_file {
    const sync_fold_job *job;
    const sync_options *opt;
    sync_report *rep;
    store *s;
    const char *sid;   /* the session id used */
    struct stat sb;    /* the file's */
    char *buf;         /* content bytes [base, base + len) */
    int64_t base, len; /* where buf starts in the content, its length */
    int64_t end;       /* content offset after the last complete line */
    int64_t total;     /* content size */
    store_session_state st;
    int session_exists;
    sync_tool_ids ids;
    char *last_ts;      /* the newest timestamp seen: for records without one */
    char *first_prompt; /* title candidate */
    char *model;        /* the last model a record named */
    int64_t lines;      /* complete lines in the chunk stored */
    fold_keys keys;     /* the stored messages' places, when stored again */
    fold_later *later;  /* messages without a kept id, stored last */
    size_t nlater, caplater;
    sync_idmap calls;      /* call ids stored by this pass (a description's unique_calls) */
    sync_idmap held_calls; /* call id -> its message in `later` */
    const char *cwd;       /* the session's working directory for file edits, or NULL */
    /* a described document's calls keyed by message id (sync_fold.doc_usage) */
    const sync_fold *fold;           /* the fold being stored */
    char reply_to[SYNC_FOLD_ID_MAX]; /* the message whose call awaits its reply, or "" */
    sync_idmap replied;              /* message ids whose call is stored */
    /* the last checkpoint line parsed (fmt->parse), owned */
    const char *parsed_buf; /* the buffer it is in */
    int64_t parsed_off;     /* its offset */
    void *parsed;           /* the format's parse, or NULL */
    int warned;             /* refused, and named in a warning already */
    /* where the content's secrets were redacted (counted when their bytes are stored) */
    struct fold_hit {
        int64_t at;
        int kind;
    } * hits;
    size_t nhits, caphits;
} fold_file;

/* Records a redaction of the content (sync_redact's callback). */
static void fold_hit_add(void *arg, size_t at, int kind)
{
    fold_file *ff = arg;
    if (ff->nhits == ff->caphits) {
        size_t cap = ff->caphits ? ff->caphits * 2 : 16;
        struct fold_hit *h = realloc(ff->hits, cap * sizeof *h);
        if (!h)
            return; /* uncounted, still redacted */
        ff->hits = h;
        ff->caphits = cap;
    }
    ff->hits[ff->nhits++] = (struct fold_hit){(int64_t)at, kind};
}

/* Redacts the loaded content (sync_redact.h) before it is folded or stored. */
static void redact_content(fold_file *ff)
{
    ff->nhits = 0;
    if (!ff->opt->keep_secrets && ff->buf && ff->len > 0)
        sync_redact(ff->opt->redact_rules, ff->buf, (size_t)ff->len, NULL, fold_hit_add, ff);
}

/* Counts the redactions in content bytes [from, to), stored by this pass. */
static void count_hits(fold_file *ff, int64_t from, int64_t to)
{
    for (size_t i = 0; i < ff->nhits; i++)
        if (ff->hits[i].at + ff->base >= from && ff->hits[i].at + ff->base < to)
            ff->rep->redacted.n[ff->hits[i].kind]++;
}

static void parsed_drop(fold_file *ff)
{
    if (ff->parsed)
        ff->job->fmt->parsed_free(ff->parsed);
    ff->parsed = NULL;
    ff->parsed_buf = NULL;
}

/* Reads [from, to) of fd into a malloc'd buffer. */
static int read_range(int fd, int64_t from, int64_t to, char **out)
{
    *out = NULL;
    size_t n = (size_t)(to - from);
    char *b = malloc(n + 1);
    if (!b)
        return MCPAGE_ENOMEM;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, b + got, n - got, from + (int64_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            free(b);
            return MCPAGE_EIO;
        }
        got += (size_t)k;
    }
    b[n] = 0;
    *out = b;
    return 0;
}

/*
 * Folds the complete lines of buf between content offsets [from, to).
 * Malformed and over-long lines at or after `count_from` are counted in
 * the report (earlier ones were counted by the sync that first read
 * them). *lines gets the complete lines seen.
 */
static int fold_range(fold_file *ff, sync_fold *f, int64_t from, int64_t to, int64_t line_no0,
                      int64_t count_from, int64_t *lines)
{
    assert(from >= ff->base && to <= ff->base + ff->len);
    size_t line_max = ff->opt->line_max ? ff->opt->line_max : SYNC_LINE_MAX_DEFAULT;
    int64_t line_no = line_no0;
    int64_t at = from;
    *lines = 0;
    while (at < to) {
        const char *p = ff->buf + (at - ff->base);
        const char *nl = memchr(p, '\n', (size_t)(to - at));
        if (!nl)
            break;
        size_t len = (size_t)(nl - p);
        line_no++;
        (*lines)++;
        int counted = at >= count_from;
        size_t i = 0;
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
            i++;
        if (i == len) {
            at += (int64_t)len + 1;
            continue;
        }
        if (len > line_max) {
            if (counted) {
                ff->rep->lines_too_long++;
                char why[96];
                snprintf(why, sizeof why, "line longer than %zu bytes skipped", line_max);
                sync_example(ff->rep, ff->job->path, line_no, why);
            }
            at += (int64_t)len + 1;
            continue;
        }
        char *fixed = NULL;
        size_t fixed_len = 0;
        int rc = sync_utf8_repair(p, len, &fixed, &fixed_len);
        if (rc < 0)
            return rc;
        char why[200] = "";
        rc = fmt_fold_line(ff->job->fmt, f, fixed ? fixed : p, fixed ? fixed_len : len, at, line_no,
                           why, sizeof why);
        free(fixed);
        if (rc == MCPAGE_EPARSE) {
            if (counted) {
                ff->rep->lines_malformed++;
                sync_example(ff->rep, ff->job->path, line_no, why[0] ? why : "malformed line");
            }
        } else if (rc < 0) {
            return rc;
        }
        at += (int64_t)len + 1;
    }
    return 0;
}

/* The records the line of entry `e` expands to (MCPAGE_EPARSE: none). A
 * line that entries point into by index (a checkpoint) is parsed once. */
static int entry_records(fold_file *ff, const sync_fold_entry *e, sync_record **recs, size_t *n)
{
    /* every entry points at a complete line of the content read */
    assert(e->offset >= ff->base && e->length >= 0 && e->offset + e->length < ff->end);
    const sync_fold_format *fmt = ff->job->fmt;
    int cached = e->sub >= 0 && fmt->parse;
    if (cached && ff->parsed_buf == ff->buf && ff->parsed_off == e->offset) {
        if (!ff->parsed)
            return MCPAGE_EPARSE;
        return fmt->expand_parsed(ff->parsed, e->sub, recs, n);
    }
    const char *p = ff->buf + (e->offset - ff->base);
    char *fixed = NULL;
    size_t fixed_len = 0;
    int rc = sync_utf8_repair(p, (size_t)e->length, &fixed, &fixed_len);
    if (rc < 0)
        return rc;
    const char *line = fixed ? fixed : p;
    size_t len = fixed ? fixed_len : (size_t)e->length;
    if (cached) {
        parsed_drop(ff);
        ff->parsed = fmt->parse(line, len);
        ff->parsed_buf = ff->buf;
        ff->parsed_off = e->offset;
        free(fixed);
        return ff->parsed ? fmt->expand_parsed(ff->parsed, e->sub, recs, n) : MCPAGE_EPARSE;
    }
    rc = fmt_expand(fmt, line, len, e->sub, recs, n);
    free(fixed);
    return rc;
}

static int key_cmp(const void *a, const void *b)
{
    const fold_key *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->k > y->k) - (x->k < y->k);
}

/* The id the message at (id, k) had, taken (each is given back once); 0
 * when it had none. */
static int64_t key_take(fold_keys *keys, const char *id, int64_t k)
{
    if (!keys->n || !id[0])
        return 0;
    fold_key want = {.k = k};
    snprintf(want.id, sizeof want.id, "%s", id);
    fold_key *hit = bsearch(&want, keys->v, keys->n, sizeof want, key_cmp);
    if (!hit)
        return 0;
    while (hit > keys->v && key_cmp(hit - 1, &want) == 0)
        hit--;
    for (; hit < keys->v + keys->n && key_cmp(hit, &want) == 0; hit++) {
        if (hit->message_id > 0) {
            int64_t got = hit->message_id;
            hit->message_id = 0;
            return got;
        }
    }
    return 0;
}

/* Reads the session's stored raw bytes [0, size) (*out malloc'd). */
static int stored_raw(fold_file *ff, int64_t size, char **out)
{
    char *b = malloc((size_t)size + 1);
    if (!b)
        return MCPAGE_ENOMEM;
    for (int64_t at = 0; at < size;) {
        int64_t max = (int64_t)STORE_RAW_READ_MAX;
        unsigned char *raw = NULL;
        size_t n = 0;
        int64_t total = 0;
        int rc =
            store_raw_read(ff->s, ff->sid, at, size - at < max ? size - at : max, &raw, &n, &total);
        if (rc == 0 && n == 0)
            rc = MCPAGE_EIO; /* shorter than its recorded size */
        if (rc < 0) {
            free(b);
            return rc;
        }
        memcpy(b + at, raw, n);
        free(raw);
        at += (int64_t)n;
    }
    b[size] = 0;
    *out = b;
    return 0;
}

/*
 * The places of the session's stored messages (ff->keys): the stored raw
 * bytes folded and expanded as they were when stored (the session holds
 * that expansion, in order), matched by ordinal with the stored ids.
 * When the two do not line up (a store written by another version),
 * no message keeps its id; the session is still stored right.
 */
static int old_keys(fold_file *ff)
{
    fold_keys *keys = &ff->keys;
    int64_t size = ff->st.raw_size, count = ff->st.message_count;
    if (!ff->session_exists || size <= 0 || size > SYNC_FOLD_READ_MAX || count <= 0)
        return 0;
    char *raw = NULL;
    int rc = stored_raw(ff, size, &raw);
    if (rc < 0)
        return rc == MCPAGE_ENOMEM ? rc : 0;
    fold_file old = *ff;
    old.parsed = NULL; /* its own cache: ff's stays ff's */
    old.parsed_buf = NULL;
    old.buf = raw;
    old.base = 0;
    old.len = old.end = size;
    sync_fold f = {0};
    int64_t lines = 0;
    store_messages l = {0};
    keys->v = calloc((size_t)count, sizeof *keys->v);
    if (!keys->v) {
        rc = MCPAGE_ENOMEM;
        goto out;
    }
    if ((rc = fold_range(&old, &f, 0, size, 0, INT64_MAX, &lines)) < 0)
        goto out;
    int64_t at = 0;
    for (size_t i = 0; i < f.n && at <= count; i++) {
        sync_record *recs = NULL;
        size_t n = 0;
        rc = entry_records(&old, &f.v[i], &recs, &n);
        if (rc == MCPAGE_EPARSE)
            rc = 0;
        if (rc < 0)
            goto out;
        int64_t k = 0;
        for (size_t j = 0; j < n; j++) {
            if (recs[j].kind != SYNC_MESSAGE)
                continue;
            if (at < count) {
                snprintf(keys->v[at].id, sizeof keys->v[at].id, "%s", f.v[i].id);
                keys->v[at].k = k;
            }
            k++;
            at++;
        }
        sync__records_free(recs, n);
    }
    if (at != count)
        goto out;
    /* the stored ids, by ordinal */
    for (int64_t from = 0; from < count;) {
        if ((rc = store_messages_from(ff->s, ff->sid, from, STORE_LIMIT_MAX, &l)) < 0)
            goto out;
        if (l.count == 0)
            goto out;
        for (size_t j = 0; j < l.count; j++, from++) {
            if (l.rows[j].ordinal != from || from >= count)
                goto out;
            keys->v[from].message_id = l.rows[j].message_id;
        }
        store_messages_free(&l);
        memset(&l, 0, sizeof l);
    }
    keys->n = (size_t)count;
    qsort(keys->v, keys->n, sizeof keys->v[0], key_cmp);
out:
    parsed_drop(&old);
    store_messages_free(&l);
    sync_fold_free(&f);
    free(raw);
    if (keys->n == 0) {
        free(keys->v);
        keys->v = NULL;
    }
    return rc < 0 && rc != MCPAGE_ENOMEM ? 0 : rc;
}

/* Holds a message that gets a new id until the kept ones are stored;
 * takes r's strings. */
static int store_later(fold_file *ff, const store_message *m, sync_record *r)
{
    if (sync_grow((void **)&ff->later, &ff->caplater, ff->nlater, sizeof *ff->later, 32) < 0)
        return MCPAGE_ENOMEM;
    fold_later *x = &ff->later[ff->nlater];
    if (m->tool_name && m->tool_call_id && strcmp(m->role, "tool") != 0 &&
        sync_idmap_put(&ff->held_calls, m->tool_call_id, (long)ff->nlater) < 0)
        return MCPAGE_ENOMEM;
    ff->nlater++;
    x->r = *r;
    memset(r, 0, sizeof *r);
    x->m = *m;
    return 0;
}

static void later_free(fold_file *ff)
{
    for (size_t i = 0; i < ff->nlater; i++)
        sync_record_clear(&ff->later[i].r);
    free(ff->later);
    ff->later = NULL;
    ff->nlater = ff->caplater = 0;
    sync_idmap_free(&ff->held_calls);
}

/* Stores the held messages (their new ids after every kept one). */
static int store_held(fold_file *ff)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ff->nlater; i++) {
        int64_t id = 0;
        rc = store_message_add(ff->s, &ff->later[i].m, &id);
        if (rc == 0) /* the model call the message's record reports, if any */
            rc = sync_usage_put(ff->s, ff->sid, id, &ff->later[i].r, ff->last_ts, ff->model);
        if (rc == 0)
            rc = sync_edits_put(ff->s, ff->job->fmt->source, NULL, ff->sid, id, &ff->later[i].r,
                                ff->cwd, ff->last_ts);
    }
    later_free(ff);
    return rc;
}

/* The tool of a held call (not in the store yet), copied, or NULL. */
static char *held_call_name(const fold_file *ff, const char *call_id)
{
    long at = sync_idmap_get(&ff->held_calls, call_id);
    return at >= 0 ? sync_short_copy(ff->later[at].m.tool_name, 100) : NULL;
}

/* The model of a document's calls: the session's. */
static const char *reply_model(const fold_file *ff)
{
    return ff->fold->model ? ff->fold->model : ff->model;
}

/* The call the document names for message `id` (a described document's
 * usage_by, Zed's request_token_usage), stored with no message: the
 * message it answers is not there (a turn cut short). */
static int reply_alone(fold_file *ff, const char *id)
{
    const sync_desc *d = ff->job->fmt->desc;
    if (sync_idmap_get(&ff->replied, id) >= 0)
        return 0;
    sync_record r = {.kind = SYNC_SKIP, .role = "assistant"};
    int rc = sync__desc_reply_usage(d, ff->fold, id, reply_model(ff), &r.usage);
    if (rc == 1 && (rc = sync_idmap_add(&ff->replied, id)) == 1)
        rc = sync_usage_put(ff->s, ff->sid, 0, &r, ff->last_ts, NULL);
    sync_record_clear(&r);
    return rc < 0 ? rc : 0;
}

/* A record of the entry being stored, as a document's calls by message
 * id have it: the first assistant message after a message the document
 * keys gets that message's call (when its record names none). */
static int reply_take(fold_file *ff, sync_record *r)
{
    if (!ff->reply_to[0] || r->kind != SYNC_MESSAGE || strcmp(r->role, "assistant") != 0)
        return 0;
    int rc = 0;
    if (!r->usage.present) {
        rc = sync__desc_reply_usage(ff->job->fmt->desc, ff->fold, ff->reply_to, reply_model(ff),
                                    &r->usage);
        if (rc == 1)
            rc = sync_idmap_add(&ff->replied, ff->reply_to);
    }
    ff->reply_to[0] = 0;
    return rc < 0 ? rc : 0;
}

/* After an entry is stored: a message the document keys awaits its reply
 * (the one before it that got none is stored alone). */
static int reply_await(fold_file *ff, const sync_fold_entry *e)
{
    if (!e->id[0] || !json_object_get(ff->fold->doc_usage, e->id))
        return 0;
    int rc = ff->reply_to[0] ? reply_alone(ff, ff->reply_to) : 0;
    (void)snprintf(ff->reply_to, sizeof ff->reply_to, "%s", e->id);
    return rc;
}

/* The records of one entry, as stored: with the id each had when the
 * session is stored again (ff->keys), the others held for later. */
static int store_entry(fold_file *ff, const sync_fold_entry *e, int64_t *ordinal)
{
    sync_record *recs = NULL;
    size_t n = 0;
    int rc = entry_records(ff, e, &recs, &n);
    if (rc == MCPAGE_EPARSE) {
        /* folded but not expandable: counted once, never stops the file */
        ff->rep->lines_malformed++;
        sync_example(ff->rep, ff->job->path, e->line_no, "record not readable");
        return 0;
    }
    int64_t k = 0;
    const sync_desc *d = ff->job->fmt->desc;
    int replies = d && ff->fold->doc_usage;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sync_record *r = &recs[i];
        if (r->kind != SYNC_MESSAGE) {
            /* a record of usage only (OpenCode's assistant message row):
               a call with no message; a message's call is stored with it */
            if (r->usage.present &&
                (rc = sync_usage_put(ff->s, ff->sid, 0, r, ff->last_ts, ff->model)) < 0)
                break;
            continue;
        }
        if (d && d->unique_calls && r->call_id && r->tool_name && strcmp(r->role, "tool") != 0) {
            /* an agent that writes a call again in later records (iFlow's
               streamed snapshots): the first is the call */
            char *known = NULL;
            int had = sync_idmap_get(&ff->calls, r->call_id) >= 0;
            if (!had && store_tool_call_name(ff->s, ff->sid, r->call_id, &known) == 0)
                had = 1;
            free(known);
            if (had)
                continue;
            if (sync_idmap_add(&ff->calls, r->call_id) < 0) {
                rc = MCPAGE_ENOMEM;
                break;
            }
        }
        if (replies && (rc = reply_take(ff, r)) < 0)
            break;
        if (r->timestamp && (!ff->last_ts || strcmp(r->timestamp, ff->last_ts) > 0)) {
            free(ff->last_ts);
            ff->last_ts = sync_short_copy(r->timestamp, 64);
        } else if (!r->timestamp && ff->last_ts) {
            r->timestamp = sync_short_copy(ff->last_ts, 64);
        }
        if (r->model)
            sync_fold_set(&ff->model, r->model);
        if (r->is_prompt && !ff->first_prompt)
            ff->first_prompt = sync_title_of_prompt(r->text);
        if (r->tool_name && r->call_id && strcmp(r->role, "tool") != 0)
            sync_tool_ids_put(&ff->ids, r->call_id, r->tool_name);
        if (!r->tool_name && r->call_id && strcmp(r->role, "tool") == 0) {
            const char *known = sync_tool_ids_get(&ff->ids, r->call_id);
            if (known) {
                r->tool_name = sync_short_copy(known, 100);
            } else {
                rc = store_tool_call_name(ff->s, ff->sid, r->call_id, &r->tool_name);
                if (rc < 0 && rc != MCPAGE_ENOTFOUND)
                    break;
                if (rc == MCPAGE_ENOTFOUND)
                    r->tool_name = held_call_name(ff, r->call_id);
                rc = 0;
            }
        }
        store_message m = {
            .session_id = (char *)ff->sid,
            .ordinal = *ordinal,
            .role = (char *)r->role,
            .timestamp = r->timestamp,
            .text = r->text,
            .tool_name = r->tool_name,
            .tool_input = r->tool_input,
            .tool_call_id = r->call_id,
            .is_error = r->is_error,
            .line_no = e->line_no,
            .byte_offset = e->offset,
            .byte_length = e->length,
        };
        m.message_id = key_take(&ff->keys, e->id, k++);
        int64_t id = 0;
        if (ff->keys.n && m.message_id == 0)
            rc = store_later(ff, &m, r);
        else
            rc = store_message_add(ff->s, &m, &id);
        if (rc == 0 && !(ff->keys.n && m.message_id == 0))
            rc = sync_usage_put(ff->s, ff->sid, id, r, ff->last_ts, ff->model);
        if (rc == 0 && !(ff->keys.n && m.message_id == 0))
            rc = sync_edits_put(ff->s, ff->job->fmt->source, NULL, ff->sid, id, r, ff->cwd,
                                ff->last_ts);
        if (rc < 0)
            break;
        (*ordinal)++;
        ff->rep->messages_added++;
    }
    sync__records_free(recs, n);
    if (rc == 0 && replies)
        rc = reply_await(ff, e);
    return rc;
}

/* 1 when every entry of `old` is the same entry at the same place in `now`. */
static int is_prefix(const sync_fold *old, const sync_fold *now)
{
    if (old->n > now->n)
        return 0;
    for (size_t i = 0; i < old->n; i++) {
        const sync_fold_entry *a = &old->v[i], *b = &now->v[i];
        if (a->offset != b->offset || a->length != b->length || a->sub != b->sub ||
            strcmp(a->id, b->id) != 0)
            return 0;
    }
    return 1;
}

static int64_t count_lines(const char *p, int64_t n)
{
    int64_t k = 0;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(n - (q - p)))) != NULL; q++)
        k++;
    return k;
}

/*
 * One transaction: reset when asked, the entries [from, fold.n), the raw
 * bytes [raw_from, ff->end) and the facts. `raw_from` is the content
 * offset the stored raw bytes end at.
 */
static int store_chunk(fold_file *ff, const sync_fold *fold, size_t from, int reset,
                       int64_t raw_from, int at_eof)
{
    int rc = store_begin(ff->s);
    if (rc < 0)
        return rc;
    if (reset && (rc = store_session_reset(ff->s, ff->sid)) < 0)
        goto fail;
    store_session_meta head = {
        .session_id = ff->sid,
        .source = ff->job->fmt->source,
        .source_path = ff->job->path,
        .hostname = ff->opt->hostname,
        .owner = ff->opt->owner,
        .parent_session_id = ff->job->parent ? ff->job->parent : fold->parent,
    };
    char parent[STORE_ID_MAX + 1];
    head.parent_session_id = sync__parent_key(ff->s, ff->opt, head.parent_session_id, parent);
    if ((rc = store_session_put(ff->s, &head)) < 0)
        goto fail;
    if (!ff->session_exists) {
        ff->session_exists = 1;
        ff->rep->sessions_added++;
    }
    int64_t ordinal = reset ? 0 : ff->st.message_count;
    ff->cwd = ff->job->cwd && ff->job->cwd[0] == '/' ? ff->job->cwd
              : fold->cwd && fold->cwd[0] == '/'     ? fold->cwd
                                                     : NULL;
    ff->fold = fold;
    ff->reply_to[0] = 0;
    for (size_t i = from; i < fold->n; i++)
        if ((rc = store_entry(ff, &fold->v[i], &ordinal)) < 0)
            goto fail;
    if ((rc = store_held(ff)) < 0)
        goto fail;
    if (ff->job->fmt->desc && fold->doc_usage) {
        /* a call whose message got no reply; and, when the whole session
           is stored, those whose message is not there: each stored alone */
        if (ff->reply_to[0] && (rc = reply_alone(ff, ff->reply_to)) < 0)
            goto fail;
        const char *id;
        json_t *v;
        json_object_foreach(fold->doc_usage, id, v)
        {
            if (from == 0 && (rc = reply_alone(ff, id)) < 0)
                goto fail;
        }
    }
    sync_idmap_free(&ff->replied);
    count_hits(ff, raw_from, ff->end);
    for (int64_t at = raw_from; at < ff->end;) {
        int64_t n = ff->end - at < FOLD_RAW_CHUNK ? ff->end - at : FOLD_RAW_CHUNK;
        const char *p = ff->buf + (at - ff->base);
        rc = store_raw_append(ff->s, ff->sid, (const unsigned char *)p, (size_t)n,
                              count_lines(p, n));
        if (rc < 0)
            goto fail;
        at += n;
    }
    /* a model a facts record names (a model change) wins over the last
       one a message carried */
    store_session_meta m = {.session_id = ff->sid, .model = fold->model ? fold->model : ff->model};
    int64_t stored_head = reset ? 0 : ff->st.head_len;
    if (stored_head < FOLD_HEAD_MAX && ff->end > stored_head && ff->base == 0) {
        m.head_len = ff->end < FOLD_HEAD_MAX ? ff->end : FOLD_HEAD_MAX;
        m.head_hash = fnv1a(ff->buf, (size_t)m.head_len);
    }
    if (fold->title)
        m.title = fold->title;
    else if (ff->job->title)
        m.title = ff->job->title;
    else if (ff->first_prompt && (reset || !ff->st.has_title))
        m.title = ff->first_prompt;
    m.git_branch = fold->branch;
    /* a path from the file's place wins; a folder name only when the
       file names no path itself */
    const char *cwd = ff->job->cwd;
    if ((!cwd || cwd[0] != '/') && fold->cwd)
        cwd = fold->cwd;
    if (cwd && *cwd) {
        const char *name = strrchr(cwd, '/'), *bs = strrchr(cwd, '\\');
        if (bs && (!name || bs > name) && cwd[0] != '/')
            name = bs; /* a Windows path, C:\src\app */
        name = (name && name[1]) ? name + 1 : cwd;
        if ((rc = store_project_ensure(ff->s, cwd, name, &m.project_id)) < 0)
            goto fail;
    }
    if ((rc = store_session_put(ff->s, &m)) < 0)
        goto fail;
    if ((rc = store_session_refresh(ff->s, ff->sid)) < 0)
        goto fail;
    store_source src = {
        .hostname = (char *)ff->opt->hostname,
        .path = ff->job->path,
        .session_id = (char *)ff->sid,
        .size = at_eof ? (int64_t)ff->sb.st_size : ff->end,
        .inode = (int64_t)ff->sb.st_ino,
        .mtime_ns =
            at_eof ? (int64_t)ff->sb.st_mtim.tv_sec * 1000000000 + ff->sb.st_mtim.tv_nsec : 0,
        .consumed = ff->end,
    };
    if ((rc = store_source_put(ff->s, &src)) < 0)
        goto fail;
    return store_commit(ff->s);
fail:
    later_free(ff);
    sync_idmap_free(&ff->replied);
    store_rollback(ff->s);
    return rc;
}

/* The content of a whole-file format: the file, or its JSON Lines form. */
static int load_content(fold_file *ff, int fd)
{
    if (ff->job->fmt->load) {
        /* not a file: the rows the source renders as JSON Lines */
        char why[160] = "";
        size_t n = 0;
        int rc = ff->job->fmt->load(ff->job, &ff->buf, &n, why, sizeof why);
        if (rc == MCPAGE_ESTATE || rc == MCPAGE_EINVAL || rc == MCPAGE_ERANGE) {
            /* refused: busy, not the tables expected, past a budget */
            sync_warn(ff->rep, ff->job->fmt->source, ff->job->path, 0, why[0] ? why : "refused");
            ff->warned = 1;
        } else if (rc == MCPAGE_EPARSE) {
            ff->rep->lines_malformed++;
            sync_example(ff->rep, ff->job->path, 0, why[0] ? why : "not readable");
        } else if (rc == 0 && why[0]) {
            /* read, but a file of it was refused (the reason names it) */
            sync_warn(ff->rep, ff->job->fmt->source, ff->job->path, 0, why);
        }
        ff->len = (int64_t)n;
        ff->rep->bytes_read += ff->len;
        return rc;
    }
    if (ff->sb.st_size > SYNC_FOLD_READ_MAX)
        return MCPAGE_ERANGE;
    char *raw = NULL;
    int rc = read_range(fd, 0, (int64_t)ff->sb.st_size, &raw);
    if (rc < 0)
        return rc;
    ff->rep->bytes_read += (int64_t)ff->sb.st_size;
    if (!ff->job->convert) {
        ff->buf = raw;
        ff->len = (int64_t)ff->sb.st_size;
        return 0;
    }
    char why[160] = "";
    size_t n = 0;
    rc = fmt_convert(ff->job->fmt, raw, (size_t)ff->sb.st_size, &ff->buf, &n, why, sizeof why);
    free(raw);
    if (rc == MCPAGE_EPARSE) {
        ff->rep->lines_malformed++;
        sync_example(ff->rep, ff->job->path, 1, why[0] ? why : "not a session document");
    } else if (rc == 0 && why[0]) {
        /* read, but part of it was not (the reason names it) */
        sync_warn(ff->rep, ff->job->fmt->source, ff->job->path, 0, why);
    }
    ff->len = (int64_t)n;
    return rc;
}

/* The content, redacted. */
static int load_whole(fold_file *ff, int fd)
{
    int rc = load_content(ff, fd);
    if (rc == 0)
        redact_content(ff);
    return rc;
}

static int64_t last_newline_end(const char *buf, int64_t base, int64_t len)
{
    for (int64_t i = len; i > 0; i--)
        if (buf[i - 1] == '\n')
            return base + i;
    return base;
}

/* *same = 1 when the session's stored raw bytes are the content's first
 * `consumed` bytes (a rendering, unlike a file, may change anywhere). */
static int stored_prefix_equal(fold_file *ff, int64_t consumed, int *same)
{
    *same = 0;
    for (int64_t at = 0; at < consumed;) {
        int64_t max = (int64_t)STORE_RAW_READ_MAX;
        int64_t want = consumed - at < max ? consumed - at : max;
        unsigned char *raw = NULL;
        size_t n = 0;
        int64_t total = 0;
        int rc = store_raw_read(ff->s, ff->sid, at, want, &raw, &n, &total);
        if (rc < 0)
            return rc;
        int ok = (int64_t)n == want && memcmp(raw, ff->buf + at, n) == 0;
        free(raw);
        if (!ok)
            return 0;
        at += want;
    }
    *same = 1;
    return 0;
}

/* A whole-file format: fold all, compare with the stored prefix's fold. */
static int fold_whole(fold_file *ff, int fd, int *reparsed)
{
    int rc = load_whole(ff, fd);
    if (rc < 0)
        return rc;
    ff->base = 0;
    ff->total = ff->len;
    ff->end = last_newline_end(ff->buf, 0, ff->len);
    sync_fold now = {0}, old = {0};
    int64_t lines = 0;
    store_source src = {0};
    int locked = 0;
    /* the fold names the session: the first pass needs no store */
    if ((rc = fold_range(ff, &now, 0, ff->end, 0, INT64_MAX, &lines)) < 0)
        goto out;
    char *stem_id = NULL;
    if (!ff->job->session_id && !now.session_id && !ff->job->fallback_id) {
        const char *b = strrchr(ff->job->path, '/');
        b = b ? b + 1 : ff->job->path;
        stem_id = sync_short_copy(b, STORE_ID_MAX - 48);
        if (stem_id) {
            char *dot = strrchr(stem_id, '.');
            if (dot && dot != stem_id)
                *dot = 0;
        }
        const sync_desc *d = ff->job->fmt->desc;
        if (stem_id && d && d->id_prefix[0]) {
            /* a described source's ids carry its prefix */
            char id[STORE_ID_MAX + 1];
            snprintf(id, sizeof id, "%s%s", d->id_prefix, stem_id);
            free(stem_id);
            stem_id = sync_dup(id);
        }
    }
    ff->sid = ff->job->session_id    ? ff->job->session_id
              : now.session_id       ? now.session_id
              : ff->job->fallback_id ? ff->job->fallback_id
                                     : stem_id;
    if (!ff->sid || strlen(ff->sid) > STORE_ID_MAX) {
        free(stem_id);
        rc = MCPAGE_EPARSE;
        goto out;
    }
    if ((rc = store_session_lock(ff->s, ff->sid)) < 0)
        goto out_id;
    locked = 1;
    int found = store_source_get(ff->s, ff->opt->hostname, ff->job->path, &src) == 0;
    char key[STORE_ID_MAX + 1];
    if ((rc = sync__session_key(ff->s, ff->opt, found ? &src : NULL, ff->sid, key)) < 0)
        goto out_id;
    if (rc == 1) { /* another owner's session has the id: this owner's is its own */
        store_session_unlock(ff->s, ff->sid);
        locked = 0;
        ff->sid = key;
        if ((rc = store_session_lock(ff->s, ff->sid)) < 0)
            goto out_id;
        locked = 1;
    }
    rc = store_session_state_get(ff->s, ff->sid, &ff->st);
    if (rc < 0 && rc != MCPAGE_ENOTFOUND)
        goto out_id;
    ff->session_exists = rc == 0;
    rc = 0;
    int64_t consumed = ff->st.raw_size;
    int reset = 0;
    if (consumed > 0) {
        int64_t hl = ff->st.head_len;
        if ((found && src.inode != (int64_t)ff->sb.st_ino) || ff->end < consumed ||
            (hl > 0 && (hl > ff->end || fnv1a(ff->buf, (size_t)hl) != ff->st.head_hash)))
            reset = 1;
    }
    if (!reset && consumed > 0 && (ff->job->fmt->load || ff->job->fmt->rendered)) {
        int same = 0;
        if ((rc = stored_prefix_equal(ff, consumed, &same)) < 0)
            goto out_id;
        reset = !same;
    }
    if (!reset && consumed > 0) {
        int64_t ignored = 0;
        if ((rc = fold_range(ff, &old, 0, consumed, 0, INT64_MAX, &ignored)) < 0)
            goto out_id;
        reset = !is_prefix(&old, &now);
    }
    /* count what is new: malformed lines, lines read */
    sync_fold scratch = {0};
    int64_t new_lines = 0;
    rc = fold_range(ff, &scratch, reset ? 0 : consumed, ff->end, reset ? 0 : ff->st.raw_lines, 0,
                    &new_lines);
    sync_fold_free(&scratch);
    if (rc < 0)
        goto out_id;
    ff->rep->lines_read += new_lines;
    if (ff->end < ff->total) {
        ff->rep->lines_partial++;
        sync_held(ff->rep, ff->job->path, 0);
    }
    if (reset && consumed > 0) {
        *reparsed = 1;
        if ((rc = old_keys(ff)) < 0)
            goto out_id;
    }
    if (now.start_time && !ff->last_ts)
        ff->last_ts = sync_short_copy(now.start_time, 64); /* for messages without a time */
    int existed = ff->session_exists;
    int64_t messages_at = ff->rep->messages_added;
    rc = store_chunk(ff, &now, reset ? 0 : old.n, reset, reset ? 0 : consumed, 1);
    if (rc == 0 && ff->opt->changed && (!existed || ff->rep->messages_added > messages_at)) {
        ff->opt->changed(ff->opt->changed_ud, ff->sid, !existed);
        if (ff->opt->committed) /* store_chunk committed its own transaction */
            ff->opt->committed(ff->opt->changed_ud);
    }
out_id:
    if (locked)
        store_session_unlock(ff->s, ff->sid);
    ff->sid = NULL; /* it pointed into the fold or stem_id */
    free(stem_id);
out:
    store_source_clear(&src);
    sync_fold_free(&old);
    sync_fold_free(&now);
    return rc;
}

/* A job that is not a file: the change identity its source gave, as a stat. */
static void job_stat(const sync_fold_job *job, struct stat *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->st_size = (off_t)job->size;
    sb->st_ino = (ino_t)job->inode;
    sb->st_mtim.tv_sec = (time_t)(job->mtime_ns / 1000000000);
    sb->st_mtim.tv_nsec = (long)(job->mtime_ns % 1000000000);
}

static int fold_file_run(store *s, const sync_fold_job *job, const sync_options *opt,
                         sync_report *rep)
{
    fold_file ff = {.job = job, .opt = opt, .rep = rep, .s = s};
    const int64_t sessions_at = rep->sessions_added, messages_at = rep->messages_added;
    int reparsed = 0;
    int rc = 0;
    int fd = -1;
    if (job->fmt->load) {
        job_stat(job, &ff.sb);
        rc = fold_whole(&ff, -1, &reparsed);
    } else {
        /* a file: inside the agent's folder, regular, within the read limit */
        char why[SYNC_WARNING_LEN] = "";
        fd = sync_source_open(job->home ? job->home : "/", job->path, SYNC_FOLD_READ_MAX, &ff.sb,
                              why, sizeof why);
        if (fd >= 0) {
            rc = fold_whole(&ff, fd, &reparsed);
        } else {
            rc = fd;
            if (rc != MCPAGE_ENOTFOUND) /* one that vanished since: nothing to say */
                sync_warn(rep, job->fmt->source, job->path, 0, why);
            ff.warned = 1;
        }
    }
    if (fd >= 0)
        close(fd);
    if (rc == 0) {
        if (reparsed)
            rep->files_reparsed++;
        else
            rep->files_read++;
    } else if (rc != MCPAGE_EPARSE && !ff.warned) {
        rep->sessions_added = sessions_at; /* rolled back: the summary counts what was kept */
        rep->messages_added = messages_at;
        rep->files_failed++;
        char why[160];
        snprintf(why, sizeof why, "file not synced: %s%s", mcpage_strerror(rc),
                 rc == MCPAGE_ESTORE ? store_errmsg(s) : "");
        sync_example(rep, job->path, 0, why);
    }
    parsed_drop(&ff);
    later_free(&ff);
    free(ff.buf);
    free(ff.hits);
    sync_idmap_free(&ff.calls);
    free(ff.keys.v);
    free(ff.last_ts);
    free(ff.first_prompt);
    free(ff.model);
    return rc == MCPAGE_EPARSE || ff.warned ? 0 : rc;
}

/* ---- the pass ---------------------------------------------------------- */

/* 1 when home/sub is a directory that can be listed. */
static int is_dir(const char *home, const char *sub)
{
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/%s", home, sub);
    DIR *d = k > 0 && (size_t)k < sizeof path ? opendir(path) : NULL;
    if (d)
        closedir(d);
    return d != NULL;
}

/* Discovery of one source under its name in the report: the jobs it
 * adds, whether its folder exists, what went wrong. */
typedef int (*discover_fn)(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                           sync_report *rep);

static int desc_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                   sync_report *rep);
static int aider_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                    sync_report *rep);

static int discover_source(sync_fold_jobs *js, const char *name, const char *home, int found,
                           discover_fn fn, const void *arg, store *s, sync_report *rep)
{
    sync_mark m;
    sync__source_begin(rep, name, &m);
    size_t before = js->n;
    int rc = fn(js, arg, home, s, rep);
    sync_source_report *r = sync__source(rep, name);
    if (r) {
        r->found |= found || ((fn == desc_fn || fn == aider_fn) && js->n > before);
        for (size_t i = before; i < js->n; i++)
            r->files += !js->v[i].mark; /* a marker is no session */
    }
    sync__source_end(rep, &m);
    return rc;
}

static int gemini_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                     sync_report *rep)
{
    (void)arg;
    return sync__gemini_discover(js, home, s, rep);
}

static int copilot_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                      sync_report *rep)
{
    (void)arg;
    (void)s;
    return sync__copilot_discover(js, home, rep);
}

static int opencode_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                       sync_report *rep)
{
    (void)arg;
    (void)s;
    return sync__opencode_discover(js, home, rep);
}

static int cursor_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                     sync_report *rep)
{
    (void)arg;
    (void)s;
    return sync__cursor_discover(js, home, rep);
}

static int desc_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                   sync_report *rep)
{
    (void)s;
    return sync__desc_discover(arg, home, js, rep);
}

/* Aider: its history files in the folders its home lists and in the
 * archive's project folders. */
static int aider_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                    sync_report *rep)
{
    const sync_desc *d = arg;
    return sync__aider_discover(d, &d->wfmt[0], home, s, js, rep);
}

/* An agent writing OpenCode's format (Kilo CLI): OpenCode's discovery
 * under the agent's name and database file, its ids prefixed as every
 * described source's are, so they never meet OpenCode's own. */
static int opencode_as_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                          sync_report *rep)
{
    (void)s;
    const sync_desc *d = arg;
    sync_opencode_as as = {.source = d->name,
                           .db_file = d->db_file ? d->db_file : "opencode.db",
                           .fmt = {&d->wfmt[0], &d->wfmt[1], &d->wfmt[2]}};
    size_t from = js->n;
    int rc = sync__opencode_discover_as(js, home, rep, &as);
    char id[STORE_ID_MAX + 1];
    for (size_t i = from; rc == 0 && i < js->n; i++) {
        char **slot[2] = {&js->v[i].session_id, &js->v[i].parent};
        for (int k = 0; k < 2 && rc == 0; k++) {
            if (!*slot[k] || !d->id_prefix[0])
                continue;
            if (k == 0 && !(js->v[i].row_id = sync_dup(*slot[k]))) {
                rc = MCPAGE_ENOMEM;
                break;
            }
            snprintf(id, sizeof id, "%s%.150s", d->id_prefix, *slot[k]);
            char *dup = sync_dup(id);
            if (!dup) {
                rc = MCPAGE_ENOMEM;
                break;
            }
            free(*slot[k]);
            *slot[k] = dup;
        }
    }
    return rc;
}

static int vscode_chat_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                          sync_report *rep)
{
    (void)s;
    const sync_desc *d = arg;
    return sync__vscode_chat_discover(js, home, rep, d->name, d->id_prefix, d->wfmt);
}

/* An agent whose composers are in Cursor's editor databases. */
typedef struct cursor_ide_arg {
    const sync_desc *d;
    const char *hostname;
} cursor_ide_arg;

static int cursor_ide_fn(sync_fold_jobs *js, const void *arg, const char *home, store *s,
                         sync_report *rep)
{
    const cursor_ide_arg *a = arg;
    sync_cursor_ide_as as = {.source = a->d->name,
                             .id_prefix = a->d->id_prefix,
                             .fmt = &a->d->wfmt[0],
                             .panel_fmt = &a->d->wfmt[1]};
    return sync__cursor_ide_discover(js, home, s, a->hostname, rep, &as);
}

/* 1 when an OpenCode-format data folder holds something of the agent. */
static int opencode_found(const char *home, const char *db_file)
{
    struct stat sb;
    char db[SYNC_PATH_MAX];
    return is_dir(home, "storage/session") || is_dir(home, "project") ||
           (snprintf(db, sizeof db, "%s/%s", home, db_file) > 0 && stat(db, &sb) == 0);
}

/* Every folded source's files, in path order, each file once; `late`:
 * only the sources found through the archive's project folders (Aider),
 * run after the others so a project their sessions brought is looked in
 * the same pass. */
static int fold_discover_all(store *s, const sync_options *opt, sync_report *rep,
                             sync_fold_jobs *jsp, int late)
{
    sync_fold_jobs js = *jsp;
    int rc = 0;
    if (late) {
        for (size_t i = 0; i < opt->ndescribed; i++) {
            const sync_desc *d = opt->described[i].desc;
            const char *home = opt->described[i].home;
            if (!home || !d->writes || strcmp(d->writes, "aider") != 0)
                continue;
            size_t from = js.n;
            if ((rc = discover_source(&js, d->name, home, 0, aider_fn, d, s, rep)) < 0)
                break;
            for (size_t k = from; k < js.n && opt->settle; k++) {
                js.v[k].settle = 1;
                js.v[k].mtime_ns &= ~(int64_t)1; /* nothing held (sync_aider.c) */
            }
        }
        if (js.n > 1)
            qsort(js.v, js.n, sizeof js.v[0], job_cmp);
        *jsp = js;
        return rc;
    }
    rep->gemini_found = opt->gemini_home && is_dir(opt->gemini_home, "tmp");
    rep->copilot_found = opt->copilot_home && is_dir(opt->copilot_home, "session-state");
    rep->opencode_found = opt->opencode_home && opencode_found(opt->opencode_home, "opencode.db");
    rep->cursor_found = opt->cursor_home && is_dir(opt->cursor_home, "chats");
    if (opt->gemini_home && (rc = discover_source(&js, "gemini", opt->gemini_home,
                                                  rep->gemini_found, gemini_fn, NULL, s, rep)) < 0)
        goto out;
    if (opt->copilot_home &&
        (rc = discover_source(&js, "copilot", opt->copilot_home, rep->copilot_found, copilot_fn,
                              NULL, s, rep)) < 0)
        goto out;
    if (opt->opencode_home &&
        (rc = discover_source(&js, "opencode", opt->opencode_home, rep->opencode_found, opencode_fn,
                              NULL, s, rep)) < 0)
        goto out;
    if (opt->cursor_home && (rc = discover_source(&js, "cursor", opt->cursor_home,
                                                  rep->cursor_found, cursor_fn, NULL, s, rep)) < 0)
        goto out;
    for (size_t i = 0; i < opt->ndescribed; i++) {
        const sync_desc *d = opt->described[i].desc;
        const char *home = opt->described[i].home;
        if (!home || sync_desc_disabled(d))
            continue;
        if (d->writes && strcmp(d->writes, "opencode") == 0) {
            const char *dbf = d->db_file ? d->db_file : "opencode.db";
            if ((rc = discover_source(&js, d->name, home, opencode_found(home, dbf), opencode_as_fn,
                                      d, s, rep)) < 0)
                goto out;
            continue;
        }
        if (d->writes && strcmp(d->writes, "vscode-chat") == 0) {
            if ((rc = discover_source(&js, d->name, home, sync_vscode_found(home), vscode_chat_fn,
                                      d, s, rep)) < 0)
                goto out;
            continue;
        }
        if (d->writes && strcmp(d->writes, "cursor-ide") == 0) {
            cursor_ide_arg a = {.d = d, .hostname = opt->hostname};
            if ((rc = discover_source(&js, d->name, home, sync__cursor_ide_found(home),
                                      cursor_ide_fn, &a, s, rep)) < 0)
                goto out;
            continue;
        }
        if (d->writes)
            continue;
        if ((rc = discover_source(&js, d->name, home, sync__desc_found(d, home), desc_fn, d, s,
                                  rep)) < 0)
            goto out;
    }
out:
    if (js.n > 1)
        qsort(js.v, js.n, sizeof js.v[0], job_cmp);
    /* two globs of one description may find a file twice: it is one job */
    size_t kept = 0;
    for (size_t i = 0; i < js.n; i++) {
        if (kept > 0 && strcmp(js.v[kept - 1].path, js.v[i].path) == 0 &&
            js.v[kept - 1].fmt == js.v[i].fmt) {
            sync__fold_job_free(&js.v[i]);
            continue;
        }
        js.v[kept++] = js.v[i];
    }
    js.n = kept;
    /* a described source's database and its older files may hold the same
       session (Goose and Hermes import their files): the database's wins */
    sync_idmap ids = {0};
    char key[STORE_ID_MAX + 40];
    for (size_t i = 0; rc == 0 && i < js.n; i++) {
        if (!js.v[i].fmt->desc || !js.v[i].db || !js.v[i].session_id)
            continue;
        snprintf(key, sizeof key, "%p|%s", (const void *)js.v[i].fmt, js.v[i].session_id);
        if (sync_idmap_add(&ids, key) < 0)
            rc = MCPAGE_ENOMEM;
    }
    kept = 0;
    for (size_t i = 0; i < js.n; i++) {
        const char *fb = js.v[i].fallback_id;
        if (ids.n && fb && !js.v[i].db) {
            snprintf(key, sizeof key, "%p|%s", (const void *)js.v[i].fmt, fb);
            if (sync_idmap_get(&ids, key) >= 0) {
                sync__fold_job_free(&js.v[i]);
                continue;
            }
        }
        js.v[kept++] = js.v[i];
    }
    js.n = kept;
    sync_idmap_free(&ids);
    *jsp = js;
    return rc;
}

int sync__fold_scan(const sync_options *opt, sync_report *rep)
{
    int rc = 0;
    for (int late = 0; late < 2 && rc == 0; late++) {
        sync_fold_jobs js = {0};
        rc = fold_discover_all(NULL, opt, rep, &js, late);
        for (size_t i = 0; i < js.n; i++)
            rep->files_seen += !js.v[i].mark;
        sync__fold_jobs_free(&js);
    }
    return rc;
}

static int fold_pass(store *s, const sync_options *opt, sync_report *rep, int late)
{
    sync_fold_jobs js = {0};
    int rc = fold_discover_all(s, opt, rep, &js, late);
    if (rc < 0 || js.n == 0)
        goto out;
    for (size_t i = 0; i < js.n; i++)
        rep->files_seen += !js.v[i].mark;
    store_sources known;
    if ((rc = store_sources_all(s, opt->hostname, FOLD_SOURCES_MAX, &known)) < 0)
        goto out;
    size_t k = 0;
    int64_t done = 0;
    sync_idmap bad = {0}; /* databases a job of which failed or warned in this pass */
    for (size_t i = 0; i < js.n; i++) {
        struct stat sb;
        if (js.v[i].mark)
            continue; /* after every job of its database */
        if (js.v[i].fmt->load)
            job_stat(&js.v[i], &sb);
        else if (stat(js.v[i].path, &sb) < 0)
            continue;
        while (k < known.count && strcmp(known.rows[k].path, js.v[i].path) < 0)
            k++;
        const store_source *src = (k < known.count && strcmp(known.rows[k].path, js.v[i].path) == 0)
                                      ? &known.rows[k]
                                      : NULL;
        if (src && src->size == (int64_t)sb.st_size && src->inode == (int64_t)sb.st_ino &&
            src->mtime_ns == (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec) {
            rep->files_unchanged++;
            continue;
        }
        sync_mark m;
        sync__source_begin(rep, js.v[i].fmt->source, &m);
        int64_t failed_at = rep->files_failed, warned_at = rep->warnings;
        fold_file_run(s, &js.v[i], opt, rep);
        sync__source_end(rep, &m);
        if (js.v[i].db && (rep->files_failed > failed_at || rep->warnings > warned_at) &&
            (rc = sync_idmap_add(&bad, js.v[i].db)) < 0)
            break;
        rc = 0;
        done++;
        if (opt->progress) {
            sync_progress p = {done, (int64_t)js.n, 0, 0, js.v[i].path};
            opt->progress(opt->progress_ud, &p);
        }
    }
    for (size_t i = 0; rc == 0 && i < js.n; i++) {
        const sync_fold_job *j = &js.v[i];
        if (!j->mark || sync_idmap_get(&bad, j->db) >= 0)
            continue;
        store_source src = {.hostname = (char *)opt->hostname,
                            .path = j->path,
                            .session_id = "",
                            .size = j->size,
                            .inode = j->inode,
                            .mtime_ns = j->mtime_ns};
        if ((rc = store_begin(s)) < 0)
            break;
        if ((rc = store_source_put(s, &src)) < 0)
            store_rollback(s);
        else
            rc = store_commit(s);
    }
    sync_idmap_free(&bad);
    store_sources_free(&known);
out:
    sync__fold_jobs_free(&js);
    return rc;
}

int sync__fold_run(store *s, const sync_options *opt, sync_report *rep)
{
    int rc = fold_pass(s, opt, rep, 0);
    return rc < 0 ? rc : fold_pass(s, opt, rep, 1);
}
