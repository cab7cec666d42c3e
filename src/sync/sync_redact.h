/*
 * Secrets out of the archive (issue 32, docs/security.md "Secrets"): a
 * scanner run over every line a sync keeps, before it is parsed (message
 * text, the search index built from it) and before its bytes are stored
 * (the raw copy read_raw, exports and the view serve).
 *
 * A match is overwritten in place with a marker of the same length:
 * `[REDACTED:kind]` followed by `*` up to the secret's length, or only `*`
 * when the secret is shorter than the marker. Keeping the length keeps
 * every offset the store records into the raw copy (a message's byte
 * offset and length, the consumed size a resume starts from) true, and
 * the marker is ASCII without quotes or backslashes, so a redaction inside
 * a JSON string leaves the JSON valid. A redacted buffer scanned again
 * is unchanged (the markers match nothing), so a session folded again
 * from its stored raw copy gives the same messages.
 *
 * No pattern crosses a newline byte: a line redacts the same alone or
 * inside a chunk of lines. The scan dispatches on the first byte of each
 * pattern (a 256-entry table), no regular expressions; its cost is
 * measured in docs/performance.md.
 */
#ifndef MCPAGE_SYNC_REDACT_H
#define MCPAGE_SYNC_REDACT_H

#include <stddef.h>
#include <stdint.h>

/* The kinds of secret, in the order reports list them. */
enum {
    REDACT_AWS_KEY,      /* AKIA/ASIA access key ids */
    REDACT_AWS_SECRET,   /* a 40-character secret named aws...secret */
    REDACT_GITHUB,       /* ghp_ gho_ ghs_ ghu_ ghr_ github_pat_ */
    REDACT_OPENAI,       /* sk- sk-proj- */
    REDACT_ANTHROPIC,    /* sk-ant- */
    REDACT_GOOGLE,       /* AIza */
    REDACT_SLACK,        /* xoxb- xoxp- xoxa- xoxr- xoxs- xoxo- */
    REDACT_STRIPE,       /* sk_live_ rk_live_ */
    REDACT_JWT,          /* eyJ...eyJ...signature */
    REDACT_PRIVATE_KEY,  /* -----BEGIN ... PRIVATE KEY----- blocks */
    REDACT_URL_PASSWORD, /* scheme://user:PASSWORD@host */
    REDACT_ASSIGNMENT,   /* NAME=value, "name": "value" with a secret's name and value */
    REDACT_KINDS
};

/* The kind's name as markers, reports and --json spell it ("github"). */
const char *sync_redact_kind_name(int kind);

/* Counts per kind (a sync's, a store's). */
typedef struct sync_redact_counts {
    int64_t n[REDACT_KINDS];
} sync_redact_counts;

/* Called once per redaction with its offset in the buffer and its kind. */
typedef void (*sync_redact_hit_fn)(void *arg, size_t offset, int kind);

/*
 * Overwrites every secret in p[0..n) as above. Adds each to *counts when
 * not NULL and calls hit (when not NULL). Returns the number redacted.
 */
size_t sync_redact(char *p, size_t n, sync_redact_counts *counts, sync_redact_hit_fn hit,
                   void *arg);

#endif
