/* Memory outside the VMM API: cuMemAlloc (and Pitch), cuMemFree,
 * cuMemAllocManaged, cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost, cuMemHostRegister,
 * cuMemHostUnregister, cuMemHostGetDevicePointer, cuMemHostGetFlags,
 * cuMemGetInfo's 3.1 ABI, cuMemGetAddressRange, and the pointer attributes
 * of every kind of memory (cuPointerGetAttribute(s), cuPointerSetAttribute;
 * vmm.c answers for VMM memory, pool.c for pool memory, which cuMemFree also
 * frees).
 *
 * Device memory is host memory. Each cuMemAlloc is a sealed memfd
 * (src/common/memfd.h, as cuMemCreate's) mapped MAP_SHARED read-write in a
 * range of its own, and its record keeps the fd: legacy IPC
 * (cuIpcGetMemHandle) shares exactly that memory with other processes. Its
 * bytes count against the device's memory (alloc.c's count, which
 * cuMemGetInfo and cuMemCreate read). cuMemAllocHost / cuMemHostAlloc memory
 * is made the same way and counts against nothing. A registration records a
 * range of the caller's own memory. With unified addressing every address is
 * the same on host and device, so a device pointer of host memory is the
 * host pointer. cuMemAllocManaged memory is a cuMemAlloc whose record says
 * managed: the host reaches device memory already, so nothing migrates.
 *
 * Lifecycle of a record: allocate or register (memory made with no lock
 * held, then the record inserted under fab__cu.lock for writing) ─▶ use
 * (copies hold the lock for reading while they touch it) ─▶ free or
 * unregister (the record removed and the bytes uncounted under the lock;
 * the mapping and the fd go after unlocking). Records are one AVL tree keyed
 * by base address (tree.h); they never overlap, because allocations are
 * mappings of their own and a registration overlapping any record is
 * refused. Buffer ids come from alloc.c's id counter and are never reused.
 *
 * Legacy IPC (ipc.c): a cuMemAlloc record keeps the handle its memfd was
 * published under, withdrawn from the daemon when the record is freed (after
 * unlocking, as every daemon call); a record made by cuIpcOpenMemHandle maps
 * another process's memfd, counts against nothing, is refused by cuMemFree
 * and removed by cuIpcCloseMemHandle. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/pool.h"
#include "src/cuda/memory.h"
#include "src/cuda/entry.h"
#include "src/cuda/stream.h"
#include "src/cuda/tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/common/memfd.h"
#include "src/fabric/client_ipc.h"

/* cuMemAllocPitch's row alignment: the driver documents none but returns
 * multiples of the texture pitch alignment; 512 bytes is what current GPUs
 * give, and any multiple is correct for callers, who must use the pitch. */
#define FAB__CU_PITCH_ALIGN 512

typedef enum { FAB__CU_MEM_DEVICE, FAB__CU_MEM_HOST, FAB__CU_MEM_REGISTERED } fab__cu_mem_kind_t;

/* In a device record's flags (which are otherwise 0): cuMemAllocManaged's. */
#define FAB__CU_MEM_MANAGED 0x80000000u

typedef struct fab__cu_mem {
    fab__cu_tnode_t node; /* first; node.key is the base */
    size_t size;          /* as asked: the range the attributes report */
    size_t map_len;       /* the mapping (whole pages); 0 for a registration */
    int fd;               /* the memfd; -1 for a registration */
    fab__cu_mem_kind_t kind;
    int device;
    CUcontext ctx;
    unsigned flags; /* CU_MEMHOSTALLOC_* / CU_MEMHOSTREGISTER_* as given; FAB__CU_MEM_MANAGED */
    uint64_t id;    /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    bool sync_memops;
    bool counted; /* size is in the device's used bytes */
    bool ipc_opened;    /* mapped by cuIpcOpenMemHandle: not ours to cuMemFree */
    bool ipc_published; /* ipc_handle was published: withdraw it on free */
    unsigned char ipc_handle[64];
} fab__cu_mem_t;

_Static_assert(offsetof(fab__cu_mem_t, node) == 0, "a node is its record");

/* Guarded by fab__cu.lock. */
static fab__cu_tree_t fab__cu_mems;

static fab__cu_mem_t *fab__cu_mem_find(uintptr_t addr)
{
    fab__cu_mem_t *m = (fab__cu_mem_t *)fab__cu_tree_floor(&fab__cu_mems, addr);
    return m && addr - m->node.key < m->size ? m : NULL;
}

fab__cu_where_t fab__cu_mem_where(uintptr_t addr)
{
    const fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (m)
        return m->kind == FAB__CU_MEM_DEVICE ? FAB__CU_WHERE_DEVICE : FAB__CU_WHERE_PINNED;
    uintptr_t pool_base;
    size_t pool_size;
    if (fab__cu_pool_range(addr, &pool_base, &pool_size))
        return FAB__CU_WHERE_DEVICE;
    return fab__cu_reserved(addr) ? FAB__CU_WHERE_DEVICE : FAB__CU_WHERE_PAGEABLE;
}

CUresult fab__cu_mem_check(uintptr_t addr, size_t len, int device, bool write)
{
    if (len == 0)
        return CUDA_SUCCESS;
    const fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (!m) {
        CUresult pr = fab__cu_pool_check(addr, len, device, write);
        return pr != CUDA_ERROR_NOT_FOUND ? pr : fab__cu_range_check(addr, len, device, write);
    }
    if (len > m->size - (addr - m->node.key))
        return CUDA_ERROR_INVALID_VALUE; /* runs past the end */
    if (write && m->kind == FAB__CU_MEM_REGISTERED && (m->flags & FAB_CU_MEMHOSTREGISTER_READ_ONLY))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult fab__cu_mem_backing(uintptr_t addr, size_t len, int *fd_out, size_t *offset_out)
{
    const fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (!m)
        return CUDA_ERROR_NOT_FOUND;
    size_t off = addr - m->node.key;
    /* The whole pages of the mapping belong to the allocation. */
    if (m->fd < 0 || len > m->map_len - off)
        return CUDA_ERROR_INVALID_VALUE;
    *fd_out = m->fd;
    *offset_out = off;
    return CUDA_SUCCESS;
}

static size_t fab__cu_pages(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (size + page - 1) / page * page;
}

/* ---- allocate / free ------------------------------------------------------------ */

/* A new record of kind and size (no fd yet) for the calling thread's
 * current context and its device; the caller links or frees it. */
static CUresult fab__cu_mem_new(fab__cu_mem_kind_t kind, size_t size, fab__cu_mem_t **out)
{
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    fab__cu_mem_t *m = calloc(1, sizeof(*m));
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->fd = -1;
    m->size = size;
    m->kind = kind;
    m->device = dev;
    m->ctx = ctx;
    *out = m;
    return CUDA_SUCCESS;
}

static CUresult fab__cu_mem_alloc(fab__cu_mem_kind_t kind, size_t size, unsigned flags,
                                  void **out)
{
    fab__cu_mem_t *m;
    FAB__CU_TRY(fab__cu_mem_new(kind, size, &m));
    if (size > SIZE_MAX / 2) {
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int dev = m->device;
    m->map_len = fab__cu_pages(size);
    m->flags = flags;
    /* The bytes are counted first, so that two threads cannot both take the
     * last of them, and a refused size costs no memfd. */
    CUresult r = CUDA_SUCCESS;
    if (kind == FAB__CU_MEM_DEVICE) {
        fab__rw_wrlock(&fab__cu.lock);
        r = fab__cu_alloc_charge(dev, size);
        fab__rw_unlock(&fab__cu.lock);
        m->counted = r == CUDA_SUCCESS;
    }
    void *p = MAP_FAILED;
    if (r == CUDA_SUCCESS &&
        fab__memfd_create(kind == FAB__CU_MEM_DEVICE ? "cuMemAlloc" : "cuMemHostAlloc", m->map_len,
                          &m->fd) != FAB_SUCCESS) {
        m->fd = -1;
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS) {
        p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
        if (p == MAP_FAILED)
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    fab__rw_wrlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS) {
        m->node.key = (uintptr_t)p;
        m->id = fab__cu_alloc_new_id();
        fab__cu_tree_insert(&fab__cu_mems, &m->node);
        FAB__CU_CHECK(fab__cu_check_add(
            kind == FAB__CU_MEM_DEVICE ? FAB__CU_CHECK_MEM : FAB__CU_CHECK_HOST, (uintptr_t)p,
            size, dev, 0, 0, kind == FAB__CU_MEM_DEVICE ? "cuMemAlloc" : "cuMemHostAlloc"));
    } else if (m->counted) {
        fab__cu_alloc_uncharge(dev, size);
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS) {
        if (m->fd >= 0)
            close(m->fd);
        free(m);
        return r;
    }
    *out = p;
    return CUDA_SUCCESS;
}

/* Remove the record of kind based exactly at addr; free its memory after
 * unlocking. CUDA_ERROR_INVALID_VALUE when there is none. */
static CUresult fab__cu_mem_free(uintptr_t addr, fab__cu_mem_kind_t kind, CUresult not_found)
{
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_mem_t *m = fab__cu_mem_find(addr);
    /* The checker's kind of record, and the call that frees it. */
    fab__cu_check_kind_t ck = kind == FAB__CU_MEM_DEVICE ? FAB__CU_CHECK_MEM : FAB__CU_CHECK_HOST;
    const char *call = kind == FAB__CU_MEM_DEVICE ? "cuMemFree" : "cuMemFreeHost";
    if (!m || m->node.key != addr || m->kind != kind || m->ipc_opened) {
        if (kind != FAB__CU_MEM_REGISTERED)
            FAB__CU_CHECK(fab__cu_check_stale_free(ck, addr, call));
        fab__rw_unlock(&fab__cu.lock);
        return not_found;
    }
    if (kind != FAB__CU_MEM_REGISTERED)
        FAB__CU_CHECK(fab__cu_check_release(ck, addr, call));
    fab__cu_tree_remove(&fab__cu_mems, &m->node);
    if (m->counted)
        fab__cu_alloc_uncharge(m->device, m->size);
    fab__rw_unlock(&fab__cu.lock);
    /* Freed memory is no longer shared: the daemon refuses its IPC handle
     * from now on (processes that opened it keep their mapping). */
    fab_client_t *client;
    if (m->ipc_published && fab__cu_client(&client) == CUDA_SUCCESS)
        (void)fab__client_ipc_withdraw(client, m->ipc_handle);
    if (m->map_len)
        munmap((void *)m->node.key, m->map_len);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FAB__CU_ENTER();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *p;
    FAB__CU_TRY(fab__cu_mem_alloc(FAB__CU_MEM_DEVICE, bytesize, 0, &p));
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* Managed memory: device memory (counted, freed by cuMemFree) that the host
 * reads and writes, as every device allocation here. cuda.h: flags are
 * CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST, a size of 0 is INVALID_VALUE. */
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    FAB__CU_ENTER();
    if (!dptr || bytesize == 0 || (flags != FAB_CU_MEM_ATTACH_GLOBAL && flags != FAB_CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    void *p;
    FAB__CU_TRY(fab__cu_mem_alloc(FAB__CU_MEM_DEVICE, bytesize, FAB__CU_MEM_MANAGED | flags, &p));
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* The CUDA 3.1 ABI: 32-bit pointers, which 64-bit addresses do not fit. */
CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    (void)dptr;
    (void)bytesize;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* cuda.h: cuMemFree and cuMemFreeHost "may perform implicit synchronization"
 * (all but stream-ordered memory), and programs rely on it: numba-cuda frees
 * a kernel's temporaries while the kernel may still be queued. So the work
 * queued in the calling thread's context ends before the memory goes; its
 * errors stay for the calls that report them (sticky faults). */
void fab__cu_free_waits(void)
{
    if (fab__cu_streams_idle()) {
        /* Nothing to wait for: what a synchronisation does besides. */
        if (fab__cu_stream_sync_hook)
            fab__cu_stream_sync_hook();
        return;
    }
    CUcontext ctx;
    if (fab__cu_current_ctx(&ctx) == CUDA_SUCCESS)
        (void)FAB__CU_INNER(cuCtxSynchronize_v2(ctx));
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FAB__CU_ENTER();
    if (dptr == 0)
        return CUDA_SUCCESS; /* as free(NULL) */
    fab__cu_free_waits();
    /* Pool memory too (cuMemAllocAsync, an imported pool pointer). */
    CUresult pr = fab__cu_pool_free((uintptr_t)dptr);
    if (pr != CUDA_ERROR_NOT_FOUND)
        return pr;
    return fab__cu_mem_free((uintptr_t)dptr, FAB__CU_MEM_DEVICE, CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
    return cuMemFree_v2(dptr);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                            size_t Height, unsigned int ElementSizeBytes)
{
    FAB__CU_ENTER();
    if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    if (WidthInBytes > SIZE_MAX - FAB__CU_PITCH_ALIGN)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (WidthInBytes + FAB__CU_PITCH_ALIGN - 1) / FAB__CU_PITCH_ALIGN *
                   FAB__CU_PITCH_ALIGN;
    if (Height > SIZE_MAX / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    FAB__CU_TRY(FAB__CU_INNER(cuMemAlloc_v2(dptr, pitch * Height)));
    *pPitch = pitch;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                         unsigned int Height, unsigned int ElementSizeBytes)
{
    (void)dptr;
    (void)pPitch;
    (void)WidthInBytes;
    (void)Height;
    (void)ElementSizeBytes;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED; /* 32-bit pointers */
}

CUresult cuMemGetInfo(unsigned int *free_bytes, unsigned int *total_bytes)
{
    size_t f, t;
    CUresult r = cuMemGetInfo_v2(free_bytes ? &f : NULL, total_bytes ? &t : NULL);
    if (r == CUDA_SUCCESS) {
        *free_bytes = f > 0xffffffffu ? 0xffffffffu : (unsigned int)f;
        *total_bytes = t > 0xffffffffu ? 0xffffffffu : (unsigned int)t;
    }
    return r;
}

/* ---- host memory ------------------------------------------------------------------ */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    FAB__CU_ENTER();
    const unsigned known = FAB_CU_MEMHOSTALLOC_PORTABLE | FAB_CU_MEMHOSTALLOC_DEVICEMAP |
                           FAB_CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || bytesize == 0 || (Flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_mem_alloc(FAB__CU_MEM_HOST, bytesize, Flags, pp);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FAB__CU_FAULT();
    return FAB__CU_INNER(cuMemHostAlloc(pp, bytesize, 0));
}

CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return cuMemAllocHost_v2(pp, bytesize);
}

CUresult cuMemFreeHost(void *p)
{
    FAB__CU_ENTER();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_free_waits();
    return fab__cu_mem_free((uintptr_t)p, FAB__CU_MEM_HOST, CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    FAB__CU_ENTER();
    const unsigned known = FAB_CU_MEMHOSTREGISTER_PORTABLE | FAB_CU_MEMHOSTREGISTER_DEVICEMAP |
                           FAB_CU_MEMHOSTREGISTER_IOMEMORY | FAB_CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || bytesize == 0 || (Flags & ~known) || (uintptr_t)p > UINTPTR_MAX - bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    /* I/O memory is device memory of a third party: none to emulate. */
    if (Flags & FAB_CU_MEMHOSTREGISTER_IOMEMORY)
        return CUDA_ERROR_NOT_SUPPORTED;
    fab__cu_mem_t *m;
    FAB__CU_TRY(fab__cu_mem_new(FAB__CU_MEM_REGISTERED, bytesize, &m));
    uintptr_t addr = (uintptr_t)p;
    m->node.key = addr;
    m->flags = Flags;
    CUresult r = CUDA_SUCCESS;
    fab__rw_wrlock(&fab__cu.lock);
    /* Any record starting before the end must end before the start. */
    const fab__cu_mem_t *below =
        (const fab__cu_mem_t *)fab__cu_tree_floor(&fab__cu_mems, addr + bytesize - 1);
    if (below && below->node.key + below->size > addr)
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (fab__cu_reserved(addr) || fab__cu_reserved(addr + bytesize - 1))
        r = CUDA_ERROR_INVALID_VALUE; /* device memory is not host memory to register */
    if (r == CUDA_SUCCESS) {
        m->id = fab__cu_alloc_new_id();
        fab__cu_tree_insert(&fab__cu_mems, &m->node);
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        free(m);
    return r;
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult cuMemHostUnregister(void *p)
{
    FAB__CU_ENTER();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return fab__cu_mem_free((uintptr_t)p, FAB__CU_MEM_REGISTERED,
                            CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

/* The host record holding p (caller holds the lock), or NULL. */
static const fab__cu_mem_t *fab__cu_host_record(const void *p)
{
    const fab__cu_mem_t *m = fab__cu_mem_find((uintptr_t)p);
    return m && m->kind != FAB__CU_MEM_DEVICE ? m : NULL;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    FAB__CU_ENTER();
    if (!pdptr || !p || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    bool ok = fab__cu_host_record(p) != NULL;
    fab__rw_unlock(&fab__cu.lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags)
{
    (void)pdptr;
    (void)p;
    (void)Flags;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED; /* 32-bit pointers */
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    FAB__CU_ENTER();
    if (!pFlags || !p)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_mem_t *m = fab__cu_host_record(p);
    /* With unified addressing all page-locked memory is mapped: DEVICEMAP
     * holds whether asked for or not. */
    if (m)
        *pFlags = m->flags | FAB_CU_MEMHOSTALLOC_DEVICEMAP;
    fab__rw_unlock(&fab__cu.lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- address ranges and pointer attributes ------------------------------------------ */

/* The CUDA 3.1 ABI: 32-bit pointers and sizes, which the emulation's
 * addresses do not fit. */
CUresult cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr)
{
    (void)pbase;
    (void)psize;
    (void)dptr;
    FAB__CU_ENTER();
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FAB__CU_ENTER();
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_mem_t *m = fab__cu_mem_find((uintptr_t)dptr);
    uintptr_t base = 0;
    size_t size = 0;
    bool found = false;
    /* Host allocations too: with unified addressing their device pointer is
     * theirs, and the driver answers for it (numba-cuda sizes a mapped array
     * so). A registration is the caller's memory: not the driver's to size. */
    if (m && m->kind != FAB__CU_MEM_REGISTERED) {
        base = m->node.key;
        size = m->size;
        found = true;
    } else if (!m) {
        found = fab__cu_pool_range((uintptr_t)dptr, &base, &size) ||
                fab__cu_vmm_mapping((uintptr_t)dptr, &base, &size);
    }
    fab__rw_unlock(&fab__cu.lock);
    if (!found)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = base;
    if (psize)
        *psize = size;
    return CUDA_SUCCESS;
}

static CUresult fab__cu_mem_attribute(const fab__cu_mem_t *m, void *data,
                                      CUpointer_attribute attribute, CUdeviceptr ptr)
{
    bool host = m->kind != FAB__CU_MEM_DEVICE;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = m->ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host)
            return CUDA_ERROR_INVALID_VALUE; /* device memory has no host address */
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(bool *)data = m->sync_memops; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = m->id; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(bool *)data = (m->flags & FAB__CU_MEM_MANAGED) != 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = m->device; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(bool *)data = m->kind == FAB__CU_MEM_DEVICE && !m->ipc_opened &&
                        !(m->flags & FAB__CU_MEM_MANAGED);
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
            *(CUdeviceptr *)data = m->node.key;
        else
            *(void **)data = (void *)m->node.key;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *(size_t *)data = m->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(bool *)data = true; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: *(unsigned long long *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(bool *)data = false; break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned int *)data = (m->kind == FAB__CU_MEM_REGISTERED &&
                                 (m->flags & FAB_CU_MEMHOSTREGISTER_READ_ONLY))
                                    ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ
                                    : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: *(bool *)data = false; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Caller holds the lock. */
static CUresult fab__cu_attribute_locked(void *data, CUpointer_attribute attribute,
                                         CUdeviceptr ptr)
{
    const fab__cu_mem_t *m = fab__cu_mem_find((uintptr_t)ptr);
    if (m)
        return fab__cu_mem_attribute(m, data, attribute, ptr);
    CUresult pr = fab__cu_pool_attribute(data, attribute, ptr);
    if (pr != CUDA_ERROR_NOT_FOUND)
        return pr;
    return fab__cu_vmm_attribute(data, attribute, ptr);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    CUresult r = fab__cu_attribute_locked(data, attribute, ptr);
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

/* The size of each attribute's value, for the defaults of
 * cuPointerGetAttributes; 0 for one it does not take. */
static size_t fab__cu_attribute_size(CUpointer_attribute attribute)
{
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return sizeof(CUcontext);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return sizeof(unsigned int);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return sizeof(void *);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return sizeof(int);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_MAPPED: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return sizeof(CUmemoryPool);
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return sizeof(bool);
    /* Not in the documented list for this call, but harmless to answer. */
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: return sizeof(unsigned int);
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return sizeof(void *);
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return sizeof(unsigned long long);
    default: return 0;
    }
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                void **data, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (numAttributes == 0 || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i] || fab__cu_attribute_size(attributes[i]) == 0)
            return CUDA_ERROR_INVALID_VALUE;
    }
    fab__rw_rdlock(&fab__cu.lock);
    bool known = fab__cu_mem_find((uintptr_t)ptr) != NULL;
    if (!known) {
        uintptr_t base;
        size_t size;
        known = fab__cu_pool_range((uintptr_t)ptr, &base, &size) ||
                fab__cu_vmm_mapping((uintptr_t)ptr, &base, &size);
    }
    for (unsigned i = 0; i < numAttributes; i++) {
        /* Memory the driver does not know, and attributes a kind of memory
         * has none of (the host pointer of device memory), read as the
         * documented defaults: zero, and no device (-2) for the ordinal. */
        if (!known || fab__cu_attribute_locked(data[i], attributes[i], ptr) != CUDA_SUCCESS) {
            memset(data[i], 0, fab__cu_attribute_size(attributes[i]));
            if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
                *(int *)data[i] = -2;
        }
    }
    fab__rw_unlock(&fab__cu.lock);
    return CUDA_SUCCESS;
}

CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAB__CU_ENTER();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
        return CUDA_ERROR_INVALID_VALUE; /* the only settable attribute */
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_mem_t *m = fab__cu_mem_find((uintptr_t)ptr);
    /* Copies here are synchronous with respect to the memory already, so the
     * flag changes nothing but what is read back. */
    if (m && m->kind == FAB__CU_MEM_DEVICE)
        m->sync_memops = *(const bool *)value;
    fab__rw_unlock(&fab__cu.lock);
    return m && m->kind == FAB__CU_MEM_DEVICE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- legacy CUDA IPC (ipc.c) ------------------------------------------------------ */

CUresult fab__cu_mem_ipc_source(uintptr_t addr, uintptr_t *base_out, int *fd_out, size_t *size_out,
                                int *device_out, uint64_t *id_out, bool *cached,
                                unsigned char handle[64])
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    *fd_out = -1;
    fab__rw_rdlock(&fab__cu.lock);
    const fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (m && m->kind == FAB__CU_MEM_DEVICE && !m->ipc_opened &&
        !(m->flags & FAB__CU_MEM_MANAGED)) {
        *base_out = m->node.key;
        *size_out = m->map_len;
        *device_out = m->device;
        *id_out = m->id;
        *cached = m->ipc_published;
        r = CUDA_SUCCESS;
        if (m->ipc_published)
            memcpy(handle, m->ipc_handle, sizeof(m->ipc_handle));
        else if ((*fd_out = fcntl(m->fd, F_DUPFD_CLOEXEC, 0)) < 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

bool fab__cu_mem_ipc_cache(uintptr_t addr, uint64_t id, unsigned char handle[64])
{
    bool kept = false;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (m && m->node.key == addr && m->id == id) {
        if (m->ipc_published) {
            memcpy(handle, m->ipc_handle, sizeof(m->ipc_handle));
        } else {
            memcpy(m->ipc_handle, handle, sizeof(m->ipc_handle));
            m->ipc_published = true;
            kept = true;
        }
    }
    fab__rw_unlock(&fab__cu.lock);
    return kept;
}

CUresult fab__cu_mem_ipc_map(int fd, size_t size, CUdeviceptr *out)
{
    fab__cu_mem_t *m;
    FAB__CU_TRY(fab__cu_mem_new(FAB__CU_MEM_DEVICE, size, &m));
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->node.key = (uintptr_t)p;
    m->map_len = size;
    m->fd = fd;
    m->ipc_opened = true;
    fab__rw_wrlock(&fab__cu.lock);
    m->id = fab__cu_alloc_new_id();
    fab__cu_tree_insert(&fab__cu_mems, &m->node);
    fab__rw_unlock(&fab__cu.lock);
    *out = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult fab__cu_mem_ipc_unmap(uintptr_t addr)
{
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_mem_t *m = fab__cu_mem_find(addr);
    if (!m || m->node.key != addr || !m->ipc_opened) {
        fab__rw_unlock(&fab__cu.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    fab__cu_tree_remove(&fab__cu_mems, &m->node);
    fab__rw_unlock(&fab__cu.lock);
    munmap((void *)m->node.key, m->map_len);
    close(m->fd);
    free(m);
    return CUDA_SUCCESS;
}
