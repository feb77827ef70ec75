/* The topology as read from INI files (inih) or built in: values, defaults,
 * errors that name file and line, node choice, and the shipped NVL72 example.
 * No daemon is needed. */
#include "fabtest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/topology_impl.h"

/* Load text; return the status and what was logged (stderr). */
static fab_status_t load_text(const char *text, fab_topology_t **topology, char *log, size_t cap)
{
    char *dir;
    char *path = fab_test_config_file(text, &dir);
    fab_test_stderr_begin();
    fab_status_t status = fab_topology_load(path, topology);
    fab_test_stderr_end(log, cap);
    fab_test_rmtree(dir);
    free(dir);
    free(path);
    return status;
}

static void default_topology_is_one_node_of_eight_gpus(void **state)
{
    (void)state;
    unsetenv("FABMEM_CONFIG");
    unsetenv("FABMEM_NODE");
    fab_topology_t *t;
    assert_int_equal(fab_topology_load(NULL, &t), FAB_SUCCESS);
    assert_int_equal(fab_topology_node_count(t), 1);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(t, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.device_count, 8);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_COMPLETED);
    fab_device_info_t dev, dev1;
    assert_int_equal(fab_topology_device(t, 0, 0, &dev), FAB_SUCCESS);
    assert_int_equal(dev.total_memory, 80ull << 30);
    assert_int_equal(dev.granularity, 2u << 20);
    assert_int_equal(dev.handle_types, FAB_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | FAB_HANDLE_TYPE_FABRIC);
    assert_int_equal(fab_topology_device(t, 0, 1, &dev1), FAB_SUCCESS);
    assert_false(fab_uuid_equal(&dev.uuid, &dev1.uuid));
    assert_int_equal(fab_topology_device(t, 0, 8, &dev), FAB_ERROR_INVALID_DEVICE);
    assert_int_equal(fab_topology_device(t, 1, 0, &dev), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_topology_driver_version(t), 13000);
    int index = -1;
    assert_int_equal(fab_topology_find_node(t, NULL, &index), FAB_SUCCESS);
    assert_int_equal(index, 0);
    assert_int_equal(fab_topology_find_node(t, "nope", &index), FAB_ERROR_NOT_FOUND);
    assert_int_equal(fab_topology_load(NULL, NULL), FAB_ERROR_INVALID_VALUE);
    fab_topology_destroy(t);
    fab_topology_destroy(NULL);
}

static void config_values_are_read(void **state)
{
    (void)state;
    char log[1024];
    fab_topology_t *t;
    assert_int_equal(load_text("[driver]\nversion = 12080\n"
                               "[node x]\nimex_domain = d1\ncluster_uuid = 000102030405060708090a0b0c0d0e0f\n"
                               "clique_id = 0x10\nfabric_state = in_progress\ngpus = 3\n"
                               "gpu_name = Test GPU\ngpu_memory = 1TiB\ngranularity = 4M\n"
                               "handle_types = fabric\ncompute_capability = 8.6\nsm_count = 84\n"
                               "[node y]\n[channel 5]\nuids = 1, 2\ngids = 3\n",
                               &t, log, sizeof(log)),
                     FAB_SUCCESS);
    assert_int_equal(fab_topology_driver_version(t), 12080);
    assert_int_equal(fab_topology_node_count(t), 1 + 0); /* [node y] has no keys: inih never reports it */
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(t, 0, &node), FAB_SUCCESS);
    assert_string_equal(node.name, "x");
    assert_string_equal(node.imex_domain, "d1");
    assert_int_equal(node.cluster_uuid.bytes[15], 0x0f);
    assert_int_equal(node.clique_id, 16);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_IN_PROGRESS);
    assert_int_equal(node.device_count, 3);
    fab_device_info_t dev;
    assert_int_equal(fab_topology_device(t, 0, 2, &dev), FAB_SUCCESS);
    assert_string_equal(dev.name, "Test GPU");
    assert_int_equal(dev.total_memory, 1ull << 40);
    assert_int_equal(dev.granularity, 4u << 20);
    assert_int_equal(dev.handle_types, FAB_HANDLE_TYPE_FABRIC);
    assert_int_equal(dev.compute_major, 8);
    assert_int_equal(dev.compute_minor, 6);
    assert_int_equal(dev.sm_count, 84);
    fab_topology_destroy(t);
}

static void platform_and_pci_defaults_come_from_the_node_index(void **state)
{
    (void)state;
    char log[1024];
    fab_topology_t *t;
    assert_int_equal(load_text("[node a]\ngpus = 2\n[node b]\ngpus = 2\n", &t, log, sizeof(log)),
                     FAB_SUCCESS);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(t, 1, &node), FAB_SUCCESS);
    assert_int_equal(node.tray_index, 1);
    assert_int_equal(node.slot_number, 1);
    assert_int_equal(node.host_id, 0);
    assert_string_equal(node.chassis_serial, "FABMEM-RACK0");
    assert_int_equal(node.fabric_status, 0);
    assert_int_equal(node.fabric_health, FAB_FABRIC_HEALTH_HEALTHY);
    fab_device_info_t a0, b1;
    assert_int_equal(fab_topology_device(t, 0, 0, &a0), FAB_SUCCESS);
    assert_int_equal(fab_topology_device(t, 1, 1, &b1), FAB_SUCCESS);
    char id[FAB_PCI_BUS_ID_MAX];
    assert_int_equal(fab_device_pci_bus_id(&a0, id, sizeof(id)), 12);
    assert_string_equal(id, "0000:01:00.0");
    assert_int_equal(fab_device_pci_bus_id(&b1, id, sizeof(id)), 12);
    assert_string_equal(id, "0001:02:00.0");
    assert_int_equal(b1.pci_device_id, 0x233010de);
    assert_int_equal(fab_device_pci_bus_id(NULL, id, sizeof(id)), -1);
    fab_topology_destroy(t);
}

static void platform_fabric_and_pci_keys_are_read(void **state)
{
    (void)state;
    char log[1024];
    fab_topology_t *t;
    assert_int_equal(load_text("[node x]\nfabric_state = not_supported\nfabric_status = 3\n"
                               "fabric_health = degraded_bw, route_unhealthy\n"
                               "chassis_serial = 1821323000042\nslot_number = 9\ntray_index = 7\n"
                               "host_id = 1\npci_domain = 0x18\npci_device_id = 0x294110de\n",
                               &t, log, sizeof(log)),
                     FAB_SUCCESS);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(t, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_NOT_SUPPORTED);
    assert_int_equal(node.fabric_status, 3);
    /* degraded bandwidth and unhealthy route true, the other two false */
    assert_int_equal(node.fabric_health, 0x1u | 0x2u << 2 | 0x1u << 4 | 0x2u << 6);
    assert_string_equal(node.chassis_serial, "1821323000042");
    assert_int_equal(node.slot_number, 9);
    assert_int_equal(node.tray_index, 7);
    assert_int_equal(node.host_id, 1);
    fab_device_info_t dev;
    assert_int_equal(fab_topology_device(t, 0, 3, &dev), FAB_SUCCESS);
    assert_int_equal(dev.pci_domain, 0x18);
    assert_int_equal(dev.pci_bus, 4);
    assert_int_equal(dev.pci_device_id, 0x294110de);
    fab_topology_destroy(t);
    assert_int_equal(load_text("[node x]\nfabric_health = 0\n", &t, log, sizeof(log)), FAB_SUCCESS);
    assert_int_equal(fab_topology_node(t, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_health, 0);
    fab_topology_destroy(t);
}

static void config_errors_name_file_and_line(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *says;
    } cases[] = {
        {"[node a]\ngpus = 2\ncolour = blue\n", ":3: unknown key colour"},
        {"[driver]\nversion = 1\n[nodes a]\ngpus = 1\n", ":4: unknown section [nodes a]"},
        {"[node a]\ngpus = many\n", ":2: gpus"},
        {"[node a]\ngranularity = 3000\n", ":2: granularity"},
        {"[node a]\nfabric_state = done\n", ":2: fabric_state"},
        {"[node a]\ncluster_uuid = xyz\n", ":2: cluster_uuid"},
        {"[channel 64]\nuids = 1\n", ":2: channel number"},
        {"[channel 1]\nuids = 1, -2\n", ":2: uids"},
        {"[daemon]\nsocket_mode = 999\n", ":2: socket_mode"},
        {"[daemon]\n\nwhat\n", ":3: syntax error"},
        {"[node a]\nhandle_types = win32\n", ":2: handle_types"},
        {"[node a]\ngpu_memory = 12Q\n", ":2: gpu_memory"},
        {"[node a]\nfabric_health = sickly\n", ":2: fabric_health"},
        {"[node a]\nfabric_status = -1\n", ":2: fabric_status"},
        {"[node a]\nchassis_serial = 12345678901234567\n", ":2: chassis_serial"},
        {"[node a]\ntray_index = 256\n", ":2: tray_index"},
        {"[node a]\nslot_number = x\n", ":2: slot_number"},
        {"[node a]\nhost_id = -1\n", ":2: host_id"},
        {"[node a]\npci_domain = 0x10000\n", ":2: pci_domain"},
        {"[node a]\npci_device_id = 0x100000000\n", ":2: pci_device_id"},
        {"[node a]\nattribute.NO_SUCH_THING = 1\n", ":2: attribute.NO_SUCH_THING: no such"},
        {"[node a]\nattribute.NUMA_ID = lots\n", ":2: attribute.NUMA_ID: not a 32-bit"},
        {"[node a]\nattribute.NUMA_ID = 2147483648\n", ":2: attribute.NUMA_ID: not a 32-bit"},
        {"[node a]\nhost_numa_nodes = 0\n", ":2: host_numa_nodes"},
        {"[node a]\nhost_numa_nodes = 65\n", ":2: host_numa_nodes"},
        {"[node a]\nhost_memory = lots\n", ":2: host_memory"},
        {"[node a]\nfabric_manager = maybe\n", ":2: fabric_manager: not up, down or starting"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char log[1024];
        fab_topology_t *t = NULL;
        assert_int_equal(load_text(cases[i].text, &t, log, sizeof(log)), FAB_ERROR_INVALID_VALUE);
        assert_null(t);
        if (strstr(log, cases[i].says) == NULL || strstr(log, "fabmem.ini") == NULL)
            fail_msg("case %zu logged \"%s\", wanted \"%s\"", i, log, cases[i].says);
    }
    fab_topology_t *t = NULL;
    assert_int_equal(fab_topology_load("/nonexistent/fabmem.ini", &t), FAB_ERROR_NOT_FOUND);
}

static void fabmem_node_picks_the_node(void **state)
{
    (void)state;
    char log[256];
    fab_topology_t *t;
    assert_int_equal(load_text("[node a]\ngpus = 1\n[node b]\ngpus = 2\n", &t, log, sizeof(log)),
                     FAB_SUCCESS);
    int index;
    setenv("FABMEM_NODE", "b", 1);
    assert_int_equal(fab_topology_find_node(t, NULL, &index), FAB_SUCCESS);
    assert_int_equal(index, 1);
    assert_int_equal(fab_topology_find_node(t, "a", &index), FAB_SUCCESS);
    assert_int_equal(index, 0);
    unsetenv("FABMEM_NODE");
    assert_int_equal(fab_topology_find_node(t, NULL, &index), FAB_SUCCESS);
    assert_int_equal(index, 0);
    assert_int_equal(fab_topology_find_node(t, NULL, NULL), FAB_ERROR_INVALID_VALUE);
    fab_topology_destroy(t);
}

static void nvl72_example_is_eighteen_nodes_of_four(void **state)
{
    (void)state;
    fab_topology_t *t;
    setenv("FABMEM_CONFIG", FABMEM_EXAMPLES_DIR "/nvl72.ini", 1);
    assert_int_equal(fab_topology_load(NULL, &t), FAB_SUCCESS);
    unsetenv("FABMEM_CONFIG");
    assert_int_equal(fab_topology_node_count(t), 18);
    for (int i = 0; i < 18; i++) {
        fab_node_info_t node;
        assert_int_equal(fab_topology_node(t, i, &node), FAB_SUCCESS);
        assert_int_equal(node.device_count, 4);
        assert_string_equal(node.imex_domain, "nvl72-rack0");
        assert_int_equal(node.host_numa_nodes, 2); /* two Grace CPUs per tray */
        assert_int_equal(node.host_memory, 480ull << 30);
    }
    fab_topology_destroy(t);
}

/* Host NUMA nodes: one of 512 GiB unless the node says otherwise; GPUs are
 * spread evenly over them in ordinal order, the rule HOST_NUMA_ID follows. */
static void host_numa_nodes_are_read_and_spread_the_gpus(void **state)
{
    (void)state;
    char log[256];
    fab_topology_t *t;
    assert_int_equal(load_text("[node a]\ngpus = 3\n[node b]\ngpus = 6\nhost_numa_nodes = 4\n"
                               "host_memory = 64G\n",
                               &t, log, sizeof(log)),
                     FAB_SUCCESS);
    fab_node_info_t node;
    fab_device_info_t dev;
    assert_int_equal(fab_topology_node(t, 0, &node), FAB_SUCCESS);
    assert_int_equal(node.host_numa_nodes, 1);
    assert_int_equal(node.host_memory, 512ull << 30);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fab_topology_device(t, 0, i, &dev), FAB_SUCCESS);
        assert_int_equal(dev.host_numa_id, 0);
    }
    assert_int_equal(fab_topology_node(t, 1, &node), FAB_SUCCESS);
    assert_int_equal(node.host_numa_nodes, 4);
    assert_int_equal(node.host_memory, 64ull << 30);
    static const int want[6] = {0, 0, 1, 2, 2, 3}; /* ordinal * 4 / 6 */
    for (int i = 0; i < 6; i++) {
        assert_int_equal(fab_topology_device(t, 1, i, &dev), FAB_SUCCESS);
        assert_int_equal(dev.host_numa_id, want[i]);
    }
    fab_topology_destroy(t);
}

static void fault_example_loads_with_one_fault_per_node(void **state)
{
    (void)state;
    fab_topology_t *t;
    assert_int_equal(fab_topology_load(FABMEM_EXAMPLES_DIR "/fabric_faults.ini", &t), FAB_SUCCESS);
    assert_int_equal(fab_topology_node_count(t), 8);
    int index;
    fab_node_info_t node;
    assert_int_equal(fab_topology_find_node(t, "no-fabric", &index), FAB_SUCCESS);
    assert_int_equal(fab_topology_node(t, index, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_NOT_SUPPORTED);
    assert_int_equal(fab_topology_find_node(t, "degraded", &index), FAB_SUCCESS);
    assert_int_equal(fab_topology_node(t, index, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_health & 3u, FAB_FABRIC_HEALTH_FIELD_TRUE);
    fab_topology_destroy(t);
}

/* examples/fabric_imex_faults.ini, which docs/ci.md points at: one field
 * fault per node, read as the daemon reads it. */
static void imex_fault_example_loads_with_one_fault_per_node(void **state)
{
    (void)state;
    fab_topology_t *t;
    assert_int_equal(fab_topology_load(FABMEM_EXAMPLES_DIR "/fabric_imex_faults.ini", &t),
                     FAB_SUCCESS);
    assert_int_equal(fab_topology_node_count(t), 4);
    static const struct {
        const char *node;
        int32_t imex, isolated;
    } want[] = {{"healthy", -1, -1},
                {"imex-down", FAB__IMEX_DOWN, -1},
                {"imex-hung", FAB__IMEX_HUNG, -1},
                {"isolated", -1, 1}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        int index;
        assert_int_equal(fab_topology_find_node(t, want[i].node, &index), FAB_SUCCESS);
        int32_t v = -1;
        (void)fab__topology_attribute(t, index, FAB__ATTRIBUTE_IMEX, &v);
        assert_int_equal(v == FAB__IMEX_UP ? -1 : v, want[i].imex);
        v = -1;
        (void)fab__topology_attribute(t, index, FAB__ATTRIBUTE_GPUS_ISOLATED, &v);
        assert_int_equal(v == 0 ? -1 : v, want[i].isolated);
    }
    fab_topology_destroy(t);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(default_topology_is_one_node_of_eight_gpus),
    cmocka_unit_test(config_values_are_read),
    cmocka_unit_test(platform_and_pci_defaults_come_from_the_node_index),
    cmocka_unit_test(platform_fabric_and_pci_keys_are_read),
    cmocka_unit_test(config_errors_name_file_and_line),
    cmocka_unit_test(fabmem_node_picks_the_node),
    cmocka_unit_test(nvl72_example_is_eighteen_nodes_of_four),
    cmocka_unit_test(fault_example_loads_with_one_fault_per_node),
    cmocka_unit_test(imex_fault_example_loads_with_one_fault_per_node),
    cmocka_unit_test(host_numa_nodes_are_read_and_spread_the_gpus),
};

FAB_TEST_MAIN_NO_HELPERS("fabric", tests)
