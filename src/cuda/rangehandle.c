/* Handles for address ranges: cuMemGetHandleForAddressRange, and
 * cuMemMapArrayAsync, which maps memory into sparse arrays and answers
 * CUDA_ERROR_NOT_SUPPORTED because arrays are not emulated. It owns no
 * objects: a handle it gives is a file descriptor that belongs to the caller
 * from then on.
 *
 * A dma-buf handle of a range is a real fd of the range's memory: a
 * duplicate of the memfd of the allocation that holds the range (memory.c's
 * record of a cuMemAlloc or host allocation, or vmm.c's allocation mapped
 * there). mmap of it shows the very bytes the range shows, in this process
 * or another that receives the fd. One fd covers one allocation, from its
 * first byte: the range's bytes start at its offset inside the allocation
 * (0 when the range starts the allocation, as NCCL's and UCX's do), which
 * cuMemGetAddressRange or CU_POINTER_ATTRIBUTE_RANGE_START_ADDR give. A real
 * dma-buf starts at the range itself; a memfd cannot be cut to a window of
 * itself, so this is the one difference (docs/cuda.md). Like a POSIX_FD
 * export, the fd keeps the memory alive until closed. */
#include "src/cuda/state.h"
#include "src/cuda/vmm.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
                                       CUmemRangeHandleType handleType, unsigned long long flags)
{
    FAB__CU_ENTER();
    if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD)
        return CUDA_ERROR_INVALID_VALUE;
    /* The PCIe flag asks for a handle through BAR1: "on a supported platform
     * ... or will return an error otherwise" (cuda.h); the emulated GPUs have
     * no BAR. Any other bit is not a flag. */
    if (flags == CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t addr = (uintptr_t)dptr;
    /* "Must be aligned to host page size" (cuda.h), address and size. */
    if (addr == 0 || size == 0 || addr % page != 0 || size % page != 0 || addr + size < addr)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    int fd = -1;
    size_t offset = 0;
    CUresult r = fab__cu_mem_backing(addr, size, &fd, &offset);
    if (r == CUDA_ERROR_NOT_FOUND)
        r = fab__cu_vmm_backing(addr, size, &fd, &offset);
    int dup = -1;
    if (r == CUDA_SUCCESS) {
        /* Under the lock: the allocation cannot close its fd meanwhile. */
        dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dup < 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS)
        *(int *)handle = dup;
    return r;
}

/* Sparse and mipmapped arrays are not emulated (no cuArrayCreate makes one),
 * so there is never an array to map into. */
CUresult cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream)
{
    FAB__CU_ENTER();
    (void)hStream;
    if (!mapInfoList || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
                                 CUstream hStream)
{
    return cuMemMapArrayAsync(mapInfoList, count, hStream);
}
