/* libnvidia-ml.so.1's fabric calls: GPU fabric info (every version),
 * platform info, NVLink state, capabilities and remotes, field values,
 * processes, P2P status and topology between GPUs, from the daemon's
 * topology, refreshed where a field fault may have changed it (docs/nvml.md).
 * The process state is nvml_state.h's. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#pragma GCC visibility push(default)
#include "src/nvml/include/nvml.h"
#pragma GCC visibility pop

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fabmem/fabric.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_fault.h"
#include "src/common/log.h"
#include "src/nvml/nvml_state.h"

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
