/* Stream-ordered memory pools' types and shared state, for the files that
 * keep them: pool.c (arenas and the allocator; its top comment has the
 * design), poolapi.c (the entry points) and poolshare.c (sharing). No other
 * module sees them: memory.c uses pool.h. */
#ifndef FAB_CUDA_POOL_IMPL_H
#define FAB_CUDA_POOL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/cuda/cuda_abi.h"
#include "src/cuda/idtable.h"
#include "src/cuda/state.h"
#include "src/cuda/tree.h"

/* Alignment and granularity of pool allocations: whole pages (4 KiB on
 * x86-64), so that a range can be punched out and closed without touching
 * its neighbours; more than the 256 bytes CUDA promises for any allocation. */
#define FAB__CU_POOL_ALIGN fab__cu_pool_align()

#define FAB__CU_POOL_MAGIC "fabmem-pool-v1"
#define FAB__CU_PTR_MAGIC "fabptr1"

/* The arena's first page, written by the pool's maker. */
typedef struct fab__cu_pool_header {
    char magic[16];
    unsigned char key[16];
    uint64_t size; /* the arena's, header included */
    int32_t device;
    uint32_t handle_types;
} fab__cu_pool_header_t;

/* CUmemPoolPtrExportData's 64 bytes, as this driver fills them. */
typedef struct fab__cu_ptr_export {
    char magic[8];
    unsigned char key[16];
    uint64_t offset;
    uint64_t size;
    uint64_t span;
    unsigned char unused[16];
} fab__cu_ptr_export_t;
_Static_assert(sizeof(fab__cu_ptr_export_t) == sizeof(CUmemPoolPtrExportData),
               "export data is 64 bytes");

typedef struct fab__cu_pool fab__cu_pool_t;

/* An allocation (in fab__cu_chunks, keyed by address) or a free range (in
 * its pool's free tree, keyed by offset). */
typedef struct fab__cu_piece {
    fab__cu_tnode_t node; /* first */
    size_t size;          /* an allocation: as asked; a free range: its bytes */
    size_t span;          /* an allocation: the pages it takes */
    fab__cu_pool_t *pool;
    uint64_t id;  /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    bool backed;  /* a free range whose pages may hold memory */
    bool freeing; /* a cuMemFreeAsync is queued for it */
} fab__cu_piece_t;
_Static_assert(offsetof(fab__cu_piece_t, node) == 0, "a node is its piece");

struct fab__cu_pool {
    uint64_t id; /* the handle */
    unsigned char key[16];
    int device;
    CUmemPoolProps props;
    bool is_default;
    bool imported;
    bool ipc;       /* handle types other than NONE: never releases pages */
    bool charges;   /* reserved bytes count against the device (made here, not FABRIC) */
    bool read_only; /* mapped read-only: an import granted no more */
    size_t size;    /* the arena, header included */
    unsigned char *base;
    int fd;                              /* owned; -1 for a FABRIC arena */
    CUmemGenericAllocationHandle fabric; /* the allocation of a FABRIC arena, or 0 */
    fab__cu_tree_t free;                 /* free pieces by offset */
    unsigned refs;
    uint64_t used, used_high, reserved, reserved_high, threshold;
    int reuse[3]; /* the REUSE_* attributes, as set */
    CUmemAccess_flags access[FAB__CU_MAX_DEVICES];
    fab__cu_pool_t *next; /* on a dead list */
};

/* Guarded by fab__cu.lock. */

/* Guarded by fab__cu.lock; pool.c's. */
extern fab__cu_idtable_t fab__cu_pools; /* id -> live pool (not destroyed) */
extern fab__cu_tree_t fab__cu_chunks;   /* live allocations and imported pointers */
extern fab__cu_pool_t *fab__cu_default_pools[FAB__CU_MAX_DEVICES];
extern fab__cu_pool_t *fab__cu_current_pools[FAB__CU_MAX_DEVICES]; /* NULL: the default */

/* pool.c's functions that poolapi.c and poolshare.c use (the caller holds
 * fab__cu.lock, but where said otherwise there). */
size_t fab__cu_pool_align(void);
size_t fab__cu_round_up(size_t n, size_t to);
CUmemoryPool fab__cu_pool_handle(const fab__cu_pool_t *p);
fab__cu_pool_t *fab__cu_pool_find(CUmemoryPool h);
fab__cu_piece_t *fab__cu_chunk_at(uintptr_t addr);
void fab__cu_pool_teardown(fab__cu_pool_t *dead);
int fab__cu_pool_prot(const fab__cu_pool_t *p);
CUresult fab__cu_arena_map(fab__cu_pool_t *p, int fd);
CUresult fab__cu_arena_fd_of(CUmemGenericAllocationHandle h, int *fd_out, size_t *size_out,
                             bool *read_only_out);
CUresult fab__cu_arena_make(fab__cu_pool_t *p);
fab__cu_pool_t *fab__cu_pool_new(const CUmemPoolProps *props, int dev);
void fab__cu_pool_free_pieces(fab__cu_pool_t *p);
CUresult fab__cu_pool_insert(fab__cu_pool_t *p);
void fab__cu_pool_put(fab__cu_pool_t *p, fab__cu_pool_t **dead);
void fab__cu_note_highs(fab__cu_pool_t *p);
CUresult fab__cu_pool_carve(fab__cu_pool_t *p, fab__cu_piece_t *c);
void fab__cu_pool_trim_to(fab__cu_pool_t *p, uint64_t keep);
void fab__cu_chunk_release(fab__cu_piece_t *c, fab__cu_pool_t **dead);

#endif
