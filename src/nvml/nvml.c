/* libnvidia-ml.so.1's emulation: the NVML calls that NCCL, UCX, NVSHMEM and
 * PyTorch make to learn a GPU's identity, PCI place, NVLink fabric and
 * platform, answered from the fabric daemon's topology so that NVML and the
 * driver emulation (libcuda.so.1) describe the same devices. docs/nvml.md
 * lists every function, where each value comes from and every error.
 *
 * State: one process-wide table of this node's devices, filled by the first
 * nvmlInit (a connection to the daemon and its TOPOLOGY reply, or the local
 * config when no daemon answers, as libcuda does) and dropped by the
 * nvmlShutdown that balances the last nvmlInit. Between the two the table
 * does not change, so queries read it without a lock; init and shutdown
 * serialise on one mutex. A query racing the last nvmlShutdown is the
 * caller's bug, as it is with NVIDIA's library.
 *
 * NVML ignores CUDA_VISIBLE_DEVICES: its index is the node's GPU ordinal. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
/* The library is built with hidden visibility; the entry points declared by
 * the header are the ones it exports (libnvidia-ml.map keeps only nvml*). */
#pragma GCC visibility push(default)
#include "src/nvml/include/nvml.h"
#pragma GCC visibility pop

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fabmem/fabric.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_fault.h"
#include "src/common/log.h"

#define FAB__NVML_MAX_DEVICES 64

/* What an NVML handle points to: one GPU of this node. */
struct nvmlDevice_st {
    unsigned index; /* the node's ordinal, which NVML's index is */
    fab_device_info_t info;
};

static struct {
    pthread_mutex_t lock; /* serialises init and shutdown */
    int refs;             /* nvmlInit calls not yet balanced by nvmlShutdown */
    fab_client_t *client; /* the daemon's connection, or NULL */
    fab_topology_t *local; /* the local config when no daemon answered */
    bool fabric;          /* a daemon answered: the fabric is up */
    fab_node_info_t node;
    int cuda_version;
    unsigned count;
    struct nvmlDevice_st devices[FAB__NVML_MAX_DEVICES];
} fab__nvml = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- init and shutdown ---------------------------------------------------- */

static nvmlReturn_t fab__nvml_copy(const fab_topology_t *topology, int node)
{
    if (fab_topology_node(topology, node, &fab__nvml.node) != FAB_SUCCESS)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    unsigned count = (unsigned)fab__nvml.node.device_count;
    if (count > FAB__NVML_MAX_DEVICES)
        count = FAB__NVML_MAX_DEVICES;
    for (unsigned i = 0; i < count; i++) {
        struct nvmlDevice_st *d = &fab__nvml.devices[i];
        d->index = i;
        if (fab_topology_device(topology, node, (int)i, &d->info) != FAB_SUCCESS)
            return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    fab__nvml.count = count;
    fab__nvml.cuda_version = fab_topology_driver_version(topology);
    return NVML_SUCCESS;
}

/* The daemon's topology, asked for once; the local config only when no
 * daemon answers and none may start (libcuda's rule, docs/cuda.md). */
static nvmlReturn_t fab__nvml_load(void)
{
    fab_client_t *client = NULL;
    fab_status_t s = fab_client_connect(NULL, &client);
    if (s == FAB_SUCCESS) {
        const fab_topology_t *topology = NULL;
        s = fab_client_topology(client, &topology);
        if (s == FAB_SUCCESS) {
            nvmlReturn_t r = fab__nvml_copy(topology, fab_client_node_index(client));
            if (r == NVML_SUCCESS) {
                fab__nvml.client = client;
                fab__nvml.fabric = true;
                return r;
            }
            fab_client_close(client);
            return r;
        }
        fab_client_close(client);
    }
    if (s != FAB_ERROR_SYSTEM_NOT_READY) {
        fab__log(FAB__LOG_ERROR, "nvmlInit: the fabric daemon refused this process: %s",
                 fab_status_string(s));
        return s == FAB_ERROR_NOT_PERMITTED ? NVML_ERROR_NO_PERMISSION
                                            : NVML_ERROR_DRIVER_NOT_LOADED;
    }
    fab__log(FAB__LOG_INFO, "nvmlInit: no fabric daemon answers and none may start; devices "
             "from the local config, fabric not started");
    fab_topology_t *topology = NULL;
    int node = 0;
    if (fab_topology_load(NULL, &topology) != FAB_SUCCESS)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (fab_topology_find_node(topology, NULL, &node) != FAB_SUCCESS) {
        fab__log(FAB__LOG_ERROR, "nvmlInit: FABMEM_NODE names no node of the local topology");
        fab_topology_destroy(topology);
        return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    nvmlReturn_t r = fab__nvml_copy(topology, node);
    if (r != NVML_SUCCESS) {
        fab_topology_destroy(topology);
        return r;
    }
    fab__nvml.local = topology;
    fab__nvml.fabric = false;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    const unsigned known = NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH | NVML_INIT_FLAG_FORCE_INIT;
    if ((flags & ~known) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&fab__nvml.lock);
    nvmlReturn_t r = NVML_SUCCESS;
    if (fab__nvml.refs == 0)
        r = fab__nvml_load();
    if (r == NVML_SUCCESS)
        __atomic_store_n(&fab__nvml.refs, fab__nvml.refs + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fab__nvml.lock);
    return r;
}

nvmlReturn_t nvmlInit_v2(void)
{
    return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlInit(void)
{
    return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&fab__nvml.lock);
    if (fab__nvml.refs == 0) {
        pthread_mutex_unlock(&fab__nvml.lock);
        return NVML_ERROR_UNINITIALIZED;
    }
    __atomic_store_n(&fab__nvml.refs, fab__nvml.refs - 1, __ATOMIC_RELEASE);
    if (fab__nvml.refs == 0) {
        fab_client_close(fab__nvml.client);
        fab_topology_destroy(fab__nvml.local);
        fab__nvml.client = NULL;
        fab__nvml.local = NULL;
        fab__nvml.fabric = false;
        fab__nvml.count = 0;
    }
    pthread_mutex_unlock(&fab__nvml.lock);
    return NVML_SUCCESS;
}

static bool fab__nvml_initialized(void)
{
    return __atomic_load_n(&fab__nvml.refs, __ATOMIC_ACQUIRE) > 0;
}

/* The device a handle names: UNINITIALIZED before nvmlInit, INVALID_ARGUMENT
 * for a handle that is not one of ours. */
static nvmlReturn_t fab__nvml_device(nvmlDevice_t device, const struct nvmlDevice_st **out)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    /* Compared as integers: a foreign pointer is no element of the table,
     * and C orders only pointers into one array. */
    uintptr_t at = (uintptr_t)device, first = (uintptr_t)fab__nvml.devices;
    if (device == NULL || at < first ||
        at >= first + fab__nvml.count * sizeof(fab__nvml.devices[0]) ||
        (at - first) % sizeof(fab__nvml.devices[0]) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = device;
    return NVML_SUCCESS;
}

#define FAB__NVML_TRY(call)                    \
    do {                                       \
        nvmlReturn_t fab__nvml_try_ = (call);  \
        if (fab__nvml_try_ != NVML_SUCCESS)    \
            return fab__nvml_try_;             \
    } while (0)

/* Copy text into a caller's buffer of length bytes: INSUFFICIENT_SIZE, and
 * nothing written, when it does not fit with its NUL. */
static nvmlReturn_t fab__nvml_text(const char *text, char *buf, unsigned int length)
{
    if (buf == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t n = strlen(text);
    if (n + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, text, n + 1);
    return NVML_SUCCESS;
}

/* ---- errors and system ---------------------------------------------------- */

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
#define FAB__NVML_TEXT(name, value, text) \
    case NVML_##name:                     \
        return text;
        FAB_NVML_RETURN_LIST(FAB__NVML_TEXT)
#undef FAB__NVML_TEXT
    }
    return "Unknown error";
}

/* The kernel driver's branch that shipped with a CUDA version; NVML reports
 * the kernel driver's version, the topology knows only CUDA's. */
static int fab__nvml_branch(int cuda_version)
{
    static const struct {
        int cuda, branch;
    } table[] = {
        {13000, 580}, {12090, 575}, {12080, 570}, {12060, 560}, {12050, 555},
        {12040, 550}, {12030, 545}, {12020, 535}, {12010, 530}, {12000, 525},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (cuda_version >= table[i].cuda)
            return table[i].branch;
    }
    return 520;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    char text[32];
    snprintf(text, sizeof(text), "%d.00.00", fab__nvml_branch(fab__nvml.cuda_version));
    return fab__nvml_text(text, version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    char text[48];
    snprintf(text, sizeof(text), "%d.%d.00.00", fab__nvml.cuda_version / 1000,
             fab__nvml_branch(fab__nvml.cuda_version));
    return fab__nvml_text(text, version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    if (cudaDriverVersion == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* NVML answers this one before nvmlInit too: it asks the CUDA driver. */
    if (!fab__nvml_initialized()) {
        FAB__NVML_TRY(nvmlInit_v2());
        *cudaDriverVersion = fab__nvml.cuda_version;
        return nvmlShutdown();
    }
    *cudaDriverVersion = fab__nvml.cuda_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}

/* ---- finding devices ------------------------------------------------------ */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (deviceCount == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = fab__nvml.count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (device == NULL || index >= fab__nvml.count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &fab__nvml.devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (uuid == NULL || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < fab__nvml.count; i++) {
        char text[FAB_UUID_STRING_MAX];
        fab_device_uuid_string(&fab__nvml.devices[i].info.uuid, text, sizeof(text));
        if (strcasecmp(text, uuid) == 0) {
            *device = &fab__nvml.devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (pciBusId == NULL || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    uint32_t domain, bus, slot;
    if (fab_pci_bus_id_parse(pciBusId, &domain, &bus, &slot) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < fab__nvml.count; i++) {
        const fab_device_info_t *info = &fab__nvml.devices[i].info;
        if (info->pci_domain == domain && info->pci_bus == bus && info->pci_device == slot) {
            *device = &fab__nvml.devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

/* ---- identity ------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (index == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = d->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (minorNumber == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *minorNumber = d->index; /* /dev/nvidiaN of the node's GPU N */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    char text[FAB_UUID_STRING_MAX];
    fab_device_uuid_string(&d->info.uuid, text, sizeof(text));
    return fab__nvml_text(text, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    return fab__nvml_text(d->info.name, name, length);
}

/* The current record, written as NVIDIA's library writes it: the legacy
 * bus id, the five numbers, and the long bus id's characters with their NUL,
 * nothing after. A caller with the first ABI's 52-byte record that calls
 * this version (NCCL 2.30's does) then gets one byte past its record, the
 * NUL of the 16-character id, as from NVIDIA's library, and no more. */
static void fab__nvml_pci(const fab_device_info_t *info, nvmlPciInfo_t *pci)
{
    char legacy[sizeof(pci->busIdLegacy)] = {0};
    snprintf(legacy, sizeof(legacy), "%04X:%02X:%02X.0", (unsigned)(info->pci_domain & 0xffff),
             (unsigned)(info->pci_bus & 0xff), (unsigned)(info->pci_device & 0x1f));
    memcpy(pci->busIdLegacy, legacy, sizeof(legacy));
    pci->domain = info->pci_domain;
    pci->bus = info->pci_bus;
    pci->device = info->pci_device;
    pci->pciDeviceId = info->pci_device_id;
    pci->pciSubSystemId = 0;
    char id[sizeof(pci->busId)];
    int n = snprintf(id, sizeof(id), "%08X:%02X:%02X.0", (unsigned)info->pci_domain,
                     (unsigned)(info->pci_bus & 0xff), (unsigned)(info->pci_device & 0x1f));
    memcpy(pci->busId, id, (size_t)n + 1);
}

/* The first two versions' record: the legacy bus id and the five numbers, then
 * 16 reserved bytes where the current record has its long bus id. */
#define FAB__NVML_PCI_OLD_BYTES (offsetof(nvmlPciInfo_t, busId) + 16)

static void fab__nvml_pci_old(const fab_device_info_t *info, nvmlPciInfo_t *pci)
{
    nvmlPciInfo_t full;
    memset(&full, 0, sizeof(full));
    fab__nvml_pci(info, &full);
    memset(full.busId, 0, 16);
    memcpy(pci, &full, FAB__NVML_PCI_OLD_BYTES);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    fab__nvml_pci(&d->info, pci);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    fab__nvml_pci_old(&d->info, pci);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v2(device, pci);
}

/* The PCI record with the device's class: a 3D controller (base class
 * 0x03, sub-class 0x02), as data-centre GPUs are. */
nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t *pci)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (pci->version != FAB_NVML_PCI_INFO_EXT_V1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlPciInfoExt_v1_t out;
    memset(&out, 0, sizeof(out));
    out.version = FAB_NVML_PCI_INFO_EXT_V1;
    out.domain = d->info.pci_domain;
    out.bus = d->info.pci_bus;
    out.device = d->info.pci_device;
    out.pciDeviceId = d->info.pci_device_id;
    out.pciSubSystemId = 0;
    out.baseClass = 0x03;
    out.subClass = 0x02;
    snprintf(out.busId, sizeof(out.busId), "%08X:%02X:%02X.0", (unsigned)d->info.pci_domain,
             (unsigned)(d->info.pci_bus & 0xff), (unsigned)(d->info.pci_device & 0x1f));
    memcpy(pci, &out, sizeof(out));
    return NVML_SUCCESS;
}

/* The PCIe link to the host: x16 at the generation the GPU class has
 * (Hopper gen 5, Blackwell gen 6), trained at its best, so the current
 * values are the maximum ones. The emulation has no PCIe and no /sys
 * device, so these are what such a GPU reports, not a measurement. */
static unsigned fab__nvml_pcie_gen(const struct nvmlDevice_st *d)
{
    return d->info.compute_major >= 10 ? 6u : 5u;
}

static nvmlReturn_t fab__nvml_pcie(nvmlDevice_t device, unsigned int *out, bool width)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (out == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = width ? 16u : fab__nvml_pcie_gen(d);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
    return fab__nvml_pcie(device, currLinkGen, false);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
    return fab__nvml_pcie(device, maxLinkGen, false);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
    return fab__nvml_pcie(device, currLinkWidth, true);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
    return fab__nvml_pcie(device, maxLinkWidth, true);
}

/* One of the NVML_PCIE_LINK_MAX_SPEED_* codes (not MB/s): generation g runs
 * at code g - 1 from gen 2 (5000 MBPS is code 2). */
nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int *maxSpeed)
{
    unsigned gen;
    FAB__NVML_TRY(fab__nvml_pcie(device, maxSpeed ? &gen : NULL, false));
    *maxSpeed = gen == 6 ? NVML_PCIE_LINK_MAX_SPEED_64000MBPS : NVML_PCIE_LINK_MAX_SPEED_32000MBPS;
    return NVML_SUCCESS;
}

/* No confidential computing: the environment is unavailable, the feature
 * off, as on a machine without it. */
nvmlReturn_t nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t *state)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (state == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    state->environment = NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE;
    state->ccFeature = NVML_CC_SYSTEM_FEATURE_DISABLED;
    state->devToolsMode = NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetConfComputeSettings(nvmlSystemConfComputeSettings_t *settings)
{
    if (!fab__nvml_initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (settings == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (settings->version != FAB_NVML_CONF_COMPUTE_SETTINGS_V1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    settings->environment = NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE;
    settings->ccFeature = NVML_CC_SYSTEM_FEATURE_DISABLED;
    settings->devToolsMode = NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF;
    settings->multiGpuMode = NVML_CC_SYSTEM_MULTIGPU_NONE;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* The emulation keeps no per-GPU count across processes: all free. */
    memory->total = d->info.total_memory;
    memory->free = d->info.total_memory;
    memory->used = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != FAB_NVML_MEMORY_V2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = d->info.total_memory;
    memory->reserved = 0;
    memory->free = d->info.total_memory;
    memory->used = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (major == NULL || minor == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = d->info.compute_major;
    *minor = d->info.compute_minor;
    return NVML_SUCCESS;
}

/* ---- fabric --------------------------------------------------------------- */

/* Every field of every fabric-info version, for the node's GPUs. */
typedef struct fab__nvml_fabric {
    unsigned char cluster_uuid[16];
    nvmlReturn_t status;
    unsigned int clique_id;
    nvmlGpuFabricState_t state;
    unsigned int health_mask;
    unsigned char health_summary;
} fab__nvml_fabric_t;

/* The summary NVML's v3 adds, from the mask: nothing known, nothing wrong,
 * only bandwidth lost (limited capacity), or anything else wrong. */
static unsigned char fab__nvml_summary(unsigned int mask)
{
    if (mask == 0)
        return NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED;
    bool degraded = false, other = false;
    for (int shift = 0; shift <= 6; shift += 2) {
        if (((mask >> shift) & 3u) == FAB_FABRIC_HEALTH_FIELD_TRUE) {
            if (shift == FAB_FABRIC_HEALTH_SHIFT_DEGRADED_BW)
                degraded = true;
            else
                other = true;
        }
    }
    return other      ? NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY
           : degraded ? NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY
                      : NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY;
}

/* This node's record as the daemon has it now: a field fault (`fabmem
 * fault`) may have changed it since nvmlInit. One round trip; *isolated_out
 * (may be NULL) says whether its GPUs are isolated from each other. */
static void fab__nvml_node_now(fab_node_info_t *node_out, bool *isolated_out)
{
    pthread_mutex_lock(&fab__nvml.lock);
    const fab_topology_t *topology = fab__nvml.local;
    int index = 0;
    if (fab__nvml.client != NULL) {
        bool changed = false;
        index = fab_client_node_index(fab__nvml.client);
        if (fab__client_topology_refresh(fab__nvml.client, &topology, &changed) != FAB_SUCCESS)
            topology = NULL;
        if (topology != NULL && changed)
            (void)fab_topology_node(topology, index, &fab__nvml.node);
    } else if (topology != NULL) {
        (void)fab_topology_find_node(topology, NULL, &index);
    }
    *node_out = fab__nvml.node;
    if (isolated_out != NULL)
        *isolated_out = topology != NULL && fab__topology_gpus_isolated(topology, index);
    pthread_mutex_unlock(&fab__nvml.lock);
}

/* A node whose GPUs have no fabric says NOT_SUPPORTED; with no daemon the
 * fabric manager of the emulation is not running, so the state is
 * NOT_STARTED and no cluster or clique is known yet (docs/nvml.md). */
static void fab__nvml_fabric(fab__nvml_fabric_t *f)
{
    memset(f, 0, sizeof(*f));
    fab_node_info_t now;
    fab__nvml_node_now(&now, NULL);
    const fab_node_info_t *node = &now;
    if (node->fabric_state == FAB_FABRIC_STATE_NOT_SUPPORTED) {
        f->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
        return;
    }
    f->health_mask = node->fabric_health;
    f->health_summary = fab__nvml_summary(node->fabric_health);
    if (!fab__nvml.fabric) {
        f->state = NVML_GPU_FABRIC_STATE_NOT_STARTED;
        return;
    }
    memcpy(f->cluster_uuid, node->cluster_uuid.bytes, 16);
    f->status = (nvmlReturn_t)node->fabric_status;
    f->clique_id = node->clique_id;
    f->state = (nvmlGpuFabricState_t)node->fabric_state;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (gpuFabricInfo == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    fab__nvml_fabric_t f;
    fab__nvml_fabric(&f);
    nvmlGpuFabricInfo_t out;
    memset(&out, 0, sizeof(out));
    memcpy(out.clusterUuid, f.cluster_uuid, 16);
    out.status = f.status;
    out.cliqueId = f.clique_id;
    out.state = f.state;
    *gpuFabricInfo = out;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (gpuFabricInfo == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    fab__nvml_fabric_t f;
    fab__nvml_fabric(&f);
    /* Write only as much as the caller's version holds: a v2 caller (NCCL's
     * own copy of the struct, say) has no room for the summary. */
    if (gpuFabricInfo->version == FAB_NVML_GPU_FABRIC_INFO_V2) {
        nvmlGpuFabricInfo_v2_t out;
        memset(&out, 0, sizeof(out));
        out.version = FAB_NVML_GPU_FABRIC_INFO_V2;
        memcpy(out.clusterUuid, f.cluster_uuid, 16);
        out.status = f.status;
        out.cliqueId = f.clique_id;
        out.state = f.state;
        out.healthMask = f.health_mask;
        memcpy(gpuFabricInfo, &out, sizeof(out));
        return NVML_SUCCESS;
    }
    if (gpuFabricInfo->version == FAB_NVML_GPU_FABRIC_INFO_V3) {
        nvmlGpuFabricInfo_v3_t out;
        memset(&out, 0, sizeof(out));
        out.version = FAB_NVML_GPU_FABRIC_INFO_V3;
        memcpy(out.clusterUuid, f.cluster_uuid, 16);
        out.status = f.status;
        out.cliqueId = f.clique_id;
        out.state = f.state;
        out.healthMask = f.health_mask;
        out.healthSummary = f.health_summary;
        memcpy(gpuFabricInfo, &out, sizeof(out));
        return NVML_SUCCESS;
    }
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

nvmlReturn_t nvmlDeviceGetPlatformInfo(nvmlDevice_t device, nvmlPlatformInfo_t *platformInfo)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (platformInfo == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    const fab_node_info_t *node = &fab__nvml.node;
    /* Both versions have the same size and offsets; only the names of the
     * serial and place fields changed. No InfiniBand: the GUID is zero. */
    unsigned char serial[16] = {0};
    memcpy(serial, node->chassis_serial, strnlen(node->chassis_serial, sizeof(serial)));
    if (platformInfo->version == FAB_NVML_PLATFORM_INFO_V1) {
        nvmlPlatformInfo_v1_t out;
        memset(&out, 0, sizeof(out));
        out.version = FAB_NVML_PLATFORM_INFO_V1;
        memcpy(out.rackGuid, serial, sizeof(serial));
        out.chassisPhysicalSlotNumber = node->slot_number;
        out.computeSlotIndex = node->tray_index;
        out.nodeIndex = node->host_id;
        out.moduleId = (unsigned char)d->index;
        memcpy(platformInfo, &out, sizeof(out));
        return NVML_SUCCESS;
    }
    if (platformInfo->version == FAB_NVML_PLATFORM_INFO_V2) {
        nvmlPlatformInfo_v2_t out;
        memset(&out, 0, sizeof(out));
        out.version = FAB_NVML_PLATFORM_INFO_V2;
        memcpy(out.chassisSerialNumber, serial, sizeof(serial));
        out.slotNumber = node->slot_number;
        out.trayIndex = node->tray_index;
        out.hostId = node->host_id;
        out.moduleId = (unsigned char)d->index;
        memcpy(platformInfo, &out, sizeof(out));
        return NVML_SUCCESS;
    }
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

/* ---- NVLink and peers ----------------------------------------------------- */

/* The node's GPUs have NVLink unless its config says they have no fabric:
 * 18 links, as a Hopper or Blackwell GPU has, all up, each to an NVSwitch.
 * A link past them (nvml.h allows up to NVML_NVLINK_MAX_LINKS) is no link. */
#define FAB__NVML_LINKS 18u

static nvmlReturn_t fab__nvml_link(nvmlDevice_t device, unsigned int link,
                                   const struct nvmlDevice_st **out)
{
    FAB__NVML_TRY(fab__nvml_device(device, out));
    if (link >= FAB__NVML_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fab__nvml.node.fabric_state == FAB_FABRIC_STATE_NOT_SUPPORTED)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *isActive)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_link(device, link, &d));
    if (isActive == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *isActive = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

/* The NVSwitch at the far end of a link: two links to each switch, the
 * switches on buses 0xC0 and up of the node's domain, with an NVSwitch's PCI
 * device id. */
#define FAB__NVML_NVSWITCH_PCI_ID 0x22a310deu

static void fab__nvml_remote(const struct nvmlDevice_st *d, unsigned int link, nvmlPciInfo_t *pci)
{
    fab_device_info_t sw = d->info;
    sw.pci_bus = 0xc0u + link / 2u;
    sw.pci_device = 0;
    sw.pci_device_id = FAB__NVML_NVSWITCH_PCI_ID;
    fab__nvml_pci(&sw, pci);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_link(device, link, &d));
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    fab__nvml_remote(d, link, pci);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link,
                                              nvmlPciInfo_t *pci)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_link(device, link, &d));
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlPciInfo_t full;
    memset(&full, 0, sizeof(full));
    fab__nvml_remote(d, link, &full);
    memset(full.busId, 0, 16);
    memcpy(pci, &full, FAB__NVML_PCI_OLD_BYTES);
    return NVML_SUCCESS;
}

/* Every link ends at an NVSwitch (nvmlDeviceGetNvLinkRemotePciInfo). */
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_link(device, link, &d));
    if (pNvLinkDeviceType == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *pNvLinkDeviceType = NVML_NVLINK_DEVICE_TYPE_SWITCH;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link,
                                           nvmlNvLinkCapability_t capability,
                                           unsigned int *capResult)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_link(device, link, &d));
    if (capResult == NULL || (unsigned)capability >= (unsigned)NVML_NVLINK_CAP_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* Peer-to-peer over the switches, with atomics; no system memory over
     * NVLink, no SLI bridge. */
    switch (capability) {
    case NVML_NVLINK_CAP_P2P_SUPPORTED:
    case NVML_NVLINK_CAP_P2P_ATOMICS:
    case NVML_NVLINK_CAP_VALID:
        *capResult = 1;
        break;
    default:
        *capResult = 0;
        break;
    }
    return NVML_SUCCESS;
}

/* NVLink's per-link speed each way, MB/s: NVLink 5 (Blackwell) 50 GB/s,
 * NVLink 4 (Hopper) 25 GB/s. */
static unsigned fab__nvml_link_version(const struct nvmlDevice_st *d)
{
    return d->info.compute_major >= 10 ? 5u : 4u;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (values == NULL || valuesCount <= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    bool nvlink = fab__nvml.node.fabric_state != FAB_FABRIC_STATE_NOT_SUPPORTED;
    unsigned speed = fab__nvml_link_version(d) == 5 ? 50000u : 25000u;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* The NVLink fields UCX and NCCL read; every other field is answered
     * NOT_SUPPORTED in its own status, as NVML does per field. */
    for (int i = 0; i < valuesCount; i++) {
        nvmlFieldValue_t *v = &values[i];
        v->timestamp = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
        v->latencyUsec = 0;
        v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v->nvmlReturn = NVML_SUCCESS;
        memset(&v->value, 0, sizeof(v->value));
        bool link_field = v->fieldId == NVML_FI_DEV_NVLINK_GET_SPEED ||
                          v->fieldId == NVML_FI_DEV_NVLINK_GET_STATE ||
                          v->fieldId == NVML_FI_DEV_NVLINK_GET_VERSION;
        if (!nvlink && v->fieldId != NVML_FI_DEV_NVLINK_LINK_COUNT &&
            v->fieldId != NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT) {
            v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            continue;
        }
        if (link_field && v->scopeId >= FAB__NVML_LINKS) {
            v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
            continue;
        }
        switch (v->fieldId) {
        case NVML_FI_DEV_NVLINK_LINK_COUNT:
        case NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT:
            v->value.uiVal = nvlink ? FAB__NVML_LINKS : 0;
            break;
        case NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON:
        case NVML_FI_DEV_NVLINK_GET_SPEED:
            v->value.uiVal = speed;
            break;
        case NVML_FI_DEV_NVLINK_GET_STATE:
            v->value.uiVal = NVML_FEATURE_ENABLED;
            break;
        case NVML_FI_DEV_NVLINK_GET_VERSION:
            v->value.uiVal = fab__nvml_link_version(d);
            break;
        default:
            v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            break;
        }
    }
    return NVML_SUCCESS;
}

/* Which processes hold a context on a GPU is not known here: the driver
 * emulation lives in each process and tells no one. The list is empty, the
 * answer NVML gives for a GPU no process uses; every ABI's record is the
 * same for an empty list. */
static nvmlReturn_t fab__nvml_processes(nvmlDevice_t device, unsigned int *infoCount)
{
    const struct nvmlDevice_st *d;
    FAB__NVML_TRY(fab__nvml_device(device, &d));
    if (infoCount == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *infoCount = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    (void)infos;
    return fab__nvml_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    (void)infos;
    return fab__nvml_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    (void)infos;
    return fab__nvml_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus)
{
    const struct nvmlDevice_st *a, *b;
    FAB__NVML_TRY(fab__nvml_device(device1, &a));
    FAB__NVML_TRY(fab__nvml_device(device2, &b));
    if (p2pStatus == NULL || (unsigned)p2pIndex >= (unsigned)NVML_P2P_CAPS_INDEX_UNKNOWN)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* As cuDeviceCanAccessPeer: every other GPU of the node, not itself,
     * and none while the node's GPUs are isolated (gpus_isolated). */
    fab_node_info_t now;
    bool isolated = false;
    fab__nvml_node_now(&now, &isolated);
    if (a == b || isolated)
        *p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED;
    else if (p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK &&
             fab__nvml.node.fabric_state == FAB_FABRIC_STATE_NOT_SUPPORTED)
        *p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED;
    else
        *p2pStatus = NVML_P2P_STATUS_OK;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
    const struct nvmlDevice_st *a, *b;
    FAB__NVML_TRY(fab__nvml_device(device1, &a));
    FAB__NVML_TRY(fab__nvml_device(device2, &b));
    if (pathInfo == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* Each GPU has a bus of its own below the node's one host bridge. */
    *pathInfo = a == b ? NVML_TOPOLOGY_INTERNAL : NVML_TOPOLOGY_HOSTBRIDGE;
    return NVML_SUCCESS;
}
