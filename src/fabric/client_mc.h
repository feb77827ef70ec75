/* Multicast teams through the daemon (client.c implements it; the daemon's
 * side is src/daemon/teams.h): libcuda's multicast.c is the only user,
 * and never calls these holding fab__cu.lock.
 *
 * A team lives in the daemon and is reached on this client's connection: a
 * reconnection (a daemon that restarted) loses every membership, and later
 * calls of a member id fail with INVALID_VALUE. */
#ifndef FABMEM_FABRIC_CLIENT_MC_H
#define FABMEM_FABRIC_CLIENT_MC_H

#include <stdbool.h>
#include <stdint.h>

#include "fabmem/fabric.h"
#include "src/common/proto.h"

/* One MC_* request (request->type and u.mc set by the caller; for
 * MC_CREATE, u.mc.id is replaced by region's id when region is not NULL).
 * fd_in rides along (-1: none; the caller keeps its own). On success the
 * reply's body in *reply_out and its fds, in order, in fds_out (up to 2;
 * *nfds_out of them, the caller's to close); an error hands out none.
 * FAB_SUCCESS, the daemon's refusal, ILLEGAL_STATE after fork,
 * SYSTEM_NOT_READY. */
fab_status_t fab__client_mc(fab_client_t *client, fab__request_t *request, fab_region_t *region,
                            int fd_in, fab__reply_t *reply_out, int fds_out[2],
                            unsigned *nfds_out);

/* Whether region may be a multicast team's token, so that MC_JOIN is worth
 * asking: false only for an import the daemon said is plain memory
 * (protocol 7), true for any other. */
bool fab__region_maybe_mc_token(const fab_region_t *region);

#endif /* FABMEM_FABRIC_CLIENT_MC_H */
