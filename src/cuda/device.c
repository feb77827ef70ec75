/* Contexts: a context is a small object naming a device; the current one is
 * per thread, the top of the thread's context stack (cuCtxPushCurrent /
 * cuCtxPopCurrent; cuCtxSetCurrent replaces the top). Here too are what
 * hangs off a context (its flags, limits, peer access, sticky error). The devices themselves (the emulated GPUs of this process's
 * node) and their queries are deviceinfo.c's; streams and cuCtxSynchronize
 * are stream.c's, events event.c's.
 *
 * Lifecycle of a context: cuCtxCreate (current in the calling thread) ...
 * cuCtxDestroy (no longer current anywhere it is the calling thread's; the
 * object is kept, marked destroyed, so that a stale CUcontext is recognised).
 * A primary context exists per device and is counted by
 * cuDevicePrimaryCtxRetain / cuDevicePrimaryCtxRelease; released by its last
 * holder, or reset (cuDevicePrimaryCtxReset), it starts afresh. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/entry.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FAB__CU_CTX_MAGIC 0x63747874u    /* "ctxt" */

struct CUctx_st {
    uint32_t magic;
    int device;
    unsigned flags;
    bool primary;
    int primary_refs; /* cuDevicePrimaryCtxRetain count */
    bool destroyed;   /* a cuCtxCreate context after cuCtxDestroy */
    unsigned long long id; /* cuCtxGetId: unique in the process, never reused */
    /* The devices whose memory this context has enabled peer access to
     * (cuCtxEnablePeerAccess, one bit per device: a device's contexts are
     * not told apart), and the context's limits (cuCtxSetLimit). Both read
     * and written under fab__cu.lock. */
    uint64_t peers;
    size_t limits[CU_LIMIT_MAX];
    /* The first fault of a kernel launched in this context (device.h). */
    _Atomic int sticky;
    /* Releases that a reset answered in advance: cuda.h lets a holder of
     * the primary context release it after cuDevicePrimaryCtxReset. */
    int reset_refs;
    struct CUctx_st *next;
};

/* Guarded by fab__cu.lock; contexts are never freed, so that a stale
 * CUcontext is recognised (and a thread's current one stays readable). */
static struct CUctx_st *fab__cu_primary[FAB__CU_MAX_DEVICES];
static struct CUctx_st *fab__cu_contexts;
static unsigned long long fab__cu_next_ctx_id = 1;

/* The calling thread's context stack: [0, depth); the current context is the
 * top, or none when the stack is empty. cuCtxSetCurrent replaces the top (or
 * pushes onto an empty stack; NULL pops it), as the driver documents. */
#define FAB__CU_CTX_STACK 64
static _Thread_local struct CUctx_st *fab__cu_tls_stack[FAB__CU_CTX_STACK];
static _Thread_local int fab__cu_tls_depth;

static struct CUctx_st *fab__cu_current(void)
{
    return fab__cu_tls_depth > 0 ? fab__cu_tls_stack[fab__cu_tls_depth - 1] : NULL;
}

static void fab__cu_set_current(struct CUctx_st *ctx)
{
    if (!ctx) {
        if (fab__cu_tls_depth > 0)
            fab__cu_tls_depth--;
        return;
    }
    if (fab__cu_tls_depth == 0)
        fab__cu_tls_depth = 1;
    fab__cu_tls_stack[fab__cu_tls_depth - 1] = ctx;
}

CUresult fab__cu_current_ctx(CUcontext *ctx_out)
{
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctx_out = ctx;
    return CUDA_SUCCESS;
}

CUresult fab__cu_current_device(int *dev_out)
{
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev_out = ctx->device;
    return CUDA_SUCCESS;
}

/* Caller holds the lock. */
static bool fab__cu_ctx_valid(const struct CUctx_st *ctx)
{
    if (!ctx)
        return false;
    for (int i = 0; i < fab__cu.device_count; i++) {
        if (fab__cu_primary[i] == ctx)
            return true;
    }
    for (const struct CUctx_st *c = fab__cu_contexts; c; c = c->next) {
        if (c == ctx)
            return !c->destroyed;
    }
    return false;
}

/* ---- contexts ----------------------------------------------------------- */

/* What an H100's context starts with (cuCtxGetLimit on one, and CUDA's
 * documentation of each default); the emulation runs no device code that
 * any of them would bound, so they are numbers kept for the asker. */
static void fab__cu_limits_default(struct CUctx_st *ctx)
{
    memset(ctx->limits, 0, sizeof(ctx->limits));
    ctx->limits[CU_LIMIT_STACK_SIZE] = 1024;
    ctx->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1048576;
    ctx->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8388608;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    ctx->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 32;
    ctx->limits[CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0;
}

/* A primary context destroyed (released by its last holder, or reset): the
 * emulation keeps the object, whose memory lives on, and starts it afresh:
 * no peer access, the default limits, no sticky error. Caller holds the lock
 * for writing. */
static void fab__cu_primary_fresh(struct CUctx_st *ctx)
{
    ctx->peers = 0;
    fab__cu_limits_default(ctx);
    atomic_store_explicit(&ctx->sticky, CUDA_SUCCESS, memory_order_release);
}

static CUresult fab__cu_ctx_new(CUdevice dev, unsigned flags, bool primary,
                                struct CUctx_st **ctx_out)
{
    struct CUctx_st *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx->magic = FAB__CU_CTX_MAGIC;
    ctx->device = dev;
    ctx->flags = flags;
    ctx->primary = primary;
    fab__cu_limits_default(ctx);
    *ctx_out = ctx;
    /* Ids come from one counter under the lock (callers hold it or, for
     * cuCtxCreate, take it just after): an atomic keeps it simple. */
    ctx->id = __atomic_fetch_add(&fab__cu_next_ctx_id, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    fab__rw_wrlock(&fab__cu.lock);
    if (!fab__cu_primary[dev])
        r = fab__cu_ctx_new(dev, 0, true, &fab__cu_primary[dev]);
    if (r == CUDA_SUCCESS) {
        fab__cu_primary[dev]->primary_refs++;
        *pctx = fab__cu_primary[dev];
    }
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* The work queued in the primary context of dev ends first, as the driver
 * destroys a context only once it is idle: work queued after a fault is then
 * dropped (its context is lost), not run in the fresh one. */
static void fab__cu_primary_drain(CUdevice dev)
{
    fab__rw_rdlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    fab__rw_unlock(&fab__cu.lock);
    if (ctx)
        (void)FAB__CU_INNER(cuCtxSynchronize_v2(ctx));
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    CUresult r = CUDA_SUCCESS;
    fab__rw_rdlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    bool last = ctx && ctx->primary_refs == 1;
    fab__rw_unlock(&fab__cu.lock);
    if (last)
        fab__cu_primary_drain(dev);
    fab__rw_wrlock(&fab__cu.lock);
    ctx = fab__cu_primary[dev];
    if (ctx && ctx->primary_refs == 0 && ctx->reset_refs > 0)
        ctx->reset_refs--; /* a holder's release after a reset */
    else if (!ctx || ctx->primary_refs == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--ctx->primary_refs == 0)
        fab__cu_primary_fresh(ctx); /* a GPU destroys its primary context here */
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* cuda.h: destroys the primary context's state without releasing it; its
 * holders may still release it. The memory lives on here (the emulation
 * frees no allocation behind its owner's back); the sticky error, peer
 * access and limits go, and the context is inactive until retained again. */
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    fab__cu_primary_drain(dev);
    fab__rw_wrlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    if (ctx) {
        ctx->reset_refs += ctx->primary_refs;
        ctx->primary_refs = 0;
        fab__cu_primary_fresh(ctx);
    }
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    *flags = ctx ? ctx->flags : 0;
    *active = ctx && ctx->primary_refs > 0;
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pctx || (flags & ~(unsigned)FAB_CU_CTX_FLAGS_MASK))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx;
    FAB__CU_TRY(fab__cu_ctx_new(dev, flags, false, &ctx));
    fab__rw_wrlock(&fab__cu.lock);
    ctx->next = fab__cu_contexts;
    fab__cu_contexts = ctx;
    fab__rw_unlock(&fab__cu.lock);
    /* The new context is pushed onto the thread's stack (documented). */
    if (fab__cu_tls_depth < FAB__CU_CTX_STACK)
        fab__cu_tls_stack[fab__cu_tls_depth++] = ctx;
    else
        fab__cu_set_current(ctx);
    *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                        unsigned int flags, CUdevice dev)
{
    /* Execution affinity limits SMs for kernels; with no kernels it has
     * nothing to limit, but the arguments are checked as the driver does. */
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                        CUdevice dev)
{
    if (ctxCreateParams) {
        if (ctxCreateParams->execAffinityParams && ctxCreateParams->cigParams)
            return CUDA_ERROR_INVALID_VALUE;
        if (ctxCreateParams->cigParams)
            return CUDA_ERROR_NOT_SUPPORTED; /* CIG is D3D12/Vulkan interop */
        return cuCtxCreate_v3(pctx, ctxCreateParams->execAffinityParams,
                              ctxCreateParams->numExecAffinityParams, flags, dev);
    }
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_wrlock(&fab__cu.lock);
    bool found = false;
    for (struct CUctx_st *c = fab__cu_contexts; c; c = c->next) {
        if (c == ctx && !c->destroyed) {
            c->destroyed = true;
            found = true;
        }
    }
    fab__rw_unlock(&fab__cu.lock);
    if (!found)
        return CUDA_ERROR_INVALID_CONTEXT; /* a primary, stale or forged context */
    if (fab__cu_current() == ctx)
        fab__cu_set_current(NULL);
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (ctx) {
        fab__rw_rdlock(&fab__cu.lock);
        bool ok = fab__cu_ctx_valid(ctx);
        fab__rw_unlock(&fab__cu.lock);
        if (!ok)
            return CUDA_ERROR_INVALID_CONTEXT;
    }
    fab__cu_set_current(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FAB__CU_ENTER();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fab__cu_current();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    FAB__CU_ENTER();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = ctx->device;
    return CUDA_SUCCESS;
}

/* The peer context named by a peer-access call, checked: valid, and of
 * another device than the current context's. */
static CUresult fab__cu_peer_of(CUcontext peerContext, struct CUctx_st **cur_out)
{
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    fab__rw_rdlock(&fab__cu.lock);
    bool ok = fab__cu_ctx_valid(peerContext);
    fab__rw_unlock(&fab__cu.lock);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (peerContext->device == cur->device)
        return CUDA_ERROR_INVALID_DEVICE;
    *cur_out = cur;
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_peer_of(peerContext, &cur));
    /* GPUs isolated from each other (gpus_isolated, a field fault) cannot
     * reach each other's memory: what cuDeviceCanAccessPeer says 0 for,
     * cuCtxEnablePeerAccess refuses with PEER_ACCESS_UNSUPPORTED (cuda.h). */
    int can = 0;
    CUresult r = FAB__CU_INNER(cuDeviceCanAccessPeer(&can, cur->device, peerContext->device));
    if (r != CUDA_SUCCESS)
        return r;
    if (!can)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    /* Every device already reaches host memory, so access itself changes
     * nothing; what is recorded is what CUDA reports: a second enable is
     * PEER_ACCESS_ALREADY_ENABLED until cuCtxDisablePeerAccess. */
    uint64_t bit = (uint64_t)1 << peerContext->device;
    fab__rw_wrlock(&fab__cu.lock);
    bool already = (cur->peers & bit) != 0;
    cur->peers |= bit;
    fab__rw_unlock(&fab__cu.lock);
    return already ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur;
    FAB__CU_TRY(fab__cu_peer_of(peerContext, &cur));
    uint64_t bit = (uint64_t)1 << peerContext->device;
    fab__rw_wrlock(&fab__cu.lock);
    bool enabled = (cur->peers & bit) != 0;
    cur->peers &= ~bit;
    fab__rw_unlock(&fab__cu.lock);
    return enabled ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

/* The current context's flags, replaced (cuda.h: as cuDevicePrimaryCtxSetFlags
 * takes them); cuCtxGetFlags reads them back. */
CUresult cuCtxSetFlags(unsigned int flags)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags & ~(unsigned)FAB_CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_wrlock(&fab__cu.lock);
    cur->flags = flags;
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

/* Writes a NIC (or another process) made to this GPU's memory are visible
 * once this returns. Here every device's memory is this host's, coherent:
 * a full fence is all that remains to do. */
CUresult cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                    CUflushGPUDirectRDMAWritesScope scope)
{
    FAB__CU_ENTER();
    if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
        (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
         scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fab__cu_current())
        return CUDA_ERROR_INVALID_CONTEXT;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

/* ---- limits --------------------------------------------------------------- */

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE:
        /* rounded up to what a thread's stack is made of (16-byte words) */
        if (value > SIZE_MAX - 15)
            return CUDA_ERROR_INVALID_VALUE;
        value = (value + 15) & ~(size_t)15;
        break;
    case CU_LIMIT_PRINTF_FIFO_SIZE:
    case CU_LIMIT_MALLOC_HEAP_SIZE:
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
        break;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
        /* cuda.h: only below compute capability 9.0. */
        if (fab__cu.devices[cur->device].compute_major >= 9)
            return CUDA_ERROR_UNSUPPORTED_LIMIT;
        if (value > 24)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
        if (value > 128) /* a hint, clamped (cuda.h) */
            value = 128;
        break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: {
        int max = 0;
        FAB__CU_TRY(FAB__CU_INNER(cuDeviceGetAttribute(
            &max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, cur->device)));
        if (value > (size_t)(max > 0 ? max : 0))
            value = (size_t)(max > 0 ? max : 0);
        break;
    }
    default:
        /* SHMEM_SIZE and the CIG limits belong to CIG contexts, which the
         * emulation never makes; anything else is not a limit. */
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    }
    fab__rw_wrlock(&fab__cu.lock);
    cur->limits[limit] = value;
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    FAB__CU_ENTER();
    if (!pvalue)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if ((unsigned)limit > (unsigned)CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    fab__rw_rdlock(&fab__cu.lock);
    *pvalue = cur->limits[limit];
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

/* ---- the context stack and context queries ------------------------------ */

CUresult fab__cu_ctx_check(CUcontext ctx)
{
    fab__rw_rdlock(&fab__cu.lock);
    bool ok = fab__cu_ctx_valid(ctx);
    fab__rw_unlock(&fab__cu.lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    if (fab__cu_tls_depth == FAB__CU_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_tls_stack[fab__cu_tls_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FAB__CU_ENTER();
    if (fab__cu_tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *ctx = fab__cu_tls_stack[--fab__cu_tls_depth];
    if (pctx)
        *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

/* The 13.0 ABI: the device of ctx, or of the current context when NULL. */
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        return FAB__CU_INNER(cuCtxGetDevice(device));
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    *device = ctx->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    FAB__CU_ENTER();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *flags = ctx->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    FAB__CU_ENTER();
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    *ctxId = ctx->id;
    return CUDA_SUCCESS;
}

/* ---- sticky errors (device.h) ----------------------------------------------------- */

void fab__cu_sticky_set(CUcontext ctx, CUresult r)
{
    if (!ctx || r == CUDA_SUCCESS)
        return;
    int none = CUDA_SUCCESS;
    atomic_compare_exchange_strong(&ctx->sticky, &none, (int)r);
}

CUresult fab__cu_sticky(CUcontext ctx)
{
    if (!ctx)
        return CUDA_SUCCESS;
    return (CUresult)atomic_load_explicit(&ctx->sticky, memory_order_acquire);
}
