/* The driver emulation's internals: the one process context the CUDA API
 * implies (devices, contexts, streams, allocations, address reservations), its
 * lock, and the prototypes of every exported cu* entry point under the
 * versioned names cuda.h maps calls to and under the plain names.
 *
 * Locking: one rwlock, fab__cu.lock, guards all state. Calls that change state
 * take it for writing; copies and memsets take it for reading and hold it
 * while they touch memory, so that no other thread can unmap a range under a
 * copy (the copy then either finishes or was refused; it never faults).
 *
 * The fabric client is never called with fab__cu.lock held: a round trip to a
 * stalled daemon would otherwise stall every thread, even those whose calls
 * need no daemon. So a FABRIC create or import talks to the daemon first and
 * inserts the allocation under the lock after; an export pins the allocation
 * (pins, under the lock), unlocks, exports, and locks again to unpin; the last
 * reference to an allocation unlinks it under the lock and releases its region
 * after unlocking (fab__cu_alloc_destroy). Creating the client, which may
 * start a daemon, takes fab__cu.client_lock and nothing else.
 *
 * Lock order: fab__cu.client_lock, then the client's own lock (inside
 * fab_client_connect). fab__cu.lock is never held together with either, in
 * any order. */
#ifndef FAB_CUDA_INTERNAL_H
#define FAB_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"
#include "fabmem/status.h"

#include "fabmem/fabric.h"
#include "src/common/log.h"

#define FAB__CU_EXPORT __attribute__((visibility("default")))
#define FAB__CU_MAX_DEVICES 64
#define FAB__CU_DEFAULT_VERSION 13000

/* ---- devices ----------------------------------------------------------- */

typedef struct fab__cu_device {
    char name[256];
    CUuuid uuid;
    uint64_t total_memory;
    uint64_t granularity;
    uint32_t handle_types; /* CU_MEM_HANDLE_TYPE_* bits */
    int compute_major;
    int compute_minor;
    int sm_count;
} fab__cu_device_t;

/* ---- contexts and streams ---------------------------------------------- */

struct CUctx_st {
    uint32_t magic;
    int device;
    unsigned flags;
    bool primary;
    int primary_refs; /* cuDevicePrimaryCtxRetain count */
    bool destroyed;   /* a cuCtxCreate context after cuCtxDestroy */
    struct CUctx_st *next;
};

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    struct CUstream_st *next;
};

/* ---- allocations (generic handles) -------------------------------------
 *
 * An allocation lives while its generic handle has references (cuMemCreate or
 * cuMemImportFromShareableHandle gives one, each cuMemRetainAllocationHandle
 * one more, each cuMemRelease drops one) or any mapping of it exists, or an
 * export is under way (pins); when all are gone the allocation leaves the
 * table and its memory is given back, after the lock is dropped: the memfd is
 * closed, or the fabric region is released so that the daemon may forget it. */
typedef struct fab__cu_alloc {
    CUmemGenericAllocationHandle id;
    size_t size;
    int device;
    CUmemAllocationProp prop; /* as created, or as the import implies */
    int fd;                   /* the backing memfd; owned unless region is set */
    void *region;             /* fab_region_t * when the fabric backs it */
    unsigned handle_refs;
    unsigned map_count;
    unsigned pins;           /* exports in flight without the lock: keep the memory */
    unsigned fabric_exports; /* diagnosis only (DESIGN: "The seed's rules") */
    bool read_only;          /* never mapped writable: the fd or the grant allows less */
    bool counted;            /* size is in fab__cu.used[device] (made here) */
    struct fab__cu_alloc *next; /* in its bucket; once unlinked, in a list of dead ones */
} fab__cu_alloc_t;

/* One mapped piece of a reservation: a cuMemMap mapping, possibly split by
 * cuMemSetAccess over part of it. Pieces of one mapping share map_id. Access
 * is kept per device as two bit sets. */
typedef struct fab__cu_piece {
    uintptr_t addr;
    size_t size;
    fab__cu_alloc_t *alloc;
    size_t alloc_offset;
    uint64_t map_id;
    uint64_t readers;
    uint64_t writers;
} fab__cu_piece_t;

typedef struct fab__cu_range {
    uintptr_t base;
    size_t size;
    uintptr_t map_base; /* the whole mmap, over-reserved for alignment */
    size_t map_len;
    fab__cu_piece_t *pieces; /* sorted by addr, non-overlapping */
    size_t npieces;
    size_t cap;
} fab__cu_range_t;

#define FAB__CU_ALLOC_BUCKETS 256

typedef struct fab__cu_state {
    pthread_rwlock_t lock;
    CUresult init_result; /* of the first cuInit; NOT_INITIALIZED before */
    bool initialized;
    int driver_version;
    int device_count;
    fab__cu_device_t devices[FAB__CU_MAX_DEVICES];
    struct CUctx_st *primary[FAB__CU_MAX_DEVICES];
    struct CUctx_st *contexts;
    struct CUstream_st *streams;
    fab__cu_range_t **ranges; /* sorted by base */
    size_t nranges;
    size_t ranges_cap;
    fab__cu_alloc_t *allocs[FAB__CU_ALLOC_BUCKETS];
    uint64_t used[FAB__CU_MAX_DEVICES]; /* bytes cuMemCreate holds per device */
    CUmemGenericAllocationHandle next_alloc_id;
    uint64_t next_map_id;
    fab_topology_t *topology;
    pthread_mutex_t client_lock; /* guards client, which is only ever set once */
    fab_client_t *client;
} fab__cu_state_t;

extern fab__cu_state_t fab__cu;


/* CUDA_SUCCESS once cuInit succeeded, else what a call must return. */
CUresult fab__cu_check_init(void);

/* The devices of this process's node, from the fabric topology ($FABMEM_CONFIG,
 * $FABMEM_NODE). Called once, by cuInit. */
CUresult fab__cu_devices_load(fab__cu_state_t *st);

/* The calling thread's current context (NULL when none). */
struct CUctx_st *fab__cu_current(void);
void fab__cu_set_current(struct CUctx_st *ctx);
bool fab__cu_ctx_valid(const struct CUctx_st *ctx); /* caller holds the lock */
CUresult fab__cu_stream_check(CUstream stream);    /* caller holds the lock */

/* Allocations (alloc.c); the caller holds the lock for writing. An allocation
 * whose last reference went is unlinked and pushed on *dead, for the caller
 * to pass to fab__cu_alloc_destroy once it has unlocked. */
fab__cu_alloc_t *fab__cu_alloc_find(CUmemGenericAllocationHandle id);
void fab__cu_alloc_unref_mapping(fab__cu_alloc_t *alloc, fab__cu_alloc_t **dead);
/* Give back the memory of unlinked allocations; the caller holds no lock. */
void fab__cu_alloc_destroy(fab__cu_alloc_t *dead);

/* Ranges (vmm.c); the caller holds the lock. */
fab__cu_range_t *fab__cu_range_find(uintptr_t addr);
/* Whether [addr, addr+len) is mapped for device with the access needed.
 * Returns CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (not all mapped, or not in
 * one reservation) or CUDA_ERROR_ILLEGAL_ADDRESS (mapped, access missing). */
CUresult fab__cu_range_check(uintptr_t addr, size_t len, int device, bool write);

CUresult fab__cu_from_status(fab_status_t status);

/* ---- exported entry points ---------------------------------------------- */
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
FAB__CU_API cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
FAB__CU_API cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
FAB__CU_API cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRelease(CUdevice dev);
FAB__CU_API cuDevicePrimaryCtxRelease_v2(CUdevice dev);
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
FAB__CU_API cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N);
FAB__CU_API cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
FAB__CU_API cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
FAB__CU_API cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);

FAB__CU_API cuStreamCreate(CUstream *phStream, unsigned int Flags);
FAB__CU_API cuStreamDestroy(CUstream hStream);
FAB__CU_API cuStreamDestroy_v2(CUstream hStream);
FAB__CU_API cuStreamSynchronize(CUstream hStream);
FAB__CU_API cuStreamQuery(CUstream hStream);

#endif /* FAB_CUDA_INTERNAL_H */
