/* The field faults the daemon plays (docs/fabric.md, "Field faults"): per
 * node, the emulated IMEX service (up, down, hung), the fabric state, the
 * Fabric Manager and whether the node's GPUs are isolated from each other;
 * and IMEX channels withdrawn from everyone. The config sets the first
 * state; FAULT (`fabmem fault`, the daemon's owner only) changes it at run
 * time, and RESET puts the config's back.
 *
 * The node faults live in the topology itself (the daemon's own copy: the
 * fabric state in the node record, the others as private attributes), so
 * that every rule and every TOPOLOGY reply sees them with no second source;
 * this module keeps the config's records to reset to, the withdrawn
 * channels, and a generation that counts changes, which the event loop
 * uses to retry imports it holds for a hung IMEX.
 *
 * Lifetime: one per registry, created and destroyed with it. */
#ifndef FABMEM_DAEMON_FIELDFAULTS_H
#define FABMEM_DAEMON_FIELDFAULTS_H

#include <stdint.h>

#include "fabmem/topology.h"
#include "src/common/proto.h"
#include "src/common/topology_impl.h"

/* Not a fab_status_t: the registry's answer to an import that a hung IMEX
 * holds. The event loop keeps the request and answers it later: again
 * (normally) once the faults change, or FAB__FAULT_HUNG_STATUS once
 * imex_timeout_ms has passed. It never goes on the wire. */
#define FAB__FAULT_DEFERRED 0x7fff0001u
#define FAB__FAULT_HUNG_STATUS FAB_ERROR_INVALID_HANDLE

typedef struct fab__faults fab__faults_t;

/* Keep topology's config state for RESET; NULL on no memory. */
fab__faults_t *fab__faults_create(fab_topology_t *topology);
void fab__faults_destroy(fab__faults_t *faults);

/* Apply a FAULT request (its sender already proved to be the owner).
 * FAB_SUCCESS, or INVALID_VALUE (no such node or channel, a value the key
 * does not take), OUT_OF_MEMORY (no attribute slot left on the node). */
fab_status_t fab__faults_apply(fab__faults_t *faults, const fab__request_t *request);

/* The channels withdrawn from everyone (bit n: channel n). */
uint64_t fab__faults_withdrawn(const fab__faults_t *faults);

/* Bumped by every change that succeeds. */
uint64_t fab__faults_generation(const fab__faults_t *faults);

/* [daemon] imex_timeout_ms. */
int fab__faults_imex_timeout_ms(const fab__faults_t *faults);

/* The field faults' verdict on an import, after the registry's own checks
 * passed: memory made on device from_device of node from_node, imported
 * onto device to_device of node to_node.
 *   FAB_SUCCESS
 *   FAB_ERROR_INVALID_HANDLE  across nodes while either node's IMEX is down
 *   FAB__FAULT_DEFERRED       across nodes while either node's IMEX is hung
 *   FAB_ERROR_INVALID_DEVICE  within one node whose GPUs are isolated, onto
 *                             another GPU than the memory's
 * An import within one node does not go through IMEX. */
uint32_t fab__faults_import(const fab__faults_t *faults, int from_node, int from_device,
                            int to_node, int to_device);

#endif /* FABMEM_DAEMON_FIELDFAULTS_H */
