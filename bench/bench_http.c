/*
 * bench_http: a load generator for the Streamable HTTP transport on
 * loopback (run by bench/run_http_bench.sh against fixture_server --http).
 * Figures are printed, not asserted.
 *
 *   bench_http PORT rps SESSIONS SECONDS json|sse
 *       SESSIONS threads, each its own session and keep-alive connection,
 *       calling the fixture's "echo" tool back to back; prints calls/s and
 *       latency percentiles. json: Accept application/json (one JSON body);
 *       sse: Accept text/event-stream (tools/call streamed as SSE).
 *   bench_http PORT streams N SERVER_PID
 *       opens N sessions each holding its GET SSE stream, prints the
 *       server's RSS before and with them, then checks one call still works.
 *   bench_http PORT slow N SECONDS
 *       N connections trickle one header byte every 100 ms while one
 *       session calls echo back to back; prints calls/s and worst latency.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Largest response the bench reads. */
#define RESP_MAX (1 << 20)
/* Most latency samples kept per thread. */
#define SAMPLES_MAX 1000000

static int g_port;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A connection with a read buffer. */
typedef struct conn {
    int fd;          /* socket */
    char *buf;       /* read buffer (RESP_MAX) */
    size_t len, off; /* bytes buffered, bytes consumed */
} conn;

static int fill(conn *c)
{
    if (c->off > 0) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    if (c->len >= RESP_MAX)
        return -1;
    ssize_t k = read(c->fd, c->buf + c->len, RESP_MAX - c->len);
    if (k <= 0)
        return -1;
    c->len += (size_t)k;
    return 0;
}

/* Reads one line (without CRLF) into out. */
static int read_line(conn *c, char *out, size_t max)
{
    for (;;) {
        char *nl = memmem(c->buf + c->off, c->len - c->off, "\r\n", 2);
        if (nl) {
            size_t n = (size_t)(nl - (c->buf + c->off));
            if (n >= max)
                n = max - 1;
            memcpy(out, c->buf + c->off, n);
            out[n] = '\0';
            c->off = (size_t)(nl - c->buf) + 2;
            return 0;
        }
        if (fill(c) != 0)
            return -1;
    }
}

static int read_n(conn *c, char *out, size_t n)
{
    while (c->len - c->off < n)
        if (fill(c) != 0)
            return -1;
    if (out)
        memcpy(out, c->buf + c->off, n);
    c->off += n;
    return 0;
}

/* Reads one response; returns the status, copies the session id if any. */
static int read_response(conn *c, char *sid, size_t sidmax, char *body, size_t bodymax)
{
    char line[4096];
    if (read_line(c, line, sizeof line) != 0)
        return -1;
    int status = atoi(line + 9);
    long clen = -1;
    bool chunked = false;
    for (;;) {
        if (read_line(c, line, sizeof line) != 0)
            return -1;
        if (line[0] == '\0')
            break;
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            clen = atol(line + 15);
        else if (strncasecmp(line, "Transfer-Encoding: chunked", 26) == 0)
            chunked = true;
        else if (sid && strncasecmp(line, "Mcp-Session-Id: ", 16) == 0) {
            size_t n = strnlen(line + 16, sidmax - 1);
            memcpy(sid, line + 16, n);
            sid[n] = '\0';
        }
    }
    size_t got = 0;
    if (chunked) {
        for (;;) {
            if (read_line(c, line, sizeof line) != 0)
                return -1;
            size_t n = (size_t)strtoul(line, NULL, 16);
            if (n == 0) {
                read_line(c, line, sizeof line);
                break;
            }
            size_t keep = body && got + n < bodymax ? n : 0;
            if (read_n(c, keep ? body + got : NULL, n) != 0 || read_line(c, line, sizeof line) != 0)
                return -1;
            got += keep;
        }
    } else if (clen > 0) {
        size_t keep = body && (size_t)clen < bodymax ? (size_t)clen : 0;
        if (read_n(c, keep ? body : NULL, (size_t)clen) != 0)
            return -1;
        got = keep;
    }
    if (body && bodymax)
        body[got < bodymax ? got : bodymax - 1] = '\0';
    return status;
}

static int post(conn *c, const char *sid, const char *accept, const char *json)
{
    char head[1024];
    int n =
        snprintf(head, sizeof head,
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                 "Accept: %s\r\n%s%s%sContent-Length: %zu\r\n\r\n",
                 g_port, accept, sid ? "Mcp-Session-Id: " : "", sid ? sid : "", sid ? "\r\n" : "",
                 strlen(json));
    if (write_all(c->fd, head, (size_t)n) != 0 || write_all(c->fd, json, strlen(json)) != 0)
        return -1;
    return 0;
}

static const char INIT[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                           "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
static const char INITED[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* Opens a connection and a session; 0 on success. */
static int session_open(conn *c, char *sid, size_t sidmax)
{
    c->fd = dial();
    c->buf = malloc(RESP_MAX);
    c->len = c->off = 0;
    if (c->fd < 0 || c->buf == NULL)
        return -1;
    sid[0] = '\0';
    int st = -1;
    if (post(c, NULL, "application/json, text/event-stream", INIT) != 0 ||
        (st = read_response(c, sid, sidmax, NULL, 0)) != 200 || sid[0] == '\0') {
        fprintf(stderr, "bench_http: initialize got %d (%s)\n", st, strerror(errno));
        return -1;
    }
    if (post(c, sid, "application/json, text/event-stream", INITED) != 0 ||
        read_response(c, NULL, 0, NULL, 0) != 202)
        return -1;
    return 0;
}

static void conn_close(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
}

typedef struct worker {
    pthread_t t;        /* thread */
    double until;       /* stop time */
    const char *accept; /* Accept header */
    long calls;         /* calls completed */
    long errors;        /* calls failed */
    double *lat;        /* latency samples (s) */
    long nlat;          /* their count */
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    conn c;
    char sid[2048]; /* signed session ids run to 1,500 characters */
    if (session_open(&c, sid, sizeof sid) != 0) {
        w->errors++;
        conn_close(&c);
        return NULL;
    }
    char body[4096];
    char req[256];
    for (long id = 10; now_s() < w->until; id++) {
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"echo\",\"arguments\":{\"text\":\"hello\"}}}",
                 id);
        double t0 = now_s();
        if (post(&c, sid, w->accept, req) != 0 ||
            read_response(&c, NULL, 0, body, sizeof body) != 200 || strstr(body, "hello") == NULL) {
            w->errors++;
            break;
        }
        w->calls++;
        if (w->nlat < SAMPLES_MAX)
            w->lat[w->nlat++] = now_s() - t0;
    }
    /* End the session so the next run starts below the session cap. */
    char del[2600];
    int n = snprintf(del, sizeof del,
                     "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nMcp-Session-Id: %s\r\n\r\n",
                     g_port, sid);
    if (write_all(c.fd, del, (size_t)n) == 0)
        read_response(&c, NULL, 0, NULL, 0);
    conn_close(&c);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs n workers for `secs`; prints one line. Returns calls/s. */
static double run_rps(int n, double secs, const char *mode)
{
    worker *ws = calloc((size_t)n, sizeof *ws);
    const char *accept = strcmp(mode, "sse") == 0 ? "text/event-stream" : "application/json";
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        ws[i].until = t0 + secs;
        ws[i].accept = accept;
        ws[i].lat = malloc(sizeof(double) * SAMPLES_MAX / (size_t)n + 1);
        pthread_create(&ws[i].t, NULL, work, &ws[i]);
    }
    long calls = 0, errors = 0, nlat = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(ws[i].t, NULL);
        calls += ws[i].calls;
        errors += ws[i].errors;
        nlat += ws[i].nlat;
    }
    double el = now_s() - t0;
    double *all = malloc(sizeof(double) * (size_t)(nlat + 1));
    long k = 0;
    for (int i = 0; i < n; i++) {
        memcpy(all + k, ws[i].lat, sizeof(double) * (size_t)ws[i].nlat);
        k += ws[i].nlat;
        free(ws[i].lat);
    }
    qsort(all, (size_t)k, sizeof *all, cmp_double);
    double p50 = k ? all[k / 2] : 0, p99 = k ? all[k * 99 / 100] : 0;
    printf("rps  mode=%-4s sessions=%-3d calls=%-7ld errors=%ld  %8.0f calls/s  p50 %.2f ms  "
           "p99 %.2f ms\n",
           mode, n, calls, errors, (double)calls / el, p50 * 1e3, p99 * 1e3);
    free(all);
    free(ws);
    return (double)calls / el;
}

static long rss_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static int run_streams(int n, int pid)
{
    long before = rss_kb(pid);
    conn *cs = calloc((size_t)n, sizeof *cs);
    char sid[2048]; /* signed session ids run to 1,500 characters */
    int open = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        if (session_open(&cs[i], sid, sizeof sid) != 0) {
            fprintf(stderr, "bench_http: session %d failed\n", i);
            break;
        }
        char head[512];
        int k = snprintf(head, sizeof head,
                         "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n"
                         "Mcp-Session-Id: %s\r\n\r\n",
                         g_port, sid);
        char line[512];
        if (write_all(cs[i].fd, head, (size_t)k) != 0 ||
            read_line(&cs[i], line, sizeof line) != 0 || strstr(line, " 200 ") == NULL) {
            fprintf(stderr, "bench_http: stream %d not opened\n", i);
            break;
        }
        open++;
    }
    double el = now_s() - t0;
    usleep(500000);
    long with = rss_kb(pid);
    /* One more client must still be served while they are all held. */
    worker w = {.until = now_s() + 1.0, .accept = "application/json"};
    w.lat = malloc(sizeof(double) * 100000);
    work(&w);
    printf("streams open=%d (in %.2f s)  server RSS %ld KiB before, %ld KiB with them (%.1f KiB "
           "per stream)  calls/s beside them: %ld\n",
           open, el, before, with, open ? (double)(with - before) / open : 0.0, w.calls);
    free(w.lat);
    for (int i = 0; i < n; i++)
        conn_close(&cs[i]);
    free(cs);
    return open == n && w.calls > 0 ? 0 : 1;
}

static int run_slow(int n, double secs)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    int opened = 0;
    for (int i = 0; i < n; i++) {
        fds[i] = dial();
        if (fds[i] >= 0 && write_all(fds[i], "POST /mcp HTTP/1.1\r\n", 20) == 0)
            opened++;
    }
    worker w = {.until = now_s() + secs, .accept = "application/json"};
    w.lat = malloc(sizeof(double) * SAMPLES_MAX);
    pthread_create(&w.t, NULL, work, &w);
    while (now_s() < w.until) {
        for (int i = 0; i < n; i++)
            if (fds[i] >= 0 && write(fds[i], "X", 1) != 1) {
                close(fds[i]);
                fds[i] = -1;
            }
        usleep(100000);
    }
    pthread_join(w.t, NULL);
    qsort(w.lat, (size_t)w.nlat, sizeof(double), cmp_double);
    int alive = 0;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) {
            alive++;
            close(fds[i]);
        }
    printf("slow trickling=%d (still open at the end: %d)  one session: %.0f calls/s, errors %ld, "
           "p50 %.2f ms, max %.2f ms\n",
           opened, alive, (double)w.calls / secs, w.errors, w.nlat ? w.lat[w.nlat / 2] * 1e3 : 0,
           w.nlat ? w.lat[w.nlat - 1] * 1e3 : 0);
    free(w.lat);
    free(fds);
    return w.calls > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_http PORT rps SESSIONS SECONDS json|sse\n"
                        "       bench_http PORT streams N SERVER_PID\n"
                        "       bench_http PORT slow N SECONDS\n");
        return 2;
    }
    g_port = atoi(argv[1]);
    if (strcmp(argv[2], "rps") == 0 && argc >= 6) {
        run_rps(atoi(argv[3]), atof(argv[4]), argv[5]);
        return 0;
    }
    if (strcmp(argv[2], "streams") == 0 && argc >= 5)
        return run_streams(atoi(argv[3]), atoi(argv[4]));
    if (strcmp(argv[2], "slow") == 0 && argc >= 5)
        return run_slow(atoi(argv[3]), atof(argv[4]));
    fprintf(stderr, "bench_http: bad arguments\n");
    return 2;
}
