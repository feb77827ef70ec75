/* The runtime's memory calls: device, host and "managed" allocations,
 * registrations, copies, memsets and pointer attributes, each a thin layer
 * over the driver's call of the same meaning. The runtime keeps no records
 * of its own: the driver's are the truth, so memory allocated through one
 * API is freed through the other.
 *
 * cudaMallocManaged: libcuda has no cuMemAllocManaged, so managed memory is
 * page-locked host memory allocated by cuMemHostAlloc (portable, mapped).
 * Host and every emulated device share one address space, so the pointer
 * works on both sides, which is what managed memory promises; pointer
 * attributes report it as host memory. cudaFree frees it (as CUDA's
 * cudaFree frees managed memory), so the runtime keeps the set of managed
 * allocations, guarded by fab__rt_lock, from cudaMallocManaged to cudaFree. */
#include "src/cudart/runtime.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct fab__rt_managed {
    void *ptr;
    struct fab__rt_managed *next;
} fab__rt_managed_t;
static fab__rt_managed_t *fab__rt_managed;

/* Take ptr out of the managed set; false if it was not there. */
static bool fab__rt_managed_take(void *ptr)
{
    bool found = false;
    pthread_mutex_lock(&fab__rt_lock);
    for (fab__rt_managed_t **p = &fab__rt_managed; *p; p = &(*p)->next) {
        if ((*p)->ptr == ptr) {
            fab__rt_managed_t *m = *p;
            *p = m->next;
            free(m);
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&fab__rt_lock);
    return found;
}

static CUdeviceptr fab__rt_dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

FAB__RT_API cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    /* CUDA answers a zero-byte request with success and a NULL pointer. */
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    FAB__RT_TRY(fab__rt_cu(cuMemAlloc_v2(&d, size)));
    *devPtr = (void *)(uintptr_t)d;
    return cudaSuccess;
}

FAB__RT_API cudaFree(void *devPtr)
{
    FAB__RT_ENTER();
    if (!devPtr)
        return cudaSuccess;
    if (fab__rt_managed_take(devPtr))
        return fab__rt_cu(cuMemFreeHost(devPtr));
    return fab__rt_cu(cuMemFree_v2(fab__rt_dptr(devPtr)));
}

FAB__RT_API cudaMallocHost(void **ptr, size_t size)
{
    if (!ptr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    return fab__rt_cu(cuMemAllocHost_v2(ptr, size));
}

FAB__RT_API cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost || (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                                        cudaHostAllocWriteCombined)))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    if (size == 0) {
        *pHost = NULL;
        return cudaSuccess;
    }
    return fab__rt_cu(cuMemHostAlloc(pHost, size, flags));
}

FAB__RT_API cudaFreeHost(void *ptr)
{
    FAB__RT_ENTER();
    if (!ptr)
        return cudaSuccess;
    return fab__rt_cu(cuMemFreeHost(ptr));
}

FAB__RT_API cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    if (!ptr || size == 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemHostRegister_v2(ptr, size, flags));
}

FAB__RT_API cudaHostUnregister(void *ptr)
{
    if (!ptr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemHostUnregister(ptr));
}

FAB__RT_API cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice || !pHost)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUdeviceptr d = 0;
    FAB__RT_TRY(fab__rt_cu(cuMemHostGetDevicePointer_v2(&d, pHost, flags)));
    *pDevice = (void *)(uintptr_t)d;
    return cudaSuccess;
}

FAB__RT_API cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    if (!pFlags || !pHost)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemHostGetFlags(pFlags, pHost));
}

FAB__RT_API cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    if (!devPtr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    fab__rt_managed_t *m = malloc(sizeof *m);
    if (!m)
        FAB__RT_RETURN(cudaErrorMemoryAllocation);
    CUresult r = cuMemHostAlloc(&m->ptr, size, 0x01 | 0x02 /* portable, mapped */);
    if (r != CUDA_SUCCESS) {
        free(m);
        return fab__rt_cu(r);
    }
    *devPtr = m->ptr;
    pthread_mutex_lock(&fab__rt_lock);
    m->next = fab__rt_managed;
    fab__rt_managed = m;
    pthread_mutex_unlock(&fab__rt_lock);
    return cudaSuccess;
}

FAB__RT_API cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    if (!devPtr || !pitch)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    if (width == 0 || height == 0) {
        *devPtr = NULL;
        *pitch = 0;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    FAB__RT_TRY(fab__rt_cu(cuMemAllocPitch_v2(&d, pitch, width, height, 16)));
    *devPtr = (void *)(uintptr_t)d;
    return cudaSuccess;
}

FAB__RT_API cudaMemGetInfo(size_t *free, size_t *total)
{
    if (!free || !total)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemGetInfo_v2(free, total));
}

/* ---- legacy IPC ----
 * The driver's cuIpc* calls (src/cuda/ipc.c) do the work through the fabric
 * daemon; the runtime's handles are the same 64 bytes. Opening one's own
 * handle is the driver's CUDA_ERROR_INVALID_CONTEXT, which the runtime
 * numbers cudaErrorDeviceUninitialized ("invalid device context"). */

_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle), "IPC handle size");

FAB__RT_API cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    if (!handle)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUipcMemHandle h;
    CUresult r = cuIpcGetMemHandle(&h, (CUdeviceptr)(uintptr_t)devPtr);
    if (r == CUDA_SUCCESS)
        memcpy(handle->reserved, h.reserved, sizeof(h.reserved));
    return fab__rt_cu(r);
}

FAB__RT_API cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    if (!devPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUipcMemHandle h;
    memcpy(h.reserved, handle.reserved, sizeof(h.reserved));
    CUdeviceptr p = 0;
    CUresult r = cuIpcOpenMemHandle_v2(&p, h, flags);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)p;
    return fab__rt_cu(r);
}

FAB__RT_API cudaIpcCloseMemHandle(void *devPtr)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuIpcCloseMemHandle((CUdeviceptr)(uintptr_t)devPtr));
}

/* ---- copies and memsets ---- */

static bool fab__rt_kind_ok(enum cudaMemcpyKind kind)
{
    return (unsigned)kind <= (unsigned)cudaMemcpyDefault;
}

/* Every address is one of the unified space, so every kind is one cuMemcpy:
 * the kind is checked, and the driver finds what each pointer is. A copy on
 * the legacy stream is synchronous (cuMemcpy); the per-thread forms copy on
 * the thread's stream and wait for it. */
static cudaError_t fab__rt_memcpy(void *dst, const void *src, size_t count,
                                  enum cudaMemcpyKind kind, cudaStream_t stream, bool async,
                                  bool per_thread)
{
    if (!fab__rt_kind_ok(kind))
        FAB__RT_RETURN(cudaErrorInvalidMemcpyDirection);
    FAB__RT_ENTER();
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    if (!async && !per_thread)
        return fab__rt_cu(cuMemcpy(fab__rt_dptr(dst), fab__rt_dptr(src), count));
    CUstream s = fab__rt_stream(stream, per_thread);
    FAB__RT_TRY(fab__rt_cu(cuMemcpyAsync(fab__rt_dptr(dst), fab__rt_dptr(src), count, s)));
    if (!async)
        return fab__rt_cu(cuStreamSynchronize(s));
    return cudaSuccess;
}

FAB__RT_API cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return fab__rt_memcpy(dst, src, count, kind, NULL, false, false);
}

FAB__RT_API cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return fab__rt_memcpy(dst, src, count, kind, stream, true, false);
}

FAB__RT_API cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
FAB__RT_API cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return fab__rt_memcpy(dst, src, count, kind, NULL, false, true);
}

FAB__RT_API cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream);
FAB__RT_API cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fab__rt_memcpy(dst, src, count, kind, stream, true, true);
}

/* A source read "during the API call" is copied aside now, on a stream of
 * the batch's own that waits for nothing (a legacy-stream copy would wait
 * for the work of every blocking stream, the batch's included), and the
 * copy from there runs in stream order; the aside buffer is freed by a host
 * function queued after it. */
static void fab__rt_free_host_fn(void *p)
{
    free(p);
}

static CUresult fab__rt_batch_one(void *dst, const void *src, size_t size,
                                  enum cudaMemcpySrcAccessOrder order, CUstream s,
                                  CUstream *now)
{
    if (size == 0)
        return CUDA_SUCCESS;
    if (order != cudaMemcpySrcAccessOrderDuringApiCall)
        return cuMemcpyAsync(fab__rt_dptr(dst), fab__rt_dptr(src), size, s);
    CUresult r = *now ? CUDA_SUCCESS : cuStreamCreate(now, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS)
        return r;
    void *aside = malloc(size);
    if (!aside)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = cuMemcpyAsync(fab__rt_dptr(aside), fab__rt_dptr(src), size, *now);
    if (r == CUDA_SUCCESS)
        r = cuStreamSynchronize(*now);
    if (r == CUDA_SUCCESS)
        r = cuMemcpyAsync(fab__rt_dptr(dst), fab__rt_dptr(aside), size, s);
    if (r == CUDA_SUCCESS)
        r = cuLaunchHostFunc(s, fab__rt_free_host_fn, aside);
    if (r != CUDA_SUCCESS) {
        /* a copy already queued may still read it: wait for the stream */
        (void)cuStreamSynchronize(s);
        free(aside);
    }
    return r;
}

/* The copies run one after another in stream order (CUDA promises no order
 * within a batch, so this is one of the allowed ones). Every argument is
 * checked before the first copy is queued; the legacy stream is refused, as
 * CUDA documents. */
static cudaError_t fab__rt_memcpy_batch(void *const *dsts, const void *const *srcs,
                                        const size_t *sizes, size_t count,
                                        const struct cudaMemcpyAttributes *attrs,
                                        const size_t *attrsIdxs, size_t numAttrs,
                                        cudaStream_t stream, bool per_thread)
{
    if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attrsIdxs || numAttrs == 0 ||
        numAttrs > count || attrsIdxs[0] != 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    if (stream == cudaStreamLegacy || (!stream && !per_thread))
        FAB__RT_RETURN(cudaErrorInvalidValue);
    for (size_t k = 0; k < numAttrs; k++) {
        enum cudaMemcpySrcAccessOrder o = attrs[k].srcAccessOrder;
        if ((k > 0 && attrsIdxs[k] <= attrsIdxs[k - 1]) || attrsIdxs[k] >= count ||
            (o != cudaMemcpySrcAccessOrderStream && o != cudaMemcpySrcAccessOrderDuringApiCall &&
             o != cudaMemcpySrcAccessOrderAny) ||
            (attrs[k].flags & ~(unsigned)cudaMemcpyFlagPreferOverlapWithCompute))
            FAB__RT_RETURN(cudaErrorInvalidValue);
    }
    for (size_t i = 0; i < count; i++) {
        if (sizes[i] > 0 && (!dsts[i] || !srcs[i]))
            FAB__RT_RETURN(cudaErrorInvalidValue);
    }
    FAB__RT_ENTER();
    CUstream s = fab__rt_stream(stream, per_thread), now = NULL;
    CUresult r = CUDA_SUCCESS;
    size_t k = 0;
    for (size_t i = 0; i < count && r == CUDA_SUCCESS; i++) {
        while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i)
            k++;
        r = fab__rt_batch_one(dsts[i], srcs[i], sizes[i], attrs[k].srcAccessOrder, s, &now);
    }
    if (now)
        (void)cuStreamDestroy_v2(now); /* its copies are done: each was waited for */
    return r == CUDA_SUCCESS ? cudaSuccess : fab__rt_cu(r);
}

FAB__RT_API cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes,
                                 size_t count, struct cudaMemcpyAttributes *attrs,
                                 size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
{
    return fab__rt_memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream,
                                false);
}

FAB__RT_API cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                      const size_t *sizes, size_t count,
                                      struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                      size_t numAttrs, cudaStream_t stream);
FAB__RT_API cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                      const size_t *sizes, size_t count,
                                      struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                      size_t numAttrs, cudaStream_t stream)
{
    return fab__rt_memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream,
                                true);
}

static cudaError_t fab__rt_memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                    size_t width, size_t height, enum cudaMemcpyKind kind,
                                    cudaStream_t stream, bool async, bool per_thread)
{
    if (!fab__rt_kind_ok(kind))
        FAB__RT_RETURN(cudaErrorInvalidMemcpyDirection);
    if (width > dpitch || width > spitch)
        FAB__RT_RETURN(cudaErrorInvalidPitchValue);
    FAB__RT_ENTER();
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (!dst || !src)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    CUDA_MEMCPY2D c = {0};
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = fab__rt_dptr(src);
    c.srcPitch = spitch;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = fab__rt_dptr(dst);
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    if (!async && !per_thread)
        return fab__rt_cu(cuMemcpy2D_v2(&c));
    CUstream s = fab__rt_stream(stream, per_thread);
    FAB__RT_TRY(fab__rt_cu(cuMemcpy2DAsync_v2(&c, s)));
    if (!async)
        return fab__rt_cu(cuStreamSynchronize(s));
    return cudaSuccess;
}

FAB__RT_API cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind)
{
    return fab__rt_memcpy2d(dst, dpitch, src, spitch, width, height, kind, NULL, false, false);
}

FAB__RT_API cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream)
{
    return fab__rt_memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, true, false);
}

FAB__RT_API cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind);
FAB__RT_API cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return fab__rt_memcpy2d(dst, dpitch, src, spitch, width, height, kind, NULL, false, true);
}

FAB__RT_API cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream);
FAB__RT_API cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    return fab__rt_memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, true, true);
}

/* Peer copies: one address space, so a peer copy is a plain copy once both
 * devices are checked. */
static cudaError_t fab__rt_peer_check(int dstDevice, int srcDevice)
{
    int count = 0;
    FAB__RT_TRY(fab__rt_cu(cuDeviceGetCount(&count)));
    if (dstDevice < 0 || dstDevice >= count || srcDevice < 0 || srcDevice >= count)
        FAB__RT_RETURN(cudaErrorInvalidDevice);
    return cudaSuccess;
}

FAB__RT_API cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    FAB__RT_ENTER();
    FAB__RT_TRY(fab__rt_peer_check(dstDevice, srcDevice));
    return fab__rt_memcpy(dst, src, count, cudaMemcpyDefault, NULL, false, false);
}

FAB__RT_API cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                size_t count, cudaStream_t stream)
{
    FAB__RT_ENTER();
    FAB__RT_TRY(fab__rt_peer_check(dstDevice, srcDevice));
    return fab__rt_memcpy(dst, src, count, cudaMemcpyDefault, stream, true, false);
}

/* Rows one by one on the stream: libcuda has no 2D memset. */
static cudaError_t fab__rt_memset2d(void *devPtr, size_t pitch, int value, size_t width,
                                    size_t height, cudaStream_t stream, bool async,
                                    bool per_thread)
{
    if (height > 1 && width > pitch)
        FAB__RT_RETURN(cudaErrorInvalidPitchValue);
    FAB__RT_ENTER();
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (!devPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    CUstream s = async || per_thread ? fab__rt_stream(stream, per_thread) : NULL;
    for (size_t row = 0; row < height; row++)
        FAB__RT_TRY(fab__rt_cu(cuMemsetD8Async(fab__rt_dptr((char *)devPtr + row * pitch),
                                               (unsigned char)value, width, s)));
    if (!async)
        return fab__rt_cu(cuStreamSynchronize(s));
    return cudaSuccess;
}

FAB__RT_API cudaMemset(void *devPtr, int value, size_t count)
{
    return fab__rt_memset2d(devPtr, count, value, count, 1, NULL, false, false);
}

FAB__RT_API cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return fab__rt_memset2d(devPtr, count, value, count, 1, stream, true, false);
}

FAB__RT_API cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return fab__rt_memset2d(devPtr, pitch, value, width, height, NULL, false, false);
}

FAB__RT_API cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream)
{
    return fab__rt_memset2d(devPtr, pitch, value, width, height, stream, true, false);
}

FAB__RT_API cudaMemset_ptds(void *devPtr, int value, size_t count);
FAB__RT_API cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return fab__rt_memset2d(devPtr, count, value, count, 1, NULL, false, true);
}

FAB__RT_API cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
FAB__RT_API cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return fab__rt_memset2d(devPtr, count, value, count, 1, stream, true, true);
}

/* ---- pointer attributes ---- */

/* Memory the driver does not know is unregistered host memory: no device
 * (cudaInvalidDeviceId), no device pointer, and the host pointer the
 * pointer itself (CUDA's cudaPointerAttributes notes that it does not check
 * unregistered memory, so hostPointer may be whatever was passed). */
FAB__RT_API cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    if (!attributes)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                   CU_POINTER_ATTRIBUTE_HOST_POINTER};
    unsigned type = 0;
    int ordinal = -2;
    CUdeviceptr dptr = 0;
    void *hptr = NULL;
    void *data[] = {&type, &ordinal, &dptr, &hptr};
    CUresult r = cuPointerGetAttributes(4, which, data, fab__rt_dptr(ptr));
    if (r != CUDA_SUCCESS || type == 0) {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = cudaInvalidDeviceId;
        attributes->devicePointer = NULL;
        attributes->hostPointer = (void *)ptr;
        return r == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE ? cudaSuccess : fab__rt_cu(r);
    }
    attributes->type = type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    attributes->device = ordinal;
    attributes->devicePointer = (void *)(uintptr_t)dptr;
    attributes->hostPointer = hptr;
    return cudaSuccess;
}

FAB__RT_API cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height);
FAB__RT_API cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return fab__rt_memset2d(devPtr, pitch, value, width, height, NULL, false, true);
}

FAB__RT_API cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                   size_t height, cudaStream_t stream);
FAB__RT_API cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                   size_t height, cudaStream_t stream)
{
    return fab__rt_memset2d(devPtr, pitch, value, width, height, stream, true, true);
}
