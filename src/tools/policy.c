/*
 * Who sees what on a shared store (issue 32): the policy file of
 * `mcpage serve --policy FILE` and the viewer each call reads as.
 *
 *   {"admin_scope": "mcpage:admin",
 *    "owners": {"SUBJECT": "alice@laptop" | ["alice@laptop", "alice@desk"]},
 *    "shares": [{"group": "team-a", "projects": ["mcpage", "/srv/app"]}]}
 *
 * A call whose token names a subject reads as that subject's owners (the
 * mapping, else the subject itself as the owner name), plus the projects
 * shared with the groups of its token; a token with the admin scope, the
 * static token and every local call read everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

/* Largest policy file, and most entries of each kind. */
#define POLICY_FILE_MAX  ((size_t)1 << 20)
#define POLICY_ITEMS_MAX 10000

struct tools_policy {
    char *admin_scope; /* the scope that sees everything */
    json_t *owners;    /* subject -> owner name or array of them */
    json_t *shares;    /* [{group, projects}] */
};

void tools_policy_free(tools_policy *p)
{
    if (p == NULL)
        return;
    free(p->admin_scope);
    json_decref(p->owners);
    json_decref(p->shares);
    free(p);
}

static int bad(char *err, size_t cap, const char *path, const char *what)
{
    (void)snprintf(err, cap, "%s: %s", path, what);
    return MCPAGE_EINVAL;
}

/* An owner entry: a valid owner name, or an array of 1..STORE_VIEW_OWNERS_MAX of them. */
static int owners_ok(const json_t *v)
{
    if (json_is_string(v))
        return store_owner_valid(json_string_value(v));
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > STORE_VIEW_OWNERS_MAX)
        return 0;
    size_t i;
    const json_t *o;
    json_array_foreach(v, i, o) if (!store_owner_valid(json_string_value(o))) return 0;
    return 1;
}

int tools_policy_load(const char *path, tools_policy **out, char *err, size_t cap)
{
    *out = NULL;
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return bad(err, cap, path, "cannot be read");
    char *buf = malloc(POLICY_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, POLICY_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (buf == NULL)
        return MCPAGE_ENOMEM;
    if (n > POLICY_FILE_MAX) {
        free(buf);
        return bad(err, cap, path, "larger than 1 MiB");
    }
    json_t *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &je);
    free(buf);
    if (root == NULL) {
        (void)snprintf(err, cap, "%s: not JSON: %s (line %d)", path, je.text, je.line);
        return MCPAGE_EINVAL;
    }
    tools_policy *p = calloc(1, sizeof *p);
    int rc = p ? 0 : MCPAGE_ENOMEM;
    const char *key;
    json_t *v;
    if (rc == 0 && !json_is_object(root))
        rc = bad(err, cap, path, "must be a JSON object");
    if (rc == 0)
        json_object_foreach(root, key, v)
        {
            if (rc == 0 && strcmp(key, "admin_scope") != 0 && strcmp(key, "owners") != 0 &&
                strcmp(key, "shares") != 0) {
                (void)snprintf(err, cap,
                               "%s: unknown field \"%.64s\" (the fields are admin_scope, owners, "
                               "shares)",
                               path, key);
                rc = MCPAGE_EINVAL;
            }
        }
    const json_t *admin = rc == 0 ? json_object_get(root, "admin_scope") : NULL;
    if (rc == 0 && admin &&
        (!json_is_string(admin) || !json_string_length(admin) ||
         strchr(json_string_value(admin), ' ')))
        rc = bad(err, cap, path, "admin_scope must be one scope (a string without spaces)");
    if (rc == 0 && !(p->admin_scope = strdup(admin ? json_string_value(admin) : "mcpage:admin")))
        rc = MCPAGE_ENOMEM;
    json_t *owners = rc == 0 ? json_object_get(root, "owners") : NULL;
    if (rc == 0 && owners) {
        if (!json_is_object(owners) || json_object_size(owners) > POLICY_ITEMS_MAX)
            rc = bad(err, cap, path, "owners must be an object of subject: owner name(s)");
        json_object_foreach(owners, key, v)
        {
            if (rc == 0 && !owners_ok(v)) {
                (void)snprintf(err, cap,
                               "%s: owners[\"%.64s\"] must be an owner name (letters, digits and "
                               ". _ - + @, as user@machine) or an array of 1 to %d of them",
                               path, key, STORE_VIEW_OWNERS_MAX);
                rc = MCPAGE_EINVAL;
            }
        }
        if (rc == 0)
            p->owners = json_incref(owners);
    }
    json_t *shares = rc == 0 ? json_object_get(root, "shares") : NULL;
    if (rc == 0 && shares) {
        size_t i;
        json_t *sh;
        if (!json_is_array(shares) || json_array_size(shares) > POLICY_ITEMS_MAX)
            rc = bad(err, cap, path, "shares must be an array of {group, projects}");
        json_array_foreach(shares, i, sh)
        {
            const json_t *g = json_object_get(sh, "group"), *pr = json_object_get(sh, "projects");
            int okay = json_is_object(sh) && json_object_size(sh) == 2 && json_is_string(g) &&
                       json_string_length(g) > 0 && json_is_array(pr) &&
                       json_array_size(pr) <= STORE_VIEW_PROJECTS_MAX;
            size_t k;
            const json_t *one;
            json_array_foreach(pr, k, one) okay =
                okay && json_is_string(one) && json_string_length(one) > 0;
            if (rc == 0 && !okay) {
                (void)snprintf(err, cap,
                               "%s: shares[%zu] must be {\"group\": NAME, \"projects\": [NAME or "
                               "PATH, ...]} with at most %d projects",
                               path, i, STORE_VIEW_PROJECTS_MAX);
                rc = MCPAGE_EINVAL;
            }
        }
        if (rc == 0)
            p->shares = json_incref(shares);
    }
    json_decref(root);
    if (rc < 0) {
        tools_policy_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* True when `groups` (one a line) holds `g`. */
static int has_group(const char *groups, const char *g)
{
    size_t n = strlen(g);
    for (const char *l = groups; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (len == n && memcmp(l, g, n) == 0)
            return 1;
        l = e ? e + 1 : l + len;
    }
    return 0;
}

int tools_viewer_apply(const tools_ctx *ctx, const mcpage_call *call, store *s, char *err,
                       size_t cap)
{
    const mcpage_caller *who = mcpage_call_caller(call);
    if (who->subject == NULL || who->all)
        return store_viewer_set(s, NULL); /* local, the static token, no authentication */
    const tools_policy *p = ctx->policy;
    const char *admin = p ? p->admin_scope : "mcpage:admin";
    for (const char *w = who->scopes; w && *w;) {
        while (*w == ' ')
            w++;
        size_t len = strcspn(w, " ");
        if (len && len == strlen(admin) && memcmp(w, admin, len) == 0)
            return store_viewer_set(s, NULL);
        w += len;
    }
    const char *owners[STORE_VIEW_OWNERS_MAX];
    size_t nowners = 0;
    const json_t *mapped = p && p->owners ? json_object_get(p->owners, who->subject) : NULL;
    if (json_is_string(mapped)) {
        owners[nowners++] = json_string_value(mapped);
    } else if (json_is_array(mapped)) {
        for (size_t i = 0; i < json_array_size(mapped) && nowners < STORE_VIEW_OWNERS_MAX; i++)
            owners[nowners++] = json_string_value(json_array_get(mapped, i));
    } else if (store_owner_valid(who->subject)) {
        owners[nowners++] = who->subject;
    } else {
        (void)snprintf(err, cap,
                       "your token's subject \"%.80s\" names no owner of this archive: the "
                       "operator maps it to owner names in the policy file (serve --policy, "
                       "\"owners\")",
                       who->subject);
        return MCPAGE_ESTATE;
    }
    const char *projects[STORE_VIEW_PROJECTS_MAX];
    size_t nprojects = 0;
    size_t i;
    const json_t *sh;
    if (p && p->shares && who->groups)
        json_array_foreach(p->shares, i, sh)
        {
            if (!has_group(who->groups, json_string_value(json_object_get(sh, "group"))))
                continue;
            size_t k;
            const json_t *one;
            json_array_foreach(json_object_get(sh, "projects"), k, one)
            {
                if (nprojects < STORE_VIEW_PROJECTS_MAX)
                    projects[nprojects++] = json_string_value(one);
            }
        }
    store_viewer v = {owners, nowners, projects, nprojects};
    int rc = store_viewer_set(s, &v);
    if (rc < 0)
        (void)snprintf(err, cap, "%s", store_errmsg(s));
    return rc;
}

void tools_viewer_mix(const mcpage_call *call, const store *s, uint8_t fp[MCPAGE_FINGERPRINT_LEN])
{
    (void)s;
    const mcpage_caller *who = mcpage_call_caller(call);
    if (who->subject == NULL || who->all)
        return;
    /* FNV-1a over the fingerprint, the subject, its scopes and groups: the
       count cache keeps one viewer's total apart from another's */
    uint64_t h = 1469598103934665603ULL;
    const char *parts[3] = {who->subject, who->scopes, who->groups};
    for (int i = 0; i < MCPAGE_FINGERPRINT_LEN; i++)
        h = (h ^ fp[i]) * 1099511628211ULL;
    for (int k = 0; k < 3; k++) {
        for (const char *c = parts[k]; c && *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    for (int i = 0; i < MCPAGE_FINGERPRINT_LEN; i++)
        fp[i] = (uint8_t)(h >> (8 * (i % 8)));
}
