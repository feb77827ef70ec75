/* Allocations (alloc.c), as vmm.c needs them: finding one by its handle, its
 * one reference count (get, put), a handle reference taken by address, and
 * giving back the memory of those whose last reference went. alloc.c's top
 * comment has the lifecycle. Every function but fab__cu_alloc_destroy
 * expects fab__cu.lock held for writing. */
#ifndef FAB_CUDA_ALLOC_H
#define FAB_CUDA_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"

typedef struct fab__cu_alloc {
    CUmemGenericAllocationHandle id;
    size_t size;
    int device;               /* a device index; for host memory the one current at
                                 creation (every GPU of a node has one granularity) */
    int host_numa;            /* -1: device memory; else the host NUMA node it lives on */
    CUmemAllocationProp prop; /* as created, or as the import implies */
    int fd;                   /* the backing memfd; owned unless region is set */
    void *region;             /* fab_region_t * when the fabric backs it */
    unsigned refs;            /* the one count: the last put releases */
    unsigned handle_refs;     /* those of refs that are handle references; 0:
                                 the handle is unknown (decides no lifetime) */
    unsigned fabric_exports;  /* diagnosis only (DESIGN: "The seed's rules") */
    bool read_only;           /* never mapped writable: the fd or the grant allows less */
    bool counted;             /* size is in the device's used bytes (made here) */
    bool imported;            /* from cuMemImportFromShareableHandle: host or device
                                 memory, which the handle does not say */
    struct fab__cu_alloc *next; /* once released, in a dead list */
    struct fab__cu_mc *mc;      /* set: a multicast object (multicast.c); fd is its staging copy */
} fab__cu_alloc_t;

/* The allocation a live handle names; NULL for an unknown, forged or released
 * one (a handle whose references are gone, even if its memory is mapped). */
fab__cu_alloc_t *fab__cu_alloc_find(CUmemGenericAllocationHandle id);

/* Take a reference; the caller holds one already (or found alloc in a table
 * that does, as vmm.c's pieces do). */
void fab__cu_alloc_get(fab__cu_alloc_t *alloc);
/* Drop a reference. The last one unlinks the allocation and pushes it on
 * *dead, for the caller to pass to fab__cu_alloc_destroy once it has
 * unlocked. */
void fab__cu_alloc_put(fab__cu_alloc_t *alloc, fab__cu_alloc_t **dead);

/* A new handle reference, as cuMemRetainAllocationHandle takes by a mapped
 * address: a reference, and the handle known again if it was released. */
void fab__cu_alloc_get_handle(fab__cu_alloc_t *alloc);

/* Give back the memory of released allocations; the caller holds no lock. */
void fab__cu_alloc_destroy(fab__cu_alloc_t *dead);

/* cuMemAlloc's share (memory.c), with fab__cu.lock held for writing: count
 * size bytes of device dev as used, so that cuMemGetInfo and cuMemCreate see
 * them (CUDA_ERROR_OUT_OF_MEMORY, nothing counted, when the device's memory
 * would run out), and give them back. */
CUresult fab__cu_alloc_charge(int dev, size_t size);
void fab__cu_alloc_uncharge(int dev, size_t size);
/* A new id from the counter of allocation handles (never reused), so that a
 * buffer id (CU_POINTER_ATTRIBUTE_BUFFER_ID) is unique across cuMemCreate
 * and cuMemAlloc memory. */
uint64_t fab__cu_alloc_new_id(void);

/* Multicast objects (multicast.c, below this module) are allocations too:
 * they sit in the handle table, cuMemMap maps their fd (the process's staging
 * copy), cuMemRelease drops their references. alloc.c reaches multicast.c
 * only through these hooks, which mcalloc.c sets when the library loads, so
 * that includes still point one way. share_fd and share_region give what an
 * export hands out (the object's token, not the staging copy); adopt,
 * called on a fresh import with no lock held, asks the daemon whether a's
 * memory is a team's token and if so turns a into a multicast object,
 * taking over its fd and region (CUDA_SUCCESS either way; an error fails
 * the import); destroy frees what a's mc holds, with no lock held. */
typedef struct fab__cu_alloc_mc_hooks {
    int (*share_fd)(const fab__cu_alloc_t *a);
    void *(*share_region)(const fab__cu_alloc_t *a);
    CUresult (*adopt)(fab__cu_alloc_t *a);
    void (*destroy)(fab__cu_alloc_t *a);
    /* cuMemMap's (vmm.c): wait, with no lock held, until the multicast
     * object h names (if it is one) has every device of its team; an error
     * (the team lost a member, or the wait's bound) fails the map. */
    CUresult (*wait_team)(CUmemGenericAllocationHandle h);
} fab__cu_alloc_mc_hooks_t;
extern const fab__cu_alloc_mc_hooks_t *fab__cu_alloc_mc_hooks;

/* Put a, made whole by the caller with no lock held (refs and handle_refs
 * 1), into the handle table and its id in *handle; on failure a is destroyed.
 * Takes fab__cu.lock itself. */
CUresult fab__cu_alloc_add(fab__cu_alloc_t *a, CUmemGenericAllocationHandle *handle);

#endif /* FAB_CUDA_ALLOC_H */
