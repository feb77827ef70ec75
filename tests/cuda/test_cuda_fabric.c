/* FABRIC sharing through the daemon, against cuda.h only: a fabric handle's
 * 64 bytes travel over a socket and the peer maps the same pages; NCCL's
 * fallback when the user holds no IMEX channel; the table's fabric rows
 * (no channel, no shared channel, stale, forged and other-domain handles,
 * unreachable peers) and the lifetime rule (a fabric handle holds no
 * reference; a mapping does). Each test starts its own fabmemd with its own
 * temp dir and socket (tests/fabric/daemon_harness.c) and stops it by pid. */
#include "cuda_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define SIZE (2u << 20)

/* helper "importer": receive a fabric handle, import it, report the status by
 * name; on success check byte 0 is 42, write 43 at byte 1, tear down. */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (argc > 1 && strcmp(argv[1], "nobody") == 0 && getuid() == 0 &&
        (setgid(65534) != 0 || setuid(65534) != 0))
        return 9;
    HELPER_CU(cuInit(0), 10);
    CUcontext ctx;
    HELPER_CU(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
    HELPER_CU(cuCtxSetCurrent(ctx), 12);
    if (fab_test_send_word(sock, "ready") != 0)
        return 13;
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
        unsigned char b = 0;
        HELPER_CU(cuMemcpyDtoH(&b, ptr, 1), 18);
        if (b != 42)
            return 19;
        HELPER_CU(cuMemsetD8(ptr + 1, 43, 1), 20);
        HELPER_CU(cuMemUnmap(ptr, SIZE), 21);
        HELPER_CU(cuMemRelease(h), 22);
        HELPER_CU(cuMemAddressFree(ptr, SIZE), 23);
    }
    const char *name = "?";
    cuGetErrorName(r, &name);
    return fab_test_send_word(sock, name) == 0 ? 0 : 24;
}

typedef struct exported {
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    CUmemFabricHandle fh;
} exported_t;

/* Create a FABRIC allocation on device 0, map it, write 42, export it. */
static exported_t export_fabric(unsigned extra_types)
{
    exported_t e;
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC | extra_types, 0);
    CU_OK(cuMemCreate(&e.h, SIZE, &prop, 0));
    e.ptr = cut_map_rw(e.h, SIZE);
    CU_OK(cuMemsetD8(e.ptr, 42, 1));
    CU_OK(cuMemExportToShareableHandle(&e.fh, e.h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    return e;
}

/* Spawn the importer (with extra env), send it fh, expect the status word. */
static void import_in_peer(const CUmemFabricHandle *fh, const char *const *args,
                           const char *const *env, const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", args, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, fh->data, sizeof(fh->data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void teardown_export(exported_t *e, bool released)
{
    if (!released)
        CU_OK(cuMemRelease(e->h));
    cut_unmap_free(e->ptr, SIZE);
}

static void fabric_handle_shares_memory_between_processes(void **state)
{
    (void)state;
    assert_non_null(fabt_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, e.ptr + 1, 1));
    assert_int_equal(b, 43); /* the peer's write, in the very same pages */
    unsigned long long allowed = 0;
    CU_OK(cuPointerGetAttribute(&allowed, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, e.ptr));
    assert_int_equal(allowed, CU_MEM_HANDLE_TYPE_FABRIC);
    teardown_export(&e, false);
}

static void nccl_fallback_drops_fabric_without_a_channel(void **state)
{
    (void)state;
    /* A config that gives no IMEX channel to anyone. */
    assert_non_null(fabt_daemon_start("[driver]\nversion = 13000\n", NULL));
    cut_init(0);
    int fabric = 0;
    CU_OK(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
    assert_int_equal(fabric, 1); /* the attribute says yes ... */
    CUmemAllocationProp prop =
        cut_prop(CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, SIZE, &prop, 0);
    assert_int_equal(r, CUDA_ERROR_NOT_PERMITTED); /* ... cuMemCreate says no */
    /* NCCL: on NOT_PERMITTED or NOT_SUPPORTED, drop FABRIC and retry. */
    if (r == CUDA_ERROR_NOT_PERMITTED || r == CUDA_ERROR_NOT_SUPPORTED) {
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        r = cuMemCreate(&h, SIZE, &prop, 0);
    }
    CU_OK(r);
    CUdeviceptr ptr = cut_map_rw(h, SIZE);
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    close(fd);
    CUmemFabricHandle fh;
    CU_IS(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
          CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemRelease(h));
    cut_unmap_free(ptr, SIZE);
}

static void fabric_and_posix_from_one_allocation(void **state)
{
    (void)state;
    assert_non_null(fabt_daemon_start(NULL, NULL));
    exported_t e = export_fabric(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, e.h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemGenericAllocationHandle other;
    CU_OK(cuMemImportFromShareableHandle(&other, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr p2 = cut_map_rw(other, SIZE);
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, p2, 1));
    assert_int_equal(b, 42);
    CU_OK(cuMemRelease(other));
    cut_unmap_free(p2, SIZE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    teardown_export(&e, false);
}

static void release_before_import_leaves_a_stale_handle(void **state)
{
    (void)state;
    assert_non_null(fabt_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    /* The fabric handle names the memory but holds no reference. */
    CU_OK(cuMemRelease(e.h));
    cut_unmap_free(e.ptr, SIZE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_ERROR_INVALID_HANDLE");
}

static void a_live_mapping_keeps_fabric_memory(void **state)
{
    (void)state;
    assert_non_null(fabt_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    CU_OK(cuMemRelease(e.h)); /* the mapping still holds the memory */
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, e.ptr + 1, 1));
    assert_int_equal(b, 43);
    teardown_export(&e, true);
}

static void forged_fabric_handle_is_refused(void **state)
{
    (void)state;
    assert_non_null(fabt_daemon_start(NULL, NULL));
    exported_t e = export_fabric(0);
    CUmemFabricHandle forged = e.fh;
    forged.data[20] ^= 0x01;
    CUmemGenericAllocationHandle h;
    CU_IS(cuMemImportFromShareableHandle(&h, &forged, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_INVALID_HANDLE);
    memset(&forged, 0, sizeof(forged));
    CU_IS(cuMemImportFromShareableHandle(&h, &forged, CU_MEM_HANDLE_TYPE_FABRIC),
          CUDA_ERROR_INVALID_HANDLE);
    import_in_peer(&e.fh, NULL, NULL, "CUDA_SUCCESS"); /* the genuine one still works */
    teardown_export(&e, false);
}

static const char topology_config[] =
    "[channel 0]\nuids = 0\n"
    "[node a]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node b]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node other-domain]\nimex_domain = two\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 1\n"
    "[node other-clique]\nimex_domain = one\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 2\n";

static void topology_decides_who_may_import(void **state)
{
    (void)state;
    fabt_daemon_t *d = fabt_daemon_start(topology_config, NULL);
    assert_non_null(d);
    setenv("FABMEM_CONFIG", d->config, 1);
    setenv("FABMEM_NODE", "a", 1);
    exported_t e = export_fabric(0);
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 2); /* node a's devices, from the config */
    char config_env[300];
    snprintf(config_env, sizeof(config_env), "FABMEM_CONFIG=%s", d->config);
    const char *const same[] = {config_env, "FABMEM_NODE=b", NULL};
    import_in_peer(&e.fh, NULL, same, "CUDA_SUCCESS");
    const char *const domain[] = {config_env, "FABMEM_NODE=other-domain", NULL};
    import_in_peer(&e.fh, NULL, domain, "CUDA_ERROR_INVALID_HANDLE");
    const char *const clique[] = {config_env, "FABMEM_NODE=other-clique", NULL};
    import_in_peer(&e.fh, NULL, clique, "CUDA_ERROR_NOT_SUPPORTED");
    teardown_export(&e, false);
}

static void import_without_a_shared_channel_is_not_permitted(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip(); /* needs a second user: drops privileges */
    assert_non_null(fabt_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0\n[channel 1]\nuids = 65534\n", NULL));
    exported_t e = export_fabric(0);
    const char *const args[] = {"nobody", NULL};
    import_in_peer(&e.fh, args, NULL, "CUDA_ERROR_NOT_PERMITTED");
    teardown_export(&e, false);
}

static void import_sharing_a_channel_across_users(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip();
    assert_non_null(fabt_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n", NULL));
    exported_t e = export_fabric(0);
    const char *const args[] = {"nobody", NULL};
    import_in_peer(&e.fh, args, NULL, "CUDA_SUCCESS");
    teardown_export(&e, false);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(fabric_handle_shares_memory_between_processes, fabt_teardown),
    cmocka_unit_test_teardown(nccl_fallback_drops_fabric_without_a_channel, fabt_teardown),
    cmocka_unit_test_teardown(fabric_and_posix_from_one_allocation, fabt_teardown),
    cmocka_unit_test_teardown(release_before_import_leaves_a_stale_handle, fabt_teardown),
    cmocka_unit_test_teardown(a_live_mapping_keeps_fabric_memory, fabt_teardown),
    cmocka_unit_test_teardown(forged_fabric_handle_is_refused, fabt_teardown),
    cmocka_unit_test_teardown(topology_decides_who_may_import, fabt_teardown),
    cmocka_unit_test_teardown(import_without_a_shared_channel_is_not_permitted, fabt_teardown),
    cmocka_unit_test_teardown(import_sharing_a_channel_across_users, fabt_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
};

FAB_TEST_MAIN("cuda", tests, helpers)
