/* The part of the CUDA driver ABI that stream-ordered memory pools speak
 * (pool attributes, pool properties, a pool pointer's export data), declared
 * fresh as cuda.h 13.0 defines them; included at the end of cuda_abi.h and
 * written through FAB_CU(name) like it, so that
 * tests/cuda/test_cuda_abi_pool.c can static-assert every value, size and
 * offset against NVIDIA's cuda.h. Nothing here has behaviour. */
#ifndef FAB_CUDA_ABI_POOL_H
#define FAB_CUDA_ABI_POOL_H

#define FAB_CU_MEMPOOL_ATTR_LIST(XX)                          \
    XX(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 1)    \
    XX(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 2)          \
    XX(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 3)  \
    XX(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 4)                  \
    XX(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, 5)               \
    XX(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 6)                  \
    XX(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, 7)                   \
    XX(CU_MEMPOOL_ATTR_USED_MEM_HIGH, 8)
typedef enum FAB_CU(CUmemPool_attribute_enum) {
    FAB_CU_MEMPOOL_ATTR_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemPool_attribute);

#define FAB_CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS 0x2

typedef struct FAB_CU(CUmemPoolProps_st) {
    FAB_CU(CUmemAllocationType) allocType;
    FAB_CU(CUmemAllocationHandleType) handleTypes;
    FAB_CU(CUmemLocation) location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} FAB_CU(CUmemPoolProps);

typedef struct FAB_CU(CUmemPoolPtrExportData_st) {
    unsigned char reserved[64];
} FAB_CU(CUmemPoolPtrExportData);

#endif /* FAB_CUDA_ABI_POOL_H */
