/* Multicast objects (NVLS), the team through the daemon: cuMulticastCreate,
 * cuMulticastAddDevice, cuMulticastBindMem, cuMulticastBindAddr,
 * cuMulticastUnbind, cuMulticastGetGranularity, the MC_* messages (through
 * the client's one call per message, src/fabric/client_mc.h), the
 * synchronisation that publishes stores and the kernel helpers. What a
 * multicast handle does in alloc.c's and vmm.c's calls (export, import, map,
 * release) is mcalloc.c's, through the hooks it sets; this comment has the
 * design of both.
 *
 * On a GPU a multicast object is a team of devices, each with memory bound
 * to it; a store through a multicast mapping goes to every bound buffer, a
 * load reads the local one. Here the object spans processes, and its state
 * is the daemon's (src/daemon/teams.h, the MC_* messages): membership,
 * the devices added, every bind's range and the memory behind it. No member
 * process writes anything another reads as the team's word, and none gets a
 * handle to another's memory: a member's stores reach the others' bound
 * ranges as the daemon copies them there, and a reduction is summed by the
 * daemon over the bound ranges. A multicast object needs the daemon: without
 * one cuMulticastCreate is NOT_SUPPORTED.
 *
 * A team has a token, memory whose inode the daemon records as the team's:
 * with FABRIC among its handle types a one-granule region of the fabric
 * (its 64-byte handle is checked on import as any other: domain, channel,
 * reachability), else a one-granule memfd the daemon makes and hands out
 * read-only. An export hands out the token; an import of memory the size of
 * a token asks the daemon (MC_JOIN, with the fd) whether it is a team's,
 * and only its answer makes the handle a multicast object: the bytes are
 * never read.
 *
 * What a member holds (MC_JOIN's reply): its staging memfd, read-write,
 * which cuMemMap maps at the multicast address; and a read-only shadow
 * memfd that only the daemon writes: the team's state (the futex a bind and
 * a map wait on), the snapshot of the staging copy at the last
 * synchronisation, and the sums of the last reduction.
 *
 * Stores: at each synchronisation point (cuStreamSynchronize,
 * cuCtxSynchronize, cuEventSynchronize, the end of a launch, and
 * fab_launch_t.multicast->sync) this process compares its staging copy with
 * the snapshot, and its own bound memory with the staging copy; where
 * anything differs it asks the daemon (MC_SYNC), which writes the bytes that
 * differ from the snapshot to every bound buffer, the process's and its
 * peers', and refreshes the staging copy and snapshot from this process's
 * own bound memory, so that loads through the mapping read the local copy.
 * A synchronisation with nothing to do costs no round trip. No signal
 * handler, no page protection.
 *
 * A kernel's multimem.st and multimem.red (program.c, fab__cu_mc_write) do
 * not wait for a synchronisation point: the engine hands over a warp's run
 * of consecutive elements, which goes into the staging copy, and a ranged
 * MC_SYNC (offset and bytes, and the operation of a red) has the daemon
 * write it into, or fold it into, every bound buffer, this process's and
 * its peers', before the instruction completes: one round trip per run. A
 * peer's kernel running meanwhile sees it in its own bound memory and
 * through multimem.ld_reduce, as NCCL's NVLS kernels need. The bytes travel
 * in the staging memfd the daemon made; the message names the range, which
 * the daemon checks against the team. An ordered st (.relaxed, .release,
 * .volatile) to the mapping goes the same way, a thread at a time (the
 * engine asks fab__cu_mc_is after each); weak stores, memcpy and memset
 * through the mapping stay in the staging copy until the next
 * synchronisation.
 *
 * Waits: a bind and a map of an incomplete team sleep on the state page's
 * device count (a futex the daemon wakes), bounded by FABMEM_TIMEOUT_MS; a
 * member lost before the team was complete, or the bound, ends the wait with
 * CUDA_ERROR_ILLEGAL_STATE.
 *
 * Lifecycle. A multicast object here is an allocation (alloc.c's table and
 * reference count) whose mc is set. cuMulticastCreate makes one; an import
 * of a team's token makes one too (the adopt hook). Each local bind holds a
 * reference on its memory's allocation and keeps a mapping of it (to see
 * whether a synchronisation has anything to do); unbind drops both. When the
 * object's last reference goes, alloc.c calls the destroy hook (no lock
 * held): the process leaves the team (MC_LEAVE, which undoes its binds),
 * unmaps, and releases the token.
 *
 *   create / import ─▶ add devices (all numDevices) ─▶ bind ... ─▶ sync ...
 *     ─▶ unbind ─▶ release (last reference: destroy)
 *
 * Locking: fab__cu_mc_mu guards the list of this process's objects and each
 * one's local binds; it is never held together with fab__cu.lock (a call
 * takes one, lets go, takes the other). The fabric client is called with
 * fab__cu_mc_mu held (a sync is a round trip) but never with fab__cu.lock. */
#include "src/cuda/state.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/alloc.h"
#include "src/cuda/vmm.h"
#include "src/cuda/check.h"
#include "src/cuda/multicast.h"
#include "src/cuda/mcobject.h"
#include "src/cuda/entry.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabmem/fabric.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_mc.h"

#define FAB__CU_MC_DEVICES 128 /* a team: an NVL72 rack's GPUs fit (the daemon's limit too) */
#define FAB__CU_MC_TYPES (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC)
#define FAB__CU_MC_PAGE 4096u  /* the shadow's first page is the state */

/* ---- this process's objects (their record is mcobject.h's) -------------- */

pthread_mutex_t fab__cu_mc_mu = PTHREAD_MUTEX_INITIALIZER;
struct fab__cu_mc *fab__cu_mcs; /* guarded by fab__cu_mc_mu */
int fab__cu_mc_live;            /* how many; read unlocked as a hint */

static const uint8_t *fab__cu_mc_snapshot(const struct fab__cu_mc *mc)
{
    return mc->shadow + FAB__CU_MC_PAGE;
}

static const uint8_t *fab__cu_mc_sums(const struct fab__cu_mc *mc)
{
    return mc->shadow + FAB__CU_MC_PAGE + mc->size;
}

/* One call of this membership (a fab__client_mc_* of fab__cu.client, made
 * only when there is one): its status as a CUresult. */
#define FAB__CU_MC_CALL(call) \
    (fab__cu.client ? fab__cu_from_status(call) : CUDA_ERROR_NOT_SUPPORTED)

/* Link a fully made object into this process's list. */
static void fab__cu_mc_link(struct fab__cu_mc *mc)
{
    pthread_mutex_lock(&fab__cu_mc_mu);
    mc->next = fab__cu_mcs;
    fab__cu_mcs = mc;
    __atomic_add_fetch(&fab__cu_mc_live, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fab__cu_mc_mu);
}

void fab__cu_mc_free(struct fab__cu_mc *mc)
{
    if (!mc)
        return;
    if (mc->member) {
        (void)FAB__CU_MC_CALL(fab__client_mc_leave(fab__cu.client, mc->member));
    }
    if (mc->staging)
        munmap(mc->staging, mc->size);
    if (mc->shadow)
        munmap(mc->shadow, mc->shadow_len);
    if (mc->staging_holes >= 0)
        close(mc->staging_holes);
    if (mc->shadow_holes >= 0)
        close(mc->shadow_holes);
    if (mc->region)
        fab_region_release(mc->region);
    else if (mc->ctl_fd >= 0)
        close(mc->ctl_fd);
    free(mc);
}

/* Join the team whose token is fd: MC_JOIN, then map what the reply
 * carries. *staging_out is the staging memfd (the caller's). NOT_FOUND:
 * the daemon knows no team by that token. */
static CUresult fab__cu_mc_join(struct fab__cu_mc *mc, int fd, int *staging_out)
{
    fab__client_mc_member_t m;
    fab_status_t s = fab__client_mc_join(fab__cu.client, fd, &m);
    if (s != FAB_SUCCESS)
        return fab__cu_from_status(s);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    mc->member = m.id;
    mc->size = (size_t)m.size;
    mc->gran = m.granularity;
    mc->num_devices = m.num_devices;
    mc->creator_node = m.creator_node;
    mc->types = m.handle_types;
    mc->shadow_len = FAB__CU_MC_PAGE + 2 * mc->size;
    struct stat st;
    if (m.staging_fd < 0 || m.shadow_fd < 0 || m.state_bytes != FAB__CU_MC_PAGE ||
        mc->size == 0 || mc->gran == 0 || fstat(m.shadow_fd, &st) != 0 ||
        (uint64_t)st.st_size != mc->shadow_len)
        goto fail; /* not what this library's daemon sends */
    void *p = mmap(NULL, mc->size, PROT_READ | PROT_WRITE, MAP_SHARED, m.staging_fd, 0);
    if (p == MAP_FAILED)
        goto fail;
    mc->staging = p;
    p = mmap(NULL, mc->shadow_len, PROT_READ, MAP_SHARED, m.shadow_fd, 0);
    if (p == MAP_FAILED)
        goto fail;
    mc->shadow = p;
    /* Not the descriptors received: lseek would move the offset they share
     * with the daemon's. A uid that may not reopen the daemon's memfds
     * compares every byte. */
    mc->staging_holes = fab__memfd_reopen_read_only(m.staging_fd);
    mc->shadow_holes = fab__memfd_reopen_read_only(m.shadow_fd);
    close(m.shadow_fd);
    *staging_out = m.staging_fd;
    return CUDA_SUCCESS;

fail:
    if (m.staging_fd >= 0)
        close(m.staging_fd);
    if (m.shadow_fd >= 0)
        close(m.shadow_fd);
    return r;
}

/* ---- the adopt hook (mcalloc.c) ---------------------------------------- */

CUresult fab__cu_mc_adopt(fab__cu_alloc_t *a)
{
    /* Only memory the size of a token is asked about: every import passes
     * here, and most are plain memory. The daemon's answer decides; the
     * bytes are never read. */
    if (!fab__cu.client || a->fd < 0 || a->size != fab__cu.devices[a->device].granularity)
        return CUDA_SUCCESS;
    /* Nor memory the daemon said, in its IMPORT reply, is no team's token:
     * the same answer, without a round trip of its own. */
    if (a->region != NULL && !fab__region_maybe_mc_token(a->region))
        return CUDA_SUCCESS;
    struct fab__cu_mc *mc = calloc(1, sizeof(*mc));
    if (!mc)
        return CUDA_ERROR_OUT_OF_MEMORY;
    mc->ctl_fd = mc->staging_holes = mc->shadow_holes = -1;
    int staging = -1;
    CUresult r = fab__cu_mc_join(mc, a->fd, &staging);
    if (r != CUDA_SUCCESS) {
        mc->member = 0;
        fab__cu_mc_free(mc);
        return r == CUDA_ERROR_NOT_FOUND ? CUDA_SUCCESS : r; /* NOT_FOUND: ordinary memory */
    }
    if (mc->size > fab__cu.devices[0].total_memory ||
        (mc->types & ~(uint32_t)FAB__CU_MC_TYPES) != 0) {
        close(staging);
        fab__cu_mc_free(mc);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    /* The handle now names the object: its fd the staging copy, its token
     * held by mc. */
    mc->ctl_fd = a->fd;
    mc->region = a->region;
    a->region = NULL;
    a->fd = staging;
    a->size = mc->size;
    a->read_only = false; /* the staging copy is this process's to write */
    a->prop.requestedHandleTypes = (CUmemAllocationHandleType)mc->types;
    a->mc = mc;
    fab__cu_mc_link(mc);
    return CUDA_SUCCESS;
}

/* ---- checks ------------------------------------------------------------------ */

/* Whether this node's devices can multicast: an NVLink fabric that is up,
 * and FABRIC handles (the attribute's rule, deviceinfo.c). */
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
    mc->ctl_fd = mc->staging_holes = mc->shadow_holes = -1;
    /* The team is the daemon's (round trips, no lock held): its token is a
     * region when it must travel as a fabric handle, else a memfd the
     * daemon makes. */
    fab_client_t *client;
    r = fab__cu_client(&client);
    if (r != CUDA_SUCCESS)
        goto fail;
    if (prop->handleTypes & CU_MEM_HANDLE_TYPE_FABRIC) {
        fab_alloc_props_t fp = {.device_ordinal = d->ordinal, .size = d->granularity,
                                .peer_access = FAB_ACCESS_READ_WRITE,
                                .handle_type = (fab_handle_type_t)prop->handleTypes};
        r = fab__cu_from_status(fab_client_allocate(client, &fp, &mc->region));
        if (r != CUDA_SUCCESS)
            goto fail;
    }
    r = fab__cu_from_status(fab__client_mc_create(client, mc->region, d->ordinal,
                                                  prop->numDevices, (uint32_t)prop->handleTypes,
                                                  prop->size, d->granularity, &mc->ctl_fd));
    if (r != CUDA_SUCCESS)
        goto fail;
    if (mc->region)
        mc->ctl_fd = fab_region_fd(mc->region);
    r = fab__cu_mc_join(mc, mc->ctl_fd, &staging);
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
    struct fab__cu_mc *mc = a->mc;
    CUresult r = CUDA_SUCCESS;
    if (!fab__cu_mc_supported(dev)) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    /* The team is one NVLink domain (the daemon checks it too, from its
     * own records). */
    if (mc->creator_node != fab__cu.node &&
        fab_topology_path(fab__cu.topology, mc->creator_node, fab__cu.node) != FAB_SUCCESS) {
        r = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    r = FAB__CU_MC_CALL(fab__client_mc_add(fab__cu.client, mc->member,
                                           fab__cu.devices[dev].ordinal));
out:
    fab__cu_mc_put(a);
    return r;
}

/* Wait until every device of the team was added: the driver's bind blocks
 * until then (cuda.h); the wait on the state page is the client's. */
CUresult fab__cu_mc_wait_team(const struct fab__cu_mc *mc)
{
    return fab__cu_from_status(fab__client_mc_wait_team(mc->shadow, mc->num_devices));
}

/* Bind [mem_offset, +size) of mem (a reference the caller hands over) at
 * mc_offset of a. */
static CUresult fab__cu_mc_bind(fab__cu_alloc_t *a, size_t mc_offset, fab__cu_alloc_t *mem,
                                size_t mem_offset, size_t size)
{
    struct fab__cu_mc *mc = a->mc;
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

    CUresult r = fab__cu_mc_wait_team(mc);
    if (r != CUDA_SUCCESS)
        return r;

    fab__cu_mc_local_t *l = calloc(1, sizeof(*l));
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->mem = mem;
    l->dev = mem->device;
    l->mc_offset = mc_offset;
    l->mem_offset = mem_offset;
    l->size = size;
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, mem->fd, (off_t)mem_offset);
    if (map == MAP_FAILED) {
        free(l);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    l->map = map;
    l->holes = fab__memfd_reopen_read_only(mem->fd);
    /* The daemon maps the bound range of the memory itself, checks the
     * range against the team and the memory, and refreshes the staging
     * copy from it; nobody else gets the memory. */
    pthread_mutex_lock(&fab__cu_mc_mu);
    r = fab__cu_from_status(fab__client_mc_bind(fab__cu.client, mc->member,
                                                fab__cu.devices[mem->device].ordinal, mem->fd,
                                                mem_offset, mc_offset, size));
    if (r == CUDA_SUCCESS) {
        l->next = mc->locals;
        mc->locals = l;
    }
    pthread_mutex_unlock(&fab__cu_mc_mu);
    if (r != CUDA_SUCCESS) {
        munmap(map, size);
        if (l->holes >= 0)
            close(l->holes);
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
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_alloc_t *mem = fab__cu_alloc_find(memHandle);
    if (mem)
        fab__cu_alloc_get(mem); /* the bind's, if it succeeds */
    fab__rw_unlock(&fab__cu.lock);
    CUresult r = mem ? fab__cu_mc_bind(a, mcOffset, mem, memOffset, size) : CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS && mem)
        fab__cu_mc_put(mem);
    fab__cu_mc_put(a);
    return r;
}

/* The allocation mapped at addr, retained in *h_out (the caller releases
 * it), and addr's offset in it (a cuMemMap mapping starts at offset 0 of
 * its allocation); in *room_out (may be NULL) how many bytes the mapping
 * holds from addr on. False, with nothing retained, when no mapping holds
 * addr. */
static bool fab__cu_mc_mapped_at(uintptr_t addr, CUmemGenericAllocationHandle *h_out,
                                 size_t *offset_out, size_t *room_out)
{
    if (FAB__CU_INNER(cuMemRetainAllocationHandle(h_out, (void *)addr)) != CUDA_SUCCESS)
        return false;
    uintptr_t base = 0;
    size_t len = 0;
    fab__rw_rdlock(&fab__cu.lock);
    bool mapped = fab__cu_vmm_mapping(addr, &base, &len);
    fab__rw_unlock(&fab__cu.lock);
    if (!mapped) {
        (void)FAB__CU_INNER(cuMemRelease(*h_out));
        return false;
    }
    *offset_out = (size_t)(addr - base);
    if (room_out)
        *room_out = len - (size_t)(addr - base);
    return true;
}

CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                             CUdeviceptr memptr, size_t size, unsigned long long flags)
{
    FAB__CU_ENTER();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemGenericAllocationHandle mem;
    size_t memOffset;
    if (!fab__cu_mc_mapped_at((uintptr_t)memptr, &mem, &memOffset, NULL))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = FAB__CU_INNER(cuMulticastBindMem(mcHandle, mcOffset, mem, memOffset, size, 0));
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
                gone = l;
                break;
            }
        }
        if (gone) {
            /* The daemon's refusal (a connection lost meanwhile, and the
             * bind with it) still leaves nothing bound here. */
            (void)FAB__CU_MC_CALL(fab__client_mc_unbind(fab__cu.client, mc->member,
                                                        fab__cu.devices[dev].ordinal, mcOffset,
                                                        size));
            r = CUDA_SUCCESS;
        }
        pthread_mutex_unlock(&fab__cu_mc_mu);
    }
    fab__cu_mc_put_mems(gone);
    fab__cu_mc_put(a);
    return r;
}

/* ---- synchronisation ------------------------------------------------------------------- */

/* Whether a synchronisation of mc has anything to do: a store since the
 * last (staging differs from the snapshot), or a peer's store into this
 * process's bound memory that the staging copy does not show yet. Only
 * what either side of a comparison ever held is read: an NVLS team is
 * hundreds of MiB a rank, a kernel writes a little of it, and reading a
 * page never written would allocate it. */
static bool fab__cu_mc_dirty(const struct fab__cu_mc *mc)
{
    uint64_t lo, hi;
    for (uint64_t from = 0; fab__memfd_written(mc->staging_holes, 0, mc->shadow_holes,
                                              FAB__CU_MC_PAGE, from, mc->size, FAB__CU_MC_PAGE,
                                              &lo, &hi);
         from = hi) {
        if (memcmp(mc->staging + lo, fab__cu_mc_snapshot(mc) + lo, hi - lo) != 0)
            return true;
    }
    for (const fab__cu_mc_local_t *l = mc->locals; l; l = l->next) {
        for (uint64_t from = 0; fab__memfd_written(l->holes, l->mem_offset, mc->staging_holes,
                                                  l->mc_offset, from, l->size, FAB__CU_MC_PAGE,
                                                  &lo, &hi);
             from = hi) {
            if (memcmp(mc->staging + l->mc_offset + lo, l->map + lo, hi - lo) != 0)
                return true;
        }
    }
    return false;
}

static void fab__cu_mc_sync_one(struct fab__cu_mc *mc)
{
    if (!fab__cu_mc_dirty(mc))
        return;
    CUresult r = FAB__CU_MC_CALL(fab__client_mc_sync(fab__cu.client, mc->member));
    if (r != CUDA_SUCCESS) {
        static bool said;
        if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
            fab__log(FAB__LOG_WARN, "multicast: the daemon did not publish this process's "
                     "stores (%d); its peers miss them", (int)r);
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

int fab__cu_mc_reduce(const void *mc_addr, void *out, size_t count, uint32_t op)
{
    size_t esize = fab__client_mc_elem_size(op);
    if (!mc_addr || !out || count > SIZE_MAX / esize)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemGenericAllocationHandle h;
    size_t off;
    if (!fab__cu_mc_mapped_at((uintptr_t)mc_addr, &h, &off, NULL))
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    (void)FAB__CU_INNER(cuMemRelease(h));
    if (!a)
        return CUDA_ERROR_INVALID_VALUE; /* not a multicast mapping */
    size_t bytes = count * esize;
    if (off % esize || bytes > a->mc->size || off > a->mc->size - bytes) {
        fab__cu_mc_put(a);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct fab__cu_mc *mc = a->mc;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fab__cu_mc_mu);
    /* The daemon sums the bound ranges into the shadow at the same offset;
     * a chunk at a time, as the request's count is 32 bits. */
    for (size_t done = 0; done < count && r == CUDA_SUCCESS;) {
        size_t n = count - done < (1u << 28) ? count - done : (1u << 28);
        r = FAB__CU_MC_CALL(fab__client_mc_reduce(
            fab__cu.client, mc->member, op, off + done * esize, (uint32_t)n));
        if (r == CUDA_SUCCESS)
            memcpy((uint8_t *)out + done * esize, fab__cu_mc_sums(mc) + off + done * esize,
                   n * esize);
        done += n;
    }
    pthread_mutex_unlock(&fab__cu_mc_mu);
    fab__cu_mc_put(a);
    return r;
}

/* [addr, +bytes) of one mapping of a multicast object: into this process's
 * staging copy, then the daemon's ranged MC_SYNC writes it into every bound
 * buffer (op 0), or folds it into them (op, FAB__CLIENT_MC_*), before this
 * returns. */
static CUresult fab__cu_mc_write_one(uintptr_t addr, const uint8_t *in, size_t bytes,
                                     uint32_t op, size_t *done_out)
{
    CUmemGenericAllocationHandle h;
    size_t off, room;
    if (!fab__cu_mc_mapped_at(addr, &h, &off, &room))
        return CUDA_ERROR_INVALID_VALUE;
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    (void)FAB__CU_INNER(cuMemRelease(h));
    if (!a)
        return CUDA_ERROR_INVALID_VALUE; /* not a multicast mapping */
    struct fab__cu_mc *mc = a->mc;
    size_t esize = op ? fab__client_mc_elem_size(op) : 1;
    size_t n = bytes < room ? bytes : room;
    n -= n % esize;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (n != 0 && off % esize == 0 && n <= mc->size && off <= mc->size - n &&
        n / esize <= UINT32_MAX) {
        pthread_mutex_lock(&fab__cu_mc_mu);
        memcpy(mc->staging + off, in, n);
        r = op ? FAB__CU_MC_CALL(fab__client_mc_red(fab__cu.client, mc->member, op, off,
                                                    (uint32_t)(n / esize)))
               : FAB__CU_MC_CALL(fab__client_mc_publish(fab__cu.client, mc->member, off, n));
        pthread_mutex_unlock(&fab__cu_mc_mu);
    }
    fab__cu_mc_put(a);
    *done_out = n;
    return r;
}

int fab__cu_mc_write(uintptr_t addr, const void *in, size_t bytes, uint32_t op)
{
    CUresult r = CUDA_SUCCESS;
    /* consecutive addresses may lie in more than one mapping */
    for (size_t done = 0, n = 0; done < bytes && r == CUDA_SUCCESS; done += n)
        r = fab__cu_mc_write_one(addr + done, (const uint8_t *)in + done, bytes - done, op, &n);
    return r;
}

bool fab__cu_mc_is(uintptr_t addr)
{
    if (__atomic_load_n(&fab__cu_mc_live, __ATOMIC_ACQUIRE) == 0)
        return false; /* the engine asks at every ordered store: no object, no lookup */
    CUmemGenericAllocationHandle h;
    if (FAB__CU_INNER(cuMemRetainAllocationHandle(&h, (void *)addr)) != CUDA_SUCCESS)
        return false;
    fab__cu_alloc_t *a = fab__cu_mc_get(h);
    (void)FAB__CU_INNER(cuMemRelease(h));
    if (a)
        fab__cu_mc_put(a);
    return a != NULL;
}

static int fab__cu_mc_reduce_f32(const void *mc_addr, float *out, size_t count)
{
    return fab__cu_mc_reduce(mc_addr, out, count, FAB__CLIENT_MC_SUM_F32);
}

static int fab__cu_mc_reduce_u32(const void *mc_addr, uint32_t *out, size_t count)
{
    return fab__cu_mc_reduce(mc_addr, out, count, FAB__CLIENT_MC_SUM_U32);
}

const fab_multicast_ops_t fab__cu_mc_ops = {
    .sync = fab__cu_mc_op_sync,
    .reduce_add_f32 = fab__cu_mc_reduce_f32,
    .reduce_add_u32 = fab__cu_mc_reduce_u32,
};
