/* Multicast teams through the daemon, one call per MC_* message (client_mc.c
 * implements them; the daemon's side is src/daemon/teams.h): libcuda's
 * multicast.c is the only user, and never calls these holding fab__cu.lock.
 * The wire's requests and replies stay inside the client: a caller hands
 * values in and gets values and fds out.
 *
 * A team lives in the daemon and is reached on this client's connection: a
 * reconnection (a daemon that restarted) loses every membership, and later
 * calls of a member id fail with INVALID_VALUE. Every call answers
 * FAB_SUCCESS, the daemon's refusal, INVALID_VALUE for a NULL client,
 * ILLEGAL_STATE after fork, or SYSTEM_NOT_READY (no answer). */
#ifndef FABMEM_FABRIC_CLIENT_MC_H
#define FABMEM_FABRIC_CLIENT_MC_H

#include <stdbool.h>
#include <stdint.h>

#include "fabmem/fabric.h"

/* MC_REDUCE's operations over every bind: a sum of 32-bit elements (the x2
 * sums: a pair of halves or bfloat16s each, summed in float and rounded
 * once), or the least or greatest of 64-bit unsigned elements; and
 * fab__client_mc_red's, which adds a sum of 64-bit elements; the wire's
 * FAB__MC_OP_* are checked equal (client_mc.c). */
enum {
    FAB__CLIENT_MC_SUM_F32 = 1,
    FAB__CLIENT_MC_SUM_U32 = 2,
    FAB__CLIENT_MC_SUM_F16X2 = 3,
    FAB__CLIENT_MC_SUM_BF16X2 = 4,
    FAB__CLIENT_MC_MIN_U64 = 5,
    FAB__CLIENT_MC_MAX_U64 = 6,
    FAB__CLIENT_MC_SUM_U64 = 7, /* fab__client_mc_red only */
};

/* The size of one element of MC_REDUCE's operation op: 8 or 4. */
static inline unsigned fab__client_mc_elem_size(uint32_t op)
{
    return op == FAB__CLIENT_MC_MIN_U64 || op == FAB__CLIENT_MC_MAX_U64 ||
                   op == FAB__CLIENT_MC_SUM_U64
               ? 8u
               : 4u;
}

/* What MC_JOIN's reply hands a member. The two fds are the caller's to
 * close; either is -1 when the reply did not carry it. */
typedef struct fab__client_mc_member {
    uint64_t id;           /* the member: every later call names it */
    uint64_t size;         /* per device */
    uint64_t granularity;  /* what binds obey */
    uint32_t num_devices;  /* the team's size */
    uint32_t handle_types;
    int32_t creator_node;
    uint64_t state_bytes;  /* the shadow's bytes before the snapshot */
    int staging_fd;        /* the staging memfd, read-write */
    int shadow_fd;         /* the shadow memfd, read-only: the daemon's to write */
} fab__client_mc_member_t;

/* MC_CREATE: a team of `devices` devices (device: the creator's ordinal),
 * size bytes per device in granules of granularity, handle_types the CUDA
 * handle types. Its token is token (a region this client alone holds) when
 * not NULL, and then *token_fd_out is -1; else the daemon makes a memfd,
 * handed out read-only in *token_fd_out (the caller's). OUT_OF_MEMORY: the
 * reply did not carry that memfd. */
fab_status_t fab__client_mc_create(fab_client_t *client, fab_region_t *token, int32_t device,
                                   uint32_t devices, uint32_t handle_types, uint64_t size,
                                   uint64_t granularity, int *token_fd_out);

/* MC_JOIN: become a member of the team whose token is token_fd (the caller
 * keeps its descriptor). NOT_FOUND: the daemon knows no team by it. */
fab_status_t fab__client_mc_join(fab_client_t *client, int token_fd,
                                 fab__client_mc_member_t *member_out);

/* MC_ADD: add device (an ordinal of this client's node) to member's team. */
fab_status_t fab__client_mc_add(fab_client_t *client, uint64_t member, int32_t device);

/* MC_BIND: bind [mem_offset, +size) of the memory mem_fd holds (the caller
 * keeps its descriptor), on device, at mc_offset of member's team. */
fab_status_t fab__client_mc_bind(fab_client_t *client, uint64_t member, int32_t device,
                                 int mem_fd, uint64_t mem_offset, uint64_t mc_offset,
                                 uint64_t size);

/* MC_UNBIND: undo member's bind of device at exactly [mc_offset, +size). */
fab_status_t fab__client_mc_unbind(fab_client_t *client, uint64_t member, int32_t device,
                                   uint64_t mc_offset, uint64_t size);

/* MC_SYNC: publish member's stores (its staging copy against the snapshot)
 * to every bound buffer, and refresh the staging copy and the snapshot. */
fab_status_t fab__client_mc_sync(fab_client_t *client, uint64_t member);

/* A ranged MC_SYNC (multimem.st): member's staging bytes [mc_offset,
 * +bytes), whatever they are, to every bound buffer of the team now. */
fab_status_t fab__client_mc_publish(fab_client_t *client, uint64_t member, uint64_t mc_offset,
                                    uint64_t bytes);

/* A ranged MC_SYNC with an operation (multimem.red): count elements of op
 * (FAB__CLIENT_MC_*), read from member's staging copy at mc_offset, folded
 * into every bound buffer there now; the staging copy there then reads
 * member's own bound memory. */
fab_status_t fab__client_mc_red(fab_client_t *client, uint64_t member, uint32_t op,
                                uint64_t mc_offset, uint32_t count);

/* MC_REDUCE: sum count 32-bit elements at mc_offset over every bind, with
 * op (FAB__CLIENT_MC_SUM_*), into the shadow's sums at the same offset. */
fab_status_t fab__client_mc_reduce(fab_client_t *client, uint64_t member, uint32_t op,
                                   uint64_t mc_offset, uint32_t count);

/* MC_LEAVE: leave member's team, undoing its binds. */
fab_status_t fab__client_mc_leave(fab_client_t *client, uint64_t member);

/* Wait until every one of the num_devices devices of the team was added,
 * reading its state in shadow (a member's shadow memfd, mapped): the daemon
 * wakes the wait when a device is added and when the team is lost. Bounded
 * by FABMEM_TIMEOUT_MS (0: none). FAB_SUCCESS; ILLEGAL_STATE, said in the
 * log, when a member left before the team was complete or at the bound. */
fab_status_t fab__client_mc_wait_team(const void *shadow, uint32_t num_devices);

/* Whether region may be a multicast team's token, so that MC_JOIN is worth
 * asking: false only for an import the daemon said is plain memory
 * (protocol 7), true for any other. */
bool fab__region_maybe_mc_token(const fab_region_t *region);

#endif /* FABMEM_FABRIC_CLIENT_MC_H */
