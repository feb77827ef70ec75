/* fabmem run --node-per-rank: one rank of an MPI (or Slurm) job placed on a
 * node of the topology, with every rank of the job sharing one daemon.
 * See run_job.c for the rules and docs/mpi.md for the user's view. */
#ifndef FABMEM_TOOLS_RUN_JOB_H
#define FABMEM_TOOLS_RUN_JOB_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "fabmem.h"

typedef struct fab__job {
    int rank;                /* this process's rank in the job */
    const char *rank_from;   /* the variable it came from */
    bool own;                /* true: the job's own daemon; false: joined FABMEM_SOCKET's */
    char id[64];             /* the job id, as it appears in dir (own only) */
    char dir[PATH_MAX];      /* the job's directory (own only) */
    char socket[PATH_MAX + 16];
    int lock_fd;             /* dir/job.lock, held open for the job's life (own only) */
    pid_t janitor;           /* > 0: we started the daemon's janitor and reap it */
    fab_client_t *client;    /* our connection, held so the daemon is never idle */
    char node[FAB_NAME_MAX]; /* the node and device the rank sits on */
    int device;
} fab__job_t;

/* This process's rank from the launcher's environment, in the documented
 * order: OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID. 0, or -1
 * when none is set to a number (said on stderr). */
int fab__job_rank(fab__job_t *job);

/* Join the job's daemon (starting it when this rank is the first) and pick
 * the rank's node and device. config: the daemon's config (NULL: the
 * built-in topology); config_given: it came from --config, not from
 * FABMEM_CONFIG. 0, or
 * the exit status to give (1 no daemon, 2 bad usage); on failure nothing is
 * held. */
int fab__job_join(fab__job_t *job, const char *config, bool config_given);

/* Leave the job: the last rank out stops the daemon; the rank that started
 * it reaps it and removes the job's directory. aborting: the launcher is
 * tearing the job down (we got SIGTERM), so the starter does not wait for
 * the others. */
void fab__job_leave(fab__job_t *job, bool aborting);

#endif /* FABMEM_TOOLS_RUN_JOB_H */
