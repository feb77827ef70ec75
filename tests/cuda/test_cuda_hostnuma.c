/* Host memory through the VMM API and handles for address ranges, against
 * cuda.h only: HOST and HOST_NUMA locations for cuMemGetAllocationGranularity
 * and cuMemCreate, host access descriptors, pointer attributes of host
 * memory, POSIX_FD export of host memory to another process (NCCL's host
 * cuMem sequence, written afresh), FABRIC host memory exported on one tray of
 * examples/nvl72.ini and imported on another (Mooncake's pattern), the
 * dma-buf fd of cuMemGetHandleForAddressRange seen from another process, the
 * export errors of every handle type, cuMemMapArrayAsync, and the refusals.
 * Helpers are this binary re-run (fab_test_spawn). */
#include "cuda_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define SIZE (2u << 20)

static CUmemAllocationProp host_prop(CUmemLocationType type, int id, unsigned types)
{
    CUmemAllocationProp prop = cut_prop(types, 0);
    prop.location.type = type;
    prop.location.id = id;
    return prop;
}

static CUmemAccessDesc host_access(CUmemAccess_flags flags)
{
    CUmemAccessDesc d;
    memset(&d, 0, sizeof(d));
    d.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    d.location.id = 0; /* ignored for an access descriptor (cuda.h) */
    d.flags = flags;
    return d;
}

static int attribute(CUdevice_attribute a, int dev)
{
    int v = -99;
    CU_OK(cuDeviceGetAttribute(&v, a, dev));
    return v;
}

/* ---- helpers (other processes) -------------------------------------------- */

/* helper "posix": NCCL's peer side of host cuMem memory: receive a POSIX fd,
 * import it, map it, grant its device and the host, check the word the
 * creator wrote through the CPU, write one back, tear down, say "done". */
static int helper_posix(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 14;
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 15);
    close(fd);
    CUdeviceptr ptr;
    HELPER_CU(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0), 16);
    HELPER_CU(cuMemMap(ptr, SIZE, 0, h, 0), 17);
    CUmemAccessDesc d[2] = {cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                            host_access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
    HELPER_CU(cuMemSetAccess(ptr, SIZE, d, 2), 18);
    volatile uint64_t *words = (volatile uint64_t *)(uintptr_t)ptr;
    if (words[0] != 0x686f73746e756d61ull)
        return 19;
    words[1] = 0x7065657221ull; /* the host writes, as NCCL's proxy does */
    HELPER_CU(cuMemUnmap(ptr, SIZE), 20);
    HELPER_CU(cuMemRelease(h), 21);
    HELPER_CU(cuMemAddressFree(ptr, SIZE), 22);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 23;
}

/* helper "fabric": Mooncake's reader on another tray: receive a fabric
 * handle, import it onto device 0, map it, grant device 0, copy the first
 * bytes out and check them, write a reply at byte 64 with a copy, say the
 * status's name. */
static int helper_fabric(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    CUmemFabricHandle fh;
    if (fab_test_recv(sock, fh.data, sizeof(fh.data)) != 0)
        return 14;
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
    if (r == CUDA_SUCCESS) {
        CUdeviceptr ptr;
        HELPER_CU(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0), 15);
        HELPER_CU(cuMemMap(ptr, SIZE, 0, h, 0), 16);
        CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        HELPER_CU(cuMemSetAccess(ptr, SIZE, &d, 1), 17);
        char buf[32] = {0};
        HELPER_CU(cuMemcpyDtoH(buf, ptr, sizeof(buf)), 18);
        if (strcmp(buf, "kv cache block on tray00") != 0)
            return 19;
        static const char reply[] = "read on tray01";
        HELPER_CU(cuMemcpyHtoD(ptr + 64, reply, sizeof(reply)), 20);
        HELPER_CU(cuMemUnmap(ptr, SIZE), 21);
        HELPER_CU(cuMemRelease(h), 22);
        HELPER_CU(cuMemAddressFree(ptr, SIZE), 23);
    }
    const char *name = "?";
    cuGetErrorName(r, &name);
    return fab_test_send_word(sock, name) == 0 ? 0 : 24;
}

/* helper "dmabuf": receive an fd from cuMemGetHandleForAddressRange, mmap
 * it (no CUDA at all), check the bytes, write one back, say "done". */
static int helper_dmabuf(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (fab_test_send_word(sock, "ready") != 0)
        return 10;
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 11;
    unsigned char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return 12;
    for (unsigned i = 0; i < 4096; i++) {
        if (p[i] != (unsigned char)(i * 5 + 1))
            return 13;
    }
    p[SIZE - 1] = 0x5a;
    munmap(p, SIZE);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 14;
}

/* ---- topology and attributes ----------------------------------------------- */

/* GB200 trays of examples/nvl72.ini have two Grace CPUs: GPUs 0 and 1 are
 * nearest host NUMA node 0, GPUs 2 and 3 node 1. */
static void host_numa_id_spreads_gpus_over_the_numa_nodes(void **state)
{
    (void)state;
    char *dir = use_config("[node n]\ngpus = 4\nhost_numa_nodes = 2\n");
    CU_OK(cuInit(0));
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), 0);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 1), 0);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 2), 1);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 3), 1);
    fab_test_rmtree(dir);
    free(dir);
}

static void host_vmm_and_dma_buf_attributes_say_yes(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0),
                     1);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0), 1);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0), 1);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), 0);
}

/* NCCL asks the granularity of a HOST_NUMA location and fails its
 * shared-memory transport on any error; it equals the GPUs'. */
static void host_numa_granularity_is_the_gpus(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    size_t dev = cut_granularity(0), g = 0;
    const CUmemLocationType types[] = {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA,
                                       CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        CUmemAllocationProp prop =
            host_prop(types[i], 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        g = 0;
        CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        assert_int_equal(g, dev);
        g = 0;
        CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
        assert_int_equal(g, dev);
    }
}

/* ---- create, map, access, copy ------------------------------------------------ */

/* Host memory of either kind maps, is written by the CPU and by copies, and
 * reads as host memory. */
static void host_and_host_numa_memory_map_copy_and_read_as_host(void **state)
{
    (void)state;
    cut_init(0);
    const CUmemLocationType types[] = {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA};
    for (size_t i = 0; i < 2; i++) {
        unsigned handle_types =
            types[i] == CU_MEM_LOCATION_TYPE_HOST ? 0 : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        CUmemAllocationProp prop = host_prop(types[i], 0, handle_types);
        CUmemGenericAllocationHandle h;
        CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
        CUmemAllocationProp back;
        CU_OK(cuMemGetAllocationPropertiesFromHandle(&back, h));
        assert_int_equal(back.location.type, types[i]); /* as created */
        assert_int_equal(back.requestedHandleTypes, handle_types);
        CUdeviceptr ptr = 0;
        CU_OK(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0));
        CU_OK(cuMemMap(ptr, SIZE, 0, h, 0));
        CUmemAccessDesc d[2] = {cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                                host_access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
        CU_OK(cuMemSetAccess(ptr, SIZE, d, 2));
        char *cpu = (char *)(uintptr_t)ptr;
        strcpy(cpu, "written by the CPU");
        char buf[32] = {0};
        CU_OK(cuMemcpyDtoH(buf, ptr, sizeof(buf)));
        assert_string_equal(buf, "written by the CPU");
        CU_OK(cuMemcpyHtoD(ptr + 100, "by a copy", 10));
        assert_string_equal(cpu + 100, "by a copy");
        unsigned type = 0;
        CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr));
        assert_int_equal(type, CU_MEMORYTYPE_HOST);
        void *host = NULL;
        CU_OK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, ptr + 8));
        assert_ptr_equal(host, cpu + 8);
        int ordinal = -1; /* the device current at creation */
        CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr));
        assert_int_equal(ordinal, 0);
        CU_OK(cuMemRelease(h));
        cut_unmap_free(ptr, SIZE);
    }
}

/* A mapping's protection is the union of every accessor's: the host alone
 * may write through the CPU while the device has no access, and a device's
 * read access stays when the host's goes. */
static void host_access_descriptors_are_their_own_accessor(void **state)
{
    (void)state;
    cut_init(0);
    CUmemAllocationProp prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0));
    CU_OK(cuMemMap(ptr, SIZE, 0, h, 0));
    CUmemAccessDesc hd = host_access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, SIZE, &hd, 1));
    unsigned long long flags = 99;
    CU_OK(cuMemGetAccess(&flags, &hd.location, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CU_OK(cuMemGetAccess(&flags, &dev0, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    *(volatile int *)(uintptr_t)ptr = 7; /* the host may write */
    char b;
    CU_IS(cuMemcpyDtoH(&b, ptr, 1), CUDA_ERROR_ILLEGAL_ADDRESS); /* the device may not */
    CUmemAccessDesc dd = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CU_OK(cuMemSetAccess(ptr, SIZE, &dd, 1));
    hd.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CU_OK(cuMemSetAccess(ptr, SIZE, &hd, 1));
    CU_OK(cuMemGetAccess(&flags, &hd.location, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    int v = 0;
    CU_OK(cuMemcpyDtoH(&v, ptr, sizeof(v))); /* still readable for the device */
    assert_int_equal(v, 7);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, SIZE);
}

/* "Users cannot specify HOST_NUMA accessibility for allocations created on
 * other location types" (cuda.h). */
static void host_access_to_device_memory_is_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, SIZE);
    CUmemAccessDesc hd = host_access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_IS(cuMemSetAccess(ptr, SIZE, &hd, 1), CUDA_ERROR_INVALID_VALUE);
    unsigned long long flags = 99;
    CU_OK(cuMemGetAccess(&flags, &hd.location, ptr));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE); /* nothing changed */
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, SIZE);
}

/* ---- refusals ------------------------------------------------------------------- */

static void bad_host_locations_are_refused(void **state)
{
    (void)state;
    char *dir = use_config("[node n]\ngpus = 2\nhost_numa_nodes = 2\nhost_memory = 4M\n");
    cut_init(0);
    size_t g = 0;
    CUmemGenericAllocationHandle h, h2;
    /* No NUMA node 2 on this node, nor -1. */
    CUmemAllocationProp prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, 2, 0);
    CU_IS(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    prop.location.id = -1;
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    /* "HOST allocations are not IPC capable" (cuda.h). */
    prop = host_prop(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    /* HOST_NUMA_CURRENT "will result in CUDA_ERROR_INVALID_VALUE" (cuda.h). */
    prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, 0);
    CU_IS(cuMemCreate(&h, SIZE, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    /* Sizes are multiples of the granularity. */
    prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, 1, 0);
    CU_IS(cuMemCreate(&h, SIZE / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    /* host_memory is per NUMA node: 4 MiB on node 1, and 4 more on node 0. */
    CU_OK(cuMemCreate(&h, 2 * SIZE, &prop, 0));
    CU_IS(cuMemCreate(&h2, SIZE, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    prop.location.id = 0;
    CU_OK(cuMemCreate(&h2, 2 * SIZE, &prop, 0));
    CU_OK(cuMemRelease(h2));
    CU_OK(cuMemRelease(h));
    prop.location.id = 1;
    CU_OK(cuMemCreate(&h, 2 * SIZE, &prop, 0)); /* the bytes came back */
    CU_OK(cuMemRelease(h));
    fab_test_rmtree(dir);
    free(dir);
}

/* ---- sharing -------------------------------------------------------------------- */

/* NCCL's host cuMem allocation, re-created from its call sequence: the GPU's
 * host NUMA node, a HOST_NUMA location with the handle type it shares by,
 * the granularity, create, reserve aligned to it, map, grant the device and
 * then the host; the peer imports the POSIX fd and both sides use the
 * memory through the CPU. */
static void nccl_host_cumem_sequence_shares_host_memory(void **state)
{
    (void)state;
    cut_init(0);
    CUdevice dev;
    CU_OK(cuDeviceGet(&dev, 0));
    int numa = -1;
    CU_OK(cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev));
    if (numa < 0)
        numa = 0;
    CUmemAllocationProp prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, numa,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    size_t g = 0;
    CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = ((SIZE - 1000) + g - 1) / g * g; /* aligned up, as NCCL does */
    assert_int_equal(size, SIZE);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAddressReserve(&ptr, size, g, 0, 0));
    CU_OK(cuMemMap(ptr, size, 0, h, 0));
    CUmemAccessDesc d = cut_access(dev, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CU_OK(cuMemSetAccess(ptr, size, &d, 1));
    d.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    d.location.id = numa;
    CU_OK(cuMemSetAccess(ptr, size, &d, 1));
    volatile uint64_t *words = (volatile uint64_t *)(uintptr_t)ptr;
    words[0] = 0x686f73746e756d61ull;

    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("posix", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    assert_true(words[1] == 0x7065657221ull); /* the peer's write */

    CU_OK(cuMemUnmap(ptr, size));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, size));
}

/* Mooncake's pattern: FABRIC memory on a HOST_NUMA location of tray00,
 * exported, and imported on tray01 of the same NVLink domain. The daemon
 * counts it against tray00's NUMA node, not a GPU. */
static void fabric_host_numa_memory_moves_between_trays(void **state)
{
    (void)state;
    /* The example as shipped, with channel 0 also given to whoever runs the
     * test (the example names root and uid 1000). */
    static char config[65536];
    int n = snprintf(config, sizeof(config), "%s\n[channel 0]\nuids = %u\n",
                     fab_test_example_config("nvl72.ini"), (unsigned)getuid());
    assert_true(n > 0 && (size_t)n < sizeof(config));
    assert_non_null(fab_test_daemon_start(config, NULL));
    setenv("FABMEM_NODE", "tray00", 1);
    cut_init(0);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 3), 1);
    assert_int_equal(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, 0), 1);
    CUmemAllocationProp prop =
        host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, 1, CU_MEM_HANDLE_TYPE_FABRIC);
    size_t g = 0;
    CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    assert_int_equal(g, SIZE);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    size_t before_free = 0, total = 0;
    CU_OK(cuMemGetInfo(&before_free, &total));
    assert_int_equal(before_free, total); /* host bytes are not the GPU's */
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAddressReserve(&ptr, SIZE, 0, 0, 0));
    CU_OK(cuMemMap(ptr, SIZE, 0, h, 0));
    CUmemAccessDesc d[2] = {cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                            host_access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
    CU_OK(cuMemSetAccess(ptr, SIZE, d, 2));
    strcpy((char *)(uintptr_t)ptr, "kv cache block on tray00");
    CUmemFabricHandle fh;
    CU_OK(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));

    fab_test_child_t child;
    const char *const env[] = {"FABMEM_NODE=tray01", NULL};
    assert_int_equal(fab_test_spawn("fabric", NULL, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, fh.data, sizeof(fh.data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_SUCCESS"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    assert_string_equal((char *)(uintptr_t)ptr + 64, "read on tray01");

    CU_OK(cuMemUnmap(ptr, SIZE));
    CU_OK(cuMemRelease(h));
    CU_OK(cuMemAddressFree(ptr, SIZE));
}

/* ---- handles for ranges ----------------------------------------------------------- */

/* The dma-buf fd of a cuMemAlloc range maps the same bytes in another
 * process, which writes one back. */
static void dma_buf_fd_maps_the_same_bytes_in_another_process(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAlloc(&ptr, SIZE));
    unsigned char buf[4096];
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 5 + 1);
    CU_OK(cuMemcpyHtoD(ptr, buf, sizeof(buf)));
    int fd = -1;
    CU_OK(cuMemGetHandleForAddressRange(&fd, ptr, SIZE, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    assert_true(fd >= 0);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("dmabuf", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, ptr + SIZE - 1, 1));
    assert_int_equal(b, 0x5a);
    CU_OK(cuMemFree(ptr));
}

/* A VMM mapping's fd is the allocation's memory: a range at its start shows
 * the range at offset 0; one inside it, at its offset in the allocation. */
static void dma_buf_fd_of_a_vmm_mapping_is_its_allocation(void **state)
{
    (void)state;
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, SIZE);
    CU_OK(cuMemsetD8(ptr, 0x11, SIZE));
    CU_OK(cuMemsetD8(ptr + 8192, 0x22, 1));
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = -1;
    CU_OK(cuMemGetHandleForAddressRange(&fd, ptr, SIZE, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    unsigned char *m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(m[0], 0x11);
    assert_int_equal(m[8192], 0x22);
    munmap(m, SIZE);
    close(fd);
    CU_OK(cuMemGetHandleForAddressRange(&fd, ptr + 8192, page,
                                        CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 8192);
    assert_true(m != MAP_FAILED);
    assert_int_equal(m[0], 0x22);
    munmap(m, page);
    close(fd);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, SIZE);
}

static void dma_buf_refusals(void **state)
{
    (void)state;
    cut_init(0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    CUdeviceptr ptr = 0;
    CU_OK(cuMemAlloc(&ptr, SIZE));
    int fd = -1;
    const CUmemRangeHandleType dmabuf = CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD;
    /* Address and size aligned to the host page size (cuda.h). */
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr + 1, page, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, page + 1, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, 0, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    /* Past the allocation, or memory the driver did not make. */
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, 2 * SIZE, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    void *mine = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mine != MAP_FAILED);
    CU_IS(cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)(uintptr_t)mine, page, dmabuf, 0),
          CUDA_ERROR_INVALID_VALUE);
    munmap(mine, page);
    /* Flags: the PCIe BAR1 mapping is not there; nothing else is a flag. */
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, page, dmabuf,
                                        CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE),
          CUDA_ERROR_NOT_SUPPORTED);
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, page, dmabuf, 2), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemGetHandleForAddressRange(&fd, ptr, page, (CUmemRangeHandleType)2, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemGetHandleForAddressRange(NULL, ptr, page, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    /* A reservation must be fully mapped. */
    CUdeviceptr r = 0;
    CU_OK(cuMemAddressReserve(&r, SIZE, 0, 0, 0));
    CU_IS(cuMemGetHandleForAddressRange(&fd, r, page, dmabuf, 0), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemAddressFree(r, SIZE));
    CU_OK(cuMemFree(ptr));
}

/* One fd shows one allocation: a range over two is not supported. */
static void dma_buf_of_a_range_over_two_allocations_is_not_supported(void **state)
{
    (void)state;
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(0, 0);
    CUmemGenericAllocationHandle a, b;
    CU_OK(cuMemCreate(&a, SIZE, &prop, 0));
    CU_OK(cuMemCreate(&b, SIZE, &prop, 0));
    CUdeviceptr r = 0;
    CU_OK(cuMemAddressReserve(&r, 2 * SIZE, 0, 0, 0));
    CU_OK(cuMemMap(r, SIZE, 0, a, 0));
    CU_OK(cuMemMap(r + SIZE, SIZE, 0, b, 0));
    int fd = -1;
    CU_IS(cuMemGetHandleForAddressRange(&fd, r, 2 * SIZE, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
          CUDA_ERROR_NOT_SUPPORTED);
    CU_OK(cuMemGetHandleForAddressRange(&fd, r + SIZE, SIZE, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                        0));
    close(fd);
    CU_OK(cuMemUnmap(r, 2 * SIZE));
    CU_OK(cuMemRelease(a));
    CU_OK(cuMemRelease(b));
    CU_OK(cuMemAddressFree(r, 2 * SIZE));
}

/* Every handle type on export: POSIX_FD and FABRIC only when requested at
 * creation; NONE and several bits are not a type; Windows' types do not
 * exist on Linux. */
static void export_answers_every_handle_type(void **state)
{
    (void)state;
    cut_init(0);
    CUmemAllocationProp prop = host_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, SIZE, &prop, 0));
    unsigned char out[64];
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    close(fd);
    CU_IS(cuMemExportToShareableHandle(out, h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE); /* not requested */
    CU_IS(cuMemExportToShareableHandle(out, h, CU_MEM_HANDLE_TYPE_NONE, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemExportToShareableHandle(out, h, CU_MEM_HANDLE_TYPE_WIN32, 0),
          CUDA_ERROR_NOT_SUPPORTED);
    CU_IS(cuMemExportToShareableHandle(out, h, CU_MEM_HANDLE_TYPE_WIN32_KMT, 0),
          CUDA_ERROR_NOT_SUPPORTED);
    CU_IS(cuMemExportToShareableHandle(
              out, h,
              (CUmemAllocationHandleType)(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                          CU_MEM_HANDLE_TYPE_FABRIC),
              0),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemExportToShareableHandle(out, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1),
          CUDA_ERROR_INVALID_VALUE); /* flags are reserved */
    CU_OK(cuMemRelease(h));
}

/* Sparse arrays are not emulated: there is nothing to map into. */
static void map_array_async_is_not_supported(void **state)
{
    (void)state;
    cut_init(0);
    _Alignas(16) unsigned char info[256];
    memset(info, 0, sizeof(info));
    CU_IS(cuMemMapArrayAsync((CUarrayMapInfo *)(void *)info, 1, NULL), CUDA_ERROR_NOT_SUPPORTED);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(host_numa_id_spreads_gpus_over_the_numa_nodes),
    cmocka_unit_test(host_vmm_and_dma_buf_attributes_say_yes),
    cmocka_unit_test(host_numa_granularity_is_the_gpus),
    cmocka_unit_test(host_and_host_numa_memory_map_copy_and_read_as_host),
    cmocka_unit_test(host_access_descriptors_are_their_own_accessor),
    cmocka_unit_test(host_access_to_device_memory_is_refused),
    cmocka_unit_test(bad_host_locations_are_refused),
    cmocka_unit_test(nccl_host_cumem_sequence_shares_host_memory),
    cmocka_unit_test_teardown(fabric_host_numa_memory_moves_between_trays, fab_test_teardown),
    cmocka_unit_test(dma_buf_fd_maps_the_same_bytes_in_another_process),
    cmocka_unit_test(dma_buf_fd_of_a_vmm_mapping_is_its_allocation),
    cmocka_unit_test(dma_buf_refusals),
    cmocka_unit_test(dma_buf_of_a_range_over_two_allocations_is_not_supported),
    cmocka_unit_test(export_answers_every_handle_type),
    cmocka_unit_test(map_array_async_is_not_supported),
};

static const fab_test_helper_t helpers[] = {
    {"posix", helper_posix},
    {"fabric", helper_fabric},
    {"dmabuf", helper_dmabuf},
};

FAB_TEST_MAIN("cuda", tests, helpers)
