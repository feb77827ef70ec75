/* Multicast teams against a member of another uid (docs/cuda.md, "What a
 * multicast member can and cannot reach"): the attacks that held when a
 * team lived in a control block every member mapped writable. The attacker
 * is a helper that drops to uid 65534, joins the team as a member would, and
 * then maps the team's token memory writable through the fabric client and
 * writes into it what the old control block's layout would have obeyed:
 * the creator's bind range, the team mutex's owner, bind slots of pid 1; or
 * looks there for the handles of the creator's memory; or makes ordinary
 * memory that starts as a control block did. The victim's calls must go on
 * as if nothing had been written, and finish: every test arms an alarm, so
 * that a wait that never ends fails it. Tests that need the second uid run
 * only as root (CTest reports them skipped otherwise); the two about a lost
 * peer and the wait's bound need none. */
#include "cuda_test.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define VALUE 0xC0FFEEu
#define STORE 0x1BADCAFEu /* no zero byte: each differs from a fresh snapshot */
#define NOBODY 65534
#define ALARM_S 60 /* far past any of these calls; a hang is killed */

/* Offsets in the control block that teams used to share (its layout on
 * x86-64), where the attacks wrote: the team mutex's lock word (its owner's
 * tid), the device count, and bind slot i's fields. */
#define OLD_MUTEX 40
#define OLD_NDEVICES 80
#define OLD_SLOT(i) (1112 + 184 * (size_t)(i))
#define OLD_SLOT_USED 0
#define OLD_SLOT_PID 4
#define OLD_SLOT_MC_OFFSET 24
#define OLD_SLOT_SIZE 40
#define OLD_SLOT_HANDLE 48
#define OLD_SLOT_IPC 116
#define OLD_MAGIC 0x3154534143544c4eull

static char config[1024];

static void start(bool other_uid)
{
    if (other_uid && getuid() != 0) {
        fprintf(stderr, "skipped: needs root to run the attacker as uid %d\n", NOBODY);
        fab_test_skip("needs root for a second uid");
    }
    snprintf(config, sizeof(config),
             "[daemon]\nsocket_mode = 0666\n"
             "[channel 0]\nuids = %u, %d\n"
             "[node a]\nimex_domain = one\n"
             "cluster_uuid = 11111111-2222-3333-4444-555555555555\n"
             "fabric_state = completed\nhandle_types = posix_fd, fabric\ngpus = 2\nclique_id = 1\n",
             (unsigned)getuid(), NOBODY);
    assert_non_null(fab_test_daemon_start(config, NULL));
    setenv("FABMEM_NODE", "a", 1);
    cut_init(0);
    alarm(ALARM_S);
}

static CUmulticastObjectProp mc_prop(unsigned devices, size_t size)
{
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.numDevices = devices;
    prop.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    prop.size = size;
    return prop;
}

static uint32_t read_u32(CUdeviceptr ptr)
{
    uint32_t v = 0;
    if (cuMemcpyDtoH(&v, ptr, sizeof(v)) != CUDA_SUCCESS)
        return 0;
    return v;
}

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

/* helper "attacker" MODE: as uid 65534 on device 1, import the multicast
 * handle the parent sends and add its device (a member, as any), then:
 *   slot    rewrite bind slot 0 (the creator's) to twice its size
 *   mutex   write a live owner (pid 1) into the team mutex, then exit
 *   slots   fill every bind slot with a bind of pid 1
 *   steal   try the handles slot 0 carried (the creator's memory, whole),
 *           then store STORE through its own multicast mapping and sync
 *   lost    exit right after importing, without adding its device
 * in the token memory, mapped writable through the fabric client. It sends
 * "forged" (steal: "stolen" or "none") and waits for "end". */
static int helper_attacker(int argc, char **argv, int sock)
{
    if (argc < 2 || getuid() != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        return 2;
    const char *mode = argv[1];
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 1), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
    CUmemFabricHandle fh;
    if (fab_test_recv(sock, fh.data, sizeof(fh.data)) != 0)
        return 14;
    CUmemGenericAllocationHandle mc;
    HELPER_CU(cuMemImportFromShareableHandle(&mc, &fh, CU_MEM_HANDLE_TYPE_FABRIC), 15);
    if (strcmp(mode, "lost") == 0) {
        if (fab_test_send_word(sock, "joined") != 0)
            return 16;
        _exit(0); /* its connection closes with the team incomplete */
    }
    HELPER_CU(cuMulticastAddDevice(mc, 1), 16);
    if (fab_test_send_word(sock, "CUDA_SUCCESS") != 0 || fab_test_expect_word(sock, "forge") != 0)
        return 16;
    /* The token, mapped writable: what every member could write before. */
    fab_client_t *client = NULL;
    fab_region_t *region = NULL;
    fab_handle_t h;
    memcpy(h.bytes, fh.data, sizeof(h.bytes));
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS ||
        fab_client_import(client, &h, 1, &region) != FAB_SUCCESS)
        return 17;
    size_t len = fab_region_size(region);
    uint8_t *blk = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fab_region_fd(region), 0);
    if (blk == MAP_FAILED || len < OLD_SLOT(256))
        return 18;
    const char *verdict = "forged";
    CUdeviceptr mp = 0; /* steal: its multicast mapping */
    if (strcmp(mode, "slot") == 0) {
        put64(blk + OLD_SLOT(0) + OLD_SLOT_MC_OFFSET, 0);
        put64(blk + OLD_SLOT(0) + OLD_SLOT_SIZE, 2 * len);
    } else if (strcmp(mode, "mutex") == 0) {
        put32(blk + OLD_MUTEX, 1); /* owned by init, which never dies */
        if (fab_test_send_word(sock, verdict) != 0)
            return 19;
        _exit(0);
    } else if (strcmp(mode, "slots") == 0) {
        for (int i = 0; i < 256; i++) {
            uint8_t *s = blk + OLD_SLOT(i);
            memset(s, 0, 184);
            put32(s + OLD_SLOT_USED, 1);
            put32(s + OLD_SLOT_PID, 1);
            put64(s + OLD_SLOT_SIZE, len);
        }
    } else if (strcmp(mode, "steal") == 0) {
        verdict = "none";
        fab_handle_t theirs;
        memcpy(theirs.bytes, blk + OLD_SLOT(0) + OLD_SLOT_HANDLE, sizeof(theirs.bytes));
        fab_region_t *got = NULL;
        if (fab_client_import(client, &theirs, 1, &got) == FAB_SUCCESS) {
            verdict = "stolen";
            fab_region_release(got);
        }
        CUipcMemHandle ipc;
        memcpy(ipc.reserved, blk + OLD_SLOT(0) + OLD_SLOT_IPC, sizeof(ipc.reserved));
        CUdeviceptr p = 0;
        if (cuIpcOpenMemHandle(&p, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS) {
            verdict = "stolen";
            (void)cuIpcCloseMemHandle(p);
        }
        /* What a member may do: store through its own mapping. */
        HELPER_CU(cuMemAddressReserve(&mp, len, 0, 0, 0), 20);
        HELPER_CU(cuMemMap(mp, len, 0, mc, 0), 21);
        CUmemAccessDesc d = cut_access(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        HELPER_CU(cuMemSetAccess(mp, len, &d, 1), 22);
        uint32_t v = STORE;
        HELPER_CU(cuMemcpyHtoD(mp, &v, sizeof(v)), 23);
        HELPER_CU(cuCtxSynchronize(), 24);
    } else {
        return 3;
    }
    if (fab_test_send_word(sock, verdict) != 0 || fab_test_expect_word(sock, "end") != 0)
        return 25;
    if (mp) {
        HELPER_CU(cuMemUnmap(mp, len), 27);
        HELPER_CU(cuMemAddressFree(mp, len), 28);
    }
    munmap(blk, len);
    fab_region_release(region);
    fab_client_close(client);
    HELPER_CU(cuMemRelease(mc), 26);
    return 0;
}

/* The victim's side: a 2-device team of `size` bytes, device 0 added, the
 * attacker (mode) spawned, given the handle, and through its first word. */
static CUmemGenericAllocationHandle team_with_attacker(const char *mode, size_t size,
                                                       const char *word, fab_test_child_t *child)
{
    CUmulticastObjectProp prop = mc_prop(2, size);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUmemFabricHandle fh;
    CU_OK(cuMemExportToShareableHandle(&fh, mc, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    const char *const args[] = {mode, NULL};
    assert_int_equal(fab_test_spawn("attacker", args, NULL, child), 0);
    assert_int_equal(fab_test_expect_word(child->sock, "ready"), 0);
    assert_int_equal(fab_test_send(child->sock, fh.data, sizeof(fh.data)), 0);
    assert_int_equal(fab_test_expect_word(child->sock, word), 0);
    return mc;
}

/* Memory of device 0 (types), `size` bytes, mapped read-write. */
static CUmemGenericAllocationHandle memory(unsigned types, size_t size, CUdeviceptr *ptr)
{
    CUmemAllocationProp prop = cut_prop(types, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, size, &prop, 0));
    *ptr = cut_map_rw(h, size);
    CU_OK(cuMemsetD8(*ptr, 0, size));
    return h;
}

static void finish(CUmemGenericAllocationHandle mc, fab_test_child_t *child, bool waits_end)
{
    if (waits_end)
        assert_int_equal(fab_test_send_word(child->sock, "end"), 0);
    assert_int_equal(fab_test_reap(child), 0);
    CU_OK(cuMemRelease(mc));
    alarm(0);
}

/* Before: the creator's sync wrote past its bound mapping (abort). */
static void a_member_of_another_uid_cannot_widen_the_creators_bind(void **state)
{
    (void)state;
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    CUmemGenericAllocationHandle mc = team_with_attacker("slot", 2 * g, "CUDA_SUCCESS", &child);
    (void)mc;
    /* The attacker forges after the creator's bind is in place. */
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(CU_MEM_HANDLE_TYPE_FABRIC, g, &mem_ptr);
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0));
    CUdeviceptr mc_ptr = cut_map_rw(mc, 2 * g);
    assert_int_equal(fab_test_send_word(child.sock, "forge"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "forged"), 0);
    uint32_t v = VALUE, w = STORE;
    CU_OK(cuMemcpyHtoD(mc_ptr + 64, &v, sizeof(v)));
    CU_OK(cuMemcpyHtoD(mc_ptr + g + 128, &w, sizeof(w))); /* bound by nobody */
    CU_OK(cuCtxSynchronize());
    assert_int_equal(read_u32(mem_ptr + 64), VALUE);
    assert_int_equal(read_u32(mc_ptr + 64), VALUE);
    /* Before, the second store went a granule past the bind's own mapping:
     * into whatever lay there (the memory's mapping, just above it, here),
     * or a fault. */
    uint32_t *all = calloc(1, g);
    assert_non_null(all);
    CU_OK(cuMemcpyDtoH(all, mem_ptr, g));
    for (size_t i = 0; i < g / 4; i++) {
        if (i != 64 / 4)
            assert_int_equal(all[i], 0);
    }
    free(all);
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    cut_unmap_free(mc_ptr, 2 * g);
    cut_unmap_free(mem_ptr, g);
    CU_OK(cuMemRelease(mem));
    finish(mc, &child, true);
}

/* Before: every sync of the creator hung, even after the attacker exited. */
static void a_member_of_another_uid_cannot_wedge_the_creators_sync(void **state)
{
    (void)state;
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    CUmemGenericAllocationHandle mc = team_with_attacker("mutex", g, "CUDA_SUCCESS", &child);
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(CU_MEM_HANDLE_TYPE_FABRIC, g, &mem_ptr);
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0));
    CUdeviceptr mc_ptr = cut_map_rw(mc, g);
    assert_int_equal(fab_test_send_word(child.sock, "forge"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "forged"), 0);
    assert_int_equal(fab_test_reap(&child), 0); /* gone: the forged owner stays */
    uint32_t v = VALUE;
    CU_OK(cuMemcpyHtoD(mc_ptr + 8, &v, sizeof(v)));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(read_u32(mem_ptr + 8), VALUE);
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0)); /* and binds still work */
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    cut_unmap_free(mc_ptr, g);
    cut_unmap_free(mem_ptr, g);
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
    alarm(0);
}

/* Before: slots of pid 1 were never reclaimed; the bind was OUT_OF_MEMORY. */
static void bind_slots_forged_by_another_uid_do_not_fill_the_team(void **state)
{
    (void)state;
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    CUmemGenericAllocationHandle mc = team_with_attacker("slots", g, "CUDA_SUCCESS", &child);
    assert_int_equal(fab_test_send_word(child.sock, "forge"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "forged"), 0);
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(CU_MEM_HANDLE_TYPE_FABRIC, g, &mem_ptr);
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0));
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    cut_unmap_free(mem_ptr, g);
    CU_OK(cuMemRelease(mem));
    finish(mc, &child, true);
}

/* Before: the block carried the whole allocation's fabric handle (FABRIC
 * memory) or an IPC handle of its whole memfd (POSIX_FD memory). The
 * creator binds the middle granule of three; a member of another uid finds
 * no handle to it, and its store reaches that granule alone. */
static void a_member_of_another_uid_reaches_only_the_bound_range(unsigned types)
{
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    CUmemGenericAllocationHandle mc = team_with_attacker("steal", g, "CUDA_SUCCESS", &child);
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(types, 3 * g, &mem_ptr);
    CU_OK(cuMemsetD32(mem_ptr, 0x5a5a5a5a, 3 * g / 4));
    CU_OK(cuMulticastBindMem(mc, 0, mem, g, g, 0));
    assert_int_equal(fab_test_send_word(child.sock, "forge"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "none"), 0);
    CU_OK(cuCtxSynchronize());
    assert_int_equal(read_u32(mem_ptr + g), STORE); /* its store, in the bound range */
    assert_int_equal(read_u32(mem_ptr), 0x5a5a5a5a);
    assert_int_equal(read_u32(mem_ptr + g + 4), 0x5a5a5a5a);
    assert_int_equal(read_u32(mem_ptr + 2 * g), 0x5a5a5a5a);
    assert_int_equal(read_u32(mem_ptr + 3 * g - 4), 0x5a5a5a5a);
    CU_OK(cuMulticastUnbind(mc, 0, 0, g));
    cut_unmap_free(mem_ptr, 3 * g);
    CU_OK(cuMemRelease(mem));
    finish(mc, &child, true);
}

static void a_member_of_another_uid_reaches_only_the_bound_range_of_fabric_memory(void **state)
{
    (void)state;
    a_member_of_another_uid_reaches_only_the_bound_range(CU_MEM_HANDLE_TYPE_FABRIC);
}

static void a_member_of_another_uid_reaches_only_the_bound_range_of_posix_memory(void **state)
{
    (void)state;
    a_member_of_another_uid_reaches_only_the_bound_range(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
}

/* helper "mimic": as uid 65534, make one granule of FABRIC memory whose
 * first bytes are a control block's (a 2-device team with no device yet),
 * send its handle, and on "write" store 0x5a5a5a5a at byte 4096 ("written"). */
static int helper_mimic(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (getuid() != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        return 2;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 1), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    size_t g = cut_granularity(1);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 1);
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemCreate(&h, g, &prop, 0), 13);
    CUdeviceptr p = 0;
    HELPER_CU(cuMemAddressReserve(&p, g, 0, 0, 0), 14);
    HELPER_CU(cuMemMap(p, g, 0, h, 0), 15);
    CUmemAccessDesc d = cut_access(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemSetAccess(p, g, &d, 1), 16);
    uint8_t head[96];
    memset(head, 0, sizeof(head));
    put64(head, OLD_MAGIC);
    put64(head + 8, g);                         /* size */
    put64(head + 16, CU_MEM_HANDLE_TYPE_FABRIC); /* handle types */
    put64(head + 24, g);                        /* granularity */
    put32(head + 32, 2);                        /* numDevices */
    put32(head + OLD_NDEVICES, 0);              /* none added: a map waits */
    HELPER_CU(cuMemcpyHtoD(p, head, sizeof(head)), 17);
    CUmemFabricHandle fh;
    HELPER_CU(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0), 18);
    if (fab_test_send(sock, fh.data, sizeof(fh.data)) != 0 || fab_test_expect_word(sock, "write") != 0)
        return 19;
    uint32_t v = 0x5a5a5a5a;
    HELPER_CU(cuMemcpyHtoD(p + 4096, &v, sizeof(v)), 20);
    if (fab_test_send_word(sock, "written") != 0 || fab_test_expect_word(sock, "end") != 0)
        return 21;
    HELPER_CU(cuMemUnmap(p, g), 22);
    HELPER_CU(cuMemAddressFree(p, g), 23);
    HELPER_CU(cuMemRelease(h), 24);
    return 0;
}

/* Before: the import was taken for a team, and the map hung (or mapped a
 * private copy that read zeros). It is memory: the map reads its bytes. */
static void memory_of_another_uid_that_looks_like_a_team_is_memory(void **state)
{
    (void)state;
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("mimic", NULL, NULL, &child), 0);
    CUmemFabricHandle fh;
    assert_int_equal(fab_test_recv(child.sock, fh.data, sizeof(fh.data)), 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC));
    CUdeviceptr p = cut_map_rw(h, g);
    uint64_t magic = 0;
    CU_OK(cuMemcpyDtoH(&magic, p, sizeof(magic)));
    assert_true(magic == OLD_MAGIC);
    assert_int_equal(fab_test_send_word(child.sock, "write"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "written"), 0);
    assert_int_equal(read_u32(p + 4096), 0x5a5a5a5a); /* the same memory, not a copy */
    assert_int_equal(fab_test_send_word(child.sock, "end"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    cut_unmap_free(p, g);
    CU_OK(cuMemRelease(h));
    alarm(0);
}

/* A member that joined and went before adding its device: the bind that
 * waits for the team ends with ILLEGAL_STATE instead of waiting forever. */
static void a_bind_waiting_for_a_lost_member_fails_with_illegal_state(void **state)
{
    (void)state;
    start(true);
    size_t g = cut_granularity(0);
    fab_test_child_t child;
    CUmemGenericAllocationHandle mc = team_with_attacker("lost", g, "joined", &child);
    assert_int_equal(fab_test_reap(&child), 0);
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(CU_MEM_HANDLE_TYPE_FABRIC, g, &mem_ptr);
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 0), CUDA_ERROR_ILLEGAL_STATE);
    CUdeviceptr p = 0;
    CU_OK(cuMemAddressReserve(&p, g, 0, 0, 0));
    CU_IS(cuMemMap(p, g, 0, mc, 0), CUDA_ERROR_ILLEGAL_STATE);
    CU_OK(cuMemAddressFree(p, g));
    cut_unmap_free(mem_ptr, g);
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
    alarm(0);
}

/* A team that nobody completes: the wait ends at FABMEM_TIMEOUT_MS. */
static void a_bind_for_a_team_never_completed_ends_at_the_deadline(void **state)
{
    (void)state;
    start(false);
    size_t g = cut_granularity(0);
    CUmulticastObjectProp prop = mc_prop(2, g);
    CUmemGenericAllocationHandle mc;
    CU_OK(cuMulticastCreate(&mc, &prop));
    CU_OK(cuMulticastAddDevice(mc, 0));
    CUdeviceptr mem_ptr;
    CUmemGenericAllocationHandle mem = memory(CU_MEM_HANDLE_TYPE_FABRIC, g, &mem_ptr);
    setenv("FABMEM_TIMEOUT_MS", "300", 1);
    CU_IS(cuMulticastBindMem(mc, 0, mem, 0, g, 0), CUDA_ERROR_ILLEGAL_STATE);
    unsetenv("FABMEM_TIMEOUT_MS");
    CU_OK(cuMulticastAddDevice(mc, 1)); /* complete now: the bind goes through */
    CU_OK(cuMulticastBindMem(mc, 0, mem, 0, g, 0));
    cut_unmap_free(mem_ptr, g);
    CU_OK(cuMemRelease(mem));
    CU_OK(cuMemRelease(mc));
    alarm(0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(a_member_of_another_uid_cannot_widen_the_creators_bind,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_of_another_uid_cannot_wedge_the_creators_sync,
                              fab_test_teardown),
    cmocka_unit_test_teardown(bind_slots_forged_by_another_uid_do_not_fill_the_team,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_of_another_uid_reaches_only_the_bound_range_of_fabric_memory,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_of_another_uid_reaches_only_the_bound_range_of_posix_memory,
                              fab_test_teardown),
    cmocka_unit_test_teardown(memory_of_another_uid_that_looks_like_a_team_is_memory,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_waiting_for_a_lost_member_fails_with_illegal_state,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_for_a_team_never_completed_ends_at_the_deadline,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"attacker", helper_attacker},
    {"mimic", helper_mimic},
};

FAB_TEST_MAIN("cuda", tests, helpers)
