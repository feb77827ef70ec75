/* Multicast objects (NVLS), against cuda.h only: four processes on four
 * trays of examples/nvl72.ini build one object as NCCL's NVLS setup does
 * (FABRIC handle), two processes of one tray as PyTorch's symmetric memory
 * does (POSIX fd), and every refusal: granularity, team size, a bind before
 * the team is complete, memory of a device outside the team, a device
 * outside the NVLink clique, a node without a fabric, Fabric Manager down,
 * unbinding what was never bound; and that a bind waits for the team. Each test starts its own fabmemd
 * (tests/fabric/daemon_harness.c); helpers signal each step over their
 * socket. */
#include "cuda_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define VALUE 0xC0FFEEu

static CUmulticastObjectProp mc_prop(unsigned devices, unsigned long long types, size_t size)
{
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.numDevices = devices;
    prop.handleTypes = types;
    prop.size = size;
    return prop;
}

/* Map h (size bytes) with read-write access for device dev and for device
 * 0, whose context a test with two devices in one process uses. */
static CUdeviceptr map_for(CUmemGenericAllocationHandle h, size_t size, int dev)
{
    CUdeviceptr ptr = 0;
    if (cuMemAddressReserve(&ptr, size, 0, 0, 0) != CUDA_SUCCESS)
        return 0;
    if (cuMemMap(ptr, size, 0, h, 0) != CUDA_SUCCESS)
        return 0;
    CUmemAccessDesc d[2] = {cut_access(dev, CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                            cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
    if (cuMemSetAccess(ptr, size, d, dev == 0 ? 1 : 2) != CUDA_SUCCESS)
        return 0;
    return ptr;
}

/* One member's bound memory: created on dev, zeroed, mapped. */
typedef struct member {
    CUmemGenericAllocationHandle mem;
    CUdeviceptr mem_ptr;
    CUdeviceptr mc_ptr;
} member_t;

static CUresult bind_member(CUmemGenericAllocationHandle mc, int dev, unsigned types, size_t size,
                            member_t *m)
{
    CUmemAllocationProp prop = cut_prop(types, dev);
    CUresult r = cuMemCreate(&m->mem, size, &prop, 0);
    if (r != CUDA_SUCCESS)
        return r;
    m->mem_ptr = map_for(m->mem, size, dev);
    if (!m->mem_ptr)
        return CUDA_ERROR_UNKNOWN;
    if ((r = cuMemsetD8(m->mem_ptr, 0, size)) != CUDA_SUCCESS)
        return r;
    if ((r = cuMulticastBindMem(mc, 0, m->mem, 0, size, 0)) != CUDA_SUCCESS)
        return r;
    m->mc_ptr = map_for(mc, size, dev);
    return m->mc_ptr ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

static CUresult unbind_member(CUmemGenericAllocationHandle mc, int dev, size_t size, member_t *m)
{
    CUresult r = cuMulticastUnbind(mc, dev, 0, size);
    if (r == CUDA_SUCCESS)
        r = cuMemUnmap(m->mc_ptr, size);
    if (r == CUDA_SUCCESS)
        r = cuMemAddressFree(m->mc_ptr, size);
    if (r == CUDA_SUCCESS)
        r = cuMemUnmap(m->mem_ptr, size);
    if (r == CUDA_SUCCESS)
        r = cuMemAddressFree(m->mem_ptr, size);
    if (r == CUDA_SUCCESS)
        r = cuMemRelease(m->mem);
    return r;
}

/* The end of a kernel test on a two-member team: the module, the output
 * buffer (oh mapped at out), both members' binds (device 1's first), and
 * the multicast object; each must succeed. */
static void kernel_team_end(CUmodule mod, CUdeviceptr out, CUmemGenericAllocationHandle oh,
                            CUmemGenericAllocationHandle mc, size_t g, member_t *m0, member_t *m1)
{
    CU_OK(cuModuleUnload(mod));
    cut_unmap_free(out, g);
    CU_OK(cuMemRelease(oh));
    CU_OK(unbind_member(mc, 1, g, m1));
    CU_OK(unbind_member(mc, 0, g, m0));
    CU_OK(cuMemRelease(mc));
}

static uint32_t read_u32(CUdeviceptr ptr)
{
    uint32_t v = 0;
    if (cuMemcpyDtoH(&v, ptr, sizeof(v)) != CUDA_SUCCESS)
        return 0;
    return v;
}

/* helper "member" <fabric|posix> <device> [vanish]: import the multicast handle the
 * parent sends, add the device (sending the result's name), then on "bind"
 * bind zeroed memory of its own ("bound"), on "check" read the parent's
 * store in its own buffer and through its multicast mapping ("seen"), on
 * "end" unbind and release everything ("done"). With "vanish" it exits
 * right after "bound", its memory still bound. */
/* A helper's start on device dev: "ready", import the multicast handle the
 * parent sends (fabric, or a POSIX fd), add the device and send the
 * result's name, which *added gets. 0, or the exit code of the step that
 * failed. */
static int helper_join(int sock, bool fabric, int dev, CUmemGenericAllocationHandle *mc,
                       CUresult *added)
{
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, dev), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    if (fabric) {
        CUmemFabricHandle fh;
        if (fab_test_recv(sock, fh.data, sizeof(fh.data)) != 0)
            return 14;
        HELPER_CU(cuMemImportFromShareableHandle(mc, &fh, CU_MEM_HANDLE_TYPE_FABRIC), 15);
    } else {
        int fd = fab_test_recv_fd(sock);
        if (fd < 0)
            return 14;
        HELPER_CU(cuMemImportFromShareableHandle(mc, (void *)(uintptr_t)fd,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                  15);
        close(fd);
    }
    *added = cuMulticastAddDevice(*mc, dev);
    const char *name = "?";
    cuGetErrorName(*added, &name);
    return fab_test_send_word(sock, name) != 0 ? 16 : 0;
}

static int helper_member(int argc, char **argv, int sock)
{
    if (argc < 3)
        return 2;
    bool fabric = strcmp(argv[1], "fabric") == 0;
    int dev = atoi(argv[2]);
    CUmemGenericAllocationHandle mc;
    CUresult r;
    int code = helper_join(sock, fabric, dev, &mc, &r);
    if (code != 0)
        return code;
    if (r != CUDA_SUCCESS) {
        HELPER_CU(cuMemRelease(mc), 17);
        return 0;
    }
    CUmulticastObjectProp prop = mc_prop(1, 0, 0);
    size_t size = 0;
    HELPER_CU(cuMulticastGetGranularity(&size, &prop, CU_MULTICAST_GRANULARITY_RECOMMENDED), 18);
    if (fab_test_expect_word(sock, "bind") != 0)
        return 19;
    member_t m;
    HELPER_CU(bind_member(mc, dev,
                          fabric ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                          size, &m),
              20);
    if (argc > 3 && strcmp(argv[3], "vanish") == 0)
        return fab_test_send_word(sock, "bound") == 0 ? 0 : 21; /* exits bound */
    if (fab_test_send_word(sock, "bound") != 0 || fab_test_expect_word(sock, "check") != 0)
        return 21;
    HELPER_CU(cuCtxSynchronize(), 22);
    if (read_u32(m.mem_ptr) != VALUE)
        return 23; /* the store reached this device's own copy */
    if (read_u32(m.mc_ptr) != VALUE)
        return 24; /* and a load through the multicast mapping reads it */
    if (read_u32(m.mem_ptr + 4) != 0)
        return 25; /* and nothing else was written */
    if (fab_test_send_word(sock, "seen") != 0 || fab_test_expect_word(sock, "end") != 0)
        return 26;
    HELPER_CU(unbind_member(mc, dev, size, &m), 27);
    HELPER_CU(cuMemRelease(mc), 28);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 29;
}

/* The parent's side of one object shared with n helpers: each is spawned
 * with env[i], gets the handle, adds its device; everyone binds; the parent
 * stores VALUE through its multicast mapping and synchronises; every helper
 * reads it in its own memory. */
static void share_with_members(unsigned types, int parent_dev, const char *const *args,
                               const char *const *const *env, int n)
{
    size_t size = 0;
    CUmulticastObjectProp prop = mc_prop((unsigned)n + 1, types, 0);
    CU_OK(cuMulticastGetGranularity(&size, &prop, CU_MULTICAST_GRANULARITY_RECOMMENDED));
    prop.size = size;
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, parent_dev));
    CUmemFabricHandle fh;
    int fd = -1;
    if (types == CU_MEM_HANDLE_TYPE_FABRIC)
        CU_OK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    else
        CU_OK(cuMemExportToShareableHandle(&fd, mc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));

    fab_test_child_t child[8];
    assert_true(n <= 8);
    for (int i = 0; i < n; i++) {
        assert_int_equal(fab_test_spawn("member", args, env[i], &child[i]), 0);
        assert_int_equal(fab_test_expect_word(child[i].sock, "ready"), 0);
        if (types == CU_MEM_HANDLE_TYPE_FABRIC)
            assert_int_equal(fab_test_send(child[i].sock, fh.data, sizeof(fh.data)), 0);
        else
            assert_int_equal(fab_test_send_fd(child[i].sock, fd), 0);
        assert_int_equal(fab_test_expect_word(child[i].sock, "CUDA_SUCCESS"), 0);
    }
    if (fd >= 0)
        close(fd);
    /* The team is complete: everyone binds. */
    for (int i = 0; i < n; i++) {
        assert_int_equal(fab_test_send_word(child[i].sock, "bind"), 0);
        assert_int_equal(fab_test_expect_word(child[i].sock, "bound"), 0);
    }
    member_t m;
    unsigned mem_types = types == CU_MEM_HANDLE_TYPE_FABRIC ? CU_MEM_HANDLE_TYPE_FABRIC
                                                            : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CU_OK(bind_member(mc, parent_dev, mem_types, size, &m));
    uint32_t v = VALUE;
    CU_OK(cuMemcpyHtoD(m.mc_ptr, &v, sizeof(v)));
    CU_OK(cuCtxSynchronize()); /* the store goes out to every bound buffer */
    assert_int_equal(read_u32(m.mem_ptr), VALUE);
    for (int i = 0; i < n; i++) {
        assert_int_equal(fab_test_send_word(child[i].sock, "check"), 0);
        assert_int_equal(fab_test_expect_word(child[i].sock, "seen"), 0);
    }
    for (int i = 0; i < n; i++) {
        assert_int_equal(fab_test_send_word(child[i].sock, "end"), 0);
        assert_int_equal(fab_test_expect_word(child[i].sock, "done"), 0);
        assert_int_equal(fab_test_reap(&child[i]), 0);
    }
    CU_OK(unbind_member(mc, parent_dev, size, &m));
    CU_OK(cuMemRelease(mc));
}

static void four_trays_share_one_multicast_object_as_nccl_nvls_does(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray00", 1);
    cut_init(0);
    int supported = 0;
    CU_OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
    assert_int_equal(supported, 1); /* what NCCL and TensorRT-LLM ask first */
    const char *const args[] = {"fabric", "0", NULL};
    const char *const tray01[] = {"FABMEM_NODE=tray01", NULL};
    const char *const tray02[] = {"FABMEM_NODE=tray02", NULL};
    const char *const tray03[] = {"FABMEM_NODE=tray03", NULL};
    const char *const *const env[] = {tray01, tray02, tray03};
    share_with_members(CU_MEM_HANDLE_TYPE_FABRIC, 0, args, env, 3);
}

static void two_gpus_of_a_tray_share_one_object_as_pytorch_symmetric_memory_does(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray05", 1);
    cut_init(0);
    const char *const args[] = {"posix", "1", NULL};
    const char *const tray05[] = {"FABMEM_NODE=tray05", NULL};
    const char *const *const env[] = {tray05};
    share_with_members(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0, args, env, 1);
}

/* A member that exits with its memory bound: its bind stays in the table
 * until it is found dead, and a store skips the memory that went with it. */
static void a_member_that_exits_bound_is_skipped_and_forgotten(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config_for_me("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray00", 1);
    cut_init(0);
    size_t size = 0;
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMulticastGetGranularity(&size, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
    prop.size = size;
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemFabricHandle fh;
    CU_OK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    const char *const args[] = {"fabric", "0", "vanish", NULL};
    const char *const env[] = {"FABMEM_NODE=tray01", NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("member", args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, fh.data, sizeof(fh.data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_SUCCESS"), 0);
    assert_int_equal(fab_test_send_word(child.sock, "bind"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "bound"), 0);
    assert_int_equal(fab_test_reap(&child), 0); /* gone, never unbound */
    member_t m;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_FABRIC, size, &m));
    uint32_t v = VALUE;
    CU_OK(cuMemcpyHtoD(m.mc_ptr + 12, &v, sizeof(v)));
    CU_OK(cuCtxSynchronize()); /* the dead member's memory is skipped */
    assert_int_equal(read_u32(m.mem_ptr + 12), VALUE);
    assert_int_equal(read_u32(m.mc_ptr + 12), VALUE);
    CU_OK(unbind_member(mc, 0, size, &m));
    CU_OK(cuMemRelease(mc));
}

/* ---- refusals ------------------------------------------------------------------- */

static char refusal_config[1024];

static const char *refusals(void)
{
    static const char node[] = "imex_domain = one\n"
                               "cluster_uuid = 11111111-2222-3333-4444-555555555555\n"
                               "fabric_state = completed\nhandle_types = posix_fd, fabric\n"
                               "gpus = 2\n";
    snprintf(refusal_config, sizeof(refusal_config),
             "[channel 0]\nuids = %u\n"
             "[node a]\n%sclique_id = 1\n"
             "[node far]\n%sclique_id = 2\n"
             "[node fm-down]\n%sclique_id = 1\nfabric_manager = down\n"
             "[node fm-starting]\n%sclique_id = 1\nfabric_manager = starting\n"
             "[node no-fabric]\nimex_domain = one\nfabric_state = not_started\ngpus = 2\n",
             (unsigned)getuid(), node, node, node, node);
    return refusal_config;
}

static size_t start_on(const char *node)
{
    assert_non_null(fab_test_daemon_start(refusals(), NULL));
    setenv("FABMEM_NODE", node, 1);
    cut_init(0);
    CUmulticastObjectProp prop = mc_prop(1, 0, 0);
    size_t g = 0;
    CU_OK(cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
    return g;
}

static void sizes_and_offsets_are_multiples_of_the_granularity(void **state)
{
    (void)state;
    size_t g = start_on("a");
    assert_int_equal(g, 2u << 20);
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g / 2);
    CUmemGenericAllocationHandle mc;
    CU_IS(cuMulticastCreate(&mc, &prop), CUDA_ERROR_INVALID_VALUE);
    prop.size = 2 * g;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle mem;
    CU_OK(cuMemCreate(&mem, 2 * g, &mp, 0));
    CU_IS(cuMulticastBindMem(mc, g / 2, mem, 0, g, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMulticastBindMem(mc, 0, mem, g / 2, g, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g / 2, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMulticastBindMem(mc, g, mem, 0, 2 * g, 0), CUDA_ERROR_INVALID_VALUE); /* past its end */
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 1), CUDA_ERROR_INVALID_VALUE);      /* flags */
    CU_OK(cuMulticastBindMem(mc, g, mem, g, g, 0));
    CU_IS(cuMulticastBindMem(mc, g, mem, 0, g, 0), CUDA_ERROR_INVALID_VALUE); /* taken */
    CU_IS(cuMulticastUnbind(mc, 0, 0, g), CUDA_ERROR_INVALID_VALUE);         /* never bound */
    CU_OK(cuMulticastUnbind(mc, 0, g, g));
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
    CU_IS(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE); /* released */
}

static void a_synchronisation_of_a_large_object_reads_only_what_was_written(void **state)
{
    (void)state;
    size_t g = start_on("a");
    size_t size = 16 * g; /* NCCL's NVLS buffers are hundreds of MiB */
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, size);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    member_t m;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, size, &m));
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, m.mem, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    assert_int_equal(lseek(fd, 0, SEEK_DATA), -1); /* zeroed: no page holds anything */
    CU_OK(cuCtxSynchronize());
    assert_int_equal(lseek(fd, 0, SEEK_DATA), -1); /* nothing to publish, nothing read */
    /* A store through the multicast mapping, then a synchronisation: the
     * bound memory has that page and no other. */
    uint32_t v = VALUE;
    size_t at = 9 * g + 12288;
    CU_OK(cuMemcpyHtoD(m.mc_ptr + at, &v, sizeof(v)));
    CU_OK(cuCtxSynchronize());
    uint32_t got = 0;
    assert_int_equal(pread(fd, &got, sizeof(got), (off_t)at), (ssize_t)sizeof(got));
    assert_int_equal(got, VALUE);
    off_t d = lseek(fd, 0, SEEK_DATA);
    assert_true(d >= (off_t)(9 * g) && d <= (off_t)at);
    assert_int_equal(lseek(fd, (off_t)(10 * g), SEEK_DATA), -1);
    close(fd);
    CU_OK(unbind_member(mc, 0, size, &m));
    CU_OK(cuMemRelease(mc));
}

static void a_team_has_numdevices_devices_each_added_once(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CU_IS(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE); /* already in */
    CU_IS(cuMulticastAddDevice(mc, 1), CUDA_ERROR_INVALID_VALUE); /* one too many */
    CU_IS(cuMulticastAddDevice(mc, 7), CUDA_ERROR_INVALID_DEVICE);
    CU_OK(cuMemRelease(mc));
    prop.numDevices = 0;
    CU_IS(cuMulticastCreate(&mc, &prop), CUDA_ERROR_INVALID_VALUE);
}

/* A bind in its own thread, which blocks until the team is complete. */
typedef struct blocked_bind {
    CUcontext ctx;
    CUmemGenericAllocationHandle mc, mem;
    size_t size;
    int tid;
    CUresult r;
} blocked_bind_t;

static void *bind_in_thread(void *arg)
{
    blocked_bind_t *b = arg;
    __atomic_store_n(&b->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    b->r = cuCtxSetCurrent(b->ctx);
    if (b->r == CUDA_SUCCESS)
        b->r = cuMulticastBindMem(b->mc, 0, b->mem, 0, b->size, 0);
    return NULL;
}

/* The system call thread tid of this process is in, or -1. */
static long syscall_of(int tid)
{
    char path[64], text[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    bool got = fgets(text, sizeof(text), f) != NULL;
    fclose(f);
    return got ? strtol(text, NULL, 10) : -1;
}

static void a_bind_waits_until_every_device_is_added(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    blocked_bind_t b = {.size = g};
    CU_OK(cuCtxGetCurrent(&b.ctx));
    CU_OK(cuMulticastCreate(&b.mc, &prop));
    CU_OK(cuMulticastAddDevice(b.mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMemCreate(&b.mem, g, &mp, 0));
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, bind_in_thread, &b), 0);
    /* Until the thread sleeps on a futex (the team's wait): no timer, the
     * thread's own state says when. */
    int tid;
    while ((tid = __atomic_load_n(&b.tid, __ATOMIC_ACQUIRE)) == 0)
        sched_yield();
    while (syscall_of(tid) != SYS_futex)
        sched_yield();
    CU_OK(cuMulticastAddDevice(b.mc, 1)); /* the last one: the bind goes on */
    assert_int_equal(pthread_join(thread, NULL), 0);
    CU_OK(b.r);
    /* Released with its bind in place: the bind goes with the object. */
    CU_OK(cuMemRelease(b.mem));
    CU_OK(cuMemRelease(b.mc));
}

/* A cuMemMap of the object in its own thread, which also waits for the team. */
typedef struct blocked_map {
    CUcontext ctx;
    CUmemGenericAllocationHandle mc;
    CUdeviceptr ptr;
    size_t size;
    int tid;
    CUresult r;
} blocked_map_t;

static void *map_in_thread(void *arg)
{
    blocked_map_t *m = arg;
    __atomic_store_n(&m->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    m->r = cuCtxSetCurrent(m->ctx);
    if (m->r == CUDA_SUCCESS)
        m->r = cuMemMap(m->ptr, m->size, 0, m->mc, 0);
    return NULL;
}

static void a_map_waits_until_every_device_is_added(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    blocked_map_t m = {.size = g};
    CU_OK(cuCtxGetCurrent(&m.ctx));
    CU_OK(cuMulticastCreate(&m.mc, &prop));
    CU_OK(cuMulticastAddDevice(m.mc, 0));
    CU_OK(cuMemAddressReserve(&m.ptr, g, 0, 0, 0));
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, map_in_thread, &m), 0);
    int tid;
    while ((tid = __atomic_load_n(&m.tid, __ATOMIC_ACQUIRE)) == 0)
        sched_yield();
    while (syscall_of(tid) != SYS_futex)
        sched_yield();
    CU_OK(cuMulticastAddDevice(m.mc, 1));
    assert_int_equal(pthread_join(thread, NULL), 0);
    CU_OK(m.r);
    cut_unmap_free(m.ptr, g);
    CU_OK(cuMemRelease(m.mc));
}

static void memory_of_a_device_not_in_the_team_is_refused_when_it_is_complete(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc, mem;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CU_IS(cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMulticastAddDevice(mc, 1));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 1);
    CU_OK(cuMemCreate(&mem, g, &mp, 0));
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0));
    CU_IS(cuMulticastAddDevice(mc, 1), CUDA_ERROR_INVALID_VALUE); /* after a bind */
    CU_OK(cuMulticastUnbind(mc, 1, 0, g));
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
}

static void memory_of_a_device_outside_the_team_is_refused(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc, mem;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 1);
    CU_OK(cuMemCreate(&mem, g, &mp, 0));
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 0), CUDA_ERROR_INVALID_DEVICE);
    CU_IS(cuMulticastBindMem(mc, 0, mc, 0, g, 0), CUDA_ERROR_INVALID_VALUE); /* not memory */
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
}

/* A process on node `node` imports a 2-device object made on node a (FABRIC
 * or POSIX fd) and reports what adding its device 0 gave. */
static void add_from(const char *node, unsigned types, const char *want_import_or_add)
{
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, types, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    char env0[64];
    snprintf(env0, sizeof(env0), "FABMEM_NODE=%s", node);
    const char *const env[] = {env0, NULL};
    const bool fabric = types == CU_MEM_HANDLE_TYPE_FABRIC;
    const char *const args[] = {fabric ? "fabric" : "posix", "0", NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("member", args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    if (fabric) {
        CUmemFabricHandle fh;
        CU_OK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
        assert_int_equal(fab_test_send(child.sock, fh.data, sizeof(fh.data)), 0);
    } else {
        int fd = -1;
        CU_OK(cuMemExportToShareableHandle(&fd, mc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
        close(fd);
    }
    if (want_import_or_add) {
        assert_int_equal(fab_test_expect_word(child.sock, want_import_or_add), 0);
        assert_int_equal(fab_test_reap(&child), 0);
    } else {
        assert_int_equal(fab_test_reap(&child), 15); /* the import itself failed */
    }
    CU_OK(cuMemRelease(mc));
}

static void a_device_outside_the_nvlink_clique_is_refused(void **state)
{
    (void)state;
    add_from("far", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, "CUDA_ERROR_NOT_SUPPORTED");
}

static void a_fabric_handle_does_not_import_outside_the_clique(void **state)
{
    (void)state;
    add_from("far", CU_MEM_HANDLE_TYPE_FABRIC, NULL);
}

static void a_node_without_a_fabric_has_no_multicast(void **state)
{
    (void)state;
    start_on("no-fabric");
    int supported = -1;
    CU_OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
    assert_int_equal(supported, 0); /* TensorRT-LLM's McastDeviceMemory gives up here */
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 2u << 20);
    CUmemGenericAllocationHandle mc;
    CU_IS(cuMulticastCreate(&mc, &prop), CUDA_ERROR_NOT_SUPPORTED);
}

static void fabric_manager_down_fails_the_bind_with_illegal_state(void **state)
{
    (void)state;
    size_t g = start_on("fm-down");
    int supported = 0;
    CU_OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
    assert_int_equal(supported, 1); /* the attribute says yes ... */
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc, mem;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMemCreate(&mem, g, &mp, 0));
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 0), CUDA_ERROR_ILLEGAL_STATE); /* ... 401 */
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
}

static void fabric_manager_starting_fails_the_bind_as_not_ready(void **state)
{
    (void)state;
    size_t g = start_on("fm-starting");
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc, mem;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMemCreate(&mem, g, &mp, 0));
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 0), CUDA_ERROR_SYSTEM_NOT_READY); /* 802 */
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
}

static void bind_by_address_finds_the_mapped_allocation(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(1, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc, mem;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemAllocationProp mp = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CU_OK(cuMemCreate(&mem, 2 * g, &mp, 0));
    CUdeviceptr ptr = cut_map_rw(mem, 2 * g);
    CU_IS(cuMulticastBindAddr(mc, 0, ptr + 4096, g, 0), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMulticastBindAddr(mc, 0, ptr + g, g, 0));
    CUdeviceptr mc_ptr = cut_map_rw(mc, g);
    uint32_t v = VALUE;
    CU_OK(cuMemcpyHtoD(mc_ptr + 8, &v, sizeof(v)));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(read_u32(ptr + g + 8), VALUE); /* the bound half got it */
    assert_int_equal(read_u32(ptr + 8), 0);         /* the other did not */
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    cut_unmap_free(mc_ptr, g);
    cut_unmap_free(ptr, 2 * g);
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
}

/* ---- CPU kernels (tests/cuda/kernels_for_tests.c) -------------------------------- */

static const char mc_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                             ".visible .entry mc_store(.param .u64 mc, .param .u32 v) { ret; }\n"
                             ".visible .entry mc_sum(.param .u64 out, .param .u64 mc,\n"
                             "                       .param .u32 n) { ret; }\n";

static void cpu_kernels_store_through_and_reduce_over_a_multicast_mapping(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CU_OK(cuMulticastAddDevice(mc, 1));
    member_t m0, m1;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_FABRIC, g, &m0));
    CU_OK(bind_member(mc, 1, CU_MEM_HANDLE_TYPE_FABRIC, g, &m1));
    CUmodule mod;
    CUfunction store, sum;
    CU_OK(cuModuleLoadData(&mod, mc_ptx));
    CU_OK(cuModuleGetFunction(&store, mod, "mc_store"));
    CU_OK(cuModuleGetFunction(&sum, mod, "mc_sum"));

    /* A store in a kernel reaches both devices' copies when it ends. */
    unsigned v = VALUE;
    void *store_params[] = {&m0.mc_ptr, &v};
    CU_OK(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, NULL, store_params, NULL));
    assert_int_equal(read_u32(m0.mem_ptr), VALUE);
    assert_int_equal(read_u32(m1.mem_ptr), VALUE);

    /* A reduction reads every copy: 1 + 10, 2 + 20. */
    uint32_t a[2] = {1, 2}, b[2] = {10, 20};
    CU_OK(cuMemcpyHtoD(m0.mem_ptr, a, sizeof(a)));
    CU_OK(cuMemcpyHtoD(m1.mem_ptr, b, sizeof(b)));
    CUmemGenericAllocationHandle oh;
    CUmemAllocationProp op = cut_prop(0, 0);
    CU_OK(cuMemCreate(&oh, g, &op, 0));
    CUdeviceptr out = cut_map_rw(oh, g);
    unsigned n = 2;
    void *sum_params[] = {&out, &m0.mc_ptr, &n};
    CU_OK(cuLaunchKernel(sum, 1, 1, 1, 1, 1, 1, 0, NULL, sum_params, NULL));
    uint32_t got[3] = {0};
    CU_OK(cuMemcpyDtoH(got, out, sizeof(got)));
    assert_int_equal(got[2], CUDA_SUCCESS);
    assert_int_equal(got[0], 11);
    assert_int_equal(got[1], 22);
    /* An address that is no multicast mapping is refused. */
    void *bad_params[] = {&out, &m0.mem_ptr, &n};
    CU_OK(cuLaunchKernel(sum, 1, 1, 1, 1, 1, 1, 0, NULL, bad_params, NULL));
    CU_OK(cuMemcpyDtoH(got, out, sizeof(got)));
    assert_int_equal(got[2], CUDA_ERROR_INVALID_VALUE);

    kernel_team_end(mod, out, oh, mc, g, &m0, &m1);
}

/* The same as kernels as written, on the PTX engine (no plugin implements
 * these names): multimem.st through the multicast mapping reaches every
 * bound copy when the kernel ends, and multimem.ld_reduce.add sums every
 * copy. */
static const char mc_written_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mcw_store(.param .u64 mc, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [mc];\n"
    "  ld.param.u32 %r1, [v];\n"
    "  multimem.st.relaxed.sys.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry mcw_sum(.param .u64 out, .param .u64 mc)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [mc];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n"
    "  add.s64 %rd4, %rd2, %rd3;\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.u32 %r2, [%rd4];\n"
    "  add.s64 %rd4, %rd1, %rd3;\n"
    "  st.global.u32 [%rd4], %r2;\n"
    "  ret;\n"
    "}\n";

static void kernels_as_written_store_through_and_reduce_over_a_multicast_mapping(void **state)
{
    (void)state;
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CU_OK(cuMulticastAddDevice(mc, 1));
    member_t m0, m1;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_FABRIC, g, &m0));
    CU_OK(bind_member(mc, 1, CU_MEM_HANDLE_TYPE_FABRIC, g, &m1));
    CUmodule mod;
    CUfunction store, sum;
    CU_OK(cuModuleLoadData(&mod, mc_written_ptx));
    CU_OK(cuModuleGetFunction(&store, mod, "mcw_store"));
    CU_OK(cuModuleGetFunction(&sum, mod, "mcw_sum"));
    unsigned v = VALUE;
    void *store_params[] = {&m0.mc_ptr, &v};
    CU_OK(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, NULL, store_params, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(read_u32(m0.mem_ptr), VALUE);
    assert_int_equal(read_u32(m1.mem_ptr), VALUE);
    uint32_t a[2] = {1, 2}, b[2] = {10, 20};
    CU_OK(cuMemcpyHtoD(m0.mem_ptr, a, sizeof(a)));
    CU_OK(cuMemcpyHtoD(m1.mem_ptr, b, sizeof(b)));
    CUmemGenericAllocationHandle oh;
    CUmemAllocationProp op = cut_prop(0, 0);
    CU_OK(cuMemCreate(&oh, g, &op, 0));
    CUdeviceptr out = cut_map_rw(oh, g);
    void *sum_params[] = {&out, &m0.mc_ptr};
    CU_OK(cuLaunchKernel(sum, 1, 1, 1, 2, 1, 1, 0, NULL, sum_params, NULL));
    CU_OK(cuCtxSynchronize());
    uint32_t got[2] = {0};
    CU_OK(cuMemcpyDtoH(got, out, sizeof(got)));
    assert_int_equal(got[0], 11);
    assert_int_equal(got[1], 22);
    kernel_team_end(mod, out, oh, mc, g, &m0, &m1);
}

/* Two devices bound to one multicast object, their copies holding a and b
 * (bytes each); kernel fn of ptx runs once, one thread, with (out, mc), and
 * out's first got_bytes land in got. */
static void mc_reduce_once(const char *ptx, const char *fn, const void *a, const void *b,
                           size_t bytes, void *got, size_t got_bytes)
{
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CU_OK(cuMulticastAddDevice(mc, 1));
    member_t m0, m1;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_FABRIC, g, &m0));
    CU_OK(bind_member(mc, 1, CU_MEM_HANDLE_TYPE_FABRIC, g, &m1));
    CUmodule mod;
    CUfunction f;
    CU_OK(cuModuleLoadData(&mod, ptx));
    CU_OK(cuModuleGetFunction(&f, mod, fn));
    CU_OK(cuMemcpyHtoD(m0.mem_ptr, a, bytes));
    CU_OK(cuMemcpyHtoD(m1.mem_ptr, b, bytes));
    CUmemGenericAllocationHandle oh;
    CUmemAllocationProp op = cut_prop(0, 0);
    CU_OK(cuMemCreate(&oh, g, &op, 0));
    CUdeviceptr out = cut_map_rw(oh, g);
    void *params[] = {&out, &m0.mc_ptr};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(got, out, got_bytes));
    kernel_team_end(mod, out, oh, mc, g, &m0, &m1);
}

/* NCCL's NVLS kernels for half and bfloat16 sum pairs through the multicast
 * mapping in float (multimem.ld_reduce...add.acc::f32.bf16x2): each half of a
 * 32-bit word is its own sum over every bound copy, rounded once. */
static const char mc_pairs_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mcp_sum(.param .u64 out, .param .u64 mc)\n"
    "{\n"
    "  .reg .b32 %r<5>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [mc];\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.acc::f32.bf16x2 %r1, [%rd2];\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.acc::f32.f16x2 %r2, [%rd2+4];\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v2.bf16x2 {%r3, %r4}, [%rd2+8];\n"
    "  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n"
    "  ret;\n"
    "}\n";

static void kernels_as_written_sum_half_and_bfloat16_pairs_in_float_over_a_multicast_mapping(
    void **state)
{
    (void)state;
    /* word 0, bfloat16 {1.5, -2} + {0.5, 4}; word 1, half {0.25, 1000} +
     * {0.5, 2^-7}; words 2 and 3, bfloat16 {256, 1, 1, 0} + {1, 256, 1, 1} */
    uint16_t a[8] = {0x3fc0, 0xc000, 0x3400, 0x63d0, 0x4380, 0x3f80, 0x3f80, 0x0000};
    uint16_t b[8] = {0x3f00, 0x4080, 0x3800, 0x2000, 0x3f80, 0x4380, 0x3f80, 0x3f80};
    uint16_t got[8] = {0};
    mc_reduce_once(mc_pairs_ptx, "mcp_sum", a, b, sizeof(a), got, sizeof(got));
    assert_int_equal(got[0], 0x4000); /* 2 */
    assert_int_equal(got[1], 0x4000); /* 2 */
    assert_int_equal(got[2], 0x3a00); /* 0.75 */
    assert_int_equal(got[3], 0x63d0); /* 1000.0078125 rounds to 1000 */
    assert_int_equal(got[4], 0x4380); /* 257 lies between 256 and 258: to even, 256 */
    assert_int_equal(got[5], 0x4380);
    assert_int_equal(got[6], 0x4000); /* 2 */
    assert_int_equal(got[7], 0x3f80); /* 1 */
}

/* NCCL's NVLS steps poll every peer's step counter through the multicast
 * mapping, the least of them (multimem.ld_reduce.acquire...min.u64). */
static const char mc_least_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mcl_least(.param .u64 out, .param .u64 mc)\n"
    "{\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [mc];\n"
    "  multimem.ld_reduce.acquire.sys.global.min.u64 %rd3, [%rd2];\n"
    "  multimem.ld_reduce.relaxed.sys.global.max.u64 %rd4, [%rd2+8];\n"
    "  st.global.v2.u64 [%rd1], {%rd3, %rd4};\n"
    "  ret;\n"
    "}\n";

static void kernels_as_written_take_the_least_and_greatest_u64_over_a_multicast_mapping(void **state)
{
    (void)state;
    /* above 2^32 and apart in their high words, so a 32-bit reduction fails */
    uint64_t a[2] = {0x500000007ull, 0x100000009ull}, b[2] = {0x700000003ull, 0x300000001ull};
    uint64_t got[2] = {0};
    mc_reduce_once(mc_least_ptx, "mcl_least", a, b, sizeof(a), got, sizeof(got));
    assert_true(got[0] == 0x500000007ull);
    assert_true(got[1] == 0x300000001ull);
}

/* multimem.red folds its operand into every bound copy before the next
 * instruction: a multimem.ld_reduce right after it sums the folded copies. */
static const char mc_red_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mcr_fold(.param .u64 out, .param .u64 mc)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [mc];\n"
    "  multimem.red.relaxed.sys.global.add.u32 [%rd2], 5;\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd2];\n"
    "  mov.u64 %rd3, 0x100000000;\n"
    "  multimem.red.release.sys.global.add.u64 [%rd2+8], %rd3;\n"
    "  multimem.ld_reduce.relaxed.sys.global.min.u64 %rd4, [%rd2+8];\n"
    "  multimem.ld_reduce.relaxed.sys.global.max.u64 %rd5, [%rd2+8];\n"
    "  mov.u64 %rd6, 5;\n"
    "  multimem.red.relaxed.sys.global.min.u64 [%rd2+16], %rd6;\n"
    "  multimem.ld_reduce.relaxed.sys.global.max.u64 %rd7, [%rd2+16];\n"
    "  mov.f32 %r2, 0f3FC00000;\n"
    "  multimem.red.relaxed.sys.global.add.f32 [%rd2+4], %r2;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  st.global.u64 [%rd1+8], %rd4;\n"
    "  st.global.u64 [%rd1+16], %rd5;\n"
    "  st.global.u64 [%rd1+24], %rd7;\n"
    "  multimem.ld_reduce.relaxed.sys.global.add.f32 %r2, [%rd2+4];\n"
    "  st.global.f32 [%rd1+4], %r2;\n"
    "  ret;\n"
    "}\n";

static void kernels_as_written_fold_multimem_red_into_every_bound_copy_at_once(void **state)
{
    (void)state;
    /* {u32, f32, u64, u64} in each copy */
    struct { uint32_t u; float f; uint64_t a, b; } a = {1, 0.25f, 0x500000000ull, 9},
                                                   b = {10, 2.0f, 0x700000000ull, 4};
    struct { uint32_t u; float f; uint64_t lo, hi, least_max; } got;
    memset(&got, 0, sizeof(got));
    mc_reduce_once(mc_red_ptx, "mcr_fold", &a, &b, sizeof(a), &got, sizeof(got));
    assert_int_equal(got.u, 21);                 /* (1 + 5) + (10 + 5) */
    assert_true(got.f == 5.25f);                 /* (0.25 + 1.5) + (2 + 1.5) */
    assert_true(got.lo == 0x600000000ull);       /* each copy + 2^32 */
    assert_true(got.hi == 0x800000000ull);
    assert_true(got.least_max == 5);             /* min(9, 5), min(4, 5): the greater */
}

/* ---- stores published at once: two kernels talk through the object ------------------- */

/* NCCL's NVLS kernels pass data and step counters between ranks through the
 * multicast object while they run. mct_call: a warp stores 32 words of data
 * (tid + 100 at byte 64 on), then thread 0 a flag (1 at byte 0), and spins
 * until the sum of the answers over every bound copy (byte 4) is 4: both
 * copies hold the peer's 2. mct_answer: thread 0 spins on its own bound
 * memory until the flag is there, sums the 32 words, and answers 2 through
 * the object. With how 1 the flag and the answer are ordered plain stores
 * to the multicast address instead (st.release, st.relaxed .sys), as NCCL's
 * NVLS posts its steps. Each writes {1 if it saw what it waited for, what it read}
 * to out; a spin gives up after limit nanoseconds (%globaltimer), so that a
 * store held back until the kernel's end fails the test, not hangs it. */
static const char mc_talk_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mct_call(.param .u64 mc, .param .u64 out, .param .u64 limit,\n"
    "                         .param .u32 how)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<7>;\n"
    "  .reg .b64 %rd<9>;\n"
    "  ld.param.u64 %rd1, [mc];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  ld.param.u64 %rd3, [limit];\n"
    "  ld.param.u32 %r6, [how];\n"
    "  setp.ne.u32 %p3, %r6, 0;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  add.u32 %r2, %r1, 100;\n"
    "  multimem.st.relaxed.sys.global.u32 [%rd5+64], %r2;\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p1, %r1, 0;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r3, 1;\n"
    "  @%p3 st.release.sys.global.u32 [%rd1], %r3;\n"
    "  @!%p3 multimem.st.release.sys.global.u32 [%rd1], %r3;\n"
    "  mov.u64 %rd6, %globaltimer;\n"
    "  mov.u32 %r5, 0;\n"
    "WAIT:\n"
    "  multimem.ld_reduce.acquire.sys.global.add.u32 %r4, [%rd1+4];\n"
    "  setp.eq.u32 %p2, %r4, 4;\n"
    "  @%p2 bra GOT;\n"
    "  nanosleep.u32 1000;\n"
    "  mov.u64 %rd7, %globaltimer;\n"
    "  sub.u64 %rd8, %rd7, %rd6;\n"
    "  setp.lt.u64 %p1, %rd8, %rd3;\n"
    "  @%p1 bra WAIT;\n"
    "  bra.uni OUT;\n"
    "GOT:\n"
    "  mov.u32 %r5, 1;\n"
    "OUT:\n"
    "  st.global.v2.u32 [%rd2], {%r5, %r4};\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    ".visible .entry mct_answer(.param .u64 mc, .param .u64 mem, .param .u64 out,\n"
    "                           .param .u64 limit, .param .u32 how)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [mc];\n"
    "  ld.param.u64 %rd2, [mem];\n"
    "  ld.param.u64 %rd3, [out];\n"
    "  ld.param.u64 %rd4, [limit];\n"
    "  ld.param.u32 %r7, [how];\n"
    "  mov.u32 %r5, 0;\n"
    "  mov.u32 %r6, 0;\n"
    "  mov.u64 %rd5, %globaltimer;\n"
    "WAIT:\n"
    "  ld.acquire.sys.global.u32 %r1, [%rd2];\n"
    "  setp.eq.u32 %p1, %r1, 1;\n"
    "  @%p1 bra GOT;\n"
    "  mov.u64 %rd6, %globaltimer;\n"
    "  sub.u64 %rd7, %rd6, %rd5;\n"
    "  setp.lt.u64 %p2, %rd7, %rd4;\n"
    "  @%p2 bra WAIT;\n"
    "  bra.uni OUT;\n"
    "GOT:\n"
    "  mov.u32 %r5, 1;\n"
    "  mov.u32 %r2, 0;\n"
    "SUM:\n"
    "  mul.wide.u32 %rd8, %r2, 4;\n"
    "  add.s64 %rd9, %rd2, %rd8;\n"
    "  ld.global.u32 %r3, [%rd9+64];\n"
    "  add.u32 %r6, %r6, %r3;\n"
    "  add.u32 %r2, %r2, 1;\n"
    "  setp.lt.u32 %p3, %r2, 32;\n"
    "  @%p3 bra SUM;\n"
    "  mov.u32 %r4, 2;\n"
    "  setp.ne.u32 %p1, %r7, 0;\n"
    "  @%p1 st.relaxed.sys.global.u32 [%rd1+4], %r4;\n"
    "  @!%p1 multimem.st.release.sys.global.u32 [%rd1+4], %r4;\n"
    "OUT:\n"
    "  st.global.v2.u32 [%rd3], {%r5, %r6};\n"
    "  ret;\n"
    "}\n";

#define TALK_LIMIT_NS 10000000000ull /* how long either kernel waits for the other */
#define TALK_SUM (32u * 100u + 31u * 32u / 2u) /* the 32 words, tid + 100 */

/* An output buffer of g bytes on dev, zeroed: its handle in *h. */
static CUdeviceptr talk_out(int dev, size_t g, CUmemGenericAllocationHandle *h)
{
    CUmemAllocationProp prop = cut_prop(0, dev);
    if (cuMemCreate(h, g, &prop, 0) != CUDA_SUCCESS)
        return 0;
    CUdeviceptr p = map_for(*h, g, dev);
    if (p && cuMemsetD8(p, 0, 8) != CUDA_SUCCESS)
        return 0;
    return p;
}

/* helper "answer" <device> <how>: import the fabric handle the parent sends, add
 * the device (sending the result's name), bind on "bind" ("bound"), and on
 * "go" launch mct_answer and say "launched" while it runs; then the
 * kernel's two words, and on "end" release everything ("done"). */
static int helper_answer(int argc, char **argv, int sock)
{
    if (argc < 3)
        return 2;
    int dev = atoi(argv[1]);
    unsigned how = (unsigned)atoi(argv[2]);
    CUmemGenericAllocationHandle mc;
    CUresult r;
    int code = helper_join(sock, true, dev, &mc, &r);
    if (code != 0 || r != CUDA_SUCCESS)
        return code != 0 ? code : 16;
    CUmulticastObjectProp prop = mc_prop(1, 0, 0);
    size_t g = 0;
    HELPER_CU(cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM), 17);
    member_t m;
    CUmodule mod;
    CUfunction answer;
    CUmemGenericAllocationHandle oh;
    if (fab_test_expect_word(sock, "bind") != 0)
        return 18;
    HELPER_CU(bind_member(mc, dev, CU_MEM_HANDLE_TYPE_FABRIC, g, &m), 19);
    HELPER_CU(cuModuleLoadData(&mod, mc_talk_ptx), 20);
    HELPER_CU(cuModuleGetFunction(&answer, mod, "mct_answer"), 21);
    CUdeviceptr out = talk_out(dev, g, &oh);
    if (!out || fab_test_send_word(sock, "bound") != 0 || fab_test_expect_word(sock, "go") != 0)
        return 22;
    unsigned long long limit = TALK_LIMIT_NS;
    void *params[] = {&m.mc_ptr, &m.mem_ptr, &out, &limit, &how};
    HELPER_CU(cuLaunchKernel(answer, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), 23);
    if (fab_test_send_word(sock, "launched") != 0)
        return 24;
    HELPER_CU(cuCtxSynchronize(), 25);
    uint32_t got[2] = {0};
    HELPER_CU(cuMemcpyDtoH(got, out, sizeof(got)), 26);
    if (fab_test_send(sock, got, sizeof(got)) != 0 || fab_test_expect_word(sock, "end") != 0)
        return 27;
    HELPER_CU(cuModuleUnload(mod), 28);
    HELPER_CU(cuMemUnmap(out, g), 29);
    HELPER_CU(cuMemAddressFree(out, g), 29);
    HELPER_CU(cuMemRelease(oh), 29);
    HELPER_CU(unbind_member(mc, dev, g, &m), 30);
    HELPER_CU(cuMemRelease(mc), 31);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 32;
}

/* The parent's side: mct_call against a helper's mct_answer, both storing
 * as how says. */
static void hand_shake(unsigned how)
{
    size_t g = start_on("a");
    CUmulticastObjectProp prop = mc_prop(2, CU_MEM_HANDLE_TYPE_FABRIC, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemFabricHandle fh;
    CU_OK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    char how_text[4];
    snprintf(how_text, sizeof(how_text), "%u", how);
    const char *const args[] = {"1", how_text, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("answer", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, fh.data, sizeof(fh.data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "CUDA_SUCCESS"), 0);
    assert_int_equal(fab_test_send_word(child.sock, "bind"), 0);
    member_t m0;
    CU_OK(bind_member(mc, 0, CU_MEM_HANDLE_TYPE_FABRIC, g, &m0));
    assert_int_equal(fab_test_expect_word(child.sock, "bound"), 0);
    CUmodule mod;
    CUfunction call;
    CU_OK(cuModuleLoadData(&mod, mc_talk_ptx));
    CU_OK(cuModuleGetFunction(&call, mod, "mct_call"));
    CUmemGenericAllocationHandle oh;
    CUdeviceptr out = talk_out(0, g, &oh);
    assert_true(out != 0);

    /* The peer's kernel is running, spinning on its own bound memory. */
    assert_int_equal(fab_test_send_word(child.sock, "go"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "launched"), 0);
    unsigned long long limit = TALK_LIMIT_NS;
    void *params[] = {&m0.mc_ptr, &out, &limit, &how};
    CU_OK(cuLaunchKernel(call, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    uint32_t mine[2] = {0}, theirs[2] = {0};
    CU_OK(cuMemcpyDtoH(mine, out, sizeof(mine)));
    assert_int_equal(fab_test_recv(child.sock, theirs, sizeof(theirs)), 0);
    assert_int_equal(theirs[0], 1);        /* the peer saw the flag while both ran */
    assert_int_equal(theirs[1], TALK_SUM); /* and the warp's data before it */
    assert_int_equal(mine[0], 1);          /* its answer came back while this one ran */
    assert_int_equal(mine[1], 4);
    assert_int_equal(read_u32(m0.mem_ptr + 4), 2); /* this device's copy holds the answer */

    assert_int_equal(fab_test_send_word(child.sock, "end"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuModuleUnload(mod));
    cut_unmap_free(out, g);
    CU_OK(cuMemRelease(oh));
    CU_OK(unbind_member(mc, 0, g, &m0));
    CU_OK(cuMemRelease(mc));
}

static void kernels_running_at_once_hand_shake_through_a_multicast_object(void **state)
{
    (void)state;
    hand_shake(0); /* multimem.st */
}

/* A GPU multicasts any store to a multicast address; fabmem does so at once
 * for ordered ones (weak stores wait for the next synchronisation). */
static void ordered_stores_to_a_multicast_address_reach_a_running_peer_at_once(void **state)
{
    (void)state;
    hand_shake(1);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(four_trays_share_one_multicast_object_as_nccl_nvls_does,
                              fab_test_teardown),
    cmocka_unit_test_teardown(two_gpus_of_a_tray_share_one_object_as_pytorch_symmetric_memory_does,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_that_exits_bound_is_skipped_and_forgotten,
                              fab_test_teardown),
    cmocka_unit_test_teardown(sizes_and_offsets_are_multiples_of_the_granularity,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_synchronisation_of_a_large_object_reads_only_what_was_written,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_team_has_numdevices_devices_each_added_once, fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_waits_until_every_device_is_added, fab_test_teardown),
    cmocka_unit_test_teardown(a_map_waits_until_every_device_is_added, fab_test_teardown),
    cmocka_unit_test_teardown(memory_of_a_device_not_in_the_team_is_refused_when_it_is_complete,
                              fab_test_teardown),
    cmocka_unit_test_teardown(memory_of_a_device_outside_the_team_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(a_device_outside_the_nvlink_clique_is_refused, fab_test_teardown),
    cmocka_unit_test_teardown(a_fabric_handle_does_not_import_outside_the_clique,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_node_without_a_fabric_has_no_multicast, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_manager_down_fails_the_bind_with_illegal_state,
                              fab_test_teardown),
    cmocka_unit_test_teardown(fabric_manager_starting_fails_the_bind_as_not_ready,
                              fab_test_teardown),
    cmocka_unit_test_teardown(bind_by_address_finds_the_mapped_allocation, fab_test_teardown),
    cmocka_unit_test_teardown(cpu_kernels_store_through_and_reduce_over_a_multicast_mapping,
                              fab_test_teardown),
    cmocka_unit_test_teardown(kernels_as_written_take_the_least_and_greatest_u64_over_a_multicast_mapping,
                              fab_test_teardown),
    cmocka_unit_test_teardown(kernels_as_written_sum_half_and_bfloat16_pairs_in_float_over_a_multicast_mapping,
                              fab_test_teardown),
    cmocka_unit_test_teardown(kernels_as_written_store_through_and_reduce_over_a_multicast_mapping,
                              fab_test_teardown),
    cmocka_unit_test_teardown(kernels_running_at_once_hand_shake_through_a_multicast_object,
                              fab_test_teardown),
    cmocka_unit_test_teardown(ordered_stores_to_a_multicast_address_reach_a_running_peer_at_once,
                              fab_test_teardown),
    cmocka_unit_test_teardown(kernels_as_written_fold_multimem_red_into_every_bound_copy_at_once,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"member", helper_member},
    {"answer", helper_answer},
};

FAB_TEST_MAIN("cuda", tests, helpers)
