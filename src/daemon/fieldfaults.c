/* The daemon's field faults (see faults.h): what the config set and what
 * FAULT changed since, and the import rule they make. Owns a copy of the
 * config's node records (for RESET) and the withdrawn-channel mask. */
#include "src/daemon/fieldfaults.h"

#include <stdlib.h>
#include <string.h>

#include "src/base/hot.h"
#include "src/common/faultwords.h"
#include "src/common/log.h"

struct fab__faults {
    fab_topology_t *topology; /* the daemon's: the faults are written into it */
    fab__node_t *config;      /* each node's record as the config made it */
    uint64_t withdrawn;
    uint64_t generation;
};

fab__faults_t *fab__faults_create(fab_topology_t *topology)
{
    fab__faults_t *faults = calloc(1, sizeof(*faults));
    if (faults == NULL)
        return NULL;
    faults->topology = topology;
    faults->config = calloc((size_t)topology->nnodes + 1, sizeof(*faults->config));
    if (faults->config == NULL) {
        free(faults);
        return NULL;
    }
    /* A node record holds no pointers: a copy is the whole state. */
    memcpy(faults->config, topology->nodes, (size_t)topology->nnodes * sizeof(*faults->config));
    return faults;
}

void fab__faults_destroy(fab__faults_t *faults)
{
    if (faults == NULL)
        return;
    free(faults->config);
    free(faults);
}

FAB__HOT
uint64_t fab__faults_withdrawn(const fab__faults_t *faults)
{
    return faults->withdrawn;
}

uint64_t fab__faults_generation(const fab__faults_t *faults)
{
    return faults->generation;
}

int fab__faults_imex_timeout_ms(const fab__faults_t *faults)
{
    return faults->topology->imex_timeout_ms;
}

static int32_t fab__faults_private(const fab__faults_t *faults, int node, uint32_t id)
{
    int32_t value = 0;
    (void)fab__topology_attribute(faults->topology, node, id, &value);
    return value;
}

/* The highest value key takes (its words run from 0 to this). */
static int32_t fab__faults_value_max(int key)
{
    switch (key) {
    case FAB__FAULT_KEY_IMEX: return FAB__IMEX_HUNG;
    case FAB__FAULT_KEY_FABRIC_STATE: return FAB_FABRIC_STATE_COMPLETED;
    case FAB__FAULT_KEY_FABRIC_MANAGER: return 2;
    case FAB__FAULT_KEY_GPUS_ISOLATED: return 1;
    default: return -1;
    }
}

fab_status_t fab__faults_apply(fab__faults_t *faults, const fab__request_t *request)
{
    fab_topology_t *topology = faults->topology;
    uint32_t target = request->u.fault.target;
    int32_t value = request->u.fault.value;
    switch (request->u.fault.op) {
    case FAB__FAULT_OP_SET: {
        int key = request->u.fault.key;
        if (target >= (uint32_t)topology->nnodes || value < 0 || value > fab__faults_value_max(key))
            return FAB_ERROR_INVALID_VALUE;
        fab__node_t *node = &topology->nodes[target];
        if (key == FAB__FAULT_KEY_FABRIC_STATE)
            node->info.fabric_state = (fab_fabric_state_t)value;
        else if (fab__fault_attribute_set(node, fab__fault_key_attribute(key), value) != 0)
            return FAB_ERROR_OUT_OF_MEMORY;
        fab__log(FAB__LOG_INFO, "fault: node %s %s=%d", node->info.name, fab__fault_key_name(key),
                 (int)value);
        break;
    }
    case FAB__FAULT_OP_CHANNEL:
        if (target >= FAB__CHANNEL_MAX || value < 0 || value > 1)
            return FAB_ERROR_INVALID_VALUE;
        if (value)
            faults->withdrawn |= 1ull << target;
        else
            faults->withdrawn &= ~(1ull << target);
        fab__log(FAB__LOG_INFO, "fault: channel %u %s", target, value ? "withdrawn" : "restored");
        break;
    case FAB__FAULT_OP_RESET:
        if (request->u.fault.key != 0 || target != 0 || value != 0)
            return FAB_ERROR_INVALID_VALUE;
        memcpy(topology->nodes, faults->config, (size_t)topology->nnodes * sizeof(*faults->config));
        faults->withdrawn = 0;
        fab__log(FAB__LOG_INFO, "fault: reset to the config");
        break;
    default:
        return FAB_ERROR_INVALID_VALUE;
    }
    faults->generation++;
    return FAB_SUCCESS;
}

FAB__HOT
uint32_t fab__faults_import(const fab__faults_t *faults, int from_node, int from_device,
                            int to_node, int to_device)
{
    if (from_node != to_node) {
        /* The importer's IMEX asks the exporter's: either one down fails it
         * at once, either one hung holds it. */
        int32_t a = fab__faults_private(faults, from_node, FAB__ATTRIBUTE_IMEX);
        int32_t b = fab__faults_private(faults, to_node, FAB__ATTRIBUTE_IMEX);
        if (a == FAB__IMEX_DOWN || b == FAB__IMEX_DOWN)
            return FAB_ERROR_INVALID_HANDLE;
        if (a == FAB__IMEX_HUNG || b == FAB__IMEX_HUNG)
            return FAB__FAULT_DEFERRED;
        return FAB_SUCCESS;
    }
    /* Host memory is not behind a GPU's NVLink: isolation does not apply. */
    if (from_device != to_device && from_device < FAB_HOST_NUMA_ORDINAL_BASE &&
        fab__faults_private(faults, to_node, FAB__ATTRIBUTE_GPUS_ISOLATED) != 0)
        return FAB_ERROR_INVALID_DEVICE;
    return FAB_SUCCESS;
}
