/* Functions' attributes and the occupancy calculator: cuFuncGetAttribute /
 * SetAttribute / SetCacheConfig, cuKernelGetAttribute / SetAttribute /
 * SetCacheConfig, and cuOccupancy*. A kernel the PTX engine runs answers
 * its own sizes and limits; the function objects and their lookups are
 * module.c's. Lookups take fab__cu.lock for reading, settings for writing. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/module.h"
#include "src/cuda/entry.h"

#include <limits.h>
#include <stddef.h>

/* ---- attributes ------------------------------------------------------------------- */

static int fab__cu_device_attr(CUdevice_attribute attrib, int dev)
{
    int v = 0;
    (void)FAB__CU_INNER(cuDeviceGetAttribute(&v, attrib, dev));
    return v;
}

/* The attribute's value for fn on device dev. A kernel the PTX engine runs
 * answers its own sizes and limits (what the decoder found); any other
 * (a plugin's, a cubin's) static sizes of zero and a plausible 32
 * registers: no code was compiled. */
static CUresult fab__cu_function_attribute(const fab__cu_function_t *fn, CUfunction_attribute a,
                                           int dev, int *pi)
{
    fab__ptx_kernel_info_t k = {.max_threads = 1024, .nregs = 32};
    if (fn->ptx)
        fab__ptx_kernel_info(fn->ptx, &k);
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: {
        int most = fab__cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
        *pi = k.max_threads > 0 && (int)k.max_threads < most ? (int)k.max_threads : most;
        return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = (int)k.static_shared; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = (int)k.local_bytes; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: {
        size_t c = fab__cu_function_const_bytes(fn);
        *pi = c < INT_MAX ? (int)c : INT_MAX;
        return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = 0; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = (int)k.nregs; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        *pi = fab__cu.devices[dev].compute_major * 10 + fab__cu.devices[dev].compute_minor;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = fn->max_dynamic_shared; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = fn->carveout; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *pi = fn->cluster[0]; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *pi = fn->cluster[1]; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = fn->cluster[2]; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = fn->non_portable_cluster; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = fn->cluster_policy; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

/* Set a settable attribute (the caller holds the lock for writing). */
static CUresult fab__cu_function_set(fab__cu_function_t *fn, CUfunction_attribute a, int value,
                                     int dev)
{
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > fab__cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
            return CUDA_ERROR_INVALID_VALUE;
        fn->max_dynamic_shared = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100)
            return CUDA_ERROR_INVALID_VALUE;
        fn->carveout = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
        if (value < 0 || value > 16)
            return CUDA_ERROR_INVALID_VALUE;
        fn->cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        if (value != 0 && value != 1)
            return CUDA_ERROR_INVALID_VALUE;
        fn->non_portable_cluster = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        if (value < 0 || value > 2)
            return CUDA_ERROR_INVALID_VALUE;
        fn->cluster_policy = value;
        return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE; /* read-only, or not an attribute */
    }
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    FAB__CU_ENTER();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = 0;
    (void)fab__cu_current_device(&dev);
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_function_t *fn = fab__cu_function_find(hfunc);
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    if (fn) {
        int fdev = fab__cu_function_device(fn);
        r = fab__cu_function_attribute(fn, attrib, fdev >= 0 ? fdev : dev, pi);
    }
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    FAB__CU_ENTER();
    int dev = 0;
    (void)fab__cu_current_device(&dev);
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_function_t *fn = fab__cu_function_find(hfunc);
    CUresult r = fn ? fab__cu_function_set(fn, attrib, value, dev) : CUDA_ERROR_INVALID_HANDLE;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    FAB__CU_ENTER();
    if ((unsigned)config > (unsigned)CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_function_t *fn = fab__cu_function_find(hfunc);
    if (fn)
        fn->cache = config; /* a preference; a CPU has nothing to split */
    fab__rw_unlock(&fab__cu.lock);
    return fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_function_t *fn = fab__cu_kernel_find(kernel);
    CUresult r = fn ? fab__cu_function_attribute(fn, attrib, dev, pi) : CUDA_ERROR_INVALID_HANDLE;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_function_t *fn = fab__cu_kernel_find(kernel);
    CUresult r = fn ? fab__cu_function_set(fn, attrib, val, dev) : CUDA_ERROR_INVALID_HANDLE;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* cuKernelSetCacheConfig: cuFuncSetCacheConfig for a library's
 * kernel. A preference kept; a CPU has no L1 to split from shared memory. */
CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if ((unsigned)config > (unsigned)CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_function_t *fn = fab__cu_function_find((CUfunction)kernel);
    if (fn && fab__cu_function_device(fn) != -1)
        fn = NULL; /* a module's function is not a CUkernel */
    if (fn)
        fn->cache = config;
    fab__rw_unlock(&fab__cu.lock);
    return fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- occupancy ---------------------------------------------------------------------- */

/* A multiprocessor as deviceinfo.c describes every device: 2048 threads, 32
 * blocks, 64K registers at 32 per thread, 228 KiB of shared memory with 1 KiB
 * reserved per block. The fewest blocks any of them allows is the answer. */
int fab__cu_occupancy(int block_size, size_t dynamic_shared)
{
    if (block_size <= 0 || block_size > 1024)
        return 0;
    int warps = (block_size + 31) / 32;
    int blocks = 32;
    if (64 / warps < blocks)
        blocks = 64 / warps; /* threads (2048 = 64 warps), and registers alike */
    size_t per_block = dynamic_shared + 1024;
    size_t by_shared = (size_t)233472 / per_block;
    if (by_shared < (size_t)blocks)
        blocks = (int)by_shared;
    return blocks;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                              int blockSize, size_t dynamicSMemSize,
                                                              unsigned int flags)
{
    FAB__CU_ENTER();
    if (!numBlocks || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_function_t *fn = fab__cu_function_find(func);
    fab__rw_unlock(&fab__cu.lock);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    *numBlocks = fab__cu_occupancy(blockSize, dynamicSMemSize);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    FAB__CU_FAULT();
    return FAB__CU_INNER(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, func, blockSize, dynamicSMemSize, 0));
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                          size_t dynamicSMemSize, int blockSizeLimit)
{
    FAB__CU_ENTER();
    if (!minGridSize || !blockSize || blockSizeLimit < 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = 0;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_function_t *fn = fab__cu_function_find(func);
    fab__rw_unlock(&fab__cu.lock);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    int limit = blockSizeLimit == 0 || blockSizeLimit > 1024 ? 1024 : blockSizeLimit;
    int best_size = 0, best_blocks = 0, best_threads = 0;
    /* Warp multiples from the largest down: the first size that keeps the
     * most threads resident wins, as the driver's calculator prefers. */
    int first = limit >= 32 ? limit / 32 * 32 : limit;
    for (int size = first; size > 0; size = size > 32 ? size - 32 : 0) {
        size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
        int blocks = fab__cu_occupancy(size, smem);
        if (blocks * size > best_threads) {
            best_threads = blocks * size;
            best_blocks = blocks;
            best_size = size;
        }
        if (size < 32)
            break;
    }
    *blockSize = best_size;
    *minGridSize = best_blocks * fab__cu.devices[dev].sm_count;
    return CUDA_SUCCESS;
}
