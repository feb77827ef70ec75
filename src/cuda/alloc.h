/* Allocations (alloc.c), as vmm.c needs them: finding one by its handle,
 * counting its mappings and its handle references, and giving back the
 * memory of those whose last reference went. Every function but
 * fab__cu_alloc_destroy expects fab__cu.lock held for writing. */
#ifndef FAB_CUDA_ALLOC_H
#define FAB_CUDA_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "src/cuda/cuda_abi.h"

/* An allocation lives while its generic handle has references (cuMemCreate or
 * cuMemImportFromShareableHandle gives one, each cuMemRetainAllocationHandle
 * one more, each cuMemRelease drops one) or any mapping of it exists, or an
 * export is under way (pins); when all are gone the allocation leaves the
 * table and its memory is given back, after the lock is dropped: the memfd is
 * closed, or the fabric region is released so that the daemon may forget it. */
typedef struct fab__cu_alloc {
    CUmemGenericAllocationHandle id;
    size_t size;
    int device;
    CUmemAllocationProp prop; /* as created, or as the import implies */
    int fd;                   /* the backing memfd; owned unless region is set */
    void *region;             /* fab_region_t * when the fabric backs it */
    unsigned handle_refs;
    unsigned map_count;
    unsigned pins;           /* exports in flight without the lock: keep the memory */
    unsigned fabric_exports; /* diagnosis only (DESIGN: "The seed's rules") */
    bool read_only;          /* never mapped writable: the fd or the grant allows less */
    bool counted;            /* size is in the device's used bytes (made here) */
    struct fab__cu_alloc *next; /* in its bucket; once unlinked, in a list of dead ones */
} fab__cu_alloc_t;

/* The allocation a live handle names; NULL for an unknown, forged or released
 * one (a handle whose references are gone, even if its memory is mapped). */
fab__cu_alloc_t *fab__cu_alloc_find(CUmemGenericAllocationHandle id);

/* One more handle reference (cuMemRetainAllocationHandle): revives the
 * handle of memory still mapped after its references went. */
void fab__cu_alloc_retain_handle(fab__cu_alloc_t *alloc);

/* A mapping made, a mapping gone. An allocation whose last reference went is
 * unlinked and pushed on *dead, for the caller to pass to
 * fab__cu_alloc_destroy once it has unlocked. */
void fab__cu_alloc_ref_mapping(fab__cu_alloc_t *alloc);
void fab__cu_alloc_unref_mapping(fab__cu_alloc_t *alloc, fab__cu_alloc_t **dead);

/* Give back the memory of unlinked allocations; the caller holds no lock. */
void fab__cu_alloc_destroy(fab__cu_alloc_t *dead);

#endif /* FAB_CUDA_ALLOC_H */
