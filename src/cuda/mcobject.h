/* A multicast object's record, this process's side of it, and what
 * multicast.c (the team, through the daemon's MC_* messages) and mcalloc.c
 * (the object as an allocation: alloc.c's hooks) share of it. multicast.c's
 * top comment has the design and the locking. */
#ifndef FAB_CUDA_MCOBJECT_H
#define FAB_CUDA_MCOBJECT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fabmem/fabric.h"
#include "src/cuda/alloc.h"

typedef struct fab__cu_mc_local {
    fab__cu_alloc_t *mem; /* holds a reference */
    int dev;              /* this process's device index */
    size_t mc_offset, mem_offset, size;
    uint8_t *map;         /* the bound bytes, mapped read-only */
    int holes;            /* the memory's own read-only descriptor, for its holes; -1: none */
    struct fab__cu_mc_local *next;
} fab__cu_mc_local_t;

struct fab__cu_mc {
    fab_region_t *region; /* the token's, when FABRIC */
    int ctl_fd;           /* the token's memfd (owned unless region) */
    uint64_t member;      /* the daemon's id of this membership */
    size_t size;
    uint64_t gran;        /* the granularity binds obey */
    uint32_t num_devices;
    int32_t creator_node;
    uint32_t types;
    uint8_t *staging;     /* the staging memfd, mapped shared */
    uint8_t *shadow;      /* state page, snapshot, sums: read-only */
    size_t shadow_len;
    /* Descriptors of this process's own for the holes of the staging and
     * shadow memfds (fab__memfd_written): a synchronisation compares only
     * what was written; -1: every byte counts as written. */
    int staging_holes, shadow_holes;
    fab__cu_mc_local_t *locals;
    struct fab__cu_mc *next; /* in fab__cu_mcs */
};

/* This process's objects (multicast.c defines them): the list, guarded by
 * fab__cu_mc_mu, and how many, read unlocked as a hint. */
extern pthread_mutex_t fab__cu_mc_mu;
extern struct fab__cu_mc *fab__cu_mcs;
extern int fab__cu_mc_live;

/* multicast.c: free an object (leaving its team when it joined one); the
 * adopt hook (an import of memory the size of a token asks the daemon
 * whether it is a team's: MC_JOIN, and a yes makes a the multicast object);
 * wait until every device of the team was added (ILLEGAL_STATE when a
 * member was lost first, or past FABMEM_TIMEOUT_MS). */
void fab__cu_mc_free(struct fab__cu_mc *mc);
CUresult fab__cu_mc_adopt(fab__cu_alloc_t *a);
CUresult fab__cu_mc_wait_team(const struct fab__cu_mc *mc);

/* mcalloc.c: the multicast object a handle names, with a reference taken
 * (the caller puts it with fab__cu_mc_put), or NULL; and the drop of the
 * references binds held on their memory, and of their mappings. Each takes
 * fab__cu.lock for writing: the caller holds neither it nor fab__cu_mc_mu
 * (the two are never held together). */
fab__cu_alloc_t *fab__cu_mc_get(CUmemGenericAllocationHandle h);
void fab__cu_mc_put(fab__cu_alloc_t *a);
void fab__cu_mc_put_mems(fab__cu_mc_local_t *list);

#endif /* FAB_CUDA_MCOBJECT_H */
