/*
 * dlopen() on first use (dynlib.h says why). RTLD_NOW: a library that
 * lacks one of the functions is refused here, with its name, instead of
 * failing at the first call of it; RTLD_LOCAL: its symbols stay out of
 * the global scope, where they could interpose on another library's.
 */
#include "page/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <mcpage/mcpage.h>

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym() gives functions as void *");

static int load(mcpage__dynlib *lib)
{
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        (void)snprintf(lib->why, sizeof lib->why, "%s needs %s (Debian: apt-get install %s): %s",
                       lib->use, lib->soname, lib->package, e ? e : "not found");
        return -1;
    }
    for (size_t i = 0; i < lib->nnames; i++) {
        (void)dlerror();
        void *f = dlsym(h, lib->names[i]);
        if (f == NULL) {
            (void)snprintf(lib->why, sizeof lib->why,
                           "%s needs %s with %s(), which the one installed lacks (upgrade %s)",
                           lib->use, lib->soname, lib->names[i], lib->package);
            (void)dlclose(h);
            return -1;
        }
        /* POSIX: an object and a function pointer share one representation. */
        memcpy((char *)lib->fns + i * sizeof f, &f, sizeof f);
    }
    if (lib->init && lib->init() != 0) {
        (void)snprintf(lib->why, sizeof lib->why, "%s: %s did not start", lib->use, lib->soname);
        return -1; /* its functions stay set; nothing calls them after a failure */
    }
    return 0;
}

int mcpage__dynlib_load(mcpage__dynlib *lib, char *why, size_t cap)
{
    pthread_mutex_lock(&lib->mu);
    if (lib->state == 0)
        lib->state = load(lib) == 0 ? 1 : -1;
    int ok = lib->state == 1;
    if (!ok && why && cap)
        (void)snprintf(why, cap, "%s", lib->why);
    pthread_mutex_unlock(&lib->mu);
    return ok ? 0 : MCPAGE_ENOTFOUND;
}
