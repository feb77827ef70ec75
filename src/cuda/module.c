/* Modules, libraries, kernels, functions and globals: cuModuleLoad*,
 * cuModuleUnload, cuModuleGetFunction, cuModuleGetGlobal, cuModuleGetLoadingMode,
 * cuLibrary*, cuKernelGetFunction. Functions' attributes and the occupancy
 * calculator are funcattr.c's.
 *
 * A module is what an image declares (image.c), read at load and never run:
 * one function object per kernel, and one block of memory holding every
 * global, initialised from the image. That block is an anonymous read-write
 * mapping registered with vmm.c as driver-owned (fab__cu_owned_add), so that
 * cuModuleGetGlobal's pointer works with cuMemcpy* and cuMemset* like any
 * device pointer, and no user call can unmap or free it. A library
 * (cuLibraryLoad*) is a module that no context owns; its kernels (CUkernel)
 * are its module's function objects, so cuKernelGetFunction gives back the
 * same pointer and a CUkernel passed where a CUfunction is expected works, as
 * the driver allows.
 *
 * Lifecycles:
 *   module    cuModuleLoad* ─▶ (get functions, globals; launch) ─▶ cuModuleUnload
 *   library   cuLibraryLoad* ─▶ (get kernels, globals, its module) ─▶ cuLibraryUnload
 * A function, kernel or global pointer is valid until its module or library is
 * unloaded; after, the handle is unknown (CUDA_ERROR_INVALID_HANDLE) and the
 * global's memory is unmapped.
 *
 * Parsing and mapping happen without the lock; only the insertion into (and
 * removal from) the list of live modules, and the owned range's record, take
 * fab__cu.lock for writing. Lookups take it for reading. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/vmm.h"
#include "src/cuda/image.h"
#include "src/cuda/plugin.h"
#include "src/cuda/program.h"
#include "src/cuda/module.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "src/common/log.h"

/* Globals start at multiples of this, as the driver aligns allocations. */
#define FAB__CU_GLOBAL_ALIGN 256
/* The dynamic shared memory a function may use unless
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) raises it (the device's
 * per-block default, 48 KiB). */
#define FAB__CU_DEFAULT_DYNAMIC_SHARED 49152

typedef struct fab__cu_module {
    fab__cu_image_t img;
    fab__cu_function_t *functions; /* one per img.kernels[i] */
    uintptr_t *global_addr;        /* one per img.globals[i] */
    /* The PTX the device runs (program.c), or NULL. A global the program
     * has lives in the program's block (pmem), where its kernels use it;
     * the others (a cubin's) in the module's own (mem). */
    fab__cu_program_t *program;
    void *mem;                     /* the globals' block, or NULL */
    size_t mem_len;
    void *pmem;                    /* the program's variables' block, or NULL */
    size_t pmem_len;
    int device;                    /* the loading context's device; -1 for a library's */
    bool in_library;
    struct fab__cu_module *next;
} fab__cu_module_t;

typedef struct fab__cu_library {
    fab__cu_module_t *module;
    struct fab__cu_library *next;
} fab__cu_library_t;

/* Guarded by fab__cu.lock. */
static fab__cu_module_t *fab__cu_modules;
static fab__cu_library_t *fab__cu_libraries;

/* ---- lookups (the caller holds the lock) ----------------------------------- */

static fab__cu_module_t *fab__cu_module_find(CUmodule hmod)
{
    for (fab__cu_module_t *m = fab__cu_modules; m; m = m->next) {
        if ((CUmodule)m == hmod)
            return m;
    }
    return NULL;
}

static fab__cu_library_t *fab__cu_library_find(CUlibrary lib)
{
    for (fab__cu_library_t *l = fab__cu_libraries; l; l = l->next) {
        if ((CUlibrary)l == lib)
            return l;
    }
    return NULL;
}

fab__cu_function_t *fab__cu_function_find(CUfunction f)
{
    uintptr_t p = (uintptr_t)f;
    for (fab__cu_module_t *m = fab__cu_modules; m; m = m->next) {
        uintptr_t base = (uintptr_t)m->functions;
        if (m->img.nkernels > 0 && p >= base &&
            p < base + m->img.nkernels * sizeof(fab__cu_function_t) &&
            (p - base) % sizeof(fab__cu_function_t) == 0)
            return (fab__cu_function_t *)p;
    }
    return NULL;
}

int fab__cu_function_device(const fab__cu_function_t *fn)
{
    return fn->module->device;
}

size_t fab__cu_function_const_bytes(const fab__cu_function_t *fn)
{
    return fn->ptx ? fab__cu_program_const_bytes(fn->module->program) : 0;
}

/* ---- load and unload ----------------------------------------------------------- */

static void fab__cu_module_free(fab__cu_module_t *m)
{
    if (!m)
        return;
    if (m->mem)
        munmap(m->mem, m->mem_len);
    fab__cu_program_free(m->program); /* and with it pmem */
    fab__cu_image_free(&m->img);
    free(m->functions);
    free(m->global_addr);
    free(m);
}

/* Lay the globals out in one block and give them their initial values;
 * those the program has are the program's. */
static CUresult fab__cu_module_map_globals(fab__cu_module_t *m)
{
    size_t total = 0;
    if (m->img.nglobals > 0 &&
        !(m->global_addr = calloc(m->img.nglobals, sizeof(*m->global_addr))))
        return CUDA_ERROR_OUT_OF_MEMORY;
    bool *theirs = m->img.nglobals ? calloc(m->img.nglobals, sizeof(*theirs)) : NULL;
    if (m->img.nglobals > 0 && !theirs)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < m->img.nglobals; i++) {
        CUdeviceptr p;
        if (fab__cu_program_global(m->program, m->img.globals[i].name, &p, NULL) == CUDA_SUCCESS) {
            m->global_addr[i] = (uintptr_t)p;
            theirs[i] = true;
            continue;
        }
        size_t size = m->img.globals[i].size ? m->img.globals[i].size : 1;
        size_t rounded = (size + FAB__CU_GLOBAL_ALIGN - 1) & ~(size_t)(FAB__CU_GLOBAL_ALIGN - 1);
        if (rounded < size || total > SIZE_MAX - rounded) {
            free(theirs);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        total += rounded;
    }
    if (total == 0) {
        free(theirs);
        return CUDA_SUCCESS;
    }
    void *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        free(theirs);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->mem = mem;
    m->mem_len = total;
    uintptr_t at = (uintptr_t)mem;
    for (size_t i = 0; i < m->img.nglobals; i++) {
        const fab__cu_image_global_t *g = &m->img.globals[i];
        if (theirs[i])
            continue;
        m->global_addr[i] = at;
        if (g->init)
            memcpy((void *)at, g->init, g->size);
        size_t size = g->size ? g->size : 1;
        at += (size + FAB__CU_GLOBAL_ALIGN - 1) & ~(size_t)(FAB__CU_GLOBAL_ALIGN - 1);
    }
    free(theirs);
    return CUDA_SUCCESS;
}

/* Copy why a load failed into a JIT error log buffer, as the driver reports
 * a compiler's errors there. */
static void fab__cu_jit_log(unsigned n, const CUjit_option *options, void **values,
                            const char *error)
{
    char *info = NULL, *err = NULL;
    size_t info_len = 0, err_len = 0;
    for (unsigned i = 0; i < n; i++) {
        switch (options[i]) {
        case CU_JIT_INFO_LOG_BUFFER: info = values[i]; break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: info_len = (size_t)(uintptr_t)values[i]; break;
        case CU_JIT_ERROR_LOG_BUFFER: err = values[i]; break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: err_len = (size_t)(uintptr_t)values[i]; break;
        default: break;
        }
    }
    if (info && info_len > 0)
        info[0] = '\0';
    if (err && err_len > 0)
        snprintf(err, err_len, "%s", error);
}

CUresult fab__cu_jit_check(unsigned n, const CUjit_option *options, void **values)
{
    if (n > 0 && (!options || !values))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        if ((unsigned)options[i] >= (unsigned)CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Parse, lay out and publish a module. device is the loading context's, or
 * -1 for a library's. On failure *error_out (when not NULL) says why. */
static CUresult fab__cu_module_load(const void *data, size_t len, int device, bool in_library,
                                    const char *call, fab__cu_module_t **out, char *error,
                                    size_t error_len)
{
    fab__cu_plugins_load(); /* at the first load, so that a bad FABMEM_KERNELS shows early */
    fab__cu_module_t *m = calloc(1, sizeof(*m));
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->device = device;
    m->in_library = in_library;
    CUresult r = fab__cu_image_parse(data, len, &m->img);
    if (r != CUDA_SUCCESS) {
        fab__log(FAB__LOG_WARN, "%s: the image is refused: %s", call, m->img.error);
        if (error)
            snprintf(error, error_len, "%s", m->img.error);
        free(m);
        return r;
    }
    if (m->img.nkernels > 0 &&
        !(m->functions = calloc(m->img.nkernels, sizeof(*m->functions)))) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    for (size_t i = 0; i < m->img.nkernels; i++) {
        fab__cu_function_t *fn = &m->functions[i];
        fn->name = m->img.kernels[i];
        fn->module = m;
        fn->max_dynamic_shared = FAB__CU_DEFAULT_DYNAMIC_SHARED;
        fn->carveout = -1;
        fn->cache = CU_FUNC_CACHE_PREFER_NONE;
    }
    /* A library belongs to no context: its kernels run as the device of
     * the caller's context would run them, device 0's without one. */
    int cc_dev = device >= 0 ? device : 0;
    if (device < 0)
        (void)fab__cu_current_device(&cc_dev);
    unsigned cc = (unsigned)(fab__cu.devices[cc_dev].compute_major * 10 +
                             fab__cu.devices[cc_dev].compute_minor);
    char perror[FAB__CU_LOAD_ERROR_MAX] = "";
    if ((r = fab__cu_program_build(&m->img, cc, &m->program, perror, sizeof(perror))) !=
        CUDA_SUCCESS) {
        fab__log(FAB__LOG_WARN, "%s: the PTX is refused: %s", call, perror);
        if (error)
            snprintf(error, error_len, "%s", perror);
        fab__cu_module_free(m);
        return r;
    }
    for (size_t i = 0; i < m->img.nkernels; i++)
        m->functions[i].ptx = fab__cu_program_kernel(m->program, m->functions[i].name);
    fab__cu_program_memory(m->program, &m->pmem, &m->pmem_len);
    if ((r = fab__cu_module_map_globals(m)) != CUDA_SUCCESS)
        goto fail;
    fab__rw_wrlock(&fab__cu.lock);
    if (m->mem)
        r = fab__cu_owned_add((uintptr_t)m->mem, m->mem_len);
    if (r == CUDA_SUCCESS && m->pmem &&
        (r = fab__cu_owned_add((uintptr_t)m->pmem, m->pmem_len)) != CUDA_SUCCESS && m->mem)
        fab__cu_owned_remove((uintptr_t)m->mem);
    if (r == CUDA_SUCCESS) {
        m->next = fab__cu_modules;
        fab__cu_modules = m;
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        goto fail;
    fab__log(FAB__LOG_DEBUG, "%s: %zu kernels, %zu globals", call, m->img.nkernels,
             m->img.nglobals);
    *out = m;
    return CUDA_SUCCESS;
fail:
    if (error)
        snprintf(error, error_len, "out of memory");
    fab__cu_module_free(m);
    return r;
}

/* Unlink m (found under the lock held for writing) from the live list. */
static void fab__cu_module_unlink(fab__cu_module_t *m)
{
    for (fab__cu_module_t **p = &fab__cu_modules; *p; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            break;
        }
    }
    if (m->mem)
        fab__cu_owned_remove((uintptr_t)m->mem);
    if (m->pmem)
        fab__cu_owned_remove((uintptr_t)m->pmem);
}


/* ---- module entry points ------------------------------------------------------- */

static CUresult fab__cu_module_load_memory(CUmodule *module, const void *image, unsigned n,
                                           CUjit_option *options, void **values, const char *call)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_jit_check(n, options, values));
    const void *bytes;
    size_t len;
    void *owned;
    FAB__CU_TRY(fab__cu_image_gather(image, &bytes, &len, &owned));
    char error[FAB__CU_LOAD_ERROR_MAX] = "";
    fab__cu_module_t *m;
    CUresult r = fab__cu_module_load(bytes, len, dev, false, call, &m, error, sizeof(error));
    free(owned);
    fab__cu_jit_log(n, options, values, error);
    if (r == CUDA_SUCCESS)
        *module = (CUmodule)m;
    return r;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    FAB__CU_FAULT();
    return fab__cu_module_load_memory(module, image, 0, NULL, NULL, "cuModuleLoadData");
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
    FAB__CU_FAULT();
    return fab__cu_module_load_memory(module, image, numOptions, options, optionValues,
                                      "cuModuleLoadDataEx");
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    FAB__CU_FAULT();
    return fab__cu_module_load_memory(module, fatCubin, 0, NULL, NULL, "cuModuleLoadFatBinary");
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *data;
    size_t len;
    CUresult r = fab__cu_image_read_file(fname, &data, &len);
    if (r != CUDA_SUCCESS) {
        fab__log(FAB__LOG_WARN, "cuModuleLoad: cannot read %s", fname);
        return r;
    }
    fab__cu_module_t *m;
    r = fab__cu_module_load(data, len, dev, false, "cuModuleLoad", &m, NULL, 0);
    free(data);
    if (r == CUDA_SUCCESS)
        *module = (CUmodule)m;
    return r;
}

CUresult cuModuleUnload(CUmodule hmod)
{
    FAB__CU_ENTER();
    fab__cu_free_waits(); /* a queued launch still runs its code */
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_module_t *m = fab__cu_module_find(hmod);
    if (m && !m->in_library) /* a library's module goes with cuLibraryUnload */
        fab__cu_module_unlink(m);
    else
        m = NULL;
    fab__rw_unlock(&fab__cu.lock);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    fab__cu_module_free(m);
    return CUDA_SUCCESS;
}

/* The function called name in module m (NULL: INVALID_HANDLE), for
 * cuModuleGetFunction and cuLibraryGetKernel alike; NOT_FOUND when m has
 * none. The caller holds fab__cu.lock. */
static CUresult fab__cu_module_function(const fab__cu_module_t *m, const char *name,
                                        fab__cu_function_t **fn_out)
{
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < m->img.nkernels; i++) {
        if (strcmp(m->functions[i].name, name) == 0) {
            *fn_out = &m->functions[i];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FAB__CU_ENTER();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    fab__cu_function_t *fn = NULL;
    CUresult r = fab__cu_module_function(fab__cu_module_find(hmod), name, &fn);
    if (r == CUDA_SUCCESS)
        *hfunc = (CUfunction)fn;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* The global name of m in *dptr / *bytes (each optional). */
static CUresult fab__cu_module_global(const fab__cu_module_t *m, const char *name, CUdeviceptr *dptr,
                                      size_t *bytes)
{
    for (size_t i = 0; i < m->img.nglobals; i++) {
        if (strcmp(m->img.globals[i].name, name) == 0) {
            if (dptr)
                *dptr = (CUdeviceptr)m->global_addr[i];
            if (bytes)
                *bytes = m->img.globals[i].size;
            return CUDA_SUCCESS;
        }
    }
    /* a variable of the program that the image's list lacks */
    return fab__cu_program_global(m->program, name, dptr, bytes);
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    FAB__CU_ENTER();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_module_t *m = fab__cu_module_find(hmod);
    CUresult r = m ? fab__cu_module_global(m, name, dptr, bytes) : CUDA_ERROR_INVALID_HANDLE;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* The CUDA 3.1 ABI: 32-bit pointer and size, as the driver still exports it. */
CUresult cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod,
                           const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = cuModuleGetGlobal_v2(&p, &n, hmod, name);
    if (r == CUDA_SUCCESS) {
        if (dptr)
            *dptr = (CUdeviceptr_v1)p;
        if (bytes)
            *bytes = (unsigned int)n;
    }
    return r;
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    FAB__CU_ENTER();
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    /* Nothing is compiled, so both modes behave alike; report what the
     * process asked for (CUDA_MODULE_LOADING, LAZY by default since 12.2). */
    const char *env = getenv("CUDA_MODULE_LOADING");
    *mode = env && strcmp(env, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}

/* ---- libraries ------------------------------------------------------------------ */

static CUresult fab__cu_library_options(unsigned n, CUlibraryOption *options, void **values,
                                        bool from_file)
{
    if (n > 0 && (!options || !values))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        if ((unsigned)options[i] >= (unsigned)CU_LIBRARY_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
        if (options[i] == CU_LIBRARY_BINARY_IS_PRESERVED && from_file)
            return CUDA_ERROR_INVALID_VALUE; /* as cuda.h documents */
    }
    return CUDA_SUCCESS;
}

static CUresult fab__cu_library_make(CUlibrary *library, const void *data, size_t len,
                                     unsigned njit, CUjit_option *jit, void **jit_values,
                                     const char *call)
{
    fab__cu_library_t *l = calloc(1, sizeof(*l));
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    char error[FAB__CU_LOAD_ERROR_MAX] = "";
    fab__cu_module_t *m;
    CUresult r = fab__cu_module_load(data, len, -1, true, call, &m, error, sizeof(error));
    fab__cu_jit_log(njit, jit, jit_values, error);
    if (r != CUDA_SUCCESS) {
        free(l);
        return r;
    }
    l->module = m;
    fab__rw_wrlock(&fab__cu.lock);
    l->next = fab__cu_libraries;
    fab__cu_libraries = l;
    fab__rw_unlock(&fab__cu.lock);
    *library = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                           void **jitOptionsValues, unsigned int numJitOptions,
                           CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    FAB__CU_ENTER();
    if (!library || !code)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_jit_check(numJitOptions, jitOptions, jitOptionsValues));
    FAB__CU_TRY(fab__cu_library_options(numLibraryOptions, libraryOptions, libraryOptionValues,
                                        false));
    const void *bytes;
    size_t len;
    void *owned;
    FAB__CU_TRY(fab__cu_image_gather(code, &bytes, &len, &owned));
    CUresult r = fab__cu_library_make(library, bytes, len, numJitOptions, jitOptions,
                                      jitOptionsValues, "cuLibraryLoadData");
    free(owned);
    return r;
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions,
                               CUlibraryOption *libraryOptions, void **libraryOptionValues,
                               unsigned int numLibraryOptions)
{
    FAB__CU_ENTER();
    if (!library || !fileName)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_jit_check(numJitOptions, jitOptions, jitOptionsValues));
    FAB__CU_TRY(fab__cu_library_options(numLibraryOptions, libraryOptions, libraryOptionValues,
                                        true));
    unsigned char *data;
    size_t len;
    CUresult r = fab__cu_image_read_file(fileName, &data, &len);
    if (r != CUDA_SUCCESS) {
        fab__log(FAB__LOG_WARN, "cuLibraryLoadFromFile: cannot read %s", fileName);
        return r;
    }
    r = fab__cu_library_make(library, data, len, numJitOptions, jitOptions, jitOptionsValues,
                             "cuLibraryLoadFromFile");
    free(data);
    return r;
}

CUresult cuLibraryUnload(CUlibrary library)
{
    FAB__CU_ENTER();
    fab__cu_free_waits();
    fab__cu_library_t *l = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    for (fab__cu_library_t **p = &fab__cu_libraries; *p; p = &(*p)->next) {
        if ((CUlibrary)*p == library) {
            l = *p;
            *p = l->next;
            fab__cu_module_unlink(l->module);
            break;
        }
    }
    fab__rw_unlock(&fab__cu.lock);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    fab__cu_module_free(l->module);
    free(l);
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    FAB__CU_ENTER();
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_library_t *l = fab__cu_library_find(library);
    fab__cu_function_t *fn = NULL;
    CUresult r = fab__cu_module_function(l ? l->module : NULL, name, &fn);
    if (r == CUDA_SUCCESS)
        *pKernel = (CUkernel)fn;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    FAB__CU_ENTER();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_library_t *l = fab__cu_library_find(library);
    CUresult r = l ? fab__cu_module_global(l->module, name, dptr, bytes) : CUDA_ERROR_INVALID_HANDLE;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    FAB__CU_ENTER();
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_library_t *l = fab__cu_library_find(library);
    if (l)
        *pMod = (CUmodule)l->module;
    fab__rw_unlock(&fab__cu.lock);
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A CUkernel is its library's function object: valid while that library is
 * loaded. */
fab__cu_function_t *fab__cu_kernel_find(CUkernel kernel)
{
    fab__cu_function_t *fn = fab__cu_function_find((CUfunction)kernel);
    return fn && fn->module->in_library ? fn : NULL;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    FAB__CU_ENTER();
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    fab__rw_rdlock(&fab__cu.lock);
    fab__cu_function_t *fn = fab__cu_kernel_find(kernel);
    if (fn)
        *pFunc = (CUfunction)fn;
    fab__rw_unlock(&fab__cu.lock);
    return fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
