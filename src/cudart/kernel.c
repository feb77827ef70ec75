/* What nvcc's generated host code calls, and the kernel and symbol calls
 * that name a kernel or a __device__ variable by its host-side address.
 *
 * At load, each translation unit's constructor registers its fatbin
 * (__cudaRegisterFatBinary), then each kernel's host stub with its mangled
 * name (__cudaRegisterFunction) and each __device__ variable's host shadow
 * with its name and size (__cudaRegisterVar / __cudaRegisterManagedVar);
 * at exit it unregisters the fatbin. Nothing reaches the driver then: the
 * fatbin is loaded, with cuLibraryLoadData (a library no context owns), at
 * its first use (a launch, a symbol, __cudaGetKernel, __cudaInitModule),
 * and each of its entities is resolved then (cuLibraryGetKernel,
 * cuLibraryGetGlobal), as CUDA's lazy loading does. A launch is
 * cuLaunchKernel on the resolved kernel, which runs the kernel's CPU
 * implementation from FABMEM_KERNELS (docs/cuda.md, the kernel plugin
 * contract).
 *
 * Lifecycle: a fatbin record and its entities live from registration to
 * __cudaUnregisterFatBinary, which unloads the library and frees them; all
 * guarded by fab__rt_lock. The <<<>>> configuration is a per-thread stack:
 * pushed by the call site, popped by the stub. */
#include "src/cudart/runtime.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* nvcc's wrapper around a fatbin (the .nvFatBinSegment record); version 1
 * points at the fatbin itself, version 2 (a -rdc=true build) at the
 * device-linked fatbin and the list of prelinked ones, which the driver
 * reads from the wrapper itself (cuLibraryLoadData takes it). */
#define FAB__RT_FATBINC_MAGIC 0x466243B1
typedef struct fab__rt_fatbin_wrapper {
    int magic;
    int version;
    const void *data;
    void *filename_or_fatbins;
} fab__rt_fatbin_wrapper_t;

typedef struct fab__rt_fatbin {
    const void *image;
    CUlibrary library;
    bool loaded;
    cudaError_t load_error;
    struct fab__rt_fatbin *next;
} fab__rt_fatbin_t;

typedef struct fab__rt_entity {
    const void *host;        /* the stub or the shadow variable: the key */
    char *name;              /* the device-side (mangled) name */
    fab__rt_fatbin_t *fatbin;
    bool variable;
    size_t size;             /* a variable's registered size */
    void **managed_host;     /* a managed variable's host pointer to set */
    bool resolved;
    CUkernel kernel;
    CUdeviceptr dptr;
    struct fab__rt_entity *next;
} fab__rt_entity_t;

static fab__rt_fatbin_t *fab__rt_fatbins;
static fab__rt_entity_t *fab__rt_entities;

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, void *tid, void *bid,
                            void *bDim, void *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                              char *deviceAddress, const char *deviceName, int ext, size_t size,
                              int constant, int global);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream);

FAB__RT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    fab__rt_fatbin_t *fb = calloc(1, sizeof *fb);
    if (!fb)
        return NULL;
    const fab__rt_fatbin_wrapper_t *w = fatCubin;
    fb->image = w && w->magic == FAB__RT_FATBINC_MAGIC && w->version == 1 ? w->data : fatCubin;
    pthread_mutex_lock(&fab__rt_lock);
    fb->next = fab__rt_fatbins;
    fab__rt_fatbins = fb;
    pthread_mutex_unlock(&fab__rt_lock);
    return (void **)fb;
}

FAB__RT_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle; /* loading waits for the first use */
}

static void fab__rt_entity_add(void **handle, const void *host, const char *name, bool variable,
                               size_t size, void **managed_host)
{
    if (!handle || !host || !name)
        return;
    fab__rt_entity_t *e = calloc(1, sizeof *e);
    char *copy = strdup(name);
    if (!e || !copy) {
        free(e);
        free(copy);
        return;
    }
    e->host = host;
    e->name = copy;
    e->fatbin = (fab__rt_fatbin_t *)handle;
    e->variable = variable;
    e->size = size;
    e->managed_host = managed_host;
    pthread_mutex_lock(&fab__rt_lock);
    e->next = fab__rt_entities;
    fab__rt_entities = e;
    pthread_mutex_unlock(&fab__rt_lock);
}

FAB__RT_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                           char *deviceFun, const char *deviceName,
                                           int thread_limit, void *tid, void *bid, void *bDim,
                                           void *gDim, int *wSize)
{
    (void)deviceName;
    (void)thread_limit;
    (void)tid;
    (void)bid;
    (void)bDim;
    (void)gDim;
    (void)wSize;
    fab__rt_entity_add(fatCubinHandle, hostFun, deviceFun, false, 0, NULL);
}

FAB__RT_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                      const char *deviceName, int ext, size_t size, int constant,
                                      int global)
{
    (void)deviceAddress;
    (void)ext;
    (void)constant;
    (void)global;
    fab__rt_entity_add(fatCubinHandle, hostVar, deviceName, true, size, NULL);
}

FAB__RT_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                             char *deviceAddress, const char *deviceName,
                                             int ext, size_t size, int constant, int global)
{
    (void)deviceAddress;
    (void)ext;
    (void)constant;
    (void)global;
    fab__rt_entity_add(fatCubinHandle, hostVarPtrAddress, deviceName, true, size,
                       hostVarPtrAddress);
}

FAB__RT_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    fab__rt_fatbin_t *fb = (fab__rt_fatbin_t *)fatCubinHandle;
    if (!fb)
        return;
    pthread_mutex_lock(&fab__rt_lock);
    for (fab__rt_fatbin_t **p = &fab__rt_fatbins; *p; p = &(*p)->next) {
        if (*p == fb) {
            *p = fb->next;
            break;
        }
    }
    for (fab__rt_entity_t **p = &fab__rt_entities; *p;) {
        fab__rt_entity_t *e = *p;
        if (e->fatbin == fb) {
            *p = e->next;
            free(e->name);
            free(e);
        } else {
            p = &e->next;
        }
    }
    CUlibrary lib = fb->loaded ? fb->library : NULL;
    pthread_mutex_unlock(&fab__rt_lock);
    if (lib)
        (void)cuLibraryUnload(lib);
    free(fb);
}

/* Load fb (once) and resolve its entities; fab__rt_lock held. A kernel or
 * variable the image lacks stays unresolved, and its use reports that. */
static cudaError_t fab__rt_fatbin_load(fab__rt_fatbin_t *fb)
{
    if (fb->loaded || fb->load_error != cudaSuccess)
        return fb->load_error;
    CUresult r = cuLibraryLoadData(&fb->library, fb->image, NULL, NULL, 0, NULL, NULL, 0);
    if (r != CUDA_SUCCESS) {
        fb->load_error = r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_NO_BINARY_FOR_GPU
                             ? cudaErrorInvalidKernelImage
                             : fab__rt_from_cu(r);
        return fb->load_error;
    }
    fb->loaded = true;
    for (fab__rt_entity_t *e = fab__rt_entities; e; e = e->next) {
        if (e->fatbin != fb)
            continue;
        if (e->variable) {
            size_t bytes = 0;
            e->resolved = cuLibraryGetGlobal(&e->dptr, &bytes, fb->library, e->name) ==
                          CUDA_SUCCESS;
            if (e->resolved && e->managed_host)
                *e->managed_host = (void *)(uintptr_t)e->dptr;
        } else {
            e->resolved = cuLibraryGetKernel(&e->kernel, fb->library, e->name) == CUDA_SUCCESS;
        }
    }
    return cudaSuccess;
}

/* The registered entity at host address host, its fatbin loaded. */
static cudaError_t fab__rt_entity_find(const void *host, bool variable, fab__rt_entity_t *out)
{
    cudaError_t missing = variable ? cudaErrorInvalidSymbol : cudaErrorInvalidDeviceFunction;
    if (!host)
        return missing;
    cudaError_t e = fab__rt_init();
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&fab__rt_lock);
    fab__rt_entity_t *found = NULL;
    for (fab__rt_entity_t *it = fab__rt_entities; it; it = it->next) {
        if (it->host == host && it->variable == variable) {
            found = it;
            break;
        }
    }
    e = found ? fab__rt_fatbin_load(found->fatbin) : missing;
    if (e == cudaSuccess && !found->resolved)
        e = variable ? cudaErrorInvalidSymbol : cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess)
        *out = *found;
    pthread_mutex_unlock(&fab__rt_lock);
    return e;
}

FAB__RT_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    if (!fatCubinHandle || fab__rt_init() != cudaSuccess)
        return 0;
    pthread_mutex_lock(&fab__rt_lock);
    cudaError_t e = fab__rt_fatbin_load((fab__rt_fatbin_t *)fatCubinHandle);
    pthread_mutex_unlock(&fab__rt_lock);
    return e == cudaSuccess;
}

/* ---- the <<<>>> configuration ---- */

#define FAB__RT_CONFIG_DEPTH 16
typedef struct fab__rt_config {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
} fab__rt_config_t;
static _Thread_local fab__rt_config_t fab__rt_configs[FAB__RT_CONFIG_DEPTH];
static _Thread_local int fab__rt_config_depth;

FAB__RT_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                                    size_t sharedMem, struct CUstream_st *stream)
{
    if (fab__rt_config_depth == FAB__RT_CONFIG_DEPTH)
        return 1;
    fab__rt_configs[fab__rt_config_depth++] =
        (fab__rt_config_t){gridDim, blockDim, sharedMem, (cudaStream_t)stream};
    return 0;
}

FAB__RT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                      size_t *sharedMem, void *stream)
{
    if (fab__rt_config_depth == 0)
        FAB__RT_RETURN(cudaErrorMissingConfiguration);
    fab__rt_config_t c = fab__rt_configs[--fab__rt_config_depth];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shared;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

/* ---- launches ---- */

FAB__RT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (!kernel)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(hostFun, false, &e));
    *kernel = (cudaKernel_t)e.kernel;
    return cudaSuccess;
}

FAB__RT_API cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    if (!kernelPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(entryFuncAddr, false, &e));
    *kernelPtr = (cudaKernel_t)e.kernel;
    return cudaSuccess;
}

/* The kernel's function in the current context: what NCCL hands to
 * cuLaunchKernelEx. A kernel is one per process, a function one per context
 * (cuKernelGetFunction). */
FAB__RT_API cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    if (!functionPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(symbolPtr, false, &e));
    CUfunction f;
    FAB__RT_TRY(fab__rt_cu(cuKernelGetFunction(&f, e.kernel)));
    *functionPtr = (cudaFunction_t)f;
    return cudaSuccess;
}

static cudaError_t fab__rt_launch(CUkernel kernel, dim3 grid, dim3 block, void **args,
                                  size_t shared, CUstream stream, bool cooperative)
{
    FAB__RT_ENTER();
    if (!kernel)
        FAB__RT_RETURN(cudaErrorInvalidDeviceFunction);
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 ||
        block.z == 0 || shared > UINT32_MAX)
        FAB__RT_RETURN(cudaErrorInvalidConfiguration);
    CUresult r = cooperative
                     ? cuLaunchCooperativeKernel((CUfunction)kernel, grid.x, grid.y, grid.z,
                                                 block.x, block.y, block.z, (unsigned)shared,
                                                 stream, args)
                     : cuLaunchKernel((CUfunction)kernel, grid.x, grid.y, grid.z, block.x,
                                      block.y, block.z, (unsigned)shared, stream, args, NULL);
    return fab__rt_cu(r);
}

FAB__RT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream)
{
    return fab__rt_launch((CUkernel)kernel, gridDim, blockDim, args, sharedMem,
                          fab__rt_stream(stream, false), false);
}

FAB__RT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                                   dim3 blockDim, void **args, size_t sharedMem,
                                                   cudaStream_t stream)
{
    return fab__rt_launch((CUkernel)kernel, gridDim, blockDim, args, sharedMem,
                          fab__rt_stream(stream, true), false);
}

static cudaError_t fab__rt_launch_host(const void *func, dim3 grid, dim3 block, void **args,
                                       size_t shared, CUstream stream, bool cooperative)
{
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(func, false, &e));
    return fab__rt_launch(e.kernel, grid, block, args, shared, stream, cooperative);
}

FAB__RT_API cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream)
{
    return fab__rt_launch_host(func, gridDim, blockDim, args, sharedMem,
                               fab__rt_stream(stream, false), false);
}

FAB__RT_API cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream);
FAB__RT_API cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream)
{
    return fab__rt_launch_host(func, gridDim, blockDim, args, sharedMem,
                               fab__rt_stream(stream, true), false);
}

/* The configuration's attributes are not read: every emulated launch runs
 * the whole grid on the CPU, so none changes what happens. */
FAB__RT_API cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    if (!config)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_launch_host(func, config->gridDim, config->blockDim, args,
                               config->dynamicSmemBytes, fab__rt_stream(config->stream, false),
                               false);
}

FAB__RT_API cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                     void **args);
FAB__RT_API cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                     void **args)
{
    if (!config)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_launch_host(func, config->gridDim, config->blockDim, args,
                               config->dynamicSmemBytes, fab__rt_stream(config->stream, true),
                               false);
}

FAB__RT_API cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                        void **args, size_t sharedMem, cudaStream_t stream)
{
    return fab__rt_launch_host(func, gridDim, blockDim, args, sharedMem,
                               fab__rt_stream(stream, false), true);
}

/* ---- function attributes and occupancy ---- */

static int fab__rt_func_attr(CUkernel k, int attr)
{
    int v = 0;
    if (cuFuncGetAttribute(&v, (CUfunction_attribute)attr, (CUfunction)k) != CUDA_SUCCESS)
        v = 0;
    return v;
}

FAB__RT_API cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (!attr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(func, false, &e));
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = fab__rt_func_attr(e.kernel, 0);
    attr->sharedSizeBytes = (size_t)fab__rt_func_attr(e.kernel, 1);
    attr->constSizeBytes = (size_t)fab__rt_func_attr(e.kernel, 2);
    attr->localSizeBytes = (size_t)fab__rt_func_attr(e.kernel, 3);
    attr->numRegs = fab__rt_func_attr(e.kernel, 4);
    attr->ptxVersion = fab__rt_func_attr(e.kernel, 5);
    attr->binaryVersion = fab__rt_func_attr(e.kernel, 6);
    attr->cacheModeCA = fab__rt_func_attr(e.kernel, 7);
    attr->maxDynamicSharedSizeBytes = fab__rt_func_attr(e.kernel, 8);
    attr->preferredShmemCarveout = fab__rt_func_attr(e.kernel, 9);
    return cudaSuccess;
}

FAB__RT_API cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(func, false, &e));
    return fab__rt_cu(cuFuncSetAttribute((CUfunction)e.kernel, (CUfunction_attribute)attr, value));
}

FAB__RT_API cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks,
                                                                   const void *func,
                                                                   int blockSize,
                                                                   size_t dynamicSMemSize,
                                                                   unsigned int flags)
{
    if (!numBlocks)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(func, false, &e));
    return fab__rt_cu(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, (CUfunction)e.kernel, blockSize, dynamicSMemSize, flags));
}

FAB__RT_API cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
                                                          int blockSize, size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                  dynamicSMemSize, 0);
}

/* ---- symbols ---- */

FAB__RT_API cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (!devPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(symbol, true, &e));
    *devPtr = (void *)(uintptr_t)e.dptr;
    return cudaSuccess;
}

FAB__RT_API cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (!size)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(symbol, true, &e));
    *size = e.size;
    return cudaSuccess;
}

/* A copy to or from a variable: [offset, offset + count) must lie inside
 * it, and the kind must have the variable on the right side. */
static cudaError_t fab__rt_symbol_copy(void *dst, const void *src, const void *symbol,
                                       size_t count, size_t offset, enum cudaMemcpyKind kind,
                                       bool to_symbol, cudaStream_t stream, bool async,
                                       bool per_thread)
{
    bool ok_kind = kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault ||
                   kind == (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    if (!ok_kind)
        FAB__RT_RETURN(cudaErrorInvalidMemcpyDirection);
    FAB__RT_ENTER();
    fab__rt_entity_t e;
    FAB__RT_TRY(fab__rt_entity_find(symbol, true, &e));
    if (offset > e.size || count > e.size - offset)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    void *var = (char *)(uintptr_t)e.dptr + offset;
    if (to_symbol)
        dst = var;
    else
        src = var;
    if (!async && !per_thread)
        return cudaMemcpy(dst, src, count, cudaMemcpyDefault);
    if (async && !per_thread)
        return cudaMemcpyAsync(dst, src, count, cudaMemcpyDefault, stream);
    FAB__RT_TRY(cudaMemcpyAsync(dst, src, count, cudaMemcpyDefault,
                                (cudaStream_t)fab__rt_stream(stream, true)));
    if (!async)
        return fab__rt_cu(cuStreamSynchronize(fab__rt_stream(stream, true)));
    return cudaSuccess;
}

FAB__RT_API cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    return fab__rt_symbol_copy(NULL, src, symbol, count, offset, kind, true, NULL, false, false);
}

FAB__RT_API cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    return fab__rt_symbol_copy(dst, NULL, symbol, count, offset, kind, false, NULL, false, false);
}

FAB__RT_API cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fab__rt_symbol_copy(NULL, src, symbol, count, offset, kind, true, stream, true, false);
}

FAB__RT_API cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fab__rt_symbol_copy(dst, NULL, symbol, count, offset, kind, false, stream, true,
                               false);
}

FAB__RT_API cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                    size_t offset, enum cudaMemcpyKind kind);
FAB__RT_API cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                    size_t offset, enum cudaMemcpyKind kind)
{
    return fab__rt_symbol_copy(NULL, src, symbol, count, offset, kind, true, NULL, false, true);
}

FAB__RT_API cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind);
FAB__RT_API cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    return fab__rt_symbol_copy(dst, NULL, symbol, count, offset, kind, false, NULL, false, true);
}

FAB__RT_API cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                         size_t offset, enum cudaMemcpyKind kind,
                                         cudaStream_t stream);
FAB__RT_API cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                         size_t offset, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    return fab__rt_symbol_copy(NULL, src, symbol, count, offset, kind, true, stream, true, true);
}

FAB__RT_API cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream);
FAB__RT_API cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream)
{
    return fab__rt_symbol_copy(dst, NULL, symbol, count, offset, kind, false, stream, true, true);
}

FAB__RT_API cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                             void **args, size_t sharedMem, cudaStream_t stream);
FAB__RT_API cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                             void **args, size_t sharedMem, cudaStream_t stream)
{
    return fab__rt_launch_host(func, gridDim, blockDim, args, sharedMem,
                               fab__rt_stream(stream, true), true);
}
