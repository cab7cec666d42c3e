/*
 * The shell command that resumes a session in its own agent and working
 * directory (get_session_summary's `resume`), for the agents whose command
 * line takes a session id. The directory and the id are shell-quoted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

/* Each agent's command, followed by the session id as the agent knows it. */
static const struct {
    const char *source; /* the store's source name */
    const char *format; /* the command before the quoted id */
} resume_commands[] = {
    {"claude", "claude --resume"},      {"codex", "codex resume"},
    {"gemini", "gemini --resume"},      {"copilot", "copilot --resume"},
    {"opencode", "opencode --session"}, {"cursor", "cursor-agent --resume"},
    {"qwen", "qwen --resume"},
};

/* `s` single-quoted for a POSIX shell unless it is plain; into buf. */
static int shell_quote(const char *s, char *buf, size_t cap)
{
    size_t plain =
        strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/:@+");
    size_t n = 0;
    if (s[plain] == '\0' && *s) {
        if (strlen(s) + 1 > cap)
            return -1;
        memcpy(buf, s, strlen(s) + 1);
        return 0;
    }
    if (cap < 3)
        return -1;
    buf[n++] = '\'';
    for (const char *p = s; *p; p++) {
        const char *put = *p == '\'' ? "'\\''" : NULL;
        size_t k = put ? 4 : 1;
        if (n + k + 2 > cap)
            return -1;
        if (put)
            memcpy(buf + n, put, k);
        else
            buf[n] = *p;
        n += k;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return 0;
}

char *tools_resume_command(const char *source, const char *session_id, const char *cwd)
{
    if (!source || !session_id)
        return NULL;
    const char *format = NULL;
    for (size_t i = 0; i < sizeof resume_commands / sizeof resume_commands[0]; i++)
        if (strcmp(source, resume_commands[i].source) == 0)
            format = resume_commands[i].format;
    if (!format)
        return NULL;
    /* a described agent's ids carry its name as a prefix ("qwen:...") */
    size_t sl = strlen(source);
    const char *id = session_id;
    if (strncmp(id, source, sl) == 0 && id[sl] == ':')
        id += sl + 1;
    char qid[512], qcwd[8192], cmd[8192 + 512 + 64];
    if (shell_quote(id, qid, sizeof qid) < 0)
        return NULL;
    if (cwd && *cwd && shell_quote(cwd, qcwd, sizeof qcwd) == 0)
        (void)snprintf(cmd, sizeof cmd, "cd %s && %s %s", qcwd, format, qid);
    else
        (void)snprintf(cmd, sizeof cmd, "%s %s", format, qid);
    return strdup(cmd);
}
