/* The 64-importer crews of bench_fabric: long-lived worker processes that
 * import, map, touch, unmap and release in rounds, the bare mechanism's
 * (a bare epoll server), the client library's (through fabmemd) and a
 * minimal client's (fabmemd through the wire protocol alone).
 *
 * A crew of long-lived worker processes, each started once, pinned,
 * connected and warmed (a few rounds of its loop) before any clock runs, then
 * told how many rounds to do over its own pipe: a timed round is the workers'
 * imports alone, not their fork, first faults or exit. The bare crew asks a
 * bare server (one process, all the workers' sockets in one epoll, as
 * fabmemd holds its clients') for a memfd and maps it; the fabric crew imports
 * and maps through fabmemd with the client library, the minimal crew with
 * the protocol's encoder and decoder alone. One worker of a crew and all 64 take turns, so the
 * bare mechanism's own gain from 64 processes is measured next to the
 * fabric's, on the same machine, in the same run. On two cores the server
 * (the bare one, or fabmemd) has the second core and the workers alternate
 * from the first, so the one worker is always across cores from its server:
 * left to the scheduler, it landed beside the server in some rounds and
 * across in others, and a round's rate differed by 7x with its placement. */
#ifndef FAB_BENCH_CREW_H
#define FAB_BENCH_CREW_H

#include <stdint.h>
#include <sys/types.h>

#include "fabmem.h"

#define CREW 64
#define CREW_WARM 16

struct crew {
    pid_t pids[CREW];
    int cmd[CREW]; /* write: a round's count, or 0: exit */
    int done;      /* read: a byte per worker per round */
    pid_t server;  /* the bare server, or 0 */
};

#define CREW_MAP_SIZE (2u * 1024 * 1024) /* each import's memory */

enum crew_kind { CREW_BARE, CREW_FABRIC, CREW_MINIMAL };

/* The bare mechanism's loop, on a socket whose server answers each 64-byte
 * request with a memfd: request, memfd back, map, touch, unmap, close,
 * `iterations` times. 0, or -1 on failure. */
int crew_bare_loop(int sock, int iterations);

/* The fabric crew's loop: `count` imports through the client library
 * (bench_fabric.c's import_loop); 0, or -1 on failure. */
int crew_fabric_loop(fab_client_t *client, const fab_handle_t *handle, int count);

/* Start the crew on cpu (< 0: two cores, as above): its workers import
 * handle (not read by a bare crew). 0 on success, once every worker is
 * warm. The minimal crew connects to $FABMEM_SOCKET. */
int crew_start(struct crew *crew, enum crew_kind kind, const fab_handle_t *handle, int cpu);

/* Imports per second with the first `workers` of the crew doing `each`
 * rounds at once; -1 when one failed. */
double crew_round(struct crew *crew, int workers, int each);

/* What a crew's server (the bare one, or fabmemd: pid server) and its
 * workers have run so far, in ns. */
void crew_cpu(const struct crew *crew, pid_t server, uint64_t *server_ns, uint64_t *workers_ns);

/* End the crew's workers (and its bare server) and wait for them. */
void crew_stop(struct crew *crew);

#endif /* FAB_BENCH_CREW_H */
