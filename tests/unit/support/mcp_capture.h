/*
 * Test support for the runtime: a session whose transport captures every
 * message it sends, so tests can send a line and read the replies back
 * as JSON values.
 */
#ifndef MCPAGE_TESTS_MCP_CAPTURE_H
#define MCPAGE_TESTS_MCP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <mcpage/server.h>

/* Most messages held before the oldest are dropped (a test bug). */
#define CAPTURE_MAX 4096

typedef struct capture {
    mcpage_server *srv;         /* the server (fixture registry unless told otherwise) */
    mcpage_session *s;          /* the session under test */
    json_t *msgs[CAPTURE_MAX];  /* messages sent, oldest first */
    char *related[CAPTURE_MAX]; /* their related request ids (JSON text), or NULL */
    size_t n;                   /* messages held */
    size_t raw_bad;             /* messages that were not one JSON object, or had a newline */
    void *lock;                 /* pthread mutex */
} capture;

/* A server with the fixture registry and `page_size`, and a session on it. */
capture *capture_new(size_t page_size);
/* A session on an existing server (not freed by capture_free). */
capture *capture_on(mcpage_server *srv);
void capture_free(capture *c);
/* Sends one message (text) and waits until every call it started finished. */
void capture_send(capture *c, const char *msg);
void capture_sendn(capture *c, const char *msg, size_t len);
/* Takes the oldest captured message (caller decrefs), or NULL. */
json_t *capture_take(capture *c);
/* Like capture_take, also handing over the related id (caller frees; may be NULL). */
json_t *capture_take_related(capture *c, char **related);
/* Takes the oldest message and checks it is an error with `code`; returns it. */
json_t *capture_take_error(capture *c, int code);
/* Drops every captured message. */
void capture_clear(capture *c);
/* Sends initialize (2025-11-25) and notifications/initialized; drops the reply. */
void capture_init(capture *c);

#endif
