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
 * NVML ignores CUDA_VISIBLE_DEVICES: its index is the node's GPU ordinal.
 * This file: init and shutdown, errors and system, finding devices, their
 * identity, PCI and memory; the fabric, platform, NVLink and peers are
 * fabric.c's (the state both read is nvml_state.h). */
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
#include "src/nvml/nvml_state.h"

fab__nvml_state_t fab__nvml = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

bool fab__nvml_initialized(void)
{
    return __atomic_load_n(&fab__nvml.refs, __ATOMIC_ACQUIRE) > 0;
}

/* The device a handle names: UNINITIALIZED before nvmlInit, INVALID_ARGUMENT
 * for a handle that is not one of ours. */
nvmlReturn_t fab__nvml_device(nvmlDevice_t device, const struct nvmlDevice_st **out)
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


/* Copy text into a caller's buffer of length bytes: INSUFFICIENT_SIZE, and
 * nothing written, when it does not fit with its NUL. */
nvmlReturn_t fab__nvml_text(const char *text, char *buf, unsigned int length)
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
void fab__nvml_pci(const fab_device_info_t *info, nvmlPciInfo_t *pci)
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
