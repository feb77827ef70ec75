/* Legacy CUDA IPC's table (IPC_PUBLISH, IPC_OPEN, IPC_WITHDRAW; see
 * registry.h): the published entries, the handle bytes minted for them and
 * checked, and the entries withdrawn when their publisher goes. */
#include "src/daemon/registry_impl.h"

#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/le.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"

/* ---- IPC entries -------------------------------------------------------------------- */

static void fab__ipc_drop(fab__registry_t *daemon, fab__ipc_t *ipc)
{
    ipc->conn->user->ipcs--;
    fab__map_remove(&daemon->ipcs, ipc->id);
    fab__map_remove(&ipc->conn->ipcs, ipc->id);
    close(ipc->fd);
    free(ipc);
}

/* A connection leaves: everything it published is withdrawn, as its
 * process's cuMemFree would have done; pages others mapped stay theirs. */
void fab__ipc_drop_all(fab__registry_t *daemon, fab__conn_t *conn)
{
    size_t n = conn->ipcs.count;
    while (conn->ipcs.count != 0) {
        for (size_t i = 0; i < conn->ipcs.cap; i++) {
            if (conn->ipcs.slots[i].key != 0) {
                fab__ipc_drop(daemon, conn->ipcs.slots[i].value);
                break;
            }
        }
    }
    fab__map_free(&conn->ipcs);
    if (n != 0)
        fab__user_log(conn->user, FAB__LOG_INFO, "client pid %ld left with %zu IPC handles: withdrawn",
                 (long)conn->pid, n);
}

/* ---- legacy CUDA IPC ---------------------------------------------------------------- */

/* The IPC handle's 64 bytes (little-endian):
 *    0  4  magic "FIPC"
 *    4  1  format version (1)
 *    5  1  kind (FAB__IPC_KIND_*)
 *    6  2  zero
 *    8  8  the daemon's id of the entry (random, never 0)
 *   16  4  the publisher's node index
 *   20  4  device ordinal on that node
 *   24  8  size in bytes
 *   32 16  zero
 *   48 16  keyed BLAKE2b of a label and bytes [0, 48): the daemon's key, so
 *          only this daemon (or one restarted with its state file) mints
 *          bytes it accepts, and no field can be altered. */
#define FAB__IPC_MAGIC 0x43504946u /* "FIPC" */
#define FAB__IPC_FORMAT 1
#define FAB__IPC_MAC_OFFSET 48

static void fab__ipc_mac(const fab__registry_t *daemon, const uint8_t *bytes, uint8_t mac[16])
{
    /* The label keeps an IPC MAC from ever equalling a fabric handle's tag
     * or a creator token made with the same key. */
    uint8_t in[8 + FAB__IPC_MAC_OFFSET] = {'c', 'u', 'd', 'a', 'i', 'p', 'c', 0};
    memcpy(in + 8, bytes, FAB__IPC_MAC_OFFSET);
    crypto_generichash(mac, 16, in, sizeof(in), daemon->key, sizeof(daemon->key));
}

static void fab__ipc_mint(const fab__registry_t *daemon, const fab__ipc_t *ipc, int node,
                          uint8_t out[FAB__IPC_HANDLE_BYTES])
{
    memset(out, 0, FAB__IPC_HANDLE_BYTES);
    fab__le_put32(out, FAB__IPC_MAGIC);
    out[4] = FAB__IPC_FORMAT;
    out[5] = ipc->kind;
    fab__le_put64(out + 8, ipc->id);
    fab__le_put32(out + 16, (uint32_t)node);
    fab__le_put32(out + 20, (uint32_t)ipc->device);
    fab__le_put64(out + 24, ipc->size);
    fab__ipc_mac(daemon, out, out + FAB__IPC_MAC_OFFSET);
}

/* A process publishes the memfd of its memory. The fd must be a memfd
 * sealed as every fabmem memfd is, of the size it claims, read-write (the
 * openers write through it); the device one of its node's. */
fab_status_t fab__reg_ipc_publish(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, int *fd_in,
                                  fab__reply_t *reply)
{
    const fab__node_t *node = &daemon->topology->nodes[conn->node];
    int32_t device = request->u.ipc_publish.device;
    uint64_t size = request->u.ipc_publish.size;
    if (*fd_in < 0)
        return *fd_in == FAB__FD_LOST ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_INVALID_VALUE;
    if (device < 0 || device >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    /* Each entry holds a descriptor of the daemon's: counted against the
     * publisher's uid, so that one uid cannot take them all from the
     * others, channel or none. */
    uint64_t max = daemon->topology->limits.ipc_entries;
    if (max != 0 && conn->user->ipcs >= max) {
        fab__user_log_refusal(conn->user,
                      "IPC_PUBLISH by pid %ld (uid %lu) refused: it holds %llu IPC entries, "
                      "max_ipc_entries_per_uid is %llu", (long)conn->pid, (unsigned long)conn->uid,
                      (unsigned long long)conn->user->ipcs, (unsigned long long)max);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    char why[160];
    if (size == 0 || fab__memfd_check(*fd_in, size, 1, why, sizeof(why)) != FAB_SUCCESS) {
        fab__user_log(conn->user, FAB__LOG_WARN, "IPC_PUBLISH by pid %ld refused: %s", (long)conn->pid,
                 size == 0 ? "size 0" : why);
        return FAB_ERROR_INVALID_VALUE;
    }
    fab__ipc_t *ipc = calloc(1, sizeof(*ipc));
    if (ipc == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    do
        randombytes_buf(&ipc->id, sizeof(ipc->id));
    while (ipc->id == 0 || fab__map_get(&daemon->ipcs, ipc->id) != NULL);
    ipc->conn = conn;
    ipc->fd = *fd_in;
    ipc->kind = request->u.ipc_publish.kind;
    ipc->device = device;
    ipc->size = size;
    if (fab__map_put(&daemon->ipcs, ipc->id, ipc) != 0) {
        free(ipc);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    if (fab__map_put(&conn->ipcs, ipc->id, ipc) != 0) {
        fab__map_remove(&daemon->ipcs, ipc->id);
        free(ipc);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    *fd_in = -1; /* kept */
    conn->user->ipcs++;
    fab__ipc_mint(daemon, ipc, conn->node, reply->u.ipc_publish.bytes);
    return FAB_SUCCESS;
}

/* The live entry that authentic handle bytes name; NULL with the status:
 * INVALID_VALUE for bytes this daemon did not mint (or that were altered)
 * and for a withdrawn handle, as the driver answers a handle it cannot
 * resolve. */
static fab__ipc_t *fab__ipc_find(fab__registry_t *daemon, const uint8_t *bytes,
                                 fab_status_t *status)
{
    uint8_t mac[16];
    *status = FAB_ERROR_INVALID_VALUE;
    if (fab__le_get32(bytes) != FAB__IPC_MAGIC || bytes[4] != FAB__IPC_FORMAT)
        return NULL;
    fab__ipc_mac(daemon, bytes, mac);
    if (sodium_memcmp(mac, bytes + FAB__IPC_MAC_OFFSET, sizeof(mac)) != 0)
        return NULL;
    fab__ipc_t *ipc = fab__map_get(&daemon->ipcs, fab__le_get64(bytes + 8));
    if (ipc == NULL)
        return NULL;
    *status = FAB_SUCCESS;
    return ipc;
}

/* Another process opens a handle: same node as the publisher (the handle
 * says which), not the publisher itself, a handle still published. */
fab_status_t fab__reg_ipc_open(fab__registry_t *daemon, fab__conn_t *conn,
                               const fab__request_t *request, fab__reply_t *reply,
                               int *fd_out, int *fd_owned)
{
    const uint8_t *bytes = request->u.ipc.bytes;
    fab_status_t status;
    fab__ipc_t *ipc = fab__ipc_find(daemon, bytes, &status);
    if (ipc == NULL) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld: %s handle", (long)conn->pid,
                 fab__le_get32(bytes) == FAB__IPC_MAGIC ? "a forged, altered or withdrawn"
                                                        : "not an IPC");
        return status;
    }
    if ((int)fab__le_get32(bytes + 16) != conn->node) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld on node %s: the handle is of node %s",
                 (long)conn->pid, daemon->topology->nodes[conn->node].info.name,
                 daemon->topology->nodes[ipc->conn->node].info.name);
        return FAB_ERROR_INVALID_VALUE;
    }
    if (ipc->conn->pid == conn->pid) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld of its own handle", (long)conn->pid);
        return FAB_ERROR_INVALID_CONTEXT;
    }
    /* A descriptor of the reply's own: the publisher may withdraw (and the
     * entry's fd close) while this reply waits for the opener to read. */
    int fd = fcntl(ipc->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return FAB_ERROR_OUT_OF_MEMORY;
    reply->u.ipc_open.kind = ipc->kind;
    reply->u.ipc_open.device = ipc->device;
    reply->u.ipc_open.size = ipc->size;
    *fd_out = fd;
    *fd_owned = 1;
    return FAB_SUCCESS;
}

/* The publisher withdraws a handle (cuMemFree, cuEventDestroy): later opens
 * fail; mappings already made keep their pages. Only its publisher may. */
fab_status_t fab__reg_ipc_withdraw(fab__registry_t *daemon, fab__conn_t *conn,
                                   const fab__request_t *request)
{
    fab_status_t status;
    fab__ipc_t *ipc = fab__ipc_find(daemon, request->u.ipc.bytes, &status);
    if (ipc == NULL)
        return status;
    if (ipc->conn != conn)
        return FAB_ERROR_NOT_PERMITTED;
    fab__ipc_drop(daemon, ipc);
    return FAB_SUCCESS;
}
