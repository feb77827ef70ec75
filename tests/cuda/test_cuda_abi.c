/* The emulation's ABI header (src/cuda/cuda_abi.h, written without NVIDIA's)
 * against NVIDIA's cuda.h: every value, size and field offset the emulation
 * relies on is static-asserted equal, so a mismatch fails the build. Built
 * only where NVIDIA's cuda.h is installed. The emulation's names are included
 * with an abi_ prefix (FAB_CU) so the two headers can meet in one file; this
 * is the one cuda test that includes a project header, as it must. */
#include <cuda.h>
#include <stddef.h>

#define FAB_CU(name) abi_##name
#include "src/cuda/cuda_abi.h"

#include "fabtest.h"

#define SAME_VALUE(name, value)                                             \
    _Static_assert((long long)name == (long long)abi_##name, #name " differs"); \
    _Static_assert((long long)name == (long long)(value), #name " value");
#define SAME_RESULT(name, value, text) SAME_VALUE(CUDA_##name, value)

FAB_CU_RESULT_LIST(SAME_RESULT)
FAB_CU_HANDLE_TYPE_LIST(SAME_VALUE)
FAB_CU_ACCESS_LIST(SAME_VALUE)
FAB_CU_LOCATION_LIST(SAME_VALUE)
FAB_CU_ALLOCATION_TYPE_LIST(SAME_VALUE)
FAB_CU_GRANULARITY_LIST(SAME_VALUE)
#define SAME_ATTRIBUTE(name, value) SAME_VALUE(CU_DEVICE_ATTRIBUTE_##name, value)
FAB_CUDA_DEVICE_ATTRIBUTES(SAME_ATTRIBUTE)
_Static_assert((long long)CU_DEVICE_ATTRIBUTE_MAX == (long long)abi_CU_DEVICE_ATTRIBUTE_MAX,
               "the attribute list ends where cuda.h's does");
FAB_CU_POINTER_ATTRIBUTE_LIST(SAME_VALUE)
FAB_CU_MEMORYTYPE_LIST(SAME_VALUE)
FAB_CU_PROC_FLAGS_LIST(SAME_VALUE)
FAB_CU_IPC_MEM_FLAGS_LIST(SAME_VALUE)
FAB_CU_PROC_RESULT_LIST(SAME_VALUE)
FAB_CU_STREAM_FLAGS_LIST(SAME_VALUE)
FAB_CU_EXEC_AFFINITY_LIST(SAME_VALUE)
FAB_CU_EVENT_FLAGS_LIST(SAME_VALUE)
FAB_CU_EVENT_RECORD_FLAGS_LIST(SAME_VALUE)
FAB_CU_EVENT_WAIT_FLAGS_LIST(SAME_VALUE)
FAB_CU_WAIT_VALUE_LIST(SAME_VALUE)
FAB_CU_WRITE_VALUE_LIST(SAME_VALUE)
FAB_CU_MEM_OP_LIST(SAME_VALUE)
FAB_CU_CAPTURE_STATUS_LIST(SAME_VALUE)
FAB_CU_CAPTURE_MODE_LIST(SAME_VALUE)
FAB_CU_POINTER_ACCESS_LIST(SAME_VALUE)
FAB_CU_MEM_RANGE_HANDLE_TYPE_LIST(SAME_VALUE)
FAB_CU_MEM_RANGE_FLAGS_LIST(SAME_VALUE)
FAB_CU_MULTICAST_GRANULARITY_LIST(SAME_VALUE)
FAB_CU_P2P_ATTRIBUTE_LIST(SAME_VALUE)
FAB_CU_LIMIT_LIST(SAME_VALUE)
FAB_CU_FLUSH_RDMA_LIST(SAME_VALUE)
FAB_CU_FLUSH_RDMA_SCOPE_LIST(SAME_VALUE)
FAB_CU_FLUSH_RDMA_TARGET_LIST(SAME_VALUE)
SAME_VALUE(CU_LIMIT_MAX, 0x0a)

#define SAME_TYPE(t) _Static_assert(sizeof(t) == sizeof(abi_##t) && \
                                    _Alignof(t) == _Alignof(abi_##t), #t " size/alignment")
#define SAME_FIELD(t, f) _Static_assert(offsetof(t, f) == offsetof(abi_##t, f) && \
                                        sizeof(((t *)0)->f) == sizeof(((abi_##t *)0)->f), \
                                        #t "." #f " offset/size")
#define SAME_SCALAR(t) _Static_assert(_Generic((t)0, abi_##t: 1, default: 0), #t " type")

SAME_SCALAR(CUdeviceptr);
SAME_SCALAR(CUdevice);
SAME_SCALAR(CUmemGenericAllocationHandle);
SAME_SCALAR(cuuint64_t);
SAME_TYPE(CUresult);
SAME_TYPE(CUdeviceptr);
/* CUdeviceptr_v1 is visible only inside NVIDIA's build: the 3.1 ABI's 32 bits. */
_Static_assert(sizeof(abi_CUdeviceptr_v1) == 4, "CUdeviceptr_v1");
SAME_TYPE(CUcontext);
SAME_TYPE(CUstream);
SAME_TYPE(CUuuid);
SAME_TYPE(CUmemFabricHandle);
SAME_TYPE(CUmemLocation);
SAME_TYPE(CUmemAllocationProp);
SAME_TYPE(CUmemAccessDesc);
SAME_TYPE(CUexecAffinityParam);
SAME_TYPE(CUctxCreateParams);
SAME_TYPE(CUctxCigParam);
SAME_TYPE(CUmemAllocationHandleType);
SAME_TYPE(CUmemAccess_flags);
SAME_TYPE(CUdevice_attribute);
SAME_TYPE(CUpointer_attribute);
SAME_TYPE(CUdriverProcAddressQueryResult);
SAME_FIELD(CUuuid, bytes);
SAME_FIELD(CUmemFabricHandle, data);
SAME_TYPE(CUipcMemHandle);
SAME_TYPE(CUipcEventHandle);
SAME_FIELD(CUipcMemHandle, reserved);
SAME_TYPE(CUmulticastObjectProp);
SAME_FIELD(CUmulticastObjectProp, numDevices);
SAME_FIELD(CUmulticastObjectProp, size);
SAME_FIELD(CUmulticastObjectProp, handleTypes);
SAME_FIELD(CUmulticastObjectProp, flags);
SAME_FIELD(CUipcEventHandle, reserved);
SAME_FIELD(CUmemLocation, type);
SAME_FIELD(CUmemLocation, id);
SAME_FIELD(CUmemAllocationProp, type);
SAME_FIELD(CUmemAllocationProp, requestedHandleTypes);
SAME_FIELD(CUmemAllocationProp, location);
SAME_FIELD(CUmemAllocationProp, win32HandleMetaData);
SAME_FIELD(CUmemAllocationProp, allocFlags);
SAME_FIELD(CUmemAllocationProp, allocFlags.compressionType);
SAME_FIELD(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable);
SAME_FIELD(CUmemAllocationProp, allocFlags.usage);
SAME_FIELD(CUmemAllocationProp, allocFlags.reserved);
SAME_FIELD(CUmemAccessDesc, location);
SAME_FIELD(CUmemAccessDesc, flags);
SAME_FIELD(CUexecAffinityParam, type);
SAME_FIELD(CUexecAffinityParam, param.smCount.val);
SAME_FIELD(CUctxCreateParams, execAffinityParams);
SAME_FIELD(CUctxCreateParams, numExecAffinityParams);
SAME_FIELD(CUctxCreateParams, cigParams);
SAME_FIELD(CUctxCigParam, sharedDataType);
SAME_FIELD(CUctxCigParam, sharedData);

SAME_TYPE(CUevent);
SAME_TYPE(CUgraphEdgeData);
SAME_TYPE(CUstreamBatchMemOpParams);
SAME_TYPE(CUDA_MEMCPY2D);
SAME_TYPE(CUstreamCaptureStatus);
SAME_TYPE(CUstreamCaptureMode);
SAME_FIELD(CUstreamBatchMemOpParams, operation);
SAME_FIELD(CUstreamBatchMemOpParams, waitValue.address);
SAME_FIELD(CUstreamBatchMemOpParams, waitValue.value);
SAME_FIELD(CUstreamBatchMemOpParams, waitValue.value64);
SAME_FIELD(CUstreamBatchMemOpParams, waitValue.flags);
SAME_FIELD(CUstreamBatchMemOpParams, waitValue.alias);
SAME_FIELD(CUstreamBatchMemOpParams, writeValue.address);
SAME_FIELD(CUstreamBatchMemOpParams, writeValue.value);
SAME_FIELD(CUstreamBatchMemOpParams, writeValue.value64);
SAME_FIELD(CUstreamBatchMemOpParams, writeValue.flags);
SAME_FIELD(CUstreamBatchMemOpParams, flushRemoteWrites.flags);
SAME_FIELD(CUstreamBatchMemOpParams, memoryBarrier.flags);
SAME_FIELD(CUDA_MEMCPY2D, srcXInBytes);
SAME_FIELD(CUDA_MEMCPY2D, srcY);
SAME_FIELD(CUDA_MEMCPY2D, srcMemoryType);
SAME_FIELD(CUDA_MEMCPY2D, srcHost);
SAME_FIELD(CUDA_MEMCPY2D, srcDevice);
SAME_FIELD(CUDA_MEMCPY2D, srcArray);
SAME_FIELD(CUDA_MEMCPY2D, srcPitch);
SAME_FIELD(CUDA_MEMCPY2D, dstXInBytes);
SAME_FIELD(CUDA_MEMCPY2D, dstY);
SAME_FIELD(CUDA_MEMCPY2D, dstMemoryType);
SAME_FIELD(CUDA_MEMCPY2D, dstHost);
SAME_FIELD(CUDA_MEMCPY2D, dstDevice);
SAME_FIELD(CUDA_MEMCPY2D, dstArray);
SAME_FIELD(CUDA_MEMCPY2D, dstPitch);
SAME_FIELD(CUDA_MEMCPY2D, WidthInBytes);
SAME_FIELD(CUDA_MEMCPY2D, Height);
SAME_TYPE(CUDA_MEMCPY3D);
SAME_FIELD(CUDA_MEMCPY3D, srcXInBytes);
SAME_FIELD(CUDA_MEMCPY3D, srcY);
SAME_FIELD(CUDA_MEMCPY3D, srcZ);
SAME_FIELD(CUDA_MEMCPY3D, srcLOD);
SAME_FIELD(CUDA_MEMCPY3D, srcMemoryType);
SAME_FIELD(CUDA_MEMCPY3D, srcHost);
SAME_FIELD(CUDA_MEMCPY3D, srcDevice);
SAME_FIELD(CUDA_MEMCPY3D, srcArray);
SAME_FIELD(CUDA_MEMCPY3D, reserved0);
SAME_FIELD(CUDA_MEMCPY3D, srcPitch);
SAME_FIELD(CUDA_MEMCPY3D, srcHeight);
SAME_FIELD(CUDA_MEMCPY3D, dstXInBytes);
SAME_FIELD(CUDA_MEMCPY3D, dstY);
SAME_FIELD(CUDA_MEMCPY3D, dstZ);
SAME_FIELD(CUDA_MEMCPY3D, dstLOD);
SAME_FIELD(CUDA_MEMCPY3D, dstMemoryType);
SAME_FIELD(CUDA_MEMCPY3D, dstHost);
SAME_FIELD(CUDA_MEMCPY3D, dstDevice);
SAME_FIELD(CUDA_MEMCPY3D, dstArray);
SAME_FIELD(CUDA_MEMCPY3D, reserved1);
SAME_FIELD(CUDA_MEMCPY3D, dstPitch);
SAME_FIELD(CUDA_MEMCPY3D, dstHeight);
SAME_FIELD(CUDA_MEMCPY3D, WidthInBytes);
SAME_FIELD(CUDA_MEMCPY3D, Height);
SAME_FIELD(CUDA_MEMCPY3D, Depth);
SAME_FIELD(CUgraphEdgeData, from_port);
SAME_FIELD(CUgraphEdgeData, to_port);
SAME_FIELD(CUgraphEdgeData, type);
_Static_assert(CU_MEMHOSTALLOC_PORTABLE == FAB_CU_MEMHOSTALLOC_PORTABLE, "MEMHOSTALLOC");
_Static_assert(CU_MEM_ATTACH_GLOBAL == FAB_CU_MEM_ATTACH_GLOBAL && CU_MEM_ATTACH_HOST == FAB_CU_MEM_ATTACH_HOST &&
                   CU_MEM_ATTACH_SINGLE == FAB_CU_MEM_ATTACH_SINGLE,
               "MEM_ATTACH");
_Static_assert(CU_MEMHOSTALLOC_DEVICEMAP == FAB_CU_MEMHOSTALLOC_DEVICEMAP, "MEMHOSTALLOC");
_Static_assert(CU_MEMHOSTALLOC_WRITECOMBINED == FAB_CU_MEMHOSTALLOC_WRITECOMBINED, "MEMHOSTALLOC");
_Static_assert(CU_MEMHOSTREGISTER_PORTABLE == FAB_CU_MEMHOSTREGISTER_PORTABLE, "MEMHOSTREGISTER");
_Static_assert(CU_MEMHOSTREGISTER_DEVICEMAP == FAB_CU_MEMHOSTREGISTER_DEVICEMAP, "MEMHOSTREGISTER");
_Static_assert(CU_MEMHOSTREGISTER_IOMEMORY == FAB_CU_MEMHOSTREGISTER_IOMEMORY, "MEMHOSTREGISTER");
_Static_assert(CU_MEMHOSTREGISTER_READ_ONLY == FAB_CU_MEMHOSTREGISTER_READ_ONLY, "MEMHOSTREGISTER");
_Static_assert(CU_IPC_HANDLE_SIZE == FAB_CU_IPC_HANDLE_SIZE, "CU_IPC_HANDLE_SIZE");
_Static_assert(CU_CTX_FLAGS_MASK == FAB_CU_CTX_FLAGS_MASK, "CU_CTX_FLAGS_MASK");
_Static_assert(CUDA_VERSION >= 12050, "cuda.h older than the ABIs the emulation exports");

/* The checks above ran when this file compiled; the test records that and
 * checks the two pointer constants, which are not integer constant expressions. */
static void abi_matches_nvidia_cuda_h(void **state)
{
    (void)state;
    assert_int_equal((uintptr_t)CU_STREAM_LEGACY, FAB_CU_STREAM_LEGACY);
    assert_int_equal((uintptr_t)CU_STREAM_PER_THREAD, FAB_CU_STREAM_PER_THREAD);
    assert_int_equal(sizeof(CUmemAllocationProp), sizeof(abi_CUmemAllocationProp));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(abi_matches_nvidia_cuda_h),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
