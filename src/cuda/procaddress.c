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
 * The per-thread-default-stream flag picks the same functions: every copy is
 * synchronous, so the legacy and per-thread default streams behave alike. */
#include "src/cuda/entry.h"

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
    P("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    P("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
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
    P("cuCtxSynchronize", 2000, cuCtxSynchronize),
    P("cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess),
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
    P("cuModuleLoad", 2000, cuModuleLoad),
    P("cuModuleLoadData", 2000, cuModuleLoadData),
    P("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    P("cuModuleLoadFatBinary", 2000, cuModuleLoadFatBinary),
    P("cuModuleUnload", 2000, cuModuleUnload),
    P("cuModuleGetFunction", 2000, cuModuleGetFunction),
    P("cuModuleGetGlobal", 2000, cuModuleGetGlobal),
    P("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    P("cuModuleGetLoadingMode", 11070, cuModuleGetLoadingMode),
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
    P("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
      cuOccupancyMaxActiveBlocksPerMultiprocessor),
    P("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000,
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    P("cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize),
    P("cuLaunchKernel", 4000, cuLaunchKernel),
    P("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    P("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
};

#undef P

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
    for (size_t i = 0; i < sizeof(fab__cu_procs) / sizeof(fab__cu_procs[0]); i++) {
        const fab__cu_proc_t *p = &fab__cu_procs[i];
        if (strcmp(p->name, symbol) != 0)
            continue;
        named = true;
        if (p->version <= cudaVersion && (!best || p->version > best->version))
            best = p;
    }
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

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
