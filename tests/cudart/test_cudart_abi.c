/* The runtime's own header (src/cudart/include/cuda_runtime_api.h, written
 * without NVIDIA's) against NVIDIA's cuda_runtime_api.h: every error code,
 * enumerator, flag, size and field offset the runtime relies on is
 * static-asserted equal, so a mismatch fails the build. Built only where
 * NVIDIA's headers are installed; the project's names are included with an
 * abi_ prefix (FAB_RT) so that the two headers meet in one file. */
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#define FAB_RT(name) abi_##name
#define FAB_RT_ABI_ONLY
#include "src/cudart/include/cuda_runtime_api.h"

#include "fabtest.h"

#define SAME_ERROR(name, value, text)                                              \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs");     \
    _Static_assert((long long)name == (long long)(value), #name " value");
#define SAME_VALUE(name, value)                                                    \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs");     \
    _Static_assert((long long)name == (long long)(value), #name " value");
#define SAME_FLAG(name, value) _Static_assert((long long)(name) == (long long)(value), #name);

FAB_RT_ERROR_LIST(SAME_ERROR)
FAB_RT_MEMCPY_KIND_LIST(SAME_VALUE)
FAB_RT_MEMORY_TYPE_LIST(SAME_VALUE)
FAB_RT_CAPTURE_STATUS_LIST(SAME_VALUE)
FAB_RT_CAPTURE_MODE_LIST(SAME_VALUE)
FAB_RT_ENTRY_POINT_RESULT_LIST(SAME_VALUE)
FAB_RT_DEVICE_ATTR_LIST(SAME_VALUE)
FAB_RT_FUNC_ATTRIBUTE_LIST(SAME_VALUE)
FAB_RT_MEM_POOL_ATTR_LIST(SAME_VALUE)
FAB_RT_MEM_LOCATION_TYPE_LIST(SAME_VALUE)
FAB_RT_MEM_ACCESS_FLAGS_LIST(SAME_VALUE)
FAB_RT_MEM_ALLOCATION_TYPE_LIST(SAME_VALUE)
FAB_RT_MEM_HANDLE_TYPE_LIST(SAME_VALUE)
FAB_RT_FLAG_LIST(SAME_FLAG)
FAB_RT_LIMIT_LIST(SAME_VALUE)
FAB_RT_P2P_ATTR_LIST(SAME_VALUE)
FAB_RT_USER_OBJECT_FLAGS_LIST(SAME_VALUE)
FAB_RT_USER_OBJECT_RETAIN_FLAGS_LIST(SAME_VALUE)
FAB_RT_CAPTURE_DEPENDENCIES_LIST(SAME_VALUE)
FAB_RT_SRC_ACCESS_ORDER_LIST(SAME_VALUE)
FAB_RT_MEMCPY_FLAGS_LIST(SAME_VALUE)

/* Every error NVIDIA's header declares is in the list: the last one and
 * the count of distinct codes below it agree. */
#define COUNT_ERROR(name, value, text) +1
_Static_assert(0 FAB_RT_ERROR_LIST(COUNT_ERROR) == 133, "cudaError_t has 133 codes in 13.0");

/* The structs, under typedef names so that abi_ can prefix them. */
typedef struct cudaDeviceProp DeviceProp;
typedef struct abi_cudaDeviceProp abi_DeviceProp;
typedef struct cudaPointerAttributes PointerAttributes;
typedef struct abi_cudaPointerAttributes abi_PointerAttributes;
typedef struct cudaFuncAttributes FuncAttributes;
typedef struct abi_cudaFuncAttributes abi_FuncAttributes;

#define SAME_TYPE(t) _Static_assert(sizeof(t) == sizeof(abi_##t) && \
                                    _Alignof(t) == _Alignof(abi_##t), #t " size/alignment")
#define SAME_FIELD(t, f) _Static_assert(offsetof(t, f) == offsetof(abi_##t, f) && \
                                        sizeof(((t *)0)->f) == sizeof(((abi_##t *)0)->f), \
                                        #t "." #f " offset/size")

SAME_TYPE(cudaError_t);
SAME_TYPE(cudaStream_t);
SAME_TYPE(cudaEvent_t);
SAME_TYPE(cudaKernel_t);
SAME_TYPE(dim3);
SAME_FIELD(dim3, x);
SAME_FIELD(dim3, z);
SAME_TYPE(cudaUUID_t);
SAME_TYPE(cudaIpcMemHandle_t);
typedef struct cudaMemPoolProps PoolProps;
typedef struct abi_cudaMemPoolProps abi_PoolProps;
typedef struct cudaMemAccessDesc AccessDesc;
typedef struct abi_cudaMemAccessDesc abi_AccessDesc;
typedef struct cudaMemPoolPtrExportData PtrExport;
typedef struct abi_cudaMemPoolPtrExportData abi_PtrExport;
SAME_TYPE(cudaMemPool_t);
SAME_TYPE(cudaUserObject_t);
typedef struct cudaMemcpyAttributes MemcpyAttributes;
typedef struct abi_cudaMemcpyAttributes abi_MemcpyAttributes;
SAME_TYPE(MemcpyAttributes);
SAME_FIELD(MemcpyAttributes, srcAccessOrder);
SAME_FIELD(MemcpyAttributes, srcLocHint);
SAME_FIELD(MemcpyAttributes, dstLocHint);
SAME_FIELD(MemcpyAttributes, flags);
SAME_TYPE(PoolProps);
SAME_FIELD(PoolProps, handleTypes);
SAME_FIELD(PoolProps, location);
SAME_FIELD(PoolProps, maxSize);
SAME_FIELD(PoolProps, usage);
SAME_FIELD(PoolProps, reserved);
SAME_TYPE(AccessDesc);
SAME_FIELD(AccessDesc, flags);
SAME_TYPE(PtrExport);
SAME_TYPE(cudaIpcEventHandle_t);
_Static_assert(CUDA_IPC_HANDLE_SIZE == FAB_RT_IPC_HANDLE_SIZE, "IPC handle size");
SAME_TYPE(DeviceProp);
SAME_FIELD(DeviceProp, name);
SAME_FIELD(DeviceProp, uuid);
SAME_FIELD(DeviceProp, totalGlobalMem);
SAME_FIELD(DeviceProp, warpSize);
SAME_FIELD(DeviceProp, maxGridSize);
SAME_FIELD(DeviceProp, major);
SAME_FIELD(DeviceProp, multiProcessorCount);
SAME_FIELD(DeviceProp, maxSurfaceCubemapLayered);
SAME_FIELD(DeviceProp, surfaceAlignment);
SAME_FIELD(DeviceProp, pciBusID);
SAME_FIELD(DeviceProp, pciDomainID);
SAME_FIELD(DeviceProp, sharedMemPerMultiprocessor);
SAME_FIELD(DeviceProp, cooperativeLaunch);
SAME_FIELD(DeviceProp, sharedMemPerBlockOptin);
SAME_FIELD(DeviceProp, reservedSharedMemPerBlock);
SAME_FIELD(DeviceProp, memoryPoolsSupported);
SAME_FIELD(DeviceProp, gpuDirectRDMASupported);
SAME_FIELD(DeviceProp, memoryPoolSupportedHandleTypes);
SAME_FIELD(DeviceProp, hostNumaMultinodeIpcSupported);
SAME_FIELD(DeviceProp, reserved);
SAME_TYPE(PointerAttributes);
SAME_FIELD(PointerAttributes, type);
SAME_FIELD(PointerAttributes, device);
SAME_FIELD(PointerAttributes, devicePointer);
SAME_FIELD(PointerAttributes, hostPointer);
SAME_TYPE(FuncAttributes);
SAME_FIELD(FuncAttributes, maxThreadsPerBlock);
SAME_FIELD(FuncAttributes, maxDynamicSharedSizeBytes);
SAME_FIELD(FuncAttributes, nonPortableClusterSizeAllowed);
SAME_FIELD(FuncAttributes, reserved);
SAME_TYPE(cudaLaunchConfig_t);
SAME_FIELD(cudaLaunchConfig_t, gridDim);
SAME_FIELD(cudaLaunchConfig_t, blockDim);
SAME_FIELD(cudaLaunchConfig_t, dynamicSmemBytes);
SAME_FIELD(cudaLaunchConfig_t, stream);
SAME_FIELD(cudaLaunchConfig_t, attrs);
SAME_FIELD(cudaLaunchConfig_t, numAttrs);
SAME_TYPE(cudaGraphEdgeData);

/* The checks are at compile time but for the two special streams, which
 * are pointers. */
static void runtime_abi_matches_nvidia_headers(void **state)
{
    (void)state;
    assert_int_equal((uintptr_t)cudaStreamLegacy, 1);
    assert_int_equal((uintptr_t)cudaStreamPerThread, 2);
    assert_int_equal(sizeof(struct cudaDeviceProp), sizeof(struct abi_cudaDeviceProp));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(runtime_abi_matches_nvidia_headers),
};

FAB_TEST_MAIN_NO_HELPERS("cudart", tests)
