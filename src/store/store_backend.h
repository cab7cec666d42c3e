/*
 * What a store backend provides: a table of operations behind the opaque
 * `store` handle. store.c validates arguments and dispatches; a backend
 * (store/sqlite/, store/postgres/) implements every entry.
 * Internal to src/store/: tools and sync include only store.h.
 */
#ifndef MCPAGE_STORE_BACKEND_H
#define MCPAGE_STORE_BACKEND_H

#include <stdarg.h>

#include "store/store.h"
#include "store/store_codec.h"

struct store_sql;
struct store_sql_row;
struct store_sql_dialect;

/* Called for each row of store_ops.sql_rows; a negative return stops. */
typedef int (*store_sql_each_fn)(void *ctx, const struct store_sql_row *row);

/*
 * A text's index tokens made ahead (store_text_tokens): each token as the
 * backend's tokenizer hands it to its index, in order: flags, its bytes
 * (in `bytes`), and the text's bytes it stands for.
 */
typedef struct store_token {
    int flags;
    int from, to; /* text[from..to) */
    int ntok;     /* bytes of the token */
    size_t off;   /* where they are in bytes */
} store_token;

struct store_tokens {
    const char *text; /* the text they were made from, and its length */
    size_t n;
    store_token *v;
    size_t count, cap;
    char *bytes;
    size_t len, bcap;
};

/* Adds a token: 0 or MCPAGE_ENOMEM. */
int store_tokens_add(store_tokens *k, int flags, const char *tok, int ntok, int from, int to);

typedef struct store_ops {
    const char *name;
    /* How the engine spells the shared SQL (store_sql.h). */
    const struct store_sql_dialect *dialect;
    /* Runs a statement built with store_sql, calling `each` for every
     * row (each may be NULL): the shared code of store_usage.c. */
    int (*sql_rows)(store *s, const struct store_sql *q, store_sql_each_fn each, void *ctx);
    void (*close)(store *s);
    int (*projects_list)(store *s, const store_project_filter *f, const store_page *pg,
                         store_projects *out);
    int (*projects_count)(store *s, const store_project_filter *f, int64_t *n);
    int (*sessions_list)(store *s, const store_session_filter *f, const store_page *pg,
                         store_sessions *out);
    int (*sessions_count)(store *s, const store_session_filter *f, int64_t *n);
    int (*session_get)(store *s, const char *id, store_session *out);
    int (*messages_from)(store *s, const char *id, int64_t from, int64_t limit,
                         store_messages *out);
    int (*message_get)(store *s, int64_t id, store_message *out);
    int (*text_lines)(store *s, const char *id, int64_t before, store_text_lines *out);
    int (*raw_read)(store *s, const char *id, int64_t offset, int64_t length, unsigned char **buf,
                    size_t *n, int64_t *total);
    int (*session_summary)(store *s, const char *id, store_session_summary *out);
    int (*search)(store *s, const store_search_filter *f, const store_page *pg, store_hits *out);
    int (*search_count)(store *s, const store_search_filter *f, int64_t *n);
    int (*activity)(store *s, const store_activity_filter *f, size_t max_rows, store_activity *out);
    int (*stats)(store *s, store_stats *out);
    int (*generation)(store *s, int64_t *gen);
    int (*begin)(store *s);
    int (*commit)(store *s);
    int (*rollback)(store *s);
    int (*project_ensure)(store *s, const char *path, const char *name, int64_t *id);
    int (*session_put)(store *s, const store_session_meta *m);
    int (*session_state)(store *s, const char *id, store_session_state *st);
    int (*session_reset)(store *s, const char *id);
    /* packed: the text as store_codec_pack_text packs it, or NULL */
    int (*message_add)(store *s, const store_message *m, const store_text_packed *packed,
                       int64_t *id);
    int packs_texts; /* 1: message_add takes packed texts (store_packs_texts) */
    /* Optional (NULL: no tokens made ahead): store_tokenizer_new's tokenizer, made
     * on the store's thread, then used on one other thread. */
    void *(*tokenizer_new)(store *s);
    void (*tokenizer_free)(void *t);
    int (*text_tokens)(void *t, const char *text, size_t n, store_tokens *out);
    /* v[0..nv): chunks packed as store_raw_pack packs them, stored in order */
    int (*raw_append)(store *s, const char *id, const store_raw_packed *v, size_t nv,
                      int64_t lines);
    int (*session_refresh)(store *s, const char *id);
    int (*tool_call_name)(store *s, const char *id, const char *call_id, char **name);
    int (*source_get)(store *s, const char *hostname, const char *path, store_source *out);
    int (*source_put)(store *s, const store_source *src);
    int (*session_lock)(store *s, const char *id);
    int (*session_unlock)(store *s, const char *id);
    /* Optional (NULL: a claim is never taken without waiting). */
    int (*session_trylock)(store *s, const char *id);
    int (*ping)(store *s);
    int (*sources_all)(store *s, const char *hostname, size_t max_rows, store_sources *out);
    /* Optional (NULL: nothing to check beyond what every call checks). */
    int (*check)(store *s);
    /* Optional (NULL: nothing to keep for later readers). */
    int (*tidy)(store *s);
    /* Optional (NULL: this backend keeps no shared record of ended sessions). */
    int (*ended_record)(store *s, const uint8_t *key, int64_t until);
    int (*ended_lookup)(store *s, const uint8_t *key, bool *ended);
    int (*ended_since)(store *s, int64_t *mark, store_ended_fn each, void *ctx);
} store_ops;

/* The viewer a handle reads as (store_viewer_set). */
struct store_view {
    char owners[STORE_VIEW_OWNERS_MAX][STORE_OWNER_MAX + 1];
    size_t nowners;
    char owner_list[STORE_VIEW_OWNERS_MAX * (STORE_OWNER_MAX + 1) + 2]; /* "|a|b|" */
    int64_t pids[STORE_VIEW_PROJECTS_MAX]; /* the shared projects' ids */
    size_t npids;
};

struct store {
    const store_ops *ops; /* the backend's table */
    void *impl;           /* the backend's connection state */
    int writable;         /* opened with STORE_OPEN_WRITE */
    char errmsg[512];     /* last failure, for store_errmsg() */
    int64_t budget_ms;    /* the bound store_budget_set gave, 0 = none */
    double deadline_us;   /* CLOCK_MONOTONIC microseconds it ends at, 0 = none */
    store_stop_fn stop;   /* the caller's cancellation check, or NULL */
    void *stop_ud;        /* its argument */
    int stopped;          /* the status the budget stopped a statement with, until reset */
    store_codec codec;    /* raw chunks' zstd contexts and last chunk read (store_codec.h) */
    int viewing;          /* store_viewer_set gave a viewer: `view` applies */
    struct store_view view;
};

/* The handle's viewer for a filter's `view`, or NULL (everything). */
static inline const struct store_view *store_view_of(const store *s)
{
    return s->viewing ? &s->view : NULL;
}

/* Records a message for store_errmsg() and returns `status`. */
int store_fail(store *s, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Checks that a keyset position has the part types a list's order needs. */
int store_key_check(store *s, const store_key *k, const store_key_type *types, int n);
/* Sets one part of a row's position. */
void store_key_set_text(store_key_part *p, const char *v);
void store_key_set_int(store_key_part *p, int64_t v);
/* True when the page resumes after a keyset position (else it uses its offset). */
int store_page_keyset(const store_page *pg);

/*
 * The search syntax every backend accepts, one term at a time: words and
 * "quoted phrases" separated by white space; a word of two or more
 * characters ending in `*` is a prefix (the star is not in the term).
 * Returns 1 with the term's bytes [*start, *end) and *prefix, advancing
 * *p past it; 0 when the query has no more terms. What a term means (its
 * tokens, whether it has any) is each backend's business.
 */
int store_query_term(const char **p, const char **start, const char **end, int *prefix);
/* store_query_term(), and in *quoted whether the term was a "quoted phrase"
 * (exact tokens) rather than a word (whose class a backend may ask for:
 * store_words.h). */
int store_query_term_quoted(const char **p, const char **start, const char **end, int *prefix,
                            int *quoted);
/*
 * The budget of store_budget_set: 0 while the work may go on, else
 * MCPAGE_ERANGE (past the deadline) or MCPAGE_ECANCELED (stopped by the
 * caller). Cheap enough for a progress handler.
 */
int store_budget_check(const store *s);
/* Records the message for a statement the budget stopped (`status` from
 * store_budget_check) and returns `status`. */
int store_budget_fail(store *s, int status);
/* Microseconds on the monotonic clock. */
double store_now_us(void);
/*
 * A search query with repeated terms dropped, into out (cap bytes, at
 * least STORE_QUERY_MAX + 3): the same terms in their first order, one
 * space apart. MCPAGE_EINVAL with a message past STORE_QUERY_TERMS_MAX
 * or STORE_QUERY_PREFIXES_MAX distinct terms.
 */
int store_query_normalize(store *s, const char *query, char *out, size_t cap);
/* Takes a session's model calls away before its rows are reset
 * (store_usage.c). */
int store_usage_forget(store *s, const char *session_id);
/* Takes a session's file edits away before its rows are reset
 * (store_edits.c). */
int store_edits_forget(store *s, const char *session_id);
/* strdup that accepts NULL. */
char *store_strdup(const char *src);

/*
 * The display name a new project at `path` tries in turn (`attempt` 0,
 * 1, ...) until one no other project holds: `name` itself, then `name`
 * with more and more of its parent folder, "project (srv/b)", then
 * numbered "project (srv/b) 2", ... Into buf (cut to cap). Shared by the
 * backends' project_ensure, so a name selects exactly one project.
 */
void store_project_name_try(const char *path, const char *name, int attempt, char *buf, size_t cap);
/* Attempts project_ensure makes before it gives up (MCPAGE_ESTORE). */
#define STORE_PROJECT_NAME_TRIES 64

/* Backends. */
int store_sqlite_open(store *s, const char *path, int flags);
int store_pg_open(store *s, const char *url, int flags);
void store_pg_pool_drain(void);

#endif
