/*
 * Tests for the folder watcher's names (sync_watch_take) on real folders
 * and real inotify events: a file written is named once however often it
 * is written; a folder created, more names than SYNC_WATCH_NAMES_MAX and
 * events lost to the kernel queue's overflow ask for a walk instead.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <mcpage/mcpage.h>

#include "sync/sync.h"
#include "sync/sync_watch.h"
#include "support/sync_support.h"

typedef struct fx {
    char dir[256];
    char claude[300];
    char proj[400];
    sync_options opt;
    sync_watch *w;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || ts_fixture_dir(f->dir, sizeof f->dir, "watch") < 0)
        return -1;
    snprintf(f->claude, sizeof f->claude, "%s/claude", f->dir);
    snprintf(f->proj, sizeof f->proj, "%s/projects/-home-u-app", f->claude);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", f->proj);
    if (system(cmd) != 0)
        return -1;
    f->opt.claude_home = f->claude;
    char why[300];
    if (sync_watch_open(&f->opt, &f->w, why, sizeof why) < 0) {
        fprintf(stderr, "watch: %s\n", why);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sync_watch_close(f->w);
    return ts_fixture_drop(state);
}

/* Writes `text` to proj/name (mode "w" or "a"). */
static void write_file(const fx *f, const char *name, const char *mode, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", f->proj, name);
    ts_put(path, mode, text);
}

static void a_file_written_is_named_once(void **state)
{
    fx *f = *state;
    write_file(f, "s1.jsonl", "w", "{}\n");
    write_file(f, "s1.jsonl", "a", "{}\n");
    write_file(f, "s2.jsonl", "w", "{}\n");
    assert_true(sync_watch_read(f->w) > 0);
    char **names;
    size_t n;
    assert_int_equal(sync_watch_take(f->w, &names, &n), 1);
    assert_int_equal(n, 2);
    char want[600];
    snprintf(want, sizeof want, "%s/s1.jsonl", f->proj);
    assert_string_equal(names[0], want);
    snprintf(want, sizeof want, "%s/s2.jsonl", f->proj);
    assert_string_equal(names[1], want);
    sync_watch_names_free(names, n);
    /* taken: nothing named until the next event */
    assert_int_equal(sync_watch_take(f->w, &names, &n), 1);
    assert_int_equal(n, 0);
    /* a file deleted is named too (a named pass finds it gone, as a walk would) */
    snprintf(want, sizeof want, "%s/s2.jsonl", f->proj);
    assert_int_equal(unlink(want), 0);
    assert_true(sync_watch_read(f->w) > 0);
    assert_int_equal(sync_watch_take(f->w, &names, &n), 1);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], want);
    sync_watch_names_free(names, n);
}

static void a_folder_created_asks_for_a_walk(void **state)
{
    fx *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/projects/-home-u-web", f->claude);
    assert_int_equal(mkdir(path, 0700), 0);
    write_file(f, "s1.jsonl", "w", "{}\n");
    assert_true(sync_watch_read(f->w) > 0);
    char **names;
    size_t n;
    assert_int_equal(sync_watch_take(f->w, &names, &n), 0);
    assert_null(names);
    assert_int_equal(n, 0);
    /* the walk took it: names again after that */
    write_file(f, "s1.jsonl", "a", "{}\n");
    assert_true(sync_watch_read(f->w) > 0);
    assert_int_equal(sync_watch_take(f->w, &names, &n), 1);
    assert_int_equal(n, 1);
    sync_watch_names_free(names, n);
    /* a folder deleted, too */
    assert_int_equal(rmdir(path), 0);
    assert_true(sync_watch_read(f->w) > 0);
    assert_int_equal(sync_watch_take(f->w, &names, &n), 0);
}

static void too_many_names_ask_for_a_walk(void **state)
{
    fx *f = *state;
    char name[64];
    for (int i = 0; i <= SYNC_WATCH_NAMES_MAX; i++) {
        snprintf(name, sizeof name, "s%d.jsonl", i);
        write_file(f, name, "w", "{}\n");
        if (i % 500 == 0)
            assert_true(sync_watch_read(f->w) > 0); /* read as they come: no overflow */
    }
    (void)sync_watch_read(f->w);
    char **names;
    size_t n;
    assert_int_equal(sync_watch_take(f->w, &names, &n), 0);
    assert_int_equal(n, 0);
}

static void events_lost_ask_for_a_walk(void **state)
{
    fx *f = *state;
    long queued = 0;
    FILE *q = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
    if (!q || fscanf(q, "%ld", &queued) != 1 || queued > 200000) {
        if (q)
            fclose(q);
        skip(); /* a queue this large takes too long to fill */
    }
    fclose(q);
    /* each empty file created is two events (created, closed after writing) */
    char path[600];
    for (long i = 0; i <= queued / 2 + 10; i++) {
        snprintf(path, sizeof path, "%s/e%ld.jsonl", f->proj, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    assert_true(sync_watch_read(f->w) > 0);
    char **names;
    size_t n;
    assert_int_equal(sync_watch_take(f->w, &names, &n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_file_written_is_named_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_folder_created_asks_for_a_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(too_many_names_ask_for_a_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(events_lost_ask_for_a_walk, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
