/*
 * libFuzzer target for the secret scanner (src/sync/sync_redact.c) and the
 * parser of a user's rules (src/sync/sync_redact_config.c). The first byte
 * picks the rules: none, a fixed set (two patterns, two exceptions), or
 * rules parsed from the input up to its first NUL byte (the parser fuzzed
 * too). The rest is scanned as a transcript line is. Checks: no crash, no
 * leak; the counts add up to what it returned; bytes change only inside
 * markers' spans (the length is kept by construction); a second scan
 * finds nothing and changes nothing; a line that was JSON stays JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sync/sync_redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_rules[] =
    "{\"patterns\": [{\"name\": \"acme\", \"prefix\": \"acme_\", \"min_length\": 8},"
    " {\"name\": \"acme-live\", \"prefix\": \"acme_live_\"}, {\"name\": \"x\", \"prefix\": \"t-k\","
    " \"min_length\": 8}],"
    " \"allow\": [\"AKIAIOSFODNN7EXAMPLE\", \"acme_live_0000000000000000\"]}";

static sync_redact_rules *fixed;

static void changed_inside(void *arg, size_t offset, int kind)
{
    (void)kind;
    size_t *hits = arg;
    (void)offset;
    (*hits)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (fixed == NULL) {
        char err[256];
        if (sync_redact_rules_parse(fixed_rules, sizeof fixed_rules - 1, &fixed, err, sizeof err))
            abort();
    }
    int mode = data[0] % 3;
    data++, size--;
    sync_redact_rules *rules = mode == 1 ? fixed : NULL, *parsed = NULL;
    if (mode == 2) {
        const uint8_t *nul = memchr(data, 0, size);
        size_t n = nul ? (size_t)(nul - data) : size;
        char err[512] = "";
        int rc = sync_redact_rules_parse((const char *)data, n, &parsed, err, sizeof err);
        if (rc != 0 && (parsed != NULL || err[0] == '\0'))
            abort(); /* a refusal always says why, and leaves nothing */
        rules = parsed;
        data += nul ? n + 1 : n;
        size -= nul ? n + 1 : n;
    }
    char *buf = malloc(size + 1);
    char *before = malloc(size + 1);
    if (buf == NULL || before == NULL)
        abort();
    memcpy(buf, data, size);
    buf[size] = '\0';
    memcpy(before, buf, size + 1);
    int was_json = 0;
    json_t *j = json_loadb(buf, size, JSON_DECODE_ANY, NULL);
    if (j != NULL) {
        was_json = 1;
        json_decref(j);
    }

    sync_redact_counts c = {0};
    size_t hits = 0;
    size_t k = sync_redact(rules, buf, size, &c, changed_inside, &hits);
    long long sum = 0;
    for (int i = 0; i < REDACT_KINDS; i++)
        sum += c.n[i];
    if ((size_t)sum != k || hits != k)
        abort();
    if (k == 0 && memcmp(buf, before, size) != 0)
        abort(); /* nothing redacted, nothing changed */
    if (buf[size] != '\0')
        abort();
    /* a changed byte is a marker's: '[', ']', '*', ':', '-' or a letter of a name */
    for (size_t i = 0; i < size; i++)
        if (buf[i] != before[i] &&
            !(buf[i] == '[' || buf[i] == ']' || buf[i] == '*' || buf[i] == ':' || buf[i] == '-' ||
              (buf[i] >= 'A' && buf[i] <= 'Z') || (buf[i] >= 'a' && buf[i] <= 'z') ||
              (buf[i] >= '0' && buf[i] <= '9')))
            abort();
    if (was_json) {
        json_t *again = json_loadb(buf, size, JSON_DECODE_ANY, NULL);
        if (again == NULL)
            abort(); /* redaction broke a JSON line */
        json_decref(again);
    }
    memcpy(before, buf, size + 1);
    if (sync_redact(rules, buf, size, NULL, NULL, NULL) != 0 || memcmp(buf, before, size) != 0)
        abort(); /* a second scan changes nothing */
    sync_redact_rules_free(parsed);
    free(before);
    free(buf);
    return 0;
}
