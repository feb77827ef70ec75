/* The topology: the emulated nodes, their GPUs, IMEX domains, cliques and
 * fabric states, read from the config file (docs/config.md) or asked of the
 * daemon (fab_client_topology, fabmem/fabric.h). Implemented by the common
 * layer; no daemon is needed to read a config file, and nothing here talks
 * to one.
 *
 * Environment (read when an argument is left NULL):
 *   FABMEM_CONFIG        config file (default: the built-in topology)
 *   FABMEM_NODE          the emulated node this process sits on (default: the first)
 *
 * Thread safety: fab_topology_* functions are safe to call concurrently on one
 * topology once it is loaded. */
#ifndef FABMEM_TOPOLOGY_H
#define FABMEM_TOPOLOGY_H

#include "fabmem/model.h"

FAB_EXTERN_C_BEGIN

#define FAB_NAME_MAX 256

/* NVML's nvmlGpuFabricState values. */
typedef enum fab_fabric_state {
    FAB_FABRIC_STATE_NOT_SUPPORTED = 0,
    FAB_FABRIC_STATE_NOT_STARTED = 1,
    FAB_FABRIC_STATE_IN_PROGRESS = 2,
    FAB_FABRIC_STATE_COMPLETED = 3,
} fab_fabric_state_t;

/* NVML's fabric health mask: four 2-bit fields (degraded bandwidth at bit 0,
 * route recovery at 2, unhealthy route at 4, access-timeout recovery at 6),
 * each 0 (not supported), 1 (true: the problem is present) or 2 (false). */
#define FAB_FABRIC_HEALTH_FIELD_NOT_SUPPORTED 0u
#define FAB_FABRIC_HEALTH_FIELD_TRUE 1u
#define FAB_FABRIC_HEALTH_FIELD_FALSE 2u
#define FAB_FABRIC_HEALTH_SHIFT_DEGRADED_BW 0
#define FAB_FABRIC_HEALTH_SHIFT_ROUTE_RECOVERY 2
#define FAB_FABRIC_HEALTH_SHIFT_ROUTE_UNHEALTHY 4
#define FAB_FABRIC_HEALTH_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
/* Every field false: a healthy fabric (the default). */
#define FAB_FABRIC_HEALTH_HEALTHY 0xaau

#define FAB_CHASSIS_SERIAL_MAX 16 /* NVML's chassis serial field, bytes */
#define FAB_PCI_BUS_ID_MAX 32     /* "00000000:01:00.0" and its NUL fit */

/* One emulated GPU. */
typedef struct fab_device_info {
    char name[FAB_NAME_MAX];  /* "fabmem H100 (emulated)" */
    fab_uuid_t uuid;          /* stable per node and ordinal */
    uint64_t total_memory;    /* bytes */
    uint64_t granularity;     /* minimum allocation granularity, bytes */
    uint32_t handle_types;    /* fab_handle_type_t bits the device exports */
    int compute_major;
    int compute_minor;
    int sm_count;
    /* Where the GPU sits on its node's PCI bus: domain from the node's
     * pci_domain (default: the node's index, so that no two GPUs of a
     * topology share an address), bus 1 + ordinal, device 0, function 0. */
    uint32_t pci_domain;
    uint32_t pci_bus;
    uint32_t pci_device;
    uint32_t pci_device_id; /* PCI device id << 16 | vendor id (NVML's pciDeviceId) */
    /* The host NUMA node nearest the GPU (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID):
     * the node's GPUs spread evenly over its host NUMA nodes in ordinal
     * order, ordinal * host_numa_nodes / gpus (fab_topology_device). */
    int host_numa_id;
} fab_device_info_t;

/* A location of memory in an allocation's device ordinal (fab_alloc_props_t,
 * ALLOC): ordinals below the base name GPUs, and ordinal BASE + n names host
 * NUMA node n of the allocating node (cuMemCreate on a HOST or HOST_NUMA
 * location). The model and the handle carry it as any ordinal. */
#define FAB_HOST_NUMA_ORDINAL_BASE 0x10000

/* One emulated OS instance. */
typedef struct fab_node_info {
    char name[FAB_NAME_MAX];
    char imex_domain[FAB_NAME_MAX]; /* nodes of one domain may share memory */
    fab_uuid_t cluster_uuid;        /* with clique_id: NVLink reachability */
    uint32_t clique_id;
    fab_fabric_state_t fabric_state;
    uint32_t fabric_status; /* NVML return code of the fabric probe (0: success) */
    uint32_t fabric_health; /* FAB_FABRIC_HEALTH_* fields */
    int device_count;
    /* Platform: where the node sits in its rack (NVML's nvmlPlatformInfo). */
    char chassis_serial[FAB_CHASSIS_SERIAL_MAX + 1]; /* NUL-terminated */
    uint8_t slot_number; /* physical slot in the rack; default: node index */
    uint8_t tray_index;  /* compute tray; default: node index */
    uint8_t host_id;     /* host within the tray; default 0 */
    /* Host memory: NUMA nodes of the node's CPUs and the bytes of each, which
     * host-resident VMM allocations (cuMemCreate on HOST_NUMA) draw from. */
    int host_numa_nodes;  /* 1 to 64; default 1 */
    uint64_t host_memory; /* bytes per host NUMA node; default 512 GiB */
} fab_node_info_t;

typedef struct fab_topology fab_topology_t;

/* Load the topology from config_path (NULL: $FABMEM_CONFIG if set, else the
 * built-in default: one node, 8 devices of 80 GiB, 2 MiB granularity, POSIX_FD
 * and FABRIC supported, one channel for the current user).
 * Errors:
 *   FAB_ERROR_INVALID_VALUE   topology_out is NULL; the file does not parse or
 *                             names an unknown key or a bad value (logged with
 *                             file and line)
 *   FAB_ERROR_NOT_FOUND       the file does not exist
 *   FAB_ERROR_OUT_OF_MEMORY   no memory */
FAB_API fab_status_t fab_topology_load(const char *config_path, fab_topology_t **topology_out);
FAB_API void fab_topology_destroy(fab_topology_t *topology);

FAB_API int fab_topology_node_count(const fab_topology_t *topology);

/* Index of the node called name (NULL: $FABMEM_NODE, else node 0).
 * Errors: FAB_ERROR_INVALID_VALUE (NULL topology/index_out), FAB_ERROR_NOT_FOUND. */
FAB_API fab_status_t fab_topology_find_node(const fab_topology_t *topology, const char *name,
                                            int *index_out);

/* Errors: FAB_ERROR_INVALID_VALUE (NULL argument or index out of range). */
FAB_API fab_status_t fab_topology_node(const fab_topology_t *topology, int node_index,
                                       fab_node_info_t *info_out);

/* Errors: FAB_ERROR_INVALID_VALUE (NULL argument or node out of range),
 *         FAB_ERROR_INVALID_DEVICE (no such device on that node). */
FAB_API fab_status_t fab_topology_device(const fab_topology_t *topology, int node_index,
                                         int device_ordinal, fab_device_info_t *info_out);

/* Write the device's PCI bus id as CUDA's cuDeviceGetPCIBusId does,
 * "dddd:bb:dd.0" in upper-case hex, into buf (len bytes, at least 13).
 * Returns the length it needs without the NUL, or -1 for a NULL argument. */
FAB_API int fab_device_pci_bus_id(const fab_device_info_t *info, char *buf, size_t len);

/* Read a PCI bus id as CUDA and NVML accept it: hex "domain:bus:device.function"
 * (a domain of up to 8 digits, so NVML's long form too), or "bus:device.function"
 * with domain 0; the function may be left off, and must be 0. Returns 0, or -1
 * for text of another form or a NULL argument. */
FAB_API int fab_pci_bus_id_parse(const char *text, uint32_t *domain, uint32_t *bus,
                                 uint32_t *device);

/* Write the device's uuid as nvidia-smi, NVML and CUDA_VISIBLE_DEVICES spell
 * it, "GPU-" and 32 lower-case hex digits grouped 8-4-4-4-12, into buf (len
 * bytes, at least FAB_UUID_STRING_MAX). Returns the length it needs without
 * the NUL (40), or -1 for a NULL argument. */
#define FAB_UUID_STRING_MAX 41
FAB_API int fab_device_uuid_string(const fab_uuid_t *uuid, char *buf, size_t len);

/* The CUDA driver version the emulation reports (config [driver] version;
 * default FAB_DRIVER_VERSION_DEFAULT, CUDA 13.0, the one place it is
 * written). */
#define FAB_DRIVER_VERSION_DEFAULT 13000
FAB_API int fab_topology_driver_version(const fab_topology_t *topology);

/* What the topology says of memory exported on node `from` and imported on
 * node `to` (channels aside), the rule fabmemd applies to every IMPORT:
 *   FAB_SUCCESS                one IMEX domain and an NVLink path: both
 *                              fabrics COMPLETED, same cluster and clique
 *   FAB_ERROR_INVALID_HANDLE   other IMEX domains: the handle means nothing there
 *   FAB_ERROR_NOT_SUPPORTED    one domain, no fabric path
 *   FAB_ERROR_INVALID_VALUE    NULL topology or a node out of range */
FAB_API fab_status_t fab_topology_path(const fab_topology_t *topology, int from, int to);

FAB_EXTERN_C_END

#endif /* FABMEM_TOPOLOGY_H */
