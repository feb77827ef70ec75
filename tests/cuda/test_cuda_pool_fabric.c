/* FABRIC memory pools through the daemon, against cuda.h only: a pool made
 * with FABRIC handles is shared as its 64-byte fabric handle, so the fabric's
 * rules (channels, topology, IMEX domains) decide who may import it, as for
 * any FABRIC allocation. The importer is this binary re-run on another
 * emulated tray (FABMEM_NODE). Each test starts its own fabmemd
 * (tests/fabric/daemon_harness.c) and stops it by pid. */
#include "cuda_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

#define BYTES 65536

static const char two_trays[] =
    "[channel 0]\nuids = 0\n"
    "[node a]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node b]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
    "clique_id = 1\ngpus = 2\n"
    "[node other-domain]\nimex_domain = two\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 1\n";

/* helper "importer": receive a pool's fabric handle and a pointer's export
 * data; send the name of the pool import's result. On success check byte 0
 * is 42, write 43 at byte 1, free the pointer, destroy the pool. */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    CUmemFabricHandle fh;
    CUmemPoolPtrExportData data;
    if (fab_test_recv(sock, &fh, sizeof(fh)) != 0 || fab_test_recv(sock, &data, sizeof(data)) != 0)
        return 14;
    CUmemoryPool pool;
    CUresult r = cuMemPoolImportFromShareableHandle(&pool, &fh, CU_MEM_HANDLE_TYPE_FABRIC, 0);
    if (r == CUDA_SUCCESS) {
        CUdeviceptr ptr;
        HELPER_CU(cuMemPoolImportPointer(&ptr, pool, &data), 15);
        unsigned char b = 0;
        HELPER_CU(cuMemcpyDtoH(&b, ptr, 1), 16);
        if (b != 42)
            return 17;
        HELPER_CU(cuMemsetD8(ptr + 1, 43, 1), 18);
        HELPER_CU(cuMemFree(ptr), 19);
        HELPER_CU(cuMemPoolDestroy(pool), 20);
    }
    const char *name = "?";
    cuGetErrorName(r, &name);
    return fab_test_send_word(sock, name) == 0 ? 0 : 21;
}

typedef struct shared {
    CUmemoryPool pool;
    CUdeviceptr ptr;
    CUmemFabricHandle fh;
    CUmemPoolPtrExportData data;
} shared_t;

/* A FABRIC pool on device 0 of node a, an allocation in it holding 42 at
 * byte 0, and both exported. */
static shared_t share_fabric_pool(void)
{
    shared_t s;
    setenv("FABMEM_NODE", "a", 1);
    cut_init(0);
    int types = 0;
    CU_OK(cuDeviceGetAttribute(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0));
    assert_true(types & CU_MEM_HANDLE_TYPE_FABRIC);
    CUmemPoolProps p;
    memset(&p, 0, sizeof(p));
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.maxSize = 2u << 20;
    CU_OK(cuMemPoolCreate(&s.pool, &p));
    CU_OK(cuMemAllocFromPoolAsync(&s.ptr, BYTES, s.pool, NULL));
    CU_OK(cuMemsetD8(s.ptr, 42, 1));
    CU_OK(cuMemPoolExportToShareableHandle(&s.fh, s.pool, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    CU_OK(cuMemPoolExportPointer(&s.data, s.ptr));
    return s;
}

static void import_in_peer(const shared_t *s, const char *node, const char *want)
{
    char env_node[64];
    snprintf(env_node, sizeof(env_node), "FABMEM_NODE=%s", node);
    const char *const env[] = {env_node, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", NULL, env, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, &s->fh, sizeof(s->fh)), 0);
    assert_int_equal(fab_test_send(child.sock, &s->data, sizeof(s->data)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
}

static void unshare(shared_t *s)
{
    CU_OK(cuMemFreeAsync(s->ptr, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuMemPoolDestroy(s->pool));
}

static void a_fabric_pool_is_shared_with_another_tray(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(two_trays, NULL));
    shared_t s = share_fabric_pool();
    import_in_peer(&s, "b", "CUDA_SUCCESS");
    unsigned char b = 0;
    CU_OK(cuMemcpyDtoH(&b, s.ptr + 1, 1));
    assert_int_equal(b, 43); /* the other tray's write, in the very same pages */
    unshare(&s);
}

static void a_fabric_pool_is_refused_across_imex_domains(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(two_trays, NULL));
    shared_t s = share_fabric_pool();
    import_in_peer(&s, "other-domain", "CUDA_ERROR_INVALID_HANDLE");
    unshare(&s);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(a_fabric_pool_is_shared_with_another_tray, fab_test_teardown),
    cmocka_unit_test_teardown(a_fabric_pool_is_refused_across_imex_domains, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer},
};

FAB_TEST_MAIN("cuda", tests, helpers)
