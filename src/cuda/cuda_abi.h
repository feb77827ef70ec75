/* The CUDA driver ABI that the emulation implements, declared fresh (a machine
 * without NVIDIA's toolkit has no cuda.h): CUDA's type names, enumerator names,
 * values and struct layouts, as cuda.h 13.0 defines them, for the subset the
 * emulation speaks. Nothing here has behaviour.
 *
 * Every name is written through FAB_CU(name), which is the name itself unless
 * the includer defines FAB_CU first. tests/cuda/test_cuda_abi.c includes
 * NVIDIA's cuda.h and then this header with FAB_CU(name) = abi_##name, and
 * static-asserts that every size, offset and value below equals NVIDIA's.
 * Enumerations are X-macro lists so that the check walks each one entry by
 * entry and the error table (name, number, message) is a single list. */
#ifndef FAB_CUDA_ABI_H
#define FAB_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "fabmem/status.h"
#include "src/base/cuda_attributes.h"

#ifndef FAB_CU
#define FAB_CU(name) name
#endif

#define FAB__CU_ENUMERATOR(name, value) FAB_CU(name) = (value),
#define FAB__CU_RESULT_ENUMERATOR(name, value, text) FAB_CU(CUDA_##name) = (value),

/* The error codes, one table: those the model reports too are fab_status_t's
 * (fabmem/status.h's FAB_STATUS_MAP, numbered as CUDA numbers them, with the
 * real driver's messages, docs/cuda.md); these are the driver's alone.
 * XX(name without CUDA_, CUDA number, cuGetErrorString text). */
#define FAB__CU_DRIVER_ONLY_RESULTS(XX)                                                      \
    XX(ERROR_ALREADY_MAPPED, 208, "resource already mapped")                                \
    XX(ERROR_NOT_MAPPED, 211, "resource not mapped")                                        \
    XX(ERROR_CONTEXT_ALREADY_IN_USE, 216, "context already in use")                         \
    XX(ERROR_UNSUPPORTED_LIMIT, 215, "limit is not supported on this architecture")         \
    XX(ERROR_PEER_ACCESS_UNSUPPORTED, 217,                                                  \
       "peer access is not supported between these two devices")                          \
    XX(ERROR_OPERATING_SYSTEM, 304, "OS call failed or operation not supported on this OS") \
    XX(ERROR_PEER_ACCESS_ALREADY_ENABLED, 704, "peer access is already enabled")            \
    XX(ERROR_PEER_ACCESS_NOT_ENABLED, 705, "peer access has not been enabled")              \
    XX(ERROR_NOT_READY, 600, "device not ready")                                            \
    XX(ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712,                                           \
       "part or all of the requested memory range is already mapped")                       \
    XX(ERROR_HOST_MEMORY_NOT_REGISTERED, 713,                                               \
       "pointer does not correspond to a registered memory region")                         \
    XX(ERROR_CONTEXT_IS_DESTROYED, 709, "context is destroyed")                             \
    FAB__CU_CODE_RESULTS(XX)

/* Those that code objects and launches add (module.c, launch.c). */
#define FAB__CU_CODE_RESULTS(XX)                                                             \
    XX(ERROR_INVALID_IMAGE, 200, "device kernel image is invalid")                         \
    XX(ERROR_NO_BINARY_FOR_GPU, 209, "no kernel image is available for execution on the device") \
    XX(ERROR_INVALID_PTX, 218, "a PTX JIT compilation failed")                              \
    XX(ERROR_FILE_NOT_FOUND, 301, "file not found")                                         \
    XX(ERROR_LAUNCH_OUT_OF_RESOURCES, 701, "too many resources requested for launch")       \
    XX(ERROR_ASSERT, 710, "device-side assert triggered")                                    \
    XX(ERROR_ILLEGAL_INSTRUCTION, 715, "an illegal instruction was encountered")             \
    XX(ERROR_MISALIGNED_ADDRESS, 716, "misaligned address")                                  \
    XX(ERROR_LAUNCH_FAILED, 719, "unspecified launch failure")                              \
    XX(ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720, "too many blocks in cooperative launch")

/* Every CUresult the emulation speaks: XX(name without CUDA_, number, text). */
#define FAB_CU_RESULT_LIST(XX) FAB_STATUS_MAP(XX) FAB__CU_DRIVER_ONLY_RESULTS(XX)

typedef enum FAB_CU(cudaError_enum) {
    FAB_CU_RESULT_LIST(FAB__CU_RESULT_ENUMERATOR)
} FAB_CU(CUresult);

#define FAB_CU_HANDLE_TYPE_LIST(XX)                   \
    XX(CU_MEM_HANDLE_TYPE_NONE, 0x0)                  \
    XX(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0x1) \
    XX(CU_MEM_HANDLE_TYPE_WIN32, 0x2)                 \
    XX(CU_MEM_HANDLE_TYPE_WIN32_KMT, 0x4)             \
    XX(CU_MEM_HANDLE_TYPE_FABRIC, 0x8)                \
    XX(CU_MEM_HANDLE_TYPE_MAX, 0x7FFFFFFF)
typedef enum FAB_CU(CUmemAllocationHandleType_enum) {
    FAB_CU_HANDLE_TYPE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemAllocationHandleType);

#define FAB_CU_ACCESS_LIST(XX)                    \
    XX(CU_MEM_ACCESS_FLAGS_PROT_NONE, 0x0)        \
    XX(CU_MEM_ACCESS_FLAGS_PROT_READ, 0x1)        \
    XX(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 0x3)   \
    XX(CU_MEM_ACCESS_FLAGS_PROT_MAX, 0x7FFFFFFF)
typedef enum FAB_CU(CUmemAccess_flags_enum) {
    FAB_CU_ACCESS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemAccess_flags);

#define FAB_CU_LOCATION_LIST(XX)                 \
    XX(CU_MEM_LOCATION_TYPE_INVALID, 0x0)        \
    XX(CU_MEM_LOCATION_TYPE_DEVICE, 0x1)         \
    XX(CU_MEM_LOCATION_TYPE_HOST, 0x2)           \
    XX(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0x3)      \
    XX(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0x4) \
    XX(CU_MEM_LOCATION_TYPE_MAX, 0x7FFFFFFF)
typedef enum FAB_CU(CUmemLocationType_enum) {
    FAB_CU_LOCATION_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemLocationType);

#define FAB_CU_ALLOCATION_TYPE_LIST(XX)       \
    XX(CU_MEM_ALLOCATION_TYPE_INVALID, 0x0)   \
    XX(CU_MEM_ALLOCATION_TYPE_PINNED, 0x1)    \
    XX(CU_MEM_ALLOCATION_TYPE_MANAGED, 0x2)   \
    XX(CU_MEM_ALLOCATION_TYPE_MAX, 0x7FFFFFFF)
typedef enum FAB_CU(CUmemAllocationType_enum) {
    FAB_CU_ALLOCATION_TYPE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemAllocationType);

#define FAB_CU_GRANULARITY_LIST(XX)              \
    XX(CU_MEM_ALLOC_GRANULARITY_MINIMUM, 0x0)    \
    XX(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED, 0x1)
typedef enum FAB_CU(CUmemAllocationGranularity_flags_enum) {
    FAB_CU_GRANULARITY_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemAllocationGranularity_flags);

/* Every device attribute (src/base/cuda_attributes.h, the list the config's
 * attribute keys come from too); those the emulation does not model read 0. */
#define FAB__CU_DEVICE_ATTRIBUTE_ENUMERATOR(name, value) FAB_CU(CU_DEVICE_ATTRIBUTE_##name) = (value),
typedef enum FAB_CU(CUdevice_attribute_enum) {
    FAB_CUDA_DEVICE_ATTRIBUTES(FAB__CU_DEVICE_ATTRIBUTE_ENUMERATOR)
    FAB_CU(CU_DEVICE_ATTRIBUTE_MAX)
} FAB_CU(CUdevice_attribute);

#define FAB_CU_POINTER_ATTRIBUTE_LIST(XX)                \
    XX(CU_POINTER_ATTRIBUTE_CONTEXT, 1)                  \
    XX(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2)              \
    XX(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, 3)           \
    XX(CU_POINTER_ATTRIBUTE_HOST_POINTER, 4)             \
    XX(CU_POINTER_ATTRIBUTE_P2P_TOKENS, 5)               \
    XX(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 6)              \
    XX(CU_POINTER_ATTRIBUTE_BUFFER_ID, 7)                \
    XX(CU_POINTER_ATTRIBUTE_IS_MANAGED, 8)               \
    XX(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9)           \
    XX(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, 10) \
    XX(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 11)        \
    XX(CU_POINTER_ATTRIBUTE_RANGE_SIZE, 12)              \
    XX(CU_POINTER_ATTRIBUTE_MAPPED, 13)                  \
    XX(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, 14)    \
    XX(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, 15) \
    XX(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, 16)            \
    XX(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 17)          \
    XX(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, 20)         \
    XX(CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, 21) \
    XX(CU_POINTER_ATTRIBUTE_MAPPING_SIZE, 18)            \
    XX(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, 19)
typedef enum FAB_CU(CUpointer_attribute_enum) {
    FAB_CU_POINTER_ATTRIBUTE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUpointer_attribute);

#define FAB_CU_MEMORYTYPE_LIST(XX) \
    XX(CU_MEMORYTYPE_HOST, 0x01)   \
    XX(CU_MEMORYTYPE_DEVICE, 0x02) \
    XX(CU_MEMORYTYPE_ARRAY, 0x03)  \
    XX(CU_MEMORYTYPE_UNIFIED, 0x04)
typedef enum FAB_CU(CUmemorytype_enum) {
    FAB_CU_MEMORYTYPE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemorytype);

#define FAB_CU_PROC_FLAGS_LIST(XX)                         \
    XX(CU_GET_PROC_ADDRESS_DEFAULT, 0)                     \
    XX(CU_GET_PROC_ADDRESS_LEGACY_STREAM, 1)               \
    XX(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)
typedef enum FAB_CU(CUdriverProcAddress_flags_enum) {
    FAB_CU_PROC_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUdriverProcAddress_flags);

#define FAB_CU_PROC_RESULT_LIST(XX)                       \
    XX(CU_GET_PROC_ADDRESS_SUCCESS, 0)                    \
    XX(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1)           \
    XX(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)
typedef enum FAB_CU(CUdriverProcAddressQueryResult_enum) {
    FAB_CU_PROC_RESULT_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUdriverProcAddressQueryResult);

#define FAB_CU_STREAM_FLAGS_LIST(XX)   \
    XX(CU_STREAM_DEFAULT, 0x0)         \
    XX(CU_STREAM_NON_BLOCKING, 0x1)
typedef enum FAB_CU(CUstream_flags_enum) {
    FAB_CU_STREAM_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstream_flags);

#define FAB_CU_EXEC_AFFINITY_LIST(XX)        \
    XX(CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0)
typedef enum FAB_CU(CUexecAffinityType_enum) {
    FAB_CU_EXEC_AFFINITY_LIST(FAB__CU_ENUMERATOR)
    FAB_CU(CU_EXEC_AFFINITY_TYPE_MAX)
} FAB_CU(CUexecAffinityType);

typedef enum FAB_CU(CUcigDataType_enum) {
    FAB_CU(CIG_DATA_TYPE_D3D12_COMMAND_QUEUE) = 0x1,
    FAB_CU(CIG_DATA_TYPE_NV_BLOB) = 0x2,
} FAB_CU(CUcigDataType);

/* cuDeviceGetP2PAttribute's questions (deviceinfo.c). CUDA_ARRAY_ACCESS_SUPPORTED
 * shares its value with the deprecated ACCESS_ACCESS_SUPPORTED. */
#define FAB_CU_P2P_ATTRIBUTE_LIST(XX)                                  \
    XX(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0x01)                 \
    XX(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0x02)                 \
    XX(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 0x03)          \
    XX(CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, 0x04)      \
    XX(CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED, 0x05)
typedef enum FAB_CU(CUdevice_P2PAttribute_enum) {
    FAB_CU_P2P_ATTRIBUTE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUdevice_P2PAttribute);

/* cuFlushGPUDirectRDMAWrites (device.c) and the device attribute saying it
 * is there. */
#define FAB_CU_FLUSH_RDMA_LIST(XX)                                    \
    XX(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST, 1 << 0)           \
    XX(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS, 1 << 1)
typedef enum FAB_CU(CUflushGPUDirectRDMAWritesOptions_enum) {
    FAB_CU_FLUSH_RDMA_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUflushGPUDirectRDMAWritesOptions);
#define FAB_CU_FLUSH_RDMA_SCOPE_LIST(XX)                              \
    XX(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER, 100)                 \
    XX(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES, 200)
typedef enum FAB_CU(CUflushGPUDirectRDMAWritesScope_enum) {
    FAB_CU_FLUSH_RDMA_SCOPE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUflushGPUDirectRDMAWritesScope);
#define FAB_CU_FLUSH_RDMA_TARGET_LIST(XX) XX(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX, 0)
typedef enum FAB_CU(CUflushGPUDirectRDMAWritesTarget_enum) {
    FAB_CU_FLUSH_RDMA_TARGET_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUflushGPUDirectRDMAWritesTarget);

/* cuCtxSetLimit / cuCtxGetLimit's limits (device.c). */
#define FAB_CU_LIMIT_LIST(XX)                              \
    XX(CU_LIMIT_STACK_SIZE, 0x00)                          \
    XX(CU_LIMIT_PRINTF_FIFO_SIZE, 0x01)                    \
    XX(CU_LIMIT_MALLOC_HEAP_SIZE, 0x02)                    \
    XX(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 0x03)              \
    XX(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 0x04)    \
    XX(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 0x05)            \
    XX(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0x06)            \
    XX(CU_LIMIT_SHMEM_SIZE, 0x07)                          \
    XX(CU_LIMIT_CIG_ENABLED, 0x08)                         \
    XX(CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, 0x09)
typedef enum FAB_CU(CUlimit_enum) {
    FAB_CU_LIMIT_LIST(FAB__CU_ENUMERATOR)
    FAB_CU(CU_LIMIT_MAX)
} FAB_CU(CUlimit);

/* Scalars and opaque handles. CUdeviceptr is pointer-sized (LP64 here). */
typedef unsigned long long FAB_CU(CUdeviceptr);
typedef unsigned int FAB_CU(CUdeviceptr_v1);
typedef int FAB_CU(CUdevice);
typedef unsigned long long FAB_CU(CUmemGenericAllocationHandle);
typedef uint64_t FAB_CU(cuuint64_t);
typedef struct FAB_CU(CUctx_st) *FAB_CU(CUcontext);
typedef struct FAB_CU(CUstream_st) *FAB_CU(CUstream);
typedef struct FAB_CU(CUgreenCtx_st) *FAB_CU(CUgreenCtx); /* never made here */
/* The CUDA 3.1 copy descriptors (32-bit device pointers): only named, since
 * their entry points refuse them unread. */
typedef struct FAB_CU(CUDA_MEMCPY2D_v1_st) FAB_CU(CUDA_MEMCPY2D_v1);
typedef struct FAB_CU(CUDA_MEMCPY3D_v1_st) FAB_CU(CUDA_MEMCPY3D_v1);

#define FAB_CU_IPC_HANDLE_SIZE 64

typedef struct FAB_CU(CUuuid_st) {
    char bytes[16];
} FAB_CU(CUuuid);

typedef struct FAB_CU(CUmemFabricHandle_st) {
    unsigned char data[FAB_CU_IPC_HANDLE_SIZE];
} FAB_CU(CUmemFabricHandle);

typedef struct FAB_CU(CUmemLocation_st) {
    FAB_CU(CUmemLocationType) type;
    int id;
} FAB_CU(CUmemLocation);

typedef struct FAB_CU(CUmemAllocationProp_st) {
    FAB_CU(CUmemAllocationType) type;
    FAB_CU(CUmemAllocationHandleType) requestedHandleTypes;
    FAB_CU(CUmemLocation) location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} FAB_CU(CUmemAllocationProp);

typedef struct FAB_CU(CUmemAccessDesc_st) {
    FAB_CU(CUmemLocation) location;
    FAB_CU(CUmemAccess_flags) flags;
} FAB_CU(CUmemAccessDesc);

typedef struct FAB_CU(CUexecAffinitySmCount_st) {
    unsigned int val;
} FAB_CU(CUexecAffinitySmCount);

typedef struct FAB_CU(CUexecAffinityParam_st) {
    FAB_CU(CUexecAffinityType) type;
    union {
        FAB_CU(CUexecAffinitySmCount) smCount;
    } param;
} FAB_CU(CUexecAffinityParam);

typedef struct FAB_CU(CUctxCigParam_st) {
    FAB_CU(CUcigDataType) sharedDataType;
    void *sharedData;
} FAB_CU(CUctxCigParam);

typedef struct FAB_CU(CUctxCreateParams_st) {
    FAB_CU(CUexecAffinityParam) *execAffinityParams;
    int numExecAffinityParams;
    FAB_CU(CUctxCigParam) *cigParams;
} FAB_CU(CUctxCreateParams);

/* Scalar constants cuda.h spells as macros. */
#define FAB_CU_STREAM_LEGACY ((uintptr_t)0x1)
#define FAB_CU_STREAM_PER_THREAD ((uintptr_t)0x2)
#define FAB_CU_CTX_FLAGS_MASK 0xFF

/* ---- memory, streams and events (memory.c, stream.c, streamapi.c, event.c) */

#define FAB_CU_EVENT_FLAGS_LIST(XX)       \
    XX(CU_EVENT_DEFAULT, 0x0)             \
    XX(CU_EVENT_BLOCKING_SYNC, 0x1)       \
    XX(CU_EVENT_DISABLE_TIMING, 0x2)      \
    XX(CU_EVENT_INTERPROCESS, 0x4)
typedef enum FAB_CU(CUevent_flags_enum) {
    FAB_CU_EVENT_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUevent_flags);

#define FAB_CU_EVENT_RECORD_FLAGS_LIST(XX) \
    XX(CU_EVENT_RECORD_DEFAULT, 0x0)       \
    XX(CU_EVENT_RECORD_EXTERNAL, 0x1)
typedef enum FAB_CU(CUevent_record_flags_enum) {
    FAB_CU_EVENT_RECORD_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUevent_record_flags);

#define FAB_CU_EVENT_WAIT_FLAGS_LIST(XX) \
    XX(CU_EVENT_WAIT_DEFAULT, 0x0)       \
    XX(CU_EVENT_WAIT_EXTERNAL, 0x1)
typedef enum FAB_CU(CUevent_wait_flags_enum) {
    FAB_CU_EVENT_WAIT_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUevent_wait_flags);

#define FAB_CU_WAIT_VALUE_LIST(XX)          \
    XX(CU_STREAM_WAIT_VALUE_GEQ, 0x0)       \
    XX(CU_STREAM_WAIT_VALUE_EQ, 0x1)        \
    XX(CU_STREAM_WAIT_VALUE_AND, 0x2)       \
    XX(CU_STREAM_WAIT_VALUE_NOR, 0x3)       \
    XX(CU_STREAM_WAIT_VALUE_FLUSH, 1 << 30)
typedef enum FAB_CU(CUstreamWaitValue_flags_enum) {
    FAB_CU_WAIT_VALUE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstreamWaitValue_flags);

#define FAB_CU_WRITE_VALUE_LIST(XX)                  \
    XX(CU_STREAM_WRITE_VALUE_DEFAULT, 0x0)           \
    XX(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, 0x1)
typedef enum FAB_CU(CUstreamWriteValue_flags_enum) {
    FAB_CU_WRITE_VALUE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstreamWriteValue_flags);

#define FAB_CU_MEM_OP_LIST(XX)                    \
    XX(CU_STREAM_MEM_OP_WAIT_VALUE_32, 1)         \
    XX(CU_STREAM_MEM_OP_WRITE_VALUE_32, 2)        \
    XX(CU_STREAM_MEM_OP_WAIT_VALUE_64, 4)         \
    XX(CU_STREAM_MEM_OP_WRITE_VALUE_64, 5)        \
    XX(CU_STREAM_MEM_OP_BARRIER, 6)               \
    XX(CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES, 3)
typedef enum FAB_CU(CUstreamBatchMemOpType_enum) {
    FAB_CU_MEM_OP_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstreamBatchMemOpType);

#define FAB_CU_CAPTURE_STATUS_LIST(XX)             \
    XX(CU_STREAM_CAPTURE_STATUS_NONE, 0)           \
    XX(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1)         \
    XX(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)
typedef enum FAB_CU(CUstreamCaptureStatus_enum) {
    FAB_CU_CAPTURE_STATUS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstreamCaptureStatus);

#define FAB_CU_CAPTURE_MODE_LIST(XX)              \
    XX(CU_STREAM_CAPTURE_MODE_GLOBAL, 0)          \
    XX(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1)    \
    XX(CU_STREAM_CAPTURE_MODE_RELAXED, 2)
typedef enum FAB_CU(CUstreamCaptureMode_enum) {
    FAB_CU_CAPTURE_MODE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUstreamCaptureMode);

#define FAB_CU_POINTER_ACCESS_LIST(XX)                  \
    XX(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE, 0x0)      \
    XX(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ, 0x1)      \
    XX(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE, 0x3)
typedef enum FAB_CU(CUpointer_attribute_access_flags_enum) {
    FAB_CU_POINTER_ACCESS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUpointer_attribute_access_flags);

typedef struct FAB_CU(CUevent_st) *FAB_CU(CUevent);
typedef struct FAB_CU(CUarray_st) *FAB_CU(CUarray);
typedef struct FAB_CU(CUgraph_st) *FAB_CU(CUgraph);
typedef struct FAB_CU(CUgraphNode_st) *FAB_CU(CUgraphNode);
typedef struct FAB_CU(CUmemPoolHandle_st) *FAB_CU(CUmemoryPool);
typedef void (*FAB_CU(CUhostFn))(void *userData);
typedef void (*FAB_CU(CUstreamCallback))(FAB_CU(CUstream) hStream, FAB_CU(CUresult) status,
                                         void *userData);

typedef struct FAB_CU(CUgraphEdgeData_st) {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} FAB_CU(CUgraphEdgeData);

typedef union FAB_CU(CUstreamBatchMemOpParams_union) {
    FAB_CU(CUstreamBatchMemOpType) operation;
    struct FAB_CU(CUstreamMemOpWaitValueParams_st) {
        FAB_CU(CUstreamBatchMemOpType) operation;
        FAB_CU(CUdeviceptr) address;
        union {
            uint32_t value;
            FAB_CU(cuuint64_t) value64;
        };
        unsigned int flags;
        FAB_CU(CUdeviceptr) alias;
    } waitValue;
    struct FAB_CU(CUstreamMemOpWriteValueParams_st) {
        FAB_CU(CUstreamBatchMemOpType) operation;
        FAB_CU(CUdeviceptr) address;
        union {
            uint32_t value;
            FAB_CU(cuuint64_t) value64;
        };
        unsigned int flags;
        FAB_CU(CUdeviceptr) alias;
    } writeValue;
    struct FAB_CU(CUstreamMemOpFlushRemoteWritesParams_st) {
        FAB_CU(CUstreamBatchMemOpType) operation;
        unsigned int flags;
    } flushRemoteWrites;
    struct FAB_CU(CUstreamMemOpMemoryBarrierParams_st) {
        FAB_CU(CUstreamBatchMemOpType) operation;
        unsigned int flags;
    } memoryBarrier;
    FAB_CU(cuuint64_t) pad[6];
} FAB_CU(CUstreamBatchMemOpParams);

typedef struct FAB_CU(CUDA_MEMCPY2D_st) {
    size_t srcXInBytes;
    size_t srcY;
    FAB_CU(CUmemorytype) srcMemoryType;
    const void *srcHost;
    FAB_CU(CUdeviceptr) srcDevice;
    FAB_CU(CUarray) srcArray;
    size_t srcPitch;
    size_t dstXInBytes;
    size_t dstY;
    FAB_CU(CUmemorytype) dstMemoryType;
    void *dstHost;
    FAB_CU(CUdeviceptr) dstDevice;
    FAB_CU(CUarray) dstArray;
    size_t dstPitch;
    size_t WidthInBytes;
    size_t Height;
} FAB_CU(CUDA_MEMCPY2D);

typedef struct FAB_CU(CUDA_MEMCPY3D_st) {
    size_t srcXInBytes;
    size_t srcY;
    size_t srcZ;
    size_t srcLOD;
    FAB_CU(CUmemorytype) srcMemoryType;
    const void *srcHost;
    FAB_CU(CUdeviceptr) srcDevice;
    FAB_CU(CUarray) srcArray;
    void *reserved0;
    size_t srcPitch;
    size_t srcHeight;
    size_t dstXInBytes;
    size_t dstY;
    size_t dstZ;
    size_t dstLOD;
    FAB_CU(CUmemorytype) dstMemoryType;
    void *dstHost;
    FAB_CU(CUdeviceptr) dstDevice;
    FAB_CU(CUarray) dstArray;
    void *reserved1;
    size_t dstPitch;
    size_t dstHeight;
    size_t WidthInBytes;
    size_t Height;
    size_t Depth;
} FAB_CU(CUDA_MEMCPY3D);

#define FAB_CU_MEM_ATTACH_GLOBAL 0x1
#define FAB_CU_MEM_ATTACH_HOST 0x2
#define FAB_CU_MEM_ATTACH_SINGLE 0x4
#define FAB_CU_MEMHOSTALLOC_PORTABLE 0x01
#define FAB_CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define FAB_CU_MEMHOSTALLOC_WRITECOMBINED 0x04
#define FAB_CU_MEMHOSTREGISTER_PORTABLE 0x01
#define FAB_CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define FAB_CU_MEMHOSTREGISTER_IOMEMORY 0x04
#define FAB_CU_MEMHOSTREGISTER_READ_ONLY 0x08
#define FAB_CU_STREAM_CALLBACK_FLAGS 0

/* cuMemGetHandleForAddressRange's handle types and flags. */
#define FAB_CU_MEM_RANGE_HANDLE_TYPE_LIST(XX)   \
    XX(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0x1) \
    XX(CU_MEM_RANGE_HANDLE_TYPE_MAX, 0x7FFFFFFF)
typedef enum FAB_CU(CUmemRangeHandleType_enum) {
    FAB_CU_MEM_RANGE_HANDLE_TYPE_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemRangeHandleType);

#define FAB_CU_MEM_RANGE_FLAGS_LIST(XX) XX(CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, 0x1)
typedef enum FAB_CU(CUmemRangeFlags_enum) {
    FAB_CU_MEM_RANGE_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemRangeFlags);

/* cuMemMapArrayAsync's list: sparse arrays are not emulated, so the
 * emulation never looks inside one and leaves the struct incomplete. */
typedef struct FAB_CU(CUarrayMapInfo_st) FAB_CU(CUarrayMapInfo);
#include "src/cuda/cuda_abi_code.h"
#include "src/cuda/cuda_abi_pool.h"

/* Legacy CUDA IPC (ipc.c): 64 opaque bytes each, and the one open flag. */
typedef struct FAB_CU(CUipcMemHandle_st) {
    char reserved[FAB_CU_IPC_HANDLE_SIZE];
} FAB_CU(CUipcMemHandle);
typedef struct FAB_CU(CUipcEventHandle_st) {
    char reserved[FAB_CU_IPC_HANDLE_SIZE];
} FAB_CU(CUipcEventHandle);
#define FAB_CU_IPC_MEM_FLAGS_LIST(XX) XX(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, 0x1)
typedef enum FAB_CU(CUipcMem_flags_enum) {
    FAB_CU_IPC_MEM_FLAGS_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUipcMem_flags);

/* Multicast objects (multicast.c): the granularity query's flags and the
 * creation properties. */
#define FAB_CU_MULTICAST_GRANULARITY_LIST(XX)    \
    XX(CU_MULTICAST_GRANULARITY_MINIMUM, 0x0)    \
    XX(CU_MULTICAST_GRANULARITY_RECOMMENDED, 0x1)
typedef enum FAB_CU(CUmulticastGranularity_flags_enum) {
    FAB_CU_MULTICAST_GRANULARITY_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmulticastGranularity_flags);
typedef struct FAB_CU(CUmulticastObjectProp_st) {
    unsigned int numDevices;
    size_t size;
    unsigned long long handleTypes;
    unsigned long long flags;
} FAB_CU(CUmulticastObjectProp);

/* What the entry points of legacy.c name: CUDA arrays, texture and surface
 * references, the 3D peer copy and the profiler's output mode, none of which
 * the emulation looks inside (they are refused), so the structs stay
 * incomplete and the enumerations are ints; and the shared-memory bank
 * configuration, whose values it answers. */
typedef struct FAB_CU(CUtexref_st) *FAB_CU(CUtexref);
typedef struct FAB_CU(CUsurfref_st) *FAB_CU(CUsurfref);
typedef struct FAB_CU(CUDA_ARRAY_DESCRIPTOR_st) FAB_CU(CUDA_ARRAY_DESCRIPTOR);
typedef struct FAB_CU(CUDA_ARRAY3D_DESCRIPTOR_st) FAB_CU(CUDA_ARRAY3D_DESCRIPTOR);
typedef struct FAB_CU(CUDA_MEMCPY3D_PEER_st) FAB_CU(CUDA_MEMCPY3D_PEER);
typedef int FAB_CU(CUarray_format);
typedef int FAB_CU(CUaddress_mode);
typedef int FAB_CU(CUfilter_mode);
typedef int FAB_CU(CUoutput_mode);
#define FAB_CU_SHARED_CONFIG_LIST(XX)                  \
    XX(CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE, 0x00)    \
    XX(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE, 0x01)  \
    XX(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE, 0x02)
typedef enum FAB_CU(CUsharedconfig_enum) {
    FAB_CU_SHARED_CONFIG_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUsharedconfig);
#define FAB_CU_MEM_ATTACH_LIST(XX)  \
    XX(CU_MEM_ATTACH_GLOBAL, 0x1)   \
    XX(CU_MEM_ATTACH_HOST, 0x2)     \
    XX(CU_MEM_ATTACH_SINGLE, 0x4)
typedef enum FAB_CU(CUmemAttach_flags_enum) {
    FAB_CU_MEM_ATTACH_LIST(FAB__CU_ENUMERATOR)
} FAB_CU(CUmemAttach_flags);

#endif /* FAB_CUDA_ABI_H */
