/* Kernel plugins: the CPU implementations of kernels. FABMEM_KERNELS names
 * one or more shared libraries, separated by ':'; each is opened once with
 * dlopen(RTLD_NOW | RTLD_LOCAL), at the first module load or launch, and kept
 * open for the life of the process (a kernel may be launched at any time, and
 * unloading a library under a running kernel would fault). A library that
 * cannot be opened is named in the log, with dlerror's reason, and skipped.
 * A kernel K is implemented by the exported function fab_kernel_K
 * (include/fabmem/kernel.h has the contract).
 *
 * Lifecycle: nothing loaded → fab__cu_plugins_load (once, pthread_once) →
 * loaded for good. The table is written only inside the once and read-only
 * after, so lookups take no lock. */
#include "src/cuda/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/log.h"
#include "src/base/env.h"

#define FAB__CU_MAX_PLUGINS 16

static pthread_once_t fab__cu_plugins_once = PTHREAD_ONCE_INIT;
static void *fab__cu_plugins[FAB__CU_MAX_PLUGINS];
static int fab__cu_plugin_count;

static void fab__cu_plugins_open(void)
{
    const char *list = getenv(FAB__ENV_KERNELS);
    if (!list || !*list)
        return;
    char *copy = strdup(list);
    if (!copy)
        return;
    char *save = NULL;
    for (char *path = strtok_r(copy, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
        if (fab__cu_plugin_count == FAB__CU_MAX_PLUGINS) {
            fab__log(FAB__LOG_ERROR, "FABMEM_KERNELS: more than %d libraries; %s and those after "
                                     "it are not loaded", FAB__CU_MAX_PLUGINS, path);
            break;
        }
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *why = dlerror();
            fab__log(FAB__LOG_ERROR, "FABMEM_KERNELS: cannot load kernel library %s: %s", path,
                     why ? why : "unknown error");
            continue;
        }
        fab__log(FAB__LOG_INFO, "FABMEM_KERNELS: loaded kernel library %s", path);
        fab__cu_plugins[fab__cu_plugin_count++] = lib;
    }
    free(copy);
}

void fab__cu_plugins_load(void)
{
    pthread_once(&fab__cu_plugins_once, fab__cu_plugins_open);
}

fab_kernel_fn fab__cu_plugin_find(const char *name)
{
    fab__cu_plugins_load();
    size_t n = strlen(name);
    char *sym = malloc(n + sizeof("fab_kernel_"));
    if (!sym)
        return NULL;
    memcpy(sym, "fab_kernel_", sizeof("fab_kernel_") - 1);
    memcpy(sym + sizeof("fab_kernel_") - 1, name, n + 1);
    fab_kernel_fn fn = NULL;
    for (int i = 0; i < fab__cu_plugin_count && !fn; i++) {
        void *p = dlsym(fab__cu_plugins[i], sym);
        if (p) /* ISO C has no cast from object to function pointer; copy the bits */
            memcpy(&fn, &p, sizeof(fn));
    }
    free(sym);
    return fn;
}

typedef char *(*fab__cu_demangle_fn)(const char *name, char *buf, size_t *len, int *status);

void fab__cu_plugin_demangle(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s", name);
    if (strncmp(name, "_Z", 2) != 0)
        return;
    /* Opened for the call and closed after: a C program need not have
     * libstdc++ loaded, and one that has keeps it. */
    void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    void *p = lib ? dlsym(lib, "__cxa_demangle") : NULL;
    if (!p) {
        if (lib)
            dlclose(lib);
        return;
    }
    fab__cu_demangle_fn demangle;
    memcpy(&demangle, &p, sizeof(demangle));
    int status = -1;
    char *d = demangle(name, NULL, NULL, &status);
    if (d && status == 0)
        snprintf(out, len, "%s", d);
    free(d);
    dlclose(lib);
}
