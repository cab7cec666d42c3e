/*
 * The model calls parsed lines record, into the store (store_usage_add):
 * the one step every line source shares. Internal to src/sync/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_internal.h"

#define CUMULATIVE_CALLS_MAX 100000 /* calls one set of running totals is stored as */

static int64_t grew(int64_t now, int64_t before)
{
    return now > before ? now - before : 0;
}

/*
 * Running totals (sync_usage.cumulative): the session's calls of the
 * model so far are subtracted, and what the totals grew by is stored as
 * one call per request made in between, the tokens shared evenly (the
 * remainder on the first). Totals are not one call: stored whole, the
 * long-context rates (past STORE_USAGE_TIER tokens of a call) would
 * price a session's sum as if one request had read it all. A count that
 * went down (the agent's totals restarted) adds nothing of that kind.
 */
static int put_cumulative(store *s, const char *session_id, const sync_usage *u, const char *ts,
                          const char *model)
{
    if (!model || !*model)
        return 0;
    store_usage_filter f = {.group = STORE_USAGE_BY_MODEL,
                            .session_id = session_id,
                            .from_minute = INT64_MIN,
                            .to_minute = INT64_MAX};
    store_usage_sums sums;
    int rc = store_usage_sums_get(s, &f, 4096, &sums);
    if (rc < 0)
        return rc;
    store_usage_sum before = {0};
    for (size_t i = 0; i < sums.count; i++) {
        const store_usage_sum *x = &sums.rows[i];
        if (x->model && strcmp(x->model, model) == 0 && !x->cost_given) {
            before = *x;
            break;
        }
    }
    int64_t d[5] = {grew(u->input, before.input), grew(u->output, before.output),
                    grew(u->cache_creation, before.cache_creation),
                    grew(u->cache_read, before.cache_read), grew(u->reasoning, before.reasoning)};
    store_usage_sums_free(&sums);
    if (d[0] + d[1] + d[2] + d[3] == 0)
        return 0;
    int64_t n = u->requests > before.calls ? u->requests - before.calls : 1;
    if (n > CUMULATIVE_CALLS_MAX)
        n = CUMULATIVE_CALLS_MAX;
    for (int64_t i = 0; i < n; i++) {
        int64_t c[5];
        for (int k = 0; k < 5; k++)
            c[k] = d[k] / n + (i == 0 ? d[k] % n : 0);
        store_usage su = {
            .session_id = session_id,
            .timestamp = ts,
            .model = model,
            .input = c[0],
            .output = c[1],
            .cache_creation = c[2],
            .cache_read = c[3],
            .reasoning = c[4],
        };
        if ((rc = store_usage_add(s, &su)) < 0)
            return rc;
    }
    return 0;
}

int sync_usage_put(store *s, const char *session_id, int64_t message_id, const sync_record *r,
                   const char *fallback_ts, const char *fallback_model)
{
    const sync_usage *u = &r->usage;
    if (!u->present)
        return 0;
    if (u->cumulative)
        return put_cumulative(s, session_id, u,
                              u->timestamp   ? u->timestamp
                              : r->timestamp ? r->timestamp
                                             : fallback_ts,
                              u->model ? u->model : fallback_model);
    char *scoped = NULL;
    if (u->key && u->key_per_session) {
        size_t n = strlen(session_id) + strlen(u->key) + 2;
        if (!(scoped = malloc(n)))
            return MCPAGE_ENOMEM;
        snprintf(scoped, n, "%s/%s", session_id, u->key);
    }
    const char *ts = u->timestamp ? u->timestamp : r->timestamp ? r->timestamp : fallback_ts;
    store_usage su = {
        .session_id = session_id,
        .message_id = message_id,
        .timestamp = ts,
        .call_key = scoped ? scoped : u->key,
        .model = u->model                ? u->model
                 : u->model_from_session ? fallback_model
                                         : NULL,
        .sidechain = u->sidechain,
        .input = u->input,
        .output = u->output,
        .cache_creation = u->cache_creation,
        .cache_creation_1h = u->cache_creation_1h,
        .cache_read = u->cache_read,
        .reasoning = u->reasoning,
        .cost_usd = u->cost_usd,
        .cost_given = u->cost_given,
    };
    int rc = store_usage_add(s, &su);
    free(scoped);
    return rc;
}
