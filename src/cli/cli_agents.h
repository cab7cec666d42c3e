/*
 * The agents sync reads, as `mcpage sync` and `mcpage serve` name them
 * on the command line: --NAME-home DIR points at an agent's folder,
 * --no-NAME (sync only) leaves the agent out.
 */
#ifndef MCPAGE_CLI_AGENTS_H
#define MCPAGE_CLI_AGENTS_H

#include <stdbool.h>

#include "sync/sync.h"

/* In the order of sync_options' homes. */
enum {
    CLI_AGENT_CLAUDE,
    CLI_AGENT_CODEX,
    CLI_AGENT_GEMINI,
    CLI_AGENT_COPILOT,
    CLI_AGENT_OPENCODE,
    CLI_AGENT_CURSOR,
    CLI_AGENTS
};

typedef struct cli_agents {
    const char *arg[CLI_AGENTS];          /* --NAME-home DIR, or NULL for the default */
    bool skip[CLI_AGENTS];                /* --no-NAME */
    char home[CLI_AGENTS][SYNC_PATH_MAX]; /* each folder, once resolved */
} cli_agents;

/*
 * Takes argv[*i] when it is --NAME-home with a value (stepping *i over
 * it) or, when `skips`, --no-NAME; true when it was one of them.
 */
bool cli_agents_parse(cli_agents *a, int argc, char **argv, int *i, bool skips);
/* Each agent's folder: the one given, or its default; false when one is too long. */
bool cli_agents_resolve(cli_agents *a);
/* The folder agent `g` is read from, or NULL when --no-NAME left it out. */
const char *cli_agents_home(const cli_agents *a, int g);
/* Points opt's homes at the folders (NULL for the agents left out). */
void cli_agents_options(const cli_agents *a, sync_options *opt);

#endif
