/*
 * A transcript file's lines, parsed in chunks on a second thread
 * (sync_lines.h says what runs where).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_lines.h"

int sync_parse_line(int source, const char *line, size_t len, sync_tool_ids *ids, sync_record *r,
                    char *why, size_t whylen)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len)
        return SYNC_BLANK;
    char *fixed = NULL;
    size_t fixed_len = 0;
    int rc = sync_utf8_repair(line, len, &fixed, &fixed_len);
    if (rc < 0)
        return rc;
    const char *text = fixed ? fixed : line;
    size_t tlen = fixed ? fixed_len : len;
    if (source == SRC_CLAUDE)
        rc = sync_claude_parse_line(text, tlen, ids, r, why, whylen);
    else
        rc = sync_codex_parse_line(text, tlen, ids, r, why, whylen);
    free(fixed);
    return rc;
}

void sync_parse_one(const sync_parse_ctx *ctx, char *line, size_t len, sync_parsed *p,
                    sync_redact_counts *redacted)
{
    if (!ctx->keep_secrets)
        sync_redact(ctx->rules, line, len, redacted, NULL, NULL); /* before anything is kept */
    p->why[0] = '\0';
    p->rc = sync_parse_line(ctx->source, line, len, ctx->ids, &p->r, p->why, sizeof p->why);
}

int sync_chunk_add(sync_chunk *c, const char *line, size_t len, int64_t start, int64_t end,
                   int kind)
{
    if (c->n == c->vcap) {
        size_t ncap = c->vcap ? c->vcap * 2 : 64;
        sync_parsed *nv = realloc(c->v, ncap * sizeof *nv);
        if (!nv)
            return MCPAGE_ENOMEM;
        c->v = nv;
        c->vcap = ncap;
    }
    if (c->len + len + 1 > c->cap) {
        size_t ncap = c->cap ? c->cap : SYNC_CHUNK_BYTES + 4096;
        while (ncap < c->len + len + 1)
            ncap *= 2;
        char *nb = realloc(c->buf, ncap);
        if (!nb)
            return MCPAGE_ENOMEM;
        c->buf = nb;
        c->cap = ncap;
    }
    sync_parsed *p = &c->v[c->n++];
    memset(&p->r, 0, sizeof p->r);
    p->why[0] = '\0';
    p->packed = 0;
    p->pack_buf = NULL;
    p->tokens = NULL;
    p->start = start;
    p->end = end;
    p->off = c->len;
    p->len = len;
    p->kind = kind;
    p->rc = SYNC_BLANK;
    if (len)
        memcpy(c->buf + c->len, line, len);
    c->buf[c->len + len] = '\0';
    c->len += len + 1;
    return 0;
}

int sync_chunk_full(const sync_chunk *c, size_t bytes)
{
    return c->len >= bytes || c->n >= SYNC_CHUNK_LINES;
}

static void clear_records(sync_parsed *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].rc == 0)
            sync_record_clear(&v[i].r);
        free(v[i].pack_buf);
        v[i].pack_buf = NULL;
        v[i].packed = 0;
        store_tokens_free(v[i].tokens);
        v[i].tokens = NULL;
    }
}

void sync_chunk_stored(sync_chunk *c)
{
    sync_parsed *v = c->v;
    size_t cap = c->vcap;
    c->v = c->spent;
    c->vcap = c->spentcap;
    c->spent = v;
    c->spentcap = cap;
    c->nspent = c->n;
    c->n = 0;
    c->len = 0;
    memset(&c->redacted, 0, sizeof c->redacted);
}

void sync_chunk_free(sync_chunk *c)
{
    clear_records(c->v, c->n);
    clear_records(c->spent, c->nspent);
    free(c->buf);
    free(c->v);
    free(c->spent);
    memset(c, 0, sizeof *c);
}

/* A message's text packed as the store keeps it, with its index tokens
 * when `tok`; left to the store when there is no memory for it. */
static void pack_text(store_packer *packer, store_tokenizer *tok, sync_parsed *p)
{
    const char *text = p->r.text ? p->r.text : "";
    size_t n = strlen(text);
    if (store_text_pack(packer, text, n, &p->pack) < 0)
        return;
    p->pack.tokens = NULL;
    if (tok && store_text_tokens(tok, text, n, &p->tokens) == 0)
        p->pack.tokens = p->tokens;
    if (p->pack.bytes != (const unsigned char *)text) {
        p->pack_buf = malloc(p->pack.n ? p->pack.n : 1);
        if (!p->pack_buf)
            return;
        memcpy(p->pack_buf, p->pack.bytes, p->pack.n);
        p->pack.bytes = p->pack_buf;
    }
    p->packed = 1;
}

/* packer: NULL, or the thread's own when ctx->pack; tok likewise (or NULL) */
static void parse_chunk(sync_chunk *c, const sync_parse_ctx *ctx, store_packer *packer,
                        store_tokenizer *tok)
{
    clear_records(c->spent, c->nspent);
    c->nspent = 0;
    for (size_t i = 0; i < c->n; i++) {
        sync_parsed *p = &c->v[i];
        if (p->kind != SYNC_LINE_TEXT)
            continue;
        sync_parse_one(ctx, c->buf + p->off, p->len, p, &c->redacted);
        if (p->rc == 0 && p->r.kind == SYNC_MESSAGE && ctx->pack && packer)
            pack_text(packer, tok, p);
    }
}

/* ---- the second thread ---- */

#define SYNC_AHEAD_SPIN_NS 100000L /* a wait spins this long before it sleeps */

struct sync_ahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t given, done; /* a chunk was handed over; it is parsed */
    sync_chunk *chunk;          /* the chunk handed over, until it is parsed */
    sync_parse_ctx ctx;
    int quit;
    store_packer *packer; /* the thread's own (NULL: texts left to the store) */
    store_tokenizer *tok; /* the thread's own, made from the first chunk's store (or NULL) */
    int tok_tried;
};

static void *ahead_main(void *arg)
{
    sync_ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->chunk && !a->quit)
            pthread_cond_wait(&a->given, &a->mu);
        if (!a->chunk)
            break;
        sync_chunk *c = a->chunk;
        sync_parse_ctx ctx = a->ctx;
        pthread_mutex_unlock(&a->mu);
        parse_chunk(c, &ctx, a->packer, a->tok);
        pthread_mutex_lock(&a->mu);
        __atomic_store_n(&a->chunk, NULL, __ATOMIC_RELEASE);
        pthread_cond_signal(&a->done);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static void ahead_free(sync_ahead *a)
{
    pthread_cond_destroy(&a->done);
    pthread_cond_destroy(&a->given);
    pthread_mutex_destroy(&a->mu);
    store_packer_free(a->packer);
    store_tokenizer_free(a->tok);
    free(a);
}

sync_ahead *sync_ahead_start(void)
{
    if (!store_second_thread())
        return NULL;
    sync_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->given, NULL);
    pthread_cond_init(&a->done, NULL);
    a->packer = store_packer_new();
    if (pthread_create(&a->thread, NULL, ahead_main, a) != 0) {
        ahead_free(a);
        return NULL;
    }
    return a;
}

void sync_ahead_submit(sync_ahead *a, sync_chunk *c, const sync_parse_ctx *ctx)
{
    if (!a) {
        parse_chunk(c, ctx, NULL, NULL);
        return;
    }
    if (!a->tok_tried && ctx->pack && ctx->s) { /* made here: it reads the store */
        a->tok = store_tokenizer_new(ctx->s);
        a->tok_tried = 1;
    }
    pthread_mutex_lock(&a->mu);
    a->ctx = *ctx;
    __atomic_store_n(&a->chunk, c, __ATOMIC_RELEASE);
    pthread_cond_signal(&a->given);
    pthread_mutex_unlock(&a->mu);
}

void sync_ahead_wait(sync_ahead *a)
{
    if (!a)
        return;
    /* a parse ahead that is nearly done is waited for awake: a thread
       woken by a signal can take a millisecond on a virtual machine */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; __atomic_load_n(&a->chunk, __ATOMIC_ACQUIRE); i++) {
        if ((i & 63) == 63) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >
                SYNC_AHEAD_SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&a->mu);
    while (a->chunk)
        pthread_cond_wait(&a->done, &a->mu);
    pthread_mutex_unlock(&a->mu);
}

void sync_ahead_stop(sync_ahead *a)
{
    if (!a)
        return;
    sync_ahead_wait(a);
    pthread_mutex_lock(&a->mu);
    a->quit = 1;
    pthread_cond_signal(&a->given);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    ahead_free(a);
}
