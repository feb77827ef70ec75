/* Stream entry points that run no queue of their own: cuStreamCreate
 * (WithPriority), cuStreamDestroy, cuStreamGet*, cuCtxGetStreamPriorityRange,
 * capture queries (never capturing), and host functions (cuLaunchHostFunc,
 * cuStreamAddCallback), which stream.c's fab__cu_stream_submit queues. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/stream_impl.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define FAB__CU_PRIORITY_LEAST 0
#define FAB__CU_PRIORITY_GREATEST (-5)

/* ---- stream entry points ---------------------------------------------- */

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    FAB__CU_ENTER();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    /* Priorities outside the range are clamped to it, as documented. */
    if (priority > FAB__CU_PRIORITY_LEAST)
        priority = FAB__CU_PRIORITY_LEAST;
    if (priority < FAB__CU_PRIORITY_GREATEST)
        priority = FAB__CU_PRIORITY_GREATEST;
    pthread_mutex_lock(&fab__cu_sq.mu);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_ctxq_t *cq = fab__cu_ctxq(ctx);
    struct CUstream_st *s = cq ? fab__cu_stream_new(ctx, cq, FAB__CU_STREAM_CREATED, flags,
                                                    priority)
                               : NULL;
    if (s) {
        if (fab__cu_idtable_insert(&fab__cu_sq.streams, (uintptr_t)s, s) == 0) {
            *phStream = s;
            r = CUDA_SUCCESS;
        } else {
            fab__cu_stream_put(s);
        }
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FAB__CU_FAULT();
    return FAB__CU_INNER(cuStreamCreateWithPriority(phStream, Flags, 0));
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FAB__CU_ENTER();
    uintptr_t v = (uintptr_t)hStream;
    if (v == 0 || v == FAB_CU_STREAM_LEGACY || v == FAB_CU_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s = fab__cu_idtable_remove(&fab__cu_sq.streams, v);
    if (s) {
        /* Work already queued still runs: the worker holds its own ref and
         * exits once the queue is empty. */
        s->destroyed = true;
        pthread_cond_broadcast(&fab__cu_sq.cv);
        fab__cu_stream_put(s);
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

/* Resolve a stream for a query of its properties (mu taken and dropped). */
static CUresult fab__cu_stream_props(CUstream h, bool per_thread, CUcontext *ctx, unsigned *flags,
                                     int *priority, unsigned long long *id)
{
    FAB__CU_ENTER();
    pthread_mutex_lock(&fab__cu_sq.mu);
    struct CUstream_st *s;
    CUresult r = fab__cu_stream_from_handle(h, per_thread, &s);
    if (r == CUDA_SUCCESS) {
        *ctx = s->ctx;
        *flags = s->flags;
        *priority = s->priority;
        *id = s->id;
    }
    pthread_mutex_unlock(&fab__cu_sq.mu);
    return r;
}

#define FAB__CU_STREAM_GETTER(name, per_thread, type, out, field)                     \
    CUresult name(CUstream hStream, type *out)                                       \
    {                                                                                 \
        FAB__CU_FAULT();                                                              \
        if (!out)                                                                     \
            return CUDA_ERROR_INVALID_VALUE;                                          \
        CUcontext ctx;                                                                \
        unsigned flags;                                                               \
        int priority;                                                                 \
        unsigned long long id;                                                        \
        CUresult r = fab__cu_stream_props(hStream, per_thread, &ctx, &flags, &priority, &id); \
        if (r == CUDA_SUCCESS)                                                        \
            *out = (type)(field);                                                     \
        return r;                                                                     \
    }

FAB__CU_STREAM_GETTER(cuStreamGetFlags, false, unsigned int, flags_out, flags)
FAB__CU_STREAM_GETTER(cuStreamGetFlags_ptsz, true, unsigned int, flags_out, flags)
FAB__CU_STREAM_GETTER(cuStreamGetPriority, false, int, priority_out, priority)
FAB__CU_STREAM_GETTER(cuStreamGetPriority_ptsz, true, int, priority_out, priority)
FAB__CU_STREAM_GETTER(cuStreamGetId, false, unsigned long long, id_out, id)
FAB__CU_STREAM_GETTER(cuStreamGetId_ptsz, true, unsigned long long, id_out, id)
FAB__CU_STREAM_GETTER(cuStreamGetCtx, false, CUcontext, ctx_out, ctx)
FAB__CU_STREAM_GETTER(cuStreamGetCtx_ptsz, true, CUcontext, ctx_out, ctx)

/* CUDA 12.5's ABI also names a stream's green context; the emulation makes
 * none, so that is always NULL. */
static CUresult fab__cu_stream_get_ctx2(CUstream h, bool per_thread, CUcontext *pCtx,
                                        CUgreenCtx *pGreenCtx)
{
    if (!pCtx || !pGreenCtx)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long id;
    CUresult r = fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &id);
    if (r == CUDA_SUCCESS) {
        *pCtx = ctx;
        *pGreenCtx = NULL;
    }
    return r;
}

CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    FAB__CU_FAULT();
    return fab__cu_stream_get_ctx2(hStream, false, pCtx, pGreenCtx);
}

CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    FAB__CU_FAULT();
    return fab__cu_stream_get_ctx2(hStream, true, pCtx, pGreenCtx);
}

static CUresult fab__cu_stream_device(CUstream h, bool per_thread, CUdevice *device)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long id;
    FAB__CU_TRY(fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &id));
    return FAB__CU_INNER(cuCtxGetDevice_v2(device, ctx));
}

CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    FAB__CU_FAULT();
    return fab__cu_stream_device(hStream, false, device);
}

CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    FAB__CU_FAULT();
    return fab__cu_stream_device(hStream, true, device);
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    FAB__CU_ENTER();
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    if (leastPriority)
        *leastPriority = FAB__CU_PRIORITY_LEAST;
    if (greatestPriority)
        *greatestPriority = FAB__CU_PRIORITY_GREATEST;
    return CUDA_SUCCESS;
}

/* ---- capture: never capturing --------------------------------------------- */

static CUresult fab__cu_capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus *status,
                                     cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                     const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    unsigned flags;
    int priority;
    unsigned long long sid;
    FAB__CU_TRY(fab__cu_stream_props(h, per_thread, &ctx, &flags, &priority, &sid));
    /* Stream capture is not emulated: no stream is ever capturing, and the
     * other outputs are defined only while one is. */
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    (void)id;
    (void)graph;
    (void)deps;
    (void)edges;
    (void)ndeps;
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                cuuint64_t *id_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                     cuuint64_t *id_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, graph_out,
                                dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, graph_out,
                                dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out,
                                   size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, false, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out)
{
    FAB__CU_FAULT();
    return fab__cu_capture_info(hStream, true, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    FAB__CU_ENTER();
    static _Thread_local CUstreamCaptureMode current = CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = current;
    current = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ---- host functions ------------------------------------------------------- */

typedef struct fab__cu_host_call {
    CUhostFn fn;
    CUstreamCallback cb;
    CUstream stream;
    void *user;
} fab__cu_host_call_t;

static void fab__cu_host_call_run(void *arg)
{
    fab__cu_host_call_t *c = arg;
    if (c->fn)
        c->fn(c->user);
    else
        c->cb(c->stream, CUDA_SUCCESS, c->user);
}

static CUresult fab__cu_host_call(CUstream h, bool per_thread, CUhostFn fn, CUstreamCallback cb,
                                  void *user)
{
    FAB__CU_ENTER();
    fab__cu_host_call_t *c = malloc(sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->fn = fn;
    c->cb = cb;
    c->stream = h;
    c->user = user;
    CUresult r = fab__cu_stream_submit(h, per_thread ? FAB__CU_SUBMIT_PER_THREAD : 0,
                                       fab__cu_host_call_run, c, free);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FAB__CU_FAULT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, false, fn, NULL, userData);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FAB__CU_FAULT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, true, fn, NULL, userData);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                             unsigned int flags)
{
    FAB__CU_FAULT();
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, false, NULL, callback, userData);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                  unsigned int flags)
{
    FAB__CU_FAULT();
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_host_call(hStream, true, NULL, callback, userData);
}

