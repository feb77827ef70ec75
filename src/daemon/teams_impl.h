/* The daemon's multicast teams inside (teams.c, teams_sums.c): the records
 * of a team, its members and their binds, and the member's shadow layout
 * (a state page, the snapshot of its staging copy, the sums of its last
 * reduction). Only the daemon's team files include it. */
#ifndef FABMEM_DAEMON_TEAMS_IMPL_H
#define FABMEM_DAEMON_TEAMS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/daemon/teams.h"

#define FAB__MC_DEVICES 128      /* a team: an NVL72 rack's GPUs fit */
#define FAB__MC_BINDS 256        /* live binds per team */
#define FAB__MC_MEMBERS 256      /* members per team */
#define FAB__MC_PER_CONN 64      /* teams a connection has joined or made, at once */
#define FAB__MC_TYPES (1u | 8u)  /* POSIX_FILE_DESCRIPTOR, FABRIC */
#define FAB__MC_PAGE 4096u
/* The most bytes per device a team may have: a synchronisation and a
 * reduction run in the daemon, over the whole object, for every member, and
 * each member costs it three times the size in memfds. */
#define FAB__MC_SIZE_MAX (1ull << 30)

typedef struct fab__mc_team fab__mc_team_t;
typedef struct fab__mc_member fab__mc_member_t;

typedef struct fab__mc_bind {
    fab__mc_member_t *member; /* who made it */
    uint64_t id;
    int32_t node, device;
    uint64_t mc_offset, size;
    uint8_t *map; /* [mem_offset, +size) of the memory, read-write */
    uint64_t mem_offset;
    int holes; /* the memory's own read-only descriptor, for its holes; -1: none */
} fab__mc_bind_t;

struct fab__mc_member {
    uint64_t id;
    fab__mc_team_t *team;
    fab__conn_t *conn;
    uint8_t *staging; /* team->size bytes */
    uint8_t *shadow;  /* a page, the snapshot, the sums */
    size_t shadow_len;
    /* Read-only descriptors of the staging and shadow memfds for their holes
     * (fab__memfd_data_from): what was never written is skipped; -1: none. */
    int staging_holes, shadow_holes;
};

struct fab__mc_team {
    dev_t dev;
    ino_t ino;
    int token_fd; /* held, so that the inode is never another file's */
    fab__conn_t *creator;
    uint64_t size, gran;
    uint32_t num_devices, handle_types;
    int32_t creator_node;
    uint32_t ndevices;
    struct {
        int32_t node, device;
    } devices[FAB__MC_DEVICES];
    uint32_t binds_ever;
    bool lost;
    fab__mc_bind_t *binds[FAB__MC_BINDS];
    fab__mc_member_t *members[FAB__MC_MEMBERS];
    unsigned nmembers;
};

static inline uint8_t *fab__mc_snapshot(const fab__mc_member_t *m)
{
    return m->shadow + FAB__MC_PAGE;
}

static inline uint8_t *fab__mc_sums(const fab__mc_member_t *m)
{
    return m->shadow + FAB__MC_PAGE + m->team->size;
}

/* Whether bind b covers any of [off, +len): then [*lo, *hi) is what. */
static inline bool fab__mc_overlap(const fab__mc_bind_t *b, uint64_t off, uint64_t len,
                                   uint64_t *lo, uint64_t *hi)
{
    if (!b || off + len <= b->mc_offset || off >= b->mc_offset + b->size)
        return false;
    *lo = off > b->mc_offset ? off : b->mc_offset;
    *hi = off + len < b->mc_offset + b->size ? off + len : b->mc_offset + b->size;
    return true;
}

/* The member's staging bytes [off, +len) to every bind that covers them
 * (teams.c). */
void fab__mc_push(const fab__mc_team_t *team, const uint8_t *staging, uint64_t off,
                  uint64_t len);

/* MC_REDUCE: the sums of the request's elements over every bind, into the
 * member's sums (teams_sums.c). */
fab_status_t fab__mc_reduce(fab__mc_member_t *m, const fab__request_t *rq);

/* A ranged MC_SYNC with an operation (multimem.red): the request's count
 * elements at its mc offset, read from the member's staging copy, folded
 * into every bind that covers them (teams_sums.c). */
fab_status_t fab__mc_red(fab__mc_member_t *m, const fab__request_t *rq);

#endif /* FABMEM_DAEMON_TEAMS_IMPL_H */
