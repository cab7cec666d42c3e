/*
 * bench_mcp: the one raw JSON-RPC client that bench/run.sh points at both
 * servers it compares (mcpage and the TypeScript-SDK peer), so the client
 * costs the same on both sides. Figures are printed as JSON, not asserted.
 *
 *   bench_mcp stdio PHASES -- CMD [ARGS...]
 *       Starts CMD with pipes, times fork to the initialize reply, then runs
 *       each line of the file PHASES, "NAME<TAB>MODE<TAB>COUNT<TAB>REQUEST":
 *       REQUEST is a JSON-RPC request object without "id" (the client adds
 *       one); MODE "serial" sends one, waits for its reply, sends the next
 *       (latency percentiles); MODE "pipe:W" keeps W requests written ahead
 *       of the replies read. Reads the server's VmHWM before closing its
 *       stdin. Prints one JSON object.
 *   bench_mcp http PORT SESSIONS SECONDS REQUEST
 *       SESSIONS threads, each its own Streamable HTTP session and
 *       keep-alive connection to 127.0.0.1:PORT/mcp, sending REQUEST back to
 *       back (Accept: application/json, text/event-stream; JSON or SSE
 *       answers both count). Prints one JSON object.
 *   bench_mcp echo
 *       A server doing no work: answers each request line with an empty
 *       result. `bench_mcp stdio P -- bench_mcp echo` is the pipe floor.
 *   bench_mcp sql DB COUNT SQL
 *       Prepares SQL once on DB (read-only) and runs it COUNT times, stepping
 *       every row: the raw SQLite cost of a query, without any server.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/sqlite/sqlite_internal.h"

/* Longest reply line or HTTP body the client accepts. */
#define LINE_MAX_BYTES (64u << 20)
/* Longest request template. */
#define REQ_MAX 65536
/* Most phases in a PHASES file. */
#define PHASES_MAX 64
/* Most requests in one phase. */
#define COUNT_MAX 10000000L

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Value at quantile q of sorted samples. */
static double quantile(const double *v, long n, double q)
{
    if (n <= 0)
        return 0;
    long i = (long)(q * (double)(n - 1) + 0.5);
    return v[i];
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

/* A read buffer over a file descriptor. */
typedef struct reader {
    int fd;          /* pipe or socket */
    char *buf;       /* LINE_MAX_BYTES + 1 bytes */
    size_t len, off; /* bytes buffered, bytes consumed */
} reader;

static int reader_fill(reader *r)
{
    if (r->off > 0) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    if (r->len >= LINE_MAX_BYTES)
        return -1;
    ssize_t k;
    do
        k = read(r->fd, r->buf + r->len, LINE_MAX_BYTES - r->len);
    while (k < 0 && errno == EINTR);
    if (k <= 0)
        return -1;
    r->len += (size_t)k;
    return 0;
}

/* Next line ending in `delim` (delim excluded, NUL-terminated in place). */
static char *reader_line(reader *r, const char *delim, size_t dlen, size_t *n)
{
    size_t scanned = 0;
    for (;;) {
        size_t from = r->off + (scanned > dlen ? scanned - dlen : 0);
        char *nl = memmem(r->buf + from, r->len - from, delim, dlen);
        if (nl) {
            char *line = r->buf + r->off;
            *n = (size_t)(nl - line);
            *nl = '\0';
            r->off = (size_t)(nl - r->buf) + dlen;
            return line;
        }
        scanned = r->len - r->off;
        if (reader_fill(r) != 0)
            return NULL;
    }
}

/* The numeric "id" of a reply line, or -1. */
static long reply_id(const char *line)
{
    const char *p = strstr(line, "\"id\":");
    if (!p)
        return -1;
    return strtol(p + 5, NULL, 10);
}

/* True when a reply is a JSON-RPC error or a tool result flagged isError. */
static bool reply_failed(const char *line)
{
    return strstr(line, "\"isError\":true") || strstr(line, "\"error\":{\"code\":");
}

/* Writes REQUEST with "id":id inserted after its opening brace. */
static int format_req(char *out, size_t cap, const char *tmpl, long id)
{
    int n = snprintf(out, cap, "{\"id\":%ld,%s\n", id, tmpl + 1);
    return n > 0 && (size_t)n < cap ? n : -1;
}

/* ---- stdio ----------------------------------------------------------- */

/* One line of the PHASES file. */
typedef struct phase {
    char name[64];     /* label in the output */
    int window;        /* 0: serial; W: requests written ahead */
    long count;        /* requests to send */
    char req[REQ_MAX]; /* the request without "id" */
} phase;

static long vm_field_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    size_t fl = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0)
            kb = atol(line + fl);
    if (f)
        fclose(f);
    return kb;
}

static int load_phases(const char *path, phase *ph, int *nph)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_mcp: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    static char line[REQ_MAX + 256];
    *nph = 0;
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        char *name = line, *mode = strchr(name, '\t');
        char *count = mode ? strchr(mode + 1, '\t') : NULL;
        char *req = count ? strchr(count + 1, '\t') : NULL;
        if (!req || *nph >= PHASES_MAX) {
            fprintf(stderr, "bench_mcp: %s: bad line (NAME\\tMODE\\tCOUNT\\tREQUEST): %.60s\n",
                    path, line);
            fclose(f);
            return -1;
        }
        *mode++ = *count++ = *req++ = '\0';
        phase *p = &ph[(*nph)++];
        snprintf(p->name, sizeof p->name, "%.63s", name);
        p->window = strncmp(mode, "pipe:", 5) == 0 ? atoi(mode + 5) : 0;
        p->count = atol(count);
        if (req[0] != '{' || strlen(req) >= sizeof p->req - 2 || p->count < 1 ||
            p->count > COUNT_MAX || p->window < 0) {
            fprintf(stderr, "bench_mcp: %s: bad phase %s\n", path, name);
            fclose(f);
            return -1;
        }
        snprintf(p->req, sizeof p->req, "%s", req);
    }
    fclose(f);
    return 0;
}

static pid_t spawn(char **argv, int *to, int *from)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "bench_mcp: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to = in[1];
    *from = out[0];
    return pid;
}

static const char INIT_REQ[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench_mcp\",\"version\":\"1\"}}"
    "}";
static const char INITED[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/* Runs one phase; prints its JSON object. */
static int run_phase(const phase *p, int to, reader *rd, long *next_id, bool first)
{
    static char req[REQ_MAX + 64];
    double *lat = p->window ? NULL : malloc(sizeof(double) * (size_t)p->count);
    if (!p->window && !lat)
        return -1;
    long errors = 0, bytes = 0, base = *next_id;
    double t0 = now_s();
    long sent = 0, got = 0;
    double ts = 0;
    while (got < p->count) {
        long ahead = p->window ? p->window : 1;
        while (sent < p->count && sent - got < ahead) {
            int n = format_req(req, sizeof req, p->req, base + sent);
            if (!p->window)
                ts = now_s(); /* before the write: the reply may come before it returns */
            if (n < 0 || write_all(to, req, (size_t)n) != 0) {
                fprintf(stderr, "bench_mcp: %s: write failed\n", p->name);
                free(lat);
                return -1;
            }
            sent++;
        }
        size_t len;
        char *line = reader_line(rd, "\n", 1, &len);
        if (!line) {
            fprintf(stderr, "bench_mcp: %s: the server closed its output\n", p->name);
            free(lat);
            return -1;
        }
        long id = reply_id(line);
        if (id < base || id >= base + p->count)
            continue; /* a notification or a stray line */
        if (!p->window)
            lat[got] = now_s() - ts;
        if (reply_failed(line)) {
            if (errors == 0)
                fprintf(stderr, "bench_mcp: %s: failed reply: %.300s\n", p->name, line);
            errors++;
        }
        bytes += (long)len + 1;
        got++;
    }
    double el = now_s() - t0;
    *next_id = base + p->count;
    printf("%s\n    {\"name\":\"%s\",\"mode\":\"%s\",\"window\":%d,\"count\":%ld,\"errors\":%ld,"
           "\"seconds\":%.6f,\"rps\":%.1f,\"reply_bytes\":%ld",
           first ? "" : ",", p->name, p->window ? "pipe" : "serial", p->window, p->count, errors,
           el, (double)p->count / el, bytes / p->count);
    if (lat) {
        qsort(lat, (size_t)p->count, sizeof *lat, cmp_double);
        printf(",\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f",
               quantile(lat, p->count, 0.5) * 1e3, quantile(lat, p->count, 0.99) * 1e3,
               lat[0] * 1e3, lat[p->count - 1] * 1e3);
    }
    printf("}");
    free(lat);
    return 0;
}

static int cmd_stdio(const char *phases_path, char **argv)
{
    static phase ph[PHASES_MAX];
    int nph = 0;
    if (load_phases(phases_path, ph, &nph) != 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    reader rd = {.buf = malloc(LINE_MAX_BYTES + 1)};
    if (!rd.buf)
        return 1;
    int to = -1;
    double t0 = now_s();
    pid_t pid = spawn(argv, &to, &rd.fd);
    if (pid < 0) {
        fprintf(stderr, "bench_mcp: cannot start %s\n", argv[0]);
        return 1;
    }
    char req[1024];
    int n = format_req(req, sizeof req, INIT_REQ, 1);
    size_t len = 0;
    char *line = NULL;
    if (write_all(to, req, (size_t)n) == 0)
        while ((line = reader_line(&rd, "\n", 1, &len)) != NULL && reply_id(line) != 1)
            ;
    double startup = now_s() - t0;
    if (!line) {
        fprintf(stderr, "bench_mcp: no initialize reply from %s\n", argv[0]);
        return 1;
    }
    if (write_all(to, INITED, sizeof INITED - 1) != 0)
        return 1;
    printf("{\"command\":\"%s\",\"pid\":%d,\"startup_ms\":%.3f,\"rss_after_init_kb\":%ld,"
           "\"phases\":[",
           argv[0], (int)pid, startup * 1e3, vm_field_kb(pid, "VmRSS:"));
    long next_id = 2;
    int rc = 0;
    for (int i = 0; i < nph && rc == 0; i++)
        rc = run_phase(&ph[i], to, &rd, &next_id, i == 0);
    long hwm = vm_field_kb(pid, "VmHWM:"), rss = vm_field_kb(pid, "VmRSS:");
    close(to);
    double tc = now_s();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    printf(
        "\n  ],\"vmhwm_kb\":%ld,\"vmrss_kb\":%ld,\"exit_ms\":%.3f,\"exit_status\":%d,\"ok\":%s}\n",
        hwm, rss, (now_s() - tc) * 1e3, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
        rc == 0 ? "true" : "false");
    free(rd.buf);
    return rc == 0 ? 0 : 1;
}

/* ---- echo ------------------------------------------------------------ */

static int cmd_echo(void)
{
    reader rd = {.fd = 0, .buf = malloc(LINE_MAX_BYTES + 1)};
    if (!rd.buf)
        return 1;
    static char out[256];
    size_t len;
    char *line;
    while ((line = reader_line(&rd, "\n", 1, &len)) != NULL) {
        long id = reply_id(line);
        if (id < 0)
            continue; /* a notification */
        int n =
            snprintf(out, sizeof out,
                     id == 1 ? "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"protocolVersion\":"
                               "\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":"
                               "\"echo\",\"version\":\"1\"}}}\n"
                             : "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{}}\n",
                     id);
        if (write_all(1, out, (size_t)n) != 0)
            break;
    }
    free(rd.buf);
    return 0;
}

/* ---- sql ------------------------------------------------------------- */

static int cmd_sql(const char *db_path, long count, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    /* mcpage's texts are read through mcpage_text (the view message_text) */
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        store_sqlite_text_register(db) != 0 ||
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_mcp sql: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return 1;
    }
    double *lat = malloc(sizeof(double) * (size_t)count);
    long rows = 0;
    for (long i = 0; lat && i < count; i++) {
        double t0 = now_s();
        rows = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            rows++;
        sqlite3_reset(st);
        lat[i] = now_s() - t0;
        if (rc != SQLITE_DONE) {
            fprintf(stderr, "bench_mcp sql: %s\n", sqlite3_errmsg(db));
            free(lat);
            sqlite3_finalize(st);
            sqlite3_close(db);
            return 1;
        }
    }
    qsort(lat, (size_t)count, sizeof *lat, cmp_double);
    printf("{\"count\":%ld,\"rows\":%ld,\"p50_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,"
           "\"sqlite\":\"%s\"}\n",
           count, rows, quantile(lat, count, 0.5) * 1e3, lat[0] * 1e3, lat[count - 1] * 1e3,
           sqlite3_libversion());
    free(lat);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}

/* ---- http ------------------------------------------------------------ */

static int g_port;
static const char *g_req;

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

/*
 * Reads one HTTP response: status, session id (when asked), body into
 * *body (NUL-terminated, inside the reader's buffer copy `bodybuf`).
 */
static int read_response(reader *r, char *sid, size_t sidmax, char *bodybuf, size_t bodymax)
{
    size_t n;
    char *line = reader_line(r, "\r\n", 2, &n);
    if (!line || n < 12)
        return -1;
    int status = atoi(line + 9);
    long clen = -1;
    bool chunked = false;
    for (;;) {
        if ((line = reader_line(r, "\r\n", 2, &n)) == NULL)
            return -1;
        if (n == 0)
            break;
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            clen = atol(line + 15);
        else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strcasestr(line, "chunked"))
            chunked = true;
        else if (sid && strncasecmp(line, "Mcp-Session-Id:", 15) == 0) {
            const char *v = line + 15;
            while (*v == ' ')
                v++;
            snprintf(sid, sidmax, "%s", v);
        }
    }
    size_t got = 0;
    if (chunked) {
        for (;;) {
            if ((line = reader_line(r, "\r\n", 2, &n)) == NULL)
                return -1;
            size_t k = (size_t)strtoul(line, NULL, 16);
            if (k == 0) {
                if (reader_line(r, "\r\n", 2, &n) == NULL)
                    return -1;
                break;
            }
            while (r->len - r->off < k + 2)
                if (reader_fill(r) != 0)
                    return -1;
            if (bodybuf && got + k < bodymax) {
                memcpy(bodybuf + got, r->buf + r->off, k);
                got += k;
            }
            r->off += k + 2;
        }
    } else if (clen > 0) {
        while (r->len - r->off < (size_t)clen)
            if (reader_fill(r) != 0)
                return -1;
        if (bodybuf && (size_t)clen < bodymax) {
            memcpy(bodybuf, r->buf + r->off, (size_t)clen);
            got = (size_t)clen;
        }
        r->off += (size_t)clen;
    }
    if (bodybuf && bodymax)
        bodybuf[got] = '\0';
    return status;
}

/* Sends a POST as one write (headers and body together, as most clients do). */
static int post(int fd, const char *sid, const char *json, size_t jlen)
{
    char msg[REQ_MAX + 1024];
    int n =
        snprintf(msg, sizeof msg,
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\n%s%s%sContent-Length: %zu\r\n\r\n",
                 g_port, sid ? "Mcp-Session-Id: " : "", sid ? sid : "", sid ? "\r\n" : "", jlen);
    if (n < 0 || (size_t)n + jlen >= sizeof msg)
        return -1;
    memcpy(msg + n, json, jlen);
    return write_all(fd, msg, (size_t)n + jlen);
}

/* One HTTP load thread. */
typedef struct worker {
    pthread_t t;    /* thread */
    double until;   /* stop time */
    long calls;     /* calls answered with a result */
    long errors;    /* calls failed */
    long sse;       /* answers that came as an SSE stream */
    double *lat;    /* latency samples (s) */
    long nlat, cap; /* samples kept, room */
    char err[200];  /* first failure */
} worker;

static void *http_work(void *arg)
{
    worker *w = arg;
    reader rd = {.fd = dial(), .buf = malloc(LINE_MAX_BYTES + 1)};
    size_t bodymax = 1 << 20;
    char *body = malloc(bodymax);
    char sid[2048] = "", req[REQ_MAX + 64]; /* ids run to 1,500 characters */
    if (rd.fd < 0 || !rd.buf || !body) {
        snprintf(w->err, sizeof w->err, "cannot connect: %s", strerror(errno));
        w->errors++;
        goto done;
    }
    int n = format_req(req, sizeof req, INIT_REQ, 1);
    int st = -1;
    if (post(rd.fd, NULL, req, (size_t)n - 1) != 0 ||
        (st = read_response(&rd, sid, sizeof sid, body, bodymax)) != 200 || !sid[0]) {
        snprintf(w->err, sizeof w->err, "initialize: HTTP %d, session id '%.100s'", st, sid);
        w->errors++;
        goto done;
    }
    if (post(rd.fd, sid, INITED, sizeof INITED - 2) != 0 ||
        (st = read_response(&rd, NULL, 0, NULL, 0)) != 202) {
        snprintf(w->err, sizeof w->err, "initialized: HTTP %d", st);
        w->errors++;
        goto done;
    }
    for (long id = 2; now_s() < w->until; id++) {
        n = format_req(req, sizeof req, g_req, id);
        double t0 = now_s();
        if (post(rd.fd, sid, req, (size_t)n - 1) != 0 ||
            (st = read_response(&rd, NULL, 0, body, bodymax)) != 200) {
            snprintf(w->err, sizeof w->err, "call: HTTP %d", st);
            w->errors++;
            break;
        }
        const char *msg = strstr(body, "{\"");
        if (!msg || !strstr(msg, "\"result\":") || strstr(msg, "\"isError\":true")) {
            snprintf(w->err, sizeof w->err, "call: %.150s", body);
            w->errors++;
            break;
        }
        if (strncmp(body, "event:", 6) == 0 || strncmp(body, "data:", 5) == 0 ||
            strncmp(body, "id:", 3) == 0)
            w->sse++;
        w->calls++;
        if (w->nlat < w->cap)
            w->lat[w->nlat++] = now_s() - t0;
    }
    if (sid[0]) {
        char del[2600];
        n = snprintf(del, sizeof del,
                     "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nMcp-Session-Id: %s\r\n\r\n",
                     g_port, sid);
        if (write_all(rd.fd, del, (size_t)n) == 0)
            read_response(&rd, NULL, 0, NULL, 0);
    }
done:
    if (rd.fd >= 0)
        close(rd.fd);
    free(rd.buf);
    free(body);
    return NULL;
}

static int cmd_http(int port, int sessions, double secs, const char *request)
{
    g_port = port;
    g_req = request;
    signal(SIGPIPE, SIG_IGN);
    worker *ws = calloc((size_t)sessions, sizeof *ws);
    if (!ws)
        return 1;
    double t0 = now_s();
    for (int i = 0; i < sessions; i++) {
        ws[i].until = t0 + secs;
        ws[i].cap = 2000000 / sessions;
        ws[i].lat = malloc(sizeof(double) * (size_t)ws[i].cap);
        pthread_create(&ws[i].t, NULL, http_work, &ws[i]);
    }
    long calls = 0, errors = 0, nlat = 0, sse = 0;
    const char *err = "";
    for (int i = 0; i < sessions; i++) {
        pthread_join(ws[i].t, NULL);
        calls += ws[i].calls;
        errors += ws[i].errors;
        sse += ws[i].sse;
        nlat += ws[i].nlat;
        if (ws[i].err[0] && !err[0])
            err = ws[i].err;
    }
    double el = now_s() - t0;
    double *all = malloc(sizeof(double) * (size_t)(nlat + 1));
    long k = 0;
    for (int i = 0; i < sessions; i++) {
        memcpy(all + k, ws[i].lat, sizeof(double) * (size_t)ws[i].nlat);
        k += ws[i].nlat;
    }
    qsort(all, (size_t)k, sizeof *all, cmp_double);
    printf("{\"sessions\":%d,\"seconds\":%.3f,\"calls\":%ld,\"errors\":%ld,\"sse_answers\":%ld,"
           "\"rps\":%.1f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"first_error\":\"",
           sessions, el, calls, errors, sse, (double)calls / el, quantile(all, k, 0.5) * 1e3,
           quantile(all, k, 0.99) * 1e3);
    for (const char *c = err; *c; c++)
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if ((unsigned char)*c >= 0x20)
            putchar(*c);
    printf("\"}\n");
    for (int i = 0; i < sessions; i++)
        free(ws[i].lat);
    free(all);
    free(ws);
    return errors == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "stdio") == 0 && strcmp(argv[3], "--") == 0)
        return cmd_stdio(argv[2], argv + 4);
    if (argc == 6 && strcmp(argv[1], "http") == 0)
        return cmd_http(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), argv[5]);
    if (argc == 2 && strcmp(argv[1], "echo") == 0)
        return cmd_echo();
    if (argc == 5 && strcmp(argv[1], "sql") == 0)
        return cmd_sql(argv[2], atol(argv[3]), argv[4]);
    fprintf(stderr, "usage: bench_mcp stdio PHASES -- CMD [ARGS...]\n"
                    "       bench_mcp http PORT SESSIONS SECONDS REQUEST\n"
                    "       bench_mcp echo\n"
                    "       bench_mcp sql DB COUNT SQL\n");
    return 2;
}
