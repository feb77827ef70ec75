/* The NVML emulation's process state, shared by nvml.c (init, shutdown,
 * identity) and fabric.c (fabric, NVLink, peers): this node's devices, read
 * without a lock between nvmlInit and the last nvmlShutdown (nvml.c's top
 * comment). */
#ifndef FABMEM_NVML_NVML_STATE_H
#define FABMEM_NVML_NVML_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "src/nvml/include/nvml.h"
#include "fabmem/fabric.h"

#define FAB__NVML_MAX_DEVICES 64

/* What an NVML handle points to: one GPU of this node. */
struct nvmlDevice_st {
    unsigned index; /* the node's ordinal, which NVML's index is */
    fab_device_info_t info;
};

typedef struct fab__nvml_state {
    pthread_mutex_t lock; /* serialises init and shutdown */
    int refs;             /* nvmlInit calls not yet balanced by nvmlShutdown */
    fab_client_t *client; /* the daemon's connection, or NULL */
    fab_topology_t *local; /* the local config when no daemon answered */
    bool fabric;          /* a daemon answered: the fabric is up */
    fab_node_info_t node;
    int cuda_version;
    unsigned count;
    struct nvmlDevice_st devices[FAB__NVML_MAX_DEVICES];
} fab__nvml_state_t;
extern fab__nvml_state_t fab__nvml;

/* Whether nvmlInit holds. */
bool fab__nvml_initialized(void);

/* The device a handle names: UNINITIALIZED before nvmlInit, INVALID_ARGUMENT
 * for a handle that is not one of ours. */
nvmlReturn_t fab__nvml_device(nvmlDevice_t device, const struct nvmlDevice_st **out);

#define FAB__NVML_TRY(call)                    \
    do {                                       \
        nvmlReturn_t fab__nvml_try_ = (call);  \
        if (fab__nvml_try_ != NVML_SUCCESS)    \
            return fab__nvml_try_;             \
    } while (0)

/* Copy text into a caller's buffer of length bytes: INSUFFICIENT_SIZE, and
 * nothing written, when it does not fit with its NUL. */
nvmlReturn_t fab__nvml_text(const char *text, char *buf, unsigned int length);

/* A GPU's PCI record as the current nvmlPciInfo_t has it (nvml.c, which
 * says what each field holds). */
void fab__nvml_pci(const fab_device_info_t *info, nvmlPciInfo_t *pci);

/* The first two versions' record: the legacy bus id and the five numbers, then
 * 16 reserved bytes where the current record has its long bus id. */
#define FAB__NVML_PCI_OLD_BYTES (offsetof(nvmlPciInfo_t, busId) + 16)

#endif /* FABMEM_NVML_NVML_STATE_H */
