/* Reservations and mappings (vmm.c), as copies and memsets need them: whether
 * an address lies in a reservation, and whether a range is mapped with the
 * access a copy needs. The caller holds fab__cu.lock (for reading suffices). */
#ifndef FAB_CUDA_VMM_H
#define FAB_CUDA_VMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"

/* Whether addr lies inside a range cuMemAddressReserve returned. */
bool fab__cu_reserved(uintptr_t addr);

/* Whether [addr, addr+len) is mapped for device with the access needed.
 * Returns CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (not all mapped, or not in
 * one reservation) or CUDA_ERROR_ILLEGAL_ADDRESS (mapped, access missing). */
CUresult fab__cu_range_check(uintptr_t addr, size_t len, int device, bool write);

/* Pointer attribute attribute of VMM memory at ptr into data (memory.c's
 * cuPointerGetAttribute): CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (not mapped
 * memory, or an attribute it has none of) or CUDA_ERROR_NOT_SUPPORTED. */
CUresult fab__cu_vmm_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

/* The whole cuMemMap mapping that holds addr: true and its base and size,
 * or false when addr is not mapped. */
bool fab__cu_vmm_mapping(uintptr_t addr, uintptr_t *base_out, size_t *size_out);
/* Memory the driver owns rather than the user (a module's globals): a
 * range that copies and memsets accept, read and write, from any device,
 * and that no reserve, map, unmap, access or free call can touch. add takes
 * the write lock's holder's word that [base, base+size) is mapped
 * read-write; CUDA_ERROR_OUT_OF_MEMORY when the record cannot be made.
 * remove forgets the range that starts at base (the caller unmaps it). */
CUresult fab__cu_owned_add(uintptr_t base, size_t size);
void fab__cu_owned_remove(uintptr_t base);

/* The memfd behind [addr, addr+len) of VMM memory
 * (cuMemGetHandleForAddressRange): *fd_out (still the allocation's) and the
 * range's offset in it. CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE when some of
 * it is not mapped; CUDA_ERROR_NOT_SUPPORTED when it is mapped from more
 * than one allocation, or not in the allocation's own order, which one fd
 * cannot show. */
CUresult fab__cu_vmm_backing(uintptr_t addr, size_t len, int *fd_out, size_t *offset_out);

#endif /* FAB_CUDA_VMM_H */
