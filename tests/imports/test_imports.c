/* Every symbol in tests/imports/imports.txt (what NCCL, NVSHMEM, PyTorch's
 * c10/cuda and NVIDIA's samples import) is exported by fabmem's libraries
 * with its version node, or reached through cuGetProcAddress, unless
 * docs/runtime.md lists it under "Left out", in which case it must still be
 * missing (so the list stays true). Needs no NVIDIA toolkit: the libraries
 * of the build are opened with dlopen, and names are looked up with dlvsym
 * (the runtime's version node) and dlsym. Each failure names every symbol
 * that is wrong, not only the first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"

typedef struct entry {
    char lib[64], node[64], name[128];
} entry_t;

/* imports.txt, parsed once: comments and blank lines skipped. */
static entry_t *entries;
static size_t nentries;

static void load_list(void)
{
    if (entries)
        return;
    FILE *f = fopen(FAB_IMPORTS_LIST, "r");
    assert_non_null(f);
    char line[512];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (nentries == cap) {
            cap = cap ? 2 * cap : 256;
            entries = realloc(entries, cap * sizeof *entries);
            assert_non_null(entries);
        }
        entry_t *e = &entries[nentries];
        assert_int_equal(sscanf(line, "%63s %63s %127s", e->lib, e->node, e->name), 3);
        nentries++;
    }
    fclose(f);
    assert_true(nentries > 100);
}

/* Whether docs/runtime.md names sym (as `sym`) between its left-out
 * markers. */
static bool left_out(const char *sym)
{
    static char *doc;
    if (!doc) {
        FILE *f = fopen(FAB_IMPORTS_DOC, "r");
        assert_non_null(f);
        doc = calloc(1, 1 << 20);
        assert_non_null(doc);
        size_t n = fread(doc, 1, (1 << 20) - 1, f);
        doc[n] = '\0';
        fclose(f);
    }
    const char *from = strstr(doc, "<!-- imports-left-out -->");
    const char *to = from ? strstr(from, "<!-- /imports-left-out -->") : NULL;
    assert_non_null(from);
    assert_non_null(to);
    char quoted[160];
    snprintf(quoted, sizeof quoted, "`%s`", sym);
    const char *at = strstr(from, quoted);
    return at != NULL && at < to;
}

static void *open_lib(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FAB_LIBDIR, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    assert_non_null(h);
    return h;
}

typedef int (*proc_fn)(const char *, void **, int, uint64_t, int *);

/* Whether e is there: exported under its node, or found by
 * cuGetProcAddress_v2 at CUDA 13.0 (status 0, a function). */
static bool present(const entry_t *e, void *cudart, void *cuda, void *nvml)
{
    if (strcmp(e->lib, "libcudart.so.13") == 0)
        return dlvsym(cudart, e->name, e->node) != NULL;
    if (strcmp(e->lib, "libcuda.so.1") == 0)
        return dlsym(cuda, e->name) != NULL;
    if (strcmp(e->lib, "libnvidia-ml.so.1") == 0)
        return dlsym(nvml, e->name) != NULL;
    if (strcmp(e->lib, "cuGetProcAddress") == 0) {
        void *sym = dlsym(cuda, "cuGetProcAddress_v2");
        proc_fn get;
        memcpy(&get, &sym, sizeof get);
        void *fn = NULL;
        int status = -1;
        return sym && get(e->name, &fn, 13000, 0, &status) == 0 && status == 0 && fn;
    }
    fail_msg("imports.txt: unknown library %s", e->lib);
    return false;
}

/* Check every entry of library lib; left: whether to check the left-out
 * ones (absent) instead of the others (present). */
static void check(const char *lib, bool left)
{
    load_list();
    void *cudart = open_lib("libcudart.so.13"), *cuda = open_lib("libcuda.so.1"),
         *nvml = open_lib("libnvidia-ml.so.1");
    size_t wrong = 0, checked = 0;
    for (size_t i = 0; i < nentries; i++) {
        const entry_t *e = &entries[i];
        if ((lib && strcmp(e->lib, lib) != 0) || left_out(e->name) != left)
            continue;
        checked++;
        if (present(e, cudart, cuda, nvml) == left) {
            fprintf(stderr, "%s %s %s: %s\n", e->lib, e->node, e->name,
                    left ? "exported, yet docs/runtime.md lists it as left out"
                         : "not there");
            wrong++;
        }
    }
    /* The libraries stay loaded: libcuda's once-made state lives until the
     * process ends, as it does in a program. */
    if (!left)
        assert_true(checked > 0);
    assert_int_equal(wrong, 0);
}

static void runtime_exports_every_import_under_libcudart_so_13(void **state)
{
    (void)state;
    check("libcudart.so.13", false);
}

static void driver_exports_every_import(void **state)
{
    (void)state;
    check("libcuda.so.1", false);
}

static void get_proc_address_finds_every_driver_import(void **state)
{
    (void)state;
    check("cuGetProcAddress", false);
}

static void nvml_exports_every_import(void **state)
{
    (void)state;
    check("libnvidia-ml.so.1", false);
}

/* Each name docs/runtime.md says is left out is an import of the list and
 * is still missing: when one is added, the doc must say so. */
static void left_out_imports_are_listed_and_missing(void **state)
{
    (void)state;
    check(NULL, true);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(runtime_exports_every_import_under_libcudart_so_13),
    cmocka_unit_test(driver_exports_every_import),
    cmocka_unit_test(get_proc_address_finds_every_driver_import),
    cmocka_unit_test(nvml_exports_every_import),
    cmocka_unit_test(left_out_imports_are_listed_and_missing),
};

FAB_TEST_MAIN_NO_HELPERS("imports", tests)
