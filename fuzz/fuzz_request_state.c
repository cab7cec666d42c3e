/*
 * libFuzzer target: the requestState of the modern era's multi round-trip
 * requests (src/mcp/modern.c), through a session, on a tool that asks the
 * client two questions. fuzz_dispatch reaches only the refusal of text
 * that was never signed; this target also holds real states and the key.
 * The first byte picks what the rest becomes:
 *   0: the requestState text itself: refused (-32602) unless it is one
 *      of the states the server issued;
 *   1: edits (position, byte) to a real state: refused unless the edits
 *      left it unchanged (base64url has one encoding, the tag covers
 *      every payload byte);
 *   2: the inputResponses JSON sent with a real state: answered with a
 *      result or an error, never a crash;
 *   3: a payload signed with the server's key (bits 2 and 3 of the first
 *      byte put the request's binding and a live expiry in it; bit 4
 *      signs with another key under the same id instead): opened exactly
 *      when the payload is what the server would have issued for this
 *      request (binding, unexpired, round 1..1000000, answers an object)
 *      and the key is the server's.
 * Every message the server sends must be one JSON object.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include <mcpage/server.h>

#include "page/base64.h"
#include "page/seal.h"

#define STATE_PREFIX  "rs1."
#define STATE_PURPOSE "mcp-request-state"
#define STATE_REFRESH 600 /* seconds: states live 900, fetch new ones well before */
#define KID           7

static const uint8_t key_ours[32] = {1, 3, 5, 7, 9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
                                     2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32};
static const uint8_t key_other[32] = {32, 30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2,
                                      31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9,  7, 5, 3, 1};

static mcpage_server *fuzz_server;
static mcpage_keyring *ring_ours, *ring_other;
static char *state1, *state2; /* issued for round 1 and round 2 of the same request */
static char binding[64];      /* the "b" of those states */
static time_t states_at;

/* The answer to the last request, captured from the session's output. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *answer;

/* Asks a name, then a colour, and greets. Answers of any shape are tolerated. */
static int tool_two_questions(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a1 = NULL, *a2 = NULL;
    int rc = mcpage_call_input(call, "name", "elicitation/create", NULL, 1000, &a1);
    if (rc == 0)
        rc = mcpage_call_input(call, "colour", "elicitation/create", NULL, 1000, &a2);
    if (rc == 0) {
        const char *name = json_string_value(json_object_get(json_object_get(a1, "content"), "n"));
        char text[200];
        int n = snprintf(text, sizeof text, "%.80s, round %d", name ? name : "?",
                         mcpage_call_round(call));
        rc = mcpage_result_add_text(res, text, (size_t)n);
    }
    json_decref(a1);
    json_decref(a2);
    return rc;
}

static int capture(void *ud, const char *msg, size_t len, const char *related_id)
{
    (void)ud;
    (void)related_id;
    json_error_t err;
    json_t *v = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(v) || memchr(msg, '\n', len) != NULL) {
        fprintf(stderr, "fuzz_request_state: bad message (%s): %.*s\n", err.text,
                (int)(len > 500 ? 500 : len), msg);
        abort();
    }
    pthread_mutex_lock(&out_lock);
    if (json_object_get(v, "id") != NULL) {
        json_decref(answer);
        answer = json_incref(v);
    }
    pthread_mutex_unlock(&out_lock);
    json_decref(v);
    return 0;
}

/* Sends tools/call two_questions with `extra` params; returns the answer (caller frees). */
static json_t *call_tool(const char *extra, size_t extra_len)
{
    static const char head[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"two_questions\",\"arguments\":{},\"_meta\":{\"io.modelcontextprotocol/"
        "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{"
        "\"elicitation\":{}}}";
    size_t n = sizeof head - 1 + (extra_len ? 1 + extra_len : 0) + 2;
    char *msg = malloc(n + 1);
    if (msg == NULL)
        abort();
    size_t at = 0;
    memcpy(msg, head, sizeof head - 1);
    at = sizeof head - 1;
    if (extra_len) {
        msg[at++] = ',';
        memcpy(msg + at, extra, extra_len);
        at += extra_len;
    }
    memcpy(msg + at, "}}", 2);
    at += 2;
    msg[at] = '\0';

    mcpage_session *s;
    if (mcpage_session_new(fuzz_server, capture, NULL, &s) != 0)
        abort();
    mcpage_session_receive(s, msg, at);
    if (mcpage_session_drain(s, 1000) != 0) {
        mcpage_session_cancel_all(s);
        mcpage_session_drain(s, -1);
    }
    mcpage_session_free(s);
    free(msg);
    pthread_mutex_lock(&out_lock);
    json_t *got = answer;
    answer = NULL;
    pthread_mutex_unlock(&out_lock);
    return got;
}

/* "requestState":"<text>" with the text JSON-escaped; free the result. */
static char *state_param(const char *text, size_t len, const char *more)
{
    json_t *p = json_pack("{s:s%}", "requestState", text, len);
    char *body = p ? json_dumps(p, JSON_COMPACT) : NULL;
    json_decref(p);
    if (body == NULL)
        return NULL;
    size_t bl = strlen(body), ml = more ? strlen(more) : 0;
    char *out = malloc(bl + ml + 2);
    if (out == NULL)
        abort();
    memcpy(out, body + 1, bl - 2); /* without the braces */
    size_t at = bl - 2;
    if (more) {
        out[at++] = ',';
        memcpy(out + at, more, ml);
        at += ml;
    }
    out[at] = '\0';
    free(body);
    return out;
}

static char *copy_text(const char *text)
{
    size_t n = strlen(text) + 1;
    char *out = malloc(n);
    if (out == NULL)
        abort();
    return memcpy(out, text, n);
}

static bool string_is(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static const char *state_of(const json_t *msg)
{
    const json_t *r = json_object_get(msg, "result");
    if (!string_is(json_object_get(r, "resultType"), "input_required"))
        return NULL;
    return json_string_value(json_object_get(r, "requestState"));
}

static bool refused(const json_t *msg)
{
    const json_t *e = json_object_get(msg, "error");
    const char *text = json_string_value(json_object_get(e, "message"));
    return json_integer_value(json_object_get(e, "code")) == -32602 && text != NULL &&
           strstr(text, "requestState refused") != NULL;
}

/* The payload of a state this target holds (it knows the layout of modern.c). */
static json_t *payload_of(const char *state)
{
    size_t len = strlen(state) - strlen(STATE_PREFIX);
    uint8_t *raw = malloc(len);
    long n = raw ? b64_decode(state + strlen(STATE_PREFIX), len, raw, true) : -1;
    json_t *p = n > 1 + SEAL_TAG_LEN ? json_loadb((const char *)raw + 1 + SEAL_TAG_LEN,
                                                  (size_t)n - 1 - SEAL_TAG_LEN, 0, NULL)
                                     : NULL;
    free(raw);
    return p;
}

/* Fetches a fresh pair of states (round 1, then round 2 with the name answered). */
static void fetch_states(void)
{
    free(state1);
    free(state2);
    json_t *m1 = call_tool("", 0);
    const char *s1 = state_of(m1);
    if (s1 == NULL)
        abort();
    state1 = copy_text(s1);
    char *extra = state_param(state1, strlen(state1),
                              "\"inputResponses\":{\"name\":{\"action\":\"accept\",\"content\":{"
                              "\"n\":\"Ada\"}}}");
    json_t *m2 = call_tool(extra, strlen(extra));
    const char *s2 = state_of(m2);
    if (s2 == NULL)
        abort();
    state2 = copy_text(s2);
    json_t *p = payload_of(state2);
    const char *b = json_string_value(json_object_get(p, "b"));
    if (b == NULL || strlen(b) >= sizeof binding)
        abort();
    strcpy(binding, b);
    json_decref(p);
    free(extra);
    json_decref(m1);
    json_decref(m2);
    states_at = time(NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (mcpage_keyring_new(&ring_ours) != 0 || mcpage_keyring_new(&ring_other) != 0 ||
        mcpage_keyring_add(ring_ours, KID, key_ours, sizeof key_ours, true) != 0 ||
        mcpage_keyring_add(ring_other, KID, key_other, sizeof key_other, true) != 0)
        abort();
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fuzz", "1");
    cfg.workers = 2;
    cfg.max_inflight = 8;
    cfg.max_message = 1 << 20;
    cfg.keyring = ring_ours;
    mcpage_tool tool = {.name = "two_questions", .handler = tool_two_questions};
    if (mcpage_server_new(&cfg, &fuzz_server) != 0 || mcpage_server_add_tool(fuzz_server, &tool))
        abort();
    fetch_states();
    return 0;
}

/* Seals `payload` as the server does, with `ring`'s key. */
static char *seal(const mcpage_keyring *ring, const char *payload, size_t n)
{
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)payload, n, md);
    uint8_t *raw = malloc(1 + SEAL_TAG_LEN + n);
    char *text = malloc(strlen(STATE_PREFIX) + b64_encoded_len(1 + SEAL_TAG_LEN + n, true) + 1);
    if (raw == NULL || text == NULL)
        abort();
    raw[0] = KID;
    if (mcpage__seal_tag(ring, KID, STATE_PURPOSE, md, sizeof md, raw + 1) != 0)
        abort();
    memcpy(raw + 1 + SEAL_TAG_LEN, payload, n);
    strcpy(text, STATE_PREFIX);
    size_t len = strlen(STATE_PREFIX) +
                 b64_encode(raw, 1 + SEAL_TAG_LEN + n, text + strlen(STATE_PREFIX), true);
    text[len] = '\0';
    free(raw);
    return text;
}

/*
 * Whether modern.c must open this payload for the request (its documented
 * checks): 1 yes, 0 no, -1 either (an expiry within a few seconds of now
 * may pass or not, as the clock ticks between here and there).
 */
static int payload_valid(const json_t *p, time_t now)
{
    const json_t *b = json_object_get(p, "b"), *x = json_object_get(p, "x");
    const json_t *r = json_object_get(p, "r"), *a = json_object_get(p, "a");
    if (!json_is_object(p) || !string_is(b, binding) || !json_is_integer(x) ||
        !json_is_integer(r) || json_integer_value(r) < 1 || json_integer_value(r) > 1000000 ||
        !json_is_object(a))
        return 0;
    json_int_t left = json_integer_value(x) - (json_int_t)now;
    return left > 5 ? 1 : left < -5 ? 0 : -1;
}

static void send_state(const char *text, size_t len, const char *more, bool must_refuse,
                       bool must_open)
{
    if (memchr(text, '\0', len) != NULL)
        return; /* the runtime reads no JSON string with \u0000 in it: a parse error */
    char *extra = state_param(text, len, more);
    if (extra == NULL)
        return; /* not UTF-8: jansson will not build the string, nor would a client */
    json_t *m = call_tool(extra, strlen(extra));
    if (m == NULL || (must_refuse && !refused(m)) || (must_open && refused(m))) {
        char *dump = m ? json_dumps(m, JSON_COMPACT) : NULL;
        fprintf(stderr, "fuzz_request_state: state %.*s: must %s, got %.500s\n", (int)len, text,
                must_refuse ? "be refused" : "open", dump ? dump : "no answer");
        abort();
    }
    json_decref(m);
    free(extra);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (time(NULL) - states_at > STATE_REFRESH)
        fetch_states();
    uint8_t mode = data[0];
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    switch (mode & 3) {
    case 0: {
        bool issued = (n == strlen(state1) && memcmp(rest, state1, n) == 0) ||
                      (n == strlen(state2) && memcmp(rest, state2, n) == 0);
        send_state(rest, n, NULL, !issued, issued);
        break;
    }
    case 1: {
        char *st = copy_text(state2);
        size_t len = strlen(st);
        for (size_t i = 0; i + 3 <= n; i += 3) {
            size_t at = ((size_t)(uint8_t)rest[i] << 8 | (uint8_t)rest[i + 1]) % len;
            st[at] = rest[i + 2] ? rest[i + 2] : 'A';
        }
        bool same = strcmp(st, state2) == 0;
        send_state(st, strlen(st), NULL, !same, same);
        free(st);
        break;
    }
    case 2: {
        char *more = malloc(n + 20);
        if (more == NULL)
            abort();
        int k = snprintf(more, n + 20, "\"inputResponses\":%.*s", (int)n, rest);
        if (k > 0 && memchr(rest, '\0', n) == NULL)
            send_state(state1, strlen(state1), more, false, false);
        free(more);
        break;
    }
    default: {
        json_t *p = json_loadb(rest, n, JSON_REJECT_DUPLICATES, NULL);
        time_t now = time(NULL);
        if (json_is_object(p) && (mode & 4))
            json_object_set_new(p, "b", json_string(binding));
        if (json_is_object(p) && (mode & 8))
            json_object_set_new(p, "x", json_integer((json_int_t)now + 60));
        char *text = p ? json_dumps(p, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        const char *payload = text ? text : rest;
        size_t plen = text ? strlen(text) : n;
        bool other = (mode & 16) != 0;
        char *st = seal(other ? ring_other : ring_ours, payload, plen);
        int valid = other ? 0 : payload_valid(p, now);
        /* A payload that is not an object (or not JSON) is refused as damaged. */
        send_state(st, strlen(st), NULL, valid == 0, valid == 1);
        free(st);
        free(text);
        json_decref(p);
        break;
    }
    }
    return 0;
}
