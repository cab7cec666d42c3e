/*
 * libFuzzer target: raw HTTP/1.1 bytes into the Streamable HTTP
 * transport, through libmicrohttpd's real parser and our callbacks:
 * routing, the Host/Origin/token/media-type/version checks, bodies and
 * their budget, the JSON-RPC envelope, sessions (initialize, lookup,
 * restore from a signed id, DELETE), streams (GET, Last-Event-ID) and
 * the cancel state machine (a call on one connection, its cancel on the
 * next).
 *
 * The daemon runs without a socket or a thread of its own (http_start
 * with `external`): each input is cut at "\n~~\n" into at most four
 * connections, each a socketpair handed to MHD_add_connection and run
 * with MHD_run until the server closes it or a few milliseconds pass.
 * "@SID@" in the input becomes the id of a session opened at start, so
 * the fuzzer reaches the paths behind a valid session. Every answer must
 * start with an HTTP/1.1 status line, and a JSON answer with a length
 * must be one JSON object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>

#include <mcpage/http.h>
#include <mcpage/server.h>

#include "transport/http_internal.h"

/* The fixture registry is compiled in: the fuzz build has no test libraries. */
#include "../tests/fixtures/fixture_registry.c"

/* Most connections per input, and the bytes of answer kept per connection. */
#define FUZZ_CONNS  4
#define FUZZ_ANSWER 65536

static mcpage_server *fuzz_server;
static mcpage_http *fuzz_http;
static char fuzz_sid[SESSION_ID_MAX + 1]; /* the session opened at start */

/* One client end and what it read. */
typedef struct fuzz_conn {
    int fd;                   /* our end of the socketpair, -1 once closed */
    char answer[FUZZ_ANSWER]; /* bytes kept */
    size_t len;               /* their count */
    bool eof;                 /* the server closed it */
} fuzz_conn;

static fuzz_conn conns[FUZZ_CONNS];

/* Hands one end of a new socketpair to the daemon; our end is non-blocking. */
static int fuzz_connect(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(40000)};
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (MHD_add_connection(fuzz_http->d, sv[1], (struct sockaddr *)&peer, sizeof peer) != MHD_YES)
        abort();
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    return sv[0];
}

/* Reads what is there; true when anything came or the server closed. */
static bool fuzz_drain(fuzz_conn *cn)
{
    bool moved = false;
    for (;;) {
        char buf[16384];
        ssize_t k = read(cn->fd, buf, sizeof buf);
        if (k > 0) {
            size_t keep = (size_t)k < FUZZ_ANSWER - cn->len ? (size_t)k : FUZZ_ANSWER - cn->len;
            memcpy(cn->answer + cn->len, buf, keep);
            cn->len += keep;
            moved = true;
            continue;
        }
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            cn->eof = true;
            moved = true;
        }
        return moved;
    }
}

/*
 * Runs the daemon until every open connection was closed by the server,
 * or nothing moved for `idle` rounds in a row (answers that come later,
 * from a worker, are read by the next input's rounds or dropped).
 */
static void fuzz_run(int idle)
{
    for (int quiet = 0; quiet < idle;) {
        MHD_run(fuzz_http->d);
        bool open = false, moved = false;
        for (int i = 0; i < FUZZ_CONNS; i++) {
            if (conns[i].fd < 0 || conns[i].eof)
                continue;
            moved |= fuzz_drain(&conns[i]);
            open |= !conns[i].eof;
        }
        if (!open)
            return;
        quiet = moved ? 0 : quiet + 1;
        if (!moved)
            sched_yield(); /* let a worker answer */
    }
}

/* Checks one connection's answers: status lines, and JSON bodies that are one object. */
static void fuzz_check(const fuzz_conn *cn)
{
    if (cn->len == 0)
        return;
    if (cn->len < 12 || memcmp(cn->answer, "HTTP/1.1 ", 9) != 0) {
        fprintf(stderr, "fuzz_http: not an HTTP/1.1 answer: %.*s\n",
                (int)(cn->len > 200 ? 200 : cn->len), cn->answer);
        abort();
    }
    const char *end = memmem(cn->answer, cn->len, "\r\n\r\n", 4);
    if (end == NULL)
        return; /* cut by FUZZ_ANSWER or still streaming */
    size_t head = (size_t)(end - cn->answer) + 4;
    /* Header lines start after a CRLF (a reflected value may contain a header's name). */
    const char *ct = memmem(cn->answer, head, "\r\nContent-Type: application/json\r\n", 34);
    const char *cl = memmem(cn->answer, head, "\r\nContent-Length: ", 18);
    if (ct == NULL || cl == NULL)
        return;
    size_t blen = strtoull(cl + 18, NULL, 10);
    if (blen == 0 || head + blen > cn->len)
        return;
    json_error_t err;
    json_t *v = json_loadb(cn->answer + head, blen, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(v)) {
        fprintf(stderr, "fuzz_http: a JSON answer is not one object (%s): %.*s\n", err.text,
                (int)(cn->len > 600 ? 600 : cn->len), cn->answer);
        abort();
    }
    json_decref(v);
}

/* Writes `text` (with "@SID@" replaced) on a new connection. */
static void fuzz_open(fuzz_conn *cn, const char *text, size_t len, bool half_close)
{
    cn->fd = fuzz_connect();
    cn->len = 0;
    cn->eof = false;
    while (len > 0) {
        const char *at = memmem(text, len, "@SID@", 5);
        size_t n = at ? (size_t)(at - text) : len;
        if (n && write(cn->fd, text, n) < 0)
            break;
        if (at && write(cn->fd, fuzz_sid, strlen(fuzz_sid)) < 0)
            break;
        text += n + (at ? 5 : 0);
        len -= n + (at ? 5 : 0);
    }
    if (half_close)
        shutdown(cn->fd, SHUT_WR);
}

static void fuzz_close_all(void)
{
    for (int i = 0; i < FUZZ_CONNS; i++) {
        if (conns[i].fd >= 0) {
            fuzz_check(&conns[i]);
            close(conns[i].fd);
            conns[i].fd = -1;
        }
    }
    MHD_run(fuzz_http->d); /* the daemon notices the closed peers */
    MHD_run(fuzz_http->d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fuzz", "1");
    cfg.workers = 2;
    cfg.max_inflight = 8;
    cfg.max_message = 65536;
    if (mcpage_server_new(&cfg, &fuzz_server) != 0 || fixture_register(fuzz_server) != 0)
        abort();
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    hc.max_sessions = 64;
    hc.session_idle_s = 2;
    hc.stream_buffer = 4096;
    hc.max_buffered = (size_t)256 << 10;
    hc.body_timeout_s = 2;
    hc.request_timeout_s = 2;
    if (http_start(fuzz_server, &hc, true, &fuzz_http) != 0)
        abort();
    for (int i = 0; i < FUZZ_CONNS; i++)
        conns[i].fd = -1;
    static const char body[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}";
    char init[512];
    int n0 =
        snprintf(init, sizeof init,
                 "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
                 sizeof body - 1, body);
    fuzz_open(&conns[0], init, (size_t)n0, true);
    for (int i = 0; i < 1000 && !conns[0].eof; i++) {
        fuzz_run(4);
        usleep(1000);
    }
    const char *h = memmem(conns[0].answer, conns[0].len, "Mcp-Session-Id: ", 16);
    if (h == NULL) {
        fprintf(stderr, "fuzz_http: no session at start: %.*s\n", (int)conns[0].len,
                conns[0].answer);
        abort();
    }
    size_t n = strcspn(h + 16, "\r\n");
    memcpy(fuzz_sid, h + 16, n < SESSION_ID_MAX ? n : SESSION_ID_MAX);
    fuzz_close_all();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool half_close = (data[0] & 1) != 0; /* the client ends its side after writing */
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    for (int i = 0; i < FUZZ_CONNS && len > 0; i++) {
        const char *cut = memmem(text, len, "\n~~\n", 4);
        size_t n = cut ? (size_t)(cut - text) : len;
        fuzz_open(&conns[i], text, n, half_close);
        fuzz_run(2);
        text += n + (cut ? 4 : 0);
        len -= n + (cut ? 4 : 0);
    }
    fuzz_close_all();
    return 0;
}
