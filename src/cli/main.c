/*
 * The `mcpage` command: dispatches to one subcommand per file.
 */
#include <stdio.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"
#include "page/term.h"

static const cli_command commands[] = {
    {"sync", "read new agent transcripts into the archive", cli_cmd_sync},
    {"stats", "show what the archive holds", cli_cmd_stats},
    {"sources", "list every agent: where it is looked for, what is found", cli_cmd_sources},
    {"usage", "tokens and cost per day, session, project, model", cli_cmd_usage},
    {"files", "which sessions wrote or edited a file", cli_cmd_files},
    {"version", "print the version", cli_cmd_version},
    {"serve", "serve MCP on stdin/stdout", cli_cmd_serve},
    {"call", "run one archive tool and print its result", cli_cmd_call},
    {"check", "check any MCP server's paging and host fit", cli_cmd_check},
    {"export", "write sessions as Markdown, HTML or JSON Lines", cli_cmd_export},
};

static const size_t command_count = sizeof commands / sizeof commands[0];

static void print_usage(FILE *out)
{
    fprintf(out, "usage: mcpage COMMAND [OPTIONS]\n\n"
                 "An archive of coding-agent conversations served over MCP, with\n"
                 "every large result paged by one contract.\n\ncommands:\n");
    for (size_t i = 0; i < command_count; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'mcpage COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0)
        name = "version";
    for (size_t i = 0; i < command_count; i++) {
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    text_term_printf(stderr, "mcpage: unknown command '%s'; run 'mcpage --help' for the list\n",
                     name);
    return 2;
}
