/* Sharing stream-ordered memory pools between processes:
 * cuMemPoolExportToShareableHandle, cuMemPoolImportFromShareableHandle,
 * cuMemPoolExportPointer, cuMemPoolImportPointer. The pools and their
 * arenas are pool.c's (its top comment has their lifecycles and locking).
 *
 * Sharing: the POSIX_FD handle is a dup of the arena memfd (sealed: no
 * holder can resize it); an importer maps the same arena and checks the
 * header. cuMemPoolExportPointer writes 64 bytes: a magic, the pool's key,
 * the allocation's offset, size and span; cuMemPoolImportPointer refuses data
 * whose key is not its pool's (a pointer imported into the wrong pool) and
 * returns the importer's address of the same bytes. An imported pool is
 * accessible from its resident device only until cuMemPoolSetAccess says
 * more (the programming guide's rule). */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/pool.h"
#include "src/cuda/pool_impl.h"
#include "src/cuda/entry.h"
#include "src/cuda/tree.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/memfd.h"

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
    fab__rw_wrlock(&fab__cu.lock);
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
        fab__rw_unlock(&fab__cu.lock);
        return r;
    }
    /* A FABRIC arena: alloc.c exports its allocation (a round trip to the
     * daemon, so no lock held); the reference keeps the pool meanwhile. */
    p->refs++;
    CUmemGenericAllocationHandle h = p->fabric;
    fab__rw_unlock(&fab__cu.lock);
    r = FAB__CU_INNER(cuMemExportToShareableHandle(handle_out, h, handleType, 0));
    fab__cu_pool_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_pool_put(p, &dead);
    fab__rw_unlock(&fab__cu.lock);
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
        fab__rw_wrlock(&fab__cu.lock);
        r = fab__cu_pool_insert(p);
        fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_rdlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
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
    fab__rw_wrlock(&fab__cu.lock);
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
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        free(c);
    return r;
}
