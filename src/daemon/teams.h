/* Multicast teams, kept by the daemon (the MC_* messages, docs/fabric.md):
 * which token memory names a team, who is a member, the devices added, the
 * bind ranges and the memory behind them, and each member's staging copy
 * and snapshot. No member process writes any of it: a member's stores reach
 * another's memory only as the daemon copies them into the bound range, and
 * a reduction reads the bound ranges in the daemon and hands back the sums.
 *
 * Lifetimes: a team from MC_CREATE until its last member leaves (MC_LEAVE or
 * its connection closing), or until its creator's connection closes if
 * nobody ever joined; a member from MC_JOIN until MC_LEAVE or its
 * connection closing; a bind from MC_BIND until MC_UNBIND or its member
 * going. A member whose connection closes while the team is not yet
 * complete marks the team lost, which ends every member's wait for the
 * team. */
#ifndef FABMEM_DAEMON_TEAMS_H
#define FABMEM_DAEMON_TEAMS_H

#include "fabmem/topology.h"
#include "src/common/proto.h"
#include "src/daemon/registry.h"

typedef struct fab__mcs fab__mcs_t;

fab__mcs_t *fab__mcs_create(const fab_topology_t *topology);
void fab__mcs_destroy(fab__mcs_t *mcs);

/* The connection went away: its members leave (marking their incomplete
 * teams lost), the teams it created that nobody joined go. */
void fab__mcs_conn_close(fab__mcs_t *mcs, fab__conn_t *conn);

/* Answer one MC_* request. *fd_in (MC_JOIN's token, MC_BIND's memory) is
 * taken: kept or closed, and set to -1. token_fd is MC_CREATE's: the
 * memfd of the region the request names, which the caller found to be the
 * sender's own and held by nobody else (-1 otherwise: refused); it is not
 * taken. The fds the reply carries go in fds_out, the caller's to close
 * once sent. */
fab_status_t fab__mcs_answer(fab__mcs_t *mcs, fab__conn_t *conn, const fab__request_t *request,
                             int *fd_in, int token_fd, fab__reply_t *reply,
                             fab__reply_fds_t *fds_out);

/* How many teams and members live (tests, STATS-like checks). */
size_t fab__mcs_team_count(const fab__mcs_t *mcs);

#endif /* FABMEM_DAEMON_TEAMS_H */
