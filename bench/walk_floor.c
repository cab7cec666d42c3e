/*
 * The kernel's floor under a sync's walk (docs/performance.md, "The
 * command line's pass at 50,000 files"): lists every folder below each
 * DIR and fstatat()s each other entry by its name in its open folder (no
 * link followed), and nothing else: no paths kept, no jobs, no store.
 * Each DIR is walked on a thread of its own, all at once; prints the
 * files and the wall time of each DIR and of all.
 *
 *   walk_floor [--no-stat] DIR...
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DIRS_MAX 16

static int no_stat; /* --no-stat: the listing alone */

/* One DIR and what its walk found. */
typedef struct tree {
    const char *dir;
    long files;
    double ms;
    pthread_t thread;
} tree;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Lists the open folder `fd` (closed here), its folders depth first. */
static void walk(int fd, long *files)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (e->d_type == DT_DIR) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                walk(sub, files);
            continue;
        }
        struct stat sb;
        if (no_stat || fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            (*files)++;
    }
    closedir(d);
}

static void *walk_tree(void *arg)
{
    tree *t = arg;
    double t0 = now_ms();
    int fd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        walk(fd, &t->files);
    t->ms = now_ms() - t0;
    return NULL;
}

int main(int argc, char **argv)
{
    tree v[DIRS_MAX];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-stat") == 0)
            no_stat = 1;
        else if (n < DIRS_MAX)
            v[n++] = (tree){.dir = argv[i]};
    }
    if (n == 0) {
        fprintf(stderr, "usage: walk_floor [--no-stat] DIR... (at most %d)\n", DIRS_MAX);
        return 2;
    }
    double t0 = now_ms();
    for (int i = 0; i < n; i++)
        if (pthread_create(&v[i].thread, NULL, walk_tree, &v[i]) != 0)
            return 1;
    long files = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(v[i].thread, NULL);
        files += v[i].files;
        printf("%s: %ld files in %.1f ms\n", v[i].dir, v[i].files, v[i].ms);
    }
    printf("all: %ld files in %.1f ms%s\n", files, now_ms() - t0, no_stat ? " (listed only)" : "");
    return 0;
}
