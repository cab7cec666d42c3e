/*
 * The checker's stdio transport: the server runs as a child process,
 * requests go to its stdin one JSON object per line and replies come
 * back the same way on its stdout (its stderr is left to ours). Reads
 * are bounded by CHECK_MESSAGE_MAX and by a per-request timeout; the
 * child never outlives the checker (check_stdio_stop reaps it).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mcpage/mcpage.h>

#include "check/check.h"
#include "page/alloc.h"
#include "page/dbuf.h"

/* Bytes of room the reader keeps free before each read(). */
#define STDIO_READ_ROOM ((size_t)65536)

struct check_stdio {
    pid_t pid;      /* the child */
    int to;         /* its stdin */
    int from;       /* its stdout */
    char *buf;      /* bytes read and not yet consumed (dbuf_grow) */
    size_t len;     /* bytes in buf */
    size_t cap;     /* allocated */
    size_t garbage; /* lines that were not a JSON object */
};

int check_stdio_start(char *const argv[], check_stdio **out, char *why, size_t why_len)
{
    int in[2], outp[2], err[2];
    if (pipe(in) != 0)
        goto fail_errno;
    if (pipe(outp) != 0) {
        close(in[0]);
        close(in[1]);
        goto fail_errno;
    }
    /* A pipe that closes on exec tells the parent whether exec worked. */
    if (pipe(err) != 0 || fcntl(err[1], F_SETFD, FD_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        close(outp[0]);
        close(outp[1]);
        goto fail_errno;
    }
    pid_t pid = fork();
    if (pid < 0)
        goto fail_errno;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(outp[1], 1);
        close(in[0]);
        close(in[1]);
        close(outp[0]);
        close(outp[1]);
        close(err[0]);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(err[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(in[0]);
    close(outp[1]);
    close(err[1]);
    int e = 0;
    ssize_t n = read(err[0], &e, sizeof e);
    close(err[0]);
    if (n == (ssize_t)sizeof e) {
        waitpid(pid, NULL, 0);
        close(in[1]);
        close(outp[0]);
        snprintf(why, why_len, "cannot run %s: %s", argv[0], strerror(e));
        return MCPAGE_EIO;
    }
    check_stdio *c = calloc(1, sizeof *c);
    if (c == NULL) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(in[1]);
        close(outp[0]);
        return MCPAGE_ENOMEM;
    }
    c->pid = pid;
    c->to = in[1];
    c->from = outp[0];
    *out = c;
    return 0;
fail_errno:
    snprintf(why, why_len, "cannot start the server: %s", strerror(errno));
    return MCPAGE_EIO;
}

/* Waits up to ms for the child to exit; true when it did (and was reaped). */
static bool reaped_within(pid_t pid, int ms)
{
    for (int waited = 0; waited <= ms; waited += 10) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return true;
        struct timespec ts = {0, 10L * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

void check_stdio_stop(check_stdio *c)
{
    if (c == NULL)
        return;
    close(c->to);
    if (!reaped_within(c->pid, 1000)) {
        kill(c->pid, SIGTERM);
        if (!reaped_within(c->pid, 1000)) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
        }
    }
    close(c->from);
    mcpage__free(c->buf);
    free(c);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return MCPAGE_EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Takes one line out of the buffer (without its newline), or NULL when none is complete. */
static char *take_line(check_stdio *c, size_t *n)
{
    char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
    if (nl == NULL)
        return NULL;
    *n = (size_t)(nl - c->buf);
    char *line = malloc(*n + 1);
    if (line == NULL)
        return NULL;
    memcpy(line, c->buf, *n);
    line[*n] = '\0';
    c->len -= *n + 1;
    memmove(c->buf, nl + 1, c->len);
    return line;
}

/* Reads one line from the child within the deadline. */
static int read_line(check_stdio *c, int64_t deadline, char **line, size_t *n, char *why,
                     size_t why_len)
{
    for (;;) {
        if ((*line = take_line(c, n)) != NULL)
            return 0;
        if (c->len >= CHECK_MESSAGE_MAX) {
            snprintf(why, why_len, "a message longer than %zu bytes", CHECK_MESSAGE_MAX);
            return MCPAGE_ERANGE;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            snprintf(why, why_len, "no reply within the timeout");
            return MCPAGE_ECANCELED;
        }
        struct pollfd p = {.fd = c->from, .events = POLLIN};
        int pr = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        void *buf = c->buf;
        int rc = dbuf_grow(&buf, &c->cap, c->len + STDIO_READ_ROOM, 1, 2 * STDIO_READ_ROOM,
                           CHECK_MESSAGE_MAX + STDIO_READ_ROOM);
        if (rc != 0)
            return rc;
        c->buf = buf;
        ssize_t r = read(c->from, c->buf + c->len, c->cap - c->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(why, why_len, "the server closed its output (exited?)");
            return MCPAGE_EIO;
        }
        c->len += (size_t)r;
    }
}

/* A request from the server (sampling, roots...): the checker offers none. */
static void refuse_request(check_stdio *c, const json_t *msg)
{
    json_t *e =
        json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", json_object_get(msg, "id"),
                  "error", "code", -32601, "message", "mcpage check answers no server requests");
    char *txt = e ? json_dumps(e, JSON_COMPACT) : NULL;
    if (txt) {
        (void)write_all(c->to, txt, strlen(txt));
        (void)write_all(c->to, "\n", 1);
    }
    free(txt);
    json_decref(e);
}

static int stdio_exchange(void *ud, const json_t *msg, int timeout_ms, json_t **reply, char *why,
                          size_t why_len)
{
    check_stdio *c = ud;
    *reply = NULL;
    char *txt = json_dumps(msg, JSON_COMPACT);
    if (txt == NULL)
        return MCPAGE_ENOMEM;
    int rc = write_all(c->to, txt, strlen(txt));
    if (rc == 0)
        rc = write_all(c->to, "\n", 1);
    free(txt);
    if (rc != 0) {
        snprintf(why, why_len, "cannot write to the server (exited?)");
        return rc;
    }
    const json_t *id = json_object_get(msg, "id");
    if (id == NULL)
        return 0;
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        char *line;
        size_t n;
        rc = read_line(c, deadline, &line, &n, why, why_len);
        if (rc != 0)
            return rc;
        json_t *v = json_loadb(line, n, 0, NULL);
        if (!json_is_object(v) && n > 0)
            c->garbage++; /* a server that logs on stdout breaks clients (reported) */
        free(line);
        if (!json_is_object(v)) {
            json_decref(v);
            continue;
        }
        const json_t *vid = json_object_get(v, "id");
        if (vid && json_object_get(v, "method")) {
            refuse_request(c, v);
        } else if (vid && json_equal(vid, id)) {
            *reply = v;
            return 0;
        }
        json_decref(v);
    }
}

void check_stdio_transport(check_stdio *c, check_transport *t)
{
    t->exchange = stdio_exchange;
    t->ud = c;
    t->garbage = &c->garbage;
}
