/* Legacy CUDA IPC through the daemon (client.c implements it): publish a
 * memfd and get the 64 handle bytes the daemon signed, open such bytes and
 * get the memfd back, withdraw what this client published. libcuda's
 * cuIpc* calls are the only users; they never call these holding
 * fab__cu.lock.
 *
 * What a client published lives as long as its connection: a daemon that
 * restarts forgets it (handles published before then no longer open), and
 * the client does not publish again on reconnecting. */
#ifndef FABMEM_FABRIC_CLIENT_IPC_H
#define FABMEM_FABRIC_CLIENT_IPC_H

#include <stdint.h>

#include "fabmem/fabric.h"

/* The handle's length (CU_IPC_HANDLE_SIZE) and what a handle names; the
 * wire's FAB__IPC_* are checked equal (client.c). */
#define FAB__CLIENT_IPC_HANDLE_BYTES 64
enum {
    FAB__CLIENT_IPC_KIND_MEM = 1,   /* a cuMemAlloc allocation */
    FAB__CLIENT_IPC_KIND_EVENT = 2, /* an interprocess event's shared page */
};

/* Publish fd (the client keeps its own descriptor) holding size bytes of
 * kind (FAB__CLIENT_IPC_KIND_*) on device. FAB_SUCCESS with the handle in out;
 * the daemon's refusal (INVALID_VALUE: not a sealed memfd of that size;
 * INVALID_DEVICE), ILLEGAL_STATE after fork, SYSTEM_NOT_READY. */
fab_status_t fab__client_ipc_publish(fab_client_t *client, uint8_t kind, int device,
                                     uint64_t size, int fd, uint8_t out[FAB__CLIENT_IPC_HANDLE_BYTES]);

/* Open handle bytes: FAB_SUCCESS with the memfd (the caller's to close),
 * its kind, device and size; INVALID_VALUE (not minted by this daemon,
 * altered, withdrawn, or of another node), INVALID_CONTEXT (published by
 * this very process), SYSTEM_NOT_READY, OUT_OF_MEMORY. */
fab_status_t fab__client_ipc_open(fab_client_t *client, const uint8_t handle[FAB__CLIENT_IPC_HANDLE_BYTES],
                                  int *fd_out, uint8_t *kind_out, int *device_out,
                                  uint64_t *size_out);

/* Withdraw handle bytes this client published. FAB_SUCCESS, or the
 * daemon's refusal; waits for the answer, so that an open another process
 * sends after this returns is refused. */
fab_status_t fab__client_ipc_withdraw(fab_client_t *client,
                                      const uint8_t handle[FAB__CLIENT_IPC_HANDLE_BYTES]);

#endif /* FABMEM_FABRIC_CLIENT_IPC_H */
