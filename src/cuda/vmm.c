/* Virtual address ranges and mappings: cuMemAddressReserve,
 * cuMemAddressFree, cuMemMap, cuMemUnmap, and the range check that copies
 * and memsets use (access and the queries are vmm_access.c's).
 *
 * A reservation is an anonymous PROT_NONE mapping; CUdeviceptr values are its
 * addresses. cuMemMap puts the allocation's memfd there (MAP_SHARED |
 * MAP_FIXED) still PROT_NONE, cuMemSetAccess mprotects it, cuMemUnmap puts the
 * anonymous PROT_NONE mapping back once the context's queued work ended
 * (cuda.h: it "exhibits synchronous behavior"; NCCL's abort unmaps as a
 * kernel leaves). Every mapping and its access per device is
 * recorded, so that a call on a range that is not (wholly) mapped, or a copy
 * without the access it needs, is answered with CUDA's error instead of a
 * fault.
 *
 * Lifecycle of a range (docs/design.md, "map, then access", "teardown"):
 *   cuMemAddressReserve ─▶ cuMemMap ─▶ cuMemSetAccess ─▶ (use)
 *     ─▶ cuMemUnmap (whole mappings only) ─▶ cuMemAddressFree (nothing mapped)
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
#include "src/cuda/vmm_impl.h"
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

/* The largest alignment a kernel gives large anonymous mappings by itself:
 * a huge page (cuMemAddressReserve tries the size alone up to it). */
#define FAB__CU_EXACT_ALIGN_MAX (2u * 1024 * 1024)

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

fab__cu_range_t *fab__cu_range_find(uintptr_t addr)
{
    fab__cu_range_t *r = (fab__cu_range_t *)fab__cu_tree_floor(&fab__cu_ranges, addr);
    return r && addr - r->base < r->size ? r : NULL;
}

/* ---- freed reservations kept for the next ------------------------------- */

/* cuMemAddressFree keeps the last FAB__CU_SPARES_MAX ranges it frees, each
 * still its anonymous PROT_NONE mapping and its record, and
 * cuMemAddressReserve takes one of the size and alignment it is asked for
 * before it makes a mapping: a freed range is the driver's address space
 * again, as a GPU's is, and the cycle that pools and importers repeat
 * (reserve, map, unmap, free) makes no mmap and no munmap of its own. A
 * spare holds address space only: nothing can be mapped in it (free takes
 * only ranges with nothing mapped), no call finds it (it is out of the
 * range tree, so every call on its addresses answers as on a freed range),
 * and touching it faults as before. Asking for its address by name drops
 * it. Guarded by fab__cu.lock. */
#define FAB__CU_SPARES_MAX 8
#define FAB__CU_SPARE_BYTES_MAX ((size_t)1 << 32) /* the largest range kept */

static fab__cu_range_t *fab__cu_spares[FAB__CU_SPARES_MAX]; /* oldest first */
static unsigned fab__cu_spare_count;

static void fab__cu_range_unmap(fab__cu_range_t *range)
{
    munmap((void *)range->map_base, range->map_len);
    free(range);
}

/* Spare k, taken out of the spares (the newer ones move down). */
static fab__cu_range_t *fab__cu_spare_remove(unsigned k)
{
    fab__cu_range_t *r = fab__cu_spares[k];
    fab__cu_spare_count--;
    for (unsigned j = k; j < fab__cu_spare_count; j++)
        fab__cu_spares[j] = fab__cu_spares[j + 1];
    return r;
}

static void fab__cu_spare_drop(unsigned k)
{
    fab__cu_range_unmap(fab__cu_spare_remove(k));
}

/* The newest spare of size bytes on an align boundary (at want, when want
 * is not 0), taken out of the spares; NULL when none fits. With want, the
 * spares that overlap [want, want+size) and do not fit are dropped, so that
 * the address can be had. */
static fab__cu_range_t *fab__cu_spare_take(size_t size, size_t align, uintptr_t want)
{
    for (unsigned k = fab__cu_spare_count; k-- > 0;) {
        fab__cu_range_t *r = fab__cu_spares[k];
        bool fits = r->size == size && r->base % align == 0 && (!want || r->base == want);
        if (fits)
            return fab__cu_spare_remove(k);
        if (want && r->map_base < want + size && want < r->map_base + r->map_len)
            fab__cu_spare_drop(k);
    }
    return NULL;
}

/* Keep range, which nothing maps and the tree no longer holds, as a spare
 * (the oldest spare makes room), or unmap it when it is too large. */
static void fab__cu_spare_keep(fab__cu_range_t *range)
{
    if (range->map_len > FAB__CU_SPARE_BYTES_MAX) {
        fab__cu_range_unmap(range);
        return;
    }
    if (fab__cu_spare_count == FAB__CU_SPARES_MAX)
        fab__cu_spare_drop(0);
    fab__cu_spares[fab__cu_spare_count++] = range;
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

/* The piece of r that holds addr, or NULL. */
fab__cu_piece_t *fab__cu_piece_holding(const fab__cu_range_t *r, uintptr_t addr)
{
    fab__cu_piece_t *p = (fab__cu_piece_t *)fab__cu_tree_floor(&r->pieces, addr);
    return p && addr < fab__cu_piece_end(p) ? p : NULL;
}

/* Whether [addr, addr+len) lies in r and every byte of it is mapped; on
 * success *first_out / *last_out are the first and last pieces that cover it
 * (a walk from one to the other by fab__cu_piece_next). */
bool fab__cu_covered(const fab__cu_range_t *r, uintptr_t addr, size_t len,
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
void fab__cu_piece_split(fab__cu_range_t *r, fab__cu_piece_t *p, uintptr_t at,
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

    uintptr_t want = addr && addr % align == 0 ? (uintptr_t)addr : 0;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_range_t *spare = fab__cu_spare_take(size, align, want);
    if (spare) {
        fab__cu_tree_insert(&fab__cu_ranges, &spare->node);
        fab__rw_unlock(&fab__cu.lock);
        *ptr = (CUdeviceptr)spare->base;
        FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_RESERVE, spare->base, size, -1, 0, 0, __func__));
        return CUDA_SUCCESS;
    }
    fab__rw_unlock(&fab__cu.lock);

    /* Not calloc, which glibc never serves from the thread's cache of freed
     * blocks (docs/cuda.md, "Performance of an import"). */
    fab__cu_range_t *range = malloc(sizeof(*range));
    if (!range)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *range = (fab__cu_range_t){.size = 0};
    const int mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void *m = MAP_FAILED;
    if (want) {
        m = mmap((void *)want, size, PROT_NONE, mflags | MAP_FIXED_NOREPLACE, -1, 0);
        if (m != MAP_FAILED && (uintptr_t)m != want) {
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

    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_tree_insert(&fab__cu_ranges, &range->node);
    fab__rw_unlock(&fab__cu.lock);
    *ptr = (CUdeviceptr)range->base;
    FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_RESERVE, range->base, size, -1, 0, 0, __func__));
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FAB__CU_ENTER();
    CUresult r = CUDA_SUCCESS;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find((uintptr_t)ptr);
    if (!range || range->base != (uintptr_t)ptr || range->size != size) {
        r = CUDA_ERROR_INVALID_VALUE; /* not what cuMemAddressReserve returned */
    } else if (range->pieces.count > 0) {
        r = CUDA_ERROR_INVALID_VALUE; /* teardown order: unmap before free */
        FAB__CU_CHECK(fab__cu_check_free_mapped(range->base, size, __func__));
    } else {
        FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_RESERVE, range->base, __func__));
        fab__cu_tree_remove(&fab__cu_ranges, &range->node);
        fab__cu_spare_keep(range);
    }
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;

free_piece:
    fab__cu_piece_free(range, piece);
out:
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FAB__CU_ENTER();
    fab__cu_free_waits(); /* as cuMemFree (the top comment) */
    uintptr_t addr = (uintptr_t)ptr;
    fab__cu_alloc_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead); /* may talk to the daemon: not under the lock */
    return r;
}
