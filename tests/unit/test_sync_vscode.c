/*
 * Tests for the VS Code-family folders (src/sync/sync_vscode.c): the
 * workspace URIs decoded to project paths (percent-encoding, Windows
 * drives, remote folders, and the URIs refused), workspace.json files on
 * disk (a folder, a multi-root workspace, an untitled one, hostile files:
 * not JSON, a link out of the home, a FIFO) and the User folders found
 * under a config folder, an editor's folder or a User folder itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "support/sync_support.h"
#include "sync/sync_vscode.h"

typedef struct fx {
    char dir[256];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "vscode") < 0)
        return -1;
    *state = f;
    return 0;
}

static void uri(const char *in, const char *want)
{
    char *got = sync_vscode_uri_path(in);
    if (!want) {
        if (got)
            fail_msg("%s gave %s, expected nothing", in ? in : "(null)", got);
        return;
    }
    if (!got)
        fail_msg("%s gave nothing, expected %s", in ? in : "(null)", want);
    assert_string_equal(got, want);
    free(got);
}

static void uris_decode_to_paths(void **state)
{
    (void)state;
    uri("file:///home/dev/wetter-app", "/home/dev/wetter-app");
    uri("file:///home/dev/my%20app/", "/home/dev/my app");
    uri("FILE:///home/dev/caf%C3%A9", "/home/dev/café");
    uri("file:///home/dev/a%2Fb", "/home/dev/a/b");
    uri("file:///c%3A/Users/dev/app", "C:\\Users\\dev\\app");
    uri("file:///d:/src", "D:\\src");
    uri("file:///c%3A", "C:\\");
    uri("vscode-remote://ssh-remote%2Bbuild-box/home/dev/api", "/home/dev/api");
    uri("vscode-remote://wsl%2BUbuntu/home/dev/x?query#frag", "/home/dev/x");
    uri("file:///", "/");
    /* refused */
    uri("vscode-vfs://github/microsoft/vscode", NULL);
    uri("untitled:Untitled-1", NULL);
    uri("file://server/share/app", NULL); /* a UNC host */
    uri("file:///home/dev/%00evil", NULL);
    uri("file:///home/dev/a%0Ab", NULL);
    uri("file:///home/dev/%zz", NULL);
    uri("file:///home/dev/%4", NULL);
    uri("file:///home/dev/%C3", NULL); /* not UTF-8 */
    uri("file://", NULL);
    uri("", NULL);
    uri(NULL, NULL);
}

static void put_workspace(const char *dir, const char *hash, const char *json)
{
    char path[700];
    snprintf(path, sizeof path, "%s/ws/%s", dir, hash);
    assert_int_equal(mkdir(path, 0700), 0);
    if (!json)
        return;
    strncat(path, "/workspace.json", sizeof path - strlen(path) - 1);
    ts_put(path, "w", json);
}

static char *workspace(const fx *f, const char *hash, sync_report *rep)
{
    char wsdir[700];
    snprintf(wsdir, sizeof wsdir, "%s/ws/%s", f->dir, hash);
    return sync_vscode_workspace(f->dir, wsdir, rep, "vscode-copilot");
}

static void workspace_json_names_the_project(void **state)
{
    fx *f = *state;
    char ws[600], path[700];
    snprintf(ws, sizeof ws, "%s/ws", f->dir);
    assert_int_equal(mkdir(ws, 0700), 0);
    put_workspace(f->dir, "folder", "{\n  \"folder\": \"file:///home/dev/my%20app\"\n}");
    put_workspace(f->dir, "multi",
                  "{\"workspace\": \"file:///home/dev/multi/app.code-workspace\"}");
    put_workspace(f->dir, "untitled",
                  "{\"workspace\": "
                  "\"file:///home/dev/.config/Code/Workspaces/1733/workspace.json\"}");
    put_workspace(f->dir, "win", "{\"folder\": \"file:///c%3A/src/app\"}");
    put_workspace(f->dir, "remote", "{\"folder\": \"vscode-remote://ssh-remote%2Bbox/srv/api\"}");
    put_workspace(f->dir, "none", NULL);
    put_workspace(f->dir, "broken", "{\"folder\": ");
    put_workspace(f->dir, "array", "[\"file:///x\"]");
    put_workspace(f->dir, "link", NULL);
    snprintf(path, sizeof path, "%s/ws/link/workspace.json", f->dir);
    assert_int_equal(symlink("/etc/passwd", path), 0);
    put_workspace(f->dir, "fifo", NULL);
    snprintf(path, sizeof path, "%s/ws/fifo/workspace.json", f->dir);
    assert_int_equal(mkfifo(path, 0600), 0);

    sync_report rep;
    memset(&rep, 0, sizeof rep);
    char *p = workspace(f, "folder", &rep);
    assert_string_equal(p, "/home/dev/my app");
    free(p);
    p = workspace(f, "multi", &rep);
    assert_string_equal(p, "/home/dev/multi");
    free(p);
    p = workspace(f, "win", &rep);
    assert_string_equal(p, "C:\\src\\app");
    free(p);
    p = workspace(f, "remote", &rep);
    assert_string_equal(p, "/srv/api");
    free(p);
    assert_null(workspace(f, "untitled", &rep));
    assert_null(workspace(f, "none", &rep));
    assert_int_equal(rep.warnings, 0);
    /* each hostile file is no project and one named warning; the FIFO is
       never opened for blocking (the test would hang) */
    assert_null(workspace(f, "broken", &rep));
    assert_int_equal(rep.warnings, 1);
    assert_non_null(strstr(rep.warning_list[0], "vscode-copilot"));
    assert_non_null(strstr(rep.warning_list[0], "broken/workspace.json"));
    assert_null(workspace(f, "array", &rep));
    assert_int_equal(rep.warnings, 2);
    assert_null(workspace(f, "link", &rep));
    assert_int_equal(rep.warnings, 3);
    assert_non_null(strstr(rep.warning_list[2], "link/workspace.json"));
    assert_null(workspace(f, "fifo", &rep));
    assert_int_equal(rep.warnings, 4);
    assert_non_null(strstr(rep.warning_list[3], "fifo/workspace.json"));
}

typedef struct seen {
    char list[1024];
    int n;
} seen;

static int note_user(void *ud, const char *user, const char *editor)
{
    seen *s = ud;
    const char *tail = strrchr(user, '/');
    size_t at = strlen(s->list);
    snprintf(s->list + at, sizeof s->list - at, "[%s]%s;", editor, tail ? tail + 1 : user);
    s->n++;
    return 0;
}

static void mk(const char *dir, const char *sub)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", dir, sub);
    assert_int_equal(system(cmd), 0);
}

static void user_folders_are_found(void **state)
{
    fx *f = *state;
    char config[400], code[500], user[600];
    snprintf(config, sizeof config, "%s/config", f->dir);
    mk(config, "Code/User/workspaceStorage");
    mk(config, "Code - Insiders/User/globalStorage");
    mk(config, "VSCodium/User");   /* neither storage folder: not one */
    mk(config, "unrelated/stuff"); /* no User folder */
    mk(config, ".hidden/User/workspaceStorage");
    seen s = {0};
    sync_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(sync_vscode_users(config, &rep, "vscode-copilot", note_user, &s), 0);
    assert_int_equal(s.n, 2);
    assert_non_null(strstr(s.list, "[Code]User;"));
    assert_non_null(strstr(s.list, "[Code - Insiders]User;"));
    assert_int_equal(sync_vscode_found(config), 1);
    /* an editor's folder, and a User folder itself */
    snprintf(code, sizeof code, "%s/Code", config);
    memset(&s, 0, sizeof s);
    assert_int_equal(sync_vscode_users(code, &rep, "vscode-copilot", note_user, &s), 0);
    assert_string_equal(s.list, "[]User;");
    snprintf(user, sizeof user, "%s/Code/User", config);
    memset(&s, 0, sizeof s);
    assert_int_equal(sync_vscode_users(user, &rep, "vscode-copilot", note_user, &s), 0);
    assert_string_equal(s.list, "[]User;");
    /* a home with none, and one that does not exist */
    char empty[500];
    snprintf(empty, sizeof empty, "%s/config/unrelated", f->dir);
    assert_int_equal(sync_vscode_found(empty), 0);
    snprintf(empty, sizeof empty, "%s/nowhere", f->dir);
    assert_int_equal(sync_vscode_found(empty), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(sync_vscode_users(empty, &rep, "vscode-copilot", note_user, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(rep.warnings, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uris_decode_to_paths),
        cmocka_unit_test_setup_teardown(workspace_json_names_the_project, setup, ts_fixture_drop),
        cmocka_unit_test_setup_teardown(user_folders_are_found, setup, ts_fixture_drop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
