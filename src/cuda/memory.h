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

/* The memfd behind [addr, addr+len) when that lies in one cuMemAlloc or host
 * allocation (cuMemGetHandleForAddressRange): *fd_out (still the record's)
 * and the range's offset in it. CUDA_SUCCESS; CUDA_ERROR_NOT_FOUND when
 * addr is in no record (the caller asks vmm next); CUDA_ERROR_INVALID_VALUE
 * for a range past the allocation or a registration, which has no memfd. */
CUresult fab__cu_mem_backing(uintptr_t addr, size_t len, int *fd_out, size_t *offset_out);

#endif /* FAB_CUDA_MEMORY_H */
