/*
 * `mcpage version`: the library and schema versions.
 */
#include <stdio.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "cli/commands.h"

int cli_cmd_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: mcpage version\n\nPrints the version of mcpage.\n");
        return 0;
    }
    printf("mcpage %s\n", mcpage_version());
    return 0;
}
