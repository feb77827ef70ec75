/* Devices and contexts. Devices are the emulated GPUs of this process's node
 * (state.c loads them). A context is a small object naming a device; the
 * current one is per thread, the top of the thread's context stack
 * (cuCtxPushCurrent / cuCtxPopCurrent; cuCtxSetCurrent replaces the top).
 * Streams, events and cuCtxSynchronize are stream.c's.
 *
 * Lifecycle of a context: cuCtxCreate (current in the calling thread) ...
 * cuCtxDestroy (no longer current anywhere it is the calling thread's; the
 * object is kept, marked destroyed, so that a stale CUcontext is recognised).
 * A primary context exists per device and is counted by
 * cuDevicePrimaryCtxRetain / cuDevicePrimaryCtxRelease. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/entry.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_fault.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FAB__CU_CTX_MAGIC 0x63747874u    /* "ctxt" */

struct CUctx_st {
    uint32_t magic;
    int device;
    unsigned flags;
    bool primary;
    int primary_refs; /* cuDevicePrimaryCtxRetain count */
    bool destroyed;   /* a cuCtxCreate context after cuCtxDestroy */
    unsigned long long id; /* cuCtxGetId: unique in the process, never reused */
    /* The devices whose memory this context has enabled peer access to
     * (cuCtxEnablePeerAccess, one bit per device: a device's contexts are
     * not told apart), and the context's limits (cuCtxSetLimit). Both read
     * and written under fab__cu.lock. */
    uint64_t peers;
    size_t limits[CU_LIMIT_MAX];
    struct CUctx_st *next;
};

/* Guarded by fab__cu.lock; contexts are never freed, so that a stale
 * CUcontext is recognised (and a thread's current one stays readable). */
static struct CUctx_st *fab__cu_primary[FAB__CU_MAX_DEVICES];
static struct CUctx_st *fab__cu_contexts;
static unsigned long long fab__cu_next_ctx_id = 1;

/* The calling thread's context stack: [0, depth); the current context is the
 * top, or none when the stack is empty. cuCtxSetCurrent replaces the top (or
 * pushes onto an empty stack; NULL pops it), as the driver documents. */
#define FAB__CU_CTX_STACK 64
static _Thread_local struct CUctx_st *fab__cu_tls_stack[FAB__CU_CTX_STACK];
static _Thread_local int fab__cu_tls_depth;

static struct CUctx_st *fab__cu_current(void)
{
    return fab__cu_tls_depth > 0 ? fab__cu_tls_stack[fab__cu_tls_depth - 1] : NULL;
}

static void fab__cu_set_current(struct CUctx_st *ctx)
{
    if (!ctx) {
        if (fab__cu_tls_depth > 0)
            fab__cu_tls_depth--;
        return;
    }
    if (fab__cu_tls_depth == 0)
        fab__cu_tls_depth = 1;
    fab__cu_tls_stack[fab__cu_tls_depth - 1] = ctx;
}

CUresult fab__cu_current_ctx(CUcontext *ctx_out)
{
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctx_out = ctx;
    return CUDA_SUCCESS;
}

CUresult fab__cu_current_device(int *dev_out)
{
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev_out = ctx->device;
    return CUDA_SUCCESS;
}

/* Caller holds the lock. */
static bool fab__cu_ctx_valid(const struct CUctx_st *ctx)
{
    if (!ctx)
        return false;
    for (int i = 0; i < fab__cu.device_count; i++) {
        if (fab__cu_primary[i] == ctx)
            return true;
    }
    for (const struct CUctx_st *c = fab__cu_contexts; c; c = c->next) {
        if (c == ctx)
            return !c->destroyed;
    }
    return false;
}

/* ---- devices ------------------------------------------------------------ */

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FAB__CU_ENTER();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    FAB__CU_ENTER();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fab__cu.device_count;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = strnlen(fab__cu.devices[dev].name, sizeof(fab__cu.devices[dev].name));
    if (n >= (size_t)len)
        n = (size_t)len - 1;
    memcpy(name, fab__cu.devices[dev].name, n);
    name[n] = '\0';
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    *uuid = fab__cu.devices[dev].uuid;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = (size_t)fab__cu.devices[dev].total_memory;
    return CUDA_SUCCESS;
}

/* The CUDA 3.1 ABI: a 32-bit count, which saturates. */
CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t total;
    CUresult r = cuDeviceTotalMem_v2(bytes ? &total : NULL, dev);
    if (r == CUDA_SUCCESS)
        *bytes = total > 0xffffffffu ? 0xffffffffu : (unsigned int)total;
    return r;
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* As cuDeviceGetName: a short buffer gets what fits. */
    fab_device_info_t di = {.pci_domain = fab__cu.devices[dev].pci_domain,
                            .pci_bus = fab__cu.devices[dev].pci_bus,
                            .pci_device = fab__cu.devices[dev].pci_device};
    fab_device_pci_bus_id(&di, pciBusId, (size_t)len);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    FAB__CU_ENTER();
    if (!dev || !pciBusId)
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t domain, bus, device;
    if (fab_pci_bus_id_parse(pciBusId, &domain, &bus, &device) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < fab__cu.device_count; i++) {
        const fab__cu_device_t *d = &fab__cu.devices[i];
        if (d->pci_domain == domain && d->pci_bus == bus && d->pci_device == device) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}

static int fab__cu_attribute(const fab__cu_device_t *d, CUdevice_attribute attrib, bool *known)
{
    *known = true;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647; /* cuMemAllocPitch's bound */
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    /* Copies run on their streams' workers while kernels run on others
     * (stream.c), so they overlap, with ASYNC_ENGINE_COUNT's 3 engines. */
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0; /* no watchdog */
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return d->sm_count;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return 0;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    /* The topology's PCI address (docs/fabric.md), as cuDeviceGetPCIBusId
     * writes it and NVML reports it. */
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return (int)d->pci_bus;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return (int)d->pci_device;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50331648;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return (int)d->pci_domain;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return d->compute_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return d->compute_minor;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    /* cudaMallocManaged works (host-shared memory, docs/runtime.md); the
     * host reads it directly. Concurrent access stays 0: programs that see
     * 1 go on to cudaMemPrefetchAsync and cudaMemAdvise, which the runtime
     * does not have. */
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 1;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    /* cuMemHostRegister takes any host memory, READ_ONLY included. */
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    /* cuFuncSetAttribute keeps cluster dimensions; a launch runs the whole
     * grid on the CPU whatever its clusters. */
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
        return (d->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    /* What the emulated H100/GB200 class reports; NCCL 2.18-2.23 turn cuMem
     * off and NIXL falls back to cuMemAlloc where VMM memory cannot be
     * registered for RDMA. */
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1; /* pool.c */
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: return 1;
    /* cuFlushGPUDirectRDMAWrites is there (a fence: the memory is coherent). */
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
        return CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: /* what cuMemPoolCreate accepts */
        return (int)(d->handle_types &
                     (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC));
    /* cuMemGetHandleForAddressRange gives a dma-buf handle type fd. */
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: return 1;
    /* ... and for cuMemAllocHost / cuMemHostAlloc memory too (memfd-backed). */
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED: return 1;
    /* Says what the device can do, not whether this user holds a channel:
     * cuMemCreate refuses FABRIC without one even where this is 1 (DESIGN). */
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
        return (d->handle_types & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: return 0;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
    /* Multicast needs an NVLink fabric (multicast.c): a node whose fabric
     * is up and whose devices export FABRIC handles. */
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: {
        fab_node_info_t node;
        return fab_topology_node(fab__cu.topology, fab__cu.node, &node) == FAB_SUCCESS &&
               node.fabric_state == FAB_FABRIC_STATE_COMPLETED &&
               (d->handle_types & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    }
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: return 0;
    /* The topology spreads a node's GPUs evenly over its host NUMA nodes
     * (docs/fabric.md, host_numa_nodes). */
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return d->host_numa_id;
    /* cuMemCreate takes HOST, HOST_NUMA and HOST_NUMA_CURRENT locations. */
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    /* Host NUMA memory goes between nodes as FABRIC handles, where the device has them. */
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED:
        return (d->handle_types & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    /* Legacy IPC (ipc.c) goes through the daemon: without one,
     * cuIpcGetEventHandle and cuIpcGetMemHandle are NOT_SUPPORTED, and UCX
     * asks this attribute before it registers memory for them. */
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return fab__cu.client != NULL;
    /* A registered host range is its own device pointer (memory.c), as on a
     * Grace-attached GPU; NVSHMEM reads this before it registers host memory. */
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    /* memop.c runs the 64-bit stream writes and waits. */
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: return 1;
    /* Host and device are one coherent memory here, as over NVLink-C2C. */
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return (int)d->pci_device_id;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: return 0;
    default: break;
    }
    *known = false;
    return 0;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    /* The fabric's state may have changed since cuInit (a field fault). */
    if (attrib == CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)
        fab__cu_topology_refresh();
    bool known;
    int v = fab__cu_attribute(&fab__cu.devices[dev], attrib, &known);
    if (!known) {
        /* Attributes a real device has but the emulation does not model read
         * as 0 ("not supported"), as for a device without the feature; values
         * beyond the driver's list are refused as the driver refuses them. */
        if ((int)attrib <= 0 || (int)attrib > FAB_CU_DEVICE_ATTRIBUTE_LAST)
            return CUDA_ERROR_INVALID_VALUE;
        v = 0;
    }
    /* The node's config has the last word ("attribute.NAME"): a test can
     * make an attribute promise what a call then refuses, as on real
     * machines. */
    int32_t set;
    if (fab__topology_attribute(fab__cu.topology, fab__cu.node, (uint32_t)attrib, &set))
        v = set;
    *pi = v;
    return CUDA_SUCCESS;
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = fab__cu.devices[dev].compute_major;
    *minor = fab__cu.devices[dev].compute_minor;
    return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    FAB__CU_ENTER_DEVICE(dev);
    FAB__CU_ENTER_DEVICE(peerDev);
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    /* All devices of a node share the host's memory, unless the node's
     * GPUs are isolated from each other (gpus_isolated, a field fault: no
     * NVLink between them, as in a fabric partition that splits them). */
    fab__cu_topology_refresh();
    *canAccessPeer = dev != peerDev && !fab__topology_gpus_isolated(fab__cu.topology, fab__cu.node);
    return CUDA_SUCCESS;
}

void fab__cu_topology_refresh(void)
{
    if (!fab__cu.client)
        return;
    const fab_topology_t *topology;
    bool changed = false;
    if (fab__client_topology_refresh(fab__cu.client, &topology, &changed) != FAB_SUCCESS ||
        !changed)
        return;
    fab__cu.topology = topology; /* an atomic store */
}

/* ---- contexts ----------------------------------------------------------- */

/* What an H100's context starts with (cuCtxGetLimit on one, and CUDA's
 * documentation of each default); the emulation runs no device code that
 * any of them would bound, so they are numbers kept for the asker. */
static void fab__cu_limits_default(struct CUctx_st *ctx)
{
    memset(ctx->limits, 0, sizeof(ctx->limits));
    ctx->limits[CU_LIMIT_STACK_SIZE] = 1024;
    ctx->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1048576;
    ctx->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8388608;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    ctx->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 32;
    ctx->limits[CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0;
}

static CUresult fab__cu_ctx_new(CUdevice dev, unsigned flags, bool primary,
                                struct CUctx_st **ctx_out)
{
    struct CUctx_st *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx->magic = FAB__CU_CTX_MAGIC;
    ctx->device = dev;
    ctx->flags = flags;
    ctx->primary = primary;
    fab__cu_limits_default(ctx);
    *ctx_out = ctx;
    /* Ids come from one counter under the lock (callers hold it or, for
     * cuCtxCreate, take it just after): an atomic keeps it simple. */
    ctx->id = __atomic_fetch_add(&fab__cu_next_ctx_id, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    if (!fab__cu_primary[dev])
        r = fab__cu_ctx_new(dev, 0, true, &fab__cu_primary[dev]);
    if (r == CUDA_SUCCESS) {
        fab__cu_primary[dev]->primary_refs++;
        *pctx = fab__cu_primary[dev];
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    if (!ctx || ctx->primary_refs == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--ctx->primary_refs == 0) {
        /* A GPU's primary context is destroyed here, and its peer access
         * and limits with it; the emulation keeps the object (its memory
         * lives on) but starts it afresh. */
        ctx->peers = 0;
        fab__cu_limits_default(ctx);
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&fab__cu.lock);
    struct CUctx_st *ctx = fab__cu_primary[dev];
    *flags = ctx ? ctx->flags : 0;
    *active = ctx && ctx->primary_refs > 0;
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pctx || (flags & ~(unsigned)FAB_CU_CTX_FLAGS_MASK))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx;
    FAB__CU_TRY(fab__cu_ctx_new(dev, flags, false, &ctx));
    pthread_rwlock_wrlock(&fab__cu.lock);
    ctx->next = fab__cu_contexts;
    fab__cu_contexts = ctx;
    pthread_rwlock_unlock(&fab__cu.lock);
    /* The new context is pushed onto the thread's stack (documented). */
    if (fab__cu_tls_depth < FAB__CU_CTX_STACK)
        fab__cu_tls_stack[fab__cu_tls_depth++] = ctx;
    else
        fab__cu_set_current(ctx);
    *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                        unsigned int flags, CUdevice dev)
{
    /* Execution affinity limits SMs for kernels; with no kernels it has
     * nothing to limit, but the arguments are checked as the driver does. */
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                        CUdevice dev)
{
    if (ctxCreateParams) {
        if (ctxCreateParams->execAffinityParams && ctxCreateParams->cigParams)
            return CUDA_ERROR_INVALID_VALUE;
        if (ctxCreateParams->cigParams)
            return CUDA_ERROR_NOT_SUPPORTED; /* CIG is D3D12/Vulkan interop */
        return cuCtxCreate_v3(pctx, ctxCreateParams->execAffinityParams,
                              ctxCreateParams->numExecAffinityParams, flags, dev);
    }
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    bool found = false;
    for (struct CUctx_st *c = fab__cu_contexts; c; c = c->next) {
        if (c == ctx && !c->destroyed) {
            c->destroyed = true;
            found = true;
        }
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    if (!found)
        return CUDA_ERROR_INVALID_CONTEXT; /* a primary, stale or forged context */
    if (fab__cu_current() == ctx)
        fab__cu_set_current(NULL);
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (ctx) {
        pthread_rwlock_rdlock(&fab__cu.lock);
        bool ok = fab__cu_ctx_valid(ctx);
        pthread_rwlock_unlock(&fab__cu.lock);
        if (!ok)
            return CUDA_ERROR_INVALID_CONTEXT;
    }
    fab__cu_set_current(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FAB__CU_ENTER();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fab__cu_current();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    FAB__CU_ENTER();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = ctx->device;
    return CUDA_SUCCESS;
}

/* The peer context named by a peer-access call, checked: valid, and of
 * another device than the current context's. */
static CUresult fab__cu_peer_of(CUcontext peerContext, struct CUctx_st **cur_out)
{
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_rwlock_rdlock(&fab__cu.lock);
    bool ok = fab__cu_ctx_valid(peerContext);
    pthread_rwlock_unlock(&fab__cu.lock);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (peerContext->device == cur->device)
        return CUDA_ERROR_INVALID_DEVICE;
    *cur_out = cur;
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_peer_of(peerContext, &cur));
    /* GPUs isolated from each other (gpus_isolated, a field fault) cannot
     * reach each other's memory: what cuDeviceCanAccessPeer says 0 for,
     * cuCtxEnablePeerAccess refuses with PEER_ACCESS_UNSUPPORTED (cuda.h). */
    int can = 0;
    CUresult r = FAB__CU_INNER(cuDeviceCanAccessPeer(&can, cur->device, peerContext->device));
    if (r != CUDA_SUCCESS)
        return r;
    if (!can)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    /* Every device already reaches host memory, so access itself changes
     * nothing; what is recorded is what CUDA reports: a second enable is
     * PEER_ACCESS_ALREADY_ENABLED until cuCtxDisablePeerAccess. */
    uint64_t bit = (uint64_t)1 << peerContext->device;
    pthread_rwlock_wrlock(&fab__cu.lock);
    bool already = (cur->peers & bit) != 0;
    cur->peers |= bit;
    pthread_rwlock_unlock(&fab__cu.lock);
    return already ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur;
    FAB__CU_TRY(fab__cu_peer_of(peerContext, &cur));
    uint64_t bit = (uint64_t)1 << peerContext->device;
    pthread_rwlock_wrlock(&fab__cu.lock);
    bool enabled = (cur->peers & bit) != 0;
    cur->peers &= ~bit;
    pthread_rwlock_unlock(&fab__cu.lock);
    return enabled ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

/* What the link between two of the node's GPUs offers, as
 * cuDeviceCanAccessPeer sees it: where one reaches the other, loads, stores
 * and every atomic work (one coherent memory), over the NVLink the topology
 * describes, all links alike (rank 0); where it does not (gpus_isolated),
 * nothing. The emulation has no CUDA arrays, so none are reached. */
CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                 CUdevice dstDevice)
{
    FAB__CU_ENTER_DEVICE(srcDevice);
    FAB__CU_ENTER_DEVICE(dstDevice);
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    int can = 0;
    FAB__CU_TRY(FAB__CU_INNER(cuDeviceCanAccessPeer(&can, srcDevice, dstDevice)));
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = can; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = can; break;
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* The current context's flags, replaced (cuda.h: as cuDevicePrimaryCtxSetFlags
 * takes them); cuCtxGetFlags reads them back. */
CUresult cuCtxSetFlags(unsigned int flags)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags & ~(unsigned)FAB_CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    cur->flags = flags;
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

/* Writes a NIC (or another process) made to this GPU's memory are visible
 * once this returns. Here every device's memory is this host's, coherent:
 * a full fence is all that remains to do. */
CUresult cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                    CUflushGPUDirectRDMAWritesScope scope)
{
    FAB__CU_ENTER();
    if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
        (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
         scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fab__cu_current())
        return CUDA_ERROR_INVALID_CONTEXT;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

/* ---- limits --------------------------------------------------------------- */

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    FAB__CU_ENTER();
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE:
        /* rounded up to what a thread's stack is made of (16-byte words) */
        if (value > SIZE_MAX - 15)
            return CUDA_ERROR_INVALID_VALUE;
        value = (value + 15) & ~(size_t)15;
        break;
    case CU_LIMIT_PRINTF_FIFO_SIZE:
    case CU_LIMIT_MALLOC_HEAP_SIZE:
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
        break;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
        /* cuda.h: only below compute capability 9.0. */
        if (fab__cu.devices[cur->device].compute_major >= 9)
            return CUDA_ERROR_UNSUPPORTED_LIMIT;
        if (value > 24)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
        if (value > 128) /* a hint, clamped (cuda.h) */
            value = 128;
        break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: {
        int max = 0;
        FAB__CU_TRY(FAB__CU_INNER(cuDeviceGetAttribute(
            &max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, cur->device)));
        if (value > (size_t)(max > 0 ? max : 0))
            value = (size_t)(max > 0 ? max : 0);
        break;
    }
    default:
        /* SHMEM_SIZE and the CIG limits belong to CIG contexts, which the
         * emulation never makes; anything else is not a limit. */
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    }
    pthread_rwlock_wrlock(&fab__cu.lock);
    cur->limits[limit] = value;
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    FAB__CU_ENTER();
    if (!pvalue)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *cur = fab__cu_current();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    if ((unsigned)limit > (unsigned)CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_rwlock_rdlock(&fab__cu.lock);
    *pvalue = cur->limits[limit];
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

/* ---- the context stack and context queries ------------------------------ */

CUresult fab__cu_ctx_check(CUcontext ctx)
{
    pthread_rwlock_rdlock(&fab__cu.lock);
    bool ok = fab__cu_ctx_valid(ctx);
    pthread_rwlock_unlock(&fab__cu.lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    if (fab__cu_tls_depth == FAB__CU_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_tls_stack[fab__cu_tls_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FAB__CU_ENTER();
    if (fab__cu_tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *ctx = fab__cu_tls_stack[--fab__cu_tls_depth];
    if (pctx)
        *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

/* The 13.0 ABI: the device of ctx, or of the current context when NULL. */
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    FAB__CU_ENTER();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        return FAB__CU_INNER(cuCtxGetDevice(device));
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    *device = ctx->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    FAB__CU_ENTER();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *flags = ctx->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    FAB__CU_ENTER();
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        ctx = fab__cu_current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    FAB__CU_TRY(fab__cu_ctx_check(ctx));
    *ctxId = ctx->id;
    return CUDA_SUCCESS;
}

/* ---- sticky errors (device.h) ----------------------------------------------------- */

static _Atomic int fab__cu_sticky_errors[FAB__CU_MAX_DEVICES];

void fab__cu_sticky_set(int dev, CUresult r)
{
    if (dev < 0 || dev >= FAB__CU_MAX_DEVICES || r == CUDA_SUCCESS)
        return;
    int none = CUDA_SUCCESS;
    atomic_compare_exchange_strong(&fab__cu_sticky_errors[dev], &none, (int)r);
}

CUresult fab__cu_sticky(int dev)
{
    if (dev < 0 || dev >= FAB__CU_MAX_DEVICES)
        return CUDA_SUCCESS;
    return (CUresult)atomic_load_explicit(&fab__cu_sticky_errors[dev], memory_order_acquire);
}
