/* Stream-ordered memory pools: cuMemPoolCreate, cuMemPoolDestroy,
 * cuMemPoolSetAttribute, cuMemPoolGetAttribute, cuMemPoolTrimTo,
 * cuMemPoolSetAccess, cuMemPoolGetAccess, cuDeviceGetDefaultMemPool,
 * cuDeviceGetMemPool, cuDeviceSetMemPool, cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync, and sharing:
 * cuMemPoolExportToShareableHandle, cuMemPoolImportFromShareableHandle,
 * cuMemPoolExportPointer, cuMemPoolImportPointer. memory.c asks this module
 * about pool memory (pool.h) for copies, pointer attributes and cuMemFree.
 *
 * A pool is an arena: one sparse memfd (src/common/memfd.h: sealed at its
 * size) mapped MAP_SHARED once, of the pool's maxSize (or a default) plus one
 * page in front, the header, which names the pool to an importer (a magic,
 * the pool's random 128-bit key, its size, device and handle types). Pages
 * nobody touched cost nothing. A FABRIC pool's arena is instead one FABRIC
 * allocation made with cuMemCreate (alloc.c, through the daemon), so that
 * every fabric rule applies to pools as to any allocation, and its shareable
 * handle is that allocation's fabric handle.
 *
 * Allocations are carved from the arena in whole pages (FAB__CU_POOL_ALIGN),
 * first fit over the pool's free pieces, an AVL tree keyed by offset
 * (tree.h). A free piece is "backed" when its pages may hold memory (it was
 * allocated since the last release) and unbacked when never touched or
 * punched out; pieces of the two kinds are never merged, and a carve prefers
 * a backed piece, so that RESERVED_MEM_CURRENT counts exactly the backed
 * bytes: those given out (USED_MEM_CURRENT) plus those freed and kept.
 * Reserved bytes of a pool this process made count against the device's
 * memory (alloc.c's count, which cuMemGetInfo reads) from the carve that
 * backs them until a release punches them out (fallocate PUNCH_HOLE); a
 * FABRIC arena counts whole from its cuMemCreate. Releasing happens in
 * cuMemPoolTrimTo and, past the release threshold, when a free is reached
 * (the driver does it at the next synchronize; doing it when the free runs
 * is earlier, so what a program sees after a synchronize is the same). An
 * IPC pool (handle types not NONE) never releases, as the driver documents.
 *
 * Stream order: cuMemAllocAsync carves at once and returns the pointer (as
 * documented). cuMemFreeAsync marks the allocation as being freed and puts
 * the free on the stream (stream.h's submit): the range returns to the pool
 * only when the stream's worker reaches it, after everything queued before
 * it on that stream has run. So a range can only be reused once no work
 * that was ordered before its free is left to run, whatever stream reuses
 * it: that is safe under every REUSE_* setting, and those attributes are
 * kept and reported but change nothing.
 *
 * Lifecycle of a pool:
 *   create (arena made with no lock held, then the pool inserted in the
 *   handle table under fab__cu.lock) ─▶ refs = 1 for the handle, +1 per live
 *   allocation (a free that has not run yet still holds its own)
 *   ─▶ destroy: out of the table (the handle is unknown to calls at once),
 *   the handle's reference dropped ─▶ the last reference unlinks it under the
 *   lock ─▶ its arena is unmapped, its fd closed, its FABRIC allocation
 *   released, after unlocking (fab__cu_pool_teardown).
 * A device's default pool is made on first use and never destroyed.
 *
 * Lifecycle of an allocation ("piece", the same record as a free piece):
 *   carve (a piece in the address tree fab__cu_chunks) ─▶ cuMemFreeAsync
 *   marks it freeing ─▶ the free runs (or cuMemFree at once): out of the
 *   address tree, back in its pool's free tree, merged with its neighbours.
 * An imported pointer is a piece of an imported pool that owns no range of
 * it: its free only forgets it.
 *
 * Sharing: the POSIX_FD handle is a dup of the arena memfd (sealed: no
 * holder can resize it); an importer maps the same arena and checks the
 * header. cuMemPoolExportPointer writes 64 bytes: a magic, the pool's key,
 * the allocation's offset, size and span; cuMemPoolImportPointer refuses data
 * whose key is not its pool's (a pointer imported into the wrong pool) and
 * returns the importer's address of the same bytes. An imported pool is
 * accessible from its resident device only until cuMemPoolSetAccess says
 * more (the programming guide's rule).
 *
 * Locking (docs/design.md): everything here is guarded by fab__cu.lock; the
 * fabric client is reached only through alloc.c's entry points, called with
 * no lock held; arenas are made and unmapped with no lock held. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/alloc.h"
#include "src/cuda/pool.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"
#include "src/cuda/tree.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/memfd.h"

/* Alignment and granularity of pool allocations: whole pages (4 KiB on
 * x86-64), so that a range can be punched out and closed without touching
 * its neighbours; more than the 256 bytes CUDA promises for any allocation. */
#define FAB__CU_POOL_ALIGN fab__cu_pool_align()
/* maxSize 0 ("a system dependent value"): the device's memory, but no more
 * than this much address space per pool, which untouched costs nothing. */
#define FAB__CU_POOL_DEFAULT_MAX ((uint64_t)32 << 30)
/* A FABRIC arena is one allocation the daemon counts whole from the start:
 * with maxSize 0 it is this big (or a quarter of the device's memory). */
#define FAB__CU_POOL_FABRIC_DEFAULT ((uint64_t)1 << 30)

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
static fab__cu_idtable_t fab__cu_pools; /* id -> live pool (not destroyed) */
static uint64_t fab__cu_next_pool_id = 0x7000;
static fab__cu_tree_t fab__cu_chunks; /* live allocations and imported pointers */
static fab__cu_pool_t *fab__cu_default_pools[FAB__CU_MAX_DEVICES];
static fab__cu_pool_t *fab__cu_current_pools[FAB__CU_MAX_DEVICES]; /* NULL: the default */

static size_t fab__cu_pool_align(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 4096 ? (size_t)page : 4096;
}

static size_t fab__cu_round(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static CUmemoryPool fab__cu_pool_handle(const fab__cu_pool_t *p)
{
    return (CUmemoryPool)(uintptr_t)p->id;
}

/* The live pool a handle names, or NULL. Caller holds the lock. */
static fab__cu_pool_t *fab__cu_pool_find(CUmemoryPool h)
{
    if (!h)
        return NULL;
    return fab__cu_idtable_find(&fab__cu_pools, (uint64_t)(uintptr_t)h);
}

static fab__cu_piece_t *fab__cu_chunk_find(uintptr_t addr)
{
    fab__cu_piece_t *c = (fab__cu_piece_t *)fab__cu_tree_floor(&fab__cu_chunks, addr);
    return c && addr - c->node.key < c->size ? c : NULL;
}

static fab__cu_piece_t *fab__cu_chunk_at(uintptr_t addr)
{
    fab__cu_piece_t *c = (fab__cu_piece_t *)fab__cu_tree_floor(&fab__cu_chunks, addr);
    return c && c->node.key == addr ? c : NULL;
}

/* ---- arenas -------------------------------------------------------------------- */

/* Unmap and close what an arena holds; no lock held. */
static void fab__cu_arena_drop(fab__cu_pool_t *p)
{
    if (p->base)
        munmap(p->base, p->size);
    if (p->fd >= 0)
        close(p->fd);
    if (p->fabric)
        (void)FAB__CU_INNER(cuMemRelease(p->fabric));
    p->base = NULL;
    p->fd = -1;
    p->fabric = 0;
}

static void fab__cu_pool_teardown(fab__cu_pool_t *dead)
{
    while (dead) {
        fab__cu_pool_t *p = dead;
        dead = p->next;
        fab__cu_arena_drop(p);
        free(p);
    }
}

/* The protection of p's pages that are given out. */
static int fab__cu_pool_prot(const fab__cu_pool_t *p)
{
    return p->read_only ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* Map fd (a dup the caller closes) as p's arena; no lock held. Only the
 * header page is accessible (read-write for the pool's maker, read-only for
 * an importer): the rest opens range by range as it is given out, so that
 * nothing that reads the process's readable memory (a debugger's core dump,
 * valgrind's leak check) touches, and so fills, the sparse arena. */
static CUresult fab__cu_arena_map(fab__cu_pool_t *p, int fd)
{
    void *m = mmap(NULL, p->size, PROT_NONE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->base = m;
    int prot = p->imported ? PROT_READ : fab__cu_pool_prot(p);
    return mprotect(m, FAB__CU_POOL_ALIGN, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* A dup of the fd of the allocation behind a fabric handle, its size and
 * whether it is read-only. No lock held on entry. */
static CUresult fab__cu_arena_fd_of(CUmemGenericAllocationHandle h, int *fd_out, size_t *size_out,
                                    bool *read_only_out)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(h);
    if (a) {
        int fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
        r = fd >= 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        *fd_out = fd;
        *size_out = a->size;
        *read_only_out = a->read_only;
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

/* Make p's arena of p->size bytes (no lock held) and write its header. */
static CUresult fab__cu_arena_make(fab__cu_pool_t *p)
{
    if (getrandom(p->key, sizeof(p->key), 0) != (ssize_t)sizeof(p->key))
        return CUDA_ERROR_OPERATING_SYSTEM;
    unsigned types = (unsigned)p->props.handleTypes;
    CUresult r;
    if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof(prop));
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location = p->props.location;
        prop.requestedHandleTypes = (CUmemAllocationHandleType)types;
        FAB__CU_TRY(FAB__CU_INNER(cuMemCreate(&p->fabric, p->size, &prop, 0)));
        int fd = -1;
        size_t size = 0;
        bool ro = false;
        r = fab__cu_arena_fd_of(p->fabric, &fd, &size, &ro);
        if (r == CUDA_SUCCESS) {
            r = fab__cu_arena_map(p, fd);
            close(fd);
        }
    } else {
        if (fab__memfd_create("fabmem-pool", p->size, &p->fd) != FAB_SUCCESS) {
            p->fd = -1;
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        r = fab__cu_arena_map(p, p->fd);
    }
    if (r != CUDA_SUCCESS)
        return r;
    fab__cu_pool_header_t hdr;
    memset(&hdr, 0, sizeof(hdr));
    memcpy(hdr.magic, FAB__CU_POOL_MAGIC, sizeof(FAB__CU_POOL_MAGIC));
    memcpy(hdr.key, p->key, sizeof(hdr.key));
    hdr.size = p->size;
    hdr.device = p->device;
    hdr.handle_types = types;
    memcpy(p->base, &hdr, sizeof(hdr));
    return CUDA_SUCCESS;
}

/* A new pool record for device dev with props (checked), its arena's
 * size decided, its one free piece made; the arena itself is not made. */
static fab__cu_pool_t *fab__cu_pool_new(const CUmemPoolProps *props, int dev)
{
    fab__cu_pool_t *p = calloc(1, sizeof(*p));
    fab__cu_piece_t *all = calloc(1, sizeof(*all));
    if (!p || !all) {
        free(p);
        free(all);
        return NULL;
    }
    p->fd = -1;
    p->props = *props;
    p->device = dev;
    p->refs = 1;
    for (int i = 0; i < 3; i++)
        p->reuse[i] = 1; /* all three default to enabled */
    p->access[dev] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    unsigned types = (unsigned)props->handleTypes;
    p->ipc = types != 0;
    p->charges = !(types & CU_MEM_HANDLE_TYPE_FABRIC);
    const fab__cu_device_t *d = &fab__cu.devices[dev];
    uint64_t want = props->maxSize;
    if (want == 0) {
        want = d->total_memory < FAB__CU_POOL_DEFAULT_MAX ? d->total_memory
                                                          : FAB__CU_POOL_DEFAULT_MAX;
        if ((types & CU_MEM_HANDLE_TYPE_FABRIC) && want > FAB__CU_POOL_FABRIC_DEFAULT)
            want = d->total_memory / 4 < FAB__CU_POOL_FABRIC_DEFAULT ? d->total_memory / 4
                                                                     : FAB__CU_POOL_FABRIC_DEFAULT;
    }
    size_t size = fab__cu_round((size_t)want, FAB__CU_POOL_ALIGN) + FAB__CU_POOL_ALIGN;
    if (types & CU_MEM_HANDLE_TYPE_FABRIC)
        size = fab__cu_round(size, (size_t)d->granularity); /* cuMemCreate's rule */
    p->size = size;
    all->node.key = FAB__CU_POOL_ALIGN; /* the header's page is never given out */
    all->size = size - FAB__CU_POOL_ALIGN;
    fab__cu_tree_insert(&p->free, &all->node);
    return p;
}

static void fab__cu_pool_free_pieces(fab__cu_pool_t *p)
{
    fab__cu_tnode_t *n = fab__cu_tree_ceil(&p->free, 0);
    while (n) {
        fab__cu_tnode_t *next = n->next;
        fab__cu_tree_remove(&p->free, n);
        free(n);
        n = next;
    }
}

/* Insert p into the handle table; the caller holds the lock for writing. */
static CUresult fab__cu_pool_insert(fab__cu_pool_t *p)
{
    p->id = fab__cu_next_pool_id;
    fab__cu_next_pool_id += 0x10;
    return fab__cu_idtable_insert(&fab__cu_pools, p->id, p) == 0 ? CUDA_SUCCESS
                                                                 : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Drop a reference; the last one uncounts the pool's bytes and pushes it on
 * *dead, for fab__cu_pool_teardown after unlocking. Lock held for writing. */
static void fab__cu_pool_put(fab__cu_pool_t *p, fab__cu_pool_t **dead)
{
    if (--p->refs > 0)
        return;
    if (p->charges && !p->imported)
        fab__cu_alloc_uncharge(p->device, p->reserved);
    fab__cu_pool_free_pieces(p);
    p->next = *dead;
    *dead = p;
}

/* ---- the allocator (lock held for writing) ------------------------------------------ */

static void fab__cu_note_highs(fab__cu_pool_t *p)
{
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

/* Merge free piece b with the piece after it when they touch and are of
 * one kind; whether it did. */
static bool fab__cu_merge_next(fab__cu_pool_t *p, fab__cu_piece_t *b)
{
    fab__cu_piece_t *next = (fab__cu_piece_t *)b->node.next;
    if (!next || next->backed != b->backed || b->node.key + b->size != next->node.key)
        return false;
    b->size += next->size;
    fab__cu_tree_remove(&p->free, &next->node);
    free(next);
    return true;
}

/* Merge free piece b with its neighbours of the same kind. */
static void fab__cu_coalesce(fab__cu_pool_t *p, fab__cu_piece_t *b)
{
    (void)fab__cu_merge_next(p, b);
    fab__cu_piece_t *prev = (fab__cu_piece_t *)b->node.prev;
    if (prev)
        (void)fab__cu_merge_next(p, prev);
}

/* Carve span bytes for chunk c (not yet in any tree) from p: c's address set.
 * CUDA_ERROR_OUT_OF_MEMORY when no free piece is big enough, or backing it
 * would run the device out of memory. */
static CUresult fab__cu_carve(fab__cu_pool_t *p, fab__cu_piece_t *c)
{
    fab__cu_piece_t *pick = NULL;
    for (fab__cu_tnode_t *n = fab__cu_tree_ceil(&p->free, 0); n; n = n->next) {
        fab__cu_piece_t *b = (fab__cu_piece_t *)n;
        if (b->size < c->span)
            continue;
        if (b->backed) {
            pick = b;
            break;
        }
        if (!pick)
            pick = b;
    }
    if (!pick)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t offset = pick->node.key;
    if (!pick->backed && p->charges)
        FAB__CU_TRY(fab__cu_alloc_charge(p->device, c->span));
    /* Open the range (a process out of mappings, max_map_count, says no). */
    if (mprotect(p->base + offset, c->span, fab__cu_pool_prot(p)) != 0) {
        if (!pick->backed && p->charges)
            fab__cu_alloc_uncharge(p->device, c->span);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!pick->backed)
        p->reserved += c->span;
    if (pick->size == c->span) {
        fab__cu_tree_remove(&p->free, &pick->node);
        free(pick);
    } else {
        /* The rest keeps its place in key order: raising the key by span keeps
         * it above its predecessor and below its successor. */
        pick->node.key += c->span;
        pick->size -= c->span;
    }
    c->node.key = (uintptr_t)p->base + offset;
    p->used += c->span;
    fab__cu_note_highs(p);
    return CUDA_SUCCESS;
}

/* Release backed free pieces (punching their pages out) while the pool
 * keeps at least keep reserved bytes; whole pieces only. */
static void fab__cu_release(fab__cu_pool_t *p, uint64_t keep)
{
    if (p->ipc || p->imported || p->fd < 0)
        return; /* IPC pools keep their pages (documented); imports own none */
    bool changed = false;
    for (fab__cu_tnode_t *n = fab__cu_tree_ceil(&p->free, 0); n && p->reserved > keep;
         n = n->next) {
        fab__cu_piece_t *b = (fab__cu_piece_t *)n;
        if (!b->backed || p->reserved - b->size < keep)
            continue;
        (void)fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)b->node.key,
                        (off_t)b->size);
        /* Closed again; if the kernel cannot split the mapping, the range
         * merely stays accessible. */
        (void)mprotect(p->base + b->node.key, b->size, PROT_NONE);
        b->backed = false;
        p->reserved -= b->size;
        if (p->charges)
            fab__cu_alloc_uncharge(p->device, b->size);
        changed = true;
    }
    if (!changed)
        return;
    /* Pieces that became unbacked side by side become one. */
    fab__cu_tnode_t *n = fab__cu_tree_ceil(&p->free, 0);
    while (n) {
        if (!fab__cu_merge_next(p, (fab__cu_piece_t *)n))
            n = n->next;
    }
}

/* The end of an allocation: c leaves the address tree, its range goes back
 * to its pool (an imported pointer's only leaves the count), and the pool's
 * reference goes. */
static void fab__cu_chunk_release(fab__cu_piece_t *c, fab__cu_pool_t **dead)
{
    fab__cu_pool_t *p = c->pool;
    fab__cu_tree_remove(&fab__cu_chunks, &c->node);
    p->used -= c->span;
    if (p->imported) {
        (void)mprotect((void *)c->node.key, c->span, PROT_NONE);
        free(c);
    } else {
        c->node.key = c->node.key - (uintptr_t)p->base;
        c->size = c->span;
        c->backed = true;
        c->freeing = false;
        fab__cu_tree_insert(&p->free, &c->node);
        fab__cu_coalesce(p, c);
        if (p->reserved > p->threshold)
            fab__cu_release(p, p->threshold);
    }
    fab__cu_pool_put(p, dead);
}

/* ---- pool memory, for memory.c -------------------------------------------------- */

CUresult fab__cu_pool_check(uintptr_t addr, size_t len, int device, bool write)
{
    const fab__cu_piece_t *c = fab__cu_chunk_find(addr);
    if (!c)
        return CUDA_ERROR_NOT_FOUND;
    if (len > c->size - (addr - c->node.key))
        return CUDA_ERROR_INVALID_VALUE;
    if (device < 0 || device >= FAB__CU_MAX_DEVICES)
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    CUmemAccess_flags acc = c->pool->access[device];
    if (acc == CU_MEM_ACCESS_FLAGS_PROT_NONE)
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (write && (acc != CU_MEM_ACCESS_FLAGS_PROT_READWRITE || c->pool->read_only))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    return CUDA_SUCCESS;
}

bool fab__cu_pool_range(uintptr_t addr, uintptr_t *base_out, size_t *size_out)
{
    const fab__cu_piece_t *c = fab__cu_chunk_find(addr);
    if (!c)
        return false;
    *base_out = c->node.key;
    *size_out = c->size;
    return true;
}

CUresult fab__cu_pool_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    const fab__cu_piece_t *c = fab__cu_chunk_find((uintptr_t)ptr);
    if (!c)
        return CUDA_ERROR_NOT_FOUND;
    const fab__cu_pool_t *p = c->pool;
    switch (attribute) {
    /* Pool memory belongs to no context (cuda.h, cuCtxDestroy's note). */
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned int *)data = CU_MEMORYTYPE_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = c->id; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = p->device; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = c->node.key; break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *(void **)data = (void *)c->node.key; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *(size_t *)data = c->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(bool *)data = true; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = (unsigned long long)p->props.handleTypes;
        break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: {
        int dev = p->device;
        (void)fab__cu_current_device(&dev);
        CUmemAccess_flags acc = p->access[dev];
        if (p->read_only && acc == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            acc = CU_MEM_ACCESS_FLAGS_PROT_READ;
        *(unsigned int *)data = acc == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                    ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                : acc == CU_MEM_ACCESS_FLAGS_PROT_READ
                                    ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ
                                    : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
        break;
    }
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = fab__cu_pool_handle(p); break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: *(bool *)data = false; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult fab__cu_pool_free(uintptr_t addr)
{
    fab__cu_pool_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_piece_t *c = fab__cu_chunk_at(addr);
    CUresult r = !c ? CUDA_ERROR_NOT_FOUND : c->freeing ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_ERROR_INVALID_VALUE)
        FAB__CU_CHECK(fab__cu_check_stale_free(FAB__CU_CHECK_POOL, addr, "cuMemFree"));
    if (r == CUDA_SUCCESS) {
        FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_POOL, addr, "cuMemFree"));
        fab__cu_chunk_release(c, &dead);
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return r;
}

/* ---- create / destroy ------------------------------------------------------------- */

static CUresult fab__cu_props_check(const CUmemPoolProps *props, int *dev_out)
{
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.type == CU_MEM_LOCATION_TYPE_HOST ||
        props->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
        return CUDA_ERROR_NOT_SUPPORTED; /* host-resident pools are not emulated */
    if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
        props->location.id >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->win32SecurityAttributes)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof(props->reserved); i++) {
        if (props->reserved[i])
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (props->usage & ~(unsigned)FAB_CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->usage)
        return CUDA_ERROR_NOT_SUPPORTED; /* no decompression engine to emulate */
    const fab__cu_device_t *d = &fab__cu.devices[props->location.id];
    unsigned types = (unsigned)props->handleTypes;
    const unsigned known = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32 |
                           CU_MEM_HANDLE_TYPE_WIN32_KMT | CU_MEM_HANDLE_TYPE_FABRIC;
    if (types & ~known)
        return CUDA_ERROR_INVALID_VALUE;
    if (types & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT))
        return CUDA_ERROR_NOT_SUPPORTED; /* no Windows handles on Linux */
    if (types & ~d->handle_types)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (props->maxSize > d->total_memory)
        return CUDA_ERROR_INVALID_VALUE;
    *dev_out = props->location.id;
    return CUDA_SUCCESS;
}

/* Make and insert a pool (the arena made with no lock held). */
static CUresult fab__cu_pool_make(const CUmemPoolProps *props, int dev, bool is_default,
                                  fab__cu_pool_t **out)
{
    fab__cu_pool_t *p = fab__cu_pool_new(props, dev);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->is_default = is_default;
    CUresult r = fab__cu_arena_make(p);
    if (r == CUDA_SUCCESS) {
        pthread_rwlock_wrlock(&fab__cu.lock);
        r = fab__cu_pool_insert(p);
        pthread_rwlock_unlock(&fab__cu.lock);
    }
    if (r != CUDA_SUCCESS) {
        fab__cu_pool_free_pieces(p);
        fab__cu_pool_teardown(p);
        return r;
    }
    *out = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    FAB__CU_ENTER();
    if (!pool || !poolProps)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    FAB__CU_TRY(fab__cu_props_check(poolProps, &dev));
    fab__cu_pool_t *p;
    FAB__CU_TRY(fab__cu_pool_make(poolProps, dev, false, &p));
    *pool = fab__cu_pool_handle(p);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    FAB__CU_ENTER();
    fab__cu_pool_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    CUresult r = !p || p->is_default ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        fab__cu_idtable_remove(&fab__cu_pools, p->id);
        if (fab__cu_current_pools[p->device] == p)
            fab__cu_current_pools[p->device] = NULL; /* back to the default */
        /* Live allocations keep the rest until they are freed. */
        fab__cu_pool_put(p, &dead);
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return r;
}

/* The default pool of dev, made on first use. */
static CUresult fab__cu_default_pool(int dev, fab__cu_pool_t **out)
{
    pthread_rwlock_rdlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_default_pools[dev];
    pthread_rwlock_unlock(&fab__cu.lock);
    if (p) {
        *out = p;
        return CUDA_SUCCESS;
    }
    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    FAB__CU_TRY(fab__cu_pool_make(&props, dev, true, &p));
    fab__cu_pool_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    if (fab__cu_default_pools[dev]) { /* another thread made it first */
        fab__cu_idtable_remove(&fab__cu_pools, p->id);
        fab__cu_pool_put(p, &dead);
    } else {
        fab__cu_default_pools[dev] = p;
    }
    *out = fab__cu_default_pools[dev];
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_pool_t *p;
    FAB__CU_TRY(fab__cu_default_pool(dev, &p));
    *pool_out = fab__cu_pool_handle(p);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_pool_t *p;
    FAB__CU_TRY(fab__cu_default_pool(dev, &p));
    pthread_rwlock_rdlock(&fab__cu.lock);
    if (fab__cu_current_pools[dev])
        p = fab__cu_current_pools[dev];
    *pool = fab__cu_pool_handle(p);
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    FAB__CU_ENTER_DEVICE(dev);
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    /* An imported pool gives no allocations; a pool serves its own device. */
    CUresult r = !p || p->imported || p->device != dev ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        fab__cu_current_pools[dev] = p;
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

/* ---- attributes, trim, access -------------------------------------------------------- */

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    FAB__CU_ENTER();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (!p) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(const int *)value != 0;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(const cuuint64_t *)value; break;
    /* The high-water marks reset to the current value; only 0 may be set. */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(const cuuint64_t *)value != 0) {
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
            p->reserved_high = p->reserved;
        else
            p->used_high = p->used;
        break;
    default: r = CUDA_ERROR_INVALID_VALUE; break; /* the current counts are read-only */
    }
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    FAB__CU_ENTER();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (!p) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = p->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FAB__CU_ENTER();
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (p)
        fab__cu_release(p, minBytesToKeep);
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static bool fab__cu_access_flags_known(CUmemAccess_flags f)
{
    return f == CU_MEM_ACCESS_FLAGS_PROT_NONE || f == CU_MEM_ACCESS_FLAGS_PROT_READ ||
           f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    FAB__CU_ENTER();
    if (!map && count > 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (!p)
        r = CUDA_ERROR_INVALID_VALUE;
    /* Every descriptor is checked before any applies: a bad one changes
     * nothing. The resident device keeps read-write (the pool is its
     * memory); a read-only import can grant no writes. */
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
        const CUmemAccessDesc *d = &map[i];
        if (d->location.type != CU_MEM_LOCATION_TYPE_DEVICE || d->location.id < 0 ||
            d->location.id >= fab__cu.device_count || !fab__cu_access_flags_known(d->flags))
            r = CUDA_ERROR_INVALID_VALUE;
        else if (d->location.id == p->device && d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (p->read_only && d->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE &&
                 d->location.id != p->device)
            r = CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
        p->access[map[i].location.id] = map[i].flags;
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    FAB__CU_ENTER();
    if (!flags || !location)
        return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || location->id < 0 ||
        location->id >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_pool_t *p = fab__cu_pool_find(memPool);
    if (p)
        *flags = p->access[location->id];
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- allocate / free in stream order ------------------------------------------------- */

/* Carve bytesize bytes from pool (NULL: the current pool of the calling
 * thread's device). */
static CUresult fab__cu_pool_alloc(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                   CUstream hStream)
{
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* The stream's device (its context's), which also checks the stream. */
    CUdevice dev = 0;
    FAB__CU_TRY(FAB__CU_INNER(cuStreamGetDevice(hStream, &dev)));
    if (!pool) {
        fab__cu_pool_t *unused;
        FAB__CU_TRY(fab__cu_default_pool(dev, &unused));
    }
    if (bytesize > SIZE_MAX / 2)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_piece_t *c = calloc(1, sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->size = bytesize;
    c->span = fab__cu_round(bytesize, FAB__CU_POOL_ALIGN);
    CUresult r;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p;
    if (pool) {
        p = fab__cu_pool_find(pool);
        r = p && !p->imported ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    } else {
        p = fab__cu_current_pools[dev] ? fab__cu_current_pools[dev] : fab__cu_default_pools[dev];
        r = CUDA_SUCCESS;
    }
    if (r == CUDA_SUCCESS)
        r = fab__cu_carve(p, c);
    if (r == CUDA_SUCCESS) {
        c->pool = p;
        c->id = fab__cu_alloc_new_id();
        p->refs++;
        fab__cu_tree_insert(&fab__cu_chunks, &c->node);
        *dptr = (CUdeviceptr)c->node.key;
        FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_POOL, c->node.key, bytesize, p->device,
                                        (unsigned)p->props.handleTypes, 0,
                                        pool ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync"));
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FAB__CU_ENTER();
    return fab__cu_pool_alloc(dptr, bytesize, NULL, hStream);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream)
{
    FAB__CU_ENTER();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_pool_alloc(dptr, bytesize, pool, hStream);
}

/* The free, run by the stream's worker when the stream reaches it. */
static void fab__cu_free_run(void *arg)
{
    fab__cu_pool_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_chunk_release(arg, &dead);
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
}

static CUresult fab__cu_free_async(CUdeviceptr dptr, CUstream hStream, unsigned flags)
{
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_piece_t *c = fab__cu_chunk_at((uintptr_t)dptr);
    /* Not pool memory, or a second free of the same allocation. */
    CUresult r = !c || c->freeing ? CUDA_ERROR_INVALID_VALUE : fab__cu_stream_check(hStream);
    if (r == CUDA_SUCCESS)
        c->freeing = true;
    else if (!c || c->freeing)
        FAB__CU_CHECK(fab__cu_check_stale_free(FAB__CU_CHECK_POOL, (uintptr_t)dptr, "cuMemFreeAsync"));
    pthread_rwlock_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        return r;
    /* The program's part ends here, whenever the stream gets to it. */
    FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_POOL, (uintptr_t)dptr, "cuMemFreeAsync"));
    r = fab__cu_stream_submit(hStream, flags, fab__cu_free_run, c, NULL);
    if (r != CUDA_SUCCESS) {
        pthread_rwlock_wrlock(&fab__cu.lock);
        c->freeing = false;
        pthread_rwlock_unlock(&fab__cu.lock);
    }
    return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    FAB__CU_ENTER();
    return fab__cu_free_async(dptr, hStream, 0);
}

/* The per-thread-default-stream names cuda.h maps these calls to under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM (declared in entry.h). */
/* An allocation takes nothing from a stream here, so the per-thread names
 * differ from the plain ones only in the free. */
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return cuMemAllocAsync(dptr, bytesize, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream)
{
    return cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    FAB__CU_ENTER();
    return fab__cu_free_async(dptr, hStream, FAB__CU_SUBMIT_PER_THREAD);
}

/* ---- sharing ----------------------------------------------------------------------- */

CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                          CUmemAllocationHandleType handleType,
                                          unsigned long long flags)
{
    FAB__CU_ENTER();
    if (!handle_out || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
        handleType != CU_MEM_HANDLE_TYPE_FABRIC)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    /* A pool made without the type (a default pool has none) is not
     * shareable that way; an imported pool is not shared on. */
    if (!p || p->imported || !((unsigned)p->props.handleTypes & (unsigned)handleType)) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if (!p->fabric) {
        int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else
            *(int *)handle_out = fd;
    }
    if (r != CUDA_SUCCESS || !p->fabric) {
        pthread_rwlock_unlock(&fab__cu.lock);
        return r;
    }
    /* A FABRIC arena: alloc.c exports its allocation (a round trip to the
     * daemon, so no lock held); the reference keeps the pool meanwhile. */
    p->refs++;
    CUmemGenericAllocationHandle h = p->fabric;
    pthread_rwlock_unlock(&fab__cu.lock);
    r = FAB__CU_INNER(cuMemExportToShareableHandle(handle_out, h, handleType, 0));
    fab__cu_pool_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_put(p, &dead);
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return r;
}

/* Map the arena an import names: fd (borrowed) of an exported arena, or a
 * fabric handle imported through alloc.c. No lock held. */
static CUresult fab__cu_import_arena(fab__cu_pool_t *p, void *handle,
                                     CUmemAllocationHandleType type)
{
    int fd = -1;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        int given = (int)(uintptr_t)handle;
        struct stat st;
        if (given < 0 || fstat(given, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_size < (off_t)(2 * FAB__CU_POOL_ALIGN) ||
            (size_t)st.st_size % FAB__CU_POOL_ALIGN != 0)
            return CUDA_ERROR_INVALID_VALUE;
        /* Only a size-sealed memfd: nobody may shrink it under the mapping
         * (which would fault this process on its next access). */
        if (fab__memfd_check(given, (uint64_t)st.st_size, 0, NULL, 0) != FAB_SUCCESS)
            return CUDA_ERROR_INVALID_VALUE;
        fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            return CUDA_ERROR_OUT_OF_MEMORY;
        int fl = fcntl(fd, F_GETFL);
        p->read_only = fl < 0 || (fl & O_ACCMODE) != O_RDWR;
        p->size = (size_t)st.st_size;
        p->fd = fd;
        return fab__cu_arena_map(p, fd);
    }
    CUmemGenericAllocationHandle h;
    FAB__CU_TRY(FAB__CU_INNER(cuMemImportFromShareableHandle(&h, handle, CU_MEM_HANDLE_TYPE_FABRIC)));
    p->fabric = h;
    size_t size = 0;
    bool ro = false;
    FAB__CU_TRY(fab__cu_arena_fd_of(h, &fd, &size, &ro));
    p->size = size;
    p->read_only = ro;
    CUresult r = size >= 2 * FAB__CU_POOL_ALIGN ? fab__cu_arena_map(p, fd)
                                                 : CUDA_ERROR_INVALID_VALUE;
    close(fd);
    return r;
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                            CUmemAllocationHandleType handleType,
                                            unsigned long long flags)
{
    FAB__CU_ENTER();
    if (!pool_out || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
        !(handleType == CU_MEM_HANDLE_TYPE_FABRIC && handle))
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_pool_t *p = calloc(1, sizeof(*p));
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->fd = -1;
    p->refs = 1;
    p->imported = true;
    p->ipc = true;
    CUresult r = fab__cu_import_arena(p, handle, handleType);
    fab__cu_pool_header_t hdr;
    if (r == CUDA_SUCCESS) {
        memcpy(&hdr, p->base, sizeof(hdr));
        if (memcmp(hdr.magic, FAB__CU_POOL_MAGIC, sizeof(FAB__CU_POOL_MAGIC)) != 0 ||
            hdr.size != p->size)
            r = CUDA_ERROR_INVALID_VALUE; /* memory, but no pool's arena */
    }
    if (r == CUDA_SUCCESS) {
        /* The resident device: the exporter's ordinal where this process has
         * it, else the device of the calling thread's context. */
        int dev = 0;
        if (hdr.device >= 0 && hdr.device < fab__cu.device_count)
            dev = hdr.device;
        else
            (void)fab__cu_current_device(&dev);
        memcpy(p->key, hdr.key, sizeof(p->key));
        p->device = dev;
        p->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p->props.handleTypes = (CUmemAllocationHandleType)hdr.handle_types;
        p->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p->props.location.id = dev;
        p->access[dev] = p->read_only ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                      : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        pthread_rwlock_wrlock(&fab__cu.lock);
        r = fab__cu_pool_insert(p);
        pthread_rwlock_unlock(&fab__cu.lock);
    }
    if (r != CUDA_SUCCESS) {
        fab__cu_pool_teardown(p);
        return r;
    }
    *pool_out = fab__cu_pool_handle(p);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (!shareData_out)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_ptr_export_t e;
    memset(&e, 0, sizeof(e));
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_piece_t *c = fab__cu_chunk_at((uintptr_t)ptr);
    /* The start of a live allocation of a shareable pool of this process. */
    bool ok = c && !c->freeing && !c->pool->imported && c->pool->ipc;
    if (ok) {
        memcpy(e.magic, FAB__CU_PTR_MAGIC, sizeof(FAB__CU_PTR_MAGIC));
        memcpy(e.key, c->pool->key, sizeof(e.key));
        e.offset = c->node.key - (uintptr_t)c->pool->base;
        e.size = c->size;
        e.span = c->span;
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(shareData_out, &e, sizeof(e));
    return CUDA_SUCCESS;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                CUmemPoolPtrExportData *shareData)
{
    FAB__CU_ENTER();
    if (!ptr_out || !shareData)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_ptr_export_t e;
    memcpy(&e, shareData, sizeof(e));
    fab__cu_piece_t *c = calloc(1, sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (!p || !p->imported || memcmp(e.magic, FAB__CU_PTR_MAGIC, sizeof(FAB__CU_PTR_MAGIC)) != 0 ||
        memcmp(e.key, p->key, sizeof(e.key)) != 0) {
        r = CUDA_ERROR_INVALID_VALUE; /* not this pool's pointer */
    } else if (e.offset < FAB__CU_POOL_ALIGN || e.offset >= p->size ||
               e.offset % FAB__CU_POOL_ALIGN != 0 || e.span % FAB__CU_POOL_ALIGN != 0 ||
               e.size == 0 || e.size > e.span || e.span > p->size - e.offset) {
        r = CUDA_ERROR_INVALID_VALUE; /* outside the arena */
    } else {
        /* Imported already and not freed, or overlapping a pointer that is
         * (stale data of a range the exporter has since given out again). */
        uintptr_t at = (uintptr_t)p->base + (uintptr_t)e.offset;
        const fab__cu_piece_t *below =
            (const fab__cu_piece_t *)fab__cu_tree_floor(&fab__cu_chunks, at + e.span - 1);
        if (below && below->node.key + below->span > at)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (mprotect((void *)at, (size_t)e.span, fab__cu_pool_prot(p)) != 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS) {
        c->node.key = (uintptr_t)p->base + e.offset;
        c->size = (size_t)e.size;
        c->span = (size_t)e.span;
        c->pool = p;
        c->id = fab__cu_alloc_new_id();
        p->refs++;
        p->used += c->span;
        fab__cu_note_highs(p);
        fab__cu_tree_insert(&fab__cu_chunks, &c->node);
        *ptr_out = (CUdeviceptr)c->node.key;
        FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_POOL, c->node.key, c->size, p->device,
                                        (unsigned)p->props.handleTypes, 0, __func__));
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}
