/* The runtime's stream-ordered allocator and its pools: cudaMallocAsync,
 * cudaFreeAsync, cudaMallocFromPoolAsync, the device's pools and every
 * cudaMemPool* call, including pool and pointer sharing between processes.
 * Each is the driver's call of the same meaning (src/cuda/pool.c): the
 * runtime's structures have the driver's layouts (asserted below), its
 * pool handle is the driver's CUmemoryPool, and its streams are the
 * driver's, so nothing here keeps state. The _ptsz names read a NULL
 * stream as the thread's per-thread default stream. */
#include "src/cudart/runtime.h"

#include <stddef.h>
#include <stdint.h>

_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(CUmemPoolProps) &&
                   offsetof(struct cudaMemPoolProps, maxSize) ==
                       offsetof(CUmemPoolProps, maxSize) &&
                   offsetof(struct cudaMemPoolProps, usage) == offsetof(CUmemPoolProps, usage),
               "pool properties have the driver's layout");
_Static_assert(sizeof(struct cudaMemAccessDesc) == sizeof(CUmemAccessDesc) &&
                   offsetof(struct cudaMemAccessDesc, flags) == offsetof(CUmemAccessDesc, flags),
               "access descriptors have the driver's layout");
_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation), "locations");
_Static_assert(sizeof(struct cudaMemPoolPtrExportData) == sizeof(CUmemPoolPtrExportData),
               "pointer export data");

static cudaError_t fab__rt_malloc_async(void **devPtr, size_t size, cudaMemPool_t pool,
                                        cudaStream_t stream, bool per_thread)
{
    if (!devPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUstream s = fab__rt_stream(stream, per_thread);
    CUdeviceptr p = 0;
    CUresult r;
    if (pool)
        r = per_thread ? cuMemAllocFromPoolAsync_ptsz(&p, size, pool, s)
                       : cuMemAllocFromPoolAsync(&p, size, pool, s);
    else
        r = per_thread ? cuMemAllocAsync_ptsz(&p, size, s) : cuMemAllocAsync(&p, size, s);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)p;
    return fab__rt_cu(r);
}

static cudaError_t fab__rt_free_async(void *devPtr, cudaStream_t stream, bool per_thread)
{
    FAB__RT_ENTER();
    CUstream s = fab__rt_stream(stream, per_thread);
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)devPtr;
    return fab__rt_cu(per_thread ? cuMemFreeAsync_ptsz(p, s) : cuMemFreeAsync(p, s));
}

FAB__RT_API cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return fab__rt_malloc_async(devPtr, size, NULL, hStream, false);
}

FAB__RT_API cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
FAB__RT_API cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    return fab__rt_malloc_async(devPtr, size, NULL, hStream, true);
}

FAB__RT_API cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream)
{
    if (!memPool)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_malloc_async(ptr, size, memPool, stream, false);
}

FAB__RT_API cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                         cudaStream_t stream);
FAB__RT_API cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                         cudaStream_t stream)
{
    if (!memPool)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_malloc_async(ptr, size, memPool, stream, true);
}

FAB__RT_API cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return fab__rt_free_async(devPtr, hStream, false);
}

FAB__RT_API cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
FAB__RT_API cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return fab__rt_free_async(devPtr, hStream, true);
}

/* ---- the device's pools ---- */

FAB__RT_API cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    FAB__RT_TRY(fab__rt_init());
    return fab__rt_cu(cuDeviceGetDefaultMemPool((CUmemoryPool *)memPool, device));
}

FAB__RT_API cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    FAB__RT_TRY(fab__rt_init());
    return fab__rt_cu(cuDeviceGetMemPool((CUmemoryPool *)memPool, device));
}

FAB__RT_API cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    FAB__RT_TRY(fab__rt_init());
    return fab__rt_cu(cuDeviceSetMemPool(device, memPool));
}

/* ---- pools ---- */

FAB__RT_API cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolCreate((CUmemoryPool *)memPool, (const CUmemPoolProps *)poolProps));
}

FAB__RT_API cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolDestroy(memPool));
}

FAB__RT_API cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolTrimTo(memPool, minBytesToKeep));
}

FAB__RT_API cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolSetAttribute(memPool, (CUmemPool_attribute)attr, value));
}

FAB__RT_API cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolGetAttribute(memPool, (CUmemPool_attribute)attr, value));
}

FAB__RT_API cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList,
                                 size_t count)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolSetAccess(memPool, (const CUmemAccessDesc *)descList, count));
}

FAB__RT_API cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                 struct cudaMemLocation *location)
{
    FAB__RT_ENTER();
    return fab__rt_cu(
        cuMemPoolGetAccess((CUmemAccess_flags *)flags, memPool, (CUmemLocation *)location));
}

/* ---- sharing ---- */

FAB__RT_API cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                               enum cudaMemAllocationHandleType handleType,
                                               unsigned int flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolExportToShareableHandle(
        shareableHandle, memPool, (CUmemAllocationHandleType)handleType, flags));
}

FAB__RT_API cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                 enum cudaMemAllocationHandleType handleType,
                                                 unsigned int flags)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolImportFromShareableHandle(
        (CUmemoryPool *)memPool, shareableHandle, (CUmemAllocationHandleType)handleType, flags));
}

FAB__RT_API cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *exportData, void *ptr)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuMemPoolExportPointer((CUmemPoolPtrExportData *)exportData,
                                             (CUdeviceptr)(uintptr_t)ptr));
}

FAB__RT_API cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool,
                                     struct cudaMemPoolPtrExportData *exportData)
{
    if (!ptr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    CUdeviceptr p = 0;
    CUresult r = cuMemPoolImportPointer(&p, memPool, (CUmemPoolPtrExportData *)exportData);
    if (r == CUDA_SUCCESS)
        *ptr = (void *)(uintptr_t)p;
    return fab__rt_cu(r);
}
