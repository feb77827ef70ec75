/* The daemon's services beside memory, for libcuda and the tools: legacy
 * CUDA IPC (client_ipc.h) and field faults (client_fault.h), each a call on
 * the client's connection (multicast teams are client_mc.c's). */
#include "fabmem/fabric.h"
#include "src/fabric/fabmemd.h"
#include "src/fabric/client_impl.h"
#include "src/fabric/client_ipc.h"
#include "src/fabric/client_fault.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/fabric/observe.h"
#include "src/base/env.h"

/* ---- legacy CUDA IPC (ipc.h) -------------------------------------------------- */

/* One IPC request: connect again first if the connection broke (nothing
 * published on the old one survives; the daemon dropped it), never resend:
 * a publish the daemon may have taken must not be taken twice. */
static fab_status_t fab__ipc_call(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply, int *fd_out)
{
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (client->sock < 0)
        status = fab__client_reconnect(client);
    if (status == FAB_SUCCESS) {
        fab__client_drain(client);
        status = fab__client_call_raw(client, request, fd_in, reply, fd_out);
    }
    fab__rw_unlock(&client->lock);
    return status;
}

fab_status_t fab__client_ipc_publish(fab_client_t *client, uint8_t kind, int device,
                                     uint64_t size, int fd, uint8_t out[FAB__IPC_HANDLE_BYTES])
{
    if (client == NULL || out == NULL || fd < 0)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_PUBLISH};
    request.u.ipc_publish.kind = kind;
    request.u.ipc_publish.device = device;
    request.u.ipc_publish.size = size;
    fab__reply_t reply;
    fab_status_t status = fab__ipc_call(client, &request, fd, &reply, NULL);
    if (status == FAB_SUCCESS)
        memcpy(out, reply.u.ipc_publish.bytes, FAB__IPC_HANDLE_BYTES);
    return status;
}

fab_status_t fab__client_ipc_open(fab_client_t *client, const uint8_t handle[FAB__IPC_HANDLE_BYTES],
                                  int *fd_out, uint8_t *kind_out, int *device_out,
                                  uint64_t *size_out)
{
    if (client == NULL || handle == NULL || fd_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_OPEN};
    memcpy(request.u.ipc.bytes, handle, FAB__IPC_HANDLE_BYTES);
    fab__reply_t reply;
    int fd = -1;
    fab_status_t status = fab__ipc_call(client, &request, -1, &reply, &fd);
    if (status == FAB_SUCCESS && fd < 0)
        status = FAB_ERROR_SYSTEM_NOT_READY; /* a reply without its memfd */
    if (status != FAB_SUCCESS) {
        if (fd >= 0)
            close(fd);
        return status;
    }
    *fd_out = fd;
    if (kind_out != NULL)
        *kind_out = reply.u.ipc_open.kind;
    if (device_out != NULL)
        *device_out = reply.u.ipc_open.device;
    if (size_out != NULL)
        *size_out = reply.u.ipc_open.size;
    return FAB_SUCCESS;
}

fab_status_t fab__client_ipc_withdraw(fab_client_t *client,
                                      const uint8_t handle[FAB__IPC_HANDLE_BYTES])
{
    if (client == NULL || handle == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_WITHDRAW};
    memcpy(request.u.ipc.bytes, handle, FAB__IPC_HANDLE_BYTES);
    fab__reply_t reply;
    return fab__ipc_call(client, &request, -1, &reply, NULL);
}

/* ---- field faults (src/fabric/client_fault.h) ------------------------------------------- */

fab_status_t fab__client_fault(fab_client_t *client, uint8_t op, uint8_t key, uint32_t target,
                               int32_t value)
{
    if (client == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_FAULT};
    request.u.fault.op = op;
    request.u.fault.key = key;
    request.u.fault.target = target;
    request.u.fault.value = value;
    fab__reply_t reply;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = fab__client_call(client, &request, NULL, &reply, NULL);
    fab__rw_unlock(&client->lock);
    return status;
}

/* Whether two records of one node differ in what a fault can change: the
 * fabric state and the attributes (where fabric_manager, imex and
 * gpus_isolated are kept). */
static bool fab__node_faults_differ(const fab__node_t *a, const fab__node_t *b)
{
    if (a->info.fabric_state != b->info.fabric_state || a->nattributes != b->nattributes)
        return true;
    for (unsigned i = 0; i < a->nattributes; i++) {
        bool found = false;
        for (unsigned j = 0; j < b->nattributes && !found; j++)
            found = a->attributes[i].id == b->attributes[j].id &&
                    a->attributes[i].value == b->attributes[j].value;
        if (!found)
            return true;
    }
    return false;
}

fab_status_t fab__client_topology_refresh(fab_client_t *client, const fab_topology_t **topology_out,
                                          bool *changed_out)
{
    if (changed_out != NULL)
        *changed_out = false;
    const fab_topology_t *topology;
    fab_status_t status = fab_client_topology(client, &topology);
    if (status != FAB_SUCCESS)
        return status;
    fab__request_t request = {.type = FAB__MSG_TOPOLOGY};
    request.u.topology.node = (uint32_t)client->node;
    fab__reply_t reply;
    fab__rw_wrlock(&client->lock);
    status = fab__client_call(client, &request, NULL, &reply, NULL);
    if (status == FAB_SUCCESS && client->topology == topology &&
        (client->node < 0 || client->node >= topology->nnodes ||
         fab__node_faults_differ(&topology->nodes[client->node], &reply.u.topology.node)))
        client->topology_stale = true; /* fab_client_topology fetches it anew */
    fab__rw_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    const fab_topology_t *now;
    status = fab_client_topology(client, &now);
    if (status != FAB_SUCCESS)
        return status;
    if (changed_out != NULL)
        *changed_out = now != topology;
    *topology_out = now;
    return FAB_SUCCESS;
}
