/* The runtime's state, its errors, the device calls and the driver entry
 * points (runtime.h has the state and its rules).
 *
 * Lifecycle: nothing happens at load. The first call that needs the driver
 * runs cuInit once (pthread_once); the first call that needs a device's
 * context retains its primary context (never released but by
 * cudaDeviceReset) and makes it current on the calling thread; a thread that
 * calls nothing keeps no state. A device's sticky error lives until
 * cudaDeviceReset. */
#include "src/cudart/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

pthread_mutex_t fab__rt_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t fab__rt_once = PTHREAD_ONCE_INIT;
static CUresult fab__rt_init_result;

/* Guarded by fab__rt_lock. */
static CUcontext fab__rt_primary[FAB__RT_MAX_DEVICES];
static unsigned fab__rt_flags[FAB__RT_MAX_DEVICES];
static cudaError_t fab__rt_sticky[FAB__RT_MAX_DEVICES];

static _Thread_local int fab__rt_tls_device;
static _Thread_local cudaError_t fab__rt_tls_last;

/* ---- errors ---- */

static bool fab__rt_known(int e)
{
    switch (e) {
#define FAB__RT_CASE(name, value, text) case value:
        FAB_RT_ERROR_LIST(FAB__RT_CASE)
#undef FAB__RT_CASE
        return true;
    default:
        return false;
    }
}

cudaError_t fab__rt_from_cu(CUresult r)
{
    if (r == CUDA_SUCCESS)
        return cudaSuccess;
    return fab__rt_known((int)r) ? (cudaError_t)r : cudaErrorUnknown;
}

/* The errors after which CUDA's documentation says the context is unusable:
 * they stay until cudaDeviceReset. */
static bool fab__rt_is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

cudaError_t fab__rt_error(cudaError_t e)
{
    if (e != cudaSuccess)
        fab__rt_tls_last = e;
    return e;
}

/* The device of the calling thread's current context, or the thread's
 * chosen device when none is current. */
static int fab__rt_current_device(void)
{
    CUcontext cur = NULL;
    CUdevice dev;
    if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur && cuCtxGetDevice(&dev) == CUDA_SUCCESS)
        return dev;
    return fab__rt_tls_device;
}

cudaError_t fab__rt_cu(CUresult r)
{
    cudaError_t e = fab__rt_from_cu(r);
    if (fab__rt_is_sticky(e)) {
        int dev = fab__rt_current_device();
        if (dev >= 0 && dev < FAB__RT_MAX_DEVICES) {
            pthread_mutex_lock(&fab__rt_lock);
            fab__rt_sticky[dev] = e;
            pthread_mutex_unlock(&fab__rt_lock);
        }
    }
    return fab__rt_error(e);
}

FAB__RT_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    switch ((int)error) {
#define FAB__RT_NAME(name, value, text) case value: return #name;
        FAB_RT_ERROR_LIST(FAB__RT_NAME)
#undef FAB__RT_NAME
    default:
        return "unrecognized error code";
    }
}

FAB__RT_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    switch ((int)error) {
#define FAB__RT_TEXT(name, value, text) case value: return text;
        FAB_RT_ERROR_LIST(FAB__RT_TEXT)
#undef FAB__RT_TEXT
    default:
        return "unrecognized error code";
    }
}

static cudaError_t fab__rt_sticky_of(int dev)
{
    if (dev < 0 || dev >= FAB__RT_MAX_DEVICES)
        return cudaSuccess;
    pthread_mutex_lock(&fab__rt_lock);
    cudaError_t e = fab__rt_sticky[dev];
    pthread_mutex_unlock(&fab__rt_lock);
    return e;
}

/* A sticky error is reported by every call, so it is never reset: the next
 * call that meets it records it again. */
FAB__RT_API cudaGetLastError(void)
{
    cudaError_t e = fab__rt_tls_last;
    fab__rt_tls_last = cudaSuccess;
    if (e == cudaSuccess)
        e = fab__rt_sticky_of(fab__rt_current_device());
    return e;
}

FAB__RT_API cudaPeekAtLastError(void)
{
    cudaError_t e = fab__rt_tls_last;
    if (e == cudaSuccess)
        e = fab__rt_sticky_of(fab__rt_current_device());
    return e;
}

/* ---- initialisation and contexts ---- */

static void fab__rt_init_once(void)
{
    fab__rt_init_result = cuInit(0);
}

cudaError_t fab__rt_init(void)
{
    pthread_once(&fab__rt_once, fab__rt_init_once);
    switch (fab__rt_init_result) {
    case CUDA_SUCCESS:
        return cudaSuccess;
    case CUDA_ERROR_NO_DEVICE:
        return cudaErrorNoDevice;
    default:
        return cudaErrorInitializationError;
    }
}

static cudaError_t fab__rt_check_device(int dev)
{
    cudaError_t e = fab__rt_init();
    if (e != cudaSuccess)
        return e;
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || dev < 0 || dev >= count ||
        dev >= FAB__RT_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    return cudaSuccess;
}

/* The primary context of dev, retained at its first use. */
static cudaError_t fab__rt_primary_of(int dev, CUcontext *ctx_out)
{
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&fab__rt_lock);
    if (!fab__rt_primary[dev])
        e = fab__rt_from_cu(cuDevicePrimaryCtxRetain(&fab__rt_primary[dev], dev));
    *ctx_out = fab__rt_primary[dev];
    pthread_mutex_unlock(&fab__rt_lock);
    return e;
}

cudaError_t fab__rt_context(int *dev_out)
{
    cudaError_t e = fab__rt_init();
    if (e != cudaSuccess)
        return e;
    CUcontext cur = NULL;
    CUdevice dev;
    if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur) {
        if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
            return cudaErrorDeviceUninitialized;
    } else {
        dev = fab__rt_tls_device;
        e = fab__rt_check_device(dev);
        if (e != cudaSuccess)
            return e;
        CUcontext primary;
        e = fab__rt_primary_of(dev, &primary);
        if (e != cudaSuccess)
            return e;
        e = fab__rt_from_cu(cuCtxSetCurrent(primary));
        if (e != cudaSuccess)
            return e;
    }
    if (dev_out)
        *dev_out = dev;
    return fab__rt_sticky_of(dev);
}

CUstream fab__rt_stream(cudaStream_t stream, bool per_thread)
{
    if (!stream && per_thread)
        return (CUstream)FAB_CU_STREAM_PER_THREAD;
    return (CUstream)stream;
}

/* ---- devices ---- */

FAB__RT_API cudaGetDeviceCount(int *count)
{
    if (!count)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = fab__rt_init();
    if (e == cudaErrorNoDevice) {
        *count = 0;
        FAB__RT_RETURN(e);
    }
    FAB__RT_TRY(e);
    return fab__rt_cu(cuDeviceGetCount(count));
}

/* CUDA 12 and later: cudaSetDevice initialises the device's primary context
 * at once and makes it current on the calling thread. */
FAB__RT_API cudaSetDevice(int device)
{
    FAB__RT_TRY(fab__rt_check_device(device));
    CUcontext primary;
    FAB__RT_TRY(fab__rt_primary_of(device, &primary));
    FAB__RT_TRY(fab__rt_from_cu(cuCtxSetCurrent(primary)));
    fab__rt_tls_device = device;
    return cudaSuccess;
}

FAB__RT_API cudaGetDevice(int *device)
{
    if (!device)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    *device = fab__rt_current_device();
    return cudaSuccess;
}

FAB__RT_API cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    if (flags & ~(unsigned)cudaInitDeviceFlagsAreValid)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(device));
    if (flags & cudaInitDeviceFlagsAreValid) {
        if (deviceFlags & ~(unsigned)cudaDeviceMask)
            FAB__RT_RETURN(cudaErrorInvalidValue);
        pthread_mutex_lock(&fab__rt_lock);
        fab__rt_flags[device] = deviceFlags;
        pthread_mutex_unlock(&fab__rt_lock);
    }
    CUcontext primary;
    FAB__RT_TRY(fab__rt_primary_of(device, &primary));
    return cudaSuccess;
}

FAB__RT_API cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(device));
    return fab__rt_cu(cuDeviceGetAttribute(value, (CUdevice_attribute)attr, device));
}

/* One attribute, or 0 where the driver does not answer it. */
static int fab__rt_attr(int dev, int attr)
{
    int v = 0;
    if (cuDeviceGetAttribute(&v, (CUdevice_attribute)attr, dev) != CUDA_SUCCESS)
        v = 0;
    return v;
}

FAB__RT_API cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(device));
    memset(prop, 0, sizeof *prop);
    FAB__RT_TRY(fab__rt_cu(cuDeviceGetName(prop->name, (int)sizeof prop->name, device)));
    CUuuid uuid;
    if (cuDeviceGetUuid_v2(&uuid, device) == CUDA_SUCCESS)
        memcpy(prop->uuid.bytes, uuid.bytes, sizeof prop->uuid.bytes);
    size_t total = 0;
    FAB__RT_TRY(fab__rt_cu(cuDeviceTotalMem_v2(&total, device)));
    prop->totalGlobalMem = total;
    prop->sharedMemPerBlock = (size_t)fab__rt_attr(device, 8);
    prop->regsPerBlock = fab__rt_attr(device, 12);
    prop->warpSize = fab__rt_attr(device, 10);
    prop->memPitch = (size_t)fab__rt_attr(device, 11);
    prop->maxThreadsPerBlock = fab__rt_attr(device, 1);
    for (int i = 0; i < 3; i++) {
        prop->maxThreadsDim[i] = fab__rt_attr(device, 2 + i);
        prop->maxGridSize[i] = fab__rt_attr(device, 5 + i);
    }
    prop->totalConstMem = (size_t)fab__rt_attr(device, 9);
    prop->major = fab__rt_attr(device, 75);
    prop->minor = fab__rt_attr(device, 76);
    prop->textureAlignment = (size_t)fab__rt_attr(device, 14);
    prop->multiProcessorCount = fab__rt_attr(device, 16);
    prop->integrated = fab__rt_attr(device, 18);
    prop->canMapHostMemory = fab__rt_attr(device, 19);
    prop->concurrentKernels = fab__rt_attr(device, 31);
    prop->ECCEnabled = fab__rt_attr(device, 32);
    prop->pciBusID = fab__rt_attr(device, 33);
    prop->pciDeviceID = fab__rt_attr(device, 34);
    prop->pciDomainID = fab__rt_attr(device, 50);
    prop->asyncEngineCount = fab__rt_attr(device, 40);
    prop->unifiedAddressing = fab__rt_attr(device, 41);
    prop->memoryBusWidth = fab__rt_attr(device, 37);
    prop->l2CacheSize = fab__rt_attr(device, 38);
    prop->maxThreadsPerMultiProcessor = fab__rt_attr(device, 39);
    prop->streamPrioritiesSupported = fab__rt_attr(device, 78);
    prop->sharedMemPerMultiprocessor = (size_t)fab__rt_attr(device, 81);
    prop->regsPerMultiprocessor = fab__rt_attr(device, 82);
    prop->managedMemory = fab__rt_attr(device, 83);
    prop->isMultiGpuBoard = fab__rt_attr(device, 84);
    prop->concurrentManagedAccess = fab__rt_attr(device, 89);
    prop->cooperativeLaunch = fab__rt_attr(device, 95);
    prop->sharedMemPerBlockOptin = (size_t)fab__rt_attr(device, 97);
    prop->maxBlocksPerMultiProcessor = fab__rt_attr(device, 106);
    prop->memoryPoolsSupported = fab__rt_attr(device, 115);
    prop->gpuDirectRDMASupported = fab__rt_attr(device, 116);
    prop->hostRegisterSupported = fab__rt_attr(device, 99);
    prop->texturePitchAlignment = (size_t)fab__rt_attr(device, 51);
    prop->surfaceAlignment = (size_t)fab__rt_attr(device, 30);
    prop->tccDriver = fab__rt_attr(device, 35);
    prop->persistingL2CacheMaxSize = fab__rt_attr(device, 108);
    prop->globalL1CacheSupported = fab__rt_attr(device, 79);
    prop->localL1CacheSupported = fab__rt_attr(device, 80);
    prop->multiGpuBoardGroupID = fab__rt_attr(device, 85);
    prop->hostNativeAtomicSupported = fab__rt_attr(device, 86);
    prop->pageableMemoryAccess = fab__rt_attr(device, 88);
    prop->computePreemptionSupported = fab__rt_attr(device, 90);
    prop->canUseHostPointerForRegisteredMem = fab__rt_attr(device, 91);
    prop->pageableMemoryAccessUsesHostPageTables = fab__rt_attr(device, 100);
    prop->directManagedMemAccessFromHost = fab__rt_attr(device, 101);
    prop->accessPolicyMaxWindowSize = fab__rt_attr(device, 109);
    prop->reservedSharedMemPerBlock = (size_t)fab__rt_attr(device, 111);
    prop->sparseCudaArraySupported = fab__rt_attr(device, 112);
    prop->hostRegisterReadOnlySupported = fab__rt_attr(device, 113);
    prop->timelineSemaphoreInteropSupported = fab__rt_attr(device, 114);
    prop->gpuDirectRDMAFlushWritesOptions = (unsigned)fab__rt_attr(device, 117);
    prop->gpuDirectRDMAWritesOrdering = fab__rt_attr(device, 118);
    prop->memoryPoolSupportedHandleTypes = (unsigned)fab__rt_attr(device, 119);
    prop->deferredMappingCudaArraySupported = fab__rt_attr(device, 121);
    prop->ipcEventSupported = fab__rt_attr(device, 125);
    prop->clusterLaunch = fab__rt_attr(device, 120);
    prop->unifiedFunctionPointers = fab__rt_attr(device, 129);
    prop->deviceNumaConfig = fab__rt_attr(device, 130);
    prop->deviceNumaId = fab__rt_attr(device, 131);
    prop->mpsEnabled = fab__rt_attr(device, 133);
    prop->hostNumaId = fab__rt_attr(device, 134);
    prop->gpuPciDeviceID = (unsigned)fab__rt_attr(device, 139);
    prop->gpuPciSubsystemID = (unsigned)fab__rt_attr(device, 140);
    prop->hostNumaMultinodeIpcSupported = fab__rt_attr(device, 143);
    return cudaSuccess;
}

/* CUDA 12's name for the same call (its headers mapped cudaGetDeviceProperties
 * to it); CUDA 13's runtime has only the plain name, and a program built
 * against 12's headers that reaches this library still finds it. */
FAB__RT_API cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
FAB__RT_API cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    return cudaGetDeviceProperties(prop, device);
}

FAB__RT_API cudaDeviceSynchronize(void)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuCtxSynchronize());
}

/* The emulation's primary context is never destroyed (its memory lives on):
 * reset waits for the device's work, resets the primary context for every
 * holder (cuDevicePrimaryCtxReset: the driver's sticky error goes with it),
 * drops the runtime's reference, clears the runtime's sticky error and the
 * flags, and the next call retains it again. */
FAB__RT_API cudaDeviceReset(void)
{
    FAB__RT_TRY(fab__rt_init());
    int dev = fab__rt_current_device();
    FAB__RT_TRY(fab__rt_check_device(dev));
    pthread_mutex_lock(&fab__rt_lock);
    CUcontext primary = fab__rt_primary[dev];
    fab__rt_primary[dev] = NULL;
    fab__rt_sticky[dev] = cudaSuccess;
    fab__rt_flags[dev] = 0;
    pthread_mutex_unlock(&fab__rt_lock);
    if (primary) {
        CUcontext cur = NULL;
        (void)cuCtxSynchronize_v2(primary);
        if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == primary)
            (void)cuCtxSetCurrent(NULL);
    }
    (void)cuDevicePrimaryCtxReset_v2(dev);
    if (primary)
        (void)cuDevicePrimaryCtxRelease_v2(dev);
    fab__rt_tls_last = cudaSuccess;
    return cudaSuccess;
}

FAB__RT_API cudaSetDeviceFlags(unsigned int flags)
{
    if (flags & ~(unsigned)cudaDeviceMask)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    int dev = fab__rt_current_device();
    FAB__RT_TRY(fab__rt_check_device(dev));
    pthread_mutex_lock(&fab__rt_lock);
    fab__rt_flags[dev] = flags;
    pthread_mutex_unlock(&fab__rt_lock);
    return cudaSuccess;
}

FAB__RT_API cudaGetDeviceFlags(unsigned int *flags)
{
    if (!flags)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    int dev;
    FAB__RT_TRY(fab__rt_context(&dev));
    pthread_mutex_lock(&fab__rt_lock);
    *flags = fab__rt_flags[dev] | cudaDeviceMapHost;
    pthread_mutex_unlock(&fab__rt_lock);
    return cudaSuccess;
}

FAB__RT_API cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (!canAccessPeer)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(device));
    FAB__RT_TRY(fab__rt_check_device(peerDevice));
    return fab__rt_cu(cuDeviceCanAccessPeer(canAccessPeer, device, peerDevice));
}

FAB__RT_API cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    FAB__RT_ENTER();
    FAB__RT_TRY(fab__rt_check_device(peerDevice));
    CUcontext peer;
    FAB__RT_TRY(fab__rt_primary_of(peerDevice, &peer));
    return fab__rt_cu(cuCtxEnablePeerAccess(peer, flags));
}

FAB__RT_API cudaDeviceDisablePeerAccess(int peerDevice)
{
    FAB__RT_ENTER();
    FAB__RT_TRY(fab__rt_check_device(peerDevice));
    CUcontext peer;
    FAB__RT_TRY(fab__rt_primary_of(peerDevice, &peer));
    return fab__rt_cu(cuCtxDisablePeerAccess(peer));
}

/* The driver's answer: the runtime's attribute numbers are the driver's. */
FAB__RT_API cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice,
                                      int dstDevice)
{
    if (!value)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(srcDevice));
    FAB__RT_TRY(fab__rt_check_device(dstDevice));
    return fab__rt_cu(
        cuDeviceGetP2PAttribute(value, (CUdevice_P2PAttribute)attr, srcDevice, dstDevice));
}

/* Limits are the current context's (the driver keeps them); the runtime's
 * numbers are the driver's. */
FAB__RT_API cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuCtxSetLimit((CUlimit)limit, value));
}

FAB__RT_API cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    if (!pValue)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_ENTER();
    return fab__rt_cu(cuCtxGetLimit(pValue, (CUlimit)limit));
}

FAB__RT_API cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (!pciBusId || len <= 0)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_check_device(device));
    return fab__rt_cu(cuDeviceGetPCIBusId(pciBusId, len, device));
}

FAB__RT_API cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    if (!device || !pciBusId)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    CUdevice dev;
    FAB__RT_TRY(fab__rt_cu(cuDeviceGetByPCIBusId(&dev, pciBusId)));
    *device = dev;
    return cudaSuccess;
}

FAB__RT_API cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuCtxGetStreamPriorityRange(leastPriority, greatestPriority));
}

FAB__RT_API cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    return fab__rt_cu(cuDriverGetVersion(driverVersion));
}

FAB__RT_API cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

/* cuda_profiler_api.h: the driver's cuProfilerStart/Stop in the calling
 * thread's context (no profiler attaches to the emulation; the context is
 * still required). */
FAB__RT_API cudaProfilerStart(void)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuProfilerStart());
}

FAB__RT_API cudaProfilerStop(void)
{
    FAB__RT_ENTER();
    return fab__rt_cu(cuProfilerStop());
}

/* ---- driver entry points ---- */

FAB__RT_API cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    if (!symbol || !funcPtr)
        FAB__RT_RETURN(cudaErrorInvalidValue);
    FAB__RT_TRY(fab__rt_init());
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = cuGetProcAddress_v2(symbol, funcPtr, (int)cudaVersion, flags, &status);
    if (driverStatus)
        *driverStatus = (enum cudaDriverEntryPointQueryResult)status;
    /* A name not found is an answer (driverStatus), not an error: the
     * driver's cuGetProcAddress_v2 returns success and a NULL pointer. */
    return fab__rt_cu(r);
}

FAB__RT_API cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

FAB__RT_API cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus);
FAB__RT_API cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION,
                                            flags | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                                            driverStatus);
}

FAB__RT_API cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                  unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus);
FAB__RT_API cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                  unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, cudaVersion,
                                            flags | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                                            driverStatus);
}
