/* The words of the fabric's field faults, one vocabulary for the config file
 * ([node] keys imex, fabric_state, fabric_manager, gpus_isolated), the FAULT
 * message and `fabmem fault`, so that a fault is spelled the same
 * everywhere (docs/fabric.md, "Field faults"). Only names and numbers live
 * here; the rules that apply them are the daemon's (src/daemon/faults.c,
 * registry.c). */
#ifndef FABMEM_COMMON_FABFAULT_H
#define FABMEM_COMMON_FABFAULT_H

#include <stdint.h>

#include "src/common/proto.h"
#include "src/common/topology.h"

/* The key FAB__FAULT_KEY_* spelled name ("imex", "fabric_state",
 * "fabric_manager", "gpus_isolated"), or -1. */
int fab__fault_key_parse(const char *name);
const char *fab__fault_key_name(int key);

/* The value of key spelled text (imex: up, down, hung; fabric_state:
 * not_supported, not_started, in_progress, completed; fabric_manager: up,
 * down, starting; gpus_isolated: no, yes). 0, or -1 for a word the key does
 * not take. */
int fab__fault_value_parse(int key, const char *text, int32_t *value);

/* The words key takes, for messages ("up, down or hung"). */
const char *fab__fault_value_words(int key);

/* The private attribute a key is kept in (imex, fabric_manager,
 * gpus_isolated: attributes already travel with the node record to every
 * client), or 0 for fabric_state, which is a field of the record. */
uint32_t fab__fault_key_attribute(int key);

/* Set the private attribute id of node to value; 0 removes it (0 is each
 * one's healthy value, so a healthy node spends none of its
 * FAB__NODE_ATTRIBUTES_MAX slots on them). 0, or -1 when the node has no
 * slot left. */
int fab__fault_attribute_set(fab__node_t *node, uint32_t id, int32_t value);

#endif /* FABMEM_COMMON_FABFAULT_H */
