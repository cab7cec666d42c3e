/*
 * The layout of a user's redaction rules (sync_redact.h), shared by the
 * scanner (sync_redact.c) and the parser of redact.json
 * (sync_redact_config.c). Nothing else includes it.
 */
#ifndef MCPAGE_SYNC_REDACT_INTERNAL_H
#define MCPAGE_SYNC_REDACT_INTERNAL_H

#include <stddef.h>

#include "sync/sync_redact.h"

#define RULES_MAX_PATTERNS  64
#define RULES_ALLOW_MAX     256
#define RULES_ALLOW_MAX_LEN 512

typedef struct user_pattern {
    char name[25];   /* the marker's: [REDACTED:name] */
    char prefix[65]; /* what a match starts with */
    size_t prefix_len, min;
} user_pattern;

struct sync_redact_rules {
    user_pattern pat[RULES_MAX_PATTERNS];
    size_t npat;
    unsigned char first[256]; /* a byte that starts some pattern's prefix */
    char *allow[RULES_ALLOW_MAX];
    size_t allow_len[RULES_ALLOW_MAX];
    size_t nallow;
};

#endif
