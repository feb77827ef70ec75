/* Stream-ordered memory pools, their arenas and their allocator: making,
 * mapping and dropping an arena, carving allocations from it and giving
 * them back, releasing pages, and the queries memory.c makes about pool
 * memory (pool.h) for copies, pointer attributes and cuMemFree. The entry
 * points are poolapi.c's (pools, attributes, access, allocating and freeing
 * in stream order) and poolshare.c's (sharing); the types the three share
 * are pool_impl.h's.
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
 * Locking (docs/design.md): everything here is guarded by fab__cu.lock; the
 * fabric client is reached only through alloc.c's entry points, called with
 * no lock held; arenas are made and unmapped with no lock held. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/pool.h"
#include "src/cuda/pool_impl.h"
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
#include <unistd.h>

#include "src/common/memfd.h"

/* maxSize 0 ("a system dependent value"): the device's memory, but no more
 * than this much address space per pool, which untouched costs nothing. */
#define FAB__CU_POOL_DEFAULT_MAX ((uint64_t)32 << 30)
/* A FABRIC arena is one allocation the daemon counts whole from the start:
 * with maxSize 0 it is this big (or a quarter of the device's memory). */
#define FAB__CU_POOL_FABRIC_DEFAULT ((uint64_t)1 << 30)

/* Guarded by fab__cu.lock. */
fab__cu_idtable_t fab__cu_pools; /* id -> live pool (not destroyed) */
static uint64_t fab__cu_next_pool_id = 0x7000;
fab__cu_tree_t fab__cu_chunks; /* live allocations and imported pointers */
fab__cu_pool_t *fab__cu_default_pools[FAB__CU_MAX_DEVICES];
fab__cu_pool_t *fab__cu_current_pools[FAB__CU_MAX_DEVICES]; /* NULL: the default */

size_t fab__cu_pool_align(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 4096 ? (size_t)page : 4096;
}

/* n rounded up to a multiple of to. */
size_t fab__cu_round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

CUmemoryPool fab__cu_pool_handle(const fab__cu_pool_t *p)
{
    return (CUmemoryPool)(uintptr_t)p->id;
}

/* The live pool a handle names, or NULL. Caller holds the lock. */
fab__cu_pool_t *fab__cu_pool_find(CUmemoryPool h)
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

fab__cu_piece_t *fab__cu_chunk_at(uintptr_t addr)
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

void fab__cu_pool_teardown(fab__cu_pool_t *dead)
{
    while (dead) {
        fab__cu_pool_t *p = dead;
        dead = p->next;
        fab__cu_arena_drop(p);
        free(p);
    }
}

/* The protection of p's pages that are given out. */
int fab__cu_pool_prot(const fab__cu_pool_t *p)
{
    return p->read_only ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* Map fd (a dup the caller closes) as p's arena; no lock held. Only the
 * header page is accessible (read-write for the pool's maker, read-only for
 * an importer): the rest opens range by range as it is given out, so that
 * nothing that reads the process's readable memory (a debugger's core dump,
 * valgrind's leak check) touches, and so fills, the sparse arena. */
CUresult fab__cu_arena_map(fab__cu_pool_t *p, int fd)
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
CUresult fab__cu_arena_fd_of(CUmemGenericAllocationHandle h, int *fd_out, size_t *size_out,
                             bool *read_only_out)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(h);
    if (a) {
        int fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
        r = fd >= 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        *fd_out = fd;
        *size_out = a->size;
        *read_only_out = a->read_only;
    }
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* Make p's arena of p->size bytes (no lock held) and write its header. */
CUresult fab__cu_arena_make(fab__cu_pool_t *p)
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
fab__cu_pool_t *fab__cu_pool_new(const CUmemPoolProps *props, int dev)
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
    size_t size = fab__cu_round_up((size_t)want, FAB__CU_POOL_ALIGN) + FAB__CU_POOL_ALIGN;
    if (types & CU_MEM_HANDLE_TYPE_FABRIC)
        size = fab__cu_round_up(size, (size_t)d->granularity); /* cuMemCreate's rule */
    p->size = size;
    all->node.key = FAB__CU_POOL_ALIGN; /* the header's page is never given out */
    all->size = size - FAB__CU_POOL_ALIGN;
    fab__cu_tree_insert(&p->free, &all->node);
    return p;
}

void fab__cu_pool_free_pieces(fab__cu_pool_t *p)
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
CUresult fab__cu_pool_insert(fab__cu_pool_t *p)
{
    p->id = fab__cu_next_pool_id;
    fab__cu_next_pool_id += 0x10;
    return fab__cu_idtable_insert(&fab__cu_pools, p->id, p) == 0 ? CUDA_SUCCESS
                                                                 : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Drop a reference; the last one uncounts the pool's bytes and pushes it on
 * *dead, for fab__cu_pool_teardown after unlocking. Lock held for writing. */
void fab__cu_pool_put(fab__cu_pool_t *p, fab__cu_pool_t **dead)
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

void fab__cu_note_highs(fab__cu_pool_t *p)
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
CUresult fab__cu_pool_carve(fab__cu_pool_t *p, fab__cu_piece_t *c)
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
void fab__cu_pool_trim_to(fab__cu_pool_t *p, uint64_t keep)
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
void fab__cu_chunk_release(fab__cu_piece_t *c, fab__cu_pool_t **dead)
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
            fab__cu_pool_trim_to(p, p->threshold);
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
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_piece_t *c = fab__cu_chunk_at(addr);
    CUresult r = !c ? CUDA_ERROR_NOT_FOUND : c->freeing ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_ERROR_INVALID_VALUE)
        FAB__CU_CHECK(fab__cu_check_stale_free(FAB__CU_CHECK_POOL, addr, "cuMemFree"));
    if (r == CUDA_SUCCESS) {
        FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_POOL, addr, "cuMemFree"));
        fab__cu_chunk_release(c, &dead);
    }
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return r;
}

