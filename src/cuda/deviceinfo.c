/* Devices: what the emulated GPUs of this process's node are (state.c loads
 * them from the topology), as the cuDevice* queries report them: count,
 * names, UUIDs, memory, PCI bus ids, attributes (the node's config has the
 * last word), compute capability, peer access and the P2P attributes of the
 * link between two of them, and the refresh that sees a field fault change
 * the fabric's state. Contexts are device.c's. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/entry.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_fault.h"

#include <stdbool.h>
#include <string.h>

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
