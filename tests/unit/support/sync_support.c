/* Helpers for the folded-source sync tests: see sync_support.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/store.h"
#include "support/store_backends.h"
#include "support/sync_support.h"

typedef struct dbuf {
    char *p;
    size_t n, cap;
} dbuf;

static void dput(dbuf *d, const char *s, size_t len)
{
    if (d->n + len + 1 > d->cap) {
        d->cap = (d->cap + len + 1) * 2;
        d->p = realloc(d->p, d->cap);
        assert_non_null(d->p);
    }
    memcpy(d->p + d->n, s, len);
    d->n += len;
    d->p[d->n] = 0;
}

static void dadd(dbuf *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dadd(dbuf *d, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        dput(d, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* The text on one line: newlines as \n, cut at max bytes. */
static void dtext(dbuf *d, const char *s, int max)
{
    for (int i = 0; s && s[i] && i < max; i++) {
        if (s[i] == '\n')
            dput(d, "\\n", 2);
        else
            dput(d, s + i, 1);
    }
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#define S(x) ((x) ? (x) : "-")

void ts_sync(const char *db, const char *gemini, const char *copilot, sync_report *rep)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_WRITE, &s), 0);
    sync_options o = {.gemini_home = gemini, .copilot_home = copilot, .hostname = "test"};
    assert_int_equal(sync_run(s, &o, rep), 0);
    store_close(s);
}

char *ts_dump(const char *db, int text_max)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    dbuf d = {0};
    store_page pg = {.limit = 1000};
    store_projects pl;
    store_project_filter pf = {.sort = STORE_PROJECTS_NAME};
    assert_int_equal(store_projects_list(s, &pf, &pg, &pl), 0);
    for (size_t i = 0; i < pl.count; i++)
        dadd(&d, "project %s %s %s sessions=%lld messages=%lld\n", pl.rows[i].name, pl.rows[i].path,
             pl.rows[i].sources, (long long)pl.rows[i].session_count,
             (long long)pl.rows[i].message_count);
    store_projects_free(&pl);
    store_sessions sl;
    store_session_filter sf = {.order = STORE_OLDEST};
    assert_int_equal(store_sessions_list(s, &sf, &pg, &sl), 0);
    for (size_t i = 0; i < sl.count; i++) {
        store_session *r = &sl.rows[i];
        dadd(&d,
             "session %s source=%s project=%s title=%s start=%s end=%s model=%s branch=%s "
             "parent=%s messages=%lld\n",
             r->session_id, r->source, S(r->project), S(r->title), S(r->started_at), S(r->ended_at),
             S(r->model), S(r->git_branch), S(r->parent_session_id), (long long)r->message_count);
        for (int64_t from = 0;;) {
            store_messages ms;
            assert_int_equal(store_messages_from(s, r->session_id, from, 500, &ms), 0);
            for (size_t j = 0; j < ms.count; j++) {
                store_message *m = &ms.rows[j];
                dadd(&d, "  %lld %s %s tool=%s input=%s call=%s err=%d line=%lld at=%lld+%lld | ",
                     (long long)m->ordinal, m->role, S(m->timestamp), S(m->tool_name),
                     S(m->tool_input), S(m->tool_call_id), m->is_error, (long long)m->line_no,
                     (long long)m->byte_offset, (long long)m->byte_length);
                dtext(&d, m->text, text_max);
                dput(&d, "\n", 1);
            }
            size_t got = ms.count;
            if (got)
                from = ms.rows[got - 1].ordinal + 1;
            store_messages_free(&ms);
            if (got < 500)
                break;
        }
        unsigned char *raw;
        size_t n;
        int64_t total;
        assert_int_equal(store_raw_read(s, r->session_id, 0, STORE_RAW_READ_MAX, &raw, &n, &total),
                         0);
        dadd(&d, "  raw %lld %016llx\n", (long long)total, (unsigned long long)fnv(raw, n));
        free(raw);
    }
    store_sessions_free(&sl);
    store_close(s);
    return d.p ? d.p : calloc(1, 1);
}

int64_t ts_message_id(const char *db, const char *sid, int64_t ordinal)
{
    store *s = NULL;
    assert_int_equal(store_open(db, STORE_OPEN_READONLY, &s), 0);
    store_messages ms;
    int64_t id = -1;
    if (store_messages_from(s, sid, ordinal, 1, &ms) == 0) {
        if (ms.count == 1 && ms.rows[0].ordinal == ordinal)
            id = ms.rows[0].message_id;
        store_messages_free(&ms);
    }
    store_close(s);
    return id;
}

int ts_fixture_dir(char *dir, size_t n, const char *tag)
{
    int k = snprintf(dir, n, "/tmp/mcpage-test-%s-XXXXXX", tag);
    return k > 0 && (size_t)k < n && mkdtemp(dir) ? 0 : -1;
}

int ts_fixture_drop(void **state)
{
    char *dir = *state; /* the fixture's first member */
    tb_cleanup();
    char cmd[400];
    int k = snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    int rc = k > 0 && (size_t)k < sizeof cmd && system(cmd) == 0 ? 0 : -1;
    free(*state);
    return rc;
}

void ts_put(const char *path, const char *mode, const char *text)
{
    FILE *fp = fopen(path, mode);
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
    assert_int_equal(fclose(fp), 0);
}

void ts_copy_tree(const char *src, const char *dst)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", src, dst);
    assert_int_equal(system(cmd), 0);
}

char *ts_read_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = 0;
    fclose(fp);
    return b;
}
