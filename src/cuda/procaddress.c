/* cuGetProcAddress: how NCCL, NVSHMEM, PyTorch and cuda-python find the
 * driver's functions. The table lists every entry point the emulation has,
 * each under its base name with the CUDA version that introduced that ABI;
 * a request resolves to the newest ABI not newer than the version asked for.
 *
 * Outcomes (CUDA documents them; the issue asks for the same):
 *   found                        CUDA_SUCCESS, *pfn set, SUCCESS
 *   name unknown                 CUDA_SUCCESS, *pfn = NULL, SYMBOL_NOT_FOUND
 *   known, but only newer ABIs   CUDA_SUCCESS, *pfn = NULL, VERSION_NOT_SUFFICIENT
 *   cudaVersion > driver version, bad flags, NULL symbol/pfn
 *                                CUDA_ERROR_INVALID_VALUE, nothing written
 * The per-thread-default-stream flag picks the _ptds/_ptsz ABI of a name
 * where it has one (the second table), as NVIDIA's loader does for a program
 * built with CUDA_API_PER_THREAD_DEFAULT_STREAM. */
#include "src/cuda/entry.h"
#include "src/cuda/fault.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef void (*fab__cu_fn)(void);

typedef struct fab__cu_proc {
    const char *name;
    int version; /* the CUDA version that introduced this ABI */
    fab__cu_fn fn;
} fab__cu_proc_t;

#define P(name, version, fn) {name, version, (fab__cu_fn)(fn)}

/* Newer ABIs of a name follow older ones. */
static const fab__cu_proc_t fab__cu_procs[] = {
    P("cuGetErrorString", 6000, cuGetErrorString),
    P("cuGetErrorName", 6000, cuGetErrorName),
    P("cuInit", 2000, cuInit),
    P("cuDriverGetVersion", 2020, cuDriverGetVersion),
    P("cuDeviceGet", 2000, cuDeviceGet),
    P("cuDeviceGetCount", 2000, cuDeviceGetCount),
    P("cuDeviceGetName", 2000, cuDeviceGetName),
    P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    P("cuDeviceTotalMem", 2000, cuDeviceTotalMem),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    P("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
    P("cuDeviceGetByPCIBusId", 4010, cuDeviceGetByPCIBusId),
    P("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    P("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    P("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    P("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    P("cuCtxCreate", 2000, cuCtxCreate),
    P("cuCtxCreate", 3020, cuCtxCreate_v2),
    P("cuCtxCreate", 11040, cuCtxCreate_v3),
    P("cuCtxCreate", 12050, cuCtxCreate_v4),
    P("cuCtxDestroy", 2000, cuCtxDestroy),
    P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice),
    P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    P("cuCtxSynchronize", 2000, cuCtxSynchronize),
    P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    P("cuProfilerStart", 4000, cuProfilerStart),
    P("cuProfilerStop", 4000, cuProfilerStop),
    P("cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess),
    P("cuCtxDisablePeerAccess", 4000, cuCtxDisablePeerAccess),
    P("cuDeviceGetP2PAttribute", 8000, cuDeviceGetP2PAttribute),
    P("cuCtxSetLimit", 3010, cuCtxSetLimit),
    P("cuCtxGetLimit", 3010, cuCtxGetLimit),
    P("cuCtxSetFlags", 12010, cuCtxSetFlags),
    P("cuFlushGPUDirectRDMAWrites", 11030, cuFlushGPUDirectRDMAWrites),
    P("cuGetProcAddress", 11030, cuGetProcAddress),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    P("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    P("cuMemCreate", 10020, cuMemCreate),
    P("cuMemRelease", 10020, cuMemRelease),
    P("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle),
    P("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle),
    P("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
    P("cuMemGetAllocationPropertiesFromHandle", 10020, cuMemGetAllocationPropertiesFromHandle),
    P("cuMemAddressReserve", 10020, cuMemAddressReserve),
    P("cuMemAddressFree", 10020, cuMemAddressFree),
    P("cuMemMap", 10020, cuMemMap),
    P("cuMemUnmap", 10020, cuMemUnmap),
    P("cuMemSetAccess", 10020, cuMemSetAccess),
    P("cuMemGetAccess", 10020, cuMemGetAccess),
    P("cuMemGetHandleForAddressRange", 11070, cuMemGetHandleForAddressRange),
    P("cuMemMapArrayAsync", 11010, cuMemMapArrayAsync),
    P("cuMemGetAddressRange", 2000, cuMemGetAddressRange),
    P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    P("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
    P("cuMemcpy", 4000, cuMemcpy),
    P("cuMemcpyAsync", 4000, cuMemcpyAsync),
    P("cuMemcpyHtoD", 2000, cuMemcpyHtoD),
    P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    P("cuMemcpyDtoH", 2000, cuMemcpyDtoH),
    P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    P("cuMemcpyDtoD", 2000, cuMemcpyDtoD),
    P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
    P("cuMemcpyHtoDAsync", 2000, cuMemcpyHtoDAsync),
    P("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
    P("cuMemcpyDtoHAsync", 2000, cuMemcpyDtoHAsync),
    P("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
    P("cuMemcpyDtoDAsync", 3000, cuMemcpyDtoDAsync),
    P("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
    P("cuMemsetD8", 2000, cuMemsetD8),
    P("cuMemsetD8", 3020, cuMemsetD8_v2),
    P("cuMemsetD32", 2000, cuMemsetD32),
    P("cuMemsetD32", 3020, cuMemsetD32_v2),
    P("cuMemsetD8Async", 3020, cuMemsetD8Async),
    P("cuMemsetD32Async", 3020, cuMemsetD32Async),
    P("cuStreamCreate", 2000, cuStreamCreate),
    P("cuStreamDestroy", 2000, cuStreamDestroy),
    P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    P("cuStreamSynchronize", 2000, cuStreamSynchronize),
    P("cuStreamQuery", 2000, cuStreamQuery),
    /* contexts, memory, streams and events (docs/cuda.md, "Memory, streams
     * and events"); versions as NVIDIA's cudaTypedefs.h names them */
    P("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
    P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    P("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
    P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    P("cuCtxGetFlags", 7000, cuCtxGetFlags),
    P("cuCtxGetId", 12000, cuCtxGetId),
    P("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange),
    P("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    P("cuMemAlloc", 2000, cuMemAlloc),
    P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemFree", 2000, cuMemFree),
    P("cuMemFree", 3020, cuMemFree_v2),
    P("cuMemGetInfo", 2000, cuMemGetInfo),
    P("cuMemAllocPitch", 2000, cuMemAllocPitch),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    P("cuMemAllocManaged", 6000, cuMemAllocManaged),
    P("cuMemAllocHost", 2000, cuMemAllocHost),
    P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    P("cuMemHostAlloc", 2020, cuMemHostAlloc),
    P("cuMemFreeHost", 2000, cuMemFreeHost),
    P("cuMemHostRegister", 4000, cuMemHostRegister),
    P("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    P("cuMemHostUnregister", 4000, cuMemHostUnregister),
    P("cuMemHostGetDevicePointer", 2020, cuMemHostGetDevicePointer),
    P("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    P("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
    P("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
    P("cuPointerSetAttribute", 6000, cuPointerSetAttribute),
    P("cuMemcpyPeer", 4000, cuMemcpyPeer),
    P("cuMemcpyPeerAsync", 4000, cuMemcpyPeerAsync),
    P("cuMemcpy2D", 2000, cuMemcpy2D),
    P("cuMemcpy2D", 3020, cuMemcpy2D_v2),
    P("cuMemcpy2DUnaligned", 2000, cuMemcpy2DUnaligned),
    P("cuMemcpy2DUnaligned", 3020, cuMemcpy2DUnaligned_v2),
    P("cuMemcpy2DAsync", 2000, cuMemcpy2DAsync),
    P("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2),
    P("cuMemcpy3D", 2000, cuMemcpy3D),
    P("cuMemcpy3D", 3020, cuMemcpy3D_v2),
    P("cuMemcpy3DAsync", 2000, cuMemcpy3DAsync),
    P("cuMemcpy3DAsync", 3020, cuMemcpy3DAsync_v2),
    P("cuStreamGetDevice", 12080, cuStreamGetDevice),
    P("cuMemsetD16", 2000, cuMemsetD16),
    P("cuMemsetD16", 3020, cuMemsetD16_v2),
    P("cuMemsetD16Async", 3020, cuMemsetD16Async),
    P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    P("cuStreamGetFlags", 5050, cuStreamGetFlags),
    P("cuStreamGetPriority", 5050, cuStreamGetPriority),
    P("cuStreamGetId", 12000, cuStreamGetId),
    P("cuStreamGetCtx", 9020, cuStreamGetCtx),
    P("cuStreamGetCtx", 12050, cuStreamGetCtx_v2),
    P("cuStreamWaitEvent", 3020, cuStreamWaitEvent),
    P("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    P("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo),
    P("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2),
    P("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    P("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
    P("cuStreamAddCallback", 5000, cuStreamAddCallback),
    P("cuStreamWriteValue32", 8000, cuStreamWriteValue32),
    P("cuStreamWriteValue32", 11070, cuStreamWriteValue32_v2),
    P("cuStreamWaitValue32", 8000, cuStreamWaitValue32),
    P("cuStreamWaitValue32", 11070, cuStreamWaitValue32_v2),
    P("cuStreamWriteValue64", 9000, cuStreamWriteValue64),
    P("cuStreamWriteValue64", 11070, cuStreamWriteValue64_v2),
    P("cuStreamWaitValue64", 9000, cuStreamWaitValue64),
    P("cuStreamWaitValue64", 11070, cuStreamWaitValue64_v2),
    P("cuStreamBatchMemOp", 8000, cuStreamBatchMemOp),
    P("cuStreamBatchMemOp", 11070, cuStreamBatchMemOp_v2),
    P("cuEventCreate", 2000, cuEventCreate),
    P("cuEventRecord", 2000, cuEventRecord),
    P("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags),
    P("cuEventQuery", 2000, cuEventQuery),
    P("cuEventSynchronize", 2000, cuEventSynchronize),
    P("cuEventDestroy", 2000, cuEventDestroy),
    P("cuEventDestroy", 4000, cuEventDestroy_v2),
    P("cuEventElapsedTime", 2000, cuEventElapsedTime),
    P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    /* code objects and launches (docs/cuda.md, "Code objects and kernels") */
    P("cuModuleLoad", 2000, cuModuleLoad),
    P("cuModuleLoadData", 2000, cuModuleLoadData),
    P("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    P("cuModuleLoadFatBinary", 2000, cuModuleLoadFatBinary),
    P("cuModuleUnload", 2000, cuModuleUnload),
    P("cuModuleGetFunction", 2000, cuModuleGetFunction),
    P("cuModuleGetGlobal", 2000, cuModuleGetGlobal),
    P("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    P("cuModuleGetLoadingMode", 11070, cuModuleGetLoadingMode),
    P("cuLinkCreate", 5050, cuLinkCreate),
    P("cuLinkCreate", 6050, cuLinkCreate_v2),
    P("cuLinkAddData", 5050, cuLinkAddData),
    P("cuLinkAddData", 6050, cuLinkAddData_v2),
    P("cuLinkAddFile", 5050, cuLinkAddFile),
    P("cuLinkAddFile", 6050, cuLinkAddFile_v2),
    P("cuLinkComplete", 5050, cuLinkComplete),
    P("cuLinkDestroy", 5050, cuLinkDestroy),
    P("cuLibraryLoadData", 12000, cuLibraryLoadData),
    P("cuLibraryLoadFromFile", 12000, cuLibraryLoadFromFile),
    P("cuLibraryUnload", 12000, cuLibraryUnload),
    P("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    P("cuLibraryGetGlobal", 12000, cuLibraryGetGlobal),
    P("cuLibraryGetModule", 12000, cuLibraryGetModule),
    P("cuKernelGetFunction", 12000, cuKernelGetFunction),
    P("cuKernelGetAttribute", 12000, cuKernelGetAttribute),
    P("cuKernelSetAttribute", 12000, cuKernelSetAttribute),
    P("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    P("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    P("cuFuncSetCacheConfig", 3000, cuFuncSetCacheConfig),
    P("cuKernelSetCacheConfig", 12000, cuKernelSetCacheConfig),
    P("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
      cuOccupancyMaxActiveBlocksPerMultiprocessor),
    P("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000,
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    P("cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize),
    P("cuLaunchKernel", 4000, cuLaunchKernel),
    P("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    P("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
    /* legacy CUDA IPC (docs/cuda.md, "Legacy IPC") */
    P("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
    P("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
    P("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
    P("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    P("cuIpcGetEventHandle", 4010, cuIpcGetEventHandle),
    P("cuIpcOpenEventHandle", 4010, cuIpcOpenEventHandle),
    P("cuGetExportTable", 3000, cuGetExportTable),
    /* Stream-ordered memory pools (poolapi.c, poolshare.c): all came with CUDA 11.2. */
    P("cuMemPoolCreate", 11020, cuMemPoolCreate),
    P("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    P("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
    P("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
    P("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
    P("cuMemPoolSetAccess", 11020, cuMemPoolSetAccess),
    P("cuMemPoolGetAccess", 11020, cuMemPoolGetAccess),
    P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    P("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
    P("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool),
    P("cuMemAllocAsync", 11020, cuMemAllocAsync),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync),
    P("cuMemPoolExportToShareableHandle", 11020, cuMemPoolExportToShareableHandle),
    P("cuMemPoolImportFromShareableHandle", 11020, cuMemPoolImportFromShareableHandle),
    P("cuMemPoolExportPointer", 11020, cuMemPoolExportPointer),
    P("cuMemPoolImportPointer", 11020, cuMemPoolImportPointer),
    P("cuMulticastCreate", 12010, cuMulticastCreate),
    P("cuMulticastAddDevice", 12010, cuMulticastAddDevice),
    P("cuMulticastBindMem", 12010, cuMulticastBindMem),
    P("cuMulticastBindAddr", 12010, cuMulticastBindAddr),
    P("cuMulticastUnbind", 12010, cuMulticastUnbind),
    P("cuMulticastGetGranularity", 12010, cuMulticastGetGranularity),
    /* Older and rarer entry points (legacy.c, docs/cuda.md "Older entry points"). */
    P("cuCtxAttach", 2000, cuCtxAttach),
    P("cuCtxDetach", 2000, cuCtxDetach),
    P("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
    P("cuCtxGetCacheConfig", 3020, cuCtxGetCacheConfig),
    P("cuCtxSetCacheConfig", 3020, cuCtxSetCacheConfig),
    P("cuCtxGetSharedMemConfig", 4020, cuCtxGetSharedMemConfig),
    P("cuCtxSetSharedMemConfig", 4020, cuCtxSetSharedMemConfig),
    P("cuStreamAttachMemAsync", 6000, cuStreamAttachMemAsync),
    P("cuProfilerInitialize", 4000, cuProfilerInitialize),
    P("cuArrayCreate", 2000, cuArrayCreate),
    P("cuArrayCreate", 3020, cuArrayCreate_v2),
    P("cuArrayGetDescriptor", 2000, cuArrayGetDescriptor),
    P("cuArrayGetDescriptor", 3020, cuArrayGetDescriptor_v2),
    P("cuArrayDestroy", 2000, cuArrayDestroy),
    P("cuArray3DCreate", 2000, cuArray3DCreate),
    P("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    P("cuArray3DGetDescriptor", 2000, cuArray3DGetDescriptor),
    P("cuArray3DGetDescriptor", 3020, cuArray3DGetDescriptor_v2),
    P("cuMemcpyAtoA", 2000, cuMemcpyAtoA),
    P("cuMemcpyAtoA", 3020, cuMemcpyAtoA_v2),
    P("cuMemcpyAtoD", 2000, cuMemcpyAtoD),
    P("cuMemcpyAtoD", 3020, cuMemcpyAtoD_v2),
    P("cuMemcpyAtoH", 2000, cuMemcpyAtoH),
    P("cuMemcpyAtoH", 3020, cuMemcpyAtoH_v2),
    P("cuMemcpyDtoA", 2000, cuMemcpyDtoA),
    P("cuMemcpyDtoA", 3020, cuMemcpyDtoA_v2),
    P("cuMemcpyHtoA", 2000, cuMemcpyHtoA),
    P("cuMemcpyHtoA", 3020, cuMemcpyHtoA_v2),
    P("cuMemcpy3DPeer", 4000, cuMemcpy3DPeer),
    P("cuMemcpy3DPeerAsync", 4000, cuMemcpy3DPeerAsync),
    P("cuModuleGetTexRef", 2000, cuModuleGetTexRef),
    P("cuModuleGetSurfRef", 3000, cuModuleGetSurfRef),
    P("cuTexRefCreate", 2000, cuTexRefCreate),
    P("cuTexRefDestroy", 2000, cuTexRefDestroy),
    P("cuTexRefSetArray", 2000, cuTexRefSetArray),
    P("cuTexRefSetAddress", 2000, cuTexRefSetAddress),
    P("cuTexRefSetAddress", 3020, cuTexRefSetAddress_v2),
    P("cuTexRefSetAddress2D", 2020, cuTexRefSetAddress2D),
    P("cuTexRefSetAddress2D", 3020, cuTexRefSetAddress2D_v2),
    P("cuTexRefSetAddress2D", 4010, cuTexRefSetAddress2D_v3),
    P("cuTexRefSetFormat", 2000, cuTexRefSetFormat),
    P("cuTexRefSetAddressMode", 2000, cuTexRefSetAddressMode),
    P("cuTexRefSetFilterMode", 2000, cuTexRefSetFilterMode),
    P("cuTexRefSetFlags", 2000, cuTexRefSetFlags),
    P("cuTexRefGetAddress", 2000, cuTexRefGetAddress),
    P("cuTexRefGetAddress", 3020, cuTexRefGetAddress_v2),
    P("cuTexRefGetArray", 2000, cuTexRefGetArray),
    P("cuTexRefGetAddressMode", 2000, cuTexRefGetAddressMode),
    P("cuTexRefGetFilterMode", 2000, cuTexRefGetFilterMode),
    P("cuTexRefGetFormat", 2000, cuTexRefGetFormat),
    P("cuTexRefGetFlags", 2000, cuTexRefGetFlags),
    P("cuSurfRefSetArray", 3000, cuSurfRefSetArray),
    P("cuSurfRefGetArray", 3000, cuSurfRefGetArray),
    P("cuParamSetTexRef", 2000, cuParamSetTexRef),
    P("cuFuncSetBlockShape", 2000, cuFuncSetBlockShape),
    P("cuFuncSetSharedSize", 2000, cuFuncSetSharedSize),
    P("cuParamSetSize", 2000, cuParamSetSize),
    P("cuParamSeti", 2000, cuParamSeti),
    P("cuParamSetf", 2000, cuParamSetf),
    P("cuParamSetv", 2000, cuParamSetv),
    P("cuLaunch", 2000, cuLaunch),
    P("cuLaunchGrid", 2000, cuLaunchGrid),
    P("cuLaunchGridAsync", 2000, cuLaunchGridAsync),
    P("cuMemsetD2D8", 2000, cuMemsetD2D8),
    P("cuMemsetD2D8", 3020, cuMemsetD2D8_v2),
    P("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async),
    P("cuMemsetD2D16", 2000, cuMemsetD2D16),
    P("cuMemsetD2D16", 3020, cuMemsetD2D16_v2),
    P("cuMemsetD2D16Async", 3020, cuMemsetD2D16Async),
    P("cuMemsetD2D32", 2000, cuMemsetD2D32),
    P("cuMemsetD2D32", 3020, cuMemsetD2D32_v2),
    P("cuMemsetD2D32Async", 3020, cuMemsetD2D32Async),
};

/* The per-thread-default-stream ABIs (_ptds, _ptsz), which
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM asks for; a name without one
 * resolves through the table above. Declared in entry.h, so that the
 * compiler compares each with its definition (copy.c, memop.c, stream.c,
 * streamapi.c, event.c, launch.c, poolapi.c, vmm.c, legacy.c). */

static const fab__cu_proc_t fab__cu_procs_ptds[] = {
    P("cuMemMapArrayAsync", 11010, cuMemMapArrayAsync_ptsz),
    P("cuMemcpy", 7000, cuMemcpy_ptds),
    P("cuMemcpyAsync", 7000, cuMemcpyAsync_ptsz),
    P("cuMemcpyHtoD", 7000, cuMemcpyHtoD_v2_ptds),
    P("cuMemcpyDtoH", 7000, cuMemcpyDtoH_v2_ptds),
    P("cuMemcpyDtoD", 7000, cuMemcpyDtoD_v2_ptds),
    P("cuMemcpyHtoDAsync", 7000, cuMemcpyHtoDAsync_v2_ptsz),
    P("cuMemcpyDtoHAsync", 7000, cuMemcpyDtoHAsync_v2_ptsz),
    P("cuMemcpyDtoDAsync", 7000, cuMemcpyDtoDAsync_v2_ptsz),
    P("cuMemcpyPeer", 7000, cuMemcpyPeer_ptds),
    P("cuMemcpyPeerAsync", 7000, cuMemcpyPeerAsync_ptsz),
    P("cuMemcpy2D", 7000, cuMemcpy2D_v2_ptds),
    P("cuMemcpy2DUnaligned", 7000, cuMemcpy2DUnaligned_v2_ptds),
    P("cuMemcpy2DAsync", 7000, cuMemcpy2DAsync_v2_ptsz),
    P("cuMemcpy3D", 7000, cuMemcpy3D_v2_ptds),
    P("cuMemcpy3DAsync", 7000, cuMemcpy3DAsync_v2_ptsz),
    P("cuStreamGetDevice", 12080, cuStreamGetDevice_ptsz),
    P("cuMemsetD8", 7000, cuMemsetD8_v2_ptds),
    P("cuMemsetD16", 7000, cuMemsetD16_v2_ptds),
    P("cuMemsetD32", 7000, cuMemsetD32_v2_ptds),
    P("cuMemsetD8Async", 7000, cuMemsetD8Async_ptsz),
    P("cuMemsetD16Async", 7000, cuMemsetD16Async_ptsz),
    P("cuMemsetD32Async", 7000, cuMemsetD32Async_ptsz),
    P("cuMemsetD2D8", 7000, cuMemsetD2D8_v2_ptds),
    P("cuMemsetD2D8Async", 7000, cuMemsetD2D8Async_ptsz),
    P("cuMemsetD2D16", 7000, cuMemsetD2D16_v2_ptds),
    P("cuMemsetD2D16Async", 7000, cuMemsetD2D16Async_ptsz),
    P("cuMemsetD2D32", 7000, cuMemsetD2D32_v2_ptds),
    P("cuMemsetD2D32Async", 7000, cuMemsetD2D32Async_ptsz),
    P("cuMemcpyAtoA", 7000, cuMemcpyAtoA_v2_ptds),
    P("cuMemcpyAtoD", 7000, cuMemcpyAtoD_v2_ptds),
    P("cuMemcpyAtoH", 7000, cuMemcpyAtoH_v2_ptds),
    P("cuMemcpyDtoA", 7000, cuMemcpyDtoA_v2_ptds),
    P("cuMemcpyHtoA", 7000, cuMemcpyHtoA_v2_ptds),
    P("cuMemcpy3DPeer", 7000, cuMemcpy3DPeer_ptds),
    P("cuMemcpy3DPeerAsync", 7000, cuMemcpy3DPeerAsync_ptsz),
    P("cuStreamAttachMemAsync", 7000, cuStreamAttachMemAsync_ptsz),
    P("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
    P("cuStreamQuery", 7000, cuStreamQuery_ptsz),
    P("cuStreamGetFlags", 7000, cuStreamGetFlags_ptsz),
    P("cuStreamGetPriority", 7000, cuStreamGetPriority_ptsz),
    P("cuStreamGetId", 12000, cuStreamGetId_ptsz),
    P("cuStreamGetCtx", 9020, cuStreamGetCtx_ptsz),
    P("cuStreamGetCtx", 12050, cuStreamGetCtx_v2_ptsz),
    P("cuStreamWaitEvent", 7000, cuStreamWaitEvent_ptsz),
    P("cuStreamIsCapturing", 10000, cuStreamIsCapturing_ptsz),
    P("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo_ptsz),
    P("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2_ptsz),
    P("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3_ptsz),
    P("cuLaunchHostFunc", 10000, cuLaunchHostFunc_ptsz),
    P("cuStreamAddCallback", 7000, cuStreamAddCallback_ptsz),
    P("cuEventRecord", 7000, cuEventRecord_ptsz),
    P("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags_ptsz),
    P("cuStreamWriteValue32", 8000, cuStreamWriteValue32_ptsz),
    P("cuStreamWriteValue32", 11070, cuStreamWriteValue32_v2_ptsz),
    P("cuStreamWaitValue32", 8000, cuStreamWaitValue32_ptsz),
    P("cuStreamWaitValue32", 11070, cuStreamWaitValue32_v2_ptsz),
    P("cuStreamWriteValue64", 9000, cuStreamWriteValue64_ptsz),
    P("cuStreamWriteValue64", 11070, cuStreamWriteValue64_v2_ptsz),
    P("cuStreamWaitValue64", 9000, cuStreamWaitValue64_ptsz),
    P("cuStreamWaitValue64", 11070, cuStreamWaitValue64_v2_ptsz),
    P("cuStreamBatchMemOp", 8000, cuStreamBatchMemOp_ptsz),
    P("cuStreamBatchMemOp", 11070, cuStreamBatchMemOp_v2_ptsz),
    P("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    P("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    P("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel_ptsz),
    P("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
};

#undef P

/* The newest ABI of symbol in table not newer than version; *named is set
 * when the table has the name at all. */
static const fab__cu_proc_t *fab__cu_proc_find(const fab__cu_proc_t *table, size_t n,
                                               const char *symbol, int version, bool *named)
{
    const fab__cu_proc_t *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const fab__cu_proc_t *p = &table[i];
        if (strcmp(p->name, symbol) != 0)
            continue;
        *named = true;
        if (p->version <= version && (!best || p->version > best->version))
            best = p;
    }
    return best;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    const cuuint64_t known = CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (!symbol || !pfn || (flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    int driver;
    cuDriverGetVersion(&driver);
    if (cudaVersion > driver)
        return CUDA_ERROR_INVALID_VALUE;

    const fab__cu_proc_t *best = NULL;
    bool named = false;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        best = fab__cu_proc_find(fab__cu_procs_ptds,
                                 sizeof(fab__cu_procs_ptds) / sizeof(fab__cu_procs_ptds[0]),
                                 symbol, cudaVersion, &named);
    if (!best)
        best = fab__cu_proc_find(fab__cu_procs, sizeof(fab__cu_procs) / sizeof(fab__cu_procs[0]),
                                 symbol, cudaVersion, &named);
    void *found = NULL;
    if (best) /* ISO C has no cast from function to object pointer; copy the bits */
        memcpy(&found, &best->fn, sizeof(found));
    *pfn = found;
    if (symbolStatus)
        *symbolStatus = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                        : named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

/* The CUDA 11.3 ABI has no status argument, so it says "not there" with its
 * result: CUDA_ERROR_NOT_FOUND, as CUDA 11's documentation of the call gives
 * for an unknown name and for a version below the function's first. A
 * caller of this ABI (NVSHMEM's loader is one) that checks only the result
 * would otherwise take a NULL pointer for a function that exists. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, &status);
    if (r == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS)
        return CUDA_ERROR_NOT_FOUND;
    return r;
}

/* ---- names for FABMEM_FAULTS --------------------------------------------------- */

/* Whether name is a base name of the table: what a FABMEM_FAULTS spec may
 * name. fault.c sits low in the module order and cannot call up here, so
 * this lookup is handed down to it when the library is loaded, before any
 * program code can call cuInit (fault.c's top comment). */
static bool fab__cu_proc_named(const char *name)
{
    bool named = false;
    fab__cu_proc_find(fab__cu_procs, sizeof(fab__cu_procs) / sizeof(fab__cu_procs[0]), name,
                      1 << 30, &named);
    if (!named)
        fab__cu_proc_find(fab__cu_procs_ptds,
                          sizeof(fab__cu_procs_ptds) / sizeof(fab__cu_procs_ptds[0]), name,
                          1 << 30, &named);
    return named;
}

__attribute__((constructor)) static void fab__cu_proc_names_register(void)
{
    fab__cu_fault_set_names(fab__cu_proc_named);
}
