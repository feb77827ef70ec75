/* Memory the driver allocates or registers outside the VMM API (memory.c):
 * cuMemAlloc, cuMemAllocPitch, cuMemAllocHost, cuMemHostAlloc and
 * cuMemHostRegister, as copies, memsets and stream memory operations need to
 * know it. The caller holds fab__cu.lock (for reading suffices). */
#ifndef FAB_CUDA_MEMORY_H
#define FAB_CUDA_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"

/* What an address is to the driver. */
typedef enum {
    FAB__CU_WHERE_PAGEABLE, /* host memory the driver knows nothing of */
    FAB__CU_WHERE_PINNED,   /* cuMemAllocHost / cuMemHostAlloc / cuMemHostRegister */
    FAB__CU_WHERE_DEVICE,   /* cuMemAlloc, or inside a VMM reservation */
} fab__cu_where_t;

fab__cu_where_t fab__cu_mem_where(uintptr_t addr);

/* Whether [addr, addr+len) lies in one piece of memory the driver knows
 * (one cuMemAlloc or host allocation, one registration, or a VMM range
 * mapped with the access needed for device) and may be written when write
 * is set. CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE (unknown memory, running
 * past its end, or a write to read-only registered memory);
 * CUDA_ERROR_ILLEGAL_ADDRESS (VMM memory mapped without the access). */
CUresult fab__cu_mem_check(uintptr_t addr, size_t len, int device, bool write);

/* ---- legacy CUDA IPC (ipc.c) --------------------------------------------------
 * These take fab__cu.lock themselves: the caller holds no lock. */

/* The cuMemAlloc allocation that holds addr, for cuIpcGetMemHandle:
 * its memfd's size (whole pages) and device, its buffer id, and either its
 * cached handle (*cached set, handle filled, *fd_out -1) or a new
 * descriptor of its memfd for publishing (the caller closes it).
 * An address inside the allocation names it as its base does (the driver
 * answers the base's handle; *base_out is the base).
 * CUDA_ERROR_INVALID_VALUE for any other address (host memory, VMM memory,
 * a mapping opened from another process). */
CUresult fab__cu_mem_ipc_source(uintptr_t addr, uintptr_t *base_out, int *fd_out, size_t *size_out,
                                int *device_out, uint64_t *id_out, bool *cached,
                                unsigned char handle[64]);

/* Cache handle in the allocation at addr whose buffer id is id. Returns
 * false when it is gone (freed meanwhile) or already has one (copied into
 * handle): the caller then withdraws what it published. */
bool fab__cu_mem_ipc_cache(uintptr_t addr, uint64_t id, unsigned char handle[64]);

/* Map a memfd another process published (size bytes, whole pages) at a
 * fresh address, as device memory of the current context: copies, memsets
 * and pointer attributes know it as they know cuMemAlloc memory, but
 * cuMemFree refuses it. Takes fd on success. */
CUresult fab__cu_mem_ipc_map(int fd, size_t size, CUdeviceptr *out);

/* Unmap what fab__cu_mem_ipc_map mapped at addr. CUDA_ERROR_INVALID_VALUE
 * for any other address. */
CUresult fab__cu_mem_ipc_unmap(uintptr_t addr);
/* The memfd behind [addr, addr+len) when that lies in one cuMemAlloc or host
 * allocation (cuMemGetHandleForAddressRange): *fd_out (still the record's)
 * and the range's offset in it. CUDA_SUCCESS; CUDA_ERROR_NOT_FOUND when
 * addr is in no record (the caller asks vmm next); CUDA_ERROR_INVALID_VALUE
 * for a range past the allocation or a registration, which has no memfd. */
CUresult fab__cu_mem_backing(uintptr_t addr, size_t len, int *fd_out, size_t *offset_out);

/* cuMemFree, cuMemFreeHost, cuModuleUnload and cuLibraryUnload synchronise,
 * as the driver's do: the work queued before the call in the calling
 * thread's context (a kernel or a copy that still uses the memory or the
 * code) completes before it goes. An error of that work stays the
 * context's, for its next synchronisation; with no current context there is
 * nothing to wait for. */
void fab__cu_free_waits(void);

#endif /* FAB_CUDA_MEMORY_H */
