/* The runtime's streams, events and host work: each runtime stream and event
 * is the driver's own (cudaStream_t is a CUstream), so the driver's workers
 * give the order. Stream capture is never on: queries answer "not
 * capturing", and every call that would build or run a graph answers
 * cudaErrorNotSupported (docs/runtime.md says why).
 *
 * Lifecycle: a stream or event lives from its create to its destroy, both
 * the driver's. cudaStreamAddCallback's callbacks need the runtime's own
 * signature, so each carries a small record from enqueue to its run, which
 * frees it. */
#include "src/cudart/runtime.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

FAB__RT_API cudaStreamCreate(cudaStream_t *pStream)
{
    if (!pStream)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamCreate((CUstream *)pStream, 0));
}

FAB__RT_API cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamCreate((CUstream *)pStream, flags));
}

FAB__RT_API cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamCreateWithPriority((CUstream *)pStream, flags, priority));
}

FAB__RT_API cudaStreamDestroy(cudaStream_t stream)
{
    FAB__RT_ENTER();
    if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
        FAB__RT_RETURN(cudaErrorInvalidResourceHandle);
    return fab__rt_cu(cuStreamDestroy_v2((CUstream)stream));
}

FAB__RT_API cudaStreamSynchronize(cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamSynchronize((CUstream)stream));
}

FAB__RT_API cudaStreamSynchronize_ptsz(cudaStream_t stream);
FAB__RT_API cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamSynchronize(fab__rt_stream(stream, true)));
}

/* cudaErrorNotReady is an answer, not a failure: CUDA does not keep it as
 * the thread's last error. */
static cudaError_t fab__rt_query(CUstream s)
{
    CUresult r = cuStreamQuery(s);
    if (r == CUDA_ERROR_NOT_READY)
        return cudaErrorNotReady;
    return fab__rt_cu(r);
}

FAB__RT_API cudaStreamQuery(cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_query((CUstream)stream);
}

FAB__RT_API cudaStreamQuery_ptsz(cudaStream_t stream);
FAB__RT_API cudaStreamQuery_ptsz(cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_query(fab__rt_stream(stream, true));
}

FAB__RT_API cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamWaitEvent((CUstream)stream, (CUevent)event, flags));
}

FAB__RT_API cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
FAB__RT_API cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamWaitEvent(fab__rt_stream(stream, true), (CUevent)event, flags));
}

FAB__RT_API cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamGetFlags((CUstream)hStream, flags));
}

FAB__RT_API cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamGetPriority((CUstream)hStream, priority));
}

FAB__RT_API cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    if (!streamId)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuStreamGetId((CUstream)hStream, streamId));
}

FAB__RT_API cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId);
FAB__RT_API cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
    return cudaStreamGetId((cudaStream_t)fab__rt_stream(hStream, true), streamId);
}

/* ---- capture: never on ---- */

FAB__RT_API cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    if (!pCaptureStatus)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUstreamCaptureStatus status;
    FAB__RT_TRY(fab__rt_cu(cuStreamIsCapturing((CUstream)stream, &status)));
    *pCaptureStatus = (enum cudaStreamCaptureStatus)status;
    return cudaSuccess;
}

FAB__RT_API cudaStreamGetCaptureInfo(cudaStream_t stream,
                                     enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out, cudaGraph_t *graph_out,
                                     const cudaGraphNode_t **dependencies_out,
                                     const cudaGraphEdgeData **edgeData_out,
                                     size_t *numDependencies_out)
{
    if (!captureStatus_out)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUstreamCaptureStatus status;
    FAB__RT_TRY(fab__rt_cu(cuStreamIsCapturing((CUstream)stream, &status)));
    *captureStatus_out = (enum cudaStreamCaptureStatus)status;
    if (id_out)
        *id_out = 0;
    if (graph_out)
        *graph_out = NULL;
    if (dependencies_out)
        *dependencies_out = NULL;
    if (edgeData_out)
        *edgeData_out = NULL;
    if (numDependencies_out)
        *numDependencies_out = 0;
    return cudaSuccess;
}

FAB__RT_API cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_cu(cuThreadExchangeStreamCaptureMode((CUstreamCaptureMode *)mode));
}

FAB__RT_API cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)stream;
    (void)mode;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    (void)stream;
    (void)pGraph;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    (void)pGraph;
    (void)flags;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    (void)pGraphExec;
    (void)graph;
    (void)flags;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    (void)graphExec;
    (void)stream;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaGraphDestroy(cudaGraph_t graph)
{
    (void)graph;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

FAB__RT_API cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    (void)graphExec;
    FAB__RT_RETURN(cudaErrorNotSupported);
}

/* A stream that is not capturing has no capture dependencies to update:
 * CUDA answers cudaErrorIllegalState, and here no stream ever captures. */
static cudaError_t fab__rt_update_capture(CUstream stream, cudaGraphNode_t *dependencies,
                                          size_t numDependencies, unsigned int flags)
{
    if (flags > (unsigned)cudaStreamSetCaptureDependencies ||
        (numDependencies > 0 && !dependencies))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUstreamCaptureStatus status;
    FAB__RT_TRY(fab__rt_cu(cuStreamIsCapturing(stream, &status)));
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        FAB__RT_RETURN(cudaErrorIllegalState);
    FAB__RT_RETURN(cudaErrorNotSupported); /* unreachable while capture is never on */
}

FAB__RT_API cudaStreamUpdateCaptureDependencies(cudaStream_t stream,
                                                cudaGraphNode_t *dependencies,
                                                const cudaGraphEdgeData *dependencyData,
                                                size_t numDependencies, unsigned int flags)
{
    (void)dependencyData;
    return fab__rt_update_capture((CUstream)stream, dependencies, numDependencies, flags);
}

FAB__RT_API cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream,
                                                     cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData,
                                                     size_t numDependencies, unsigned int flags);
FAB__RT_API cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream,
                                                     cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData,
                                                     size_t numDependencies, unsigned int flags)
{
    (void)dependencyData;
    return fab__rt_update_capture(fab__rt_stream(stream, true), dependencies, numDependencies,
                                  flags);
}

/* The calls that edit a graph: no graph can exist (cudaGraphCreate and
 * capture are refused), so a NULL graph is cudaErrorInvalidValue, as CUDA
 * says, and any other is refused as cudaGraphCreate is. */
static cudaError_t fab__rt_graph_edit(cudaGraph_t graph)
{
    FAB__RT_RETURN(graph ? cudaErrorNotSupported : cudaErrorInvalidValue);
}

FAB__RT_API cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                     size_t numDependencies)
{
    (void)from;
    (void)to;
    (void)edgeData;
    (void)numDependencies;
    return fab__rt_graph_edit(graph);
}

FAB__RT_API cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies, cudaEvent_t event)
{
    (void)pGraphNode;
    (void)pDependencies;
    (void)numDependencies;
    (void)event;
    return fab__rt_graph_edit(graph);
}

FAB__RT_API cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                      unsigned int count, unsigned int flags)
{
    (void)object;
    (void)count;
    (void)flags;
    return fab__rt_graph_edit(graph);
}

FAB__RT_API cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                       unsigned int count)
{
    (void)object;
    (void)count;
    return fab__rt_graph_edit(graph);
}

/* A graph's dump names a graph, an upload an executable graph: none can
 * exist here, so NULL is cudaErrorInvalidValue and any other is refused. */
FAB__RT_API cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    (void)flags;
    if (!path)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_graph_edit(graph);
}

static cudaError_t fab__rt_graph_upload(cudaGraphExec_t graphExec)
{
    FAB__RT_RETURN(graphExec ? cudaErrorNotSupported : cudaErrorInvalidValue);
}

FAB__RT_API cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    (void)stream;
    return fab__rt_graph_upload(graphExec);
}

FAB__RT_API cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
FAB__RT_API cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    (void)stream;
    return fab__rt_graph_upload(graphExec);
}

/* ---- user objects ---- */

/* A user object: a reference count and a destructor, run when the count
 * reaches zero. CUDA runs it on a thread of its own, at some time after the
 * last release, and forbids it to call CUDA; the emulation runs it in the
 * call that releases the last reference, which that contract allows. Live
 * objects are on one list (fab__rt_lock), so that a stale or forged handle
 * is refused rather than followed. */
struct CUuserObject_st {
    void *ptr;
    cudaHostFn_t destroy;
    unsigned refs;
    struct CUuserObject_st *next;
};
static struct CUuserObject_st *fab__rt_user_objects;

/* Caller holds fab__rt_lock. */
static struct CUuserObject_st **fab__rt_user_object_at(cudaUserObject_t object)
{
    for (struct CUuserObject_st **p = &fab__rt_user_objects; *p; p = &(*p)->next) {
        if (*p == object)
            return p;
    }
    return NULL;
}

FAB__RT_API cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
                                 unsigned int initialRefcount, unsigned int flags)
{
    if (!object_out || !destroy || initialRefcount == 0 ||
        flags != (unsigned)cudaUserObjectNoDestructorSync)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    struct CUuserObject_st *o = calloc(1, sizeof *o);
    if (!o)
        FAB__RT_RETURN(cudaErrorMemoryAllocation);
    o->ptr = ptr;
    o->destroy = destroy;
    o->refs = initialRefcount;
    pthread_mutex_lock(&fab__rt_lock);
    o->next = fab__rt_user_objects;
    fab__rt_user_objects = o;
    pthread_mutex_unlock(&fab__rt_lock);
    *object_out = o;
    return cudaSuccess;
}

FAB__RT_API cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    if (count == 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&fab__rt_lock);
    struct CUuserObject_st **at = fab__rt_user_object_at(object);
    if (!at || (*at)->refs > UINT_MAX - count)
        e = cudaErrorInvalidValue;
    else
        (*at)->refs += count;
    pthread_mutex_unlock(&fab__rt_lock);
    FAB__RT_RETURN(e);
}

/* Releasing more references than are held is the caller's bug in CUDA
 * (undefined); here it is refused and changes nothing. */
FAB__RT_API cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    if (count == 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    struct CUuserObject_st *dead = NULL;
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&fab__rt_lock);
    struct CUuserObject_st **at = fab__rt_user_object_at(object);
    if (!at || (*at)->refs < count) {
        e = cudaErrorInvalidValue;
    } else if (((*at)->refs -= count) == 0) {
        dead = *at;
        *at = dead->next;
    }
    pthread_mutex_unlock(&fab__rt_lock);
    if (dead) {
        dead->destroy(dead->ptr);
        free(dead);
    }
    FAB__RT_RETURN(e);
}

/* ---- events ---- */

FAB__RT_API cudaEventCreate(cudaEvent_t *event)
{
    if (!event)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventCreate((CUevent *)event, 0));
}

FAB__RT_API cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventCreate((CUevent *)event, flags));
}

/* Interprocess events: the driver keeps their state in shared memory
 * (src/cuda/ipc.c); the handle bytes are the driver's. */
_Static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle), "IPC handle size");

FAB__RT_API cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    if (!handle)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUipcEventHandle h;
    CUresult r = cuIpcGetEventHandle(&h, (CUevent)event);
    if (r == CUDA_SUCCESS)
        memcpy(handle->reserved, h.reserved, sizeof(h.reserved));
    return fab__rt_cu(r);
}

FAB__RT_API cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    if (!event)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUipcEventHandle h;
    memcpy(h.reserved, handle.reserved, sizeof(h.reserved));
    return fab__rt_cu(cuIpcOpenEventHandle((CUevent *)event, h));
}

FAB__RT_API cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventRecord((CUevent)event, (CUstream)stream));
}

FAB__RT_API cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
FAB__RT_API cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventRecord((CUevent)event, fab__rt_stream(stream, true)));
}

FAB__RT_API cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventRecordWithFlags((CUevent)event, (CUstream)stream, flags));
}

FAB__RT_API cudaEventQuery(cudaEvent_t event)
{
    FAB__RT_ENTER();
    CUresult r = cuEventQuery((CUevent)event);
    if (r == CUDA_ERROR_NOT_READY)
        return cudaErrorNotReady;
    return fab__rt_cu(r);
}

FAB__RT_API cudaEventSynchronize(cudaEvent_t event)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventSynchronize((CUevent)event));
}

FAB__RT_API cudaEventDestroy(cudaEvent_t event)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventDestroy_v2((CUevent)event));
}

FAB__RT_API cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuEventElapsedTime_v2(ms, (CUevent)start, (CUevent)end));
}

/* ---- host work ---- */

FAB__RT_API cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    if (!fn)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuLaunchHostFunc((CUstream)stream, fn, userData));
}

FAB__RT_API cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData);
FAB__RT_API cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    if (!fn)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuLaunchHostFunc(fab__rt_stream(stream, true), fn, userData));
}

typedef struct fab__rt_callback {
    cudaStreamCallback_t fn;
    void *user;
} fab__rt_callback_t;

/* The driver's callback, translated: the status becomes a cudaError_t. */
static void fab__rt_callback_run(CUstream stream, CUresult status, void *arg)
{
    fab__rt_callback_t cb = *(fab__rt_callback_t *)arg;
    free(arg);
    cb.fn((cudaStream_t)stream, fab__rt_from_cu(status), cb.user);
}

FAB__RT_API cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void *userData, unsigned int flags)
{
    if (!callback || flags != 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_callback_t *cb = malloc(sizeof *cb);
    if (!cb)
        FAB__RT_RETURN(cudaErrorMemoryAllocation);
    cb->fn = callback;
    cb->user = userData;
    CUresult r = cuStreamAddCallback((CUstream)stream, fab__rt_callback_run, cb, 0);
    if (r != CUDA_SUCCESS)
        free(cb);
    return fab__rt_cu(r);
}

/* ---- the per-thread-default-stream forms: stream 0 is the thread's ---- */

FAB__RT_API cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags);
FAB__RT_API cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    return cudaStreamGetFlags((cudaStream_t)fab__rt_stream(hStream, true), flags);
}

FAB__RT_API cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority);
FAB__RT_API cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return cudaStreamGetPriority((cudaStream_t)fab__rt_stream(hStream, true), priority);
}

FAB__RT_API cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus *pCaptureStatus);
FAB__RT_API cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return cudaStreamIsCapturing((cudaStream_t)fab__rt_stream(stream, true), pCaptureStatus);
}

FAB__RT_API cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                          enum cudaStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, cudaGraph_t *graph_out,
                                          const cudaGraphNode_t **dependencies_out,
                                          const cudaGraphEdgeData **edgeData_out,
                                          size_t *numDependencies_out);
FAB__RT_API cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                          enum cudaStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, cudaGraph_t *graph_out,
                                          const cudaGraphNode_t **dependencies_out,
                                          const cudaGraphEdgeData **edgeData_out,
                                          size_t *numDependencies_out)
{
    return cudaStreamGetCaptureInfo((cudaStream_t)fab__rt_stream(stream, true), captureStatus_out,
                                    id_out, graph_out, dependencies_out, edgeData_out,
                                    numDependencies_out);
}

FAB__RT_API cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode);
FAB__RT_API cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return cudaStreamBeginCapture(stream, mode);
}

FAB__RT_API cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph);
FAB__RT_API cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return cudaStreamEndCapture(stream, pGraph);
}

FAB__RT_API cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
FAB__RT_API cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudaGraphLaunch(graphExec, stream);
}

FAB__RT_API cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                          unsigned int flags);
FAB__RT_API cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                          unsigned int flags)
{
    return cudaEventRecordWithFlags(event, (cudaStream_t)fab__rt_stream(stream, true), flags);
}

FAB__RT_API cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                       void *userData, unsigned int flags);
FAB__RT_API cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                       void *userData, unsigned int flags)
{
    return cudaStreamAddCallback((cudaStream_t)fab__rt_stream(stream, true), callback, userData,
                                 flags);
}
