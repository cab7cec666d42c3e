/*
 * A user's redaction settings (sync_redact.h): MCPAGE_KEEP_SECRETS and
 * redact.json, with its own patterns and exceptions. The file is the
 * user's, but read as hostile all the same: every member is checked and a
 * wrong one is named with its place; a file that is not used leaves
 * redaction on with the built-in patterns (secrets stay out).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <mcpage/mcpage.h>
#include "sync/sync_redact.h"
#include "sync/sync_redact_internal.h"
#include "sync/sync_walk.h"

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return MCPAGE_EINVAL;
}

/* A marker's name: 1-24 of a-z, 0-9 and '-' (it is written into transcripts). */
static int good_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 24)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

/* A prefix: 3-64 printable ASCII bytes, no blank, quote or backslash, and
 * not a marker's own words (a second scan must change nothing). */
static int good_prefix(const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || n > 64 || strstr(s, "REDACTED") || strstr("[REDACTED:", s))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' || s[i] == '\'' || s[i] == '\\')
            return 0;
    return 1;
}

static int parse_patterns(json_t *arr, sync_redact_rules *r, char *err, size_t cap)
{
    if (!json_is_array(arr))
        return fail(err, cap,
                    "\"patterns\" must be an array of {\"name\", \"prefix\", \"min_length\"}");
    if (json_array_size(arr) > RULES_MAX_PATTERNS)
        return fail(err, cap, "\"patterns\" holds %zu patterns; at most %d", json_array_size(arr),
                    RULES_MAX_PATTERNS);
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *prefix = json_string_value(json_object_get(o, "prefix"));
        json_t *min = json_object_get(o, "min_length");
        if (!json_is_object(o))
            return fail(err, cap, "patterns[%zu] must be an object", i);
        if (name == NULL || !good_name(name))
            return fail(err, cap,
                        "patterns[%zu].name must be 1-24 of a-z, 0-9 and '-' (it names the "
                        "marker: [REDACTED:name])",
                        i);
        if (prefix == NULL || !good_prefix(prefix))
            return fail(err, cap,
                        "patterns[%zu].prefix must be 3-64 printable bytes with no blank, quote "
                        "or backslash (and not part of a [REDACTED:...] marker)",
                        i);
        json_int_t m = 16;
        if (min != NULL && !json_is_integer(min))
            return fail(err, cap, "patterns[%zu].min_length must be an integer (8-4096)", i);
        if (min != NULL)
            m = json_integer_value(min);
        if (m < 8 || m > 4096)
            return fail(err, cap,
                        "patterns[%zu].min_length is %lld; give 8-4096 (the letters, digits, "
                        "'_' or '-' after the prefix)",
                        i, (long long)m);
        user_pattern *u = &r->pat[r->npat++];
        (void)snprintf(u->name, sizeof u->name, "%s", name);
        (void)snprintf(u->prefix, sizeof u->prefix, "%s", prefix);
        u->prefix_len = strlen(prefix);
        u->min = (size_t)m;
        r->first[(unsigned char)prefix[0]] = 1;
    }
    return 0;
}

static int parse_allow(json_t *arr, sync_redact_rules *r, char *err, size_t cap)
{
    if (!json_is_array(arr))
        return fail(err, cap, "\"allow\" must be an array of strings");
    if (json_array_size(arr) > RULES_ALLOW_MAX)
        return fail(err, cap, "\"allow\" holds %zu strings; at most %d", json_array_size(arr),
                    RULES_ALLOW_MAX);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        size_t n = json_string_length(v);
        if (!json_is_string(v) || n == 0 || n > RULES_ALLOW_MAX_LEN)
            return fail(err, cap, "allow[%zu] must be a string of 1-%d bytes", i,
                        RULES_ALLOW_MAX_LEN);
        char *copy = malloc(n);
        if (copy == NULL)
            return MCPAGE_ENOMEM;
        memcpy(copy, json_string_value(v), n);
        r->allow[r->nallow] = copy;
        r->allow_len[r->nallow++] = n;
    }
    return 0;
}

int sync_redact_rules_parse(const char *json, size_t n, sync_redact_rules **out, char *err,
                            size_t cap)
{
    *out = NULL;
    json_error_t jerr;
    json_t *cfg = json_loadb(json, n, JSON_REJECT_DUPLICATES, &jerr);
    if (cfg == NULL)
        return fail(err, cap, "not JSON (line %d: %s)", jerr.line, jerr.text);
    int rc = 0;
    json_t *pats = json_object_get(cfg, "patterns"), *allow = json_object_get(cfg, "allow");
    if (!json_is_object(cfg))
        rc = fail(err, cap, "must be a JSON object");
    else if (pats != NULL || allow != NULL) {
        sync_redact_rules *r = calloc(1, sizeof *r);
        if (r == NULL)
            rc = MCPAGE_ENOMEM;
        else if ((pats && (rc = parse_patterns(pats, r, err, cap)) != 0) ||
                 (allow && (rc = parse_allow(allow, r, err, cap)) != 0))
            sync_redact_rules_free(r);
        else
            *out = r;
    }
    json_decref(cfg);
    return rc;
}

void sync_redact_rules_free(sync_redact_rules *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nallow; i++)
        free(r->allow[i]);
    free(r);
}

/* The file's path into cfg->path; 0 when it does not fit. */
static int config_path(sync_redact_config *cfg)
{
    const char *e;
    int n;
    if ((e = getenv("MCPAGE_REDACT_CONFIG")) && *e)
        n = snprintf(cfg->path, sizeof cfg->path, "%s", e);
    else if ((e = getenv("XDG_CONFIG_HOME")) && *e)
        n = snprintf(cfg->path, sizeof cfg->path, "%s/mcpage/redact.json", e);
    else
        n = snprintf(cfg->path, sizeof cfg->path, "%s/.config/mcpage/redact.json", sync_home_dir());
    return n > 0 && (size_t)n < sizeof cfg->path;
}

#define CONFIG_MAX_BYTES (1 << 20)

void sync_redact_config_load(sync_redact_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    if (!config_path(cfg))
        return;
    FILE *f = fopen(cfg->path, "rb");
    if (f == NULL) {
        if (errno != ENOENT)
            (void)snprintf(cfg->warning, sizeof cfg->warning, "cannot read %.500s (%s)", cfg->path,
                           strerror(errno));
    } else {
        char *buf = malloc(CONFIG_MAX_BYTES + 1);
        size_t n = buf ? fread(buf, 1, CONFIG_MAX_BYTES + 1, f) : 0;
        (void)fclose(f);
        char why[512] = "";
        json_t *o = NULL;
        if (buf == NULL)
            (void)snprintf(why, sizeof why, "out of memory");
        else if (n > CONFIG_MAX_BYTES)
            (void)snprintf(why, sizeof why, "larger than 1 MiB");
        else if (sync_redact_rules_parse(buf, n, &cfg->rules, why, sizeof why) == 0)
            o = json_loadb(buf, n, 0, NULL);
        if (o != NULL) {
            json_t *keep = json_object_get(o, "keep_secrets");
            if (keep != NULL && !json_is_boolean(keep))
                (void)snprintf(why, sizeof why, "\"keep_secrets\" must be true or false");
            else
                cfg->keep_secrets = json_is_true(keep);
            json_decref(o);
        }
        free(buf);
        if (why[0]) {
            sync_redact_rules_free(cfg->rules);
            cfg->rules = NULL;
            cfg->keep_secrets = 0;
            (void)snprintf(cfg->warning, sizeof cfg->warning,
                           "%.200s: %.500s; redacting with the built-in patterns only", cfg->path,
                           why);
        }
    }
    const char *e = getenv("MCPAGE_KEEP_SECRETS");
    if (e && *e)
        cfg->keep_secrets = strcmp(e, "0") != 0;
}

void sync_redact_config_free(sync_redact_config *cfg)
{
    if (cfg == NULL)
        return;
    sync_redact_rules_free(cfg->rules);
    cfg->rules = NULL;
}
