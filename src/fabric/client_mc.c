/* Multicast teams on the client's connection (client_mc.h): one call per
 * MC_* message, each building its request and reading its reply here, over
 * fab__client_mc_request (client_impl.h), which sends one as given; and the
 * wait on a team's state page, the daemon's futex. */
#include "fabmem/fabric.h"
#include "src/fabric/client_impl.h"
#include "src/fabric/client_mc.h"

#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/base/env.h"

_Static_assert((int)FAB__CLIENT_MC_SUM_F32 == (int)FAB__MC_OP_ADD_F32, "MC sum F32");
_Static_assert((int)FAB__CLIENT_MC_SUM_U32 == (int)FAB__MC_OP_ADD_U32, "MC sum U32");
_Static_assert((int)FAB__CLIENT_MC_SUM_F16X2 == (int)FAB__MC_OP_ADD_F16X2, "MC sum F16X2");
_Static_assert((int)FAB__CLIENT_MC_SUM_BF16X2 == (int)FAB__MC_OP_ADD_BF16X2, "MC sum BF16X2");
_Static_assert((int)FAB__CLIENT_MC_MIN_U64 == (int)FAB__MC_OP_MIN_U64, "MC min U64");
_Static_assert((int)FAB__CLIENT_MC_MAX_U64 == (int)FAB__MC_OP_MAX_U64, "MC max U64");
_Static_assert((int)FAB__CLIENT_MC_SUM_U64 == (int)FAB__MC_OP_ADD_U64, "MC sum U64");

fab_status_t fab__client_mc_request(fab_client_t *client, fab__request_t *request,
                                    fab_region_t *region, int fd_in, fab__reply_t *reply_out,
                                    int fds_out[2], unsigned *nfds_out)
{
    if (client == NULL || request == NULL || reply_out == NULL || fds_out == NULL ||
        nfds_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    *nfds_out = 0;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    /* A team is the connection's: reconnecting would not bring it back,
     * and resending could join or bind twice. */
    if (client->sock < 0)
        status = fab__client_reconnect(client);
    if (status == FAB_SUCCESS && region != NULL) {
        request->u.mc.id = region->id;
        if (region->id == 0)
            status = FAB_ERROR_INVALID_VALUE;
    }
    fab__fds_t fds = {0};
    if (status == FAB_SUCCESS) {
        fab__client_drain(client);
        if (fab__client_request_send(client, request, fd_in, FAB__REQUEST_WAITS) != 0)
            status = FAB_ERROR_SYSTEM_NOT_READY;
        else
            status = fab__client_reply_await_fds(client, request, reply_out, &fds);
    }
    fab__rw_unlock(&client->lock);
    if (status == FAB_SUCCESS && fds.lost)
        status = FAB_ERROR_OUT_OF_MEMORY; /* the member's memfds did not all come */
    if (status != FAB_SUCCESS || fds.count > 2) {
        fab__client_fds_close(&fds);
        return status == FAB_SUCCESS ? FAB_ERROR_SYSTEM_NOT_READY : status;
    }
    for (unsigned i = 0; i < fds.count; i++)
        fds_out[i] = fds.fd[i];
    *nfds_out = fds.count;
    return FAB_SUCCESS;
}

/* One request of a member whose reply carries nothing the caller keeps:
 * any fds that came are closed. */
static fab_status_t fab__client_mc_member_call(fab_client_t *client, fab__request_t *request,
                                               uint64_t member, int fd_in)
{
    request->u.mc.id = member;
    fab__reply_t reply;
    int fds[2];
    unsigned nfds = 0;
    fab_status_t status = fab__client_mc_request(client, request, NULL, fd_in, &reply, fds, &nfds);
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
    return status;
}

fab_status_t fab__client_mc_create(fab_client_t *client, fab_region_t *token, int32_t device,
                                   uint32_t devices, uint32_t handle_types, uint64_t size,
                                   uint64_t granularity, int *token_fd_out)
{
    if (token_fd_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    *token_fd_out = -1;
    fab__request_t request = {.type = FAB__MSG_MC_CREATE};
    request.u.mc.device = device;
    request.u.mc.count = devices;
    request.u.mc.types = handle_types;
    request.u.mc.size = size;
    request.u.mc.mc_offset = granularity;
    fab__reply_t reply;
    int fds[2];
    unsigned nfds = 0;
    fab_status_t status = fab__client_mc_request(client, &request, token, -1, &reply, fds, &nfds);
    if (status != FAB_SUCCESS)
        return status;
    if (token == NULL && nfds == 1) {
        *token_fd_out = fds[0];
        return FAB_SUCCESS;
    }
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
    /* A region is its own token; a memfd token that did not come is none. */
    return token != NULL ? FAB_SUCCESS : FAB_ERROR_OUT_OF_MEMORY;
}

fab_status_t fab__client_mc_join(fab_client_t *client, int token_fd,
                                 fab__client_mc_member_t *member_out)
{
    if (member_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_MC_JOIN};
    fab__reply_t reply;
    int fds[2] = {-1, -1};
    unsigned nfds = 0;
    fab_status_t status = fab__client_mc_request(client, &request, NULL, token_fd, &reply, fds,
                                                 &nfds);
    if (status != FAB_SUCCESS)
        return status;
    *member_out = (fab__client_mc_member_t){
        .id = reply.u.mc.id,
        .size = reply.u.mc.size,
        .granularity = reply.u.mc.granularity,
        .num_devices = reply.u.mc.num_devices,
        .handle_types = reply.u.mc.handle_types,
        .creator_node = reply.u.mc.creator_node,
        .state_bytes = (uint64_t)reply.u.mc.shadow_pages * FAB__MC_SHADOW_PAGE,
        .staging_fd = nfds > 0 ? fds[0] : -1,
        .shadow_fd = nfds > 1 ? fds[1] : -1,
    };
    return FAB_SUCCESS;
}

fab_status_t fab__client_mc_add(fab_client_t *client, uint64_t member, int32_t device)
{
    fab__request_t request = {.type = FAB__MSG_MC_ADD};
    request.u.mc.device = device;
    return fab__client_mc_member_call(client, &request, member, -1);
}

fab_status_t fab__client_mc_bind(fab_client_t *client, uint64_t member, int32_t device,
                                 int mem_fd, uint64_t mem_offset, uint64_t mc_offset,
                                 uint64_t size)
{
    fab__request_t request = {.type = FAB__MSG_MC_BIND};
    request.u.mc.device = device;
    request.u.mc.size = size;
    request.u.mc.mc_offset = mc_offset;
    request.u.mc.mem_offset = mem_offset;
    return fab__client_mc_member_call(client, &request, member, mem_fd);
}

fab_status_t fab__client_mc_unbind(fab_client_t *client, uint64_t member, int32_t device,
                                   uint64_t mc_offset, uint64_t size)
{
    fab__request_t request = {.type = FAB__MSG_MC_UNBIND};
    request.u.mc.device = device;
    request.u.mc.mc_offset = mc_offset;
    request.u.mc.size = size;
    return fab__client_mc_member_call(client, &request, member, -1);
}

fab_status_t fab__client_mc_sync(fab_client_t *client, uint64_t member)
{
    fab__request_t request = {.type = FAB__MSG_MC_SYNC};
    return fab__client_mc_member_call(client, &request, member, -1);
}

/* A ranged MC_SYNC: bytes at mc_offset, folded with op (0: written). */
static fab_status_t fab__client_mc_ranged(fab_client_t *client, uint64_t member, uint32_t op,
                                          uint32_t count, uint64_t mc_offset, uint64_t bytes)
{
    fab__request_t request = {.type = FAB__MSG_MC_SYNC};
    request.u.mc.types = op;
    request.u.mc.count = count;
    request.u.mc.size = bytes;
    request.u.mc.mc_offset = mc_offset;
    return fab__client_mc_member_call(client, &request, member, -1);
}

fab_status_t fab__client_mc_publish(fab_client_t *client, uint64_t member, uint64_t mc_offset,
                                    uint64_t bytes)
{
    return fab__client_mc_ranged(client, member, 0, 0, mc_offset, bytes);
}

fab_status_t fab__client_mc_red(fab_client_t *client, uint64_t member, uint32_t op,
                                uint64_t mc_offset, uint32_t count)
{
    return fab__client_mc_ranged(client, member, op, count, mc_offset,
                                 (uint64_t)count * fab__client_mc_elem_size(op));
}

fab_status_t fab__client_mc_reduce(fab_client_t *client, uint64_t member, uint32_t op,
                                   uint64_t mc_offset, uint32_t count)
{
    fab__request_t request = {.type = FAB__MSG_MC_REDUCE};
    request.u.mc.count = count;
    request.u.mc.types = op;
    request.u.mc.mc_offset = mc_offset;
    return fab__client_mc_member_call(client, &request, member, -1);
}

fab_status_t fab__client_mc_leave(fab_client_t *client, uint64_t member)
{
    fab__request_t request = {.type = FAB__MSG_MC_LEAVE};
    return fab__client_mc_member_call(client, &request, member, -1);
}

/* ---- the wait on the team ------------------------------------------------------- */

/* How long a wait for the team may last: FABMEM_TIMEOUT_MS, as every wait
 * on the daemon (docs/fabric.md); 0 there means none. */
static int64_t fab__client_mc_deadline_ms(void)
{
    const char *s = getenv(FAB__ENV_TIMEOUT_MS);
    long ms = FAB__TIMEOUT_DEFAULT_MS;
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '\0' && v >= 0)
            ms = v;
    }
    return ms == 0 ? -1 : fab__now_ms() + ms;
}

/* The driver's bind blocks until every device was added (cuda.h). The
 * state page's count is the futex word; a member lost before the team was
 * complete, or the deadline, ends the wait with ILLEGAL_STATE (the team can
 * no longer become what the call waits for). */
fab_status_t fab__client_mc_wait_team(const void *shadow, uint32_t num_devices)
{
    const fab__mc_state_t *st = shadow;
    int64_t deadline = -2;
    for (;;) {
        uint32_t n = __atomic_load_n(&st->ndevices, __ATOMIC_ACQUIRE);
        if (n >= num_devices)
            return FAB_SUCCESS;
        if (__atomic_load_n(&st->lost, __ATOMIC_ACQUIRE)) {
            fab__log(FAB__LOG_WARN, "multicast: a member left before the team of %u devices "
                     "was complete (%u added)", num_devices, n);
            return FAB_ERROR_ILLEGAL_STATE;
        }
        if (deadline == -2)
            deadline = fab__client_mc_deadline_ms();
        struct timespec ts = {1, 0}, *tsp = NULL;
        if (deadline >= 0) {
            int64_t left = deadline - fab__now_ms();
            if (left <= 0) {
                fab__log(FAB__LOG_WARN, "multicast: the team of %u devices was not complete "
                         "within FABMEM_TIMEOUT_MS (%u added)", num_devices, n);
                return FAB_ERROR_ILLEGAL_STATE;
            }
            ts.tv_sec = (time_t)(left / 1000);
            ts.tv_nsec = (long)(left % 1000) * 1000000L;
            tsp = &ts;
        }
        (void)syscall(SYS_futex, &st->ndevices, FUTEX_WAIT, n, tsp, NULL, 0);
    }
}
