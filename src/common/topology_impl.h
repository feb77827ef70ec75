/* The inside of fab_topology_t, for the daemon: the config file's nodes and
 * devices, its IMEX channels and its [daemon] settings. fabmem/topology.h gives the
 * public readers; this header gives the daemon what it decides rules with. */
#ifndef FABMEM_COMMON_TOPOLOGY_IMPL_H
#define FABMEM_COMMON_TOPOLOGY_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabmem/topology.h"

#define FAB__HOST_NUMA_MAX 64 /* host NUMA nodes per node */
#define FAB__CHANNEL_MAX 64 /* channel numbers 0..63: a client's set is one word */

/* A device attribute a node's config sets ("attribute.NAME = value"): the
 * driver emulation answers it instead of its own value. */
#define FAB__NODE_ATTRIBUTES_MAX 32
typedef struct fab__attribute {
    uint32_t id; /* CUdevice_attribute (src/base/cuda_attributes.h) */
    int32_t value;
} fab__attribute_t;
/* A private attribute id, past every CUdevice_attribute: the node's
 * "fabric_manager = down" (1) or "starting" (2) fault, which multicast
 * binds obey. */
#define FAB__ATTRIBUTE_FABRIC_MANAGER_DOWN 0x7f000001u
/* Two more private attributes, field faults of the node (src/common/faultwords.h):
 * its emulated IMEX service (FAB__IMEX_*), which the daemon's import rule
 * obeys, and "gpus_isolated" (1: no NVLink between the node's GPUs), which
 * the daemon's import rule and libcuda's peer queries obey. */
#define FAB__ATTRIBUTE_IMEX 0x7f000002u
#define FAB__ATTRIBUTE_GPUS_ISOLATED 0x7f000003u
enum { FAB__IMEX_UP = 0, FAB__IMEX_DOWN = 1, FAB__IMEX_HUNG = 2 };
/* [daemon] imex_timeout_ms: how long a hung IMEX holds an import. */
#define FAB__IMEX_TIMEOUT_MS_DEFAULT 5000

/* Every key the config file takes, one row each, the one list:
 * X(section, key, sample): section driver, daemon, node ([node NAME]) or
 * channel ([channel N]); sample, a value the parser takes. The parser
 * refuses any key not listed here (fab__config_key_listed), docs/fabric.md's
 * tables name exactly these, and each table's default is the parser's
 * (tests/fabric/test_config.c). "attribute.NAME" stands for every
 * attribute.<CUdevice_attribute name>. */
#define FAB__CONFIG_KEYS(X)                                                              \
    X(driver, "version", "13000")                                                        \
    X(daemon, "socket_mode", "0600")                                                     \
    X(daemon, "idle_exit", "0")                                                          \
    X(daemon, "state_file", "/nonexistent/fabmem-state")                                 \
    X(daemon, "max_connections_per_uid", "256")                                          \
    X(daemon, "max_allocations_per_uid", "4096")                                         \
    X(daemon, "max_bytes_per_uid", "1G")                                                 \
    X(daemon, "max_ipc_entries_per_uid", "1024")                                         \
    X(daemon, "max_references_per_uid", "65536")                                         \
    X(daemon, "max_fds_in_flight_per_uid", "256")                                        \
    X(daemon, "imex_timeout_ms", "5000")                                                 \
    X(node, "imex_domain", "default")                                                    \
    X(node, "cluster_uuid", "0123456789abcdef0123456789abcdef")                          \
    X(node, "clique_id", "0")                                                            \
    X(node, "fabric_state", "completed")                                                 \
    X(node, "gpus", "8")                                                                 \
    X(node, "gpu_name", "fabmem H100 (emulated)")                                        \
    X(node, "gpu_memory", "80G")                                                         \
    X(node, "granularity", "2M")                                                         \
    X(node, "handle_types", "posix_fd, fabric")                                          \
    X(node, "compute_capability", "9.0")                                                 \
    X(node, "sm_count", "132")                                                           \
    X(node, "fabric_status", "0")                                                        \
    X(node, "fabric_health", "healthy")                                                  \
    X(node, "chassis_serial", "FABMEM-RACK0")                                            \
    X(node, "slot_number", "3")                                                          \
    X(node, "tray_index", "3")                                                           \
    X(node, "host_id", "0")                                                              \
    X(node, "pci_domain", "3")                                                           \
    X(node, "pci_device_id", "0x233010de")                                               \
    X(node, "host_numa_nodes", "1")                                                      \
    X(node, "host_memory", "512G")                                                       \
    X(node, "attribute.NAME", "1")                                                       \
    X(node, "imex", "up")                                                                \
    X(node, "gpus_isolated", "no")                                                       \
    X(node, "fabric_manager", "up")                                                      \
    X(channel, "uids", "1000")                                                           \
    X(channel, "gids", "1000")

/* Whether section ("driver", "daemon", "node", "channel") takes key. */
bool fab__config_key_listed(const char *section, const char *key);

typedef struct fab__node {
    fab_node_info_t info;
    fab_device_info_t device; /* every GPU of a node is alike; uuid of ordinal 0 */
    uint8_t nattributes;
    fab__attribute_t attributes[FAB__NODE_ATTRIBUTES_MAX];
} fab__node_t;

typedef struct fab__channel {
    unsigned number;
    unsigned nuids, ngids;
    uint32_t *uids;
    uint32_t *gids;
} fab__channel_t;

/* What one uid may hold in the daemon at once; 0 means no limit. The
 * defaults keep one user from taking the daemon's file descriptors (each
 * connection and each allocation is one) away from the others. */
typedef struct fab__limits {
    uint64_t connections; /* [daemon] max_connections_per_uid, default 256 */
    uint64_t allocations; /* [daemon] max_allocations_per_uid, default 4096 */
    uint64_t bytes;       /* [daemon] max_bytes_per_uid, default 0 (device memory bounds it) */
    uint64_t ipc_entries; /* [daemon] max_ipc_entries_per_uid, default 1024 */
    uint64_t references;  /* [daemon] max_references_per_uid, default 65536 */
    uint64_t fds_in_flight; /* [daemon] max_fds_in_flight_per_uid, default 256 */
} fab__limits_t;

#define FAB__LIMIT_CONNECTIONS_DEFAULT 256
#define FAB__LIMIT_ALLOCATIONS_DEFAULT 4096
#define FAB__LIMIT_IPC_ENTRIES_DEFAULT 1024
#define FAB__LIMIT_REFERENCES_DEFAULT 65536
#define FAB__LIMIT_FDS_IN_FLIGHT_DEFAULT 256

struct fab_topology {
    int nnodes;
    fab__node_t *nodes;
    int nchannels;
    fab__channel_t *channels;
    int driver_version;
    unsigned socket_mode;  /* [daemon] socket_mode, default 0600 */
    int idle_exit;         /* [daemon] idle_exit seconds, 0: never */
    char *state_file;      /* [daemon] state_file, NULL: next to the socket */
    fab__limits_t limits;  /* [daemon] max_*_per_uid */
    int imex_timeout_ms;   /* [daemon] imex_timeout_ms, default FAB__IMEX_TIMEOUT_MS_DEFAULT */
};

/* Where an allocation's memory may live on node: its GPUs, then its host
 * NUMA nodes (ordinals FAB_HOST_NUMA_ORDINAL_BASE + n). fab__topology_slot
 * numbers them 0 .. fab__topology_slot_count - 1, GPUs first, so that a
 * table of used bytes per place is one array; -1 for an ordinal that names
 * none of them. */
int fab__topology_slot(const fab_topology_t *topology, int node, int ordinal);
int fab__topology_slot_count(const fab_topology_t *topology, int node);

/* The topology's rules for an allocation of size bytes with handle_types on
 * device of node, used bytes of whose memory are already taken: the one
 * place they live, for the daemon and the driver emulation alike. device is
 * a GPU ordinal, or a host NUMA node's (FAB_HOST_NUMA_ORDINAL_BASE + n),
 * whose memory is the node's host_memory and whose granularity and handle
 * types are its GPUs'.
 *   FAB_ERROR_INVALID_DEVICE  no such device or host NUMA node on the node
 *   FAB_ERROR_INVALID_VALUE   handle-type bits CUDA does not define; size 0, not a
 *                             multiple of the device's granularity, or past what
 *                             a file can hold
 *   FAB_ERROR_NOT_SUPPORTED   a handle type the device does not export
 *   FAB_ERROR_OUT_OF_MEMORY   more than the device has left */
fab_status_t fab__topology_alloc_check(const fab_topology_t *topology, int node, int device,
                                       uint64_t size, uint32_t handle_types, uint64_t used);

/* The channels (bit n = channel n) a peer with these credentials holds. */
uint64_t fab__topology_channels(const fab_topology_t *topology, uid_t uid, gid_t gid);

/* The value node's config sets for device attribute id, in *value: true, or
 * false (and *value untouched) when the config leaves it to the emulation. */
bool fab__topology_attribute(const fab_topology_t *topology, int node, uint32_t id,
                             int32_t *value);

/* Whether node's GPUs are isolated from each other (gpus_isolated, a field
 * fault): what cuDeviceCanAccessPeer and NVML's P2P status both answer by. */
bool fab__topology_gpus_isolated(const fab_topology_t *topology, int node);

/* The device uuid of ordinal on node (stable across runs). */
fab_uuid_t fab__topology_device_uuid(const fab_topology_t *topology, int node, int ordinal);

/* Set the private attribute id (a field fault, src/common/faultwords.c) of node to value; 0 removes it (0 is each
 * one's healthy value, so a healthy node spends none of its
 * FAB__NODE_ATTRIBUTES_MAX slots on them). 0, or -1 when the node has no
 * slot left. */
int fab__fault_attribute_set(fab__node_t *node, uint32_t id, int32_t value);

#endif /* FABMEM_COMMON_TOPOLOGY_IMPL_H */
