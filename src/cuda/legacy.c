/* The driver's older and rarer entry points that a library links by name
 * (PyCUDA's _driver module links all of these, and a missing one stops the
 * whole library from loading): deprecated context calls, cache and bank
 * configuration, managed memory, the profiler's switches, the execution
 * control calls before CUDA 4.0, and CUDA arrays, texture and surface
 * references and the 3D peer copy, which are refused.
 *
 * What each does (docs/cuda.md, "Older entry points"):
 * - cuCtxAttach / cuCtxDetach: the usage count of a context, as documented;
 *   an attach adds one to the count cuCtxCreate starts at 1, a detach takes
 *   one off and destroys the context when it reaches 0.
 * - cuCtxGetApiVersion: 3020, the API version of every context made through
 *   the _v2 calls.
 * - cuCtxSet/GetCacheConfig, cuCtxSet/GetSharedMemConfig: kept per context
 *   and read back; a CPU has no cache to split and no banks.
 * - cuStreamAttachMemAsync checks its stream and flags and has nothing to
 *   do (cuMemAllocManaged is memory.c's: every byte of device memory is host
 *   memory here, reachable from both sides).
 * - cuProfilerInitialize / Start / Stop: succeed; no profiler is attached.
 * - cuFuncSetBlockShape, cuFuncSetSharedSize, cuParamSet*, cuLaunch,
 *   cuLaunchGrid(Async): the execution control of CUDA before 4.0, kept per
 *   function and launched through cuLaunchKernel.
 * - arrays, textures, surfaces, cuMemcpy3DPeer:
 *   CUDA_ERROR_NOT_SUPPORTED after the usual checks, with one log line per
 *   entry point naming what is not emulated.
 */
#include "src/cuda/entry.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/log.h"
#include "src/cuda/device.h"
#include "src/cuda/state.h"
#include "src/cuda/stream.h"

/* ---- per-context settings -------------------------------------------------- */

/* Contexts are never freed (device.c), so a list keyed by the handle never
 * names a reused one. Guarded by its own mutex. */
typedef struct fab__cu_legacy_ctx {
    CUcontext ctx;
    int attached; /* cuCtxAttach calls not yet detached */
    CUfunc_cache cache;
    CUsharedconfig bank;
    struct fab__cu_legacy_ctx *next;
} fab__cu_legacy_ctx_t;

static pthread_mutex_t fab__cu_legacy_lock = PTHREAD_MUTEX_INITIALIZER;
static fab__cu_legacy_ctx_t *fab__cu_legacy_ctxs;

/* The record of ctx, made on first use; NULL when out of memory. Call with
 * the lock held. */
static fab__cu_legacy_ctx_t *fab__cu_legacy_of(CUcontext ctx)
{
    for (fab__cu_legacy_ctx_t *c = fab__cu_legacy_ctxs; c; c = c->next)
        if (c->ctx == ctx)
            return c;
    fab__cu_legacy_ctx_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->ctx = ctx;
    c->cache = CU_FUNC_CACHE_PREFER_NONE;
    c->bank = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    c->next = fab__cu_legacy_ctxs;
    fab__cu_legacy_ctxs = c;
    return c;
}

CUresult cuCtxAttach(CUcontext *pctx, unsigned int flags)
{
    FAB__CU_ENTER();
    if (!pctx || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    pthread_mutex_lock(&fab__cu_legacy_lock);
    fab__cu_legacy_ctx_t *c = fab__cu_legacy_of(ctx);
    if (c)
        c->attached++;
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxDetach(CUcontext ctx)
{
    FAB__CU_ENTER();
    CUcontext cur;
    /* As documented: the context must be current to the calling thread. */
    if (fab__cu_current_ctx(&cur) != CUDA_SUCCESS || cur != ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    bool counted = false;
    pthread_mutex_lock(&fab__cu_legacy_lock);
    fab__cu_legacy_ctx_t *c = fab__cu_legacy_of(ctx);
    if (c && c->attached > 0) {
        c->attached--;
        counted = true;
    }
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return counted ? CUDA_SUCCESS : cuCtxDestroy_v2(ctx);
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    FAB__CU_ENTER();
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx)
        FAB__CU_TRY(fab__cu_ctx_check(ctx));
    else
        FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    *version = 3020;
    return CUDA_SUCCESS;
}

/* Reads or writes one setting of the current context: *cache or *bank. */
static CUresult fab__cu_legacy_setting(CUfunc_cache *cache, CUsharedconfig *bank, bool set)
{
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    pthread_mutex_lock(&fab__cu_legacy_lock);
    fab__cu_legacy_ctx_t *c = fab__cu_legacy_of(ctx);
    if (c && cache) {
        if (set)
            c->cache = *cache;
        else
            *cache = c->cache;
    }
    if (c && bank) {
        if (set)
            c->bank = *bank;
        else
            *bank = c->bank;
    }
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return c ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    FAB__CU_ENTER();
    if (!pconfig)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_legacy_setting(pconfig, NULL, false);
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
    FAB__CU_ENTER();
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_legacy_setting(&config, NULL, true);
}

CUresult cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
    FAB__CU_ENTER();
    if (!pConfig)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_legacy_setting(NULL, pConfig, false);
}

CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
    FAB__CU_ENTER();
    if ((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
        return CUDA_ERROR_INVALID_VALUE;
    /* The default bank size reads back as the device's, four bytes. */
    if (config == CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE)
        config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return fab__cu_legacy_setting(NULL, &config, true);
}

/* ---- managed memory, the profiler ------------------------------------------- */

/* cuMemAllocManaged is memory.c's, whose record marks the memory managed. */

CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                unsigned int flags)
{
    FAB__CU_ENTER();
    (void)length;
    if (!dptr || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
                  flags != CU_MEM_ATTACH_SINGLE))
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_stream_check(hStream);
}

FAB__CU_EXPORT CUresult cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr,
                                                    size_t length, unsigned int flags);
CUresult cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length,
                                     unsigned int flags)
{
    /* Nothing is queued: the per-thread default stream checks as the legacy one. */
    return cuStreamAttachMemAsync(hStream, dptr, length, flags);
}

/* The first ABIs of the 2D memsets: 32-bit pitch, sizes and pointer. */
FAB__CU_EXPORT CUresult cuMemsetD2D8(CUdeviceptr_v1 dstDevice, unsigned int dstPitch,
                                     unsigned char uc, unsigned int Width, unsigned int Height);
FAB__CU_EXPORT CUresult cuMemsetD2D16(CUdeviceptr_v1 dstDevice, unsigned int dstPitch,
                                      unsigned short us, unsigned int Width, unsigned int Height);
FAB__CU_EXPORT CUresult cuMemsetD2D32(CUdeviceptr_v1 dstDevice, unsigned int dstPitch,
                                      unsigned int ui, unsigned int Width, unsigned int Height);
CUresult cuMemsetD2D8(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc,
                      unsigned int Width, unsigned int Height)
{
    return cuMemsetD2D8_v2(dstDevice, dstPitch, uc, Width, Height);
}

CUresult cuMemsetD2D16(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us,
                       unsigned int Width, unsigned int Height)
{
    return cuMemsetD2D16_v2(dstDevice, dstPitch, us, Width, Height);
}

CUresult cuMemsetD2D32(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui,
                       unsigned int Width, unsigned int Height)
{
    return cuMemsetD2D32_v2(dstDevice, dstPitch, ui, Width, Height);
}

CUresult cuProfilerInitialize(const char *configFile, const char *outputFile,
                              CUoutput_mode outputMode)
{
    FAB__CU_ENTER();
    (void)configFile, (void)outputFile, (void)outputMode;
    return CUDA_SUCCESS;
}

CUresult cuProfilerStart(void)
{
    FAB__CU_ENTER();
    return CUDA_SUCCESS;
}

CUresult cuProfilerStop(void)
{
    FAB__CU_ENTER();
    return CUDA_SUCCESS;
}

/* ---- execution control before CUDA 4.0 ---------------------------------------- */

/* cuFuncSetBlockShape, cuFuncSetSharedSize and cuParamSet* fill a record of
 * the function; cuLaunch, cuLaunchGrid and cuLaunchGridAsync launch it with
 * cuLaunchKernel and the packed buffer in `extra`, so every check of a launch
 * (docs/cuda.md, "Launches") applies. The parameter space is 4 KiB, as it was
 * then. Records are kept by handle under the lock above. */
#define FAB__CU_PARAM_SPACE 4096

typedef struct fab__cu_legacy_fn {
    CUfunction f;
    unsigned block[3]; /* 0: cuFuncSetBlockShape not called */
    unsigned shared;
    unsigned size; /* cuParamSetSize */
    unsigned char params[FAB__CU_PARAM_SPACE];
    struct fab__cu_legacy_fn *next;
} fab__cu_legacy_fn_t;

static fab__cu_legacy_fn_t *fab__cu_legacy_fns;

/* The record of a live function, made on first use; with the lock held on
 * success. CUDA_ERROR_INVALID_HANDLE for a function that is not one. */
static CUresult fab__cu_legacy_fn(CUfunction f, fab__cu_legacy_fn_t **out)
{
    int v;
    FAB__CU_TRY(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    pthread_mutex_lock(&fab__cu_legacy_lock);
    for (fab__cu_legacy_fn_t *r = fab__cu_legacy_fns; r; r = r->next)
        if (r->f == f) {
            *out = r;
            return CUDA_SUCCESS;
        }
    fab__cu_legacy_fn_t *r = calloc(1, sizeof(*r));
    if (!r) {
        pthread_mutex_unlock(&fab__cu_legacy_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    r->f = f;
    r->next = fab__cu_legacy_fns;
    fab__cu_legacy_fns = r;
    *out = r;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
    FAB__CU_ENTER();
    if (x < 1 || y < 1 || z < 1)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_legacy_fn_t *r;
    FAB__CU_TRY(fab__cu_legacy_fn(hfunc, &r));
    r->block[0] = (unsigned)x, r->block[1] = (unsigned)y, r->block[2] = (unsigned)z;
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return CUDA_SUCCESS;
}

CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
    FAB__CU_ENTER();
    fab__cu_legacy_fn_t *r;
    FAB__CU_TRY(fab__cu_legacy_fn(hfunc, &r));
    r->shared = bytes;
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return CUDA_SUCCESS;
}

CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
    FAB__CU_ENTER();
    if (numbytes > FAB__CU_PARAM_SPACE)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_legacy_fn_t *r;
    FAB__CU_TRY(fab__cu_legacy_fn(hfunc, &r));
    r->size = numbytes;
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return CUDA_SUCCESS;
}

CUresult cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes)
{
    FAB__CU_ENTER();
    if (offset < 0 || (numbytes && !ptr) || numbytes > FAB__CU_PARAM_SPACE ||
        (unsigned)offset > FAB__CU_PARAM_SPACE - numbytes)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_legacy_fn_t *r;
    FAB__CU_TRY(fab__cu_legacy_fn(hfunc, &r));
    if (numbytes)
        memcpy(r->params + offset, ptr, numbytes);
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    return CUDA_SUCCESS;
}

CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
    return cuParamSetv(hfunc, offset, &value, sizeof(value));
}

CUresult cuParamSetf(CUfunction hfunc, int offset, float value)
{
    return cuParamSetv(hfunc, offset, &value, sizeof(value));
}

CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
    FAB__CU_ENTER();
    if (grid_width < 1 || grid_height < 1)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_legacy_fn_t *r;
    FAB__CU_TRY(fab__cu_legacy_fn(f, &r));
    /* A copy of the record: the launch copies the buffer at the call, and the
     * lock is not held across it. */
    unsigned block[3] = {r->block[0], r->block[1], r->block[2]}, shared = r->shared;
    size_t size = r->size;
    unsigned char *params = malloc(size ? size : 1);
    if (params)
        memcpy(params, r->params, size);
    pthread_mutex_unlock(&fab__cu_legacy_lock);
    if (!params)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* No block shape set: the launch's own check refuses a zero dimension. */
    void *extra[] = {(void *)(uintptr_t)FAB_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, params,
                     (void *)(uintptr_t)FAB_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, &size,
                     (void *)(uintptr_t)FAB_CU_LAUNCH_PARAM_END_AS_INT};
    CUresult res = cuLaunchKernel(f, (unsigned)grid_width, (unsigned)grid_height, 1, block[0],
                                  block[1], block[2], shared, hStream, NULL, extra);
    free(params);
    return res;
}

CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
    return cuLaunchGridAsync(f, grid_width, grid_height, NULL);
}

CUresult cuLaunch(CUfunction f)
{
    return cuLaunchGridAsync(f, 1, 1, NULL);
}

/* ---- refused: what the emulation does not have ------------------------------- */

/* One log line per entry point, the first time it is called. The flags are
 * indexed by the FAB__CU_NO_ list below. */
static CUresult fab__cu_refuse(bool *said, const char *name, const char *what)
{
    FAB__CU_TRY(fab__cu_check_init());
    if (!__atomic_exchange_n(said, true, __ATOMIC_RELAXED))
        fab__log(FAB__LOG_WARN, "%s: %s not emulated by fabmem; CUDA_ERROR_NOT_SUPPORTED", name,
                 what);
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define FAB__CU_ARRAYS "CUDA arrays are"
#define FAB__CU_TEXTURES "texture and surface references are"
#define FAB__CU_PEER3D "3D copies between contexts are"

#define FAB__CU_NO(name, what, params)                        \
    CUresult name params                                      \
    {                                                         \
        static bool said;                                     \
        FAB__CU_FAULT();                                      \
        return fab__cu_refuse(&said, #name, what);            \
    }

/* The parameters are named in the prototypes (entry.h) and unused here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
FAB__CU_NO(cuArrayCreate_v2, FAB__CU_ARRAYS,
           (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray))
FAB__CU_NO(cuArrayGetDescriptor_v2, FAB__CU_ARRAYS,
           (CUDA_ARRAY_DESCRIPTOR * pArrayDescriptor, CUarray hArray))
FAB__CU_NO(cuArrayDestroy, FAB__CU_ARRAYS, (CUarray hArray))
FAB__CU_NO(cuArray3DCreate_v2, FAB__CU_ARRAYS,
           (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray))
FAB__CU_NO(cuArray3DGetDescriptor_v2, FAB__CU_ARRAYS,
           (CUDA_ARRAY3D_DESCRIPTOR * pArrayDescriptor, CUarray hArray))
FAB__CU_NO(cuMemcpyAtoA_v2, FAB__CU_ARRAYS,
           (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
            size_t ByteCount))
FAB__CU_NO(cuMemcpyAtoD_v2, FAB__CU_ARRAYS,
           (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount))
FAB__CU_NO(cuMemcpyAtoH_v2, FAB__CU_ARRAYS,
           (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount))
FAB__CU_NO(cuMemcpyDtoA_v2, FAB__CU_ARRAYS,
           (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount))
FAB__CU_NO(cuMemcpyHtoA_v2, FAB__CU_ARRAYS,
           (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount))
FAB__CU_NO(cuMemcpy3DPeer, FAB__CU_PEER3D, (const CUDA_MEMCPY3D_PEER *pCopy))
FAB__CU_NO(cuMemcpy3DPeerAsync, FAB__CU_PEER3D,
           (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream))

FAB__CU_NO(cuModuleGetTexRef, FAB__CU_TEXTURES,
           (CUtexref * pTexRef, CUmodule hmod, const char *name))
FAB__CU_NO(cuModuleGetSurfRef, FAB__CU_TEXTURES,
           (CUsurfref * pSurfRef, CUmodule hmod, const char *name))
FAB__CU_NO(cuTexRefCreate, FAB__CU_TEXTURES, (CUtexref * pTexRef))
FAB__CU_NO(cuTexRefDestroy, FAB__CU_TEXTURES, (CUtexref hTexRef))
FAB__CU_NO(cuTexRefSetArray, FAB__CU_TEXTURES,
           (CUtexref hTexRef, CUarray hArray, unsigned int Flags))
FAB__CU_NO(cuTexRefSetAddress_v2, FAB__CU_TEXTURES,
           (size_t * ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes))
FAB__CU_NO(cuTexRefSetAddress2D_v3, FAB__CU_TEXTURES,
           (CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch))
FAB__CU_NO(cuTexRefSetFormat, FAB__CU_TEXTURES,
           (CUtexref hTexRef, CUarray_format fmt, int NumPackedComponents))
FAB__CU_NO(cuTexRefSetAddressMode, FAB__CU_TEXTURES,
           (CUtexref hTexRef, int dim, CUaddress_mode am))
FAB__CU_NO(cuTexRefSetFilterMode, FAB__CU_TEXTURES, (CUtexref hTexRef, CUfilter_mode fm))
FAB__CU_NO(cuTexRefSetFlags, FAB__CU_TEXTURES, (CUtexref hTexRef, unsigned int Flags))
FAB__CU_NO(cuTexRefGetAddress_v2, FAB__CU_TEXTURES, (CUdeviceptr * pdptr, CUtexref hTexRef))
FAB__CU_NO(cuTexRefGetArray, FAB__CU_TEXTURES, (CUarray * phArray, CUtexref hTexRef))
FAB__CU_NO(cuTexRefGetAddressMode, FAB__CU_TEXTURES,
           (CUaddress_mode * pam, CUtexref hTexRef, int dim))
FAB__CU_NO(cuTexRefGetFilterMode, FAB__CU_TEXTURES, (CUfilter_mode * pfm, CUtexref hTexRef))
FAB__CU_NO(cuTexRefGetFormat, FAB__CU_TEXTURES,
           (CUarray_format * pFormat, int *pNumChannels, CUtexref hTexRef))
FAB__CU_NO(cuTexRefGetFlags, FAB__CU_TEXTURES, (unsigned int *pFlags, CUtexref hTexRef))
FAB__CU_NO(cuSurfRefSetArray, FAB__CU_TEXTURES,
           (CUsurfref hSurfRef, CUarray hArray, unsigned int Flags))
FAB__CU_NO(cuSurfRefGetArray, FAB__CU_TEXTURES, (CUarray * phArray, CUsurfref hSurfRef))
FAB__CU_NO(cuParamSetTexRef, FAB__CU_TEXTURES, (CUfunction hfunc, int texunit, CUtexref hTexRef))

/* The first ABIs of the same names (32-bit sizes and device pointers), which
 * cuGetProcAddress answers for the versions before _v2, and the
 * per-thread-default-stream ABIs; declared here, as copy.c declares its own. */
#define FAB__CU_NO_X(name, what, params) \
    FAB__CU_EXPORT CUresult name params; \
    FAB__CU_NO(name, what, params)
FAB__CU_NO_X(cuArrayCreate, FAB__CU_ARRAYS, (CUarray * pHandle, const void *pAllocateArray))
FAB__CU_NO_X(cuArrayGetDescriptor, FAB__CU_ARRAYS, (void *pArrayDescriptor, CUarray hArray))
FAB__CU_NO_X(cuArray3DCreate, FAB__CU_ARRAYS, (CUarray * pHandle, const void *pAllocateArray))
FAB__CU_NO_X(cuArray3DGetDescriptor, FAB__CU_ARRAYS, (void *pArrayDescriptor, CUarray hArray))
FAB__CU_NO_X(cuMemcpyAtoA, FAB__CU_ARRAYS,
             (CUarray dstArray, unsigned int dstOffset, CUarray srcArray, unsigned int srcOffset,
              unsigned int ByteCount))
FAB__CU_NO_X(cuMemcpyAtoD, FAB__CU_ARRAYS,
             (CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset,
              unsigned int ByteCount))
FAB__CU_NO_X(cuMemcpyAtoH, FAB__CU_ARRAYS,
             (void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount))
FAB__CU_NO_X(cuMemcpyDtoA, FAB__CU_ARRAYS,
             (CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice,
              unsigned int ByteCount))
FAB__CU_NO_X(cuMemcpyHtoA, FAB__CU_ARRAYS,
             (CUarray dstArray, unsigned int dstOffset, const void *srcHost,
              unsigned int ByteCount))
FAB__CU_NO_X(cuTexRefSetAddress, FAB__CU_TEXTURES,
             (unsigned int *ByteOffset, CUtexref hTexRef, CUdeviceptr_v1 dptr, unsigned int bytes))
FAB__CU_NO_X(cuTexRefGetAddress, FAB__CU_TEXTURES, (CUdeviceptr_v1 * pdptr, CUtexref hTexRef))
FAB__CU_NO_X(cuTexRefSetAddress2D, FAB__CU_TEXTURES,
             (CUtexref hTexRef, const void *desc, CUdeviceptr_v1 dptr, unsigned int Pitch))
FAB__CU_NO_X(cuTexRefSetAddress2D_v2, FAB__CU_TEXTURES,
             (CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch))
FAB__CU_NO_X(cuMemcpyAtoA_v2_ptds, FAB__CU_ARRAYS,
             (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
              size_t ByteCount))
FAB__CU_NO_X(cuMemcpyAtoD_v2_ptds, FAB__CU_ARRAYS,
             (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount))
FAB__CU_NO_X(cuMemcpyAtoH_v2_ptds, FAB__CU_ARRAYS,
             (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount))
FAB__CU_NO_X(cuMemcpyDtoA_v2_ptds, FAB__CU_ARRAYS,
             (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount))
FAB__CU_NO_X(cuMemcpyHtoA_v2_ptds, FAB__CU_ARRAYS,
             (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount))
FAB__CU_NO_X(cuMemcpy3DPeer_ptds, FAB__CU_PEER3D, (const CUDA_MEMCPY3D_PEER *pCopy))
FAB__CU_NO_X(cuMemcpy3DPeerAsync_ptsz, FAB__CU_PEER3D,
             (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream))
#pragma GCC diagnostic pop
