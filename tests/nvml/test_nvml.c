/* libnvidia-ml.so.1 against nvml.h and cuda.h, as a user's program sees it:
 * NVML and libcuda agree on every device of examples/nvl72.ini; NVML ignores
 * CUDA_VISIBLE_DEVICES; fabric info, NVLink and platform info come from the
 * daemon's topology, fault configs included; with no daemon, the local config
 * and a fabric not started; NVML's errors. Each test is its own process
 * (NVML's state is per process); those with a daemon start their own. */
#include <cuda.h>
#include <dlfcn.h>
#include <nvml.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"
#include "fabtest.h"

/* NVML 13's nvml.h marks nvmlDeviceGetGpuFabricInfo deprecated; the library
 * still exports it and NCCL falls back to it, so the tests call it. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NV_OK(call) assert_int_equal((call), NVML_SUCCESS)
#define NV_IS(call, code) assert_int_equal((call), (code))

static const char cluster_text[] = "4e564c37-3200-4000-8000-000000000001";

/* A two-node rack whose second node, "b", has the given extra keys. */
static const char *rack(const char *b_keys)
{
    static char text[1024];
    snprintf(text, sizeof(text),
             "[channel 0]\nuids = %u\n"
             "[node a]\ngpus = 2\ncluster_uuid = %s\nclique_id = 7\n"
             "[node b]\ngpus = 2\ncluster_uuid = %s\nclique_id = 7\n%s",
             (unsigned)getuid(), cluster_text, cluster_text, b_keys);
    return text;
}

static void start_on(const char *config, const char *node)
{
    assert_non_null(fab_test_daemon_start(config, NULL));
    setenv("FABMEM_NODE", node, 1);
}

static nvmlDevice_t handle(unsigned index)
{
    nvmlDevice_t d = NULL;
    NV_OK(nvmlDeviceGetHandleByIndex(index, &d));
    return d;
}

/* helper "compare": NVML and libcuda side by side for every device of this
 * process's node; sends "ok N" or the first difference. */
static int helper_compare(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    char word[256] = "";
    unsigned count = 0;
    int cu_count = 0;
    if (nvmlInit() != NVML_SUCCESS || cuInit(0) != CUDA_SUCCESS)
        return 10;
    if (nvmlDeviceGetCount(&count) != NVML_SUCCESS || cuDeviceGetCount(&cu_count) != CUDA_SUCCESS)
        return 11;
    if ((int)count != cu_count)
        snprintf(word, sizeof(word), "count %u %d", count, cu_count);
    for (unsigned i = 0; i < count && word[0] == '\0'; i++) {
        nvmlDevice_t d;
        char nv_name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], cu_name[256];
        char nv_uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], cu_uuid[64];
        char cu_bus[32];
        nvmlPciInfo_t pci;
        nvmlMemory_t mem;
        int nv_major, nv_minor, cu_major, cu_minor;
        size_t cu_total;
        CUuuid u;
        if (nvmlDeviceGetHandleByIndex(i, &d) != NVML_SUCCESS ||
            nvmlDeviceGetName(d, nv_name, sizeof(nv_name)) != NVML_SUCCESS ||
            nvmlDeviceGetUUID(d, nv_uuid, sizeof(nv_uuid)) != NVML_SUCCESS ||
            nvmlDeviceGetPciInfo(d, &pci) != NVML_SUCCESS ||
            nvmlDeviceGetMemoryInfo(d, &mem) != NVML_SUCCESS ||
            nvmlDeviceGetCudaComputeCapability(d, &nv_major, &nv_minor) != NVML_SUCCESS)
            return 12;
        if (cuDeviceGetName(cu_name, sizeof(cu_name), (CUdevice)i) != CUDA_SUCCESS ||
            cuDeviceGetUuid(&u, (CUdevice)i) != CUDA_SUCCESS ||
            cuDeviceGetPCIBusId(cu_bus, sizeof(cu_bus), (CUdevice)i) != CUDA_SUCCESS ||
            cuDeviceTotalMem(&cu_total, (CUdevice)i) != CUDA_SUCCESS ||
            cuDeviceGetAttribute(&cu_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 (CUdevice)i) != CUDA_SUCCESS ||
            cuDeviceGetAttribute(&cu_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 (CUdevice)i) != CUDA_SUCCESS)
            return 13;
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(cu_uuid, sizeof(cu_uuid),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                 b[13], b[14], b[15]);
        CUdevice by_bus = -1;
        if (strcmp(nv_name, cu_name) != 0)
            snprintf(word, sizeof(word), "name %u", i);
        else if (strcmp(nv_uuid, cu_uuid) != 0)
            snprintf(word, sizeof(word), "uuid %u %s %s", i, nv_uuid, cu_uuid);
        else if (strcmp(pci.busIdLegacy, cu_bus) != 0)
            snprintf(word, sizeof(word), "bus %u %s %s", i, pci.busIdLegacy, cu_bus);
        else if (cuDeviceGetByPCIBusId(&by_bus, pci.busId) != CUDA_SUCCESS || by_bus != (int)i)
            snprintf(word, sizeof(word), "long bus %u %s", i, pci.busId);
        else if (mem.total != cu_total)
            snprintf(word, sizeof(word), "memory %u", i);
        else if (nv_major != cu_major || nv_minor != cu_minor)
            snprintf(word, sizeof(word), "capability %u", i);
    }
    if (word[0] == '\0')
        snprintf(word, sizeof(word), "ok %u", count);
    NV_OK(nvmlShutdown());
    return fab_test_send_word(sock, word) == 0 ? 0 : 14;
}

static void nvml_and_cuda_agree_on_every_nvl72_device(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config("nvl72.ini"), NULL));
    for (int node = 0; node < 18; node++) {
        char env[64];
        snprintf(env, sizeof(env), "FABMEM_NODE=tray%02d", node);
        const char *const extra[] = {env, NULL};
        fab_test_child_t child;
        assert_int_equal(fab_test_spawn("compare", NULL, extra, &child), 0);
        assert_int_equal(fab_test_expect_word(child.sock, "ok 4"), 0);
        assert_int_equal(fab_test_reap(&child), 0);
    }
}

/* helper "fabric": this node's GPU 0 fabric info at v3, as one word. */
static int helper_fabric(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    nvmlDevice_t d;
    nvmlGpuFabricInfoV_t info;
    memset(&info, 0, sizeof(info));
    info.version = nvmlGpuFabricInfo_v3;
    if (nvmlInit() != NVML_SUCCESS || nvmlDeviceGetHandleByIndex(0, &d) != NVML_SUCCESS ||
        nvmlDeviceGetGpuFabricInfoV(d, &info) != NVML_SUCCESS || nvmlShutdown() != NVML_SUCCESS)
        return 10;
    char word[128];
    snprintf(word, sizeof(word), "state=%u status=%u clique=%u cluster=%02x summary=%u",
             (unsigned)info.state, (unsigned)info.status, info.cliqueId, info.clusterUuid[15],
             (unsigned)info.healthSummary);
    return fab_test_send_word(sock, word) == 0 ? 0 : 11;
}

static void fault_example_shows_each_fault_in_fabric_info(void **state)
{
    (void)state;
    static const struct {
        const char *node, *want;
    } cases[] = {
        {"healthy", "state=3 status=0 clique=1 cluster=0f summary=1"},
        {"degraded", "state=3 status=0 clique=1 cluster=0f summary=3"},
        {"registering", "state=2 status=0 clique=1 cluster=0f summary=1"},
        {"unregistered", "state=1 status=0 clique=0 cluster=00 summary=1"},
        {"probe-error", "state=3 status=999 clique=1 cluster=0f summary=1"},
        {"other-clique", "state=3 status=0 clique=2 cluster=0f summary=1"},
        {"other-cluster", "state=3 status=0 clique=1 cluster=f0 summary=1"},
        {"no-fabric", "state=0 status=0 clique=0 cluster=00 summary=0"},
    };
    assert_non_null(fab_test_daemon_start(fab_test_example_config("fabric_faults.ini"), NULL));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char env[64];
        snprintf(env, sizeof(env), "FABMEM_NODE=%s", cases[i].node);
        const char *const extra[] = {env, NULL};
        fab_test_child_t child;
        assert_int_equal(fab_test_spawn("fabric", NULL, extra, &child), 0);
        if (fab_test_expect_word(child.sock, cases[i].want) != 0)
            fail_msg("node %s: wanted \"%s\"", cases[i].node, cases[i].want);
        assert_int_equal(fab_test_reap(&child), 0);
    }
}

static void nvml_ignores_cuda_visible_devices(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray03");
    setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
    NV_OK(nvmlInit());
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    unsigned count = 0;
    int cu_count = 0;
    NV_OK(nvmlDeviceGetCount(&count));
    assert_int_equal(cuDeviceGetCount(&cu_count), CUDA_SUCCESS);
    assert_int_equal(count, 4);
    assert_int_equal(cu_count, 2);
    /* CUDA's device 0 is NVML's index 3: the same bus id names both. */
    char bus[32];
    assert_int_equal(cuDeviceGetPCIBusId(bus, sizeof(bus), 0), CUDA_SUCCESS);
    nvmlDevice_t d;
    NV_OK(nvmlDeviceGetHandleByPciBusId(bus, &d));
    unsigned index = 99;
    NV_OK(nvmlDeviceGetIndex(d, &index));
    assert_int_equal(index, 3);
    NV_OK(nvmlShutdown());
}

static void devices_are_found_by_uuid_and_pci_bus_id(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray05");
    NV_OK(nvmlInit());
    nvmlDevice_t d2 = handle(2), found = NULL;
    char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
    NV_OK(nvmlDeviceGetUUID(d2, uuid, sizeof(uuid)));
    assert_int_equal(strlen(uuid), 40);
    assert_memory_equal(uuid, "GPU-", 4);
    NV_OK(nvmlDeviceGetHandleByUUID(uuid, &found));
    assert_ptr_equal(found, d2);
    NV_IS(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-4000-8000-000000000000", &found),
          NVML_ERROR_NOT_FOUND);
    found = NULL;
    NV_OK(nvmlDeviceGetHandleByPciBusId("00000005:03:00.0", &found));
    assert_ptr_equal(found, d2);
    found = NULL;
    NV_OK(nvmlDeviceGetHandleByPciBusId("0005:03:00.0", &found));
    assert_ptr_equal(found, d2);
    NV_IS(nvmlDeviceGetHandleByPciBusId("0005:09:00.0", &found), NVML_ERROR_NOT_FOUND);
    NV_IS(nvmlDeviceGetHandleByPciBusId("gpu two", &found), NVML_ERROR_INVALID_ARGUMENT);
    unsigned minor = 99;
    NV_OK(nvmlDeviceGetMinorNumber(d2, &minor));
    assert_int_equal(minor, 2);
    NV_OK(nvmlShutdown());
}

static void pci_info_is_the_topologys_address(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray11");
    NV_OK(nvmlInit());
    nvmlPciInfo_t pci;
    NV_OK(nvmlDeviceGetPciInfo(handle(1), &pci));
    assert_string_equal(pci.busId, "0000000B:02:00.0");
    assert_string_equal(pci.busIdLegacy, "000B:02:00.0");
    assert_int_equal(pci.domain, 11);
    assert_int_equal(pci.bus, 2);
    assert_int_equal(pci.device, 0);
    assert_int_equal(pci.pciDeviceId, 0x233010de);
    /* The first ABI's record ends where the long bus id starts plus 16
     * reserved bytes: nothing past them is written. */
    nvmlReturn_t (*old)(nvmlDevice_t, nvmlPciInfo_t *) = NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW); /* the one already loaded */
    assert_non_null(lib);
    void *sym = dlsym(lib, "nvmlDeviceGetPciInfo");
    assert_non_null(sym);
    memcpy(&old, &sym, sizeof(old)); /* ISO C has no object-to-function cast */
    unsigned char raw[sizeof(nvmlPciInfo_t)];
    memset(raw, 0xab, sizeof(raw));
    NV_OK(old(handle(1), (nvmlPciInfo_t *)(void *)raw));
    size_t old_size = offsetof(nvmlPciInfo_t, busId) + 16;
    assert_string_equal((const char *)raw, "000B:02:00.0");
    for (size_t i = old_size; i < sizeof(raw); i++)
        assert_int_equal(raw[i], 0xab);
    dlclose(lib);
    NV_OK(nvmlShutdown());
}

/* NCCL 2.30 passes the first ABI's 52-byte record to the current version
 * (NVIDIA/nccl#2325). NVIDIA's library writes the legacy id, the numbers and
 * the 16-character long id with its NUL: one byte past such a record. The
 * emulation writes the same bytes and none after them. */
static void pci_info_v3_writes_as_far_as_nvidias_and_no_further(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray11");
    NV_OK(nvmlInit());
    unsigned char raw[sizeof(nvmlPciInfo_t) + 16];
    memset(raw, 0xab, sizeof(raw));
    NV_OK(nvmlDeviceGetPciInfo_v3(handle(1), (nvmlPciInfo_t *)(void *)raw));
    size_t at = offsetof(nvmlPciInfo_t, busId);
    assert_int_equal(at, 36);
    assert_memory_equal(raw + at, "0000000B:02:00.0", 17);
    assert_string_equal((const char *)raw, "000B:02:00.0");
    for (size_t i = at + 17; i < sizeof(raw); i++)
        assert_int_equal(raw[i], 0xab);
    nvmlPciInfo_t pci;
    memcpy(&pci, raw, sizeof(pci));
    assert_int_equal(pci.domain, 11);
    assert_int_equal(pci.bus, 2);
    assert_int_equal(pci.pciDeviceId, 0x233010de);
    /* the NVLink peer's record is written the same way */
    memset(raw, 0xab, sizeof(raw));
    NV_OK(nvmlDeviceGetNvLinkRemotePciInfo_v2(handle(1), 0, (nvmlPciInfo_t *)(void *)raw));
    assert_int_equal(raw[at + 16], 0);
    for (size_t i = at + 17; i < sizeof(raw); i++)
        assert_int_equal(raw[i], 0xab);
    NV_OK(nvmlShutdown());
}

static void pci_info_ext_gives_the_class_and_the_long_bus_id(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray11");
    NV_OK(nvmlInit());
    nvmlPciInfoExt_t ext;
    memset(&ext, 0, sizeof(ext));
    ext.version = nvmlPciInfoExt_v1;
    NV_OK(nvmlDeviceGetPciInfoExt(handle(1), &ext));
    assert_int_equal(ext.version, nvmlPciInfoExt_v1);
    assert_string_equal(ext.busId, "0000000B:02:00.0");
    assert_int_equal(ext.domain, 11);
    assert_int_equal(ext.bus, 2);
    assert_int_equal(ext.device, 0);
    assert_int_equal(ext.pciDeviceId, 0x233010de);
    assert_int_equal(ext.baseClass, 0x03);
    assert_int_equal(ext.subClass, 0x02);
    ext.version = 0;
    NV_IS(nvmlDeviceGetPciInfoExt(handle(1), &ext), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    NV_IS(nvmlDeviceGetPciInfoExt(handle(1), NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_OK(nvmlShutdown());
    NV_IS(nvmlDeviceGetPciInfoExt(NULL, &ext), NVML_ERROR_UNINITIALIZED);
}

/* NCCL 2.30 reads the link of every GPU without a /sys PCI path, which on
 * fabmem is every GPU: x16 at the class's generation. */
static void pcie_link_is_x16_at_the_gpus_generation(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray00"); /* GB200: compute 10.0 */
    NV_OK(nvmlInit());
    unsigned gen = 0, width = 0, max_gen = 0, max_width = 0, speed = 0;
    NV_OK(nvmlDeviceGetCurrPcieLinkGeneration(handle(0), &gen));
    NV_OK(nvmlDeviceGetMaxPcieLinkGeneration(handle(0), &max_gen));
    NV_OK(nvmlDeviceGetCurrPcieLinkWidth(handle(0), &width));
    NV_OK(nvmlDeviceGetMaxPcieLinkWidth(handle(0), &max_width));
    NV_OK(nvmlDeviceGetPcieLinkMaxSpeed(handle(0), &speed));
    assert_int_equal(gen, 6);
    assert_int_equal(max_gen, 6);
    assert_int_equal(width, 16);
    assert_int_equal(max_width, 16);
    assert_int_equal(speed, NVML_PCIE_LINK_MAX_SPEED_64000MBPS);
    NV_IS(nvmlDeviceGetCurrPcieLinkGeneration(handle(0), NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetPcieLinkMaxSpeed(handle(0), NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_OK(nvmlShutdown());
    NV_IS(nvmlDeviceGetCurrPcieLinkWidth(NULL, &width), NVML_ERROR_UNINITIALIZED);
}

static void hopper_pcie_link_is_gen5(void **state)
{
    (void)state;
    start_on(rack("compute_capability = 9.0\n"), "b");
    NV_OK(nvmlInit());
    unsigned gen = 0, speed = 0;
    NV_OK(nvmlDeviceGetCurrPcieLinkGeneration(handle(1), &gen));
    NV_OK(nvmlDeviceGetPcieLinkMaxSpeed(handle(1), &speed));
    assert_int_equal(gen, 5);
    assert_int_equal(speed, NVML_PCIE_LINK_MAX_SPEED_32000MBPS);
    NV_OK(nvmlShutdown());
}

static void confidential_computing_is_off(void **state)
{
    (void)state;
    nvmlConfComputeSystemState_t cc;
    NV_IS(nvmlSystemGetConfComputeState(&cc), NVML_ERROR_UNINITIALIZED);
    start_on(fab_test_example_config("nvl72.ini"), "tray00");
    NV_OK(nvmlInit());
    memset(&cc, 0xff, sizeof(cc));
    NV_OK(nvmlSystemGetConfComputeState(&cc));
    assert_int_equal(cc.environment, NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE);
    assert_int_equal(cc.ccFeature, NVML_CC_SYSTEM_FEATURE_DISABLED);
    assert_int_equal(cc.devToolsMode, NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF);
    nvmlSystemConfComputeSettings_t set;
    memset(&set, 0xff, sizeof(set));
    set.version = nvmlSystemConfComputeSettings_v1;
    NV_OK(nvmlSystemGetConfComputeSettings(&set));
    assert_int_equal(set.version, nvmlSystemConfComputeSettings_v1);
    assert_int_equal(set.ccFeature, NVML_CC_SYSTEM_FEATURE_DISABLED);
    assert_int_equal(set.multiGpuMode, NVML_CC_SYSTEM_MULTIGPU_NONE);
    set.version = 1;
    NV_IS(nvmlSystemGetConfComputeSettings(&set), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    NV_IS(nvmlSystemGetConfComputeState(NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_OK(nvmlShutdown());
}

/* PyTorch's c10 looks up both with dlsym and asserts they are there. */
static void nvlink_peers_are_switches_and_no_process_is_listed(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray00");
    NV_OK(nvmlInit());
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    NV_OK(nvmlDeviceGetNvLinkRemoteDeviceType(handle(0), 0, &type));
    assert_int_equal(type, NVML_NVLINK_DEVICE_TYPE_SWITCH);
    NV_IS(nvmlDeviceGetNvLinkRemoteDeviceType(handle(0), NVML_NVLINK_MAX_LINKS, &type),
          NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetNvLinkRemoteDeviceType(handle(0), 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    assert_non_null(lib);
    const char *names[] = {"nvmlDeviceGetComputeRunningProcesses",
                           "nvmlDeviceGetComputeRunningProcesses_v2",
                           "nvmlDeviceGetComputeRunningProcesses_v3"};
    for (int i = 0; i < 3; i++) {
        nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *, void *) = NULL;
        void *sym = dlsym(lib, names[i]);
        assert_non_null(sym);
        memcpy(&fn, &sym, sizeof(fn));
        unsigned count = 7;
        NV_OK(fn(handle(0), &count, NULL));
        assert_int_equal(count, 0);
        NV_IS(fn(handle(0), NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
    }
    dlclose(lib);
    NV_OK(nvmlShutdown());
}

static void healthy_tray_reports_its_cluster_and_clique(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray09");
    NV_OK(nvmlInit());
    const unsigned char cluster[16] = {0x4e, 0x56, 0x4c, 0x37, 0x32, 0x00, 0x40, 0x00,
                                       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
    nvmlGpuFabricInfo_t v1;
    NV_OK(nvmlDeviceGetGpuFabricInfo(handle(0), &v1));
    assert_memory_equal(v1.clusterUuid, cluster, 16);
    assert_int_equal(v1.cliqueId, 1);
    assert_int_equal(v1.state, NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_int_equal(v1.status, NVML_SUCCESS);
    nvmlGpuFabricInfo_v2_t v2;
    memset(&v2, 0, sizeof(v2));
    v2.version = nvmlGpuFabricInfo_v2;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(handle(3), (nvmlGpuFabricInfoV_t *)(void *)&v2));
    assert_memory_equal(v2.clusterUuid, cluster, 16);
    assert_int_equal(v2.state, NVML_GPU_FABRIC_STATE_COMPLETED);
    assert_true(NVML_GPU_FABRIC_HEALTH_TEST(v2.healthMask, _DEGRADED_BW, _FALSE));
    assert_true(NVML_GPU_FABRIC_HEALTH_TEST(v2.healthMask, _ROUTE_UNHEALTHY, _FALSE));
    nvmlGpuFabricInfo_v3_t v3;
    memset(&v3, 0, sizeof(v3));
    v3.version = nvmlGpuFabricInfo_v3;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(handle(3), &v3));
    assert_int_equal(v3.cliqueId, 1);
    assert_int_equal(v3.healthSummary, NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY);
    NV_OK(nvmlShutdown());
}

static void fabric_in_progress_with_degraded_bandwidth_is_reported(void **state)
{
    (void)state;
    start_on(rack("fabric_state = in_progress\nfabric_health = degraded_bw\nfabric_status = 27\n"),
             "b");
    NV_OK(nvmlInit());
    nvmlGpuFabricInfoV_t info;
    memset(&info, 0, sizeof(info));
    info.version = nvmlGpuFabricInfo_v3;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(handle(0), &info));
    assert_int_equal(info.state, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
    assert_int_equal(info.status, NVML_ERROR_NOT_READY);
    assert_true(NVML_GPU_FABRIC_HEALTH_TEST(info.healthMask, _DEGRADED_BW, _TRUE));
    assert_true(NVML_GPU_FABRIC_HEALTH_TEST(info.healthMask, _ROUTE_RECOVERY, _FALSE));
    assert_int_equal(info.healthSummary, NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY);
    NV_OK(nvmlShutdown());
}

static void unhealthy_route_is_an_unhealthy_summary(void **state)
{
    (void)state;
    start_on(rack("fabric_state = not_started\nfabric_health = route_unhealthy\n"), "b");
    NV_OK(nvmlInit());
    nvmlGpuFabricInfoV_t info;
    memset(&info, 0, sizeof(info));
    info.version = nvmlGpuFabricInfo_v3;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(handle(1), &info));
    assert_int_equal(info.state, NVML_GPU_FABRIC_STATE_NOT_STARTED);
    assert_true(NVML_GPU_FABRIC_HEALTH_TEST(info.healthMask, _ROUTE_UNHEALTHY, _TRUE));
    assert_int_equal(info.healthSummary, NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY);
    NV_OK(nvmlShutdown());
}

static void gpus_without_fabric_say_not_supported(void **state)
{
    (void)state;
    start_on(rack("fabric_state = not_supported\n"), "b");
    NV_OK(nvmlInit());
    nvmlGpuFabricInfoV_t info;
    memset(&info, 0xff, sizeof(info));
    info.version = nvmlGpuFabricInfo_v3;
    NV_OK(nvmlDeviceGetGpuFabricInfoV(handle(0), &info));
    assert_int_equal(info.state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
    assert_int_equal(info.cliqueId, 0);
    assert_int_equal(info.healthMask, 0);
    assert_int_equal(info.healthSummary, NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED);
    nvmlEnableState_t active;
    NV_IS(nvmlDeviceGetNvLinkState(handle(0), 0, &active), NVML_ERROR_NOT_SUPPORTED);
    nvmlGpuP2PStatus_t p2p;
    NV_OK(nvmlDeviceGetP2PStatus(handle(0), handle(1), NVML_P2P_CAPS_INDEX_NVLINK, &p2p));
    assert_int_equal(p2p, NVML_P2P_STATUS_NOT_SUPPORTED);
    NV_OK(nvmlDeviceGetP2PStatus(handle(0), handle(1), NVML_P2P_CAPS_INDEX_READ, &p2p));
    assert_int_equal(p2p, NVML_P2P_STATUS_OK);
    NV_OK(nvmlShutdown());
}

static void no_daemon_gives_the_local_config_and_a_fabric_not_started(void **state)
{
    (void)state;
    char *dir = NULL;
    char *path = fab_test_config_file(fab_test_example_config("nvl72.ini"), &dir);
    setenv("FABMEM_CONFIG", path, 1);
    setenv("FABMEM_NODE", "tray02", 1);
    NV_OK(nvmlInit());
    unsigned count = 0;
    NV_OK(nvmlDeviceGetCount(&count));
    assert_int_equal(count, 4);
    nvmlGpuFabricInfo_t info;
    memset(&info, 0xff, sizeof(info));
    NV_OK(nvmlDeviceGetGpuFabricInfo(handle(0), &info));
    assert_int_equal(info.state, NVML_GPU_FABRIC_STATE_NOT_STARTED);
    assert_int_equal(info.cliqueId, 0);
    const unsigned char zero[16] = {0};
    assert_memory_equal(info.clusterUuid, zero, 16);
    nvmlPciInfo_t pci;
    NV_OK(nvmlDeviceGetPciInfo(handle(0), &pci));
    assert_string_equal(pci.busIdLegacy, "0002:01:00.0");
    NV_OK(nvmlShutdown());
    fab_test_rmtree(dir);
    free(dir);
    free(path);
}

static void platform_info_places_the_gpu_in_its_rack(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray07");
    NV_OK(nvmlInit());
    nvmlPlatformInfo_t v2;
    memset(&v2, 0, sizeof(v2));
    v2.version = nvmlPlatformInfo_v2;
    NV_OK(nvmlDeviceGetPlatformInfo(handle(3), &v2));
    assert_int_equal(v2.trayIndex, 7);
    assert_int_equal(v2.slotNumber, 7);
    assert_int_equal(v2.hostId, 0);
    assert_int_equal(v2.moduleId, 3);
    assert_memory_equal(v2.chassisSerialNumber, "FABMEM-RACK0\0\0\0\0", 16);
    nvmlPlatformInfo_v1_t v1;
    memset(&v1, 0, sizeof(v1));
    v1.version = nvmlPlatformInfo_v1;
    NV_OK(nvmlDeviceGetPlatformInfo(handle(1), (nvmlPlatformInfo_t *)(void *)&v1));
    assert_int_equal(v1.computeSlotIndex, 7);
    assert_int_equal(v1.moduleId, 1);
    NV_OK(nvmlShutdown());
}

static void nvlinks_are_up_and_reach_switches(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray00");
    NV_OK(nvmlInit());
    for (unsigned link = 0; link < 18; link++) { /* a Hopper's or Blackwell's 18 */
        nvmlEnableState_t active = NVML_FEATURE_DISABLED;
        NV_OK(nvmlDeviceGetNvLinkState(handle(0), link, &active));
        assert_int_equal(active, NVML_FEATURE_ENABLED);
        unsigned cap = 0;
        NV_OK(nvmlDeviceGetNvLinkCapability(handle(0), link, NVML_NVLINK_CAP_P2P_SUPPORTED, &cap));
        assert_int_equal(cap, 1);
        nvmlPciInfo_t remote;
        NV_OK(nvmlDeviceGetNvLinkRemotePciInfo(handle(0), link, &remote));
        assert_int_equal(remote.bus, 0xc0 + link / 2);
    }
    nvmlEnableState_t active;
    NV_IS(nvmlDeviceGetNvLinkState(handle(0), 18, &active), NVML_ERROR_INVALID_ARGUMENT);
    nvmlGpuTopologyLevel_t level;
    NV_OK(nvmlDeviceGetTopologyCommonAncestor(handle(0), handle(0), &level));
    assert_int_equal(level, NVML_TOPOLOGY_INTERNAL);
    NV_OK(nvmlDeviceGetTopologyCommonAncestor(handle(0), handle(2), &level));
    assert_int_equal(level, NVML_TOPOLOGY_HOSTBRIDGE);
    NV_OK(nvmlShutdown());
}

static void field_values_give_nvlink_count_and_speed(void **state)
{
    (void)state;
    start_on(fab_test_example_config("nvl72.ini"), "tray04");
    NV_OK(nvmlInit());
    nvmlFieldValue_t v[4];
    memset(v, 0, sizeof(v));
    v[0].fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT;
    v[1].fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
    v[1].scopeId = 3;
    v[2].fieldId = NVML_FI_DEV_NVLINK_GET_VERSION;
    v[3].fieldId = 1; /* ECC mode: not emulated */
    NV_OK(nvmlDeviceGetFieldValues(handle(0), 4, v));
    assert_int_equal(v[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(v[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
    assert_int_equal(v[0].value.uiVal, 18);
    assert_int_equal(v[1].value.uiVal, 50000); /* compute capability 10.0: NVLink 5 */
    assert_int_equal(v[2].value.uiVal, 5);
    assert_int_equal(v[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    NV_IS(nvmlDeviceGetFieldValues(handle(0), 0, v), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetFieldValues(handle(0), 1, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_OK(nvmlShutdown());
}

static void system_versions_follow_the_topologys_cuda_version(void **state)
{
    (void)state;
    start_on("[driver]\nversion = 12080\n", "node0");
    int cuda = 0;
    NV_OK(nvmlSystemGetCudaDriverVersion(&cuda)); /* allowed before nvmlInit */
    assert_int_equal(cuda, 12080);
    NV_OK(nvmlInit());
    NV_OK(nvmlSystemGetCudaDriverVersion_v2(&cuda));
    assert_int_equal(cuda, 12080);
    char text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    NV_OK(nvmlSystemGetDriverVersion(text, sizeof(text)));
    assert_string_equal(text, "570.00.00");
    NV_OK(nvmlSystemGetNVMLVersion(text, sizeof(text)));
    assert_string_equal(text, "12.570.00.00");
    NV_OK(nvmlShutdown());
}

static void calls_before_init_are_uninitialized(void **state)
{
    (void)state;
    unsigned count;
    nvmlDevice_t d;
    char text[80];
    NV_IS(nvmlDeviceGetCount(&count), NVML_ERROR_UNINITIALIZED);
    NV_IS(nvmlDeviceGetHandleByIndex(0, &d), NVML_ERROR_UNINITIALIZED);
    NV_IS(nvmlSystemGetDriverVersion(text, sizeof(text)), NVML_ERROR_UNINITIALIZED);
    NV_IS(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

static void unknown_node_is_driver_not_loaded(void **state)
{
    (void)state;
    start_on(NULL, "no-such-node");
    NV_IS(nvmlInit(), NVML_ERROR_DRIVER_NOT_LOADED);
    unsigned count;
    NV_IS(nvmlDeviceGetCount(&count), NVML_ERROR_UNINITIALIZED);
}

static void shutdown_is_reference_counted(void **state)
{
    (void)state;
    start_on(NULL, "node0");
    NV_OK(nvmlInit());
    NV_OK(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS));
    nvmlDevice_t d = handle(0);
    NV_OK(nvmlShutdown());
    unsigned index;
    NV_OK(nvmlDeviceGetIndex(d, &index)); /* one init still holds */
    NV_OK(nvmlShutdown());
    NV_IS(nvmlDeviceGetIndex(d, &index), NVML_ERROR_UNINITIALIZED);
    NV_IS(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    NV_IS(nvmlInitWithFlags(0x100), NVML_ERROR_INVALID_ARGUMENT);
    NV_OK(nvmlInit()); /* and again from the start */
    NV_OK(nvmlDeviceGetCount(&index));
    assert_int_equal(index, 8);
    NV_OK(nvmlShutdown());
}

static void null_arguments_and_foreign_handles_are_invalid(void **state)
{
    (void)state;
    start_on(NULL, "node0");
    NV_OK(nvmlInit());
    nvmlDevice_t d = handle(0);
    nvmlDevice_t foreign = (nvmlDevice_t)(void *)&d;
    nvmlDevice_t inside = (nvmlDevice_t)(void *)((char *)d + 1); /* not an element's start */
    unsigned u;
    int major, minor;
    nvmlPciInfo_t pci;
    nvmlMemory_t mem;
    nvmlGpuFabricInfo_t fabric;
    NV_IS(nvmlDeviceGetCount(NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetHandleByIndex(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetHandleByIndex(8, &d), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetHandleByUUID(NULL, &d), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetHandleByPciBusId(NULL, &d), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetIndex(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetIndex(NULL, &u), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetIndex(foreign, &u), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetIndex(inside, &u), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetPciInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetPciInfo(foreign, &pci), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetMemoryInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetMemoryInfo(foreign, &mem), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetCudaComputeCapability(d, &major, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetGpuFabricInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetGpuFabricInfo(foreign, &fabric), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetGpuFabricInfoV(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetPlatformInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetUUID(d, NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlDeviceGetP2PStatus(d, foreign, NVML_P2P_CAPS_INDEX_READ, NULL),
          NVML_ERROR_INVALID_ARGUMENT);
    NV_IS(nvmlSystemGetCudaDriverVersion(NULL), NVML_ERROR_INVALID_ARGUMENT);
    (void)minor;
    NV_OK(nvmlShutdown());
}

static void wrong_struct_versions_are_mismatches(void **state)
{
    (void)state;
    start_on(NULL, "node0");
    NV_OK(nvmlInit());
    nvmlGpuFabricInfoV_t fabric;
    memset(&fabric, 0, sizeof(fabric));
    NV_IS(nvmlDeviceGetGpuFabricInfoV(handle(0), &fabric), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    fabric.version = nvmlGpuFabricInfo_v3 + 1;
    NV_IS(nvmlDeviceGetGpuFabricInfoV(handle(0), &fabric), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    nvmlPlatformInfo_t platform;
    memset(&platform, 0, sizeof(platform));
    platform.version = nvmlGpuFabricInfo_v2;
    NV_IS(nvmlDeviceGetPlatformInfo(handle(0), &platform), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    nvmlMemory_v2_t mem;
    memset(&mem, 0, sizeof(mem));
    NV_IS(nvmlDeviceGetMemoryInfo_v2(handle(0), &mem), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    mem.version = nvmlMemory_v2;
    NV_OK(nvmlDeviceGetMemoryInfo_v2(handle(0), &mem));
    assert_int_equal(mem.total, 80ull << 30);
    NV_OK(nvmlShutdown());
}

static void small_buffers_are_insufficient_and_untouched(void **state)
{
    (void)state;
    start_on(NULL, "node0");
    NV_OK(nvmlInit());
    char buf[40];
    memset(buf, 'x', sizeof(buf));
    NV_IS(nvmlDeviceGetUUID(handle(0), buf, 40), NVML_ERROR_INSUFFICIENT_SIZE); /* needs 41 */
    assert_int_equal(buf[0], 'x');
    NV_IS(nvmlDeviceGetName(handle(0), buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
    NV_IS(nvmlSystemGetDriverVersion(buf, 3), NVML_ERROR_INSUFFICIENT_SIZE);
    NV_IS(nvmlSystemGetNVMLVersion(buf, 0), NVML_ERROR_INSUFFICIENT_SIZE);
    char name[NVML_DEVICE_NAME_BUFFER_SIZE];
    NV_OK(nvmlDeviceGetName(handle(0), name, sizeof(name)));
    assert_string_equal(name, "fabmem H100 (emulated)");
    NV_OK(nvmlShutdown());
}

static void error_strings_name_every_code(void **state)
{
    (void)state;
    assert_string_equal(nvmlErrorString(NVML_SUCCESS), "Success");
    assert_non_null(strstr(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "initialized"));
    assert_non_null(strstr(nvmlErrorString(NVML_ERROR_ARGUMENT_VERSION_MISMATCH), "version"));
    assert_string_equal(nvmlErrorString((nvmlReturn_t)12345), "Unknown error");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(nvml_and_cuda_agree_on_every_nvl72_device, fab_test_teardown),
    cmocka_unit_test_teardown(fault_example_shows_each_fault_in_fabric_info, fab_test_teardown),
    cmocka_unit_test_teardown(nvml_ignores_cuda_visible_devices, fab_test_teardown),
    cmocka_unit_test_teardown(devices_are_found_by_uuid_and_pci_bus_id, fab_test_teardown),
    cmocka_unit_test_teardown(pci_info_is_the_topologys_address, fab_test_teardown),
    cmocka_unit_test_teardown(healthy_tray_reports_its_cluster_and_clique, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_in_progress_with_degraded_bandwidth_is_reported,
                              fab_test_teardown),
    cmocka_unit_test_teardown(unhealthy_route_is_an_unhealthy_summary, fab_test_teardown),
    cmocka_unit_test_teardown(gpus_without_fabric_say_not_supported, fab_test_teardown),
    cmocka_unit_test_teardown(no_daemon_gives_the_local_config_and_a_fabric_not_started,
                              fab_test_teardown),
    cmocka_unit_test_teardown(platform_info_places_the_gpu_in_its_rack, fab_test_teardown),
    cmocka_unit_test_teardown(nvlinks_are_up_and_reach_switches, fab_test_teardown),
    cmocka_unit_test_teardown(field_values_give_nvlink_count_and_speed, fab_test_teardown),
    cmocka_unit_test_teardown(system_versions_follow_the_topologys_cuda_version,
                              fab_test_teardown),
    cmocka_unit_test(calls_before_init_are_uninitialized),
    cmocka_unit_test_teardown(unknown_node_is_driver_not_loaded, fab_test_teardown),
    cmocka_unit_test_teardown(shutdown_is_reference_counted, fab_test_teardown),
    cmocka_unit_test_teardown(null_arguments_and_foreign_handles_are_invalid, fab_test_teardown),
    cmocka_unit_test_teardown(wrong_struct_versions_are_mismatches, fab_test_teardown),
    cmocka_unit_test_teardown(small_buffers_are_insufficient_and_untouched, fab_test_teardown),
    cmocka_unit_test(error_strings_name_every_code),
    cmocka_unit_test_teardown(pci_info_v3_writes_as_far_as_nvidias_and_no_further,
                              fab_test_teardown),
    cmocka_unit_test_teardown(pci_info_ext_gives_the_class_and_the_long_bus_id, fab_test_teardown),
    cmocka_unit_test_teardown(pcie_link_is_x16_at_the_gpus_generation, fab_test_teardown),
    cmocka_unit_test_teardown(hopper_pcie_link_is_gen5, fab_test_teardown),
    cmocka_unit_test_teardown(confidential_computing_is_off, fab_test_teardown),
    cmocka_unit_test_teardown(nvlink_peers_are_switches_and_no_process_is_listed,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"compare", helper_compare},
    {"fabric", helper_fabric},
};

FAB_TEST_MAIN("nvml", tests, helpers)
