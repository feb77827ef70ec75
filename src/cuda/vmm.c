/* Virtual address ranges, mappings and access: cuMemAddressReserve,
 * cuMemAddressFree, cuMemMap, cuMemUnmap, cuMemSetAccess, cuMemGetAccess,
 * the mapping and pointer attributes of VMM memory (memory.c answers
 * cuMemGetAddressRange and cuPointerGetAttribute), cuMemRetainAllocationHandle
 * (which finds an allocation by a mapped address), and the range check that
 * copies and memsets use.
 *
 * A reservation is an anonymous PROT_NONE mapping; CUdeviceptr values are its
 * addresses. cuMemMap puts the allocation's memfd there (MAP_SHARED |
 * MAP_FIXED) still PROT_NONE, cuMemSetAccess mprotects it, cuMemUnmap puts the
 * PROT_NONE mapping back once the context's queued work ended (cuda.h: it
 * "exhibits synchronous behavior"; NCCL's abort unmaps as a kernel leaves).
 * Every mapping and its access per device is recorded: a call on a range not
 * (wholly) mapped, or a copy without its access, gets CUDA's error, no fault.
 *
 * A range's life (docs/design.md, "map, then access", "teardown"): Reserve ─▶
 * Map ─▶ SetAccess ─▶ use ─▶ Unmap (whole mappings) ─▶ AddressFree (none mapped).
 *
 * The reservations are one AVL tree keyed by base, and each reservation's
 * pieces another, keyed by address (tree.h): finding the reservation and the
 * piece that hold an address, mapping and unmapping cost O(log n) in the
 * pieces live, and walking from a piece to its neighbours O(1). */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"
#include "src/cuda/tree.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/common/log.h"

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
/* The largest alignment a kernel gives large anonymous mappings by itself:
 * a huge page (cuMemAddressReserve tries the size alone up to it). */
#define FAB__CU_EXACT_ALIGN_MAX (2u * 1024 * 1024)

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

/* Guarded by fab__cu.lock. */
static fab__cu_tree_t fab__cu_ranges;
static uint64_t fab__cu_next_map_id = 1;

static size_t fab__cu_page(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* ---- the range table ---------------------------------------------------- */

static fab__cu_range_t *fab__cu_range_find(uintptr_t addr)
{
    fab__cu_range_t *r = (fab__cu_range_t *)fab__cu_tree_floor(&fab__cu_ranges, addr);
    return r && addr - r->base < r->size ? r : NULL;
}

/* ---- owned ranges (module globals) ------------------------------------------ */

/* Guarded by fab__cu.lock. node.key is the base. */
typedef struct fab__cu_owned {
    fab__cu_tnode_t node;
    size_t size;
} fab__cu_owned_t;

static fab__cu_tree_t fab__cu_owned_ranges;

static const fab__cu_owned_t *fab__cu_owned_find(uintptr_t addr)
{
    const fab__cu_owned_t *o = (const fab__cu_owned_t *)fab__cu_tree_floor(&fab__cu_owned_ranges, addr);
    return o && addr - o->node.key < o->size ? o : NULL;
}

CUresult fab__cu_owned_add(uintptr_t base, size_t size)
{
    fab__cu_owned_t *o = calloc(1, sizeof(*o));
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    o->node.key = base;
    o->size = size;
    fab__cu_tree_insert(&fab__cu_owned_ranges, &o->node);
    return CUDA_SUCCESS;
}

void fab__cu_owned_remove(uintptr_t base)
{
    fab__cu_owned_t *o = (fab__cu_owned_t *)fab__cu_owned_find(base);
    if (o && o->node.key == base) {
        fab__cu_tree_remove(&fab__cu_owned_ranges, &o->node);
        free(o);
    }
}

bool fab__cu_reserved(uintptr_t addr)
{
    return fab__cu_range_find(addr) != NULL || fab__cu_owned_find(addr) != NULL;
}

static uintptr_t fab__cu_piece_end(const fab__cu_piece_t *p)
{
    return p->node.key + p->size;
}

/* A piece record for range r: its own room if free, else a new one; and
 * back. */
static fab__cu_piece_t *fab__cu_piece_new(fab__cu_range_t *r)
{
    if (r->own_used)
        return malloc(sizeof(fab__cu_piece_t));
    r->own_used = true;
    return &r->own;
}

static void fab__cu_piece_free(fab__cu_range_t *r, fab__cu_piece_t *p)
{
    if (p == &r->own)
        r->own_used = false;
    else
        free(p);
}

static fab__cu_piece_t *fab__cu_piece_next(const fab__cu_piece_t *p)
{
    return (fab__cu_piece_t *)p->node.next;
}

static fab__cu_piece_t *fab__cu_piece_prev(const fab__cu_piece_t *p)
{
    return (fab__cu_piece_t *)p->node.prev;
}

/* The piece of r that holds addr, or NULL. */
static fab__cu_piece_t *fab__cu_piece_holding(const fab__cu_range_t *r, uintptr_t addr)
{
    fab__cu_piece_t *p = (fab__cu_piece_t *)fab__cu_tree_floor(&r->pieces, addr);
    return p && addr < fab__cu_piece_end(p) ? p : NULL;
}

/* Whether [addr, addr+len) lies in r and every byte of it is mapped; on
 * success *first_out / *last_out are the first and last pieces that cover it
 * (a walk from one to the other by fab__cu_piece_next). */
static bool fab__cu_covered(const fab__cu_range_t *r, uintptr_t addr, size_t len,
                            fab__cu_piece_t **first_out, fab__cu_piece_t **last_out)
{
    if (!r || len == 0 || addr < r->base || len > r->size || addr - r->base > r->size - len)
        return false;
    fab__cu_piece_t *p = fab__cu_piece_holding(r, addr);
    if (!p)
        return false;
    *first_out = p;
    uintptr_t end = addr + len;
    while (fab__cu_piece_end(p) < end) {
        fab__cu_piece_t *next = fab__cu_piece_next(p);
        if (!next || next->node.key != fab__cu_piece_end(p))
            return false; /* a hole */
        p = next;
    }
    *last_out = p;
    return true;
}

CUresult fab__cu_range_check(uintptr_t addr, size_t len, int device, bool write)
{
    if (len == 0)
        return CUDA_SUCCESS;
    const fab__cu_owned_t *o = fab__cu_owned_find(addr);
    if (o) /* driver-owned memory: readable and writable, all of it or nothing */
        return len <= o->size - (addr - o->node.key) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    fab__cu_range_t *r = fab__cu_range_find(addr);
    fab__cu_piece_t *first, *last;
    if (!fab__cu_covered(r, addr, len, &first, &last))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bit = 1ull << device;
    for (fab__cu_piece_t *p = first;; p = fab__cu_piece_next(p)) {
        if (!((write ? p->writers : p->readers) & bit))
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        if (p == last)
            return CUDA_SUCCESS;
    }
}

/* Split p at address at (strictly inside it) into p and tail, a piece the
 * caller allocated: the split cannot fail. Each piece holds a reference to its
 * allocation: tail takes its own. */
static void fab__cu_piece_split(fab__cu_range_t *r, fab__cu_piece_t *p, uintptr_t at,
                                fab__cu_piece_t *tail)
{
    *tail = *p;
    size_t head = at - p->node.key;
    p->size = head;
    tail->node.key = at;
    tail->size -= head;
    tail->alloc_offset += head;
    fab__cu_alloc_get(tail->alloc);
    fab__cu_tree_insert(&r->pieces, &tail->node);
}

/* ---- reserve / free ------------------------------------------------------ */

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    FAB__CU_ENTER();
    size_t page = fab__cu_page();
    if (!ptr || size == 0 || size % page != 0 || flags != 0 || addr % page != 0 ||
        (alignment & (alignment - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A reservation does not say which device's memory will be mapped into
     * it, and cuMemMap needs a multiple of that device's granularity: the
     * largest (kept by cuInit) fits every device. Never below it, so that
     * cuMemMap at the base stays legal; a larger alignment is honoured. */
    size_t align = fab__cu.granularity_max > page ? (size_t)fab__cu.granularity_max : page;
    if (alignment > align)
        align = alignment;
    if (size > SIZE_MAX - align)
        return CUDA_ERROR_OUT_OF_MEMORY;

    /* Not calloc, which glibc never serves from the thread's cache of freed
     * blocks (docs/cuda.md, "Performance of an import"). */
    fab__cu_range_t *range = malloc(sizeof(*range));
    if (!range)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *range = (fab__cu_range_t){.size = 0};
    const int mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void *m = MAP_FAILED;
    if (addr && addr % align == 0) {
        m = mmap((void *)(uintptr_t)addr, size, PROT_NONE, mflags | MAP_FIXED_NOREPLACE, -1, 0);
        if (m != MAP_FAILED && (uintptr_t)m != addr) {
            munmap(m, size); /* an old kernel took the hint as a hint */
            m = MAP_FAILED;
        }
        if (m != MAP_FAILED) {
            range->map_base = range->base = (uintptr_t)m;
            range->map_len = size;
        }
    }
    /* A kernel that places large anonymous mappings on huge-page boundaries
     * (transparent huge pages not "never") gives an aligned base for the
     * size alone: then the reservation is exactly it, and cuMemMap of the
     * whole replaces one mapping instead of splitting one in three. Once a
     * base comes back unaligned, no more tries: each costs an munmap. */
    static int fab__cu_exact_misses;
    if (m == MAP_FAILED && align <= FAB__CU_EXACT_ALIGN_MAX &&
        !__atomic_load_n(&fab__cu_exact_misses, __ATOMIC_RELAXED)) {
        m = mmap(NULL, size, PROT_NONE, mflags, -1, 0);
        if (m != MAP_FAILED && (uintptr_t)m % align != 0) {
            munmap(m, size);
            m = MAP_FAILED;
            __atomic_store_n(&fab__cu_exact_misses, 1, __ATOMIC_RELAXED);
        }
        if (m != MAP_FAILED) {
            range->map_base = range->base = (uintptr_t)m;
            range->map_len = size;
        }
    }
    if (m == MAP_FAILED) {
        /* Over-reserve and keep the slack: one system call, not three. */
        m = mmap(NULL, size + align, PROT_NONE, mflags, -1, 0);
        if (m == MAP_FAILED) {
            free(range);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        range->map_base = (uintptr_t)m;
        range->map_len = size + align;
        range->base = (range->map_base + align - 1) & ~(uintptr_t)(align - 1);
    }
    range->size = size;

    range->node.key = range->base;

    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_tree_insert(&fab__cu_ranges, &range->node);
    pthread_rwlock_unlock(&fab__cu.lock);
    *ptr = (CUdeviceptr)range->base;
    FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_RESERVE, range->base, size, -1, 0, 0, __func__));
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FAB__CU_ENTER();
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find((uintptr_t)ptr);
    if (!range || range->base != (uintptr_t)ptr || range->size != size) {
        r = CUDA_ERROR_INVALID_VALUE; /* not what cuMemAddressReserve returned */
    } else if (range->pieces.count > 0) {
        r = CUDA_ERROR_INVALID_VALUE; /* teardown order: unmap before free */
        FAB__CU_CHECK(fab__cu_check_free_mapped(range->base, size, __func__));
    } else {
        FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_RESERVE, range->base, __func__));
        fab__cu_tree_remove(&fab__cu_ranges, &range->node);
        munmap((void *)range->map_base, range->map_len);
        free(range);
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

/* ---- map / unmap ----------------------------------------------------------- */

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    FAB__CU_ENTER();
    if (flags != 0 || offset != 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A multicast object maps once its team is complete (cuda.h). */
    if (fab__cu_alloc_mc_hooks) {
        CUresult waited = fab__cu_alloc_mc_hooks->wait_team(handle);
        if (waited != CUDA_SUCCESS)
            return waited;
    }
    uintptr_t addr = (uintptr_t)ptr;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(handle);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (!a)
        FAB__CU_CHECK(fab__cu_check_stale_handle(handle, __func__));
    if (!a || !range)
        goto out;
    uint64_t gran = fab__cu.devices[a->device].granularity;
    if (addr % gran != 0 || size % gran != 0 || size > a->size)
        goto out;
    if (size > range->size || addr - range->base > range->size - size)
        goto out; /* runs past the reservation */
    /* The last piece starting inside the new mapping's span must end before
     * it: only unmapped parts of a reservation may be mapped. */
    const fab__cu_piece_t *below =
        (const fab__cu_piece_t *)fab__cu_tree_floor(&range->pieces, addr + size - 1);
    if (below && fab__cu_piece_end(below) > addr)
        goto out;
    fab__cu_piece_t *piece = fab__cu_piece_new(range);
    if (!piece) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (mmap((void *)addr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, 0) == MAP_FAILED) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto free_piece;
    }
    *piece = (fab__cu_piece_t){.node = {.key = addr},
                               .size = size,
                               .alloc = a,
                               .map_id = fab__cu_next_map_id++};
    fab__cu_tree_insert(&range->pieces, &piece->node);
    fab__cu_alloc_get(a); /* the new piece's */
    FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_MAP, addr, size, a->device,
                                    (unsigned)a->prop.requestedHandleTypes, handle, __func__));
    pthread_rwlock_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;

free_piece:
    fab__cu_piece_free(range, piece);
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FAB__CU_ENTER();
    fab__cu_free_waits(); /* as cuMemFree (the top comment) */
    uintptr_t addr = (uintptr_t)ptr;
    fab__cu_alloc_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    fab__cu_piece_t *first, *last;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (!fab__cu_covered(range, addr, size, &first, &last))
        goto out;
    /* Whole mappings only: the range may not start or end inside one. */
    if (first->node.key != addr || fab__cu_piece_end(last) != addr + size)
        goto out;
    const fab__cu_piece_t *before = fab__cu_piece_prev(first), *after = fab__cu_piece_next(last);
    if ((before && before->map_id == first->map_id) || (after && after->map_id == last->map_id))
        goto out;
    if (mmap((void *)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
             -1, 0) == MAP_FAILED) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (fab__cu_piece_t *p = first, *stop = fab__cu_piece_next(last), *next; p != stop; p = next) {
        next = fab__cu_piece_next(p);
        fab__cu_tree_remove(&range->pieces, &p->node);
        fab__cu_alloc_put(p->alloc, &dead);
        fab__cu_piece_free(range, p);
    }
    FAB__CU_CHECK(fab__cu_check_unmap(addr, size, __func__));
    r = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead); /* may talk to the daemon: not under the lock */
    return r;
}

/* ---- access ------------------------------------------------------------------- */

/* The location of an access descriptor: a device (*device_out), or the
 * host (*device_out = -1). The host is one accessor whichever host type
 * names it: HOST, HOST_NUMA (whose id cuda.h says is ignored here) or
 * HOST_NUMA_CURRENT, since every CPU of the emulated node maps memory
 * alike. */
static CUresult fab__cu_access_location(const CUmemLocation *loc, int *device_out)
{
    if (loc->type == CU_MEM_LOCATION_TYPE_HOST || loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
        loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) {
        *device_out = -1;
        return CUDA_SUCCESS;
    }
    if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->id < 0 || loc->id >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *device_out = loc->id;
    return CUDA_SUCCESS;
}

/* A mapping's protection is the union of every accessor's: the host's and
 * each device's, since all of them are this process's CPU. */
static int fab__cu_prot_of(uint64_t readers, uint64_t writers, unsigned host)
{
    if (writers || (host & FAB__CU_HOST_WRITE))
        return PROT_READ | PROT_WRITE;
    return readers || (host & FAB__CU_HOST_READ) ? PROT_READ : PROT_NONE;
}

/* A cuMemSetAccess request: the devices it names lose their access bits, then
 * gain set_r / set_w; when host_named, the host's access becomes host_set.
 * Identity (all zero) describes the access as it is. */
typedef struct fab__cu_access_change {
    uint64_t clear, set_r, set_w;
    bool host_named;
    unsigned host_set;
} fab__cu_access_change_t;

static unsigned fab__cu_piece_host(const fab__cu_piece_t *p, const fab__cu_access_change_t *c)
{
    return c->host_named ? c->host_set : p->host;
}

static int fab__cu_piece_prot(const fab__cu_piece_t *p, const fab__cu_access_change_t *c)
{
    return fab__cu_prot_of((p->readers & ~c->clear) | c->set_r,
                           (p->writers & ~c->clear) | c->set_w, fab__cu_piece_host(p, c));
}

/* mprotect pieces first..last to their protection under change c, one call
 * per run of pieces that share it. On failure returns the errno and sets
 * *done_out to the last piece of the run that failed: one mprotect over
 * several mappings may have changed some of them before it failed. */
static int fab__cu_protect(fab__cu_piece_t *first, fab__cu_piece_t *last,
                           const fab__cu_access_change_t *c, fab__cu_piece_t **done_out)
{
    for (fab__cu_piece_t *p = first;;) {
        fab__cu_piece_t *run_end = p;
        int prot = fab__cu_piece_prot(p, c);
        while (run_end != last && fab__cu_piece_prot(fab__cu_piece_next(run_end), c) == prot)
            run_end = fab__cu_piece_next(run_end);
        uintptr_t a0 = p->node.key, a1 = fab__cu_piece_end(run_end);
        if (mprotect((void *)a0, a1 - a0, prot) != 0) {
            *done_out = run_end;
            return errno;
        }
        if (run_end == last)
            return 0;
        p = fab__cu_piece_next(run_end);
    }
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    FAB__CU_ENTER();
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_access_change_t change = {0, 0, 0, false, 0};
    for (size_t k = 0; k < count; k++) {
        int dev;
        FAB__CU_TRY(fab__cu_access_location(&desc[k].location, &dev));
        if (dev < 0) {
            change.host_named = true;
            switch (desc[k].flags) {
            case CU_MEM_ACCESS_FLAGS_PROT_NONE: change.host_set = 0; break;
            case CU_MEM_ACCESS_FLAGS_PROT_READ: change.host_set = FAB__CU_HOST_READ; break;
            case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
                change.host_set = FAB__CU_HOST_READ | FAB__CU_HOST_WRITE;
                break;
            default: return CUDA_ERROR_INVALID_VALUE;
            }
            continue;
        }
        uint64_t bit = 1ull << dev;
        change.clear |= bit;
        change.set_r &= ~bit;
        change.set_w &= ~bit;
        switch (desc[k].flags) {
        case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
        case CU_MEM_ACCESS_FLAGS_PROT_READ: change.set_r |= bit; break;
        case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
            change.set_r |= bit;
            change.set_w |= bit;
            break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    uintptr_t addr = (uintptr_t)ptr;
    fab__cu_piece_t *spare[2] = {NULL, NULL}; /* for the splits at the edges */
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    fab__cu_piece_t *first, *last;
    CUresult r = CUDA_ERROR_INVALID_VALUE; /* not a fully mapped range */
    if (!fab__cu_covered(range, addr, size, &first, &last))
        goto out;
    uint64_t gran = fab__cu.devices[first->alloc->device].granularity;
    if (addr % gran != 0 || size % gran != 0)
        goto out;
    bool host_w = change.host_named && (change.host_set & FAB__CU_HOST_WRITE);
    for (fab__cu_piece_t *p = first;; p = fab__cu_piece_next(p)) {
        if ((change.set_w || host_w) && p->alloc->read_only) {
            r = CUDA_ERROR_NOT_PERMITTED; /* a read-only fd, or the exporter granted less */
            goto out;
        }
        /* "Users cannot specify HOST_NUMA accessibility for allocations
         * created on other location types" (cuda.h): device memory made
         * here takes no host descriptor. Imported memory may be either. */
        if (change.host_named && p->alloc->host_numa < 0 && !p->alloc->imported)
            goto out;
        if (p == last)
            break;
    }
    /* Access may be set on part of a mapping: split at the edges. The new
     * pieces are allocated first, so that nothing has changed if that fails.
     * A split keeps the access on both halves, so it may stay if what follows
     * fails. */
    bool split_head = first->node.key < addr, split_tail = fab__cu_piece_end(last) > addr + size;
    if ((split_head && !(spare[0] = malloc(sizeof(fab__cu_piece_t)))) ||
        (split_tail && !(spare[1] = malloc(sizeof(fab__cu_piece_t))))) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (split_head) {
        fab__cu_piece_split(range, first, addr, spare[0]);
        if (last == first)
            last = spare[0];
        first = spare[0];
        spare[0] = NULL;
    }
    if (split_tail) {
        fab__cu_piece_split(range, last, addr + size, spare[1]);
        spare[1] = NULL;
    }
    /* All or nothing: the pages change first and the records only once every
     * page did, so a failure leaves both as they were and a copy never trusts
     * a grant the pages do not have. */
    fab__cu_piece_t *done = first;
    int err = fab__cu_protect(first, last, &change, &done);
    if (err != 0) {
        const fab__cu_access_change_t as_is = {0, 0, 0, false, 0};
        fab__cu_piece_t *undone;
        if (fab__cu_protect(first, done, &as_is, &undone) != 0) {
            /* Each page now has the old protection or the new: record only
             * what both grant, so that no copy can fault. */
            fab__log(FAB__LOG_ERROR, "cuMemSetAccess: cannot restore the protection of "
                                     "[%#lx, %#lx); keeping what both grant",
                     (unsigned long)first->node.key, (unsigned long)fab__cu_piece_end(done));
            for (fab__cu_piece_t *p = first;; p = fab__cu_piece_next(p)) {
                p->readers &= ~change.clear | change.set_r;
                p->writers &= ~change.clear | change.set_w;
                if (change.host_named)
                    p->host &= change.host_set;
                if (p == done)
                    break;
            }
        }
        r = err == EACCES || err == EPERM ? CUDA_ERROR_NOT_PERMITTED : CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (fab__cu_piece_t *p = first;; p = fab__cu_piece_next(p)) {
        p->readers = (p->readers & ~change.clear) | change.set_r;
        p->writers = (p->writers & ~change.clear) | change.set_w;
        p->host = fab__cu_piece_host(p, &change);
        if (p == last)
            break;
    }
    r = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    free(spare[0]);
    free(spare[1]);
    return r;
}

/* The piece that holds addr, in whichever reservation; its range in
 * *range_out (when not NULL). */
static const fab__cu_piece_t *fab__cu_piece_at(uintptr_t addr, const fab__cu_range_t **range_out)
{
    const fab__cu_range_t *range = fab__cu_range_find(addr);
    const fab__cu_piece_t *p = range ? fab__cu_piece_holding(range, addr) : NULL;
    if (p && range_out)
        *range_out = range;
    return p;
}

/* The whole cuMemMap mapping p belongs to, across pieces split by
 * cuMemSetAccess: [*base_out, *base_out + *size_out). */
static void fab__cu_mapping_of(const fab__cu_piece_t *p, uintptr_t *base_out, size_t *size_out)
{
    const fab__cu_piece_t *lo = p, *hi = p, *q;
    while ((q = fab__cu_piece_prev(lo)) && q->map_id == p->map_id)
        lo = q;
    while ((q = fab__cu_piece_next(hi)) && q->map_id == p->map_id)
        hi = q;
    *base_out = lo->node.key;
    *size_out = fab__cu_piece_end(hi) - lo->node.key;
}

CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (!flags || !location)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    FAB__CU_TRY(fab__cu_access_location(location, &dev));
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)ptr, NULL);
    if (p && dev < 0) {
        *flags = (p->host & FAB__CU_HOST_WRITE)  ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                 : (p->host & FAB__CU_HOST_READ) ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                                 : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    } else if (p) {
        uint64_t bit = 1ull << dev;
        *flags = (p->writers & bit)   ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                 : (p->readers & bit) ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                      : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The mapping that holds addr, for memory.c's cuMemGetAddressRange (NCCL
 * frees cuMem memory by asking it); the caller holds fab__cu.lock. */
bool fab__cu_vmm_mapping(uintptr_t addr, uintptr_t *base_out, size_t *size_out)
{
    const fab__cu_piece_t *p = fab__cu_piece_at(addr, NULL);
    if (p)
        fab__cu_mapping_of(p, base_out, size_out);
    return p != NULL;
}

/* ---- pointer attributes ---------------------------------------------------------- */

/* An attribute of VMM memory, for memory.c's cuPointerGetAttribute(s);
 * the caller holds fab__cu.lock. */
CUresult fab__cu_vmm_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    const fab__cu_range_t *range = NULL;
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)ptr, &range);
    if (attribute == CU_POINTER_ATTRIBUTE_MAPPED && fab__cu_range_find((uintptr_t)ptr)) {
        *(bool *)data = p != NULL;
        return CUDA_SUCCESS;
    }
    if (!p)
        return CUDA_ERROR_INVALID_VALUE; /* not memory the driver knows */
    const fab__cu_alloc_t *a = p->alloc;
    int dev = a->device; /* with no current context, the memory's own */
    (void)fab__cu_current_device(&dev);
    /* Host-resident memory reads as host memory, as cuMemHostAlloc's does:
     * its host pointer is its address (unified addressing), and its device
     * ordinal the device current at its creation. */
    bool host = a->host_numa >= 0;
    switch (attribute) {
    /* VMM memory belongs to no context. */
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(bool *)data = true; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->device; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = range->base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = range->size; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = (unsigned long long)a->prop.requestedHandleTypes;
        break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: {
        uint64_t bit = 1ull << dev;
        *(unsigned int *)data = (p->writers & bit) ? 3u : (p->readers & bit) ? 1u : 0u;
        break;
    }
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: {
        uintptr_t base;
        size_t size;
        fab__cu_mapping_of(p, &base, &size);
        if (attribute == CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR)
            *(void **)data = (void *)base;
        else
            *(size_t *)data = size;
        break;
    }
    /* The allocation's handle id: unique, never reused (alloc.c), and shared
     * by every mapping of the same physical memory. */
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = a->id; break;
    /* cuIpcGetMemHandle takes cuMemAlloc memory only; VMM memory is shared
     * through its shareable handles. */
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host)
            return CUDA_ERROR_INVALID_VALUE; /* device memory has no host address */
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult fab__cu_vmm_backing(uintptr_t addr, size_t len, int *fd_out, size_t *offset_out)
{
    fab__cu_range_t *range = fab__cu_range_find(addr);
    fab__cu_piece_t *first, *last;
    if (!fab__cu_covered(range, addr, len, &first, &last))
        return CUDA_ERROR_INVALID_VALUE; /* "must be fully mapped" (cuda.h) */
    for (fab__cu_piece_t *p = first; p != last;) {
        fab__cu_piece_t *next = fab__cu_piece_next(p);
        if (next->alloc != p->alloc || next->alloc_offset != p->alloc_offset + p->size)
            return CUDA_ERROR_NOT_SUPPORTED;
        p = next;
    }
    *fd_out = first->alloc->fd;
    *offset_out = first->alloc_offset + (addr - first->node.key);
    return CUDA_SUCCESS;
}

/* ---- handles by address ------------------------------------------------------------ */

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    FAB__CU_ENTER();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)addr, NULL);
    if (p) {
        fab__cu_alloc_get_handle(p->alloc);
        *handle = p->alloc->id;
        FAB__CU_CHECK(fab__cu_check_retain(p->alloc->id));
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* not a mapped address */
}
