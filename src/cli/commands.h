/*
 * The subcommands of the `mcpage` command line. Each lives in its own
 * cmd_<name>.c, takes the arguments after its name (argv[0] is the
 * subcommand's name) and returns the process exit status.
 */
#ifndef MCPAGE_CLI_COMMANDS_H
#define MCPAGE_CLI_COMMANDS_H

#include <stddef.h>

typedef struct cli_command {
    const char *name;                  /* as typed: "sync" */
    const char *summary;               /* one line for `mcpage --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the name */
} cli_command;

/* The store spec a subcommand opens (see cli/store_spec.c); 0 or
 * MCPAGE_ERANGE when it does not fit in buf. */
int cli_store_spec(char *buf, size_t n, const char *store_arg, const char *db_arg);

/*
 * Opens that store read-only into *out, its display form (no password)
 * into shown. On failure says why on stderr after `who` ("mcpage stats"),
 * with `advice` (or NULL) after the reason, and returns the exit status:
 * 2 when the spec is too long, 1 when the store cannot be opened.
 */
struct store;
int cli_store_open_read(const char *who, const char *store_arg, const char *db_arg,
                        const char *advice, struct store **out, char *shown, size_t shown_cap);

int cli_cmd_version(int argc, char **argv);
int cli_cmd_sync(int argc, char **argv);
int cli_cmd_stats(int argc, char **argv);
int cli_cmd_usage(int argc, char **argv);
int cli_cmd_files(int argc, char **argv);
int cli_cmd_serve(int argc, char **argv);
int cli_cmd_call(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_sources(int argc, char **argv);

struct sync_report;
/* Keeps what a sync pass said of each source (time, files, warnings) in
 * the state file `mcpage sources` reads (cmd_sources.c). */
void cli_sources_record(const char *store_shown, const struct sync_report *rep);

#endif
