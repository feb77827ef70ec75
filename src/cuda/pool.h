/* Stream-ordered memory pools (pool.c), as memory.c needs them: pool
 * allocations are device memory that copies, memsets, stream memory
 * operations and pointer attributes must know, and that cuMemFree may free.
 * Each query returns CUDA_ERROR_NOT_FOUND (or false) for an address that is
 * no pool allocation, so that memory.c falls through to its other kinds. The
 * caller holds fab__cu.lock (for reading suffices), except for
 * fab__cu_pool_free, which takes it. */
#ifndef FAB_CUDA_POOL_H
#define FAB_CUDA_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"

/* Whether [addr, addr+len) lies in one pool allocation (made here, or a
 * pointer imported from another process) and device has the access the
 * copy needs: CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE (runs past the end);
 * CUDA_ERROR_ILLEGAL_ADDRESS (the pool grants device no such access);
 * CUDA_ERROR_NOT_FOUND (not pool memory). */
CUresult fab__cu_pool_check(uintptr_t addr, size_t len, int device, bool write);

/* The pool allocation holding addr: true and its start and size. */
bool fab__cu_pool_range(uintptr_t addr, uintptr_t *base_out, size_t *size_out);

/* Pointer attribute of the pool allocation holding ptr into data:
 * CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (an attribute pool memory has none
 * of), CUDA_ERROR_NOT_SUPPORTED, or CUDA_ERROR_NOT_FOUND (not pool memory). */
CUresult fab__cu_pool_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

/* cuMemFree of pool memory: the allocation that starts at addr goes back to
 * its pool at once (the driver documents no synchronization for it).
 * CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (already being freed) or
 * CUDA_ERROR_NOT_FOUND (no pool allocation starts there). Takes
 * fab__cu.lock: the caller must not hold it. */
CUresult fab__cu_pool_free(uintptr_t addr);

#endif /* FAB_CUDA_POOL_H */
