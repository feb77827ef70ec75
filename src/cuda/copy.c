/* Copies and memsets. Device memory is host memory, so a copy is a memcpy,
 * done at once (there is nothing for a stream to overlap with); the Async forms
 * check their stream and do the same. What the driver checks, this checks
 * first: a current context, and that each device range lies in one
 * reservation, is wholly mapped, and has the access the copy needs for the
 * context's device (vmm.c, fab__cu_range_check). The state stays read-locked
 * while the bytes move, so no other thread can unmap them under the copy.
 *
 * cuMemcpy and cuMemcpyAsync infer direction from the pointers, as unified
 * addressing does: an address inside a reservation is device memory, any
 * other is host memory. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/vmm.h"
#include "src/cuda/entry.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Per-thread-default-stream names (CUDA_API_PER_THREAD_DEFAULT_STREAM): with
 * every copy synchronous, the per-thread stream behaves as the legacy one. */
#define FAB__CU_ALIAS(name, target, ...) \
    FAB__CU_EXPORT CUresult name(__VA_ARGS__) __attribute__((alias(#target)))

typedef enum { FAB__CU_HOST, FAB__CU_DEVICE, FAB__CU_INFER } fab__cu_side_t;

static CUresult fab__cu_side_check(uintptr_t addr, size_t len, fab__cu_side_t side, int device,
                                   bool write)
{
    if (side == FAB__CU_HOST)
        return CUDA_SUCCESS;
    if (side == FAB__CU_INFER && !fab__cu_reserved(addr))
        return CUDA_SUCCESS;
    return fab__cu_range_check(addr, len, device, write);
}

static CUresult fab__cu_copy(uintptr_t dst, fab__cu_side_t dst_side, uintptr_t src,
                             fab__cu_side_t src_side, size_t len, CUstream stream, bool async)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    if (len > 0 && (!dst || !src))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_rdlock(&fab__cu.lock);
    if (async)
        r = fab__cu_stream_check(stream);
    if (r == CUDA_SUCCESS)
        r = fab__cu_side_check(dst, len, dst_side, dev, true);
    if (r == CUDA_SUCCESS)
        r = fab__cu_side_check(src, len, src_side, dev, false);
    if (r == CUDA_SUCCESS && len > 0)
        memmove((void *)dst, (const void *)src, len);
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

static CUresult fab__cu_set(uintptr_t dst, const void *value, size_t width, size_t n,
                            CUstream stream, bool async)
{
    FAB__CU_ENTER();
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    if (dst % width != 0 || n > SIZE_MAX / width)
        return CUDA_ERROR_INVALID_VALUE;
    size_t len = n * width;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_rdlock(&fab__cu.lock);
    if (async)
        r = fab__cu_stream_check(stream);
    if (r == CUDA_SUCCESS)
        r = fab__cu_range_check(dst, len, dev, true);
    if (r == CUDA_SUCCESS) {
        if (width == 1) {
            memset((void *)dst, *(const unsigned char *)value, len);
        } else {
            unsigned char *p = (unsigned char *)dst;
            for (size_t i = 0; i < n; i++)
                memcpy(p + i * width, value, width);
        }
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

/* ---- copies ------------------------------------------------------------------ */

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    return fab__cu_copy(dst, FAB__CU_INFER, src, FAB__CU_INFER, ByteCount, NULL, false);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    return fab__cu_copy(dst, FAB__CU_INFER, src, FAB__CU_INFER, ByteCount, hStream, true);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return fab__cu_copy(dstDevice, FAB__CU_DEVICE, (uintptr_t)srcHost, FAB__CU_HOST, ByteCount,
                        NULL, false);
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return fab__cu_copy((uintptr_t)dstHost, FAB__CU_HOST, srcDevice, FAB__CU_DEVICE, ByteCount,
                        NULL, false);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    return fab__cu_copy(dstDevice, FAB__CU_DEVICE, srcDevice, FAB__CU_DEVICE, ByteCount, NULL,
                        false);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                              CUstream hStream)
{
    return fab__cu_copy(dstDevice, FAB__CU_DEVICE, (uintptr_t)srcHost, FAB__CU_HOST, ByteCount,
                        hStream, true);
}

CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream)
{
    return fab__cu_copy((uintptr_t)dstHost, FAB__CU_HOST, srcDevice, FAB__CU_DEVICE, ByteCount,
                        hStream, true);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream)
{
    return fab__cu_copy(dstDevice, FAB__CU_DEVICE, srcDevice, FAB__CU_DEVICE, ByteCount, hStream,
                        true);
}

/* The CUDA 3.1 ABI (32-bit device pointers and counts), under the plain names
 * the driver still exports. */
CUresult cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}

CUresult cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                           CUstream hStream)
{
    return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, hStream);
}

CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                           CUstream hStream)
{
    return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, hStream);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,
                           unsigned int ByteCount, CUstream hStream)
{
    return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
}

/* ---- memsets ------------------------------------------------------------------- */

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return fab__cu_set(dstDevice, &uc, 1, N, NULL, false);
}

CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return fab__cu_set(dstDevice, &ui, 4, N, NULL, false);
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return fab__cu_set(dstDevice, &uc, 1, N, hStream, true);
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    return fab__cu_set(dstDevice, &ui, 4, N, hStream, true);
}

CUresult cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
    return cuMemsetD8_v2(dstDevice, uc, N);
}

CUresult cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
{
    return cuMemsetD32_v2(dstDevice, ui, N);
}

FAB__CU_ALIAS(cuMemcpy_ptds, cuMemcpy, CUdeviceptr, CUdeviceptr, size_t);
FAB__CU_ALIAS(cuMemcpyAsync_ptsz, cuMemcpyAsync, CUdeviceptr, CUdeviceptr, size_t, CUstream);
FAB__CU_ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t);
FAB__CU_ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
FAB__CU_ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, size_t);
FAB__CU_ALIAS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t,
              CUstream);
FAB__CU_ALIAS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t,
              CUstream);
FAB__CU_ALIAS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, size_t,
              CUstream);
FAB__CU_ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t);
FAB__CU_ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2, CUdeviceptr, unsigned int, size_t);
FAB__CU_ALIAS(cuMemsetD8Async_ptsz, cuMemsetD8Async, CUdeviceptr, unsigned char, size_t, CUstream);
FAB__CU_ALIAS(cuMemsetD32Async_ptsz, cuMemsetD32Async, CUdeviceptr, unsigned int, size_t,
              CUstream);
