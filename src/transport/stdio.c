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
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/signalfd.h>
#endif

#include "mcp/server_internal.h"
#include "page/alloc.h"

/* Bytes read per read(2). */
#define STDIO_CHUNK 65536
/* After the grace period, how long cancelled calls get to return. */
#define STDIO_CANCEL_MS 150

typedef struct stdio_out {
    int fd; /* where messages go */
} stdio_out;

/* Writes all of buf, riding out EINTR, partial writes and non-blocking descriptors. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 1000);
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int stdio_send(void *ud, const char *msg, size_t len, const char *related_id)
{
    stdio_out *out = ud;
    if (write_all(out->fd, msg, len) != 0 || write_all(out->fd, "\n", 1) != 0) {
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

/* The read loop; returns 1 on end of input, 0 on a stop request, MCPAGE_E* on failure. */
static int read_loop(mcpage_session *s, int in_fd, int sig_fd, int stop_fd, size_t max)
{
    char *line = mcpage__malloc(max + 1);
    char *chunk = mcpage__malloc(STDIO_CHUNK);
    if (line == NULL || chunk == NULL) {
        mcpage__free(line);
        mcpage__free(chunk);
        return MCPAGE_ENOMEM;
    }
    size_t len = 0;
    bool skipping = false;
    int rc;
    for (;;) {
        struct pollfd fds[3] = {{.fd = in_fd, .events = POLLIN},
                                {.fd = sig_fd, .events = POLLIN},
                                {.fd = stop_fd, .events = POLLIN}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = MCPAGE_EIO;
            break;
        }
        if (fds[1].revents || fds[2].revents) {
            rc = 0;
            break;
        }
        if (fds[0].revents == 0)
            continue;
        ssize_t n = read(in_fd, chunk, STDIO_CHUNK);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            (void)fprintf(stderr, "mcpage: reading from the client failed: %s\n", strerror(errno));
            rc = MCPAGE_EIO;
            break;
        }
        if (n == 0) {
            if (len > 0 && !skipping)
                feed_line(s, line, len); /* a last message without its newline */
            rc = 1;
            break;
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
            if (nl) {
                if (!skipping)
                    feed_line(s, line, len);
                skipping = false;
                len = 0;
                p = nl + 1;
            } else {
                p = end;
            }
        }
    }
    mcpage__free(line);
    mcpage__free(chunk);
    return rc;
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
    mcpage_session *s = NULL;
    int rc = mcpage_session_new(srv, stdio_send, &out, &s);
    if (rc != 0)
        goto done;
    int how = read_loop(s, in_fd, sig_fd, opts->stop_fd, srv->cfg.max_message);
    if (how == 1) {
        mcpage_session_drain(s, -1);
        rc = 0;
    } else {
        if (mcpage_session_drain(s, opts->grace_ms) != 0) {
            mcpage_session_cancel_all(s);
            if (mcpage_session_drain(s, STDIO_CANCEL_MS) != 0)
                how = MCPAGE_ESTATE;
        }
        rc = how == 0 ? 0 : how;
    }
    mcpage_session_free(s);
done:
#ifdef __linux__
    if (sig_fd >= 0) {
        /* Consume the stop signal so unblocking it below does not kill us. */
        struct signalfd_siginfo info;
        while (read(sig_fd, &info, sizeof info) == (ssize_t)sizeof info)
            ;
        close(sig_fd);
    }
#endif
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
