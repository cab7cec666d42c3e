/*
 * A raw HTTP/1.1 client for the transport's tests (see http_client.h).
 */
#define _GNU_SOURCE
#include "support/http_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

const char HC_INIT[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

int hc_dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

void hc_send(int fd, int port, const char *method, const char *sid, const char *accept,
             const char *extra, const char *body)
{
    size_t blen = body ? strlen(body) : 0;
    char head[16384];
    int n = snprintf(head, sizeof head,
                     "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nAccept: %s\r\n%s%s%s%sContent-Length: "
                     "%zu\r\n\r\n",
                     method, port, accept, sid ? "Mcp-Session-Id: " : "", sid ? sid : "",
                     sid ? "\r\n" : "", extra ? extra : "", blen);
    assert_true(n > 0 && (size_t)n < sizeof head);
    assert_int_equal(write(fd, head, (size_t)n), n);
    for (size_t off = 0; off < blen;) {
        ssize_t k = write(fd, body + off, blen - off);
        assert_true(k > 0);
        off += (size_t)k;
    }
}

char *hc_read_all(int fd, size_t max, size_t *total, int wait_ms)
{
    char *out = calloc(1, max + 1);
    size_t len = 0, all = 0;
    char buf[65536];
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) <= 0)
            break;
        ssize_t k = read(fd, buf, sizeof buf);
        if (k <= 0)
            break;
        all += (size_t)k;
        size_t keep = (size_t)k < max - len ? (size_t)k : max - len;
        memcpy(out + len, buf, keep);
        len += keep;
    }
    if (total)
        *total = all;
    close(fd);
    return out;
}

void hc_init(int port, const char *init, char *sid, size_t max)
{
    int fd = hc_dial(port);
    hc_send(fd, port, "POST", NULL, "application/json, text/event-stream", NULL, init);
    char *r = hc_read_all(fd, 1 << 16, NULL, 10000);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "Content-Type: application/json"));
    char *h = strcasestr(r, "Mcp-Session-Id: ");
    assert_non_null(h);
    h += 16;
    size_t n = strcspn(h, "\r\n");
    assert_true(n > 3 && n < max);
    assert_memory_equal(h, "s1.", 3);
    memcpy(sid, h, n);
    sid[n] = '\0';
    free(r);
}

char *hc_post(int port, const char *sid, const char *body)
{
    int fd = hc_dial(port);
    hc_send(fd, port, "POST", sid, "application/json, text/event-stream", NULL, body);
    return hc_read_all(fd, 1 << 16, NULL, 10000);
}

double hc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double hc_rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return (double)rss * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}
