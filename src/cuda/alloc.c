/* Physical allocations and their handles: cuMemCreate, cuMemRelease,
 * cuMemExportToShareableHandle, cuMemImportFromShareableHandle,
 * cuMemGetAllocationPropertiesFromHandle, cuMemGetAllocationGranularity,
 * cuMemGetInfo. cuMemRetainAllocationHandle finds its allocation by a mapped
 * address, so it lives in vmm.c, with the mappings.
 *
 * Device memory is host memory. An allocation that may be shared as a fabric
 * handle is a region of the fabric (a memfd the daemon made); any other is a
 * memfd made here, so POSIX_FILE_DESCRIPTOR sharing needs no daemon.
 *
 * Host-resident allocations (a HOST or HOST_NUMA location) are made the same
 * way; they differ only in whose bytes they take: a host NUMA node's
 * host_memory instead of a GPU's memory (docs/cuda.md, "Host memory through
 * VMM"). A FABRIC one asks the daemon for ordinal FAB_HOST_NUMA_ORDINAL_BASE
 * + its NUMA node.
 *
 * Lifecycle. An allocation has one reference count, refs, taken with
 * fab__cu_alloc_get and dropped with fab__cu_alloc_put, both under
 * fab__cu.lock held for writing. A reference is held by
 *
 *   each handle reference   cuMemCreate and cuMemImportFromShareableHandle
 *                           make the allocation with refs = 1 for theirs;
 *                           cuMemRetainAllocationHandle takes one more
 *                           (vmm.c), cuMemRelease drops one
 *   each mapped piece       cuMemMap takes one for the piece it makes, a
 *                           cuMemSetAccess that splits a piece one for the
 *                           new half; cuMemUnmap drops one per piece (vmm.c)
 *   a FABRIC export         taken before the lock is dropped for the
 *                           daemon's round trip, dropped after it
 *
 * The put that drops the last one calls fab__cu_alloc_release, the one place
 * an allocation ends: it leaves the handle table and its bytes leave the
 * device's use, and it goes on the caller's dead list. Its memory goes later,
 * in fab__cu_alloc_destroy, once the caller has unlocked, because releasing
 * a fabric region is a round trip to the daemon (no fabric client call ever
 * happens under fab__cu.lock): the memfd is closed, or the region released
 * so that the daemon may forget it.
 *
 *   create / import ─▶ refs = 1 ─▶ get, put ... ─▶ last put: release
 *     (locked: unlink, uncount) ─▶ destroy (unlocked: memfd closed / region released)
 *
 * handle_refs counts the handle references among refs and decides no
 * lifetime: it keeps the driver's rule that a handle whose references are
 * gone is unknown to every call (fab__cu_alloc_find refuses it), except that
 * cuMemRetainAllocationHandle on a still-mapped address revives it
 * (docs/design.md, "lifetime"). A POSIX fd given out by an export holds its
 * own reference to the memory (it is a dup of the memfd, counted by the
 * kernel) until the receiver closes it; a fabric handle holds none. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/alloc.h"
#include "src/cuda/entry.h"
#include "src/cuda/idtable.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The model's and the fabric's handle types are the driver's, bit for bit:
 * handle types pass between them unconverted. */
#define FAB__CU_SAME_HANDLE_TYPE(name)                                                 \
    _Static_assert((unsigned)FAB_HANDLE_TYPE_##name == (unsigned)CU_MEM_HANDLE_TYPE_##name, \
                   "FAB_HANDLE_TYPE_" #name " is CU_MEM_HANDLE_TYPE_" #name)
FAB__CU_SAME_HANDLE_TYPE(NONE);
FAB__CU_SAME_HANDLE_TYPE(POSIX_FILE_DESCRIPTOR);
FAB__CU_SAME_HANDLE_TYPE(WIN32);
FAB__CU_SAME_HANDLE_TYPE(WIN32_KMT);
FAB__CU_SAME_HANDLE_TYPE(FABRIC);
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fabmem/fabric.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"

#define FAB__CU_HANDLE_TYPES_KNOWN                                                  \
    (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32 |         \
     CU_MEM_HANDLE_TYPE_WIN32_KMT | CU_MEM_HANDLE_TYPE_FABRIC)

/* ---- the handle table ----------------------------------------------------- */

/* Guarded by fab__cu.lock. */
static fab__cu_idtable_t fab__cu_allocs; /* id -> allocation, while it has a reference */
static CUmemGenericAllocationHandle fab__cu_next_alloc_id = 0x1000;
/* Bytes held per place: the devices first, then the host NUMA nodes from
 * FAB__CU_MAX_DEVICES on (fab__cu_used_of). */
static uint64_t fab__cu_used[FAB__CU_MAX_DEVICES + FAB__HOST_NUMA_MAX];

static uint64_t *fab__cu_used_of(const fab__cu_alloc_t *a)
{
    return &fab__cu_used[a->host_numa >= 0 ? FAB__CU_MAX_DEVICES + a->host_numa : a->device];
}

fab__cu_alloc_t *fab__cu_alloc_find(CUmemGenericAllocationHandle id)
{
    fab__cu_alloc_t *a = fab__cu_idtable_find(&fab__cu_allocs, id);
    return a && a->handle_refs > 0 ? a : NULL;
}

/* Give a its id and put it in the table; CUDA_ERROR_OUT_OF_MEMORY when the
 * table cannot grow. */
static CUresult fab__cu_alloc_insert(fab__cu_alloc_t *a)
{
    /* Ids are never reused, so a stale handle can never name new memory. */
    a->id = fab__cu_next_alloc_id;
    fab__cu_next_alloc_id += 0x10;
    return fab__cu_idtable_insert(&fab__cu_allocs, a->id, a) == 0 ? CUDA_SUCCESS
                                                                   : CUDA_ERROR_OUT_OF_MEMORY;
}

/* The release function, called by the put that drops the last reference:
 * take a out of the table and push it on *dead. Its memory goes in
 * fab__cu_alloc_destroy, after the caller unlocks. */
static void fab__cu_alloc_release(fab__cu_alloc_t *a, fab__cu_alloc_t **dead)
{
    if (a->counted)
        *fab__cu_used_of(a) -= a->size;
    fab__cu_idtable_remove(&fab__cu_allocs, a->id);
    a->next = *dead;
    *dead = a;
}

void fab__cu_alloc_get(fab__cu_alloc_t *alloc)
{
    alloc->refs++;
}

void fab__cu_alloc_put(fab__cu_alloc_t *alloc, fab__cu_alloc_t **dead)
{
    if (--alloc->refs == 0)
        fab__cu_alloc_release(alloc, dead);
}

void fab__cu_alloc_get_handle(fab__cu_alloc_t *alloc)
{
    alloc->handle_refs++;
    fab__cu_alloc_get(alloc);
}

void fab__cu_alloc_destroy(fab__cu_alloc_t *dead)
{
    while (dead) {
        fab__cu_alloc_t *a = dead;
        dead = a->next;
        if (a->mc && fab__cu_alloc_mc_hooks)
            fab__cu_alloc_mc_hooks->destroy(a);
        if (a->region)
            fab_region_release(a->region); /* and with it the fd, which it owns */
        else if (a->fd >= 0)
            close(a->fd);
        free(a);
    }
}

/* The end of a create or an import: a, whose backing was made (r says how
 * that went) with no lock held, goes into the table under the lock and its id
 * to *handle. On any failure its bytes are uncounted and it is destroyed,
 * backing and all, after unlocking. */
static CUresult fab__cu_alloc_publish(fab__cu_alloc_t *a, CUresult r,
                                      CUmemGenericAllocationHandle *handle)
{
    fab__rw_wrlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS)
        r = fab__cu_alloc_insert(a);
    if (r == CUDA_SUCCESS)
        *handle = a->id;
    else if (a->counted)
        *fab__cu_used_of(a) -= a->size;
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        fab__cu_alloc_destroy(a);
    return r;
}

const fab__cu_alloc_mc_hooks_t *fab__cu_alloc_mc_hooks;

CUresult fab__cu_alloc_add(fab__cu_alloc_t *a, CUmemGenericAllocationHandle *handle)
{
    return fab__cu_alloc_publish(a, CUDA_SUCCESS, handle);
}

/* ---- checks ------------------------------------------------------------------ */

/* The host NUMA node of the calling thread's CPU, as the kernel tells it
 * (getcpu), folded onto this node's host NUMA nodes: node n of the machine
 * is emulated node n modulo their count, so a one-node machine serves every
 * emulated NUMA node and a larger one wraps around. */
static int fab__cu_current_numa(void)
{
    unsigned cpu = 0, numa = 0;
    if (syscall(SYS_getcpu, &cpu, &numa, NULL) != 0)
        numa = 0;
    return (int)(numa % (unsigned)fab__cu.host_numa_nodes);
}

/* Where loc says memory is to live: a device (*device_out, *numa_out = -1)
 * or a host NUMA node (*numa_out, and *device_out = 0, whose granularity
 * every GPU of the node shares). HOST names no NUMA node (its id is
 * ignored): the memory is charged to the calling thread's, as the kernel's
 * first-touch policy would place it. HOST_NUMA_CURRENT is refused by
 * cuMemCreate (cuda.h), so only callers that allow it pass current. */
static CUresult fab__cu_location_place(const CUmemLocation *loc, bool current, int *device_out,
                                       int *numa_out)
{
    *numa_out = -1;
    *device_out = 0;
    switch (loc->type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        if (loc->id < 0 || loc->id >= fab__cu.device_count)
            return CUDA_ERROR_INVALID_DEVICE;
        *device_out = loc->id;
        return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST: *numa_out = fab__cu_current_numa(); return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (loc->id < 0 || loc->id >= fab__cu.host_numa_nodes)
            return CUDA_ERROR_INVALID_VALUE; /* no such NUMA node: a bad value, not a device */
        *numa_out = loc->id;
        return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        if (!current)
            return CUDA_ERROR_INVALID_VALUE;
        *numa_out = fab__cu_current_numa();
        return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    FAB__CU_ENTER();
    if (!granularity || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    int dev, numa;
    FAB__CU_TRY(fab__cu_location_place(&prop->location, true, &dev, &numa));
    /* Recommended equals minimum: host pages gain nothing from larger ones.
     * Host NUMA memory has the node's GPUs' granularity: NCCL sizes host
     * buffers by it and maps them beside device memory. */
    *granularity = (size_t)fab__cu.devices[dev].granularity;
    return CUDA_SUCCESS;
}

/* ---- create / release ---------------------------------------------------------- */

/* The memory is sealed at its final size and made mode 0400 before anyone
 * else can hold it, exactly as the daemon makes fabric memory
 * (src/common/memfd.h): no holder of an exported copy can change its size
 * under another's mapping, or reopen it with more access than its descriptor
 * carries. */
static CUresult fab__cu_memfd(size_t size, int *fd_out)
{
    return fab__memfd_create("fabmem-cuda", size, fd_out) == FAB_SUCCESS ? CUDA_SUCCESS
                                                                          : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    FAB__CU_ENTER();
    if (!handle || !prop || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->win32HandleMetaData)
        return CUDA_ERROR_INVALID_VALUE;
    int dev, numa;
    FAB__CU_TRY(fab__cu_location_place(&prop->location, false, &dev, &numa));
    unsigned types = (unsigned)prop->requestedHandleTypes;
    /* "HOST allocations are not IPC capable" (cuda.h, cuMemCreate). */
    if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST && types != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int ordinal = numa >= 0 ? FAB_HOST_NUMA_ORDINAL_BASE + numa : fab__cu.devices[dev].ordinal;
    /* Host memory's device is the one current at creation, which its
     * DEVICE_ORDINAL pointer attribute reports (as the runtime documents
     * for host memory: cudaPointerAttributes::device). */
    if (numa >= 0)
        (void)fab__cu_current_device(&dev);
    fab__cu_alloc_t *a = calloc(1, sizeof(*a));
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->size = size;
    a->device = dev;
    a->host_numa = numa;
    a->prop = *prop;
    a->fd = -1;
    a->refs = 1; /* the handle reference the call returns */
    a->handle_refs = 1;

    /* The topology's rules (handle types, granularity, the device's memory),
     * the same function the daemon applies; the bytes are counted at once,
     * so that two threads cannot both take the last of them. */
    fab__rw_wrlock(&fab__cu.lock);
    CUresult r = fab__cu_from_status(fab__topology_alloc_check(
        fab__cu.topology, fab__cu.node, ordinal, size, types, *fab__cu_used_of(a)));
    if (r == CUDA_SUCCESS) {
        a->counted = true;
        *fab__cu_used_of(a) += size;
    }
    fab__rw_unlock(&fab__cu.lock);
    if (r != CUDA_SUCCESS)
        goto free_alloc;

    /* The backing, with no lock held: for FABRIC that is a round trip to the
     * daemon, which must not stall calls that need none. */
    if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
        fab_client_t *client;
        r = fab__cu_client(&client);
        if (r == CUDA_SUCCESS) {
            fab_alloc_props_t fp = {.device_ordinal = ordinal, .size = size,
                                    .peer_access = FAB_ACCESS_READ_WRITE,
                                    .handle_type = (fab_handle_type_t)types};
            fab_region_t *region = NULL;
            fab_status_t s = fab_client_allocate(client, &fp, &region);
            /* No IMEX channel: NOT_PERMITTED, although attribute 128 says 1. */
            r = fab__cu_from_status(s);
            if (r == CUDA_SUCCESS) {
                a->region = region;
                a->fd = fab_region_fd(region);
            }
        }
    } else {
        r = fab__cu_memfd(size, &a->fd);
    }
    r = fab__cu_alloc_publish(a, r, handle);
    if (r == CUDA_SUCCESS)
        FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_ALLOC, *handle, size, dev, types, 0, __func__));
    return r;
free_alloc:
    free(a);
    return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    FAB__CU_ENTER();
    fab__cu_alloc_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(handle);
    if (!a) {
        FAB__CU_CHECK(fab__cu_check_stale_handle(handle, __func__));
        fab__rw_unlock(&fab__cu.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_ALLOC, handle, __func__));
    /* The seed refuses this; the driver does not. Say what will happen. */
    if (--a->handle_refs == 0 && a->fabric_exports > 0)
        fab__log(FAB__LOG_INFO,
                 "cuMemRelease(0x%llx): released with %u exported handles never imported "
                 "(an import after the memory is gone fails)",
                 (unsigned long long)a->id, a->fabric_exports);
    fab__cu_alloc_put(a, &dead);
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
    return CUDA_SUCCESS;
}

/* ---- export / import ------------------------------------------------------------ */

CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType,
                                      unsigned long long flags)
{
    FAB__CU_ENTER();
    if (!shareableHandle || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r;
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(handle);
    if (!a) {
        FAB__CU_CHECK(fab__cu_check_stale_handle(handle, __func__));
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    /* One type at a time. Windows' types do not exist on Linux:
     * NOT_SUPPORTED. NONE, several bits or unknown ones, and a type not
     * requested at cuMemCreate (DESIGN: "export of a type not requested ...
     * refused"): INVALID_VALUE. */
    if (handleType == CU_MEM_HANDLE_TYPE_WIN32 || handleType == CU_MEM_HANDLE_TYPE_WIN32_KMT) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    if ((handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
         handleType != CU_MEM_HANDLE_TYPE_FABRIC) ||
        !((unsigned)a->prop.requestedHandleTypes & (unsigned)handleType)) {
        r = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if (handleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        /* Memory made here was sealed when made (fab__cu_memfd); a FABRIC
         * allocation's memfd is the daemon's, sealed or not by it. */
        int src = a->mc ? fab__cu_alloc_mc_hooks->share_fd(a) : a->fd;
        int fd = fcntl(src, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        *(int *)shareableHandle = fd;
        r = CUDA_SUCCESS;
        goto out;
    }
    /* A round trip: hold a reference, not a handle reference (a cuMemRelease
     * meanwhile still ends the handle for every caller), and let go of the
     * lock. */
    fab__cu_alloc_get(a);
    fab_region_t *region = a->mc ? fab__cu_alloc_mc_hooks->share_region(a) : a->region;
    fab__rw_unlock(&fab__cu.lock);
    fab_handle_t h;
    r = fab__cu_from_status(fab_region_export(region, &h));
    if (r == CUDA_SUCCESS)
        memcpy(((CUmemFabricHandle *)shareableHandle)->data, h.bytes, FAB_HANDLE_BYTES);
    fab__cu_alloc_t *dead = NULL;
    fab__rw_wrlock(&fab__cu.lock);
    if (r == CUDA_SUCCESS) {
        a->fabric_exports++;
        FAB__CU_CHECK(fab__cu_check_export(handle, h.bytes));
    }
    fab__cu_alloc_put(a, &dead);
    fab__rw_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
    return r;

out:
    fab__rw_unlock(&fab__cu.lock);
    return r;
}

static int fab__cu_import_device(void)
{
    int dev = 0; /* with no current context, device 0 */
    (void)fab__cu_current_device(&dev);
    return dev;
}

static CUresult fab__cu_import_fd(int fd, fab__cu_alloc_t *a)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return CUDA_ERROR_INVALID_VALUE; /* not an open descriptor */
    const fab__cu_device_t *d = &fab__cu.devices[a->device];
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size % d->granularity != 0)
        return CUDA_ERROR_INVALID_HANDLE; /* open, but not memory a driver exported */
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->fd = own;
    /* mmap cannot give more than the fd was opened with; knowing it here lets
     * cuMemSetAccess refuse a write grant up front, as for a fabric import. */
    int fl = fcntl(own, F_GETFL);
    a->read_only = fl < 0 || (fl & O_ACCMODE) != O_RDWR;
    a->size = (size_t)st.st_size;
    a->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    FAB__CU_ENTER();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
        shHandleType != CU_MEM_HANDLE_TYPE_FABRIC)
        return CUDA_ERROR_INVALID_VALUE;
    if (shHandleType == CU_MEM_HANDLE_TYPE_FABRIC && !osHandle)
        return CUDA_ERROR_INVALID_VALUE;

    /* malloc and a literal, not calloc: glibc's calloc never takes from the
     * thread's cache of freed blocks (docs/cuda.md, "Performance of an
     * import"). */
    fab__cu_alloc_t *a = malloc(sizeof(*a));
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    int device = fab__cu_import_device();
    *a = (fab__cu_alloc_t){
        .device = device,
        .host_numa = -1, /* a handle does not say where its memory lives */
        .prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                 .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device}},
        .fd = -1,
        .refs = 1, /* the handle reference the call returns */
        .handle_refs = 1,
        .imported = true,
    };

    /* As in cuMemCreate: the daemon's round trip (or the fd's checks) with no
     * lock held, the insertion under it. */
    CUresult r;
    if (shHandleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        r = fab__cu_import_fd((int)(uintptr_t)osHandle, a);
    } else {
        fab_client_t *client;
        r = fab__cu_client(&client);
        if (r == CUDA_SUCCESS) {
            fab_handle_t h;
            memcpy(h.bytes, ((const CUmemFabricHandle *)osHandle)->data, FAB_HANDLE_BYTES);
            fab_region_t *region = NULL;
            r = fab__cu_from_status(
                fab_client_import(client, &h, fab__cu.devices[a->device].ordinal, &region));
            if (r == CUDA_SUCCESS) {
                a->region = region;
                a->fd = fab_region_fd(region);
                a->size = fab_region_size(region);
                a->read_only = fab_region_access(region) != FAB_ACCESS_READ_WRITE;
                a->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
            }
        }
    }
    /* A multicast object's token travels as any memory does; its importer
     * becomes a member of the object (if the daemon says it is one) rather
     * than a mapper of it. */
    if (r == CUDA_SUCCESS && fab__cu_alloc_mc_hooks)
        r = fab__cu_alloc_mc_hooks->adopt(a);
    if (r == CUDA_ERROR_INVALID_HANDLE && shHandleType == CU_MEM_HANDLE_TYPE_FABRIC)
        FAB__CU_CHECK(fab__cu_check_import_refused(osHandle, __func__));
    size_t size = a->size;
    int dev = a->device;
    unsigned types = (unsigned)a->prop.requestedHandleTypes;
    r = fab__cu_alloc_publish(a, r, handle);
    if (r == CUDA_SUCCESS)
        FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_IMPORT, *handle, size, dev, types, 0, __func__));
    return r;
}

/* ---- queries ------------------------------------------------------------------------ */

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                CUmemGenericAllocationHandle handle)
{
    FAB__CU_ENTER();
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    fab__rw_rdlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(handle);
    if (a)
        *prop = a->prop;
    fab__rw_unlock(&fab__cu.lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemGetInfo_v2(size_t *bytes_free, size_t *bytes_total)
{
    FAB__CU_ENTER();
    if (!bytes_free || !bytes_total)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    FAB__CU_TRY(fab__cu_current_device(&dev));
    fab__rw_rdlock(&fab__cu.lock);
    uint64_t t = fab__cu.devices[dev].total_memory, u = fab__cu_used[dev];
    fab__rw_unlock(&fab__cu.lock);
    *bytes_total = (size_t)t;
    *bytes_free = (size_t)(u < t ? t - u : 0);
    return CUDA_SUCCESS;
}

/* ---- bytes and ids shared with memory.c (cuMemAlloc) ------------------------ */

CUresult fab__cu_alloc_charge(int dev, size_t size)
{
    uint64_t total = fab__cu.devices[dev].total_memory, used = fab__cu_used[dev];
    if (used > total || size > total - used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fab__cu_used[dev] += size;
    return CUDA_SUCCESS;
}

void fab__cu_alloc_uncharge(int dev, size_t size)
{
    fab__cu_used[dev] -= size;
}

uint64_t fab__cu_alloc_new_id(void)
{
    uint64_t id = fab__cu_next_alloc_id;
    fab__cu_next_alloc_id += 0x10;
    return id;
}
