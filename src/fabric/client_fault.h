/* Field faults through the daemon, for the client side (client.c
 * implements both): `fabmem fault` sends FAULT, and the layers that report
 * the fabric's state from the topology (NVML's fabric info, libcuda's
 * fabric-related attributes and multicast's Fabric Manager check) refresh
 * it, so that a running process sees a fault set after it started.
 *
 * Design (docs/fabric.md, "Field faults"): the daemon's rules apply at the
 * next request, so imports, allocations and binds see a change at once
 * without any help. What a client reports from its cached topology is
 * refreshed only where it is asked: one TOPOLOGY round trip for the
 * client's own node, and a refetch of the whole topology only when that
 * node's record changed. The import path costs nothing more. */
#ifndef FABMEM_FABRIC_CLIENT_FAULT_H
#define FABMEM_FABRIC_CLIENT_FAULT_H

#include <stdint.h>

#include "fabmem/fabric.h"
#include "src/common/faultwords.h"

/* Send FAULT (op FAB__FAULT_OP_*, key FAB__FAULT_KEY_*, target a node index
 * or channel number, value). FAB_SUCCESS, or the daemon's refusal:
 * NOT_PERMITTED for a uid other than the daemon's own, INVALID_VALUE for a
 * node, channel or value it does not have, OUT_OF_MEMORY when the node has
 * no attribute slot left for the fault; SYSTEM_NOT_READY without a daemon. */
fab_status_t fab__client_fault(fab_client_t *client, uint8_t op, uint8_t key, uint32_t target,
                               int32_t value);

/* The client's topology, with its own node's record asked of the daemon
 * again: when the record changed (a fault), the whole topology is fetched
 * anew and *topology_out is the new one (the old one stays readable until
 * the client is closed, as fab_client_topology's do). *changed_out (may be
 * NULL) says whether it changed. */
fab_status_t fab__client_topology_refresh(fab_client_t *client, const fab_topology_t **topology_out,
                                          bool *changed_out);

#endif /* FABMEM_FABRIC_CLIENT_FAULT_H */
