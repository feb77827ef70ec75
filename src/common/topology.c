/* The topology's readers and rules: nodes, devices, PCI and uuid spellings,
 * the fabric path between two nodes, channels, where an allocation may live,
 * node attributes. What the config file says is config.c's. */
#include "src/common/topology_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/base/env.h"
#include "src/base/hex.h"
#include "src/base/hot.h"

int fab_topology_node_count(const fab_topology_t *topology)
{
    return topology ? topology->nnodes : 0;
}

fab_status_t fab_topology_find_node(const fab_topology_t *topology, const char *name,
                                    int *index_out)
{
    if (topology == NULL || index_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (name == NULL || *name == '\0') {
        const char *env = getenv(FAB__ENV_NODE);
        name = env != NULL && *env != '\0' ? env : NULL;
    }
    if (name == NULL) {
        if (topology->nnodes == 0)
            return FAB_ERROR_NOT_FOUND;
        *index_out = 0;
        return FAB_SUCCESS;
    }
    for (int i = 0; i < topology->nnodes; i++) {
        if (strcmp(topology->nodes[i].info.name, name) == 0) {
            *index_out = i;
            return FAB_SUCCESS;
        }
    }
    return FAB_ERROR_NOT_FOUND;
}

fab_status_t fab_topology_node(const fab_topology_t *topology, int node_index,
                               fab_node_info_t *info_out)
{
    if (topology == NULL || info_out == NULL || node_index < 0 || node_index >= topology->nnodes)
        return FAB_ERROR_INVALID_VALUE;
    *info_out = topology->nodes[node_index].info;
    return FAB_SUCCESS;
}

FAB__HOT
fab_status_t fab_topology_path(const fab_topology_t *topology, int from, int to)
{
    if (topology == NULL || from < 0 || from >= topology->nnodes || to < 0 ||
        to >= topology->nnodes)
        return FAB_ERROR_INVALID_VALUE;
    const fab_node_info_t *a = &topology->nodes[from].info, *b = &topology->nodes[to].info;
    /* Within one node the names and the clique are the node's own: what is
     * left to ask is whether its fabric is up (every import of a job on
     * one node asks this). */
    if (from == to)
        return a->fabric_state == FAB_FABRIC_STATE_COMPLETED ? FAB_SUCCESS
                                                             : FAB_ERROR_NOT_SUPPORTED;
    if (strcmp(a->imex_domain, b->imex_domain) != 0)
        return FAB_ERROR_INVALID_HANDLE;
    if (a->fabric_state != FAB_FABRIC_STATE_COMPLETED ||
        b->fabric_state != FAB_FABRIC_STATE_COMPLETED || a->clique_id != b->clique_id ||
        !fab_uuid_equal(&a->cluster_uuid, &b->cluster_uuid))
        return FAB_ERROR_NOT_SUPPORTED;
    return FAB_SUCCESS;
}

fab_uuid_t fab__topology_device_uuid(const fab_topology_t *topology, int node, int ordinal)
{
    /* FNV-1a of the node name and the ordinal: stable, distinct enough for
     * names that only need to differ between emulated GPUs. */
    fab_uuid_t u = {{0}};
    uint64_t h = 1469598103934665603ull;
    for (const char *s = topology->nodes[node].info.name; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    uint64_t h2 = (h ^ (uint64_t)ordinal) * 1099511628211ull;
    /* The ordinal's hash first: a short prefix of the "GPU-..." text (as
     * CUDA_VISIBLE_DEVICES takes) then tells a node's GPUs apart. */
    for (int i = 0; i < 8; i++) {
        u.bytes[i] = (uint8_t)(h2 >> (8 * i));
        u.bytes[8 + i] = (uint8_t)(h >> (8 * i));
    }
    u.bytes[6] = (uint8_t)((u.bytes[6] & 0x0f) | 0x40); /* RFC 4122 version 4 shape */
    u.bytes[8] = (uint8_t)((u.bytes[8] & 0x3f) | 0x80);
    return u;
}

fab_status_t fab_topology_device(const fab_topology_t *topology, int node_index,
                                 int device_ordinal, fab_device_info_t *info_out)
{
    if (topology == NULL || info_out == NULL || node_index < 0 || node_index >= topology->nnodes)
        return FAB_ERROR_INVALID_VALUE;
    const fab__node_t *node = &topology->nodes[node_index];
    if (device_ordinal < 0 || device_ordinal >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    fab_device_info_t info = node->device;
    info.uuid = fab__topology_device_uuid(topology, node_index, device_ordinal);
    /* Bus 0 is the root complex's; one bus per GPU after it, as a switch
     * below the root gives each GPU its own. At most 64 GPUs: bus <= 0x40. */
    info.pci_bus = 1u + (uint32_t)device_ordinal;
    info.pci_device = 0;
    /* Spread evenly, in ordinal order: 4 GPUs over 2 NUMA nodes give 0, 0, 1, 1,
     * as on a GB200 tray, where each Grace CPU has two GPUs. */
    info.host_numa_id = (int)((int64_t)device_ordinal * node->info.host_numa_nodes /
                              node->info.device_count);
    *info_out = info;
    return FAB_SUCCESS;
}

int fab_device_pci_bus_id(const fab_device_info_t *info, char *buf, size_t len)
{
    if (info == NULL || buf == NULL)
        return -1;
    return snprintf(buf, len, "%04X:%02X:%02X.0", (unsigned)info->pci_domain,
                    (unsigned)info->pci_bus, (unsigned)info->pci_device);
}

/* One hex field of at most max_digits digits ending at one of stops. */
static const char *fab__hex_field(const char *s, int max_digits, uint32_t *out)
{
    uint32_t v = 0;
    int n = 0;
    for (; n < max_digits + 1; n++, s++) {
        int d = fab__hex_digit((unsigned char)*s);
        if (d < 0)
            break;
        v = v << 4 | (uint32_t)d;
    }
    if (n == 0 || n > max_digits)
        return NULL;
    *out = v;
    return s;
}

int fab_pci_bus_id_parse(const char *text, uint32_t *domain, uint32_t *bus, uint32_t *device)
{
    if (text == NULL || domain == NULL || bus == NULL || device == NULL)
        return -1;
    uint32_t f[3], function = 0;
    int nfields = 0;
    const char *s = text;
    for (;;) {
        s = fab__hex_field(s, nfields == 0 ? 8 : 2, &f[nfields]);
        if (s == NULL)
            return -1;
        nfields++;
        if (*s != ':' || nfields == 3)
            break;
        s++;
    }
    if (nfields < 2)
        return -1;
    if (*s == '.') {
        s = fab__hex_field(s + 1, 1, &function);
        if (s == NULL)
            return -1;
    }
    if (*s != '\0' || function != 0)
        return -1;
    if (nfields == 3) {
        *domain = f[0];
        *bus = f[1];
        *device = f[2];
    } else {
        if (f[0] > 0xff)
            return -1;
        *domain = 0;
        *bus = f[0];
        *device = f[1];
    }
    return *bus <= 0xff && *device <= 0x1f ? 0 : -1;
}

int fab_device_uuid_string(const fab_uuid_t *uuid, char *buf, size_t len)
{
    if (uuid == NULL || buf == NULL)
        return -1;
    const uint8_t *b = uuid->bytes;
    return snprintf(buf, len,
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                    b[12], b[13], b[14], b[15]);
}

int fab_topology_driver_version(const fab_topology_t *topology)
{
    return topology ? topology->driver_version : FAB_DRIVER_VERSION_DEFAULT;
}

uint64_t fab__topology_channels(const fab_topology_t *topology, uid_t uid, gid_t gid)
{
    uint64_t mask = 0;
    for (int i = 0; i < topology->nchannels; i++) {
        const fab__channel_t *c = &topology->channels[i];
        for (unsigned k = 0; k < c->nuids; k++) {
            if (c->uids[k] == uid)
                mask |= 1ull << c->number;
        }
        for (unsigned k = 0; k < c->ngids; k++) {
            if (c->gids[k] == gid)
                mask |= 1ull << c->number;
        }
    }
    return mask;
}

int fab__topology_slot(const fab_topology_t *topology, int node, int ordinal)
{
    const fab__node_t *n = &topology->nodes[node];
    if (ordinal >= 0 && ordinal < n->info.device_count)
        return ordinal;
    if (ordinal >= FAB_HOST_NUMA_ORDINAL_BASE &&
        ordinal - FAB_HOST_NUMA_ORDINAL_BASE < n->info.host_numa_nodes)
        return n->info.device_count + (ordinal - FAB_HOST_NUMA_ORDINAL_BASE);
    return -1;
}

int fab__topology_slot_count(const fab_topology_t *topology, int node)
{
    const fab__node_t *n = &topology->nodes[node];
    return n->info.device_count + n->info.host_numa_nodes;
}

fab_status_t fab__topology_alloc_check(const fab_topology_t *topology, int node, int device,
                                       uint64_t size, uint32_t handle_types, uint64_t used)
{
    const uint32_t known = FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | FAB_HANDLE_TYPE_WIN32 |
                           FAB_HANDLE_TYPE_WIN32_KMT | FAB_HANDLE_TYPE_FABRIC;
    const fab__node_t *n = &topology->nodes[node];
    int slot = fab__topology_slot(topology, node, device);
    if (slot < 0)
        return FAB_ERROR_INVALID_DEVICE;
    /* Host NUMA memory follows the node's GPUs in granularity and handle
     * types (the same pages, shared the same ways); its bytes are the
     * NUMA node's host_memory. */
    uint64_t total = slot < n->info.device_count ? n->device.total_memory : n->info.host_memory;
    if ((handle_types & ~known) != 0 || size == 0 || size % n->device.granularity != 0 ||
        size > (uint64_t)INT64_MAX)
        return FAB_ERROR_INVALID_VALUE;
    if ((handle_types & ~n->device.handle_types) != 0)
        return FAB_ERROR_NOT_SUPPORTED;
    if (used > total || size > total - used)
        return FAB_ERROR_OUT_OF_MEMORY;
    return FAB_SUCCESS;
}

bool fab__topology_attribute(const fab_topology_t *topology, int node, uint32_t id,
                             int32_t *value)
{
    if (!topology || node < 0 || node >= topology->nnodes)
        return false;
    const fab__node_t *n = &topology->nodes[node];
    for (unsigned i = 0; i < n->nattributes; i++) {
        if (n->attributes[i].id == id) {
            *value = n->attributes[i].value;
            return true;
        }
    }
    return false;
}

bool fab__topology_gpus_isolated(const fab_topology_t *topology, int node)
{
    int32_t isolated = 0;
    (void)fab__topology_attribute(topology, node, FAB__ATTRIBUTE_GPUS_ISOLATED, &isolated);
    return isolated != 0;
}
