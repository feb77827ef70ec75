/* The words of the fabric's field faults, one vocabulary for the config file
 * ([node] keys imex, fabric_state, fabric_manager, gpus_isolated), the FAULT
 * message and `fabmem fault`, so that a fault is spelled the same
 * everywhere (docs/fabric.md, "Field faults"). Only names and numbers live
 * here; the rules that apply them are the daemon's (src/daemon/fieldfaults.c,
 * handlers.c, dispatch.c). It includes no other header of the tree: the config reader,
 * the codec and `fabmem fault` all take it. */
#ifndef FABMEM_COMMON_FAULTWORDS_H
#define FABMEM_COMMON_FAULTWORDS_H

#include <stdint.h>

/* The FAULT message's operations and keys (src/common/proto.h carries them). */
enum {
    FAB__FAULT_OP_SET = 1,     /* one key of one node */
    FAB__FAULT_OP_CHANNEL = 2, /* withdraw or restore one IMEX channel */
    FAB__FAULT_OP_RESET = 3,   /* everything back to the config */
};
enum {
    FAB__FAULT_KEY_IMEX = 1,           /* FAB__IMEX_UP, _DOWN, _HUNG */
    FAB__FAULT_KEY_FABRIC_STATE = 2,   /* fab_fabric_state_t */
    FAB__FAULT_KEY_FABRIC_MANAGER = 3, /* 0 up, 1 down, 2 starting */
    FAB__FAULT_KEY_GPUS_ISOLATED = 4,  /* 0 no, 1 yes */
    FAB__FAULT_KEY_MAX = 4,
};

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

#endif /* FABMEM_COMMON_FAULTWORDS_H */
