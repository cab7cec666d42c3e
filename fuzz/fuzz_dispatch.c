/*
 * libFuzzer target: bytes through a session on the fixture registry.
 * The first byte picks the mode: bit 0 set feeds the rest as one message,
 * clear splits it into newline-separated messages; bit 1 set sends an
 * initialize first so the fuzzer reaches the methods behind the
 * lifecycle. Every message the server sends must be one JSON object.
 * Calls get 10 ms to finish, then are cancelled.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/server.h>

/* The fixture registry is compiled in: the fuzz build has no test libraries. */
#include "../tests/fixtures/fixture_registry.c"

/* One server for the whole run: creating worker threads per input is too slow. */
static mcpage_server *fuzz_server;

static int check_output(void *ud, const char *msg, size_t len, const char *related_id)
{
    json_error_t err;
    json_t *v = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(v) || memchr(msg, '\n', len) != NULL) {
        fprintf(stderr, "fuzz_dispatch: server sent a bad message (%s): %.*s\n", err.text,
                (int)(len > 500 ? 500 : len), msg);
        abort();
    }
    json_decref(v);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "fuzz", "1");
    cfg.page_size = 7;
    cfg.workers = 2;
    cfg.max_inflight = 8;
    cfg.max_message = 65536;
    if (mcpage_server_new(&cfg, &fuzz_server) != 0 || fixture_register(fuzz_server) != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    const char *msg = (const char *)data + 1;
    size_t len = size - 1;
    mcpage_session *s;
    if (mcpage_session_new(fuzz_server, check_output, NULL, &s) != 0)
        abort();
    if (mode & 2) {
        static const char init[] =
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
            "\"name\":\"fuzz\",\"version\":\"1\"}}}";
        mcpage_session_receive(s, init, sizeof init - 1);
    }
    if (mode & 1) {
        mcpage_session_receive(s, msg, len);
    } else {
        while (len > 0) {
            const char *nl = memchr(msg, '\n', len);
            size_t n = nl ? (size_t)(nl - msg) : len;
            mcpage_session_receive(s, msg, n);
            msg += n + (nl ? 1 : 0);
            len -= n + (nl ? 1 : 0);
        }
    }
    if (mcpage_session_drain(s, 10) != 0) {
        mcpage_session_cancel_all(s);
        mcpage_session_drain(s, -1);
    }
    mcpage_session_free(s);
    return 0;
}
