/*
 * Connections of the PostgreSQL backend: a small per-process pool, the
 * session settings, and the statement runner that keeps a restarted
 * server from taking an instance down.
 *
 * Pool. The tools open a store handle per worker thread and may open and
 * close them often; store_open() on a postgres:// URL takes an idle
 * connection for that URL (and role: reader or writer) when there is one,
 * and store_close() gives it back, so opening is a mutex and a pointer
 * once the pool is warm. Up to PG_POOL_IDLE idle connections are kept per
 * URL and role; the schema is checked (readers) or migrated (writers)
 * once per URL per process. The pool is the one piece of process-wide
 * mutable state in the store, guarded by a mutex; it is never freed (the
 * connections close when the process exits).
 *
 * Outages. Outside a transaction a statement that fails because the
 * connection was lost is retried after PQreset(), with backoff, up to
 * PG_RETRIES attempts; serialization failures and deadlocks (40001,
 * 40P01) are retried the same way. Inside a transaction nothing can be
 * replayed: the call fails and the caller (sync) rolls back and retries
 * the batch later. While the server is down every call fails fast with
 * MCPAGE_ESTORE and "the store is unavailable (...); retry shortly", and
 * the next call after it is back reconnects.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/postgres/pg_internal.h"

struct pg_pool {
    char url[PG_URL_MAX];       /* the store's URL, the pool key */
    int writer;                 /* connections of writers (no statement timeout) */
    int checked;                /* the schema was checked or migrated */
    PGconn *idle[PG_POOL_IDLE]; /* connections ready to take */
    int nidle;                  /* entries of idle in use */
};

static pg_pool pools[PG_POOL_URLS * 2];
static int npools;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A libpq message without its trailing newline, into buf. */
static const char *clean_msg(const char *m, char *buf, size_t n)
{
    snprintf(buf, n, "%s", m && *m ? m : "no answer");
    size_t len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = 0;
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return buf;
}

static int unavailable(store *s, const char *why)
{
    char m[300];
    return store_fail(s, MCPAGE_ESTORE, "the store is unavailable (%s); retry shortly",
                      clean_msg(why, m, sizeof m));
}

static long timeout_ms(int writer)
{
    const char *e = getenv("MCPAGE_STORE_TIMEOUT_MS");
    if (e && *e) {
        char *end = NULL;
        long v = strtol(e, &end, 10);
        if (end && !*end && v >= 0 && v <= 24L * 3600 * 1000)
            return v;
    }
    return writer ? 0 : PG_TIMEOUT_DEFAULT;
}

/* Settings every connection needs: byte-exact float text (keyset
 * positions round-trip), a statement timeout for readers. */
static int conn_setup(PGconn *db, int writer)
{
    char sql[200];
    snprintf(sql, sizeof sql,
             "SET extra_float_digits = 3; SET statement_timeout = %ld; "
             "SET client_min_messages = warning",
             timeout_ms(writer));
    PGresult *r = PQexec(db, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok ? 0 : MCPAGE_ESTORE;
}

static PGconn *conn_new(const char *url, int writer, char *err, size_t errlen)
{
    static const char *const keys[] = {"connect_timeout", "application_name", "client_encoding",
                                       "keepalives_idle", "dbname",           NULL};
    const char *vals[] = {"5", "mcpage", "UTF8", "30", url, NULL};
    PGconn *db = PQconnectdbParams(keys, vals, 1);
    if (!db) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (PQstatus(db) != CONNECTION_OK || conn_setup(db, writer) < 0) {
        clean_msg(PQerrorMessage(db), err, errlen);
        PQfinish(db);
        return NULL;
    }
    return db;
}

static pg_pool *pool_find(const char *url, int writer)
{
    for (int i = 0; i < npools; i++)
        if (pools[i].writer == writer && strcmp(pools[i].url, url) == 0)
            return &pools[i];
    if (npools >= (int)(sizeof pools / sizeof pools[0]))
        return NULL;
    pg_pool *p = &pools[npools++];
    memset(p, 0, sizeof *p);
    snprintf(p->url, sizeof p->url, "%s", url);
    p->writer = writer;
    return p;
}

int store_pg_connect(store *s, const char *url, int writer, pg_conn **out)
{
    *out = NULL;
    if (strlen(url) >= PG_URL_MAX)
        return store_fail(s, MCPAGE_ERANGE, "store URL longer than %d bytes", PG_URL_MAX - 1);
    char why[400];
    int lrc = store_pg__lib_load(why, sizeof why);
    if (lrc < 0) /* not "retry shortly": nothing changes until libpq is installed */
        return store_fail(s, lrc, "%s", why);
    pg_conn *c = calloc(1, sizeof *c);
    if (!c)
        return MCPAGE_ENOMEM;
    pthread_mutex_lock(&pool_mu);
    pg_pool *p = pool_find(url, writer);
    int checked = p ? p->checked : 0;
    if (p && p->nidle > 0)
        c->db = p->idle[--p->nidle];
    pthread_mutex_unlock(&pool_mu);
    c->pool = p;
    char err[400] = "";
    if (!c->db && !(c->db = conn_new(url, writer, err, sizeof err))) {
        free(c);
        return unavailable(s, err);
    }
    if (!checked) {
        int rc;
        if (writer) {
            rc = store_pg_migrate(c->db, err, sizeof err);
        } else {
            int version = 0;
            rc = store_pg_schema_version(c->db, &version, err, sizeof err);
            if (rc == 0 && version == 0) {
                snprintf(err, sizeof err,
                         "not an mcpage store: no schema at %s (run 'mcpage sync --store URL')",
                         PQdb(c->db));
                rc = MCPAGE_ENOTFOUND;
            } else if (rc == 0 && version != store_pg_schema_latest()) {
                snprintf(err, sizeof err, "store schema version %d, this build reads %d (%s)",
                         version, store_pg_schema_latest(),
                         version > store_pg_schema_latest()
                             ? "newer than this build: upgrade mcpage"
                             : "run 'mcpage sync --store URL' once to migrate it");
                rc = MCPAGE_ESTATE;
            }
        }
        if (rc < 0) {
            PQfinish(c->db);
            free(c);
            return store_fail(s, rc, "%s", err);
        }
        pthread_mutex_lock(&pool_mu);
        if (p)
            p->checked = 1;
        pthread_mutex_unlock(&pool_mu);
    }
    *out = c;
    return 0;
}

void store_pg_release(pg_conn *c)
{
    if (!c)
        return;
    store_pg_discard(c);
    PGconn *db = c->db;
    if (db && PQstatus(db) == CONNECTION_OK &&
        (c->in_tx || c->locks || PQtransactionStatus(db) != PQTRANS_IDLE)) {
        /* never hand on a transaction or a session lock */
        PQclear(PQexec(db, "ROLLBACK"));
        PQclear(PQexec(db, "SELECT pg_advisory_unlock_all()"));
    }
    if (db && PQstatus(db) == CONNECTION_OK && PQtransactionStatus(db) == PQTRANS_IDLE && c->pool) {
        pthread_mutex_lock(&pool_mu);
        if (c->pool->nidle < PG_POOL_IDLE) {
            c->pool->idle[c->pool->nidle++] = db;
            db = NULL;
        }
        pthread_mutex_unlock(&pool_mu);
    }
    if (db)
        PQfinish(db);
    free(c);
}

/* Reconnects a lost connection: PQreset, then the session settings. */
static int conn_reset(store *s, pg_conn *c)
{
    PQreset(c->db);
    if (PQstatus(c->db) != CONNECTION_OK)
        return unavailable(s, PQerrorMessage(c->db));
    if (conn_setup(c->db, s->writable) < 0)
        return unavailable(s, PQerrorMessage(c->db));
    return 0;
}

/*
 * Runs one statement under the handle's budget (store_budget_set): sent
 * asynchronously, its answer awaited in slices of PG_POLL_MS, and past
 * the deadline or once the caller stops it, cancelled on the server
 * (PQcancel: the backend stops the statement and answers 57014). The
 * result is the last one the statement gave, as PQexec's; *stopped gets
 * the budget's status when it was cancelled that way, else 0.
 */
static PGresult *exec_budgeted(store *s, PGconn *db, const char *sql, int n,
                               const char *const *vals, const int *lens, const int *formats,
                               int binary, int *stopped)
{
    *stopped = store_budget_check(s);
    if (*stopped < 0)
        return NULL;
    int sent = n == 0 && !binary ? PQsendQuery(db, sql)
                                 : PQsendQueryParams(db, sql, n, NULL, vals, lens, formats, binary);
    if (!sent)
        return NULL;
    int cancelled = 0;
    while (PQisBusy(db)) {
        struct pollfd pfd = {.fd = PQsocket(db), .events = POLLIN};
        if (pfd.fd < 0 || (poll(&pfd, 1, PG_POLL_MS) < 0 && errno != EINTR) || !PQconsumeInput(db))
            break; /* PQgetResult below reports the broken connection */
        int why = cancelled ? 0 : store_budget_check(s);
        if (why < 0) {
            char err[256];
            PGcancel *cn = PQgetCancel(db);
            if (cn && PQcancel(cn, err, sizeof err)) {
                cancelled = 1;
                *stopped = why;
            }
            PQfreeCancel(cn);
        }
    }
    PGresult *last = NULL, *r;
    while ((r = PQgetResult(db)) != NULL) {
        /* keep the first failure, else the last result (as PQexec) */
        ExecStatusType st = PQresultStatus(last);
        if (last && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
            PQclear(r);
            continue;
        }
        PQclear(last);
        last = r;
    }
    ExecStatusType st = PQresultStatus(last);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        *stopped = 0; /* it finished before the cancel arrived */
    return last;
}

static int retryable(const char *state)
{
    return state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0);
}

PGresult *store_pg_exec(store *s, const char *sql, int n, const char *const *vals, const int *lens,
                        const int *formats, int binary)
{
    pg_conn *c = s->impl;
    char m[400];
    if (c->npend && !c->flushing && store_pg_flush(s) < 0)
        return NULL;
    for (int attempt = 0;; attempt++) {
        if (PQstatus(c->db) != CONNECTION_OK) {
            if (c->in_tx || c->locks) {
                c->in_tx = c->dirty = c->locks = 0;
                c->sid_of[0] = 0;
                unavailable(s, "connection lost during a transaction");
                return NULL;
            }
            if (conn_reset(s, c) < 0) {
                if (attempt + 1 >= PG_RETRIES)
                    return NULL;
                sleep_ms(100L << attempt);
                continue;
            }
        }
        /* without parameters: the simple protocol, which takes several
         * statements in one round trip ("BEGIN; SELECT ...") */
        int stopped = 0;
        PGresult *r = s->deadline_us > 0 || s->stop
                          ? exec_budgeted(s, c->db, sql, n, vals, lens, formats, binary, &stopped)
                      : n == 0 && !binary
                          ? PQexec(c->db, sql)
                          : PQexecParams(c->db, sql, n, NULL, vals, lens, formats, binary);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
            return r;
        if (stopped < 0) {
            PQclear(r);
            s->stopped = stopped;
            store_budget_fail(s, stopped);
            return NULL;
        }
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        clean_msg(r ? PQresultErrorMessage(r) : PQerrorMessage(c->db), m, sizeof m);
        int lost = PQstatus(c->db) != CONNECTION_OK;
        int again = retryable(state);
        char state_copy[8] = "";
        if (state)
            snprintf(state_copy, sizeof state_copy, "%s", state);
        PQclear(r);
        if (lost) {
            if (c->in_tx || c->locks) {
                c->in_tx = c->dirty = c->locks = 0;
                c->sid_of[0] = 0;
                unavailable(s, m);
                return NULL;
            }
            if (attempt + 1 >= PG_RETRIES) {
                unavailable(s, m);
                return NULL;
            }
            sleep_ms(50L << attempt);
            continue;
        }
        if (again && !c->in_tx && attempt + 1 < PG_RETRIES) {
            sleep_ms(20L << attempt);
            continue;
        }
        if (strcmp(state_copy, "57014") == 0) {
            store_fail(s, MCPAGE_ESTORE,
                       "the store took too long (statement timeout %ld ms); narrow the request",
                       timeout_ms(s->writable));
            return NULL;
        }
        if (strncmp(state_copy, "57P", 3) == 0 || strncmp(state_copy, "08", 2) == 0 ||
            strcmp(state_copy, "53300") == 0) {
            unavailable(s, m); /* shutting down, connection trouble, too many clients */
            return NULL;
        }
        store_fail(s, MCPAGE_ESTORE, "store query failed: %s", m);
        return NULL;
    }
}

int store_pg_simple(store *s, const char *sql)
{
    PGresult *r = store_pg_exec(s, sql, 0, NULL, NULL, NULL, 0);
    if (!r)
        return MCPAGE_ESTORE;
    PQclear(r);
    return 0;
}

int store_pg_ping(store *s)
{
    return store_pg_simple(s, "SELECT 1");
}

void store_pg_pool_drain(void)
{
    pthread_mutex_lock(&pool_mu);
    for (int i = 0; i < npools; i++) {
        while (pools[i].nidle > 0)
            PQfinish(pools[i].idle[--pools[i].nidle]);
    }
    npools = 0;
    pthread_mutex_unlock(&pool_mu);
}
