/* Devices as the topology places them, against cuda.h only: PCI bus ids and
 * attributes from the topology's PCI address (docs/fabric.md), the lookup by
 * bus id, and CUDA_VISIBLE_DEVICES choosing and ordering the devices a
 * process sees, as CUDA reads it. Each test is its own process (cuInit runs
 * once per process); those with a daemon start their own. */
#include "cuda_test.h"

#include <stdlib.h>
#include <unistd.h>

#include "../fabric/daemon_harness.h"

/* cuInit on node tray07 of examples/nvl72.ini (4 GPUs, PCI domain 7). */
static void init_on_tray07(const char *visible)
{
    assert_non_null(fab_test_daemon_start(fab_test_example_config("nvl72.ini"), NULL));
    setenv("FABMEM_NODE", "tray07", 1);
    if (visible != NULL)
        setenv("CUDA_VISIBLE_DEVICES", visible, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
}

static void pci_bus_id_is_the_topologys_address(void **state)
{
    (void)state;
    init_on_tray07(NULL);
    CU_OK(cuInit(0));
    for (int dev = 0; dev < 4; dev++) {
        char id[64], want[64];
        CU_OK(cuDeviceGetPCIBusId(id, sizeof(id), dev));
        snprintf(want, sizeof(want), "0007:%02X:00.0", dev + 1);
        assert_string_equal(id, want);
        int domain = -1, bus = -1, slot = -1;
        CU_OK(cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev));
        CU_OK(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev));
        CU_OK(cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev));
        assert_int_equal(domain, 7);
        assert_int_equal(bus, dev + 1);
        assert_int_equal(slot, 0);
    }
    CU_IS(cuDeviceGetPCIBusId(NULL, 16, 0), CUDA_ERROR_INVALID_VALUE);
    char id[16];
    CU_IS(cuDeviceGetPCIBusId(id, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetPCIBusId(id, sizeof(id), 4), CUDA_ERROR_INVALID_DEVICE);
}

static void short_pci_bus_id_buffer_gets_what_fits(void **state)
{
    (void)state;
    init_on_tray07(NULL);
    CU_OK(cuInit(0));
    char id[5];
    memset(id, 'x', sizeof(id));
    CU_OK(cuDeviceGetPCIBusId(id, sizeof(id), 1));
    assert_string_equal(id, "0007");
}

static void device_is_found_by_its_pci_bus_id(void **state)
{
    (void)state;
    init_on_tray07(NULL);
    CU_OK(cuInit(0));
    CUdevice dev = -1;
    CU_OK(cuDeviceGetByPCIBusId(&dev, "0007:03:00.0"));
    assert_int_equal(dev, 2);
    CU_OK(cuDeviceGetByPCIBusId(&dev, "00000007:04:00.0")); /* NVML's long form */
    assert_int_equal(dev, 3);
    CU_OK(cuDeviceGetByPCIBusId(&dev, "0007:02:00")); /* no function */
    assert_int_equal(dev, 1);
    CU_IS(cuDeviceGetByPCIBusId(&dev, "0007:09:00.0"), CUDA_ERROR_INVALID_DEVICE);
    CU_IS(cuDeviceGetByPCIBusId(&dev, "0008:01:00.0"), CUDA_ERROR_INVALID_DEVICE);
    CU_IS(cuDeviceGetByPCIBusId(&dev, "bus one"), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetByPCIBusId(&dev, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuDeviceGetByPCIBusId(NULL, "0007:01:00.0"), CUDA_ERROR_INVALID_VALUE);
}

static void gpu_pci_device_id_is_the_topologys(void **state)
{
    (void)state;
    init_on_tray07(NULL);
    CU_OK(cuInit(0));
    int id = 0;
    CU_OK(cuDeviceGetAttribute(&id, CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, 0));
    assert_int_equal((unsigned)id, 0x233010deu);
}

static void visible_devices_select_and_order_the_devices(void **state)
{
    (void)state;
    init_on_tray07("2,0");
    CU_OK(cuInit(0));
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 2);
    char id[32];
    CU_OK(cuDeviceGetPCIBusId(id, sizeof(id), 0));
    assert_string_equal(id, "0007:03:00.0");
    CU_OK(cuDeviceGetPCIBusId(id, sizeof(id), 1));
    assert_string_equal(id, "0007:01:00.0");
    CUdevice dev = -1;
    CU_OK(cuDeviceGetByPCIBusId(&dev, "0007:01:00.0"));
    assert_int_equal(dev, 1);
    CU_IS(cuDeviceGetByPCIBusId(&dev, "0007:02:00.0"), CUDA_ERROR_INVALID_DEVICE); /* hidden */
    /* Memory is made on the node's GPU 2, through the daemon. */
    cut_init(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_FABRIC, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, cut_granularity(0), &prop, 0));
    CU_OK(cuMemRelease(h));
}

static void visible_devices_stop_at_the_first_invalid_entry(void **state)
{
    (void)state;
    init_on_tray07("1,9,0");
    CU_OK(cuInit(0));
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 1);
    char id[32];
    CU_OK(cuDeviceGetPCIBusId(id, sizeof(id), 0));
    assert_string_equal(id, "0007:02:00.0");
}

static void visible_devices_stop_at_a_repeated_entry(void **state)
{
    (void)state;
    init_on_tray07("3,1,3,0");
    CU_OK(cuInit(0));
    int count = 0;
    CU_OK(cuDeviceGetCount(&count));
    assert_int_equal(count, 2);
}

static void empty_visible_devices_leave_no_device(void **state)
{
    (void)state;
    init_on_tray07("");
    CU_IS(cuInit(0), CUDA_ERROR_NO_DEVICE);
}

/* helper "first": cuInit and send "count=N bus=<device 0's PCI bus id>". */
static int helper_first(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    HELPER_CU(cuInit(0), 10);
    int count = 0;
    char id[32];
    HELPER_CU(cuDeviceGetCount(&count), 11);
    HELPER_CU(cuDeviceGetPCIBusId(id, sizeof(id), 0), 12);
    char word[64];
    snprintf(word, sizeof(word), "count=%d bus=%s", count, id);
    return fab_test_send_word(sock, word) == 0 ? 0 : 13;
}

static void visible_devices_take_uuid_prefixes(void **state)
{
    (void)state;
    init_on_tray07(NULL);
    CU_OK(cuInit(0));
    CUuuid u;
    CU_OK(cuDeviceGetUuid(&u, 3));
    const unsigned char *b = (const unsigned char *)u.bytes;
    /* "GPU-" and the first 8 hex digits and a dash, as nvidia-smi -L prints them */
    char env[128];
    snprintf(env, sizeof(env), "CUDA_VISIBLE_DEVICES=GPU-%02x%02x%02x%02x-,0", b[0], b[1], b[2],
             b[3]);
    const char *const extra[] = {env, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("first", NULL, extra, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "count=2 bus=0007:04:00.0"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    /* An id that is no device's ends the list before it begins. */
    const char *const none[] = {"CUDA_VISIBLE_DEVICES=GPU-zzzz,0", NULL};
    assert_int_equal(fab_test_spawn("first", NULL, none, &child), 0);
    assert_int_equal(fab_test_reap(&child), 10); /* cuInit: no device */
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(pci_bus_id_is_the_topologys_address, fab_test_teardown),
    cmocka_unit_test_teardown(short_pci_bus_id_buffer_gets_what_fits, fab_test_teardown),
    cmocka_unit_test_teardown(device_is_found_by_its_pci_bus_id, fab_test_teardown),
    cmocka_unit_test_teardown(gpu_pci_device_id_is_the_topologys, fab_test_teardown),
    cmocka_unit_test_teardown(visible_devices_select_and_order_the_devices, fab_test_teardown),
    cmocka_unit_test_teardown(visible_devices_stop_at_the_first_invalid_entry, fab_test_teardown),
    cmocka_unit_test_teardown(visible_devices_stop_at_a_repeated_entry, fab_test_teardown),
    cmocka_unit_test_teardown(empty_visible_devices_leave_no_device, fab_test_teardown),
    cmocka_unit_test_teardown(visible_devices_take_uuid_prefixes, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"first", helper_first},
};

FAB_TEST_MAIN("cuda", tests, helpers)
