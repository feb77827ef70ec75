/* The exported cu* entry points: their prototypes, under the plain names and
 * under the versioned names cuda.h maps calls to. Each file that defines
 * entry points includes this, so that the compiler checks every definition
 * against its prototype and every definition is exported (the library is
 * built with hidden visibility; libcuda.map then keeps only cu* names).
 * procaddress.c includes it to list them all; the per-thread forms (_ptds,
 * _ptsz) are declared at the end. */
#ifndef FAB_CUDA_ENTRY_H
#define FAB_CUDA_ENTRY_H

#include "src/cuda/cuda_abi.h"

#define FAB__CU_EXPORT __attribute__((visibility("default")))
#define FAB__CU_API FAB__CU_EXPORT CUresult

FAB__CU_API cuGetErrorString(CUresult error, const char **pStr);
FAB__CU_API cuGetErrorName(CUresult error, const char **pStr);
FAB__CU_API cuInit(unsigned int Flags);
FAB__CU_API cuDriverGetVersion(int *driverVersion);
FAB__CU_API cuDeviceGet(CUdevice *device, int ordinal);
FAB__CU_API cuDeviceGetCount(int *count);
FAB__CU_API cuDeviceGetName(char *name, int len, CUdevice dev);
FAB__CU_API cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
FAB__CU_API cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
FAB__CU_API cuDeviceTotalMem(unsigned int *bytes, CUdevice dev);
FAB__CU_API cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
FAB__CU_API cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
FAB__CU_API cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId);
FAB__CU_API cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
FAB__CU_API cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
FAB__CU_API cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRelease(CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRelease_v2(CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxReset(CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxReset_v2(CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
FAB__CU_API cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
FAB__CU_API cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
FAB__CU_API cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                           unsigned int flags, CUdevice dev);
FAB__CU_API cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                           unsigned int flags, CUdevice dev);
FAB__CU_API cuCtxDestroy(CUcontext ctx);
FAB__CU_API cuCtxDestroy_v2(CUcontext ctx);
FAB__CU_API cuCtxSetCurrent(CUcontext ctx);
FAB__CU_API cuCtxGetCurrent(CUcontext *pctx);
FAB__CU_API cuCtxGetDevice(CUdevice *device);
FAB__CU_API cuCtxSynchronize(void);
FAB__CU_API cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
FAB__CU_API cuCtxDisablePeerAccess(CUcontext peerContext);
FAB__CU_API cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                    CUdevice dstDevice);
FAB__CU_API cuCtxSetLimit(CUlimit limit, size_t value);
FAB__CU_API cuCtxGetLimit(size_t *pvalue, CUlimit limit);
FAB__CU_API cuCtxSetFlags(unsigned int flags);
FAB__CU_API cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                       CUflushGPUDirectRDMAWritesScope scope);
FAB__CU_API cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
FAB__CU_API cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);

FAB__CU_API cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                          CUmemAllocationGranularity_flags option);
FAB__CU_API cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                        const CUmemAllocationProp *prop, unsigned long long flags);
FAB__CU_API cuMemRelease(CUmemGenericAllocationHandle handle);
FAB__CU_API cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                         CUmemAllocationHandleType handleType,
                                         unsigned long long flags);
FAB__CU_API cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                           CUmemAllocationHandleType shHandleType);
FAB__CU_API cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);
FAB__CU_API cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                   CUmemGenericAllocationHandle handle);
FAB__CU_API cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                unsigned long long flags);
FAB__CU_API cuMemAddressFree(CUdeviceptr ptr, size_t size);
FAB__CU_API cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                     CUmemGenericAllocationHandle handle, unsigned long long flags);
FAB__CU_API cuMemUnmap(CUdeviceptr ptr, size_t size);
FAB__CU_API cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
FAB__CU_API cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr);
FAB__CU_API cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
FAB__CU_API cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr);
FAB__CU_API cuMemGetInfo_v2(size_t *bytes_free, size_t *bytes_total);
FAB__CU_API cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

FAB__CU_API cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
FAB__CU_API cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
FAB__CU_API cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount);
FAB__CU_API cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
FAB__CU_API cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount);
FAB__CU_API cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
FAB__CU_API cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount);
FAB__CU_API cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
FAB__CU_API cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                              CUstream hStream);
FAB__CU_API cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                 CUstream hStream);
FAB__CU_API cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                              CUstream hStream);
FAB__CU_API cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                 CUstream hStream);
FAB__CU_API cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,
                              unsigned int ByteCount, CUstream hStream);
FAB__CU_API cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                 CUstream hStream);
FAB__CU_API cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N);
FAB__CU_API cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
FAB__CU_API cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                            size_t Height);
FAB__CU_API cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                             size_t Width, size_t Height);
FAB__CU_API cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                             size_t Width, size_t Height);
FAB__CU_API cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                              size_t Width, size_t Height, CUstream hStream);
FAB__CU_API cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                               size_t Width, size_t Height, CUstream hStream);
FAB__CU_API cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                               size_t Width, size_t Height, CUstream hStream);
FAB__CU_API cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N);
FAB__CU_API cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
FAB__CU_API cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
FAB__CU_API cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);

FAB__CU_API cuStreamCreate(CUstream *phStream, unsigned int Flags);
FAB__CU_API cuStreamDestroy(CUstream hStream);
FAB__CU_API cuStreamDestroy_v2(CUstream hStream);
FAB__CU_API cuStreamSynchronize(CUstream hStream);
FAB__CU_API cuStreamQuery(CUstream hStream);

/* Contexts, memory, streams and events (device.c, memory.c, copy.c, memop.c,
 * stream.c, streamapi.c, event.c; docs/cuda.md, "Memory, streams and events"). */
FAB__CU_API cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
FAB__CU_API cuCtxSynchronize_v2(CUcontext ctx);
FAB__CU_API cuProfilerStart(void);
FAB__CU_API cuProfilerStop(void);
FAB__CU_API cuCtxPushCurrent(CUcontext ctx);
FAB__CU_API cuCtxPushCurrent_v2(CUcontext ctx);
FAB__CU_API cuCtxPopCurrent(CUcontext *pctx);
FAB__CU_API cuCtxPopCurrent_v2(CUcontext *pctx);
FAB__CU_API cuCtxGetFlags(unsigned int *flags);
FAB__CU_API cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
FAB__CU_API cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
FAB__CU_API cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode);

FAB__CU_API cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize);
FAB__CU_API cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
FAB__CU_API cuMemFree(CUdeviceptr_v1 dptr);
FAB__CU_API cuMemFree_v2(CUdeviceptr dptr);
FAB__CU_API cuMemGetInfo(unsigned int *free, unsigned int *total);
FAB__CU_API cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                            unsigned int Height, unsigned int ElementSizeBytes);
FAB__CU_API cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                               size_t Height, unsigned int ElementSizeBytes);
FAB__CU_API cuMemAllocHost(void **pp, unsigned int bytesize);
FAB__CU_API cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
FAB__CU_API cuMemAllocHost_v2(void **pp, size_t bytesize);
FAB__CU_API cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
FAB__CU_API cuMemFreeHost(void *p);
FAB__CU_API cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
FAB__CU_API cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
FAB__CU_API cuMemHostUnregister(void *p);
FAB__CU_API cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags);
FAB__CU_API cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);
FAB__CU_API cuMemHostGetFlags(unsigned int *pFlags, void *p);
FAB__CU_API cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                   void **data, CUdeviceptr ptr);
FAB__CU_API cuPointerSetAttribute(const void *value, CUpointer_attribute attribute,
                                  CUdeviceptr ptr);

FAB__CU_API cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                         CUcontext srcContext, size_t ByteCount);
FAB__CU_API cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount, CUstream hStream);
FAB__CU_API cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy);
FAB__CU_API cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy);
FAB__CU_API cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
FAB__CU_API cuMemcpy2D(const CUDA_MEMCPY2D_v1 *pCopy);
FAB__CU_API cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1 *pCopy);
FAB__CU_API cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream);
FAB__CU_API cuMemcpy3D(const CUDA_MEMCPY3D_v1 *pCopy);
FAB__CU_API cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream);
FAB__CU_API cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy);
FAB__CU_API cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
FAB__CU_API cuStreamGetDevice(CUstream hStream, CUdevice *device);
FAB__CU_API cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device);
FAB__CU_API cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N);
FAB__CU_API cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N);
FAB__CU_API cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);

FAB__CU_API cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
FAB__CU_API cuStreamSynchronize_ptsz(CUstream hStream);
FAB__CU_API cuStreamQuery_ptsz(CUstream hStream);
FAB__CU_API cuStreamGetFlags(CUstream hStream, unsigned int *flags);
FAB__CU_API cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
FAB__CU_API cuStreamGetPriority(CUstream hStream, int *priority);
FAB__CU_API cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
FAB__CU_API cuStreamGetId(CUstream hStream, unsigned long long *streamId);
FAB__CU_API cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);
FAB__CU_API cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
FAB__CU_API cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
FAB__CU_API cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
FAB__CU_API cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
FAB__CU_API cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
FAB__CU_API cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
FAB__CU_API cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
FAB__CU_API cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
FAB__CU_API cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   cuuint64_t *id_out);
FAB__CU_API cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                        CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out);
FAB__CU_API cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                      cuuint64_t *id_out, CUgraph *graph_out,
                                      const CUgraphNode **dependencies_out,
                                      size_t *numDependencies_out);
FAB__CU_API cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                           CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           size_t *numDependencies_out);
FAB__CU_API cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                      cuuint64_t *id_out, CUgraph *graph_out,
                                      const CUgraphNode **dependencies_out,
                                      const CUgraphEdgeData **edgeData_out,
                                      size_t *numDependencies_out);
FAB__CU_API cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                           CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           const CUgraphEdgeData **edgeData_out,
                                           size_t *numDependencies_out);
FAB__CU_API cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
FAB__CU_API cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
FAB__CU_API cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                unsigned int flags);
FAB__CU_API cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                     void *userData, unsigned int flags);
FAB__CU_API cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
                                 unsigned int flags);
FAB__CU_API cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, uint32_t value,
                                    unsigned int flags);
FAB__CU_API cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
                                unsigned int flags);
FAB__CU_API cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, uint32_t value,
                                   unsigned int flags);
FAB__CU_API cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                 unsigned int flags);
FAB__CU_API cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                    unsigned int flags);
FAB__CU_API cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                unsigned int flags);
FAB__CU_API cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                   unsigned int flags);
FAB__CU_API cuStreamBatchMemOp(CUstream stream, unsigned int count,
                               CUstreamBatchMemOpParams *paramArray, unsigned int flags);
FAB__CU_API cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                                  CUstreamBatchMemOpParams *paramArray, unsigned int flags);

FAB__CU_API cuEventCreate(CUevent *phEvent, unsigned int Flags);
FAB__CU_API cuEventRecord(CUevent hEvent, CUstream hStream);
FAB__CU_API cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
FAB__CU_API cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
FAB__CU_API cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags);
FAB__CU_API cuEventQuery(CUevent hEvent);
FAB__CU_API cuEventSynchronize(CUevent hEvent);
FAB__CU_API cuEventDestroy(CUevent hEvent);
FAB__CU_API cuEventDestroy_v2(CUevent hEvent);
FAB__CU_API cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
FAB__CU_API cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);
/* Code objects and kernels (module.c, funcattr.c, launch.c). */
FAB__CU_API cuModuleLoad(CUmodule *module, const char *fname);
FAB__CU_API cuModuleLoadData(CUmodule *module, const void *image);
FAB__CU_API cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                               CUjit_option *options, void **optionValues);
FAB__CU_API cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
FAB__CU_API cuModuleUnload(CUmodule hmod);
FAB__CU_API cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
FAB__CU_API cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod,
                              const char *name);
FAB__CU_API cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
FAB__CU_API cuModuleGetLoadingMode(CUmoduleLoadingMode *mode);
FAB__CU_API cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                         CUlinkState *stateOut);
FAB__CU_API cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                            CUlinkState *stateOut);
FAB__CU_API cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                          const char *name, unsigned int numOptions, CUjit_option *options,
                          void **optionValues);
FAB__CU_API cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                             const char *name, unsigned int numOptions, CUjit_option *options,
                             void **optionValues);
FAB__CU_API cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                          unsigned int numOptions, CUjit_option *options, void **optionValues);
FAB__CU_API cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                             unsigned int numOptions, CUjit_option *options, void **optionValues);
FAB__CU_API cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
FAB__CU_API cuLinkDestroy(CUlinkState state);
FAB__CU_API cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                              void **jitOptionsValues, unsigned int numJitOptions,
                              CUlibraryOption *libraryOptions, void **libraryOptionValues,
                              unsigned int numLibraryOptions);
FAB__CU_API cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                  CUjit_option *jitOptions, void **jitOptionsValues,
                                  unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                  void **libraryOptionValues, unsigned int numLibraryOptions);
FAB__CU_API cuLibraryUnload(CUlibrary library);
FAB__CU_API cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
FAB__CU_API cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                               const char *name);
FAB__CU_API cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
FAB__CU_API cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
FAB__CU_API cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
                                 CUdevice dev);
FAB__CU_API cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                 CUdevice dev);
FAB__CU_API cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
FAB__CU_API cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
FAB__CU_API cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);
FAB__CU_API cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev);
FAB__CU_API cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                        int blockSize, size_t dynamicSMemSize);
FAB__CU_API cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                                 int blockSize,
                                                                 size_t dynamicSMemSize,
                                                                 unsigned int flags);
FAB__CU_API cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                             CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                             size_t dynamicSMemSize, int blockSizeLimit);
FAB__CU_API cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                           void **kernelParams, void **extra);
FAB__CU_API cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                             void **extra);
FAB__CU_API cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                      unsigned int gridDimZ, unsigned int blockDimX,
                                      unsigned int blockDimY, unsigned int blockDimZ,
                                      unsigned int sharedMemBytes, CUstream hStream,
                                      void **kernelParams);
FAB__CU_API cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra);
FAB__CU_API cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                  void **kernelParams, void **extra);
FAB__CU_API cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams);
/* legacy CUDA IPC (ipc.c) */
FAB__CU_API cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
FAB__CU_API cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
FAB__CU_API cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
FAB__CU_API cuIpcCloseMemHandle(CUdeviceptr dptr);
FAB__CU_API cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event);
FAB__CU_API cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);

/* exporttable.c: refused, with a log line (NVIDIA's runtime asks for it). */
FAB__CU_API cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);

/* Handles for address ranges, arrays' sparse mappings (rangehandle.c). */
FAB__CU_API cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
                                          CUmemRangeHandleType handleType,
                                          unsigned long long flags);
FAB__CU_API cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream);
FAB__CU_API cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
                                    CUstream hStream);
/* Stream-ordered memory pools (poolapi.c, poolshare.c). */
FAB__CU_API cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
FAB__CU_API cuMemPoolDestroy(CUmemoryPool pool);
FAB__CU_API cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
FAB__CU_API cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
FAB__CU_API cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
FAB__CU_API cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
FAB__CU_API cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
                               CUmemLocation *location);
FAB__CU_API cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
FAB__CU_API cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
FAB__CU_API cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
FAB__CU_API cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
FAB__CU_API cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                    CUstream hStream);
FAB__CU_API cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
FAB__CU_API cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                             CUmemAllocationHandleType handleType,
                                             unsigned long long flags);
FAB__CU_API cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                               CUmemAllocationHandleType handleType,
                                               unsigned long long flags);
FAB__CU_API cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr);
FAB__CU_API cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                   CUmemPoolPtrExportData *shareData);
FAB__CU_API cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
FAB__CU_API cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream);
FAB__CU_API cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
/* multicast objects (multicast.c) */
FAB__CU_API cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle,
                              const CUmulticastObjectProp *prop);
FAB__CU_API cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev);
FAB__CU_API cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                               CUmemGenericAllocationHandle memHandle, size_t memOffset,
                               size_t size, unsigned long long flags);
FAB__CU_API cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                CUdeviceptr memptr, size_t size, unsigned long long flags);
FAB__CU_API cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
                              size_t mcOffset, size_t size);
FAB__CU_API cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
                                      CUmulticastGranularity_flags option);


/* Older and rarer entry points (legacy.c). */
FAB__CU_API cuCtxAttach(CUcontext *pctx, unsigned int flags);
FAB__CU_API cuCtxDetach(CUcontext ctx);
FAB__CU_API cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
FAB__CU_API cuCtxGetCacheConfig(CUfunc_cache *pconfig);
FAB__CU_API cuCtxSetCacheConfig(CUfunc_cache config);
FAB__CU_API cuCtxGetSharedMemConfig(CUsharedconfig *pConfig);
FAB__CU_API cuCtxSetSharedMemConfig(CUsharedconfig config);
FAB__CU_API cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags);
FAB__CU_API cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode);
FAB__CU_API cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
FAB__CU_API cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
FAB__CU_API cuArrayDestroy(CUarray hArray);
FAB__CU_API cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
FAB__CU_API cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
FAB__CU_API cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount);
FAB__CU_API cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount);
FAB__CU_API cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount);
FAB__CU_API cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount);
FAB__CU_API cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount);
FAB__CU_API cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy);
FAB__CU_API cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
FAB__CU_API cuModuleGetTexRef(CUtexref *pTexRef, CUmodule hmod, const char *name);
FAB__CU_API cuModuleGetSurfRef(CUsurfref *pSurfRef, CUmodule hmod, const char *name);
FAB__CU_API cuTexRefCreate(CUtexref *pTexRef);
FAB__CU_API cuTexRefDestroy(CUtexref hTexRef);
FAB__CU_API cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags);
FAB__CU_API cuTexRefSetAddress_v2(size_t *ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes);
FAB__CU_API cuTexRefSetAddress2D_v3(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch);
FAB__CU_API cuTexRefSetFormat(CUtexref hTexRef, CUarray_format fmt, int NumPackedComponents);
FAB__CU_API cuTexRefSetAddressMode(CUtexref hTexRef, int dim, CUaddress_mode am);
FAB__CU_API cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm);
FAB__CU_API cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags);
FAB__CU_API cuTexRefGetAddress_v2(CUdeviceptr *pdptr, CUtexref hTexRef);
FAB__CU_API cuTexRefGetArray(CUarray *phArray, CUtexref hTexRef);
FAB__CU_API cuTexRefGetAddressMode(CUaddress_mode *pam, CUtexref hTexRef, int dim);
FAB__CU_API cuTexRefGetFilterMode(CUfilter_mode *pfm, CUtexref hTexRef);
FAB__CU_API cuTexRefGetFormat(CUarray_format *pFormat, int *pNumChannels, CUtexref hTexRef);
FAB__CU_API cuTexRefGetFlags(unsigned int *pFlags, CUtexref hTexRef);
FAB__CU_API cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags);
FAB__CU_API cuSurfRefGetArray(CUarray *phArray, CUsurfref hSurfRef);
FAB__CU_API cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef);
FAB__CU_API cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z);
FAB__CU_API cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes);
FAB__CU_API cuParamSetSize(CUfunction hfunc, unsigned int numbytes);
FAB__CU_API cuParamSeti(CUfunction hfunc, int offset, unsigned int value);
FAB__CU_API cuParamSetf(CUfunction hfunc, int offset, float value);
FAB__CU_API cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes);
FAB__CU_API cuLaunch(CUfunction f);
FAB__CU_API cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
FAB__CU_API cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream);

/* Their first ABIs, which cuGetProcAddress answers for older versions (the
 * descriptors of CUDA 2.0 are never read, so they are untyped here). */
FAB__CU_API cuMemsetD2D8(CUdeviceptr_v1, unsigned int, unsigned char, unsigned int, unsigned int);
FAB__CU_API cuMemsetD2D16(CUdeviceptr_v1, unsigned int, unsigned short, unsigned int, unsigned int);
FAB__CU_API cuMemsetD2D32(CUdeviceptr_v1, unsigned int, unsigned int, unsigned int, unsigned int);
FAB__CU_API cuArrayCreate(CUarray *, const void *);
FAB__CU_API cuArrayGetDescriptor(void *, CUarray);
FAB__CU_API cuArray3DCreate(CUarray *, const void *);
FAB__CU_API cuArray3DGetDescriptor(void *, CUarray);
FAB__CU_API cuMemcpyAtoA(CUarray, unsigned int, CUarray, unsigned int, unsigned int);
FAB__CU_API cuMemcpyAtoD(CUdeviceptr_v1, CUarray, unsigned int, unsigned int);
FAB__CU_API cuMemcpyAtoH(void *, CUarray, unsigned int, unsigned int);
FAB__CU_API cuMemcpyDtoA(CUarray, unsigned int, CUdeviceptr_v1, unsigned int);
FAB__CU_API cuMemcpyHtoA(CUarray, unsigned int, const void *, unsigned int);
FAB__CU_API cuTexRefSetAddress(unsigned int *, CUtexref, CUdeviceptr_v1, unsigned int);
FAB__CU_API cuTexRefGetAddress(CUdeviceptr_v1 *, CUtexref);
FAB__CU_API cuTexRefSetAddress2D(CUtexref, const void *, CUdeviceptr_v1, unsigned int);
FAB__CU_API cuTexRefSetAddress2D_v2(CUtexref, const CUDA_ARRAY_DESCRIPTOR *, CUdeviceptr, size_t);

/* The per-thread-default-stream ABIs (_ptds, _ptsz) of the names above, the
 * rows of procaddress.c's second table: declared here, where every file
 * that defines one sees its declaration. */
#define FAB__CU_PT(ret, name, ...) FAB__CU_EXPORT ret name(__VA_ARGS__);
FAB__CU_PT(CUresult, cuMemcpy_ptds, CUdeviceptr, CUdeviceptr, size_t)
FAB__CU_PT(CUresult, cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *, size_t)
FAB__CU_PT(CUresult, cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr, size_t)
FAB__CU_PT(CUresult, cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr, size_t)
FAB__CU_PT(CUresult, cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemcpyPeer_ptds, CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t)
FAB__CU_PT(CUresult, cuMemcpyPeerAsync_ptsz, CUdeviceptr, CUcontext, CUdeviceptr, CUcontext,
           size_t, CUstream)
FAB__CU_PT(CUresult, cuMemcpy2D_v2_ptds, const CUDA_MEMCPY2D *)
FAB__CU_PT(CUresult, cuMemcpy2DUnaligned_v2_ptds, const CUDA_MEMCPY2D *)
FAB__CU_PT(CUresult, cuMemcpy2DAsync_v2_ptsz, const CUDA_MEMCPY2D *, CUstream)
FAB__CU_PT(CUresult, cuMemcpy3D_v2_ptds, const CUDA_MEMCPY3D *)
FAB__CU_PT(CUresult, cuMemcpy3DAsync_v2_ptsz, const CUDA_MEMCPY3D *, CUstream)
FAB__CU_PT(CUresult, cuMemsetD8_v2_ptds, CUdeviceptr, unsigned char, size_t)
FAB__CU_PT(CUresult, cuMemsetD16_v2_ptds, CUdeviceptr, unsigned short, size_t)
FAB__CU_PT(CUresult, cuMemsetD32_v2_ptds, CUdeviceptr, unsigned int, size_t)
FAB__CU_PT(CUresult, cuMemsetD8Async_ptsz, CUdeviceptr, unsigned char, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemsetD16Async_ptsz, CUdeviceptr, unsigned short, size_t, CUstream)
FAB__CU_PT(CUresult, cuMemsetD32Async_ptsz, CUdeviceptr, unsigned int, size_t, CUstream)
FAB__CU_PT(CUresult, cuStreamWriteValue32_ptsz, CUstream, CUdeviceptr, uint32_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWriteValue32_v2_ptsz, CUstream, CUdeviceptr, uint32_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWaitValue32_ptsz, CUstream, CUdeviceptr, uint32_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWaitValue32_v2_ptsz, CUstream, CUdeviceptr, uint32_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWriteValue64_ptsz, CUstream, CUdeviceptr, cuuint64_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWriteValue64_v2_ptsz, CUstream, CUdeviceptr, cuuint64_t,
           unsigned int)
FAB__CU_PT(CUresult, cuStreamWaitValue64_ptsz, CUstream, CUdeviceptr, cuuint64_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamWaitValue64_v2_ptsz, CUstream, CUdeviceptr, cuuint64_t, unsigned int)
FAB__CU_PT(CUresult, cuStreamBatchMemOp_ptsz, CUstream, unsigned int, CUstreamBatchMemOpParams *,
           unsigned int)
FAB__CU_PT(CUresult, cuStreamBatchMemOp_v2_ptsz, CUstream, unsigned int,
           CUstreamBatchMemOpParams *, unsigned int)
FAB__CU_PT(CUresult, cuMemsetD2D8_v2_ptds, CUdeviceptr, size_t, unsigned char, size_t, size_t)
FAB__CU_PT(CUresult, cuMemsetD2D16_v2_ptds, CUdeviceptr, size_t, unsigned short, size_t, size_t)
FAB__CU_PT(CUresult, cuMemsetD2D32_v2_ptds, CUdeviceptr, size_t, unsigned int, size_t, size_t)
FAB__CU_PT(CUresult, cuMemsetD2D8Async_ptsz, CUdeviceptr, size_t, unsigned char, size_t, size_t,
           CUstream)
FAB__CU_PT(CUresult, cuMemsetD2D16Async_ptsz, CUdeviceptr, size_t, unsigned short, size_t, size_t,
           CUstream)
FAB__CU_PT(CUresult, cuMemsetD2D32Async_ptsz, CUdeviceptr, size_t, unsigned int, size_t, size_t,
           CUstream)
FAB__CU_PT(CUresult, cuMemcpyAtoA_v2_ptds, CUarray, size_t, CUarray, size_t, size_t)
FAB__CU_PT(CUresult, cuMemcpyAtoD_v2_ptds, CUdeviceptr, CUarray, size_t, size_t)
FAB__CU_PT(CUresult, cuMemcpyAtoH_v2_ptds, void *, CUarray, size_t, size_t)
FAB__CU_PT(CUresult, cuMemcpyDtoA_v2_ptds, CUarray, size_t, CUdeviceptr, size_t)
FAB__CU_PT(CUresult, cuMemcpyHtoA_v2_ptds, CUarray, size_t, const void *, size_t)
FAB__CU_PT(CUresult, cuMemcpy3DPeer_ptds, const CUDA_MEMCPY3D_PEER *)
FAB__CU_PT(CUresult, cuMemcpy3DPeerAsync_ptsz, const CUDA_MEMCPY3D_PEER *, CUstream)
FAB__CU_PT(CUresult, cuStreamAttachMemAsync_ptsz, CUstream, CUdeviceptr, size_t, unsigned int)
#undef FAB__CU_PT

#endif /* FAB_CUDA_ENTRY_H */
