/* Shared helpers for the driver-emulation tests. Like the tests, they are
 * written against cuda.h only (NVIDIA's where installed, else the project's
 * subset), as a user's program would be, so the same sources run against a
 * real driver. */
#ifndef FAB_CUDA_TEST_H
#define FAB_CUDA_TEST_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"

#define CU_OK(call) assert_int_equal((call), CUDA_SUCCESS)
#define CU_IS(call, code) assert_int_equal((call), (code))

/* Point FABMEM_CONFIG at a fresh file holding text (the local config, which
 * applies when no daemon answers); returns its dir, which the caller removes
 * with fab_test_rmtree and frees. */
static inline char *use_config(const char *text)
{
    char *dir = NULL;
    char *path = fab_test_config_file(text, &dir);
    setenv("FABMEM_CONFIG", path, 1);
    free(path);
    return dir;
}

/* cuInit and the primary context of device dev, current in this thread. */
static inline CUcontext cut_init(int dev)
{
    CUcontext ctx = NULL;
    CU_OK(cuInit(0));
    CUdevice d;
    CU_OK(cuDeviceGet(&d, dev));
    CU_OK(cuDevicePrimaryCtxRetain(&ctx, d));
    CU_OK(cuCtxSetCurrent(ctx));
    return ctx;
}

static inline CUmemAllocationProp cut_prop(unsigned types, int dev)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = (CUmemAllocationHandleType)types;
    return prop;
}

static inline size_t cut_granularity(int dev)
{
    CUmemAllocationProp prop = cut_prop(0, dev);
    size_t g = 0;
    CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    return g;
}

static inline CUmemAccessDesc cut_access(int dev, CUmemAccess_flags flags)
{
    CUmemAccessDesc d;
    memset(&d, 0, sizeof(d));
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = dev;
    d.flags = flags;
    return d;
}

/* An allocation of size bytes on device dev that exports as a POSIX fd. */
static inline CUmemGenericAllocationHandle cut_create_posix(size_t size, int dev)
{
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, dev);
    CUmemGenericAllocationHandle h = 0;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    return h;
}

/* Reserve size bytes, map handle at its start, grant device 0 read-write. */
static inline CUdeviceptr cut_map_rw(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAddressReserve(&ptr, size, 0, 0, 0));
    CU_OK(cuMemMap(ptr, size, 0, h, 0));
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, size, &d, 1));
    return ptr;
}

static inline void cut_unmap_free(CUdeviceptr ptr, size_t size)
{
    CU_OK(cuMemUnmap(ptr, size));
    CU_OK(cuMemAddressFree(ptr, size));
}

/* Helpers' exit codes name the step that failed. */
#define HELPER_CU(call, code)                                                  \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, "helper: %s -> %d\n", #call, (int)r_);             \
            return (code);                                                     \
        }                                                                      \
    } while (0)

/* A helper's start: cuInit, device 0's primary context current, then
 * "ready" to the parent. 0, or the exit code of the step that failed
 * (10 to 13). */
static inline int cut_helper_ready(int sock)
{
    CUcontext ctx;
    HELPER_CU(cuInit(0), 10);
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    return fab_test_send_word(sock, "ready") == 0 ? 0 : 13;
}

#define CUT_HELPER_READY(sock)                                                 \
    do {                                                                       \
        int cut_rc_ = cut_helper_ready(sock);                                  \
        if (cut_rc_ != 0)                                                      \
            return cut_rc_;                                                    \
    } while (0)

#endif /* FAB_CUDA_TEST_H */
