/* fabmem's own cuda_runtime_api.h: the subset of the CUDA runtime API that
 * libcudart.so.13 (src/cudart) implements, declared fresh for machines
 * without NVIDIA's toolkit. Programs built with nvcc use NVIDIA's headers and
 * never see this one; it serves fabmem's runtime itself and C programs (the
 * tests) compiled where NVIDIA's headers are absent.
 *
 * Type and enumerator names go through FAB_RT(name), the name itself unless
 * the includer defines FAB_RT first: tests/cudart/test_cudart_abi.c includes
 * NVIDIA's cuda_runtime_api.h and then this header with FAB_RT(name) =
 * abi_##name and FAB_RT_ABI_ONLY (no prototypes), and static-asserts every
 * value, size and field offset equal to NVIDIA's. Enumerations the runtime
 * checks entry by entry are X-macro lists. */
#ifndef FAB_CUDA_RUNTIME_API_H
#define FAB_CUDA_RUNTIME_API_H

#include <stddef.h>

#ifndef FAB_RT
#define FAB_RT(name) name
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CUDART_VERSION 13000

/* The error codes: XX(name, number, cudaGetErrorString text). The texts are
 * fabmem's own short descriptions, made from the names. */
#define FAB_RT_ERROR_LIST(XX) \
    XX(cudaSuccess, 0, "no error") \
    XX(cudaErrorInvalidValue, 1, "invalid argument") \
    XX(cudaErrorMemoryAllocation, 2, "out of memory") \
    XX(cudaErrorInitializationError, 3, "initialization error") \
    XX(cudaErrorCudartUnloading, 4, "the runtime is unloading") \
    XX(cudaErrorProfilerDisabled, 5, "profiler disabled") \
    XX(cudaErrorProfilerNotInitialized, 6, "profiler not initialized") \
    XX(cudaErrorProfilerAlreadyStarted, 7, "profiler already started") \
    XX(cudaErrorProfilerAlreadyStopped, 8, "profiler already stopped") \
    XX(cudaErrorInvalidConfiguration, 9, "invalid configuration") \
    XX(cudaErrorInvalidPitchValue, 12, "invalid pitch value") \
    XX(cudaErrorInvalidSymbol, 13, "invalid symbol") \
    XX(cudaErrorInvalidHostPointer, 16, "invalid host pointer") \
    XX(cudaErrorInvalidDevicePointer, 17, "invalid device pointer") \
    XX(cudaErrorInvalidTexture, 18, "invalid texture") \
    XX(cudaErrorInvalidTextureBinding, 19, "invalid texture binding") \
    XX(cudaErrorInvalidChannelDescriptor, 20, "invalid channel descriptor") \
    XX(cudaErrorInvalidMemcpyDirection, 21, "invalid memcpy direction") \
    XX(cudaErrorAddressOfConstant, 22, "address of constant") \
    XX(cudaErrorTextureFetchFailed, 23, "texture fetch failed") \
    XX(cudaErrorTextureNotBound, 24, "texture not bound") \
    XX(cudaErrorSynchronizationError, 25, "synchronization error") \
    XX(cudaErrorInvalidFilterSetting, 26, "invalid filter setting") \
    XX(cudaErrorInvalidNormSetting, 27, "invalid norm setting") \
    XX(cudaErrorMixedDeviceExecution, 28, "mixed device execution") \
    XX(cudaErrorNotYetImplemented, 31, "not yet implemented") \
    XX(cudaErrorMemoryValueTooLarge, 32, "memory value too large") \
    XX(cudaErrorStubLibrary, 34, "stub library") \
    XX(cudaErrorInsufficientDriver, 35, "insufficient driver") \
    XX(cudaErrorCallRequiresNewerDriver, 36, "call requires newer driver") \
    XX(cudaErrorInvalidSurface, 37, "invalid surface") \
    XX(cudaErrorDuplicateVariableName, 43, "duplicate variable name") \
    XX(cudaErrorDuplicateTextureName, 44, "duplicate texture name") \
    XX(cudaErrorDuplicateSurfaceName, 45, "duplicate surface name") \
    XX(cudaErrorDevicesUnavailable, 46, "devices unavailable") \
    XX(cudaErrorIncompatibleDriverContext, 49, "incompatible driver context") \
    XX(cudaErrorMissingConfiguration, 52, "missing configuration") \
    XX(cudaErrorPriorLaunchFailure, 53, "prior launch failure") \
    XX(cudaErrorLaunchMaxDepthExceeded, 65, "launch max depth exceeded") \
    XX(cudaErrorLaunchFileScopedTex, 66, "launch file scoped tex") \
    XX(cudaErrorLaunchFileScopedSurf, 67, "launch file scoped surf") \
    XX(cudaErrorSyncDepthExceeded, 68, "sync depth exceeded") \
    XX(cudaErrorLaunchPendingCountExceeded, 69, "launch pending count exceeded") \
    XX(cudaErrorInvalidDeviceFunction, 98, "invalid device function") \
    XX(cudaErrorNoDevice, 100, "no CUDA-capable device is detected") \
    XX(cudaErrorInvalidDevice, 101, "invalid device ordinal") \
    XX(cudaErrorDeviceNotLicensed, 102, "device not licensed") \
    XX(cudaErrorSoftwareValidityNotEstablished, 103, "software validity not established") \
    XX(cudaErrorStartupFailure, 127, "startup failure") \
    XX(cudaErrorInvalidKernelImage, 200, "invalid kernel image") \
    XX(cudaErrorDeviceUninitialized, 201, "device uninitialized") \
    XX(cudaErrorMapBufferObjectFailed, 205, "map buffer object failed") \
    XX(cudaErrorUnmapBufferObjectFailed, 206, "unmap buffer object failed") \
    XX(cudaErrorArrayIsMapped, 207, "array is mapped") \
    XX(cudaErrorAlreadyMapped, 208, "already mapped") \
    XX(cudaErrorNoKernelImageForDevice, 209, "no kernel image for device") \
    XX(cudaErrorAlreadyAcquired, 210, "already acquired") \
    XX(cudaErrorNotMapped, 211, "not mapped") \
    XX(cudaErrorNotMappedAsArray, 212, "not mapped as array") \
    XX(cudaErrorNotMappedAsPointer, 213, "not mapped as pointer") \
    XX(cudaErrorECCUncorrectable, 214, "ECC uncorrectable") \
    XX(cudaErrorUnsupportedLimit, 215, "unsupported limit") \
    XX(cudaErrorDeviceAlreadyInUse, 216, "device already in use") \
    XX(cudaErrorPeerAccessUnsupported, 217, "peer access unsupported") \
    XX(cudaErrorInvalidPtx, 218, "invalid ptx") \
    XX(cudaErrorInvalidGraphicsContext, 219, "invalid graphics context") \
    XX(cudaErrorNvlinkUncorrectable, 220, "nvlink uncorrectable") \
    XX(cudaErrorJitCompilerNotFound, 221, "jit compiler not found") \
    XX(cudaErrorUnsupportedPtxVersion, 222, "unsupported ptx version") \
    XX(cudaErrorJitCompilationDisabled, 223, "jit compilation disabled") \
    XX(cudaErrorUnsupportedExecAffinity, 224, "unsupported exec affinity") \
    XX(cudaErrorUnsupportedDevSideSync, 225, "unsupported dev side sync") \
    XX(cudaErrorContained, 226, "contained") \
    XX(cudaErrorInvalidSource, 300, "invalid source") \
    XX(cudaErrorFileNotFound, 301, "file not found") \
    XX(cudaErrorSharedObjectSymbolNotFound, 302, "shared object symbol not found") \
    XX(cudaErrorSharedObjectInitFailed, 303, "shared object init failed") \
    XX(cudaErrorOperatingSystem, 304, "operating system") \
    XX(cudaErrorInvalidResourceHandle, 400, "invalid resource handle") \
    XX(cudaErrorIllegalState, 401, "illegal state") \
    XX(cudaErrorLossyQuery, 402, "lossy query") \
    XX(cudaErrorSymbolNotFound, 500, "symbol not found") \
    XX(cudaErrorNotReady, 600, "device not ready") \
    XX(cudaErrorIllegalAddress, 700, "illegal address") \
    XX(cudaErrorLaunchOutOfResources, 701, "launch out of resources") \
    XX(cudaErrorLaunchTimeout, 702, "launch timeout") \
    XX(cudaErrorLaunchIncompatibleTexturing, 703, "launch incompatible texturing") \
    XX(cudaErrorPeerAccessAlreadyEnabled, 704, "peer access already enabled") \
    XX(cudaErrorPeerAccessNotEnabled, 705, "peer access not enabled") \
    XX(cudaErrorSetOnActiveProcess, 708, "set on active process") \
    XX(cudaErrorContextIsDestroyed, 709, "context is destroyed") \
    XX(cudaErrorAssert, 710, "assert") \
    XX(cudaErrorTooManyPeers, 711, "too many peers") \
    XX(cudaErrorHostMemoryAlreadyRegistered, 712, "host memory already registered") \
    XX(cudaErrorHostMemoryNotRegistered, 713, "host memory not registered") \
    XX(cudaErrorHardwareStackError, 714, "hardware stack error") \
    XX(cudaErrorIllegalInstruction, 715, "illegal instruction") \
    XX(cudaErrorMisalignedAddress, 716, "misaligned address") \
    XX(cudaErrorInvalidAddressSpace, 717, "invalid address space") \
    XX(cudaErrorInvalidPc, 718, "invalid pc") \
    XX(cudaErrorLaunchFailure, 719, "launch failure") \
    XX(cudaErrorCooperativeLaunchTooLarge, 720, "cooperative launch too large") \
    XX(cudaErrorTensorMemoryLeak, 721, "tensor memory leak") \
    XX(cudaErrorNotPermitted, 800, "not permitted") \
    XX(cudaErrorNotSupported, 801, "operation not supported") \
    XX(cudaErrorSystemNotReady, 802, "system not ready") \
    XX(cudaErrorSystemDriverMismatch, 803, "system driver mismatch") \
    XX(cudaErrorCompatNotSupportedOnDevice, 804, "compat not supported on device") \
    XX(cudaErrorMpsConnectionFailed, 805, "mps connection failed") \
    XX(cudaErrorMpsRpcFailure, 806, "mps rpc failure") \
    XX(cudaErrorMpsServerNotReady, 807, "mps server not ready") \
    XX(cudaErrorMpsMaxClientsReached, 808, "mps max clients reached") \
    XX(cudaErrorMpsMaxConnectionsReached, 809, "mps max connections reached") \
    XX(cudaErrorMpsClientTerminated, 810, "mps client terminated") \
    XX(cudaErrorCdpNotSupported, 811, "cdp not supported") \
    XX(cudaErrorCdpVersionMismatch, 812, "cdp version mismatch") \
    XX(cudaErrorStreamCaptureUnsupported, 900, "stream capture unsupported") \
    XX(cudaErrorStreamCaptureInvalidated, 901, "stream capture invalidated") \
    XX(cudaErrorStreamCaptureMerge, 902, "stream capture merge") \
    XX(cudaErrorStreamCaptureUnmatched, 903, "stream capture unmatched") \
    XX(cudaErrorStreamCaptureUnjoined, 904, "stream capture unjoined") \
    XX(cudaErrorStreamCaptureIsolation, 905, "stream capture isolation") \
    XX(cudaErrorStreamCaptureImplicit, 906, "stream capture implicit") \
    XX(cudaErrorCapturedEvent, 907, "captured event") \
    XX(cudaErrorStreamCaptureWrongThread, 908, "stream capture wrong thread") \
    XX(cudaErrorTimeout, 909, "timeout") \
    XX(cudaErrorGraphExecUpdateFailure, 910, "graph exec update failure") \
    XX(cudaErrorExternalDevice, 911, "external device") \
    XX(cudaErrorInvalidClusterSize, 912, "invalid cluster size") \
    XX(cudaErrorFunctionNotLoaded, 913, "function not loaded") \
    XX(cudaErrorInvalidResourceType, 914, "invalid resource type") \
    XX(cudaErrorInvalidResourceConfiguration, 915, "invalid resource configuration") \
    XX(cudaErrorUnknown, 999, "unknown error")

#define FAB_RT_ENUMERATOR_(name, value, text) FAB_RT(name) = (value),
typedef enum FAB_RT(cudaError) { FAB_RT_ERROR_LIST(FAB_RT_ENUMERATOR_) } FAB_RT(cudaError_t);

#define FAB_RT_VALUE_(name, value) FAB_RT(name) = (value),

#define FAB_RT_MEMCPY_KIND_LIST(XX)                                        \
    XX(cudaMemcpyHostToHost, 0) XX(cudaMemcpyHostToDevice, 1)              \
    XX(cudaMemcpyDeviceToHost, 2) XX(cudaMemcpyDeviceToDevice, 3)          \
    XX(cudaMemcpyDefault, 4)
enum FAB_RT(cudaMemcpyKind) { FAB_RT_MEMCPY_KIND_LIST(FAB_RT_VALUE_) };

#define FAB_RT_MEMORY_TYPE_LIST(XX)                                        \
    XX(cudaMemoryTypeUnregistered, 0) XX(cudaMemoryTypeHost, 1)            \
    XX(cudaMemoryTypeDevice, 2) XX(cudaMemoryTypeManaged, 3)
enum FAB_RT(cudaMemoryType) { FAB_RT_MEMORY_TYPE_LIST(FAB_RT_VALUE_) };

#define FAB_RT_CAPTURE_STATUS_LIST(XX)                                     \
    XX(cudaStreamCaptureStatusNone, 0) XX(cudaStreamCaptureStatusActive, 1) \
    XX(cudaStreamCaptureStatusInvalidated, 2)
enum FAB_RT(cudaStreamCaptureStatus) { FAB_RT_CAPTURE_STATUS_LIST(FAB_RT_VALUE_) };

#define FAB_RT_CAPTURE_MODE_LIST(XX)                                       \
    XX(cudaStreamCaptureModeGlobal, 0) XX(cudaStreamCaptureModeThreadLocal, 1) \
    XX(cudaStreamCaptureModeRelaxed, 2)
enum FAB_RT(cudaStreamCaptureMode) { FAB_RT_CAPTURE_MODE_LIST(FAB_RT_VALUE_) };

#define FAB_RT_ENTRY_POINT_RESULT_LIST(XX)                                 \
    XX(cudaDriverEntryPointSuccess, 0) XX(cudaDriverEntryPointSymbolNotFound, 1) \
    XX(cudaDriverEntryPointVersionNotSufficent, 2)
enum FAB_RT(cudaDriverEntryPointQueryResult) { FAB_RT_ENTRY_POINT_RESULT_LIST(FAB_RT_VALUE_) };

/* Device attributes: the runtime's numbers are the driver's
 * (CUdevice_attribute), so the runtime passes any of them through; these are
 * the ones named here. */
#define FAB_RT_DEVICE_ATTR_LIST(XX)                                        \
    XX(cudaDevAttrMaxThreadsPerBlock, 1) XX(cudaDevAttrMaxBlockDimX, 2)    \
    XX(cudaDevAttrMaxGridDimX, 5) XX(cudaDevAttrWarpSize, 10)              \
    XX(cudaDevAttrMaxPitch, 11) XX(cudaDevAttrTextureAlignment, 14)        \
    XX(cudaDevAttrGpuOverlap, 15) XX(cudaDevAttrAsyncEngineCount, 40)      \
    XX(cudaDevAttrComputePreemptionSupported, 90)                          \
    XX(cudaDevAttrClockRate, 13) XX(cudaDevAttrMultiProcessorCount, 16)    \
    XX(cudaDevAttrIntegrated, 18) XX(cudaDevAttrCanMapHostMemory, 19)      \
    XX(cudaDevAttrPciBusId, 33) XX(cudaDevAttrPciDeviceId, 34)             \
    XX(cudaDevAttrUnifiedAddressing, 41) XX(cudaDevAttrPciDomainId, 50)    \
    XX(cudaDevAttrComputeCapabilityMajor, 75)                              \
    XX(cudaDevAttrComputeCapabilityMinor, 76)                              \
    XX(cudaDevAttrManagedMemory, 83)                                       \
    XX(cudaDevAttrConcurrentManagedAccess, 89)                             \
    XX(cudaDevAttrCooperativeLaunch, 95)                                   \
    XX(cudaDevAttrMemoryPoolsSupported, 115)
enum FAB_RT(cudaDeviceAttr) { FAB_RT_DEVICE_ATTR_LIST(FAB_RT_VALUE_) };

#define FAB_RT_FUNC_ATTRIBUTE_LIST(XX)                                     \
    XX(cudaFuncAttributeMaxDynamicSharedMemorySize, 8)                     \
    XX(cudaFuncAttributePreferredSharedMemoryCarveout, 9)
enum FAB_RT(cudaFuncAttribute) { FAB_RT_FUNC_ATTRIBUTE_LIST(FAB_RT_VALUE_) };

/* Limits (cudaDeviceSetLimit), peer attributes (cudaDeviceGetP2PAttribute),
 * user objects, capture-dependency updates and batched copies: the
 * driver's numbers under the runtime's names. */
#define FAB_RT_LIMIT_LIST(XX)                                              \
    XX(cudaLimitStackSize, 0x00) XX(cudaLimitPrintfFifoSize, 0x01)         \
    XX(cudaLimitMallocHeapSize, 0x02) XX(cudaLimitDevRuntimeSyncDepth, 0x03) \
    XX(cudaLimitDevRuntimePendingLaunchCount, 0x04)                        \
    XX(cudaLimitMaxL2FetchGranularity, 0x05) XX(cudaLimitPersistingL2CacheSize, 0x06)
enum FAB_RT(cudaLimit) { FAB_RT_LIMIT_LIST(FAB_RT_VALUE_) };

#define FAB_RT_P2P_ATTR_LIST(XX)                                           \
    XX(cudaDevP2PAttrPerformanceRank, 1) XX(cudaDevP2PAttrAccessSupported, 2) \
    XX(cudaDevP2PAttrNativeAtomicSupported, 3)                             \
    XX(cudaDevP2PAttrCudaArrayAccessSupported, 4)                          \
    XX(cudaDevP2PAttrOnlyPartialNativeAtomicSupported, 5)
enum FAB_RT(cudaDeviceP2PAttr) { FAB_RT_P2P_ATTR_LIST(FAB_RT_VALUE_) };

#define FAB_RT_USER_OBJECT_FLAGS_LIST(XX) XX(cudaUserObjectNoDestructorSync, 0x1)
enum FAB_RT(cudaUserObjectFlags) { FAB_RT_USER_OBJECT_FLAGS_LIST(FAB_RT_VALUE_) };
#define FAB_RT_USER_OBJECT_RETAIN_FLAGS_LIST(XX) XX(cudaGraphUserObjectMove, 0x1)
enum FAB_RT(cudaUserObjectRetainFlags) { FAB_RT_USER_OBJECT_RETAIN_FLAGS_LIST(FAB_RT_VALUE_) };

#define FAB_RT_CAPTURE_DEPENDENCIES_LIST(XX)                               \
    XX(cudaStreamAddCaptureDependencies, 0x0) XX(cudaStreamSetCaptureDependencies, 0x1)
enum FAB_RT(cudaStreamUpdateCaptureDependenciesFlags) {
    FAB_RT_CAPTURE_DEPENDENCIES_LIST(FAB_RT_VALUE_)
};

#define FAB_RT_SRC_ACCESS_ORDER_LIST(XX)                                   \
    XX(cudaMemcpySrcAccessOrderInvalid, 0x0) XX(cudaMemcpySrcAccessOrderStream, 0x1) \
    XX(cudaMemcpySrcAccessOrderDuringApiCall, 0x2) XX(cudaMemcpySrcAccessOrderAny, 0x3) \
    XX(cudaMemcpySrcAccessOrderMax, 0x7FFFFFFF)
enum FAB_RT(cudaMemcpySrcAccessOrder) { FAB_RT_SRC_ACCESS_ORDER_LIST(FAB_RT_VALUE_) };
#define FAB_RT_MEMCPY_FLAGS_LIST(XX)                                       \
    XX(cudaMemcpyFlagDefault, 0x0) XX(cudaMemcpyFlagPreferOverlapWithCompute, 0x1)
enum FAB_RT(cudaMemcpyFlags) { FAB_RT_MEMCPY_FLAGS_LIST(FAB_RT_VALUE_) };

/* Stream-ordered memory pools: the driver's layouts and values, under the
 * runtime's names. */
#define FAB_RT_MEM_POOL_ATTR_LIST(XX)                                      \
    XX(cudaMemPoolReuseFollowEventDependencies, 0x1)                       \
    XX(cudaMemPoolReuseAllowOpportunistic, 0x2)                            \
    XX(cudaMemPoolReuseAllowInternalDependencies, 0x3)                     \
    XX(cudaMemPoolAttrReleaseThreshold, 0x4) XX(cudaMemPoolAttrReservedMemCurrent, 0x5) \
    XX(cudaMemPoolAttrReservedMemHigh, 0x6) XX(cudaMemPoolAttrUsedMemCurrent, 0x7) \
    XX(cudaMemPoolAttrUsedMemHigh, 0x8)
enum FAB_RT(cudaMemPoolAttr) { FAB_RT_MEM_POOL_ATTR_LIST(FAB_RT_VALUE_) };

#define FAB_RT_MEM_LOCATION_TYPE_LIST(XX)                                  \
    XX(cudaMemLocationTypeInvalid, 0) XX(cudaMemLocationTypeDevice, 1)     \
    XX(cudaMemLocationTypeHost, 2) XX(cudaMemLocationTypeHostNuma, 3)      \
    XX(cudaMemLocationTypeHostNumaCurrent, 4)
enum FAB_RT(cudaMemLocationType) { FAB_RT_MEM_LOCATION_TYPE_LIST(FAB_RT_VALUE_) };

#define FAB_RT_MEM_ACCESS_FLAGS_LIST(XX)                                   \
    XX(cudaMemAccessFlagsProtNone, 0) XX(cudaMemAccessFlagsProtRead, 1)    \
    XX(cudaMemAccessFlagsProtReadWrite, 3)
enum FAB_RT(cudaMemAccessFlags) { FAB_RT_MEM_ACCESS_FLAGS_LIST(FAB_RT_VALUE_) };

#define FAB_RT_MEM_ALLOCATION_TYPE_LIST(XX)                                \
    XX(cudaMemAllocationTypeInvalid, 0x0) XX(cudaMemAllocationTypePinned, 0x1) \
    XX(cudaMemAllocationTypeManaged, 0x2) XX(cudaMemAllocationTypeMax, 0x7FFFFFFF)
enum FAB_RT(cudaMemAllocationType) { FAB_RT_MEM_ALLOCATION_TYPE_LIST(FAB_RT_VALUE_) };

#define FAB_RT_MEM_HANDLE_TYPE_LIST(XX)                                    \
    XX(cudaMemHandleTypeNone, 0x0) XX(cudaMemHandleTypePosixFileDescriptor, 0x1) \
    XX(cudaMemHandleTypeWin32, 0x2) XX(cudaMemHandleTypeWin32Kmt, 0x4)     \
    XX(cudaMemHandleTypeFabric, 0x8)
enum FAB_RT(cudaMemAllocationHandleType) { FAB_RT_MEM_HANDLE_TYPE_LIST(FAB_RT_VALUE_) };

struct FAB_RT(cudaMemLocation) {
    enum FAB_RT(cudaMemLocationType) type;
    int id;
};
struct FAB_RT(cudaMemAccessDesc) {
    struct FAB_RT(cudaMemLocation) location;
    enum FAB_RT(cudaMemAccessFlags) flags;
};
struct FAB_RT(cudaMemPoolProps) {
    enum FAB_RT(cudaMemAllocationType) allocType;
    enum FAB_RT(cudaMemAllocationHandleType) handleTypes;
    struct FAB_RT(cudaMemLocation) location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};
struct FAB_RT(cudaMemPoolPtrExportData) {
    unsigned char reserved[64];
};
typedef struct CUmemPoolHandle_st *FAB_RT(cudaMemPool_t);
struct FAB_RT(cudaMemcpyAttributes) {
    enum FAB_RT(cudaMemcpySrcAccessOrder) srcAccessOrder;
    struct FAB_RT(cudaMemLocation) srcLocHint;
    struct FAB_RT(cudaMemLocation) dstLocHint;
    unsigned int flags;
};

/* Flags (#defines in NVIDIA's headers; XX(name, value) for the check). */
#define FAB_RT_FLAG_LIST(XX)                                                \
    XX(cudaHostAllocDefault, 0x00) XX(cudaHostAllocPortable, 0x01)          \
    XX(cudaHostAllocMapped, 0x02) XX(cudaHostAllocWriteCombined, 0x04)      \
    XX(cudaHostRegisterDefault, 0x00) XX(cudaHostRegisterPortable, 0x01)    \
    XX(cudaHostRegisterMapped, 0x02) XX(cudaHostRegisterIoMemory, 0x04)     \
    XX(cudaHostRegisterReadOnly, 0x08)                                      \
    XX(cudaStreamDefault, 0x00) XX(cudaStreamNonBlocking, 0x01)             \
    XX(cudaEventDefault, 0x00) XX(cudaEventBlockingSync, 0x01)              \
    XX(cudaEventDisableTiming, 0x02) XX(cudaEventInterprocess, 0x04)        \
    XX(cudaEventRecordDefault, 0x00) XX(cudaEventRecordExternal, 0x01)      \
    XX(cudaEventWaitDefault, 0x00) XX(cudaEventWaitExternal, 0x01)          \
    XX(cudaDeviceScheduleAuto, 0x00) XX(cudaDeviceScheduleSpin, 0x01)       \
    XX(cudaDeviceScheduleYield, 0x02) XX(cudaDeviceScheduleBlockingSync, 0x04) \
    XX(cudaDeviceBlockingSync, 0x04) XX(cudaDeviceScheduleMask, 0x07)       \
    XX(cudaDeviceMapHost, 0x08) XX(cudaDeviceLmemResizeToMax, 0x10)         \
    XX(cudaDeviceSyncMemops, 0x80) XX(cudaDeviceMask, 0xff)                 \
    XX(cudaMemAttachGlobal, 0x01) XX(cudaMemAttachHost, 0x02)               \
    XX(cudaMemAttachSingle, 0x04)                                           \
    XX(cudaOccupancyDefault, 0x00) XX(cudaOccupancyDisableCachingOverride, 0x01) \
    XX(cudaCpuDeviceId, -1) XX(cudaInvalidDeviceId, -2)                     \
    XX(cudaInitDeviceFlagsAreValid, 0x01)                                   \
    XX(cudaEnableDefault, 0x0) XX(cudaEnableLegacyStream, 0x1)              \
    XX(cudaEnablePerThreadDefaultStream, 0x2)                               \
    XX(cudaIpcMemLazyEnablePeerAccess, 0x01)
#ifndef FAB_RT_ABI_ONLY
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaEventRecordDefault 0x00
#define cudaEventRecordExternal 0x01
#define cudaEventWaitDefault 0x00
#define cudaEventWaitExternal 0x01
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceSyncMemops 0x80
#define cudaDeviceMask 0xff
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
#define cudaOccupancyDefault 0x00
#define cudaOccupancyDisableCachingOverride 0x01
#define cudaCpuDeviceId ((int)-1)
#define cudaInvalidDeviceId ((int)-2)
#define cudaInitDeviceFlagsAreValid 0x01
#define cudaEnableDefault 0x0
#define cudaEnableLegacyStream 0x1
#define cudaEnablePerThreadDefaultStream 0x2
#define cudaIpcMemLazyEnablePeerAccess 0x01
#define CUDA_IPC_HANDLE_SIZE FAB_RT_IPC_HANDLE_SIZE
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#endif

/* Opaque handles: the runtime's stream and event are the driver's. */
typedef struct CUstream_st *FAB_RT(cudaStream_t);
typedef struct CUevent_st *FAB_RT(cudaEvent_t);
typedef struct CUgraph_st *FAB_RT(cudaGraph_t);
typedef struct CUgraphNode_st *FAB_RT(cudaGraphNode_t);
typedef struct CUgraphExec_st *FAB_RT(cudaGraphExec_t);
typedef struct CUkern_st *FAB_RT(cudaKernel_t);
typedef struct CUfunc_st *FAB_RT(cudaFunction_t);
typedef struct CUuserObject_st *FAB_RT(cudaUserObject_t);
typedef struct FAB_RT(cudaGraphEdgeData_st) {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} FAB_RT(cudaGraphEdgeData);

typedef void (*FAB_RT(cudaHostFn_t))(void *userData);
typedef void (*FAB_RT(cudaStreamCallback_t))(FAB_RT(cudaStream_t) stream, FAB_RT(cudaError_t) status,
                                             void *userData);

struct FAB_RT(dim3) {
    unsigned int x, y, z;
};
typedef struct FAB_RT(dim3) FAB_RT(dim3);

typedef struct FAB_RT(cudaUUID_st) {
    char bytes[16];
} FAB_RT(cudaUUID_t);

/* Legacy IPC handles: 64 opaque bytes each. */
#define FAB_RT_IPC_HANDLE_SIZE 64
typedef struct FAB_RT(cudaIpcEventHandle_st) {
    char reserved[FAB_RT_IPC_HANDLE_SIZE];
} FAB_RT(cudaIpcEventHandle_t);
typedef struct FAB_RT(cudaIpcMemHandle_st) {
    char reserved[FAB_RT_IPC_HANDLE_SIZE];
} FAB_RT(cudaIpcMemHandle_t);

/* cudaDeviceProp as CUDA 13.0 lays it out (the runtime fills what the
 * emulated device knows and zeroes the rest). */
struct FAB_RT(cudaDeviceProp) {
    char name[256];
    FAB_RT(cudaUUID_t) uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize;
    size_t memPitch;
    int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
    size_t totalConstMem;
    int major, minor;
    size_t textureAlignment, texturePitchAlignment;
    int multiProcessorCount, integrated, canMapHostMemory;
    int maxTexture1D, maxTexture1DMipmap, maxTexture2D[2], maxTexture2DMipmap[2];
    int maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3];
    int maxTextureCubemap, maxTexture1DLayered[2], maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D, maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2];
    int maxSurface2DLayered[3], maxSurfaceCubemap, maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver;
    int asyncEngineCount, unifiedAddressing, memoryBusWidth, l2CacheSize;
    int persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported;
    int globalL1CacheSupported, localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
    int hostNativeAtomicSupported, pageableMemoryAccess, concurrentManagedAccess;
    int computePreemptionSupported, canUseHostPointerForRegisteredMem, cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch;
    int unifiedFunctionPointers, deviceNumaConfig, deviceNumaId, mpsEnabled, hostNumaId;
    unsigned int gpuPciDeviceID, gpuPciSubsystemID;
    int hostNumaMultinodeIpcSupported;
    int reserved[56];
};

struct FAB_RT(cudaPointerAttributes) {
    enum FAB_RT(cudaMemoryType) type;
    int device;
    void *devicePointer;
    void *hostPointer;
    long reserved[8];
};

struct FAB_RT(cudaFuncAttributes) {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA;
    int maxDynamicSharedSizeBytes, preferredShmemCarveout, clusterDimMustBeSet;
    int requiredClusterWidth, requiredClusterHeight, requiredClusterDepth;
    int clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed;
    int reserved[16];
};

/* cudaLaunchKernelExC's configuration; its attributes are read only for
 * their count here (the emulation launches every kernel the same way). */
typedef struct FAB_RT(cudaLaunchAttribute_st) FAB_RT(cudaLaunchAttribute);
typedef struct FAB_RT(cudaLaunchConfig_st) {
    FAB_RT(dim3) gridDim;
    FAB_RT(dim3) blockDim;
    size_t dynamicSmemBytes;
    FAB_RT(cudaStream_t) stream;
    FAB_RT(cudaLaunchAttribute) *attrs;
    unsigned int numAttrs;
} FAB_RT(cudaLaunchConfig_t);

#ifndef FAB_RT_ABI_ONLY
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int *flags);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
cudaError_t cudaDeviceDisablePeerAccess(int peerDevice);
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device);
cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId);
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
cudaError_t cudaDriverGetVersion(int *driverVersion);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags);
cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device);
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device);
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool);
cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value);
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList,
                                 size_t count);
cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                 struct cudaMemLocation *location);
cudaError_t cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                               enum cudaMemAllocationHandleType handleType,
                                               unsigned int flags);
cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                 enum cudaMemAllocationHandleType handleType,
                                                 unsigned int flags);
cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *exportData, void *ptr);
cudaError_t cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool,
                                     struct cudaMemPoolPtrExportData *exportData);
cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void *devPtr);
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event);
cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr);
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags);
cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority);
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out, unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus);
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData, unsigned int flags);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args);
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize, unsigned int flags);
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol);
cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol);

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit);
cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice);
cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId);
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies, const cudaGraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags);
cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream);
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData, size_t numDependencies);
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies, size_t numDependencies, cudaEvent_t event);
cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count, unsigned int flags);
cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count);
cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy, unsigned int initialRefcount, unsigned int flags);
cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count);
cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count);
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr);
cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr);
/* NVIDIA's declares these two in cuda_profiler_api.h. */
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);

#endif /* FAB_RT_ABI_ONLY */

#ifdef __cplusplus
}
#endif

#endif /* FAB_CUDA_RUNTIME_API_H */
