/*
 * The stdio transport: newline-delimited JSON-RPC on two file
 * descriptors. The reading thread parses lines and feeds the session;
 * responses from the worker pool are written under the session's send
 * lock, one message per line. A line longer than the message limit is
 * answered with one -32600 error and skipped up to its newline without
 * being buffered. Shutdown: end of input waits for every call; SIGTERM,
 * SIGINT or the stop descriptor give running calls a grace period, then
 * cancel them, so the process exits within about a second.
 */
#include <mcpage/server.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#endif
#include <stdint.h>
#include <sys/uio.h>

#include "mcp/server_internal.h"
#include "page/alloc.h"

/* Bytes read per read(2). */
#define STDIO_CHUNK 65536
/* After the grace period, how long cancelled calls get to return. */
#define STDIO_CANCEL_MS 150

typedef struct stdio_out {
    int fd; /* where messages go */
} stdio_out;

/*
 * Writes every byte of iov[0..n), riding out EINTR, partial writes and
 * non-blocking descriptors. A message and its newline go out in one
 * writev(2): written apart, the first woke the client to read a line
 * without its end, and the second woke it again.
 */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 1000);
                continue;
            }
            return -1;
        }
        size_t done = (size_t)w;
        for (; n > 0 && done >= iov->iov_len; iov++, n--)
            done -= iov->iov_len;
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

static int stdio_send(void *ud, const char *msg, size_t len, const char *related_id)
{
    stdio_out *out = ud;
    struct iovec iov[2] = {{.iov_base = (void *)msg, .iov_len = len},
                           {.iov_base = "\n", .iov_len = 1}};
    if (write_all(out->fd, iov, 2) != 0) {
        (void)fprintf(stderr, "mcpage: writing to the client failed: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* Hands one complete line to the session unless it is blank. */
static void feed_line(mcpage_session *s, char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    size_t start = 0;
    while (start < len && (line[start] == ' ' || line[start] == '\t'))
        start++;
    if (start == len)
        return;
    mcpage_session_receive(s, line + start, len - start);
}

int mcpage_serve_stdio(mcpage_server *srv, int in_fd, int out_fd)
{
    mcpage_stdio_options opts = {.stop_fd = -1, .handle_signals = true, .grace_ms = 300};
    return mcpage_serve_stdio_ex(srv, in_fd, out_fd, &opts);
}

/*
 * Two threads share the reading. The one that reads runs a call itself
 * when its line is the last one read so far (nothing else waits), which
 * spares waking a worker for it: on a small call that hand-off is most of
 * the wait. So that pings, cancellations and responses to our requests
 * are still read while such a call runs, the other thread waits on a
 * timer armed for STDIO_INLINE_MS around the call; when it fires, that
 * thread takes over the reading and the call finishes where it is. No
 * call runs on the reading thread while an earlier one still runs on the
 * other (nobody would be left to take over): it goes to the pool.
 */
#define STDIO_INLINE_MS 1
/* read_loop's answer when the other thread took over the reading. */
#define STDIO_TAKEN 2

typedef struct stdio_run {
    mcpage_server *srv;
    mcpage_session *s;
    int in_fd, sig_fd, stop_fd; /* input, SIGTERM/SIGINT, stop request (or -1) */
    const mcpage_stdio_options *opts;
    int timer_fd; /* armed around a call run by the reader; -1: none run there */
    int wake_fd;  /* eventfd: the reading ended, the waiting thread leaves */
    pthread_mutex_t mu;
    int reader;        /* which thread reads (0 or 1) */
    bool running_here; /* the reader runs a call and may be taken over */
    bool orphan;       /* a thread that was taken over still runs its call */
    bool finished;     /* the reading ended */
    int rc;            /* mcpage_serve_stdio_ex's answer */
} stdio_run;

#ifdef __linux__
static void set_timer(int fd, long ms)
{
    struct itimerspec t = {.it_value = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L}};
    (void)timerfd_settime(fd, 0, &t, NULL);
}
#endif

/* Whether the reader may run its next call itself. */
static bool may_run_here(stdio_run *st)
{
    if (st->timer_fd < 0)
        return false;
    pthread_mutex_lock(&st->mu);
    bool ok = !st->orphan && !st->finished;
    pthread_mutex_unlock(&st->mu);
    return ok;
}

/* Runs a held call on the reading thread `me`; true when the other thread took over. */
static bool run_here(stdio_run *st, int me, mcpage_call *call)
{
#ifdef __linux__
    pthread_mutex_lock(&st->mu);
    st->running_here = true;
    pthread_mutex_unlock(&st->mu);
    set_timer(st->timer_fd, STDIO_INLINE_MS);
    mcp_server_run_held(st->srv, call);
    set_timer(st->timer_fd, 0);
    pthread_mutex_lock(&st->mu);
    st->running_here = false;
    bool taken = st->reader != me;
    if (taken)
        st->orphan = false;
    pthread_mutex_unlock(&st->mu);
    return taken;
#else
    (void)me;
    mcp_server_run_held(st->srv, call);
    return false;
#endif
}

/*
 * The read loop of thread `me`; returns 1 on end of input, 0 on a stop
 * request, STDIO_TAKEN when the other thread took over, MCPAGE_E* on
 * failure. `line` holds max + 1 bytes, `chunk` STDIO_CHUNK.
 */
static int read_loop(stdio_run *st, int me, char *line, char *chunk)
{
    mcpage_session *s = st->s;
    size_t max = st->srv->cfg.max_message, len = 0;
    bool skipping = false;
    for (;;) {
        struct pollfd fds[3] = {{.fd = st->in_fd, .events = POLLIN},
                                {.fd = st->sig_fd, .events = POLLIN},
                                {.fd = st->stop_fd, .events = POLLIN}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            return MCPAGE_EIO;
        }
        if (fds[1].revents || fds[2].revents)
            return 0;
        if (fds[0].revents == 0)
            continue;
        ssize_t n = read(st->in_fd, chunk, STDIO_CHUNK);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            (void)fprintf(stderr, "mcpage: reading from the client failed: %s\n", strerror(errno));
            return MCPAGE_EIO;
        }
        if (n == 0) {
            if (len > 0 && !skipping)
                feed_line(s, line, len); /* a last message without its newline */
            return 1;
        }
        const char *p = chunk, *end = chunk + n;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t seg = (size_t)((nl ? nl : end) - p);
            if (!skipping && seg > max - len) {
                char msg[200];
                (void)snprintf(msg, sizeof msg,
                               "Invalid Request: a message longer than the limit of %zu bytes was "
                               "skipped",
                               max);
                mcp_send_error(s, NULL, RPC_INVALID_REQUEST, msg, NULL);
                skipping = true;
                len = 0;
            }
            if (!skipping) {
                memcpy(line + len, p, seg);
                len += seg;
            }
            if (!nl) {
                p = end;
                continue;
            }
            p = nl + 1;
            if (skipping) {
                skipping = false;
                len = 0;
                continue;
            }
            /* Nothing read waits behind the last line: its call may run here. */
            bool here = p == end && may_run_here(st);
            if (here)
                mcp_server_hold(st->srv);
            feed_line(s, line, len);
            len = 0;
            mcpage_call *call = here ? mcp_server_held() : NULL;
            if (call && run_here(st, me, call))
                return STDIO_TAKEN; /* nothing is left buffered: p == end, len == 0 */
        }
    }
}

/* After the reading ended (`how`, as read_loop): waits for the calls or cancels them. */
static int shut_down(stdio_run *st, int how)
{
    if (how == 1) {
        mcpage_session_drain(st->s, -1);
        return 0;
    }
    if (mcpage_session_drain(st->s, st->opts->grace_ms) != 0) {
        mcpage_session_cancel_all(st->s);
        if (mcpage_session_drain(st->s, STDIO_CANCEL_MS) != 0)
            how = MCPAGE_ESTATE;
    }
    return how == 0 ? 0 : how;
}

/* Waits, as thread `me`, until the reader's call outlasts the timer (then reads) or the end. */
static void wait_to_read(stdio_run *st, int me)
{
#ifdef __linux__
    struct pollfd fds[2] = {{.fd = st->timer_fd, .events = POLLIN},
                            {.fd = st->wake_fd, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0 || fds[0].revents == 0)
        return;
    uint64_t fired;
    if (read(st->timer_fd, &fired, sizeof fired) < 0)
        return; /* disarmed since it fired: a call that ended in time */
    pthread_mutex_lock(&st->mu);
    if (st->running_here && st->reader != me) {
        st->reader = me;
        st->running_here = false;
        st->orphan = true;
    }
    pthread_mutex_unlock(&st->mu);
#else
    (void)st;
    (void)me;
#endif
}

/* One of the two threads: reads while it holds the reading, else waits to take it over. */
static void serve_thread(stdio_run *st, int me)
{
    char *line = mcpage__malloc(st->srv->cfg.max_message + 1);
    char *chunk = mcpage__malloc(STDIO_CHUNK);
    for (;;) {
        pthread_mutex_lock(&st->mu);
        bool finished = st->finished, reads = st->reader == me;
        pthread_mutex_unlock(&st->mu);
        if (finished)
            break;
        if (!reads) {
            wait_to_read(st, me);
            continue;
        }
        int how = line && chunk ? read_loop(st, me, line, chunk) : MCPAGE_ENOMEM;
        if (how == STDIO_TAKEN)
            continue;
        pthread_mutex_lock(&st->mu);
        st->finished = true;
        pthread_mutex_unlock(&st->mu);
#ifdef __linux__
        if (st->wake_fd >= 0) {
            uint64_t one = 1;
            (void)!write(st->wake_fd, &one, sizeof one);
        }
#endif
        st->rc = shut_down(st, how);
        break;
    }
    mcpage__free(line);
    mcpage__free(chunk);
}

static void *second_thread(void *arg)
{
    serve_thread(arg, 1);
    return NULL;
}

int mcpage_serve_stdio_ex(mcpage_server *srv, int in_fd, int out_fd,
                          const mcpage_stdio_options *opts)
{
    if (srv == NULL || in_fd < 0 || out_fd < 0 || opts == NULL)
        return MCPAGE_EINVAL;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    int sig_fd = -1;
#ifdef __linux__
    if (opts->handle_signals) {
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        sig_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    } else {
        pthread_sigmask(SIG_BLOCK, &block, &old);
    }
#else
    pthread_sigmask(SIG_BLOCK, &block, &old);
#endif
    stdio_out out = {out_fd};
    stdio_run st = {.srv = srv,
                    .in_fd = in_fd,
                    .sig_fd = sig_fd,
                    .stop_fd = opts->stop_fd,
                    .opts = opts,
                    .timer_fd = -1,
                    .wake_fd = -1};
    pthread_mutex_init(&st.mu, NULL);
    int rc = mcpage_session_new(srv, stdio_send, &out, &st.s);
    if (rc != 0)
        goto done;
    pthread_t second;
    bool two = false;
#ifdef __linux__
    st.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    st.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (st.timer_fd >= 0 && st.wake_fd >= 0) {
        /* Signals stay blocked in it, as in this thread now: read from sig_fd. */
        sigset_t all, mask;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &mask);
        two = pthread_create(&second, NULL, second_thread, &st) == 0;
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
    }
    if (!two && st.timer_fd >= 0) {
        close(st.timer_fd); /* no second thread to take over: every call goes to the pool */
        st.timer_fd = -1;
    }
#endif
    serve_thread(&st, 0);
    if (two)
        pthread_join(second, NULL);
    rc = st.rc;
    mcpage_session_free(st.s);
done:
#ifdef __linux__
    if (st.timer_fd >= 0)
        close(st.timer_fd);
    if (st.wake_fd >= 0)
        close(st.wake_fd);
    if (sig_fd >= 0) {
        /* Consume the stop signal so unblocking it below does not kill us. */
        struct signalfd_siginfo info;
        while (read(sig_fd, &info, sizeof info) == (ssize_t)sizeof info)
            ;
        close(sig_fd);
    }
#endif
    pthread_mutex_destroy(&st.mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
