/* The driver emulation's one process context (the CUDA API implies one): its
 * lock, whether cuInit succeeded, the devices of this node, and the fabric
 * client; the prologue every entry point starts with. state.c owns it.
 *
 * Modules, each a .c with its own header, in the order they may call one
 * another: a module calls only those above it and includes only their
 * headers, so includes point one way (vmm may use alloc; alloc never uses
 * vmm):
 *
 *   tree.h, idtable.h  an address-ordered AVL tree and an id hash table:
 *                      containers that know nothing of CUDA (tree.c,
 *                      idtable.c)
 *   src/base/rwlock.h  the one-word reader-writer lock fab__cu.lock is
 *                      (the fabric client's lock too)
 *   fault.h            FABMEM_FAULTS: the spec parser and the check every
 *                      prologue makes (fault.c; procaddress.c hands it the
 *                      entry points' names at load, fault.c's top comment)
 *   state.h            this context, cuInit, the error names (state.c)
 *   check.h            FABMEM_CHECK, the lifetime checker: records of what
 *                      the program must end, its reports, its SIGSEGV
 *                      handler (check.c, checkreport.c, checkfault.c,
 *                      which share check_impl.h; the modules below call
 *                      its hooks)
 *   device.h           contexts, the context stack, the current context
 *                      (device.c); the devices' queries and the topology
 *                      refresh (deviceinfo.c)
 *   stream.h           streams, their queues and workers, events,
 *                      cuCtxSynchronize (stream.c, streamapi.c, event.c,
 *                      which share stream_impl.h; their own lock, taken
 *                      after fab__cu.lock, never before)
 *   alloc.h            allocations, their handles and their one reference
 *                      count (alloc.c; uses the fabric client)
 *   vmm.h              reservations, mappings, access, and the retain that
 *                      finds an allocation by a mapped address (vmm.c)
 *   pool.h             stream-ordered memory pools: arenas, their
 *                      allocations, sharing (pool.c, poolapi.c,
 *                      poolshare.c, which share pool_impl.h; memory.c
 *                      asks pool.c about pool memory)
 *   memory.h           cuMemAlloc, host allocations and registrations,
 *                      pointer attributes of every kind (memory.c)
 *   rangehandle.c      handles for address ranges (cuMemGetHandleForAddressRange's
 *                      dma-buf fd) and cuMemMapArrayAsync (uses memory's and
 *                      vmm's backing lookups)
 *   multicast.h        multicast objects: cuMulticast*, their control
 *                      block shared by member processes, and the sync that
 *                      publishes multicast stores (multicast.c; alloc.c
 *                      and stream.c reach it through the hooks mcalloc.c
 *                      sets; mcobject.h, the record both files share)
 *   image.h            code images read for what they declare: PTX, cubin,
 *                      fatbin (image.c and its readers image_ptx.c,
 *                      image_elf.c, image_fatbin.c; no CUDA state, fuzzed
 *                      alone)
 *   plugin.h           the kernel plugins of FABMEM_KERNELS (plugin.c)
 *   module.h           modules, libraries, functions, globals (module.c;
 *                      globals are vmm's owned ranges); functions'
 *                      attributes and occupancy (funcattr.c)
 *   launch.h           launch checks and the run of a kernel's CPU
 *                      implementation (launch.c)
 *   copy.c             copies and memsets, as stream operations (uses
 *                      memory's range check)
 *   memop.c            stream memory operations (cuStreamWaitValue32 ...)
 *   ipc.h              legacy CUDA IPC through the daemon: cuIpc* (ipc.c;
 *                      uses memory's IPC records and stream's shared events)
 *   procaddress.c      cuGetProcAddress (knows every entry point)
 *   exporttable.c      cuGetExportTable, refused with a log line (no state;
 *                      docs/runtime.md)
 *
 * entry.h, apart, holds the prototypes of the exported cu* entry points:
 * each file that defines some includes it, so that the compiler checks them,
 * and procaddress.c to list them all.
 *
 * Each module keeps its own tables (device.c the contexts, alloc.c the
 * handles, vmm.c the reservations, memory.c its records), all guarded by
 * fab__cu.lock; streams and events (stream.c, streamapi.c, event.c) are
 * guarded by a mutex of their own (stream.c's top comment has the order).
 *
 * Locking: one reader-writer lock, fab__cu.lock (rwlock.h: one word, one
 * compare-and-swap to take and one to drop), guards all state. Calls that change state
 * take it for writing; copies and memsets take it for reading and hold it
 * while they touch memory, so that no other thread can unmap a range under a
 * copy (the copy then either finishes or was refused; it never faults).
 *
 * The fabric client is never called with fab__cu.lock held: a round trip to a
 * stalled daemon would otherwise stall every thread, even those whose calls
 * need no daemon. So a FABRIC create or import talks to the daemon first and
 * inserts the allocation under the lock after; an export takes a reference to
 * the allocation under the lock, unlocks, exports, and locks again to drop
 * it; the put that drops an allocation's last reference unlinks it under the
 * lock, and the caller releases its region after unlocking (alloc.h,
 * fab__cu_alloc_put and fab__cu_alloc_destroy). The client is connected once,
 * in cuInit's pthread_once, and never changes after, so reading it needs no
 * lock.
 *
 * Lock order: fab__cu.lock is never held together with the client's own lock,
 * in any order. */
#ifndef FAB_CUDA_STATE_H
#define FAB_CUDA_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "fabmem/fabric.h"
#include "src/cuda/cuda_abi.h"
#include "src/cuda/fault.h"
#include "src/base/rwlock.h"

#define FAB__CU_MAX_DEVICES 64

typedef struct fab__cu_device {
    int ordinal; /* on the node: what the daemon and the topology call it */
    char name[256];
    CUuuid uuid;
    uint64_t total_memory;
    uint64_t granularity;
    uint32_t handle_types; /* CU_MEM_HANDLE_TYPE_* bits */
    int compute_major;
    int compute_minor;
    int sm_count;
    uint32_t pci_domain, pci_bus, pci_device;
    uint32_t pci_device_id; /* device id << 16 | vendor id */
    int host_numa_id;       /* the host NUMA node nearest it (topology's rule) */
} fab__cu_device_t;

typedef struct fab__cu_state {
    fab__rwlock_t lock; /* rwlock.h */
    bool initialized; /* set once, by the first successful cuInit */
    int driver_version;
    int device_count;
    fab__cu_device_t devices[FAB__CU_MAX_DEVICES];
    uint64_t granularity_max; /* the largest device granularity (a reservation's alignment) */
    int host_numa_nodes; /* this node's host NUMA nodes, at least 1 */
    /* Set once, by the first cuInit or cuDriverGetVersion, and read-only
     * after: where the devices came from. With a daemon, its topology
     * (the client's cached copy) and the client; without, the local
     * config's, and client NULL. */
    bool fabric;                       /* a daemon answered: FABRIC sharing works */
    fab_client_t *client;              /* the connection to it, or NULL */
    /* the devices' source, for the rules; replaced by fab__cu_topology_refresh
     * when a field fault changed it. Atomic: readers take no lock. A topology
     * it pointed to stays, in the client, until the client closes, so what a
     * reader loaded stays valid. */
    const fab_topology_t *_Atomic topology;
    int node;                          /* this process's node in it */
} fab__cu_state_t;

extern fab__cu_state_t fab__cu;

/* The fabric client cuInit connected; CUDA_ERROR_NOT_SUPPORTED (said once
 * in the log) when no daemon answered then. */
CUresult fab__cu_client(fab_client_t **client_out);

/* The CUresult of the same number (fab_status_t is numbered as CUresult). */
CUresult fab__cu_from_status(fab_status_t status);

/* CUDA_SUCCESS once cuInit succeeded, else CUDA_ERROR_NOT_INITIALIZED. */
CUresult fab__cu_check_init(void);
/* As fab__cu_check_init, then CUDA_ERROR_INVALID_DEVICE unless dev is one of
 * this node's devices. */
CUresult fab__cu_check_device(CUdevice dev);

/* Return the call's error from the calling function, if it gives one. */
#define FAB__CU_TRY(call)                                                   \
    do {                                                                    \
        CUresult fab__cu_try_ = (call);                                     \
        if (fab__cu_try_ != CUDA_SUCCESS)                                   \
            return fab__cu_try_;                                            \
    } while (0)

/* The first line of every entry point but those the driver answers before
 * cuInit (cuInit, cuDriverGetVersion, cuGetErrorName/String,
 * cuGetProcAddress): returns CUDA_ERROR_NOT_INITIALIZED from the caller until
 * cuInit succeeded. The _DEVICE form, for calls that name a device, then
 * returns CUDA_ERROR_INVALID_DEVICE for one this node lacks. Entry points
 * that forward to another (an old ABI to its _v2) need neither. */
/* Both then fail the call if a FABMEM_FAULTS spec says so (fault.h): one
 * load and branch when none is armed. The check is made under the caller's
 * __func__; a helper that holds the prologue for several entry points
 * (copy.c's fab__cu_peer) has a name no spec can match, so each of those
 * entry points makes the check itself first, with FAB__CU_FAULT(). */
#define FAB__CU_ENTER()                                                     \
    do {                                                                    \
        FAB__CU_TRY(fab__cu_check_init());                                  \
        FAB__CU_FAULT();                                                    \
    } while (0)
#define FAB__CU_ENTER_DEVICE(dev)                                           \
    do {                                                                    \
        FAB__CU_TRY(fab__cu_check_device(dev));                             \
        FAB__CU_FAULT();                                                    \
    } while (0)

#endif /* FAB_CUDA_STATE_H */
