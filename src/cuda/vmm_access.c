/* Access and what is asked of mappings: cuMemSetAccess, cuMemGetAccess,
 * the mapping and pointer attributes of VMM memory (memory.c answers
 * cuMemGetAddressRange and cuPointerGetAttribute with them), the memfd
 * behind a mapped range, and cuMemRetainAllocationHandle (which finds an
 * allocation by a mapped address). The reservations and pieces are vmm.c's
 * (vmm_impl.h). */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/vmm_impl.h"
#include "src/cuda/entry.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "src/common/log.h"

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
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_rdlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
    const fab__cu_piece_t *p = fab__cu_piece_at((uintptr_t)addr, NULL);
    if (p) {
        fab__cu_alloc_get_handle(p->alloc);
        *handle = p->alloc->id;
        FAB__CU_CHECK(fab__cu_check_retain(p->alloc->id));
    }
    fab__rw_unlock(&fab__cu.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* not a mapped address */
}
