/*
 * A file's raw bytes, packed on a thread of their own (sync_raw.h says
 * what runs where).
 */
#define _GNU_SOURCE /* memrchr */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "sync/sync_internal.h"
#include "sync/sync_raw.h"

_Static_assert(SYNC_BLOCK <= STORE_RAW_CHUNK, "a piece of the file is one stored chunk");

typedef struct raw_piece {
    store_raw_packed p;
    unsigned char *own; /* p.bytes, owned */
} raw_piece;

typedef struct raw_job {
    struct raw_job *next;
    int fd;
    int64_t from, to, lines;
    char *session_id;
    const sync_redact_rules *rules;
    int keep_secrets;
    raw_piece *v; /* packed, in order (the packer appends under the lock) */
    size_t nv, cap;
    size_t stored;    /* pieces stored (the storing thread's) */
    int lines_stored; /* the line count went with the last piece */
    int done;         /* packed whole, or failed */
    int rc;
} raw_job;

struct sync_raw {
    pthread_t thread;
    int threaded;
    pthread_mutex_t mu;
    pthread_cond_t work;   /* a job was handed over, or quit */
    pthread_cond_t packed; /* a piece was packed, or a job is done */
    pthread_cond_t room;   /* a piece was stored (or the jobs dropped) */
    raw_job *head, *tail;  /* handed over, not yet stored */
    raw_job *next_pack;    /* the first job the packer has not finished */
    size_t jobs;           /* in the queue */
    size_t held;           /* pieces packed and not stored */
    int dropping;          /* the packer abandons its job */
    int quit;
    store_packer *packer;
    unsigned char *buf;  /* the packer's read buffer, SYNC_BLOCK */
    store *inline_store; /* no packer thread: pieces are stored as packed, here */
};

static int store_ready(sync_raw *r, store *s, int all);

static void job_free(raw_job *j)
{
    if (j->fd >= 0)
        close(j->fd);
    for (size_t i = j->stored; i < j->nv; i++)
        free(j->v[i].own);
    free(j->v);
    free(j->session_id);
    free(j);
}

/* Adds a packed piece to the job; with a packer thread, waits for room first. */
static int add_piece(sync_raw *r, raw_job *j, const store_raw_packed *p)
{
    unsigned char *own = malloc(p->n ? p->n : 1);
    if (!own)
        return MCPAGE_ENOMEM;
    memcpy(own, p->bytes, p->n);
    pthread_mutex_lock(&r->mu);
    while (r->threaded && r->held >= SYNC_RAW_HELD && !r->dropping)
        pthread_cond_wait(&r->room, &r->mu);
    if (j->nv == j->cap) {
        size_t ncap = j->cap ? j->cap * 2 : 4;
        raw_piece *nv = realloc(j->v, ncap * sizeof *nv);
        if (!nv) {
            pthread_mutex_unlock(&r->mu);
            free(own);
            return MCPAGE_ENOMEM;
        }
        j->v = nv;
        j->cap = ncap;
    }
    j->v[j->nv] = (raw_piece){.p = *p, .own = own};
    j->v[j->nv].p.bytes = own;
    j->nv++;
    r->held++;
    pthread_cond_signal(&r->packed);
    pthread_mutex_unlock(&r->mu);
    return r->inline_store ? store_ready(r, r->inline_store, 0) : 0;
}

/* Reads, redacts and packs the job's range a piece at a time: a piece
 * ends after its last newline, so a line is redacted whole (a line longer
 * than SYNC_BLOCK in SYNC_BLOCK pieces), as handle_line redacted it. */
static int pack_job(sync_raw *r, raw_job *j)
{
    for (int64_t at = j->from; at < j->to;) {
        if (__atomic_load_n(&r->dropping, __ATOMIC_RELAXED))
            return MCPAGE_EIO; /* the transaction is gone: nothing will store this */
        size_t want = (size_t)(j->to - at);
        if (want > SYNC_BLOCK)
            want = SYNC_BLOCK;
        ssize_t got = pread(j->fd, r->buf, want, at);
        if (got != (ssize_t)want)
            return MCPAGE_EIO;
        if (at + (int64_t)want < j->to) {
            unsigned char *nl = memrchr(r->buf, '\n', want);
            if (nl)
                want = (size_t)(nl - r->buf) + 1;
        }
        if (!j->keep_secrets)
            sync_redact(j->rules, (char *)r->buf, want, NULL, NULL, NULL);
        store_raw_packed p;
        int rc = store_raw_pack(r->packer, r->buf, want, &p);
        if (rc < 0 || (rc = add_piece(r, j, &p)) < 0)
            return rc;
        at += (int64_t)want;
    }
    return 0;
}

static void finish_job(sync_raw *r, raw_job *j, int rc)
{
    close(j->fd);
    pthread_mutex_lock(&r->mu);
    j->fd = -1;
    j->rc = rc;
    j->done = 1;
    r->next_pack = j->next;
    pthread_cond_broadcast(&r->packed);
    pthread_mutex_unlock(&r->mu);
}

static void *packer_main(void *arg)
{
    sync_raw *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->next_pack && !r->quit)
            pthread_cond_wait(&r->work, &r->mu);
        if (!r->next_pack)
            break;
        raw_job *j = r->next_pack;
        pthread_mutex_unlock(&r->mu);
        finish_job(r, j, pack_job(r, j));
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

sync_raw *sync_raw_new(void)
{
    sync_raw *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->packer = store_packer_new();
    r->buf = malloc(SYNC_BLOCK);
    if (!r->packer || !r->buf) {
        store_packer_free(r->packer);
        free(r->buf);
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->work, NULL);
    pthread_cond_init(&r->packed, NULL);
    pthread_cond_init(&r->room, NULL);
    r->threaded = store_second_thread() && pthread_create(&r->thread, NULL, packer_main, r) == 0;
    return r;
}

/*
 * Stores the queue's pieces in order, from the head: while `all`, until
 * the queue is empty (waiting for the packer); else what is packed now,
 * waiting only while more than SYNC_RAW_JOBS jobs are queued.
 */
static int store_ready(sync_raw *r, store *s, int all)
{
    int rc = 0;
    pthread_mutex_lock(&r->mu);
    while (r->head && rc == 0) {
        raw_job *j = r->head;
        if (j->stored < j->nv) {
            raw_piece piece = j->v[j->stored];
            int last = j->done && j->rc == 0 && j->stored + 1 == j->nv;
            pthread_mutex_unlock(&r->mu);
            rc = store_raw_append_packed(s, j->session_id, &piece.p, 1, last ? j->lines : 0);
            free(piece.own);
            pthread_mutex_lock(&r->mu);
            j->stored++;
            j->lines_stored = last;
            r->held--;
            pthread_cond_signal(&r->room);
        } else if (j->done) {
            if (j->rc < 0) {
                rc = j->rc;
                break;
            }
            if (!j->lines_stored) { /* the count after the pieces (or for none) */
                pthread_mutex_unlock(&r->mu);
                rc = store_raw_append_packed(s, j->session_id, NULL, 0, j->lines);
                pthread_mutex_lock(&r->mu);
            }
            r->head = j->next;
            if (!r->head)
                r->tail = NULL;
            r->jobs--;
            job_free(j);
        } else if (all || r->jobs > SYNC_RAW_JOBS) {
            pthread_cond_wait(&r->packed, &r->mu);
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int sync_raw_give(sync_raw *r, store *s, int fd, int64_t from, int64_t to, int64_t lines,
                  const char *session_id, const sync_redact_rules *rules, int keep_secrets)
{
    raw_job *j = calloc(1, sizeof *j);
    if (!j)
        return MCPAGE_ENOMEM;
    *j = (raw_job){.fd = -1,
                   .from = from,
                   .to = to,
                   .lines = lines,
                   .rules = rules,
                   .keep_secrets = keep_secrets};
    if (!(j->session_id = sync_dup(session_id)) || (j->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        int rc = j->session_id ? MCPAGE_EIO : MCPAGE_ENOMEM;
        job_free(j);
        return rc;
    }
    pthread_mutex_lock(&r->mu);
    if (r->tail)
        r->tail->next = j;
    else
        r->head = j;
    r->tail = j;
    r->jobs++;
    if (!r->next_pack)
        r->next_pack = j;
    pthread_cond_signal(&r->work);
    pthread_mutex_unlock(&r->mu);
    if (r->threaded)
        return store_ready(r, s, 0);
    /* no packer: the job now, each piece stored as it is packed */
    r->inline_store = s;
    int rc = pack_job(r, j);
    r->inline_store = NULL;
    finish_job(r, j, rc);
    return store_ready(r, s, 1);
}

int sync_raw_store(sync_raw *r, store *s)
{
    return r ? store_ready(r, s, 1) : 0;
}

void sync_raw_drop(sync_raw *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    __atomic_store_n(&r->dropping, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->room);
    while (r->next_pack && r->threaded) /* the packer leaves its job */
        pthread_cond_wait(&r->packed, &r->mu);
    while (r->head) {
        raw_job *j = r->head;
        r->head = j->next;
        r->held -= j->nv - j->stored;
        job_free(j);
    }
    r->tail = r->next_pack = NULL;
    r->jobs = 0;
    __atomic_store_n(&r->dropping, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&r->mu);
}

int sync_raw_pending(sync_raw *r, const char *id)
{
    if (!r)
        return 0;
    int found = 0;
    pthread_mutex_lock(&r->mu);
    for (raw_job *j = r->head; j && !found; j = j->next)
        found = strcmp(j->session_id, id) == 0;
    pthread_mutex_unlock(&r->mu);
    return found;
}

void sync_raw_free(sync_raw *r)
{
    if (!r)
        return;
    sync_raw_drop(r);
    if (r->threaded) {
        pthread_mutex_lock(&r->mu);
        r->quit = 1;
        pthread_cond_signal(&r->work);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
    }
    pthread_cond_destroy(&r->room);
    pthread_cond_destroy(&r->packed);
    pthread_cond_destroy(&r->work);
    pthread_mutex_destroy(&r->mu);
    store_packer_free(r->packer);
    free(r->buf);
    free(r);
}
