/* Legacy CUDA IPC: cuIpcGetMemHandle, cuIpcOpenMemHandle(_v2),
 * cuIpcCloseMemHandle, cuIpcGetEventHandle and cuIpcOpenEventHandle, between
 * processes of one node, through the fabric daemon (src/fabric/client_ipc.h).
 *
 * Memory. A cuMemAlloc allocation is a sealed memfd (memory.c). Its first
 * cuIpcGetMemHandle publishes a descriptor of it to the daemon, which keeps
 * it and answers with 64 handle bytes it signed; the bytes are cached in the
 * allocation's record, so later calls answer at once. cuMemFree withdraws
 * them (memory.c). cuIpcOpenMemHandle asks the daemon for the memfd the bytes
 * name and maps it at a fresh address, a record of memory.c's (so copies,
 * memsets and pointer attributes know it). An address inside an allocation
 * names the whole allocation, as its base does: the driver answers the same
 * bytes for both, and the open maps the base (callers such as CuPy's pool,
 * UCX and PyTorch send the offset apart). A handle is open at most once per
 * process, as with the driver: a second open before the close is
 * CUDA_ERROR_ALREADY_MAPPED.
 *
 * Lifecycle of an open: open (daemon round trip, map, entry) ─▶ close
 * (entry removed, mapping unmapped). The pages live while any process maps
 * them, whatever the publisher does.
 *
 * Locking: the table of opens is guarded by fab__cu.lock; the daemon is
 * asked with no lock held (state.h), and memory.c's calls take the lock
 * themselves, so this module never calls them holding it.
 *
 * Events. An interprocess event (CU_EVENT_INTERPROCESS) keeps its state in
 * a shared page (event.c); cuIpcGetEventHandle publishes that page's memfd
 * the same way, and cuIpcOpenEventHandle makes an event of this process over
 * the page another process published. */
#include "src/cuda/state.h"
#include "src/cuda/check.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/cuda/memory.h"
#include "src/cuda/ipc.h"
#include "src/cuda/entry.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/fabric/client_ipc.h"

_Static_assert(sizeof(CUipcMemHandle) == FAB__CLIENT_IPC_HANDLE_BYTES, "a handle is the daemon's bytes");
_Static_assert(sizeof(CUipcEventHandle) == FAB__CLIENT_IPC_HANDLE_BYTES, "a handle is the daemon's bytes");

typedef struct fab__cu_ipc_open {
    unsigned char handle[FAB__CLIENT_IPC_HANDLE_BYTES];
    CUdeviceptr base;
    struct fab__cu_ipc_open *next;
} fab__cu_ipc_open_t;

/* Guarded by fab__cu.lock. */
static fab__cu_ipc_open_t *fab__cu_ipc_opens;

CUresult fab__cu_ipc_client_missing(void)
{
    static int warned;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fab__log(FAB__LOG_WARN, "legacy CUDA IPC (cuIpc*) needs the fabric daemon, which "
                 "hands handles between processes, and none answered at cuInit "
                 "(FABMEM_SOCKET, FABMEM_NO_AUTOSTART): refused with CUDA_ERROR_NOT_SUPPORTED");
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* The client, or the refusal of a process without a daemon. */
static CUresult fab__cu_ipc_client(fab_client_t **client)
{
    *client = fab__cu.client; /* set once in cuInit, read-only after */
    return *client ? CUDA_SUCCESS : fab__cu_ipc_client_missing();
}

/* ---- memory --------------------------------------------------------------------- */

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    FAB__CU_ENTER();
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    fab_client_t *client;
    FAB__CU_TRY(fab__cu_ipc_client(&client));
    unsigned char bytes[FAB__CLIENT_IPC_HANDLE_BYTES];
    int fd, device;
    size_t size;
    uint64_t id;
    bool cached;
    uintptr_t base;
    FAB__CU_TRY(fab__cu_mem_ipc_source((uintptr_t)dptr, &base, &fd, &size, &device, &id, &cached,
                                       bytes));
    if (!cached) {
        fab_status_t s = fab__client_ipc_publish(client, FAB__CLIENT_IPC_KIND_MEM, device, size, fd, bytes);
        close(fd);
        if (s != FAB_SUCCESS)
            return fab__cu_from_status(s);
        unsigned char mine[FAB__CLIENT_IPC_HANDLE_BYTES];
        memcpy(mine, bytes, sizeof(mine));
        /* Freed meanwhile (bytes unchanged), or another thread published
         * first (bytes now its handle): ours goes. */
        if (!fab__cu_mem_ipc_cache(base, id, bytes)) {
            (void)fab__client_ipc_withdraw(client, mine);
            if (memcmp(mine, bytes, sizeof(mine)) == 0)
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    memcpy(pHandle->reserved, bytes, sizeof(bytes));
    return CUDA_SUCCESS;
}

/* The open of handle in this process, or NULL; the caller holds the lock. */
static fab__cu_ipc_open_t *fab__cu_ipc_find(const unsigned char *handle)
{
    for (fab__cu_ipc_open_t *o = fab__cu_ipc_opens; o; o = o->next) {
        if (memcmp(o->handle, handle, FAB__CLIENT_IPC_HANDLE_BYTES) == 0)
            return o;
    }
    return NULL;
}

/* Whether this process has handle open now. */
static bool fab__cu_ipc_is_open(const unsigned char *handle)
{
    fab__rw_rdlock(&fab__cu.lock);
    bool open = fab__cu_ipc_find(handle) != NULL;
    fab__rw_unlock(&fab__cu.lock);
    return open;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    FAB__CU_ENTER();
    if (!pdptr || (Flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    fab_client_t *client;
    FAB__CU_TRY(fab__cu_ipc_client(&client));
    const unsigned char *bytes = (const unsigned char *)handle.reserved;
    /* The driver maps a handle once per process: a second open before the
     * close is refused (users meet it as "resource already mapped"). */
    if (fab__cu_ipc_is_open(bytes))
        return CUDA_ERROR_ALREADY_MAPPED;
    fab__cu_ipc_open_t *o = calloc(1, sizeof(*o));
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    int fd;
    uint8_t kind;
    uint64_t size;
    fab_status_t s = fab__client_ipc_open(client, bytes, &fd, &kind, NULL, &size);
    if (s == FAB_SUCCESS && (kind != FAB__CLIENT_IPC_KIND_MEM || size == 0 || size > SIZE_MAX / 2)) {
        close(fd);
        s = FAB_ERROR_INVALID_VALUE; /* an event's handle */
    }
    if (s != FAB_SUCCESS) {
        free(o);
        return fab__cu_from_status(s);
    }
    CUdeviceptr base;
    CUresult r = fab__cu_mem_ipc_map(fd, (size_t)size, &base);
    if (r != CUDA_SUCCESS) {
        close(fd);
        free(o);
        return r;
    }
    /* Another thread of ours may have opened it while we asked: one
     * mapping per handle, so ours goes, as a second open would. */
    memcpy(o->handle, bytes, sizeof(o->handle));
    o->base = base;
    fab__rw_wrlock(&fab__cu.lock);
    bool raced = fab__cu_ipc_find(bytes) != NULL;
    if (!raced) {
        o->next = fab__cu_ipc_opens;
        fab__cu_ipc_opens = o;
    }
    fab__rw_unlock(&fab__cu.lock);
    if (raced) {
        (void)fab__cu_mem_ipc_unmap((uintptr_t)base);
        free(o);
        return CUDA_ERROR_ALREADY_MAPPED;
    }
    *pdptr = base;
    int dev = -1;
    (void)fab__cu_current_device(&dev);
    FAB__CU_CHECK(fab__cu_check_add(FAB__CU_CHECK_IPC_OPEN, base, (size_t)size, dev, 0, 0, __func__));
    return CUDA_SUCCESS;
}

/* cuda.h before 11.0 named the same call without _v2. */
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    return cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    FAB__CU_ENTER();
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    fab__rw_wrlock(&fab__cu.lock);
    fab__cu_ipc_open_t *o = NULL, **link = &fab__cu_ipc_opens;
    for (; *link; link = &(*link)->next) {
        if ((*link)->base == dptr) {
            o = *link;
            break;
        }
    }
    if (o)
        *link = o->next;
    fab__rw_unlock(&fab__cu.lock);
    if (!o) {
        FAB__CU_CHECK(fab__cu_check_stale_free(FAB__CU_CHECK_IPC_OPEN, (uintptr_t)dptr, __func__));
        return CUDA_ERROR_INVALID_VALUE;
    }
    free(o);
    FAB__CU_CHECK(fab__cu_check_release(FAB__CU_CHECK_IPC_OPEN, (uintptr_t)dptr, __func__));
    return fab__cu_mem_ipc_unmap((uintptr_t)dptr);
}

/* ---- events ---------------------------------------------------------------------- */

CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    FAB__CU_ENTER();
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    fab_client_t *client;
    FAB__CU_TRY(fab__cu_ipc_client(&client));
    unsigned char bytes[FAB__CLIENT_IPC_HANDLE_BYTES];
    int fd;
    bool cached;
    FAB__CU_TRY(fab__cu_event_ipc_source(event, &fd, &cached, bytes));
    if (!cached) {
        int device = 0;
        (void)fab__cu_current_device(&device);
        fab_status_t s = fab__client_ipc_publish(client, FAB__CLIENT_IPC_KIND_EVENT, device,
                                                 (uint64_t)sysconf(_SC_PAGESIZE), fd, bytes);
        close(fd);
        fab__cu_event_ipc_relock(event); /* the close dropped our page lock */
        if (s != FAB_SUCCESS)
            return fab__cu_from_status(s);
        unsigned char mine[FAB__CLIENT_IPC_HANDLE_BYTES];
        memcpy(mine, bytes, sizeof(mine));
        /* Destroyed meanwhile (bytes unchanged), or another thread
         * published first (bytes now its handle): ours goes. */
        if (!fab__cu_event_ipc_cache(event, bytes)) {
            (void)fab__client_ipc_withdraw(client, mine);
            if (memcmp(mine, bytes, sizeof(mine)) == 0)
                return CUDA_ERROR_INVALID_HANDLE;
        }
    }
    memcpy(pHandle->reserved, bytes, sizeof(bytes));
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    FAB__CU_ENTER();
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    FAB__CU_TRY(fab__cu_current_ctx(&ctx));
    fab_client_t *client;
    FAB__CU_TRY(fab__cu_ipc_client(&client));
    int fd;
    uint8_t kind;
    uint64_t size;
    fab_status_t s = fab__client_ipc_open(client, (const unsigned char *)handle.reserved, &fd,
                                          &kind, NULL, &size);
    if (s != FAB_SUCCESS)
        return fab__cu_from_status(s);
    if (kind != FAB__CLIENT_IPC_KIND_EVENT || size != (uint64_t)sysconf(_SC_PAGESIZE)) {
        close(fd);
        return CUDA_ERROR_INVALID_VALUE; /* a memory handle */
    }
    CUresult r = fab__cu_event_ipc_open(fd, phEvent);
    if (r != CUDA_SUCCESS)
        close(fd);
    return r;
}
