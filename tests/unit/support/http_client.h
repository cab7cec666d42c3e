/*
 * Test support for the HTTP transport: a raw HTTP/1.1 client on loopback
 * sockets, so tests write the exact bytes a client (or an attacker)
 * sends and read the exact answer.
 */
#ifndef MCPAGE_TESTS_HTTP_CLIENT_H
#define MCPAGE_TESTS_HTTP_CLIENT_H

#include <stddef.h>

/* Room for a session id (signed ids run to about 150 characters). */
#define SID_MAX 2048

/* A request that initializes a 2025-11-25 session with empty capabilities. */
extern const char HC_INIT[];

/* Connects to 127.0.0.1:port (a small receive window makes a slow reader slow). */
int hc_dial(int port);
/*
 * Writes one request: `method` /mcp with our Host, Content-Type JSON,
 * `accept`, the session id when given, `extra` header lines ("K: V\r\n")
 * and `body` (or none).
 */
void hc_send(int fd, int port, const char *method, const char *sid, const char *accept,
             const char *extra, const char *body);
/*
 * Reads until the server closes or `wait_ms` passes in silence, keeping
 * at most `max` bytes; closes fd and returns a malloc'd string. *total
 * (if given) gets every byte read.
 */
char *hc_read_all(int fd, size_t max, size_t *total, int wait_ms);
/* Initializes a session with `init` on `port`; copies its id into sid. */
void hc_init(int port, const char *init, char *sid, size_t max);
/* POSTs one message on a session and returns the whole answer (malloc'd). */
char *hc_post(int port, const char *sid, const char *body);
/* Milliseconds on a monotonic clock. */
double hc_now_ms(void);
/* This process's resident memory in MiB (from /proc/self/statm). */
double hc_rss_mib(void);

#endif
