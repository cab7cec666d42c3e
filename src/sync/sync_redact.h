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
    REDACT_CUSTOM,       /* a user's own pattern (redact.json "patterns") */
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
 * A user's rules (docs/security.md "Your own patterns and exceptions"),
 * from the "patterns" and "allow" members of redact.json:
 *   "patterns": [{"name": "acme", "prefix": "acme_live_", "min_length": 20}]
 *     a prefix (3-64 printable bytes, no blank, quote or backslash) at a
 *     token boundary followed by at least min_length (8-4096, default 16)
 *     letters, digits, `_` or `-`; replaced by `[REDACTED:acme]` (the name:
 *     1-24 of a-z, 0-9, `-`), counted as kind "custom". At most 64.
 *   "allow": ["AKIAIOSFODNN7EXAMPLE"]
 *     exceptions: a match whose bytes are exactly one of these (1-512
 *     bytes each, at most 256) is left as it is and not counted.
 * Immutable once made: shared by every thread of a sync.
 */
typedef struct sync_redact_rules sync_redact_rules;

/*
 * Parses the rules from the JSON text of a redact.json (other members are
 * not looked at). 0 with *out (NULL when the text has neither member), or
 * MCPAGE_EINVAL with what is wrong and its place in err ("patterns[1].prefix
 * ...").
 */
int sync_redact_rules_parse(const char *json, size_t n, sync_redact_rules **out, char *err,
                            size_t cap);
void sync_redact_rules_free(sync_redact_rules *r);

/*
 * A user's redaction settings, read from the environment and redact.json:
 * MCPAGE_KEEP_SECRETS (1 keeps, 0 redacts, over the file), the file at
 * MCPAGE_REDACT_CONFIG, else $XDG_CONFIG_HOME/mcpage/redact.json, else
 * ~/.config/mcpage/redact.json. No file: redact with the built-in
 * patterns. A file that cannot be read or parsed leaves redaction on with
 * the built-in patterns, and `warning` says why (for the caller to print).
 */
typedef struct sync_redact_config {
    int keep_secrets;
    sync_redact_rules *rules;
    char path[4096];   /* the file looked at */
    char warning[768]; /* "" or why the file was not used */
} sync_redact_config;

void sync_redact_config_load(sync_redact_config *cfg);
void sync_redact_config_free(sync_redact_config *cfg);

/*
 * Overwrites every secret in p[0..n) as above: the built-in patterns and
 * the user's (rules may be NULL), but not the user's exceptions. Adds each
 * to *counts when not NULL and calls hit (when not NULL). Returns the
 * number redacted.
 */
size_t sync_redact(const sync_redact_rules *rules, char *p, size_t n, sync_redact_counts *counts,
                   sync_redact_hit_fn hit, void *arg);

#endif
