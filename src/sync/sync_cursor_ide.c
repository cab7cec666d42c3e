/*
 * Cursor's editor (the IDE): its agent and chat panel ("composer")
 * conversations, read from the editor's own SQLite key-value stores
 * (docs/transcripts.md, "Cursor IDE"), through the folded sync of
 * sync_fold.c, one job per composer:
 *
 * - HOME/User/globalStorage/state.vscdb, table cursorDiskKV(key, value):
 *   composerData:<composerId> is a composer's JSON header {_v, composerId,
 *   name, createdAt, lastUpdatedAt, modelConfig {modelName},
 *   workspaceIdentifier {uri {fsPath}}, ...} whose order of messages is
 *   either fullConversationHeadersOnly [{bubbleId, type}] (newer versions:
 *   each message a row bubbleId:<composerId>:<bubbleId>) or an inline
 *   `conversation` array of the same bubbles (older versions);
 * - HOME/User/workspaceStorage/<hash>/: workspace.json names the folder
 *   ({"folder": "file:///path"}) and its state.vscdb's ItemTable row
 *   composer.composerData lists the composers opened there (allComposers):
 *   the project of a composer whose header names no workspace.
 *
 * Both databases belong to a running editor: they are opened read-only
 * (sync_source_db_open: no write, no lock beyond a reader's, no WAL or
 * journal file made), each composer read in one read transaction. The
 * global database is one file the editor rewrites all the time: whether
 * anything changed is its size and time (and its -wal's), kept as a
 * marker record once every composer of a pass was read; an unchanged
 * database costs a stat. A changed one is listed (one query over the
 * composerData rows); a composer whose header bytes are the same as at
 * its last sync is not read again.
 *
 * A composer is rendered as JSON Lines, its raw copy: first
 * {"table": "composerData", "key", "row": the header's stable facts (no
 * lastUpdatedAt, no conversation, none of its keys' secrets) plus
 * "workspace"}, then one line per message in conversation order,
 * {"table": "cursorDiskKV", "key": "bubbleId:...", "value": the row's
 * JSON text} or, for an inline conversation, {"table": "composerData",
 * "key", "index", "bubble": the element}. A new message appends a line.
 */
#define _GNU_SOURCE /* open_memstream */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <sqlite3.h>

#include <mcpage/mcpage.h>

#include "sync/sync_cursor_ide.h"
#include "sync/sync_fold.h"
#include "sync/sync_json.h"
#include "sync/sync_source.h"
#include "sync/sync_vscode.h"

#define CIDE_VALUE_MAX      (64 << 20) /* bytes of one composer or bubble value read */
#define CIDE_COMPOSERS_MAX  200000     /* composers of one database */
#define CIDE_MESSAGES_MAX   200000     /* messages of one composer */
#define CIDE_WORKSPACES_MAX 20000      /* workspace folders looked at */
#define CIDE_ID_MAX         100        /* bytes of a composer or bubble id */

static const char global_rel[] = "User/globalStorage/state.vscdb";

/* ---- small helpers ---------------------------------------------------- */

/* 64-bit FNV-1a, kept positive: a value's identity. */
static int64_t value_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return (int64_t)(h & 0x7fffffffffffffffULL);
}

/* An id Cursor makes (a UUID; letters, digits, '-', '_', '.'), not empty. */
static int id_ok(const char *s, size_t n)
{
    if (n == 0 || n > CIDE_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

/* The size, inode and newest time of a database and its -wal, as one
 * identity; 0, or -1 when the database is not there. */
static int db_ident(const char *path, int64_t *size, int64_t *inode, int64_t *mtime_ns)
{
    struct stat sb, wb;
    if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
        return -1;
    char wal[SYNC_PATH_MAX + 8];
    (void)snprintf(wal, sizeof wal, "%s-wal", path);
    *size = (int64_t)sb.st_size;
    *inode = (int64_t)sb.st_ino;
    *mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if (stat(wal, &wb) == 0 && wb.st_size > 0) {
        int64_t m = (int64_t)wb.st_mtim.tv_sec * 1000000000 + wb.st_mtim.tv_nsec;
        *size += (int64_t)wb.st_size;
        *mtime_ns = m > *mtime_ns ? m : *mtime_ns;
    }
    return 0;
}

/* A composer header's workspace folder (owned), or NULL: newer headers
 * name it (workspaceIdentifier.uri.fsPath, or .path), else the first
 * tracked git repository. */
static char *header_workspace(json_t *h)
{
    json_t *uri = json_object_get(json_object_get(h, "workspaceIdentifier"), "uri");
    const char *p = sync_json_str(uri, "fsPath");
    if (!p || p[0] != '/')
        p = sync_json_str(uri, "path");
    if (!p || p[0] != '/') {
        json_t *repos = json_object_get(h, "trackedGitRepos");
        p = sync_json_str(json_array_get(repos, 0), "repoPath");
    }
    if ((!p || p[0] != '/') && sync_json_str(uri, "external"))
        return sync_vscode_uri_path(sync_json_str(uri, "external"));
    return p && p[0] == '/' ? sync_short_copy(p, SYNC_PATH_MAX - 1) : NULL;
}

/* The messages a header orders: its headers array (newer), else its
 * inline conversation (older); NULL when it holds none. *inline_conv is
 * set for the second. */
static json_t *header_order(json_t *h, int *inline_conv)
{
    json_t *a = json_object_get(h, "fullConversationHeadersOnly");
    *inline_conv = 0;
    if (json_is_array(a) && json_array_size(a) > 0)
        return a;
    a = json_object_get(h, "conversation");
    if (json_is_array(a) && json_array_size(a) > 0) {
        *inline_conv = 1;
        return a;
    }
    return NULL;
}

/* ---- the workspace folders (which project a composer belongs to) ------ */

/*
 * VS Code-family workspace storage: HOME/User/workspaceStorage/<hash>/
 * holds workspace.json ({"folder": "file:///path"}, or {"workspace":
 * ".../x.code-workspace"} for a multi-root one: not a folder, not used)
 * and the workspace's state.vscdb. Cursor lists the composers opened in a
 * workspace in its ItemTable row composer.composerData ({allComposers:
 * [{composerId, ...}]}). Built once per pass, only when a composer to
 * read names no workspace itself.
 */
typedef struct ws_map {
    int built;
    sync_idmap ids; /* composerId -> index into folders */
    char **folders; /* owned */
    size_t n, cap;
} ws_map;

static void ws_map_free(ws_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->folders[i]);
    free(m->folders);
    sync_idmap_free(&m->ids);
    memset(m, 0, sizeof *m);
}

typedef struct ws_walk {
    ws_map *m;
    const char *home;
    const char *source;
    sync_report *rep;
    size_t seen;
} ws_walk;

static int ws_entry(void *ud, const struct dirent *e, char *dir)
{
    (void)e;
    ws_walk *w = ud;
    char path[SYNC_PATH_MAX + 32], why[SYNC_WARNING_LEN] = "";
    char *folder = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (++w->seen > CIDE_WORKSPACES_MAX)
        goto out;
    if (!(folder = sync_vscode_workspace(w->home, dir, w->rep, w->source)))
        goto out;
    (void)snprintf(path, sizeof path, "%s/state.vscdb", dir);
    struct stat sb;
    if (stat(path, &sb) < 0)
        goto out;
    if (sync_source_db_open(w->home, path, &db, why, sizeof why) < 0) {
        sync_warn(w->rep, w->source, path, 0, why);
        goto out;
    }
    static const char *const cols[] = {"key", "value", NULL};
    if (sync_source_db_table(db, "ItemTable", cols, why, sizeof why) < 0 ||
        sqlite3_prepare_v2(db, "SELECT value FROM ItemTable WHERE key = 'composer.composerData'",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW)
        goto out;
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    const char *v = (const char *)sqlite3_column_blob(st, 0);
    json_t *o = v && n <= CIDE_VALUE_MAX ? sync_json_loadb(v, n, 0, NULL) : NULL;
    json_t *all = json_object_get(o, "allComposers");
    if (json_is_array(all) && json_array_size(all) > 0) {
        if (sync_grow((void **)&w->m->folders, &w->m->cap, w->m->n, sizeof *w->m->folders, 16) <
            0) {
            rc = MCPAGE_ENOMEM;
        } else {
            long at = (long)w->m->n;
            w->m->folders[w->m->n++] = folder;
            folder = NULL;
            size_t i;
            json_t *c;
            json_array_foreach(all, i, c)
            {
                const char *id = sync_json_str(c, "composerId");
                if (rc == 0 && id && id_ok(id, strlen(id)) && sync_idmap_get(&w->m->ids, id) < 0)
                    rc = sync_idmap_put(&w->m->ids, id, at);
            }
        }
    }
    json_decref(o);
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(folder);
    free(dir);
    return rc;
}

static int ws_map_build(ws_map *m, const char *home, const char *source, sync_report *rep)
{
    m->built = 1;
    char root[SYNC_PATH_MAX];
    int k = snprintf(root, sizeof root, "%s/User/workspaceStorage", home);
    if (k < 0 || (size_t)k >= sizeof root)
        return 0;
    ws_walk w = {.m = m, .home = home, .source = source, .rep = rep};
    DIR *d = sync_source_opendir(home, root, rep, source);
    return d ? sync_dir_each(d, root, ws_entry, &w) : 0;
}

/* ---- discovery -------------------------------------------------------- */

/* Makes one composer's job from its header row. */
static int composer_job(sync_fold_jobs *js, const sync_cursor_ide_as *as, const char *home,
                        const char *dbpath, int64_t inode, const char *id, const unsigned char *v,
                        size_t n, ws_map *wm, sync_report *rep)
{
    json_t *h = sync_json_loadb((const char *)v, n, 0, NULL);
    int inl = 0;
    if (!json_is_object(h) || !header_order(h, &inl)) {
        json_decref(h); /* a draft never sent, or not a header: no session */
        return 0;
    }
    char *cwd = header_workspace(h);
    if (!cwd) {
        if (!wm->built && ws_map_build(wm, home, as->source, rep) == MCPAGE_ENOMEM) {
            json_decref(h);
            return MCPAGE_ENOMEM;
        }
        long at = sync_idmap_get(&wm->ids, id);
        if (at >= 0 && (size_t)at < wm->n && wm->folders)
            cwd = sync_dup(wm->folders[at]);
    }
    const char *name = sync_json_str(h, "name");
    char vpath[SYNC_PATH_MAX + CIDE_ID_MAX + 8], sid[STORE_ID_MAX + 1];
    (void)snprintf(vpath, sizeof vpath, "%s#%s", dbpath, id);
    (void)snprintf(sid, sizeof sid, "%s%s", as->id_prefix, id);
    sync_fold_job j = {.fmt = as->fmt, .home = sync_dup(home)};
    j.path = sync_short_copy(vpath, sizeof vpath);
    j.db = sync_dup(dbpath);
    j.session_id = sync_dup(sid);
    j.row_id = sync_dup(id);
    j.cwd = cwd;
    j.title = name && *name ? sync_short_copy(name, SYNC_TITLE_MAX) : NULL;
    j.size = (int64_t)n;
    j.inode = inode;
    j.mtime_ns = value_hash(v, n);
    json_decref(h);
    if (!j.path || !j.db || !j.session_id || !j.row_id || !j.home) {
        sync__fold_job_free(&j);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(js, &j);
}

/* 1 when the marker `s` holds for `path` on `hostname` says it is unchanged. */
static int unchanged(store *s, const char *hostname, const char *path, int64_t size, int64_t inode,
                     int64_t mtime)
{
    if (!s)
        return 0;
    store_source src = {0};
    int same = store_source_get(s, hostname, path, &src) == 0 && src.size == size &&
               src.inode == inode && src.mtime_ns == mtime;
    store_source_clear(&src);
    return same;
}

/* A database's marker job (sync_fold_job.mark). */
static int add_marker(sync_fold_jobs *js, const sync_cursor_ide_as *as, const char *home,
                      const char *path, int64_t size, int64_t inode, int64_t mtime)
{
    sync_fold_job m = {.fmt = as->fmt, .mark = 1, .home = sync_dup(home)};
    m.path = sync_dup(path);
    m.db = sync_dup(path);
    m.size = size;
    m.inode = inode;
    m.mtime_ns = mtime;
    if (!m.path || !m.db || !m.home) {
        sync__fold_job_free(&m);
        return MCPAGE_ENOMEM;
    }
    return sync__fold_jobs_add(js, &m);
}

static int global_discover(sync_fold_jobs *js, const char *home, store *s, const char *hostname,
                           sync_report *rep, const sync_cursor_ide_as *as)
{
    char path[SYNC_PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/%s", home, global_rel);
    if (k < 0 || (size_t)k >= sizeof path)
        return 0;
    int64_t size = 0, inode = 0, mtime = 0;
    if (db_ident(path, &size, &inode, &mtime) < 0)
        return 0; /* no editor database (yet) */
    if (unchanged(s, hostname, path, size, inode, mtime))
        return 0; /* unchanged since every composer of it was read */
    int64_t warned_at = rep->warnings;
    sqlite3 *db = NULL;
    char why[SYNC_WARNING_LEN] = "";
    int rc = sync_source_db_open(home, path, &db, why, sizeof why);
    static const char *const cols[] = {"key", "value", NULL};
    if (rc == 0 && sync_source_db_table(db, "cursorDiskKV", cols, why, sizeof why) < 0)
        rc = MCPAGE_EINVAL;
    if (rc < 0) {
        sync_warn(rep, as->source, path, 0, why);
        sqlite3_close(db);
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int step = SQLITE_DONE;
    ws_map wm = {0};
    size_t found = 0;
    /* the key's own index: only the composers' rows are visited */
    if (sqlite3_prepare_v2(db,
                           "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' "
                           "AND key < 'composerData;' ORDER BY key",
                           -1, &st, NULL) != SQLITE_OK) {
        (void)snprintf(why, sizeof why, "not a Cursor state database: %s", sqlite3_errmsg(db));
        sync_warn(rep, as->source, path, 0, why);
        sqlite3_close(db);
        return 0;
    }
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (!key || strncmp(key, "composerData:", 13) != 0)
            continue;
        const char *id = key + 13;
        if (!id_ok(id, strlen(id)))
            continue;
        if (++found > CIDE_COMPOSERS_MAX) {
            (void)snprintf(why, sizeof why, "more than %d composers: the rest not read",
                           CIDE_COMPOSERS_MAX);
            sync_warn(rep, as->source, path, 0, why);
            break;
        }
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        const unsigned char *v = sqlite3_column_blob(st, 1);
        if (!v || n == 0)
            continue;
        if (n > CIDE_VALUE_MAX) {
            (void)snprintf(why, sizeof why, "%.100s: a header of %zu bytes, past the %d MiB limit",
                           key, n, CIDE_VALUE_MAX >> 20);
            sync_warn(rep, as->source, path, 0, why);
            continue;
        }
        rc = composer_job(js, as, home, path, inode, id, v, n, &wm, rep);
    }
    if (rc == 0 && step != SQLITE_DONE && step != SQLITE_ROW) {
        (void)snprintf(why, sizeof why, "listing composers: %s", sync_source_db_error(db, step));
        sync_warn(rep, as->source, path, 0, why);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    ws_map_free(&wm);
    if (rc < 0 || step != SQLITE_DONE || rep->warnings > warned_at)
        return rc; /* something was left out: listed again on the next sync */
    /* the marker: stored once every composer above was read */
    return add_marker(js, as, home, path, size, inode, mtime);
}

/* ---- the chat panel before composers (per workspace) ------------------ */

/*
 * Cursor's first chat panel kept a workspace's chats in that workspace's
 * state.vscdb, ItemTable row PANEL_KEY: {tabs: [{tabId, chatTitle,
 * timestamp?, bubbles: [{type: "user" | "ai", text, modelType?, ...}]}]}.
 * One session per tab with bubbles, its project the workspace's folder.
 * Each workspace database has its own marker: unchanged, a stat.
 */
static const char panel_key[] = "workbench.panel.aichat.view.aichat.chatdata";

/* The panel's chats of one workspace database (the JSON, owned), or NULL
 * (none, or unreadable: `why` says which when it is a warning). */
static json_t *panel_read(const char *home, const char *dbpath, char *why, size_t whylen)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    json_t *o = NULL;
    static const char *const cols[] = {"key", "value", NULL};
    if (sync_source_db_open(home, dbpath, &db, why, whylen) < 0 ||
        sync_source_db_table(db, "ItemTable", cols, why, whylen) < 0 ||
        sqlite3_prepare_v2(db, "SELECT value FROM ItemTable WHERE key = ?1", -1, &st, NULL) !=
            SQLITE_OK)
        goto out;
    sqlite3_bind_text(st, 1, panel_key, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        const char *v = (const char *)sqlite3_column_blob(st, 0);
        if (v && n <= CIDE_VALUE_MAX)
            o = sync_json_loadb(v, n, 0, NULL);
        else if (v)
            (void)snprintf(why, whylen, "%s: past the %d MiB limit", panel_key,
                           CIDE_VALUE_MAX >> 20);
    } else if (step != SQLITE_DONE) {
        (void)snprintf(why, whylen, "%s", sync_source_db_error(db, step));
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return o;
}

/* A tab's title (chatTitle; title in some versions), or NULL. */
static const char *tab_title(json_t *tab)
{
    const char *t = sync_json_str(tab, "chatTitle");
    return t && *t ? t : sync_json_str(tab, "title");
}

/* A tab's own time in ms (timestamp, createdAt or lastSendTime), or NULL. */
static json_t *tab_time(json_t *tab)
{
    static const char *const keys[] = {"timestamp", "createdAt", "lastSendTime", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(tab, keys[i]);
        if (json_is_number(v) && json_number_value(v) > 1e11)
            return v;
    }
    return NULL;
}

/* A tab's id, when it is one Cursor makes. */
static const char *tab_id(json_t *tab)
{
    const char *id = sync_json_str(tab, "tabId");
    if (!id)
        id = sync_json_str(tab, "id");
    return id && id_ok(id, strlen(id)) ? id : NULL;
}

typedef struct panel_walk {
    sync_fold_jobs *js;
    const char *home;
    store *s;
    const char *hostname;
    sync_report *rep;
    const sync_cursor_ide_as *as;
    size_t seen;
} panel_walk;

static int panel_entry(void *ud, const struct dirent *e, char *dir)
{
    (void)e;
    panel_walk *w = ud;
    char path[SYNC_PATH_MAX], why[SYNC_WARNING_LEN] = "";
    int64_t size = 0, inode = 0, mtime = 0;
    int rc = 0;
    json_t *o = NULL;
    char *cwd = NULL;
    int k = snprintf(path, sizeof path, "%s/state.vscdb", dir);
    if (++w->seen > CIDE_WORKSPACES_MAX || k < 0 || (size_t)k >= sizeof path ||
        db_ident(path, &size, &inode, &mtime) < 0 ||
        unchanged(w->s, w->hostname, path, size, inode, mtime))
        goto out;
    int64_t warned_at = w->rep->warnings;
    o = panel_read(w->home, path, why, sizeof why);
    if (why[0])
        sync_warn(w->rep, w->as->source, path, 0, why);
    json_t *tabs = json_object_get(o, "tabs");
    if (json_is_array(tabs) && json_array_size(tabs) > 0)
        cwd = sync_vscode_workspace(w->home, dir, w->rep, w->as->source);
    size_t i;
    json_t *tab;
    json_array_foreach(tabs, i, tab)
    {
        const char *id = tab_id(tab);
        json_t *bubbles = json_object_get(tab, "bubbles");
        if (rc < 0 || i >= CIDE_COMPOSERS_MAX)
            break;
        if (!id || !json_is_array(bubbles) || json_array_size(bubbles) == 0)
            continue;
        char *dump = json_dumps(tab, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!dump) {
            rc = MCPAGE_ENOMEM;
            break;
        }
        char vpath[SYNC_PATH_MAX + CIDE_ID_MAX + 16], sid[STORE_ID_MAX + 1];
        (void)snprintf(vpath, sizeof vpath, "%s#panel:%s", path, id);
        (void)snprintf(sid, sizeof sid, "%spanel-%s", w->as->id_prefix, id);
        const char *title = tab_title(tab);
        sync_fold_job j = {.fmt = w->as->panel_fmt, .home = sync_dup(w->home)};
        j.path = sync_short_copy(vpath, sizeof vpath);
        j.db = sync_dup(path);
        j.session_id = sync_dup(sid);
        j.row_id = sync_dup(id);
        j.cwd = cwd ? sync_dup(cwd) : NULL;
        j.title = title && *title ? sync_short_copy(title, SYNC_TITLE_MAX) : NULL;
        j.size = (int64_t)strlen(dump);
        j.inode = inode;
        j.mtime_ns = value_hash((const unsigned char *)dump, strlen(dump));
        free(dump);
        if (!j.path || !j.db || !j.session_id || !j.row_id || !j.home) {
            sync__fold_job_free(&j);
            rc = MCPAGE_ENOMEM;
            break;
        }
        rc = sync__fold_jobs_add(w->js, &j);
    }
    if (rc == 0 && w->rep->warnings == warned_at)
        rc = add_marker(w->js, w->as, w->home, path, size, inode, mtime);
out:
    json_decref(o);
    free(cwd);
    free(dir);
    return rc;
}

static int panel_discover(sync_fold_jobs *js, const char *home, store *s, const char *hostname,
                          sync_report *rep, const sync_cursor_ide_as *as)
{
    char root[SYNC_PATH_MAX];
    int k = snprintf(root, sizeof root, "%s/User/workspaceStorage", home);
    if (k < 0 || (size_t)k >= sizeof root || !as->panel_fmt)
        return 0;
    panel_walk w = {.js = js, .home = home, .s = s, .hostname = hostname, .rep = rep, .as = as};
    DIR *d = sync_source_opendir(home, root, rep, as->source);
    return d ? sync_dir_each(d, root, panel_entry, &w) : 0;
}

int sync__cursor_ide_discover(sync_fold_jobs *js, const char *home, store *s, const char *hostname,
                              sync_report *rep, const sync_cursor_ide_as *as)
{
    int rc = global_discover(js, home, s, hostname, rep, as);
    return rc < 0 ? rc : panel_discover(js, home, s, hostname, rep, as);
}

int sync__cursor_ide_found(const char *home)
{
    char path[SYNC_PATH_MAX];
    struct stat sb;
    int k = snprintf(path, sizeof path, "%s/%s", home, global_rel);
    if (k > 0 && (size_t)k < sizeof path && stat(path, &sb) == 0)
        return 1;
    k = snprintf(path, sizeof path, "%s/User/workspaceStorage", home);
    return k > 0 && (size_t)k < sizeof path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* ---- rendering one composer ------------------------------------------- */

/* The header keys kept in the first line: facts that stay (no
 * lastUpdatedAt, status or conversation, which change with every message,
 * and none of the keys Cursor keeps beside them, blobEncryptionKey and
 * the like). */
static const char *const header_keys[] = {
    "_v",        "composerId",  "name",      "createdAt",           "modelConfig",
    "isAgentic", "unifiedMode", "forceMode", "workspaceIdentifier", NULL};

static int put_line(FILE *w, json_t *line)
{
    int ok = line && json_dumpf(line, w, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', w) != EOF;
    json_decref(line);
    if (ok && ftell(w) > SYNC_FOLD_READ_MAX)
        return MCPAGE_ERANGE;
    return ok ? 0 : MCPAGE_ENOMEM;
}

static char *bubble_time(json_t *b);

typedef struct render {
    sqlite3 *db;
    sqlite3_stmt *get;
    FILE *w;
    int db_rc; /* SQLite's code of a failed read, or 0 */
    size_t too_large;
    char *last_time; /* the time of the last message that has one (owned), or NULL */
} render;

/* A message without a time of its own is given the time of the last one
 * before it that has one (in the line, "time"), so a message reads the
 * same whether it was stored with the messages before it or after them;
 * before any, the composer's createdAt (the session's start) applies. */
static void carry_time(render *r, json_t *line, json_t *bubble)
{
    char *t = bubble_time(bubble);
    if (t) {
        free(r->last_time);
        r->last_time = t;
    } else if (r->last_time && json_is_object(bubble)) {
        json_object_set_new(line, "time", json_string(r->last_time));
    }
}

/* The value of `key` (a copy in *out, *n bytes); MCPAGE_ENOTFOUND,
 * MCPAGE_ERANGE (past CIDE_VALUE_MAX, *n its size), MCPAGE_EIO. */
static int get_value(render *r, const char *key, unsigned char **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_reset(r->get);
    sqlite3_bind_text(r->get, 1, key, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(r->get);
    if (step != SQLITE_ROW) {
        if (step != SQLITE_DONE)
            r->db_rc = step;
        return step == SQLITE_DONE ? MCPAGE_ENOTFOUND : MCPAGE_EIO;
    }
    *n = (size_t)sqlite3_column_bytes(r->get, 0);
    const unsigned char *v = sqlite3_column_blob(r->get, 0);
    if (!v)
        return MCPAGE_ENOTFOUND;
    if (*n > CIDE_VALUE_MAX)
        return MCPAGE_ERANGE;
    if (!(*out = malloc(*n + 1)))
        return MCPAGE_ENOMEM;
    memcpy(*out, v, *n);
    (*out)[*n] = 0;
    return 0;
}

/* The messages of a headers-only composer: one line per bubble row. */
static int render_bubbles(render *r, const char *cid, json_t *order)
{
    sync_idmap seen = {0};
    int rc = 0;
    size_t i;
    json_t *hd;
    json_array_foreach(order, i, hd)
    {
        if (rc < 0 || i >= CIDE_MESSAGES_MAX)
            break;
        const char *bid = sync_json_str(hd, "bubbleId");
        if (!bid || !id_ok(bid, strlen(bid)))
            continue;
        int fresh = sync_idmap_add(&seen, bid);
        if (fresh <= 0) { /* a header naming a bubble twice: once */
            rc = fresh;
            continue;
        }
        char key[2 * CIDE_ID_MAX + 16];
        (void)snprintf(key, sizeof key, "bubbleId:%s:%s", cid, bid);
        unsigned char *v = NULL;
        size_t n = 0;
        int got = get_value(r, key, &v, &n);
        json_t *line = json_pack("{s:s,s:s}", "table", "cursorDiskKV", "key", key);
        json_t *type = json_object_get(hd, "type");
        if (line && json_is_integer(type))
            json_object_set(line, "type", type);
        if (got == 0) {
            json_object_set_new(line, "value", sync_json_text((const char *)v, n));
            json_t *b = sync_json_loadb((const char *)v, n, 0, NULL);
            carry_time(r, line, b);
            json_decref(b);
        } else if (got == MCPAGE_ENOTFOUND) {
            json_object_set_new(line, "missing", json_true());
        } else if (got == MCPAGE_ERANGE) {
            json_object_set_new(line, "too_large", json_integer((json_int_t)n));
            r->too_large++;
        } else {
            json_decref(line);
            free(v);
            rc = got;
            break;
        }
        free(v);
        rc = put_line(r->w, line);
    }
    sync_idmap_free(&seen);
    return rc;
}

static int render_inline(render *r, const char *cid, json_t *order)
{
    char key[CIDE_ID_MAX + 16];
    (void)snprintf(key, sizeof key, "composerData:%s", cid);
    int rc = 0;
    size_t i;
    json_t *b;
    json_array_foreach(order, i, b)
    {
        if (rc < 0 || i >= CIDE_MESSAGES_MAX)
            break;
        if (!json_is_object(b))
            continue;
        json_t *line = json_pack("{s:s,s:s,s:I,s:O}", "table", "composerData", "key", key, "index",
                                 (json_int_t)i, "bubble", b);
        if (line)
            carry_time(r, line, b);
        rc = put_line(r->w, line);
    }
    return rc;
}

static int cide_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen)
{
    *out = NULL;
    *len = 0;
    if (!job->row_id || !job->db)
        return MCPAGE_EINVAL;
    render r = {0};
    int rc = sync_source_db_open(job->home ? job->home : "/", job->db, &r.db, why, whylen);
    static const char *const cols[] = {"key", "value", NULL};
    if (rc == 0)
        rc = sync_source_db_table(r.db, "cursorDiskKV", cols, why, whylen);
    if (rc < 0) {
        sqlite3_close(r.db);
        return rc == MCPAGE_EPARSE ? MCPAGE_EINVAL : rc;
    }
    char *buf = NULL;
    size_t n = 0;
    json_t *h = NULL;
    unsigned char *hv = NULL;
    size_t hn = 0;
    r.w = open_memstream(&buf, &n);
    rc = r.w ? 0 : MCPAGE_ENOMEM;
    /* one read transaction: the header and its bubbles of one moment */
    if (rc == 0 && sqlite3_exec(r.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        rc = MCPAGE_EIO;
    if (rc == 0 && sqlite3_prepare_v2(r.db, "SELECT value FROM cursorDiskKV WHERE key = ?1", -1,
                                      &r.get, NULL) != SQLITE_OK)
        rc = MCPAGE_EIO;
    char key[CIDE_ID_MAX + 16];
    (void)snprintf(key, sizeof key, "composerData:%s", job->row_id);
    if (rc == 0) {
        rc = get_value(&r, key, &hv, &hn);
        if (rc == MCPAGE_ENOTFOUND) {
            /* deleted since the listing: the stored session stays */
            (void)snprintf(why, whylen, "%s: gone while being read, skipped", key);
            rc = MCPAGE_ESTATE;
        } else if (rc == MCPAGE_ERANGE)
            (void)snprintf(why, whylen, "%s: past the %d MiB limit", key, CIDE_VALUE_MAX >> 20);
    }
    if (rc == 0 && hv) {
        json_error_t err;
        h = sync_json_loadb((const char *)hv, hn, 0, &err);
        if (!json_is_object(h)) {
            (void)snprintf(why, whylen, "%s: %s", key, h ? "not a JSON object" : err.text);
            rc = MCPAGE_EPARSE;
        }
    }
    if (rc == 0 && h) {
        json_t *row = json_object();
        for (size_t i = 0; row && header_keys[i]; i++) {
            json_t *v = json_object_get(h, header_keys[i]);
            if (v)
                json_object_set(row, header_keys[i], v);
        }
        if (row && job->cwd)
            json_object_set_new(row, "workspace", json_string(job->cwd));
        rc = put_line(r.w, json_pack("{s:s,s:s,s:o}", "table", "composerData", "key", key, "row",
                                     row ? row : json_object()));
        int inl = 0;
        json_t *order = header_order(h, &inl);
        if (rc == 0 && order)
            rc = inl ? render_inline(&r, job->row_id, order)
                     : render_bubbles(&r, job->row_id, order);
    }
    if (rc == MCPAGE_ERANGE && !why[0])
        (void)snprintf(why, whylen, "the composer's messages pass the %d MiB read limit: skipped",
                       SYNC_FOLD_READ_MAX >> 20);
    if (rc == MCPAGE_EIO) {
        (void)snprintf(why, whylen, "%s",
                       r.db_rc ? sync_source_db_error(r.db, r.db_rc) : sqlite3_errmsg(r.db));
        if (r.db_rc)
            rc = sync_source_db_status(r.db_rc);
    }
    if (rc == 0 && r.too_large)
        (void)snprintf(why, whylen,
                       "%zu message(s) past the %d MiB limit of a value: kept as a marker",
                       r.too_large, CIDE_VALUE_MAX >> 20);
    json_decref(h);
    free(hv);
    free(r.last_time);
    sqlite3_finalize(r.get);
    sqlite3_exec(r.db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(r.db);
    if (r.w && fclose(r.w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* ---- lines to messages ------------------------------------------------ */

static int cide_fold_line(sync_fold *f, const char *line, size_t len, int64_t off, int64_t line_no,
                          char *why, size_t whylen)
{
    json_error_t err;
    json_t *root = sync_json_loadb(line, len, 0, &err);
    const char *table = sync_json_str(root, "table");
    const char *key = sync_json_str(root, "key");
    json_t *row = json_object_get(root, "row");
    int rc = 0;
    if (!table || !key) {
        (void)snprintf(why, whylen, "%s", root ? "not a rendered row" : err.text);
        rc = MCPAGE_EPARSE;
    } else if (json_is_object(row)) {
        /* the header: the composer's facts */
        sync_fold_set(&f->cwd, sync_json_str(row, "workspace"));
        const char *model = sync_json_str(json_object_get(row, "modelConfig"), "modelName");
        if (model && strcmp(model, "default") != 0)
            sync_fold_set(&f->model, model);
        const char *name = sync_json_str(row, "name");
        if (name && *name) {
            free(f->title);
            f->title = sync_short_copy(name, SYNC_TITLE_MAX);
        }
        json_t *c = json_object_get(row, "createdAt");
        char *iso = json_is_number(c) ? sync_iso_ms(json_number_value(c)) : NULL;
        if (iso) {
            free(f->start_time);
            f->start_time = iso;
        }
    } else if (json_is_true(json_object_get(root, "missing"))) {
        (void)snprintf(why, whylen, "%.200s: named by the composer's headers but missing", key);
        rc = MCPAGE_EPARSE;
    } else {
        json_t *index = json_object_get(root, "index");
        char id[SYNC_FOLD_ID_MAX];
        if (json_is_integer(index))
            (void)snprintf(id, sizeof id, "#%lld", (long long)json_integer_value(index));
        else
            (void)snprintf(id, sizeof id, "%s", key + (strncmp(key, "bubbleId:", 9) == 0 ? 9 : 0));
        rc = sync_fold_push(f, id, off, (int64_t)len, line_no, -1);
    }
    json_decref(root);
    return rc;
}

/* A time a bubble gives: createdAt (ISO 8601 text, or ms), else
 * timingInfo's wall-clock times (ms; clientStartTime is a process clock,
 * not used). Owned, or NULL. */
static char *bubble_time(json_t *b)
{
    json_t *c = json_object_get(b, "createdAt");
    if (!c)
        c = json_object_get(b, "timestamp");
    if (json_is_string(c) && json_string_length(c) >= 10 && json_string_length(c) < 64)
        return sync_short_copy(json_string_value(c), 64);
    if (json_is_number(c) && json_number_value(c) > 1e11)
        return sync_iso_ms(json_number_value(c));
    json_t *t = json_object_get(b, "timingInfo");
    static const char *const keys[] = {"clientRpcSendTime", "clientSettleTime", "clientEndTime",
                                       NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(t, keys[i]);
        if (json_is_number(v) && json_number_value(v) > 1e11)
            return sync_iso_ms(json_number_value(v));
    }
    return NULL;
}

/* A JSON-holding string as its value (owned reference), or the value. */
static json_t *maybe_json(json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        while (n && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
            s++, n--;
        if (n && (*s == '{' || *s == '[')) {
            json_t *p = json_loadb(s, n, 0, NULL);
            if (p)
                return p;
        }
    }
    return json_incref(v);
}

/* A tool call's failure: its status, or an error its result names. */
static int tool_failed(json_t *tf, json_t *result)
{
    const char *st = sync_json_str(tf, "status");
    if (st && (strcmp(st, "error") == 0 || strcmp(st, "failed") == 0))
        return 1;
    json_t *e = json_object_get(result, "error");
    if (e && !json_is_null(e) && !json_is_false(e) &&
        !(json_is_string(e) && !*json_string_value(e)))
        return 1;
    const char *ad = sync_json_str(json_object_get(tf, "additionalData"), "status");
    return ad && strcmp(ad, "error") == 0;
}

static void set_text(sync_record *r, const char *role, sync_text *t, const char *ts)
{
    r->kind = SYNC_MESSAGE;
    r->role = role;
    r->text = sync_text_finish(t);
    r->timestamp = ts ? sync_short_copy(ts, 64) : NULL;
}

/* The records of one bubble (at most 3: text, call, result). */
size_t sync__cursor_ide_bubble(json_t *b, json_int_t header_type, const char *id,
                               const char *fallback_time, sync_record *r)
{
    if (!json_is_object(b))
        return 0;
    json_t *type = json_object_get(b, "type");
    json_int_t t = json_is_integer(type) ? json_integer_value(type) : header_type;
    if (json_is_string(type)) /* the oldest chat panel's bubbles: "user" | "ai" */
        t = strcmp(json_string_value(type), "user") == 0 ? 1 : 2;
    json_t *tf = json_object_get(b, "toolFormerData");
    if (!json_is_object(tf))
        tf = NULL;
    char *ts = bubble_time(b);
    if (!ts && fallback_time)
        ts = sync_short_copy(fallback_time, 64);
    size_t k = 0;
    const char *model = sync_json_str(json_object_get(b, "modelInfo"), "modelName");
    if (!model)
        model = sync_json_str(b, "modelType");
    const char *text = sync_json_str(b, "text");
    if (!text || !*text)
        text = sync_json_str(b, "rawText");
    if (t == 1) {
        sync_text tx = {0};
        sync_text_adds(&tx, text);
        json_t *imgs = json_object_get(b, "images");
        for (size_t i = 0; json_is_array(imgs) && i < json_array_size(imgs); i++) {
            sync_text_sep(&tx);
            sync_text_adds(&tx, "[image]");
        }
        if (tx.len == 0) {
            free(tx.buf);
            free(ts);
            return 0;
        }
        set_text(&r[k], "user", &tx, ts);
        r[k].is_prompt = 1;
        r[k].model = model && *model && strcmp(model, "default") != 0 ? sync_dup(model) : NULL;
        k++;
        free(ts);
        return k;
    }
    /* the assistant's side: thinking and text, a tool call and its result */
    const char *role = t == 2 || tf ? "assistant" : "system";
    sync_text tx = {0};
    json_t *th = json_object_get(b, "thinking");
    const char *thinking = json_is_string(th) ? json_string_value(th) : sync_json_str(th, "text");
    if (thinking && *thinking) {
        sync_text_adds(&tx, "[thinking] ");
        sync_text_adds(&tx, thinking);
    } else {
        json_t *all = json_object_get(b, "allThinkingBlocks");
        for (size_t i = 0; json_is_array(all) && i < json_array_size(all); i++) {
            const char *s = sync_json_str(json_array_get(all, i), "thinking");
            if (!s)
                s = sync_json_str(json_array_get(all, i), "text");
            if (s && *s) {
                sync_text_sep(&tx);
                sync_text_adds(&tx, "[thinking] ");
                sync_text_adds(&tx, s);
            }
        }
    }
    if (text && *text) {
        sync_text_sep(&tx);
        sync_text_adds(&tx, text);
    } else {
        /* no text: the code it proposed, when that is all it holds */
        json_t *cbs = json_object_get(b, "codeBlocks");
        for (size_t i = 0; json_is_array(cbs) && i < json_array_size(cbs); i++) {
            const char *code = sync_json_str(json_array_get(cbs, i), "content");
            if (code && *code) {
                sync_text_sep(&tx);
                sync_text_adds(&tx, code);
            }
        }
    }
    json_t *tc = json_object_get(b, "tokenCount");
    int64_t in = sync_json_count(json_object_get(tc, "inputTokens"));
    int64_t outt = sync_json_count(json_object_get(tc, "outputTokens"));
    size_t usage_at = SIZE_MAX;
    if (tx.len > 0) {
        set_text(&r[k], role, &tx, ts);
        usage_at = k++;
    } else {
        free(tx.buf);
    }
    if (tf) {
        const char *name = sync_json_str(tf, "name");
        char num[32];
        json_t *tool = json_object_get(tf, "tool");
        if ((!name || !*name) && json_is_integer(tool)) {
            (void)snprintf(num, sizeof num, "tool-%lld", (long long)json_integer_value(tool));
            name = num;
        }
        const char *call = sync_json_str(tf, "toolCallId");
        json_t *args = maybe_json(json_object_get(tf, "params"));
        if (!json_is_object(args) || json_object_size(args) == 0) {
            json_decref(args);
            args = maybe_json(json_object_get(tf, "rawArgs"));
        }
        sync_record_call(&r[k], "assistant", name ? name : "tool", call, args, ts);
        if (usage_at == SIZE_MAX)
            usage_at = k;
        k++;
        json_decref(args);
        json_t *res = json_object_get(tf, "result");
        json_t *parsed = maybe_json(res);
        int failed = tool_failed(tf, parsed);
        if ((res && !json_is_null(res)) || failed) {
            sync_text rt = {0};
            if (json_is_string(res)) {
                sync_text_adds(&rt, json_string_value(res));
            } else if (res && !json_is_null(res)) {
                char *dump = json_dumps(res, JSON_COMPACT);
                sync_text_adds(&rt, dump);
                free(dump);
            }
            if (rt.len == 0)
                sync_text_adds(&rt,
                               sync_json_str(tf, "status") ? sync_json_str(tf, "status") : "error");
            set_text(&r[k], "tool", &rt, ts);
            r[k].is_error = failed;
            r[k].call_id = call ? sync_short_copy(call, 100) : NULL;
            r[k].tool_name = sync_short_copy(name ? name : "tool", 100);
            k++;
        }
        json_decref(parsed);
    }
    if (usage_at != SIZE_MAX && (in > 0 || outt > 0)) {
        sync_usage *u = &r[usage_at].usage;
        u->present = 1;
        u->input = in;
        u->output = outt;
        u->key = id ? sync_dup(id) : NULL;
        u->model_from_session = 1;
    }
    if (usage_at != SIZE_MAX && model && *model && strcmp(model, "default") != 0)
        r[usage_at].model = sync_dup(model);
    free(ts);
    return k;
}

static int cide_expand(const char *line, size_t len, int32_t sub, sync_record **out, size_t *n)
{
    (void)sub;
    *out = NULL;
    *n = 0;
    json_t *root = sync_json_loadb(line, len, 0, NULL);
    if (!json_is_object(root))
        return MCPAGE_EPARSE;
    json_t *b = json_object_get(root, "bubble");
    json_t *parsed = NULL;
    const char *v = sync_json_str(root, "value");
    if (!b && v)
        b = parsed = sync_json_loadb(v, strlen(v), 0, NULL);
    if (!json_is_object(b)) { /* the header, a null bubble, a marker */
        json_decref(parsed);
        json_decref(root);
        return 0;
    }
    sync_record *r = calloc(3, sizeof *r);
    if (!r) {
        json_decref(parsed);
        json_decref(root);
        return MCPAGE_ENOMEM;
    }
    json_t *ht = json_object_get(root, "type");
    const char *key = sync_json_str(root, "key");
    size_t k =
        sync__cursor_ide_bubble(b, json_is_integer(ht) ? json_integer_value(ht) : 0,
                                sync_json_str(b, "bubbleId") ? sync_json_str(b, "bubbleId") : key,
                                sync_json_str(root, "time"), r);
    json_decref(parsed);
    json_decref(root);
    return sync__records_finish(r, k, out, n);
}

const sync_fold_format sync__cursor_ide_format = {
    .source = "cursor-ide",
    .fold_line = cide_fold_line,
    .expand = cide_expand,
    .convert = NULL,
    .load = cide_load,
};

/* A chat panel tab, rendered: its facts, then its bubbles. */
static int panel_load(const sync_fold_job *job, char **out, size_t *len, char *why, size_t whylen)
{
    *out = NULL;
    *len = 0;
    if (!job->row_id || !job->db)
        return MCPAGE_EINVAL;
    json_t *o = panel_read(job->home ? job->home : "/", job->db, why, whylen);
    if (!o && !why[0])
        (void)snprintf(why, whylen, "%s: gone while being read, skipped", panel_key);
    if (!o)
        return MCPAGE_ESTATE; /* busy, refused or gone: a warning, the session stays */
    json_t *tab = NULL, *t;
    size_t i;
    json_array_foreach(json_object_get(o, "tabs"), i, t)
    {
        const char *id = tab_id(t);
        if (id && strcmp(id, job->row_id) == 0) {
            tab = t;
            break;
        }
    }
    char *buf = NULL;
    size_t n = 0;
    render r = {0};
    r.w = open_memstream(&buf, &n);
    int rc = r.w ? 0 : MCPAGE_ENOMEM;
    if (rc == 0 && !tab) {
        (void)snprintf(why, whylen, "%s: tab %s gone while being read, skipped", panel_key,
                       job->row_id);
        rc = MCPAGE_ESTATE;
    }
    if (rc == 0) {
        json_t *row = json_pack("{s:s}", "tabId", job->row_id);
        const char *title = tab_title(tab);
        json_t *ts = tab_time(tab);
        if (row && title)
            json_object_set_new(row, "name", json_string(title));
        if (row && ts)
            json_object_set(row, "createdAt", ts);
        if (row && job->cwd)
            json_object_set_new(row, "workspace", json_string(job->cwd));
        rc = put_line(r.w, json_pack("{s:s,s:s,s:o}", "table", "ItemTable", "key", panel_key, "row",
                                     row ? row : json_object()));
        json_t *b;
        json_array_foreach(json_object_get(tab, "bubbles"), i, b)
        {
            if (rc < 0 || i >= CIDE_MESSAGES_MAX)
                break;
            if (!json_is_object(b))
                continue;
            json_t *line = json_pack("{s:s,s:s,s:I,s:O}", "table", "ItemTable", "key", panel_key,
                                     "index", (json_int_t)i, "bubble", b);
            if (line)
                carry_time(&r, line, b);
            rc = put_line(r.w, line);
        }
    }
    free(r.last_time);
    json_decref(o);
    if (r.w && fclose(r.w) != 0 && rc == 0)
        rc = MCPAGE_ENOMEM;
    if (rc == MCPAGE_ERANGE)
        (void)snprintf(why, whylen, "the chat's messages pass the %d MiB read limit: skipped",
                       SYNC_FOLD_READ_MAX >> 20);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

const sync_fold_format sync__cursor_ide_panel_format = {
    .source = "cursor-ide",
    .fold_line = cide_fold_line,
    .expand = cide_expand,
    .convert = NULL,
    .load = panel_load,
};
