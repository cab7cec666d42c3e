/*
 * The agents' command-line options (cli_agents.h).
 */
#include "cli/cli_agents.h"

#include <stdio.h>
#include <string.h>

/* Each agent's name in its options and where its folder is by default. */
static const struct {
    const char *name;
    int (*default_home)(char *buf, size_t n);
} agents[CLI_AGENTS] = {
    {"claude", sync_default_claude_home},     {"codex", sync_default_codex_home},
    {"gemini", sync_default_gemini_home},     {"copilot", sync_default_copilot_home},
    {"opencode", sync_default_opencode_home}, {"cursor", sync_default_cursor_home},
};

/* True when `a` is prefix, name and suffix run together (--no-claude, --claude-home). */
static bool is_option(const char *a, const char *prefix, const char *name, const char *suffix)
{
    size_t p = strlen(prefix), n = strlen(name);
    return strncmp(a, prefix, p) == 0 && strncmp(a + p, name, n) == 0 &&
           strcmp(a + p + n, suffix) == 0;
}

bool cli_agents_parse(cli_agents *a, int argc, char **argv, int *i, bool skips)
{
    const char *opt = argv[*i];
    for (int g = 0; g < CLI_AGENTS; g++) {
        if (skips && is_option(opt, "--no-", agents[g].name, "")) {
            a->skip[g] = true;
            return true;
        }
        if (*i + 1 < argc && is_option(opt, "--", agents[g].name, "-home")) {
            a->arg[g] = argv[++*i];
            return true;
        }
    }
    return false;
}

bool cli_agents_resolve(cli_agents *a)
{
    for (int g = 0; g < CLI_AGENTS; g++) {
        char *home = a->home[g];
        if (a->arg[g] ? snprintf(home, SYNC_PATH_MAX, "%s", a->arg[g]) < 0
                      : agents[g].default_home(home, SYNC_PATH_MAX) < 0)
            return false;
    }
    return true;
}

const char *cli_agents_home(const cli_agents *a, int g)
{
    return a->skip[g] ? NULL : a->home[g];
}

void cli_agents_options(const cli_agents *a, sync_options *opt)
{
    opt->claude_home = cli_agents_home(a, CLI_AGENT_CLAUDE);
    opt->codex_home = cli_agents_home(a, CLI_AGENT_CODEX);
    opt->gemini_home = cli_agents_home(a, CLI_AGENT_GEMINI);
    opt->copilot_home = cli_agents_home(a, CLI_AGENT_COPILOT);
    opt->opencode_home = cli_agents_home(a, CLI_AGENT_OPENCODE);
    opt->cursor_home = cli_agents_home(a, CLI_AGENT_CURSOR);
}
