/*
 * What a store backend provides: a table of operations behind the opaque
 * `store` handle. store.c validates arguments and dispatches; a backend
 * (store/sqlite/, later store/postgres/) implements every entry.
 * Internal to src/store/: tools and sync include only store.h.
 */
#ifndef MCPAGE_STORE_BACKEND_H
#define MCPAGE_STORE_BACKEND_H

#include <stdarg.h>

#include "store/store.h"

typedef struct store_ops {
    const char *name;
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
    int (*message_add)(store *s, const store_message *m, int64_t *id);
    int (*raw_append)(store *s, const char *id, const unsigned char *data, size_t n, int64_t lines);
    int (*session_refresh)(store *s, const char *id);
    int (*tool_call_name)(store *s, const char *id, const char *call_id, char **name);
    int (*source_get)(store *s, const char *path, store_source *out);
    int (*source_put)(store *s, const store_source *src);
    int (*sources_all)(store *s, size_t max_rows, store_sources *out);
} store_ops;

struct store {
    const store_ops *ops; /* the backend's table */
    void *impl;           /* the backend's connection state */
    int writable;         /* opened with STORE_OPEN_WRITE */
    char errmsg[512];     /* last failure, for store_errmsg() */
};

/* Records a message for store_errmsg() and returns `status`. */
int store_fail(store *s, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* strdup that accepts NULL. */
char *store_strdup(const char *src);

/* Backends. */
int store_sqlite_open(store *s, const char *path, int flags);

#endif
