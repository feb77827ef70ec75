/* A cuda.h for machines without NVIDIA's toolkit: the subset of the CUDA 13.0
 * driver API that fabmem's driver emulation implements, with CUDA's names,
 * values, layouts and the same versioned-name mapping (#define cuMemcpyHtoD
 * cuMemcpyHtoD_v2, ...), so that a program written against NVIDIA's cuda.h
 * compiles unchanged against this one as long as it stays inside the subset.
 * Types and values come from src/cuda/cuda_abi.h, which is checked against
 * NVIDIA's header wherever that is installed (tests/cuda/test_cuda_abi.c).
 * It is used only where NVIDIA's cuda.h is absent. */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__

#include "../cuda_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_VERSION 13000
#define CUDAAPI
#define CUDA_CB
#define CU_IPC_HANDLE_SIZE FAB_CU_IPC_HANDLE_SIZE
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_DEVICE_CPU ((CUdevice)-1)
#define CU_DEVICE_INVALID ((CUdevice)-2)

typedef uint32_t cuuint32_t;
typedef CUdeviceptr CUdeviceptr_v2;
typedef CUmemFabricHandle CUmemFabricHandle_v1;
typedef CUmemAllocationProp CUmemAllocationProp_v1;
typedef CUmemAccessDesc CUmemAccessDesc_v1;
typedef CUmemLocation CUmemLocation_v1;

#define cuDeviceTotalMem cuDeviceTotalMem_v2
#define cuCtxCreate cuCtxCreate_v4
#define cuCtxDestroy cuCtxDestroy_v2
#define cuStreamDestroy cuStreamDestroy_v2
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuDevicePrimaryCtxReset cuDevicePrimaryCtxReset_v2
#define cuDeviceGetUuid cuDeviceGetUuid_v2
#define cuGetProcAddress cuGetProcAddress_v2
#define cuMemGetAddressRange cuMemGetAddressRange_v2
#define cuMemGetInfo cuMemGetInfo_v2
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemcpyHtoD cuMemcpyHtoD_v2_ptds
#define cuMemcpyDtoH cuMemcpyDtoH_v2_ptds
#define cuMemcpyDtoD cuMemcpyDtoD_v2_ptds
#define cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2_ptsz
#define cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2_ptsz
#define cuMemcpyDtoDAsync cuMemcpyDtoDAsync_v2_ptsz
#define cuMemsetD8 cuMemsetD8_v2_ptds
#define cuMemsetD32 cuMemsetD32_v2_ptds
#define cuMemcpy cuMemcpy_ptds
#define cuMemcpyAsync cuMemcpyAsync_ptsz
#define cuMemsetD8Async cuMemsetD8Async_ptsz
#define cuMemsetD32Async cuMemsetD32Async_ptsz
#define cuStreamSynchronize cuStreamSynchronize_ptsz
#define cuStreamQuery cuStreamQuery_ptsz
#else
#define cuMemcpyHtoD cuMemcpyHtoD_v2
#define cuMemcpyDtoH cuMemcpyDtoH_v2
#define cuMemcpyDtoD cuMemcpyDtoD_v2
#define cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2
#define cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2
#define cuMemcpyDtoDAsync cuMemcpyDtoDAsync_v2
#define cuMemsetD8 cuMemsetD8_v2
#define cuMemsetD32 cuMemsetD32_v2
#endif

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr);
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal);
CUresult CUDAAPI cuDeviceGetCount(int *count);
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev);
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId);
CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                             unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxGetDevice(CUdevice *device);
CUresult CUDAAPI cuCtxSynchronize(void);
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext);
CUresult CUDAAPI cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                         CUdevice dstDevice);
CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value);
CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option);
CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags);
CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle,
                                              CUmemGenericAllocationHandle handle,
                                              CUmemAllocationHandleType handleType,
                                              unsigned long long flags);
CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                                void *osHandle,
                                                CUmemAllocationHandleType shHandleType);
CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);
CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                        CUmemGenericAllocationHandle handle);
CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags);
CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count);
CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
                                CUdeviceptr ptr);
CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total);
CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                 CUstream hStream);
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                  CUstream hStream);

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult CUDAAPI cuStreamDestroy(CUstream hStream);
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream);
CUresult CUDAAPI cuStreamQuery(CUstream hStream);

/* Contexts, memory, streams and events. */
#define CU_MEM_ATTACH_GLOBAL FAB_CU_MEM_ATTACH_GLOBAL
#define CU_MEM_ATTACH_HOST FAB_CU_MEM_ATTACH_HOST
#define CU_MEM_ATTACH_SINGLE FAB_CU_MEM_ATTACH_SINGLE
#define CU_MEMHOSTALLOC_PORTABLE FAB_CU_MEMHOSTALLOC_PORTABLE
#define CU_MEMHOSTALLOC_DEVICEMAP FAB_CU_MEMHOSTALLOC_DEVICEMAP
#define CU_MEMHOSTALLOC_WRITECOMBINED FAB_CU_MEMHOSTALLOC_WRITECOMBINED
#define CU_MEMHOSTREGISTER_PORTABLE FAB_CU_MEMHOSTREGISTER_PORTABLE
#define CU_MEMHOSTREGISTER_DEVICEMAP FAB_CU_MEMHOSTREGISTER_DEVICEMAP
#define CU_MEMHOSTREGISTER_IOMEMORY FAB_CU_MEMHOSTREGISTER_IOMEMORY
#define CU_MEMHOSTREGISTER_READ_ONLY FAB_CU_MEMHOSTREGISTER_READ_ONLY
typedef CUDA_MEMCPY2D CUDA_MEMCPY2D_v2;
typedef CUDA_MEMCPY3D CUDA_MEMCPY3D_v2;
typedef CUstreamBatchMemOpParams CUstreamBatchMemOpParams_v1;

#define cuCtxPopCurrent cuCtxPopCurrent_v2
#define cuCtxPushCurrent cuCtxPushCurrent_v2
#define cuMemAlloc cuMemAlloc_v2
#define cuMemAllocPitch cuMemAllocPitch_v2
#define cuMemFree cuMemFree_v2
#define cuMemAllocHost cuMemAllocHost_v2
#define cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2
#define cuMemHostRegister cuMemHostRegister_v2
#define cuEventDestroy cuEventDestroy_v2
#define cuEventElapsedTime cuEventElapsedTime_v2
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemcpy2D cuMemcpy2D_v2_ptds
#define cuMemcpy2DUnaligned cuMemcpy2DUnaligned_v2_ptds
#define cuMemcpy2DAsync cuMemcpy2DAsync_v2_ptsz
#define cuMemcpy3D cuMemcpy3D_v2_ptds
#define cuMemcpy3DAsync cuMemcpy3DAsync_v2_ptsz
#define cuStreamGetDevice cuStreamGetDevice_ptsz
#define cuMemsetD16 cuMemsetD16_v2_ptds
#define cuMemcpyPeer cuMemcpyPeer_ptds
#define cuMemcpyPeerAsync cuMemcpyPeerAsync_ptsz
#define cuMemsetD16Async cuMemsetD16Async_ptsz
#define cuStreamWriteValue32 cuStreamWriteValue32_v2_ptsz
#define cuStreamWaitValue32 cuStreamWaitValue32_v2_ptsz
#define cuStreamWriteValue64 cuStreamWriteValue64_v2_ptsz
#define cuStreamWaitValue64 cuStreamWaitValue64_v2_ptsz
#define cuStreamBatchMemOp cuStreamBatchMemOp_v2_ptsz
#define cuStreamGetCaptureInfo cuStreamGetCaptureInfo_v3_ptsz
#define cuStreamGetPriority cuStreamGetPriority_ptsz
#define cuStreamGetId cuStreamGetId_ptsz
#define cuStreamGetFlags cuStreamGetFlags_ptsz
#define cuStreamGetCtx cuStreamGetCtx_ptsz
#define cuStreamWaitEvent cuStreamWaitEvent_ptsz
#define cuStreamIsCapturing cuStreamIsCapturing_ptsz
#define cuStreamAddCallback cuStreamAddCallback_ptsz
#define cuEventRecord cuEventRecord_ptsz
#define cuEventRecordWithFlags cuEventRecordWithFlags_ptsz
#define cuLaunchHostFunc cuLaunchHostFunc_ptsz
#else
#define cuMemcpy2D cuMemcpy2D_v2
#define cuMemcpy2DUnaligned cuMemcpy2DUnaligned_v2
#define cuMemcpy2DAsync cuMemcpy2DAsync_v2
#define cuMemcpy3D cuMemcpy3D_v2
#define cuMemcpy3DAsync cuMemcpy3DAsync_v2
#define cuMemsetD16 cuMemsetD16_v2
#define cuStreamWriteValue32 cuStreamWriteValue32_v2
#define cuStreamWaitValue32 cuStreamWaitValue32_v2
#define cuStreamWriteValue64 cuStreamWriteValue64_v2
#define cuStreamWaitValue64 cuStreamWaitValue64_v2
#define cuStreamBatchMemOp cuStreamBatchMemOp_v2
#define cuStreamGetCaptureInfo cuStreamGetCaptureInfo_v3
#endif

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx);
/* cudaProfiler.h's two calls. */
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags);
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                 size_t Height, unsigned int ElementSizeBytes);
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr);
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize);
CUresult CUDAAPI cuMemFreeHost(void *p);
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags);
CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p);
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostUnregister(void *p);
CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                        CUpointer_attribute *attributes, void **data,
                                        CUdeviceptr ptr);
CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute,
                                       CUdeviceptr ptr);
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount);
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3D(const CUDA_MEMCPY3D *pCopy);
CUresult CUDAAPI cuMemcpy3DAsync(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device);
CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N);
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                  CUstream hStream);
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority);
CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags);
CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId);
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags);
CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out);
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                     unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                     unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                      unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                      unsigned int flags);
CUresult CUDAAPI cuStreamBatchMemOp(CUstream stream, unsigned int count,
                                    CUstreamBatchMemOpParams *paramArray, unsigned int flags);
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult CUDAAPI cuEventQuery(CUevent hEvent);
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent);
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
/* As NVIDIA's cuda.h: with neither stream flag, a per-thread build asks for
 * the per-thread ABIs. */
static inline CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **funcPtr,
                                                int driverVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    if ((flags & (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) == 0)
        flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    return cuGetProcAddress_v2(symbol, funcPtr, driverVersion, flags, symbolStatus);
}
#undef cuGetProcAddress
#define cuGetProcAddress cuGetProcAddress_v2_ptsz
#endif
/* Code objects and kernels. */
#define CU_LAUNCH_PARAM_END ((void *)FAB_CU_LAUNCH_PARAM_END_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)FAB_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)FAB_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
#define cuModuleGetGlobal cuModuleGetGlobal_v2
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuLaunchKernel cuLaunchKernel_ptsz
#define cuLaunchKernelEx cuLaunchKernelEx_ptsz
#define cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz
#endif
CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname);
CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image);
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues);
CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
CUresult CUDAAPI cuModuleUnload(CUmodule hmod);
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                   const char *name);
CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode);
#define cuLinkCreate cuLinkCreate_v2
#define cuLinkAddData cuLinkAddData_v2
#define cuLinkAddFile cuLinkAddFile_v2
CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut);
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int numOptions, CUjit_option *options,
                               void **optionValues);
CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                               unsigned int numOptions, CUjit_option *options, void **optionValues);
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
CUresult CUDAAPI cuLinkDestroy(CUlinkState state);
CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                       CUjit_option *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryUnload(CUlibrary library);
CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                    const char *name);
CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
                                      CUdevice dev);
CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                      CUdevice dev);
CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);
CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev);
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                             int blockSize, size_t dynamicSMemSize);
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags);
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                  size_t dynamicSMemSize, int blockSizeLimit);
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                void **extra);
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams);

/* legacy CUDA IPC */
typedef CUipcMemHandle CUipcMemHandle_v1;
typedef CUipcEventHandle CUipcEventHandle_v1;
#define cuIpcOpenMemHandle cuIpcOpenMemHandle_v2
CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr);
CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event);
CUresult CUDAAPI cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);
/* Handles for address ranges; arrays' sparse mappings (not emulated). */
typedef CUarrayMapInfo CUarrayMapInfo_v1;
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemMapArrayAsync cuMemMapArrayAsync_ptsz
#endif
CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
                                               CUmemRangeHandleType handleType,
                                               unsigned long long flags);
CUresult CUDAAPI cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count,
                                    CUstream hStream);
/* Stream-ordered memory pools. */
typedef CUmemPoolProps CUmemPoolProps_v1;
typedef CUmemPoolPtrExportData CUmemPoolPtrExportData_v1;
#define CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS FAB_CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemAllocAsync cuMemAllocAsync_ptsz
#define cuMemAllocFromPoolAsync cuMemAllocFromPoolAsync_ptsz
#define cuMemFreeAsync cuMemFreeAsync_ptsz
#endif
CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool);
CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
                                    CUmemLocation *location);
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                  CUmemAllocationHandleType handleType,
                                                  unsigned long long flags);
CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                    CUmemAllocationHandleType handleType,
                                                    unsigned long long flags);
CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr);
CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                        CUmemPoolPtrExportData *shareData);

/* multicast objects */
typedef CUmulticastObjectProp CUmulticastObjectProp_v1;
CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle,
                                   const CUmulticastObjectProp *prop);
CUresult CUDAAPI cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev);
CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                    CUmemGenericAllocationHandle memHandle, size_t memOffset,
                                    size_t size, unsigned long long flags);
CUresult CUDAAPI cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                     CUdeviceptr memptr, size_t size, unsigned long long flags);
CUresult CUDAAPI cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
                                   size_t mcOffset, size_t size);
CUresult CUDAAPI cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
                                           CUmulticastGranularity_flags option);


/* Older and rarer entry points (docs/cuda.md, "Older entry points"), and the
 * 2D memsets. */
#define cuArrayCreate cuArrayCreate_v2
#define cuArrayGetDescriptor cuArrayGetDescriptor_v2
#define cuArray3DCreate cuArray3DCreate_v2
#define cuArray3DGetDescriptor cuArray3DGetDescriptor_v2
#define cuMemcpyAtoA cuMemcpyAtoA_v2
#define cuMemcpyAtoD cuMemcpyAtoD_v2
#define cuMemcpyAtoH cuMemcpyAtoH_v2
#define cuMemcpyDtoA cuMemcpyDtoA_v2
#define cuMemcpyHtoA cuMemcpyHtoA_v2
#define cuTexRefSetAddress cuTexRefSetAddress_v2
#define cuTexRefSetAddress2D cuTexRefSetAddress2D_v3
#define cuTexRefGetAddress cuTexRefGetAddress_v2
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemsetD2D8 cuMemsetD2D8_v2_ptds
#define cuMemsetD2D8Async cuMemsetD2D8Async_ptsz
#else
#define cuMemsetD2D8 cuMemsetD2D8_v2
#endif
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemsetD2D16 cuMemsetD2D16_v2_ptds
#define cuMemsetD2D16Async cuMemsetD2D16Async_ptsz
#else
#define cuMemsetD2D16 cuMemsetD2D16_v2
#endif
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemsetD2D32 cuMemsetD2D32_v2_ptds
#define cuMemsetD2D32Async cuMemsetD2D32Async_ptsz
#else
#define cuMemsetD2D32 cuMemsetD2D32_v2
#endif
CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr dstDevice, size_t dstPitch, unsigned char value, size_t Width,
                                 size_t Height);
CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char value,
                                      size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr dstDevice, size_t dstPitch, unsigned short value, size_t Width,
                                 size_t Height);
CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short value,
                                      size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr dstDevice, size_t dstPitch, unsigned int value, size_t Width,
                                 size_t Height);
CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int value,
                                      size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuCtxAttach(CUcontext *pctx, unsigned int flags);
CUresult CUDAAPI cuCtxDetach(CUcontext ctx);
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig);
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config);
CUresult CUDAAPI cuCtxGetSharedMemConfig(CUsharedconfig *pConfig);
CUresult CUDAAPI cuCtxSetSharedMemConfig(CUsharedconfig config);
CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags);
CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode);
CUresult CUDAAPI cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuArrayDestroy(CUarray hArray);
CUresult CUDAAPI cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
CUresult CUDAAPI cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuMemcpyAtoA(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoD(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoH(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoA(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoA(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy);
CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
CUresult CUDAAPI cuModuleGetTexRef(CUtexref *pTexRef, CUmodule hmod, const char *name);
CUresult CUDAAPI cuModuleGetSurfRef(CUsurfref *pSurfRef, CUmodule hmod, const char *name);
CUresult CUDAAPI cuTexRefCreate(CUtexref *pTexRef);
CUresult CUDAAPI cuTexRefDestroy(CUtexref hTexRef);
CUresult CUDAAPI cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags);
CUresult CUDAAPI cuTexRefSetAddress(size_t *ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes);
CUresult CUDAAPI cuTexRefSetAddress2D(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch);
CUresult CUDAAPI cuTexRefSetFormat(CUtexref hTexRef, CUarray_format fmt, int NumPackedComponents);
CUresult CUDAAPI cuTexRefSetAddressMode(CUtexref hTexRef, int dim, CUaddress_mode am);
CUresult CUDAAPI cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm);
CUresult CUDAAPI cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags);
CUresult CUDAAPI cuTexRefGetAddress(CUdeviceptr *pdptr, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetArray(CUarray *phArray, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetAddressMode(CUaddress_mode *pam, CUtexref hTexRef, int dim);
CUresult CUDAAPI cuTexRefGetFilterMode(CUfilter_mode *pfm, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetFormat(CUarray_format *pFormat, int *pNumChannels, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetFlags(unsigned int *pFlags, CUtexref hTexRef);
CUresult CUDAAPI cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags);
CUresult CUDAAPI cuSurfRefGetArray(CUarray *phArray, CUsurfref hSurfRef);
CUresult CUDAAPI cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef);
CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z);
CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes);
CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes);
CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value);
CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value);
CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes);
CUresult CUDAAPI cuLaunch(CUfunction f);
CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream);

#ifdef __cplusplus
}
#endif

#endif /* __cuda_cuda_h__ */
