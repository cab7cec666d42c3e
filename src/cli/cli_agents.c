/*
 * The agents' command-line options (cli_agents.h).
 */
#include "cli/cli_agents.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/text_out.h"

/* Each agent's name in its options and where its folder is by default. */
static const struct {
    const char *name;
    int (*default_home)(char *buf, size_t n);
} agents[CLI_AGENTS] = {
    {"claude", sync_default_claude_home},     {"codex", sync_default_codex_home},
    {"gemini", sync_default_gemini_home},     {"copilot", sync_default_copilot_home},
    {"opencode", sync_default_opencode_home}, {"cursor", sync_default_cursor_home},
};

const char *cli_agents_name(int g)
{
    return g >= 0 && g < CLI_AGENTS ? agents[g].name : NULL;
}

/* True when `a` is prefix, name and suffix run together (--no-claude, --claude-home). */
static bool is_option(const char *a, const char *prefix, const char *name, const char *suffix)
{
    size_t p = strlen(prefix), n = strlen(name);
    return strncmp(a, prefix, p) == 0 && strncmp(a + p, name, n) == 0 &&
           strcmp(a + p + n, suffix) == 0;
}

/* The entry of a described source's flags (added when new); NULL when
 * the name is not one a source could have or there are too many. */
static int flag_of(cli_agents *a, const char *name, size_t n)
{
    if (n == 0 || n >= SYNC_DESC_NAME_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)name[i]) && !isdigit((unsigned char)name[i]) &&
            name[i] != '-' && name[i] != '_')
            return -1;
    for (size_t i = 0; i < a->nflags; i++)
        if (strlen(a->flag[i].name) == n && strncmp(a->flag[i].name, name, n) == 0)
            return (int)i;
    if (a->nflags >= CLI_AGENT_FLAGS)
        return -1;
    memcpy(a->flag[a->nflags].name, name, n);
    a->flag[a->nflags].name[n] = 0;
    return (int)a->nflags++;
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
    if (*i + 1 < argc && strcmp(opt, "--sources") == 0) {
        a->sources_file = argv[++*i];
        return true;
    }
    size_t n = strlen(opt);
    if (*i + 1 < argc && n > 7 && strncmp(opt, "--", 2) == 0 && strcmp(opt + n - 5, "-home") == 0) {
        int k = flag_of(a, opt + 2, n - 7);
        if (k < 0)
            return false;
        a->flag[k].dir = argv[++*i];
        return true;
    }
    if (skips && n > 5 && strncmp(opt, "--no-", 5) == 0) {
        int k = flag_of(a, opt + 5, n - 5);
        if (k < 0)
            return false;
        a->flag[k].skip = true;
        return true;
    }
    return false;
}

bool cli_agents_resolve(cli_agents *a)
{
    for (int g = 0; g < CLI_AGENTS; g++) {
        char *home = a->home[g];
        if (a->arg[g] ? snprintf(home, SYNC_PATH_MAX, "%s", a->arg[g]) < 0
                      : agents[g].default_home(home, SYNC_PATH_MAX) < 0) {
            (void)snprintf(a->err, sizeof a->err, "the folder of %s is too long", agents[g].name);
            return false;
        }
        (void)snprintf(a->origin[g], sizeof a->origin[g], "%s",
                       a->arg[g] ? "flag" : "environment or default");
    }
    if (a->descs.n == 0 && sync_descs_load(&a->descs, a->sources_file, a->err, sizeof a->err) < 0)
        return false;
    for (size_t i = 0; i < a->nflags; i++) {
        if (!sync_descs_find(&a->descs, a->flag[i].name)) {
            (void)snprintf(
                a->err, sizeof a->err,
                "no agent is named '%s' (in --%s-home or --no-%s); `mcpage sources` lists "
                "them",
                a->flag[i].name, a->flag[i].name, a->flag[i].name);
            return false;
        }
    }
    for (size_t d = 0; d < a->descs.n; d++) {
        const sync_desc *desc = a->descs.v[d];
        const char *given = NULL;
        bool skip = sync_desc_disabled(desc);
        for (size_t i = 0; i < a->nflags; i++) {
            if (strcmp(a->flag[i].name, desc->name) != 0)
                continue;
            given = a->flag[i].dir ? a->flag[i].dir : given;
            skip |= a->flag[i].skip;
        }
        char buf[SYNC_PATH_MAX];
        if (sync_desc_home(desc, given, buf, sizeof buf, a->dorigin[d], sizeof a->dorigin[d]) < 0) {
            (void)snprintf(a->err, sizeof a->err, "the folder of %s is too long", desc->name);
            return false;
        }
        free(a->dhome[d]);
        a->dhome[d] = strdup(buf);
        if (!a->dhome[d]) {
            (void)snprintf(a->err, sizeof a->err, "out of memory");
            return false;
        }
        if (sync_desc_disabled(desc))
            (void)snprintf(a->dorigin[d], sizeof a->dorigin[d], "turned off in sources.json");
        else if (skip)
            (void)snprintf(a->dorigin[d], sizeof a->dorigin[d], "turned off by --no-%s",
                           desc->name);
        a->described[d].desc = desc;
        a->described[d].home = skip ? NULL : a->dhome[d];
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
    opt->described = a->described;
    opt->ndescribed = a->descs.n;
}

void cli_redact_options(const char *who, int keep, sync_redact_config *cfg, sync_options *opt)
{
    sync_redact_config_load(cfg);
    if (cfg->warning[0])
        text_term_printf(stderr, "%s: %s\n", who, cfg->warning);
    opt->keep_secrets = keep || cfg->keep_secrets;
    opt->redact_rules = cfg->rules;
}

void cli_agents_free(cli_agents *a)
{
    for (size_t d = 0; d < SYNC_DESC_MAX; d++) {
        free(a->dhome[d]);
        a->dhome[d] = NULL;
    }
    sync_descs_free(&a->descs);
}
