/*
 * The model calls parsed lines record, into the store (store_usage_add):
 * the one step every line source shares. Internal to src/sync/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/mcpage.h>

#include "sync/sync_internal.h"

int sync_usage_put(store *s, const char *session_id, int64_t message_id, const sync_record *r,
                   const char *fallback_ts, const char *fallback_model)
{
    const sync_usage *u = &r->usage;
    if (!u->present)
        return 0;
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
