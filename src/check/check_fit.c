/*
 * Host fit: what each host shows the model of a tool result, and where
 * it cuts. The profiles are one table, checked against their sources
 * (docs/check.md gives each number's source and date); update them here.
 */
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "page/tokens.h"

const check_host check_hosts[] = {
    /* Model sees JSON.stringify(structuredContent) when present; warns at 10,000 tokens,
     * MAX_MCP_OUTPUT_TOKENS 25,000; over 50,000 chars spilled to a file with a preview
     * unless the tool raises _meta["anthropic/maxResultSizeChars"] (up to 500,000). */
    {.name = "Claude Code",
     .past = "refused past the cap, spilled to a file past the characters",
     .copy = CHECK_COPY_STRUCTURED_ELSE_TEXT,
     .chars_raisable = true,
     .warn_tokens = 10000,
     .max_tokens = 25000,
     .max_chars = 50000},
    /* Model-facing output cut to 10 KiB / 256 lines (since 0.56). */
    {.name = "Codex CLI",
     .past = "cut",
     .copy = CHECK_COPY_STRUCTURED_ELSE_TEXT,
     .max_bytes = 10240,
     .max_lines = 256},
    /* The content blocks; truncateToolOutputThreshold, about 40,000 characters. */
    {.name = "Gemini CLI",
     .past = "cut, the rest saved to a file",
     .copy = CHECK_COPY_TEXT,
     .max_chars = 40000},
    /* Text over 30 KB saved to a file. */
    {.name = "Copilot CLI",
     .past = "spilled to a file",
     .copy = CHECK_COPY_TEXT,
     .max_bytes = 30720},
};
const size_t check_host_count = sizeof check_hosts / sizeof check_hosts[0];

static size_t utf8_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static size_t lines_of(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t k = 1;
    for (size_t i = 0; i + 1 < n; i++)
        k += s[i] == '\n';
    return k;
}

/* The text blocks joined by newlines (malloc'd), as a host that shows text gets them. */
static char *text_of(const json_t *res, size_t *n)
{
    size_t total = 0, i;
    const json_t *b;
    json_array_foreach(json_object_get(res, "content"), i, b)
    {
        const char *t = json_string_value(json_object_get(b, "text"));
        if (t)
            total += strlen(t) + 1;
    }
    char *out = malloc(total + 1), *p = out;
    if (out == NULL)
        return NULL;
    json_array_foreach(json_object_get(res, "content"), i, b)
    {
        const char *t = json_string_value(json_object_get(b, "text"));
        if (t == NULL)
            continue;
        if (p != out)
            *p++ = '\n';
        size_t l = strlen(t);
        memcpy(p, t, l);
        p += l;
    }
    *p = '\0';
    *n = (size_t)(p - out);
    return out;
}

void check_measure_result(const check_host *h, const json_t *res, check_measure *m)
{
    memset(m, 0, sizeof *m);
    const json_t *sc = json_object_get(res, "structuredContent");
    /* An error result's structuredContent is dropped (claude-code #79944). */
    bool structured = h->copy == CHECK_COPY_STRUCTURED_ELSE_TEXT && sc &&
                      !json_is_true(json_object_get(res, "isError"));
    char *s;
    size_t n = 0;
    if (structured) {
        s = json_dumps(sc, JSON_COMPACT | JSON_ENCODE_ANY);
        n = s ? strlen(s) : 0;
    } else {
        s = text_of(res, &n);
    }
    if (s == NULL)
        return;
    m->bytes = n;
    m->chars = utf8_chars(s, n);
    m->lines = lines_of(s, n);
    m->tokens = mcpage__tokens_estimate(s, n);
    free(s);
}

bool check_fits(const check_host *h, const check_measure *m, size_t raised_chars)
{
    size_t max_chars = h->chars_raisable && raised_chars > 0 ? raised_chars : h->max_chars;
    if (h->max_tokens && m->tokens > h->max_tokens)
        return false;
    if (max_chars && m->chars > max_chars)
        return false;
    if (h->max_bytes && m->bytes > h->max_bytes)
        return false;
    return !(h->max_lines && m->lines > h->max_lines);
}
