/*
 * Sessions ended with DELETE. A signed id stays valid on every instance
 * holding the key, so an ended id must be remembered to be refused: here
 * (tombstones, a ring of `max_sessions` ids, each kept until it would
 * expire anyway) and, when the embedder gives one, in a record shared by
 * every instance (cfg.ended). DELETE publishes the id's key, an id this
 * instance does not hold is checked before it is accepted, and a poller
 * ends the sessions held here that another instance ended. A record that
 * cannot be reached costs only that reach: the instance goes on with
 * what it knows, and says so once.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "page/alloc.h"
#include "page/invariant.h"
#include "transport/http_internal.h"

/* ------------------------------------------------------------ tombstones */

bool http_tombstoned(const mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN])
{
    for (size_t i = 0; i < h->ntombs; i++)
        if (h->tombs[i].until && memcmp(h->tombs[i].nonce, nonce, SESSION_ID_NONCE_LEN) == 0)
            return true;
    return false;
}

int64_t http_id_until(const mcpage_http *h, int64_t issued_at)
{
    return issued_at +
           (h->cfg.session_max_age_s ? (int64_t)h->cfg.session_max_age_s : INT64_MAX / 4);
}

void http_tombstone_add(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN], int64_t until)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    if (h->ntombs == 0 || http_tombstoned(h, nonce))
        return;
    http_tombstone *t = &h->tombs[h->tomb_next];
    h->tomb_next = (h->tomb_next + 1) % h->ntombs; /* a full ring forgets the oldest */
    memcpy(t->nonce, nonce, SESSION_ID_NONCE_LEN);
    t->until = until;
}

void http_tombstones_expire(mcpage_http *h, int64_t now)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    for (size_t i = 0; i < h->ntombs; i++)
        if (h->tombs[i].until && h->tombs[i].until < now)
            h->tombs[i].until = 0;
}

/* ------------------------------------------------------------ the shared record */

static void ended_health(mcpage_http *h, bool ok, const char *what)
{
    bool was_down = atomic_exchange(&h->ended_down, !ok);
    if (!ok && !was_down)
        (void)fprintf(stderr,
                      "mcpage: the shared record of ended sessions cannot be reached (%s); "
                      "sessions ended with DELETE stay accepted by other instances until it "
                      "answers again\n",
                      what);
    else if (ok && was_down)
        (void)fprintf(stderr, "mcpage: the shared record of ended sessions answers again\n");
}

bool http_ended_lookup(mcpage_http *h, const uint8_t nonce[SESSION_ID_NONCE_LEN])
{
    const mcpage_http_ended *e = &h->cfg.ended;
    if (e->lookup == NULL)
        return false;
    bool ended = false;
    int rc = e->lookup(e->ud, nonce, &ended);
    ended_health(h, rc == 0, "lookup");
    return rc == 0 && ended;
}

void http_ended_record(mcpage_http *h, const http_session *hs)
{
    const mcpage_http_ended *e = &h->cfg.ended;
    if (e->record == NULL)
        return;
    int rc = e->record(e->ud, hs->nonce, http_id_until(h, hs->issued_at));
    ended_health(h, rc == 0, "record");
    if (rc != 0)
        (void)fprintf(stderr, "mcpage: session %s ended here only\n", hs->label);
}

/* Ends reported by one poll. */
typedef struct ended_batch {
    struct ended_key {
        uint8_t nonce[SESSION_ID_NONCE_LEN];
        int64_t until;
    } * keys;
    size_t n, cap;
} ended_batch;

static void ended_collect(void *ctx, const uint8_t *key, int64_t until)
{
    ended_batch *b = ctx;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        void *k = mcpage__realloc(b->keys, cap * sizeof *b->keys);
        if (k == NULL)
            return; /* reported again by the next poll */
        b->keys = k;
        b->cap = cap;
    }
    memcpy(b->keys[b->n].nonce, key, SESSION_ID_NONCE_LEN);
    b->keys[b->n++].until = until;
}

/* Buries the reported ids; returns the live sessions among them, taken
 * out of the table (h->lock held). */
static http_session *ended_apply(mcpage_http *h, const ended_batch *b)
{
    MCPAGE_ASSERT_LOCKED(&h->lock);
    http_session *gone = NULL;
    for (size_t i = 0; i < b->n; i++) {
        if (http_tombstoned(h, b->keys[i].nonce))
            continue;
        http_tombstone_add(h, b->keys[i].nonce, b->keys[i].until);
        for (http_session **pp = &h->sessions; *pp; pp = &(*pp)->next) {
            http_session *hs = *pp;
            if (hs->id[0] && memcmp(hs->nonce, b->keys[i].nonce, SESSION_ID_NONCE_LEN) == 0) {
                *pp = hs->next;
                h->nsessions--;
                hs->next = gone;
                gone = hs;
                break;
            }
        }
    }
    return gone;
}

void http_ended_mark(mcpage_http *h)
{
    const mcpage_http_ended *e = &h->cfg.ended;
    ended_batch b = {0};
    /* With the position 0, `since` only sets it: nothing is reported. */
    int rc = e->since(e->ud, &h->ended_mark, ended_collect, &b);
    ended_health(h, rc == 0, "poll");
    mcpage__free(b.keys);
}

void *http_ended_poller(void *arg)
{
    mcpage_http *h = arg;
    const mcpage_http_ended *e = &h->cfg.ended;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    /* Set before the daemon started (http_ended_mark); still 0 when the
     * record could not be reached then, and the first poll sets it. */
    int64_t mark = h->ended_mark;
    long wait_ms = mark > 0 ? HTTP_TICK_MS : 0;
    ended_batch b = {0};
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        if (wait_ms > 0 && !http_wait_tick(h, wait_ms))
            break;
        pthread_mutex_unlock(&h->lock);
        b.n = 0;
        int rc = e->since(e->ud, &mark, ended_collect, &b);
        ended_health(h, rc == 0, "poll");
        /* Unreachable: back off, doubling up to HTTP_ENDED_BACKOFF_MS. */
        if (rc == 0 || wait_ms < HTTP_TICK_MS)
            wait_ms = HTTP_TICK_MS;
        else if ((wait_ms *= 2) > HTTP_ENDED_BACKOFF_MS)
            wait_ms = HTTP_ENDED_BACKOFF_MS;
        pthread_mutex_lock(&h->lock);
        http_session *gone = rc == 0 ? ended_apply(h, &b) : NULL;
        pthread_mutex_unlock(&h->lock);
        for (http_session *hs = gone, *n; hs; hs = n) {
            n = hs->next;
            if (h->cfg.verbose)
                (void)fprintf(stderr, "mcpage: session %s ended with DELETE on another instance\n",
                              hs->label);
            http_session_end(hs);
        }
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    mcpage__free(b.keys);
    return NULL;
}
