/* Virtual address ranges, mappings and access: cuMemAddressReserve,
 * cuMemAddressFree, cuMemMap, cuMemUnmap, cuMemSetAccess, cuMemGetAccess,
 * cuMemGetAddressRange, cuPointerGetAttribute, cuMemRetainAllocationHandle
 * (which finds an allocation by a mapped address), and the range check that
 * copies and memsets use.
 *
 * A reservation is an anonymous PROT_NONE mapping; CUdeviceptr values are its
 * addresses. cuMemMap puts the allocation's memfd there (MAP_SHARED |
 * MAP_FIXED) still PROT_NONE, cuMemSetAccess mprotects it, cuMemUnmap puts the
 * anonymous PROT_NONE mapping back. Every mapping and its access per device is
 * recorded, so that a call on a range that is not (wholly) mapped, or a copy
 * without the access it needs, is answered with CUDA's error instead of a
 * fault.
 *
 * Lifecycle of a range (docs/design.md, "map, then access", "teardown"):
 *   cuMemAddressReserve ─▶ cuMemMap ─▶ cuMemSetAccess ─▶ (use)
 *     ─▶ cuMemUnmap (whole mappings only) ─▶ cuMemAddressFree (nothing mapped) */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/entry.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/fabric/log.h"

/* One mapped piece of a reservation: a cuMemMap mapping, possibly split by
 * cuMemSetAccess over part of it. Pieces of one mapping share map_id. Each
 * piece holds a reference to its allocation. Access is kept per device as two
 * bit sets. */
typedef struct fab__cu_piece {
    uintptr_t addr;
    size_t size;
    fab__cu_alloc_t *alloc;
    size_t alloc_offset;
    uint64_t map_id;
    uint64_t readers;
    uint64_t writers;
} fab__cu_piece_t;

typedef struct fab__cu_range {
    uintptr_t base;
    size_t size;
    uintptr_t map_base; /* the whole mmap, over-reserved for alignment */
    size_t map_len;
    fab__cu_piece_t *pieces; /* sorted by addr, non-overlapping */
    size_t npieces;
    size_t cap;
} fab__cu_range_t;

/* Guarded by fab__cu.lock. */
static fab__cu_range_t **fab__cu_ranges; /* sorted by base */
static size_t fab__cu_nranges;
static size_t fab__cu_ranges_cap;
static uint64_t fab__cu_next_map_id = 1;

static size_t fab__cu_page(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* ---- the range table ---------------------------------------------------- */

static size_t fab__cu_range_index(uintptr_t addr)
{
    /* First range whose base is > addr. */
    size_t lo = 0, hi = fab__cu_nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fab__cu_ranges[mid]->base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static fab__cu_range_t *fab__cu_range_find(uintptr_t addr)
{
    size_t i = fab__cu_range_index(addr);
    if (i == 0)
        return NULL;
    fab__cu_range_t *r = fab__cu_ranges[i - 1];
    return addr - r->base < r->size ? r : NULL;
}

bool fab__cu_reserved(uintptr_t addr)
{
    return fab__cu_range_find(addr) != NULL;
}

/* Index of the first piece that ends after addr. */
static size_t fab__cu_piece_index(const fab__cu_range_t *r, uintptr_t addr)
{
    size_t lo = 0, hi = r->npieces;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->pieces[mid].addr + r->pieces[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether [addr, addr+len) lies in r and every byte of it is mapped; on
 * success *first_out / *end_out bound the pieces that cover it. */
static bool fab__cu_covered(const fab__cu_range_t *r, uintptr_t addr, size_t len,
                            size_t *first_out, size_t *end_out)
{
    if (!r || len == 0 || addr < r->base || len > r->size || addr - r->base > r->size - len)
        return false;
    size_t i = fab__cu_piece_index(r, addr);
    size_t first = i;
    uintptr_t at = addr, end = addr + len;
    while (at < end) {
        if (i >= r->npieces || r->pieces[i].addr > at)
            return false;
        at = r->pieces[i].addr + r->pieces[i].size;
        i++;
    }
    *first_out = first;
    *end_out = i;
    return true;
}

CUresult fab__cu_range_check(uintptr_t addr, size_t len, int device, bool write)
{
    if (len == 0)
        return CUDA_SUCCESS;
    fab__cu_range_t *r = fab__cu_range_find(addr);
    size_t first, end;
    if (!fab__cu_covered(r, addr, len, &first, &end))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bit = 1ull << device;
    for (size_t i = first; i < end; i++) {
        uint64_t set = write ? r->pieces[i].writers : r->pieces[i].readers;
        if (!(set & bit))
            return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    return CUDA_SUCCESS;
}

static CUresult fab__cu_pieces_reserve(fab__cu_range_t *r, size_t more)
{
    if (r->npieces + more <= r->cap)
        return CUDA_SUCCESS;
    size_t cap = r->cap ? r->cap * 2 : 4;
    while (cap < r->npieces + more)
        cap *= 2;
    fab__cu_piece_t *p = realloc(r->pieces, cap * sizeof(*p));
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->pieces = p;
    r->cap = cap;
    return CUDA_SUCCESS;
}

/* Split piece i at address at (strictly inside it); capacity must allow.
 * Each piece holds a reference to its allocation: the new one takes its own. */
static void fab__cu_piece_split(fab__cu_range_t *r, size_t i, uintptr_t at)
{
    memmove(&r->pieces[i + 2], &r->pieces[i + 1], (r->npieces - i - 1) * sizeof(r->pieces[0]));
    fab__cu_piece_t *a = &r->pieces[i], *b = &r->pieces[i + 1];
    *b = *a;
    size_t head = at - a->addr;
    a->size = head;
    b->addr = at;
    b->size -= head;
    b->alloc_offset += head;
    fab__cu_alloc_get(b->alloc);
    r->npieces++;
}

/* ---- reserve / free ------------------------------------------------------ */

/* A reservation does not say which device's memory will be mapped into it,
 * and cuMemMap needs an address that is a multiple of that device's
 * granularity: the largest of them fits every device. */
static size_t fab__cu_reserve_align(void)
{
    uint64_t align = fab__cu_page();
    for (int i = 0; i < fab__cu.device_count; i++) {
        if (fab__cu.devices[i].granularity > align)
            align = fab__cu.devices[i].granularity;
    }
    return (size_t)align;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    FAB__CU_ENTER();
    size_t page = fab__cu_page();
    if (!ptr || size == 0 || size % page != 0 || flags != 0 || addr % page != 0 ||
        (alignment & (alignment - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* Never below the default, so that cuMemMap at the base stays legal
     * whatever alignment was asked for; a larger one is honoured. */
    size_t align = fab__cu_reserve_align();
    if (alignment > align)
        align = alignment;
    if (size > SIZE_MAX - align)
        return CUDA_ERROR_OUT_OF_MEMORY;

    fab__cu_range_t *range = calloc(1, sizeof(*range));
    if (!range)
        return CUDA_ERROR_OUT_OF_MEMORY;
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

    pthread_rwlock_wrlock(&fab__cu.lock);
    if (fab__cu_nranges == fab__cu_ranges_cap) {
        size_t cap = fab__cu_ranges_cap ? fab__cu_ranges_cap * 2 : 16;
        fab__cu_range_t **grown = realloc(fab__cu_ranges, cap * sizeof(*grown));
        if (!grown) {
            pthread_rwlock_unlock(&fab__cu.lock);
            munmap((void *)range->map_base, range->map_len);
            free(range);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        fab__cu_ranges = grown;
        fab__cu_ranges_cap = cap;
    }
    size_t i = fab__cu_range_index(range->base);
    memmove(&fab__cu_ranges[i + 1], &fab__cu_ranges[i],
            (fab__cu_nranges - i) * sizeof(fab__cu_ranges[0]));
    fab__cu_ranges[i] = range;
    fab__cu_nranges++;
    pthread_rwlock_unlock(&fab__cu.lock);
    *ptr = (CUdeviceptr)range->base;
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
    } else if (range->npieces > 0) {
        r = CUDA_ERROR_INVALID_VALUE; /* teardown order: unmap before free */
    } else {
        size_t i = fab__cu_range_index(range->base) - 1;
        memmove(&fab__cu_ranges[i], &fab__cu_ranges[i + 1],
                (fab__cu_nranges - i - 1) * sizeof(fab__cu_ranges[0]));
        fab__cu_nranges--;
        munmap((void *)range->map_base, range->map_len);
        free(range->pieces);
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
    uintptr_t addr = (uintptr_t)ptr;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(handle);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (!a || !range)
        goto out;
    uint64_t gran = fab__cu.devices[a->device].granularity;
    if (addr % gran != 0 || size % gran != 0 || size > a->size)
        goto out;
    if (size > range->size || addr - range->base > range->size - size)
        goto out; /* runs past the reservation */
    size_t i = fab__cu_piece_index(range, addr);
    if (i < range->npieces && range->pieces[i].addr < addr + size)
        goto out; /* only unmapped parts of a reservation may be mapped */
    r = fab__cu_pieces_reserve(range, 1);
    if (r != CUDA_SUCCESS)
        goto out;
    if (mmap((void *)addr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, 0) == MAP_FAILED) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    memmove(&range->pieces[i + 1], &range->pieces[i], (range->npieces - i) * sizeof(range->pieces[0]));
    range->pieces[i] = (fab__cu_piece_t){.addr = addr, .size = size, .alloc = a,
                                         .map_id = fab__cu_next_map_id++};
    range->npieces++;
    fab__cu_alloc_get(a); /* the new piece's */
    r = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FAB__CU_ENTER();
    uintptr_t addr = (uintptr_t)ptr;
    fab__cu_alloc_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    size_t first, end;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (!fab__cu_covered(range, addr, size, &first, &end))
        goto out;
    /* Whole mappings only: the range may not start or end inside one. */
    if (range->pieces[first].addr != addr ||
        range->pieces[end - 1].addr + range->pieces[end - 1].size != addr + size)
        goto out;
    if (first > 0 && range->pieces[first - 1].map_id == range->pieces[first].map_id)
        goto out;
    if (end < range->npieces && range->pieces[end].map_id == range->pieces[end - 1].map_id)
        goto out;
    if (mmap((void *)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
             -1, 0) == MAP_FAILED) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (size_t i = first; i < end; i++)
        fab__cu_alloc_put(range->pieces[i].alloc, &dead);
    memmove(&range->pieces[first], &range->pieces[end], (range->npieces - end) * sizeof(range->pieces[0]));
    range->npieces -= end - first;
    r = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead); /* may talk to the daemon: not under the lock */
    return r;
}

/* ---- access ------------------------------------------------------------------- */

static CUresult fab__cu_access_location(const CUmemLocation *loc, int *device_out)
{
    if (loc->type == CU_MEM_LOCATION_TYPE_HOST || loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
        loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->id < 0 || loc->id >= fab__cu.device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *device_out = loc->id;
    return CUDA_SUCCESS;
}

static int fab__cu_prot_of(uint64_t readers, uint64_t writers)
{
    if (writers)
        return PROT_READ | PROT_WRITE;
    return readers ? PROT_READ : PROT_NONE;
}

/* A cuMemSetAccess request: the devices it names lose their access bits, then
 * gain set_r / set_w. Identity (all zero) describes the access as it is. */
typedef struct fab__cu_access_change {
    uint64_t clear, set_r, set_w;
} fab__cu_access_change_t;

static int fab__cu_piece_prot(const fab__cu_piece_t *p, const fab__cu_access_change_t *c)
{
    return fab__cu_prot_of((p->readers & ~c->clear) | c->set_r,
                           (p->writers & ~c->clear) | c->set_w);
}

/* mprotect pieces [from, to) to their protection under change c, one call per
 * run of pieces that share it. On failure returns the errno and sets *done_out
 * to the end of the run that failed: one mprotect over several mappings may
 * have changed some of them before it failed. */
static int fab__cu_protect(fab__cu_range_t *range, size_t from, size_t to,
                           const fab__cu_access_change_t *c, size_t *done_out)
{
    for (size_t i = from; i < to;) {
        size_t j = i + 1;
        int prot = fab__cu_piece_prot(&range->pieces[i], c);
        while (j < to && fab__cu_piece_prot(&range->pieces[j], c) == prot)
            j++;
        uintptr_t a0 = range->pieces[i].addr;
        uintptr_t a1 = range->pieces[j - 1].addr + range->pieces[j - 1].size;
        if (mprotect((void *)a0, a1 - a0, prot) != 0) {
            *done_out = j;
            return errno;
        }
        i = j;
    }
    return 0;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    FAB__CU_ENTER();
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_access_change_t change = {0, 0, 0};
    for (size_t k = 0; k < count; k++) {
        int dev;
        FAB__CU_TRY(fab__cu_access_location(&desc[k].location, &dev));
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
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_range_t *range = fab__cu_range_find(addr);
    size_t first, end;
    CUresult r = CUDA_ERROR_INVALID_VALUE; /* not a fully mapped range */
    if (!fab__cu_covered(range, addr, size, &first, &end))
        goto out;
    uint64_t gran = fab__cu.devices[range->pieces[first].alloc->device].granularity;
    if (addr % gran != 0 || size % gran != 0)
        goto out;
    if (change.set_w) {
        for (size_t i = first; i < end; i++) {
            if (range->pieces[i].alloc->read_only) {
                r = CUDA_ERROR_NOT_PERMITTED; /* a read-only fd, or the exporter granted less */
                goto out;
            }
        }
    }
    r = fab__cu_pieces_reserve(range, 2);
    if (r != CUDA_SUCCESS)
        goto out;
    /* Access may be set on part of a mapping: split at the edges. A split
     * keeps the access on both halves, so it may stay if what follows fails. */
    if (range->pieces[first].addr < addr) {
        fab__cu_piece_split(range, first, addr);
        first++;
        end++;
    }
    fab__cu_piece_t *last = &range->pieces[end - 1];
    if (last->addr + last->size > addr + size)
        fab__cu_piece_split(range, end - 1, addr + size);
    /* All or nothing: the pages change first and the records only once every
     * page did, so a failure leaves both as they were and a copy never trusts
     * a grant the pages do not have. */
    size_t done = first;
    int err = fab__cu_protect(range, first, end, &change, &done);
    if (err != 0) {
        const fab__cu_access_change_t as_is = {0, 0, 0};
        size_t undone;
        if (fab__cu_protect(range, first, done, &as_is, &undone) != 0) {
            /* Each page now has the old protection or the new: record only
             * what both grant, so that no copy can fault. */
            fab__log(FAB__LOG_ERROR, "cuMemSetAccess: cannot restore the protection of "
                                     "[%#lx, %#lx); keeping what both grant",
                     (unsigned long)range->pieces[first].addr,
                     (unsigned long)(range->pieces[done - 1].addr + range->pieces[done - 1].size));
            for (size_t i = first; i < done; i++) {
                fab__cu_piece_t *p = &range->pieces[i];
                p->readers &= ~change.clear | change.set_r;
                p->writers &= ~change.clear | change.set_w;
            }
        }
        r = err == EACCES || err == EPERM ? CUDA_ERROR_NOT_PERMITTED : CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (size_t i = first; i < end; i++) {
        fab__cu_piece_t *p = &range->pieces[i];
        p->readers = (p->readers & ~change.clear) | change.set_r;
        p->writers = (p->writers & ~change.clear) | change.set_w;
    }
    r = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

static const fab__cu_piece_t *fab__cu_piece_at(uintptr_t addr, const fab__cu_range_t **range_out)
{
    const fab__cu_range_t *range = fab__cu_range_find(addr);
    if (!range)
        return NULL;
    size_t i = fab__cu_piece_index(range, addr);
    if (i >= range->npieces || range->pieces[i].addr > addr)
        return NULL;
    if (range_out)
        *range_out = range;
    return &range->pieces[i];
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
    if (p) {
        uint64_t bit = 1ull << dev;
        *flags = (p->writers & bit)   ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                 : (p->readers & bit) ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                      : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The mapping that holds ptr (NCCL frees cuMem memory by asking this). */
CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FAB__CU_ENTER();
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_range_t *range = NULL;
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)dptr, &range);
    if (p) {
        size_t i = (size_t)(p - range->pieces), lo = i, hi = i;
        while (lo > 0 && range->pieces[lo - 1].map_id == p->map_id)
            lo--;
        while (hi + 1 < range->npieces && range->pieces[hi + 1].map_id == p->map_id)
            hi++;
        if (pbase)
            *pbase = range->pieces[lo].addr;
        if (psize)
            *psize = range->pieces[hi].addr + range->pieces[hi].size - range->pieces[lo].addr;
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- pointer attributes ---------------------------------------------------------- */

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&fab__cu.lock);
    const fab__cu_range_t *range = NULL;
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)ptr, &range);
    CUresult r = CUDA_SUCCESS;
    if (attribute == CU_POINTER_ATTRIBUTE_MAPPED && fab__cu_range_find((uintptr_t)ptr)) {
        *(bool *)data = p != NULL;
        goto out;
    }
    if (!p) {
        r = CUDA_ERROR_INVALID_VALUE; /* not memory the driver knows */
        goto out;
    }
    const fab__cu_alloc_t *a = p->alloc;
    int dev = a->device; /* with no current context, the memory's own */
    (void)fab__cu_current_device(&dev);
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned int *)data = CU_MEMORYTYPE_DEVICE; break;
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
        /* The whole cuMemMap mapping, across pieces split by cuMemSetAccess. */
        size_t i = (size_t)(p - range->pieces), lo = i, hi = i;
        while (lo > 0 && range->pieces[lo - 1].map_id == p->map_id)
            lo--;
        while (hi + 1 < range->npieces && range->pieces[hi + 1].map_id == p->map_id)
            hi++;
        uintptr_t base = range->pieces[lo].addr;
        if (attribute == CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR)
            *(void **)data = (void *)base;
        else
            *(size_t *)data = range->pieces[hi].addr + range->pieces[hi].size - base;
        break;
    }
    default:
        r = CUDA_ERROR_INVALID_VALUE; /* not emulated, or not an attribute */
    }
out:
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}

/* ---- handles by address ------------------------------------------------------------ */

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    FAB__CU_ENTER();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    CUresult r = CUDA_ERROR_INVALID_VALUE; /* not a mapped address */
    uintptr_t p = (uintptr_t)addr;
    fab__cu_range_t *range = fab__cu_range_find(p);
    for (size_t i = 0; range && i < range->npieces; i++) {
        fab__cu_piece_t *pc = &range->pieces[i];
        if (p >= pc->addr && p - pc->addr < pc->size) {
            fab__cu_alloc_get_handle(pc->alloc);
            *handle = pc->alloc->id;
            r = CUDA_SUCCESS;
            break;
        }
    }
    pthread_rwlock_unlock(&fab__cu.lock);
    return r;
}
