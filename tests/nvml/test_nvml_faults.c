/* A running program sees the fabric change: this process has NVML and
 * libcuda loaded and initialised when `fabmem fault` (the real command, a
 * process of its own) changes its node's fabric state and isolates its
 * GPUs; NVML's fabric info and P2P status and libcuda's multicast attribute
 * and peer access answer the new state, and `fabmem fault reset` brings the
 * old one back. Written against nvml.h and cuda.h, as a user's program. */
#include <cuda.h>
#include <nvml.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"
#include "fabtest.h"

#define NV_OK(call) assert_int_equal((call), NVML_SUCCESS)
#define CU_OK(call) assert_int_equal((call), CUDA_SUCCESS)

static const char config[] =
    "[channel 0]\nuids = 0\n"
    "[node tray0]\nimex_domain = rack\ncluster_uuid = 4e564c37-3200-4000-8000-000000000001\n"
    "clique_id = 7\ngpus = 2\n";

/* Run `fabmem fault ARGS...` (the tool the build made); its exit status. */
static int fabmem_fault(const char *a, const char *b)
{
    const char *tool = getenv("FABMEM_TOOL");
    assert_non_null(tool);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(tool, tool, "fault", a, b, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static unsigned fabric_state(void)
{
    nvmlDevice_t d;
    NV_OK(nvmlDeviceGetHandleByIndex(0, &d));
    nvmlGpuFabricInfoV_t info;
    memset(&info, 0, sizeof(info));
    info.version = nvmlGpuFabricInfo_v2;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(d, &info));
    return info.state;
}

static int multicast_supported(void)
{
    int v = -1;
    CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
    return v;
}

static void running_program_sees_fabric_faults_set_after_it_started(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config, NULL));
    setenv("FABMEM_NODE", "tray0", 1);
    NV_OK(nvmlInit());
    CU_OK(cuInit(0));
    assert_int_equal(fabric_state(), NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(multicast_supported(), 1);

    assert_int_equal(fabmem_fault("tray0", "fabric_state=in_progress"), 0);
    assert_int_equal(fabric_state(), NVML_GPU_FABRIC_STATE_IN_PROGRESS);
    assert_int_equal(multicast_supported(), 0);

    int can = -1;
    CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 1);
    assert_int_equal(fabmem_fault("tray0", "gpus_isolated=yes"), 0);
    CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 0);
    nvmlDevice_t d0, d1;
    NV_OK(nvmlDeviceGetHandleByIndex(0, &d0));
    NV_OK(nvmlDeviceGetHandleByIndex(1, &d1));
    nvmlGpuP2PStatus_t p2p;
    NV_OK(nvmlDeviceGetP2PStatus(d0, d1, NVML_P2P_CAPS_INDEX_NVLINK, &p2p));
    assert_int_equal(p2p, NVML_P2P_STATUS_NOT_SUPPORTED);

    assert_int_equal(fabmem_fault("reset", NULL), 0);
    assert_int_equal(fabric_state(), NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(multicast_supported(), 1);
    CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 1);
    NV_OK(nvmlDeviceGetP2PStatus(d0, d1, NVML_P2P_CAPS_INDEX_NVLINK, &p2p));
    assert_int_equal(p2p, NVML_P2P_STATUS_OK);
    NV_OK(nvmlShutdown());
}

/* Isolated GPUs refuse peer access as cuda.h says a pair that
 * cuDeviceCanAccessPeer answers 0 for does, and grant it again after a reset. */
static void peer_access_between_isolated_gpus_is_unsupported(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config, NULL));
    setenv("FABMEM_NODE", "tray0", 1);
    CU_OK(cuInit(0));
    CUcontext c0, c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CU_OK(cuCtxSetCurrent(c0));
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    assert_int_equal(fabmem_fault("tray0", "gpus_isolated=yes"), 0);
    assert_int_equal(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    /* The peer attributes say what cuDeviceCanAccessPeer says. */
    int can = -1, attr = -1;
    CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 0);
    CU_OK(cuDeviceGetP2PAttribute(&attr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
    assert_int_equal(attr, 0);
    CU_OK(cuDeviceGetP2PAttribute(&attr, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 1, 0));
    assert_int_equal(attr, 0);
    /* A peer copy needs no peer access (cuMemcpyPeer): it still works. */
    CUdeviceptr a, b;
    uint32_t v = 0x15015, got = 0;
    CU_OK(cuMemAlloc(&a, sizeof(v)));
    CU_OK(cuCtxSetCurrent(c1));
    CU_OK(cuMemAlloc(&b, sizeof(v)));
    CU_OK(cuMemcpyHtoD(b, &v, sizeof(v)));
    CU_OK(cuMemcpyPeer(a, c0, b, c1, sizeof(v)));
    CU_OK(cuMemFree(b));
    CU_OK(cuCtxSetCurrent(c0));
    CU_OK(cuMemcpyDtoH(&got, a, sizeof(got)));
    assert_int_equal(got, v);
    CU_OK(cuMemFree(a));
    assert_int_equal(fabmem_fault("reset", NULL), 0);
    CU_OK(cuDeviceGetP2PAttribute(&attr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
    assert_int_equal(attr, 1);
    /* The access enabled before the isolation was never disabled (CUDA
     * reports the second enable so). */
    assert_int_equal(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CU_OK(cuCtxDisablePeerAccess(c1));
    CU_OK(cuCtxEnablePeerAccess(c1, 0));
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_OK(cuDevicePrimaryCtxRelease(1));
}

static void fabmem_fault_names_a_node_the_daemon_lacks(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config, NULL));
    assert_int_equal(fabmem_fault("tray9", "imex=down"), 2);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(running_program_sees_fabric_faults_set_after_it_started,
                              fab_test_teardown),
    cmocka_unit_test_teardown(peer_access_between_isolated_gpus_is_unsupported,
                              fab_test_teardown),
    cmocka_unit_test_teardown(fabmem_fault_names_a_node_the_daemon_lacks, fab_test_teardown),
};

FAB_TEST_MAIN_NO_HELPERS("nvml", tests)
