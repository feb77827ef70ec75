/* Multicast objects (NVLS): cuMulticastCreate, cuMulticastAddDevice,
 * cuMulticastBindMem, cuMulticastBindAddr, cuMulticastUnbind,
 * cuMulticastGetGranularity, and what a multicast handle does in alloc.c's
 * and vmm.c's calls (export, import, map, release).
 *
 * On a GPU a multicast object is a team of devices, each with memory bound
 * to it; a store through a multicast mapping goes to every bound buffer, a
 * load reads the local one. Here the object spans processes, so its state
 * lives in memory every member maps: a small control block (the team: its
 * size, numDevices, the devices added, and every bind of every process) in a
 * memfd. With FABRIC among its handle types the control block is a region of
 * the fabric, made by the daemon, so that its 64-byte fabric handle is
 * checked by the daemon on import as any other (domain, channel,
 * reachability); otherwise it is a sealed memfd made here, shared as a POSIX
 * fd. A process-shared robust mutex in the block guards it.
 *
 * A bind records where its memory can be reached from another process: the
 * fabric handle of a FABRIC allocation (the daemon hands out the memory
 * again on import, under its domain, channel and reachability rules); for
 * POSIX_FD-only memory, the handle the daemon signed when the memfd was
 * published to it (the IPC_PUBLISH message of legacy IPC: the daemon checks
 * the memfd's seals and size, hands it to an opener of the same node, and
 * forgets it when the binder's connection closes or the bind goes). Without
 * a daemon, a peer of the same user tries pidfd_getfd on the binder's pid
 * and descriptor, as NCCL and UCC do with POSIX handles.
 *
 * Stores: the multicast handle, as an allocation (alloc.h), is backed by a
 * per-process staging memfd, which cuMemMap maps at the multicast address;
 * a private snapshot remembers what the staging copy held after the last
 * synchronisation. At each synchronisation point (cuStreamSynchronize,
 * cuCtxSynchronize, cuEventSynchronize, the end of a launch, and
 * fab_launch_t.multicast->sync) the bytes that differ from the snapshot are
 * written to every bound buffer, this process's and its peers', and the
 * staging copy and snapshot are refreshed from this process's own bound
 * memory, so that loads through the mapping read the local copy. No signal
 * handler, no page protection.
 *
 * Lifecycle. A multicast object here is an allocation (alloc.c's table and
 * reference count) whose mc is set. cuMulticastCreate makes one; an import
 * of its control block makes one too (the adopt hook). Each local bind holds
 * a reference on its memory's allocation and keeps a mapping of it; unbind
 * drops both. When the object's last reference goes, alloc.c calls the
 * destroy hook (no lock held): every local bind is undone, the slot records
 * cleared, the control block unmapped and released.
 *
 *   create / import ─▶ add devices (all numDevices) ─▶ bind ... ─▶ sync ...
 *     ─▶ unbind ─▶ release (last reference: destroy)
 *
 * Locking: fab__cu_mc_mu guards the list of this process's objects and each
 * one's local binds; it is never held together with fab__cu.lock (a call
 * takes one, lets go, takes the other). The fabric client is called with
 * fab__cu_mc_mu held (a sync imports peers' memory) but never with
 * fab__cu.lock. The control block's own mutex is held only to read or
 * change the table, never across a round trip. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/check.h"
#include "src/cuda/multicast.h"
#include "src/cuda/entry.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fabmem/fabric.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology.h"
#include "src/fabric/ipc.h"

#define FAB__CU_MC_MAGIC 0x3154534143544c4eull /* "NLTCAST1" */
#define FAB__CU_MC_DEVICES 128 /* a team: an NVL72 rack's GPUs fit */
#define FAB__CU_MC_BINDS 256
#define FAB__CU_MC_TYPES (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC)

/* ---- the control block, shared by every member process ---------------- */

typedef struct fab__cu_mc_dev {
    int32_t node;    /* in the topology */
    int32_t ordinal; /* on that node */
} fab__cu_mc_dev_t;

typedef struct fab__cu_mc_bind {
    uint32_t used;
    int32_t pid; /* the binding process */
    int32_t fd;  /* its descriptor of the memory (for pidfd_getfd) */
    uint32_t has_handle; /* handle is the memory's fabric handle */
    fab__cu_mc_dev_t dev;
    uint64_t mc_offset, mem_offset, size;
    uint8_t handle[FAB_HANDLE_BYTES];
    uint32_t has_ipc; /* ipc is the daemon's handle of the published memfd */
    uint8_t ipc[FAB__IPC_HANDLE_BYTES];
} fab__cu_mc_bind_t;

typedef struct fab__cu_mc_shared {
    uint64_t magic;
    uint64_t size;         /* per device */
    uint64_t handle_types;
    uint64_t granularity;
    uint32_t num_devices;
    int32_t creator_node;
    pthread_mutex_t mu;    /* process-shared, robust */
    uint32_t ndevices;     /* added so far */
    uint32_t nbinds;       /* ever made: a bind closes the team */
    fab__cu_mc_dev_t devices[FAB__CU_MC_DEVICES];
    fab__cu_mc_bind_t binds[FAB__CU_MC_BINDS];
} fab__cu_mc_shared_t;

/* ---- this process's side of an object ---------------------------------- */

typedef struct fab__cu_mc_local {
    fab__cu_alloc_t *mem; /* holds a reference */
    int dev;              /* this process's device index */
    size_t mc_offset, mem_offset, size;
    uint8_t *map;         /* the bound bytes, mapped read-write */
    int slot;             /* in binds[] */
    bool published;       /* ipc is published to the daemon: withdrawn at unbind */
    uint8_t ipc[FAB__IPC_HANDLE_BYTES];
    struct fab__cu_mc_local *next;
} fab__cu_mc_local_t;

struct fab__cu_mc {
    fab_region_t *region; /* the control block's, when FABRIC */
    int ctl_fd;           /* the control block's memfd (owned unless region) */
    fab__cu_mc_shared_t *sh;
    size_t ctl_size;
    size_t size;
    uint64_t gran;        /* the granularity binds obey, read once */
    uint8_t *staging;     /* the staging memfd, mapped shared */
    uint8_t *snapshot;    /* what staging held after the last sync */
    fab__cu_mc_local_t *locals;
    struct fab__cu_mc *next; /* in fab__cu_mcs */
};

static pthread_mutex_t fab__cu_mc_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fab__cu_mc *fab__cu_mcs; /* guarded by fab__cu_mc_mu */
static int fab__cu_mc_live;            /* how many; read unlocked as a hint */

static void fab__cu_mc_lock(fab__cu_mc_shared_t *sh)
{
    /* A member that died holding the lock left the table as it was between
     * two whole-word writes of one slot at most; the table stays usable. */
    if (pthread_mutex_lock(&sh->mu) == EOWNERDEAD)
        pthread_mutex_consistent(&sh->mu);
}

static void fab__cu_mc_unlock(fab__cu_mc_shared_t *sh)
{
    pthread_mutex_unlock(&sh->mu);
}

/* The control block's size: whole granules of the device, so that a POSIX
 * import passes alloc.c's size check as memory does. */
static size_t fab__cu_mc_ctl_size(uint64_t gran)
{
    size_t need = sizeof(fab__cu_mc_shared_t);
    return (size_t)((need + gran - 1) / gran * gran);
}

/* How many devices were added, bounded by the table: every member process
 * writes the block, so no count in it is trusted as an index. */
static uint32_t fab__cu_mc_added(const fab__cu_mc_shared_t *sh)
{
    uint32_t n = __atomic_load_n(&sh->ndevices, __ATOMIC_ACQUIRE);
    return n < FAB__CU_MC_DEVICES ? n : FAB__CU_MC_DEVICES;
}

static fab__cu_mc_dev_t fab__cu_mc_self(int dev)
{
    return (fab__cu_mc_dev_t){fab__cu.node, fab__cu.devices[dev].ordinal};
}

static bool fab__cu_mc_dev_eq(fab__cu_mc_dev_t a, fab__cu_mc_dev_t b)
{
    return a.node == b.node && a.ordinal == b.ordinal;
}

/* Link a fully made object into this process's list. */
static void fab__cu_mc_link(struct fab__cu_mc *mc)
{
    pthread_mutex_lock(&fab__cu_mc_mu);
    mc->next = fab__cu_mcs;
    fab__cu_mcs = mc;
    __atomic_add_fetch(&fab__cu_mc_live, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fab__cu_mc_mu);
}

/* Map the staging memfd and make the snapshot: a fresh object's. */
static CUresult fab__cu_mc_staging(struct fab__cu_mc *mc, int staging_fd)
{
    void *p = mmap(NULL, mc->size, PROT_READ | PROT_WRITE, MAP_SHARED, staging_fd, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    mc->staging = p;
    mc->snapshot = calloc(1, mc->size);
    if (!mc->snapshot) {
        munmap(p, mc->size);
        mc->staging = NULL;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

static void fab__cu_mc_free(struct fab__cu_mc *mc)
{
    if (!mc)
        return;
    if (mc->staging)
        munmap(mc->staging, mc->size);
    free(mc->snapshot);
    if (mc->sh)
        munmap(mc->sh, mc->ctl_size);
    if (mc->region)
        fab_region_release(mc->region);
    else if (mc->ctl_fd >= 0)
        close(mc->ctl_fd);
    free(mc);
}

/* ---- the hooks alloc.c calls ---------------------------------------------- */

static int fab__cu_mc_share_fd(const fab__cu_alloc_t *a)
{
    return a->mc->ctl_fd;
}

static void *fab__cu_mc_share_region(const fab__cu_alloc_t *a)
{
    return a->mc->region;
}

/* Undo a local bind: clear its slot, unmap, and hand back its memory's
 * reference on *dead's list (the caller puts it under fab__cu.lock). */
static void fab__cu_mc_local_drop(struct fab__cu_mc *mc, fab__cu_mc_local_t *l)
{
    fab__cu_mc_lock(mc->sh);
    if (l->slot >= 0 && mc->sh->binds[l->slot].pid == (int32_t)getpid())
        memset(&mc->sh->binds[l->slot], 0, sizeof(mc->sh->binds[l->slot]));
    fab__cu_mc_unlock(mc->sh);
    munmap(l->map, l->size);
    if (l->published)
        (void)fab__client_ipc_withdraw(fab__cu.client, l->ipc);
}

/* Drop the references binds held on their memory. */
static void fab__cu_mc_put_mems(fab__cu_mc_local_t *list)
{
    if (!list)
        return;
    fab__cu_alloc_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    for (fab__cu_mc_local_t *l = list; l; l = l->next)
        fab__cu_alloc_put(l->mem, &dead);
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
    while (list) {
        fab__cu_mc_local_t *next = list->next;
        free(list);
        list = next;
    }
}

static void fab__cu_mc_destroy(fab__cu_alloc_t *a)
{
    struct fab__cu_mc *mc = a->mc;
    a->mc = NULL;
    pthread_mutex_lock(&fab__cu_mc_mu);
    for (struct fab__cu_mc **pp = &fab__cu_mcs; *pp; pp = &(*pp)->next) {
        if (*pp == mc) {
            *pp = mc->next;
            __atomic_sub_fetch(&fab__cu_mc_live, 1, __ATOMIC_RELEASE);
            break;
        }
    }
    fab__cu_mc_local_t *locals = mc->locals;
    mc->locals = NULL;
    for (fab__cu_mc_local_t *l = locals; l; l = l->next)
        fab__cu_mc_local_drop(mc, l);
    pthread_mutex_unlock(&fab__cu_mc_mu);
    fab__cu_mc_put_mems(locals);
    fab__cu_mc_free(mc);
}

/* Whether the block looks like a team's (its sizes are read once, by the
 * caller: any member may write them meanwhile). */
static bool fab__cu_mc_valid(const fab__cu_mc_shared_t *sh, size_t ctl_size)
{
    uint32_t num = __atomic_load_n(&sh->num_devices, __ATOMIC_RELAXED);
    return ctl_size >= sizeof(*sh) && sh->magic == FAB__CU_MC_MAGIC && num > 0 &&
           num <= FAB__CU_MC_DEVICES;
}

static bool fab__cu_mc_adopt(fab__cu_alloc_t *a)
{
    if (a->size < sizeof(fab__cu_mc_shared_t) || a->read_only)
        return false;
    /* Only the block's pages are mapped: every import passes here, and most
     * are plain memory, however large. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (sizeof(fab__cu_mc_shared_t) + page - 1) / page * page;
    if (len > a->size)
        len = a->size;
    fab__cu_mc_shared_t *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
    if (sh == MAP_FAILED)
        return false;
    if (!fab__cu_mc_valid(sh, len)) {
        munmap(sh, len);
        return false; /* ordinary memory */
    }
    /* Read once: every member may write the block after this. */
    size_t size = (size_t)__atomic_load_n(&sh->size, __ATOMIC_RELAXED);
    uint64_t types = __atomic_load_n(&sh->handle_types, __ATOMIC_RELAXED);
    uint64_t gran = __atomic_load_n(&sh->granularity, __ATOMIC_RELAXED);
    if (size == 0 || size > fab__cu.devices[0].total_memory || gran == 0 || size % gran != 0 ||
        (types & ~(uint64_t)FAB__CU_MC_TYPES) != 0) {
        munmap(sh, len);
        return false;
    }
    struct fab__cu_mc *mc = calloc(1, sizeof(*mc));
    int staging = -1;
    if (!mc || fab__memfd_create("fabmem-multicast", size, &staging) != FAB_SUCCESS) {
        free(mc);
        munmap(sh, len);
        return false;
    }
    mc->sh = sh;
    mc->ctl_size = len;
    mc->ctl_fd = a->fd;
    mc->region = a->region;
    mc->size = size;
    mc->gran = gran;
    if (fab__cu_mc_staging(mc, staging) != CUDA_SUCCESS) {
        close(staging);
        munmap(sh, len);
        free(mc);
        return false;
    }
    /* The handle now names the object: its fd the staging copy, its control
     * block held by mc. */
    a->region = NULL;
    a->fd = staging;
    a->size = mc->size;
    a->prop.requestedHandleTypes = (CUmemAllocationHandleType)types;
    a->mc = mc;
    fab__cu_mc_link(mc);
    return true;
}

static void fab__cu_mc_wait_handle(CUmemGenericAllocationHandle h);

static const fab__cu_alloc_mc_hooks_t fab__cu_mc_hooks = {
    .share_fd = fab__cu_mc_share_fd,
    .share_region = fab__cu_mc_share_region,
    .adopt = fab__cu_mc_adopt,
    .destroy = fab__cu_mc_destroy,
    .wait_team = fab__cu_mc_wait_handle,
};

__attribute__((constructor)) static void fab__cu_mc_install(void)
{
    fab__cu_alloc_mc_hooks = &fab__cu_mc_hooks;
    fab__cu_stream_sync_hook = fab__cu_mc_sync;
}

/* ---- checks ------------------------------------------------------------------ */

/* Whether this node's devices can multicast: an NVLink fabric that is up,
 * and FABRIC handles (the attribute's rule, device.c). */
static bool fab__cu_mc_supported(int dev)
{
    fab_node_info_t node;
    return fab_topology_node(fab__cu.topology, fab__cu.node, &node) == FAB_SUCCESS &&
           node.fabric_state == FAB_FABRIC_STATE_COMPLETED &&
           (fab__cu.devices[dev].handle_types & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
}

static int fab__cu_mc_device(void)
{
    int dev = 0; /* with no current context, device 0 */
    (void)fab__cu_current_device(&dev);
    return dev;
}

/* The multicast object a handle names, with a reference taken (the caller
 * puts it), or NULL. */
static fab__cu_alloc_t *fab__cu_mc_get(CUmemGenericAllocationHandle h)
{
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_alloc_find(h);
    if (a && a->mc)
        fab__cu_alloc_get(a);
    else
        a = NULL;
    pthread_rwlock_unlock(&fab__cu.lock);
    return a;
}

static void fab__cu_mc_put(fab__cu_alloc_t *a)
{
    fab__cu_alloc_t *dead = NULL;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_put(a, &dead);
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_alloc_destroy(dead);
}

/* ---- entry points --------------------------------------------------------------- */

CUresult cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
                                   CUmulticastGranularity_flags option)
{
    FAB__CU_ENTER();
    if (!granularity || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MULTICAST_GRANULARITY_MINIMUM &&
        option != CU_MULTICAST_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    if ((prop->handleTypes & ~(unsigned long long)FAB__CU_MC_TYPES) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* The device's page for both: recommended sizes buy a GPU fewer switch
     * entries, which host memory does not have; NVIDIA's 512 MiB would only
     * make every test's staging copy large. */
    *granularity = (size_t)fab__cu.devices[fab__cu_mc_device()].granularity;
    return CUDA_SUCCESS;
}

CUresult cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle,
                           const CUmulticastObjectProp *prop)
{
    FAB__CU_ENTER();
    if (!mcHandle || !prop || prop->flags != 0 || prop->numDevices == 0 || prop->size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((prop->handleTypes & ~(unsigned long long)FAB__CU_MC_TYPES) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = fab__cu_mc_device();
    const fab__cu_device_t *d = &fab__cu.devices[dev];
    if (prop->size % d->granularity != 0 || prop->size > d->total_memory)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->numDevices > FAB__CU_MC_DEVICES)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fab__cu_mc_supported(dev))
        return CUDA_ERROR_NOT_SUPPORTED;

    struct fab__cu_mc *mc = calloc(1, sizeof(*mc));
    fab__cu_alloc_t *a = calloc(1, sizeof(*a));
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    int staging = -1;
    if (!mc || !a)
        goto fail;
    mc->ctl_fd = -1;
    mc->size = prop->size;
    mc->gran = d->granularity;
    mc->ctl_size = fab__cu_mc_ctl_size(d->granularity);

    /* The control block: the daemon's memory when it must travel as a
     * fabric handle (with no lock held: a round trip), else a memfd here. */
    if (prop->handleTypes & CU_MEM_HANDLE_TYPE_FABRIC) {
        fab_client_t *client;
        r = fab__cu_client(&client);
        if (r != CUDA_SUCCESS)
            goto fail;
        fab_alloc_props_t fp = {.device_ordinal = d->ordinal, .size = mc->ctl_size,
                                .peer_access = FAB_ACCESS_READ_WRITE,
                                .handle_type = (fab_handle_type_t)prop->handleTypes};
        r = fab__cu_from_status(fab_client_allocate(client, &fp, &mc->region));
        if (r != CUDA_SUCCESS)
            goto fail;
        mc->ctl_fd = fab_region_fd(mc->region);
    } else if (fab__memfd_create("fabmem-multicast-team", mc->ctl_size, &mc->ctl_fd) !=
               FAB_SUCCESS) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    void *p = mmap(NULL, mc->ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED, mc->ctl_fd, 0);
    if (p == MAP_FAILED) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    mc->sh = p;
    fab__cu_mc_shared_t *sh = mc->sh;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&sh->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    sh->size = prop->size;
    sh->handle_types = prop->handleTypes;
    sh->granularity = d->granularity;
    sh->num_devices = prop->numDevices;
    sh->creator_node = fab__cu.node;
    /* Last, so that no importer takes a half-made block for a team. */
    __atomic_store_n(&sh->magic, FAB__CU_MC_MAGIC, __ATOMIC_RELEASE);

    r = CUDA_ERROR_OUT_OF_MEMORY;
    if (fab__memfd_create("fabmem-multicast", mc->size, &staging) != FAB_SUCCESS)
        goto fail;
    r = fab__cu_mc_staging(mc, staging);
    if (r != CUDA_SUCCESS)
        goto fail;
    a->size = mc->size;
    a->device = dev;
    a->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    a->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a->prop.location.id = dev;
    a->prop.requestedHandleTypes = (CUmemAllocationHandleType)prop->handleTypes;
    a->fd = staging;
    a->refs = 1;
    a->handle_refs = 1;
    a->mc = mc;
    fab__cu_mc_link(mc);
    return fab__cu_alloc_add(a, mcHandle); /* destroys a, and mc, on failure */

fail:
    if (staging >= 0)
        close(staging);
    fab__cu_mc_free(mc);
    free(a);
    return r;
}

CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev)
{
    FAB__CU_ENTER_DEVICE(dev);
    fab__cu_alloc_t *a = fab__cu_mc_get(mcHandle);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_mc_shared_t *sh = a->mc->sh;
    CUresult r = CUDA_SUCCESS;
    if (!fab__cu_mc_supported(dev)) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    /* The team is one NVLink domain: the creator's node and this one must
     * reach each other (the rule the daemon applies to fabric imports). */
    if (sh->creator_node != fab__cu.node &&
        fab_topology_path(fab__cu.topology, sh->creator_node, fab__cu.node) != FAB_SUCCESS) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    fab__cu_mc_dev_t me = fab__cu_mc_self(dev);
    fab__cu_mc_lock(sh);
    uint32_t added = fab__cu_mc_added(sh);
    for (uint32_t i = 0; i < added && r == CUDA_SUCCESS; i++) {
        if (fab__cu_mc_dev_eq(sh->devices[i], me))
            r = CUDA_ERROR_INVALID_VALUE; /* already a member */
    }
    if (r == CUDA_SUCCESS && (added >= sh->num_devices || added >= FAB__CU_MC_DEVICES ||
                              sh->nbinds > 0))
        r = CUDA_ERROR_INVALID_VALUE; /* the team is complete */
    if (r == CUDA_SUCCESS) {
        sh->devices[added] = me;
        __atomic_store_n(&sh->ndevices, added + 1, __ATOMIC_RELEASE);
    }
    fab__cu_mc_unlock(sh);
    if (r == CUDA_SUCCESS)
        (void)syscall(SYS_futex, &sh->ndevices, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
out:
    fab__cu_mc_put(a);
    return r;
}

/* Wait until every device of the team was added: the driver's bind blocks
 * until then (cuda.h). ndevices is the futex word; cuMulticastAddDevice
 * wakes every waiter, in any process (a shared, not private, futex). */
static void fab__cu_mc_wait_team(fab__cu_mc_shared_t *sh)
{
    for (;;) {
        uint32_t n = __atomic_load_n(&sh->ndevices, __ATOMIC_ACQUIRE);
        if (n >= sh->num_devices || n >= FAB__CU_MC_DEVICES)
            return;
        (void)syscall(SYS_futex, &sh->ndevices, FUTEX_WAIT, n, NULL, NULL, 0);
    }
}

static void fab__cu_mc_wait_handle(CUmemGenericAllocationHandle h)
{
    /* Every cuMemMap asks: a process with no multicast object pays nothing. */
    if (__atomic_load_n(&fab__cu_mc_live, __ATOMIC_ACQUIRE) == 0)
        return;
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    if (!a)
        return; /* memory, or no handle: cuMemMap decides */
    fab__cu_mc_wait_team(a->mc->sh);
    fab__cu_mc_put(a);
}

/* Whether pid still runs (a bind of a process that died is forgotten). */
static bool fab__cu_mc_alive(int32_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Bind [mem_offset, +size) of mem (a reference the caller hands over) at
 * mc_offset of a. */
static CUresult fab__cu_mc_bind(fab__cu_alloc_t *a, size_t mc_offset, fab__cu_alloc_t *mem,
                                size_t mem_offset, size_t size)
{
    struct fab__cu_mc *mc = a->mc;
    fab__cu_mc_shared_t *sh = mc->sh;
    uint64_t gran = mc->gran;
    if (size == 0 || size % gran || mc_offset % gran || mem_offset % gran ||
        size > mc->size || mc_offset > mc->size - size || size > mem->size ||
        mem_offset > mem->size - size || mem->mc || mem->read_only)
        return CUDA_ERROR_INVALID_VALUE;
    /* The node's Fabric Manager sets switch multicast up; without it the
     * driver's bind fails with ILLEGAL_STATE, and while it has not answered
     * yet with SYSTEM_NOT_READY (docs/cuda.md). */
    fab__cu_topology_refresh(); /* `fabmem fault` may have changed it */
    int32_t fm = 0;
    if (fab__topology_attribute(fab__cu.topology, fab__cu.node,
                                FAB__ATTRIBUTE_FABRIC_MANAGER_DOWN, &fm) &&
        fm != 0)
        return fm == 2 ? CUDA_ERROR_SYSTEM_NOT_READY : CUDA_ERROR_ILLEGAL_STATE;

    fab__cu_mc_wait_team(sh);

    fab__cu_mc_local_t *l = calloc(1, sizeof(*l));
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->mem = mem;
    l->dev = mem->device;
    l->mc_offset = mc_offset;
    l->mem_offset = mem_offset;
    l->size = size;
    l->slot = -1;
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mem->fd, (off_t)mem_offset);
    if (map == MAP_FAILED) {
        free(l);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    l->map = map;
    fab_handle_t fh;
    bool has_handle = mem->region && fab_region_export(mem->region, &fh) == FAB_SUCCESS;
    if (has_handle)
        FAB__CU_CHECK(fab__cu_check_driver_export(mem->id, fh.bytes));
    /* Memory made here reaches peers through the daemon, which takes a copy
     * of the memfd and checks it (no lock held: a round trip). */
    if (!has_handle && fab__cu.client &&
        fab__client_ipc_publish(fab__cu.client, FAB__IPC_KIND_MEM,
                                fab__cu.devices[mem->device].ordinal, mem->size, mem->fd,
                                l->ipc) == FAB_SUCCESS)
        l->published = true;

    fab__cu_mc_dev_t me = fab__cu_mc_self(mem->device);
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fab__cu_mc_mu);
    fab__cu_mc_lock(sh);
    bool member = false;
    uint32_t added = fab__cu_mc_added(sh);
    for (uint32_t i = 0; i < added; i++)
        member = member || fab__cu_mc_dev_eq(sh->devices[i], me);
    if (!member)
        r = CUDA_ERROR_INVALID_DEVICE; /* memory of a device not in the team */
    int free_slot = -1;
    for (int i = 0; i < FAB__CU_MC_BINDS && r == CUDA_SUCCESS; i++) {
        fab__cu_mc_bind_t *b = &sh->binds[i];
        if (b->used && !fab__cu_mc_alive(b->pid))
            memset(b, 0, sizeof(*b));
        if (!b->used) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (fab__cu_mc_dev_eq(b->dev, me) && b->mc_offset < mc_offset + size &&
            mc_offset < b->mc_offset + b->size)
            r = CUDA_ERROR_INVALID_VALUE; /* that device already has memory there */
    }
    if (r == CUDA_SUCCESS && free_slot < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        fab__cu_mc_bind_t *b = &sh->binds[free_slot];
        b->pid = (int32_t)getpid();
        b->fd = mem->fd;
        b->has_handle = has_handle;
        if (has_handle)
            memcpy(b->handle, fh.bytes, FAB_HANDLE_BYTES);
        b->has_ipc = l->published;
        if (l->published)
            memcpy(b->ipc, l->ipc, FAB__IPC_HANDLE_BYTES);
        b->dev = me;
        b->mc_offset = mc_offset;
        b->mem_offset = mem_offset;
        b->size = size;
        b->used = 1;
        sh->nbinds++;
        l->slot = free_slot;
        l->next = mc->locals;
        mc->locals = l;
        /* The multicast mapping reads the local copy from now on. */
        memcpy(mc->staging + mc_offset, l->map, size);
        memcpy(mc->snapshot + mc_offset, l->map, size);
    }
    fab__cu_mc_unlock(sh);
    pthread_mutex_unlock(&fab__cu_mc_mu);
    if (r != CUDA_SUCCESS) {
        munmap(map, size);
        if (l->published)
            (void)fab__client_ipc_withdraw(fab__cu.client, l->ipc);
        free(l);
    }
    return r;
}

CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                            CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
                            unsigned long long flags)
{
    FAB__CU_ENTER();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_alloc_t *a = fab__cu_mc_get(mcHandle);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *mem = fab__cu_alloc_find(memHandle);
    if (mem)
        fab__cu_alloc_get(mem); /* the bind's, if it succeeds */
    pthread_rwlock_unlock(&fab__cu.lock);
    CUresult r = mem ? fab__cu_mc_bind(a, mcOffset, mem, memOffset, size) : CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS && mem)
        fab__cu_mc_put(mem);
    fab__cu_mc_put(a);
    return r;
}

CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                             CUdeviceptr memptr, size_t size, unsigned long long flags)
{
    FAB__CU_ENTER();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* The allocation mapped at memptr and memptr's offset in it (a cuMemMap
     * mapping starts at offset 0 of its allocation). */
    CUmemGenericAllocationHandle mem;
    if (FAB__CU_INNER(cuMemRetainAllocationHandle(&mem, (void *)(uintptr_t)memptr)) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t base = 0;
    size_t len = 0;
    pthread_rwlock_rdlock(&fab__cu.lock);
    bool mapped = fab__cu_vmm_mapping((uintptr_t)memptr, &base, &len);
    pthread_rwlock_unlock(&fab__cu.lock);
    CUresult r = mapped ? FAB__CU_INNER(cuMulticastBindMem(mcHandle, mcOffset, mem,
                                                            (size_t)(memptr - base), size, 0))
                        : CUDA_ERROR_INVALID_VALUE;
    (void)FAB__CU_INNER(cuMemRelease(mem));
    return r;
}

CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset,
                           size_t size)
{
    FAB__CU_ENTER_DEVICE(dev);
    fab__cu_alloc_t *a = fab__cu_mc_get(mcHandle);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    struct fab__cu_mc *mc = a->mc;
    CUresult r = CUDA_ERROR_INVALID_VALUE; /* no bind of dev at exactly that range */
    fab__cu_mc_local_t *gone = NULL;
    if (size != 0 && size % mc->gran == 0 && mcOffset % mc->gran == 0 &&
        size <= mc->size && mcOffset <= mc->size - size) {
        pthread_mutex_lock(&fab__cu_mc_mu);
        for (fab__cu_mc_local_t **pp = &mc->locals; *pp; pp = &(*pp)->next) {
            fab__cu_mc_local_t *l = *pp;
            if (l->dev == (int)dev && l->mc_offset == mcOffset && l->size == size) {
                *pp = l->next;
                l->next = NULL;
                fab__cu_mc_local_drop(mc, l);
                gone = l;
                r = CUDA_SUCCESS;
                break;
            }
        }
        pthread_mutex_unlock(&fab__cu_mc_mu);
    }
    fab__cu_mc_put_mems(gone);
    fab__cu_mc_put(a);
    return r;
}

/* ---- reaching a bound buffer of any member ------------------------------------------ */

typedef struct fab__cu_mc_view {
    uint8_t *bytes;        /* the bind's first byte */
    void *map;             /* what to unmap (NULL: a local bind's own mapping) */
    size_t map_len;
    fab_region_t *region;  /* what to release */
    int fd;                /* what to close */
} fab__cu_mc_view_t;

static int fab__cu_mc_pidfd_getfd(int32_t pid, int32_t fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pidfd < 0)
        return -1;
    int got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    close(pidfd);
    return got;
#else
    (void)pid;
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* Open a view of bind b (a copy of the shared slot); false when its memory
 * cannot be reached (its process and memory are gone, or the kernel refuses
 * pidfd_getfd): logged once per process. */
static bool fab__cu_mc_view_open(const struct fab__cu_mc *mc, const fab__cu_mc_bind_t *b,
                                 int slot, fab__cu_mc_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->fd = -1;
    if (b->pid == (int32_t)getpid()) {
        for (const fab__cu_mc_local_t *l = mc->locals; l; l = l->next) {
            if (l->slot == slot) {
                v->bytes = l->map;
                return true;
            }
        }
        return false;
    }
    int fd = -1;
    if (b->has_handle && fab__cu.client) {
        fab_handle_t h;
        memcpy(h.bytes, b->handle, FAB_HANDLE_BYTES);
        if (fab_client_import(fab__cu.client, &h, fab__cu.devices[0].ordinal, &v->region) ==
            FAB_SUCCESS)
            fd = fab_region_fd(v->region);
    }
    if (fd < 0 && b->has_ipc && fab__cu.client &&
        fab__client_ipc_open(fab__cu.client, b->ipc, &fd, NULL, NULL, NULL) == FAB_SUCCESS)
        v->fd = fd;
    if (fd < 0 && !fab__cu.client && (fd = fab__cu_mc_pidfd_getfd(b->pid, b->fd)) >= 0)
        v->fd = fd;
    if (fd < 0) {
        static bool said;
        if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
            fab__log(FAB__LOG_WARN,
                     "multicast: the memory process %d bound cannot be reached (gone, "
                     "withdrawn, or, with no daemon, pidfd_getfd refused); its copy misses "
                     "this process's stores",
                     (int)b->pid);
        if (v->region)
            fab_region_release(v->region);
        return false;
    }
    /* The table is the members' word: a bind past the memory's end would
     * fault on the first store, so it is checked against the file. */
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && b->mem_offset <= (uint64_t)st.st_size &&
        b->size <= (uint64_t)st.st_size - b->mem_offset)
        p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)b->mem_offset);
    if (p == MAP_FAILED) {
        if (v->region)
            fab_region_release(v->region);
        if (v->fd >= 0)
            close(v->fd);
        return false;
    }
    v->map = p;
    v->map_len = b->size;
    v->bytes = p;
    return true;
}

static void fab__cu_mc_view_close(fab__cu_mc_view_t *v)
{
    if (v->map)
        munmap(v->map, v->map_len);
    if (v->region)
        fab_region_release(v->region);
    if (v->fd >= 0)
        close(v->fd);
}

/* A copy of the bind table, taken under the block's lock. */
static fab__cu_mc_bind_t *fab__cu_mc_binds(struct fab__cu_mc *mc)
{
    fab__cu_mc_bind_t *copy = malloc(sizeof(mc->sh->binds));
    if (!copy)
        return NULL;
    fab__cu_mc_lock(mc->sh);
    memcpy(copy, mc->sh->binds, sizeof(mc->sh->binds));
    fab__cu_mc_unlock(mc->sh);
    /* A bind outside the object is no bind (the block is every member's to
     * write; its ranges index this process's staging copy). */
    for (int i = 0; i < FAB__CU_MC_BINDS; i++) {
        fab__cu_mc_bind_t *b = &copy[i];
        if (b->used && (b->size == 0 || b->size > mc->size || b->mc_offset > mc->size - b->size))
            b->used = 0;
    }
    return copy;
}

/* ---- synchronisation ------------------------------------------------------------------- */

/* Write staging's bytes [off, off+len) to every bind that covers them. */
static void fab__cu_mc_push(struct fab__cu_mc *mc, const fab__cu_mc_bind_t *binds,
                            fab__cu_mc_view_t *views, bool *opened, bool *failed, size_t off,
                            size_t len)
{
    for (int i = 0; i < FAB__CU_MC_BINDS; i++) {
        const fab__cu_mc_bind_t *b = &binds[i];
        if (!b->used || off + len <= b->mc_offset || off >= b->mc_offset + b->size)
            continue;
        if (!opened[i] && !failed[i]) {
            if (fab__cu_mc_view_open(mc, b, i, &views[i]))
                opened[i] = true;
            else
                failed[i] = true;
        }
        if (!opened[i])
            continue;
        size_t lo = off > b->mc_offset ? off : (size_t)b->mc_offset;
        size_t hi = off + len < b->mc_offset + b->size ? off + len
                                                       : (size_t)(b->mc_offset + b->size);
        memcpy(views[i].bytes + (lo - b->mc_offset), mc->staging + lo, hi - lo);
    }
}

/* Pages are compared before any is written, so that a sync of a large
 * object that changed little touches (and so commits memory for) little. */
#define FAB__CU_MC_PAGE 4096u

static void fab__cu_mc_sync_one(struct fab__cu_mc *mc)
{
    fab__cu_mc_bind_t *binds = fab__cu_mc_binds(mc);
    fab__cu_mc_view_t *views = calloc(FAB__CU_MC_BINDS, sizeof(*views));
    bool *opened = calloc(FAB__CU_MC_BINDS, sizeof(bool));
    bool *failed = calloc(FAB__CU_MC_BINDS, sizeof(bool));
    if (binds && views && opened && failed) {
        /* Runs of changed bytes, found a page at a time; a page sent is a
         * page the snapshot has seen. */
        for (size_t at = 0; at < mc->size; at += FAB__CU_MC_PAGE) {
            size_t n = mc->size - at < FAB__CU_MC_PAGE ? mc->size - at : FAB__CU_MC_PAGE;
            if (memcmp(mc->staging + at, mc->snapshot + at, n) == 0)
                continue;
            size_t i = 0;
            while (i < n) {
                if (mc->staging[at + i] == mc->snapshot[at + i]) {
                    i++;
                    continue;
                }
                size_t j = i;
                while (j < n && mc->staging[at + j] != mc->snapshot[at + j])
                    j++;
                fab__cu_mc_push(mc, binds, views, opened, failed, at + i, j - i);
                i = j;
            }
            memcpy(mc->snapshot + at, mc->staging + at, n);
        }
        for (int i = 0; i < FAB__CU_MC_BINDS; i++) {
            if (opened[i])
                fab__cu_mc_view_close(&views[i]);
        }
    }
    /* (Out of memory: nothing was sent, and the snapshot still differs, so
     * the next sync sends it.) */
    free(binds);
    free(views);
    free(opened);
    free(failed);
    /* Loads read the local copy: where this process has memory bound, the
     * staging copy (and the snapshot with it) is refreshed from it, page by
     * page where they differ; elsewhere it keeps what was stored. */
    for (const fab__cu_mc_local_t *l = mc->locals; l; l = l->next) {
        for (size_t at = 0; at < l->size; at += FAB__CU_MC_PAGE) {
            size_t n = l->size - at < FAB__CU_MC_PAGE ? l->size - at : FAB__CU_MC_PAGE;
            uint8_t *st = mc->staging + l->mc_offset + at;
            if (memcmp(st, l->map + at, n) != 0) {
                memcpy(st, l->map + at, n);
                memcpy(mc->snapshot + l->mc_offset + at, l->map + at, n);
            }
        }
    }
}

void fab__cu_mc_sync(void)
{
    if (__atomic_load_n(&fab__cu_mc_live, __ATOMIC_ACQUIRE) == 0)
        return;
    pthread_mutex_lock(&fab__cu_mc_mu);
    for (struct fab__cu_mc *mc = fab__cu_mcs; mc; mc = mc->next)
        fab__cu_mc_sync_one(mc);
    pthread_mutex_unlock(&fab__cu_mc_mu);
}

/* ---- the kernel helpers --------------------------------------------------------------- */

static int fab__cu_mc_op_sync(void)
{
    fab__cu_mc_sync();
    return CUDA_SUCCESS;
}

/* Sum 32-bit elements [mc_addr, +4*count) over every bind; f32 or u32. */
static int fab__cu_mc_reduce(const void *mc_addr, void *out, size_t count, bool f32)
{
    if (!mc_addr || !out || count > SIZE_MAX / 4)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemGenericAllocationHandle h;
    if (FAB__CU_INNER(cuMemRetainAllocationHandle(&h, (void *)mc_addr)) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t base = 0;
    size_t len = 0;
    pthread_rwlock_rdlock(&fab__cu.lock);
    bool mapped = fab__cu_vmm_mapping((uintptr_t)mc_addr, &base, &len);
    pthread_rwlock_unlock(&fab__cu.lock);
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    (void)FAB__CU_INNER(cuMemRelease(h));
    if (!a)
        return CUDA_ERROR_INVALID_VALUE; /* not a multicast mapping */
    size_t off = (uintptr_t)mc_addr - base, bytes = count * 4;
    if (!mapped || off % 4 || bytes > a->mc->size || off > a->mc->size - bytes) {
        fab__cu_mc_put(a);
        return CUDA_ERROR_INVALID_VALUE;
    }
    memset(out, 0, bytes);
    struct fab__cu_mc *mc = a->mc;
    pthread_mutex_lock(&fab__cu_mc_mu);
    fab__cu_mc_bind_t *binds = fab__cu_mc_binds(mc);
    for (int i = 0; binds && i < FAB__CU_MC_BINDS; i++) {
        const fab__cu_mc_bind_t *b = &binds[i];
        if (!b->used || off + bytes <= b->mc_offset || off >= b->mc_offset + b->size)
            continue;
        fab__cu_mc_view_t v;
        if (!fab__cu_mc_view_open(mc, b, i, &v))
            continue;
        size_t lo = off > b->mc_offset ? off : (size_t)b->mc_offset;
        size_t hi = off + bytes < b->mc_offset + b->size ? off + bytes
                                                         : (size_t)(b->mc_offset + b->size);
        for (size_t at = lo; at < hi; at += 4) {
            size_t k = (at - off) / 4;
            const uint8_t *src = v.bytes + (at - b->mc_offset);
            if (f32) {
                float x;
                memcpy(&x, src, 4);
                ((float *)out)[k] += x;
            } else {
                uint32_t x;
                memcpy(&x, src, 4);
                ((uint32_t *)out)[k] += x;
            }
        }
        fab__cu_mc_view_close(&v);
    }
    pthread_mutex_unlock(&fab__cu_mc_mu);
    int r = binds ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    free(binds);
    fab__cu_mc_put(a);
    return r;
}

static int fab__cu_mc_reduce_f32(const void *mc_addr, float *out, size_t count)
{
    return fab__cu_mc_reduce(mc_addr, out, count, true);
}

static int fab__cu_mc_reduce_u32(const void *mc_addr, uint32_t *out, size_t count)
{
    return fab__cu_mc_reduce(mc_addr, out, count, false);
}

const fab_multicast_ops_t fab__cu_mc_ops = {
    .sync = fab__cu_mc_op_sync,
    .reduce_add_f32 = fab__cu_mc_reduce_f32,
    .reduce_add_u32 = fab__cu_mc_reduce_u32,
};
