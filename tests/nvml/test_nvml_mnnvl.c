/* NCCL's multi-node NVLink (MNNVL) decision, re-created as NCCL makes it:
 * libnvidia-ml.so.1 is loaded with dlopen (LD_LIBRARY_PATH names the build's
 * lib/fabmem), each rank reads its GPU's fabric info with
 * nvmlDeviceGetGpuFabricInfoV at version 2, the ranks compare them, and only
 * if every rank's fabric is COMPLETED with a SUCCESS status and two or more
 * share one cluster uuid and clique id does the communicator try FABRIC
 * memory (cuMemCreate, export, import in the other process). Two processes,
 * on two emulated trays of one daemon: this one is rank 0 on node "a", the
 * helper rank 1 on node "b". The negative cases give NCCL the values it says
 * no on, and the fabric itself agrees (an import across cliques fails). */
#include <cuda.h>
#include <dlfcn.h>
#include <nvml.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"
#include "fabtest.h"

#define SIZE (2u << 20)

/* The NVML entry points NCCL resolves, by name. */
typedef struct nvml_api {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*fabric_info_v)(nvmlDevice_t, nvmlGpuFabricInfoV_t *);
} nvml_api_t;

static int resolve(void *lib, const char *name, void *fn_out)
{
    void *sym = dlsym(lib, name);
    if (sym == NULL)
        return -1;
    memcpy(fn_out, &sym, sizeof(sym)); /* ISO C has no object-to-function cast */
    return 0;
}

static int nvml_open(nvml_api_t *api)
{
    api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (api->lib == NULL)
        return -1;
    if (resolve(api->lib, "nvmlInit_v2", &api->init) != 0 ||
        resolve(api->lib, "nvmlShutdown", &api->shutdown) != 0 ||
        resolve(api->lib, "nvmlDeviceGetHandleByIndex_v2", &api->handle_by_index) != 0 ||
        resolve(api->lib, "nvmlDeviceGetGpuFabricInfoV", &api->fabric_info_v) != 0)
        return -1;
    return 0;
}

/* This process's GPU 0 as NCCL records it in its peer info. */
static int my_fabric_info(nvmlGpuFabricInfo_v2_t *info)
{
    nvml_api_t api;
    nvmlDevice_t dev;
    if (nvml_open(&api) != 0 || api.init() != NVML_SUCCESS ||
        api.handle_by_index(0, &dev) != NVML_SUCCESS)
        return -1;
    memset(info, 0, sizeof(*info));
    info->version = nvmlGpuFabricInfo_v2;
    nvmlReturn_t r = api.fabric_info_v(dev, (nvmlGpuFabricInfoV_t *)(void *)info);
    api.shutdown();
    dlclose(api.lib);
    return r == NVML_SUCCESS ? 0 : -1;
}

/* NCCL's rule: every rank's fabric registered without error, and a clique
 * (same cluster, same clique id) of more than one rank around rank 0. */
static bool mnnvl_decision(const nvmlGpuFabricInfo_v2_t *ranks, int n)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i].state != NVML_GPU_FABRIC_STATE_COMPLETED || ranks[i].status != NVML_SUCCESS)
            return false;
    }
    int clique = 0;
    for (int i = 0; i < n; i++) {
        if (memcmp(ranks[i].clusterUuid, ranks[0].clusterUuid, NVML_GPU_FABRIC_UUID_LEN) == 0 &&
            ranks[i].cliqueId == ranks[0].cliqueId)
            clique++;
    }
    return clique > 1;
}

/* helper "rank": send this GPU's fabric info, then, while rank 0 sends a
 * FABRIC handle (a 1 byte first), import it, check byte 0 is 42 and send the
 * import's status by name. */
static int helper_rank(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    nvmlGpuFabricInfo_v2_t info;
    if (my_fabric_info(&info) != 0)
        return 10;
    if (fab_test_send(sock, &info, sizeof(info)) != 0)
        return 11;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 12;
    unsigned char more = 0;
    if (fab_test_recv(sock, &more, 1) != 0)
        return 13;
    if (!more)
        return 0;
    CUmemFabricHandle fh;
    if (fab_test_recv(sock, fh.data, sizeof(fh.data)) != 0)
        return 14;
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
    if (r == CUDA_SUCCESS) {
        CUdeviceptr ptr;
        CUmemAccessDesc access;
        memset(&access, 0, sizeof(access));
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = 0;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        unsigned char b = 0;
        if (cuMemAddressReserve(&ptr, SIZE, 0, 0, 0) != CUDA_SUCCESS ||
            cuMemMap(ptr, SIZE, 0, h, 0) != CUDA_SUCCESS ||
            cuMemSetAccess(ptr, SIZE, &access, 1) != CUDA_SUCCESS ||
            cuMemcpyDtoH(&b, ptr, 1) != CUDA_SUCCESS || b != 42)
            return 15;
        if (cuMemUnmap(ptr, SIZE) != CUDA_SUCCESS || cuMemRelease(h) != CUDA_SUCCESS ||
            cuMemAddressFree(ptr, SIZE) != CUDA_SUCCESS)
            return 16;
    }
    const char *name = "?";
    cuGetErrorName(r, &name);
    return fab_test_send_word(sock, name) == 0 ? 0 : 17;
}

/* Two trays, "a" and "b", of one cluster; b_keys overrides node b. */
static void start_rack(const char *b_keys)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "[channel 0]\nuids = %u\n"
             "[node a]\ngpus = 2\nimex_domain = rack\n"
             "cluster_uuid = 4e564c37-3200-4000-8000-000000000001\nclique_id = 7\n"
             "[node b]\ngpus = 2\nimex_domain = rack\n"
             "cluster_uuid = 4e564c37-3200-4000-8000-000000000001\nclique_id = 7\n%s",
             (unsigned)getuid(), b_keys);
    assert_non_null(fab_test_daemon_start(text, NULL));
    setenv("FABMEM_NODE", "a", 1);
}

typedef struct exported {
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
    CUmemFabricHandle fh;
} exported_t;

/* NCCL's probe: FABRIC memory on GPU 0, 42 at byte 0, exported. */
static exported_t fabric_probe(void)
{
    exported_t e;
    CUcontext ctx;
    assert_int_equal(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    assert_int_equal(cuMemCreate(&e.h, SIZE, &prop, 0), CUDA_SUCCESS);
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    assert_int_equal(cuMemAddressReserve(&e.ptr, SIZE, 0, 0, 0), CUDA_SUCCESS);
    assert_int_equal(cuMemMap(e.ptr, SIZE, 0, e.h, 0), CUDA_SUCCESS);
    assert_int_equal(cuMemSetAccess(e.ptr, SIZE, &access, 1), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD8(e.ptr, 42, 1), CUDA_SUCCESS);
    assert_int_equal(cuMemExportToShareableHandle(&e.fh, e.h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
                     CUDA_SUCCESS);
    return e;
}

static void fabric_probe_release(exported_t *e)
{
    assert_int_equal(cuMemUnmap(e->ptr, SIZE), CUDA_SUCCESS);
    assert_int_equal(cuMemAddressFree(e->ptr, SIZE), CUDA_SUCCESS);
    assert_int_equal(cuMemRelease(e->h), CUDA_SUCCESS);
}

/* Rank 0's side: gather both ranks' fabric info, decide as NCCL does; then,
 * if probe_word is not NULL, export FABRIC memory and expect the peer's
 * import to answer probe_word. Returns the decision; ranks_out gets both. */
static bool run_ranks(const char *probe_word, nvmlGpuFabricInfo_v2_t ranks_out[2])
{
    const char *const env[] = {"FABMEM_NODE=b", NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("rank", NULL, env, &child), 0);
    assert_int_equal(my_fabric_info(&ranks_out[0]), 0);
    assert_int_equal(fab_test_recv(child.sock, &ranks_out[1], sizeof(ranks_out[1])), 0);
    bool mnnvl = mnnvl_decision(ranks_out, 2);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    int fabric_supported = 0;
    assert_int_equal(cuDeviceGetAttribute(&fabric_supported,
                                          CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0),
                     CUDA_SUCCESS);
    mnnvl = mnnvl && fabric_supported;
    unsigned char more = probe_word != NULL;
    assert_int_equal(fab_test_send(child.sock, &more, 1), 0);
    if (more) {
        exported_t e = fabric_probe();
        assert_int_equal(fab_test_send(child.sock, e.fh.data, sizeof(e.fh.data)), 0);
        assert_int_equal(fab_test_expect_word(child.sock, probe_word), 0);
        fabric_probe_release(&e);
    }
    assert_int_equal(fab_test_reap(&child), 0);
    return mnnvl;
}

static void two_trays_of_one_clique_share_fabric_memory(void **state)
{
    (void)state;
    start_rack("");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_true(run_ranks("CUDA_SUCCESS", ranks));
    assert_int_equal(ranks[1].state, NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(ranks[1].cliqueId, 7);
}

static void another_clique_is_no_mnnvl_and_no_import(void **state)
{
    (void)state;
    start_rack("clique_id = 8\n");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_false(run_ranks("CUDA_ERROR_NOT_SUPPORTED", ranks));
    assert_int_equal(ranks[0].cliqueId, 7);
    assert_int_equal(ranks[1].cliqueId, 8);
    assert_int_equal(ranks[1].state, NVML_GPU_FABRIC_STATE_COMPLETED);
}

static void another_cluster_is_no_mnnvl(void **state)
{
    (void)state;
    start_rack("cluster_uuid = 4e564c37-3200-4000-8000-000000000002\n");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_false(run_ranks(NULL, ranks));
    assert_int_equal(ranks[1].cliqueId, 7);
    assert_int_not_equal(memcmp(ranks[0].clusterUuid, ranks[1].clusterUuid, 16), 0);
}

static void fabric_in_progress_is_no_mnnvl(void **state)
{
    (void)state;
    start_rack("fabric_state = in_progress\n");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_false(run_ranks(NULL, ranks));
    assert_int_equal(ranks[0].state, NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(ranks[1].state, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
}

static void fabric_error_status_is_no_mnnvl(void **state)
{
    (void)state;
    start_rack("fabric_status = 999\n");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_false(run_ranks(NULL, ranks));
    assert_int_equal(ranks[1].state, NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(ranks[1].status, NVML_ERROR_UNKNOWN);
}

static void fabric_not_supported_is_no_mnnvl(void **state)
{
    (void)state;
    start_rack("fabric_state = not_supported\n");
    nvmlGpuFabricInfo_v2_t ranks[2];
    assert_false(run_ranks(NULL, ranks));
    assert_int_equal(ranks[1].state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(two_trays_of_one_clique_share_fabric_memory, fab_test_teardown),
    cmocka_unit_test_teardown(another_clique_is_no_mnnvl_and_no_import, fab_test_teardown),
    cmocka_unit_test_teardown(another_cluster_is_no_mnnvl, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_in_progress_is_no_mnnvl, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_error_status_is_no_mnnvl, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_not_supported_is_no_mnnvl, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"rank", helper_rank},
};

FAB_TEST_MAIN("nvml", tests, helpers)
