/* Stream-ordered memory pools' entry points: cuMemPoolCreate,
 * cuMemPoolDestroy, cuDeviceGetDefaultMemPool, cuDeviceGetMemPool,
 * cuDeviceSetMemPool, cuMemPoolSetAttribute, cuMemPoolGetAttribute,
 * cuMemPoolTrimTo, cuMemPoolSetAccess, cuMemPoolGetAccess, cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync. The pools and their allocator
 * are pool.c's (its top comment has their lifecycles and locking).
 *
 * Stream order: cuMemAllocAsync carves at once and returns the pointer (as
 * documented). cuMemFreeAsync marks the allocation as being freed and puts
 * the free on the stream (stream.h's submit): the range returns to the pool
 * only when the stream's worker reaches it, after everything queued before
 * it on that stream has run. So a range can only be reused once no work
 * that was ordered before its free is left to run, whatever stream reuses
 * it: that is safe under every REUSE_* setting, and those attributes are
 * kept and reported but change nothing. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/alloc.h"
#include "src/cuda/pool.h"
#include "src/cuda/pool_impl.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"
#include "src/cuda/tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


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
        fab__rw_wrlock(&fab__cu.lock);
        r = fab__cu_pool_insert(p);
        fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    CUresult r = !p || p->is_default ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        fab__cu_idtable_remove(&fab__cu_pools, p->id);
        if (fab__cu_current_pools[p->device] == p)
            fab__cu_current_pools[p->device] = NULL; /* back to the default */
        /* Live allocations keep the rest until they are freed. */
        fab__cu_pool_put(p, &dead);
    }
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
    return r;
}

/* The default pool of dev, made on first use. */
static CUresult fab__cu_default_pool(int dev, fab__cu_pool_t **out)
{
    fab__rw_rdlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_default_pools[dev];
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
    if (fab__cu_default_pools[dev]) { /* another thread made it first */
        fab__cu_idtable_remove(&fab__cu_pools, p->id);
        fab__cu_pool_put(p, &dead);
    } else {
        fab__cu_default_pools[dev] = p;
    }
    *out = fab__cu_default_pools[dev];
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_rdlock(&fab__cu.lock);
    if (fab__cu_current_pools[dev])
        p = fab__cu_current_pools[dev];
    *pool = fab__cu_pool_handle(p);
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    FAB__CU_ENTER_DEVICE(dev);
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    /* An imported pool gives no allocations; a pool serves its own device. */
    CUresult r = !p || p->imported || p->device != dev ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        fab__cu_current_pools[dev] = p;
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* ---- attributes, trim, access -------------------------------------------------------- */

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    FAB__CU_ENTER();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    FAB__CU_ENTER();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    fab__rw_rdlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FAB__CU_ENTER();
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p = fab__cu_pool_find(pool);
    if (p)
        fab__cu_pool_trim_to(p, minBytesToKeep);
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_pool_t *p = fab__cu_pool_find(memPool);
    if (p)
        *flags = p->access[location->id];
    fab__rw_unlock(&fab__cu.lock);
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
    c->span = fab__cu_round_up(bytesize, FAB__CU_POOL_ALIGN);
    CUresult r;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_pool_t *p;
    if (pool) {
        p = fab__cu_pool_find(pool);
        r = p && !p->imported ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    } else {
        p = fab__cu_current_pools[dev] ? fab__cu_current_pools[dev] : fab__cu_default_pools[dev];
        r = CUDA_SUCCESS;
    }
    if (r == CUDA_SUCCESS)
        r = fab__cu_pool_carve(p, c);
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
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_chunk_release(arg, &dead);
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_pool_teardown(dead);
}

static CUresult fab__cu_free_async(CUdeviceptr dptr, CUstream hStream, unsigned flags)
{
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_piece_t *c = fab__cu_chunk_at((uintptr_t)dptr);
    /* Not pool memory, or a second free of the same allocation. */
    CUresult r = !c || c->freeing ? CUDA_ERROR_INVALID_VALUE : fab__cu_stream_check(hStream);
    if (r == CUDA_SUCCESS)
        c->freeing = true;
    else if (!c || c->freeing)
        FAB__CU_CHECK(fab__cu_check_stale_free(FAB__CU_CHECK_POOL, (uintptr_t)dptr, "cuMemFreeAsync"));
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        return r;
    /* The program's part ends here, whenever the stream gets to it. */
    FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_POOL, (uintptr_t)dptr, "cuMemFreeAsync"));
    r = fab__cu_stream_submit(hStream, flags, fab__cu_free_run, c, NULL);
    if (r != CUDA_SUCCESS) {
        fab__rw_wrlock(&fab__cu.lock);
        c->freeing = false;
        fab__rw_unlock(&fab__cu.lock);
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

