/*
 * Deterministic generator of large synthetic agent archives for the sync
 * benchmark: Claude Code transcripts (DIR/claude/projects/<mangled>/
 * <uuid>.jsonl) and Codex rollouts (DIR/codex/sessions/YYYY/MM/DD/
 * rollout-*.jsonl) until DIR holds about --size-mb megabytes; with
 * --source gemini or copilot, Gemini CLI chats (DIR/gemini/tmp/<project>/
 * chats/session-*.jsonl, each model message written again when its tool
 * calls finish, as Gemini CLI does) or Copilot CLI sessions
 * (DIR/copilot/session-state/<id>/events.jsonl) instead.
 *
 * The size spread imitates real archives: most sessions are a few turns,
 * a few are hundreds; most tool outputs are short, about 1 in 200 is
 * 100 KB to 1 MB. Same seed, same bytes.
 *
 *   gen_archive --out /tmp/mcpage-bench --size-mb 1024 [--seed 1]
 *               [--source mixed|gemini|copilot]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

static const char *const words[] = {
    "the",       "a",          "to",          "of",       "and",        "in",
    "is",        "it",         "that",        "for",      "function",   "return",
    "error",     "test",       "file",        "build",    "cursor",     "page",
    "session",   "index",      "query",       "buffer",   "limit",      "offset",
    "struct",    "pointer",    "alloc",       "free",     "parse",      "json",
    "token",     "string",     "value",       "config",   "server",     "client",
    "request",   "response",   "handler",     "timeout",  "retry",      "cache",
    "thread",    "lock",       "mutex",       "queue",    "stream",     "socket",
    "header",    "schema",     "table",       "column",   "migration",  "commit",
    "branch",    "merge",      "rebase",      "deploy",   "docker",     "kernel",
    "sqlite",    "postgres",   "compile",     "linker",   "warning",    "segfault",
    "overflow",  "unicode",    "utf8",        "keyset",   "pagination", "refactor",
    "benchmark", "latency",    "throughput",  "memory",   "leak",       "sanitizer",
    "fuzz",      "golden",     "fixture",     "mock",     "assert",     "snapshot",
    "flaky",     "max_tokens", "next_cursor", "has_more", "foo-bar",    "path/to/file.c",
    "c++",       "météo",      "données",     "naïve",    "日本語",     "привет",
    "ünïcödé",   "emoji🙂",  "résumé",      "façade"};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const tools[] = {"Bash", "Read", "Edit", "Grep", "Glob", "Write", "Task"};

typedef struct out {
    FILE *f;
    uint64_t bytes;
    uint64_t lines;
} out;

static void sentence(char *buf, size_t cap, unsigned nwords)
{
    size_t n = 0;
    for (unsigned i = 0; i < nwords && n + 40 < cap; i++) {
        const char *w = words[below(NWORDS)];
        size_t l = strlen(w);
        if (i)
            buf[n++] = ' ';
        memcpy(buf + n, w, l);
        n += l;
    }
    buf[n] = 0;
}

/* Writes a JSON string body (no quotes) for ASCII/UTF-8 text without
 * characters that need escaping beyond \n. */
static void put_text(out *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            fputs("\\n", o->f);
        else if (*s == '"' || *s == '\\')
            fprintf(o->f, "\\%c", *s);
        else
            fputc(*s, o->f);
    }
}

static void put_big_output(out *o, size_t bytes)
{
    size_t written = 0;
    unsigned line = 0;
    while (written < bytes) {
        int k = fprintf(o->f, "line %06u: %s %s ok in %u ms\\n", line++, words[below(NWORDS)],
                        words[below(NWORDS)], below(1000));
        written += (size_t)k;
    }
}

static void ts(char *buf, size_t cap, uint64_t t)
{
    /* t: seconds since 2025-01-01, cheap calendar: 28-day months */
    unsigned day = (unsigned)(t / 86400), rem = (unsigned)(t % 86400);
    snprintf(buf, cap, "2025-%02u-%02uT%02u:%02u:%02u.000Z", 1 + (day / 28) % 12, 1 + day % 28,
             rem / 3600, (rem / 60) % 60, rem % 60);
}

static void uuid(char *buf, size_t cap)
{
    uint64_t a = rnd(), b = rnd();
    snprintf(buf, cap, "%08x-%04x-4%03x-a%03x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff, (unsigned)(b >> 52) & 0xfff,
             (unsigned long long)(b & 0xffffffffffffull));
}

static unsigned session_turns(void)
{
    unsigned r = below(1000);
    if (r < 600)
        return 1 + below(8);
    if (r < 950)
        return 8 + below(40);
    return 50 + below(300);
}

static size_t tool_output_size(void)
{
    unsigned r = below(1000);
    if (r < 995)
        return 80 + below(3000);
    return 100000 + below(900000);
}

/*
 * Usage figures, from a generator of their own so the archive's text and
 * sizes stay those of earlier runs (the main generator's draws are
 * unchanged): shaped like Claude Code's message.usage and Codex's
 * token_count events.
 */
static uint64_t usage_state = 0x9e3779b97f4a7c15ull;

static unsigned usage_below(unsigned n)
{
    usage_state ^= usage_state << 13;
    usage_state ^= usage_state >> 7;
    usage_state ^= usage_state << 17;
    return (unsigned)(usage_state % n);
}

/* One Claude response's usage object, `out` output tokens. */
static void claude_usage(out *o, unsigned in, unsigned out_tokens, unsigned cw, unsigned cr)
{
    fprintf(o->f,
            ",\"usage\":{\"input_tokens\":%u,\"cache_creation_input_tokens\":%u,"
            "\"cache_read_input_tokens\":%u,\"cache_creation\":{\"ephemeral_5m_input_tokens\":%u,"
            "\"ephemeral_1h_input_tokens\":0},\"output_tokens\":%u,\"service_tier\":\"standard\"}",
            in, cw, cr, cw, out_tokens);
}

static void claude_session(out *o, const char *cwd, const char *sid, uint64_t *t)
{
    char stamp[40], text[4096], id[64];
    for (unsigned turn = 0, n = session_turns(); turn < n; turn++) {
        *t += 30 + below(600);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 5 + below(40));
        fprintf(
            o->f,
            "{\"parentUuid\":null,\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"%s\","
            "\"sessionId\":\"%s\",\"version\":\"2.0.61\",\"gitBranch\":\"main\",\"type\":\"user\","
            "\"message\":{\"role\":\"user\",\"content\":\"",
            cwd, sid);
        put_text(o, text);
        uuid(id, sizeof id);
        fprintf(o->f, "\"},\"uuid\":\"%s\",\"timestamp\":\"%s\"}\n", id, stamp);
        o->lines++;
        for (unsigned k = 0, calls = below(4); k < calls; k++) {
            const char *tool = tools[below(sizeof tools / sizeof tools[0])];
            char call[40];
            snprintf(call, sizeof call, "toolu_%016llx", (unsigned long long)rnd());
            *t += 1 + below(30);
            ts(stamp, sizeof stamp, *t);
            sentence(text, sizeof text, 3 + below(6));
            unsigned long long msg = (unsigned long long)usage_state;
            fprintf(
                o->f,
                "{\"type\":\"assistant\",\"sessionId\":\"%s\",\"cwd\":\"%s\",\"timestamp\":\"%s\","
                "\"requestId\":\"req_%016llx\",\"message\":{\"id\":\"msg_%016llx\","
                "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\","
                "\"content\":[{\"type\":\"tool_use\",\"id\":\"%s\",\"name\":\"%s\",\"input\":{"
                "\"command\":\"",
                sid, cwd, stamp, msg, msg, call, tool);
            put_text(o, text);
            fputs("\"}}]", o->f);
            claude_usage(o, 1 + usage_below(20), 20 + usage_below(400), usage_below(3000),
                         10000 + usage_below(150000));
            (void)usage_below(2);
            fputs("}}\n", o->f);
            *t += 1 + below(30);
            ts(stamp, sizeof stamp, *t);
            fprintf(o->f,
                    "{\"type\":\"user\",\"sessionId\":\"%s\",\"cwd\":\"%s\",\"timestamp\":\"%s\","
                    "\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                    "\"tool_use_id\":\"%s\",\"is_error\":%s,\"content\":\"",
                    sid, cwd, stamp, call, below(10) == 0 ? "true" : "false");
            put_big_output(o, tool_output_size());
            fputs("\"}]}}\n", o->f);
            o->lines += 2;
        }
        *t += 2 + below(60);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 10 + below(120));
        /* the answer: a thinking line, then the text line of the same
           response with the output grown (Claude Code writes one line
           per content block), every 8th written twice (a resumed copy) */
        unsigned long long msg = (unsigned long long)usage_state;
        unsigned in = 1 + usage_below(50), cw = usage_below(5000), cr = 20000 + usage_below(180000);
        unsigned final_out = 50 + usage_below(2000);
        int twice = usage_below(8) == 0;
        fprintf(o->f,
                "{\"type\":\"assistant\",\"sessionId\":\"%s\",\"cwd\":\"%s\",\"timestamp\":\"%s\","
                "\"requestId\":\"req_%016llx\",\"message\":{\"id\":\"msg_%016llx\","
                "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\","
                "\"content\":[{\"type\":\"thinking\",\"thinking\":\"planning\"}]",
                sid, cwd, stamp, msg, msg);
        claude_usage(o, in, 1 + usage_below(final_out), cw, cr);
        fputs("}}\n", o->f);
        for (int copy = 0; copy <= twice; copy++) {
            fprintf(o->f,
                    "{\"type\":\"assistant\",\"sessionId\":\"%s\",\"cwd\":\"%s\","
                    "\"timestamp\":\"%s\",\"requestId\":\"req_%016llx\",\"message\":{"
                    "\"id\":\"msg_%016llx\",\"role\":\"assistant\",\"model\":"
                    "\"claude-sonnet-4-5-20250929\",\"content\":[{\"type\":\"text\",\"text\":\"",
                    sid, cwd, stamp, msg, msg);
            put_text(o, text);
            fputs("\"}]", o->f);
            claude_usage(o, in, final_out, cw, cr);
            fputs("}}\n", o->f);
        }
        o->lines += twice ? 3u : 2u;
    }
}

static void codex_session(out *o, const char *cwd, const char *sid, uint64_t *t)
{
    char stamp[40], text[4096];
    unsigned long long total_in = 0, total_cached = 0, total_out = 0, total_reason = 0;
    ts(stamp, sizeof stamp, *t);
    fprintf(
        o->f,
        "{\"timestamp\":\"%s\",\"type\":\"session_meta\",\"payload\":{\"id\":\"%s\",\"cwd\":\"%s\","
        "\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.46.0\",\"git\":{\"branch\":\"main\"}}}"
        "\n"
        "{\"timestamp\":\"%s\",\"type\":\"turn_context\",\"payload\":{\"cwd\":\"%s\",\"model\":"
        "\"gpt-5-codex\"}}\n",
        stamp, sid, cwd, stamp, cwd);
    o->lines += 2;
    for (unsigned turn = 0, n = session_turns(); turn < n; turn++) {
        *t += 30 + below(600);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 5 + below(40));
        fprintf(
            o->f,
            "{\"timestamp\":\"%s\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\","
            "\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"",
            stamp);
        put_text(o, text);
        fputs("\"}]}}\n", o->f);
        o->lines++;
        for (unsigned k = 0, calls = below(4); k < calls; k++) {
            char call[40];
            snprintf(call, sizeof call, "call_%016llx", (unsigned long long)rnd());
            sentence(text, sizeof text, 2 + below(5));
            fprintf(o->f,
                    "{\"timestamp\":\"%s\",\"type\":\"response_item\",\"payload\":{\"type\":"
                    "\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":"
                    "[\\\"bash\\\",\\\"-lc\\\",\\\"",
                    stamp);
            put_text(o, text);
            fprintf(o->f, "\\\"]}\",\"call_id\":\"%s\"}}\n", call);
            fprintf(o->f,
                    "{\"timestamp\":\"%s\",\"type\":\"response_item\",\"payload\":{\"type\":"
                    "\"function_call_output\",\"call_id\":\"%s\",\"output\":\"",
                    stamp, call);
            put_big_output(o, tool_output_size());
            fputs("\"}}\n", o->f);
            o->lines += 2;
        }
        sentence(text, sizeof text, 10 + below(120));
        fprintf(
            o->f,
            "{\"timestamp\":\"%s\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\","
            "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"",
            stamp);
        put_text(o, text);
        fputs("\"}]}}\n", o->f);
        /* the turn's tokens, the running total and the last call; some
           events written twice with the same sums, as Codex does */
        unsigned in = 5000 + usage_below(60000), cached = in / 2 + usage_below(in / 2);
        unsigned outp = 50 + usage_below(3000), reason = usage_below(outp);
        total_in += in;
        total_cached += cached;
        total_out += outp;
        total_reason += reason;
        int twice = usage_below(4) == 0;
        for (int copy = 0; copy <= twice; copy++)
            fprintf(o->f,
                    "{\"timestamp\":\"%s\",\"type\":\"event_msg\",\"payload\":{\"type\":"
                    "\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":%llu,"
                    "\"cached_input_tokens\":%llu,\"output_tokens\":%llu,"
                    "\"reasoning_output_tokens\":%llu,\"total_tokens\":%llu},"
                    "\"last_token_usage\":{\"input_tokens\":%u,\"cached_input_tokens\":%u,"
                    "\"output_tokens\":%u,\"reasoning_output_tokens\":%u,\"total_tokens\":%u},"
                    "\"model_context_window\":272000}}}\n",
                    stamp, total_in, total_cached, total_out, total_reason, total_in + total_out,
                    in, cached, outp, reason, in + outp);
        o->lines += twice ? 3u : 2u;
    }
}

/* A Gemini CLI chat: facts, then per turn the prompt, the model message
 * (written twice: again with its finished tool calls) and $set lines. */
static void gemini_session(out *o, const char *cwd, const char *sid, uint64_t *t)
{
    char stamp[40], text[4096], id[64];
    ts(stamp, sizeof stamp, *t);
    fprintf(o->f,
            "{\"sessionId\":\"%s\",\"projectHash\":\"%s\",\"startTime\":\"%s\","
            "\"lastUpdated\":\"%s\"}\n",
            sid, cwd, stamp, stamp);
    o->lines++;
    for (unsigned turn = 0, n = session_turns(); turn < n; turn++) {
        *t += 30 + below(600);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 5 + below(40));
        uuid(id, sizeof id);
        fprintf(o->f,
                "{\"id\":\"%s\",\"timestamp\":\"%s\",\"type\":\"user\",\"content\":[{"
                "\"text\":\"",
                id, stamp);
        put_text(o, text);
        fprintf(o->f, "\"}]}\n{\"$set\":{\"lastUpdated\":\"%s\"}}\n", stamp);
        *t += 2 + below(60);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 10 + below(120));
        uuid(id, sizeof id);
        unsigned calls = below(4);
        for (int pass = 0; pass < (calls ? 2 : 1); pass++) {
            fprintf(o->f,
                    "{\"id\":\"%s\",\"timestamp\":\"%s\",\"type\":\"gemini\",\"content\":[{"
                    "\"text\":\"",
                    id, stamp);
            put_text(o, text);
            fputs("\"}],\"thoughts\":[],\"model\":\"gemini-2.5-pro\"", o->f);
            if (pass == 1) {
                fputs(",\"toolCalls\":[", o->f);
                for (unsigned k = 0; k < calls; k++) {
                    char cmd[512];
                    sentence(cmd, sizeof cmd, 2 + below(5));
                    fprintf(o->f,
                            "%s{\"id\":\"run_shell_command-%llu-%u\",\"name\":"
                            "\"run_shell_command\",\"args\":{\"command\":\"",
                            k ? "," : "", (unsigned long long)rnd() % 1000000000000ull, k);
                    put_text(o, cmd);
                    fprintf(o->f,
                            "\"},\"status\":\"%s\",\"timestamp\":\"%s\",\"result\":[{"
                            "\"functionResponse\":{\"name\":\"run_shell_command\","
                            "\"response\":{\"output\":\"",
                            below(10) == 0 ? "error" : "success", stamp);
                    put_big_output(o, tool_output_size());
                    fputs("\"}}}]}", o->f);
                }
                fputc(']', o->f);
            }
            fputs("}\n", o->f);
            o->lines++;
        }
        o->lines += 2;
    }
}

/* A Copilot CLI session: one event per line. */
static void copilot_session(out *o, const char *cwd, const char *sid, uint64_t *t)
{
    char stamp[40], text[4096], id[64];
    ts(stamp, sizeof stamp, *t);
    uuid(id, sizeof id);
    fprintf(o->f,
            "{\"type\":\"session.start\",\"data\":{\"sessionId\":\"%s\",\"version\":1,"
            "\"producer\":\"copilot-agent\",\"copilotVersion\":\"0.0.407-1\",\"startTime\":"
            "\"%s\",\"context\":{\"cwd\":\"%s\",\"branch\":\"main\"}},\"id\":\"%s\","
            "\"timestamp\":\"%s\",\"parentId\":null}\n",
            sid, stamp, cwd, id, stamp);
    o->lines++;
    for (unsigned turn = 0, n = session_turns(); turn < n; turn++) {
        *t += 30 + below(600);
        ts(stamp, sizeof stamp, *t);
        sentence(text, sizeof text, 5 + below(40));
        uuid(id, sizeof id);
        fputs("{\"type\":\"user.message\",\"data\":{\"content\":\"", o->f);
        put_text(o, text);
        fprintf(o->f, "\",\"attachments\":[]},\"id\":\"%s\",\"timestamp\":\"%s\"}\n", id, stamp);
        o->lines++;
        for (unsigned k = 0, calls = below(4); k < calls; k++) {
            char call[40];
            snprintf(call, sizeof call, "toolu_vrtx_%016llx", (unsigned long long)rnd());
            sentence(text, sizeof text, 2 + below(5));
            uuid(id, sizeof id);
            fputs("{\"type\":\"assistant.message\",\"data\":{\"content\":\"\",\"toolRequests\":[{"
                  "\"toolCallId\":\"",
                  o->f);
            fprintf(o->f, "%s\",\"name\":\"bash\",\"arguments\":{\"command\":\"", call);
            put_text(o, text);
            fprintf(o->f, "\"}}]},\"id\":\"%s\",\"timestamp\":\"%s\"}\n", id, stamp);
            uuid(id, sizeof id);
            fprintf(o->f,
                    "{\"type\":\"tool.execution_complete\",\"data\":{\"toolCallId\":\"%s\","
                    "\"success\":%s,\"result\":{\"content\":\"",
                    call, below(10) == 0 ? "false" : "true");
            put_big_output(o, tool_output_size());
            fprintf(o->f, "\"}},\"id\":\"%s\",\"timestamp\":\"%s\"}\n", id, stamp);
            o->lines += 2;
        }
        sentence(text, sizeof text, 10 + below(120));
        uuid(id, sizeof id);
        fputs("{\"type\":\"assistant.message\",\"data\":{\"content\":\"", o->f);
        put_text(o, text);
        fprintf(o->f, "\",\"toolRequests\":[]},\"id\":\"%s\",\"timestamp\":\"%s\"}\n", id, stamp);
        o->lines++;
    }
}

static int mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return (mkdir(tmp, 0755) < 0 && errno != EEXIST) ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    const char *source = "mixed";
    double size_mb = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--out") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--size-mb") == 0)
            size_mb = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--source") == 0)
            source = argv[i + 1];
        else if (strcmp(argv[i], "--seed") == 0)
            rng_state ^= strtoull(argv[i + 1], NULL, 10) * 0x9E3779B97F4A7C15ull;
    }
    int gemini = strcmp(source, "gemini") == 0, copilot = strcmp(source, "copilot") == 0;
    if (!dir || size_mb <= 0 || (!gemini && !copilot && strcmp(source, "mixed") != 0)) {
        fprintf(stderr, "usage: gen_archive --out DIR --size-mb N [--seed S] "
                        "[--source mixed|gemini|copilot]\n");
        return 2;
    }
    uint64_t target = (uint64_t)(size_mb * 1024 * 1024), total = 0, lines = 0, files = 0;
    uint64_t t = 0;
    char path[4300], cwd[256], sid[64], d2[4096];
    while (total < target) {
        unsigned p = below(24);
        snprintf(cwd, sizeof cwd, "/home/dev/src/project-%02u", p);
        uuid(sid, sizeof sid);
        t += 600 + below(20000);
        out o = {0};
        int codex = !gemini && !copilot && below(10) < 4;
        if (gemini) {
            snprintf(d2, sizeof d2, "%s/gemini/tmp/project-%02u/chats", dir, p);
            if (mkdirs(d2) < 0)
                return 1;
            snprintf(path, sizeof path, "%s/session-2025-01-01T00-00-%.8s.jsonl", d2, sid);
            char marker[4400];
            snprintf(marker, sizeof marker, "%s/gemini/tmp/project-%02u/.project_root", dir, p);
            FILE *m = fopen(marker, "w");
            if (!m)
                return 1;
            fprintf(m, "%s\n", cwd);
            fclose(m);
        } else if (copilot) {
            snprintf(d2, sizeof d2, "%s/copilot/session-state/%s", dir, sid);
            if (mkdirs(d2) < 0)
                return 1;
            snprintf(path, sizeof path, "%s/events.jsonl", d2);
        } else if (codex) {
            unsigned day = (unsigned)(t / 86400);
            snprintf(d2, sizeof d2, "%s/codex/sessions/2025/%02u/%02u", dir, 1 + (day / 28) % 12,
                     1 + day % 28);
            if (mkdirs(d2) < 0)
                return 1;
            snprintf(path, sizeof path, "%s/rollout-2025-%02u-%02uT00-00-00-%s.jsonl", d2,
                     1 + (day / 28) % 12, 1 + day % 28, sid);
        } else {
            snprintf(d2, sizeof d2, "%s/claude/projects/-home-dev-src-project-%02u", dir, p);
            if (mkdirs(d2) < 0)
                return 1;
            snprintf(path, sizeof path, "%s/%s.jsonl", d2, sid);
        }
        o.f = fopen(path, "w");
        if (!o.f)
            return 1;
        if (gemini)
            gemini_session(&o, cwd, sid, &t);
        else if (copilot)
            copilot_session(&o, cwd, sid, &t);
        else if (codex)
            codex_session(&o, cwd, sid, &t);
        else
            claude_session(&o, cwd, sid, &t);
        long size = ftell(o.f);
        fclose(o.f);
        total += (uint64_t)size;
        lines += o.lines;
        files++;
    }
    printf("gen_archive: %llu files, %llu lines, %.1f MB in %s\n", (unsigned long long)files,
           (unsigned long long)lines, (double)total / 1e6, dir);
    return 0;
}
