/* The fabric paths of four libraries, each re-created from the library's
 * published source as the sequence of driver calls it makes (fresh code, not
 * the library's), run by several processes on several trays of
 * examples/nvl72.ini:
 *
 * - NVSHMEM's symmetric heap: one reservation holding every PE's heap at
 *   pe * heap_size, grown chunk by chunk, each chunk exported with FABRIC,
 *   gathered, imported and mapped at the same offset in every PE; entry
 *   points looked up through cuGetProcAddress, as NVSHMEM's wrapper does.
 * - PyTorch's expandable segments: a reservation for the whole device, mapped
 *   segment by segment as the allocator grows, a segment unmapped and
 *   released when the cache is emptied and mapped again, and the segment
 *   shared with another process, which maps every handle at its own
 *   reservation (FABRIC across trays; POSIX fd on one tray, taken with
 *   pidfd_getfd as PyTorch does).
 * - TensorRT-LLM's MNNVL workspace with multicast (McastDeviceMemory): a
 *   unicast buffer per rank, every rank's mapped side by side, a multicast
 *   object created by rank 0, imported by the others, each adding its device
 *   and binding its buffer; a Lamport-style write into every peer's slot and
 *   a store through the multicast mapping seen by every rank.
 * - UCX's cuda_ipc memory keys: for an address inside VMM memory it finds the
 *   allocation (cuMemGetAddressRange, cuPointerGetAttributes: legacy IPC
 *   capability, allowed handle types, pool), retains its handle, exports it
 *   FABRIC and packs base, length and device uuid; for cuMemAlloc memory a
 *   legacy IPC handle; for pool memory the pool's FABRIC handle and the
 *   pointer's export data. The peer opens each key and reads at the offset.
 *
 * Every rank runs the same body: rank 0 in the test process, the others in
 * helpers (this binary re-run), with a star of socket pairs for the
 * all-gather and the barrier. A body returns 0 or the number of the step
 * that failed (and prints the call), so a helper's exit status names it. */
#include "cuda_test.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define MAX_RANKS 8

/* The ranks' links: a helper holds one socket to rank 0; rank 0 holds one to
 * each helper. */
typedef struct comm {
    int rank, size;
    int up;               /* helper: to rank 0 */
    int down[MAX_RANKS];  /* rank 0: to rank r (index r) */
} comm_t;

/* Every rank contributes len bytes; all[r * len] receives rank r's. */
static int allgather(const comm_t *c, const void *mine, void *all, size_t len)
{
    unsigned char *out = all;
    if (c->rank != 0) {
        if (fab_test_send(c->up, mine, len) != 0)
            return -1;
        return fab_test_recv(c->up, out, len * (size_t)c->size);
    }
    memcpy(out, mine, len);
    for (int r = 1; r < c->size; r++)
        if (fab_test_recv(c->down[r], out + (size_t)r * len, len) != 0)
            return -1;
    for (int r = 1; r < c->size; r++)
        if (fab_test_send(c->down[r], out, len * (size_t)c->size) != 0)
            return -1;
    return 0;
}

static int barrier(const comm_t *c)
{
    char all[MAX_RANKS];
    return allgather(c, "b", all, 1);
}

#define STEP(call, n)                                                                   \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char *name_ = "?";                                                    \
            cuGetErrorName(r_, &name_);                                                 \
            fprintf(stderr, "rank %d: step %d: %s -> %s\n", c->rank, n, #call, name_);  \
            return (n);                                                                 \
        }                                                                               \
    } while (0)
#define CHECK(cond, n)                                                                  \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "rank %d: step %d: %s is false\n", c->rank, n, #cond);      \
            return (n);                                                                 \
        }                                                                               \
    } while (0)

static int rank_init(const comm_t *c)
{
    CUcontext ctx;
    STEP(cuInit(0), 1);
    STEP(cuDevicePrimaryCtxRetain(&ctx, 0), 2);
    STEP(cuCtxSetCurrent(ctx), 3);
    return 0;
}

static uint32_t load_u32(CUdeviceptr p)
{
    uint32_t v = 0xdeadbeef;
    return cuMemcpyDtoH(&v, p, sizeof(v)) == CUDA_SUCCESS ? v : 0xdeadbeef;
}

static CUresult store_u32(CUdeviceptr p, uint32_t v)
{
    return cuMemcpyHtoD(p, &v, sizeof(v));
}

/* ---- NVSHMEM: the symmetric heap ---------------------------------------- */

#define HEAP_CHUNKS 2

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*export_fn)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                              unsigned long long);
typedef CUresult (*import_fn)(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType);

static int nvshmem_heap(const comm_t *c)
{
    /* NVSHMEM's wrapper finds cuGetProcAddress by its exported name, which
     * is CUDA 11.3's ABI (no symbol status), and looks every call up with it
     * at the version it was built for. */
    typedef CUresult (*lookup_fn)(const char *, void **, int, cuuint64_t);
    void *sym = dlsym(RTLD_DEFAULT, "cuGetProcAddress");
    CHECK(sym != NULL, 10);
    lookup_fn lookup;
    memcpy(&lookup, &sym, sizeof(lookup)); /* ISO C has no object-to-function cast */
    create_fn create = NULL;
    export_fn export_ = NULL;
    import_fn import_ = NULL;
    STEP(lookup("cuMemCreate", (void **)&create, 12000, CU_GET_PROC_ADDRESS_DEFAULT), 11);
    STEP(lookup("cuMemExportToShareableHandle", (void **)&export_, 12000,
                CU_GET_PROC_ADDRESS_DEFAULT),
         12);
    STEP(lookup("cuMemImportFromShareableHandle", (void **)&import_, 12000,
                CU_GET_PROC_ADDRESS_DEFAULT),
         13);
    CHECK(create && export_ && import_, 14);
    /* A name the driver lacks is an error with that ABI, never a success
     * with a NULL pointer that the wrapper would take for the function. */
    void *none = &none;
    CHECK(lookup("cuNoSuchEntryPoint", &none, 12000, CU_GET_PROC_ADDRESS_DEFAULT) ==
              CUDA_ERROR_NOT_FOUND,
          15);
    CHECK(none == NULL, 15);

    int vmm = 0, fabric = 0;
    STEP(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0), 16);
    STEP(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0), 17);
    CHECK(vmm == 1 && fabric == 1, 18);

    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    size_t chunk = 0;
    STEP(cuMemGetAllocationGranularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), 19);
    size_t heap = chunk * HEAP_CHUNKS; /* each PE's share of the reservation */
    CUdeviceptr base = 0;
    STEP(cuMemAddressReserve(&base, heap * (size_t)c->size, chunk, 0, 0), 20);

    CUmemGenericAllocationHandle h[MAX_RANKS][HEAP_CHUNKS];
    CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    /* The heap grows a chunk at a time; every growth is exchanged. */
    for (int k = 0; k < HEAP_CHUNKS; k++) {
        STEP(create(&h[c->rank][k], chunk, &prop, 0), 21);
        CUdeviceptr mine = base + (size_t)c->rank * heap + (size_t)k * chunk;
        STEP(cuMemMap(mine, chunk, 0, h[c->rank][k], 0), 22);
        STEP(cuMemSetAccess(mine, chunk, &rw, 1), 23);
        CUmemFabricHandle fh, all[MAX_RANKS];
        STEP(export_(&fh, h[c->rank][k], CU_MEM_HANDLE_TYPE_FABRIC, 0), 24);
        CHECK(allgather(c, &fh, all, sizeof(fh)) == 0, 25);
        for (int pe = 0; pe < c->size; pe++) {
            if (pe == c->rank)
                continue;
            CUdeviceptr at = base + (size_t)pe * heap + (size_t)k * chunk;
            STEP(import_(&h[pe][k], &all[pe], CU_MEM_HANDLE_TYPE_FABRIC), 26);
            STEP(cuMemMap(at, chunk, 0, h[pe][k], 0), 27);
            STEP(cuMemSetAccess(at, chunk, &rw, 1), 28);
        }
        CHECK(barrier(c) == 0, 29);
    }
    /* A put: my number into my slot of every PE's heap, in both chunks, at
     * the same symmetric offset. */
    for (int pe = 0; pe < c->size; pe++)
        for (int k = 0; k < HEAP_CHUNKS; k++)
            STEP(store_u32(base + (size_t)pe * heap + (size_t)k * chunk + 4u * (size_t)c->rank,
                           (uint32_t)(100 * k + c->rank + 1)),
                 30);
    STEP(cuCtxSynchronize(), 31);
    CHECK(barrier(c) == 0, 32);
    for (int from = 0; from < c->size; from++)
        for (int k = 0; k < HEAP_CHUNKS; k++)
            CHECK(load_u32(base + (size_t)c->rank * heap + (size_t)k * chunk + 4u * (size_t)from) ==
                      (uint32_t)(100 * k + from + 1),
                  33);
    CHECK(barrier(c) == 0, 34);
    /* Teardown: unmap every chunk, release every handle, free the range. */
    for (int pe = 0; pe < c->size; pe++)
        for (int k = 0; k < HEAP_CHUNKS; k++) {
            STEP(cuMemUnmap(base + (size_t)pe * heap + (size_t)k * chunk, chunk), 35);
            STEP(cuMemRelease(h[pe][k]), 36);
        }
    STEP(cuMemAddressFree(base, heap * (size_t)c->size), 37);
    return 0;
}

/* ---- PyTorch: expandable segments --------------------------------------- */

#define SEGMENTS 4

/* What PyTorch's share() sends: the segment size, the handle count, and per
 * handle either the fabric handle or the exporter's pid and fd number. */
typedef struct segment_share {
    uint64_t segment_size;
    uint32_t handles;
    uint32_t fabric;
    int32_t pid;
    int32_t fd[SEGMENTS];
    CUmemFabricHandle fh[SEGMENTS];
} segment_share_t;

/* The handle type the allocator picks: FABRIC when the device says it can
 * and a trial creation succeeds, else POSIX fd. */
static unsigned segment_handle_type(const comm_t *c, size_t size, bool want_fabric)
{
    int fabric = 0;
    if (!want_fabric ||
        cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0) !=
            CUDA_SUCCESS ||
        !fabric)
        return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle probe;
    CUresult r = cuMemCreate(&probe, size, &prop, 0);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "rank %d: FABRIC refused, POSIX fd instead\n", c->rank);
        return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    }
    cuMemRelease(probe);
    return CU_MEM_HANDLE_TYPE_FABRIC;
}

static int map_segment(const comm_t *c, CUdeviceptr base, size_t seg, int i, unsigned type,
                       CUmemGenericAllocationHandle *h)
{
    CUmemAllocationProp prop = cut_prop(type, 0);
    CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    STEP(cuMemCreate(h, seg, &prop, 0), 40);
    STEP(cuMemMap(base + (size_t)i * seg, seg, 0, *h, 0), 41);
    STEP(cuMemSetAccess(base + (size_t)i * seg, seg, &rw, 1), 42);
    return 0;
}

static int pytorch_expandable(const comm_t *c, bool fabric)
{
    size_t seg = cut_granularity(0); /* kLargeBuffer in PyTorch; one granule here */
    size_t total = 0, free_ = 0;
    STEP(cuMemGetInfo(&free_, &total), 43);
    if (c->rank != 0) {
        /* fromShared: a reservation of its own, every handle imported and
         * mapped in order, then read. */
        segment_share_t s;
        CHECK(fab_test_recv(c->up, &s, sizeof(s)) == 0, 44);
        CHECK(s.segment_size == seg && s.handles == SEGMENTS - 1, 45);
        CUdeviceptr base = 0;
        STEP(cuMemAddressReserve(&base, seg * s.handles, 0, 0, 0), 46);
        CUmemGenericAllocationHandle h[SEGMENTS];
        CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        int pidfd = -1;
        if (!s.fabric) {
            pidfd = (int)syscall(SYS_pidfd_open, (pid_t)s.pid, 0);
            CHECK(pidfd >= 0, 47);
        }
        for (uint32_t i = 0; i < s.handles; i++) {
            if (s.fabric) {
                STEP(cuMemImportFromShareableHandle(&h[i], &s.fh[i], CU_MEM_HANDLE_TYPE_FABRIC), 48);
            } else {
                int fd = (int)syscall(SYS_pidfd_getfd, pidfd, s.fd[i], 0);
                CHECK(fd >= 0, 49);
                STEP(cuMemImportFromShareableHandle(&h[i], (void *)(uintptr_t)fd,
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                     50);
                close(fd);
            }
            STEP(cuMemMap(base + i * seg, seg, 0, h[i], 0), 51);
        }
        if (pidfd >= 0)
            close(pidfd);
        STEP(cuMemSetAccess(base, seg * s.handles, &rw, 1), 52);
        for (uint32_t i = 0; i < s.handles; i++)
            CHECK(load_u32(base + i * seg + seg - 4) == 0x5e600000u + i, 53);
        CHECK(barrier(c) == 0, 54);
        for (uint32_t i = 0; i < s.handles; i++) {
            STEP(cuMemUnmap(base + i * seg, seg), 55);
            STEP(cuMemRelease(h[i]), 56);
        }
        STEP(cuMemAddressFree(base, seg * s.handles), 57);
        return 0;
    }
    /* The segment: room for the whole device plus an eighth, as the
     * allocator reserves; capped at 1024 segments (2 GiB here), since the
     * emulation's reservation is real address space and valgrind's is
     * smaller than an emulated GPU's memory. */
    unsigned type = segment_handle_type(c, seg, fabric);
    CHECK(type == (fabric ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          58);
    size_t max_handles = (total + total / 8 + seg - 1) / seg;
    if (max_handles > 1024)
        max_handles = 1024;
    CHECK(max_handles >= SEGMENTS, 59);
    CUdeviceptr base = 0;
    STEP(cuMemAddressReserve(&base, seg * max_handles, 0, 0, 0), 60);
    CUmemGenericAllocationHandle h[SEGMENTS];
    /* Grow to two segments, write, empty the cache of the second, grow to
     * SEGMENTS - 1 again: the range is mapped piece by piece. */
    for (int i = 0; i < 2; i++) {
        int rc = map_segment(c, base, seg, i, type, &h[i]);
        if (rc)
            return rc;
    }
    STEP(store_u32(base + seg - 4, 0x5e600000u), 61);
    STEP(cuStreamSynchronize(NULL), 62);
    STEP(cuMemUnmap(base + seg, seg), 63);
    STEP(cuMemRelease(h[1]), 64);
    for (int i = 1; i < SEGMENTS - 1; i++) {
        int rc = map_segment(c, base, seg, i, type, &h[i]);
        if (rc)
            return rc;
        STEP(store_u32(base + (size_t)i * seg + seg - 4, 0x5e600000u + (uint32_t)i), 65);
    }
    STEP(cuCtxSynchronize(), 66);
    /* share() */
    segment_share_t s;
    memset(&s, 0, sizeof(s));
    s.segment_size = seg;
    s.handles = SEGMENTS - 1;
    s.fabric = type == CU_MEM_HANDLE_TYPE_FABRIC;
    s.pid = (int32_t)getpid();
    for (int i = 0; i < SEGMENTS - 1; i++) {
        if (s.fabric)
            STEP(cuMemExportToShareableHandle(&s.fh[i], h[i], CU_MEM_HANDLE_TYPE_FABRIC, 0), 67);
        else
            STEP(cuMemExportToShareableHandle(&s.fd[i], h[i],
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 68);
    }
    if (!s.fabric)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* pidfd_getfd under Yama */
    for (int r = 1; r < c->size; r++)
        CHECK(fab_test_send(c->down[r], &s, sizeof(s)) == 0, 69);
    CHECK(barrier(c) == 0, 70);
    for (int i = 0; i < SEGMENTS - 1; i++) {
        if (!s.fabric)
            close(s.fd[i]);
        STEP(cuMemUnmap(base + (size_t)i * seg, seg), 71);
        STEP(cuMemRelease(h[i]), 72);
    }
    STEP(cuMemAddressFree(base, seg * max_handles), 73);
    return 0;
}

static int pytorch_fabric(const comm_t *c)
{
    return pytorch_expandable(c, true);
}

static int pytorch_posix(const comm_t *c)
{
    return pytorch_expandable(c, false);
}

/* ---- TensorRT-LLM: the MNNVL workspace with multicast ------------------- */

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static int trtllm_mcast(const comm_t *c)
{
    int mc_ok = 0, fabric = 0;
    STEP(cuDeviceGetAttribute(&mc_ok, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0), 80);
    STEP(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0), 81);
    CHECK(mc_ok == 1 && fabric == 1, 82); /* McastDeviceMemory throws otherwise */

    CUmulticastObjectProp mprop;
    memset(&mprop, 0, sizeof(mprop));
    mprop.numDevices = (unsigned)c->size;
    mprop.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    CUmemAllocationProp uprop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    size_t mc_gran = 0, uc_gran = 0;
    STEP(cuMulticastGetGranularity(&mc_gran, &mprop, CU_MULTICAST_GRANULARITY_RECOMMENDED), 83);
    STEP(cuMemGetAllocationGranularity(&uc_gran, &uprop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), 84);
    size_t gran = mc_gran > uc_gran ? mc_gran : uc_gran;
    size_t size = round_up(4096 + (size_t)c->size * sizeof(uint32_t), gran);
    mprop.size = size;

    /* Unicast: each rank's buffer, gathered, imported and mapped side by
     * side in one reservation. */
    CUmemGenericAllocationHandle uc[MAX_RANKS];
    STEP(cuMemCreate(&uc[c->rank], size, &uprop, 0), 85);
    CUmemFabricHandle fh, all[MAX_RANKS];
    STEP(cuMemExportToShareableHandle(&fh, uc[c->rank], CU_MEM_HANDLE_TYPE_FABRIC, 0), 86);
    CHECK(allgather(c, &fh, all, sizeof(fh)) == 0, 87);
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            STEP(cuMemImportFromShareableHandle(&uc[r], &all[r], CU_MEM_HANDLE_TYPE_FABRIC), 88);

    /* Multicast: rank 0 creates and exports; the handle goes round as one
     * more gather, in which only rank 0's entry counts. */
    CUmemGenericAllocationHandle mc = 0;
    CUmemFabricHandle mfh;
    memset(&mfh, 0, sizeof(mfh));
    if (c->rank == 0) {
        STEP(cuMulticastCreate(&mc, &mprop), 89);
        STEP(cuMemExportToShareableHandle(&mfh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0), 90);
    }
    CHECK(allgather(c, &mfh, all, sizeof(mfh)) == 0, 91);
    if (c->rank != 0)
        STEP(cuMemImportFromShareableHandle(&mc, &all[0], CU_MEM_HANDLE_TYPE_FABRIC), 92);
    STEP(cuMulticastAddDevice(mc, 0), 93);
    CHECK(barrier(c) == 0, 94); /* every device added before any bind */

    CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUdeviceptr uc_base = 0, mc_ptr = 0;
    STEP(cuMemAddressReserve(&uc_base, size * (size_t)c->size, gran, 0, 0), 95);
    for (int r = 0; r < c->size; r++)
        STEP(cuMemMap(uc_base + (size_t)r * size, size, 0, uc[r], 0), 96);
    STEP(cuMemSetAccess(uc_base, size * (size_t)c->size, &rw, 1), 97);
    CUdeviceptr mine = uc_base + (size_t)c->rank * size;
    STEP(cuMemsetD8(mine, 0, size), 98);
    STEP(cuMulticastBindMem(mc, 0, uc[c->rank], 0, size, 0), 99);
    STEP(cuMemAddressReserve(&mc_ptr, size, gran, 0, 0), 100);
    STEP(cuMemMap(mc_ptr, size, 0, mc, 0), 101);
    STEP(cuMemSetAccess(mc_ptr, size, &rw, 1), 102);
    STEP(cuCtxSynchronize(), 103);
    CHECK(barrier(c) == 0, 104);

    /* The one-shot allreduce's exchange: my value into my slot of every
     * peer's buffer, through the unicast mappings. */
    for (int r = 0; r < c->size; r++)
        STEP(store_u32(uc_base + (size_t)r * size + 4096 + 4u * (size_t)c->rank,
                       (uint32_t)(c->rank + 1) * 7u),
             105);
    STEP(cuCtxSynchronize(), 106);
    CHECK(barrier(c) == 0, 107);
    uint32_t sum = 0;
    for (int r = 0; r < c->size; r++)
        sum += load_u32(mine + 4096 + 4u * (size_t)r);
    CHECK(sum == 7u * (uint32_t)(c->size * (c->size + 1) / 2), 108);
    /* The multicast path: rank 0 stores the sum through the multicast
     * mapping; every rank reads it from its own buffer. */
    if (c->rank == 0) {
        STEP(store_u32(mc_ptr, sum), 109);
        STEP(cuCtxSynchronize(), 110);
    }
    CHECK(barrier(c) == 0, 111);
    STEP(cuCtxSynchronize(), 111);
    CHECK(load_u32(mine) == sum, 112);
    CHECK(load_u32(mc_ptr) == sum, 113);
    CHECK(barrier(c) == 0, 114);

    /* Teardown in the driver's order. */
    STEP(cuMulticastUnbind(mc, 0, 0, size), 115);
    STEP(cuMemUnmap(mc_ptr, size), 116);
    STEP(cuMemAddressFree(mc_ptr, size), 117);
    for (int r = 0; r < c->size; r++) {
        STEP(cuMemUnmap(uc_base + (size_t)r * size, size), 118);
        STEP(cuMemRelease(uc[r]), 119);
    }
    STEP(cuMemAddressFree(uc_base, size * (size_t)c->size), 120);
    STEP(cuMemRelease(mc), 121);
    return 0;
}

/* ---- UCX: cuda_ipc memory keys ------------------------------------------ */

enum { KEY_LEGACY = 1, KEY_VMM = 2, KEY_MEMPOOL = 3 };

/* The packed remote key: what the peer needs to open the memory. */
typedef struct rkey {
    uint32_t type;
    int32_t pid;
    CUdeviceptr base;
    size_t len;
    size_t offset; /* of the registered address in [base, base + len) */
    CUuuid uuid;
    union {
        CUipcMemHandle legacy;
        CUmemFabricHandle fabric;
    } h;
    CUmemPoolPtrExportData ptr; /* KEY_MEMPOOL */
} rkey_t;

/* mkey_pack for the address addr. */
static int ucx_pack(const comm_t *c, CUdeviceptr addr, rkey_t *k)
{
    memset(k, 0, sizeof(*k));
    k->pid = (int32_t)getpid();
    STEP(cuMemGetAddressRange(&k->base, &k->len, addr), 130);
    k->offset = (size_t)(addr - k->base);
    unsigned long long buffer_id = 0;
    STEP(cuPointerGetAttribute(&buffer_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, addr), 131);
    CHECK(buffer_id != 0, 132);
    /* The boolean attribute is written as one byte (docs/cuda.md, "Pointer
     * attributes"): the int that receives it starts at 0, as NCCL's does. */
    int legacy = 0;
    unsigned long long allowed = 0;
    CUmemoryPool pool = NULL;
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                    CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                                    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
    void *data[3] = {&legacy, &allowed, &pool};
    STEP(cuPointerGetAttributes(3, attrs, data, addr), 133);
    if (legacy) {
        k->type = KEY_LEGACY;
        STEP(cuIpcGetMemHandle(&k->h.legacy, k->base), 134);
    } else {
        CHECK(allowed & CU_MEM_HANDLE_TYPE_FABRIC, 135);
        CUmemGenericAllocationHandle h;
        if (cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)addr) == CUDA_SUCCESS) {
            k->type = KEY_VMM;
            CUresult r = cuMemExportToShareableHandle(&k->h.fabric, h, CU_MEM_HANDLE_TYPE_FABRIC, 0);
            STEP(cuMemRelease(h), 136); /* the retain's reference */
            STEP(r, 137);
        } else {
            CHECK(pool != NULL, 138);
            k->type = KEY_MEMPOOL;
            STEP(cuMemPoolExportToShareableHandle(&k->h.fabric, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0),
                 139);
            STEP(cuMemPoolExportPointer(&k->ptr, k->base), 140);
        }
    }
    CUdevice dev;
    STEP(cuCtxGetDevice(&dev), 141);
    STEP(cuDeviceGetUuid(&k->uuid, dev), 142);
    return 0;
}

/* The peer's side: open the key, read the word at its offset, close. */
static int ucx_open_and_read(const comm_t *c, const rkey_t *k, uint32_t *got)
{
    CUdeviceptr ptr = 0;
    CUmemGenericAllocationHandle h = 0;
    CUmemoryPool pool = NULL;
    CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    if (k->type == KEY_LEGACY) {
        STEP(cuIpcOpenMemHandle(&ptr, k->h.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), 150);
    } else if (k->type == KEY_VMM) {
        STEP(cuMemImportFromShareableHandle(&h, (void *)&k->h.fabric, CU_MEM_HANDLE_TYPE_FABRIC), 151);
        STEP(cuMemAddressReserve(&ptr, k->len, 0, 0, 0), 152);
        STEP(cuMemMap(ptr, k->len, 0, h, 0), 153);
        STEP(cuMemSetAccess(ptr, k->len, &rw, 1), 154);
    } else {
        STEP(cuMemPoolImportFromShareableHandle(&pool, (void *)&k->h.fabric,
                                                CU_MEM_HANDLE_TYPE_FABRIC, 0),
             155);
        STEP(cuMemPoolSetAccess(pool, &rw, 1), 156);
        STEP(cuMemPoolImportPointer(&ptr, pool, (CUmemPoolPtrExportData *)&k->ptr), 157);
    }
    *got = load_u32(ptr + k->offset);
    if (k->type == KEY_LEGACY) {
        STEP(cuIpcCloseMemHandle(ptr), 158);
    } else if (k->type == KEY_VMM) {
        STEP(cuMemUnmap(ptr, k->len), 159);
        STEP(cuMemAddressFree(ptr, k->len), 160);
        STEP(cuMemRelease(h), 161);
    } else {
        STEP(cuMemFree(ptr), 162);
        STEP(cuMemPoolDestroy(pool), 163);
    }
    return 0;
}

static int ucx_keys(const comm_t *c)
{
    const size_t word = 3 * 1024 + 12; /* a registered address inside each buffer */
    if (c->rank != 0) {
        rkey_t k[3];
        CHECK(fab_test_recv(c->up, k, sizeof(k)) == 0, 170);
        uint32_t want[3] = {0x0c0001u, 0x0c0002u, 0x0c0003u};
        for (int i = 0; i < 3; i++) {
            uint32_t got = 0;
            /* Legacy IPC stays on its node: only the VMM and pool keys
             * travel between trays. */
            if (k[i].type == KEY_LEGACY && strcmp(getenv("FABMEM_NODE"), "tray00") != 0)
                continue;
            int rc = ucx_open_and_read(c, &k[i], &got);
            if (rc)
                return rc;
            CHECK(got == want[i], 171);
        }
        return barrier(c) == 0 ? 0 : 172;
    }
    /* VMM memory as UCX's cuda_copy allocator makes it with fabric on. */
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    size_t g = cut_granularity(0);
    CUmemGenericAllocationHandle vh;
    STEP(cuMemCreate(&vh, g, &prop, 0), 173);
    CUdeviceptr vmm = 0;
    CUmemAccessDesc rw = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    STEP(cuMemAddressReserve(&vmm, g, 0, 0, 0), 174);
    STEP(cuMemMap(vmm, g, 0, vh, 0), 175);
    STEP(cuMemSetAccess(vmm, g, &rw, 1), 176);
    /* cuMemAlloc memory: the legacy key. */
    CUdeviceptr dev = 0;
    STEP(cuMemAlloc(&dev, 8192), 177);
    /* Pool memory of a FABRIC pool. */
    CUmemPoolProps pp;
    memset(&pp, 0, sizeof(pp));
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = 0;
    CUmemoryPool pool;
    STEP(cuMemPoolCreate(&pool, &pp), 178);
    CUdeviceptr pooled = 0;
    STEP(cuMemAllocFromPoolAsync(&pooled, 8192, pool, NULL), 179);
    STEP(cuStreamSynchronize(NULL), 180);

    CUdeviceptr at[3] = {dev + word, vmm + word, pooled + word};
    rkey_t k[3];
    for (int i = 0; i < 3; i++) {
        STEP(store_u32(at[i], 0x0c0001u + (uint32_t)i), 181);
        int rc = ucx_pack(c, at[i], &k[i]);
        if (rc)
            return rc;
        CHECK(k[i].offset == word, 182);
    }
    CHECK(k[0].type == KEY_LEGACY && k[1].type == KEY_VMM && k[2].type == KEY_MEMPOOL, 183);
    STEP(cuCtxSynchronize(), 184);
    for (int r = 1; r < c->size; r++)
        CHECK(fab_test_send(c->down[r], k, sizeof(k)) == 0, 185);
    CHECK(barrier(c) == 0, 186);
    STEP(cuMemFree(pooled), 187);
    STEP(cuMemPoolDestroy(pool), 188);
    STEP(cuMemFree(dev), 189);
    STEP(cuMemUnmap(vmm, g), 190);
    STEP(cuMemAddressFree(vmm, g), 191);
    STEP(cuMemRelease(vh), 192);
    return 0;
}

/* ---- the harness ---------------------------------------------------------- */

typedef int (*body_fn)(const comm_t *c);

static const struct {
    const char *name;
    body_fn fn;
} bodies[] = {
    {"nvshmem", nvshmem_heap},   {"pytorch_fabric", pytorch_fabric},
    {"pytorch_posix", pytorch_posix}, {"trtllm", trtllm_mcast},
    {"ucx", ucx_keys},
};

static body_fn body_named(const char *name)
{
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
        if (strcmp(bodies[i].name, name) == 0)
            return bodies[i].fn;
    return NULL;
}

/* helper "rank" BODY RANK SIZE */
static int helper_rank(int argc, char **argv, int sock)
{
    if (argc < 4 || !body_named(argv[1]))
        return 2;
    comm_t c = {.rank = atoi(argv[2]), .size = atoi(argv[3]), .up = sock};
    int rc = rank_init(&c);
    return rc ? rc : body_named(argv[1])(&c);
}

/* Run body on size ranks, rank r on nodes[r]: rank 0 here, the others in
 * helpers; every rank must return 0. */
static void run_ranks(const char *body, int size, const char *const *nodes)
{
    assert_true(size <= MAX_RANKS);
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", nodes[0], 1);
    comm_t c = {.rank = 0, .size = size};
    fab_test_child_t child[MAX_RANKS];
    char env_node[MAX_RANKS][64], rank_text[MAX_RANKS][8], size_text[8];
    snprintf(size_text, sizeof(size_text), "%d", size);
    for (int r = 1; r < size; r++) {
        snprintf(env_node[r], sizeof(env_node[r]), "FABMEM_NODE=%s", nodes[r]);
        snprintf(rank_text[r], sizeof(rank_text[r]), "%d", r);
        const char *const args[] = {body, rank_text[r], size_text, NULL};
        const char *const env[] = {env_node[r], NULL};
        assert_int_equal(fab_test_spawn("rank", args, env, &child[r]), 0);
        c.down[r] = child[r].sock;
    }
    assert_int_equal(rank_init(&c), 0);
    assert_int_equal(body_named(body)(&c), 0);
    for (int r = 1; r < size; r++)
        assert_int_equal(fab_test_reap(&child[r]), 0);
}

static const char *const four_trays[] = {"tray00", "tray01", "tray02", "tray03"};

static void nvshmem_symmetric_heap_spans_four_trays(void **state)
{
    (void)state;
    run_ranks("nvshmem", 4, four_trays);
}

static void pytorch_expandable_segment_is_shared_across_trays_with_fabric(void **state)
{
    (void)state;
    run_ranks("pytorch_fabric", 2, (const char *const[]){"tray04", "tray05"});
}

static void pytorch_expandable_segment_is_shared_on_a_tray_with_pidfd(void **state)
{
    (void)state;
    run_ranks("pytorch_posix", 2, (const char *const[]){"tray06", "tray06"});
}

static void tensorrt_llm_mnnvl_workspace_with_multicast_spans_four_trays(void **state)
{
    (void)state;
    run_ranks("trtllm", 4, four_trays);
}

static void ucx_cuda_ipc_keys_open_on_the_tray_and_across_trays(void **state)
{
    (void)state;
    run_ranks("ucx", 3, (const char *const[]){"tray00", "tray00", "tray01"});
}

/* What the six libraries ask before they choose a path (docs/cuda.md,
 * "Attributes the libraries ask"), on a tray with a daemon: every answer
 * that turns a fabric path on says yes. Several of them pass the ordinal
 * where a CUdevice is asked for, so the two are the same number. */
static void attributes_the_libraries_ask_turn_their_fabric_paths_on(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray02", 1);
    cut_init(0);
    static const struct {
        CUdevice_attribute attr;
        int want;
    } yes[] = {
        {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, 1},
        {CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 1},
        {CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
    };
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 4);
    for (int ordinal = 0; ordinal < count; ordinal++) {
        CUdevice dev;
        CU_OK(cuDeviceGet(&dev, ordinal));
        assert_int_equal(dev, ordinal);
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
            int v = -1;
            CU_OK(cuDeviceGetAttribute(&v, yes[i].attr, ordinal));
            assert_int_equal(v, yes[i].want);
        }
        int types = 0;
        CU_OK(cuDeviceGetAttribute(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
                                   ordinal));
        assert_true(types & CU_MEM_HANDLE_TYPE_FABRIC);
        assert_true(types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        /* Two Grace CPUs per tray: GPUs 0-1 on host NUMA node 0, 2-3 on 1. */
        int numa = -1;
        CU_OK(cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, ordinal));
        assert_int_equal(numa, ordinal / 2);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(nvshmem_symmetric_heap_spans_four_trays, fab_test_teardown),
    cmocka_unit_test_teardown(pytorch_expandable_segment_is_shared_across_trays_with_fabric,
                              fab_test_teardown),
    cmocka_unit_test_teardown(pytorch_expandable_segment_is_shared_on_a_tray_with_pidfd,
                              fab_test_teardown),
    cmocka_unit_test_teardown(tensorrt_llm_mnnvl_workspace_with_multicast_spans_four_trays,
                              fab_test_teardown),
    cmocka_unit_test_teardown(ucx_cuda_ipc_keys_open_on_the_tray_and_across_trays,
                              fab_test_teardown),
    cmocka_unit_test_teardown(attributes_the_libraries_ask_turn_their_fabric_paths_on,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"rank", helper_rank},
};

FAB_TEST_MAIN("cuda", tests, helpers)
