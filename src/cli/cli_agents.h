/*
 * The agents sync reads, as `mcpage sync`, `mcpage serve` and `mcpage
 * sources` name them on the command line: --NAME-home DIR points at an
 * agent's folder, --no-NAME (sync and sources) leaves the agent out,
 * --sources FILE reads the user's source descriptions from FILE. NAME is
 * one of the six agents with their own readers or any described source
 * (src/sync/sources.json and the user's sources.json, docs/sources.md).
 */
#ifndef MCPAGE_CLI_AGENTS_H
#define MCPAGE_CLI_AGENTS_H

#include <stdbool.h>

#include "sync/sync.h"
#include "sync/sync_desc.h"

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

#define CLI_AGENT_FLAGS 128 /* --NAME-home / --no-NAME of described sources on one line */

typedef struct cli_agents {
    const char *arg[CLI_AGENTS];          /* --NAME-home DIR, or NULL for the default */
    bool skip[CLI_AGENTS];                /* --no-NAME */
    char home[CLI_AGENTS][SYNC_PATH_MAX]; /* each folder, once resolved */
    char origin[CLI_AGENTS][64];          /* where each folder came from */
    /* described sources */
    const char *sources_file; /* --sources FILE, or NULL for the default */
    struct {
        char name[SYNC_DESC_NAME_MAX];
        const char *dir; /* --NAME-home DIR, or NULL */
        bool skip;       /* --no-NAME */
    } flag[CLI_AGENT_FLAGS];
    size_t nflags;
    sync_descs descs;                        /* loaded by cli_agents_resolve */
    sync_described described[SYNC_DESC_MAX]; /* each with its home, NULL when off */
    char *dhome[SYNC_DESC_MAX];              /* the homes (owned) */
    char dorigin[SYNC_DESC_MAX][64];         /* where each came from */
    char err[700];                           /* why cli_agents_resolve failed */
} cli_agents;

/*
 * Takes argv[*i] when it is --NAME-home with a value (stepping *i over
 * it), --sources FILE or, when `skips`, --no-NAME; true when it was one
 * of them. A NAME no source has is refused by cli_agents_resolve.
 */
bool cli_agents_parse(cli_agents *a, int argc, char **argv, int *i, bool skips);
/* Loads the descriptions and resolves every agent's folder (the one
 * given, an environment variable, or its default); false with the reason
 * in a->err (a bad description, an unknown NAME, a path too long). */
bool cli_agents_resolve(cli_agents *a);
/* The folder agent `g` is read from, or NULL when --no-NAME left it out. */
const char *cli_agents_home(const cli_agents *a, int g);
/* The name of built-in agent `g` ("claude"). */
const char *cli_agents_name(int g);
/* Points opt's homes at the folders (NULL for the agents left out). */
void cli_agents_options(const cli_agents *a, sync_options *opt);
void cli_agents_free(cli_agents *a);

/*
 * The user's redaction settings (sync_redact_config_load: MCPAGE_KEEP_SECRETS,
 * redact.json) into cfg and opt: opt->keep_secrets when `keep` (--keep-secrets)
 * or the config says so, opt->redact_rules the user's patterns and exceptions.
 * A config file that is not used is said on stderr after `who` ("mcpage
 * sync"). Free cfg with sync_redact_config_free once the sync is done.
 */
void cli_redact_options(const char *who, int keep, sync_redact_config *cfg, sync_options *opt);

#endif
