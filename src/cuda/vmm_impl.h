/* What vmm.c and vmm_access.c share of the reservations and their mapped
 * pieces: the records, and the lookups both sides walk. Every function here
 * wants fab__cu.lock held (for reading suffices, except piece_split). */
#ifndef FAB_CUDA_VMM_IMPL_H
#define FAB_CUDA_VMM_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/alloc.h"
#include "src/cuda/tree.h"

/* One mapped piece of a reservation: a cuMemMap mapping, possibly split by
 * cuMemSetAccess over part of it. Pieces of one mapping share map_id. Each
 * piece holds a reference to its allocation. Access is kept per device as two
 * bit sets. node comes first, so a tree node is its piece; node.key is the
 * piece's address. */
typedef struct fab__cu_piece {
    fab__cu_tnode_t node;
    size_t size;
    fab__cu_alloc_t *alloc;
    size_t alloc_offset;
    uint64_t map_id;
    uint64_t readers;
    uint64_t writers;
    unsigned host; /* the host's access: FAB__CU_HOST_READ | FAB__CU_HOST_WRITE */
} fab__cu_piece_t;

#define FAB__CU_HOST_READ 1u
#define FAB__CU_HOST_WRITE 2u
typedef struct fab__cu_range {
    fab__cu_tnode_t node; /* first; node.key is base */
    uintptr_t base;
    size_t size;
    uintptr_t map_base; /* the whole mmap, over-reserved for alignment */
    size_t map_len;
    fab__cu_tree_t pieces; /* non-overlapping */
    /* Room for one piece, so that the common use (one mapping a
     * reservation) makes and frees no record of its own; own_used while
     * own is in pieces. */
    fab__cu_piece_t own;
    bool own_used;
} fab__cu_range_t;

_Static_assert(offsetof(fab__cu_piece_t, node) == 0, "a node is its piece");
_Static_assert(offsetof(fab__cu_range_t, node) == 0, "a node is its range");

static inline uintptr_t fab__cu_piece_end(const fab__cu_piece_t *p)
{
    return p->node.key + p->size;
}

static inline fab__cu_piece_t *fab__cu_piece_next(const fab__cu_piece_t *p)
{
    return (fab__cu_piece_t *)p->node.next;
}

static inline fab__cu_piece_t *fab__cu_piece_prev(const fab__cu_piece_t *p)
{
    return (fab__cu_piece_t *)p->node.prev;
}

/* The reservation that holds addr, or NULL. */
fab__cu_range_t *fab__cu_range_find(uintptr_t addr);
/* The piece of r that holds addr, or NULL. */
fab__cu_piece_t *fab__cu_piece_holding(const fab__cu_range_t *r, uintptr_t addr);
/* Whether [addr, addr+len) lies in r and every byte of it is mapped; on
 * success *first_out / *last_out are the first and last pieces that cover it
 * (a walk from one to the other by fab__cu_piece_next). */
bool fab__cu_covered(const fab__cu_range_t *r, uintptr_t addr, size_t len,
                     fab__cu_piece_t **first_out, fab__cu_piece_t **last_out);
/* Split p at address at (strictly inside it) into p and tail, a piece the
 * caller allocated: the split cannot fail. tail takes its own reference to
 * the allocation. */
void fab__cu_piece_split(fab__cu_range_t *r, fab__cu_piece_t *p, uintptr_t at,
                         fab__cu_piece_t *tail);

#endif /* FAB_CUDA_VMM_IMPL_H */
